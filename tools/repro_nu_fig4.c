/* repro_nu_fig4.c — the nu-DP-FTRL paper's Figure 4 study on Fashion-MNIST (the offline stand-in
 * for CIFAR-10): one model trained with every mechanism at epsilon in {1, 2, 4, 8},
 * delta = 1e-5, several seeds; mean +- std of test accuracy, a table and a plot.
 *
 * Set-up (stated in the output): softmax regression on pixels / 255, fixed-order epochs (the
 * paper's multi-epoch setting: an example takes part every b = N/B steps, k = epochs times), so
 * every correlated mechanism's sensitivity is the exact cyclic multi-participation sensitivity
 * of its strategy; no amplification for them. DP-SGD appears twice: under the same fixed-order
 * sampling (the like-for-like comparison) and with Poisson sampling and amplification (the
 * paper's stronger baseline). nu and the anti-PGD damping are chosen by the data-independent
 * rule of the note (section 3.4): minimise sensitivity^2 x prefix-sum RMSE^2 for (n, k, b);
 * BLT, banded Toeplitz and dense ME are optimized for the same (n, k, b). SGD with momentum 0.9
 * and a cool-down over the last 25% of the steps for every mechanism; the learning rate is chosen
 * per mechanism and epsilon, as in the paper (Appendix G.1), but on a holdout of the training
 * set, never on the test set: the tuning runs train on N - H images with the batch scaled so
 * that (n, k, b) and therefore every strategy are exactly those of the final runs. */
#include "cli.h"
#include "dpcorr/strategy.h"
#include "dpcorr/train.h"
#include "plot.h"
#include "repro.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NMECH 12

typedef struct fig4_cfg {
    const char *data;
    size_t batch, epochs, nseeds, neps, threads;
    double eps[4];
    size_t nlr, holdout; /* learning-rate grid size; images held out for tuning (nlr > 1) */
    double lrs[5];
} fig4_cfg;

typedef struct fig4_mech {
    char name[64];
    dpc_mech_params p;
    dpc_sampler_kind sampler;
    dpc_strategy *strategy; /* owns the arrays of p for optimized kinds */
    double sigma[4];        /* accountant sigma per epsilon, final runs (0 = not yet calibrated) */
    double sigma_tune[4];   /* ... tuning runs (a different q for Poisson sampling) */
    double lr[4];           /* chosen learning rate per epsilon */
    double tune_acc[4][5];  /* holdout accuracy per epsilon and grid learning rate */
} fig4_mech;

static double mean_of(const double *v, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += v[i];
    return s / (double)n;
}

static double std_of(const double *v, size_t n)
{
    if (n < 2) return 0;
    double m = mean_of(v, n), s = 0;
    for (size_t i = 0; i < n; i++) s += (v[i] - m) * (v[i] - m);
    return sqrt(s / (double)(n - 1));
}

/* Best damping of anti-PGD for the problem (grid), like dpc_strategy_best_nu. */
static int best_damping(const dpc_strategy_problem *pb, double *best, dpc_error *err)
{
    double bl = INFINITY;
    *best = 0.1;
    for (int i = 0; i <= 24; i++) {
        double nu = pow(10.0, -4.0 + 3.9 * i / 24.0);
        dpc_mech_params p;
        dpc_mech_params_init(&p);
        p.kind = DPC_MECH_ANTIPGD;
        p.steps = pb->steps;
        p.nu = nu;
        dpc_mech *m = NULL;
        dpc_strategy_loss l;
        if (dpc_mech_new(&m, &p, err)) return 1;
        dpc_status st = dpc_strategy_loss_of(m, pb, &l, err);
        dpc_mech_free(m);
        if (st) return 1;
        if (l.loss < bl) {
            bl = l.loss;
            *best = nu;
        }
    }
    return 0;
}

/* Trains one (mechanism, epsilon, seed) with learning rate lr and batch size batch on train;
 * returns the final accuracy on test (NAN on failure). sigma caches the calibration per epsilon
 * (the same noise multiplier for every seed and learning rate). */
