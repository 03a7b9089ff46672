/* dpcorr/train.h — the DP trainer: data -> sampler -> model (per-example gradients) -> clip ->
 * mechanism (correlated noise) -> optimizer -> privacy ledger.
 *
 * One step t (DP-FTRL in the matrix-factorization view; DP-SGD is the identity mechanism):
 *     I_t      = sampler batch of step t                        (dpc_sampler)
 *     g_t      = sum_{i in I_t} min(1, clip/||g_i||) g_i        (dpc_model_clipped_sum)
 *     w_t      = z * clip * colnorm(C) * (B Z)_t                (dpc_noise, dpc_mech_sensitivity)
 *     h_t      = (g_t + w_t) / B_exp  +  weight_decay * theta   (B_exp = expected batch size)
 *     v        = momentum * v + h_t ;   theta -= lr_t * v       (heavy ball; post-processing)
 * z is the noise multiplier (dpcorr/account.h: one meaning everywhere): the noise std per row of
 * Z is z * clip * colnorm(C), colnorm = the sensitivity of one participation; for DP-SGD it is
 * the per-step noise multiplier. It is either given (noise_multiplier) or calibrated by the
 * accountant for the *exact* mechanism, sampler and participation pattern that run
 * (dpc_account_mech_calibrate), so what is accounted is what ran. The run refuses to start when
 * (epsilon, delta) cannot be met.
 *
 * Accounting routes (dpc_account_mech_calibrate_run / dpc_account_mech_epsilon: every valid
 * route is tried and the best is kept; the ledger's `route` names it):
 *   Poisson / cyclic Poisson sampling with a strategy C of at most `groups` bands (DP-SGD is
 *   C = I, groups = 1): amplified banded MF — min(k, ceil(n/groups))-fold composition of the
 *   Poisson-subsampled Gaussian (Choquette-Choo et al. 2023), RDP or PLD accountant.
 *   Poisson sampling with any nonnegative strategy (nu, BLT, tree, ...): MMCC conditional
 *   composition (PLD; doc/accounting.md section 7), when it beats the whole run.
 *   Balls-in-bins with any nonnegative strategy (PLD or RDP asked for): the balls-in-bins route
 *   (DP-SGD: exact random-allocation bound; other C: Monte Carlo upper confidence bound, its
 *   samples, confidence and seed in the ledger), when it beats the whole run.
 *   Fixed-order or shuffled epochs, balls-in-bins, or whenever it is the best: the whole run is
 *   one Gaussian mechanism with sensitivity sens(C, pattern) (cyclic pattern for fixed order and
 *   balls-in-bins, exact; min-separation 1 for shuffling, an upper bound): mu = 1/sigma GDP,
 *   converted to (epsilon, delta) exactly.
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
#include "dpcorr/strategy.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Distributed (data-parallel) training; doc/distributed.md ---------------------------------
 *
 * P processes ("ranks") each run a trainer over the same configuration, model, data and seed,
 * connected by a transport (dpc_train_config.transport; NULL = one process). Rank 0 runs the
 * accountant once and sends the ledger to the others. In every step each rank samples the same
 * batch and computes the clipped sums of a contiguous share of the batch's chunks; the running
 * total of the chunk sums travels rank 0 -> 1 -> ... -> P-1 in pieces, each rank adding its chunks
 * in chunk order, so the sum is the single-process sum bit for bit; rank r owns the coordinates
 * [floor(d r / P), floor(d (r + 1) / P)) of the d parameters: it generates the noise of that shard
 * only (the counter-based RNG addresses (key, stream, row, coordinate)), keeps the mechanism state
 * and the momentum of that shard only, updates it, and the shards are all-gathered. The
 * parameters are therefore bit-identical to the single-process run for every P and thread count.
 *
 * With a transport of size > 1 the trainer functions are collective: every rank calls
 * dpc_trainer_new, _step, _evaluate, _save and _resume in the same order (the path of _save and
 * _resume is used by rank 0, which does all checkpoint I/O; the file is the single-process one,
 * so a run may resume with another P). Every rank holds the full parameter vector after each
 * step; dpc_trainer_epsilon_at is answered by rank 0 only (accounting runs once).
 * A failure on one rank fails the call on every rank with that rank's error, its message
 * prefixed "rank r: " (no prefix when every rank failed the same way); a transport failure (a
 * dead or silent peer) is returned as the transport reports it. */
#define DPC_RANK_NONE ((size_t)-1)

typedef struct dpc_transport {
    size_t rank; /* this process, 0 <= rank < size */
    size_t size; /* number of ranks P >= 1 */
    void *ctx;   /* the implementation's state, passed to sendrecv */
    /* Posts a send of sbytes from sbuf to rank `to` and a receive of exactly rbytes into rbuf
     * from rank `from` (either side may be absent: DPC_RANK_NONE), then waits for both. Messages
     * from one rank to another arrive in the order sent; the send must not wait for its receiver
     * before this call's receive is posted (the semantics of MPI_Sendrecv). On failure (a dead
     * or silent peer, a transport error) returns a status and a message naming the peer. */
    dpc_status (*sendrecv)(void *ctx, size_t to, const void *sbuf, size_t sbytes, size_t from,
                           void *rbuf, size_t rbytes, dpc_error *err);
} dpc_transport;

/* Collective over tp (every rank calls it): each rank passes its own status and error; returns
 * on every rank the status of the lowest failing rank and its error (message prefixed
 * "rank r: " unless every rank failed), or DPC_OK. tp NULL or of size 1: returns st. */
DPC_API DPC_NODISCARD dpc_status dpc_transport_agree(const dpc_transport *tp, dpc_status st,
                                                     dpc_error *err);
/* Collective: rank `root`'s bytes of buf are copied into buf on every rank. */
DPC_API DPC_NODISCARD dpc_status dpc_transport_bcast(const dpc_transport *tp, size_t root,
                                                     void *buf, size_t bytes, dpc_error *err);

typedef enum dpc_lr_schedule {
    DPC_LR_CONSTANT = 0,
    DPC_LR_COSINE = 1,   /* lr * (1 + cos(pi t / n)) / 2 */
    DPC_LR_COOLDOWN = 2  /* constant, then a linear decay over the last steps (the cooldown
                            fields of dpc_train_config; nu-DP-FTRL paper, App. G.1) */
} dpc_lr_schedule;

