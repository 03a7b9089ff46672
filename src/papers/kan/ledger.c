/* ledger.c — the privacy decision of a projected DP-lambda-CGD run and its ledger: the noise is
 * calibrated by the accountant's route (default) or the paper's closed form, and the reported
 * epsilon is always the accountant's for the noise that runs. */
#include "common/util.h"
#include "dpcorr/papers/kan.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The accountant's epsilon for noise_std (dpc_kan_calibrate's argument read backwards). */
static dpc_status accountant_epsilon(const dpc_kan_privacy *p, double noise_std, double *eps,
                                     double *sens_k, size_t *k, dpc_error *err)
{
    dpc_kan_calib c1; /* participations and sensitivity do not depend on epsilon */
    dpc_status st = dpc_kan_calibrate(p->n, p->batch, p->steps, 1.0, p->delta, p->lambda, &c1, err);
    if (st) return st;
    *sens_k = c1.sensitivity;
    *k = c1.participations;
    double dg = p->batch < p->n ? 0.5 * p->delta : p->delta;
    return dpc_gdp_epsilon(c1.sensitivity / noise_std, dg, eps, err);
}

static dpc_status check(const dpc_kan_privacy *p, double *noise_std, dpc_ledger *L,
                        dpc_error *err)
{
    if (!p) return dpc_error_param(err, DPC_E_INVALID, "p", "NULL");
    if (!noise_std) return dpc_error_param(err, DPC_E_INVALID, "noise_std", "NULL output");
    if (!L) return dpc_error_param(err, DPC_E_INVALID, "L", "NULL output");
    if (p->n == 0) return dpc_error_param(err, DPC_E_INVALID, "n", "must be >= 1");
    if (p->batch == 0 || p->batch > p->n)
        return dpc_error_param(err, DPC_E_INVALID, "batch", "must be in [1, n = %zu], got %zu",
                               p->n, p->batch);
    if (p->steps == 0) return dpc_error_param(err, DPC_E_INVALID, "steps", "must be >= 1");
    /* every other field within its range (dpc_kan_privacy_fields), then the pair */
    dpc_status st = dpc_field_check(dpc_kan_privacy_fields(), p, err);
    if (st) return st;
    if (p->epsilon != 0 && p->noise_multiplier != 0)
        return dpc_error_param(err, DPC_E_INVALID, "noise_multiplier",
                               "give either epsilon or noise_multiplier, not both");
    return DPC_OK;
}

/* The noise std for the target epsilon under the chosen calibration. */
static dpc_status calibrate(const dpc_kan_privacy *p, double *noise_std, dpc_error *err)
{
    if (p->calibration == DPC_CALIBRATION_ACCOUNTANT) {
        dpc_kan_calib c;
        dpc_status st = dpc_kan_calibrate(p->n, p->batch, p->steps, p->epsilon, p->delta,
                                          p->lambda, &c, err);
        if (!st) *noise_std = c.noise_std;
        return st;
    }
    dpc_status st = p->lambda == 0
                        ? dpc_account_kan_paper_indep(p->n, p->batch, p->steps, p->epsilon,
                                                      p->delta, noise_std, err)
                        : dpc_account_kan_paper_lcgd(p->n, p->batch, p->steps, p->epsilon,
                                                     p->delta, p->lambda, noise_std, err);
    if (st) return dpc_error_prefix(err, "the paper's calibration does not apply: ");
    return DPC_OK;
}

dpc_status dpc_kan_lcgd_privacy(const dpc_kan_privacy *given, double *noise_std, dpc_ledger *L,
                                dpc_error *err)
{
    dpc_status st = check(given, noise_std, L, err);
    if (st) return st;
    /* the delta rule of every trainer; a non-private run has no guarantee to refuse */
    dpc_kan_privacy r = *given;
    const dpc_kan_privacy *p = &r;
    int derived = 0, nonprivate = given->epsilon == 0 && given->noise_multiplier == 0;
    if ((st = dpc_account_resolve_delta(given->delta, given->n,
                                        given->allow_large_delta || nonprivate, &r.delta,
                                        &derived, err)))
        return st;
    double colnorm; /* one participation: the first column of C (entries lambda^j) */
    if ((st = dpc_kan_sens_exact(p->steps, p->lambda, 1, &colnorm, err))) return st;
    double ns = 0.0;
    if (p->epsilon > 0) st = calibrate(p, &ns, err);
    else ns = p->noise_multiplier * colnorm;
    if (st) return st;
    dpc_ledger_init(L);
    snprintf(L->algorithm, sizeof L->algorithm, "lcgd-projected");
    snprintf(L->mechanism, sizeof L->mechanism, "lambda-CGD (lambda=%g)", p->lambda);
    snprintf(L->sampler, sizeof L->sampler, "uniform");
    snprintf(L->accountant, sizeof L->accountant, "gdp");
    snprintf(L->calibration, sizeof L->calibration, "%s",
             p->epsilon > 0 ? (p->calibration == DPC_CALIBRATION_PAPER
                                   ? (p->lambda == 0 ? "paper: KAN Thm. D.9 (replace-one)"
                                                     : "paper: KAN Thm. F.12")
                                   : "accountant")
                            : (ns > 0 ? "given" : "none (non-private)"));
    snprintf(L->route, sizeof L->route, "%s",
             p->batch < p->n ? "whole-run Gaussian, participations below a binomial quantile "
                               "(tail delta/2; zero-out)"
                             : "whole-run Gaussian, every example in every step (zero-out)");
    L->neighbor = DPC_NEIGHBOR_ZERO_OUT;
    L->q = (double)p->batch / (double)p->n;
    L->noise_multiplier = ns / colnorm;
    L->column_norm = colnorm;
    L->noise_std = ns;
    L->sensitivity_exact = 1;
    L->epsilon_target = p->epsilon > 0 ? p->epsilon : NAN;
    L->delta = p->delta;
    L->delta_derived = derived;
    L->steps = p->steps;
    L->steps_per_epoch = p->n / p->batch;
    L->expected_batch = (double)p->batch;
    *noise_std = ns;
    if (!(ns > 0)) { /* non-private */
        L->epsilon = INFINITY;
        return DPC_OK;
    }
    size_t k = 0;
    if ((st = accountant_epsilon(p, ns, &L->epsilon, &L->sensitivity, &k, err))) return st;
    L->part = (dpc_participation){DPC_PART_MINSEP, k, 1};
    dpc_error e2 = {0};
    double ep = NAN;
    dpc_status sp = p->lambda == 0
                        ? dpc_account_kan_paper_indep_epsilon(p->n, p->batch, p->steps, ns,
                                                              p->delta, &ep, &e2)
                        : dpc_account_kan_paper_lcgd_epsilon(p->n, p->batch, p->steps, p->lambda,
                                                             ns, p->delta, &ep, &e2);
    L->epsilon_paper = sp ? NAN : ep;
    if (p->epsilon > 0 && L->epsilon > p->epsilon * (1 + 1e-9) &&
        p->calibration == DPC_CALIBRATION_ACCOUNTANT)
        return dpc_error_param(err, DPC_E_PRIVACY, "epsilon",
                               "internal: calibrated noise gives epsilon %.9g > target %g",
                               L->epsilon, p->epsilon);
    return DPC_OK;
}
