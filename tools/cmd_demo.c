/* cmd_demo.c — `dpcorr demo`, the README's main job: Fashion-MNIST (Debian's
 * dataset-fashion-mnist), one MLP trained privately at (epsilon, delta) = (3, 1e-5) twice —
 * DP-SGD (Poisson sampling, amplified) and a correlated-noise mechanism (banded square root
 * strategy, cyclic Poisson sampling: amplified BandMF) — then a comparison table, JSON reports
 * and a plot. Both runs use the same data, model, epochs, batch and budget; the hyperparameters
 * were chosen on the training data's own split, never on the test set (doc/training.md). */
#include "demo_frontier.h"
#include "mpi_run.h"
#include "train_run.h"

#include <string.h>

/* The recipe (hyperparameters, model, mechanisms) is the library's: dpc_train_demo_setup. The
 * quick run (a smoke test) and the threads are the command's, written once here. */
#define QUICK_EPOCHS 2
#define QUICK_BATCH 100 /* 6000 images: the 32 cyclic-Poisson groups of 187 need a smaller batch */
#define QUICK_DATA "fashion-mnist:limit=6000"
#define DEMO_THREADS 2
#define STR_(x) #x
#define STR(x) STR_(x)
/* epochs and threads: the ranges of the trainer's rows, the defaults the recipe's and the
 * command's */

static const opt_spec D_EPOCHS = {
    .name = "--epochs", .metavar = "N", .type = OPT_UINT, .fields = dpc_train_config_fields,
    .flags = OPT_OWN_DEFAULT, .section = "options", .param = "epochs",
    .help = "epochs of both runs (default: the recipe's, shown by --dry-run; --quick "
            STR(QUICK_EPOCHS) ")",
    .example = "--epochs 3"};
static const opt_spec D_THREADS = {
    .name = "--threads", .metavar = "T", .type = OPT_UINT, .fields = dpc_train_config_fields,
    .flags = OPT_OWN_DEFAULT, .section = "options", .param = "threads",
    .help = "worker threads (default " STR(DEMO_THREADS) ")",
    .example = "--threads 1"};
static const opt_spec D_OUT = {
    .name = "--out", .metavar = "DIR", .type = OPT_STR, .flags = OPT_OUT_DIR, .section = "options",
    .param = "out", .help = "output directory of the reports and the plot (default out)",
    .example = "--out {tmp}/demo2"};
static const opt_spec D_QUICK = {
    .name = "--quick", .type = OPT_FLAG, .section = "options", .param = "quick",
    .help = "6000 training images, batch " STR(QUICK_BATCH) " and " STR(QUICK_EPOCHS)
            " epochs (a smoke test)", .example = "--quick"};
static const opt_spec D_SEED = {
    .name = "--seed", .metavar = "S", .type = OPT_UINT, .flags = OPT_BIG, .section = "options",
    .param = "seed", .help = "seed of both runs (seeded mode, default 1; recorded)",
    .example = "--seed 4"};
static const opt_spec D_PRECISION = {
    .name = "--precision", .metavar = "P", .type = OPT_CHOICE,
    .fields = dpc_train_config_fields, .section = "options", .param = "precision",
    .conflicts = "--frontier", .help = "double | float32: both runs train in float (doc/training.md compares "
            "it with double)",
    .example = "--precision float32"};

static const opt_spec D_FRONTIER = {
    .name = "--frontier", .type = OPT_FLAG, .section = "options", .param = "frontier",
    .help = "run instead the best configuration found on the training set's holdout "
            "(doc/training.md): ScatterNet features (cached), GroupNorm, private centering "
            "(composed into the budget), linear, BSR with cyclic Poisson sampling; writes "
            "DIR/frontier.json, frontier_run.json, frontier.png",
    .example = "--frontier"};

static const opt_spec *const DEMO_OPTS[] = {&D_EPOCHS, &D_THREADS, &D_OUT, &D_QUICK, &D_SEED,
                                            &D_PRECISION, &D_FRONTIER,
                                            &OPT_DRY_RUN, &OPT_HELP, NULL};

