/* test_train.c — the DP trainer: the update equals an independent recomputation from the same
 * sampler, model and noise generator; the ledger's epsilon equals the accountant's for the exact
 * sampler and mechanism; 1 vs 2 threads and interrupted vs uninterrupted runs are bit-identical;
 * impossible budgets and bad configurations are refused; a private run actually learns. */
#include "dpcorr/train.h"
#include "harness.h"
#include "train_fixture.h"
#include "train/train_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


static dpc_trainer *trainer(const dpc_model *m, const dpc_dataset *ds, dpc_train_config *c,
                            uint64_t seed, dpc_error *err)
{
    dpc_rng rng;
    dpc_rng_seed(&rng, seed);
    dpc_trainer *tr = NULL;
    dpc_status st = dpc_trainer_new(&tr, m, ds, NULL, c, &rng, err);
    CHECK(st == DPC_OK, "trainer_new: %s", err->msg);
    return tr;
}

static uint64_t run_all(dpc_trainer *tr)
{
    dpc_error err = {0};
    while (dpc_trainer_steps_done(tr) < dpc_trainer_steps_total(tr))
        if (dpc_trainer_step(tr, NULL, &err)) {
            CHECK(0, "step: %s", err.msg);
            break;
        }
    return dpc_trainer_params_hash(tr);
}

typedef struct mcfg {
    const char *name;
    dpc_mech_kind kind;
    dpc_sampler_kind sampler;
    double nu;
    size_t bands, groups;
} mcfg;

static const mcfg mechs[] = {
    {"dp-sgd poisson", DPC_MECH_IDENTITY, DPC_SAMPLER_POISSON, 0, 0, 0},
    {"nu fixed", DPC_MECH_NU, DPC_SAMPLER_FIXED, 0.05, 0, 0},
    {"bsr cyclic-poisson", DPC_MECH_BSR, DPC_SAMPLER_CYCLIC_POISSON, 0, 3, 0},
    {"tree shuffle", DPC_MECH_TREE, DPC_SAMPLER_SHUFFLE, 0, 0, 0},
    {"bisr fixed", DPC_MECH_BISR, DPC_SAMPLER_FIXED, 0, 4, 0},
};

static void base_config(dpc_train_config *c, const mcfg *m)
{
    dpc_train_config_init(c);
    c->mech.kind = m->kind;
    c->mech.nu = m->nu;
    c->mech.bands = m->bands;
    c->sampler = m->sampler;
    c->groups = m->groups;
    c->batch = 20;
    c->epochs = 3;
    c->epsilon = 4.0;
    c->delta = 1e-5;
    c->clip = 0.5;
    c->lr = 0.5;
    c->momentum = 0.9;
    c->weight_decay = 1e-3;
    c->chunk = 7;
    c->accountant = DPC_ACCOUNTANT_RDP; /* fast; PLD is exercised by the accounting tests */
}

/* dpc_trainer_new_progress: the calibration (balls-in-bins: seconds of work) reports through
 * the callback and stops when it asks (issue 38: train calibrated silently); dpc_trainer_new
 * is the same trainer without reports. */
typedef struct {
    int calls, stop_at;
} calib_prog;

static int on_calib(void *ctx, double done, double total)
{
    calib_prog *p = ctx;
    p->calls++;
    return done > total || (p->stop_at && p->calls >= p->stop_at);
}

static void test_calibration_progress(void)
{
    dpc_dataset *ds = logistic_data(400, 4, 11);
    dpc_model *m = model_of("logistic", 4, 2);
    dpc_train_config c;
    base_config(&c, &mechs[1]);
    c.sampler = DPC_SAMPLER_BALLS_IN_BINS;
    c.epochs = 2;
    dpc_rng rng;
    dpc_rng_seed(&rng, 3);
    dpc_error err = {0};
    dpc_trainer *tr = NULL, *plain = NULL;
    calib_prog p = {0, 0};
    CHECK_OK(dpc_trainer_new_progress(&tr, m, ds, NULL, &c, &rng, (dpc_progress){on_calib, &p},
                                      &err), &err);
    CHECK_OK(dpc_trainer_new(&plain, m, ds, NULL, &c, &rng, &err), &err);
    CHECK(p.calls >= 4 && tr && plain &&
              dpc_trainer_ledger(tr)->noise_multiplier ==
                  dpc_trainer_ledger(plain)->noise_multiplier,
          "the calibration reports (%d calls) and calibrates as without reports", p.calls);
    dpc_trainer_free(tr);
    calib_prog q = {0, 2};
    tr = NULL;
    CHECK(dpc_trainer_new_progress(&tr, m, ds, NULL, &c, &rng, (dpc_progress){on_calib, &q},
                                   &err) == DPC_E_CANCELLED && !tr && q.calls == 2,
          "a calibration cancelled by its callback: %s", err.msg);
    dpc_trainer_free(plain);
    dpc_model_free(m);
    dpc_dataset_free(ds);
}

/* Secure mode (ChaCha20 noise): the key travels in the checkpoint, so a resumed run is
 * bit-identical; a different secure key is another run; the noise differs from seeded mode. */
