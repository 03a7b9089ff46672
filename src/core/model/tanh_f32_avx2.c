/* tanh_f32_avx2.c — the AVX2 level of dpc__tanh_f32 (tanh_f32.h): tanh_f32.inc on 4 double
 * lanes, compiled with the AVX2 flags (Makefile), called only when the CPU has them. */
#include <math.h>
#include <string.h>

#include "model/tanh_f32.h"

#if defined(__AVX2__)
#define TH_W 4
#define TH_FN dpc__tanh_f32_avx2
#define TH_FN_APPROX dpc__tanh_f32_approx_avx2
#include "model/tanh_f32.inc"
#else
typedef int dpc__tanh_f32_avx2_unused; /* non-x86: nothing to compile */
#endif
