/* jw.c — the JSON writer; see jw.h. */
#include "jw.h"

#include <math.h>

static void sep(jw *w, const char *key)
{
    int d = w->depth;
    if (w->count[d]++) fputc(',', w->f);
    int newline = !w->oneline && (d == 1 || (d == 2 && w->close[d] == ']'));
    if (newline) fprintf(w->f, "\n%*s", 2 * d, "");
    else if (w->count[d] > 1) fputc(' ', w->f);
    if (key) {
        fputc('"', w->f);
        for (const unsigned char *p = (const unsigned char *)key; *p; p++) fputc(*p, w->f);
        fputs("\": ", w->f);
    }
}

static void open_level(jw *w, char open, char close)
{
    fputc(open, w->f);
    if (w->depth + 1 < JW_DEPTH) w->depth++;
    w->count[w->depth] = 0;
    w->close[w->depth] = close;
}

void jw_begin(jw *w, FILE *f)
{
    w->f = f;
    w->depth = 0;
    w->count[0] = 0;
    w->oneline = 0;
    open_level(w, '{', '}');
}

void jw_begin_line(jw *w, FILE *f)
{
    jw_begin(w, f);
    w->oneline = 1;
}

void jw_obj(jw *w, const char *key)
{
    sep(w, key);
    open_level(w, '{', '}');
}

void jw_arr(jw *w, const char *key)
{
    sep(w, key);
    open_level(w, '[', ']');
}

void jw_end(jw *w)
{
    if (w->depth == 0) return;
    int d = w->depth;
    if (!w->oneline && w->count[d] && (d == 1 || (d == 2 && w->close[d] == ']')))
        fprintf(w->f, "\n%*s", 2 * (d - 1), "");
    fputc(w->close[d], w->f);
    w->depth--;
}

void jw_finish(jw *w)
{
    while (w->depth > 0) jw_end(w);
    fputc('\n', w->f);
}

static void number(FILE *f, double v)
{
    if (isnan(v)) fputs("null", f);
    else if (isinf(v)) fputs(v > 0 ? "\"inf\"" : "\"-inf\"", f);
    else fprintf(f, "%.17g", v);
}

void jw_num(jw *w, const char *key, double v)
{
    sep(w, key);
    number(w->f, v);
}

void jw_int(jw *w, const char *key, long long v)
{
    sep(w, key);
    fprintf(w->f, "%lld", v);
}

void jw_str(jw *w, const char *key, const char *v)
{
    sep(w, key);
    fputc('"', w->f);
    for (const unsigned char *p = (const unsigned char *)(v ? v : ""); *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(w->f, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f) fprintf(w->f, "\\u%04x", *p);
        else fputc(*p, w->f);
    }
    fputc('"', w->f);
}

void jw_bool(jw *w, const char *key, int v)
{
    sep(w, key);
    fputs(v ? "true" : "false", w->f);
}

void jw_null(jw *w, const char *key)
{
    sep(w, key);
    fputs("null", w->f);
}

void jw_raw(jw *w, const char *key, const char *json)
{
    sep(w, key);
    fputs(json, w->f);
}

void jw_nums(jw *w, const char *key, const double *v, size_t n)
{
    sep(w, key);
    fputc('[', w->f);
    for (size_t i = 0; i < n; i++) {
        if (i) fputs(", ", w->f);
        number(w->f, v[i]);
    }
    fputc(']', w->f);
}
