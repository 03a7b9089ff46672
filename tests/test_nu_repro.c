/* test_nu_repro.c — the nu-DP-FTRL reproduction computed by the library (dpcorr/papers/
 * nu_repro.h), called directly at the smoke scale and held to values obtained independently:
 * the log-log slope of exact power laws; Noisy-SGD's exact V0 = eta sigma^2 sum_j 1 / (2 - eta
 * lambda_j) (S_b(beta = 1) = 1, sigma^2 = G^2 / (2 rho) = 1) and the mean-estimation values of
 * note 5.2 (V0 0.021078471 and R = 0.400491 at eta = 0.1); the fixed-design simulations within
 * 5 standard errors of V0; the Figure 2 point's V0 of `dpcorr theory` (1.280545 SGD,
 * 0.0180781 nu-FTRL); anti-PGD's gamma_T^2 = T; the Figure 4 study's protocol (events, tuning
 * rule, seeds) on a synthetic classification set; the refusals naming their parameter. */
#include "dpcorr/papers/nu_repro.h"
#include "harness.h"

#include <string.h>

static dpc_error err;

static void test_slope(void)
{
    double x[5] = {1, 2, 4, 8, 16}, y[5];
    for (int i = 0; i < 5; i++) y[i] = 3.0 * pow(x[i], 1.7);
    CHECK_NEAR_ABS(dpc_nu_loglog_slope(x, y, 5), 1.7, 1e-12, "exact power law");
    y[2] = -1; /* a non-positive value is left out, the rest is still exact */
    CHECK_NEAR_ABS(dpc_nu_loglog_slope(x, y, 5), 1.7, 1e-12, "power law without a point");
    CHECK(isnan(dpc_nu_loglog_slope(x, y, 1)), "one point has no slope");
}

/* One point: DP-SGD mean estimation, E delta^2 = eta / (2 - eta), simulated within 5 s.e.;
 * the names of the scales; the grids. */
static void test_simulate(void)
{
    dpc_nu_setup_params sp;
    dpc_nu_setup_params_init(&sp);
    sp.problem = DPC_NU_PROBLEM_MEAN;
    sp.eta = 0.5;
    sp.steps = 20000;
    sp.seed = 11;
    dpc_theory_beta b = dpc_theory_beta_sgd();
    dpc_nu_sim_point pt;
    CHECK_OK(dpc_nu_simulate(&sp, &b, &pt, &err), &err);
    CHECK_NEAR_REL(pt.theory, 0.5 / 1.5, 1e-12, "V0 of DP-SGD");
    CHECK(fabs(pt.mean - pt.theory) <= 5 * pt.se && pt.se > 0, "sim %g vs %g (se %g)", pt.mean,
          pt.theory, pt.se);
    CHECK(pt.seed == 11 && pt.steps == 20000 && pt.len >= 1, "recorded: seed %llu steps %zu len %zu",
          (unsigned long long)pt.seed, pt.steps, pt.len);
    dpc_error e2 = {0};
    sp.eta = -1;
    CHECK(dpc_nu_simulate(&sp, &b, &pt, &e2) == DPC_E_INVALID && !strcmp(e2.field, "eta"),
          "bad eta named: %s", e2.field);
    CHECK(!strcmp(dpc_nu_repro_scale_name(DPC_NU_REPRO_SMOKE), "smoke") &&
          !strcmp(dpc_nu_repro_scale_name(DPC_NU_REPRO_FULL), "full") &&
          !strcmp(dpc_nu_repro_scale_name((dpc_nu_repro_scale)5), "?"), "scale names");
    dpc_nu_fig4_config f = dpc_nu_fig4_config_of(DPC_NU_REPRO_FULL);
    CHECK(f.neps == 4 && f.nseeds == 3 && f.nlr == 5 && f.eps[3] == 8, "Figure 4's full grid");
    dpc_nu_fig2_config g = dpc_nu_fig2_config_of(DPC_NU_REPRO_FULL);
    CHECK(g.d0 == 128 && g.eta0 == 0.02 && g.nd == 5, "Figure 2's full grid (the paper's point)");
}

