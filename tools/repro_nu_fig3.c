/* repro_nu_fig3.c — nu-DP-FTRL Figure 3: the Theorem 3.1 / E.1 bound on F_inf against the
 * condition number kappa = L/mu for DP-SGD, nu-DP-FTRL (nu = eta mu) and "Optimized", at
 * L = G = 1, sigma_sgd = 0 (eta unstated in the paper: we use eta = 1/L), plus simulations of
 * the log-cosh problem F = L th^2/2 - (L - mu) log cosh th (F'' in [mu, L], mu at the optimum)
 * that must lie below the bounds. */
#include "repro.h"
#include "plot.h"

#include <math.h>
#include <stdlib.h>

typedef struct fig3 {
    size_t nk, tmax;
    double kap[13], vs[13], vn[13], vo[13], vo0[13]; /* bounds per kappa */
    double sy[4], sye[4];                            /* simulated gaps (kappa 10, 100 x SGD, nu) */
    int below;
} fig3;

/* The library's setup of the log-cosh problem at kappa = 1/mu (L = G = 1, eta = 1/L, d = 1;
 * rho and, for a simulation, its steps): nu, and with b the noise std, burn-in (20 correlation
 * times) and the beta truncated at a 1e-10 tail. */
static dpc_status fig3_setup(dpc_nu_setup *su, double mu, double rho, size_t steps,
                             const dpc_theory_beta *b, dpc_error *err)
{
    dpc_nu_setup_params sp;
    dpc_nu_setup_params_init(&sp);
    sp.problem = DPC_NU_PROBLEM_SC;
    sp.model = DPC_SIM_LOGCOSH;
    sp.d = 1;
    sp.mu = mu;
    sp.L = 1.0;
    sp.eta = 1.0;
    sp.rho = rho;
    sp.steps = steps;
    sp.burn_in_scale = 20.0;
    sp.tail = 1e-10;
    return dpc_nu_setup_make(su, &sp, b, err);
}

/* The bounds of DP-SGD, nu-DP-FTRL and Optimized over the kappa grid. */
static int fig3_bounds(repro_ctx *c, fig3 *g)
{
    FILE *f = repro_open(c, "fig3_bound.csv");
    if (!f) return 1;
    fprintf(f, "kappa,mu,bound_dpsgd,bound_nu_dpftrl,bound_optimized,bound_optimized_circle,ratio_sgd_over_nu\n");
    repro_say(c, "\nFigure 3 (Theorem 3.1/E.1 bound on F_inf, L = G = 1, eta = 1/L, rho = 1/2, d = 1,\n"
                 "sigma_sgd = 0; our constant convention, see doc/theory.md; multipliers |t| <= %zu):\n"
                 "  kappa      DP-SGD        nu-DP-FTRL    Optimized     SGD/nu\n", g->tmax);
    dpc_error err = {0};
    for (size_t i = 0; i < g->nk; i++) {
        g->kap[i] = pow(10.0, 3.0 * (double)i / (double)(g->nk - 1));
        double mu = 1.0 / g->kap[i];
        dpc_theory_sc p = {mu, 1.0, 1.0, 0.5, 1.0, 0.0, 1, g->tmax};
        dpc_nu_setup su; /* Theorem 2.2's nu = eta mu (eta = 1), the library's rule and clamp */
        if (fig3_setup(&su, mu, 0.5, 0, NULL, &err)) {
            fprintf(stderr, "dpcorr repro: %s\n", err.msg);
            repro_close(c, f);
            return 1;
        }
        dpc_theory_beta bs = dpc_theory_beta_sgd(), bn = dpc_theory_beta_nu(su.nu);
        dpc_nu_setup_free(&su);
        dpc_theory_sc_result rs, rn, ro, ro0;
        if (dpc_theory_sc_bound(&p, &bs, &rs, &err) || dpc_theory_sc_bound(&p, &bn, &rn, &err) ||
            dpc_theory_sc_optimized(&p, &ro, &err)) {
            fprintf(stderr, "dpcorr repro: %s\n", err.msg);
            repro_close(c, f);
            return 1;
        }
        p.tmax = 0;
        if (dpc_theory_sc_optimized(&p, &ro0, &err)) return 1;
        g->vs[i] = rs.value;
        g->vn[i] = rn.value;
        g->vo[i] = ro.value;
        g->vo0[i] = ro0.value;
        fprintf(f, "%.6g,%.6g,%.8g,%.8g,%.8g,%.8g,%.6g\n", g->kap[i], mu, g->vs[i], g->vn[i], g->vo[i],
                g->vo0[i], g->vs[i] / g->vn[i]);
        repro_say(c, "  %-9.4g  %-12.6g  %-12.6g  %-12.6g  %.3f\n", g->kap[i], g->vs[i], g->vn[i], g->vo[i],
                  g->vs[i] / g->vn[i]);
    }
    repro_close(c, f);
    return 0;
}

