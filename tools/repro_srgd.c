/* repro_srgd.c — `dpcorr repro srgd`: Accelerated-DP-SRGD (Choquette-Choo, Ganesh & Thakurta
 * 2024). The paper is purely theoretical; the reproduction (its experiments, grids, seeds,
 * baselines, statistics and checks) is the paper module's, dpc_srgd_repro_run
 * (dpcorr/papers/srgd.h, src/papers/srgd/repro.c). This file only writes its result: CSV files,
 * the JSON summary, the text report and the plots. */
#include "cli.h"
#include "plot.h"
#include "repro.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef dpc_srgd_repro_result res_t;
typedef dpc_srgd_repro_grid grid_t;

/* A plotted series. */
typedef struct curve {
    double x[10], y[10], se[10];
    size_t n;
} curve;

static void put(curve *c, double x, dpc_srgd_repro_stat s)
{
    c->x[c->n] = x;
    c->y[c->n] = s.mean;
    c->se[c->n++] = s.se;
}

/* The curves of the two figures. */
typedef struct srgd_curves {
    curve np, p1, priv, un, cp, ce, fit, ct, ch, ci, cb[4], tr[3];
} srgd_curves;

static int report_n(repro_ctx *c, const res_t *R, srgd_curves *v)
{
    const grid_t *pl = &R->grid;
    FILE *f = repro_open(c, "srgd_vs_n.csv");
    if (!f) return 1;
    fprintf(f, "n,T,B,beta,nonprivate_p2,se,nonprivate_p1,se,private_part_eps%g,se,"
               "unaccelerated_srg,se,accel_sgd,se,seed0\n", pl->eps_n);
    repro_say(c, "\nexcess risk vs n (Regime A, c = 1, T = n^(1/4), p = %zu; mean of %zu seeds):\n"
                 "       n     T      B   non-private P2   P1          private part (eps %g)  "
                 "unaccel SRG   accel-SGD\n", pl->p_n, pl->seeds_n, pl->eps_n);
    for (size_t i = 0; i < pl->nTn; i++) {
        const dpc_srgd_repro_vs_n_row *b = &R->vs_n[i];
        double x = (double)b->n;
        put(&v->np, x, b->nonprivate_p2);
        put(&v->p1, x, b->nonprivate_p1);
        put(&v->priv, x, b->private_part);
        put(&v->un, x, b->unaccelerated);
        fprintf(f, "%zu,%zu,%zu,%.6g,%.8g,%.3g,%.8g,%.3g,%.8g,%.3g,%.8g,%.3g,%.8g,%.3g,%llu\n",
                b->n, b->T, b->B, b->beta, b->nonprivate_p2.mean, b->nonprivate_p2.se,
                b->nonprivate_p1.mean, b->nonprivate_p1.se, b->private_part.mean,
                b->private_part.se, b->unaccelerated.mean, b->unaccelerated.se,
                b->accel_sgd.mean, b->accel_sgd.se, (unsigned long long)b->seed0);
        repro_say(c, "%8zu %5zu %6zu   %-15.4g  %-10.4g  %-21.4g  %-12.4g  %.4g\n", b->n, b->T,
                  b->B, b->nonprivate_p2.mean, b->nonprivate_p1.mean, b->private_part.mean,
                  b->unaccelerated.mean, b->accel_sgd.mean);
    }
    repro_close(c, f);
    repro_say(c, "slopes vs n: non-private P2 %.3f +- %.3f (theory -1/2), P1 %.3f, unaccelerated "
                 "SRG %.3f (theory -1/4), accel-SGD %.3f, private part %.3f (theory -1)\n",
              R->slope_n_p2, R->slope_n_p2_se, R->slope_n_p1, R->slope_n_unaccelerated,
              R->slope_n_accel_sgd, R->slope_n_private);
    repro_json_raw(c, "vs_n", "{\"slope_nonprivate\": %.4f, \"slope_nonprivate_se\": %.4f, "
                              "\"slope_nonprivate_p1\": %.4f, \"slope_unaccelerated\": %.4f, "
                              "\"slope_accel_sgd\": %.4f, \"slope_private_part\": %.4f, "
                              "\"eps_private\": %g, \"n_max\": %.0f}",
                   R->slope_n_p2, R->slope_n_p2_se, R->slope_n_p1, R->slope_n_unaccelerated,
                   R->slope_n_accel_sgd, R->slope_n_private, pl->eps_n,
                   (double)R->vs_n[pl->nTn - 1].n);
    return 0;
}

