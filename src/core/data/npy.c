/* npy.c — NumPy .npy files (features 2-D '<f8'/'<f4', targets 1-D) read through a memory map,
 * only the rows asked for: a shard of a file larger than memory costs its own rows. See
 * dpc_data_load_npy in dpcorr/data.h and doc/data.md. The format (numpy.lib.format): the magic
 * "\x93NUMPY", major and minor version, the header length (u16 little-endian in 1.x, u32 in
 * 2.x / 3.x), the header (a Python dict literal: 'descr', 'fortran_order', 'shape'), padded
 * with spaces and a newline, then the data in C order. */
#include "data/internal.h"
#include "common/util.h"
#include "io/mapfile.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NPY_BLOCK ((size_t)4 << 20) /* bytes of the map read before they are released */

typedef enum { T_F8, T_F4, T_I8, T_I4, T_U1, T_I1 } npy_type;
static const struct {
    const char *descr;
    size_t size;
} TYPES[] = {{"<f8", 8}, {"<f4", 4}, {"<i8", 8}, {"<i4", 4}, {"|u1", 1}, {"|i1", 1}};

typedef struct npy_file {
    const char *path;
    dpc__map map;
    npy_type type;
    size_t ndim, shape[2];
    size_t data_off; /* first byte of the data */
} npy_file;

/* ---- the header dict ---------------------------------------------------------------------- */

typedef struct hcur {
    const char *p, *end;
} hcur;

static void skip_ws(hcur *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n')) c->p++;
}

static int take(hcur *c, char ch)
{
    skip_ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return 1;
    }
    return 0;
}

/* A quoted string ('...' or "...") into out (len bytes); 0 when there is none. */
static int take_str(hcur *c, char *out, size_t len)
{
    skip_ws(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return 0;
    char q = *c->p++;
    size_t k = 0;
    while (c->p < c->end && *c->p != q) {
        if (k + 1 >= len) return 0;
        out[k++] = *c->p++;
    }
    if (c->p >= c->end) return 0;
    c->p++;
    out[k] = '\0';
    return 1;
}

/* The shape tuple "(a, b)", "(a,)" or "()"; 0 when malformed or a dimension overflows. */
static int take_shape(hcur *c, size_t *dims, size_t *ndim)
{
    *ndim = 0;
    if (!take(c, '(')) return 0;
    for (;;) {
        if (take(c, ')')) return 1;
        skip_ws(c);
        if (c->p >= c->end || *c->p < '0' || *c->p > '9' || *ndim == 3) return 0;
        size_t v = 0;
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
            if (v > (SIZE_MAX - 9) / 10) return 0;
            v = v * 10 + (size_t)(*c->p++ - '0');
        }
        dims[(*ndim)++] = v;
        if (!take(c, ',') && !(skip_ws(c), c->p < c->end && *c->p == ')')) return 0;
    }
}

static dpc_status hdr_fail(const npy_file *f, const char *what, dpc_error *err)
{
    return dpc_error_param(err, DPC_E_FORMAT, "header", "%s: .npy header: %s", f->path, what);
}

