/* test_theory.c — the theory module against the nu-DP-FTRL note's reference tables (sections
 * 3.1-3.4, 5.2, 5.3.2, 5.3.5, 5.3.6) and against independent mpmath oracles
 * (tests/gen/theory_oracles.py -> tests/theory_oracles.inc); the series and quadrature routes
 * against each other (1e-8) and the time-domain series against the naive double sum. */
#include "dpcorr/papers/sim.h"
#include "dpcorr/papers/theory.h"
#include "harness.h"
#include "theory_oracles.inc"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double rel(double a, double b) { return fabs(a - b) / fmax(fabs(a), fabs(b)); }

static void test_special(void)
{
    for (size_t i = 0; i < sizeof ORACLE_KE / sizeof ORACLE_KE[0]; i++) {
        CHECK_NEAR_REL(dpc_special_ellip_k(ORACLE_KE[i][0]), ORACLE_KE[i][1], 2e-15, "K(%g)", ORACLE_KE[i][0]);
        CHECK_NEAR_REL(dpc_special_ellip_e(ORACLE_KE[i][0]), ORACLE_KE[i][2], 2e-15, "E(%g)", ORACLE_KE[i][0]);
    }
    for (size_t i = 0; i < sizeof ORACLE_PI / sizeof ORACLE_PI[0]; i++)
        CHECK_NEAR_REL(dpc_special_ellip_pi(ORACLE_PI[i][0], ORACLE_PI[i][1]), ORACLE_PI[i][2], 1e-14,
                       "Pi(%g, %g)", ORACLE_PI[i][0], ORACLE_PI[i][1]);
    CHECK(isnan(dpc_special_ellip_k(-0.1)) && isinf(dpc_special_ellip_k(1.0)), "K domain");
    CHECK(isnan(dpc_special_ellip_pi(1.5, 0.3)), "Pi domain n < 1");
    /* note 5.3.5 reference values */
    CHECK_NEAR_REL(dpc_theory_integral_i(0.1, 0.3), 6.74714554, 2e-9, "I(0.1,0.3)");
    CHECK_NEAR_REL(dpc_theory_integral_i(0.01, 0.05), 9.23706060, 2e-9, "I(0.01,0.05)");
    CHECK_NEAR_REL(dpc_theory_integral_i(0.05, 0.01), 23.4818065, 2e-9, "I(0.05,0.01)");
    const double a[] = {0.5, 0.1, 0.01}, v[] = {6.74300142, 9.12219655, 13.4264021};
    for (int i = 0; i < 3; i++) {
        CHECK_NEAR_REL(4.0 * dpc_special_ellip_k(1.0 - a[i]), v[i], 2e-9, "int 1/|1-a-e| a=%g", a[i]);
        /* Landen: I(a,a) = (4/(2-a)) K(sqrt(1-a)/(1-a/2)) = 4 K(1-a) */
        CHECK_NEAR_REL(dpc_theory_integral_i(a[i], a[i]), 4.0 * dpc_special_ellip_k(1.0 - a[i]), 1e-13,
                       "I(a,a) = 4K(1-a), a=%g", a[i]);
    }
}

static void test_coefficients(void)
{
    dpc_theory_beta b = dpc_theory_beta_nu(0.05);
    double c[6], want[6] = {1, -0.475, -0.1128125, -0.05358594, -0.03181665, -0.02115807};
    dpc_theory_beta_coeffs(&b, c, 6);
    for (int t = 0; t < 6; t++) CHECK_NEAR_ABS(c[t], want[t], 6e-9, "nu=0.05 beta_%d", t);
    dpc_theory_beta b0 = dpc_theory_beta_nu(0.0);
    double w0[6] = {1, -0.5, -0.125, -0.0625, -5.0 / 128, -7.0 / 256};
    dpc_theory_beta_coeffs(&b0, c, 6);
    for (int t = 0; t < 6; t++) CHECK(c[t] == w0[t], "nu=0 beta_%d exact", t);
    /* sum beta = sqrt(nu), ||beta||_1 <= 2, tail bound valid and not vacuous */
    const double nus[] = {0.1, 0.01, 0.002};
    for (int i = 0; i < 3; i++) {
        dpc_theory_beta bn = dpc_theory_beta_nu(nus[i]);
        size_t L = dpc_theory_beta_len_for_tail(&bn, 1e-16, 1);
        double *x = malloc(L * sizeof *x);
        dpc_theory_beta_coeffs(&bn, x, L);
        double s = 0, l1 = 0;
        for (size_t t = 0; t < L; t++) s += x[t], l1 += fabs(x[t]);
        CHECK_NEAR_ABS(s, sqrt(nus[i]), 1e-14, "sum beta = sqrt(nu) at %g", nus[i]);
        CHECK(l1 <= 2.0, "||beta||_1 = %g <= 2", l1);
        size_t L2 = L / 8;
        double tail = 0;
        for (size_t t = L2; t < L; t++) tail += fabs(x[t]);
        double bound = dpc_theory_beta_tail(&bn, L2);
        CHECK(tail <= bound && bound <= 50 * tail + 1e-300, "tail %g <= bound %g (nu %g)", tail, bound, nus[i]);
        free(x);
    }
    dpc_theory_beta ap = dpc_theory_beta_antipgd(0.1);
    CHECK(dpc_theory_beta_tail(&ap, 2) == 0.0, "antipgd finite support");
}

