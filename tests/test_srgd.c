/* test_srgd.c — Accelerated-DP-SRGD: privacy side. The note's oracles O1 (tree noise: variance
 * sigma^2 popcount, covariance = shared nodes, unbiased, node counts, the w.h.p. error bound,
 * exact prefix sums without noise; and the noise recomputed from the RNG node by node), O2 (GDP
 * calibration table), O7 (2n - B gradient evaluations, T rounds, every example once) and O8
 * (zero-out: one increment changes, by <= C_Delta/B; the node vector by <= (C_Delta/B)
 * sqrt(1 + ceil(log2 T))); plus the presets (Eq. 19, Regime B), the literal constants'
 * infeasibility, validation and determinism. Oracles: tests/gen/srgd_oracles.py. */
#include "dpcorr.h"
#include "harness.h"
#include "srgd_oracles.h"

#include <stdint.h>

static dpc_model *model_of(const char *spec, size_t d, size_t k)
{
    dpc_model_config mc;
    dpc_model *m = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_model_parse(&mc, spec, d, k, &err), &err);
    CHECK_OK(dpc_model_new(&m, &mc, &err), &err);
    return m;
}

static dpc_srgd_problem *problem(dpc_srgd_problem_kind kind, size_t n, size_t p, double w,
                                 uint64_t seed)
{
    dpc_srgd_problem_config pc;
    dpc_srgd_problem_config_init(&pc);
    pc.kind = kind;
    pc.n = n;
    pc.p = p;
    pc.w_norm = w;
    dpc_rng rng;
    dpc_rng_seed(&rng, seed);
    dpc_srgd_problem *pr = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_srgd_problem_new(&pr, &pc, &rng, 0, &err), &err);
    return pr;
}

static void base_cfg(dpc_srgd_config *c, size_t T, size_t B, double eps)
{
    dpc_srgd_config_init(c);
    c->L = 1;
    c->M = 1;
    c->R = 2;
    c->steps = T;
    c->batch = B;
    c->beta = 2;
    c->clip = 1;
    c->epsilon = eps;
    c->delta = 1e-6;
}

static unsigned popcount(uint64_t v)
{
    unsigned c = 0;
    for (; v; v >>= 1) c += (unsigned)(v & 1);
    return c;
}

/* ==== O2: GDP calibration, c_DP, presets ====================================================== */

static void test_o2_calibration(void)
{
    dpc_error err = {0};
    for (size_t i = 0; i < sizeof srgd_gdp_table / sizeof srgd_gdp_table[0]; i++) {
        const double *r = srgd_gdp_table[i];
        double mu = 0, mp = 0, d = 0;
        CHECK_OK(dpc_srgd_mu(r[0], r[1], DPC_CALIBRATION_ACCOUNTANT, &mu, &err), &err);
        CHECK_NEAR_REL(mu, r[2], 1e-9, "exact mu(eps=%g, delta=%g)", r[0], r[1]);
        if (r[0] <= 1) {
            CHECK_OK(dpc_srgd_mu(r[0], r[1], DPC_CALIBRATION_PAPER, &mp, &err), &err);
            CHECK_NEAR_REL(mp, r[3], 1e-12, "paper mu(eps=%g, delta=%g)", r[0], r[1]);
            CHECK_OK(dpc_gdp_delta(mp, r[0], &d, &err), &err);
            CHECK_NEAR_REL(d, r[4], 1e-6, "delta achieved by the paper mu");
            CHECK(d <= r[1] / 2, "the paper's mu gives (eps, delta/2): %g > %g", d, r[1] / 2);
        } else {
            dpc_status st = dpc_srgd_mu(r[0], r[1], DPC_CALIBRATION_PAPER, &mp, &err);
            CHECK(st == DPC_E_PRIVACY, "paper mu refuses eps = %g > 1 (status %d)", r[0], st);
        }
    }
    /* the note's 4-digit table */
    double mu;
    CHECK_OK(dpc_srgd_mu(1, 1e-6, DPC_CALIBRATION_ACCOUNTANT, &mu, &err), &err);
    CHECK_NEAR_ABS(mu, 0.2367, 5e-5, "note: eps = 1, delta = 1e-6 => mu = 0.2367");
    CHECK_OK(dpc_srgd_mu(8, 1e-6, DPC_CALIBRATION_ACCOUNTANT, &mu, &err), &err);
    CHECK_NEAR_ABS(mu, 1.5315, 5e-5, "note: eps = 8 => mu = 1.5315");
    CHECK_OK(dpc_srgd_mu(INFINITY, 1e-6, DPC_CALIBRATION_ACCOUNTANT, &mu, &err), &err);
    CHECK(isinf(mu), "eps = inf is non-private");
    CHECK(dpc_srgd_mu(0, 1e-6, DPC_CALIBRATION_ACCOUNTANT, &mu, &err) == DPC_E_INVALID &&
              strstr(err.msg, "epsilon"),
          "eps = 0 refused naming epsilon: %s", err.msg);
    for (size_t i = 0; i < sizeof srgd_cdp_table / sizeof srgd_cdp_table[0]; i++)
        CHECK_NEAR_REL(dpc_srgd_c_dp(srgd_cdp_table[i][0], srgd_cdp_table[i][1]),
                       srgd_cdp_table[i][2], 1e-12, "c_DP(%g, %g)", srgd_cdp_table[i][0],
                       srgd_cdp_table[i][1]);
    CHECK_NEAR_REL(dpc_srgd_c_dp(1e6, 1e-6), 3.95e4, 2e-3, "note: c_DP(1e6, 1e-6) = 3.95e4");
    CHECK_NEAR_REL(dpc_srgd_literal_min_n(1e-6), SRGD_LITERAL_MIN_N_1E6, 1e-6, "literal min n");
    CHECK(isnan(dpc_srgd_c_dp(1, 1e-6)), "c_DP needs n >= 2");
}

