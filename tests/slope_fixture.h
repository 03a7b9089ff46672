/* slope_fixture.h — the ordinary least-squares slope of log y on log x, written out here so that
 * the reproduction tests check the library's rates (dpc__loglog_slope) against a computation of
 * their own. Include after harness.h. */
#ifndef DPCORR_TEST_SLOPE_FIXTURE_H
#define DPCORR_TEST_SLOPE_FIXTURE_H

#include <math.h>
#include <stddef.h>

static inline double ols_loglog(const double *x, const double *y, size_t n)
{
    double mx = 0, my = 0, sxy = 0, sxx = 0;
    for (size_t i = 0; i < n; i++) mx += log(x[i]) / (double)n, my += log(y[i]) / (double)n;
    for (size_t i = 0; i < n; i++) {
        sxy += (log(x[i]) - mx) * (log(y[i]) - my);
        sxx += (log(x[i]) - mx) * (log(x[i]) - mx);
    }
    return sxy / sxx;
}

#endif
