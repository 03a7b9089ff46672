/* test_kan_repro.c — the reproduction of [KAN] as the paper module computes it (dpcorr/papers/
 * kan.h section 9), called directly at smoke scale; each part is checked against values derived
 * independently of it: the noise walk regenerated from the generator's Z, note 004's printed
 * sensitivities and kappas, a run of the lambda trend rebuilt from the documented recipe (data,
 * model, salt), the width sweep's edge (which its kappa places at wtarget by construction), the
 * trends' kappa from the closed form, and every verdict recomputed from the rows; and a run's
 * decisions (unit ball, theory settings, bounds) against the functions they compose. */
#include "dpcorr/papers/kan.h"
#include "harness.h"

static dpc_kan_repro_params smoke_params(uint64_t seed)
{
    dpc_kan_repro_params p;
    dpc_kan_repro_params_init(&p);
    p.scale = DPC_KAN_REPRO_SMOKE;
    p.seed = seed;
    return p;
}

static void test_grids_and_refusals(void)
{
    dpc_error err = {0};
    dpc_kan_repro_params p;
    dpc_kan_repro_params_init(&p);
    CHECK(p.scale == DPC_KAN_REPRO_FULL && p.seed == 20240101u, "defaults: full, seed 20240101");
    const dpc_field_table *t = dpc_kan_repro_params_fields();
    CHECK(t && dpc_field_table_verify(t, &err) == DPC_OK, "the params table covers its struct: %s",
          err.msg);
    CHECK(t && t->count == 2 && !strcmp(dpc_field_enum_name(&t->fields[0], DPC_KAN_REPRO_SMOKE), "smoke"),
          "scale names");
    for (int s = 0; s < 3; s++) {
        dpc_kan_repro_grid g;
        CHECK_OK(dpc_kan_repro_grid_get((dpc_kan_repro_scale)s, &g, &err), &err);
        CHECK(g.seeds >= 1 && g.seeds <= DPC_KAN_REPRO_MAX_SEEDS, "scale %d seeds %zu", s, g.seeds);
        CHECK(g.nwm >= 2 && g.nwm <= DPC_KAN_REPRO_MAX_WIDTHS, "scale %d widths %zu", s, g.nwm);
        CHECK(g.nn >= 2 && g.nn <= DPC_KAN_REPRO_MAX_POINTS && g.ne >= 2 &&
              g.ne <= DPC_KAN_REPRO_MAX_POINTS, "scale %d trend points", s);
        CHECK(g.B <= g.n && g.B_cal <= g.n_cal && g.tr_B <= g.ns[0], "scale %d batches <= n", s);
        dpc_kan_repro_fmnist fs;
        CHECK_OK(dpc_kan_repro_fmnist_setup((dpc_kan_repro_scale)s, &fs, &err), &err);
        CHECK(fs.cfg.epsilon == 3.0 && fs.cfg.delta == 1e-5 && fs.cfg.lr == 2.0 && fs.cfg.clip == 1.0,
              "fmnist: eps 3, delta 1e-5, lr 2, clip 1");
        CHECK(fs.model[0] && !strncmp(fs.model[0], "kan:", 4) && fs.model[1] &&
              !strncmp(fs.model[1], "mlp:", 4), "fmnist models: KAN, MLP");
        CHECK(fs.cfg.accountant == (s == DPC_KAN_REPRO_FULL ? DPC_ACCOUNTANT_PLD : DPC_ACCOUNTANT_RDP),
              "fmnist accountant at scale %d", s);
    }
    dpc_kan_repro_grid g;
    dpc_error e2 = {0};
    CHECK(dpc_kan_repro_grid_get((dpc_kan_repro_scale)7, &g, &e2) == DPC_E_INVALID &&
          !strcmp(e2.field, "scale"), "unknown scale refused naming scale: %s", e2.msg);
    p.scale = (dpc_kan_repro_scale)7;
    dpc_kan_repro_width w;
    CHECK(dpc_kan_repro_width_window(&p, &w, &e2) == DPC_E_INVALID, "a part refuses a bad scale");
    CHECK(dpc_kan_repro_sensitivity(NULL, &e2) == DPC_E_INVALID, "NULL result refused");
    CHECK(dpc_kan_repro_noise_stats(NULL, NULL, NULL) == DPC_E_INVALID, "NULL params refused");
    size_t ny = 0, nn = 0;
    const char *const *yes = dpc_kan_repro_reproduced(&ny), *const *no = dpc_kan_repro_not_reproduced(&nn);
    CHECK(ny == 5 && nn == 2 && yes[0] && *yes[0] && no[1] && *no[1], "verdict lists %zu, %zu", ny, nn);
}

