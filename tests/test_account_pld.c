/* test_account_pld.c — privacy loss distributions: published value (jax_privacy), single-step
 * delta against mpmath quadrature of the hockey-stick divergence, the plain Gaussian against
 * exact GDP, pessimistic >= optimistic with convergence under grid refinement, PLD <= RDP,
 * monotonicity, composition consistency and error handling. */
#include "dpcorr/abi.h"
#include "dpcorr/account.h"
#include "account_oracles.h"
#include "harness.h"

#include <string.h>

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static double pld_eps(double sigma, double q, size_t T, double delta, double h, dpc_pld_disc d)
{
    dpc_gauss_event c;
    dpc_gauss_event_init(&c);
    c.sigma = sigma;
    c.sampling = q < 1.0 ? DPC_SAMPLING_POISSON : DPC_SAMPLING_NONE;
    c.q = q;
    c.count = T;
    dpc_event ev = {DPC_NEIGHBOR_ADD_REMOVE, 1, &c};
    dpc_account_opts o;
    dpc_account_opts_init(&o, DPC_ACCOUNTANT_PLD);
    o.pld_interval = h;
    o.pld_disc = d;
    dpc_account_result r;
    dpc_error err = {0};
    dpc_status st = dpc_account_epsilon(&ev, &o, delta, &r, &err);
    CHECK(st == DPC_OK, "PLD eps(sigma=%g, q=%g, T=%zu): %s", sigma, q, T, err.msg);
    CHECK(r.upper_bound == (d != DPC_PLD_ROUND_DOWN), "upper_bound flag");
    return st == DPC_OK ? r.epsilon : NAN;
}

static double rdp_eps(double sigma, double q, size_t T, double delta)
{
    dpc_gauss_event c;
    dpc_gauss_event_init(&c);
    c.sigma = sigma;
    c.sampling = DPC_SAMPLING_POISSON;
    c.q = q;
    c.count = T;
    dpc_event ev = {DPC_NEIGHBOR_ADD_REMOVE, 1, &c};
    dpc_account_opts o;
    dpc_account_opts_init(&o, DPC_ACCOUNTANT_RDP);
    dpc_account_result r;
    dpc_error err = {0};
    CHECK_OK(dpc_account_epsilon(&ev, &o, delta, &r, &err), &err);
    return r.epsilon;
}

static void test_published(void)
{
    /* jax_privacy accounting docstring: sigma 3, q 0.1, 512 steps, delta 1e-6 -> eps ~ 3.77 */
    double e = pld_eps(3.0, 0.1, 512, 1e-6, 1e-4, DPC_PLD_CONNECT_DOTS);
    CHECK_NEAR_ABS(e, 3.77, 0.005, "published (jax_privacy): eps 3.77");
}

static void test_single_step_vs_quadrature(void)
{
    dpc_error err = {0};
    dpc_pld_params par;
    for (size_t i = 0; i < NELEM(oracle_hockey); i++) {
        const double *o = oracle_hockey[i];
        double exact = fmax(o[3], o[4]);
        double dv[3];
        for (int d = 0; d < 3; d++) {
            dpc_pld_params_init(&par);
            par.interval = 1e-3;
            par.disc = (dpc_pld_disc)d;
            dpc_pld *p = NULL;
            CHECK_OK(dpc_pld_new_gaussian(&p, o[1], o[0], &par, &err), &err);
            CHECK_OK(dpc_pld_delta(p, o[2], &dv[d], &err), &err);
            dpc_pld_free(p);
        }
        CHECK(dv[0] >= exact * (1 - 1e-12) && dv[0] <= exact * (1 + 1e-6) + 1e-14,
              "connect-dots delta %.12g vs exact %.12g (q=%g z=%g eps=%g)", dv[0], exact, o[0],
              o[1], o[2]);
        CHECK(dv[1] >= exact * (1 - 1e-12) && dv[1] <= exact * 1.01 + 1e-12,
              "round-up delta %.12g >= exact %.12g", dv[1], exact);
        CHECK(dv[2] <= exact * (1 + 1e-12) && dv[2] >= exact * 0.99 - 1e-12,
              "round-down delta %.12g <= exact %.12g", dv[2], exact);
    }
}