/* E2 and E3 */
static int report_priv(repro_ctx *c, const res_t *R, srgd_curves *v)
{
    const grid_t *pl = &R->grid;
    FILE *f = repro_open(c, "srgd_vs_p.csv");
    if (!f) return 1;
    fprintf(f, "p,relevant,n,eps,beta,private_part,se,excess_private,excess_nonprivate\n");
    repro_say(c, "\nprivate part vs p (n = %zu, %zu relevant coordinates, eps = %.4g: beta = "
                 "%g beta_0 at p = %zu; %zu seeds):\n     p   beta      private part         excess "
                 "DP / non-DP\n", pl->n_private, pl->relevant, R->eps_p, pl->k_p, pl->ps[0],
              pl->seeds_private);
    for (size_t i = 0; i < pl->nps; i++) {
        const dpc_srgd_repro_vs_p_row *b = &R->vs_p[i];
        put(&v->cp, (double)b->p, b->private_part);
        fprintf(f, "%zu,%zu,%zu,%.6g,%.6g,%.8g,%.3g,%.8g,%.8g\n", b->p, pl->relevant,
                pl->n_private, R->eps_p, b->beta, b->private_part.mean, b->private_part.se,
                b->excess_private.mean, b->excess_nonprivate.mean);
        repro_say(c, "%6zu  %-8.4g  %-9.4g +- %-8.2g  %.4g / %.4g\n", b->p, b->beta,
                  b->private_part.mean, b->private_part.se, b->excess_private.mean,
                  b->excess_nonprivate.mean);
    }
    repro_close(c, f);
    if (!(f = repro_open(c, "srgd_vs_eps.csv"))) return 1;
    fprintf(f, "eps,beta_over_beta0,p,n,beta,private_part,se,in_fit\n");
    repro_say(c, "\nprivate part vs eps (n = %zu, p = %zu, T = %zu; eps solved for beta = k beta_0;"
                 " fit where 3 beta_0 <= beta <= lambda_1 T^2/8 = %.3g):\n    eps        k      "
                 "beta      private part\n", pl->n_private, pl->ps[0], R->T_private,
              R->beta_max_fit);
    for (size_t i = 0; i < pl->nks; i++) {
        const dpc_srgd_repro_vs_eps_row *b = &R->vs_eps[i];
        put(&v->ce, b->eps, b->private_part);
        if (b->in_fit) put(&v->fit, b->eps, b->private_part);
        fprintf(f, "%.6g,%.4g,%zu,%zu,%.6g,%.8g,%.3g,%d\n", b->eps, b->k, pl->ps[0],
                pl->n_private, b->beta, b->private_part.mean, b->private_part.se, b->in_fit);
        repro_say(c, "  %-10.4g %-6.3g %-8.4g  %-9.4g +- %.2g%s\n", b->eps, b->k, b->beta,
                  b->private_part.mean, b->private_part.se, b->in_fit ? "   (fit)" : "");
    }
    repro_close(c, f);
    repro_say(c, "slopes: private part vs p %.3f +- %.3f (theory 1/2), vs eps %.3f +- %.3f (theory "
                 "-1; %zu points); vs beta %.3f (eps sweep) and %.3f (p sweep)\n",
              R->slope_p, R->slope_p_se, R->slope_eps, R->slope_eps_se, R->fit_points,
              R->slope_beta_eps, R->slope_beta_p);
    repro_json_raw(c, "private_scaling",
                   "{\"slope_vs_p\": %.4f, \"slope_vs_p_se\": %.4f, \"slope_vs_eps\": %.4f, "
                   "\"slope_vs_eps_se\": %.4f, \"slope_vs_beta_eps_sweep\": %.4f, "
                   "\"slope_vs_beta_p_sweep\": %.4f, \"eps_fit_points\": %zu, \"eps_for_p_sweep\": "
                   "%.6g, \"n\": %zu, \"relevant\": %zu, \"beta0\": %.6g, \"beta_max_fit\": %.6g}",
                   R->slope_p, R->slope_p_se, R->slope_eps, R->slope_eps_se, R->slope_beta_eps,
                   R->slope_beta_p, R->fit_points, R->eps_p, pl->n_private, pl->relevant,
                   R->beta0, R->beta_max_fit);
    return 0;
}

