/* bspline.c — uniform cubic B-splines on an extended grid: closed-form evaluation (at most 4
 * active bases) and the Cox-de Boor recursion as its reference (dpcorr/bspline.h). */
#include "dpcorr/bspline.h"

#include <math.h>
#include <string.h>

dpc_status dpc_bspline_init(dpc_bspline *s, size_t grid, double lo, double hi,
                               dpc_error *err)
{
    if (!s) return dpc_error_set(err, DPC_E_INVALID, "spline: NULL output");
    if (grid < 1 || grid > DPC_BSPLINE_MAX_GRID)
        return dpc_error_set(err, DPC_E_INVALID, "grid: must be in 1..%d, got %zu",
                             DPC_BSPLINE_MAX_GRID, grid);
    if (!isfinite(lo) || !isfinite(hi) || !(lo < hi))
        return dpc_error_set(err, DPC_E_INVALID,
                             "grid range: need finite lo < hi, got [%g, %g]", lo, hi);
    double h = (hi - lo) / (double)grid;
    if (!(h > 0) || !isfinite(h))
        return dpc_error_set(err, DPC_E_INVALID, "grid range [%g, %g]: spacing not finite",
                             lo, hi);
    s->grid = grid;
    s->p = grid + 3;
    s->lo = lo;
    s->hi = hi;
    s->h = h;
    return DPC_OK;
}

/* The four cubic pieces at u in [0, 1): index 0 is b_{j-3}, ..., 3 is b_j. */
static void pieces(double u, double v[4], double d1[4], double d2[4])
{
    double w = 1.0 - u, u2 = u * u, u3 = u2 * u;
    v[0] = w * w * w / 6.0;
    v[1] = (3.0 * u3 - 6.0 * u2 + 4.0) / 6.0;
    v[2] = (-3.0 * u3 + 3.0 * u2 + 3.0 * u + 1.0) / 6.0;
    v[3] = u3 / 6.0;
    if (d1) {
        d1[0] = -0.5 * w * w;
        d1[1] = (3.0 * u2 - 4.0 * u) / 2.0;
        d1[2] = (-3.0 * u2 + 2.0 * u + 1.0) / 2.0;
        d1[3] = 0.5 * u2;
    }
    if (d2) {
        d2[0] = w;
        d2[1] = 3.0 * u - 2.0;
        d2[2] = -3.0 * u + 1.0;
        d2[3] = u;
    }
}

size_t dpc_bspline_eval(const dpc_bspline *s, double x, size_t *first, double v[4],
                           double d1[4], double d2[4])
{
    *first = 0;
    double t = (x - s->lo) / s->h; /* position in grid units from lo */
    if (!(t >= -3.0 && t < (double)s->grid + 3.0)) return 0; /* outside [t_0, t_{G+6}), NaN */
    double fl = floor(t);
    double u = t - fl;
    long j = (long)fl + 3; /* x in [t_j, t_{j+1}), 0 <= j <= G + 5 */
    double pv[4], p1[4], p2[4];
    pieces(u, pv, d1 ? p1 : NULL, d2 ? p2 : NULL);
    long k0 = j - 3, p = (long)s->p;
    size_t n = 0;
    double ih = 1.0 / s->h, ih2 = ih * ih;
    for (long q = 0; q < 4; q++) {
        long k = k0 + q;
        if (k < 0 || k >= p) continue;
        if (n == 0) *first = (size_t)k;
        v[n] = pv[q];
        if (d1) d1[n] = p1[q] * ih;
        if (d2) d2[n] = p2[q] * ih2;
        n++;
    }
    return n;
}

void dpc_bspline_eval_all(const dpc_bspline *s, double x, double *v, double *d1,
                             double *d2)
{
    memset(v, 0, s->p * sizeof *v);
    if (d1) memset(d1, 0, s->p * sizeof *d1);
    if (d2) memset(d2, 0, s->p * sizeof *d2);
    double a[4], b[4], c[4];
    size_t k0, n = dpc_bspline_eval(s, x, &k0, a, d1 ? b : NULL, d2 ? c : NULL);
    for (size_t q = 0; q < n; q++) {
        v[k0 + q] = a[q];
        if (d1) d1[k0 + q] = b[q];
        if (d2) d2[k0 + q] = c[q];
    }
}

double dpc_bspline_eval_naive(const dpc_bspline *s, size_t k, double x)
{
    if (k >= s->p) return 0.0;
    /* knots t_k .. t_{k+4}; degree-0 bases N_{i,0} = 1 on [t_i, t_{i+1}) */
    double t[5], N[4];
    for (int i = 0; i < 5; i++) t[i] = s->lo + ((double)k + (double)i - 3.0) * s->h;
    for (int i = 0; i < 4; i++) N[i] = (x >= t[i] && x < t[i + 1]) ? 1.0 : 0.0;
    for (int d = 1; d <= 3; d++)
        for (int i = 0; i + d < 4; i++)
            N[i] = (x - t[i]) / (t[i + d] - t[i]) * N[i] +
                   (t[i + d + 1] - x) / (t[i + d + 1] - t[i + 1]) * N[i + 1];
    return N[0];
}

