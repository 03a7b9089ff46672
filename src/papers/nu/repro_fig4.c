/* repro_fig4.c — the nu-DP-FTRL paper's Figure 4 study on Fashion-MNIST
 * (dpcorr/papers/nu_repro.h): the grid, the mechanisms and their data-independent choices, the
 * learning-rate tuning on a holdout, the final runs and the checks. */
#include "common/util.h"
#include "field/field_def.h"
#include "dpcorr/papers/nu_repro.h"
#include "dpcorr/strategy.h"
#include "dpcorr/train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NMECH DPC_NU_FIG4_MECHS

const char *dpc_nu_repro_scale_name(dpc_nu_repro_scale s)
{
    switch (s) {
    case DPC_NU_REPRO_FULL: return "full";
    case DPC_NU_REPRO_QUICK: return "quick";
    case DPC_NU_REPRO_SMOKE: return "smoke";
    }
    return "?";
}

dpc_nu_fig4_config dpc_nu_fig4_config_of(dpc_nu_repro_scale scale)
{
    /* --smoke tunes over two rates on a 100-image holdout */
    if (scale == DPC_NU_REPRO_SMOKE)
        return (dpc_nu_fig4_config){"fashion-mnist:limit=600,test-limit=300", 100, 2, 1, 1, 1,
                                    {4, 0, 0, 0}, 2, 100, {0.5, 1, 0, 0, 0}};
    if (scale == DPC_NU_REPRO_QUICK)
        return (dpc_nu_fig4_config){"fashion-mnist:limit=6000,test-limit=2000", 200, 4, 1, 2, 2,
                                    {2, 8, 0, 0}, 2, 1000, {0.5, 1, 0, 0, 0}};
    return (dpc_nu_fig4_config){"fashion-mnist", 1000, 20, 3, 4, 2, {1, 2, 4, 8}, 5, 10000,
                                {0.1, 0.2, 0.5, 1, 2}};
}

/* The manual of dpc_nu_fig4_params (dpcorr/papers/nu_repro.h): dpc_nu_fig4_params_init writes
 * its defaults (the ISA then detected) and dpc_nu_fig4_run range-checks the scale through it. */
static const char *const fig4_scale_names[] = {"full", "quick", "smoke"};
static const char *const fig4_isa_names[] = {"auto", "sse2", "avx2", "avx512"};
#define F4(m) DPC_FIELD_AT(dpc_nu_fig4_params, m)
static const dpc_field fig4_fields[] = {
    {.name = "scale", .type = DPC_FIELD_ENUM, F4(scale), .def = DPC_NU_REPRO_QUICK,
     DPC_FIELD_NAMES(fig4_scale_names),
     .doc = "scale: full (the paper's grid), quick (minutes) or smoke (sanitizer runs)"},
    {.name = "seed", .type = DPC_FIELD_U64, F4(seed), .def = 20240101,
     .flags = DPC_FIELD_NO_RANGE, .doc = "root seed: the split (stream 7), seed + s for seed s"},
    {.name = "isa", .type = DPC_FIELD_ENUM, F4(isa), .def = DPC_ISA_AUTO,
     DPC_FIELD_NAMES(fig4_isa_names), .flags = DPC_FIELD_RUNTIME,
     .def_text = "this CPU's best (dpc_isa_detect)",
     .doc = "the noise kernels' instruction-set level (dpc_train_config.isa)"},
    {.name = "event", .type = DPC_FIELD_POINTER, F4(event), .flags = DPC_FIELD_RUNTIME,
     .doc = "called at every stage of the study; a non-zero return stops it (NULL: none)"},
    {.name = "ctx", .type = DPC_FIELD_POINTER, F4(ctx), .flags = DPC_FIELD_RUNTIME,
     .doc = "the event's context, borrowed"},
};
#undef F4
static const dpc_field_table fig4_table = DPC_FIELD_TABLE(dpc_nu_fig4_params, fig4_fields);

const dpc_field_table *dpc_nu_fig4_params_fields(void) { return &fig4_table; }

void dpc_nu_fig4_params_init(dpc_nu_fig4_params *p)
{
    if (!p) return;
    dpc_field_defaults(&fig4_table, p);
    p->isa = dpc_isa_detect(); /* the table's AUTO, resolved here as before */
}

