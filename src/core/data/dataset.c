/* dataset.c — the dataset object: allocation, validation, selection/splitting and the row
 * preprocessing steps (see dpcorr/data.h for which are data-independent). */
#include "data/internal.h"
#include "common/util.h"
#include "dpcorr/io.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ==== Object ================================================================================ */

dpc_status dpc_dataset_new(dpc_dataset **out, size_t n, size_t d, size_t n_classes, dpc_error *err)
{
    if (!out) return dpc_error_param(err, DPC_E_INVALID, "out", "NULL");
    *out = NULL;
    if (d == 0) return dpc_error_param(err, DPC_E_INVALID, "d", "must be >= 1");
    if (n_classes > DPC_DATA_MAX_CLASSES)
        return dpc_error_param(err, DPC_E_RANGE, "n_classes", "%zu classes exceed the limit %d",
                               n_classes, DPC_DATA_MAX_CLASSES);
    if (d > DPC_DATA_MAX_FEATURES)
        return dpc_error_param(err, DPC_E_RANGE, "d", "%zu features, at most %zu supported", d,
                               (size_t)DPC_DATA_MAX_FEATURES);
    size_t nd, bytes;
    if (!dpc__mul_ok(n, d, &nd) || !dpc__mul_ok(nd, sizeof(double), &bytes))
        return dpc_error_set(err, DPC_E_NOMEM,
                             "dataset: %zu x %zu features overflow the address space", n, d);
    if (nd > DPC_DATA_MAX_VALUES)
        return dpc_error_param(err, DPC_E_RANGE, "n", "%zu examples x %zu features = %zu values, "
                               "at most %zu supported (32 GB)", n, d, nd,
                               (size_t)DPC_DATA_MAX_VALUES);
    dpc_dataset *ds = calloc(1, sizeof *ds);
    if (!ds) return DPC__NOMEM(err, "dataset");
    ds->x = dpc__calloc(nd, sizeof(double));
    ds->y = dpc__calloc(n, sizeof(double));
    if (!ds->x || !ds->y) {
        dpc_dataset_free(ds);
        return dpc_error_set(err, DPC_E_NOMEM, "out of memory allocating a %zu x %zu dataset", n,
                             d);
    }
    ds->n = n;
    ds->d = d;
    ds->n_classes = n_classes;
    *out = ds;
    return DPC_OK;
}

void dpc_dataset_free(dpc_dataset *ds)
{
    if (!ds) return;
    free(ds->x);
    free(ds->y);
    free(ds->truth);
    free(ds->cov_diag);
    free(ds);
}

/* One 64-bit word into the hash: FNV-1a's xor-multiply on whole words, then a final avalanche
 * (splitmix64) so that every input bit reaches every output bit. */
static uint64_t hash_word(uint64_t h, uint64_t w) { return (h ^ w) * 0x100000001b3ull; }

static uint64_t hash_doubles(uint64_t h, const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t w;
        memcpy(&w, &v[i], sizeof w);
        h = hash_word(h, w);
    }
    return h;
}

uint64_t dpc_dataset_hash_begin(size_t n, size_t d, size_t n_classes)
{
    uint64_t h = 0xcbf29ce484222325ull;
    h = hash_word(h, (uint64_t)n);
    h = hash_word(h, (uint64_t)d);
    return hash_word(h, (uint64_t)n_classes);
}

uint64_t dpc_dataset_hash_add(uint64_t h, const double *v, size_t count)
{
    return v ? hash_doubles(h, v, count) : h;
}

uint64_t dpc_dataset_hash(const dpc_dataset *ds)
{
    if (!ds) return 0;
    uint64_t h = dpc_dataset_hash_begin(ds->n, ds->d, ds->n_classes);
    if (ds->x) h = hash_doubles(h, ds->x, ds->n * ds->d);
    if (ds->y) h = hash_doubles(h, ds->y, ds->n);
    return dpc_dataset_hash_end(h);
}

