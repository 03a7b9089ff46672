/* fft2d.h — mixed-radix FFT over rows and square 2-D FFTs for the scattering transform
 * (internal to the features module; fft2d.c explains the algorithm). Arrays are split real /
 * imaginary, row-major. */
#ifndef DPCORR_SRC_FEATURES_FFT2D_H
#define DPCORR_SRC_FEATURES_FFT2D_H

#include "dpcorr/common.h"

#define DPC__FFT_MAX_LEV 24
#define DPC__FFT_MAX_RADIX 64 /* largest prime factor supported by the generic butterfly */

typedef struct dpc__fftp {
    size_t n, nlev;
    size_t fac[DPC__FFT_MAX_LEV];  /* radices, outermost first */
    double *tw[DPC__FFT_MAX_LEV];  /* level l: W_len^{q k} (r, m) complex, then W_r^{q s} */
} dpc__fftp;

/* Plan for length n >= 1 whose prime factors are <= DPC__FFT_MAX_RADIX. */
dpc_status dpc__fft2d_plan(dpc__fftp *p, size_t n, dpc_error *err);
void dpc__fft2d_plan_free(dpc__fftp *p);
/* Scratch doubles for dpc__fft_rows on (n, V) and dpc__fft2d (V = n). */
size_t dpc__fft2d_scratch(size_t n, size_t V);
/* In place along axis 0 of (n, V) arrays: X[k][v] = sum_j x[j][v] e^{-+2 pi i jk/n}; inverse
 * (inv = 1) has the + sign and the 1/n scale. */
void dpc__fft_rows(const dpc__fftp *p, double *re, double *im, size_t V, int inv, double *scr);
/* In place 2-D transform of an (n, n) array (numpy's fft2 / ifft2 conventions). */
void dpc__fft2d(const dpc__fftp *p, double *re, double *im, int inv, double *scr);

#endif