static void test_gaussian_vs_gdp(void)
{
    dpc_error err = {0};
    /* T-fold Gaussian with noise multiplier sigma is exactly sqrt(T)/sigma-GDP. */
    struct { double sigma; size_t T; } cs[] = {{2.0, 1}, {2.0, 16}, {5.0, 100}, {1.5, 4}};
    size_t ncases = tests_scale() < 1.0 ? 2 : NELEM(cs); /* fewer under sanitizers */
    for (size_t i = 0; i < ncases; i++) {
        double mu = sqrt((double)cs[i].T) / cs[i].sigma, eg;
        CHECK_OK(dpc_gdp_epsilon(mu, 1e-5, &eg, &err), &err);
        double ec = pld_eps(cs[i].sigma, 1.0, cs[i].T, 1e-5, 2e-4, DPC_PLD_CONNECT_DOTS);
        double ed = pld_eps(cs[i].sigma, 1.0, cs[i].T, 1e-5, 2e-4, DPC_PLD_ROUND_DOWN);
        CHECK(ec >= eg - 1e-9 && ec - eg < 1e-4, "Gaussian T=%zu: PLD %.9f vs GDP %.9f",
              cs[i].T, ec, eg);
        CHECK(ed <= eg + 1e-9, "optimistic %.9f <= exact %.9f", ed, eg);
    }
}

static void test_bracketing_and_convergence(void)
{
    /* pessimistic >= optimistic at every grid; the gap closes as the grid is refined */
    double hs[] = {8e-4, 4e-4, 2e-4, 1e-4};
    double up[4], ctd[4], down[4];
    size_t T = tests_scale() < 1.0 ? 60 : 200;
    for (int i = 0; i < 4; i++) {
        up[i] = pld_eps(2.0, 0.05, T, 1e-6, hs[i], DPC_PLD_ROUND_UP);
        ctd[i] = pld_eps(2.0, 0.05, T, 1e-6, hs[i], DPC_PLD_CONNECT_DOTS);
        down[i] = pld_eps(2.0, 0.05, T, 1e-6, hs[i], DPC_PLD_ROUND_DOWN);
        CHECK(up[i] >= ctd[i] && ctd[i] >= down[i], "h=%g: %g >= %g >= %g", hs[i], up[i], ctd[i],
              down[i]);
    }
    for (int i = 1; i < 4; i++) {
        CHECK(up[i] - down[i] < 0.6 * (up[i - 1] - down[i - 1]),
              "first-order gap shrinks: %g -> %g", up[i - 1] - down[i - 1], up[i] - down[i]);
        CHECK(ctd[i] - down[i] < 0.6 * (ctd[i - 1] - down[i - 1]),
              "connect-dots/optimistic gap shrinks: %g -> %g", ctd[i - 1] - down[i - 1],
              ctd[i] - down[i]);
        CHECK(ctd[i] <= ctd[i - 1] + 1e-12, "connect-dots decreases towards the truth");
    }
    /* every optimistic value is below every pessimistic one (they bracket the same truth) */
    CHECK(down[3] <= ctd[0] && down[0] <= ctd[3], "brackets overlap consistently");
    /* the optimistic rounding is first order: its bias is about T h / 2 (0.01 at T = 200),
     * while connect-the-dots is second order (its own change from h = 2e-4 to 1e-4 is tiny) */
    CHECK(ctd[3] - down[3] < 0.525 * (double)T * 1e-4, "bracket width at h=1e-4: %g",
          ctd[3] - down[3]);
    CHECK(fabs(ctd[3] - ctd[2]) < 1e-4, "connect-dots converged: %g", fabs(ctd[3] - ctd[2]));
}

