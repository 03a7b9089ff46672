/* normalize.c — normalisations of feature datasets (dpcorr/features.h): the per-example
 * GroupNorm (data-independent) and the private centering (the mean half of Tramer & Boneh's
 * "DataNorm", released by the Gaussian mechanism and recorded on the dataset). */
#include "dpcorr/features.h"
#include "common/util.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GN_EPS 1e-5 /* as the model's GroupNorm layer (model.h) */

/* Appends "; <text>" (or "<text>") to ds->preprocessing; truncation is harmless. */
static void note(dpc_dataset *ds, const char *fmt, ...) DPC_PRINTF(2, 3);
static void note(dpc_dataset *ds, const char *fmt, ...)
{
    size_t len = strlen(ds->preprocessing), cap = sizeof ds->preprocessing;
    if (len + 3 >= cap) return;
    if (len) {
        memcpy(ds->preprocessing + len, "; ", 3);
        len += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    int wr = vsnprintf(ds->preprocessing + len, cap - len, fmt, ap);
    va_end(ap);
    (void)wr;
}

/* One example's GroupNorm in place: x (G, m), each group standardised by its own mean and
 * (population) variance, in a fixed order. */
static void gn_row(double *x, size_t G, size_t m)
{
    for (size_t g = 0; g < G; g++) {
        double *v = x + g * m, s = 0.0, ss = 0.0;
        for (size_t k = 0; k < m; k++) s += v[k];
        double mean = s / (double)m;
        for (size_t k = 0; k < m; k++) ss += (v[k] - mean) * (v[k] - mean);
        double inv = 1.0 / sqrt(ss / (double)m + GN_EPS);
        for (size_t k = 0; k < m; k++) v[k] = (v[k] - mean) * inv;
    }
}

/* Euclidean norm in a fixed order (rows here are of moderate size: GroupNorm output). */
static double norm2(const double *v, size_t n)
{
    double s = 0.0;
    for (size_t k = 0; k < n; k++) s += v[k] * v[k];
    return sqrt(s);
}

dpc_status dpc_features_group_norm(dpc_dataset *ds, size_t groups, dpc_error *err)
{
    if (!ds) return dpc_error_param(err, DPC_E_INVALID, "ds", "NULL");
    size_t C = ds->shape[0], HW = ds->shape[1] * ds->shape[2];
    if (!C || !HW || C * HW != ds->d)
        return dpc_error_param(err, DPC_E_INVALID, "ds",
                               "%s has no channel shape (C x H x W) to group", ds->source);
    if (groups < 1 || C % groups != 0)
        return dpc_error_param(err, DPC_E_INVALID, "groups",
                               "must divide the %zu channels, got %zu", C, groups);
    size_t m = C / groups * HW;
    for (size_t i = 0; i < ds->n; i++)
        for (size_t k = 0; k < ds->d; k++)
            if (!isfinite(ds->x[i * ds->d + k]))
                return dpc_error_param(err, DPC_E_INVALID, "ds",
                                       "x[%zu][%zu] is not finite", i, k);
    /* DP-REQ: gn-bound: each group of m values has sum of squares m v / (v + eps) < m after
     * standardisation, so ||x_i|| < sqrt(d) exactly; rows computed slightly above it by
     * rounding are scaled onto the bound (and nudged below it), so the public bound
     * x_norm_bound = sqrt(d) holds for the values stored. */
    double R = sqrt((double)ds->d);
    for (size_t i = 0; i < ds->n; i++) {
        double *x = ds->x + i * ds->d;
        gn_row(x, groups, m);
        double nr = norm2(x, ds->d);
        for (int it = 0; it < 64 && nr > R; it++) {
            double s = R / nr * (1.0 - 1e-15 * (double)(it + 1));
            for (size_t k = 0; k < ds->d; k++) x[k] *= s;
            nr = norm2(x, ds->d);
        }
    }
    ds->x_norm_bound = R;
    note(ds, "per-example GroupNorm, %zu groups (rows within L2 norm %.17g)", groups, R);
    return DPC_OK;
}

static dpc_status center_check(const dpc_dataset *train, const dpc_dataset *test, double z,
                               const dpc_rng *rng, dpc_error *err)
{
    if (!train) return dpc_error_param(err, DPC_E_INVALID, "train", "NULL");
    if (!rng) return dpc_error_param(err, DPC_E_INVALID, "rng", "NULL");
    if (!(z > 0) || !isfinite(z))
        return dpc_error_param(err, DPC_E_INVALID, "noise_multiplier",
                               "must be a finite number > 0, got %g", z);
    if (!(train->x_norm_bound > 0) || !isfinite(train->x_norm_bound))
        return dpc_error_param(err, DPC_E_INVALID, "train",
                               "%s has no public bound on its rows' norms (x_norm_bound); "
                               "normalise or clip the rows first", train->source);
    if (train->n == 0) return dpc_error_param(err, DPC_E_INVALID, "train", "no examples");
    if (train->n_releases >= DPC_DATA_MAX_RELEASES)
        return dpc_error_param(err, DPC_E_RANGE, "train",
                               "already holds %d private releases", DPC_DATA_MAX_RELEASES);
    if (test && test->d != train->d)
        return dpc_error_param(err, DPC_E_INVALID, "test", "has %zu features, train %zu",
                               test->d, train->d);
    return DPC_OK;
}

dpc_status dpc_features_center_private(dpc_dataset *train, dpc_dataset *test,
                                       double noise_multiplier, const dpc_rng *rng, double *mean,
                                       dpc_error *err)
{
    dpc_status st = center_check(train, test, noise_multiplier, rng, err);
    if (!st) st = dpc_rng_check(rng, err); /* a never-seeded key makes public noise */
    if (st) return st;
    size_t n = train->n, d = train->d;
    double R = train->x_norm_bound;
    double *mu = dpc__calloc(d, sizeof *mu), *g = dpc__malloc_array(d, sizeof *g);
    if (!mu || !g) {
        free(mu);
        free(g);
        return DPC__NOMEM(err, "private mean");
    }
    /* DP-REQ: private-mean: the sum of the rows has L2 sensitivity R = x_norm_bound (one row
     * added, removed or zeroed moves it by ||x_i|| <= R); adding N(0, (z R)^2) per coordinate
     * is the Gaussian mechanism with noise multiplier z. Dividing by n (public, as everywhere
     * in the trainer: q = B / n) and subtracting are post-processing. */
    for (size_t i = 0; i < n; i++) {
        const double *x = train->x + i * d;
        for (size_t k = 0; k < d; k++) mu[k] += x[k];
    }
    dpc_rng_stream s = dpc_rng_stream_derive(rng, DPC_STREAM_ID(DPC_STREAM_STAT, 0));
    dpc_rng_gaussian_fill(&s, 0, 0, g, d);
    for (size_t k = 0; k < d; k++) mu[k] = (mu[k] + noise_multiplier * R * g[k]) / (double)n;
    free(g);
    dpc_dataset *sets[2] = {train, test};
    for (int t = 0; t < 2; t++) {
        dpc_dataset *ds = sets[t];
        if (!ds) continue;
        for (size_t i = 0; i < ds->n; i++)
            for (size_t k = 0; k < d; k++) ds->x[i * d + k] -= mu[k];
        ds->x_norm_bound = 0.0; /* ||x - mu|| <= R + ||mu||, not tracked */
    }
    train->release_z[train->n_releases++] = noise_multiplier;
    note(train, "centred by its private mean (Gaussian, noise multiplier %.17g, sensitivity "
                "%.17g)", noise_multiplier, R);
    if (test) note(test, "centred by the training set's private mean");
    if (mean) memcpy(mean, mu, d * sizeof *mean);
    free(mu);
    return DPC_OK;
}
