/* bound.c — the one-run lower bound of Steinke, Nasr & Jagielski (2023): the p-value of a guess
 * count under an (eps, delta) claim, the first crossing of the significance level, guesses from
 * scores and the Bonferroni grid of guess sizes. See dpcorr/audit.h.
 *
 * Binomial probabilities are computed with Loader's saddle-point form ("Fast and accurate
 * computation of binomial probabilities", 2000): pmf = exp(-stirlerr terms - bd0 terms) /
 * sqrt(2 pi k (r - k) / r), accurate to a few ulps for every r, k, p — no lgamma differences
 * (which lose digits for large r) and no underflow until the probability itself does. */
#include "audit/audit_internal.h"
#include "common/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* stirlerr(n) = log(n!) - log(sqrt(2 pi n) (n/e)^n) for n = 0..15 (20 digits, mpmath). */
static const double stirlerr_small[16] = {
    0.0,
    0.08106146679532725822, 0.041340695955409294094, 0.027677925684998339149,
    0.020790672103765093112, 0.016644691189821192163, 0.013876128823070747999,
    0.011896709945891770095, 0.010411265261972096497, 0.0092554621827127329177,
    0.0083305634333628712565, 0.007573675487951840795, 0.0069428401072095298657,
    0.0064089941880042070684, 0.0059513701127588477356, 0.005554733551962801371,
};

static double stirlerr(double n)
{
    if (n <= 15.0) return stirlerr_small[(int)n];
    /* the Stirling series 1/(12n) - 1/(360n^3) + 1/(1260n^5) - 1/(1680n^7) + 1/(1188n^9) */
    const double S0 = 1.0 / 12, S1 = 1.0 / 360, S2 = 1.0 / 1260, S3 = 1.0 / 1680,
                 S4 = 1.0 / 1188;
    double nn = n * n;
    if (n > 500) return (S0 - S1 / nn) / n;
    if (n > 80) return (S0 - (S1 - S2 / nn) / nn) / n;
    if (n > 35) return (S0 - (S1 - (S2 - S3 / nn) / nn) / nn) / n;
    return (S0 - (S1 - (S2 - (S3 - S4 / nn) / nn) / nn) / nn) / n;
}

/* bd0(x, np) = x log(x / np) + np - x >= 0, without cancellation near x = np. */
static double bd0(double x, double np)
{
    if (fabs(x - np) < 0.1 * (x + np)) {
        double v = (x - np) / (x + np), s = (x - np) * v, ej = 2 * x * v;
        for (int j = 1; j < 1000; j++) {
            ej *= v * v;
            double s1 = s + ej / (double)(2 * j + 1);
            if (s1 == s) return s1;
            s = s1;
        }
        return s;
    }
    return x * log(x / np) + np - x;
}

double dpc__binom_pmf(size_t k, size_t r, double p)
{
    double q = 1.0 - p, n = (double)r, x = (double)k;
    if (k > r) return 0.0;
    if (p == 0.0) return k == 0 ? 1.0 : 0.0;
    if (q == 0.0) return k == r ? 1.0 : 0.0;
    if (k == 0) return exp(p < 0.1 ? -bd0(n, n * q) - n * p : n * log(q));
    if (k == r) return exp(q < 0.1 ? -bd0(n, n * p) - n * q : n * log(p));
    double lc = stirlerr(n) - stirlerr(x) - stirlerr(n - x) - bd0(x, n * p) - bd0(n - x, n * q);
    double lf = log(2 * M_PI) + log(x) + log1p(-x / n);
    return exp(lc - 0.5 * lf);
}

/* P[Bin(r, p) >= v], summing the side of v away from the mode (floor((r + 1) p)), where the
 * terms decrease monotonically: from v up when v is above the mode, else 1 - P[W <= v - 1] from
 * v - 1 down. The sum stops once a term is below 1e-18 of it (the rest is smaller still: the
 * tail of a binomial decays at least geometrically past the mode). */
