/* train_config.c — trainer configuration: defaults, validation (check_parameter style) and
 * the learning-rate schedules. */
#include "common/util.h"
#include "field/field_def.h"
#include "mech/mech_internal.h"
#include "train/train_internal.h"
#include "dpcorr/io.h"
#include "dpcorr/isa.h"

#include <math.h>
#include <stdio.h>
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

static const char *const form_names[] = {"auto", "buffer", "replay"};
static const char *const accountant_names[] = {"rdp", "pld", "zcdp", "gdp"};
static const char *const precision_names[] = {"double", "float32"};
static const char *const isa_names[] = {"auto", "sse2", "avx2", "avx512"};

#define TC(m) DPC_FIELD_AT(dpc_train_config, m)
#define POS (DPC_FIELD_LO_OPEN | DPC_FIELD_HI_OPEN) /* (0, inf): a finite number > 0 */
/* The manual of dpc_train_config: one row per field, in struct order (dpcorr/train.h). */
static const dpc_field train_fields[] = {
    {.name = "mech", .type = DPC_FIELD_STRUCT, TC(mech), .flags = DPC_FIELD_OWN_CHECK,
     .sub = &dpc__mech_params_table, .doc = "the mechanism: kind and parameters (dpc_mech_params; "
                                    "steps set by the run, bands 0 = the run's default)"},
    {.name = "noise_form", .type = DPC_FIELD_ENUM, TC(noise_form), .def = DPC_NOISE_AUTO,
     DPC_FIELD_NAMES(form_names), .flags = DPC_FIELD_RUNTIME,
     .doc = "state of the noise generators: auto (buffer when it fits noise_memory), buffer, "
            "replay; the noise is the same"},
    {.name = "noise_memory", .type = DPC_FIELD_SIZE, TC(noise_memory),
     .flags = DPC_FIELD_NO_RANGE | DPC_FIELD_RUNTIME, .def_text = "1 GiB",
     .doc = "bytes allowed for buffer-form noise state (0 = 1 GiB)"},
    {.name = "sampler", .label = "sampler",
     .type = DPC_FIELD_INT, TC(sampler), .def = DPC_SAMPLER_AUTO,
     .flags = DPC_FIELD_NO_RANGE, .def_text = "auto",
     .doc = "dpc_sampler_kind, or DPC_SAMPLER_AUTO (poisson for identity, fixed-order epochs "
            "otherwise; dpc_train_config_resolve)"},
    {.name = "batch", .label = "batch",
     .type = DPC_FIELD_SIZE, TC(batch), .def = 256, .lo = 1, .hi = INFINITY,
     .flags = DPC_FIELD_HI_OPEN, .group = "optimization",
     .doc = "(expected) batch size B, at most the training examples"},
    {.name = "epochs", .label = "epochs",
     .type = DPC_FIELD_SIZE, TC(epochs), .def = 1, .lo = 1, .hi = INFINITY,
     .flags = DPC_FIELD_HI_OPEN,
     .group = "optimization",
     .doc = "passes over the data: n = epochs x floor(N / B) steps, at most "
            "DPC_TRAIN_MAX_STEPS"},
    {.name = "groups", .label = "groups",
     .type = DPC_FIELD_SIZE, TC(groups), .lo = 1, .hi = INFINITY,
     .flags = DPC_FIELD_UNSET_ZERO | DPC_FIELD_HI_OPEN, .def_text = "the strategy's bands",
     .doc = "cyclic Poisson: number of groups (0 = the strategy's bands); 0 for other samplers"},
    {.name = "workload_explicit", .type = DPC_FIELD_BOOL, TC(workload_explicit),
     .flags = DPC_FIELD_UNRECORDED,
     .doc = "bsr, bisr, blt: 1 = mech.momentum/decay as given; 0 = the optimizer's workload"},
    {.name = "epsilon", .label = "epsilon",
     .type = DPC_FIELD_DOUBLE, TC(epsilon), .lo = 0, .hi = INFINITY,
     .flags = POS | DPC_FIELD_UNSET_ZERO,
     .def_text = "none",
     .doc = "target epsilon (the noise is calibrated), or 0 to give noise_multiplier"},
    {.name = "delta", .label = "delta",
     .type = DPC_FIELD_DOUBLE, TC(delta), .lo = 0, .hi = 1,
     .flags = POS | DPC_FIELD_UNSET_ZERO, .def_text = DPC__DELTA_DEFAULT_TEXT,
     .doc = "target delta, below 1/N unless allow_large_delta; 0 = derived from N"},
    {.name = "noise_multiplier", .label = "noise multiplier",
     .type = DPC_FIELD_DOUBLE, TC(noise_multiplier), .lo = 0,
     .hi = INFINITY, .flags = POS | DPC_FIELD_UNSET_ZERO, .def_text = "calibrated",
     .doc = "z: noise std per row of Z over clip x colnorm(C), given when epsilon = 0"},
    {.name = "allow_large_delta", .type = DPC_FIELD_BOOL, TC(allow_large_delta),
     .flags = DPC_FIELD_UNRECORDED, /* what it accepts changes no value of the run */
     .doc = "1 accepts delta >= 1/N (a mechanism may then publish a record outright)"},
    {.name = "accountant", .label = "accountant",
     .type = DPC_FIELD_ENUM, TC(accountant), .def = DPC_ACCOUNTANT_PLD,
     DPC_FIELD_NAMES(accountant_names),
     .doc = "accountant of the amplified routes: rdp or pld (dpc_account_default_accountant)"},
    {.name = "clip", .label = "clip",
     .type = DPC_FIELD_DOUBLE, TC(clip), .def = 1, .lo = 0, .hi = INFINITY,
     .flags = POS, .group = "optimization", .doc = "per-example L2 clip norm C"},
    {.name = "lr", .label = "learning rate",
     .type = DPC_FIELD_DOUBLE, TC(lr), .def = 0.1, .lo = 0, .hi = INFINITY,
     .flags = POS, .group = "optimization", .doc = "learning rate (lr x clip below 1e150)"},
    {.name = "momentum", .label = "momentum",
     .type = DPC_FIELD_DOUBLE, TC(momentum), .lo = 0, .hi = 1,
     .flags = DPC_FIELD_HI_OPEN, .group = "optimization", .doc = "heavy-ball momentum"},
    {.name = "weight_decay", .label = "weight decay",
     .type = DPC_FIELD_DOUBLE, TC(weight_decay), .lo = 0,
     .hi = INFINITY, .flags = DPC_FIELD_HI_OPEN, .group = "optimization", .doc = "L2 weight decay"},
    {.name = "schedule", .label = "schedule",
     .type = DPC_FIELD_ENUM, TC(schedule), .def = DPC_LR_CONSTANT,
     DPC_FIELD_NAMES(sched_names), .group = "optimization", .doc = "learning-rate schedule"},
    {.name = "cooldown_fraction", .label = "cooldown fraction",
     .type = DPC_FIELD_DOUBLE, TC(cooldown_fraction), .def = 0.25,
     .lo = 0, .hi = 1, .group = "optimization", .when = "schedule cooldown",
     .doc = "cooldown schedule: the last fraction of the steps that decay"},
    {.name = "cooldown_factor", .label = "cooldown factor",
     .type = DPC_FIELD_DOUBLE, TC(cooldown_factor), .def = 0.05,
     .lo = 0, .hi = 1, .group = "optimization", .when = "schedule cooldown",
     .doc = "cooldown schedule: the final lr factor"},
    {.name = "threads", .type = DPC_FIELD_SIZE, TC(threads), .def = 1, .lo = 1, .hi = 256,
     .flags = DPC_FIELD_RUNTIME, .group = "execution",
     .doc = "worker threads; results do not depend on them"},
    {.name = "chunk", .label = "chunk",
     .type = DPC_FIELD_SIZE, TC(chunk), .def = 32, .lo = 1, .hi = 4096,
     .group = "execution", .doc = "examples per chunk; part of the reduction order"},
    {.name = "precision", .label = "precision",
     .type = DPC_FIELD_ENUM, TC(precision), .def = DPC_PRECISION_DOUBLE,
     DPC_FIELD_NAMES(precision_names),
     .doc = "double, or float32 parameters, activations and gradients (dense models)"},
    {.name = "isa", .type = DPC_FIELD_ENUM, TC(isa), .def = DPC_ISA_AUTO,
     DPC_FIELD_NAMES(isa_names), .flags = DPC_FIELD_RUNTIME,
     .doc = "instruction-set level of the noise generators (auto = the best this CPU runs)"},
    {.name = "transport", .type = DPC_FIELD_POINTER, TC(transport), .flags = DPC_FIELD_RUNTIME,
     .doc = "NULL: one process; else this rank of a data-parallel run (borrowed)"},
    {.name = "canaries", .type = DPC_FIELD_POINTER, TC(canaries), .flags = DPC_FIELD_UNRECORDED,
     .doc = "NULL: no canaries; else the audit's canary slots (borrowed)"},
};
#undef TC
#undef POS
static const dpc_field_table train_table = DPC_FIELD_TABLE(dpc_train_config, train_fields);

