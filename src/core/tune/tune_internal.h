/* tune_internal.h — the decision of dpc_tune_isa on given timings (for the tests). */
#ifndef DPCORR_TUNE_INTERNAL_H
#define DPCORR_TUNE_INTERNAL_H

#include "dpcorr/tune.h"

#include <stddef.h>

/* The level of one family from timed rounds: sec[r * 4 + level] (seconds, r < rounds <= 64,
 * levels SSE2 .. have); ns[level] = the median over the rounds times scale (0 above have), and
 * the choice dpc_tune_choose makes on those medians. */
dpc_isa dpc__tune_decide(const double *sec, size_t rounds, dpc_isa have, double scale,
                         double ns[4]);

#endif