static void test_vs_rdp_and_monotone(void)
{
    struct { double sigma, q; size_t T; } cs[] = {{1.0, 0.01, 1000}, {3.0, 0.1, 512},
                                                   {1.0, 0.005, 2000}, {2.0, 0.3, 20}};
    size_t ncases = tests_scale() < 1.0 ? 2 : NELEM(cs);
    for (size_t i = 0; i < ncases; i++) {
        double p = pld_eps(cs[i].sigma, cs[i].q, cs[i].T, 1e-5, 5e-4, DPC_PLD_CONNECT_DOTS);
        double r = rdp_eps(cs[i].sigma, cs[i].q, cs[i].T, 1e-5);
        CHECK(p <= r, "PLD %g <= RDP %g (sigma %g, q %g, T %zu)", p, r, cs[i].sigma, cs[i].q,
              cs[i].T);
    }
    double base = pld_eps(1.5, 0.05, 300, 1e-6, 2e-4, DPC_PLD_CONNECT_DOTS);
    CHECK(pld_eps(1.5, 0.05, 600, 1e-6, 2e-4, DPC_PLD_CONNECT_DOTS) > base, "eps grows with T");
    CHECK(pld_eps(1.5, 0.07, 300, 1e-6, 2e-4, DPC_PLD_CONNECT_DOTS) > base, "eps grows with q");
    CHECK(pld_eps(1.8, 0.05, 300, 1e-6, 2e-4, DPC_PLD_CONNECT_DOTS) < base,
          "eps falls with sigma");
    CHECK(rdp_eps(1.5, 0.05, 600, 1e-6) > rdp_eps(1.5, 0.05, 300, 1e-6), "RDP grows with T");
    CHECK(rdp_eps(1.5, 0.07, 300, 1e-6) > rdp_eps(1.5, 0.05, 300, 1e-6), "RDP grows with q");
    CHECK(rdp_eps(1.8, 0.05, 300, 1e-6) < rdp_eps(1.5, 0.05, 300, 1e-6), "RDP falls with sigma");
}

static void test_composition(void)
{
    dpc_error err = {0};
    dpc_pld_params par;
    dpc_pld_params_init(&par);
    par.interval = 5e-4;
    dpc_pld *a = NULL, *b = NULL, *ab = NULL, *a2 = NULL, *aab = NULL, *a3 = NULL;
    CHECK_OK(dpc_pld_new_gaussian(&a, 1.2, 0.1, &par, &err), &err);
    CHECK_OK(dpc_pld_new_gaussian(&b, 2.0, 1.0, &par, &err), &err);
    CHECK_OK(dpc_pld_compose(&ab, a, b, &err), &err);
    CHECK_OK(dpc_pld_self_compose(&a2, a, 2, &err), &err);
    CHECK_OK(dpc_pld_compose(&aab, a2, b, &err), &err);
    CHECK_OK(dpc_pld_self_compose(&a3, a, 3, &err), &err);
    if (!a || !b || !ab || !a2 || !aab || !a3) return;
    /* compose(a, a) = self_compose(a, 2); compose(a2, a) = self_compose(a, 3) */
    dpc_pld *aa = NULL, *a2a = NULL;
    CHECK_OK(dpc_pld_compose(&aa, a, a, &err), &err);
    CHECK_OK(dpc_pld_compose(&a2a, a2, a, &err), &err);
    double e1, e2, e3, e4;
    CHECK_OK(dpc_pld_epsilon(aa, 1e-6, &e1, &err), &err);
    CHECK_OK(dpc_pld_epsilon(a2, 1e-6, &e2, &err), &err);
    CHECK_OK(dpc_pld_epsilon(a2a, 1e-6, &e3, &err), &err);
    CHECK_OK(dpc_pld_epsilon(a3, 1e-6, &e4, &err), &err);
    CHECK_NEAR_REL(e1, e2, 1e-10, "compose(a, a) = a^2");
    CHECK_NEAR_REL(e3, e4, 1e-10, "compose(a^2, a) = a^3");
    /* a subsampled and an unsampled PLD compose (the unsampled one serves both directions) */
    double ec, eb;
    CHECK_OK(dpc_pld_epsilon(aab, 1e-6, &ec, &err), &err);
    CHECK_OK(dpc_pld_epsilon(ab, 1e-6, &eb, &err), &err);
    CHECK(ec > eb && eb > 0, "more composition, more epsilon");
    /* delta(eps(delta)) = delta on the discrete PLD */
    double d;
    CHECK_OK(dpc_pld_delta(a3, e4, &d, &err), &err);
    CHECK_NEAR_REL(d, 1e-6, 1e-8, "PLD delta(eps(delta)) round trip");
    CHECK(dpc_pld_size(a3) > 0 && dpc_pld_infinity_mass(a3) < 1e-14, "size and tail mass");
    /* multi-part events: 1 + 2 steps as two components = 3 steps */
    dpc_gauss_event parts[2];
    dpc_gauss_event_init(&parts[0]);
    parts[0].sigma = 1.2;
    parts[0].sampling = DPC_SAMPLING_POISSON;
    parts[0].q = 0.1;
    parts[1] = parts[0];
    parts[1].count = 2;
    dpc_event ev = {DPC_NEIGHBOR_ZERO_OUT, 2, parts};
    dpc_account_opts o;
    dpc_account_opts_init(&o, DPC_ACCOUNTANT_PLD);
    o.pld_interval = 5e-4;
    dpc_account_result r;
    CHECK_OK(dpc_account_epsilon(&ev, &o, 1e-6, &r, &err), &err);
    CHECK_NEAR_REL(r.epsilon, e4, 1e-10, "event of two components");
    /* a mismatched grid is refused */
    dpc_pld *c = NULL, *bad = NULL;
    par.interval = 1e-3;
    CHECK_OK(dpc_pld_new_gaussian(&c, 1.0, 0.5, &par, &err), &err);
    CHECK(dpc_pld_compose(&bad, a, c, &err) == DPC_E_INVALID && bad == NULL,
          "different intervals refused: '%s'", err.msg);
    dpc_pld_free(aa);
    dpc_pld_free(a2a);
    dpc_pld_free(a);
    dpc_pld_free(b);
    dpc_pld_free(ab);
    dpc_pld_free(a2);
    dpc_pld_free(aab);
    dpc_pld_free(a3);
    dpc_pld_free(c);
    dpc_pld_free(NULL);
}

