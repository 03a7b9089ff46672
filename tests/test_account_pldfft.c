/* test_account_pldfft.c — the FFT-power self-composition of PLDs (pld_compose.c): the circular
 * power against direct circular convolution, the Chernoff-window power against binary-powering
 * convolutions (the reference), long runs that used to fail (dp_accounting reference values),
 * unsampled compositions against the exact Gaussian (GDP), the tilted tail at tiny delta against
 * RDP (an independent upper bound), and the mixture-of-Gaussians discretization against the
 * subsampled Gaussian's. */
#include "account/acc_internal.h"
#include "harness.h"

#include <string.h>

static void test_circular_power(void)
{
    size_t ns[] = {4, 8, 32, 64};
    for (size_t a = 0; a < 4; a++) {
        size_t n = ns[a];
        for (uint64_t T = 1; T <= 7; T += 2) {
            double *x = malloc(n * sizeof *x), *ref = calloc(n, sizeof *ref),
                   *tmp = malloc(n * sizeof *tmp);
            for (size_t i = 0; i < n; i++) x[i] = 1.0 / (double)(1 + (i * 7) % 5) / (double)n;
            /* direct: ref = x (*) x ... T times, circularly */
            memcpy(ref, x, n * sizeof *ref);
            for (uint64_t t = 1; t < T; t++) {
                for (size_t i = 0; i < n; i++) {
                    double s = 0.0;
                    for (size_t j = 0; j < n; j++) s += ref[j] * x[(i + n - j) % n];
                    tmp[i] = s;
                }
                memcpy(ref, tmp, n * sizeof *ref);
            }
            CHECK(dpc__selfconv_circular(x, n, T, 0.0) == DPC_OK, "selfconv n %zu", n);
            double worst = 0.0;
            for (size_t i = 0; i < n; i++)
                if (fabs(x[i] - ref[i]) > worst) worst = fabs(x[i] - ref[i]);
            CHECK(worst < 1e-15, "circular power n %zu T %llu: err %.3g", n,
                  (unsigned long long)T, worst);
            free(x);
            free(ref);
            free(tmp);
        }
    }
    double y[3];
    CHECK(dpc__selfconv_circular(y, 3, 2, 0.0) == DPC_E_INVALID, "n not a power of two");
}

static void test_power_vs_naive(void)
{
    dpc_pld_params par;
    dpc_pld_params_init(&par);
    par.interval = 2e-3; /* odd sizes: thousands of points, not a power of two */
    dpc_error err = {0};
    size_t Ts[] = {3, 7, 33};
    double qs[] = {0.1, 1.0};
    for (size_t a = 0; a < 3; a++)
        for (size_t b = 0; b < 2; b++) {
            dpc_pld *one = NULL, *fast = NULL, *ref = NULL;
            CHECK_OK(dpc_pld_new_gaussian(&one, 1.3, qs[b], &par, &err), &err);
            CHECK_OK(dpc_pld_self_compose(&fast, one, Ts[a], &err), &err);
            CHECK_OK(dpc__pld_self_compose_naive(&ref, one, Ts[a], &err), &err);
            double ds[] = {1e-3, 1e-5, 1e-8};
            for (int k = 0; k < 3 && fast && ref; k++) {
                double e1, e2;
                CHECK_OK(dpc_pld_epsilon(fast, ds[k], &e1, &err), &err);
                CHECK_OK(dpc_pld_epsilon(ref, ds[k], &e2, &err), &err);
                CHECK(harness_near_rel(e1, e2, 1e-6), "T %zu q %g delta %g: %.10g vs %.10g",
                      Ts[a], qs[b], ds[k], e1, e2);
            }
            dpc_pld_free(one);
            dpc_pld_free(fast);
            dpc_pld_free(ref);
        }
}

static double pld_eps(double sigma, double q, size_t T, double delta)
{
    dpc_gauss_event c;
    dpc_gauss_event_init(&c);
    c.sigma = sigma;
    c.sampling = q < 1 ? DPC_SAMPLING_POISSON : DPC_SAMPLING_NONE;
    c.q = q;
    c.count = T;
    dpc_event ev = {DPC_NEIGHBOR_ADD_REMOVE, 1, &c};
    dpc_account_opts o;
    dpc_account_opts_init(&o, DPC_ACCOUNTANT_PLD);
    dpc_account_result r = {0};
    dpc_error err = {0};
    CHECK_OK(dpc_account_epsilon(&ev, &o, delta, &r, &err), &err);
    return r.epsilon;
}

