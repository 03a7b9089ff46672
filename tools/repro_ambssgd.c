/* repro_ambssgd.c — `dpcorr repro ambssgd`: the scaling study of DP-AMBSSGD (Varshney, Thakurta
 * & Jain 2022; note papers/001 §5). The study (its grids, arms, seeds, statistics and checks)
 * is the paper module's, dpc_linreg_repro_run (dpcorr/papers/linreg.h,
 * src/papers/linreg/repro.c); this file only writes its result: CSV files, the JSON summary,
 * the text report and the plots. */
#include "repro.h"
#include "plot.h"
#include "dpcorr/papers/linreg.h"

#include <math.h>
#include <stdlib.h>
#include <sys/resource.h>

typedef dpc_linreg_repro_result res_t;
enum { A_ADAPT = DPC_LINREG_REPRO_ADAPTIVE, A_FIXED = DPC_LINREG_REPRO_FIXED,
       A_SGD = DPC_LINREG_REPRO_NONPRIVATE, A_SSP = DPC_LINREG_REPRO_SSP,
       A_PAPER = DPC_LINREG_REPRO_PAPER_RULE };

static double cpu_seconds(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + 1e-6 * (double)u.ru_utime.tv_usec +
           (double)u.ru_stime.tv_sec + 1e-6 * (double)u.ru_stime.tv_usec;
}

static int sigma_sweep(repro_ctx *c, const res_t *R)
{
    const dpc_linreg_repro_grid *cf = &R->grid;
    FILE *f = repro_open(c, "ambssgd_sigma.csv");
    if (!f) return 1;
    fprintf(f, "sigma,adaptive,fixed,nonprivate,ssp,paper_rule,dp_excess_adaptive,dp_excess_fixed,"
               "o5_oracle,clip_fraction,note_adaptive,note_fixed_same_alpha,note_nonprivate,seeds\n");
    repro_say(c, "\nsigma sweep (N = %zu, d = %zu, eps = 1): mean excess risk over %zu seeds\n"
                 "  sigma    adaptive     fixed clip   non-private  SSP          paper rule   "
                 "O5 ratio  clipped   note adaptive\n", cf->n0, cf->d0, cf->seeds);
    for (size_t i = 0; i < cf->nsig; i++) {
        const double *m[5] = {R->risk[0], R->risk[1], R->risk[2], R->risk[3], R->risk[4]};
        fprintf(f, "%g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.3g,%.3g,%.3g,%.3g,%zu\n",
                R->sigma[i], m[A_ADAPT][i], m[A_FIXED][i], m[A_SGD][i], m[A_SSP][i],
                m[A_PAPER][i], R->dp_excess_adaptive[i], R->dp_excess_fixed[i], R->o5_oracle[i],
                R->clip_fraction[i], R->note[0][i], R->note[1][i], R->note[2][i], cf->seeds);
        repro_say(c, "  %-7g  %-11.4g  %-11.4g  %-11.4g  %-11.4g  %-11.4g  %-8.3f  %-8.1e  %.3g\n",
                  R->sigma[i], m[A_ADAPT][i], m[A_FIXED][i], m[A_SGD][i], m[A_SSP][i],
                  m[A_PAPER][i], m[A_ADAPT][i] / R->o5_oracle[i], R->clip_fraction[i],
                  R->note[0][i]);
    }
    repro_close(c, f);
    return 0;
}

static int eps_sweep(repro_ctx *c, const res_t *R)
{
    FILE *f = repro_open(c, "ambssgd_epsilon.csv");
    if (!f) return 1;
    fprintf(f, "epsilon,adaptive,dp_excess,nonprivate\n");
    repro_say(c, "\nepsilon sweep (sigma = 1): ");
    for (size_t e = 0; e < R->neps; e++) {
        fprintf(f, "%g,%.6g,%.6g,%.6g\n", R->eps[e], R->eps_risk[e], R->eps_dp_excess[e],
                R->eps_nonprivate);
        repro_say(c, "eps %g: %.4g  ", R->eps[e], R->eps_risk[e]);
    }
    fprintf(f, "1 (exact alpha*),%.6g,%.6g,%.6g\n", R->exact_alpha_risk,
            R->exact_alpha_risk - R->eps_nonprivate, R->eps_nonprivate);
    repro_close(c, f);
    repro_say(c, "\n  exact alpha* at eps = 1: %.4g (Thm. 3.7 alpha: %.4g; note 8.56e-5 vs 1.31e-4)\n",
              R->exact_alpha_risk, R->eps1_risk);
    if (R->grid.ssgd_seeds)
        repro_say(c, "  DP-SSGD at (1, 1e-5) (shuffling, Thm. 3.2-capped step): %.4g over %zu seeds "
                     "(DP-AMBSSGD %.4g)\n", R->dpssgd_risk, R->grid.ssgd_seeds, R->eps1_risk);
    return 0;
}

