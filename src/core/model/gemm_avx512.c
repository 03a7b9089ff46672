/* gemm_avx512.c — the AVX-512 level of dpc__gemm_seg (compiled with the AVX-512 flags; called
 * only when the CPU has them): gemm_kernel.inc for double on 512-bit vectors.
 *
 * Register tile: 6 rows of A x 16 columns (two packed panels, two zmm per row): per k, two
 * loads of B, six broadcasts of A, twelve multiplies and twelve adds into twelve accumulators,
 * each its own sequential chain over k. Products and sums are rounded separately (_mm512_mul_pd
 * then _mm512_add_pd; -ffp-contract=off keeps the compiler from fusing them), so every element
 * is the same sum in the same order as the scalar kernel of gemm.c. On the AMD Zen 5 target
 * the adds have their own pipes, and this runs at the same rate as an FMA kernel would. */
#include "model/gemm.h"

#if defined(__AVX512F__)
#include <immintrin.h>

#define GK_T double
#define GK_NR DPC__NR
#define GK_LANES 8
#define GK_V __m512d
#define GK_ZERO() _mm512_setzero_pd()
#define GK_LOAD(p) _mm512_loadu_pd(p)
#define GK_ADD _mm512_add_pd
#define GK_MUL _mm512_mul_pd
#define GK_BCAST(p) _mm512_set1_pd(*(p))
#define GK_MASK __mmask8
#define GK_MASK_FULL 0xFF
#define GK_MASKZ_LOAD(m, p) _mm512_maskz_loadu_pd(m, p)
#define GK_MASK_STORE(p, m, v) _mm512_mask_storeu_pd(p, m, v)
#define GK_BLOCK dpc__gemm_block_avx512
#define GK_WIDE 1
#include "model/gemm_kernel.inc"

#else
typedef int dpc__gemm_avx512_unused; /* non-x86: nothing to compile */
#endif