static void test_secure_resume(void)
{
    dpc_dataset *ds = logistic_data(200, 5, 1);
    dpc_model *m = model_of("mlp:6", 5, 2);
    char path[] = "/tmp/dpcorr_ckpt_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    dpc_rng sec;
    memset(&sec, 0, sizeof sec);
    sec.mode = DPC_RNG_SECURE;
    for (int i = 0; i < 8; i++) sec.skey[i] = 0x9e3779b9u * (uint32_t)(i + 1);
    for (size_t k = 0; k < 3; k++) {
        dpc_train_config c;
        base_config(&c, &mechs[k]);
        dpc_error err = {0};
        dpc_trainer *a = NULL, *x = NULL, *y = NULL, *z = NULL, *s = NULL;
        CHECK_OK(dpc_trainer_new(&a, m, ds, NULL, &c, &sec, &err), &err);
        CHECK_OK(dpc_trainer_new(&x, m, ds, NULL, &c, &sec, &err), &err);
        if (!a || !x) { dpc_trainer_free(a); dpc_trainer_free(x); continue; }
        uint64_t ha = run_all(a);
        size_t half = dpc_trainer_steps_total(x) / 2;
        for (size_t t = 0; t < half; t++) CHECK_OK(dpc_trainer_step(x, NULL, &err), &err);
        CHECK_OK(dpc_trainer_save(x, path, &err), &err);
        dpc_rng back;
        CHECK_OK(dpc_checkpoint_read_rng(path, &back, &err), &err);
        CHECK(back.mode == DPC_RNG_SECURE && memcmp(back.skey, sec.skey, sizeof sec.skey) == 0,
              "%s: the checkpoint carries the secure key", mechs[k].name);
        CHECK_OK(dpc_trainer_new(&y, m, ds, NULL, &c, &back, &err), &err);
        CHECK_OK(dpc_trainer_resume(y, path, &err), &err);
        CHECK(run_all(y) == ha, "%s: secure resumed run differs", mechs[k].name);
        dpc_rng other = sec;
        other.skey[7] ^= 1u;
        CHECK_OK(dpc_trainer_new(&z, m, ds, NULL, &c, &other, &err), &err);
        CHECK(dpc_trainer_resume(z, path, &err) == DPC_E_STATE,
              "%s: another secure key is another run", mechs[k].name);
        dpc_rng seeded = sec;
        seeded.mode = DPC_RNG_SEEDED; /* a secure key relabelled seeded: no seed's key (issue 37) */
        CHECK(dpc_trainer_new(&s, m, ds, NULL, &c, &seeded, &err) == DPC_E_INVALID &&
                  !strcmp(err.field, "rng.key") && s == NULL,
              "%s: a relabelled generator refused: %s", mechs[k].name, err.msg);
        dpc_rng_seed(&seeded, 0); /* Philox noise */
        CHECK_OK(dpc_trainer_new(&s, m, ds, NULL, &c, &seeded, &err), &err);
        CHECK(run_all(s) != ha, "%s: secure noise differs from seeded", mechs[k].name);
        dpc_trainer_free(a);
        dpc_trainer_free(x);
        dpc_trainer_free(y);
        dpc_trainer_free(z);
        dpc_trainer_free(s);
    }
    unlink(path);
    dpc_model_free(m);
    dpc_dataset_free(ds);
}

static void test_threads_resume(void)
{
    dpc_dataset *ds = logistic_data(200, 5, 1);
    dpc_model *m = model_of("mlp:6", 5, 2);
    char path[] = "/tmp/dpcorr_ckpt_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    for (size_t k = 0; k < sizeof mechs / sizeof mechs[0]; k++) {
        dpc_train_config c;
        base_config(&c, &mechs[k]);
        dpc_error err = {0};
        dpc_trainer *a = trainer(m, ds, &c, 7, &err);
        c.threads = 2;
        dpc_trainer *b = trainer(m, ds, &c, 7, &err);
        if (!a || !b) { dpc_trainer_free(a); dpc_trainer_free(b); continue; }
        uint64_t ha = run_all(a), hb = run_all(b);
        CHECK(ha == hb, "%s: 1 vs 2 threads differ", mechs[k].name);
        /* interrupted at the middle, resumed by a fresh trainer with 1 thread */
        dpc_trainer *x = trainer(m, ds, &c, 7, &err);
        size_t half = dpc_trainer_steps_total(x) / 2;
        for (size_t t = 0; t < half; t++) CHECK_OK(dpc_trainer_step(x, NULL, &err), &err);
        CHECK_OK(dpc_trainer_save(x, path, &err), &err);
        dpc_trainer_free(x);
        c.threads = 1;
        dpc_trainer *y = trainer(m, ds, &c, 7, &err);
        CHECK_OK(dpc_trainer_resume(y, path, &err), &err);
        CHECK(dpc_trainer_steps_done(y) == half, "%s: resumed at step %zu", mechs[k].name, half);
        CHECK(run_all(y) == ha, "%s: resumed run differs from the uninterrupted one",
              mechs[k].name);
        /* a checkpoint of another run is refused */
        dpc_trainer *z = trainer(m, ds, &c, 8, &err);
        CHECK(dpc_trainer_resume(z, path, &err) == DPC_E_STATE && !strcmp(err.field, "seed") &&
                  strstr(err.msg, "has 7, this run has 8"),
              "%s: foreign checkpoint refused, naming the seed: %s", mechs[k].name, err.msg);
        dpc_trainer_free(a);
        dpc_trainer_free(b);
        dpc_trainer_free(y);
        dpc_trainer_free(z);
    }
    /* a corrupt checkpoint is refused */
    FILE *f = fopen(path, "r+b");
    fseek(f, 100, SEEK_SET);
    fputc(0x5a, f);
    fclose(f);
    dpc_train_config c;
    base_config(&c, &mechs[4]);
    dpc_error err = {0};
    dpc_trainer *y = trainer(m, ds, &c, 7, &err);
    CHECK(dpc_trainer_resume(y, path, &err) == DPC_E_FORMAT && strstr(err.msg, "checksum"),
          "corrupt checkpoint refused: %s", err.msg);
    dpc_trainer_free(y);
    unlink(path);
    dpc_model_free(m);
    dpc_dataset_free(ds);
}

