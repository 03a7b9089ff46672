/* test_account_query.c — dpc_account_query: every rule of dpc_account_query_resolve (the default
 * accountant, neighbour, sampling, a mechanism's run, BSR bands, what each mode requires, the
 * refusals naming their field), dpc_account_query_uses, and dpc_account_query_solve bit for bit
 * against the accounting functions called directly. */
#include "harness.h"
#include "mech_fixture.h"

#include "dpcorr/account.h"
#include "dpcorr/mech.h"
#include "dpcorr/abi.h"
#include "dpcorr/field.h"
#include <stdio.h>

#include <math.h>
#include <string.h>

/* A query of `mode` with every value its mode may need given (each test removes or changes). */
static dpc_account_query given(dpc_account_mode mode)
{
    dpc_account_query q;
    dpc_account_query_init(&q, mode);
    q.sigma = 2.0;
    q.steps = 20;
    q.epsilon = 1.0;
    q.delta = 1e-5;
    return q;
}

static dpc_account_query mech_query(dpc_account_mode mode, dpc_mech_kind kind)
{
    dpc_account_query q = given(mode);
    q.with_mech = 1;
    q.mech.kind = kind;
    q.mech.nu = kind == DPC_MECH_NU ? 0.1 : 0.0;
    return q;
}

static dpc_status resolved(dpc_account_query *q, dpc_error *err)
{
    memset(err, 0, sizeof *err);
    return dpc_account_query_resolve(q, err);
}

/* A refusal: status DPC_E_INVALID naming `field`. */
static void refused(dpc_account_query q, const char *field, const char *what)
{
    dpc_error err;
    dpc_status st = resolved(&q, &err);
    CHECK(st == DPC_E_INVALID && !strcmp(err.field, field), "%s: status %d field '%s' (want %s)",
          what, (int)st, err.field, field);
}

static void test_defaults(void)
{
    dpc_account_query q;
    dpc_account_query_init(&q, DPC_ACCOUNT_MODE_EPSILON);
    CHECK(q.mode == DPC_ACCOUNT_MODE_EPSILON && isnan(q.sigma) && q.steps == 0 &&
              isnan(q.epsilon) && isnan(q.delta) && q.q == 1.0 && q.sensitivity == 1.0,
          "init: the values a query starts from");
    CHECK(q.accountant == DPC_ACCOUNT_AUTO && q.neighbor == DPC_ACCOUNT_AUTO &&
              q.sampling == DPC_ACCOUNT_AUTO && !q.with_mech && q.balls_in_bins == 0 &&
              q.max_steps == 0,
          "init: AUTO and unset");
    CHECK(q.part.kind == DPC_PART_MINSEP && q.part.k == 1 && q.part.b == 1, "init: pattern");
    CHECK(!strcmp(dpc_account_mode_name(DPC_ACCOUNT_MODE_STEPS), "steps") &&
              !strcmp(dpc_account_mode_name(DPC_ACCOUNT_MODE_DELTA), "delta"),
          "mode names");
}

static void test_neighbor_sampling(void)
{
    dpc_error err;
    dpc_account_query q = given(DPC_ACCOUNT_MODE_EPSILON);
    CHECK_OK(resolved(&q, &err), &err);
    CHECK(q.neighbor == DPC_NEIGHBOR_ADD_REMOVE && q.sampling == DPC_SAMPLING_NONE,
          "plain, q = 1: add-remove, no sampling (got %d %d)", q.neighbor, q.sampling);
    q = given(DPC_ACCOUNT_MODE_EPSILON);
    q.q = 0.1;
    CHECK_OK(resolved(&q, &err), &err);
    CHECK(q.sampling == DPC_SAMPLING_POISSON, "q < 1: Poisson by default");
    q = given(DPC_ACCOUNT_MODE_EPSILON);
    q.q = 0.1;
    q.sampling = DPC_SAMPLING_FIXED;
    q.neighbor = DPC_NEIGHBOR_REPLACE_ONE;
    CHECK_OK(resolved(&q, &err), &err);
    CHECK(q.sampling == DPC_SAMPLING_FIXED && q.neighbor == DPC_NEIGHBOR_REPLACE_ONE,
          "given values kept");
    q = given(DPC_ACCOUNT_MODE_EPSILON);
    q.sampling = DPC_SAMPLING_FIXED; /* q = 1: no sampling whatever was asked */
    CHECK_OK(resolved(&q, &err), &err);
    CHECK(q.sampling == DPC_SAMPLING_NONE, "q = 1: none");
    q = mech_query(DPC_ACCOUNT_MODE_EPSILON, DPC_MECH_NU);
    q.q = 0.5;
    CHECK_OK(resolved(&q, &err), &err);
    CHECK(q.neighbor == DPC_NEIGHBOR_ZERO_OUT && q.sampling == DPC_SAMPLING_NONE,
          "mechanism: zero-out, its run samples (got %d %d)", q.neighbor, q.sampling);
    q = mech_query(DPC_ACCOUNT_MODE_EPSILON, DPC_MECH_NU);
    q.sampling = DPC_SAMPLING_FIXED;
    refused(q, "sampling", "mechanism with fixed-size batches");
    q = given(DPC_ACCOUNT_MODE_EPSILON);
    q.q = 0.5;
    q.sampling = DPC_SAMPLING_NONE;
    refused(q, "sampling", "q < 1 without sampling");
    q = given(DPC_ACCOUNT_MODE_EPSILON);
    q.sampling = 7;
    refused(q, "sampling", "unknown sampling");
    q = given(DPC_ACCOUNT_MODE_EPSILON);
    q.neighbor = 3;
    refused(q, "neighbor", "unknown relation");
    q = given(DPC_ACCOUNT_MODE_EPSILON);
    q.sensitivity = 3.0;
    q.with_mech = 1;
    CHECK_OK(resolved(&q, &err), &err);
    CHECK(q.sensitivity == 1.0, "a mechanism has its own sensitivity");
}

