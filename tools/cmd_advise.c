/* cmd_advise.c — `dpcorr advise`: which mechanism and sampler for a run's shape. The ranking,
 * the calibrations and the reasons are the library's (dpc_train_advise); this file parses the
 * options, prints the table and spells the recommended run as `dpcorr train` options. */
#include "cli.h"
#include "frame.h"
#include "dpcorr/io.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* every option but --json sets a field of dpc_advise_query: type, range, default and words are
 * its table's */
#define AQ_FIELD .fields = dpc_advise_query_fields
#define SHAPE "run shape"
static const opt_spec A_N = {
    .name = "--n-examples", .metavar = "N", .type = OPT_UINT, AQ_FIELD, .section = SHAPE,
    .param = "n_examples", .help = "training examples N (required)",
    .example = "--n-examples 60000"};
static const opt_spec A_BATCH = {
    .name = "--batch", .metavar = "B", .type = OPT_UINT, AQ_FIELD, .section = SHAPE,
    .param = "batch", .help = "(expected) batch size B <= N", .example = "--batch 500"};
static const opt_spec A_EPOCHS = {
    .name = "--epochs", .metavar = "E", .type = OPT_UINT, AQ_FIELD, .section = SHAPE,
    .param = "epochs", .help = "passes over the data", .example = "--epochs 5"};
static const opt_spec A_MOMENTUM = {
    .name = "--momentum", .metavar = "M", .type = OPT_DOUBLE, AQ_FIELD, .section = SHAPE,
    .param = "momentum", .help = "the optimizer's momentum, the workload BSR and BLT are fitted to",
    .example = "--momentum 0.9"};
#undef SHAPE
#define PRIV "privacy"
static const opt_spec A_EPSILON = {
    .name = "--epsilon", .metavar = "E", .type = OPT_DOUBLE, AQ_FIELD, .section = PRIV,
    .param = "epsilon", .help = "target epsilon (required)", .example = "--epsilon 3"};
static const opt_spec A_DELTA = FR_DELTA_OPT(dpc_advise_query_fields, PRIV, NULL, "--delta 1e-7");
static const opt_spec A_LARGE_DELTA = {
    .name = "--allow-large-delta", .type = OPT_FLAG, AQ_FIELD, .section = PRIV,
    .param = "allow_large_delta",
    .help = "accept delta >= 1/N (a mechanism may then publish a record outright)",
    .example = "--allow-large-delta"};
static const opt_spec A_ACCOUNTANT = {
    .name = "--accountant", .metavar = "A", .type = OPT_CHOICE, AQ_FIELD, .section = PRIV,
    .param = "accountant",
    .help = "pld | rdp for amplified runs; gdp (exact) for unamplified ones unless zcdp is asked "
            "for",
    .example = "--accountant rdp"};
#undef PRIV
static const opt_spec A_QUICK = {
    .name = "--quick", .type = OPT_FLAG, AQ_FIELD, .section = "output", .param = "skip_slow",
    .help = "leave out the candidates whose calibration takes seconds to minutes (balls-in-bins "
            "sampling)",
    .example = "--quick"};

static const opt_spec *const ADVISE_OPTS[] = {
    &A_N,      &A_BATCH,        &A_EPOCHS, &A_MOMENTUM,    &A_EPSILON, &A_DELTA, &A_LARGE_DELTA,
    &A_ACCOUNTANT, &A_QUICK, &OPT_JSON, &OPT_DRY_RUN, &OPT_HELP, NULL};

static const opt_cmd ADVISE_CMD = {
    .name = "advise",
    .usage = "dpcorr advise --n-examples N --epsilon E [--batch B] [--epochs E] [--delta D]\n"
             "                     [--momentum M] [--accountant A] [--quick] [--json]",
    .about = "Ranks mechanisms and samplers for a run of N examples, batch B, E epochs at\n"
             "(epsilon, delta): each candidate is calibrated to the budget exactly as `dpcorr\n"
             "train` would (sampler, accounting route with amplification, noise multiplier) and\n"
             "scored by the error its noise adds to the parameters (noise std per unit clip x\n"
             "the RMSE of the SGD-with-momentum workload, prefix sums at momentum 0, per unit\n"
             "noise). Columns: z (noise multiplier),\n"
             "noise_std (per unit clip), rmse (per unit noise), error (their product), vs SGD\n"
             "(squared error relative to DP-SGD), calib_s (calibration time); then the reason\n"
             "of each rank and the recommended `dpcorr train` options (doc/choosing.md).",
    .opts = ADVISE_OPTS,
    .minimal = "--n-examples 2000 --batch 100 --epochs 2 --epsilon 2 --quick",
};

/* The `dpcorr train` options of a candidate (the CLI's spelling of the library's choice). */
static void train_opts(const dpc_advice *a, char *buf, size_t len)
{
    const char *mech = dpc_mech_kind_name(a->mech);
    if (a->sampler == DPC_SAMPLER_CYCLIC_POISSON)
        snprintf(buf, len, "--mech %s --bands %zu --sampler cyclic-poisson", mech, a->bands);
    else if (a->mech == DPC_MECH_NU)
        snprintf(buf, len, "--mech nu --nu %.3g", a->nu);
    else if (a->sampler == DPC_SAMPLER_BALLS_IN_BINS)
        snprintf(buf, len, "--mech %s --sampler balls-in-bins", mech);
    else
        snprintf(buf, len, "--mech %s", mech);
}

