/* repro_kan.c — `dpcorr repro kan`: the KAN / DP-lambda-CGD paper (Wang et al. 2026; note 004).
 * The reproduction is the paper module's (dpcorr/papers/kan.h section 9: grids, seeds, runs,
 * statistics and verdicts); this front end calls its parts in order and writes each one's CSV
 * files, plot, JSON members and text: 1. noise statistics, 2. sensitivities, 3. kappa tables,
 * 4-5. lambda trends, 6. the width window, 7. n and epsilon trends, 8. the practical KAN against
 * the MLP on Fashion-MNIST (the library's setup, trained by the CLI's train_run). */
#include "repro.h"
#include "plot.h"
#include "train_run.h"
#include "dpcorr/papers/kan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int lib_fail(const dpc_error *err)
{
    fprintf(stderr, "dpcorr repro: %s\n", err->msg);
    return 1;
}

static plot_series ser(const char *title, const double *x, const double *y, const double *yerr,
                       size_t n, plot_style style)
{
    return (plot_series){.title = title, .x = x, .y = y, .yerr = yerr, .n = n, .style = style};
}

static plot_panel pan(const char *title, const char *xlabel, const char *ylabel, int logx, int logy,
                      const plot_series *s, size_t ns)
{
    return (plot_panel){.title = title, .xlabel = xlabel, .ylabel = ylabel, .logx = logx,
                        .logy = logy, .series = s, .nseries = ns};
}

/* ==== 1. Noise statistics ===================================================================== */

static void noise_plot(repro_ctx *c, const dpc_kan_repro_noise *r)
{
    size_t T = r->T;
    double t_ax[DPC_KAN_REPRO_NOISE_T + 1];
    for (size_t t = 0; t <= T; t++) t_ax[t] = (double)t;
    plot_series s[7] = {ser("independent (kappa^2 t)", t_ax + 1, t_ax + 1, NULL, T, PLOT_LINES),
                        ser("lambda 0: MC", t_ax + 1, r->var_sum[0] + 1, NULL, T, PLOT_POINTS),
                        ser("lambda 0.5: MC", t_ax + 1, r->var_sum[1] + 1, NULL, T, PLOT_POINTS),
                        ser("lambda 0.9: MC", t_ax + 1, r->var_sum[2] + 1, NULL, T, PLOT_POINTS),
                        ser("lambda 0: 1 + (1-l)^2 (t-1)", t_ax + 1, r->theory_var_sum[0] + 1, NULL,
                            T, PLOT_LINES),
                        ser("lambda 0.5: theory", t_ax + 1, r->theory_var_sum[1] + 1, NULL, T,
                            PLOT_LINES),
                        ser("lambda 0.9: theory", t_ax + 1, r->theory_var_sum[2] + 1, NULL, T,
                            PLOT_LINES)};
    plot_panel p = pan("variance of the cumulative noise sum_{s<=t} xi_s (Figure 1 right)", "t",
                       "Var / kappa^2 per coordinate", 0, 1, s, 7);
    repro_plot(c, "kan-noise", &p, 1);
}