/* Parses the dict: every key once, no other key. */
static dpc_status parse_dict(npy_file *f, const char *h, size_t len, dpc_error *err)
{
    hcur c = {h, h + len};
    char key[32], descr[16] = "";
    int fortran = -1, have_shape = 0;
    size_t dims[3] = {0, 0, 0};
    if (!take(&c, '{')) return hdr_fail(f, "does not start with '{' (not numpy's dict)", err);
    while (!take(&c, '}')) {
        if (!take_str(&c, key, sizeof key) || !take(&c, ':'))
            return hdr_fail(f, "malformed dict (expected 'key': value)", err);
        if (!strcmp(key, "descr")) {
            if (!take_str(&c, descr, sizeof descr))
                return hdr_fail(f, "'descr' is not a dtype string (structured arrays are not read)",
                                err);
        } else if (!strcmp(key, "fortran_order")) {
            skip_ws(&c);
            if ((size_t)(c.end - c.p) >= 4 && !strncmp(c.p, "True", 4)) fortran = 1, c.p += 4;
            else if ((size_t)(c.end - c.p) >= 5 && !strncmp(c.p, "False", 5)) fortran = 0, c.p += 5;
            else return hdr_fail(f, "'fortran_order' is not True or False", err);
        } else if (!strcmp(key, "shape")) {
            if (!take_shape(&c, dims, &f->ndim)) return hdr_fail(f, "'shape' is not a tuple of "
                                                                 "at most 3 sizes", err);
            have_shape = 1;
        } else {
            return hdr_fail(f, "unknown key (expected 'descr', 'fortran_order', 'shape')", err);
        }
        if (!take(&c, ',')) {
            if (!take(&c, '}')) return hdr_fail(f, "malformed dict (expected ',' or '}')", err);
            break;
        }
    }
    if (!descr[0] || fortran < 0 || !have_shape)
        return hdr_fail(f, "'descr', 'fortran_order' and 'shape' are required", err);
    int t = -1;
    for (int k = 0; k < (int)(sizeof TYPES / sizeof TYPES[0]); k++)
        if (!strcmp(descr, TYPES[k].descr)) t = k;
    if (t < 0)
        return dpc_error_param(err, DPC_E_FORMAT, "descr",
                               "%s: dtype '%s' is not read (features '<f8' or '<f4', targets also "
                               "'<i8', '<i4', '|u1', '|i1'; little-endian)", f->path, descr);
    f->type = (npy_type)t;
    if (fortran)
        return dpc_error_param(err, DPC_E_FORMAT, "fortran_order",
                               "%s: Fortran order (column-major) is not read: save C order "
                               "(np.save(path, np.ascontiguousarray(a)))", f->path);
    f->shape[0] = dims[0];
    f->shape[1] = f->ndim > 1 ? dims[1] : 1;
    if (f->ndim == 3) f->shape[1] = 0; /* refused by the caller's rank check */
    return DPC_OK;
}

/* Opens and checks the file: the header, then that the data are exactly there (nothing read). */
static dpc_status npy_open(npy_file *f, const char *path, size_t ndim, dpc_error *err)
{
    memset(f, 0, sizeof *f);
    f->path = path;
    dpc_status st = dpc__map_open(&f->map, path, err);
    if (st) return st;
    const unsigned char *b = f->map.p;
    size_t n = f->map.size;
    if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b)
        return dpc_error_param(err, DPC_E_FORMAT, "magic", "%s: gzip-compressed: a .npy is "
                               "memory-mapped, decompress it first", path);
    if (n < 10 || memcmp(b, "\x93NUMPY", 6))
        return dpc_error_param(err, DPC_E_FORMAT, "magic", "%s: not a .npy file (no \\x93NUMPY "
                               "magic%s)", path, n < 10 ? ", shorter than a header" : "");
    if (b[6] < 1 || b[6] > 3)
        return dpc_error_param(err, DPC_E_FORMAT, "version", "%s: .npy version %u.%u is not read "
                               "(1.x, 2.x, 3.x)", path, b[6], b[7]);
    size_t hl, h0 = b[6] == 1 ? 10 : 12;
    if (n < h0) return hdr_fail(f, "truncated before the header length", err);
    hl = b[6] == 1 ? (size_t)b[8] | (size_t)b[9] << 8
                   : (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
    if (hl > n - h0) return hdr_fail(f, "truncated (the header is longer than the file)", err);
    if ((st = parse_dict(f, (const char *)b + h0, hl, err))) return st;
    if (f->ndim != ndim || f->shape[0] == 0 || f->shape[1] == 0)
        return dpc_error_param(err, DPC_E_FORMAT, "shape", "%s: 'shape' has %zu dimension%s%s, "
                               "expected %s", path, f->ndim, f->ndim == 1 ? "" : "s",
                               f->ndim == ndim ? " with a zero size" : "",
                               ndim == 2 ? "2 (rows, features) of sizes >= 1"
                                         : "1 (one target per row)");
    if (f->shape[1] > DPC_DATA_MAX_FEATURES)
        return dpc_error_param(err, DPC_E_RANGE, "d", "%s: %zu features, at most %zu supported",
                               path, f->shape[1], (size_t)DPC_DATA_MAX_FEATURES);
    f->data_off = h0 + hl;
    size_t cells, bytes, have = n - f->data_off;
    if (!dpc__mul_ok(f->shape[0], f->shape[1], &cells) ||
        !dpc__mul_ok(cells, TYPES[f->type].size, &bytes))
        return dpc_error_param(err, DPC_E_RANGE, "shape", "%s: %zu x %zu overflows", path,
                               f->shape[0], f->shape[1]);
    if (have != bytes)
        return dpc_error_param(err, DPC_E_FORMAT, "shape", "%s: %s: the header's shape (%zu x %zu "
                               "%s) needs %zu bytes of data, the file has %zu", path,
                               have < bytes ? "truncated" : "trailing bytes", f->shape[0],
                               f->shape[1], TYPES[f->type].descr, bytes, have);
    return DPC_OK;
}

