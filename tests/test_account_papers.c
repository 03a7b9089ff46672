/* test_account_papers.c — the seed papers' own calculators: DP-SRGD's tree GDP calibration
 * (oracle O2 of the DP-SRGD note), DP-AMBSSGD's rho = 1/alpha^2 with parallel composition (note
 * §3.2 table), both KAN kappa formulas (note §2.4 table) with their stated conditions, checked
 * against mpmath oracles and against the general accountants. */
#include "dpcorr/account.h"
#include "dpcorr/papers/kan.h"
#include "account_oracles.h"
#include "harness.h"

#include <string.h>

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static void test_srgd(void)
{
    dpc_error err = {0};
    /* note table: paper mu = eps/sqrt(2 log(2.5/delta)) and the delta it really achieves */
    struct { double eps, delta, mu_paper, delta_paper; } t[] = {
        {1, 1e-6, 0.1842, 1.5e-9}, {1, 1e-5, 0.2006, 1.9e-8}};
    for (size_t i = 0; i < NELEM(t); i++) {
        double mu, d;
        CHECK_OK(dpc_account_srgd_mu_paper(t[i].eps, t[i].delta, &mu, &err), &err);
        CHECK_NEAR_ABS(mu, t[i].mu_paper, 5e-5, "paper mu(%g, %g)", t[i].eps, t[i].delta);
        CHECK_NEAR_REL(mu, t[i].eps / sqrt(2 * log(2.5 / t[i].delta)), 1e-15, "formula");
        /* O2: the paper's mu is valid with room to spare: delta(eps; mu) <= delta / 2 */
        CHECK_OK(dpc_gdp_delta(mu, t[i].eps, &d, &err), &err);
        CHECK(d <= t[i].delta / 2, "paper mu gives delta %g <= delta/2", d);
        CHECK_NEAR_REL(d, t[i].delta_paper, 0.05, "note: achieved delta %g", t[i].delta_paper);
        /* the exact mu is larger (less noise) */
        double mu_exact;
        CHECK_OK(dpc_gdp_mu_for(t[i].eps, t[i].delta, &mu_exact, &err), &err);
        CHECK(mu_exact > mu, "exact mu %g > paper mu %g", mu_exact, mu);
    }
    double mu;
    CHECK(dpc_account_srgd_mu_paper(2.0, 1e-6, &mu, &err) == DPC_E_PRIVACY &&
              strstr(err.msg, "eps"),
          "the closed form needs eps <= 1: '%s'", err.msg);
    /* tree: sigma_S = (C/B) sqrt(1 + ceil(log2 T)) / mu */
    size_t Ts[] = {1, 2, 3, 4, 5, 1024, 1025};
    double lev[] = {0, 1, 2, 2, 3, 10, 11};
    for (size_t i = 0; i < NELEM(Ts); i++) {
        double s;
        CHECK_OK(dpc_account_srgd_tree_sigma(Ts[i], 2.0, 100, 0.5, &s, &err), &err);
        CHECK_NEAR_REL(s, 2.0 / 100 * sqrt(1 + lev[i]) / 0.5, 1e-15, "tree sigma T=%zu", Ts[i]);
    }
    /* the tree's noise makes the node vector exactly mu-GDP: sensitivity (C/B) sqrt(levels) */
    double s, mu_back;
    CHECK_OK(dpc_account_srgd_tree_sigma(1000, 1.0, 50, 0.3, &s, &err), &err);
    CHECK_OK(dpc_gdp_mu_gaussian(1.0 / 50 * sqrt(11.0), s, &mu_back, &err), &err);
    CHECK_NEAR_REL(mu_back, 0.3, 1e-14, "tree calibration round trip");
    CHECK(dpc_account_srgd_tree_sigma(0, 1.0, 50, 0.3, &s, &err) == DPC_E_INVALID &&
              strstr(err.msg, "steps"),
          "T = 0 refused: '%s'", err.msg);
}

