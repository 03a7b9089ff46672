/* audit_study.c — `dpcorr audit --study DIR`: the empirical lower bound against the claimed
 * epsilon (1, 2, 4, 8, 16) for DP-SGD (Poisson) and two correlated mechanisms, nu-DP-FTRL over
 * fixed-order epochs (whole-run Gaussian) and BSR under cyclic Poisson sampling (amplified
 * banded MF); the other training options are the command's. Table on stdout, DIR/audit_study.csv,
 * .json and .png (doc/audit.md shows them). */
#include "audit_cli.h"
#include "plot.h"
#include "repro.h"

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

static int write_plot(const char *dir, double bound[NMECH][NEPS], double cap)
{
    double x[NEPS], diag[NEPS], capv[NEPS];
    for (size_t j = 0; j < NEPS; j++) x[j] = diag[j] = study_eps[j], capv[j] = cap;
    plot_series s[NMECH + 2];
    for (size_t k = 0; k < NMECH; k++)
        s[k] = (plot_series){study_mechs[k].label, x, bound[k], NULL, NEPS, PLOT_LINESPOINTS};
    s[NMECH] = (plot_series){"claimed = lower bound", x, diag, NULL, NEPS, PLOT_LINES};
    s[NMECH + 1] = (plot_series){"every guess right (the most m canaries can show)", x, capv, NULL,
                                 NEPS, PLOT_LINES};
    plot_panel p = {"one-run audit: empirical lower bound vs claimed epsilon (95% confidence)",
                    "claimed epsilon", "epsilon lower bound", 0, 0, s, NMECH + 2};
    char msg[256];
    int rc = plot_render(dir, "audit_study", &p, 1, msg, sizeof msg);
    if (rc) fprintf(stderr, "dpcorr audit: warning: %s\n", msg);
    return rc;
}

int audit_study(audit_opts *o, const dpc_dataset *train, const dpc_dataset *test,
                const dpc_model *model)
{
    if (repro_mkdir_p(o->study))
        return cli_fail("audit", "--study: cannot create %s", o->study);
    char path[4096];
    snprintf(path, sizeof path, "%s/audit_study.csv", o->study);
    FILE *csv = fopen(path, "w");
    snprintf(path, sizeof path, "%s/audit_study.json", o->study);
    FILE *js = fopen(path, "w");
    if (!csv || !js) {
        if (csv) fclose(csv);
        if (js) fclose(js);
        return cli_fail("audit", "--study: cannot write into %s", o->study);
    }
    fprintf(csv, "mechanism,claimed_epsilon,lower_bound,correct,guesses,canaries,seconds\n");
    fprintf(js, "[");
    double bound[NMECH][NEPS];
    int rc = 0;
    printf("%-34s", "lower bound at 95% (claimed)");
    for (size_t j = 0; j < NEPS; j++) printf("  %8g", study_eps[j]);
    printf("\n");
    for (size_t k = 0; k < NMECH && !rc; k++) {
        const study_mech *sm = &study_mechs[k];
        printf("%-34s", sm->label);
        fflush(stdout);
        for (size_t j = 0; j < NEPS && !rc; j++) {
            audit_opts a = *o;
            a.t.mech.p.kind = sm->kind;
            a.t.mech.p.nu = sm->nu;
            a.t.mech.p.bands = sm->bands;
            a.t.cfg.sampler = sm->sampler;
            a.t.cfg.groups = 0;
            a.t.cfg.epsilon = study_eps[j];
            a.t.cfg.noise_multiplier = 0;
            a.t.label = sm->label;
            double t0 = repro_now();
            dpc_audit_result r;
            rc = audit_one(&a, train, test, model, &r);
            if (rc) break;
            bound[k][j] = r.bound.epsilon;
            printf("  %8.3f", r.bound.epsilon);
            fflush(stdout);
            fprintf(csv, "\"%s\",%g,%.6f,%zu,%zu,%zu,%.1f\n", sm->label, r.ledger.epsilon,
                    r.bound.epsilon, r.bound.correct, r.bound.guesses, r.canaries, repro_now() - t0);
            fprintf(js, "%s\n  ", k || j ? "," : "");
            audit_json(js, &a, &r, "  ");
            dpc_audit_result_free(&r);
        }
        printf("\n");
    }
    fprintf(js, "\n]\n");
    int bad = fclose(csv) | fclose(js);
    if (bad) fprintf(stderr, "dpcorr audit: --study: write error in %s\n", o->study);
    double cap = perfect_bound(o->ac.canaries, o->t.cfg.delta, o->ac.confidence);
    if (!rc) printf("%-34s  %8.3f (every guess right: the most %zu canaries can show)\n", "cap", cap,
                    o->ac.canaries);
    if (!rc) write_plot(o->study, bound, cap);
    return rc ? rc : bad ? CLI_RUNTIME : 0;
}
