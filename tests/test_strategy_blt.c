/* test_strategy_blt.c — BLT closed forms against step-by-step recursions and the mechanism API
 * (Toeplitz and dense matrices), the exact gradient against finite differences, the optimizer
 * against jax_privacy's published golden parameters and the acceptance bounds:
 * sqrt(max loss) / (1 + ln(n)/pi) <= 1.05 for n = 1e3 .. 1e6 with <= 5 buffers, <= 1.02 x the
 * optimal Toeplitz square root (nu = 0), <= the best nu-DP-FTRL (mean error, multi participation). */
#include "dpcorr.h"
#include "harness.h"
#include "strategy/blt_internal.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static uint64_t rs = 88172645463325252ull;
static double urand(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (double)(rs >> 11) * 0x1.0p-53;
}

static const dpc_workload workloads[4] = {{0.0, 1.0}, {0.9, 1.0}, {0.5, 0.99}, {0.0, 0.95}};

/* The doubling Gramian equals the step-by-step recursion (naive reference). */
static void test_gram_parity(void)
{
    size_t ns[6] = {1, 2, 3, 7, 64, 1000};
    for (int w = 0; w < 4; w++)
        for (size_t k = 1; k <= 4; k++)
            for (int in = 0; in < 6; in++) {
                double th[4], om[4];
                for (size_t i = 0; i < k; i++) {
                    th[i] = 0.3 + 0.69 * urand();
                    om[i] = 0.4 * urand() - (i == 2 ? 0.3 : 0.0); /* one negative scale */
                }
                size_t n = ns[in], d = dpc__blt_state_dim(k, workloads[w].momentum);
                double F[36], g[6], h[6], qg, qh, a, b;
                dpc__blt_system(F, g, h, th, om, k, &workloads[w]);
                CHECK(dpc__blt_gram_quad(F, g, h, d, n - 1, 1, &qg, &qh, NULL, NULL, 0, 0),
                      "gram alloc");
                CHECK(dpc__blt_error_sums_naive(th, om, k, &workloads[w], n, &a, &b), "naive");
                CHECK_NEAR_REL(1.0 + qg, a, 1e-11, "sum y^2 w=%d k=%zu n=%zu", w, k, n);
                CHECK_NEAR_REL((double)n + qh, b, 1e-11, "sum (n-t) y^2 w=%d k=%zu n=%zu", w, k, n);
            }
}

/* Reverse-mode gradient of h^T G h and h^T H h with respect to theta and omega, against central
 * differences of the naive recursion. */
static void test_gram_gradient(void)
{
    for (int w = 0; w < 4; w++)
        for (int mean = 0; mean <= 1; mean++) {
            size_t k = 3, n = 500, d = dpc__blt_state_dim(k, workloads[w].momentum);
            double th[3] = {0.97, 0.8, 0.4}, om[3] = {0.05, 0.2, 0.3};
            double F[25], g[5], h[5], Fb[25], hb[5], qg, qh;
            dpc__blt_system(F, g, h, th, om, k, &workloads[w]);
            dpc__blt_gram_quad(F, g, h, d, n - 1, mean, &qg, &qh, Fb, hb, mean ? 0 : 1, mean ? 1 : 0);
            for (size_t i = 0; i < k; i++) {
                double col = 0.0;
                for (size_t r = 0; r < d; r++) col += Fb[r * d + i];
                double gth = Fb[i * d + i], gom = -col - hb[i];
                for (int which = 0; which < 2; which++) {
                    double *p = which ? &om[i] : &th[i], save = *p, hstep = 1e-6, f[2];
                    for (int s = 0; s < 2; s++) {
                        *p = save + (s ? hstep : -hstep);
                        double a, b;
                        dpc__blt_error_sums_naive(th, om, k, &workloads[w], n, &a, &b);
                        f[s] = mean ? b : a;
                    }
                    *p = save;
                    double fd = (f[1] - f[0]) / (2 * hstep);
                    CHECK_NEAR_REL(which ? gom : gth, fd, 1e-6, "gradient %s[%zu] w=%d mean=%d",
                                   which ? "omega" : "theta", i, w, mean);
                }
            }
        }
}

