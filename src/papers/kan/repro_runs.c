/* repro_runs.c — the training parts of the reproduction of [KAN] (dpcorr/papers/kan.h section
 * 9): 4-5 the lambda trends at fixed and at calibrated kappa, 6 the width window, 7 the n and
 * epsilon trends. Each point is one run of the paper's KAN on kan-synth data (kan_run). */
#include "kan/repro_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One run of the paper's KAN on kan-synth data (train stream 0, test stream 1 of the generator
 * seeded with the root seed + salt). */
typedef struct kexp {
    size_t n, n_test, d, m, G, T, B, every;
    double eta, clip, lambda, kappa, radius; /* clip/eta < 0: theory values (G_c, eta_max) */
    double C_R;                              /* > 0: radius from theory with the estimated gamma */
    uint64_t salt;
} kexp;

typedef struct kout {
    dpc_kan_lcgd_result r;
    double gamma_lo, eta, clip, radius, G_c, p;
    size_t P;
} kout;

/* The theory radius R* (C_R, the margin estimated at W0 on the training set) into lc. */
static dpc_status theory_radius(const kexp *e, const dpc_kan2 *k, const dpc_dataset *tr,
                                const double *W0, dpc_kan_lcgd_config *lc, kout *out,
                                dpc_error *err)
{
    double *y = malloc(e->n * sizeof *y);
    if (!y) return dpc_error_param(err, DPC_E_NOMEM, "n", "out of memory (%zu labels)", e->n);
    for (size_t i = 0; i < e->n; i++) y[i] = tr->y[i] == 1.0 ? 1.0 : -1.0;
    dpc_kan_margin mg;
    dpc_status st = dpc_kan2_margin(k, W0, tr->x, y, e->n, 20000, 1e-3, &mg, err);
    free(y);
    if (st) return st;
    out->gamma_lo = mg.gamma_lo;
    return dpc_kan_radius(e->C_R, e->T, e->n, 0.01, mg.gamma_lo, &lc->radius, err);
}

static dpc_status kan_run(const dpc_kan_repro_params *p, const kexp *e, kout *out, dpc_error *err)
{
    dpc_rng rng;
    dpc_rng_seed(&rng, p->seed + e->salt);
    dpc_dataset *tr = NULL, *te = NULL;
    dpc_kan2 *k = NULL;
    dpc_kan_task *task = NULL;
    double *W0 = NULL;
    dpc_status st;
    dpc_kan2_config kc = {.d = e->d, .m = e->m, .grid = e->G, .act = DPC_KAN_SIGMOID};
    if ((st = dpc_kan_synth(&tr, &rng, 0, e->n, e->d, 0.05, NULL, err)) ||
        (e->n_test && (st = dpc_kan_synth(&te, &rng, 1, e->n_test, e->d, 0.05, NULL, err))) ||
        (st = dpc_kan2_new(&k, &kc, &rng, 0, err)) ||
        (st = dpc_kan2_task_new(&task, k, tr, te, err)))
        goto done;
    size_t P = dpc_kan2_num_params(k);
    W0 = malloc(P * sizeof *W0);
    dpc_kan_consts cs;
    if (!W0) {
        st = dpc_error_param(err, DPC_E_NOMEM, "m", "out of memory (%zu parameters)", P);
        goto done;
    }
    if ((st = dpc_kan2_init(k, W0, &rng, 0, err)) || (st = dpc_kan2_consts(k, 0.01, &cs, err)))
        goto done;
    out->gamma_lo = NAN;
    out->G_c = cs.G_c;
    out->P = P;
    out->p = (double)dpc_kan2_basis(k)->p;
    dpc_kan_lcgd_config lc;
    dpc_kan_lcgd_config_init(&lc);
    lc.n = e->n, lc.iterates = e->T, lc.batch = e->B, lc.lambda = e->lambda, lc.noise_std = e->kappa;
    lc.eta = e->eta > 0 ? e->eta : cs.eta_max;
    lc.clip = e->clip > 0 ? e->clip : cs.G_c;
    lc.radius = e->radius > 0 ? e->radius : INFINITY;
    if (e->C_R > 0 && (st = theory_radius(e, k, tr, W0, &lc, out, err))) goto done;
    out->eta = lc.eta, out->clip = lc.clip, out->radius = lc.radius;
    st = dpc_kan_lcgd_train(&lc, P, &rng, W0, dpc_kan_task_grad, e->every ? dpc_kan_task_eval : NULL,
                            task, e->every ? e->every : 1, NULL, NULL, &out->r, err);
done:
    if (st && err) dpc_error_prefix(err, "kan run");
    free(W0);
    dpc_kan_task_free(task);
    dpc_kan2_free(k);
    dpc_dataset_free(tr);
    dpc_dataset_free(te);
    return st;
}