static double binom_upper(size_t v, size_t r, double p)
{
    if (v == 0) return 1.0;
    if (v > r) return 0.0;
    double mode = floor((double)(r + 1) * p);
    double s = 0.0;
    if ((double)v > mode) {
        for (size_t k = v; k <= r; k++) {
            double t = dpc__binom_pmf(k, r, p);
            s += t;
            if (t < 1e-18 * s) break;
        }
        return s;
    }
    for (size_t k = v; k-- > 0;) { /* P[W <= v - 1] */
        double t = dpc__binom_pmf(k, r, p);
        s += t;
        if (t < 1e-18 * s) break;
    }
    return s >= 1.0 ? 0.0 : 1.0 - s;
}

dpc_status dpc_audit_pvalue(size_t m, size_t r, size_t v, double eps, double delta, double *p,
                            dpc_error *err)
{
    if (m == 0) return dpc_error_param(err, DPC_E_INVALID, "m", "must be >= 1");
    if (r > m) return dpc_error_param(err, DPC_E_INVALID, "r", "%zu guesses > %zu canaries", r, m);
    if (v > r) return dpc_error_param(err, DPC_E_INVALID, "v", "%zu correct > %zu guesses", v, r);
    if (!(eps >= 0) || !isfinite(eps))
        return dpc_error_param(err, DPC_E_INVALID, "eps", "must be finite and >= 0, got %g", eps);
    if (!(delta >= 0 && delta < 1))
        return dpc_error_param(err, DPC_E_INVALID, "delta", "must be in [0, 1), got %g", delta);
    *p = dpc__audit_pvalue(m, r, v, eps, delta);
    return DPC_OK;
}

double dpc__audit_pvalue(size_t m, size_t r, size_t v, double eps, double delta)
{
    double pr = 1.0 / (1.0 + exp(-eps)); /* e^eps / (1 + e^eps): eps-DP randomized response */
    double beta = binom_upper(v, r, pr);
    if (delta == 0.0 || v == 0) return beta < 1.0 ? beta : 1.0;
    /* alpha = max_i S_i / i, S_i = P[v - i <= W < v]. Past i, S_i' / i' <= (1 - beta) / i', so
     * the scan stops once (1 - beta) / i <= alpha. */
    double alpha = 0.0, S = 0.0, below = 1.0 - beta;
    for (size_t i = 1; i <= v; i++) {
        S += dpc__binom_pmf(v - i, r, pr);
        if (S / (double)i > alpha) alpha = S / (double)i;
        if (below / (double)(i + 1) <= alpha) break;
    }
    double pv = beta + 2.0 * (double)m * delta * alpha;
    return pv < 1.0 ? pv : 1.0;
}

/* The first eps where the p-value reaches `sig`, given p(lo) < sig <= p(hi): bisection. */
static double crossing(size_t m, size_t r, size_t v, double delta, double sig, double lo,
                       double hi)
{
    while (hi - lo > 1e-9) {
        double mid = 0.5 * (lo + hi);
        if (dpc__audit_pvalue(m, r, v, mid, delta) < sig) lo = mid;
        else hi = mid;
    }
    return lo;
}

double dpc__audit_epsilon_bound(size_t m, size_t r, size_t v, double delta, double sig)
{
    /* v <= r/2 is never rejected: p(0) >= P[Bin(r, 1/2) >= r/2] >= 1/2 > sig (sig < 1/2 in
     * every use; for larger sig the scan below decides) */
    if (v == 0 || dpc__audit_pvalue(m, r, v, 0.0, delta) >= sig) return 0.0;
    /* beta(eps) <= p(eps) and beta increases with eps, so p >= sig beyond the point where beta
     * alone reaches sig: bisect for it (or cap at eps = 60, where p -> P[all correct]) */
    double bhi = 60.0;
    if (binom_upper(v, r, 1.0 / (1.0 + exp(-bhi))) >= sig) {
        double lo = 0.0, hi = bhi;
        while (hi - lo > 1e-6) {
            double mid = 0.5 * (lo + hi);
            if (binom_upper(v, r, 1.0 / (1.0 + exp(-mid))) < sig) lo = mid;
            else hi = mid;
        }
        bhi = hi;
    }
    /* scan [0, bhi] in steps of 1/64 for the first eps not rejected, then bisect in its step */
    const double h = 1.0 / 64.0;
    double prev = 0.0;
    for (double e = h; e < bhi + h; e += h) {
        double x = e < bhi ? e : bhi;
        if (dpc__audit_pvalue(m, r, v, x, delta) >= sig) return crossing(m, r, v, delta, sig, prev, x);
        prev = x;
        if (x == bhi) break;
    }
    return prev; /* rejected up to the cap */
}

