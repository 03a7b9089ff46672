/* train_srgd.c — `dpcorr train --algo dp-srgd`: Accelerated-DP-SRGD (dpcorr/papers/srgd.h) on any
 * dataset with a linear or logistic model (any dpc_model with --L/--M), or on the DP-SRGD note's
 * synthetic problems, with per-step instrumentation, a JSON report, a CSV trace and a plot. The
 * library presets the schedule and makes the privacy decision (the shared ledger); the run frame
 * (frame.h) does seeding, data, the report and the plot. */
#include "frame.h"
#include "train_algo.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PB "problem (one of --problem and --data)"
#define CONST "constants (default: from the problem or the data's public norm bound)"
#define SCHED "schedule"
#define PRIV "privacy (zero-out adjacency)"
static const opt_spec S_ALGO = {
    .name = "--algo", .metavar = "NAME", .type = OPT_CHOICE, .choices = "dp-srgd", .section = PB,
    .param = "algorithm", .help = "dp-srgd", .example = "--algo dp-srgd"};
static const opt_spec S_PROBLEM = {
    .name = "--problem", .metavar = "P", .type = OPT_STR, .section = PB,
    .param = "problem.kind,kind", .conflicts = "--data",
    .help = "the note's synthetic problems: p1 (logistic), p2 (lsq: least squares), p3 "
            "(quadratic), nesterov (P3, non-private checks)",
    .example = "--problem p1"};
static const opt_spec S_DATA = {
    .name = "--data", .metavar = "SPEC", .type = OPT_STR, .flags = OPT_IN_DATA, .section = PB,
    .param = "data,train,test",
    .help = "any dataset (doc/data.md); its held-out part estimates F",
    .example = "! --algo dp-srgd --data synthetic:logistic,n=2000,d=3,test-n=200 --row-radius 1 "
               "--epsilon 1"};
/* the problem's fields (dpc_srgd_problem_config): one option each, where it applies */
static const opt_spec S_PROBLEM_FIELDS = {
    .type = OPT_FIELDS, .fields = dpc_srgd_problem_config_fields, .group = "problem",
    .param = "problem.", .rename = "p=dim noise=label-noise", .section = PB, .when = "--problem"};
/* The options of dpc_srgd_config's fields take their type, range and default from its table. */
#define SRGD_FIELD .fields = dpc_srgd_config_fields
static const opt_spec S_MODEL = {
    .name = "--model", .metavar = "SPEC", .type = OPT_STR, .section = PB, .param = "model",
    .when = "--data",
    .help = "linear | logistic (labels 0/1; +-1 files are mapped) | any dpc_model with --L and "
            "--M (default: by the data's task)",
    .example = "! --algo dp-srgd --data synthetic:logistic,n=2000,d=3 --row-radius 1 --epsilon 1 "
               "--L 2 --M 2 --model mlp:2"};
static const opt_spec S_ROW_RADIUS = {
    .name = "--row-radius", .metavar = "X", .type = OPT_DOUBLE, .lo = 0, .hi = INFINITY,
    .flags = OPT_LO_OPEN, .section = PB, .param = "row_radius", .when = "--data",
    .help = "clip every row to norm X first (data-independent)",
    .example = "! --algo dp-srgd --data synthetic:logistic,n=2000,d=3 --epsilon 1 --row-radius 2"};
static const opt_spec S_Y_BOUND = {
    .name = "--y-bound", .metavar = "Y", .type = OPT_DOUBLE, .lo = 0, .hi = INFINITY,
    .flags = OPT_LO_OPEN, .section = PB, .param = "y_bound", .when = "--data with a linear model",
    .help = "public bound on |y| (for L)",
    .example = "! --algo dp-srgd --data synthetic:linreg,n=2000,d=3 --row-radius 1 --epsilon 1 "
               "--y-bound 3"};
static const opt_spec S_L = { SRGD_FIELD,
    .name = "--L", .metavar = "L", .type = OPT_DOUBLE, .section = CONST, .param = "L",
    .help = "per-example Lipschitz constant on C", .example = "--L 3"};
static const opt_spec S_M = { SRGD_FIELD,
    .name = "--M", .metavar = "M", .type = OPT_DOUBLE, .section = CONST, .param = "M", .help = "per-example smoothness on C",
    .example = "--M 3"};
static const opt_spec S_R = { SRGD_FIELD,
    .name = "--R", .metavar = "R", .type = OPT_DOUBLE, .section = CONST, .param = "R,problem.R",
    .help = "radius of C = B(0, R)",
    .example = "--R 3"};
