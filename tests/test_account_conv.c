/* test_account_conv.c — zCDP and GDP: the Gaussian's rho and mu, the conversions to and from
 * (eps, delta), checked against an independent Simpson quadrature of the Gaussian privacy loss
 * written here, against mpmath oracles (tests/gen/account_oracles.py) and published values. */
#include "dpcorr/account.h"
#include "account_oracles.h"
#include "harness.h"

#include <string.h>

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* ---- Independent quadrature ----------------------------------------------------------------- */

static long double npdf(long double x)
{
    return expl(-0.5L * x * x) / sqrtl(2.0L * 3.14159265358979323846L);
}

/* Composite Simpson of f over [a, b] with n (even) intervals. */
static long double simpson(long double (*f)(long double, const void *), const void *ctx,
                           long double a, long double b, int n)
{
    long double h = (b - a) / n, s = f(a, ctx) + f(b, ctx);
    for (int i = 1; i < n; i++) s += (i & 1 ? 4.0L : 2.0L) * f(a + h * i, ctx);
    return s * h / 3.0L;
}

typedef struct {
    long double mu, eps, alpha;
} gctx;

/* (p - e^eps q)_+ for P = N(mu, 1), Q = N(0, 1); positive exactly for x >= eps/mu + mu/2. */
static long double hockey_integrand(long double x, const void *vc)
{
    const gctx *c = vc;
    long double v = npdf(x - c->mu) - expl(c->eps) * npdf(x);
    return v > 0 ? v : 0;
}

/* delta(eps) of the Gaussian mechanism with mu = sensitivity/sigma, integrated directly. */
static double gauss_delta_quad(double mu, double eps)
{
    gctx c = {mu, eps, 0};
    long double x0 = eps / mu + mu / 2; /* the integrand vanishes below x0 */
    return (double)simpson(hockey_integrand, &c, x0, x0 + 40.0L, 200000);
}

/* p^a q^(1-a): its integral is exp((a-1) D_a(P || Q)). */
static long double renyi_integrand(long double x, const void *vc)
{
    const gctx *c = vc;
    return expl(c->alpha * logl(npdf(x - c->mu)) + (1 - c->alpha) * logl(npdf(x)));
}

static double gauss_renyi_quad(double mu, double alpha)
{
    gctx c = {mu, 0, alpha};
    long double ctr = alpha * mu; /* the integrand is a Gaussian bump centred at alpha mu */
    long double I = simpson(renyi_integrand, &c, ctr - 40.0L, ctr + 40.0L, 40000);
    return (double)(logl(I) / (alpha - 1));
}

/* ---- Tests ---------------------------------------------------------------------------------- */

static void test_gaussian_parameters(void)
{
    dpc_error err = {0};
    double rho, mu;
    CHECK_OK(dpc_zcdp_rho_gaussian(2.0, 4.0, &rho, &err), &err);
    CHECK_NEAR_REL(rho, 0.125, 1e-15, "rho = Delta^2 / (2 sigma^2)");
    CHECK_OK(dpc_gdp_mu_gaussian(2.0, 4.0, &mu, &err), &err);
    CHECK_NEAR_REL(mu, 0.5, 1e-15, "mu = Delta / sigma");
    /* rho-zCDP means D_a <= a rho for all a: the Gaussian attains it. Check by quadrature. */
    double alphas[] = {1.5, 2.0, 5.0, 20.0};
    for (size_t i = 0; i < NELEM(alphas); i++) {
        double d = gauss_renyi_quad(0.5, alphas[i]);
        CHECK_NEAR_REL(d, alphas[i] * 0.125, 1e-9, "quadrature D_%g vs a rho", alphas[i]);
    }
}

