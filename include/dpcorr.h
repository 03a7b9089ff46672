/* dpcorr.h — umbrella header: differentially private machine learning with correlated noise.
 *
 * The core (data -> sampler -> model -> clip -> mechanism -> optimizer -> accountant/ledger);
 * each header documents its contract, shapes, ownership and sources (doc/architecture.md):
 *   dpcorr/common.h    status codes, error messages
 *   dpcorr/isa.h       instruction-set levels of the hot kernels (runtime CPU dispatch)
 *   dpcorr/tune.h      the level per kernel family by measurement
 *   dpcorr/rng.h       counter-based RNG (Philox4x32-10 seeded, ChaCha20 secure), exact Gaussian
 *   dpcorr/special.h   special functions (complete elliptic integrals)
 *   dpcorr/fft.h       real FFT and convolution (accountant, theory)
 *   dpcorr/mech.h      mechanisms (strategy C, noising matrix B = C^-1), streaming noise,
 *                      sensitivity and error
 *   dpcorr/io.h        small text readers (coefficient files)
 *   dpcorr/account.h   privacy accounting (zCDP, GDP, RDP, PLD), calibration
 *   dpcorr/strategy.h  strategy optimization (BLT, banded Toeplitz, dense ME), strategy files
 *   dpcorr/data.h      data sets: IDX, CSV, LIBSVM loaders, synthetic generators
 *   dpcorr/features.h  handcrafted features of image data sets (ScatterNet), cached
 *   dpcorr/bspline.h   uniform cubic B-splines (the KAN model kind)
 *   dpcorr/model.h     models with per-example gradients over a flat parameter slab
 *   dpcorr/sampler.h   batch selection described to the accountant
 *   dpcorr/train.h     the DP trainer (clip, correlated noise, optimizer, ledger), run plans
 *   dpcorr/privatize.h a private step in your own loop (batch, noised update, ledger)
 *   dpcorr/audit.h     empirical privacy auditing in one run (canaries, scores, lower bound)
 *   dpcorr/abi.h       sizes of the public structs (bindings check their mirrors)
 *
 * Ownership (every module): the caller owns each object it creates with a `_new` and releases it
 * with the matching `_free` (which accepts NULL); `_new` validates one parameter struct and
 * copies the arrays it computes with (a mechanism's coefficients), but a resolved configuration
 * it hands back (dpc_train_plan_config) still points at the caller's arrays;
 * objects given to another `_new` (a mechanism to dpc_noise_new, a model and data sets to
 * dpc_trainer_new) are borrowed and must outlive the object built on them; getters return
 * pointers owned by the object they came from, valid until it is freed (the resolved
 * configuration of a trainer or plan points into the trainer's own arrays, e.g. its default
 * BLT); the library keeps no global state, so independent objects may be used from different
 * threads. doc/embedding.md shows the path from this header to a private step (examples/).
 *
 * The papers' modules, thin layers over the core (dpcorr/papers/):
 *   theory.h, sim.h    nu-DP-FTRL: stationary-error theory, bounds, simulators
 *   linreg.h           DP-SSGD / DP-AMBSSGD with DP-STAT (adaptive clipping linear regression)
 *   srgd.h             Accelerated-DP-SRGD (single-epoch DP-SCO, tree noise)
 *   kan.h              two-layer B-spline KAN, projected DP-lambda-CGD
 */
#ifndef DPCORR_H
#define DPCORR_H

#include "dpcorr/common.h"
#include "dpcorr/field.h"
#include "dpcorr/isa.h"
#include "dpcorr/rng.h"
#include "dpcorr/special.h"
#include "dpcorr/fft.h"
#include "dpcorr/mech.h"
#include "dpcorr/io.h"
#include "dpcorr/account.h"
#include "dpcorr/strategy.h"
#include "dpcorr/data.h"
#include "dpcorr/features.h"
#include "dpcorr/bspline.h"
#include "dpcorr/model.h"
#include "dpcorr/sampler.h"
#include "dpcorr/train.h"
#include "dpcorr/privatize.h"
#include "dpcorr/audit.h"
#include "dpcorr/abi.h"
#include "dpcorr/tune.h"
#include "dpcorr/papers/theory.h"
#include "dpcorr/papers/sim.h"
#include "dpcorr/papers/nu_repro.h"
#include "dpcorr/papers/linreg.h"
#include "dpcorr/papers/srgd.h"
#include "dpcorr/papers/kan.h"

#endif
