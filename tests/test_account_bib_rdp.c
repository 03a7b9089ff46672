/* test_account_bib_rdp.c — the Renyi-DP dynamic program for balls-in-bins (bib_rdp.c):
 * exact Renyi moments for C = I (random allocation) and for a tridiagonal Gram matrix, upper
 * bounds for a full one (tests/gen/bib_rdp_oracle.py, mpmath); epsilon never below the exact
 * random-allocation epsilon (tests/gen/bib_oracle.py quadrature / Monte Carlo) nor below the
 * exact epsilon of a 3-bin matrix pair, and how far above; the route's deterministic bound on
 * nu and BSR against the Monte Carlo (the Monte Carlo's delta at the bound's epsilon is within
 * the target; ratios printed); nonincreasing in sigma; the work limit names part.b. */
#include "account/acc_internal.h"
#include "account_bib_oracle.h"
#include "account_bib_rdp_oracle.h"
#include "harness.h"
#include "mech_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* C = I: the chain with d = 1, e = r = 0 at s = 1/mu is the random-allocation moment, exactly */
static void test_ra_moments(void)
{
    for (size_t i = 0; i < sizeof bib_rdp_oracle_ra / sizeof bib_rdp_oracle_ra[0]; i++) {
        size_t b = bib_rdp_oracle_ra[i].b, M = BIB_RDP_ORACLE_RA_M;
        double *d = malloc(b * sizeof *d), *z = calloc(b, sizeof *z), lm[BIB_RDP_ORACLE_RA_M + 1];
        for (size_t j = 0; j < b; j++) d[j] = 1.0;
        dpc_error err = {0};
        CHECK_OK(dpc__bib_rdp_logmoments(b, d, z, z, 1.0 / bib_rdp_oracle_ra[i].mu, M, lm, &err),
                 &err);
        for (size_t m = 2; m <= M; m++) {
            double ex = bib_rdp_oracle_ra[i].logm[m], tol = 1e-9 * (fabs(ex) > 1 ? fabs(ex) : 1);
            CHECK(lm[m] >= ex - 1e-12 * fabs(ex) && lm[m] <= ex + tol,
                  "ra b %zu mu %g m %zu: log moment %.15g vs exact %.15g", b,
                  bib_rdp_oracle_ra[i].mu, m, lm[m], ex);
        }
        free(d);
        free(z);
    }
}

/* a 3 x 3 Gram matrix: rho = 0 on a tridiagonal G is exact; every candidate is an upper bound */
static void test_gen_moments(void)
{
    for (size_t i = 0; i < sizeof bib_rdp_oracle_gen / sizeof bib_rdp_oracle_gen[0]; i++) {
        dpc__bib_rdp R;
        dpc_error err = {0};
        double s = bib_rdp_oracle_gen[i].s, lm[BIB_RDP_ORACLE_GEN_M + 1];
        size_t M = BIB_RDP_ORACLE_GEN_M;
        int tri = bib_rdp_oracle_gen[i].G[2] == 0.0;
        CHECK_OK(dpc__bib_rdp_prepare(bib_rdp_oracle_gen[i].G, 3, &R, &err), &err);
        for (size_t k = 0; k < R.ncand; k++) {
            CHECK_OK(dpc__bib_rdp_logmoments(3, R.d + 3 * k, R.e + 3 * k, R.r + 3 * k, s, M, lm,
                                             &err),
                     &err);
            double worst = 0.0;
            for (size_t m = 2; m <= M; m++) {
                double v = lm[m] + R.rho[k] / (s * s) * (double)m * ((double)m - 1.0) / 2.0;
                double ex = bib_rdp_oracle_gen[i].logm[m];
                CHECK(v >= ex - 1e-12 * fabs(ex), "%s rho %g m %zu: %.15g below exact %.15g",
                      bib_rdp_oracle_gen[i].name, R.rho[k], m, v, ex);
                if (tri && R.rho[k] == 0.0)
                    CHECK(v <= ex + 1e-10 * fabs(ex), "%s (exact chain) m %zu: %.15g vs %.15g",
                          bib_rdp_oracle_gen[i].name, m, v, ex);
                if (v - ex > worst) worst = v - ex;
            }
            printf("# %-16s rho %.3g: log-moment bound - exact <= %.4g (m <= %zu)\n",
                   bib_rdp_oracle_gen[i].name, R.rho[k], worst, M);
        }
        dpc__bib_rdp_free(&R);
    }
}

/* two neighbours kept (logmoments3): exact for every candidate on 3 bins (no pair at distance
 * 3), an upper bound on 4 bins and never above the one-neighbour program */