/* The cumulative noise walk regenerated from Z[t][q] = gaussian(noise stream 0, t, q):
 * xi_t = Z_t - lambda Z_{t-1} (kappa = eta = clip = B = 1, zero gradients). */
static void test_noise(void)
{
    dpc_kan_repro_params p = smoke_params(5);
    dpc_kan_repro_noise *r = malloc(sizeof *r);
    dpc_error err = {0};
    CHECK_OK(dpc_kan_repro_noise_stats(&p, r, &err), &err);
    size_t N = r->coordinates, T = r->T;
    CHECK(N == 500 && T == DPC_KAN_REPRO_NOISE_T, "smoke: 500 coordinates, T = 100");
    dpc_rng rng;
    dpc_rng_seed(&rng, 5 + 11);
    dpc_rng_stream ns = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_NOISE, 0));
    for (int l = 0; l < 3; l++) {
        double lam = r->lambda[l], s = 0, s1 = 0;
        for (size_t q = 0; q < N; q++) {
            double cum = 0, zp = 0;
            for (size_t t = 0; t < T; t++) {
                double z = dpc_rng_gaussian(&ns, t, q), xi = z - lam * zp;
                if (t == 0) s1 += xi * xi;
                cum += xi, zp = z;
            }
            s += cum * cum;
        }
        CHECK_NEAR_REL(r->var_sum[l][T], s / (double)N, 1e-9, "var_sum lambda %g", lam);
        CHECK_NEAR_REL(r->var_xi1[l], s1 / (double)N, 1e-9, "var xi_1 lambda %g", lam);
        CHECK(r->theory_var_sum[l][T] == 1 + (1 - lam) * (1 - lam) * (double)(T - 1), "theory");
        /* 500 x 99 draws: the sampling error of Var(xi_t) is ~0.7% of 1 + lambda^2 */
        CHECK_NEAR_REL(r->var_xi_t[l], 1 + lam * lam, 0.05, "Var(xi_t) lambda %g", lam);
        CHECK_NEAR_ABS(r->cov_lag1[l], -lam, 0.05, "Cov lag 1 lambda %g", lam);
        CHECK_NEAR_ABS(r->cov_lag2[l], 0, 0.05, "Cov lag 2 lambda %g", lam);
    }
    free(r);
}

/* note 004's printed values (its section 2.4 table and oracle 12). */
static void test_exact_parts(void)
{
    dpc_error err = {0};
    dpc_kan_repro_sens s;
    CHECK_OK(dpc_kan_repro_sensitivity(&s, &err), &err);
    const double brute[5] = {2.70800, 6.00838, 6.42925, 1.73205, 1.15470};
    const double bound[3] = {3.46072, 11.28122, 6.92651};
    CHECK(s.rows == 8, "8 cases");
    for (size_t i = 0; i < 5; i++) {
        CHECK_NEAR_ABS(s.row[i].brute, brute[i], 6e-6, "brute force case %zu", i);
        CHECK_NEAR_REL(s.row[i].exact, s.row[i].brute, 1e-12, "exact = brute force case %zu", i);
        if (i < 3) CHECK_NEAR_ABS(s.row[i].bound, bound[i], 6e-6, "F.11 bound case %zu", i);
    }
    for (size_t i = 5; i < 8; i++) CHECK(isnan(s.row[i].brute) && s.row[i].bound >= s.row[i].exact, "T 1000");
    /* lambda = 0: ||C y|| = sqrt(|y|) */
    CHECK_NEAR_REL(s.row[7].exact, sqrt(161.0), 1e-12, "lambda 0, tau 161");
    dpc_kan_repro_kappa k;
    CHECK_OK(dpc_kan_repro_kappa_table(&k, &err), &err);
    CHECK_NEAR_ABS(k.eq19_eps, 6.65, 0.005, "eq. 19 epsilon at kappa D.9");
    CHECK(!k.eq19_kappa_exists, "no eq.-19 kappa for eps = 1");
    CHECK_NEAR_ABS(k.fb_kappa_F12, 252.67, 0.005, "full batch F.12");
    CHECK_NEAR_ABS(k.fb_kappa_exact, 73.99, 0.005, "full batch exact");
    CHECK_NEAR_ABS(k.fb_sensitivity, 19.833, 0.0005, "||C 1||");
    CHECK_NEAR_ABS(k.fb_kappa_F12_l0, 126.33, 0.005, "full batch F.12 lambda 0");
    CHECK_NEAR_ABS(k.fb_kappa_exact_l0, 37.31, 0.005, "full batch exact lambda 0");
    CHECK(k.fb_delta_F12 < 1e-30, "F.12 is far from tight: delta %g", k.fb_delta_F12);
    CHECK(k.rows == 3 && k.row[0].F12_valid && !k.row[2].F12_valid, "F.12 validity by eps");
    for (int l = 0; l < DPC_KAN_REPRO_NLAMBDA; l++) {
        /* eps = 8 is outside F.12: the eps = 1 value scaled by 1/8 (rows 0 and 2 share n, B, T) */
        CHECK_NEAR_REL(k.row[2].kappa_F12[l], k.row[0].kappa_F12[l] / 8, 1e-14, "F.12 scaled, l %d", l);
        CHECK(k.row[0].kappa_dpcorr[l] < k.row[0].kappa_F12[l], "dpcorr tighter than F.12, l %d", l);
    }
}

