/* strategy_internal.h — helpers shared by the strategy optimizers (not public). */
#ifndef DPCORR_SRC_STRATEGY_INTERNAL_H
#define DPCORR_SRC_STRATEGY_INTERNAL_H

#include "dpcorr/strategy.h"

/* Objective for the minimiser: returns f(x) and writes the gradient g (n). A non-finite return
 * marks an infeasible point (the line search backs off). */
typedef double (*strat_objective)(void *ctx, const double *x, double *g, size_t n);

typedef struct strat_lbfgs_result {
    double f;          /* best objective value seen (at the returned x) */
    size_t iterations; /* L-BFGS iterations */
    int status;        /* liblbfgs return code (informational) */
    /* in: progress reports (NULL: none) as done0 + iterations of total */
    const dpc_progress *progress;
    double done0, total;
} strat_lbfgs_result;

/* Minimises f from x (n) in place with liblbfgs (memory 15, More-Thuente line search with a
 * backtracking retry), keeping the best point evaluated. rel_tol: stop when the objective
 * improves by less than rel_tol over 10 iterations. Reports every iteration to res->progress
 * (if set). Returns DPC_E_NOMEM, DPC_E_NUMERIC (no finite value at the start) or
 * DPC_E_CANCELLED (the progress callback asked to stop), else DPC_OK. */
dpc_status dpc__strat_minimize(strat_objective f, void *ctx, double *x, size_t n,
                               size_t max_iter, double rel_tol, strat_lbfgs_result *res,
                               dpc_error *err);

/* The same with the L-BFGS memory and, if backtracking != 0, a backtracking line search from the
 * start (for objectives that are +inf outside a feasible set). */
dpc_status dpc__strat_minimize_ex(strat_objective f, void *ctx, double *x, size_t n,
                                  size_t max_iter, double rel_tol, int memory, int backtracking,
                                  strat_lbfgs_result *res, dpc_error *err);

/* Allocates a zeroed strategy of the given kind for the problem. NULL on allocation failure. */
dpc_strategy *dpc__strategy_alloc(dpc_mech_kind kind, const char *method,
                                  const dpc_strategy_problem *pb);

/* Buffers of an optimized BLT (fixed or grown), the options' range. */
#define DPC__STRAT_BLT_MAX 32

/* Every option of o within its dpc_strategy_options_fields range (0: unset), naming the first
 * out of it; NULL is every default. Each optimizer checks its options through it. */
dpc_status dpc__strat_check_options(const dpc_strategy_options *o, dpc_error *err);

/* k_eff = min(k, ceil(n / b)) (1 when k = 1). */
size_t dpc__strat_keff(const dpc_strategy_problem *pb);

/* First n coefficients of the workload W = 1 / ((1 - a x)(1 - m x)). */
void dpc__strat_workload_coeffs(double *w, size_t n, const dpc_workload *wl);

/* Banded Toeplitz: log(sens^2 E) for the coefficients c (L of them, c_0 = 1 fixed, no other
 * constraint) and its exact gradient with respect to c_1 .. c_{L-1} (grad, (L); grad[0] = 0).
 * For the tests; NAN on failure. */
double dpc__banded_log_loss_grad(const dpc_strategy_problem *pb, const double *c, size_t L,
                                 double *grad);

/* Dense ME: the optimizer's objective (log RMSE^2, or log of the p-norm of the row errors for
 * MAX) at the strictly-lower band entries x of X (row by row, bandwidth bw, unit diagonal) and
 * its gradient g; +inf if X is not positive definite. For the tests. */
double dpc__dense_log_obj_grad(const dpc_strategy_problem *pb, size_t bw, double p,
                               const double *x, double *g);

#endif
