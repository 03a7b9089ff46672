/* private_sgd.c — private SGD in your own loop, without a trainer configuration: the library
 * (dpcorr/privatize.h) draws each step's batch, calibrates and adds the correlated noise, and
 * keeps the ledger; your code computes the clipped gradient sum of the batch and hands the
 * noised mean to its own optimizer.
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
    /* the run: 3 epochs of batches of 100 under (2, 1e-5)-DP with the default BLT; the
     * library samples, calibrates, noises and accounts (dpcorr/privatize.h) */
    dpc_privatize_config cfg;
    dpc_privatize_config_init(&cfg); /* mechanism: the run's default BLT */
    cfg.dim = P;
    cfg.n_examples = N;
    cfg.batch = 100;
    cfg.epochs = 3;
    cfg.epsilon = 2.0;
    cfg.delta = 1e-5;
    cfg.clip = 1.0;
    dpc_privatizer *pv = NULL;
    if (dpc_privatize_new(&pv, &cfg, &rng, &err)) {
        fprintf(stderr, "privatize: %s: %s\n", err.field, err.msg);
        return 1;
    }
    size_t *idx = malloc(dpc_privatize_max_batch(pv) * sizeof *idx);
    double w[P] = {0}, g[P], lr = 0.5;
    int rc = idx ? 0 : 1;
    while (!rc && dpc_privatize_steps_done(pv) < dpc_privatize_steps_total(pv)) {
        size_t m = 0;
        if (dpc_privatize_batch(pv, idx, &m, &err)) { /* the records of this step */
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
        if (dpc_privatize_step(pv, g, g, &err)) { /* g becomes the noised mean gradient */
            rc = 1;
            break;
        }
        for (size_t j = 0; j < P; j++) w[j] -= lr * g[j]; /* your optimizer (plain SGD) */
    }
    const dpc_ledger *L = dpc_privatize_ledger(pv);
    if (!rc && !(L->epsilon <= cfg.epsilon * (1 + 1e-9))) { /* the example checks itself */
        fprintf(stderr, "private_sgd: epsilon %g above the target %g\n", L->epsilon, cfg.epsilon);
        rc = 1;
    } else if (rc) fprintf(stderr, "step: %s: %s\n", err.field, err.msg);
    else
        printf("private_sgd: %zu steps, %s, z %.5f, (%.4g, %g)-DP by %s; w[0] %.3f\n", L->steps,
               L->mechanism, L->noise_multiplier, L->epsilon, L->delta, L->accountant, w[0]);
    free(idx);
    dpc_privatize_free(pv);
    return rc;
}