static dpc_accountant acc_of(dpc_account_query q)
{
    dpc_error err;
    dpc_status st = resolved(&q, &err);
    CHECK(st == DPC_OK && q.opts.accountant == (dpc_accountant)q.accountant,
          "resolve: %s; opts follow", err.msg);
    return (dpc_accountant)q.accountant;
}

static void test_accountant(void)
{
    dpc_account_query q = given(DPC_ACCOUNT_MODE_EPSILON);
    CHECK(acc_of(q) == dpc_account_default_accountant() && acc_of(q) == DPC_ACCOUNTANT_PLD,
          "plain: the library's default");
    q.q = 0.1;
    CHECK(acc_of(q) == DPC_ACCOUNTANT_PLD, "Poisson: PLD");
    q.sampling = DPC_SAMPLING_FIXED;
    CHECK(acc_of(q) == DPC_ACCOUNTANT_RDP, "fixed-size batches: RDP (PLD has none)");
    q.accountant = DPC_ACCOUNTANT_ZCDP;
    CHECK(acc_of(q) == DPC_ACCOUNTANT_ZCDP, "given: kept");
    q = mech_query(DPC_ACCOUNT_MODE_EPSILON, DPC_MECH_NU);
    CHECK(acc_of(q) == DPC_ACCOUNTANT_GDP, "mechanism, q = 1: GDP (one Gaussian, exact)");
    q.q = 0.5;
    CHECK(acc_of(q) == DPC_ACCOUNTANT_PLD, "mechanism, q < 1: PLD");
    q = mech_query(DPC_ACCOUNT_MODE_EPSILON, DPC_MECH_IDENTITY);
    q.balls_in_bins = 4;
    CHECK(acc_of(q) == DPC_ACCOUNTANT_PLD, "balls in bins: PLD");
    q.accountant = 4;
    refused(q, "accountant", "unknown accountant");
}

static void test_required(void)
{
    static const struct {
        dpc_account_mode mode;
        const char *need[3];
    } modes[] = {{DPC_ACCOUNT_MODE_EPSILON, {"steps", "sigma", "delta"}},
                 {DPC_ACCOUNT_MODE_DELTA, {"steps", "sigma", "epsilon"}},
                 {DPC_ACCOUNT_MODE_SIGMA, {"steps", "delta", "epsilon"}},
                 {DPC_ACCOUNT_MODE_STEPS, {"sigma", "delta", "epsilon"}}};
    for (size_t m = 0; m < 4; m++) {
        for (size_t i = 0; i < 3; i++) {
            dpc_account_query q = given(modes[m].mode);
            const char *f = modes[m].need[i];
            if (!strcmp(f, "steps")) q.steps = 0;
            if (!strcmp(f, "sigma")) q.sigma = NAN;
            if (!strcmp(f, "delta")) q.delta = NAN;
            if (!strcmp(f, "epsilon")) q.epsilon = NAN;
            dpc_error err;
            dpc_status st = resolved(&q, &err);
            CHECK(st == DPC_E_INVALID && !strcmp(err.field, f) && strstr(err.msg, "required"),
                  "mode %s without %s: %s", dpc_account_mode_name(modes[m].mode), f, err.msg);
            CHECK(dpc_account_query_uses(&q, f), "mode %s uses %s",
                  dpc_account_mode_name(modes[m].mode), f);
        }
    }
    /* the answer is not read: epsilon in mode epsilon, sigma in mode sigma, ... */
    dpc_error err;
    dpc_account_query q = given(DPC_ACCOUNT_MODE_SIGMA);
    q.sigma = NAN;
    CHECK_OK(resolved(&q, &err), &err);
    CHECK(q.sigma == 1.0 && !dpc_account_query_uses(&q, "sigma"), "mode sigma: the unit event");
    q = given(DPC_ACCOUNT_MODE_STEPS);
    q.steps = 0;
    CHECK_OK(resolved(&q, &err), &err);
    CHECK(q.max_steps == 10000000 && dpc_account_query_uses(&q, "max_steps") &&
              !dpc_account_query_uses(&q, "steps"),
          "mode steps: max_steps 10^7 (got %zu)", q.max_steps);
    q = given(DPC_ACCOUNT_MODE_EPSILON);
    CHECK_OK(resolved(&q, &err), &err);
    CHECK(q.max_steps == 0 && !dpc_account_query_uses(&q, "max_steps"), "max_steps: steps only");
    q = given(DPC_ACCOUNT_MODE_SIGMA);
    q.epsilon = 0.0;
    refused(q, "epsilon", "mode sigma, epsilon 0");
    q = given(DPC_ACCOUNT_MODE_STEPS);
    q.epsilon = -1.0;
    refused(q, "epsilon", "mode steps, epsilon < 0");
    q = given(DPC_ACCOUNT_MODE_DELTA);
    q.epsilon = 0.0;
    CHECK_OK(resolved(&q, &err), &err); /* delta at epsilon 0 is a question */
    q = given(DPC_ACCOUNT_MODE_EPSILON);
    q.q = 0.0;
    refused(q, "q", "q = 0");
    q.q = 1.5;
    refused(q, "q", "q > 1");
    q.q = NAN;
    refused(q, "q", "q NaN");
    q = given(DPC_ACCOUNT_MODE_EPSILON);
    q.mode = (dpc_account_mode)9;
    refused(q, "mode", "unknown mode");
}

