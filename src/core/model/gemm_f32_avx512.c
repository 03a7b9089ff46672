/* gemm_f32_avx512.c — the AVX-512 level of dpc__gemmf_seg (float32; compiled with the AVX-512
 * flags, called only when the CPU has them): gemm_kernel.inc for float on 512-bit vectors.
 * Register tile: 6 rows x 32 columns (two packed panels of 16 floats, one zmm each), twelve
 * accumulators, separate multiply and add. */
#include "model/gemm.h"

#if defined(__AVX512F__)
#include <immintrin.h>

#define GK_T float
#define GK_NR DPC__NRF
#define GK_LANES 16
#define GK_V __m512
#define GK_ZERO() _mm512_setzero_ps()
#define GK_LOAD(p) _mm512_loadu_ps(p)
#define GK_ADD _mm512_add_ps
#define GK_MUL _mm512_mul_ps
#define GK_BCAST(p) _mm512_set1_ps(*(p))
#define GK_MASK __mmask16
#define GK_MASK_FULL 0xFFFF
#define GK_MASKZ_LOAD(m, p) _mm512_maskz_loadu_ps(m, p)
#define GK_MASK_STORE(p, m, v) _mm512_mask_storeu_ps(p, m, v)
#define GK_BLOCK dpc__gemmf_block_avx512
#define GK_WIDE 1
#include "model/gemm_kernel.inc"

#else
typedef int dpc__gemm_f32_avx512_unused; /* non-x86: nothing to compile */
#endif
