/* train_config.c — trainer configuration: defaults, validation (check_parameter style) and
 * the learning-rate schedules. */
#include "common/util.h"
#include "train/train_internal.h"

#include <math.h>
#include <string.h>

static const char *const sched_names[] = {"constant", "cosine", "cooldown"};

const char *dpc_lr_schedule_name(dpc_lr_schedule s)
{
    return (unsigned)s < 3 ? sched_names[s] : "unknown";
}

dpc_status dpc_lr_schedule_parse(const char *s, dpc_lr_schedule *out, dpc_error *err)
{
    for (int k = 0; k < 3; k++)
        if (s && !strcmp(s, sched_names[k])) {
            *out = (dpc_lr_schedule)k;
            return DPC_OK;
        }
    return dpc_error_param(err, DPC_E_INVALID, "schedule",
                           "unknown '%s' (expected constant, cosine or cooldown)",
                           s ? s : "(null)");
}

void dpc_train_config_init(dpc_train_config *c)
{
    memset(c, 0, sizeof *c);
    dpc_mech_params_init(&c->mech);
    c->noise_form = DPC_NOISE_AUTO;
    c->sampler = DPC_SAMPLER_AUTO;
    c->batch = 256;
    c->epochs = 1;
    c->delta = 0.0; /* derived from N: dpc_account_default_delta */
    c->accountant = dpc_account_default_accountant();
    c->clip = 1.0;
    c->lr = 0.1;
    c->schedule = DPC_LR_CONSTANT;
    c->cooldown_fraction = 0.25;
    c->cooldown_factor = 0.05;
    c->threads = 1;
    c->chunk = 32;
}

/* The optimizer and execution fields. */
static dpc_status check_optimizer(const dpc_train_config *c, dpc_error *err)
{
    if (c->precision != DPC_PRECISION_DOUBLE && c->precision != DPC_PRECISION_FLOAT32)
        return dpc_error_param(err, DPC_E_INVALID, "precision", "unknown precision %d",
                               (int)c->precision);
    if (c->isa < DPC_ISA_AUTO || c->isa > DPC_ISA_AVX512)
        return dpc_error_param(err, DPC_E_INVALID, "isa", "unknown instruction-set level %d",
                               (int)c->isa);
    if (!(c->clip > 0) || !isfinite(c->clip))
        return dpc_error_param(err, DPC_E_INVALID, "clip", "must be a finite number > 0, got %g",
                               c->clip);
    if (!(c->lr > 0) || !isfinite(c->lr))
        return dpc_error_param(err, DPC_E_INVALID, "lr", "must be a finite number > 0, got %g",
                               c->lr);
    /* a clipped step moves the parameters by up to lr x clip (before noise): beyond 1e150 the
     * squared norms of clipping, weight decay and the loss overflow double (sqrt(DBL_MAX) is
     * 1.3e154), and the run would report an overflowed model as trained */
    if (c->lr * c->clip > DPC__SCALE_MAX) /* blamed on the larger factor */
        return dpc_error_param(err, DPC_E_RANGE, c->clip > c->lr ? "clip" : "lr",
                               "lr x clip = %g overflows: a step must stay below 1e150 (lr %g, "
                               "clip %g)", c->lr * c->clip, c->lr, c->clip);
    if (!(c->momentum >= 0 && c->momentum < 1))
        return dpc_error_param(err, DPC_E_INVALID, "momentum", "must be in [0, 1), got %g",
                               c->momentum);
    if (!(c->weight_decay >= 0) || !isfinite(c->weight_decay))
        return dpc_error_param(err, DPC_E_INVALID, "weight_decay", "must be >= 0, got %g",
                               c->weight_decay);
    if (c->lr * c->weight_decay > DPC__SCALE_MAX) /* the decay step would overflow at once */
        return dpc_error_param(err, DPC_E_RANGE, "weight_decay",
                               "lr x weight_decay = %g overflows: must stay below 1e150",
                               c->lr * c->weight_decay);
    if ((unsigned)c->schedule > DPC_LR_COOLDOWN)
        return dpc_error_param(err, DPC_E_INVALID, "schedule", "unknown value %d",
                               (int)c->schedule);
    if (!(c->cooldown_fraction >= 0 && c->cooldown_fraction <= 1))
        return dpc_error_param(err, DPC_E_INVALID, "cooldown_fraction",
                               "must be in [0, 1], got %g", c->cooldown_fraction);
    if (!(c->cooldown_factor >= 0 && c->cooldown_factor <= 1))
        return dpc_error_param(err, DPC_E_INVALID, "cooldown_factor", "must be in [0, 1], got %g",
                               c->cooldown_factor);
    if (c->threads == 0 || c->threads > 256)
        return dpc_error_param(err, DPC_E_INVALID, "threads", "must be in [1, 256], got %zu",
                               c->threads);
    if (c->chunk == 0 || c->chunk > 4096)
        return dpc_error_param(err, DPC_E_INVALID, "chunk", "must be in [1, 4096], got %zu",
                               c->chunk);
    return DPC_OK;
}