static void test_gdp(void)
{
    dpc_error err = {0};
    for (size_t i = 0; i < NELEM(oracle_gdp_delta); i++) {
        double mu = oracle_gdp_delta[i][0], eps = oracle_gdp_delta[i][1], d;
        CHECK_OK(dpc_gdp_delta(mu, eps, &d, &err), &err);
        CHECK_NEAR_REL(d, oracle_gdp_delta[i][2], 1e-12, "GDP delta(mu=%g, eps=%g) vs mpmath", mu,
                       eps);
        if (mu <= 3.0) { /* the quadrature window is sized for moderate mu */
            double dq = gauss_delta_quad(mu, eps);
            CHECK_NEAR_REL(d, dq, 1e-9, "GDP delta(mu=%g, eps=%g) vs Simpson quadrature", mu, eps);
        }
        /* inverse: eps(delta(eps)) = eps */
        double e2;
        CHECK_OK(dpc_gdp_epsilon(mu, d, &e2, &err), &err);
        CHECK_NEAR_REL(e2, eps, 1e-9, "GDP eps(delta(eps)) round trip, mu=%g", mu);
    }
    for (size_t i = 0; i < NELEM(oracle_gdp_mu); i++) {
        double eps = oracle_gdp_mu[i][0], delta = oracle_gdp_mu[i][1], mu;
        CHECK_OK(dpc_gdp_mu_for(eps, delta, &mu, &err), &err);
        CHECK_NEAR_REL(mu, oracle_gdp_mu[i][2], 1e-12, "GDP mu_for(%g, %g) vs mpmath", eps, delta);
        double d;
        CHECK_OK(dpc_gdp_delta(mu, eps, &d, &err), &err);
        CHECK(d <= delta, "mu_for is on the private side: delta %g <= %g", d, delta);
    }
    /* DP-SRGD note table (exact mu): eps=1, delta=1e-6 -> 0.2367; eps=8 -> 1.5315 */
    double mu;
    CHECK_OK(dpc_gdp_mu_for(1.0, 1e-6, &mu, &err), &err);
    CHECK_NEAR_ABS(mu, 0.2367, 5e-5, "DP-SRGD table mu(1, 1e-6)");
    /* monotonicity */
    double d1, d2, d3;
    CHECK_OK(dpc_gdp_delta(1.0, 0.5, &d1, &err), &err);
    CHECK_OK(dpc_gdp_delta(1.0, 1.0, &d2, &err), &err);
    CHECK_OK(dpc_gdp_delta(1.5, 1.0, &d3, &err), &err);
    CHECK(d1 > d2 && d3 > d2, "delta decreases in eps, increases in mu");
    /* eps = 0: delta = 2 Phi(mu/2) - 1, i.e. the total variation */
    double d0;
    CHECK_OK(dpc_gdp_delta(1.0, 0.0, &d0, &err), &err);
    CHECK_NEAR_REL(d0, erf(0.5 / sqrt(2.0)), 1e-14, "delta(0) = TV distance");
}