static void test_sensitivity(void)
{
    const double nu[] = {0.5, 0.1, 0.05, 0.01, 0.005, 0.001, 1e-4};
    const double g2[] = {1.0731820, 1.4518427, 1.6488524, 2.1368783, 2.3535038, 2.8619856, 3.5938130};
    dpc_error err = {0};
    for (int i = 0; i < 7; i++) {
        dpc_theory_beta b = dpc_theory_beta_nu(nu[i]);
        double g;
        CHECK_OK(dpc_theory_gamma_inf2(&b, &g, &err), &err);
        CHECK_NEAR_REL(g, g2[i], 6e-8, "gamma_inf^2 nu=%g (note 3.3)", nu[i]);
        CHECK(g <= 5.0 / (2 * M_PI) * log(8.0 / nu[i]), "Cor. D.15 bound at nu=%g", nu[i]);
        /* the finite-horizon values increase to the limit */
        double gt;
        CHECK_OK(dpc_theory_gamma_t2(&b, 200000, &gt, &err), &err);
        CHECK(gt <= g * (1 + 1e-14) && (nu[i] < 1e-3 || gt > g * (1 - 1e-9)), "gamma_T -> gamma_inf nu=%g", nu[i]);
    }
    /* nu = 0: gamma_T^2 values of note 3.3 and divergence */
    dpc_theory_beta b0 = dpc_theory_beta_nu(0.0);
    const size_t T[] = {1, 2, 10, 100, 2000, 2052, 10000};
    const double gt[] = {1, 1.25, 1.791344, 2.531352, 3.485678, 3.493850, 3.998010};
    for (int i = 0; i < 7; i++) {
        double g;
        CHECK_OK(dpc_theory_gamma_t2(&b0, T[i], &g, &err), &err);
        CHECK_NEAR_REL(g, gt[i], 2e-7, "nu=0 gamma_T^2 T=%zu", T[i]);
        CHECK_NEAR_ABS(g, (log((double)T[i]) + 0.5772156649 + 4 * log(2.0)) / M_PI, T[i] >= 100 ? 2e-3 : 1,
                       "log growth T=%zu", T[i]);
    }
    double ginf;
    CHECK_OK(dpc_theory_gamma_inf2(&b0, &ginf, &err), &err);
    CHECK(isinf(ginf), "nu = 0 diverges");
    /* T = 2000 table of note 3.4 */
    const double nug[] = {1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1};
    const double g2000[] = {3.37021, 3.19396, 2.86078, 2.51431, 2.13688, 1.80036, 1.45184};
    for (int i = 0; i < 7; i++) {
        dpc_theory_beta b = dpc_theory_beta_nu(nug[i]);
        double g;
        CHECK_OK(dpc_theory_gamma_t2(&b, 2000, &g, &err), &err);
        CHECK_NEAR_REL(g, g2000[i], 2e-6, "gamma_2000^2 nu=%g", nug[i]);
    }
    /* anti-PGD: gamma_T^2 = T undamped, 1/(nu(2-nu)) damped */
    dpc_theory_beta a0 = dpc_theory_beta_antipgd(0.0), a1 = dpc_theory_beta_antipgd(0.2);
    double g;
    CHECK_OK(dpc_theory_gamma_t2(&a0, 777, &g, &err), &err);
    CHECK(g == 777.0, "anti-PGD gamma_T^2 = T");
    CHECK_OK(dpc_theory_gamma_inf2(&a1, &g, &err), &err);
    CHECK_NEAR_REL(g, 1.0 / (0.2 * 1.8), 1e-15, "damped anti-PGD gamma_inf^2");
    /* array: trapezoid gamma_inf vs mpmath, reciprocal series gamma_T vs exact rationals */
    dpc_theory_beta arr = dpc_theory_beta_array(ORACLE_ARR, 5);
    CHECK_OK(dpc_theory_gamma_inf2(&arr, &g, &err), &err);
    CHECK_NEAR_REL(g, ORACLE_ARR_GINF2, 1e-12, "array gamma_inf^2");
    for (int i = 0; i < 4; i++) {
        CHECK_OK(dpc_theory_gamma_t2(&arr, (size_t)ORACLE_ARR_GT2[i][0], &g, &err), &err);
        CHECK_NEAR_REL(g, ORACLE_ARR_GT2[i][1], 1e-13, "array gamma_T^2 T=%g", ORACLE_ARR_GT2[i][0]);
    }
    /* family as an array: the FFT-trapezoid route reproduces the closed form */
    dpc_theory_beta bn = dpc_theory_beta_nu(0.05);
    double x[2048], gc;
    dpc_theory_beta_coeffs(&bn, x, 2048);
    dpc_theory_beta ba = dpc_theory_beta_array(x, 2048);
    CHECK_OK(dpc_theory_gamma_inf2(&ba, &g, &err), &err);
    CHECK_OK(dpc_theory_gamma_inf2(&bn, &gc, &err), &err);
    CHECK_NEAR_REL(g, gc, 1e-10, "truncated nu array vs (2/pi)K(1-nu)");
}

