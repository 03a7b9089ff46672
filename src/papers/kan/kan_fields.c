/* kan_fields.c — the field tables of the KAN paper's parameter structs and step record
 * (dpcorr/field.h): dpc_kan_privacy, dpc_kan_run_config (the paper's run defaults, with its
 * privacy nested), dpc_kan_lcgd_config, dpc_kan_lcgd_step_info and dpc_kan_repro_params. The _init functions write
 * these defaults, the checks range-check through them, the checkpoint items of a run and the
 * CLI's option ranges and defaults read them. A doc's head before ": " is the short noun of
 * messages and checkpoint items (dpc__field_what). */
#include "common/util.h"
#include "field/field_def.h"
#include "train/field_items.h"
#include "kan/kan_internal.h"

#include <math.h>
#include <stdint.h>

/* dpc_noise_form by value (= dpc_noise_form_name). */
static const char *const noise_form_names[] = {"auto", "buffer", "replay"};

#define PV(m) DPC_FIELD_AT(dpc_kan_privacy, m)
static const dpc_field kan_privacy_fields[] = {
    {.name = "n", .type = DPC_FIELD_SIZE, PV(n), .lo = 1, .hi = INFINITY,
     .flags = DPC_FIELD_DERIVED, .doc = "training examples: n (set from the data)"},
    {.name = "batch", .type = DPC_FIELD_SIZE, PV(batch), .lo = 1, .hi = INFINITY,
     .flags = DPC_FIELD_DERIVED, .doc = "batch: B in [1, n] (set from the run)"},
    {.name = "steps", .type = DPC_FIELD_SIZE, PV(steps), .lo = 1, .hi = INFINITY,
     .flags = DPC_FIELD_DERIVED, .doc = "noisy updates: T - 1 (set from the run)"},
    {.name = "lambda", .type = DPC_FIELD_DOUBLE, PV(lambda), .def = 0.5, .lo = 0, .hi = 1,
     .flags = DPC_FIELD_HI_OPEN, .doc = "noise correlation: lambda of Z_t - lambda Z_{t-1}"},
    {.name = "epsilon", .type = DPC_FIELD_DOUBLE, PV(epsilon), .lo = 0, .hi = DPC__SCALE_MAX,
     .flags = DPC_FIELD_LO_OPEN | DPC_FIELD_UNSET_ZERO,
     .doc = "epsilon: target, calibrates the noise (0: noise_multiplier given, or non-private)"},
    {.name = "delta", .type = DPC_FIELD_DOUBLE, PV(delta), .lo = 0, .hi = 1,
     .flags = DPC_FIELD_LO_OPEN | DPC_FIELD_HI_OPEN | DPC_FIELD_UNSET_ZERO,
     .def_text = DPC__DELTA_DEFAULT_TEXT,
     .doc = "delta: target, < 1/n unless allow_large_delta (0: dpc_account_default_delta(n))"},
    {.name = "noise_multiplier", .type = DPC_FIELD_DOUBLE, PV(noise_multiplier), .lo = 0,
     .hi = DPC__SCALE_MAX,
     .doc = "noise multiplier (given): z when epsilon = 0, noise_std = z colnorm(C)"},
    {.name = "calibration", .type = DPC_FIELD_ENUM, PV(calibration),
     DPC_FIELD_NAMES(dpc__calibration_names),
     .doc = "calibration: accountant (exact binomial tail, sensitivity, Gaussian) or paper "
            "(Thm. D.9 / F.12)"},
    {.name = "allow_large_delta", .type = DPC_FIELD_BOOL, PV(allow_large_delta),
     .flags = DPC_FIELD_RUNTIME,
     .doc = "allow large delta: 1 accepts delta >= 1/n (admits a run, changes no value)"},
};
#undef PV

static const dpc_field_table kan_privacy_table =
    DPC_FIELD_TABLE(dpc_kan_privacy, kan_privacy_fields);

