/* repro_nu_fig4.c — the nu-DP-FTRL paper's Figure 4 study on Fashion-MNIST (the offline stand-in
 * for CIFAR-10): every mechanism at epsilon in {1, 2, 4, 8}, delta = 1e-5, several seeds; mean
 * +- std of test accuracy, a table and a plot. The study (its grid, mechanisms, choices, tuning,
 * runs and checks) is the library's, dpc_nu_fig4_run of dpcorr/papers/nu_repro.h; this file
 * loads the data, makes the model and writes what the study reports as it goes. */
#include "cli.h"
#include "dpcorr/papers/nu_repro.h"
#include "plot.h"
#include "repro.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NMECH DPC_NU_FIG4_MECHS

/* The writer of the study's reports: the tuning and runs CSVs, filled row by row. */
typedef struct fig4_out {
    repro_ctx *c;
    FILE *tune, *runs;
    int fail; /* a CSV could not be opened */
} fig4_out;

static void say_study(repro_ctx *c, const dpc_nu_fig4_result *r)
{
    const dpc_nu_fig4_config *fc = &r->cfg;
    repro_say(c, "\nFigure 4 study: Fashion-MNIST (%zu train, %zu test), softmax regression, batch %zu,"
                 " %zu epochs = %zu steps;\nfixed-order epochs: k = %zu participations, %zu steps "
                 "apart; SGD momentum 0.9, cool-down; delta = 1e-5; %zu seed(s)\n",
              r->n_train, r->n_test, fc->batch, fc->epochs, r->n, fc->epochs, r->spe, fc->nseeds);
}

static void say_tuning(fig4_out *o, const dpc_nu_fig4_result *r)
{
    repro_ctx *c = o->c;
    const dpc_nu_fig4_config *fc = &r->cfg;
    o->tune = repro_open(c, "fig4_tuning.csv");
    if (!o->tune) o->fail = 1;
    else fprintf(o->tune, "mechanism,epsilon,lr,holdout_accuracy\n");
    repro_say(c, "tuning: lr in {");
    for (size_t l = 0; l < fc->nlr; l++) repro_say(c, "%s%g", l ? ", " : "", fc->lrs[l]);
    repro_say(c, "} per mechanism and epsilon on %zu of the training images (batch %zu, same "
                 "(n, k, b)), scored on the other %zu\n", r->tune_n, r->tune_batch, fc->holdout);
}

static void say_chosen_lr(fig4_out *o, const dpc_nu_fig4_result *r)
{
    repro_ctx *c = o->c;
    const dpc_nu_fig4_config *fc = &r->cfg;
    repro_close(c, o->tune);
    o->tune = NULL;
    repro_say(c, "\n%-32s", "chosen lr (holdout accuracy)");
    for (size_t e = 0; e < fc->neps; e++) repro_say(c, "   eps=%-12g", fc->eps[e]);
    repro_say(c, "\n");
    for (int m = 0; m < NMECH; m++) {
        const dpc_nu_fig4_mech *mk = &r->mech[m];
        repro_say(c, "%-32s", mk->name);
        for (size_t e = 0; e < fc->neps; e++) {
            double a = 0;
            for (size_t l = 0; l < fc->nlr; l++)
                if (fc->lrs[l] == mk->lr[e]) a = mk->tune_acc[e][l];
            repro_say(c, "   %-4g (%.4f)    ", mk->lr[e], a);
        }
        repro_say(c, "\n");
    }
}

static void write_run(fig4_out *o, const dpc_nu_fig4_event *ev)
{
    const dpc_nu_fig4_result *r = ev->res;
    const dpc_nu_fig4_mech *mk = &r->mech[ev->mech];
    size_t e = ev->eps, k = ev->seed;
    if (!o->runs && !o->fail) {
        o->runs = repro_open(o->c, "fig4_runs.csv");
        if (!o->runs) o->fail = 1;
        else fprintf(o->runs, "mechanism,epsilon,seed,lr,test_accuracy,epsilon_accounted,sigma\n");
    }
    if (!o->runs) return;
    fprintf(o->runs, "\"%s\",%g,%llu,%g,%.6f,%.6f,%.6g\n", mk->name, r->cfg.eps[e],
            (unsigned long long)(o->c->o->seed + k), mk->lr[e], mk->acc[e][k],
            mk->eps_accounted[e][k], mk->sigma[e]);
    fflush(o->runs);
}

/* The study's events: progress lines and CSV rows as they come (a CSV that cannot be opened
 * stops the study). */
