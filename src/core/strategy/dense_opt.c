/* dense_opt.c — optimal dense factorization "ME" (Denisov et al. 2022, single participation;
 * Choquette-Choo et al. 2023, multi-epoch), n <= 2048, with BLAS/LAPACK.
 *
 * Variables: the strictly-lower entries of X = C^T C within the bandwidth bw (X_ij = 0 for
 * |i - j| >= bw; bw = n for k_eff = 1, bw <= b otherwise), diag(X) = 1. Then every column of C
 * has unit norm and columns b or more apart are orthogonal, so for any min-sep pattern
 * sens^2 = sum_{i in pattern} X_ii = k_eff exactly, whatever the signs of X.
 * Row errors r_i = (A X^-1 A^T)_ii:
 *     MEAN  f = log(sum_i r_i / n)              (RMSE^2, Denisov et al. eq. for tr(A^T A X^-1))
 *     MAX   f = log((sum_i r_i^p)^(1/p)), p = 16, 64, 256 in turn (smooth surrogate); the point
 *           with the smallest true max seen during the search is kept.
 * Computed through Y = A^-T X A^-1 (A^-1 has three diagonals, so Y costs O(n^2)): then
 * A X^-1 A^T = Y^-1 and r_i = (Y^-1)_ii (dpotrf + dpotri). Gradient: df/dY = -Y^-1 W Y^-1,
 * W = diag(df/dr_i) (one dsyrk), df/dX = A^-1 (df/dY) A^-T: about 2 n^3 flops per evaluation.
 * Points that are not positive definite evaluate to +inf; the line search backtracks.
 * Start: the diagonal completion X0 = Y / max diag(Y) + diag(1 - Y_ii / max diag(Y)) of a good
 * Toeplitz strategy Y = C^T C (the workload square root, banded to bw bands for k_eff > 1): X0 >=
 * Y / max diag(Y) in the Loewner order, so the start is already at least as good as it.
 * C is recovered lower-triangular from X = C^T C by a reversed Cholesky: J X J = L L^T,
 * C = J L^T J. */
#include "common/util.h"
#include "mech/mech_internal.h"
#include "strategy/strategy_internal.h"

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <string.h>

#define DENSE_OPT_MAX 2048

typedef struct dense_ctx {
    size_t n, bw, nv;
    int mean;
    double p;          /* surrogate exponent (MAX) */
    double *X, *V, *G; /* (n, n) workspaces */
    double *r;         /* (n) row errors */
    double dinv[3];    /* A^-1 = Toeplitz(1, -(a + m), a m) */
    double best_true;  /* smallest true objective (log err^2) seen */
    double *best_x;    /* (nv) */
    int chol_failed;
} dense_ctx;

static void x_to_X(const dense_ctx *c, const double *x, double *X)
{
    size_t n = c->n, q = 0;
    memset(X, 0, n * n * sizeof *X);
    for (size_t i = 0; i < n; i++) {
        size_t j0 = i + 1 >= c->bw ? i + 1 - c->bw : 0;
        for (size_t j = j0; j < i; j++) X[i * n + j] = x[q++];
        X[i * n + i] = 1.0;
    }
}

/* Y = D^T X D with D = A^-1 (lower-triangular, diagonals 1, -(a+m), a m): A X^-1 A^T = Y^-1.
 * X: full symmetric (n, n); Y and T: (n, n). O(n^2). */
static void congruence_dinv(const dense_ctx *c, double *Y, const double *X, double *T)
{
    size_t n = c->n;
    const double *d = c->dinv;
    for (size_t i = 0; i < n; i++) /* T = X D: column j = sum_k X[:,k] D[k][j], k = j..j+2 */
        for (size_t j = 0; j < n; j++) {
            double acc = 0.0;
            for (size_t q = 0; q < 3 && j + q < n; q++) acc += X[i * n + j + q] * d[q];
            T[i * n + j] = acc;
        }
    for (size_t i = 0; i < n; i++) /* Y = D^T T: row i = sum_k D[k][i] T[k,:], k = i..i+2 */
        for (size_t j = 0; j < n; j++) {
            double acc = 0.0;
            for (size_t q = 0; q < 3 && i + q < n; q++) acc += d[q] * T[(i + q) * n + j];
            Y[i * n + j] = acc;
        }
}

