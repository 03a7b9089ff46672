/* tanh_f32_avx512.c — the AVX-512 level of dpc__tanh_f32 (tanh_f32.h): tanh_f32.inc on 8 double
 * lanes, compiled with the AVX-512 flags (Makefile), called only when the CPU has them. */
#include <math.h>
#include <string.h>

#include "model/tanh_f32.h"

#if defined(__AVX512F__)
#define TH_W 8
#define TH_FN dpc__tanh_f32_avx512
#define TH_FN_APPROX dpc__tanh_f32_approx_avx512
#include "model/tanh_f32.inc"
#else
typedef int dpc__tanh_f32_avx512_unused; /* non-x86: nothing to compile */
#endif
