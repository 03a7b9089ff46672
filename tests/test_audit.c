/* test_audit.c — the one-run audit's statistics (dpcorr/audit.h): binomial probabilities,
 * p-values and lower bounds against the mpmath oracles of tests/gen/audit_oracles.py; the exact
 * level of the test for randomized response; guesses from scores and the Bonferroni grid; the
 * bound's validity and power on Gaussian canaries (Monte Carlo); the white-box scores of every
 * mechanism against a dense brute-force computation (B B^T inverted by Gauss-Jordan); the
 * trajectory unroll against a forward simulation of the optimizer; the bound per guess count
 * (dpc_audit_bound_curve) against single-candidate bounds. */
#include "audit/audit_internal.h"
#include "audit_oracles.h"
#include "dpcorr/abi.h"
#include "dpcorr/account.h"
#include "harness.h"

#include <stdlib.h>
#include <string.h>

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static void test_oracles(void)
{
    for (size_t i = 0; i < N_OF(AO_PMF); i++)
        CHECK_NEAR_REL(dpc__binom_pmf(AO_PMF[i].k, AO_PMF[i].r, AO_PMF[i].p), AO_PMF[i].pmf, 1e-12,
                       "pmf(%zu; %zu, %g)", AO_PMF[i].k, AO_PMF[i].r, AO_PMF[i].p);
    dpc_error err = {0};
    for (size_t i = 0; i < N_OF(AO_PV); i++) {
        double p = -1;
        CHECK_OK(dpc_audit_pvalue(AO_PV[i].m, AO_PV[i].r, AO_PV[i].v, AO_PV[i].eps, AO_PV[i].delta,
                                  &p, &err), &err);
        CHECK_NEAR_REL(p, AO_PV[i].p, 1e-10, "pvalue case %zu", i);
    }
    for (size_t i = 0; i < N_OF(AO_BD); i++) {
        double e = -1;
        CHECK_OK(dpc_audit_epsilon_bound(AO_BD[i].m, AO_BD[i].r, AO_BD[i].v, AO_BD[i].delta,
                                         AO_BD[i].sig, &e, &err), &err);
        CHECK_NEAR_ABS(e, AO_BD[i].eps, 1e-7, "bound case %zu", i);
        /* the bound is a crossing: rejected just below, not rejected just above */
        if (e > 1e-6) {
            double lo, hi;
            CHECK_OK(dpc_audit_pvalue(AO_BD[i].m, AO_BD[i].r, AO_BD[i].v, e - 1e-6, AO_BD[i].delta,
                                      &lo, &err), &err);
            CHECK_OK(dpc_audit_pvalue(AO_BD[i].m, AO_BD[i].r, AO_BD[i].v, e + 1e-6, AO_BD[i].delta,
                                      &hi, &err), &err);
            CHECK(lo < AO_BD[i].sig && hi >= AO_BD[i].sig, "case %zu: %g %g vs %g", i, lo, hi,
                  AO_BD[i].sig);
        }
    }
}

/* For randomized response at eps (each guess right with probability e^eps/(1+e^eps), the
 * extreme (eps, 0)-DP mechanism) the probability that the bound exceeds eps is a finite sum
 * over v: it must not exceed the significance, and equals the oracle's. */
static void test_rr_level(void)
{
    dpc_error err = {0};
    for (size_t i = 0; i < N_OF(AO_RR); i++) {
        double p = 1.0 / (1.0 + exp(-AO_RR[i].eps)), level = 0.0;
        for (size_t v = 0; v <= AO_RR[i].r; v++) {
            double e;
            CHECK_OK(dpc_audit_epsilon_bound(AO_RR[i].m, AO_RR[i].r, v, AO_RR[i].delta,
                                             AO_RR[i].sig, &e, &err), &err);
            if (e > AO_RR[i].eps) level += dpc__binom_pmf(v, AO_RR[i].r, p);
        }
        CHECK(level <= AO_RR[i].sig, "case %zu: level %g > %g", i, level, AO_RR[i].sig);
        CHECK_NEAR_REL(level, AO_RR[i].level, 1e-10, "case %zu: exact level", i);
    }
}