/* The study under way: what the caller passed, the result and the strategies it owns. */
typedef struct study {
    const dpc_nu_fig4_params *p;
    const dpc_model *model;
    dpc_nu_fig4_result *r;
    dpc_mech_params mp[NMECH];
    dpc_strategy *blt, *band, *dense;
} study;

static dpc_status emit(study *s, dpc_nu_fig4_event ev, dpc_error *err)
{
    ev.res = s->r;
    if (s->p->event && s->p->event(s->p->ctx, &ev))
        return dpc_error_param(err, DPC_E_CANCELLED, "event", "the study was stopped");
    return DPC_OK;
}

/* Best damping of anti-PGD for the problem (grid), like dpc_strategy_best_nu. */
static dpc_status best_damping(const dpc_strategy_problem *pb, double *best, dpc_error *err)
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
        dpc_status st = dpc_mech_new(&m, &p, err);
        if (st) return st;
        st = dpc_strategy_loss_of(m, pb, &l, err);
        dpc_mech_free(m);
        if (st) return st;
        if (l.loss < bl) {
            bl = l.loss;
            *best = nu;
        }
    }
    return DPC_OK;
}

/* Trains mechanism m at epsilon index e with rate lr and batch on train; *acc = the final
 * accuracy on test, NAN when the run fails (its error in *e1, event FAILED) or cannot be
 * evaluated; the status is the events' (a stopped study). sigma caches the calibration per
 * epsilon (the same noise multiplier for every seed and learning rate). */
static dpc_status train_one(study *s, size_t m, size_t e, uint64_t seed, double lr, size_t batch,
                            double *sigma, const dpc_dataset *train, const dpc_dataset *test,
                            double *acc, double *eps_out, dpc_error *e1, dpc_error *err)
{
    const dpc_nu_fig4_config *fc = &s->r->cfg;
    dpc_train_config cfg;
    dpc_train_config_init(&cfg);
    cfg.mech = s->mp[m];
    cfg.sampler = s->r->mech[m].sampler;
    cfg.batch = batch;
    cfg.epochs = fc->epochs;
    cfg.delta = 1e-5;
    if (sigma[e] > 0) {
        cfg.epsilon = 0;
        cfg.noise_multiplier = sigma[e]; /* the same calibrated z for every seed and rate */
    } else {
        cfg.epsilon = fc->eps[e];
    }
    cfg.accountant = DPC_ACCOUNTANT_PLD;
    cfg.clip = 1.0;
    cfg.lr = lr;
    cfg.momentum = 0.9;
    cfg.schedule = DPC_LR_COOLDOWN;
    cfg.threads = fc->threads;
    cfg.isa = s->p->isa;
    dpc_rng rng;
    dpc_rng_seed(&rng, seed);
    dpc_trainer *tr = NULL;
    *acc = NAN;
    dpc_nu_fig4_event ev = {.mech = m, .eps = e, .err = e1};
    if (dpc_trainer_new(&tr, s->model, train, test, &cfg, &rng, e1)) {
        ev.stage = DPC_NU_FIG4_EV_FAILED;
        return emit(s, ev, err);
    }
    const dpc_ledger *L = dpc_trainer_ledger(tr);
    dpc_status st = DPC_OK;
    if (sigma[e] == 0) {
        sigma[e] = L->noise_multiplier;
        ev.stage = DPC_NU_FIG4_EV_CALIBRATED;
        ev.sigma = sigma[e];
        ev.route = L->route;
        st = emit(s, ev, err);
    }
    *eps_out = L->epsilon;
    dpc_run run = dpc_trainer_run_ops(tr);
    if (!st && dpc_run_drive(&run, NULL, NULL, NULL, NULL, e1)) {
        ev.stage = DPC_NU_FIG4_EV_FAILED;
        ev.stepping = 1;
        st = emit(s, ev, err);
    } else if (!st) {
        double loss;
        dpc_error e2 = {0}; /* an evaluation that fails is a NAN accuracy */
        if (dpc_trainer_evaluate(tr, test, &loss, acc, &e2)) *acc = NAN;
    }
    dpc_trainer_free(tr);
    return st;
}

/* The tuning stage: for every mechanism and epsilon, train once per grid learning rate on
 * N - H training images and score on the H held-out ones (the test set is never used). The
 * batch is floor((N - H) / spe) so that the tuning runs have the same steps per epoch spe,
 * hence the same (n, k, b), strategies and sensitivities as the final runs. */