static void test_series(void)
{
    dpc_error err = {0};
    dpc_theory_beta arr = dpc_theory_beta_array(ORACLE_ARR, 5);
    for (size_t i = 0; i < sizeof ORACLE_ARR_S / sizeof ORACLE_ARR_S[0]; i++) {
        double b = ORACLE_ARR_S[i][0], s, q;
        CHECK_OK(dpc_theory_s(&arr, b, &s, &err), &err);
        CHECK_NEAR_REL(s, ORACLE_ARR_S[i][1], 1e-14, "array S_%g series", b);
        CHECK_NEAR_REL(dpc_theory_s_naive(ORACLE_ARR, 5, b), ORACLE_ARR_S[i][1], 1e-14, "naive S_%g", b);
        double one = 1.0;
        dpc_theory_problem p = {b, 0.5, 1, 0, 1, &one};
        dpc_theory_lti l;
        CHECK_OK(dpc_theory_lti_error(&p, &arr, DPC_THEORY_QUADRATURE, &l, &err), &err);
        q = l.sum_s;
        CHECK_NEAR_REL(q, ORACLE_ARR_S[i][1], 1e-12, "array S_%g quadrature", b);
    }
    /* nu family: series, quadrature and the elliptic closed form b(2-b) I(nu, b) / 2pi */
    const double nus[] = {0.01, 0.05, 3e-4}, bs[] = {0.3, 0.01, 0.05, 1e-3};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) {
            dpc_theory_beta b = dpc_theory_beta_nu(nus[i]);
            double s;
            CHECK_OK(dpc_theory_s(&b, bs[j], &s, &err), &err);
            double closed = bs[j] * (2 - bs[j]) * dpc_theory_integral_i(nus[i], bs[j]) / (2 * M_PI);
            CHECK_NEAR_REL(s, closed, 1e-11, "S_%g(nu=%g) series vs I(a,b)", bs[j], nus[i]);
        }
    /* random arrays: O(len) series vs naive double sum */
    unsigned x = 7;
    double beta[300];
    for (int rep = 0; rep < 5; rep++) {
        size_t len = 50 + 60 * (size_t)rep;
        for (size_t t = 0; t < len; t++) {
            x = x * 1103515245u + 12345u;
            beta[t] = (((x >> 8) & 0xFFFF) / 65536.0 - 0.5) / (1.0 + (double)t);
        }
        beta[0] = 1.0;
        dpc_theory_beta b = dpc_theory_beta_array(beta, len);
        double s;
        CHECK_OK(dpc_theory_s(&b, 0.03, &s, &err), &err);
        CHECK_NEAR_REL(s, dpc_theory_s_naive(beta, len, 0.03), 1e-12, "random array %d", rep);
    }
    /* a long array takes the FFT trapezoid route: truncated nu array vs the family */
    size_t L = 8192;
    double *xs = malloc(L * sizeof *xs);
    dpc_theory_beta bn = dpc_theory_beta_nu(0.01);
    dpc_theory_beta_coeffs(&bn, xs, L);
    dpc_theory_beta ba = dpc_theory_beta_array(xs, L);
    double lam[8];
    dpc_theory_powerlaw(lam, 8, 1.0);
    dpc_theory_problem p = {0.1, 0.5, 1, 0, 8, lam};
    dpc_theory_lti la, lb, lc;
    CHECK_OK(dpc_theory_lti_error(&p, &ba, DPC_THEORY_QUADRATURE, &la, &err), &err);
    CHECK_OK(dpc_theory_lti_error(&p, &ba, DPC_THEORY_SERIES, &lc, &err), &err);
    CHECK_OK(dpc_theory_lti_error(&p, &bn, DPC_THEORY_SERIES, &lb, &err), &err);
    CHECK_NEAR_REL(la.sum_s, lb.sum_s, 1e-10, "long array trapezoid vs family series");
    CHECK_NEAR_REL(lc.sum_s, lb.sum_s, 1e-10, "long array series vs family series");
    free(xs);
}

static void test_mean(void)
{
    /* note 5.2 table: s^2 = 1 (rho = 1/2, G = 1), sigma_sgd = 0 */
    const double eta[] = {0.5, 0.1, 0.02, 0.01, 0.001};
    const double sgd[] = {0.33333333, 0.052631579, 0.01010101, 0.0050251256, 0.00050025013};
    const double opt[] = {0.28792991, 0.021078471, 0.0014795037, 0.00045662487, 8.1909613e-06};
    const double ratio[] = {0.863790, 0.400491, 0.146471, 0.0908683, 0.0163737};
    const double g2[] = {1.0731820, 1.4518427, 1.9232159, 2.1368783, 2.8619856};
    dpc_error err = {0};
    for (int i = 0; i < 5; i++) {
        dpc_theory_beta s = dpc_theory_beta_sgd(), b = dpc_theory_beta_nu(eta[i]);
        double es, eo, eq, g;
        CHECK_OK(dpc_theory_mean_error(eta[i], 0.5, 1, 0, &s, DPC_THEORY_SERIES, &es, &err), &err);
        CHECK_OK(dpc_theory_mean_error(eta[i], 0.5, 1, 0, &b, DPC_THEORY_SERIES, &eo, &err), &err);
        CHECK_OK(dpc_theory_mean_error(eta[i], 0.5, 1, 0, &b, DPC_THEORY_QUADRATURE, &eq, &err), &err);
        CHECK_OK(dpc_theory_gamma_inf2(&b, &g, &err), &err);
        CHECK_NEAR_REL(es, sgd[i], 1e-7, "mean SGD eta=%g", eta[i]);
        CHECK_NEAR_REL(eo, opt[i], 1e-7, "mean optimum eta=%g (series)", eta[i]);
        CHECK_NEAR_REL(eq, eo, 1e-10, "mean quadrature vs series eta=%g", eta[i]);
        CHECK_NEAR_REL(dpc_theory_mean_opt(eta[i], 0.5, 1, 0), opt[i], 1e-7, "closed form eta=%g", eta[i]);
        CHECK_NEAR_REL(dpc_theory_mean_ratio(eta[i]), ratio[i], 1e-5, "R(eta=%g)", eta[i]);
        CHECK_NEAR_REL(eo / es, ratio[i], 1e-5, "ratio from errors eta=%g", eta[i]);
        CHECK_NEAR_REL(g, g2[i], 1e-7, "gamma_inf^2(beta*) eta=%g", eta[i]);
        /* nu = eta is optimal: neighbouring nu are worse */
        dpc_theory_beta lo = dpc_theory_beta_nu(eta[i] * 0.7), hi = dpc_theory_beta_nu(fmin(eta[i] * 1.3, 0.99));
        double el, eh;
        CHECK_OK(dpc_theory_mean_error(eta[i], 0.5, 1, 0, &lo, DPC_THEORY_QUADRATURE, &el, &err), &err);
        CHECK_OK(dpc_theory_mean_error(eta[i], 0.5, 1, 0, &hi, DPC_THEORY_QUADRATURE, &eh, &err), &err);
        CHECK(el > eo && eh > eo, "nu = eta optimal at eta=%g", eta[i]);
    }
    /* with data noise: adds eta sigma^2 / (2 - eta) to both */
    dpc_theory_beta b = dpc_theory_beta_nu(0.1);
    double e;
    CHECK_OK(dpc_theory_mean_error(0.1, 0.5, 1, 0.3, &b, DPC_THEORY_SERIES, &e, &err), &err);
    CHECK_NEAR_REL(e, 0.021078471 + 0.1 * 0.09 / 1.9, 1e-7, "sigma_sgd term");
    /* R(eta): the note's values, R(1) = 1, symmetry eta <-> 2 - eta */
    CHECK_NEAR_REL(dpc_theory_mean_ratio(1e-4), 0.00258, 2e-3, "R(1e-4)");
    CHECK_NEAR_REL(dpc_theory_mean_ratio(1.0), 1.0, 1e-15, "R(1) = 1");
    CHECK_NEAR_REL(dpc_theory_mean_ratio(1.7), dpc_theory_mean_ratio(0.3), 1e-14, "R symmetric");
    for (double et = 0.01; et < 2.0; et += 0.07) CHECK(dpc_theory_mean_ratio(et) <= 1.0 + 1e-15, "R <= 1");
}