static int sec_noise(repro_ctx *c, const dpc_kan_repro_params *kp)
{
    FILE *f = repro_open(c, "noise_stats.csv"), *fc = repro_open(c, "noise_cumvar.csv");
    if (!f || !fc) return 1; /* repro_open said which file; the run's end removes the other */
    dpc_kan_repro_noise *r = malloc(sizeof *r); /* 5 KB of series: off the stack */
    dpc_error err = {0};
    if (!r || dpc_kan_repro_noise_stats(kp, r, &err)) {
        if (!r) snprintf(err.msg, sizeof err.msg, "noise statistics: out of memory");
        free(r);
        return lib_fail(&err);
    }
    size_t T = r->T, N = r->coordinates;
    fprintf(f, "lambda,T,var_xi1,var_xi_t,theory_var_xi_t,cov_lag1,theory_cov_lag1,cov_lag2,var_sum,"
               "theory_var_sum,independent_T,coordinates\n");
    fprintf(fc, "lambda,t,var_sum_mc,var_sum_theory\n");
    repro_say(c, "\n1. Noise statistics (kappa = 1, %zu coordinates, T = %zu updates; per coordinate):\n"
                 "   lambda  Var(xi_1)  Var(xi_t)  (theory)  Cov lag 1 (theory)  lag 2   Var(sum xi) (theory)\n",
              N, T);
    char jb[1024];
    int jn = 0;
    for (int l = 0; l < 3; l++) {
        double lam = r->lambda[l];
        for (size_t t = 1; t <= T; t++)
            fprintf(fc, "%g,%zu,%.6g,%.6g\n", lam, t, r->var_sum[l][t], r->theory_var_sum[l][t]);
        fprintf(f, "%g,%zu,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%zu,%zu\n", lam, T, r->var_xi1[l],
                r->var_xi_t[l], r->theory_var_xi_t[l], r->cov_lag1[l], r->theory_cov_lag1[l],
                r->cov_lag2[l], r->var_sum[l][T], r->theory_var_sum[l][T], T, N);
        repro_say(c, "   %-6g  %-9.4f  %-9.4f  %-8.4f  %-8.4f (%-6.3f)  %-6.3f  %-8.4f (%g)\n", lam,
                  r->var_xi1[l], r->var_xi_t[l], r->theory_var_xi_t[l], r->cov_lag1[l],
                  r->theory_cov_lag1[l], r->cov_lag2[l], r->var_sum[l][T], r->theory_var_sum[l][T]);
        jn += snprintf(jb + jn, sizeof jb - (size_t)jn, "%s\"%g\": {\"var_sum\": %.6g, \"theory\": %.6g}",
                       l ? ", " : "", lam, r->var_sum[l][T], r->theory_var_sum[l][T]);
    }
    repro_close(c, f);
    repro_close(c, fc);
    repro_json_raw(c, "noise_var_sum_T100", "{%s}", jb);
    repro_say(c, "   theory at T = 100: 100, 25.75, 1.99 (kappa^2); independent noise: T = 100\n");
    noise_plot(c, r);
    free(r);
    return 0;
}

/* ==== 2. Sensitivity and 3. kappa tables ======================================================= */

static int sec_sensitivity(repro_ctx *c)
{
    dpc_kan_repro_sens r;
    dpc_error err = {0};
    FILE *f = repro_open(c, "sensitivity.csv");
    if (!f) return 1;
    if (dpc_kan_repro_sensitivity(&r, &err)) return lib_fail(&err);
    fprintf(f, "T,lambda,tau,brute_force,exact_core,bound_F11,bound_over_exact\n");
    repro_say(c, "\n2. lambda-CGD sensitivity max_{|y|<=tau} ||C y|| (brute force over y in {0,1}^T for T <= 12):\n"
                 "   T     lambda  tau    brute      exact (core)  F.11 bound  bound/exact\n");
    for (size_t i = 0; i < r.rows; i++) {
        const dpc_kan_repro_sens_row *w = &r.row[i];
        fprintf(f, "%zu,%g,%zu,%.8g,%.8g,%.8g,%.6g\n", w->T, w->lambda, w->tau, w->brute, w->exact,
                w->bound, w->bound_over_exact);
        repro_say(c, "   %-5zu %-7g %-6zu %-10.5f %-13.5f %-11.5f %.4f\n", w->T, w->lambda, w->tau,
                  w->brute, w->exact, w->bound, w->bound_over_exact);
    }
    repro_say(c, "   note 004: 2.70800 vs 3.46072; 6.00838 vs 11.28122; 6.42925 vs 6.92651; 1.73205; 1.15470\n");
    repro_close(c, f);
    return 0;
}

static void kappa_row_out(repro_ctx *c, FILE *f, const dpc_kan_repro_kappa_row *w, const double *lams)
{
    repro_say(c, "   %-5zu %-4zu %-5zu %-4g %-8.3f |", w->n, w->B, w->T, w->eps, w->kappa_D9);
    for (int l = 0; l < DPC_KAN_REPRO_NLAMBDA; l++) {
        fprintf(f, "%zu,%zu,%zu,%g,1e-5,%g,%.8g,%.8g,%d,%.8g,%zu,%.8g\n", w->n, w->B, w->T, w->eps,
                lams[l], w->kappa_D9, w->kappa_F12[l], w->F12_valid, w->kappa_dpcorr[l],
                w->participations[l], w->sensitivity[l]);
        repro_say(c, " %8.3f%s", w->kappa_F12[l], w->F12_valid ? "" : "*");
    }
    repro_say(c, " |");
    for (int l = 0; l < DPC_KAN_REPRO_NLAMBDA; l++) repro_say(c, " %7.2f", w->kappa_dpcorr[l]);
    repro_say(c, "\n");
}

