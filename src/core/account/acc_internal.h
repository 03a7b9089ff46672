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

#include "fft/fft_core.h" /* the FFT and convolutions used to compose PLDs */

#endif