typedef struct v0row {
    size_t d;
    double alpha, eta, nu, deff, g2, sgd, ftrl, opt;
} v0row;

/* note 5.3.2, Figure 2 setting: G = 1, rho = 1/2, sigma_sgd = 0, nu = eta mu */
static const v0row V0[] = {
    {16, 1, 0.02, 1.25e-3, 3.38073, 2.79123, 0.160340, 0.00795991, 0.00749462},
    {32, 1, 0.02, 6.25e-4, 4.05850, 3.01116, 0.320407, 0.0107802, 0.0100432},
    {64, 1, 0.02, 3.125e-4, 4.74389, 3.23141, 0.640476, 0.0141415, 0.0130659},
    {128, 1, 0.02, 1.5625e-4, 5.43315, 3.45184, 1.280545, 0.0180781, 0.0165934},
    {256, 1, 0.02, 7.8125e-5, 6.12434, 3.67236, 2.560614, 0.0226268, 0.0206578},
    {128, 0.4, 0.02, 2.872e-3, 29.5689, 2.52810, 1.282966, 0.0670701, 0.0662516},
    {128, 0.6, 0.02, 1.088e-3, 15.4855, 2.83518, 1.281552, 0.0413307, 0.0401915},
    {128, 0.8, 0.02, 4.123e-4, 8.76784, 3.14328, 1.280879, 0.0265764, 0.0252385},
    {128, 1, 0.005, 3.906e-5, 5.43315, 3.89293, 0.320034, 0.00150389, 0.00139160},
    {128, 1, 0.01, 7.8125e-5, 5.43315, 3.67236, 0.640136, 0.00523958, 0.00482973},
    {128, 1, 0.04, 3.125e-4, 5.43315, 3.23141, 2.562187, 0.0617139, 0.0563758},
    {128, 1, 0.08, 6.25e-4, 5.43315, 3.01116, 5.128801, 0.208314, 0.189243},
};

