/* fft2d.c — a mixed-radix complex FFT for the small, non-power-of-two grids of the scattering
 * transform (36, 18, 9 for 28 x 28 images), applied to whole rows at once: a transform along
 * axis 0 of an (n, V) array treats each row as a vector of V lanes, so every butterfly is a
 * loop over V contiguous doubles (vectorisable, no strided access). A 2-D transform is that,
 * a transpose, that again and a transpose back.
 *
 * Recursive decimation in time: for n = r m, the r sub-sequences x[q + r j] are transformed
 * into consecutive blocks of m rows, then combined in place,
 *     X[k + m s] = sum_q W_r^{q s} (W_n^{q k} Y_q[k]),   W_n = e^{-2 pi i / n} (forward),
 * with radix-2, 3, 4 butterflies written out and any other prime done as a small DFT. Twiddles
 * are computed directly with cos/sin. Forward is unscaled; inverse is scaled by 1/n. */
#include "features/fft2d.h"
#include "common/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

dpc_status dpc__fft2d_plan(dpc__fftp *p, size_t n, dpc_error *err)
{
    memset(p, 0, sizeof *p);
    p->n = n;
    size_t rest = n;
    while (rest > 1) {
        size_t r = rest % 4 == 0 ? 4 : rest % 2 == 0 ? 2 : rest % 3 == 0 ? 3 : 0;
        if (!r)
            for (r = 5; rest % r; r += 2) {
            }
        if (p->nlev == DPC__FFT_MAX_LEV)
            return dpc_error_set(err, DPC_E_INVALID, "fft: %zu has too many factors", n);
        p->fac[p->nlev++] = r;
        rest /= r;
    }
    size_t len = n;
    for (size_t l = 0; l < p->nlev; l++) {
        size_t r = p->fac[l], m = len / r;
        p->tw[l] = dpc__malloc_array(2 * r * m + 2 * r * r, sizeof(double));
        if (!p->tw[l]) {
            dpc__fft2d_plan_free(p);
            return DPC__NOMEM(err, "fft twiddles");
        }
        for (size_t q = 0; q < r; q++)
            for (size_t k = 0; k < m; k++) { /* W_len^{q k} */
                double a = -2.0 * M_PI * (double)((q * k) % len) / (double)len;
                p->tw[l][2 * (q * m + k)] = cos(a);
                p->tw[l][2 * (q * m + k) + 1] = sin(a);
            }
        double *wr = p->tw[l] + 2 * r * m; /* W_r^{q s} for the generic radix */
        for (size_t q = 0; q < r; q++)
            for (size_t s = 0; s < r; s++) {
                double a = -2.0 * M_PI * (double)((q * s) % r) / (double)r;
                wr[2 * (q * r + s)] = cos(a);
                wr[2 * (q * r + s) + 1] = sin(a);
            }
        len = m;
    }
    return DPC_OK;
}

void dpc__fft2d_plan_free(dpc__fftp *p)
{
    for (size_t l = 0; l < DPC__FFT_MAX_LEV; l++) free(p->tw[l]);
    memset(p, 0, sizeof *p);
}

/* Multiplies row y (V lanes) by c + i s (s negated for the inverse). */
static void twiddle(double *yr, double *yi, size_t V, double c, double s)
{
    for (size_t v = 0; v < V; v++) {
        double a = yr[v], b = yi[v];
        yr[v] = a * c - b * s;
        yi[v] = a * s + b * c;
    }
}

static void bfly2(double *ar, double *ai, double *br, double *bi, size_t V)
{
    for (size_t v = 0; v < V; v++) {
        double xr = ar[v], xi = ai[v], yr = br[v], yi = bi[v];
        ar[v] = xr + yr, ai[v] = xi + yi;
        br[v] = xr - yr, bi[v] = xi - yi;
    }
}

/* sg = -1 forward, +1 inverse: X1 = a + W b + W^2 c with W = e^{sg 2 pi i/3}. */
static void bfly3(double **r, double **im, size_t V, double sg)
{
    const double h = 0.86602540378443864676; /* sin(pi/3) */
    for (size_t v = 0; v < V; v++) {
        double ar = r[0][v], ai = im[0][v], br = r[1][v], bi = im[1][v], cr = r[2][v], ci = im[2][v];
        double tr = br + cr, ti = bi + ci, ur = sg * h * (br - cr), ui = sg * h * (bi - ci);
        double mr = ar - 0.5 * tr, mi = ai - 0.5 * ti;
        r[0][v] = ar + tr, im[0][v] = ai + ti;
        r[1][v] = mr - ui, im[1][v] = mi + ur;
        r[2][v] = mr + ui, im[2][v] = mi - ur;
    }
}