/* Run (lambda 0, seed 0) of the fixed-kappa trend, rebuilt from the header's recipe. */
static double rebuilt_run(const dpc_kan_repro_grid *g, uint64_t seed)
{
    dpc_error err = {0};
    dpc_rng rng;
    dpc_rng_seed(&rng, seed + 100);
    dpc_dataset *tr = NULL, *te = NULL;
    dpc_kan2 *k = NULL;
    dpc_kan_task *task = NULL;
    double *W0 = NULL, out = NAN;
    dpc_kan2_config kc = {.d = g->d, .m = g->m, .grid = 5, .act = DPC_KAN_SIGMOID};
    dpc_kan_lcgd_result res;
    if (!dpc_kan_synth(&tr, &rng, 0, g->n, g->d, 0.05, NULL, &err) &&
        !dpc_kan_synth(&te, &rng, 1, g->n_test, g->d, 0.05, NULL, &err) &&
        !dpc_kan2_new(&k, &kc, &rng, 0, &err) && !dpc_kan2_task_new(&task, k, tr, te, &err) &&
        (W0 = malloc(dpc_kan2_num_params(k) * sizeof *W0)) && !dpc_kan2_init(k, W0, &rng, 0, &err)) {
        dpc_kan_lcgd_config lc;
        dpc_kan_lcgd_config_init(&lc);
        lc.n = g->n, lc.iterates = g->T, lc.batch = g->B, lc.lambda = 0, lc.noise_std = g->kappa;
        lc.eta = g->eta, lc.clip = 1;
        if (!dpc_kan_lcgd_train(&lc, dpc_kan2_num_params(k), &rng, W0, dpc_kan_task_grad,
                                dpc_kan_task_eval, task, g->every, NULL, NULL, &res, &err))
            out = res.avg_train_loss;
    }
    CHECK(!isnan(out), "rebuilt run: %s", err.msg);
    free(W0);
    dpc_kan_task_free(task);
    dpc_kan2_free(k);
    dpc_dataset_free(tr);
    dpc_dataset_free(te);
    return out;
}

