/* frame.h — the run frame shared by every trainer of `dpcorr train` (dp-ftrl, lcgd-projected,
 * dp-ambssgd, dp-ssgd, dp-srgd): the common options (data, randomness, report, plot, label,
 * quiet), output paths checked before any work, seeding, data loading, and the report writer
 * (every trainer's privacy ledger under "privacy", as dpc_ledger_json writes it; privacy.sigma
 * is the noise multiplier). The run decisions are the library's: the frame parses and prints. */
#ifndef DPCORR_TOOLS_FRAME_H
#define DPCORR_TOOLS_FRAME_H

#include "cli.h"
#include "plot.h"
#include "dpcorr/train.h"

#include <math.h>
#include <stddef.h>

extern const opt_spec FR_DATA, FR_SEED, FR_SECURE, FR_REPORT, FR_PLOT, FR_LABEL, FR_QUIET;
/* Checkpoints and interruption (frame_ckpt.c): every trainer of `train` lists them. */
extern const opt_spec FR_CHECKPOINT, FR_CHECKPOINT_EVERY, FR_RESUME, FR_STOP_AFTER;
#define FRAME_CKPT_OPTS &FR_CHECKPOINT, &FR_CHECKPOINT_EVERY, &FR_RESUME, &FR_STOP_AFTER

/* The privacy options of every trainer of `train` (and `audit`), defined once here: name, value
 * type, the library parameter, the conflicts and the help. A trainer's table instantiates them
 * with what is its own: its library config's field table (the range, the default and the words
 * are the table's: tbl), the help section (its neighbouring relation), the alternative to
 * --epsilon (--noise-multiplier, or --nonprivate for dp-srgd), what the noise multiplier scales
 * in its algorithm, its calibration rules, and examples valid in its minimal invocation. */
#define FR_EPSILON_OPT(tbl, sec, alt, ex)                                                         \
    {.name = "--epsilon", .metavar = "E", .type = OPT_DOUBLE, .fields = tbl, .section = sec,     \
     .param = "epsilon", .conflicts = "--noise-multiplier --nonprivate",                         \
     .help = "target epsilon: the noise is calibrated by the accountant for this run "           \
             "(required, or " alt ")",                                                           \
     .example = ex}
#define FR_DELTA_OPT(tbl, sec, when_, ex)                                                         \
    {.name = "--delta", .metavar = "D", .type = OPT_DOUBLE, .fields = tbl, .section = sec,       \
     .param = "delta", .when = when_, .help = "target delta", .example = ex}
/* the override of the refusal of delta >= 1/N */
#define FR_LARGE_DELTA_OPT(sec, when_)                                                            \
    {.name = "--allow-large-delta", .type = OPT_FLAG, .section = sec,                             \
     .param = "allow_large_delta", .when = when_,                                                \
     .help = "accept delta >= 1/N (a mechanism may then publish a record outright)",             \
     .example = "--allow-large-delta"}
#define FR_NOISE_OPT(tbl, sec, scales, ex)                                                        \
    {.name = "--noise-multiplier", .metavar = "Z", .type = OPT_DOUBLE, .fields = tbl,             \
     .section = sec, .param = "noise_multiplier",                                                \
     .help = "use this noise multiplier instead of calibrating (" scales "); the run reports "    \
             "the epsilon it spends",                                                            \
     .example = ex}
#define FR_CALIBRATION_OPT(tbl, sec, when_, rules, ex)                                            \
    {.name = "--calibration", .metavar = "C", .type = OPT_CHOICE, .fields = tbl, .section = sec,  \
     .param = "calibration", .when = when_,                                                      \
     .help = "accountant: " rules "; the reported epsilon is always the "                        \
             "accountant's",                                                                     \
     .example = ex}

