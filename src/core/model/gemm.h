/* gemm.h — the dense kernels of the model module (internal, not installed).
 *
 * All kernels compute, for every output element, the same sum in the same order:
 *
 *     C[i][j] = [C[i][j] +] ((((0 + A[i][0] B[0][j]) + A[i][1] B[1][j]) + ...) + A[i][k-1] B[k-1][j])
 *
 * i.e. a sequential dot product over k (no blocking of k, no tree), added to C at the end when
 * `accumulate` is set. The naive and the packed kernel therefore agree bit for bit, and a row
 * of C depends only on the same row of A (never on m, on the tiling or on other rows): the
 * property that makes per-example results independent of the chunk they are computed in.
 * Requires -ffp-contract=off (no FMA), which the Makefile sets.
 *
 * The packed kernel wants B in panels of DPC__NR columns: Bp[(p * k + t) * DPC__NR + j] =
 * B[t][p * DPC__NR + j], zero-padded on the right. A panel is k consecutive cache lines, and
 * the 2 x DPC__NR register tile (compiled to SSE2 by GCC -O2's SLP vectoriser) reads one
 * line of B and two scalars of A per k.
 */
#ifndef DPCORR_SRC_MODEL_GEMM_H
#define DPCORR_SRC_MODEL_GEMM_H

#include "dpcorr/isa.h"

#include <stddef.h>

#define DPC__NR 8 /* panel width (columns of B per register tile) */
#define DPC__MR 2 /* rows of A per register tile */

/* Elements of the packed form of a (k, n) B: k * ceil(n / DPC__NR) * DPC__NR. */
size_t dpc__gemm_packed_size(size_t k, size_t n);

/* Packs B (k, n), row stride ldb, into Bp (dpc__gemm_packed_size(k, n)). */
void dpc__gemm_pack_b(size_t k, size_t n, const double *B, size_t ldb, double *Bp);

/* Packs B = Bt^T where Bt is (n, k) with row stride ldbt (a weight matrix W (out, in) gives
 * the B = W^T (in, out) of a forward pass). */
void dpc__gemm_pack_bt(size_t k, size_t n, const double *Bt, size_t ldbt, double *Bp);

/* C (m, n) = [C +] A (m, k) B (k, n), B packed; row strides lda, ldc. */
void dpc__gemm_packed(size_t m, size_t n, size_t k, const double *A, size_t lda,
                      const double *Bp, double *C, size_t ldc, int accumulate);

/* The same product by the kernels of instruction-set level `isa` (dpcorr/isa.h; the caller's
 * resolved level; AUTO means the detected one), with k summed in segments of `seg` (0: one
 * segment): for every element,
 *     C[i][j] = (...((C0 + S_0) + S_1) + ...) + S_last,   S_s = the sequential sum over the
 *                                                        k-range [s seg, (s+1) seg) from 0,
 * with C0 = C[i][j] when accumulate is set and absent otherwise (C[i][j] = S_0 + S_1 ...).
 * One segment is exactly dpc__gemm_packed. Every level performs the same operations in the same
 * order (products and sums rounded separately, no FMA), so the result does not depend on the
 * level, on m, on the tiling or on other rows. The segments let a caller fold a sum over chunks
 * of examples into one call: C += S_chunk0, then C += S_chunk1, ... (the trainer's reduction
 * order). B packed as for dpc__gemm_packed, except that a panel may be longer than k: panel p
 * starts at Bp + p * kp * DPC__NR (kp >= k; 0 means k), so a buffer packed for a capacity of
 * kp rows serves any k <= kp. */
void dpc__gemm_seg(dpc_isa isa, size_t m, size_t n, size_t k, size_t seg, const double *A,
                   size_t lda, const double *Bp, size_t kp, double *C, size_t ldc,
                   int accumulate);

/* Level kernels behind dpc__gemm_seg (gemm_avx2.c, gemm_avx512.c): one column block of panels
 * [p0, p1) for all rows, the segment loop inside. */
void dpc__gemm_block_avx2(size_t m, size_t n, size_t k, size_t seg, const double *A, size_t lda,
                          const double *Bp, size_t kp, double *C, size_t ldc, int accumulate,
                          size_t p0, size_t p1);
void dpc__gemm_block_avx512(size_t m, size_t n, size_t k, size_t seg, const double *A,
                            size_t lda, const double *Bp, size_t kp, double *C, size_t ldc,
                            int accumulate, size_t p0, size_t p1);

/* ==== float32 (the model's float32 path) ==================================================
 * The same contract in float arithmetic: every element a sequential sum over k (in segments),
 * products and sums rounded separately to float, the same bits at every level. B is packed in
 * panels of DPC__NRF floats (one 64-byte line). */
#define DPC__NRF 16

size_t dpc__gemmf_packed_size(size_t k, size_t n);
void dpc__gemmf_pack_b(size_t k, size_t n, const float *B, size_t ldb, float *Bp);
void dpc__gemmf_pack_bt(size_t k, size_t n, const float *Bt, size_t ldbt, float *Bp);
void dpc__gemmf_seg(dpc_isa isa, size_t m, size_t n, size_t k, size_t seg, const float *A,
                    size_t lda, const float *Bp, size_t kp, float *C, size_t ldc, int accumulate);
void dpc__gemmf_block_avx2(size_t m, size_t n, size_t k, size_t seg, const float *A, size_t lda,
                           const float *Bp, size_t kp, float *C, size_t ldc, int accumulate,
                           size_t p0, size_t p1);
void dpc__gemmf_block_avx512(size_t m, size_t n, size_t k, size_t seg, const float *A,
                             size_t lda, const float *Bp, size_t kp, float *C, size_t ldc,
                             int accumulate, size_t p0, size_t p1);

/* The reference: three loops, B plain (k, n) with row stride ldb. */
void dpc__gemm_naive(size_t m, size_t n, size_t k, const double *A, size_t lda,
                     const double *B, size_t ldb, double *C, size_t ldc, int accumulate);

#endif