static void test_ambssgd(void)
{
    dpc_error err = {0};
    for (size_t i = 0; i < NELEM(oracle_ambssgd); i++) {
        double eps = oracle_ambssgd[i][0], delta = oracle_ambssgd[i][1], a, rho, e;
        CHECK_OK(dpc_account_ambssgd_alpha(eps, delta, 0, &a, &err), &err);
        CHECK_NEAR_REL(a, oracle_ambssgd[i][2], 1e-12, "alpha*(%g, %g)", eps, delta);
        CHECK_OK(dpc_account_ambssgd_rho(a, &rho, &err), &err);
        CHECK_NEAR_REL(rho, oracle_ambssgd[i][3], 1e-12, "rho = 1/alpha^2");
        CHECK_OK(dpc_account_ambssgd_epsilon(a, delta, &e, &err), &err);
        CHECK_NEAR_REL(e, eps, 1e-12, "converting alpha* back gives eps exactly");
        /* the paper's sqrt(8 log(1/delta))/eps is valid (more noise) */
        double ap;
        CHECK_OK(dpc_account_ambssgd_alpha(eps, delta, 1, &ap, &err), &err);
        CHECK_NEAR_REL(ap, sqrt(8 * log(1 / delta)) / eps, 1e-15, "Thm. 3.7 alpha");
        CHECK(ap >= a, "paper alpha %g >= exact %g", ap, a);
    }
    /* note table spot values */
    double a;
    CHECK_OK(dpc_account_ambssgd_alpha(1.0, 1e-5, 1, &a, &err), &err);
    CHECK_NEAR_ABS(a, 9.597, 5e-4, "note: sqrt(8L)/eps at (1, 1e-5)");
    CHECK_OK(dpc_account_ambssgd_alpha(1.0, 1e-5, 0, &a, &err), &err);
    CHECK_NEAR_ABS(a, 6.930, 5e-4, "note: alpha* at (1, 1e-5)");
    /* parallel composition: the total does not depend on the number of steps, so the whole
     * pass equals ONE unsampled Gaussian with rho = 1/alpha^2, i.e. sigma/sensitivity = alpha/sqrt2
     */
    dpc_gauss_event c;
    dpc_gauss_event_init(&c);
    c.sigma = a / sqrt(2.0);
    dpc_event ev = {DPC_NEIGHBOR_REPLACE_ONE, 1, &c};
    dpc_account_opts o;
    dpc_account_opts_init(&o, DPC_ACCOUNTANT_ZCDP);
    o.zcdp_conv = DPC_ZCDP_BUN_STEINKE;
    dpc_account_result r;
    CHECK_OK(dpc_account_epsilon(&ev, &o, 1e-5, &r, &err), &err);
    CHECK_NEAR_REL(r.epsilon, 1.0, 1e-12, "generic zCDP accountant agrees");
    CHECK(dpc_account_ambssgd_alpha(20.0, 1e-5, 1, &a, &err) == DPC_E_PRIVACY &&
              strstr(err.msg, "eps"),
          "Thm. 3.7 needs eps <= log(1/delta): '%s'", err.msg);
}