static void test_guesses(void)
{
    dpc_error err = {0};
    /* scores with a tie: ranks by (score, index) */
    double sc[6] = {0.5, 3.0, -1.0, 3.0, 0.0, 2.0};
    unsigned char in[6] = {0, 1, 0, 0, 1, 1};
    size_t v;
    CHECK_OK(dpc_audit_correct(sc, in, 6, 2, 0, &v, &err), &err); /* top: idx 3, 1 */
    CHECK(v == 1, "top-2 correct %zu", v);
    CHECK_OK(dpc_audit_correct(sc, in, 6, 3, 2, &v, &err), &err); /* +5; bottom: 2, 4 */
    CHECK(v == 3, "top-3 bottom-2 correct %zu", v);
    CHECK(dpc_audit_correct(sc, in, 6, 4, 3, &v, &err) == DPC_E_INVALID, "k+ + k- > m refused");
    size_t kp[DPC_AUDIT_GRID_MAX], km[DPC_AUDIT_GRID_MAX];
    CHECK(dpc__audit_grid(1000, kp, km) == 12, "grid of 1000");
    CHECK(kp[0] == 10 && km[0] == 0 && kp[1] == 10 && km[1] == 10 && kp[11] == 500 && km[11] == 500,
          "grid values");
    size_t n3 = dpc__audit_grid(3, kp, km);
    CHECK(n3 >= 2 && n3 <= 4, "grid of 3: %zu (duplicates removed)", n3);
    for (size_t i = 0; i < n3; i++) CHECK(kp[i] + km[i] <= 3, "grid of 3 fits");
    /* perfect separation: the bound grows with m; one explicit candidate uses the full level */
    size_t m = 400;
    double *s = malloc(m * sizeof *s);
    unsigned char *inc = malloc(m);
    for (size_t i = 0; i < m; i++) inc[i] = (unsigned char)(i % 2), s[i] = inc[i] ? 1.0 + i : -1.0 - i;
    dpc_audit_bound_result b1, b2;
    CHECK_OK(dpc_audit_bound(s, inc, m, 0, 0, 1e-5, 0.95, &b1, &err), &err);
    CHECK_OK(dpc_audit_bound(s, inc, m, 200, 200, 1e-5, 0.95, &b2, &err), &err);
    CHECK(b1.candidates == 12 && fabs(b1.significance - 0.05 / 12) < 1e-15, "grid level");
    CHECK(b2.candidates == 1 && b2.correct == 400 && b2.guesses == 400, "explicit guesses");
    CHECK(b1.epsilon > 2.0 && b2.epsilon >= b1.epsilon, "perfect guesses: %g %g", b1.epsilon,
          b2.epsilon);
    CHECK(b1.p_value <= b1.significance * (1 + 1e-9), "reported p-value below the level");
    CHECK(dpc_audit_bound(s, inc, m, 0, 0, 1e-5, 1.0, &b1, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "confidence"), "confidence 1 refused");
    s[3] = NAN;
    CHECK(dpc_audit_bound(s, inc, m, 0, 0, 1e-5, 0.95, &b1, &err) == DPC_E_NUMERIC, "NaN refused");
    free(s);
    free(inc);
}

/* Gaussian canaries (scores N(mu in_i, 1), mu of an (eps, delta)-DP Gaussian mechanism): the
 * bound exceeds eps in at most ~5% of runs (here: never, the one-run bound is conservative), and
 * it is not vacuous. */
