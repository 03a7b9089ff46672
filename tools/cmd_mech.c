/* cmd_mech.c — `dpcorr mech`: sensitivity, error and memory of one mechanism. */
#include "cli.h"

#include <math.h>
#include <string.h>

/* the error workload's fields (dpc_workload: "workload.momentum" is its momentum) */
static const opt_spec WL_MOMENTUM = {
    .name = "--workload-momentum", .metavar = "M", .type = OPT_DOUBLE,
    .fields = dpc_workload_fields, .section = "error workload",
    .param = "workload.momentum,w.momentum", .help = "error of SGD with momentum M (0: prefix sums)",
    .example = "--workload-momentum 0.5"};
static const opt_spec WL_DECAY = {
    .name = "--workload-decay", .metavar = "A", .type = OPT_DOUBLE, .fields = dpc_workload_fields,
    .section = "error workload", .param = "workload.decay,w.decay",
    .help = "... and weight-decay factor A", .example = "--workload-decay 0.9"};

static const opt_spec *const MECH_OPTS[] = {
    MECH_KIND_OPTS(MO_KIND, MO_MOMENTUM, MO_DECAY), &MO_STEPS, &MO_PARTICIPATIONS, &MO_MIN_SEP,
    &MO_CYCLIC, &WL_MOMENTUM, &WL_DECAY, &OPT_JSON, &OPT_DRY_RUN, &OPT_HELP, NULL};

static const opt_cmd MECH_CMD = {
    .name = "mech",
    .usage = "dpcorr mech --kind KIND --steps N [kind parameters]\n"
             "                   [--participations K --min-sep B [--cyclic]] [--json]\n"
             "       dpcorr mech optimize --kind blt|banded|dense ...  (see mech optimize --help)",
    .about = "Prints the sensitivity of the strategy C (per unit clip norm), the error of the\n"
             "workload A under the noise B Z (RMSE over steps and max row norm, per unit noise\n"
             "std), both also multiplied by the sensitivity (the error at a fixed privacy level),\n"
             "the generator state per model coordinate and whether the strategy is anytime.",
    .opts = MECH_OPTS,
    .kind_opt = "--kind",
    .minimal = "--steps 100",
};

static const mech_read MECH_READ = {&MO_KIND, &MO_STEPS, &MO_MOMENTUM, &MO_DECAY, 1, 0, 0, 0};

static void print_json(const cli_mech_opts *mo, const char *desc, const dpc_sensitivity *sv,
                       const dpc_mech_error *me, double ginf, size_t sbuf, int replay, int anytime)
{
    dpc_json_writer w;
    dpc_json_begin_line(&w, stdout);
    dpc_json_str(&w, "kind", dpc_mech_kind_name(mo->p.kind));
    dpc_json_str(&w, "description", desc);
    dpc_json_int(&w, "steps", (long long)mo->p.steps);
    dpc_json_int(&w, "participations", (long long)mo->part.k);
    dpc_json_int(&w, "participations_effective", (long long)sv->k_effective);
    dpc_json_int(&w, "min_sep", (long long)mo->part.b);
    dpc_json_str(&w, "participation", mo->part.kind == DPC_PART_CYCLIC ? "cyclic" : "min-sep");
    dpc_json_num(&w, "sensitivity", sv->value);
    dpc_json_bool(&w, "sensitivity_exact", sv->exact);
    dpc_json_str(&w, "sensitivity_method", dpc_sens_method_name(sv->method));
    dpc_json_num(&w, "rmse", me->rmse);
    dpc_json_num(&w, "max_error", me->max_error);
    dpc_json_num(&w, "scaled_rmse", sv->value * me->rmse);
    dpc_json_num(&w, "scaled_max_error", sv->value * me->max_error);
    dpc_json_num(&w, "gamma_inf", ginf);
    dpc_json_int(&w, "state_floats_per_coord", (long long)sbuf);
    if (replay) dpc_json_int(&w, "state_floats_per_coord_replay", 0);
    dpc_json_bool(&w, "anytime", anytime);
    dpc_json_finish(&w);
}

