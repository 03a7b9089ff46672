/* train_kan.c — `dpcorr train --algo lcgd-projected`: projected DP-lambda-CGD ([KAN] Algorithm 1)
 * for the paper's two-layer KAN (--model kan2:M) or any dpcorr model (--model kan:64, mlp:...),
 * with projection onto B(W_0, R*) and iterate-averaged metrics. The library does the work and
 * makes the privacy decision (dpcorr/papers/kan.h: dpc_kan_lcgd_privacy, the shared ledger); the
 * run frame (frame.h) does seeding, data, the report and the plot. */
#include "frame.h"
#include "train_algo.h"
#include "dpcorr/papers/kan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PRIV "privacy (the paper's neighbouring relations: replace-one at lambda = 0, zero-out else)"
#define OPTIM "optimization"
#define EXEC "randomness and execution"
static const opt_spec K_ALGO = {
    .name = "--algo", .metavar = "NAME", .type = OPT_CHOICE, .choices = "lcgd-projected",
    .section = "data and model", .param = "algorithm", .help = "lcgd-projected",
    .example = "--algo lcgd-projected"};
static const opt_spec K_DATA = {
    .name = "--data", .metavar = "SPEC", .type = OPT_STR, .flags = OPT_IN_DATA,
    .section = "data and model", .param = "data,train,test",
    .help = "any --data of `dpcorr train`, or kan-synth:n=N,d=D[,margin=M][,test-n=N][,stream=S] "
            "(inputs uniform in the unit ball, labels from a linear teacher, margin M) (required)",
    .example = "--data kan-synth:n=500,d=3"};
static const opt_spec K_MODEL = {
    .name = "--model", .metavar = "SPEC", .type = OPT_STR, .section = "data and model",
    .param = "model",
    .help = "kan2:M[:grid=G][:sigmoid|:tanh]: the paper's two-layer KAN (binary data; rows scaled "
            "into the unit ball if needed), or any model spec (kan:64[:grid=G][:range=LO,HI], "
            "mlp:256, ...) (required)",
    .example = "--model kan2:6"};
static const opt_spec K_EPSILON =
    FR_EPSILON_OPT(dpc_kan_privacy_fields, PRIV, "--noise-multiplier", "--epsilon 2");
static const opt_spec K_DELTA = FR_DELTA_OPT(dpc_kan_privacy_fields, PRIV, NULL, "--delta 1e-4");
static const opt_spec K_LARGE_DELTA = FR_LARGE_DELTA_OPT(PRIV, NULL);
static const opt_spec K_CALIBRATION = FR_CALIBRATION_OPT(
    dpc_kan_privacy_fields, PRIV, "--epsilon",
    "exact binomial participation tail + exact sensitivity + exact Gaussian; paper: Thm. D.9 at "
    "lambda = 0, Thm. F.12 at lambda > 0 (conditions checked)",
    "--epsilon 0.9 --iterates 400 --calibration paper");
static const opt_spec K_NOISE = FR_NOISE_OPT(
    dpc_kan_privacy_fields, PRIV,
    "noise std per row of Z = Z clip colnorm(C); the paper's kappa = Z colnorm; 0: non-private",
    "! --algo lcgd-projected --data kan-synth:n=500,d=3 --model kan2:4 --iterates 20 "
    "--noise-multiplier 3");
/* The options of library fields take their type, range and default from the field tables
 * (opt_spec.fields): none is written here. */
#define KAN_FIELD .fields = dpc_kan_run_config_fields
static const opt_spec K_LAMBDA = {.fields = dpc_kan_privacy_fields,
    .name = "--lambda", .metavar = "L", .type = OPT_DOUBLE, .section = OPTIM,
    .param = "lambda", .help = "noise correlation",
    .example = "--lambda 0.3"};
static const opt_spec K_ITERATES = {KAN_FIELD,
    .name = "--iterates", .metavar = "T", .type = OPT_UINT, .section = OPTIM,
    .param = "iterates", .conflicts = "--epochs",
    .help = "iterates W_0..W_T-1, i.e. T-1 updates", .example = "--iterates 30"};