static void test_mech_run(void)
{
    dpc_error err;
    /* q < 1 without a cyclic pattern, modes epsilon and sigma: Poisson at every step */
    dpc_account_query q = mech_query(DPC_ACCOUNT_MODE_EPSILON, DPC_MECH_NU);
    q.q = 0.2;
    q.part.k = 3;
    CHECK(!dpc_account_query_uses(&q, "part"), "every step: the pattern is not read");
    CHECK_OK(resolved(&q, &err), &err);
    CHECK(q.every_route && !q.part_used, "every step: every route");
    /* cyclic: the pattern is the run's */
    q = mech_query(DPC_ACCOUNT_MODE_SIGMA, DPC_MECH_BSR);
    q.q = 0.2;
    q.part = (dpc_participation){DPC_PART_CYCLIC, 4, 5};
    q.mech.bands = 3;
    CHECK_OK(resolved(&q, &err), &err);
    CHECK(q.every_route && q.part_used && q.mech.bands == 3 && q.mech.steps == 20,
          "cyclic: its pattern, given bands kept, n = steps");
    /* modes delta and steps always read the pattern */
    q = mech_query(DPC_ACCOUNT_MODE_DELTA, DPC_MECH_NU);
    q.q = 0.2;
    CHECK_OK(resolved(&q, &err), &err);
    CHECK(q.part_used && q.every_route, "mode delta: the pattern");
    q = mech_query(DPC_ACCOUNT_MODE_EPSILON, DPC_MECH_NU);
    CHECK_OK(resolved(&q, &err), &err);
    CHECK(q.part_used && !q.every_route, "q = 1: the pattern, the event");
    /* balls in bins: modes epsilon and sigma, q = 1 */
    q = mech_query(DPC_ACCOUNT_MODE_EPSILON, DPC_MECH_IDENTITY);
    q.balls_in_bins = 5;
    CHECK(dpc_account_query_uses(&q, "bib_monte_carlo") && !dpc_account_query_uses(&q, "part"),
          "balls in bins: Monte Carlo option read, the pattern not");
    CHECK_OK(resolved(&q, &err), &err);
    CHECK(q.every_route && !q.part_used && q.balls_in_bins == 5, "balls in bins: every route");
    q.q = 0.5;
    refused(q, "balls_in_bins", "balls in bins with q < 1");
    q = mech_query(DPC_ACCOUNT_MODE_DELTA, DPC_MECH_IDENTITY);
    q.balls_in_bins = 5;
    refused(q, "balls_in_bins", "balls in bins in mode delta");
    q = given(DPC_ACCOUNT_MODE_EPSILON);
    q.balls_in_bins = 5;
    refused(q, "balls_in_bins", "balls in bins without a mechanism");
    /* BSR / BISR bands 0: the trainer's default for the run's pattern */
    q = mech_query(DPC_ACCOUNT_MODE_EPSILON, DPC_MECH_BSR);
    q.steps = 100;
    q.part = (dpc_participation){DPC_PART_MINSEP, 4, 20};
    CHECK_OK(resolved(&q, &err), &err);
    CHECK(q.mech.bands == dpc_mech_default_bands(100, 4, 20) && q.mech.bands == 20,
          "bsr bands from the pattern (got %zu)", q.mech.bands);
    q = mech_query(DPC_ACCOUNT_MODE_SIGMA, DPC_MECH_BISR);
    q.steps = 100;
    q.q = 0.5; /* every step: k = n, b = 1 */
    CHECK_OK(resolved(&q, &err), &err);
    CHECK(q.mech.bands == dpc_mech_default_bands(100, 100, 1), "bisr bands at every step");
    q = mech_query(DPC_ACCOUNT_MODE_EPSILON, DPC_MECH_BSR);
    q.steps = 100;
    q.balls_in_bins = 40; /* k = ceil(100 / 40) = 3 periods of 40 */
    CHECK_OK(resolved(&q, &err), &err);
    CHECK(q.mech.bands == dpc_mech_default_bands(100, 3, 40), "bsr bands under balls in bins");
    q = mech_query(DPC_ACCOUNT_MODE_STEPS, DPC_MECH_BSR);
    refused(q, "mech.bands", "mode steps, bsr without bands");
    q.mech.bands = 4;
    CHECK_OK(resolved(&q, &err), &err);
    CHECK(q.mech.steps == 1, "mode steps: the kind validated at n = 1");
}

static void test_uses(void)
{
    dpc_account_query q = given(DPC_ACCOUNT_MODE_EPSILON);
    CHECK(dpc_account_query_uses(&q, "sensitivity") && !dpc_account_query_uses(&q, "sampling") &&
              !dpc_account_query_uses(&q, "part") &&
              !dpc_account_query_uses(&q, "balls_in_bins"),
          "plain q = 1");
    CHECK(dpc_account_query_uses(&q, "pld_interval") && dpc_account_query_uses(&q, "pld_disc") &&
              dpc_account_query_uses(&q, "pld_tail") && !dpc_account_query_uses(&q, "orders") &&
              !dpc_account_query_uses(&q, "zcdp_conv"),
          "PLD's options");
    q.q = 0.5;
    CHECK(dpc_account_query_uses(&q, "sampling"), "q < 1: sampling");
    q.accountant = DPC_ACCOUNTANT_RDP;
    CHECK(dpc_account_query_uses(&q, "orders") && dpc_account_query_uses(&q, "rdp_refine") &&
              !dpc_account_query_uses(&q, "pld_interval"),
          "RDP's options");
    q.accountant = DPC_ACCOUNTANT_ZCDP;
    CHECK(dpc_account_query_uses(&q, "zcdp_conv"), "zCDP's option");
    q.accountant = DPC_ACCOUNTANT_GDP;
    CHECK(!dpc_account_query_uses(&q, "zcdp_conv") && !dpc_account_query_uses(&q, "orders"),
          "GDP has none");
    q = mech_query(DPC_ACCOUNT_MODE_EPSILON, DPC_MECH_NU);
    CHECK(!dpc_account_query_uses(&q, "sensitivity") && !dpc_account_query_uses(&q, "sampling") &&
              dpc_account_query_uses(&q, "balls_in_bins") &&
              !dpc_account_query_uses(&q, "bib_monte_carlo") &&
              !dpc_account_query_uses(&q, "pld_interval"),
          "mechanism, q = 1 (GDP)");
    q.mode = DPC_ACCOUNT_MODE_STEPS;
    CHECK(!dpc_account_query_uses(&q, "balls_in_bins"), "no balls in bins in mode steps");
    CHECK(!dpc_account_query_uses(&q, "no_such_field") && !dpc_account_query_uses(NULL, "q"),
          "unknown field, NULL");
}

