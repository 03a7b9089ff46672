/* cmd_optimize.c — `dpcorr mech optimize`: optimize a BLT, banded Toeplitz or dense strategy
 * for n steps, k participations b apart and a workload; save it as a strategy file (usable as
 * --kind/--mech file:PATH) and compare it with the closed-form strategies. */
#include "cli.h"
#include "progress.h"
#include "dpcorr/strategy.h"

#include <math.h>
#include <string.h>

static const opt_spec P_KIND = {
    .name = "--kind", .metavar = "KIND", .type = OPT_CHOICE, .choices = "blt|banded|dense",
    .section = "problem", .param = "kind",
    .help = "blt (buffered linear Toeplitz, any n), banded (banded Toeplitz, needs --bands), "
            "dense (optimal dense \"ME\", n <= 2048) (required)",
    .example = "--kind banded --bands 4"};
/* the problem's and the optimizer's options set fields of dpc_strategy_problem and
 * dpc_strategy_options: type, range, default and words are their tables' */
#define SP_FIELD .fields = dpc_strategy_problem_fields, .section = "problem"
#define SO_FIELD .fields = dpc_strategy_options_fields, .section = "optimizer"
static const opt_spec P_STEPS = {
    .name = "--steps", .metavar = "N", .type = OPT_UINT, SP_FIELD, .param = "problem.steps,steps",
    .help = "number of steps n (required)", .example = "--steps 90"};
static const opt_spec P_PARTICIPATIONS = {
    .name = "--participations", .metavar = "K", .type = OPT_UINT, SP_FIELD,
    .param = "problem.participations,participations", .help = "participations per example",
    .example = "--participations 2"};
static const opt_spec P_MIN_SEP = {
    .name = "--min-sep", .metavar = "B", .type = OPT_UINT, SP_FIELD,
    .param = "problem.min_sep,min_sep", .help = "minimum separation between participations",
    .example = "--participations 2 --min-sep 20"};
static const opt_spec P_OBJECTIVE = {
    .name = "--objective", .metavar = "max|mean", .type = OPT_CHOICE, SP_FIELD,
    .param = "problem.objective,objective", .help = "max error or RMSE",
    .example = "--objective mean"};
static const opt_spec P_MOMENTUM = {
    .name = "--momentum", .metavar = "M", .type = OPT_DOUBLE, SP_FIELD,
    .param = "problem.workload.momentum,workload.momentum,momentum",
    .help = "workload: SGD with momentum M (0: prefix sums)", .example = "--momentum 0.5"};
static const opt_spec P_DECAY = {
    .name = "--decay", .metavar = "A", .type = OPT_DOUBLE, SP_FIELD,
    .param = "problem.workload.decay,workload.decay,decay",
    .help = "workload: weight-decay factor A", .example = "--decay 0.9"};
static const opt_spec P_BANDS = {
    .name = "--bands", .metavar = "B", .type = OPT_UINT, SO_FIELD, .param = "options.bands,bands",
    .help = "banded: number of bands (required); dense, K > 1: bandwidth of C^T C (unset: "
            "min-sep); every kind: the bands of the BSR/BISR shown for comparison (unset: "
            "max(min-sep, 16) for K > 1, else 32)",
    .example = "--bands 5"};
static const opt_spec P_BUFFERS = {
    .name = "--buffers", .metavar = "K", .type = OPT_UINT, SO_FIELD,
    .param = "options.buffers,buffers", .when = "--kind blt",
    .help = "exactly K buffers instead of growing them up to --max-buffers",
    .example = "--kind blt --buffers 2"};
static const opt_spec P_MAX_BUFFERS = {
    .name = "--max-buffers", .metavar = "K", .type = OPT_UINT, SO_FIELD,
    .param = "options.max_buffers,max_buffers", .when = "--kind blt", .conflicts = "--buffers",
    .help = "at most K buffers", .example = "--kind blt --max-buffers 3"};
