/* test_strategy_banded.c — banded Toeplitz optimization: the adjoint gradient against central
 * differences, the reported loss against the mechanism API (Toeplitz and dense matrices), <= BSR
 * with the same bands, local optimality (random feasible perturbations never improve). */
#include "dpcorr.h"
#include "harness.h"
#include "strategy/strategy_internal.h"

#include <math.h>
#include <stdint.h>

static uint64_t rs = 0x9E3779B97F4A7C15ull;
static double urand(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (double)(rs >> 11) * 0x1.0p-53;
}

static dpc_strategy_problem problem(size_t n, size_t k, size_t b, dpc_objective obj, double mom)
{
    dpc_strategy_problem pb;
    dpc_strategy_problem_init(&pb, n);
    pb.participations = k;
    pb.min_sep = b;
    pb.objective = obj;
    pb.workload.momentum = mom;
    return pb;
}

static dpc_strategy_loss toeplitz_loss(const double *c, size_t L, const dpc_strategy_problem *pb,
                                       int dense)
{
    dpc_mech_params p;
    dpc_mech_params_init(&p);
    p.kind = DPC_MECH_TOEPLITZ;
    p.steps = pb->steps;
    p.ncoeffs = L;
    p.coeffs = c;
    p.coeffs_of_strategy = 1;
    dpc_error err = {0};
    dpc_mech *m = NULL;
    dpc_strategy_loss l = {NAN, NAN, NAN, 0};
    CHECK_OK(dpc_mech_new(&m, &p, &err), &err);
    if (!m) return l;
    if (dense) {
        size_t n = pb->steps;
        double *C = malloc(n * n * sizeof *C);
        CHECK_OK(dpc_mech_dense_strategy(m, C, &err), &err);
        dpc_mech_free(m);
        m = NULL;
        dpc_mech_params q;
        dpc_mech_params_init(&q);
        q.kind = DPC_MECH_DENSE;
        q.steps = n;
        q.dense = C;
        q.coeffs_of_strategy = 1;
        CHECK_OK(dpc_mech_new(&m, &q, &err), &err);
        free(C);
        if (!m) return l;
    }
    CHECK_OK(dpc_strategy_loss_of(m, pb, &l, &err), &err);
    dpc_mech_free(m);
    return l;
}

static void test_gradient(void)
{
    const double moms[2] = {0.0, 0.8};
    for (int mi = 0; mi < 2; mi++)
        for (int obj = 0; obj < 2; obj++)
            for (int kk = 0; kk < 2; kk++) {
                dpc_strategy_problem pb = problem(300, kk ? 3 : 1, 100, (dpc_objective)obj, moms[mi]);
                size_t L = 12;
                double c[12], g[12];
                c[0] = 1.0;
                for (size_t j = 1; j < L; j++) c[j] = c[j - 1] * (0.5 + 0.45 * urand());
                double f0 = dpc__banded_log_loss_grad(&pb, c, L, g);
                CHECK(isfinite(f0), "finite loss");
                for (size_t j = 1; j < L; j++) {
                    double save = c[j], h = 1e-6, gd[12], fp, fm;
                    c[j] = save + h;
                    fp = dpc__banded_log_loss_grad(&pb, c, L, gd);
                    c[j] = save - h;
                    fm = dpc__banded_log_loss_grad(&pb, c, L, gd);
                    c[j] = save;
                    CHECK_NEAR_ABS(g[j], (fp - fm) / (2 * h), 1e-7 + 1e-6 * fabs(g[j]),
                                   "d/dc_%zu mom=%g obj=%d k=%zu", j, moms[mi], obj,
                                   pb.participations);
                }
            }
}

