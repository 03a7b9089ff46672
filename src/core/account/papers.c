/* papers.c — the privacy calculators exactly as the seed papers state them, with their stated
 * conditions checked: DP-SRGD's tree GDP calibration, DP-AMBSSGD's zCDP with parallel
 * composition. The general accountants (event.c) give tighter answers; these exist to reproduce
 * the papers. (The KAN DP-lambda-CGD paper's closed forms live in its module,
 * src/papers/kan/paper_noise.c.) */
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
