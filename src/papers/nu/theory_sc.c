/* theory_sc.c — the Theorem 3.1 / E.1 bound for mu-strongly convex, L-smooth functions:
 * Zames-Falb multipliers (symmetric lambda_t = lambda_{-t}, so Lambda(w) = lambda_0 +
 * 2 sum_t lambda_t cos(t w) is real), the Schur-complement psi, the search over multipliers and
 * the "Optimized" alternating minimisation (paper Sec. 3, Appendix E; note 5.5).
 *
 * With real Lambda and u = 1 - cos w, c = 1 - e^{iw}, N = A^* Mtilde A (eq. 89) is
 *   N11 = -Lambda a(u),  a(u) = 2 mu L eta^2 + 2u (2 - eta (mu + L)),
 *   |N12|^2 = eta^2 Lambda^2 n(w),  n(w) = ((mu + L) eta - 2u)^2 + 4 sin^2 w,
 *   N22 = -2 Lambda eta^2,
 * so psi = -2 Lambda eta^2 + eta^2 Lambda^2 n / (Lambda a - eta^2), needing Lambda a > eta^2.
 * Since n - 2a = (L - mu)^2 eta^2 identically (u^2 + sin^2 w = 2u), this is, without the
 * cancellation of the two O(Lambda) terms,
 *   psi = Lambda eta^4 (Lambda (L - mu)^2 + 2) / (Lambda a - eta^2).
 * For mu = L the pointwise minimum over Lambda is eta^4 / |1 - eta mu - e^{iw}|^2, the exact
 * transfer function (checked in the tests), so the bound is tight for quadratics. */
#include "nu/theory_internal.h"
#include "common/util.h"

#include <math.h>
#include <stdlib.h>

#define SC_ORDER 16
#define SC_MAXT (DPC__THEORY_SC_TMAX + 1)

typedef struct sc_ctx {
    const dpc_theory_sc *p;
    theory_quad q;
    double *a, *w;      /* (nq) a(u) and the weights of the objective */
    double dl2;         /* (L - mu)^2 */
    double *cosm;       /* (tmax, nq) cos(t x_i) */
    size_t tmax, evals;
    int sqrt_mode;      /* objective sum w sqrt(psi) instead of sum w psi */
} sc_ctx;

static double sc_obj(sc_ctx *c, double l0, const double *lt)
{
    c->evals++;
    double eta2 = c->p->eta * c->p->eta, s = 0.0;
    for (size_t i = 0; i < c->q.n; i++) {
        double lam = l0;
        for (size_t t = 0; t < c->tmax; t++) lam += 2.0 * lt[t] * c->cosm[t * c->q.n + i];
        double den = lam * c->a[i] - eta2;
        if (!(den > 0.0)) return INFINITY;
        double psi = lam * eta2 * eta2 * (lam * c->dl2 + 2.0) / den;
        s += c->w[i] * (c->sqrt_mode ? sqrt(psi) : psi);
    }
    return s;
}

/* Golden-section minimisation of f over [lo, hi] (f unimodal, possibly +inf at the ends). */
typedef double (*sc_fn)(sc_ctx *, double, void *);

static double golden(sc_ctx *c, sc_fn f, void *arg, double lo, double hi, int iters, double *fx)
{
    const double g = 0.6180339887498949;
    double x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo);
    double f1 = f(c, x1, arg), f2 = f(c, x2, arg);
    for (int i = 0; i < iters; i++) {
        if (f1 <= f2) {
            hi = x2;
            x2 = x1;
            f2 = f1;
            x1 = hi - g * (hi - lo);
            f1 = f(c, x1, arg);
        } else {
            lo = x1;
            x1 = x2;
            f1 = f2;
            x2 = lo + g * (hi - lo);
            f2 = f(c, x2, arg);
        }
    }
    *fx = f1 <= f2 ? f1 : f2;
    return f1 <= f2 ? x1 : x2;
}

typedef struct sc_state {
    double l0;
    double lt[SC_MAXT];
    size_t coord;
} sc_state;

static double f_log_l0(sc_ctx *c, double x, void *arg)
{
    sc_state *s = arg; /* lambda_0 = e^x */
    return sc_obj(c, exp(x), s->lt);
}

static double f_lt(sc_ctx *c, double x, void *arg)
{
    sc_state *s = arg;
    double keep = s->lt[s->coord];
    s->lt[s->coord] = x;
    double v = sc_obj(c, s->l0, s->lt);
    s->lt[s->coord] = keep;
    return v;
}