static void test_gaussian(void)
{
    dpc_error err = {0};
    dpc_rng rng;
    dpc_rng_seed(&rng, 77);
    dpc_rng_stream st = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_TEST, 18));
    const double eps = 4.0, delta = 1e-5;
    double mu;
    CHECK_OK(dpc_gdp_mu_for(eps, delta, &mu, &err), &err);
    size_t m = 1000, trials = (size_t)(40 * tests_scale()) + 4, over = 0;
    double *s = malloc(m * sizeof *s), mean = 0;
    unsigned char *in = malloc(m);
    for (size_t k = 0; k < trials; k++) {
        for (size_t i = 0; i < m; i++) {
            in[i] = dpc_rng_uniform(&st, 2 * k, i) < 0.5;
            s[i] = dpc_rng_gaussian(&st, 2 * k + 1, i) + (in[i] ? mu : 0.0);
        }
        dpc_audit_bound_result b;
        CHECK_OK(dpc_audit_bound(s, in, m, 0, 0, delta, 0.95, &b, &err), &err);
        over += b.epsilon > eps;
        mean += b.epsilon / (double)trials;
    }
    CHECK(over == 0, "bound above the true epsilon in %zu of %zu runs", over, trials);
    CHECK(mean > 0.6 && mean < eps, "mean bound %g for true epsilon %g (mu %g)", mean, eps, mu);
    printf("  Gaussian canaries, true (%g, %g)-DP, m = %zu: mean lower bound %.3f over %zu runs\n",
           eps, delta, m, mean, trials);
    free(s);
    free(in);
}

/* ---- white-box scores against a dense brute force ----------------------------------------- */

/* Inverse of the SPD (n, n) matrix A by Gauss-Jordan with partial pivoting. */
static void gauss_jordan_inverse(double *A, double *X, size_t n)
{
    for (size_t i = 0; i < n * n; i++) X[i] = 0.0;
    for (size_t i = 0; i < n; i++) X[i * n + i] = 1.0;
    for (size_t c = 0; c < n; c++) {
        size_t piv = c;
        for (size_t r = c + 1; r < n; r++)
            if (fabs(A[r * n + c]) > fabs(A[piv * n + c])) piv = r;
        for (size_t j = 0; j < n; j++) {
            double t = A[c * n + j]; A[c * n + j] = A[piv * n + j]; A[piv * n + j] = t;
            t = X[c * n + j]; X[c * n + j] = X[piv * n + j]; X[piv * n + j] = t;
        }
        double d = A[c * n + c];
        for (size_t j = 0; j < n; j++) A[c * n + j] /= d, X[c * n + j] /= d;
        for (size_t r = 0; r < n; r++) {
            if (r == c) continue;
            double f = A[r * n + c];
            for (size_t j = 0; j < n; j++) A[r * n + j] -= f * A[c * n + j], X[r * n + j] -= f * X[c * n + j];
        }
    }
}

typedef struct mk {
    const char *name;
    dpc_mech_kind kind;
    double nu, lambda;
    size_t bands;
    int honaker;
    size_t n;
} mk;

static void brute_scores(const dpc_mech *m, const double *y, const size_t *steps, size_t k,
                         double sigma, double clip, double q, double *known, double *poisson,
                         double *mu)
{
    size_t n = dpc_mech_steps(m), rows = dpc_mech_noise_rows(m);
    double *B = malloc(n * rows * sizeof *B), *S = calloc(n * n, sizeof *S),
           *Si = malloc(n * n * sizeof *Si), *x = calloc(n, sizeof *x);
    dpc_error err = {0};
    CHECK_OK(dpc_mech_dense_noising(m, B, &err), &err);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            for (size_t r = 0; r < rows; r++) S[i * n + j] += B[i * rows + r] * B[j * rows + r];
    gauss_jordan_inverse(S, Si, n);
    for (size_t i = 0; i < k; i++) x[steps[i]] = 1.0;
    double xy = 0, xx = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) xy += x[i] * Si[i * n + j] * y[j], xx += x[i] * Si[i * n + j] * x[j];
    *known = clip * xy / (sigma * sigma) - clip * clip * xx / (2 * sigma * sigma);
    *mu = clip * sqrt(xx) / sigma;
    double llr = 0;
    for (size_t i = 0; i < k; i++) {
        size_t s = steps[i];
        double sy = 0;
        for (size_t j = 0; j < n; j++) sy += Si[s * n + j] * y[j];
        double nrm = sqrt(Si[s * n + s]), mus = clip * nrm / sigma, a = sy / (sigma * nrm);
        llr += log(1 - q + q * exp(mus * a - 0.5 * mus * mus));
    }
    *poisson = llr;
    free(B); free(S); free(Si); free(x);
}