const dpc_field_table *dpc_train_config_fields(void) { return &train_table; }

void dpc_train_config_init(dpc_train_config *c)
{
    dpc_field_defaults(&train_table, c);
    c->accountant = dpc_account_default_accountant(); /* the one rule (PLD), the table's too */
}

#define SI(m) DPC_FIELD_AT(dpc_step_info, m)
static const dpc_field step_fields[] = {
    {.name = "step", .type = DPC_FIELD_SIZE, SI(step), .flags = DPC_FIELD_DERIVED,
     .doc = "the step just taken (0-based)"},
    {.name = "batch", .type = DPC_FIELD_SIZE, SI(batch), .flags = DPC_FIELD_DERIVED,
     .doc = "realized batch size (not privatized)"},
    {.name = "loss", .type = DPC_FIELD_DOUBLE, SI(loss), .flags = DPC_FIELD_DERIVED,
     .doc = "mean per-example loss on the batch, before the update (not privatized)"},
    {.name = "clip_fraction", .type = DPC_FIELD_DOUBLE, SI(clip_fraction),
     .flags = DPC_FIELD_DERIVED, .doc = "fraction of the batch whose gradient norm exceeded clip"},
    {.name = "lr", .type = DPC_FIELD_DOUBLE, SI(lr), .flags = DPC_FIELD_DERIVED,
     .doc = "the learning rate of the step (schedule applied)"},
};
#undef SI
static const dpc_field_table step_table = DPC_FIELD_TABLE(dpc_step_info, step_fields);