static void test_v0_table(void)
{
    dpc_error err = {0};
    double lam[256];
    int asan = tests_scale() < 1.0;
    for (size_t i = 0; i < sizeof V0 / sizeof V0[0]; i++) {
        const v0row *r = &V0[i];
        dpc_theory_powerlaw(lam, r->d, r->alpha);
        dpc_theory_problem p = {r->eta, 0.5, 1.0, 0.0, r->d, lam};
        double nu = r->eta * lam[r->d - 1];
        CHECK_NEAR_REL(nu, r->nu, 1e-3, "nu row %zu", i);
        dpc_theory_beta s = dpc_theory_beta_sgd(), b = dpc_theory_beta_nu(nu);
        dpc_theory_lti ls, lq, lser;
        CHECK_OK(dpc_theory_lti_error(&p, &s, DPC_THEORY_SERIES, &ls, &err), &err);
        CHECK_OK(dpc_theory_lti_error(&p, &b, DPC_THEORY_QUADRATURE, &lq, &err), &err);
        double opt;
        CHECK_OK(dpc_theory_lti_opt(&p, &opt, &err), &err);
        dpc_theory_rates rt;
        CHECK_OK(dpc_theory_rates_of(&p, &rt, &err), &err);
        CHECK_NEAR_REL(rt.d_eff, r->deff, 1e-5, "d_eff row %zu", i);
        CHECK_NEAR_REL(lq.gamma_inf2, r->g2, 1e-5, "gamma^2 row %zu", i);
        CHECK_NEAR_REL(ls.v0, r->sgd, 1e-5, "V0 SGD row %zu (d=%zu a=%g eta=%g)", i, r->d, r->alpha, r->eta);
        CHECK_NEAR_REL(lq.v0, r->ftrl, 1e-5, "V0 nu-FTRL row %zu (d=%zu a=%g eta=%g)", i, r->d, r->alpha, r->eta);
        CHECK_NEAR_REL(opt, r->opt, 1e-5, "V0 LTI-opt row %zu", i);
        CHECK(opt <= lq.v0 && lq.v0 <= 1.11 * opt, "nu-FTRL within 11%% of the LTI optimum row %zu", i);
        CHECK_NEAR_REL(rt.v0_ftrl, lq.v0, 1e-12, "rates v0_ftrl row %zu", i);
        /* DP-SGD closed form: eta (G^2/2rho) sum 1/(2 - eta lambda) */
        double cf = 0;
        for (size_t j = 0; j < r->d; j++) cf += 1.0 / (2.0 - r->eta * lam[j]);
        CHECK_NEAR_REL(ls.v0, r->eta * cf, 1e-13, "SGD closed form row %zu", i);
        /* series vs quadrature (the slow series only at small d under ASan) */
        if (!asan || r->d <= 32) {
            CHECK_OK(dpc_theory_lti_error(&p, &b, DPC_THEORY_SERIES, &lser, &err), &err);
            CHECK(rel(lser.v0, lq.v0) <= 1e-8, "series %.17g vs quadrature %.17g row %zu", lser.v0, lq.v0, i);
        }
        /* damped anti-PGD exact LTI (note 5.3.6) in both routes; sits between SGD and FTRL */
        double nua = 1.0 / sqrt((double)r->d);
        dpc_theory_beta a = dpc_theory_beta_antipgd(nua);
        dpc_theory_lti la, laq;
        CHECK_OK(dpc_theory_lti_error(&p, &a, DPC_THEORY_SERIES, &la, &err), &err);
        CHECK_OK(dpc_theory_lti_error(&p, &a, DPC_THEORY_QUADRATURE, &laq, &err), &err);
        double ex = 0;
        for (size_t j = 0; j < r->d; j++)
            ex += (nua * nua + 2 * (1 - nua) * r->eta * lam[j]) / (2 - r->eta * lam[j]);
        ex *= r->eta / (2 * 0.5 * nua * (2 - nua));
        CHECK_NEAR_REL(la.v0, ex, 1e-12, "anti-PGD closed form row %zu", i);
        CHECK_NEAR_REL(laq.v0, ex, 1e-9, "anti-PGD quadrature row %zu", i);
        CHECK(la.v0 < ls.v0 && la.v0 > lq.v0, "SGD > damped anti-PGD > nu-FTRL row %zu", i);
    }
}

static void test_bounds(void)
{
    dpc_error err = {0};
    double lam[128];
    dpc_theory_powerlaw(lam, 128, 1.0);
    dpc_theory_problem p = {0.02, 0.5, 1.0, 0.0, 128, lam};
    dpc_theory_beta b = dpc_theory_beta_nu(0.02 / 128);
    double tr = 0;
    for (int j = 0; j < 128; j++) tr += lam[j];
    dpc_theory_bounds bd;
    CHECK_OK(dpc_theory_lti_bounds(&p, &b, tr + 2.0, 3.0, &bd, &err), &err);
    const double *o = ORACLE_BOUNDS;
    CHECK_NEAR_REL(bd.v0, o[0], 1e-8, "bounds v0");
    CHECK_NEAR_REL(bd.upper_time, o[2], 1e-8, "C.14");
    CHECK_NEAR_REL(bd.upper_freq, o[3], 1e-8, "C.15");
    CHECK_NEAR_REL(bd.lower_time, o[4], 1e-8, "C.18 time");
    CHECK_NEAR_REL(bd.lower_freq, o[0], 1e-8, "C.18 freq = V0 at sigma_sgd = 0");
    CHECK_NEAR_REL(bd.lower_universal, o[5], 1e-12, "universal lower");
    CHECK_NEAR_REL(bd.sandwich_upper, o[6], 1e-8, "sandwich");
    CHECK(bd.lower_universal < bd.lower_time && bd.lower_time <= bd.v0 && bd.v0 < bd.sandwich_upper &&
              bd.sandwich_upper < bd.upper_time,
          "ordering of the bounds");
    /* q >= 1: upper bounds infinite */
    CHECK_OK(dpc_theory_lti_bounds(&p, &b, 60.0, 3.0, &bd, &err), &err);
    CHECK(isinf(bd.upper_time) && isinf(bd.sandwich_upper), "q >= 1");
    /* sigma_sgd > 0: data-noise terms */
    p.sigma_sgd = 0.5;
    CHECK_OK(dpc_theory_lti_bounds(&p, &b, tr + 2.0, 3.0, &bd, &err), &err);
    CHECK(isnan(bd.sandwich_upper) && bd.lower_freq > o[0] + 0.5 * 0.02 * 0.25 * tr * 0.999, "sgd terms");
}

