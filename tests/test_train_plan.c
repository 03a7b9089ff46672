/* test_train_plan.c — the privacy plan of a run without a model (dpcorr/train.h): the same
 * ledger, sampler, mechanism and per-step epsilon as dpc_trainer_new for the same configuration;
 * the documented front-end recipe (plan sampler + clipped sum + noise_scale x plan noise, over the
 * expected batch) reproduces the trainer's parameters bit for bit; refusals name the parameter. */
#include "dpcorr/strategy.h"
#include "dpcorr/train.h"
#include "harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct pcase {
    const char *name;
    dpc_mech_kind kind;
    dpc_sampler_kind sampler;
    double nu;
    size_t bands;
    double noise_multiplier; /* 0: calibrated to epsilon */
} pcase;

static const pcase cases[] = {
    {"dp-sgd auto (poisson)", DPC_MECH_IDENTITY, DPC_SAMPLER_AUTO, 0, 0, 0},
    {"nu auto (fixed)", DPC_MECH_NU, DPC_SAMPLER_AUTO, 0.05, 0, 0},
    {"bsr cyclic-poisson", DPC_MECH_BSR, DPC_SAMPLER_CYCLIC_POISSON, 0, 3, 0},
    {"tree shuffle, given z", DPC_MECH_TREE, DPC_SAMPLER_SHUFFLE, 0, 0, 1.5},
    {"dp-sgd poisson, given z", DPC_MECH_IDENTITY, DPC_SAMPLER_POISSON, 0, 0, 1.1},
    {"nu poisson, given z (best route)", DPC_MECH_NU, DPC_SAMPLER_POISSON, 0.05, 0, 2.0},
};

static void config_of(dpc_train_config *c, const pcase *pc)
{
    dpc_train_config_init(c);
    c->mech.kind = pc->kind;
    c->mech.nu = pc->nu;
    c->mech.bands = pc->bands;
    c->sampler = pc->sampler;
    c->batch = 20;
    c->epochs = 3;
    c->epsilon = pc->noise_multiplier > 0 ? 0.0 : 4.0;
    c->noise_multiplier = pc->noise_multiplier;
    c->delta = 1e-5;
    c->clip = 0.5;
    c->lr = 0.3;
    c->momentum = 0.5;
    c->accountant = DPC_ACCOUNTANT_RDP; /* fast; the route choice is the trainer's either way */
}

static dpc_dataset *data(size_t n, size_t d)
{
    dpc_rng rng;
    dpc_rng_seed(&rng, 2);
    dpc_dataset *ds = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_data_synth_logistic(&ds, &rng, 0, n, d, 0.1, 0.0, NULL, &err), &err);
    return ds;
}