/* `dpcorr theory`'s evaluation: the Figure 2 point's V0 (note 5.3.2) by both routes, the
 * random-design bounds around it, mean estimation's R(0.1), the strongly convex bound with its
 * optimum only without data noise. */
static void test_evaluate(void)
{
    dpc_nu_setup_params p;
    dpc_nu_setup_params_init(&p);
    dpc_nu_setup su;
    dpc_nu_eval ev;
    dpc_theory_beta b = dpc_theory_beta_nu(0.02 / 128);
    CHECK_OK(dpc_nu_setup_make(&su, &p, NULL, &err), &err);
    CHECK_NEAR_REL(su.nu, 0.02 / 128, 1e-12, "Theorem 2.2's nu");
    CHECK_OK(dpc_nu_evaluate(&p, &su, &b, &ev, &err), &err);
    CHECK_NEAR_REL(ev.quadrature.v0, 0.0180781, 1e-5, "V0 nu-FTRL at d = 128");
    CHECK(ev.series_ok && fabs(ev.series.v0 / ev.quadrature.v0 - 1) < 1e-8, "series = quadrature");
    CHECK_NEAR_REL(ev.lti_opt, 0.0165934, 1e-5, "LTI optimum");
    CHECK(ev.bounds.lower_universal <= ev.lti_opt && ev.quadrature.v0 <= ev.bounds.sandwich_upper,
          "lower <= optimum, V0 <= sandwich");
    CHECK_NEAR_REL(ev.bounds.q, 0.02 * (ev.rates.d_eff + 2), 1e-12, "q = eta (Tr H + 2 ||H||)");
    CHECK(isnan(ev.mean_opt), "no mean optimum for linear regression");
    /* Property C.3 for Gaussian x = H^{1/2} z: R^2 = Tr H + 2 ||H|| (||H|| = 1), C_kurt = 3 */
    double trace = 0;
    for (int k = 1; k <= 128; k++) trace += 1.0 / k;
    dpc_theory_bounds ref;
    CHECK_OK(dpc_theory_lti_bounds(&su.problem, &b, trace + 2, 3.0, &ref, &err), &err);
    CHECK_NEAR_REL(ev.bounds.sandwich_upper, ref.sandwich_upper, 1e-12, "sandwich constants");
    CHECK_NEAR_REL(ev.bounds.upper_time, ref.upper_time, 1e-12, "Thm C.14 constants");
    dpc_nu_setup_free(&su);
    p.problem = DPC_NU_PROBLEM_MEAN;
    p.eta = 0.1;
    b = dpc_theory_beta_nu(0.1);
    CHECK_OK(dpc_nu_setup_make(&su, &p, NULL, &err), &err);
    CHECK_OK(dpc_nu_evaluate(&p, &su, &b, &ev, &err), &err);
    CHECK_NEAR_REL(ev.ratio_R, 0.400491, 2e-6, "R(0.1)");
    CHECK_NEAR_REL(ev.mean_opt, 0.021078471, 1e-7, "mean optimum");
    CHECK_NEAR_REL(ev.quadrature.v0, ev.mean_opt, 1e-7, "nu = eta is the optimum");
    dpc_nu_setup_free(&su);
    p.problem = DPC_NU_PROBLEM_SC;
    p.mu = 0.1;
    p.eta = 1;
    CHECK_OK(dpc_nu_setup_make(&su, &p, NULL, &err), &err);
    CHECK_OK(dpc_nu_evaluate(&p, &su, &b, &ev, &err), &err);
    CHECK(ev.have_sc_opt && ev.sc_opt.value <= ev.sc.value * (1 + 1e-9), "Optimized <= nu bound");
    dpc_nu_setup_free(&su);
    p.sigma_sgd = 0.5;
    CHECK_OK(dpc_nu_setup_make(&su, &p, NULL, &err), &err);
    CHECK_OK(dpc_nu_evaluate(&p, &su, &b, &ev, &err), &err);
    CHECK(!ev.have_sc_opt && isnan(ev.sc_opt.value), "no optimum with data noise");
    dpc_nu_setup_free(&su);
}