static const opt_spec S_REGIME = {
    .name = "--regime", .metavar = "A|B", .type = OPT_CHOICE, .choices = "A|B|a|b",
    .section = SCHED, .param = "regime",
    .help = "A: T = ceil(c n^(1/4)), B = n/T (default); B: B = sqrt n", .example = "--regime B"};
#define STR_(x) #x
#define STR(x) STR_(x)
/* dpc_srgd_setup has no field table: the default is DPC_SRGD_PRACTICAL_C (spelled from it); the
 * value is checked by dpc_srgd_preset (> 0 and finite, naming "c") */
static const opt_spec S_C = {
    .name = "--c", .metavar = "C", .type = OPT_DOUBLE,
    .section = SCHED, .param = "c", .when = "--regime A", .conflicts = "--literal",
    .help = "Regime A practical constant (default " STR(DPC_SRGD_PRACTICAL_C) ")", .example = "--c 2"};
static const opt_spec S_LITERAL = {
    .name = "--literal", .type = OPT_FLAG, .section = SCHED, .param = "literal",
    .when = "--regime A", .help = "Regime A with the paper's c_DP (explains when infeasible)",
    .example = "! --algo dp-srgd --problem p2 --n 1500000 --dim 1 --epsilon 1 --literal --delta "
               "1e-6 --allow-large-delta"}; /* the paper's delta: feasible from n = 1.43e6 */
static const opt_spec S_STEPS = { SRGD_FIELD,
    .name = "--steps", .metavar = "T", .type = OPT_UINT, .section = SCHED,
    .param = "steps", .help = "override the preset's rounds T", .example = "--steps 5"};
static const opt_spec S_BATCH = { SRGD_FIELD,
    .name = "--batch", .metavar = "B", .type = OPT_UINT, .section = SCHED,
    .param = "batch", .help = "override the preset's batch B", .example = "--batch 100"};
static const opt_spec S_BETA = { SRGD_FIELD,
    .name = "--beta", .metavar = "BETA", .type = OPT_DOUBLE, .section = SCHED, .param = "beta", .help = "override the preset's beta",
    .example = "--beta 2"};
static const opt_spec S_CLIP = { SRGD_FIELD,
    .name = "--clip-delta", .metavar = "C|inf", .type = OPT_DOUBLE, .flags = OPT_WORDS, .choices = "inf", .section = SCHED, .param = "clip",
    .help = "override the preset's C_Delta (inf only with --nonprivate)",
    .example = "--clip-delta 2"};
static const opt_spec S_Z_STEP = { SRGD_FIELD,
    .name = "--z-step", .metavar = "S", .type = OPT_DOUBLE, .section = SCHED, .param = "z_step",
    .help = "z-step scale s: z_{t+1} = Pi(z_t - s S^_t/beta); the default is the proof's choice",
    .example = "--z-step 0.75"};
static const opt_spec S_VARIANT = { SRGD_FIELD,
    .name = "--variant", .metavar = "V", .type = OPT_CHOICE, .section = SCHED, .param = "variant",
    .help = "accel | srg (unaccelerated) | accel-sgd (Thm 5.13)",
    .example = "--variant srg"};
static const opt_spec S_NOISE = { SRGD_FIELD,
    .name = "--noise", .metavar = "K", .type = OPT_CHOICE, .section = SCHED, .param = "noise",
    .help = "tree | honaker | independent", .example = "--noise honaker"};
static const opt_spec S_PERMUTE = {
    .name = "--permute", .type = OPT_FLAG, .section = SCHED, .param = "permute",
    .help = "public random order of the examples first", .example = "--permute"};
static const opt_spec S_EPSILON =
    FR_EPSILON_OPT(dpc_srgd_config_fields, PRIV, "--nonprivate", "--epsilon 2");
static const opt_spec S_NONPRIVATE = {
    .name = "--nonprivate", .type = OPT_FLAG, .section = PRIV, .param = "epsilon",
    .help = "no noise (epsilon = infinity)",
    .example = "! --algo dp-srgd --problem p2 --n 2000 --dim 4 --nonprivate"};
static const opt_spec S_DELTA =
    FR_DELTA_OPT(dpc_srgd_config_fields, PRIV, "--epsilon or --literal", "--delta 1e-6");
