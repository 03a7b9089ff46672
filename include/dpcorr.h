/* dpcorr.h — umbrella header: differentially private machine learning with correlated noise.
 *
 * Each module header documents its contract, shapes, ownership and sources:
 *   dpcorr/common.h    status codes, error messages
 *   dpcorr/rng.h       counter-based RNG (Philox4x32-10), exact Gaussian sampler
 *   dpcorr/mech.h      mechanisms (strategy C, noising matrix B = C^-1), streaming noise,
 *                      sensitivity and error
 *   dpcorr/io.h        small text readers (coefficient files)
 *   dpcorr/account.h   privacy accounting (zCDP, GDP, RDP, PLD), calibration
 *   dpcorr/data.h      data sets: IDX, CSV, LIBSVM loaders, synthetic generators
 *   dpcorr/model.h     models with per-example gradients over a flat parameter slab
 *   dpcorr/sampler.h   batch selection described to the accountant
 *   dpcorr/train.h     the DP trainer (clip, correlated noise, optimizer, ledger)
 *   dpcorr/strategy.h  strategy optimization (BLT, banded Toeplitz, dense ME)
 *   dpcorr/theory.h    nu-DP-FTRL theory (stationary errors, bounds) and simulators
 */
#ifndef DPCORR_H
#define DPCORR_H

#include "dpcorr/common.h"
#include "dpcorr/rng.h"
#include "dpcorr/mech.h"
#include "dpcorr/io.h"
#include "dpcorr/account.h"
#include "dpcorr/data.h"
#include "dpcorr/model.h"
#include "dpcorr/sampler.h"
#include "dpcorr/train.h"
#include "dpcorr/strategy.h"
#include "dpcorr/theory.h"
#include "dpcorr/sim.h"
#include "dpcorr/kan.h"
#include "dpcorr/fft.h"
#include "dpcorr/linreg.h"
#include "dpcorr/srgd.h"

#endif