static void test_presets(void)
{
    dpc_error err = {0};
    dpc_srgd_config c;
    for (size_t i = 0; i < sizeof srgd_preset_a / sizeof srgd_preset_a[0]; i++) {
        const double *r = srgd_preset_a[i];
        dpc_srgd_config_init(&c);
        c.epsilon = r[2] > 0 ? r[2] : INFINITY;
        c.delta = r[3];
        c.L = r[4];
        c.M = r[5];
        c.R = r[6];
        CHECK_OK(dpc_srgd_preset(&c, DPC_SRGD_REGIME_A, r[7], 0, (size_t)r[0], (size_t)r[1], &err),
                 &err);
        CHECK(c.steps == (size_t)r[8] && c.batch == (size_t)r[9], "regime A row %zu: T %zu B %zu, "
              "want %g %g", i, c.steps, c.batch, r[8], r[9]);
        CHECK_NEAR_REL(c.beta, r[10], 1e-9, "regime A row %zu beta", i);
        CHECK_NEAR_REL(c.clip, r[11], 1e-15, "regime A row %zu clip", i);
    }
    for (size_t i = 0; i < sizeof srgd_preset_lit / sizeof srgd_preset_lit[0]; i++) {
        const double *r = srgd_preset_lit[i];
        dpc_srgd_config_init(&c);
        c.epsilon = r[2];
        c.delta = r[3];
        c.allow_large_delta = 1; /* the paper's delta at these n, kept where it is >= 1/n */
        c.L = r[4];
        c.M = 0.25;
        c.R = r[5];
        CHECK_OK(dpc_srgd_preset(&c, DPC_SRGD_REGIME_A, 1, 1, (size_t)r[0], (size_t)r[1], &err),
                 &err);
        CHECK(c.steps == (size_t)r[6] && c.batch == (size_t)r[7], "literal row %zu: T %zu B %zu",
              i, c.steps, c.batch);
        CHECK_NEAR_REL(c.beta, r[8], 1e-9, "literal row %zu beta", i);
        CHECK_NEAR_REL(c.clip, r[9], 1e-12, "literal row %zu clip", i);
    }
    for (size_t i = 0; i < sizeof srgd_preset_b / sizeof srgd_preset_b[0]; i++) {
        const double *r = srgd_preset_b[i];
        dpc_srgd_config_init(&c);
        c.epsilon = 1;
        c.L = r[1];
        c.M = r[2];
        c.R = r[3];
        CHECK_OK(dpc_srgd_preset(&c, DPC_SRGD_REGIME_B, 1, 0, (size_t)r[0], 3, &err), &err);
        CHECK(c.steps == (size_t)r[4] && c.batch == (size_t)r[5], "regime B row %zu: T %zu B %zu",
              i, c.steps, c.batch);
        CHECK_NEAR_REL(c.beta, r[6], 1e-12, "regime B row %zu beta", i);
        CHECK_NEAR_REL(c.clip, r[7], 1e-15, "regime B row %zu clip", i);
        CHECK(c.beta >= 2 * c.M * (double)c.steps, "regime B: beta >= 2 M T (Lemma 5.9)");
    }
    /* the note's example: the literal constants cannot run at n = 1e6, delta = 1e-6 */
    dpc_srgd_config_init(&c);
    c.epsilon = 1;
    c.delta = 1e-6; /* the note's: = 1/n, allowed explicitly */
    c.allow_large_delta = 1;
    c.L = 1;
    c.M = 0.25;
    c.R = 1;
    dpc_status st = dpc_srgd_preset(&c, DPC_SRGD_REGIME_A, 1, 1, 1000000, 10, &err);
    CHECK(st == DPC_E_UNSUPPORTED, "literal regime A at n = 1e6 is infeasible (status %d)", st);
    CHECK(strstr(err.msg, "c_DP = 3.947e+04") && strstr(err.msg, "T = c_DP n^(1/4) = 1.248e+06") &&
              strstr(err.msg, "1.43e+06"),
          "the message explains: %s", err.msg);
    st = dpc_srgd_preset(&c, DPC_SRGD_REGIME_A, 0, 0, 1000, 10, &err);
    CHECK(st == DPC_E_INVALID && strstr(err.msg, "c:"), "c = 0 refused: %s", err.msg);
    st = dpc_srgd_preset(&c, DPC_SRGD_REGIME_A, 1e300, 0, 1000, 10, &err); /* beta = c^2 L/R */
    CHECK(st == DPC_E_RANGE && !strcmp(err.field, "c") && strstr(err.msg, "overflows"),
          "c = 1e300 refused naming c (not the derived beta): %s", err.msg);
    CHECK_OK(dpc_srgd_preset(&c, DPC_SRGD_REGIME_A, 1e10, 0, 1000, 10, &err), &err);
    CHECK(isfinite(c.beta) && c.steps == 1000, "c = 1e10 (beyond the CLI's old 1e9) is a preset");
    c.R = INFINITY;
    st = dpc_srgd_preset(&c, DPC_SRGD_REGIME_A, 1, 0, 1000, 10, &err);
    CHECK(st == DPC_E_INVALID && strstr(err.msg, "R:"), "presets need a finite R: %s", err.msg);
}

/* ==== validation ============================================================================= */