static void test_optimize(void)
{
    struct cfg {
        size_t n, bands, k, b;
        int obj;
        double mom;
    } cfgs[] = {{256, 16, 1, 1, 1, 0}, {256, 16, 1, 1, 0, 0},   {256, 16, 4, 64, 1, 0},
                {256, 64, 4, 64, 0, 0}, {1000, 32, 1, 1, 0, 0.9}, {1000, 32, 4, 250, 1, 0.9},
                {300, 300, 1, 1, 1, 0}, {200, 1, 2, 100, 0, 0}};
    for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) {
        struct cfg *g = &cfgs[i];
        dpc_strategy_problem pb = problem(g->n, g->k, g->b, (dpc_objective)g->obj, g->mom);
        dpc_strategy_options o;
        dpc_strategy_options_init(&o);
        o.bands = g->bands;
        dpc_strategy *s = NULL;
        dpc_error err = {0};
        CHECK_OK(dpc_strategy_optimize_banded(&s, &pb, &o, &err), &err);
        if (!s) continue;
        CHECK(s->kind == DPC_MECH_TOEPLITZ && s->of_strategy && s->ncoeffs == g->bands, "shape");
        CHECK(s->coeffs[0] == 1.0, "c_0 = 1");
        dpc_strategy_loss ml = toeplitz_loss(s->coeffs, s->ncoeffs, &pb, 0);
        CHECK_NEAR_REL(s->achieved.loss, ml.loss, 1e-10, "cfg %zu: reported vs mechanism", i);
        CHECK(ml.exact, "cfg %zu: exact sensitivity", i);
        if (g->n <= 512) {
            dpc_strategy_loss dl = toeplitz_loss(s->coeffs, s->ncoeffs, &pb, 1);
            CHECK_NEAR_REL(s->achieved.loss, dl.loss, 1e-9, "cfg %zu: dense recomputation", i);
        }
        if (g->k > 1)
            for (size_t j = 1; j < s->ncoeffs; j++)
                CHECK(s->coeffs[j] > 0 && s->coeffs[j] <= s->coeffs[j - 1], "monotone c_%zu", j);
        /* <= BSR with the same bands */
        dpc_mech_params p;
        dpc_mech_params_init(&p);
        p.kind = DPC_MECH_BSR;
        p.steps = g->n;
        p.bands = g->bands;
        p.momentum = g->mom;
        dpc_mech *m = NULL;
        dpc_strategy_loss bl;
        CHECK_OK(dpc_mech_new(&m, &p, &err), &err);
        CHECK_OK(dpc_strategy_loss_of(m, &pb, &bl, &err), &err);
        dpc_mech_free(m);
        CHECK(s->achieved.loss <= bl.loss * (1 + 1e-12), "cfg %zu: banded %.10g <= BSR %.10g", i,
              s->achieved.loss, bl.loss);
        if (g->bands == 1) CHECK_NEAR_REL(s->achieved.loss, bl.loss, 1e-12, "one band = DP-SGD");
        /* local optimality: small random feasible perturbations do not improve the loss */
        int worse = 0;
        double *c = malloc(s->ncoeffs * sizeof *c);
        for (int t = 0; t < 20; t++) {
            c[0] = 1.0;
            for (size_t j = 1; j < s->ncoeffs; j++) {
                c[j] = s->coeffs[j] * (1.0 + 1e-4 * (2 * urand() - 1));
                if (g->k > 1 && c[j] > c[j - 1]) c[j] = c[j - 1];
            }
            dpc_strategy_loss pl = toeplitz_loss(c, s->ncoeffs, &pb, 0);
            if (pl.loss < s->achieved.loss * (1 - 1e-9)) worse++;
        }
        free(c);
        CHECK(worse == 0, "cfg %zu: %d perturbations improved the optimum", i, worse);
        dpc_strategy_free(s);
    }
}

static void test_errors(void)
{
    dpc_strategy_problem pb = problem(100, 1, 1, DPC_OBJECTIVE_MAX, 0);
    dpc_strategy_options o;
    dpc_strategy_options_init(&o);
    dpc_strategy *s = NULL;
    dpc_error err = {0};
    CHECK(dpc_strategy_optimize_banded(&s, &pb, &o, &err) == DPC_E_INVALID && !s, "bands 0");
    CHECK(strstr(err.msg, "bands") != NULL, "names bands: %s", err.msg);
    CHECK(dpc_strategy_optimize_banded(&s, &pb, NULL, &err) == DPC_E_INVALID, "NULL options");
    o.bands = 500; /* more bands than steps: clamped to n */
    CHECK_OK(dpc_strategy_optimize_banded(&s, &pb, &o, &err), &err);
    if (s) CHECK(s->ncoeffs == 100, "clamped to n (%zu)", s->ncoeffs);
    dpc_strategy_free(s);
}

int main(void)
{
    test_gradient();
    test_optimize();
    test_errors();
    return TEST_SUMMARY();
}
