/* gauss_impl.h — internal entry points of the Gaussian sampler shared with the per-level
 * kernels (gauss_avx2.c, gauss_avx512.c: one source, gauss_kernel.inc, at two widths; selected
 * by dpc_rng_gaussian_fill_isa). */
#ifndef DPCORR_SRC_GAUSS_IMPL_H
#define DPCORR_SRC_GAUSS_IMPL_H

#include "dpcorr/rng.h"

/* The sampler from attempt a with its word w already drawn (dpc_rng_gaussian is
 * dpc__gauss_from(s, row, index, 0, dpc_rng_word(s, row, index, 0))). */
double dpc__gauss_from(const dpc_rng_stream *s, uint64_t row, uint64_t index, uint32_t a,
                       uint64_t w);

/* The wedge test of layer i >= 1 (libm exp): 1 and *x = u X[i] when accepted. The reference. */
int dpc__gauss_wedge(unsigned i, double u, uint64_t wv, double *x);

/* The same decision without exp when a Taylor polynomial decides it with a proven margin: 1
 * (accept), 0 (reject) or -1 (ask dpc__gauss_wedge); *x = u X[i] always. The vector kernels use
 * the same polynomial (dpc__sqz_taylor, degree 13), exponent range and margin; the proof that
 * the decisions agree is in gauss.c. */
#define DPC__SQZ_EMAX 0.8
#define DPC__SQZ_MARGIN 1e-9
extern const double dpc__sqz_taylor[14]; /* 1 / k!, k = 0..13 */
int dpc__gauss_wedge_squeeze(unsigned i, double u, uint64_t wv, double *x);

/* The level kernels' squeeze on n (a multiple of 8) wedge tests, for the tests: w[k] the word
 * of the attempt (layer i >= 1, u as dpc_rng_gaussian derives them), wn[k] the next attempt's;
 * dec[k] = 1, 0 or -1 as dpc__gauss_wedge_squeeze would answer. CPUs with the level only. */
void dpc__gauss_wedge_squeeze_avx2(const uint64_t *w, const uint64_t *wn, size_t n,
                                   signed char *dec);
void dpc__gauss_wedge_squeeze_avx512(const uint64_t *w, const uint64_t *wn, size_t n,
                                     signed char *dec);

/* Portable bulk fills (any index0, any n): Philox (seeded) and ChaCha20 (secure). */
void dpc__gaussian_fill_portable(const dpc_rng_stream *s, uint64_t row, uint64_t index0,
                                 double *out, size_t n);
void dpc__gaussian_fill_secure_portable(const dpc_rng_stream *s, uint64_t row, uint64_t index0,
                                        double *out, size_t n);

/* Level kernels, bit-identical to the portable fills on the part they cover:
 *   Philox:   index0 even, n a multiple of DPC__PHILOX_BULK;
 *   ChaCha20: index0 a multiple of 8, n a multiple of DPC__CHACHA_BULK_AVX2 (AVX2) or
 *             DPC__CHACHA_BULK_AVX512 (AVX-512).
 * Only called when the CPU supports the level (the files are compiled for it). */
#define DPC__PHILOX_BULK 16
#define DPC__CHACHA_BULK_AVX2 64    /* 8 blocks */
#define DPC__CHACHA_BULK_AVX512 128 /* 16 blocks */
void dpc__gaussian_fill_avx2(const dpc_rng_stream *s, uint64_t row, uint64_t index0, double *out,
                             size_t n);
void dpc__gaussian_fill_avx512(const dpc_rng_stream *s, uint64_t row, uint64_t index0,
                               double *out, size_t n);
void dpc__gaussian_fill_secure_avx2(const dpc_rng_stream *s, uint64_t row, uint64_t index0,
                                    double *out, size_t n);
void dpc__gaussian_fill_secure_avx512(const dpc_rng_stream *s, uint64_t row, uint64_t index0,
                                      double *out, size_t n);

/* Level kernels of dpc_rng_word_fill at attempt 0 (the Gaussian kernels' first pass on its
 * own): Philox with index0 even and n a multiple of DPC__PHILOX_BULK; ChaCha20 with index0 a
 * multiple of 8 and n a multiple of the level's DPC__CHACHA_BULK_*. */
void dpc__word_fill_isa(const dpc_rng_stream *s, uint64_t row, uint64_t index0, uint32_t attempt,
                        uint64_t *out, size_t n, dpc_isa isa); /* dpc_rng_word_fill at a level */
void dpc__word_fill_avx2(const dpc_rng_stream *s, uint64_t row, uint64_t index0, uint64_t *w,
                         size_t n);
void dpc__word_fill_avx512(const dpc_rng_stream *s, uint64_t row, uint64_t index0, uint64_t *w,
                           size_t n);

#endif