/* Noisy-SGD's exact V0 on lambda_j = j^-a (G = 1, rho = 1/2, sigma_sgd = 0). */
static double v0_sgd(size_t d, double a, double eta)
{
    double s = 0;
    for (size_t j = 1; j <= d; j++) s += eta / (2 - eta * pow((double)j, -a));
    return s;
}

static void test_fig1(void)
{
    dpc_nu_repro_params p;
    dpc_nu_repro_params_init(&p);
    p.scale = DPC_NU_REPRO_SMOKE;
    p.seed = 7;
    dpc_nu_fig1_result *r = NULL;
    CHECK_OK(dpc_nu_fig1_run(&p, &r, &err), &err);
    if (!r) return;
    for (int i = 0; i < DPC_NU_FIG1_SIMS; i++) {
        const dpc_nu_fig1_sim *s = &r->sims[i];
        double e = s->eta;
        CHECK_NEAR_REL(s->sgd.theory, e / (2 - e), 1e-9, "DP-SGD E delta^2 at eta %g", e);
        CHECK(fabs(s->opt.mean - s->opt.theory) <= 5 * s->opt.se, "nu = eta sim %g vs V0 %g (se %g)",
              s->opt.mean, s->opt.theory, s->opt.se);
        CHECK(fabs(s->sgd.mean - s->sgd.theory) <= 5 * s->sgd.se, "SGD sim %g vs V0 %g (se %g)",
              s->sgd.mean, s->sgd.theory, s->sgd.se);
        CHECK(s->opt.seed == 7 + 100 + (uint64_t)i && s->sgd.seed == 7 + 200 + (uint64_t)i, "seeds");
        CHECK(s->opt.steps == 20000, "smoke horizon");
    }
    CHECK_NEAR_ABS(r->sims[1].eta, 0.1, 0, "check point");
    CHECK_NEAR_REL(r->sims[1].opt.theory, 0.021078471, 1e-7, "note 5.2 optimum at eta 0.1");
    CHECK_NEAR_REL(r->sims[1].ratio_theory, 0.400491, 2e-6, "R(0.1)");
    CHECK_NEAR_REL(r->ratio[60], 1.0, 1e-12, "R(1) = 1");
    CHECK_NEAR_ABS(r->beta[0][0], 1.0, 0, "beta*_0 = 1");
    CHECK_NEAR_REL(r->beta[0][1], -0.5 * 0.9, 1e-15, "beta*_1 = -(1/2)(1 - eta)");
    /* |B*(0)|^2 = |1 - eta - 1| = eta */
    CHECK_NEAR_REL(r->spectrum[1][DPC_NU_FIG1_OMEGA / 2], 0.01, 1e-9, "|B*(0)|^2 = eta");
    CHECK(r->claims.n_reproduces == 4 && r->claims.n_not_reproduced == 2, "claims");
    dpc_nu_fig1_free(r);
    dpc_nu_fig1_free(NULL);
}

static int points_seen;
static int count_point(void *ctx, const dpc_nu_fig2_point *pt)
{
    (void)ctx, (void)pt;
    points_seen++;
    return 0;
}
static int stop_point(void *ctx, const dpc_nu_fig2_point *pt)
{
    (void)ctx, (void)pt;
    return 1;
}