static void test_errors(void)
{
    dpc_error err = {0};
    dpc_pld_params par;
    dpc_pld_params_init(&par);
    dpc_pld *p = NULL;
    CHECK(dpc_pld_new_gaussian(&p, 1.0, 1.5, &par, &err) == DPC_E_INVALID && strstr(err.msg, "q"),
          "q 1.5 refused: '%s'", err.msg);
    CHECK(dpc_pld_new_gaussian(&p, NAN, 0.5, &par, &err) == DPC_E_INVALID && strstr(err.msg, "z"),
          "NaN z refused: '%s'", err.msg);
    par.interval = 0.0;
    CHECK(dpc_pld_new_gaussian(&p, 1.0, 0.5, &par, &err) == DPC_E_INVALID &&
              strstr(err.msg, "interval"),
          "interval 0 refused: '%s'", err.msg);
    par.interval = 1e-7;
    CHECK(dpc_pld_new_gaussian(&p, 1e-3, 0.5, &par, &err) == DPC_E_RANGE &&
              strstr(err.msg, "interval"),
          "an absurd grid is refused: '%s'", err.msg);
    CHECK(p == NULL, "no object on failure");
    /* at the default interval, too little noise is what the refusal names (issue 19) */
    par.interval = 1e-4;
    CHECK(dpc_pld_new_gaussian(&p, 1e-3, 0.5, &par, &err) == DPC_E_RANGE &&
              !strcmp(err.field, "noise_multiplier") && strstr(err.msg, "RDP accountant"),
          "too little noise is named: '%s'", err.msg);
    dpc_gauss_event c;
    dpc_gauss_event_init(&c);
    c.sampling = DPC_SAMPLING_POISSON;
    c.q = 0.1;
    dpc_event ev = {DPC_NEIGHBOR_REPLACE_ONE, 1, &c};
    dpc_account_opts o;
    dpc_account_opts_init(&o, DPC_ACCOUNTANT_PLD);
    dpc_account_result r;
    CHECK(dpc_account_epsilon(&ev, &o, 1e-5, &r, &err) == DPC_E_UNSUPPORTED &&
              strstr(err.msg, "replace-one"),
          "Poisson + replace-one unsupported: '%s'", err.msg);
    ev.neighbor = DPC_NEIGHBOR_ADD_REMOVE;
    c.sampling = DPC_SAMPLING_FIXED;
    CHECK(dpc_account_epsilon(&ev, &o, 1e-5, &r, &err) == DPC_E_UNSUPPORTED,
          "fixed batches not in PLD: '%s'", err.msg);
    c.sampling = DPC_SAMPLING_POISSON;
    c.count = 0;
    CHECK(dpc_account_epsilon(&ev, &o, 1e-5, &r, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "parts[0].count"),
          "0 steps refused: '%s'", err.msg);
}

