/* fft_core.h — internal FFT kernel shared by the accountant (PLD composition) and the public
 * dpc_fft API (theory quadratures, simulators). Not installed. */
#ifndef DPCORR_SRC_FFT_CORE_H
#define DPCORR_SRC_FFT_CORE_H

#include "dpcorr/common.h"

#include <stdint.h>

/* FFT (fft_core.c). In-place radix-2 complex transform of n = 2^m points stored interleaved
 * (re, im); sign = -1 forward, +1 inverse (unscaled). tw: the table from dpc__fft_twiddles. */
void dpc__fft(double *x, size_t n, int sign, const double *tw);
/* Twiddle tables for size n: n - 1 pairs (cos, sin)(2 pi k / len) for every stage length len
 * (stage len at pair offset len/2 - 1). Caller frees. */
double *dpc__fft_twiddles(size_t n);
/* Linear convolution out[0 .. na+nb-2] of real sequences a (na) and b (nb) via FFT (direct
 * summation when small). b may equal a (squaring). DPC_E_NOMEM on allocation failure. */
dpc_status dpc__convolve(const double *a, size_t na, const double *b, size_t nb, double *out);
/* Reusable buffers and tables for repeated convolutions (zero-initialise; free with
 * dpc__conv_ws_free). Avoids re-faulting fresh pages and rebuilding twiddles every call. */
typedef struct dpc__conv_ws {
    size_t M;           /* transform size the tables hold (0: none) */
    double *tw, *br;    /* per-stage twiddles; bit-reversed twiddles */
    size_t cap;         /* doubles available in za and zb */
    double *za, *zb;
} dpc__conv_ws;
dpc_status dpc__convolve_ws(dpc__conv_ws *ws, const double *a, size_t na, const double *b,
                            size_t nb, double *out);
void dpc__conv_ws_free(dpc__conv_ws *ws);
/* Circular T-fold self-convolution of the real sequence x (n = 2^m >= 4 points), in place:
 * x <- IDFT(DFT(x)^T), i.e. x_r <- sum over (j_1 + ... + j_T = r mod n) of x_j1 ... x_jT. Bins
 * whose T-th power is below floor_abs in modulus are dropped (each output moves by less than
 * floor_abs). One forward and one inverse half-size real transform. DPC_E_INVALID for a bad n
 * or T = 0, DPC_E_NOMEM. */
dpc_status dpc__selfconv_circular(double *x, size_t n, uint64_t T, double floor_abs);
/* Reference O(na nb) convolution (tests, small sizes). */
void dpc__convolve_direct(const double *a, size_t na, const double *b, size_t nb, double *out);

#endif
