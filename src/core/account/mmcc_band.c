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
#include <stdint.h>
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

/* The smallest epsilon of a bound over integer orders: raised geometrically from 2 while it
 * falls (up to max_order; at most cap1 evaluations), then a ternary search between the best
 * order's neighbours (evaluations counted on, up to cap2). Every order evaluated is a valid
 * bound, so the smallest is kept whatever the search's path. f returns 0 with *eps, 1 when its
 * work is spent (the phase stops there), -1 on an error (returned). */
typedef int (*order_eps_fn)(void *ctx, size_t al, double *eps);

static int order_search(order_eps_fn f, void *ctx, size_t max_order, size_t cap1, size_t cap2,
                        double *best_out, size_t *order)
{
    double best = INFINITY, e, e1, e2;
    size_t prev = 2, lo = 2, hi = 2, al = 2, evals = 0;
    int rising = 0, rc;
    *order = 0;
    for (; al <= max_order && evals < cap1; prev = al, al = al < 12 ? al + 1 : al + al / 4,
                                            evals++) {
        if ((rc = f(ctx, al, &e)) < 0) return -1;
        if (rc) break; /* out of work */
        if (e < best) {
            best = e, *order = al, lo = prev, rising = 0;
        } else if (++rising == 1) {
            hi = al;
        }
        if (rising >= 3) break;
    }
    if (!rising) hi = al;
    while (hi > lo + 2 && evals++ < cap2) { /* the orders strictly between lo and hi */
        size_t m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
        int r1 = f(ctx, m1, &e1), r2 = r1 ? 0 : f(ctx, m2, &e2);
        if (r1 < 0 || r2 < 0) return -1;
        if (r1 || r2) break;
        if (e1 < best) best = e1, *order = m1;
        if (e2 < best) best = e2, *order = m2;
        if (e1 <= e2) hi = m2;
        else lo = m1;
    }
    *best_out = best;
    return 0;
}

/* The remove direction at one order within the work budget BAND2_WORK (an order whose moment
 * would not fit ends the search; a numerically infinite one as well). */
#define BAND2_WORK 4e8
typedef struct {
    const dpc__mmcc_mat *M;
    double q, s, delta, budget;
} band2_ctx;

static int band2_order_fn(void *vc, size_t al, double *eps)
{
    band2_ctx *c = vc;
    if (band2_order_eps(c->M, c->q, c->s, c->delta, al, &c->budget, eps)) return -1;
    return *eps == INFINITY;
}

