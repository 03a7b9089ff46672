/* test_audit_run.c — audited training runs (dpc_audit_run) on small synthetic data with
 * white-box canaries:
 *   - the trainer's canary hook: a gradient canary's released trajectory is exactly
 *     clip x (its participation) + the mechanism's noise from an independent generator, an
 *     excluded canary contributes nothing, included input canaries are ordinary examples;
 *   - for identity (DP-SGD), BLT, nu-DP-FTRL, BSR, tree and lambda-CGD, under fixed-order,
 *     Poisson, cyclic-Poisson and balls-in-bins sampling, the lower bound never exceeds the
 *     claimed epsilon;
 *   - with weak privacy (noise multiplier 0.2) the bound is >= 2 (the audit is not vacuous);
 *   - black-box canaries run and stay below the claim;
 *   - dpc_audit_resolve (the dry run) resolves what dpc_audit_run runs, on the training set with
 *     the canary slots, and refuses what the run refuses.
 * The data: feature 0 carries the signal, the other features are 0, so the canary coordinates
 * (weights of the zero features) receive no gradient from the real data: the strongest audit. */
#include "dpcorr/audit.h"
#include "harness.h"

#include <stdlib.h>
#include <string.h>

static dpc_dataset *synth(size_t n, size_t d, size_t K, uint64_t seed)
{
    dpc_dataset *ds = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_dataset_new(&ds, n, d, K, &err), &err);
    dpc_rng rng;
    dpc_rng_seed(&rng, seed);
    dpc_rng_stream s = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_TEST, 21));
    for (size_t i = 0; i < n; i++) {
        ds->y[i] = (double)dpc_rng_below(&s, 0, i, K);
        ds->x[i * d] = dpc_rng_gaussian(&s, 1, i) + 0.5 * ds->y[i];
    }
    snprintf(ds->source, sizeof ds->source, "synthetic audit data");
    return ds;
}

static dpc_model *softmax(size_t d, size_t K)
{
    dpc_model_config mc;
    dpc_model *m = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_model_parse(&mc, "softmax", d, K, &err), &err);
    CHECK_OK(dpc_model_new(&m, &mc, &err), &err);
    return m;
}

/* ---- the hook ------------------------------------------------------------------------------ */

typedef struct dirac {
    const size_t *coord;
    double clip;
} dirac;

static void add_dirac(void *ctx, size_t c, double *sum)
{
    const dirac *dc = ctx;
    sum[dc->coord[c]] += dc->clip;
}

/* A run with gradient canaries on zero-feature coordinates: y_t = clip x_t + sigma (B Z)_t at
 * every canary coordinate, with x from dpc_sampler_opportunities (fixed order: exact) and
 * (B Z)_t from an independent dpc_noise over that coordinate; in double to 1e-9, and in float32
 * precision (the canary gradients land in the float sum) to float rounding. */
