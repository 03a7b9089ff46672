/* repro_nu_fig1.c — nu-DP-FTRL Figure 1 (mean estimation, Theorem 2.1): the ratio R(eta) in
 * closed form and by simulation, beta*_t, and |B*(w)|^2. The curves, simulations and checks are
 * the library's (dpc_nu_fig1_run, dpcorr/papers/nu_repro.h); this file writes them. */
#include "repro.h"
#include "plot.h"

#include <math.h>
#include <stdlib.h>

enum { NR = DPC_NU_FIG1_RATIO, NS = DPC_NU_FIG1_SIMS, NT = DPC_NU_FIG1_BETA, NW = DPC_NU_FIG1_OMEGA };

/* The simulations at the check points: fig1_sim.csv, their lines and the JSON array. */
static int fig1_sims(repro_ctx *c, const dpc_nu_fig1_result *r)
{
    FILE *f = repro_open(c, "fig1_sim.csv");
    if (!f) return 1;
    fprintf(f, "eta,sim_ftrl,se_ftrl,theory_ftrl,sim_sgd,se_sgd,theory_sgd,ratio_sim,ratio_se,ratio_theory,steps,burn_in,seed\n");
    repro_say(c, "\nFigure 1 (mean estimation, rho = 1/2, G = 1, sigma_sgd = 0; E delta^2 = 2 x gap):\n");
    repro_say(c, "  eta    sim nu=eta (+-se)         theory       sim SGD (+-se)         theory    ratio sim      closed form\n");
    char buf[1024];
    int n = 0;
    for (int i = 0; i < NS; i++) {
        const dpc_nu_fig1_sim *s = &r->sims[i];
        const dpc_nu_sim_point *po = &s->opt, *ps = &s->sgd;
        fprintf(f, "%g,%.8g,%.3g,%.8g,%.8g,%.3g,%.8g,%.6g,%.3g,%.6g,%zu,%zu,%llu\n", s->eta, po->mean, po->se,
                po->theory, ps->mean, ps->se, ps->theory, s->ratio, s->ratio_se, s->ratio_theory, po->steps,
                po->burn_in, (unsigned long long)po->seed);
        repro_say(c, "  %-5g  %.6g (+-%.2g)   %.6g   %.6g (+-%.2g)   %.6g   %.4f+-%.4f   %.4f\n", s->eta, po->mean,
                  po->se, po->theory, ps->mean, ps->se, ps->theory, s->ratio, s->ratio_se, s->ratio_theory);
        n += snprintf(buf + n, sizeof buf - (size_t)n,
                      "%s{\"eta\": %g, \"sim\": %.8g, \"se\": %.3g, \"theory\": %.8g, \"sim_over_theory\": %.6f, "
                      "\"ratio_sim\": %.6g, \"ratio_theory\": %.6g}",
                      i ? ", " : "", s->eta, po->mean, po->se, po->theory, po->mean / po->theory, s->ratio,
                      s->ratio_theory);
    }
    repro_close(c, f);
    repro_json_raw(c, "mean_estimation", "[%s]", buf);
    repro_json_num(c, "max_rel_dev_sim_vs_theory", r->max_rel_dev);
    return 0;
}

/* The closed-form ratio, beta*_t and |B*(w)|^2 CSVs. */
static int fig1_curves(repro_ctx *c, const dpc_nu_fig1_result *r, int part)
{
    FILE *f = repro_open(c, part == 0 ? "fig1_ratio.csv" : part == 1 ? "fig1_beta.csv" : "fig1_spectrum.csv");
    if (!f) return 1;
    if (part == 0) {
        fprintf(f, "eta,ratio_closed_form,ftrl_opt,sgd\n");
        for (int i = 0; i < NR; i++)
            fprintf(f, "%.10g,%.10g,%.10g,%.10g\n", r->eta[i], r->ratio[i], r->ftrl_opt[i], r->sgd[i]);
    } else if (part == 1) {
        fprintf(f, "t,beta_eta0.1,beta_eta0.01\n");
        for (int t = 0; t < NT; t++) fprintf(f, "%d,%.10g,%.10g\n", t, r->beta[0][t], r->beta[1][t]);
    } else {
        fprintf(f, "omega,B2_eta0.1,B2_eta0.01\n");
        for (int i = 0; i < NW; i++)
            fprintf(f, "%.10g,%.10g,%.10g\n", r->omega[i], r->spectrum[0][i], r->spectrum[1][i]);
    }
    repro_close(c, f);
    return 0;
}

static void fig1_plot(repro_ctx *c, const dpc_nu_fig1_result *r)
{
    double sx[NS], sr[NS], sre[NS];
    for (int i = 0; i < NS; i++) sx[i] = r->sims[i].eta, sr[i] = r->sims[i].ratio, sre[i] = r->sims[i].ratio_se;
    plot_series pa[] = {{"closed form R(eta) = eta(2-eta)(2K(1-eta)/pi)^2", r->eta, r->ratio, NULL, NR, PLOT_LINES},
                        {"simulation (nu = eta vs DP-SGD)", sx, sr, sre, NS, PLOT_ERRORBARS}};
    plot_series pb[] = {{"beta*_t, eta = 0.1", r->t, r->beta[0], NULL, NT, PLOT_LINESPOINTS},
                        {"beta*_t, eta = 0.01", r->t, r->beta[1], NULL, NT, PLOT_LINESPOINTS}};
    plot_series pc[] = {{"|B*(w)|^2, eta = 0.1", r->omega, r->spectrum[0], NULL, NW, PLOT_LINES},
                        {"|B*(w)|^2, eta = 0.01", r->omega, r->spectrum[1], NULL, NW, PLOT_LINES}};
    plot_panel panels[] = {
        {"F_{inf}(optimal DP-FTRL) / F_{inf}(DP-SGD)", "learning rate eta", "ratio R(eta)", 1, 0, pa, 2},
        {"optimal coefficients (time domain)", "t", "beta*_t", 0, 0, pb, 2},
        {"optimal coefficients (frequency domain)", "omega", "|B*(omega)|^2", 0, 0, pc, 2}};
    repro_plot(c, "nu-fig1", panels, 3);
}

int repro_nu_fig1(repro_ctx *c)
{
    dpc_nu_repro_params p;
    dpc_nu_repro_params_init(&p);
    p.scale = c->o->smoke ? DPC_NU_REPRO_SMOKE : c->o->quick ? DPC_NU_REPRO_QUICK : DPC_NU_REPRO_FULL;
    p.seed = c->o->seed;
    dpc_nu_fig1_result *r = NULL;
    dpc_error err = {0};
    if (dpc_nu_fig1_run(&p, &r, &err)) {
        fprintf(stderr, "dpcorr repro: %s\n", err.msg);
        return 1;
    }
    int bad = fig1_curves(c, r, 0) || fig1_sims(c, r) || fig1_curves(c, r, 1) || fig1_curves(c, r, 2);
    if (!bad) {
        fig1_plot(c, r);
        repro_json_strs(c, "reproduces", r->claims.reproduces, r->claims.n_reproduces);
        repro_json_strs(c, "not_reproduced", r->claims.not_reproduced, r->claims.n_not_reproduced);
        repro_say(c, "\nreproduces: Figure 1 (all three panels) and the note's mean-estimation table.\n"
                     "cannot reproduce: the caption's 'eta -> 1' claim (R(1) = 1; the curve is symmetric in\n"
                     "eta <-> 2 - eta); the paper gives no numbers for Figure 1, so the comparison is in shape.\n");
    }
    dpc_nu_fig1_free(r);
    return bad;
}
