/* repro_nu_fig2.c — nu-DP-FTRL Figure 2: linear regression, Noisy-SGD vs nu-Noisy-FTRL
 * (nu = eta mu), error E||theta - theta*||_H^2 against d, against d_eff (lambda_k = k^-alpha)
 * and against eta: exact LTI theory (V0), fixed-design simulation (must match V0) and random
 * Gaussian design simulation (must lie between V0 and the sandwich bound), with the log-log
 * slopes beside the paper's (1.00, 0.18, 0.94, 2.03, 1.27). G = 1, rho = 1/2, sigma_sgd = 0. */
#include "repro.h"
#include "plot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct f2cfg {
    size_t d0;
    double a0, eta0;
    size_t ds[5], nd;
    double as[4];
    size_t na;
    double etas[5];
    size_t neta;
    double mult;     /* measured steps = mult / nu, clamped */
    size_t max_steps;
} f2cfg;

static const f2cfg FULL = {128, 1.0, 0.02, {16, 32, 64, 128, 256}, 5, {0.4, 0.6, 0.8, 1.0}, 4,
                           {0.005, 0.01, 0.02, 0.04, 0.08}, 5, 128.0, (size_t)1 << 20};
static const f2cfg QUICK = {32, 1.0, 0.04, {8, 16, 32, 64}, 4, {0.4, 0.6, 0.8, 1.0}, 4,
                            {0.02, 0.04, 0.08, 0.16}, 4, 192.0, (size_t)1 << 18};

static const f2cfg SMOKE = {16, 1.0, 0.08, {8, 16}, 2, {0.6, 1.0}, 2, {0.04, 0.08}, 2, 16.0, (size_t)1 << 12};

typedef struct f2pt {
    size_t d;
    double a, eta, nu, deff;
    double th[2], sf[2], sfe[2], sr[2], sre[2]; /* [0] SGD, [1] nu-FTRL */
    double sandwich;
    size_t steps, burn;
} f2pt;

enum { MAXPT = 16 };

static int point(repro_ctx *c, const f2cfg *cf, size_t d, double a, double eta, f2pt *cache, size_t *ncache,
                 f2pt **out, FILE *csv, const char *sweep)
{
    for (size_t i = 0; i < *ncache; i++)
        if (cache[i].d == d && cache[i].a == a && cache[i].eta == eta) {
            *out = &cache[i];
            return 0;
        }
    if (*ncache >= MAXPT) return 1;
    f2pt *p = &cache[(*ncache)++];
    *out = p;
    /* the library's setup: the spectrum k^-a, nu = eta lambda_min (Theorem 2.2), burn-in 10
     * correlation times (dpc_nu_setup_make, as `dpcorr theory`) */
    dpc_nu_setup_params sp;
    dpc_nu_setup_params_init(&sp);
    sp.d = d;
    sp.alpha = a;
    sp.eta = eta;
    dpc_nu_setup su;
    dpc_error err = {0};
    if (dpc_nu_setup_make(&su, &sp, NULL, &err)) {
        fprintf(stderr, "dpcorr repro: %s\n", err.msg);
        return 1;
    }
    const double *lam = su.lambda;
    double tr = 0;
    for (size_t j = 0; j < d; j++) tr += lam[j];
    p->d = d;
    p->a = a;
    p->eta = eta;
    p->nu = su.nu;
    p->deff = tr / lam[0];
    double mstep = cf->mult / p->nu;
    size_t steps = mstep > (double)cf->max_steps ? cf->max_steps : (size_t)mstep;
    steps = (steps / 32 + 1) * 32;
    sp.steps = steps;
    p->steps = steps;
    for (int m = 0; m < 2; m++) {
        dpc_theory_beta b = m ? dpc_theory_beta_nu(p->nu) : dpc_theory_beta_sgd();
        nu_sim_point pf, pq;
        uint64_t salt = 1000 + 10 * (uint64_t)(*ncache) + (uint64_t)m;
        sp.model = DPC_SIM_FIXED;
        int bad = nu_simulate(c, &sp, &b, salt, &pf);
        sp.model = DPC_SIM_RANDOM;
        if (bad || nu_simulate(c, &sp, &b, salt + 5, &pq)) {
            dpc_nu_setup_free(&su);
            return 1;
        }
        p->burn = pf.burn_in;
        p->th[m] = pf.theory;
        p->sf[m] = pf.mean;
        p->sfe[m] = pf.se;
        p->sr[m] = pq.mean;
        p->sre[m] = pq.se;
        if (m == 1) {
            dpc_theory_bounds bd;
            if (dpc_theory_lti_bounds(&su.problem, &b, tr + 2 * lam[0], 3.0, &bd, &err)) {
                fprintf(stderr, "dpcorr repro: %s\n", err.msg);
                dpc_nu_setup_free(&su);
                return 1;
            }
            p->sandwich = bd.sandwich_upper;
        }
        fprintf(csv, "%s,%zu,%g,%g,%.6g,%.6g,%s,%.8g,%.8g,%.3g,%.8g,%.3g,%.8g,%zu,%zu,%llu\n", sweep, d, a, eta, p->nu,
                p->deff, m ? "nu-Noisy-FTRL" : "Noisy-SGD", pf.theory, pf.mean, pf.se, pq.mean, pq.se,
                m ? p->sandwich : NAN, steps, pf.burn_in, (unsigned long long)pf.seed);
    }
    repro_say(c, "  d=%-4zu a=%-4g eta=%-6g  SGD %.5g | fixed %.5g (%+.2f%%) random %.5g   FTRL %.5g | fixed %.5g (%+.2f%%) random %.5g (sandwich %.4g)\n",
              d, a, eta, p->th[0], p->sf[0], 100 * (p->sf[0] / p->th[0] - 1), p->sr[0], p->th[1], p->sf[1],
              100 * (p->sf[1] / p->th[1] - 1), p->sr[1], p->sandwich);
    dpc_nu_setup_free(&su);
    return 0;
}