static void test_lambda(void)
{
    dpc_kan_repro_params p = smoke_params(3);
    dpc_kan_repro_grid g;
    dpc_error err = {0};
    CHECK_OK(dpc_kan_repro_grid_get(p.scale, &g, &err), &err);
    dpc_kan_repro_lambda *r = malloc(sizeof *r);
    CHECK_OK(dpc_kan_repro_lambda_trend(&p, r, &err), &err);
    CHECK(r->fixed[0][0].avg_train_loss == rebuilt_run(&g, 3), "run (lambda 0, seed 0) bit for bit");
    for (int l = 0; l < DPC_KAN_REPRO_NLAMBDA; l++) {
        double m = 0;
        for (size_t s = 0; s < r->seeds; s++) m += r->fixed[l][s].avg_train_loss;
        CHECK_NEAR_REL(r->mean[l], m / (double)r->seeds, 1e-14, "mean at lambda %g", r->lambda[l]);
        CHECK(isfinite(r->mean[l]) && r->mean[l] > 0, "loss finite");
    }
    CHECK(r->paired_diff[0] == 0 && r->paired_se[0] == 0, "lambda 0 against itself");
    const double *mf = r->mean;
    CHECK(r->improves == (mf[1] < mf[0] && mf[2] < mf[1] && mf[3] < mf[2]), "improves verdict");
    for (int l = 0; l < DPC_KAN_REPRO_NLAMBDA; l++) {
        CHECK(l == 0 || r->cal_state[2][l] == DPC_KAN_REPRO_CAL_NONE, "D.9 only at lambda 0");
        dpc_kan_calib cal;
        if (!dpc_kan_calibrate(g.n_cal, g.B_cal, g.T_cal - 1, 1, 1e-5, r->lambda[l], &cal, NULL)) {
            CHECK(r->cal_state[1][l] == DPC_KAN_REPRO_CAL_RUN && r->cal_kappa[1][l] == cal.noise_std,
                  "dpcorr kappa at lambda %g", r->lambda[l]);
            CHECK(isfinite(r->cal_mean[1][l]), "calibrated run");
        }
        for (int k = 0; k < 3; k++)
            CHECK((r->cal_state[k][l] == DPC_KAN_REPRO_CAL_RUN) == !isnan(r->cal_mean[k][l]),
                  "mean only where run (k %d, l %d)", k, l);
    }
    CHECK(r->cal_seeds == 1, "smoke: one seed");
    free(r);
}

static void test_width_and_trends(void)
{
    dpc_kan_repro_params p = smoke_params(2);
    dpc_kan_repro_grid g;
    dpc_error err = {0};
    CHECK_OK(dpc_kan_repro_grid_get(p.scale, &g, &err), &err);
    dpc_kan_repro_width w;
    CHECK_OK(dpc_kan_repro_width_window(&p, &w, &err), &err);
    CHECK(w.rows == g.nwm, "a row per width");
    /* m_edge scales as 1/kappa^2, and the sweep's kappa puts wm[0]'s edge at wtarget */
    CHECK_NEAR_REL(w.edge_ref, (double)g.wtarget, 1e-9, "reference edge at wtarget");
    int in = 0, out = 0, cons = 1;
    for (size_t i = 0; i < w.rows; i++) {
        const dpc_kan_repro_width_row *x = &w.row[i];
        CHECK(x->inside == ((double)x->m <= x->m_edge), "inside flag, m %zu", x->m);
        CHECK(x->max_dist <= x->radius * (1 + 1e-12), "projected onto R*: m %zu", x->m);
        if (x->inside) in = 1, cons &= x->projections == 0;
        else out = 1, cons &= (double)x->m < 2 * x->m_edge || x->projections > 0;
    }
    CHECK(w.inside_seen == in && w.beyond_seen == out && w.consistent == cons &&
          w.verified == (cons && in && out), "width verdicts");
    dpc_kan_repro_trends t;
    CHECK_OK(dpc_kan_repro_n_eps_trends(&p, &t, &err), &err);
    CHECK(t.nn == g.nn && t.ne == g.ne, "trend points");
    int dn = 1, de = 1;
    for (size_t i = 0; i < t.nn; i++) {
        double kap;
        CHECK_OK(dpc_account_kan_paper_indep(g.ns[i], g.tr_B, g.tr_T - 1, 2.0, 1e-5, &kap, &err), &err);
        CHECK(t.n_sweep[i].kappa == kap && t.n_sweep[i].n == g.ns[i], "n sweep kappa D.9");
        if (i && !(t.n_sweep[i].avg_test_loss < t.n_sweep[i - 1].avg_test_loss)) dn = 0;
    }
    for (size_t i = 0; i < t.ne; i++) {
        CHECK(t.eps_sweep[i].n == 1000 && t.eps_sweep[i].eps == g.eps[i], "eps sweep point");
        if (i && !(t.eps_sweep[i].avg_test_loss < t.eps_sweep[i - 1].avg_test_loss)) de = 0;
    }
    CHECK(t.decreasing_in_n == dn && t.decreasing_in_eps == de, "trend verdicts");
}

/* ---- a run's decisions (dpc_kan2_to_unit_ball, dpc_kan2_run_theory, dpc_kan2_run_bounds) ---- */

