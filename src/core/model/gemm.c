/* gemm.c — dense matrix products for the model module: a naive reference and a packed,
 * register-tiled kernel with bit-identical results (see gemm.h for the summation contract).
 *
 * Why this shape: without -ffast-math the compiler may not reassociate a dot product, so a
 * plain k-loop runs one scalar add chain at a time. Here each of the 16 accumulators of a
 * 2 x 8 tile of C is its own chain (still summed over k in order), the 8 columns map onto
 * SSE2 lanes, and B is packed so the 8 values needed per k sit in one cache line.
 * GCC 12 -O2 turns the tile into 8 mulpd + 8 addpd per k (about 6 GMAC/s in L1 on the
 * target EPYC, against about 1 for the naive loop).
 */
#include "model/gemm.h"

#include <string.h>

#define DPC__GEMM_L2 65536 /* doubles of packed B kept in L2 per column block (512 KiB) */

size_t dpc__gemm_packed_size(size_t k, size_t n)
{
    return k * ((n + DPC__NR - 1) / DPC__NR) * DPC__NR;
}

void dpc__gemm_pack_b(size_t k, size_t n, const double *B, size_t ldb, double *Bp)
{
    for (size_t j0 = 0; j0 < n; j0 += DPC__NR) {
        size_t w = n - j0 < DPC__NR ? n - j0 : DPC__NR;
        const double *b = B + j0;
        if (w == DPC__NR) {
            for (size_t t = 0; t < k; t++, Bp += DPC__NR, b += ldb)
                memcpy(Bp, b, DPC__NR * sizeof *Bp);
        } else {
            for (size_t t = 0; t < k; t++, Bp += DPC__NR, b += ldb) {
                size_t j = 0;
                for (; j < w; j++) Bp[j] = b[j];
                for (; j < DPC__NR; j++) Bp[j] = 0.0;
            }
        }
    }
}

void dpc__gemm_pack_bt(size_t k, size_t n, const double *Bt, size_t ldbt, double *Bp)
{
    for (size_t j0 = 0; j0 < n; j0 += DPC__NR) {
        size_t w = n - j0 < DPC__NR ? n - j0 : DPC__NR;
        const double *s = Bt + j0 * ldbt;
        /* Bp[t][j] = Bt[j0 + j][t]: sequential writes, w sequential read streams. */
        if (w == DPC__NR) {
            for (size_t t = 0; t < k; t++, Bp += DPC__NR) {
                Bp[0] = s[t];
                Bp[1] = s[ldbt + t];
                Bp[2] = s[2 * ldbt + t];
                Bp[3] = s[3 * ldbt + t];
                Bp[4] = s[4 * ldbt + t];
                Bp[5] = s[5 * ldbt + t];
                Bp[6] = s[6 * ldbt + t];
                Bp[7] = s[7 * ldbt + t];
            }
        } else {
            for (size_t t = 0; t < k; t++, Bp += DPC__NR) {
                size_t j = 0;
                for (; j < w; j++) Bp[j] = s[j * ldbt + t];
                for (; j < DPC__NR; j++) Bp[j] = 0.0;
            }
        }
    }
}

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

static void store_row(double *c, const double *t, size_t w, int accumulate)
{
    if (accumulate)
        for (size_t j = 0; j < w; j++) c[j] = c[j] + t[j];
    else
        memcpy(c, t, w * sizeof *c);
}

/* One 2 x 8 tile: rows i, i+1 (i+1 = i when only one row is left), columns j0.. of C, summed
 * over the k-range [t0, t1) and stored (added to C when add is set). */
static void tile(size_t m, size_t n, size_t kp, const double *A, size_t lda, const double *Bp,
                 double *C, size_t ldc, int add, size_t i, size_t j0, size_t t0, size_t t1)
{
    double t[2 * DPC__NR];
    size_t w = n - j0 < DPC__NR ? n - j0 : DPC__NR;
    const double *bp = Bp + (j0 / DPC__NR) * kp * DPC__NR + t0 * DPC__NR;
    int two = i + 1 < m;
    kernel_2x8(t1 - t0, A + i * lda + t0, A + (two ? i + 1 : i) * lda + t0, bp, t);
    store_row(C + i * ldc + j0, t, w, add);
    if (two) store_row(C + (i + 1) * ldc + j0, t + DPC__NR, w, add);
}

/* Columns are taken in blocks of panels that together fit in L2 (DPC__GEMM_L2 doubles); within
 * a block, each row pair of A (in L1) sweeps every panel, so A and C are streamed once per
 * block and the B block is reused from L2 by all rows. Blocking moves data, never changes a
 * sum. */
static size_t panels_per_block(size_t k)
{
    size_t per = DPC__GEMM_L2 / (k * DPC__NR + 1);
    return per < 1 ? 1 : per;
}

static void block_sse2(size_t m, size_t n, size_t k, size_t seg, const double *A, size_t lda,
                       const double *Bp, size_t kp, double *C, size_t ldc, int accumulate,
                       size_t p0, size_t p1)
{
    for (size_t i = 0; i < m; i += DPC__MR)
        for (size_t p = p0; p < p1; p++)
            for (size_t t0 = 0; t0 < k; t0 += seg)
                tile(m, n, kp, A, lda, Bp, C, ldc, accumulate || t0 > 0, i, p * DPC__NR, t0,
                     t0 + seg < k ? t0 + seg : k);
}

void dpc__gemm_seg(dpc_isa isa, size_t m, size_t n, size_t k, size_t seg, const double *A,
                   size_t lda, const double *Bp, size_t kp, double *C, size_t ldc,
                   int accumulate)
{
    if (m == 0 || n == 0) return;
    if (k == 0) { /* empty sums: C = C + 0 (accumulate) or 0 */
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < n; j++) C[i * ldc + j] = accumulate ? C[i * ldc + j] + 0.0 : 0.0;
        return;
    }
    if (seg == 0 || seg > k) seg = k;
    if (kp < k) kp = k;
    if (isa == DPC_ISA_AUTO) isa = dpc_isa_detect();
    size_t np = (n + DPC__NR - 1) / DPC__NR, per = panels_per_block(k);
    /* (the blocks are sized for the k rows used; a longer panel only spaces them) */
    for (size_t p0 = 0; p0 < np; p0 += per) {
        size_t p1 = p0 + per < np ? p0 + per : np;
        switch (isa) {
        case DPC_ISA_AVX512:
            dpc__gemm_block_avx512(m, n, k, seg, A, lda, Bp, kp, C, ldc, accumulate, p0, p1);
            break;
        case DPC_ISA_AVX2:
            dpc__gemm_block_avx2(m, n, k, seg, A, lda, Bp, kp, C, ldc, accumulate, p0, p1);
            break;
        default: block_sse2(m, n, k, seg, A, lda, Bp, kp, C, ldc, accumulate, p0, p1); break;
        }
    }
}

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
