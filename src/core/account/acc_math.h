/* acc_math.h — numerical helpers shared by the accounting module (internal, not installed):
 * the standard normal in log space, log-sum-exp, 1-D minimization and bracketed root finding.
 * Everything is double precision and free of global state. */
#ifndef DPCORR_SRC_ACC_MATH_H
#define DPCORR_SRC_ACC_MATH_H

#include "dpcorr/common.h"

#include <math.h>
#include <stddef.h>

#define DPC__LOG_2PI 1.8378770664093454836
#define DPC__SQRT1_2 0.70710678118654752440

/* Phi(x), the standard normal CDF, with full relative accuracy in the lower tail. */
double dpc__ndtr(double x);
/* log Phi(x) for every finite x (continued fraction of the Mills ratio below -10). */
double dpc__log_ndtr(double x);
/* Mass of [a, b] (a <= b, infinities allowed) under N(mean, sd^2), computed from the tail on
 * the far side of the mean so that small masses keep their relative accuracy. */
double dpc__norm_mass(double a, double b, double mean, double sd);
/* x with log Phi(-x) = logp, for logp < log(1/2) (an upper-tail quantile). */
double dpc__ndtri_upper(double logp);

/* log(e^a + e^b) and log(e^a - e^b) (a >= b; -INFINITY when equal). */
double dpc__log_add(double a, double b);
double dpc__log_sub(double a, double b);

/* Minimizes f over x in [lo, hi]: a scan of `grid` points followed by golden-section search in
 * the best bracket (the functions minimized here are unimodal; the scan guards against flat or
 * badly scaled starts). Returns the minimizer; *fmin receives f there. */
typedef double (*dpc__fn)(double x, void *ctx);
double dpc__minimize(dpc__fn f, void *ctx, double lo, double hi, size_t grid, double *fmin);

/* Bisection for the crossing of a monotone predicate: `pred(x)` is false at *lo and true at
 * *hi. Shrinks [*lo, *hi] until hi - lo <= tol_abs + tol_rel * |hi| (or no representable point
 * is left); the caller picks the side it needs. If log_scale, bisects on log x (lo, hi > 0). */
typedef int (*dpc__pred)(double x, void *ctx);
void dpc__bisect(dpc__pred pred, void *ctx, double *lo, double *hi, double tol_abs,
                 double tol_rel, int log_scale);

/* Shared argument checks: write "name: must be ..., got v" and return DPC_E_INVALID. */
dpc_status dpc__check_pos(double v, const char *name, dpc_error *err);        /* > 0, finite */
dpc_status dpc__check_nonneg(double v, const char *name, dpc_error *err);     /* >= 0, finite */
dpc_status dpc__check_open01(double v, const char *name, dpc_error *err);     /* (0, 1) */
dpc_status dpc__check_half_open01(double v, const char *name, dpc_error *err);/* (0, 1] */

#endif