static const opt_spec S_LARGE_DELTA = FR_LARGE_DELTA_OPT(PRIV, "--epsilon");
static const opt_spec S_CALIBRATION = FR_CALIBRATION_OPT(
    dpc_srgd_config_fields, PRIV, "--epsilon",
    "exact GDP mu; paper: mu = eps/sqrt(2 ln(2.5/delta)), Lemma 5.6, eps <= 1",
    "--epsilon 0.9 --calibration paper");
static const opt_spec S_EVAL_EVERY = { SRGD_FIELD,
    .name = "--eval-every", .metavar = "K", .type = OPT_UINT, .section = "output", .param = "eval_every",
    .help = "F(y_t) every K steps (0 = never; unset: every step for --problem, never for --data)",
    .example = "--eval-every 2"};
static const opt_spec S_TRACE = {
    .name = "--trace", .metavar = "F.csv", .type = OPT_STR, .flags = OPT_OUT_FILE,
    .section = "output", .param = "trace", .help = "per-step telemetry (not privatized)",
    .example = "--trace {tmp}/t.csv"};
#undef PB
#undef CONST
#undef SCHED
#undef PRIV

static const opt_spec *const SRGD_OPTS[] = {
    &S_ALGO, &S_PROBLEM, &S_PROBLEM_FIELDS, &S_DATA, &S_MODEL, &S_ROW_RADIUS, &S_Y_BOUND, &S_L,
    &S_M, &S_R, &S_REGIME, &S_C, &S_LITERAL, &S_STEPS, &S_BATCH, &S_BETA, &S_CLIP, &S_Z_STEP,
    &S_VARIANT, &S_NOISE, &S_PERMUTE, &S_EPSILON, &S_NONPRIVATE, &S_DELTA, &S_LARGE_DELTA,
    &S_CALIBRATION, &FR_SEED, &FR_SECURE, &S_EVAL_EVERY, FRAME_CKPT_OPTS, &FR_REPORT, &S_TRACE,
    &FR_PLOT, &FR_LABEL, &FR_QUIET, &OPT_DRY_RUN, &OPT_HELP, NULL};

static const opt_cmd SRGD_CMD = {
    .name = "train --algo dp-srgd",
    .usage = "dpcorr train --algo dp-srgd [--regime A|B] (--problem P [--n N --dim D ...] |\n"
             "                    --data SPEC [--model linear|logistic]) (--epsilon E | --nonprivate)\n"
             "                    [--delta D] [--c C | --literal] [--seed S | --secure]\n"
             "                    [--checkpoint F] [--resume F] [--report F.json] [--trace F.csv]",
    .about = "Accelerated-DP-SRGD (Choquette-Choo, Ganesh & Thakurta 2024, Algorithm 1): one pass\n"
             "over fixed disjoint batches, per-example increments eta_t grad f(x_t) - eta_{t-1}\n"
             "grad f(x_{t-1}) clipped to C_Delta, prefix sums privatized by the binary tree\n"
             "(sigma_S = (C_Delta/B) sqrt(1 + ceil(log2 T))/mu, exact GDP mu), accelerated z/y/x\n"
             "updates projected onto the ball B(0, R); output y_T. See doc/srgd.md.",
    .opts = SRGD_OPTS,
    .minimal = "--algo dp-srgd --problem p2 --n 2000 --dim 4 --epsilon 1",
};

typedef struct srgd_opts {
    run_frame fr;
    const char *model, *trace;
    int have_problem, literal, nonprivate;
    dpc_srgd_problem_config pc;
    dpc_srgd_config c;
    dpc_srgd_regime regime;
    double cc, L, M, ybound, row_radius;
    size_t steps, batch;
    double beta, clip;
} srgd_opts;

/* ---- options ------------------------------------------------------------------------------- */

static int read_problem(srgd_opts *o, opt_set *s)
{
    dpc_srgd_problem_config *pc = &o->pc;
    dpc_error err = {0};
    if (dpc_srgd_problem_kind_parse(opt_str(s, &S_PROBLEM, ""), &pc->kind, &err))
        return opt_fail_lib_at(s, &S_PROBLEM, &err);
    opt_read_fields(s, dpc_srgd_problem_config_fields(), pc); /* each where its kind uses it */
    return 0;
}

