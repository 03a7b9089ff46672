/* train_config.c — trainer configuration: defaults, validation (check_parameter style) and
 * the learning-rate schedules. */
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
    return dpc_error_set(err, DPC_E_INVALID,
                         "schedule: unknown '%s' (expected constant, cosine or cooldown)",
                         s ? s : "(null)");
}

void dpc_train_config_init(dpc_train_config *c)
{
    memset(c, 0, sizeof *c);
    dpc_mech_params_init(&c->mech);
    c->noise_form = DPC_NOISE_AUTO;
    c->sampler = DPC_SAMPLER_POISSON;
    c->batch = 256;
    c->epochs = 1;
    c->delta = 1e-5;
    c->accountant = DPC_ACCOUNTANT_PLD;
    c->clip = 1.0;
    c->lr = 0.1;
    c->schedule = DPC_LR_CONSTANT;
    c->cooldown_fraction = 0.25;
    c->cooldown_factor = 0.05;
    c->threads = 1;
    c->chunk = 32;
}

dpc_status dpc_train_config_check(const dpc_train_config *c, const dpc_dataset *train,
                                  dpc_error *err)
{
    if (!c || !train) return dpc_error_set(err, DPC_E_INVALID, "train: NULL argument");
    if (train->n == 0) return dpc_error_set(err, DPC_E_INVALID, "data: the training set is empty");
    if (c->batch == 0) return dpc_error_set(err, DPC_E_INVALID, "batch: must be >= 1");
    if (c->batch > train->n)
        return dpc_error_set(err, DPC_E_INVALID,
                             "batch: %zu is larger than the training data (%zu examples)",
                             c->batch, train->n);
    if (c->epochs == 0) return dpc_error_set(err, DPC_E_INVALID, "epochs: must be >= 1");
    if (c->precision != DPC_PRECISION_DOUBLE && c->precision != DPC_PRECISION_FLOAT32)
        return dpc_error_param(err, DPC_E_INVALID, "precision", "unknown precision %d",
                               (int)c->precision);
    if (c->isa < DPC_ISA_AUTO || c->isa > DPC_ISA_AVX512)
        return dpc_error_param(err, DPC_E_INVALID, "isa", "unknown instruction-set level %d",
                               (int)c->isa);
    if (!(c->clip > 0) || !isfinite(c->clip))
        return dpc_error_set(err, DPC_E_INVALID, "clip: must be a finite number > 0, got %g",
                             c->clip);
    if (!(c->lr > 0) || !isfinite(c->lr))
        return dpc_error_set(err, DPC_E_INVALID, "lr: must be a finite number > 0, got %g", c->lr);
    if (!(c->momentum >= 0 && c->momentum < 1))
        return dpc_error_set(err, DPC_E_INVALID, "momentum: must be in [0, 1), got %g",
                             c->momentum);
    if (!(c->weight_decay >= 0) || !isfinite(c->weight_decay))
        return dpc_error_set(err, DPC_E_INVALID, "weight-decay: must be >= 0, got %g",
                             c->weight_decay);
    if ((unsigned)c->schedule > DPC_LR_COOLDOWN)
        return dpc_error_set(err, DPC_E_INVALID, "schedule: unknown value %d", (int)c->schedule);
    if (!(c->cooldown_fraction >= 0 && c->cooldown_fraction <= 1))
        return dpc_error_set(err, DPC_E_INVALID, "cooldown-fraction: must be in [0, 1], got %g",
                             c->cooldown_fraction);
    if (!(c->cooldown_factor >= 0 && c->cooldown_factor <= 1))
        return dpc_error_set(err, DPC_E_INVALID, "cooldown-factor: must be in [0, 1], got %g",
                             c->cooldown_factor);
    if (!(c->delta > 0 && c->delta < 1))
        return dpc_error_set(err, DPC_E_INVALID, "delta: must be in (0, 1), got %g", c->delta);
    if (c->epsilon != 0 || c->noise_multiplier == 0) {
        if (!(c->epsilon > 0) || !isfinite(c->epsilon))
            return dpc_error_set(err, DPC_E_INVALID, "epsilon: must be a finite number > 0, got %g",
                                 c->epsilon);
    } else if (!(c->noise_multiplier > 0) || !isfinite(c->noise_multiplier)) {
        return dpc_error_set(err, DPC_E_INVALID, "noise-multiplier: must be > 0, got %g",
                             c->noise_multiplier);
    }
    if (c->accountant != DPC_ACCOUNTANT_PLD && c->accountant != DPC_ACCOUNTANT_RDP &&
        c->accountant != DPC_ACCOUNTANT_GDP && c->accountant != DPC_ACCOUNTANT_ZCDP)
        return dpc_error_set(err, DPC_E_INVALID, "accountant: unknown value %d",
                             (int)c->accountant);
    if (c->threads == 0 || c->threads > 256)
        return dpc_error_set(err, DPC_E_INVALID, "threads: must be in [1, 256], got %zu",
                             c->threads);
    if (c->chunk == 0 || c->chunk > 4096)
        return dpc_error_set(err, DPC_E_INVALID, "chunk: must be in [1, 4096], got %zu", c->chunk);
    if ((unsigned)c->sampler > DPC_SAMPLER_CYCLIC_POISSON)
        return dpc_error_set(err, DPC_E_INVALID, "sampler: unknown value %d", (int)c->sampler);
    dpc_mech_params mp = c->mech;
    mp.steps = 1; /* the trainer sets the real value */
    dpc_status st = dpc_mech_params_check(&mp, err);
    if (st) return st;
    return DPC_OK;
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