/* The library's JSON record of the advice, each candidate's run spelled as `train` options. */
static void print_json(const dpc_advise_query *q, const dpc_advice *a, size_t n)
{
    char o[DPC_ADVISE_MAX][160];
    const char *run[DPC_ADVISE_MAX];
    for (size_t i = 0; i < n && i < DPC_ADVISE_MAX; i++)
        train_opts(&a[i], o[i], sizeof o[i]), run[i] = o[i];
    dpc_json_writer w;
    dpc_json_begin(&w, stdout);
    dpc_advise_json(&w, q, a, n < DPC_ADVISE_MAX ? n : DPC_ADVISE_MAX, run);
    dpc_json_finish(&w);
}

static void print_table(const dpc_advise_query *q, const dpc_advice *a, size_t n, double delta)
{
    size_t steps = q->epochs * (q->n_examples / q->batch);
    printf("dpcorr %s: mechanisms for N = %zu, batch %zu, %zu epochs (%zu steps), epsilon %g, "
           "delta %g%s\n\n",
           dpc_version(), q->n_examples, q->batch, q->epochs, steps, q->epsilon, delta,
           q->delta == 0 ? " (the default for N)" : "");
    printf("%-4s %-44s %-15s %8s %9s %8s %9s %8s %7s\n", "rank", "mechanism", "sampler", "z",
           "noise_std", "rmse", "error", "vs SGD", "calib_s");
    size_t r = 0;
    for (size_t i = 0; i < n; i++) {
        if (!a[i].ok) continue;
        printf("%-4zu %-44.44s %-15s %8.4g %9.4g %8.4g %9.4g %7.3fx %7.1f\n", ++r, a[i].mechanism,
               dpc_sampler_kind_name(a[i].sampler), a[i].noise_multiplier, a[i].noise_std,
               a[i].rmse, a[i].error, a[i].loss_ratio, a[i].seconds);
    }
    printf("\nwhy:\n");
    r = 0;
    for (size_t i = 0; i < n; i++)
        if (a[i].ok) printf("  %zu. %s\n", ++r, a[i].why);
    int header = 0;
    for (size_t i = 0; i < n; i++) {
        if (a[i].ok) continue;
        if (!header++) printf("\nnot applicable:\n");
        printf("  %s with %s sampling: %s\n", a[i].mechanism, dpc_sampler_kind_name(a[i].sampler),
               a[i].why);
    }
    if (n && a[0].ok) {
        char o[160];
        train_opts(&a[0], o, sizeof o);
        char m[48] = "";
        if (q->momentum > 0) snprintf(m, sizeof m, " --momentum %g", q->momentum);
        printf("\nrecommended: dpcorr train %s --epochs %zu --batch %zu --epsilon %g%s ...\n", o,
               q->epochs, q->batch, q->epsilon, m);
    }
    printf("(error = noise std per unit clip x workload RMSE per unit noise, workload %s; vs SGD = "
           "squared error / DP-SGD's)\n", q->momentum > 0 ? "SGD with momentum" : "prefix sums");
}

int cmd_advise(int argc, char **argv)
{
    opt_set s;
    int rc = opt_parse(&s, &ADVISE_CMD, argc, argv, 1, 0);
    if (rc || s.help) return rc;
    dpc_advise_query q;
    dpc_advise_query_init(&q);
    if (!opt_given(&s, &A_N)) return opt_fail_at(&s, &A_N, "required (e.g. --n-examples 60000)");
    if (!opt_given(&s, &A_EPSILON)) return opt_fail_at(&s, &A_EPSILON, "required (e.g. --epsilon 3)");
    static const opt_spec *const read[] = {&A_N, &A_BATCH, &A_EPOCHS, &A_MOMENTUM, &A_EPSILON,
                                           &A_DELTA, &A_LARGE_DELTA, &A_ACCOUNTANT, &A_QUICK};
    for (size_t i = 0; i < sizeof read / sizeof read[0]; i++) opt_read_field(&s, read[i], &q);
    int json = opt_given(&s, &OPT_JSON);
    if ((rc = opt_finish(&s))) return rc;
    double delta = 0;
    dpc_error err = {0};
    if (dpc_account_resolve_delta(q.delta, q.n_examples, q.allow_large_delta, &delta, NULL, &err))
        return opt_fail_lib(&s, &err);
    if (s.dry_run) {
        dpc_advise_query shown = q; /* the query as resolved: delta derived from N */
        shown.delta = delta;
        opt_dry_fields(dpc_advise_query_fields(), &shown, "");
        opt_dry_uint("json", (uint64_t)json);
        return 0;
    }
    dpc_advice a[DPC_ADVISE_MAX];
    size_t n = 0;
    if (dpc_train_advise(&q, a, DPC_ADVISE_MAX, &n, &err)) return opt_fail_lib(&s, &err);
    if (json) print_json(&q, a, n);
    else print_table(&q, a, n, delta);
    return 0;
}