/* The three sweeps (d, alpha -> d_eff, eta): x values, theory and simulated errors. */
typedef struct f2sweeps {
    double x[3][5];
    size_t ns[3];
    f2pt *pt[3][5];
    double y[3][2][5], yf[3][2][5], yr[3][2][5]; /* theory, fixed design, random design */
} f2sweeps;

static void fig2_collect(f2sweeps *w)
{
    for (int s = 0; s < 3; s++)
        for (size_t i = 0; i < w->ns[s]; i++) {
            f2pt *p = w->pt[s][i];
            w->x[s][i] = s == 0 ? (double)p->d : s == 1 ? p->deff : p->eta;
            for (int m = 0; m < 2; m++)
                w->y[s][m][i] = p->th[m], w->yf[s][m][i] = p->sf[m], w->yr[s][m][i] = p->sr[m];
        }
}

static int fig2_slopes(repro_ctx *c, const f2sweeps *w)
{
    /* quantity: sweep, mechanism, paper value */
    const struct { const char *name, *key; int sweep, mech; double paper; } Q[] = {
        {"Noisy-SGD vs d", "sgd_vs_d", 0, 0, 1.00},        {"Noisy-SGD vs d_eff", "sgd_vs_deff", 1, 0, 0.18},
        {"nu-Noisy-FTRL vs d_eff", "ftrl_vs_deff", 1, 1, 0.94}, {"nu-Noisy-FTRL vs eta", "ftrl_vs_eta", 2, 1, 2.03},
        {"Noisy-SGD vs eta", "sgd_vs_eta", 2, 0, 1.27},    {"nu-Noisy-FTRL vs d", "ftrl_vs_d", 0, 1, NAN}};
    FILE *fs = repro_open(c, "fig2_slopes.csv");
    if (!fs) return 1;
    fprintf(fs, "quantity,paper_empirical,exact_LTI,sim_fixed_design,sim_random_design\n");
    repro_say(c, "\nlog-log slopes            paper   exact LTI  sim fixed  sim random\n");
    char jb[2048];
    int jn = 0;
    for (size_t q = 0; q < sizeof Q / sizeof Q[0]; q++) {
        int s = Q[q].sweep, m = Q[q].mech;
        double lt = repro_loglog_slope(w->x[s], w->y[s][m], w->ns[s]);
        double sf = repro_loglog_slope(w->x[s], w->yf[s][m], w->ns[s]);
        double sr = repro_loglog_slope(w->x[s], w->yr[s][m], w->ns[s]);
        fprintf(fs, "%s,%.2f,%.4f,%.4f,%.4f\n", Q[q].name, Q[q].paper, lt, sf, sr);
        repro_say(c, "  %-24s %-7.2f %-10.3f %-10.3f %.3f\n", Q[q].name, Q[q].paper, lt, sf, sr);
        char pv[32];
        if (isnan(Q[q].paper)) snprintf(pv, sizeof pv, "null");
        else snprintf(pv, sizeof pv, "%.2f", Q[q].paper);
        jn += snprintf(jb + jn, sizeof jb - (size_t)jn,
                       "%s\"%s\": {\"paper\": %s, \"lti\": %.6g, \"sim_fixed\": %.6g, \"sim_random\": %.6g}",
                       q ? ", " : "", Q[q].key, pv, lt, sf, sr);
    }
    repro_close(c, fs);
    repro_json_raw(c, "slopes", "{%s}", jb);
    return 0;
}

