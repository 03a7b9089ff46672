/* test_account_calib.c — calibration of sigma and of the number of steps for every accountant:
 * published values (jax_privacy), calibrate o epsilon = identity, closed forms for zCDP and GDP,
 * the integer crossing for steps, impossible budgets and input validation. */
#include "account/acc_internal.h"
#include "harness.h"

#include <math.h>
#include <string.h>
#include <time.h>

static dpc_gauss_event poisson(double sigma, double q, size_t T)
{
    dpc_gauss_event c;
    dpc_gauss_event_init(&c);
    c.sigma = sigma;
    c.sampling = q < 1.0 ? DPC_SAMPLING_POISSON : DPC_SAMPLING_NONE;
    c.q = q;
    c.count = T;
    return c;
}

static double eps_of(dpc_gauss_event c, const dpc_account_opts *o, double delta)
{
    dpc_event ev = {DPC_NEIGHBOR_ADD_REMOVE, 1, &c};
    dpc_account_result r;
    dpc_error err = {0};
    CHECK_OK(dpc_account_epsilon(&ev, o, delta, &r, &err), &err);
    return r.epsilon;
}

static void test_published(void)
{
    dpc_error err = {0};
    dpc_account_opts o;
    dpc_account_opts_init(&o, DPC_ACCOUNTANT_PLD);
    /* connect-the-dots is second order: either grid is ample for two decimals */
    o.pld_interval = tests_scale() < 1.0 ? 5e-4 : 2e-4;
    /* jax_privacy: eps = 1 at q = 0.1, T = 512, delta = 1e-6 needs sigma ~ 9.66 */
    dpc_gauss_event c = poisson(1.0, 0.1, 512);
    dpc_event ev = {DPC_NEIGHBOR_ADD_REMOVE, 1, &c};
    double sigma;
    CHECK_OK(dpc_account_calibrate_sigma(&ev, &o, 1.0, 1e-6, &sigma, &err), &err);
    CHECK_NEAR_ABS(sigma, 9.66, 0.005, "published (jax_privacy): sigma 9.66");
    /* jax_privacy: sigma = 3, q = 0.1, eps = 2, delta = 1e-6 allows 155 steps */
    c = poisson(3.0, 0.1, 1);
    size_t T;
    CHECK_OK(dpc_account_calibrate_steps(&ev, 0, &o, 2.0, 1e-6, 100000, &T, &err), &err);
    CHECK(T == 155, "published (jax_privacy): 155 steps, got %zu", T);
}

static void test_identity(void)
{
    dpc_error err = {0};
    struct {
        dpc_accountant acc;
        double q;
        size_t T;
        double eps, delta;
    } cs[] = {{DPC_ACCOUNTANT_RDP, 0.02, 1000, 2.0, 1e-6},
              {DPC_ACCOUNTANT_RDP, 1.0, 10, 0.5, 1e-5},
              {DPC_ACCOUNTANT_PLD, 0.1, 50, 1.5, 1e-6},
              {DPC_ACCOUNTANT_ZCDP, 1.0, 100, 3.0, 1e-5},
              {DPC_ACCOUNTANT_GDP, 1.0, 100, 3.0, 1e-5}};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        dpc_account_opts o;
        dpc_account_opts_init(&o, cs[i].acc);
        o.pld_interval = 5e-4;
        dpc_gauss_event c = poisson(1.0, cs[i].q, cs[i].T);
        dpc_event ev = {DPC_NEIGHBOR_ZERO_OUT, 1, &c};
        double sigma;
        CHECK_OK(dpc_account_calibrate_sigma(&ev, &o, cs[i].eps, cs[i].delta, &sigma, &err), &err);
        c.sigma = sigma;
        double e = eps_of(c, &o, cs[i].delta);
        /* PLD stops within 5e-5 (relative) of the target: its grid resolves eps(sigma) to
         * ~1e-8 only; the other accountants bisect to 1e-10 */
        int pld = cs[i].acc == DPC_ACCOUNTANT_PLD;
        double tol = pld ? 5e-5 * cs[i].eps : 1e-6;
        CHECK(e <= cs[i].eps && cs[i].eps - e < tol,
              "%s: eps(calibrated sigma %.10g) = %.12g vs target %g",
              dpc_accountant_name(cs[i].acc), sigma, e, cs[i].eps);
        c.sigma = sigma * (1 - (pld ? 2e-4 : 1e-6));
        CHECK(eps_of(c, &o, cs[i].delta) > cs[i].eps, "%s: a slightly smaller sigma fails",
              dpc_accountant_name(cs[i].acc));
    }
}

