/* dpcorr/fft.h — a small radix-2 complex FFT (split real/imaginary arrays) and FFT-based
 * linear convolution, used by the theory quadratures and the long-horizon simulators
 * (blocked overlap-save Toeplitz convolution, dpcorr/papers/sim.h).
 *
 *   dpc_fft *f; dpc_fft_new(&f, 1024, &err);
 *   dpc_fft_exec(f, re, im, 0);     // forward: X_k = sum_j x_j e^{-2 pi i jk/n}
 *   dpc_fft_exec(f, re, im, 1);     // inverse, scaled by 1/n: recovers x
 *   dpc_fft_free(f);
 *
 * Iterative decimation in time, bit-reversal permutation, per-stage contiguous twiddle tables
 * computed directly with cos/sin (no recurrences, so the twiddle error is O(eps) and the
 * transform error O(eps log n)). A plan is immutable after creation and may be shared by
 * threads. dpc_fft_dft_naive is the O(n^2) reference kept for the parity test.
 */
#ifndef DPCORR_FFT_H
#define DPCORR_FFT_H

#include "dpcorr/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dpc_fft dpc_fft; /* opaque plan */

/* n must be a power of two, 1 <= n <= 2^30. */
DPC_API DPC_NODISCARD dpc_status dpc_fft_new(dpc_fft **out, size_t n, dpc_error *err);
DPC_API void dpc_fft_free(dpc_fft *f);
DPC_API size_t dpc_fft_size(const dpc_fft *f);

/* In place on (re, im), each of length n. inverse = 0: forward (sign -1), 1: inverse (sign +1,
 * scaled by 1/n).                                                              re, im: (n) */
DPC_API void dpc_fft_exec(const dpc_fft *f, double *re, double *im, int inverse);

/* Reference O(n^2) DFT with the same conventions (any n >= 1), out of place. */
DPC_API void dpc_fft_dft_naive(double *out_re, double *out_im, const double *re,
                               const double *im, size_t n, int inverse);

/* Smallest power of two >= n (n <= 2^62), 1 for n = 0. */
DPC_API size_t dpc_fft_next_pow2(size_t n);

/* Linear convolution y = a * b (length na + nb - 1) by zero-padded FFT, and the direct
 * O(na nb) reference. y: (na + nb - 1). */
DPC_API DPC_NODISCARD dpc_status dpc_fft_convolve(double *y, const double *a, size_t na,
                                                  const double *b, size_t nb, dpc_error *err);
DPC_API void dpc_fft_convolve_naive(double *y, const double *a, size_t na, const double *b,
                                    size_t nb);

#ifdef __cplusplus
}
#endif
#endif /* DPCORR_FFT_H */
