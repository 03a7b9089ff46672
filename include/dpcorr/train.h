/* dpcorr/train.h — the DP trainer: data -> sampler -> model (per-example gradients) -> clip ->
 * mechanism (correlated noise) -> optimizer -> privacy ledger.
 *
 * One step t (DP-FTRL in the matrix-factorization view; DP-SGD is the identity mechanism):
 *     I_t      = sampler batch of step t                        (dpc_sampler)
 *     g_t      = sum_{i in I_t} min(1, clip/||g_i||) g_i        (dpc_model_clipped_sum)
 *     w_t      = sigma * clip * sens * (B Z)_t                  (dpc_noise, dpc_mech_sensitivity)
 *     h_t      = (g_t + w_t) / B_exp  +  weight_decay * theta   (B_exp = expected batch size)
 *     v        = momentum * v + h_t ;   theta -= lr_t * v       (heavy ball; post-processing)
 * sigma is the noise multiplier returned by the accountant for the *exact* mechanism, sampler
 * and participation pattern that run (dpc_account_mech_event), so what is accounted is what
 * ran: sens = sensitivity(C, pattern) per unit clip, and the noise standard deviation per row of
 * Z is sigma * clip * sens. The run refuses to start when (epsilon, delta) cannot be met.
 *
 * Accounting routes (chosen from the sampler and the mechanism):
 *   Poisson / cyclic Poisson sampling with a strategy C of at most `groups` bands (DP-SGD is
 *   C = I, groups = 1): amplified — min(k, ceil(n/groups))-fold composition of the
 *   Poisson-subsampled Gaussian (Choquette-Choo et al. 2023), RDP or PLD accountant.
 *   Fixed-order or shuffled epochs: the whole run is one Gaussian mechanism with sensitivity
 *   sens(C, pattern) (cyclic pattern for fixed order, exact; min-separation 1 for shuffling, an
 *   upper bound): mu = 1/sigma GDP, converted to (epsilon, delta) exactly.
 *
 * Reproducibility: every random choice is a pure function of (key, step, index); per-example
 * work runs on `threads` threads over fixed chunks whose sums are added in chunk order, and the
 * noise is generated per coordinate slice, so 1 and 2 threads give bit-identical parameters.
 * A checkpoint (atomic write) holds step, parameters, momentum and the noise state; a resumed
 * run is bit-identical to an uninterrupted one.
 *
 * Ownership: the trainer borrows the model and the data sets (they must outlive it); it owns
 * the parameter slab, optimizer state, sampler, mechanism and noise generators. */
#ifndef DPCORR_TRAIN_H
#define DPCORR_TRAIN_H

#include "dpcorr/account.h"
#include "dpcorr/common.h"
#include "dpcorr/data.h"
#include "dpcorr/mech.h"
#include "dpcorr/model.h"
#include "dpcorr/rng.h"
#include "dpcorr/sampler.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dpc_lr_schedule {
    DPC_LR_CONSTANT = 0,
    DPC_LR_COSINE = 1,   /* lr * (1 + cos(pi t / n)) / 2 */
    DPC_LR_COOLDOWN = 2  /* constant, then linear decay to lr * cooldown_factor over the last
                            cooldown_fraction of the steps (nu-DP-FTRL paper, App. G.1) */
} dpc_lr_schedule;

DPC_API const char *dpc_lr_schedule_name(dpc_lr_schedule s);
DPC_API DPC_NODISCARD dpc_status dpc_lr_schedule_parse(const char *s, dpc_lr_schedule *out,
                                                       dpc_error *err);

typedef struct dpc_train_config {
    /* mechanism: kind and parameters; .steps is set by the trainer to epochs * steps/epoch */
    dpc_mech_params mech;
    dpc_noise_form noise_form;  /* AUTO (default), BUFFER or REPLAY */
    size_t noise_memory;        /* bytes allowed for buffer-form noise state (0 = 1 GiB) */
    /* sampling */
    dpc_sampler_kind sampler;   /* default: POISSON for identity, FIXED otherwise */
    int sampler_set;            /* 1 if `sampler` was chosen explicitly */
    size_t batch;               /* (expected) batch size B */
    size_t epochs;              /* n = epochs * floor(N / B) steps (Poisson: N/B per epoch) */
    size_t groups;              /* cyclic Poisson: number of groups (0 = the strategy's bands) */
    /* privacy */
    double epsilon, delta;      /* target; epsilon = 0 means "use noise_multiplier as given" */
    double noise_multiplier;    /* sigma when epsilon = 0 (then the ledger reports its epsilon) */
    dpc_accountant accountant;  /* amplified routes: RDP or PLD (default PLD) */
    /* optimization */
    double clip;                /* per-example L2 clip norm C > 0 */
    double lr, momentum, weight_decay;
    dpc_lr_schedule schedule;
    double cooldown_fraction;   /* default 0.25 */
    double cooldown_factor;     /* default 0.05 */
    /* execution */
    size_t threads;             /* >= 1 (default 1) */
    size_t chunk;               /* examples per chunk (default 32); part of the reduction order */
    dpc_precision precision;    /* DOUBLE (default) or FLOAT32: parameters, momentum,
                                   activations and gradients in float, clipping norms in double,
                                   noise generated in double and added in float (dense models:
                                   linear, logistic, softmax, mlp). dpc_trainer_params and
                                   checkpoints hold the float parameters widened to double. */
    dpc_isa isa;                /* instruction-set level of the noise generators (dpcorr/isa.h;
                                   AUTO = the best this CPU runs; the model has its own,
                                   dpc_model_config.isa). Resolved by dpc_trainer_new, which
                                   refuses a level the CPU lacks. Results do not depend on it. */
} dpc_train_config;