/* The update equals an independent recomputation: theta_{t+1} = theta_t - lr (g + w)/B with
 * momentum 0, weight decay 0; g from the naive clipped sum of the sampler's batch and w from a
 * separate noise generator on the same stream, scaled by the ledger's noise std x clip. */
static void test_update_recomputed(void)
{
    dpc_dataset *ds = logistic_data(120, 4, 2);
    dpc_model *m = model_of("logistic", 4, 2);
    for (size_t k = 0; k < sizeof mechs / sizeof mechs[0]; k++) {
        dpc_train_config c;
        base_config(&c, &mechs[k]);
        c.momentum = 0;
        c.weight_decay = 0;
        c.lr = 0.3;
        c.epochs = 2;
        dpc_error err = {0};
        dpc_trainer *tr = trainer(m, ds, &c, 11, &err);
        if (!tr) continue;
        size_t P = dpc_model_num_params(m), n = dpc_trainer_steps_total(tr);
        const dpc_ledger *L = dpc_trainer_ledger(tr);
        /* independent pieces built from the ledger's description */
        dpc_rng rng;
        dpc_rng_seed(&rng, 11);
        dpc_sampler_config sc = {c.sampler, ds->n, c.batch, n, c.sampler == DPC_SAMPLER_CYCLIC_POISSON ? c.mech.bands : 0};
        dpc_sampler *s = NULL;
        CHECK_OK(dpc_sampler_new(&s, &sc, &rng, &err), &err);
        dpc_mech_params mp = c.mech;
        mp.steps = n;
        dpc_mech *mech = NULL;
        CHECK_OK(dpc_mech_new(&mech, &mp, &err), &err);
        dpc_rng_stream ns = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_NOISE, 0));
        dpc_noise_config nc = {0, P, DPC_NOISE_AUTO, 0, DPC_ISA_AUTO};
        dpc_noise *gen = NULL;
        CHECK_OK(dpc_noise_new(&gen, mech, &ns, &nc, &err), &err);
        double *theta = malloc(P * sizeof *theta), *g = malloc(P * sizeof *g),
               *w = malloc(P * sizeof *w), *X = malloc(ds->n * 4 * sizeof *X),
               *y = malloc(ds->n * sizeof *y);
        size_t *idx = malloc(ds->n * sizeof *idx), cnt;
        double maxdev = 0, noise_scale = L->noise_std * c.clip;
        for (size_t t = 0; t < n; t++) {
            memcpy(theta, dpc_trainer_params(tr), P * sizeof *theta);
            CHECK_OK(dpc_sampler_batch(s, t, idx, &cnt, &err), &err);
            for (size_t j = 0; j < cnt; j++) {
                memcpy(X + j * 4, ds->x + idx[j] * 4, 4 * sizeof *X);
                y[j] = ds->y[idx[j]];
            }
            memset(g, 0, P * sizeof *g);
            if (cnt) CHECK_OK(dpc_model_clipped_sum_naive(m, theta, X, y, cnt, c.clip, g, NULL, NULL, &err), &err);
            CHECK_OK(dpc_noise_next(gen, w, &err), &err);
            CHECK_OK(dpc_trainer_step(tr, NULL, &err), &err);
            const double *th1 = dpc_trainer_params(tr);
            for (size_t p = 0; p < P; p++) {
                double expect = theta[p] - c.lr * (g[p] + noise_scale * w[p]) / L->expected_batch;
                double dev = fabs(th1[p] - expect) / (1 + fabs(expect));
                if (dev > maxdev) maxdev = dev;
            }
        }
        CHECK(maxdev < 1e-12, "%s: update deviates from recomputation by %g", mechs[k].name,
              maxdev);
        /* the ledger's epsilon is the accountant's for this exact run */
        dpc_sampler_desc sd;
        dpc_sampler_describe(s, &sd);
        dpc_gauss_event ge;
        dpc_account_mech_info info;
        double q = sd.poisson ? sd.q : 1.0;
        /* the ledger's noise multiplier z reproduces the run's noise: std z x colnorm(C) */
        dpc_sensitivity sv, col;
        dpc_participation single = {DPC_PART_MINSEP, 1, 1};
        CHECK_OK(dpc_mech_sensitivity(mech, &sd.part, &sv, &err), &err);
        CHECK_OK(dpc_mech_sensitivity(mech, &single, &col, &err), &err);
        CHECK_NEAR_REL(sv.value, L->sensitivity, 1e-15, "%s: ledger sensitivity", mechs[k].name);
        CHECK_NEAR_REL(col.value, L->column_norm, 1e-15, "%s: ledger column norm", mechs[k].name);
        CHECK_NEAR_REL(L->noise_multiplier * col.value, L->noise_std, 1e-14,
                       "%s: noise std = z x column norm", mechs[k].name);
        CHECK_OK(dpc_account_mech_event(mech, &sd.part, L->noise_multiplier, q, &ge, &info, &err),
                 &err);
        dpc_event ev = {q < 1 ? DPC_NEIGHBOR_ADD_REMOVE : DPC_NEIGHBOR_ZERO_OUT, 1, &ge};
        dpc_account_opts o;
        dpc_account_opts_init(&o, q < 1 ? DPC_ACCOUNTANT_RDP : DPC_ACCOUNTANT_GDP);
        dpc_account_result r;
        CHECK_OK(dpc_account_epsilon(&ev, &o, c.delta, &r, &err), &err);
        CHECK_NEAR_REL(L->epsilon, r.epsilon, 1e-12, "%s: ledger epsilon = accountant's",
                       mechs[k].name);
        CHECK(L->epsilon <= c.epsilon * (1 + 1e-9), "%s: epsilon %g within target %g",
              mechs[k].name, L->epsilon, c.epsilon);
        CHECK(L->epsilon >= c.epsilon * 0.999, "%s: calibration is tight (%g vs %g)",
              mechs[k].name, L->epsilon, c.epsilon);
        free(theta); free(g); free(w); free(X); free(y); free(idx);
        dpc_noise_free(gen);
        dpc_mech_free(mech);
        dpc_sampler_free(s);
        dpc_trainer_free(tr);
    }
    dpc_model_free(m);
    dpc_dataset_free(ds);
}

