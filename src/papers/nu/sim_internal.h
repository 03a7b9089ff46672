/* sim_internal.h — block access to the correlated-noise source for the simulators (not public). */
#ifndef DPCORR_SRC_SIM_INTERNAL_H
#define DPCORR_SRC_SIM_INTERNAL_H

#include "dpcorr/papers/sim.h"

/* Computes the next block of noise; *m receives its number of steps and *first its first step.
 * Afterwards dpc__sim_noise_col(ns, j)[s] = w~_{first + s}[coord0 + j] for s < *m. */
dpc_status dpc__sim_noise_block(dpc_sim_noise *ns, size_t *m, size_t *first, dpc_error *err);
const double *dpc__sim_noise_col(const dpc_sim_noise *ns, size_t j);

#endif