static void test_hook_trajectory(void)
{
    const size_t Nr = 60, m = 12, d = 8, K = 3;
    dpc_dataset *real = synth(Nr, d, K, 3), *ds = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_dataset_new(&ds, Nr + m, d, K, &err), &err);
    memcpy(ds->x, real->x, Nr * d * sizeof(double));
    memcpy(ds->y, real->y, Nr * sizeof(double));
    dpc_model *model = softmax(d, K);
    size_t coord[12];
    unsigned char inc[12];
    for (size_t c = 0; c < m; c++) {
        coord[c] = (c % K) * d + 1 + c / K; /* W[k][j], j >= 1: a zero feature */
        inc[c] = (unsigned char)(c % 3 != 0);
    }
    dirac dc = {coord, 0.8};
    dpc_train_canaries hook = {Nr, m, inc, add_dirac, &dc};
    const dpc_mech_kind kinds[] = {DPC_MECH_NU, DPC_MECH_BSR, DPC_MECH_TREE, DPC_MECH_NU};
    for (size_t kk = 0; kk < 4; kk++) {
        int f32 = kk == 3;
        dpc_train_config c;
        dpc_train_config_init(&c);
        c.mech.kind = kinds[kk];
        c.mech.nu = 0.05;
        c.mech.bands = 3;
        c.sampler = DPC_SAMPLER_FIXED;
        c.batch = 9;
        c.epochs = 3;
        c.noise_multiplier = 1.5;
        c.allow_large_delta = 1;
        c.delta = 1e-3;
        c.clip = 0.8;
        c.lr = 0.3;
        c.momentum = 0.5;
        c.weight_decay = 0.01;
        c.schedule = f32 ? DPC_LR_CONSTANT : DPC_LR_COSINE; /* (unrolling divides by lr) */
        c.precision = f32 ? DPC_PRECISION_FLOAT32 : DPC_PRECISION_DOUBLE;
        c.canaries = &hook;
        dpc_rng rng;
        dpc_rng_seed(&rng, 41 + kk);
        dpc_trainer *tr = NULL;
        CHECK_OK(dpc_trainer_new(&tr, model, ds, NULL, &c, &rng, &err), &err);
        size_t n = dpc_trainer_steps_total(tr);
        double *th = malloc((n + 1) * m * sizeof *th), *lr = malloc(n * sizeof *lr),
               *y = malloc(n * m * sizeof *y);
        for (size_t t = 0; t <= n; t++) {
            for (size_t i = 0; i < m; i++) th[t * m + i] = dpc_trainer_params(tr)[coord[i]];
            dpc_step_info info;
            if (t < n) CHECK_OK(dpc_trainer_step(tr, &info, &err), &err);
            if (t < n) lr[t] = info.lr;
        }
        const dpc_ledger *L = dpc_trainer_ledger(tr);
        CHECK_OK(dpc_audit_unroll(th, n, m, lr, c.momentum, c.weight_decay, L->expected_batch, y,
                                  &err), &err);
        dpc_mech *mech = NULL;
        CHECK_OK(dpc_mech_new(&mech, &dpc_trainer_config(tr)->mech, &err), &err);
        dpc_rng_stream ns = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_NOISE, 0));
        double worst = 0, sigma = L->noise_std * c.clip;
        size_t *steps = malloc(n * sizeof *steps), cnt, participations = 0;
        for (size_t i = 0; i < m; i++) {
            dpc_noise *g = NULL;
            dpc_noise_config nc = {coord[i], 1, DPC_NOISE_AUTO, 0, DPC_ISA_AUTO};
            CHECK_OK(dpc_noise_new(&g, mech, &ns, &nc, &err), &err);
            int certain;
            CHECK_OK(dpc_sampler_opportunities(dpc_trainer_sampler(tr), Nr + i, steps, &cnt, &certain,
                                               &err), &err);
            CHECK(certain, "fixed order: public participation");
            size_t k = 0;
            for (size_t t = 0; t < n; t++) {
                double w;
                CHECK_OK(dpc_noise_next(g, &w, &err), &err);
                int here = k < cnt && steps[k] == t;
                k += here;
                double expect = sigma * w + (here && inc[i] ? c.clip : 0.0);
                participations += here && inc[i];
                worst = fmax(worst, fabs(y[t * m + i] - expect));
            }
            dpc_noise_free(g);
        }
        CHECK(worst < (f32 ? 1e-4 : 1e-9), "%s%s: trajectory = clip x + noise (error %g)",
              dpc_mech_kind_name(kinds[kk]), f32 ? " float32" : "", worst);
        CHECK(participations >= 6, "canaries took part (%zu)", participations);
        free(th); free(lr); free(y); free(steps);
        dpc_mech_free(mech);
        dpc_trainer_free(tr);
    }
    dpc_model_free(model);
    dpc_dataset_free(real);
    dpc_dataset_free(ds);
}