static void test_gen_moments3(void)
{
    for (size_t i = 0; i < sizeof bib_rdp_oracle_gen / sizeof bib_rdp_oracle_gen[0]; i++) {
        dpc__bib_rdp R;
        dpc_error err = {0};
        double s = bib_rdp_oracle_gen[i].s, lm[BIB_RDP_ORACLE_GEN_M + 1];
        size_t M = BIB_RDP_ORACLE_GEN_M;
        CHECK_OK(dpc__bib_rdp_prepare(bib_rdp_oracle_gen[i].G, 3, &R, &err), &err);
        for (size_t k = 0; k < R.ncand; k++) {
            CHECK_OK(dpc__bib_rdp_logmoments3(3, R.d3 + 3 * k, R.e3 + 3 * k, R.r + 3 * k,
                                              R.r2 + 3 * k, s, M, lm, &err),
                     &err);
            for (size_t m = 2; m <= M; m++) {
                double v = lm[m] + R.rho[k] / (s * s) * (double)m * ((double)m - 1.0) / 2.0;
                double ex = bib_rdp_oracle_gen[i].logm[m];
                CHECK(v >= ex - 1e-12 * fabs(ex) && v <= ex + 1e-10 * fabs(ex),
                      "%s rho %g m %zu (two neighbours, exact): %.15g vs %.15g",
                      bib_rdp_oracle_gen[i].name, R.rho[k], m, v, ex);
            }
        }
        dpc__bib_rdp_free(&R);
    }
    for (size_t i = 0; i < sizeof bib_rdp_oracle_gen4 / sizeof bib_rdp_oracle_gen4[0]; i++) {
        dpc__bib_rdp R;
        dpc_error err = {0};
        double s = bib_rdp_oracle_gen4[i].s, l3[BIB_RDP_ORACLE_GEN_M + 1],
               l2[BIB_RDP_ORACLE_GEN_M + 1];
        size_t M = BIB_RDP_ORACLE_GEN_M;
        CHECK_OK(dpc__bib_rdp_prepare(bib_rdp_oracle_gen4[i].G, 4, &R, &err), &err);
        for (size_t k = 0; k < R.ncand; k++) {
            CHECK_OK(dpc__bib_rdp_logmoments3(4, R.d3 + 4 * k, R.e3 + 4 * k, R.r + 4 * k,
                                              R.r2 + 4 * k, s, M, l3, &err),
                     &err);
            CHECK_OK(dpc__bib_rdp_logmoments(4, R.d + 4 * k, R.e + 4 * k, R.r + 4 * k, s, M, l2,
                                             &err),
                     &err);
            double w3 = 0.0, w2 = 0.0;
            for (size_t m = 2; m <= M; m++) {
                double sh = R.rho[k] / (s * s) * (double)m * ((double)m - 1.0) / 2.0;
                double ex = bib_rdp_oracle_gen4[i].logm[m];
                CHECK(l3[m] + sh >= ex - 1e-12 * fabs(ex) && l3[m] <= l2[m] + 1e-12 * fabs(l2[m]),
                      "%s rho %g m %zu: two neighbours %.15g, one %.15g, exact %.15g",
                      bib_rdp_oracle_gen4[i].name, R.rho[k], m, l3[m] + sh, l2[m] + sh, ex);
                if (l3[m] + sh - ex > w3) w3 = l3[m] + sh - ex;
                if (l2[m] + sh - ex > w2) w2 = l2[m] + sh - ex;
            }
            printf("# %-16s rho %.3g: log-moment bound - exact <= %.4g (two neighbours), %.4g "
                   "(one)\n",
                   bib_rdp_oracle_gen4[i].name, R.rho[k], w3, w2);
        }
        dpc__bib_rdp_free(&R);
    }
}

static double *gram_identity(size_t b, double k)
{
    double *G = calloc(b * b, sizeof *G);
    for (size_t j = 0; j < b; j++) G[j * b + j] = k;
    return G;
}

/* C = I: at the exact delta(eps) of random allocation (closed form + quadrature for b = 2, 3;
 * Monte Carlo, 4 standard errors below, for b = 10, 60) each direction's epsilon is >= eps;
 * against dpcorr's exact random-allocation bound (bib_ra.c) at delta = 1e-5 */
