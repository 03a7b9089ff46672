/* privacy.c — privacy helpers for DP-lambda-CGD ([KAN] App. D and F): the pattern sensitivity
 * ||C y|| and its bounds, the participation tail, the eq. 19 RDP epsilon, and dpcorr's tighter
 * calibrations. The paper's own closed forms are in paper_noise.c
 * (dpc_account_kan_paper_indep / _lcgd). */
#include "common/util.h"
#include "dpcorr/account.h"
#include "kan/kan_internal.h"

#include <math.h>

static dpc_status check_lambda(double lambda, int allow_one, dpc_error *err)
{
    if (!(lambda >= 0.0 && (allow_one ? lambda <= 1.0 : lambda < 1.0)))
        return dpc_error_param(err, DPC_E_INVALID, "lambda", "must be in [0, 1%s, got %g",
                             allow_one ? "]" : ")", lambda);
    return DPC_OK;
}

dpc_status dpc_kan_sens_pattern(size_t T, double lambda, const unsigned char *y, double *sens,
                                dpc_error *err)
{
    if (!y || !sens) return dpc_error_param(err, DPC_E_INVALID, "sens_pattern", "NULL argument");
    if (T < 1) return dpc_error_param(err, DPC_E_INVALID, "T", "must be >= 1");
    dpc_status st = check_lambda(lambda, 1, err);
    if (st) return st;
    /* (C y)_t = sum_{u <= t} lambda^{t-u} y_u = lambda (C y)_{t-1} + y_t */
    double s = 0.0, acc = 0.0;
    for (size_t t = 0; t < T; t++) {
        if (y[t] > 1) return dpc_error_set(err, DPC_E_INVALID, "y[%zu] must be 0 or 1", t);
        s = lambda * s + (double)y[t];
        acc += s * s;
    }
    *sens = sqrt(acc);
    return DPC_OK;
}

dpc_status dpc_kan_sens_bound(size_t T, double lambda, double tau, double *bound, dpc_error *err)
{
    if (!bound) return dpc_error_param(err, DPC_E_INVALID, "sens_bound", "NULL output");
    if (T < 1) return dpc_error_param(err, DPC_E_INVALID, "T", "must be >= 1");
    if (!(tau >= 0) || !isfinite(tau))
        return dpc_error_param(err, DPC_E_INVALID, "tau", "must be >= 0, got %g", tau);
    dpc_status st = check_lambda(lambda, 1, err);
    if (st) return st;
    /* DP-REQ: kan-sens-f11: [KAN] Lemma F.11, ||C||_2 <= max row sum (1 - lambda^T)/(1 - lambda) */
    double row = lambda == 1.0 ? (double)T
                 : lambda == 0.0 ? 1.0
                                 : -expm1((double)T * log(lambda)) / (1.0 - lambda);
    *bound = row * sqrt(tau);
    return DPC_OK;
}

dpc_status dpc_kan_sens_exact(size_t T, double lambda, size_t k, double *sens, dpc_error *err)
{
    if (!sens) return dpc_error_param(err, DPC_E_INVALID, "sens_exact", "NULL output");
    if (T < 1) return dpc_error_param(err, DPC_E_INVALID, "T", "must be >= 1");
    dpc_status st = check_lambda(lambda, 1, err);
    if (st) return st;
    if (k == 0) {
        *sens = 0.0;
        return DPC_OK;
    }
    dpc_mech_params mp;
    dpc_mech_params_init(&mp);
    mp.kind = DPC_MECH_LCGD;
    mp.steps = T;
    mp.lambda = lambda;
    dpc_mech *m = NULL;
    if ((st = dpc_mech_new(&m, &mp, err))) return st;
    dpc_participation part = {DPC_PART_MINSEP, k, 1};
    dpc_sensitivity s;
    st = dpc_mech_sensitivity(m, &part, &s, err);
    dpc_mech_free(m);
    if (st) return st;
    if (!s.exact)
        return dpc_error_param(err, DPC_E_NUMERIC, "sens_exact", "the core returned a bound (%s)",
                             dpc_sens_method_name(s.method));
    *sens = s.value;
    return DPC_OK;
}

