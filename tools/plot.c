/* plot.c — gnuplot script + data writer (see plot.h). The PNG is made in a private directory
 * beside the target and renamed onto it only when complete, so a failure at any point (a write
 * of the data or script, gnuplot, a full disk truncating the PNG) leaves the previous PNG as it
 * was; every write is checked. */
#include "plot.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int plot_have_gnuplot(void) { return system("command -v gnuplot >/dev/null 2>&1") == 0; }

/* ---- styles -------------------------------------------------------------------------------- */

/* A gnuplot double-quoted string; control characters (a newline in a --label) become spaces,
 * which would otherwise end the script's line. */
static void gp_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', f);
        fputc((unsigned char)*s < 0x20 ? ' ' : *s, f);
    }
    fputc('"', f);
}

/* The file name stem + ext as a gnuplot single-quoted string (no escapes but '' for a quote). */
static void gp_file(FILE *f, const char *stem, const char *ext)
{
    fputc('\'', f);
    for (; *stem; stem++) {
        if (*stem == '\'') fputc('\'', f);
        fputc(*stem, f);
    }
    fprintf(f, "%s'", ext);
}

/* Twelve distinguishable colours, ten markers and four dash types: a series title keeps all
 * three in every panel, and two series that share a colour (more than 12 titles) still differ
 * in marker or dash. Filled markers first, then open ones. */
static const char *const palette[12] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                        "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                                        "#bcbd22", "#17becf", "#000000", "#aec7e8"};
static const int markers[10] = {7, 5, 9, 11, 13, 15, 6, 4, 8, 12};

static void style_of(FILE *f, plot_style s, size_t ci)
{
    int pt = markers[ci % 10], dt = 1 + (int)(ci % 4);
    switch (s) {
    case PLOT_LINES: fprintf(f, "lines lw 2 dt %d", dt); break;
    case PLOT_POINTS: fprintf(f, "points pt %d ps 1", pt); break;
    case PLOT_LINESPOINTS: fprintf(f, "linespoints lw 1.5 dt %d pt %d ps 0.9", dt, pt); break;
    case PLOT_ERRORBARS: fprintf(f, "yerrorbars pt %d ps 0.9", pt); break;
    case PLOT_ERRORLINES: fprintf(f, "yerrorlines lw 1.5 dt %d pt %d ps 0.9", dt, pt); break;
    case PLOT_IMPULSES: fprintf(f, "impulses lw 3"); break;
    }
    fprintf(f, " lc rgb '%s'", palette[ci % 12]);
}

static int same_title(const char *a, const char *b) { return !strcmp(a ? a : "", b ? b : ""); }

/* The style index of a series title: its rank among the distinct titles of the figure in the
 * order they first appear, so the same series looks the same in every panel. */
static size_t style_index(const plot_panel *panels, size_t npanels, const char *title)
{
    size_t rank = 0;
    for (size_t p = 0; p < npanels; p++)
        for (size_t s = 0; s < panels[p].nseries; s++) {
            const char *t = panels[p].series[s].title;
            if (same_title(t, title)) return rank;
            int seen = 0; /* count t only at its first appearance */
            for (size_t q = 0; q <= p && !seen; q++)
                for (size_t r = 0; r < (q == p ? s : panels[q].nseries) && !seen; r++)
                    seen = same_title(panels[q].series[r].title, t);
            if (!seen) rank++;
        }
    return rank;
}

/* ---- data ---------------------------------------------------------------------------------- */

static int point_ok(const plot_panel *pn, const plot_series *se, size_t i)
{
    double x = se->x[i], y = se->y[i], e = se->yerr ? se->yerr[i] : 0.0;
    if (!isfinite(x) || !isfinite(y) || !isfinite(e)) return 0;
    return !((pn->logx && x <= 0) || (pn->logy && y <= 0));
}

/* A panel's data range, with a margin so that nothing drawn at the end of the range lies on the
 * border (a reference line at the largest value included): 3% of the width on x, 5% on y, in
 * log units on log axes. */
typedef struct { double lo, hi; } range;

static void range_add(range *r, double v)
{
    if (v < r->lo) r->lo = v;
    if (v > r->hi) r->hi = v;
}