static void test_validation(void)
{
    dpc_error err = {0};
    dpc_srgd_config c;
    base_cfg(&c, 10, 11, 1);
    CHECK(dpc_srgd_config_check(&c, 100, &err) == DPC_E_INVALID && strstr(err.msg, "batch:"),
          "B T > n names batch: %s", err.msg);
    base_cfg(&c, 10, 10, 1);
    CHECK_OK(dpc_srgd_config_check(&c, 100, &err), &err);
    c.clip = INFINITY;
    CHECK(dpc_srgd_config_check(&c, 100, &err) == DPC_E_INVALID && strstr(err.msg, "clip:"),
          "an infinite clip is refused for a private run: %s", err.msg);
    c.epsilon = INFINITY;
    CHECK_OK(dpc_srgd_config_check(&c, 100, &err), &err);
    base_cfg(&c, 10, 10, 1);
    c.z_step = 1.5;
    CHECK(dpc_srgd_config_check(&c, 100, &err) == DPC_E_INVALID && strstr(err.msg, "z_step:"),
          "z_step > 1: %s", err.msg);
    base_cfg(&c, 10, 10, 1);
    c.beta = 0;
    CHECK(dpc_srgd_config_check(&c, 100, &err) == DPC_E_INVALID && strstr(err.msg, "beta:"),
          "beta = 0: %s", err.msg);
    base_cfg(&c, 10, 10, 1);
    c.delta = 1;
    CHECK(dpc_srgd_config_check(&c, 100, &err) == DPC_E_INVALID && strstr(err.msg, "delta:"),
          "delta = 1: %s", err.msg);
    base_cfg(&c, 10, 10, 1);
    c.eval_every = 1;
    CHECK(dpc_srgd_config_check(&c, 100, &err) == DPC_E_INVALID && strstr(err.msg, "eval_every"),
          "eval_every without a risk: %s", err.msg);
    base_cfg(&c, 0, 10, 1);
    CHECK(dpc_srgd_config_check(&c, 100, &err) == DPC_E_INVALID && strstr(err.msg, "steps:"),
          "T = 0: %s", err.msg);
    dpc_srgd_variant v;
    dpc_srgd_noise k;
    CHECK(dpc_srgd_variant_parse("accel-sgd", &v, &err) == DPC_OK && v == DPC_SRGD_ACCEL_SGD,
          "variant parse");
    CHECK(dpc_srgd_noise_parse("independent", &k, &err) == DPC_OK &&
              k == DPC_SRGD_NOISE_INDEPENDENT,
          "noise parse");
    CHECK(dpc_srgd_noise_parse("gauss", &k, &err) == DPC_E_INVALID && strstr(err.msg, "noise"),
          "unknown noise");
    CHECK(!strcmp(dpc_srgd_variant_name(DPC_SRGD_SRG), "srg"), "variant name");
    /* the run checks the model against the data */
    dpc_srgd_problem *pr = problem(DPC_SRGD_P2_LSQ, 100, 4, 1, 3);
    dpc_model *m = model_of("linear:nobias", 5, 0);
    dpc_rng rng;
    dpc_rng_seed(&rng, 1);
    dpc_srgd *s = NULL;
    base_cfg(&c, 10, 10, 1);
    CHECK(dpc_srgd_new(&s, m, dpc_srgd_problem_data(pr), &c, &rng, &err) == DPC_E_INVALID &&
              s == NULL && strstr(err.msg, "features"),
          "feature mismatch: %s", err.msg);
    dpc_srgd_free(NULL);
    dpc_srgd_problem_free(NULL);
    dpc_model_free(m);
    dpc_srgd_problem_free(pr);
}

/* ==== O1: the tree noise as the run releases it ================================================ */

/* zero data: every gradient (x = 0, no bias) is 0, so S^_t = xi_t exactly */
static dpc_dataset *zero_data(size_t n, size_t d)
{
    dpc_dataset *ds = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_dataset_new(&ds, n, d, 0, &err), &err);
    return ds;
}

