/* cmd_optimize.c — `dpcorr mech optimize`: optimize a BLT, banded Toeplitz or dense strategy
 * for n steps, k participations b apart and a workload; save it as a strategy file (usable as
 * --kind/--mech file:PATH) and compare it with the closed-form strategies. */
#include "cli.h"
#include "dpcorr/strategy.h"

#include <math.h>
#include <string.h>
#include <time.h>

static void optimize_usage(FILE *f)
{
    fprintf(f,
            "usage: dpcorr mech optimize --kind blt|banded|dense --steps N --out FILE\n"
            "                            [--participations K --min-sep B] [--objective max|mean]\n"
            "                            [--bands B] [--buffers K] [--momentum M] [--json]\n\n"
            "Optimizes a strategy C for the loss sensitivity^2 x error^2 (error of the workload\n"
            "under the noise C^-1 Z: max row norm or RMSE), writes it to FILE (JSON; use it with\n"
            "--kind file:FILE in `mech`, --mech file:FILE in `account` and `train`) and prints the\n"
            "loss next to DP-SGD, optimal CC (nu=0), the best nu-DP-FTRL, BSR and BISR.\n\n"
            "  --kind KIND           blt (buffered linear Toeplitz, any n), banded (banded Toeplitz,\n"
            "                        needs --bands), dense (optimal dense \"ME\", n <= 2048)\n"
            "  --steps N             number of steps n (required)\n"
            "  --participations K    participations per example (default 1)\n"
            "  --min-sep B           minimum separation between participations (default 1)\n"
            "  --objective max|mean  max error (default) or RMSE\n"
            "  --bands B             banded: number of bands (required); dense, K > 1: bandwidth of\n"
            "                        C^T C (default B = min-sep); also the bands of BSR/BISR shown\n"
            "  --buffers K           blt: exactly K buffers (default: grow until one more improves\n"
            "                        the loss by less than 1%%, at most --max-buffers)\n"
            "  --max-buffers K       blt: at most K buffers (default 10)\n"
            "  --momentum M          workload: SGD with momentum M in [0,1) (default 0: prefix sums)\n"
            "  --decay A             workload: weight-decay factor A in (0,1] (default 1)\n"
            "  --iterations N        L-BFGS iterations per run (default: blt 500, banded 1000,\n"
            "                        dense 300, fewer for dense n > 450)\n"
            "  --out FILE            strategy file to write (required)\n"
            "  --json                one JSON object\n"
            "  --help                this text\n");
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int cmd_mech_optimize(int argc, char **argv)
{
    const char *cmd = "mech optimize";
    cli_iter it;
    cli_iter_init(&it, cmd, argc, argv, 1);
    dpc_strategy_problem pb;
    dpc_strategy_problem_init(&pb, 0);
    dpc_strategy_options o;
    dpc_strategy_options_init(&o);
    const char *kind = NULL, *outp = NULL, *v;
    int json = 0;
    while (cli_next(&it)) {
        if (cli_is(&it, "--help") || cli_is(&it, "-h")) {
            optimize_usage(stdout);
            return 0;
        } else if (cli_is(&it, "--json")) {
            json = 1;
        } else if (cli_is(&it, "--kind")) {
            if (!(kind = cli_value(&it))) return CLI_USAGE;
            if (strcmp(kind, "blt") && strcmp(kind, "banded") && strcmp(kind, "dense"))
                return cli_fail(cmd, "--kind: expected blt, banded or dense, got '%s'", kind);
        } else if (cli_is(&it, "--objective")) {
            if (!(v = cli_value(&it))) return CLI_USAGE;
            if (!strcmp(v, "max")) pb.objective = DPC_OBJECTIVE_MAX;
            else if (!strcmp(v, "mean")) pb.objective = DPC_OBJECTIVE_MEAN;
            else return cli_fail(cmd, "--objective: expected max or mean, got '%s'", v);
        } else if (cli_is(&it, "--out")) {
            if (!(outp = cli_value(&it))) return CLI_USAGE;
        } else {
            struct {
                const char *name;
                size_t *sz;
                double *d;
            } opts[] = {{"--steps", &pb.steps, NULL},
                        {"--participations", &pb.participations, NULL},
                        {"--min-sep", &pb.min_sep, NULL},
                        {"--bands", &o.bands, NULL},
                        {"--buffers", &o.buffers, NULL},
                        {"--max-buffers", &o.max_buffers, NULL},
                        {"--iterations", &o.max_iterations, NULL},
                        {"--momentum", NULL, &pb.workload.momentum},
                        {"--decay", NULL, &pb.workload.decay}};
            int found = 0;
            for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++) {
                if (!cli_is(&it, opts[i].name)) continue;
                found = 1;
                if (!(v = cli_value(&it))) return CLI_USAGE;
                if (opts[i].sz ? cli_size(&it, v, opts[i].sz) : cli_double(&it, v, opts[i].d))
                    return CLI_USAGE;
            }
            if (!found) return cli_fail(cmd, "%s: unknown option (see dpcorr mech optimize --help)",
                                        it.name);
        }
    }
    if (!kind) return cli_fail(cmd, "--kind: required (blt, banded or dense)");
    if (pb.steps == 0) return cli_fail(cmd, "--steps: required (number of steps n >= 1)");
    if (!outp) return cli_fail(cmd, "--out: required (strategy file to write)");
    if (pb.participations == 0) return cli_fail(cmd, "--participations: must be >= 1");
    if (pb.min_sep == 0) return cli_fail(cmd, "--min-sep: must be >= 1");
    dpc_error err = {0};
    if (dpc_strategy_problem_check(&pb, &err)) return cli_fail(cmd, "--%s", err.msg);
    if (!strcmp(kind, "banded") && o.bands == 0)
        return cli_fail(cmd, "--bands: banded needs the number of bands");
    if (!strcmp(kind, "dense") && pb.steps > 2048)
        return cli_fail(cmd, "--steps: dense optimization supports n <= 2048, got %zu", pb.steps);

    double t0 = now_s();
    dpc_strategy *s = NULL;
    dpc_status st = !strcmp(kind, "blt")      ? dpc_strategy_optimize_blt(&s, &pb, &o, &err)
                    : !strcmp(kind, "banded") ? dpc_strategy_optimize_banded(&s, &pb, &o, &err)
                                              : dpc_strategy_optimize_dense(&s, &pb, &o, &err);
    double secs = now_s() - t0;
    if (st) {
        fprintf(stderr, "dpcorr %s: %s\n", cmd, err.msg);
        return st == DPC_E_INVALID || st == DPC_E_RANGE ? CLI_USAGE : CLI_RUNTIME;
    }
    if (dpc_strategy_save(s, outp, &err)) {
        fprintf(stderr, "dpcorr %s: --out: %s\n", cmd, err.msg);
        dpc_strategy_free(s);
        return CLI_RUNTIME;
    }
    dpc_strategy_baseline bl[8];
    size_t nb = 0;
    size_t cmp_bands = o.bands ? o.bands : 0;
    if (dpc_strategy_baselines(&pb, cmp_bands, bl, 8, &nb, &err)) {
        fprintf(stderr, "dpcorr %s: comparison: %s\n", cmd, err.msg);
        nb = 0;
    }
    const dpc_strategy_loss *l = &s->achieved;
    char desc[96];
    if (s->kind == DPC_MECH_BLT) snprintf(desc, sizeof desc, "BLT, %zu buffers", s->nbuf);
    else if (s->kind == DPC_MECH_TOEPLITZ)
        snprintf(desc, sizeof desc, "banded Toeplitz, %zu bands", s->ncoeffs);
    else snprintf(desc, sizeof desc, "dense ME (n x n lower-triangular C)");
    if (json) {
        printf("{");
        cli_json_str(stdout, "kind", kind, 1);
        cli_json_str(stdout, "description", desc, 1);
        cli_json_int(stdout, "steps", (long long)pb.steps, 1);
        cli_json_int(stdout, "participations", (long long)pb.participations, 1);
        cli_json_int(stdout, "min_sep", (long long)pb.min_sep, 1);
        cli_json_str(stdout, "objective", dpc_objective_name(pb.objective), 1);
        cli_json_num(stdout, "momentum", pb.workload.momentum, 1);
        cli_json_num(stdout, "decay", pb.workload.decay, 1);
        cli_json_num(stdout, "loss", l->loss, 1);
        cli_json_num(stdout, "sensitivity", l->sensitivity, 1);
        cli_json_num(stdout, "error", l->error, 1);
        cli_json_bool(stdout, "exact", l->exact, 1);
        if (s->kind == DPC_MECH_BLT) cli_json_int(stdout, "buffers", (long long)s->nbuf, 1);
        if (s->kind == DPC_MECH_TOEPLITZ) cli_json_int(stdout, "bands", (long long)s->ncoeffs, 1);
        cli_json_int(stdout, "iterations", (long long)s->iterations, 1);
        cli_json_num(stdout, "seconds", secs, 1);
        cli_json_str(stdout, "out", outp, 1);
        printf("\"baselines\": [");
        for (size_t i = 0; i < nb; i++) {
            printf("%s{", i ? ", " : "");
            cli_json_str(stdout, "name", bl[i].name, 1);
            cli_json_num(stdout, "loss", bl[i].available ? bl[i].loss.loss : NAN, 1);
            cli_json_num(stdout, "ratio", bl[i].available ? bl[i].loss.loss / l->loss : NAN, 0);
            printf("}");
        }
        printf("]}\n");
    } else {
        printf("strategy          %s\n", desc);
        printf("steps             %zu\n", pb.steps);
        printf("participation     k = %zu, min-sep %zu\n", pb.participations, pb.min_sep);
        if (pb.workload.momentum == 0.0 && pb.workload.decay == 1.0)
            printf("workload          prefix sums\n");
        else
            printf("workload          SGD with momentum %g, decay %g\n", pb.workload.momentum,
                   pb.workload.decay);
        printf("objective         %s error\n", pb.objective == DPC_OBJECTIVE_MAX ? "max" : "mean (RMSE)");
        printf("loss              %.8g  (sensitivity %.6g, error %.6g%s)\n", l->loss,
               l->sensitivity, l->error, l->exact ? "" : ", sensitivity is a bound");
        printf("time              %.3f s  (%zu L-BFGS iterations)\n", secs, s->iterations);
        printf("saved             %s\n", outp);
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
    dpc_strategy_free(s);
    return 0;
}
