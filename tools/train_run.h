/* train_run.h — one training run as the CLI performs it (shared by `train` and `demo`):
 * load data, build the model and trainer, loop with progress and per-epoch evaluation,
 * checkpoints, JSON report and plot. */
#ifndef DPCORR_TOOLS_TRAIN_RUN_H
#define DPCORR_TOOLS_TRAIN_RUN_H

#include "cli.h"
#include "dpcorr/train.h"

typedef struct train_opts {
    const char *data;         /* --data spec */
    const char *model;        /* --model spec */
    cli_mech_opts mech;       /* --mech KIND [params] */
    dpc_train_config cfg;
    int secure;               /* --secure */
    uint64_t seed;            /* --seed (default 1) */
    const char *checkpoint;   /* --checkpoint F */
    size_t checkpoint_every;  /* steps (0 = each epoch) */
    const char *resume;       /* --resume F */
    const char *report;       /* --report F.json */
    const char *plot;         /* --plot F.png */
    const char *label;        /* name of the run in tables and plots */
    int quiet;
    size_t stop_after;        /* testing aid: stop (as if killed) after this many steps */
} train_opts;

typedef struct epoch_rec {
    size_t epoch, step;
    double train_loss, test_loss, test_acc, eps, time_s;
} epoch_rec;

typedef struct train_result {
    dpc_ledger ledger;
    epoch_rec *epochs;   /* malloc'ed (nepochs) */
    size_t nepochs;
    double final_acc, final_loss, wall_s, train_s, examples_per_s;
    uint64_t params_hash;
    size_t steps_done;
    char model_spec[DPC_MODEL_SPEC_LEN];
    size_t n_params;
    dpc_isa isa;         /* the kernels' instruction-set level (model and trainer) */
    size_t trainer_bytes; /* dpc_trainer_bytes */
    dpc_dist_info dist;  /* ranks, shards, bytes per step (arrays valid during train_run) */
} train_result;

void train_opts_init(train_opts *o);
/* Parses one train option at it; returns 1 consumed, 0 not a train option, -1 bad value. */
int train_opt(train_opts *o, cli_iter *it);
void train_opts_help(FILE *f);

/* Runs; train/test may be preloaded (then o->data only names them). Returns a CLI exit code. */
int train_run(train_opts *o, dpc_dataset *train, dpc_dataset *test, train_result *res);
void train_result_free(train_result *r);

/* Writes gnuplot PNG of test accuracy (and train loss) per epoch for one or more runs. Returns 0
 * on success, prints a warning and returns 1 when gnuplot is unavailable. */
int train_plot(const char *png, const train_result *runs, const char *const *labels, size_t nruns);

#endif