static range range_pad(range r, int logscale, double frac)
{
    if (logscale) r.lo = log10(r.lo), r.hi = log10(r.hi);
    double w = r.hi - r.lo;
    if (w > 0) {
        r.lo -= frac * w, r.hi += frac * w;
    } else { /* one value: a range around it (a factor of 2 on log axes, 10% else) */
        double h = logscale ? 0.3 : (r.lo != 0 ? 0.1 * fabs(r.lo) : 1.0);
        r.lo -= h, r.hi += h;
    }
    if (logscale) r.lo = pow(10, r.lo), r.hi = pow(10, r.hi);
    return r;
}

/* Writes one block per series with a point to draw; blk[k] = its block or -1 (omitted), for the
 * series in panel order. Per panel, xr/yr get the padded data ranges (lo > hi: no data). */
static int write_data(FILE *fd, const plot_panel *panels, size_t npanels, long *blk, range *xr,
                      range *yr, int *xint)
{
    long block = 0;
    size_t k = 0;
    for (size_t p = 0; p < npanels; p++) {
        const plot_panel *pn = &panels[p];
        range x = {INFINITY, -INFINITY}, y = x;
        xint[p] = 1;
        for (size_t s = 0; s < pn->nseries; s++, k++) {
            const plot_series *se = &pn->series[s];
            size_t any = 0;
            for (size_t i = 0; i < se->n; i++) {
                if (!point_ok(pn, se, i)) continue;
                double e = se->yerr && (se->style == PLOT_ERRORBARS || se->style == PLOT_ERRORLINES)
                               ? fabs(se->yerr[i]) : 0.0;
                /* no title in the comment: a label may hold a newline */
                if (!any) fprintf(fd, "# panel %zu series %zu\n", p, s);
                fprintf(fd, "%.15g %.15g %.15g\n", se->x[i], se->y[i], e);
                range_add(&x, se->x[i]);
                xint[p] &= se->x[i] == floor(se->x[i]);
                range_add(&y, se->y[i] + e);
                range_add(&y, pn->logy && se->y[i] - e <= 0 ? se->y[i] : se->y[i] - e);
                any++;
            }
            blk[k] = any ? block++ : -1;
            if (any) fprintf(fd, "\n\n");
        }
        xr[p] = x.lo <= x.hi ? range_pad(x, pn->logx, 0.03) : x;
        yr[p] = y.lo <= y.hi ? range_pad(y, pn->logy, 0.05) : y;
    }
    return ferror(fd) ? -1 : 0;
}

/* ---- script -------------------------------------------------------------------------------- */

/* Legend layout: below each panel's x-axis label, in the room reserved for it (one column, or
 * two when the titles are short). */
typedef struct {
    size_t rows[64];  /* per panel (panels beyond 64 share the last count) */
    size_t cols[64];
    size_t maxrows;
} key_layout;

static key_layout key_plan(const plot_panel *panels, size_t npanels, const long *blk)
{
    key_layout kl;
    memset(&kl, 0, sizeof kl);
    size_t k = 0;
    for (size_t p = 0; p < npanels; p++) {
        size_t n = 0, maxlen = 0;
        for (size_t s = 0; s < panels[p].nseries; s++, k++) {
            const char *t = panels[p].series[s].title;
            if (blk[k] < 0 || !t || !*t) continue;
            n++;
            if (strlen(t) > maxlen) maxlen = strlen(t);
        }
        size_t cols = n > 4 && maxlen <= 22 ? 2 : 1, rows = (n + cols - 1) / cols;
        size_t q = p < 64 ? p : 63;
        kl.rows[q] = rows;
        kl.cols[q] = cols;
        if (rows > kl.maxrows) kl.maxrows = rows;
    }
    return kl;
}

/* pixels: title band, plot area, x tics + label, one legend row, legend padding */
enum { PX_TOP = 50, PX_PLOT = 430, PX_XAXIS = 55, PX_ROW = 17, PX_KEYPAD = 22, PX_W = 560 };