/* Element i of the file's data as a double (unaligned reads through memcpy). */
static double npy_get(const npy_file *f, size_t i)
{
    const unsigned char *p = f->map.p + f->data_off + i * TYPES[f->type].size;
    switch (f->type) {
    case T_F8: { double v; memcpy(&v, p, 8); return v; }
    case T_F4: { float v; memcpy(&v, p, 4); return (double)v; }
    case T_I8: { int64_t v; memcpy(&v, p, 8); return (double)v; }
    case T_I4: { int32_t v; memcpy(&v, p, 4); return (double)v; }
    case T_U1: return (double)p[0];
    default: return (double)(signed char)p[0];
    }
}

/* Rows [r0, r0 + m) of the features into x, block by block, each block released once copied. */
static dpc_status read_rows(const npy_file *f, size_t r0, size_t m, double *x, dpc_error *err)
{
    size_t d = f->shape[1], es = TYPES[f->type].size, rows = NPY_BLOCK / (d * es);
    if (rows == 0) rows = 1;
    for (size_t a = 0; a < m; a += rows) {
        size_t b = a + rows < m ? a + rows : m;
        for (size_t i = a; i < b; i++)
            for (size_t j = 0; j < d; j++) {
                double v = npy_get(f, (r0 + i) * d + j);
                if (!isfinite(v))
                    return dpc_error_param(err, DPC_E_NUMERIC, "x", "%s: row %zu column %zu is %g",
                                           f->path, r0 + i, j, v);
                x[i * d + j] = v;
            }
        dpc__map_release(&f->map, f->data_off + (r0 + a) * d * es, (b - a) * d * es);
    }
    return DPC_OK;
}

/* Targets of rows [r0, r0 + m) into y; classification: integers in 0..K-1 (K given, or inferred
 * over the first N rows of the file: every shard infers the same K). */
static dpc_status read_targets(const npy_file *f, const dpc_npy_opts *o, size_t N, size_t r0,
                               size_t m, double *y, size_t *k_out, dpc_error *err)
{
    int cls = o->task == DPC_TASK_CLASSIFICATION || o->n_classes;
    size_t K = o->n_classes, lo = K || !cls ? r0 : 0, hi = K || !cls ? r0 + m : N, mx = 0;
    for (size_t i = lo; i < hi; i++) {
        double v = npy_get(f, i);
        if (!isfinite(v))
            return dpc_error_param(err, DPC_E_NUMERIC, "y", "%s: row %zu is %g", f->path, i, v);
        if (cls && (v != floor(v) || v < 0 || (K && v >= (double)K) ||
                    v >= (double)DPC_DATA_MAX_CLASSES))
            return dpc_error_param(err, DPC_E_FORMAT, "y", "%s: row %zu: label %.17g is not a "
                                   "class in 0..%zu", f->path, i, v,
                                   (K ? K : (size_t)DPC_DATA_MAX_CLASSES) - 1);
        if (cls && (size_t)v > mx) mx = (size_t)v;
        if (i >= r0 && i < r0 + m) y[i - r0] = v;
        if ((i + 1 - lo) % (NPY_BLOCK / 8) == 0) /* an inference over every label: released */
            dpc__map_release(&f->map, f->data_off + (i + 1 - NPY_BLOCK / 8) * TYPES[f->type].size,
                             NPY_BLOCK / 8 * TYPES[f->type].size);
    }
    *k_out = cls ? (K ? K : mx + 1) : 0;
    return DPC_OK;
}