static void test_fig2(void)
{
    dpc_nu_repro_params p;
    dpc_nu_repro_params_init(&p);
    p.scale = DPC_NU_REPRO_SMOKE;
    dpc_nu_fig2_result *r = NULL;
    CHECK_OK(dpc_nu_fig2_run(&p, count_point, NULL, &r, &err), &err);
    if (!r) return;
    /* the smoke sweeps d {8, 16}, alpha {0.6, 1}, eta {0.04, 0.08} around (16, 1, 0.08) share
     * their base point: 4 distinct points */
    CHECK(r->npoints == 4 && points_seen == 4, "%zu points, %d reported", r->npoints, points_seen);
    CHECK(r->sweep[0][1] == r->sweep[1][1] && r->sweep[0][1] == r->sweep[2][1], "shared base point");
    for (size_t i = 0; i < r->npoints; i++) {
        const dpc_nu_fig2_point *pt = &r->points[i];
        CHECK_NEAR_REL(pt->theory[0], v0_sgd(pt->d, pt->alpha, pt->eta), 1e-9, "SGD V0 point %zu", i);
        CHECK_NEAR_REL(pt->nu, pt->eta * pow((double)pt->d, -pt->alpha), 1e-12, "nu = eta lambda_min");
        for (int m = 0; m < 2; m++)
            CHECK(fabs(pt->fixed[m] - pt->theory[m]) <= 5 * pt->fixed_se[m],
                  "fixed design %g vs V0 %g (se %g), point %zu mech %d", pt->fixed[m], pt->theory[m],
                  pt->fixed_se[m], i, m);
        CHECK(pt->seed[0] == p.seed + 1000 + 10 * (i + 1), "point %zu seed", i);
        CHECK(pt->steps % 32 == 0 && pt->steps <= ((size_t)1 << 12) + 32, "steps %zu", pt->steps);
    }
    /* SGD vs d: the exact slope between d = 8 and 16 */
    double s = log(v0_sgd(16, 1, 0.08) / v0_sgd(8, 1, 0.08)) / log(2.0);
    CHECK(!strcmp(r->slopes[0].key, "sgd_vs_d"), "first slope");
    CHECK_NEAR_REL(r->slopes[0].lti, s, 1e-9, "SGD slope vs d");
    CHECK_NEAR_ABS(r->slopes[0].paper, 1.0, 0, "the paper's value");
    CHECK(r->total == 4 && r->inside >= 0 && r->inside <= 4, "sandwich count");
    dpc_nu_fig2_free(r);
    dpc_nu_fig2_result *r2 = NULL;
    dpc_error e2 = {0};
    CHECK(dpc_nu_fig2_run(&p, stop_point, NULL, &r2, &e2) == DPC_E_CANCELLED && !r2, "callback stops");
    p.scale = (dpc_nu_repro_scale)9;
    CHECK(dpc_nu_fig2_run(&p, NULL, NULL, &r2, &e2) == DPC_E_INVALID && !strcmp(e2.field, "scale"),
          "bad scale named: %s", e2.field);
}

static void test_fig3(void)
{
    dpc_nu_repro_params p;
    dpc_nu_repro_params_init(&p);
    p.scale = DPC_NU_REPRO_SMOKE;
    dpc_nu_fig3_result *r = NULL;
    CHECK_OK(dpc_nu_fig3_run(&p, &r, &err), &err);
    if (!r) return;
    CHECK(r->nk == 7 && r->tmax == 2, "smoke grid");
    CHECK_NEAR_REL(r->kappa[0], 1.0, 1e-15, "kappa from 1");
    CHECK_NEAR_REL(r->kappa[r->nk - 1], 1000.0, 1e-12, "to 1000");
    CHECK(r->ordering, "SGD > nu > Optimized at kappa 1000");
    for (size_t i = 0; i < r->nk; i++)
        CHECK(r->bound_opt[i] <= r->bound_opt0[i] * (1 + 1e-12), "more multipliers never loosen");
    for (int i = 0; i < 4; i++)
        CHECK(r->sims[i].gap <= r->sims[i].bound && r->sims[i].gap > 0, "sim %d %g below %g", i,
              r->sims[i].gap, r->sims[i].bound);
    CHECK(r->below, "every simulation below its bound");
    dpc_nu_fig3_free(r);
}