/* Included input canaries are ordinary examples: the same parameters bit for bit as no hook. */
static void test_hook_input_identity(void)
{
    const size_t N = 80, d = 4, K = 2;
    dpc_dataset *ds = synth(N, d, K, 9);
    dpc_model *model = softmax(d, K);
    unsigned char inc[20];
    memset(inc, 1, sizeof inc);
    dpc_train_canaries hook = {N - 20, 20, inc, NULL, NULL};
    uint64_t h[2];
    for (int with = 0; with < 2; with++) {
        dpc_train_config c;
        dpc_train_config_init(&c);
        c.sampler = DPC_SAMPLER_POISSON;
        c.batch = 10;
        c.epochs = 2;
        c.noise_multiplier = 1.0;
        c.allow_large_delta = 1;
        c.canaries = with ? &hook : NULL;
        dpc_rng rng;
        dpc_rng_seed(&rng, 5);
        dpc_trainer *tr = NULL;
        dpc_error err = {0};
        CHECK_OK(dpc_trainer_new(&tr, model, ds, NULL, &c, &rng, &err), &err);
        while (dpc_trainer_steps_done(tr) < dpc_trainer_steps_total(tr))
            CHECK_OK(dpc_trainer_step(tr, NULL, &err), &err);
        h[with] = dpc_trainer_params_hash(tr);
        dpc_trainer_free(tr);
    }
    CHECK(h[0] == h[1], "included input canaries change nothing");
    dpc_train_config c;
    dpc_train_config_init(&c);
    c.noise_multiplier = 1.0;
    c.allow_large_delta = 1;
    c.batch = 10;
    dpc_train_canaries bad = {N - 5, 20, inc, NULL, NULL};
    c.canaries = &bad;
    dpc_error err = {0};
    CHECK(dpc_train_config_check(&c, ds, &err) == DPC_E_INVALID && !strcmp(err.field, "canaries"),
          "slots beyond the data refused: %s", err.msg);
    dpc_model_free(model);
    dpc_dataset_free(ds);
}

/* ---- audits -------------------------------------------------------------------------------- */

typedef struct acase {
    const char *name;
    dpc_mech_kind kind;
    dpc_sampler_kind sampler;
    size_t bands, groups;
} acase;

static const double blt_theta[2] = {0.95, 0.6}, blt_omega[2] = {0.25, 0.15};

/* audit()'s progress callback and the status it expects (test_cancel; DPC_OK otherwise). */
static dpc_audit_progress_fn g_progress;
static void *g_progress_ctx;
static dpc_status g_expect;
static dpc_error g_err;

/* One audit: m gradient canaries on 200 real examples (softmax, 10 classes, 101 features). */
static dpc_audit_result audit(const acase *a, double epsilon, double z, size_t epochs, size_t m,
                              dpc_audit_canary kind)
{
    const size_t Nr = 200, d = 101, K = 10;
    dpc_dataset *ds = synth(Nr, d, K, 12);
    dpc_model *model = softmax(d, K);
    dpc_train_config c;
    dpc_train_config_init(&c);
    c.mech.kind = a->kind;
    c.mech.nu = 0.02;
    c.mech.lambda = 0.8;
    c.mech.bands = a->bands;
    c.mech.nbuf = a->kind == DPC_MECH_BLT ? 2 : 0;
    c.mech.theta = blt_theta;
    c.mech.omega = blt_omega;
    c.sampler = a->sampler;
    c.groups = a->groups;
    c.batch = (Nr + m) / 10;
    c.epochs = epochs;
    c.epsilon = epsilon;
    c.noise_multiplier = z;
    c.delta = 1e-5;
    c.lr = 0.2;
    if (z > 0) c.accountant = DPC_ACCOUNTANT_RDP; /* weak privacy: a huge claim; RDP is quicker */
    dpc_audit_config ac;
    dpc_audit_config_init(&ac);
    ac.canaries = m;
    ac.canary = kind;
    dpc_rng rng;
    dpc_rng_seed(&rng, 2024);
    dpc_audit_result r;
    dpc_error err = {0};
    memset(&r, 0, sizeof r);
    dpc_status st = dpc_audit_run(&ac, &c, model, ds, NULL, &rng, g_progress, g_progress_ctx, &r, &err);
    if (g_expect == DPC_OK) CHECK_OK(st, &err);
    else CHECK(st == g_expect, "status %d, want %d: %s", (int)st, (int)g_expect, err.msg);
    g_err = err;
    dpc_model_free(model);
    dpc_dataset_free(ds);
    return r;
}

