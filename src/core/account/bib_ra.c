/* bib_ra.c — random allocation ("balls in bins") of one Gaussian participation among b steps:
 * the dominating pair P = (1/b) sum_j N(mu e_j, I_b), Q = N(0, I_b) (DP-SGD under balls-in-bins
 * sampling: doc/accounting.md section 7, route "balls-in-bins"). Deterministic upper bounds on
 * both hockey-stick divergences from closed forms per grid point and FFT convolutions.
 *
 * Likelihood ratio. P/Q(u) = Lambda = (1/b) sum_j V_j, V_j = exp(mu u_j - mu^2/2), i.i.d. under Q
 * with E V = 1 (log V ~ N(-mu^2/2, mu^2)). With c = e^eps and S = b Lambda:
 *     remove:  H_c(P || Q) = E_Q[(Lambda - c)+]     = T_b(b c) / b,   T_m(y) = E[(S_m - y)+],
 *     add:     H_c(Q || P) = E_Q[(1 - c Lambda)+]   = (c / b) U_b(b / c), U_m(y) = E[(y - S_m)+],
 * S_m the sum of m of the V_j. Both are expectations of convex functions of the V_j.
 *
 * Discretization (DP-REQ: bib-ra). Each V is replaced by V~, its connect-the-dots split on the
 * grid y_k = k g, k = 0..K (g = X / K): the mass of every cell [y_k, y_k+1] goes to its two ends
 * so that the cell's mass and mean are kept; V above X is kept as it is (only its tail
 * functionals enter). V~ is a mean-preserving spread of V, so by Jensen (conditionally on the
 * other coordinates, one coordinate at a time) every expectation of a convex function grows: the
 * values computed for V~ are upper bounds for V, second-order accurate in g. For y on the grid the
 * one-variable functionals of V~ are those of V (the payoffs are linear on every cell), so they
 * are taken in closed form: E[(V - y)+] = Phi(a) - y Phi(a - mu), a = mu/2 - log(y)/mu, and
 * E[(y - V)+] = y Phi(a') - Phi(a' - mu), a' = mu/2 + log(y)/mu (log space: no cancellation).
 *
 * Sums (no truncation error). For independent sums S_a, S_b >= 0, on grid points y <= X:
 *     p_{a+b} = p_a * p_b,      U_{a+b}(y) = sum_{r <= y} p_a(r) U_b(y - r),
 *     T_{a+b}(y) = sum_{r <= y} p_a(r) T_b(y - r) + m_b P_a(y) + T_a(y),
 *     P_{a+b}(y) = sum_{r <= y} p_a(r) P_b(y - r) + P_a(y),
 * where p is the mass on grid points <= X, P(y) = Pr[S > y] and m_b = E S_b = b (the terms with
 * r > y: (S_a + S_b - y)+ = S_a - y + S_b there). Mass of S above X never has to be stored: it
 * enters only through P and T. The powers are taken by binary powering, each product a linear
 * FFT convolution truncated to [0, X]; all terms are nonnegative (no cancellation).
 *
 * Tilting. The answer is a deep tail of S (delta down to 1e-12) while FFT round-off is relative
 * to an array's largest entry, so every array of S_m is stored exponentially tilted,
 * x^(y) = x(y) e^(theta y) / M^m, M = sum_k p(k) e^(theta y_k), theta the Chernoff tilt that puts
 * the tilted mean of S_b at X (tilting commutes with convolution; the recursions above carry
 * over with the factors M^-b on the terms without a convolution). The tilted arrays are O(1)
 * exactly where the answer is read.
 *
 * Round-off allowance. Every convolution's output is charged 15 u log2(N) ||x||_1 ||y||_2 in the
 * 2-norm (the FFT's backward stability: Higham, "Accuracy and Stability of Numerical
 * Algorithms", section 24.1) plus its inputs' errors propagated by Young's inequality
 * (||dx * y||_2 <= ||dx||_2 ||y||_1); the bound read from an array is increased by the total. */
#include "account/acc_internal.h"

#include "account/acc_math.h"
#include "common/util.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

#define RA_KMIN ((size_t)1 << 10)
#define RA_KMAX ((size_t)1 << 18)
#define RA_LOWER_GRID 2000 /* test events of dpc__ra_log_delta_lower */