static dpc_dataset *rows(size_t n, double bound, const double *x, const double *y)
{
    dpc_dataset *ds = NULL;
    if (dpc_dataset_new(&ds, n, 2, 2, NULL)) return NULL;
    memcpy(ds->x, x, 2 * n * sizeof *x);
    memcpy(ds->y, y, n * sizeof *y);
    ds->x_norm_bound = bound;
    return ds;
}

static void test_unit_ball(void)
{
    const double x[6] = {3, 4, 0.3, 0.4, 0, 0.5}, y[3] = {0, 1, 1};
    dpc_error err = {0};
    dpc_kan_ball_action a;
    double b = -1;
    dpc_dataset *ds = rows(3, 10, x, y);
    CHECK_OK(dpc_kan2_to_unit_ball(ds, &a, &b, &err), &err);
    CHECK(a == DPC_KAN_BALL_SCALED && b == 10, "bound 10: scaled");
    CHECK_NEAR_REL(ds->x[0], 0.3, 1e-15, "rows scaled by 1/10");
    CHECK_NEAR_REL(ds->x[3], 0.04, 1e-15, "rows scaled by 1/10");
    dpc_dataset_free(ds);
    ds = rows(3, 0, x, y);
    CHECK_OK(dpc_kan2_to_unit_ball(ds, &a, &b, &err), &err);
    CHECK(a == DPC_KAN_BALL_CLIPPED && b == 0, "no bound: clipped");
    CHECK_NEAR_REL(ds->x[0], 0.6, 1e-15, "row (3, 4) clipped to norm 1");
    CHECK(ds->x[2] == 0.3 && ds->x[5] == 0.5, "rows inside the ball unchanged");
    dpc_dataset_free(ds);
    const double inside[6] = {0.3, 0.4, 0, 0.5, 0.6, 0};
    ds = rows(3, 1, inside, y);
    CHECK_OK(dpc_kan2_to_unit_ball(ds, &a, NULL, &err), &err);
    CHECK(a == DPC_KAN_BALL_KEPT && ds->x[0] == 0.3, "bound 1: kept");
    dpc_dataset_free(ds);
    CHECK_OK(dpc_kan2_to_unit_ball(NULL, &a, NULL, &err), &err);
}

