/* cmd_mech.c — `dpcorr mech`: sensitivity, error and memory of one mechanism. */
#include "cli.h"

#include <math.h>
#include <string.h>

static void mech_usage(FILE *f)
{
    fprintf(f,
            "usage: dpcorr mech --kind KIND --steps N [kind parameters]\n"
            "                   [--participations K --min-sep B [--cyclic]] [--json]\n"
            "       dpcorr mech optimize --kind blt|banded|dense ...  (see mech optimize --help)\n\n"
            "Prints the sensitivity of the strategy C (per unit clip norm), the error of the\n"
            "workload A under the noise B Z (RMSE over steps and max row norm, per unit noise\n"
            "std), both also multiplied by the sensitivity (the error at a fixed privacy level),\n"
            "the generator state per model coordinate and whether the strategy is anytime.\n\n");
    cli_mech_help(f, "--kind");
    fprintf(f,
            "error workload:\n"
            "  --workload-momentum M  error of SGD with momentum M in [0,1) (default 0: prefix sums)\n"
            "  --workload-decay A     ... and weight-decay factor A in (0,1] (default 1)\n"
            "output:\n"
            "  --json                 one JSON object\n"
            "  --help                 this text\n");
}

int cmd_mech(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "optimize")) return cmd_mech_optimize(argc - 1, argv + 1);
    cli_mech_opts mo;
    cli_mech_opts_init(&mo);
    cli_iter it;
    cli_iter_init(&it, "mech", argc, argv, 1);
    int json = 0, rc = 0;
    dpc_workload wl = DPC_WORKLOAD_PREFIX;
    while (cli_next(&it)) {
        int r = cli_mech_opt(&mo, &it, "--kind");
        if (r < 0) {
            rc = CLI_USAGE;
            goto done;
        }
        if (r > 0) continue;
        const char *v;
        if (cli_is(&it, "--help") || cli_is(&it, "-h")) {
            mech_usage(stdout);
            goto done;
        } else if (cli_is(&it, "--json")) {
            json = 1;
        } else if (cli_is(&it, "--workload-momentum")) {
            if (!(v = cli_value(&it)) || cli_double(&it, v, &wl.momentum)) {
                rc = CLI_USAGE;
                goto done;
            }
        } else if (cli_is(&it, "--workload-decay")) {
            if (!(v = cli_value(&it)) || cli_double(&it, v, &wl.decay)) {
                rc = CLI_USAGE;
                goto done;
            }
        } else {
            rc = cli_fail("mech", "%s: unknown option (see dpcorr mech --help)", it.name);
            goto done;
        }
    }
    if ((rc = cli_mech_finish(&mo, "mech", "--kind"))) goto done;

    dpc_error err = {0};
    dpc_mech *m = NULL;
    if (dpc_mech_new(&m, &mo.p, &err)) {
        rc = cli_fail("mech", "%s", err.msg);
        goto done;
    }
    dpc_sensitivity sv;
    dpc_mech_error me;
    if (dpc_mech_sensitivity(m, &mo.part, &sv, &err) || dpc_mech_error_of(m, &wl, &me, &err)) {
        fprintf(stderr, "dpcorr mech: %s\n", err.msg);
        rc = (err.status == DPC_E_INVALID) ? CLI_USAGE : CLI_RUNTIME;
        dpc_mech_free(m);
        goto done;
    }
    double ginf = NAN;
    dpc_error err2 = {0};
    if (dpc_mech_limit_sensitivity(m, &ginf, &err2)) ginf = NAN;
    char desc[128];
    dpc_mech_describe(m, desc, sizeof desc);
    size_t sbuf = dpc_mech_state_floats(m, DPC_NOISE_BUFFER);
    int replay = dpc_mech_form_available(m, DPC_NOISE_REPLAY);
    int anytime = dpc_mech_is_anytime(m);
    if (json) {
        printf("{");
        cli_json_str(stdout, "kind", dpc_mech_kind_name(mo.p.kind), 1);
        cli_json_str(stdout, "description", desc, 1);
        cli_json_int(stdout, "steps", (long long)mo.p.steps, 1);
        cli_json_int(stdout, "participations", (long long)mo.part.k, 1);
        cli_json_int(stdout, "participations_effective", (long long)sv.k_effective, 1);
        cli_json_int(stdout, "min_sep", (long long)mo.part.b, 1);
        cli_json_str(stdout, "participation", mo.part.kind == DPC_PART_CYCLIC ? "cyclic" : "min-sep", 1);
        cli_json_num(stdout, "sensitivity", sv.value, 1);
        cli_json_bool(stdout, "sensitivity_exact", sv.exact, 1);
        cli_json_str(stdout, "sensitivity_method", dpc_sens_method_name(sv.method), 1);
        cli_json_num(stdout, "rmse", me.rmse, 1);
        cli_json_num(stdout, "max_error", me.max_error, 1);
        cli_json_num(stdout, "scaled_rmse", sv.value * me.rmse, 1);
        cli_json_num(stdout, "scaled_max_error", sv.value * me.max_error, 1);
        cli_json_num(stdout, "gamma_inf", ginf, 1);
        cli_json_int(stdout, "state_floats_per_coord", (long long)sbuf, 1);
        if (replay) cli_json_int(stdout, "state_floats_per_coord_replay", 0, 1);
        cli_json_bool(stdout, "anytime", anytime, 0);
        printf("}\n");
    } else {
        printf("mechanism            %s\n", desc);
        printf("steps                %zu\n", mo.p.steps);
        printf("participation        k = %zu (%zu possible), %s %zu\n", mo.part.k, sv.k_effective,
               mo.part.kind == DPC_PART_CYCLIC ? "period" : "min-sep", mo.part.b);
        printf("sensitivity          %.6g  (%s)\n", sv.value, dpc_sens_method_name(sv.method));
        if (!isnan(ginf)) printf("limit sensitivity    %.6g  (n -> infinity, single participation)\n", ginf);
        printf("rmse                 %.6g\n", me.rmse);
        printf("max error            %.6g\n", me.max_error);
        printf("scaled rmse          %.6g  (sensitivity x rmse)\n", sv.value * me.rmse);
        printf("scaled max error     %.6g\n", sv.value * me.max_error);
        printf("state per coordinate %zu floats (buffer form)%s\n", sbuf,
               replay ? ", 0 (replay form)" : "");
        printf("anytime              %s\n", anytime ? "yes" : "no");
    }
    dpc_mech_free(m);
done:
    cli_mech_opts_free(&mo);
    return rc;
}