/* PLD calibration (calib-pld): the returned sigma's PLD epsilon, evaluated afresh with the same
 * options, is <= the target and within 5e-5 (relative) of it, over sampled and unsampled runs,
 * small and large epsilon, and tiny deltas; and the coarse-grid prediction (Richardson) lets
 * the typical run finish in one or two evaluations with the requested grid (an evaluation
 * count, not a timing: the cost is bench/bench_account.c's). */
static void test_pld_private_side(void)
{
    struct {
        double q;
        size_t T;
        double eps, delta;
        size_t max_fine;
    } cs[] = {{0.1, 512, 1.0, 1e-6, 2},   {0.01, 2000, 8.0, 1e-5, 2}, {1.0, 100, 3.0, 1e-8, 2},
              {0.2, 5, 0.3, 1e-9, 3},     {0.004, 300, 2.0, 1e-7, 2}, {0.5, 40, 20.0, 1e-5, 2},
              {0.03, 1000, 0.5, 1e-4, 4}};
    size_t ncase = tests_scale() < 1.0 ? 3 : sizeof cs / sizeof cs[0];
    for (size_t i = 0; i < ncase; i++) {
        dpc_error err = {0};
        dpc_account_opts o;
        dpc_account_opts_init(&o, DPC_ACCOUNTANT_PLD);
        dpc_gauss_event c = poisson(1.0, cs[i].q, cs[i].T);
        dpc_event ev = {DPC_NEIGHBOR_ADD_REMOVE, 1, &c};
        double sigma;
        size_t fine = 0;
        CHECK_OK(dpc__calibrate_sigma_count(&ev, &o, cs[i].eps, cs[i].delta, &sigma, &fine, &err),
                 &err);
        c.sigma = sigma;
        double e = eps_of(c, &o, cs[i].delta);
        CHECK(e <= cs[i].eps && cs[i].eps - e <= 5e-5 * cs[i].eps,
              "case %zu: eps(calibrated sigma %.10g) = %.12g vs target %g", i, sigma, e,
              cs[i].eps);
        CHECK(fine >= 1 && fine <= cs[i].max_fine,
              "case %zu: %zu evaluations with the requested grid (expected 1..%zu)", i, fine,
              cs[i].max_fine);
    }
}

static void test_closed_forms(void)
{
    dpc_error err = {0};
    /* zCDP: T rho = T/(2 sigma^2) -> sigma = sqrt(T / (2 rho_for(eps, delta))) */
    dpc_account_opts o;
    dpc_account_opts_init(&o, DPC_ACCOUNTANT_ZCDP);
    dpc_gauss_event c = poisson(1.0, 1.0, 400);
    c.sensitivity = 2.0;
    dpc_event ev = {DPC_NEIGHBOR_REPLACE_ONE, 1, &c};
    double sigma, rho;
    CHECK_OK(dpc_account_calibrate_sigma(&ev, &o, 2.0, 1e-7, &sigma, &err), &err);
    CHECK_OK(dpc_zcdp_rho_for(2.0, 1e-7, DPC_ZCDP_TIGHT, &rho, &err), &err);
    CHECK_NEAR_REL(sigma, 2.0 * sqrt(400 / (2 * rho)), 1e-8, "zCDP sigma closed form");
    /* GDP: mu = sqrt(T)/sigma -> sigma = sqrt(T) / mu_for(eps, delta) */
    dpc_account_opts_init(&o, DPC_ACCOUNTANT_GDP);
    double mu;
    CHECK_OK(dpc_account_calibrate_sigma(&ev, &o, 2.0, 1e-7, &sigma, &err), &err);
    CHECK_OK(dpc_gdp_mu_for(2.0, 1e-7, &mu, &err), &err);
    CHECK_NEAR_REL(sigma, 2.0 * sqrt(400.0) / mu, 1e-8, "GDP sigma closed form");
    /* GDP steps: the largest T with sqrt(T)/sigma <= mu */
    c.sigma = 20.0;
    size_t T;
    CHECK_OK(dpc_account_calibrate_steps(&ev, 0, &o, 2.0, 1e-7, 1000000, &T, &err), &err);
    double t = floor(pow(mu * 20.0 / 2.0, 2.0));
    CHECK(fabs((double)T - t) <= 1.0, "GDP steps %zu vs closed form %g", T, t);
}

