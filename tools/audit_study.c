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

#define NEPS 5
#define NMECH 3

static const double study_eps[NEPS] = {1, 2, 4, 8, 16};

typedef struct study_mech {
    const char *label;
    dpc_mech_kind kind;
    dpc_sampler_kind sampler;
    double nu;
    size_t bands;
} study_mech;

static const study_mech study_mechs[NMECH] = {
    {"DP-SGD (Poisson)", DPC_MECH_IDENTITY, DPC_SAMPLER_POISSON, 0, 0},
    {"nu-DP-FTRL nu=0.02 (fixed order)", DPC_MECH_NU, DPC_SAMPLER_FIXED, 0.02, 0},
    {"BSR 16 bands (cyclic Poisson)", DPC_MECH_BSR, DPC_SAMPLER_CYCLIC_POISSON, 0, 16},
};

/* The largest bound m canaries can give at this confidence: every guess right (perfectly
 * separated scores), through the same library call as the audits. */
static double perfect_bound(size_t m, double delta, double confidence)
{
    double *s = malloc(m * sizeof *s), e = NAN;
    unsigned char *in = malloc(m);
    dpc_audit_bound_result b;
    dpc_error err = {0};
    if (s && in) {
        for (size_t i = 0; i < m; i++) in[i] = (unsigned char)(i % 2), s[i] = in[i] ? 1.0 : -1.0;
        if (!dpc_audit_bound(s, in, m, 0, 0, delta, confidence, &b, &err)) e = b.epsilon;
    }
    free(s);
    free(in);
    return e;
}

static int write_plot(const char *dir, double bound[NMECH][NEPS], double cap, double confidence)
{
    double x[NEPS], diag[NEPS], capv[NEPS];
    for (size_t j = 0; j < NEPS; j++) x[j] = diag[j] = study_eps[j], capv[j] = cap;
    plot_series s[NMECH + 2];
    for (size_t k = 0; k < NMECH; k++)
        s[k] = (plot_series){study_mechs[k].label, x, bound[k], NULL, NEPS, PLOT_LINESPOINTS};
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

/* The configuration of study row k at claimed epsilon eps (the other options are o's). */
static audit_opts study_config(const audit_opts *o, size_t k, double eps)
{
    const study_mech *sm = &study_mechs[k];
    audit_opts a = *o;
    a.t.cfg.mech.kind = sm->kind;
    a.t.cfg.mech.nu = sm->nu;
    a.t.cfg.mech.bands = sm->bands;
    a.t.cfg.sampler = sm->sampler;
    a.t.cfg.groups = 0;
    a.t.cfg.epsilon = eps;
    a.t.cfg.noise_multiplier = 0;
    a.t.fr.label = sm->label;
    return a;
}

int audit_study_dry(audit_opts *o, opt_set *s, const dpc_model *model)
{
    opt_dry_list("study.epsilon", study_eps, NEPS);
    for (size_t k = 0; k < NMECH; k++) {
        audit_opts a = study_config(o, k, study_eps[0]);
        dpc_train_config c;
        size_t examples;
        dpc_error err = {0};
        if (dpc_audit_resolve(&a.ac, &a.t.cfg, model, a.t.fr.train, &a.t.fr.rng, &c, &examples,
                              &err))
            return opt_fail_lib(s, &err);
        printf("study.run = %s: mech %s, sampler %s, groups %zu, %zu steps per epoch\n",
               study_mechs[k].label, dpc_mech_kind_name(c.mech.kind),
               dpc_sampler_kind_name(c.sampler), c.groups,
               c.mech.steps / (c.epochs ? c.epochs : 1));
    }
    return 0;
}

/* The JSON file: {"dpcorr_version", "study": [one audit object per run], "cap"}. */
static void study_json_open(jw *w, FILE *f)
{
    jw_begin(w, f);
    jw_str(w, "dpcorr_version", dpc_version());
    jw_arr(w, "study");
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
    jw w;
    study_json_open(&w, js);
    double bound[NMECH][NEPS];
    int rc = 0;
    char head[64];
    snprintf(head, sizeof head, "lower bound at %g%% (claimed)", 100 * o->ac.confidence);
    printf("%-34s", head);
    for (size_t j = 0; j < NEPS; j++) printf("  %8g", study_eps[j]);
    printf("\n");
    for (size_t k = 0; k < NMECH && !rc; k++) {
        printf("%-34s", study_mechs[k].label);
        fflush(stdout);
        for (size_t j = 0; j < NEPS && !rc; j++) {
            audit_opts a = study_config(o, k, study_eps[j]);
            double t0 = cli_now();
            dpc_audit_result r;
            if ((rc = audit_one(&a, s, model, &r))) break;
            bound[k][j] = r.bound.epsilon;
            printf("  %8.3f", r.bound.epsilon);
            fflush(stdout);
            fprintf(csv, "\"%s\",%g,%.6f,%zu,%zu,%zu,%.1f\n", study_mechs[k].label,
                    r.ledger.epsilon, r.bound.epsilon, r.bound.correct, r.bound.guesses,
                    r.canaries, cli_now() - t0);
            jw_obj(&w, NULL);
            jw_str(&w, "run", study_mechs[k].label);
            audit_json_fields(&w, &a, &r);
            jw_end(&w);
            dpc_audit_result_free(&r);
        }
        printf("\n");
    }
    jw_end(&w);
    double cap = perfect_bound(o->ac.canaries, o->t.cfg.delta, o->ac.confidence);
    jw_num(&w, "cap", cap);
    jw_finish(&w);
    if (rc) { /* a failed audit: the previous study files stay */
        dpc_io_out_abort(hc);
        dpc_io_out_abort(hj);
        return rc;
    }
    int bad = cli_out_commit(hc, "--study");
    bad = cli_out_commit(hj, "--study") || bad;
    printf("%-34s  %8.3f (every guess right: the most %zu canaries can show)\n", "cap", cap,
           o->ac.canaries);
    if (write_plot(o->study, bound, cap, o->ac.confidence)) bad = 1;
    return bad ? CLI_RUNTIME : 0;
}
