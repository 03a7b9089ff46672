/* dpcorr.h — umbrella header: differentially private machine learning with correlated noise.
 *
 * Modules (each header documents its contract, shapes, ownership and sources):
 *   dpcorr/common.h   status codes, error messages
 *   dpcorr/rng.h      counter-based RNG (Philox4x32-10), exact Gaussian sampler
 *   dpcorr/mech.h     mechanisms (strategy C, noising matrix C^-1), streaming noise,
 *                     sensitivity and error
 *   dpcorr/io.h       small text readers (coefficient files)
 *   dpcorr/fft.h      radix-2 FFT and FFT convolution (with naive references)
 *   dpcorr/theory.h   stationary-error theory of DP-FTRL (nu-DP-FTRL paper): gamma_inf, S_b,
 *                     V0, LTI optimum, Appendix C bounds, rates, Theorem 3.1 bound
 *   dpcorr/sim.h      long-horizon simulators (fixed/random design, log-cosh) with FFT noise
 */
#ifndef DPCORR_H
#define DPCORR_H

#include "dpcorr/common.h"
#include "dpcorr/rng.h"
#include "dpcorr/mech.h"
#include "dpcorr/io.h"
#include "dpcorr/fft.h"
#include "dpcorr/theory.h"
#include "dpcorr/sim.h"

#endif