static void test_errors(void)
{
    dpc_error err = {0};
    double lam[2] = {1.0, 150.0};
    dpc_theory_problem p = {0.02, 0.5, 1.0, 0.0, 2, lam};
    dpc_theory_beta b = dpc_theory_beta_nu(0.1);
    dpc_theory_lti l;
    CHECK(dpc_theory_lti_error(&p, &b, DPC_THEORY_SERIES, &l, &err) == DPC_E_INVALID &&
              strstr(err.msg, "lambda[1]"), "eta lambda >= 2 names lambda[1]: %s", err.msg);
    lam[1] = 0.5;
    b.nu = 1.2;
    CHECK(dpc_theory_lti_error(&p, &b, DPC_THEORY_SERIES, &l, &err) == DPC_E_INVALID &&
              strstr(err.msg, "nu"), "bad nu: %s", err.msg);
    p.rho = -1;
    b.nu = 0.1;
    CHECK(dpc_theory_lti_error(&p, &b, DPC_THEORY_SERIES, &l, &err) == DPC_E_INVALID &&
              strstr(err.msg, "rho"), "bad rho: %s", err.msg);
    double zero = 0.0;
    dpc_theory_beta ba = dpc_theory_beta_array(&zero, 1);
    double g;
    CHECK(dpc_theory_gamma_inf2(&ba, &g, &err) == DPC_E_INVALID && strstr(err.msg, "coeffs[0]"),
          "beta_0 = 0: %s", err.msg);
    /* nu = 0: V0 infinite but the quadrature still gives <beta, T beta> */
    p.rho = 0.5;
    dpc_theory_beta b0 = dpc_theory_beta_nu(0.0);
    CHECK_OK(dpc_theory_lti_error(&p, &b0, DPC_THEORY_SERIES, &l, &err), &err);
    CHECK(isinf(l.v0) && isfinite(l.sum_s) && l.sum_s > 0, "nu = 0: F_inf = inf");
    dpc_theory_beta tiny = dpc_theory_beta_nu(1e-9);
    CHECK(dpc_theory_lti_error(&p, &tiny, DPC_THEORY_SERIES, &l, &err) == DPC_E_RANGE &&
              strstr(err.msg, "quadrature"), "tiny nu: series refuses: %s", err.msg);
    CHECK_OK(dpc_theory_lti_error(&p, &tiny, DPC_THEORY_QUADRATURE, &l, &err), &err);
    CHECK(isfinite(l.v0) && l.v0 > 0, "tiny nu: quadrature works");
    dpc_theory_beta a0 = dpc_theory_beta_antipgd(0.0);
    CHECK_OK(dpc_theory_lti_error(&p, &a0, DPC_THEORY_SERIES, &l, &err), &err);
    CHECK(isinf(l.v0), "undamped anti-PGD: F_inf = inf");
}

static void test_from_mech(void)
{
    dpc_error err = {0};
    dpc_mech_params mp;
    dpc_mech_params_init(&mp);
    mp.kind = DPC_MECH_BISR;
    mp.steps = 100;
    mp.bands = 6;
    dpc_mech *m = NULL;
    CHECK_OK(dpc_mech_new(&m, &mp, &err), &err);
    dpc_theory_beta b;
    double *own = NULL, g2, gm;
    CHECK_OK(dpc_theory_beta_from_mech(m, 6, &b, &own, &err), &err);
    CHECK(b.kind == DPC_THEORY_BETA_ARRAY && own, "bisr -> array");
    CHECK_OK(dpc_theory_gamma_inf2(&b, &g2, &err), &err);
    CHECK_OK(dpc_mech_limit_sensitivity(m, &gm, &err), &err);
    CHECK_NEAR_REL(g2, gm * gm, 1e-10, "gamma_inf of BISR: theory vs mech");
    free(own);
    dpc_mech_free(m);
    mp.kind = DPC_MECH_NU;
    mp.nu = 0.03;
    CHECK_OK(dpc_mech_new(&m, &mp, &err), &err);
    CHECK_OK(dpc_theory_beta_from_mech(m, 0, &b, &own, &err), &err);
    CHECK(b.kind == DPC_THEORY_BETA_NU && b.nu == 0.03 && !own, "nu -> family");
    CHECK_OK(dpc_theory_gamma_inf2(&b, &g2, &err), &err);
    CHECK_OK(dpc_mech_limit_sensitivity(m, &gm, &err), &err);
    CHECK_NEAR_REL(g2, gm * gm, 1e-14, "nu: theory vs mech");
    dpc_mech_free(m);
}

static void test_table4(void)
{
    CHECK(dpc_theory_table4_deff(0.0, 100) == 100.0, "a = 0: d");
    CHECK_NEAR_REL(dpc_theory_table4_deff(1.0, 100), log(100.0), 1e-15, "a = 1: log d");
    CHECK_NEAR_REL(dpc_theory_table4_deff(2.0, 100), 2.0, 1e-15, "a = 2: a/(a-1)");
    /* the asymptotic d_eff orders agree with the exact one up to constants */
    double lam[4096];
    dpc_theory_powerlaw(lam, 4096, 0.5);
    double tr = 0;
    for (int j = 0; j < 4096; j++) tr += lam[j];
    CHECK(rel(tr, dpc_theory_table4_deff(0.5, 4096)) < 0.02, "k^-1/2: d_eff ~ 2 sqrt d");
}

/* dpc_nu_setup_make: the defaults, the spectrum, Theorem 2.2's nu and its clamp, sigma, the
 * burn-in and the truncated beta, each against an independent computation; every field out of
 * range refused by name before any work. */