static void fig2_plot(repro_ctx *c, const f2sweeps *w)
{
    double e[3][2][2][5];
    for (int s = 0; s < 3; s++)
        for (int m = 0; m < 2; m++)
            for (size_t i = 0; i < w->ns[s]; i++) {
                e[s][m][0][i] = w->pt[s][i]->sfe[m];
                e[s][m][1][i] = w->pt[s][i]->sre[m];
            }
    plot_series ser[3][6];
    for (int s = 0; s < 3; s++) {
        const double *xs = w->x[s];
        size_t n = w->ns[s];
        ser[s][0] = (plot_series){"Noisy-SGD: theory (LTI)", xs, w->y[s][0], NULL, n, PLOT_LINES};
        ser[s][1] = (plot_series){"nu-Noisy-FTRL: theory (LTI)", xs, w->y[s][1], NULL, n, PLOT_LINES};
        ser[s][2] = (plot_series){"Noisy-SGD: sim fixed design", xs, w->yf[s][0], e[s][0][0], n, PLOT_ERRORBARS};
        ser[s][3] = (plot_series){"nu-Noisy-FTRL: sim fixed design", xs, w->yf[s][1], e[s][1][0], n, PLOT_ERRORBARS};
        ser[s][4] = (plot_series){"Noisy-SGD: sim random design", xs, w->yr[s][0], e[s][0][1], n, PLOT_LINESPOINTS};
        ser[s][5] = (plot_series){"nu-Noisy-FTRL: sim random design", xs, w->yr[s][1], e[s][1][1], n, PLOT_LINESPOINTS};
    }
    plot_panel pn[3] = {{"error vs dimension (lambda_k = 1/k)", "dimension d", "E||theta - theta*||_H^2", 1, 1, ser[0], 6},
                        {"error vs effective dimension (alpha sweep)", "d_{eff} = Tr H / ||H||", "E||theta - theta*||_H^2", 1, 1, ser[1], 6},
                        {"error vs learning rate", "learning rate eta", "E||theta - theta*||_H^2", 1, 1, ser[2], 6}};
    repro_plot(c, "nu-fig2", pn, 3);
}

