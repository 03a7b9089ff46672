/* test_srgd_setup.c — dpc_srgd_config_resolve (dpcorr/papers/srgd.h): the constants L and M
 * (the problem's unless given; on data the logistic and squared-loss formulas from the public
 * row-norm bound, recomputed here), the regime's preset (against dpc_srgd_preset called
 * directly), the overrides, the evaluation hook, and the refusals naming their field. */
#include "dpcorr.h"
#include "harness.h"

#include <math.h>
#include <string.h>

static dpc_model *model_of(const char *spec, size_t d, size_t k)
{
    dpc_model_config mc;
    dpc_model *m = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_model_parse(&mc, spec, d, k, &err), &err);
    CHECK_OK(dpc_model_new(&m, &mc, &err), &err);
    return m;
}

static void test_problem(void)
{
    dpc_error err = {0};
    dpc_rng rng;
    dpc_rng_seed(&rng, 5);
    dpc_srgd_problem_config pc;
    dpc_srgd_problem_config_init(&pc);
    pc.kind = DPC_SRGD_P2_LSQ;
    pc.n = 4096;
    pc.p = 6;
    dpc_srgd_problem *pr = NULL;
    CHECK_OK(dpc_srgd_problem_new(&pr, &pc, &rng, 0, &err), &err);
    dpc_model *m = model_of(dpc_srgd_problem_model_spec(pr), 6, 0);
    if (!pr || !m) return;
    double L, M;
    dpc_srgd_problem_constants(pr, &L, &M, NULL);
    dpc_srgd_setup s;
    dpc_srgd_setup_init(&s);
    CHECK(s.regime == DPC_SRGD_REGIME_A && s.c == DPC_SRGD_PRACTICAL_C, "setup defaults");
    dpc_srgd_config c, ref;
    dpc_srgd_config_init(&c);
    c.R = 2; /* the caller's (the ball of the problem) */
    c.epsilon = 1;
    c.eval_every = 1;
    ref = c;
    ref.L = L;
    ref.M = M;
    CHECK_OK(dpc_srgd_preset(&ref, DPC_SRGD_REGIME_A, 1, 0, 4096, 6, &err), &err);
    CHECK_OK(dpc_srgd_config_resolve(&c, &s, pr, m, dpc_srgd_problem_data(pr), NULL, &err), &err);
    CHECK(c.L == L && c.M == M, "the problem's constants");
    CHECK(c.steps == ref.steps && c.batch == ref.batch && c.beta == ref.beta && c.clip == ref.clip,
          "the preset's schedule (T %zu vs %zu)", c.steps, ref.steps);
    CHECK(c.risk == dpc_srgd_problem_risk && c.risk_ctx == pr, "the problem's exact risk");
    /* given constants and overrides win; Regime B */
    dpc_srgd_config_init(&c);
    c.R = 2; /* the caller's (the ball of the problem) */
    c.epsilon = 1;
    s.L = 7;
    s.regime = DPC_SRGD_REGIME_B;
    s.steps = 5;
    s.beta = 2.5;
    CHECK_OK(dpc_srgd_config_resolve(&c, &s, pr, m, dpc_srgd_problem_data(pr), NULL, &err), &err);
    CHECK(c.L == 7 && c.M == M && c.steps == 5 && c.beta == 2.5, "given L, overrides");
    CHECK(c.batch == (size_t)floor(sqrt(4096.0)), "Regime B: B = floor(sqrt n) = %zu", c.batch);
    /* a preset refusal names its field */
    dpc_srgd_config_init(&c);
    c.R = 2; /* the caller's (the ball of the problem) */
    c.epsilon = -1;
    CHECK(dpc_srgd_config_resolve(&c, &s, pr, m, dpc_srgd_problem_data(pr), NULL, &err) &&
          !strcmp(err.field, "epsilon"), "epsilon refused: %s", err.msg);
    dpc_model_free(m);
    dpc_srgd_problem_free(pr);
}