static void test_run_theory(void)
{
    dpc_error err = {0};
    dpc_rng rng;
    dpc_rng_seed(&rng, 9);
    dpc_dataset *tr = NULL;
    dpc_kan2 *k = NULL;
    dpc_kan2_config kc = {.d = 3, .m = 8, .grid = 5, .act = DPC_KAN_SIGMOID};
    CHECK_OK(dpc_kan_synth(&tr, &rng, 0, 300, 3, 0.05, NULL, &err), &err);
    CHECK_OK(dpc_kan2_new(&k, &kc, &rng, 0, &err), &err);
    size_t P = dpc_kan2_num_params(k), T = 50;
    double *W0 = malloc(P * sizeof *W0), *ypm = malloc(tr->n * sizeof *ypm);
    CHECK_OK(dpc_kan2_init(k, W0, &rng, 0, &err), &err);
    dpc_kan_run_config rc;
    dpc_kan_run_config_init(&rc);
    rc.margin_iters = 2000;
    dpc_kan_consts cs, ref;
    dpc_kan_margin mg = {.gamma_lo = NAN, .gamma_hi = NAN}, m2;
    dpc_kan2_theory_want w = {.lr = 1, .clip = 1, .radius = 1, .margin = 0};
    CHECK_OK(dpc_kan2_run_theory(k, W0, tr, T, &w, &rc, &cs, &mg, &err), &err);
    CHECK_OK(dpc_kan2_consts(k, rc.conf_delta, &ref, &err), &err);
    CHECK(rc.lr == ref.eta_max && rc.clip == ref.G_c, "theory eta and clip: eta_max, G_c");
    for (size_t i = 0; i < tr->n; i++) ypm[i] = tr->y[i] == 1.0 ? 1.0 : -1.0;
    CHECK_OK(dpc_kan2_margin(k, W0, tr->x, ypm, tr->n, 2000, 1e-3, &m2, &err), &err);
    double R;
    CHECK_OK(dpc_kan_radius(rc.C_R, T, tr->n, rc.conf_delta, m2.gamma_lo, &R, &err), &err);
    CHECK(mg.gamma_lo == m2.gamma_lo && m2.gamma_lo > 0 && rc.radius == R, "R* from the certified margin");
    dpc_kan2_bounds b;
    dpc_kan2_run_bounds(k, &rc, tr->n, 3, T, 2.0, &mg, &b);
    dpc_kan_rate_in ri = {.n = tr->n, .m = 8, .d = 3, .T = T, .B = rc.batch, .eta = rc.lr,
                          .lambda = rc.privacy.lambda, .noise_std = 2.0, .gamma = mg.gamma_lo,
                          .delta = rc.conf_delta};
    double Ac;
    CHECK_OK(dpc_kan_bound_corr(&ri, &Ac, &err), &err);
    CHECK(b.A_corr == Ac && isfinite(b.m_edge), "bounds at the run's inputs");
    rc.radius = INFINITY;
    dpc_kan2_run_bounds(k, &rc, tr->n, 3, T, 2.0, &mg, &b);
    CHECK(isnan(b.m_edge) && b.A_corr == Ac, "no radius: no edge");
    mg.gamma_lo = -1;
    dpc_kan2_run_bounds(k, &rc, tr->n, 3, T, 2.0, &mg, &b);
    CHECK(isnan(b.A_corr) && isnan(b.m_lo), "no positive margin: no bounds");
    /* contradictory labels (each point twice, labels 0 and 1): no positive margin exists */
    for (size_t i = 0; i < tr->n / 2; i++) {
        memcpy(tr->x + (tr->n / 2 + i) * 3, tr->x + i * 3, 3 * sizeof *tr->x);
        tr->y[tr->n / 2 + i] = 1 - tr->y[i];
    }
    dpc_error e2 = {0};
    CHECK(dpc_kan2_run_theory(k, W0, tr, T, &w, &rc, &cs, &mg, &e2) == DPC_E_INVALID &&
          !strcmp(e2.field, "radius"), "radius theory without a margin refused: %s", e2.msg);
    /* no margin beyond n = 2048 unless R* needs it */
    dpc_kan2_theory_want w2 = {.margin = 1};
    mg.gamma_lo = NAN;
    dpc_dataset *big = NULL;
    CHECK_OK(dpc_kan_synth(&big, &rng, 1, 2049, 3, 0.05, NULL, &err), &err);
    CHECK_OK(dpc_kan2_run_theory(k, W0, big, T, &w2, &rc, &cs, &mg, &err), &err);
    CHECK(isnan(mg.gamma_lo), "n > 2048: margin not computed");
    dpc_dataset_free(big);
    free(W0), free(ypm);
    dpc_kan2_free(k);
    dpc_dataset_free(tr);
}

static void test_run_resolve(void)
{
    dpc_error err = {0};
    dpc_kan_run_config rc;
    dpc_kan_run_config_init(&rc);
    rc.privacy.epsilon = 2, rc.batch = 50, rc.lr = 0.25, rc.clip = 3, rc.radius = 7;
    double ns, ref;
    dpc_ledger L, L2;
    dpc_kan_lcgd_config lc;
    CHECK_OK(dpc_kan_run_resolve(&rc, 500, 101, DPC_NOISE_BUFFER, &ns, &L, &lc, &err), &err);
    CHECK(rc.privacy.n == 500 && rc.privacy.batch == 50 && rc.privacy.steps == 100, "derived privacy");
    CHECK_OK(dpc_kan_lcgd_privacy(&rc.privacy, &ref, &L2, &err), &err);
    CHECK(ns == ref && L.epsilon == L2.epsilon && ns > 0, "the library's privacy decision");
    CHECK(lc.n == 500 && lc.iterates == 101 && lc.batch == 50 && lc.eta == 0.25 && lc.clip == 3 &&
          lc.radius == 7 && lc.noise_std == ns && lc.lambda == rc.privacy.lambda &&
          lc.noise_form == DPC_NOISE_BUFFER, "lambda-CGD configuration from the run");
    rc.batch = 600;
    dpc_error e2 = {0};
    CHECK(dpc_kan_run_resolve(&rc, 500, 101, DPC_NOISE_REPLAY, &ns, &L, &lc, &e2) != DPC_OK,
          "batch > n refused");
}

int main(void)
{
    test_grids_and_refusals();
    test_noise();
    test_exact_parts();
    test_lambda();
    test_width_and_trends();
    test_unit_ball();
    test_run_theory();
    test_run_resolve();
    return TEST_SUMMARY();
}
