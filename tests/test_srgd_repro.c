/* test_srgd_repro.c — the DP-SRGD reproduction (dpc_srgd_repro_*, dpcorr/papers/srgd.h) at smoke
 * scale against independent values: runs rebuilt here from the documented recipe (the problem,
 * the preset, the seed salts) give the rows' excess risks and private parts; the slopes are
 * refitted from the rows; the presets give T, B and beta; the tree test's z and verdicts are
 * recomputed from its statistics; the trace's flatness from its records; the job count from the
 * grid; the same numbers on 1 and 2 threads; the refusals name their parameter. */
#include "dpcorr.h"
#include "harness.h"
#include "slope_fixture.h"

#include <math.h>

/* The excess risk of one DP-SRGD run (P2, sparse design, |w0| = 1.8, Regime A, c = 1,
 * delta = 1e-6 (allowed large), the given variant), seeded as the reproduction documents. */
static double srgd_run(size_t n, size_t p, size_t rel, double eps, dpc_srgd_variant var,
                       uint64_t seed, dpc_srgd_config *out)
{
    dpc_error err = {0};
    dpc_srgd_problem_config pc;
    dpc_srgd_problem_config_init(&pc);
    pc.kind = DPC_SRGD_P2_LSQ;
    pc.n = n;
    pc.p = p;
    pc.relevant = rel;
    pc.w_norm = 1.8;
    dpc_rng rng;
    dpc_rng_seed(&rng, seed);
    dpc_srgd_problem *pr = NULL;
    dpc_model_config mc;
    dpc_model *m = NULL;
    dpc_srgd *s = NULL;
    double ex = NAN;
    CHECK_OK(dpc_srgd_problem_new(&pr, &pc, &rng, 0, &err), &err);
    CHECK_OK(dpc_model_parse(&mc, dpc_srgd_problem_model_spec(pr), p, 0, &err), &err);
    CHECK_OK(dpc_model_new(&m, &mc, &err), &err);
    dpc_srgd_config c;
    dpc_srgd_config_init(&c);
    dpc_srgd_problem_constants(pr, &c.L, &c.M, &c.R);
    c.epsilon = eps;
    c.delta = 1e-6;
    c.allow_large_delta = 1;
    c.variant = var;
    CHECK_OK(dpc_srgd_preset(&c, DPC_SRGD_REGIME_A, 1, 0, n, p, &err), &err);
    if (out) *out = c;
    CHECK_OK(dpc_srgd_new(&s, m, dpc_srgd_problem_data(pr), &c, &rng, &err), &err);
    CHECK_OK(dpc_srgd_run(s, NULL, &err), &err);
    CHECK_OK(dpc_srgd_problem_excess(pr, dpc_srgd_output(s), &ex, &err), &err);
    dpc_srgd_free(s);
    dpc_model_free(m);
    dpc_srgd_problem_free(pr);
    return ex;
}

static void test_refusals_and_grid(void)
{
    dpc_error err = {0};
    dpc_srgd_repro_params p;
    dpc_srgd_repro_params_init(&p);
    CHECK(p.scale == DPC_SRGD_REPRO_FULL && p.threads == 1 && p.seed == 20240101, "defaults");
    dpc_srgd_repro_result *r = NULL;
    p.scale = (dpc_srgd_repro_scale)7;
    CHECK(dpc_srgd_repro_run(&p, &r, &err) == DPC_E_INVALID && !strcmp(err.field, "scale") && !r,
          "unknown scale refused: %s", err.msg);
    p.scale = DPC_SRGD_REPRO_SMOKE;
    p.threads = 0;
    CHECK(dpc_srgd_repro_run(&p, &r, &err) == DPC_E_INVALID && !strcmp(err.field, "threads"),
          "0 threads refused: %s", err.msg);
    dpc_srgd_repro_grid g;
    CHECK(dpc_srgd_repro_grid_get((dpc_srgd_repro_scale)3, &g, &err) == DPC_E_INVALID &&
          !strcmp(err.field, "scale"), "grid of an unknown scale");
    dpc_srgd_repro_result_free(NULL);
    size_t ny, nn;
    CHECK(dpc_srgd_repro_reproduced(&ny)[0] && ny >= 1, "reproduced list");
    CHECK(dpc_srgd_repro_not_reproduced(&nn)[0] && nn >= 1, "not reproduced list");
    CHECK(!strcmp(dpc_srgd_repro_method_name(3), "dp-ftrl-tree") &&
          !strcmp(dpc_srgd_repro_experiment_name(6), "trace"), "names");
    /* an exact power law: slope -1/2 on every jackknife replicate, standard error 0 */
    double x[4] = {1, 4, 16, 64}, v[4 * 3], se;
    for (size_t i = 0; i < 4; i++)
        for (size_t s = 0; s < 3; s++) v[i * 3 + s] = (1.0 + (double)s) / sqrt(x[i]);
    CHECK_NEAR_ABS(dpc_srgd_repro_slope_jk(x, v, 4, 3, &se), -0.5, 1e-12, "power-law slope");
    CHECK_NEAR_ABS(se, 0, 1e-7, "its jackknife s.e.");
}