static const opt_cmd DEMO_CMD = {
    .name = "demo",
    .usage = "dpcorr demo [--frontier] [--epochs N] [--threads T] [--out DIR] [--quick] [--seed S]\n"
             "                   [--precision double|float32]",
    .about = "Trains an MLP (784-256-10, tanh) on Fashion-MNIST at epsilon = 3, delta = 1e-5 with\n"
             "DP-SGD and with a correlated-noise mechanism (BSR, amplified banded MF), prints a\n"
             "comparison table and writes DIR/demo.png and one JSON report per run.",
    .opts = DEMO_OPTS,
    .minimal = "--quick --out {tmp}/demo",
};

typedef struct demo_cfg {
    size_t epochs, batch, threads;
    uint64_t seed;
    const char *out, *spec;
    int quick, dry_run;
    dpc_precision precision;
} demo_cfg;

/* The options of run r: the library's recipe with the demo's epochs, batch, threads and
 * precision (the library resolves the rest). */
static void run_opts(train_opts *o, const demo_cfg *d, const dpc_train_demo *dm,
                     dpc_dataset *train, dpc_dataset *test, char *rep, size_t replen)
{
    train_opts_init(o);
    snprintf(rep, replen, "%s/%s.json", d->out, dm->name);
    o->fr.data = d->spec;
    o->fr.train = train;
    o->fr.test = test;
    frame_use_seed(&o->fr, d->seed); /* reproducible README numbers: warned once by cmd_demo */
    o->fr.warn_seed = 0;
    o->fr.report = rep;
    o->fr.label = dm->label;
    o->model = dm->model;
    o->cfg = dm->cfg;
    o->mech.p.kind = dm->cfg.mech.kind;
    o->mech.p.bands = dm->cfg.mech.bands;
    o->mech.have_kind = 1;
    o->cfg.epochs = d->epochs;
    o->cfg.batch = d->batch;
    o->cfg.threads = d->threads;
    o->cfg.precision = d->precision;
    o->dry_run = d->dry_run;
}

static void print_table(const demo_cfg *d, const train_result *res, const char *const *labels)
{
    printf("\n%-24s %9s %9s %9s %14s %11s %12s %9s\n", "mechanism", "test_acc", "epsilon", "delta",
           "z (per step)", "compositions", "examples/s", "time_s");
    for (int r = 0; r < 2; r++)
        printf("%-24s %9.4f %9.4g %9.3g %14.4g %11zu %12.0f %9.1f\n", labels[r], res[r].final_acc,
               res[r].ledger.epsilon, res[r].ledger.delta, res[r].ledger.noise_multiplier,
               res[r].ledger.rounds, res[r].examples_per_s, res[r].wall_s);
    printf("(z: noise multiplier of each Poisson-subsampled Gaussian composition; both runs "
           "are accounted with PLD, add/remove)\n");
    (void)d;
}

static int run_both(const demo_cfg *d, dpc_dataset *train, dpc_dataset *test)
{
    train_result res[2];
    dpc_train_demo dm[2];
    const char *labels[2];
    int rc = 0;
    memset(res, 0, sizeof res);
    for (int r = 0; r < 2; r++) {
        dpc_error err = {0};
        if (dpc_train_demo_setup(r, &dm[r], &err)) return CLI_RUNTIME; /* r is 0 or 1 */
        labels[r] = dm[r].label;
    }
    for (int r = 0; r < 2 && !rc; r++) {
        train_opts o;
        char rep[4200];
        run_opts(&o, d, &dm[r], train, test, rep, sizeof rep);
        if (d->dry_run) printf("# run %d: %s\n", r + 1, labels[r]);
        rc = train_run(&o, NULL, &res[r]);
        train_opts_free(&o);
    }
    if (!rc && !d->dry_run) {
        print_table(d, res, labels);
        char png[4200];
        snprintf(png, sizeof png, "%s/demo.png", d->out);
        if (mpi_run_rank() == 0) { /* under mpirun, rank 0 writes */
            rc = train_plot(png, res, labels, 2);
            if (!rc) printf("\nplot: %s\n", png);
        }
        printf("reports: %s/dpsgd.json %s/bsr.json (seeded mode, seed %llu: reproducible, not "
               "private against anyone who knows the seed)\n", d->out, d->out,
               (unsigned long long)d->seed);
    }
    train_result_free(&res[0]);
    train_result_free(&res[1]);
    return rc;
}

