/* test_linreg_core.c — DP linear regression (papers/001 note): the exact-risk identity (oracle
 * O1), the plan's arithmetic against the note's §5 table and Lemmas 3.10/3.11, DP-STAT's
 * mechanics and both stopping rules (O2), the uniform permutation, the tail average, OLS, SSP,
 * determinism and input validation. */
#include "dpcorr.h"
#include "harness.h"
#include "linreg_oracles.h"

#include <float.h>

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static dpc_dataset *synth(size_t n, size_t d, double alpha, double noise, uint64_t seed,
                          uint64_t stream)
{
    dpc_rng rng;
    dpc_rng_seed(&rng, seed);
    dpc_dataset *ds = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_data_synth_linreg(&ds, &rng, stream, n, d, alpha, noise, NULL, &err), &err);
    return ds;
}

static void opts_for(dpc_linreg_opts *o, dpc_linreg_algo a, const dpc_dataset *ds, double sigma)
{
    dpc_error err = {0};
    dpc_linreg_opts_init(o, a);
    o->epsilon = 1.0;
    o->delta = 1e-5; /* the note's setting, kept where it is >= 1/N */
    o->allow_large_delta = 1;
    CHECK_OK(dpc_linreg_prior_from_spectrum(&o->prior, ds->cov_diag, ds->d, &err), &err);
    o->prior.sigma_bound = sigma;
}

/* O1: L(w) = 1/2 [(w - w*)^T H (w - w*) + sigma^2] for x ~ N(0, H), z independent of x. */
static void test_risk_identity(void)
{
    double sc = tests_scale();
    size_t n = sc < 1 ? 100000 : 1000000, d = 10;
    double sigma = 0.3, tol = sc < 1 ? 0.02 : 0.01; /* >= 4.5 standard errors sqrt(2/n) */
    dpc_dataset *ds = synth(n, d, 1.0, sigma, 7, 3); /* H = diag(1/k): not the identity */
    if (!ds) return;
    dpc_error err = {0};
    double w[10], loss;
    for (size_t k = 0; k < d; k++) w[k] = ds->truth[k] + (k % 2 ? 0.4 : -0.25) * (double)(k + 1) / 5;
    double ex = dpc_linreg_excess_risk(w, ds->truth, ds->cov_diag, d);
    double manual = 0;
    for (size_t k = 0; k < d; k++)
        manual += 0.5 * (1.0 / (double)(k + 1)) * (w[k] - ds->truth[k]) * (w[k] - ds->truth[k]);
    CHECK_NEAR_REL(ex, manual, 1e-14, "excess risk = 1/2 sum_k lambda_k (w - w*)_k^2");
    CHECK_OK(dpc_linreg_loss(ds, w, &loss, &err), &err);
    CHECK_NEAR_REL(loss, ex + 0.5 * sigma * sigma, tol, "O1: Monte-Carlo L(w) on %zu samples", n);
    CHECK_OK(dpc_linreg_loss(ds, ds->truth, &loss, &err), &err);
    CHECK_NEAR_REL(loss, 0.5 * sigma * sigma, tol, "O1: L(w*) = sigma^2 / 2");
    dpc_dataset_free(ds);
}