static void test_zcdp(void)
{
    dpc_error err = {0};
    for (size_t i = 0; i < NELEM(oracle_zcdp_tight); i++) {
        double rho = oracle_zcdp_tight[i][0], delta = oracle_zcdp_tight[i][1], e, a, ebs;
        CHECK_OK(dpc_zcdp_epsilon(rho, delta, DPC_ZCDP_TIGHT, &e, &a, &err), &err);
        CHECK_NEAR_REL(e, oracle_zcdp_tight[i][2], 1e-10, "tight zCDP eps(rho=%g, %g) vs mpmath",
                       rho, delta);
        CHECK_NEAR_REL(a, oracle_zcdp_tight[i][3], 1e-4, "optimal order");
        CHECK_OK(dpc_zcdp_epsilon(rho, delta, DPC_ZCDP_BUN_STEINKE, &ebs, NULL, &err), &err);
        CHECK_NEAR_REL(ebs, rho + 2 * sqrt(rho * log(1 / delta)), 1e-15, "Bun-Steinke closed form");
        CHECK(e <= ebs, "tight (%g) <= Bun-Steinke (%g)", e, ebs);
        /* delta inverse, both conversions */
        double d;
        CHECK_OK(dpc_zcdp_delta(rho, e, DPC_ZCDP_TIGHT, &d, &err), &err);
        CHECK_NEAR_REL(d, delta, 1e-7, "tight delta(eps(delta)) round trip, rho=%g", rho);
        CHECK_OK(dpc_zcdp_delta(rho, ebs, DPC_ZCDP_BUN_STEINKE, &d, &err), &err);
        CHECK_NEAR_REL(d, delta, 1e-10, "BS delta(eps(delta)) round trip, rho=%g", rho);
        /* rho_for inverts the conversion */
        double r2;
        CHECK_OK(dpc_zcdp_rho_for(e, delta, DPC_ZCDP_TIGHT, &r2, &err), &err);
        CHECK_NEAR_REL(r2, rho, 1e-9, "tight rho_for(eps(rho)) = rho");
        CHECK_OK(dpc_zcdp_rho_for(ebs, delta, DPC_ZCDP_BUN_STEINKE, &r2, &err), &err);
        CHECK_NEAR_REL(r2, rho, 1e-12, "BS rho_for(eps(rho)) = rho");
    }
    /* The conversions are valid for the Gaussian mechanism (the rho-zCDP mechanism): the exact
     * delta at the converted eps, by quadrature, is below the target delta, and not by orders
     * of magnitude for the tight one. */
    double rhos[] = {0.02, 0.125, 0.5, 2.0};
    for (size_t i = 0; i < NELEM(rhos); i++) {
        double mu = sqrt(2 * rhos[i]), e, ebs;
        CHECK_OK(dpc_zcdp_epsilon(rhos[i], 1e-5, DPC_ZCDP_TIGHT, &e, NULL, &err), &err);
        CHECK_OK(dpc_zcdp_epsilon(rhos[i], 1e-5, DPC_ZCDP_BUN_STEINKE, &ebs, NULL, &err), &err);
        double dq = gauss_delta_quad(mu, e), dqbs = gauss_delta_quad(mu, ebs);
        CHECK(dq <= 1e-5 && dq > 1e-8, "tight zCDP valid and tight-ish: exact delta %g at eps %g",
              dq, e);
        CHECK(dqbs <= dq, "Bun-Steinke is looser: %g <= %g", dqbs, dq);
        double eg;
        CHECK_OK(dpc_gdp_epsilon(mu, 1e-5, &eg, &err), &err);
        CHECK(eg < e, "exact GDP eps %g < zCDP eps %g", eg, e);
    }
    /* dp_accounting: a Gaussian with sigma = 4.530877117 is exactly (1, 1e-6)-DP under the RDP
     * conversion with a continuous order, which is the tight zCDP conversion of rho. */
    double rho, e;
    CHECK_OK(dpc_zcdp_rho_gaussian(1.0, 4.530877117, &rho, &err), &err);
    CHECK_OK(dpc_zcdp_epsilon(rho, 1e-6, DPC_ZCDP_TIGHT, &e, NULL, &err), &err);
    CHECK_NEAR_ABS(e, 1.0, 1e-9, "published: sigma 4.530877117 -> (1, 1e-6)");
    /* DP-AMBSSGD note: rho* at eps = 1, delta = 1e-5 is 0.020820 (Bun-Steinke). */
    CHECK_OK(dpc_zcdp_rho_for(1.0, 1e-5, DPC_ZCDP_BUN_STEINKE, &rho, &err), &err);
    CHECK_NEAR_ABS(rho, 0.020820, 5e-7, "published rho* (DP-AMBSSGD note)");
    /* rho = 0: perfectly private */
    CHECK_OK(dpc_zcdp_epsilon(0.0, 1e-5, DPC_ZCDP_TIGHT, &e, NULL, &err), &err);
    CHECK(e == 0.0, "rho 0 -> eps 0");
}

