/* test_account_mech.c — correlated-noise mechanisms as accountant events: the whole-run
 * Gaussian (rho = 1/(2 sigma^2), mu = 1/sigma under the library's noise convention), the
 * equivalence with DP-SGD for the identity strategy, amplified banded MF with cyclic Poisson
 * sampling (Choquette-Choo et al. 2023), the sampler's own description, calibration and refusals.
 */
#include "dpcorr/account.h"
#include "dpcorr/sampler.h"
#include "harness.h"
#include "mech_fixture.h"

#include <string.h>

static double eps_event(const dpc_gauss_event *c, dpc_accountant acc, double delta)
{
    dpc_event ev = {DPC_NEIGHBOR_ZERO_OUT, 1, c};
    dpc_account_opts o;
    dpc_account_opts_init(&o, acc);
    o.pld_interval = 2e-4;
    dpc_account_result r;
    dpc_error err = {0};
    CHECK_OK(dpc_account_epsilon(&ev, &o, delta, &r, &err), &err);
    return r.epsilon;
}

static void test_whole_run(void)
{
    dpc_error err = {0};
    dpc_mech *m = mech_of(DPC_MECH_NU, 500, 0.05, 0);
    if (!m) return;
    dpc_participation part = {DPC_PART_MINSEP, 4, 100};
    dpc_gauss_event ev;
    dpc_account_mech_info info;
    dpc_sensitivity s, col;
    dpc_participation single = {DPC_PART_MINSEP, 1, 1};
    CHECK_OK(dpc_mech_sensitivity(m, &part, &s, &err), &err);
    CHECK_OK(dpc_mech_sensitivity(m, &single, &col, &err), &err);
    /* the noise multiplier z: noise std per row of Z = z * colnorm; whole run = noise_std / sens.
     * Choose z so that the whole-run multiplier is 2. */
    double z = 2.0 * s.value / col.value;
    CHECK_OK(dpc_account_mech_event(m, &part, z, 1.0, &ev, &info, &err), &err);
    CHECK(!info.amplified && info.rounds == 1 && ev.count == 1, "one whole-run Gaussian");
    CHECK(info.noise_multiplier == z && info.noise_std == z * col.value,
          "noise std = z x column norm exactly");
    CHECK_NEAR_REL(ev.sigma, 2.0, 1e-15, "whole-run multiplier noise_std / sens");
    CHECK(ev.sigma == info.run_sigma && ev.sensitivity == 1.0 &&
              ev.sampling == DPC_SAMPLING_NONE, "event = the whole-run Gaussian");
    CHECK(s.value > col.value, "4 participations: sens %g > colnorm %g", s.value, col.value);
    CHECK(info.sensitivity == s.value && info.sensitivity_exact == s.exact &&
              info.column_norm == col.value, "sensitivities reported from the mechanism");
    /* rho = 1/(2 run_sigma^2) and mu = 1/run_sigma for the whole run, whatever n and k */
    ev.sigma = 2.0; /* exactly: the closed forms below are at 2 */
    double rho_eps, gdp_eps;
    CHECK_OK(dpc_zcdp_epsilon(1.0 / 8.0, 1e-6, DPC_ZCDP_TIGHT, &rho_eps, NULL, &err), &err);
    CHECK_OK(dpc_gdp_epsilon(0.5, 1e-6, &gdp_eps, &err), &err);
    CHECK_NEAR_REL(eps_event(&ev, DPC_ACCOUNTANT_ZCDP, 1e-6), rho_eps, 1e-14, "zCDP rho 1/8");
    CHECK_NEAR_REL(eps_event(&ev, DPC_ACCOUNTANT_GDP, 1e-6), gdp_eps, 1e-14, "GDP mu 1/2");
    dpc_mech_free(m);

    /* identity (DP-SGD without sampling): k participations with per-step multiplier z (std z
     * per step: the DP-SGD meaning) is the k-fold composition of a Gaussian with multiplier z */
    m = mech_of(DPC_MECH_IDENTITY, 100, 0, 0);
    if (!m) return;
    dpc_participation pk = {DPC_PART_MINSEP, 9, 10};
    CHECK_OK(dpc_account_mech_event(m, &pk, 1.5, 1.0, &ev, &info, &err), &err);
    CHECK_NEAR_REL(info.sensitivity, 3.0, 1e-15, "identity: sens sqrt(9)");
    CHECK(info.noise_std == 1.5 && info.noise_multiplier == 1.5, "DP-SGD: std z per step");
    dpc_gauss_event sgd;
    dpc_gauss_event_init(&sgd);
    sgd.sigma = 1.5;
    sgd.count = 9;
    for (int a = 0; a < 4; a++) {
        if (a == DPC_ACCOUNTANT_PLD) continue; /* checked below with a coarser comparison */
        CHECK_NEAR_REL(eps_event(&ev, (dpc_accountant)a, 1e-5),
                       eps_event(&sgd, (dpc_accountant)a, 1e-5), 1e-10, "identity = DP-SGD (%s)",
                       dpc_accountant_name((dpc_accountant)a));
    }
    CHECK_NEAR_REL(eps_event(&ev, DPC_ACCOUNTANT_PLD, 1e-5),
                   eps_event(&sgd, DPC_ACCOUNTANT_PLD, 1e-5), 1e-4, "identity = DP-SGD (pld)");
    dpc_mech_free(m);
}

