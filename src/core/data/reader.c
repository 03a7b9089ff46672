/* reader.c — the data module's file reader (zlib: plain or gzip by magic), line iterator,
 * strict number parsing and classification-label mapping shared by the loaders. */
#include "data/internal.h"
#include "common/util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define READER_CHUNK ((size_t)1 << 16)

/* ==== Reader ================================================================================ */

dpc_status dpc__reader_open(dpc__reader *r, const char *path, dpc_error *err)
{
    memset(r, 0, sizeof *r);
    r->path = path;
    int fd;
    dpc_status st = dpc__open_input(path, 0, &fd, err); /* never blocks on a FIFO */
    if (st) return st;
    errno = 0;
    r->f = gzdopen(fd, "rb");
    if (!r->f) {
        close(fd);
        return dpc_error_set(err, DPC_E_IO, "%s: cannot open: %s", path,
                             errno ? strerror(errno) : "out of memory");
    }
    (void)gzbuffer(r->f, 1u << 17);
    return DPC_OK;
}

void dpc__reader_close(dpc__reader *r)
{
    if (r->f) gzclose_r(r->f);
    free(r->buf);
    free(r->line);
    memset(r, 0, sizeof *r);
}

/* Turns the state of a gzFile after a short or failed read into a status. */
static dpc_status gz_status(dpc__reader *r, dpc_error *err)
{
    int code = Z_OK;
    const char *msg = gzerror(r->f, &code);
    if (code == Z_OK) return DPC_OK;
    if (code == Z_ERRNO)
        return dpc_error_set(err, DPC_E_IO, "%s: read error: %s", r->path, strerror(errno));
    if (code == Z_BUF_ERROR)
        return dpc_error_set(err, DPC_E_FORMAT,
                             "%s: byte %llu: gzip stream truncated (unexpected end of file)",
                             r->path, (unsigned long long)r->offset);
    if (code == Z_MEM_ERROR) return DPC__NOMEM(err, "gzip state");
    return dpc_error_set(err, DPC_E_FORMAT, "%s: byte %llu: corrupt gzip data: %s", r->path,
                         (unsigned long long)r->offset, msg ? msg : "unknown zlib error");
}

dpc_status dpc__reader_read(dpc__reader *r, void *dst, size_t n, size_t *got, dpc_error *err)
{
    unsigned char *p = dst;
    size_t total = 0;
    *got = 0;
    while (total < n && !r->eof) {
        size_t want = n - total;
        if (want > (size_t)1 << 30) want = (size_t)1 << 30;
        int k = gzread(r->f, p + total, (unsigned)want);
        if (k < 0) {
            dpc_status st = gz_status(r, err);
            return st ? st : dpc_error_set(err, DPC_E_IO, "%s: read error", r->path);
        }
        total += (size_t)k;
        r->offset += (uint64_t)k;
        if ((size_t)k < want) {
            dpc_status st = gz_status(r, err);
            if (st) return st;
            r->eof = 1; /* gzread is short only at the end of the data */
        }
    }
    *got = total;
    return DPC_OK;
}

/* Refills the chunk buffer; returns DPC_OK (possibly with nothing new at EOF) or the error. */
static dpc_status fill(dpc__reader *r, dpc_error *err)
{
    if (!r->buf) {
        r->buf = malloc(READER_CHUNK);
        if (!r->buf) return DPC__NOMEM(err, "read buffer");
        r->cap = READER_CHUNK;
    }
    size_t got = 0;
    dpc_status st = dpc__reader_read(r, r->buf, r->cap, &got, err);
    if (st) return st;
    r->len = got;
    r->pos = 0;
    if (got == 0) r->eof = 1;
    return 0;
}

/* Longest data line (a row of 10^6 features fits). */
#define READER_MAX_LINE ((size_t)256 << 20)

int dpc__reader_line(dpc__reader *r, size_t *len_out, dpc_error *err)
{
    size_t len = 0;
    int have = 0;
    for (;;) {
        if (r->pos == r->len) {
            if (r->eof) break;
            dpc_status st = fill(r, err);
            if (st) return -(int)st;
            if (r->len == 0) break;
        }
        unsigned char *start = r->buf + r->pos;
        size_t avail = r->len - r->pos;
        unsigned char *nl = memchr(start, '\n', avail);
        size_t take = nl ? (size_t)(nl - start) : avail;
        have = 1;
        /* bounded: a NUL byte (binary data, /dev/zero, /dev/urandom) or an endless line is an
         * error at once, never an unbounded read */
        if (memchr(start, '\0', take))
            return -(int)dpc_error_set(err, DPC_E_FORMAT, "%s:%zu: NUL byte in line (binary file "
                                       "or a device?)", r->path, r->lineno + 1);
        if (len + take > READER_MAX_LINE)
            return -(int)dpc_error_set(err, DPC_E_FORMAT, "%s:%zu: line longer than %zu bytes",
                                       r->path, r->lineno + 1, (size_t)READER_MAX_LINE);
        if (len + take + 1 > r->line_cap || !r->line) {
            size_t nc = r->line_cap ? r->line_cap : 256;
            while (nc < len + take + 1) {
                if (nc > SIZE_MAX / 2) return -(int)DPC__NOMEM(err, "line buffer");
                nc *= 2;
            }
            char *nb = realloc(r->line, nc);
            if (!nb) return -(int)DPC__NOMEM(err, "line buffer");
            r->line = nb;
            r->line_cap = nc;
        }
        memcpy(r->line + len, start, take);
        len += take;
        r->pos += take;
        if (nl) {
            r->pos++; /* the '\n' */
            break;
        }
    }
    if (!have) return 0;
    r->lineno++;
    r->line[len] = '\0';
    if (memchr(r->line, '\0', len))
        return -(int)dpc_error_set(err, DPC_E_FORMAT, "%s:%zu: NUL byte in line (binary file?)",
                                   r->path, r->lineno);
    if (len && r->line[len - 1] == '\r') r->line[--len] = '\0';
    if (r->lineno == 1 && len >= 3 && !memcmp(r->line, "\xEF\xBB\xBF", 3)) { /* UTF-8 BOM */
        memmove(r->line, r->line + 3, len - 2);
        len -= 3;
    }
    *len_out = len;
    return 1;
}

