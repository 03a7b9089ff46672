/* privatize.c — a private step in the caller's own loop (dpcorr/privatize.h).
 *
 * The run decisions come from dpc_train_plan_new (the trainer's own code: resolution, sampler,
 * mechanism, calibration, ledger); this object adds the noise stream and the step's guard
 * (one release per drawn batch, finite input, nothing past the run). */
#include "common/util.h"
#include "dpcorr/privatize.h"
#include "dpcorr/train.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct dpc_privatizer {
    size_t dim;
    dpc_train_plan *plan;
    dpc_noise *noise;
    double *z;           /* (dim) the step's noise row (B Z)_t */
    double scale, inv_b; /* noise_scale, 1 / expected_batch */
    size_t t, n;         /* steps done, steps of the run */
    size_t drawn;        /* t + 1 once dpc_privatize_batch drew step t's batch, else 0 */
    size_t count;        /* records of the drawn batch (the sum's norm bound: count x clip) */
    double clip;
};

void dpc_privatize_config_init(dpc_privatize_config *cfg)
{
    if (!cfg) return;
    memset(cfg, 0, sizeof *cfg);
    dpc_mech_params_init(&cfg->mech);
    cfg->mech.kind = DPC_MECH_BLT; /* no theta/omega: the run's default BLT */
    cfg->sampler = DPC_SAMPLER_AUTO;
    cfg->epochs = 1;
    cfg->clip = 1.0;
    cfg->accountant = dpc_account_default_accountant();
    cfg->isa = DPC_ISA_AUTO;
}

void dpc_privatize_free(dpc_privatizer *pv)
{
    if (!pv) return;
    dpc_noise_free(pv->noise);
    dpc_train_plan_free(pv->plan);
    free(pv->z);
    free(pv);
}

dpc_status dpc_privatize_new(dpc_privatizer **out, const dpc_privatize_config *cfg,
                             const dpc_rng *rng, dpc_error *err)
{
    if (!out) return dpc_error_param(err, DPC_E_INVALID, "out", "NULL");
    *out = NULL;
    if (!cfg) return dpc_error_param(err, DPC_E_INVALID, "cfg", "NULL");
    dpc_status st = dpc_rng_check(rng, err); /* a never-seeded key makes public noise */
    if (st) return st;
    if (cfg->dim == 0) return dpc_error_param(err, DPC_E_INVALID, "dim", "must be >= 1");
    if (cfg->dim > ((size_t)1 << 40))
        return dpc_error_param(err, DPC_E_RANGE, "dim", "%zu coordinates: at most 2^40",
                               cfg->dim);
    /* the trainer's configuration with the optimizer left at its defaults: only the privacy,
     * sampling and mechanism fields enter the plan (the workload of BSR/BISR as given) */
    dpc_train_config tc;
    dpc_train_config_init(&tc);
    tc.mech = cfg->mech;
    tc.sampler = cfg->sampler;
    tc.batch = cfg->batch;
    tc.epochs = cfg->epochs;
    tc.groups = cfg->groups;
    tc.workload_explicit = 1;
    tc.epsilon = cfg->epsilon;
    tc.delta = cfg->delta;
    tc.noise_multiplier = cfg->noise_multiplier;
    tc.accountant = cfg->accountant;
    tc.clip = cfg->clip;
    tc.isa = cfg->isa;
    dpc_privatizer *pv = calloc(1, sizeof *pv);
    if (!pv) return DPC__NOMEM(err, "privatizer");
    pv->dim = cfg->dim;
    pv->clip = cfg->clip;
    st = dpc_train_plan_new(&pv->plan, &tc, cfg->n_examples, rng, err);
    if (!st && !(pv->z = dpc__malloc_array(cfg->dim, sizeof(double))))
        st = DPC__NOMEM(err, "privatizer noise row");
    if (!st) {
        dpc_noise_config nc;
        dpc_noise_config_init(&nc, cfg->dim);
        nc.isa = cfg->isa;
        dpc_rng_stream s = dpc_rng_stream_derive(rng, DPC_STREAM_ID(DPC_STREAM_NOISE, 0));
        st = dpc_noise_new(&pv->noise, dpc_train_plan_mech(pv->plan), &s, &nc, err);
    }
    if (st) {
        dpc_privatize_free(pv);
        return st;
    }
    const dpc_ledger *L = dpc_train_plan_ledger(pv->plan);
    pv->n = L->steps;
    pv->scale = dpc_train_plan_noise_scale(pv->plan);
    pv->inv_b = 1.0 / L->expected_batch; /* the trainer's factor (dpc_trainer_step) */
    *out = pv;
    return DPC_OK;
}

