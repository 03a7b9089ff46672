/* synth.c — synthetic datasets: Gaussian linear regression with a chosen spectrum, bounded mean
 * estimation, separable logistic data with a margin. Each is a pure function of (rng key,
 * stream, parameters): example i draws only from counter row i (see dpcorr/data.h). */
#include "data/internal.h"
#include "common/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Common argument checks and stream derivation. */
static dpc_status synth_begin(const char *what, const dpc_rng *rng, uint64_t stream_index, size_t n,
                              size_t d, dpc_rng_stream *s, dpc_error *err)
{
    if (!rng) return dpc_error_set(err, DPC_E_INVALID, "%s: rng is NULL", what);
    if (stream_index > UINT32_MAX)
        return dpc_error_set(err, DPC_E_INVALID, "%s: stream index %llu must be < 2^32", what,
                             (unsigned long long)stream_index);
    if (n == 0) return dpc_error_set(err, DPC_E_INVALID, "%s: n must be >= 1", what);
    if (d == 0) return dpc_error_set(err, DPC_E_INVALID, "%s: d must be >= 1", what);
    if (d >= ((uint64_t)1 << 48))
        return dpc_error_set(err, DPC_E_RANGE, "%s: d = %zu too large", what, d);
    *s = dpc_rng_stream_derive(rng, DPC_STREAM_ID(DPC_STREAM_DATA, stream_index));
    return DPC_OK;
}

static dpc_status check_vec(const char *what, const char *name, const double *v, size_t d,
                            dpc_error *err)
{
    for (size_t j = 0; j < d; j++)
        if (!isfinite(v[j]))
            return dpc_error_set(err, DPC_E_INVALID, "%s: %s[%zu] = %g is not finite", what, name,
                                 j, v[j]);
    return DPC_OK;
}

/* Allocates ds->truth (and optionally ds->cov_diag). */
static dpc_status alloc_truth(dpc_dataset *ds, int cov, dpc_error *err)
{
    ds->truth = dpc__calloc(ds->d, sizeof(double));
    if (cov) ds->cov_diag = dpc__calloc(ds->d, sizeof(double));
    if (!ds->truth || (cov && !ds->cov_diag)) return DPC__NOMEM(err, "ground truth");
    return DPC_OK;
}

static const char *seed_desc(const dpc_rng *rng, char *buf, size_t cap)
{
    if (rng->mode == DPC_RNG_SEEDED)
        snprintf(buf, cap, "seed=%llu", (unsigned long long)rng->seed);
    else
        snprintf(buf, cap, "secure-key");
    return buf;
}

void dpc_data_spectrum_power(double *lambda, size_t d, double alpha)
{
    for (size_t k = 0; k < d; k++) lambda[k] = pow((double)(k + 1), -alpha);
}

/* ==== Linear regression ===================================================================== */

/* The rows of the window w (NULL: all n) as a dataset: row i of it is example w->first + i of
 * the set of n (its own counter row), a shard of it when the window is a proper part. */
static dpc_status window_new(dpc_dataset **ds, size_t n, size_t d, size_t k, const dpc__rows *w,
                             size_t *first, dpc_error *err)
{
    size_t f = w ? w->first : 0, m = w && w->count ? w->count : n - f;
    *first = f;
    if (f > n || m > n - f)
        return dpc_error_param(err, DPC_E_RANGE, "first", "rows %zu..+%zu of %zu", f, m, n);
    dpc_status st = dpc_dataset_new(ds, m, d, k, err);
    if (!st && m < n) {
        (*ds)->shard_first = f;
        (*ds)->shard_total = n;
    }
    return st;
}

dpc_status dpc__synth_linreg(dpc_dataset **out, const dpc_rng *rng, uint64_t stream_index,
                             size_t n, size_t d, const double *lambda, double noise_std,
                             const double *w_star, const char *spectrum_desc, const dpc__rows *w,
                             dpc_error *err)
{
    size_t r0;
    const char *what = "synthetic linreg";
    dpc_rng_stream s;
    dpc_status st = synth_begin(what, rng, stream_index, n, d, &s, err);
    if (st) return st;
    if (!isfinite(noise_std) || noise_std < 0)
        return dpc_error_set(err, DPC_E_INVALID, "%s: noise std %g must be finite and >= 0", what,
                             noise_std);
    for (size_t k = 0; k < d; k++)
        if (!isfinite(lambda[k]) || !(lambda[k] > 0))
            return dpc_error_set(err, DPC_E_INVALID, "%s: lambda[%zu] = %g must be positive", what,
                                 k, lambda[k]);
    if (w_star && (st = check_vec(what, "w_star", w_star, d, err))) return st;
    dpc_dataset *ds = NULL;
    st = window_new(&ds, n, d, 0, w, &r0, err);
    if (!st) st = alloc_truth(ds, 1, err);
    size_t zlen = 2 * d + 1; /* d + 1 normals, then sqrt(lambda) (d < 2^48: no overflow) */
    double *z = st ? NULL : dpc__malloc_array(zlen, sizeof *z);
    if (!st && !z) st = DPC__NOMEM(err, "synthetic row");
    if (st) {
        dpc_dataset_free(ds);
        return st;
    }
    double inv = 1.0 / sqrt((double)d), *sq = z + d + 1;
    for (size_t k = 0; k < d; k++) {
        ds->truth[k] = w_star ? w_star[k] : inv;
        ds->cov_diag[k] = lambda[k];
        sq[k] = sqrt(lambda[k]);
    }
    for (size_t i = 0; i < ds->n; i++) {
        dpc_rng_gaussian_fill(&s, r0 + i, 0, z, d + 1);
        double *x = ds->x + i * d, dot = 0;
        for (size_t k = 0; k < d; k++) {
            x[k] = sq[k] * z[k];
            dot += ds->truth[k] * x[k];
        }
        ds->y[i] = dot + noise_std * z[d];
    }
    free(z);
    char sd[48];
    dpc__dataset_source(ds, "synthetic:linreg,n=%zu,d=%zu,%s,noise=%.17g,stream=%llu,%s", n, d,
                        spectrum_desc, noise_std, (unsigned long long)stream_index,
                        seed_desc(rng, sd, sizeof sd));
    if (w_star) dpc__dataset_note(ds, 0, "w* given");
    *out = ds;
    return DPC_OK;
}