static void test_long_runs(void)
{
    /* dp_accounting (google/differential-privacy, python/dp_accounting, PLDAccountant defaults,
     * run by the author on this machine; doc/accounting.md): epsilon of Poisson-subsampled
     * Gaussians. The first used to fail here ("the composed loss grid exceeds ..."). */
    const struct { double sigma, q; size_t T; double delta, eps; } ref[] = {
        {0.6, 0.001, 100000, 1e-6, 6.9611574533771226},
        {1.0, 0.01, 100000, 1e-5, 25.573272643721126},
        {0.8, 0.05, 10000, 1e-8, 93.13997693081174},
        {3.0, 0.1, 512, 1e-6, 3.769686577530167}};
    for (size_t i = 0; i < sizeof ref / sizeof ref[0]; i++) {
        double e = pld_eps(ref[i].sigma, ref[i].q, ref[i].T, ref[i].delta);
        CHECK(harness_near_rel(e, ref[i].eps, 0.01) && e >= ref[i].eps * (1 - 1e-5),
              "sigma %g q %g T %zu: %.8g vs dp_accounting %.8g", ref[i].sigma, ref[i].q,
              ref[i].T, e, ref[i].eps);
    }
    /* unsampled: T Gaussians are one Gaussian, mu = sqrt(T)/sigma; exact by GDP */
    size_t Ts[] = {100, 10000000};
    for (int i = 0; i < 2; i++) {
        double e = pld_eps(0.3, 1.0, Ts[i], 1e-12), g;
        dpc_error err = {0};
        CHECK_OK(dpc_gdp_epsilon(sqrt((double)Ts[i]) / 0.3, 1e-12, &g, &err), &err);
        CHECK(e >= g * (1 - 1e-12) && harness_near_rel(e, g, 1e-3), "unsampled T %zu: %.10g vs "
              "GDP %.10g", Ts[i], e, g);
    }
    /* tiny delta on a long run: the tilted tail keeps PLD below RDP (another upper bound);
     * without it FFT round-off pushed epsilon to 31 (RDP: 12.24) */
    double e = pld_eps(2.0, 1e-3, 10000000, 1e-10);
    dpc_gauss_event c;
    dpc_gauss_event_init(&c);
    c.sigma = 2.0;
    c.sampling = DPC_SAMPLING_POISSON;
    c.q = 1e-3;
    c.count = 10000000;
    dpc_event ev = {DPC_NEIGHBOR_ADD_REMOVE, 1, &c};
    dpc_account_opts o;
    dpc_account_opts_init(&o, DPC_ACCOUNTANT_RDP);
    dpc_account_result r;
    dpc_error err = {0};
    CHECK_OK(dpc_account_epsilon(&ev, &o, 1e-10, &r, &err), &err);
    CHECK(e < r.epsilon && e > 0.8 * r.epsilon, "1e7 steps, delta 1e-10: pld %.6g vs rdp %.6g",
          e, r.epsilon);
}

static void test_mog_vs_gaussian(void)
{
    dpc_pld_params par;
    dpc_pld_params_init(&par);
    par.interval = 1e-3;
    dpc_error err = {0};
    double w[5] = {0.9, 0, 0, 0, 0.1}; /* shifts 0 and 4 * 0.25 = 1 */
    dpc_pld *a = NULL, *b = NULL, *A = NULL, *B = NULL;
    CHECK_OK(dpc_pld_new_gaussian(&a, 1.5, 0.1, &par, &err), &err);
    CHECK_OK(dpc__pld_new_mog(&b, w, 5, 0, 0.25, 1.5, &par, 100, &err), &err);
    CHECK_OK(dpc_pld_self_compose(&A, a, 100, &err), &err);
    CHECK_OK(dpc_pld_self_compose(&B, b, 100, &err), &err);
    double ds[] = {1e-3, 1e-6, 1e-9};
    for (int k = 0; k < 3 && A && B; k++) {
        double e1, e2;
        CHECK_OK(dpc_pld_epsilon(A, ds[k], &e1, &err), &err);
        CHECK_OK(dpc_pld_epsilon(B, ds[k], &e2, &err), &err);
        CHECK(harness_near_rel(e1, e2, 1e-3), "mixture vs subsampled Gaussian at %g: %.8g vs "
              "%.8g", ds[k], e2, e1);
    }
    dpc_pld_free(a);
    dpc_pld_free(b);
    dpc_pld_free(A);
    dpc_pld_free(B);
}

int main(void)
{
    test_circular_power();
    test_power_vs_naive();
    test_long_runs();
    test_mog_vs_gaussian();
    return TEST_SUMMARY();
}
