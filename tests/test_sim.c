/* test_sim.c — the correlated-noise source (FFT overlap-save vs direct convolution vs the
 * mechanism's streaming generator, coordinate splitting) and the simulators against the exact
 * theory: mean estimation (note 5.2) within 2%, fixed design within 3% of V0 at the Figure 2
 * point d = 128, random design between V0 and the sandwich bound, the log-cosh problem below the
 * Theorem 3.1 bound. Under sanitizers (tests_scale() < 1) the long runs are replaced by smaller
 * problems with 5-standard-error tolerances (batch means). */
#include "dpcorr/papers/sim.h"
#include "dpcorr/papers/theory.h"
#include "harness.h"

static dpc_error err;

static void test_noise_parity(void)
{
    size_t n = 3000, d = 3;
    dpc_mech_params p;
    dpc_mech_params_init(&p);
    p.kind = DPC_MECH_NU;
    p.nu = 0.01;
    p.steps = n;
    dpc_mech *m = NULL;
    CHECK_OK(dpc_mech_new(&m, &p, &err), &err);
    double *beta = malloc(n * sizeof *beta);
    CHECK_OK(dpc_mech_noising_coeffs(m, beta, n, &err), &err);
    dpc_rng rng;
    dpc_rng_seed(&rng, 5);
    dpc_rng_stream s = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_NOISE, 0));
    double *o[4];
    const dpc_sim_noise_method meth[4] = {DPC_SIM_NOISE_FFT, DPC_SIM_NOISE_DIRECT, DPC_SIM_NOISE_MECH, DPC_SIM_NOISE_FFT};
    const size_t blk[4] = {256, 100, 77, 0};
    for (int k = 0; k < 4; k++) {
        dpc_sim_noise_config c = {meth[k], beta, k == 3 ? 1000 : n, m, &s, 2, d, blk[k], 0};
        dpc_sim_noise *ns = NULL;
        CHECK_OK(dpc_sim_noise_new(&ns, &c, &err), &err);
        o[k] = malloc(n * d * sizeof(double));
        /* read in uneven pieces */
        size_t done = 0, piece = 1;
        while (done < n) {
            size_t q = piece < n - done ? piece : n - done;
            CHECK_OK(dpc_sim_noise_next(ns, o[k] + done * d, q, &err), &err);
            done += q;
            piece = piece * 3 + 1;
        }
        CHECK(dpc_sim_noise_step(ns) == n, "step counter");
        dpc_sim_noise_free(ns);
    }
    double e1 = 0, e2 = 0, e3 = 0, scale = 0;
    for (size_t i = 0; i < n * d; i++) {
        e1 = fmax(e1, fabs(o[0][i] - o[1][i]));
        e2 = fmax(e2, fabs(o[1][i] - o[2][i]));
        if (i < 1000 * d) e3 = fmax(e3, fabs(o[3][i] - o[1][i]));
        scale = fmax(scale, fabs(o[1][i]));
    }
    CHECK(scale > 1.0 && e1 < 1e-12, "FFT vs direct: %g", e1);
    CHECK(e2 < 1e-12, "direct vs mechanism generator: %g", e2);
    CHECK(e3 < 1e-12, "truncated FFT (len 1000) equals direct for t < 1000: %g", e3);
    /* the first value is beta_0 Z_0 = Z[0, coord0] exactly */
    CHECK(o[1][0] == dpc_rng_gaussian(&s, 0, 2), "w_0 = Z_0");
    /* coordinate splitting */
    dpc_sim_noise_config c1 = {DPC_SIM_NOISE_FFT, beta, 1000, NULL, &s, 3, 2, 128, 0};
    dpc_sim_noise *ns = NULL;
    double part[2 * 600];
    CHECK_OK(dpc_sim_noise_new(&ns, &c1, &err), &err);
    CHECK_OK(dpc_sim_noise_next(ns, part, 600, &err), &err);
    dpc_sim_noise_free(ns);
    double es = 0;
    for (size_t t = 0; t < 600; t++)
        for (size_t j = 0; j < 2; j++) es = fmax(es, fabs(part[t * 2 + j] - o[3][t * d + j + 1]));
    CHECK(es < 1e-12, "coordinate split: %g", es);
    /* memory budget enforced, message names it */
    dpc_sim_noise_config c2 = {DPC_SIM_NOISE_FFT, beta, n, NULL, &s, 0, 1000, 0, 1000};
    CHECK(dpc_sim_noise_new(&ns, &c2, &err) == DPC_E_RANGE && strstr(err.msg, "memory_budget"), "%s", err.msg);
    for (int k = 0; k < 4; k++) free(o[k]);
    free(beta);
    dpc_mech_free(m);
}