static void test_scores(void)
{
    static const double theta[2] = {0.9, 0.5}, omega[2] = {0.3, 0.1};
    static const double tcoef[3] = {1.0, -0.5, 0.25};
    const mk cases[] = {
        {"identity", DPC_MECH_IDENTITY, 0, 0, 0, 0, 24}, {"nu", DPC_MECH_NU, 0.05, 0, 0, 0, 24},
        {"nu long (fft)", DPC_MECH_NU, 0.02, 0, 0, 0, 150},
        {"antipgd", DPC_MECH_ANTIPGD, 0.1, 0, 0, 0, 24}, {"lcgd", DPC_MECH_LCGD, 0, 0.7, 0, 0, 24},
        {"bsr", DPC_MECH_BSR, 0, 0, 4, 0, 24}, {"bisr", DPC_MECH_BISR, 0, 0, 4, 0, 24},
        {"blt", DPC_MECH_BLT, 0, 0, 0, 0, 24}, {"tree", DPC_MECH_TREE, 0, 0, 0, 0, 24},
        {"tree honaker", DPC_MECH_TREE, 0, 0, 0, 1, 20}, {"toeplitz", DPC_MECH_TOEPLITZ, 0, 0, 0, 0, 24},
        {"dense", DPC_MECH_DENSE, 0, 0, 0, 0, 12},
    };
    dpc_rng rng;
    dpc_rng_seed(&rng, 5);
    dpc_rng_stream st = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_TEST, 19));
    for (size_t c = 0; c < N_OF(cases); c++) {
        const mk *K = &cases[c];
        size_t n = K->n;
        dpc_mech_params p;
        dpc_mech_params_init(&p);
        p.kind = K->kind; p.steps = n; p.nu = K->nu; p.lambda = K->lambda; p.bands = K->bands;
        p.honaker = K->honaker;
        p.nbuf = 2; p.theta = theta; p.omega = omega;
        p.ncoeffs = 3; p.coeffs = tcoef;
        double *dense = calloc(n * n, sizeof *dense);
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j <= i; j++) dense[i * n + j] = i == j ? 1.0 : 0.3 / (double)(1 + i - j);
        p.dense = dense;
        if (K->kind != DPC_MECH_BLT) p.nbuf = 0;
        dpc_mech *m = NULL;
        dpc_error err = {0};
        CHECK_OK(dpc_mech_new(&m, &p, &err), &err);
        double sigma = 0.7, clip = 1.3, q = 0.2;
        dpc_audit_scorer *sc = NULL;
        CHECK_OK(dpc_audit_scorer_new(&sc, m, sigma, clip, &err), &err);
        double *y = malloc(n * sizeof *y);
        size_t steps[8], k = 0;
        for (size_t t = 1; t < n && k < 8; t += n / 5 + 1) steps[k++] = t;
        for (size_t t = 0; t < n; t++) y[t] = dpc_rng_gaussian(&st, c, t) + (t % 7 == 1 ? clip : 0);
        double known, pois, mu, bk, bp, bmu;
        CHECK_OK(dpc_audit_score(sc, y, steps, k, 1.0, &known, &err), &err);
        CHECK_OK(dpc_audit_score(sc, y, steps, k, q, &pois, &err), &err);
        CHECK_OK(dpc_audit_scorer_mu(sc, steps, k, &mu, &err), &err);
        brute_scores(m, y, steps, k, sigma, clip, q, &bk, &bp, &bmu);
        CHECK_NEAR_REL(known, bk, 1e-8, "%s: public-participation LLR", K->name);
        CHECK_NEAR_REL(pois, bp, 1e-8, "%s: Poisson LLR", K->name);
        CHECK_NEAR_REL(mu, bmu, 1e-9, "%s: mu", K->name);
        /* balls-in-bins: the mixture over the offsets o, o + 5, ... of the brute-force LLRs */
        size_t period = 5, ost[64];
        double mix = 0, cyc;
        for (size_t o = 0; o < period; o++) {
            size_t ko = 0;
            for (size_t t = o; t < n; t += period) ost[ko++] = t;
            double lo, dummy, dmu;
            brute_scores(m, y, ost, ko, sigma, clip, q, &lo, &dummy, &dmu);
            mix += exp(lo) / (double)period;
        }
        CHECK_OK(dpc_audit_score_cyclic(sc, y, period, &cyc, &err), &err);
        CHECK_NEAR_REL(cyc, log(mix), 1e-8, "%s: balls-in-bins mixture", K->name);
        free(y);
        free(dense);
        dpc_audit_scorer_free(sc);
        dpc_mech_free(m);
    }
}