/* The example of include/dpcorr/account.h, verbatim, so it cannot go stale. */
static int header_example(double *out)
{
    dpc_error err = {0};
    dpc_gauss_event c;  dpc_gauss_event_init(&c);
    c.sigma = 1.1; c.sampling = DPC_SAMPLING_POISSON; c.q = 0.01; c.count = 10000;
    dpc_event ev = {DPC_NEIGHBOR_ADD_REMOVE, 1, &c};
    dpc_account_opts o;  dpc_account_opts_init(&o, DPC_ACCOUNTANT_PLD);
    dpc_account_result r;
    if (dpc_account_epsilon(&ev, &o, 1e-5, &r, &err) == DPC_OK) printf("%g\n", r.epsilon);
    else return 1;
    *out = r.epsilon;
    return 0;
}

static void test_header_example(void)
{
    double e = NAN;
    CHECK(header_example(&e) == 0, "header example runs");
    double r = rdp_eps(1.1, 0.01, 10000, 1e-5);
    CHECK(e > 0 && e <= r, "header example: PLD %g <= RDP %g", e, r);
}

/* A noise multiplier whose privacy loss overflows is refused naming z (not the grid interval). */
static void test_no_noise(void)
{
    dpc_pld_params p;
    dpc_pld_params_init(&p);
    dpc_pld *pld = NULL;
    dpc_error err = {0};
    CHECK(dpc_pld_new_gaussian(&pld, 1e-300, 1.0, &p, &err) == DPC_E_RANGE &&
              !strcmp(err.field, "z") && pld == NULL,
          "z = 1e-300: %s", err.msg);
    CHECK_OK(dpc_pld_new_gaussian(&pld, 0.1, 0.5, &p, &err), &err); /* small but finite */
    dpc_pld_free(pld);
}

/* The field table covers dpc_pld_params; _init writes its defaults (the values _init wrote
 * before the table: 1e-4, 1e-15, CONNECT_DOTS); the range checks name their fields. */