static double train_one(repro_ctx *c, const fig4_cfg *fc, fig4_mech *mk, size_t ei, uint64_t seed,
                        double lr, size_t batch, double *sigma, const dpc_model *model,
                        const dpc_dataset *train, const dpc_dataset *test, double *eps_out)
{
    dpc_train_config cfg;
    dpc_train_config_init(&cfg);
    cfg.mech = mk->p;
    cfg.sampler = mk->sampler;
    cfg.batch = batch;
    cfg.epochs = fc->epochs;
    cfg.delta = 1e-5;
    if (sigma[ei] > 0) {
        cfg.epsilon = 0;
        cfg.noise_multiplier = sigma[ei]; /* the same calibrated z for every seed and rate */
    } else {
        cfg.epsilon = fc->eps[ei];
    }
    cfg.accountant = DPC_ACCOUNTANT_PLD;
    cfg.clip = 1.0;
    cfg.lr = lr;
    cfg.momentum = 0.9;
    cfg.schedule = DPC_LR_COOLDOWN;
    cfg.threads = fc->threads;
    cfg.isa = cli_isa_for(DPC_TUNE_NOISE);
    dpc_rng rng;
    dpc_rng_seed(&rng, seed);
    dpc_trainer *tr = NULL;
    dpc_error err = {0};
    if (dpc_trainer_new(&tr, model, train, test, &cfg, &rng, &err)) {
        repro_say(c, "  %s at epsilon %g: %s\n", mk->name, fc->eps[ei], err.msg);
        return NAN;
    }
    const dpc_ledger *L = dpc_trainer_ledger(tr);
    if (sigma[ei] == 0) {
        sigma[ei] = L->noise_multiplier;
        repro_say(c, "  %s at epsilon %g: noise multiplier %.6g, accounted by %s\n", mk->name,
                  fc->eps[ei], sigma[ei], L->route);
    }
    *eps_out = L->epsilon;
    dpc_run run = dpc_trainer_run_ops(tr);
    if (dpc_run_drive(&run, NULL, NULL, NULL, NULL, &err)) {
        repro_say(c, "  %s: step: %s\n", mk->name, err.msg);
        dpc_trainer_free(tr);
        return NAN;
    }
    double loss, acc;
    if (dpc_trainer_evaluate(tr, test, &loss, &acc, &err)) acc = NAN;
    dpc_trainer_free(tr);
    return acc;
}

/* The tuning stage: for every mechanism and epsilon, train once per grid learning rate on
 * N - H training images and score on the H held-out ones (the test set is never used). The
 * batch is scaled to floor((N - H) / spe) so that the tuning runs have the same steps per epoch
 * spe, hence the same (n, k, b), strategies and sensitivities as the final runs. Writes
 * fig4_tuning.csv and fills mk[m].lr. */