static void test_refusals(void)
{
    dpc_dataset *ds = logistic_data(100, 3, 3);
    dpc_model *m = model_of("logistic", 3, 2);
    dpc_train_config c;
    base_config(&c, &mechs[0]);
    dpc_rng rng;
    dpc_rng_seed(&rng, 1);
    dpc_error err = {0};
    dpc_trainer *tr = NULL;
    struct { const char *field; void (*set)(dpc_train_config *); } bad[] = {
        {"epsilon", NULL}, {"delta", NULL}, {"batch", NULL}, {"clip", NULL}, {"lr", NULL},
        {"momentum", NULL}, {"epochs", NULL}, {"threads", NULL}, {"lr", NULL}, {"clip", NULL},
        {"weight_decay", NULL}, {"noise_multiplier", NULL}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        base_config(&c, &mechs[0]);
        switch (i) {
        case 0: c.epsilon = -1; break;
        case 1: c.delta = 1.0; break; /* (0, 1) */
        case 2: c.batch = 101; break;
        case 3: c.clip = NAN; break;
        case 4: c.lr = 0; break;
        case 5: c.momentum = 1; break;
        case 6: c.epochs = 0; break;
        case 7: c.threads = 0; break;
        /* issue 28: overflowing steps and noise (a 1e308 learning rate ran to loss 1e306) */
        case 8: c.lr = 1e308; break;
        case 9: c.clip = 1e200; break; /* lr x clip: blamed on the larger factor */
        case 10: c.weight_decay = 1e308; break;
        case 11: c.epsilon = 0, c.noise_multiplier = 1e300; break;
        }
        dpc_status bst = dpc_trainer_new(&tr, m, ds, NULL, &c, &rng, &err);
        CHECK((bst == DPC_E_INVALID || bst == DPC_E_RANGE) && !tr &&
                  !strcmp(err.field, bad[i].field) && strstr(err.msg, bad[i].field),
              "bad %s refused: %s [%s]", bad[i].field, err.msg, err.field);
    }
    /* impossible budget: tiny epsilon, few examples, many epochs */
    base_config(&c, &mechs[1]);
    c.epsilon = 1e-6;
    c.delta = 1e-12;
    c.epochs = 50;
    dpc_status st = dpc_trainer_new(&tr, m, ds, NULL, &c, &rng, &err);
    CHECK((st == DPC_E_PRIVACY || st == DPC_OK) , "tiny epsilon: %s", err.msg);
    if (tr) { CHECK(dpc_trainer_ledger(tr)->epsilon <= 1e-6 * (1 + 1e-9), "tiny eps met"); dpc_trainer_free(tr); tr = NULL; }
    /* Poisson sampling with a non-banded mechanism: accounted by the best valid route (MMCC
     * under PLD, the whole-run Gaussian otherwise), never above the target */
    for (int a = 0; a < 2; a++) {
        base_config(&c, &mechs[1]);
        c.sampler = DPC_SAMPLER_POISSON;
        c.accountant = a ? DPC_ACCOUNTANT_PLD : DPC_ACCOUNTANT_RDP;
        CHECK_OK(dpc_trainer_new(&tr, m, ds, NULL, &c, &rng, &err), &err);
        if (tr) {
            const dpc_ledger *L = dpc_trainer_ledger(tr);
            CHECK(L->epsilon <= c.epsilon * (1 + 1e-9) && L->epsilon > 0.5 * c.epsilon,
                  "poisson + nu epsilon %g", L->epsilon);
            CHECK(a ? (!strncmp(L->route, "MMCC", 4) || !strncmp(L->route, "whole-run", 9))
                    : !strncmp(L->route, "whole-run", 9),
                  "poisson + nu route %s", L->route);
            dpc_trainer_free(tr);
            tr = NULL;
        }
    }
    /* balls-in-bins: every example once per epoch at a random (fixed) position */
    base_config(&c, &mechs[1]);
    c.sampler = DPC_SAMPLER_BALLS_IN_BINS;
    CHECK_OK(dpc_trainer_new(&tr, m, ds, NULL, &c, &rng, &err), &err);
    if (tr) {
        const dpc_ledger *L = dpc_trainer_ledger(tr);
        char js[2048];
        dpc_ledger_json(L, js, sizeof js);
        /* nu: amplified by the balls-in-bins route's deterministic (sampling-free) bound, the
         * guarantee in the ledger, the Monte Carlo beside it (samples, confidence, seed) */
        CHECK(!strcmp(L->sampler, "balls-in-bins") && L->epsilon <= c.epsilon * (1 + 1e-9) &&
                  !strncmp(L->route, "balls-in-bins: sampling-free", 28) && L->amplified &&
                  !strcmp(L->guarantee, "deterministic") &&
                  strstr(js, "\"guarantee\": \"deterministic\"") && L->mc_samples > 0 &&
                  L->mc_confidence > 0.999 && strstr(js, "\"mc_samples\"") &&
                  strstr(js, "\"mc_seed\"") && strstr(js, "\"epsilon_mc\""),
              "balls-in-bins ledger %s / %s / %s", L->sampler, L->route, L->guarantee);
        dpc_trainer_free(tr);
        tr = NULL;
    }
    /* DP-SGD under balls-in-bins: the exact random-allocation route */
    base_config(&c, &mechs[0]);
    c.sampler = DPC_SAMPLER_BALLS_IN_BINS;
    CHECK_OK(dpc_trainer_new(&tr, m, ds, NULL, &c, &rng, &err), &err);
    if (tr) {
        const dpc_ledger *L = dpc_trainer_ledger(tr);
        char js[2048];
        dpc_ledger_json(L, js, sizeof js);
        CHECK(!strncmp(L->route, "balls-in-bins: random allocation", 32) && L->mc_samples == 0 &&
                  !strstr(js, "mc_samples") && L->epsilon <= c.epsilon * (1 + 1e-9),
              "dp-sgd balls-in-bins ledger %s (z %g)", L->route, L->noise_multiplier);
        double e0;
        CHECK_OK(dpc_trainer_epsilon_at(tr, 3, &e0, &err), &err);
        CHECK(e0 == L->epsilon, "progress epsilon: the whole run's (post-processing)");
        dpc_trainer_free(tr);
        tr = NULL;
    }
    /* a strategy with a negative entry under balls-in-bins: the whole run, and the ledger says
     * why there is no amplification */
    static const double negc[2] = {1.0, -0.3};
    base_config(&c, &mechs[0]);
    c.sampler = DPC_SAMPLER_BALLS_IN_BINS;
    c.mech.kind = DPC_MECH_TOEPLITZ;
    c.mech.ncoeffs = 2;
    c.mech.coeffs = negc;
    c.mech.coeffs_of_strategy = 1;
    CHECK_OK(dpc_trainer_new(&tr, m, ds, NULL, &c, &rng, &err), &err);
    if (tr) {
        const dpc_ledger *L = dpc_trainer_ledger(tr);
        CHECK(!strncmp(L->route, "whole-run", 9) && strstr(L->note, "negative entries"),
              "negative entries: route %s, note '%s'", L->route, L->note);
        dpc_trainer_free(tr);
        tr = NULL;
    }
    /* model / data mismatch */
    dpc_model *m2 = model_of("logistic", 4, 2);
    base_config(&c, &mechs[0]);
    CHECK(dpc_trainer_new(&tr, m2, ds, NULL, &c, &rng, &err) == DPC_E_INVALID &&
              strstr(err.msg, "features"), "dimension mismatch refused: %s", err.msg);
    dpc_model_free(m2);
    dpc_trainer_free(NULL);
    dpc_model_free(m);
    dpc_dataset_free(ds);
}

