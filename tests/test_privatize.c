/* test_privatize.c — the private step in the caller's loop (dpcorr/privatize.h): its noise
 * multiplier and ledger against dpc_trainer_new's on the same run (four mechanisms, calibrated
 * and given noise), its batches and noised updates bit for bit against the documented formula
 * computed independently (a plan, a sampler and a noise generator of the same rng), epsilon
 * spent so far, and every refusal with the field it names. */
#include "dpcorr/model.h"
#include "dpcorr/privatize.h"
#include "dpcorr/train.h"
#include "dpcorr/abi.h"
#include "harness.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define N 600
#define D 5

static void base(dpc_privatize_config *c)
{
    dpc_privatize_config_init(c);
    c->dim = D + 1; /* a linear model's parameters: D weights and a bias */
    c->n_examples = N;
    c->batch = 60;
    c->epochs = 2;
    c->epsilon = 2.0;
    c->clip = 0.7;
}

/* The trainer's ledger for the same run: a linear model on N records of D features. */
static int trainer_ledger(const dpc_privatize_config *c, const dpc_rng *rng, dpc_ledger *out,
                          dpc_error *err)
{
    dpc_dataset *ds = NULL;
    dpc_model *m = NULL;
    dpc_trainer *tr = NULL;
    dpc_model_config mc;
    int ok = 0;
    if (dpc_dataset_new(&ds, N, D, 0, err) || dpc_model_parse(&mc, "linear", D, 0, err) ||
        dpc_model_new(&m, &mc, err))
        goto done;
    for (size_t i = 0; i < (size_t)N * D; i++) ds->x[i] = (double)(i % 7) / 7.0;
    dpc_train_config tc;
    dpc_train_config_init(&tc);
    tc.mech = c->mech;
    tc.batch = c->batch;
    tc.epochs = c->epochs;
    tc.epsilon = c->epsilon;
    tc.noise_multiplier = c->noise_multiplier;
    tc.clip = c->clip;
    if (dpc_trainer_new(&tr, m, ds, NULL, &tc, rng, err)) goto done;
    *out = *dpc_trainer_ledger(tr);
    ok = 1;
done:
    dpc_trainer_free(tr);
    dpc_model_free(m);
    dpc_dataset_free(ds);
    return ok;
}

static void test_ledger_is_the_trainers(void)
{
    static const double th[2] = {0.95, 0.6}, om[2] = {0.3, 0.1};
    for (int k = 0; k < 5; k++) {
        dpc_privatize_config c;
        base(&c);
        const char *what = "default BLT, calibrated";
        if (k == 1) c.mech.kind = DPC_MECH_IDENTITY, what = "DP-SGD, calibrated";
        if (k == 2) c.mech.kind = DPC_MECH_BSR, what = "BSR default bands, given z";
        if (k == 2) c.epsilon = 0, c.noise_multiplier = 1.3;
        if (k == 3) c.mech.kind = DPC_MECH_NU, c.mech.nu = 0.05, what = "nu-DP-FTRL, calibrated";
        if (k == 4) c.mech.nbuf = 2, c.mech.theta = th, c.mech.omega = om, what = "BLT given";
        dpc_rng rng;
        dpc_rng_seed(&rng, 31 + (uint64_t)k);
        dpc_error err = {0};
        dpc_privatizer *pv = NULL;
        dpc_ledger T;
        CHECK_OK(dpc_privatize_new(&pv, &c, &rng, &err), &err);
        CHECK(trainer_ledger(&c, &rng, &T, &err), "%s: trainer: %s", what, err.msg);
        if (!pv) continue;
        const dpc_ledger *L = dpc_privatize_ledger(pv);
        CHECK(L->noise_multiplier == T.noise_multiplier && L->noise_std == T.noise_std &&
                  L->epsilon == T.epsilon && L->delta == T.delta && L->steps == T.steps &&
                  L->expected_batch == T.expected_batch && !strcmp(L->mechanism, T.mechanism) &&
                  !strcmp(L->sampler, T.sampler) && !strcmp(L->accountant, T.accountant) &&
                  !strcmp(L->route, T.route),
              "%s: ledger z %.17g eps %.17g (%s, %s) vs the trainer's z %.17g eps %.17g (%s, %s)",
              what, L->noise_multiplier, L->epsilon, L->mechanism, L->sampler, T.noise_multiplier,
              T.epsilon, T.mechanism, T.sampler);
        CHECK(dpc_privatize_noise_scale(pv) == c.clip * L->noise_std, "%s: noise scale", what);
        if (c.epsilon > 0)
            CHECK(L->epsilon <= c.epsilon * (1 + 1e-9), "%s: epsilon %g within the target", what,
                  L->epsilon);
        dpc_privatize_free(pv);
    }
}