static void test_idempotent(void)
{
    dpc_account_query q = mech_query(DPC_ACCOUNT_MODE_SIGMA, DPC_MECH_BSR);
    q.q = 0.3;
    dpc_error err;
    CHECK_OK(resolved(&q, &err), &err);
    dpc_account_query again = q;
    CHECK_OK(resolved(&again, &err), &err);
    CHECK(again.accountant == q.accountant && again.neighbor == q.neighbor &&
              again.sampling == q.sampling && again.mech.bands == q.mech.bands &&
              again.sigma == q.sigma && again.every_route == q.every_route &&
              again.part_used == q.part_used && again.max_steps == q.max_steps,
          "a resolved query resolves to itself");
}

/* ---- solve against the functions it calls -------------------------------------------------- */

static dpc_account_solution solve(const dpc_account_query *q)
{
    dpc_account_solution s;
    dpc_error err = {0};
    CHECK_OK(dpc_account_query_solve(q, &s, &err), &err);
    return s;
}

static int same_result(const dpc_account_result *a, const dpc_account_result *b)
{
    return a->epsilon == b->epsilon && a->delta == b->delta && a->upper_bound == b->upper_bound &&
           (a->order == b->order || (isnan(a->order) && isnan(b->order)));
}

static dpc_gauss_event plain(double sigma, double q, dpc_sampling smp, size_t steps)
{
    dpc_gauss_event g;
    dpc_gauss_event_init(&g);
    g.sigma = sigma;
    g.q = q;
    g.sampling = smp;
    g.count = steps;
    return g;
}

static void test_solve_plain(void)
{
    dpc_error err = {0};
    dpc_account_opts o;
    dpc_account_opts_init(&o, DPC_ACCOUNTANT_PLD);
    dpc_account_result want;
    /* epsilon: DP-SGD, Poisson 0.05, 40 steps */
    dpc_account_query q = given(DPC_ACCOUNT_MODE_EPSILON);
    q.q = 0.05;
    q.steps = 40;
    q.sigma = 1.1;
    dpc_account_solution s = solve(&q);
    dpc_gauss_event g = plain(1.1, 0.05, DPC_SAMPLING_POISSON, 40);
    dpc_event ev = {DPC_NEIGHBOR_ADD_REMOVE, 1, &g};
    CHECK_OK(dpc_account_epsilon(&ev, &o, 1e-5, &want, &err), &err);
    CHECK(same_result(&s.result, &want) && s.sigma == 1.1 && s.steps == 40 && !s.have_info,
          "epsilon: %.17g vs %.17g", s.result.epsilon, want.epsilon);
    /* delta */
    q.mode = DPC_ACCOUNT_MODE_DELTA;
    q.epsilon = 1.5;
    s = solve(&q);
    CHECK_OK(dpc_account_delta(&ev, &o, 1.5, &want, &err), &err);
    CHECK(same_result(&s.result, &want), "delta: %.17g vs %.17g", s.result.delta, want.delta);
    /* sigma: the calibration, then epsilon on the calibration's grid (epsilon 12 > 10 widens it) */
    q.mode = DPC_ACCOUNT_MODE_SIGMA;
    q.epsilon = 12.0;
    s = solve(&q);
    double z;
    dpc_gauss_event g1 = plain(1.0, 0.05, DPC_SAMPLING_POISSON, 40);
    dpc_event ev1 = {DPC_NEIGHBOR_ADD_REMOVE, 1, &g1};
    CHECK_OK(dpc_account_calibrate_sigma(&ev1, &o, 12.0, 1e-5, &z, &err), &err);
    dpc_account_opts og = o;
    dpc_account_opts_for_target(&og, 12.0);
    dpc_gauss_event gz = plain(z, 0.05, DPC_SAMPLING_POISSON, 40);
    dpc_event evz = {DPC_NEIGHBOR_ADD_REMOVE, 1, &gz};
    CHECK_OK(dpc_account_epsilon(&evz, &og, 1e-5, &want, &err), &err);
    CHECK(s.sigma == z && same_result(&s.result, &want) && s.opts.pld_interval == og.pld_interval &&
              og.pld_interval > o.pld_interval,
          "sigma: %.17g vs %.17g, grid %g", s.sigma, z, s.opts.pld_interval);
    /* steps */
    q.mode = DPC_ACCOUNT_MODE_STEPS;
    q.epsilon = 2.0;
    q.sigma = 1.1;
    q.max_steps = 5000;
    s = solve(&q);
    size_t n;
    dpc_gauss_event gs = plain(1.1, 0.05, DPC_SAMPLING_POISSON, 1);
    dpc_event evs = {DPC_NEIGHBOR_ADD_REMOVE, 1, &gs};
    CHECK_OK(dpc_account_calibrate_steps(&evs, 0, &o, 2.0, 1e-5, 5000, &n, &err), &err);
    gs.count = n;
    CHECK_OK(dpc_account_epsilon(&evs, &o, 1e-5, &want, &err), &err);
    CHECK(s.steps == n && same_result(&s.result, &want), "steps: %zu vs %zu", s.steps, n);
    /* fixed-size batches, replace-one: RDP by default */
    q = given(DPC_ACCOUNT_MODE_EPSILON);
    q.q = 0.05;
    q.steps = 100;
    q.sampling = DPC_SAMPLING_FIXED;
    q.neighbor = DPC_NEIGHBOR_REPLACE_ONE;
    q.sensitivity = 2.0;
    s = solve(&q);
    dpc_gauss_event gf = plain(2.0, 0.05, DPC_SAMPLING_FIXED, 100);
    gf.sensitivity = 2.0;
    dpc_event evf = {DPC_NEIGHBOR_REPLACE_ONE, 1, &gf};
    dpc_account_opts orr;
    dpc_account_opts_init(&orr, DPC_ACCOUNTANT_RDP);
    CHECK_OK(dpc_account_epsilon(&evf, &orr, 1e-5, &want, &err), &err);
    CHECK(same_result(&s.result, &want) && s.opts.accountant == DPC_ACCOUNTANT_RDP,
          "fixed: %.17g vs %.17g", s.result.epsilon, want.epsilon);
    /* the event's own refusal comes back (replace-one with Poisson sampling) */
    q = given(DPC_ACCOUNT_MODE_EPSILON);
    q.q = 0.1;
    q.neighbor = DPC_NEIGHBOR_REPLACE_ONE;
    dpc_account_solution bad;
    dpc_status st = dpc_account_query_solve(&q, &bad, &err);
    CHECK(st == DPC_E_UNSUPPORTED && strstr(err.field, "neighbor"), "replace-one, Poisson: %s",
          err.msg);
    q = given(DPC_ACCOUNT_MODE_EPSILON);
    q.steps = 0;
    st = dpc_account_query_solve(&q, &bad, &err);
    CHECK(st == DPC_E_INVALID && !strcmp(err.field, "steps"), "solve resolves: %s", err.msg);
}