static void test_setup(void)
{
    dpc_error err = {0};
    dpc_nu_setup_params p;
    dpc_nu_setup su;
    dpc_nu_setup_params_init(&p);
    CHECK(p.problem == DPC_NU_PROBLEM_LTI && p.d == 128 && p.alpha == 1.0 && p.eta == 0.02 &&
              p.rho == 0.5 && p.G == 1.0 && p.sigma_sgd == 0.0 && p.mu == 0.01 && p.L == 1.0 &&
              p.tmax == 4 && p.nu_max == 0.999 && p.steps == 0 && p.model == DPC_SIM_FIXED &&
              p.seed == 1 && p.burn_in_scale == 10.0 && p.tail == 1e-8,
          "setup defaults");
    /* LTI: lambda_k = k^-alpha, nu = eta lambda_d */
    p.alpha = 1.5;
    CHECK_OK(dpc_nu_setup_make(&su, &p, NULL, &err), &err);
    int same = su.d == 128;
    for (size_t k = 0; k < 128 && same; k++) same = su.lambda[k] == pow((double)(k + 1), -1.5);
    CHECK(same, "setup spectrum k^-1.5");
    CHECK(su.lambda_min == su.lambda[127] && su.nu == 0.02 * su.lambda[127], "setup nu = eta lambda_min: %g",
          su.nu);
    CHECK(su.problem.eta == 0.02 && su.problem.rho == 0.5 && su.problem.lambda == su.lambda &&
              su.problem.d == 128 && !su.beta && su.len == 0,
          "setup problem view, no beta without one");
    dpc_nu_setup_free(&su);
    CHECK(!su.lambda, "setup free clears");
    /* MEAN: d = 1, lambda = 1; the clamp */
    p.problem = DPC_NU_PROBLEM_MEAN;
    p.eta = 1.5;
    CHECK_OK(dpc_nu_setup_make(&su, &p, NULL, &err), &err);
    CHECK(su.d == 1 && su.lambda[0] == 1.0 && su.nu == 0.999, "setup mean: clamp 0.999, got %g", su.nu);
    dpc_nu_setup_free(&su);
    /* SC: lambda_min = mu */
    dpc_nu_setup_params_init(&p);
    p.problem = DPC_NU_PROBLEM_SC;
    p.mu = 0.05;
    p.eta = 0.5;
    CHECK_OK(dpc_nu_setup_make(&su, &p, NULL, &err), &err);
    CHECK(su.lambda_min == 0.05 && su.nu == 0.5 * 0.05 && su.sc.mu == 0.05 && su.sc.tmax == 4,
          "setup sc: nu = eta mu = %g", su.nu);
    dpc_nu_setup_free(&su);
    /* with a beta and a simulation */
    dpc_nu_setup_params_init(&p);
    p.d = 8;
    p.rho = 2.0;
    p.G = 3.0;
    p.steps = 1000;
    p.seed = 9;
    p.burn_in_scale = 20.0;
    dpc_theory_beta bs = dpc_theory_beta_sgd(), bn = dpc_theory_beta_nu(0.01);
    for (int m = 0; m < 2; m++) {
        const dpc_theory_beta *b = m ? &bn : &bs;
        double g2;
        CHECK_OK(dpc_theory_gamma_inf2(b, &g2, &err), &err);
        CHECK_OK(dpc_nu_setup_make(&su, &p, b, &err), &err);
        double lmin = pow(8.0, -1.0), slow = fmin(0.02 * lmin, m ? 0.01 : 1.0);
        CHECK(su.gamma_inf2 == g2 && su.sigma == 3.0 * sqrt(g2 / 4.0), "setup sigma %d: %g", m, su.sigma);
        CHECK(su.burn_in == (size_t)(20.0 / slow), "setup burn-in %d: %zu", m, su.burn_in);
        size_t len = dpc_theory_beta_len_for_tail(b, 1e-8, 1);
        double *want = malloc(len * sizeof *want);
        dpc_theory_beta_coeffs(b, want, len);
        int eq = su.len == len && su.beta;
        for (size_t t = 0; t < len && eq; t++) eq = su.beta[t] == want[t];
        free(want);
        CHECK(eq, "setup truncated beta %d (len %zu)", m, su.len);
        CHECK(su.sim.beta == su.beta && su.sim.len == len && su.sim.d == 8 && su.sim.lambda == su.lambda &&
                  su.sim.steps == 1000 && su.sim.burn_in == su.burn_in && su.sim.seed == 9 &&
                  su.sim.sigma == su.sigma && su.sim.model == DPC_SIM_FIXED,
              "setup simulation %d", m);
        CHECK_OK(dpc_sim_config_check(&su.sim, &err), &err);
        dpc_nu_setup_free(&su);
    }
    /* refusals, each naming its field, *out zeroed */
    static const struct { const char *field; int what; } bad[] = {
        {"problem", 0}, {"d", 1}, {"alpha", 2}, {"eta", 3}, {"rho", 4}, {"G", 5}, {"sigma_sgd", 6},
        {"mu", 7}, {"L", 8}, {"mu", 9}, {"nu_max", 10}, {"model", 11}, {"burn_in_scale", 12},
        {"tail", 13}, {"tmax", 14}, {"rho", 15}, {"G", 16}, {"sigma_sgd", 17}, {"L", 18}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dpc_nu_setup_params_init(&p);
        switch (bad[i].what) {
        case 0: p.problem = (dpc_nu_problem)7; break;
        case 1: p.d = 0; break;
        case 2: p.alpha = -1; break;
        case 3: p.eta = 0; break;
        case 4: p.rho = NAN; break;
        case 5: p.G = -2; break;
        case 6: p.sigma_sgd = INFINITY; break;
        case 7: p.problem = DPC_NU_PROBLEM_SC, p.mu = 0; break;
        case 8: p.model = DPC_SIM_LOGCOSH, p.L = -1; break;
        case 9: p.problem = DPC_NU_PROBLEM_SC, p.mu = 2, p.L = 1; break;
        case 10: p.nu_max = 1.0; break;
        case 11: p.model = (dpc_sim_model)9; break;
        case 12: p.burn_in_scale = 0; break;
        case 13: p.tail = 1.0; break;
        /* the real limits the table holds (the CLI's options read them): the SC bound's
         * multipliers are a fixed array of 32; the constants enter squared */
        case 14: p.problem = DPC_NU_PROBLEM_SC, p.tmax = 32; break;
        case 15: p.rho = 2e150; break;
        case 16: p.G = 2e150; break;
        case 17: p.sigma_sgd = 2e150; break;
        default: p.L = 2e150; break;
        }
        dpc_error e = {0};
        dpc_status st = dpc_nu_setup_make(&su, &p, NULL, &e);
        CHECK(st == DPC_E_INVALID && !strcmp(e.field, bad[i].field) && !su.lambda,
              "setup refuses %s: %d %s (%s)", bad[i].field, (int)st, e.field, e.msg);
    }
    {   /* the edge of each real limit is accepted: tmax 31 by the setup and the SC bound; a
         * spectrum beyond the work limit is refused by name before it is allocated */
        dpc_nu_setup_params_init(&p);
        p.problem = DPC_NU_PROBLEM_SC, p.tmax = 31, p.mu = 0.5, p.eta = 0.5;
        dpc_error e = {0};
        dpc_theory_beta bq = dpc_theory_beta_nu(0.25);
        dpc_theory_sc_result r;
        CHECK_OK(dpc_nu_setup_make(&su, &p, NULL, &e), &e);
        CHECK_OK(dpc_theory_sc_bound(&su.sc, &bq, &r, &e), &e);
        dpc_nu_setup_free(&su);
        dpc_nu_setup_params_init(&p);
        dpc_nu_setup_params_init(&p);
        p.alpha = 200, p.d = 100; /* 100^-200 = 1e-400: the spectrum underflows */
        CHECK(dpc_nu_setup_make(&su, &p, NULL, &e) == DPC_E_INVALID && !strcmp(e.field, "alpha") &&
                  !su.lambda, "an underflowing spectrum refused naming alpha: %s", e.msg);
        p.alpha = 100; /* 100^-100 = 1e-200: representable */
        CHECK_OK(dpc_nu_setup_make(&su, &p, NULL, &e), &e);
        dpc_nu_setup_free(&su);
        dpc_nu_setup_params_init(&p);
        p.d = (size_t)1 << 40;
        CHECK(dpc_nu_setup_make(&su, &p, NULL, &e) == DPC_E_RANGE && !strcmp(e.field, "d") &&
                  !su.lambda, "a spectrum of 2^40 eigenvalues refused by the work limit: %s",
              e.msg);
    }
    dpc_error e = {0};
    CHECK(dpc_nu_setup_make(&su, NULL, NULL, &e) == DPC_E_INVALID && !strcmp(e.field, "params"),
          "setup NULL params");
    CHECK(dpc_nu_setup_make(NULL, &p, NULL, &e) == DPC_E_INVALID, "setup NULL out");
    dpc_theory_beta nodecay = dpc_theory_beta_nu(0.0);
    dpc_nu_setup_params_init(&p);
    p.steps = 100;
    dpc_status st = dpc_nu_setup_make(&su, &p, &nodecay, &e);
    CHECK(st != DPC_OK && !su.lambda && !su.beta, "setup: coefficients that do not decay refused (%s: %s)",
          e.field, e.msg);
}