static void script_head(FILE *fg, const char *stem, size_t npanels, const key_layout *kl, int *h)
{
    int w = PX_W * (int)npanels, keyh = kl->maxrows ? (int)kl->maxrows * PX_ROW + PX_KEYPAD : 10;
    *h = PX_TOP + PX_PLOT + PX_XAXIS + keyh;
    fprintf(fg, "# generated by dpcorr (tools/plot.c); run it with gnuplot in its directory\n"
                "if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
                "  set terminal pngcairo size %d,%d enhanced font 'Sans,10'\n"
                "} else {\n  set terminal png size %d,%d\n}\nset output ", w, *h, w, *h);
    gp_file(fg, stem, ".png");
    /* the legend goes below the x-axis label, in room reserved here (never over a label) */
    fprintf(fg, "\nset grid\nset tmargin at screen %.5f\nset bmargin at screen %.5f\n",
            1.0 - (double)PX_TOP / *h, (double)(keyh + PX_XAXIS) / *h);
    if (npanels > 1) fprintf(fg, "set multiplot layout 1,%zu\n", npanels);
}

static void set_range(FILE *fg, const char *axis, range r)
{
    if (r.lo < r.hi) fprintf(fg, "set %srange [%.17g:%.17g]\n", axis, r.lo, r.hi);
    else fprintf(fg, "set autoscale %s\n", axis);
}

/* A log axis over less than two decades gets tics at factors of 2 from a power of 10 (1, 2,
 * 4, 8: else one tic or none would be labelled), and below a factor of 4 about five evenly
 * spaced round values; in plain numbers. Other axes: gnuplot's. */