static int nd_sweeps(repro_ctx *c, const res_t *R)
{
    const dpc_linreg_repro_grid *cf = &R->grid;
    FILE *f = repro_open(c, "ambssgd_n_d.csv");
    if (!f) return 1;
    fprintf(f, "sweep,N,d,adaptive,nonprivate,dp_excess,clip_fraction,seeds\n");
    repro_say(c, "\nN sweep (sigma = 1, d = %zu):", cf->d0);
    for (size_t i = 0; i < cf->nn; i++) {
        const dpc_linreg_repro_point *q = &R->nsweep[i];
        fprintf(f, "N,%zu,%zu,%.6g,%.6g,%.6g,%.3g,%zu\n", q->n, q->d, q->adaptive, q->nonprivate,
                q->dp_excess, q->clip_fraction, cf->n_seeds);
        repro_say(c, "  %zu: %.4g (clip %.1e)", q->n, q->adaptive, q->clip_fraction);
    }
    repro_say(c, "\nd sweep (sigma = 1, N = %zu):", cf->d_n);
    for (size_t i = 0; i < cf->nd; i++) {
        const dpc_linreg_repro_point *q = &R->dsweep[i];
        fprintf(f, "d,%zu,%zu,%.6g,%.6g,%.6g,%.3g,%zu\n", q->n, q->d, q->adaptive, q->nonprivate,
                q->dp_excess, q->clip_fraction, cf->d_seeds);
        repro_say(c, "  %zu: %.4g", q->d, q->adaptive);
    }
    repro_close(c, f);
    return 0;
}

static const char *yes_no(int ok) { return ok ? "yes" : "NO"; }
static const char *true_false(int ok) { return ok ? "true" : "false"; }