/* ==== Numbers =============================================================================== */

int dpc__parse_double(const char *s, double *out)
{
    while (*s == ' ' || *s == '\t') s++;
    if (!*s) return 1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s) return 2;
    while (*end == ' ' || *end == '\t') end++;
    if (*end) return 2;
    if (!isfinite(v)) return 3;
    if (errno == ERANGE && fabs(v) > 1.0) return 3; /* overflow; underflow to ~0 is accepted */
    *out = v;
    return 0;
}

const char *dpc__parse_double_why(int code)
{
    switch (code) {
    case 1: return "empty field";
    case 2: return "not a number";
    case 3: return "NaN/Inf or out-of-range number";
    }
    return "ok";
}

/* ==== Labels ================================================================================ */

dpc_status dpc__label_class(dpc__labels *L, double v, const char *path, size_t line, double *out,
                            dpc_error *err)
{
    if (v != floor(v))
        return dpc_error_set(err, DPC_E_FORMAT, "%s:%zu: label %.17g is not an integer", path, line,
                             v);
    size_t cls;
    if (v == -1.0 && (L->k == 0 || L->k == 2)) {
        if (L->line_zero)
            return dpc_error_set(err, DPC_E_FORMAT,
                                 "%s:%zu: label -1 (read as class 0 under the -1/+1 convention) "
                                 "but line %zu has label 0",
                                 path, line, L->line_zero);
        if (!L->line_neg1) L->line_neg1 = line;
        cls = 0;
    } else {
        size_t lim = L->k ? L->k : DPC_DATA_MAX_CLASSES;
        if (v < 0 || v >= (double)lim) {
            if (L->k)
                return dpc_error_set(err, DPC_E_FORMAT, "%s:%zu: label %.17g out of range 0..%zu",
                                     path, line, v, L->k - 1);
            return dpc_error_set(err, DPC_E_FORMAT,
                                 "%s:%zu: label %.17g out of range (classes are 0..%d)", path, line,
                                 v, DPC_DATA_MAX_CLASSES - 1);
        }
        cls = (size_t)v;
        if (cls == 0) {
            if (L->line_neg1)
                return dpc_error_set(err, DPC_E_FORMAT,
                                     "%s:%zu: label 0 but line %zu has label -1 (read as class "
                                     "0 under the -1/+1 convention)",
                                     path, line, L->line_neg1);
            if (!L->line_zero) L->line_zero = line;
        }
    }
    if (!L->any || cls > L->max_seen) L->max_seen = cls;
    L->any = 1;
    *out = (double)cls;
    return DPC_OK;
}

size_t dpc__labels_count(const dpc__labels *L)
{
    if (L->k) return L->k;
    return L->any ? L->max_seen + 1 : 0;
}

/* ==== Dataset log =========================================================================== */

void dpc__dataset_note(dpc_dataset *ds, int data_dependent, const char *fmt, ...)
{
    char item[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(item, sizeof item, fmt, ap);
    va_end(ap);
    if (data_dependent) ds->data_dependent = 1;
    char *log = ds->preprocessing;
    size_t cap = sizeof ds->preprocessing, len = strlen(log);
    int w = snprintf(log + len, cap - len, "%s%s%s", len ? "; " : "", item,
                     data_dependent ? " [data-dependent]" : "");
    if (w < 0 || (size_t)w >= cap - len) memcpy(log + cap - 4, "...", 4);
}

void dpc__dataset_source(dpc_dataset *ds, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ds->source, sizeof ds->source, fmt, ap);
    va_end(ap);
}

double dpc__norm2(const double *v, size_t n)
{
    double s = 0;
    for (size_t j = 0; j < n; j++) s += v[j] * v[j];
    if (isfinite(s) && s > 0x1p-900) return sqrt(s);
    /* Overflow, underflow or NaN: rescale by the largest magnitude. */
    double m = 0;
    for (size_t j = 0; j < n; j++) {
        double a = fabs(v[j]);
        if (a > m || isnan(a)) m = a;
    }
    if (m == 0 || !isfinite(m)) return m;
    s = 0;
    for (size_t j = 0; j < n; j++) {
        double t = v[j] / m;
        s += t * t;
    }
    return m * sqrt(s);
}