/* The schedule and the algorithm's variants (the library checks values such as z_step). */
static void read_schedule(srgd_opts *o, opt_set *s)
{
    o->regime = opt_word(s, &S_REGIME, 0) & 1 ? DPC_SRGD_REGIME_B : DPC_SRGD_REGIME_A;
    if (o->regime == DPC_SRGD_REGIME_A) {
        o->literal = opt_given(s, &S_LITERAL);
        if (!o->literal) o->cc = opt_dbl(s, &S_C, DPC_SRGD_PRACTICAL_C);
    }
    o->steps = opt_size(s, &S_STEPS, 0);
    o->batch = opt_size(s, &S_BATCH, 0);
    o->beta = opt_dbl(s, &S_BETA, 0);
    o->clip = opt_word(s, &S_CLIP, 0) ? INFINITY : opt_dbl(s, &S_CLIP, 0);
    o->c.z_step = opt_dbl(s, &S_Z_STEP, o->c.z_step);
    o->c.permute = opt_given(s, &S_PERMUTE);
    opt_read_field(s, &S_VARIANT, &o->c); /* the words of the table's enums */
    opt_read_field(s, &S_NOISE, &o->c);
}

static int read_opts(srgd_opts *o, opt_set *s)
{
    memset(o, 0, sizeof *o);
    frame_init(&o->fr);
    o->fr.data_opt = &S_DATA;
    dpc_srgd_problem_config_init(&o->pc);
    dpc_srgd_config_init(&o->c);
    opt_use(s, &S_ALGO);
    frame_read(&o->fr, s);
    frame_read_ckpt(&o->fr, s);
    o->have_problem = opt_typed(s, &S_PROBLEM);
    int rc = o->have_problem ? read_problem(o, s) : 0;
    if (rc) return rc;
    if (!o->have_problem) {
        o->model = opt_str(s, &S_MODEL, NULL);
        o->row_radius = opt_dbl(s, &S_ROW_RADIUS, 0);
        if (!o->model || !strcmp(o->model, "linear")) o->ybound = opt_dbl(s, &S_Y_BOUND, 0);
    }
    o->L = opt_dbl(s, &S_L, 0);
    o->M = opt_dbl(s, &S_M, 0);
    o->pc.R = opt_dbl(s, &S_R, o->pc.R);
    read_schedule(o, s);
    o->nonprivate = opt_given(s, &S_NONPRIVATE);
    o->c.epsilon = o->nonprivate ? INFINITY : opt_dbl(s, &S_EPSILON, 0);
    if (!o->nonprivate || o->literal) o->c.delta = opt_dbl(s, &S_DELTA, o->c.delta);
    if (!o->nonprivate) o->c.allow_large_delta = opt_given(s, &S_LARGE_DELTA);
    if (!o->nonprivate)
        o->c.calibration = opt_word(s, &S_CALIBRATION, 0) ? DPC_CALIBRATION_PAPER
                                                          : DPC_CALIBRATION_ACCOUNTANT;
    o->c.eval_every = opt_size(s, &S_EVAL_EVERY, o->have_problem ? 1 : 0);
    o->trace = opt_str(s, &S_TRACE, NULL);
    /* frame_check checks --trace with the frame's outputs (cli_check_outputs) */
    if ((rc = opt_finish(s)) || (rc = frame_check(&o->fr, s, 0))) return rc;
    if (!o->have_problem && !o->fr.data)
        return opt_fail(s, "--problem / --data: give exactly one (see --help)");
    if (!o->nonprivate && o->c.epsilon == 0)
        return opt_fail_at(s, &S_EPSILON, "required (or --nonprivate)");
    return 0;
}

/* ---- preparation --------------------------------------------------------------------------- */

typedef struct srgd_run {
    srgd_opts *o;
    opt_set *s;
    dpc_srgd_problem *pr;
    const dpc_dataset *ds;
    dpc_model *model;
    dpc_srgd *srgd;
    char spec[DPC_MODEL_SPEC_LEN];
    dpc_srgd_step_info *tr; /* (T) */
} srgd_run;

/* A failure of the constants derived from the data (dpc_srgd_data_constants' fields), named by
 * the option at fault. */
static int data_constants_fail(srgd_run *r, const dpc_error *err)
{
    if (!strcmp(err->field, "x_norm_bound") && err->status == DPC_E_INVALID)
        return opt_fail(r->s, "--L/--M: the data has no public row-norm bound; give --L and "
                              "--M, or --row-radius X");
    if (!strcmp(err->field, "y_bound") && err->status == DPC_E_INVALID)
        return opt_fail_at(r->s, &S_Y_BOUND, "linear regression needs a public bound on |y| "
                                             "for L (or give --L)");
    /* L and M derived from --y-bound / --row-radius overflow: the option at fault is named */
    if (err->status == DPC_E_RANGE)
        return opt_fail_at(r->s, !strcmp(err->field, "y_bound") ? &S_Y_BOUND : &S_ROW_RADIUS, "%s",
                           err->msg + (strncmp(err->msg, err->field, strlen(err->field)) ? 0 :
                                       strlen(err->field) + 2));
    return opt_fail(r->s, "--L/--M: required for model '%s'", r->spec);
}

