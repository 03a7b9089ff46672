/* mech_sens.c — L2 sensitivity of a mechanism under single and multiple participation.
 *
 * Setting (Denisov et al. 2022; Choquette-Choo et al. 2023 "multi-epoch MF"): the mechanism
 * releases C G + Z; one example contributes gradients g_i (||g_i|| <= 1) at the steps of a
 * participation pattern pi. The sensitivity is
 *     sens^2 = max_pi max_{g} || sum_{i in pi} C e_i g_i^T ||_F^2 = max_pi max_g sum_ij X_ij <g_i, g_j>,
 * X = C^T C. If X >= 0 entrywise the inner max is attained at equal g's: 1_pi^T X 1_pi. Otherwise
 * sum_ij |X_ij| over the pattern is a valid upper bound (reported as a bound).
 *
 * Methods, from cheapest to most general:
 *   k = 1                      max column norm of C (exact);
 *   Toeplitz, c >= 0 non-incr. min-sep optimum is 0, b, 2b, ... (Kalinin & Lampert 2024, Thm 2;
 *                              jax_privacy minsep_sensitivity_squared) — exact;
 *   Toeplitz, c >= 0, cyclic   offset t0 = 0 dominates (every other offset is a truncation);
 *   Toeplitz otherwise         the monotone majorant c'_t = max_{s>=t} |c_s| gives an upper bound;
 *   n <= 4096                  X formed explicitly: exhaustive enumeration when X >= 0 and the
 *                              patterns are few (exact), else a dynamic-programming bound on |X|;
 *   tree, large n              per-level counting bound. */
#include "common/util.h"
#include "mech/mech_internal.h"
#include "dpcorr/fft.h"
#include "dpcorr/special.h" /* dpc_special_ellip_k (AGM) */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GRAM_MAX 4096
#define ENUM_MAX 3.0e6
#define SENS_DIRECT_MAX 2.0e7 /* shifted sums: direct below, prefix sums above */

const char *dpc_sens_method_name(dpc_sens_method m)
{
    switch (m) {
    case DPC_SENS_EXACT_COLUMN: return "exact: max column norm";
    case DPC_SENS_EXACT_TOEPLITZ_MINSEP: return "exact: non-negative non-increasing Toeplitz";
    case DPC_SENS_EXACT_ENUMERATION: return "exact: enumeration of all patterns";
    case DPC_SENS_EXACT_CYCLIC: return "exact: cyclic pattern, non-negative Gram";
    case DPC_SENS_BOUND_MAJORANT: return "upper bound: monotone majorant of |c|";
    case DPC_SENS_BOUND_ABSGRAM: return "upper bound: sum of |C^T C| over the best pattern";
    case DPC_SENS_BOUND_TREE_LEVELS: return "upper bound: per-level node counting";
    }
    return "unknown";
}

/* ||sum_{j<k} shift(c, t0 + j b)||^2 truncated to n: v_t = sum_j c_{t - t0 - j b}, summed in the
 * order j = 0, 1, ... The reference: n k multiply-adds. */
double dpc__shifted_sum_sq_naive(const double *c, size_t n, size_t k, size_t b, size_t t0)
{
    double s = 0.0;
    for (size_t t = t0; t < n; t++) {
        double v = 0.0;
        for (size_t j = 0; j < k; j++) {
            size_t off = t0 + j * b;
            if (off > t) break;
            v += c[t - off];
        }
        s += v * v;
    }
    return s;
}

/* The last index with c_t != 0 (0 for an all-zero c): C's band. */
static size_t coef_support(const double *c, size_t n)
{
    size_t L = 0;
    for (size_t t = 0; t < n; t++)
        if (c[t] != 0.0) L = t;
    return L;
}

/* Work of shifted_sum_sq: n times the participations that can overlap a band of L + 1. */
static double shifted_sum_work(size_t n, size_t k, size_t b, size_t L)
{
    double per = (double)(L / b + 1);
    return (double)n * (per < (double)k ? per : (double)k);
}

/* The same sum, skipping the terms outside c's band [0, L] (exact zeros: v and the result are
 * bit-identical to the reference): n min(k, L/b + 1) multiply-adds, so the identity (L = 0) and
 * banded strategies cost O(n) for any number of participations. */