/* Ledger, resolved configuration and per-step epsilon equal the trainer's. */
static void test_same_as_trainer(void)
{
    dpc_dataset *ds = data(150, 4);
    dpc_model_config mc;
    dpc_model *m = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_model_parse(&mc, "logistic", 4, 2, &err), &err);
    CHECK_OK(dpc_model_new(&m, &mc, &err), &err);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const pcase *pc = &cases[k];
        dpc_train_config c;
        config_of(&c, pc);
        dpc_rng rng;
        dpc_rng_seed(&rng, 5);
        dpc_trainer *tr = NULL;
        dpc_train_plan *p = NULL;
        CHECK_OK(dpc_trainer_new(&tr, m, ds, NULL, &c, &rng, &err), &err);
        CHECK_OK(dpc_train_plan_new(&p, &c, ds->n, &rng, &err), &err);
        if (!tr || !p) {
            dpc_trainer_free(tr);
            dpc_train_plan_free(p);
            continue;
        }
        char a[2048], b[2048];
        CHECK(dpc_ledger_json(dpc_trainer_ledger(tr), a, sizeof a) < sizeof a, "json fits");
        CHECK(dpc_ledger_json(dpc_train_plan_ledger(p), b, sizeof b) < sizeof b, "json fits");
        CHECK(!strcmp(a, b), "%s: ledgers differ:\n  trainer %s\n  plan    %s", pc->name, a, b);
        CHECK(!memcmp(dpc_trainer_config(tr), dpc_train_plan_config(p), sizeof c),
              "%s: resolved configurations differ", pc->name);
        const dpc_ledger *L = dpc_train_plan_ledger(p);
        CHECK(dpc_train_plan_noise_scale(p) == L->noise_std * c.clip,
              "%s: noise scale = clip x noise std", pc->name);
        CHECK(dpc_mech_steps(dpc_train_plan_mech(p)) == dpc_trainer_steps_total(tr),
              "%s: the mechanism has n steps", pc->name);
        size_t n = L->steps;
        size_t probes[] = {0, 1, n / 2, n - 1, n};
        for (size_t i = 0; i < 5; i++) {
            double e1 = NAN, e2 = NAN;
            CHECK_OK(dpc_trainer_epsilon_at(tr, probes[i], &e1, &err), &err);
            CHECK_OK(dpc_train_plan_epsilon_at(p, probes[i], &e2, &err), &err);
            CHECK(e1 == e2, "%s: epsilon at %zu: trainer %.17g, plan %.17g", pc->name, probes[i],
                  e1, e2);
        }
        dpc_trainer_free(tr);
        dpc_train_plan_free(p);
    }
    dpc_model_free(m);
    dpc_dataset_free(ds);
}

/* The documented recipe, run by hand from the plan, gives the trainer's parameters exactly
 * (momentum 0.5: the heavy-ball update of train.h on h_t). */
static void test_recipe_bit_identical(void)
{
    size_t d = 4;
    dpc_dataset *ds = data(120, d);
    dpc_model_config mc;
    dpc_model *m = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_model_parse(&mc, "logistic", d, 2, &err), &err);
    CHECK_OK(dpc_model_new(&m, &mc, &err), &err);
    size_t P = dpc_model_num_params(m);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const pcase *pc = &cases[k];
        dpc_train_config c;
        config_of(&c, pc);
        dpc_rng rng;
        dpc_rng_seed(&rng, 9);
        dpc_trainer *tr = NULL;
        dpc_train_plan *p = NULL;
        CHECK_OK(dpc_trainer_new(&tr, m, ds, NULL, &c, &rng, &err), &err);
        CHECK_OK(dpc_train_plan_new(&p, &c, ds->n, &rng, &err), &err);
        if (!tr || !p) {
            dpc_trainer_free(tr);
            dpc_train_plan_free(p);
            continue;
        }
        const dpc_ledger *L = dpc_train_plan_ledger(p);
        const dpc_sampler *s = dpc_train_plan_sampler(p);
        dpc_rng_stream ns = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_NOISE, 0));
        dpc_noise_config nc = {0, P, DPC_NOISE_AUTO, 0, DPC_ISA_AUTO};
        dpc_noise *gen = NULL;
        CHECK_OK(dpc_noise_new(&gen, dpc_train_plan_mech(p), &ns, &nc, &err), &err);
        double *theta = calloc(P, sizeof *theta), *v = calloc(P, sizeof *v),
               *g = malloc(P * sizeof *g), *w = malloc(P * sizeof *w),
               *X = malloc(ds->n * d * sizeof *X), *y = malloc(ds->n * sizeof *y);
        size_t *idx = malloc(dpc_sampler_max_batch(s) * sizeof *idx), cnt;
        memcpy(theta, dpc_trainer_params(tr), P * sizeof *theta);
        double scale = dpc_train_plan_noise_scale(p), inv_b = 1.0 / L->expected_batch;
        int same = 1;
        for (size_t t = 0; t < L->steps && same; t++) {
            CHECK_OK(dpc_sampler_batch(s, t, idx, &cnt, &err), &err);
            for (size_t j = 0; j < cnt; j++) {
                memcpy(X + j * d, ds->x + idx[j] * d, d * sizeof *X);
                y[j] = ds->y[idx[j]];
            }
            memset(g, 0, P * sizeof *g);
            /* the trainer sums chunks of 32 (its default) in chunk order */
            for (size_t c0 = 0; c0 < cnt; c0 += c.chunk) {
                size_t mcount = cnt - c0 < c.chunk ? cnt - c0 : c.chunk;
                double S[16] = {0};
                CHECK_OK(dpc_model_clipped_sum_naive(m, theta, X + c0 * d, y + c0, mcount,
                                                     c.clip, S, NULL, NULL, &err),
                         &err);
                for (size_t q = 0; q < P; q++) g[q] = g[q] + S[q];
            }
            CHECK_OK(dpc_noise_next(gen, w, &err), &err);
            for (size_t q = 0; q < P; q++) {
                double h = (g[q] + scale * w[q]) * inv_b;
                v[q] = c.momentum * v[q] + h;
                theta[q] = theta[q] - c.lr * v[q];
            }
            CHECK_OK(dpc_trainer_step(tr, NULL, &err), &err);
            const double *th = dpc_trainer_params(tr);
            double maxdev = 0;
            for (size_t q = 0; q < P; q++) {
                double dev = fabs(th[q] - theta[q]) / (1 + fabs(th[q]));
                if (dev > maxdev) maxdev = dev;
            }
            same = maxdev < 1e-13;
            CHECK(same, "%s: step %zu deviates by %g", pc->name, t, maxdev);
        }
        free(theta); free(v); free(g); free(w); free(X); free(y); free(idx);
        dpc_noise_free(gen);
        dpc_trainer_free(tr);
        dpc_train_plan_free(p);
    }
    dpc_model_free(m);
    dpc_dataset_free(ds);
}