static void test_amplified(void)
{
    dpc_error err = {0};
    /* BSR with 4 bands, cyclic every 4 steps: columns t0, t0+4, ... have disjoint supports, so
     * sens = sqrt(16) * colmax, and the 16-round DP-SGD event has the run's multiplier z. */
    size_t n = 64, b = 4;
    dpc_mech *m = mech_of(DPC_MECH_BSR, n, 0, b);
    if (!m) return;
    double c[64];
    CHECK_OK(dpc_mech_strategy_coeffs(m, c, n, &err), &err);
    double col2 = 0;
    for (size_t j = 0; j < n; j++) {
        if (j >= b) CHECK(c[j] == 0.0, "BSR strategy is banded at %zu", j);
        col2 += c[j] * c[j];
    }
    dpc_participation part = {DPC_PART_CYCLIC, 16, b};
    dpc_gauss_event ev;
    dpc_account_mech_info info;
    CHECK_OK(dpc_account_mech_event(m, &part, 1.25, 0.05, &ev, &info, &err), &err);
    CHECK(info.amplified && info.rounds == 16 && ev.count == 16, "16 rounds, got %zu", info.rounds);
    CHECK_NEAR_REL(info.column_norm, sqrt(col2), 1e-12, "column norm");
    CHECK_NEAR_REL(info.sensitivity, 4.0 * sqrt(col2), 1e-12, "cyclic sensitivity 4 colmax");
    CHECK_NEAR_REL(ev.sigma, 1.25, 1e-15, "the event's multiplier is z");
    CHECK_NEAR_REL(info.noise_std, 1.25 * sqrt(col2), 1e-12, "noise std z colmax");
    CHECK(ev.sampling == DPC_SAMPLING_POISSON && ev.q == 0.05, "Poisson rate q");
    dpc_gauss_event sgd;
    dpc_gauss_event_init(&sgd);
    sgd.sigma = 1.25;
    sgd.sampling = DPC_SAMPLING_POISSON;
    sgd.q = 0.05;
    sgd.count = 16;
    CHECK_NEAR_REL(eps_event(&ev, DPC_ACCOUNTANT_RDP, 1e-6),
                   eps_event(&sgd, DPC_ACCOUNTANT_RDP, 1e-6), 1e-14,
                   "amplified BandMF = DP-SGD with ceil(n/b) rounds");
    /* amplification helps relative to the whole-run guarantee at the same sigma */
    dpc_gauss_event whole;
    CHECK_OK(dpc_account_mech_event(m, &part, 1.25, 1.0, &whole, NULL, &err), &err);
    CHECK(eps_event(&ev, DPC_ACCOUNTANT_PLD, 1e-6) < eps_event(&whole, DPC_ACCOUNTANT_PLD, 1e-6),
          "sampling amplifies");
    /* refusals: non-cyclic participation, a strategy with more bands than b */
    dpc_participation ms = {DPC_PART_MINSEP, 16, b};
    CHECK(dpc_account_mech_event(m, &ms, 1.0, 0.05, &ev, NULL, &err) == DPC_E_UNSUPPORTED &&
              strstr(err.msg, "cyclic"),
          "min-sep participation cannot be amplified: '%s'", err.msg);
    dpc_participation narrow = {DPC_PART_CYCLIC, 32, 2};
    CHECK(dpc_account_mech_event(m, &narrow, 1.0, 0.05, &ev, NULL, &err) == DPC_E_UNSUPPORTED &&
              strstr(err.msg, "bands"),
          "4 bands > b = 2 refused: '%s'", err.msg);
    dpc_mech_free(m);
    m = mech_of(DPC_MECH_NU, 50, 0.1, 0);
    if (!m) return;
    dpc_participation cyc = {DPC_PART_CYCLIC, 5, 10};
    CHECK(dpc_account_mech_event(m, &cyc, 1.0, 0.05, &ev, NULL, &err) == DPC_E_UNSUPPORTED,
          "nu is not banded: '%s'", err.msg);
    /* with b >= n every lower-triangular strategy is banded: one amplified round */
    dpc_participation once = {DPC_PART_CYCLIC, 1, 50};
    CHECK_OK(dpc_account_mech_event(m, &once, 1.0, 0.05, &ev, &info, &err), &err);
    CHECK(info.amplified && info.rounds == 1, "single participation amplifies");
    CHECK_NEAR_REL(ev.sigma, 1.0, 1e-14, "single participation: multiplier z");
    dpc_mech_free(m);
    m = mech_of(DPC_MECH_TREE, 64, 0, 0);
    if (!m) return;
    dpc_participation t4 = {DPC_PART_CYCLIC, 16, 4};
    CHECK(dpc_account_mech_event(m, &t4, 1.0, 0.05, &ev, NULL, &err) == DPC_E_UNSUPPORTED,
          "tree refused: '%s'", err.msg);
    dpc_mech_free(m);
}

