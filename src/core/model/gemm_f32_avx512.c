/* gemm_f32_avx512.c — the AVX-512 level of dpc__gemmf_seg (float32; compiled with the AVX-512
 * flags, called only when the CPU has them). Register tile: 6 rows x 32 columns (two packed
 * panels of 16 floats, one zmm each), twelve accumulators, separate multiply and add. */
#include "model/gemm.h"

#if defined(__AVX512F__)
#include <immintrin.h>

#define MR 6

static inline __attribute__((always_inline)) void
kern(int R, int H, size_t kk, const float *a, size_t lda, const float *b0, const float *b1,
     __m512 acc[2 * MR])
{
#pragma GCC unroll 12
    for (int q = 0; q < 2 * MR; q++) acc[q] = _mm512_setzero_ps();
    for (size_t t = 0; t < kk; t++) {
        __m512 x0 = _mm512_loadu_ps(b0 + DPC__NRF * t);
        __m512 x1 = H > 1 ? _mm512_loadu_ps(b1 + DPC__NRF * t) : x0;
#pragma GCC unroll 6
        for (int r = 0; r < R; r++) {
            __m512 v = _mm512_set1_ps(a[r * lda + t]);
            acc[2 * r] = _mm512_add_ps(acc[2 * r], _mm512_mul_ps(v, x0));
            if (H > 1) acc[2 * r + 1] = _mm512_add_ps(acc[2 * r + 1], _mm512_mul_ps(v, x1));
        }
    }
}

static inline __attribute__((always_inline)) void
put(int R, const __m512 acc[2 * MR], float *C, size_t ldc, size_t w, int add)
{
    __mmask16 m0 = (__mmask16)(w >= 16 ? 0xFFFF : (1u << w) - 1);
    __mmask16 m1 = (__mmask16)(w >= 32 ? 0xFFFF : w > 16 ? (1u << (w - 16)) - 1 : 0);
#pragma GCC unroll 6
    for (int r = 0; r < R; r++) {
        float *c = C + (size_t)r * ldc;
        __m512 v0 = acc[2 * r], v1 = acc[2 * r + 1];
        if (add) {
            v0 = _mm512_add_ps(_mm512_maskz_loadu_ps(m0, c), v0);
            v1 = _mm512_add_ps(_mm512_maskz_loadu_ps(m1, c + 16), v1);
        }
        _mm512_mask_storeu_ps(c, m0, v0);
        if (m1) _mm512_mask_storeu_ps(c + 16, m1, v1);
    }
}

static inline __attribute__((always_inline)) void
tile(int R, int H, size_t n, size_t k, size_t seg, const float *A, size_t lda, const float *Bp,
     size_t kp, float *C, size_t ldc, int accumulate, size_t p)
{
    __m512 acc[2 * MR];
    size_t j0 = p * DPC__NRF, w = n - j0 < (size_t)H * DPC__NRF ? n - j0 : (size_t)H * DPC__NRF;
    const float *b0 = Bp + p * kp * DPC__NRF, *b1 = b0 + kp * DPC__NRF;
    for (size_t t0 = 0; t0 < k; t0 += seg) {
        size_t kk = k - t0 < seg ? k - t0 : seg;
        kern(R, H, kk, A + t0, lda, b0 + t0 * DPC__NRF, b1 + t0 * DPC__NRF, acc);
        put(R, acc, C + j0, ldc, w, accumulate || t0 > 0);
    }
}

#define TILE_R(R)                                                                            \
    do {                                                                                     \
        if (p + 1 < p1)                                                                      \
            tile(R, 2, n, k, seg, Ai, lda, Bp, kp, Ci, ldc, accumulate, p);                  \
        else                                                                                 \
            tile(R, 1, n, k, seg, Ai, lda, Bp, kp, Ci, ldc, accumulate, p);                  \
    } while (0)

void dpc__gemmf_block_avx512(size_t m, size_t n, size_t k, size_t seg, const float *A,
                             size_t lda, const float *Bp, size_t kp, float *C, size_t ldc,
                             int accumulate, size_t p0, size_t p1)
{
    for (size_t i = 0; i < m; i += MR) {
        const float *Ai = A + i * lda;
        float *Ci = C + i * ldc;
        size_t rows = m - i < MR ? m - i : MR;
        for (size_t p = p0; p < p1; p += 2) {
            switch (rows) {
            case 6: TILE_R(6); break;
            case 5: TILE_R(5); break;
            case 4: TILE_R(4); break;
            case 3: TILE_R(3); break;
            case 2: TILE_R(2); break;
            default: TILE_R(1); break;
            }
        }
    }
}

#else
typedef int dpc__gemm_f32_avx512_unused; /* non-x86: nothing to compile */
#endif