/* The data set or the synthetic problem, and the model. */
static int load(srgd_run *r)
{
    srgd_opts *o = r->o;
    dpc_error err = {0};
    int rc;
    if (o->have_problem) {
        if (dpc_srgd_problem_new(&r->pr, &o->pc, &o->fr.rng, 0, &err)) {
            if (!err.field[0]) return opt_fail_lib_at(r->s, &S_PROBLEM, &err);
            dpc_error_nest(&err, "problem"); /* problem.w_norm: --w-norm, by name */
            return opt_fail_lib(r->s, &err);
        }
        r->ds = dpc_srgd_problem_data(r->pr);
        snprintf(r->spec, sizeof r->spec, "%s", dpc_srgd_problem_model_spec(r->pr));
    } else {
        if ((rc = frame_load(&o->fr, r->s))) return rc;
        dpc_dataset *sets[2] = {o->fr.train, o->fr.test};
        for (int k = 0; k < 2 && o->row_radius > 0; k++)
            if (sets[k] && dpc_dataset_clip_rows(sets[k], o->row_radius, &err))
                return opt_fail_lib_at(r->s, &S_ROW_RADIUS, &err);
        r->ds = o->fr.train;
        snprintf(r->spec, sizeof r->spec, "%s",
                 o->model ? o->model : dpc_srgd_default_model(r->ds));
    }
    if (cli_model_new(&r->model, NULL, r->spec, r->ds->d, NULL, r->ds->n_classes, &err))
        return opt_fail(r->s, "--model: %s", err.msg);
    return 0;
}

/* The library resolves the run's configuration (constants, preset, overrides, evaluation
 * hook: dpc_srgd_config_resolve); then the run (calibrated). */
static int build(srgd_run *r)
{
    srgd_opts *o = r->o;
    dpc_srgd_config *c = &o->c;
    dpc_error err = {0};
    dpc_srgd_setup su = {.regime = o->regime, .c = o->cc, .literal = o->literal, .L = o->L,
                         .M = o->M, .y_bound = o->ybound, .steps = o->steps, .batch = o->batch,
                         .beta = o->beta, .clip = o->clip};
    c->R = o->pc.R;
    if (dpc_srgd_config_resolve(c, &su, r->pr, r->model, r->ds, o->fr.test, &err)) {
        if (!r->pr && (!strcmp(err.field, "x_norm_bound") || !strcmp(err.field, "y_bound") ||
                       !strcmp(err.field, "model")))
            return data_constants_fail(r, &err);
        return !strcmp(err.field, "epsilon") || !strcmp(err.field, "delta") ||
                       (!strcmp(err.field, "c") && opt_typed(r->s, &S_C))
                   ? opt_fail_lib(r->s, &err) /* --epsilon, --delta, --c by name */
                   : opt_fail_lib_at(r->s, &S_REGIME, &err);
    }
    if (dpc_srgd_new(&r->srgd, r->model, r->ds, c, &o->fr.rng, &err)) return opt_fail_lib(r->s, &err);
    return 0;
}

static void dry_run(const srgd_run *r)
{
    const srgd_opts *o = r->o;
    frame_dry(&o->fr);
    if (o->have_problem) opt_dry_fields(dpc_srgd_problem_config_fields(), &o->pc, "problem.");
    else opt_dry_str("problem.kind", "");
    opt_dry_str("model", r->spec);
    opt_dry_num("row_radius", o->row_radius);
    opt_dry_num("y_bound", o->ybound);
    opt_dry_str("regime", o->regime == DPC_SRGD_REGIME_B ? "B" : "A");
    opt_dry_num("c", o->cc);
    opt_dry_uint("literal", (uint64_t)o->literal);
    dpc_srgd_config shown; /* as resolved: the plan's schedule, the ledger's delta */
    dpc_srgd_config_resolved(r->srgd, &shown);
    opt_dry_fields(dpc_srgd_config_fields(), &shown, "");
    opt_dry_str("trace", o->trace);
    frame_dry_ckpt(&o->fr);
    opt_dry_num("noise_multiplier", dpc_srgd_ledger(r->srgd)->noise_multiplier);
}