static int fit_learning_rates(repro_ctx *c, const fig4_cfg *fc, fig4_mech *mk, size_t spe,
                              const dpc_model *model, const dpc_dataset *train, const dpc_rng *rng)
{
    for (int m = 0; m < NMECH; m++)
        for (size_t e = 0; e < fc->neps; e++) mk[m].lr[e] = fc->lrs[0];
    if (fc->nlr < 2) return 0;
    dpc_error err = {0};
    if (fc->holdout >= train->n) {
        repro_say(c, "tuning: holdout %zu >= %zu training images\n", fc->holdout, train->n);
        return 1;
    }
    size_t nt = train->n - fc->holdout, tb = nt / spe;
    if (tb == 0 || nt / tb != spe) {
        repro_say(c, "tuning: no batch keeps %zu steps per epoch on %zu images\n", spe, nt);
        return 1;
    }
    dpc_dataset *tr = NULL, *val = NULL;
    /* stream 7: a data-independent random split, disjoint from the loader's streams */
    if (dpc_dataset_split(&tr, &val, train, nt, rng, 7, &err)) {
        repro_say(c, "tuning split: %s\n", err.msg);
        return 1;
    }
    FILE *f = repro_open(c, "fig4_tuning.csv");
    if (!f) {
        dpc_dataset_free(tr);
        dpc_dataset_free(val);
        return 1;
    }
    fprintf(f, "mechanism,epsilon,lr,holdout_accuracy\n");
    repro_say(c, "tuning: lr in {");
    for (size_t l = 0; l < fc->nlr; l++) repro_say(c, "%s%g", l ? ", " : "", fc->lrs[l]);
    repro_say(c, "} per mechanism and epsilon on %zu of the training images (batch %zu, same "
                 "(n, k, b)), scored on the other %zu\n", nt, tb, fc->holdout);
    int rc = 0;
    for (int m = 0; m < NMECH && !rc; m++)
        for (size_t e = 0; e < fc->neps && !rc; e++) {
            double best = -1, ea;
            for (size_t l = 0; l < fc->nlr; l++) {
                double a = train_one(c, fc, &mk[m], e, c->o->seed, fc->lrs[l], tb, mk[m].sigma_tune,
                                     model, tr, val, &ea);
                if (isnan(a)) {
                    rc = 1;
                    break;
                }
                mk[m].tune_acc[e][l] = a;
                fprintf(f, "\"%s\",%g,%g,%.6f\n", mk[m].name, fc->eps[e], fc->lrs[l], a);
                fflush(f);
                if (a > best) { /* ties keep the smaller learning rate */
                    best = a;
                    mk[m].lr[e] = fc->lrs[l];
                }
            }
        }
    repro_close(c, f);
    dpc_dataset_free(tr);
    dpc_dataset_free(val);
    if (rc) return 1;
    repro_say(c, "\n%-32s", "chosen lr (holdout accuracy)");
    for (size_t e = 0; e < fc->neps; e++) repro_say(c, "   eps=%-12g", fc->eps[e]);
    repro_say(c, "\n");
    for (int m = 0; m < NMECH; m++) {
        repro_say(c, "%-32s", mk[m].name);
        for (size_t e = 0; e < fc->neps; e++) {
            double a = 0;
            for (size_t l = 0; l < fc->nlr; l++)
                if (fc->lrs[l] == mk[m].lr[e]) a = mk[m].tune_acc[e][l];
            repro_say(c, "   %-4g (%.4f)    ", mk[m].lr[e], a);
        }
        repro_say(c, "\n");
    }
    return 0;
}

/* The study's state: configuration, mechanisms, strategies, results. */
typedef struct fig4 {
    fig4_cfg fc;
    fig4_mech mk[NMECH];
    dpc_strategy *blt, *band, *dense;
    size_t spe, n;
    double nu, damp, t_opt, t_tune, t_train;
    double acc[NMECH][4][3], mean[NMECH][4], sd[NMECH][4];
} fig4;

static fig4_cfg fig4_config(const repro_ctx *c)
{
    /* the learning-rate grid is the paper's {1, 2, 5} x 10^p, the decades that matter for SGD
     * with momentum 0.9 here; --smoke tunes over two rates on a 100-image holdout */
    fig4_cfg fc = {"fashion-mnist", 1000, 20, 3, 4, 2, {1, 2, 4, 8}, 5, 10000, {0.1, 0.2, 0.5, 1, 2}};
    if (c->o->quick)
        fc = (fig4_cfg){"fashion-mnist:limit=6000,test-limit=2000", 200, 4, 1, 2, 2, {2, 8, 0, 0},
                        2, 1000, {0.5, 1, 0, 0, 0}};
    if (c->o->smoke)
        fc = (fig4_cfg){"fashion-mnist:limit=600,test-limit=300", 100, 2, 1, 1, 1, {4, 0, 0, 0},
                        2, 100, {0.5, 1, 0, 0, 0}};
    return fc;
}