/* The note's §5 table: T = c1 kappa ln N (c1 = 3, even), b + s = floor(N/T), s = floor((b+s)/11). */
static void test_plan_layout(void)
{
    dpc_error err = {0};
    struct { size_t n; double kappa; size_t T, b; } t[] = {
        {250000, 1, 38, 5980}, {500000, 1, 40, 11364}, {1000000, 1, 42, 21645},
        {2000000, 1, 44, 41322}, {4000000, 1, 46, 79051}, {4000000, 3, 138, 26350}};
    for (size_t i = 0; i < NELEM(t); i++) {
        dpc_linreg_opts o;
        dpc_linreg_opts_init(&o, DPC_LINREG_AMBSSGD);
        o.delta = 1e-5; /* the note's (1, 1e-5), kept where it is >= 1/N */
        o.allow_large_delta = 1;
        o.epsilon = 1;
        o.calibration = DPC_CALIBRATION_PAPER;
        o.prior.h_norm = 1;
        o.prior.kappa = t[i].kappa;
        o.prior.r_x = sqrt(10.0);
        dpc_linreg_plan p;
        CHECK_OK(dpc_linreg_plan_make(&p, &o, t[i].n, 10, &err), &err);
        CHECK(p.steps == t[i].T && p.batch == t[i].b, "N=%zu kappa=%g: T=%zu b=%zu (note: %zu, %zu)",
              t[i].n, t[i].kappa, p.steps, p.batch, t[i].T, t[i].b);
        CHECK(p.stat_batch == (p.batch + p.stat_batch) / 11, "s = floor((b+s)/11)");
        CHECK(p.unused == t[i].n - p.steps * (p.batch + p.stat_batch) &&
                  p.unused < p.steps, "left-over records %zu", p.unused);
        CHECK(p.tail_start == p.steps / 2, "tail average starts at T/2");
    }
    /* Lemma 3.11 at the note's configuration (oracle_batch) and the resolved numbers */
    dpc_linreg_opts o;
    dpc_linreg_opts_init(&o, DPC_LINREG_AMBSSGD);
    o.delta = 1e-5; /* the note's (1, 1e-5), kept where it is >= 1/N */
    o.allow_large_delta = 1;
    o.epsilon = 1;
    o.calibration = DPC_CALIBRATION_PAPER;
    o.prior.h_norm = 1;
    o.prior.kappa = 1;
    o.prior.r_x = sqrt(10.0);
    o.prior.sigma_bound = 1;
    dpc_linreg_plan p;
    CHECK_OK(dpc_linreg_plan_make(&p, &o, 1000000, 10, &err), &err);
    CHECK(p.steps == (size_t)oracle_batch[0] && p.batch == (size_t)oracle_batch[1] &&
              p.stat_batch == (size_t)oracle_batch[2], "layout at N = 1e6");
    CHECK_NEAR_REL(p.eta, oracle_batch[3], 1e-15, "eta = b/(Tr H + b - 1)");
    CHECK_NEAR_REL(p.ledger.noise_multiplier, 9.597, 1e-4, "Thm. 3.7 alpha at (1, 1e-5)");
    double L = log(1e6);
    CHECK_NEAR_REL(p.clip_scale, sqrt(10.0) * sqrt(L), 1e-15, "zeta_t / gamma_t = R_x sqrt(ln N)");
    CHECK_NEAR_REL(p.domain, sqrt(8.0 / 3.0) * sqrt(10.0) * 2.0 * L, 1e-15,
                   "B = K2 R_x (||w*|| + sigma) ln N");
    CHECK_NEAR_REL(p.dpstat_delta, p.domain / 1099511627776.0, 1e-15, "Delta = B / 2^40");
    CHECK_NEAR_REL(p.dpstat_margin, 295.85170465344517, 1e-12, "Gamma (note: 296)");
    dpc_linreg_check ck[DPC_LINREG_MAX_CHECKS];
    size_t nc = dpc_linreg_checks(&p, ck, DPC_LINREG_MAX_CHECKS);
    int seen = 0;
    for (size_t i = 0; i < nc; i++) {
        CHECK(ck[i].ok, "check %s holds at the note's configuration (%g vs %g)", ck[i].name,
              ck[i].value, ck[i].required);
        if (!strcmp(ck[i].name, "batch_condition")) {
            seen = 1;
            CHECK_NEAR_REL(ck[i].required, oracle_batch[4], 1e-12, "Lemma 3.11 b_min (note ~10.6k)");
        }
    }
    CHECK(seen && nc == 5, "AMBSSGD reports 5 checks (%zu)", nc);
    /* note §5.1: at d = 40, N = 2e6 the batch condition fails (b = 41k < 44.5k) */
    o.prior.r_x = sqrt(40.0);
    CHECK_OK(dpc_linreg_plan_make(&p, &o, 2000000, 40, &err), &err);
    nc = dpc_linreg_checks(&p, ck, DPC_LINREG_MAX_CHECKS);
    for (size_t i = 0; i < nc; i++)
        if (!strcmp(ck[i].name, "batch_condition"))
            CHECK(!ck[i].ok && ck[i].value == 41322 && ck[i].required > 44000 &&
                      ck[i].required < 45000, "d=40: batch condition fails (%g < %g)",
                  ck[i].value, ck[i].required);
    /* the paper's K = ceil(200 log2 N) underflows Delta (erratum 2) */
    o.dpstat_k = 3987;
    CHECK_OK(dpc_linreg_plan_make(&p, &o, 1000000, 40, &err), &err);
    nc = dpc_linreg_checks(&p, ck, DPC_LINREG_MAX_CHECKS);
    for (size_t i = 0; i < nc; i++)
        if (!strcmp(ck[i].name, "domain_resolution"))
            CHECK(!ck[i].ok && ck[i].value < DBL_MIN, "K = 3987: Delta underflows");
    /* Lemma 3.10's Gamma against mpmath */
    for (size_t i = 0; i < NELEM(oracle_gamma); i++) {
        double g;
        CHECK_OK(dpc_linreg_dpstat_margin(oracle_gamma[i][0], (size_t)oracle_gamma[i][1],
                                          oracle_gamma[i][2], &g, &err),
                 &err);
        CHECK_NEAR_REL(g, oracle_gamma[i][3], 1e-13, "Gamma(alpha=%g, K=%g, beta=%g)",
                       oracle_gamma[i][0], oracle_gamma[i][1], oracle_gamma[i][2]);
    }
    /* baselines' defaults: Cor. 3.3 clip and step */
    dpc_linreg_opts_init(&o, DPC_LINREG_SSGD);
    o.noise_multiplier = 10;
    o.prior.h_norm = 1, o.prior.kappa = 1, o.prior.r_x = sqrt(10.0), o.prior.sigma_bound = 0.5;
    CHECK_OK(dpc_linreg_plan_make(&p, &o, 200001, 10, &err), &err);
    CHECK(p.steps == 200000 && p.batch == 1 && p.stat_batch == 0, "SSGD: N even steps of 1");
    CHECK_NEAR_REL(p.eta, 1.0 / (4 * 10 * 100 * 10 * log(200001.0)), 1e-14,
                   "alpha = 10: eta capped at 1/(4 d alpha^2 R_x^2 ln N)");
    o.noise_multiplier = 0.01;
    CHECK_OK(dpc_linreg_plan_make(&p, &o, 200001, 10, &err), &err);
    CHECK_NEAR_REL(p.eta, 1.0 / 40, 1e-15, "small alpha: Cor. 3.3 eta = 1/(4d)");
    CHECK_NEAR_REL(p.clip, sqrt(10.0) * sqrt(1.25) * log(200001.0), 1e-14,
                   "Cor. 3.3 zeta = sqrt(d) sqrt(||w*||^2 + sigma^2) ln N");
}

