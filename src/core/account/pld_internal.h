/* pld_internal.h — the discretized PLD's representation, shared by pld.c (Gaussian
 * discretization, (eps, delta)), pld_compose.c (composition) and pld_mog.c (mixtures of
 * Gaussians). Internal, not installed. */
#ifndef DPCORR_SRC_PLD_INTERNAL_H
#define DPCORR_SRC_PLD_INTERNAL_H

#include "account/acc_internal.h"

#define PLD_MAX_POINTS ((size_t)1 << 24) /* 128 MB per array: a few arrays stay < 1 GB */

typedef struct pmf {
    long long k0; /* p[j] is the P-mass at loss (k0 + j) * h */
    size_t n;
    double *p;
    double inf; /* P-mass at loss +infinity */
    double noise; /* FFT round-off level of the entries (largest clamped negative), 0 if none */
} pmf;

struct dpc_pld {
    double h, tail;
    dpc_pld_disc disc;
    int ndir;    /* 1: the two directions coincide (stored once); 2: dir[0] remove, dir[1] add */
    pmf dir[2];
};

void dpc__pmf_free(pmf *m);
/* Drops zero entries at both ends (keeps at least one point). */
void dpc__pmf_trim(pmf *m);
dpc_status dpc__pmf_copy(pmf *dst, const pmf *src);

#endif