/* the CLI's conversion to iterates (no field of its own): its range keeps 1 + N floor(n/B) exact;
 * the library checks the iterates */
static const opt_spec K_EPOCHS = {
    .name = "--epochs", .metavar = "N", .type = OPT_UINT, .lo = 1, .hi = 1e6, .section = OPTIM,
    .param = "iterates", .help = "T = 1 + N floor(n/B) instead",
    .example = "! --algo lcgd-projected --data kan-synth:n=500,d=3 --model kan2:4 --epsilon 1 "
               "--epochs 2"};
static const opt_spec K_BATCH = {KAN_FIELD,
    .name = "--batch", .metavar = "B", .type = OPT_UINT, .section = OPTIM,
    .param = "batch", .help = "batch size", .example = "--batch 50"};
static const opt_spec K_LR = {KAN_FIELD,
    .name = "--lr", .metavar = "ETA|theory", .type = OPT_DOUBLE, .flags = OPT_WORDS,
    .choices = "theory", .section = OPTIM, .param = "lr,eta",
    .help = "step size (theory: 1/(12 beta), kan2 only)", .example = "--lr 0.2"};
static const opt_spec K_CLIP = {KAN_FIELD,
    .name = "--clip", .metavar = "C|theory", .type = OPT_DOUBLE, .flags = OPT_WORDS,
    .choices = "theory", .section = OPTIM, .param = "clip",
    .help = "clip norm (theory: G from c, kan2 only: no clipping)",
    .example = "--clip 0.5"};
static const opt_spec K_RADIUS = {KAN_FIELD,
    .name = "--radius", .metavar = "R|theory", .type = OPT_DOUBLE,
    .flags = OPT_WORDS | OPT_OWN_DEFAULT, .choices = "theory", .section = OPTIM, .param = "radius",
    .help = "projection radius (default none; theory: C_R (log T + sqrt(log(n/delta)))/gamma "
            "with gamma estimated, kan2 only)",
    .example = "--radius 2"};
static const opt_spec K_C_R = {KAN_FIELD,
    .name = "--C-R", .metavar = "X", .type = OPT_DOUBLE, .section = OPTIM, .param = "C_R",
    .when = "--radius theory", .help = "the constant C_R", .example = "--radius theory --seed 1 --C-R 3"};
static const opt_spec K_MARGIN_ITERS = {KAN_FIELD,
    .name = "--margin-iters", .metavar = "N", .type = OPT_UINT, .section = OPTIM,
    .param = "margin_iters", .when = "--model kan2:M",
    .help = "iterations of the NTK-margin solver (the margin is reported for n <= 2048 or with "
            "--radius theory)",
    .example = "--radius theory --seed 1 --margin-iters 500"};
static const opt_spec K_CONF_DELTA = {KAN_FIELD,
    .name = "--conf-delta", .metavar = "D", .type = OPT_DOUBLE, .section = OPTIM,
    .param = "conf_delta", .when = "--model kan2:M",
    .help = "confidence level of the theory constants",
    .example = "--lr theory --conf-delta 0.05"};
static const opt_spec K_EVAL_EVERY = {KAN_FIELD,
    .name = "--eval-every", .metavar = "K", .type = OPT_UINT, .section = EXEC,
    .param = "eval_every", .help = "evaluate L_S every K iterates (1: the exact average)",
    .example = "--eval-every 3"};
static const opt_spec K_NOISE_FORM = {.fields = dpc_kan_lcgd_config_fields,
    .name = "--noise-form", .metavar = "F", .type = OPT_CHOICE, .choices = "replay|buffer",
    .section = EXEC, .param = "noise_form", .help = "replay | buffer",
    .example = "--noise-form buffer"};
static const opt_spec K_CHUNK = {KAN_FIELD,
    .name = "--chunk", .metavar = "K", .type = OPT_UINT, .section = EXEC,
    .param = "chunk", .when = "a --model other than kan2:M", .help = "examples per model chunk",
    .example = "--data synthetic:logistic,n=300,d=3 --model kan:3 --chunk 8"};