/* Minimises the objective over (lambda_0, lambda_1..tmax) by coordinate descent. */
static double sc_minimise(sc_ctx *c, sc_state *s)
{
    double eta2 = c->p->eta * c->p->eta, thr = 0.0;
    for (size_t i = 0; i < c->q.n; i++)
        if (eta2 / c->a[i] > thr) thr = eta2 / c->a[i]; /* lambda_0 threshold with lt = 0 */
    double best = INFINITY;
    int sweeps = c->tmax ? 6 : 1;
    for (int sw = 0; sw < sweeps; sw++) {
        double sumt = 0.0;
        for (size_t t = 0; t < c->tmax; t++) sumt += s->lt[t];
        double lo = fmax(thr, 2.0 * sumt) * (1.0 + 1e-12);
        double fx;
        double x = golden(c, f_log_l0, s, log(lo), log(lo) + 40.0, 100, &fx);
        if (fx < best) {
            best = fx;
            s->l0 = exp(x);
        }
        for (size_t t = 0; t < c->tmax; t++) {
            double others = sumt - s->lt[t];
            double hi = 0.5 * s->l0 - others;
            if (!(hi > 0.0)) continue;
            s->coord = t;
            double xt = golden(c, f_lt, s, 0.0, hi, 60, &fx);
            if (fx < best) {
                best = fx;
                sumt += xt - s->lt[t];
                s->lt[t] = xt;
            }
        }
    }
    return best;
}

static dpc_status sc_check(const dpc_theory_sc *p, dpc_error *err)
{
    if (!p) return dpc_error_param(err, DPC_E_INVALID, "problem", "NULL");
    /* each field in its table row's range (the constants enter squared: above 1e150 they
     * overflow, issue 28; tmax within the multiplier array); a problem cannot leave one unset */
    dpc_status st = dpc_field_check(dpc_theory_sc_fields(), p, err);
    if (st) return st;
    static const char *const must[] = {"mu", "L", "eta", "rho", "G", "d"};
    const dpc_field_table *t = dpc_theory_sc_fields();
    for (size_t i = 0; i < sizeof must / sizeof must[0]; i++)
        if (dpc_field_get(dpc_field_find(t, must[i], NULL), p) == 0.0)
            return dpc_error_param(err, DPC_E_INVALID, must[i], "must be set (> 0)");
    if (!(p->L >= p->mu))
        return dpc_error_param(err, DPC_E_INVALID, "mu", "mu = %g, L = %g: need 0 < mu <= L",
                               p->mu, p->L);
    if (p->eta > 2.0 / (p->mu + p->L) * (1.0 + 1e-12))
        return dpc_error_param(err, DPC_E_INVALID, "eta",
                               "%g must be in (0, 2/(mu+L)] (mu = %g, L = %g)", p->eta, p->mu, p->L);
    return DPC_OK;
}

static dpc_status sc_setup(sc_ctx *c, const dpc_theory_sc *p, double scale, dpc_error *err)
{
    c->p = p;
    c->tmax = p->tmax;
    c->evals = 0;
    c->sqrt_mode = 0;
    /* psi has a spike at w = 0 of width ~ sqrt(lambda_0 a(0) - eta^2) near the feasibility edge
     * of lambda_0; grading 20 octaves below eta mu resolves it wherever the minimiser goes
     * (otherwise it would exploit the quadrature error and report a bound below the truth). */
    double s0 = fmin(p->eta * p->mu, scale) * 1e-6;
    if (!dpc__quad_graded(&c->q, s0, SC_ORDER, 2 * p->tmax)) return DPC__NOMEM(err, "quadrature");
    size_t n = c->q.n;
    c->a = dpc__malloc_array(2 * n + p->tmax * n + 1, sizeof *c->a);
    if (!c->a) {
        dpc__quad_free(&c->q);
        return DPC__NOMEM(err, "quadrature");
    }
    c->w = c->a + n;
    c->dl2 = (p->L - p->mu) * (p->L - p->mu);
    c->cosm = c->w + n;
    double eta = p->eta, mpl = p->mu + p->L;
    for (size_t i = 0; i < n; i++) {
        double x = c->q.x[i], sh = sin(0.5 * x), u = 2.0 * sh * sh;
        c->a[i] = 2.0 * p->mu * p->L * eta * eta + 2.0 * u * (2.0 - eta * mpl);
        for (size_t t = 0; t < p->tmax; t++) c->cosm[t * n + i] = cos((double)(t + 1) * x);
    }
    return DPC_OK;
}

static void sc_free(sc_ctx *c)
{
    dpc__quad_free(&c->q);
    free(c->a);
}

