/* evaluate.c — what the theory says about one beta on a setup's problem (dpcorr/papers/sim.h):
 * V0 by both routes, the LTI optimum, the random-design bounds, the Table 1 rates, or the
 * Theorem 3.1 bound and its optimum; decided here for `dpcorr theory` and the repro targets. */
#include "dpcorr/io.h"
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

static void sc_json(dpc_json_writer *w, const dpc_nu_setup_params *p, double g2,
                    const dpc_nu_eval *ev)
{
    dpc_json_num(w, "kappa", p->L / p->mu);
    dpc_json_num(w, "gamma_inf2", g2);
    dpc_json_num(w, "bound_F", ev->sc.value);
    dpc_json_num(w, "bound_dist2", ev->sc.dist);
    dpc_json_num(w, "optimized_bound_F", ev->have_sc_opt ? ev->sc_opt.value : NAN);
}

static void sim_json(dpc_json_writer *w, const dpc_nu_setup_params *p, const dpc_sim_result *r)
{
    dpc_json_str(w, "sim_design", dpc_sim_model_name(p->model));
    dpc_json_num(w, "sim_mean", r->mean);
    dpc_json_num(w, "sim_stderr", r->stderr_);
    dpc_json_int(w, "sim_steps", (long long)r->steps);
    dpc_json_int(w, "sim_burn_in", (long long)r->burn_in);
    dpc_json_int(w, "sim_seed", (long long)r->seed);
}

void dpc_nu_eval_json(dpc_json_writer *w, const dpc_nu_setup_params *p, const dpc_nu_setup *su,
                      const char *mechanism, double g2, const dpc_nu_eval *ev,
                      const dpc_sim_result *sim)
{
    static const char *const problems[] = {"lti", "mean", "sc"};
    if (!w || !p || !su || !ev) return;
    int mean = p->problem == DPC_NU_PROBLEM_MEAN;
    dpc_json_str(w, "problem", problems[p->problem <= DPC_NU_PROBLEM_SC ? p->problem : 0]);
    dpc_json_str(w, "mechanism", mechanism ? mechanism : "");
    if (p->problem == DPC_NU_PROBLEM_SC) {
        sc_json(w, p, g2, ev);
        return;
    }
    dpc_json_int(w, "d", (long long)su->d);
    dpc_json_num(w, "alpha", p->alpha);
    dpc_json_num(w, "eta", p->eta);
    dpc_json_num(w, "rho", p->rho);
    dpc_json_num(w, "d_eff", ev->rates.d_eff);
    dpc_json_num(w, "gamma_inf2", g2);
    dpc_json_num(w, "v0", ev->quadrature.v0);
    dpc_json_num(w, "v0_series", ev->series_ok ? ev->series.v0 : NAN);
    dpc_json_num(w, "v0_sgd_noise", ev->quadrature.v0_sgd);
    dpc_json_num(w, "lti_opt", ev->lti_opt);
    if (mean) {
        dpc_json_num(w, "mean_opt", ev->mean_opt);
        dpc_json_num(w, "ratio_R", ev->ratio_R);
    }
    dpc_json_num(w, "lower_universal", ev->bounds.lower_universal);
    dpc_json_num(w, "lower_c18", ev->bounds.lower_freq);
    dpc_json_num(w, "upper_c14", ev->bounds.upper_time);
    dpc_json_num(w, "upper_c15", ev->bounds.upper_freq);
    dpc_json_num(w, "sandwich_upper", ev->bounds.sandwich_upper);
    dpc_json_num(w, "rate_sgd", ev->rates.sgd);
    dpc_json_num(w, "rate_ftrl", ev->rates.ftrl);
    dpc_json_num(w, "rate_lower", ev->rates.lower);
    if (sim) sim_json(w, p, sim);
}
