/* cmd_compare.c — `dpcorr compare`: every mechanism side by side at n steps, single and
 * multiple participation. The table is the library's (dpc_mech_compare: the rows, nu at
 * dpc_strategy_best_nu, BSR, BISR and BLT at the defaults a run of this n, k and b gets, damping
 * and lambda at the best of the library's grids by scaled RMSE); this file parses the options,
 * shows the progress and prints. */
#include "cli.h"
#include "progress.h"

#include <string.h>

/* The progress of both tables as one count: the library reports each table's evaluations
 * (done of DPC_MECH_COMPARE_EVALS); the second table's are offset by the first's. */
typedef struct cmp_progress {
    cli_progress pr;
    dpc_progress inner;
    double offset;
} cmp_progress;

static int cmp_progress_fn(void *ctx, double done, double total)
{
    cmp_progress *c = ctx;
    (void)total;
    return c->inner.fn ? c->inner.fn(c->inner.ctx, c->offset + done, 2.0 * DPC_MECH_COMPARE_EVALS)
                       : 0;
}

static void print_table(const dpc_mech_compare_row *rows, size_t nr, const char *title,
                        double sgd_loss)
{
    printf("\n%s\n", title);
    printf("%-30s %9s %9s %9s %11s %11s %7s %8s %7s\n", "mechanism", "sens", "rmse", "max_err",
           "scaled_rmse", "scaled_max", "state", "anytime", "vs SGD");
    for (size_t i = 0; i < nr; i++) {
        const dpc_mech_compare_row *r = &rows[i];
        double sr = r->sensitivity * r->rmse;
        char st[32];
        snprintf(st, sizeof st, "%zu%s", r->state_floats, r->replay && r->state_floats ? "/0" : "");
        printf("%-30s %9.4g%s%9.4g %9.4g %11.4g %11.4g %7s %8s %6.3fx\n", r->name, r->sensitivity,
               r->exact ? " " : "*", r->rmse, r->max_error, sr, r->sensitivity * r->max_error, st,
               r->anytime ? "yes" : "no", sr * sr / sgd_loss);
    }
}

/* One table: the library's comparison (dpc_mech_compare) for this pattern, printed. */
static int run_setting(size_t n, const dpc_participation *part, const char *title,
                       const opt_set *s, cmp_progress *cp)
{
    dpc_mech_compare_params p;
    dpc_mech_compare_params_init(&p, n);
    p.part = *part;
    p.progress.fn = cmp_progress_fn;
    p.progress.ctx = cp;
    dpc_mech_compare_row *rows = NULL;
    size_t nr = 0, failed = 0;
    dpc_error first, err;
    memset(&err, 0, sizeof err);
    dpc_status st = dpc_mech_compare(&p, &rows, &nr, &failed, &first, &err);
    cp->offset += DPC_MECH_COMPARE_EVALS;
    cli_progress_end(&cp->pr);
    if (st) return opt_fail_lib(s, &err);
    double sgd = rows[0].sensitivity * rows[0].rmse;
    print_table(rows, nr, title, sgd * sgd);
    if (failed) printf("(%zu configurations not shown; the first: %s)\n", failed, first.msg);
    dpc_mech_compare_free(rows);
    return 0;
}

/* The options set fields of dpc_mech_compare_params (the second table's pattern its nested
 * part): type and range are its table's; steps' default too, the pattern's defaults are
 * dpc_mech_compare_multi_part's. */
#define CP_FIELD .fields = dpc_mech_compare_params_fields
static const opt_spec C_STEPS = {
    .name = "--steps", .metavar = "N", .type = OPT_UINT, CP_FIELD, .section = "options",
    .param = "steps",
    .help = "number of steps n (seconds; with many participations up to a minute, with progress)",
    .example = "--steps 300"};
static const opt_spec C_PARTICIPATIONS = {
    .name = "--participations", .metavar = "K", .type = OPT_UINT, CP_FIELD,
    .flags = OPT_OWN_DEFAULT, .section = "options",
    .param = "part.k",
    .help = "participations of the second table (default: the library's for a comparison)",
    .example = "--participations 3"};
static const opt_spec C_MIN_SEP = {
    .name = "--min-sep", .metavar = "B", .type = OPT_UINT, CP_FIELD, .flags = OPT_OWN_DEFAULT,
    .section = "options",
    .param = "part.b",
    .help = "their minimum separation (default: the farthest apart they fit, N/K)",
    .example = "--min-sep 7"};

static const opt_spec *const COMPARE_OPTS[] = {&C_STEPS, &C_PARTICIPATIONS, &C_MIN_SEP,
                                               &OPT_DRY_RUN, &OPT_HELP, NULL};

static const opt_cmd COMPARE_CMD = {
    .name = "compare",
    .usage = "dpcorr compare [--steps N] [--participations K] [--min-sep B]",
    .about = "Compares every mechanism at N steps: single participation, then K participations\n"
             "at min-separation B. Columns: sensitivity (* = upper bound), RMSE and max error of\n"
             "the prefix sums per unit noise, both times the sensitivity (error at equal\n"
             "privacy), generator state in floats per coordinate (buffer/replay), anytime, and\n"
             "the loss (scaled RMSE^2) relative to DP-SGD. nu is the library's best\n"
             "(dpc_strategy_best_nu); BSR, BISR and BLT are the library's defaults for this\n"
             "n, k and B (what train uses); damping and lambda the best of a grid.",
    .opts = COMPARE_OPTS,
    .minimal = "",
};

int cmd_compare(int argc, char **argv)
{
    opt_set s;
    int rc = opt_parse(&s, &COMPARE_CMD, argc, argv, 1, 0);
    if (rc || s.help) return rc;
    dpc_mech_compare_params cp0; /* the table's defaults: steps */
    dpc_field_defaults(dpc_mech_compare_params_fields(), &cp0);
    opt_read_field(&s, &C_STEPS, &cp0);
    size_t n = cp0.steps;
    dpc_participation multi = {DPC_PART_MINSEP, opt_size(&s, &C_PARTICIPATIONS, 0),
                               opt_size(&s, &C_MIN_SEP, 0)}; /* 0: the library's */
    dpc_mech_compare_multi_part(n, &multi);
    size_t k = multi.k, b = multi.b;
    if ((rc = opt_finish(&s))) return rc;
    if (s.dry_run) {
        opt_dry_uint("steps", n);
        opt_dry_uint("part.k", k);
        opt_dry_uint("part.b", b);
        return 0;
    }
    double c0 = cli_now();
    printf("dpcorr %s: mechanism comparison at n = %zu steps (prefix-sum workload)\n",
           dpc_version(), n);
    fflush(stdout);
    cmp_progress cp;
    memset(&cp, 0, sizeof cp);
    cp.inner = cli_progress_start(&cp.pr, "dpcorr compare", "mechanism evaluations", 0);
    dpc_participation single = {DPC_PART_MINSEP, 1, 1};
    char title[160];
    snprintf(title, sizeof title, "== single participation (k = 1)");
    rc = run_setting(n, &single, title, &s, &cp);
    if (rc) return rc;
    snprintf(title, sizeof title, "== k = %zu participations, min-separation %zu", k, b);
    rc = run_setting(n, &multi, title, &s, &cp);
    printf("\n(* = sensitivity is an upper bound; state a/b = floats per coordinate in the "
           "buffer/replay form; %.1f s)\n",
           cli_now() - c0);
    return rc;
}