static int sec_kappa(repro_ctx *c)
{
    dpc_kan_repro_kappa r;
    dpc_error err = {0};
    FILE *f = repro_open(c, "kappa_table.csv");
    if (!f) return 1;
    if (dpc_kan_repro_kappa_table(&r, &err)) return lib_fail(&err);
    const double *lams = dpc_kan_repro_lambdas();
    fprintf(f, "n,B,T,eps,delta,lambda,kappa_D9,kappa_F12,F12_valid,kappa_dpcorr,dpcorr_participations,"
               "dpcorr_sensitivity\n");
    repro_say(c, "\n3. kappa (noise multiplier) for (eps, delta): Thm. D.9 (lambda = 0, replace-one), Thm. F.12\n"
                 "   (zero-out; '*' = formula outside its eps <= 1 condition), dpcorr (zero-out: exact binomial\n"
                 "   tail, exact sensitivity, analytic Gaussian):\n"
                 "   n     B    T     eps  D.9      | F.12 at lambda 0, .3, .5, .7, .9            | dpcorr at the same lambdas\n");
    char jb[2048];
    int jn = 0;
    for (size_t i = 0; i < r.rows; i++) {
        const dpc_kan_repro_kappa_row *w = &r.row[i];
        kappa_row_out(c, f, w, lams);
        const double *kf = w->kappa_F12, *kp = w->kappa_dpcorr;
        jn += snprintf(jb + jn, sizeof jb - (size_t)jn,
                       "%s{\"n\": %zu, \"B\": %zu, \"T\": %zu, \"eps\": %g, \"kappa_D9\": %.6g, \"kappa_F12\": [%.6g, %.6g, "
                       "%.6g, %.6g, %.6g], \"kappa_dpcorr\": [%.6g, %.6g, %.6g, %.6g, %.6g]}",
                       i ? ", " : "", w->n, w->B, w->T, w->eps, w->kappa_D9, kf[0], kf[1], kf[2], kf[3],
                       kf[4], kp[0], kp[1], kp[2], kp[3], kp[4]);
    }
    repro_close(c, f);
    repro_json_raw(c, "kappa_table", "[%s]", jb);
    repro_say(c, "   eq. 19 (WBK Thm. 9, all terms) at kappa_D.9 = %.3f: eps = %.4f at order %g (note: 6.65, not 1);\n"
                 "   a valid eq.-19 kappa for eps = 1: %s\n",
              r.eq19_kappa, r.eq19_eps, r.eq19_order,
              r.eq19_kappa_exists ? "found" : "none exists (the j >= 3 terms do not shrink with kappa)");
    repro_json_num(c, "eq19_eps_at_kappa_D9", r.eq19_eps);
    repro_say(c, "   full batch, T = 100, eps = 1: lambda 0.5: F.12 kappa %.2f gives delta %.3g; the exact smallest\n"
                 "   kappa for delta = 1e-5 is %.2f (||C 1|| = %.3f); lambda 0: %.2f (delta %.3g) vs %.2f (note: 252.67,\n"
                 "   1.8e-39, 73.99, 19.833; 126.33, 37.31)\n",
              r.fb_kappa_F12, r.fb_delta_F12, r.fb_kappa_exact, r.fb_sensitivity, r.fb_kappa_F12_l0,
              r.fb_delta_F12_l0, r.fb_kappa_exact_l0);
    repro_json_raw(c, "full_batch", "{\"kappa_F12\": %.6g, \"delta_at_F12\": %.4g, \"kappa_exact\": %.6g, "
                                    "\"kappa_F12_l0\": %.6g, \"kappa_exact_l0\": %.6g}", r.fb_kappa_F12,
                   r.fb_delta_F12, r.fb_kappa_exact, r.fb_kappa_F12_l0, r.fb_kappa_exact_l0);
    return 0;
}

/* ==== 4, 5. lambda trends ======================================================================= */