static void test_o1_tree(void)
{
    dpc_error err = {0};
    const size_t T = 16, P = 200, B = 4;
    size_t nseeds = tests_scale() < 1 ? 10 : 40;
    dpc_dataset *ds = zero_data(T * B, P);
    dpc_model *m = model_of("linear:nobias", P, 0);
    dpc_srgd_config c;
    base_cfg(&c, T, B, 1.0);
    double *xs = calloc(nseeds * P * T, sizeof *xs); /* (seed, coord, t) */
    double sigma = 0, mu = 0;
    double bound_max = 0;
    for (size_t sd = 0; sd < nseeds; sd++) {
        dpc_rng rng;
        dpc_rng_seed(&rng, 1000 + sd);
        dpc_srgd *s = NULL;
        CHECK_OK(dpc_srgd_new(&s, m, ds, &c, &rng, &err), &err);
        if (!s) break;
        const dpc_srgd_plan *L = dpc_srgd_plan_get(s);
        const dpc_ledger *G = dpc_srgd_ledger(s);
        sigma = L->sigma;
        mu = L->mu;
        /* node std (C/B) sqrt(1 + ceil(log2 16)) / mu; the tree has 5 levels for T = 16 */
        CHECK_NEAR_REL(L->sigma, c.clip / (double)B * sqrt(5.0) / L->mu, 1e-14, "sigma_S");
        CHECK_NEAR_REL(L->sens_mechanism, sqrt(5.0), 1e-12, "mechanism sensitivity at T = 16");
        CHECK(L->delta_achieved <= c.delta, "achieved delta %g", L->delta_achieved);
        /* the shared ledger: the accountant's GDP epsilon at the target delta for the noise that
         * runs, and z = sigma / ((C/B) colnorm) */
        double ge;
        CHECK_OK(dpc_gdp_epsilon(L->mu_effective, c.delta, &ge, &err), &err);
        CHECK_NEAR_REL(G->epsilon, ge, 1e-14, "ledger epsilon = GDP(mu_effective)");
        CHECK(G->epsilon <= c.epsilon * (1 + 1e-9), "within the target: %g", G->epsilon);
        CHECK_NEAR_REL(G->noise_multiplier, L->sigma / (c.clip / (double)B) / L->sens_mechanism,
                       1e-14, "z = sigma / (unit colnorm)");
        CHECK(!strcmp(G->algorithm, "dp-srgd") && !strcmp(G->calibration, "accountant") &&
                  G->neighbor == DPC_NEIGHBOR_ZERO_OUT, "ledger names");
        dpc_rng_stream ns = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_NOISE, 0));
        for (size_t t = 0; t < T; t++) {
            CHECK_OK(dpc_srgd_step(s, NULL, &err), &err);
            const double *xi = dpc_srgd_prefix_noise(s), *Sh = dpc_srgd_prefix(s);
            double maxdev = 0, nr = 0;
            int same = 1;
            /* recompute xi_t from the RNG: node (h, i) uses row i 2^(h+1) + 2^h - 1 (mech.h) */
            uint64_t t1 = t + 1;
            for (size_t j = 0; j < P; j++) {
                double v = 0;
                for (unsigned h = 0; h < 6; h++)
                    if ((t1 >> h) & 1) {
                        uint64_t i = (t1 >> h) - 1; /* covers [i 2^h, (i+1) 2^h) */
                        uint64_t row = (i << (h + 1)) + (UINT64_C(1) << h) - 1;
                        v += dpc_rng_gaussian(&ns, row, j);
                    }
                v *= sigma;
                maxdev = fmax(maxdev, fabs(v - xi[j]));
                same &= Sh[j] == xi[j];
                xs[(sd * P + j) * T + t] = xi[j];
                nr += xi[j] * xi[j];
            }
            CHECK(same, "zero data: S^ = xi exactly (t = %zu)", t);
            CHECK(maxdev <= 1e-12 * sigma, "step %zu: xi equals the node sum from the RNG "
                  "(dev %g)", t, maxdev);
            /* O1(e): max prefix error <= 4 C log2^(3/2) T sqrt(p ln(2T/delta)) / mu, C = C_Delta/B */
            double bound = 4.0 * (c.clip / (double)B) * pow(log2((double)T), 1.5) *
                           sqrt((double)P * log(2.0 * (double)T / c.delta)) / mu;
            bound_max = fmax(bound_max, sqrt(nr) / bound);
        }
        dpc_srgd_free(s);
    }
    CHECK(bound_max <= 1.0, "O1(e): every prefix error within the tree bound (max ratio %.3f)",
          bound_max);
    /* O1(a,b,c): covariance of the prefixes = sigma^2 x shared nodes; mean 0 */
    double N = (double)(nseeds * P);
    for (size_t a = 0; a < T; a++) {
        double mean = 0;
        for (size_t r = 0; r < nseeds * P; r++) mean += xs[r * T + a];
        mean /= N;
        double va = sigma * sigma * popcount(a + 1);
        CHECK(fabs(mean) <= 5 * sqrt(va / N), "O1(c) prefix %zu: mean %g", a + 1, mean);
        for (size_t b = 0; b <= a; b++) {
            double cov = 0;
            for (size_t r = 0; r < nseeds * P; r++) cov += xs[r * T + a] * xs[r * T + b];
            cov /= N;
            double want = sigma * sigma * srgd_tree_shared[a][b];
            double vb = sigma * sigma * popcount(b + 1);
            double se = sqrt((va * vb + want * want) / N);
            CHECK(fabs(cov - want) <= 5 * se, "O1(a,b) Cov(xi_%zu, xi_%zu) = %g, want %g (se %g)",
                  a + 1, b + 1, cov, want, se);
            if (a == b)
                CHECK(srgd_tree_shared[a][a] == (int)popcount(a + 1), "oracle diagonal");
        }
    }
    free(xs);
    /* O1(d): each element lies in at most 1 + ceil(log2 T) nodes of the core's tree */
    for (size_t n = 1; n <= 70; n++) {
        dpc_mech_params mp;
        dpc_mech_params_init(&mp);
        mp.kind = DPC_MECH_TREE;
        mp.steps = n;
        dpc_mech *mech = NULL;
        CHECK_OK(dpc_mech_new(&mech, &mp, &err), &err);
        double *C = calloc(2 * n * n, sizeof *C);
        CHECK_OK(dpc_mech_dense_strategy(mech, C, &err), &err);
        unsigned lev = 0;
        while (((size_t)1 << lev) < n) lev++;
        for (size_t col = 0; col < n; col++) {
            double cnt = 0;
            for (size_t r = 0; r < 2 * n; r++) cnt += C[r * n + col];
            CHECK(cnt <= 1 + lev, "O1(d) n = %zu element %zu in %g nodes", n, col, cnt);
        }
        free(C);
        dpc_mech_free(mech);
    }
    dpc_model_free(m);
    dpc_dataset_free(ds);
}

/* O1(f) and O3 (second half): without noise the released prefix is exactly the sum of the
 * increments, recomputed along the trajectory by a second run object. */
static void test_o1f_exact_prefix(void)
{
    dpc_error err = {0};
    dpc_srgd_problem *pr = problem(DPC_SRGD_P1_LOGISTIC, 2000, 6, 1, 5);
    const dpc_dataset *ds = dpc_srgd_problem_data(pr);
    dpc_model *m = model_of("logistic:nobias", 6, 2);
    dpc_srgd_config c;
    base_cfg(&c, 20, 100, INFINITY);
    c.beta = 0.3;
    dpc_rng rng;
    dpc_rng_seed(&rng, 9);
    dpc_srgd *s = NULL, *s2 = NULL;
    CHECK_OK(dpc_srgd_new(&s, m, ds, &c, &rng, &err), &err);
    CHECK_OK(dpc_srgd_new(&s2, m, ds, &c, &rng, &err), &err);
    if (!s || !s2) return;
    CHECK(!dpc_srgd_plan_get(s)->private_run && dpc_srgd_plan_get(s)->sigma == 0,
          "non-private ledger");
    double x[6], xp[6] = {0}, d[6], sum[6] = {0};
    for (size_t t = 0; t < 20; t++) {
        memcpy(x, dpc_srgd_x(s), sizeof x);
        CHECK_OK(dpc_srgd_increment(s2, t, x, xp, d, NULL, &err), &err);
        CHECK_OK(dpc_srgd_step(s, NULL, &err), &err);
        double dev = 0, scale = 0;
        for (int j = 0; j < 6; j++) {
            sum[j] += d[j];
            dev = fmax(dev, fabs(sum[j] - dpc_srgd_prefix(s)[j]));
            scale = fmax(scale, fabs(sum[j]));
            CHECK(dpc_srgd_prefix_noise(s)[j] == 0, "no noise");
        }
        CHECK(dev <= 1e-14 * scale, "O1(f) t = %zu: S^_t = sum of increments (dev %g)", t, dev);
        memcpy(xp, x, sizeof x);
    }
    CHECK(dpc_srgd_step(s, NULL, &err) == DPC_E_RANGE, "step after T is DPC_E_RANGE");
    dpc_srgd_free(s);
    dpc_srgd_free(s2);
    dpc_model_free(m);
    dpc_srgd_problem_free(pr);
}

