/* csv.c — CSV loader (plain or gzip): header detection, label column by index or name,
 * optional double quotes, numeric or named class labels. Errors name file:line and column. */
#include "data/internal.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

dpc_csv_opts dpc_csv_opts_default(void)
{
    dpc_csv_opts o;
    dpc_field_defaults(dpc_csv_opts_fields(), &o);
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

/* check_parameter for the loader's options (o->delimiter already defaulted): the ranges of its
 * table (header and task names, n_classes <= DPC_DATA_MAX_CLASSES), then the bytes a delimiter
 * cannot be (they have a meaning of their own in the file: not a range) and the refusals of
 * several fields. */
static dpc_status check_opts(const dpc_csv_opts *o, dpc_error *err)
{
    dpc_status st = dpc_field_check(dpc_csv_opts_fields(), o, err);
    if (st) return st;
    if (o->delimiter == '"' || o->delimiter == '\n' || o->delimiter == '\r' || o->delimiter == '#')
        return dpc_error_param(err, DPC_E_INVALID, "delimiter", "'%c' is not allowed",
                               o->delimiter);
    if (o->label_name && o->header == DPC_CSV_HEADER_NO)
        return dpc_error_param(err, DPC_E_INVALID, "label_name", "'%s' needs a header row",
                               o->label_name);
    if (o->task == DPC_TASK_REGRESSION && (o->classes || o->n_classes))
        return dpc_error_param(err, DPC_E_INVALID, o->classes ? "classes" : "n_classes",
                               "given for a regression task");
    return DPC_OK;
}

/* The loader's state across rows. */
typedef struct csv_load {
    const dpc_csv_opts *o;
    const char *path;
    csv_state cs;
    dpc__labels L;
    double *x, *y;          /* (cap, d), (cap) */
    size_t rows, cap, ncols, d, label, first_line;
} csv_load;

/* The first row fl (line ln): the shape, the label column and the header (its names kept).
 * *is_header = 1 when the row is a header (not data). */
static dpc_status first_row(csv_load *c, const strvec *fl, size_t ln, int *is_header,
                            dpc_error *err)
{
    const dpc_csv_opts *o = c->o;
    c->ncols = fl->n;
    c->first_line = ln;
    int header = o->header == DPC_CSV_HEADER_YES || o->label_name != NULL;
    if (o->header == DPC_CSV_HEADER_AUTO && !header) {
        /* Named classes: the label field is text anyway, judge the other fields. */
        size_t skip = c->ncols;
        if (c->cs.classes.n && resolve_label(o, &c->cs, c->ncols, ln, &skip, NULL))
            skip = c->ncols;
        header = looks_like_header(fl, skip);
        if (header < 0)
            return dpc_error_set(err, DPC_E_FORMAT,
                                 "%s:%zu: first row mixes numbers and text: is it a header? "
                                 "(set the header mode to yes or no)",
                                 c->path, ln);
    }
    for (size_t k = 0; header && k < fl->n; k++) {
        size_t nl = strlen(fl->v[k]);
        char *cp = malloc(nl + 1);
        if (!cp || strvec_push(&c->cs.names, cp)) {
            free(cp);
            return DPC__NOMEM(err, "CSV header");
        }
        memcpy(cp, fl->v[k], nl + 1);
    }
    dpc_status st = resolve_label(o, &c->cs, c->ncols, ln, &c->label, err);
    if (st) return st;
    if (c->ncols < 2)
        return dpc_error_set(err, DPC_E_FORMAT,
                             "%s:%zu: only %zu column: no feature columns besides the label",
                             c->path, ln, c->ncols);
    c->d = c->ncols - 1;
    *is_header = header;
    return DPC_OK;
}

/* Room for one more row (the capacity doubles). */
static dpc_status grow_rows(csv_load *c, size_t ln, dpc_error *err)
{
    if (c->rows < c->cap) return DPC_OK;
    size_t nc = c->cap ? c->cap * 2 : 256, bytes;
    if (nc < c->cap || !dpc__mul_ok(nc, c->d, &bytes) ||
        !dpc__mul_ok(bytes, sizeof(double), &bytes))
        return dpc_error_set(err, DPC_E_NOMEM, "%s:%zu: too many rows", c->path, ln);
    double *nx = realloc(c->x, bytes), *ny = nx ? realloc(c->y, nc * sizeof(double)) : NULL;
    if (nx) c->x = nx;
    if (ny) c->y = ny;
    if (!nx || !ny) return DPC__NOMEM(err, "CSV rows");
    c->cap = nc;
    return DPC_OK;
}

/* One data row fl (line ln) appended. */
static dpc_status data_row(csv_load *c, const strvec *fl, size_t ln, dpc_error *err)
{
    if (fl->n != c->ncols)
        return dpc_error_set(err, DPC_E_FORMAT,
                             "%s:%zu: ragged row: %zu fields, expected %zu (as on line %zu)",
                             c->path, ln, fl->n, c->ncols, c->first_line);
    dpc_status st = grow_rows(c, ln, err);
    double *xr = c->x + c->rows * c->d; /* (d) */
    for (size_t k = 0, j = 0; k < c->ncols && !st; k++) {
        if (k == c->label) {
            st = parse_label(c->o, &c->cs, &c->L, fl->v[k], ln, k, &c->y[c->rows], err);
            continue;
        }
        int code = dpc__parse_double(fl->v[k], &xr[j++]);
        if (code) {
            char cd[80];
            st = dpc_error_set(err, DPC_E_FORMAT, "%s:%zu: %s: %s: '%.40s'", c->path, ln,
                               col_desc(&c->cs, k, cd, sizeof cd), dpc__parse_double_why(code),
                               fl->v[k]);
        }
    }
    if (!st) c->rows++;
    return st;
}

/* Every row of the open reader r into c. */
static dpc_status read_rows(csv_load *c, dpc__reader *r, dpc_error *err)
{
    splitter sp = {c->o->delimiter, c->o->delimiter == ' '};
    strvec fl = {0};
    dpc_status st = DPC_OK;
    size_t len, max = c->o->max_rows;
    int rc = 0;
    while (!(max && c->rows == max) && (rc = dpc__reader_line(r, &len, err)) == 1) {
        char *s = r->line;
        while (*s == ' ' || *s == '\t') s++;
        if (!*s || *s == '#') continue;
        size_t ln = r->lineno;
        int header = 0;
        if ((st = split_fields(&sp, r->line, &fl, c->path, ln, err))) break;
        if (!c->ncols && ((st = first_row(c, &fl, ln, &header, err)) || header)) {
            if (st) break;
            continue;
        }
        if ((st = data_row(c, &fl, ln, err))) break;
    }
    free(fl.v);
    if (!st && rc < 0) st = (dpc_status)-rc;
    if (!st && c->rows == 0)
        st = dpc_error_set(err, DPC_E_FORMAT, "%s: %s", c->path,
                           c->ncols ? "header but no data rows" : "empty file (no data rows)");
    return st;
}

/* The data set of the rows read (takes c->x, c->y). */
static dpc_status make_dataset(csv_load *c, dpc_dataset **out, dpc_error *err)
{
    const dpc_csv_opts *o = c->o;
    size_t k = o->task == DPC_TASK_CLASSIFICATION ? dpc__labels_count(&c->L) : 0;
    dpc_dataset *ds = NULL;
    dpc_status st = dpc_dataset_new(&ds, 0, c->d, k, err);
    if (st) return dpc_error_prefix(err, "%s: ", c->path); /* e.g. beyond the feature limit */
    free(ds->x);
    free(ds->y);
    ds->x = c->x;
    ds->y = c->y;
    ds->n = c->rows;
    c->x = c->y = NULL;
    dpc__dataset_source(ds, "%s", c->path);
    if (o->max_rows && c->rows == o->max_rows)
        dpc__dataset_note(ds, 0, "first %zu rows", c->rows);
    if (c->cs.classes.n)
        dpc__dataset_note(ds, 0, "labels mapped by the public class list");
    else if (c->L.line_neg1)
        dpc__dataset_note(ds, 0, "labels -1/+1 read as 0/1");
    if (k && !o->n_classes && !c->cs.classes.n)
        dpc__dataset_note(ds, 1, "classes = %zu inferred from the labels", k);
    *out = ds;
    return DPC_OK;
}

dpc_status dpc_data_load_csv(dpc_dataset **out, const char *path, const dpc_csv_opts *opts,
                             dpc_error *err)
{
    if (!out) return dpc_error_param(err, DPC_E_INVALID, "out", "is NULL");
    *out = NULL;
    dpc_csv_opts o = opts ? *opts : dpc_csv_opts_default();
    if (!o.delimiter) o.delimiter = ',';
    dpc_status st = check_opts(&o, err);
    if (st) return st;
    csv_load c = {.o = &o, .path = path, .cs = {.path = path}, .L = {.k = o.n_classes}};
    dpc__reader r = {0};
    if (o.classes && !(st = parse_classes(&c.cs, o.classes, err))) c.L.k = c.cs.classes.n;
    if (!st) st = dpc__reader_open(&r, path, err);
    if (!st) st = read_rows(&c, &r, err);
    if (!st) st = make_dataset(&c, out, err);
    if (r.f) dpc__reader_close(&r);
    free(c.x);
    free(c.y);
    for (size_t k = 0; k < c.cs.names.n; k++) free(c.cs.names.v[k]);
    free(c.cs.names.v);
    free(c.cs.classes.v);
    free(c.cs.classes_buf);
    return st;
}