uint64_t dpc_dataset_hash_end(uint64_t h)
{
    h ^= h >> 30;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 27;
    h *= 0x94D049BB133111EBull;
    return h ^ (h >> 31);
}

dpc_status dpc_dataset_check(const dpc_dataset *ds, dpc_error *err)
{
    if (!ds) return dpc_error_set(err, DPC_E_INVALID, "dataset is NULL");
    const char *src = ds->source[0] ? ds->source : "dataset";
    if (ds->n == 0) return dpc_error_set(err, DPC_E_INVALID, "%s: no examples", src);
    if (ds->d == 0 || !ds->x || !ds->y)
        return dpc_error_set(err, DPC_E_INVALID, "%s: no features", src);
    for (size_t i = 0; i < ds->n; i++) {
        const double *row = ds->x + i * ds->d;
        for (size_t j = 0; j < ds->d; j++)
            if (!isfinite(row[j]))
                return dpc_error_set(err, DPC_E_NUMERIC, "%s: example %zu feature %zu is %g", src,
                                     i, j, row[j]);
        double yi = ds->y[i];
        if (!isfinite(yi))
            return dpc_error_set(err, DPC_E_NUMERIC, "%s: example %zu target is %g", src, i, yi);
        if (ds->n_classes && (yi != floor(yi) || yi < 0 || yi >= (double)ds->n_classes))
            return dpc_error_set(err, DPC_E_INVALID,
                                 "%s: example %zu label %.17g is not a class in 0..%zu", src, i, yi,
                                 ds->n_classes - 1);
        if (ds->x_norm_bound > 0) {
            double nr = dpc__norm2(row, ds->d);
            if (nr > ds->x_norm_bound * (1 + 1e-12))
                return dpc_error_set(err, DPC_E_INVALID,
                                     "%s: example %zu has norm %.17g above the bound %.17g", src, i,
                                     nr, ds->x_norm_bound);
        }
    }
    return DPC_OK;
}

dpc_status dpc_dataset_check_compatible(const dpc_dataset *train, const dpc_dataset *test,
                                        dpc_error *err)
{
    if (!train || !test) return dpc_error_set(err, DPC_E_INVALID, "dataset is NULL");
    if (train->d != test->d)
        return dpc_error_set(err, DPC_E_FORMAT,
                             "dimension mismatch: train %s has %zu features, test %s has %zu",
                             train->source, train->d, test->source, test->d);
    if ((train->n_classes == 0) != (test->n_classes == 0))
        return dpc_error_set(err, DPC_E_FORMAT, "task mismatch: train %s is %s, test %s is %s",
                             train->source, train->n_classes ? "classification" : "regression",
                             test->source, test->n_classes ? "classification" : "regression");
    if (train->n_classes) {
        for (size_t i = 0; i < test->n; i++)
            if (test->y[i] >= (double)train->n_classes)
                return dpc_error_set(err, DPC_E_FORMAT,
                                     "test %s: example %zu has label %.17g but train %s has "
                                     "%zu classes",
                                     test->source, i, test->y[i], train->source, train->n_classes);
    }
    return DPC_OK;
}

/* Copies the metadata (not x/y) of src into dst, which has the same d. */
static dpc_status copy_meta(dpc_dataset *dst, const dpc_dataset *src, dpc_error *err)
{
    dst->x_norm_bound = src->x_norm_bound;
    memcpy(dst->shape, src->shape, sizeof dst->shape);
    dst->data_dependent = src->data_dependent;
    memcpy(dst->source, src->source, sizeof dst->source);
    memcpy(dst->preprocessing, src->preprocessing, sizeof dst->preprocessing);
    dst->n_releases = src->n_releases;
    memcpy(dst->release_z, src->release_z, sizeof dst->release_z);
    if (src->truth) {
        dst->truth = dpc__malloc_array(src->d, sizeof(double));
        if (!dst->truth) return DPC__NOMEM(err, "ground truth");
        memcpy(dst->truth, src->truth, src->d * sizeof(double));
    }
    if (src->cov_diag) {
        dst->cov_diag = dpc__malloc_array(src->d, sizeof(double));
        if (!dst->cov_diag) return DPC__NOMEM(err, "covariance diagonal");
        memcpy(dst->cov_diag, src->cov_diag, src->d * sizeof(double));
    }
    return DPC_OK;
}

