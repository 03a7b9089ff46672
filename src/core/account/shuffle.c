/* shuffle.c — amplification by shuffling (Feldman, McMillan & Talwar 2021) in the closed form of
 * the authors' reference code, and the DP-SSGD calculator built on it (Varshney, Thakurta & Jain
 * 2022, Algorithm 1 / Thm. 3.1): per-step Gaussian local randomiser, delta split, shuffled pass. */
#include "dpcorr/account.h"

#include "account/acc_math.h"

/* log(n / (16 log(4/delta_s))): the largest eps0 the closed form covers (-inf when none). */
static double shuffle_eps0_max(size_t n, double delta_s)
{
    double r = (double)n / (16.0 * log(4.0 / delta_s));
    return r > 0.0 ? log(r) : -INFINITY;
}

/* DP-REQ: shuffle-fmt: Feldman, McMillan & Talwar 2021, Thm. 3.1 in the closed form of the
 * authors' reference implementation (computeamplification.closedformanalysis):
 * A = 8 sqrt(e^eps0 log(4/delta_s))/sqrt(n) + 8 e^eps0/n,
 * eps = log(1 + (1 - e^-eps0)/(1 + e^(-eps0 - log(1 + A))) A), for eps0 <= log(n/(16 log(4/delta_s))). */
static double shuffle_closed_form(double eps0, size_t n, double delta_s)
{
    double nn = (double)n, e = exp(eps0);
    double A = 8.0 * sqrt(e * log(4.0 / delta_s)) / sqrt(nn) + 8.0 * e / nn;
    double b = -expm1(-eps0), d = 1.0 + exp(-eps0 - log1p(A));
    return log1p(b / d * A);
}

/* DP-REQ: shuffle-approx: Feldman, McMillan & Talwar 2021, Thm. 3.8 (adaptive (eps0, delta0)
 * local randomisers): extra delta (e^eps + 1)(1 + e^-eps0/2) n delta0. */
static double shuffle_extra_factor(double eps, double eps0, size_t n)
{
    return (exp(eps) + 1.0) * (1.0 + 0.5 * exp(-eps0)) * (double)n;
}

dpc_status dpc_account_shuffle_epsilon(double eps0, double delta0, size_t n, double delta_s,
                                       double *eps, double *delta_total, dpc_error *err)
{
    dpc_status st;
    if ((st = dpc__check_pos(eps0, "eps0", err))) return st;
    if (!(delta0 >= 0.0 && delta0 < 1.0))
        return dpc_error_param(err, DPC_E_INVALID, "delta0", "must be in [0, 1), got %g", delta0);
    if ((st = dpc__check_open01(delta_s, "delta_s", err))) return st;
    if (n == 0) return dpc_error_param(err, DPC_E_INVALID, "n", "must be >= 1, got 0");
    if (!eps) return dpc_error_param(err, DPC_E_INVALID, "eps", "output pointer is NULL");
    double emax = shuffle_eps0_max(n, delta_s);
    if (!(eps0 <= emax))
        return dpc_error_param(err, DPC_E_PRIVACY, "eps0",
                               "the shuffling bound needs eps0 <= log(n/(16 log(4/delta))) = "
                               "%g (n = %zu, delta = %g), got eps0 = %g",
                               emax, n, delta_s, eps0);
    double e = shuffle_closed_form(eps0, n, delta_s);
    *eps = e;
    if (delta_total) *delta_total = delta_s + shuffle_extra_factor(e, eps0, n) * delta0;
    return DPC_OK;
}

/* eps0 of one step (noise multiplier alpha w.r.t. the diameter of the clip ball) at delta0. */
static dpc_status step_eps0(double alpha, double delta0, int paper, double *eps0, dpc_error *err)
{
    if (paper) {
        /* DP-REQ: dpssgd-eps0-paper: Varshney, Thakurta & Jain 2022, Proof A.4 (Dwork & Roth
         * 2014, Thm. A.1): eps0 = sqrt(2 log(1.25/delta0))/alpha, valid for eps0 < 1. */
        double e = sqrt(2.0 * log(1.25 / delta0)) / alpha;
        if (!(e < 1.0))
            return dpc_error_param(err, DPC_E_PRIVACY, "alpha",
                                   "the classical Gaussian bound needs eps0 = sqrt(2 log(1.25/"
                                   "delta0))/alpha < 1, got %g (alpha = %g, delta0 = %g)",
                                   e, alpha, delta0);
        *eps0 = e;
        return DPC_OK;
    }
    /* DP-REQ: dpssgd-eps0-exact: the Gaussian mechanism is (1/alpha)-GDP (Dong, Roth & Su 2022,
     * Thm. 2.7); eps0 is its exact epsilon at delta0 (Cor. 2.13). */
    return dpc_gdp_epsilon(1.0 / alpha, delta0, eps0, err);
}

