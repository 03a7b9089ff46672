/* test_audit_study.c — the epsilon study's library parts (dpcorr/audit.h): the perfect-guess cap
 * against the bound's definition evaluated here independently (exact binomial sums in long
 * double, a scan and bisection of the p-value), the grid against its documented rule, the cell
 * configuration, and refusals naming the field. */
#include "dpcorr/audit.h"
#include "harness.h"

#include <math.h>
#include <string.h>

/* P[Bin(r, p) = k] from log-gamma in long double. */
static long double pmf(size_t k, size_t r, long double p)
{
    if (p <= 0) return k == 0;
    if (p >= 1) return k == r;
    long double lc = lgammal((long double)r + 1) - lgammal((long double)k + 1) -
                     lgammal((long double)(r - k) + 1);
    return expl(lc + (long double)k * logl(p) + (long double)(r - k) * log1pl(-p));
}

/* The definition: min(1, beta + 2 m delta alpha), p = e^eps / (1 + e^eps). */
static double pvalue(size_t m, size_t r, size_t v, double eps, double delta)
{
    long double p = 1.0L / (1.0L + expl(-(long double)eps)), beta = 0, alpha = 0, run = 0;
    for (size_t i = v; i <= r; i++) beta += pmf(i, r, p);
    for (size_t i = 1; i <= v; i++) { /* run = P[v - i <= Bin < v] */
        run += pmf(v - i, r, p);
        if (run / (long double)i > alpha) alpha = run / (long double)i;
    }
    long double t = beta + 2.0L * (long double)m * (long double)delta * alpha;
    return (double)(t < 1 ? t : 1);
}

/* The first crossing of pvalue = sig: scan by 1/256, bisect to 1e-12. */
static double bound(size_t m, size_t r, size_t v, double delta, double sig)
{
    if (pvalue(m, r, v, 0, delta) >= sig) return 0;
    double lo = 0, hi = 1.0 / 256;
    while (pvalue(m, r, v, hi, delta) < sig) lo = hi, hi += 1.0 / 256;
    while (hi - lo > 1e-12) {
        double mid = 0.5 * (lo + hi);
        if (pvalue(m, r, v, mid, delta) < sig) lo = mid;
        else hi = mid;
    }
    return lo;
}

/* The documented guess grid and perfect guesses: canary i in when i is odd. */
static double perfect(size_t m, double delta, double conf)
{
    static const double frac[] = {0.01, 0.02, 0.05, 0.1, 0.2, 0.5};
    size_t kp[12], km[12], n = 0, in = m / 2, out = m - m / 2;
    for (size_t f = 0; f < 6; f++) {
        size_t k = (size_t)floor(frac[f] * (double)m + 0.5);
        if (k < 1) k = 1;
        for (size_t b = 0; b <= k; b += k) {
            int dup = k + b > m;
            for (size_t j = 0; j < n; j++) dup |= kp[j] == k && km[j] == b;
            if (!dup) kp[n] = k, km[n] = b, n++;
        }
    }
    double best = 0;
    for (size_t c = 0; c < n; c++) {
        size_t v = (kp[c] < in ? kp[c] : in) + (km[c] < out ? km[c] : out);
        double e = bound(m, kp[c] + km[c], v, delta, (1 - conf) / (double)n);
        if (e > best) best = e;
    }
    return best;
}

static void test_perfect_bound(void)
{
    static const struct { size_t m; double delta, conf; } cases[] = {
        {1, 1e-5, 0.95},   {7, 1e-5, 0.95},  {100, 1e-5, 0.95}, {100, 0, 0.5},
        {333, 1e-6, 0.99}, {1000, 1e-5, 0.95}, {100, 1e-3, 0.99}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dpc_error err = {0};
        double e = -1, want = perfect(cases[i].m, cases[i].delta, cases[i].conf);
        CHECK_OK(dpc_audit_perfect_bound(cases[i].m, cases[i].delta, cases[i].conf, &e, &err),
                 &err);
        CHECK_NEAR_ABS(e, want, 1e-6, "perfect bound m=%zu delta=%g conf=%g", cases[i].m,
                       cases[i].delta, cases[i].conf);
    }
    /* more canaries can show more: the cap grows with m */
    double a = 0, b = 0;
    dpc_error err = {0};
    CHECK_OK(dpc_audit_perfect_bound(100, 1e-5, 0.95, &a, &err), &err);
    CHECK_OK(dpc_audit_perfect_bound(1000, 1e-5, 0.95, &b, &err), &err);
    CHECK(b > a && a > 1, "cap grows with m (%g, %g)", a, b);
}

