/* test_advise.c — dpc_train_advise: the query is validated naming its fields (the delta rule
 * included); every applicable candidate's numbers are those of an independent dpc_train_plan_new
 * with the same configuration (noise std from its ledger, the workload error of its mechanism);
 * the ranking is by increasing error, DP-SGD's ratio is 1 and the others' are squared ratios;
 * DP-SGD's prefix-sum RMSE is sqrt((n+1)/2); the answer is deterministic. */
#include "dpcorr.h"
#include "harness.h"

#include <math.h>
#include <string.h>

static void test_refusals(void)
{
    dpc_advice a[DPC_ADVISE_MAX];
    size_t n = 99;
    struct {
        size_t N, B, E;
        double eps, delta;
        const char *field;
        dpc_status st;
    } bad[] = {
        {0, 10, 1, 1, 0, "n_examples", DPC_E_INVALID},  {100, 0, 1, 1, 0, "batch", DPC_E_INVALID},
        {100, 200, 1, 1, 0, "batch", DPC_E_INVALID},    {100, 10, 0, 1, 0, "epochs", DPC_E_INVALID},
        {100, 10, 1, 0, 0, "epsilon", DPC_E_INVALID},   {100, 10, 1, INFINITY, 0, "epsilon",
                                                         DPC_E_INVALID},
        {100, 10, 1, 1, 0.01, "delta", DPC_E_PRIVACY}, {100, 10, 1, 1, 2, "delta", DPC_E_INVALID},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dpc_advise_query q;
        dpc_advise_query_init(&q);
        q.n_examples = bad[i].N, q.batch = bad[i].B, q.epochs = bad[i].E;
        q.epsilon = bad[i].eps, q.delta = bad[i].delta, q.skip_slow = 1;
        dpc_error err = {0};
        dpc_status st = dpc_train_advise(&q, a, DPC_ADVISE_MAX, &n, &err);
        CHECK(st == bad[i].st && !strcmp(err.field, bad[i].field) && n == 0,
              "case %zu refused naming %s (status %d): %s", i, bad[i].field, st, err.msg);
    }
    dpc_advise_query q;
    dpc_advise_query_init(&q);
    q.n_examples = 100, q.batch = 10, q.epsilon = 1;
    dpc_error err = {0};
    CHECK(dpc_train_advise(&q, a, 3, &n, &err) == DPC_E_INVALID && !strcmp(err.field, "cap"),
          "a short output array refused: %s", err.msg);
    q.delta = 0.01, q.allow_large_delta = 1, q.skip_slow = 1;
    CHECK_OK(dpc_train_advise(&q, a, DPC_ADVISE_MAX, &n, &err), &err);
}

/* The candidate's numbers from an independent plan with the same configuration. */
static void cross_check(const dpc_advise_query *q, const dpc_advice *a)
{
    dpc_error err = {0};
    dpc_train_config c;
    dpc_train_config_init(&c);
    c.batch = q->batch, c.epochs = q->epochs, c.epsilon = q->epsilon, c.momentum = q->momentum;
    c.mech.kind = a->mech, c.mech.bands = a->bands, c.mech.nu = a->nu;
    c.sampler = a->sampler, c.groups = a->groups;
    dpc_rng rng;
    dpc_rng_seed(&rng, 7); /* another key: the ledger must not depend on it */
    dpc_train_plan *p = NULL;
    CHECK_OK(dpc_train_plan_new(&p, &c, q->n_examples, &rng, &err), &err);
    if (!p) return;
    const dpc_ledger *L = dpc_train_plan_ledger(p);
    dpc_workload w = {q->momentum, 1.0};
    dpc_mech_error me;
    CHECK_OK(dpc_mech_error_of(dpc_train_plan_mech(p), &w, &me, &err), &err);
    CHECK(a->noise_std == L->noise_std && a->noise_multiplier == L->noise_multiplier &&
              a->rmse == me.rmse && a->error == L->noise_std * me.rmse &&
              !strcmp(a->mechanism, L->mechanism) && !strcmp(a->route, L->route),
          "%s / %s: the plan's numbers (noise std %g vs %g, rmse %g vs %g)", a->mechanism,
          dpc_sampler_kind_name(a->sampler), a->noise_std, L->noise_std, a->rmse, me.rmse);
    CHECK(a->epsilon <= q->epsilon * (1 + 1e-9), "%s: epsilon %g within the target",
          a->mechanism, a->epsilon);
    dpc_train_plan_free(p);
}