dpc_status dpc_kan_chernoff_tau(double r, size_t T, double delta, double *tau, dpc_error *err)
{
    if (!tau) return dpc_error_param(err, DPC_E_INVALID, "chernoff_tau", "NULL output");
    if (!(r > 0 && r <= 1)) return dpc_error_param(err, DPC_E_INVALID, "r", "must be in (0, 1], got %g", r);
    if (!(delta > 0 && delta < 1))
        return dpc_error_param(err, DPC_E_INVALID, "delta", "must be in (0, 1), got %g", delta);
    double rT = r * (double)T, need = 3.0 * log(2.0 / delta);
    if (!(rT >= need))
        return dpc_error_param(err, DPC_E_PRIVACY, "T",
                             "Lemma F.10 requires r T >= 3 log(2/delta) = %g, got r T = %g",
                             need, rT);
    /* DP-REQ: kan-chernoff: [KAN] Lemma F.10 with c1 = 1/2 */
    *tau = rT + sqrt(3.0 * rT * log(2.0 / delta));
    return DPC_OK;
}

/* log P(Bin(T, r) = j) */
static double log_pmf(size_t T, double r, size_t j)
{
    double lt = lgamma((double)T + 1) - lgamma((double)j + 1) - lgamma((double)(T - j) + 1);
    double a = j ? (double)j * log(r) : 0.0, b = (T - j) ? (double)(T - j) * log1p(-r) : 0.0;
    return lt + a + b;
}

dpc_status dpc_kan_binom_quantile(size_t T, double r, double tail, size_t *k, double *p_tail,
                                  dpc_error *err)
{
    if (!k) return dpc_error_param(err, DPC_E_INVALID, "binom_quantile", "NULL output");
    if (!(r > 0 && r <= 1)) return dpc_error_param(err, DPC_E_INVALID, "r", "must be in (0, 1], got %g", r);
    if (!(tail > 0 && tail < 1))
        return dpc_error_param(err, DPC_E_INVALID, "tail", "must be in (0, 1), got %g", tail);
    if (r == 1.0) {
        *k = T;
        if (p_tail) *p_tail = 0.0;
        return DPC_OK;
    }
    /* suffix sums from the top: P(Bin > k) = sum_{j > k} pmf(j), decreasing in k */
    double acc = 0.0;
    size_t j = T;
    for (;;) {
        double next = acc + exp(log_pmf(T, r, j)); /* P(Bin >= j) = P(Bin > j - 1) */
        if (next > tail || j == 0) break;
        acc = next;
        j--;
    }
    *k = j; /* P(Bin > j) = acc <= tail, P(Bin > j - 1) > tail */
    if (p_tail) *p_tail = acc;
    return DPC_OK;
}

dpc_status dpc_kan_rdp_closed_eps(double q, size_t T, double noise_std, double alpha, double delta,
                                  double *eps, dpc_error *err)
{
    if (!eps) return dpc_error_param(err, DPC_E_INVALID, "rdp_closed_eps", "NULL output");
    if (!(q > 0 && q <= 1)) return dpc_error_param(err, DPC_E_INVALID, "q", "must be in (0, 1], got %g", q);
    if (!(noise_std > 0) || !isfinite(noise_std))
        return dpc_error_param(err, DPC_E_INVALID, "noise_std", "must be > 0, got %g", noise_std);
    if (!(alpha > 1) || !isfinite(alpha))
        return dpc_error_param(err, DPC_E_INVALID, "alpha", "must be > 1, got %g", alpha);
    if (!(delta > 0 && delta < 1))
        return dpc_error_param(err, DPC_E_INVALID, "delta", "must be in (0, 1), got %g", delta);
    /* DP-REQ: kan-rdp-closed: [KAN] Lemma D.7 (j = 2 term of eq. 19), Thm. D.9 conversion */
    *eps = 8.0 * alpha * (double)T * q * q / (noise_std * noise_std) + log(1.0 / delta) / (alpha - 1.0);
    return DPC_OK;
}

dpc_status dpc_kan_rdp_eq19_eps(size_t n, size_t B, size_t T, double noise_std, double delta,
                                double *eps, double *alpha, dpc_error *err)
{
    if (!eps) return dpc_error_param(err, DPC_E_INVALID, "rdp_eq19_eps", "NULL output");
    if (n < 1 || B < 1 || B > n)
        return dpc_error_param(err, DPC_E_INVALID, "batch", "must be in [1, n], got B = %zu, n = %zu", B, n);
    if (T < 1) return dpc_error_param(err, DPC_E_INVALID, "T", "must be >= 1");
    if (!(noise_std > 0) || !isfinite(noise_std))
        return dpc_error_param(err, DPC_E_INVALID, "noise_std", "must be > 0, got %g", noise_std);
    if (!(delta > 0 && delta < 1))
        return dpc_error_param(err, DPC_E_INVALID, "delta", "must be in (0, 1), got %g", delta);
    enum { NA = 255 };
    double orders[NA], rdp[NA];
    for (size_t a = 0; a < NA; a++) orders[a] = (double)(a + 2);
    /* noise std C noise_std / B on the mean, replace-one sensitivity 2 C / B: z = noise_std / 2 */
    dpc_status st = dpc_rdp_wor_gaussian((double)B / (double)n, 0.5 * noise_std, orders, NA, rdp, err);
    if (st) return st;
    double best = INFINITY, ba = NAN;
    for (size_t a = 0; a < NA; a++) {
        double e = (double)T * rdp[a] + log(1.0 / delta) / (orders[a] - 1.0);
        if (e < best) best = e, ba = orders[a];
    }
    *eps = best;
    if (alpha) *alpha = ba;
    return DPC_OK;
}

