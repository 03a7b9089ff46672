/* papers.c — the privacy calculators exactly as the seed papers state them, with their stated
 * conditions checked: DP-SRGD's tree GDP calibration, DP-AMBSSGD's zCDP with parallel
 * composition, and the two noise-multiplier formulas of the KAN DP-lambda-CGD paper. The
 * general accountants (event.c) give tighter answers; these exist to reproduce the papers. */
#include "dpcorr/account.h"

#include "account/acc_math.h"

/* ==== DP-SRGD (Choquette-Choo, Ganesh & Thakurta 2024) ==================================== */

dpc_status dpc_account_srgd_mu_paper(double eps, double delta, double *mu, dpc_error *err)
{
    dpc_status st;
    if ((st = dpc__check_pos(eps, "eps", err))) return st;
    if ((st = dpc__check_open01(delta, "delta", err))) return st;
    if (!mu) return dpc_error_param(err, DPC_E_INVALID, "mu", "output pointer is NULL");
    if (eps > 1.0)
        return dpc_error_param(err, DPC_E_PRIVACY, "eps",
                               "the DP-SRGD closed form mu = eps/sqrt(2 log(2.5/delta)) is the "
                               "classical Gaussian-mechanism bound, valid for eps <= 1; got %g "
                               "(use dpc_gdp_mu_for for the exact mu)",
                               eps);
    /* DP-REQ: srgd-mu: Choquette-Choo, Ganesh & Thakurta 2024, Sec. 3 / Cor. 5.7: mu-GDP with
     * mu = eps / sqrt(2 ln(2.5/delta)) gives (eps, delta/2)-DP (Dwork & Roth 2014, Thm. A.1). */
    *mu = eps / sqrt(2.0 * log(2.5 / delta));
    return DPC_OK;
}

dpc_status dpc_account_srgd_tree_sigma(size_t steps, double clip, size_t batch, double mu,
                                       double *sigma, dpc_error *err)
{
    dpc_status st;
    if (steps == 0) return dpc_error_param(err, DPC_E_INVALID, "steps", "must be >= 1, got 0");
    if (batch == 0) return dpc_error_param(err, DPC_E_INVALID, "batch", "must be >= 1, got 0");
    if ((st = dpc__check_pos(clip, "clip", err))) return st;
    if ((st = dpc__check_pos(mu, "mu", err))) return st;
    if (!sigma) return dpc_error_param(err, DPC_E_INVALID, "sigma", "output pointer is NULL");
    unsigned levels = 0; /* ceil(log2 T) */
    while (levels < 64 && ((size_t)1 << levels) < steps) levels++;
    /* DP-REQ: srgd-tree: Choquette-Choo, Ganesh & Thakurta 2024, Lemma 5.6: each increment
     * (sensitivity clip/B under zero-out) enters at most 1 + ceil(log2 T) tree nodes, so node
     * noise std (clip/B) sqrt(1 + ceil(log2 T)) / mu gives mu-GDP (Dong, Roth & Su 2022). */
    *sigma = clip / (double)batch * sqrt(1.0 + (double)levels) / mu;
    return DPC_OK;
}

/* ==== DP-AMBSSGD (Varshney, Thakurta & Jain 2022) ======================================== */

dpc_status dpc_account_ambssgd_rho(double alpha, double *rho, dpc_error *err)
{
    dpc_status st;
    if ((st = dpc__check_pos(alpha, "alpha", err))) return st;
    if (!rho) return dpc_error_param(err, DPC_E_INVALID, "rho", "output pointer is NULL");
    /* DP-REQ: ambssgd-rho: Varshney, Thakurta & Jain 2022, Thm. 3.6 / Proof B.2: gradient step
     * 1/(2 alpha^2) + DP-STAT 1/(2 alpha^2) per step (Bun & Steinke 2016, Prop. 1.6 and Lemma
     * 2.3); disjoint batches, so parallel composition leaves 1/alpha^2 for the whole pass. */
    *rho = 1.0 / (alpha * alpha);
    return DPC_OK;
}