/* The strategies for (n, k, b) and the nine mechanisms (data-independent choices). */
static int fig4_mechanisms(repro_ctx *c, fig4 *g, const dpc_strategy_problem *pb)
{
    dpc_error err = {0};
    fig4_mech *mk = g->mk;
    double t0 = repro_now();
    dpc_strategy_loss bl;
    int fail = 0;
    if (dpc_strategy_best_nu(pb, &g->nu, &bl, &err) || best_damping(pb, &g->damp, &err)) fail = 1;
    dpc_strategy_options so;
    dpc_strategy_options_init(&so);
    if (!fail && dpc_strategy_optimize_blt(&g->blt, pb, &so, &err)) fail = 1;
    so.bands = g->spe < 32 ? g->spe : 32;
    if (!fail && dpc_strategy_optimize_banded(&g->band, pb, &so, &err)) fail = 1;
    dpc_strategy_options_init(&so);
    if (!fail && dpc_strategy_optimize_dense(&g->dense, pb, &so, &err)) fail = 1;
    if (fail) {
        repro_say(c, "strategy optimization failed: %s\n", err.msg);
        return 1;
    }
    g->t_opt = repro_now() - t0;
    for (int i = 0; i < NMECH; i++) {
        dpc_mech_params_init(&mk[i].p);
        mk[i].sampler = DPC_SAMPLER_FIXED;
    }
    snprintf(mk[0].name, 64, "DP-SGD (fixed order)");
    snprintf(mk[1].name, 64, "DP-SGD (Poisson, amplified)");
    mk[1].sampler = DPC_SAMPLER_POISSON;
    snprintf(mk[2].name, 64, "nu-DP-FTRL (nu=%.3g)", g->nu);
    mk[2].p.kind = DPC_MECH_NU;
    mk[2].p.nu = g->nu;
    snprintf(mk[3].name, 64, "optimal CC (nu=0)");
    mk[3].p.kind = DPC_MECH_NU;
    snprintf(mk[4].name, 64, "tree (Honaker)");
    mk[4].p.kind = DPC_MECH_TREE;
    mk[4].p.honaker = 1;
    snprintf(mk[5].name, 64, "damped anti-PGD (nu=%.3g)", g->damp);
    mk[5].p.kind = DPC_MECH_ANTIPGD;
    mk[5].p.nu = g->damp;
    snprintf(mk[6].name, 64, "BLT (%zu buffers, optimized)", g->blt->nbuf);
    dpc_strategy_mech_params(g->blt, &mk[6].p);
    snprintf(mk[7].name, 64, "banded Toeplitz (%zu bands)", g->band->ncoeffs);
    dpc_strategy_mech_params(g->band, &mk[7].p);
    snprintf(mk[8].name, 64, "dense ME (optimized)");
    dpc_strategy_mech_params(g->dense, &mk[8].p);
    /* nu-DP-FTRL as the paper wanted to compare it: Poisson sampling with amplification, by
     * MMCC-style conditional composition (or the whole-run route when that is better) */
    snprintf(mk[9].name, 64, "nu-DP-FTRL (Poisson, amplified)");
    mk[9].p.kind = DPC_MECH_NU;
    mk[9].p.nu = g->nu;
    mk[9].sampler = DPC_SAMPLER_POISSON;
    /* balls-in-bins (each example in one uniformly random step of each epoch, the same every
     * epoch): the fixed-order pattern with a random position, so the same sensitivity, plus
     * amplification — the exact random-allocation bound for DP-SGD, the Monte Carlo upper
     * confidence bound for nu (doc/accounting.md section 7) */
    snprintf(mk[10].name, 64, "nu-DP-FTRL (balls-in-bins, amplified)");
    mk[10].p.kind = DPC_MECH_NU;
    mk[10].p.nu = g->nu;
    mk[10].sampler = DPC_SAMPLER_BALLS_IN_BINS;
    snprintf(mk[11].name, 64, "DP-SGD (balls-in-bins, amplified)");
    mk[11].sampler = DPC_SAMPLER_BALLS_IN_BINS;
    mk[6].strategy = g->blt;
    mk[7].strategy = g->band;
    mk[8].strategy = g->dense;
    repro_say(c, "choices (data-independent, from (n, k, b) only): nu = %.4g, anti-PGD damping = "
                 "%.4g, BLT %zu buffers, banded %zu bands, dense ME %zu x %zu; optimization %.1f s\n",
              g->nu, g->damp, g->blt->nbuf, g->band->ncoeffs, g->n, g->n, g->t_opt);
    return 0;
}

/* The final runs: every mechanism, epsilon and seed at the chosen learning rate. */
static int fig4_runs(repro_ctx *c, fig4 *g, const dpc_model *model, const dpc_dataset *train,
                     const dpc_dataset *test)
{
    const fig4_cfg *fc = &g->fc;
    FILE *f = repro_open(c, "fig4_runs.csv");
    if (!f) return 1;
    fprintf(f, "mechanism,epsilon,seed,lr,test_accuracy,epsilon_accounted,sigma\n");
    double t0 = repro_now();
    for (int m = 0; m < NMECH; m++)
        for (size_t e = 0; e < fc->neps; e++)
            for (size_t s = 0; s < fc->nseeds; s++) {
                fig4_mech *mk = &g->mk[m];
                double ea = NAN;
                g->acc[m][e][s] = train_one(c, fc, mk, e, c->o->seed + s, mk->lr[e], fc->batch,
                                            mk->sigma, model, train, test, &ea);
                fprintf(f, "\"%s\",%g,%llu,%g,%.6f,%.6f,%.6g\n", mk->name, fc->eps[e],
                        (unsigned long long)(c->o->seed + s), mk->lr[e], g->acc[m][e][s], ea,
                        mk->sigma[e]);
                fflush(f);
            }
    repro_close(c, f);
    g->t_train = repro_now() - t0;
    return 0;
}

