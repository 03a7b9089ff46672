/* zcdp.c — zero-concentrated DP: the Gaussian's rho and conversions between rho and
 * (eps, delta) (Bun & Steinke 2016; Canonne, Kamath & Steinke 2020). Results hold for whichever
 * neighbouring relation the sensitivity (hence rho) was measured under. */
#include "dpcorr/account.h"

#include "account/acc_math.h"
#include "common/util.h"

dpc_status dpc_zcdp_rho_gaussian(double sensitivity, double sigma, double *rho, dpc_error *err)
{
    dpc_status st;
    if ((st = dpc__check_pos(sensitivity, "sensitivity", err))) return st;
    if ((st = dpc__check_pos(sigma, "sigma", err))) return st;
    if (!rho) return dpc_error_param(err, DPC_E_INVALID, "rho", "output pointer is NULL");
    /* DP-REQ: zcdp-gauss: Bun & Steinke 2016, Prop. 1.6: N(0, sigma^2) on a Delta-sensitive
     * query is (Delta^2 / (2 sigma^2))-zCDP. */
    double r = sensitivity / sigma;
    *rho = 0.5 * r * r;
    return DPC_OK;
}

/* ---- Tight conversion: minimization over the Renyi order a = 1 + e^u -------------------- */

typedef struct {
    double rho, logd, eps;
} zctx;

/* DP-REQ: zcdp-tight: Canonne, Kamath & Steinke 2020, Prop. 12 (as in the nu-DP-FTRL note,
 * App. A.2): rho-zCDP is (a, a rho)-RDP for every a > 1, hence (eps, delta)-DP with
 * eps = a rho + log1p(-1/a) - (log delta + log a)/(a - 1). */
static double eps_at(double u, void *vc)
{
    const zctx *c = vc;
    double am1 = exp(u), a = 1.0 + am1;
    /* log1p(-1/a) = log(a - 1) - log(a) = u - log1p(a - 1): exact where a rounds to 1 (large
     * rho centres the search at a - 1 ~ sqrt(L / rho) < 1e-16; log1p(-1/a) read -inf there and
     * the conversion returned epsilon 0 for rho above ~1e17) */
    return c->rho * a + (u - log1p(am1)) - (c->logd + log1p(am1)) / am1;
}

/* The same bound solved for delta: log delta = (a-1)(a rho - eps) + (a-1) log1p(-1/a) - log a. */
static double logdelta_at(double u, void *vc)
{
    const zctx *c = vc;
    double am1 = exp(u), a = 1.0 + am1;
    return am1 * (a * c->rho - c->eps) + am1 * (u - log1p(am1)) - log1p(am1); /* as eps_at */
}

static double zcdp_eps_tight(double rho, double delta, double *alpha)
{
    double L = -log(delta);
    zctx c = {rho, log(delta), 0.0};
    /* Centre the search on the Bun-Steinke optimum a* = 1 + sqrt(L / rho). */
    double u0 = 0.5 * (log(L) - log(rho)), f;
    double u = dpc__minimize(eps_at, &c, u0 - 20.0, u0 + 20.0, 161, &f);
    if (alpha) *alpha = 1.0 + exp(u);
    return f > 0.0 ? f : 0.0;
}

static dpc_status check_conv(dpc_zcdp_conv conv, dpc_error *err)
{
    if (conv != DPC_ZCDP_TIGHT && conv != DPC_ZCDP_BUN_STEINKE)
        return dpc_error_param(err, DPC_E_INVALID, "conv", "unknown zCDP conversion %d", (int)conv);
    return DPC_OK;
}

dpc_status dpc_zcdp_epsilon(double rho, double delta, dpc_zcdp_conv conv, double *eps,
                            double *alpha, dpc_error *err)
{
    dpc_status st;
    if ((st = dpc__check_nonneg(rho, "rho", err))) return st;
    if ((st = dpc__check_open01(delta, "delta", err))) return st;
    if ((st = check_conv(conv, err))) return st;
    if (!eps) return dpc_error_param(err, DPC_E_INVALID, "eps", "output pointer is NULL");
    if (rho > DPC__SCALE_MAX) /* the tight conversion's search loses all precision (it read 0) */
        return dpc_error_param(err, DPC_E_RANGE, "rho", "%g overflows: must be at most 1e150", rho);
    if (alpha) *alpha = NAN;
    if (rho == 0.0) {
        *eps = 0.0;
        return DPC_OK;
    }
    if (conv == DPC_ZCDP_BUN_STEINKE) {
        /* DP-REQ: zcdp-bs: Bun & Steinke 2016, Prop. 1.3: eps = rho + 2 sqrt(rho log(1/delta)). */
        *eps = rho + 2.0 * sqrt(rho * -log(delta));
        return DPC_OK;
    }
    *eps = zcdp_eps_tight(rho, delta, alpha);
    return DPC_OK;
}

