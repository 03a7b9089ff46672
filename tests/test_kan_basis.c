/* test_kan_basis.c — the scalar pieces of every KAN: uniform cubic B-splines (closed form vs
 * the Cox-de Boor recursion, partition of unity, derivatives by finite differences, support,
 * the numeric constants against their closed forms), the activation sigma and its constants,
 * and the logistic-loss properties the proofs use (note 004 §1.1, oracle 4). */
#include "dpcorr/papers/kan.h"
#include "harness.h"
#include "kan_oracles.h"

#include <float.h>

static void test_spline_eval(void)
{
    dpc_error err = {0};
    const struct { size_t G; double lo, hi; } cases[] = {{1, -1, 1}, {5, -1, 1}, {8, 0, 1},
                                                        {13, -2.5, 3.5}, {64, -1, 1}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        dpc_bspline s;
        CHECK_OK(dpc_bspline_init(&s, cases[c].G, cases[c].lo, cases[c].hi, &err), &err);
        CHECK(s.p == cases[c].G + 3, "p = G + 3");
        double h = s.h, worst = 0, worst_pu = 0, worst_d1 = 0, worst_d2 = 0;
        size_t maxact = 0;
        double *v = calloc(s.p, sizeof *v), *d1 = calloc(s.p, sizeof *d1);
        double *d2 = calloc(s.p, sizeof *d2), *vp = calloc(s.p, sizeof *vp);
        double *vm = calloc(s.p, sizeof *vm), *d1p = calloc(s.p, sizeof *d1p);
        double *d1m = calloc(s.p, sizeof *d1m);
        /* x over the extended range [lo - 3h, hi + 3h] and a bit beyond, off the knots */
        size_t N = 997;
        for (size_t i = 0; i <= N; i++) {
            double x = s.lo - 3.5 * h + (s.hi - s.lo + 7 * h) * ((double)i + 0.31) / (double)N;
            dpc_bspline_eval_all(&s, x, v, d1, d2);
            size_t act = 0;
            double sum = 0;
            for (size_t k = 0; k < s.p; k++) {
                double ref = dpc_bspline_eval_naive(&s, k, x);
                if (fabs(ref - v[k]) > worst) worst = fabs(ref - v[k]);
                act += v[k] != 0.0;
                sum += v[k];
            }
            if (act > maxact) maxact = act;
            if (x >= s.lo && x <= s.hi && fabs(sum - 1) > worst_pu) worst_pu = fabs(sum - 1);
            /* derivatives by central differences (C^2 splines; skip steps across a knot for b'') */
            double e = 1e-6 * h;
            double t = (x - s.lo) / h;
            if (fabs(t - floor(t + 0.5)) < 1e-3) continue;
            dpc_bspline_eval_all(&s, x + e, vp, d1p, NULL);
            dpc_bspline_eval_all(&s, x - e, vm, d1m, NULL);
            for (size_t k = 0; k < s.p; k++) {
                double fd1 = (vp[k] - vm[k]) / (2 * e), fd2 = (d1p[k] - d1m[k]) / (2 * e);
                double r1 = fabs(fd1 - d1[k]) * h, r2 = fabs(fd2 - d2[k]) * h * h;
                if (r1 > worst_d1) worst_d1 = r1;
                if (r2 > worst_d2) worst_d2 = r2;
            }
        }
        CHECK(worst < 1e-13, "G=%zu: closed form vs Cox-de Boor: %g", cases[c].G, worst);
        CHECK(worst_pu < 1e-14, "G=%zu: partition of unity: %g", cases[c].G, worst_pu);
        CHECK(maxact <= 4, "G=%zu: %zu active bases", cases[c].G, maxact);
        CHECK(worst_d1 < 1e-7, "G=%zu: b' vs FD: %g", cases[c].G, worst_d1);
        CHECK(worst_d2 < 1e-6, "G=%zu: b'' vs FD: %g", cases[c].G, worst_d2);
        /* outside the extended knots nothing is active; NaN gives nothing */
        size_t k0;
        double a[4];
        CHECK(dpc_bspline_eval(&s, s.lo - 3.0001 * h, &k0, a, NULL, NULL) == 0, "left");
        CHECK(dpc_bspline_eval(&s, s.hi + 3.0 * h, &k0, a, NULL, NULL) == 0, "right");
        CHECK(dpc_bspline_eval(&s, NAN, &k0, a, NULL, NULL) == 0, "NaN");
        /* inside [lo, hi] exactly 4 consecutive bases are reported (last one may be 0 at a knot) */
        CHECK(dpc_bspline_eval(&s, 0.5 * (s.lo + s.hi) + 0.1 * h, &k0, a, NULL, NULL) == 4,
              "4 active inside");
        dpc_kan_spline_consts kc;
        dpc_kan_spline_constants(&s, &kc);
        CHECK_NEAR_REL(kc.B, 2.0 / 3.0, 1e-12, "B_b");
        CHECK_NEAR_REL(kc.B1, 2.0 / (3.0 * h), 1e-9, "B'_b");
        CHECK_NEAR_REL(kc.B2, 2.0 / (h * h), 1e-9, "B''_b");
        CHECK_NEAR_REL(kc.sumsq, 0.5, 1e-12, "max sum b_k^2");
        free(v), free(d1), free(d2), free(vp), free(vm), free(d1p), free(d1m);
    }
    /* ||h(x)||^2 <= d for x in the unit ball (note 004 §1.3: sum_k b_k^2 <= 1/2) */
    dpc_bspline s;
    CHECK_OK(dpc_bspline_init(&s, 5, -1, 1, &err), &err);
    double worst = 0;
    for (int i = 0; i <= 4000; i++) {
        double x = -1 + 2.0 * i / 4000.0, b[4];
        size_t k0, n = dpc_bspline_eval(&s, x, &k0, b, NULL, NULL);
        double sq = 0;
        for (size_t q = 0; q < n; q++) sq += b[q] * b[q];
        if (sq > worst) worst = sq;
    }
    CHECK(worst <= 0.5 + 1e-15, "sum b^2 <= 1/2: %g", worst);
    /* errors name the parameter */
    dpc_error e = {0};
    CHECK(dpc_bspline_init(&s, 0, -1, 1, &e) == DPC_E_INVALID && strstr(e.msg, "grid"), "grid 0");
    CHECK(dpc_bspline_init(&s, 5, 1, 1, &e) == DPC_E_INVALID && strstr(e.msg, "range"), "lo = hi");
    CHECK(dpc_bspline_init(&s, 5, NAN, 1, &e) == DPC_E_INVALID, "NaN lo");
    CHECK(dpc_bspline_init(&s, DPC_BSPLINE_MAX_GRID + 1, -1, 1, &e) == DPC_E_INVALID, "huge grid");
}

