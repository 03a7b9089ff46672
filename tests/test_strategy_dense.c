/* test_strategy_dense.c — dense optimal factorization ("ME"): the analytic optimum at n = 2, the
 * reported loss against the mechanism API on the dense C, the structure of X = C^T C (unit
 * diagonal, zero beyond the band for k > 1, computed here from C), and at n = 256 (single
 * participation and k = 4) a loss <= every other strategy's: DP-SGD, optimal CC, the best
 * nu-DP-FTRL, BSR, BISR, and the optimized BLT and banded Toeplitz. */
#include "dpcorr.h"
#include "harness.h"
#include "strategy/strategy_internal.h"

#include <math.h>

static dpc_strategy_loss dense_loss(const dpc_strategy *s, const dpc_strategy_problem *pb)
{
    dpc_mech_params p;
    dpc_strategy_mech_params(s, &p);
    dpc_mech *m = NULL;
    dpc_error err = {0};
    dpc_strategy_loss l = {NAN, NAN, NAN, 0};
    CHECK_OK(dpc_mech_new(&m, &p, &err), &err);
    if (m) CHECK_OK(dpc_strategy_loss_of(m, pb, &l, &err), &err);
    dpc_mech_free(m);
    return l;
}

/* n = 2, prefix sums, mean error: X = [[1, x], [x, 1]], tr(A^T A X^-1) = (3 - 2x) / (1 - x^2),
 * minimised at x = (3 - sqrt 5)/2 with value (3 + sqrt 5)/2; RMSE^2 = value / 2. */
static void test_n2(void)
{
    dpc_strategy_problem pb;
    dpc_strategy_problem_init(&pb, 2);
    pb.objective = DPC_OBJECTIVE_MEAN;
    dpc_strategy *s = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_strategy_optimize_dense(&s, &pb, NULL, &err), &err);
    if (!s) return;
    CHECK_NEAR_REL(s->achieved.loss, (3.0 + sqrt(5.0)) / 4.0, 1e-9, "n=2 optimum");
    const double *C = s->dense; /* X_01 = C_10 C_11 */
    CHECK_NEAR_REL(C[2] * C[3], (3.0 - sqrt(5.0)) / 2.0, 1e-5, "n=2 optimal X_01");
    CHECK(C[1] == 0.0, "lower-triangular");
    dpc_strategy_free(s);
}

static void check_structure(const dpc_strategy *s, size_t bw)
{
    size_t n = s->problem.steps;
    const double *C = s->dense;
    double maxdiag = 0.0, maxoff = 0.0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j <= i; j++) {
            double x = 0.0; /* X_ij = sum_l C_li C_lj */
            for (size_t l = i; l < n; l++) x += C[l * n + i] * C[l * n + j];
            if (i == j && fabs(x - 1.0) > maxdiag) maxdiag = fabs(x - 1.0);
            if (i - j >= bw && fabs(x) > maxoff) maxoff = fabs(x);
        }
    CHECK(maxdiag < 1e-12, "unit diagonal of C^T C (deviation %g)", maxdiag);
    CHECK(maxoff == 0.0, "C^T C zero beyond the band (max %g)", maxoff);
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (C[i * n + j] != 0.0) {
                CHECK(0, "C not lower-triangular at (%zu, %zu)", i, j);
                return;
            }
}

static void test_vs_all(size_t n, size_t k, dpc_objective obj)
{
    size_t b = k > 1 ? n / k : 1;
    dpc_strategy_problem pb;
    dpc_strategy_problem_init(&pb, n);
    pb.participations = k;
    pb.min_sep = b;
    pb.objective = obj;
    dpc_strategy *me = NULL, *blt = NULL, *band = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_strategy_optimize_dense(&me, &pb, NULL, &err), &err);
    if (!me) return;
    check_structure(me, k > 1 ? b : n);
    dpc_strategy_loss ml = dense_loss(me, &pb);
    CHECK_NEAR_REL(me->achieved.loss, ml.loss, 1e-9, "n=%zu k=%zu: reported vs mechanism", n, k);
    double L = me->achieved.loss;
    printf("ME n=%zu k=%zu %s: %.8g\n", n, k, dpc_objective_name(obj), L);
    dpc_strategy_baseline bl[8];
    size_t nb = 0;
    CHECK_OK(dpc_strategy_baselines(&pb, 0, bl, 8, &nb, &err), &err);
    CHECK(nb == 5, "five baselines");
    for (size_t i = 0; i < nb; i++) {
        printf("   %-32s %.8g\n", bl[i].name, bl[i].loss.loss);
        CHECK(bl[i].available && L <= bl[i].loss.loss, "ME %.10g <= %s %.10g", L, bl[i].name,
              bl[i].loss.loss);
    }
    dpc_strategy_options o;
    dpc_strategy_options_init(&o);
    CHECK_OK(dpc_strategy_optimize_blt(&blt, &pb, &o, &err), &err);
    o.bands = k > 1 ? b : 32;
    CHECK_OK(dpc_strategy_optimize_banded(&band, &pb, &o, &err), &err);
    if (blt) {
        printf("   %-32s %.8g\n", "BLT (optimized)", blt->achieved.loss);
        CHECK(L <= blt->achieved.loss, "ME %.10g <= BLT %.10g", L, blt->achieved.loss);
    }
    if (band) {
        printf("   %-32s %.8g\n", "banded Toeplitz (optimized)", band->achieved.loss);
        CHECK(L <= band->achieved.loss, "ME %.10g <= banded %.10g", L, band->achieved.loss);
    }
    dpc_strategy_free(me);
    dpc_strategy_free(blt);
    dpc_strategy_free(band);
}