/* The rows against runs rebuilt from the recipe; the derived statistics from the rows. */
static void check_rows(const dpc_srgd_repro_result *R, uint64_t S)
{
    const dpc_srgd_repro_grid *g = &R->grid;
    dpc_srgd_config c;
    /* E1 (one seed per point at smoke scale: salt 100) */
    double xn[8], yn[8];
    for (size_t i = 0; i < g->nTn; i++) {
        const dpc_srgd_repro_vs_n_row *w = &R->vs_n[i];
        size_t n = g->Tn[i] * g->Tn[i] * g->Tn[i] * g->Tn[i];
        double np = srgd_run(n, g->p_n, 0, INFINITY, DPC_SRGD_ACCEL, S + 100, &c);
        double dp = srgd_run(n, g->p_n, 0, g->eps_n, DPC_SRGD_ACCEL, S + 100, NULL);
        double un = srgd_run(n, g->p_n, 0, INFINITY, DPC_SRGD_SRG, S + 100, NULL);
        CHECK(w->n == n && w->T == c.steps && w->B == c.batch && w->seed0 == S + 100, "E1 row %zu", i);
        CHECK(w->nonprivate_p2.mean == np, "E1 non-private %zu: %g vs %g", i, w->nonprivate_p2.mean, np);
        CHECK(w->private_part.mean == dp - np, "E1 private part %zu", i);
        CHECK(w->unaccelerated.mean == un, "E1 unaccelerated %zu", i);
        CHECK(isnan(w->nonprivate_p2.se), "one seed: no standard error");
        xn[i] = (double)n;
        yn[i] = np;
    }
    CHECK_NEAR_REL(R->slope_n_p2, ols_loglog(xn, yn, g->nTn), 1e-9, "E1 slope");
    /* E2: the non-private and private runs at the smallest p (salt 5000, seeds s = 0, 1) */
    double m = 0;
    for (uint64_t s = 0; s < g->seeds_private; s++)
        m += (srgd_run(g->n_private, g->ps[0], g->relevant, R->eps_p, DPC_SRGD_ACCEL, S + 5000 + s, NULL) -
              srgd_run(g->n_private, g->ps[0], g->relevant, INFINITY, DPC_SRGD_ACCEL, S + 5000 + s, NULL)) /
             (double)g->seeds_private;
    CHECK_NEAR_REL(R->vs_p[0].private_part.mean, m, 1e-12, "E2 private part at p = %zu", g->ps[0]);
    /* eps_p: beta = k_p beta_0 at p = ps[0] */
    CHECK_NEAR_REL(R->vs_p[0].beta, g->k_p * R->beta0, 1e-6, "E2 beta = k_p beta_0");
    (void)srgd_run(g->n_private, g->ps[0], g->relevant, INFINITY, DPC_SRGD_ACCEL, 1, &c);
    CHECK(R->beta0 == c.beta && R->T_private == c.steps, "beta_0 and T of the E2 problem");
    CHECK_NEAR_REL(R->beta_max_fit, R->lambda1 * (double)c.steps * (double)c.steps / 8, 1e-15,
                   "fit bound");
    size_t nf = 0;
    for (size_t i = 0; i < g->nks; i++) {
        const dpc_srgd_repro_vs_eps_row *w = &R->vs_eps[i];
        CHECK_NEAR_REL(w->beta, w->k * R->beta0, 1e-6, "E3 beta = k beta_0 (k = %g)", w->k);
        CHECK(w->in_fit == (w->k >= 3 && w->beta <= R->beta_max_fit), "E3 in_fit %zu", i);
        nf += (size_t)w->in_fit;
    }
    CHECK(nf == R->fit_points, "fit points");
    /* E6: z and the verdicts from the rows */
    int all = 1, any = 0;
    for (size_t i = 0; i < g->ncs; i++) {
        const dpc_srgd_repro_tree_row *t = &R->tree[i];
        double z = (t->independent.mean - t->tree.mean) /
                   sqrt(t->tree.se * t->tree.se + t->independent.se * t->independent.se);
        CHECK(t->z == z && t->wins == (z > 3), "E6 z %zu", i);
        CHECK(g->honaker ? !isnan(t->honaker.mean) : isnan(t->honaker.mean), "Honaker %zu", i);
        if (t->T >= 64) any = 1, all &= t->wins;
    }
    CHECK(R->tree_beats_independent == (any && all), "tree verdict");
}