static void test_refusals(void)
{
    dpc_train_config c;
    config_of(&c, &cases[0]);
    dpc_rng rng;
    dpc_rng_seed(&rng, 1);
    dpc_error err = {0};
    dpc_train_plan *p = (dpc_train_plan *)&err; /* must be reset to NULL on failure */
    CHECK(dpc_train_plan_new(&p, &c, 0, &rng, &err) == DPC_E_INVALID && p == NULL &&
              !strcmp(err.field, "n_examples"),
          "n_examples 0 refused: %s", err.msg);
    CHECK(dpc_train_plan_new(&p, &c, 100, NULL, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "rng"),
          "NULL rng refused: %s", err.msg);
    CHECK(dpc_train_plan_new(NULL, &c, 100, &rng, &err) == DPC_E_INVALID, "NULL out refused");
    c.batch = 101;
    CHECK(dpc_train_plan_new(&p, &c, 100, &rng, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "batch"),
          "batch > N refused: %s", err.msg);
    config_of(&c, &cases[0]);
    c.delta = 0.02; /* >= 1/N */
    CHECK(dpc_train_plan_new(&p, &c, 100, &rng, &err) == DPC_E_PRIVACY &&
              !strcmp(err.field, "delta") && p == NULL,
          "delta >= 1/N refused: %s", err.msg);
    config_of(&c, &cases[1]);
    c.mech.nu = 1.5;
    CHECK(dpc_train_plan_new(&p, &c, 100, &rng, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "mech.nu"),
          "bad mechanism parameter refused as mech.nu: %s (field %s)", err.msg, err.field);
    config_of(&c, &cases[0]);
    c.accountant = DPC_ACCOUNTANT_GDP; /* cannot account Poisson amplification */
    CHECK(dpc_train_plan_new(&p, &c, 100, &rng, &err) == DPC_E_UNSUPPORTED &&
              !strcmp(err.field, "accountant"),
          "gdp for an amplified run refused: %s", err.msg);
    config_of(&c, &cases[0]);
    CHECK_OK(dpc_train_plan_new(&p, &c, 100, &rng, &err), &err);
    double e = 0;
    CHECK(dpc_train_plan_epsilon_at(p, 1, NULL, &err) == DPC_E_INVALID, "NULL eps refused");
    CHECK(dpc_train_plan_epsilon_at(NULL, 1, &e, &err) == DPC_E_INVALID, "NULL plan refused");
    dpc_train_plan_free(p);
    dpc_train_plan_free(NULL);
}