double dpc__shifted_sum_sq(const double *c, size_t n, size_t k, size_t b, size_t t0)
{
    size_t L = coef_support(c, n);
    double s = 0.0;
    for (size_t t = t0; t < n; t++) {
        double v = 0.0;
        size_t j0 = t - t0 > L ? (t - t0 - L + b - 1) / b : 0; /* first j with index <= L */
        for (size_t j = j0; j < k; j++) {
            size_t off = t0 + j * b;
            if (off > t) break;
            v += c[t - off];
        }
        s += v * v;
    }
    return s;
}

/* For a wide band and many participations (n k above the work limit): v_t as the difference of
 * two strided prefix sums P_u = c_u + P_{u-b}, accumulated in long double so that the
 * cancellation costs nothing at double precision (c >= 0: every P is a sum of non-negative
 * terms). O(n) time and memory; agrees with the reference to rounding (tests/test_mech.c). */
int dpc__shifted_sum_sq_prefix(const double *c, size_t n, size_t k, size_t b, double *out)
{
    long double *P = dpc__malloc_array(n, sizeof *P);
    if (!P) return 0;
    for (size_t u = 0; u < n; u++) P[u] = (long double)c[u] + (u >= b ? P[u - b] : 0.0L);
    double s = 0.0;
    for (size_t t = 0; t < n; t++) {
        /* j = 0 .. min(k - 1, t / b): indices t, t - b, ..., t - jmax b */
        size_t jmax = t / b < k - 1 ? t / b : k - 1;
        size_t lo = t - jmax * b; /* smallest index in the sum */
        long double v = P[t] - (lo >= b ? P[lo - b] : 0.0L);
        double vd = (double)v;
        s += vd * vd;
    }
    free(P);
    *out = s;
    return 1;
}

/* X = C^T C for n <= GRAM_MAX. Returns malloc'ed (n, n) or NULL. */
static double *gram(const dpc_mech *m)
{
    size_t n = m->n;
    double *X = dpc__calloc(n * n, sizeof *X);
    if (!X) return NULL;
    if (m->engine == ENGINE_TREE) {
        for (unsigned h = 0; ((size_t)1 << h) <= n; h++) {
            size_t w = (size_t)1 << h;
            for (size_t i = 0; (i + 1) * w <= n; i++)
                for (size_t s = i * w; s < (i + 1) * w; s++)
                    for (size_t t = i * w; t < (i + 1) * w; t++) X[s * n + t] += 1.0;
        }
    } else if (m->engine == ENGINE_DENSE) {
        const double *C = m->Cd; /* lower-triangular: X_st = sum_{l >= max(s,t)} C_ls C_lt */
        for (size_t s = 0; s < n; s++)
            for (size_t t = s; t < n; t++) {
                double acc = 0.0;
                for (size_t l = t; l < n; l++) acc += C[l * n + s] * C[l * n + t];
                X[s * n + t] = X[t * n + s] = acc;
            }
    } else {
        /* Toeplitz: X_{s,t} (s <= t, lag q = t - s) = sum_{u=0}^{n-1-t} c_{u+q} c_u. */
        const double *c = m->ccoef;
        for (size_t q = 0; q < n; q++) {
            double acc = 0.0;
            size_t umax = n - 1 - q;
            /* P(L) = sum_{u<=L} c_{u+q} c_u for L = 0..umax; X_{s,t} with t = n-1-L. */
            for (size_t L = 0; L <= umax; L++) {
                acc += c[L + q] * c[L];
                size_t t = n - 1 - L, s = t - q;
                X[s * n + t] = X[t * n + s] = acc;
            }
        }
    }
    return X;
}

static int gram_nonneg(const double *X, size_t n)
{
    for (size_t i = 0; i < n * n; i++)
        if (X[i] < 0.0) return 0;
    return 1;
}

/* Exhaustive enumeration of patterns of exactly k indices with gaps >= b (X >= 0). */
typedef struct enum_ctx {
    const double *X;
    size_t n, k, b;
    size_t idx[64];
    double best;
} enum_ctx;

