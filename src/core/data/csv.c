/* csv.c — CSV loader (plain or gzip): header detection, label column by index or name,
 * optional double quotes, numeric or named class labels. Errors name file:line and column. */
#include "data/internal.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

dpc_csv_opts dpc_csv_opts_default(void)
{
    dpc_csv_opts o = {0};
    o.header = DPC_CSV_HEADER_AUTO;
    o.delimiter = ',';
    o.label_col = -1;
    o.task = DPC_TASK_REGRESSION;
    return o;
}

/* ==== Field splitting ======================================================================= */

typedef struct strvec {
    char **v;
    size_t n, cap;
} strvec;

static int strvec_push(strvec *s, char *p)
{
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 16;
        char **nv = dpc__malloc_array(nc, sizeof *nv);
        if (!nv) return -1;
        if (s->n) memcpy(nv, s->v, s->n * sizeof *nv);
        free(s->v);
        s->v = nv;
        s->cap = nc;
    }
    s->v[s->n++] = p;
    return 0;
}

typedef struct splitter {
    char delim;
    int ws; /* delimiter is "any run of blanks" */
} splitter;

static int is_blank(const splitter *sp, char c)
{
    if (sp->delim == '\t' && !sp->ws) return c == ' ';
    return c == ' ' || c == '\t';
}

static int is_sep(const splitter *sp, char c)
{
    return sp->ws ? (c == ' ' || c == '\t') : c == sp->delim;
}

/* Splits line in place into NUL-terminated, trimmed, unquoted fields. */
static dpc_status split_fields(const splitter *sp, char *line, strvec *out, const char *path,
                               size_t lineno, dpc_error *err)
{
    out->n = 0;
    char *p = line;
    for (;;) {
        while (*p && is_blank(sp, *p)) p++;
        char *field, *next;
        if (*p == '"') {
            char *q = p + 1, *w = p + 1;
            for (;;) {
                if (!*q)
                    return dpc_error_set(err, DPC_E_FORMAT,
                                         "%s:%zu: column %zu: unterminated quoted field", path,
                                         lineno, out->n + 1);
                if (*q == '"') {
                    if (q[1] == '"') {
                        *w++ = '"';
                        q += 2;
                        continue;
                    }
                    q++;
                    break;
                }
                *w++ = *q++;
            }
            while (*q && is_blank(sp, *q)) q++;
            if (*q && !is_sep(sp, *q))
                return dpc_error_set(err, DPC_E_FORMAT,
                                     "%s:%zu: column %zu: text after the closing quote", path,
                                     lineno, out->n + 1);
            *w = '\0';
            field = p + 1;
            next = *q ? q : NULL;
        } else {
            char *e = p;
            while (*e && !is_sep(sp, *e)) e++;
            next = *e ? e : NULL;
            char *t = e;
            while (t > p && is_blank(sp, t[-1])) t--;
            *t = '\0';
            field = p;
        }
        if (strvec_push(out, field)) return DPC__NOMEM(err, "CSV fields");
        if (!next) return DPC_OK;
        p = next + 1;
        if (sp->ws) {
            while (*p && is_sep(sp, *p)) p++;
            if (!*p) return DPC_OK; /* trailing blanks */
        }
    }
}

/* ==== Loader ================================================================================ */

typedef struct csv_state {
    const char *path;
    strvec names;   /* header names (owned copies) or empty */
    strvec classes; /* public class names (pointers into classes_buf) */
    char *classes_buf;
} csv_state;

/* "column 3 ('age')" or "column 3" (1-based for humans). */
static const char *col_desc(const csv_state *cs, size_t c, char *buf, size_t cap)
{
    if (c < cs->names.n)
        snprintf(buf, cap, "column %zu ('%.40s')", c + 1, cs->names.v[c]);
    else
        snprintf(buf, cap, "column %zu", c + 1);
    return buf;
}