#define RC(m) DPC_FIELD_AT(dpc_kan_run_config, m)
static const dpc_field kan_run_fields[] = {
    {.name = "privacy", .type = DPC_FIELD_STRUCT, RC(privacy), .sub = &kan_privacy_table,
     .doc = "privacy: the run's privacy decision (dpc_kan_lcgd_privacy)"},
    {.name = "iterates", .type = DPC_FIELD_SIZE, RC(iterates), .def = 1000, .lo = 2,
     .hi = INFINITY, .doc = "iterates: T, W_0..W_{T-1} (T - 1 updates)"},
    {.name = "batch", .type = DPC_FIELD_SIZE, RC(batch), .def = 100, .lo = 1, .hi = INFINITY,
     .doc = "batch: B, a fresh uniform subset each step"},
    {.name = "eval_every", .type = DPC_FIELD_SIZE, RC(eval_every), .def = 1, .lo = 1,
     .hi = INFINITY, .doc = "evaluation interval: L_S every this many iterates (1: exact average)"},
    {.name = "chunk", .type = DPC_FIELD_SIZE, RC(chunk), .def = 32, .lo = 1, .hi = 4096,
     .flags = DPC_FIELD_RUNTIME, .doc = "chunk: examples per model chunk (generic models)"},
    {.name = "margin_iters", .type = DPC_FIELD_SIZE, RC(margin_iters), .def = 20000, .lo = 1,
     .hi = INFINITY, .doc = "margin iterations: of the NTK-margin solver (kan2)"},
    {.name = "lr", .type = DPC_FIELD_DOUBLE, RC(lr), .def = 0.5, .lo = 0, .hi = INFINITY,
     .flags = DPC_FIELD_LO_OPEN | DPC_FIELD_HI_OPEN, .doc = "step size: eta"},
    {.name = "clip", .type = DPC_FIELD_DOUBLE, RC(clip), .def = 1, .lo = 0, .hi = INFINITY,
     .flags = DPC_FIELD_LO_OPEN, .doc = "clip: per-example clip norm (INFINITY: none)"},
    {.name = "radius", .type = DPC_FIELD_DOUBLE, RC(radius), .def = INFINITY, .lo = 0,
     .hi = INFINITY, .flags = DPC_FIELD_LO_OPEN,
     .doc = "projection radius: R* of B(W_0, R*) (INFINITY: no projection)"},
    {.name = "C_R", .type = DPC_FIELD_DOUBLE, RC(C_R), .def = 2, .lo = 0, .hi = INFINITY,
     .flags = DPC_FIELD_LO_OPEN | DPC_FIELD_HI_OPEN,
     .doc = "C_R: R* = C_R x the margin radius when derived"},
    {.name = "conf_delta", .type = DPC_FIELD_DOUBLE, RC(conf_delta), .def = 0.01, .lo = 0,
     .hi = 1, .flags = DPC_FIELD_LO_OPEN | DPC_FIELD_HI_OPEN,
     .doc = "confidence: level of the theory constants (kan2)"},
};
#undef RC

#define LC(m) DPC_FIELD_AT(dpc_kan_lcgd_config, m)
static const dpc_field kan_lcgd_fields[] = {
    {.name = "n", .type = DPC_FIELD_SIZE, LC(n), .lo = 1, .hi = INFINITY,
     .flags = DPC_FIELD_UNSET_ZERO, .doc = "training examples: n (0: must be set)"},
    {.name = "iterates", .type = DPC_FIELD_SIZE, LC(iterates), .def = 2, .lo = 2,
     .hi = INFINITY, .doc = "iterates: T, W_0..W_{T-1} (T - 1 updates)"},
    {.name = "batch", .type = DPC_FIELD_SIZE, LC(batch), .def = 1, .lo = 1, .hi = INFINITY,
     .doc = "batch: B in [1, n], a fresh uniform subset each step"},
    {.name = "eta", .type = DPC_FIELD_DOUBLE, LC(eta), .def = 0.1, .lo = 0, .hi = INFINITY,
     .flags = DPC_FIELD_LO_OPEN | DPC_FIELD_HI_OPEN, .doc = "step size: eta"},
    {.name = "clip", .type = DPC_FIELD_DOUBLE, LC(clip), .def = 1, .lo = 0, .hi = INFINITY,
     .flags = DPC_FIELD_LO_OPEN, .doc = "clip: C_clip (INFINITY: no clipping)"},
    {.name = "lambda", .type = DPC_FIELD_DOUBLE, LC(lambda), .lo = 0, .hi = 1,
     .flags = DPC_FIELD_HI_OPEN, .doc = "noise correlation: lambda"},
    {.name = "noise_std", .type = DPC_FIELD_DOUBLE, LC(noise_std), .lo = 0, .hi = INFINITY,
     .flags = DPC_FIELD_HI_OPEN, .doc = "noise multiplier: noise std per unit clip (0: none)"},
    {.name = "radius", .type = DPC_FIELD_DOUBLE, LC(radius), .def = INFINITY, .lo = 0,
     .hi = INFINITY, .flags = DPC_FIELD_LO_OPEN,
     .doc = "projection radius: R* (INFINITY: no projection)"},
    {.name = "noise_form", .type = DPC_FIELD_ENUM, LC(noise_form), .def = DPC_NOISE_REPLAY,
     DPC_FIELD_NAMES(noise_form_names),
     .doc = "noise form: replay (no memory beyond the iterate) or buffer"},
    {.name = "noise_stream", .type = DPC_FIELD_U64, LC(noise_stream), .lo = 0, .hi = UINT32_MAX,
     .doc = "noise stream: Z = DPC_STREAM_ID(DPC_STREAM_NOISE, noise_stream)"},
    {.name = "batch_stream", .type = DPC_FIELD_U64, LC(batch_stream), .def = 1, .lo = 0,
     .hi = UINT32_MAX,
     .doc = "batch stream: batches from DPC_STREAM_ID(DPC_STREAM_SAMPLER, batch_stream)"},
};
#undef LC