dpc_status dpc_account_dpssgd_epsilon(double alpha, size_t n, double delta, int paper,
                                      double *eps, double *eps0, double *delta0, dpc_error *err)
{
    dpc_status st;
    if ((st = dpc__check_pos(alpha, "alpha", err))) return st;
    if ((st = dpc__check_open01(delta, "delta", err))) return st;
    if (n == 0) return dpc_error_param(err, DPC_E_INVALID, "n", "must be >= 1, got 0");
    if (!eps) return dpc_error_param(err, DPC_E_INVALID, "eps", "output pointer is NULL");
    /* DP-REQ: dpssgd-split: Varshney, Thakurta & Jain 2022, Proof A.4: delta_s = delta/2 for the
     * shuffling theorem; delta0 from the remaining delta/2 through Thm. 3.8's extra term. */
    double ds = 0.5 * delta, budget = 0.5 * delta;
    double d0 = budget / (3.0 * (double)n), e0 = 0, e = 0; /* factor at eps = eps0 = 0 */
    /* fixed point d0 = budget / factor(eps(d0), eps0(d0)): the factor depends on d0 only through
     * eps and eps0, weakly, so a few rounds converge; then step down until the budget holds. */
    for (int it = 0; it < 60; it++) {
        if ((st = step_eps0(alpha, d0, paper, &e0, err))) return st;
        if ((st = dpc_account_shuffle_epsilon(e0, d0, n, ds, &e, NULL, err))) return st;
        double next = budget / shuffle_extra_factor(e, e0, n);
        int done = fabs(next - d0) <= 1e-12 * d0;
        d0 = next;
        if (done) break;
    }
    for (int it = 0;; it++) {
        if ((st = step_eps0(alpha, d0, paper, &e0, err))) return st;
        if ((st = dpc_account_shuffle_epsilon(e0, d0, n, ds, &e, NULL, err))) return st;
        if (shuffle_extra_factor(e, e0, n) * d0 <= budget) break;
        if (it == 1000)
            return dpc_error_set(err, DPC_E_NUMERIC,
                                 "dp-ssgd: the split of delta did not converge");
        d0 *= 1.0 - 1e-6;
    }
    *eps = e;
    if (eps0) *eps0 = e0;
    if (delta0) *delta0 = d0;
    return DPC_OK;
}

typedef struct {
    size_t n;
    double delta, target;
    int paper;
} sctx;

static int alpha_ok(double alpha, void *vc) /* true for large alpha (more noise) */
{
    const sctx *c = vc;
    double e;
    return dpc_account_dpssgd_epsilon(alpha, c->n, c->delta, c->paper, &e, NULL, NULL, NULL) ==
               DPC_OK &&
           e <= c->target;
}

dpc_status dpc_account_dpssgd_alpha(double eps, size_t n, double delta, int paper, double *alpha,
                                    dpc_error *err)
{
    dpc_status st;
    if ((st = dpc__check_pos(eps, "eps", err))) return st;
    if ((st = dpc__check_open01(delta, "delta", err))) return st;
    if (n == 0) return dpc_error_param(err, DPC_E_INVALID, "n", "must be >= 1, got 0");
    if (!alpha) return dpc_error_param(err, DPC_E_INVALID, "alpha", "output pointer is NULL");
    sctx c = {n, delta, eps, paper};
    double hi = 1.0;
    while (!alpha_ok(hi, &c)) {
        hi *= 2.0;
        if (hi > 1e9)
            return dpc_error_param(err, DPC_E_PRIVACY, "eps",
                                   "DP-SSGD cannot reach eps = %g at n = %zu, delta = %g with "
                                   "any alpha <= 1e9 (shuffling needs eps of order 1/sqrt(n))",
                                   eps, n, delta);
    }
    double lo = hi * 0.5;
    while (lo > 1e-9 && alpha_ok(lo, &c)) {
        hi = lo;
        lo *= 0.5;
    }
    if (alpha_ok(lo, &c)) { /* even alpha = 1e-9 suffices */
        *alpha = lo;
        return DPC_OK;
    }
    dpc__bisect(alpha_ok, &c, &lo, &hi, 0.0, 1e-10, 1);
    *alpha = hi;
    return DPC_OK;
}
