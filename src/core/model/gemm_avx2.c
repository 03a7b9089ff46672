/* gemm_avx2.c — the AVX2 level of dpc__gemm_seg (compiled with the AVX2 flags; called only when
 * the CPU has them).
 *
 * Register tile: 4 rows of A x 8 columns (one packed panel, two ymm per row): per k, two loads
 * of B, four broadcasts of A, eight multiplies and eight adds into eight accumulators, each its
 * own sequential chain over k. Products and sums are rounded separately (no FMA), so every
 * element is the same sum in the same order as the scalar kernel of gemm.c. */
#include "model/gemm.h"

#if defined(__AVX2__)
#include <immintrin.h>

#define MR 4 /* rows per tile */

/* acc[2 r + h] (r < R) = sum over t in [0, kk) of a_r[t] * panel[t][4 h .. 4 h + 4). */
static inline __attribute__((always_inline)) void
kern(int R, size_t kk, const double *a, size_t lda, const double *b, __m256d acc[2 * MR])
{
#pragma GCC unroll 8
    for (int q = 0; q < 2 * MR; q++) acc[q] = _mm256_setzero_pd();
    for (size_t t = 0; t < kk; t++) {
        __m256d x0 = _mm256_loadu_pd(b + DPC__NR * t), x1 = _mm256_loadu_pd(b + DPC__NR * t + 4);
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            __m256d v = _mm256_broadcast_sd(a + r * lda + t);
            acc[2 * r] = _mm256_add_pd(acc[2 * r], _mm256_mul_pd(v, x0));
            acc[2 * r + 1] = _mm256_add_pd(acc[2 * r + 1], _mm256_mul_pd(v, x1));
        }
    }
}

/* C rows [0, R), columns [0, w) (w <= 8), C = (add ? C + acc : acc). */
static inline __attribute__((always_inline)) void
put(int R, const __m256d acc[2 * MR], double *C, size_t ldc, size_t w, int add)
{
#pragma GCC unroll 4
    for (int r = 0; r < R; r++) {
        double *c = C + (size_t)r * ldc;
        if (w == DPC__NR) {
            __m256d v0 = acc[2 * r], v1 = acc[2 * r + 1];
            if (add) {
                v0 = _mm256_add_pd(_mm256_loadu_pd(c), v0);
                v1 = _mm256_add_pd(_mm256_loadu_pd(c + 4), v1);
            }
            _mm256_storeu_pd(c, v0);
            _mm256_storeu_pd(c + 4, v1);
        } else {
            double t[DPC__NR];
            _mm256_storeu_pd(t, acc[2 * r]);
            _mm256_storeu_pd(t + 4, acc[2 * r + 1]);
            for (size_t j = 0; j < w; j++) c[j] = add ? c[j] + t[j] : t[j];
        }
    }
}

static inline __attribute__((always_inline)) void
tile(int R, size_t n, size_t k, size_t seg, const double *A, size_t lda, const double *Bp,
     size_t kp, double *C, size_t ldc, int accumulate, size_t p)
{
    __m256d acc[2 * MR];
    size_t j0 = p * DPC__NR, w = n - j0 < DPC__NR ? n - j0 : DPC__NR;
    const double *b = Bp + p * kp * DPC__NR;
    for (size_t t0 = 0; t0 < k; t0 += seg) {
        size_t kk = k - t0 < seg ? k - t0 : seg;
        kern(R, kk, A + t0, lda, b + t0 * DPC__NR, acc);
        put(R, acc, C + j0, ldc, w, accumulate || t0 > 0);
    }
}

void dpc__gemm_block_avx2(size_t m, size_t n, size_t k, size_t seg, const double *A, size_t lda,
                          const double *Bp, size_t kp, double *C, size_t ldc, int accumulate,
                          size_t p0, size_t p1)
{
    for (size_t i = 0; i < m; i += MR) {
        const double *Ai = A + i * lda;
        double *Ci = C + i * ldc;
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
typedef int dpc__gemm_avx2_unused; /* non-x86: nothing to compile */
#endif
