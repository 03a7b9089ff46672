/* textnum.c — readers for number lists and lower-triangular matrices (see dpcorr/io.h). */
#include "dpcorr/io.h"
#include "common/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest line accepted (a dense matrix row of 10^6 numbers fits): the bound that makes a device
 * such as /dev/zero an error instead of an unbounded read. */
#define TEXT_MAX_LINE ((size_t)64 << 20)
/* Most numbers dpc_io_read_numbers returns when the caller sets no limit (1 GiB of doubles). */
#define TEXT_MAX_NUMBERS ((size_t)1 << 27)

/* Line reader that grows its buffer up to TEXT_MAX_LINE. Returns -1 at EOF, -2 out of memory,
 * -3 a NUL byte (a binary file or a device), -4 a line over TEXT_MAX_LINE. */
static long read_line(FILE *f, char **buf, size_t *cap)
{
    size_t len = 0;
    int c;
    while ((c = fgetc(f)) != EOF) {
        if (c == '\0') return -3;
        if (len >= TEXT_MAX_LINE) return -4;
        if (len + 2 > *cap) {
            size_t nc = *cap ? *cap * 2 : 256;
            char *nb = realloc(*buf, nc);
            if (!nb) return -2;
            *buf = nb;
            *cap = nc;
        }
        if (c == '\n') break;
        (*buf)[len++] = (char)c;
    }
    if (c == EOF && len == 0) return -1;
    if (!*buf) { /* empty last line */
        *buf = malloc(1);
        if (!*buf) return -2;
        *cap = 1;
    }
    (*buf)[len] = '\0';
    char *hash = strchr(*buf, '#');
    if (hash) *hash = '\0';
    return (long)len;
}

/* The error of a read_line failure at line `lineno` of path. */
static dpc_status line_error(long code, const char *path, size_t lineno, dpc_error *err)
{
    if (code == -3)
        return dpc_error_set(err, DPC_E_FORMAT, "%s:%zu: NUL byte (a binary file or a device?)",
                             path, lineno);
    if (code == -4)
        return dpc_error_set(err, DPC_E_FORMAT, "%s:%zu: line longer than %zu bytes", path,
                             lineno, TEXT_MAX_LINE);
    return DPC__NOMEM(err, "line buffer");
}

/* Parses the numbers of one line, appending to *v. Returns DPC_OK or an error naming path:line. */
static dpc_status parse_line(char *line, const char *path, size_t lineno, double **v, size_t *n,
                             size_t *cap, size_t max_count, dpc_error *err)
{
    char *p = line;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == ',' || *p == '\r') p++;
        if (*p == '\0') return DPC_OK;
        char *end;
        errno = 0;
        double x = strtod(p, &end);
        if (end == p) {
            char tok[32];
            size_t k = 0;
            while (p[k] && p[k] != ' ' && p[k] != '\t' && p[k] != ',' && k < sizeof tok - 1) {
                tok[k] = p[k];
                k++;
            }
            tok[k] = '\0';
            return dpc_error_set(err, DPC_E_FORMAT, "%s:%zu: expected a number, got '%s'", path,
                                 lineno, tok);
        }
        if (*end && *end != ' ' && *end != '\t' && *end != ',' && *end != '\r')
            return dpc_error_set(err, DPC_E_FORMAT, "%s:%zu: junk after number: '%.16s'", path,
                                 lineno, end);
        if (!isfinite(x) || errno == ERANGE)
            return dpc_error_set(err, DPC_E_FORMAT, "%s:%zu: non-finite or out-of-range value",
                                 path, lineno);
        if (max_count && *n >= max_count)
            return dpc_error_set(err, DPC_E_FORMAT, "%s:%zu: more than %zu numbers", path, lineno,
                                 max_count);
        if (*n == *cap) {
            size_t nc = *cap ? *cap * 2 : 64;
            double *nv = realloc(*v, nc * sizeof *nv);
            if (!nv) return DPC__NOMEM(err, "number list");
            *v = nv;
            *cap = nc;
        }
        (*v)[(*n)++] = x;
        p = end;
    }
}

