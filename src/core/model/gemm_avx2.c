/* gemm_avx2.c — the AVX2 level of dpc__gemm_seg (compiled with the AVX2 flags; called only when
 * the CPU has them): gemm_kernel.inc for double on 256-bit vectors.
 *
 * Register tile: 4 rows of A x 8 columns (one packed panel, two ymm per row): per k, two loads
 * of B, four broadcasts of A, eight multiplies and eight adds into eight accumulators, each its
 * own sequential chain over k. Products and sums are rounded separately (no FMA), so every
 * element is the same sum in the same order as the scalar kernel of gemm.c. */
#include "model/gemm.h"

#if defined(__AVX2__)
#include <immintrin.h>

#define GK_T double
#define GK_NR DPC__NR
#define GK_LANES 4
#define GK_V __m256d
#define GK_ZERO() _mm256_setzero_pd()
#define GK_LOAD(p) _mm256_loadu_pd(p)
#define GK_STORE(p, v) _mm256_storeu_pd(p, v)
#define GK_ADD _mm256_add_pd
#define GK_MUL _mm256_mul_pd
#define GK_BCAST(p) _mm256_broadcast_sd(p)
#define GK_BLOCK dpc__gemm_block_avx2
#define GK_WIDE 0
#include "model/gemm_kernel.inc"

#else
typedef int dpc__gemm_avx2_unused; /* non-x86: nothing to compile */
#endif
