/* theory_quad.c — quadrature rules for the frequency-domain integrals: Gauss-Legendre nodes,
 * the graded composite rule on [0, pi], and |B|^2 on a uniform grid by FFT. */
#include "nu/theory_internal.h"
#include "dpcorr/fft.h"
#include "common/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void dpc__gauss_legendre(size_t n, double *x, double *w)
{
    /* Newton iteration on P_n from the Tricomi initial guess; symmetric pairs. */
    for (size_t i = 0; i < (n + 1) / 2; i++) {
        double z = cos(M_PI * ((double)i + 0.75) / ((double)n + 0.5)), dp = 1.0;
        for (int it = 0; it < 100; it++) {
            double p0 = 1.0, p1 = z;
            for (size_t k = 2; k <= n; k++) {
                double p2 = ((2.0 * (double)k - 1.0) * z * p1 - ((double)k - 1.0) * p0) / (double)k;
                p0 = p1;
                p1 = p2;
            }
            dp = (double)n * (z * p1 - p0) / (z * z - 1.0);
            double dz = p1 / dp;
            z -= dz;
            if (fabs(dz) < 1e-16) break;
        }
        {
            double p0 = 1.0, p1 = z;
            for (size_t k = 2; k <= n; k++) {
                double p2 = ((2.0 * (double)k - 1.0) * z * p1 - ((double)k - 1.0) * p0) / (double)k;
                p0 = p1;
                p1 = p2;
            }
            dp = (double)n * (z * p1 - p0) / (z * z - 1.0);
        }
        x[i] = -z;
        x[n - 1 - i] = z;
        w[i] = w[n - 1 - i] = 2.0 / ((1.0 - z * z) * dp * dp);
    }
}

void dpc__quad_free(theory_quad *q)
{
    free(q->x);
    free(q->w);
    q->x = q->w = NULL;
    q->n = 0;
}

int dpc__quad_graded(theory_quad *q, double s, size_t order, size_t degree)
{
    return dpc__quad_graded2(q, s, 1.0, order, degree);
}

static size_t breakpoints(double *bp, double s0, double spi)
{
    /* 0, s0/64, s0/32, ... up to pi/2, then mirrored towards pi with spi. */
    size_t nb = 0;
    if (!(s0 > 0.0) || s0 > 1.0) s0 = 1.0;
    if (!(spi > 0.0) || spi > 1.0) spi = 1.0;
    bp[nb++] = 0.0;
    for (double a = s0 / 64.0; a < 0.5 * M_PI && nb < 120; a *= 2.0) bp[nb++] = a;
    bp[nb++] = 0.5 * M_PI;
    double tmp[128];
    size_t nt = 0;
    for (double a = spi / 64.0; a < 0.5 * M_PI && nt < 120; a *= 2.0) tmp[nt++] = M_PI - a;
    while (nt > 0) bp[nb++] = tmp[--nt];
    bp[nb++] = M_PI;
    return nb;
}

int dpc__quad_graded2(theory_quad *q, double s0, double spi, size_t order, size_t degree)
{
    memset(q, 0, sizeof *q);
    double gx[64], gw[64];
    if (order > 64) order = 64;
    dpc__gauss_legendre(order, gx, gw);
    double bp[256];
    size_t nb = breakpoints(bp, s0, spi);
    size_t npieces = 0;
    for (size_t i = 0; i + 1 < nb; i++)
        npieces += 1 + (size_t)((bp[i + 1] - bp[i]) * (double)degree / 6.0);
    q->n = npieces * order;
    q->x = dpc__malloc_array(q->n, sizeof *q->x);
    q->w = dpc__malloc_array(q->n, sizeof *q->w);
    if (!q->x || !q->w) {
        dpc__quad_free(q);
        return 0;
    }
    size_t k = 0;
    for (size_t i = 0; i + 1 < nb; i++) {
        double width = bp[i + 1] - bp[i];
        size_t sub = 1 + (size_t)(width * (double)degree / 6.0);
        double h = width / (double)sub;
        for (size_t p = 0; p < sub; p++) {
            double half = 0.5 * h, mid = bp[i] + h * (double)p + half;
            for (size_t j = 0; j < order; j++) {
                q->x[k] = mid + half * gx[j];
                q->w[k] = half * gw[j] / M_PI;
                k++;
            }
        }
    }
    return 1;
}

int dpc__spectrum_grid(const double *beta, size_t len, size_t M, double *out)
{
    double *re = dpc__calloc(2 * M, sizeof *re);
    dpc_fft *f = NULL;
    if (!re || dpc_fft_new(&f, M, NULL)) {
        free(re);
        return 0;
    }
    double *im = re + M;
    for (size_t t = 0; t < len; t++) re[t & (M - 1)] += beta[t];
    dpc_fft_exec(f, re, im, 0);
    for (size_t k = 0; k <= M / 2; k++) out[k] = re[k] * re[k] + im[k] * im[k];
    dpc_fft_free(f);
    free(re);
    return 1;
}