/* DP-STAT mechanics: exact rounds, gamma grid, both rules (O2, erratum 1). */
static void test_dpstat(void)
{
    dpc_error err = {0};
    dpc_rng rng;
    dpc_rng_seed(&rng, 11);
    dpc_rng_stream ns = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_TEST, 1));
    double r[100], work[2200], counts[40], noisy[40];
    for (size_t j = 0; j < 100; j++) r[j] = (j % 2 ? -1.0 : 1.0) * 5.0 * (double)j / 99.0;
    /* near-zero noise, margin 0.5: stops at the first grid point >= max |r| = 5: 2^3 = 8 */
    dpc_dpstat_params p = {64.0, 10, 1e-12, DPC_DPSTAT_MARGIN, 0.5};
    dpc_dpstat_result res;
    CHECK_OK(dpc_linreg_dpstat(r, 100, &p, &ns, 0, work, &res, counts, noisy, &err), &err);
    CHECK(res.gamma == 8.0 && res.rounds == 8, "gamma %g after %zu rounds (want 8, 8)", res.gamma,
          res.rounds);
    CHECK(counts[7] == 100 && counts[6] == 80, "true counts at gamma = 8, 4: %g %g", counts[7],
          counts[6]);
    CHECK_NEAR_REL(res.noise_std, sqrt(10.0) * 1e-12, 1e-15, "count noise std sqrt(K) alpha");
    /* nothing below B: exactly K counts, then gamma_K = B (erratum 3: never K + 1) */
    for (size_t j = 0; j < 100; j++) r[j] = 100.0 + (double)j;
    CHECK_OK(dpc_linreg_dpstat(r, 100, &p, &ns, 1, work, &res, counts, noisy, &err), &err);
    CHECK(res.gamma == 64.0 && res.rounds == 10, "no stop: gamma = B after K rounds (%g, %zu)",
          res.gamma, res.rounds);
    /* O2 with the note's example: s = 2164, sigma_r = 1, alpha = 9.597, K = 40, B = 142.7,
     * Gamma = 296: gamma >= the (1 - 2 Gamma/s)-quantile and gamma/2 < max |r| (margin rule);
     * the printed rule overshoots: gamma >= 4 max|r| in about 1/4 of the calls. */
    size_t s = 2164, trials = tests_scale() < 1 ? 60 : 200;
    dpc_rng_stream rs = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_TEST, 2));
    double *res_r = malloc(s * sizeof *res_r), *sorted = malloc(s * sizeof *sorted);
    dpc_dpstat_params pm = {142.7, 40, oracle_gamma[0][0], DPC_DPSTAT_MARGIN, oracle_gamma[0][3]};
    dpc_dpstat_params pp = pm;
    pp.rule = DPC_DPSTAT_PAPER;
    size_t ok_lo = 0, ok_hi = 0, over_paper = 0, over_margin = 0;
    double qlevel = 1.0 - 2.0 * pm.margin / (double)s;
    for (size_t t = 0; t < trials; t++) {
        double mx = 0;
        for (size_t j = 0; j < s; j++) {
            res_r[j] = dpc_rng_gaussian(&rs, t, j);
            sorted[j] = fabs(res_r[j]);
            mx = sorted[j] > mx ? sorted[j] : mx;
        }
        dpc_dpstat_result a, b;
        CHECK_OK(dpc_linreg_dpstat(res_r, s, &pm, &ns, 100 + t, work, &a, NULL, NULL, &err), &err);
        CHECK_OK(dpc_linreg_dpstat(res_r, s, &pp, &ns, 100 + t, work, &b, NULL, NULL, &err), &err);
        /* the (1 - 2 Gamma/s) empirical quantile from the sorted |r| (work holds them sorted) */
        double q = work[(size_t)floor(qlevel * (double)(s - 1))];
        ok_lo += a.gamma >= q;
        ok_hi += a.gamma / 2 < mx;
        over_margin += a.gamma >= 4 * mx;
        over_paper += b.gamma >= 4 * mx;
    }
    CHECK(ok_lo == trials && ok_hi == trials,
          "O2 margin rule: gamma >= q_{1-2Gamma/s} in %zu/%zu, gamma/2 < max in %zu/%zu", ok_lo,
          trials, ok_hi, trials);
    CHECK(over_margin == 0, "margin rule never overshoots 4 max|r| (%zu)", over_margin);
    /* binomial(trials, ~1/4): at least 10% is > 4 standard deviations below the mean */
    CHECK(over_paper >= trials / 10, "printed rule overshoots 4 max|r| in %zu/%zu calls",
          over_paper, trials);
    free(res_r);
    free(sorted);
    /* validation */
    dpc_dpstat_params bad = p;
    bad.k = 0;
    CHECK(dpc_linreg_dpstat(r, 100, &bad, &ns, 0, work, &res, NULL, NULL, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "k"), "K = 0 refused: %s", err.msg);
    bad = p;
    bad.noise_multiplier = 0;
    CHECK(dpc_linreg_dpstat(r, 100, &bad, &ns, 0, work, &res, NULL, NULL, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "noise_multiplier"), "z = 0 refused: %s", err.msg);
    r[3] = NAN;
    CHECK(dpc_linreg_dpstat(r, 100, &p, &ns, 0, work, &res, NULL, NULL, &err) == DPC_E_NUMERIC,
          "NaN residual refused: %s", err.msg);
}