static void test_ra_epsilon(void)
{
    for (size_t i = 0; i < sizeof bib_oracle_ra / sizeof bib_oracle_ra[0]; i++) {
        size_t b = bib_oracle_ra[i].b;
        double *G = gram_identity(b, 1.0), er, ea, xr, xa;
        dpc__bib_rdp R;
        dpc_error err = {0};
        CHECK_OK(dpc__bib_rdp_prepare(G, b, &R, &err), &err);
        double dr = bib_oracle_ra[i].remove - 4 * bib_oracle_ra[i].se_r;
        double da = bib_oracle_ra[i].add - 4 * bib_oracle_ra[i].se_a;
        CHECK_OK(dpc__bib_rdp_epsilon2(&R, 1.0 / bib_oracle_ra[i].mu, dr, &er, &xa, &err), &err);
        CHECK_OK(dpc__bib_rdp_epsilon2(&R, 1.0 / bib_oracle_ra[i].mu, da, &xr, &ea, &err), &err);
        CHECK(er >= bib_oracle_ra[i].eps && ea >= bib_oracle_ra[i].eps,
              "ra b %zu mu %g: Renyi remove %.6g / add %.6g below the exact eps %.6g", b,
              bib_oracle_ra[i].mu, er, ea, bib_oracle_ra[i].eps);
        dpc__bib_rdp_free(&R);
        free(G);
    }
    size_t bs[] = {10, 60, 1000};
    double mus[] = {1.0, 1.0, 0.5};
    for (size_t i = 0; i < 3; i++) {
        size_t b = bs[i];
        double *G = gram_identity(b, 1.0), er, ea, rr, ra;
        dpc__bib_rdp R;
        dpc_error err = {0};
        CHECK_OK(dpc__bib_rdp_prepare(G, b, &R, &err), &err);
        CHECK_OK(dpc__bib_rdp_epsilon2(&R, 1.0 / mus[i], 1e-5, &er, &ea, &err), &err);
        CHECK_OK(dpc__ra_epsilon2(b, mus[i], 1e-5, &rr, &ra, &err), &err);
        CHECK(er >= rr * (1 - 1e-6) && ea >= ra * (1 - 1e-6) && er <= 3.0 * rr,
              "identity b %zu: Renyi %.6g / %.6g vs exact bound %.6g / %.6g", b, er, ea, rr, ra);
        printf("# identity b %-4zu mu %-4g delta 1e-5: Renyi DP remove %.4f add %.4f | exact "
               "random allocation remove %.4f add %.4f | ratio (remove) %.2f\n",
               b, mus[i], er, ea, rr, ra, er / rr);
        dpc__bib_rdp_free(&R);
        free(G);
    }
}

/* the 3-bin matrix pair of bib_oracle.py (C_it = 0.6^(i-t), n = 6, b = 3, s = 2): at the exact
 * delta(eps), each direction's Renyi epsilon is >= eps */
static void test_gen_epsilon(void)
{
    size_t n = 6, b = 3;
    double M[18] = {0}, G[9] = {0};
    for (size_t r = 0; r < n; r++)
        for (size_t t = 0; t < n; t++) M[r * b + t % b] += bib_oracle_gen_C[r * n + t];
    for (size_t i = 0; i < b; i++)
        for (size_t j = 0; j < b; j++)
            for (size_t r = 0; r < n; r++) G[i * b + j] += M[r * b + i] * M[r * b + j];
    dpc__bib_rdp R;
    dpc_error err = {0};
    CHECK_OK(dpc__bib_rdp_prepare(G, b, &R, &err), &err);
    for (size_t i = 0; i < sizeof bib_oracle_gen / sizeof bib_oracle_gen[0]; i++) {
        double er, ea, x;
        CHECK_OK(dpc__bib_rdp_epsilon2(&R, bib_oracle_gen_s, bib_oracle_gen[i].remove, &er, &x,
                                       &err),
                 &err);
        CHECK_OK(dpc__bib_rdp_epsilon2(&R, bib_oracle_gen_s, bib_oracle_gen[i].add, &x, &ea, &err),
                 &err);
        CHECK(er >= bib_oracle_gen[i].eps && ea >= bib_oracle_gen[i].eps,
              "3-bin pair at exact eps %g: Renyi remove %.6g add %.6g", bib_oracle_gen[i].eps, er,
              ea);
        printf("# 3-bin 0.6^(i-t) s 2: exact eps %.2f (delta remove %.4g) -> Renyi %.4f (ratio "
               "%.2f)\n",
               bib_oracle_gen[i].eps, bib_oracle_gen[i].remove, er, er / bib_oracle_gen[i].eps);
    }
    dpc__bib_rdp_free(&R);
}

/* nu and BSR through the route: the deterministic bound against the Monte Carlo. At the bound's
 * epsilon the Monte Carlo's delta (4 standard errors below its estimate) is within the target,
 * and the bound is within 2x the Monte Carlo's upper confidence bound; nonincreasing in sigma. */