static void log_tics(FILE *fg, const char *axis, int short_log, double lo, double hi)
{
    if (!short_log) {
        fprintf(fg, "set %stics autofreq\n", axis);
        return;
    }
    if (hi >= 4 * lo) {
        double p = pow(10, round(log10(lo)));
        if (p > lo) p /= pow(2, ceil(log2(p / lo)));
        fprintf(fg, "set %stics %.10g, 2\n", axis, p);
        return;
    }
    double raw = (hi - lo) / 5, mag = pow(10, floor(log10(raw))), f = raw / mag;
    double step = (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
    /* labelled with the digits the step needs (a narrow range near 0.5: 0.4998, 0.5) */
    int prec = (int)ceil(log10(hi / step)) + 1, first = 1;
    fprintf(fg, "set %stics (", axis);
    for (double v = ceil(lo / step) * step; v <= hi; v += step, first = 0)
        fprintf(fg, "%s\"%.*g\" %.17g", first ? "" : ", ", prec < 1 ? 1 : prec, v, v);
    fprintf(fg, ")\n");
}

static void script_panel(FILE *fg, const plot_panel *panels, size_t npanels, size_t p,
                         const long *blk, const char *stem, range xr, range yr, int xint,
                         const key_layout *kl, int h)
{
    const plot_panel *pn = &panels[p];
    fprintf(fg, "set title ");
    gp_string(fg, pn->title);
    fprintf(fg, "\nset xlabel ");
    gp_string(fg, pn->xlabel);
    fprintf(fg, "\nset ylabel ");
    gp_string(fg, pn->ylabel);
    int nodata = !(xr.lo < xr.hi) || !(yr.lo < yr.hi);
    fprintf(fg, "\n%s logscale x\n%s logscale y\n", pn->logx && !nodata ? "set" : "unset",
            pn->logy && !nodata ? "set" : "unset");
    int shortx = pn->logx && !nodata && xr.hi < 100 * xr.lo,
        shorty = pn->logy && !nodata && yr.hi < 100 * yr.lo;
    if (xint && !pn->logx && !nodata && xr.hi - xr.lo <= 12) /* epochs: whole tics */
        fprintf(fg, "set xtics 1\n");
    else
        log_tics(fg, "x", shortx, xr.lo, xr.hi);
    log_tics(fg, "y", shorty, yr.lo, yr.hi);
    /* a log x axis in powers of 10 when %g would print exponents or long decimals */
    int powx = pn->logx && !nodata && (xr.lo < 1e-3 || xr.hi > 1e5);
    fprintf(fg, "set format x %s\nset format y %s\n", powx ? "'10^{%L}'" : "'%g'",
            pn->logy && !nodata && !shorty ? "'10^{%L}'" : "'%g'");
    size_t q = p < 64 ? p : 63;
    if (kl->rows[q])
        fprintf(fg, "set key at screen %.5f, screen %.5f center top box spacing 1.1 maxrows %zu "
                    "width 1\n", ((double)p + 0.5) / (double)npanels,
                (double)(kl->maxrows * PX_ROW + PX_KEYPAD - 6) / h, kl->rows[q]);
    else
        fprintf(fg, "unset key\n");
    if (nodata) {
        fprintf(fg, "set xrange [0:1]\nset yrange [0:1]\nset label 99 \"no data to draw\" at "
                    "graph 0.5, graph 0.5 center\nplot NaN notitle\nunset label 99\n");
        return;
    }
    set_range(fg, "x", xr);
    set_range(fg, "y", yr);
    size_t k0 = 0;
    for (size_t i = 0; i < p; i++) k0 += panels[i].nseries;
    fprintf(fg, "plot ");
    int first = 1;
    for (size_t s = 0; s < pn->nseries; s++) {
        const plot_series *se = &pn->series[s];
        if (blk[k0 + s] < 0) continue; /* nothing to draw: omitted with its legend entry */
        fprintf(fg, "%s", first ? "" : ", \\\n     ");
        gp_file(fg, stem, ".dat");
        fprintf(fg, " index %ld using 1:2%s with ", blk[k0 + s],
                se->style == PLOT_ERRORBARS || se->style == PLOT_ERRORLINES ? ":3" : "");
        style_of(fg, se->style, style_index(panels, npanels, se->title));
        if (se->title && *se->title) {
            fprintf(fg, " title ");
            gp_string(fg, se->title);
        } else {
            fprintf(fg, " notitle");
        }
        first = 0;
    }
    fprintf(fg, "\n");
}

static int write_script(const char *path, const char *stem, const plot_panel *panels,
                        size_t npanels, const long *blk, const range *xr, const range *yr,
                        const int *xint, const double *ylim)
{
    FILE *fg = fopen(path, "w");
    if (!fg) return -1;
    key_layout kl = key_plan(panels, npanels, blk);
    int h;
    script_head(fg, stem, npanels, &kl, &h);
    for (size_t p = 0; p < npanels; p++) {
        range y = yr[p];
        if (ylim && ylim[2 * p] < ylim[2 * p + 1] && xr[p].lo < xr[p].hi)
            y = (range){ylim[2 * p], ylim[2 * p + 1]}; /* a zoom: the caller's range */
        script_panel(fg, panels, npanels, p, blk, stem, xr[p], y, xint[p], &kl, h);
    }
    if (npanels > 1) fprintf(fg, "unset multiplot\n");
    int bad = ferror(fg) || fflush(fg) != 0;
    return fclose(fg) != 0 || bad ? -1 : 0;
}

/* ---- files --------------------------------------------------------------------------------- */

/* The file a path names after following symbolic links (a link is written through, never
 * replaced); the path itself when it is not a link or does not exist yet. */
static int follow_links(const char *path, char *out, size_t outlen)
{
    char cur[4096], link[4096];
    if (snprintf(cur, sizeof cur, "%s", path) >= (int)sizeof cur) return errno = ENAMETOOLONG, -1;
    for (int hops = 0; hops < 40; hops++) {
        struct stat st;
        if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode))
            return snprintf(out, outlen, "%s", cur) >= (int)outlen ? (errno = ENAMETOOLONG, -1) : 0;
        ssize_t k = readlink(cur, link, sizeof link - 1);
        if (k < 0) return -1;
        link[k] = 0;
        const char *slash = strrchr(cur, '/');
        int n = link[0] == '/' || !slash
                    ? snprintf(cur, sizeof cur, "%s", link)
                    : snprintf(cur + (slash - cur) + 1, sizeof cur - (size_t)(slash - cur) - 1,
                               "%s", link) + (int)(slash - cur) + 1;
        if (n >= (int)sizeof cur) return errno = ENAMETOOLONG, -1;
    }
    return errno = ELOOP, -1;
}

/* 1 when the file is a whole PNG (signature first, IEND chunk last) and on disk (fsync): gnuplot
 * does not always fail when its output cannot be written. */
static int png_complete(const char *path)
{
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    static const unsigned char iend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82};
    unsigned char a[8], b[12];
    int fd = open(path, O_RDONLY), ok = 0;
    if (fd < 0) return 0;
    struct stat st;
    if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size >= 8 + 25 + 12 &&
        pread(fd, a, 8, 0) == 8 && pread(fd, b, 12, st.st_size - 12) == 12)
        ok = !memcmp(a, sig, 8) && !memcmp(b, iend, 12) && fsync(fd) == 0;
    close(fd);
    return ok;
}

