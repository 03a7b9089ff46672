/* dpcorr.h — umbrella header: differentially private machine learning with correlated noise.
 *
 * Modules (each header documents its contract, shapes, ownership and sources):
 *   dpcorr/common.h   status codes, error messages
 *   dpcorr/rng.h      counter-based RNG (Philox4x32-10), exact Gaussian sampler
 *   dpcorr/mech.h     mechanisms (strategy C, noising matrix C^-1), streaming noise,
 *                     sensitivity and error
 *   dpcorr/io.h       small text readers (coefficient files)
 *   dpcorr/strategy.h strategy optimization (BLT, banded Toeplitz, dense ME), strategy files
 */
#ifndef DPCORR_H
#define DPCORR_H

#include "dpcorr/common.h"
#include "dpcorr/rng.h"
#include "dpcorr/mech.h"
#include "dpcorr/io.h"
#include "dpcorr/strategy.h"

#endif