static const opt_spec P_ITERATIONS = {
    .name = "--iterations", .metavar = "N", .type = OPT_UINT, SO_FIELD,
    .param = "options.max_iterations,max_iterations",
    .help = "L-BFGS iterations per run (fewer for dense n > 450)", .example = "--iterations 20"};
static const opt_spec P_OUT = {
    .name = "--out", .metavar = "FILE", .type = OPT_STR, .flags = OPT_OUT_FILE,
    .section = "output", .param = "out",
    .help = "strategy file to write (JSON; use it as --kind file:FILE in `mech`, --mech "
            "file:FILE in `account` and `train`) (required)",
    .example = "--out {tmp}/opt.json"};

static const opt_spec *const OPTIMIZE_OPTS[] = {
    &P_KIND, &P_STEPS, &P_PARTICIPATIONS, &P_MIN_SEP, &P_OBJECTIVE, &P_MOMENTUM, &P_DECAY,
    &P_BANDS, &P_BUFFERS, &P_MAX_BUFFERS, &P_ITERATIONS, &P_OUT, &OPT_JSON, &OPT_DRY_RUN,
    &OPT_HELP, NULL};

static const opt_cmd OPTIMIZE_CMD = {
    .name = "mech optimize",
    .usage = "dpcorr mech optimize --kind blt|banded|dense --steps N --out FILE\n"
             "                            [--participations K --min-sep B] [--objective max|mean]\n"
             "                            [--bands B] [--buffers K] [--momentum M] [--json]",
    .about = "Optimizes a strategy C for the loss sensitivity^2 x error^2 (error of the workload\n"
             "under the noise C^-1 Z: max row norm or RMSE), writes it to FILE and prints the loss\n"
             "next to DP-SGD, optimal CC (nu=0), the best nu-DP-FTRL, BSR and BISR.",
    .opts = OPTIMIZE_OPTS,
    .minimal = "--kind blt --steps 50 --out {tmp}/min.json",
};

typedef struct opt_job {
    int kind; /* 0 blt, 1 banded, 2 dense */
    const char *out;
    int json;
    dpc_strategy_problem pb;
    dpc_strategy_options o;
} opt_job;

static int read_job(opt_set *s, opt_job *j)
{
    static const char *const kinds[] = {"blt", "banded", "dense"};
    dpc_strategy_problem_init(&j->pb, 0);
    dpc_strategy_options_init(&j->o);
    j->kind = opt_word(s, &P_KIND, -1);
    j->out = opt_str(s, &P_OUT, NULL);
    j->json = opt_given(s, &OPT_JSON);
    static const opt_spec *const problem[] = {&P_STEPS, &P_PARTICIPATIONS, &P_MIN_SEP,
                                              &P_OBJECTIVE, &P_MOMENTUM, &P_DECAY};
    for (size_t i = 0; i < sizeof problem / sizeof problem[0]; i++)
        opt_read_field(s, problem[i], &j->pb);
    opt_read_field(s, &P_BANDS, &j->o);
    opt_read_field(s, &P_ITERATIONS, &j->o);
    if (j->kind == 0) {
        opt_read_field(s, &P_BUFFERS, &j->o);
        opt_read_field(s, &P_MAX_BUFFERS, &j->o);
    }
    if (j->kind < 0) return opt_fail_at(s, &P_KIND, "required (blt, banded or dense)");
    if (j->pb.steps == 0) return opt_fail_at(s, &P_STEPS, "required (number of steps n >= 1)");
    if (!j->out) return opt_fail_at(s, &P_OUT, "required (strategy file to write)");
    int rc = opt_finish(s);
    if (rc) return rc;
    dpc_error err = {0};
    if (dpc_strategy_problem_check(&j->pb, &err)) return opt_fail_lib(s, &err);
    if (j->kind == 1 && j->o.bands == 0)
        return opt_fail_at(s, &P_BANDS, "banded needs the number of bands");
    if ((rc = cli_check_outputs(s))) return rc;
    if (s->dry_run) {
        opt_dry_str("kind", kinds[j->kind]);
        opt_dry_fields(dpc_strategy_problem_fields(), &j->pb, "problem.");
        opt_dry_fields(dpc_strategy_options_fields(), &j->o, "options.");
        opt_dry_str("out", j->out);
        opt_dry_uint("json", (uint64_t)j->json);
    }
    return 0;
}