/* One simulation of the log-cosh toy problem: kappa skap, mechanism m (0 SGD, 1 nu). */
static int fig3_sim(repro_ctx *c, fig3 *g, FILE *f, double skap, int m, int k, double rho_s, size_t i)
{
    dpc_error err = {0};
    double mu = 1.0 / skap;
    dpc_theory_beta b = m ? dpc_theory_beta_nu(mu) : dpc_theory_beta_sgd();
    dpc_theory_sc p = {mu, 1.0, 1.0, 0.5, 1.0, 0.0, 1, g->tmax};
    dpc_theory_sc_result br;
    if (dpc_theory_sc_bound(&p, &b, &br, &err)) return 1;
    dpc_nu_setup su; /* noise std at rho_s, burn-in and truncation: the library's setup */
    size_t steps = c->o->smoke ? 20000 : c->o->quick ? 200000 : 2000000;
    if (fig3_setup(&su, mu, rho_s, steps, &b, &err)) {
        fprintf(stderr, "dpcorr repro: %s\n", err.msg);
        return 1;
    }
    su.sim.seed = c->o->seed + 300 + (uint64_t)(2 * k + m);
    dpc_sim_result r;
    int bad = dpc_sim_run(&su.sim, &r, &err);
    dpc_nu_setup_free(&su);
    if (bad) {
        fprintf(stderr, "dpcorr repro: %s\n", err.msg);
        return 1;
    }
    g->sy[i] = r.gap;
    g->sye[i] = r.gap_stderr;
    br.value *= 0.5 / rho_s;
    if (r.gap > br.value) g->below = 0;
    fprintf(f, "%g,%s,%.8g,%.3g,%.8g,%zu,%llu\n", skap, m ? "nu-DP-FTRL" : "DP-SGD", r.gap, r.gap_stderr,
            br.value, r.steps, (unsigned long long)r.seed);
    repro_say(c, "  simulation log-cosh (rho = %g) kappa=%g %-11s F-F* = %.5g +- %.2g  <= bound %.5g\n", rho_s, skap,
              m ? "nu-DP-FTRL" : "DP-SGD", r.gap, r.gap_stderr, br.value);
    return 0;
}

/* The plot: the bounds, and the simulations at the rho = 1/2 scale (x 100). */
static void fig3_plot(repro_ctx *c, fig3 *g, const double *skap, double rho_s)
{
    double sc2 = rho_s / 0.5, *sy = g->sy, *sye = g->sye;
    double sxs[2] = {skap[0], skap[1]}, sgs[2] = {sc2 * sy[0], sc2 * sy[2]}, sge[2] = {sc2 * sye[0], sc2 * sye[2]};
    double sxn[2] = {skap[0], skap[1]}, sgn[2] = {sc2 * sy[1], sc2 * sy[3]}, sgne[2] = {sc2 * sye[1], sc2 * sye[3]};
    plot_series ps[] = {{"bound: DP-SGD", g->kap, g->vs, NULL, g->nk, PLOT_LINESPOINTS},
                        {"bound: nu-DP-FTRL (nu = eta mu)", g->kap, g->vn, NULL, g->nk, PLOT_LINESPOINTS},
                        {"bound: Optimized DP-FTRL", g->kap, g->vo, NULL, g->nk, PLOT_LINESPOINTS},
                        {"simulation (log-cosh, rho=50, x100): DP-SGD", sxs, sgs, sge, 2, PLOT_ERRORBARS},
                        {"simulation (log-cosh, rho=50, x100): nu-DP-FTRL", sxn, sgn, sgne, 2, PLOT_ERRORBARS}};
    plot_panel pn = {"Theorem 3.1 bound on F_{inf} (L = G = 1, sigma_{sgd} = 0)", "condition number kappa = L/mu",
                     "bound on F_{inf}", 1, 1, ps, 5};
    repro_plot(c, "nu-fig3", &pn, 1);
}