/* The slopes, the verdicts and the JSON summary. */
static int verdicts(repro_ctx *c, const res_t *R, double wall, double cpu)
{
    const dpc_linreg_repro_grid *cf = &R->grid;
    size_t lo = cf->nsig - 1;
    const char *rule = dpc_dpstat_rule_name(R->dpstat_rule);
    FILE *f = repro_open(c, "ambssgd_slopes.csv");
    if (!f) return 1;
    fprintf(f, "quantity,slope,expected\nsigma_adaptive,%.4f,2 (Thm. 3.7: privacy term ~ sigma^2)\n"
               "sigma_fixed,%.4f,0 (fixed clip: no sigma dependence)\nepsilon,%.4f,-2 (1/eps^2; note: "
               "-1.5 to -1.9)\nN,%.4f,-2 (plus T ln N drift)\nd,%.4f,2 (d^2)\n",
            R->slope_sigma_adaptive, R->slope_sigma_fixed, R->slope_eps, R->slope_n, R->slope_d);
    repro_close(c, f);
    repro_say(c, "\n\nlog-log slopes of the DP excess risk: sigma %.3f (adaptive; expect 2 +- 0.3: %s), "
                 "%.3f (fixed clip; flat: %s)\n  epsilon %.3f (expect [-2.2, -1.4]: %s), N %.3f (about "
                 "-2), d %.3f (about 2)\n  fixed / adaptive at sigma = %g: %.3g (>= 100: %s)\n",
              R->slope_sigma_adaptive, yes_no(R->ok_sigma_slope), R->slope_sigma_fixed,
              yes_no(R->ok_fixed_flat), R->slope_eps, yes_no(R->ok_eps_slope), R->slope_n, R->slope_d,
              R->sigma[lo], R->ratio_fixed_over_adaptive, yes_no(R->ok_ratio));
    repro_say(c, "time: %.1f s wall, %.1f s CPU (%d threads; the machine is shared)\n", wall, cpu,
              (int)R->threads);
    repro_json_raw(c, "config", "{\"n0\": %zu, \"d0\": %zu, \"seeds\": %zu, \"delta\": %g, "
                                "\"alpha_rule\": \"Thm. 3.7\", \"dpstat_rule\": \"%s\", \"dpstat_k\": %zu, "
                                "\"c1\": %g, \"threads\": %d}", cf->n0, cf->d0, cf->seeds, R->delta,
                   rule, R->dpstat_k, R->c1, (int)R->threads);
    char buf[4096];
    int n = 0;
    for (size_t i = 0; i < cf->nsig; i++)
        n += snprintf(buf + n, sizeof buf - (size_t)n,
                      "%s{\"sigma\": %g, \"adaptive\": %.6g, \"fixed\": %.6g, \"nonprivate\": %.6g, "
                      "\"ssp\": %.6g, \"paper_rule\": %.6g, \"dp_excess_adaptive\": %.6g, "
                      "\"o5_ratio\": %.4f, \"clip_fraction\": %.3g}",
                      i ? ", " : "", R->sigma[i], R->risk[A_ADAPT][i], R->risk[A_FIXED][i],
                      R->risk[A_SGD][i], R->risk[A_SSP][i], R->risk[A_PAPER][i],
                      R->dp_excess_adaptive[i], R->risk[A_ADAPT][i] / R->o5_oracle[i],
                      R->clip_fraction[i]);
    repro_json_raw(c, "sigma_sweep", "[%s]", buf);
    repro_json_raw(c, "slopes", "{\"sigma_adaptive\": %.6g, \"sigma_fixed\": %.6g, \"epsilon\": %.6g, "
                                "\"n\": %.6g, \"d\": %.6g}", R->slope_sigma_adaptive,
                   R->slope_sigma_fixed, R->slope_eps, R->slope_n, R->slope_d);
    repro_json_num(c, "ratio_fixed_over_adaptive", R->ratio_fixed_over_adaptive);
    repro_json_num(c, "ratio_sigma", R->sigma[lo]);
    repro_json_num(c, "exact_alpha_risk", R->exact_alpha_risk);
    repro_json_num(c, "dpssgd_risk", R->dpssgd_risk);
    repro_json_raw(c, "checks", "{\"sigma_slope_2_pm_0.3\": %s, \"fixed_flat\": %s, "
                                "\"ratio_at_least_100\": %s, \"epsilon_slope_in_range\": %s}",
                   true_false(R->ok_sigma_slope), true_false(R->ok_fixed_flat), true_false(R->ok_ratio), true_false(R->ok_eps_slope));
    repro_json_num(c, "study_wall_seconds", wall);
    repro_json_num(c, "cpu_seconds", cpu);
    return 0;
}