static void test_steps_crossing(void)
{
    dpc_error err = {0};
    dpc_accountant accs[] = {DPC_ACCOUNTANT_RDP, DPC_ACCOUNTANT_ZCDP, DPC_ACCOUNTANT_GDP};
    for (size_t i = 0; i < 3; i++) {
        dpc_account_opts o;
        dpc_account_opts_init(&o, accs[i]);
        double q = accs[i] == DPC_ACCOUNTANT_RDP ? 0.01 : 1.0;
        double sigma = accs[i] == DPC_ACCOUNTANT_RDP ? 1.1 : 30.0;
        dpc_gauss_event c = poisson(sigma, q, 1);
        dpc_event ev = {DPC_NEIGHBOR_ADD_REMOVE, 1, &c};
        size_t T;
        CHECK_OK(dpc_account_calibrate_steps(&ev, 0, &o, 3.0, 1e-6, 10000000, &T, &err), &err);
        c.count = T;
        double e1 = eps_of(c, &o, 1e-6);
        c.count = T + 1;
        double e2 = eps_of(c, &o, 1e-6);
        CHECK(e1 <= 3.0 && e2 > 3.0, "%s: eps(%zu) = %g <= 3 < eps(%zu) = %g",
              dpc_accountant_name(accs[i]), T, e1, T + 1, e2);
    }
    /* a cap that is private is returned as is */
    dpc_account_opts o;
    dpc_account_opts_init(&o, DPC_ACCOUNTANT_RDP);
    dpc_gauss_event c = poisson(5.0, 0.001, 1);
    dpc_event ev = {DPC_NEIGHBOR_ADD_REMOVE, 1, &c};
    size_t T;
    CHECK_OK(dpc_account_calibrate_steps(&ev, 0, &o, 10.0, 1e-5, 1000, &T, &err), &err);
    CHECK(T == 1000, "max_steps returned when private, got %zu", T);
    /* steps of one component in a two-component event */
    dpc_gauss_event parts[2] = {poisson(1.0, 0.01, 500), poisson(1.0, 0.01, 1)};
    dpc_event two = {DPC_NEIGHBOR_ADD_REMOVE, 2, parts};
    size_t T2, T1;
    c = poisson(1.0, 0.01, 1);
    CHECK_OK(dpc_account_calibrate_steps(&ev, 0, &o, 2.0, 1e-5, 100000, &T1, &err), &err);
    CHECK_OK(dpc_account_calibrate_steps(&two, 1, &o, 2.0, 1e-5, 100000, &T2, &err), &err);
    CHECK(T2 + 500 == T1, "500 steps already spent: %zu + 500 vs %zu", T2, T1);
}

static void test_impossible_and_invalid(void)
{
    dpc_error err = {0};
    dpc_account_opts o;
    dpc_account_opts_init(&o, DPC_ACCOUNTANT_GDP);
    dpc_gauss_event c = poisson(1.0, 1.0, 1);
    dpc_event ev = {DPC_NEIGHBOR_ADD_REMOVE, 1, &c};
    size_t T;
    CHECK(dpc_account_calibrate_steps(&ev, 0, &o, 0.1, 1e-6, 100, &T, &err) == DPC_E_PRIVACY &&
              strstr(err.msg, "epsilon"),
          "one step already too much: '%s'", err.msg);
    double sigma;
    CHECK(dpc_account_calibrate_sigma(&ev, &o, 1e-9, 1e-15, &sigma, &err) == DPC_E_PRIVACY,
          "sigma beyond 1e9: '%s'", err.msg);
    CHECK(dpc_account_calibrate_sigma(&ev, &o, -1.0, 1e-6, &sigma, &err) == DPC_E_INVALID &&
              strstr(err.msg, "epsilon"),
          "negative epsilon: '%s'", err.msg);
    CHECK(dpc_account_calibrate_sigma(&ev, &o, 1.0, 2.0, &sigma, &err) == DPC_E_INVALID &&
              strstr(err.msg, "delta"),
          "delta 2: '%s'", err.msg);
    CHECK(dpc_account_calibrate_steps(&ev, 3, &o, 1.0, 1e-6, 100, &T, &err) == DPC_E_INVALID &&
              strstr(err.msg, "part"),
          "component index out of range: '%s'", err.msg);
    c.sampling = DPC_SAMPLING_POISSON;
    c.q = 0.5;
    CHECK(dpc_account_calibrate_sigma(&ev, &o, 1.0, 1e-6, &sigma, &err) == DPC_E_UNSUPPORTED &&
              strstr(err.msg, "gdp"),
          "GDP has no amplification: '%s'", err.msg);
    c.q = NAN;
    dpc_account_opts_init(&o, DPC_ACCOUNTANT_RDP);
    CHECK(dpc_account_calibrate_sigma(&ev, &o, 1.0, 1e-6, &sigma, &err) == DPC_E_INVALID &&
              strstr(err.msg, "q"),
          "NaN q: '%s'", err.msg);
}

