/* test_linreg_baseline.c — dpc_linreg_baseline (dpcorr/papers/linreg.h): each baseline against
 * the release rebuilt here from its documented recipe (fixed clip and non-private SGD on the
 * run's T without stat records and with their own step; SSP at the run's epsilon with the
 * prior's bounds or the given ones; OLS), bit for bit, and the refusals naming their field; the
 * list of baselines to run (dpc_linreg_baselines_parse). */
#include "dpcorr.h"
#include "harness.h"

#include <math.h>

static void by_hand(const dpc_dataset *ds, const dpc_linreg_opts *run, size_t T,
                    dpc_linreg_algo algo, const dpc_rng *rng, double *w, size_t *steps)
{
    dpc_error err = {0};
    dpc_linreg_opts o = *run;
    o.algo = algo;
    o.steps = T;
    o.stat_batch = 0;
    o.eta = 0;
    dpc_linreg *lr = NULL;
    CHECK_OK(dpc_linreg_new(&lr, ds, &o, rng, &err), &err);
    if (!lr) return;
    CHECK_OK(dpc_linreg_run(lr, NULL, &err), &err);
    CHECK_OK(dpc_linreg_average(lr, w, &err), &err);
    *steps = dpc_linreg_plan_get(lr)->steps;
    dpc_linreg_free(lr);
}

/* Bit k is kind k; all, none, empty items skipped; an unknown word refused naming the list. */
static void test_parse(void)
{
    dpc_error err = {0};
    unsigned m = 99;
    CHECK_OK(dpc_linreg_baselines_parse("none", &m, &err), &err);
    CHECK(m == 0, "none: %u", m);
    CHECK_OK(dpc_linreg_baselines_parse("all", &m, &err), &err);
    CHECK(m == (1u << DPC_LINREG_NBASELINES) - 1, "all: %u", m);
    CHECK_OK(dpc_linreg_baselines_parse("ols,fixed,,ssp,", &m, &err), &err);
    CHECK(m == (1u << DPC_LINREG_BASELINE_OLS | 1u << DPC_LINREG_BASELINE_FIXED |
                1u << DPC_LINREG_BASELINE_SSP), "ols,fixed,,ssp,: %u", m);
    CHECK_OK(dpc_linreg_baselines_parse("sgd", &m, &err), &err);
    CHECK(m == 1u << DPC_LINREG_BASELINE_SGD, "sgd: %u", m);
    CHECK(dpc_linreg_baselines_parse("sgd,ssps", &m, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "baselines") && strstr(err.msg, "'ssps'"),
          "unknown word refused: %s", err.msg);
    CHECK(dpc_linreg_baselines_parse("fixe", &m, &err) == DPC_E_INVALID, "a prefix is no word");
    CHECK(dpc_linreg_baselines_parse(NULL, &m, &err) == DPC_E_INVALID, "NULL refused");
}

