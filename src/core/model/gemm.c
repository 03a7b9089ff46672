/* gemm.c — dense matrix products for the model module: a naive reference and a packed,
 * register-tiled kernel with bit-identical results (see gemm.h for the summation contract).
 *
 * Why this shape: without -ffast-math the compiler may not reassociate a dot product, so a
 * plain k-loop runs one scalar add chain at a time. Here each of the 16 accumulators of a
 * 2 x 8 tile of C is its own chain (still summed over k in order), the 8 columns map onto
 * SSE2 lanes, and B is packed so the 8 values needed per k sit in one cache line.
 * GCC 12 -O2 turns the tile into 8 mulpd + 8 addpd per k (about 6 GMAC/s in L1 on the
 * target EPYC, against about 1 for the naive loop).
 *
 * The packing, the baseline level and the dispatch to the AVX2 / AVX-512 levels are one source
 * with gemm_f32.c (gemm_base.inc, included below with double); this file keeps the double tile
 * kernel, dpc__gemm_packed and the naive reference.
 */
#include "model/gemm.h"

#include <string.h>

/* out (2, 8) = [a0; a1] (2, k) x panel (k, 8). Named scalars so that GCC keeps the tile in
 * registers and pairs columns into SSE2 lanes. */
static void kernel_2x8(size_t k, const double *a0, const double *a1, const double *bp,
                       double out[2 * DPC__NR])
{
    double c00 = 0, c01 = 0, c02 = 0, c03 = 0, c04 = 0, c05 = 0, c06 = 0, c07 = 0;
    double c10 = 0, c11 = 0, c12 = 0, c13 = 0, c14 = 0, c15 = 0, c16 = 0, c17 = 0;
    for (size_t t = 0; t < k; t++) {
        const double *b = bp + t * DPC__NR;
        double b0 = b[0], b1 = b[1], b2 = b[2], b3 = b[3];
        double b4 = b[4], b5 = b[5], b6 = b[6], b7 = b[7];
        double x0 = a0[t], x1 = a1[t];
        c00 += x0 * b0; c01 += x0 * b1; c02 += x0 * b2; c03 += x0 * b3;
        c04 += x0 * b4; c05 += x0 * b5; c06 += x0 * b6; c07 += x0 * b7;
        c10 += x1 * b0; c11 += x1 * b1; c12 += x1 * b2; c13 += x1 * b3;
        c14 += x1 * b4; c15 += x1 * b5; c16 += x1 * b6; c17 += x1 * b7;
    }
    out[0] = c00; out[1] = c01; out[2] = c02; out[3] = c03;
    out[4] = c04; out[5] = c05; out[6] = c06; out[7] = c07;
    out[8] = c10; out[9] = c11; out[10] = c12; out[11] = c13;
    out[12] = c14; out[13] = c15; out[14] = c16; out[15] = c17;
}

/* Packing, the baseline level (block_base: 2 x 8 tiles of kernel_2x8) and the dispatch to the
 * AVX2 / AVX-512 levels: gemm_base.inc, shared with gemm_f32.c. */
#define GS_T double
#define GS_NR DPC__NR
#define GS_PREFIX dpc__gemm
#define GS_KERNEL kernel_2x8
#include "model/gemm_base.inc"

void dpc__gemm_packed(size_t m, size_t n, size_t k, const double *A, size_t lda,
                      const double *Bp, double *C, size_t ldc, int accumulate)
{
    /* In the model's shapes B is small (k * n <= 784 * 64), so there is one column block and
     * the big operand (W in the forward pass, the gradient in the clipped sum) is streamed
     * exactly once. */
    dpc__gemm_seg(DPC_ISA_SSE2, m, n, k, 0, A, lda, Bp, k, C, ldc, accumulate);
}

void dpc__gemm_naive(size_t m, size_t n, size_t k, const double *A, size_t lda,
                     const double *B, size_t ldb, double *C, size_t ldc, int accumulate)
{
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double acc = 0.0;
            for (size_t t = 0; t < k; t++) acc += A[i * lda + t] * B[t * ldb + j];
            C[i * ldc + j] = accumulate ? C[i * ldc + j] + acc : acc;
        }
}
