/* gemm_f32_avx2.c — the AVX2 level of dpc__gemmf_seg (float32; compiled with the AVX2 flags,
 * called only when the CPU has them). Register tile: 4 rows x 16 columns (one panel, two ymm
 * per row), eight accumulators, separate multiply and add. */
#include "model/gemm.h"

#if defined(__AVX2__)
#include <immintrin.h>

#define MR 4

static inline __attribute__((always_inline)) void
kern(int R, size_t kk, const float *a, size_t lda, const float *b, __m256 acc[2 * MR])
{
#pragma GCC unroll 8
    for (int q = 0; q < 2 * MR; q++) acc[q] = _mm256_setzero_ps();
    for (size_t t = 0; t < kk; t++) {
        __m256 x0 = _mm256_loadu_ps(b + DPC__NRF * t), x1 = _mm256_loadu_ps(b + DPC__NRF * t + 8);
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            __m256 v = _mm256_broadcast_ss(a + r * lda + t);
            acc[2 * r] = _mm256_add_ps(acc[2 * r], _mm256_mul_ps(v, x0));
            acc[2 * r + 1] = _mm256_add_ps(acc[2 * r + 1], _mm256_mul_ps(v, x1));
        }
    }
}

static inline __attribute__((always_inline)) void
put(int R, const __m256 acc[2 * MR], float *C, size_t ldc, size_t w, int add)
{
#pragma GCC unroll 4
    for (int r = 0; r < R; r++) {
        float *c = C + (size_t)r * ldc;
        if (w == DPC__NRF) {
            __m256 v0 = acc[2 * r], v1 = acc[2 * r + 1];
            if (add) {
                v0 = _mm256_add_ps(_mm256_loadu_ps(c), v0);
                v1 = _mm256_add_ps(_mm256_loadu_ps(c + 8), v1);
            }
            _mm256_storeu_ps(c, v0);
            _mm256_storeu_ps(c + 8, v1);
        } else {
            float t[DPC__NRF];
            _mm256_storeu_ps(t, acc[2 * r]);
            _mm256_storeu_ps(t + 8, acc[2 * r + 1]);
            for (size_t j = 0; j < w; j++) c[j] = add ? c[j] + t[j] : t[j];
        }
    }
}

static inline __attribute__((always_inline)) void
tile(int R, size_t n, size_t k, size_t seg, const float *A, size_t lda, const float *Bp,
     size_t kp, float *C, size_t ldc, int accumulate, size_t p)
{
    __m256 acc[2 * MR];
    size_t j0 = p * DPC__NRF, w = n - j0 < DPC__NRF ? n - j0 : DPC__NRF;
    const float *b = Bp + p * kp * DPC__NRF;
    for (size_t t0 = 0; t0 < k; t0 += seg) {
        size_t kk = k - t0 < seg ? k - t0 : seg;
        kern(R, kk, A + t0, lda, b + t0 * DPC__NRF, acc);
        put(R, acc, C + j0, ldc, w, accumulate || t0 > 0);
    }
}

void dpc__gemmf_block_avx2(size_t m, size_t n, size_t k, size_t seg, const float *A, size_t lda,
                           const float *Bp, size_t kp, float *C, size_t ldc, int accumulate,
                           size_t p0, size_t p1)
{
    for (size_t i = 0; i < m; i += MR) {
        const float *Ai = A + i * lda;
        float *Ci = C + i * ldc;
        size_t rows = m - i < MR ? m - i : MR;
        for (size_t p = p0; p < p1; p++) {
            switch (rows) {
            case 4: tile(4, n, k, seg, Ai, lda, Bp, kp, Ci, ldc, accumulate, p); break;
            case 3: tile(3, n, k, seg, Ai, lda, Bp, kp, Ci, ldc, accumulate, p); break;
            case 2: tile(2, n, k, seg, Ai, lda, Bp, kp, Ci, ldc, accumulate, p); break;
            default: tile(1, n, k, seg, Ai, lda, Bp, kp, Ci, ldc, accumulate, p); break;
            }
        }
    }
}

#else
typedef int dpc__gemm_f32_avx2_unused; /* non-x86: nothing to compile */
#endif