static void check_rest(const dpc_srgd_repro_result *R)
{
    const dpc_srgd_repro_grid *g = &R->grid;
    dpc_error err = {0};
    for (size_t i = 0; i < 2 * g->nab; i++) { /* E4: the presets of each regime */
        const dpc_srgd_repro_regime_row *w = &R->regimes[i];
        dpc_srgd_config c;
        dpc_srgd_config_init(&c);
        c.L = 2 + 1.8 + 0.5; /* P2: L = R + w_norm + noise; M = 1; R = 2 */
        c.M = 1;
        c.R = 2;
        c.epsilon = INFINITY;
        c.delta = 1e-6;
        c.allow_large_delta = 1;
        CHECK_OK(dpc_srgd_preset(&c, w->regime, 1, 0, w->n, 32, &err), &err);
        CHECK(w->regime == (i % 2 ? DPC_SRGD_REGIME_B : DPC_SRGD_REGIME_A), "E4 order");
        CHECK(w->T == c.steps && w->B == c.batch, "E4 T, B (n %zu, regime %d)", w->n, w->regime);
    }
    for (size_t e = 0; e < g->neb; e++) /* E7: the trainer's runs are calibrated and private */
        for (size_t a = 2; a < DPC_SRGD_REPRO_NMETHODS; a++)
            CHECK(R->baselines[e][a].noise_multiplier > 0 && R->baselines[e][a].B == g->base_batch &&
                  isfinite(R->baselines[e][a].excess.mean), "E7 baseline %zu", a);
    double flat = 0; /* E8: the flatness from the records */
    CHECK(R->trace_T[0] > 0 && R->trace_T[1] > R->trace_T[0], "E8: regime B takes more rounds");
    for (size_t s = 0; s < R->trace_T[0]; s++)
        flat = fmax(flat, R->trace[0][s].max_norm / R->trace[0][0].max_norm);
    CHECK(R->regime_a_max_delta_over_first_step == flat && flat >= 1, "E8 flatness %g", flat);
    size_t jobs = 5 * g->nTn * g->seeds_n + 2 * g->nps * g->seeds_private +
                  (1 + g->nks) * g->seeds_private + 4 * g->nab * g->seeds_ablation +
                  (g->honaker ? 4 : 3) * g->ncs * g->seeds_ablation +
                  g->neb * (2 + 2 * g->nlr) * g->seeds_baseline + 2;
    CHECK(R->runs == jobs && R->calibrations == 2 * g->neb, "job count %zu vs %zu", R->runs, jobs);
}

static void test_smoke(void)
{
    dpc_error err = {0};
    dpc_srgd_repro_params p;
    dpc_srgd_repro_params_init(&p);
    p.scale = DPC_SRGD_REPRO_SMOKE;
    p.seed = 3;
    dpc_srgd_repro_result *r1 = NULL, *r2 = NULL;
    CHECK_OK(dpc_srgd_repro_run(&p, &r1, &err), &err);
    p.threads = 2;
    CHECK_OK(dpc_srgd_repro_run(&p, &r2, &err), &err);
    if (!r1 || !r2) goto out;
    size_t runs, cal;
    CHECK_OK(dpc_srgd_repro_count(&p, &runs, &cal, &err), &err);
    CHECK(runs == r1->runs && cal == r1->calibrations, "count = the run's");
    /* 1 and 2 threads: the same numbers (everything before the trace pointers, and the traces) */
    CHECK(!memcmp(r1->vs_n, r2->vs_n, sizeof r1->vs_n) && !memcmp(r1->tree, r2->tree, sizeof r1->tree) &&
          !memcmp(r1->baselines, r2->baselines, sizeof r1->baselines) &&
          !memcmp(r1->vs_eps, r2->vs_eps, sizeof r1->vs_eps), "thread count changes nothing");
    CHECK(r1->trace_T[1] == r2->trace_T[1] &&
          !memcmp(r1->trace[1], r2->trace[1], r1->trace_T[1] * sizeof *r1->trace[1]), "traces");
    check_rows(r1, p.seed);
    check_rest(r1);
out:
    dpc_srgd_repro_result_free(r1);
    dpc_srgd_repro_result_free(r2);
}

/* The field table covers dpc_srgd_repro_params and _init writes its defaults (the values it wrote
 * by hand before the table: full, 20240101, 1 thread, AUTO levels, no clock). */
static void test_field_table(void)
{
    dpc_error err = {0};
    const dpc_field_table *t = dpc_srgd_repro_params_fields();
    CHECK(t && t->size == sizeof(dpc_srgd_repro_params) && t->count == 6, "table of the struct");
    CHECK_OK(dpc_field_table_verify(t, &err), &err);
    dpc_srgd_repro_params p;
    memset(&p, 0x5a, sizeof p);
    dpc_srgd_repro_params_init(&p);
    CHECK(p.scale == DPC_SRGD_REPRO_FULL && p.seed == 20240101 && p.threads == 1 &&
              p.model_isa == DPC_ISA_AUTO && p.noise_isa == DPC_ISA_AUTO && p.cpu_clock == NULL,
          "defaults");
    CHECK_OK(dpc_field_check(t, &p, &err), &err);
    struct { const char *field; double v; } bad[] = {
        {"scale", 3}, {"threads", 0}, {"threads", 257}, {"model_isa", 4}, {"noise_isa", -1}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dpc_srgd_repro_params b = p;
        CHECK_OK(dpc_field_set(dpc_field_find(t, bad[i].field, NULL), &b, bad[i].v, &err), &err);
        CHECK(dpc_field_check(t, &b, &err) == DPC_E_INVALID && !strcmp(err.field, bad[i].field),
              "%s = %g refused: '%s'", bad[i].field, bad[i].v, err.msg);
    }
}

int main(void)
{
    test_field_table();
    test_refusals_and_grid();
    test_smoke();
    return TEST_SUMMARY();
}
