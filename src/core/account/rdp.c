/* rdp.c — Renyi DP of the Gaussian, the Poisson-subsampled Gaussian (add/remove, zero-out) and
 * the Gaussian on fixed-size batches sampled without replacement (replace-one), and the
 * improved RDP -> (eps, delta) conversion. All sums are taken in log space. */
#include "dpcorr/account.h"

#include "account/acc_math.h"
#include "account/acc_internal.h"

#include <float.h>

static const double default_orders[] = {
    1.05, 1.1,  1.15, 1.2,  1.25, 1.3,  1.35, 1.4,  1.45, 1.5,  1.55, 1.6,  1.65, 1.7,  1.75,
    1.8,  1.85, 1.9,  1.95, 2,    2.25, 2.5,  2.75, 3,    3.25, 3.5,  3.75, 4,    4.25, 4.5,
    4.75, 5,    5.25, 5.5,  5.75, 6,    6.25, 6.5,  6.75, 7,    7.25, 7.5,  7.75, 8,    8.25,
    8.5,  8.75, 9,    9.25, 9.5,  9.75, 10,   10.25, 10.5, 10.75, 11, 11.25, 11.5, 11.75, 12,
    13,   14,   15,   16,   17,   18,   19,   20,   21,   22,   23,   24,   25,   26,   27,
    28,   29,   30,   31,   32,   33,   34,   35,   36,   37,   38,   39,   40,   41,   42,
    43,   44,   45,   46,   47,   48,   49,   50,   51,   52,   53,   54,   55,   56,   57,
    58,   59,   60,   61,   62,   63,   64,   72,   80,   88,   96,   104,  112,  120,  128,
    136,  144,  152,  160,  168,  176,  184,  192,  200,  208,  216,  224,  232,  240,  248,
    256,  320,  384,  448,  512,  768,  1024, 2048, 4096};

void dpc_rdp_default_orders(const double **orders, size_t *n)
{
    if (orders) *orders = default_orders;
    if (n) *n = sizeof default_orders / sizeof default_orders[0];
}

dpc_status dpc__check_orders(const double *orders, size_t n, dpc_error *err)
{
    if (!orders || n == 0)
        return dpc_error_param(err, DPC_E_INVALID, "orders", "need at least one order, got %zu", n);
    /* each order in the range of the row "orders" of dpc_account_opts_fields */
    const dpc_field *f = dpc_field_find(&dpc__account_opts_table, "orders", NULL);
    char range[96];
    dpc_field_format_range(f, range, sizeof range);
    for (size_t i = 0; i < n; i++)
        if (!(orders[i] > f->lo && orders[i] <= f->hi))
            return dpc_error_param(err, DPC_E_INVALID, "orders", "entry %zu must be %s, got %g",
                                   i, range, orders[i]);
    return DPC_OK;
}

/* ---- Gaussian ------------------------------------------------------------------------------ */

double dpc__rdp_gauss1(double z, double a)
{
    /* DP-REQ: rdp-gauss: Mironov 2017, Prop. 7:
     * D_a(N(Delta, s^2) || N(0, s^2)) = a Delta^2 / (2 s^2). */
    return a / (2.0 * z * z);
}

/* ---- Poisson-subsampled Gaussian (Mironov, Talwar & Zhang 2019) ---------------------------- */

/* With mu0 = N(0, z^2), mu1 = N(1, z^2), mu = (1-q) mu0 + q mu1, the RDP of order a is
 * log(A_a)/(a-1) with A_a = E_{mu0}[(mu/mu0)^a] (MTZ 2019, Sec. 3). MTZ 2019, Sec. 3:
 * D_a(mu || mu0) >= D_a(mu0 || mu), so A_a covers both the add and the remove direction
 * (add/remove; zero-out gives the same pair).
 * For small q or large z, A_a - 1 is tiny and log(A_a) computed from A_a loses all relative
 * accuracy, so both routines below return log(A_a - 1), using E_{mu0}[u] = 0 for
 * u = mu/mu0 - 1 = q (mu1/mu0 - 1): A_a - 1 = E_{mu0}[(1+u)^a - 1 - a u], an integrand >= 0. */

/* Signed sum in log space: positive and negative parts kept apart, subtracted once. */
typedef struct {
    double pos, neg;
} lsum;

static void lsum_add(lsum *s, double logabs, int sign)
{
    if (sign >= 0)
        s->pos = dpc__log_add(s->pos, logabs);
    else
        s->neg = dpc__log_add(s->neg, logabs);
}