/* Poisson below rate 1/16 at production deltas: the batch sizes are drawn exactly (no share of
 * delta is set aside for the sampler), so delta 1e-10 over 10^5 steps (N = 10^6, B = 1000, 100
 * epochs) and 1e-15 over 1000 steps calibrate, and the noise (calibrated) or epsilon (given
 * noise) is the accountant's at delta itself, asked directly. */
static void test_poisson_small_delta(void)
{
    const size_t N = 1000000;
    const struct {
        int given;
        size_t epochs;
        double delta;
    } runs[] = {{0, 100, 1e-10}, {1, 100, 1e-10}, {0, 1, 1e-15}, {1, 1, 1e-15}};
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        dpc_train_config c;
        config_of(&c, &cases[runs[r].given ? 4 : 0]);
        c.sampler = DPC_SAMPLER_POISSON;
        c.batch = 1000; /* q = 1e-3: the size table */
        c.epochs = runs[r].epochs;
        c.delta = runs[r].delta;
        dpc_rng rng;
        dpc_rng_seed(&rng, 3);
        dpc_error err = {0};
        dpc_train_plan *p = NULL;
        CHECK_OK(dpc_train_plan_new(&p, &c, N, &rng, &err), &err);
        if (!p) continue;
        const dpc_ledger *L = dpc_train_plan_ledger(p);
        const char *what = runs[r].given ? "given z" : "calibrated";
        CHECK(L->steps == 1000 * c.epochs && L->delta == c.delta, "%s, delta %g: %zu steps",
              what, c.delta, L->steps);
        dpc_mech_run run = {dpc_train_plan_mech(p), L->part, L->q, 0, NULL, 0};
        dpc_account_opts o;
        dpc_account_opts_init(&o, c.accountant);
        if (!runs[r].given) {
            double z = 0;
            CHECK_OK(dpc_account_mech_calibrate_run(&run, &o, c.epsilon, c.delta, &z, NULL,
                                                    &err),
                     &err);
            CHECK(L->noise_multiplier == z && L->epsilon <= c.epsilon * (1 + 1e-9),
                  "%s, delta %g: noise multiplier %.17g, calibrated at delta %.17g", what,
                  c.delta, L->noise_multiplier, z);
        } else {
            dpc_account_result ar;
            CHECK_OK(dpc_account_mech_epsilon(&run, c.noise_multiplier, &o, c.delta, &ar, NULL,
                                              &err),
                     &err);
            CHECK(ar.epsilon == L->epsilon, "%s, delta %g: epsilon %.17g, at delta %.17g", what,
                  c.delta, L->epsilon, ar.epsilon);
        }
        dpc_train_plan_free(p);
    }
}

/* BLT without theta/omega: the trainer and the plan optimize the same default BLT, equal to the
 * optimizer asked directly for the run's n, k = epochs and separation b (steps per epoch under
 * fixed-order epochs, 1 under shuffling), with the optimizer's workload. */