/* A progress callback that stops the audit's training after its third step. */
static int stop_at_three(void *ctx, const dpc_step_info *info, size_t steps)
{
    size_t *calls = ctx;
    (void)info;
    (void)steps;
    return ++*calls == 3;
}

static void test_cancel(void)
{
    const acase a = {"dp-sgd fixed", DPC_MECH_IDENTITY, DPC_SAMPLER_FIXED, 0, 0};
    size_t calls = 0;
    g_progress = stop_at_three, g_progress_ctx = &calls, g_expect = DPC_E_STATE;
    (void)audit(&a, 4.0, 0.0, 4, 50, DPC_AUDIT_GRADIENT);
    CHECK(calls == 3, "progress called %zu times before the stop", calls);
    CHECK(strstr(g_err.msg, "cancelled at step 3") != NULL, "cancel message: %s", g_err.msg);
    g_progress = NULL, g_progress_ctx = NULL, g_expect = DPC_OK;
}

static void test_valid(void)
{
    const acase cases[] = {
        {"dp-sgd poisson", DPC_MECH_IDENTITY, DPC_SAMPLER_POISSON, 0, 0},
        {"dp-sgd fixed", DPC_MECH_IDENTITY, DPC_SAMPLER_FIXED, 0, 0},
        {"blt fixed", DPC_MECH_BLT, DPC_SAMPLER_FIXED, 0, 0},
        {"nu fixed", DPC_MECH_NU, DPC_SAMPLER_FIXED, 0, 0},
        {"bsr fixed", DPC_MECH_BSR, DPC_SAMPLER_FIXED, 4, 0},
        {"bsr cyclic-poisson", DPC_MECH_BSR, DPC_SAMPLER_CYCLIC_POISSON, 4, 0},
        {"tree fixed", DPC_MECH_TREE, DPC_SAMPLER_FIXED, 0, 0},
        {"lcgd fixed", DPC_MECH_LCGD, DPC_SAMPLER_FIXED, 0, 0},
        {"dp-sgd balls-in-bins", DPC_MECH_IDENTITY, DPC_SAMPLER_BALLS_IN_BINS, 0, 0},
        {"bsr balls-in-bins", DPC_MECH_BSR, DPC_SAMPLER_BALLS_IN_BINS, 4, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dpc_audit_result r = audit(&cases[i], 4.0, 0.0, 4, 1000, DPC_AUDIT_GRADIENT);
        CHECK(r.bound.epsilon <= r.ledger.epsilon, "%s: lower bound %g > claimed %g", cases[i].name,
              r.bound.epsilon, r.ledger.epsilon);
        CHECK(r.canaries == 1000 && r.included > 400 && r.included < 600 && r.examples == 1200,
              "%s: canaries %zu included %zu examples %zu", cases[i].name, r.canaries, r.included,
              r.examples);
        /* public participation: the best canary faces the whole-run Gaussian mechanism the
         * accountant bounds (mu = sensitivity / noise); the tree's released sums reveal less */
        const dpc_ledger *L = &r.ledger;
        if (!isnan(r.mu_max) && cases[i].kind != DPC_MECH_TREE)
            CHECK_NEAR_REL(r.mu_max, L->sensitivity / L->noise_std, 1e-9, "%s: mu", cases[i].name);
        if (!isnan(r.mu_max))
            CHECK(r.mu_max <= L->sensitivity / L->noise_std * (1 + 1e-9), "%s: mu %g > %g",
                  cases[i].name, r.mu_max, L->sensitivity / L->noise_std);
        printf("  %-20s claimed eps %.3f  lower bound %.3f  (%zu/%zu correct, k+ %zu k- %zu%s)\n",
               cases[i].name, r.ledger.epsilon, r.bound.epsilon, r.bound.correct, r.bound.guesses,
               r.bound.k_plus, r.bound.k_minus, isnan(r.mu_max) ? "" : ", public participation");
        dpc_audit_result_free(&r);
    }
}

static void test_weak_privacy(void)
{
    const acase cases[] = {
        {"dp-sgd poisson", DPC_MECH_IDENTITY, DPC_SAMPLER_POISSON, 0, 0},
        {"nu fixed", DPC_MECH_NU, DPC_SAMPLER_FIXED, 0, 0},
        {"bsr cyclic-poisson", DPC_MECH_BSR, DPC_SAMPLER_CYCLIC_POISSON, 4, 0},
        {"dp-sgd balls-in-bins", DPC_MECH_IDENTITY, DPC_SAMPLER_BALLS_IN_BINS, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dpc_audit_result r = audit(&cases[i], 0.0, 0.2, 4, 1000, DPC_AUDIT_GRADIENT);
        CHECK(r.bound.epsilon >= 2.0, "%s: weak privacy bound %g < 2", cases[i].name,
              r.bound.epsilon);
        CHECK(r.bound.epsilon <= r.ledger.epsilon, "%s: %g > claimed %g", cases[i].name,
              r.bound.epsilon, r.ledger.epsilon);
        printf("  %-20s noise multiplier 0.2: claimed eps %.1f  lower bound %.3f\n", cases[i].name,
               r.ledger.epsilon, r.bound.epsilon);
        dpc_audit_result_free(&r);
    }
}

static void test_blackbox(void)
{
    const acase a = {"dp-sgd poisson", DPC_MECH_IDENTITY, DPC_SAMPLER_POISSON, 0, 0};
    for (int k = 1; k <= 2; k++) {
        dpc_audit_result r = audit(&a, 2.0, 0.0, 2, 100, (dpc_audit_canary)k);
        CHECK(r.bound.epsilon <= r.ledger.epsilon && isnan(r.mu_max) && r.canaries == 100,
              "%s canaries: bound %g vs %g", dpc_audit_canary_name((dpc_audit_canary)k),
              r.bound.epsilon, r.ledger.epsilon);
        CHECK(strstr(r.statistic, "black-box") != NULL, "black-box statistic named");
        dpc_audit_result_free(&r);
    }
}

static void test_refusals(void)
{
    dpc_dataset *ds = synth(50, 3, 2, 1);
    dpc_model *model = softmax(3, 2);
    dpc_train_config c;
    dpc_train_config_init(&c);
    c.noise_multiplier = 1.0;
    c.allow_large_delta = 1;
    c.batch = 10;
    dpc_audit_config ac;
    dpc_audit_config_init(&ac);
    ac.canaries = 100; /* > the 8 parameters */
    dpc_rng rng;
    dpc_rng_seed(&rng, 1);
    dpc_audit_result r;
    dpc_error err = {0};
    CHECK(dpc_audit_run(&ac, &c, model, ds, NULL, &rng, NULL, NULL, &r, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "canaries") && !r.scores, "too many gradient canaries: %s", err.msg);
    unsigned char inc[1] = {1};
    dpc_train_canaries hook = {0, 1, inc, NULL, NULL};
    c.canaries = &hook;
    ac.canaries = 4;
    CHECK(dpc_audit_run(&ac, &c, model, ds, NULL, &rng, NULL, NULL, &r, &err) == DPC_E_INVALID,
          "a preset hook refused");
    dpc_model_free(model);
    dpc_dataset_free(ds);
}

/* The resolved configuration of a dry run against the trainer's own resolution of a training
 * set of the same size built by hand, and against the run itself (steps, examples). */
static void test_resolve(void)
{
    const size_t Nr = 120, d = 21, K = 4, m = 40;
    dpc_dataset *ds = synth(Nr, d, K, 5);
    dpc_model *model = softmax(d, K); /* 88 parameters */
    dpc_rng rng;
    dpc_rng_seed(&rng, 3);
    dpc_error err = {0};
    const dpc_mech_kind kinds[] = {DPC_MECH_IDENTITY, DPC_MECH_BSR, DPC_MECH_NU};
    const dpc_sampler_kind samplers[] = {DPC_SAMPLER_AUTO, DPC_SAMPLER_CYCLIC_POISSON,
                                         DPC_SAMPLER_FIXED};
    for (size_t k = 0; k < 3; k++) {
        for (int canary = 0; canary <= 1; canary++) {
            dpc_train_config c;
            dpc_train_config_init(&c);
            c.mech.kind = kinds[k];
            c.mech.bands = 4;
            c.mech.nu = 0.05;
            c.sampler = samplers[k];
            c.batch = 16;
            c.epochs = 3;
            c.noise_multiplier = 1.0;
            c.accountant = DPC_ACCOUNTANT_RDP;
            c.allow_large_delta = 1;
            dpc_audit_config ac;
            dpc_audit_config_init(&ac);
            ac.canaries = m;
            ac.canary = canary ? DPC_AUDIT_MISLABEL : DPC_AUDIT_GRADIENT;
            dpc_train_config got, want;
            size_t examples = 0;
            CHECK_OK(dpc_audit_resolve(&ac, &c, model, ds, &rng, &got, &examples, &err), &err);
            size_t n_run = canary ? Nr : Nr + m; /* mislabel canaries come from the real data */
            dpc_dataset *same = NULL;
            CHECK_OK(dpc_dataset_new(&same, n_run, d, K, &err), &err);
            CHECK_OK(dpc_train_config_resolve(&c, same, &want, &err), &err);
            CHECK(examples == n_run && got.sampler == want.sampler && got.groups == want.groups &&
                      got.batch == want.batch && got.epochs == want.epochs &&
                      got.mech.steps == want.mech.steps && got.mech.bands == want.mech.bands,
                  "kind %d canary %d: examples %zu, sampler %d/%d, groups %zu/%zu, steps %zu/%zu",
                  (int)kinds[k], canary, examples, (int)got.sampler, (int)want.sampler, got.groups,
                  want.groups, got.mech.steps, want.mech.steps);
            dpc_audit_result r;
            CHECK_OK(dpc_audit_run(&ac, &c, model, ds, NULL, &rng, NULL, NULL, &r, &err), &err);
            CHECK(r.examples == examples && r.ledger.steps == got.mech.steps,
                  "kind %d: the run has %zu examples, %zu steps; the dry run %zu, %zu",
                  (int)kinds[k], r.examples, r.ledger.steps, examples, got.mech.steps);
            dpc_audit_result_free(&r);
            dpc_dataset_free(same);
        }
    }
    /* what the run refuses, the dry run refuses */
    dpc_train_config c, out;
    dpc_train_config_init(&c);
    c.noise_multiplier = 1.0;
    c.batch = 16;
    dpc_audit_config ac;
    dpc_audit_config_init(&ac);
    size_t examples;
    ac.canaries = 89; /* one more than the parameters */
    CHECK(dpc_audit_resolve(&ac, &c, model, ds, &rng, &out, &examples, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "canaries"), "too many gradient canaries: %s", err.msg);
    ac.canaries = Nr;
    ac.canary = DPC_AUDIT_MISLABEL;
    CHECK(dpc_audit_resolve(&ac, &c, model, ds, &rng, &out, &examples, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "canaries"), "mislabel canaries >= N: %s", err.msg);
    ac.canaries = 10;
    ac.confidence = 1.0;
    CHECK(dpc_audit_resolve(&ac, &c, model, ds, &rng, &out, &examples, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "confidence"), "confidence 1: %s", err.msg);
    ac.confidence = 0.95;
    c.delta = 0.5; /* >= 1/N without allow_large_delta: the trainer's own refusal */
    CHECK(dpc_audit_resolve(&ac, &c, model, ds, &rng, &out, &examples, &err) != DPC_OK &&
              !strcmp(err.field, "delta"), "the trainer's refusal: %s", err.msg);
    CHECK(dpc_audit_resolve(&ac, &c, model, ds, &rng, NULL, &examples, &err) == DPC_E_INVALID,
          "NULL out refused");
    dpc_model_free(model);
    dpc_dataset_free(ds);
}

int main(void)
{
    test_hook_trajectory();
    test_hook_input_identity();
    test_valid();
    test_weak_privacy();
    test_blackbox();
    test_refusals();
    test_resolve();
    test_cancel();
    return TEST_SUMMARY();
}
