/* spline.c — the KAN paper's constants of the B-spline basis (dpcorr/bspline.h) and of the
 * fixed activation sigma, and the logistic loss ([KAN] Assumption 3.2; note 004 §1.3): B_b,
 * B'_b, B''_b, B_s, B'_s, B''_s computed numerically. */
#include "dpcorr/papers/kan.h"

#include <math.h>
#include <string.h>

/* ==== Numeric maxima ===================================================================== */

typedef double (*scalar_fn)(const void *ctx, double x);

/* Golden-section search for the max of g on [a, b] (unimodal near the scan maximum). */
static double golden_max(scalar_fn g, const void *ctx, double a, double b)
{
    const double r = 0.6180339887498949;
    double x1 = b - r * (b - a), x2 = a + r * (b - a), f1 = g(ctx, x1), f2 = g(ctx, x2);
    for (int it = 0; it < 200 && b - a > 1e-15 * (fabs(a) + fabs(b) + 1e-300); it++) {
        if (f1 < f2) {
            a = x1, x1 = x2, f1 = f2;
            x2 = a + r * (b - a), f2 = g(ctx, x2);
        } else {
            b = x2, x2 = x1, f2 = f1;
            x1 = b - r * (b - a), f1 = g(ctx, x1);
        }
    }
    double fa = g(ctx, a), fb = g(ctx, b), f = f1 > f2 ? f1 : f2;
    return fa > f ? (fa > fb ? fa : fb) : (fb > f ? fb : f);
}

/* Scans g on [a, b] with n + 1 points, refines around the best, returns the max. */
static double scan_max(scalar_fn g, const void *ctx, double a, double b, size_t n)
{
    double best = -INFINITY, bx = a, step = (b - a) / (double)n;
    for (size_t i = 0; i <= n; i++) {
        double x = i == n ? b : a + (double)i * step, f = g(ctx, x);
        if (f > best) best = f, bx = x;
    }
    double lo = bx - step > a ? bx - step : a, hi = bx + step < b ? bx + step : b;
    double r = golden_max(g, ctx, lo, hi);
    return r > best ? r : best;
}

typedef struct spline_ctx {
    const dpc_bspline *s;
    int what; /* 0 value, 1 first derivative, 2 second derivative, 3 sum of squares */
    size_t k; /* basis index (what < 3) */
} spline_ctx;

/* |b_k^{(what)}(x)| (one-sided from the right at knots), or sum_k b_k(x)^2. */
static double spline_mag(const void *vctx, double x)
{
    const spline_ctx *c = vctx;
    double v[4], d1[4], d2[4];
    size_t k0, n = dpc_bspline_eval(c->s, x, &k0, v, d1, d2);
    if (c->what == 3) {
        double acc = 0.0;
        for (size_t q = 0; q < n; q++) acc += v[q] * v[q];
        return acc;
    }
    for (size_t q = 0; q < n; q++)
        if (k0 + q == c->k) return fabs(c->what == 0 ? v[q] : c->what == 1 ? d1[q] : d2[q]);
    return 0.0;
}

void dpc_kan_spline_constants(const dpc_bspline *s, dpc_kan_spline_consts *out)
{
    /* Every basis is a translate of one cardinal B-spline (the knots are extended), so the
     * maxima over all k and x are those of b_3 over its support [t_3, t_7) = [lo, lo + 4h).
     * Each of the four pieces is scanned separately so that the one-sided values at the
     * knots (the max of the piecewise-linear b'') are included. */
    double res[3] = {0, 0, 0};
    for (int what = 0; what < 3; what++) {
        spline_ctx c = {s, what, 3};
        for (int piece = 0; piece < 4; piece++) {
            double a = s->lo + (double)piece * s->h;
            double b = a + s->h * (1.0 - 1e-12);
            double r = scan_max(spline_mag, &c, a, b, 2000);
            if (r > res[what]) res[what] = r;
        }
    }
    out->B = res[0];
    out->B1 = res[1];
    out->B2 = res[2];
    spline_ctx c = {s, 3, 0};
    /* sum_k b_k^2 is the same function of u on every interval of [lo, hi] */
    out->sumsq = scan_max(spline_mag, &c, s->lo, s->lo + s->h * (1.0 - 1e-12), 2000);
    double at_hi = spline_mag(&c, s->hi);
    if (at_hi > out->sumsq) out->sumsq = at_hi;
}

/* ==== Activation ========================================================================= */

static double sigmoid(double t)
{
    if (t >= 0) return 1.0 / (1.0 + exp(-t));
    double e = exp(t);
    return e / (1.0 + e);
}

const char *dpc_kan_act_name(dpc_kan_act a)
{
    return a == DPC_KAN_SIGMOID ? "sigmoid" : a == DPC_KAN_TANH ? "tanh" : "?";
}

dpc_status dpc_kan_act_parse(const char *s, dpc_kan_act *out, dpc_error *err)
{
    if (s && !strcmp(s, "sigmoid")) *out = DPC_KAN_SIGMOID;
    else if (s && !strcmp(s, "tanh")) *out = DPC_KAN_TANH;
    else
        return dpc_error_param(err, DPC_E_INVALID, "activation",
                             "expected sigmoid or tanh, got '%s'", s ? s : "(null)");
    return DPC_OK;
}

void dpc_kan_act_eval(dpc_kan_act a, double x, double *s, double *s1, double *s2)
{
    if (a == DPC_KAN_TANH) {
        double t = tanh(x), c = cosh(x), sech2 = 1.0 / (c * c); /* no 1 - t^2 cancellation */
        *s = t;
        if (s1) *s1 = sech2;
        if (s2) *s2 = -2.0 * t * sech2;
    } else {
        /* one exponential: e = e^-|x|, sigma(|x|) = 1/(1+e), sigma(-|x|) = e/(1+e) */
        double e = exp(-fabs(x)), d = 1.0 / (1.0 + e), p = x >= 0 ? d : e * d, q = x >= 0 ? e * d : d;
        double pq = p * q; /* sigma(x) sigma(-x) = sigma' */
        *s = p;
        if (s1) *s1 = pq;
        if (s2) *s2 = pq * (q - p);
    }
}

typedef struct act_ctx {
    dpc_kan_act a;
    int what;
} act_ctx;

static double act_mag(const void *vctx, double x)
{
    const act_ctx *c = vctx;
    double s, s1, s2;
    dpc_kan_act_eval(c->a, x, &s, &s1, &s2);
    return fabs(c->what == 0 ? s : c->what == 1 ? s1 : s2);
}

void dpc_kan_act_constants(dpc_kan_act a, double *B, double *B1, double *B2)
{
    double *out[3] = {B, B1, B2};
    for (int what = 0; what < 3; what++) {
        act_ctx c = {a, what};
        /* |sigma| increases to its supremum 1 as |x| grows (reached in double at |x| = 40);
         * the derivative magnitudes peak well inside [-40, 40]. */
        double r = scan_max(act_mag, &c, -40.0, 40.0, 8000);
        if (out[what]) *out[what] = r;
    }
}

/* ==== Logistic loss ====================================================================== */

double dpc_kan_logistic(double z, double *l1, double *l2)
{
    double q = sigmoid(-z); /* 1/(1 + e^z) */
    if (l1) *l1 = -q;
    if (l2) *l2 = sigmoid(z) * q;
    return (z < 0 ? -z : 0.0) + log1p(exp(-fabs(z)));
}