int repro_nu_fig3(repro_ctx *c)
{
    int quick = c->o->quick;
    fig3 g;
    g.nk = quick ? 7 : 13;
    g.tmax = quick ? 2 : 6;
    g.below = 1;
    if (fig3_bounds(c, &g)) return 1;
    /* simulations: log-cosh toy problem below the bound */
    const double skap[] = {10.0, 100.0};
    FILE *f = repro_open(c, "fig3_sim.csv");
    if (!f) return 1;
    fprintf(f, "kappa,mechanism,sim_gap,se,bound,steps,seed\n");
    /* the simulations use rho_s = 50 (noise std 0.1 gamma): at rho = 1/2 the iterates live where
     * log cosh is linear (|theta| >> 1) and the curvature is L, not mu; the bound is linear in
     * 1/rho, so it is rescaled by 0.5/rho_s */
    const double rho_s = 50.0;
    for (int k = 0; k < 2; k++)
        for (int m = 0; m < 2; m++)
            if (fig3_sim(c, &g, f, skap[k], m, k, rho_s, (size_t)(2 * k + m))) {
                repro_close(c, f);
                return 1;
            }
    repro_close(c, f);
    size_t nk = g.nk;
    double gap_lo = g.vs[nk / 2] / g.vn[nk / 2], gap_hi = g.vs[nk - 1] / g.vn[nk - 1];
    repro_json_raw(c, "ordering_sgd_gt_nu_gt_optimized", "%s",
                   (g.vs[nk - 1] > g.vn[nk - 1] && g.vn[nk - 1] > g.vo[nk - 1]) ? "true" : "false");
    repro_json_num(c, "ratio_sgd_over_nu_mid_kappa", gap_lo);
    repro_json_num(c, "ratio_sgd_over_nu_max_kappa", gap_hi);
    repro_json_num(c, "bound_sgd_max_kappa", g.vs[nk - 1]);
    repro_json_num(c, "bound_nu_max_kappa", g.vn[nk - 1]);
    repro_json_num(c, "bound_optimized_max_kappa", g.vo[nk - 1]);
    repro_json_raw(c, "simulations_below_bound", "%s", g.below ? "true" : "false");
    fig3_plot(c, &g, skap, rho_s);
    const char *yes[] = {"Figure 3: ordering DP-SGD > nu-DP-FTRL > Optimized, the multiplicative gap widening "
                         "with kappa, Optimized growing slowest (shape; the paper prints no numbers)"};
    const char *no[] = {"absolute values: eta is not stated and the paper's constants (eq. 10 vs Sec. E.1) "
                        "disagree; we use eta = 1/L and the constant convention of doc/theory.md",
                        "the paper solves an SOCP on a uniform k = 1000 grid; we minimise the same bound over "
                        "symmetric Zames-Falb multipliers with a graded quadrature (a valid, possibly looser, bound)"};
    repro_json_strs(c, "reproduces", yes, 1);
    repro_json_strs(c, "not_reproduced", no, 2);
    repro_say(c, "\nreproduces: Figure 3 qualitatively (ordering and growth; no numbers in the paper).\n"
                 "cannot reproduce: absolute values (eta unstated, inconsistent constants in eq. 10 / E.1).\n");
    return 0;
}
