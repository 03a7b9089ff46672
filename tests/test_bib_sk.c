/* test_bib_sk.c — issue 35 item 5: how far the balls-in-bins route's deterministic bound
 * (post-processing and the Renyi dynamic program, bib_route.c) stands above the Monte Carlo
 * epsilon of jax_privacy's sampler on Toeplitz strategies with 2, 4 and 8 coefficients (BSR),
 * at delta 1e-4 and 1e-5. Each row checks that the bound is an upper bound (the independent
 * Monte Carlo's delta at the bound's epsilon, 4 standard errors below its estimate, is within
 * the target in both directions) and prints the table of doc/accounting.md section 7.2 (the
 * Schuchardt & Kalinin conditional-composition bound is not implemented: see there). */
#include "account/acc_internal.h"
#include "harness.h"
#include "mech_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_toeplitz_vs_monte_carlo(void)
{
    static const size_t bands[] = {2, 4, 8};
    static const double zs[] = {2.0, 4.0}, deltas[] = {1e-4, 1e-5};
    const size_t n = 120, b = 30;
    dpc_account_opts o;
    dpc_account_opts_init(&o, DPC_ACCOUNTANT_PLD);
    printf("# strategy | n, b | z | delta | Monte Carlo UCB | Renyi DP | post-processing | "
           "route | route / MC\n");
    unsigned key = 0;
    for (size_t i = 0; i < sizeof bands / sizeof bands[0]; i++)
        for (size_t k = 0; k < sizeof zs / sizeof zs[0]; k++)
            for (size_t d = 0; d < sizeof deltas / sizeof deltas[0]; d++, key++) {
                dpc_mech *m = mech_of(DPC_MECH_BSR, n, 0.0, bands[i]);
                dpc_mech_run run = {m, {DPC_PART_CYCLIC, n / b, b}, 1.0, 1, NULL, 0};
                dpc_error err = {0};
                dpc__bib_ctx c;
                CHECK_OK(dpc__bib_prepare(&run, &o, deltas[d], &c, &err), &err);
                double s = zs[k] * c.colmax, det, sr, sa, rr, ra;
                dpc_account_mech_info mi, in;
                dpc_account_result r;
                /* the whole run's epsilon: the Monte Carlo's search range */
                CHECK_OK(dpc_account_mech_epsilon(&run, zs[k], &o, deltas[d], &r, &in, &err),
                         &err);
                double whole = in.eps_routes[DPC_ROUTE_WHOLE_RUN];
                CHECK_OK(dpc__bib_epsilon_ex(&c, zs[k], whole, 1, &det, &mi, &err), &err);
                CHECK_OK(dpc__bib_sf_epsilon2(c.sf_a, c.sf_c, c.sf_n, c.b, s, deltas[d], &sr,
                                              &sa, &err),
                         &err);
                CHECK_OK(dpc__bib_rdp_epsilon2(&c.rdp, s, deltas[d], &rr, &ra, &err), &err);
                double mc = mi.eps_bib_mc, out[6];
                CHECK(mi.bib_deterministic == 1 && isfinite(det) && isfinite(mc) &&
                          det <= 2.0 * mc,
                      "BSR-%zu z %g delta %g: deterministic %.6g, Monte Carlo %.6g", bands[i],
                      zs[k], deltas[d], det, mc);
                size_t N = tests_scale() < 1.0 ? (size_t)1 << 14 : (size_t)1 << 16;
                CHECK(dpc__bib_mc_delta(c.G, c.b, s, det, N, 9001 + key, 1.0, 0.5, 1e-6, out) ==
                          DPC_OK,
                      "mc delta");
                CHECK(out[0] - 4 * out[1] <= deltas[d] && out[3] - 4 * out[4] <= deltas[d],
                      "BSR-%zu z %g: at eps %.6g the Monte Carlo delta remove %.3g +- %.2g, "
                      "add %.3g +- %.2g above %g",
                      bands[i], zs[k], det, out[0], out[1], out[3], out[4], deltas[d]);
                printf("# BSR-%zu | %zu, %zu | %g | %g | %.4f | %.4f | %.4f | %.4f | %.2f\n",
                       bands[i], n, b, zs[k], deltas[d], mc, rr > ra ? rr : ra,
                       sr > sa ? sr : sa, det, det / mc);
                dpc__bib_free(&c);
                dpc_mech_free(m);
            }
}

int main(void)
{
    test_toeplitz_vs_monte_carlo();
    return TEST_SUMMARY();
}