static dpc_status fit_learning_rates(study *s, const dpc_dataset *train, const dpc_rng *rng,
                                     dpc_error *err)
{
    dpc_nu_fig4_result *r = s->r;
    const dpc_nu_fig4_config *fc = &r->cfg;
    for (int m = 0; m < NMECH; m++)
        for (size_t e = 0; e < fc->neps; e++) r->mech[m].lr[e] = fc->lrs[0];
    if (fc->nlr < 2) return DPC_OK;
    if (fc->holdout >= train->n)
        return dpc_error_param(err, DPC_E_INVALID, "holdout", "tuning: holdout %zu >= %zu "
                               "training images", fc->holdout, train->n);
    size_t nt = train->n - fc->holdout, tb = nt / r->spe;
    if (tb == 0 || nt / tb != r->spe)
        return dpc_error_param(err, DPC_E_INVALID, "holdout", "tuning: no batch keeps %zu steps "
                               "per epoch on %zu images", r->spe, nt);
    r->tune_n = nt;
    r->tune_batch = tb;
    dpc_dataset *tr = NULL, *val = NULL;
    /* stream 7: a data-independent random split, disjoint from the loader's streams */
    dpc_status st = dpc_dataset_split(&tr, &val, train, nt, rng, 7, err);
    if (st) return dpc_error_prefix(err, "tuning split: ");
    st = emit(s, (dpc_nu_fig4_event){.stage = DPC_NU_FIG4_EV_TUNING}, err);
    for (size_t m = 0; m < NMECH && !st; m++)
        for (size_t e = 0; e < fc->neps && !st; e++) {
            double best = -1, ea;
            for (size_t l = 0; l < fc->nlr && !st; l++) {
                dpc_nu_fig4_mech *mk = &r->mech[m];
                dpc_error e1 = {0};
                double a;
                st = train_one(s, m, e, s->p->seed, fc->lrs[l], tb, mk->sigma_tune, tr, val, &a,
                               &ea, &e1, err);
                if (!st && isnan(a)) { /* a failed tuning run stops the study */
                    if (e1.status) *err = e1;
                    else dpc_error_set(err, DPC_E_NUMERIC, "tuning: %s at epsilon %g: no holdout "
                                       "accuracy", mk->name, fc->eps[e]);
                    st = err->status;
                }
                if (st) break;
                mk->tune_acc[e][l] = a;
                st = emit(s, (dpc_nu_fig4_event){.stage = DPC_NU_FIG4_EV_TUNED, .mech = m,
                                                 .eps = e, .lr = l, .acc = a}, err);
                if (a > best) { /* ties keep the smaller learning rate */
                    best = a;
                    mk->lr[e] = fc->lrs[l];
                }
            }
        }
    dpc_dataset_free(tr);
    dpc_dataset_free(val);
    if (!st) st = emit(s, (dpc_nu_fig4_event){.stage = DPC_NU_FIG4_EV_TUNING_DONE}, err);
    return st;
}

static void mech_named(study *s, int i, dpc_mech_kind kind, dpc_sampler_kind sampler,
                       const char *fmt, double v)
{
    snprintf(s->r->mech[i].name, sizeof s->r->mech[i].name, fmt, v);
    s->mp[i].kind = kind;
    s->r->mech[i].sampler = sampler;
}