static void lambda_fixed_out(repro_ctx *c, FILE *f, const dpc_kan_repro_grid *g,
                             const dpc_kan_repro_lambda *r)
{
    repro_say(c, "\n4. lambda at fixed kappa = %g (paper's KAN m = %zu, d = %zu, G = 5, n = %zu, B = %zu, T = %zu,\n"
                 "   eta = %g, C = 1, no projection; %zu seeds, paired): average training loss over iterates\n",
              g->kappa, g->m, g->d, g->n, g->B, g->T, g->eta, r->seeds);
    for (int l = 0; l < DPC_KAN_REPRO_NLAMBDA; l++) {
        for (size_t s = 0; s < r->seeds; s++) {
            const dpc_kan_lcgd_result *o = &r->fixed[l][s];
            fprintf(f, "%g,%zu,%g,%.8g,%.8g,%.6g,%.8g,%.6g,%.6g\n", r->lambda[l], s, g->kappa,
                    o->avg_train_loss, o->avg_test_loss, o->avg_train_err, o->last_train_loss,
                    o->max_dist, r->A_corr[l]);
        }
        repro_say(c, "   lambda %-4g  avg train loss %.5f +- %.5f  (vs lambda 0: %+.5f +- %.5f)  max ||W - W0|| %-8.3g  "
                     "A_corr (unit, gamma 0.03) %.4g\n",
                  r->lambda[l], r->mean[l], r->se[l], r->paired_diff[l], r->paired_se[l], r->max_dist[l],
                  r->A_corr[l]);
    }
    const double *mf = r->mean, *dm = r->paired_diff, *ds = r->paired_se;
    repro_say(c, "   -> average training loss %s from lambda 0 to 0.7 (Remark 4.2 / oracle 18d)\n",
              r->improves ? "improves monotonically" : "does NOT improve monotonically");
    repro_json_raw(c, "lambda_fixed_kappa", "{\"kappa\": %g, \"lambda\": [0, 0.3, 0.5, 0.7, 0.9], \"avg_train_loss\": "
                                            "[%.6g, %.6g, %.6g, %.6g, %.6g], \"paired_diff\": [0, %.6g, %.6g, %.6g, %.6g], "
                                            "\"paired_se\": [0, %.3g, %.3g, %.3g, %.3g], \"improves_0_to_0.7\": %s}",
                   g->kappa, mf[0], mf[1], mf[2], mf[3], mf[4], dm[1], dm[2], dm[3], dm[4], ds[1], ds[2], ds[3],
                   ds[4], r->improves ? "true" : "false");
}

static void lambda_cal_out(repro_ctx *c, FILE *g, const dpc_kan_repro_grid *gr,
                           const dpc_kan_repro_lambda *r)
{
    const char *cn[3] = {"F.12 (paper)", "dpcorr", "D.9 (paper, lambda 0 only)"};
    repro_say(c, "\n5. lambda at calibrated kappa, (eps, delta) = (1, 1e-5) (n = %zu, B = %zu, T = %zu):\n",
              gr->n_cal, gr->B_cal, gr->T_cal);
    for (int k = 0; k < 3; k++) {
        repro_say(c, "   %-26s", cn[k]);
        for (int l = 0; l < DPC_KAN_REPRO_NLAMBDA; l++) {
            if (r->cal_state[k][l] == DPC_KAN_REPRO_CAL_NONE) continue;
            if (r->cal_state[k][l] == DPC_KAN_REPRO_CAL_FAILED) {
                repro_say(c, "  l=%g: n/a", r->lambda[l]);
                continue;
            }
            double kap = r->cal_kappa[k][l];
            for (size_t s = 0; s < r->cal_seeds; s++) {
                const dpc_kan_lcgd_result *o = &r->cal[k][l][s];
                fprintf(g, "%g,%s,%zu,%.8g,%.8g,%.8g,%.6g,%.8g\n", r->lambda[l], cn[k], s, kap,
                        o->avg_train_loss, o->avg_test_loss, o->avg_train_err, o->last_train_loss);
            }
            repro_say(c, "  l=%g: %.4f (kappa %.1f)", r->lambda[l], r->cal_mean[k][l], kap);
        }
        repro_say(c, "\n");
    }
    if (*r->why) repro_say(c, "   n/a: %s\n", r->why);
    const double(*mc)[DPC_KAN_REPRO_NLAMBDA] = (const double(*)[DPC_KAN_REPRO_NLAMBDA])r->cal_mean;
    repro_say(c, "   -> with kappa recalibrated per lambda the loss %s (oracle 18e)\n",
              r->no_gain ? "does not improve with lambda" : "improves with lambda for some calibration");
    repro_json_raw(c, "lambda_calibrated", "{\"F12\": [%.6g, %.6g, %.6g, %.6g, %.6g], \"dpcorr\": [%.6g, %.6g, %.6g, %.6g, "
                                           "%.6g], \"D9_lambda0\": %.6g, \"no_gain\": %s}",
                   mc[0][0], mc[0][1], mc[0][2], mc[0][3], mc[0][4], mc[1][0], mc[1][1], mc[1][2], mc[1][3], mc[1][4],
                   mc[2][0], r->no_gain ? "true" : "false");
}

