/* repro_util.c — output helpers shared by the repro targets. */
#include "cli.h"
#include "repro.h"
#include "plot.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

double repro_now(void) { return cli_now(); }

FILE *repro_open(repro_ctx *c, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", c->o->out, name);
    FILE *f = fopen(path, "w");
    if (!f) fprintf(stderr, "dpcorr repro: cannot write %s: %s\n", path, strerror(errno));
    return f;
}

void repro_close(repro_ctx *c, FILE *f)
{
    if (!f) return;
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    if (bad) {
        fprintf(stderr, "dpcorr repro %s: write error in %s\n", c->o->target, c->o->out);
        c->write_failed = 1;
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

void repro_json_raw(repro_ctx *c, const char *k, const char *fmt, ...)
{
    key(c, k);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(c->json, fmt, ap);
    va_end(ap);
}

void repro_plot(repro_ctx *c, const char *name, const struct plot_panel *panels, size_t n)
{
    repro_plot_ylim(c, name, panels, n, NULL);
}

void repro_plot_ylim(repro_ctx *c, const char *name, const struct plot_panel *panels, size_t n,
                     const double *ylim)
{
    char msg[8600];
    plot_opts po = {1, ylim}; /* the script and data are part of a reproduction's output */
    int r = plot_render(c->o->out, name, panels, n, &po, msg, sizeof msg);
    if (r != 0) c->plots_ok = 0;
    repro_say(c, "plot: %s\n", msg);
    if (r != 0) fprintf(stderr, "dpcorr repro: %s\n", msg);
}

double repro_loglog_slope(const double *x, const double *y, size_t n)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(x[i] > 0) || !(y[i] > 0)) continue;
        double lx = log(x[i]), ly = log(y[i]);
        sx += lx, sy += ly, sxx += lx * lx, sxy += lx * ly;
        k++;
    }
    if (k < 2) return NAN;
    double kk = (double)k;
    return (kk * sxy - sx * sy) / (kk * sxx - sx * sx);
}