dpc_status dpc_account_ambssgd_epsilon(double alpha, double delta, double *eps, dpc_error *err)
{
    double rho;
    dpc_status st = dpc_account_ambssgd_rho(alpha, &rho, err);
    if (st) return st;
    /* DP-REQ: ambssgd-eps: Varshney, Thakurta & Jain 2022, Proof B.2 (Bun & Steinke Prop. 1.3). */
    return dpc_zcdp_epsilon(rho, delta, DPC_ZCDP_BUN_STEINKE, eps, NULL, err);
}

dpc_status dpc_account_ambssgd_alpha(double eps, double delta, int paper, double *alpha,
                                     dpc_error *err)
{
    dpc_status st;
    if ((st = dpc__check_pos(eps, "eps", err))) return st;
    if ((st = dpc__check_open01(delta, "delta", err))) return st;
    if (!alpha) return dpc_error_param(err, DPC_E_INVALID, "alpha", "output pointer is NULL");
    double L = -log(delta);
    if (paper) {
        if (eps > L)
            return dpc_error_param(err, DPC_E_PRIVACY, "eps",
                                   "Thm. 3.7's alpha = sqrt(8 log(1/delta))/eps requires eps "
                                   "<= log(1/delta) = %g, got %g",
                                   L, eps);
        /* DP-REQ: ambssgd-alpha-paper: Varshney, Thakurta & Jain 2022, Thm. 3.7. */
        *alpha = sqrt(8.0 * L) / eps;
        return DPC_OK;
    }
    /* DP-REQ: ambssgd-alpha-exact: rho = 1/alpha^2 solved from Bun & Steinke Prop. 1.3:
     * alpha* = 1/(sqrt(L + eps) - sqrt(L)) = (sqrt(L + eps) + sqrt(L))/eps. */
    *alpha = (sqrt(L + eps) + sqrt(L)) / eps;
    return DPC_OK;
}

/* ==== KAN DP-lambda-CGD (Wang et al. 2026) ================================================ */

static dpc_status kan_common(size_t n, size_t batch, size_t steps, double eps, double delta,
                             double *noise_std, dpc_error *err)
{
    dpc_status st;
    if (n == 0) return dpc_error_param(err, DPC_E_INVALID, "n", "must be >= 1, got 0");
    if (batch == 0 || batch > n)
        return dpc_error_param(err, DPC_E_INVALID, "batch", "must be in [1, n = %zu], got %zu", n,
                               batch);
    if (steps == 0) return dpc_error_param(err, DPC_E_INVALID, "steps", "must be >= 1, got 0");
    if ((st = dpc__check_pos(eps, "eps", err))) return st;
    if ((st = dpc__check_open01(delta, "delta", err))) return st;
    if (!noise_std)
        return dpc_error_param(err, DPC_E_INVALID, "noise_std", "output pointer is NULL");
    return DPC_OK;
}

dpc_status dpc_account_kan_paper_indep(size_t n, size_t batch, size_t steps, double eps,
                                       double delta, double *noise_std, dpc_error *err)
{
    dpc_status st = kan_common(n, batch, steps, eps, delta, noise_std, err);
    if (st) return st;
    if (batch >= n)
        return dpc_error_param(err, DPC_E_PRIVACY, "batch",
                               "Thm. D.9 is for the subsampled regime B < n (got B = n = "
                               "%zu); at B = n use the plain Gaussian mechanism",
                               n);
    /* DP-REQ: kan-noise_std-indep: Wang et al. 2026, Thm. 5.4 = D.9 (Lemma D.7: per-step RDP
     * 8 a q^2 / noise_std^2 from the j = 2 term of Wang, Balle & Kasiviswanathan 2019 eq. 19;
     * composition over T; a = 1 + 2 log(1/delta)/eps; RDP -> DP by Mironov 2017 Prop. 3):
     * noise_std^2 = 16 B^2 T/(n^2 eps) + 32 B^2 T log(1/delta)/(n^2 eps^2). */
    double q = (double)batch / (double)n, T = (double)steps;
    double k2 = 16.0 * q * q * T / eps + 32.0 * q * q * T * -log(delta) / (eps * eps);
    *noise_std = sqrt(k2);
    return DPC_OK;
}

