/* sample.c — fresh uniform batches for DP-lambda-CGD ([KAN] Algorithm 1: a size-B subset
 * drawn uniformly without replacement at every step) and the synthetic data of note 004 §6.1
 * (inputs uniform in the unit ball, labels from a linear teacher with a margin). */
#include "common/util.h"
#include "kan/kan_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

dpc_status dpc_kan_batch(const dpc_rng_stream *s, uint64_t step, size_t n, size_t B, size_t *idx,
                         dpc_error *err)
{
    if (!s || !idx) return dpc_error_param(err, DPC_E_INVALID, "kan_batch", "NULL argument");
    if (B < 1 || B > n)
        return dpc_error_param(err, DPC_E_INVALID, "batch", "must be in [1, n = %zu], got %zu", n, B);
    unsigned char *mark = dpc__calloc(n, 1);
    if (!mark) return DPC__NOMEM(err, "batch marks");
    /* Floyd (1987): for j = n-B .. n-1 pick t uniform in [0, j]; take t, or j if t is taken.
     * Every size-B subset is equally likely. */
    size_t c = 0;
    for (size_t j = n - B; j < n; j++) {
        size_t t = (size_t)dpc_rng_below(s, step, j, (uint64_t)j + 1);
        size_t pick = mark[t] ? j : t;
        mark[pick] = 1;
        idx[c++] = pick;
    }
    free(mark);
    qsort(idx, B, sizeof *idx, cmp_size);
    return DPC_OK;
}

#define SYNTH_MAX_ATTEMPTS 4096

dpc_status dpc_kan_synth(dpc_dataset **out, const dpc_rng *rng, uint64_t stream_index, size_t n,
                         size_t d, double margin, const double *w_star, dpc_error *err)
{
    if (!out || !rng) return dpc_error_param(err, DPC_E_INVALID, "kan_synth", "NULL argument");
    *out = NULL;
    if (n < 1 || d < 1) return dpc_error_param(err, DPC_E_INVALID, "kan_synth", "n and d must be >= 1");
    if (!(margin >= 0 && margin <= 0.5))
        return dpc_error_param(err, DPC_E_INVALID, "margin", "must be in [0, 0.5], got %g", margin);
    if (stream_index > UINT32_MAX)
        return dpc_error_param(err, DPC_E_RANGE, "kan_synth", "stream_index exceeds 2^32 - 1");
    dpc_dataset *ds = NULL;
    dpc_status st = dpc_dataset_new(&ds, n, d, 2, err);
    if (st) return st;
    ds->truth = dpc__calloc(d, sizeof *ds->truth);
    double *g = dpc__malloc_array(d, sizeof *g);
    if (!ds->truth || !g) {
        free(g);
        dpc_dataset_free(ds);
        return DPC__NOMEM(err, "synthetic data");
    }
    double wn = 0.0;
    for (size_t j = 0; j < d; j++) {
        double w = w_star ? w_star[j] : (j == 0 ? 1.0 : 0.0);
        if (!isfinite(w)) {
            free(g);
            dpc_dataset_free(ds);
            return dpc_error_set(err, DPC_E_INVALID, "w_star[%zu] is not finite", j);
        }
        ds->truth[j] = w;
        wn += w * w;
    }
    if (!(wn > 0)) {
        free(g);
        dpc_dataset_free(ds);
        return dpc_error_param(err, DPC_E_INVALID, "w_star", "must not be zero");
    }
    wn = sqrt(wn);
    for (size_t j = 0; j < d; j++) ds->truth[j] /= wn;
    dpc_rng_stream s = dpc_rng_stream_derive(rng, DPC_STREAM_ID(DPC_STREAM_DATA, stream_index));
    for (size_t i = 0; i < n; i++) {
        double *x = ds->x + i * d;
        size_t a = 0;
        for (;; a++) {
            if (a == SYNTH_MAX_ATTEMPTS) {
                free(g);
                dpc_dataset_free(ds);
                return dpc_error_param(err, DPC_E_NUMERIC, "kan_synth",
                                     "example %zu: no draw with margin %g in %d "
                                     "attempts", i, margin, SYNTH_MAX_ATTEMPTS);
            }
            uint64_t base = (uint64_t)a * (d + 1);
            double gn = 0.0;
            for (size_t j = 0; j < d; j++) {
                g[j] = dpc_rng_gaussian(&s, i, base + j);
                gn += g[j] * g[j];
            }
            gn = sqrt(gn);
            if (!(gn > 0)) continue;
            double r = pow(dpc_rng_uniform(&s, i, base + d), 1.0 / (double)d);
            double dot = 0.0;
            for (size_t j = 0; j < d; j++) {
                x[j] = r * g[j] / gn;
                dot += ds->truth[j] * x[j];
            }
            if (fabs(dot) >= margin && dot != 0.0) {
                ds->y[i] = dot > 0 ? 1.0 : 0.0;
                break;
            }
        }
    }
    free(g);
    ds->x_norm_bound = 1.0;
    snprintf(ds->source, sizeof ds->source, "kan-synth:n=%zu,d=%zu,margin=%g", n, d, margin);
    *out = ds;
    return DPC_OK;
}
