/* plan.c — the privacy plan of a run without a model (dpcorr/train.h): the trainer's run
 * decisions (resolution, sampler, mechanism, calibration, ledger) for front ends that compute
 * the gradients themselves. It reuses the trainer object with only its privacy fields set, so
 * that the ledger is computed by the very code dpc_trainer_new runs (privacy.c). */
#include "common/util.h"
#include "train/train_internal.h"

#include <stdlib.h>
#include <string.h>

struct dpc_train_plan {
    dpc_trainer *tr; /* privacy fields only: cfg, rng, n_steps, sampler, sdesc, mech, ledger */
};

void dpc_train_plan_free(dpc_train_plan *p)
{
    if (!p) return;
    dpc_trainer_free(p->tr);
    free(p);
}

dpc_status dpc_train_plan_new(dpc_train_plan **out, const dpc_train_config *cfg,
                              size_t n_examples, const dpc_rng *rng, dpc_error *err)
{
    if (!out) return dpc_error_param(err, DPC_E_INVALID, "out", "NULL");
    *out = NULL;
    dpc_status rst = dpc_rng_check(rng, err); /* a never-seeded key makes public noise */
    if (rst) return rst;
    if (n_examples == 0)
        return dpc_error_param(err, DPC_E_INVALID, "n_examples", "must be >= 1");
    /* resolution reads only the number of records of the training set */
    dpc_dataset shape;
    memset(&shape, 0, sizeof shape);
    shape.n = n_examples;
    shape.d = 1;
    dpc_train_config rc;
    dpc_status st = dpc_train_config_resolve(cfg, &shape, &rc, err);
    if (st) return st;
    dpc_train_plan *p = calloc(1, sizeof *p);
    dpc_trainer *tr = calloc(1, sizeof *tr);
    if (!p || !tr) {
        free(p);
        free(tr);
        return DPC__NOMEM(err, "train plan");
    }
    p->tr = tr;
    rc.transport = NULL; /* the decisions are every rank's; a plan is one process */
    tr->cfg = rc;
    tr->delta_derived = cfg->delta == 0.0;
    tr->rng = *rng;
    tr->n_steps = rc.mech.steps;
    dpc_sampler_config sc = {rc.sampler, n_examples, rc.batch, tr->n_steps, rc.groups};
    st = dpc_sampler_new(&tr->sampler, &sc, rng, err);
    if (!st) {
        dpc_sampler_describe(tr->sampler, &tr->sdesc);
        st = dpc__train_mech(tr, err);
    }
    if (!st) st = dpc__train_privacy(tr, err);
    if (st) {
        dpc_train_plan_free(p);
        return st;
    }
    *out = p;
    return DPC_OK;
}

const dpc_train_config *dpc_train_plan_config(const dpc_train_plan *p)
{
    return &p->tr->cfg;
}

const dpc_ledger *dpc_train_plan_ledger(const dpc_train_plan *p)
{
    return &p->tr->ledger;
}

const dpc_sampler *dpc_train_plan_sampler(const dpc_train_plan *p)
{
    return p->tr->sampler;
}

const dpc_mech *dpc_train_plan_mech(const dpc_train_plan *p)
{
    return p->tr->mech;
}

double dpc_train_plan_noise_scale(const dpc_train_plan *p)
{
    return p->tr->noise_scale;
}

dpc_status dpc_train_plan_epsilon_at(const dpc_train_plan *p, size_t t, double *eps,
                                     dpc_error *err)
{
    if (!p || !eps) return dpc_error_param(err, DPC_E_INVALID, p ? "eps" : "plan", "NULL");
    return dpc_trainer_epsilon_at(p->tr, t, eps, err);
}
