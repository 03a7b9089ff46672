/* setup.c — a run's configuration resolved from its setup (dpc_srgd_config_resolve): the
 * constants L and M (given, the problem's, or derived from the data's public row-norm bound),
 * the preset of the regime, the overrides, and the evaluation hook. */
#include "common/util.h"
#include "srgd/srgd_internal.h"

#include <string.h>

void dpc_srgd_setup_init(dpc_srgd_setup *s)
{
    memset(s, 0, sizeof *s);
    s->regime = DPC_SRGD_REGIME_A;
    s->c = DPC_SRGD_PRACTICAL_C;
}

dpc_status dpc_srgd_config_resolve(dpc_srgd_config *c, const dpc_srgd_setup *s,
                                   dpc_srgd_problem *pr, const dpc_model *m,
                                   const dpc_dataset *train, const dpc_dataset *heldout,
                                   dpc_error *err)
{
    if (!c || !s || !m || !train)
        return dpc_error_set(err, DPC_E_INVALID, "config_resolve: NULL argument");
    dpc_status st;
    double L = s->L, M = s->M;
    if (pr) {
        dpc_srgd_problem_constants(pr, &c->L, &c->M, NULL);
        if (L > 0) c->L = L;
        if (M > 0) c->M = M;
    } else {
        st = dpc_srgd_data_constants(dpc_model_get_config(m), train->x_norm_bound, c->R,
                                     s->y_bound, &L, &M, err);
        if (st) return st;
        c->L = L;
        c->M = M;
    }
    st = dpc_srgd_preset(c, s->regime, s->c, s->literal, train->n, dpc_model_num_params(m), err);
    if (st) return st;
    if (s->steps) c->steps = s->steps;
    if (s->batch) c->batch = s->batch;
    if (s->beta > 0) c->beta = s->beta;
    if (s->clip > 0) c->clip = s->clip;
    if (c->eval_every) {
        if (pr) {
            c->risk = dpc_srgd_problem_risk;
            c->risk_ctx = pr;
        } else if (heldout) {
            c->heldout = heldout;
        } else {
            c->eval_every = 0;
        }
    }
    return DPC_OK;
}