static int report_regimes(repro_ctx *c, const res_t *R)
{
    FILE *f = repro_open(c, "srgd_regimes.csv");
    if (!f) return 1;
    fprintf(f, "n,regime,T,B,beta,excess_nonprivate,se,excess_eps1,se\n");
    repro_say(c, "\nRegime A (T = n^(1/4)) vs B (T = sqrt n, beta = (16 c_M + 8) L n^(3/2)/(R B^2)"
                 "), p = 32:\n       n  regime      T      B  beta       non-private   eps = 1\n");
    repro_json_fmt(c, ",\n  \"regimes\": [");
    for (size_t i = 0; i < 2 * R->grid.nab; i++) {
        const dpc_srgd_repro_regime_row *b = &R->regimes[i];
        const char *rg = b->regime == DPC_SRGD_REGIME_B ? "B" : "A";
        fprintf(f, "%zu,%s,%zu,%zu,%.6g,%.8g,%.3g,%.8g,%.3g\n", b->n, rg, b->T, b->B, b->beta,
                b->nonprivate.mean, b->nonprivate.se, b->eps1.mean, b->eps1.se);
        repro_say(c, "%8zu  %-6s %6zu %6zu  %-9.4g  %-12.4g  %.4g\n", b->n, rg, b->T, b->B,
                  b->beta, b->nonprivate.mean, b->eps1.mean);
        repro_json_fmt(c, "%s{\"n\": %zu, \"regime\": \"%s\", \"T\": %zu, \"beta\": %.6g, "
                         "\"excess_nonprivate\": %.6g, \"excess_eps1\": %.6g}",
                i ? ", " : "", b->n, rg, b->T, b->beta, b->nonprivate.mean, b->eps1.mean);
    }
    repro_json_fmt(c, "]");
    repro_close(c, f);
    return 0;
}

static int report_tree(repro_ctx *c, const res_t *R, srgd_curves *v)
{
    const grid_t *pl = &R->grid;
    FILE *f = repro_open(c, "srgd_tree_vs_independent.csv");
    if (!f) return 1;
    fprintf(f, "c,T,B,beta,eps,excess_tree,se,excess_honaker,se,excess_independent,se,"
               "excess_nonprivate,z_independent_minus_tree\n");
    repro_say(c, "\ntree vs independent noise at equal privacy (eps = %g, n = %zu, p = 32, T = c "
                 "n^(1/4), %zu seeds):\n     T   tree         honaker      independent  "
                 "non-private  z = (indep - tree)/s.e.\n", pl->eps_tree, pl->n_ablation,
              pl->seeds_ablation);
    repro_json_fmt(c, ",\n  \"tree_vs_independent\": [");
    for (size_t i = 0; i < pl->ncs; i++) {
        const dpc_srgd_repro_tree_row *b = &R->tree[i];
        double m[4] = {b->tree.mean, b->honaker.mean, b->independent.mean, b->nonprivate.mean};
        put(&v->ct, (double)b->T, b->tree);
        put(&v->ch, (double)b->T, b->honaker);
        put(&v->ci, (double)b->T, b->independent);
        fprintf(f, "%g,%zu,%zu,%.6g,%g,%.8g,%.3g,%.8g,%.3g,%.8g,%.3g,%.8g,%.3g\n", b->c, b->T,
                b->B, b->beta, pl->eps_tree, m[0], b->tree.se, m[1], b->honaker.se, m[2],
                b->independent.se, m[3], b->z);
        repro_say(c, "%6zu   %-11.4g  %-11.4g  %-11.4g  %-11.4g  %.1f%s\n", b->T, m[0], m[1], m[2],
                  m[3], b->z, b->wins ? "" : "  (not significant)");
        repro_json_fmt(c, "%s{\"T\": %zu, \"tree\": %.6g, \"honaker\": %.6g, \"independent\": "
                         "%.6g, \"nonprivate\": %.6g, \"z\": %.3f, \"tree_wins\": %s}",
                i ? ", " : "", b->T, m[0], m[1], m[2], m[3], b->z, b->wins ? "true" : "false");
    }
    repro_json_fmt(c, "]");
    repro_close(c, f);
    repro_json_raw(c, "tree_beats_independent_T_ge_64", "%s",
                   R->tree_beats_independent ? "true" : "false");
    return 0;
}

