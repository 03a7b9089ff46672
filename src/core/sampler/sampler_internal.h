/* sampler_internal.h — the batch-size table of the Poisson kinds (size_table.c), and what the
 * tests read of a sampler beyond dpcorr/sampler.h. */
#ifndef DPCORR_SAMPLER_INTERNAL_H
#define DPCORR_SAMPLER_INTERNAL_H

#include "dpcorr/sampler.h"

#include <stdint.h>

/* The attempt of the batch-size draw's second word, (t, 0, this): no other draw of a table
 * sampler reads (row t, index 0) past attempt 0 (its members use indices >= 1, the dense draw
 * has no table). */
#define DPC__SIZE_SECOND_ATTEMPT 1u

/* Binomial(n, B / n) as 128-bit cumulative masses: the sizes k0 .. k0 + nk - 1, and for j <
 * nk - 1 the boundary cum_j = hi[j] 2^64 + lo[j], within 2 of 2^128 P(size <= k0 + j) (the
 * normalized exact-integer table of size_table.c); the last size has the rest. A 128-bit
 * uniform U is size k0 + j for the first j with U < cum_j (j = nk - 1 if none). tv bounds the
 * total variation distance between the table and the binomial (derivation in size_table.c). */
typedef struct dpc__size_table {
    size_t k0, nk;
    uint64_t *hi, *lo; /* (nk - 1) each */
    double tv;
} dpc__size_table;

/* n <= 2^48, 1 <= B, 16 B < n. DPC_E_NOMEM. */
dpc_status dpc__size_table_build(dpc__size_table *t, uint64_t n, uint64_t B, dpc_error *err);
void dpc__size_table_free(dpc__size_table *t);

/* The index j of the 128-bit uniform whose high word is w and whose low word, drawn only when
 * w equals some hi[j] (*second = 1), is dpc_rng_word(s, row, 0, DPC__SIZE_SECOND_ATTEMPT). */
size_t dpc__size_table_find(const dpc__size_table *t, uint64_t w, const dpc_rng_stream *s,
                            uint64_t row, int *second);

/* A Poisson kind drawing its batch size from the table (rate below 1/16): the table; NULL for
 * the other kinds and the dense draw. */
const dpc__size_table *dpc__sampler_size_table(const dpc_sampler *s);

#endif