static void print_text(const opt_job *j, const dpc_strategy *st, double secs,
                       const dpc_strategy_baseline *bl, size_t nb)
{
    const dpc_strategy_problem *pb = &j->pb;
    const dpc_strategy_loss *l = &st->achieved;
    char desc[96];
    dpc_strategy_describe(st, desc, sizeof desc);
    printf("strategy          %s\n", desc);
    printf("steps             %zu\n", pb->steps);
    printf("participation     k = %zu, min-sep %zu\n", pb->participations, pb->min_sep);
    if (pb->workload.momentum == 0.0 && pb->workload.decay == 1.0)
        printf("workload          prefix sums\n");
    else
        printf("workload          SGD with momentum %g, decay %g\n", pb->workload.momentum,
               pb->workload.decay);
    printf("objective         %s error\n",
           pb->objective == DPC_OBJECTIVE_MAX ? "max" : "mean (RMSE)");
    printf("loss              %.8g  (sensitivity %.6g, error %.6g%s)\n", l->loss, l->sensitivity,
           l->error, l->exact ? "" : ", sensitivity is a bound");
    printf("time              %.3f s  (%zu L-BFGS iterations)\n", secs, st->iterations);
    printf("saved             %s\n", j->out);
    printf("\ncomparison (loss = sensitivity^2 x error^2; ratio = loss / optimized loss)\n");
    printf("  %-34s %14.8g  %8.4f\n", "optimized (this)", l->loss, 1.0);
    for (size_t i = 0; i < nb; i++) {
        if (bl[i].available)
            printf("  %-34s %14.8g  %8.4f\n", bl[i].name, bl[i].loss.loss,
                   bl[i].loss.loss / l->loss);
        else
            printf("  %-34s %14s\n", bl[i].name, "n/a");
    }
}

int cmd_mech_optimize(int argc, char **argv)
{
    opt_set s;
    opt_job j;
    int rc = opt_parse(&s, &OPTIMIZE_CMD, argc, argv, 1, 0);
    if (rc || s.help) return rc;
    if ((rc = read_job(&s, &j)) || s.dry_run) return rc;
    dpc_error err = {0};
    double t0 = cli_now();
    dpc_strategy *st = NULL;
    cli_progress pr;
    j.o.progress = cli_progress_start(&pr, "dpcorr mech optimize", "L-BFGS iterations", j.json);
    dpc_status stt = j.kind == 0   ? dpc_strategy_optimize_blt(&st, &j.pb, &j.o, &err)
                     : j.kind == 1 ? dpc_strategy_optimize_banded(&st, &j.pb, &j.o, &err)
                                   : dpc_strategy_optimize_dense(&st, &j.pb, &j.o, &err);
    double secs = cli_now() - t0;
    cli_progress_end(&pr);
    if (stt) return opt_fail_lib(&s, &err);
    if (dpc_strategy_save(st, j.out, &err)) {
        fprintf(stderr, "dpcorr mech optimize: --out: %s\n", err.msg);
        dpc_strategy_free(st);
        return CLI_RUNTIME;
    }
    dpc_strategy_baseline bl[8];
    size_t nb = 0;
    if (dpc_strategy_baselines(&j.pb, j.o.bands, bl, 8, &nb, &err)) {
        fprintf(stderr, "dpcorr mech optimize: comparison: %s\n", err.msg);
        nb = 0;
        rc = CLI_RUNTIME;
    }
    if (j.json) {
        dpc_json_writer w;
        dpc_json_begin_line(&w, stdout);
        dpc_strategy_report_json(&w, st, secs, j.out, bl, nb);
        dpc_json_finish(&w);
    } else {
        print_text(&j, st, secs, bl, nb);
    }
    dpc_strategy_free(st);
    return rc;
}
