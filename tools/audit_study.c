/* audit_study.c — `dpcorr audit --study DIR`: the empirical lower bound against the claimed
 * epsilon (1, 2, 4, 8, 16) for DP-SGD (Poisson) and two correlated mechanisms, nu-DP-FTRL over
 * fixed-order epochs (whole-run Gaussian) and BSR under cyclic Poisson sampling (amplified
 * banded MF); the other training options are the command's. Table on stdout, DIR/audit_study.csv,
 * .json and .png (doc/audit.md shows them); --dry-run resolves the three configurations. */
#include "audit_cli.h"
#include "plot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NEPS DPC_AUDIT_STUDY_EPSILONS
#define NMECH DPC_AUDIT_STUDY_MECHS

static int write_plot(const char *dir, const dpc_audit_study_grid *g, double bound[NMECH][NEPS],
                      double cap, double confidence)
{
    double x[NEPS], diag[NEPS], capv[NEPS];
    for (size_t j = 0; j < NEPS; j++) x[j] = diag[j] = g->epsilon[j], capv[j] = cap;
    plot_series s[NMECH + 2];
    for (size_t k = 0; k < NMECH; k++)
        s[k] = (plot_series){g->mech[k].label, x, bound[k], NULL, NEPS, PLOT_LINESPOINTS};
    s[NMECH] = (plot_series){"claimed = lower bound", x, diag, NULL, NEPS, PLOT_LINES};
    s[NMECH + 1] = (plot_series){"every guess right (the most m canaries can show)", x, capv, NULL,
                                 NEPS, PLOT_LINES};
    char title[128];
    snprintf(title, sizeof title,
             "one-run audit: empirical lower bound vs claimed epsilon (%g%% confidence)",
             100 * confidence);
    plot_panel p = {title,
                    "claimed epsilon", "epsilon lower bound", 0, 0, s, NMECH + 2};
    char msg[256];
    int rc = plot_render(dir, "audit_study", &p, 1, NULL, msg, sizeof msg);
    if (rc) fprintf(stderr, "dpcorr audit: --study: %s\n", msg);
    return rc;
}

/* The options of study cell (row k, claimed epsilon eps): the library's configuration, the
 * row's label as the frame's. */
static int study_config(const audit_opts *o, opt_set *s, const dpc_audit_study_grid *g, size_t k,
                        double eps, audit_opts *a)
{
    dpc_error err = {0};
    *a = *o;
    if (dpc_audit_study_config(&o->t.cfg, k, eps, &a->t.cfg, &err)) return opt_fail_lib(s, &err);
    a->t.fr.label = g->mech[k].label;
    return 0;
}

int audit_study_dry(audit_opts *o, opt_set *s, const dpc_model *model)
{
    dpc_audit_study_grid g;
    dpc_audit_study_grid_init(&g);
    opt_dry_list("study.epsilon", g.epsilon, NEPS);
    for (size_t k = 0; k < NMECH; k++) {
        audit_opts a;
        int rc = study_config(o, s, &g, k, g.epsilon[0], &a);
        if (rc) return rc;
        dpc_train_config c;
        size_t examples;
        dpc_error err = {0};
        if (dpc_audit_resolve(&a.ac, &a.t.cfg, model, a.t.fr.train, &a.t.fr.rng, &c, &examples,
                              &err))
            return opt_fail_lib(s, &err);
        printf("study.run = %s: mech %s, sampler %s, groups %zu, %zu steps per epoch\n",
               g.mech[k].label, dpc_mech_kind_name(c.mech.kind),
               dpc_sampler_kind_name(c.sampler), c.groups,
               c.mech.steps / (c.epochs ? c.epochs : 1));
    }
    return 0;
}

/* The JSON file: {"dpcorr_version", "study": [one audit object per run], "cap"}. */
static void study_json_open(dpc_json_writer *w, FILE *f)
{
    dpc_json_begin(w, f);
    dpc_json_str(w, "dpcorr_version", dpc_version());
    dpc_json_arr(w, "study");
}

int audit_study(audit_opts *o, opt_set *s, const dpc_model *model)
{
    char path[4096];
    dpc_io_out *hc = NULL, *hj = NULL; /* temporaries renamed into place at the end */
    snprintf(path, sizeof path, "%s/audit_study.csv", o->study);
    FILE *csv = cli_out_open(&hc, "--study", path);
    snprintf(path, sizeof path, "%s/audit_study.json", o->study);
    FILE *js = csv ? cli_out_open(&hj, "--study", path) : NULL;
    if (!csv || !js) {
        dpc_io_out_abort(hc);
        return opt_fail(s, "--study: cannot write into %s", o->study);
    }
    fprintf(csv, "mechanism,claimed_epsilon,lower_bound,correct,guesses,canaries,seconds\n");
    dpc_json_writer w;
    study_json_open(&w, js);
    dpc_audit_study_grid g;
    dpc_audit_study_grid_init(&g);
    double bound[NMECH][NEPS];
    int rc = 0;
    char head[64];
    snprintf(head, sizeof head, "lower bound at %g%% (claimed)", 100 * o->ac.confidence);
    printf("%-34s", head);
    for (size_t j = 0; j < NEPS; j++) printf("  %8g", g.epsilon[j]);
    printf("\n");
    for (size_t k = 0; k < NMECH && !rc; k++) {
        printf("%-34s", g.mech[k].label);
        fflush(stdout);
        for (size_t j = 0; j < NEPS && !rc; j++) {
            audit_opts a;
            double t0 = cli_now();
            dpc_audit_result r;
            if ((rc = study_config(o, s, &g, k, g.epsilon[j], &a)) ||
                (rc = audit_one(&a, s, model, &r)))
                break;
            bound[k][j] = r.bound.epsilon;
            printf("  %8.3f", r.bound.epsilon);
            fflush(stdout);
            fprintf(csv, "\"%s\",%g,%.6f,%zu,%zu,%zu,%.1f\n", g.mech[k].label,
                    r.ledger.epsilon, r.bound.epsilon, r.bound.correct, r.bound.guesses,
                    r.canaries, cli_now() - t0);
            dpc_json_obj(&w, NULL);
            dpc_json_str(&w, "run", g.mech[k].label);
            audit_json_fields(&w, &a, &r);
            dpc_json_end(&w);
            dpc_audit_result_free(&r);
        }
        printf("\n");
    }
    dpc_json_end(&w);
    double cap = NAN; /* the most m canaries can show (NAN, JSON null, if the library refuses) */
    if (dpc_audit_perfect_bound(o->ac.canaries, o->t.cfg.delta, o->ac.confidence, &cap, NULL))
        cap = NAN;
    dpc_json_num(&w, "cap", cap);
    dpc_json_finish(&w);
    if (rc) { /* a failed audit: the previous study files stay */
        dpc_io_out_abort(hc);
        dpc_io_out_abort(hj);
        return rc;
    }
    int bad = cli_out_commit(hc, "--study");
    bad = cli_out_commit(hj, "--study") || bad;
    printf("%-34s  %8.3f (every guess right: the most %zu canaries can show)\n", "cap", cap,
           o->ac.canaries);
    if (write_plot(o->study, &g, bound, cap, o->ac.confidence)) bad = 1;
    return bad ? CLI_RUNTIME : 0;
}