static dpc_status parse_classes(csv_state *cs, const char *list, dpc_error *err)
{
    size_t len = strlen(list);
    cs->classes_buf = malloc(len + 1);
    if (!cs->classes_buf) return DPC__NOMEM(err, "class names");
    memcpy(cs->classes_buf, list, len + 1);
    char *p = cs->classes_buf;
    for (;;) {
        char *bar = strchr(p, '|');
        if (bar) *bar = '\0';
        while (*p == ' ') p++;
        char *e = p + strlen(p);
        while (e > p && e[-1] == ' ') e--;
        *e = '\0';
        if (!*p) return dpc_error_set(err, DPC_E_INVALID, "csv: empty name in classes '%s'", list);
        for (size_t k = 0; k < cs->classes.n; k++)
            if (!strcmp(cs->classes.v[k], p))
                return dpc_error_set(err, DPC_E_INVALID, "csv: class '%s' listed twice", p);
        if (strvec_push(&cs->classes, p)) return DPC__NOMEM(err, "class names");
        if (cs->classes.n > DPC_DATA_MAX_CLASSES)
            return dpc_error_set(err, DPC_E_INVALID, "csv: more than %d classes",
                                 DPC_DATA_MAX_CLASSES);
        if (!bar) return DPC_OK;
        p = bar + 1;
    }
}

/* Resolves the label column for a file with ncols columns. */
static dpc_status resolve_label(const dpc_csv_opts *o, const csv_state *cs, size_t ncols,
                                size_t lineno, size_t *col, dpc_error *err)
{
    if (o->label_name) {
        for (size_t c = 0; c < cs->names.n; c++)
            if (!strcmp(cs->names.v[c], o->label_name)) {
                *col = c;
                return DPC_OK;
            }
        return dpc_error_set(err, DPC_E_FORMAT, "%s:%zu: no column named '%s' in the header",
                             cs->path, lineno, o->label_name);
    }
    long lc = o->label_col;
    if (lc >= 0 && (unsigned long)lc < ncols) {
        *col = (size_t)lc;
        return DPC_OK;
    }
    if (lc < 0 && (unsigned long)(-(lc + 1)) < ncols) {
        *col = ncols - 1 - (size_t)(-(lc + 1));
        return DPC_OK;
    }
    return dpc_error_set(err, DPC_E_FORMAT, "%s:%zu: label column %ld out of range for %zu columns",
                         cs->path, lineno, lc, ncols);
}

/* Parses the label field of one row into *y. */
static dpc_status parse_label(const dpc_csv_opts *o, const csv_state *cs, dpc__labels *L,
                              const char *f, size_t lineno, size_t col, double *y, dpc_error *err)
{
    char cd[80];
    if (cs->classes.n) {
        for (size_t k = 0; k < cs->classes.n; k++)
            if (!strcmp(cs->classes.v[k], f)) {
                *y = (double)k;
                return DPC_OK;
            }
        return dpc_error_set(err, DPC_E_FORMAT, "%s:%zu: %s: label '%.40s' is not a listed class",
                             cs->path, lineno, col_desc(cs, col, cd, sizeof cd), f);
    }
    double v;
    int code = dpc__parse_double(f, &v);
    if (code)
        return dpc_error_set(err, DPC_E_FORMAT, "%s:%zu: %s: label: %s: '%.40s'", cs->path, lineno,
                             col_desc(cs, col, cd, sizeof cd), dpc__parse_double_why(code), f);
    if (o->task == DPC_TASK_REGRESSION) {
        *y = v;
        return DPC_OK;
    }
    return dpc__label_class(L, v, cs->path, lineno, y, err);
}

/* Header detection for the first row, ignoring column skip (if < n): 1 = the fields are text
 * (or empty), 0 = none is text, -1 = text and numbers mixed (a header with numeric names or a
 * malformed data row; the caller asks for an explicit header mode). Number-like fields (NaN,
 * Inf, overflow) count as numbers so that the data-row parser reports them precisely. */