#undef PRIV
#undef OPTIM
#undef EXEC

static const opt_spec *const KAN_OPTS[] = {
    &K_ALGO, &K_DATA, &K_MODEL, &K_EPSILON, &K_DELTA, &K_LARGE_DELTA, &K_CALIBRATION, &K_NOISE,
    &K_LAMBDA, &K_ITERATES, &K_EPOCHS, &K_BATCH, &K_LR, &K_CLIP, &K_RADIUS, &K_C_R, &K_MARGIN_ITERS,
    &K_CONF_DELTA, &K_EVAL_EVERY, &K_NOISE_FORM, &K_CHUNK, &FR_SEED, &FR_SECURE,
    FRAME_CKPT_OPTS, &FR_REPORT, &FR_PLOT, &FR_LABEL, &FR_QUIET, &OPT_DRY_RUN, &OPT_HELP, NULL};

static const opt_cmd KAN_CMD = {
    .name = "train --algo lcgd-projected",
    .usage = "dpcorr train --algo lcgd-projected --data SPEC --model SPEC\n"
             "                    (--epsilon E [--delta D] [--calibration accountant|paper] |\n"
             "                     --noise-multiplier Z) [--lambda L] [--iterates T | --epochs N]\n"
             "                    [--batch B] [--lr ETA] [--clip C] [--radius R|theory]\n"
             "                    [--checkpoint F] [--resume F] [--report F.json]",
    .about = "Projected DP-lambda-CGD (Wang et al. 2026, Algorithm 1): a fresh uniform batch of B\n"
             "examples per step, per-example clipping, correlated noise (Z_t - lambda Z_t-1) C/B\n"
             "times the noise std (the core's lambda-CGD mechanism, replayed from the RNG: no\n"
             "extra memory), projection onto the ball B(W_0, R); metrics averaged over the\n"
             "iterates W_0..W_T-1.",
    .opts = KAN_OPTS,
    .minimal = "--algo lcgd-projected --data kan-synth:n=500,d=3 --model kan2:4 --iterates 20 "
               "--epsilon 1",
};

typedef struct kopts {
    run_frame fr;
    const char *model;
    int is_kan2, lr_theory, clip_theory, radius_theory;
    dpc_kan_run_config rc; /* the library's defaults and the options; privacy.n, .batch and .steps
                              set once the data is known */
    size_t epochs;
    dpc_noise_form form;
} kopts;

/* The options that apply to the model chosen (kan2: the theory constants; others: the chunk).
 * A parameter the configuration does not use is 0 (the dry run and the checkpoint items). */
static void read_model_opts(kopts *o, opt_set *s)
{
    dpc_kan_run_config *rc = &o->rc;
    o->lr_theory = opt_word(s, &K_LR, 0) == 1;
    rc->lr = opt_dbl(s, &K_LR, rc->lr);
    o->clip_theory = opt_word(s, &K_CLIP, 0) == 1;
    rc->clip = opt_dbl(s, &K_CLIP, rc->clip);
    o->radius_theory = opt_word(s, &K_RADIUS, 0) == 1;
    rc->radius = opt_dbl(s, &K_RADIUS, rc->radius);
    if (o->radius_theory) opt_read_field(s, &K_C_R, rc);
    else rc->C_R = 0;
    if (o->is_kan2) {
        opt_read_field(s, &K_MARGIN_ITERS, rc);
        opt_read_field(s, &K_CONF_DELTA, rc);
        rc->chunk = 0;
    } else {
        opt_read_field(s, &K_CHUNK, rc);
        rc->margin_iters = 0;
        rc->conf_delta = 0;
    }
}