static void test_tables(void)
{
    dpc_nu_tables_result *t = NULL;
    CHECK_OK(dpc_nu_tables_run(&t, &err), &err);
    if (!t) return;
    CHECK_NEAR_REL(t->table2[0].f_inf, v0_sgd(128, 1, 0.02), 1e-9, "SGD F_inf = closed form");
    CHECK_NEAR_REL(t->table2[0].f_inf, 1.280545, 2e-6, "SGD F_inf (dpcorr theory)");
    CHECK_NEAR_REL(t->table2[1].f_inf, 0.0180781, 1e-5, "nu-FTRL F_inf (note 5.3.2)");
    CHECK_NEAR_REL(t->table2[0].gamma_inf2, 1.0, 1e-12, "SGD gamma_inf^2 = 1");
    CHECK_NEAR_REL(t->table2[3].gamma_t2[3], 1e5, 1e-9, "anti-PGD gamma_T^2 = T");
    CHECK(isinf(t->table2[2].gamma_inf2) || t->table2[2].gamma_inf2 > 1e6, "Optimal CC diverges");
    CHECK_NEAR_REL(t->gamma_T2[2][DPC_NU_TABLES_T - 1], t->nu0_log_fit, 1e-3, "log T growth");
    CHECK(t->damped_between, "damped anti-PGD between SGD and nu-FTRL");
    CHECK_NEAR_REL(t->lower_universal, 0.02 * 0.02 / 4 * t->trace, 1e-12, "lower bound");
    dpc_nu_tables_free(t);
}

typedef struct ev_count {
    int n[8];
    int order_ok; /* STUDY, CHOSEN, TUNING ... TUNING_DONE ... RUN in this order */
    int last;
} ev_count;

static int on_fig4(void *ctx, const dpc_nu_fig4_event *ev)
{
    ev_count *c = ctx;
    int s = (int)ev->stage;
    int rank = s == DPC_NU_FIG4_EV_CALIBRATED || s == DPC_NU_FIG4_EV_FAILED ? c->last : s;
    if (s == DPC_NU_FIG4_EV_TUNED) rank = DPC_NU_FIG4_EV_TUNING;
    if (rank < c->last) c->order_ok = 0;
    c->last = rank;
    c->n[s]++;
    return 0;
}

/* The study's protocol on a synthetic two-class set (the grid is the smoke one; the data the
 * caller's): every event, the tuning rule (best holdout accuracy, ties to the smaller rate), the
 * summary and the checks recomputed from the runs. */