static void test_data(void)
{
    dpc_error err = {0};
    dpc_rng rng;
    dpc_rng_seed(&rng, 9);
    dpc_dataset *ds = NULL;
    CHECK_OK(dpc_data_synth_linreg(&ds, &rng, 0, 500, 3, 0.0, 0.1, NULL, &err), &err);
    if (!ds) return;
    dpc_model *lin = model_of("linear", 3, 0), *mlp = model_of("mlp:4", 3, 0);
    dpc_srgd_setup s;
    dpc_srgd_setup_init(&s);
    dpc_srgd_config c;
    dpc_srgd_config_init(&c);
    c.R = 2; /* the caller's (the ball of the problem) */
    c.epsilon = 1;
    CHECK(dpc_srgd_config_resolve(&c, &s, NULL, lin, ds, NULL, &err) == DPC_E_INVALID &&
          !strcmp(err.field, "x_norm_bound"), "no public row-norm bound: %s", err.msg);
    CHECK_OK(dpc_dataset_clip_rows(ds, 2, &err), &err);
    CHECK(dpc_srgd_config_resolve(&c, &s, NULL, lin, ds, NULL, &err) == DPC_E_INVALID &&
          !strcmp(err.field, "y_bound"), "linear needs a bound on |y|: %s", err.msg);
    CHECK(dpc_srgd_config_resolve(&c, &s, NULL, mlp, ds, NULL, &err) == DPC_E_UNSUPPORTED &&
          !strcmp(err.field, "model"), "mlp: %s", err.msg);
    s.y_bound = 3;
    c.eval_every = 1;
    c.R = 1.5;
    int bias = dpc_model_get_config(lin)->bias;
    double b = 4.0 + (bias ? 1 : 0);
    CHECK_OK(dpc_srgd_config_resolve(&c, &s, NULL, lin, ds, NULL, &err), &err);
    CHECK_NEAR_REL(c.L, sqrt(b) * (sqrt(b) * 1.5 + 3), 1e-15, "squared loss L = sqrt(b)(sqrt(b) R + Y)");
    CHECK_NEAR_REL(c.M, b, 1e-15, "squared loss M = b");
    CHECK(c.eval_every == 0 && !c.risk && !c.heldout, "nothing to evaluate: no evaluation");
    dpc_srgd_config_init(&c);
    c.R = 2; /* the caller's (the ball of the problem) */
    c.epsilon = 1;
    c.eval_every = 2;
    s.M = 0.25; /* a given M is kept, L derived */
    CHECK_OK(dpc_srgd_config_resolve(&c, &s, NULL, lin, ds, ds, &err), &err);
    CHECK(c.M == 0.25 && c.heldout == ds && c.eval_every == 2, "given M kept; the held-out set");
    dpc_model_free(lin);
    dpc_model_free(mlp);
    dpc_dataset_free(ds);
}

/* The preset's constant (what the front ends print): c_M = M R / L (regime B), c_DP of Eq. 19
 * recomputed here from its formula (literal), cc (practical); and dpc_srgd_preset built from it
 * (regime B: C_Delta = (8 c_M + 4) L; literal: C_Delta = c_DP L). */
