/* dpcorr.h — umbrella header: differentially private machine learning with correlated noise.
 *
 * Modules (each header documents its contract, shapes, ownership and sources):
 *   dpcorr/common.h   status codes, error messages
 *   dpcorr/rng.h      counter-based RNG (Philox4x32-10), exact Gaussian sampler
 *   dpcorr/mech.h     mechanisms (strategy C, noising matrix C^-1), streaming noise,
 *                     sensitivity and error
 *   dpcorr/data.h     datasets: IDX / CSV / LIBSVM loaders (plain or gzip), synthetic
 *                     generators, data-independent preprocessing, --data specs
 */
#ifndef DPCORR_H
#define DPCORR_H

#include "dpcorr/common.h"
#include "dpcorr/rng.h"
#include "dpcorr/data.h"

#endif