static void test_errors(void)
{
    dpc_error err = {0};
    double v;
    CHECK(dpc_zcdp_epsilon(0.1, 1.5, DPC_ZCDP_TIGHT, &v, NULL, &err) == DPC_E_INVALID &&
              strstr(err.msg, "delta"),
          "delta 1.5 rejected, message names delta: '%s'", err.msg);
    CHECK(dpc_zcdp_epsilon(NAN, 1e-5, DPC_ZCDP_TIGHT, &v, NULL, &err) == DPC_E_INVALID &&
              strstr(err.msg, "rho"),
          "NaN rho rejected: '%s'", err.msg);
    CHECK(dpc_gdp_delta(-1.0, 1.0, &v, &err) == DPC_E_INVALID && strstr(err.msg, "mu"),
          "negative mu rejected: '%s'", err.msg);
    CHECK(dpc_gdp_epsilon(1.0, 0.0, &v, &err) == DPC_E_INVALID && strstr(err.msg, "delta"),
          "delta 0 rejected: '%s'", err.msg);
    CHECK(dpc_gdp_mu_for(INFINITY, 1e-5, &v, &err) == DPC_E_INVALID && strstr(err.msg, "eps"),
          "infinite eps rejected: '%s'", err.msg);
    CHECK(dpc_zcdp_rho_gaussian(1.0, 0.0, &v, &err) == DPC_E_INVALID && strstr(err.msg, "sigma"),
          "sigma 0 rejected: '%s'", err.msg);
    CHECK(dpc_zcdp_epsilon(0.1, 1e-5, (dpc_zcdp_conv)7, &v, NULL, &err) == DPC_E_INVALID,
          "unknown conversion rejected");
    /* issue 28: values whose epsilon would overflow are refused naming the parameter */
    CHECK(dpc_zcdp_epsilon(1e308, 1e-5, DPC_ZCDP_TIGHT, &v, NULL, &err) == DPC_E_RANGE &&
              !strcmp(err.field, "rho"),
          "rho 1e308 refused: '%s'", err.msg);
    CHECK(dpc_gdp_epsilon(1e308, 1e-5, &v, &err) == DPC_E_RANGE && !strcmp(err.field, "mu"),
          "mu 1e308 refused: '%s'", err.msg);
    CHECK(dpc_zcdp_epsilon(0.1, 1e-5, DPC_ZCDP_TIGHT, &v, NULL, NULL) == DPC_OK,
          "err may be NULL");
}

/* A noise multiplier so small that rho or mu overflows releases (almost) the data: epsilon is
 * infinite and delta(eps) is 1, as RDP reports, never an error about a parameter not given. */
static void test_no_noise(void)
{
    dpc_gauss_event c;
    dpc_gauss_event_init(&c);
    c.sigma = 1e-300;
    c.count = 10;
    dpc_event ev = {DPC_NEIGHBOR_ADD_REMOVE, 1, &c};
    dpc_accountant accs[3] = {DPC_ACCOUNTANT_ZCDP, DPC_ACCOUNTANT_GDP, DPC_ACCOUNTANT_RDP};
    for (int a = 0; a < 3; a++) {
        dpc_account_opts o;
        dpc_account_opts_init(&o, accs[a]);
        dpc_account_result r;
        dpc_error err = {0};
        CHECK_OK(dpc_account_epsilon(&ev, &o, 1e-5, &r, &err), &err);
        CHECK(isinf(r.epsilon), "%s: epsilon %g, want inf", dpc_accountant_name(accs[a]), r.epsilon);
        if (accs[a] == DPC_ACCOUNTANT_RDP) continue;
        CHECK_OK(dpc_account_delta(&ev, &o, 1.0, &r, &err), &err);
        CHECK(r.delta == 1.0, "%s: delta %g, want 1", dpc_accountant_name(accs[a]), r.delta);
    }
}

/* Large rho: the tight conversion is between rho and the Bun-Steinke bound (it read 0 above
 * rho ~ 1e17, where the optimal order a rounds to 1; issue 28's sweep). */
static void test_zcdp_large_rho(void)
{
    const double rhos[] = {1e15, 1e17, 1e20, 1e50, 1e150};
    for (size_t i = 0; i < sizeof rhos / sizeof rhos[0]; i++) {
        dpc_error err = {0};
        double e = 0, bs = 0;
        CHECK_OK(dpc_zcdp_epsilon(rhos[i], 1e-5, DPC_ZCDP_TIGHT, &e, NULL, &err), &err);
        CHECK_OK(dpc_zcdp_epsilon(rhos[i], 1e-5, DPC_ZCDP_BUN_STEINKE, &bs, NULL, &err), &err);
        CHECK(e >= rhos[i] && e <= bs * (1 + 1e-12), "rho %g: tight %.17g, Bun-Steinke %.17g",
              rhos[i], e, bs);
    }
}

int main(void)
{
    test_zcdp_large_rho();
    test_no_noise();
    test_gaussian_parameters();
    test_gdp();
    test_zcdp();
    test_errors();
    return TEST_SUMMARY();
}