/* ==== 4, 5. lambda trends ======================================================================= */

static dpc_status lambda_fixed(const dpc_kan_repro_params *p, const dpc_kan_repro_grid *g,
                               const double *lams, dpc_kan_repro_lambda *out, dpc_error *err)
{
    size_t S = g->seeds;
    double v[DPC_KAN_REPRO_MAX_SEEDS], per[DPC_KAN_REPRO_NLAMBDA][DPC_KAN_REPRO_MAX_SEEDS];
    for (int l = 0; l < DPC_KAN_REPRO_NLAMBDA; l++) {
        dpc_kan_rate_in ri = {.n = g->n, .m = g->m, .d = g->d, .T = g->T, .B = g->B, .eta = g->eta,
                              .lambda = lams[l], .noise_std = g->kappa, .gamma = 0.03, .delta = 0.01};
        if (dpc_kan_bound_corr(&ri, &out->A_corr[l], NULL)) out->A_corr[l] = NAN;
        double dist = 0;
        for (size_t s = 0; s < S; s++) {
            kexp e = {.n = g->n, .n_test = g->n_test, .d = g->d, .m = g->m, .G = 5, .T = g->T,
                      .B = g->B, .every = g->every, .eta = g->eta, .clip = 1.0, .lambda = lams[l],
                      .kappa = g->kappa, .salt = 100 + s};
            kout o;
            dpc_status st = kan_run(p, &e, &o, err);
            if (st) return st;
            out->fixed[l][s] = o.r;
            v[s] = per[l][s] = o.r.avg_train_loss;
            dist += o.r.max_dist / (double)S;
        }
        out->max_dist[l] = dist;
        out->mean[l] = dpc__kan_repro_mean(v, S, &out->se[l]);
        for (size_t s = 0; s < S; s++) v[s] = per[l][s] - per[0][s]; /* paired: same data, init, Z */
        out->paired_diff[l] = dpc__kan_repro_mean(v, S, &out->paired_se[l]);
    }
    const double *mf = out->mean;
    out->improves = mf[1] < mf[0] && mf[2] < mf[1] && mf[3] < mf[2];
    return DPC_OK;
}

/* kappa for (1, 1e-5) by calibration k (0 F.12, 1 dpcorr, 2 D.9) at lambda; a refusal's reason
 * into e. */
static dpc_status calibrated_kappa(const dpc_kan_repro_grid *g, int k, double lam, double *kap,
                                   dpc_error *e)
{
    size_t steps = g->T_cal - 1;
    if (k == 0) return dpc_account_kan_paper_lcgd(g->n_cal, g->B_cal, steps, 1, 1e-5, lam, kap, e);
    if (k == 2) return dpc_account_kan_paper_indep(g->n_cal, g->B_cal, steps, 1, 1e-5, kap, e);
    dpc_kan_calib cal;
    dpc_status st = dpc_kan_calibrate(g->n_cal, g->B_cal, steps, 1, 1e-5, lam, &cal, e);
    if (!st) *kap = cal.noise_std;
    return st;
}