/* "constant", "cosine", "cooldown"; the parser accepts exactly these names (DPC_E_INVALID
 * naming the string otherwise). */
DPC_API const char *dpc_lr_schedule_name(dpc_lr_schedule s);
DPC_API DPC_NODISCARD dpc_status dpc_lr_schedule_parse(const char *s, dpc_lr_schedule *out,
                                                       dpc_error *err);

/* Canary slots, for privacy auditing (dpcorr/audit.h sets them up; NULL in ordinary runs).
 * The training examples [first, first + count) are canaries. They are examples of the data set
 * like any other: the sampler draws them with the run's own participation pattern and the
 * accountant counts them as examples, so an audit sees the real mechanism. When canary c is
 * drawn at a step:
 *   included[c] == 0       it contributes nothing (the zero-out neighbour of the run with it);
 *   add_gradient == NULL   it is an ordinary example (an input canary): its clipped gradient;
 *   otherwise              add_gradient(ctx, c, sum) adds its gradient (norm <= clip, the
 *                          caller's contract) to the step's clipped sum (P) in place of the
 *                          model's (a white-box gradient canary), after the real examples'
 *                          sum, in batch order.
 * Borrowed: must outlive the trainer. Not recorded in checkpoints (an audit is one
 * uninterrupted run). */
typedef struct dpc_train_canaries {
    size_t first, count;
    const unsigned char *included; /* (count) */
    void (*add_gradient)(void *ctx, size_t canary, double *sum);
    void *ctx;
} dpc_train_canaries;

typedef struct dpc_train_config {
    /* mechanism: kind and parameters; .steps is set by the trainer to epochs * steps/epoch;
     * BSR/BISR .bands = 0: the default of dpc_train_config_resolve */
    dpc_mech_params mech;
    dpc_noise_form noise_form;  /* AUTO (default), BUFFER or REPLAY */
    size_t noise_memory;        /* bytes allowed for buffer-form noise state (0 = 1 GiB) */
    /* sampling */
    dpc_sampler_kind sampler;   /* AUTO (default): chosen by dpc_train_config_resolve */
    size_t batch;               /* (expected) batch size B */
    size_t epochs;              /* n = epochs * floor(N / B) steps (Poisson: N/B per epoch) */
    size_t groups;              /* cyclic Poisson: number of groups (0 = the strategy's bands);
                                   must be 0 for every other sampler (refused: "groups") */
    int workload_explicit;      /* BSR/BISR: 1 = mech.momentum/mech.decay as given; 0 (default) =
                                   the optimizer's workload: momentum, decay 1 - lr weight_decay */
    /* privacy: exactly one of epsilon (calibrate) and noise_multiplier (given) is set */
    double epsilon, delta;      /* target epsilon > 0, or 0 to use noise_multiplier; delta in
                                   (0, 1), or 0 (default): dpc_account_default_delta(N), recorded
                                   as derived in the ledger */
    double noise_multiplier;    /* z > 0 when epsilon = 0 (then the ledger reports its epsilon) */
    int allow_large_delta;      /* 1 accepts delta >= 1/N (a mechanism may then publish a record
                                   outright); refused by default */
    dpc_accountant accountant;  /* amplified routes: RDP or PLD (default PLD) */
    /* optimization */
    double clip;                /* per-example L2 clip norm C > 0 */
    double lr, momentum, weight_decay;
    dpc_lr_schedule schedule;
    double cooldown_fraction;   /* cooldown: the decaying fraction of the steps (table) */
    double cooldown_factor;     /* cooldown: the final lr factor (table) */
    /* execution */
    size_t threads;             /* worker threads (table: range, default) */
    size_t chunk;               /* examples per chunk (table); part of the reduction order */
    dpc_precision precision;    /* DOUBLE (default) or FLOAT32: parameters, momentum,
                                   activations and gradients in float, clipping norms in double,
                                   noise generated in double and added in float (dense models:
                                   linear, logistic, softmax, mlp). dpc_trainer_params and
                                   checkpoints hold the float parameters widened to double. */
    dpc_isa isa;                /* instruction-set level of the noise generators (dpcorr/isa.h;
                                   AUTO = the best this CPU runs; the model has its own,
                                   dpc_model_config.isa). Resolved by dpc_trainer_new, which
                                   refuses a level the CPU lacks. Results do not depend on it. */
    const dpc_transport *transport; /* NULL (default): one process; else this rank of a
                                       data-parallel run (above); borrowed, must outlive the
                                       trainer. The results do not depend on it. */
    /* auditing */
    const dpc_train_canaries *canaries; /* NULL (default): none (see above) */
} dpc_train_config;

/* The field table of dpc_train_config (dpcorr/field.h), the manual of its fields: for each its
 * name (= the dpc_error.field of dpc_train_config_check; nested mechanism fields "mech.nu"), type,
 * offset, default, range, flags and a one-line doc. Front ends read their option types, ranges,
 * defaults and help from it; doc/parameters.md writes it out (generated from the table).
 * Refusals between fields (dpc_train_config_check): batch <= N; epochs x steps per epoch <=
 * DPC_TRAIN_MAX_STEPS; exactly one of epsilon and noise_multiplier; lr x clip, lr x
 * weight_decay and noise_multiplier x clip below 1e150; delta < 1/N unless allow_large_delta;
 * groups only with cyclic Poisson sampling. */
DPC_API const dpc_field_table *dpc_train_config_fields(void);
/* The resolved configuration's members of a report's "config": the mechanism under its
 * historical keys (mech, nu, lambda, bands, mech_momentum, mech_decay), then every field of
 * dpc_train_config_fields except the privacy ones (the "privacy" section reports what was
 * accounted under those names); the sampler by name; "isa" = model_isa, "isa_noise" = c->isa. */
struct dpc_json_writer;
DPC_API void dpc_train_config_report_json(struct dpc_json_writer *w, const dpc_train_config *c,
                                          dpc_isa model_isa);

/* A report's "memory" section: data_bytes (the features and labels, in double, of train and of
 * test when not NULL), train_rows_held (train's rows: a rank's shard under a distributed run),
 * peak_rss_bytes (the process's, which the front end measures; left out when < 0),
 * parameter_bytes (n_params doubles) and trainer_bytes (dpc_trainer_bytes). */