static double *nu_coeffs(double nu, double tol, size_t *len)
{
    dpc_theory_beta b = dpc_theory_beta_nu(nu);
    *len = dpc_theory_beta_len_for_tail(&b, tol, 1);
    double *x = malloc(*len * sizeof *x);
    dpc_theory_beta_coeffs(&b, x, *len);
    return x;
}

static void test_mean_estimation(void)
{
    double sc = tests_scale();
    const double etas[] = {0.5, 0.1, 0.02};
    for (int i = 0; i < 3; i++) {
        double eta = etas[i], g2, one = 1.0;
        size_t len;
        double *beta = nu_coeffs(eta, 1e-10, &len);
        dpc_theory_beta b = dpc_theory_beta_nu(eta);
        CHECK_OK(dpc_theory_gamma_inf2(&b, &g2, &err), &err);
        dpc_sim_config c;
        dpc_sim_config_init(&c);
        c.eta = eta;
        c.sigma = sqrt(g2); /* rho = 1/2, G = 1 */
        c.d = 1;
        c.lambda = &one;
        c.burn_in = (size_t)(20 / eta);
        c.steps = (size_t)(2e6 * sc);
        c.seed = 11 + (uint64_t)i;
        c.beta = beta;
        c.len = len;
        dpc_sim_result r;
        CHECK_OK(dpc_sim_run(&c, &r, &err), &err);
        double th = dpc_theory_mean_opt(eta, 0.5, 1.0, 0.0);
        CHECK(fabs(r.mean - th) <= 5 * r.stderr_, "mean est eta=%g: %g +- %g vs %g (5 se)", eta, r.mean, r.stderr_, th);
        if (sc == 1.0) CHECK(fabs(r.mean / th - 1) <= 0.02, "mean est eta=%g within 2%%: %g", eta, r.mean / th);
        CHECK(r.seed == c.seed && r.steps == c.steps - c.steps % 32, "recorded seed and window");
        free(beta);
        /* DP-SGD: E delta^2 = eta / (2 - eta) */
        double one_beta = 1.0;
        c.beta = &one_beta;
        c.len = 1;
        c.sigma = 1.0;
        CHECK_OK(dpc_sim_run(&c, &r, &err), &err);
        double ts = eta / (2 - eta);
        CHECK(fabs(r.mean - ts) <= 5 * r.stderr_ && fabs(r.mean / ts - 1) <= 0.02 / sqrt(sc),
              "SGD mean est eta=%g: %g vs %g", eta, r.mean, ts);
    }
}

static void test_linreg(void)
{
    int full = tests_scale() == 1.0;
    /* full: the Figure 2 point (d = 128, 1/k, eta = 0.02); sanitizers: d = 16, eta = 0.05 */
    size_t d = full ? 128 : 16;
    double eta = full ? 0.02 : 0.05, lam[128];
    dpc_theory_powerlaw(lam, d, 1.0);
    double nu = eta * lam[d - 1], g2;
    size_t len;
    double *beta = nu_coeffs(nu, 1e-8, &len);
    dpc_theory_beta b = dpc_theory_beta_nu(nu);
    dpc_theory_problem p = {eta, 0.5, 1.0, 0.0, d, lam};
    dpc_theory_bounds bd;
    double tr = 0;
    for (size_t j = 0; j < d; j++) tr += lam[j];
    CHECK_OK(dpc_theory_lti_bounds(&p, &b, tr + 2 * lam[0], 3.0, &bd, &err), &err);
    CHECK_OK(dpc_theory_gamma_inf2(&b, &g2, &err), &err);
    dpc_sim_config c;
    dpc_sim_config_init(&c);
    c.eta = eta;
    c.sigma = sqrt(g2);
    c.d = d;
    c.lambda = lam;
    c.burn_in = (size_t)(10 / nu);
    c.steps = full ? 131072 : 32768;
    c.seed = 2024;
    c.beta = beta;
    c.len = len;
    dpc_sim_result r;
    CHECK_OK(dpc_sim_run(&c, &r, &err), &err);
    CHECK(fabs(r.mean - bd.v0) <= 5 * r.stderr_, "fixed design d=%zu: %g +- %g vs V0 %g", d, r.mean, r.stderr_, bd.v0);
    if (full) CHECK(fabs(r.mean / bd.v0 - 1) <= 0.03, "fixed design within 3%% of V0: %g", r.mean / bd.v0);
    c.model = DPC_SIM_RANDOM;
    CHECK_OK(dpc_sim_run(&c, &r, &err), &err);
    CHECK(r.mean >= bd.v0 - 3 * r.stderr_ && r.mean <= bd.sandwich_upper,
          "random design d=%zu: V0 %g <= %g +- %g <= sandwich %g", d, bd.v0, r.mean, r.stderr_, bd.sandwich_upper);
    free(beta);
}