static void test_solve_mech(void)
{
    dpc_error err = {0};
    dpc_account_result want;
    dpc_account_mech_info info;
    dpc_account_opts gdp, pld;
    dpc_account_opts_init(&gdp, DPC_ACCOUNTANT_GDP);
    dpc_account_opts_init(&pld, DPC_ACCOUNTANT_PLD);
    /* q = 1: the whole-run event, GDP */
    dpc_account_query q = mech_query(DPC_ACCOUNT_MODE_EPSILON, DPC_MECH_NU);
    q.steps = 60;
    q.part = (dpc_participation){DPC_PART_MINSEP, 3, 20};
    dpc_account_solution s = solve(&q);
    dpc_mech *m = mech_of(DPC_MECH_NU, 60, 0.1, 0);
    dpc_gauss_event g;
    CHECK_OK(dpc_account_mech_event(m, &q.part, 2.0, 1.0, &g, &info, &err), &err);
    dpc_event ev = {DPC_NEIGHBOR_ZERO_OUT, 1, &g};
    CHECK_OK(dpc_account_epsilon(&ev, &gdp, 1e-5, &want, &err), &err);
    CHECK(same_result(&s.result, &want) && s.have_info && s.info.sensitivity == info.sensitivity &&
              s.part.k == 3 && s.part.b == 20,
          "mech q = 1: %.17g vs %.17g", s.result.epsilon, want.epsilon);
    /* delta of the same run */
    q.mode = DPC_ACCOUNT_MODE_DELTA;
    s = solve(&q);
    CHECK_OK(dpc_account_delta(&ev, &gdp, 1.0, &want, &err), &err);
    CHECK(same_result(&s.result, &want), "mech delta: %.17g vs %.17g", s.result.delta,
          want.delta);
    /* sigma at q = 1: dpc_account_mech_calibrate */
    q.mode = DPC_ACCOUNT_MODE_SIGMA;
    s = solve(&q);
    double z;
    CHECK_OK(dpc_account_mech_calibrate(m, &q.part, 1.0, &gdp, 1.0, 1e-5, &z, NULL, NULL, &err),
             &err);
    CHECK(s.sigma == z, "mech sigma: %.17g vs %.17g", s.sigma, z);
    dpc_mech_free(m);
    /* q < 1 without a cyclic pattern: every route, Poisson at every step */
    q = mech_query(DPC_ACCOUNT_MODE_EPSILON, DPC_MECH_IDENTITY);
    q.steps = 30;
    q.q = 0.1;
    q.sigma = 1.0;
    s = solve(&q);
    m = mech_of(DPC_MECH_IDENTITY, 30, 0.0, 0);
    dpc_mech_run run = {m, {DPC_PART_CYCLIC, 30, 1}, 0.1, 0, NULL, 0};
    CHECK_OK(dpc_account_mech_epsilon(&run, 1.0, &pld, 1e-5, &want, &info, &err), &err);
    CHECK(same_result(&s.result, &want) && s.info.route == info.route && s.part.k == 30 &&
              s.part.b == 1 && s.part.kind == DPC_PART_CYCLIC,
          "every step: %.17g vs %.17g", s.result.epsilon, want.epsilon);
    /* its calibration: dpc_account_mech_calibrate_run */
    q.mode = DPC_ACCOUNT_MODE_SIGMA;
    s = solve(&q);
    CHECK_OK(dpc_account_mech_calibrate_run(&run, &pld, 1.0, 1e-5, &z, NULL, &err), &err);
    CHECK(s.sigma == z, "every step sigma: %.17g vs %.17g", s.sigma, z);
    dpc_mech_free(m);
    /* balls in bins (identity): every route with the bins' pattern */
    q = mech_query(DPC_ACCOUNT_MODE_EPSILON, DPC_MECH_IDENTITY);
    q.steps = 20;
    q.balls_in_bins = 10;
    s = solve(&q);
    m = mech_of(DPC_MECH_IDENTITY, 20, 0.0, 0);
    dpc_mech_run bib = {m, {DPC_PART_CYCLIC, 2, 10}, 1.0, 1, NULL, 0};
    CHECK_OK(dpc_account_mech_epsilon(&bib, 2.0, &pld, 1e-5, &want, &info, &err), &err);
    CHECK(same_result(&s.result, &want) && s.part.k == 2 && s.part.b == 10,
          "balls in bins: %.17g vs %.17g", s.result.epsilon, want.epsilon);
    dpc_mech_free(m);
    /* mode steps: dpc_account_mech_steps */
    q = mech_query(DPC_ACCOUNT_MODE_STEPS, DPC_MECH_NU);
    q.sigma = 3.0;
    q.epsilon = 2.0;
    q.max_steps = 4000;
    q.part = (dpc_participation){DPC_PART_MINSEP, 2, 50};
    s = solve(&q);
    dpc_mech_params p;
    dpc_mech_params_init(&p);
    p.kind = DPC_MECH_NU;
    p.nu = 0.1;
    p.steps = 1;
    size_t n;
    CHECK_OK(dpc_account_mech_steps(&p, &q.part, 3.0, 1.0, &gdp, 2.0, 1e-5, 4000, &n, &err), &err);
    CHECK(s.steps == n && s.result.epsilon <= 2.0, "mech steps: %zu vs %zu", s.steps, n);
    /* the mechanism's own refusal comes back naming its field */
    q = mech_query(DPC_ACCOUNT_MODE_EPSILON, DPC_MECH_NU);
    q.mech.nu = 1.5;
    dpc_account_solution bad;
    dpc_status st = dpc_account_query_solve(&q, &bad, &err);
    CHECK(st != DPC_OK && strstr(err.field, "nu"), "nu 1.5: %s (field %s)", err.msg, err.field);
}