static dpc_strategy_loss mech_loss(const double *th, const double *om, size_t k,
                                   const dpc_strategy_problem *pb, int dense)
{
    dpc_error err = {0};
    dpc_mech_params p;
    dpc_mech_params_init(&p);
    p.kind = DPC_MECH_BLT;
    p.steps = pb->steps;
    p.nbuf = k;
    p.theta = th;
    p.omega = om;
    dpc_mech *m = NULL;
    dpc_strategy_loss l = {NAN, NAN, NAN, 0};
    CHECK_OK(dpc_mech_new(&m, &p, &err), &err);
    if (!m) return l;
    if (dense) { /* rebuild as an explicit dense lower-triangular C */
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

/* Closed-form loss (sensitivity incl. multi participation, max and mean error, workloads)
 * against the mechanism API: Toeplitz O(n) path, and dense matrices for n <= 512. */
static void test_closed_form_vs_mech(void)
{
    double th[3] = {0.999, 0.95, 0.6}, om[3] = {0.02, 0.1, 0.3};
    size_t ns[5] = {1, 2, 10, 300, 5000};
    for (int in = 0; in < 5; in++)
        for (int w = 0; w < 4; w++)
            for (int obj = 0; obj < 2; obj++)
                for (int kk = 0; kk < 3; kk++) {
                    dpc_strategy_problem pb;
                    dpc_strategy_problem_init(&pb, ns[in]);
                    pb.workload = workloads[w];
                    pb.objective = obj ? DPC_OBJECTIVE_MEAN : DPC_OBJECTIVE_MAX;
                    size_t ks[3] = {1, 3, 7};
                    pb.participations = ks[kk];
                    pb.min_sep = ns[in] / 3 > 0 ? ns[in] / 3 : 1;
                    dpc_strategy_loss cf;
                    dpc_error err = {0};
                    CHECK_OK(dpc_strategy_blt_loss(th, om, 3, &pb, &cf, &err), &err);
                    CHECK(cf.exact, "exact sensitivity for monotone BLT");
                    dpc_strategy_loss ml = mech_loss(th, om, 3, &pb, 0);
                    CHECK_NEAR_REL(cf.sensitivity, ml.sensitivity, 1e-12, "sens n=%zu k=%zu",
                                   ns[in], ks[kk]);
                    CHECK_NEAR_REL(cf.error, ml.error, 1e-10, "error n=%zu w=%d obj=%d", ns[in], w,
                                   obj);
                    CHECK_NEAR_REL(cf.loss, ml.loss, 1e-10, "loss n=%zu", ns[in]);
                    if (ns[in] <= 300 && w < 2 && kk < 2) {
                        dpc_strategy_loss dl = mech_loss(th, om, 3, &pb, 1);
                        CHECK_NEAR_REL(cf.loss, dl.loss, 1e-9, "dense loss n=%zu w=%d k=%zu",
                                       ns[in], w, ks[kk]);
                    }
                }
}

static double opt_loss(dpc_strategy **out, size_t n, dpc_objective obj, size_t k, size_t b,
                       size_t buffers, size_t maxb, double mi, dpc_workload wl)
{
    dpc_strategy_problem pb;
    dpc_strategy_problem_init(&pb, n);
    pb.objective = obj;
    pb.participations = k;
    pb.min_sep = b;
    pb.workload = wl;
    dpc_strategy_options o;
    dpc_strategy_options_init(&o);
    o.buffers = buffers;
    o.max_buffers = maxb;
    o.min_improvement = mi;
    dpc_error err = {0};
    *out = NULL;
    CHECK_OK(dpc_strategy_optimize_blt(out, &pb, &o, &err), &err);
    return *out ? (*out)->achieved.loss : NAN;
}

static dpc_strategy_loss nu_loss(const dpc_strategy_problem *pb, double nu)
{
    dpc_mech_params p;
    dpc_mech_params_init(&p);
    p.kind = DPC_MECH_NU;
    p.steps = pb->steps;
    p.nu = nu;
    dpc_mech *m = NULL;
    dpc_error err = {0};
    dpc_strategy_loss l = {NAN, NAN, NAN, 0};
    CHECK_OK(dpc_mech_new(&m, &p, &err), &err);
    if (m) CHECK_OK(dpc_strategy_loss_of(m, pb, &l, &err), &err);
    dpc_mech_free(m);
    return l;
}

/* jax_privacy (tests/matrix_factorization/buffered_toeplitz_test.py, via the landscape notes):
 * n = 100000, 2 buffers, max error: output_scale = [0.0122853238, 0.1878393665],
 * buf_decay = [0.9999528892, 0.9857068667], rtol 1e-5. */
static void test_golden(void)
{
    dpc_strategy *s;
    opt_loss(&s, 100000, DPC_OBJECTIVE_MAX, 1, 1, 2, 0, 0, DPC_WORKLOAD_PREFIX);
    if (!s) return;
    CHECK(s->nbuf == 2, "two buffers");
    const double gth[2] = {0.9999528892, 0.9857068667}, gom[2] = {0.0122853238, 0.1878393665};
    for (int i = 0; i < 2; i++) {
        CHECK_NEAR_REL(s->theta[i], gth[i], 1e-5, "golden buf_decay[%d]", i);
        CHECK_NEAR_REL(s->omega[i], gom[i], 1e-5, "golden output_scale[%d]", i);
    }
    dpc_strategy_problem pb;
    dpc_strategy_problem_init(&pb, 100000);
    dpc_strategy_loss gl;
    dpc_error err = {0};
    CHECK_OK(dpc_strategy_blt_loss(gth, gom, 2, &pb, &gl, &err), &err);
    CHECK(s->achieved.loss <= gl.loss * (1 + 1e-9), "loss %.12g <= golden %.12g",
          s->achieved.loss, gl.loss);
    dpc_strategy_free(s);
}

static void test_acceptance_max(void)
{
    size_t ns[4] = {1000, 10000, 100000, 1000000};
    for (int i = 0; i < 4; i++) {
        size_t n = ns[i];
        dpc_strategy *s;
        double L = opt_loss(&s, n, DPC_OBJECTIVE_MAX, 1, 1, 0, 5, 0, DPC_WORKLOAD_PREFIX);
        if (!s) continue;
        double ratio = sqrt(L) / (1.0 + log((double)n) / M_PI);
        printf("BLT max n=%zu buffers=%zu loss=%.8g ratio=%.5f\n", n, s->nbuf, L, ratio);
        CHECK(s->nbuf <= 5, "at most 5 buffers (%zu)", s->nbuf);
        CHECK(ratio <= 1.05, "n=%zu: sqrt(max loss)/(1+ln n/pi) = %.5f > 1.05", n, ratio);
        dpc_strategy_problem pb = s->problem;
        dpc_strategy_loss sq = nu_loss(&pb, 0.0);
        CHECK(L <= 1.02 * sq.loss, "n=%zu: BLT %.8g > 1.02 x optimal sqrt %.8g", n, L, sq.loss);
        CHECK(L >= sq.loss * (1 - 1e-9), "n=%zu: BLT below the optimal Toeplitz max loss", n);
        /* the optimizer's loss recomputed independently (mechanism, O(n) Toeplitz path) */
        dpc_strategy_loss ml = mech_loss(s->theta, s->omega, s->nbuf, &pb, 0);
        CHECK_NEAR_REL(L, ml.loss, 1e-9, "n=%zu recomputed", n);
        CHECK(ml.exact, "exact sensitivity");
        dpc_strategy_free(s);
    }
}

static void test_beats_nu(void)
{
    /* mean error, single participation (min_improvement 0.1%: the default 1% rule stops one
     * buffer short of beating nu-DP-FTRL by ~0.1% at n >= 1e4) */
    size_t ns[4] = {1000, 10000, 100000, 1000000};
    int nn = tests_scale() < 1.0 ? 3 : 4;
    for (int i = 0; i < nn; i++) {
        dpc_strategy *s;
        double L = opt_loss(&s, ns[i], DPC_OBJECTIVE_MEAN, 1, 1, 0, 10, 0.001, DPC_WORKLOAD_PREFIX);
        if (!s) continue;
        double nu;
        dpc_strategy_loss best;
        dpc_error err = {0};
        CHECK_OK(dpc_strategy_best_nu(&s->problem, &nu, &best, &err), &err);
        printf("BLT mean n=%zu buffers=%zu loss=%.8g best nu-DP-FTRL %.8g (nu=%g)\n", ns[i],
               s->nbuf, L, best.loss, nu);
        CHECK(L <= best.loss, "n=%zu mean: BLT %.10g > best nu %.10g", ns[i], L, best.loss);
        dpc_strategy_free(s);
    }
    /* multi participation, default settings */
    size_t mk[3][3] = {{1000, 4, 250}, {10000, 4, 2500}, {20000, 8, 2000}};
    for (int i = 0; i < 3; i++)
        for (int obj = 0; obj < 2; obj++) {
            dpc_strategy *s;
            double L = opt_loss(&s, mk[i][0], obj ? DPC_OBJECTIVE_MEAN : DPC_OBJECTIVE_MAX,
                                mk[i][1], mk[i][2], 0, 0, 0, DPC_WORKLOAD_PREFIX);
            if (!s) continue;
            double nu;
            dpc_strategy_loss best;
            dpc_error err = {0};
            CHECK_OK(dpc_strategy_best_nu(&s->problem, &nu, &best, &err), &err);
            CHECK(L <= best.loss, "n=%zu k=%zu obj=%d: BLT %.10g > best nu %.10g", mk[i][0],
                  mk[i][1], obj, L, best.loss);
            dpc_strategy_loss ml = mech_loss(s->theta, s->omega, s->nbuf, &s->problem, 0);
            CHECK_NEAR_REL(L, ml.loss, 1e-9, "multi recomputed");
            CHECK(ml.exact, "multi: exact min-sep sensitivity");
            dpc_strategy_free(s);
        }
}

static void test_momentum_and_dense_recompute(void)
{
    dpc_workload wl = {0.9, 1.0};
    dpc_strategy *s;
    double L = opt_loss(&s, 400, DPC_OBJECTIVE_MEAN, 4, 100, 0, 0, 0, wl);
    if (!s) return;
    dpc_strategy_loss dl = mech_loss(s->theta, s->omega, s->nbuf, &s->problem, 1);
    CHECK_NEAR_REL(L, dl.loss, 1e-9, "momentum: dense recomputation");
    /* a multi-participation BLT for the momentum workload beats every nu-DP-FTRL on it */
    double nu;
    dpc_strategy_loss best;
    dpc_error err = {0};
    CHECK_OK(dpc_strategy_best_nu(&s->problem, &nu, &best, &err), &err);
    printf("BLT momentum 0.9 n=400 k=4: %.8g, best nu-DP-FTRL %.8g\n", L, best.loss);
    CHECK(L <= best.loss, "BLT %.8g <= best nu %.8g", L, best.loss);
    dpc_strategy_free(s);
    /* single participation, max, dense recomputation at n = 512 */
    L = opt_loss(&s, 512, DPC_OBJECTIVE_MAX, 1, 1, 0, 0, 0, DPC_WORKLOAD_PREFIX);
    if (!s) return;
    dl = mech_loss(s->theta, s->omega, s->nbuf, &s->problem, 1);
    CHECK_NEAR_REL(L, dl.loss, 1e-9, "n=512 dense recomputation");
    /* stable inverse: theta in (0,1), omega > 0, sum < 1 */
    double sum = 0;
    for (size_t i = 0; i < s->nbuf; i++) {
        CHECK(s->theta[i] > 0 && s->theta[i] < 1 && s->omega[i] > 0, "constraints");
        sum += s->omega[i];
    }
    CHECK(sum < 1.0, "sum omega < 1");
    dpc_strategy_free(s);
}

static void test_errors(void)
{
    dpc_strategy_problem pb;
    dpc_strategy_problem_init(&pb, 1);
    dpc_strategy *s = NULL;
    dpc_error err = {0};
    CHECK(dpc_strategy_optimize_blt(&s, &pb, NULL, &err) == DPC_E_INVALID && s == NULL, "n = 1");
    CHECK(strstr(err.msg, "steps") != NULL, "names steps: %s", err.msg);
    pb.steps = 100;
    dpc_strategy_options o;
    dpc_strategy_options_init(&o);
    o.buffers = 40;
    CHECK(dpc_strategy_optimize_blt(&s, &pb, &o, &err) == DPC_E_INVALID, "40 buffers");
    CHECK(strstr(err.msg, "buffers") != NULL, "names buffers: %s", err.msg);
    pb.participations = 0;
    CHECK(dpc_strategy_optimize_blt(&s, &pb, NULL, &err) == DPC_E_INVALID, "k = 0");
    pb.participations = 1;
    pb.workload.momentum = 1.0;
    CHECK(dpc_strategy_optimize_blt(&s, &pb, NULL, &err) == DPC_E_INVALID, "momentum 1");
    CHECK(strstr(err.msg, "momentum") != NULL, "names momentum: %s", err.msg);
    pb.workload.momentum = 0.0;
    double th[1] = {1.0}, om[1] = {0.1};
    dpc_strategy_loss l;
    CHECK(dpc_strategy_blt_loss(th, om, 1, &pb, &l, &err) == DPC_E_INVALID, "theta = 1");
    CHECK(!strcmp(err.field, "theta") && strstr(err.msg, "entry 0") != NULL, "names theta[0]: %s",
          err.msg);
    dpc_strategy_free(NULL);
}

/* The tables of dpc_strategy_problem (workload nested) and dpc_strategy_options cover their
 * structs, the _inits write their defaults (the values they wrote by hand before the tables),
 * and the refusals go through them naming the field. */
static void test_field_tables(void)
{
    dpc_error err = {0};
    const dpc_field_table *p = dpc_strategy_problem_fields(), *o = dpc_strategy_options_fields();
    CHECK(p && p->size == sizeof(dpc_strategy_problem) && p->count == 5, "problem table");
    CHECK(o && o->size == sizeof(dpc_strategy_options) && o->count == 6, "options table");
    CHECK_OK(dpc_field_table_verify(p, &err), &err);
    CHECK_OK(dpc_field_table_verify(o, &err), &err);
    CHECK(p->size == dpc_abi_sizeof("dpc_strategy_problem") &&
              o->size == dpc_abi_sizeof("dpc_strategy_options"), "the tables' sizes are the ABI's");
    dpc_strategy_problem pb;
    memset(&pb, 0x5a, sizeof pb);
    dpc_strategy_problem_init(&pb, 64);
    CHECK(pb.steps == 64 && pb.participations == 1 && pb.min_sep == 1 &&
              pb.workload.momentum == 0.0 && pb.workload.decay == 1.0 &&
              pb.objective == DPC_OBJECTIVE_MAX, "problem defaults");
    dpc_strategy_options so, zero;
    memset(&so, 0x5a, sizeof so);
    memset(&zero, 0, sizeof zero);
    dpc_strategy_options_init(&so);
    CHECK(!memcmp(&so, &zero, sizeof so), "options defaults: all zero");
    const dpc_field *f = dpc_field_find(p, "workload.decay", NULL);
    CHECK(f && f->def == 1.0, "nested workload lookup");
    struct { const char *field; double v; dpc_status st; } bad[] = {
        {"steps", 0, DPC_E_INVALID},           {"steps", 1099511627777.0, DPC_E_RANGE},
        {"participations", 0, DPC_E_INVALID},  {"min_sep", 0, DPC_E_INVALID},
        {"workload.momentum", 1, DPC_E_INVALID}, {"workload.decay", 0, DPC_E_INVALID},
        {"workload.momentum", NAN, DPC_E_INVALID}, {"objective", 2, DPC_E_INVALID},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dpc_strategy_problem b;
        dpc_strategy_problem_init(&b, 64);
        size_t base = 0;
        const dpc_field *bf = dpc_field_find(p, bad[i].field, &base);
        CHECK_OK(dpc_field_set(bf, (char *)&b + base, bad[i].v, &err), &err);
        CHECK(dpc_strategy_problem_check(&b, &err) == bad[i].st &&
                  !strcmp(err.field, bad[i].field), "%s = %g refused: '%s'", bad[i].field,
              bad[i].v, err.msg);
    }
    dpc_strategy *s = NULL;
    struct { const char *field; double v; } obad[] = {
        {"buffers", 33}, {"max_buffers", 33}, {"min_improvement", 1}, {"min_improvement", -1},
        {"max_iterations", 2147483648.0}, /* liblbfgs counts iterations in an int */
    };
    for (size_t i = 0; i < sizeof obad / sizeof obad[0]; i++) {
        dpc_strategy_options b;
        dpc_strategy_options_init(&b);
        CHECK_OK(dpc_field_set(dpc_field_find(o, obad[i].field, NULL), &b, obad[i].v, &err),
                 &err);
        CHECK(dpc_strategy_optimize_blt(&s, &pb, &b, &err) == DPC_E_INVALID && !s &&
                  !strcmp(err.field, obad[i].field), "%s = %g refused: '%s'", obad[i].field,
              obad[i].v, err.msg);
        if (strcmp(obad[i].field, "max_iterations")) continue;
        /* every optimizer checks its options through the table */
        b.bands = 2;
        CHECK(dpc_strategy_optimize_banded(&s, &pb, &b, &err) == DPC_E_INVALID && !s &&
                  !strcmp(err.field, "max_iterations"), "banded: %s", err.msg);
        CHECK(dpc_strategy_optimize_dense(&s, &pb, &b, &err) == DPC_E_INVALID && !s &&
                  !strcmp(err.field, "max_iterations"), "dense: %s", err.msg);
    }
}

/* dpc_participation_init is single participation; dpc_mech_params_default_blt gives a BLT
 * without buffers exactly dpc_strategy_default_blt's (called here directly) and leaves every
 * other mechanism (given lists, another kind, n < 2) alone. */
static void test_mech_params_default_blt(void)
{
    dpc_participation part;
    memset(&part, 0xff, sizeof part);
    dpc_participation_init(&part);
    CHECK(part.kind == DPC_PART_MINSEP && part.k == 1 && part.b == 1, "default pattern k = 1, b = 1");
    part.k = 2, part.b = 10;
    dpc_error err = {0};
    dpc_mech_params p;
    dpc_mech_params_init(&p);
    p.kind = DPC_MECH_BLT, p.steps = 40;
    dpc_strategy *got = NULL, *want = NULL;
    CHECK_OK(dpc_mech_params_default_blt(&p, &part, &got, &err), &err);
    CHECK_OK(dpc_strategy_default_blt(&want, 40, 2, 10, DPC_WORKLOAD_PREFIX, &err), &err);
    if (got && want) {
        int same = p.kind == DPC_MECH_BLT && p.steps == 40 && p.nbuf == want->nbuf && p.theta &&
                   p.omega && p.theta == got->theta;
        for (size_t i = 0; same && i < p.nbuf; i++)
            same = p.theta[i] == want->theta[i] && p.omega[i] == want->omega[i];
        CHECK(same, "the default BLT for n 40, k 2, b 10 (%zu buffers)", p.nbuf);
    } else {
        CHECK(0, "default BLT built");
    }
    dpc_strategy_free(got);
    dpc_strategy_free(want);
    double th = 0.5, om = 0.1;
    dpc_mech_params q;
    dpc_mech_params_init(&q);
    q.kind = DPC_MECH_BLT, q.steps = 40, q.theta = &th, q.omega = &om, q.nbuf = 1;
    dpc_mech_params q0 = q;
    got = (dpc_strategy *)&q; /* overwritten with NULL */
    CHECK_OK(dpc_mech_params_default_blt(&q, &part, &got, &err), &err);
    CHECK(!got && !memcmp(&q, &q0, sizeof q), "lists given: untouched");
    q.theta = NULL, q.steps = 1, q0 = q;
    CHECK_OK(dpc_mech_params_default_blt(&q, &part, &got, &err), &err);
    CHECK(!got && !memcmp(&q, &q0, sizeof q), "one list given: untouched (the caller's to refuse)");
    q.omega = NULL, q.steps = 1, q0 = q;
    CHECK_OK(dpc_mech_params_default_blt(&q, &part, &got, &err), &err);
    CHECK(!got && !memcmp(&q, &q0, sizeof q), "n = 1: untouched");
    q.kind = DPC_MECH_NU, q.steps = 40, q0 = q;
    CHECK_OK(dpc_mech_params_default_blt(&q, &part, &got, &err), &err);
    CHECK(!got && !memcmp(&q, &q0, sizeof q), "another kind: untouched");
    dpc_error e2 = {0};
    CHECK(dpc_mech_params_default_blt(&q, NULL, &got, &e2) == DPC_E_INVALID &&
              !strcmp(e2.field, "part"), "NULL pattern named: %s", e2.field);
}

/* A strategy at a run's n: BLT at any n (p->steps the run's, 0 the strategy's), a dense one only
 * at its own n, refused naming steps and the source. */
static void test_mech_params_at(void)
{
    double th = 0.5, om = 0.2, dense[4] = {1, 0, 0.5, 1};
    dpc_strategy b, d;
    memset(&b, 0, sizeof b);
    memset(&d, 0, sizeof d);
    b.kind = DPC_MECH_BLT, b.problem.steps = 10, b.nbuf = 1, b.theta = &th, b.omega = &om;
    d.kind = DPC_MECH_DENSE, d.problem.steps = 2, d.dense = dense;
    dpc_mech_params p;
    dpc_error err = {0};
    CHECK_OK(dpc_strategy_mech_params_at(&b, 0, NULL, &p, &err), &err);
    CHECK(p.kind == DPC_MECH_BLT && p.steps == 10 && p.theta == &th && p.nbuf == 1, "BLT: its n");
    CHECK_OK(dpc_strategy_mech_params_at(&b, 77, NULL, &p, &err), &err);
    CHECK(p.steps == 77 && p.omega == &om, "BLT at another n: 77");
    CHECK_OK(dpc_strategy_mech_params_at(&d, 2, "x.json", &p, &err), &err);
    CHECK(p.kind == DPC_MECH_DENSE && p.steps == 2 && p.dense == dense, "dense at its n");
    dpc_error e2 = {0};
    CHECK(dpc_strategy_mech_params_at(&d, 3, "x.json", &p, &e2) == DPC_E_INVALID &&
              !strcmp(e2.field, "steps") && strstr(e2.msg, "in x.json has n = 2, got 3"),
          "dense at another n refused: %s", e2.msg);
    dpc_error e3 = {0};
    CHECK(dpc_strategy_mech_params_at(&d, 5, NULL, &p, &e3) == DPC_E_INVALID &&
              strstr(e3.msg, "the dense strategy has n = 2, got 5"), "no source: %s", e3.msg);
}

int main(void)
{
    test_field_tables();
    test_gram_parity();
    test_gram_gradient();
    test_closed_form_vs_mech();
    test_golden();
    test_acceptance_max();
    test_beats_nu();
    test_momentum_and_dense_recompute();
    test_errors();
    test_mech_params_default_blt();
    test_mech_params_at();
    return TEST_SUMMARY();
}
