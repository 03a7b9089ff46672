/* kan_internal.h — the paper's KAN object and the per-example pieces shared by its naive and
 * fast paths (internal, not installed). Sharing them is what makes the two paths agree bit for
 * bit: the forward sums run over the features in increasing index order in both, the dense
 * path merely adds exact zeros in between. */
#ifndef DPCORR_SRC_KAN_INTERNAL_H
#define DPCORR_SRC_KAN_INTERNAL_H

#include "dpcorr/papers/kan.h"

/* The metrics of a whole run (dpc_kan_lcgd_advance), saved in its checkpoints. */
typedef struct dpc__kan_run_metrics {
    double sums[4];        /* train loss, train error, test loss, test error over evaluations */
    double last[4];        /* the same at the last evaluation */
    double init_train_loss, max_dist, last_dist;
    size_t clipped, examples, evaluated;
    int have_test;         /* 1 until the test evaluation reports DPC_E_UNSUPPORTED */
    int eval_given;        /* an evaluation oracle was given */
} dpc__kan_run_metrics;

struct dpc_kan_lcgd {
    dpc_kan_lcgd_config cfg;
    size_t P;
    double c_priv;
    double *W0, *W, *g, *xi; /* (P) each; xi NULL at noise_std = 0 */
    size_t *idx;             /* (B) */
    dpc_rng_stream batch_stream;
    dpc_mech *mech;
    dpc_noise *noise;
    size_t t;                /* index of the current iterate W_t */
    size_t projections;
    size_t visited;          /* iterates visited by dpc_kan_lcgd_advance (0..T) */
    dpc__kan_run_metrics m;
};

struct dpc_kan2 {
    dpc_kan2_config cfg;
    dpc_bspline basis;  /* uniform cubic on [-1, 1] */
    size_t p, dp, P;       /* bases, features d*p, parameters m*d*p */
    double inv_sqrt_d, inv_sqrt_m, inv_sqrt_md;
    double *c;             /* (m, p), owned */
};

/* Sparse h(x): for every input coordinate its (at most 4) active bases, in increasing feature
 * index q = i*p + k. q (4d), v (4d); returns the count. x finite. */
size_t dpc__kan2_sparse_h(const dpc_kan2 *k, const double *x, size_t *q, double *v);

/* Per-example forward state (pre, u are (m)). */
typedef struct dpc__kan2_fwd {
    double f;       /* f_W(x) */
    double loss;    /* l(y f) (when y given) */
    double l1;      /* l'(y f) */
    double hnorm;   /* ||h(x)|| */
} dpc__kan2_fwd;

/* Second layer and alpha from the hidden pre-activations: given pre (m) (already scaled by
 * 1/sqrt d), writes alpha (m) (or NULL) and returns f. One implementation for both paths. */
double dpc__kan2_head(const dpc_kan2 *k, const double *pre, double *alpha);

/* Checks: W (P) finite, x (d) finite, y == +-1. Messages name the entry / example row. */
dpc_status dpc__kan2_check_W(const dpc_kan2 *k, const double *W, dpc_error *err);
dpc_status dpc__kan2_check_x(const dpc_kan2 *k, const double *x, size_t row, dpc_error *err);
dpc_status dpc__kan2_check_y(double y, size_t row, dpc_error *err);

/* sqrt(sum v^2) in a fixed order. */
double dpc__kan_norm(const double *v, size_t n);

#endif