/* Defaults as documented above; batch 256, epochs 1, clip 1, lr 0.1, delta 1e-5, PLD. */
DPC_API void dpc_train_config_init(dpc_train_config *c);

/* check_parameter: validates c against the training set without doing any work. The message
 * names the field ("epsilon: must be > 0", "batch: 70000 is larger than the data ..."). */
DPC_API DPC_NODISCARD dpc_status dpc_train_config_check(const dpc_train_config *c,
                                                        const dpc_dataset *train, dpc_error *err);

/* What was accounted, exactly for what ran. */
typedef struct dpc_ledger {
    char mechanism[96];         /* dpc_mech_describe */
    char sampler[24];
    char route[40];             /* "amplified (PLD)", "whole-run Gaussian (GDP)", ... */
    char accountant[8];
    dpc_participation part;     /* pattern of one example */
    double q;                   /* sampling rate (1 = none) */
    size_t rounds;              /* compositions of the amplified route (1 otherwise) */
    int amplified;
    double sigma;               /* noise multiplier z of the accounted Gaussian component (per
                                   step and column norm when amplified; whole run otherwise) */
    double sensitivity;         /* sens(C, pattern) per unit clip */
    int sensitivity_exact;
    double noise_std;           /* std of each entry of Z per unit clip (whole-run sigma x sens) */
    double epsilon_target;      /* 0 when sigma was given */
    double delta;
    double epsilon;             /* of the full run, as accounted */
    size_t steps;               /* n */
    size_t steps_per_epoch;
    double expected_batch;
    dpc_rng_mode rng_mode;
    uint64_t seed;              /* seeded mode only */
} dpc_ledger;

typedef struct dpc_trainer dpc_trainer;

/* Builds everything and calibrates sigma. DPC_E_PRIVACY (message with the numbers) when the
 * budget cannot be met. model, train and test (may be NULL) are borrowed. */
DPC_API DPC_NODISCARD dpc_status dpc_trainer_new(dpc_trainer **out, const dpc_model *model,
                                                 const dpc_dataset *train,
                                                 const dpc_dataset *test,
                                                 const dpc_train_config *cfg, const dpc_rng *rng,
                                                 dpc_error *err);
DPC_API void dpc_trainer_free(dpc_trainer *tr);

/* Per-step telemetry. Losses and clip rates are NOT privatized: outside the guarantee. */
typedef struct dpc_step_info {
    size_t step;          /* the step just taken */
    size_t batch;         /* realized batch size */
    double loss;          /* mean per-example loss on the batch, before the update */
    double clip_fraction; /* fraction of the batch whose gradient norm exceeded clip */
    double lr;
} dpc_step_info;

/* One step; DPC_E_RANGE when all steps are done. info may be NULL. */
DPC_API DPC_NODISCARD dpc_status dpc_trainer_step(dpc_trainer *tr, dpc_step_info *info,
                                                  dpc_error *err);

/* Epsilon of what has been released after the first t steps (progress reports; t = steps gives
 * the ledger's epsilon): the amplified component composed over the opportunities within t
 * steps, or the t-step prefix of the strategy (its leading block) with the run's noise. For
 * t < n a PLD accountant uses a 10x coarser grid (a valid, slightly looser upper bound). */
DPC_API DPC_NODISCARD dpc_status dpc_trainer_epsilon_at(const dpc_trainer *tr, size_t t,
                                                        double *eps, dpc_error *err);

DPC_API size_t dpc_trainer_steps_done(const dpc_trainer *tr);
/* Bytes the trainer holds: parameter, momentum, gradient-sum and noise slabs, the batch state,
 * the per-thread workspaces and buffers, the noise generators' state (not the data sets, which
 * it borrows, nor the model). */
DPC_API size_t dpc_trainer_bytes(const dpc_trainer *tr);
/* The resolved instruction-set level of the trainer's noise generators (cfg.isa). */
DPC_API dpc_isa dpc_trainer_isa(const dpc_trainer *tr);
DPC_API size_t dpc_trainer_steps_total(const dpc_trainer *tr);
DPC_API const dpc_ledger *dpc_trainer_ledger(const dpc_trainer *tr);
DPC_API const double *dpc_trainer_params(const dpc_trainer *tr); /* (P), owned */

/* Mean loss and accuracy (NAN for regression) of the current parameters on ds. */
DPC_API DPC_NODISCARD dpc_status dpc_trainer_evaluate(dpc_trainer *tr, const dpc_dataset *ds,
                                                      double *loss, double *accuracy,
                                                      dpc_error *err);

/* Atomic checkpoint (temporary file + fsync + rename; mode 0600: in secure mode it holds the
 * key). Resume refuses a checkpoint of another run (configuration fingerprint, sizes). */
DPC_API DPC_NODISCARD dpc_status dpc_trainer_save(const dpc_trainer *tr, const char *path,
                                                  dpc_error *err);
DPC_API DPC_NODISCARD dpc_status dpc_trainer_resume(dpc_trainer *tr, const char *path,
                                                    dpc_error *err);

/* Reads the root generator stored in a checkpoint (to resume a secure-mode run). */
DPC_API DPC_NODISCARD dpc_status dpc_checkpoint_read_rng(const char *path, dpc_rng *rng,
                                                         dpc_error *err);

/* FNV-1a 64 of the parameter bytes: a fingerprint for comparing runs bit for bit. */
DPC_API uint64_t dpc_trainer_params_hash(const dpc_trainer *tr);

#ifdef __cplusplus
}
#endif
#endif