/* Progress reports and cancellation (issue 19: long computations report progress and stop on
 * request); work beyond DPC_WORK_LIMIT is refused up front. */
typedef struct {
    int calls, stop_at;
    double last_done, last_total;
} prog;

static int on_progress(void *ctx, double done, double total)
{
    prog *p = ctx;
    p->calls++;
    p->last_done = done;
    p->last_total = total;
    return p->stop_at && p->calls >= p->stop_at;
}

static void test_progress_and_limits(void)
{
    dpc_error err = {0};
    dpc_gauss_event c = poisson(1.0, 0.01, 1000);
    dpc_event ev = {DPC_NEIGHBOR_ADD_REMOVE, 1, &c};
    dpc_account_opts o;
    dpc_account_opts_init(&o, DPC_ACCOUNTANT_RDP);
    prog p = {0, 0, 0, 0};
    o.progress = (dpc_progress){on_progress, &p};
    double sigma = 0;
    CHECK_OK(dpc_account_calibrate_sigma(&ev, &o, 2.0, 1e-5, &sigma, &err), &err);
    CHECK(p.calls > 3 && p.last_done <= p.last_total, "calibration reports progress: %d calls, "
          "%g of %g", p.calls, p.last_done, p.last_total);
    prog q = {0, 3, 0, 0};
    o.progress = (dpc_progress){on_progress, &q};
    dpc_error e2 = {0};
    CHECK(dpc_account_calibrate_sigma(&ev, &o, 2.0, 1e-5, &sigma, &e2) == DPC_E_CANCELLED &&
              q.calls == 3,
          "a calibration stops when asked: %s (%d calls)", e2.msg, q.calls);
    /* tiny noise: fractional orders cannot be evaluated reliably and are left out; integer
     * orders give the (huge, valid) bound at once; a calibration to epsilon 1e308 ends fast */
    o.progress = (dpc_progress){NULL, NULL};
    dpc_gauss_event t = poisson(1e-9, 0.01, 1000);
    dpc_event et = {DPC_NEIGHBOR_ADD_REMOVE, 1, &t};
    dpc_account_result r;
    CHECK_OK(dpc_account_epsilon(&et, &o, 1e-5, &r, &err), &err);
    CHECK(isfinite(r.epsilon) && r.epsilon > 1e20 && r.order == floor(r.order),
          "sigma 1e-9: eps %g at the integer order %g", r.epsilon, r.order);
    CHECK_OK(dpc_account_calibrate_sigma(&ev, &o, 1e308, 1e-5, &sigma, &err), &err);
    CHECK(sigma > 0 && sigma < 1e-6, "epsilon 1e308: sigma %g", sigma);
    /* a refinement over orders up to 1e6 is beyond the work limit: refused, naming orders */
    double big[2] = {1.5, 999999};
    o.orders = big;
    o.norders = 2;
    o.rdp_refine = 1;
    dpc_error e3 = {0};
    CHECK(dpc_account_epsilon(&ev, &o, 1e-5, &r, &e3) == DPC_E_RANGE &&
              !strcmp(e3.field, "orders"),
          "refine to order 1e6 refused: %s", e3.msg);
}

/* The defaults that hold (issue 25): delta derived from N is the largest power of ten <=
 * 1/(10 N), at most 1e-5, hence always below 1/N; the calibration grid is the requested one up
 * to epsilon 10, then scaled with epsilon, at most 1, and only for PLD. */
