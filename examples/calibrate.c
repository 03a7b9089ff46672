/* calibrate.c — calibrate and account a planned run: the library plans it (the trainer's own
 * decisions for N records), then the same run is accounted independently through the mechanism
 * API and must give the plan's epsilon at the plan's noise multiplier. */
#include <dpcorr.h>

#include <math.h>
#include <stdio.h>

int main(void)
{
    dpc_error err = {0};
    dpc_rng rng;
    dpc_rng_seed(&rng, 1);
    dpc_train_config cfg;
    dpc_train_config_init(&cfg);
    cfg.batch = 500; /* N = 60000: 120 steps per epoch */
    cfg.epochs = 4;
    cfg.epsilon = 3.0;
    cfg.delta = 1e-6;
    cfg.mech.kind = DPC_MECH_BSR; /* bands 0: the library's default for the run */
    cfg.momentum = 0.9;
    dpc_train_plan *plan = NULL;
    if (dpc_train_plan_new(&plan, &cfg, 60000, &rng, &err)) {
        fprintf(stderr, "plan: %s: %s\n", err.field, err.msg);
        return 1;
    }
    const dpc_ledger *L = dpc_train_plan_ledger(plan);
    printf("calibrate: %s, %zu steps, %s sampler: z = %.6f for (%g, %g)-DP (%s, %s)\n",
           L->mechanism, L->steps, L->sampler, L->noise_multiplier, L->epsilon, L->delta,
           L->accountant, L->route);
    /* the same run (fixed-order epochs: k = 4 participations exactly 120 steps apart) accounted
     * by hand at the plan's z */
    dpc_mech_run run = {dpc_train_plan_mech(plan), {DPC_PART_CYCLIC, cfg.epochs, L->steps_per_epoch},
                        1.0, 0, NULL, 0};
    dpc_account_opts o;
    dpc_account_opts_init(&o, DPC_ACCOUNTANT_GDP);
    dpc_account_result res;
    dpc_account_mech_info info;
    if (dpc_account_mech_epsilon(&run, L->noise_multiplier, &o, L->delta, &res, &info, &err)) {
        fprintf(stderr, "account: %s: %s\n", err.field, err.msg);
        dpc_train_plan_free(plan);
        return 1;
    }
    int same = fabs(res.epsilon - L->epsilon) <= 1e-9 * L->epsilon;
    printf("calibrate: accounted again: epsilon %.9g (plan %.9g): %s\n", res.epsilon, L->epsilon,
           same ? "same" : "DIFFERENT");
    for (size_t t = L->steps_per_epoch; t <= L->steps; t += L->steps_per_epoch) {
        double e = 0;
        if (dpc_train_plan_epsilon_at(plan, t, &e, &err) == DPC_OK)
            printf("  after epoch %zu: epsilon %.4f\n", t / L->steps_per_epoch, e);
    }
    dpc_train_plan_free(plan);
    return same ? 0 : 1;
}