/* The noise multiplier has one meaning: for DP-SGD the per-step multiplier (noise std z x clip
 * on each step's sum), reported as given, with the accountant's epsilon for exactly that run.
 * The example: N = 60000, Poisson batch 500 (q = 1/120), 120 steps, z = 1, delta 1e-5;
 * dp_accounting's PLD gives about 0.632. */
static void test_noise_multiplier_meaning(void)
{
    dpc_dataset *ds = logistic_data(60000, 2, 9);
    dpc_model *m = model_of("logistic", 2, 2);
    dpc_train_config c;
    base_config(&c, &mechs[0]);
    c.batch = 500;
    c.epochs = 1;
    c.epsilon = 0;
    c.noise_multiplier = 1.0;
    c.clip = 0.5;
    c.accountant = DPC_ACCOUNTANT_PLD;
    dpc_error err = {0};
    dpc_trainer *tr = trainer(m, ds, &c, 3, &err);
    if (tr) {
        const dpc_ledger *L = dpc_trainer_ledger(tr);
        CHECK(L->noise_multiplier == 1.0, "reported z %.17g = the z given", L->noise_multiplier);
        CHECK(L->noise_std == 1.0 && L->column_norm == 1.0, "DP-SGD: std z x clip per step");
        CHECK(L->steps == 120 && fabs(L->q - 1.0 / 120) < 1e-15 && L->amplified, "the run");
        CHECK(!strcmp(L->calibration, "given") && isnan(L->epsilon_target), "calibration given");
        dpc_gauss_event ge;
        dpc_gauss_event_init(&ge);
        ge.sigma = 1.0;
        ge.sampling = DPC_SAMPLING_POISSON;
        ge.q = 1.0 / 120;
        ge.count = 120;
        dpc_event ev = {DPC_NEIGHBOR_ADD_REMOVE, 1, &ge};
        dpc_account_opts o;
        dpc_account_opts_init(&o, DPC_ACCOUNTANT_PLD);
        dpc_account_result r;
        CHECK_OK(dpc_account_epsilon(&ev, &o, 1e-5, &r, &err), &err);
        CHECK_NEAR_REL(L->epsilon, r.epsilon, 1e-12, "ledger epsilon = PLD of DP-SGD(z = 1)");
        CHECK(fabs(L->epsilon - 0.632) < 0.005, "epsilon %.4f ~ dp_accounting's 0.632",
              L->epsilon);
        dpc_trainer_free(tr);
    }
    /* a correlated mechanism: std per row of Z = z x clip x colnorm(C), z as given */
    base_config(&c, &mechs[1]);
    c.epsilon = 0;
    c.noise_multiplier = 2.0;
    dpc_dataset *small = logistic_data(100, 2, 9);
    tr = trainer(m, small, &c, 3, &err);
    if (tr) {
        const dpc_ledger *L = dpc_trainer_ledger(tr);
        CHECK(L->noise_multiplier == 2.0 && L->noise_std == 2.0 * L->column_norm,
              "nu: z %g, std %g = 2 x colnorm %g", L->noise_multiplier, L->noise_std,
              L->column_norm);
        CHECK(L->sensitivity > L->column_norm, "3 epochs: sens %g > colnorm %g", L->sensitivity,
              L->column_norm);
        dpc_trainer_free(tr);
    }
    dpc_dataset_free(small);
    dpc_dataset_free(ds);
    dpc_model_free(m);
}