static double lsum_log(const lsum *s) { return dpc__log_sub(s->pos, s->neg); }

/* log(e^y - 1) for y > 0. */
static double log_expm1(double y) { return y > 30.0 ? y + log1p(-exp(-y)) : log(expm1(y)); }

/* DP-REQ: rdp-sgm-int: Mironov, Talwar & Zhang 2019, Sec. 3.3 (integer a):
 * A_a = sum_k binom(a,k) (1-q)^(a-k) q^k exp((k^2 - k)/(2 z^2)). Subtracting
 * 1 = sum_k binom(a,k) (1-q)^(a-k) q^k removes the k = 0, 1 terms exactly:
 * A_a - 1 = sum_{k>=2} binom(a,k) (1-q)^(a-k) q^k expm1((k^2 - k)/(2 z^2)), all terms > 0. */
static double log_am1_int(double q, double z, long a)
{
    double lq = log(q), l1q = log1p(-q), s2 = 2.0 * z * z;
    double lbin = log((double)a) + log((double)(a - 1)) - log(2.0); /* log binom(a, 2) */
    double acc = -INFINITY;
    for (long k = 2; k <= a; k++) {
        if (k > 2) lbin += log((double)(a - k + 1)) - log((double)k);
        double t =
            lbin + (double)(a - k) * l1q + (double)k * lq + log_expm1(((double)k * k - k) / s2);
        acc = dpc__log_add(acc, t);
    }
    return acc;
}

/* log h(u), h(u) = (1+u)^a - 1 - a u >= 0 for u > -1, a > 1, without cancellation: the binomial
 * series sum_{k>=2} binom(a,k) u^k for |u| <= 0.1; (1+u) expm1((a-1) log1p u) - (a-1) u
 * otherwise (a - 1 small does not cancel there); factored out of (1+u)^a when that dominates. */
static double log_h(double a, double u)
{
    if (fabs(u) <= 0.1) {
        double c = 0.5 * a * (a - 1.0), sum = c, pw = 1.0;
        for (int k = 2; k < 60; k++) {
            c *= (a - (double)k) / (double)(k + 1);
            pw *= u;
            double t = c * pw;
            sum += t;
            if (fabs(t) < 1e-18 * fabs(sum)) break;
        }
        return 2.0 * log(fabs(u)) + log(sum);
    }
    double L = a * log1p(u);
    if (u > 1.0 && L > 2.0) return L + log1p(-(1.0 + a * u) * exp(-L));
    double b = a - 1.0, h = (1.0 + u) * expm1(b * log1p(u)) - b * u;
    return h > 0.0 ? log(h) : -INFINITY;
}

/* 16-point Gauss-Legendre rule on [-1, 1]: the positive nodes and their weights. */
static const double gl16[8][2] = {
    {0.095012509837637440185, 0.18945061045506849629},
    {0.28160355077925891323, 0.18260341504492358887},
    {0.45801677765722738634, 0.16915651939500253819},
    {0.61787624440264374845, 0.14959598881657673208},
    {0.7554044083550030339, 0.12462897125553387205},
    {0.86563120238783174388, 0.09515851168249278481},
    {0.94457502307323257608, 0.062253523938647892863},
    {0.9894009349916499326, 0.027152459411754094852},
};

/* log of mu0(x) h(u(x)), the integrand of A_a - 1. */
static double log_integrand(double q, double z, double a, double x)
{
    double t = (2.0 * x - 1.0) / (2.0 * z * z);
    double u = t > 700.0 ? INFINITY : q * expm1(t);
    double lh = isinf(u) ? a * (t + log(q)) : log_h(a, u);
    return -0.5 * (x / z) * (x / z) - log(z) - 0.5 * DPC__LOG_2PI + lh;
}

/* One binomial series of the fractional-order A_a, added to s with signs, from index i0:
 *   sum_{i>=i0} binom(a,i) exp(i*lp + (a-i)*lr + (k^2-k)/(2z^2) + log Phi(+-(c - k)/z)),
 * k = i (left series, argument (c - k)/z) or k = a - i (right series, (k - c)/z). The caller
 * guarantees a geometric decay (ratio <= e^-1.5), so the loop ends after a few dozen terms past
 * a; returns 0 when it has not ended a + 1000 terms in (then the order is not used). */
