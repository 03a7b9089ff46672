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
                                     double *points, double tilt_level, dpc_error *err);
/* Round-off mass the FFT may have left in the losses above eps (largest clamped negative
 * times the entries there; 0 when the composition was refined by tilting). */
double dpc__pld_noise_above(const dpc_pld *a, double eps);
size_t dpc__pld_max_points(void);
double dpc__pld_interval(const dpc_pld *a);
dpc_status dpc__pld_self_compose_naive(dpc_pld **out, const dpc_pld *a, size_t count,
                                       dpc_error *err);

/* dpc_account_calibrate_sigma that also reports the number of evaluations of the requested
 * accountant (for PLD: the secant steps after the RDP bracket). */
dpc_status dpc__calibrate_sigma_count(const dpc_event *ev, const dpc_account_opts *o,
                                      double epsilon, double delta, double *sigma,
                                      size_t *evals, dpc_error *err);

/* PLD (both directions) of the pair P = sum_k w[k] N((off + k) g, s^2) vs Q = N(0, s^2) (w: (K),
 * sum 1), connect-the-dots on par->interval; `count` spreads the initial truncation as for the
 * Gaussian (pld_mog.c). */
dpc_status dpc__pld_new_mog(dpc_pld **out, const double *w, size_t K, size_t off, double g,
                            double s, const dpc_pld_params *par, size_t count, dpc_error *err);

/* MMCC (mmcc.c): the PLD dominating Poisson-sampled runs (rate p) of the matrix mechanism with
 * nonnegative strategy C (rows, n; row-major, rows in release order) and noise std s per row (in
 * units of the clip norm), by conditional composition; *slack receives the delta that the
 * conditioning events and truncations cost (the run is (eps, delta_pld + slack)-DP). delta is
 * the target the slack is budgeted against (about 0.11 delta). groups: runs of rows that share
 * one dominating row. */
dpc_status dpc__mmcc_pld(const double *C, size_t rows, size_t n, double p, double s,
                         double delta, const dpc_account_opts *o, size_t groups, dpc_pld **out,
                         double *slack, dpc_error *err);

/* Secant search on log eps(e^u) = log target (calibrate.c); see the definition. */
#include "account/acc_math.h"
int dpc__secant_log(dpc__fn eps_of_u, void *ctx, double target, double *u, double *slope,
                    double tol, int private_end, int max_it, double umax);

#include "fft/fft_core.h" /* the FFT and convolutions used to compose PLDs */

#endif