static int read_opts(kopts *o, opt_set *s)
{
    memset(o, 0, sizeof *o);
    dpc_kan_run_config_init(&o->rc);
    frame_init(&o->fr);
    o->fr.data_opt = &K_DATA;
    opt_use(s, &K_ALGO);
    frame_read(&o->fr, s);
    frame_read_ckpt(&o->fr, s);
    o->model = opt_str(s, &K_MODEL, NULL);
    o->is_kan2 = dpc_kan2_spec_is(o->model);
    dpc_kan_privacy *pv = &o->rc.privacy;
    pv->epsilon = opt_dbl(s, &K_EPSILON, pv->epsilon);
    pv->delta = opt_dbl(s, &K_DELTA, pv->delta);
    pv->allow_large_delta = opt_given(s, &K_LARGE_DELTA);
    int have_nm = opt_given(s, &K_NOISE);
    pv->noise_multiplier = opt_dbl(s, &K_NOISE, pv->noise_multiplier);
    if (pv->epsilon > 0)
        pv->calibration = opt_word(s, &K_CALIBRATION, 0) ? DPC_CALIBRATION_PAPER
                                                         : DPC_CALIBRATION_ACCOUNTANT;
    opt_read_field(s, &K_LAMBDA, pv);
    opt_read_field(s, &K_ITERATES, &o->rc);
    opt_read_field(s, &K_BATCH, &o->rc);
    opt_read_field(s, &K_EVAL_EVERY, &o->rc);
    o->epochs = opt_size(s, &K_EPOCHS, 0);
    read_model_opts(o, s);
    o->form = opt_word(s, &K_NOISE_FORM, 0) ? DPC_NOISE_BUFFER : DPC_NOISE_REPLAY;
    int rc = opt_finish(s);
    if (rc || (rc = frame_check(&o->fr, s, 1))) return rc;
    if (!o->model) return opt_fail_at(s, &K_MODEL, "required (e.g. kan2:256 or kan:64)");
    if (!have_nm && !(pv->epsilon > 0))
        return opt_fail_at(s, &K_EPSILON, "required (> 0), or --noise-multiplier");
    if (!o->is_kan2 && (o->lr_theory || o->clip_theory || o->radius_theory))
        return opt_fail(s, "--lr/--clip/--radius theory: only for the paper's KAN (kan2:M)");
    return 0;
}

/* ---- data and model ------------------------------------------------------------------------ */

/* kan-synth:n=N,d=D[,margin=M][,test-n=N][,stream=S] (the library's grammar) */
static int load_synth(run_frame *f, opt_set *s)
{
    dpc_error err = {0};
    if (dpc_kan_synth_spec(&f->train, &f->test, f->data, &f->rng, &err))
        return opt_fail_lib_at(s, &K_DATA, &err);
    f->owned = 1;
    return 0;
}

/* The paper's KAN needs rows in the unit ball (the library's rule, dpc_kan2_to_unit_ball). */
static int to_unit_ball(dpc_dataset *ds, opt_set *s, int quiet)
{
    dpc_error err = {0};
    dpc_kan_ball_action a;
    double b = 0;
    if (dpc_kan2_to_unit_ball(ds, &a, &b, &err)) return opt_fail_lib_at(s, &K_DATA, &err);
    if (quiet) return 0;
    if (a == DPC_KAN_BALL_SCALED) fprintf(stderr, "note: rows scaled by 1/%g into the unit ball\n", b);
    if (a == DPC_KAN_BALL_CLIPPED) fprintf(stderr, "note: rows clipped to norm 1 (no public bound known)\n");
    return 0;
}

/* The model, its initial point and (kan2) the theory constants, the margin and R*. */
typedef struct kan_run {
    kopts *o;
    opt_set *s;
    dpc_kan2 *k;
    dpc_model *m;
    dpc_kan_task *task;
    double *W0;   /* (P) */
    size_t P, T;
    dpc_kan_consts kc;
    dpc_kan_margin mg;
    dpc_ledger led;
    double noise_std;
    double *lt;   /* (T) training loss per iterate (NAN where not evaluated) */
    uint64_t params_hash; /* of the last iterate */
} kan_run;

