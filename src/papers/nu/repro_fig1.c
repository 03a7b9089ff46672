/* repro_fig1.c — nu-DP-FTRL Figure 1 (dpcorr/papers/nu_repro.h): the mean-estimation ratio in
 * closed form and by simulation, beta*_t and |B*(w)|^2. */
#include "common/util.h"
#include "dpcorr/papers/nu_repro.h"

#include <math.h>
#include <stdlib.h>

/* Simulation at check point eta (index i): nu = eta against DP-SGD. */
static dpc_status simulate(const dpc_nu_repro_params *p, double eta, int i, dpc_nu_fig1_sim *s,
                           dpc_error *err)
{
    dpc_theory_beta bo = dpc_theory_beta_nu(eta), bs = dpc_theory_beta_sgd();
    dpc_nu_setup_params sp; /* mean estimation, burn-in 20 correlation times */
    dpc_nu_setup_params_init(&sp);
    sp.problem = DPC_NU_PROBLEM_MEAN;
    sp.eta = eta;
    sp.steps = p->scale == DPC_NU_REPRO_SMOKE ? 20000 : p->scale == DPC_NU_REPRO_QUICK ? 200000
                                                                                      : 2000000;
    sp.burn_in_scale = 20.0;
    sp.seed = p->seed + 100 + (uint64_t)i;
    dpc_status st = dpc_nu_simulate(&sp, &bo, &s->opt, err);
    sp.seed = p->seed + 200 + (uint64_t)i;
    if (st || (st = dpc_nu_simulate(&sp, &bs, &s->sgd, err))) return st;
    s->eta = eta;
    s->ratio = s->opt.mean / s->sgd.mean;
    s->ratio_se = s->ratio * sqrt(pow(s->opt.se / s->opt.mean, 2) + pow(s->sgd.se / s->sgd.mean, 2));
    s->ratio_theory = dpc_theory_mean_ratio(eta);
    return DPC_OK;
}

static const char *const FIG1_YES[] = {
    "Figure 1 left: ratio curve, closed form R(eta) (note 5.2) and Monte Carlo at eta = 0.5, 0.1, "
    "0.02",
    "Figure 1 middle: beta*_t = (-1)^t binom(1/2,t)(1-eta)^t",
    "Figure 1 right: |B*(omega)|^2 = |1 - eta - e^{i omega}|",
    "note 5.2 table: optimal and DP-SGD E delta^2 (within simulation error)"};
static const char *const FIG1_NO[] = {
    "caption claim 'orders of magnitude better as eta -> 1': R(1) = 1 exactly; R is symmetric "
    "under eta <-> 2 - eta and tends to 0 as eta -> 0 or 2 (note 5.2 discrepancy); not "
    "reproducible as stated",
    "the paper's plot has no numeric values: compared in shape only"};

static dpc_status run(dpc_nu_fig1_result *r, const dpc_nu_repro_params *p, dpc_error *err)
{
    for (int i = 0; i < DPC_NU_FIG1_RATIO; i++) {
        /* log-spaced on (1e-4, 1], mirrored onto (1, 2) */
        double e = i <= 60 ? pow(10.0, -4.0 + 4.0 * i / 60.0) : 2.0 - pow(10.0, -(double)(i - 60) / 5.0);
        r->eta[i] = e;
        r->ratio[i] = dpc_theory_mean_ratio(e);
        r->ftrl_opt[i] = dpc_theory_mean_opt(e, 0.5, 1, 0);
        r->sgd[i] = e / (2 - e);
    }
    static const double se[DPC_NU_FIG1_SIMS] = {0.5, 0.1, 0.02};
    for (int i = 0; i < DPC_NU_FIG1_SIMS; i++) {
        dpc_status st = simulate(p, se[i], i, &r->sims[i], err);
        if (st) return st;
        const dpc_nu_sim_point *po = &r->sims[i].opt;
        r->max_rel_dev = fmax(r->max_rel_dev, fabs(po->mean / po->theory - 1));
    }
    r->beta_eta[0] = 0.1;
    r->beta_eta[1] = 0.01;
    for (int k = 0; k < 2; k++) {
        dpc_theory_beta b = dpc_theory_beta_nu(r->beta_eta[k]);
        dpc_theory_beta_coeffs(&b, r->beta[k], DPC_NU_FIG1_BETA);
        for (int i = 0; i < DPC_NU_FIG1_OMEGA; i++) {
            r->omega[i] = -M_PI + 2 * M_PI * i / (DPC_NU_FIG1_OMEGA - 1);
            r->spectrum[k][i] = dpc_theory_beta_spectrum(&b, r->omega[i]);
        }
    }
    for (int t = 0; t < DPC_NU_FIG1_BETA; t++) r->t[t] = t;
    r->claims = (dpc_nu_repro_claims){FIG1_YES, 4, FIG1_NO, 2};
    return DPC_OK;
}

dpc_status dpc_nu_fig1_run(const dpc_nu_repro_params *p, dpc_nu_fig1_result **out, dpc_error *err)
{
    if (!out) return dpc_error_param(err, DPC_E_INVALID, "out", "NULL");
    *out = NULL;
    if (!p) return dpc_error_param(err, DPC_E_INVALID, "params", "NULL");
    dpc_status cst = dpc_field_check(dpc_nu_repro_params_fields(), p, err); /* the scale */
    if (cst) return cst;
    dpc_nu_fig1_result *r = calloc(1, sizeof *r);
    if (!r) return DPC__NOMEM(err, "the Figure 1 result");
    dpc_status st = run(r, p, err);
    if (st) {
        free(r);
        return st;
    }
    *out = r;
    return DPC_OK;
}

void dpc_nu_fig1_free(dpc_nu_fig1_result *r) { free(r); }
