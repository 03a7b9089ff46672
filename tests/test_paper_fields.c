/* test_paper_fields.c — the field tables of the papers' parameter structs and step records
 * (dpcorr/field.h): each covers every byte of its struct (dpc_field_table_verify), each _init
 * writes the table's defaults, and each library check refuses a value outside a field's range
 * naming that field, so the range written in the table is the one the library enforces. */
#include "dpcorr.h"
#include "dpcorr/papers/kan.h"
#include "dpcorr/papers/nu_repro.h"
#include "dpcorr/papers/linreg.h"
#include "dpcorr/papers/sim.h"
#include "dpcorr/papers/srgd.h"
#include "harness.h"

#include <math.h>
#include <string.h>

/* The coverage proof, and the proof refusing the table once a field is dropped. */
static void verify(const dpc_field_table *t)
{
    dpc_error err = {0};
    CHECK(t && dpc_field_table_verify(t, &err) == DPC_OK, "%s: %s", t ? t->name : "NULL",
          err.msg);
    if (!t || t->count < 2) return;
    dpc_field less[64];
    size_t n = 0;
    for (size_t i = 1; i < t->count && n < 64; i++) less[n++] = t->fields[i];
    dpc_field_table cut = *t;
    cut.fields = less;
    cut.count = n;
    CHECK(dpc_field_table_verify(&cut, &err) != DPC_OK, "%s without its first field verifies",
          t->name);
}

/* Every numeric field of obj (initialized by the struct's _init) holds the table's default. */
static void defaults_are_init(const dpc_field_table *t, const void *obj)
{
    for (size_t i = 0; i < t->count; i++) {
        const dpc_field *f = &t->fields[i];
        double v = dpc_field_get(f, obj);
        if (isnan(v) || (f->flags & DPC_FIELD_DERIVED)) continue;
        CHECK(v == f->def, "%s.%s: _init %g, table %g", t->name, f->name, v, f->def);
    }
}

/* A value just outside the field's range (NAN when it has none below or above). */
static double outside(const dpc_field *f, int below)
{
    if (f->flags & DPC_FIELD_NO_RANGE) return NAN;
    if (below) {
        if (!isfinite(f->lo)) return NAN;
        double v = (f->flags & DPC_FIELD_LO_OPEN) ? f->lo : f->lo - 1;
        if (v == 0 && (f->flags & DPC_FIELD_UNSET_ZERO)) v = -1;
        return v < 0 && f->type != DPC_FIELD_DOUBLE ? NAN : v;
    }
    if (!isfinite(f->hi)) return NAN;
    return (f->flags & DPC_FIELD_HI_OPEN) ? f->hi : f->type == DPC_FIELD_DOUBLE ? f->hi * 2 + 1
                                                                                : f->hi + 1;
}

typedef dpc_status (*check_fn)(const void *obj, dpc_error *err);

/* For each numeric field with a range: the value outside it, set in a copy of good, is refused
 * by the library's check naming the field (prefix + name). */
static void check_refuses(const dpc_field_table *t, const void *good, size_t size, check_fn fn,
                          const char *prefix)
{
    unsigned char obj[4096];
    dpc_error err = {0};
    CHECK(size <= sizeof obj && fn(good, &err) == DPC_OK, "%s: the good value is refused: %s",
          t->name, err.msg);
    for (size_t i = 0; i < t->count; i++) {
        const dpc_field *f = &t->fields[i];
        if (f->type == DPC_FIELD_BOOL || f->type == DPC_FIELD_ENUM ||
            (f->flags & DPC_FIELD_DERIVED) || isnan(dpc_field_get(f, good)))
            continue;
        for (int below = 0; below < 2; below++) {
            double v = outside(f, below);
            if (isnan(v)) continue;
            memcpy(obj, good, size);
            if (dpc_field_set(f, obj, v, NULL) != DPC_OK) continue; /* not representable */
            char want[96];
            snprintf(want, sizeof want, "%s%s", prefix, f->name);
            memset(&err, 0, sizeof err);
            dpc_status st = fn(obj, &err);
            CHECK(st != DPC_OK && !strcmp(err.field, want), "%s: %s = %g: status %d field '%s' "
                  "(want '%s'): %s", t->name, f->name, v, (int)st, err.field, want, err.msg);
        }
    }
}

/* ---- srgd ------------------------------------------------------------------------------------ */

static dpc_status srgd_check(const void *obj, dpc_error *err)
{
    return dpc_srgd_config_check(obj, 1000, err);
}