dpc_status dpc_zcdp_delta(double rho, double eps, dpc_zcdp_conv conv, double *delta,
                          dpc_error *err)
{
    dpc_status st;
    if ((st = dpc__check_nonneg(rho, "rho", err))) return st;
    if ((st = dpc__check_nonneg(eps, "eps", err))) return st;
    if ((st = check_conv(conv, err))) return st;
    if (!delta) return dpc_error_param(err, DPC_E_INVALID, "delta", "output pointer is NULL");
    if (rho == 0.0) {
        *delta = 0.0;
        return DPC_OK;
    }
    if (conv == DPC_ZCDP_BUN_STEINKE) {
        /* DP-REQ: zcdp-bs-delta: Bun & Steinke 2016, Prop. 1.3 solved for delta. */
        double d = eps - rho;
        *delta = d <= 0.0 ? 1.0 : exp(-d * d / (4.0 * rho));
        return DPC_OK;
    }
    /* DP-REQ: zcdp-tight-delta: Canonne, Kamath & Steinke 2020, Prop. 12, minimized over a. The
     * optimum is near a = (eps/rho + 1)/2 (the stationary point of the leading terms). */
    zctx c = {rho, 0.0, eps};
    double ac = 0.5 * (eps / rho + 1.0), u0 = log(ac > 1.0 + 1e-6 ? ac - 1.0 : 1e-6), f;
    (void)dpc__minimize(logdelta_at, &c, u0 - 20.0, u0 + 20.0, 161, &f);
    *delta = f >= 0.0 ? 1.0 : exp(f);
    return DPC_OK;
}

typedef struct {
    double delta, target;
} rctx;

static int eps_exceeds(double rho, void *vc)
{
    const rctx *c = vc;
    return zcdp_eps_tight(rho, c->delta, NULL) > c->target;
}

dpc_status dpc_zcdp_rho_for(double eps, double delta, dpc_zcdp_conv conv, double *rho,
                            dpc_error *err)
{
    dpc_status st;
    if ((st = dpc__check_pos(eps, "eps", err))) return st;
    if ((st = dpc__check_open01(delta, "delta", err))) return st;
    if ((st = check_conv(conv, err))) return st;
    if (!rho) return dpc_error_param(err, DPC_E_INVALID, "rho", "output pointer is NULL");
    /* DP-REQ: zcdp-bs-inverse: Bun & Steinke 2016, Prop. 1.3 inverted (DP-AMBSSGD note §3.2):
     * sqrt(rho) = sqrt(log(1/delta) + eps) - sqrt(log(1/delta)), written without cancellation. */
    double L = -log(delta);
    double s = eps / (sqrt(L + eps) + sqrt(L));
    double rho_bs = s * s;
    if (conv == DPC_ZCDP_BUN_STEINKE) {
        *rho = rho_bs;
        return DPC_OK;
    }
    /* The tight conversion is never worse than Bun-Steinke, so rho_bs is on the private side. */
    rctx c = {delta, eps};
    double lo = rho_bs, hi = 2.0 * rho_bs;
    while (!eps_exceeds(hi, &c)) {
        lo = hi;
        hi *= 2.0;
        if (hi > 1e300)
            return dpc_error_set(err, DPC_E_NUMERIC, "zcdp: the bracket search for rho diverged");
    }
    dpc__bisect(eps_exceeds, &c, &lo, &hi, 0.0, 1e-14, 1);
    *rho = lo;
    return DPC_OK;
}

dpc_status dpc_zcdp_sigma_for(double rho, size_t count, double *sigma, dpc_error *err)
{
    dpc_status st = dpc__check_pos(rho, "rho", err);
    if (st) return st;
    if (count == 0) return dpc_error_param(err, DPC_E_INVALID, "count", "must be >= 1");
    if (!sigma) return dpc_error_param(err, DPC_E_INVALID, "sigma", "output pointer is NULL");
    *sigma = sqrt((double)count / (2.0 * rho));
    return DPC_OK;
}
