/* cmd_audit.c — `dpcorr audit`: an empirical lower bound on epsilon from one training run with
 * canaries (Steinke, Nasr & Jagielski 2023; dpcorr/audit.h, doc/audit.md). The audited run is
 * configured by the option entries of `dpcorr train` (TRAIN_RUN_OPTS, shared, read by
 * train_read_run); without options it audits DP-SGD on Fashion-MNIST with a softmax model. The
 * options of train that an uninterrupted audit cannot honour (checkpoints, resume, early stop)
 * are refused by name. Parses and prints; the library decides. */
#include "audit_cli.h"
#include "progress.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The audit's default run (the command's recipe, instead of train's defaults), each written once
 * here: the help text spells them from these */
#define AUDIT_DATA "fashion-mnist"
#define AUDIT_MODEL "softmax"
#define AUDIT_EPSILON 8 /* the claim when neither --epsilon nor --noise-multiplier is given */
#define AUDIT_EPOCHS 5
#define AUDIT_LR 1
#define QUICK_DATA "fashion-mnist:limit=20000"
#define QUICK_EPOCHS 2
#define SEC "audit"
#define STR_(x) #x
#define STR(x) STR_(x)

/* the audit's parameters: type, range, default and words from dpc_audit_config's table */
#define AUDIT_FIELD .fields = dpc_audit_config_fields
static const opt_spec AU_CANARIES = {
    .name = "--canaries", .metavar = "M", .type = OPT_UINT, AUDIT_FIELD, .section = SEC,
    .param = "canaries",
    .help = "number of canaries (gradient canaries need M <= the model's parameters, mislabel "
            "canaries M < the training examples)",
    .example = "--canaries 3"};
static const opt_spec AU_CANARY = {
    .name = "--canary", .metavar = "KIND", .type = OPT_CHOICE, AUDIT_FIELD, .section = SEC,
    .param = "canary",
    .help = "gradient: white-box, a clipped gradient on one parameter, scored by the likelihood "
            "ratio of the whitened trajectory | mislabel | ood (black-box: inputs scored by the "
            "final model's loss)",
    .example = "--canary ood"};
/* the guess sizes' default is the bound's grid, in the CLI's words */
static const opt_spec AU_GUESSES = {
    .name = "--guesses", .metavar = "K", .type = OPT_UINT, AUDIT_FIELD, .flags = OPT_OWN_DEFAULT,
    .section = SEC,
    .param = "k_plus",
    .help = "guess 'in' for the K highest scores (default: the grid of 1-50% of M, with and "
            "without bottom guesses, Bonferroni)",
    .example = "--guesses 2"};
static const opt_spec AU_GUESSES_BOTTOM = {
    .name = "--guesses-bottom", .metavar = "K", .type = OPT_UINT, AUDIT_FIELD,
    .flags = OPT_OWN_DEFAULT, .section = SEC,
    .param = "k_minus",
    .help = "guess 'out' for the K lowest scores (default none; one guess size, with --guesses)",
    .example = "--guesses-bottom 2"};
static const opt_spec AU_CONFIDENCE = {
    .name = "--confidence", .metavar = "C", .type = OPT_DOUBLE, AUDIT_FIELD, .section = SEC,
    .param = "confidence", .help = "confidence of the bound", .example = "--confidence 0.9"};
static const opt_spec AU_QUICK = {
    .name = "--quick", .type = OPT_FLAG, .section = SEC, .param = "quick",
    .help = "data " QUICK_DATA " and " STR(QUICK_EPOCHS) " epochs unless --data / --epochs are given (seconds)",
    .example = "--quick"};
static const opt_spec AU_STUDY = {
    .name = "--study", .metavar = "DIR", .type = OPT_STR, .flags = OPT_OUT_DIR, .section = SEC,
    .param = "study",
    .conflicts = "--json --report --plot --epsilon --noise-multiplier --mech --sampler",
    .help = "lower bound vs claimed epsilon 1, 2, 4, 8, 16 for DP-SGD (Poisson), nu-DP-FTRL "
            "(fixed order) and BSR (cyclic Poisson), the other options as given: table, "
            "DIR/audit_study.csv, .json and .png",
    .example = "! --data synthetic:logistic,n=600,d=4 --model logistic --batch 20 --canaries 5 "
               "--study {tmp}/study"};