static dpc_status srgd_problem_check(const void *obj, dpc_error *err)
{
    dpc_srgd_problem_config pc = *(const dpc_srgd_problem_config *)obj;
    dpc_srgd_problem *pr = NULL;
    dpc_rng rng;
    dpc_rng_seed(&rng, 3);
    dpc_status st = dpc_srgd_problem_new(&pr, &pc, &rng, 0, err);
    dpc_srgd_problem_free(pr);
    return st;
}

static void test_srgd(void)
{
    verify(dpc_srgd_config_fields());
    verify(dpc_srgd_problem_config_fields());
    verify(dpc_srgd_step_info_fields());
    dpc_srgd_config c;
    dpc_srgd_config_init(&c);
    defaults_are_init(dpc_srgd_config_fields(), &c);
    c.L = c.M = 1;
    c.R = 2;
    c.steps = 10;
    c.batch = 10;
    c.beta = 1;
    c.clip = 1;
    c.epsilon = 1;
    c.delta = 1e-4;
    check_refuses(dpc_srgd_config_fields(), &c, sizeof c, srgd_check, "");
    dpc_srgd_problem_config pc;
    dpc_srgd_problem_config_init(&pc);
    defaults_are_init(dpc_srgd_problem_config_fields(), &pc);
    pc.n = 64;
    pc.p = 4;
    check_refuses(dpc_srgd_problem_config_fields(), &pc, sizeof pc, srgd_problem_check, "");
}

/* ---- kan ------------------------------------------------------------------------------------- */

static dpc_status kan_run_check(const void *obj, dpc_error *err)
{
    return dpc_kan_run_config_check(obj, err);
}

static dpc_status kan_lcgd_check(const void *obj, dpc_error *err)
{
    return dpc_kan_lcgd_config_check(obj, err);
}

static dpc_status kan_privacy_check(const void *obj, dpc_error *err)
{
    double noise_std;
    dpc_ledger L;
    return dpc_kan_lcgd_privacy(obj, &noise_std, &L, err);
}

static void test_kan(void)
{
    verify(dpc_kan_privacy_fields());
    verify(dpc_kan_run_config_fields());
    verify(dpc_kan_lcgd_config_fields());
    verify(dpc_kan_lcgd_step_info_fields());
    dpc_kan_run_config rc;
    dpc_kan_run_config_init(&rc);
    defaults_are_init(dpc_kan_run_config_fields(), &rc);
    defaults_are_init(dpc_kan_privacy_fields(), &rc.privacy);
    check_refuses(dpc_kan_run_config_fields(), &rc, sizeof rc, kan_run_check, "");
    /* the nested privacy fields are named with their struct ("privacy.lambda") */
    rc.privacy.lambda = 1;
    dpc_error err = {0};
    CHECK(dpc_kan_run_config_check(&rc, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "privacy.lambda"),
          "privacy.lambda = 1 refused naming privacy.lambda: '%s' %s", err.field, err.msg);
    dpc_kan_privacy pv = rc.privacy;
    pv.lambda = 0.5;
    pv.n = 1000;
    pv.batch = 100;
    pv.steps = 10;
    pv.noise_multiplier = 1;
    check_refuses(dpc_kan_privacy_fields(), &pv, sizeof pv, kan_privacy_check, "");
    dpc_kan_lcgd_config lc;
    dpc_kan_lcgd_config_init(&lc);
    defaults_are_init(dpc_kan_lcgd_config_fields(), &lc);
    lc.n = 100;
    check_refuses(dpc_kan_lcgd_config_fields(), &lc, sizeof lc, kan_lcgd_check, "");
}

static dpc_status kan_rate_check(const void *obj, dpc_error *err)
{
    double A;
    return dpc_kan_bound_indep(obj, &A, err); /* the bound that reads every field */
}

/* The bound evaluators' inputs: every range (and 0 "must be set") refused naming the field;
 * the theory switches' table covers its struct. */