/* The privacy fields: exactly one of epsilon and noise_multiplier; delta below 1/N. */
static dpc_status check_privacy(const dpc_train_config *c, size_t n, dpc_error *err)
{
    double delta; /* the one rule of every trainer: dpc_account_resolve_delta */
    dpc_status st = dpc_account_resolve_delta(c->delta, n, c->allow_large_delta, &delta, NULL, err);
    if (st) return st;
    if (c->epsilon != 0 && c->noise_multiplier != 0)
        return dpc_error_param(err, DPC_E_INVALID, "noise_multiplier",
                               "give either epsilon (the noise is calibrated) or "
                               "noise_multiplier (the epsilon is reported), not both");
    if (c->noise_multiplier == 0) {
        if (!(c->epsilon > 0) || !isfinite(c->epsilon))
            return dpc_error_param(err, DPC_E_INVALID, "epsilon",
                                   "must be a finite number > 0, got %g (or give "
                                   "noise_multiplier)", c->epsilon);
    } else if (!(c->noise_multiplier > 0) || !isfinite(c->noise_multiplier)) {
        return dpc_error_param(err, DPC_E_INVALID, "noise_multiplier",
                               "must be a finite number > 0, got %g", c->noise_multiplier);
    } else if (c->noise_multiplier * c->clip > DPC__SCALE_MAX) {
        /* the noise's standard deviation (z x clip x colnorm) and its square would overflow */
        return dpc_error_param(err, DPC_E_RANGE, "noise_multiplier",
                               "noise_multiplier x clip = %g overflows: must stay below 1e150",
                               c->noise_multiplier * c->clip);
    }
    if (c->accountant != DPC_ACCOUNTANT_PLD && c->accountant != DPC_ACCOUNTANT_RDP &&
        c->accountant != DPC_ACCOUNTANT_GDP && c->accountant != DPC_ACCOUNTANT_ZCDP)
        return dpc_error_param(err, DPC_E_INVALID, "accountant", "unknown value %d",
                               (int)c->accountant);
    return DPC_OK;
}

dpc_status dpc_train_config_check(const dpc_train_config *c, const dpc_dataset *train,
                                  dpc_error *err)
{
    if (!c) return dpc_error_param(err, DPC_E_INVALID, "config", "NULL");
    if (!train) return dpc_error_param(err, DPC_E_INVALID, "train", "NULL data set");
    size_t N = dpc_dataset_rows(train); /* a shard: the whole set's rows */
    if (N == 0) return dpc_error_param(err, DPC_E_INVALID, "train", "the data set is empty");
    if (c->batch == 0) return dpc_error_param(err, DPC_E_INVALID, "batch", "must be >= 1");
    if (c->batch > N)
        return dpc_error_param(err, DPC_E_INVALID, "batch",
                               "%zu is larger than the training data (%zu examples)", c->batch,
                               N);
    if (c->epochs == 0) return dpc_error_param(err, DPC_E_INVALID, "epochs", "must be >= 1");
    size_t spe = N / c->batch;
    if (c->epochs > DPC_TRAIN_MAX_STEPS / spe)
        return dpc_error_param(err, DPC_E_RANGE, "epochs",
                               "%zu epochs of %zu steps exceed the limit of %zu steps",
                               c->epochs, spe, DPC_TRAIN_MAX_STEPS);
    dpc_status st = check_optimizer(c, err);
    if (!st) st = check_privacy(c, N, err);
    if (st) return st;
    if ((unsigned)c->sampler > DPC_SAMPLER_BALLS_IN_BINS && c->sampler != DPC_SAMPLER_AUTO)
        return dpc_error_param(err, DPC_E_INVALID, "sampler", "unknown value %d", (int)c->sampler);
    const dpc_train_canaries *cn = c->canaries;
    if (cn && (cn->count == 0 || cn->first > N || cn->count > N - cn->first ||
               !cn->included))
        return dpc_error_param(err, DPC_E_INVALID, "canaries",
                               "slots [%zu, %zu) must be a non-empty range of the %zu training "
                               "examples, with inclusion flags",
                               cn->first, cn->first + cn->count, N);
    st = dpc_train_mech_check(&c->mech, err);
    if (st) return dpc_error_nest(err, "mech");
    return DPC_OK;
}