static int on_event(void *ctx, const dpc_nu_fig4_event *ev)
{
    fig4_out *o = ctx;
    repro_ctx *c = o->c;
    const dpc_nu_fig4_result *r = ev->res;
    const char *name = r->mech[ev->mech].name;
    double eps = r->cfg.eps[ev->eps];
    switch (ev->stage) {
    case DPC_NU_FIG4_EV_STUDY: say_study(c, r); break;
    case DPC_NU_FIG4_EV_CHOSEN:
        repro_say(c, "choices (data-independent, from (n, k, b) only): nu = %.4g, anti-PGD damping = "
                     "%.4g, BLT %zu buffers, banded %zu bands, dense ME %zu x %zu; optimization %.1f s\n",
                  r->nu, r->damping, r->blt_buffers, r->bands, r->n, r->n, r->optimize_seconds);
        break;
    case DPC_NU_FIG4_EV_TUNING: say_tuning(o, r); break;
    case DPC_NU_FIG4_EV_CALIBRATED:
        repro_say(c, "  %s at epsilon %g: noise multiplier %.6g, accounted by %s\n", name, eps,
                  ev->sigma,
                  ev->route);
        break;
    case DPC_NU_FIG4_EV_FAILED:
        if (ev->stepping) repro_say(c, "  %s: step: %s\n", name, ev->err->msg);
        else repro_say(c, "  %s at epsilon %g: %s\n", name, eps, ev->err->msg);
        break;
    case DPC_NU_FIG4_EV_TUNED:
        if (o->tune) {
            fprintf(o->tune, "\"%s\",%g,%g,%.6f\n", name, eps, r->cfg.lrs[ev->lr], ev->acc);
            fflush(o->tune);
        }
        break;
    case DPC_NU_FIG4_EV_TUNING_DONE: say_chosen_lr(o, r); break;
    case DPC_NU_FIG4_EV_RUN: write_run(o, ev); break;
    }
    return o->fail;
}

/* Accuracy vs epsilon, error bars = std over seeds: every mechanism over the whole range, then
 * two zooms on the top of it (the same y range: 1.5 points below the best at each epsilon), one
 * per family so that the close mechanisms can be told apart: fixed order (correlated noise and
 * DP-SGD) and amplified (Poisson, balls-in-bins). A mechanism with a point below the zoom is
 * only in the first panel. */
static void fig4_plot(repro_ctx *c, const dpc_nu_fig4_result *g)
{
    size_t E = g->cfg.neps, nf = 0, na = 0;
    plot_style style = g->cfg.nseeds > 1 ? PLOT_ERRORLINES : PLOT_LINESPOINTS;
    plot_series all[NMECH], fixed[NMECH], amp[NMECH];
    double xs[4], lo = INFINITY, hi = -INFINITY;
    for (size_t e = 0; e < E; e++) {
        double best = -INFINITY, bsd = 0;
        for (int m = 0; m < NMECH; m++)
            if (g->mech[m].mean[e] > best) best = g->mech[m].mean[e], bsd = g->mech[m].sd[e];
        lo = fmin(lo, best - 0.015);
        hi = fmax(hi, best + (isfinite(bsd) ? bsd : 0) + 0.003);
        xs[e] = g->cfg.eps[e];
    }
    for (int m = 0; m < NMECH; m++) {
        all[m] = (plot_series){g->mech[m].name, xs, g->mech[m].mean, g->mech[m].sd, E, style};
        int in = 1;
        for (size_t e = 0; e < E; e++) in &= g->mech[m].mean[e] >= lo;
        if (in && g->mech[m].sampler == DPC_SAMPLER_FIXED) fixed[nf++] = all[m];
        else if (in) amp[na++] = all[m];
    }
    plot_panel p[3] = {{"test accuracy vs epsilon (delta = 1e-5), mean +- std over seeds",
                        "epsilon", "test accuracy", 1, 0, all, NMECH},
                       {"zoom: fixed order (within 1.5 points of the best)", "epsilon",
                        "test accuracy", 1, 0, fixed, nf},
                       {"zoom: amplified (within 1.5 points of the best)", "epsilon",
                        "test accuracy", 1, 0, amp, na}};
    double ylim[6] = {0, 0, lo, hi, lo, hi};
    repro_plot_ylim(c, "fig4", p, 3, ylim);
}