static int sec_lambda(repro_ctx *c, const dpc_kan_repro_params *kp, const dpc_kan_repro_grid *gr)
{
    FILE *f = repro_open(c, "lambda_fixed_kappa.csv"), *g = repro_open(c, "lambda_calibrated.csv");
    if (!f || !g) return 1;
    dpc_kan_repro_lambda *r = malloc(sizeof *r); /* 50 runs' metrics: off the stack */
    dpc_error err = {0};
    if (!r || dpc_kan_repro_lambda_trend(kp, r, &err)) {
        if (!r) snprintf(err.msg, sizeof err.msg, "lambda trends: out of memory");
        free(r);
        return lib_fail(&err);
    }
    fprintf(f, "lambda,seed,kappa,avg_train_loss,avg_test_loss,avg_train_err,last_train_loss,max_dist,A_corr_unit\n");
    fprintf(g, "lambda,calibration,seed,kappa,avg_train_loss,avg_test_loss,avg_train_err,last_train_loss\n");
    lambda_fixed_out(c, f, gr, r);
    lambda_cal_out(c, g, gr, r);
    repro_close(c, f);
    repro_close(c, g);
    plot_series s1[1] = {ser("paired difference to lambda 0 (mean +- s.e. over seeds)", r->lambda,
                             r->paired_diff, r->paired_se, 5, PLOT_ERRORBARS)};
    plot_series s2[1] = {ser("A_{corr}, unit constants", r->lambda, r->A_corr, NULL, 5, PLOT_LINESPOINTS)};
    plot_series s3[2] = {ser("kappa = F.12(lambda)", r->lambda, r->cal_mean[0], NULL, 5, PLOT_LINESPOINTS),
                         ser("kappa = dpcorr(lambda)", r->lambda, r->cal_mean[1], NULL, 5, PLOT_LINESPOINTS)};
    plot_panel p[3] = {pan("fixed kappa: measured", "lambda", "change of (1/T) sum_t L_S(W_t)", 0, 0, s1, 1),
                       pan("fixed kappa: Thm. 4.1 bound", "lambda", "A_{corr}", 0, 1, s2, 1),
                       pan("calibrated kappa (eps = 1)", "lambda", "(1/T) sum_t L_S(W_t)", 0, 0, s3, 2)};
    repro_plot(c, "kan-lambda", p, 3);
    free(r);
    return 0;
}

/* ==== 6. Width window ============================================================================ */