static void test_grid(void)
{
    dpc_audit_study_grid g;
    memset(&g, 0, sizeof g);
    dpc_audit_study_grid_init(&g);
    for (size_t j = 0; j < DPC_AUDIT_STUDY_EPSILONS; j++)
        CHECK(g.epsilon[j] == ldexp(1, (int)j), "claimed epsilon %zu = 2^%zu", j, j);
    CHECK(g.mech[0].kind == DPC_MECH_IDENTITY && g.mech[0].sampler == DPC_SAMPLER_POISSON,
          "row 0: DP-SGD under Poisson");
    CHECK(g.mech[1].kind == DPC_MECH_NU && g.mech[1].sampler == DPC_SAMPLER_FIXED &&
              g.mech[1].nu == 0.02,
          "row 1: nu-DP-FTRL nu 0.02, fixed order");
    CHECK(g.mech[2].kind == DPC_MECH_BSR && g.mech[2].sampler == DPC_SAMPLER_CYCLIC_POISSON &&
              g.mech[2].bands == 16,
          "row 2: BSR 16 bands, cyclic Poisson");
    for (size_t k = 0; k < DPC_AUDIT_STUDY_MECHS; k++)
        CHECK(g.mech[k].label && g.mech[k].label[0], "row %zu labelled", k);
    dpc_train_config base, c;
    dpc_train_config_init(&base);
    base.groups = 5;
    base.noise_multiplier = 3;
    base.batch = 77;
    dpc_error err = {0};
    for (size_t k = 0; k < DPC_AUDIT_STUDY_MECHS; k++) {
        CHECK_OK(dpc_audit_study_config(&base, k, 4, &c, &err), &err);
        CHECK(c.mech.kind == g.mech[k].kind && c.sampler == g.mech[k].sampler &&
                  c.mech.nu == g.mech[k].nu && c.mech.bands == g.mech[k].bands &&
                  c.epsilon == 4 && c.groups == 0 && c.noise_multiplier == 0 && c.batch == 77 &&
                  c.delta == base.delta,
              "cell (%zu, 4): the row's mechanism, the rest the base's", k);
    }
}

static void test_refusals(void)
{
    dpc_error err = {0};
    dpc_train_config base, c;
    dpc_train_config_init(&base);
    double e;
    CHECK(dpc_audit_study_config(&base, DPC_AUDIT_STUDY_MECHS, 1, &c, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "mech"),
          "row out of range: mech");
    CHECK(dpc_audit_study_config(&base, 0, 0, &c, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "epsilon"),
          "epsilon 0: epsilon");
    CHECK(dpc_audit_study_config(&base, 0, NAN, &c, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "epsilon"),
          "epsilon NaN: epsilon");
    CHECK(dpc_audit_study_config(NULL, 0, 1, &c, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "base"),
          "NULL base");
    CHECK(dpc_audit_perfect_bound(0, 1e-5, 0.95, &e, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "m"),
          "0 canaries: m");
    CHECK(dpc_audit_perfect_bound(10, 1, 0.95, &e, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "delta"),
          "delta 1: delta");
    CHECK(dpc_audit_perfect_bound(10, 1e-5, 1, &e, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "confidence"),
          "confidence 1: confidence");
    CHECK(dpc_audit_perfect_bound(10, 1e-5, 0.95, NULL, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "eps"),
          "NULL eps");
}

static void test_refutes(void)
{
    dpc_audit_result r;
    memset(&r, 0, sizeof r);
    r.ledger.epsilon = 2;
    r.bound.epsilon = 1.5;
    CHECK(!dpc_audit_refutes(&r), "bound below the claim: no refutation");
    r.bound.epsilon = 2;
    CHECK(!dpc_audit_refutes(&r), "bound at the claim: no refutation");
    r.bound.epsilon = 2.25;
    CHECK(dpc_audit_refutes(&r), "bound above the claim: refuted");
    CHECK(!dpc_audit_refutes(NULL), "NULL: no refutation");
}

int main(void)
{
    test_refutes();
    test_perfect_bound();
    test_grid();
    test_refusals();
    return TEST_SUMMARY();
}