static void enum_rec(enum_ctx *e, size_t depth, size_t start, double val)
{
    if (depth == e->k) {
        if (val > e->best) e->best = val;
        return;
    }
    size_t remaining = e->k - depth - 1;
    if (remaining * e->b >= e->n) return;
    size_t last = e->n - 1 - remaining * e->b;
    for (size_t j = start; j <= last; j++) {
        double add = e->X[j * e->n + j];
        for (size_t q = 0; q < depth; q++) add += 2.0 * e->X[e->idx[q] * e->n + j];
        e->idx[depth] = j;
        enum_rec(e, depth + 1, j + e->b, val + add);
    }
}

static double binom_d(double n, double k)
{
    if (k < 0 || k > n) return 0;
    return exp(lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1));
}

/* Best sum over <= k positions of w (w >= 0) with pairwise gaps >= b, positions in [lo, hi]:
 * F[j][m] = max(F[j-1][m], F[j-b][m-1] + w_j). Returns best[m] for m = 0..k in out. */
static void best_sums(const double *w, size_t lo, size_t hi, size_t k, size_t b, double *F,
                      double *out)
{
    /* F laid out (len, k+1); F[-] = 0 for m = 0, -inf otherwise. */
    size_t len = hi >= lo ? hi - lo + 1 : 0;
    for (size_t m = 0; m <= k; m++) out[m] = m == 0 ? 0.0 : -INFINITY;
    for (size_t j = 0; j < len; j++) {
        for (size_t m = 0; m <= k; m++) {
            double keep = j > 0 ? F[(j - 1) * (k + 1) + m] : (m == 0 ? 0.0 : -INFINITY);
            double take = -INFINITY;
            if (m > 0) {
                double prev = j >= b ? F[(j - b) * (k + 1) + m - 1] : (m == 1 ? 0.0 : -INFINITY);
                if (prev > -INFINITY) take = prev + w[lo + j];
            }
            F[j * (k + 1) + m] = keep > take ? keep : take;
        }
    }
    if (len)
        for (size_t m = 0; m <= k; m++) out[m] = F[(len - 1) * (k + 1) + m];
}

/* Upper bound on max_pi sum_{i,j in pi} |X_ij| (min-sep b, <= k). O(n^2 k). */
static int absgram_bound(const double *X, size_t n, size_t k, size_t b, double *out)
{
    double *F = dpc__malloc_array(n * (k + 1), sizeof *F);
    double *w = dpc__malloc_array(n, sizeof *w), *u = dpc__malloc_array(n, sizeof *u);
    double *L = dpc__malloc_array(k + 1, sizeof *L), *R = dpc__malloc_array(k + 1, sizeof *R);
    if (!F || !w || !u || !L || !R) {
        free(F); free(w); free(u); free(L); free(R);
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++) w[j] = fabs(X[i * n + j]);
        for (size_t m = 0; m <= k; m++) L[m] = R[m] = (m == 0 ? 0.0 : -INFINITY);
        if (i >= b) best_sums(w, 0, i - b, k - 1, b, F, L);
        if (i + b <= n - 1) best_sums(w, i + b, n - 1, k - 1, b, F, R);
        double best = 0.0;
        for (size_t m1 = 0; m1 < k; m1++)
            for (size_t m2 = 0; m1 + m2 < k; m2++) {
                double v = L[m1] + R[m2];
                if (v > best) best = v;
            }
        u[i] = w[i] + best;
    }
    double top[65];
    if (k > 64) k = 64;
    best_sums(u, 0, n - 1, k, b, F, top);
    double best = 0.0;
    for (size_t m = 0; m <= k; m++)
        if (top[m] > best) best = top[m];
    *out = best;
    free(F); free(w); free(u); free(L); free(R);
    return 1;
}

static double tree_level_bound_sq(size_t n, size_t k, size_t b)
{
    double s = 0.0;
    for (unsigned h = 0; ((size_t)1 << h) <= n; h++) {
        size_t w = (size_t)1 << h, mh = dpc__ceil_div(w, b);
        if (mh > k) mh = k;
        size_t full = k / mh, rest = k % mh;
        s += (double)full * (double)mh * (double)mh + (double)rest * (double)rest;
    }
    return s;
}

