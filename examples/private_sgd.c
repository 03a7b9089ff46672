/* private_sgd.c — private SGD in your own loop: the library plans the run (sampler, mechanism,
 * calibrated noise, ledger); your code computes the clipped gradient sum of each batch and
 * hands it to its own optimizer after adding the library's correlated noise.
 *
 * Model: least squares y ~ <w, x> on N synthetic records, P parameters, clip norm 1. */
#include <dpcorr.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define N 2000
#define P 8

static double X[N][P], Y[N];

int main(void)
{
    dpc_error err = {0};
    dpc_rng rng;
    dpc_rng_seed(&rng, 7); /* seeded: reproducible example; real releases use dpc_rng_seed_os */
    for (size_t i = 0; i < N; i++) { /* data: y = sum_j x_j / P + small noise */
        Y[i] = 0;
        for (size_t j = 0; j < P; j++) {
            X[i][j] = (double)((i * 31 + j * 17) % 101) / 50.0 - 1.0;
            Y[i] += X[i][j] / P;
        }
    }
    /* the run: 3 epochs of batches of 100 under (2, 1e-5)-DP with the default BLT */
    dpc_train_config cfg;
    dpc_train_config_init(&cfg);
    cfg.batch = 100;
    cfg.epochs = 3;
    cfg.epsilon = 2.0;
    cfg.delta = 1e-5;
    cfg.clip = 1.0;
    cfg.mech.kind = DPC_MECH_BLT; /* no theta/omega: the library optimizes the run's BLT */
    dpc_train_plan *plan = NULL;
    if (dpc_train_plan_new(&plan, &cfg, N, &rng, &err)) {
        fprintf(stderr, "plan: %s: %s\n", err.field, err.msg);
        return 1;
    }
    /* the correlated noise (B Z)_t over the P coordinates, from the plan's noise stream */
    dpc_noise_config nc;
    dpc_noise_config_init(&nc, P);
    dpc_rng_stream stream = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_NOISE, 0));
    dpc_noise *noise = NULL;
    if (dpc_noise_new(&noise, dpc_train_plan_mech(plan), &stream, &nc, &err)) {
        fprintf(stderr, "noise: %s: %s\n", err.field, err.msg);
        dpc_train_plan_free(plan);
        return 1;
    }
    const dpc_sampler *sampler = dpc_train_plan_sampler(plan);
    const dpc_ledger *L = dpc_train_plan_ledger(plan);
    size_t *idx = malloc(dpc_sampler_max_batch(sampler) * sizeof *idx);
    double w[P] = {0}, g[P], z[P];
    double scale = dpc_train_plan_noise_scale(plan), lr = 0.5;
    int rc = idx ? 0 : 1;
    for (size_t t = 0; !rc && t < L->steps; t++) {
        size_t m = 0;
        if (dpc_sampler_batch(sampler, t, idx, &m, &err) || dpc_noise_next(noise, z, &err)) {
            rc = 1;
            break;
        }
        for (size_t j = 0; j < P; j++) g[j] = 0;
        for (size_t b = 0; b < m; b++) { /* your gradients, clipped to norm <= clip */
            const double *x = X[idx[b]];
            double r = -Y[idx[b]], nrm = 0, gi[P];
            for (size_t j = 0; j < P; j++) r += w[j] * x[j];
            for (size_t j = 0; j < P; j++) {
                gi[j] = r * x[j];
                nrm += gi[j] * gi[j];
            }
            double f = sqrt(nrm) > cfg.clip ? cfg.clip / sqrt(nrm) : 1.0;
            for (size_t j = 0; j < P; j++) g[j] += f * gi[j];
        }
        for (size_t j = 0; j < P; j++) /* noised update, then your optimizer (plain SGD) */
            w[j] -= lr * (g[j] + scale * z[j]) / L->expected_batch;
    }
    if (rc) fprintf(stderr, "step: %s: %s\n", err.field, err.msg);
    else
        printf("private_sgd: %zu steps, %s, z %.5f, (%.4g, %g)-DP by %s; w[0] %.3f\n", L->steps,
               L->mechanism, L->noise_multiplier, L->epsilon, L->delta, L->accountant, w[0]);
    free(idx);
    dpc_noise_free(noise);
    dpc_train_plan_free(plan);
    return rc;
}