static int sec_width(repro_ctx *c, const dpc_kan_repro_params *kp)
{
    dpc_kan_repro_width r;
    dpc_error err = {0};
    FILE *f = repro_open(c, "width_window.csv");
    if (!f) return 1;
    if (dpc_kan_repro_width_window(kp, &r, &err)) return lib_fail(&err);
    fprintf(f, "m,P,kappa,eta,clip,gamma_lo,radius,max_dist,projections,m_edge,m_hi_unit,m_lo_unit,inside\n");
    repro_say(c, "\n6. Width window (lambda 0.5, theory settings eta = 1/(12 beta), C = G_c, R* = 2 (log T +\n"
                 "   sqrt(log(n/delta)))/gamma, gamma estimated per m; kappa fixed at %.4g, eta kappa = %.4g):\n"
                 "   m       P         gamma    R*        max||W-W0||  projections  m_edge    m_hi(unit)  m_lo(unit)\n",
              r.kappa, r.ref_eta * r.kappa);
    double xm[DPC_KAN_REPRO_MAX_WIDTHS], md[DPC_KAN_REPRO_MAX_WIDTHS], act[DPC_KAN_REPRO_MAX_WIDTHS];
    for (size_t i = 0; i < r.rows; i++) {
        const dpc_kan_repro_width_row *w = &r.row[i];
        xm[i] = (double)w->m, md[i] = w->max_dist / w->radius, act[i] = (double)w->projections;
        fprintf(f, "%zu,%zu,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%zu,%.6g,%.6g,%.6g,%d\n", w->m, w->P, w->kappa,
                w->eta, w->clip, w->gamma_lo, w->radius, w->max_dist, w->projections, w->m_edge, w->m_hi,
                w->m_lo, w->inside);
        repro_say(c, "   %-7zu %-9zu %-8.4f %-9.4g %-12.4g %-12zu %-9.4g %-11.4g %.4g\n", w->m, w->P,
                  w->gamma_lo, w->radius, w->max_dist, w->projections, w->m_edge, w->m_hi, w->m_lo);
    }
    repro_close(c, f);
    repro_say(c, "   -> projection activations are %s inside the window (m <= m_edge) and %s beyond it\n"
                 "   (unit constants: m_lo = 1/gamma^4 exceeds m_hi, the Thm. 4.1 window is empty as written;\n"
                 "   m_edge is where E||noise walk|| reaches R*, the upper limit's mechanism with explicit constants)\n",
              r.consistent ? "0" : "NOT always 0", r.consistent ? "appear" : "(see CSV)");
    repro_json_raw(c, "width_window", "{\"kappa\": %.6g, \"m_edge_ref\": %.6g, \"consistent\": %s, \"inside_seen\": %s, "
                                      "\"beyond_seen\": %s}",
                   r.kappa, r.edge_ref, r.verified ? "true" : "false", r.inside_seen ? "true" : "false",
                   r.beyond_seen ? "true" : "false");
    plot_series s1[1] = {ser("max_t ||W_t - W_0|| / R*", xm, md, NULL, r.rows, PLOT_LINESPOINTS)};
    plot_series s2[1] = {ser("projection activations", xm, act, NULL, r.rows, PLOT_LINESPOINTS)};
    plot_panel p[2] = {pan("distance from W_0 vs width", "m", "max dist / R*", 1, 1, s1, 1),
                       pan("projection activations vs width", "m", "count", 1, 0, s2, 1)};
    repro_plot(c, "kan-width", p, 2);
    return 0;
}

/* ==== 7. n and epsilon trends ===================================================================== */

static int sec_trends(repro_ctx *c, const dpc_kan_repro_params *kp, const dpc_kan_repro_grid *g)
{
    dpc_kan_repro_trends r;
    dpc_error err = {0};
    FILE *f = repro_open(c, "n_eps_trends.csv");
    if (!f) return 1;
    repro_say(c, "\n7. lambda = 0, kappa from Thm. D.9 (B = %zu, T = %zu, m = %zu): test loss averaged over iterates\n",
              g->tr_B, g->tr_T, g->tr_m);
    if (dpc_kan_repro_n_eps_trends(kp, &r, &err)) return lib_fail(&err);
    fprintf(f, "sweep,n,eps,kappa_D9,avg_test_loss,avg_test_err,avg_train_loss,A_van_unit\n");
    double x[2][DPC_KAN_REPRO_MAX_POINTS], y[2][DPC_KAN_REPRO_MAX_POINTS];
    for (int sw = 0; sw < 2; sw++) {
        size_t cnt = sw ? r.ne : r.nn;
        for (size_t i = 0; i < cnt; i++) {
            const dpc_kan_repro_trend_row *w = sw ? &r.eps_sweep[i] : &r.n_sweep[i];
            fprintf(f, "%s,%zu,%g,%.6g,%.8g,%.6g,%.8g,%.6g\n", sw ? "eps" : "n", w->n, w->eps, w->kappa,
                    w->avg_test_loss, w->avg_test_err, w->avg_train_loss, w->A_van);
            repro_say(c, "   %s: n %-5zu eps %-4g kappa %-8.4g avg test loss %.5f (err %.4f)\n",
                      sw ? "eps" : "n  ", w->n, w->eps, w->kappa, w->avg_test_loss, w->avg_test_err);
            x[sw][i] = sw ? w->eps : (double)w->n, y[sw][i] = w->avg_test_loss;
        }
    }
    repro_close(c, f);
    repro_say(c, "   -> test loss %s in n and %s in eps (oracle 18c)\n",
              r.decreasing_in_n ? "decreases" : "does NOT decrease",
              r.decreasing_in_eps ? "decreases" : "does NOT decrease");
    repro_json_raw(c, "trends", "{\"decreasing_in_n\": %s, \"decreasing_in_eps\": %s}",
                   r.decreasing_in_n ? "true" : "false", r.decreasing_in_eps ? "true" : "false");
    plot_series s1[1] = {ser("avg test loss, eps = 2", x[0], y[0], NULL, r.nn, PLOT_LINESPOINTS)};
    plot_series s2[1] = {ser("avg test loss, n = 1000", x[1], y[1], NULL, r.ne, PLOT_LINESPOINTS)};
    plot_panel p[2] = {pan("n trend (lambda 0, kappa D.9)", "n", "test loss", 1, 0, s1, 1),
                       pan("epsilon trend", "epsilon", "test loss", 1, 0, s2, 1)};
    repro_plot(c, "kan-trends", p, 2);
    return 0;
}