/* Fisher-Yates is exactly uniform: all 6 orders of 3 records equally often over 6000 streams. */
static void test_permutation(void)
{
    dpc_error err = {0};
    dpc_dataset *ds = synth(3, 1, 0.0, 0.1, 1, 0);
    if (!ds) return;
    size_t freq[6] = {0}, reps = tests_scale() < 1 ? 1200 : 6000;
    dpc_rng rng;
    dpc_rng_seed(&rng, 99);
    for (size_t k = 0; k < reps; k++) {
        dpc_linreg_opts o;
        opts_for(&o, DPC_LINREG_SGD, ds, 0.1);
        o.steps = 2;
        o.stream = (uint32_t)k;
        dpc_linreg *lr = NULL;
        CHECK_OK(dpc_linreg_new(&lr, ds, &o, &rng, &err), &err);
        if (!lr) break;
        const size_t *pm = dpc_linreg_permutation(lr);
        size_t code = pm[0] * 2 + (pm[1] > pm[2]); /* a bijection of S_3 onto 0..5 */
        CHECK(pm[0] + pm[1] + pm[2] == 3 && pm[0] != pm[1] && pm[1] != pm[2] && pm[0] != pm[2],
              "a permutation");
        freq[code]++;
        dpc_linreg_free(lr);
    }
    double e = (double)reps / 6, sd = sqrt(e * 5.0 / 6);
    for (int c = 0; c < 6; c++)
        CHECK(fabs((double)freq[c] - e) < 5 * sd, "order %d: %zu of %zu (expected %.0f)", c,
              freq[c], reps, e);
    dpc_dataset_free(ds);
}

/* Tail average, determinism, non-private update, and the run's state machine. */
static void test_run_mechanics(void)
{
    dpc_error err = {0};
    dpc_dataset *ds = synth(60000, 5, 0.0, 0.5, 3, 0);
    if (!ds) return;
    dpc_rng rng;
    dpc_rng_seed(&rng, 5);
    dpc_linreg_opts o;
    opts_for(&o, DPC_LINREG_AMBSSGD, ds, 0.5);
    o.epsilon = 8; /* N = 6e4 is small: keep 2 Gamma < s so that the model is good */
    dpc_linreg *a = NULL, *b = NULL;
    CHECK_OK(dpc_linreg_new(&a, ds, &o, &rng, &err), &err);
    CHECK_OK(dpc_linreg_new(&b, ds, &o, &rng, &err), &err);
    if (!a || !b) return;
    const dpc_linreg_plan *P = dpc_linreg_plan_get(a);
    double w[5], sum[5] = {0}, wa[5], wb[5];
    CHECK(dpc_linreg_average(a, w, &err) == DPC_E_STATE, "no average before the last step");
    dpc_linreg_step_info info;
    for (size_t t = 0; t < P->steps; t++) {
        CHECK_OK(dpc_linreg_step(a, &info, &err), &err);
        CHECK(info.step == t && info.gamma > 0 && info.zeta == P->clip_scale * info.gamma,
              "step %zu telemetry", t);
        if (t + 1 > P->tail_start)
            for (size_t j = 0; j < 5; j++) sum[j] += dpc_linreg_params(a)[j];
    }
    CHECK(dpc_linreg_step(a, &info, &err) == DPC_E_RANGE, "no step after T");
    CHECK_OK(dpc_linreg_average(a, wa, &err), &err);
    for (size_t j = 0; j < 5; j++)
        CHECK_NEAR_REL(wa[j], sum[j] / (double)(P->steps - P->tail_start), 1e-15,
                       "average of w_{T/2+1}..w_T");
    CHECK_OK(dpc_linreg_run(b, NULL, &err), &err);
    CHECK_OK(dpc_linreg_average(b, wb, &err), &err);
    CHECK(!memcmp(wa, wb, sizeof wa), "same key and stream: bit-identical model");
    CHECK(dpc_linreg_excess_risk(wa, ds->truth, ds->cov_diag, 5) < 0.01, "the model is good");
    dpc_linreg_free(b);
    o.stream = 1;
    CHECK_OK(dpc_linreg_new(&b, ds, &o, &rng, &err), &err);
    CHECK_OK(dpc_linreg_run(b, NULL, &err), &err);
    CHECK_OK(dpc_linreg_average(b, wb, &err), &err);
    CHECK(memcmp(wa, wb, sizeof wa) != 0, "another stream: another model");
    dpc_linreg_free(a);
    dpc_linreg_free(b);
    /* non-private step = eta * mean gradient over the b records, no noise */
    opts_for(&o, DPC_LINREG_SGD, ds, 0.5);
    CHECK_OK(dpc_linreg_new(&a, ds, &o, &rng, &err), &err);
    P = dpc_linreg_plan_get(a);
    CHECK_OK(dpc_linreg_step(a, &info, &err), &err);
    CHECK_OK(dpc_linreg_step(a, &info, &err), &err); /* step 1, from w_1 */
    const size_t *pm = dpc_linreg_permutation(a);
    double g[5] = {0}, w1[5];
    for (size_t j = 0; j < 5; j++) w1[j] = dpc_linreg_params(a)[j] + dpc_linreg_last_update(a)[j];
    for (size_t i = 0; i < P->batch; i++) {
        const double *x = ds->x + pm[P->batch + i] * 5;
        double r = -ds->y[pm[P->batch + i]];
        for (size_t j = 0; j < 5; j++) r += x[j] * w1[j];
        for (size_t j = 0; j < 5; j++) g[j] += r * x[j];
    }
    for (size_t j = 0; j < 5; j++) {
        CHECK_NEAR_REL(dpc_linreg_last_update(a)[j], P->eta * g[j] / (double)P->batch, 1e-10,
                       "SGD update coordinate %zu", j);
        CHECK(dpc_linreg_last_noise(a)[j] == 0, "no noise");
    }
    CHECK(info.noise_std == 0 && isinf(info.zeta) && info.clipped == 0, "non-private telemetry");
    dpc_linreg_free(a);
    dpc_dataset_free(ds);
}