static void test_activation(void)
{
    for (int a = 0; a < 2; a++) {
        dpc_kan_act act = a ? DPC_KAN_TANH : DPC_KAN_SIGMOID;
        double worst1 = 0, worst2 = 0, worstv = 0;
        for (int i = 0; i <= 800; i++) {
            double x = -20 + 40.0 * i / 800.0 + 0.013, s, s1, s2, sp, sm, s1p, s1m;
            dpc_kan_act_eval(act, x, &s, &s1, &s2);
            double ref = a ? tanh(x) : 1 / (1 + exp(-x));
            if (fabs(ref - s) > worstv) worstv = fabs(ref - s);
            double e = 1e-5;
            dpc_kan_act_eval(act, x + e, &sp, &s1p, NULL);
            dpc_kan_act_eval(act, x - e, &sm, &s1m, NULL);
            if (fabs((sp - sm) / (2 * e) - s1) > worst1) worst1 = fabs((sp - sm) / (2 * e) - s1);
            if (fabs((s1p - s1m) / (2 * e) - s2) > worst2) worst2 = fabs((s1p - s1m) / (2 * e) - s2);
        }
        CHECK(worstv < 1e-15, "%s value %g", dpc_kan_act_name(act), worstv);
        CHECK(worst1 < 1e-9, "%s sigma' vs FD %g", dpc_kan_act_name(act), worst1);
        CHECK(worst2 < 1e-9, "%s sigma'' vs FD %g", dpc_kan_act_name(act), worst2);
        double B, B1, B2;
        dpc_kan_act_constants(act, &B, &B1, &B2);
        CHECK_NEAR_REL(B, 1.0, 1e-15, "%s B_s", dpc_kan_act_name(act));
        CHECK_NEAR_REL(B1, a ? 1.0 : 0.25, 1e-12, "%s B'_s", dpc_kan_act_name(act));
        CHECK_NEAR_REL(B2, a ? KAN_TANH_B2 : KAN_SIGMOID_B2, 1e-10, "%s B''_s", dpc_kan_act_name(act));
    }
    /* no overflow far out */
    double s, s1, s2;
    dpc_kan_act_eval(DPC_KAN_TANH, 800, &s, &s1, &s2);
    CHECK(s == 1 && s1 == 0 && s2 == 0, "tanh at 800");
    dpc_kan_act_eval(DPC_KAN_SIGMOID, -800, &s, &s1, &s2);
    CHECK(s == 0 && s1 == 0 && isfinite(s2), "sigmoid at -800");
    dpc_kan_act a;
    dpc_error e = {0};
    CHECK(dpc_kan_act_parse("tanh", &a, &e) == DPC_OK && a == DPC_KAN_TANH, "parse tanh");
    CHECK(dpc_kan_act_parse("relu", &a, &e) == DPC_E_INVALID && strstr(e.msg, "relu"), "parse relu");
}