static int frac_series(lsum *s, double a, double z, double lp, double lr, double c, int right,
                       long i0)
{
    double s2 = 2.0 * z * z, lbin = 0.0, run = -INFINITY;
    int sign = 1;
    for (long i = 0; i < (long)a + 1000; i++) {
        if (i > 0) {
            double f = a - (double)(i - 1);
            lbin += log(fabs(f)) - log((double)i);
            if (f < 0.0) sign = -sign;
        }
        if (i < i0) continue;
        double k = right ? a - (double)i : (double)i;
        double arg = right ? (k - c) / z : (c - k) / z;
        double t =
            lbin + (double)i * lp + (a - (double)i) * lr + (k * k - k) / s2 + dpc__log_ndtr(arg);
        lsum_add(s, t, sign);
        run = dpc__log_add(run, t);
        if ((double)i > a + 1.0 && t < run - 40.0) return 1;
    }
    return 0;
}

/* DP-REQ: rdp-sgm-frac: Mironov, Talwar & Zhang 2019, Sec. 3.3 (fractional a): with
 * r(x) = q mu1(x) / ((1-q) mu0(x)), expand (mu/mu0)^a = (1-q)^a (1 + r)^a by the binomial series
 * where r < 1 and = (q mu1/mu0)^a (1 + 1/r)^a where r > 1:
 *   left  (x <= x1): sum_i binom(a,i) (1-q)^(a-i) q^i exp((i^2-i)/(2z^2)) Phi((x1 - i)/z),
 *   right (x >= x2): sum_i binom(a,i) q^(a-i) (1-q)^i exp(((a-i)^2-(a-i))/(2z^2))
 *                    Phi((a - i - x2)/z).
 * MTZ split both at the balance point z0 = z^2 log(1/q - 1) + 1/2 (r = 1), where the series
 * converge only polynomially (~i^-(a+2): 10^5 terms for a near 1). We split at
 * x1,2 = z0 -+ 1.5 z^2 instead (r <= e^-1.5 in each region: geometric convergence) and integrate
 * the band [x1, x2] directly with composite 16-point Gauss-Legendre in log space, restricted to
 * [-12z - 1, a + 12z + 1] outside of which the integrand is below e^-70 of A_a.
 * To return log(A_a - 1), E_{mu0}[1 + a u] is subtracted region by region: on x <= x1 it cancels
 * the i = 0, 1 terms up to h(-q) Phi(x1/z) + a q expm1((a-1) log1p(-q)) Phi((x1-1)/z); on
 * x >= x2 it is (1 - a q) Phi(-x2/z) + a q Phi((1 - x2)/z); the band integrates h(u) >= 0. */
static double log_am1_frac(double q, double z, double a, int *ok)
{
    double lq = log(q), l1q = log1p(-q);
    double z0 = z * z * (l1q - lq) + 0.5;
    double x1 = z0 - 1.5 * z * z, x2 = z0 + 1.5 * z * z;
    lsum s = {-INFINITY, -INFINITY};
    *ok = 1;
    /* The terms (k^2 - k)/(2 z^2) and log Phi(.) cancel to their sum: beyond ~1e10 the rounding
     * of each (1e-16 relative) is no longer negligible; such orders (tiny z) are not used (the
     * integer orders, summed exactly, remain). */
    if ((a + 2.0) * (a + 2.0) / (2.0 * z * z) > 1e10) {
        *ok = 0;
        return -INFINITY;
    }
    /* left region: i >= 2 terms, plus the remainders of i = 0, 1 */
    if (!frac_series(&s, a, z, lq, l1q, x1, 0, 2)) *ok = 0;
    lsum_add(&s, log_h(a, -q) + dpc__log_ndtr(x1 / z), 1);
    lsum_add(&s, log(a * q) + log(-expm1((a - 1.0) * l1q)) + dpc__log_ndtr((x1 - 1.0) / z), -1);
    /* right region */
    if (!*ok || !frac_series(&s, a, z, l1q, lq, x2, 1, 0)) {
        *ok = 0;
        return -INFINITY;
    }
    if (a * q < 1.0)
        lsum_add(&s, log1p(-a * q) + dpc__log_ndtr(-x2 / z), -1);
    else
        lsum_add(&s, log(a * q - 1.0) + dpc__log_ndtr(-x2 / z), 1);
    lsum_add(&s, log(a * q) + dpc__log_ndtr((1.0 - x2) / z), -1);
    /* band */
    double lo = fmax(x1, -12.0 * z - 1.0), hi = fmin(x2, a + 12.0 * z + 1.0);
    if (hi > lo) {
        /* Panels short enough that log f changes by <= 8 across one, where GL-16 is exact to
         * rounding: |d log f/dx| <= (max|x| + a)/z^2. */
        double slope = (fmax(fabs(lo), fabs(hi)) + a) / (z * z) + 1.0;
        double width = fmin(z, 8.0 / slope);
        double np = ceil((hi - lo) / width);
        if (np > 1e6) {
            *ok = 0;
            return lsum_log(&s);
        }
        size_t panels = (size_t)np;
        double w = (hi - lo) / (double)panels, hw = 0.5 * w, lhw = log(hw);
        for (size_t p = 0; p < panels; p++) {
            double mid = lo + ((double)p + 0.5) * w;
            for (int k = 0; k < 8; k++) {
                double lw = log(gl16[k][1]) + lhw;
                lsum_add(&s, lw + log_integrand(q, z, a, mid - hw * gl16[k][0]), 1);
                lsum_add(&s, lw + log_integrand(q, z, a, mid + hw * gl16[k][0]), 1);
            }
        }
    }
    return lsum_log(&s);
}

