/* cmd_audit.c — `dpcorr audit`: an empirical lower bound on epsilon from one training run with
 * canaries (Steinke, Nasr & Jagielski 2023; dpcorr/audit.h, doc/audit.md). Every option of
 * `dpcorr train` configures the audited run; without options it audits DP-SGD on Fashion-MNIST
 * with a softmax model. Parses and prints; the library decides. */
#include "audit_cli.h"
#include "plot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define AUDIT_EPSILON 8.0   /* default claim when neither --epsilon nor --noise-multiplier */
#define AUDIT_EPOCHS 5
#define AUDIT_LR 1.0
#define QUICK_DATA "fashion-mnist:limit=20000"
#define QUICK_EPOCHS 2

static void usage(FILE *f)
{
    fprintf(f,
            "usage: dpcorr audit [training options] [--canaries M] [--canary KIND]\n"
            "                    [--guesses K] [--guesses-bottom K] [--confidence C]\n"
            "                    [--json] [--report F.json] [--plot F.png] [--quick] [--study DIR]\n\n"
            "Trains once with M canaries, each included with probability 1/2 and drawn by the run's\n"
            "own sampler, scores them from what the run releases, guesses the K highest as in and\n"
            "the K' lowest as out, and reports the lower bound on epsilon of Steinke, Nasr &\n"
            "Jagielski (2023) at the given confidence next to the epsilon the run claims. A bound\n"
            "above the claim means the run is not as private as claimed (doc/audit.md).\n"
            "Without options: Fashion-MNIST, softmax, DP-SGD (Poisson), epsilon %g, %d epochs,\n"
            "lr %g, 1000 white-box gradient canaries, 95%% confidence.\n\n"
            "audit:\n"
            "  --canaries M           number of canaries (default 1000; gradient canaries need M <=\n"
            "                         the model's parameters)\n"
            "  --canary KIND          gradient (white-box, default): a clipped gradient on one\n"
            "                         parameter, scored by the likelihood ratio of the whitened\n"
            "                         trajectory | mislabel | ood (black-box: inputs scored by the\n"
            "                         final model's loss)\n"
            "  --guesses K            guess 'in' for the K highest scores (default: the grid of\n"
            "                         1-50%% of M, with and without bottom guesses, Bonferroni)\n"
            "  --guesses-bottom K     guess 'out' for the K lowest scores (with --guesses; default 0)\n"
            "  --confidence C         confidence of the bound in (0, 1) (default 0.95)\n"
            "  --json                 the result as JSON on stdout (keys epsilon, delta,\n"
            "                         epsilon_lower_bound, confidence, canaries, guesses, correct,\n"
            "                         method, ...)\n"
            "  --plot F.png           canary score histograms and the bound per guess count\n"
            "  --report F.json        the JSON result to a file\n"
            "  --quick                %s and %d epochs unless given (a few minutes)\n"
            "  --study DIR            lower bound vs claimed epsilon 1, 2, 4, 8, 16 for DP-SGD,\n"
            "                         nu-DP-FTRL (fixed order) and BSR (cyclic Poisson): table,\n"
            "                         DIR/audit_study.csv, .json and .png\n\n",
            AUDIT_EPSILON, AUDIT_EPOCHS, AUDIT_LR, QUICK_DATA, QUICK_EPOCHS);
    train_opts_help(f);
    cli_mech_help(f, "--mech");
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* A library error, its field spelled as the option that sets it (k_plus -> --guesses, ...). */
static int fail_lib(const dpc_error *err)
{
    static const char *const map[][2] = {{"k_plus", "guesses"}, {"k_minus", "guesses-bottom"}};
    const char *msg = err->msg;
    size_t fl = strlen(err->field);
    for (size_t i = 0; fl && i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(err->field, map[i][0]) && !strncmp(msg, err->field, fl) && msg[fl] == ':')
            return cli_fail("audit", "--%s%s", map[i][1], msg + fl);
    return cli_fail("audit", "--%s", msg);
}

/* Parses one audit option at it: 1 consumed, 0 not an audit option, -1 bad value. */
static int audit_opt(audit_opts *o, cli_iter *it)
{
    const char *v;
    dpc_error err = {0};
    if (cli_is(it, "--json")) return o->json = 1, 1;
    if (cli_is(it, "--quick")) return o->quick = 1, 1;
    if (cli_is(it, "--study")) return (o->study = cli_value(it)) ? 1 : -1;
    if (cli_is(it, "--canaries")) return (v = cli_value(it)) && !cli_size(it, v, &o->ac.canaries) ? 1 : -1;
    if (cli_is(it, "--guesses")) return (v = cli_value(it)) && !cli_size(it, v, &o->ac.k_plus) ? 1 : -1;
    if (cli_is(it, "--guesses-bottom"))
        return (v = cli_value(it)) && !cli_size(it, v, &o->ac.k_minus) ? 1 : -1;
    if (cli_is(it, "--confidence"))
        return (v = cli_value(it)) && !cli_double(it, v, &o->ac.confidence) ? 1 : -1;
    if (cli_is(it, "--canary")) {
        if (!(v = cli_value(it))) return -1;
        if (dpc_audit_canary_parse(v, &o->ac.canary, &err)) return cli_fail(it->cmd, "--%s", err.msg), -1;
        return 1;
    }
    static const char *const refused[] = {"--checkpoint", "--checkpoint-every", "--resume",
                                          "--stop-after", "--algo"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        if (cli_is(it, refused[i]))
            return cli_fail(it->cmd, "%s: not available in an audit (one uninterrupted dp-ftrl run)",
                            it->name), -1;
    return 0;
}

static int parse(audit_opts *o, int argc, char **argv, int *help)
{
    cli_iter it;
    cli_iter_init(&it, "audit", argc, argv, 1);
    int epochs_given = 0, lr_given = 0;
    while (cli_next(&it)) {
        if (cli_is(&it, "--help") || cli_is(&it, "-h")) return *help = 1, 0;
        epochs_given |= cli_is(&it, "--epochs");
        lr_given |= cli_is(&it, "--lr");
        int r = audit_opt(o, &it);
        if (r == 0) r = train_opt(&o->t, &it);
        if (r < 0) return CLI_USAGE;
        if (r == 0) return cli_fail("audit", "%s: unknown option (see dpcorr audit --help)", it.name);
    }
    dpc_error err = {0};
    if (dpc_audit_config_check(&o->ac, &err)) return fail_lib(&err);
    train_opts *t = &o->t;
    if (!t->data) t->data = o->quick ? QUICK_DATA : "fashion-mnist";
    if (!t->model) t->model = "softmax";
    if (!epochs_given) t->cfg.epochs = o->quick ? QUICK_EPOCHS : AUDIT_EPOCHS;
    if (!lr_given) t->cfg.lr = AUDIT_LR;
    if (t->cfg.epsilon == 0 && t->cfg.noise_multiplier == 0) t->cfg.epsilon = AUDIT_EPSILON;
    return 0;
}

/* ---- one audit ------------------------------------------------------------------------------ */

typedef struct progress_ctx {
    const char *label;
    int show;
    double last;
} progress_ctx;

static int progress(void *ctx, const dpc_step_info *info, size_t steps)
{
    progress_ctx *p = ctx;
    double now = now_s();
    if (!p->show || (now - p->last < 0.25 && info->step + 1 < steps)) return 0;
    p->last = now;
    fprintf(stderr, "\r%s step %zu/%zu  loss %.4f ", p->label, info->step + 1, steps, info->loss);
    if (info->step + 1 == steps) fputc('\n', stderr);
    return 0;
}

int audit_one(audit_opts *o, const dpc_dataset *train, const dpc_dataset *test,
              const dpc_model *model, dpc_audit_result *res)
{
    train_opts *t = &o->t;
    t->cfg.mech = t->mech.p;
    t->cfg.noise_form = t->mech.form;
    t->cfg.workload_explicit = t->mech.workload_set;
    dpc_rng rng;
    dpc_error err = {0};
    if (t->secure) {
        if (dpc_rng_seed_os(&rng, &err)) return cli_fail("audit", "--secure: %s", err.msg);
    } else {
        dpc_rng_seed(&rng, t->seed);
    }
    progress_ctx pc = {t->label ? t->label : "audit", !t->quiet && isatty(2), 0};
    dpc_status st = dpc_audit_run(&o->ac, &t->cfg, model, train, test, &rng, progress, &pc, res, &err);
    if (st == DPC_E_NOMEM || st == DPC_E_NUMERIC || st == DPC_E_STATE) {
        fprintf(stderr, "dpcorr audit: %s\n", err.msg);
        return CLI_RUNTIME;
    }
    return st ? fail_lib(&err) : 0;
}

void audit_json(FILE *f, const audit_opts *o, const dpc_audit_result *r, const char *in)
{
    const dpc_audit_bound_result *b = &r->bound;
    fprintf(f, "{\n%s  ", in);
    cli_json_num(f, "epsilon", r->ledger.epsilon, 1);
    cli_json_num(f, "delta", r->ledger.delta, 1);
    cli_json_num(f, "epsilon_lower_bound", b->epsilon, 1);
    cli_json_num(f, "confidence", b->confidence, 1);
    cli_json_int(f, "canaries", (long long)r->canaries, 1);
    cli_json_int(f, "guesses", (long long)b->guesses, 1);
    cli_json_int(f, "correct", (long long)b->correct, 1);
    cli_json_str(f, "method", r->method, 0);
    fprintf(f, ",\n%s  ", in);
    cli_json_str(f, "canary", dpc_audit_canary_name(r->canary), 1);
    cli_json_str(f, "statistic", r->statistic, 1);
    cli_json_int(f, "included", (long long)r->included, 1);
    cli_json_int(f, "k_plus", (long long)b->k_plus, 1);
    cli_json_int(f, "k_minus", (long long)b->k_minus, 1);
    cli_json_int(f, "candidates", (long long)b->candidates, 1);
    cli_json_num(f, "significance", b->significance, 1);
    cli_json_num(f, "p_value", b->p_value, 1);
    cli_json_num(f, "mu_max", r->mu_max, 1);
    cli_json_int(f, "examples", (long long)r->examples, 1);
    cli_json_num(f, "test_accuracy", r->test_accuracy, 1);
    cli_json_str(f, "data", o->t.data, 1);
    cli_json_str(f, "model", o->t.model, 0);
    char lj[4096];
    dpc_ledger_json(&r->ledger, lj, sizeof lj);
    fprintf(f, ",\n%s  \"ledger\": %s\n%s}", in, lj, in);
}

static void print_summary(const audit_opts *o, const dpc_audit_result *r)
{
    const dpc_ledger *L = &r->ledger;
    const dpc_audit_bound_result *b = &r->bound;
    printf("audited run   %s | %s sampler, batch %zu, %zu steps | %s, %s\n", L->mechanism,
           L->sampler, o->t.cfg.batch, L->steps, o->t.data, o->t.model);
    printf("claim         (%.4g, %.3g)-DP (%s)\n", L->epsilon, L->delta, L->route);
    printf("canaries      %zu %s canaries, %zu included, among %zu training examples\n",
           r->canaries, dpc_audit_canary_name(r->canary), r->included, r->examples);
    printf("score         %s\n", r->statistic);
    printf("guesses       top %zu in, bottom %zu out: %zu of %zu correct (%zu candidate sizes)\n",
           b->k_plus, b->k_minus, b->correct, b->guesses, b->candidates);
    printf("lower bound   epsilon >= %.4f at %.0f%% confidence (claimed %.4f)%s\n", b->epsilon,
           100 * b->confidence, L->epsilon,
           b->epsilon > L->epsilon ? "  VIOLATION: the run is less private than claimed" : "");
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
    for (size_t b = 0; b < BINS; b++) x[b] = lo + (b + 0.5) * w;
    for (size_t i = 0; i < m; i++) {
        size_t b = (size_t)((r->scores[i] - lo) / w);
        if (b >= BINS) b = BINS - 1;
        (r->in[i] ? hin : hout)[b] += 1;
    }
    double kx[KS], top[KS], both[KS], claim[KS];
    size_t nk = 0;
    dpc_error err = {0};
    for (size_t j = 0; j < KS; j++) {
        size_t k = (size_t)floor(pow((double)m / 2, (double)(j + 1) / KS) + 0.5);
        if (k < 1 || (nk && k <= (size_t)kx[nk - 1])) continue;
        size_t v1, v2;
        double e1 = NAN, e2 = NAN;
        if (!dpc_audit_correct(r->scores, r->in, m, k, 0, &v1, &err) &&
            !dpc_audit_correct(r->scores, r->in, m, k, k, &v2, &err) &&
            !dpc_audit_epsilon_bound(m, k, v1, r->ledger.delta, r->bound.significance, &e1, &err) &&
            !dpc_audit_epsilon_bound(m, 2 * k, v2, r->ledger.delta, r->bound.significance, &e2, &err)) {
            kx[nk] = (double)k;
            top[nk] = e1;
            both[nk] = e2;
            claim[nk] = r->ledger.epsilon;
            nk++;
        }
    }
    plot_series hs[2] = {{"included", x, hin, NULL, BINS, PLOT_LINESPOINTS},
                         {"left out", x, hout, NULL, BINS, PLOT_LINESPOINTS}};
    plot_series ks[3] = {{"top k in", kx, top, NULL, nk, PLOT_LINESPOINTS},
                         {"top k in + bottom k out", kx, both, NULL, nk, PLOT_LINESPOINTS},
                         {"claimed epsilon", kx, claim, NULL, nk, PLOT_LINES}};
    plot_panel panels[2] = {{"canary scores", r->statistic[0] == 'w' ? "LLR score" : "loss decrease",
                             "canaries", 0, 0, hs, 2},
                            {"lower bound per guess count (per-test level of the audit)", "k",
                             "epsilon", 1, 0, ks, 3}};
    char dir[1024], name[256], msg[256];
    const char *slash = strrchr(png, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - png) : 1, slash ? png : ".");
    snprintf(name, sizeof name, "%s", slash ? slash + 1 : png);
    size_t nl = strlen(name);
    if (nl > 4 && !strcmp(name + nl - 4, ".png")) name[nl - 4] = 0;
    int rc = plot_render(dir, name, panels, 2, msg, sizeof msg);
    if (rc) fprintf(stderr, "dpcorr audit: warning: %s\n", msg);
    return rc;
}

static int report(const audit_opts *o, const dpc_audit_result *r)
{
    if (o->json) {
        audit_json(stdout, o, r, "");
        fputc('\n', stdout);
    } else {
        print_summary(o, r);
    }
    if (o->t.report) {
        FILE *f = fopen(o->t.report, "w");
        if (!f) return fprintf(stderr, "dpcorr audit: --report: cannot write %s\n", o->t.report), CLI_RUNTIME;
        audit_json(f, o, r, "");
        fputc('\n', f);
        if (fclose(f)) return fprintf(stderr, "dpcorr audit: --report: write error\n"), CLI_RUNTIME;
    }
    if (o->t.plot) plot_audit(o->t.plot, r);
    return 0;
}

int cmd_audit(int argc, char **argv)
{
    audit_opts o;
    memset(&o, 0, sizeof o);
    train_opts_init(&o.t);
    dpc_audit_config_init(&o.ac);
    int help = 0, rc = parse(&o, argc, argv, &help);
    dpc_dataset *train = NULL, *test = NULL;
    dpc_model *model = NULL;
    if (rc || help) {
        if (help) usage(stdout);
        goto out;
    }
    if (!o.t.mech.p.steps) o.t.mech.p.steps = 1; /* the trainer sets the steps */
    if ((rc = cli_mech_finish(&o.t.mech, "audit", "--mech"))) goto out;
    dpc_error err = {0};
    dpc_rng drng;
    dpc_rng_seed(&drng, o.t.seed);
    if (dpc_data_load_spec(&train, &test, o.t.data, &drng, &err)) {
        rc = cli_fail("audit", "--data: %s", err.msg);
        goto out;
    }
    dpc_model_config mc;
    if (dpc_model_parse(&mc, o.t.model, train->d, train->n_classes, &err) ||
        dpc_model_new(&model, &mc, &err)) {
        rc = cli_fail("audit", "--model: %s", err.msg);
        goto out;
    }
    if (o.study) {
        rc = audit_study(&o, train, test, model);
        goto out;
    }
    dpc_audit_result res;
    rc = audit_one(&o, train, test, model, &res);
    if (!rc) rc = report(&o, &res);
    if (!rc) dpc_audit_result_free(&res);
out:
    dpc_model_free(model);
    dpc_dataset_free(train);
    dpc_dataset_free(test);
    cli_mech_opts_free(&o.t.mech);
    return rc;
}
