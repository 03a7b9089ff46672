/* test_linreg_repro.c — the DP-AMBSSGD reproduction (dpc_linreg_repro_*, dpcorr/papers/linreg.h)
 * at smoke scale against independent values: the sigma sweep's adaptive and non-private runs
 * and the N sweep's rebuilt here from the documented recipe (data stream = seed index, delta =
 * 1e-5, Thm. 3.7 alpha, the margin rule, the true sigma in the prior) and run by dpc_linreg_run;
 * the slopes refitted from the rows; the epsilon sweep's order and its eps = 1 point; the checks
 * from the slopes; the job count from the grid; the same numbers on 1 and 2 threads; the
 * refusals name their parameter. */
#include "dpcorr.h"
#include "harness.h"
#include "slope_fixture.h"

#include <math.h>

/* One run: risk, and the stat batch of the adaptive run (for the matched non-private layout). */
static double run(const dpc_dataset *ds, dpc_linreg_algo algo, double eps, double sigma,
                  size_t stat_batch, uint32_t stream, uint64_t seed, size_t *s_out)
{
    dpc_error err = {0};
    dpc_linreg_opts o;
    dpc_linreg_opts_init(&o, algo);
    o.delta = 1e-5;
    o.allow_large_delta = 1;
    o.epsilon = eps;
    if (algo == DPC_LINREG_AMBSSGD) o.calibration = DPC_CALIBRATION_PAPER; /* Thm. 3.7's alpha */
    o.dpstat_rule = DPC_DPSTAT_MARGIN;
    o.stat_batch = stat_batch;
    o.stream = stream;
    CHECK_OK(dpc_linreg_prior_from_spectrum(&o.prior, ds->cov_diag, ds->d, &err), &err);
    o.prior.w_bound = 1;
    o.prior.sigma_bound = sigma;
    dpc_rng rng;
    dpc_rng_seed(&rng, seed);
    dpc_linreg *lr = NULL;
    double w[64], risk = NAN;
    CHECK_OK(dpc_linreg_new(&lr, ds, &o, &rng, &err), &err);
    if (!lr) return NAN;
    CHECK_OK(dpc_linreg_run(lr, NULL, &err), &err);
    CHECK_OK(dpc_linreg_average(lr, w, &err), &err);
    risk = dpc_linreg_excess_risk(w, ds->truth, ds->cov_diag, ds->d);
    if (s_out) *s_out = dpc_linreg_plan_get(lr)->stat_batch;
    dpc_linreg_free(lr);
    return risk;
}

/* the adaptive and the matched non-private risk on the first n rows of a set of nmax */
static void pair(size_t nmax, size_t n, size_t d, double sigma, uint64_t seed, double out[2])
{
    dpc_error err = {0};
    dpc_rng rng;
    dpc_rng_seed(&rng, seed);
    dpc_dataset *ds = NULL;
    CHECK_OK(dpc_data_synth_linreg(&ds, &rng, 0, nmax, d, 0.0, sigma, NULL, &err), &err);
    if (!ds) return;
    dpc_dataset v = *ds;
    v.n = n;
    size_t s = 0;
    out[0] = run(&v, DPC_LINREG_AMBSSGD, 1, sigma, 0, 0, seed, &s);
    out[1] = run(&v, DPC_LINREG_SGD, 0, sigma, s, 0, seed, NULL);
    dpc_dataset_free(ds);
}