/* E[(V - y)+] and E[(y - V)+] for V = exp(mu Z - mu^2/2). */
static double ln_call(double mu, double y)
{
    if (y <= 0.0) return 1.0 - y;
    double ly = log(y), a = 0.5 * mu - ly / mu;
    double la = dpc__log_ndtr(a), lb = ly + dpc__log_ndtr(a - mu);
    return lb >= la ? 0.0 : exp(la) * -expm1(lb - la);
}

static double ln_put(double mu, double y)
{
    if (y <= 0.0) return 0.0;
    double ly = log(y), a = 0.5 * mu + ly / mu;
    double la = ly + dpc__log_ndtr(a), lb = dpc__log_ndtr(a - mu);
    return lb >= la ? 0.0 : exp(la) * -expm1(lb - la);
}

/* log Pr[log V in [a, b]] for log V ~ N(mean, sd^2) (a < b; infinities allowed), from the tail
 * on the far side of the mean so that tiny masses keep their relative accuracy. */
static double log_mass(double a, double b, double mean, double sd)
{
    double A = (a - mean) / sd, B = (b - mean) / sd;
    if (A >= 0.0) return dpc__log_sub(dpc__log_ndtr(-A), dpc__log_ndtr(-B));
    return dpc__log_sub(dpc__log_ndtr(B), dpc__log_ndtr(A));
}

/* log Pr[Y > z] for z above the mean, log Pr[Y <= z] below it (Y ~ N(mean, sd^2)); *upper
 * says which. Masses of intervals are differences of these on one side of the mean. */
static double log_side(double z, double mean, double sd, int *upper)
{
    double t = (z - mean) / sd;
    *upper = t >= 0.0;
    return *upper ? dpc__log_ndtr(-t) : dpc__log_ndtr(t);
}

/* log of the mass of [a, b] from the one-sided logs at its ends. */
static double log_between(double la, int ua, double lb, int ub)
{
    if (ua) return dpc__log_sub(la, lb);  /* both above the mean */
    if (!ub) return dpc__log_sub(lb, la); /* both below */
    return log1p(-exp(la) - exp(lb));     /* straddling: 1 - lower - upper */
}

/* log of the connect-the-dots pmf of V on y_k = k g, k = 0..K (mass above X = K g left out).
 * Cell masses and first moments from the one-sided normal tails of log V at the K+1 edges
 * (E[V; V in A] = Pr[V' in A] for the size-biased V' = e^(mu Z + mu^2/2)). */
static void ctd_logpmf(double mu, size_t K, double g, double *lp)
{
    double m0 = -0.5 * mu * mu, m1 = 0.5 * mu * mu;
    double l0 = -INFINITY, l1 = -INFINITY; /* edge 0: log V = -inf, below both means */
    int u0 = 0, u1 = 0;
    for (size_t k = 0; k <= K; k++) lp[k] = -INFINITY;
    for (size_t k = 0; k < K; k++) {
        double lo = (double)k * g, lhi = log(lo + g);
        int v0, v1;
        double n0 = log_side(lhi, m0, mu, &v0), n1 = log_side(lhi, m1, mu, &v1);
        double lm = log_between(l0, u0, n0, v0);  /* log Pr[V in cell] */
        double lmv = log_between(l1, u1, n1, v1); /* log E[V; V in cell] */
        l0 = n0, u0 = v0, l1 = n1, u1 = v1;
        if (!(lm > -INFINITY)) continue;
        double f = (exp(lmv - lm) - lo) / g; /* the share at the upper end (mean kept) */
        if (!(f > 0.0)) f = 0.0;
        if (f > 1.0) f = 1.0;
        if (f < 1.0) lp[k] = dpc__log_add(lp[k], lm + log1p(-f));
        if (f > 0.0) lp[k + 1] = dpc__log_add(lp[k + 1], lm + log(f));
    }
}

/* One sum S_m on the grid, tilted: p (K+1), F = T (remove) or U (add), P (remove only), mean m
 * (untilted), and the 2-norm error bounds of the three arrays. */
typedef struct ra_sum {
    double *p, *F, *P;
    double m, ep, eF, eP;
    size_t count;
} ra_sum;

typedef struct ra_work {
    size_t K;
    int remove;
    double logM; /* log of the tilt's normalizer M */
    dpc__conv_ws ws;
    double *buf; /* (2K + 1) convolution output */
} ra_work;