static const opt_spec *const AUDIT_OPTS[] = {
    &TR_ALGO, TRAIN_RUN_OPTS, &AU_CANARIES, &AU_CANARY, &AU_GUESSES, &AU_GUESSES_BOTTOM,
    &AU_CONFIDENCE, &OPT_JSON, &AU_QUICK, &AU_STUDY, &OPT_DRY_RUN, &OPT_HELP, NULL};
static const opt_spec *const AUDIT_REFUSED[] = {FRAME_CKPT_OPTS, NULL};

static const opt_cmd AUDIT_CMD = {
    .name = "audit",
    .usage = "dpcorr audit [options of dpcorr train] [--canaries M] [--canary KIND]\n"
             "                    [--guesses K] [--guesses-bottom K] [--confidence C] [--json]\n"
             "                    [--report F.json] [--plot F.png] [--quick] [--study DIR]",
    .about = "Trains once with M canaries, each included with probability 1/2 and drawn by the\n"
             "run's own sampler, scores them from what the run releases, guesses the K highest as\n"
             "in and the K' lowest as out, and reports the lower bound on epsilon of Steinke, Nasr\n"
             "& Jagielski (2023) at the given confidence next to the epsilon the run claims. A bound\n"
             "above the claim means the run is not as private as claimed (doc/audit.md).\n"
             "Every run option of `dpcorr train` configures the audited run, with these audit\n"
             "defaults instead of train's: --data " AUDIT_DATA ", --model " AUDIT_MODEL
             ", --epsilon " STR(AUDIT_EPSILON) ",\n"
             "--epochs " STR(AUDIT_EPOCHS) ", --lr " STR(AUDIT_LR) " (DP-SGD with Poisson sampling, train's batch and clip, the\n"
             "audit options' defaults below). --report writes the audit's JSON, --plot the\n"
             "canary score histograms and the bound per guess count.",
    .opts = AUDIT_OPTS,
    .kind_opt = "--mech",
    .minimal = "--data synthetic:logistic,n=600,d=4 --model logistic --epsilon 1 --batch 20 "
               "--canaries 5",
    .refused = AUDIT_REFUSED,
    .refused_why = "not available in an audit (one uninterrupted dp-ftrl run: no checkpoint, "
                   "resume or early stop)",
};

/* The audit options into o->ac (the library checks them). */
static int read_audit(audit_opts *o, opt_set *s)
{
    dpc_error err = {0};
    opt_read_field(s, &AU_CANARY, &o->ac);
    opt_read_field(s, &AU_CANARIES, &o->ac);
    opt_read_field(s, &AU_GUESSES, &o->ac);
    opt_read_field(s, &AU_GUESSES_BOTTOM, &o->ac);
    opt_read_field(s, &AU_CONFIDENCE, &o->ac);
    if (dpc_audit_config_check(&o->ac, &err)) return opt_fail_lib(s, &err);
    return 0;
}

static int read_opts(audit_opts *o, opt_set *s)
{
    train_opts *t = &o->t;
    opt_use(s, &TR_ALGO); /* dp-ftrl: the only trainer an audit runs */
    o->quick = opt_given(s, &AU_QUICK);
    o->study = opt_str(s, &AU_STUDY, NULL);
    o->json = opt_given(s, &OPT_JSON);
    /* the audit's defaults, which the shared reader keeps unless the options are given */
    t->fr.data = o->quick ? QUICK_DATA : AUDIT_DATA;
    t->model = AUDIT_MODEL;
    t->cfg.epochs = o->quick ? QUICK_EPOCHS : AUDIT_EPOCHS;
    t->cfg.lr = AUDIT_LR;
    int rc = train_read_run(t, s);
    if (rc || (rc = read_audit(o, s)) || (rc = opt_finish(s))) return rc;
    if (t->cfg.epsilon == 0 && t->cfg.noise_multiplier == 0) t->cfg.epsilon = AUDIT_EPSILON;
    if ((rc = frame_check(&t->fr, s, 1))) return rc;
    /* the study's files (audit_study.c; the plot's data and script kept beside it on request)
     * checked before any work against the inputs, the data and the other outputs */
    static const char *const study_files[] = {"audit_study.csv", "audit_study.json",
                                              "audit_study.png", "audit_study.dat",
                                              "audit_study.gp", NULL};
    if (o->study && ((rc = cli_make_out_dir(s, &AU_STUDY, o->study)) ||
                     (rc = cli_check_dir_outputs(s, &AU_STUDY, o->study, study_files,
                                                 t->fr.data))))
        return rc;
    return 0;
}