typedef struct run_frame {
    const opt_spec *data_opt;   /* the trainer's --data entry (frame_init: &FR_DATA) */
    const char *data;           /* --data SPEC */
    const char *report, *plot;  /* --report F.json, --plot F.png (NULL: none) */
    const char *label;          /* --label NAME (NULL: none) */
    int secure, quiet;          /* secure mode (the default; 0 with --seed), --quiet */
    int secure_typed;           /* --secure was typed (explicit default) */
    int warn_seed;              /* frame_seed warns of seeded mode (default 1; a caller that
                                   runs several seeded trainings warns once itself) */
    uint64_t seed;              /* --seed S (seeded mode only) */
    const char *checkpoint;     /* --checkpoint F (NULL: none) */
    size_t checkpoint_every;    /* --checkpoint-every K (0: at the end of each epoch only) */
    const char *resume;         /* --resume F (NULL: a fresh run) */
    size_t stop_after;          /* --stop-after K: stop as if killed after K steps (0: never) */
    dpc_rng rng;                /* the run's root generator (frame_seed) */
    dpc_dataset *train, *test;  /* loaded by frame_load, or set by the caller (borrowed) */
    dpc_data_shard shard;       /* the rows frame_load keeps (ranks 0: all) and the memory
                                   limit (--max-data-bytes) */
    int owned;                  /* 1: loaded by frame_load (frame_free frees them) */
    double t0;                  /* wall clock at frame_init */
} run_frame;

void frame_init(run_frame *f);
/* Reads the common options (marks them used). */
void frame_read(run_frame *f, opt_set *s);
/* Reads the checkpoint options (FRAME_CKPT_OPTS; --checkpoint-every only with --checkpoint). */
void frame_read_ckpt(run_frame *f, opt_set *s);
/* Before any work: --data (when need_data) and the output paths (--report, --plot,
 * --checkpoint). */
int frame_check(const run_frame *f, opt_set *s, int need_data);
/* f->rng: the OS key (secure mode, the default) or the seed (--seed: seeded mode, with a
 * one-line warning on stderr unless f->warn_seed is 0); with --resume F the generator stored in
 * F, whose mode and seed must be the ones given (secure by default, --seed S for a seeded
 * checkpoint, the same S). */
int frame_seed(run_frame *f, opt_set *s);
/* frame_seed's --resume branch (frame_ckpt.c). */
int frame_seed_resume(run_frame *f, opt_set *s);
/* Seeded mode with seed (programmatic runs: demo, repro). */
void frame_use_seed(run_frame *f, uint64_t seed);
/* "dpcorr CMD: warning: seeded mode (seed S): ... not private against anyone who knows it
 * (NOTE)" on stderr. */
void frame_warn_seeded(const char *cmd, uint64_t seed, const char *note);
/* "seeded mode, seed S (...)" or "secure mode (OS key)", for banners. */
const char *frame_rng_desc(dpc_rng_mode mode, uint64_t seed, char *buf, size_t len);
/* f->train, f->test from --data (nothing when the caller set them). */
int frame_load(run_frame *f, opt_set *s);
void frame_free(run_frame *f);
/* Dry-run lines of the common options. */
void frame_dry(const run_frame *f);
/* Dry-run lines of the checkpoint options. */
void frame_dry_ckpt(const run_frame *f);
/* "[label] " or "" (for progress lines). */
const char *frame_tag(const run_frame *f, char *buf, size_t len);

/* The report: open (header: dpcorr_version, algo, label, the randomness), then the trainer's
 * sections through the writer (the library's dpc_dataset_report_json, dpc_ledger_report_json
 * and its own), then close. */
FILE *frame_report_open(const run_frame *f, dpc_json_writer *w, const char *algo);
/* "isa_levels": the level per kernel family this process uses, whether DPCORR_ISA forced it,
 * and the measured ns per unit per level (dpc_tune_isa; absent when forced or failed). */
void frame_report_isa(dpc_json_writer *w);
/* Renames the finished report over F.json (frame_report_open wrote a temporary beside it, so a
 * failed write leaves the previous report as it was): 0, or CLI_RUNTIME after printing the
 * write error. */