static double norm1(const double *x, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++) s += fabs(x[i]);
    return s;
}

static double norm2(const double *x, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++) s += x[i] * x[i];
    return sqrt(s);
}

/* out (K+1) = (x * y)[0..K]; *eout = the 2-norm error bound given the inputs' ex, ey. */
static dpc_status conv_trunc(ra_work *w, const double *x, double ex, const double *y, double ey,
                             double *out, double *eout)
{
    size_t n = w->K + 1;
    if (dpc__convolve_ws(&w->ws, x, n, y, n, w->buf)) return DPC_E_NOMEM;
    memcpy(out, w->buf, n * sizeof *out);
    double nx = norm1(x, n), ny = norm1(y, n);
    *eout = 15.0 * DBL_EPSILON * log2(4.0 * (double)n) * nx * norm2(y, n) + ex * ny + nx * ey;
    return DPC_OK;
}

/* r <- a (+) b (independent sum, tilted); r aliases neither. */
static dpc_status ra_combine(ra_work *w, const ra_sum *a, const ra_sum *b, ra_sum *r)
{
    size_t n = w->K + 1;
    double e, f = exp(-(double)b->count * w->logM); /* M^-b */
    if (conv_trunc(w, a->p, a->ep, b->p, b->ep, r->p, &r->ep)) return DPC_E_NOMEM;
    if (conv_trunc(w, a->p, a->ep, b->F, b->eF, r->F, &e)) return DPC_E_NOMEM;
    r->eF = e;
    if (w->remove) {
        for (size_t k = 0; k < n; k++) r->F[k] += f * (b->m * a->P[k] + a->F[k]);
        r->eF += f * (b->m * a->eP + a->eF) + 4.0 * DBL_EPSILON * norm2(r->F, n);
        if (conv_trunc(w, a->p, a->ep, b->P, b->eP, r->P, &e)) return DPC_E_NOMEM;
        for (size_t k = 0; k < n; k++) r->P[k] += f * a->P[k];
        r->eP = e + f * a->eP + 4.0 * DBL_EPSILON * norm2(r->P, n);
    }
    r->m = a->m + b->m;
    r->count = a->count + b->count;
    return DPC_OK;
}

static int ra_alloc(ra_sum *s, size_t n)
{
    s->p = dpc__calloc(n, sizeof *s->p);
    s->F = dpc__calloc(n, sizeof *s->F);
    s->P = dpc__calloc(n, sizeof *s->P);
    return s->p && s->F && s->P;
}

static void ra_free(ra_sum *s)
{
    free(s->p);
    free(s->F);
    free(s->P);
    memset(s, 0, sizeof *s);
}

static void ra_copy(ra_sum *d, const ra_sum *s, size_t n)
{
    memcpy(d->p, s->p, n * sizeof *d->p);
    memcpy(d->F, s->F, n * sizeof *d->F);
    memcpy(d->P, s->P, n * sizeof *d->P);
    d->m = s->m, d->ep = s->ep, d->eF = s->eF, d->eP = s->eP, d->count = s->count;
}

static void ra_swap(ra_sum *a, ra_sum *b)
{
    ra_sum t = *a;
    *a = *b;
    *b = t;
}

/* log sum_k e^(lp_k + theta y_k) and the tilted mean of one V~ (grid part). */
static double tilt_logM(const double *lp, size_t n, double g, double theta, double *mean)
{
    double mx = -INFINITY;
    for (size_t k = 0; k < n; k++)
        if (lp[k] + theta * (double)k * g > mx) mx = lp[k] + theta * (double)k * g;
    double s = 0.0, s1 = 0.0;
    for (size_t k = 0; k < n; k++) {
        double v = exp(lp[k] + theta * (double)k * g - mx);
        s += v;
        s1 += v * (double)k * g;
    }
    if (mean) *mean = s1 / s;
    return mx + log(s);
}

/* The tilt theta whose tilted mean of S_b is the grid's end X (theta > 0 for the remove
 * direction's upper tail, < 0 for the add direction's lower tail; 0 when X is the mean). Any
 * theta is exact (the tilt is undone); this one makes the answer's region O(1). */