static void bfly4(double **r, double **im, size_t V, double sg)
{
    for (size_t v = 0; v < V; v++) {
        double ar = r[0][v], ai = im[0][v], br = r[1][v], bi = im[1][v];
        double cr = r[2][v], ci = im[2][v], dr = r[3][v], di = im[3][v];
        double s0r = ar + cr, s0i = ai + ci, d0r = ar - cr, d0i = ai - ci;
        double s1r = br + dr, s1i = bi + di, d1r = br - dr, d1i = bi - di;
        /* W^1 (b - d) with W = e^{sg i pi/2} = sg i: (x + i y) sg i = sg (-y + i x) */
        double er = -sg * d1i, ei = sg * d1r;
        r[0][v] = s0r + s1r, im[0][v] = s0i + s1i;
        r[1][v] = d0r + er, im[1][v] = d0i + ei;
        r[2][v] = s0r - s1r, im[2][v] = s0i - s1i;
        r[3][v] = d0r - er, im[3][v] = d0i - ei;
    }
}

/* Generic radix r (small prime): X_s = sum_q W_r^{q s} y_q, with tmp (2 r V). */
static void bflyn(double **r, double **im, size_t R, size_t V, const double *wr, double sg,
                  double *tmp)
{
    for (size_t s = 0; s < R; s++)
        for (size_t v = 0; v < V; v++) {
            double xr = 0, xi = 0;
            for (size_t q = 0; q < R; q++) {
                double c = wr[2 * (q * R + s)], sn = -sg * wr[2 * (q * R + s) + 1];
                xr += r[q][v] * c - im[q][v] * sn;
                xi += r[q][v] * sn + im[q][v] * c;
            }
            tmp[2 * (s * V + v)] = xr, tmp[2 * (s * V + v) + 1] = xi;
        }
    for (size_t s = 0; s < R; s++)
        for (size_t v = 0; v < V; v++) r[s][v] = tmp[2 * (s * V + v)], im[s][v] = tmp[2 * (s * V + v) + 1];
}

static void rec(const dpc__fftp *p, size_t lev, size_t n, const double *ir, const double *ii,
                size_t is, double *orr, double *oi, size_t V, int inv, double *tmp)
{
    if (n == 1) {
        memcpy(orr, ir, V * sizeof *orr);
        memcpy(oi, ii, V * sizeof *oi);
        return;
    }
    size_t R = p->fac[lev], m = n / R;
    for (size_t q = 0; q < R; q++)
        rec(p, lev + 1, m, ir + q * is * V, ii + q * is * V, is * R, orr + q * m * V,
            oi + q * m * V, V, inv, tmp);
    const double *tw = p->tw[lev];
    double sg = inv ? 1.0 : -1.0;
    double *rr[DPC__FFT_MAX_RADIX], *ri[DPC__FFT_MAX_RADIX];
    for (size_t k = 0; k < m; k++) {
        for (size_t q = 0; q < R; q++) {
            rr[q] = orr + (q * m + k) * V, ri[q] = oi + (q * m + k) * V;
            if (q && k) twiddle(rr[q], ri[q], V, tw[2 * (q * m + k)], -sg * tw[2 * (q * m + k) + 1]);
        }
        if (R == 2) bfly2(rr[0], ri[0], rr[1], ri[1], V);
        else if (R == 3) bfly3(rr, ri, V, sg);
        else if (R == 4) bfly4(rr, ri, V, sg);
        else bflyn(rr, ri, R, V, tw + 2 * R * m, sg, tmp);
    }
}

size_t dpc__fft2d_scratch(size_t n, size_t V)
{
    return 2 * n * V + 2 * DPC__FFT_MAX_RADIX * V;
}

void dpc__fft_rows(const dpc__fftp *p, double *re, double *im, size_t V, int inv, double *scr)
{
    size_t n = p->n;
    double *tr = scr, *ti = scr + n * V, *tmp = scr + 2 * n * V;
    rec(p, 0, n, re, im, 1, tr, ti, V, inv, tmp);
    if (inv) {
        double s = 1.0 / (double)n;
        for (size_t j = 0; j < n * V; j++) re[j] = tr[j] * s, im[j] = ti[j] * s;
    } else {
        memcpy(re, tr, n * V * sizeof *re);
        memcpy(im, ti, n * V * sizeof *im);
    }
}

static void transpose(double *a, size_t n, double *tmp)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) tmp[j * n + i] = a[i * n + j];
    memcpy(a, tmp, n * n * sizeof *a);
}

void dpc__fft2d(const dpc__fftp *p, double *re, double *im, int inv, double *scr)
{
    size_t n = p->n;
    dpc__fft_rows(p, re, im, n, inv, scr);
    transpose(re, n, scr);
    transpose(im, n, scr);
    dpc__fft_rows(p, re, im, n, inv, scr);
    transpose(re, n, scr);
    transpose(im, n, scr);
}