/* ---- one audit ------------------------------------------------------------------------------ */

typedef struct progress_ctx {
    char tag[80];
    int show;
    double last;
    cli_progress calib; /* the calibration's line, ended before the first step's */
} progress_ctx;

static int progress(void *ctx, const dpc_step_info *info, size_t steps)
{
    progress_ctx *p = ctx;
    cli_progress_end(&p->calib);
    double now = cli_now();
    if (!p->show || (now - p->last < 0.25 && info->step + 1 < steps)) return 0;
    p->last = now;
    fprintf(stderr, "\r%saudit step %zu/%zu  loss %.4f ", p->tag, info->step + 1, steps,
            info->loss);
    if (info->step + 1 == steps) fputc('\n', stderr);
    return 0;
}

int audit_one(audit_opts *o, opt_set *s, const dpc_model *model, dpc_audit_result *res)
{
    train_opts *t = &o->t;
    progress_ctx pc = {"", !t->fr.quiet && isatty(2), 0, {0}};
    frame_tag(&t->fr, pc.tag, sizeof pc.tag);
    char what[128]; /* the calibration (balls-in-bins, MMCC) can take seconds: shown after 2 s */
    snprintf(what, sizeof what, "%sdpcorr audit: calibrating", pc.tag);
    o->ac.calibration = cli_progress_start(&pc.calib, what, "stages", t->fr.quiet);
    dpc_error err = {0};
    dpc_status st = dpc_audit_run(&o->ac, &t->cfg, model, t->fr.train, t->fr.test, &t->fr.rng,
                                  progress, &pc, res, &err);
    cli_progress_end(&pc.calib);
    o->ac.calibration = (dpc_progress){0};
    if (st) return opt_fail_lib(s, &err);
    return 0;
}

void audit_json_fields(dpc_json_writer *w, const audit_opts *o, const dpc_audit_result *r)
{
    dpc_audit_result_json(w, r);
    dpc_json_str(w, "data", o->t.fr.data);
    dpc_json_str(w, "features", o->t.features ? o->t.features : "none");
    dpc_json_str(w, "model", o->model_spec);
    dpc_ledger_json_member(w, "ledger", &r->ledger);
}

static void print_summary(const audit_opts *o, const dpc_audit_result *r)
{
    const dpc_ledger *L = &r->ledger;
    const dpc_audit_bound_result *b = &r->bound;
    printf("audited run   %s | %s sampler, batch %zu, %zu steps | %s, %s\n", L->mechanism,
           L->sampler, o->t.cfg.batch, L->steps, o->t.fr.data, o->model_spec);
    printf("claim         (%.4g, %.3g)-DP (%s)\n", L->epsilon, L->delta, L->route);
    printf("canaries      %zu %s canaries, %zu included, among %zu training examples\n",
           r->canaries, dpc_audit_canary_name(r->canary), r->included, r->examples);
    printf("score         %s\n", r->statistic);
    printf("guesses       top %zu in, bottom %zu out: %zu of %zu correct (%zu candidate sizes)\n",
           b->k_plus, b->k_minus, b->correct, b->guesses, b->candidates);
    printf("lower bound   epsilon >= %.4f at %.0f%% confidence (claimed %.4f)%s\n", b->epsilon,
           100 * b->confidence, L->epsilon,
           dpc_audit_refutes(r) ? "  VIOLATION: the run is less private than claimed" : "");
    if (!isnan(r->test_accuracy)) printf("test accuracy %.4f\n", r->test_accuracy);
}