/* Public participation without interference: the LLR is N(-mu^2/2, mu^2) for a left-out canary
 * and N(+mu^2/2, mu^2) for an included one (nu-DP-FTRL noise, four participations). */
static void test_score_distribution(void)
{
    dpc_mech_params p;
    dpc_mech_params_init(&p);
    p.kind = DPC_MECH_NU;
    p.nu = 0.1;
    p.steps = 40;
    dpc_mech *m = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_mech_new(&m, &p, &err), &err);
    dpc_audit_scorer *sc = NULL;
    double sigma = 2.0, clip = 1.0;
    CHECK_OK(dpc_audit_scorer_new(&sc, m, sigma, clip, &err), &err);
    size_t steps[4] = {3, 13, 23, 33}, n = 40, R = (size_t)(3000 * tests_scale()) + 1000;
    double mu, *B = malloc(n * n * sizeof *B), *y = malloc(n * sizeof *y), *z = malloc(n * sizeof *z);
    CHECK_OK(dpc_audit_scorer_mu(sc, steps, 4, &mu, &err), &err);
    CHECK_OK(dpc_mech_dense_noising(m, B, &err), &err);
    dpc_rng rng;
    dpc_rng_seed(&rng, 6);
    dpc_rng_stream st = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_TEST, 20));
    double s1[2] = {0, 0}, s2[2] = {0, 0};
    for (size_t r = 0; r < R; r++)
        for (int inc = 0; inc < 2; inc++) {
            for (size_t t = 0; t < n; t++) z[t] = dpc_rng_gaussian(&st, 2 * r + (size_t)inc, t);
            for (size_t t = 0; t < n; t++) {
                double a = 0;
                for (size_t u = 0; u <= t; u++) a += B[t * n + u] * z[u];
                y[t] = sigma * a + (inc && (t % 10 == 3) ? clip : 0.0);
            }
            double s;
            CHECK_OK(dpc_audit_score(sc, y, steps, 4, 1.0, &s, &err), &err);
            s1[inc] += s;
            s2[inc] += s * s;
        }
    for (int inc = 0; inc < 2; inc++) {
        double mean = s1[inc] / (double)R, var = s2[inc] / (double)R - mean * mean;
        double want = inc ? mu * mu / 2 : -mu * mu / 2;
        CHECK(fabs(mean - want) < 5 * mu / sqrt((double)R), "mean %g vs %g (inc %d)", mean, want, inc);
        CHECK(fabs(var / (mu * mu) - 1) < 5 * sqrt(2.0 / (double)R), "variance %g vs %g", var,
              mu * mu);
    }
    free(B); free(y); free(z);
    dpc_audit_scorer_free(sc);
    dpc_mech_free(m);
}

/* The unroll inverts a forward simulation of the heavy-ball update (momentum, weight decay and a
 * varying learning rate). */