/* The strategies for (n, k, b) and the twelve mechanisms (data-independent choices). */
static dpc_status mechanisms(study *s, const dpc_strategy_problem *pb, dpc_error *err)
{
    dpc_nu_fig4_result *r = s->r;
    double t0 = dpc__now();
    dpc_strategy_loss bl;
    dpc_status st = dpc_strategy_best_nu(pb, &r->nu, &bl, err);
    if (!st) st = best_damping(pb, &r->damping, err);
    dpc_strategy_options so;
    dpc_strategy_options_init(&so);
    if (!st) st = dpc_strategy_optimize_blt(&s->blt, pb, &so, err);
    so.bands = r->spe < 32 ? r->spe : 32;
    if (!st) st = dpc_strategy_optimize_banded(&s->band, pb, &so, err);
    dpc_strategy_options_init(&so);
    if (!st) st = dpc_strategy_optimize_dense(&s->dense, pb, &so, err);
    if (st) return dpc_error_prefix(err, "strategy optimization failed: ");
    r->optimize_seconds = dpc__now() - t0;
    r->blt_buffers = s->blt->nbuf;
    r->bands = s->band->ncoeffs;
    for (int i = 0; i < NMECH; i++) dpc_mech_params_init(&s->mp[i]);
    const dpc_sampler_kind FX = DPC_SAMPLER_FIXED, PO = DPC_SAMPLER_POISSON,
                           BB = DPC_SAMPLER_BALLS_IN_BINS;
    dpc_mech_kind sgd = s->mp[0].kind;
    mech_named(s, 0, sgd, FX, "DP-SGD (fixed order)", 0);
    mech_named(s, 1, sgd, PO, "DP-SGD (Poisson, amplified)", 0);
    mech_named(s, 2, DPC_MECH_NU, FX, "nu-DP-FTRL (nu=%.3g)", r->nu);
    mech_named(s, 3, DPC_MECH_NU, FX, "optimal CC (nu=0)", 0);
    mech_named(s, 4, DPC_MECH_TREE, FX, "tree (Honaker)", 0);
    s->mp[4].honaker = 1;
    mech_named(s, 5, DPC_MECH_ANTIPGD, FX, "damped anti-PGD (nu=%.3g)", r->damping);
    mech_named(s, 6, sgd, FX, "BLT (%.0f buffers, optimized)", (double)r->blt_buffers);
    dpc_strategy_mech_params(s->blt, &s->mp[6]);
    mech_named(s, 7, sgd, FX, "banded Toeplitz (%.0f bands)", (double)r->bands);
    dpc_strategy_mech_params(s->band, &s->mp[7]);
    mech_named(s, 8, sgd, FX, "dense ME (optimized)", 0);
    dpc_strategy_mech_params(s->dense, &s->mp[8]);
    /* nu-DP-FTRL as the paper wanted to compare it: Poisson sampling with amplification, by
     * MMCC-style conditional composition (or the whole-run route when that is better) */
    mech_named(s, 9, DPC_MECH_NU, PO, "nu-DP-FTRL (Poisson, amplified)", 0);
    /* balls-in-bins (each example in one uniformly random step of each epoch, the same every
     * epoch): the fixed-order pattern with a random position, so the same sensitivity, plus
     * amplification — the exact random-allocation bound for DP-SGD, the Monte Carlo upper
     * confidence bound for nu (doc/accounting.md section 7) */
    mech_named(s, 10, DPC_MECH_NU, BB, "nu-DP-FTRL (balls-in-bins, amplified)", 0);
    mech_named(s, 11, sgd, BB, "DP-SGD (balls-in-bins, amplified)", 0);
    s->mp[2].nu = s->mp[9].nu = s->mp[10].nu = r->nu;
    s->mp[5].nu = r->damping;
    return emit(s, (dpc_nu_fig4_event){.stage = DPC_NU_FIG4_EV_CHOSEN}, err);
}

/* The final runs: every mechanism, epsilon and seed at the chosen rate (a failed run: NAN). */
static dpc_status final_runs(study *s, const dpc_dataset *train, const dpc_dataset *test,
                             dpc_error *err)
{
    dpc_nu_fig4_result *r = s->r;
    const dpc_nu_fig4_config *fc = &r->cfg;
    double t0 = dpc__now();
    dpc_status st = DPC_OK;
    for (size_t m = 0; m < NMECH && !st; m++)
        for (size_t e = 0; e < fc->neps && !st; e++)
            for (size_t k = 0; k < fc->nseeds && !st; k++) {
                dpc_nu_fig4_mech *mk = &r->mech[m];
                dpc_error e1 = {0};
                mk->eps_accounted[e][k] = NAN;
                st = train_one(s, m, e, s->p->seed + k, mk->lr[e], fc->batch, mk->sigma, train,
                               test, &mk->acc[e][k], &mk->eps_accounted[e][k], &e1, err);
                if (!st)
                    st = emit(s, (dpc_nu_fig4_event){.stage = DPC_NU_FIG4_EV_RUN, .mech = m,
                                                     .eps = e, .seed = k, .acc = mk->acc[e][k]},
                              err);
            }
    r->train_seconds = dpc__now() - t0;
    return st;
}

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

static const char *const FIG4_NO[] = {
    "the paper's CIFAR-10 and StackOverflow numbers (no dataset, GPU or stated accounting); the "
    "comparison here is the same study on Fashion-MNIST"};

/* Mean +- std over seeds and the checks: nu against DP-SGD under the same sampling and dense
 * ME (1 point), and against the paper's stronger baseline, DP-SGD with amplification, which the
 * paper reports wins at small epsilon (section 4; nu-DP-FTRL wins for epsilon >= 4 on
 * CIFAR-10), without and with balls-in-bins amplification of nu. */
