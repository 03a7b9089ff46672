/* util.h — internal helpers shared by library modules (not installed, not public API). */
#ifndef DPCORR_SRC_UTIL_H
#define DPCORR_SRC_UTIL_H

#include "dpcorr/common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>

/* Overflow-checked a*b (and a*b*c); return 1 and store on success, 0 on overflow. */
/* ceil(a / b) for b >= 1 without the overflow of (a + b - 1) / b when b is huge. */
static inline size_t dpc__ceil_div(size_t a, size_t b) { return a / b + (a % b != 0); }

static inline int dpc__mul_ok(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > SIZE_MAX / a) return 0;
    *out = a * b;
    return 1;
}

/* calloc of n elements of size sz, with overflow check; NULL on failure or n == 0 -> 1 byte. */
static inline void *dpc__calloc(size_t n, size_t sz)
{
    size_t total;
    if (!dpc__mul_ok(n, sz, &total)) return NULL;
    return calloc(total ? n : 1, total ? sz : 1);
}

static inline void *dpc__malloc_array(size_t n, size_t sz)
{
    size_t total;
    if (!dpc__mul_ok(n, sz, &total)) return NULL;
    return malloc(total ? total : 1);
}

/* The work check of every bounded computation (dpcorr/common.h, DPC_WORK_LIMIT): DPC_OK when
 * ops (the estimated elementary operations) is within the limit, else DPC_E_RANGE naming field
 * ("<field>: <what> would take about 3.2e+11 operations, above the work limit 1e+10 ..."). */
static inline dpc_status dpc__work_check(double ops, const char *field, const char *what,
                                         dpc_error *err)
{
    if (ops <= DPC_WORK_LIMIT) return DPC_OK;
    return dpc_error_param(err, DPC_E_RANGE, field,
                           "%s would take about %.2g operations, above the work limit %.2g "
                           "(DPC_WORK_LIMIT, about 10 s)",
                           what, ops, DPC_WORK_LIMIT);
}

/* Calls the progress callback (if any); DPC_E_CANCELLED when it asks to stop. */
static inline dpc_status dpc__progress(const dpc_progress *p, double done, double total,
                                       dpc_error *err)
{
    if (p && p->fn && p->fn(p->ctx, done, total))
        return dpc_error_set(err, DPC_E_CANCELLED, "cancelled at %.0f of %.0f", done, total);
    return DPC_OK;
}

/* The largest scale a parameter may take where it is squared or multiplied (a step lr x clip, a
 * noise standard deviation, a Lipschitz constant, a paper's bound): its square stays finite
 * (sqrt(DBL_MAX) is 1.3e154), with room for the products it enters. Larger values are refused
 * naming the parameter (issue 28: 1e308 ran to inf or NaN with exit 0). */
#define DPC__SCALE_MAX 1e150

#define DPC__NOMEM(err, what) dpc_error_set((err), DPC_E_NOMEM, "out of memory allocating %s", (what))

/* Least-squares slope of log y on log x over the points with x, y > 0 (NAN below 2): the
 * reproductions' rates (every paper module's; public as dpc_nu_loglog_slope). */
static inline double dpc__loglog_slope(const double *x, const double *y, size_t n)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(x[i] > 0) || !(y[i] > 0)) continue;
        double lx = log(x[i]), ly = log(y[i]);
        sx += lx, sy += ly, sxx += lx * lx, sxy += lx * ly;
        k++;
    }
    if (k < 2) return NAN;
    double kk = (double)k;
    return (kk * sxy - sx * sy) / (kk * sxx - sx * sx);
}

/* Monotonic wall clock in seconds (time splits in reports; never an input to a value). */
static inline double dpc__now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Opens an input file for reading without ever blocking in open(2) (io/input.c): a regular
 * file or a character device; a FIFO only when data or its writer's end arrives within 1 s
 * (else DPC_E_IO "<path>: is a FIFO (named pipe) with nothing to read ..."); a directory
 * never; regular_only: a regular file only ("<path>: is a FIFO ..., not a regular file").
 * dpc__open_input gives a blocking descriptor, dpc__fopen_input a stream (*st the status). */
dpc_status dpc__open_input(const char *path, int regular_only, int *fd, dpc_error *err);
FILE *dpc__fopen_input(const char *path, int regular_only, dpc_status *st, dpc_error *err);

#endif