/* Batches and updates against the formula of dpc_train_plan (train.h), computed with a plan, its
 * sampler and a dpc_noise of the same rng: bit for bit, over the whole run; epsilon spent
 * increases to the ledger's epsilon; h may alias the sum. */
static void test_steps_are_the_formula(void)
{
    for (int secure = 0; secure < 2; secure++) {
        dpc_privatize_config c;
        base(&c);
        c.mech.kind = secure ? DPC_MECH_BSR : DPC_MECH_BLT;
        dpc_rng rng;
        dpc_rng_seed(&rng, 5);
        if (secure) {
            memset(&rng, 0, sizeof rng);
            rng.mode = DPC_RNG_SECURE;
            for (int i = 0; i < 8; i++) rng.skey[i] = 0x6b43a9b5u * (uint32_t)(i + 1);
        }
        dpc_error err = {0};
        dpc_privatizer *pv = NULL;
        CHECK_OK(dpc_privatize_new(&pv, &c, &rng, &err), &err);
        dpc_train_config tc;
        dpc_train_config_init(&tc);
        tc.mech = c.mech;
        tc.batch = c.batch;
        tc.epochs = c.epochs;
        tc.epsilon = c.epsilon;
        tc.clip = c.clip;
        tc.workload_explicit = 1;
        dpc_train_plan *plan = NULL;
        CHECK_OK(dpc_train_plan_new(&plan, &tc, N, &rng, &err), &err);
        dpc_noise *g = NULL;
        dpc_noise_config nc;
        dpc_noise_config_init(&nc, c.dim);
        dpc_rng_stream s = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_NOISE, 0));
        if (plan) CHECK_OK(dpc_noise_new(&g, dpc_train_plan_mech(plan), &s, &nc, &err), &err);
        if (!pv || !plan || !g) {
            dpc_privatize_free(pv);
            dpc_train_plan_free(plan);
            dpc_noise_free(g);
            continue;
        }
        const dpc_ledger *L = dpc_train_plan_ledger(plan);
        size_t n = dpc_privatize_steps_total(pv), cap = dpc_privatize_max_batch(pv);
        CHECK(n == L->steps && n > 2, "steps %zu vs the plan's %zu", n, L->steps);
        size_t *idx = malloc(cap * sizeof *idx), *ref = malloc(cap * sizeof *ref), m, mr;
        double sum[D + 1], h[D + 1], z[D + 1], prev = 0, eps;
        size_t bad_batch = 0, bad_h = 0;
        int monotone = 1;
        CHECK_OK(dpc_privatize_epsilon_spent(pv, &eps, &err), &err);
        CHECK(eps == 0, "nothing spent before the first step: %g", eps);
        for (size_t t = 0; t < n; t++) {
            CHECK_OK(dpc_privatize_batch(pv, idx, &m, &err), &err);
            CHECK_OK(dpc_sampler_batch(dpc_train_plan_sampler(plan), t, ref, &mr, &err), &err);
            bad_batch += m != mr || memcmp(idx, ref, m * sizeof *idx) != 0;
            for (size_t j = 0; j <= D; j++) sum[j] = 0.1 * (double)m - 0.37 * (double)j;
            CHECK_OK(dpc_noise_next(g, z, &err), &err);
            double want[D + 1];
            for (size_t j = 0; j <= D; j++)
                want[j] = (sum[j] + dpc_train_plan_noise_scale(plan) * z[j]) *
                          (1.0 / L->expected_batch);
            if (t % 2) {
                memcpy(h, sum, sizeof h); /* in place */
                CHECK_OK(dpc_privatize_step(pv, h, h, &err), &err);
            } else {
                CHECK_OK(dpc_privatize_step(pv, sum, h, &err), &err);
            }
            bad_h += memcmp(h, want, sizeof h) != 0;
            CHECK_OK(dpc_privatize_epsilon_spent(pv, &eps, &err), &err);
            if (!(eps >= prev)) monotone = 0;
            prev = eps;
        }
        CHECK(bad_batch == 0, "secure %d: %zu batches differ from the plan's sampler", secure,
              bad_batch);
        CHECK(bad_h == 0, "secure %d: %zu updates differ from the formula", secure, bad_h);
        CHECK(monotone && prev > 0, "epsilon spent increases (last %g)", prev);
        CHECK_NEAR_REL(prev, dpc_privatize_ledger(pv)->epsilon, 1e-12,
                       "spent after the last step = the ledger's epsilon");
        CHECK(dpc_privatize_steps_done(pv) == n, "all steps done");
        CHECK(dpc_privatize_batch(pv, idx, &m, &err) == DPC_E_RANGE, "no batch past the run");
        CHECK(dpc_privatize_step(pv, sum, h, &err) == DPC_E_RANGE, "no step past the run");
        free(idx);
        free(ref);
        dpc_noise_free(g);
        dpc_train_plan_free(plan);
        dpc_privatize_free(pv);
    }
}

