/* repro_internal.h — what the two files of the reproduction (repro.c, repro_runs.c) share
 * (internal, not installed). */
#ifndef DPCORR_SRC_KAN_REPRO_INTERNAL_H
#define DPCORR_SRC_KAN_REPRO_INTERNAL_H

#include "dpcorr/papers/kan.h"

/* The arguments checked (p, out non-NULL) and the grid of p->scale into *g. */
dpc_status dpc__kan_repro_begin(const dpc_kan_repro_params *p, const void *out,
                                dpc_kan_repro_grid *g, dpc_error *err);
/* Mean of v (n >= 1) and, when se is not NULL, its standard error (0 for n = 1). */
double dpc__kan_repro_mean(const double *v, size_t n, double *se);

#endif
