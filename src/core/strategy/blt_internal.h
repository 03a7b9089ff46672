/* blt_internal.h — BLT closed forms shared by blt_gram.c, blt_opt.c and the tests (not public). */
#ifndef DPCORR_SRC_STRATEGY_BLT_INTERNAL_H
#define DPCORR_SRC_STRATEGY_BLT_INTERNAL_H

#include "dpcorr/strategy.h"

#include <stdint.h>

/* Dimension of the state-space system of blt_gram.c: nbuf + 1 (+ 1 when momentum != 0). */
size_t dpc__blt_state_dim(size_t nbuf, double momentum);

/* Builds F (d, d), g (d), h (d) of the system of the workload noise of the BLT (blt_gram.c). */
void dpc__blt_system(double *F, double *g, double *h, const double *theta, const double *omega,
                     size_t nbuf, const dpc_workload *wl);

/* qg = h^T G_N h and (want_h) qh = h^T H_N h by doubling. If Fbar != NULL also the gradient of
 * cg*qg + ch*qh with respect to F (Fbar, (d, d)) and h (hbar, (d)). Returns 0 on allocation
 * failure. */
int dpc__blt_gram_quad(const double *F, const double *g, const double *h, size_t d, uint64_t N,
                       int want_h, double *qg, double *qh, double *Fbar, double *hbar,
                       double cg, double ch);

/* Naive reference: sum_{t<n} y_t^2 and sum_{t<n} (n - t) y_t^2 by running the recursions. */
int dpc__blt_error_sums_naive(const double *theta, const double *omega, size_t nbuf,
                              const dpc_workload *wl, size_t n, double *sum_sq,
                              double *sum_weighted);

/* Squared min-sep sensitivity of the BLT for k_eff participations b apart (pattern 0, b, 2b, ..;
 * exact for omega >= 0, sum omega <= 1). omt = 1 - theta given separately for accuracy.
 * O(k_eff nbuf^2). */
double dpc__blt_sens2(const double *theta, const double *omt, const double *omega, size_t nbuf,
                      size_t n, size_t keff, size_t b);

#endif