static void test_refusals(void)
{
    dpc_rng rng;
    dpc_rng_seed(&rng, 9);
    dpc_error err = {0};
    dpc_privatize_config c;
    dpc_privatizer *pv = NULL;
    static const struct {
        const char *field;
        int what;
    } bad[] = {{"dim", 0},   {"n_examples", 1}, {"batch", 2},   {"noise_multiplier", 3},
               {"clip", 4}, {"delta", 5},      {"mech.nu", 6}, {"epochs", 7}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        base(&c);
        switch (bad[i].what) {
        case 0: c.dim = 0; break;
        case 1: c.n_examples = 0; break;
        case 2: c.batch = N + 1; break;
        case 3: c.noise_multiplier = 1.0; break; /* both epsilon and z */
        case 4: c.clip = NAN; break;
        case 5: c.delta = 0.5; break;
        case 6: c.mech.kind = DPC_MECH_NU, c.mech.nu = 1.5; break;
        case 7: c.epochs = 0; break;
        }
        memset(&err, 0, sizeof err);
        dpc_status st = dpc_privatize_new(&pv, &c, &rng, &err);
        CHECK(st != DPC_OK && pv == NULL && !strcmp(err.field, bad[i].field),
              "case %zu refused naming %s: status %d field '%s' (%s)", i, bad[i].field, (int)st,
              err.field, err.msg);
        dpc_privatize_free(pv);
        pv = NULL;
    }
    CHECK(dpc_privatize_new(&pv, NULL, &rng, &err) == DPC_E_INVALID, "NULL cfg");
    base(&c);
    CHECK(dpc_privatize_new(&pv, &c, NULL, &err) == DPC_E_INVALID && !strcmp(err.field, "rng"),
          "NULL rng named");
    CHECK_OK(dpc_privatize_new(&pv, &c, &rng, &err), &err);
    if (!pv) return;
    size_t cap = dpc_privatize_max_batch(pv), m;
    size_t *idx = malloc(cap * sizeof *idx);
    double sum[D + 1] = {0}, h[D + 1];
    CHECK(dpc_privatize_step(pv, sum, h, &err) == DPC_E_STATE && !strcmp(err.field, "clipped_sum"),
          "a step before its batch is refused: %s", err.msg);
    CHECK_OK(dpc_privatize_batch(pv, idx, &m, &err), &err);
    sum[3] = NAN;
    CHECK(dpc_privatize_step(pv, sum, h, &err) == DPC_E_NUMERIC && strstr(err.msg, "coordinate 3"),
          "a NaN coordinate is refused by index: %s", err.msg);
    CHECK(dpc_privatize_steps_done(pv) == 0, "nothing released by a refused step");
    sum[3] = 0;
    CHECK_OK(dpc_privatize_step(pv, sum, h, &err), &err);
    CHECK(dpc_privatize_step(pv, sum, h, &err) == DPC_E_STATE,
          "a second step on the same batch is refused");
    CHECK(dpc_privatize_steps_done(pv) == 1, "one step released");
    free(idx);
    dpc_privatize_free(pv);
    dpc_privatize_free(NULL);
}