static double tilt_theta(const double *lp, size_t n, double g, double target)
{
    double m0;
    tilt_logM(lp, n, g, 0.0, &m0);
    if (fabs(m0 - target) <= 1e-12 * target) return 0.0;
    double sgn = target > m0 ? 1.0 : -1.0, lo = 0.0, hi = sgn / ((double)(n - 1) * g), m;
    for (int i = 0; i < 200; i++) { /* bracket */
        tilt_logM(lp, n, g, hi, &m);
        if (sgn * (m - target) >= 0.0) break;
        lo = hi;
        hi *= 2.0;
    }
    for (int i = 0; i < 60; i++) {
        double mid = 0.5 * (lo + hi);
        tilt_logM(lp, n, g, mid, &m);
        if (sgn * (m - target) >= 0.0) hi = mid;
        else lo = mid;
    }
    return 0.5 * (lo + hi);
}

/* The tilted base arrays of one V~ and its bookkeeping. */
static void ra_base(ra_work *w, double mu, double g, const double *lp, double theta,
                    ra_sum *s)
{
    size_t n = w->K + 1;
    double X = (double)w->K * g;
    double la = log_mass(log(X), INFINITY, -0.5 * mu * mu, mu), tail = la; /* log P(V > X) */
    for (size_t k = n; k-- > 0;) {
        double y = (double)k * g, t = theta * y - w->logM;
        s->p[k] = exp(lp[k] + t);
        s->P[k] = exp(tail + t); /* P(V~ > y_k): grid mass above y_k plus the mass above X */
        tail = dpc__log_add(tail, lp[k]);
        double v = w->remove ? ln_call(mu, y) : ln_put(mu, y);
        s->F[k] = v > 0.0 ? exp(log(v) + t) : 0.0;
    }
    s->m = 1.0;
    s->count = 1;
    s->ep = 4.0 * DBL_EPSILON * norm2(s->p, n);
    s->eF = 8.0 * DBL_EPSILON * norm2(s->F, n);
    s->eP = 4.0 * DBL_EPSILON * norm2(s->P, n);
}

/* The curve on [0, X] (K cells): F[k] = log of the upper bound on T_b(y_k) (remove) or
 * U_b(y_k) (add), round-off allowance included (-INFINITY where the bound is 0). */
static dpc_status ra_curve(size_t b, double mu, double X, size_t K, int remove, double *F)
{
    size_t n = K + 1;
    double g = X / (double)K;
    ra_work w = {K, remove, 0.0, {0}, dpc__malloc_array(2 * n + 1, sizeof(double))};
    ra_sum pw = {0}, acc = {0}, tmp = {0};
    double *lp = dpc__malloc_array(n, sizeof *lp);
    dpc_status st = DPC_OK;
    if (!w.buf || !lp || !ra_alloc(&pw, n) || !ra_alloc(&acc, n) || !ra_alloc(&tmp, n)) {
        st = DPC_E_NOMEM;
        goto done;
    }
    ctd_logpmf(mu, K, g, lp);
    double theta = tilt_theta(lp, n, g, X / (double)b);
    w.logM = tilt_logM(lp, n, g, theta, NULL);
    ra_base(&w, mu, g, lp, theta, &pw);
    int have = 0;
    for (size_t e = b; e && !st; e >>= 1) {
        if (e & 1) {
            if (!have) {
                ra_copy(&acc, &pw, n);
                have = 1;
            } else if (!(st = ra_combine(&w, &acc, &pw, &tmp))) {
                ra_swap(&acc, &tmp);
            }
        }
        if (e > 1 && !st && !(st = ra_combine(&w, &pw, &pw, &tmp))) ra_swap(&pw, &tmp);
    }
    for (size_t k = 0; k < n && !st; k++) { /* untilt: x = x^ M^b e^(-theta y) */
        double v = acc.F[k] + acc.eF;
        F[k] = v > 0.0 ? log(v) + (double)b * w.logM - theta * (double)k * g : -INFINITY;
    }
done:
    ra_free(&pw);
    ra_free(&acc);
    ra_free(&tmp);
    free(lp);
    free(w.buf);
    dpc__conv_ws_free(&w.ws);
    return st;
}

