/* gemm_f32_avx2.c — the AVX2 level of dpc__gemmf_seg (float32; compiled with the AVX2 flags,
 * called only when the CPU has them): gemm_kernel.inc for float on 256-bit vectors. Register
 * tile: 4 rows x 16 columns (one panel, two ymm per row), eight accumulators, separate multiply
 * and add. */
#include "model/gemm.h"

#if defined(__AVX2__)
#include <immintrin.h>

#define GK_T float
#define GK_NR DPC__NRF
#define GK_LANES 8
#define GK_V __m256
#define GK_ZERO() _mm256_setzero_ps()
#define GK_LOAD(p) _mm256_loadu_ps(p)
#define GK_STORE(p, v) _mm256_storeu_ps(p, v)
#define GK_ADD _mm256_add_ps
#define GK_MUL _mm256_mul_ps
#define GK_BCAST(p) _mm256_broadcast_ss(p)
#define GK_BLOCK dpc__gemmf_block_avx2
#define GK_WIDE 0
#include "model/gemm_kernel.inc"

#else
typedef int dpc__gemm_f32_avx2_unused; /* non-x86: nothing to compile */
#endif