dpc_status dpc_kan_calibrate(size_t n, size_t B, size_t steps, double eps, double delta,
                                double lambda, dpc_kan_calib *out, dpc_error *err)
{
    if (!out) return dpc_error_param(err, DPC_E_INVALID, "kappa_dpcorr", "NULL output");
    if (n < 1 || B < 1 || B > n)
        return dpc_error_param(err, DPC_E_INVALID, "batch", "must be in [1, n], got B = %zu, n = %zu", B, n);
    if (steps < 1) return dpc_error_param(err, DPC_E_INVALID, "steps", "must be >= 1");
    if (!(eps > 0) || !isfinite(eps))
        return dpc_error_param(err, DPC_E_INVALID, "eps", "must be > 0, got %g", eps);
    if (!(delta > 0 && delta < 1))
        return dpc_error_param(err, DPC_E_INVALID, "delta", "must be in (0, 1), got %g", delta);
    dpc_status st = check_lambda(lambda, 0, err);
    if (st) return st;
    double r = (double)B / (double)n, dg = delta;
    size_t k = steps;
    double tail = 0.0;
    if (B < n) {
        /* DP-REQ: kan-dpcorr-calib: [KAN] Thm. F.8 mixture; joint convexity of the hockey-stick
         * divergence splits it into P(|y| > k) <= delta/2 plus the Gaussian at max_{|y|<=k}
         * ||C y|| with delta/2 (the structure of Thm. F.12's proof, each step exact). */
        dg = 0.5 * delta;
        if ((st = dpc_kan_binom_quantile(steps, r, dg, &k, &tail, err))) return st;
    }
    double sens, mu;
    if ((st = dpc_kan_sens_exact(steps, lambda, k, &sens, err))) return st;
    if ((st = dpc_gdp_mu_for(eps, dg, &mu, err))) return st;
    out->participations = k;
    out->tail = tail;
    out->sensitivity = sens;
    out->mu = mu;
    out->noise_std = sens / mu;
    return DPC_OK;
}

dpc_status dpc_kan_calibrate_rdp_wor(size_t n, size_t B, size_t steps, double eps, double delta,
                                 double *noise_std, dpc_error *err)
{
    if (!noise_std) return dpc_error_param(err, DPC_E_INVALID, "kappa_rdp_wor", "NULL output");
    if (n < 1 || B < 1 || B > n)
        return dpc_error_param(err, DPC_E_INVALID, "batch", "must be in [1, n], got B = %zu, n = %zu", B, n);
    if (steps < 1) return dpc_error_param(err, DPC_E_INVALID, "steps", "must be >= 1");
    dpc_gauss_event c;
    dpc_gauss_event_init(&c);
    c.sigma = 1.0;
    c.sensitivity = 2.0; /* replace-one: one clipped gradient swapped for another */
    c.sampling = B < n ? DPC_SAMPLING_FIXED : DPC_SAMPLING_NONE;
    c.q = (double)B / (double)n;
    c.count = steps;
    dpc_event ev = {DPC_NEIGHBOR_REPLACE_ONE, 1, &c};
    dpc_account_opts o;
    dpc_account_opts_init(&o, DPC_ACCOUNTANT_RDP);
    return dpc_account_calibrate_sigma(&ev, &o, eps, delta, noise_std, err);
}

dpc_status dpc_kan_full_batch_delta(size_t steps, double lambda, double noise_std, double eps,
                                    double *delta, dpc_error *err)
{
    if (!delta) return dpc_error_param(err, DPC_E_INVALID, "full_batch_delta", "NULL output");
    if (!(noise_std > 0) || !isfinite(noise_std))
        return dpc_error_param(err, DPC_E_INVALID, "noise_std", "must be > 0, got %g", noise_std);
    double sens;
    dpc_status st = dpc_kan_sens_exact(steps, lambda, steps, &sens, err);
    if (st) return st;
    return dpc_gdp_delta(sens / noise_std, eps, delta, err);
}