/* The objective's gradient against central differences (momentum and weight decay, banded and
 * full X, mean and the p-norm surrogate). */
static void test_gradient(void)
{
    for (int cfg = 0; cfg < 4; cfg++) {
        dpc_strategy_problem pb;
        dpc_strategy_problem_init(&pb, 12);
        pb.objective = cfg & 1 ? DPC_OBJECTIVE_MEAN : DPC_OBJECTIVE_MAX;
        pb.workload.momentum = cfg & 2 ? 0.9 : 0.0;
        pb.workload.decay = cfg & 2 ? 0.95 : 1.0;
        size_t bw = cfg & 2 ? 4 : 12, nv = 0;
        for (size_t i = 0; i < 12; i++) nv += i < bw - 1 ? i : bw - 1;
        double x[66], g[66], gd[66];
        for (size_t q = 0; q < nv; q++) x[q] = 0.3 / (1.0 + (double)(q % 5));
        double f0 = dpc__dense_log_obj_grad(&pb, bw, 16.0, x, g);
        CHECK(isfinite(f0), "cfg %d: finite objective", cfg);
        double maxerr = 0.0;
        for (size_t q = 0; q < nv; q++) {
            double save = x[q], h = 1e-4, f[4], off[4] = {-2, -1, 1, 2};
            for (int t = 0; t < 4; t++) { /* 4-point central difference */
                x[q] = save + off[t] * h;
                f[t] = dpc__dense_log_obj_grad(&pb, bw, 16.0, x, gd);
            }
            x[q] = save;
            double fd = (8.0 * (f[2] - f[1]) - (f[3] - f[0])) / (12.0 * h);
            double e = fabs(g[q] - fd) / (1e-3 + fabs(g[q]));
            if (e > maxerr) maxerr = e;
        }
        CHECK(maxerr < 1e-5, "cfg %d: gradient vs central differences, max rel error %g", cfg, maxerr);
    }
}

/* Momentum / weight-decay workloads: reported loss equals the mechanism's, beats BSR. */
static void test_momentum(void)
{
    for (size_t k = 1; k <= 2; k++) {
        dpc_strategy_problem pb;
        dpc_strategy_problem_init(&pb, 64);
        pb.objective = DPC_OBJECTIVE_MEAN;
        pb.participations = k;
        pb.min_sep = 32;
        pb.workload.momentum = 0.9;
        pb.workload.decay = 0.99;
        dpc_strategy *s = NULL;
        dpc_error err = {0};
        CHECK_OK(dpc_strategy_optimize_dense(&s, &pb, NULL, &err), &err);
        if (!s) continue;
        dpc_strategy_loss ml = dense_loss(s, &pb);
        CHECK_NEAR_REL(s->achieved.loss, ml.loss, 1e-9, "momentum k=%zu: reported vs mechanism", k);
        dpc_strategy_baseline bl[8];
        size_t nb = 0;
        CHECK_OK(dpc_strategy_baselines(&pb, k > 1 ? 32 : 0, bl, 8, &nb, &err), &err);
        for (size_t i = 0; i < nb; i++)
            CHECK(s->achieved.loss <= bl[i].loss.loss, "momentum k=%zu: ME %.10g <= %s %.10g", k,
                  s->achieved.loss, bl[i].name, bl[i].loss.loss);
        dpc_strategy_free(s);
    }
}

static void test_errors(void)
{
    dpc_strategy_problem pb;
    dpc_strategy_problem_init(&pb, 3000);
    dpc_strategy *s = NULL;
    dpc_error err = {0};
    CHECK(dpc_strategy_optimize_dense(&s, &pb, NULL, &err) == DPC_E_RANGE && !s, "n > 2048");
    CHECK(strstr(err.msg, "steps") != NULL, "names steps: %s", err.msg);
    pb.steps = 100;
    pb.participations = 2;
    pb.min_sep = 50;
    dpc_strategy_options o;
    dpc_strategy_options_init(&o);
    o.bands = 60;
    CHECK(dpc_strategy_optimize_dense(&s, &pb, &o, &err) == DPC_E_INVALID, "band > min-sep");
    CHECK(strstr(err.msg, "bands") != NULL, "names bands: %s", err.msg);
}

int main(void)
{
    test_n2();
    test_gradient();
    test_momentum();
    /* acceptance at n = 256; smaller under sanitizers (tests_scale) */
    size_t n = tests_scale() < 1.0 ? 64 : 256;
    test_vs_all(n, 1, DPC_OBJECTIVE_MEAN);
    test_vs_all(n, 4, DPC_OBJECTIVE_MEAN);
    test_vs_all(n, 1, DPC_OBJECTIVE_MAX);
    test_vs_all(n, 4, DPC_OBJECTIVE_MAX);
    test_errors();
    return TEST_SUMMARY();
}