static dpc_status load_npy(dpc_dataset **out, npy_file *X, npy_file *Y, const dpc_npy_opts *o,
                           dpc_error *err)
{
    size_t N = X->shape[0], d = X->shape[1];
    if (Y->shape[0] != N)
        return dpc_error_param(err, DPC_E_FORMAT, "labels", "%s: %zu targets, the features %s "
                               "have %zu rows", Y->path, Y->shape[0], X->path, N);
    if (X->type != T_F8 && X->type != T_F4)
        return dpc_error_param(err, DPC_E_FORMAT, "descr", "%s: features of dtype '%s': '<f8' or "
                               "'<f4' (np.save(path, a.astype(np.float64)))", X->path,
                               TYPES[X->type].descr);
    if (o->max_rows && o->max_rows < N) N = o->max_rows;
    if (o->first > N || (o->count && o->count > N - o->first))
        return dpc_error_param(err, DPC_E_RANGE, "first", "%s: rows %zu..+%zu of %zu", X->path,
                               o->first, o->count, N);
    size_t m = o->count ? o->count : N - o->first, K = 0;
    dpc_dataset *ds = NULL;
    dpc_status st = dpc_dataset_new(&ds, m, d, 0, err);
    if (!st) st = read_rows(X, o->first, m, ds->x, err);
    if (!st) st = read_targets(Y, o, N, o->first, m, ds->y, &K, err);
    if (st) {
        dpc_dataset_free(ds);
        return st;
    }
    ds->n_classes = K;
    if (m < N) {
        ds->shard_first = o->first;
        ds->shard_total = N;
    }
    dpc__dataset_source(ds, "%s", X->path);
    if (N < X->shape[0]) dpc__dataset_note(ds, 0, "first %zu rows", N);
    if (K && !o->n_classes) dpc__dataset_note(ds, 1, "classes = %zu inferred from the labels", K);
    *out = ds;
    return DPC_OK;
}

dpc_status dpc_data_load_npy(dpc_dataset **out, const char *path, const char *labels_path,
                             const dpc_npy_opts *opts, dpc_error *err)
{
    if (!out) return dpc_error_param(err, DPC_E_INVALID, "out", "NULL");
    *out = NULL;
    if (!path) return dpc_error_param(err, DPC_E_INVALID, "path", "NULL");
    if (!labels_path)
        return dpc_error_param(err, DPC_E_INVALID, "labels", "npy: the targets are a second "
                               "file (labels=PATH: a 1-D .npy of one value per row)");
    dpc_npy_opts o = {0};
    if (opts) o = *opts;
    if (dpc_field_check(dpc_npy_opts_fields(), &o, err)) /* task, n_classes: the table's */
        return dpc_error_prefix(err, "npy: ");
    npy_file X, Y;
    dpc_status st = npy_open(&X, path, 2, err);
    memset(&Y, 0, sizeof Y);
    if (!st) st = npy_open(&Y, labels_path, 1, err);
    if (!st) st = load_npy(out, &X, &Y, &o, err);
    dpc__map_close(&X.map);
    dpc__map_close(&Y.map);
    return st;
}

/* The header of path's features: rows and features (for the shard's bounds and the memory
 * limit before any row is read). */
dpc_status dpc__npy_shape(const char *path, size_t *n, size_t *d, dpc_error *err)
{
    npy_file X;
    dpc_status st = npy_open(&X, path, 2, err);
    if (!st) {
        *n = X.shape[0];
        *d = X.shape[1];
    }
    dpc__map_close(&X.map);
    return st;
}
