/* sampler_internal.h — the batch-size table of the Poisson kinds (size_table.c), and what the
 * tests read of a sampler beyond dpcorr/sampler.h. */
#ifndef DPCORR_SAMPLER_INTERNAL_H
#define DPCORR_SAMPLER_INTERNAL_H

#include "dpcorr/sampler.h"

#include <stdint.h>

/* Binomial(n, B / n) as 128-bit cumulative masses: the sizes k0 .. k0 + nk - 1 (out to P(k) /
 * P(B) < 2^-140), and for j < nk - 1 the boundary cum_j = hi[j] 2^64 + lo[j] with
 * |2^128 P(size <= k0 + j) - cum_j| < win (size_table.c; P(size < k0) <= win 2^-128, P(size <=
 * k0 + nk - 1) >= 1 - win 2^-128). tv bounds the total variation distance between the 128-bit
 * rule alone (the first j with U < cum_j) and the binomial; the draw below is exact. */
typedef struct dpc__size_table {
    uint64_t n, B;
    size_t k0, nk;
    uint64_t *hi, *lo; /* (nk - 1) each */
    uint64_t win;
    double tv;
} dpc__size_table;

/* n <= 2^48, 1 <= B, 16 B < n. DPC_E_NOMEM. */
dpc_status dpc__size_table_build(dpc__size_table *t, uint64_t n, uint64_t B, dpc_error *err);
void dpc__size_table_free(dpc__size_table *t);

/* A uniform U in [0, 1) as words, most significant first: word i is fixed[i] for i < nfixed (for
 * tests), else dpc_rng_word(s, row, 0, i). The samplers use row = the step, nfixed = 0: no
 * other draw of a table sampler reads (row t, index 0) past attempt 0 (its members use indices
 * >= 1; the dense draw has no table). */
typedef struct dpc__uniform {
    const dpc_rng_stream *s;
    uint64_t row;
    const uint64_t *fixed;
    size_t nfixed;
} dpc__uniform;

/* The batch size of U, exactly Binomial(n, B / n): the first k with U < P(size <= k). The first
 * word decides alone (path 0) unless it is within one of a boundary's high word (about 3 nk
 * 2^-64 of the draws); then the second word (path 1), and where the 128-bit prefix is within win
 * of a boundary (about 2 win nk 2^-128), the exact comparison with U at rising precision (path
 * 2 + l: exact integer walks of 8, 16, ... limbs, the last at 8 2^l). DPC_E_NOMEM, or
 * DPC_E_NUMERIC where U agrees with P(size <= k) to 4 million bits. */
dpc_status dpc__size_table_draw(const dpc__size_table *t, const dpc__uniform *u, size_t *size,
                                int *path);

/* A Poisson kind drawing its batch size from the table (rate below 1/16): the table; NULL for
 * the other kinds and the dense draw. */
const dpc__size_table *dpc__sampler_size_table(const dpc_sampler *s);

#endif
