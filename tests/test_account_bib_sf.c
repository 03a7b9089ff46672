/* test_account_bib_sf.c — the sampling-free (deterministic) balls-in-bins bound (bib_sf.c):
 * equal to the exact random-allocation bound for C = I; never below the exact epsilon of tiny
 * pairs (tests/gen/bib_sf_oracle.py) and how far above; consistent with the Monte Carlo's point
 * estimate on nu and BSR strategies (at the bound's epsilon the estimated delta is not above
 * the target); nonincreasing in sigma; the work limit names part.b; the route reports the
 * guarantee type and lets the Monte Carlo in only when asked. */
#include "account/acc_internal.h"
#include "account_bib_sf_oracle.h"
#include "harness.h"
#include "mech_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double sf_eps(const double *G, size_t b, double s, double delta)
{
    double a[DPC__BIB_SF_CAND], c[DPC__BIB_SF_CAND], e = NAN;
    size_t cnt;
    dpc_error err = {0};
    CHECK_OK(dpc__bib_sf_prepare(G, b, a, c, &cnt, &err), &err);
    CHECK_OK(dpc__bib_sf_epsilon(a, c, cnt, b, s, delta, &e, &err), &err);
    return e;
}

/* C = I: G = k I, the c = 0 certificate is k (to 1e-9): the exact random-allocation bound */
static void test_identity(void)
{
    size_t bs[] = {4, 30, 100};
    for (size_t i = 0; i < 3; i++) {
        size_t b = bs[i], k = 3;
        double *G = calloc(b * b, sizeof *G);
        for (size_t j = 0; j < b; j++) G[j * b + j] = (double)k;
        double z = 1.3, er, e = sf_eps(G, b, z, 1e-5);
        dpc_error err = {0};
        CHECK_OK(dpc__ra_epsilon(b, sqrt((double)k) / z, 1e-5, &er, &err), &err);
        CHECK(e >= er && e <= er * (1 + 1e-6), "identity b %zu: sampling-free %.10g vs ra %.10g",
              b, e, er);
        free(G);
    }
}

/* tiny pairs: an upper bound on the exact epsilon */
static void test_exact_oracle(void)
{
    for (size_t i = 0; i < sizeof bib_sf_oracle / sizeof bib_sf_oracle[0]; i++) {
        double e = sf_eps(bib_sf_oracle[i].G, bib_sf_oracle[i].b, bib_sf_oracle[i].s,
                          bib_sf_oracle[i].delta);
        double ex = bib_sf_oracle[i].eps;
        CHECK(e >= ex * (1 - 2e-6) && e <= 3.0 * ex + 1e-3, "%s: sampling-free %.6g vs exact %.6g",
              bib_sf_oracle[i].name, e, ex);
        printf("# %-26s b %u s %-4g delta %-6g exact %.5f sampling-free %.5f ratio %.3f\n",
               bib_sf_oracle[i].name, bib_sf_oracle[i].b, bib_sf_oracle[i].s,
               bib_sf_oracle[i].delta, ex, e, e / ex);
    }
}

/* nu and BSR: the Monte Carlo's point estimate of delta at the bound's epsilon (4 standard
 * errors below) is within the target; the bound is nonincreasing in sigma */
static void test_mc_and_monotone(void)
{
    struct {
        dpc_mech_kind kind;
        double nu;
        size_t bands;
        double z;
    } cs[] = {{DPC_MECH_NU, 0.05, 0, 3.0}, {DPC_MECH_BSR, 0, 2, 2.0}};
    dpc_account_opts o;
    dpc_account_opts_init(&o, DPC_ACCOUNTANT_PLD);
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        dpc_mech *m = mech_of(cs[i].kind, 60, cs[i].nu, cs[i].bands);
        dpc_mech_run run = {m, {DPC_PART_CYCLIC, 4, 15}, 1.0, 1, NULL, 0};
        dpc__bib_ctx c;
        dpc_error err = {0};
        CHECK_OK(dpc__bib_prepare(&run, &o, 1e-5, &c, &err), &err);
        CHECK(c.sf_n >= 1 && !c.identity, "case %zu: certificates %zu", i, c.sf_n);
        double s = cs[i].z * c.colmax, e = NAN, prev = INFINITY;
        CHECK_OK(dpc__bib_sf_epsilon(c.sf_a, c.sf_c, c.sf_n, c.b, s, 1e-5, &e, &err), &err);
        double out[6];
        size_t N = tests_scale() < 1.0 ? (size_t)1 << 14 : (size_t)1 << 16;
        CHECK(dpc__bib_mc_delta(c.G, c.b, s, e, N, 12345 + i, 1.0, 0.5, 1e-6, out) == DPC_OK,
              "mc delta");
        CHECK(out[0] - 4 * out[1] <= 1e-5 * 1.05 && out[3] - 4 * out[4] <= 1e-5 * 1.05,
              "case %zu: at eps %.6g the MC delta remove %.3g +- %.2g, add %.3g +- %.2g", i, e,
              out[0], out[1], out[3], out[4]);
        for (double z = 0.5; z <= 16.0; z *= 4.0) {
            double ez;
            CHECK_OK(dpc__bib_sf_epsilon(c.sf_a, c.sf_c, c.sf_n, c.b, z * c.colmax, 1e-5, &ez,
                                         &err),
                     &err);
            CHECK(ez <= prev * (1 + 1e-12), "case %zu: z %g eps %.8g above %.8g at smaller z", i,
                  z, ez, prev);
            prev = ez;
        }
        dpc__bib_free(&c);
        dpc_mech_free(m);
    }
}