static void test_ols_ssp(void)
{
    dpc_error err = {0};
    dpc_rng rng;
    dpc_rng_seed(&rng, 21);
    dpc_dataset *ds = synth(2000, 6, 0.5, 0.0, 4, 0);
    if (!ds) return;
    double w[6];
    CHECK_OK(dpc_linreg_ols(ds, w, &err), &err);
    for (size_t k = 0; k < 6; k++) CHECK_NEAR_ABS(w[k], ds->truth[k], 1e-10, "noiseless OLS = w*");
    dpc_dataset_free(ds);
    ds = synth(20000, 6, 0.5, 0.7, 4, 1);
    CHECK_OK(dpc_linreg_ols(ds, w, &err), &err);
    double maxg = 0; /* normal equations: X^T (y - X w) = 0 */
    for (size_t j = 0; j < 6; j++) {
        double g = 0, sc = 0;
        for (size_t i = 0; i < ds->n; i++) {
            const double *x = ds->x + i * 6;
            double r = ds->y[i];
            for (size_t k = 0; k < 6; k++) r -= x[k] * w[k];
            g += x[j] * r;
            sc += fabs(x[j] * ds->y[i]);
        }
        maxg = fmax(maxg, fabs(g) / sc);
    }
    CHECK(maxg < 1e-12, "OLS residual orthogonal to X (%g)", maxg);
    double ex_ols = dpc_linreg_excess_risk(w, ds->truth, ds->cov_diag, 6);
    /* SSP: ledger arithmetic and the huge-epsilon limit */
    dpc_linreg_ssp_opts so = {1.0, 1e-5, 6.0, 5.0, 0, 0};
    dpc_linreg_ssp_info si;
    double ws[6];
    CHECK_OK(dpc_linreg_ssp(ds, &so, &rng, ws, &si, &err), &err);
    double rho;
    CHECK_OK(dpc_zcdp_rho_for(1.0, 1e-5, DPC_ZCDP_BUN_STEINKE, &rho, &err), &err);
    CHECK_NEAR_REL(si.rho, rho, 1e-12, "SSP spends rho(eps, delta)");
    CHECK_NEAR_REL(si.epsilon, 1.0, 1e-10, "SSP epsilon");
    CHECK_NEAR_REL(si.sigma_xx, sqrt(2.0) * 36.0 / sqrt(rho), 1e-14, "sigma_xx = sqrt2 R^2/sqrt(rho)");
    CHECK_NEAR_REL(si.sigma_xy, 2.0 * 6.0 * 5.0 / sqrt(rho), 1e-14, "sigma_xy = 2RY/sqrt(rho)");
    {   /* the delta rule of every trainer: 0 is the default from N, >= 1/N refused */
        dpc_linreg_ssp_opts sd = so;
        dpc_linreg_ssp_info sdi;
        double wd[6];
        sd.delta = 0;
        CHECK_OK(dpc_linreg_ssp(ds, &sd, &rng, wd, &sdi, &err), &err);
        CHECK(sdi.delta == dpc_account_default_delta(ds->n), "SSP: delta 0 -> %g, the default for "
              "N = %zu", sdi.delta, ds->n);
        sd.delta = 1.0 / (double)ds->n;
        dpc_error e = {0};
        CHECK(dpc_linreg_ssp(ds, &sd, &rng, wd, &sdi, &e) == DPC_E_PRIVACY &&
                  !strcmp(e.field, "delta"),
              "SSP: delta 1/N refused: %s", e.msg);
        sd.allow_large_delta = 1;
        CHECK_OK(dpc_linreg_ssp(ds, &sd, &rng, wd, &sdi, &e), &e);
    }
    double ex_ssp = dpc_linreg_excess_risk(ws, ds->truth, ds->cov_diag, 6);
    CHECK(isfinite(ex_ssp) && ex_ssp > ex_ols, "SSP (%g) is worse than OLS (%g)", ex_ssp, ex_ols);
    so.epsilon = 1e7;
    CHECK_OK(dpc_linreg_ssp(ds, &so, &rng, ws, &si, &err), &err);
    for (size_t k = 0; k < 6; k++) CHECK_NEAR_ABS(ws[k], w[k], 1e-3, "SSP at eps = 1e7 ~ OLS");
    so.x_bound = 0;
    CHECK(dpc_linreg_ssp(ds, &so, &rng, ws, &si, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "x_bound"), "x_bound = 0 refused: %s", err.msg);
    dpc_dataset_free(ds);
}