static void test_unroll(void)
{
    size_t n = 30, d = 3;
    double g[30 * 3], th[31 * 3], lr[30], out[30 * 3], v[3] = {0, 0, 0};
    double mom = 0.9, wd = 0.01, Bexp = 64;
    for (size_t j = 0; j < d; j++) th[j] = 0.1 * (double)j - 0.05;
    for (size_t t = 0; t < n; t++) {
        lr[t] = 0.5 * (1 + cos(M_PI * (double)t / (double)n)) + 0.01;
        for (size_t j = 0; j < d; j++) {
            g[t * d + j] = sin(1.0 + (double)(t * d + j)) * 3.0;
            double h = g[t * d + j] / Bexp + wd * th[t * d + j];
            v[j] = mom * v[j] + h;
            th[(t + 1) * d + j] = th[t * d + j] - lr[t] * v[j];
        }
    }
    dpc_error err = {0};
    CHECK_OK(dpc_audit_unroll(th, n, d, lr, mom, wd, Bexp, out, &err), &err);
    double worst = 0;
    for (size_t i = 0; i < n * d; i++) worst = fmax(worst, fabs(out[i] - g[i]));
    CHECK(worst < 1e-9, "unroll error %g", worst);
    lr[4] = 0;
    CHECK(dpc_audit_unroll(th, n, d, lr, mom, wd, Bexp, out, &err) == DPC_E_INVALID, "lr 0 refused");
}

static void test_refusals(void)
{
    dpc_error err = {0};
    double p;
    CHECK(dpc_audit_pvalue(10, 11, 1, 1, 0, &p, &err) == DPC_E_INVALID && !strcmp(err.field, "r"),
          "r > m");
    CHECK(dpc_audit_pvalue(10, 5, 6, 1, 0, &p, &err) == DPC_E_INVALID && !strcmp(err.field, "v"),
          "v > r");
    CHECK(dpc_audit_pvalue(10, 5, 3, -1, 0, &p, &err) == DPC_E_INVALID, "eps < 0");
    CHECK(dpc_audit_epsilon_bound(10, 5, 3, 0, 0, &p, &err) == DPC_E_INVALID, "significance 0");
    dpc_audit_config c;
    dpc_audit_config_init(&c);
    CHECK_OK(dpc_audit_config_check(&c, &err), &err);
    c.canaries = 0;
    CHECK(dpc_audit_config_check(&c, &err) == DPC_E_INVALID && !strcmp(err.field, "canaries"),
          "0 canaries");
    dpc_audit_canary k;
    CHECK(dpc_audit_canary_parse("ood", &k, &err) == DPC_OK && k == DPC_AUDIT_OOD, "parse ood");
    CHECK(dpc_audit_canary_parse("x", &k, &err) == DPC_E_INVALID, "parse unknown");
}

/* The field table covers dpc_audit_config; _init writes its defaults (the values _init wrote
 * before the table: GRADIENT, 1000, 0.95, 0, 0, 256, no progress); the single-field refusals
 * go through it and name their field, the cross-field one stays. */