dpc_status dpc_train_mech_check(const dpc_mech_params *p, dpc_error *err)
{
    if (!p) return dpc_error_param(err, DPC_E_INVALID, "mech", "NULL");
    dpc_mech_params mp = *p;
    if (mp.kind != DPC_MECH_DENSE || mp.steps == 0)
        mp.steps = 1; /* dpc_train_config_resolve sets the real value (dense: its own n) */
    if ((mp.kind == DPC_MECH_BSR || mp.kind == DPC_MECH_BISR) && mp.bands == 0)
        mp.bands = 1; /* 0: dpc_train_config_resolve chooses the default */
    static const double blt_theta = 0.5, blt_omega = 0.5;
    if (dpc__train_default_blt(&mp)) { /* the trainer optimizes it (dpc_strategy_default_blt) */
        mp.nbuf = 1;
        mp.theta = &blt_theta;
        mp.omega = &blt_omega;
    }
    return dpc_mech_params_check(&mp, err);
}

dpc_status dpc_train_config_resolve(const dpc_train_config *in, const dpc_dataset *train,
                                    dpc_train_config *out, dpc_error *err)
{
    dpc_status st = dpc_train_config_check(in, train, err);
    if (st) return st;
    if (!out) return dpc_error_param(err, DPC_E_INVALID, "out", "NULL");
    dpc_train_config c = *in;
    dpc_mech_kind kind = c.mech.kind;
    size_t N = dpc_dataset_rows(train);
    if (c.sampler == DPC_SAMPLER_AUTO)
        c.sampler = kind == DPC_MECH_IDENTITY ? DPC_SAMPLER_POISSON : DPC_SAMPLER_FIXED;
    size_t spe = N / c.batch;
    if ((kind == DPC_MECH_BSR || kind == DPC_MECH_BISR) && c.mech.bands == 0) {
        c.mech.bands = dpc_mech_default_bands(c.epochs * spe, c.epochs,
                                              dpc__train_min_sep(&c, spe));
    }
    /* only cyclic Poisson sampling has groups: another sampler would ignore them silently
     * (issue 37: groups = 10^12 with Poisson sampling was accepted) */
    if (c.groups != 0 && c.sampler != DPC_SAMPLER_CYCLIC_POISSON)
        return dpc_error_param(err, DPC_E_INVALID, "groups",
                               "%zu groups: only cyclic Poisson sampling uses groups (the "
                               "sampler is %s; leave groups 0)",
                               c.groups, dpc_sampler_kind_name(c.sampler));
    if (c.sampler == DPC_SAMPLER_CYCLIC_POISSON && c.groups == 0) {
        /* as many groups as the strategy has bands, so the banded route amplifies */
        if (kind == DPC_MECH_IDENTITY) c.groups = 1;
        else if (kind == DPC_MECH_BSR) c.groups = c.mech.bands;
        else
            return dpc_error_param(err, DPC_E_INVALID, "groups",
                                   "must be given for cyclic Poisson sampling with the %s "
                                   "mechanism (no band count to default to)",
                                   dpc_mech_kind_name(kind));
    }
    int blt_default = dpc__train_default_blt(&c.mech);
    if ((kind == DPC_MECH_BSR || kind == DPC_MECH_BISR || blt_default) && !c.workload_explicit &&
        !(1.0 - c.lr * c.weight_decay > 0))
        return dpc_error_param(err, DPC_E_INVALID, "weight_decay",
                               "lr x weight_decay = %g must be < 1 for the %s workload",
                               c.lr * c.weight_decay, dpc_mech_kind_name(kind));
    if ((kind == DPC_MECH_BSR || kind == DPC_MECH_BISR) && !c.workload_explicit) {
        /* the square root of the SGD-with-momentum workload (Kalinin & Lampert 2024) */
        c.mech.momentum = c.momentum;
        c.mech.decay = 1.0 - c.lr * c.weight_decay;
    }
    if ((st = dpc_account_resolve_delta(c.delta, N, c.allow_large_delta, &c.delta, NULL,
                                        err)))
        return st;
    if (kind == DPC_MECH_DENSE && c.mech.steps != c.epochs * spe)
        /* a dense strategy is defined for one n: mech.steps is its size, and mech.dense holds
         * exactly mech.steps^2 values, so the run must have that many steps */
        return dpc_error_param(err, DPC_E_INVALID, "mech.steps",
                               "the dense strategy has n = %zu steps, the run %zu (epochs %zu x "
                               "floor(N / batch) = %zu); choose epochs and batch to match",
                               c.mech.steps, c.epochs * spe, c.epochs, spe);
    c.mech.steps = c.epochs * spe;
    dpc_mech_params chk = c.mech;
    static const double blt_theta = 0.5, blt_omega = 0.5;
    if (blt_default) { /* placeholders: dpc_trainer_new optimizes the default BLT */
        chk.nbuf = 1;
        chk.theta = &blt_theta;
        chk.omega = &blt_omega;
    }
    st = dpc_mech_params_check(&chk, err);
    if (st) return dpc_error_nest(err, "mech");
    *out = c;
    return DPC_OK;
}