/* max_s ||C e_s||^2: the squared single-participation sensitivity. */
static double max_column_sq(const dpc_mech *m)
{
    size_t n = m->n;
    double best = 0.0;
    if (m->engine == ENGINE_TREE) return (double)dpc__tree_levels(n);
    if (m->engine == ENGINE_DENSE) {
        for (size_t s = 0; s < n; s++) {
            double acc = 0.0;
            for (size_t l = s; l < n; l++) acc += m->Cd[l * n + s] * m->Cd[l * n + s];
            if (acc > best) best = acc;
        }
        return best;
    }
    for (size_t t = 0; t < n; t++) best += m->ccoef[t] * m->ccoef[t];
    return best;
}

/* Toeplitz C: exact for c >= 0 that is non-increasing (min-sep) or under a cyclic pattern
 * (*done = 1, out filled); otherwise *bound = the squared monotone-majorant bound. One pass of
 * shifted sums over the band: n min(k, L/b + 1) multiply-adds; past SENS_DIRECT_MAX (wide bands,
 * many participations) the O(n) prefix-sum form. */
static dpc_status toeplitz_sens(const double *c, size_t n, size_t k, size_t b, int cyclic,
                                dpc_sensitivity *out, int *done, double *bound, dpc_error *err)
{
    int nonneg = 1, noninc = 1;
    for (size_t t = 0; t < n; t++) {
        if (c[t] < 0.0) nonneg = 0;
        if (t + 1 < n && c[t + 1] > c[t]) noninc = 0;
    }
    int prefix = 2.0 * shifted_sum_work(n, k, b, coef_support(c, n)) > SENS_DIRECT_MAX;
    if (nonneg && (noninc || cyclic)) {
        double v2;
        if (!prefix) v2 = dpc__shifted_sum_sq(c, n, k, b, 0);
        else if (!dpc__shifted_sum_sq_prefix(c, n, k, b, &v2))
            return DPC__NOMEM(err, "prefix sums");
        out->value = sqrt(v2);
        out->exact = 1;
        out->method = cyclic ? DPC_SENS_EXACT_CYCLIC : DPC_SENS_EXACT_TOEPLITZ_MINSEP;
        *done = 1;
        return DPC_OK;
    }
    double *maj = dpc__malloc_array(n, sizeof *maj);
    if (!maj) return DPC__NOMEM(err, "majorant");
    double run = 0.0;
    for (size_t t = n; t-- > 0;) {
        if (fabs(c[t]) > run) run = fabs(c[t]);
        maj[t] = run;
    }
    int ok = 1;
    if (!prefix) *bound = dpc__shifted_sum_sq(maj, n, k, b, 0);
    else ok = dpc__shifted_sum_sq_prefix(maj, n, k, b, bound);
    free(maj);
    return ok ? DPC_OK : DPC__NOMEM(err, "prefix sums");
}