dpc_status dpc_io_read_numbers(const char *path, size_t max_count, double **out, size_t *count,
                               dpc_error *err)
{
    *out = NULL;
    *count = 0;
    dpc_status ost;
    FILE *f = dpc__fopen_input(path, 0, &ost, err); /* never blocks on a FIFO */
    if (!f) return ost;
    char *line = NULL;
    size_t cap = 0, vcap = 0, n = 0, lineno = 0;
    double *v = NULL;
    dpc_status st = DPC_OK;
    long len;
    while ((len = read_line(f, &line, &cap)) >= 0) {
        lineno++;
        st = parse_line(line, path, lineno, &v, &n, &vcap, max_count ? max_count : TEXT_MAX_NUMBERS,
                        err);
        if (st) break;
    }
    if (!st && len < -1) st = line_error(len, path, lineno + 1, err);
    if (!st && ferror(f)) st = dpc_error_set(err, DPC_E_IO, "%s: read error", path);
    if (!st && n == 0) st = dpc_error_set(err, DPC_E_FORMAT, "%s: no numbers in file", path);
    fclose(f);
    free(line);
    if (st) {
        free(v);
        return st;
    }
    *out = v;
    *count = n;
    return DPC_OK;
}

dpc_status dpc_io_read_lower_triangular(const char *path, size_t n, double **out, size_t *n_out,
                                        dpc_error *err)
{
    *out = NULL;
    dpc_status ost;
    FILE *f = dpc__fopen_input(path, 0, &ost, err); /* never blocks on a FIFO */
    if (!f) return ost;
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    dpc_status st = DPC_OK;
    long len;
    /* Rows are collected first (n may be unknown): rows[i] has rowcnt[i] numbers, read from
     * line rowline[i]. */
    double **rows = NULL;
    size_t *rowcnt = NULL, *rowline = NULL, nrows = 0, rowscap = 0;
    double *M = NULL;
    while ((len = read_line(f, &line, &cap)) >= 0) {
        lineno++;
        double *v = NULL;
        size_t cnt = 0, vcap = 0;
        st = parse_line(line, path, lineno, &v, &cnt, &vcap, 4096, err);
        if (st) {
            free(v);
            break;
        }
        if (cnt == 0) {
            free(v);
            continue;
        }
        if (nrows == 4096) {
            free(v);
            st = dpc_error_set(err, DPC_E_RANGE, "%s:%zu: more than 4096 rows (the dense limit)",
                               path, lineno);
            break;
        }
        if (nrows == rowscap) {
            size_t nc = rowscap ? rowscap * 2 : 64;
            double **nr = realloc(rows, nc * sizeof *nr);
            if (nr) rows = nr;
            size_t *nl = realloc(rowcnt, nc * sizeof *nl);
            if (nl) rowcnt = nl;
            size_t *nn = realloc(rowline, nc * sizeof *nn);
            if (nn) rowline = nn;
            if (!nr || !nl || !nn) {
                free(v);
                st = DPC__NOMEM(err, "matrix rows");
                break;
            }
            rowscap = nc;
        }
        rows[nrows] = v;
        rowcnt[nrows] = cnt;
        rowline[nrows] = lineno;
        nrows++;
    }
    if (!st && len < -1) st = line_error(len, path, lineno + 1, err);
    if (!st && nrows == 0) st = dpc_error_set(err, DPC_E_FORMAT, "%s: no rows in file", path);
    size_t N = n ? n : nrows;
    if (!st && nrows != N)
        st = dpc_error_set(err, DPC_E_FORMAT, "%s: expected %zu rows, found %zu", path, N, nrows);
    if (!st) {
        M = dpc__calloc(N * N, sizeof *M);
        if (!M) st = DPC__NOMEM(err, "dense matrix");
    }
    for (size_t t = 0; !st && t < N; t++) {
        size_t cnt = rowcnt[t];
        if (cnt != t + 1 && cnt != N) {
            st = dpc_error_set(err, DPC_E_FORMAT,
                               "%s:%zu: row %zu has %zu entries (want %zu, or %zu with zeros above "
                               "the diagonal)",
                               path, rowline[t], t, cnt, t + 1, N);
            break;
        }
        for (size_t j = 0; j < cnt; j++) {
            if (j > t && rows[t][j] != 0.0) {
                st = dpc_error_set(err, DPC_E_FORMAT,
                                   "%s:%zu: entry (%zu,%zu) above the diagonal is not zero", path,
                                   rowline[t], t, j);
                break;
            }
            if (j <= t) M[t * N + j] = rows[t][j];
        }
    }
    for (size_t t = 0; t < nrows; t++) free(rows[t]);
    free(rows);
    free(rowcnt);
    free(rowline);
    free(line);
    fclose(f);
    if (st) {
        free(M);
        return st;
    }
    *out = M;
    *n_out = N;
    return DPC_OK;
}