double dpc__rdp_poisson1(double q, double z, double a, int *ok)
{
    *ok = 1;
    if (q == 0.0) return 0.0;
    if (q == 1.0) return dpc__rdp_gauss1(z, a);
    double lm = a == floor(a) ? log_am1_int(q, z, (long)a) : log_am1_frac(q, z, a, ok);
    /* log A = log1p(A - 1) */
    double la = lm < 0.0 ? log1p(exp(lm)) : lm + log1p(exp(-lm));
    return la / (a - 1.0);
}

/* ---- Sampling without replacement (Wang, Balle & Kasiviswanathan 2019) --------------------- */

/* DP-REQ: rdp-wor: Wang, Balle & Kasiviswanathan 2019, Thm. 9 (as quoted in the KAN paper,
 * eq. 19), replace-one, for integer a >= 2 and a base mechanism with RDP eps(j); for the Gaussian
 * eps(j) = j/(2 z^2) and eps(inf) = inf, so
 *   eps'(a) <= log(1 + q^2 binom(a,2) min{4(e^eps(2) - 1), 2 e^eps(2)}
 *                  + 2 sum_{j=3}^{a} q^j binom(a,j) e^{(j-1) eps(j)}) / (a - 1). */
static double rdp_wor_int(double q, double z, long a)
{
    double lq = log(q), e2 = dpc__rdp_gauss1(z, 2.0);
    double m2 = fmin(log(4.0) + log(expm1(e2)), log(2.0) + e2);
    double lbin = log((double)a) + log((double)(a - 1)) - log(2.0); /* log binom(a, 2) */
    double acc = dpc__log_add(0.0, 2.0 * lq + lbin + m2);
    for (long j = 3; j <= a; j++) {
        lbin += log((double)(a - j + 1)) - log((double)j);
        double t =
            log(2.0) + (double)j * lq + lbin + (double)(j - 1) * dpc__rdp_gauss1(z, (double)j);
        acc = dpc__log_add(acc, t);
    }
    return acc / (double)(a - 1);
}

double dpc__rdp_wor1(double q, double z, double a)
{
    if (q == 1.0) return dpc__rdp_gauss1(z, a);
    if (a <= 2.0) return rdp_wor_int(q, z, 2); /* D_a is non-decreasing in a */
    double fl = floor(a);
    if (fl == a) return rdp_wor_int(q, z, (long)a);
    /* (a - 1) D_a is convex in a (van Erven & Harremoes 2014, Cor. 2): interpolate linearly. */
    double lo = (fl - 1.0) * rdp_wor_int(q, z, (long)fl);
    double hi = fl * rdp_wor_int(q, z, (long)fl + 1);
    double t = a - fl;
    return ((1.0 - t) * lo + t * hi) / (a - 1.0);
}

/* ---- Public wrappers ------------------------------------------------------------------------ */

static dpc_status rdp_args(double z, const double *orders, size_t n, const double *rdp,
                           dpc_error *err)
{
    dpc_status st;
    if ((st = dpc__check_pos(z, "z", err))) return st;
    if ((st = dpc__check_orders(orders, n, err))) return st;
    if (!rdp) return dpc_error_param(err, DPC_E_INVALID, "rdp", "output array is NULL");
    return DPC_OK;
}

