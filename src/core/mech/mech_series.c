/* mech_series.c — power-series utilities for Toeplitz mechanisms: reciprocal series (C = B^-1
 * for lower-triangular Toeplitz matrices), binomial series of (1 - x)^(+-1/2), square roots of
 * the momentum/weight-decay workload, and the workload filter. */
#include "mech/mech_internal.h"
#include "common/util.h"

#include <math.h>
#include <stdlib.h>

int dpc__series_reciprocal(double *out, size_t n, const double *a, size_t la)
{
    /* (a * out)_t = delta_t0  =>  out_t = -(sum_{j=1..min(t,la-1)} a_j out_{t-j}) / a_0.
     * O(n * la); fixed summation order j = 1, 2, ... */
    if (n == 0) return 1;
    if (a[0] == 0.0) return 0;
    out[0] = 1.0 / a[0];
    for (size_t t = 1; t < n; t++) {
        size_t jmax = t < la - 1 ? t : la - 1;
        double acc = 0.0;
        for (size_t j = 1; j <= jmax; j++) acc += a[j] * out[t - j];
        out[t] = -acc / a[0];
        if (!isfinite(out[t])) return 0;
    }
    return 1;
}

void dpc__series_sqrt1mx(double *out, size_t n, int sign)
{
    /* (1 - x)^(1/2):  a_0 = 1, a_t = a_{t-1} (t - 3/2) / t   (1, -1/2, -1/8, -1/16, ...)
     * (1 - x)^(-1/2): r_0 = 1, r_t = r_{t-1} (2t - 1) / (2t) = binom(2t, t) / 4^t.
     * (nu-DP-FTRL note, sections 3.1 and 3.2.) */
    if (n == 0) return;
    out[0] = 1.0;
    for (size_t t = 1; t < n; t++) {
        double td = (double)t;
        out[t] = sign > 0 ? out[t - 1] * (td - 1.5) / td : out[t - 1] * (2 * td - 1) / (2 * td);
    }
}

int dpc__series_workload_root(double *out, size_t n, double a, double m, int s)
{
    /* ((1 - a x)(1 - m x))^(s/2) = (1 - a x)^(s/2) * (1 - m x)^(s/2): the Cauchy product of
     * two scaled binomial series g_j a^j and g_j m^j (Kalinin & Lampert 2024, eq. for BSR with
     * momentum and weight decay). O(n^2) only when m != 0. */
    if (n == 0) return 1;
    double *g = dpc__malloc_array(n, sizeof *g);
    if (!g) return 0;
    dpc__series_sqrt1mx(g, n, s);
    if (m == 0.0) {
        double p = 1.0;
        for (size_t t = 0; t < n; t++) {
            out[t] = g[t] * p;
            p *= a;
        }
        free(g);
        return 1;
    }
    double *ga = dpc__malloc_array(n, sizeof *ga), *gm = dpc__malloc_array(n, sizeof *gm);
    if (!ga || !gm) {
        free(g);
        free(ga);
        free(gm);
        return 0;
    }
    double pa = 1.0, pm = 1.0;
    for (size_t t = 0; t < n; t++) {
        ga[t] = g[t] * pa;
        gm[t] = g[t] * pm;
        pa *= a;
        pm *= m;
    }
    for (size_t t = 0; t < n; t++) {
        double acc = 0.0;
        for (size_t j = 0; j <= t; j++) acc += ga[j] * gm[t - j];
        out[t] = acc;
    }
    free(g);
    free(ga);
    free(gm);
    return 1;
}

void dpc__workload_apply(double *y, const double *x, size_t n, double a, double m)
{
    /* u_t = x_t + m u_{t-1};  y_t = u_t + a y_{t-1}. In place allowed (y == x). */
    double u = 0.0, v = 0.0;
    for (size_t t = 0; t < n; t++) {
        u = x[t] + m * u;
        v = u + a * v;
        y[t] = v;
    }
}