/* Issue 37: what the object can see. A sum whose norm exceeds count x clip (plus the stated
 * rounding allowance) is no clipped batch's and is refused, one at the bound is released; a
 * never-seeded, zeroed, edited or invalid-mode rng is refused naming its field; every accessor
 * answers a NULL handle. */
static void test_sees(void)
{
    dpc_error err = {0};
    dpc_privatize_config c;
    base(&c);
    c.dim = 1000;
    dpc_rng rng;
    dpc_rng_seed(&rng, 11);
    CHECK_OK(dpc_rng_check(&rng, &err), &err);
    /* rngs nobody seeded */
    static const struct {
        const char *field;
        int what;
    } bad[] = {{"rng.key", 0}, {"rng.mode", 1}, {"rng.skey", 2}, {"rng.key", 3}, {"rng.key", 4}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dpc_rng r;
        dpc_rng_seed(&r, 11);
        switch (bad[i].what) {
        case 0: memset(&r, 0, sizeof r); break;   /* never seeded: all zero */
        case 1: r.mode = (dpc_rng_mode)7; break;  /* no mode */
        case 2: memset(&r, 0, sizeof r), r.mode = DPC_RNG_SECURE; break; /* zero secure key */
        case 3: r.key[0] ^= 1u; break;            /* a key that is not the seed's */
        case 4: r.skey[3] = 5u; break;            /* seeded with a secure key beside it */
        }
        dpc_privatizer *pv = NULL;
        memset(&err, 0, sizeof err);
        dpc_status st = dpc_privatize_new(&pv, &c, &r, &err);
        CHECK(st == DPC_E_INVALID && pv == NULL && !strcmp(err.field, bad[i].field),
              "rng case %zu refused naming %s: status %d field '%s' (%s)", i, bad[i].field,
              (int)st, err.field, err.msg);
        CHECK(dpc_rng_check(&r, NULL) == DPC_E_INVALID, "dpc_rng_check refuses case %zu", i);
        dpc_privatize_free(pv);
    }
    dpc_rng sec;
    CHECK_OK(dpc_rng_seed_os(&sec, &err), &err);
    CHECK_OK(dpc_rng_check(&sec, &err), &err);
    CHECK(dpc_rng_check(NULL, &err) == DPC_E_INVALID && !strcmp(err.field, "rng"), "NULL rng");
    /* the norm bound */
    dpc_privatizer *pv = NULL;
    CHECK_OK(dpc_privatize_new(&pv, &c, &rng, &err), &err);
    if (!pv) return;
    size_t cap = dpc_privatize_max_batch(pv), m = 0;
    size_t *idx = malloc(cap * sizeof *idx);
    double *g = calloc(c.dim, sizeof *g), *h = malloc(c.dim * sizeof *h);
    CHECK_OK(dpc_privatize_batch(pv, idx, &m, &err), &err);
    CHECK(m == 60, "a batch of 60: %zu", m);
    /* the case: a norm far beyond any clipped batch */
    for (size_t j = 0; j < c.dim; j++) g[j] = 1e3;
    memset(&err, 0, sizeof err);
    CHECK(dpc_privatize_step(pv, g, h, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "clipped_sum") && strstr(err.msg, "count x clip"),
          "norm 3.2e4 for 60 records at clip 0.7 refused: %s", err.msg);
    /* just past the allowance (relative 1e-9 > (60 + 1000 + 8) 2^-52 = 2.4e-13), then one
     * clipped gradient per record along the same direction, summed: norm m x clip up to rounding */
    double reach = (double)m * c.clip;
    for (size_t j = 0; j < c.dim; j++) g[j] = 0.0;
    g[7] = reach * (1.0 + 1e-9);
    CHECK(dpc_privatize_step(pv, g, h, &err) == DPC_E_INVALID, "1e-9 above count x clip refused");
    CHECK(dpc_privatize_steps_done(pv) == 0, "nothing released by the refusals");
    double u = c.clip / sqrt((double)c.dim); /* each record's clipped gradient: norm clip */
    for (size_t j = 0; j < c.dim; j++) g[j] = 0.0;
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < c.dim; j++) g[j] += u;
    CHECK_OK(dpc_privatize_step(pv, g, h, &err), &err);
    CHECK(dpc_privatize_steps_done(pv) == 1, "a sum at the bound is released");
    /* the next step: every record at full norm on one coordinate, the sum exactly m x clip */
    CHECK_OK(dpc_privatize_batch(pv, idx, &m, &err), &err);
    for (size_t j = 0; j < c.dim; j++) g[j] = 0.0;
    g[0] = (double)m * c.clip;
    CHECK_OK(dpc_privatize_step(pv, g, h, &err), &err);
    free(idx);
    free(g);
    free(h);
    dpc_privatize_free(pv);
    /* NULL handles: every public function */
    CHECK(dpc_privatize_steps_done(NULL) == 0, "steps_done(NULL)");
    CHECK(dpc_privatize_steps_total(NULL) == 0, "steps_total(NULL)");
    CHECK(dpc_privatize_max_batch(NULL) == 0, "max_batch(NULL)");
    CHECK(isnan(dpc_privatize_noise_scale(NULL)), "noise_scale(NULL)");
    CHECK(dpc_privatize_ledger(NULL) == NULL, "ledger(NULL)");
    double e;
    size_t one[1], cnt;
    CHECK(dpc_privatize_epsilon_spent(NULL, &e, &err) == DPC_E_INVALID, "epsilon_spent(NULL)");
    CHECK(dpc_privatize_batch(NULL, one, &cnt, &err) == DPC_E_INVALID, "batch(NULL)");
    CHECK(dpc_privatize_step(NULL, &e, &e, &err) == DPC_E_INVALID, "step(NULL)");
    CHECK(dpc_privatize_new(NULL, &c, &rng, &err) == DPC_E_INVALID, "new(NULL)");
    dpc_privatize_config_init(NULL);
    dpc_privatize_free(NULL);
}