DPC_API void dpc_train_memory_report_json(struct dpc_json_writer *w, const dpc_dataset *train,
                                          const dpc_dataset *test, size_t n_params,
                                          size_t trainer_bytes, long long peak_rss_bytes);

/* Writes the table's defaults (doc/parameters.md; the accountant is
 * dpc_account_default_accountant()). */
DPC_API void dpc_train_config_init(dpc_train_config *c);

/* The README demo's recipe (`dpcorr demo`, doc/training.md): one MLP (784-256-10, tanh) on
 * Fashion-MNIST at (epsilon, delta) = (3, 1e-5), PLD accounting, 15 epochs of batch 250, clip 1,
 * the cooldown schedule, trained twice: run 0 DP-SGD (Poisson sampling, lr 0.125, momentum 0.9),
 * run 1 BSR with 32 bands under cyclic Poisson sampling (amplified BandMF, lr 0.25, momentum
 * 0.9). cfg: dpc_train_config_init's defaults with those set (a front end may shorten epochs and
 * batch for a quick run and sets threads and precision); label: the run's name in tables and
 * reports, name: its file stem ("dpsgd", "bsr"); all static. DPC_E_INVALID ("run") unless run
 * is 0 or 1. */
#define DPC_TRAIN_DEMO_RUNS 2
typedef struct dpc_train_demo {
    dpc_train_config cfg;
    const char *model, *label, *name;
    const char *features; /* feature spec (dpcorr/features.h), NULL: none */
} dpc_train_demo;
DPC_API DPC_NODISCARD dpc_status dpc_train_demo_setup(int run, dpc_train_demo *out,
                                                      dpc_error *err);

/* `dpcorr demo --frontier`: the best configuration found on the training set's holdout
 * (doc/training.md, "The frontier at epsilon 3"): ScatterNet features (J = 2, L = 8),
 * per-example GroupNorm in 27 groups and private centering at noise multiplier 20
 * ("scatter:J=2,L=8,gn=27,center=20"), a linear softmax model, BSR with 32 bands under cyclic
 * Poisson sampling, (epsilon, delta) = (3, 1e-5), PLD, 20 epochs of batch 500, clip 1, lr 0.18,
 * momentum 0.9, the cooldown schedule; label and name "frontier". cfg as above. */
DPC_API void dpc_train_demo_frontier(dpc_train_demo *out);

/* Largest number of steps a run may have (epochs x steps per epoch). */
#define DPC_TRAIN_MAX_STEPS ((size_t)100000000)

/* check_parameter: validates c against the training set without doing any work. The error's
 * field names the config field at fault ("epsilon", "batch", "mech.nu", ...). */
DPC_API DPC_NODISCARD dpc_status dpc_train_config_check(const dpc_train_config *c,
                                                        const dpc_dataset *train, dpc_error *err);

/* The mechanism part of dpc_train_config_check: p as dpc_mech_params_check, except that steps
 * is not read (the run sets it), BSR/BISR bands 0 (the run's default bands) and BLT without
 * theta/omega (the run's default BLT) are accepted. Front ends validate a parsed mechanism with
 * it before they have the data. Error fields are those of dpc_mech_params_check. */
DPC_API DPC_NODISCARD dpc_status dpc_train_mech_check(const dpc_mech_params *p, dpc_error *err);

/* The run decisions, made once for every front end (CLI, bindings): validates `in` (as
 * dpc_train_config_check) and writes the configuration that will run into *out:
 *   sampler   AUTO: POISSON for DP-SGD (identity), FIXED (fixed-order epochs,
 *             exact multi-epoch sensitivity) for every other mechanism;
 *   bands     BSR/BISR with mech.bands = 0: dpc_mech_default_bands(n, epochs, sep), sep =
 *             steps per epoch for FIXED, groups (default steps per epoch) for CYCLIC_POISSON,
 *             1 otherwise (1 epoch: 32 bands; more: max(sep, 16));
 *   groups    cyclic Poisson with groups = 0: the strategy's bands (1 for identity, bands for
 *             BSR; other kinds need groups given);
 *   workload  BSR/BISR unless workload_explicit: the square root of the optimizer's workload
 *             (Kalinin & Lampert 2024): mech.momentum = momentum, mech.decay = 1 - lr
 *             weight_decay (must be > 0);
 *   delta     0: dpc_account_default_delta(N);
 *   dense     mech.kind DENSE: mech.steps is the matrix's n (mech.dense holds n x n values) and
 *             must equal epochs x steps per epoch, else DPC_E_INVALID naming "mech.steps";
 *   steps     mech.steps = epochs x steps per epoch (floor(N / batch)), at most
 *             DPC_TRAIN_MAX_STEPS;
 *   blt       BLT without theta/omega (nbuf 0): left so; the trainer, the plan and the audit
 *             optimize the run's default BLT (dpc_train_default_blt) and their resolved
 *             configuration (dpc_trainer_config, dpc_train_plan_config) points at its
 *             coefficients.
 * out may equal in. The trainer applies it itself; front ends call it to show the resolved
 * configuration (dry runs, reports). */
DPC_API DPC_NODISCARD dpc_status dpc_train_config_resolve(const dpc_train_config *in,
                                                          const dpc_dataset *train,
                                                          dpc_train_config *out, dpc_error *err);

/* The default BLT of a resolved configuration whose mech is BLT without theta/omega:
 * dpc_strategy_default_blt for n = mech.steps, k = epochs participations at least b apart (b:
 * steps per epoch for FIXED, groups for CYCLIC_POISSON, 1 otherwise; as the default bands) and
 * the optimizer's workload (momentum, 1 - lr weight_decay; mech.momentum/decay when
 * workload_explicit). *out is the caller's (dpc_strategy_free). */
DPC_API DPC_NODISCARD dpc_status dpc_train_default_blt(const dpc_train_config *resolved,
                                                       dpc_strategy **out, dpc_error *err);

/* The ledger (what was accounted, exactly for what ran) is dpc_ledger of dpcorr/account.h. */

typedef struct dpc_trainer dpc_trainer;

/* Builds everything and calibrates sigma. DPC_E_PRIVACY (message with the numbers) when the
 * budget cannot be met. model, train and test (may be NULL) are borrowed. */