const dpc_field_table *dpc_step_info_fields(void) { return &step_table; }

#define TR(m) DPC_FIELD_AT(dpc_train_record, m)
static const dpc_field record_fields[] = {
    {.name = "step", .type = DPC_FIELD_SIZE, TR(step), .flags = DPC_FIELD_DERIVED,
     .doc = "steps done when recorded (1..steps)"},
    {.name = "epoch", .type = DPC_FIELD_SIZE, TR(epoch), .flags = DPC_FIELD_DERIVED,
     .doc = "the epoch of the record"},
    {.name = "train_loss", .type = DPC_FIELD_DOUBLE, TR(train_loss), .flags = DPC_FIELD_DERIVED,
     .doc = "mean training loss (non-private telemetry); NAN when not measured"},
    {.name = "test_loss", .type = DPC_FIELD_DOUBLE, TR(test_loss), .flags = DPC_FIELD_DERIVED,
     .doc = "mean test loss; NAN when not measured"},
    {.name = "test_accuracy", .type = DPC_FIELD_DOUBLE, TR(test_accuracy),
     .flags = DPC_FIELD_DERIVED, .doc = "test accuracy; NAN for regression or not measured"},
    {.name = "epsilon", .type = DPC_FIELD_DOUBLE, TR(epsilon), .flags = DPC_FIELD_DERIVED,
     .doc = "epsilon spent so far"},
    {.name = "time_s", .type = DPC_FIELD_DOUBLE, TR(time_s), .flags = DPC_FIELD_DERIVED,
     .doc = "seconds since the run started (in the process that recorded it)"},
};
#undef TR
static const dpc_field_table record_table = DPC_FIELD_TABLE(dpc_train_record, record_fields);

const dpc_field_table *dpc_train_record_fields(void) { return &record_table; }

/* The optimizer and execution fields: the table's ranges (dpc_field_check) and the products
 * that must not overflow. */