/* ---- the run, the report, the trace and the plot ------------------------------------------- */

static void report_config(dpc_json_writer *w, const srgd_run *r)
{
    const srgd_opts *o = r->o;
    const dpc_srgd_plan *L = dpc_srgd_plan_get(r->srgd);
    const dpc_srgd_config *c = dpc_srgd_config_get(r->srgd);
    dpc_json_obj(w, "config");
    dpc_json_str(w, "data", r->ds->source);
    dpc_json_str(w, "model", r->spec);
    dpc_json_str(w, "isa", dpc_isa_name(dpc_model_get_config(r->model)->isa)); /* model and noise */
    dpc_srgd_config_report_json(w, c, L, o->regime, o->cc, o->literal, r->ds->n);
    dpc_json_end(w);
}

typedef struct srgd_final {
    double risk, excess, acc, secs, cpu;
} srgd_final;

static int write_report(const srgd_run *r, const srgd_final *f)
{
    const dpc_srgd_plan *L = dpc_srgd_plan_get(r->srgd);
    size_t T = L->steps;
    dpc_json_writer w;
    FILE *fp = frame_report_open(&r->o->fr, &w, "dp-srgd");
    if (!fp) return CLI_RUNTIME;
    report_config(&w, r);
    if (r->o->fr.train) dpc_dataset_report_json(&w, r->o->fr.data, r->o->fr.train, r->o->fr.test);
    dpc_ledger_report_json(&w, dpc_srgd_ledger(r->srgd),
                         "norms, clip rates, losses and risks are not privatized");
    dpc_srgd_plan_report_json(&w, L);
    dpc_srgd_steps_report_json(&w, r->tr, T);
    dpc_json_obj(&w, "final");
    dpc_json_int(&w, "rounds", (long long)T);
    dpc_json_int(&w, "grad_evals", T ? (long long)r->tr[T - 1].grad_evals : 0);
    dpc_json_int(&w, "n_used", (long long)L->n_used);
    dpc_json_hash(&w, "params_hash",
                  dpc_params_hash(dpc_srgd_output(r->srgd), dpc_srgd_num_params(r->srgd)));
    dpc_json_num(&w, "risk", f->risk);
    dpc_json_num(&w, "excess_risk", f->excess);
    dpc_json_num(&w, "test_accuracy", f->acc);
    dpc_json_num(&w, "wall_time_s", f->secs);
    dpc_json_num(&w, "cpu_time_s", f->cpu);
    dpc_json_end(&w);
    return frame_report_close(&w, fp, r->o->fr.report);
}

static int write_trace(const char *path, const dpc_srgd_step_info *tr, size_t T)
{
    dpc_io_out *h = NULL; /* a temporary renamed into place: a failed write keeps the old */
    FILE *f = cli_out_open(&h, "--trace", path);
    if (!f) return CLI_RUNTIME;
    fprintf(f, "t,eta,max_delta_norm,clip_fraction,noise_norm,b_norm,grad_norm,srg_error,"
               "grad_F_norm,batch_loss,risk,grad_evals\n");
    for (size_t t = 0; t < T; t++)
        fprintf(f, "%zu,%.17g,%.10g,%.6g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%zu\n",
                tr[t].step, tr[t].eta, tr[t].max_norm, tr[t].clip_fraction, tr[t].noise_norm,
                tr[t].b_norm, tr[t].grad_norm, tr[t].srg_error, tr[t].grad_F_norm, tr[t].loss,
                tr[t].risk, tr[t].grad_evals);
    return cli_out_commit(h, "--trace");
}

/* F(y_t) per round (or the batch loss when F is not evaluated). */
static int plot(const srgd_run *r, size_t T)
{
    double *x = malloc((T + 1) * sizeof *x), *y = malloc((T + 1) * sizeof *y);
    int rc = CLI_RUNTIME, risk = T && isfinite(r->tr[T - 1].risk);
    if (x && y) {
        for (size_t t = 0; t < T; t++)
            x[t] = (double)t + 1, y[t] = risk ? r->tr[t].risk : r->tr[t].loss;
        plot_series sr = {"dp-srgd", x, y, NULL, T, PLOT_LINESPOINTS};
        plot_panel p = {risk ? "F(y_t) (non-private telemetry)" : "batch loss (non-private telemetry)",
                        "round", risk ? "F" : "loss", 0, 0, &sr, 1};
        rc = frame_plot(r->o->fr.plot, &p, 1);
    }
    free(x);
    free(y);
    return rc;
}