/* Grid size for [0, X]: cells of a tenth of V's standard deviation, within [2^10, kmax]. */
static size_t ra_cells(double mu, double X, size_t kmax)
{
    double sd = sqrt(expm1(mu * mu)), k = ceil(X / (0.1 * sd));
    if (!(k >= (double)RA_KMIN)) return RA_KMIN;
    return k > (double)kmax ? kmax : (size_t)k;
}

dpc_status dpc__ra_delta(size_t b, double mu, double eps, size_t K, double *d_remove,
                         double *d_add)
{
    double c = exp(eps), bd = (double)b;
    double *F = dpc__malloc_array(K + 1, sizeof *F);
    if (!F) return DPC_E_NOMEM;
    dpc_status st = ra_curve(b, mu, bd * c, K, 1, F);
    if (!st) *d_remove = exp(F[K] - log(bd));
    if (!st) st = ra_curve(b, mu, bd / c, K, 0, F);
    if (!st) *d_add = exp(F[K] + eps - log(bd));
    free(F);
    return st;
}

/* Smallest grid-aligned eps >= 0 whose bound is <= delta, one direction, on [0, X]:
 * remove: eps = log(y_k / b), bound T(y_k) / b (eps in [0, log(X / b)]); add:
 * eps = log(b / y_k), bound U(y_k) / y_k (eps >= log(b / X)). NAN when no grid point
 * qualifies. The tilt is centred at X, so the answer is accurate when it lies near X. */
static dpc_status ra_solve(size_t b, double mu, double delta, double X, size_t K, int remove,
                           double *eps)
{
    double *F = dpc__malloc_array(K + 1, sizeof *F);
    if (!F) return DPC_E_NOMEM;
    dpc_status st = ra_curve(b, mu, X, K, remove, F);
    double g = X / (double)K, bd = (double)b, ld = log(delta);
    *eps = NAN;
    if (!st && remove) { /* T decreasing: the first passing k from eps = 0 up */
        for (size_t k = (size_t)ceil(bd / g - 1e-9); k <= K; k++) {
            if (F[k] - log(bd) <= ld) {
                *eps = log((double)k * g / bd);
                break;
            }
        }
    } else if (!st) { /* the largest passing y_k <= b gives the smallest eps */
        size_t k1 = (size_t)floor(bd / g + 1e-9);
        for (size_t k = k1 < K ? k1 : K; k >= 1; k--) {
            if (F[k] - log((double)k * g) <= ld) {
                *eps = log(bd / ((double)k * g));
                break;
            }
        }
    }
    free(F);
    return st;
}

/* One direction. Bisection on eps with a coarse grid fitted to each candidate (every evaluation
 * an upper bound at its own eps), then curves on fine grids ending at the answer so far; the
 * smallest eps whose bound is <= delta is kept. */
static dpc_status ra_direction(size_t b, double mu, double delta, double eps_hi, int remove,
                               double *eps)
{
    double bd = (double)b, lo = 0.0, hi = eps_hi, e;
    dpc_status st;
    /* eps = 0 (remove: the grid's one point; add: a coarse curve over every eps >= 0) */
    if ((st = ra_solve(b, mu, delta, bd, RA_KMIN, remove, &e))) return st;
    if (e == 0.0) {
        *eps = 0.0;
        return DPC_OK;
    }
    if (!isnan(e) && e < hi) hi = e;
    for (int it = 0; it < 40 && hi - lo > 2e-3 * hi; it++) {
        double mid = 0.5 * (lo + hi), X = remove ? bd * exp(mid) : bd * exp(-mid);
        if ((st = ra_solve(b, mu, delta, X, ra_cells(mu, X, (size_t)1 << 12), remove, &e)))
            return st;
        if (!isnan(e) && e < hi) hi = e;
        if (isnan(e) || e > mid * (1.0 + 1e-9)) lo = mid; /* mid itself did not pass */
    }
    double best = hi;
    for (int pass = 0; pass < 2; pass++) { /* fine curves around the answer */
        double X = remove ? bd * exp(best) * (1.0 + 1e-9) : bd * exp(-best) * 1.002;
        if (!remove && X > bd) X = bd;
        if ((st = ra_solve(b, mu, delta, X, ra_cells(mu, X, RA_KMAX), remove, &e))) return st;
        if (isnan(e) || e >= best) break;
        best = e;
    }
    *eps = best;
    return DPC_OK;
}