static void test_ranking(double momentum)
{
    dpc_advise_query q;
    dpc_advise_query_init(&q);
    q.n_examples = 2000, q.batch = 100, q.epochs = 2, q.epsilon = 2, q.momentum = momentum;
    q.skip_slow = 1;
    dpc_advice a[DPC_ADVISE_MAX], b[DPC_ADVISE_MAX];
    size_t n = 0, nb = 0;
    dpc_error err = {0};
    CHECK_OK(dpc_train_advise(&q, a, DPC_ADVISE_MAX, &n, &err), &err);
    /* DP-SGD, BSR with cyclic Poisson (16 bands: 20 steps per epoch), BSR, BLT, nu */
    CHECK(n == 5, "momentum %g: 5 candidates, got %zu", momentum, n);
    double sgd = NAN;
    size_t nok = 0;
    for (size_t i = 0; i < n; i++) {
        CHECK(a[i].why[0] != '\0', "candidate %zu explained", i);
        if (!a[i].ok) continue;
        CHECK(i == nok++, "the applicable candidates first");
        if (i > 0) CHECK(a[i - 1].error <= a[i].error, "ranked by error (%zu)", i);
        if (a[i].mech == DPC_MECH_IDENTITY) {
            sgd = a[i].error;
            CHECK(a[i].loss_ratio == 1.0 && a[i].sampler == DPC_SAMPLER_POISSON && a[i].amplified,
                  "DP-SGD: ratio 1, Poisson, amplified");
            if (momentum == 0)
                CHECK_NEAR_REL(a[i].rmse, sqrt(41.0 / 2.0), 1e-12, "DP-SGD rmse sqrt((n+1)/2)");
        }
        if (a[i].sampler == DPC_SAMPLER_CYCLIC_POISSON)
            CHECK(a[i].bands == 16 && a[i].groups == 16 && a[i].amplified,
                  "BSR cyclic Poisson: 16 bands and groups, amplified");
        cross_check(&q, &a[i]);
    }
    CHECK(nok == 5 && isfinite(sgd), "all five apply at (2, 1e-5)");
    for (size_t i = 0; i < nok; i++)
        CHECK_NEAR_REL(a[i].loss_ratio, (a[i].error / sgd) * (a[i].error / sgd), 1e-12,
                       "vs SGD is the squared error ratio (%zu)", i);
    CHECK(strstr(a[0].why, "lowest error") != NULL, "the first says why: %s", a[0].why);
    CHECK_OK(dpc_train_advise(&q, b, DPC_ADVISE_MAX, &nb, &err), &err);
    int same = nb == n;
    for (size_t i = 0; same && i < n; i++)
        same = a[i].mech == b[i].mech && a[i].sampler == b[i].sampler && a[i].error == b[i].error;
    CHECK(same, "deterministic");
}

/* The field table covers dpc_advise_query and _init writes its defaults (the values it wrote by
 * hand before the table: batch 256, epochs 1, the default accountant, the rest 0). */
static void test_field_table(void)
{
    dpc_error err = {0};
    const dpc_field_table *t = dpc_advise_query_fields();
    CHECK(t && t->size == sizeof(dpc_advise_query) && t->count == 9, "table of the struct");
    CHECK(t->size == dpc_abi_sizeof("dpc_advise_query"), "the table's size is the ABI's");
    CHECK_OK(dpc_field_table_verify(t, &err), &err);
    dpc_advise_query q;
    memset(&q, 0x5a, sizeof q);
    dpc_advise_query_init(&q);
    CHECK(q.n_examples == 0 && q.batch == 256 && q.epochs == 1 && q.epsilon == 0 &&
              q.delta == 0 && q.allow_large_delta == 0 &&
              q.accountant == dpc_account_default_accountant() && q.momentum == 0 &&
              q.skip_slow == 0, "defaults");
    q.n_examples = 100, q.batch = 10, q.epsilon = 1;
    dpc_advice a[DPC_ADVISE_MAX];
    size_t n = 0;
    struct { const char *field; double v; } bad[] = {
        {"momentum", 1}, {"momentum", -0.5}, {"epsilon", NAN}, {"accountant", 4},
        {"allow_large_delta", 2},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dpc_advise_query b = q;
        CHECK_OK(dpc_field_set(dpc_field_find(t, bad[i].field, NULL), &b, bad[i].v, &err), &err);
        CHECK(dpc_train_advise(&b, a, DPC_ADVISE_MAX, &n, &err) == DPC_E_INVALID &&
                  !strcmp(err.field, bad[i].field) && n == 0, "%s = %g refused: '%s'",
              bad[i].field, bad[i].v, err.msg);
    }
}

int main(void)
{
    test_field_table();
    test_refusals();
    test_ranking(0.0);
    test_ranking(0.9);
    return TEST_SUMMARY();
}
