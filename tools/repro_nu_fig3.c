/* repro_nu_fig3.c — nu-DP-FTRL Figure 3: the Theorem 3.1 / E.1 bound on F_inf against the
 * condition number for DP-SGD, nu-DP-FTRL and "Optimized", and log-cosh simulations below the
 * bounds. The grid, bounds, simulations and checks are the library's (dpc_nu_fig3_run,
 * dpcorr/papers/nu_repro.h); this file writes them. */
#include "repro.h"
#include "plot.h"

#include <math.h>
#include <stdlib.h>

/* The bounds over the kappa grid: fig3_bound.csv and the table. */
static int fig3_bounds(repro_ctx *c, const dpc_nu_fig3_result *g)
{
    FILE *f = repro_open(c, "fig3_bound.csv");
    if (!f) return 1;
    fprintf(f, "kappa,mu,bound_dpsgd,bound_nu_dpftrl,bound_optimized,bound_optimized_circle,ratio_sgd_over_nu\n");
    repro_say(c, "\nFigure 3 (Theorem 3.1/E.1 bound on F_inf, L = G = 1, eta = 1/L, rho = 1/2, d = 1,\n"
                 "sigma_sgd = 0; our constant convention, see doc/theory.md; multipliers |t| <= %zu):\n"
                 "  kappa      DP-SGD        nu-DP-FTRL    Optimized     SGD/nu\n", g->tmax);
    for (size_t i = 0; i < g->nk; i++) {
        double vs = g->bound_sgd[i], vn = g->bound_nu[i], vo = g->bound_opt[i];
        fprintf(f, "%.6g,%.6g,%.8g,%.8g,%.8g,%.8g,%.6g\n", g->kappa[i], g->mu[i], vs, vn, vo,
                g->bound_opt0[i], vs / vn);
        repro_say(c, "  %-9.4g  %-12.6g  %-12.6g  %-12.6g  %.3f\n", g->kappa[i], vs, vn, vo, vs / vn);
    }
    repro_close(c, f);
    return 0;
}

/* The log-cosh simulations: fig3_sim.csv and their lines. */
static int fig3_sims(repro_ctx *c, const dpc_nu_fig3_result *g)
{
    FILE *f = repro_open(c, "fig3_sim.csv");
    if (!f) return 1;
    fprintf(f, "kappa,mechanism,sim_gap,se,bound,steps,seed\n");
    for (int i = 0; i < 4; i++) {
        const dpc_nu_fig3_sim *s = &g->sims[i];
        const char *name = s->mech ? "nu-DP-FTRL" : "DP-SGD";
        fprintf(f, "%g,%s,%.8g,%.3g,%.8g,%zu,%llu\n", s->kappa, name, s->gap, s->se, s->bound, s->steps,
                (unsigned long long)s->seed);
        repro_say(c, "  simulation log-cosh (rho = %g) kappa=%g %-11s F-F* = %.5g +- %.2g  <= bound %.5g\n", g->rho_sim,
                  s->kappa, name, s->gap, s->se, s->bound);
    }
    repro_close(c, f);
    return 0;
}

/* The plot: the bounds, and the simulations at the rho = 1/2 scale (x 100). */
static void fig3_plot(repro_ctx *c, const dpc_nu_fig3_result *g)
{
    double sc2 = g->rho_sim / 0.5, skap[2] = {g->sims[0].kappa, g->sims[2].kappa}, sy[4], sye[4];
    for (int i = 0; i < 4; i++) sy[i] = g->sims[i].gap, sye[i] = g->sims[i].se;
    double sxs[2] = {skap[0], skap[1]}, sgs[2] = {sc2 * sy[0], sc2 * sy[2]}, sge[2] = {sc2 * sye[0], sc2 * sye[2]};
    double sxn[2] = {skap[0], skap[1]}, sgn[2] = {sc2 * sy[1], sc2 * sy[3]}, sgne[2] = {sc2 * sye[1], sc2 * sye[3]};
    plot_series ps[] = {{"bound: DP-SGD", g->kappa, g->bound_sgd, NULL, g->nk, PLOT_LINESPOINTS},
                        {"bound: nu-DP-FTRL (nu = eta mu)", g->kappa, g->bound_nu, NULL, g->nk, PLOT_LINESPOINTS},
                        {"bound: Optimized DP-FTRL", g->kappa, g->bound_opt, NULL, g->nk, PLOT_LINESPOINTS},
                        {"simulation (log-cosh, rho=50, x100): DP-SGD", sxs, sgs, sge, 2, PLOT_ERRORBARS},
                        {"simulation (log-cosh, rho=50, x100): nu-DP-FTRL", sxn, sgn, sgne, 2, PLOT_ERRORBARS}};
    plot_panel pn = {"Theorem 3.1 bound on F_{inf} (L = G = 1, sigma_{sgd} = 0)", "condition number kappa = L/mu",
                     "bound on F_{inf}", 1, 1, ps, 5};
    repro_plot(c, "nu-fig3", &pn, 1);
}

int repro_nu_fig3(repro_ctx *c)
{
    dpc_nu_repro_params p;
    dpc_nu_repro_params_init(&p);
    p.scale = c->o->smoke ? DPC_NU_REPRO_SMOKE : c->o->quick ? DPC_NU_REPRO_QUICK : DPC_NU_REPRO_FULL;
    p.seed = c->o->seed;
    dpc_nu_fig3_result *g = NULL;
    dpc_error err = {0};
    if (dpc_nu_fig3_run(&p, &g, &err)) {
        fprintf(stderr, "dpcorr repro: %s\n", err.msg);
        return 1;
    }
    if (fig3_bounds(c, g) || fig3_sims(c, g)) {
        dpc_nu_fig3_free(g);
        return 1;
    }
    size_t nk = g->nk;
    repro_json_raw(c, "ordering_sgd_gt_nu_gt_optimized", "%s", g->ordering ? "true" : "false");
    repro_json_num(c, "ratio_sgd_over_nu_mid_kappa", g->ratio_mid);
    repro_json_num(c, "ratio_sgd_over_nu_max_kappa", g->ratio_max);
    repro_json_num(c, "bound_sgd_max_kappa", g->bound_sgd[nk - 1]);
    repro_json_num(c, "bound_nu_max_kappa", g->bound_nu[nk - 1]);
    repro_json_num(c, "bound_optimized_max_kappa", g->bound_opt[nk - 1]);
    repro_json_raw(c, "simulations_below_bound", "%s", g->below ? "true" : "false");
    fig3_plot(c, g);
    repro_json_strs(c, "reproduces", g->claims.reproduces, g->claims.n_reproduces);
    repro_json_strs(c, "not_reproduced", g->claims.not_reproduced, g->claims.n_not_reproduced);
    repro_say(c, "\nreproduces: Figure 3 qualitatively (ordering and growth; no numbers in the paper).\n"
                 "cannot reproduce: absolute values (eta unstated, inconsistent constants in eq. 10 / E.1).\n");
    dpc_nu_fig3_free(g);
    return 0;
}