/* Each bit of b costs one squaring (and one product where the bit is set) of every curve; the
 * two directions' fine curves (up to 2^18 cells) dominate: 0.1-0.25 s of one core per bit,
 * measured for b = 10^2 .. 10^5 (the grids grow with b up to their cap), counted as 1.5e8
 * operations (DPC_WORK_LIMIT counts about 1e9 per second). */
#define RA_OPS_PER_LEVEL 1.5e8

double dpc__ra_epsilon_ops(size_t b)
{
    double levels = 1.0;
    for (size_t e = b; e > 1; e >>= 1) levels += 1.0;
    return RA_OPS_PER_LEVEL * levels;
}

/* A lower bound on the exact hockey-stick divergence of the pair at eps, one direction, from one
 * family of test events (any event E gives P(E) - e^eps Q(E) <= H_{e^eps}(P || Q)): remove
 * E = {max_j u_j > tau}, P(E) = 1 - Phi(tau - mu) Phi(tau)^(b-1), Q(E) = 1 - Phi(tau)^b; add
 * E = {max_j u_j <= tau}, Q(E) - e^eps P(E) = Phi(tau)^(b-1) (Phi(tau) - e^eps Phi(tau - mu)).
 * The best of a fixed grid of tau, as a log (-INFINITY when no event separates). It only ever
 * decides that a bound need not be computed (bib_route.c): a value below the true divergence
 * is all it must be, so a coarse grid costs tightness of that decision, never validity. */
double dpc__ra_log_delta_lower(size_t b, double mu, double eps, int remove)
{
    if (!(mu > 0.0) || b < 1 || !(eps >= 0.0)) return -INFINITY;
    double bd = (double)b, best = -INFINITY;
    double lo = -4.0, hi = mu + 2.0 * sqrt(2.0 * log(bd + 1.0)) + 12.0;
    for (int i = 0; i <= RA_LOWER_GRID; i++) {
        double tau = lo + (hi - lo) * (double)i / RA_LOWER_GRID, v;
        double l0 = dpc__log_ndtr(tau), l1 = dpc__log_ndtr(tau - mu);
        if (remove) {
            double lp = log(-expm1(l1 + (bd - 1.0) * l0)), lq = log(-expm1(bd * l0));
            if (!(lp > eps + lq)) continue;
            v = lp + log(-expm1(eps + lq - lp));
        } else {
            if (!(l0 > eps + l1)) continue;
            v = bd * l0 + log(-expm1(eps + l1 - l0));
        }
        if (v > best) best = v;
    }
    return best;
}

dpc_status dpc__ra_epsilon_dir(size_t b, double mu, double delta, int remove, double *eps,
                               dpc_error *err)
{
    double eg, e;
    dpc_status st = dpc_gdp_epsilon(mu, delta, &eg, err); /* the unamplified Gaussian */
    if (st) return st;
    if (b <= 1 || eg == 0.0) {
        *eps = eg;
        return DPC_OK;
    }
    if (ra_direction(b, mu, delta, eg, remove, &e))
        return DPC__NOMEM(err, "the balls-in-bins grids");
    *eps = e < eg ? e : eg; /* convexity: never worse than one Gaussian */
    return DPC_OK;
}

dpc_status dpc__ra_epsilon2(size_t b, double mu, double delta, double *e_remove, double *e_add,
                           dpc_error *err)
{
    double eg;
    dpc_status st = dpc_gdp_epsilon(mu, delta, &eg, err); /* the unamplified Gaussian */
    if (st) return st;
    if (b <= 1 || eg == 0.0) {
        *e_remove = *e_add = eg;
        return DPC_OK;
    }
    double er, ea;
    if ((st = ra_direction(b, mu, delta, eg, 1, &er)) ||
        (st = ra_direction(b, mu, delta, eg, 0, &ea)))
        return DPC__NOMEM(err, "the balls-in-bins grids");
    /* convexity: the mixture is never worse than one Gaussian (in each direction) */
    *e_remove = er < eg ? er : eg;
    *e_add = ea < eg ? ea : eg;
    return DPC_OK;
}

dpc_status dpc__ra_epsilon(size_t b, double mu, double delta, double *eps, dpc_error *err)
{
    double er, ea;
    dpc_status st = dpc__ra_epsilon2(b, mu, delta, &er, &ea, err);
    if (!st) *eps = er > ea ? er : ea;
    return st;
}