static void test_validation(void)
{
    dpc_error err = {0};
    dpc_rng rng;
    dpc_rng_seed(&rng, 1);
    dpc_dataset *ds = synth(5000, 4, 0.0, 0.1, 1, 0), *cls = NULL;
    if (!ds) return;
    dpc_linreg_opts o;
    dpc_linreg *lr = NULL;
    CHECK_OK(dpc_data_synth_logistic(&cls, &rng, 0, 500, 4, 0.1, 0.0, NULL, &err), &err);
    opts_for(&o, DPC_LINREG_AMBSSGD, ds, 0.1);
    CHECK(dpc_linreg_new(&lr, cls, &o, &rng, &err) == DPC_E_INVALID && !lr &&
              strstr(err.msg, "real-valued"), "classification data refused: %s", err.msg);
    struct { const char *what; void (*set)(dpc_linreg_opts *); const char *needle; } cases[] = {
        {"kappa < 1", NULL, "kappa"}, {"odd steps", NULL, "steps"}, {"no epsilon", NULL,
        "noise_multiplier"}, {"huge K", NULL, "dpstat_k"}, {"stat batch", NULL, "stat_batch"},
        {"bad eta", NULL, "eta"}, {"bad delta", NULL, "delta"}, {"rx", NULL, "r_x"}};
    for (size_t i = 0; i < NELEM(cases); i++) {
        opts_for(&o, DPC_LINREG_AMBSSGD, ds, 0.1);
        switch (i) {
        case 0: o.prior.kappa = 0.5; break;
        case 1: o.steps = 7; break;
        case 2: o.epsilon = 0; break;
        case 3: o.dpstat_k = DPC_LINREG_MAX_DPSTAT_K + 1; break;
        case 4: o.stat_batch = 10000; break;
        case 5: o.eta = -1; break;
        case 6: o.delta = 1; break;
        default: o.prior.r_x = NAN; break;
        }
        dpc_status st = dpc_linreg_new(&lr, ds, &o, &rng, &err);
        CHECK(st == DPC_E_INVALID && !lr && strstr(err.msg, cases[i].needle),
              "%s: status %d, message '%s' names %s", cases[i].what, (int)st, err.msg,
              cases[i].needle);
    }
    /* a non-finite feature is refused by the data check, naming the example */
    ds->x[7] = INFINITY;
    opts_for(&o, DPC_LINREG_AMBSSGD, ds, 0.1);
    CHECK(dpc_linreg_new(&lr, ds, &o, &rng, &err) == DPC_E_NUMERIC && !lr, "Inf refused: %s",
          err.msg);
    /* DP-SSGD: a tiny epsilon needs alpha > 1e9; a large one is met with the least noise the
     * shuffling theorem covers (and a smaller epsilon) */
    ds->x[7] = 0.5;
    opts_for(&o, DPC_LINREG_SSGD, ds, 0.1);
    o.epsilon = 1e-12;
    CHECK(dpc_linreg_new(&lr, ds, &o, &rng, &err) == DPC_E_PRIVACY && !lr &&
              strstr(err.msg, "epsilon"), "unreachable DP-SSGD epsilon: %s", err.msg);
    o.epsilon = 50;
    CHECK_OK(dpc_linreg_new(&lr, ds, &o, &rng, &err), &err);
    if (lr) {
        const dpc_linreg_plan *G = dpc_linreg_plan_get(lr);
        CHECK(G->ledger.epsilon < 50 && G->ledger.epsilon > 0 && G->ledger.epsilon_target == 50 &&
                  G->eps0 <= log(5000.0 / (16 * log(4 / 5e-6))),
              "DP-SSGD at eps 50: eps %g, eps0 %g within the theorem's range", G->ledger.epsilon,
              G->eps0);
        dpc_linreg_free(lr);
        lr = NULL;
    }
    CHECK(!strcmp(dpc_linreg_algo_name(DPC_LINREG_AMBSSGD), "dp-ambssgd") &&
              !strcmp(dpc_dpstat_rule_name(DPC_DPSTAT_PAPER), "paper"), "names");
    dpc_linreg_algo a;
    dpc_dpstat_rule r;
    CHECK(dpc_linreg_algo_parse("dp-ssgd", &a, &err) == DPC_OK && a == DPC_LINREG_SSGD, "parse");
    CHECK(dpc_linreg_algo_parse("foo", &a, &err) == DPC_E_INVALID && strstr(err.msg, "foo"),
          "bad algo name");
    CHECK(dpc_dpstat_rule_parse("margin", &r, &err) == DPC_OK && r == DPC_DPSTAT_MARGIN, "rule");
    dpc_linreg_free(NULL);
    dpc_dataset_free(cls);
    dpc_dataset_free(ds);
}

/* The prior a data set makes public (dpc_linreg_prior_from_data), the paper's K and the SSP
 * default bounds, each against the formula it implements. */