static void test_sampler_description(void)
{
    /* the sampler's description is what the accountant consumes */
    dpc_error err = {0};
    dpc_rng rng;
    dpc_rng_seed(&rng, 7);
    dpc_sampler_config cfg = {DPC_SAMPLER_CYCLIC_POISSON, 1000, 25, 100, 4};
    dpc_sampler *s = NULL;
    CHECK_OK(dpc_sampler_new(&s, &cfg, &rng, &err), &err);
    if (!s) return;
    dpc_sampler_desc d;
    dpc_sampler_describe(s, &d);
    dpc_mech *m = mech_of(DPC_MECH_BSR, 100, 0, 4);
    if (!m) return;
    dpc_gauss_event ev;
    dpc_account_mech_info info;
    CHECK_OK(dpc_account_mech_event(m, &d.part, 1.0, d.q, &ev, &info, &err), &err);
    CHECK(info.amplified && info.rounds == d.opportunities,
          "rounds %zu = sampler opportunities %zu", info.rounds, d.opportunities);
    CHECK(ev.q == d.q, "rate from the sampler");
    dpc_mech_free(m);
    dpc_sampler_free(s);
}

static void test_calibrate(void)
{
    dpc_error err = {0};
    dpc_mech *m = mech_of(DPC_MECH_BSR, 64, 0, 4);
    if (!m) return;
    dpc_participation part = {DPC_PART_CYCLIC, 16, 4};
    dpc_account_opts o;
    dpc_account_opts_init(&o, DPC_ACCOUNTANT_RDP);
    double z;
    dpc_gauss_event cev;
    dpc_account_mech_info cinfo;
    CHECK_OK(dpc_account_mech_calibrate(m, &part, 0.1, &o, 2.0, 1e-6, &z, &cev, &cinfo, &err),
             &err);
    dpc_gauss_event ev;
    dpc_account_mech_info info;
    CHECK_OK(dpc_account_mech_event(m, &part, z, 0.1, &ev, &info, &err), &err);
    double e = eps_event(&ev, DPC_ACCOUNTANT_RDP, 1e-6);
    CHECK(e <= 2.0 && 2.0 - e < 1e-6, "calibrated mechanism reaches eps 2: %.10f", e);
    CHECK(cinfo.noise_multiplier == z && cev.sigma == z && cinfo.amplified,
          "calibration returns its event and description");
    CHECK_NEAR_REL(cinfo.noise_std, info.noise_std, 1e-15, "same noise as the given-z run");
    /* zCDP: whole-run multiplier 1/sqrt(2 rho_for(eps, delta)) whatever the mechanism; z is it
     * times sens / colnorm */
    dpc_account_opts_init(&o, DPC_ACCOUNTANT_ZCDP);
    double rho;
    CHECK_OK(dpc_account_mech_calibrate(m, &part, 1.0, &o, 2.0, 1e-6, &z, &cev, &cinfo, &err),
             &err);
    CHECK_OK(dpc_zcdp_rho_for(2.0, 1e-6, DPC_ZCDP_TIGHT, &rho, &err), &err);
    CHECK_NEAR_REL(cinfo.run_sigma, 1.0 / sqrt(2 * rho), 1e-8, "zCDP calibration closed form");
    CHECK_NEAR_REL(z, cinfo.run_sigma * cinfo.sensitivity / cinfo.column_norm, 1e-15,
                   "z = run_sigma sens / colnorm");
    CHECK(cev.sigma == cinfo.run_sigma, "the whole-run event");
    CHECK(dpc_account_mech_event(m, &part, -1.0, 1.0, &ev, NULL, &err) == DPC_E_INVALID &&
              strstr(err.msg, "noise_multiplier") && !strcmp(err.field, "noise_multiplier"),
          "negative noise multiplier: '%s'", err.msg);
    CHECK(dpc_account_mech_event(m, &part, 1.0, 0.0, &ev, NULL, &err) == DPC_E_INVALID &&
              strstr(err.msg, "q"),
          "q = 0: '%s'", err.msg);
    dpc_mech_free(m);
}