/* ==== 8. Fashion-MNIST: the library's setup, trained by the CLI's train_run ==================== */

/* The row, text and JSON member of model k's run. */
static int fmnist_row(repro_ctx *c, FILE *f, const dpc_kan_repro_fmnist *fs, int k,
                      const train_result *res, char *jb, size_t cap)
{
    const dpc_train_config *g = &fs->cfg;
    fprintf(f, "%s,%s,%zu,%g,1e-5,%zu,%zu,%g,%g,%.6f,%.6f,%.2f,%.0f,%.6g,%s\n", fs->label[k],
            res->model_spec, res->n_params, res->ledger.epsilon, g->epochs, g->batch, g->lr, g->clip,
            res->final_acc, res->final_loss, res->train_s, res->examples_per_s,
            res->ledger.noise_multiplier, res->ledger.route);
    repro_say(c, "   %-24s %7zu params  test accuracy %.4f  (loss %.4f, eps %.4g, %.1f s training, %.0f ex/s)\n",
              fs->label[k], res->n_params, res->final_acc, res->final_loss, res->ledger.epsilon,
              res->train_s, res->examples_per_s);
    return snprintf(jb, cap,
                    "%s\"%s\": {\"spec\": \"%s\", \"parameters\": %zu, \"test_accuracy\": %.6f, \"epsilon\": %.6g, "
                    "\"train_seconds\": %.2f}",
                    k ? ", " : "", k ? "mlp" : "kan", res->model_spec, res->n_params, res->final_acc,
                    res->ledger.epsilon, res->train_s);
}

/* Trains model k of the setup on the subsets; 0 or 1 (said). */
static int fmnist_train(repro_ctx *c, const dpc_kan_repro_fmnist *fs, int k, dpc_dataset *tr,
                        dpc_dataset *te, train_result *res)
{
    train_opts o;
    train_opts_init(&o);
    o.fr.data = "fashion-mnist (subset)";
    o.fr.train = tr;
    o.fr.test = te;
    o.model = fs->model[k];
    o.fr.label = fs->label[k];
    o.fr.quiet = 1;
    frame_use_seed(&o.fr, c->o->seed); /* an experiment: warned once by cmd_repro */
    o.fr.warn_seed = 0;
    o.cfg = fs->cfg;
    int r = train_run(&o, NULL, res);
    train_opts_free(&o);
    if (r) fprintf(stderr, "dpcorr repro: fmnist %s failed\n", fs->model[k]);
    return r ? 1 : 0;
}

static int fmnist_runs(repro_ctx *c, const dpc_kan_repro_fmnist *fs, dpc_dataset *tr,
                       dpc_dataset *te, train_result *res)
{
    FILE *f = repro_open(c, "fmnist_kan_vs_mlp.csv");
    if (!f) return 1;
    fprintf(f, "model,spec,parameters,epsilon,delta,epochs,batch,lr,clip,test_accuracy,test_loss,train_seconds,"
               "examples_per_s,sigma,route\n");
    char jb[1024];
    int jn = 0;
    for (int k = 0; k < 2; k++) {
        if (fmnist_train(c, fs, k, tr, te, &res[k])) return 1; /* the run's end removes f */
        jn += fmnist_row(c, f, fs, k, &res[k], jb + jn, sizeof jb - (size_t)jn);
    }
    repro_close(c, f);
    repro_json_raw(c, "fmnist", "{%s, \"n_train\": %zu, \"n_test\": %zu, \"epochs\": %zu, \"batch\": %zu}", jb,
                   tr->n, te->n, fs->cfg.epochs, fs->cfg.batch);
    char png[4096];
    snprintf(png, sizeof png, "%s/kan-fmnist.png", c->o->out);
    if (train_plot(png, res, fs->label, 2)) c->plots_ok = 0;
    repro_say(c, "   (accuracy is reported as measured: no threshold; a subset and few epochs when --quick)\n");
    return 0;
}