static void test_refusals(void)
{
    dpc_error err = {0};
    dpc_linreg_repro_params p;
    dpc_linreg_repro_params_init(&p);
    CHECK(p.scale == DPC_LINREG_REPRO_FULL && p.threads == 1 && p.seed == 20240101, "defaults");
    dpc_linreg_repro_result *r = NULL;
    p.scale = (dpc_linreg_repro_scale)5;
    CHECK(dpc_linreg_repro_run(&p, &r, &err) == DPC_E_INVALID && !strcmp(err.field, "scale") && !r,
          "unknown scale: %s", err.msg);
    p.scale = DPC_LINREG_REPRO_SMOKE;
    p.threads = 0;
    CHECK(dpc_linreg_repro_run(&p, &r, &err) == DPC_E_INVALID && !strcmp(err.field, "threads"),
          "0 threads: %s", err.msg);
    dpc_linreg_repro_grid g;
    CHECK(dpc_linreg_repro_grid_get((dpc_linreg_repro_scale)9, &g, &err) == DPC_E_INVALID, "grid");
    dpc_linreg_repro_result_free(NULL);
    size_t n;
    CHECK(dpc_linreg_repro_reproduced(&n)[0] && n >= 1, "reproduced");
    CHECK(dpc_linreg_repro_not_reproduced(&n)[0] && n >= 1, "not reproduced");
}

static void check_result(const dpc_linreg_repro_result *R, uint64_t seed)
{
    const dpc_linreg_repro_grid *g = &R->grid;
    double pr[2];
    /* the sigma sweep (one seed: stream 0) */
    for (size_t i = 0; i < g->nsig; i++) {
        pair(g->n0, g->n0, g->d0, g->sig[i], seed, pr);
        CHECK(R->risk[DPC_LINREG_REPRO_ADAPTIVE][i] == pr[0], "adaptive at sigma %g: %g vs %g",
              g->sig[i], R->risk[DPC_LINREG_REPRO_ADAPTIVE][i], pr[0]);
        CHECK(R->risk[DPC_LINREG_REPRO_NONPRIVATE][i] == pr[1], "non-private at sigma %g", g->sig[i]);
        CHECK(R->dp_excess_adaptive[i] == pr[0] - pr[1], "DP excess at sigma %g", g->sig[i]);
        CHECK(R->clip_fraction[i] >= 0 && R->clip_fraction[i] <= 1, "clip fraction");
    }
    CHECK(R->note[0][0] == 1.31e-4, "the note's adaptive run at sigma 1 (its §5.1 table)");
    if (R->dp_excess_adaptive[0] > 0 && R->dp_excess_adaptive[g->nsig - 1] > 0)
        CHECK_NEAR_REL(R->slope_sigma_adaptive, ols_loglog(R->sigma, R->dp_excess_adaptive, g->nsig),
                       1e-9, "sigma slope");
    CHECK(R->ratio_fixed_over_adaptive == R->risk[DPC_LINREG_REPRO_FIXED][g->nsig - 1] /
                                              R->risk[DPC_LINREG_REPRO_ADAPTIVE][g->nsig - 1], "ratio");
    /* the epsilon sweep: ascending, eps = 1 from the sigma sweep */
    size_t at1 = 99;
    for (size_t e = 0; e < R->neps; e++) {
        if (e) CHECK(R->eps[e - 1] < R->eps[e], "epsilons ascending");
        if (R->eps[e] == 1) at1 = e;
        CHECK(R->eps_dp_excess[e] == R->eps_risk[e] - R->eps_nonprivate, "eps DP excess");
    }
    CHECK(R->neps == g->neps + 1 && at1 < R->neps && R->eps_risk[at1] == R->eps1_risk &&
          R->eps1_risk == R->risk[DPC_LINREG_REPRO_ADAPTIVE][0], "eps = 1 inserted (sigma 1 first)");
    CHECK(g->ssgd_seeds || isnan(R->dpssgd_risk), "no DP-SSGD runs: NAN");
    /* the N sweep: prefixes of the largest set */
    for (size_t i = 0; i < g->nn; i++) {
        pair(g->ns[g->nn - 1], g->ns[i], g->d0, 1.0, seed, pr);
        const dpc_linreg_repro_point *q = &R->nsweep[i];
        CHECK(q->n == g->ns[i] && q->d == g->d0 && q->adaptive == pr[0] && q->nonprivate == pr[1] &&
              q->dp_excess == pr[0] - pr[1], "N sweep point %zu", i);
    }
    for (size_t i = 0; i < g->nd; i++)
        CHECK(R->dsweep[i].d == g->ds[i] && R->dsweep[i].n == g->d_n &&
              R->dsweep[i].dp_excess == R->dsweep[i].adaptive - R->dsweep[i].nonprivate, "d point");
    CHECK(R->ok_sigma_slope == (fabs(R->slope_sigma_adaptive - 2) <= 0.3) &&
          R->ok_fixed_flat == (fabs(R->slope_sigma_fixed) <= 0.3) &&
          R->ok_ratio == (R->ratio_fixed_over_adaptive >= 100) &&
          R->ok_eps_slope == (R->slope_eps >= -2.2 && R->slope_eps <= -1.4), "checks");
    CHECK(R->jobs == g->n_seeds + g->nd * g->d_seeds + g->nsig * g->seeds, "jobs %zu", R->jobs);
    CHECK(R->T0 > 0 && R->zeta[0][0] > 0 && R->gamma[0][0] > 0, "zeta_t recorded (T0 %zu)", R->T0);
}