dpc_status dpc_mech_sensitivity(const dpc_mech *m, const dpc_participation *part,
                                dpc_sensitivity *out, dpc_error *err)
{
    if (!part) return dpc_error_param(err, DPC_E_INVALID, "part", "NULL");
    static const char *const order[] = {"k", "b", "kind"}; /* the table's ranges: "part.k" */
    for (size_t i = 0; i < 3; i++) {
        const dpc_field *f = dpc_field_find(&dpc__participation_table, order[i], NULL);
        dpc_status st = dpc_field_check_value(f, "part.", dpc_field_get(f, part), err);
        if (st) return st;
    }
    if (part->k > 64 && m->n > GRAM_MAX && !dpc_mech_is_toeplitz(m))
        return dpc_error_param(err, DPC_E_UNSUPPORTED, "part.k", "at most 64 supported here");
    size_t n = m->n, b = part->b;
    size_t kmax = dpc__ceil_div(n, b), k = part->k < kmax ? part->k : kmax;
    memset(out, 0, sizeof *out);
    out->k_effective = k;
    int cyclic = part->kind == DPC_PART_CYCLIC;

    if (k == 1) { /* single participation: the largest column norm of C */
        out->value = sqrt(max_column_sq(m));
        out->exact = 1;
        out->method = DPC_SENS_EXACT_COLUMN;
        return DPC_OK;
    }

    double bound = INFINITY;
    dpc_sens_method bound_method = DPC_SENS_BOUND_ABSGRAM;
    if (dpc_mech_is_toeplitz(m)) {
        int done = 0;
        dpc_status st = toeplitz_sens(m->ccoef, n, k, b, cyclic, out, &done, &bound, err);
        if (st || done) return st;
        bound_method = DPC_SENS_BOUND_MAJORANT;
    }
    if (m->engine == ENGINE_TREE && !cyclic) {
        double tb = tree_level_bound_sq(n, k, b);
        if (tb < bound) {
            bound = tb;
            bound_method = DPC_SENS_BOUND_TREE_LEVELS;
        }
    }
    if (n <= GRAM_MAX && k <= 64) {
        double *X = gram(m);
        if (!X) return DPC__NOMEM(err, "Gram matrix C^T C");
        int nonneg = gram_nonneg(X, n);
        if (cyclic) {
            double best = 0.0, best_abs = 0.0;
            for (size_t t0 = 0; t0 < b && t0 < n; t0++) {
                double v = 0.0, va = 0.0;
                size_t iend = t0 + k * b < n ? t0 + k * b : n; /* at most k participations */
                for (size_t i = t0; i < iend; i += b)
                    for (size_t j = t0; j < iend; j += b) {
                        v += X[i * n + j];
                        va += fabs(X[i * n + j]);
                    }
                if (v > best) best = v;
                if (va > best_abs) best_abs = va;
            }
            if (nonneg) {
                free(X);
                out->value = sqrt(best);
                out->exact = 1;
                out->method = DPC_SENS_EXACT_CYCLIC;
                return DPC_OK;
            }
            if (best_abs < bound) {
                bound = best_abs;
                bound_method = DPC_SENS_BOUND_ABSGRAM;
            }
        } else {
            double count = binom_d((double)n - (double)(k - 1) * (double)(b - 1), (double)k);
            if (nonneg && count <= ENUM_MAX) {
                enum_ctx e = {X, n, k, b, {0}, 0.0};
                enum_rec(&e, 0, 0, 0.0);
                free(X);
                out->value = sqrt(e.best);
                out->exact = 1;
                out->method = DPC_SENS_EXACT_ENUMERATION;
                return DPC_OK;
            }
            double ab;
            if (!absgram_bound(X, n, k, b, &ab)) {
                free(X);
                return DPC__NOMEM(err, "sensitivity bound");
            }
            if (ab < bound) {
                bound = ab;
                bound_method = DPC_SENS_BOUND_ABSGRAM;
            }
        }
        free(X);
    }
    if (!isfinite(bound))
        return dpc_error_set(err, DPC_E_UNSUPPORTED,
                             "%s: no sensitivity method for n = %zu with %zu participations",
                             dpc_mech_kind_name(m->p.kind), n, k);
    out->value = sqrt(bound);
    out->exact = 0;
    out->method = bound_method;
    return DPC_OK;
}

/* gamma_inf^2 = sum_t c_t^2 for C = 1/B(x), B a polynomial of L terms:
 * (1/2pi) int |B(w)|^-2 dw (Parseval; nu-DP-FTRL paper eq. 26) by the trapezoidal rule, which
 * converges geometrically for this analytic periodic integrand. The grid doubles (only the new
 * points are evaluated) until two estimates agree to 1e-13. A zero of B on the unit circle means
 * divergence (INFINITY).
 *
 * |B| on the grid w_j = 2 pi (j + shift) / M: the DFT of b_l e^{-2 pi i l shift / M} (|B(w)| =
 * |B(-w)| for real b). The FFT form evaluates M points in O(M log M) (dpc__limit_poly); the direct
 * form (dpc__limit_poly_naive, the reference) in O(M L). Both start at M = max(64, 4L) and stop at
 * the same estimates. L > 2^21 is refused (DPC_E_RANGE, "coeffs"); the grid stops at 2^24 points
 * (at most about 25 FFTs of 2^24 points, a few seconds); a quadrature that has not converged
 * there is DPC_E_NUMERIC. */
