/* bench_train.c — training throughput (examples/s) of the MLP 784-256-10 on Fashion-MNIST-shaped
 * data, for DP-SGD and for correlated-noise mechanisms (BLT, nu-DP-FTRL), with 1 and 2 threads.
 * Data: synthetic logistic-style inputs of Fashion-MNIST's shape (the loader is not timed). */
#include "bench_util.h"
#include "dpcorr/train.h"

#include <stdlib.h>

typedef struct bcase {
    const char *name;
    dpc_mech_kind kind;
    dpc_sampler_kind sampler;
    double nu;
} bcase;

int main(void)
{
    bench_machine();
    dpc_rng rng;
    dpc_rng_seed(&rng, 1);
    dpc_error err = {0};
    size_t N = 20000, D = 784, K = 10;
    dpc_dataset *ds = NULL;
    if (dpc_dataset_new(&ds, N, D, K, &err)) return 1;
    dpc_rng_stream s = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_TEST, 9));
    for (size_t i = 0; i < N; i++) {
        dpc_rng_gaussian_fill(&s, i, 0, ds->x + i * D, D);
        for (size_t j = 0; j < D; j++) ds->x[i * D + j] = 0.5 + 0.25 * ds->x[i * D + j];
        ds->y[i] = (double)dpc_rng_below(&s, N + i, 0, K);
    }
    dpc_model_config mc;
    dpc_model *m = NULL;
    if (dpc_model_parse(&mc, "mlp:256:tanh", D, K, &err) || dpc_model_new(&m, &mc, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    static const double th[4] = {0.999, 0.99, 0.9, 0.5}, om[4] = {0.01, 0.05, 0.1, 0.2};
    bcase cases[] = {
        {"DP-SGD (Poisson)", DPC_MECH_IDENTITY, DPC_SAMPLER_POISSON, 0},
        {"BLT k=4 (fixed order)", DPC_MECH_BLT, DPC_SAMPLER_FIXED, 0},
        {"nu-DP-FTRL nu=0.01 (fixed)", DPC_MECH_NU, DPC_SAMPLER_FIXED, 0.01},
    };
    printf("\n== training throughput, MLP 784-256-10 (P = %zu), batch 500, %zu examples\n",
           dpc_model_num_params(m), N);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        double eps1 = 0;
        for (size_t T = 1; T <= 2; T++) {
            dpc_train_config cfg;
            dpc_train_config_init(&cfg);
            cfg.mech.kind = cases[c].kind;
            cfg.mech.nu = cases[c].nu;
            if (cases[c].kind == DPC_MECH_BLT) {
                cfg.mech.nbuf = 4;
                cfg.mech.theta = th;
                cfg.mech.omega = om;
            }
            cfg.sampler = cases[c].sampler;
            cfg.batch = 500;
            cfg.epochs = 1;
            cfg.epsilon = 3;
            cfg.accountant = DPC_ACCOUNTANT_RDP;
            cfg.threads = T;
            dpc_trainer *tr = NULL;
            if (dpc_trainer_new(&tr, m, ds, NULL, &cfg, &rng, &err)) {
                fprintf(stderr, "%s: %s\n", cases[c].name, err.msg);
                return 1;
            }
            size_t steps = 12, ex = 0;
            dpc_step_info info;
            if (dpc_trainer_step(tr, &info, &err)) return 1; /* warm-up (page faults) */
            double t = bench_now();
            for (size_t k = 0; k < steps; k++) {
                if (dpc_trainer_step(tr, &info, &err)) {
                    fprintf(stderr, "%s\n", err.msg);
                    return 1;
                }
                ex += info.batch;
            }
            t = bench_now() - t;
            double eps = (double)ex / t;
            if (T == 1) eps1 = eps;
            printf("%-28s %zu thread%s %9.0f examples/s  %6.1f ms/step%s\n", cases[c].name, T,
                   T > 1 ? "s" : " ", eps, 1e3 * t / (double)steps,
                   T > 1 ? "" : "");
            if (T == 2) printf("%-28s speed-up 2 vs 1 thread: %.2fx\n", "", eps / eps1);
            dpc_trainer_free(tr);
        }
    }
    dpc_model_free(m);
    dpc_dataset_free(ds);
    return 0;
}
