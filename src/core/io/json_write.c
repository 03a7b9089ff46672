/* json_write.c — the JSON writer for reports and --json outputs; see dpcorr/io.h. It writes
 * only to the caller's stream. */
#include "dpcorr/field.h"
#include "dpcorr/io.h"

#include <math.h>

/* The length of the well-formed UTF-8 sequence at p (RFC 3629: no overlong forms, no
 * surrogates, at most U+10FFFF), or 0 when the byte at p does not start one. */
static int utf8_len(const unsigned char *p)
{
    unsigned c = p[0];
    if (c < 0x80) return 1;
    int n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (!n) return 0;
    unsigned lo = 0x80, hi = 0xbf; /* the range of the second byte */
    if (c == 0xe0) lo = 0xa0;
    else if (c == 0xed) hi = 0x9f; /* U+D800..U+DFFF are surrogates */
    else if (c == 0xf0) lo = 0x90;
    else if (c == 0xf4) hi = 0x8f;
    if (p[1] < lo || p[1] > hi) return 0;
    for (int k = 2; k < n; k++)
        if (p[k] < 0x80 || p[k] > 0xbf) return 0;
    return n;
}

/* A JSON string: quotes, backslashes and control bytes escaped; every byte that is not part of
 * valid UTF-8 (a Latin-1 --label, a CSV column name in another encoding) written as U+FFFD, the
 * replacement character (as the escape \ufffd), so that strict parsers always accept the report. */
static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
        int n = utf8_len(p);
        if (!n) fputs("\\ufffd", f);
        else if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f) fprintf(f, "\\u%04x", *p);
        else fwrite(p, 1, (size_t)n, f);
        p += n ? n : 1;
    }
    fputc('"', f);
}

static void sep(dpc_json_writer *w, const char *key)
{
    int d = w->depth;
    if (w->count[d]++) fputc(',', w->f);
    int newline = !w->oneline && (d == 1 || (d == 2 && w->close[d] == ']'));
    if (newline) fprintf(w->f, "\n%*s", 2 * d, "");
    else if (w->count[d] > 1) fputc(' ', w->f);
    if (key) {
        put_string(w->f, key);
        fputs(": ", w->f);
    }
}

static void open_level(dpc_json_writer *w, char open, char close)
{
    fputc(open, w->f);
    if (w->depth + 1 < DPC_JSON_DEPTH) w->depth++;
    w->count[w->depth] = 0;
    w->close[w->depth] = close;
}

void dpc_json_begin(dpc_json_writer *w, FILE *f)
{
    w->f = f;
    w->depth = 0;
    w->count[0] = 0;
    w->oneline = 0;
    w->out = NULL;
    open_level(w, '{', '}');
}

void dpc_json_begin_line(dpc_json_writer *w, FILE *f)
{
    dpc_json_begin(w, f);
    w->oneline = 1;
}

void dpc_json_obj(dpc_json_writer *w, const char *key)
{
    sep(w, key);
    open_level(w, '{', '}');
}

void dpc_json_arr(dpc_json_writer *w, const char *key)
{
    sep(w, key);
    open_level(w, '[', ']');
}

void dpc_json_end(dpc_json_writer *w)
{
    if (w->depth == 0) return;
    int d = w->depth;
    if (!w->oneline && w->count[d] && (d == 1 || (d == 2 && w->close[d] == ']')))
        fprintf(w->f, "\n%*s", 2 * (d - 1), "");
    fputc(w->close[d], w->f);
    w->depth--;
}

void dpc_json_finish(dpc_json_writer *w)
{
    while (w->depth > 0) dpc_json_end(w);
    fputc('\n', w->f);
}

static void number(FILE *f, double v)
{
    if (isnan(v)) fputs("null", f);
    else if (isinf(v)) fputs(v > 0 ? "\"inf\"" : "\"-inf\"", f);
    else fprintf(f, "%.17g", v);
}

void dpc_json_num(dpc_json_writer *w, const char *key, double v)
{
    sep(w, key);
    number(w->f, v);
}

void dpc_json_int(dpc_json_writer *w, const char *key, long long v)
{
    sep(w, key);
    fprintf(w->f, "%lld", v);
}

void dpc_json_str(dpc_json_writer *w, const char *key, const char *v)
{
    sep(w, key);
    put_string(w->f, v);
}

void dpc_json_hash(dpc_json_writer *w, const char *key, uint64_t h)
{
    char hex[24];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
    dpc_json_str(w, key, hex);
}

void dpc_json_bool(dpc_json_writer *w, const char *key, int v)
{
    sep(w, key);
    fputs(v ? "true" : "false", w->f);
}

void dpc_json_null(dpc_json_writer *w, const char *key)
{
    sep(w, key);
    fputs("null", w->f);
}

void dpc_json_raw(dpc_json_writer *w, const char *key, const char *json)
{
    sep(w, key);
    fputs(json, w->f);
}

void dpc_json_nums(dpc_json_writer *w, const char *key, const double *v, size_t n)
{
    sep(w, key);
    fputc('[', w->f);
    for (size_t i = 0; i < n; i++) {
        if (i) fputs(", ", w->f);
        number(w->f, v[i]);
    }
    fputc(']', w->f);
}

void dpc_json_field(dpc_json_writer *w, const dpc_field *f, const void *base)
{
    double v = dpc_field_get(f, base);
    if (f->type == DPC_FIELD_ENUM) dpc_json_str(w, f->name, dpc_field_enum_name(f, (int)v));
    else if (f->type == DPC_FIELD_DOUBLE) dpc_json_num(w, f->name, v);
    else if (f->type == DPC_FIELD_CHAR) { /* the delimiter as written: "," or "space" */
        char c[8];
        dpc_field_format_char((int)v, c, sizeof c);
        dpc_json_str(w, f->name, c);
    } else if (dpc_field_is_numeric(f))
        dpc_json_int(w, f->name, (long long)v);
}