/* Histograms of the included and left-out canaries' scores, and the bound per guess count. */
static int plot_audit(const char *png, const dpc_audit_result *r)
{
    enum { BINS = 40, KS = 24 };
    size_t m = r->canaries;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < m; i++) lo = fmin(lo, r->scores[i]), hi = fmax(hi, r->scores[i]);
    if (!(hi > lo)) hi = lo + 1;
    double x[BINS], hin[BINS] = {0}, hout[BINS] = {0}, w = (hi - lo) / BINS;
    for (size_t b = 0; b < BINS; b++) x[b] = lo + ((double)b + 0.5) * w;
    for (size_t i = 0; i < m; i++) {
        size_t b = (size_t)((r->scores[i] - lo) / w);
        if (b >= BINS) b = BINS - 1;
        (r->in[i] ? hin : hout)[b] += 1;
    }
    double kx[KS], top[KS], both[KS], claim[KS];
    size_t nk = dpc_audit_bound_curve(r, KS, kx, top, both);
    for (size_t j = 0; j < nk; j++) claim[j] = r->ledger.epsilon;
    plot_series hs[2] = {{"included", x, hin, NULL, BINS, PLOT_LINESPOINTS},
                         {"left out", x, hout, NULL, BINS, PLOT_LINESPOINTS}};
    plot_series ks[3] = {{"top k in", kx, top, NULL, nk, PLOT_LINESPOINTS},
                         {"top k in + bottom k out", kx, both, NULL, nk, PLOT_LINESPOINTS},
                         {"claimed epsilon", kx, claim, NULL, nk, PLOT_LINES}};
    plot_panel panels[2] = {{"canary scores", r->canary == DPC_AUDIT_GRADIENT ? "LLR score"
                                                                               : "loss decrease",
                             "canaries", 0, 0, hs, 2},
                            {"lower bound per guess count (per-test level of the audit)", "k",
                             "epsilon", 1, 0, ks, 3}};
    return frame_plot(png, panels, 2);
}

static int report(const audit_opts *o, const dpc_audit_result *r)
{
    dpc_json_writer w;
    if (o->json) {
        dpc_json_begin_line(&w, stdout);
        audit_json_fields(&w, o, r);
        dpc_json_finish(&w);
    } else {
        print_summary(o, r);
    }
    int rc = 0;
    if (o->t.fr.report) {
        FILE *f = frame_report_open(&o->t.fr, &w, "audit");
        if (!f) return CLI_RUNTIME;
        audit_json_fields(&w, o, r);
        rc = frame_report_close(&w, f, o->t.fr.report);
    }
    if (o->t.fr.plot) {
        int r2 = plot_audit(o->t.fr.plot, r);
        rc = rc ? rc : r2;
    }
    return rc;
}

/* --dry-run: the audited run's configuration as the library resolves it (on the training set
 * with the canary slots), then the audit's. */
static int dry_run(audit_opts *o, opt_set *s, const train_result *tr, const dpc_model *model)
{
    dpc_train_config c;
    size_t examples = 0;
    dpc_error err = {0};
    if (dpc_audit_resolve(&o->ac, &o->t.cfg, model, o->t.fr.train, &o->t.fr.rng, &c, &examples,
                          &err) ||
        dpc_model_precision_check(model, c.precision, &err))
        return opt_fail_lib(s, &err);
    train_dry_print(&o->t, tr, &c);
    opt_dry_str("canary", dpc_audit_canary_name(o->ac.canary));
    opt_dry_uint("canaries", o->ac.canaries);
    opt_dry_uint("examples", examples);
    opt_dry_num("confidence", o->ac.confidence);
    opt_dry_uint("k_plus", o->ac.k_plus);
    opt_dry_uint("k_minus", o->ac.k_minus);
    opt_dry_uint("json", (uint64_t)o->json);
    opt_dry_uint("quick", (uint64_t)o->quick);
    opt_dry_str("study", o->study);
    return o->study ? audit_study_dry(o, s, model) : 0;
}

int cmd_audit(int argc, char **argv)
{
    opt_set s;
    int rc = opt_parse(&s, &AUDIT_CMD, argc, argv, 1, 0);
    if (rc || s.help) return rc;
    audit_opts o;
    memset(&o, 0, sizeof o);
    train_opts_init(&o.t);
    dpc_audit_config_init(&o.ac);
    dpc_model *model = NULL;
    train_result tr;
    memset(&tr, 0, sizeof tr);
    if (!(rc = read_opts(&o, &s)) && !(rc = train_prepare(&o.t, &s, &tr, &model))) {
        snprintf(o.model_spec, sizeof o.model_spec, "%s", tr.model_spec);
        if (s.dry_run) {
            rc = dry_run(&o, &s, &tr, model);
        } else if (o.study) {
            rc = audit_study(&o, &s, model);
        } else {
            dpc_audit_result res;
            if (!(rc = audit_one(&o, &s, model, &res))) {
                rc = report(&o, &res);
                dpc_audit_result_free(&res);
            }
        }
    }
    dpc_model_free(model);
    train_opts_free(&o.t);
    return rc;
}