static dpc_status check_optimizer(const dpc_train_config *c, dpc_error *err)
{
    /* a clipped step moves the parameters by up to lr x clip (before noise): beyond 1e150 the
     * squared norms of clipping, weight decay and the loss overflow double (sqrt(DBL_MAX) is
     * 1.3e154), and the run would report an overflowed model as trained */
    if (c->lr * c->clip > DPC__SCALE_MAX) /* blamed on the larger factor */
        return dpc_error_param(err, DPC_E_RANGE, c->clip > c->lr ? "clip" : "lr",
                               "lr x clip = %g overflows: a step must stay below 1e150 (lr %g, "
                               "clip %g)", c->lr * c->clip, c->lr, c->clip);
    if (c->lr * c->weight_decay > DPC__SCALE_MAX) /* the decay step would overflow at once */
        return dpc_error_param(err, DPC_E_RANGE, "weight_decay",
                               "lr x weight_decay = %g overflows: must stay below 1e150",
                               c->lr * c->weight_decay);
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
    if (c->noise_multiplier == 0 && c->epsilon == 0)
        return dpc_error_param(err, DPC_E_INVALID, "epsilon",
                               "must be a finite number > 0, got 0 (or give noise_multiplier)");
    if (c->noise_multiplier * c->clip > DPC__SCALE_MAX) {
        /* the noise's standard deviation (z x clip x colnorm) and its square would overflow */
        return dpc_error_param(err, DPC_E_RANGE, "noise_multiplier",
                               "noise_multiplier x clip = %g overflows: must stay below 1e150",
                               c->noise_multiplier * c->clip);
    }
    return DPC_OK;
}

dpc_status dpc_train_config_check(const dpc_train_config *c, const dpc_dataset *train,
                                  dpc_error *err)
{
    if (!c) return dpc_error_param(err, DPC_E_INVALID, "config", "NULL");
    if (!train) return dpc_error_param(err, DPC_E_INVALID, "train", "NULL data set");
    size_t N = dpc_dataset_rows(train); /* a shard: the whole set's rows */
    if (N == 0) return dpc_error_param(err, DPC_E_INVALID, "train", "the data set is empty");
    /* every field's own range first (the table's), then the refusals between fields */
    dpc_status st = dpc_field_check(&train_table, c, err);
    if (st) return st;
    if (c->batch > N)
        return dpc_error_param(err, DPC_E_INVALID, "batch",
                               "%zu is larger than the training data (%zu examples)", c->batch,
                               N);
    size_t spe = N / c->batch;
    if (c->epochs > DPC_TRAIN_MAX_STEPS / spe)
        return dpc_error_param(err, DPC_E_RANGE, "epochs",
                               "%zu epochs of %zu steps exceed the limit of %zu steps",
                               c->epochs, spe, DPC_TRAIN_MAX_STEPS);
    st = check_optimizer(c, err);
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

void dpc_train_config_report_json(dpc_json_writer *w, const dpc_train_config *c,
                                  dpc_isa model_isa)
{
    /* the mechanism's keys predate the field tables ("mech" = mech.kind) and are kept for
     * readers */
    dpc_json_str(w, "mech", dpc_mech_kind_name(c->mech.kind));
    dpc_json_num(w, "nu", c->mech.nu);
    dpc_json_num(w, "lambda", c->mech.lambda);
    dpc_json_int(w, "bands", (long long)c->mech.bands);
    dpc_json_num(w, "mech_momentum", c->mech.momentum);
    dpc_json_num(w, "mech_decay", c->mech.decay);
    static const char privacy[] = " epsilon delta noise_multiplier allow_large_delta accountant ";
    const dpc_field_table *t = dpc_train_config_fields();
    for (size_t i = 0; i < t->count; i++) {
        const dpc_field *f = &t->fields[i];
        char key[128];
        snprintf(key, sizeof key, " %s ", f->name);
        if (strstr(privacy, key)) continue;
        if (!strcmp(f->name, "sampler")) {
            dpc_json_str(w, f->name, dpc_sampler_kind_name(c->sampler));
        } else if (!strcmp(f->name, "isa")) {
            dpc_json_str(w, "isa", dpc_isa_name(model_isa));
            dpc_json_str(w, "isa_noise", dpc_isa_name(c->isa));
        } else {
            dpc_json_field(w, f, c);
        }
    }
}

void dpc_train_memory_report_json(dpc_json_writer *w, const dpc_dataset *train,
                                  const dpc_dataset *test, size_t n_params, size_t trainer_bytes,
                                  long long peak_rss_bytes)
{
    size_t data_bytes = train->n * (train->d + 1) * sizeof(double) +
                        (test ? test->n * (test->d + 1) * sizeof(double) : 0);
    dpc_json_obj(w, "memory");
    dpc_json_int(w, "data_bytes", (long long)data_bytes);
    dpc_json_int(w, "train_rows_held", (long long)train->n);
    if (peak_rss_bytes >= 0) dpc_json_int(w, "peak_rss_bytes", peak_rss_bytes);
    dpc_json_int(w, "parameter_bytes", (long long)(n_params * sizeof(double)));
    dpc_json_int(w, "trainer_bytes", (long long)trainer_bytes);
    dpc_json_end(w);
}