static void test_smoke(void)
{
    dpc_error err = {0};
    dpc_linreg_repro_params p;
    dpc_linreg_repro_params_init(&p);
    p.scale = DPC_LINREG_REPRO_SMOKE;
    p.seed = 11;
    dpc_linreg_repro_result *r1 = NULL, *r2 = NULL;
    CHECK_OK(dpc_linreg_repro_run(&p, &r1, &err), &err);
    p.threads = 2;
    CHECK_OK(dpc_linreg_repro_run(&p, &r2, &err), &err);
    size_t nj = 0;
    CHECK_OK(dpc_linreg_repro_count(&p, &nj, &err), &err);
    if (r1 && r2) {
        CHECK(r1->threads == 1 && r2->threads == 2 && nj == r1->jobs, "threads started, count");
        CHECK(!memcmp(r1->risk, r2->risk, sizeof r1->risk) && !memcmp(r1->zeta, r2->zeta, sizeof r1->zeta) &&
              !memcmp(r1->nsweep, r2->nsweep, sizeof r1->nsweep) &&
              !memcmp(r1->eps_risk, r2->eps_risk, sizeof r1->eps_risk), "1 and 2 threads agree");
        check_result(r1, p.seed);
    }
    dpc_linreg_repro_result_free(r1);
    dpc_linreg_repro_result_free(r2);
}

/* The field table covers dpc_linreg_repro_params and _init writes its defaults (the values it
 * wrote by hand before the table: full, 20240101, 1 thread). */
static void test_field_table(void)
{
    dpc_error err = {0};
    const dpc_field_table *t = dpc_linreg_repro_params_fields();
    CHECK(t && t->size == sizeof(dpc_linreg_repro_params) && t->count == 3, "table of the struct");
    CHECK_OK(dpc_field_table_verify(t, &err), &err);
    dpc_linreg_repro_params p;
    memset(&p, 0x5a, sizeof p);
    dpc_linreg_repro_params_init(&p);
    CHECK(p.scale == DPC_LINREG_REPRO_FULL && p.seed == 20240101 && p.threads == 1, "defaults");
    CHECK_OK(dpc_field_check(t, &p, &err), &err);
    struct { const char *field; double v; } bad[] = {{"scale", 3}, {"threads", 0}, {"threads", 257}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dpc_linreg_repro_params b = p;
        CHECK_OK(dpc_field_set(dpc_field_find(t, bad[i].field, NULL), &b, bad[i].v, &err), &err);
        CHECK(dpc_field_check(t, &b, &err) == DPC_E_INVALID && !strcmp(err.field, bad[i].field),
              "%s = %g refused: '%s'", bad[i].field, bad[i].v, err.msg);
    }
}

int main(void)
{
    test_field_table();
    test_refusals();
    test_smoke();
    return TEST_SUMMARY();
}
