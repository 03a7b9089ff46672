/* train_run.h — one run of the DP-FTRL trainer (DP-SGD or any correlated-noise mechanism) as the
 * CLI performs it, shared by `train`, `demo` and the repro targets: the run frame (seed, data,
 * report, plot; frame.h), the model, the configuration resolved by the library
 * (dpc_train_config_resolve), the training loop with progress and per-epoch evaluation,
 * checkpoints, the JSON report and the plot. */
#ifndef DPCORR_TOOLS_TRAIN_RUN_H
#define DPCORR_TOOLS_TRAIN_RUN_H

#include "frame.h"
#include "dpcorr/train.h"

typedef struct train_opts {
    run_frame fr;             /* data, seed/secure, report, plot, label, quiet; checkpoint,
                                 checkpoint_every (0: each epoch), resume, stop_after */
    const char *model;        /* --model spec */
    const char *features;     /* --features spec (NULL: none) */
    const char *feature_cache; /* --feature-cache DIR ("none": no cache; NULL: the default) */
    cli_mech_opts mech;       /* --mech KIND [params] */
    dpc_train_config cfg;
    int dry_run;              /* print the resolved configuration and stop */
} train_opts;

typedef struct train_result {
    dpc_ledger ledger;
    dpc_train_record *epochs; /* malloc'ed (nepochs): the trainer's records */
    size_t nepochs;
    double final_acc, final_loss, wall_s, train_s, examples_per_s;
    uint64_t params_hash;
    size_t steps_done, resumed_from;
    char model_spec[DPC_MODEL_SPEC_LEN];
    size_t n_params;
    dpc_isa isa;         /* the kernels' instruction-set level (model and trainer) */
    size_t trainer_bytes; /* dpc_trainer_bytes */
    /* where the time went: dpc_trainer_new (calibration and set-up), the trainer's split of
     * its steps and evaluations, and epsilon-so-far accounting at the epochs' ends */
    double setup_s, account_s;
    dpc_train_times times;
    dpc_dist_info dist;  /* ranks, shards, bytes per step (arrays valid during train_run) */
} train_result;

/* The mechanism options of `train` (--mech, --mech-momentum, --mech-decay, --form). */
extern const mech_read TRAIN_MECH_READ;

/* ---- the option table of one dp-ftrl run (tools/cmd_train.c), shared by `train` and `audit` */

extern const opt_spec TR_ALGO, TR_MODEL, TR_FEATURES, TR_FEATURE_CACHE, TR_EPSILON, TR_DELTA,
    TR_NOISE, TR_LARGE_DELTA, TR_ACCOUNTANT, TR_SAMPLER, TR_GROUPS, TR_OPTIM, TR_EXEC,
    TR_PRECISION, TR_MAX_DATA_BYTES;

/* The entries that configure one run: data, model, features, privacy, sampling, optimizer,
 * mechanism, randomness, execution and output (read by train_read_run). */
#define TRAIN_RUN_OPTS                                                                             \
    &FR_DATA, &TR_MODEL, &TR_FEATURES, &TR_FEATURE_CACHE, &TR_EPSILON, &TR_DELTA, &TR_NOISE,      \
        &TR_LARGE_DELTA, &TR_ACCOUNTANT, &TR_SAMPLER, &TR_GROUPS, &TR_OPTIM,                     \
        MECH_KIND_OPTS(MO_MECH, MO_MECH_MOMENTUM, MO_MECH_DECAY), &MO_FORM, &FR_SEED,             \
        &FR_SECURE, &TR_EXEC, &TR_PRECISION, &FR_REPORT, &FR_PLOT,                               \
        &FR_LABEL, &FR_QUIET, &TR_MAX_DATA_BYTES

/* Reads the TRAIN_RUN_OPTS entries into o, each only where it applies (the values already in o
 * are the defaults: the frame's data, o->model, o->cfg); the mechanism through cli_mech_read.
 * Does not call opt_finish. Returns 0 or an exit code (message printed). */
int train_read_run(train_opts *o, opt_set *s);

/* Defaults (the library's dpc_train_config_init; epsilon unset) and an empty frame. */
void train_opts_init(train_opts *o);
void train_opts_free(train_opts *o);

/* Runs; o->fr.train/test may be preloaded (then o->fr.data only names them). s: the parsed
 * options of `train` for error mapping, or NULL for programmatic runs (demo, repro). Returns a
 * CLI exit code. */
int train_run(train_opts *o, opt_set *s, train_result *res);
void train_result_free(train_result *r);

/* The preparation of train_run without the training (for `audit`): seed, data, features,
 * mechanism files, model. *model is the caller's to free; res->model_spec and res->n_params are
 * set. Returns a CLI exit code. */
int train_prepare(train_opts *o, opt_set *s, train_result *res, dpc_model **model);
/* The dry-run lines of o with the configuration c the library resolved for it. */
void train_dry_print(const train_opts *o, const train_result *res, const dpc_train_config *c);

/* The default feature cache directory into buf: $XDG_CACHE_HOME/dpcorr, else
 * $HOME/.cache/dpcorr (parents created); "" when neither variable is set. */
void train_default_cache_dir(char *buf, size_t cap);

/* Applies the --features spec to f->train and f->test (each replaced by its features, which the
 * frame then owns; the old datasets are freed when the frame owned them). s: for error mapping
 * (NULL: programmatic). Returns a CLI exit code; prints progress unless f->quiet. */
int train_apply_features(run_frame *f, opt_set *s, const char *spec, const char *cache_opt,
                         size_t threads);

/* PNG of test accuracy and training loss per epoch for one or more runs. 0 or CLI_RUNTIME. */
int train_plot(const char *png, const train_result *runs, const char *const *labels, size_t nruns);

/* `train --algo NAME` (train_algos.c): the runner for NAME, NULL for the default trainer;
 * *bad = 1 (message printed) for an unknown name. */
int (*train_algo_lookup(int argc, char **argv, int *bad))(int, char **);

#endif
