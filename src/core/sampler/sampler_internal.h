/* sampler_internal.h — what the tests read of a sampler beyond dpcorr/sampler.h. */
#ifndef DPCORR_SAMPLER_INTERNAL_H
#define DPCORR_SAMPLER_INTERNAL_H

#include "dpcorr/sampler.h"

/* A Poisson kind drawing its batch size from the table (rate below 1/16): the bound on the
 * table's total variation distance from Binomial(n, q), and the sizes it covers
 * (k0 .. k0 + nk - 1) with cum[j] = 2^64 P(size <= k0 + j) mod 2^64. 0 (nk = 0, cum NULL)
 * for the other kinds and the dense draw. */
double dpc__sampler_size_tv(const dpc_sampler *s, size_t *k0, size_t *nk, const uint64_t **cum);

#endif