static int report_baselines(repro_ctx *c, const res_t *R, srgd_curves *v)
{
    const grid_t *pl = &R->grid;
    FILE *f = repro_open(c, "srgd_baselines.csv");
    if (!f) return 1;
    fprintf(f, "eps,method,rounds,batch,lr,noise_multiplier,excess,se\n");
    repro_say(c, "\nbaselines at equal (eps, delta = 1e-6) and n = %zu, one epoch (the trainer's "
                 "lr: best of {", pl->n_ablation);
    for (size_t l = 0; l < pl->nlr; l++) repro_say(c, "%s%g", l ? ", " : "", pl->lrs[l]);
    repro_say(c, "}, tuned non-privately):\n    eps     DP-SRGD (T)     accel DP-SGD    DP-SGD "
                 "Poisson (T, lr)   DP-FTRL tree (T, lr)\n");
    repro_json_fmt(c, ",\n  \"baselines\": [");
    for (size_t e = 0; e < pl->neb; e++) {
        const dpc_srgd_repro_baseline *b = R->baselines[e];
        double eps = pl->eps_base[e];
        for (size_t a = 0; a < DPC_SRGD_REPRO_NMETHODS; a++) {
            put(&v->cb[a], eps, b[a].excess);
            fprintf(f, "%g,%s,%zu,%zu,%g,%.6g,%.8g,%.3g\n", eps, dpc_srgd_repro_method_name(a),
                    b[a].T, b[a].B, b[a].lr, b[a].noise_multiplier, b[a].excess.mean,
                    b[a].excess.se);
        }
        repro_say(c, "  %-7g %-9.4g (%3zu)  %-14.4g  %-9.4g (%zu, %g)     %-9.4g (%zu, %g)\n",
                  eps, b[0].excess.mean, b[0].T, b[1].excess.mean, b[2].excess.mean, b[2].T,
                  b[2].lr, b[3].excess.mean, b[3].T, b[3].lr);
        repro_json_fmt(c, "%s{\"eps\": %g, \"dp_srgd\": %.6g, \"dp_srgd_rounds\": %zu, "
                         "\"accel_dp_sgd\": %.6g, \"dp_sgd\": %.6g, \"dp_sgd_rounds\": %zu, "
                         "\"dp_ftrl\": %.6g, \"dp_ftrl_rounds\": %zu}",
                e ? ", " : "", eps, b[0].excess.mean, b[0].T, b[1].excess.mean,
                b[2].excess.mean, b[2].T, b[3].excess.mean, b[3].T);
    }
    repro_json_fmt(c, "]");
    repro_close(c, f);
    return 0;
}

/* tr[0], tr[1]: max_d |Delta_t(d)| of the regime A and B runs (10 points each); tr[2]: what a
 * naive bound growing with eta_t would give from the first step of the regime A run */
static int report_trace(repro_ctx *c, const res_t *R, curve tr[3])
{
    FILE *f = repro_open(c, "srgd_trace.csv");
    if (!f) return 1;
    fprintf(f, "regime,t,T,max_delta_norm,clip_fraction,noise_norm,b_norm,srg_error,risk\n");
    for (int r = 0; r < 2; r++) {
        const dpc_srgd_step_info *t = R->trace[r];
        size_t T = R->trace_T[r], stride = T > 10 ? (T + 9) / 10 : 1, m = 0;
        for (size_t s = 0; s < T; s++) {
            const dpc_srgd_step_info *i = &t[s];
            fprintf(f, "%s,%zu,%zu,%.8g,%.4g,%.8g,%.8g,%.8g,%.10g\n", r ? "B" : "A", s, T,
                    i->max_norm, i->clip_fraction, i->noise_norm, i->b_norm, i->srg_error, i->risk);
            if ((s % stride == 0 || s + 1 == T) && m < 10) {
                tr[r].x[m] = (double)(s + 1) / (double)T;
                if (r == 0) {
                    tr[2].x[m] = tr[r].x[m];
                    tr[2].y[m] = (double)(s + 1) * t[0].max_norm;
                }
                tr[r].y[m++] = i->max_norm;
            }
        }
        tr[r].n = m;
        if (r == 0) tr[2].n = m;
    }
    repro_close(c, f);
    repro_json_num(c, "regime_a_max_delta_over_first_step", R->regime_a_max_delta_over_first_step);
    return 0;
}