static void test_field_table(void)
{
    dpc_error e = {0};
    const dpc_field_table *t = dpc_pld_params_fields();
    CHECK(t && t->size == sizeof(dpc_pld_params) && t->count == 3, "table of the struct's size");
    CHECK_OK(dpc_field_table_verify(t, &e), &e);
    CHECK(t->size == dpc_abi_sizeof("dpc_pld_params"), "the table's size is the ABI's");
    dpc_pld_params p;
    memset(&p, 0x5a, sizeof p);
    dpc_pld_params_init(&p);
    CHECK(p.interval == 1e-4 && p.tail == 1e-15 && p.disc == DPC_PLD_CONNECT_DOTS, "defaults");
    CHECK_OK(dpc_field_check(t, &p, &e), &e);
    for (int d = 0; d < 3; d++)
        CHECK(!strcmp(dpc_field_enum_name(dpc_field_find(t, "disc", NULL), d),
                      dpc_pld_disc_name((dpc_pld_disc)d)), "disc name %d is the parser's", d);
    dpc_pld *pld = NULL;
    struct { double interval, tail; int disc; const char *field; } bad[] = {
        {0, 1e-15, 0, "interval"}, {INFINITY, 1e-15, 0, "interval"}, {1e-4, 0, 0, "tail"},
        {1e-4, 2e-3, 0, "tail"},   {1e-4, 1e-15, 3, "disc"},       {NAN, 1e-15, 0, "interval"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dpc_pld_params q = {bad[i].interval, bad[i].tail, (dpc_pld_disc)bad[i].disc};
        CHECK(dpc_pld_new_gaussian(&pld, 1.0, 0.01, &q, &e) == DPC_E_INVALID && !pld &&
                  !strcmp(e.field, bad[i].field), "bad %s refused: '%s'", bad[i].field, e.msg);
    }
}

/* The tables of dpc_gauss_event and dpc_account_opts cover their structs; the _inits write
 * their defaults (the values they wrote by hand before the tables); dpc_event_check and the
 * accountants' option checks refuse through them, naming the field. */
static void test_event_opts_tables(void)
{
    dpc_error e = {0};
    const dpc_field_table *g = dpc_gauss_event_fields(), *o = dpc_account_opts_fields();
    CHECK(g && g->size == sizeof(dpc_gauss_event) && g->count == 5, "event table");
    CHECK(o && o->size == sizeof(dpc_account_opts) && o->count == 10, "opts table");
    CHECK_OK(dpc_field_table_verify(g, &e), &e);
    CHECK_OK(dpc_field_table_verify(o, &e), &e);
    CHECK(g->size == dpc_abi_sizeof("dpc_gauss_event") &&
              o->size == dpc_abi_sizeof("dpc_account_opts"), "the tables' sizes are the ABI's");
    dpc_gauss_event ge;
    memset(&ge, 0x5a, sizeof ge);
    dpc_gauss_event_init(&ge);
    CHECK(ge.sigma == 1.0 && ge.sensitivity == 1.0 && ge.sampling == DPC_SAMPLING_NONE &&
              ge.q == 1.0 && ge.count == 1, "event defaults");
    for (int acc = 0; acc < 4; acc++) {
        dpc_account_opts ao;
        memset(&ao, 0x5a, sizeof ao);
        dpc_account_opts_init(&ao, (dpc_accountant)acc);
        CHECK((int)ao.accountant == acc && ao.orders == NULL && ao.norders == 0 &&
                  ao.rdp_refine == 0 && ao.pld_interval == 1e-4 && ao.pld_tail == 1e-15 &&
                  ao.pld_disc == DPC_PLD_CONNECT_DOTS && ao.zcdp_conv == DPC_ZCDP_TIGHT &&
                  ao.progress.fn == NULL && ao.progress.ctx == NULL && ao.bib_monte_carlo == 0,
              "opts defaults for accountant %d", acc);
    }
    for (int k = 0; k < 3; k++)
        CHECK(!strcmp(dpc_field_enum_name(dpc_field_find(g, "sampling", NULL), k),
                      dpc_sampling_name((dpc_sampling)k)), "sampling name %d", k);
    struct { const char *field; double v; dpc_status st; } bad[] = {
        {"sigma", 0, DPC_E_INVALID},       {"sigma", INFINITY, DPC_E_INVALID},
        {"sensitivity", -1, DPC_E_INVALID}, {"sensitivity", 1e151, DPC_E_RANGE},
        {"sampling", 3, DPC_E_INVALID},     {"count", 0, DPC_E_INVALID},
        {"count", 1099511627777.0, DPC_E_RANGE},
    };
    char want[64];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dpc_gauss_event parts[2];
        dpc_gauss_event_init(&parts[0]);
        dpc_gauss_event_init(&parts[1]);
        CHECK_OK(dpc_field_set(dpc_field_find(g, bad[i].field, NULL), &parts[1], bad[i].v, &e),
                 &e);
        dpc_event ev = {DPC_NEIGHBOR_ADD_REMOVE, 2, parts};
        snprintf(want, sizeof want, "parts[1].%s", bad[i].field);
        CHECK(dpc_event_check(&ev, DPC_ACCOUNTANT_RDP, &e) == bad[i].st &&
                  !strcmp(e.field, want), "%s = %g refused: '%s'", want, bad[i].v, e.msg);
    }
    /* q is checked only when sampled */
    dpc_gauss_event q2;
    dpc_gauss_event_init(&q2);
    q2.q = 2;
    dpc_event evq = {DPC_NEIGHBOR_ADD_REMOVE, 1, &q2};
    CHECK_OK(dpc_event_check(&evq, DPC_ACCOUNTANT_RDP, &e), &e);
    q2.sampling = DPC_SAMPLING_POISSON;
    CHECK(dpc_event_check(&evq, DPC_ACCOUNTANT_RDP, &e) == DPC_E_INVALID &&
              !strcmp(e.field, "parts[0].q"), "q = 2 sampled refused: '%s'", e.msg);
    /* the accountant's options: pld's and zcdp's fields, each only for its accountant */
    dpc_gauss_event one;
    dpc_gauss_event_init(&one);
    dpc_event ev1 = {DPC_NEIGHBOR_ADD_REMOVE, 1, &one};
    dpc_account_result r;
    struct { int acc; const char *field; double v; } obad[] = {
        {DPC_ACCOUNTANT_PLD, "pld_interval", 0}, {DPC_ACCOUNTANT_PLD, "pld_tail", 0.01},
        {DPC_ACCOUNTANT_PLD, "pld_disc", 3},     {DPC_ACCOUNTANT_ZCDP, "zcdp_conv", 2},
    };
    for (size_t i = 0; i < sizeof obad / sizeof obad[0]; i++) {
        dpc_account_opts ao;
        dpc_account_opts_init(&ao, (dpc_accountant)obad[i].acc);
        CHECK_OK(dpc_field_set(dpc_field_find(o, obad[i].field, NULL), &ao, obad[i].v, &e), &e);
        CHECK(dpc_account_epsilon(&ev1, &ao, 1e-5, &r, &e) == DPC_E_INVALID &&
                  !strcmp(e.field, obad[i].field), "%s = %g refused: '%s'", obad[i].field,
              obad[i].v, e.msg);
        ao.accountant = DPC_ACCOUNTANT_GDP; /* a field of another accountant is not checked */
        CHECK_OK(dpc_account_epsilon(&ev1, &ao, 1e-5, &r, &e), &e);
    }
}