/* The theory settings the options ask for (the library's, dpc_kan2_run_theory). */
static int kan2_theory(kan_run *r, int margin_wanted)
{
    kopts *o = r->o;
    dpc_error err = {0};
    dpc_kan2_theory_want w = {.lr = o->lr_theory, .clip = o->clip_theory, .radius = o->radius_theory,
                              .margin = margin_wanted};
    if (dpc_kan2_run_theory(r->k, r->W0, o->fr.train, r->T, &w, &o->rc, &r->kc, &r->mg, &err))
        return opt_fail_lib(r->s, &err);
    return 0;
}

static int build_model(kan_run *r, int margin_wanted)
{
    kopts *o = r->o;
    const dpc_dataset *tr = o->fr.train, *te = o->fr.test;
    dpc_rng *rng = &o->fr.rng;
    dpc_error err = {0};
    if (o->is_kan2) {
        dpc_kan2_config c;
        dpc_error perr = {0};
        int rc = dpc_kan2_config_parse(&c, o->model, tr->d, &perr) ? opt_fail_lib_at(r->s, &K_MODEL, &perr) : 0;
        if (rc) return rc;
        if (dpc_kan2_new(&r->k, &c, rng, 0, &err) || dpc_kan2_task_new(&r->task, r->k, tr, te, &err))
            return opt_fail_lib_at(r->s, &K_MODEL, &err);
        r->P = dpc_kan2_num_params(r->k);
        if (!(r->W0 = malloc(r->P * sizeof *r->W0))) return opt_fail(r->s, "out of memory");
        if (dpc_kan2_init(r->k, r->W0, rng, 0, &err)) return opt_fail_lib(r->s, &err);
        return kan2_theory(r, margin_wanted);
    }
    if (cli_model_new(&r->m, NULL, o->model, tr->d, NULL, tr->n_classes, &err) ||
        dpc_kan_model_task_new(&r->task, r->m, tr, te, o->rc.chunk, &err))
        return opt_fail_lib_at(r->s, &K_MODEL, &err);
    r->P = dpc_model_num_params(r->m);
    if (!(r->W0 = malloc(r->P * sizeof *r->W0))) return opt_fail(r->s, "out of memory");
    if (dpc_model_init(r->m, r->W0, rng, 0, &err)) return opt_fail_lib(r->s, &err);
    return 0;
}

/* The data, the model, the library's privacy decision and the run's configuration. */
static int prepare(kan_run *r, dpc_kan_lcgd_config *lc, int margin_wanted)
{
    kopts *o = r->o;
    opt_set *s = r->s;
    int rc = frame_seed(&o->fr, s);
    if (!rc) rc = !strncmp(o->fr.data, "kan-synth:", 10) ? load_synth(&o->fr, s) : frame_load(&o->fr, s);
    if (!rc && o->is_kan2 && (rc = to_unit_ball(o->fr.train, s, o->fr.quiet)) == 0)
        rc = to_unit_ball(o->fr.test, s, o->fr.quiet);
    if (rc) return rc;
    size_t n = o->fr.train->n;
    dpc_error err = {0};
    if (dpc_kan_run_count_iterates(&o->rc, o->epochs, n, &r->T, &err))
        return opt_fail_lib_at(s, &K_BATCH, &err);
    if ((rc = build_model(r, margin_wanted))) return rc;
    if (dpc_kan_run_resolve(&o->rc, n, r->T, o->form, &r->noise_std, &r->led, lc, &err))
        return opt_fail_lib(s, &err);
    r->led.rng_mode = o->fr.rng.mode;
    r->led.seed = o->fr.rng.seed;
    return 0;
}