dpc_status dpc_data_synth_linreg(dpc_dataset **out, const dpc_rng *rng, uint64_t stream_index,
                                 size_t n, size_t d, double alpha, double noise_std,
                                 const double *w_star, dpc_error *err)
{
    if (!out) return dpc_error_set(err, DPC_E_INVALID, "synthetic linreg: out is NULL");
    *out = NULL;
    if (!isfinite(alpha) || alpha < 0)
        return dpc_error_set(err, DPC_E_INVALID,
                             "synthetic linreg: alpha %g must be finite and >= 0", alpha);
    if (d == 0 || d >= ((size_t)1 << 48))
        return dpc_error_set(err, DPC_E_INVALID, "synthetic linreg: d = %zu out of range", d);
    double *lambda = dpc__malloc_array(d, sizeof *lambda);
    if (!lambda) return DPC__NOMEM(err, "spectrum");
    dpc_data_spectrum_power(lambda, d, alpha);
    char desc[48];
    snprintf(desc, sizeof desc, "alpha=%.17g", alpha);
    dpc_status st =
        dpc__synth_linreg(out, rng, stream_index, n, d, lambda, noise_std, w_star, desc, NULL, err);
    free(lambda);
    return st;
}

dpc_status dpc_data_synth_linreg_spectrum(dpc_dataset **out, const dpc_rng *rng,
                                          uint64_t stream_index, size_t n, size_t d,
                                          const double *lambda, double noise_std,
                                          const double *w_star, dpc_error *err)
{
    if (!out) return dpc_error_set(err, DPC_E_INVALID, "synthetic linreg: out is NULL");
    *out = NULL;
    if (!lambda) return dpc_error_set(err, DPC_E_INVALID, "synthetic linreg: lambda is NULL");
    if (d == 0) return dpc_error_set(err, DPC_E_INVALID, "synthetic linreg: d must be >= 1");
    char desc[64];
    snprintf(desc, sizeof desc, "spectrum=%.6g..%.6g", lambda[0], lambda[d - 1]);
    return dpc__synth_linreg(out, rng, stream_index, n, d, lambda, noise_std, w_star, desc, NULL,
                             err);
}

/* ==== Mean estimation ======================================================================= */

dpc_status dpc_data_synth_mean(dpc_dataset **out, const dpc_rng *rng, uint64_t stream_index,
                               size_t n, size_t d, const double *mean, double spread, double radius,
                               dpc_error *err)
{
    return dpc__synth_mean(out, rng, stream_index, n, d, mean, spread, radius, NULL, err);
}