DPC_API DPC_NODISCARD dpc_status dpc_trainer_new(dpc_trainer **out, const dpc_model *model,
                                                 const dpc_dataset *train,
                                                 const dpc_dataset *test,
                                                 const dpc_train_config *cfg, const dpc_rng *rng,
                                                 dpc_error *err);
/* dpc_trainer_new with progress reports of its calibration (dpc_account_opts.progress: per
 * evaluation, per stage of a balls-in-bins evaluation, per MMCC group), which can take seconds
 * (balls-in-bins, MMCC); a non-zero return of progress.fn cancels (DPC_E_CANCELLED). */
DPC_API DPC_NODISCARD dpc_status dpc_trainer_new_progress(dpc_trainer **out,
                                                          const dpc_model *model,
                                                          const dpc_dataset *train,
                                                          const dpc_dataset *test,
                                                          const dpc_train_config *cfg,
                                                          const dpc_rng *rng,
                                                          dpc_progress progress, dpc_error *err);
DPC_API void dpc_trainer_free(dpc_trainer *tr);

/* Per-step telemetry. Losses, clip rates and the realised batch size are NOT privatized:
 * outside the guarantee (under Poisson sampling the realised size is itself private: the update
 * divides by the expected batch size, never by it). */
typedef struct dpc_step_info {
    size_t step;          /* the step just taken */
    size_t batch;         /* realized batch size */
    double loss;          /* mean per-example loss on the batch, before the update */
    double clip_fraction; /* fraction of the batch whose gradient norm exceeded clip */
    double lr;
} dpc_step_info;

/* The field table of dpc_step_info (dpcorr/field.h; every field DPC_FIELD_DERIVED: the trainer
 * writes them), for front ends that print or store step telemetry by name. */
DPC_API const dpc_field_table *dpc_step_info_fields(void);

/* One step; DPC_E_RANGE when all steps are done. info may be NULL. */
DPC_API DPC_NODISCARD dpc_status dpc_trainer_step(dpc_trainer *tr, dpc_step_info *info,
                                                  dpc_error *err);

/* Epsilon of what has been released after the first t steps (progress reports; t = steps gives
 * the ledger's epsilon): the amplified component composed over the opportunities within t
 * steps, or the t-step prefix of the strategy (its leading block) with the run's noise. For
 * t < n a PLD accountant uses a 10x coarser grid (a valid, slightly looser upper bound).
 * Distributed runs: for 0 < t < n, rank 0 only (the others return DPC_E_UNSUPPORTED). */
DPC_API DPC_NODISCARD dpc_status dpc_trainer_epsilon_at(const dpc_trainer *tr, size_t t,
                                                        double *eps, dpc_error *err);

/* Steps taken (a restored run counts those before its checkpoint). */
DPC_API size_t dpc_trainer_steps_done(const dpc_trainer *tr);
/* Bytes the trainer holds: parameter, momentum, gradient-sum and noise slabs, the batch state,
 * the per-thread workspaces and buffers, the noise generators' state (not the data sets, which
 * it borrows, nor the model). */
DPC_API size_t dpc_trainer_bytes(const dpc_trainer *tr);
/* Where a trainer's time went (monotonic wall clock, seconds, summed over the steps and
 * evaluations this object ran; a restored run starts from 0). The parts of a step:
 *   sample_s    drawing the batch (dpc_sampler_batch; secure Poisson draws one ChaCha20 word
 *               per example)
 *   gradient_s  per-example gradients, clipping and the clipped sum (every thread; with ranks
 *               also the exchange of chunk sums)
 *   noise_s     the mechanism's noise (dpc_noise_next), the share of the noise-and-update phase
 *               that thread 0 spent in it (the threads take equal slices)
 *   update_s    the rest of that phase: the optimizer update, and with ranks the all-gather
 *   other_s     the step's remainder (finiteness check, telemetry, canaries)
 *   evaluate_s  dpc_trainer_evaluate
 * Timing never changes a value of the run. */
typedef struct dpc_train_times {
    double sample_s, gradient_s, noise_s, update_s, other_s, evaluate_s;
    size_t steps, evaluations; /* what the sums cover */
} dpc_train_times;
/* *out = the trainer's time split so far (above). */
DPC_API void dpc_trainer_times(const dpc_trainer *tr, dpc_train_times *out);
/* The resolved instruction-set level of the trainer's noise generators (cfg.isa). */
DPC_API dpc_isa dpc_trainer_isa(const dpc_trainer *tr);
DPC_API size_t dpc_trainer_steps_total(const dpc_trainer *tr);
DPC_API const dpc_ledger *dpc_trainer_ledger(const dpc_trainer *tr);
/* The resolved configuration the trainer runs (dpc_train_config_resolve). */
DPC_API const dpc_train_config *dpc_trainer_config(const dpc_trainer *tr);
DPC_API const double *dpc_trainer_params(const dpc_trainer *tr); /* (P), owned */
/* The run's sampler (what the schedule makes public: dpc_sampler_opportunities). */
DPC_API const dpc_sampler *dpc_trainer_sampler(const dpc_trainer *tr);

/* Mean loss and accuracy (NAN for regression) of the current parameters on ds. */
DPC_API DPC_NODISCARD dpc_status dpc_trainer_evaluate(dpc_trainer *tr, const dpc_dataset *ds,
                                                      double *loss, double *accuracy,
                                                      dpc_error *err);

/* The run's history: one record per epoch (or any step the caller chooses), kept by the trainer
 * and saved in its checkpoints, so that a resumed run still has the records before the resume
 * point. NAN for a metric not measured. */
typedef struct dpc_train_record {
    size_t step;          /* steps done when recorded (1..steps) */
    size_t epoch;
    double train_loss;    /* mean training loss (non-private telemetry) */
    double test_loss, test_accuracy; /* accuracy NAN for regression */
    double epsilon;       /* epsilon spent so far */
    double time_s;        /* seconds since the run started (in the process that recorded it) */
} dpc_train_record;

/* The field table of dpc_train_record (dpcorr/field.h; every field DPC_FIELD_DERIVED), for the
 * report writers and bindings that mirror the records. */
DPC_API const dpc_field_table *dpc_train_record_fields(void);

/* Appends a record: r->step must be <= the steps done and > the last record's step
 * (DPC_E_INVALID "step"). */