/* Mode convert: the CLI's rule for the accountant, what it requires, and the conversions. */
static void test_convert(void)
{
    dpc_error err = {0};
    dpc_account_query q;
    dpc_account_query_init(&q, DPC_ACCOUNT_MODE_CONVERT);
    q.rho = 0.1;
    q.delta = 1e-6;
    q.steps = 10;
    CHECK(dpc_account_query_uses(&q, "rho") && dpc_account_query_uses(&q, "zcdp_conv") &&
              !dpc_account_query_uses(&q, "sigma") && !dpc_account_query_uses(&q, "sampling"),
          "convert reads the totals, not an event");
    dpc_account_solution s = solve(&q);
    double eps, z;
    CHECK_OK(dpc_zcdp_epsilon(0.1, 1e-6, DPC_ZCDP_TIGHT, &eps, NULL, &err), &err);
    CHECK_OK(dpc_zcdp_sigma_for(0.1, 10, &z, &err), &err);
    CHECK(s.opts.accountant == DPC_ACCOUNTANT_ZCDP && s.result.epsilon == eps &&
              s.result.delta == 1e-6 && s.result.rho == 0.1 && s.sigma == z && s.steps == 10,
          "rho, delta -> epsilon %.17g vs %.17g", s.result.epsilon, eps);
    /* mu given: GDP by default; epsilon -> delta; steps 0 -> 1 */
    dpc_account_query_init(&q, DPC_ACCOUNT_MODE_CONVERT);
    q.mu = 0.5;
    q.epsilon = 1.0;
    s = solve(&q);
    double d;
    CHECK_OK(dpc_gdp_delta(0.5, 1.0, &d, &err), &err);
    CHECK_OK(dpc_gdp_sigma_for(0.5, 1, &z, &err), &err);
    CHECK(s.opts.accountant == DPC_ACCOUNTANT_GDP && s.result.delta == d && s.sigma == z &&
              s.steps == 1 && isnan(s.result.rho),
          "mu, epsilon -> delta");
    /* both epsilon and delta: the largest total (bun-steinke asked) */
    dpc_account_query_init(&q, DPC_ACCOUNT_MODE_CONVERT);
    q.epsilon = 1.0;
    q.delta = 1e-5;
    q.opts.zcdp_conv = DPC_ZCDP_BUN_STEINKE;
    s = solve(&q);
    double rho;
    CHECK_OK(dpc_zcdp_rho_for(1.0, 1e-5, DPC_ZCDP_BUN_STEINKE, &rho, &err), &err);
    CHECK(s.result.rho == rho, "epsilon, delta -> rho");
    q.accountant = DPC_ACCOUNTANT_GDP;
    s = solve(&q);
    double mu;
    CHECK_OK(dpc_gdp_mu_for(1.0, 1e-5, &mu, &err), &err);
    CHECK(s.result.mu == mu, "epsilon, delta -> mu (gdp asked)");
    /* refusals */
    dpc_account_query_init(&q, DPC_ACCOUNT_MODE_CONVERT);
    q.rho = 0.1;
    refused(q, "rho", "rho without epsilon or delta");
    q.epsilon = 1.0;
    q.delta = 1e-5;
    refused(q, "rho", "rho with both");
    dpc_account_query_init(&q, DPC_ACCOUNT_MODE_CONVERT);
    q.mu = 0.5;
    q.delta = 1e-5;
    q.epsilon = NAN;
    q.accountant = DPC_ACCOUNTANT_GDP;
    CHECK_OK(resolved(&q, &err), &err);
    dpc_account_query_init(&q, DPC_ACCOUNT_MODE_CONVERT);
    q.epsilon = 1.0;
    refused(q, "rho", "neither a total nor both");
    q.delta = 1e-5;
    q.accountant = DPC_ACCOUNTANT_PLD;
    refused(q, "accountant", "convert with pld");
    dpc_account_query_init(&q, DPC_ACCOUNT_MODE_CONVERT);
    q.rho = -1.0;
    q.delta = 1e-5;
    dpc_account_solution bad;
    CHECK(dpc_account_query_solve(&q, &bad, &err) == DPC_E_INVALID && !strcmp(err.field, "rho"),
          "a negative rho: the conversion's refusal (%s)", err.field);
}

/* The record: the keys each configuration prints, the bounded writer. */
static void test_json(void)
{
    char buf[4096];
    dpc_account_query q = given(DPC_ACCOUNT_MODE_EPSILON);
    q.accountant = DPC_ACCOUNTANT_RDP;
    dpc_account_solution s = solve(&q);
    dpc_error err = {0};
    CHECK_OK(dpc_account_query_resolve(&q, &err), &err);
    size_t n = dpc_account_solution_json(&q, &s, buf, sizeof buf);
    CHECK(n == strlen(buf) && !strncmp(buf, "{\"mode\": \"epsilon\", \"accountant\": \"rdp\"", 39) &&
              strstr(buf, "\"order\": ") && !strstr(buf, "\"mech\"") &&
              strstr(buf, "\"neighbor\": \"add-remove\"") &&
              !strcmp(buf + n - 20, "\"upper_bound\": true}"),
          "plain rdp: %s", buf);
    char small[16];
    size_t m = dpc_account_solution_json(&q, &s, small, sizeof small);
    CHECK(m == n && strlen(small) == sizeof small - 1 && !strncmp(small, buf, sizeof small - 1),
          "truncated like snprintf");
    CHECK(dpc_account_solution_json(&q, &s, NULL, 0) == n, "length only");
    /* a mechanism by every route: its pattern, the routes and their reasons */
    q = mech_query(DPC_ACCOUNT_MODE_EPSILON, DPC_MECH_NU);
    q.q = 0.1;
    q.steps = 16;
    s = solve(&q);
    CHECK_OK(dpc_account_query_resolve(&q, &err), &err);
    dpc_account_solution_json(&q, &s, buf, sizeof buf);
    CHECK(strstr(buf, "\"mech\": \"nu\", \"participations\": 16, \"min_sep\": 1") &&
              strstr(buf, "\"epsilon_whole-run\": ") && strstr(buf, "\"why_bandmf\": ") &&
              strstr(buf, "\"epsilon_single\": ") && strstr(buf, "\"interval\": ") &&
              strstr(buf, "\"neighbor\": \"zero-out\""),
          "every route: %s", buf);
    CHECK(dpc_account_solution_json(NULL, &s, buf, sizeof buf) == 4 && !strcmp(buf, "null"),
          "NULL: null");
}