static void test_default_blt(void)
{
    dpc_dataset *ds = data(150, 4); /* batch 20: 7 steps per epoch, n = 21 */
    dpc_model_config mc;
    dpc_model *m = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_model_parse(&mc, "logistic", 4, 2, &err), &err);
    CHECK_OK(dpc_model_new(&m, &mc, &err), &err);
    const struct { dpc_sampler_kind sampler; size_t sep; } runs[] = {
        {DPC_SAMPLER_AUTO, 7}, {DPC_SAMPLER_SHUFFLE, 1}};
    for (size_t r = 0; r < 2; r++) {
        dpc_train_config c;
        pcase pc = {"default blt", DPC_MECH_BLT, runs[r].sampler, 0, 0, 0};
        config_of(&c, &pc);
        c.weight_decay = 0.5; /* workload decay 1 - 0.3 x 0.5 = 0.85 */
        dpc_train_config rc;
        CHECK_OK(dpc_train_config_resolve(&c, ds, &rc, &err), &err);
        CHECK(rc.mech.theta == NULL && rc.mech.nbuf == 0, "resolve leaves the default BLT open");
        dpc_strategy_problem pb;
        dpc_strategy_problem_init(&pb, 21);
        pb.participations = 3;
        pb.min_sep = runs[r].sep;
        pb.workload = (dpc_workload){0.5, 0.85};
        dpc_strategy *want = NULL;
        CHECK_OK(dpc_strategy_optimize_blt(&want, &pb, NULL, &err), &err);
        dpc_rng rng;
        dpc_rng_seed(&rng, 5);
        dpc_trainer *tr = NULL;
        dpc_train_plan *p = NULL;
        CHECK_OK(dpc_trainer_new(&tr, m, ds, NULL, &c, &rng, &err), &err);
        CHECK_OK(dpc_train_plan_new(&p, &c, ds->n, &rng, &err), &err);
        if (tr && p && want) {
            const dpc_mech_params *a = &dpc_trainer_config(tr)->mech;
            const dpc_mech_params *b = &dpc_train_plan_config(p)->mech;
            CHECK(a->nbuf == want->nbuf && b->nbuf == want->nbuf && want->nbuf >= 1,
                  "buffers: trainer %zu, plan %zu, optimizer %zu", a->nbuf, b->nbuf, want->nbuf);
            for (size_t i = 0; i < want->nbuf && i < a->nbuf && i < b->nbuf; i++) {
                CHECK(a->theta[i] == want->theta[i] && b->theta[i] == want->theta[i],
                      "sep %zu: theta[%zu] %.17g %.17g vs %.17g", runs[r].sep, i, a->theta[i],
                      b->theta[i], want->theta[i]);
                CHECK(a->omega[i] == want->omega[i] && b->omega[i] == want->omega[i],
                      "sep %zu: omega[%zu]", runs[r].sep, i);
            }
            char ja[2048], jb[2048];
            CHECK(dpc_ledger_json(dpc_trainer_ledger(tr), ja, sizeof ja) < sizeof ja, "fits");
            CHECK(dpc_ledger_json(dpc_train_plan_ledger(p), jb, sizeof jb) < sizeof jb, "fits");
            CHECK(!strcmp(ja, jb), "default BLT ledgers differ:\n  %s\n  %s", ja, jb);
            dpc_strategy *again = NULL;
            CHECK_OK(dpc_train_default_blt(dpc_train_plan_config(p), &again, &err), &err);
            CHECK(again && again->nbuf == want->nbuf && again->theta[0] == want->theta[0],
                  "dpc_train_default_blt is deterministic");
            dpc_strategy_free(again);
        }
        dpc_strategy_free(want);
        dpc_trainer_free(tr);
        dpc_train_plan_free(p);
    }
    /* refusals: one list only; a workload decay <= 0 */
    dpc_train_config c;
    pcase pc = {"blt", DPC_MECH_BLT, DPC_SAMPLER_AUTO, 0, 0, 0};
    config_of(&c, &pc);
    double th = 0.5;
    c.mech.theta = &th;
    dpc_train_config rc;
    CHECK(dpc_train_config_resolve(&c, ds, &rc, &err) == DPC_E_INVALID, "theta without omega");
    c.mech.theta = NULL;
    c.weight_decay = 4.0; /* lr x weight_decay = 1.2 */
    CHECK(dpc_train_config_resolve(&c, ds, &rc, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "weight_decay"),
          "decay <= 0 refused, field %s", err.field);
    dpc_strategy *s = NULL;
    CHECK(dpc_train_default_blt(&c, &s, &err) == DPC_E_INVALID && !s, "unresolved refused");
    dpc_model_free(m);
    dpc_dataset_free(ds);
}

int main(void)
{
    test_same_as_trainer();
    test_default_blt();
    test_recipe_bit_identical();
    test_refusals();
    test_poisson_small_delta();
    return TEST_SUMMARY();
}