dpc_status dpc__synth_mean(dpc_dataset **out, const dpc_rng *rng, uint64_t stream_index, size_t n,
                           size_t d, const double *mean, double spread, double radius,
                           const dpc__rows *w, dpc_error *err)
{
    const char *what = "synthetic mean";
    size_t r0;
    if (!out) return dpc_error_set(err, DPC_E_INVALID, "%s: out is NULL", what);
    *out = NULL;
    dpc_rng_stream s;
    dpc_status st = synth_begin(what, rng, stream_index, n, d, &s, err);
    if (st) return st;
    if (!isfinite(radius) || !(radius > 0))
        return dpc_error_set(err, DPC_E_INVALID, "%s: radius %g must be positive and finite", what,
                             radius);
    if (!isfinite(spread) || spread < 0)
        return dpc_error_set(err, DPC_E_INVALID, "%s: spread %g must be finite and >= 0", what,
                             spread);
    if (mean && (st = check_vec(what, "mean", mean, d, err))) return st;
    dpc_dataset *ds = NULL;
    st = window_new(&ds, n, d, 0, w, &r0, err);
    if (!st) st = alloc_truth(ds, 0, err);
    if (st) {
        dpc_dataset_free(ds);
        return st;
    }
    double def = radius / (2.0 * sqrt((double)d));
    for (size_t k = 0; k < d; k++) ds->truth[k] = mean ? mean[k] : def;
    double mnorm = dpc__norm2(ds->truth, d);
    if (mnorm + spread > radius) {
        dpc_dataset_free(ds);
        return dpc_error_set(err, DPC_E_INVALID,
                             "%s: ||mean|| + spread = %.17g + %.17g exceeds the radius %.17g", what,
                             mnorm, spread, radius);
    }
    for (size_t i = 0; i < ds->n; i++) {
        double *x = ds->x + i * d;
        dpc_rng_gaussian_fill(&s, r0 + i, 0, x, d);
        double g = dpc__norm2(x, d);
        if (g == 0) { /* probability 0; keep the law symmetric enough: take e_1 */
            x[0] = 1;
            g = 1;
        }
        for (size_t k = 0; k < d; k++) x[k] = ds->truth[k] + spread * (x[k] / g);
        /* Rounding may push a row a few ulps past the radius; pull it back in. */
        double nr = dpc__norm2(x, d);
        for (int it = 0; it < 8 && nr > radius; it++) {
            for (size_t k = 0; k < d; k++) x[k] *= 1 - 0x1p-52;
            nr = dpc__norm2(x, d);
        }
    }
    ds->x_norm_bound = radius;
    char sd[48];
    dpc__dataset_source(ds, "synthetic:mean,n=%zu,d=%zu,spread=%.17g,radius=%.17g,stream=%llu,%s",
                        n, d, spread, radius, (unsigned long long)stream_index,
                        seed_desc(rng, sd, sizeof sd));
    if (mean) dpc__dataset_note(ds, 0, "mean given");
    *out = ds;
    return DPC_OK;
}

/* ==== Logistic (separable with a margin) ==================================================== */

dpc_status dpc_data_synth_logistic(dpc_dataset **out, const dpc_rng *rng, uint64_t stream_index,
                                   size_t n, size_t d, double margin, double flip_prob,
                                   const double *w_star, dpc_error *err)
{
    return dpc__synth_logistic(out, rng, stream_index, n, d, margin, flip_prob, w_star, NULL, err);
}

dpc_status dpc__synth_logistic(dpc_dataset **out, const dpc_rng *rng, uint64_t stream_index,
                               size_t n, size_t d, double margin, double flip_prob,
                               const double *w_star, const dpc__rows *win, dpc_error *err)
{
    const char *what = "synthetic logistic";
    size_t r0;
    if (!out) return dpc_error_set(err, DPC_E_INVALID, "%s: out is NULL", what);
    *out = NULL;
    dpc_rng_stream s;
    dpc_status st = synth_begin(what, rng, stream_index, n, d, &s, err);
    if (st) return st;
    if (!isfinite(margin) || margin < 0)
        return dpc_error_set(err, DPC_E_INVALID, "%s: margin %g must be finite and >= 0", what,
                             margin);
    if (!(flip_prob >= 0 && flip_prob < 0.5))
        return dpc_error_set(err, DPC_E_INVALID, "%s: flip probability %g not in [0, 0.5)", what,
                             flip_prob);
    if (w_star && (st = check_vec(what, "w_star", w_star, d, err))) return st;
    double wn = w_star ? dpc__norm2(w_star, d) : 1.0;
    if (!(wn > 0) || !isfinite(wn))
        return dpc_error_set(err, DPC_E_INVALID, "%s: w_star must be non-zero", what);
    dpc_dataset *ds = NULL;
    st = window_new(&ds, n, d, 2, win, &r0, err);
    if (!st) st = alloc_truth(ds, 0, err);
    if (st) {
        dpc_dataset_free(ds);
        return st;
    }
    double *w = ds->truth, inv = 1.0 / sqrt((double)d);
    for (size_t k = 0; k < d; k++) w[k] = w_star ? w_star[k] / wn : inv;
    for (size_t i = 0; i < ds->n; i++) {
        double *x = ds->x + i * d, t = 0;
        dpc_rng_gaussian_fill(&s, r0 + i, 0, x, d);
        for (size_t k = 0; k < d; k++) t += w[k] * x[k];
        double sgn = t >= 0 ? 1.0 : -1.0;
        for (size_t k = 0; k < d; k++) x[k] += sgn * margin * w[k];
        int label = sgn > 0;
        if (flip_prob > 0 && dpc_rng_uniform(&s, r0 + i, d) < flip_prob) label = !label;
        ds->y[i] = label;
    }
    char sd[48];
    dpc__dataset_source(ds, "synthetic:logistic,n=%zu,d=%zu,margin=%.17g,flip=%.17g,stream=%llu,%s",
                        n, d, margin, flip_prob, (unsigned long long)stream_index,
                        seed_desc(rng, sd, sizeof sd));
    if (w_star) dpc__dataset_note(ds, 0, "w* given");
    *out = ds;
    return DPC_OK;
}
