/* idx.c — IDX loader (MNIST / Fashion-MNIST format), plain or gzip, and the Fashion-MNIST
 * convenience loader. Offsets in messages are in the decompressed stream. */
#include "data/internal.h"
#include "common/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define IDX_MAX_DIMS 8

typedef struct idx_header {
    int type;    /* 0x08 .. 0x0E */
    size_t elem; /* bytes per element */
    size_t ndim;
    uint32_t dims[IDX_MAX_DIMS];
    uint64_t data_offset; /* bytes before the data */
} idx_header;

static size_t type_size(int type)
{
    switch (type) {
    case 0x08:
    case 0x09: return 1;
    case 0x0B: return 2;
    case 0x0C:
    case 0x0D: return 4;
    case 0x0E: return 8;
    }
    return 0;
}

static const char *type_name(int type)
{
    switch (type) {
    case 0x08: return "ubyte";
    case 0x09: return "sbyte";
    case 0x0B: return "int16";
    case 0x0C: return "int32";
    case 0x0D: return "float32";
    case 0x0E: return "float64";
    }
    return "?";
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* Decodes element k of a big-endian buffer of the given type. */
static double decode(const unsigned char *p, int type)
{
    switch (type) {
    case 0x08: return (double)p[0];
    case 0x09: return (double)(signed char)p[0];
    case 0x0B: {
        uint16_t u = (uint16_t)((unsigned)p[0] << 8 | p[1]);
        return (double)(int16_t)u;
    }
    case 0x0C: return (double)(int32_t)be32(p);
    case 0x0D: {
        uint32_t u = be32(p);
        float f;
        memcpy(&f, &u, sizeof f);
        return (double)f;
    }
    case 0x0E: {
        uint64_t u = (uint64_t)be32(p) << 32 | be32(p + 4);
        double v;
        memcpy(&v, &u, sizeof v);
        return v;
    }
    }
    return 0;
}

static dpc_status read_header(dpc__reader *r, idx_header *h, dpc_error *err)
{
    unsigned char m[4];
    size_t got;
    dpc_status st = dpc__reader_read(r, m, 4, &got, err);
    if (st) return st;
    if (got == 0) return dpc_error_set(err, DPC_E_FORMAT, "%s: empty file", r->path);
    if (got < 4)
        return dpc_error_set(err, DPC_E_FORMAT,
                             "%s: byte %zu: truncated header (the IDX magic needs 4 bytes)",
                             r->path, got);
    if (m[0] != 0 || m[1] != 0)
        return dpc_error_set(err, DPC_E_FORMAT,
                             "%s: byte 0: bad magic %02x %02x %02x %02x: not an IDX file "
                             "(want 00 00 <type> <ndim>)",
                             r->path, m[0], m[1], m[2], m[3]);
    h->type = m[2];
    h->elem = type_size(h->type);
    if (!h->elem)
        return dpc_error_set(err, DPC_E_FORMAT,
                             "%s: byte 2: unknown IDX data type 0x%02x (want 08, 09, 0B, 0C, "
                             "0D or 0E)",
                             r->path, m[2]);
    h->ndim = m[3];
    if (h->ndim == 0 || h->ndim > IDX_MAX_DIMS)
        return dpc_error_set(err, DPC_E_FORMAT, "%s: byte 3: %zu dimensions (want 1..%d)", r->path,
                             h->ndim, IDX_MAX_DIMS);
    unsigned char dims[4 * IDX_MAX_DIMS];
    st = dpc__reader_read(r, dims, 4 * h->ndim, &got, err);
    if (st) return st;
    if (got < 4 * h->ndim)
        return dpc_error_set(err, DPC_E_FORMAT,
                             "%s: byte %zu: truncated header (%zu dimensions need %zu bytes)",
                             r->path, 4 + got, h->ndim, 4 + 4 * h->ndim);
    for (size_t k = 0; k < h->ndim; k++) {
        h->dims[k] = be32(dims + 4 * k);
        if (h->dims[k] == 0)
            return dpc_error_set(err, DPC_E_FORMAT, "%s: byte %zu: dimension %zu is 0 (empty set)",
                                 r->path, 4 + 4 * k, k);
    }
    h->data_offset = 4 + 4 * (uint64_t)h->ndim;
    return DPC_OK;
}

/* After the last expected byte: anything more is an error (unless we stopped early). */
static dpc_status expect_end(dpc__reader *r, dpc_error *err)
{
    unsigned char extra[64];
    size_t got;
    uint64_t at = r->offset;
    dpc_status st = dpc__reader_read(r, extra, sizeof extra, &got, err);
    if (st) return st;
    if (got)
        return dpc_error_set(err, DPC_E_FORMAT,
                             "%s: byte %llu: unexpected data after the last record (%s%zu "
                             "extra bytes)",
                             r->path, (unsigned long long)at, got == sizeof extra ? ">= " : "",
                             got);
    return DPC_OK;
}

static dpc_status truncated(const dpc__reader *r, const idx_header *h, size_t rec_bytes, size_t n,
                            dpc_error *err)
{
    uint64_t data = r->offset - h->data_offset;
    size_t rec = rec_bytes ? (size_t)(data / rec_bytes) : 0;
    return dpc_error_set(err, DPC_E_FORMAT,
                         "%s: byte %llu: truncated in record %zu of %zu (file ends %llu bytes "
                         "into the data, %zu records of %zu bytes expected)",
                         r->path, (unsigned long long)r->offset, rec, n, (unsigned long long)data,
                         n, rec_bytes);
}

/* Where decoded elements go and how they are checked. */
typedef struct elem_sink {
    int labels;          /* 1: labels, range-checked against lim; 0: features */
    size_t lim;          /* labels: exclusive upper bound */
    size_t max_label;    /* labels: largest seen */
    const double *table; /* 1-byte types: decoded and scaled value of each byte */
    double scale;        /* other types: multiplier */
} elem_sink;

/* Streams count elements (records of per_rec elements) from r into *arr. The array grows as the
 * data arrive (never beyond count), so a corrupt header declaring huge dimensions fails at the
 * truncation instead of allocating for the declared size first. */
static dpc_status read_elems(dpc__reader *r, const idx_header *h, size_t count, size_t per_rec,
                             double **arr, elem_sink *sk, dpc_error *err)
{
    const size_t chunk_bytes = (size_t)1 << 20, per_chunk = chunk_bytes / h->elem;
    unsigned char *buf = malloc(chunk_bytes);
    if (!buf) return DPC__NOMEM(err, "IDX read buffer");
    dpc_status st = DPC_OK;
    size_t cap = 0;
    for (size_t k0 = 0; k0 < count && !st;) {
        size_t m = count - k0 < per_chunk ? count - k0 : per_chunk;
        if (k0 + m > cap) {
            size_t nc = cap ? (cap > count / 2 ? count : cap * 2) : (size_t)1 << 16;
            if (nc < k0 + m) nc = k0 + m;
            if (nc > count) nc = count;
            double *na = realloc(*arr, nc * sizeof(double)); /* nc <= count: no overflow */
            if (!na) {
                st = DPC__NOMEM(err, sk->labels ? "IDX labels" : "IDX images");
                break;
            }
            *arr = na;
            cap = nc;
        }
        size_t want = m * h->elem, got;
        st = dpc__reader_read(r, buf, want, &got, err);
        if (st) break;
        if (got < want) {
            st = truncated(r, h, per_rec * h->elem, count / per_rec, err);
            break;
        }
        double *out = *arr + k0;
        for (size_t k = 0; k < m; k++) {
            double v = sk->table ? sk->table[buf[k]] : decode(buf + k * h->elem, h->type);
            size_t at = k0 + k;
            unsigned long long off = (unsigned long long)(h->data_offset + at * h->elem);
            if (sk->labels) {
                if (v < 0 || v >= (double)sk->lim) {
                    st = dpc_error_set(err, DPC_E_FORMAT,
                                       "%s: byte %llu: record %zu: label %.0f out of range 0..%zu",
                                       r->path, off, at, v, sk->lim - 1);
                    break;
                }
                if ((size_t)v > sk->max_label) sk->max_label = (size_t)v;
            } else if (!sk->table) {
                if (!isfinite(v)) {
                    st = dpc_error_set(err, DPC_E_FORMAT,
                                       "%s: byte %llu: record %zu element %zu is %g (NaN/Inf)",
                                       r->path, off, at / per_rec, at % per_rec, v);
                    break;
                }
                v *= sk->scale;
            }
            out[k] = v;
        }
        k0 += m;
    }
    free(buf);
    return st;
}

dpc_status dpc_data_load_idx(dpc_dataset **out, const char *images_path, const char *labels_path,
                             const dpc_idx_opts *opts, dpc_error *err)
{
    if (!out) return dpc_error_set(err, DPC_E_INVALID, "idx: out is NULL");
    *out = NULL;
    if (!images_path || !labels_path)
        return dpc_error_set(err, DPC_E_INVALID, "idx: images and labels paths are required");
    dpc_idx_opts o = {0};
    if (opts) o = *opts;
    if (dpc_field_check(dpc_idx_opts_fields(), &o, err)) /* scale, n_classes: the table's */
        return dpc_error_prefix(err, "idx: ");

    dpc__reader ri, rl;
    idx_header hi, hl;
    dpc_dataset *ds = NULL;
    dpc_status st = dpc__reader_open(&ri, images_path, err);
    if (st) return st;
    st = dpc__reader_open(&rl, labels_path, err);
    if (st) {
        dpc__reader_close(&ri);
        return st;
    }
    st = read_header(&ri, &hi, err);
    if (!st) st = read_header(&rl, &hl, err);
    if (st) goto done;
    if (hl.ndim != 1) {
        st = dpc_error_set(err, DPC_E_FORMAT,
                           "%s: labels file must be 1-dimensional, has %zu dimensions", labels_path,
                           hl.ndim);
        goto done;
    }
    if (hl.type == 0x0D || hl.type == 0x0E) {
        st = dpc_error_set(err, DPC_E_FORMAT, "%s: labels must be an integer type, not %s",
                           labels_path, type_name(hl.type));
        goto done;
    }
    if (hi.dims[0] != hl.dims[0]) {
        st = dpc_error_set(err, DPC_E_FORMAT,
                           "count mismatch: %s has %lu images, %s has %lu labels", images_path,
                           (unsigned long)hi.dims[0], labels_path, (unsigned long)hl.dims[0]);
        goto done;
    }
    size_t n = hi.dims[0], d = 1, rec_bytes, total, row_bytes;
    for (size_t k = 1; k < hi.ndim; k++)
        if (!dpc__mul_ok(d, hi.dims[k], &d)) goto overflow;
    if (!dpc__mul_ok(d, hi.elem, &rec_bytes) || !dpc__mul_ok(n, rec_bytes, &total) ||
        !dpc__mul_ok(d, sizeof(double), &row_bytes) || !dpc__mul_ok(n, row_bytes, &total))
        goto overflow;
    int limited = o.max_records && o.max_records < n;
    if (limited) n = o.max_records;
    int divide255 = o.scale == 0 && hi.type == 0x08;
    double scale = o.scale == 0 ? 1.0 : o.scale;
    /* An empty dataset whose arrays read_elems grows as the records arrive. */
    st = dpc_dataset_new(&ds, 0, d, o.n_classes ? o.n_classes : 1, err);
    if (st) { /* e.g. dimensions beyond DPC_DATA_MAX_FEATURES: name the file */
        dpc_error_prefix(err, "%s: ", images_path);
        goto done;
    }
    free(ds->x);
    free(ds->y);
    ds->x = ds->y = NULL;
    double table[256];
    elem_sink si = {.scale = scale}, sl = {.labels = 1};
    sl.lim = o.n_classes ? o.n_classes : DPC_DATA_MAX_CLASSES;
    if (hi.elem == 1) {
        for (int b = 0; b < 256; b++) {
            double raw = hi.type == 0x08 ? (double)b : (double)(signed char)b;
            table[b] = divide255 ? raw / 255.0 : raw * scale;
        }
        si.table = table;
    }
    st = read_elems(&ri, &hi, n * d, d, &ds->x, &si, err);
    if (!st && !limited) st = expect_end(&ri, err);
    if (!st) st = read_elems(&rl, &hl, n, 1, &ds->y, &sl, err);
    if (!st && !limited) st = expect_end(&rl, err);
    if (st) goto done;
    ds->n = n;
    size_t max_label = sl.max_label;
    if (hi.ndim == 3 || hi.ndim == 4) { /* (n, H, W) or (n, C, H, W) */
        ds->shape[0] = hi.ndim == 3 ? 1 : hi.dims[1];
        ds->shape[1] = hi.dims[hi.ndim - 2];
        ds->shape[2] = hi.dims[hi.ndim - 1];
    }

    dpc__dataset_source(ds, "%s", images_path);
    if (limited) dpc__dataset_note(ds, 0, "first %zu records", n);
    if (divide255) {
        dpc__dataset_note(ds, 0, "pixels / 255");
        ds->x_norm_bound = sqrt((double)d);
    } else if (scale != 1.0) {
        dpc__dataset_note(ds, 0, "values * %.17g", scale);
    }
    if (hi.type == 0x08 && !divide255) ds->x_norm_bound = 255.0 * scale * sqrt((double)d);
    if (!o.n_classes) {
        ds->n_classes = max_label + 1;
        dpc__dataset_note(ds, 1, "classes = %zu inferred from the labels", ds->n_classes);
    }
    goto done;
overflow:
    st = dpc_error_set(err, DPC_E_RANGE, "%s: %lu records of this shape overflow the address space",
                       images_path, (unsigned long)hi.dims[0]);
done:
    dpc__reader_close(&ri);
    dpc__reader_close(&rl);
    if (st) {
        dpc_dataset_free(ds);
        return st;
    }
    *out = ds;
    return DPC_OK;
}

/* Finds dir/name[.gz]; returns 0 and fills buf, or DPC_E_IO naming both candidates. */
static dpc_status find_file(char *buf, size_t cap, const char *dir, const char *name,
                            dpc_error *err)
{
    static const char *const suffix[2] = {".gz", ""};
    for (int k = 0; k < 2; k++) {
        int w = snprintf(buf, cap, "%s/%s%s", dir, name, suffix[k]);
        if (w < 0 || (size_t)w >= cap)
            return dpc_error_set(err, DPC_E_INVALID, "fashion-mnist: directory path too long");
        if (access(buf, F_OK) == 0) return DPC_OK; /* the reader opens it (never blocking) */
    }
    return dpc_error_set(err, DPC_E_IO, "fashion-mnist: neither %s/%s.gz nor %s/%s exists", dir,
                         name, dir, name);
}

dpc_status dpc__load_fm_part(dpc_dataset **out, const char *dir, int test, size_t max_records,
                             dpc_error *err)
{
    const char *prefix = test ? "t10k" : "train", *part = test ? "test" : "train";
    if (!dir) dir = DPC_DATA_FASHION_MNIST_DIR;
    char img[4096], lab[4096], name[64];
    snprintf(name, sizeof name, "%s-images-idx3-ubyte", prefix);
    dpc_status st = find_file(img, sizeof img, dir, name, err);
    if (st) return st;
    snprintf(name, sizeof name, "%s-labels-idx1-ubyte", prefix);
    st = find_file(lab, sizeof lab, dir, name, err);
    if (st) return st;
    dpc_idx_opts o = {.n_classes = 10, .max_records = max_records};
    st = dpc_data_load_idx(out, img, lab, &o, err);
    if (st) return st;
    if ((*out)->d != 784) {
        size_t d = (*out)->d;
        dpc_dataset_free(*out);
        *out = NULL;
        return dpc_error_set(err, DPC_E_FORMAT, "%s: Fashion-MNIST images have %zu pixels, not 784",
                             img, d);
    }
    dpc__dataset_source(*out, "fashion-mnist:%s", part);
    return DPC_OK;
}

dpc_status dpc_data_load_fashion_mnist(dpc_dataset **train, dpc_dataset **test, const char *dir,
                                       dpc_error *err)
{
    if (train) *train = NULL;
    if (test) *test = NULL;
    dpc_dataset *tr = NULL, *te = NULL;
    dpc_status st = DPC_OK;
    if (train) st = dpc__load_fm_part(&tr, dir, 0, 0, err);
    if (!st && test) st = dpc__load_fm_part(&te, dir, 1, 0, err);
    if (st) {
        dpc_dataset_free(tr);
        return st;
    }
    if (train) *train = tr;
    if (test) *test = te;
    return DPC_OK;
}
