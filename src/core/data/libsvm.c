/* libsvm.c — LIBSVM / SVMlight sparse text loader (plain or gzip) into a dense dataset.
 * Rows are parsed into a sparse buffer first (d may be inferred), then scattered. */
#include "data/internal.h"
#include "common/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sparse {
    size_t *idx; /* 0-based feature index */
    double *val;
    size_t nnz, cap;
    size_t *rowptr; /* rows + 1 entries */
    double *y;
    size_t rows, rcap;
} sparse;

static void sparse_free(sparse *s)
{
    free(s->idx);
    free(s->val);
    free(s->rowptr);
    free(s->y);
}

static int grow_entries(sparse *s)
{
    size_t nc = s->cap ? s->cap * 2 : 1024;
    if (nc < s->cap) return -1;
    size_t *ni = dpc__malloc_array(nc, sizeof *ni);
    double *nv = dpc__malloc_array(nc, sizeof *nv);
    if (!ni || !nv) {
        free(ni);
        free(nv);
        return -1;
    }
    if (s->nnz) {
        memcpy(ni, s->idx, s->nnz * sizeof *ni);
        memcpy(nv, s->val, s->nnz * sizeof *nv);
    }
    free(s->idx);
    free(s->val);
    s->idx = ni;
    s->val = nv;
    s->cap = nc;
    return 0;
}

static int grow_rows(sparse *s)
{
    size_t nc = s->rcap ? s->rcap * 2 : 256;
    if (nc < s->rcap || nc + 1 < nc) return -1;
    size_t *np = dpc__malloc_array(nc + 1, sizeof *np);
    double *ny = dpc__malloc_array(nc, sizeof *ny);
    if (!np || !ny) {
        free(np);
        free(ny);
        return -1;
    }
    np[0] = 0;
    if (s->rows) {
        memcpy(np, s->rowptr, (s->rows + 1) * sizeof *np);
        memcpy(ny, s->y, s->rows * sizeof *ny);
    }
    free(s->rowptr);
    free(s->y);
    s->rowptr = np;
    s->y = ny;
    s->rcap = nc;
    return 0;
}

/* Copies at most 40 chars of the whitespace-delimited token at p, for messages. */
static const char *token(const char *p, char *buf, size_t cap)
{
    size_t k = 0;
    while (p[k] && p[k] != ' ' && p[k] != '\t' && k + 1 < cap && k < 40) {
        buf[k] = p[k];
        k++;
    }
    buf[k] = '\0';
    return buf;
}

/* Parses one non-blank line (comment already cut) into row s->rows. */
static dpc_status parse_row(sparse *s, char *line, const dpc_libsvm_opts *o, dpc__labels *L,
                            const char *path, size_t ln, size_t *max_index, dpc_error *err)
{
    char tok[48];
    char *p = line;
    while (*p == ' ' || *p == '\t') p++;
    char *e = p;
    while (*e && *e != ' ' && *e != '\t') e++;
    char save = *e;
    *e = '\0';
    double v;
    int code = dpc__parse_double(p, &v);
    if (code == 2 && strchr(p, ':'))
        return dpc_error_set(err, DPC_E_FORMAT,
                             "%s:%zu: line starts with the pair '%s', not a label", path, ln,
                             token(p, tok, sizeof tok));
    if (code)
        return dpc_error_set(err, DPC_E_FORMAT, "%s:%zu: label: %s: '%s'", path, ln,
                             dpc__parse_double_why(code), token(p, tok, sizeof tok));
    *e = save;
    dpc_status st;
    if (o->task == DPC_TASK_CLASSIFICATION) {
        st = dpc__label_class(L, v, path, ln, &v, err);
        if (st) return st;
    }
    s->y[s->rows] = v;
    size_t prev = 0; /* last 1-based index, 0 = none yet */
    p = e;
    for (;;) {
        while (*p == ' ' || *p == '\t') p++;
        if (!*p) break;
        if (!strncmp(p, "qid:", 4))
            return dpc_error_set(err, DPC_E_UNSUPPORTED,
                                 "%s:%zu: 'qid:' (ranking data) is not supported", path, ln);
        if (*p < '0' || *p > '9')
            return dpc_error_set(err, DPC_E_FORMAT,
                                 "%s:%zu: malformed pair '%s' (want index:value)", path, ln,
                                 token(p, tok, sizeof tok));
        char *q;
        errno = 0;
        unsigned long long ix = strtoull(p, &q, 10);
        if (*q != ':')
            return dpc_error_set(err, DPC_E_FORMAT,
                                 "%s:%zu: malformed pair '%s' (want index:value)", path, ln,
                                 token(p, tok, sizeof tok));
        if (errno == ERANGE || ix > (unsigned long long)(SIZE_MAX / 2))
            return dpc_error_set(err, DPC_E_FORMAT, "%s:%zu: index in '%s' is too large", path, ln,
                                 token(p, tok, sizeof tok));
        if (ix == 0)
            return dpc_error_set(err, DPC_E_FORMAT,
                                 "%s:%zu: index 0 in '%s' (LIBSVM indices start at 1)", path, ln,
                                 token(p, tok, sizeof tok));
        if (ix <= prev)
            return dpc_error_set(
                err, DPC_E_FORMAT,
                "%s:%zu: index %llu after %zu: indices must be strictly increasing", path, ln, ix,
                prev);
        if (o->d && ix > o->d)
            return dpc_error_set(err, DPC_E_FORMAT, "%s:%zu: index %llu out of range 1..%zu", path,
                                 ln, ix, o->d);
        char *vs = q + 1, *ve = vs;
        while (*ve && *ve != ' ' && *ve != '\t') ve++;
        save = *ve;
        *ve = '\0';
        code = dpc__parse_double(vs, &v);
        if (code) {
            *ve = save;
            return dpc_error_set(err, DPC_E_FORMAT, "%s:%zu: malformed pair '%s': value: %s", path,
                                 ln, token(p, tok, sizeof tok), dpc__parse_double_why(code));
        }
        *ve = save;
        if (s->nnz == s->cap && grow_entries(s)) return DPC__NOMEM(err, "LIBSVM entries");
        s->idx[s->nnz] = (size_t)ix - 1;
        s->val[s->nnz] = v;
        s->nnz++;
        prev = (size_t)ix;
        if (prev > *max_index) *max_index = prev;
        p = ve;
    }
    return DPC_OK;
}

