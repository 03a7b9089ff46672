/* linreg_internal.h — shared by the files of src/linreg (not installed). */
#ifndef DPCORR_SRC_LINREG_INTERNAL_H
#define DPCORR_SRC_LINREG_INTERNAL_H

#include "dpcorr/papers/linreg.h"

/* The enums' names (linreg_fields.c; the field tables' ENUM names). */
extern const char *const dpc__linreg_algo_names[4];
extern const char *const dpc__dpstat_rule_names[2];

/* A run (run.c; checkpoints: run_ckpt.c). */
struct dpc_linreg {
    dpc_linreg_plan plan;
    const dpc_dataset *ds;
    size_t *perm;        /* (N) position -> record */
    double *w;           /* (d) w_t */
    double *sum;         /* (d) sum of the tail iterates */
    double *update;      /* (d) eta G_t of the last step */
    double *noise;       /* (d) eta (2 alpha zeta_t / b) g_t of the last step */
    double *g;           /* (d) scratch: g_t / gradient sum */
    double *resid;       /* (s) stat residuals */
    double *work;        /* (s) DP-STAT scratch */
    double *scratch;     /* owns g, resid, work */
    dpc_rng_stream s_noise, s_stat;
    size_t t;            /* steps done */
    size_t tail_count;   /* iterates added to sum */
    uint32_t stream;     /* dpc_linreg_opts.stream */
};

/* <a, b> over n entries, summed left to right (one fixed order everywhere). */
static inline double dpc__lr_dot(const double *a, const double *b, size_t n)
{
    double s = 0.0;
    for (size_t j = 0; j < n; j++) s += a[j] * b[j];
    return s;
}

/* In-place Cholesky of the symmetric positive definite n x n matrix a (row-major, lower triangle
 * used and overwritten with L, a = L L^T). Returns 0, or 1 when a is not positive definite. */
int dpc__lr_cholesky(double *a, size_t n);
/* Solves L L^T x = b in place (b becomes x) with the factor from dpc__lr_cholesky. */
void dpc__lr_cholesky_solve(const double *l, size_t n, double *b);

#endif