/* Fixed design vs V0 and random design inside [V0, sandwich], over every point. */
static void fig2_checks(repro_ctx *c, const f2cfg *cf, const f2pt *cache, size_t nc)
{
    double worst = 0;
    int inside = 0, total = 0;
    for (size_t i = 0; i < nc; i++) {
        for (int m = 0; m < 2; m++) {
            double dev = fabs(cache[i].sf[m] / cache[i].th[m] - 1);
            if (dev > worst) worst = dev;
        }
        total++;
        if (cache[i].sr[1] >= cache[i].th[1] - 3 * cache[i].sre[1] && cache[i].sr[1] <= cache[i].sandwich) inside++;
    }
    repro_json_num(c, "max_rel_dev_fixed_design_vs_V0", worst);
    repro_json_raw(c, "random_design_within_sandwich", "{\"inside\": %d, \"points\": %d}", inside, total);
    repro_json_raw(c, "config", "{\"d0\": %zu, \"alpha0\": %g, \"eta0\": %g, \"points\": %zu}", cf->d0, cf->a0, cf->eta0, nc);
    repro_say(c, "fixed design vs V0: max deviation %.2f%%; random design in [V0, sandwich]: %d of %d points\n",
              100 * worst, inside, total);
    repro_say(c, "The paper's slopes are empirical, from random-design runs with unstated rho, sigma_sgd and\n"
                 "ranges; the exact LTI slopes differ because random design adds terms growing with eta Tr[H]\n"
                 "(note 5.3.2): 'that these LTI slopes differ from the paper's empirical ones is expected'.\n");
}

int repro_nu_fig2(repro_ctx *c)
{
    const f2cfg *cf = c->o->smoke ? &SMOKE : c->o->quick ? &QUICK : &FULL;
    f2pt cache[MAXPT];
    size_t nc = 0;
    f2sweeps w;
    memset(&w, 0, sizeof w);
    w.ns[0] = cf->nd, w.ns[1] = cf->na, w.ns[2] = cf->neta;
    FILE *csv = repro_open(c, "fig2_points.csv");
    if (!csv) return 1;
    fprintf(csv, "sweep,d,alpha,eta,nu,d_eff,mechanism,theory_V0,sim_fixed,se_fixed,sim_random,se_random,sandwich_upper,steps,burn_in,seed\n");
    repro_say(c, "\nFigure 2 (G = 1, rho = 1/2, sigma_sgd = 0, nu = eta lambda_min; base d = %zu, alpha = %g, eta = %g):\n",
              cf->d0, cf->a0, cf->eta0);
    int bad = 0;
    for (size_t i = 0; i < cf->nd && !bad; i++)
        bad = point(c, cf, cf->ds[i], cf->a0, cf->eta0, cache, &nc, &w.pt[0][i], csv, "d");
    for (size_t i = 0; i < cf->na && !bad; i++)
        bad = point(c, cf, cf->d0, cf->as[i], cf->eta0, cache, &nc, &w.pt[1][i], csv, "alpha");
    for (size_t i = 0; i < cf->neta && !bad; i++)
        bad = point(c, cf, cf->d0, cf->a0, cf->etas[i], cache, &nc, &w.pt[2][i], csv, "eta");
    repro_close(c, csv);
    if (bad) return 1;
    fig2_collect(&w);
    if (fig2_slopes(c, &w)) return 1;
    fig2_checks(c, cf, cache, nc);
    fig2_plot(c, &w);
    const char *yes[] = {"Figure 2: the three sweeps (d, d_eff, eta) for Noisy-SGD and nu-Noisy-FTRL, theory and "
                         "simulation; Noisy-SGD slope vs d = 1",
                         "note 5.3.2 V0 table (fixed design matches V0; random design between V0 and the sandwich)"};
    const char *no[] = {"the paper's empirical slopes 0.18, 0.94, 2.03, 1.27: rho, sigma_sgd, nu, the d and eta "
                        "ranges, T, burn-in and seeds are unstated; our exact LTI and simulated slopes are printed "
                        "beside them and differ as expected (note 5.3.2, 10.3)"};
    repro_json_strs(c, "reproduces", yes, 2);
    repro_json_strs(c, "not_reproduced", no, 1);
    repro_say(c, "\nreproduces: Figure 2 (shape, SGD slope vs d = 1, theory vs simulation).\n"
                 "cannot reproduce exactly: the paper's empirical slopes (unstated settings).\n");
    return 0;
}