/* ==== O7: accounting of gradients, rounds, examples ============================================ */

static void test_o7_accounting(void)
{
    dpc_error err = {0};
    const size_t n = 1003;
    dpc_srgd_problem *pr = problem(DPC_SRGD_P2_LSQ, n, 5, 1, 11);
    dpc_model *m = model_of("linear:nobias", 5, 0);
    for (int permute = 0; permute < 2; permute++)
        for (int var = 0; var < 3; var++) {
            dpc_srgd_config c;
            dpc_srgd_config_init(&c);
            dpc_srgd_problem_constants(pr, &c.L, &c.M, &c.R);
            c.epsilon = 2;
            c.variant = (dpc_srgd_variant)var;
            c.permute = permute;
            c.chunk = 7; /* several chunks per batch */
            CHECK_OK(dpc_srgd_preset(&c, DPC_SRGD_REGIME_A, 1, 0, n, 5, &err), &err);
            CHECK(c.steps == 6 && c.batch == 167, "n = 1003: T = ceil(n^(1/4)) = 6, B = 167");
            dpc_rng rng;
            dpc_rng_seed(&rng, 4);
            dpc_srgd *s = NULL;
            CHECK_OK(dpc_srgd_new(&s, m, dpc_srgd_problem_data(pr), &c, &rng, &err), &err);
            if (!s) continue;
            unsigned char *seen = calloc(n, 1);
            size_t idx[167];
            for (size_t t = 0; t < c.steps; t++) {
                CHECK_OK(dpc_srgd_batch(s, t, idx, &err), &err);
                for (size_t i = 0; i < c.batch; i++) seen[idx[i]]++;
            }
            size_t once = 0, twice = 0;
            for (size_t i = 0; i < n; i++) {
                once += seen[i] == 1;
                twice += seen[i] > 1;
            }
            CHECK(once == c.steps * c.batch && twice == 0,
                  "every used example in exactly one batch (%zu once, %zu more)", once, twice);
            dpc_srgd_step_info info;
            size_t rounds = 0;
            while (dpc_srgd_step(s, &info, &err) == DPC_OK) rounds++;
            CHECK(rounds == c.steps, "exactly T rounds (%zu)", rounds);
            size_t want = var == DPC_SRGD_ACCEL_SGD ? 6 * 167 : 2 * 6 * 167 - 167;
            CHECK(info.grad_evals == want && dpc_srgd_plan_get(s)->grad_evals_planned == want,
                  "O7 variant %d: %zu gradient evaluations, want 2n - B = %zu", var,
                  info.grad_evals, want);
            free(seen);
            dpc_srgd_free(s);
        }
    /* Regime B: T = n / floor(sqrt n) rounds */
    dpc_srgd_config c;
    dpc_srgd_config_init(&c);
    c.L = 1;
    c.M = 1;
    c.R = 1;
    c.epsilon = 1;
    CHECK_OK(dpc_srgd_preset(&c, DPC_SRGD_REGIME_B, 1, 0, 40000, 5, &err), &err);
    CHECK(c.batch == 200 && c.steps == 200, "regime B: B = T = sqrt n");
    dpc_model_free(m);
    dpc_srgd_problem_free(pr);
}

/* ==== O8: zero-out neighbours ==================================================================== */

