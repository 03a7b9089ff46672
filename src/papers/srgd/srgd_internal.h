/* srgd_internal.h — the Accelerated-DP-SRGD run and problem objects shared by src/srgd (not
 * public). See include/dpcorr/papers/srgd.h for the contract. */
#ifndef DPCORR_SRC_SRGD_INTERNAL_H
#define DPCORR_SRC_SRGD_INTERNAL_H

#include "dpcorr/sampler.h"
#include "dpcorr/papers/srgd.h"

/* The enums' names (srgd_fields.c; the field tables' ENUM names). */
extern const char *const dpc__srgd_variant_names[3];
extern const char *const dpc__srgd_noise_names[3];
extern const char *const dpc__srgd_problem_kind_names[4];

struct dpc_srgd {
    dpc_srgd_config cfg;
    const dpc_model *model;
    const dpc_dataset *data;
    dpc_rng rng;
    size_t P, D, T, B, t;
    dpc_srgd_plan plan;
    dpc_ledger ledger;
    dpc_sampler *sampler;  /* permute = 1: the public permutation; else NULL */
    dpc_mech *mech;        /* noise mechanism (NULL when non-private) */
    dpc_noise *noise;      /* its streaming generator */
    double sigma;          /* std of Z on the scale of S_t */
    /* slabs, each (P) */
    double *x, *x_prev, *y, *z;
    double *S;             /* noise-free prefix sum S_t = sum_{i<=t} Delta_i (ACCEL_SGD: g_t) */
    double *noise_cum;     /* running sum of the unit per-step noise (ACCEL_SGD: this step's) */
    double *S_hat;         /* released S^_t = S_t + sigma noise_cum */
    double *xi;            /* sigma noise_cum */
    double *delta;         /* this step's Delta_t */
    double *step_noise;    /* (B Z)_t */
    double *gradF;         /* grad F(x_t) for the telemetry */
    /* chunk buffers */
    dpc_model_ws *ws;
    size_t chunk;
    double *X, *Y;         /* (chunk, D), (chunk) gathered rows */
    double *G1, *G0;       /* (chunk, P) per-example gradients at x_t and x_{t-1} */
    double *losses;        /* (chunk) */
    size_t *idx;           /* (B) the current batch */
    size_t grad_evals;
};

struct dpc_srgd_problem {
    dpc_srgd_problem_config cfg;
    dpc_dataset *data;
    size_t p, p0, K;       /* K: P3 block size */
    double *lambda;        /* (p) spectrum, 0 beyond p0 (P3 QUADRATIC: the diagonal of F) */
    double *w0;            /* (p) P1/P2: the generating parameter; P3: the unconstrained min */
    double *xstar;         /* (p) argmin over B(0, R) */
    double *evalA;         /* P1 SPHERE: (eval_n, p0) Monte-Carlo features */
    double L, M, fstar;
};

/* The run's delta for n examples: the rule of every trainer (dpc_account_resolve_delta); a
 * non-private run (epsilon INFINITY) has no guarantee to refuse, so any delta passes there. */
dpc_status dpc__srgd_delta(const dpc_srgd_config *c, size_t n, double *delta, int *derived,
                           dpc_error *err);

#endif
