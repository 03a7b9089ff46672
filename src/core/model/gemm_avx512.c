/* gemm_avx512.c — the AVX-512 level of dpc__gemm_seg (compiled with the AVX-512 flags; called
 * only when the CPU has them).
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

#define MR 6 /* rows per tile */

/* acc[2 r + h] (r < R, h < H panels) = sum over t in [0, kk) of a_r[t] * panel_h[t][0..8). */
static inline __attribute__((always_inline)) void
kern(int R, int H, size_t kk, const double *a, size_t lda, const double *b0, const double *b1,
     __m512d acc[2 * MR])
{
#pragma GCC unroll 12
    for (int q = 0; q < 2 * MR; q++) acc[q] = _mm512_setzero_pd();
    for (size_t t = 0; t < kk; t++) {
        __m512d x0 = _mm512_loadu_pd(b0 + DPC__NR * t);
        __m512d x1 = H > 1 ? _mm512_loadu_pd(b1 + DPC__NR * t) : x0;
#pragma GCC unroll 6
        for (int r = 0; r < R; r++) {
            __m512d v = _mm512_set1_pd(a[r * lda + t]);
            acc[2 * r] = _mm512_add_pd(acc[2 * r], _mm512_mul_pd(v, x0));
            if (H > 1) acc[2 * r + 1] = _mm512_add_pd(acc[2 * r + 1], _mm512_mul_pd(v, x1));
        }
    }
}

/* C rows [i, i + R), columns [j0, j0 + w) (w <= 16), C = (add ? C + acc : acc). */
static inline __attribute__((always_inline)) void
put(int R, const __m512d acc[2 * MR], double *C, size_t ldc, size_t w, int add)
{
    __mmask8 m0 = (__mmask8)(w >= 8 ? 0xFF : (1u << w) - 1);
    __mmask8 m1 = (__mmask8)(w >= 16 ? 0xFF : w > 8 ? (1u << (w - 8)) - 1 : 0);
#pragma GCC unroll 6
    for (int r = 0; r < R; r++) {
        double *c = C + (size_t)r * ldc;
        __m512d v0 = acc[2 * r], v1 = acc[2 * r + 1];
        if (add) {
            v0 = _mm512_add_pd(_mm512_maskz_loadu_pd(m0, c), v0);
            v1 = _mm512_add_pd(_mm512_maskz_loadu_pd(m1, c + 8), v1);
        }
        _mm512_mask_storeu_pd(c, m0, v0);
        if (m1) _mm512_mask_storeu_pd(c + 8, m1, v1);
    }
}

/* One tile of R rows and H panels (from panel p), all segments. */
static inline __attribute__((always_inline)) void
tile(int R, int H, size_t n, size_t k, size_t seg, const double *A, size_t lda, const double *Bp,
     size_t kp, double *C, size_t ldc, int accumulate, size_t p)
{
    __m512d acc[2 * MR];
    size_t j0 = p * DPC__NR, w = n - j0 < (size_t)H * DPC__NR ? n - j0 : (size_t)H * DPC__NR;
    const double *b0 = Bp + p * kp * DPC__NR, *b1 = b0 + kp * DPC__NR;
    for (size_t t0 = 0; t0 < k; t0 += seg) {
        size_t kk = k - t0 < seg ? k - t0 : seg;
        kern(R, H, kk, A + t0, lda, b0 + t0 * DPC__NR, b1 + t0 * DPC__NR, acc);
        put(R, acc, C + j0, ldc, w, accumulate || t0 > 0);
    }
}

#define TILE_R(R)                                                                            \
    do {                                                                                     \
        if (p + 1 < p1)                                                                      \
            tile(R, 2, n, k, seg, Ai, lda, Bp, kp, Ci, ldc, accumulate, p);                      \
        else                                                                                 \
            tile(R, 1, n, k, seg, Ai, lda, Bp, kp, Ci, ldc, accumulate, p);                      \
    } while (0)

void dpc__gemm_block_avx512(size_t m, size_t n, size_t k, size_t seg, const double *A,
                            size_t lda, const double *Bp, size_t kp, double *C, size_t ldc,
                            int accumulate, size_t p0, size_t p1)
{
    for (size_t i = 0; i < m; i += MR) {
        const double *Ai = A + i * lda;
        double *Ci = C + i * ldc;
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
typedef int dpc__gemm_avx512_unused; /* non-x86: nothing to compile */
#endif
