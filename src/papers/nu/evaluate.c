/* evaluate.c — what the theory says about one beta on a setup's problem (dpcorr/papers/sim.h):
 * V0 by both routes, the LTI optimum, the random-design bounds, the Table 1 rates, or the
 * Theorem 3.1 bound and its optimum; decided here for `dpcorr theory` and the repro targets. */
#include "dpcorr/papers/sim.h"

#include <math.h>
#include <string.h>

dpc_status dpc_nu_bounds_gaussian(const dpc_theory_problem *p, const dpc_theory_beta *b,
                                  dpc_theory_bounds *out, dpc_error *err)
{
    if (!p || !p->lambda) return dpc_error_param(err, DPC_E_INVALID, "problem", "NULL");
    double tr = 0, lmax = p->lambda[0];
    for (size_t j = 0; j < p->d; j++) tr += p->lambda[j];
    for (size_t j = 0; j < p->d; j++) lmax = fmax(lmax, p->lambda[j]);
    return dpc_theory_lti_bounds(p, b, tr + 2 * lmax, 3.0, out, err);
}

dpc_status dpc_nu_evaluate(const dpc_nu_setup_params *p, const dpc_nu_setup *su,
                           const dpc_theory_beta *b, dpc_nu_eval *out, dpc_error *err)
{
    if (!p || !su || !b || !out)
        return dpc_error_param(err, DPC_E_INVALID, !p ? "params" : !su ? "setup" : !b ? "beta"
                               : "out", "NULL");
    memset(out, 0, sizeof *out);
    out->mean_opt = out->ratio_R = NAN;
    dpc_status st;
    if (p->problem == DPC_NU_PROBLEM_SC) {
        dpc_theory_sc sp = su->sc;
        out->sc_opt = (dpc_theory_sc_result){NAN, NAN, NAN, 0};
        if ((st = dpc_theory_sc_bound(&sp, b, &out->sc, err))) return st;
        dpc_error e2 = {0}; /* the optimum is over the noise only: without data noise */
        out->have_sc_opt = p->sigma_sgd == 0.0 && !dpc_theory_sc_optimized(&sp, &out->sc_opt, &e2);
        return DPC_OK;
    }
    const dpc_theory_problem *pb = &su->problem;
    dpc_error e2 = {0};
    out->series_ok = !dpc_theory_lti_error(pb, b, DPC_THEORY_SERIES, &out->series, &e2);
    if ((st = dpc_theory_lti_error(pb, b, DPC_THEORY_QUADRATURE, &out->quadrature, err)) ||
        (st = dpc_theory_lti_opt(pb, &out->lti_opt, err)) ||
        (st = dpc_nu_bounds_gaussian(pb, b, &out->bounds, err)) ||
        (st = dpc_theory_rates_of(pb, &out->rates, err)))
        return st;
    if (p->problem == DPC_NU_PROBLEM_MEAN) {
        out->mean_opt = dpc_theory_mean_opt(p->eta, p->rho, p->G, p->sigma_sgd);
        out->ratio_R = dpc_theory_mean_ratio(p->eta);
    }
    return DPC_OK;
}