/* The field table covers dpc_theory_problem and its ranges are dpc_theory_problem_check's: a
 * value out of one field's range is refused by both, naming the same field. */
static void test_field_table(void)
{
    dpc_error e = {0};
    const dpc_field_table *t = dpc_theory_problem_fields();
    CHECK(t && t->size == sizeof(dpc_theory_problem) && t->count == 6, "table of the struct");
    CHECK_OK(dpc_field_table_verify(t, &e), &e);
    double lam[2] = {1.0, 0.5};
    dpc_theory_problem ok = {.eta = 0.5, .rho = 1, .G = 1, .sigma_sgd = 0, .d = 2, .lambda = lam};
    CHECK_OK(dpc_theory_problem_check(&ok, &e), &e);
    CHECK_OK(dpc_field_check(t, &ok, &e), &e);
    struct { const char *field; double v; } bad[] = {
        {"eta", -1}, {"eta", INFINITY}, {"rho", -1}, {"rho", 2e150}, {"G", -0.5},
        {"G", 2e150}, {"sigma_sgd", -1}, {"sigma_sgd", 2e150}, {"eta", NAN}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dpc_theory_problem b = ok;
        dpc_error e1 = {0}, e2 = {0};
        CHECK_OK(dpc_field_set(dpc_field_find(t, bad[i].field, NULL), &b, bad[i].v, &e), &e);
        CHECK(dpc_field_check(t, &b, &e1) == DPC_E_INVALID && !strcmp(e1.field, bad[i].field) &&
                  dpc_theory_problem_check(&b, &e2) == DPC_E_INVALID &&
                  !strcmp(e2.field, bad[i].field),
              "%s = %g refused by both: '%s' / '%s'", bad[i].field, bad[i].v, e1.msg, e2.msg);
    }
    /* 0 is the table's "unset": accepted by the range check, refused by the problem's check */
    static const char *const unset[] = {"eta", "rho", "G", "d"};
    for (size_t i = 0; i < 4; i++) {
        dpc_theory_problem b = ok;
        CHECK_OK(dpc_field_set(dpc_field_find(t, unset[i], NULL), &b, 0, &e), &e);
        CHECK_OK(dpc_field_check(t, &b, &e), &e);
        CHECK(dpc_theory_problem_check(&b, &e) == DPC_E_INVALID && !strcmp(e.field, unset[i]),
              "%s = 0 (unset) refused: %s", unset[i], e.msg);
    }
}

int main(void)
{
    test_field_table();
    test_special();
    test_coefficients();
    test_sensitivity();
    test_series();
    test_mean();
    test_v0_table();
    test_bounds();
    test_errors();
    test_from_mech();
    test_table4();
    test_setup();
    return TEST_SUMMARY();
}