dpc_status dpc_account_kan_paper_lcgd(size_t n, size_t batch, size_t steps, double eps,
                                      double delta, double lambda, double *noise_std,
                                      dpc_error *err)
{
    dpc_status st = kan_common(n, batch, steps, eps, delta, noise_std, err);
    if (st) return st;
    if (!(lambda >= 0.0 && lambda < 1.0))
        return dpc_error_param(err, DPC_E_INVALID, "lambda", "must be in [0, 1), got %g", lambda);
    if (eps > 1.0)
        return dpc_error_param(err, DPC_E_PRIVACY, "eps",
                               "Thm. F.12 requires eps in (0, 1] (classical Gaussian "
                               "mechanism), got %g",
                               eps);
    double r = (double)batch / (double)n, T = (double)steps, rT = r * T;
    double need = 3.0 * log(2.0 / delta);
    if (!(rT >= need))
        return dpc_error_param(err, DPC_E_PRIVACY, "steps",
                               "Thm. F.12 requires r T >= 3 log(2/delta) = %g (Chernoff "
                               "bound on participations), got r T = %g",
                               need, rT);
    /* DP-REQ: kan-noise_std-lcgd: Wang et al. 2026, Thm. 5.1 = F.12: Chernoff tail (Lemma F.10,
     * c1 = 1/2) tau = rT + sqrt(3 rT log(2/delta)); ||C y|| <= ((1 - lambda^T)/(1 - lambda))
     * sqrt(tau) (Lemma F.11); classical Gaussian mechanism at delta/2:
     * noise_std^2 = 8 ((1-lambda^T)/(1-lambda))^2 (rT + sqrt(3 rT log(2/delta))) log(2.5/delta)/eps^2.
     */
    double g = lambda == 0.0 ? 1.0 : -expm1(T * log(lambda)) / (1.0 - lambda);
    double tau = rT + sqrt(3.0 * rT * log(2.0 / delta));
    *noise_std = sqrt(8.0 * g * g * tau * log(2.5 / delta)) / eps;
    return DPC_OK;
}

dpc_status dpc_account_kan_paper_indep_epsilon(size_t n, size_t batch, size_t steps,
                                               double noise_std, double delta, double *eps,
                                               dpc_error *err)
{
    double k1;
    dpc_status st = dpc_account_kan_paper_indep(n, batch, steps, 1.0, delta, &k1, err);
    if (st) return st;
    if ((st = dpc__check_pos(noise_std, "noise_std", err))) return st;
    if (!eps) return dpc_error_param(err, DPC_E_INVALID, "eps", "output pointer is NULL");
    /* noise_std^2 = a/eps + b/eps^2: the positive root of noise_std^2 eps^2 - a eps - b = 0,
     * written without cancellation */
    double q = (double)batch / (double)n, T = (double)steps;
    double a = 16.0 * q * q * T, b = 32.0 * q * q * T * -log(delta);
    *eps = 2.0 * b / (sqrt(a * a + 4.0 * b * noise_std * noise_std) - a);
    return DPC_OK;
}

dpc_status dpc_account_kan_paper_lcgd_epsilon(size_t n, size_t batch, size_t steps, double lambda,
                                              double noise_std, double delta, double *eps,
                                              dpc_error *err)
{
    double k1;
    dpc_status st = dpc_account_kan_paper_lcgd(n, batch, steps, 1.0, delta, lambda, &k1, err);
    if (st) return st;
    if ((st = dpc__check_pos(noise_std, "noise_std", err))) return st;
    if (!eps) return dpc_error_param(err, DPC_E_INVALID, "eps", "output pointer is NULL");
    double e = k1 / noise_std; /* noise_std is proportional to 1/eps */
    if (e > 1.0)
        return dpc_error_param(err, DPC_E_PRIVACY, "noise_std",
                               "%g is below Thm. F.12's range (it would claim eps = %g > 1)",
                               noise_std, e);
    *eps = e;
    return DPC_OK;
}