dpc_status dpc_audit_epsilon_bound(size_t m, size_t r, size_t v, double delta,
                                   double significance, double *eps, dpc_error *err)
{
    double p;
    dpc_status st = dpc_audit_pvalue(m, r, v, 0.0, delta, &p, err);
    if (st) return st;
    if (!(significance > 0 && significance < 1))
        return dpc_error_param(err, DPC_E_INVALID, "significance", "must be in (0, 1), got %g",
                               significance);
    *eps = dpc__audit_epsilon_bound(m, r, v, delta, significance);
    return DPC_OK;
}

/* ---- guesses ------------------------------------------------------------------------------ */

typedef struct ranked {
    double score;
    size_t index;
} ranked;

static int cmp_ranked(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->score < y->score) return -1;
    if (x->score > y->score) return 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* order (m): canary indices from the lowest score to the highest (ties: lower index first). */
static dpc_status rank(const double *scores, size_t m, size_t *order, dpc_error *err)
{
    ranked *rk = dpc__malloc_array(m, sizeof *rk);
    if (!rk) return DPC__NOMEM(err, "audit ranks");
    for (size_t i = 0; i < m; i++) {
        if (isnan(scores[i])) {
            free(rk);
            return dpc_error_param(err, DPC_E_NUMERIC, "scores", "score %zu is NaN", i);
        }
        rk[i] = (ranked){scores[i], i};
    }
    qsort(rk, m, sizeof *rk, cmp_ranked);
    for (size_t i = 0; i < m; i++) order[i] = rk[i].index;
    free(rk);
    return DPC_OK;
}

static size_t count_correct(const size_t *order, const unsigned char *in, size_t m, size_t kp,
                            size_t km)
{
    size_t v = 0;
    for (size_t i = 0; i < kp; i++) v += in[order[m - 1 - i]] != 0;
    for (size_t i = 0; i < km; i++) v += in[order[i]] == 0;
    return v;
}

dpc_status dpc_audit_correct(const double *scores, const unsigned char *included, size_t m,
                             size_t k_plus, size_t k_minus, size_t *correct, dpc_error *err)
{
    if (m == 0 || !scores || !included)
        return dpc_error_param(err, DPC_E_INVALID, "m", "needs m >= 1 scores and inclusions");
    if (k_plus > m || k_minus > m - k_plus)
        return dpc_error_param(err, DPC_E_INVALID, "k_plus", "k_plus + k_minus = %zu + %zu > m = %zu",
                               k_plus, k_minus, m);
    size_t *order = dpc__malloc_array(m, sizeof *order);
    if (!order) return DPC__NOMEM(err, "audit ranks");
    dpc_status st = rank(scores, m, order, err);
    if (!st) *correct = count_correct(order, included, m, k_plus, k_minus);
    free(order);
    return st;
}

size_t dpc__audit_grid(size_t m, size_t *kp, size_t *km)
{
    static const double frac[] = {0.01, 0.02, 0.05, 0.1, 0.2, 0.5};
    size_t n = 0;
    for (size_t f = 0; f < sizeof frac / sizeof frac[0]; f++) {
        size_t k = (size_t)floor(frac[f] * (double)m + 0.5);
        if (k < 1) k = 1;
        for (int both = 0; both < 2; both++) {
            size_t a = k, b = both ? k : 0;
            if (a + b > m) continue;
            int dup = 0;
            for (size_t j = 0; j < n; j++) dup |= kp[j] == a && km[j] == b;
            if (dup) continue;
            kp[n] = a;
            km[n] = b;
            n++;
        }
    }
    return n;
}