static void print_text(const cli_mech_opts *mo, const char *desc, const dpc_sensitivity *sv,
                       const dpc_mech_error *me, double ginf, size_t sbuf, int replay, int anytime)
{
    printf("mechanism            %s\n", desc);
    printf("steps                %zu\n", mo->p.steps);
    printf("participation        k = %zu (%zu possible), %s %zu\n", mo->part.k, sv->k_effective,
           mo->part.kind == DPC_PART_CYCLIC ? "period" : "min-sep", mo->part.b);
    printf("sensitivity          %.6g  (%s)\n", sv->value, dpc_sens_method_name(sv->method));
    if (!isnan(ginf))
        printf("limit sensitivity    %.6g  (n -> infinity, single participation)\n", ginf);
    printf("rmse                 %.6g\n", me->rmse);
    printf("max error            %.6g\n", me->max_error);
    printf("scaled rmse          %.6g  (sensitivity x rmse)\n", sv->value * me->rmse);
    printf("scaled max error     %.6g\n", sv->value * me->max_error);
    printf("state per coordinate %zu floats (buffer form)%s\n", sbuf,
           replay ? ", 0 (replay form)" : "");
    printf("anytime              %s\n", anytime ? "yes" : "no");
}

static int run(const opt_set *s, const cli_mech_opts *mo, const dpc_workload *wl, int json)
{
    dpc_error err = {0};
    dpc_mech *m = NULL;
    dpc_sensitivity sv;
    dpc_mech_error me;
    if (dpc_mech_new(&m, &mo->p, &err) || dpc_mech_sensitivity(m, &mo->part, &sv, &err) ||
        dpc_mech_error_of(m, wl, &me, &err)) {
        dpc_mech_free(m);
        return opt_fail_lib(s, &err);
    }
    double ginf = NAN;
    dpc_error err2 = {0};
    if (dpc_mech_limit_sensitivity(m, &ginf, &err2)) ginf = NAN;
    char desc[128];
    dpc_mech_describe(m, desc, sizeof desc);
    size_t sbuf = dpc_mech_state_floats(m, DPC_NOISE_BUFFER);
    int replay = dpc_mech_form_available(m, DPC_NOISE_REPLAY), anytime = dpc_mech_is_anytime(m);
    if (json) print_json(mo, desc, &sv, &me, ginf, sbuf, replay, anytime);
    else print_text(mo, desc, &sv, &me, ginf, sbuf, replay, anytime);
    dpc_mech_free(m);
    return 0;
}

int cmd_mech(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "optimize")) return cmd_mech_optimize(argc - 1, argv + 1);
    opt_set s;
    int rc = opt_parse(&s, &MECH_CMD, argc, argv, 1, 0);
    if (rc || s.help) return rc;
    cli_mech_opts mo;
    cli_mech_opts_init(&mo);
    dpc_workload wl = DPC_WORKLOAD_PREFIX;
    wl.momentum = opt_dbl(&s, &WL_MOMENTUM, wl.momentum);
    wl.decay = opt_dbl(&s, &WL_DECAY, wl.decay);
    int json = opt_given(&s, &OPT_JSON);
    if (!(rc = cli_mech_read(&mo, &s, &MECH_READ)) && !(rc = opt_finish(&s)) &&
        !(rc = cli_mech_load(&mo, &s, &MECH_READ))) {
        if (s.dry_run) {
            cli_mech_dry(&mo, 1);
            opt_dry_num("workload.momentum", wl.momentum);
            opt_dry_num("workload.decay", wl.decay);
            opt_dry_uint("json", (uint64_t)json);
        } else {
            rc = run(&s, &mo, &wl, json);
        }
    }
    cli_mech_opts_free(&mo);
    return rc;
}
