/* gdp.c — Gaussian differential privacy (Dong, Roth & Su 2022): the exact (eps, delta) curve of
 * mu-GDP, its inverse, and the mu needed for a target (eps, delta). Results hold for whichever
 * neighbouring relation mu was measured under. */
#include "dpcorr/account.h"

#include "account/acc_math.h"
#include "common/util.h"

dpc_status dpc_gdp_mu_gaussian(double sensitivity, double sigma, double *mu, dpc_error *err)
{
    dpc_status st;
    if ((st = dpc__check_pos(sensitivity, "sensitivity", err))) return st;
    if ((st = dpc__check_pos(sigma, "sigma", err))) return st;
    if (!mu) return dpc_error_param(err, DPC_E_INVALID, "mu", "output pointer is NULL");
    /* DP-REQ: gdp-gauss: Dong, Roth & Su 2022, Thm. 2.7: the Gaussian mechanism with sensitivity
     * Delta and std sigma is (Delta/sigma)-GDP; Cor. 3.3: composition adds mu^2. */
    *mu = sensitivity / sigma;
    return DPC_OK;
}

/* DP-REQ: gdp-delta: Dong, Roth & Su 2022, Cor. 2.13:
 * delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2), evaluated as
 * Phi(a) (1 - exp(eps + log Phi(b) - log Phi(a))) so that tiny deltas keep their accuracy. */
static double gdp_delta(double mu, double eps)
{
    double a = -eps / mu + 0.5 * mu, b = a - mu;
    double la = dpc__log_ndtr(a), lb = eps + dpc__log_ndtr(b);
    if (!(la > lb)) return 0.0;
    double d = exp(la) * -expm1(lb - la);
    return d > 0.0 ? (d < 1.0 ? d : 1.0) : 0.0;
}

dpc_status dpc_gdp_delta(double mu, double eps, double *delta, dpc_error *err)
{
    dpc_status st;
    if ((st = dpc__check_pos(mu, "mu", err))) return st;
    if ((st = dpc__check_nonneg(eps, "eps", err))) return st;
    if (!delta) return dpc_error_param(err, DPC_E_INVALID, "delta", "output pointer is NULL");
    *delta = gdp_delta(mu, eps);
    return DPC_OK;
}

typedef struct {
    double mu, eps, target;
} gctx;

static int eps_ok(double eps, void *vc) /* delta(eps) <= target: true for large eps */
{
    const gctx *c = vc;
    return gdp_delta(c->mu, eps) <= c->target;
}

static int mu_too_big(double mu, void *vc) /* delta(eps; mu) > target: true for large mu */
{
    const gctx *c = vc;
    return gdp_delta(mu, c->eps) > c->target;
}

dpc_status dpc_gdp_epsilon(double mu, double delta, double *eps, dpc_error *err)
{
    dpc_status st;
    if ((st = dpc__check_pos(mu, "mu", err))) return st;
    if ((st = dpc__check_open01(delta, "delta", err))) return st;
    if (!eps) return dpc_error_param(err, DPC_E_INVALID, "eps", "output pointer is NULL");
    if (mu > DPC__SCALE_MAX) /* epsilon grows like mu^2 / 2: it would overflow to inf */
        return dpc_error_param(err, DPC_E_RANGE, "mu",
                               "%g overflows: epsilon grows like mu^2 / 2 (at most 1e150)", mu);
    gctx c = {mu, 0.0, delta};
    if (eps_ok(0.0, &c)) {
        *eps = 0.0;
        return DPC_OK;
    }
    /* delta(eps) is decreasing in eps; bracket, then bisect (the result is on the private side) */
    double lo = 0.0, hi = mu * mu + mu;
    while (!eps_ok(hi, &c)) {
        lo = hi;
        hi *= 2.0;
        if (hi > 1e300)
            return dpc_error_set(err, DPC_E_NUMERIC,
                                 "gdp: the bracket search for epsilon diverged");
    }
    dpc__bisect(eps_ok, &c, &lo, &hi, 1e-300, 1e-15, 0);
    *eps = hi;
    return DPC_OK;
}

dpc_status dpc_gdp_mu_for(double eps, double delta, double *mu, dpc_error *err)
{
    dpc_status st;
    if ((st = dpc__check_nonneg(eps, "eps", err))) return st;
    if ((st = dpc__check_open01(delta, "delta", err))) return st;
    if (!mu) return dpc_error_param(err, DPC_E_INVALID, "mu", "output pointer is NULL");
    gctx c = {0.0, eps, delta};
    double lo = 1e-3, hi = 1.0;
    while (mu_too_big(lo, &c)) {
        hi = lo;
        lo *= 0.5;
        if (lo < 1e-300)
            return dpc_error_set(err, DPC_E_NUMERIC, "gdp: the bracket search for mu diverged");
    }
    while (!mu_too_big(hi, &c)) {
        lo = hi;
        hi *= 2.0;
        if (hi > 1e300)
            return dpc_error_set(err, DPC_E_NUMERIC, "gdp: the bracket search for mu diverged");
    }
    dpc__bisect(mu_too_big, &c, &lo, &hi, 0.0, 1e-15, 1);
    *mu = lo;
    return DPC_OK;
}

dpc_status dpc_gdp_sigma_for(double mu, size_t count, double *sigma, dpc_error *err)
{
    dpc_status st = dpc__check_pos(mu, "mu", err);
    if (st) return st;
    if (count == 0) return dpc_error_param(err, DPC_E_INVALID, "count", "must be >= 1");
    if (!sigma) return dpc_error_param(err, DPC_E_INVALID, "sigma", "output pointer is NULL");
    *sigma = sqrt((double)count) / mu;
    return DPC_OK;
}