/* Runs gnuplot on stem.gp in dir (no shell: any file name is safe); stderr to stem.gnuplot.log. */
static int run_gnuplot(const char *dir, const char *gp, const char *log)
{
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        int in = open("/dev/null", O_RDWR);
        if (chdir(dir) != 0 || in < 0) _exit(126);
        int lf = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(in, 0);
        dup2(in, 1);
        dup2(lf >= 0 ? lf : in, 2);
        execlp("gnuplot", "gnuplot", gp, (char *)NULL);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The first line of gnuplot's log that names an error (else its last line), for the message. */
static void log_excerpt(const char *path, char *out, size_t n)
{
    FILE *f = fopen(path, "r");
    char line[512];
    out[0] = 0;
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        if (!line[0] || strspn(line, " ^") == strlen(line)) continue;
        size_t l = strlen(line);
        if (l >= n) l = n - 1;
        memcpy(out, line, l);
        out[l] = 0;
        if (strstr(line, "rror")) break;
    }
    fclose(f);
}

typedef struct {
    char dir[4096];  /* the private directory beside the target */
    char dat[4200], gp[4200], png[4200], log[4200];
    const char *stem;
} work_files;

static void remove_work(const work_files *w)
{
    unlink(w->dat);
    unlink(w->gp);
    unlink(w->png);
    unlink(w->log);
    rmdir(w->dir);
}

static int keep_requested(int keep)
{
    const char *e = getenv("DPCORR_PLOT_KEEP_DATA");
    return keep || (e && *e && strcmp(e, "0") != 0);
}

/* Moves the data and script from the private directory to tdir/stem.{dat,gp}. */
static int keep_side_files(const work_files *w, const char *tdir, char *msg, size_t msglen)
{
    char to[4300];
    snprintf(to, sizeof to, "%s/%s.dat", tdir, w->stem);
    int bad = rename(w->dat, to) != 0;
    snprintf(to, sizeof to, "%s/%s.gp", tdir, w->stem);
    bad = bad || rename(w->gp, to) != 0;
    if (bad) snprintf(msg, msglen, "cannot keep %s: %s", to, strerror(errno));
    return bad ? -1 : 0;
}

/* ---- render -------------------------------------------------------------------------------- */

/* Writes the data and script into w's directory: 0, or -1 with msg set. */
static int write_inputs(const work_files *w, const plot_panel *panels, size_t npanels,
                        const plot_opts *po, const char *target, char *msg, size_t msglen)
{
    size_t total = 0;
    for (size_t p = 0; p < npanels; p++) total += panels[p].nseries;
    long *blk = malloc((total + 1) * sizeof *blk);
    range *xr = malloc((npanels + 1) * sizeof *xr), *yr = malloc((npanels + 1) * sizeof *yr);
    int rc = -1, *xint = malloc((npanels + 1) * sizeof *xint);
    FILE *fd = blk && xr && yr && xint ? fopen(w->dat, "w") : NULL;
    if (!fd) {
        snprintf(msg, msglen, "cannot write the data of %s: %s; %s left as it was", target,
                 blk && xr && yr && xint ? strerror(errno) : "out of memory", target);
    } else {
        int bad = write_data(fd, panels, npanels, blk, xr, yr, xint) != 0 || fflush(fd) != 0;
        bad = fclose(fd) != 0 || bad;
        if (bad)
            snprintf(msg, msglen, "cannot write the data of %s: %s; %s left as it was", target,
                     strerror(errno), target);
        else if (write_script(w->gp, w->stem, panels, npanels, blk, xr, yr, xint,
                              po ? po->ylim : NULL))
            snprintf(msg, msglen, "cannot write the gnuplot script of %s: %s; %s left as it was",
                     target, strerror(errno), target);
        else rc = 0;
    }
    free(blk);
    free(xr);
    free(yr);
    free(xint);
    return rc;
}