static void banner(const srgd_run *r)
{
    const srgd_opts *o = r->o;
    const dpc_srgd_plan *L = dpc_srgd_plan_get(r->srgd);
    const dpc_ledger *G = dpc_srgd_ledger(r->srgd);
    const dpc_srgd_config *c = &o->c;
    const char *what;
    double cv = dpc_srgd_preset_constant(c, o->regime, o->cc, o->literal, r->ds->n, G->delta, &what);
    fprintf(stderr,
            "dp-srgd %s: regime %s (%s %.4g), n = %zu, T = %zu rounds, B = %zu, beta = %.4g, "
            "C_Delta = %.4g, z-step %.3g\n",
            dpc_srgd_variant_name(c->variant), o->regime == DPC_SRGD_REGIME_B ? "B" : "A", what,
            cv, r->ds->n, L->steps, L->batch, L->beta, L->clip, L->z_step);
    char rd[96];
    const char *mode = frame_rng_desc(G->rng_mode, G->seed, rd, sizeof rd);
    if (L->private_run)
        fprintf(stderr,
                "privacy: %s, sigma_S = %.4g, z = %.4g, mu = %.4g (%s) -> (%.4g, %.3g)-DP, "
                "zero-out | %s\n",
                G->mechanism, L->sigma, G->noise_multiplier, L->mu, G->calibration, G->epsilon,
                G->delta, mode);
    else
        fprintf(stderr, "privacy: none (--nonprivate) | %s\n", mode);
    if (o->regime == DPC_SRGD_REGIME_A && o->literal)
        fprintf(stderr, "note: the literal constants are feasible here (B >= 1) but beta R^2/T^2 "
                        "= %.3g with C_Delta = c_DP L = %.4g\n",
                dpc_srgd_optimization_term(L, c->R), L->clip);
}

/* ---- checkpoints: the command's items and the rounds' telemetry so far (frame_run's hooks) -- */

/* The telemetry of a round: the section "cli.trace" holds the fields of dpc_srgd_step_info (its
 * field table), round after round (dpc_ckpt_put_records). */

static void ckpt_items(void *ctx, dpc_ckpt *ck)
{
    const srgd_opts *o = ((const srgd_run *)ctx)->o;
    dpc_ckpt_item_str(ck, "problem.kind", "problem",
                      o->have_problem ? dpc_srgd_problem_kind_name(o->pc.kind) : "");
    dpc_ckpt_item_str(ck, "regime", "regime", o->regime == DPC_SRGD_REGIME_B ? "B" : "A");
    dpc_ckpt_item_num(ck, "c", "c", o->cc);
    dpc_ckpt_item_count(ck, "literal", "literal constants", (uint64_t)o->literal);
    dpc_ckpt_item_num(ck, "row_radius", "row radius", o->row_radius);
    dpc_ckpt_item_num(ck, "y_bound", "label bound", o->ybound);
}

static dpc_status ckpt_put(void *ctx, dpc_ckpt *ck, dpc_error *err)
{
    const srgd_run *r = ctx;
    return dpc_ckpt_put_records(ck, "cli.trace", dpc_srgd_step_info_fields(), r->tr,
                                dpc_srgd_steps_done(r->srgd), err);
}

/* --resume F: the telemetry of the saved rounds. */
static int ckpt_get(void *ctx, const dpc_ckpt *ck)
{
    srgd_run *r = ctx;
    size_t t = dpc_srgd_steps_done(r->srgd), n = 0;
    dpc_error err = {0};
    if (dpc_ckpt_get_records(ck, "cli.trace", dpc_srgd_step_info_fields(), r->tr, t, &n, &err))
        return frame_ckpt_fail(r->s, &err);
    if (n != t)
        return opt_fail(r->s, "--resume: %s: telemetry of %zu rounds, expected %zu",
                        r->o->fr.resume, n, t);
    return 0;
}

/* A round's line (unless quiet) and its telemetry kept for the report. */
static int on_round(void *ctx, const void *info, size_t t)
{
    srgd_run *r = ctx;
    const dpc_srgd_step_info *q = info;
    r->tr[t - 1] = *q;
    if (!r->o->fr.quiet) {
        char risk[32] = "-"; /* a round not evaluated (--eval-every): no "nan" column */
        if (!isnan(q->risk)) snprintf(risk, sizeof risk, "%.6g", q->risk);
        fprintf(stderr, "%5zu   %-14.5g  %6.1f%%   %-10.4g  %-10.4g  %s\n", t - 1, q->max_norm,
                100 * q->clip_fraction, q->noise_norm, q->grad_norm, risk);
    }
    return 0;
}

