/* plot.h — a small reusable plotting helper for the CLI (never used by the library): writes the
 * data (one gnuplot data block per series) and a gnuplot script next to each other, then runs
 * gnuplot (Debian gnuplot-nox; pngcairo terminal, or png when cairo is missing) to make a PNG.
 * Without gnuplot the data and script are still written and plot_render says so.
 *
 *   plot_series s[] = {{"theory", x, y, NULL, n, PLOT_LINES}, {"sim", x2, y2, e2, n2, PLOT_ERRORBARS}};
 *   plot_panel p = {"Figure 1 (left)", "eta", "ratio", 1, 0, s, 2};
 *   plot_render("out", "fig1", &p, 1, msg, sizeof msg);   // out/fig1.dat, out/fig1.gp, out/fig1.png
 */
#ifndef DPCORR_TOOLS_PLOT_H
#define DPCORR_TOOLS_PLOT_H

#include <stddef.h>

typedef enum plot_style { PLOT_LINES = 0, PLOT_POINTS, PLOT_LINESPOINTS, PLOT_ERRORBARS, PLOT_IMPULSES } plot_style;

typedef struct plot_series {
    const char *title;
    const double *x, *y;
    const double *yerr; /* PLOT_ERRORBARS: (n) half-widths; else NULL */
    size_t n;
    plot_style style;
} plot_series;

typedef struct plot_panel {
    const char *title, *xlabel, *ylabel;
    int logx, logy;
    const plot_series *series;
    size_t nseries;
} plot_panel;

/* Writes dir/name.dat and dir/name.gp and runs gnuplot to produce dir/name.png (panels side by
 * side). Returns 0 when the PNG was made, 1 when gnuplot is missing or failed (msg says why;
 * data and script are written), -1 when the files could not be written. Non-finite points and
 * non-positive values on log axes are skipped. */
int plot_render(const char *dir, const char *name, const plot_panel *panels, size_t npanels,
                char *msg, size_t msglen);

/* 1 if a gnuplot executable is on PATH. */
int plot_have_gnuplot(void);

#endif
