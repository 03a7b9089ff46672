/* plot.h — a small reusable plotting helper for the CLI (never used by the library): writes the
 * data (one gnuplot data block per series) and a gnuplot script into a private directory beside
 * the PNG, runs gnuplot (Debian gnuplot-nox; pngcairo terminal, or png when cairo is missing),
 * checks the PNG is complete and renames it onto the target, so that the previous PNG survives
 * any failure (a full disk, gnuplot failing). A symbolic link as the target is written through
 * (the file it names is replaced, the link stays). The data and script are removed afterwards
 * unless asked for (plot_opts.keep, or $DPCORR_PLOT_KEEP_DATA=1); without gnuplot they are kept
 * beside the PNG's path (the only output) and plot_render says so.
 *
 *   plot_series s[] = {{"theory", x, y, NULL, n, PLOT_LINES},
 *                      {"sim", x2, y2, e2, n2, PLOT_ERRORBARS}};
 *   plot_panel p = {"Figure 1 (left)", "eta", "ratio", 1, 0, s, 2};
 *   plot_opts po = {1, NULL};
 *   plot_render("out", "fig1", &p, 1, &po, msg, sizeof msg);  // out/fig1.png (+ fig1.dat, .gp)
 *
 * Layout: panels side by side, each with its legend below its x-axis label (room reserved, so a
 * legend never covers a label or data); every axis range autoscaled with a margin beyond the
 * data (3% on x, 5% on y), so a series or reference line at the end of the range is not drawn
 * on the border; a series keeps its colour, marker and dash type in every panel (by title). */
#ifndef DPCORR_TOOLS_PLOT_H
#define DPCORR_TOOLS_PLOT_H

#include <stddef.h>

/* PLOT_ERRORBARS: points with error bars; PLOT_ERRORLINES: the same joined by lines */
typedef enum plot_style {
    PLOT_LINES = 0, PLOT_POINTS, PLOT_LINESPOINTS, PLOT_ERRORBARS, PLOT_IMPULSES, PLOT_ERRORLINES
} plot_style;

typedef struct plot_series {
    const char *title;
    const double *x, *y;
    const double *yerr; /* PLOT_ERRORBARS, PLOT_ERRORLINES: (n) half-widths; else NULL */
    size_t n;
    plot_style style;
} plot_series;

typedef struct plot_panel {
    const char *title, *xlabel, *ylabel;
    int logx, logy;
    const plot_series *series;
    size_t nseries;
} plot_panel;

typedef struct plot_opts {
    int keep;            /* leave NAME.dat and NAME.gp (runnable in dir) beside the PNG; 0:
                            removed unless $DPCORR_PLOT_KEEP_DATA is set to a value other than 0 */
    const double *ylim;  /* NULL, or 2 per panel: ymin < ymax fixes that panel's y range (a
                            zoom; what lies outside is clipped); else autoscaled */
} plot_opts;

/* Makes dir/name.png from the panels (side by side); po NULL: the defaults (side files removed,
 * every range autoscaled). Returns 0 when the PNG was made, 1 when gnuplot is missing (the
 * data and script are kept, msg says where), -1 on any failure (a write, gnuplot, an incomplete
 * PNG: msg says which; the previous dir/name.png is untouched). Non-finite points and
 * non-positive values on log axes are skipped; a series with no point left is omitted (with its
 * legend entry), a panel with none says "no data". */
int plot_render(const char *dir, const char *name, const plot_panel *panels, size_t npanels,
                const plot_opts *po, char *msg, size_t msglen);

/* 1 if a gnuplot executable is on PATH. */
int plot_have_gnuplot(void);

#endif