static void test_field_table(void)
{
    dpc_error err = {0};
    const dpc_field_table *t = dpc_audit_config_fields();
    CHECK(t && t->size == sizeof(dpc_audit_config) && t->count == 7, "table of the struct");
    CHECK_OK(dpc_field_table_verify(t, &err), &err);
    CHECK(t->size == dpc_abi_sizeof("dpc_audit_config"), "the table's size is the ABI's");
    dpc_audit_config c;
    memset(&c, 0x5a, sizeof c);
    dpc_audit_config_init(&c);
    CHECK(c.canary == DPC_AUDIT_GRADIENT && c.canaries == 1000 && c.confidence == 0.95 &&
              c.k_plus == 0 && c.k_minus == 0 && c.activity_examples == 256 &&
              c.calibration.fn == NULL && c.calibration.ctx == NULL, "defaults");
    for (int k = 0; k < 3; k++)
        CHECK(!strcmp(dpc_field_enum_name(dpc_field_find(t, "canary", NULL), k),
                      dpc_audit_canary_name((dpc_audit_canary)k)), "canary name %d", k);
    struct { const char *field; double v; } bad[] = {
        {"canary", 3}, {"canary", -1}, {"canaries", 0}, {"canaries", 16777217},
        {"confidence", 0}, {"confidence", 1}, {"confidence", NAN},
        {"k_plus", 16777217}, {"k_minus", 16777217}, /* a guess size: [1, 2^24], 0 unset */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dpc_audit_config b;
        dpc_audit_config_init(&b);
        CHECK_OK(dpc_field_set(dpc_field_find(t, bad[i].field, NULL), &b, bad[i].v, &err), &err);
        CHECK(dpc_audit_config_check(&b, &err) == DPC_E_INVALID &&
                  !strcmp(err.field, bad[i].field), "%s = %g refused: '%s'", bad[i].field,
              bad[i].v, err.msg);
    }
    const dpc_field *kp = dpc_field_find(t, "k_plus", NULL);
    CHECK(kp && kp->lo == 1 && kp->hi == 16777216 && (kp->flags & DPC_FIELD_UNSET_ZERO),
          "k_plus's row: [1, 2^24], 0 = the bound's grid (the CLI's --guesses reads it)");
    c.canaries = 16777216;
    c.confidence = 0.999;
    CHECK_OK(dpc_audit_config_check(&c, &err), &err);
    c.k_plus = 10;
    c.k_minus = c.canaries;
    CHECK(dpc_audit_config_check(&c, &err) == DPC_E_INVALID && !strcmp(err.field, "k_plus"),
          "k_plus + k_minus beyond the canaries");
}

/* The curve's guess counts are the geometric grid of [1, m/2] (each once, increasing) and each
 * bound is the single-candidate dpc_audit_bound at the result's per-test level: an independent
 * path through the guesses and the p-values. Perfectly separated scores: the bound grows with k. */
static void test_bound_curve(void)
{
    enum { M = 200, CAP = 24 };
    double scores[M];
    unsigned char in[M];
    for (size_t i = 0; i < M; i++) in[i] = i % 2, scores[i] = in[i] ? 1.0 + (double)i : -(double)i;
    dpc_audit_result r;
    memset(&r, 0, sizeof r);
    r.canaries = M, r.scores = scores, r.in = in;
    r.ledger.delta = 1e-5, r.bound.significance = 0.05 / 12;
    double k[CAP], top[CAP], both[CAP];
    size_t n = dpc_audit_bound_curve(&r, CAP, k, top, both);
    CHECK(n >= 10 && n <= CAP && k[0] == 1 && k[n - 1] == M / 2, "grid of [1, m/2]: %zu counts, "
          "last %g", n, n ? k[n - 1] : -1.0);
    dpc_error err = {0};
    for (size_t j = 0; j < n; j++) {
        CHECK(j == 0 || k[j] > k[j - 1], "increasing at %zu", j);
        dpc_audit_bound_result b1, b2;
        CHECK_OK(dpc_audit_bound(scores, in, M, (size_t)k[j], 0, r.ledger.delta,
                                 1 - r.bound.significance, &b1, &err), &err);
        CHECK_OK(dpc_audit_bound(scores, in, M, (size_t)k[j], (size_t)k[j], r.ledger.delta,
                                 1 - r.bound.significance, &b2, &err), &err);
        CHECK(top[j] == b1.epsilon && both[j] == b2.epsilon, "k = %g: %g %g vs %g %g", k[j],
              top[j], both[j], b1.epsilon, b2.epsilon);
    }
    CHECK(n > 1 && both[n - 1] > both[0], "more correct guesses, a larger bound");
    CHECK(dpc_audit_bound_curve(NULL, CAP, k, top, both) == 0, "no result: no points");
}

int main(void)
{
    test_bound_curve();
    test_field_table();
    test_oracles();
    test_rr_level();
    test_guesses();
    test_gaussian();
    test_scores();
    test_score_distribution();
    test_unroll();
    test_refusals();
    return TEST_SUMMARY();
}