/* Mean +- std over seeds: the table and fig4_summary.csv. */
static int fig4_summary(repro_ctx *c, fig4 *g)
{
    const fig4_cfg *fc = &g->fc;
    size_t S = fc->nseeds, E = fc->neps;
    repro_say(c, "\n%-32s", "test accuracy, mean +- std");
    for (size_t e = 0; e < E; e++) repro_say(c, "   eps=%-10g", fc->eps[e]);
    repro_say(c, "\n");
    FILE *f = repro_open(c, "fig4_summary.csv");
    if (!f) return 1;
    fprintf(f, "mechanism,epsilon,mean_accuracy,std_accuracy,seeds\n");
    for (int m = 0; m < NMECH; m++) {
        repro_say(c, "%-32s", g->mk[m].name);
        for (size_t e = 0; e < E; e++) {
            g->mean[m][e] = mean_of(g->acc[m][e], S);
            g->sd[m][e] = std_of(g->acc[m][e], S);
            repro_say(c, "   %.4f+-%.4f", g->mean[m][e], g->sd[m][e]);
            fprintf(f, "\"%s\",%g,%.6f,%.6f,%zu\n", g->mk[m].name, fc->eps[e], g->mean[m][e],
                    g->sd[m][e], S);
        }
        repro_say(c, "\n");
    }
    repro_close(c, f);
    return 0;
}

/* {"mechanism": [v per epsilon], ...} into the summary under key (lr: the chosen rates). */
static void fig4_json_per_mech(repro_ctx *c, const fig4 *g, const char *key, int lr)
{
    char buf[4096];
    size_t o = 0;
    o += (size_t)snprintf(buf + o, sizeof buf - o, "{");
    for (int m = 0; m < NMECH && o < sizeof buf; m++) {
        o += (size_t)snprintf(buf + o, sizeof buf - o, "%s\"%s\": [", m ? ", " : "", g->mk[m].name);
        for (size_t e = 0; e < g->fc.neps && o < sizeof buf; e++)
            o += (size_t)snprintf(buf + o, sizeof buf - o, lr ? "%s%g" : "%s%.6f", e ? ", " : "",
                                  lr ? g->mk[m].lr[e] : g->mean[m][e]);
        o += (size_t)snprintf(buf + o, sizeof buf - o, "]");
    }
    if (o < sizeof buf) snprintf(buf + o, sizeof buf - o, "}");
    repro_json_raw(c, key, "%s", buf);
}