static void test_defaults(void)
{
    struct { size_t n; double want; } cs[] = {{1, 1e-5},     {100, 1e-5},    {10000, 1e-5},
                                              {10001, 1e-6}, {60000, 1e-6},  {100000, 1e-6},
                                              {100001, 1e-7}, {1000000, 1e-7}, {7000000, 1e-8}};
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        double d = dpc_account_default_delta(cs[i].n);
        CHECK(harness_near_rel(d, cs[i].want, 1e-12) && d < 1.0 / (double)cs[i].n &&
                  d <= 1.0 / (10.0 * (double)cs[i].n) * (1 + 1e-12),
              "N %zu: delta %g (want %g)", cs[i].n, d, cs[i].want);
    }
    CHECK(dpc_account_default_accountant() == DPC_ACCOUNTANT_PLD, "PLD by default");
    /* counts above 2^40 refused by the library itself (bindings cannot pass 2^63 steps) */
    CHECK(dpc_account_max_count() == ((size_t)1 << 40), "max count 2^40");
    dpc_gauss_event ge;
    dpc_gauss_event_init(&ge);
    ge.count = dpc_account_max_count() + 1;
    dpc_event ev = {DPC_NEIGHBOR_ADD_REMOVE, 1, &ge};
    dpc_error err = {0};
    CHECK(dpc_event_check(&ev, DPC_ACCOUNTANT_PLD, &err) == DPC_E_RANGE &&
              !strcmp(err.field, "parts[0].count"),
          "count 2^40 + 1 refused: %s (%s)", err.msg, err.field);
    ge.count = dpc_account_max_count();
    CHECK_OK(dpc_event_check(&ev, DPC_ACCOUNTANT_PLD, &err), &err);
    dpc_account_opts o;
    dpc_account_opts_init(&o, DPC_ACCOUNTANT_PLD);
    double h = o.pld_interval;
    dpc_account_opts_for_target(&o, 8.0);
    CHECK(o.pld_interval == h, "eps 8: the requested grid");
    dpc_account_opts_for_target(&o, 1000.0);
    CHECK(harness_near_rel(o.pld_interval, 100.0 * h, 1e-12), "eps 1000: 100x (%g)",
          o.pld_interval);
    dpc_account_opts_for_target(&o, 1e300);
    CHECK(o.pld_interval == 1.0, "capped at 1 (%g)", o.pld_interval);
    dpc_account_opts_init(&o, DPC_ACCOUNTANT_RDP);
    h = o.pld_interval;
    dpc_account_opts_for_target(&o, 1000.0);
    CHECK(o.pld_interval == h, "RDP: untouched");
}

/* The one delta rule of every trainer (dpc_account_resolve_delta): 0 is the default from N
 * (flagged derived), a delta >= 1/N is refused naming "delta" and the override by its library
 * name unless allow_large is set, and a delta outside (0, 1) or N = 0 is invalid. */
static void test_resolve_delta(void)
{
    size_t ns[] = {1, 1000, 60000, 1000000, 7000000};
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        dpc_error err = {0};
        double d = -1;
        int derived = 0;
        CHECK_OK(dpc_account_resolve_delta(0, ns[i], 0, &d, &derived, &err), &err);
        CHECK(d == dpc_account_default_delta(ns[i]) && derived == 1 && d < 1.0 / (double)ns[i],
              "N %zu: 0 resolves to the default %g (derived %d)", ns[i], d, derived);
    }
    dpc_error err = {0};
    double d = -1;
    int derived = 1;
    CHECK_OK(dpc_account_resolve_delta(1e-7, 1000000, 0, &d, &derived, &err), &err);
    CHECK(d == 1e-7 && derived == 0, "a given delta below 1/N is kept (%g, derived %d)", d, derived);
    double at[] = {1e-6, 1e-5, 0.5}; /* 1/N itself and above, N = 1e6 */
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        dpc_error e = {0};
        d = -1;
        CHECK(dpc_account_resolve_delta(at[i], 1000000, 0, &d, NULL, &e) == DPC_E_PRIVACY &&
                  !strcmp(e.field, "delta") && strstr(e.msg, ">= 1/N") &&
                  strstr(e.msg, "allow_large_delta") && d == -1,
              "delta %g at N = 1e6 refused: %s", at[i], e.msg);
        CHECK_OK(dpc_account_resolve_delta(at[i], 1000000, 1, &d, NULL, &e), &e);
        CHECK(d == at[i], "delta %g accepted with allow_large", at[i]);
    }
    double bad[] = {-1e-9, 1.0, 2.0, NAN, INFINITY};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dpc_error e = {0};
        CHECK(dpc_account_resolve_delta(bad[i], 1000, 1, &d, NULL, &e) == DPC_E_INVALID &&
                  !strcmp(e.field, "delta"),
              "delta %g invalid even with allow_large: %s", bad[i], e.msg);
    }
    dpc_error e = {0};
    CHECK(dpc_account_resolve_delta(0, 0, 0, &d, NULL, &e) == DPC_E_INVALID &&
              !strcmp(e.field, "n"),
          "N = 0 refused: %s", e.msg);
    CHECK(dpc_account_resolve_delta(0, 10, 0, NULL, NULL, &e) == DPC_E_INVALID, "NULL output");
}

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* DP-REQ: pld-or-rdp. A PLD request is answered by the smaller of the PLD and the RDP bound
 * (both upper bounds); where the PLD's grid floor is predicted above twice the RDP answer (10^12
 * steps: the PLD calibrated 1.1e7 in 10.6 s, RDP 4.0e4; issue 37) the PLD is not composed. A
 * round-down (lower-bound) request is never replaced by RDP. */