static int looks_like_header(const strvec *f, size_t skip)
{
    size_t text = 0, num = 0;
    for (size_t c = 0; c < f->n; c++) {
        double v;
        if (c == skip) continue;
        int code = dpc__parse_double(f->v[c], &v);
        if (code == 2)
            text++;
        else if (code != 1)
            num++;
    }
    return text && num ? -1 : text ? 1 : 0;
}

dpc_status dpc_data_load_csv(dpc_dataset **out, const char *path, const dpc_csv_opts *opts,
                             dpc_error *err)
{
    if (!out) return dpc_error_set(err, DPC_E_INVALID, "csv: out is NULL");
    *out = NULL;
    dpc_csv_opts o = opts ? *opts : dpc_csv_opts_default();
    if (!o.delimiter) o.delimiter = ',';
    if (o.delimiter == '"' || o.delimiter == '\n' || o.delimiter == '\r' || o.delimiter == '#')
        return dpc_error_set(err, DPC_E_INVALID, "csv: delimiter '%c' is not allowed", o.delimiter);
    if (o.header != DPC_CSV_HEADER_AUTO && o.header != DPC_CSV_HEADER_YES &&
        o.header != DPC_CSV_HEADER_NO)
        return dpc_error_set(err, DPC_E_INVALID, "csv: bad header mode %d", (int)o.header);
    if (o.label_name && o.header == DPC_CSV_HEADER_NO)
        return dpc_error_set(err, DPC_E_INVALID, "csv: label name '%s' needs a header row",
                             o.label_name);
    if (o.task != DPC_TASK_REGRESSION && o.task != DPC_TASK_CLASSIFICATION)
        return dpc_error_set(err, DPC_E_INVALID, "csv: bad task %d", (int)o.task);
    if (o.task == DPC_TASK_REGRESSION && (o.classes || o.n_classes))
        return dpc_error_set(err, DPC_E_INVALID, "csv: classes given for a regression task");
    if (o.n_classes > DPC_DATA_MAX_CLASSES)
        return dpc_error_set(err, DPC_E_INVALID, "csv: n_classes %zu exceeds %d", o.n_classes,
                             DPC_DATA_MAX_CLASSES);

    splitter sp = {o.delimiter, o.delimiter == ' '};
    csv_state cs = {.path = path};
    dpc__labels L = {.k = o.n_classes};
    strvec fl = {0};
    dpc__reader r = {0};
    double *x = NULL, *y = NULL;
    size_t rows = 0, cap = 0, ncols = 0, d = 0, label = 0, first_line = 0;
    dpc_dataset *ds = NULL;
    dpc_status st = DPC_OK;
    int rc = 0;
    if (o.classes) {
        st = parse_classes(&cs, o.classes, err);
        if (st) goto done;
        L.k = cs.classes.n;
    }
    st = dpc__reader_open(&r, path, err);
    if (st) goto done;
    size_t len;
    while (!(o.max_rows && rows == o.max_rows) && (rc = dpc__reader_line(&r, &len, err)) == 1) {
        char *s = r.line;
        while (*s == ' ' || *s == '\t') s++;
        if (!*s || *s == '#') continue;
        size_t ln = r.lineno;
        st = split_fields(&sp, r.line, &fl, path, ln, err);
        if (st) break;
        if (!ncols) { /* first row: shape, label column, header */
            ncols = fl.n;
            first_line = ln;
            int header = o.header == DPC_CSV_HEADER_YES || o.label_name != NULL;
            if (o.header == DPC_CSV_HEADER_AUTO && !header) {
                /* Named classes: the label field is text anyway, judge the other fields. */
                size_t skip = ncols;
                if (cs.classes.n && resolve_label(&o, &cs, ncols, ln, &skip, NULL)) skip = ncols;
                header = looks_like_header(&fl, skip);
                if (header < 0) {
                    st = dpc_error_set(err, DPC_E_FORMAT,
                                       "%s:%zu: first row mixes numbers and text: is it a header? "
                                       "(set the header mode to yes or no)",
                                       path, ln);
                    break;
                }
            }
            if (header) {
                for (size_t c = 0; c < fl.n; c++) {
                    size_t nl = strlen(fl.v[c]);
                    char *cp = malloc(nl + 1);
                    if (!cp || strvec_push(&cs.names, cp)) {
                        free(cp);
                        st = DPC__NOMEM(err, "CSV header");
                        break;
                    }
                    memcpy(cp, fl.v[c], nl + 1);
                }
            }
            if (!st) st = resolve_label(&o, &cs, ncols, ln, &label, err);
            if (!st && ncols < 2)
                st = dpc_error_set(err, DPC_E_FORMAT,
                                   "%s:%zu: only %zu column: no feature columns besides the "
                                   "label",
                                   path, ln, ncols);
            if (st) break;
            d = ncols - 1;
            if (header) continue;
        }
        if (fl.n != ncols) {
            st = dpc_error_set(err, DPC_E_FORMAT,
                               "%s:%zu: ragged row: %zu fields, expected %zu (as on line %zu)",
                               path, ln, fl.n, ncols, first_line);
            break;
        }
        if (rows == cap) {
            size_t nc = cap ? cap * 2 : 256, bytes;
            if (nc < cap || !dpc__mul_ok(nc, d, &bytes) ||
                !dpc__mul_ok(bytes, sizeof(double), &bytes)) {
                st = dpc_error_set(err, DPC_E_NOMEM, "%s:%zu: too many rows", path, ln);
                break;
            }
            double *nx = realloc(x, bytes), *ny = nx ? realloc(y, nc * sizeof(double)) : NULL;
            if (nx) x = nx;
            if (ny) y = ny;
            if (!nx || !ny) {
                st = DPC__NOMEM(err, "CSV rows");
                break;
            }
            cap = nc;
        }
        double *xr = x + rows * d;
        for (size_t c = 0, j = 0; c < ncols && !st; c++) {
            if (c == label) {
                st = parse_label(&o, &cs, &L, fl.v[c], ln, c, &y[rows], err);
                continue;
            }
            int code = dpc__parse_double(fl.v[c], &xr[j++]);
            if (code) {
                char cd[80];
                st = dpc_error_set(err, DPC_E_FORMAT, "%s:%zu: %s: %s: '%.40s'", path, ln,
                                   col_desc(&cs, c, cd, sizeof cd), dpc__parse_double_why(code),
                                   fl.v[c]);
            }
        }
        if (st) break;
        rows++;
    }
    if (!st && rc < 0) st = (dpc_status)-rc;
    if (!st && rows == 0)
        st = dpc_error_set(err, DPC_E_FORMAT, "%s: %s", path,
                           ncols ? "header but no data rows" : "empty file (no data rows)");
    if (st) goto done;
    size_t k = o.task == DPC_TASK_CLASSIFICATION ? dpc__labels_count(&L) : 0;
    st = dpc_dataset_new(&ds, 0, d, k, err);
    if (st) {
        dpc_error_prefix(err, "%s: ", path);
        goto done;
    }
    free(ds->x);
    free(ds->y);
    ds->x = x;
    ds->y = y;
    ds->n = rows;
    x = y = NULL;
    dpc__dataset_source(ds, "%s", path);
    if (o.max_rows && rows == o.max_rows) dpc__dataset_note(ds, 0, "first %zu rows", rows);
    if (cs.classes.n)
        dpc__dataset_note(ds, 0, "labels mapped by the public class list");
    else if (L.line_neg1)
        dpc__dataset_note(ds, 0, "labels -1/+1 read as 0/1");
    if (k && !o.n_classes && !cs.classes.n)
        dpc__dataset_note(ds, 1, "classes = %zu inferred from the labels", k);
done:
    if (r.f) dpc__reader_close(&r);
    free(x);
    free(y);
    free(fl.v);
    for (size_t c = 0; c < cs.names.n; c++) free(cs.names.v[c]);
    free(cs.names.v);
    free(cs.classes.v);
    free(cs.classes_buf);
    if (st) {
        dpc_dataset_free(ds);
        return st;
    }
    *out = ds;
    return DPC_OK;
}