#define LIMIT_MAX_M ((size_t)1 << 24)

/* sum over j < M of 1/|B(2 pi (j + shift)/M)|^2 by the FFT; 0: a zero of B (sum = INFINITY). */
static int sum_inv_fft(const dpc_fft *f, const double *b, size_t L, size_t M, double shift,
                       double *re, double *im, double *sum)
{
    for (size_t l = 0; l < M; l++) {
        double a = l < L ? b[l] : 0.0, w = -2.0 * M_PI * shift * (double)l / (double)M;
        re[l] = shift == 0.0 ? a : a * cos(w);
        im[l] = shift == 0.0 ? 0.0 : a * sin(w);
    }
    dpc_fft_exec(f, re, im, 0);
    double acc = 0.0;
    for (size_t j = 0; j < M; j++) {
        double m2 = re[j] * re[j] + im[j] * im[j];
        if (m2 < 1e-300) return 0;
        acc += 1.0 / m2;
    }
    *sum += acc;
    return 1;
}

/* The same sum by direct evaluation (reference). */
static int sum_inv_naive(const double *b, size_t L, size_t M, double shift, double *sum)
{
    double acc = 0.0;
    for (size_t j = 0; j < M; j++) {
        double re = 0.0, im = 0.0, w = 2.0 * M_PI * ((double)j + shift) / (double)M;
        for (size_t l = 0; l < L; l++) {
            re += b[l] * cos(w * (double)l);
            im += b[l] * sin(w * (double)l);
        }
        double m2 = re * re + im * im;
        if (m2 < 1e-300) return 0;
        acc += 1.0 / m2;
    }
    *sum += acc;
    return 1;
}

static dpc_status limit_poly(const double *b, size_t L, int naive, double *g, dpc_error *err)
{
    if (L > LIMIT_MAX_M / 8)
        return dpc_error_param(err, DPC_E_RANGE, "coeffs",
                               "%zu coefficients: the limit quadrature supports at most %zu", L,
                               LIMIT_MAX_M / 8);
    size_t M = 64;
    while (M < 4 * L) M *= 2;
    double *re = NULL, *im = NULL;
    dpc_fft *f = NULL;
    dpc_status st = DPC_OK;
    double sum = 0.0, prev = 0.0, cur = 0.0;
    int ok = 1, done = 0;
    for (int level = 0; ok && !done && M <= LIMIT_MAX_M; level++) {
        if (!naive) {
            dpc_fft_free(f);
            free(re);
            free(im);
            re = dpc__malloc_array(M, sizeof *re);
            im = dpc__malloc_array(M, sizeof *im);
            if (!re || !im || (st = dpc_fft_new(&f, M, err))) {
                if (!st) st = DPC__NOMEM(err, "the limit quadrature");
                break;
            }
        }
        /* level 0: the M grid points; then the M midpoints of the grid, which doubles */
        double shift = level == 0 ? 0.0 : 0.5;
        ok = naive ? sum_inv_naive(b, L, M, shift, &sum)
                   : sum_inv_fft(f, b, L, M, shift, re, im, &sum);
        if (level == 0) {
            prev = sum / (double)M;
            continue;
        }
        M *= 2;
        cur = sum / (double)M;
        if (fabs(cur - prev) <= 1e-13 * cur) done = 1;
        else prev = cur;
    }
    dpc_fft_free(f);
    free(re);
    free(im);
    if (st) return st;
    if (!ok) {
        *g = INFINITY;
        return DPC_OK;
    }
    if (done) {
        *g = sqrt(cur);
        return DPC_OK;
    }
    return dpc_error_set(err, DPC_E_NUMERIC,
                         "limit sensitivity: quadrature did not converge (B nearly vanishes on "
                         "the unit circle; gamma_inf is at least %.6g)", sqrt(prev));
}

dpc_status dpc__limit_poly(const double *b, size_t L, double *g, dpc_error *err)
{
    return limit_poly(b, L, 0, g, err);
}