DPC_API DPC_NODISCARD dpc_status dpc_trainer_record(dpc_trainer *tr, const dpc_train_record *r,
                                                    dpc_error *err);
/* The records so far (after dpc_trainer_resume: the checkpoint's); *n receives their count.
 * Distributed runs: rank 0's (the one that reads checkpoints). */
DPC_API const dpc_train_record *dpc_trainer_records(const dpc_trainer *tr, size_t *n);
/* A report's "epochs": one object per record of r (n): epoch, step, train_loss, test_loss,
 * test_accuracy, epsilon_so_far, time_s. */
DPC_API void dpc_train_records_report_json(struct dpc_json_writer *w, const dpc_train_record *r,
                                           size_t n);
/* A report's "time_split_s" (seconds): setup (dpc_trainer_new with the calibration, as the
 * front end measured it), the steps' parts of tm (sample, gradient, noise, update, step_other),
 * evaluate, account (the front end's epsilon-so-far accounting) and loop = train_s (the front
 * end's time in the steps' loop) minus the steps' parts. */
DPC_API void dpc_train_times_report_json(struct dpc_json_writer *w, const dpc_train_times *tm,
                                         double setup_s, double account_s, double train_s);

/* Atomic checkpoint (temporary file + fsync + rename; mode 0600: in secure mode it holds the
 * key). Before writing, temporary files "<path>.tmp.<pid>" left next to it by processes that no
 * longer exist (kill(pid, 0) fails with ESRCH) are removed.
 * File format version 3: the header, the run's configuration items (every option and input that
 * determines its values, including a content hash of the training data, dpc_dataset_hash; the
 * test set may change), the parameters, momentum and noise state, the history records, a checksum,
 * and nothing after it.
 * Resume refuses, with DPC_E_STATE and err->field naming the first difference: a checkpoint of
 * another run ("lr: the checkpoint has 0.1, this run has 0.2", "data: training data content
 * changed"), other sizes; and with DPC_E_FORMAT a corrupt file (checksum, truncation, bytes after
 * the checksum). Version 2 files (no items, no records) are still read: their fingerprint covers
 * the configuration, the data path and shape; a mismatch cannot name the difference. */
DPC_API DPC_NODISCARD dpc_status dpc_trainer_save(const dpc_trainer *tr, const char *path,
                                                  dpc_error *err);
DPC_API DPC_NODISCARD dpc_status dpc_trainer_resume(dpc_trainer *tr, const char *path,
                                                    dpc_error *err);

/* Reads the root generator stored in a checkpoint of any trainer (dpc_trainer_save or a
 * dpc_ckpt container), to resume a secure-mode run. */
DPC_API DPC_NODISCARD dpc_status dpc_checkpoint_read_rng(const char *path, dpc_rng *rng,
                                                         dpc_error *err);

/* ---- The checkpoint container of the other trainers --------------------------------------------
 *
 * The papers' trainers (dpcorr/papers/kan.h dpc_kan_lcgd_save, linreg.h dpc_linreg_save, srgd.h
 * dpc_srgd_save) and their caller's per-step records save into one container: the file of
 * dpc_trainer_save (same header with step, parameter count and generator; the configuration items
 * and their fingerprint; the checksum; atomic write through "<path>.tmp.<pid>", fsync and rename,
 * mode 0600; temporaries of dead processes removed) whose first item, "algorithm", is the trainer
 * kind (files of dpc_trainer carry none: kind "dp-ftrl"), and whose body is a list of named
 * sections of doubles:
 *   u32 nsections | per section: name (DPC_CKPT_NAME_LEN bytes, NUL-padded) | u64 n | n doubles |
 *   u64 FNV-1a of the file before it | end of file.
 * A trainer stores only what cannot be regenerated from (key, stream, row, index): iterates,
 * optimizer and noise state, counters; the caller adds its own records (a report's history).
 *
 * Saving: dpc_ckpt_new(kind, the run's root generator), the items (every option and input that
 * determines the run's values, under the library's name of the parameter), the trainer's _save
 * (its items, progress and state), the caller's sections, dpc_ckpt_write.
 * Resuming: dpc_ckpt_read (refuses, DPC_E_FORMAT, a corrupt, truncated or appended-to file, and
 * with DPC_E_STATE, field "algorithm", a checkpoint of another trainer kind), then the run's
 * container built as for saving, dpc_ckpt_match (DPC_E_STATE with err->field naming the first
 * option or input that differs: "lr: the checkpoint F has 0.1, this run has 0.2"), then the
 * trainer's _restore and the caller's sections. */
typedef struct dpc_ckpt dpc_ckpt;
#define DPC_CKPT_NAME_LEN 32 /* section names: 1..31 characters */

/* An empty container of trainer kind `kind` (1..127 characters) for the run of root generator
 * rng (copied; stored in the file, read back by dpc_checkpoint_read_rng). */
DPC_API DPC_NODISCARD dpc_status dpc_ckpt_new(dpc_ckpt **out, const char *kind, const dpc_rng *rng,
                                              dpc_error *err);
DPC_API void dpc_ckpt_free(dpc_ckpt *ck); /* NULL is a no-op */
/* Configuration items: field = the library's name of the parameter ("lr", "data"), what = what
 * it is, for messages ("learning rate"). Strings longer than 127 bytes are compared by hash;
 * hash items compare bytes (a changed one is reported as changed, without values). At most 56
 * items (dpc_ckpt_write and dpc_ckpt_match refuse more, DPC_E_RANGE "items"). */
DPC_API void dpc_ckpt_item_num(dpc_ckpt *ck, const char *field, const char *what, double v);
DPC_API void dpc_ckpt_item_count(dpc_ckpt *ck, const char *field, const char *what, uint64_t v);
DPC_API void dpc_ckpt_item_str(dpc_ckpt *ck, const char *field, const char *what, const char *v);
DPC_API void dpc_ckpt_item_hash(dpc_ckpt *ck, const char *field, const char *what, const void *p,
                                size_t bytes);
/* The steps done and the parameter count (the header's; set by the trainers' _save). */
DPC_API void dpc_ckpt_set_progress(dpc_ckpt *ck, size_t step, size_t P);
/* A section: n values of v copied under name (unique; at most 64 sections). */
DPC_API DPC_NODISCARD dpc_status dpc_ckpt_put(dpc_ckpt *ck, const char *name, const double *v,
                                              size_t n, dpc_error *err);