static void dry_run(const kan_run *r, const dpc_kan_lcgd_config *lc)
{
    const kopts *o = r->o;
    frame_dry(&o->fr);
    opt_dry_str("model", o->model);
    opt_dry_uint("parameters", r->P);
    opt_dry_num("epsilon", o->rc.privacy.epsilon);
    opt_dry_num("delta", r->led.delta); /* resolved: dpc_account_resolve_delta */
    opt_dry_uint("allow_large_delta", (uint64_t)o->rc.privacy.allow_large_delta);
    opt_dry_num("noise_multiplier", r->led.noise_multiplier);
    opt_dry_str("calibration", r->led.calibration);
    opt_dry_fields(dpc_kan_lcgd_config_fields(), lc, ""); /* the run as built */
    opt_dry_num("C_R", o->rc.C_R);
    opt_dry_uint("margin_iters", o->rc.margin_iters);
    opt_dry_num("conf_delta", o->rc.conf_delta);
    opt_dry_uint("eval_every", o->rc.eval_every);
    opt_dry_uint("chunk", o->rc.chunk);
    frame_dry_ckpt(&o->fr);
    opt_dry_num("ledger.epsilon", r->led.epsilon);
}

/* ---- training, report and plot ------------------------------------------------------------- */

typedef struct trace_ctx {
    int tty, quiet;
    size_t T;
    double t0, last;
    double *loss; /* (T) evaluated training loss per iterate (NAN if not evaluated) */
} trace_ctx;

static int trace(void *vc, const dpc_kan_lcgd_step_info *info, double train_loss, double test_loss)
{
    trace_ctx *c = vc;
    (void)test_loss;
    c->loss[info->t] = train_loss;
    double t = cli_now();
    if (!c->quiet && c->tty && (t - c->last > 0.25 || info->t + 1 == c->T)) {
        fprintf(stderr, "\r  iterate %zu/%zu  batch loss %.4f  dist %.4g  %.0fs ", info->t + 1, c->T,
                info->batch_loss, info->dist, t - c->t0);
        c->last = t;
    }
    return 0;
}

static void report_config(dpc_json_writer *w, const kan_run *r, const dpc_kan_lcgd_result *res)
{
    const kopts *o = r->o;
    dpc_json_obj(w, "config");
    dpc_json_str(w, "data", o->fr.data);
    dpc_json_str(w, "model", o->model);
    dpc_json_int(w, "parameters", (long long)r->P);
    dpc_kan_run_config_report_json(w, &o->rc, r->T, o->form);
    dpc_json_end(w);
    dpc_kan_run_noise_report_json(w, r->noise_std, res, r->T);
}

static int write_report(const kan_run *r, const dpc_kan_lcgd_result *res, double train_s)
{
    const kopts *o = r->o;
    dpc_json_writer w;
    FILE *f = frame_report_open(&o->fr, &w, "lcgd-projected");
    if (!f) return CLI_RUNTIME;
    report_config(&w, r, res);
    dpc_dataset_report_json(&w, o->fr.data, o->fr.train, o->fr.test);
    dpc_ledger_report_json(&w, &r->led, "losses, clip counts and distances are not privatized");
    dpc_json_obj(&w, "metrics");
    dpc_kan_lcgd_result_json(&w, res);
    dpc_json_num(&w, "train_time_s", train_s);
    dpc_json_num(&w, "wall_time_s", cli_now() - o->fr.t0);
    dpc_json_end(&w);
    if (o->is_kan2) { /* the paper's constants and bounds for the run */
        dpc_kan2_bounds b;
        dpc_kan2_run_bounds(r->k, &o->rc, o->fr.train->n, o->fr.train->d, r->T, r->noise_std,
                            &r->mg, &b);
        dpc_kan2_theory_report_json(&w, &r->mg, &r->kc, &b);
    }
    dpc_json_nums(&w, "train_loss_per_iterate", r->lt, r->T);
    dpc_json_hash(&w, "params_hash", r->params_hash);
    return frame_report_close(&w, f, o->fr.report);
}

static int plot(const kan_run *r)
{
    double *x = malloc(r->T * sizeof *x), *y = malloc(r->T * sizeof *y);
    size_t n = 0;
    int rc = CLI_RUNTIME;
    if (x && y) {
        for (size_t t = 0; t < r->T; t++)
            if (isfinite(r->lt[t])) x[n] = (double)t, y[n++] = r->lt[t];
        plot_series sr = {.title = r->o->model, .x = x, .y = y, .n = n, .style = PLOT_LINES};
        plot_panel p = {.title = "training loss L_S(W_t) (non-private telemetry)", .xlabel = "iterate",
                        .ylabel = "loss", .series = &sr, .nseries = 1};
        rc = frame_plot(r->o->fr.plot, &p, 1);
    }
    free(x);
    free(y);
    return rc;
}