int cmd_demo(int argc, char **argv)
{
    opt_set s;
    int rc = opt_parse(&s, &DEMO_CMD, argc, argv, 1, 0);
    if (rc || s.help) return rc;
    demo_cfg d;
    dpc_train_demo recipe;
    dpc_error err = {0};
    if (dpc_train_demo_setup(0, &recipe, &err)) return CLI_RUNTIME; /* run 0 always exists */
    d.quick = opt_given(&s, &D_QUICK);
    d.epochs = opt_size(&s, &D_EPOCHS, d.quick ? QUICK_EPOCHS : recipe.cfg.epochs);
    d.threads = opt_size(&s, &D_THREADS, DEMO_THREADS);
    d.seed = opt_u64(&s, &D_SEED, 1);
    d.out = opt_str(&s, &D_OUT, "out");
    d.dry_run = s.dry_run;
    d.batch = d.quick ? QUICK_BATCH : recipe.cfg.batch;
    d.spec = d.quick ? QUICK_DATA : "fashion-mnist";
    int frontier = opt_given(&s, &D_FRONTIER);
    size_t frontier_epochs = opt_typed(&s, &D_EPOCHS) ? d.epochs : 0;
    d.precision = (dpc_precision)opt_word(&s, &D_PRECISION, DPC_PRECISION_DOUBLE);
    if ((rc = opt_finish(&s)) || (rc = cli_make_out_dir(&s, &D_OUT, d.out))) return rc;
    /* every file the demo writes into DIR (the reports, the plot and, on request, its data and
     * script), checked before any work against the data it reads and each other */
    static const char *const demo_files[] = {"dpsgd.json", "bsr.json", "demo.png", "demo.dat",
                                             "demo.gp", NULL};
    static const char *const frontier_files[] = {"frontier.json", "frontier_run.json",
                                                 "frontier.png", "frontier.dat", "frontier.gp",
                                                 NULL};
    if ((rc = cli_check_dir_outputs(&s, &D_OUT, d.out, frontier ? frontier_files : demo_files,
                                     "fashion-mnist")))
        return rc;
    /* the demo is an experiment with fixed, reproducible numbers: seeded, warned once */
    if (!d.dry_run && mpi_run_rank() == 0) frame_warn_seeded("demo", d.seed, "a demo with fixed, reproducible numbers");
    if (frontier) {
        return demo_frontier(d.out, d.threads, d.seed, frontier_epochs, d.quick, d.dry_run);
    }
    if (d.dry_run) {
        opt_dry_uint("epochs", d.epochs);
        opt_dry_uint("threads", d.threads);
        opt_dry_uint("seed", d.seed);
        opt_dry_str("out", d.out);
        opt_dry_uint("quick", (uint64_t)d.quick);
        opt_dry_str("precision", dpc_precision_name(d.precision));
    }
    dpc_rng rng;
    dpc_rng_seed(&rng, d.seed);
    dpc_dataset *train = NULL, *test = NULL;
    if (dpc_data_load_spec(&train, &test, d.spec, &rng, &err)) {
        fprintf(stderr, "dpcorr demo: %s\n(install Debian's dataset-fashion-mnist: "
                        "./scripts/setup.sh)\n", err.msg);
        return CLI_RUNTIME;
    }
    if (!d.dry_run)
        printf("dpcorr demo: Fashion-MNIST%s, MLP 784-256-10 (tanh), epsilon = 3, delta = 1e-5, "
               "%zu epochs, batch %zu, %zu threads, %s\n",
               d.quick ? " (6000-image subset, --quick)" : "", d.epochs, d.batch, d.threads,
               dpc_precision_name(d.precision));
    rc = run_both(&d, train, test);
    dpc_dataset_free(train);
    dpc_dataset_free(test);
    return rc;
}