static void plots(repro_ctx *c, const res_t *R)
{
    const dpc_linreg_repro_grid *cf = &R->grid;
    const double *sig = R->sigma;
    double nv[DPC_LINREG_REPRO_MAXN], dpn[DPC_LINREG_REPRO_MAXN], dv[DPC_LINREG_REPRO_MAXD],
        dpd[DPC_LINREG_REPRO_MAXD];
    for (size_t i = 0; i < cf->nn; i++) nv[i] = (double)R->nsweep[i].n, dpn[i] = R->nsweep[i].dp_excess;
    for (size_t i = 0; i < cf->nd; i++) dv[i] = (double)R->dsweep[i].d, dpd[i] = R->dsweep[i].dp_excess;
    plot_series s1[] = {{"DP-AMBSSGD (adaptive clip)", sig, R->risk[A_ADAPT], NULL, cf->nsig, PLOT_LINESPOINTS},
                        {"DP mini-batch SGD, fixed clip", sig, R->risk[A_FIXED], NULL, cf->nsig, PLOT_LINESPOINTS},
                        {"non-private SGD", sig, R->risk[A_SGD], NULL, cf->nsig, PLOT_LINESPOINTS},
                        {"SSP", sig, R->risk[A_SSP], NULL, cf->nsig, PLOT_LINESPOINTS},
                        {"DP-STAT printed rule", sig, R->risk[A_PAPER], NULL, cf->nsig, PLOT_LINESPOINTS},
                        {"note calibration (adaptive)", sig, R->note[0], NULL, cf->nsig, PLOT_POINTS}};
    plot_series s2[] = {{"DP excess risk (adaptive)", R->eps, R->eps_dp_excess, NULL, R->neps, PLOT_LINESPOINTS}};
    plot_series s3[] = {{"DP excess risk (adaptive)", nv, dpn, NULL, cf->nn, PLOT_LINESPOINTS}};
    plot_panel p1[] = {{"excess risk vs label noise (eps = 1)", "sigma", "excess risk", 1, 1, s1, 6},
                       {"DP excess vs epsilon (sigma = 1)", "epsilon", "risk - non-private risk", 1, 1, s2, 1},
                       {"DP excess vs N (sigma = 1)", "N", "risk - non-private risk", 1, 1, s3, 1}};
    repro_plot(c, "ambssgd", p1, 3);
    double tt[DPC_LINREG_REPRO_MAXT];
    for (size_t t = 0; t < R->T0; t++) tt[t] = (double)t;
    plot_series s4[] = {{"DP excess risk (adaptive)", dv, dpd, NULL, cf->nd, PLOT_LINESPOINTS}};
    plot_series s5[DPC_LINREG_REPRO_MAXS];
    char lab[DPC_LINREG_REPRO_MAXS][32];
    for (size_t i = 0; i < cf->nsig; i++) {
        snprintf(lab[i], sizeof lab[i], "zeta_t, sigma = %g", sig[i]);
        s5[i] = (plot_series){lab[i], tt, R->zeta[i], NULL, R->T0, PLOT_LINES};
    }
    plot_panel p2[] = {{"DP excess vs dimension (sigma = 1)", "d", "risk - non-private risk", 1, 1, s4, 1},
                       {"adaptive clip per step (seed 0)", "step t", "zeta_t", 0, 1, s5, cf->nsig}};
    repro_plot(c, "ambssgd_d_zeta", p2, 2);
}

int repro_ambssgd(repro_ctx *c)
{
    dpc_linreg_repro_params p;
    dpc_linreg_repro_params_init(&p);
    p.scale = c->o->smoke ? DPC_LINREG_REPRO_SMOKE : c->o->quick ? DPC_LINREG_REPRO_QUICK
                                                                 : DPC_LINREG_REPRO_FULL;
    p.seed = c->o->seed;
    p.threads = 2;
    dpc_linreg_repro_grid g;
    dpc_linreg_opts d;
    dpc_linreg_opts_init(&d, DPC_LINREG_AMBSSGD);
    dpc_error err = {0};
    dpc_linreg_repro_result *R = NULL;
    size_t nj;
    if (dpc_linreg_repro_grid_get(p.scale, &g, &err) || dpc_linreg_repro_count(&p, &nj, &err)) goto fail;
    repro_say(c, "\nDP-AMBSSGD scaling study: H = I, ||w*|| = 1, delta = %g, Thm. 3.7 alpha, "
                 "%s rule, K = %zu, c1 = %g; N0 = %zu, d0 = %zu, %zu seeds; %zu jobs on up to 2 "
                 "threads\n", DPC_LINREG_REPRO_DELTA, dpc_dpstat_rule_name(DPC_DPSTAT_MARGIN), d.dpstat_k, d.c1,
              g.n0, g.d0, g.seeds, nj);
    double cpu0 = cpu_seconds(), w0 = repro_now();
    if (dpc_linreg_repro_run(&p, &R, &err)) goto fail;
    double cpu = cpu_seconds() - cpu0, wall = repro_now() - w0;
    if (sigma_sweep(c, R) || eps_sweep(c, R) || nd_sweeps(c, R) || verdicts(c, R, wall, cpu)) {
        dpc_linreg_repro_result_free(R);
        return 1;
    }
    plots(c, R);
    size_t ny, nn;
    const char *const *yes = dpc_linreg_repro_reproduced(&ny), *const *no = dpc_linreg_repro_not_reproduced(&nn);
    repro_json_strs(c, "reproduces", yes, ny);
    repro_json_strs(c, "not_reproduced", no, nn);
    repro_say(c, "reproduces: the paper's scaling claims (sigma^2, 1/eps^2, d^2, 1/N^2) and the note's "
                 "calibration runs.\nnot reproducible: the paper has no experiments.\n");
    dpc_linreg_repro_result_free(R);
    return 0;
fail:
    fprintf(stderr, "dpcorr repro ambssgd: %s\n", err.msg);
    return 1;
}
