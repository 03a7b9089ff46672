/* mmcc_band.c — a deterministic bound on the Poisson-sampled matrix mechanism's dominating pair
 * for a strategy C >= 0 with at most two bands (lower bidiagonal: C[i, i] = a_i,
 * C[i, i - 1] = b_i; BSR-2, C = I), beside MMCC (doc/accounting.md section 7.1.2, our
 * derivation). DP-REQ: mmcc-band.
 *
 * Pair (section 7, MMCC item 1): P = E_theta N(C theta, s^2 I), theta_t i.i.d. Bernoulli(q),
 * Q = N(0, s^2 I).
 *  - Remove, Renyi order alpha (integer >= 2): multiplying out (P/Q)^alpha over alpha independent
 *    participation patterns and integrating the Gaussian,
 *      E_Q[(P/Q)^alpha] = E exp(sum_{j<k} <C theta^j, C theta^k> / s^2),
 *    and row i's part depends only on the counts k = #copies with theta_{i-1} = 1,
 *    j = #copies with theta_i = 1 and m = #copies with both: with S1 = k b + j a,
 *    S2 = k b^2 + j a^2 + 2 a b m it is (S1^2 - S2) / (2 s^2). Copies are exchangeable and the
 *    patterns independent, so the count j of the last step is a Markov chain on 0..alpha and the
 *    expectation is a product of (alpha + 1)^2 transfer matrices, exactly. The (eps, delta)
 *    bound of the direction is Canonne, Kamath & Steinke 2020, Prop. 12.
 *  - Add: E_Q[(1 - e^eps P/Q)_+] needs a lower bound on L = P/Q; by the Gibbs variational
 *    inequality, for product Bernoulli(r) weights nu, log L(y) >= E_nu[log(dP_theta/dQ)(y)] -
 *    KL(nu || pi) =: X(y), linear in y, so X ~ N(-m, v) under Q with v = |C r|^2 / s^2,
 *    m = (|C r|^2 + r (1 - r) ||C||_F^2) / (2 s^2) + n kl(r || q), and
 *    delta_add(eps) <= E[(1 - e^(eps + X))_+] = Phi((m - eps)/sqrt v) -
 *    e^(eps - m + v/2) Phi((m - v - eps)/sqrt v); r = 0 gives L >= (1 - q)^n (delta_add = 0 for
 *    eps >= -n log(1 - q)). Every r is a valid bound; the smallest over a grid of r is taken. */
#include "acc_internal.h"
#include "acc_math.h"
#include "common/util.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* a_i, b_i of row i (0 where the band has no such entry); 0 if the row reaches further left. */
static int band2_row(const dpc__mmcc_mat *M, size_t i, double *a, double *b)
{
    size_t c0 = M->col0 ? M->col0[i] : 0;
    const double *v = M->v + i * M->width;
    *a = *b = 0.0;
    for (size_t j = 0; j < M->width; j++) {
        size_t t = c0 + j;
        if (v[j] == 0.0) continue;
        if (t > i || t + 1 < i) return 0;
        if (t == i) *a = v[j];
        else *b = v[j];
    }
    return 1;
}

int dpc__band2_applies(const dpc__mmcc_mat *M)
{
    if (M->rows != M->n) return 0;
    for (size_t i = 0; i < M->rows; i++) {
        double a, b;
        if (!band2_row(M, i, &a, &b)) return 0;
    }
    return 1;
}

static double lbinom(double n, double k)
{
    return lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma(n - k + 1.0);
}

/* log of the transfer matrix T[k][j] (k: copies at step i - 1, j: copies at step i) for a row
 * (a, b): sum over m (copies at both) of the two binomial weights and the row's exponent. */