static void test_pld_or_rdp(void)
{
    dpc_account_opts o, ro;
    dpc_account_opts_init(&o, DPC_ACCOUNTANT_PLD);
    dpc_account_opts_init(&ro, DPC_ACCOUNTANT_RDP);
    dpc_gauss_event c = poisson(1.0, 0.01, (size_t)1000000000000ULL);
    dpc_event ev = {DPC_NEIGHBOR_ADD_REMOVE, 1, &c};
    dpc_error err = {0};
    double z = 0.0, zr = 0.0, t0 = cpu_s();
    CHECK_OK(dpc_account_calibrate_sigma(&ev, &o, 1.0, 1e-5, &z, &err), &err);
    double t = cpu_s() - t0;
    CHECK_OK(dpc_account_calibrate_sigma(&ev, &ro, 1.0, 1e-5, &zr, &err), &err);
    CHECK(t <= 2.0, "10^12 steps, pld requested: %.2f s CPU (target <= 2 s; was 10.6 s)", t);
    CHECK(z > 0.0 && z <= 1.001 * zr && z > 0.5 * zr,
          "10^12 steps: pld-requested sigma %.6g vs rdp %.6g (the pld alone gave 1.1e7)", z, zr);
    /* its epsilon there is RDP's, reported with RDP's order */
    c.sigma = z;
    dpc_account_result r, rr;
    CHECK_OK(dpc_account_epsilon(&ev, &o, 1e-5, &r, &err), &err);
    CHECK_OK(dpc_account_epsilon(&ev, &ro, 1e-5, &rr, &err), &err);
    CHECK(r.epsilon == rr.epsilon && r.epsilon <= 1.0 && !isnan(r.order) && r.upper_bound == 1,
          "10^12 steps at sigma %.6g: pld-requested eps %.9g (order %g), rdp %.9g", z, r.epsilon,
          r.order, rr.epsilon);
    /* delta too */
    CHECK_OK(dpc_account_delta(&ev, &o, 1.0, &r, &err), &err);
    CHECK_OK(dpc_account_delta(&ev, &ro, 1.0, &rr, &err), &err);
    CHECK(r.delta <= rr.delta && r.delta <= 1e-5, "10^12 steps: delta %g vs rdp %g", r.delta,
          rr.delta);
    /* an ordinary run: the PLD answers (tighter), order NAN */
    dpc_gauss_event d = poisson(1.1, 0.01, 10000);
    dpc_event ed = {DPC_NEIGHBOR_ADD_REMOVE, 1, &d};
    CHECK_OK(dpc_account_epsilon(&ed, &o, 1e-5, &r, &err), &err);
    CHECK_OK(dpc_account_epsilon(&ed, &ro, 1e-5, &rr, &err), &err);
    CHECK(isnan(r.order) && r.epsilon < rr.epsilon,
          "1e4 steps: pld %.6g (order %g) below rdp %.6g", r.epsilon, r.order, rr.epsilon);
    /* round-down asks for a lower bound: never replaced by RDP's upper bound */
    dpc_account_opts od = o;
    od.pld_disc = DPC_PLD_ROUND_DOWN;
    dpc_account_result rd;
    CHECK_OK(dpc_account_epsilon(&ed, &od, 1e-5, &rd, &err), &err);
    CHECK(isnan(rd.order) && rd.upper_bound == 0 && rd.epsilon <= r.epsilon,
          "round-down %.6g (order %g) <= connect-dots %.6g", rd.epsilon, rd.order, r.epsilon);
}

int main(void)
{
    test_defaults();
    test_resolve_delta();
    test_progress_and_limits();
    test_published();
    test_identity();
    test_pld_private_side();
    test_closed_forms();
    test_steps_crossing();
    test_impossible_and_invalid();
    test_pld_or_rdp();
    return TEST_SUMMARY();
}