int repro_kan_fmnist(repro_ctx *c)
{
    dpc_kan_repro_fmnist fs;
    dpc_error err = {0};
    if (dpc_kan_repro_fmnist_setup(c->o->smoke ? DPC_KAN_REPRO_SMOKE
                                   : c->o->quick ? DPC_KAN_REPRO_QUICK : DPC_KAN_REPRO_FULL,
                                   &fs, &err))
        return lib_fail(&err);
    repro_say(c, "\n8. Fashion-MNIST, (eps, delta) = (%g, 1e-5), DP-SGD (Poisson, %s), %zu training / %zu test\n"
                 "   images, %zu epochs, batch %zu, lr %g, clip %g, 2 threads:\n",
              fs.cfg.epsilon, dpc_accountant_name(fs.cfg.accountant), fs.n_train, fs.n_test, fs.cfg.epochs,
              fs.cfg.batch, fs.cfg.lr, fs.cfg.clip);
    dpc_dataset *all = NULL, *allt = NULL, *tr = NULL, *te = NULL;
    if (dpc_data_load_fashion_mnist(&all, &allt, NULL, &err)) {
        repro_say(c, "   skipped: %s (apt-get install dataset-fashion-mnist)\n", err.msg);
        repro_json_str(c, "fmnist", "skipped: dataset not found");
        return 0;
    }
    train_result res[2] = {{.nepochs = 0}, {.nepochs = 0}}; /* freed on every path */
    int rc = 1;
    if (dpc_dataset_split(&tr, NULL, all, fs.n_train < all->n ? fs.n_train : all->n, NULL, 0, &err) ||
        dpc_dataset_split(&te, NULL, allt, fs.n_test < allt->n ? fs.n_test : allt->n, NULL, 0, &err))
        lib_fail(&err);
    else
        rc = fmnist_runs(c, &fs, tr, te, res);
    train_result_free(&res[0]);
    train_result_free(&res[1]);
    dpc_dataset_free(all);
    dpc_dataset_free(allt);
    dpc_dataset_free(tr);
    dpc_dataset_free(te);
    return rc;
}

/* ==== Target ===================================================================================== */

int repro_kan(repro_ctx *c)
{
    dpc_kan_repro_params kp;
    dpc_kan_repro_params_init(&kp);
    kp.scale = c->o->smoke ? DPC_KAN_REPRO_SMOKE : c->o->quick ? DPC_KAN_REPRO_QUICK : DPC_KAN_REPRO_FULL;
    kp.seed = c->o->seed;
    dpc_kan_repro_grid g;
    dpc_error err = {0};
    if (dpc_kan_repro_grid_get(kp.scale, &g, &err)) return lib_fail(&err);
    double t = repro_now();
    if (sec_noise(c, &kp) || sec_sensitivity(c) || sec_kappa(c)) return 1;
    if (sec_lambda(c, &kp, &g) || sec_width(c, &kp) || sec_trends(c, &kp, &g)) return 1;
    repro_json_num(c, "synthetic_seconds", repro_now() - t);
    if (repro_kan_fmnist(c)) return 1;
    size_t ny, nn;
    const char *const *yes = dpc_kan_repro_reproduced(&ny), *const *no = dpc_kan_repro_not_reproduced(&nn);
    repro_json_strs(c, "reproduces", yes, ny);
    repro_json_strs(c, "not_reproduced", no, nn);
    repro_say(c, "\nreproduces: the paper's identities, calibrations and predicted trends (no experiments in the paper).\n"
                 "cannot reproduce: Figure 1 (CIFAR-10 CNN of another paper); absolute risk values (constants unknown).\n");
    return 0;
}