/* The run decisions are the library's: defaults and refusals. */
static void test_resolve(void)
{
    dpc_dataset *ds = logistic_data(100, 3, 3);
    dpc_train_config c, r;
    dpc_error err = {0};
    base_config(&c, &mechs[0]);
    c.sampler = DPC_SAMPLER_AUTO;
    CHECK_OK(dpc_train_config_resolve(&c, ds, &r, &err), &err);
    CHECK(r.sampler == DPC_SAMPLER_POISSON, "DP-SGD: Poisson by default");
    CHECK(r.mech.steps == 3 * (100 / 20), "steps = epochs x floor(N/B): %zu", r.mech.steps);
    base_config(&c, &mechs[1]);
    c.sampler = DPC_SAMPLER_AUTO;
    CHECK_OK(dpc_train_config_resolve(&c, ds, &r, &err), &err);
    CHECK(r.sampler == DPC_SAMPLER_FIXED, "nu: fixed-order epochs by default");
    /* BSR: the optimizer's workload unless explicit; cyclic groups default to the bands */
    base_config(&c, &mechs[2]);
    c.momentum = 0.9;
    c.lr = 0.5;
    c.weight_decay = 0.1;
    CHECK_OK(dpc_train_config_resolve(&c, ds, &r, &err), &err);
    CHECK(r.mech.momentum == 0.9 && r.mech.decay == 1.0 - 0.5 * 0.1 && r.groups == 3,
          "bsr workload (%g, %g), groups %zu", r.mech.momentum, r.mech.decay, r.groups);
    c.workload_explicit = 1;
    c.mech.momentum = 0.5;
    CHECK_OK(dpc_train_config_resolve(&c, ds, &r, &err), &err);
    CHECK(r.mech.momentum == 0.5 && r.mech.decay == 1.0, "explicit workload kept");
    c.workload_explicit = 0;
    c.weight_decay = 2.0;
    CHECK(dpc_train_config_resolve(&c, ds, &r, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "weight_decay"), "lr x wd >= 1 refused: %s", err.msg);
    /* cyclic Poisson with a kind without bands needs groups */
    base_config(&c, &mechs[1]);
    c.sampler = DPC_SAMPLER_CYCLIC_POISSON;
    CHECK(dpc_train_config_resolve(&c, ds, &r, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "groups"), "groups required: %s", err.msg);
    /* epsilon and a noise multiplier together: ambiguous */
    base_config(&c, &mechs[0]);
    c.noise_multiplier = 1.0;
    CHECK(dpc_train_config_resolve(&c, ds, &r, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "noise_multiplier"), "both refused: %s", err.msg);
    /* delta >= 1/N unless forced */
    base_config(&c, &mechs[0]);
    c.delta = 0.01;
    CHECK(dpc_train_config_resolve(&c, ds, &r, &err) == DPC_E_PRIVACY &&
              !strcmp(err.field, "delta"), "delta 1/N refused: %s", err.msg);
    c.allow_large_delta = 1;
    CHECK_OK(dpc_train_config_resolve(&c, ds, &r, &err), &err);
    /* more steps than supported: the field is epochs, with the limit */
    base_config(&c, &mechs[0]);
    c.epochs = (size_t)1e12;
    CHECK(dpc_train_config_resolve(&c, ds, &r, &err) == DPC_E_RANGE &&
              !strcmp(err.field, "epochs") && strstr(err.msg, "limit"), "huge epochs: %s",
          err.msg);
    /* a mechanism parameter: nested field */
    base_config(&c, &mechs[1]);
    c.mech.nu = 1.5;
    CHECK(dpc_train_config_resolve(&c, ds, &r, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "mech.nu"), "mech.nu: %s [%s]", err.msg, err.field);
    dpc_dataset_free(ds);
}

/* BSR/BISR without bands: the library's default for the run (dpc_mech_default_bands with
 * k = epochs and the sampler's separation), the rule written out here independently. */
