/* dpcorr.h — umbrella header: differentially private machine learning with correlated noise.
 *
 * Modules (each header documents its contract, shapes, ownership and sources):
 *   dpcorr/common.h   status codes, error messages
 *   dpcorr/rng.h      counter-based RNG (Philox4x32-10), exact Gaussian sampler
 *   dpcorr/mech.h     mechanisms (strategy C, noising matrix C^-1), streaming noise,
 *                     sensitivity and error
 *   dpcorr/model.h    models (linear, logistic, softmax, MLP): per-example losses, ghost-norm
 *                     clipped gradient sums over one flat parameter slab
 */
#ifndef DPCORR_H
#define DPCORR_H

#include "dpcorr/common.h"
#include "dpcorr/rng.h"
#include "dpcorr/model.h"

#endif