dpc_status dpc_data_load_libsvm(dpc_dataset **out, const char *path, const dpc_libsvm_opts *opts,
                                dpc_error *err)
{
    if (!out) return dpc_error_set(err, DPC_E_INVALID, "libsvm: out is NULL");
    *out = NULL;
    dpc_libsvm_opts o = {0};
    if (opts) o = *opts;
    if (dpc_field_check(dpc_libsvm_opts_fields(), &o, err)) /* task, n_classes: the table's */
        return dpc_error_prefix(err, "libsvm: ");
    if (o.task == DPC_TASK_REGRESSION && o.n_classes) {
        dpc_error_param(err, DPC_E_INVALID, "n_classes", "given for a regression task");
        return dpc_error_prefix(err, "libsvm: ");
    }
    sparse s = {0};
    dpc__labels L = {.k = o.n_classes};
    dpc__reader r;
    dpc_dataset *ds = NULL;
    size_t max_index = 0, len;
    int rc = 0;
    dpc_status st = dpc__reader_open(&r, path, err);
    if (st) return st;
    while (!(o.max_rows && s.rows == o.max_rows) && (rc = dpc__reader_line(&r, &len, err)) == 1) {
        char *hash = strchr(r.line, '#');
        if (hash) *hash = '\0';
        char *p = r.line;
        while (*p == ' ' || *p == '\t') p++;
        if (!*p) continue;
        if (s.rows == s.rcap && grow_rows(&s)) {
            st = DPC__NOMEM(err, "LIBSVM rows");
            break;
        }
        st = parse_row(&s, r.line, &o, &L, path, r.lineno, &max_index, err);
        if (st) break;
        s.rows++;
        s.rowptr[s.rows] = s.nnz;
    }
    dpc__reader_close(&r);
    if (!st && rc < 0) st = (dpc_status)-rc;
    if (!st && s.rows == 0)
        st = dpc_error_set(err, DPC_E_FORMAT, "%s: empty file (no data rows)", path);
    size_t d = o.d ? o.d : max_index;
    if (!st && d == 0)
        st = dpc_error_set(err, DPC_E_FORMAT, "%s: no features (every row is empty); give d", path);
    size_t k = o.task == DPC_TASK_CLASSIFICATION ? dpc__labels_count(&L) : 0;
    if (!st && (st = dpc_dataset_new(&ds, s.rows, d, k, err))) dpc_error_prefix(err, "%s: ", path);
    if (!st) {
        for (size_t i = 0; i < s.rows; i++) {
            ds->y[i] = s.y[i];
            for (size_t t = s.rowptr[i]; t < s.rowptr[i + 1]; t++)
                ds->x[i * d + s.idx[t]] = s.val[t];
        }
        dpc__dataset_source(ds, "%s", path);
        if (o.max_rows && s.rows == o.max_rows) dpc__dataset_note(ds, 0, "first %zu rows", s.rows);
        if (L.line_neg1) dpc__dataset_note(ds, 0, "labels -1/+1 read as 0/1");
        if (!o.d) dpc__dataset_note(ds, 1, "d = %zu inferred from the largest index", d);
        if (k && !o.n_classes)
            dpc__dataset_note(ds, 1, "classes = %zu inferred from the labels", k);
    }
    sparse_free(&s);
    if (st) {
        dpc_dataset_free(ds);
        return st;
    }
    *out = ds;
    return DPC_OK;
}