/* Mean +- std over seeds: the table and fig4_summary.csv. */
static int fig4_summary(repro_ctx *c, const dpc_nu_fig4_result *g)
{
    const dpc_nu_fig4_config *fc = &g->cfg;
    size_t S = fc->nseeds, E = fc->neps;
    repro_say(c, "\n%-32s", "test accuracy, mean +- std");
    for (size_t e = 0; e < E; e++) repro_say(c, "   eps=%-10g", fc->eps[e]);
    repro_say(c, "\n");
    FILE *f = repro_open(c, "fig4_summary.csv");
    if (!f) return 1;
    fprintf(f, "mechanism,epsilon,mean_accuracy,std_accuracy,seeds\n");
    for (int m = 0; m < NMECH; m++) {
        const dpc_nu_fig4_mech *mk = &g->mech[m];
        repro_say(c, "%-32s", mk->name);
        for (size_t e = 0; e < E; e++) {
            repro_say(c, "   %.4f+-%.4f", mk->mean[e], mk->sd[e]);
            fprintf(f, "\"%s\",%g,%.6f,%.6f,%zu\n", mk->name, fc->eps[e], mk->mean[e], mk->sd[e], S);
        }
        repro_say(c, "\n");
    }
    repro_close(c, f);
    return 0;
}

/* {"mechanism": [v per epsilon], ...} into the summary under key (lr: the chosen rates). */
static void fig4_json_per_mech(repro_ctx *c, const dpc_nu_fig4_result *g, const char *key, int lr)
{
    char buf[4096];
    size_t o = 0;
    o += (size_t)snprintf(buf + o, sizeof buf - o, "{");
    for (int m = 0; m < NMECH && o < sizeof buf; m++) {
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s\"%s\": [", m ? ", " : "", g->mech[m].name);
        for (size_t e = 0; e < g->cfg.neps && o < sizeof buf; e++)
            o += (size_t)snprintf(buf + o, sizeof buf - o, lr ? "%s%g" : "%s%.6f", e ? ", " : "",
                                  lr ? g->mech[m].lr[e] : g->mech[m].mean[e]);
        o += (size_t)snprintf(buf + o, sizeof buf - o, "]");
    }
    if (o < sizeof buf) snprintf(buf + o, sizeof buf - o, "}");
    repro_json_raw(c, key, "%s", buf);
}

/* A JSON array of booleans. */
static void json_bools(repro_ctx *c, const char *key, const int *v, size_t n)
{
    char b[64];
    size_t o = (size_t)snprintf(b, sizeof b, "[");
    for (size_t e = 0; e < n; e++)
        o += (size_t)snprintf(b + o, sizeof b - o, "%s%s", e ? "," : "", v[e] ? "true" : "false");
    snprintf(b + o, sizeof b - o, "]");
    repro_json_raw(c, key, "%s", b);
}

