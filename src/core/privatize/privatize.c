/* privatize.c — a private step in the caller's own loop (dpcorr/privatize.h).
 *
 * The run decisions come from dpc_train_plan_new (the trainer's own code: resolution, sampler,
 * mechanism, calibration, ledger); this object adds the noise stream and the step's guard
 * (one release per drawn batch, finite input, nothing past the run). */
#include "common/util.h"
#include "field/field_def.h"
#include "mech/mech_internal.h"
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

/* The manual of dpc_privatize_config, one row per field in struct order. The privacy, sampling
 * and mechanism fields are those of dpc_train_config (dpc_privatize_new validates them through
 * the trainer's plan, errors naming the same fields): their ranges are stated there. */
#define PC(m) DPC_FIELD_AT(dpc_privatize_config, m)
#define UNSET (DPC_FIELD_NO_RANGE | DPC_FIELD_UNSET_ZERO)
static const char *const pc_accountant_names[] = {"rdp", "pld", "zcdp", "gdp"};
static const char *const pc_isa_names[] = {"auto", "sse2", "avx2", "avx512"};
static const dpc_field pc_fields[] = {
    {.name = "dim", .type = DPC_FIELD_SIZE, PC(dim), .flags = UNSET,
     .doc = "P: coordinates of the gradient sums, 1 .. 2^40 (0: must be set)"},
    {.name = "n_examples", .type = DPC_FIELD_SIZE, PC(n_examples), .flags = UNSET,
     .doc = "N: records of the training set, >= 1 (0: must be set)"},
    {.name = "batch", .type = DPC_FIELD_SIZE, PC(batch), .flags = UNSET,
     .doc = "(expected) batch size B, 1 <= B <= N (0: must be set)"},
    {.name = "epochs", .type = DPC_FIELD_SIZE, PC(epochs), .def = 1, .flags = DPC_FIELD_NO_RANGE,
     .doc = "n = epochs x steps per epoch (Poisson: N / B per epoch)"},
    {.name = "epsilon", .type = DPC_FIELD_DOUBLE, PC(epsilon), .flags = UNSET,
     .doc = "target epsilon > 0 (the noise is calibrated), or 0 to use noise_multiplier"},
    {.name = "delta", .type = DPC_FIELD_DOUBLE, PC(delta), .flags = UNSET,
     .doc = "in (0, 1/N), or 0: dpc_account_default_delta(N)"},
    {.name = "noise_multiplier", .type = DPC_FIELD_DOUBLE, PC(noise_multiplier), .flags = UNSET,
     .doc = "z > 0 when epsilon = 0 (the ledger then reports its epsilon)"},
    {.name = "clip", .type = DPC_FIELD_DOUBLE, PC(clip), .def = 1, .flags = DPC_FIELD_NO_RANGE,
     .doc = "the L2 norm each per-example gradient is clipped to (> 0)"},
    {.name = "mech", .type = DPC_FIELD_STRUCT, PC(mech), .flags = DPC_FIELD_OWN_CHECK,
     .sub = &dpc__mech_params_table,
     .doc = "the mechanism (kind BLT by default: the run's default BLT; steps set by the run)"},
    {.name = "sampler", .type = DPC_FIELD_INT, PC(sampler), .def = DPC_SAMPLER_AUTO,
     .flags = DPC_FIELD_NO_RANGE, .doc = "dpc_sampler_kind, or DPC_SAMPLER_AUTO"},
    {.name = "groups", .type = DPC_FIELD_SIZE, PC(groups), .flags = DPC_FIELD_NO_RANGE,
     .doc = "cyclic Poisson: number of groups (0 = the strategy's bands)"},
    {.name = "accountant", .type = DPC_FIELD_ENUM, PC(accountant), .def = DPC_ACCOUNTANT_PLD,
     DPC_FIELD_NAMES(pc_accountant_names),
     .doc = "amplified routes' accountant (dpc_account_default_accountant)"},
    {.name = "isa", .type = DPC_FIELD_ENUM, PC(isa), .def = DPC_ISA_AUTO,
     DPC_FIELD_NAMES(pc_isa_names), .flags = DPC_FIELD_RUNTIME,
     .doc = "the noise generator's level (auto: the best this CPU runs)"},
};
#undef PC
#undef UNSET
static const dpc_field_table pc_table = DPC_FIELD_TABLE(dpc_privatize_config, pc_fields);

const dpc_field_table *dpc_privatize_config_fields(void) { return &pc_table; }

void dpc_privatize_config_init(dpc_privatize_config *cfg)
{
    if (!cfg) return;
    dpc_field_defaults(&pc_table, cfg);
    cfg->mech.kind = DPC_MECH_BLT; /* no theta/omega: the run's default BLT */
    cfg->accountant = dpc_account_default_accountant();
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