static void summarize(dpc_nu_fig4_result *r)
{
    size_t S = r->cfg.nseeds, E = r->cfg.neps;
    for (int m = 0; m < NMECH; m++)
        for (size_t e = 0; e < E; e++) {
            r->mech[m].mean[e] = mean_of(r->mech[m].acc[e], S);
            r->mech[m].sd[e] = std_of(r->mech[m].acc[e], S);
        }
    const double *nu = r->mech[DPC_NU_FIG4_NU].mean, *sgd = r->mech[DPC_NU_FIG4_SGD_FIXED].mean,
                 *amp = r->mech[DPC_NU_FIG4_SGD_POISSON].mean, *me = r->mech[DPC_NU_FIG4_DENSE].mean,
                 *bib = r->mech[DPC_NU_FIG4_NU_BIB].mean;
    r->nu_ge_sgd_fixed = 1;
    r->nu_within_1pp_of_me = 1;
    for (size_t e = 0; e < E; e++) {
        if (nu[e] < sgd[e]) r->nu_ge_sgd_fixed = 0;
        if (nu[e] < me[e] - 0.01) r->nu_within_1pp_of_me = 0;
        r->nu_ge_sgd_amplified[e] = nu[e] >= amp[e];
        r->nu_bib_ge_sgd_amplified[e] = bib[e] >= amp[e];
    }
    r->claims = (dpc_nu_repro_claims){NULL, 0, FIG4_NO, 1};
}

/* The problem (n, k, b), the mechanisms, the tuning and the final runs. */
static dpc_status study_run(study *s, const dpc_dataset *train, const dpc_dataset *test,
                            const dpc_rng *rng, dpc_error *err)
{
    dpc_nu_fig4_result *r = s->r;
    r->n_train = train->n;
    r->n_test = test->n;
    r->spe = train->n / r->cfg.batch;
    r->n = r->spe * r->cfg.epochs;
    if (r->spe == 0)
        return dpc_error_param(err, DPC_E_INVALID, "train", "%zu images < the batch %zu",
                               train->n, r->cfg.batch);
    dpc_strategy_problem pb;
    dpc_strategy_problem_init(&pb, r->n);
    pb.participations = r->cfg.epochs;
    pb.min_sep = r->spe;
    pb.objective = DPC_OBJECTIVE_MEAN;
    dpc_status st = emit(s, (dpc_nu_fig4_event){.stage = DPC_NU_FIG4_EV_STUDY}, err);
    if (!st) st = mechanisms(s, &pb, err);
    double t0 = dpc__now();
    if (!st) st = fit_learning_rates(s, train, rng, err);
    r->tune_seconds = dpc__now() - t0;
    if (!st) st = final_runs(s, train, test, err);
    if (!st) summarize(r);
    return st;
}

dpc_status dpc_nu_fig4_run(const dpc_nu_fig4_params *p, const dpc_model *model,
                           const dpc_dataset *train, const dpc_dataset *test, const dpc_rng *rng,
                           dpc_nu_fig4_result **out, dpc_error *err)
{
    if (!out) return dpc_error_param(err, DPC_E_INVALID, "out", "NULL");
    *out = NULL;
    if (!p) return dpc_error_param(err, DPC_E_INVALID, "params", "NULL");
    const dpc_field *scale = dpc_field_find(&fig4_table, "scale", NULL);
    dpc_status st0 = dpc_field_check_value(scale, "", dpc_field_get(scale, p), err);
    if (st0) return st0;
    if (!model || !train || !test || !rng)
        return dpc_error_param(err, DPC_E_INVALID, !model ? "model" : !train ? "train"
                               : !test ? "test" : "rng", "NULL");
    study s = {.p = p, .model = model};
    s.r = calloc(1, sizeof *s.r);
    if (!s.r) return DPC__NOMEM(err, "the Figure 4 study");
    s.r->cfg = dpc_nu_fig4_config_of(p->scale);
    dpc_status st = study_run(&s, train, test, rng, err);
    dpc_strategy_free(s.blt);
    dpc_strategy_free(s.band);
    dpc_strategy_free(s.dense);
    if (st) {
        free(s.r);
        return st;
    }
    *out = s.r;
    return DPC_OK;
}

void dpc_nu_fig4_free(dpc_nu_fig4_result *r) { free(r); }