dpc_status dpc_theory_sc_bound(const dpc_theory_sc *p, const dpc_theory_beta *b,
                               dpc_theory_sc_result *out, dpc_error *err)
{
    dpc_status st = sc_check(p, err);
    if (st || (st = dpc_theory_beta_check(b, err))) return st;
    double g2;
    if ((st = dpc_theory_gamma_inf2(b, &g2, err))) return st;
    if (isinf(g2)) {
        out->value = out->dist = INFINITY;
        out->lambda0 = NAN;
        out->evaluations = 0;
        return DPC_OK;
    }
    sc_ctx c;
    if ((st = sc_setup(&c, p, dpc__beta_scale(b), err))) return st;
    double sig2 = p->G * p->G * g2 / (2.0 * p->rho), sg2 = p->sigma_sgd * p->sigma_sgd;
    for (size_t i = 0; i < c.q.n; i++) {
        double psd = dpc_theory_beta_spectrum(b, c.q.x[i]) * sig2;
        c.w[i] = c.q.w[i] * (sg2 > 0.0 ? 2.0 * (psd + sg2) : psd);
    }
    sc_state s = {0};
    double v = sc_minimise(&c, &s);
    out->dist = (double)p->d / (p->eta * p->eta) * v;
    out->value = 0.5 * p->L * out->dist;
    out->lambda0 = s.l0;
    out->evaluations = c.evals;
    sc_free(&c);
    if (!isfinite(v)) return dpc_error_set(err, DPC_E_NUMERIC, "sc bound: no feasible multiplier");
    return DPC_OK;
}

dpc_status dpc_theory_sc_optimized(const dpc_theory_sc *p, dpc_theory_sc_result *out,
                                   dpc_error *err)
{
    dpc_status st = sc_check(p, err);
    if (st) return st;
    if (p->sigma_sgd != 0.0)
        return dpc_error_set(err, DPC_E_UNSUPPORTED, "optimized: sigma_sgd must be 0");
    sc_ctx c;
    if ((st = sc_setup(&c, p, p->eta * p->mu, err))) return st;
    size_t n = c.q.n;
    double *b2 = dpc__malloc_array(2 * n, sizeof *b2);
    if (!b2) {
        sc_free(&c);
        return DPC__NOMEM(err, "spectrum");
    }
    double *psi = b2 + n;
    /* start from nu-FTRL with nu = eta mu: |B|^2 = |1 - nu - e^{iw}| */
    dpc_theory_beta start = dpc_theory_beta_nu(p->eta * p->mu < 1.0 ? p->eta * p->mu : 0.5);
    for (size_t i = 0; i < n; i++) b2[i] = dpc_theory_beta_spectrum(&start, c.q.x[i]);
    sc_state s = {0};
    double best = INFINITY, eta2 = p->eta * p->eta;
    for (int it = 0; it < 12; it++) {
        /* psi-step: multipliers minimising gamma^2(B) (1/2pi) int |B|^2 psi for fixed B */
        double g2 = 0.0;
        for (size_t i = 0; i < n; i++) g2 += c.q.w[i] / b2[i];
        for (size_t i = 0; i < n; i++) c.w[i] = c.q.w[i] * b2[i] * g2;
        double v = sc_minimise(&c, &s);
        if (!isfinite(v)) break;
        /* B-step (Cauchy-Schwarz): |B|^2 = psi^{-1/2}; the value is ((1/2pi) int sqrt psi)^2 */
        double k = 0.0;
        for (size_t i = 0; i < n; i++) {
            double lam = s.l0;
            for (size_t t = 0; t < c.tmax; t++) lam += 2.0 * s.lt[t] * c.cosm[t * n + i];
            double den = lam * c.a[i] - eta2;
            psi[i] = lam * eta2 * eta2 * (lam * c.dl2 + 2.0) / den;
            if (psi[i] < 1e-300) psi[i] = 1e-300;
            k += c.q.w[i] * sqrt(psi[i]);
            b2[i] = 1.0 / sqrt(psi[i]);
        }
        double val = k * k;
        if (val < best) best = val;
        if (it > 0 && val > best * (1.0 - 1e-9)) break;
    }
    out->dist = (double)p->d / eta2 * p->G * p->G / (2.0 * p->rho) * best;
    out->value = 0.5 * p->L * out->dist;
    out->lambda0 = s.l0;
    out->evaluations = c.evals;
    free(b2);
    sc_free(&c);
    if (!isfinite(best)) return dpc_error_set(err, DPC_E_NUMERIC, "optimized: no feasible multiplier");
    return DPC_OK;
}