static void band2_transfer(size_t al, double a, double b, double q, double s, double *T)
{
    double lq = log(q), l1q = log1p(-q), s2 = 2.0 * s * s;
    for (size_t k = 0; k <= al; k++)
        for (size_t j = 0; j <= al; j++) {
            double S1 = (double)k * b + (double)j * a, acc = -INFINITY;
            size_t mlo = j + k > al ? j + k - al : 0, mhi = j < k ? j : k;
            for (size_t m = mlo; m <= mhi; m++) {
                double S2 = (double)k * b * b + (double)j * a * a + 2.0 * a * b * (double)m;
                double w = lbinom((double)k, (double)m) + lbinom((double)(al - k), (double)(j - m)) +
                           (double)j * lq + (double)(al - j) * l1q;
                acc = dpc__log_add(acc, w + (S1 * S1 - S2) / s2);
            }
            T[k * (al + 1) + j] = acc;
        }
}

/* log E_Q[(P/Q)^al] (exact up to rounding; a relative allowance is added by the caller). */
int dpc__band2_log_moment(const dpc__mmcc_mat *M, double q, double s, size_t al, double *out)
{
    size_t K = al + 1;
    double *T = malloc(K * K * sizeof *T), *L = malloc(2 * K * sizeof *L);
    if (!T || !L) {
        free(T);
        free(L);
        return -1;
    }
    double *nw = L + K, pa = NAN, pb = NAN;
    for (size_t k = 0; k < K; k++) L[k] = k ? -INFINITY : 0.0; /* nobody before step 0 */
    for (size_t i = 0; i < M->rows; i++) {
        double a, b;
        band2_row(M, i, &a, &b);
        if (a != pa || b != pb) band2_transfer(al, a, b, q, s, T); /* Toeplitz: once */
        pa = a, pb = b;
        for (size_t j = 0; j < K; j++) {
            double mx = -INFINITY;
            for (size_t k = 0; k < K; k++)
                if (L[k] + T[k * K + j] > mx) mx = L[k] + T[k * K + j];
            double sum = 0.0;
            if (mx > -INFINITY)
                for (size_t k = 0; k < K; k++) sum += exp(L[k] + T[k * K + j] - mx);
            nw[j] = mx + log(sum);
        }
        memcpy(L, nw, K * sizeof *L);
    }
    double mx = -INFINITY, sum = 0.0;
    for (size_t k = 0; k < K; k++) mx = L[k] > mx ? L[k] : mx;
    for (size_t k = 0; k < K; k++) sum += exp(L[k] - mx);
    *out = mx + log(sum);
    free(T);
    free(L);
    return 0;
}

/* epsilon of the remove direction at integer order al (CKS 2020, Prop. 12); INFINITY where the
 * work of the order does not fit what is left of *budget. -1: no memory. */
static int band2_order_eps(const dpc__mmcc_mat *M, double q, double s, double delta, size_t al,
                           double *budget, double *eps)
{
    double k = (double)(al + 1), w = (double)M->rows * k * k + k * k * k;
    *eps = INFINITY;
    if (w > *budget) return 0;
    *budget -= w;
    double lm;
    if (dpc__band2_log_moment(M, q, s, al, &lm)) return -1;
    /* rounding: every term is a sum of positives, relative error below 1e-12 per row */
    lm += 1e-12 * (double)M->rows * (fabs(lm) + 1.0);
    double a = (double)al;
    *eps = lm / (a - 1.0) + log1p(-1.0 / a) - (log(a) + log(delta)) / (a - 1.0);
    return 0;
}

/* The remove direction: the smallest epsilon over integer orders, raised geometrically while it
 * falls (and while the work fits BAND2_WORK), then a ternary search between the best order's
 * neighbours. Every order evaluated is a valid bound; the smallest is kept. */