/* oracle 4: |l'| <= l, |l'| <= 1, 0 <= l'' <= 1/4, l <= log 2 + |z|, l <= e^-z, convexity */
static void test_logistic(void)
{
    int bad = 0;
    double worst1 = 0, worst2 = 0, prev1 = -INFINITY;
    for (int i = 0; i <= 20000; i++) {
        double z = -60 + 120.0 * i / 20000.0, l1, l2;
        double l = dpc_kan_logistic(z, &l1, &l2);
        if (!(fabs(l1) <= l * (1 + 1e-15))) bad |= 1;
        if (!(fabs(l1) <= 1)) bad |= 2;
        if (!(l2 >= 0 && l2 <= 0.25)) bad |= 4;
        if (!(l <= log(2) + fabs(z) + 1e-15)) bad |= 8;
        if (!(l <= exp(-z) * (1 + 1e-15))) bad |= 16;
        if (!(l1 >= prev1)) bad |= 32; /* l' non-decreasing: convex */
        prev1 = l1;
        if (fabs(z) < 30) {
            double e = 1e-5, lp, lm, l1p, l1m;
            lp = dpc_kan_logistic(z + e, &l1p, NULL);
            lm = dpc_kan_logistic(z - e, &l1m, NULL);
            if (fabs((lp - lm) / (2 * e) - l1) > worst1) worst1 = fabs((lp - lm) / (2 * e) - l1);
            if (fabs((l1p - l1m) / (2 * e) - l2) > worst2) worst2 = fabs((l1p - l1m) / (2 * e) - l2);
        }
    }
    CHECK(bad == 0, "logistic properties violated (mask %d)", bad);
    CHECK(worst1 < 1e-9 && worst2 < 1e-9, "logistic derivatives vs FD: %g %g", worst1, worst2);
    double l1, l2;
    CHECK_NEAR_REL(dpc_kan_logistic(0, &l1, &l2), log(2), 1e-15, "l(0)");
    CHECK(l1 == -0.5 && l2 == 0.25, "l'(0), l''(0)");
    CHECK_NEAR_REL(dpc_kan_logistic(-1000, &l1, NULL), 1000, 1e-15, "l(-1000) finite");
    CHECK(l1 == -1, "l'(-1000)");
    CHECK(dpc_kan_logistic(1000, &l1, NULL) == 0 && l1 == 0, "l(1000)"); /* e^-1000 underflows */
}

int main(void)
{
    test_spline_eval();
    test_activation();
    test_logistic();
    return TEST_SUMMARY();
}