/* The acceptance-style checks, stated, and the JSON summary. */
static void fig4_checks(repro_ctx *c, const fig4 *g)
{
    const fig4_cfg *fc = &g->fc;
    size_t E = fc->neps;
    int nu_ge_sgd = 1, nu_near_me = 1;
    for (size_t e = 0; e < E; e++) {
        if (g->mean[2][e] < g->mean[0][e]) nu_ge_sgd = 0;
        if (g->mean[2][e] < g->mean[8][e] - 0.01) nu_near_me = 0;
    }
    repro_say(c, "\nnu-DP-FTRL >= DP-SGD (same sampling) at every epsilon: %s\n"
                 "nu-DP-FTRL within 1 pp of dense ME at every epsilon: %s\n"
                 "training time %.1f s for %d mechanisms x %zu epsilons x %zu seeds (+ %.1f s "
                 "tuning)\n",
              nu_ge_sgd ? "yes" : "NO", nu_near_me ? "yes" : "NO", g->t_train, NMECH, E, fc->nseeds,
              g->t_tune);
    /* the paper's stronger baseline: DP-SGD with amplification by sampling, which the paper
     * reports wins at small epsilon (section 4: "As epsilon becomes small, DP-SGD can outperform
     * DP-FTRL due to privacy amplification"; nu-DP-FTRL wins for epsilon >= 4 on CIFAR-10) */
    repro_say(c, "nu-DP-FTRL vs DP-SGD with amplification (Poisson), the paper's stronger baseline:");
    char amp[64];
    size_t ao = 0;
    ao += (size_t)snprintf(amp + ao, sizeof amp - ao, "[");
    for (size_t e = 0; e < E; e++) {
        int win = g->mean[2][e] >= g->mean[1][e];
        repro_say(c, " eps %g %s (%+.2f pp)", fc->eps[e], win ? "wins" : "loses",
                  100 * (g->mean[2][e] - g->mean[1][e]));
        ao += (size_t)snprintf(amp + ao, sizeof amp - ao, "%s%s", e ? "," : "", win ? "true" : "false");
    }
    snprintf(amp + ao, sizeof amp - ao, "]");
    repro_say(c, "\n(the paper: amplification wins at small epsilon, nu-DP-FTRL from epsilon ~ 4 on "
                 "CIFAR-10)\n");
    repro_json_raw(c, "nu_ge_dpsgd_amplified", "%s", amp);
    /* nu-DP-FTRL with amplification (Poisson, MMCC) against both */
    repro_say(c, "nu-DP-FTRL with amplification (Poisson, MMCC) vs without (fixed order) and vs "
                 "amplified DP-SGD:");
    for (size_t e = 0; e < E; e++)
        repro_say(c, " eps %g: %+.2f pp vs unamplified, %+.2f pp vs DP-SGD amplified", fc->eps[e],
                  100 * (g->mean[9][e] - g->mean[2][e]), 100 * (g->mean[9][e] - g->mean[1][e]));
    repro_say(c, "\n");
    /* nu-DP-FTRL with balls-in-bins amplification: the paper's question with an amplification
     * analysis that keeps the multi-epoch structure */
    repro_say(c, "nu-DP-FTRL with balls-in-bins amplification vs without (fixed order), vs "
                 "amplified DP-SGD (Poisson) and vs DP-SGD with balls-in-bins:");
    char bb[64];
    size_t bo = (size_t)snprintf(bb, sizeof bb, "[");
    for (size_t e = 0; e < E; e++) {
        repro_say(c, " eps %g: %+.2f pp, %+.2f pp, %+.2f pp", fc->eps[e],
                  100 * (g->mean[10][e] - g->mean[2][e]), 100 * (g->mean[10][e] - g->mean[1][e]),
                  100 * (g->mean[10][e] - g->mean[11][e]));
        bo += (size_t)snprintf(bb + bo, sizeof bb - bo, "%s%s", e ? "," : "",
                               g->mean[10][e] >= g->mean[1][e] ? "true" : "false");
    }
    snprintf(bb + bo, sizeof bb - bo, "]");
    repro_say(c, "\n");
    repro_json_raw(c, "nu_bib_ge_dpsgd_amplified", "%s", bb);
    repro_say(c, "Not reproduced: the paper's CIFAR-10 and StackOverflow numbers (no dataset, GPU or "
                 "stated accounting); the comparison here is the same study on Fashion-MNIST.\n");
    repro_json_raw(c, "nu_ge_dpsgd_fixed", "%s", nu_ge_sgd ? "true" : "false");
    repro_json_raw(c, "nu_within_1pp_of_me", "%s", nu_near_me ? "true" : "false");
    repro_json_num(c, "nu", g->nu);
    repro_json_num(c, "antipgd_damping", g->damp);
    repro_json_num(c, "train_seconds", g->t_train);
    repro_json_num(c, "tune_seconds", g->t_tune);
    repro_json_num(c, "optimize_seconds", g->t_opt);
    repro_json_raw(c, "epsilons", "[%g%s%g%s%g%s%g]", fc->eps[0], E > 1 ? "," : "",
                   E > 1 ? fc->eps[1] : 0, E > 2 ? "," : "", E > 2 ? fc->eps[2] : 0,
                   E > 3 ? "," : "", E > 3 ? fc->eps[3] : 0);
    fig4_json_per_mech(c, g, "mean_accuracy", 0);
    fig4_json_per_mech(c, g, "chosen_lr", 1);
}

