/* study.c — the epsilon study's grid, its cells' configurations, the cap of what m canaries can
 * show, and whether an audit refutes its claim (dpcorr/audit.h). */
#include "dpcorr/audit.h"

#include "common/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void dpc_audit_study_grid_init(dpc_audit_study_grid *g)
{
    static const dpc_audit_study_grid grid = {
        {{"DP-SGD (Poisson)", DPC_MECH_IDENTITY, DPC_SAMPLER_POISSON, 0, 0},
         {"nu-DP-FTRL nu=0.02 (fixed order)", DPC_MECH_NU, DPC_SAMPLER_FIXED, 0.02, 0},
         {"BSR 16 bands (cyclic Poisson)", DPC_MECH_BSR, DPC_SAMPLER_CYCLIC_POISSON, 0, 16}},
        {1, 2, 4, 8, 16}};
    if (g) *g = grid;
}

dpc_status dpc_audit_study_config(const dpc_train_config *base, size_t mech, double epsilon,
                                  dpc_train_config *out, dpc_error *err)
{
    if (!base) return dpc_error_param(err, DPC_E_INVALID, "base", "must not be NULL");
    if (!out) return dpc_error_param(err, DPC_E_INVALID, "out", "must not be NULL");
    if (mech >= DPC_AUDIT_STUDY_MECHS)
        return dpc_error_param(err, DPC_E_INVALID, "mech",
                               "the study has %d mechanism rows, got row %zu",
                               DPC_AUDIT_STUDY_MECHS, mech);
    if (!(isfinite(epsilon) && epsilon > 0))
        return dpc_error_param(err, DPC_E_INVALID, "epsilon", "must be finite and > 0, got %g",
                               epsilon);
    dpc_audit_study_grid g;
    dpc_audit_study_grid_init(&g);
    const dpc_audit_study_mech *row = &g.mech[mech];
    dpc_train_config c = *base;
    c.mech.kind = row->kind;
    c.mech.nu = row->nu;
    c.mech.bands = row->bands;
    c.sampler = row->sampler;
    c.groups = 0;
    c.epsilon = epsilon;
    c.noise_multiplier = 0;
    *out = c;
    return DPC_OK;
}

dpc_status dpc_audit_perfect_bound(size_t m, double delta, double confidence, double *eps,
                                   dpc_error *err)
{
    if (!eps) return dpc_error_param(err, DPC_E_INVALID, "eps", "must not be NULL");
    if (m == 0) return dpc_error_param(err, DPC_E_INVALID, "m", "needs m >= 1 canaries");
    /* every guess right: scores that separate the included canaries perfectly, through the same
     * test as the audits (so the cap and the audits' bounds are the same function of v) */
    double *s = dpc__malloc_array(m, sizeof *s);
    unsigned char *in = malloc(m);
    dpc_status st;
    if (!s || !in) {
        st = DPC__NOMEM(err, "perfect-guess scores");
    } else {
        for (size_t i = 0; i < m; i++) in[i] = (unsigned char)(i % 2), s[i] = in[i] ? 1.0 : -1.0;
        dpc_audit_bound_result b;
        st = dpc_audit_bound(s, in, m, 0, 0, delta, confidence, &b, err);
        if (!st) *eps = b.epsilon;
    }
    free(s);
    free(in);
    return st;
}

int dpc_audit_refutes(const dpc_audit_result *r)
{
    return r && r->bound.epsilon > r->ledger.epsilon;
}