static void cpu_report(repro_ctx *c, const res_t *R)
{
    repro_say(c, "cpu seconds per experiment:");
    repro_json_fmt(c, ",\n  \"cpu_seconds_per_experiment\": {");
    for (size_t g = 0; g < 7; g++) {
        repro_say(c, " %s %.1f", dpc_srgd_repro_experiment_name(g), R->cpu_seconds[g]);
        repro_json_fmt(c, "%s\"%s\": %.2f", g ? ", " : "", dpc_srgd_repro_experiment_name(g),
                R->cpu_seconds[g]);
    }
    repro_json_fmt(c, "}");
    repro_say(c, "\n");
}

static void plot_rates(repro_ctx *c, const grid_t *pl, const srgd_curves *v)
{
    const curve *np = &v->np, *cp = &v->cp, *ce = &v->ce, *fit = &v->fit;
    char lab[64];
    snprintf(lab, sizeof lab, "private part (eps %g)", pl->eps_n);
    double refx[2] = {np->x[0], np->x[np->n - 1]},
           refy[2] = {np->y[0], np->y[0] * sqrt(np->x[0] / np->x[np->n - 1])};
    plot_series s1[] = {{"non-private, P2 least squares", np->x, np->y, np->se, np->n, PLOT_ERRORBARS},
                        {"non-private, P1 logistic", v->p1.x, v->p1.y, NULL, v->p1.n, PLOT_LINESPOINTS},
                        {lab, v->priv.x, v->priv.y, NULL, v->priv.n, PLOT_LINESPOINTS},
                        {"unaccelerated SRG (non-private)", v->un.x, v->un.y, NULL, v->un.n, PLOT_LINESPOINTS},
                        {"n^{-1/2}", refx, refy, NULL, 2, PLOT_LINES}};
    double rpx[2] = {cp->x[0], cp->x[cp->n - 1]},
           rpy[2] = {cp->y[0], cp->y[0] * sqrt(cp->x[cp->n - 1] / cp->x[0])};
    double rex[2] = {fit->x[0], fit->x[fit->n ? fit->n - 1 : 0]},
           rey[2] = {fit->y[0], fit->y[0] * fit->x[0] / fit->x[fit->n ? fit->n - 1 : 0]};
    plot_series s2[] = {{"private part (DP - non-DP)", cp->x, cp->y, cp->se, cp->n, PLOT_ERRORBARS},
                        {"sqrt(p)", rpx, rpy, NULL, 2, PLOT_LINES}};
    plot_series s3[] = {{"private part (DP - non-DP)", ce->x, ce->y, ce->se, ce->n, PLOT_ERRORBARS},
                        {"fitted range", fit->x, fit->y, NULL, fit->n, PLOT_POINTS},
                        {"1/eps", rex, rey, NULL, 2, PLOT_LINES}};
    plot_panel pn[] = {
        {"excess risk vs n (Regime A, T = n^{1/4})", "n", "F(y_T) - F*", 1, 1, s1, 5},
        {"private part vs dimension p", "p", "excess(DP) - excess(non-DP)", 1, 1, s2, 2},
        {"private part vs epsilon", "epsilon", "excess(DP) - excess(non-DP)", 1, 1, s3, 3}};
    repro_plot(c, "srgd", pn, 3);
}