dpc_status dpc_audit_bound(const double *scores, const unsigned char *included, size_t m,
                           size_t k_plus, size_t k_minus, double delta, double confidence,
                           dpc_audit_bound_result *out, dpc_error *err)
{
    if (m == 0 || !scores || !included || !out)
        return dpc_error_param(err, DPC_E_INVALID, "m", "needs m >= 1 scores and inclusions");
    if (!(confidence > 0 && confidence < 1))
        return dpc_error_param(err, DPC_E_INVALID, "confidence", "must be in (0, 1), got %g",
                               confidence);
    if (!(delta >= 0 && delta < 1))
        return dpc_error_param(err, DPC_E_INVALID, "delta", "must be in [0, 1), got %g", delta);
    size_t kp[DPC_AUDIT_GRID_MAX], km[DPC_AUDIT_GRID_MAX], nc = 1;
    if (k_plus == 0 && k_minus == 0) {
        nc = dpc__audit_grid(m, kp, km);
    } else {
        if (k_plus > m || k_minus > m - k_plus)
            return dpc_error_param(err, DPC_E_INVALID, "k_plus",
                                   "k_plus + k_minus = %zu + %zu exceeds the %zu canaries",
                                   k_plus, k_minus, m);
        kp[0] = k_plus;
        km[0] = k_minus;
    }
    size_t *order = dpc__malloc_array(m, sizeof *order);
    if (!order) return DPC__NOMEM(err, "audit ranks");
    dpc_status st = rank(scores, m, order, err);
    if (st) {
        free(order);
        return st;
    }
    double sig = (1.0 - confidence) / (double)nc;
    memset(out, 0, sizeof *out);
    out->confidence = confidence;
    out->significance = sig;
    out->candidates = nc;
    out->epsilon = -1.0;
    for (size_t c = 0; c < nc; c++) {
        size_t v = count_correct(order, included, m, kp[c], km[c]), r = kp[c] + km[c];
        double e = dpc__audit_epsilon_bound(m, r, v, delta, sig);
        if (e > out->epsilon) {
            out->epsilon = e;
            out->k_plus = kp[c];
            out->k_minus = km[c];
            out->guesses = r;
            out->correct = v;
        }
    }
    out->p_value = dpc__audit_pvalue(m, out->guesses, out->correct, out->epsilon, delta);
    free(order);
    return DPC_OK;
}

size_t dpc_audit_bound_curve(const dpc_audit_result *r, size_t cap, double *k, double *eps_top,
                             double *eps_both)
{
    size_t m = r ? r->canaries : 0, n = 0;
    dpc_error err = {0};
    for (size_t j = 0; j < cap && m; j++) {
        size_t kj = (size_t)floor(pow((double)m / 2, (double)(j + 1) / (double)cap) + 0.5);
        if (kj < 1 || (n && kj <= (size_t)k[n - 1])) continue;
        size_t v1, v2;
        double e1 = NAN, e2 = NAN;
        if (!dpc_audit_correct(r->scores, r->in, m, kj, 0, &v1, &err) &&
            !dpc_audit_correct(r->scores, r->in, m, kj, kj, &v2, &err) &&
            !dpc_audit_epsilon_bound(m, kj, v1, r->ledger.delta, r->bound.significance, &e1,
                                     &err) &&
            !dpc_audit_epsilon_bound(m, 2 * kj, v2, r->ledger.delta, r->bound.significance, &e2,
                                     &err)) {
            k[n] = (double)kj;
            eps_top[n] = e1;
            eps_both[n] = e2;
            n++;
        }
    }
    return n;
}
