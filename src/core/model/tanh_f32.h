/* tanh_f32.h — internal: the float32 path's tanh, z = (float)tanh((double)z) bit for bit,
 * without calling libm for almost every input (model/batch_f32.c).
 *
 * Why it is exact: for |x| in [2^-12, 9.5) the kernels compute y', an approximation of
 * tanh|x| in double with relative error below 2^-40 (tests/test_tanh_f32.c checks 2^-44
 * against long double on a dense sample), and keep (float)y' only when y' lies more than
 * DPC__TANH_GUARD double ulps from every midpoint between two floats. Then the exact tanh
 * (within 2^13 ulps of y') and libm's double tanh (within 2^13 ulps of the exact value for
 * any libm; glibc documents 2) lie on the same side of that midpoint, so both round to the
 * same float. Every other input goes to (float)tanh((double)x). The other ranges are exact by
 * arithmetic: |x| < 2^-12 rounds back to x (tanh x differs from x by less than x^3/3, under a
 * quarter of the float spacing around x) and |x| >= 9.5 to +-1 (1 - tanh 9.5 < 1.2e-8, below
 * the half spacing 2^-25 under 1). tests/test_tanh_f32.c compares every float in [2^-13, 10]
 * (136 million) at every level with libm, and samples the rest.
 *
 * Levels (dpcorr/isa.h): one kernel source (tanh_f32.inc, GCC vector extensions) at 2, 4 and 8
 * double lanes; they compute the same y' by the same IEEE operations, so their decisions agree
 * too. */
#ifndef DPCORR_SRC_TANH_F32_H
#define DPCORR_SRC_TANH_F32_H

#include <stddef.h>

#include "dpcorr/isa.h"

#define DPC__TANH_GUARD (1 << 14) /* double ulps: 2^13 for y' + 2^13 for libm */

/* z[0..n) = (float)tanh((double)z[i]) at instruction-set level isa (resolved or AUTO). Returns
 * the number of inputs that went to libm (the guard, NaN). */
size_t dpc__tanh_f32(dpc_isa isa, float *z, size_t n);

/* For the tests: y[i] = y' of |x[i]| (meaningful for |x[i]| in [2^-12, 9.5)) at level isa. */
void dpc__tanh_f32_approx(dpc_isa isa, const float *x, double *y, size_t n);

/* The level kernels (n a multiple of their lanes; only called on CPUs with the level). */
size_t dpc__tanh_f32_avx2(float *z, size_t n);
size_t dpc__tanh_f32_avx512(float *z, size_t n);
void dpc__tanh_f32_approx_avx2(const float *x, double *y, size_t n);
void dpc__tanh_f32_approx_avx512(const float *x, double *y, size_t n);

#endif
