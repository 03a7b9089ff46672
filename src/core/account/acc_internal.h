/* acc_internal.h — declarations shared between the accounting translation units (internal). */
#ifndef DPCORR_SRC_ACC_INTERNAL_H
#define DPCORR_SRC_ACC_INTERNAL_H

#include "dpcorr/account.h"

#define DPC__MAX_ORDER 1e6

dpc_status dpc__check_orders(const double *orders, size_t n, dpc_error *err);

/* Single-order RDP curves (arguments already validated). z = noise multiplier. */
double dpc__rdp_gauss1(double z, double a);
double dpc__rdp_poisson1(double q, double z, double a, int *ok);
double dpc__rdp_wor1(double q, double z, double a);
/* Improved conversion at one order: eps for log(delta) = logd; log delta for eps. */
double dpc__rdp_eps1(double a, double r, double logd);
double dpc__rdp_logdelta1(double a, double r, double eps);

/* PLD internals (pld.c). The Gaussian PLD whose initial truncation (tail * 1e-5) is divided by
 * the number of compositions it will undergo; grid points the count-fold composition needs (the
 * larger direction); the point budget of one composition; the binary-powering reference. */
dpc_status dpc__pld_new_gaussian_count(dpc_pld **out, double z, double q,
                                       const dpc_pld_params *par, size_t count, dpc_error *err);
/* dpc_pld_self_compose that also reports the grid points the composition needs (filled on
 * DPC_E_RANGE too, when the window exceeds dpc__pld_max_points). */
dpc_status dpc__pld_self_compose_pts(dpc_pld **out, const dpc_pld *a, size_t count,
                                     double *points, dpc_error *err);
size_t dpc__pld_max_points(void);
double dpc__pld_interval(const dpc_pld *a);
dpc_status dpc__pld_self_compose_naive(dpc_pld **out, const dpc_pld *a, size_t count,
                                       dpc_error *err);

/* dpc_account_calibrate_sigma that also reports the number of evaluations of the requested
 * accountant (for PLD: the secant steps after the RDP bracket). */
dpc_status dpc__calibrate_sigma_count(const dpc_event *ev, const dpc_account_opts *o,
                                      double epsilon, double delta, double *sigma,
                                      size_t *evals, dpc_error *err);

#include "fft/fft_core.h" /* the FFT and convolutions used to compose PLDs */

#endif
