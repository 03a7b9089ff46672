/* repro_nu_sim.c — one simulation point for the nu-DP-FTRL targets: the setup (spectrum, sigma,
 * burn-in, truncated beta) is the library's (dpc_nu_setup_make), as for `dpcorr theory`. */
#include "repro.h"

#include <math.h>
#include <stdlib.h>

int nu_simulate(repro_ctx *c, const dpc_nu_setup_params *sp, const dpc_theory_beta *b,
                uint64_t salt, nu_sim_point *out)
{
    dpc_error err = {0};
    double t0 = repro_now();
    dpc_nu_setup_params p = *sp;
    p.seed = c->o->seed + salt;
    p.memory_budget = (size_t)1 << 30;
    dpc_nu_setup su;
    dpc_theory_lti l;
    if (dpc_nu_setup_make(&su, &p, b, &err)) {
        fprintf(stderr, "dpcorr repro: %s\n", err.msg);
        return 1;
    }
    if (dpc_theory_lti_error(&su.problem, b, DPC_THEORY_QUADRATURE, &l, &err)) {
        fprintf(stderr, "dpcorr repro: %s\n", err.msg);
        dpc_nu_setup_free(&su);
        return 1;
    }
    dpc_sim_result r;
    int rc = 0;
    if (dpc_sim_run(&su.sim, &r, &err)) {
        fprintf(stderr, "dpcorr repro: simulation: %s\n", err.msg);
        rc = 1;
    } else {
        out->mean = r.mean;
        out->se = r.stderr_;
        out->theory = l.v0;
        out->steps = r.steps;
        out->burn_in = r.burn_in;
        out->len = su.len;
        out->tail = dpc_theory_beta_tail(b, su.len);
        out->seconds = repro_now() - t0;
        out->seed = su.sim.seed;
    }
    dpc_nu_setup_free(&su);
    return rc;
}
