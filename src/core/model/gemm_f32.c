/* gemm_f32.c — the float32 GEMM of the model's float32 path (gemm.h): packing, the baseline
 * kernel and the dispatch to the AVX2 / AVX-512 kernels (gemm_f32_avx2.c, gemm_f32_avx512.c).
 * Every element is a sequential float sum over k in segments, products and sums rounded
 * separately (-ffp-contract=off), so every level computes the same bits. */
#include "model/gemm.h"

#include <string.h>

#define L2_FLOATS 131072 /* floats of packed B kept in L2 per column block (512 KiB) */

size_t dpc__gemmf_packed_size(size_t k, size_t n)
{
    return k * ((n + DPC__NRF - 1) / DPC__NRF) * DPC__NRF;
}

void dpc__gemmf_pack_b(size_t k, size_t n, const float *B, size_t ldb, float *Bp)
{
    for (size_t j0 = 0; j0 < n; j0 += DPC__NRF) {
        size_t w = n - j0 < DPC__NRF ? n - j0 : DPC__NRF;
        const float *b = B + j0;
        for (size_t t = 0; t < k; t++, Bp += DPC__NRF, b += ldb) {
            size_t j = 0;
            for (; j < w; j++) Bp[j] = b[j];
            for (; j < DPC__NRF; j++) Bp[j] = 0.0f;
        }
    }
}

void dpc__gemmf_pack_bt(size_t k, size_t n, const float *Bt, size_t ldbt, float *Bp)
{
    for (size_t j0 = 0; j0 < n; j0 += DPC__NRF) {
        size_t w = n - j0 < DPC__NRF ? n - j0 : DPC__NRF;
        const float *s = Bt + j0 * ldbt;
        for (size_t t = 0; t < k; t++, Bp += DPC__NRF) { /* Bp[t][j] = Bt[j0 + j][t] */
            size_t j = 0;
            for (; j < w; j++) Bp[j] = s[j * ldbt + t];
            for (; j < DPC__NRF; j++) Bp[j] = 0.0f;
        }
    }
}

/* out (2, 16) = [a0; a1] (2, k) x panel (k, 16): 32 float accumulators, each a sequential sum. */
static void kernel_2x16(size_t k, const float *a0, const float *a1, const float *bp, float *out)
{
    float c0[DPC__NRF], c1[DPC__NRF];
    for (size_t j = 0; j < DPC__NRF; j++) c0[j] = c1[j] = 0.0f;
    for (size_t t = 0; t < k; t++) {
        const float *b = bp + t * DPC__NRF;
        float x0 = a0[t], x1 = a1[t];
        for (size_t j = 0; j < DPC__NRF; j++) {
            c0[j] += x0 * b[j];
            c1[j] += x1 * b[j];
        }
    }
    memcpy(out, c0, sizeof c0);
    memcpy(out + DPC__NRF, c1, sizeof c1);
}

static void store_row(float *c, const float *t, size_t w, int add)
{
    for (size_t j = 0; j < w; j++) c[j] = add ? c[j] + t[j] : t[j];
}

static void block_base(size_t m, size_t n, size_t k, size_t seg, const float *A, size_t lda,
                       const float *Bp, size_t kp, float *C, size_t ldc, int accumulate,
                       size_t p0, size_t p1)
{
    float t[2 * DPC__NRF];
    for (size_t i = 0; i < m; i += 2)
        for (size_t p = p0; p < p1; p++) {
            size_t j0 = p * DPC__NRF, w = n - j0 < DPC__NRF ? n - j0 : DPC__NRF;
            int two = i + 1 < m;
            for (size_t t0 = 0; t0 < k; t0 += seg) {
                size_t kk = k - t0 < seg ? k - t0 : seg;
                const float *bp = Bp + p * kp * DPC__NRF + t0 * DPC__NRF;
                kernel_2x16(kk, A + i * lda + t0, A + (two ? i + 1 : i) * lda + t0, bp, t);
                store_row(C + i * ldc + j0, t, w, accumulate || t0 > 0);
                if (two) store_row(C + (i + 1) * ldc + j0, t + DPC__NRF, w, accumulate || t0 > 0);
            }
        }
}

void dpc__gemmf_seg(dpc_isa isa, size_t m, size_t n, size_t k, size_t seg, const float *A,
                    size_t lda, const float *Bp, size_t kp, float *C, size_t ldc, int accumulate)
{
    if (m == 0 || n == 0) return;
    if (k == 0) {
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < n; j++)
                C[i * ldc + j] = accumulate ? C[i * ldc + j] + 0.0f : 0.0f;
        return;
    }
    if (seg == 0 || seg > k) seg = k;
    if (kp < k) kp = k;
    if (isa == DPC_ISA_AUTO) isa = dpc_isa_detect();
    size_t np = (n + DPC__NRF - 1) / DPC__NRF, per = L2_FLOATS / (k * DPC__NRF + 1);
    if (per < 1) per = 1;
    for (size_t p0 = 0; p0 < np; p0 += per) {
        size_t p1 = p0 + per < np ? p0 + per : np;
        switch (isa) {
        case DPC_ISA_AVX512:
            dpc__gemmf_block_avx512(m, n, k, seg, A, lda, Bp, kp, C, ldc, accumulate, p0, p1);
            break;
        case DPC_ISA_AVX2:
            dpc__gemmf_block_avx2(m, n, k, seg, A, lda, Bp, kp, C, ldc, accumulate, p0, p1);
            break;
        default: block_base(m, n, k, seg, A, lda, Bp, kp, C, ldc, accumulate, p0, p1); break;
        }
    }
}
