/* dpcorr/privatize.h — a private step in your own training loop.
 *
 * For a C program that computes its own per-example gradients (its own model, its own
 * optimizer) and wants the library's privacy: batch selection, correlated noise calibrated to a
 * budget, and the ledger that says what was released. No trainer configuration: one struct of
 * privacy and sampling parameters, validated before any work.
 *
 *     dpc_privatize_config cfg;
 *     dpc_privatize_config_init(&cfg);
 *     cfg.dim = P; cfg.n_examples = N; cfg.batch = 100; cfg.epochs = 3;
 *     cfg.epsilon = 2; cfg.clip = 1;                       (mechanism: the default BLT)
 *     dpc_privatizer *pv;  dpc_privatize_new(&pv, &cfg, &rng, &err);
 *     size_t *idx = malloc(dpc_privatize_max_batch(pv) * sizeof *idx), m;
 *     while (dpc_privatize_steps_done(pv) < dpc_privatize_steps_total(pv)) {
 *         dpc_privatize_batch(pv, idx, &m, &err);       the records of this step
 *         ... g = sum over idx[0..m) of min(1, clip / ||g_i||) g_i   (your code)
 *         dpc_privatize_step(pv, g, h, &err);           h = the noised mean gradient
 *         ... w -= lr * h                               (your optimizer: post-processing)
 *     }
 *     dpc_privatize_ledger(pv)->epsilon                 what the whole run releases
 *
 * What it computes, for step t = 0 .. n-1 (exactly what dpc_trainer_step does with a model):
 *     I_t = dpc_sampler_batch(sampler, t)
 *     h_t = (g_t + noise_scale (B Z)_t) x (1 / expected_batch)
 * with the mechanism's noise (B Z)_t over the dim coordinates (dpc_noise, stream
 * DPC_STREAM_ID(DPC_STREAM_NOISE, 0) of the rng), noise_scale = clip x the ledger's noise_std.
 * The decisions (sampler, default mechanism, bands, noise multiplier, accountant, delta, ledger)
 * are made by dpc_train_plan_new, the code dpc_trainer_new runs: the same parameters, N and rng
 * give the trainer's noise multiplier and ledger (tests/test_privatize.c compares them).
 *
 * The guarantee holds when the code between dpc_privatize_batch and dpc_privatize_step uses
 * only the records of the batch, each through its gradient clipped to norm clip, and adds them
 * once. The object refuses what it can see: a step without this step's batch drawn, a second
 * step on one batch, a non-finite gradient sum (naming the coordinate), a sum no clipped batch can
 * produce (norm above count x clip, with a stated rounding allowance), a never-seeded or
 * invalid rng (dpc_rng_check), steps past the run; every accessor answers a NULL handle.
 *
 * One object per run; not safe for concurrent use (use one per thread). */
#ifndef DPCORR_PRIVATIZE_H
#define DPCORR_PRIVATIZE_H

#include "dpcorr/account.h"
#include "dpcorr/field.h"
#include "dpcorr/mech.h"
#include "dpcorr/rng.h"
#include "dpcorr/sampler.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dpc_privatize_config {
    size_t dim;              /* P >= 1: coordinates of the gradient sums */
    size_t n_examples;       /* N >= 1: records of the training set */
    size_t batch;            /* (expected) batch size B, 1 <= B <= N */
    size_t epochs;           /* n = epochs x steps per epoch (Poisson: N / B per epoch) */
    /* privacy: exactly one of epsilon (calibrate the noise) and noise_multiplier (given) */
    double epsilon;          /* target epsilon > 0, or 0 to use noise_multiplier */
    double delta;            /* in (0, 1/N), or 0 (default): dpc_account_default_delta(N) */
    double noise_multiplier; /* z > 0 when epsilon = 0 (the ledger then reports its epsilon) */
    double clip;             /* the L2 norm each per-example gradient is clipped to (> 0) */
    /* mechanism: kind BLT without theta/omega (default) = the library's default BLT for the
     * run; BSR/BISR bands 0 = the default bands; every other kind as dpc_mech_params (steps is
     * set from the run). BSR/BISR's workload momentum/decay are taken as given. */
    dpc_mech_params mech;
    dpc_sampler_kind sampler;   /* AUTO (default): Poisson for the identity, fixed-order epochs
                                   otherwise (dpc_train_config_resolve) */
    size_t groups;              /* cyclic Poisson: number of groups (0 = the strategy's bands) */
    dpc_accountant accountant;  /* default dpc_account_default_accountant() (PLD) */
    dpc_isa isa;                /* the noise generator's level (AUTO: the best this CPU runs) */
} dpc_privatize_config;