static void test_kan_theory(void)
{
    verify(dpc_kan_rate_in_fields());
    verify(dpc_kan2_theory_want_fields());
    dpc_kan_rate_in r = {.n = 1000, .m = 16, .d = 5, .T = 100, .B = 10, .eta = 0.25,
                         .lambda = 0.5, .noise_std = 2, .gamma = 0.05, .delta = 1e-5};
    check_refuses(dpc_kan_rate_in_fields(), &r, sizeof r, kan_rate_check, "");
    const dpc_field_table *t = dpc_kan_rate_in_fields();
    dpc_error err = {0};
    for (size_t i = 0; i < t->count; i++) {
        const dpc_field *f = &t->fields[i];
        if (!(f->flags & DPC_FIELD_UNSET_ZERO)) continue;
        dpc_kan_rate_in z = r;
        CHECK(dpc_field_set(f, &z, 0, NULL) == DPC_OK && kan_rate_check(&z, &err) != DPC_OK &&
                  !strcmp(err.field, f->name), "%s = 0 refused as unset: '%s'", f->name,
              err.field);
    }
    dpc_kan_rate_in nd = r; /* delta is read by A_van only */
    nd.delta = 0;
    double A;
    CHECK(dpc_kan_bound_corr(&nd, &A, &err) == DPC_OK, "A_corr ignores delta: %s", err.msg);
}

/* ---- linreg ---------------------------------------------------------------------------------- */

static dpc_status linreg_check(const void *obj, dpc_error *err)
{
    dpc_linreg_plan pl;
    return dpc_linreg_plan_make(&pl, obj, 20000, 3, err);
}

static dpc_linreg_opts g_linreg; /* the options a prior is checked in */

static dpc_status prior_check(const void *obj, dpc_error *err)
{
    dpc_linreg_opts o = g_linreg;
    o.prior = *(const dpc_linreg_prior *)obj;
    return linreg_check(&o, err);
}

static dpc_status dpstat_check(const void *obj, dpc_error *err)
{
    double r[4] = {0.1, -0.2, 0.3, 0.4}, work[4];
    dpc_rng rng;
    dpc_rng_seed(&rng, 5);
    dpc_rng_stream st = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_NOISE, 0));
    dpc_dpstat_result out;
    return dpc_linreg_dpstat(r, 4, obj, &st, 0, work, &out, NULL, NULL, err);
}

/* dpc_linreg_ssp on a fixed small data set (real targets, no NaN). */
static dpc_dataset *g_ssp_ds;

static dpc_status ssp_check(const void *obj, dpc_error *err)
{
    dpc_rng rng;
    double w[3];
    dpc_rng_seed(&rng, 5);
    return dpc_linreg_ssp(g_ssp_ds, obj, &rng, w, NULL, err);
}

/* dpc_linreg_ssp_opts: the zeroed struct is the table's default (what the positional
 * initializers wrote before), and the library's SSP refuses each range through the table. */
static void test_linreg_ssp(void)
{
    verify(dpc_linreg_ssp_opts_fields());
    dpc_linreg_ssp_opts z, zero;
    memset(&z, 0x5a, sizeof z);
    memset(&zero, 0, sizeof zero);
    dpc_field_defaults(dpc_linreg_ssp_opts_fields(), &z);
    CHECK(!memcmp(&z, &zero, sizeof z), "ssp: the table's defaults are the zeroed struct");
    const dpc_field *st = dpc_field_find(dpc_linreg_ssp_opts_fields(), "stream", NULL);
    const dpc_field *lst = dpc_field_find(dpc_linreg_opts_fields(), "stream", NULL);
    CHECK(st && lst && st->type == DPC_FIELD_U32 && lst->type == DPC_FIELD_U32 &&
              st->hi == 4294967295.0 && lst->hi == 4294967295.0,
          "both streams are uint32 rows over the whole type");
    dpc_error err = {0};
    if (dpc_dataset_new(&g_ssp_ds, 50, 3, 0, &err)) {
        CHECK(0, "data set: %s", err.msg);
        return;
    }
    for (size_t i = 0; i < 150; i++) g_ssp_ds->x[i] = (double)((i * 7) % 11) / 11.0 - 0.4;
    for (size_t i = 0; i < 50; i++) g_ssp_ds->y[i] = (double)(i % 5) / 5.0;
    dpc_linreg_ssp_opts o = {.epsilon = 1, .delta = 1e-3, .x_bound = 1, .y_bound = 1,
                             .stream = 4294967295u};
    check_refuses(dpc_linreg_ssp_opts_fields(), &o, sizeof o, ssp_check, "");
    o.y_bound = 0; /* in the table "unset", which dpc_linreg_ssp_bounds fills */
    CHECK(ssp_check(&o, &err) == DPC_E_INVALID && !strcmp(err.field, "y_bound"),
          "an unset SSP bound refused naming it: %s", err.msg);
    dpc_dataset_free(g_ssp_ds);
    g_ssp_ds = NULL;
}