static void test_kan(void)
{
    dpc_error err = {0};
    double lam[] = {0.0, 0.3, 0.5, 0.7, 0.9};
    for (size_t i = 0; i < NELEM(oracle_kan); i++) {
        const double *o = oracle_kan[i];
        size_t n = (size_t)o[0], B = (size_t)o[1], T = (size_t)o[2];
        double k;
        CHECK_OK(dpc_account_kan_paper_indep(n, B, T, o[3], o[4], &k, &err), &err);
        CHECK_NEAR_REL(k, o[5], 1e-13, "Thm. D.9 kappa row %zu", i);
        for (size_t l = 0; l < NELEM(lam); l++) {
            if (o[3] > 1.0) { /* F.12 needs eps <= 1: the note's eps = 8 row is outside */
                CHECK(dpc_account_kan_paper_lcgd(n, B, T, o[3], o[4], lam[l], &k, &err) ==
                          DPC_E_PRIVACY,
                      "F.12 refuses eps = %g", o[3]);
                continue;
            }
            CHECK_OK(dpc_account_kan_paper_lcgd(n, B, T, o[3], o[4], lam[l], &k, &err), &err);
            CHECK_NEAR_REL(k, o[6 + l], 1e-13, "Thm. F.12 kappa row %zu lambda %g", i, lam[l]);
        }
    }
    /* note §2.4 table (3 decimals) */
    double k;
    CHECK_OK(dpc_account_kan_paper_indep(1000, 100, 1000, 1.0, 1e-5, &k, &err), &err);
    CHECK_NEAR_ABS(k, 62.001, 5e-4, "note: 62.001");
    CHECK_OK(dpc_account_kan_paper_lcgd(1000, 100, 1000, 1.0, 1e-5, 0.5, &k, &err), &err);
    CHECK_NEAR_ABS(k, 252.669, 5e-4, "note: 252.669");
    /* kappa grows like 1/(1 - lambda) */
    double k1, k2;
    CHECK_OK(dpc_account_kan_paper_lcgd(1000, 100, 1000, 1.0, 1e-5, 0.9, &k1, &err), &err);
    CHECK_OK(dpc_account_kan_paper_lcgd(1000, 100, 1000, 1.0, 1e-5, 0.0, &k2, &err), &err);
    CHECK_NEAR_REL(k1 / k2, 10.0, 1e-12, "factor (1 - lambda^T)/(1 - lambda) = 10 at 0.9");
    /* conditions */
    CHECK(dpc_account_kan_paper_lcgd(1000, 10, 10, 1.0, 1e-5, 0.5, &k, &err) == DPC_E_PRIVACY &&
              strstr(err.msg, "r T"),
          "F.12: r T = 0.1 < 3 log(2/delta) refused: '%s'", err.msg);
    CHECK(dpc_account_kan_paper_lcgd(1000, 100, 1000, 1.0, 1e-5, 1.0, &k, &err) == DPC_E_INVALID &&
              strstr(err.msg, "lambda"),
          "lambda = 1 refused: '%s'", err.msg);
    CHECK(dpc_account_kan_paper_indep(1000, 1000, 10, 1.0, 1e-5, &k, &err) == DPC_E_PRIVACY &&
              strstr(err.msg, "batch"),
          "D.9 needs B < n: '%s'", err.msg);
    CHECK(dpc_account_kan_paper_indep(1000, 2000, 10, 1.0, 1e-5, &k, &err) == DPC_E_INVALID,
          "B > n refused");
    CHECK(dpc_account_kan_paper_indep(1000, 100, 10, 1.0, 0.0, &k, &err) == DPC_E_INVALID &&
              strstr(err.msg, "delta"),
          "delta 0 refused: '%s'", err.msg);
    /* F.12 is conservative: at full batch (r = 1, participation deterministic) the exact
     * requirement is the Gaussian with sensitivity ||C 1|| (note: 73.99 vs 252.67 at
     * T = 100, lambda = 0.5). ||C 1||^2 = sum_t ((1 - lambda^(t+1))/(1 - lambda))^2. */
    double s2 = 0;
    for (int t = 0; t < 100; t++) {
        double g = (1 - pow(0.5, t + 1)) / 0.5;
        s2 += g * g;
    }
    double mu;
    CHECK_OK(dpc_gdp_mu_for(1.0, 1e-5, &mu, &err), &err);
    CHECK_NEAR_ABS(sqrt(s2) / mu, 73.99, 0.01, "note: exact full-batch kappa 73.99");
    CHECK_OK(dpc_account_kan_paper_lcgd(100, 100, 100, 1.0, 1e-5, 0.5, &k, &err), &err);
    CHECK_NEAR_ABS(k, 252.67, 0.01, "note: F.12 full-batch kappa 252.67");
}

int main(void)
{
    test_srgd();
    test_ambssgd();
    test_kan();
    return TEST_SUMMARY();
}