static dpc_status lambda_calibrated(const dpc_kan_repro_params *p, const dpc_kan_repro_grid *g,
                                    const double *lams, dpc_kan_repro_lambda *out, dpc_error *err)
{
    size_t S2 = g->seeds > 2 ? 2 : g->seeds;
    out->cal_seeds = S2;
    for (int k = 0; k < 3; k++) {
        for (int l = 0; l < DPC_KAN_REPRO_NLAMBDA; l++) {
            out->cal_mean[k][l] = NAN;
            out->cal_kappa[k][l] = NAN;
            if (k == 2 && l > 0) continue; /* D.9 is for lambda 0 */
            double kap, v[2];
            dpc_error e = {0};
            if (calibrated_kappa(g, k, lams[l], &kap, &e)) { /* e.g. F.12's r T >= 3 log(2/delta) */
                out->cal_state[k][l] = DPC_KAN_REPRO_CAL_FAILED;
                if (!*out->why) memcpy(out->why, e.msg, sizeof out->why);
                continue;
            }
            out->cal_state[k][l] = DPC_KAN_REPRO_CAL_RUN;
            out->cal_kappa[k][l] = kap;
            for (size_t s = 0; s < S2; s++) {
                kexp ex = {.n = g->n_cal, .n_test = g->n_test, .d = g->d, .m = g->m, .G = 5,
                           .T = g->T_cal, .B = g->B_cal, .every = g->every * 2, .eta = g->eta,
                           .clip = 1.0, .lambda = lams[l], .kappa = kap, .salt = 200 + s};
                kout o;
                dpc_status st = kan_run(p, &ex, &o, err);
                if (st) return st;
                out->cal[k][l][s] = o.r;
                v[s] = o.r.avg_train_loss;
            }
            out->cal_mean[k][l] = dpc__kan_repro_mean(v, S2, NULL);
        }
    }
    double(*mc)[DPC_KAN_REPRO_NLAMBDA] = out->cal_mean;
    out->no_gain = !(mc[0][3] < mc[0][0]) && !(mc[1][3] < mc[1][0] - 0.002);
    return DPC_OK;
}

dpc_status dpc_kan_repro_lambda_trend(const dpc_kan_repro_params *p, dpc_kan_repro_lambda *out,
                                      dpc_error *err)
{
    dpc_kan_repro_grid g;
    dpc_status st = dpc__kan_repro_begin(p, out, &g, err);
    if (st) return st;
    memset(out, 0, sizeof *out);
    const double *lams = dpc_kan_repro_lambdas();
    memcpy(out->lambda, lams, sizeof out->lambda);
    out->seeds = g.seeds;
    if ((st = lambda_fixed(p, &g, lams, out, err))) return st;
    return lambda_calibrated(p, &g, lams, out, err);
}

/* ==== 6. Width window ============================================================================ */

dpc_status dpc_kan_repro_width_window(const dpc_kan_repro_params *p, dpc_kan_repro_width *out,
                                      dpc_error *err)
{
    dpc_kan_repro_grid g;
    dpc_status st = dpc__kan_repro_begin(p, out, &g, err);
    if (st) return st;
    memset(out, 0, sizeof *out);
    /* theory settings: eta = eta_max, C = G_c (no clipping), R* with C_R = 2 and the estimated
     * gamma; kappa fixed for the sweep so that the calibrated edge of the reference width
     * m = wm[0] sits at m = wtarget */
    kexp e = {.n = g.n, .n_test = 0, .d = g.d, .m = g.wm[0], .G = 5, .T = g.wT, .B = g.B,
              .every = 0, .eta = -1, .clip = -1, .lambda = 0.5, .kappa = 1.0, .radius = 0,
              .C_R = 2.0, .salt = 300};
    kout o;
    if ((st = kan_run(p, &e, &o, err))) return st;
    dpc_kan_rate_in ri = {.n = g.n, .m = g.wm[0], .d = g.d, .T = g.wT, .B = g.B, .eta = o.eta,
                          .lambda = 0.5, .noise_std = 1.0, .gamma = o.gamma_lo, .delta = 0.01};
    dpc_kan_window w;
    if ((st = dpc_kan_width_window(&ri, (size_t)o.p, o.clip, o.radius, &w, err))) return st;
    double kappa = sqrt(w.m_edge / (double)g.wtarget); /* m_edge scales as 1/kappa^2 */
    out->kappa = kappa, out->ref_eta = o.eta, out->edge_ref = NAN;
    int consistent = 1;
    for (size_t i = 0; i < g.nwm; i++) {
        kexp e2 = e;
        e2.m = g.wm[i];
        e2.kappa = kappa;
        if ((st = kan_run(p, &e2, &o, err))) return st;
        dpc_kan_rate_in r2 = {.n = g.n, .m = g.wm[i], .d = g.d, .T = g.wT, .B = g.B, .eta = o.eta,
                              .lambda = 0.5, .noise_std = kappa, .gamma = o.gamma_lo, .delta = 0.01};
        if ((st = dpc_kan_width_window(&r2, (size_t)o.p, o.clip, o.radius, &w, err))) return st;
        if (i == 0) out->edge_ref = w.m_edge;
        int inside = (double)g.wm[i] <= w.m_edge;
        if (inside) out->inside_seen = 1, consistent &= o.r.projections == 0;
        else out->beyond_seen = 1, consistent &= (double)g.wm[i] < 2 * w.m_edge || o.r.projections > 0;
        out->row[i] = (dpc_kan_repro_width_row){
            .m = g.wm[i], .P = o.P, .projections = o.r.projections, .kappa = kappa, .eta = o.eta,
            .clip = o.clip, .gamma_lo = o.gamma_lo, .radius = o.radius, .max_dist = o.r.max_dist,
            .m_edge = w.m_edge, .m_hi = w.m_hi, .m_lo = w.m_lo, .inside = inside};
        out->rows = i + 1;
    }
    out->consistent = consistent;
    out->verified = consistent && out->inside_seen && out->beyond_seen;
    return DPC_OK;
}