int frame_report_close(dpc_json_writer *w, FILE *fp, const char *path);

/* A PNG of the panels at png (DIR/NAME.png: DIR/NAME.dat and .gp beside it). 0, or CLI_RUNTIME
 * after printing why (no gnuplot, a write error). */
int frame_plot(const char *png, const plot_panel *panels, size_t npanels);

/* ---- checkpoints of the papers' trainers (frame_ckpt.c; the container of dpcorr/train.h) ---- */

/* A container of trainer kind `kind` for this run (its generator), with the frame's items: the
 * data spec and the training set's content hash. 0, or CLI_RUNTIME after printing why. */
int frame_ckpt_new(const run_frame *f, const char *kind, dpc_ckpt **out);
/* Writes ck to --checkpoint F. 0, or CLI_RUNTIME after printing why. */
int frame_ckpt_write(const run_frame *f, const dpc_ckpt *ck);
/* Reads --resume F as kind and matches it against run (this run's container): a changed option
 * is named by its flag (opt_fail_lib), a bad file by --resume. 0, or the exit code. */
int frame_ckpt_read(const run_frame *f, opt_set *s, const char *kind, const dpc_ckpt *run,
                    dpc_ckpt **saved);
/* A library error of a trainer's _restore: printed as --resume's; the exit code. */
int frame_ckpt_fail(const opt_set *s, const dpc_error *err);

/* ---- every trainer of `train` run by the library's driver (frame_run.c) --------------------
 *
 * Every trainer (dp-ftrl, dp-ambssgd, dp-ssgd, dp-srgd, lcgd-projected) is a dpc_run
 * (dpcorr/train.h: the library's ops table) stepped by dpc_run_drive through frame_run, which
 * gives it the frame's --checkpoint-every and --stop-after: after each step the command's
 * on_step (progress, telemetry, per-epoch records), then a checkpoint when due (--checkpoint-every
 * K, the end of the run, or the command's own points), then --stop-after. Checkpoints of container
 * trainers (ops->own_file 0) are the frame's items (frame_ckpt_new), the command's items, the
 * trainer's _save and the command's sections; dp-ftrl's (own_file 1) are the trainer's own file. */
typedef struct frame_loop {
    dpc_run run;          /* the trainer (dpc_*_run_ops) */
    void *info;           /* the trainer's step record, filled by each step (ops->step) */
    const char *unit;     /* "step", "round", "iterate": messages ("resumed at round 3") */
    void *ctx;            /* the command's, passed to the hooks */
    /* After each step (t = steps done; info filled): 0, or an exit code (message printed). */
    int (*on_step)(void *ctx, const void *info, size_t t);
    /* Checkpoint points beyond --checkpoint-every and the end (dp-ftrl: each epoch); NULL: none. */
    int (*ckpt_due)(void *ctx, size_t t);
    /* Container trainers: the command's items (before the trainer's state) and sections (after
     * it); ckpt_get reads its sections back on --resume (0, or an exit code, message printed). */
    void (*ckpt_items)(void *ctx, dpc_ckpt *ck);
    dpc_status (*ckpt_put)(void *ctx, dpc_ckpt *ck, dpc_error *err);
    int (*ckpt_get)(void *ctx, const dpc_ckpt *ck);
    double step_s;        /* out: seconds spent in ops->step */
} frame_loop;

#define FRAME_STOPPED (-1) /* frame_run: stopped by --stop-after */

/* --resume F into the trainer (and the command's sections): a changed option is named by its
 * flag, a bad file by --resume; "resumed at UNIT T" on stderr unless quiet (unit NULL: not
 * printed). 0, or the exit code. */
int frame_resume(const run_frame *f, opt_set *s, frame_loop *L);
/* The remaining steps, with checkpoints: 0, FRAME_STOPPED, or an exit code (message printed). */
int frame_run(const run_frame *f, frame_loop *L);


#endif