static void test_mech_and_logcosh(void)
{
    /* any mechanism through its generator equals the FFT route on the same seed */
    dpc_mech_params p;
    dpc_mech_params_init(&p);
    p.kind = DPC_MECH_NU;
    p.nu = 0.05;
    p.steps = 6000;
    dpc_mech *m = NULL;
    CHECK_OK(dpc_mech_new(&m, &p, &err), &err);
    double *beta = malloc(6000 * sizeof *beta), lam[4] = {1, 0.5, 0.25, 0.125};
    CHECK_OK(dpc_mech_noising_coeffs(m, beta, 6000, &err), &err);
    dpc_sim_config c;
    dpc_sim_config_init(&c);
    c.eta = 0.2;
    c.sigma = 1.3;
    c.sigma_sgd = 0.4;
    c.d = 4;
    c.lambda = lam;
    c.burn_in = 1000;
    c.steps = 4096;
    c.seed = 3;
    c.beta = beta;
    c.len = 6000;
    c.chunk = 3;
    dpc_sim_result r1, r2;
    CHECK_OK(dpc_sim_run(&c, &r1, &err), &err);
    c.method = DPC_SIM_NOISE_MECH;
    c.mech = m;
    CHECK_OK(dpc_sim_run(&c, &r2, &err), &err);
    CHECK_NEAR_REL(r1.mean, r2.mean, 1e-10, "sim via FFT = sim via the mechanism generator");
    c.steps = 10000;
    CHECK(dpc_sim_run(&c, &r2, &err) != DPC_OK, "horizon beyond the mechanism's steps fails: %s", err.msg);
    free(beta);
    dpc_mech_free(m);

    /* log-cosh with mu = L is the quadratic: SGD exact E theta^2 = eta^2 s^2 / (b (2 - b)) */
    double one = 1.0, sc = tests_scale();
    dpc_sim_config_init(&c);
    c.model = DPC_SIM_LOGCOSH;
    c.mu = c.L = 1.0;
    c.eta = 0.5;
    c.sigma = 1.0;
    c.d = 2;
    c.burn_in = 100;
    c.steps = (size_t)(400000 * sc);
    c.seed = 8;
    c.beta = &one;
    c.len = 1;
    CHECK_OK(dpc_sim_run(&c, &r1, &err), &err);
    double ex = 2 * 0.25 / (0.5 * 1.5);
    CHECK(fabs(r1.mean - ex) <= 5 * r1.stderr_, "logcosh mu=L: %g +- %g vs %g", r1.mean, r1.stderr_, ex);
    CHECK_NEAR_REL(r1.gap, 0.5 * r1.mean, 1e-12, "gap = mean/2 for the quadratic");
    /* kappa = 10: simulation below the Theorem 3.1 bound for SGD and nu-FTRL */
    const double nus[2] = {0.0, 0.1};
    for (int k = 0; k < 2; k++) {
        dpc_theory_beta b = k ? dpc_theory_beta_nu(nus[k]) : dpc_theory_beta_sgd();
        size_t len = k ? dpc_theory_beta_len_for_tail(&b, 1e-10, 1) : 1;
        double *x = malloc(len * sizeof *x), g2;
        dpc_theory_beta_coeffs(&b, x, len);
        CHECK_OK(dpc_theory_gamma_inf2(&b, &g2, &err), &err);
        dpc_theory_sc sp = {0.1, 1.0, 1.0, 0.5, 1.0, 0.0, 2, 0};
        dpc_theory_sc_result br;
        CHECK_OK(dpc_theory_sc_bound(&sp, &b, &br, &err), &err);
        c.mu = 0.1;
        c.L = 1.0;
        c.eta = 1.0;
        c.sigma = sqrt(g2);
        c.beta = x;
        c.len = len;
        c.burn_in = 300;
        CHECK_OK(dpc_sim_run(&c, &r1, &err), &err);
        CHECK(r1.mean + 3 * r1.stderr_ <= br.dist && r1.mean > 0.05 * br.dist,
              "logcosh kappa=10 %s: sim %g <= bound %g", k ? "nu" : "sgd", r1.mean, br.dist);
        CHECK(r1.gap <= br.value, "function gap below the bound");
        free(x);
    }
}

int main(void)
{
    test_noise_parity();
    test_mean_estimation();
    test_mech_and_logcosh();
    test_linreg();
    return TEST_SUMMARY();
}