dpc_status dpc_rdp_gaussian(double z, const double *orders, size_t n, double *rdp, dpc_error *err)
{
    dpc_status st;
    if ((st = rdp_args(z, orders, n, rdp, err))) return st;
    for (size_t i = 0; i < n; i++) rdp[i] = dpc__rdp_gauss1(z, orders[i]);
    return DPC_OK;
}

dpc_status dpc_rdp_poisson_gaussian(double q, double z, const double *orders, size_t n, double *rdp,
                                    dpc_error *err)
{
    dpc_status st;
    if (!(q >= 0.0 && q <= 1.0))
        return dpc_error_param(err, DPC_E_INVALID, "q", "must be in [0, 1], got %g", q);
    if ((st = rdp_args(z, orders, n, rdp, err))) return st;
    for (size_t i = 0; i < n; i++) {
        int ok;
        rdp[i] = dpc__rdp_poisson1(q, z, orders[i], &ok);
        if (!ok) rdp[i] = INFINITY; /* not evaluable reliably: the vacuous bound */
    }
    return DPC_OK;
}

dpc_status dpc_rdp_wor_gaussian(double q, double z, const double *orders, size_t n, double *rdp,
                                dpc_error *err)
{
    dpc_status st;
    if ((st = dpc__check_half_open01(q, "q", err))) return st;
    if ((st = rdp_args(z, orders, n, rdp, err))) return st;
    for (size_t i = 0; i < n; i++) rdp[i] = dpc__rdp_wor1(q, z, orders[i]);
    return DPC_OK;
}

/* DP-REQ: rdp-conv: Canonne, Kamath & Steinke 2020, Prop. 12 (also Asoodeh et al. 2021, Balle et
 * al. 2020 Thm. 21): (a, r)-RDP implies (eps, delta)-DP with
 * eps = r + log1p(-1/a) - (log delta + log a)/(a - 1). */
double dpc__rdp_eps1(double a, double r, double logd)
{
    return r + log1p(-1.0 / a) - (logd + log(a)) / (a - 1.0);
}

/* The same bound solved for log delta. */
double dpc__rdp_logdelta1(double a, double r, double eps)
{
    return (a - 1.0) * (r - eps) + (a - 1.0) * log1p(-1.0 / a) - log(a);
}

static dpc_status conv_args(const double *orders, const double *rdp, size_t n, dpc_error *err)
{
    dpc_status st;
    if ((st = dpc__check_orders(orders, n, err))) return st;
    if (!rdp) return dpc_error_param(err, DPC_E_INVALID, "rdp", "array is NULL");
    for (size_t i = 0; i < n; i++)
        if (!(rdp[i] >= 0.0))
            return dpc_error_param(err, DPC_E_INVALID, "rdp", "entry %zu must be >= 0, got %g", i,
                                   rdp[i]);
    return DPC_OK;
}

dpc_status dpc_rdp_epsilon(const double *orders, const double *rdp, size_t n, double delta,
                           double *eps, double *order, dpc_error *err)
{
    dpc_status st;
    if ((st = conv_args(orders, rdp, n, err))) return st;
    if ((st = dpc__check_open01(delta, "delta", err))) return st;
    if (!eps) return dpc_error_param(err, DPC_E_INVALID, "eps", "output pointer is NULL");
    double best = INFINITY, ba = NAN, logd = log(delta);
    for (size_t i = 0; i < n; i++) {
        if (isinf(rdp[i])) continue;
        double e = dpc__rdp_eps1(orders[i], rdp[i], logd);
        if (e < best) {
            best = e;
            ba = orders[i];
        }
    }
    *eps = best > 0.0 ? best : 0.0;
    if (order) *order = ba;
    return DPC_OK;
}

dpc_status dpc_rdp_delta(const double *orders, const double *rdp, size_t n, double eps,
                         double *delta, double *order, dpc_error *err)
{
    dpc_status st;
    if ((st = conv_args(orders, rdp, n, err))) return st;
    if ((st = dpc__check_nonneg(eps, "eps", err))) return st;
    if (!delta) return dpc_error_param(err, DPC_E_INVALID, "delta", "output pointer is NULL");
    double best = INFINITY, ba = NAN;
    for (size_t i = 0; i < n; i++) {
        if (isinf(rdp[i])) continue;
        double l = dpc__rdp_logdelta1(orders[i], rdp[i], eps);
        if (l < best) {
            best = l;
            ba = orders[i];
        }
    }
    *delta = best >= 0.0 ? 1.0 : exp(best);
    if (order) *order = ba;
    return DPC_OK;
}