/* The ledger's table covers it (every field DERIVED: the library's output) and dpc_ledger_init
 * writes what it wrote by hand before the table, byte for byte. */
static void test_ledger_table(void)
{
    dpc_error e = {0};
    const dpc_field_table *t = dpc_ledger_fields();
    CHECK(t && t->size == sizeof(dpc_ledger), "ledger table");
    CHECK_OK(dpc_field_table_verify(t, &e), &e);
    CHECK(t->size == dpc_abi_sizeof("dpc_ledger"), "the table's size is the ABI's");
    for (size_t i = 0; i < t->count; i++)
        CHECK(t->fields[i].flags & DPC_FIELD_DERIVED, "%s is derived", t->fields[i].name);
    dpc_ledger a, old;
    memset(&a, 0x5a, sizeof a);
    dpc_ledger_init(&a);
    memset(&old, 0, sizeof old); /* the old _init, verbatim */
    old.neighbor = DPC_NEIGHBOR_ZERO_OUT;
    old.part.kind = DPC_PART_MINSEP;
    old.part.k = 1;
    old.part.b = 1;
    old.q = 1.0;
    old.rounds = 1;
    old.noise_multiplier = old.sensitivity = old.column_norm = old.noise_std = NAN;
    old.epsilon_target = old.delta = old.epsilon = old.epsilon_paper = NAN;
    old.expected_batch = NAN;
    old.epsilon_pre = NAN;
    for (int k = 0; k < DPC_ROUTE_COUNT; k++) old.eps_routes[k] = NAN;
    old.epsilon_single = NAN;
    old.mc_confidence = NAN;
    old.epsilon_mc = NAN;
    CHECK(!memcmp(&a, &old, sizeof a), "defaults are the old ones, byte for byte");
    const dpc_field *k = dpc_field_find(t, "part.k", NULL);
    CHECK(k && k->def == 1, "nested participation");
}

int main(void)
{
    test_ledger_table();
    test_event_opts_tables();
    test_field_table();
    test_no_noise();
    test_header_example();
    test_published();
    test_single_step_vs_quadrature();
    test_gaussian_vs_gdp();
    test_bracketing_and_convergence();
    test_vs_rdp_and_monotone();
    test_composition();
    test_errors();
    return TEST_SUMMARY();
}
