/* repro_nu_sim.c — one simulation point for the nu-DP-FTRL targets. */
#include "repro.h"

#include <math.h>
#include <stdlib.h>

int nu_simulate(repro_ctx *c, dpc_sim_model model, const dpc_theory_beta *b, double eta,
                size_t d, const double *lam, size_t burn_in, size_t steps, uint64_t salt,
                nu_sim_point *out)
{
    dpc_error err = {0};
    double t0 = repro_now(), g2;
    dpc_theory_problem p = {eta, 0.5, 1.0, 0.0, d, lam};
    dpc_theory_lti l;
    if (dpc_theory_gamma_inf2(b, &g2, &err) ||
        dpc_theory_lti_error(&p, b, DPC_THEORY_QUADRATURE, &l, &err)) {
        fprintf(stderr, "dpcorr repro: %s\n", err.msg);
        return 1;
    }
    size_t len = dpc_theory_beta_len_for_tail(b, 1e-8, 1);
    if (len == 0) {
        fprintf(stderr, "dpcorr repro: coefficients do not decay (gamma_inf = inf)\n");
        return 1;
    }
    double *beta = malloc(len * sizeof *beta);
    if (!beta) return 1;
    dpc_theory_beta_coeffs(b, beta, len);
    dpc_sim_config sc;
    dpc_sim_config_init(&sc);
    sc.model = model;
    sc.eta = eta;
    sc.sigma = sqrt(g2);
    sc.d = d;
    sc.lambda = lam;
    sc.burn_in = burn_in;
    sc.steps = steps;
    sc.seed = c->o->seed + salt;
    sc.beta = beta;
    sc.len = len;
    sc.memory_budget = (size_t)1 << 30;
    dpc_sim_result r;
    int rc = 0;
    if (dpc_sim_run(&sc, &r, &err)) {
        fprintf(stderr, "dpcorr repro: simulation: %s\n", err.msg);
        rc = 1;
    } else {
        out->mean = r.mean;
        out->se = r.stderr_;
        out->theory = l.v0;
        out->steps = r.steps;
        out->burn_in = r.burn_in;
        out->len = len;
        out->tail = dpc_theory_beta_tail(b, len);
        out->seconds = repro_now() - t0;
        out->seed = sc.seed;
    }
    free(beta);
    return rc;
}