/* The coverage proof of a table, and its refusal once the first field is dropped. */
static void verify_table(const dpc_field_table *t)
{
    dpc_error err = {0};
    CHECK(t && dpc_field_table_verify(t, &err) == DPC_OK, "%s: %s", t ? t->name : "NULL",
          err.msg);
    CHECK(t && t->size == dpc_abi_sizeof(t->name), "%s: the table's size is the ABI's",
          t ? t->name : "NULL");
    if (!t || t->count < 2) return;
    dpc_field_table cut = *t;
    cut.fields = t->fields + 1;
    cut.count = t->count - 1;
    CHECK(dpc_field_table_verify(&cut, &err) != DPC_OK, "%s without its first field verifies",
          t->name);
}

/* The tables of dpc_account_query, dpc_event, dpc_participation and dpc_workload cover their
 * structs; dpc_account_query_init writes what it wrote by hand before the table, byte for
 * byte, in every mode; resolve refuses a value outside the range of each field it checks
 * itself, naming the field; the event, the pattern and the workload refuse through theirs. */
static void test_tables(void)
{
    const dpc_field_table *t = dpc_account_query_fields();
    verify_table(t);
    verify_table(dpc_event_fields());
    verify_table(dpc_participation_fields());
    verify_table(dpc_workload_fields());
    for (int mode = 0; mode <= DPC_ACCOUNT_MODE_CONVERT; mode++) {
        dpc_account_query q, old;
        memset(&q, 0x5a, sizeof q);
        dpc_account_query_init(&q, (dpc_account_mode)mode);
        memset(&old, 0, sizeof old); /* the old _init, verbatim */
        old.mode = (dpc_account_mode)mode;
        old.sigma = old.epsilon = old.delta = old.rho = old.mu = NAN;
        old.q = 1.0;
        old.sampling = old.neighbor = old.accountant = DPC_ACCOUNT_AUTO;
        old.sensitivity = 1.0;
        dpc_account_opts_init(&old.opts, dpc_account_default_accountant());
        dpc_mech_params_init(&old.mech);
        old.part.kind = DPC_PART_MINSEP;
        old.part.k = old.part.b = 1;
        CHECK(!memcmp(&q, &old, sizeof q), "mode %d: init is the old init byte for byte", mode);
    }
    dpc_participation p;
    memset(&p, 0x5a, sizeof p);
    dpc_participation_init(&p);
    CHECK(p.kind == DPC_PART_MINSEP && p.k == 1 && p.b == 1, "participation defaults");
    char text[64];
    dpc_field_format_default(dpc_field_find(t, "sigma", NULL), text, sizeof text);
    CHECK(!strcmp(text, "not given"), "sigma's default in words: '%s'", text);
    /* resolve's own fields: just outside each range, named */
    static const struct { const char *field; double v; } bad[] = {
        {"mode", 5},        {"q", 0},           {"q", 1.5},       {"q", NAN},
        {"sampling", -2},   {"sampling", 3},    {"neighbor", -2}, {"neighbor", 3},
        {"accountant", -2}, {"accountant", 4},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dpc_account_query q = given(DPC_ACCOUNT_MODE_EPSILON);
        dpc_error err;
        CHECK_OK(dpc_field_set(dpc_field_find(t, bad[i].field, NULL), &q, bad[i].v, &err), &err);
        refused(q, bad[i].field, bad[i].field);
    }
    /* the question's values, where the mode reads them: just outside each row's range, refused
     * by resolve under the query's name (before: by the event or not at all); the same value in
     * a mode that does not read the field passes */
    static const struct { const char *field; double v; int mode, mech, ignored_in; } vbad[] = {
        {"sigma", 0, DPC_ACCOUNT_MODE_EPSILON, 0, DPC_ACCOUNT_MODE_SIGMA},
        {"sigma", -1, DPC_ACCOUNT_MODE_DELTA, 1, DPC_ACCOUNT_MODE_SIGMA},
        {"steps", 1099511627777.0, DPC_ACCOUNT_MODE_EPSILON, 0, DPC_ACCOUNT_MODE_STEPS},
        {"steps", 1099511627777.0, DPC_ACCOUNT_MODE_CONVERT, 0, DPC_ACCOUNT_MODE_STEPS},
        {"epsilon", -1e-9, DPC_ACCOUNT_MODE_DELTA, 0, DPC_ACCOUNT_MODE_EPSILON},
        {"delta", 0, DPC_ACCOUNT_MODE_EPSILON, 0, DPC_ACCOUNT_MODE_DELTA},
        {"delta", 1, DPC_ACCOUNT_MODE_SIGMA, 1, DPC_ACCOUNT_MODE_DELTA},
        {"delta", 1, DPC_ACCOUNT_MODE_CONVERT, 0, DPC_ACCOUNT_MODE_DELTA},
        {"rho", -1e-9, DPC_ACCOUNT_MODE_CONVERT, 0, DPC_ACCOUNT_MODE_EPSILON},
        {"mu", 0, DPC_ACCOUNT_MODE_CONVERT, 0, DPC_ACCOUNT_MODE_EPSILON},
        {"sensitivity", 0, DPC_ACCOUNT_MODE_EPSILON, 0, -1},
        {"sensitivity", INFINITY, DPC_ACCOUNT_MODE_STEPS, 0, -1},
        {"max_steps", 1099511627777.0, DPC_ACCOUNT_MODE_STEPS, 0, DPC_ACCOUNT_MODE_EPSILON},
        {"balls_in_bins", 1099511627777.0, DPC_ACCOUNT_MODE_EPSILON, 1, -1},
    };
    for (size_t i = 0; i < sizeof vbad / sizeof vbad[0]; i++) {
        for (int pass = 0; pass < 2; pass++) {
            int mode = pass ? vbad[i].ignored_in : vbad[i].mode;
            if (mode < 0) continue;
            dpc_account_query q = vbad[i].mech ? mech_query((dpc_account_mode)mode, DPC_MECH_NU)
                                               : given((dpc_account_mode)mode);
            if (mode == DPC_ACCOUNT_MODE_CONVERT && strcmp(vbad[i].field, "rho") &&
                strcmp(vbad[i].field, "mu"))
                q.epsilon = NAN, q.rho = 0.5; /* rho with delta: a convert question */
            if (mode == DPC_ACCOUNT_MODE_CONVERT && !strcmp(vbad[i].field, "delta"))
                q.delta = 1e-5, q.epsilon = NAN, q.rho = 0.5;
            if (mode == DPC_ACCOUNT_MODE_CONVERT && !strcmp(vbad[i].field, "mu"))
                q.epsilon = NAN;
            if (mode == DPC_ACCOUNT_MODE_CONVERT && !strcmp(vbad[i].field, "rho"))
                q.epsilon = NAN;
            dpc_error verr;
            CHECK_OK(dpc_field_set(dpc_field_find(t, vbad[i].field, NULL), &q, vbad[i].v, &verr),
                     &verr);
            if (!pass) {
                refused(q, vbad[i].field, vbad[i].field);
                continue;
            }
            dpc_error e2;
            CHECK(resolved(&q, &e2) == DPC_OK, "%s %g ignored in mode %s: %s", vbad[i].field,
                  vbad[i].v, dpc_account_mode_name((dpc_account_mode)mode), e2.msg);
        }
    }
    /* the PLD grid step: at most 1 (the row), and a calibration at the coarsest grid works
     * (its coarse secant grids stay within the row: before, 10x the step was evaluated) */
    {
        dpc_account_query pq = given(DPC_ACCOUNT_MODE_EPSILON);
        pq.accountant = DPC_ACCOUNTANT_PLD;
        pq.opts.pld_interval = 1.5;
        dpc_account_solution sol;
        dpc_error perr;
        CHECK(dpc_account_query_solve(&pq, &sol, &perr) == DPC_E_INVALID &&
                  !strcmp(perr.field, "pld_interval"),
              "pld_interval 1.5 refused: %s %s", perr.field, perr.msg);
        pq = given(DPC_ACCOUNT_MODE_SIGMA);
        pq.accountant = DPC_ACCOUNTANT_PLD;
        pq.q = 0.1;
        pq.steps = 100;
        pq.epsilon = 2.0;
        pq.opts.pld_interval = 1.0;
        CHECK_OK(dpc_account_query_solve(&pq, &sol, &perr), &perr);
        CHECK(sol.result.epsilon <= 2.0 && sol.sigma > 0.0,
              "sigma at the coarsest grid: %g (epsilon %g)", sol.sigma, sol.result.epsilon);
    }
    /* dpc_event: the relation and the count of components, through its table */
    dpc_gauss_event g;
    dpc_gauss_event_init(&g);
    dpc_error err;
    dpc_event ev = {(dpc_neighbor)3, 1, &g};
    CHECK(dpc_event_check(&ev, DPC_ACCOUNTANT_PLD, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "neighbor"), "event neighbor 3: '%s' %s", err.field, err.msg);
    ev = (dpc_event){DPC_NEIGHBOR_ADD_REMOVE, 0, &g};
    CHECK(dpc_event_check(&ev, DPC_ACCOUNTANT_PLD, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "nparts"), "event without components: '%s'", err.field);
    /* the pattern and the workload, as the sensitivity and the error refuse them */
    dpc_mech_params mp;
    dpc_mech_params_init(&mp);
    mp.steps = 8;
    dpc_mech *m = NULL;
    CHECK_OK(dpc_mech_new(&m, &mp, &err), &err);
    static const struct { const char *field; double v; } pbad[] = {
        {"k", 0}, {"b", 0}, {"kind", 2}};
    for (size_t i = 0; m && i < 3; i++) {
        dpc_participation_init(&p);
        CHECK_OK(dpc_field_set(dpc_field_find(dpc_participation_fields(), pbad[i].field, NULL),
                               &p, pbad[i].v, &err), &err);
        dpc_sensitivity sens;
        char want[32];
        snprintf(want, sizeof want, "part.%s", pbad[i].field);
        CHECK(dpc_mech_sensitivity(m, &p, &sens, &err) == DPC_E_INVALID &&
                  !strcmp(err.field, want), "%s refused: '%s' %s", want, err.field, err.msg);
    }
    dpc_workload wl[2] = {{1.0, 1.0}, {0.0, 0.0}};
    for (int i = 0; m && i < 2; i++) {
        dpc_mech_error me;
        CHECK(dpc_mech_error_of(m, &wl[i], &me, &err) == DPC_E_INVALID &&
                  !strcmp(err.field, i ? "w.decay" : "w.momentum"), "workload %d: '%s' %s", i,
              err.field, err.msg);
    }
    dpc_mech_free(m);
}

int main(void)
{
    test_tables();
    test_defaults();
    test_neighbor_sampling();
    test_accountant();
    test_required();
    test_mech_run();
    test_uses();
    test_idempotent();
    test_solve_plain();
    test_solve_mech();
    test_convert();
    test_json();
    return TEST_SUMMARY();
}
