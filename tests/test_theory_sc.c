/* test_theory_sc.c — the Theorem 3.1 / E.1 bound: exact for quadratics (mu = L) with SGD,
 * never below the exact LTI error of a quadratic, ordering DP-SGD > nu-DP-FTRL > Optimized and
 * the growth with the condition number (Figure 3), multipliers only lower the bound; the field
 * table of dpc_theory_sc covers it and the bound's refusals go through it, naming the field. */
#include "dpcorr/papers/theory.h"
#include "harness.h"

#include <string.h>

/* Every byte of dpc_theory_sc is a field; a value out of a row's range, an unset (0) value and
 * the cross-field rules are refused by both entry points, naming the field. */
static void test_field_table(void)
{
    dpc_error err = {0};
    const dpc_field_table *t = dpc_theory_sc_fields();
    CHECK(t && t->size == sizeof(dpc_theory_sc) && t->count == 8, "table of the struct");
    CHECK_OK(dpc_field_table_verify(t, &err), &err);
    const dpc_theory_sc ok = {0.1, 1.0, 1.0, 0.5, 1.0, 0.0, 1, 31}; /* tmax 31: the edge */
    dpc_theory_beta nu = dpc_theory_beta_nu(0.1);
    dpc_theory_sc_result r;
    CHECK_OK(dpc_theory_sc_bound(&ok, &nu, &r, &err), &err);
    static const struct { const char *field; double v; } bad[] = {
        {"mu", -1},  {"mu", 0},  {"mu", 2},  {"L", 2e150},    {"L", 0},   {"eta", 0},
        {"eta", 5},  {"rho", 0}, {"rho", 2e150}, {"G", -1},   {"G", NAN}, {"sigma_sgd", -1},
        {"sigma_sgd", 2e150}, {"d", 0}, {"tmax", 32}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dpc_theory_sc b = ok;
        CHECK_OK(dpc_field_set(dpc_field_find(t, bad[i].field, NULL), &b, bad[i].v, &err), &err);
        dpc_error e1 = {0}, e2 = {0};
        CHECK(dpc_theory_sc_bound(&b, &nu, &r, &e1) == DPC_E_INVALID &&
                  !strcmp(e1.field, bad[i].field) &&
                  dpc_theory_sc_optimized(&b, &r, &e2) == DPC_E_INVALID &&
                  !strcmp(e2.field, bad[i].field),
              "%s = %g refused by both: '%s' / '%s'", bad[i].field, bad[i].v, e1.msg, e2.msg);
    }
}

int main(void)
{
    test_field_table();
    dpc_error err = {0};
    /* mu = L: F is the quadratic mu/2 theta^2; the bound with SGD noise is exact:
     * E theta^2 = eta^2 sigma^2 / (1 - (1 - eta mu)^2). */
    const double mus[] = {1.0, 0.5, 0.2};
    for (int i = 0; i < 3; i++) {
        double mu = mus[i], eta = 1.0 / mu * 0.5;
        dpc_theory_sc p = {mu, mu, eta, 0.5, 1.0, 0.0, 1, 0};
        dpc_theory_beta s = dpc_theory_beta_sgd();
        dpc_theory_sc_result r;
        CHECK_OK(dpc_theory_sc_bound(&p, &s, &r, &err), &err);
        double b = eta * mu, exact = eta * eta / (b * (2 - b));
        CHECK_NEAR_REL(r.dist, exact, 1e-6, "quadratic mu=%g: bound = exact", mu);
        CHECK_NEAR_REL(r.value, 0.5 * mu * r.dist, 1e-15, "value = L/2 dist");
        /* nu-FTRL on the quadratic: the bound is >= the exact LTI error (d = 1, lambda = mu) */
        dpc_theory_beta n = dpc_theory_beta_nu(0.3 * b);
        CHECK_OK(dpc_theory_sc_bound(&p, &n, &r, &err), &err);
        dpc_theory_problem lp = {eta, 0.5, 1.0, 0.0, 1, &mu};
        dpc_theory_lti l;
        CHECK_OK(dpc_theory_lti_error(&lp, &n, DPC_THEORY_QUADRATURE, &l, &err), &err);
        double ex = l.v0 / mu; /* E theta^2 */
        CHECK(r.dist >= ex * (1 - 1e-9) && r.dist <= 3 * ex, "nu bound %g >= exact %g (mu=%g)", r.dist, ex, mu);
    }
    /* Figure 3: L = G = 1, sigma_sgd = 0, eta = 1/L, nu = eta mu */
    double prev_sgd = 0, prev_gap = 0;
    const double kap[] = {10, 100, 1000};
    for (int i = 0; i < 3; i++) {
        dpc_theory_sc p = {1.0 / kap[i], 1.0, 1.0, 0.5, 1.0, 0.0, 1, 0};
        dpc_theory_beta s = dpc_theory_beta_sgd(), n = dpc_theory_beta_nu(1.0 / kap[i]);
        dpc_theory_sc_result rs, rn, ro, ro4, rn4;
        CHECK_OK(dpc_theory_sc_bound(&p, &s, &rs, &err), &err);
        CHECK_OK(dpc_theory_sc_bound(&p, &n, &rn, &err), &err);
        CHECK_OK(dpc_theory_sc_optimized(&p, &ro, &err), &err);
        p.tmax = 4;
        CHECK_OK(dpc_theory_sc_optimized(&p, &ro4, &err), &err);
        CHECK_OK(dpc_theory_sc_bound(&p, &n, &rn4, &err), &err);
        CHECK(rs.value > rn.value && rn.value > ro.value, "kappa=%g: SGD %g > nu %g > opt %g", kap[i],
              rs.value, rn.value, ro.value);
        CHECK(ro4.value <= ro.value * (1 + 1e-9) && rn4.value <= rn.value * (1 + 1e-9),
              "more multipliers never hurt (kappa=%g)", kap[i]);
        CHECK(rs.value > prev_sgd && rs.value / rn.value > prev_gap, "gap widens with kappa");
        prev_sgd = rs.value;
        prev_gap = rs.value / rn.value;
    }
    /* infinite gamma: infinite bound; invalid step size named */
    dpc_theory_sc p = {0.1, 1.0, 1.0, 0.5, 1.0, 0.0, 1, 0};
    dpc_theory_beta n0 = dpc_theory_beta_nu(0.0);
    dpc_theory_sc_result r;
    CHECK_OK(dpc_theory_sc_bound(&p, &n0, &r, &err), &err);
    CHECK(isinf(r.value), "nu = 0: infinite");
    p.eta = 5.0;
    CHECK(dpc_theory_sc_bound(&p, &n0, &r, &err) == DPC_E_INVALID && strstr(err.msg, "eta"), "eta named");
    return TEST_SUMMARY();
}
