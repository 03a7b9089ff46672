/* tanh_f32.c — dpc__tanh_f32 (tanh_f32.h): the baseline level (tanh_f32.inc on 2 double
 * lanes, plain C for any target), the dispatch to the AVX2 / AVX-512 kernels, and the tail of
 * fewer than a vector's lanes (padded). */
#include "model/tanh_f32.h"

#include <math.h>
#include <string.h>

#define TH_W 2
#define TH_FN tanh_base
#define TH_FN_APPROX tanh_base_approx
static size_t tanh_base(float *z, size_t n);
static void tanh_base_approx(const float *x, double *y, size_t n);
#include "model/tanh_f32.inc"

#define TH_MAX_LANES 8

typedef size_t (*tanh_kernel)(float *, size_t);
typedef void (*approx_kernel)(const float *, double *, size_t);

/* The level's kernels and lanes (AUTO: the CPU's best). */
static size_t level(dpc_isa isa, tanh_kernel *k, approx_kernel *a)
{
    if (isa == DPC_ISA_AUTO) isa = dpc_isa_detect();
#if defined(__x86_64__)
    if (isa == DPC_ISA_AVX512) {
        *k = dpc__tanh_f32_avx512;
        *a = dpc__tanh_f32_approx_avx512;
        return 8;
    }
    if (isa == DPC_ISA_AVX2) {
        *k = dpc__tanh_f32_avx2;
        *a = dpc__tanh_f32_approx_avx2;
        return 4;
    }
#endif
    *k = tanh_base;
    *a = tanh_base_approx;
    return TH_W;
}

size_t dpc__tanh_f32(dpc_isa isa, float *z, size_t n)
{
    tanh_kernel k;
    approx_kernel a;
    size_t w = level(isa, &k, &a), body = n - n % w, slow = k(z, body);
    if (body < n) { /* the tail in a padded vector (padding 0: tanh 0 = 0, not counted) */
        float pad[TH_MAX_LANES] = {0};
        memcpy(pad, z + body, (n - body) * sizeof *z);
        slow += k(pad, w);
        memcpy(z + body, pad, (n - body) * sizeof *z);
    }
    return slow;
}

void dpc__tanh_f32_approx(dpc_isa isa, const float *x, double *y, size_t n)
{
    tanh_kernel k;
    approx_kernel a;
    size_t w = level(isa, &k, &a), body = n - n % w;
    a(x, y, body);
    if (body < n) {
        float pad[TH_MAX_LANES] = {0};
        double out[TH_MAX_LANES];
        memcpy(pad, x + body, (n - body) * sizeof *x);
        a(pad, out, w);
        memcpy(y + body, out, (n - body) * sizeof *y);
    }
}
