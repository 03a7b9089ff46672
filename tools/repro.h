/* repro.h — `dpcorr repro TARGET`: reproduction of papers' tables and figures. Each target is
 * one function in a repro_<paper>.c file and one line in the table of cmd_repro.c; it writes
 * CSV files, a PNG (tools/plot.h) and a JSON summary into the output directory and states which
 * paper numbers it reproduces and which it cannot. */
#ifndef DPCORR_TOOLS_REPRO_H
#define DPCORR_TOOLS_REPRO_H

#include <stdint.h>
#include <stdio.h>

typedef struct repro_opts {
    const char *target; /* "nu-fig1", ... */
    int quick;          /* reduced grids and horizons (< 1 minute) */
    int smoke;          /* tiny grids for sanitizer test runs (implies quick; numbers not meaningful) */
    int json;           /* print the JSON summary on stdout instead of the text report */
    const char *out;    /* output directory (created) */
    uint64_t seed;      /* root seed of every simulation (recorded) */
    const char *const *files; /* every file the target writes into out (NULL-terminated):
                                 checked before any work; repro_open refuses any other */
} repro_opts;

/* A file being written (a temporary renamed into place by repro_close). */
typedef struct repro_out {
    FILE *f;
    struct dpc_io_out *h;
} repro_out;
#define REPRO_MAX_OPEN 8

/* The report under construction: text lines (stdout unless --json) and a JSON object. */
typedef struct repro_ctx {
    const repro_opts *o;
    FILE *json;         /* memstream: the members of the summary object */
    char *json_buf;
    size_t json_len;
    int json_first;
    int plots_ok;       /* 0 if some PNG could not be made */
    int write_failed;   /* a CSV could not be written completely (repro_close): exit 1 */
    repro_out open[REPRO_MAX_OPEN]; /* files of repro_open not yet closed */
    double t0;          /* wall-clock start */
} repro_ctx;

/* Helpers (repro_util.c). */
double repro_now(void);
/* Whether name is among the target's declared outputs (repro_opts.files). */
int repro_declared(const repro_ctx *c, const char *name);
/* Opens out/name for writing: a temporary beside it, renamed over it by repro_close, so a
 * failed write keeps the previous file (prints the error and returns NULL on failure; a name
 * the target did not declare is refused). */
FILE *repro_open(repro_ctx *c, const char *name);
/* Commits a file of repro_open; a write error is printed and makes the command exit 1. */
void repro_close(repro_ctx *c, FILE *f);
void repro_say(repro_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void repro_json_num(repro_ctx *c, const char *key, double v);
/* JSON text by a format; printf's nan / inf become null / "inf" (as repro_json_num). */
void repro_json_fmt(repro_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void repro_json_str(repro_ctx *c, const char *key, const char *v);
/* A JSON array of strings. */
void repro_json_strs(repro_ctx *c, const char *key, const char *const *v, size_t n);
/* Raw member: key and an already formatted JSON value. */
void repro_json_raw(repro_ctx *c, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Renders a plot into out/name.png; reports the outcome. */
struct plot_panel;
void repro_plot(repro_ctx *c, const char *name, const struct plot_panel *panels, size_t n);
/* The same with fixed y ranges (plot_opts.ylim: 2 per panel; ymin >= ymax: autoscaled). */
void repro_plot_ylim(repro_ctx *c, const char *name, const struct plot_panel *panels, size_t n,
                     const double *ylim);

/* Removes the temporaries of files not closed (a target's error path). */
void repro_abort_open(repro_ctx *c);

/* Targets. Return 0 on success, 1 on runtime failure. */
int repro_nu_fig1(repro_ctx *c);
int repro_nu_fig2(repro_ctx *c);
int repro_nu_fig3(repro_ctx *c);
int repro_nu_tables(repro_ctx *c);
int repro_nu_fig4(repro_ctx *c);
int repro_ambssgd(repro_ctx *c); /* repro_ambssgd.c (papers/001) */
int repro_kan(repro_ctx *c);
/* The Fashion-MNIST section of `repro kan` (tools/repro_kan_fmnist.c). */
int repro_kan_fmnist(repro_ctx *c);
int repro_srgd(repro_ctx *c);

#endif

/* The nu-DP-FTRL targets' computations are the library's (dpcorr/papers/nu_repro.h). */
#include "dpcorr/papers/nu_repro.h"