/* Copies section name into v, which must hold exactly n values (DPC_E_FORMAT naming the file and
 * the section when it is missing or of another size). */
DPC_API DPC_NODISCARD dpc_status dpc_ckpt_get(const dpc_ckpt *ck, const char *name, double *v,
                                              size_t n, dpc_error *err);
/* Section name (owned by ck) and its size, or NULL (*n = 0) when absent. */
DPC_API const double *dpc_ckpt_section(const dpc_ckpt *ck, const char *name, size_t *n);
/* Sections of records described by a field table (dpcorr/field.h: a front end's per-step
 * telemetry, a trainer's step records): _put writes n records recs (structs t describes) field
 * by field (dpc_field_pack: n x t->count values); _get reads them back into recs (room for cap
 * records), *n their count: DPC_E_FORMAT naming the file and the section when it is missing,
 * not whole records or more than cap. */
DPC_API DPC_NODISCARD dpc_status dpc_ckpt_put_records(dpc_ckpt *ck, const char *name,
                                                      const dpc_field_table *t, const void *recs,
                                                      size_t n, dpc_error *err);
DPC_API DPC_NODISCARD dpc_status dpc_ckpt_get_records(const dpc_ckpt *ck, const char *name,
                                                      const dpc_field_table *t, void *recs,
                                                      size_t cap, size_t *n, dpc_error *err);
DPC_API const char *dpc_ckpt_kind(const dpc_ckpt *ck);
DPC_API size_t dpc_ckpt_step(const dpc_ckpt *ck);
DPC_API size_t dpc_ckpt_num_params(const dpc_ckpt *ck);
DPC_API const char *dpc_ckpt_path(const dpc_ckpt *ck); /* the file read ("" when built) */
/* Atomic write (see above). */
DPC_API DPC_NODISCARD dpc_status dpc_ckpt_write(const dpc_ckpt *ck, const char *path,
                                                dpc_error *err);
/* Reads and verifies the file path, a checkpoint of trainer kind `kind`. */
DPC_API DPC_NODISCARD dpc_status dpc_ckpt_read(dpc_ckpt **out, const char *path, const char *kind,
                                               dpc_error *err);
/* DPC_OK when saved (read from a file) records the configuration of run (built for this run):
 * the same kind, items, generator and fingerprint; else DPC_E_STATE naming the first difference
 * in err->field (the generator: "rng", "seed"). */
DPC_API DPC_NODISCARD dpc_status dpc_ckpt_match(const dpc_ckpt *saved, const dpc_ckpt *run,
                                                dpc_error *err);
/* ==== One run interface: every trainer behind one ops table ===================================
 *
 * The DP-FTRL trainer (dpc_trainer) and the papers' trainers (dpcorr/papers/linreg.h dpc_linreg,
 * srgd.h dpc_srgd, kan.h dpc_kan_lcgd) are driven the same way through a dpc_run: an ops table
 * with the same operations under the same names, and the trainer as its opaque `self`
 * (borrowed: the trainer must outlive the dpc_run). Made by dpc_trainer_run_ops,
 * dpc_linreg_run_ops, dpc_srgd_run_ops and dpc_kan_lcgd_run_ops, and stepped to the end by the
 * one run driver, dpc_run_drive (below), with progress, checkpoint and stop hooks:
 *
 *     dpc_run r = dpc_srgd_run_ops(s);
 *     dpc_srgd_step_info info;                       // the trainer's own step record
 *     if (dpc_run_drive(&r, &info, NULL, NULL, NULL, &err)) goto fail;
 *     size_t P;  const double *w = r.ops->params(r.self, &P);
 *     const dpc_ledger *L = r.ops->ledger(r.self);
 *
 * steps_done counts the updates made; a trainer whose run starts with an evaluation
 * (dpc_kan_lcgd: W_0) makes no update in its first step, so the driver checks steps_done after
 * each step rather than counting calls. Checkpoints: when own_file is 1 (dpc_trainer), save writes and
 * restore reads the file at path themselves (ck is NULL; a distributed run saves collectively);
 * when 0 (the papers' trainers), save puts the trainer's items, progress and state into the
 * caller's container ck (dpc_ckpt_new with `kind`; the caller adds its own items and sections
 * and writes it) and restore takes them from a container read and matched by the caller (path
 * unused). */
typedef struct dpc_run_ops {
    const char *kind; /* the trainer kind of its checkpoints ("dp-ftrl", DPC_SRGD_KIND, ...) */
    int own_file;     /* 1: save/restore use path; 0: the container ck */
    /* One step; info (may be NULL) receives the trainer's step record: dpc_step_info,
     * dpc_linreg_step_info, dpc_srgd_step_info or dpc_kan_lcgd_run_info. DPC_E_RANGE when all
     * steps are done. */
    dpc_status (*step)(void *self, void *info, dpc_error *err);
    size_t (*steps_done)(const void *self);  /* updates made (a restored run counts its own) */
    size_t (*steps_total)(const void *self); /* updates of the whole run */
    const double *(*params)(const void *self, size_t *n); /* the current parameters (*n), owned */
    const dpc_ledger *(*ledger)(const void *self);        /* the run's privacy ledger */
    dpc_status (*save)(const void *self, dpc_ckpt *ck, const char *path, dpc_error *err);
    dpc_status (*restore)(void *self, const dpc_ckpt *ck, const char *path, dpc_error *err);
} dpc_run_ops;

typedef struct dpc_run {
    const dpc_run_ops *ops; /* static, owned by the library */
    void *self;             /* the trainer (borrowed) */
} dpc_run;

/* The DP-FTRL trainer as a dpc_run (kind "dp-ftrl", own_file 1: save = dpc_trainer_save,
 * restore = dpc_trainer_resume; step info: dpc_step_info). */
DPC_API dpc_run dpc_trainer_run_ops(dpc_trainer *tr);

