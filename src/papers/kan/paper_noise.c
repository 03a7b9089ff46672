/* paper_noise.c — the KAN DP-lambda-CGD paper's closed forms ([KAN] Thm. 5.4 = D.9 and Thm. 5.1
 * = F.12) for the noise std, and their inverses, exactly as the paper states them, with their
 * stated conditions checked. They belong to the paper (dpcorr/papers/kan.h, section 5); the
 * core's accountants (dpcorr/account.h) give tighter answers (privacy.c compares them). */
#include "dpcorr/papers/kan.h"

#include <math.h>

/* The accountant's argument checks (same messages, so errors read the same in every module). */
static dpc_status check_pos(double v, const char *name, dpc_error *err)
{
    if (!(v > 0.0) || !isfinite(v))
        return dpc_error_param(err, DPC_E_INVALID, name, "must be a finite number > 0, got %g", v);
    return DPC_OK;
}

static dpc_status check_open01(double v, const char *name, dpc_error *err)
{
    if (!(v > 0.0 && v < 1.0))
        return dpc_error_param(err, DPC_E_INVALID, name, "must be in (0, 1), got %g", v);
    return DPC_OK;
}

static dpc_status kan_common(size_t n, size_t batch, size_t steps, double eps, double delta,
                             double *noise_std, dpc_error *err)
{
    dpc_status st;
    if (n == 0) return dpc_error_param(err, DPC_E_INVALID, "n", "must be >= 1, got 0");
    if (batch == 0 || batch > n)
        return dpc_error_param(err, DPC_E_INVALID, "batch", "must be in [1, n = %zu], got %zu", n,
                               batch);
    if (steps == 0) return dpc_error_param(err, DPC_E_INVALID, "steps", "must be >= 1, got 0");
    if ((st = check_pos(eps, "eps", err))) return st;
    if ((st = check_open01(delta, "delta", err))) return st;
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
    if ((st = check_pos(noise_std, "noise_std", err))) return st;
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
    if ((st = check_pos(noise_std, "noise_std", err))) return st;
    if (!eps) return dpc_error_param(err, DPC_E_INVALID, "eps", "output pointer is NULL");
    double e = k1 / noise_std; /* noise_std is proportional to 1/eps */
    if (e > 1.0)
        return dpc_error_param(err, DPC_E_PRIVACY, "noise_std",
                               "%g is below Thm. F.12's range (it would claim eps = %g > 1)",
                               noise_std, e);
    *eps = e;
    return DPC_OK;
}