static void test_mc_and_monotone(void)
{
    struct {
        const char *name;
        dpc_mech_kind kind;
        double nu;
        size_t bands, n, b;
        double z;
    } cs[] = {{"BSR-2", DPC_MECH_BSR, 0, 2, 120, 30, 2.0},
              {"BSR-4", DPC_MECH_BSR, 0, 4, 120, 30, 2.0},
              {"BSR-4", DPC_MECH_BSR, 0, 4, 120, 30, 4.0},
              {"nu 0.05", DPC_MECH_NU, 0.05, 0, 120, 30, 3.0},
              {"nu 0.5", DPC_MECH_NU, 0.5, 0, 120, 30, 3.0}};
    dpc_account_opts o;
    dpc_account_opts_init(&o, DPC_ACCOUNTANT_PLD);
    double delta = 1e-5;
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        dpc_mech *m = mech_of(cs[i].kind, cs[i].n, cs[i].nu, cs[i].bands);
        dpc_mech_run run = {m, {DPC_PART_CYCLIC, cs[i].n / cs[i].b, cs[i].b}, 1.0, 1, NULL, 0};
        dpc_account_result r;
        dpc_account_mech_info in;
        dpc_error err = {0};
        CHECK_OK(dpc_account_mech_epsilon(&run, cs[i].z, &o, delta, &r, &in, &err), &err);
        double det = in.eps_routes[DPC_ROUTE_BALLS_IN_BINS], mc = in.eps_bib_mc;
        CHECK(in.bib_deterministic == 1 && isfinite(det) && isfinite(mc) && det <= 2.0 * mc,
              "%s z %g: deterministic %.6g, Monte Carlo %.6g", cs[i].name, cs[i].z, det, mc);
        dpc__bib_ctx c;
        CHECK_OK(dpc__bib_prepare(&run, &o, delta, &c, &err), &err);
        double out[6];
        size_t N = tests_scale() < 1.0 ? (size_t)1 << 14 : (size_t)1 << 16;
        CHECK(dpc__bib_mc_delta(c.G, c.b, cs[i].z * c.colmax, det, N, 777 + i, 1.0, 0.5, 1e-6,
                                out) == DPC_OK,
              "mc delta");
        CHECK(out[0] - 4 * out[1] <= delta && out[3] - 4 * out[4] <= delta,
              "%s z %g: at eps %.6g the Monte Carlo delta remove %.3g +- %.2g, add %.3g +- %.2g",
              cs[i].name, cs[i].z, det, out[0], out[1], out[3], out[4]);
        double sr, sa, rr, ra, s = cs[i].z * c.colmax;
        CHECK_OK(dpc__bib_sf_epsilon2(c.sf_a, c.sf_c, c.sf_n, c.b, s, delta, &sr, &sa, &err),
                 &err);
        CHECK_OK(dpc__bib_rdp_epsilon2(&c.rdp, s, delta, &rr, &ra, &err), &err);
        printf("# %-8s n %zu b %zu z %g delta 1e-5: post-processing %.4f, Renyi DP %.4f, "
               "deterministic %.4f | Monte Carlo %.4f | ratio %.2f | whole run %.4f\n",
               cs[i].name, cs[i].n, cs[i].b, cs[i].z, sr > sa ? sr : sa, rr > ra ? rr : ra, det,
               mc, det / mc, in.eps_routes[DPC_ROUTE_WHOLE_RUN]);
        if (i == 0 || i == 3) { /* sigma sweep of the deterministic route */
            double prev = INFINITY;
            for (double z = 0.75; z <= 12.0; z *= 4.0) {
                double e;
                dpc_account_mech_info mi;
                CHECK_OK(dpc__bib_epsilon_ex(&c, z, 1e300, 0, &e, &mi, &err), &err);
                CHECK(e <= prev * (1 + 1e-9), "%s: z %g eps %.8g above %.8g at smaller z",
                      cs[i].name, z, e, prev);
                prev = e;
            }
        }
        dpc__bib_free(&c);
        dpc_mech_free(m);
    }
}

/* the work limit: b (M+1)^3 / 6 (one neighbour) or b (M+1)^4 / 24 (two) above DPC_WORK_LIMIT
 * refused before any work (the arrays are not read), naming part.b */
static void test_work_limit(void)
{
    double one = 1.0, lm[65];
    dpc_error err = {0};
    CHECK(dpc__bib_rdp_logmoments(2000000, &one, &one, &one, 1.0, 64, lm, &err) == DPC_E_RANGE &&
              strstr(err.msg, "part.b"),
          "work limit: '%s'", err.msg);
    err.msg[0] = 0;
    CHECK(dpc__bib_rdp_logmoments3(20000, &one, &one, &one, &one, 1.0, 64, lm, &err) ==
                  DPC_E_RANGE &&
              strstr(err.msg, "part.b"),
          "work limit (two neighbours): '%s'", err.msg);
}

int main(void)
{
    test_ra_moments();
    test_gen_moments();
    test_gen_moments3();
    test_ra_epsilon();
    test_gen_epsilon();
    test_mc_and_monotone();
    test_work_limit();
    return TEST_SUMMARY();
}