static void test_default_bands(void)
{
    static const struct { size_t n, k, b, want; } rule[] = {
        {240, 1, 240, 32},           /* one participation: 32 */
        {720, 3, 240, 240},          /* k > 1: the separation */
        {720, 3, 4, 16},             /* ... at least 16 */
        {10, 3, 240, 10},            /* at most n */
        {20, 1, 1, 20},              /* at most n */
        {10000000, 2, 1000, 20},     /* at most 2e8 / n */
        {100000000, 2, 1000, 16},    /* ... but never below 16 */
        {0, 1, 1, 0}};
    for (size_t i = 0; i < sizeof rule / sizeof rule[0]; i++) {
        size_t got = dpc_mech_default_bands(rule[i].n, rule[i].k, rule[i].b);
        CHECK(got == rule[i].want, "default bands (n %zu, k %zu, b %zu) = %zu, want %zu",
              rule[i].n, rule[i].k, rule[i].b, got, rule[i].want);
    }
    dpc_dataset *ds = logistic_data(2000, 3, 3); /* batch 20: 100 steps per epoch */
    static const struct {
        dpc_mech_kind kind;
        dpc_sampler_kind sampler;
        size_t epochs, want, groups;
    } run[] = {{DPC_MECH_BSR, DPC_SAMPLER_FIXED, 1, 32, 0},
               {DPC_MECH_BSR, DPC_SAMPLER_FIXED, 3, 100, 0},
               {DPC_MECH_BISR, DPC_SAMPLER_SHUFFLE, 3, 16, 0},
               {DPC_MECH_BSR, DPC_SAMPLER_POISSON, 2, 16, 0},
               {DPC_MECH_BSR, DPC_SAMPLER_CYCLIC_POISSON, 3, 100, 100}};
    for (size_t i = 0; i < sizeof run / sizeof run[0]; i++) {
        dpc_train_config c, r;
        dpc_error err = {0};
        base_config(&c, &mechs[2]);
        c.mech.kind = run[i].kind;
        c.mech.bands = 0;
        c.sampler = run[i].sampler;
        c.groups = 0;
        c.epochs = run[i].epochs;
        CHECK_OK(dpc_train_config_check(&c, ds, &err), &err);
        CHECK_OK(dpc_train_config_resolve(&c, ds, &r, &err), &err);
        CHECK(r.mech.bands == run[i].want && r.groups == run[i].groups,
              "run %zu: bands %zu (want %zu), groups %zu (want %zu)", i, r.mech.bands,
              run[i].want, r.groups, run[i].groups);
    }
    /* given bands are kept */
    dpc_train_config c, r;
    dpc_error err = {0};
    base_config(&c, &mechs[4]);
    CHECK_OK(dpc_train_config_resolve(&c, ds, &r, &err), &err);
    CHECK(r.mech.bands == 4, "given bands kept: %zu", r.mech.bands);
    dpc_dataset_free(ds);
}

/* A private run learns: logistic regression on separable synthetic data, epsilon = 8. */
static void test_learns(void)
{
    dpc_dataset *train = logistic_data(4000, 10, 5), *test = logistic_data(1000, 10, 5);
    dpc_model *m = model_of("logistic", 10, 2);
    for (size_t k = 0; k < 3; k++) {
        dpc_train_config c;
        base_config(&c, &mechs[k]);
        c.batch = 100;
        c.epochs = 5;
        c.epsilon = 8;
        c.lr = 1.0;
        c.clip = 1.0;
        dpc_error err = {0};
        dpc_rng rng;
        dpc_rng_seed(&rng, 21);
        dpc_trainer *tr = NULL;
        CHECK_OK(dpc_trainer_new(&tr, m, train, test, &c, &rng, &err), &err);
        if (!tr) continue;
        double l0, a0, l1, a1;
        CHECK_OK(dpc_trainer_evaluate(tr, test, &l0, &a0, &err), &err);
        run_all(tr);
        CHECK_OK(dpc_trainer_evaluate(tr, test, &l1, &a1, &err), &err);
        CHECK(l1 < l0 && a1 > 0.85, "%s: loss %g -> %g, accuracy %g -> %g", mechs[k].name, l0, l1,
              a0, a1);
        dpc_trainer_free(tr);
    }
    dpc_model_free(m);
    dpc_dataset_free(train);
    dpc_dataset_free(test);
}

/* A training set that carries a private release (dpc_dataset.release_z, e.g. the private mean
 * of dpc_features_center_private): the trainer composes it into the ledger (calibrated noise
 * above the bare run's, epsilon on the private side of the target), reports it (the epsilon of
 * the release alone = the Gaussian's exact GDP value, computed here), and the progress epsilon
 * at step 0 is the release's. */
static void test_pre_release(void)
{
    dpc_dataset *train = logistic_data(600, 6, 8);
    dpc_model *m = model_of("logistic", 6, 2);
    dpc_train_config c;
    base_config(&c, &mechs[2]); /* BSR, cyclic Poisson: the amplified route */
    c.accountant = DPC_ACCOUNTANT_PLD;
    dpc_error err = {0};
    dpc_trainer *bare = trainer(m, train, &c, 3, &err);
    train->release_z[0] = 7.0;
    train->n_releases = 1;
    dpc_trainer *tr = trainer(m, train, &c, 3, &err);
    if (bare && tr) {
        const dpc_ledger *L0 = dpc_trainer_ledger(bare), *L = dpc_trainer_ledger(tr);
        double want, e0;
        CHECK_OK(dpc_gdp_epsilon(1.0 / 7.0, c.delta, &want, &err), &err);
        CHECK(L0->n_pre == 0 && L->n_pre == 1 && L->pre_noise_multiplier[0] == 7.0 &&
                  fabs(L->epsilon_pre - want) <= 1e-9 * want,
              "ledger: n_pre %zu, z %g, epsilon_pre %.12g (want %.12g)", L->n_pre,
              L->pre_noise_multiplier[0], L->epsilon_pre, want);
        CHECK(L->noise_multiplier > L0->noise_multiplier && L->epsilon <= c.epsilon &&
                  L->epsilon >= c.epsilon * (1 - 1e-4),
              "z %.9g (bare %.9g), epsilon %.9g", L->noise_multiplier, L0->noise_multiplier,
              L->epsilon);
        CHECK_OK(dpc_trainer_epsilon_at(tr, 0, &e0, &err), &err);
        CHECK(fabs(e0 - want) <= 1e-9 * want, "epsilon at step 0: %g, release alone %g", e0,
              want);
        char buf[4096];
        dpc_ledger_json(L, buf, sizeof buf);
        CHECK(strstr(buf, "\"pre_noise_multipliers\": [7]") && strstr(buf, "\"epsilon_pre\": "),
              "json: %s", buf);
        dpc_ledger_json(L0, buf, sizeof buf);
        CHECK(!strstr(buf, "pre_noise"), "bare json lists pre-releases: %s", buf);
    }
    dpc_trainer_free(bare);
    dpc_trainer_free(tr);
    dpc_model_free(m);
    dpc_dataset_free(train);
}