/* The field table covers the struct, and _init writes its defaults (the mechanism's too). */
static void test_field_table(void)
{
    dpc_error err = {0};
    const dpc_field_table *t = dpc_privatize_config_fields();
    CHECK_OK(dpc_field_table_verify(t, &err), &err);
    dpc_privatize_config c, z;
    memset(&c, 0x5a, sizeof c);
    dpc_privatize_config_init(&c);
    CHECK(c.epochs == 1 && c.clip == 1.0 && c.sampler == DPC_SAMPLER_AUTO &&
              c.mech.kind == DPC_MECH_BLT && c.accountant == dpc_account_default_accountant() &&
              c.isa == DPC_ISA_AUTO && c.dim == 0 && c.batch == 0 && c.epsilon == 0,
          "defaults");
    dpc_mech_params mp;
    dpc_mech_params_init(&mp);
    z = c;
    z.mech = mp;
    z.mech.kind = DPC_MECH_BLT;
    CHECK(!memcmp(&z.mech, &c.mech, sizeof mp), "the mechanism's defaults");
    const dpc_field *f = dpc_field_find(t, "mech.nu", NULL);
    CHECK(f && f->type == DPC_FIELD_DOUBLE, "dotted lookup into the mechanism");
    CHECK(t->size == dpc_abi_sizeof("dpc_privatize_config"), "the table's size is the ABI's");
}

int main(void)
{
    test_field_table();
    test_ledger_is_the_trainers();
    test_steps_are_the_formula();
    test_refusals();
    test_sees();
    return TEST_SUMMARY();
}