/* The library's checks, stated, and the JSON summary. */
static void fig4_checks(repro_ctx *c, const dpc_nu_fig4_result *g)
{
    const dpc_nu_fig4_config *fc = &g->cfg;
    size_t E = fc->neps;
    const double *nu = g->mech[DPC_NU_FIG4_NU].mean, *amp = g->mech[DPC_NU_FIG4_SGD_POISSON].mean,
                 *nup = g->mech[DPC_NU_FIG4_NU_POISSON].mean, *bib = g->mech[DPC_NU_FIG4_NU_BIB].mean,
                 *sbib = g->mech[DPC_NU_FIG4_SGD_BIB].mean;
    repro_say(c, "\nnu-DP-FTRL >= DP-SGD (same sampling) at every epsilon: %s\n"
                 "nu-DP-FTRL within 1 pp of dense ME at every epsilon: %s\n"
                 "training time %.1f s for %d mechanisms x %zu epsilons x %zu seeds (+ %.1f s "
                 "tuning)\n",
              g->nu_ge_sgd_fixed ? "yes" : "NO", g->nu_within_1pp_of_me ? "yes" : "NO",
              g->train_seconds, NMECH, E, fc->nseeds, g->tune_seconds);
    repro_say(c, "nu-DP-FTRL vs DP-SGD with amplification (Poisson), the paper's stronger baseline:");
    for (size_t e = 0; e < E; e++)
        repro_say(c, " eps %g %s (%+.2f pp)", fc->eps[e], g->nu_ge_sgd_amplified[e] ? "wins" : "loses",
                  100 * (nu[e] - amp[e]));
    repro_say(c, "\n(the paper: amplification wins at small epsilon, nu-DP-FTRL from epsilon ~ 4 on "
                 "CIFAR-10)\n");
    json_bools(c, "nu_ge_dpsgd_amplified", g->nu_ge_sgd_amplified, E);
    repro_say(c, "nu-DP-FTRL with amplification (Poisson, MMCC) vs without (fixed order) and vs "
                 "amplified DP-SGD:");
    for (size_t e = 0; e < E; e++)
        repro_say(c, " eps %g: %+.2f pp vs unamplified, %+.2f pp vs DP-SGD amplified", fc->eps[e],
                  100 * (nup[e] - nu[e]), 100 * (nup[e] - amp[e]));
    repro_say(c, "\n");
    repro_say(c, "nu-DP-FTRL with balls-in-bins amplification vs without (fixed order), vs "
                 "amplified DP-SGD (Poisson) and vs DP-SGD with balls-in-bins:");
    for (size_t e = 0; e < E; e++)
        repro_say(c, " eps %g: %+.2f pp, %+.2f pp, %+.2f pp", fc->eps[e], 100 * (bib[e] - nu[e]),
                  100 * (bib[e] - amp[e]), 100 * (bib[e] - sbib[e]));
    repro_say(c, "\n");
    json_bools(c, "nu_bib_ge_dpsgd_amplified", g->nu_bib_ge_sgd_amplified, E);
    repro_say(c, "Not reproduced: %s.\n", g->claims.not_reproduced[0]);
    repro_json_raw(c, "nu_ge_dpsgd_fixed", "%s", g->nu_ge_sgd_fixed ? "true" : "false");
    repro_json_raw(c, "nu_within_1pp_of_me", "%s", g->nu_within_1pp_of_me ? "true" : "false");
    repro_json_num(c, "nu", g->nu);
    repro_json_num(c, "antipgd_damping", g->damping);
    repro_json_num(c, "train_seconds", g->train_seconds);
    repro_json_num(c, "tune_seconds", g->tune_seconds);
    repro_json_num(c, "optimize_seconds", g->optimize_seconds);
    char eb[128];
    size_t eo = (size_t)snprintf(eb, sizeof eb, "[");
    for (size_t e = 0; e < E; e++) eo += (size_t)snprintf(eb + eo, sizeof eb - eo, "%s%g", e ? "," : "", fc->eps[e]);
    snprintf(eb + eo, sizeof eb - eo, "]");
    repro_json_raw(c, "epsilons", "%s", eb);
    fig4_json_per_mech(c, g, "mean_accuracy", 0);
    fig4_json_per_mech(c, g, "chosen_lr", 1);
}

int repro_nu_fig4(repro_ctx *c)
{
    dpc_nu_fig4_params p;
    dpc_nu_fig4_params_init(&p);
    p.scale = c->o->smoke ? DPC_NU_REPRO_SMOKE : c->o->quick ? DPC_NU_REPRO_QUICK : DPC_NU_REPRO_FULL;
    p.seed = c->o->seed;
    p.isa = cli_isa_for(DPC_TUNE_NOISE);
    fig4_out o = {c, NULL, NULL, 0};
    p.event = on_event;
    p.ctx = &o;
    dpc_nu_fig4_config fc = dpc_nu_fig4_config_of(p.scale);
    dpc_error err = {0};
    dpc_rng rng;
    dpc_rng_seed(&rng, c->o->seed);
    dpc_dataset *train = NULL, *test = NULL;
    dpc_model *model = NULL;
    dpc_nu_fig4_result *g = NULL;
    int rc = 1;
    if (dpc_data_load_spec(&train, &test, fc.data, &rng, &err)) {
        repro_say(c, "cannot load Fashion-MNIST (%s); install Debian's dataset-fashion-mnist\n",
                  err.msg);
        repro_json_str(c, "skipped", err.msg);
    } else if (cli_model_new(&model, NULL, "softmax", train->d, NULL, train->n_classes, &err)) {
        repro_say(c, "model: %s\n", err.msg);
    } else if (dpc_nu_fig4_run(&p, model, train, test, &rng, &g, &err)) {
        if (!o.fail) repro_say(c, "%s\n", err.msg);
    } else {
        repro_close(c, o.runs);
        o.runs = NULL;
        rc = fig4_summary(c, g);
        if (!rc) {
            fig4_checks(c, g);
            fig4_plot(c, g);
        }
    }
    repro_close(c, o.tune);
    repro_close(c, o.runs);
    dpc_nu_fig4_free(g);
    dpc_model_free(model);
    dpc_dataset_free(train);
    dpc_dataset_free(test);
    return rc;
}