size_t dpc__train_min_sep(const dpc_train_config *c, size_t spe)
{
    /* an example's participations are an epoch apart under fixed-order epochs, `groups`
     * (default an epoch) under cyclic Poisson; no minimum separation otherwise */
    return c->sampler == DPC_SAMPLER_FIXED ? spe
           : c->sampler == DPC_SAMPLER_CYCLIC_POISSON ? (c->groups ? c->groups : spe)
                                                      : 1;
}

dpc_status dpc_train_default_blt(const dpc_train_config *resolved, dpc_strategy **out,
                                 dpc_error *err)
{
    if (!out) return dpc_error_param(err, DPC_E_INVALID, "out", "NULL");
    *out = NULL;
    if (!resolved) return dpc_error_param(err, DPC_E_INVALID, "config", "NULL");
    const dpc_train_config *c = resolved;
    if (c->sampler == DPC_SAMPLER_AUTO || c->epochs == 0 || c->mech.steps < c->epochs)
        return dpc_error_param(err, DPC_E_INVALID, "config",
                               "not resolved (call dpc_train_config_resolve first)");
    size_t spe = c->mech.steps / c->epochs;
    /* the optimizer's workload, as for BSR (Kalinin & Lampert 2024), unless given */
    dpc_workload w = c->workload_explicit
                         ? (dpc_workload){c->mech.momentum, c->mech.decay}
                         : (dpc_workload){c->momentum, 1.0 - c->lr * c->weight_decay};
    dpc_status st = dpc_strategy_default_blt(out, c->mech.steps, c->epochs,
                                             dpc__train_min_sep(c, spe), w, err);
    return st ? dpc_error_nest(err, "mech") : DPC_OK;
}

double dpc__train_lr(const dpc_train_config *c, size_t t, size_t n)
{
    switch (c->schedule) {
    case DPC_LR_COSINE: return c->lr * 0.5 * (1.0 + cos(M_PI * (double)t / (double)n));
    case DPC_LR_COOLDOWN: {
        double start = (double)n * (1.0 - c->cooldown_fraction);
        if ((double)t < start || c->cooldown_fraction == 0) return c->lr;
        double frac = ((double)t - start) / ((double)n - start);
        return c->lr * (1.0 - frac * (1.0 - c->cooldown_factor));
    }
    default: return c->lr;
    }
}
