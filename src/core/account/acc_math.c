/* acc_math.c — normal distribution in log space, log-sum-exp, 1-D minimization and bisection
 * for the accounting module. */
#include "account/acc_math.h"

#include <float.h>

double dpc__ndtr(double x) { return 0.5 * erfc(-x * DPC__SQRT1_2); }

/* log R(t) with R(t) = Phi(-t) / phi(t) the Mills ratio, t >= 10, by the continued fraction
 * R(t) = 1/(t + 1/(t + 2/(t + 3/(t + ...)))) (Abramowitz & Stegun 26.2.14), evaluated backwards;
 * 60 levels give full double accuracy for t >= 10. */
static double log_mills(double t)
{
    double v = t;
    for (int k = 60; k >= 1; k--) v = t + (double)k / v;
    return -log(v);
}

double dpc__log_ndtr(double x)
{
    if (isnan(x)) return x;
    if (x == INFINITY) return 0.0;
    if (x == -INFINITY) return -INFINITY;
    if (x > 0.0) return log1p(-0.5 * erfc(x * DPC__SQRT1_2));
    if (x >= -10.0) return log(0.5 * erfc(-x * DPC__SQRT1_2));
    /* log Phi(x) = log phi(x) + log R(-x) */
    return -0.5 * x * x - 0.5 * DPC__LOG_2PI + log_mills(-x);
}

double dpc__norm_mass(double a, double b, double mean, double sd)
{
    if (!(b > a)) return 0.0;
    double A = (a - mean) / sd, B = (b - mean) / sd, m;
    if (A >= 0.0)
        m = 0.5 * (erfc(A * DPC__SQRT1_2) - erfc(B * DPC__SQRT1_2));
    else if (B <= 0.0)
        m = 0.5 * (erfc(-B * DPC__SQRT1_2) - erfc(-A * DPC__SQRT1_2));
    else
        m = 1.0 - 0.5 * erfc(-A * DPC__SQRT1_2) - 0.5 * erfc(B * DPC__SQRT1_2);
    return m > 0.0 ? m : 0.0;
}

double dpc__ndtri_upper(double logp)
{
    double lo = 0.0, hi = 1.0;
    while (dpc__log_ndtr(-hi) > logp && hi < 1e150) hi *= 2.0;
    for (int i = 0; i < 200 && hi - lo > 1e-15 * hi; i++) {
        double mid = 0.5 * (lo + hi);
        if (dpc__log_ndtr(-mid) > logp) lo = mid;
        else hi = mid;
    }
    return hi;
}

double dpc__log_add(double a, double b)
{
    if (a == -INFINITY) return b;
    if (b == -INFINITY) return a;
    double m = a > b ? a : b;
    return m + log1p(exp(-fabs(a - b)));
}

double dpc__log_sub(double a, double b)
{
    if (b == -INFINITY) return a;
    if (!(a > b)) return -INFINITY;
    return a + log(-expm1(b - a));
}

double dpc__minimize(dpc__fn f, void *ctx, double lo, double hi, size_t grid, double *fmin)
{
    if (grid < 3) grid = 3;
    size_t best = 0;
    double fb = INFINITY, step = (hi - lo) / (double)(grid - 1);
    for (size_t i = 0; i < grid; i++) {
        double v = f(lo + step * (double)i, ctx);
        if (v < fb) {
            fb = v;
            best = i;
        }
    }
    double xb = lo + step * (double)best;
    if (!(fb < INFINITY)) { /* nothing finite on the grid */
        if (fmin) *fmin = fb;
        return xb;
    }
    /* Golden-section search on [x_{best-1}, x_{best+1}] (Kiefer 1953). */
    const double g = 0.61803398874989484820;
    double a = best > 0 ? xb - step : xb, b = best + 1 < grid ? xb + step : xb;
    double c = b - g * (b - a), d = a + g * (b - a);
    double fc = f(c, ctx), fd = f(d, ctx);
    for (int it = 0; it < 200 && b - a > 1e-13 * (1.0 + fabs(a) + fabs(b)); it++) {
        if (fc < fd) {
            b = d;
            d = c;
            fd = fc;
            c = b - g * (b - a);
            fc = f(c, ctx);
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + g * (b - a);
            fd = f(d, ctx);
        }
    }
    if (fc < fb) {
        fb = fc;
        xb = c;
    }
    if (fd < fb) {
        fb = fd;
        xb = d;
    }
    if (fmin) *fmin = fb;
    return xb;
}

void dpc__bisect(dpc__pred pred, void *ctx, double *lo, double *hi, double tol_abs,
                 double tol_rel, int log_scale)
{
    double a = *lo, b = *hi;
    for (int it = 0; it < 400; it++) {
        if (b - a <= tol_abs + tol_rel * fabs(b)) break;
        double mid = log_scale ? sqrt(a) * sqrt(b) : 0.5 * (a + b);
        if (!(mid > a && mid < b)) break; /* no representable point in between */
        if (pred(mid, ctx)) b = mid;
        else a = mid;
    }
    *lo = a;
    *hi = b;
}

dpc_status dpc__check_pos(double v, const char *name, dpc_error *err)
{
    if (!(v > 0.0) || !isfinite(v))
        return dpc_error_param(err, DPC_E_INVALID, name, "must be a finite number > 0, got %g", v);
    return DPC_OK;
}

dpc_status dpc__check_nonneg(double v, const char *name, dpc_error *err)
{
    if (!(v >= 0.0) || !isfinite(v))
        return dpc_error_param(err, DPC_E_INVALID, name, "must be a finite number >= 0, got %g", v);
    return DPC_OK;
}

dpc_status dpc__check_open01(double v, const char *name, dpc_error *err)
{
    if (!(v > 0.0 && v < 1.0))
        return dpc_error_param(err, DPC_E_INVALID, name, "must be in (0, 1), got %g", v);
    return DPC_OK;
}

dpc_status dpc__check_half_open01(double v, const char *name, dpc_error *err)
{
    if (!(v > 0.0 && v <= 1.0))
        return dpc_error_param(err, DPC_E_INVALID, name, "must be in (0, 1], got %g", v);
    return DPC_OK;
}
