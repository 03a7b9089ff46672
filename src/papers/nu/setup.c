/* setup.c — the setup of a theory run and its simulation (dpcorr/papers/sim.h): the defaults,
 * the spectrum, Theorem 2.2's nu, the DP noise std and the burn-in, decided here once for
 * `dpcorr theory` and every nu-DP-FTRL repro target. */
#include "common/util.h"
#include "dpcorr/papers/sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SPECTRUM_OPS 50.0 /* a pow() and a store per eigenvalue, in the work limit's units */

void dpc_nu_setup_params_init(dpc_nu_setup_params *p)
{
    if (p) dpc_field_defaults(dpc_nu_setup_params_fields(), p);
}

/* Every field within its table's range, then mu <= L where they are used. */
static dpc_status check(const dpc_nu_setup_params *p, dpc_error *err)
{
    if (!p) return dpc_error_param(err, DPC_E_INVALID, "params", "NULL");
    dpc_status st = dpc_field_check(dpc_nu_setup_params_fields(), p, err);
    if (st) return st;
    int sc = p->problem == DPC_NU_PROBLEM_SC || p->model == DPC_SIM_LOGCOSH;
    if (sc && p->mu > p->L)
        return dpc_error_param(err, DPC_E_INVALID, "mu", "must be <= L = %g, got %g", p->L, p->mu);
    return DPC_OK;
}

/* gamma_inf^2, sigma, burn-in, and with steps the truncated beta and the simulation. */
static dpc_status with_beta(dpc_nu_setup *s, const dpc_nu_setup_params *p,
                            const dpc_theory_beta *b, dpc_error *err)
{
    dpc_status st = dpc_theory_gamma_inf2(b, &s->gamma_inf2, err);
    if (st) return st;
    s->sigma = p->G * sqrt(s->gamma_inf2 / (2 * p->rho));
    double nu = b->kind == DPC_THEORY_BETA_NU ? b->nu : 0.0;
    double slow = fmin(p->eta * s->lambda_min, nu > 0 ? nu : 1.0);
    s->burn_in = (size_t)(p->burn_in_scale / slow);
    if (p->steps == 0) return DPC_OK;
    s->len = dpc_theory_beta_len_for_tail(b, p->tail, 1);
    if (!s->len)
        return dpc_error_param(err, DPC_E_INVALID, "beta",
                               "coefficients do not decay (gamma_inf = inf): nothing to simulate");
    s->beta = dpc__malloc_array(s->len, sizeof *s->beta);
    if (!s->beta) return DPC__NOMEM(err, "the simulation's coefficients");
    dpc_theory_beta_coeffs(b, s->beta, s->len);
    dpc_sim_config *c = &s->sim;
    dpc_sim_config_init(c);
    c->model = p->model;
    c->eta = p->eta;
    c->sigma = s->sigma;
    c->sigma_sgd = p->sigma_sgd;
    c->d = s->d;
    c->lambda = s->lambda;
    if (p->model == DPC_SIM_LOGCOSH) {
        c->mu = p->mu;
        c->L = p->L;
    }
    c->burn_in = s->burn_in;
    c->steps = p->steps;
    c->seed = p->seed;
    c->beta = s->beta;
    c->len = s->len;
    c->memory_budget = p->memory_budget;
    return DPC_OK;
}

dpc_status dpc_nu_setup_make(dpc_nu_setup *out, const dpc_nu_setup_params *p,
                             const dpc_theory_beta *b, dpc_error *err)
{
    if (!out) return dpc_error_param(err, DPC_E_INVALID, "out", "NULL");
    memset(out, 0, sizeof *out);
    dpc_status st = check(p, err);
    if (!st && b) st = dpc_theory_beta_check(b, err);
    if (st) return st;
    out->d = p->problem == DPC_NU_PROBLEM_MEAN ? 1 : p->d;
    /* the spectrum is made for every problem (SC's bound does not read it): its d powers and
     * d doubles are bounded like any computation, before the allocation */
    if ((st = dpc__work_check(SPECTRUM_OPS * (double)out->d, "d", "the spectrum (d powers)", err)))
        return st;
    out->lambda = dpc__malloc_array(out->d, sizeof *out->lambda);
    if (!out->lambda) return DPC__NOMEM(err, "the spectrum");
    if (p->problem == DPC_NU_PROBLEM_MEAN) out->lambda[0] = 1.0;
    else dpc_theory_powerlaw(out->lambda, out->d, p->alpha);
    double lmin = out->lambda[0];
    for (size_t j = 0; j < out->d; j++) lmin = fmin(lmin, out->lambda[j]);
    if (p->problem == DPC_NU_PROBLEM_LTI && !(lmin > 0.0)) { /* k^-alpha below DBL_TRUE_MIN */
        dpc_nu_setup_free(out);
        return dpc_error_param(err, DPC_E_INVALID, "alpha",
                               "%g: the eigenvalue d^-alpha = %zu^-%g underflows to 0", p->alpha,
                               p->d, p->alpha);
    }
    int sc = p->problem == DPC_NU_PROBLEM_SC || p->model == DPC_SIM_LOGCOSH;
    out->lambda_min = sc ? p->mu : lmin;
    /* Theorem 2.2's nu = eta lambda_min; the clamp keeps nu-FTRL's coefficients summable */
    out->nu = fmin(p->eta * out->lambda_min, p->nu_max);
    out->problem = (dpc_theory_problem){p->eta, p->rho, p->G, p->sigma_sgd, out->d, out->lambda};
    out->sc = (dpc_theory_sc){p->mu, p->L, p->eta, p->rho, p->G, p->sigma_sgd, out->d, p->tmax};
    if (b && (st = with_beta(out, p, b, err))) {
        dpc_nu_setup_free(out);
        return st;
    }
    return DPC_OK;
}

void dpc_nu_setup_free(dpc_nu_setup *s)
{
    if (!s) return;
    free(s->lambda);
    free(s->beta);
    memset(s, 0, sizeof *s);
}