/* Sets up the private directory beside the target tdir/base: 0, or -1 with msg set. */
static int work_init(work_files *w, const char *tdir, const char *base, char *stem, size_t stemlen,
                     char *msg, size_t msglen)
{
    size_t bl = strlen(base);
    int sl = (int)(bl > 4 && !strcmp(base + bl - 4, ".png") ? bl - 4 : bl);
    w->stem = stem;
    for (int i = 0; i < sl; i++) /* a control character would end a line of the script */
        if ((unsigned char)base[i] < 0x20) base = "plot.png", sl = 4;
    if (snprintf(stem, stemlen, "%.*s", sl, base) >= (int)stemlen ||
        snprintf(w->dir, sizeof w->dir, "%s/.dpcorr-plot.XXXXXX", tdir) >= (int)sizeof w->dir) {
        snprintf(msg, msglen, "file name too long: %s/%s", tdir, base);
        return -1;
    }
    if (!mkdtemp(w->dir)) {
        snprintf(msg, msglen, "cannot create a temporary directory in %s: %s", tdir,
                 strerror(errno));
        return -1;
    }
    /* the sizes hold dir + stem (checked above) + the longest suffix */
    int n = snprintf(w->dat, sizeof w->dat, "%s/%s.dat", w->dir, stem);
    n |= snprintf(w->gp, sizeof w->gp, "%s/%s.gp", w->dir, stem);
    n |= snprintf(w->png, sizeof w->png, "%s/%s.png", w->dir, stem);
    n |= snprintf(w->log, sizeof w->log, "%s/gnuplot.log", w->dir);
    return n < 0 ? -1 : 0;
}

/* gnuplot on the script, the PNG checked and renamed onto target: 0, or -1 with msg set. */
static int make_png(const work_files *w, const char *tdir, const char *target, char *msg,
                    size_t msglen)
{
    char gpname[300], why[300];
    snprintf(gpname, sizeof gpname, "%s.gp", w->stem);
    int rc = run_gnuplot(w->dir, gpname, "gnuplot.log");
    if (rc != 0 || !png_complete(w->png)) {
        log_excerpt(w->log, why, sizeof why);
        if (rc != 0)
            snprintf(msg, msglen, "gnuplot failed (exit %d)%s%s; %s left as it was", rc,
                     why[0] ? ": " : "", why, target);
        else
            snprintf(msg, msglen, "gnuplot's PNG is incomplete (full disk or file size limit?); "
                                  "%s left as it was", target);
        return -1;
    }
    if (rename(w->png, target) != 0) {
        snprintf(msg, msglen, "cannot replace %s: %s", target, strerror(errno));
        return -1;
    }
    int dfd = open(tdir, O_RDONLY); /* the rename on disk too */
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
    return 0;
}

int plot_render(const char *dir, const char *name, const plot_panel *panels, size_t npanels,
                const plot_opts *po, char *msg, size_t msglen)
{
    char path[4096], target[4096], tdir[4096], stem[300];
    if (snprintf(path, sizeof path, "%s/%s.png", dir, name) >= (int)sizeof path) {
        snprintf(msg, msglen, "path too long: %s/%s.png", dir, name);
        return -1;
    }
    if (follow_links(path, target, sizeof target) != 0) {
        snprintf(msg, msglen, "%s: %s", path, strerror(errno));
        return -1;
    }
    const char *slash = strrchr(target, '/'), *base = slash ? slash + 1 : target;
    snprintf(tdir, sizeof tdir, "%.*s", slash ? (int)(slash == target ? 1 : slash - target) : 1,
             slash ? target : ".");
    work_files w;
    if (work_init(&w, tdir, base, stem, sizeof stem, msg, msglen)) return -1;
    int rc = write_inputs(&w, panels, npanels, po, target, msg, msglen);
    if (!rc && !plot_have_gnuplot()) { /* the data and script are then the only output */
        rc = keep_side_files(&w, tdir, msg, msglen);
        if (!rc)
            snprintf(msg, msglen, "gnuplot not found: wrote %s/%s.dat and %s.gp but no PNG "
                                  "(apt-get install gnuplot-nox)", tdir, stem, stem);
        remove_work(&w);
        return rc ? -1 : 1;
    }
    if (!rc) rc = make_png(&w, tdir, target, msg, msglen);
    if (!rc && keep_requested(po && po->keep)) rc = keep_side_files(&w, tdir, msg, msglen);
    remove_work(&w);
    if (!rc) snprintf(msg, msglen, "wrote %s", target);
    return rc;
}