dpc_status dpc_dataset_select(dpc_dataset **out, const dpc_dataset *ds, const size_t *idx, size_t m,
                              dpc_error *err)
{
    if (!out) return dpc_error_param(err, DPC_E_INVALID, "out", "NULL");
    *out = NULL;
    if (!ds || (m && !idx)) return dpc_error_set(err, DPC_E_INVALID, "select: NULL argument");
    for (size_t k = 0; k < m; k++)
        if (idx[k] >= ds->n)
            return dpc_error_param(err, DPC_E_INVALID, "idx", "entry %zu is %zu, but n = %zu", k,
                                   idx[k], ds->n);
    dpc_dataset *s = NULL;
    dpc_status st = dpc_dataset_new(&s, m, ds->d, ds->n_classes, err);
    if (st) return st;
    st = copy_meta(s, ds, err);
    if (st) {
        dpc_dataset_free(s);
        return st;
    }
    for (size_t k = 0; k < m; k++) {
        memcpy(s->x + k * ds->d, ds->x + idx[k] * ds->d, ds->d * sizeof(double));
        s->y[k] = ds->y[idx[k]];
    }
    *out = s;
    return DPC_OK;
}

dpc_status dpc_dataset_split(dpc_dataset **first, dpc_dataset **second, const dpc_dataset *ds,
                             size_t n_first, const dpc_rng *rng, uint64_t stream_index,
                             dpc_error *err)
{
    if (first) *first = NULL;
    if (second) *second = NULL;
    if (!ds) return dpc_error_set(err, DPC_E_INVALID, "split: dataset is NULL");
    if (n_first > ds->n)
        return dpc_error_param(err, DPC_E_INVALID, "n_first", "%zu exceeds n = %zu", n_first,
                               ds->n);
    if (rng && stream_index > UINT32_MAX)
        return dpc_error_param(err, DPC_E_INVALID, "stream_index", "%llu must be < 2^32",
                               (unsigned long long)stream_index);
    size_t n = ds->n;
    size_t *perm = dpc__malloc_array(n, sizeof *perm);
    unsigned char *in_first = dpc__calloc(n, 1);
    if (!perm || !in_first) {
        free(perm);
        free(in_first);
        return DPC__NOMEM(err, "split permutation");
    }
    for (size_t i = 0; i < n; i++) perm[i] = i;
    if (rng) {
        /* Partial Fisher-Yates: position i < n_first receives a uniform pick from [i, n). */
        dpc_rng_stream s = dpc_rng_stream_derive(rng, DPC_STREAM_ID(DPC_STREAM_DATA, stream_index));
        for (size_t i = 0; i < n_first && i + 1 < n; i++) {
            size_t j = i + (size_t)dpc_rng_below(&s, DPC_DATA_SPLIT_ROW, i, n - i);
            size_t t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
    }
    for (size_t i = 0; i < n_first; i++) in_first[perm[i]] = 1;
    /* Both parts in original order: rebuild the index lists from the mask. */
    size_t a = 0, b = n_first;
    for (size_t i = 0; i < n; i++) {
        if (in_first[i])
            perm[a++] = i;
        else
            perm[b++] = i;
    }
    free(in_first);
    dpc_status st = DPC_OK;
    dpc_dataset *f = NULL, *g = NULL;
    if (first) st = dpc_dataset_select(&f, ds, perm, n_first, err);
    if (!st && second) st = dpc_dataset_select(&g, ds, perm + n_first, n - n_first, err);
    free(perm);
    if (st) {
        dpc_dataset_free(f);
        dpc_dataset_free(g);
        return st;
    }
    if (first) *first = f;
    if (second) *second = g;
    return DPC_OK;
}

/* ==== Preprocessing ========================================================================= */

static dpc_status need_finite_rows(const dpc_dataset *ds, const char *what, dpc_error *err)
{
    size_t nd = ds->n * ds->d;
    for (size_t k = 0; k < nd; k++)
        if (!isfinite(ds->x[k]))
            return dpc_error_set(err, DPC_E_NUMERIC, "%s: example %zu feature %zu is %g", what,
                                 k / ds->d, k % ds->d, ds->x[k]);
    return DPC_OK;
}

dpc_status dpc_dataset_scale(dpc_dataset *ds, double c, dpc_error *err)
{
    if (!ds) return dpc_error_set(err, DPC_E_INVALID, "scale: dataset is NULL");
    if (!isfinite(c) || c == 0)
        return dpc_error_param(err, DPC_E_INVALID, "c", "the factor %g must be finite and non-zero",
                               c);
    size_t nd = ds->n * ds->d;
    for (size_t k = 0; k < nd; k++) ds->x[k] *= c;
    if (ds->x_norm_bound > 0) ds->x_norm_bound *= fabs(c) * (1 + 0x1p-50);
    dpc__dataset_note(ds, 0, "features * %.17g", c);
    return DPC_OK;
}

/* Scales row (d) by radius/norm and nudges it down until its computed norm is <= radius. */
static void scale_row_to(double *row, size_t d, double norm, double radius)
{
    double f = radius / norm;
    for (size_t j = 0; j < d; j++) row[j] *= f;
    for (int it = 0; it < 8 && dpc__norm2(row, d) > radius; it++)
        for (size_t j = 0; j < d; j++) row[j] *= 1 - 0x1p-52;
}

dpc_status dpc_dataset_clip_rows(dpc_dataset *ds, double radius, dpc_error *err)
{
    if (!ds) return dpc_error_set(err, DPC_E_INVALID, "clip: dataset is NULL");
    if (!isfinite(radius) || !(radius > 0))
        return dpc_error_set(err, DPC_E_INVALID, "clip: radius %g must be positive and finite",
                             radius);
    dpc_status st = need_finite_rows(ds, "clip", err);
    if (st) return st;
    for (size_t i = 0; i < ds->n; i++) {
        double *row = ds->x + i * ds->d;
        double nr = dpc__norm2(row, ds->d);
        if (nr > radius) scale_row_to(row, ds->d, nr, radius);
    }
    if (!(ds->x_norm_bound > 0) || ds->x_norm_bound > radius) ds->x_norm_bound = radius;
    dpc__dataset_note(ds, 0, "rows clipped to L2 norm %.17g", radius);
    return DPC_OK;
}

dpc_status dpc_dataset_normalize_rows(dpc_dataset *ds, double radius, dpc_error *err)
{
    if (!ds) return dpc_error_set(err, DPC_E_INVALID, "normalize: dataset is NULL");
    if (!isfinite(radius) || !(radius > 0))
        return dpc_error_param(err, DPC_E_INVALID, "radius", "%g must be positive and finite",
                               radius);
    dpc_status st = need_finite_rows(ds, "normalize", err);
    if (st) return st;
    for (size_t i = 0; i < ds->n; i++) {
        double *row = ds->x + i * ds->d;
        double nr = dpc__norm2(row, ds->d);
        if (nr > 0) scale_row_to(row, ds->d, nr, radius);
    }
    ds->x_norm_bound = radius;
    dpc__dataset_note(ds, 0, "rows normalised to L2 norm %.17g", radius);
    return DPC_OK;
}

dpc_status dpc_dataset_set_classes(dpc_dataset *ds, size_t n_classes, dpc_error *err)
{
    if (!ds) return dpc_error_set(err, DPC_E_INVALID, "set_classes: dataset is NULL");
    if (ds->n_classes == 0)
        return dpc_error_set(err, DPC_E_INVALID,
                             "set_classes: %s is a regression set (targets are not classes)",
                             ds->source);
    if (n_classes == 0 || n_classes > DPC_DATA_MAX_CLASSES)
        return dpc_error_param(err, DPC_E_INVALID, "n_classes", "%zu not in 1..%d", n_classes,
                               DPC_DATA_MAX_CLASSES);
    for (size_t i = 0; i < ds->n; i++) {
        double yi = ds->y[i];
        if (!(yi >= 0) || yi != floor(yi) || yi >= (double)n_classes)
            return dpc_error_set(err, DPC_E_INVALID,
                                 "set_classes: %s: example %zu has label %.17g, not in 0..%zu",
                                 ds->source, i, yi, n_classes - 1);
    }
    if (ds->n_classes != n_classes) dpc__dataset_note(ds, 0, "classes = %zu", n_classes);
    ds->n_classes = n_classes;
    return DPC_OK;
}

dpc_status dpc_dataset_standardize(dpc_dataset *train, dpc_dataset *test, dpc_error *err)
{
    if (!train) return dpc_error_set(err, DPC_E_INVALID, "standardize: train is NULL");
    if (train->n < 2)
        return dpc_error_param(err, DPC_E_INVALID, "train",
                               "standardizing needs at least 2 examples");
    if (test && test->d != train->d)
        return dpc_error_set(err, DPC_E_FORMAT,
                             "standardize: dimension mismatch: train has %zu features, test %zu",
                             train->d, test->d);
    dpc_status st = need_finite_rows(train, "standardize", err);
    if (!st && test) st = need_finite_rows(test, "standardize (test)", err);
    if (st) return st;
    size_t d = train->d, n = train->n;
    double *mu = dpc__calloc(d, sizeof *mu), *sd = dpc__calloc(d, sizeof *sd);
    if (!mu || !sd) {
        free(mu);
        free(sd);
        return DPC__NOMEM(err, "standardisation statistics");
    }
    /* Two-pass mean and variance, fixed order. */
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < d; j++) mu[j] += train->x[i * d + j];
    for (size_t j = 0; j < d; j++) mu[j] /= (double)n;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < d; j++) {
            double t = train->x[i * d + j] - mu[j];
            sd[j] += t * t;
        }
    for (size_t j = 0; j < d; j++) sd[j] = sqrt(sd[j] / (double)(n - 1));
    dpc_dataset *sets[2] = {train, test};
    for (int s = 0; s < 2; s++) {
        dpc_dataset *ds = sets[s];
        if (!ds) continue;
        for (size_t i = 0; i < ds->n; i++)
            for (size_t j = 0; j < d; j++) {
                double *v = &ds->x[i * d + j];
                *v -= mu[j];
                if (sd[j] > 0) *v /= sd[j];
            }
        ds->x_norm_bound = 0;
        dpc__dataset_note(ds, 1, "standardised with train mean/std");
    }
    free(mu);
    free(sd);
    return DPC_OK;
}

void dpc_dataset_report_json(dpc_json_writer *w, const char *spec, const dpc_dataset *train,
                             const dpc_dataset *test)
{
    dpc_json_obj(w, "data");
    dpc_json_str(w, "spec", spec ? spec : "");
    dpc_json_str(w, "source", train->source);
    dpc_json_int(w, "n_train", (long long)dpc_dataset_rows(train));
    dpc_json_int(w, "n_test", test ? (long long)test->n : 0);
    dpc_json_int(w, "features", (long long)train->d);
    dpc_json_int(w, "classes", (long long)train->n_classes);
    dpc_json_str(w, "preprocessing", train->preprocessing);
    dpc_json_bool(w, "data_dependent_preprocessing", train->data_dependent);
    dpc_json_end(w);
}