static void plot_ablations(repro_ctx *c, const grid_t *pl, const srgd_curves *v)
{
    const curve *cb = v->cb, *tr = v->tr;
    plot_series a1[] = {{"tree", v->ct.x, v->ct.y, v->ct.se, v->ct.n, PLOT_ERRORBARS},
                        {"Honaker tree", v->ch.x, v->ch.y, NULL, pl->honaker ? v->ch.n : 0, PLOT_LINESPOINTS},
                        {"independent per-step noise", v->ci.x, v->ci.y, v->ci.se, v->ci.n, PLOT_ERRORBARS}};
    plot_series a2[] = {{"DP-SRGD", cb[0].x, cb[0].y, NULL, cb[0].n, PLOT_LINESPOINTS},
                        {"accelerated DP-SGD (Thm 5.13)", cb[1].x, cb[1].y, NULL, cb[1].n, PLOT_LINESPOINTS},
                        {"DP-SGD (trainer, Poisson)", cb[2].x, cb[2].y, NULL, cb[2].n, PLOT_LINESPOINTS},
                        {"DP-FTRL (trainer, tree)", cb[3].x, cb[3].y, NULL, cb[3].n, PLOT_LINESPOINTS}};
    plot_series a3[] = {{"Regime A (T = 16)", tr[0].x, tr[0].y, NULL, tr[0].n, PLOT_LINESPOINTS},
                        {"Regime B (T = 256)", tr[1].x, tr[1].y, NULL, tr[1].n, PLOT_LINESPOINTS},
                        {"eta_t x step-0 value (naive growth, regime A)", tr[2].x, tr[2].y, NULL,
                         tr[2].n, PLOT_LINES}};
    plot_panel pa[] = {
        {"equal privacy: tree vs independent noise", "rounds T", "F(y_T) - F*", 1, 1, a1, 3},
        {"baselines at equal (eps, delta) and n", "epsilon", "F(y_T) - F*", 1, 1, a2, 4},
        {"per-example increments stay flat (O6), eps = 1", "t / T", "max_d |Delta_t(d)|", 0, 0,
         a3, 3}};
    repro_plot(c, "srgd-ablations", pa, 3);
}

static void statements(repro_ctx *c, double cpu)
{
    size_t ny, nn;
    const char *const *yes = dpc_srgd_repro_reproduced(&ny), *const *no = dpc_srgd_repro_not_reproduced(&nn);
    repro_json_num(c, "cpu_seconds", cpu);
    repro_json_str(c, "seeds", "run s of a series uses --seed + (series offset) + s for its data "
                               "and noise (seeded mode); the offsets are in dpcorr/papers/srgd.h (the "
                               "reproduction's section)");
    repro_json_strs(c, "reproduces", yes, ny);
    repro_json_strs(c, "not_reproduced", no, nn);
    repro_say(c, "\nreproduces: the rates' shapes (n^-1/2; sqrt(p)/eps private part), acceleration, "
                 "tree vs independent noise.\ncannot reproduce: no experiments in the paper; the "
                 "literal constants cannot run. cpu %.1f s\n", cpu);
}

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int repro_srgd(repro_ctx *c)
{
    clock_t cpu0 = clock();
    dpc_srgd_repro_params p;
    dpc_srgd_repro_params_init(&p);
    p.scale = c->o->smoke ? DPC_SRGD_REPRO_SMOKE : c->o->quick ? DPC_SRGD_REPRO_QUICK : DPC_SRGD_REPRO_FULL;
    p.seed = c->o->seed;
    p.threads = sysconf(_SC_NPROCESSORS_ONLN) >= 2 ? 2 : 1;
    p.model_isa = cli_isa_for(DPC_TUNE_GEMM);
    p.noise_isa = cli_isa_for(DPC_TUNE_NOISE);
    p.cpu_clock = thread_cpu;
    dpc_error err = {0};
    size_t runs, cals;
    dpc_srgd_repro_result *R = NULL;
    srgd_curves *v = calloc(1, sizeof *v);
    int rc = 1;
    if (!v || dpc_srgd_repro_count(&p, &runs, &cals, &err)) goto out;
    repro_say(c, "\n%zu runs + %zu calibrations on P2 (least squares, sparse design, spectrum "
                 "geometric over 4 decades, |w0| = 1.8 in C = B(0, 2): Regime A; exact excess risk); "
                 "delta = 1e-6; fresh data per seed; %ld threads\n", runs, cals, (long)p.threads);
    if (dpc_srgd_repro_run(&p, &R, &err)) goto out;
    cpu_report(c, R);
    if (report_n(c, R, v) || report_priv(c, R, v) || report_regimes(c, R) || report_tree(c, R, v) ||
        report_baselines(c, R, v) || report_trace(c, R, v->tr))
        goto out;
    plot_rates(c, &R->grid, v);
    plot_ablations(c, &R->grid, v);
    statements(c, (double)(clock() - cpu0) / CLOCKS_PER_SEC);
    rc = 0;
out:
    if (err.status) fprintf(stderr, "dpcorr repro: srgd run failed: %s\n", err.msg);
    else if (rc && !v) fprintf(stderr, "dpcorr repro: out of memory\n");
    dpc_srgd_repro_result_free(R);
    free(v);
    return rc;
}