/* The rounds, then the final risk (problem) or held-out loss and accuracy (data). */
static int rounds(srgd_run *r, srgd_final *f)
{
    const srgd_opts *o = r->o;
    const dpc_srgd_plan *L = dpc_srgd_plan_get(r->srgd);
    dpc_error err = {0};
    if (!(r->tr = calloc(L->steps, sizeof *r->tr))) return opt_fail(r->s, "out of memory");
    dpc_srgd_step_info info;
    frame_loop F = {.run = dpc_srgd_run_ops(r->srgd), .info = &info, .unit = "round", .ctx = r,
                    .on_step = on_round, .ckpt_items = ckpt_items, .ckpt_put = ckpt_put,
                    .ckpt_get = ckpt_get};
    int rc = o->fr.resume ? frame_resume(&o->fr, r->s, &F) : 0;
    if (!rc && !o->fr.quiet)
        fprintf(stderr, "    t   max|Delta_t(d)|  clipped   |xi_t|      |grad^|     F(y_t+1)\n");
    if (!rc) rc = frame_run(&o->fr, &F);
    if (rc) return rc;
    const double *y = dpc_srgd_output(r->srgd);
    const dpc_dataset *te = o->fr.test;
    f->risk = f->excess = f->acc = NAN;
    if (r->pr) {
        if (dpc_srgd_problem_risk(r->pr, y, dpc_model_num_params(r->model), &f->risk, NULL, &err) ||
            dpc_srgd_problem_excess(r->pr, y, &f->excess, &err))
            return opt_fail_lib(r->s, &err);
    } else if (te &&
               dpc_model_evaluate(r->model, y, te->x, te->y, te->n, &f->risk, &f->acc, NULL, &err)) {
        fprintf(stderr, "dpcorr train: evaluation: %s\n", err.msg);
        return CLI_RUNTIME;
    }
    return 0;
}

static int run(srgd_run *r)
{
    const srgd_opts *o = r->o;
    double c0 = (double)clock();
    banner(r);
    srgd_final f;
    int rc = rounds(r, &f);
    if (rc) return rc == FRAME_STOPPED ? 0 : rc;
    const dpc_srgd_plan *L = dpc_srgd_plan_get(r->srgd);
    const dpc_ledger *G = dpc_srgd_ledger(r->srgd);
    f.secs = cli_now() - o->fr.t0;
    f.cpu = ((double)clock() - c0) / CLOCKS_PER_SEC;
    size_t T = L->steps;
    printf("dp-srgd: %zu rounds, %zu gradient evaluations (2n - B = %zu), ", T,
           r->tr[T - 1].grad_evals, L->grad_evals_planned);
    if (r->pr)
        printf("excess risk %.6g (F(y_T) = %.8g, F* = %.8g)", f.excess, f.risk,
               dpc_srgd_problem_fstar(r->pr));
    else if (o->fr.test) printf("held-out loss %.6g, accuracy %.4f", f.risk, f.acc);
    else printf("no held-out set");
    if (L->private_run) printf(", (epsilon %.4g, delta %.3g)", G->epsilon, G->delta);
    else printf(", non-private");
    printf(", %.2f s (cpu %.2f s)\n", f.secs, f.cpu);
    if (o->fr.report) rc = write_report(r, &f);
    if (o->trace) rc = rc ? rc : write_trace(o->trace, r->tr, T);
    if (o->fr.plot) rc = rc ? rc : plot(r, T);
    return rc;
}

int train_srgd(int argc, char **argv)
{
    opt_set s;
    int rc = opt_parse(&s, &SRGD_CMD, argc, argv, 1, 0);
    if (rc || s.help) return rc;
    srgd_opts o;
    srgd_run r;
    memset(&r, 0, sizeof r);
    r.o = &o;
    r.s = &s;
    if (!(rc = read_opts(&o, &s)) && !(rc = frame_seed(&o.fr, &s)) && !(rc = load(&r)) &&
        !(rc = build(&r))) {
        if (s.dry_run) dry_run(&r);
        else rc = run(&r);
    }
    free(r.tr);
    dpc_srgd_free(r.srgd);
    dpc_model_free(r.model);
    dpc_srgd_problem_free(r.pr);
    frame_free(&o.fr);
    return rc;
}