static void test_o8_zero_out(void)
{
    dpc_error err = {0};
    const size_t T = 12, B = 25, n = T * B, p = 4, istar = 7 * B + 3; /* t* = 7 */
    dpc_srgd_problem *pr = problem(DPC_SRGD_P2_LSQ, n, p, 1, 21);
    dpc_dataset *D = NULL, *D0 = NULL;
    size_t *all = malloc(n * sizeof *all);
    for (size_t i = 0; i < n; i++) all[i] = i;
    CHECK_OK(dpc_dataset_select(&D, dpc_srgd_problem_data(pr), all, n, &err), &err);
    CHECK_OK(dpc_dataset_select(&D0, dpc_srgd_problem_data(pr), all, n, &err), &err);
    free(all);
    /* a high-leverage example, so that its clip binds; zeroed (gradient 0 everywhere) in D0 */
    for (size_t j = 0; j < p; j++) D->x[istar * p + j] = 30.0;
    D->y[istar] = -40;
    for (size_t j = 0; j < p; j++) D0->x[istar * p + j] = 0.0;
    D0->y[istar] = 0;
    dpc_model *m = model_of("linear:nobias", p, 0);
    dpc_srgd_config c;
    base_cfg(&c, T, B, 1.0);
    c.clip = 2.0;
    dpc_rng rng;
    dpc_rng_seed(&rng, 77);
    dpc_srgd *run = NULL, *a = NULL, *b = NULL, *run0 = NULL;
    CHECK_OK(dpc_srgd_new(&run, m, D, &c, &rng, &err), &err);
    CHECK_OK(dpc_srgd_new(&run0, m, D0, &c, &rng, &err), &err);
    CHECK_OK(dpc_srgd_new(&a, m, D, &c, &rng, &err), &err);
    CHECK_OK(dpc_srgd_new(&b, m, D0, &c, &rng, &err), &err);
    if (!run || !a || !b || !run0) return;
    double diff[12][4], x[4], xp[4] = {0}, da[4], db[4];
    int clipped = 0;
    for (size_t t = 0; t < T; t++) {
        memcpy(x, dpc_srgd_x(run), sizeof x);
        dpc_srgd_incr_stats st;
        CHECK_OK(dpc_srgd_increment(a, t, x, xp, da, &st, &err), &err);
        CHECK_OK(dpc_srgd_increment(b, t, x, xp, db, NULL, &err), &err);
        double nd = 0;
        for (size_t j = 0; j < p; j++) {
            diff[t][j] = da[j] - db[j];
            nd += diff[t][j] * diff[t][j];
        }
        nd = sqrt(nd);
        if (t != 7) CHECK(nd == 0, "O8: Delta_%zu identical on neighbours (diff %g)", t, nd);
        else {
            CHECK(nd <= c.clip / (double)B * (1 + 1e-12) && nd > 0,
                  "O8: Delta_t* differs by %g <= C/B = %g", nd, c.clip / (double)B);
            clipped = st.max_norm > c.clip;
        }
        /* the neighbouring run releases the same history up to t* */
        CHECK_OK(dpc_srgd_step(run, NULL, &err), &err);
        CHECK_OK(dpc_srgd_step(run0, NULL, &err), &err);
        if (t < 7)
            CHECK(!memcmp(dpc_srgd_prefix(run), dpc_srgd_prefix(run0), p * sizeof(double)),
                  "same key: identical releases before t* (t = %zu)", t);
        else if (t == 7)
            CHECK(memcmp(dpc_srgd_prefix(run), dpc_srgd_prefix(run0), p * sizeof(double)),
                  "the release differs at t*");
        memcpy(xp, x, sizeof x);
    }
    CHECK(clipped, "the test example's clip binds");
    /* node vector of the tree: C (2T x T) times the increment differences */
    dpc_mech_params mp;
    dpc_mech_params_init(&mp);
    mp.kind = DPC_MECH_TREE;
    mp.steps = T;
    dpc_mech *mech = NULL;
    CHECK_OK(dpc_mech_new(&mech, &mp, &err), &err);
    double *C = calloc(2 * T * T, sizeof *C);
    CHECK_OK(dpc_mech_dense_strategy(mech, C, &err), &err);
    double nn = 0;
    for (size_t r = 0; r < 2 * T; r++)
        for (size_t j = 0; j < p; j++) {
            double v = 0;
            for (size_t t = 0; t < T; t++) v += C[r * T + t] * diff[t][j];
            nn += v * v;
        }
    double lim = c.clip / (double)B * sqrt(1.0 + 4.0); /* 1 + ceil(log2 12) */
    CHECK(sqrt(nn) <= lim * (1 + 1e-12), "O8: node vector differs by %g <= %g", sqrt(nn), lim);
    CHECK(sqrt(nn) >= 0.5 * lim, "O8: and the bound is nearly attained (%g)", sqrt(nn));
    free(C);
    dpc_mech_free(mech);
    dpc_srgd_free(run);
    dpc_srgd_free(run0);
    dpc_srgd_free(a);
    dpc_srgd_free(b);
    dpc_model_free(m);
    dpc_dataset_free(D);
    dpc_dataset_free(D0);
    dpc_srgd_problem_free(pr);
}

/* ==== determinism, noise kinds, ledger =========================================================== */

static void test_determinism_and_ledger(void)
{
    dpc_error err = {0};
    dpc_srgd_problem *pr = problem(DPC_SRGD_P2_LSQ, 4096, 8, 1, 31);
    dpc_model *m = model_of("linear:nobias", 8, 0);
    double out[3][8];
    for (int k = 0; k < 3; k++) {
        dpc_srgd_config c;
        dpc_srgd_config_init(&c);
        dpc_srgd_problem_constants(pr, &c.L, &c.M, &c.R);
        c.epsilon = 1;
        CHECK_OK(dpc_srgd_preset(&c, DPC_SRGD_REGIME_A, 1, 0, 4096, 8, &err), &err);
        dpc_rng rng;
        dpc_rng_seed(&rng, k == 2 ? 6 : 5);
        dpc_srgd *s = NULL;
        CHECK_OK(dpc_srgd_new(&s, m, dpc_srgd_problem_data(pr), &c, &rng, &err), &err);
        if (!s) return;
        CHECK_OK(dpc_srgd_run(s, NULL, &err), &err);
        memcpy(out[k], dpc_srgd_output(s), sizeof out[k]);
        const dpc_srgd_plan *L = dpc_srgd_plan_get(s);
        const dpc_ledger *G = dpc_srgd_ledger(s);
        CHECK(G->rng_mode == DPC_RNG_SEEDED && G->seed == (k == 2 ? 6u : 5u), "seed recorded");
        CHECK(strstr(G->mechanism, "tree") != NULL, "mechanism '%s'", G->mechanism);
        CHECK(L->steps == 8 && L->batch == 512 && L->n_used == 4096, "ledger shape");
        dpc_srgd_free(s);
    }
    CHECK(!memcmp(out[0], out[1], sizeof out[0]), "same seed: bit-identical output");
    CHECK(memcmp(out[0], out[2], sizeof out[0]), "another seed: another output");
    /* the independent-noise ablation at equal mu: per-step std C/(B mu), sensitivity 1 */
    dpc_srgd_config c;
    dpc_srgd_config_init(&c);
    dpc_srgd_problem_constants(pr, &c.L, &c.M, &c.R);
    c.epsilon = 1;
    c.noise = DPC_SRGD_NOISE_INDEPENDENT;
    CHECK_OK(dpc_srgd_preset(&c, DPC_SRGD_REGIME_A, 1, 0, 4096, 8, &err), &err);
    dpc_rng rng;
    dpc_rng_seed(&rng, 5);
    dpc_srgd *s = NULL;
    CHECK_OK(dpc_srgd_new(&s, m, dpc_srgd_problem_data(pr), &c, &rng, &err), &err);
    if (s) {
        const dpc_srgd_plan *L = dpc_srgd_plan_get(s);
        const dpc_ledger *G = dpc_srgd_ledger(s);
        CHECK_NEAR_REL(L->sigma, c.clip / 512.0 / L->mu, 1e-14, "independent sigma");
        CHECK(L->sens_formula == 1 && L->sens_mechanism == 1, "identity sensitivity 1");
        CHECK_NEAR_REL(L->mu_effective, L->mu, 1e-12, "mu effective = mu");
        CHECK(strstr(G->mechanism, "DP-SGD") || strstr(G->mechanism, "identity"), "'%s'",
              G->mechanism);
        dpc_srgd_free(s);
    }
    /* at T = 12 the core's tree has 4 levels < 1 + ceil(log2 12) = 5: conservative */
    dpc_dataset *ds = zero_data(120, 3);
    dpc_model *m3 = model_of("linear:nobias", 3, 0);
    base_cfg(&c, 12, 10, 0.5);
    CHECK_OK(dpc_srgd_new(&s, m3, ds, &c, &rng, &err), &err);
    if (s) {
        const dpc_srgd_plan *L = dpc_srgd_plan_get(s);
        const dpc_ledger *G = dpc_srgd_ledger(s);
        CHECK_NEAR_REL(L->sens_formula, sqrt(5.0), 1e-14, "formula levels at T = 12");
        CHECK_NEAR_REL(L->sens_mechanism, 2.0, 1e-12, "the core's tree: 4 levels");
        CHECK(L->mu_effective < L->mu && L->delta_achieved < c.delta, "conservative");
        CHECK(G->epsilon < c.epsilon && G->column_norm == L->sens_mechanism,
              "the ledger accounts the exact tree: epsilon %g < %g", G->epsilon, c.epsilon);
        dpc_srgd_free(s);
    }
    dpc_model_free(m3);
    dpc_dataset_free(ds);
    dpc_model_free(m);
    dpc_srgd_problem_free(pr);
}