#define SI(m) DPC_FIELD_AT(dpc_kan_lcgd_step_info, m)
#define OUT (DPC_FIELD_DERIVED | DPC_FIELD_NO_RANGE)
static const dpc_field kan_step_fields[] = {
    {.name = "t", .type = DPC_FIELD_SIZE, SI(t), .flags = OUT,
     .doc = "index of the iterate just produced (1..T-1)"},
    {.name = "batch_loss", .type = DPC_FIELD_DOUBLE, SI(batch_loss), .flags = OUT,
     .doc = "mean loss of the batch at W_{t-1} (not private)"},
    {.name = "clipped", .type = DPC_FIELD_SIZE, SI(clipped), .flags = OUT,
     .doc = "examples of the batch with ||g_i|| > clip"},
    {.name = "projected", .type = DPC_FIELD_BOOL, SI(projected), .flags = OUT,
     .doc = "1 if the projection changed the step"},
    {.name = "dist", .type = DPC_FIELD_DOUBLE, SI(dist), .flags = OUT,
     .doc = "||W_t - W_0|| after projection"},
};
#undef SI
#undef OUT

/* dpc_kan_act by value */
static const char *const act_names[] = {"sigmoid", "tanh"};

#define K2(m) DPC_FIELD_AT(dpc_kan2_config, m)
static const dpc_field kan2_fields[] = {
    {.name = "d", .type = DPC_FIELD_SIZE, K2(d), .lo = 1, .hi = 16777216,
     .flags = DPC_FIELD_UNSET_ZERO,
     .doc = "input dimension (inputs in the unit ball of R^d; the parser takes the data's; "
            "0: must be set)"},
    {.name = "m", .type = DPC_FIELD_SIZE, K2(m), .lo = 1, .hi = 16777216,
     .flags = DPC_FIELD_UNSET_ZERO, .doc = "hidden width (kan2:M; 0: must be set)"},
    {.name = "grid", .type = DPC_FIELD_SIZE, K2(grid), .def = 5, .lo = 1, .hi = 256,
     .doc = "G: intervals of the cubic B-spline basis on [-1, 1] (p = G + 3 bases)"},
    {.name = "act", .type = DPC_FIELD_ENUM, K2(act), .def = DPC_KAN_SIGMOID,
     DPC_FIELD_NAMES(act_names), .doc = "sigma: the hidden activation"},
};
#undef K2
static const dpc_field_table kan2_table = DPC_FIELD_TABLE(dpc_kan2_config, kan2_fields);
const dpc_field_table *dpc_kan2_config_fields(void) { return &kan2_table; }

/* dpc_kan_repro_scale by value */
static const char *const repro_scale_names[] = {"full", "quick", "smoke"};

#define RP(m) DPC_FIELD_AT(dpc_kan_repro_params, m)
static const dpc_field kan_repro_fields[] = {
    {.name = "scale", .type = DPC_FIELD_ENUM, RP(scale), .def = DPC_KAN_REPRO_FULL,
     DPC_FIELD_NAMES(repro_scale_names),
     .doc = "scale: full (the reported grids), quick (seconds) or smoke (sanitizer runs)"},
    {.name = "seed", .type = DPC_FIELD_U64, RP(seed), .def = 20240101, .flags = DPC_FIELD_NO_RANGE,
     .doc = "seed: root seed of every run (each adds its salt)"},
};
#undef RP

static const dpc_field_table kan_run_table = DPC_FIELD_TABLE(dpc_kan_run_config, kan_run_fields);
static const dpc_field_table kan_lcgd_table =
    DPC_FIELD_TABLE(dpc_kan_lcgd_config, kan_lcgd_fields);
static const dpc_field_table kan_step_table =
    DPC_FIELD_TABLE(dpc_kan_lcgd_step_info, kan_step_fields);

