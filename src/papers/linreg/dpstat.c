/* dpstat.c — DP-STAT (Varshney, Thakurta & Jain 2022, Algorithm 3 and Lemma 3.10): a private
 * doubling search for the approximate maximum absolute residual, with the note's corrections:
 * exactly K noisy counts (erratum 3), Delta = B/2^K with a user K (erratum 2) and the margin
 * stopping rule c_priv >= s - Gamma (erratum 1; the printed rule c_priv >= s is kept as an
 * option). Counts are answered by binary search in the sorted absolute residuals. */
#include "linreg/linreg_internal.h"

#include <math.h>
#include <stdlib.h>

dpc_status dpc_linreg_dpstat_margin(double noise_multiplier, size_t k, double beta, double *gamma,
                                    dpc_error *err)
{
    if (!(noise_multiplier > 0) || !isfinite(noise_multiplier))
        return dpc_error_param(err, DPC_E_INVALID, "noise_multiplier", "must be a finite number > 0, got %g",
                             noise_multiplier);
    if (k == 0) return dpc_error_param(err, DPC_E_INVALID, "k", "must be >= 1");
    if (!(beta > 0 && beta < 1))
        return dpc_error_param(err, DPC_E_INVALID, "beta", "must be in (0, 1), got %g", beta);
    if (!gamma) return dpc_error_param(err, DPC_E_INVALID, "gamma", "output pointer is NULL");
    /* Lemma 3.10: Gamma = noise_multiplier sqrt(2 log(B/Delta) log(log(B/Delta)/beta)), B/Delta = 2^K */
    double lbd = (double)k * log(2.0);
    double inner = log(lbd / beta);
    *gamma = noise_multiplier * sqrt(2.0 * lbd * (inner > 0 ? inner : 0.0));
    return DPC_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Number of entries of the ascending array v (n) that are <= g. */
static size_t count_le(const double *v, size_t n, double g)
{
    size_t lo = 0, hi = n; /* v[0..lo) <= g, v[hi..n) > g */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] <= g) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

dpc_status dpc_linreg_dpstat(const double *r, size_t s, const dpc_dpstat_params *p,
                             const dpc_rng_stream *noise, uint64_t row, double *work,
                             dpc_dpstat_result *out, double *counts, double *noisy,
                             dpc_error *err)
{
    if (!r || !p || !noise || !work || !out)
        return dpc_error_set(err, DPC_E_INVALID, "dpstat: NULL argument");
    if (s == 0) return dpc_error_set(err, DPC_E_INVALID, "dpstat: s must be >= 1");
    /* domain, k and the noise multiplier must be set (0 is their unset value); then every field
     * within its range (dpc_dpstat_params_fields) */
    if (p->domain == 0)
        return dpc_error_param(err, DPC_E_INVALID, "domain", "must be a finite number > 0, got 0");
    if (p->k == 0)
        return dpc_error_param(err, DPC_E_INVALID, "k", "must be in [1, %d], got 0",
                               DPC_LINREG_MAX_DPSTAT_K);
    if (p->noise_multiplier == 0)
        return dpc_error_param(err, DPC_E_INVALID, "noise_multiplier",
                               "must be a finite number > 0, got 0");
    dpc_status st = dpc_field_check(dpc_dpstat_params_fields(), p, err);
    if (st) return st;
    for (size_t j = 0; j < s; j++) {
        if (!isfinite(r[j]))
            return dpc_error_set(err, DPC_E_NUMERIC, "dpstat: residual %zu is not finite (%g)", j,
                                 r[j]);
        work[j] = fabs(r[j]);
    }
    qsort(work, s, sizeof *work, cmp_double);
    double K = (double)p->k, sd = sqrt(K) * p->noise_multiplier;
    /* DP-REQ: dpstat-rule: Alg. 3 line 5 stops at c_priv >= s (PAPER); the note's margin rule
     * stops at c_priv >= s - Gamma. The threshold is public, so privacy is the same. */
    double thr = p->rule == DPC_DPSTAT_PAPER ? (double)s : (double)s - p->margin;
    out->noise_std = sd;
    for (size_t i = 0; i < p->k; i++) {
        /* gamma_i = 2^i Delta = B 2^(i - K), exact (a power-of-two scaling; 0 on underflow) */
        double g = ldexp(p->domain, (int)i - (int)p->k);
        double c = (double)count_le(work, s, g);
        /* DP-REQ: dpstat-count: Lemma 3.10: a count has sensitivity 1; noise N(0, K alpha^2)
         * makes each 1/(2 K alpha^2)-zCDP and the K counts together 1/(2 alpha^2). */
        double cp = c + sd * dpc_rng_gaussian(noise, row, (uint64_t)i);
        if (counts) counts[i] = c;
        if (noisy) noisy[i] = cp;
        if (cp >= thr) {
            out->gamma = g;
            out->rounds = i + 1;
            return DPC_OK;
        }
    }
    out->gamma = p->domain; /* gamma_K = 2^K Delta = B */
    out->rounds = p->k;
    return DPC_OK;
}