/* ==== The one run driver: step to the end, checkpoint, stop ==================================
 *
 * dpc_run_drive is the loop every front end uses (the CLI's `train`, the papers' _run/_train
 * functions, the audit, the repro drivers): it steps r until steps_done reaches steps_total and,
 * after each step that made an update (steps_done t > 0; dpc_kan_lcgd's first step only visits
 * W_0), calls hooks->on_step, then hooks->checkpoint when one is due, then stops at
 * params->stop_after. The driver never prints, never reads a clock of its own and keeps no state
 * beyond its arguments.
 *
 * A checkpoint is due (only when hooks->checkpoint is set) every params->checkpoint_every steps
 * (0: never by count), after the last step, at the points hooks->checkpoint_due names (dp-ftrl:
 * each epoch), and at the stop of params->stop_after (what a resume continues from). */
typedef struct dpc_run_params {
    size_t checkpoint_every; /* a checkpoint every K updates (0: only at the end and hook points) */
    size_t stop_after;       /* stop once steps_done >= K, as if killed (0: never) */
} dpc_run_params;

/* The field table of dpc_run_params (dpcorr/field.h): both fields size_t, default 0 (none), every
 * value accepted; the zeroed struct is the default. */
DPC_API const dpc_field_table *dpc_run_params_fields(void);

typedef struct dpc_run_hooks {
    void *ctx; /* passed to every hook */
    /* After each step (t = steps done; info: the step record the step filled). Nonzero stops the
     * run: dpc_run_drive returns DPC_E_CANCELLED with the value in dpc_run_outcome.hook_rc. NULL:
     * none. Called after the first step even when it made no update (t = 0). */
    int (*on_step)(void *ctx, const void *info, size_t t);
    /* Extra checkpoint points (nonzero: due after update t). NULL: none. */
    int (*checkpoint_due)(void *ctx, size_t t);
    /* Writes a checkpoint after update t (r->ops->save into the caller's file or container),
     * given checkpoint_ctx (NULL: ctx), the writer being often another object than the progress
     * hook's. NULL: no checkpoints. A failure returns its status from dpc_run_drive unchanged. */
    dpc_status (*checkpoint)(void *checkpoint_ctx, size_t t, dpc_error *err);
    void *checkpoint_ctx;
    /* Seconds of a monotonic clock (NULL: no timing): dpc_run_outcome.step_s sums the steps. */
    double (*clock)(void);
} dpc_run_hooks;

typedef enum dpc_run_end {
    DPC_RUN_DONE = 0,      /* every step made */
    DPC_RUN_STOPPED = 1,   /* stopped at params->stop_after (its checkpoint written, if any) */
    DPC_RUN_CANCELLED = 2, /* hooks->on_step returned nonzero */
    DPC_RUN_FAILED = 3     /* a step or a checkpoint failed (err says why) */
} dpc_run_end;

typedef struct dpc_run_outcome {
    dpc_run_end end;
    size_t steps_done;  /* updates made when the driver returned */
    size_t failed_step; /* DPC_RUN_FAILED by a step: steps_done before that step */
    int step_failed;    /* 1: a step failed; 0: a checkpoint (DPC_RUN_FAILED) */
    int hook_rc;        /* DPC_RUN_CANCELLED: what on_step returned */
    double step_s;      /* seconds in r->ops->step (hooks->clock; 0 without one) */
} dpc_run_outcome;

/* Steps r to its end (or stop_after, or a cancelling hook), with checkpoints. info (may be NULL)
 * receives each step's record (the trainer's step record type, see dpc_run_ops.step). params and
 * hooks may be NULL (no stop, no hooks); out may be NULL. DPC_OK when every step was made or the
 * run stopped at stop_after; DPC_E_CANCELLED naming "on_step" when on_step stopped it ("cancelled
 * after step T"); a failing step's or checkpoint's own status and message otherwise (out says
 * which and where). */
DPC_API DPC_NODISCARD dpc_status dpc_run_drive(const dpc_run *r, void *info,
                                               const dpc_run_params *params,
                                               const dpc_run_hooks *hooks, dpc_run_outcome *out,
                                               dpc_error *err);

/* FNV-1a 64 of the bytes of v[0..n) (the params_hash of every trainer's report). */
DPC_API uint64_t dpc_params_hash(const double *v, size_t n);

/* The distributed layout of a trainer (one process: ranks 1, shard = every coordinate). Arrays
 * (ranks) owned by the trainer. bytes_per_step: bytes sent by all ranks together per step, mean
 * over the steps this trainer took (0 before the first; 0 for one process); communication
 * volume per step in doc/distributed.md. */
typedef struct dpc_dist_info {
    size_t ranks, rank;
    const size_t *threads;           /* (ranks) threads of each rank */
    const size_t *shard_begin;       /* (ranks + 1) rank r owns [shard_begin[r], shard_begin[r+1]) */
    const size_t *noise_state_bytes; /* (ranks) bytes of noise-mechanism state each rank keeps */
    double bytes_per_step;
    uint64_t bytes_sent;             /* bytes this rank sent so far (all collectives) */
} dpc_dist_info;
/* The report's "distributed" member: ranks, threads per rank, shard sizes, bytes moved per step
 * (all ranks), noise state bytes per rank (doc/distributed.md). */
struct dpc_json_writer;
DPC_API void dpc_dist_report_json(struct dpc_json_writer *w, const dpc_dist_info *d);
DPC_API void dpc_trainer_dist_info(const dpc_trainer *tr, dpc_dist_info *out);

/* FNV-1a 64 of the parameter bytes: a fingerprint for comparing runs bit for bit. */
DPC_API uint64_t dpc_trainer_params_hash(const dpc_trainer *tr);

/* ==== The privacy plan of a run, without a model (bindings) ================================= */

/* Front ends that compute the clipped gradient sums themselves (the Python / PyTorch binding)
 * need the trainer's run decisions and accounting without its model and data.
 * dpc_train_plan_new makes exactly the decisions dpc_trainer_new makes for a training set of
 * n_examples records: dpc_train_config_resolve, the sampler (dpc_sampler_new with rng), the
 * mechanism for n steps, the noise multiplier (calibrated or given) and the ledger; the same
 * configuration, N and rng give the same ledger as dpc_trainer_new. Such a front end then runs,
 * for t = 0 .. n-1 (as dpc_trainer_step does):
 *     I_t = dpc_sampler_batch(sampler, t)
 *     g_t = sum_{i in I_t} min(1, clip / ||g_i||) g_i
 *     h_t = (g_t + noise_scale * (B Z)_t) / expected_batch      (dpc_noise over the parameter
 *            coordinates, Z from stream DPC_STREAM_ID(DPC_STREAM_NOISE, 0) of rng)
 * and hands h_t to its optimizer (post-processing). Immutable after creation; the getters'
 * pointers live as long as the plan. */