int main(void)
{
    test_parse();
    dpc_error err = {0};
    dpc_rng rng;
    dpc_rng_seed(&rng, 21);
    dpc_dataset *ds = NULL;
    CHECK_OK(dpc_data_synth_linreg(&ds, &rng, 0, 40000, 4, 0.0, 0.1, NULL, &err), &err);
    if (!ds) return TEST_SUMMARY();
    dpc_linreg_opts o;
    dpc_linreg_opts_init(&o, DPC_LINREG_AMBSSGD);
    o.epsilon = 2;
    o.delta = 1e-5;
    CHECK_OK(dpc_linreg_prior_from_data(&o.prior, ds, 0, NULL, &err), &err);
    dpc_linreg *run = NULL;
    CHECK_OK(dpc_linreg_new(&run, ds, &o, &rng, &err), &err);
    if (!run) return TEST_SUMMARY();
    const dpc_linreg_plan *P = dpc_linreg_plan_get(run);
    double w[4], v[4];
    size_t T = 0;
    dpc_linreg_baseline_info bi;
    static const dpc_linreg_algo algo[2] = {DPC_LINREG_FIXED, DPC_LINREG_SGD};
    for (int k = 0; k < 2; k++) {
        CHECK_OK(dpc_linreg_baseline(ds, &o, P, (dpc_linreg_baseline_kind)k, 0, 0, &rng, w, &bi, &err), &err);
        by_hand(ds, &o, P->steps, algo[k], &rng, v, &T);
        CHECK(!memcmp(w, v, sizeof w) && bi.steps == T && T == P->steps, "%s as built by hand",
              dpc_linreg_baseline_name((dpc_linreg_baseline_kind)k));
    }
    CHECK(isinf(bi.epsilon), "non-private SGD: epsilon inf");
    /* SSP: the run's epsilon, the prior's bounds, and given ones */
    dpc_linreg_ssp_opts so = {2, 1e-5, 0, 0, o.stream, 0};
    dpc_linreg_ssp_bounds(&so, &P->prior, ds->n);
    CHECK_OK(dpc_linreg_ssp(ds, &so, &rng, v, NULL, &err), &err);
    CHECK_OK(dpc_linreg_baseline(ds, &o, P, DPC_LINREG_BASELINE_SSP, 0, 0, &rng, w, &bi, &err), &err);
    CHECK(!memcmp(w, v, sizeof w) && bi.x_bound == so.x_bound && bi.y_bound == so.y_bound &&
          bi.epsilon <= 2 * (1 + 1e-9) && isfinite(bi.ridge), "ssp as built by hand");
    CHECK_OK(dpc_linreg_baseline(ds, &o, P, DPC_LINREG_BASELINE_SSP, 0.5, 2, &rng, w, &bi, &err), &err);
    CHECK(bi.x_bound == 0.5 && bi.y_bound == 2, "given SSP bounds kept");
    CHECK(dpc_linreg_baseline(ds, &o, P, DPC_LINREG_BASELINE_SSP, 1e300, 0, &rng, w, &bi, &err) &&
          !strcmp(err.field, "x_bound") && isnan(bi.ridge), "an SSP bound out of range: %s", err.msg);
    /* a run calibrated from a noise multiplier: SSP at the plan's epsilon */
    dpc_linreg_opts o2 = o;
    o2.epsilon = 0;
    o2.noise_multiplier = 3;
    dpc_linreg_plan P2;
    CHECK_OK(dpc_linreg_plan_make(&P2, &o2, ds->n, ds->d, &err), &err);
    CHECK_OK(dpc_linreg_baseline(ds, &o2, &P2, DPC_LINREG_BASELINE_SSP, 0, 0, &rng, w, &bi, &err), &err);
    CHECK(bi.epsilon <= P2.ledger.epsilon * (1 + 1e-9) && bi.epsilon > 0, "SSP at the plan's epsilon");
    CHECK_OK(dpc_linreg_baseline(ds, &o, P, DPC_LINREG_BASELINE_OLS, 0, 0, &rng, w, &bi, &err), &err);
    CHECK_OK(dpc_linreg_ols(ds, v, &err), &err);
    CHECK(!memcmp(w, v, sizeof w) && isinf(bi.epsilon), "ols");
    CHECK(dpc_linreg_baseline(ds, &o, P, (dpc_linreg_baseline_kind)9, 0, 0, &rng, w, &bi, &err) ==
              DPC_E_INVALID && !strcmp(err.field, "kind"), "unknown kind");
    CHECK(!strcmp(dpc_linreg_baseline_name(DPC_LINREG_BASELINE_FIXED), "dp-sgd-fixed") &&
          !strcmp(dpc_linreg_baseline_name((dpc_linreg_baseline_kind)7), "unknown"), "names");
    dpc_linreg_free(run);
    dpc_dataset_free(ds);
    return TEST_SUMMARY();
}