/* The batch state is sized for the expected batch and grows for a larger Poisson batch: a
 * trainer whose state starts at one chunk (grown on the first step) gives the same run; the
 * trainer reports its memory. */
static void test_batch_growth(void)
{
    dpc_dataset *ds = logistic_data(900, 9, 4);
    dpc_model *m = model_of("mlp:7:tanh", 9, 2);
    dpc_train_config c;
    dpc_train_config_init(&c);
    c.noise_multiplier = 1.0;
    c.batch = 100;
    c.epochs = 1;
    c.chunk = 8;
    c.lr = 0.3;
    dpc_error err = {0};
    dpc_trainer *a = trainer(m, ds, &c, 5, &err), *b = trainer(m, ds, &c, 5, &err);
    if (!a || !b) return;
    CHECK(dpc_trainer_bytes(a) > 4 * dpc_model_num_params(m) * sizeof(double),
          "trainer bytes cover the slabs (%zu)", dpc_trainer_bytes(a));
    CHECK_OK(dpc__train_batch_resize(b, 1, &err), &err);
    uint64_t ha = run_all(a), hb = run_all(b);
    CHECK(ha == hb, "growing the batch state changes nothing (%016llx vs %016llx)",
          (unsigned long long)ha, (unsigned long long)hb);
    dpc_trainer_free(a);
    dpc_trainer_free(b);
    dpc_model_free(m);
    dpc_dataset_free(ds);
}

/* float32 precision: 1 vs 2 threads and a resumed run are bit-identical; the run differs from
 * double but learns as well; a double configuration refuses its checkpoint; kan is refused. */
static void test_float32(void)
{
    dpc_dataset *ds = logistic_data(400, 6, 3);
    dpc_model *m = model_of("mlp:8:tanh", 6, 2), *kan = model_of("kan:3", 6, 2);
    char path[] = "/tmp/dpcorr_ckpt_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    dpc_train_config c;
    base_config(&c, &mechs[1]);
    c.precision = DPC_PRECISION_FLOAT32;
    dpc_error err = {0};
    dpc_trainer *a = trainer(m, ds, &c, 9, &err), *x = NULL, *y = NULL, *d = NULL, *k = NULL;
    c.threads = 2;
    x = trainer(m, ds, &c, 9, &err);
    if (a && x) {
        uint64_t ha = run_all(a);
        size_t half = dpc_trainer_steps_total(x) / 2;
        for (size_t t = 0; t < half; t++) CHECK_OK(dpc_trainer_step(x, NULL, &err), &err);
        CHECK_OK(dpc_trainer_save(x, path, &err), &err);
        CHECK(run_all(x) == ha, "float32: 2 threads give the 1-thread bits");
        c.threads = 1;
        y = trainer(m, ds, &c, 9, &err);
        CHECK_OK(dpc_trainer_resume(y, path, &err), &err);
        CHECK(y && run_all(y) == ha, "float32: the resumed run is bit-identical");
        const double *th = dpc_trainer_params(a);
        int exact = 1;
        for (size_t p = 0; p < dpc_model_num_params(m); p++) exact &= th[p] == (double)(float)th[p];
        CHECK(exact, "float32: the parameters are float values");
        c.precision = DPC_PRECISION_DOUBLE;
        d = trainer(m, ds, &c, 9, &err);
        CHECK(d && dpc_trainer_resume(d, path, &err) == DPC_E_STATE,
              "a double run refuses a float32 checkpoint: %s", err.msg);
        dpc_trainer_free(d);
        d = trainer(m, ds, &c, 9, &err);
        CHECK(d && run_all(d) != ha, "float32 differs from double");
        double la, aa, ld, ad;
        CHECK_OK(dpc_trainer_evaluate(a, ds, &la, &aa, &err), &err);
        CHECK_OK(dpc_trainer_evaluate(d, ds, &ld, &ad, &err), &err);
        CHECK(fabs(la - ld) < 1e-3 * fabs(ld) && fabs(aa - ad) < 0.01,
              "float32 learns as double does (loss %g vs %g, accuracy %g vs %g)", la, ld, aa, ad);
    }
    c.precision = DPC_PRECISION_FLOAT32;
    dpc_rng rng;
    dpc_rng_seed(&rng, 1);
    CHECK(dpc_trainer_new(&k, kan, ds, NULL, &c, &rng, &err) == DPC_E_UNSUPPORTED &&
              !strcmp(err.field, "precision") && !k, "kan refuses float32: %s", err.msg);
    c.precision = (dpc_precision)5;
    CHECK(dpc_train_config_check(&c, ds, &err) == DPC_E_INVALID && !strcmp(err.field, "precision"),
          "unknown precision: %s", err.msg);
    unlink(path);
    dpc_trainer_free(a);
    dpc_trainer_free(x);
    dpc_trainer_free(y);
    dpc_trainer_free(d);
    dpc_model_free(m);
    dpc_model_free(kan);
    dpc_dataset_free(ds);
}

int main(void)
{
    test_calibration_progress();
    test_pre_release();
    test_update_recomputed();
    test_threads_resume();
    test_secure_resume();
    test_refusals();
    test_noise_multiplier_meaning();
    test_resolve();
    test_default_bands();
    test_learns();
    test_batch_growth();
    test_float32();
    return TEST_SUMMARY();
}