typedef struct dpc_train_plan dpc_train_plan;

/* cfg as for dpc_trainer_new (threads and chunk are validated but unused); n_examples >= 1.
 * DPC_E_PRIVACY when the budget cannot be met. The plan's mechanism copies cfg->mech's arrays;
 * the resolved configuration (dpc_train_plan_config) keeps cfg's pointers as given. */
DPC_API DPC_NODISCARD dpc_status dpc_train_plan_new(dpc_train_plan **out,
                                                    const dpc_train_config *cfg,
                                                    size_t n_examples, const dpc_rng *rng,
                                                    dpc_error *err);
DPC_API void dpc_train_plan_free(dpc_train_plan *p);

DPC_API const dpc_train_config *dpc_train_plan_config(const dpc_train_plan *p); /* resolved */
DPC_API const dpc_ledger *dpc_train_plan_ledger(const dpc_train_plan *p);
DPC_API const dpc_sampler *dpc_train_plan_sampler(const dpc_train_plan *p);
DPC_API const dpc_mech *dpc_train_plan_mech(const dpc_train_plan *p);
/* clip x ledger noise_std: the std of each entry of Z in gradient-sum units. */
DPC_API double dpc_train_plan_noise_scale(const dpc_train_plan *p);
/* As dpc_trainer_epsilon_at: the epsilon of what the first t steps release. */
DPC_API DPC_NODISCARD dpc_status dpc_train_plan_epsilon_at(const dpc_train_plan *p, size_t t,
                                                           double *eps, dpc_error *err);

/* ==== Which mechanism for a run: the library's ranking ======================================= */

/* The shape of a run: N records, batch B, epochs, the budget (epsilon, delta; delta 0 = the
 * default from N, dpc_account_resolve_delta), the accountant (default PLD) and the optimizer's
 * momentum (the workload BSR / BLT are fitted to, as in dpc_train_config). */
typedef struct dpc_advise_query {
    size_t n_examples, batch, epochs;
    double epsilon, delta;
    int allow_large_delta;
    dpc_accountant accountant;
    double momentum;            /* in [0, 1) */
    int skip_slow;              /* 1: leave out candidates whose calibration takes seconds to
                                   minutes (the balls-in-bins sampler's accounting) */
} dpc_advise_query;

/* epochs 1, batch 256, accountant PLD, everything else 0 (n_examples and epsilon must be set). */
DPC_API void dpc_advise_query_init(dpc_advise_query *q);
/* The field table of dpc_advise_query (dpcorr/field.h): name, type, offset, default, range and
 * one-line doc of every field; dpc_advise_query_init writes its defaults and dpc_train_advise
 * range-checks the query through it (batch <= N and delta's rule stay its own). */
DPC_API const dpc_field_table *dpc_advise_query_fields(void);

/* One candidate: a mechanism with a sampler, calibrated to the budget by exactly the trainer's
 * decisions (dpc_train_plan_new), scored by the error it adds to the workload:
 *   error = noise_std_per_unit_clip x rmse (RMSE over the n steps of A B Z per unit noise std,
 *           A the workload of SGD with the query's momentum: prefix sums when it is 0, as
 *           `dpcorr compare`),
 * i.e. the RMSE of the noise that reaches the parameters, in units of the clip (times the
 * learning rate over the batch), at the budget, amplification included. Equal batches make it
 * comparable across candidates. */
typedef struct dpc_advice {
    dpc_mech_kind mech;
    dpc_sampler_kind sampler;
    size_t bands, groups;       /* BSR; cyclic Poisson (0: not applicable) */
    double nu;                  /* nu-DP-FTRL: dpc_strategy_best_nu for the run's shape */
    int ok;                     /* 0: the candidate does not apply or cannot meet the budget */
    char mechanism[96];         /* the ledger's mechanism description */
    char route[96];             /* the ledger's route */
    int amplified;
    double noise_multiplier, noise_std, rmse, error;
    double loss_ratio;          /* (error / DP-SGD's error)^2, NAN when DP-SGD has none */
    double epsilon;             /* the ledger's (<= the target) */
    double seconds;             /* wall time of its calibration */
    char why[400];              /* ok: the reason of its rank; else why it does not apply */
} dpc_advice;

#define DPC_ADVISE_MAX 8

/* Ranks the candidates for the run's shape: DP-SGD (Poisson), BSR with cyclic Poisson (bands
 * in {16, 32, 64} not above the steps per epoch, the best kept), BSR, BLT (the run's default
 * BLT) and nu-DP-FTRL (best nu) with fixed-order epochs, and BLT with balls-in-bins sampling
 * (unless skip_slow). out[0 .. *n_out) holds the applicable ones by increasing error, then the
 * others with their reason; cap >= DPC_ADVISE_MAX. Errors (field named): an invalid query
 * (n_examples, batch, epochs, epsilon, delta, momentum). A candidate that cannot meet the
 * budget is listed with ok = 0, not an error. Deterministic (fixed keys: no data, no noise). */
DPC_API DPC_NODISCARD dpc_status dpc_train_advise(const dpc_advise_query *q, dpc_advice *out,
                                                  size_t cap, size_t *n_out, dpc_error *err);

/* The advice as members of w's open object (dpcorr/io.h; `dpcorr advise --json`):
 * "n_examples", "batch", "epochs", "epsilon" (the query's), then "candidates": one object per
 * advice a[0..n) with "applicable" (ok), "mechanism", "sampler", "train_options" (run[i]: the
 * front end's spelling of the candidate's run, e.g. `dpcorr train` options; left out when run
 * or run[i] is NULL), and when ok "route", "amplified", "noise_multiplier",
 * "noise_std_per_unit_clip", "rmse", "error", "vs_sgd" (loss_ratio), "epsilon"; last
 * "calibration_s" (seconds) and "why". */
struct dpc_json_writer;
DPC_API void dpc_advise_json(struct dpc_json_writer *w, const dpc_advise_query *q,
                             const dpc_advice *a, size_t n, const char *const *run);

#ifdef __cplusplus
}
#endif
#endif
