/* repro_util.c — output helpers shared by the repro targets. */
#include "cli.h"
#include "repro.h"
#include "plot.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

double repro_now(void) { return cli_now(); }

int repro_declared(const repro_ctx *c, const char *name)
{
    for (const char *const *f = c->o->files; f && *f; f++)
        if (!strcmp(*f, name)) return 1;
    return 0;
}

FILE *repro_open(repro_ctx *c, const char *name)
{
    char path[4096];
    if (!repro_declared(c, name)) { /* a file the up-front check did not see: a bug, refused */
        fprintf(stderr, "dpcorr repro %s: internal error: %s is not among the target's declared "
                        "outputs (cmd_repro.c)\n", c->o->target, name);
        c->write_failed = 1;
        return NULL;
    }
    size_t k = 0;
    while (k < REPRO_MAX_OPEN && c->open[k].f) k++;
    if (k == REPRO_MAX_OPEN) {
        fprintf(stderr, "dpcorr repro: too many open outputs\n");
        c->write_failed = 1;
        return NULL;
    }
    snprintf(path, sizeof path, "%s/%s", c->o->out, name);
    FILE *f = cli_out_open(&c->open[k].h, "repro", path);
    c->open[k].f = f;
    return f;
}

void repro_close(repro_ctx *c, FILE *f)
{
    if (!f) return;
    for (size_t k = 0; k < REPRO_MAX_OPEN; k++) {
        if (c->open[k].f != f) continue;
        if (cli_out_commit(c->open[k].h, "repro")) c->write_failed = 1;
        c->open[k].f = NULL;
        c->open[k].h = NULL;
        return;
    }
}

void repro_abort_open(repro_ctx *c)
{
    for (size_t k = 0; k < REPRO_MAX_OPEN; k++) {
        if (!c->open[k].f) continue;
        dpc_io_out_abort(c->open[k].h);
        c->open[k].f = NULL;
        c->open[k].h = NULL;
    }
}

void repro_say(repro_ctx *c, const char *fmt, ...)
{
    va_list ap;
    FILE *f = c->o->json ? stderr : stdout;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fflush(f); /* progress of long runs is visible when redirected */
}

static void key(repro_ctx *c, const char *k)
{
    fprintf(c->json, "%s\n  \"%s\": ", c->json_first ? "" : ",", k);
    c->json_first = 0;
}

static void jstr(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', f);
        if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", (unsigned char)*s);
        else fputc(*s, f);
    }
    fputc('"', f);
}

void repro_json_num(repro_ctx *c, const char *k, double v)
{
    key(c, k);
    if (isfinite(v)) fprintf(c->json, "%.10g", v);
    else if (isnan(v)) fputs("null", c->json);
    else fputs(v > 0 ? "\"inf\"" : "\"-inf\"", c->json);
}

void repro_json_str(repro_ctx *c, const char *k, const char *v)
{
    key(c, k);
    jstr(c->json, v);
}

void repro_json_strs(repro_ctx *c, const char *k, const char *const *v, size_t n)
{
    key(c, k);
    fputc('[', c->json);
    for (size_t i = 0; i < n; i++) {
        if (i) fputs(", ", c->json);
        jstr(c->json, v[i]);
    }
    fputc(']', c->json);
}

/* Writes formatted JSON text with a non-finite number that printf spelled ("nan", "-nan",
 * "inf", "-inf" outside a string) as repro_json_num writes it: null, "inf", "-inf". A slope's
 * standard error over a single seed is NaN; a bare nan is not JSON. */
static void json_vfmt(repro_ctx *c, const char *fmt, va_list ap)
{
    char small[1024], *buf = small;
    va_list cp;
    va_copy(cp, ap);
    int n = vsnprintf(small, sizeof small, fmt, cp);
    va_end(cp);
    if (n < 0) return;
    if ((size_t)n >= sizeof small) {
        if (!(buf = malloc((size_t)n + 1))) return;
        vsnprintf(buf, (size_t)n + 1, fmt, ap);
    }
    int in_str = 0;
    for (const char *p = buf; *p; p++) {
        if (in_str) {
            if (*p == '\\' && p[1]) fputc(*p++, c->json);
            else if (*p == '"') in_str = 0;
        } else if (*p == '"') {
            in_str = 1;
        } else if (p == buf || !isalnum((unsigned char)p[-1])) {
            int neg = *p == '-', len = 3 + neg;
            const char *w = p + neg;
            if ((!strncmp(w, "nan", 3) || !strncmp(w, "inf", 3)) && !isalnum((unsigned char)w[3])) {
                fputs(*w == 'n' ? "null" : neg ? "\"-inf\"" : "\"inf\"", c->json);
                p += len - 1;
                continue;
            }
        }
        fputc(*p, c->json);
    }
    if (buf != small) free(buf);
}

void repro_json_fmt(repro_ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    json_vfmt(c, fmt, ap);
    va_end(ap);
}

void repro_json_raw(repro_ctx *c, const char *k, const char *fmt, ...)
{
    key(c, k);
    va_list ap;
    va_start(ap, fmt);
    json_vfmt(c, fmt, ap);
    va_end(ap);
}

void repro_plot(repro_ctx *c, const char *name, const struct plot_panel *panels, size_t n)
{
    repro_plot_ylim(c, name, panels, n, NULL);
}

void repro_plot_ylim(repro_ctx *c, const char *name, const struct plot_panel *panels, size_t n,
                     const double *ylim)
{
    char msg[8600], png[300];
    snprintf(png, sizeof png, "%s.png", name);
    if (!repro_declared(c, png)) {
        fprintf(stderr, "dpcorr repro %s: internal error: %s is not among the target's declared "
                        "outputs (cmd_repro.c)\n", c->o->target, png);
        c->plots_ok = 0;
        return;
    }
    plot_opts po = {1, ylim}; /* the script and data are part of a reproduction's output */
    int r = plot_render(c->o->out, name, panels, n, &po, msg, sizeof msg);
    if (r != 0) c->plots_ok = 0;
    repro_say(c, "plot: %s\n", msg);
    if (r != 0) fprintf(stderr, "dpcorr repro: %s\n", msg);
}