dpc_status dpc__limit_poly_naive(const double *b, size_t L, double *g, dpc_error *err)
{
    return limit_poly(b, L, 1, g, err);
}

/* The limit of a banded series needs all `bands` coefficients (not only the n that run): bounded
 * by the work limit like building them (mech_core.c), before any allocation. */
static dpc_status limit_bands_work(const dpc_mech_params *p, dpc_error *err)
{
    double L = (double)p->bands;
    return dpc__work_check(16.0 * L + (p->momentum != 0.0 ? L * L : 0.0), "bands",
                           "the limit sensitivity's series (bands coefficients)", err);
}

dpc_status dpc_mech_limit_sensitivity(const dpc_mech *m, double *g, dpc_error *err)
{
    const dpc_mech_params *p = &m->p;
    switch (p->kind) {
    case DPC_MECH_IDENTITY: *g = 1.0; return DPC_OK;
    case DPC_MECH_NU:
        /* gamma_inf^2 = (2/pi) K(1 - nu) [OURS, nu-DP-FTRL note 3.3]; diverges at nu = 0. */
        *g = p->nu == 0.0 ? INFINITY : sqrt(2.0 / M_PI * dpc_special_ellip_k(1.0 - p->nu));
        return DPC_OK;
    case DPC_MECH_ANTIPGD:
    case DPC_MECH_LCGD: {
        double lam = p->kind == DPC_MECH_LCGD ? p->lambda : 1.0 - p->nu;
        /* sum_t lam^(2t) = 1 / (1 - lam^2); anti-PGD damped: 1/(nu (2 - nu)). */
        *g = lam >= 1.0 ? INFINITY : sqrt(1.0 / ((1.0 - lam) * (1.0 + lam)));
        return DPC_OK;
    }
    case DPC_MECH_BSR: {
        double s = 0.0; /* C is banded: the limit is reached at n = bands */
        dpc_status wst = limit_bands_work(p, err);
        if (wst) return wst;
        double *c = dpc__malloc_array(p->bands, sizeof *c);
        if (!c) return DPC__NOMEM(err, "coefficients");
        if (!dpc__series_workload_root(c, p->bands, p->decay, p->momentum, -1)) {
            free(c);
            return DPC__NOMEM(err, "coefficients");
        }
        for (size_t t = 0; t < p->bands; t++) s += c[t] * c[t];
        free(c);
        *g = sqrt(s);
        return DPC_OK;
    }
    case DPC_MECH_BLT: {
        /* sum_t c_t^2 = 1 + sum_ij w_i w_j / (1 - t_i t_j) (geometric series). */
        double s = 1.0;
        for (size_t i = 0; i < p->nbuf; i++)
            for (size_t j = 0; j < p->nbuf; j++)
                s += p->omega[i] * p->omega[j] / (1.0 - p->theta[i] * p->theta[j]);
        *g = sqrt(s);
        return DPC_OK;
    }
    case DPC_MECH_TREE: *g = INFINITY; return DPC_OK;
    case DPC_MECH_DENSE:
        return dpc_error_set(err, DPC_E_UNSUPPORTED, "dense: no limit (not anytime)");
    case DPC_MECH_TOEPLITZ:
        if (p->coeffs_of_strategy) {
            double s = 0.0;
            for (size_t t = 0; t < p->ncoeffs; t++) s += p->coeffs[t] * p->coeffs[t];
            *g = sqrt(s);
            return DPC_OK;
        }
        return dpc__limit_poly(p->coeffs, p->ncoeffs, g, err);
    case DPC_MECH_BISR: {
        dpc_status wst = limit_bands_work(p, err);
        if (wst) return wst;
        double *bc = dpc__malloc_array(p->bands, sizeof *bc);
        if (!bc || !dpc__series_workload_root(bc, p->bands, p->decay, p->momentum, +1)) {
            free(bc);
            return DPC__NOMEM(err, "coefficients");
        }
        dpc_status st = dpc__limit_poly(bc, p->bands, g, err);
        free(bc);
        return st;
    }
    default: break;
    }
    return dpc_error_set(err, DPC_E_UNSUPPORTED, "limit sensitivity unavailable");
}