/* Row errors r_i = (Y^-1)_ii for the variables x; leaves Y^-1 (full symmetric) in c->V.
 * Returns 0 if X (equivalently Y) is not positive definite. */
static int row_errors(dense_ctx *c, const double *x)
{
    size_t n = c->n;
    x_to_X(c, x, c->X);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < i; j++) c->X[j * n + i] = c->X[i * n + j];
    congruence_dinv(c, c->V, c->X, c->G);
    if (LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', (lapack_int)n, c->V, (lapack_int)n) != 0) return 0;
    if (LAPACKE_dpotri(LAPACK_ROW_MAJOR, 'L', (lapack_int)n, c->V, (lapack_int)n) != 0) return 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < i; j++) c->V[j * n + i] = c->V[i * n + j];
        c->r[i] = c->V[i * n + i];
    }
    return 1;
}

/* log of the true objective (RMSE^2 or max error^2) from c->r. */
static double true_obj(const dense_ctx *c)
{
    double s = 0.0, mx = 0.0;
    for (size_t i = 0; i < c->n; i++) {
        s += c->r[i];
        if (c->r[i] > mx) mx = c->r[i];
    }
    return c->mean ? log(s / (double)c->n) : log(mx);
}

static double dense_objective(void *vc, const double *x, double *g, size_t nx)
{
    dense_ctx *c = vc;
    size_t n = c->n;
    if (!row_errors(c, x)) return INFINITY;
    double *r = c->r, f, mx = 0.0, s = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(r[i]) || !(r[i] > 0.0)) return INFINITY;
        if (r[i] > mx) mx = r[i];
        s += r[i];
    }
    double wrow[DENSE_OPT_MAX]; /* df/dr_i */
    if (c->mean) {
        f = log(s / (double)n);
        for (size_t i = 0; i < n; i++) wrow[i] = 1.0 / s;
    } else {
        double sp = 0.0;
        for (size_t i = 0; i < n; i++) sp += pow(r[i] / mx, c->p);
        f = log(mx) + log(sp) / c->p;
        for (size_t i = 0; i < n; i++) wrow[i] = pow(r[i] / mx, c->p - 1.0) / (mx * sp);
    }
    double tobj = true_obj(c);
    if (tobj < c->best_true) {
        c->best_true = tobj;
        memcpy(c->best_x, x, nx * sizeof *x);
    }
    /* dr_i/dY = -Y^-1 e_i e_i^T Y^-1: G_Y = -(Y^-1 W^1/2)(Y^-1 W^1/2)^T, then G_X = D G_Y D^T */
    for (size_t k = 0; k < n; k++) {
        double *row = c->V + k * n;
        for (size_t i = 0; i < n; i++) row[i] *= sqrt(wrow[i]);
    }
    cblas_dsyrk(CblasRowMajor, CblasLower, CblasNoTrans, (int)n, (int)n, -1.0, c->V, (int)n, 0.0,
                c->G, (int)n);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < i; j++) c->G[j * n + i] = c->G[i * n + j];
    const double *d = c->dinv;
    double *T = c->X;
    for (size_t i = 0; i < n; i++) /* T = G_Y D^T: T[i][j] = sum_q G[i][j-q] d_q */
        for (size_t j = 0; j < n; j++) {
            double acc = 0.0;
            for (size_t q = 0; q < 3 && q <= j; q++) acc += c->G[i * n + j - q] * d[q];
            T[i * n + j] = acc;
        }
    size_t q = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j0 = i + 1 >= c->bw ? i + 1 - c->bw : 0;
        for (size_t j = j0; j < i; j++) { /* (D T)_ij = sum_q d_q T[i-q][j] */
            double acc = 0.0;
            for (size_t qq = 0; qq < 3 && qq <= i; qq++) acc += d[qq] * T[(i - qq) * n + j];
            g[q++] = 2.0 * acc;
        }
    }
    return 100.0 + f;
}

