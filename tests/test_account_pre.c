/* test_account_pre.c — a mechanism run composed with pre-releases (private data statistics made
 * before training, dpc_mech_run.pre): the whole-run route equals the GDP composition computed by
 * hand (mu^2 adds up), the amplified banded-MF route equals the RDP curves summed order by order
 * (RDP) and the PLDs composed by hand (PLD), calibration lands on the private side above the
 * noise of the bare run, MMCC is skipped, and bad pre-releases are refused. */
#include "dpcorr/account.h"
#include "harness.h"

#include <math.h>
#include <string.h>

static dpc_mech *bsr(size_t n, size_t bands)
{
    dpc_mech_params p;
    dpc_mech_params_init(&p);
    p.kind = DPC_MECH_BSR;
    p.steps = n;
    p.bands = bands;
    p.momentum = 0.9;
    dpc_mech *m = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_mech_new(&m, &p, &err), &err);
    return m;
}

static dpc_gauss_event pre_of(double z)
{
    dpc_gauss_event e;
    dpc_gauss_event_init(&e);
    e.sigma = z;
    return e;
}

/* No sampling: the run is one Gaussian with noise multiplier run_sigma (mu = 1/run_sigma);
 * composed with Gaussians of noise multipliers z_k, mu^2 = 1/run_sigma^2 + sum 1/z_k^2. */
static void test_whole_run(void)
{
    dpc_error err = {0};
    dpc_mech *m = bsr(40, 4);
    dpc_gauss_event pre[2] = {pre_of(5.0), pre_of(9.0)};
    dpc_mech_run bare = {m, {DPC_PART_MINSEP, 4, 10}, 1.0, 0, NULL, 0};
    dpc_mech_run run = bare;
    run.pre = pre;
    run.n_pre = 2;
    dpc_account_opts o;
    dpc_account_opts_init(&o, DPC_ACCOUNTANT_PLD);
    dpc_account_result r0, r;
    dpc_account_mech_info i0, info;
    CHECK_OK(dpc_account_mech_epsilon(&bare, 2.0, &o, 1e-5, &r0, &i0, &err), &err);
    CHECK_OK(dpc_account_mech_epsilon(&run, 2.0, &o, 1e-5, &r, &info, &err), &err);
    double mu = sqrt(1.0 / (i0.run_sigma * i0.run_sigma) + 1.0 / 25 + 1.0 / 81), want;
    CHECK_OK(dpc_gdp_epsilon(mu, 1e-5, &want, &err), &err);
    CHECK(info.route == DPC_ROUTE_WHOLE_RUN && fabs(r.epsilon - want) <= 1e-9 * want,
          "whole run with pre: %.12g, by hand %.12g", r.epsilon, want);
    CHECK(r.epsilon > r0.epsilon, "the pre-releases cost nothing: %g vs %g", r.epsilon,
          r0.epsilon);
    dpc_mech_free(m);
}

/* Cyclic Poisson with a b-banded strategy: rounds = ceil(n / b) compositions of the
 * subsampled Gaussian, then the pre-releases. */
static void test_bandmf(void)
{
    dpc_error err = {0};
    size_t n = 64, b = 4, rounds = 16;
    double z = 1.3, q = 0.1, zp = 4.0, delta = 1e-5;
    dpc_mech *m = bsr(n, b);
    dpc_gauss_event pre = pre_of(zp);
    dpc_mech_run run = {m, {DPC_PART_CYCLIC, rounds, b}, q, 0, &pre, 1};
    /* RDP: the curves add order by order */
    dpc_account_opts o;
    dpc_account_opts_init(&o, DPC_ACCOUNTANT_RDP);
    dpc_account_result r;
    dpc_account_mech_info info;
    CHECK_OK(dpc_account_mech_epsilon(&run, z, &o, delta, &r, &info, &err), &err);
    const double *orders;
    size_t no;
    dpc_rdp_default_orders(&orders, &no);
    double rdp[256], want;
    CHECK(no <= 256, "order grid");
    CHECK_OK(dpc_rdp_poisson_gaussian(q, z, orders, no, rdp, &err), &err);
    for (size_t i = 0; i < no; i++) rdp[i] = rounds * rdp[i] + orders[i] / (2 * zp * zp);
    CHECK_OK(dpc_rdp_epsilon(orders, rdp, no, delta, &want, NULL, &err), &err);
    CHECK(info.route == DPC_ROUTE_BANDMF && info.rounds == rounds &&
              fabs(r.epsilon - want) <= 1e-9 * want,
          "rdp: route %d, %.12g vs by hand %.12g", (int)info.route, r.epsilon, want);
    /* PLD: the subsampled Gaussian self-composed, then composed with the pre-release's PLD */
    dpc_account_opts_init(&o, DPC_ACCOUNTANT_PLD);
    CHECK_OK(dpc_account_mech_epsilon(&run, z, &o, delta, &r, &info, &err), &err);
    dpc_pld_params par;
    dpc_pld_params_init(&par);
    dpc_pld *one = NULL, *many = NULL, *g = NULL, *all = NULL;
    CHECK_OK(dpc_pld_new_gaussian(&one, z, q, &par, &err), &err);
    CHECK_OK(dpc_pld_self_compose(&many, one, rounds, &err), &err);
    CHECK_OK(dpc_pld_new_gaussian(&g, zp, 1.0, &par, &err), &err);
    CHECK_OK(dpc_pld_compose(&all, many, g, &err), &err);
    CHECK_OK(dpc_pld_epsilon(all, delta, &want, &err), &err);
    CHECK(info.route == DPC_ROUTE_BANDMF && fabs(r.epsilon - want) <= 1e-3 * want,
          "pld: %.9g vs by hand %.9g", r.epsilon, want);
    dpc_pld_free(one), dpc_pld_free(many), dpc_pld_free(g), dpc_pld_free(all);
    dpc_mech_free(m);
}

