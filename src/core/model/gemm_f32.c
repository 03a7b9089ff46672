/* gemm_f32.c — the float32 GEMM of the model's float32 path (gemm.h): the baseline tile kernel
 * here, and the packing, the baseline level and the dispatch to the AVX2 / AVX-512 kernels
 * (gemm_f32_avx2.c, gemm_f32_avx512.c) from gemm_base.inc, the same source as gemm.c's with
 * T = float. Every element is a sequential float sum over k in segments, products and sums
 * rounded separately (-ffp-contract=off), so every level computes the same bits. */
#include "model/gemm.h"

#include <string.h>

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

/* Packing, the baseline level (2 x 16 tiles of kernel_2x16) and the dispatch to the AVX2 /
 * AVX-512 levels: gemm_base.inc, shared with gemm.c. */
#define GS_T float
#define GS_NR DPC__NRF
#define GS_PREFIX dpc__gemmf
#define GS_KERNEL kernel_2x16
#include "model/gemm_base.inc"