/* ---- checkpoints --------------------------------------------------------------------------- */

/* frame_run's hooks: the options that determine the run's values beyond the trainer's own
 * items, the training loss per iterate so far, and the progress line. */
typedef struct kan_loop {
    kan_run *r;
    trace_ctx *tc;
} kan_loop;

static void ckpt_items(void *ctx, dpc_ckpt *ck)
{
    const kopts *o = ((const kan_loop *)ctx)->r->o;
    dpc_ckpt_item_num(ck, "epsilon", "epsilon", o->rc.privacy.epsilon);
    dpc_ckpt_item_num(ck, "delta", "delta", o->rc.privacy.delta);
    dpc_ckpt_item_str(ck, "calibration", "calibration", dpc_calibration_name(o->rc.privacy.calibration));
    dpc_ckpt_item_num(ck, "noise_multiplier", "noise multiplier (given)", o->rc.privacy.noise_multiplier);
    dpc_ckpt_item_str(ck, "model", "model", o->model);
    dpc_ckpt_item_count(ck, "eval_every", "evaluation interval", o->rc.eval_every);
    dpc_ckpt_item_count(ck, "chunk", "chunk", o->rc.chunk);
}

static dpc_status ckpt_put(void *ctx, dpc_ckpt *ck, dpc_error *err)
{
    const kan_run *r = ((const kan_loop *)ctx)->r;
    return dpc_ckpt_put(ck, "cli.train_loss", r->lt, r->T, err);
}

static int ckpt_get(void *ctx, const dpc_ckpt *ck)
{
    kan_run *r = ((kan_loop *)ctx)->r;
    dpc_error err = {0};
    return dpc_ckpt_get(ck, "cli.train_loss", r->lt, r->T, &err) ? frame_ckpt_fail(r->s, &err) : 0;
}

static int on_iterate(void *ctx, const void *vinfo, size_t t)
{
    const dpc_kan_lcgd_run_info *in = vinfo;
    (void)t;
    return trace(((kan_loop *)ctx)->tc, &in->step, in->train_loss, in->test_loss);
}

/* A value for printing: "%.4g", or `none` where it is not finite (no radius, no closed form,
 * no test set: never "inf" or "nan" in the output). */
static const char *num_or(char *buf, size_t len, double v, const char *none)
{
    if (isfinite(v)) snprintf(buf, len, "%.4g", v);
    else snprintf(buf, len, "%s", none);
    return buf;
}

static void banner(const kan_run *r, const dpc_kan_lcgd_config *lc)
{
    const kopts *o = r->o;
    const dpc_ledger *L = &r->led;
    char tag[80], rd[96], rb[32], pb[32];
    fprintf(stderr, "%sprojected DP-lambda-CGD | %s (%zu parameters) | n %zu, B %zu, %zu "
                    "iterates | lambda %g, noise multiplier %.6g (%s), C %.4g, eta %.4g, R %s "
                    "| %s\n",
            frame_tag(&o->fr, tag, sizeof tag), o->model, r->P, lc->n, lc->batch, r->T,
            lc->lambda, L->noise_multiplier, L->calibration, lc->clip, lc->eta,
            num_or(rb, sizeof rb, lc->radius, "none"),
            frame_rng_desc(L->rng_mode, L->seed, rd, sizeof rd));
    fprintf(stderr, "  (%.4g, %g)-DP by the accountant (%s); the paper's closed form: %s\n",
            L->epsilon, L->delta, L->route, num_or(pb, sizeof pb, L->epsilon_paper, "n/a"));
}