/* ==== 7. n and epsilon trends ===================================================================== */

static dpc_status trend_point(const dpc_kan_repro_params *p, const dpc_kan_repro_grid *g, size_t n,
                              double eps, dpc_kan_repro_trend_row *row, dpc_error *err)
{
    double kap;
    dpc_status st = dpc_account_kan_paper_indep(n, g->tr_B, g->tr_T - 1, eps, 1e-5, &kap, err);
    if (st) return st;
    kexp e = {.n = n, .n_test = g->n_test, .d = g->d, .m = g->tr_m, .G = 5, .T = g->tr_T,
              .B = g->tr_B, .every = g->every * 2, .eta = g->eta, .clip = 1.0, .lambda = 0.0,
              .kappa = kap, .salt = 400};
    kout o;
    if ((st = kan_run(p, &e, &o, err))) return st;
    dpc_kan_rate_in ri = {.n = n, .m = g->tr_m, .d = g->d, .T = g->tr_T, .B = g->tr_B,
                          .eta = g->eta, .lambda = 0, .noise_std = kap, .gamma = 0.03,
                          .delta = 1e-5};
    double Av = NAN;
    if (dpc_kan_bound_indep(&ri, &Av, NULL)) Av = NAN;
    *row = (dpc_kan_repro_trend_row){.n = n, .eps = eps, .kappa = kap,
                                     .avg_test_loss = o.r.avg_test_loss,
                                     .avg_test_err = o.r.avg_test_err,
                                     .avg_train_loss = o.r.avg_train_loss, .A_van = Av};
    return DPC_OK;
}

dpc_status dpc_kan_repro_n_eps_trends(const dpc_kan_repro_params *p, dpc_kan_repro_trends *out,
                                      dpc_error *err)
{
    dpc_kan_repro_grid g;
    dpc_status st = dpc__kan_repro_begin(p, out, &g, err);
    if (st) return st;
    memset(out, 0, sizeof *out);
    out->decreasing_in_n = out->decreasing_in_eps = 1;
    for (size_t i = 0; i < g.nn; i++) { /* n sweep at eps = 2 */
        if ((st = trend_point(p, &g, g.ns[i], 2.0, &out->n_sweep[i], err))) return st;
        out->nn = i + 1;
        if (i && !(out->n_sweep[i].avg_test_loss < out->n_sweep[i - 1].avg_test_loss))
            out->decreasing_in_n = 0;
    }
    for (size_t i = 0; i < g.ne; i++) { /* eps sweep at n = 1000 */
        if ((st = trend_point(p, &g, 1000, g.eps[i], &out->eps_sweep[i], err))) return st;
        out->ne = i + 1;
        if (i && !(out->eps_sweep[i].avg_test_loss < out->eps_sweep[i - 1].avg_test_loss))
            out->decreasing_in_eps = 0;
    }
    return DPC_OK;
}