#define BAND2_WORK 4e8
static int band2_remove(const dpc__mmcc_mat *M, double q, double s, double delta, double *eps,
                        size_t *order)
{
    double best = INFINITY, budget = BAND2_WORK, e;
    size_t prev = 2, lo = 2, hi = 2, al = 2;
    int rising = 0;
    *order = 0;
    for (; al <= 4096; prev = al, al = al < 12 ? al + 1 : al + al / 4) {
        if (band2_order_eps(M, q, s, delta, al, &budget, &e)) return -1;
        if (e == INFINITY && budget < BAND2_WORK) break; /* out of work */
        if (e < best) {
            best = e, *order = al, lo = prev, rising = 0;
        } else if (++rising == 1) {
            hi = al;
        }
        if (rising >= 3) break;
    }
    if (!rising) hi = al;
    while (hi > lo + 2) { /* the orders strictly between lo and hi, around *order */
        size_t m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
        double e1, e2;
        if (band2_order_eps(M, q, s, delta, m1, &budget, &e1) ||
            band2_order_eps(M, q, s, delta, m2, &budget, &e2))
            return -1;
        if (e1 < best) best = e1, *order = m1;
        if (e2 < best) best = e2, *order = m2;
        if (e1 == INFINITY || e2 == INFINITY) break;
        if (e1 <= e2) hi = m2;
        else lo = m1;
    }
    *eps = best > 0.0 ? best : 0.0;
    return 0;
}

typedef struct {
    double m, v, delta;
} band2_gauss;

/* Upper bound on E[(1 - e^(eps + X))_+], X ~ N(-m, v) (rounding allowance 1e-10 of the first
 * term, which bounds the cancellation's loss). */
static int add_pred(double eps, void *vc)
{
    const band2_gauss *g = vc;
    double sv = sqrt(g->v), a = (g->m - eps) / sv;
    double l1 = dpc__log_ndtr(a), l2 = eps - g->m + g->v / 2.0 + dpc__log_ndtr(a - sv);
    double d = exp(l1) - exp(l2);
    if (d < 0.0) d = 0.0;
    return d + 1e-10 * exp(l1) <= g->delta;
}

static double band2_add(const dpc__mmcc_mat *M, double q, double s, double delta)
{
    double rs2 = 0.0, fro = 0.0, n = (double)M->n;
    for (size_t i = 0; i < M->rows; i++) {
        double r = 0.0;
        for (size_t j = 0; j < M->width; j++) {
            r += M->v[i * M->width + j];
            fro += M->v[i * M->width + j] * M->v[i * M->width + j];
        }
        rs2 += r * r;
    }
    double best = -n * log1p(-q); /* r = 0: L >= (1 - q)^n */
    for (int g = 1; g <= 64; g++) {
        double r = q * g / 64.0;
        double kl = r * log(r / q) + (r < 1.0 ? (1.0 - r) * (log1p(-r) - log1p(-q)) : 0.0);
        band2_gauss G = {(r * r * rs2 + r * (1.0 - r) * fro) / (2.0 * s * s) + n * kl,
                         r * r * rs2 / (s * s), delta};
        double lo = 0.0, hi = best;
        if (add_pred(lo, &G)) return 0.0;
        if (!add_pred(hi, &G)) continue;
        dpc__bisect(add_pred, &G, &lo, &hi, 1e-9, 1e-7, 0);
        if (hi < best) best = hi;
    }
    return best;
}

dpc_status dpc__band2_epsilon(const dpc__mmcc_mat *M, double q, double s, double delta,
                              double *eps, double *eps_remove, double *eps_add, size_t *order,
                              dpc_error *err)
{
    if (!dpc__band2_applies(M))
        return dpc_error_param(err, DPC_E_UNSUPPORTED, "mech", "C has more than two bands");
    double er, ea;
    size_t al = 0;
    if (band2_remove(M, q, s, delta, &er, &al)) return DPC__NOMEM(err, "the banded Renyi chain");
    ea = band2_add(M, q, s, delta);
    if (eps_remove) *eps_remove = er;
    if (eps_add) *eps_add = ea;
    if (order) *order = al;
    *eps = er > ea ? er : ea;
    return DPC_OK;
}