static int band2_remove(const dpc__mmcc_mat *M, double q, double s, double delta, double *eps,
                        size_t *order)
{
    band2_ctx c = {M, q, s, delta, BAND2_WORK};
    double best;
    if (order_search(band2_order_fn, &c, 4096, SIZE_MAX, SIZE_MAX, &best, order)) return -1;
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

/* ---- Banded C with up to BAND_MAX_SPAN bands: per-column bounds and Hoelder ----
 * With h_t = <y, c_t>/s^2 - G_tt/(2 s^2) (G = C^T C >= 0), log dP_theta/dQ = sum_t theta_t h_t -
 * sum_{t<u} theta_t theta_u G_tu / s^2. Remove: the cross terms are <= 0, so
 * L <= prod_t phi(h_t), phi(h) = 1 - q + q e^h. Add: Gibbs with the y-dependent product weights
 * r_t = r(h_t) = q e^h_t / phi(h_t) and r_t r_u <= (r_t^2 + r_u^2)/2 give
 * log L >= sum_t [log phi(h_t) - kappa_t r(h_t)^2], kappa_t = sum_{u != t} G_tu / (2 s^2).
 * Under Q, h ~ N(-diag(G)/(2 s^2), G/s^2) and G_tu = 0 for |t - u| >= b (b bands), so the
 * columns of one residue mod b are independent; Hoelder over the b residues gives
 * log E_Q[L^alpha] <= (1/b) sum_t log E[phi(h_t)^(b alpha)] and
 * log E_Q[L^(1 - alpha)] <= (1/b) sum_t log E[exp(-b (alpha - 1)(log phi - kappa_t r^2)(h_t))],
 * one-dimensional integrals bounded from above cell by cell (each factor at its largest end). */
#define BAND_MAX_SPAN 8
#define BAND_MAX_CLASSES 64
#define BAND_CELLS 4096
#define BAND_CELLS_MAX 65536

typedef struct {
    double mu, v, kap; /* h_t ~ N(mu, v); kappa_t */
    double count;      /* columns with these values */
} band_col;

/* The span b of C's bands (largest last - first nonzero column + 1 of a row), 0 if above
 * BAND_MAX_SPAN or the rows are not one per step. */
static size_t band_span(const dpc__mmcc_mat *M)
{
    size_t b = 0;
    if (M->rows != M->n) return 0;
    for (size_t i = 0; i < M->rows; i++) {
        size_t c0 = M->col0 ? M->col0[i] : 0, f = SIZE_MAX, l = 0;
        for (size_t j = 0; j < M->width; j++)
            if (M->v[i * M->width + j] != 0.0) {
                if (f == SIZE_MAX) f = c0 + j;
                l = c0 + j;
            }
        if (f != SIZE_MAX && l - f + 1 > b) b = l - f + 1;
        if (b > BAND_MAX_SPAN) return 0;
    }
    return b;
}

/* The columns' (mu, v, kappa), grouped by equal values (Toeplitz: at most b + 1 groups).
 * Returns the number of groups, 0 when there are more than BAND_MAX_CLASSES, -1: no memory. */
static int band_columns(const dpc__mmcc_mat *M, size_t b, double s, band_col *cls)
{
    size_t n = M->n, nc = 0;
    double *G = calloc(n * b, sizeof *G); /* G[t b + d] = G_{t, t + d} */
    if (!G) return -1;
    for (size_t i = 0; i < M->rows; i++) {
        size_t c0 = M->col0 ? M->col0[i] : 0;
        const double *v = M->v + i * M->width;
        for (size_t j1 = 0; j1 < M->width; j1++) {
            if (v[j1] == 0.0) continue;
            for (size_t j2 = j1; j2 < M->width && j2 - j1 < b; j2++)
                G[(c0 + j1) * b + (j2 - j1)] += v[j1] * v[j2];
        }
    }
    for (size_t t = 0; t < n; t++) {
        double off = 0.0;
        for (size_t d = 1; d < b; d++) {
            if (t + d < n) off += G[t * b + d];
            if (t >= d) off += G[(t - d) * b + d];
        }
        band_col c = {-G[t * b] / (2.0 * s * s), G[t * b] / (s * s), off / (2.0 * s * s), 1.0};
        size_t k = 0;
        while (k < nc && !(cls[k].mu == c.mu && cls[k].v == c.v && cls[k].kap == c.kap)) k++;
        if (k < nc) {
            cls[k].count += 1.0;
        } else if (nc == BAND_MAX_CLASSES) {
            free(G);
            return 0;
        } else {
            cls[nc++] = c;
        }
    }
    free(G);
    return (int)nc;
}

static double band_lphi(double q, double h) { return dpc__log_add(log1p(-q), log(q) + h); }
static double band_r(double q, double h) { return exp(log(q) + h - band_lphi(q, h)); }

/* log of the N(mu, sd^2) tail beyond x on the far side of the mean (upper tail for x >= mu,
 * lower below): cells many standard deviations out, where the integrand's largest part may lie,
 * keep their mass in log space instead of underflowing to 0. */
static double band_log_tail(double x, double mu, double sd)
{
    return x >= mu ? dpc__log_ndtr(-(x - mu) / sd) : dpc__log_ndtr((x - mu) / sd);
}

/* log mass of [a, e] from the tails at its ends (ta, te: band_log_tail there). */
static double band_log_mass(double a, double e, double ta, double te, double mu, double sd)
{
    if (a >= mu) return ta + log1p(-exp(te - ta));
    if (e <= mu) return te + log1p(-exp(ta - te));
    return log(dpc__norm_mass(a, e, mu, sd));
}

/* Upper bound on log E[exp(k1 log phi(h) + k2 r(h)^2)], h ~ N(c->mu, c->v), k2 >= 0: on every
 * cell each factor at the end where it is largest, times the cell's normal mass; beyond the
 * cells closed-form tail bounds (phi <= e^h for h >= 0, phi >= 1 - q, r <= 1). */
static double band_log_int(const band_col *c, double q, double k1, double k2, int fine)
{
    if (c->v == 0.0) return k1 * band_lphi(q, c->mu) + k2 * band_r(q, c->mu) * band_r(q, c->mu);
    double sd = sqrt(c->v), lo = c->mu - 14.0 * sd;
    double hi = c->mu + (k1 > 0.0 ? k1 * c->v : 0.0) + sd * (12.0 + sqrt(2.0 * (k2 + 40.0)));
    if (hi < 1.0) hi = 1.0;
    double rl = band_r(q, lo), acc;
    /* below lo */
    acc = (k1 > 0.0 ? k1 * band_lphi(q, lo) : k1 * log1p(-q)) + k2 * rl * rl +
          dpc__log_ndtr((lo - c->mu) / sd);
    /* above hi (hi >= 1 > 0: phi(h) <= e^h there) */
    double up = k1 > 0.0 ? k1 * c->mu + k1 * k1 * c->v / 2.0 +
                               dpc__log_ndtr((c->mu + k1 * c->v - hi) / sd)
                         : k1 * band_lphi(q, hi) + dpc__log_ndtr((c->mu - hi) / sd);
    acc = dpc__log_add(acc, up + k2);
    /* cells narrow enough that the log-integrand (slope <= |k1| + 2 k2) moves <= 0.01 (fine) or
     * 0.05 (the order search) across one;
     * any width gives an upper bound, the width sets only how close it is */
    double want = ceil((hi - lo) * (fabs(k1) + 2.0 * k2) / (fine ? 0.01 : 0.05)), top = fine ? BAND_CELLS_MAX : BAND_CELLS_MAX / 4;
    long N = want < BAND_CELLS ? BAND_CELLS : want > top ? (long)top : (long)want;
    double d = (hi - lo) / (double)N, la = band_lphi(q, lo), ta = band_log_tail(lo, c->mu, sd);
    for (long k = 0; k < N; k++) {
        double a = lo + d * (double)k, e = k + 1 == N ? hi : a + d;
        double lb = band_lphi(q, e), rb = exp(log(q) + e - lb), te = band_log_tail(e, c->mu, sd);
        double lm = band_log_mass(a, e, ta, te, c->mu, sd);
        if (lm > -INFINITY)
            acc = dpc__log_add(acc, (k1 > 0.0 ? k1 * lb : k1 * la) + k2 * rb * rb + lm);
        la = lb, ta = te;
    }
    /* rounding: relative 1e-12 per cell on positive terms; the masses' own relative error */
    return acc + 1e-9;
}

typedef struct {
    const band_col *cls;
    size_t nc, b;
    double q, delta;
    int add, fine;
} band_holder;

/* epsilon of one direction at order al by the Hoelder bound (CKS 2020, Prop. 12). */
static double band_holder_eps(const band_holder *H, size_t al)
{
    double a = (double)al, bb = (double)H->b, lm = 0.0;
    for (size_t k = 0; k < H->nc; k++) {
        double k1 = H->add ? -bb * (a - 1.0) : bb * a, k2 = H->add ? bb * (a - 1.0) * H->cls[k].kap : 0.0;
        lm += H->cls[k].count * band_log_int(&H->cls[k], H->q, k1, k2, H->fine);
    }
    lm /= bb;
    return lm / (a - 1.0) + log1p(-1.0 / a) - (log(a) + log(H->delta)) / (a - 1.0);
}

static int band_holder_fn(void *vc, size_t al, double *eps)
{
    *eps = band_holder_eps(vc, al);
    return 0;
}

/* The smallest Hoelder epsilon over integer orders (order_search, at most 40 + 20
 * evaluations), searched on coarse cells; the best order is evaluated again on fine cells
 * (every evaluation is an upper bound; the smaller is kept). */
static double band_holder_search(band_holder *H, size_t *order)
{
    double best;
    if (order_search(band_holder_fn, H, 1024, 40, 60, &best, order)) return INFINITY;
    if (*order) {
        H->fine = 1;
        double e = band_holder_eps(H, *order);
        H->fine = 0;
        if (e < best) best = e;
    }
    return best > 0.0 ? best : 0.0;
}

size_t dpc__band_span(const dpc__mmcc_mat *M) { return band_span(M); }

dpc_status dpc__band_holder(const dpc__mmcc_mat *M, double q, double s, double delta,
                            double *eps_remove, double *eps_add, dpc_error *err)
{
    size_t b = band_span(M), o;
    if (!b) return dpc_error_param(err, DPC_E_UNSUPPORTED, "mech", "C has more than 8 bands");
    band_col cls[BAND_MAX_CLASSES];
    int nc = band_columns(M, b, s, cls);
    if (nc < 0) return DPC__NOMEM(err, "the banded Hoelder bound");
    if (nc == 0)
        return dpc_error_param(err, DPC_E_UNSUPPORTED, "mech", "C's columns take too many forms");
    band_holder H = {cls, (size_t)nc, b, q, delta, 0, 0};
    *eps_remove = band_holder_search(&H, &o);
    H.add = 1;
    *eps_add = band_holder_search(&H, &o);
    return DPC_OK;
}

dpc_status dpc__band2_epsilon(const dpc__mmcc_mat *M, double q, double s, double delta,
                              double *eps, double *eps_remove, double *eps_add, size_t *order,
                              dpc_error *err)
{
    size_t b = band_span(M), al = 0;
    int two = dpc__band2_applies(M);
    if (!b && !two)
        return dpc_error_param(err, DPC_E_UNSUPPORTED, "mech", "C has more than 8 bands");
    double er = INFINITY, ea = INFINITY, hr = INFINITY, ha = INFINITY;
    dpc_status st;
    if (two) {
        if (band2_remove(M, q, s, delta, &er, &al))
            return DPC__NOMEM(err, "the banded Renyi chain");
        ea = band2_add(M, q, s, delta);
    }
    if (b && (st = dpc__band_holder(M, q, s, delta, &hr, &ha, err)) && st != DPC_E_UNSUPPORTED)
        return st;
    /* per direction the smallest valid bound */
    er = hr < er ? hr : er;
    ea = ha < ea ? ha : ea;
    if (eps_remove) *eps_remove = er;
    if (eps_add) *eps_add = ea;
    if (order) *order = al;
    *eps = er > ea ? er : ea;
    return DPC_OK;
}