const dpc_field_table *dpc_kan_privacy_fields(void) { return &kan_privacy_table; }
const dpc_field_table *dpc_kan_run_config_fields(void) { return &kan_run_table; }
const dpc_field_table *dpc_kan_lcgd_config_fields(void) { return &kan_lcgd_table; }
const dpc_field_table *dpc_kan_lcgd_step_info_fields(void) { return &kan_step_table; }
static const dpc_field_table kan_repro_table =
    DPC_FIELD_TABLE(dpc_kan_repro_params, kan_repro_fields);
const dpc_field_table *dpc_kan_repro_params_fields(void) { return &kan_repro_table; }

/* The manual of dpc_kan_rate_in, the inputs of the bound evaluators: no _init (every value is
 * the run's), so 0 is "must be set" for the counts and the positive rates; the evaluators
 * range-check every field through it (delta only where A_van reads it). */
#define RI(m) DPC_FIELD_AT(dpc_kan_rate_in, m)
#define SET (DPC_FIELD_UNSET_ZERO | DPC_FIELD_HI_OPEN)
#define RATE (DPC_FIELD_UNSET_ZERO | DPC_FIELD_LO_OPEN | DPC_FIELD_HI_OPEN)
static const dpc_field rate_fields[] = {
    {.name = "n", .type = DPC_FIELD_SIZE, RI(n), .lo = 1, .hi = INFINITY, .flags = SET,
     .def_text = "must be set", .doc = "training examples"},
    {.name = "m", .type = DPC_FIELD_SIZE, RI(m), .lo = 1, .hi = INFINITY, .flags = SET,
     .def_text = "must be set", .doc = "hidden width"},
    {.name = "d", .type = DPC_FIELD_SIZE, RI(d), .lo = 1, .hi = INFINITY, .flags = SET,
     .def_text = "must be set", .doc = "input dimension"},
    {.name = "T", .type = DPC_FIELD_SIZE, RI(T), .lo = 1, .hi = INFINITY, .flags = SET,
     .def_text = "must be set", .doc = "iterations"},
    {.name = "B", .type = DPC_FIELD_SIZE, RI(B), .lo = 1, .hi = INFINITY, .flags = SET,
     .def_text = "must be set", .doc = "batch size"},
    {.name = "eta", .type = DPC_FIELD_DOUBLE, RI(eta), .lo = 0, .hi = INFINITY, .flags = RATE,
     .def_text = "must be set", .doc = "learning rate"},
    {.name = "lambda", .type = DPC_FIELD_DOUBLE, RI(lambda), .lo = 0, .hi = 1,
     .flags = DPC_FIELD_HI_OPEN, .doc = "lambda of DP-lambda-CGD (0: independent noise)"},
    {.name = "noise_std", .type = DPC_FIELD_DOUBLE, RI(noise_std), .lo = 0, .hi = INFINITY,
     .flags = DPC_FIELD_HI_OPEN, .doc = "the paper's kappa: noise std per unit clip (0: none)"},
    {.name = "gamma", .type = DPC_FIELD_DOUBLE, RI(gamma), .lo = 0, .hi = INFINITY,
     .flags = RATE, .def_text = "must be set", .doc = "the NTK margin"},
    {.name = "delta", .type = DPC_FIELD_DOUBLE, RI(delta), .lo = 0, .hi = 1, .flags = RATE,
     .def_text = "must be set for A_van",
     .doc = "confidence level (not the DP delta), read by A_van's explicit logs"},
};
#undef RI
#undef SET
#undef RATE
static const dpc_field_table rate_table = DPC_FIELD_TABLE(dpc_kan_rate_in, rate_fields);
const dpc_field_table *dpc_kan_rate_in_fields(void) { return &rate_table; }

/* The manual of dpc_kan2_theory_want: which theory settings dpc_kan2_run_theory sets. */
#define TW(m) DPC_FIELD_AT(dpc_kan2_theory_want, m)
static const dpc_field want_fields[] = {
    {.name = "lr", .type = DPC_FIELD_BOOL, TW(lr), .doc = "1: the run's lr = eta_max"},
    {.name = "clip", .type = DPC_FIELD_BOOL, TW(clip), .doc = "1: the run's clip = G_c"},
    {.name = "radius", .type = DPC_FIELD_BOOL, TW(radius),
     .doc = "1: the run's radius = R* (computes the NTK margin)"},
    {.name = "margin", .type = DPC_FIELD_BOOL, TW(margin),
     .doc = "1: the NTK margin at W0 when n <= 2048"},
};
#undef TW
static const dpc_field_table want_table = DPC_FIELD_TABLE(dpc_kan2_theory_want, want_fields);
const dpc_field_table *dpc_kan2_theory_want_fields(void) { return &want_table; }