/* ==== hooks: a custom convex set, a held-out risk ================================================= */

typedef struct box {
    double a;
    size_t calls;
} box;

static void box_project(void *ctx, double *x, size_t P)
{
    box *b = ctx;
    b->calls++;
    for (size_t i = 0; i < P; i++) x[i] = x[i] > b->a ? b->a : x[i] < -b->a ? -b->a : x[i];
}

static void test_hooks(void)
{
    dpc_error err = {0};
    dpc_srgd_problem *pr = problem(DPC_SRGD_P2_LSQ, 4096, 6, 1.5, 8);
    dpc_srgd_problem *ho = problem(DPC_SRGD_P2_LSQ, 2000, 6, 1.5, 9); /* held-out draw */
    dpc_model *m = model_of("linear:nobias", 6, 0);
    dpc_srgd_config c;
    dpc_srgd_config_init(&c);
    dpc_srgd_problem_constants(pr, &c.L, &c.M, &c.R);
    c.epsilon = 1;
    CHECK_OK(dpc_srgd_preset(&c, DPC_SRGD_REGIME_A, 1, 0, 4096, 6, &err), &err);
    box b = {0.2, 0};
    c.project = box_project;
    c.project_ctx = &b;
    c.heldout = dpc_srgd_problem_data(ho);
    c.eval_every = 1;
    dpc_rng rng;
    dpc_rng_seed(&rng, 2);
    dpc_srgd *s = NULL;
    CHECK_OK(dpc_srgd_new(&s, m, dpc_srgd_problem_data(pr), &c, &rng, &err), &err);
    if (!s) return;
    dpc_srgd_step_info tr[8];
    CHECK_OK(dpc_srgd_run(s, tr, &err), &err);
    CHECK(b.calls == 2 * c.steps, "the hook projects z and y every round (%zu calls)", b.calls);
    const double *y = dpc_srgd_output(s), *z = dpc_srgd_z(s);
    int inside = 1;
    for (int j = 0; j < 6; j++) inside &= fabs(y[j]) <= 0.2 && fabs(z[j]) <= 0.2;
    CHECK(inside, "output and z inside the box");
    double F;
    const dpc_dataset *h = dpc_srgd_problem_data(ho);
    CHECK_OK(dpc_model_evaluate(m, y, h->x, h->y, h->n, &F, NULL, NULL, &err), &err);
    CHECK(tr[c.steps - 1].risk == F, "risk = mean held-out loss of the output (%g vs %g)",
          tr[c.steps - 1].risk, F);
    CHECK(isnan(tr[0].srg_error), "no gradient of F from a held-out set: NaN");
    dpc_srgd_free(s);
    dpc_model_free(m);
    dpc_srgd_problem_free(pr);
    dpc_srgd_problem_free(ho);
}

/* The constants of the losses on data with a public row-norm bound, the problem defaults and the
 * beta-ratio privacy level, against their formulas (what train --algo dp-srgd and repro srgd
 * used to compute themselves). */