/* The step search against a linear scan: the largest n whose run (mechanism rebuilt for n) meets
 * the budget. nu-DP-FTRL with up to 100 participations at least 4 apart, GDP (exact). */
static void test_steps_search(void)
{
    dpc_error err = {0};
    dpc_mech_params p;
    dpc_mech_params_init(&p);
    p.kind = DPC_MECH_NU;
    p.nu = 0.1;
    dpc_participation part = {DPC_PART_MINSEP, 100, 4};
    dpc_account_opts o;
    dpc_account_opts_init(&o, DPC_ACCOUNTANT_GDP);
    double z = 6.0, eps = 1.5, delta = 1e-6;
    size_t scan = 0;
    for (size_t n = 1; n <= 200; n++) {
        p.steps = n;
        dpc_mech *m = NULL;
        CHECK_OK(dpc_mech_new(&m, &p, &err), &err);
        dpc_gauss_event ev;
        CHECK_OK(dpc_account_mech_event(m, &part, z, 1.0, &ev, NULL, &err), &err);
        dpc_mech_free(m);
        if (eps_event(&ev, DPC_ACCOUNTANT_GDP, delta) <= eps) scan = n;
    }
    CHECK(scan > 1 && scan < 200, "the scan finds an interior answer (%zu)", scan);
    size_t got = 0;
    CHECK_OK(dpc_account_mech_steps(&p, &part, z, 1.0, &o, eps, delta, 200, &got, &err), &err);
    CHECK(got == scan, "search %zu = scan %zu", got, scan);
    /* capped by max_steps when the budget allows more */
    CHECK_OK(dpc_account_mech_steps(&p, &part, z, 1.0, &o, eps, delta, scan / 2, &got, &err),
             &err);
    CHECK(got == scan / 2, "capped at max_steps %zu: %zu", scan / 2, got);
    /* even one step too costly; dense refused */
    CHECK(dpc_account_mech_steps(&p, &part, 0.1, 1.0, &o, eps, delta, 200, &got, &err) ==
              DPC_E_PRIVACY && !strcmp(err.field, "epsilon"), "one step exceeds: %s", err.msg);
    p.kind = DPC_MECH_DENSE;
    CHECK(dpc_account_mech_steps(&p, &part, z, 1.0, &o, eps, delta, 200, &got, &err) ==
              DPC_E_UNSUPPORTED, "dense refused: %s", err.msg);
}