/* Accuracy vs epsilon, error bars = std over seeds: every mechanism over the whole range, then
 * two zooms on the top of it (the same y range: 1.5 points below the best at each epsilon), one
 * per family so that the close mechanisms can be told apart: fixed order (correlated noise and
 * DP-SGD) and amplified (Poisson, balls-in-bins). A mechanism with a point below the zoom is
 * only in the first panel. */
static void fig4_plot(repro_ctx *c, fig4 *g)
{
    size_t E = g->fc.neps, nf = 0, na = 0;
    plot_style style = g->fc.nseeds > 1 ? PLOT_ERRORLINES : PLOT_LINESPOINTS;
    plot_series all[NMECH], fixed[NMECH], amp[NMECH];
    double xs[4], lo = INFINITY, hi = -INFINITY;
    for (size_t e = 0; e < E; e++) {
        double best = -INFINITY, bsd = 0;
        for (int m = 0; m < NMECH; m++)
            if (g->mean[m][e] > best) best = g->mean[m][e], bsd = g->sd[m][e];
        lo = fmin(lo, best - 0.015);
        hi = fmax(hi, best + (isfinite(bsd) ? bsd : 0) + 0.003);
        xs[e] = g->fc.eps[e];
    }
    for (int m = 0; m < NMECH; m++) {
        all[m] = (plot_series){g->mk[m].name, xs, g->mean[m], g->sd[m], E, style};
        int in = 1;
        for (size_t e = 0; e < E; e++) in &= g->mean[m][e] >= lo;
        if (in && g->mk[m].sampler == DPC_SAMPLER_FIXED) fixed[nf++] = all[m];
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

/* The study after loading: strategies, tuning, runs, table, checks, plot. */
static int fig4_study(repro_ctx *c, fig4 *g, const dpc_model *model, dpc_dataset *train,
                      dpc_dataset *test, dpc_rng *rng)
{
    const fig4_cfg *fc = &g->fc;
    g->spe = train->n / fc->batch;
    g->n = g->spe * fc->epochs;
    dpc_strategy_problem pb;
    dpc_strategy_problem_init(&pb, g->n);
    pb.participations = fc->epochs;
    pb.min_sep = g->spe;
    pb.objective = DPC_OBJECTIVE_MEAN;
    repro_say(c, "\nFigure 4 study: Fashion-MNIST (%zu train, %zu test), softmax regression, batch %zu,"
                 " %zu epochs = %zu steps;\nfixed-order epochs: k = %zu participations, %zu steps "
                 "apart; SGD momentum 0.9, cool-down; delta = 1e-5; %zu seed(s)\n",
              train->n, test->n, fc->batch, fc->epochs, g->n, fc->epochs, g->spe, fc->nseeds);
    if (fig4_mechanisms(c, g, &pb)) return 1;
    /* tuning: the learning rate per (mechanism, epsilon) on a holdout of the training set */
    double t0 = repro_now();
    if (fit_learning_rates(c, fc, g->mk, g->spe, model, train, rng)) return 1;
    g->t_tune = repro_now() - t0;
    if (fig4_runs(c, g, model, train, test) || fig4_summary(c, g)) return 1;
    fig4_checks(c, g);
    fig4_plot(c, g);
    return 0;
}

int repro_nu_fig4(repro_ctx *c)
{
    fig4 *g = calloc(1, sizeof *g);
    if (!g) return 1;
    g->fc = fig4_config(c);
    dpc_error err = {0};
    dpc_rng rng;
    dpc_rng_seed(&rng, c->o->seed);
    dpc_dataset *train = NULL, *test = NULL;
    dpc_model *model = NULL;
    int rc = 1;
    if (dpc_data_load_spec(&train, &test, g->fc.data, &rng, &err)) {
        repro_say(c, "cannot load Fashion-MNIST (%s); install Debian's dataset-fashion-mnist\n",
                  err.msg);
        repro_json_str(c, "skipped", err.msg);
    } else if (cli_model_new(&model, NULL, "softmax", train->d, NULL, train->n_classes, &err)) {
        repro_say(c, "model: %s\n", err.msg);
    } else {
        rc = fig4_study(c, g, model, train, test, &rng);
    }
    dpc_strategy_free(g->blt);
    dpc_strategy_free(g->band);
    dpc_strategy_free(g->dense);
    dpc_model_free(model);
    dpc_dataset_free(train);
    dpc_dataset_free(test);
    free(g);
    return rc;
}