static void test_preset_constant(void)
{
    dpc_srgd_config c;
    dpc_srgd_config_init(&c);
    c.L = 3, c.M = 2, c.R = 5, c.epsilon = 1, c.delta = 1e-6;
    const char *what = NULL;
    double cm = dpc_srgd_preset_constant(&c, DPC_SRGD_REGIME_B, 7, 1, 4096, 1e-6, &what);
    CHECK(cm == 2.0 * 5.0 / 3.0 && !strcmp(what, "paper constants, c_M ="),
          "regime B: c_M = M R / L = %g (%s)", cm, what);
    dpc_error err = {0};
    CHECK_OK(dpc_srgd_preset(&c, DPC_SRGD_REGIME_B, 7, 1, 4096, 4, &err), &err);
    CHECK_NEAR_REL(c.clip, (8.0 * (2.0 * 5.0 / 3.0) + 4.0) * 3.0, 1e-15, "regime B C_Delta");
    double n = 2e6, d = 1e-6, l2 = log2(n);
    double cdp = 4.0 * sqrt(2.0) * l2 * sqrt(l2) * sqrt(log(2.0 * n / d)) * log(2.5 / d);
    double lit = dpc_srgd_preset_constant(&c, DPC_SRGD_REGIME_A, 7, 1, (size_t)n, d, &what);
    CHECK_NEAR_REL(lit, cdp, 1e-12, "literal c_DP(2e6, 1e-6) = %g (Eq. 19: %g)", lit, cdp);
    CHECK(!strcmp(what, "literal c_DP ="), "literal label: %s", what);
    dpc_srgd_config_init(&c);
    c.L = 3, c.M = 2, c.R = 5, c.epsilon = 1, c.delta = d, c.allow_large_delta = 1;
    CHECK_OK(dpc_srgd_preset(&c, DPC_SRGD_REGIME_A, 7, 1, (size_t)n, 4, &err), &err);
    CHECK_NEAR_REL(c.clip, cdp * 3.0, 1e-12, "literal C_Delta = c_DP L");
    double pc = dpc_srgd_preset_constant(&c, DPC_SRGD_REGIME_A, 2.5, 0, 4096, d, &what);
    CHECK(pc == 2.5 && !strcmp(what, "practical c ="), "practical: cc = %g (%s)", pc, what);
    CHECK(isnan(dpc_srgd_preset_constant(&c, DPC_SRGD_REGIME_A, 1, 1, 1, d, NULL)),
          "literal at n = 1: NAN (c_DP undefined)");
}

/* The default model on data: logistic for two classes, linear (squared loss) for a regression
 * set; both parse as models of the set. */
static void test_default_model(void)
{
    dpc_rng rng;
    dpc_rng_seed(&rng, 9);
    dpc_error err = {0};
    dpc_dataset *cl = NULL, *rg = NULL;
    CHECK_OK(dpc_data_load_spec(&cl, NULL, "synthetic:logistic,n=40,d=3", &rng, &err), &err);
    CHECK_OK(dpc_data_load_spec(&rg, NULL, "synthetic:linreg,n=40,d=3", &rng, &err), &err);
    if (!cl || !rg) return;
    CHECK(cl->n_classes == 2 && !strcmp(dpc_srgd_default_model(cl), "logistic"),
          "two classes: logistic (%s)", dpc_srgd_default_model(cl));
    CHECK(rg->n_classes == 0 && !strcmp(dpc_srgd_default_model(rg), "linear"),
          "regression: linear (%s)", dpc_srgd_default_model(rg));
    CHECK(!strcmp(dpc_srgd_default_model(NULL), "linear"), "no data: linear");
    dpc_model_config mc;
    CHECK_OK(dpc_model_parse(&mc, dpc_srgd_default_model(cl), cl->d, cl->n_classes, &err), &err);
    CHECK_OK(dpc_model_parse(&mc, dpc_srgd_default_model(rg), rg->d, rg->n_classes, &err), &err);
    dpc_dataset_free(cl);
    dpc_dataset_free(rg);
}

/* beta R^2 / T^2, recomputed; NAN without steps. */
static void test_optimization_term(void)
{
    dpc_srgd_plan p;
    memset(&p, 0, sizeof p);
    p.beta = 3.5, p.steps = 7;
    CHECK_NEAR_REL(dpc_srgd_optimization_term(&p, 2.0), 3.5 * 4.0 / 49.0, 1e-15, "beta R^2/T^2");
    p.steps = 0;
    CHECK(isnan(dpc_srgd_optimization_term(&p, 2.0)) && isnan(dpc_srgd_optimization_term(NULL, 1)),
          "no steps: NAN");
}

int main(void)
{
    test_problem();
    test_data();
    test_preset_constant();
    test_default_model();
    test_optimization_term();
    return TEST_SUMMARY();
}