static void test_fig4(void)
{
    dpc_rng rng;
    dpc_rng_seed(&rng, 3);
    dpc_dataset *train = NULL, *test = NULL;
    dpc_model *model = NULL;
    dpc_model_config mc;
    CHECK_OK(dpc_data_load_spec(&train, &test, "synthetic:logistic,n=600,d=10,test-n=300", &rng, &err), &err);
    CHECK_OK(dpc_model_parse_shape(&mc, "softmax", train ? train->d : 1, NULL, 2, &err), &err);
    CHECK_OK(dpc_model_new(&model, &mc, &err), &err);
    dpc_nu_fig4_params p;
    dpc_nu_fig4_params_init(&p);
    p.scale = DPC_NU_REPRO_SMOKE;
    p.seed = 3;
    ev_count ec = {{0}, 1, 0};
    p.event = on_fig4;
    p.ctx = &ec;
    dpc_nu_fig4_result *r = NULL;
    if (train && model) CHECK_OK(dpc_nu_fig4_run(&p, model, train, test, &rng, &r, &err), &err);
    if (r) {
        const dpc_nu_fig4_config *fc = &r->cfg;
        CHECK(r->spe == 6 && r->n == 12 && r->tune_n == 500 && r->tune_batch == 83,
              "spe %zu n %zu tune %zu/%zu", r->spe, r->n, r->tune_n, r->tune_batch);
        CHECK(ec.n[DPC_NU_FIG4_EV_STUDY] == 1 && ec.n[DPC_NU_FIG4_EV_CHOSEN] == 1 &&
              ec.n[DPC_NU_FIG4_EV_TUNING] == 1 && ec.n[DPC_NU_FIG4_EV_TUNING_DONE] == 1, "stages");
        CHECK(ec.n[DPC_NU_FIG4_EV_TUNED] == 24 && ec.n[DPC_NU_FIG4_EV_RUN] == 12, "rows %d %d",
              ec.n[DPC_NU_FIG4_EV_TUNED], ec.n[DPC_NU_FIG4_EV_RUN]);
        CHECK(ec.n[DPC_NU_FIG4_EV_CALIBRATED] == 24 && ec.n[DPC_NU_FIG4_EV_FAILED] == 0,
              "one calibration per mechanism and stage");
        CHECK(ec.order_ok, "events in stage order");
        CHECK(r->nu > 0 && r->nu < 1 && r->damping > 0 && r->damping < 1, "choices");
        for (int m = 0; m < DPC_NU_FIG4_MECHS; m++) {
            const dpc_nu_fig4_mech *mk = &r->mech[m];
            double best = mk->tune_acc[0][0], lr = fc->lrs[0];
            if (mk->tune_acc[0][1] > best) lr = fc->lrs[1];
            CHECK(mk->lr[0] == lr, "%s: lr %g, holdout best %g", mk->name, mk->lr[0], lr);
            CHECK(mk->acc[0][0] >= 0 && mk->acc[0][0] <= 1 && mk->mean[0] == mk->acc[0][0] &&
                  mk->sd[0] == 0, "%s accuracy", mk->name);
            CHECK(mk->sigma[0] > 0 && fabs(mk->eps_accounted[0][0] - 4) < 0.05, "%s: sigma %g eps %g",
                  mk->name, mk->sigma[0], mk->eps_accounted[0][0]);
        }
        const dpc_nu_fig4_mech *mk = r->mech;
        CHECK(r->nu_ge_sgd_fixed == (mk[DPC_NU_FIG4_NU].mean[0] >= mk[DPC_NU_FIG4_SGD_FIXED].mean[0]),
              "check recomputed");
        CHECK(r->mech[DPC_NU_FIG4_SGD_POISSON].sampler == DPC_SAMPLER_POISSON &&
              r->mech[DPC_NU_FIG4_NU_BIB].sampler == DPC_SAMPLER_BALLS_IN_BINS, "samplers");
    }
    dpc_nu_fig4_free(r);
    dpc_nu_fig4_free(NULL);
    dpc_error e2 = {0};
    r = NULL;
    CHECK(dpc_nu_fig4_run(&p, NULL, train, test, &rng, &r, &e2) == DPC_E_INVALID &&
          !strcmp(e2.field, "model") && !r, "NULL model named: %s", e2.field);
    dpc_model_free(model);
    dpc_dataset_free(train);
    dpc_dataset_free(test);
}

/* The field table covers dpc_nu_repro_params and _init writes its defaults (the values it wrote
 * by hand before the table: quick, 20240101). */
static void test_field_table(void)
{
    const dpc_field_table *t = dpc_nu_repro_params_fields();
    CHECK(t && t->size == sizeof(dpc_nu_repro_params) && t->count == 2, "table of the struct");
    CHECK_OK(dpc_field_table_verify(t, &err), &err);
    dpc_nu_repro_params p;
    memset(&p, 0x5a, sizeof p);
    dpc_nu_repro_params_init(&p);
    CHECK(p.scale == DPC_NU_REPRO_QUICK && p.seed == 20240101, "defaults");
    CHECK_OK(dpc_field_check(t, &p, &err), &err);
    p.scale = (dpc_nu_repro_scale)3;
    CHECK(dpc_field_check(t, &p, &err) == DPC_E_INVALID && !strcmp(err.field, "scale"),
          "scale 3 refused naming scale: '%s'", err.msg);
}

int main(void)
{
    test_field_table();
    test_slope();
    test_simulate();
    test_evaluate();
    test_fig1();
    test_fig2();
    test_fig3();
    test_tables();
    test_fig4();
    return TEST_SUMMARY();
}