/* count Gaussians with multiplier z: rho = count / (2 z^2), mu = sqrt(count) / z. */
static void test_sigma_for(void)
{
    dpc_error err = {0};
    double z;
    CHECK_OK(dpc_zcdp_sigma_for(0.5, 9, &z, &err), &err);
    dpc_gauss_event ge;
    dpc_gauss_event_init(&ge);
    ge.sigma = z;
    ge.count = 9;
    dpc_event ev = {DPC_NEIGHBOR_ZERO_OUT, 1, &ge};
    dpc_account_opts o;
    dpc_account_opts_init(&o, DPC_ACCOUNTANT_ZCDP);
    dpc_account_result r;
    CHECK_OK(dpc_account_epsilon(&ev, &o, 1e-6, &r, &err), &err);
    CHECK_NEAR_REL(r.rho, 0.5, 1e-14, "zCDP of the composition");
    CHECK_OK(dpc_gdp_sigma_for(0.8, 16, &z, &err), &err);
    ge.sigma = z;
    ge.count = 16;
    dpc_account_opts_init(&o, DPC_ACCOUNTANT_GDP);
    CHECK_OK(dpc_account_epsilon(&ev, &o, 1e-6, &r, &err), &err);
    CHECK_NEAR_REL(r.mu, 0.8, 1e-14, "GDP of the composition");
    CHECK(dpc_gdp_sigma_for(0.0, 1, &z, &err) == DPC_E_INVALID && !strcmp(err.field, "mu"),
          "mu 0 refused");
    CHECK(dpc_zcdp_sigma_for(1.0, 0, &z, &err) == DPC_E_INVALID && !strcmp(err.field, "count"),
          "count 0 refused");
}

/* The ledger's JSON: every field, NAN as null, strings escaped, truncation reports the length. */
static void test_ledger_json(void)
{
    dpc_ledger L;
    dpc_ledger_init(&L);
    CHECK(isnan(L.epsilon) && isnan(L.noise_multiplier) && L.q == 1.0 && L.rounds == 1 &&
              L.algorithm[0] == '\0', "init: NAN numbers, empty strings");
    snprintf(L.algorithm, sizeof L.algorithm, "dp-ftrl");
    snprintf(L.mechanism, sizeof L.mechanism, "a \"quoted\\ name\x01");
    L.noise_multiplier = 1.25;
    L.epsilon = 3.0;
    L.steps = 120;
    L.amplified = 1;
    L.rng_mode = DPC_RNG_SEEDED;
    L.seed = 42;
    char buf[4096];
    size_t n = dpc_ledger_json(&L, buf, sizeof buf);
    CHECK(n == strlen(buf) && n < sizeof buf, "length %zu", n);
    CHECK(buf[0] == '{' && buf[n - 1] == '}', "one object");
    CHECK(strstr(buf, "\"noise_multiplier\": 1.25") && strstr(buf, "\"sigma\": 1.25"),
          "z under both names: %s", buf);
    CHECK(strstr(buf, "\"epsilon\": 3,") && strstr(buf, "\"epsilon_target\": null"),
          "numbers and null");
    CHECK(strstr(buf, "\"mechanism\": \"a \\\"quoted\\\\ name\\u0001\""), "escaped: %s", buf);
    CHECK(strstr(buf, "\"amplified\": true") && strstr(buf, "\"steps\": 120") &&
              strstr(buf, "\"seed\": 42") && strstr(buf, "\"seed_mode\": \"seeded\""),
          "flags, counts and seed");
    char small[16];
    size_t m = dpc_ledger_json(&L, small, sizeof small);
    CHECK(m == n && strlen(small) == sizeof small - 1 && !strncmp(small, buf, sizeof small - 1),
          "truncated output reports the full length");
    CHECK(dpc_ledger_json(&L, NULL, 0) == n, "length query");
    L.rng_mode = DPC_RNG_SECURE;
    dpc_ledger_json(&L, buf, sizeof buf);
    CHECK(!strstr(buf, "\"seed\":") && strstr(buf, "\"seed_mode\": \"secure\""),
          "no seed in secure mode");
    CHECK(isnan(L.mc_confidence) && L.mc_samples == 0 && !strstr(buf, "mc_samples") &&
              !strstr(buf, "\"note\""),
          "no Monte Carlo fields or note unless set");
    snprintf(L.note, sizeof L.note, "no amplification: why");
    L.mc_samples = 131072;
    L.mc_confidence = 0.999999;
    L.mc_seed = 7;
    dpc_ledger_json(&L, buf, sizeof buf);
    CHECK(strstr(buf, "\"note\": \"no amplification: why\"") &&
              strstr(buf, "\"mc_samples\": 131072, \"mc_confidence\": 0.99999899999999997, "
                          "\"mc_seed\": 7"),
          "note and Monte Carlo fields: %s", buf);
}

int main(void)
{
    test_whole_run();
    test_amplified();
    test_sampler_description();
    test_calibrate();
    test_steps_search();
    test_sigma_for();
    test_ledger_json();
    return TEST_SUMMARY();
}
