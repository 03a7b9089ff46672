/* repro_fig3.c — nu-DP-FTRL Figure 3 (dpcorr/papers/nu_repro.h): the Theorem 3.1 / E.1 bounds
 * over the kappa grid and the log-cosh simulations below them. */
#include "common/util.h"
#include "dpcorr/papers/nu_repro.h"

#include <math.h>
#include <stdlib.h>

/* The library's setup of the log-cosh problem at kappa = 1/mu (L = G = 1, eta = 1/L, d = 1;
 * rho and, for a simulation, its steps): nu, and with b the noise std, burn-in (20 correlation
 * times) and the beta truncated at a 1e-10 tail. */
static dpc_status fig3_setup(dpc_nu_setup *su, double mu, double rho, size_t steps,
                             const dpc_theory_beta *b, dpc_error *err)
{
    dpc_nu_setup_params sp;
    dpc_nu_setup_params_init(&sp);
    sp.problem = DPC_NU_PROBLEM_SC;
    sp.model = DPC_SIM_LOGCOSH;
    sp.d = 1;
    sp.mu = mu;
    sp.L = 1.0;
    sp.eta = 1.0;
    sp.rho = rho;
    sp.steps = steps;
    sp.burn_in_scale = 20.0;
    sp.tail = 1e-10;
    return dpc_nu_setup_make(su, &sp, b, err);
}

/* The bounds of DP-SGD, nu-DP-FTRL and Optimized at grid point i. */
static dpc_status bounds(dpc_nu_fig3_result *g, size_t i, dpc_error *err)
{
    g->kappa[i] = pow(10.0, 3.0 * (double)i / (double)(g->nk - 1));
    double mu = g->mu[i] = 1.0 / g->kappa[i];
    dpc_theory_sc p = {mu, 1.0, 1.0, 0.5, 1.0, 0.0, 1, g->tmax};
    dpc_nu_setup su; /* Theorem 2.2's nu = eta mu (eta = 1), the library's rule and clamp */
    dpc_status st = fig3_setup(&su, mu, 0.5, 0, NULL, err);
    if (st) return st;
    dpc_theory_beta bs = dpc_theory_beta_sgd(), bn = dpc_theory_beta_nu(su.nu);
    dpc_nu_setup_free(&su);
    dpc_theory_sc_result rs, rn, ro, ro0;
    if ((st = dpc_theory_sc_bound(&p, &bs, &rs, err)) || (st = dpc_theory_sc_bound(&p, &bn, &rn, err)) ||
        (st = dpc_theory_sc_optimized(&p, &ro, err)))
        return st;
    p.tmax = 0;
    if ((st = dpc_theory_sc_optimized(&p, &ro0, err))) return st;
    g->bound_sgd[i] = rs.value;
    g->bound_nu[i] = rn.value;
    g->bound_opt[i] = ro.value;
    g->bound_opt0[i] = ro0.value;
    return DPC_OK;
}

/* One simulation of the log-cosh problem: kappa, mechanism m (0 SGD, 1 nu), seed salt k. */
static dpc_status simulate(dpc_nu_fig3_result *g, const dpc_nu_repro_params *rp, double kappa,
                           int m, int k, dpc_nu_fig3_sim *out, dpc_error *err)
{
    double mu = 1.0 / kappa;
    dpc_theory_beta b = m ? dpc_theory_beta_nu(mu) : dpc_theory_beta_sgd();
    dpc_theory_sc p = {mu, 1.0, 1.0, 0.5, 1.0, 0.0, 1, g->tmax};
    dpc_theory_sc_result br;
    dpc_status st = dpc_theory_sc_bound(&p, &b, &br, err);
    if (st) return st;
    dpc_nu_setup su; /* noise std at rho_sim, burn-in and truncation: the library's setup */
    size_t steps = rp->scale == DPC_NU_REPRO_SMOKE ? 20000
                   : rp->scale == DPC_NU_REPRO_QUICK ? 200000 : 2000000;
    if ((st = fig3_setup(&su, mu, g->rho_sim, steps, &b, err))) return st;
    su.sim.seed = rp->seed + 300 + (uint64_t)(2 * k + m);
    dpc_sim_result r;
    st = dpc_sim_run(&su.sim, &r, err);
    dpc_nu_setup_free(&su);
    if (st) return st;
    *out = (dpc_nu_fig3_sim){kappa, m, r.gap, r.gap_stderr, br.value * (0.5 / g->rho_sim), r.steps,
                             r.seed};
    if (r.gap > out->bound) g->below = 0;
    return DPC_OK;
}

static const char *const FIG3_YES[] = {
    "Figure 3: ordering DP-SGD > nu-DP-FTRL > Optimized, the multiplicative gap widening with "
    "kappa, Optimized growing slowest (shape; the paper prints no numbers)"};
static const char *const FIG3_NO[] = {
    "absolute values: eta is not stated and the paper's constants (eq. 10 vs Sec. E.1) "
    "disagree; we use eta = 1/L and the constant convention of doc/theory.md",
    "the paper solves an SOCP on a uniform k = 1000 grid; we minimise the same bound over "
    "symmetric Zames-Falb multipliers with a graded quadrature (a valid, possibly looser, bound)"};

static dpc_status run(dpc_nu_fig3_result *g, const dpc_nu_repro_params *p, dpc_error *err)
{
    int quick = p->scale != DPC_NU_REPRO_FULL;
    g->nk = quick ? 7 : 13;
    g->tmax = quick ? 2 : 6;
    g->below = 1;
    g->rho_sim = 50.0;
    dpc_status st = DPC_OK;
    for (size_t i = 0; i < g->nk && !st; i++) st = bounds(g, i, err);
    static const double skap[2] = {10.0, 100.0};
    for (int k = 0; k < 2 && !st; k++)
        for (int m = 0; m < 2 && !st; m++) st = simulate(g, p, skap[k], m, k, &g->sims[2 * k + m], err);
    if (st) return st;
    size_t nk = g->nk;
    g->ratio_mid = g->bound_sgd[nk / 2] / g->bound_nu[nk / 2];
    g->ratio_max = g->bound_sgd[nk - 1] / g->bound_nu[nk - 1];
    g->ordering = g->bound_sgd[nk - 1] > g->bound_nu[nk - 1] && g->bound_nu[nk - 1] > g->bound_opt[nk - 1];
    g->claims = (dpc_nu_repro_claims){FIG3_YES, 1, FIG3_NO, 2};
    return DPC_OK;
}

dpc_status dpc_nu_fig3_run(const dpc_nu_repro_params *p, dpc_nu_fig3_result **out, dpc_error *err)
{
    if (!out) return dpc_error_param(err, DPC_E_INVALID, "out", "NULL");
    *out = NULL;
    if (!p) return dpc_error_param(err, DPC_E_INVALID, "params", "NULL");
    dpc_status cst = dpc_field_check(dpc_nu_repro_params_fields(), p, err); /* the scale */
    if (cst) return cst;
    dpc_nu_fig3_result *g = calloc(1, sizeof *g);
    if (!g) return DPC__NOMEM(err, "the Figure 3 result");
    dpc_status st = run(g, p, err);
    if (st) {
        free(g);
        return st;
    }
    *out = g;
    return DPC_OK;
}

void dpc_nu_fig3_free(dpc_nu_fig3_result *r) { free(r); }