/* Defaults: mechanism BLT (the run's default BLT), sampler AUTO, epochs 1, clip 1, delta 0,
 * the default accountant, isa AUTO; dim, n_examples, batch and one of epsilon /
 * noise_multiplier must be set. */
DPC_API void dpc_privatize_config_init(dpc_privatize_config *cfg); /* NULL: nothing */

/* The field table of dpc_privatize_config (dpcorr/field.h): name, type, offset, default and
 * one-line doc of every field; dpc_privatize_config_init writes its defaults. The privacy,
 * sampling and mechanism fields are validated as dpc_train_config's (same names). */
DPC_API const dpc_field_table *dpc_privatize_config_fields(void);

typedef struct dpc_privatizer dpc_privatizer; /* opaque */

/* Validates cfg (fields named as above: "dim", "batch", "epsilon", "mech.nu", ...) and rng
 * (dpc_rng_check: DPC_E_INVALID naming "rng", "rng.mode", "rng.key" or "rng.skey" for a
 * generator dpc_rng_seed / dpc_rng_seed_os did not make, e.g. an all-zero one), plans the
 * run (calibrating the noise when epsilon is set: DPC_E_PRIVACY when the budget cannot be met)
 * and opens the noise stream. rng is copied (secure mode: dpc_rng_seed_os; a seed makes the
 * noise reproducible and is recorded in the ledger). The mechanism's arrays are copied. */
DPC_API DPC_NODISCARD dpc_status dpc_privatize_new(dpc_privatizer **out,
                                                   const dpc_privatize_config *cfg,
                                                   const dpc_rng *rng, dpc_error *err);
DPC_API void dpc_privatize_free(dpc_privatizer *pv);

/* The records of the current step t = dpc_privatize_steps_done: idx[0 .. *count) (increasing
 * for Poisson sampling), at most dpc_privatize_max_batch entries. Drawing it again gives the
 * same batch. DPC_E_RANGE when all steps are done. */
DPC_API DPC_NODISCARD dpc_status dpc_privatize_batch(dpc_privatizer *pv, size_t *idx,
                                                     size_t *count, dpc_error *err);

/* Step t: h (dim) = (clipped_sum + noise_scale (B Z)_t) x (1 / expected_batch), then t + 1.
 * clipped_sum (dim) is the sum of the batch's clipped gradients (all zeros for an empty batch).
 * h may alias clipped_sum. Refused, with nothing released and t unchanged: before
 * dpc_privatize_batch drew step t's batch (DPC_E_STATE), a non-finite entry of clipped_sum
 * (DPC_E_NUMERIC naming the coordinate), a sum whose L2 norm exceeds count x clip x (1 + r),
 * count = the records dpc_privatize_batch returned for the step and r = (count + dim + 8) x
 * 2^-52 the rounding allowance (DPC_E_INVALID naming "clipped_sum"; r covers twice the
 * first-order rounding of clipping each gradient, summing them in any order and this norm, in
 * double precision: a sum accumulated in float32 may be refused), after the last step
 * (DPC_E_RANGE). An empty batch's sum must be all zeros. */
DPC_API DPC_NODISCARD dpc_status dpc_privatize_step(dpc_privatizer *pv, const double *clipped_sum,
                                                    double *h, dpc_error *err);

/* Steps released so far, the run's steps n, and the capacity dpc_privatize_batch's idx needs
 * (each 0 for a NULL pv). */
DPC_API size_t dpc_privatize_steps_done(const dpc_privatizer *pv);
DPC_API size_t dpc_privatize_steps_total(const dpc_privatizer *pv);
DPC_API size_t dpc_privatize_max_batch(const dpc_privatizer *pv);
/* clip x the ledger's noise_std: the std of each noise entry in gradient-sum units (NAN for a
 * NULL pv). */
DPC_API double dpc_privatize_noise_scale(const dpc_privatizer *pv);
/* The run's ledger (the whole run's epsilon); owned by pv (NULL for a NULL pv). */
DPC_API const dpc_ledger *dpc_privatize_ledger(const dpc_privatizer *pv);
/* Epsilon of what the steps done so far released (0 before the first step). */
DPC_API DPC_NODISCARD dpc_status dpc_privatize_epsilon_spent(const dpc_privatizer *pv,
                                                             double *eps, dpc_error *err);

#ifdef __cplusplus
}
#endif
#endif /* DPCORR_PRIVATIZE_H */