static void test_prior_defaults(void)
{
    dpc_rng rng;
    dpc_rng_seed(&rng, 12);
    dpc_error err = {0};
    dpc_dataset *ds = NULL;
    CHECK_OK(dpc_data_synth_linreg(&ds, &rng, 0, 3000, 4, 1.0, 0.7, NULL, &err), &err);
    if (!ds) return;
    dpc_linreg_prior p, q;
    dpc_linreg_prior_init(&p);
    q = p;
    unsigned filled = 0;
    CHECK_OK(dpc_linreg_prior_from_data(&p, ds, DPC_LINREG_PRIOR_KAPPA, &filled, &err), &err);
    CHECK_OK(dpc_linreg_prior_from_spectrum(&q, ds->cov_diag, ds->d, &err), &err);
    double wh = 0;
    for (size_t j = 0; j < ds->d; j++) wh += ds->cov_diag[j] * ds->truth[j] * ds->truth[j];
    CHECK(filled == (DPC_LINREG_PRIOR_H_NORM | DPC_LINREG_PRIOR_R_X | DPC_LINREG_PRIOR_W_BOUND |
                     DPC_LINREG_PRIOR_SIGMA_BOUND) &&
              p.h_norm == q.h_norm && p.r_x == q.r_x && p.kappa == 0 && p.sigma_bound == 0.7 &&
              p.w_bound == sqrt(wh),
          "synthetic: the spectrum, ||w*||_H and the generator's noise 0.7 (kept: kappa); "
          "filled %#x, sigma %g", filled, p.sigma_bound);
    dpc_dataset_free(ds);
    dpc_dataset *cs = NULL;
    CHECK_OK(dpc_data_load_spec(&cs, NULL, "synthetic:mean,n=50,d=3", &rng, &err), &err);
    if (cs) {
        dpc_linreg_prior_init(&p);
        CHECK_OK(dpc_linreg_prior_from_data(&p, cs, 0, &filled, &err), &err);
        double B = cs->x_norm_bound;
        CHECK(B > 0 && filled == (DPC_LINREG_PRIOR_H_NORM | DPC_LINREG_PRIOR_R_X) && p.r_x == B &&
                  p.h_norm == B * B,
              "a row-norm bound B: r_x = B, h_norm = B^2 (B = %g, filled %#x)", B, filled);
        dpc_dataset_free(cs);
    }
    /* SSP: R_x (ln N)^a and K2 sqrt(w^2 + sigma^2) (ln N)^a; a given bound is kept */
    dpc_linreg_prior_init(&p);
    p.r_x = 2, p.sigma_bound = 0.5;
    dpc_linreg_ssp_opts so = {1, 1e-5, 0, 3.5, 0, 0};
    dpc_linreg_ssp_bounds(&so, &p, 1000);
    CHECK(fabs(so.x_bound - 2 * sqrt(log(1000.0))) < 1e-12 && so.y_bound == 3.5,
          "ssp default x bound %g, given y bound kept", so.x_bound);
    so.y_bound = 0;
    dpc_linreg_ssp_bounds(&so, &p, 1000);
    CHECK(fabs(so.y_bound - sqrt(8.0 / 3.0) * sqrt(1.25) * sqrt(log(1000.0))) < 1e-12,
          "ssp default y bound %g", so.y_bound);
    /* the paper's K = ceil(200 log2 N) */
    dpc_linreg_opts o;
    dpc_linreg_opts_init(&o, DPC_LINREG_AMBSSGD);
    o.delta = 1e-5; /* the note's (1, 1e-5), kept where it is >= 1/N */
    o.allow_large_delta = 1;
    o.epsilon = 1;
    o.prior.h_norm = o.prior.kappa = 1, o.prior.r_x = 2;
    o.dpstat_k = DPC_LINREG_DPSTAT_K_PAPER;
    dpc_linreg_plan P;
    CHECK_OK(dpc_linreg_plan_make(&P, &o, 20000, 4, &err), &err);
    CHECK(P.dpstat_k == 2858, "the paper's K at N = 20000: %zu (200 log2 N = 2857.5)", P.dpstat_k);
}

/* Where each prior field came from (reports) and the three fields without a default: recomputed
 * here from the rule "kept: option; filled: the data's (generator, or the row-norm bound: B^2 for
 * h_norm, B for r_x); else default", on the masks dpc_linreg_prior_from_data returns. */