static void test_linreg(void)
{
    verify(dpc_linreg_prior_fields());
    verify(dpc_linreg_opts_fields());
    verify(dpc_dpstat_params_fields());
    verify(dpc_linreg_step_info_fields());
    dpc_linreg_opts o;
    dpc_linreg_opts_init(&o, DPC_LINREG_AMBSSGD);
    defaults_are_init(dpc_linreg_opts_fields(), &o);
    defaults_are_init(dpc_linreg_prior_fields(), &o.prior);
    CHECK(o.prior.k2 == sqrt(8.0 / 3.0), "prior.k2: the table's literal is sqrt(8/3) exactly");
    o.epsilon = 1;
    o.prior.h_norm = 1;
    o.prior.kappa = 2;
    o.prior.r_x = 2;
    check_refuses(dpc_linreg_opts_fields(), &o, sizeof o, linreg_check, "");
    g_linreg = o;
    check_refuses(dpc_linreg_prior_fields(), &o.prior, sizeof o.prior, prior_check, "prior.");
    dpc_dpstat_params p = {.domain = 10, .k = 20, .noise_multiplier = 1,
                           .rule = DPC_DPSTAT_MARGIN, .margin = 1};
    check_refuses(dpc_dpstat_params_fields(), &p, sizeof p, dpstat_check, "");
}

/* ---- sim / nu --------------------------------------------------------------------------------- */

static dpc_status sim_check(const void *obj, dpc_error *err)
{
    return dpc_sim_config_check(obj, err);
}

static dpc_status nu_check(const void *obj, dpc_error *err)
{
    dpc_nu_setup s;
    dpc_status st = dpc_nu_setup_make(&s, obj, NULL, err);
    if (!st) dpc_nu_setup_free(&s);
    return st;
}

static dpc_status noise_check(const void *obj, dpc_error *err)
{
    dpc_sim_noise *ns = NULL;
    dpc_status st = dpc_sim_noise_new(&ns, obj, err);
    dpc_sim_noise_free(ns);
    return st;
}

static void test_sim(void)
{
    verify(dpc_sim_noise_config_fields());
    verify(dpc_sim_config_fields());
    verify(dpc_nu_setup_params_fields());
    static const double lambda[2] = {1, 0.5}, beta[3] = {1, -0.5, 0.25};
    dpc_sim_config c;
    dpc_sim_config_init(&c);
    defaults_are_init(dpc_sim_config_fields(), &c);
    c.eta = 0.1;
    c.d = 2;
    c.lambda = lambda;
    c.steps = 64;
    c.beta = beta;
    c.len = 3;
    check_refuses(dpc_sim_config_fields(), &c, sizeof c, sim_check, "");
    dpc_nu_setup_params p;
    dpc_nu_setup_params_init(&p);
    defaults_are_init(dpc_nu_setup_params_fields(), &p);
    p.d = 4;
    check_refuses(dpc_nu_setup_params_fields(), &p, sizeof p, nu_check, "");
    dpc_rng rng;
    dpc_rng_seed(&rng, 9);
    dpc_rng_stream zs = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_NOISE, 0));
    dpc_sim_noise_config nc = {.method = DPC_SIM_NOISE_DIRECT, .beta = beta, .len = 3,
                               .stream = &zs, .d = 2};
    check_refuses(dpc_sim_noise_config_fields(), &nc, sizeof nc, noise_check, "");
}

/* The Figure 4 study's parameters: _init writes the table's defaults (the ISA then detected, as
 * before the table) and the run refuses a scale outside its names through it. */
static void test_fig4(void)
{
    const dpc_field_table *t = dpc_nu_fig4_params_fields();
    verify(t);
    dpc_nu_fig4_params p;
    memset(&p, 0x5a, sizeof p);
    dpc_nu_fig4_params_init(&p);
    CHECK(p.scale == DPC_NU_REPRO_QUICK && p.seed == 20240101 && p.isa == dpc_isa_detect() &&
              p.event == NULL && p.ctx == NULL, "fig4 defaults are the old _init's");
    dpc_nu_fig4_params def = p;
    def.isa = DPC_ISA_AUTO;
    defaults_are_init(t, &def);
    p.scale = (dpc_nu_repro_scale)3;
    dpc_nu_fig4_result *out = NULL;
    dpc_error err = {0};
    CHECK(dpc_nu_fig4_run(&p, NULL, NULL, NULL, NULL, &out, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "scale") && !out, "scale 3 refused: '%s' %s", err.field,
          err.msg);
}

int main(void)
{
    test_srgd();
    test_kan();
    test_kan_theory();
    test_fig4();
    test_linreg();
    test_linreg_ssp();
    test_sim();
    return TEST_SUMMARY();
}
