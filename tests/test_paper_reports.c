/* test_paper_reports.c — the report sections the paper modules write for `train --report`
 * (dpc_linreg_plan_report_json, dpc_linreg_paper_report_json, dpc_srgd_config_report_json,
 * dpc_srgd_plan_report_json, dpc_srgd_steps_report_json, dpc_kan_lcgd_result_json,
 * dpc_kan2_theory_report_json, dpc_kan_run_config_report_json, dpc_kan_run_noise_report_json): each member under its documented key, in order, with the value
 * of the struct field it reports (a plan resolved by the library for linreg; structs filled here
 * for the others). Expected texts follow the header's rules, not a previous output. */
#include "dpcorr/io.h"
#include "dpcorr/papers/kan.h"
#include "dpcorr/papers/linreg.h"
#include "dpcorr/papers/srgd.h"
#include "harness.h"

#include <math.h>

typedef void (*section_fn)(dpc_json_writer *w, const void *ctx);

/* The one-line JSON of fn's members (static buffer). */
static const char *render(section_fn fn, const void *ctx)
{
    static char buf[8192];
    FILE *f = tmpfile();
    if (!f) return "";
    dpc_json_writer w;
    dpc_json_begin_line(&w, f);
    fn(&w, ctx);
    dpc_json_finish(&w);
    rewind(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

/* 1 when the keys appear in text in this order (NULL-terminated list). */
static int in_order(const char *text, const char *const *keys)
{
    const char *p = text;
    for (; *keys; keys++) {
        char k[64];
        snprintf(k, sizeof k, "\"%s\": ", *keys);
        if (!(p = strstr(p, k))) return 0;
        p += strlen(k);
    }
    return 1;
}

typedef struct lr_ctx {
    const dpc_linreg_plan *P;
    const dpc_linreg_opts *o;
} lr_ctx;

static void linreg_sections(dpc_json_writer *w, const void *vc)
{
    const lr_ctx *c = vc;
    static const char *const src[7] = {"option", "option", "option", "default", "default",
                                       "default", "option"};
    dpc_linreg_plan_report_json(w, c->P, c->o, src);
    dpc_linreg_paper_report_json(w, c->P, c->o);
}

static void test_linreg(void)
{
    dpc_error err = {0};
    dpc_linreg_opts o;
    dpc_linreg_opts_init(&o, DPC_LINREG_AMBSSGD);
    o.epsilon = 1;
    o.prior.h_norm = 1;
    o.prior.kappa = 2;
    o.prior.r_x = 3;
    o.prior.sigma_bound = 0.5;
    o.stream = 7;
    dpc_linreg_plan P;
    CHECK_OK(dpc_linreg_plan_make(&P, &o, 100000, 9, &err), &err);
    lr_ctx c = {&P, &o};
    const char *t = render(linreg_sections, &c);
    static const char *const keys[] = {
        "plan", "steps", "batch", "stat_batch", "tail_start", "unused_records", "eta", "clip",
        "clip_scale", "domain_B", "dpstat_k", "dpstat_delta", "dpstat_margin_gamma",
        "dpstat_rule", "calibration", "public_inputs", "h_norm", "kappa", "r_x", "k2", "tail_a",
        "w_bound", "sigma_bound", "source", "h_norm", "privacy_paper", "rho", "rho_grad",
        "rho_stat", "noise_multiplier_stat", "eps0", "delta0", "stream", "preconditions", NULL};
    CHECK(in_order(t, keys), "linreg sections in order: %s", t);
    char want[160];
    snprintf(want, sizeof want, "\"steps\": %zu, \"batch\": %zu, \"stat_batch\": %zu", P.steps,
             P.batch, P.stat_batch);
    CHECK(strstr(t, want) != NULL, "the plan's layout: %s", want);
    CHECK(strstr(t, "\"public_inputs\": {\"h_norm\": 1, \"kappa\": 2, \"r_x\": 3, \"k2\": "),
          "the prior's values");
    CHECK(strstr(t, "\"tail_a\": 0.5, \"w_bound\": 1, \"sigma_bound\": 0.5, \"source\": "
                    "{\"h_norm\": \"option\", \"kappa\": \"option\", \"r_x\": \"option\", \"k2\": "
                    "\"default\", \"tail_a\": \"default\", \"w_bound\": \"default\", "
                    "\"sigma_bound\": \"option\"}}"),
          "the tail exponent as tail_a, the sources by field");
    CHECK(strstr(t, "\"calibration\": \"accountant\"") && strstr(t, "\"stream\": 7"),
          "the options' calibration and stream");
    dpc_linreg_check ck[DPC_LINREG_MAX_CHECKS];
    size_t nc = dpc_linreg_checks(&P, ck, DPC_LINREG_MAX_CHECKS), seen = 0;
    for (const char *p = strstr(t, "\"preconditions\": ["); p && (p = strstr(p, "\"name\": "));
         p++)
        seen++;
    CHECK(nc >= 1 && seen == nc, "one object per check (%zu of %zu)", seen, nc);
    snprintf(want, sizeof want, "{\"name\": \"%s\", \"ok\": %s, ", ck[0].name,
             ck[0].ok ? "true" : "false");
    CHECK(strstr(t, want) != NULL, "the first check: %s", want);
}

typedef struct srgd_ctx {
    const dpc_srgd_config *c;
    const dpc_srgd_plan *p;
    const dpc_srgd_step_info *tr;
    size_t T;
} srgd_ctx;

static void srgd_sections(dpc_json_writer *w, const void *vc)
{
    const srgd_ctx *x = vc;
    dpc_srgd_config_report_json(w, x->c, x->p, DPC_SRGD_REGIME_B, 2.5, 0, 1000);
    dpc_srgd_plan_report_json(w, x->p);
    dpc_srgd_steps_report_json(w, x->tr, x->T);
}

static void test_srgd(void)
{
    dpc_srgd_config c;
    dpc_srgd_config_init(&c);
    c.L = 2, c.M = 4, c.R = 8, c.delta = 1e-6, c.permute = 1;
    dpc_srgd_plan p = {.private_run = 1, .steps = 5, .batch = 60, .beta = 1.75, .clip = 3.5,
                       .z_step = 0.5, .mu = 0.25, .sigma = 3, .sens_formula = 2,
                       .sens_mechanism = 1.5, .mu_effective = 0.125, .delta_achieved = 1e-7};
    dpc_srgd_step_info tr[2] = {{.step = 0, .max_norm = 1, .clip_fraction = 0.5,
                                 .noise_norm = 2, .b_norm = 0.25, .grad_norm = 4,
                                 .srg_error = NAN, .loss = 0.75, .risk = 0.125},
                                {.step = 1, .risk = NAN}};
    srgd_ctx x = {&c, &p, tr, 2};
    const char *t = render(srgd_sections, &x);
    char want[512];
    /* regime B reports regime A's constant for the same cc: the practical cc itself */
    snprintf(want, sizeof want,
             "{\"regime\": \"B\", \"c\": 2.5, \"literal\": false, \"variant\": \"%s\", \"noise\": "
             "\"%s\", \"L\": 2, \"M\": 4, \"R\": 8, \"steps\": 5, \"batch\": 60, \"beta\": 1.75, "
             "\"clip_delta\": 3.5, \"z_step\": 0.5, \"permute\": true, \"privacy_paper\": "
             "{\"private\": true, \"mu\": 0.25, \"mu_effective\": 0.125, \"delta_achieved\": "
             "9.9999999999999995e-08, \"sigma_S\": 3, \"sensitivity_formula\": 2, "
             "\"sensitivity_mechanism\": 1.5}, \"steps\": [{\"t\": 0, \"max_delta_norm\": 1, ",
             dpc_srgd_variant_name(c.variant), dpc_srgd_noise_name(c.noise));
    CHECK(!strncmp(t, want, strlen(want)), "srgd config and privacy_paper: %s", t);
    CHECK(strstr(t, "\"clip_fraction\": 0.5, \"noise_norm\": 2, \"b_norm\": 0.25, \"grad_norm\": "
                    "4, \"srg_error\": null, \"batch_loss\": 0.75, \"risk\": 0.125}, {\"t\": 1, ") &&
              strstr(t, "\"risk\": null}]}"),
          "srgd steps, one object per round: %s", t);
}

typedef struct kan_ctx {
    const dpc_kan_lcgd_result *res;
    const dpc_kan_margin *mg;
    const dpc_kan_consts *kc;
    const dpc_kan2_bounds *b;
} kan_ctx;

static void kan_sections(dpc_json_writer *w, const void *vc)
{
    const kan_ctx *x = vc;
    dpc_kan_lcgd_result_json(w, x->res);
    dpc_kan2_theory_report_json(w, x->mg, x->kc, x->b);
}

static void kan_run_sections(dpc_json_writer *w, const void *vc)
{
    const kan_ctx *x = vc;
    dpc_kan_run_config c;
    dpc_kan_run_config_init(&c);
    c.batch = 50, c.lr = 0.25, c.clip = 2, c.radius = INFINITY, c.eval_every = 3;
    c.privacy.lambda = 0.5;
    dpc_kan_run_config_report_json(w, &c, 41, DPC_NOISE_REPLAY);
    dpc_kan_run_noise_report_json(w, 1.5, x->res, 41);
}

static void test_kan(void)
{
    dpc_kan_lcgd_result res = {1, 2, NAN, NAN, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 99};
    dpc_kan_margin mg = {.gamma_lo = 0.25, .gamma_hi = 0.5};
    dpc_kan_consts kc = {.G_delta = 1, .G_c = 2, .beta = 3, .eta_max = 4, .event_ok = 1};
    dpc_kan2_bounds b = {0.5, 1.5, 2.5, 100, 200, NAN};
    kan_ctx x = {&res, &mg, &kc, &b};
    const char *t = render(kan_sections, &x);
    CHECK(!strcmp(t, "{\"avg_train_loss\": 1, \"avg_train_err\": 2, \"avg_test_loss\": null, "
                     "\"avg_test_err\": null, \"last_train_loss\": 5, \"last_train_err\": 6, "
                     "\"last_test_loss\": 7, \"last_test_err\": 8, \"init_train_loss\": 9, "
                     "\"max_dist\": 10, \"last_dist\": 11, \"projections\": 12, \"clipped\": 13, "
                     "\"examples\": 14, \"evaluated\": 15, \"theory\": {\"gamma_lo\": 0.25, "
                     "\"gamma_hi\": 0.5, \"G_delta\": 1, \"G_c\": 2, \"beta\": 3, \"eta_max\": 4, "
                     "\"init_event_ok\": true, \"A_corr_unit\": 0.5, \"A_van_unit\": 1.5, "
                     "\"A_non_unit\": 2.5, \"width_m_lo\": 100, \"width_m_hi\": 200, "
                     "\"width_m_edge\": null}}\n"),
          "kan metrics (noise_scale left to the noise section) and theory: %s", t);
    t = render(kan_run_sections, &x);
    char want[320];
    snprintf(want, sizeof want,
             "{\"iterates\": 41, \"batch\": 50, \"eta\": 0.25, \"clip\": 2, \"lambda\": 0.5, "
             "\"radius\": \"inf\", \"eval_every\": 3, \"noise_form\": \"%s\", \"noise\": "
             "{\"noise_std_per_unit_clip\": 1.5, \"noise_scale_c_priv\": 99, \"noisy_steps\": "
             "40}}\n", dpc_noise_form_name(DPC_NOISE_REPLAY));
    CHECK(!strcmp(t, want), "kan config members and noise: %s", t);
}

int main(void)
{
    test_linreg();
    test_srgd();
    test_kan();
    return TEST_SUMMARY();
}