static void test_prior_sources(void)
{
    dpc_rng rng;
    dpc_rng_seed(&rng, 13);
    dpc_error err = {0};
    dpc_dataset *syn = NULL, *bnd = NULL;
    CHECK_OK(dpc_data_synth_linreg(&syn, &rng, 0, 500, 3, 1.0, 0.5, NULL, &err), &err);
    CHECK_OK(dpc_data_load_spec(&bnd, NULL, "synthetic:mean,n=50,d=3", &rng, &err), &err);
    if (!syn || !bnd) return;
    dpc_linreg_prior p;
    unsigned filled = 0, keep = DPC_LINREG_PRIOR_KAPPA | DPC_LINREG_PRIOR_K2;
    dpc_linreg_prior_init(&p);
    CHECK_OK(dpc_linreg_prior_from_data(&p, syn, keep, &filled, &err), &err);
    for (unsigned k = 0; k < 7; k++) {
        unsigned bit = 1u << k;
        const char *want = (keep & bit) ? "option" : (filled & bit) ? "synthetic generator" : "default";
        const char *got = dpc_linreg_prior_source(syn, keep, filled, bit);
        CHECK(!strcmp(got, want), "synthetic, field %u: %s (want %s)", k, got, want);
    }
    CHECK(dpc_linreg_prior_require(keep, filled, &err) == DPC_OK, "synthetic: all of H known");
    dpc_linreg_prior_init(&p);
    CHECK_OK(dpc_linreg_prior_from_data(&p, bnd, 0, &filled, &err), &err);
    CHECK(!strcmp(dpc_linreg_prior_source(bnd, 0, filled, DPC_LINREG_PRIOR_H_NORM), "x_norm_bound^2") &&
              !strcmp(dpc_linreg_prior_source(bnd, 0, filled, DPC_LINREG_PRIOR_R_X), "x_norm_bound") &&
              !strcmp(dpc_linreg_prior_source(bnd, 0, filled, DPC_LINREG_PRIOR_KAPPA), "default") &&
              !strcmp(dpc_linreg_prior_source(bnd, DPC_LINREG_PRIOR_R_X, filled, DPC_LINREG_PRIOR_R_X),
                      "option"),
          "row-norm bound: h_norm B^2, r_x B, kappa default, a kept field the option's");
    dpc_error e2 = {0};
    CHECK(dpc_linreg_prior_require(0, filled, &e2) == DPC_E_INVALID &&
              !strcmp(e2.field, "prior.kappa"),
          "row-norm bound without kappa: refused naming prior.kappa (got '%s')", e2.field);
    CHECK(dpc_linreg_prior_require(DPC_LINREG_PRIOR_KAPPA, filled, &e2) == DPC_OK, "kappa given");
    dpc_error e3 = {0};
    CHECK(dpc_linreg_prior_require(DPC_LINREG_PRIOR_KAPPA | DPC_LINREG_PRIOR_R_X, 0, &e3) ==
                  DPC_E_INVALID && !strcmp(e3.field, "prior.h_norm"),
          "nothing known: the first missing field, prior.h_norm (got '%s')", e3.field);
    dpc_error e4 = {0};
    CHECK(dpc_linreg_prior_require(DPC_LINREG_PRIOR_KAPPA | DPC_LINREG_PRIOR_H_NORM, 0, &e4) ==
                  DPC_E_INVALID && !strcmp(e4.field, "prior.r_x"),
          "r_x missing named (got '%s')", e4.field);
    dpc_dataset_free(syn);
    dpc_dataset_free(bnd);
}

/* The reported metrics of a release, recomputed here from their definitions: 1/2 sum_k
 * h_k (w_k - w*_k)^2 on a synthetic set, 1/2 mean (y - <x, w>)^2 on each set; NAN without a
 * generator (risk) or without a set (loss). */
static void test_evaluate(void)
{
    dpc_rng rng;
    dpc_rng_seed(&rng, 14);
    dpc_error err = {0};
    dpc_dataset *tr = NULL, *te = NULL, *plain = NULL;
    CHECK_OK(dpc_data_synth_linreg(&tr, &rng, 0, 300, 4, 1.0, 0.3, NULL, &err), &err);
    CHECK_OK(dpc_data_synth_linreg(&te, &rng, 0, 100, 4, 1.0, 0.3, NULL, &err), &err);
    CHECK_OK(dpc_data_load_spec(&plain, NULL, "synthetic:mean,n=40,d=4", &rng, &err), &err);
    if (!tr || !te || !plain) return;
    double w[4] = {0.3, -0.2, 0.1, 0.5}, risk, trl, tel;
    dpc_linreg_evaluate(tr, te, w, &risk, &trl, &tel);
    double r0 = 0, l0 = 0, l1 = 0;
    for (size_t k = 0; k < 4; k++) r0 += 0.5 * tr->cov_diag[k] * (w[k] - tr->truth[k]) * (w[k] - tr->truth[k]);
    for (size_t i = 0; i < tr->n; i++) {
        double e = tr->y[i];
        for (size_t k = 0; k < 4; k++) e -= tr->x[i * 4 + k] * w[k];
        l0 += e * e;
    }
    for (size_t i = 0; i < te->n; i++) {
        double e = te->y[i];
        for (size_t k = 0; k < 4; k++) e -= te->x[i * 4 + k] * w[k];
        l1 += e * e;
    }
    l0 *= 0.5 / (double)tr->n, l1 *= 0.5 / (double)te->n;
    CHECK_NEAR_REL(risk, r0, 1e-12, "excess risk %g (definition %g)", risk, r0);
    CHECK_NEAR_REL(trl, l0, 1e-12, "train loss %g (definition %g)", trl, l0);
    CHECK_NEAR_REL(tel, l1, 1e-12, "test loss %g (definition %g)", tel, l1);
    dpc_linreg_evaluate(plain, NULL, w, &risk, &trl, &tel);
    CHECK(isnan(risk) && isfinite(trl) && isnan(tel), "no generator: risk NAN; no test set: NAN");
    CHECK(isnan(dpc_linreg_data_risk(plain, w)) && fabs(dpc_linreg_data_risk(tr, w) - r0) <= 1e-12 * r0,
          "data risk: the generator's set only");
    dpc_dataset_free(tr);
    dpc_dataset_free(te);
    dpc_dataset_free(plain);
}

int main(void)
{
    test_risk_identity();
    test_plan_layout();
    test_dpstat();
    test_permutation();
    test_run_mechanics();
    test_ols_ssp();
    test_validation();
    test_prior_defaults();
    test_prior_sources();
    test_evaluate();
    return TEST_SUMMARY();
}