static void test_library_defaults(void)
{
    dpc_error err = {0};
    dpc_model_config mc;
    CHECK_OK(dpc_model_parse(&mc, "logistic", 4, 2, &err), &err);
    double L = 0, M = 0;
    CHECK_OK(dpc_srgd_data_constants(&mc, 2.0, 2.0, 0, &L, &M, &err), &err);
    double b = mc.bias ? 5.0 : 4.0;
    CHECK(L == sqrt(b) && M == b / 4.0, "logistic: L = sqrt(X^2 + 1) = %g, M = %g", L, M);
    L = 7, M = 0;
    CHECK_OK(dpc_srgd_data_constants(&mc, 2.0, 2.0, 0, &L, &M, &err), &err);
    CHECK(L == 7 && M == b / 4.0, "a given L is kept");
    CHECK_OK(dpc_model_parse(&mc, "linear", 4, 0, &err), &err);
    L = M = 0;
    CHECK(dpc_srgd_data_constants(&mc, 2.0, 2.0, 0, &L, &M, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "y_bound"),
          "linear without a label bound refused: %s", err.msg);
    CHECK_OK(dpc_srgd_data_constants(&mc, 2.0, 3.0, 0.5, &L, &M, &err), &err);
    b = mc.bias ? 5.0 : 4.0;
    CHECK(L == sqrt(b) * (sqrt(b) * 3.0 + 0.5) && M == b, "linear: L %g, M %g", L, M);
    L = M = 0;
    CHECK(dpc_srgd_data_constants(&mc, 0, 3.0, 0.5, &L, &M, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "x_norm_bound"),
          "no row-norm bound refused: %s", err.msg);
    CHECK_OK(dpc_model_parse(&mc, "mlp:4", 4, 2, &err), &err);
    CHECK(dpc_srgd_data_constants(&mc, 1.0, 3.0, 0.5, &L, &M, &err) == DPC_E_UNSUPPORTED &&
              !strcmp(err.field, "model"),
          "other kinds: unsupported: %s", err.msg);
    dpc_srgd_problem_config pc;
    dpc_srgd_problem_config_init(&pc);
    CHECK(pc.n == 65536 && pc.p == 32, "problem defaults n = 65536, p = 32");
    /* n = 65536: T = 16, lev = 5: mu = sqrt(5 p / n) / k */
    double mu = dpc_srgd_mu_at_beta_ratio(65536, 32, 1.0, 4.0);
    CHECK(fabs(mu - sqrt(5.0 * 32 / 65536) / 4.0) < 1e-15, "mu at ratio 4: %g", mu);
    dpc_srgd_config c;
    dpc_srgd_config_init(&c);
    c.L = 1, c.M = 0.25, c.R = 2, c.delta = 1e-6;
    CHECK_OK(dpc_srgd_mu(1.0, 1e-6, DPC_CALIBRATION_ACCOUNTANT, &mu, &err), &err);
    double eps = NAN;
    CHECK_OK(dpc_gdp_epsilon(dpc_srgd_mu_at_beta_ratio(65536, 32, 1.0, 4.0), 1e-6, &eps, &err), &err);
    c.epsilon = eps;
    CHECK_OK(dpc_srgd_preset(&c, DPC_SRGD_REGIME_A, 1.0, 0, 65536, 32, &err), &err);
    double beta0 = fmax(c.M, c.L / c.R);
    CHECK(fabs(c.beta / beta0 - 4.0) < 1e-6, "the preset's beta at that epsilon is 4 x the "
                                             "non-private one (%g)", c.beta / beta0);
}

/* The delta rule of every trainer (dpc_account_resolve_delta): delta 0 (the _init default) is
 * derived from n and flagged in the ledger; >= 1/n is refused (config check, preset and run)
 * unless allow_large_delta; a non-private run has no guarantee to refuse. */
static void test_delta_rule(void)
{
    dpc_error err = {0};
    dpc_srgd_config c;
    dpc_srgd_config_init(&c);
    CHECK(c.delta == 0 && c.allow_large_delta == 0, "init: delta derived from n");
    dpc_srgd_problem *pr = problem(DPC_SRGD_P2_LSQ, 4096, 4, 1, 3);
    const dpc_dataset *ds = dpc_srgd_problem_data(pr);
    dpc_model *m = model_of("linear:nobias", 4, 0);
    dpc_rng rng;
    dpc_rng_seed(&rng, 1);
    base_cfg(&c, 8, 512, 1);
    c.delta = 0;
    dpc_srgd *s = NULL;
    CHECK_OK(dpc_srgd_new(&s, m, ds, &c, &rng, &err), &err);
    const dpc_ledger *L = s ? dpc_srgd_ledger(s) : NULL;
    CHECK(L && L->delta == 1e-5 && L->delta_derived && dpc_srgd_config_get(s)->delta == 1e-5,
          "n = 4096: delta 1e-5 derived (%g)", L ? L->delta : NAN);
    double mu;
    CHECK_OK(dpc_gdp_mu_for(1.0, 1e-5, &mu, &err), &err);
    CHECK(s && harness_near_rel(dpc_srgd_plan_get(s)->mu, mu, 1e-12), "mu at the derived delta");
    if (s) { /* what a dry run shows: the plan's schedule, the ledger's delta, the rest as given */
        dpc_srgd_config rc;
        dpc_srgd_config_resolved(s, &rc);
        const dpc_srgd_plan *P = dpc_srgd_plan_get(s);
        CHECK(rc.steps == P->steps && rc.batch == P->batch && rc.beta == P->beta &&
                  rc.clip == P->clip && rc.z_step == P->z_step && rc.delta == 1e-5 &&
                  rc.L == c.L && rc.M == c.M && rc.R == c.R && rc.epsilon == c.epsilon &&
                  rc.variant == c.variant && rc.noise == c.noise,
              "resolved configuration: T %zu, B %zu, delta %g", rc.steps, rc.batch, rc.delta);
    }
    dpc_srgd_free(s);
    s = NULL;
    c.delta = 1e-3; /* >= 1/4096 */
    dpc_error e = {0};
    CHECK(dpc_srgd_config_check(&c, ds->n, &e) == DPC_E_PRIVACY && !strcmp(e.field, "delta") &&
              strstr(e.msg, "allow_large_delta"),
          "delta 1e-3 at n = 4096 refused: %s", e.msg);
    CHECK(dpc_srgd_new(&s, m, ds, &c, &rng, &e) == DPC_E_PRIVACY && !s, "the run refuses it");
    dpc_srgd_config pc = c;
    CHECK(dpc_srgd_preset(&pc, DPC_SRGD_REGIME_A, 1, 0, ds->n, 4, &e) == DPC_E_PRIVACY &&
              !strcmp(e.field, "delta"),
          "the preset refuses it: %s", e.msg);
    c.allow_large_delta = 1;
    CHECK_OK(dpc_srgd_new(&s, m, ds, &c, &rng, &e), &e);
    CHECK(s && dpc_srgd_ledger(s)->delta == 1e-3 && !dpc_srgd_ledger(s)->delta_derived,
          "accepted when allowed");
    dpc_srgd_free(s);
    s = NULL;
    c.allow_large_delta = 0;
    c.epsilon = INFINITY; /* non-private: nothing to refuse */
    CHECK_OK(dpc_srgd_config_check(&c, ds->n, &e), &e);
    dpc_model_free(m);
    dpc_srgd_problem_free(pr);
}

int main(void)
{
    test_delta_rule();
    test_o2_calibration();
    test_presets();
    test_validation();
    test_o1_tree();
    test_o1f_exact_prefix();
    test_o7_accounting();
    test_o8_zero_out();
    test_determinism_and_ledger();
    test_hooks();
    test_library_defaults();
    return TEST_SUMMARY();
}