static int train(kan_run *r, const dpc_kan_lcgd_config *lc)
{
    const kopts *o = r->o;
    const dpc_ledger *L = &r->led;
    if (!o->fr.quiet) banner(r, lc);
    if (!(r->lt = malloc(r->T * sizeof *r->lt))) return opt_fail(r->s, "out of memory");
    for (size_t t = 0; t < r->T; t++) r->lt[t] = NAN;
    trace_ctx tc = {.tty = isatty(2), .quiet = o->fr.quiet, .T = r->T, .t0 = cli_now(), .last = 0,
                    .loss = r->lt};
    dpc_kan_lcgd *run = NULL;
    dpc_error err = {0};
    if (dpc_kan_lcgd_new(&run, lc, r->P, r->W0, &o->fr.rng, &err)) return opt_fail_lib(r->s, &err);
    double t0 = cli_now();
    dpc_kan_lcgd_runner b = {.run = run, .grad = dpc_kan_task_grad, .eval = dpc_kan_task_eval,
                             .ctx = r->task, .eval_every = o->rc.eval_every, .ledger = &r->led};
    kan_loop kl = {.r = r, .tc = &tc};
    dpc_kan_lcgd_run_info info;
    frame_loop F = {.run = dpc_kan_lcgd_run_ops(&b), .info = &info, .unit = "iterate", .ctx = &kl,
                    .on_step = on_iterate, .ckpt_items = ckpt_items, .ckpt_put = ckpt_put,
                    .ckpt_get = ckpt_get};
    int rc = o->fr.resume ? frame_resume(&o->fr, r->s, &F) : 0;
    if (!rc) rc = frame_run(&o->fr, &F);
    dpc_kan_lcgd_result res;
    dpc_kan_lcgd_result_get(run, &res);
    r->params_hash = dpc_params_hash(dpc_kan_lcgd_params(run), r->P);
    dpc_kan_lcgd_free(run);
    if (rc) return rc == FRAME_STOPPED ? 0 : rc;
    double train_s = cli_now() - t0;
    if (!o->fr.quiet && tc.tty) fputc('\n', stderr);
    char tb[96] = "no test set", pb[32];
    if (isfinite(res.avg_test_loss))
        snprintf(tb, sizeof tb, "avg test loss %.6f (err %.4f)", res.avg_test_loss,
                 res.avg_test_err);
    printf("avg train loss %.6f (err %.4f)  %s  last train loss %.6f  "
           "projections %zu  clipped %.4f  max ||W-W0|| %.4g  noise multiplier %.6g  epsilon %.4g "
           "(paper %s)  (%.1f s, params %016llx)\n",
           res.avg_train_loss, res.avg_train_err, tb, res.last_train_loss, res.projections,
           res.examples ? (double)res.clipped / (double)res.examples : 0, res.max_dist,
           L->noise_multiplier, L->epsilon, num_or(pb, sizeof pb, L->epsilon_paper, "n/a"),
           train_s, (unsigned long long)r->params_hash);
    rc = o->fr.report ? write_report(r, &res, train_s) : 0;
    if (o->fr.plot) rc = rc ? rc : plot(r);
    return rc;
}

int train_lcgd_projected(int argc, char **argv)
{
    opt_set s;
    int rc = opt_parse(&s, &KAN_CMD, argc, argv, 1, 0);
    if (rc || s.help) return rc;
    kopts o;
    kan_run r;
    memset(&r, 0, sizeof r);
    r.o = &o;
    r.s = &s;
    r.mg = (dpc_kan_margin){.gamma_lo = NAN, .gamma_hi = NAN};
    dpc_kan_lcgd_config lc;
    if (!(rc = read_opts(&o, &s)) && !(rc = prepare(&r, &lc, !s.dry_run || o.radius_theory))) {
        if (s.dry_run) dry_run(&r, &lc);
        else rc = train(&r, &lc);
    }
    free(r.W0);
    free(r.lt);
    dpc_kan_task_free(r.task);
    dpc_kan2_free(r.k);
    dpc_model_free(r.m);
    frame_free(&o.fr);
    return rc;
}
