/* audit_internal.h — helpers shared by the files of src/core/audit (not public). */
#ifndef DPCORR_SRC_AUDIT_INTERNAL_H
#define DPCORR_SRC_AUDIT_INTERNAL_H

#include "dpcorr/audit.h"

/* bound.c: the binomial pmf (Loader's form), the p-value and the first crossing without
 * argument checks, the default grid of guess sizes (kp, km: DPC_AUDIT_GRID_MAX each; returns the
 * count). */
double dpc__binom_pmf(size_t k, size_t r, double p);
double dpc__audit_pvalue(size_t m, size_t r, size_t v, double eps, double delta);
double dpc__audit_epsilon_bound(size_t m, size_t r, size_t v, double delta, double sig);
size_t dpc__audit_grid(size_t m, size_t *kp, size_t *km);

/* canary.c: the canary designs (the training set with the canary slots, the Dirac coordinates,
 * black-box scores). */
typedef struct dpc__canaries {
    dpc_audit_canary kind;
    size_t m;               /* canaries */
    size_t first;           /* index of canary 0 in the training set */
    unsigned char *in;      /* (m) 1 = included */
    size_t *coord;          /* GRADIENT: (m) the parameter coordinate of each canary */
    double clip;            /* GRADIENT: the gradient norm inserted */
    dpc_dataset *data;      /* the training set of the run: real examples + m canary slots */
} dpc__canaries;

dpc_status dpc__canaries_build(dpc__canaries *cn, const dpc_audit_config *ac,
                               const dpc_dataset *train, const dpc_rng *rng, dpc_error *err);
/* GRADIENT: m canaries need m parameters (error on "canaries"); DPC_OK for the other kinds. */
dpc_status dpc__canaries_fit_model(dpc_audit_canary kind, size_t m, const dpc_model *model,
                                   dpc_error *err);
/* GRADIENT: chooses the coordinates from the real examples' gradients at params (P). */
dpc_status dpc__canaries_coords(dpc__canaries *cn, const dpc_model *model, const double *params,
                                size_t examples, const dpc_rng *rng, dpc_error *err);
/* The trainer hook: adds clip * e_coord(c) to sum. */
void dpc__canary_add_gradient(void *ctx, size_t canary, double *sum);
/* Black-box scores: loss(params0) - loss(params1) of every canary example. scores (m). */
dpc_status dpc__canaries_loss_scores(const dpc__canaries *cn, const dpc_model *model,
                                     const double *params0, const double *params1,
                                     double *scores, dpc_error *err);
void dpc__canaries_free(dpc__canaries *cn);

#endif