/* work limit: more than DPC__BIB_SF_MAX_BINS bins refused, naming part.b */
static void test_work_limit(void)
{
    size_t b = DPC__BIB_SF_MAX_BINS + 1;
    double *G = calloc(b * b, sizeof *G), a[DPC__BIB_SF_CAND], c[DPC__BIB_SF_CAND];
    size_t cnt = 7;
    dpc_error err = {0};
    CHECK(G && dpc__bib_sf_prepare(G, b, a, c, &cnt, &err) == DPC_E_RANGE && cnt == 0 &&
              strstr(err.msg, "part.b"),
          "work limit: '%s'", err.msg);
    free(G);
}

/* the route: deterministic by default, the Monte Carlo beside it; opt-in lets it in */
static void test_route(void)
{
    dpc_error err = {0};
    dpc_account_opts o;
    dpc_account_opts_init(&o, DPC_ACCOUNTANT_PLD);
    dpc_mech *m = mech_of(DPC_MECH_BSR, 60, 0, 2);
    dpc_mech_run run = {m, {DPC_PART_CYCLIC, 4, 15}, 1.0, 1, NULL, 0};
    dpc_account_result r;
    dpc_account_mech_info in;
    CHECK_OK(dpc_account_mech_epsilon(&run, 2.0, &o, 1e-5, &r, &in, &err), &err);
    double det = in.eps_routes[DPC_ROUTE_BALLS_IN_BINS];
    CHECK(in.bib_deterministic == 1 && isfinite(in.eps_bib_mc) && in.mc_samples > 0 &&
              det < in.eps_routes[DPC_ROUTE_WHOLE_RUN] && in.route == DPC_ROUTE_BALLS_IN_BINS &&
              r.epsilon == det,
          "bsr-2 default: deterministic %.6g (MC %.6g, whole run %.6g)", det, in.eps_bib_mc,
          in.eps_routes[DPC_ROUTE_WHOLE_RUN]);
    o.bib_monte_carlo = 1;
    CHECK_OK(dpc_account_mech_epsilon(&run, 2.0, &o, 1e-5, &r, &in, &err), &err);
    double lo = det < in.eps_bib_mc ? det : in.eps_bib_mc;
    CHECK(r.epsilon == lo && in.bib_deterministic == (det <= in.eps_bib_mc),
          "bsr-2 opt-in: %.6g = min(%.6g, %.6g), deterministic %d", r.epsilon, det,
          in.eps_bib_mc, in.bib_deterministic);
    /* calibration on the deterministic bound: the answer's epsilon is within the target */
    o.bib_monte_carlo = 0;
    double z;
    CHECK_OK(dpc_account_mech_calibrate_run(&run, &o, 2.0, 1e-5, &z, &in, &err), &err);
    CHECK_OK(dpc_account_mech_epsilon(&run, z, &o, 1e-5, &r, &in, &err), &err);
    CHECK(r.epsilon <= 2.0 && r.epsilon > 2.0 * 0.99 && in.bib_deterministic,
          "calibrated z %.6g gives %.8g", z, r.epsilon);
    dpc_mech_free(m);
    /* the ledger's JSON carries the guarantee */
    dpc_ledger L;
    dpc_ledger_init(&L);
    snprintf(L.guarantee, sizeof L.guarantee, "deterministic");
    L.epsilon_mc = 1.5;
    char buf[4096];
    dpc_ledger_json(&L, buf, sizeof buf);
    CHECK(strstr(buf, "\"guarantee\": \"deterministic\"") && strstr(buf, "\"epsilon_mc\": 1.5"),
          "ledger json: %s", buf);
}

int main(void)
{
    test_identity();
    test_exact_oracle();
    test_mc_and_monotone();
    test_work_limit();
    test_route();
    return TEST_SUMMARY();
}