dpc_status dpc_privatize_batch(dpc_privatizer *pv, size_t *idx, size_t *count, dpc_error *err)
{
    if (!pv || !idx || !count)
        return dpc_error_param(err, DPC_E_INVALID, !pv ? "pv" : !idx ? "idx" : "count", "NULL");
    if (pv->t >= pv->n)
        return dpc_error_set(err, DPC_E_RANGE, "privatize: all %zu steps are done", pv->n);
    dpc_status st = dpc_sampler_batch(dpc_train_plan_sampler(pv->plan), pv->t, idx, count, err);
    if (!st) {
        pv->drawn = pv->t + 1;
        pv->count = *count;
    }
    return st;
}

/* The sum of `count` gradients each clipped to norm clip has norm <= count x clip; a larger
 * one is no sum of the batch's clipped gradients, and its noise was not calibrated for it.
 * Rounding (double precision, any summation order): each clipped gradient's norm is
 * clip (1 + (dim/2 + 3) u) at most (its norm computed, the factor min(1, clip/norm), the
 * product), the sum of count of them adds (count - 1) u relative, and the norm computed here
 * (scaled by the largest entry) (dim/2 + 2) u: first order (count + dim + 4) u with
 * u = 2^-53; the allowance (count + dim + 8) 2^-52 covers that twice over. finite: checked. */
static dpc_status sum_in_reach(const dpc_privatizer *pv, const double *g, dpc_error *err)
{
    double big = 0.0, ss = 0.0;
    for (size_t j = 0; j < pv->dim; j++)
        if (fabs(g[j]) > big) big = fabs(g[j]);
    if (big > 0.0)
        for (size_t j = 0; j < pv->dim; j++) ss += (g[j] / big) * (g[j] / big);
    double norm = big * sqrt(ss), reach = (double)pv->count * pv->clip,
           slack = ((double)pv->count + (double)pv->dim + 8.0) * 0x1p-52;
    if (norm <= reach * (1.0 + slack)) return DPC_OK;
    return dpc_error_param(err, DPC_E_INVALID, "clipped_sum",
                           "norm %.17g at step %zu exceeds count x clip = %zu x %g = %.17g "
                           "(+ the rounding allowance, relative %.3g): not a sum of the "
                           "batch's gradients clipped to %g (nothing was released)",
                           norm, pv->t, pv->count, pv->clip, reach, slack, pv->clip);
}

dpc_status dpc_privatize_step(dpc_privatizer *pv, const double *clipped_sum, double *h,
                              dpc_error *err)
{
    if (!pv || !clipped_sum || !h)
        return dpc_error_param(err, DPC_E_INVALID, !pv ? "pv" : !clipped_sum ? "clipped_sum" : "h",
                               "NULL");
    if (pv->t >= pv->n)
        return dpc_error_set(err, DPC_E_RANGE, "privatize: all %zu steps are done", pv->n);
    if (pv->drawn != pv->t + 1)
        return dpc_error_param(err, DPC_E_STATE, "clipped_sum",
                               "step %zu: its batch was not drawn (dpc_privatize_batch first: the "
                               "accounting assumes the sampler's batch)",
                               pv->t);
    for (size_t j = 0; j < pv->dim; j++)
        if (!isfinite(clipped_sum[j]))
            return dpc_error_param(err, DPC_E_NUMERIC, "clipped_sum",
                                   "coordinate %zu is %g at step %zu (nothing was released)", j,
                                   clipped_sum[j], pv->t);
    dpc_status st = sum_in_reach(pv, clipped_sum, err);
    if (st) return st;
    if ((st = dpc_noise_next(pv->noise, pv->z, err))) return st;
    if ((st = dpc_noise_release(clipped_sum, pv->z, pv->dim, pv->scale, pv->inv_b, h, err)))
        return st;
    pv->t++;
    pv->drawn = 0;
    return DPC_OK;
}

/* The accessors answer a NULL handle (a failed dpc_privatize_new leaves one) with nothing:
 * 0 steps, capacity 0, NAN, NULL. */
size_t dpc_privatize_steps_done(const dpc_privatizer *pv) { return pv ? pv->t : 0; }
size_t dpc_privatize_steps_total(const dpc_privatizer *pv) { return pv ? pv->n : 0; }
size_t dpc_privatize_max_batch(const dpc_privatizer *pv)
{
    return pv ? dpc_sampler_max_batch(dpc_train_plan_sampler(pv->plan)) : 0;
}
double dpc_privatize_noise_scale(const dpc_privatizer *pv) { return pv ? pv->scale : NAN; }
const dpc_ledger *dpc_privatize_ledger(const dpc_privatizer *pv)
{
    return pv ? dpc_train_plan_ledger(pv->plan) : NULL;
}

dpc_status dpc_privatize_epsilon_spent(const dpc_privatizer *pv, double *eps, dpc_error *err)
{
    if (!pv || !eps) return dpc_error_param(err, DPC_E_INVALID, pv ? "eps" : "pv", "NULL");
    if (pv->t == 0) {
        *eps = 0;
        return DPC_OK;
    }
    return dpc_train_plan_epsilon_at(pv->plan, pv->t, eps, err);
}