/* Calibration: on the private side of the target, within 1e-4, above the bare run's z; the
 * pre-releases alone over budget are refused. */
static void test_calibrate(void)
{
    dpc_error err = {0};
    dpc_mech *m = bsr(96, 8);
    dpc_gauss_event pre = pre_of(6.0);
    dpc_mech_run bare = {m, {DPC_PART_CYCLIC, 12, 8}, 0.08, 0, NULL, 0};
    dpc_mech_run run = bare;
    run.pre = &pre;
    run.n_pre = 1;
    dpc_accountant accs[2] = {DPC_ACCOUNTANT_PLD, DPC_ACCOUNTANT_RDP};
    for (int a = 0; a < 2; a++) {
        dpc_account_opts o;
        dpc_account_opts_init(&o, accs[a]);
        double z0, z;
        dpc_account_mech_info info;
        CHECK_OK(dpc_account_mech_calibrate_run(&bare, &o, 2.0, 1e-5, &z0, NULL, &err), &err);
        CHECK_OK(dpc_account_mech_calibrate_run(&run, &o, 2.0, 1e-5, &z, &info, &err), &err);
        dpc_account_result r;
        CHECK_OK(dpc_account_mech_epsilon(&run, z, &o, 1e-5, &r, NULL, &err), &err);
        CHECK(r.epsilon <= 2.0 && r.epsilon >= 2.0 * (1 - 1e-4) && z > z0 &&
                  info.noise_multiplier == z,
              "%s: z %.9g (bare %.9g) gives epsilon %.9g", dpc_accountant_name(accs[a]), z, z0,
              r.epsilon);
    }
    pre.sigma = 0.5; /* alone about epsilon 10 at 1e-5 */
    dpc_account_opts o;
    dpc_account_opts_init(&o, DPC_ACCOUNTANT_PLD);
    double z;
    CHECK(dpc_account_mech_calibrate_run(&run, &o, 2.0, 1e-5, &z, NULL, &err) == DPC_E_PRIVACY &&
              strstr(err.msg, "pre-releases alone"),
          "pre-releases over budget: %s", err.msg);
    dpc_mech_free(m);
}

/* MMCC applies to Poisson sampling at every step; it does not compose pre-releases, so it is
 * skipped (the other routes still give an upper bound). Bad pre-releases are refused. */
static void test_mmcc_and_refusals(void)
{
    dpc_error err = {0};
    dpc_mech_params p;
    dpc_mech_params_init(&p);
    p.kind = DPC_MECH_NU; /* C >= 0 and not diagonal: MMCC applies without pre-releases (for
                             the identity it is skipped: banded MF gives the same PLD) */
    p.nu = 0.1;
    p.steps = 50;
    dpc_mech *m = NULL;
    CHECK_OK(dpc_mech_new(&m, &p, &err), &err);
    dpc_gauss_event pre = pre_of(8.0);
    dpc_mech_run bare = {m, {DPC_PART_CYCLIC, 50, 1}, 0.05, 0, NULL, 0};
    dpc_mech_run run = bare;
    run.pre = &pre;
    run.n_pre = 1;
    dpc_account_opts o;
    dpc_account_opts_init(&o, DPC_ACCOUNTANT_PLD);
    o.pld_interval = 1e-3;
    dpc_account_result r;
    dpc_account_mech_info i0, info;
    CHECK_OK(dpc_account_mech_epsilon(&bare, 1.0, &o, 1e-5, &r, &i0, &err), &err);
    CHECK_OK(dpc_account_mech_epsilon(&run, 1.0, &o, 1e-5, &r, &info, &err), &err);
    CHECK(isfinite(i0.eps_routes[DPC_ROUTE_MMCC]) && isinf(info.eps_routes[DPC_ROUTE_MMCC]) &&
              info.route != DPC_ROUTE_MMCC,
          "mmcc with pre: %g, route %d", info.eps_routes[DPC_ROUTE_MMCC], (int)info.route);
    pre.sampling = DPC_SAMPLING_POISSON;
    pre.q = 0.5;
    CHECK(dpc_account_mech_epsilon(&run, 1.0, &o, 1e-5, &r, NULL, &err) == DPC_E_UNSUPPORTED &&
              !strcmp(err.field, "run.pre"),
          "a sampled pre-release accepted");
    pre = pre_of(-1.0);
    CHECK(dpc_account_mech_epsilon(&run, 1.0, &o, 1e-5, &r, NULL, &err) == DPC_E_INVALID,
          "a negative noise multiplier accepted");
    run.pre = NULL;
    CHECK(dpc_account_mech_epsilon(&run, 1.0, &o, 1e-5, &r, NULL, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "run.n_pre"),
          "n_pre without pre accepted");
    run.pre = &pre;
    run.n_pre = DPC_MECH_RUN_MAX_PRE + 1;
    CHECK(dpc_account_mech_epsilon(&run, 1.0, &o, 1e-5, &r, NULL, &err) == DPC_E_INVALID,
          "too many pre-releases accepted");
    dpc_mech_free(m);
}

int main(void)
{
    test_whole_run();
    test_bandmf();
    test_calibrate();
    test_mmcc_and_refusals();
    return TEST_SUMMARY();
}
