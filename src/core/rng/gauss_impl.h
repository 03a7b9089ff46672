/* gauss_impl.h — internal entry points of the Gaussian sampler shared with the SIMD kernels. */
#ifndef DPCORR_SRC_GAUSS_IMPL_H
#define DPCORR_SRC_GAUSS_IMPL_H

#include "dpcorr/rng.h"

/* The full ziggurat starting from the attempt-0 word w of (row, index) (slow path). */
double dpc__gauss_from_word(const dpc_rng_stream *s, uint64_t row, uint64_t index, uint64_t w);

/* Portable bulk fill (any index0, any n). */
void dpc__gaussian_fill_portable(const dpc_rng_stream *s, uint64_t row, uint64_t index0,
                                 double *out, size_t n);

/* AVX2 kernel: index0 even, n a multiple of 16. Returns 0 if AVX2 is not available. */
int dpc__gaussian_fill_avx2(const dpc_rng_stream *s, uint64_t row, uint64_t index0, double *out,
                            size_t n);

#endif