/* Diagonal completion of Y = C^T C for the lower-triangular Toeplitz C with coefficients cc
 * (L of them), written as variables x. */
static void start_point(dense_ctx *c, const double *cc, size_t L, double *x)
{
    size_t n = c->n;
    double *Y = c->X;
    /* Y_st (s <= t, lag q = t - s) = sum_{u=0}^{n-1-t} c_{u+q} c_u: running sums over u give
     * every entry of one lag in O(n) (as in mech_sens.c's Gram matrix). */
    for (size_t q = 0; q < n; q++) {
        double acc = 0.0;
        for (size_t u = 0; u + q < n; u++) {
            if (u + q < L) acc += cc[u + q] * cc[u];
            size_t t = n - 1 - u, s = t - q;
            Y[t * n + s] = acc;
        }
    }
    double md = 0.0;
    for (size_t i = 0; i < n; i++)
        if (Y[i * n + i] > md) md = Y[i * n + i];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j0 = i + 1 >= c->bw ? i + 1 - c->bw : 0;
        for (size_t j = j0; j < i; j++) x[k++] = Y[i * n + j] / md;
    }
}

dpc_status dpc_strategy_optimize_dense(dpc_strategy **out, const dpc_strategy_problem *pb,
                                       const dpc_strategy_options *opt, dpc_error *err)
{
    *out = NULL;
    dpc_status st = dpc_strategy_problem_check(pb, err);
    if (!st) st = dpc__strat_check_options(opt, err);
    if (st) return st;
    size_t n = pb->steps;
    if (n > DENSE_OPT_MAX)
        return dpc_error_param(err, DPC_E_RANGE, "steps",
                               "dense optimization supports n <= %d, got %zu", DENSE_OPT_MAX, n);
    size_t keff = dpc__strat_keff(pb);
    dense_ctx c;
    memset(&c, 0, sizeof c);
    c.n = n;
    c.mean = pb->objective == DPC_OBJECTIVE_MEAN;
    c.bw = n;
    if (keff > 1) {
        size_t bw = opt && opt->bands ? opt->bands : pb->min_sep;
        if (bw > pb->min_sep)
            return dpc_error_param(err, DPC_E_INVALID, "bands",
                                   "the bandwidth of X must be <= min_sep %zu for an exact "
                                   "sensitivity, got %zu",
                                   pb->min_sep, bw);
        c.bw = bw < n ? bw : n;
    }
    for (size_t i = 0; i < n; i++) c.nv += i < c.bw - 1 ? i : c.bw - 1;
    size_t nn = n * n;
    double *mem = dpc__malloc_array(3 * nn + 2 * n + 2 * c.nv + 1, sizeof(double));
    if (!mem) return DPC__NOMEM(err, "dense optimizer workspace");
    c.X = mem;
    c.V = mem + nn;
    c.G = mem + 2 * nn;
    c.r = mem + 3 * nn;
    double *wc = c.r + n;             /* (n) workload / start coefficients */
    double *x = wc + n;               /* (nv) */
    c.best_x = x + c.nv;              /* (nv) */
    c.dinv[0] = 1.0;
    c.dinv[1] = -(pb->workload.decay + pb->workload.momentum);
    c.dinv[2] = pb->workload.decay * pb->workload.momentum;

    /* start: square root of the workload (BSR coefficients), banded to bw */
    double *ccopy = c.r; /* (n >= bw) */
    if (!dpc__series_workload_root(ccopy, c.bw, pb->workload.decay, pb->workload.momentum, -1)) {
        free(mem);
        return DPC__NOMEM(err, "dense optimizer start");
    }
    start_point(&c, ccopy, c.bw, x);
    c.best_true = INFINITY;
    memcpy(c.best_x, x, c.nv * sizeof *x);
    /* default budget: 300 iterations, fewer for large n (about 2.5e10 / n^3: an evaluation costs
     * about 2 n^3 flops), at least 20 */
    double dflt = 2.5e10 / ((double)n * (double)n * (double)n);
    size_t max_iter = opt && opt->max_iterations ? opt->max_iterations
                      : dflt > 300.0                 ? 300
                      : dflt < 20.0                  ? 20
                                                     : (size_t)dflt;
    strat_lbfgs_result res = {0, 0, 0, opt ? &opt->progress : NULL, 0.0, (double)max_iter};
    size_t iters = 0;
    if (c.nv > 0) {
        double ps[3] = {16.0, 64.0, 256.0};
        int rounds = c.mean ? 1 : 3;
        for (int rd = 0; rd < rounds; rd++) {
            c.p = ps[rd];
            size_t it = c.mean ? max_iter : max_iter / 3 + (rd == 2 ? max_iter % 3 : 0);
            if (it == 0) continue;
            res.done0 = (double)iters;
            st = dpc__strat_minimize_ex(dense_objective, &c, x, c.nv, it, 1e-13, 10, 1, &res, err);
            if (st) {
                free(mem);
                return st;
            }
            iters += res.iterations;
            memcpy(x, c.best_x, c.nv * sizeof *x); /* continue from the best true point */
        }
    }
    /* C from the reversed Cholesky of the best X */
    dpc_strategy *s = dpc__strategy_alloc(DPC_MECH_DENSE, "dense", pb);
    if (!s || !(s->dense = dpc__calloc(nn, sizeof(double)))) {
        dpc_strategy_free(s);
        free(mem);
        return DPC__NOMEM(err, "strategy");
    }
    x_to_X(&c, c.best_x, c.G);
    for (size_t i = 0; i < n; i++) /* P = J X J, lower triangle */
        for (size_t j = 0; j <= i; j++) c.X[i * n + j] = c.G[(n - 1 - j) * n + (n - 1 - i)];
    lapack_int info = LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', (lapack_int)n, c.X, (lapack_int)n);
    if (info != 0) {
        dpc_strategy_free(s);
        free(mem);
        return dpc_error_set(err, DPC_E_NUMERIC, "dense: the optimized X is not positive definite");
    }
    for (size_t i = 0; i < n; i++) /* C[i][j] = L[n-1-j][n-1-i] */
        for (size_t j = 0; j <= i; j++) s->dense[i * n + j] = c.X[(n - 1 - j) * n + (n - 1 - i)];
    s->of_strategy = 1;
    s->iterations = iters;
    /* achieved loss: sens^2 = k_eff (unit diagonal, bandwidth <= b); exact row errors */
    if (!row_errors(&c, c.best_x)) {
        dpc_strategy_free(s);
        free(mem);
        return dpc_error_set(err, DPC_E_NUMERIC, "dense: the optimized X is not positive definite");
    }
    double e2 = exp(true_obj(&c));
    s->achieved.sensitivity = sqrt((double)keff);
    s->achieved.error = sqrt(e2);
    s->achieved.loss = (double)keff * e2;
    s->achieved.exact = 1;
    free(mem);
    *out = s;
    return DPC_OK;
}

double dpc__dense_log_obj_grad(const dpc_strategy_problem *pb, size_t bw, double p,
                               const double *x, double *g)
{
    dense_ctx c;
    memset(&c, 0, sizeof c);
    size_t n = pb->steps;
    if (n > DENSE_OPT_MAX || bw == 0) return NAN;
    c.n = n;
    c.bw = bw < n ? bw : n;
    c.mean = pb->objective == DPC_OBJECTIVE_MEAN;
    c.p = p;
    for (size_t i = 0; i < n; i++) c.nv += i < c.bw - 1 ? i : c.bw - 1;
    c.dinv[0] = 1.0;
    c.dinv[1] = -(pb->workload.decay + pb->workload.momentum);
    c.dinv[2] = pb->workload.decay * pb->workload.momentum;
    double *mem = dpc__malloc_array(3 * n * n + n + c.nv + 1, sizeof(double));
    if (!mem) return NAN;
    c.X = mem;
    c.V = mem + n * n;
    c.G = mem + 2 * n * n;
    c.r = mem + 3 * n * n;
    c.best_x = c.r + n;
    c.best_true = INFINITY;
    double f = dense_objective(&c, x, g, c.nv) - 100.0;
    free(mem);
    return f;
}
