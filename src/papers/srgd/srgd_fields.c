/* srgd_fields.c — the field tables of Accelerated-DP-SRGD (dpcorr/field.h): dpc_srgd_config,
 * dpc_srgd_problem_config and dpc_srgd_step_info, each parameter described once. _init writes
 * the defaults of these tables, the _check functions range-check through them, and the
 * checkpoint items, the CLI's option ranges, defaults and dry-run read them. A doc's head before
 * ": " is the short noun used in messages and checkpoint items (dpc__field_what). */
#include "field/field_def.h"
#include "train/field_items.h"
#include "common/util.h"
#include "srgd/srgd_internal.h"

#include <math.h>

const char *const dpc__srgd_variant_names[3] = {"accel", "srg", "accel-sgd"};
const char *const dpc__srgd_noise_names[3] = {"tree", "honaker", "independent"};
const char *const dpc__srgd_problem_kind_names[4] = {"p1", "p2", "p3", "nesterov"};
static const char *const design_names[] = {"sparse", "sphere"};

#define CFG(m) DPC_FIELD_AT(dpc_srgd_config, m)
#define POS_OPEN (DPC_FIELD_LO_OPEN | DPC_FIELD_HI_OPEN)
static const dpc_field srgd_config_fields[] = {
    {.name = "L", .type = DPC_FIELD_DOUBLE, CFG(L), .lo = 0, .hi = INFINITY,
     .flags = POS_OPEN | DPC_FIELD_UNSET_ZERO,
     .doc = "Lipschitz constant: per-example, of f on C, finite (0: must be set)"},
    {.name = "M", .type = DPC_FIELD_DOUBLE, CFG(M), .lo = 0, .hi = INFINITY,
     .flags = POS_OPEN | DPC_FIELD_UNSET_ZERO,
     .doc = "smoothness: per-example, of f on C, finite (0: must be set)"},
    {.name = "R", .type = DPC_FIELD_DOUBLE, CFG(R), .lo = 0, .hi = INFINITY,
     .flags = DPC_FIELD_LO_OPEN | DPC_FIELD_UNSET_ZERO,
     .doc = "radius: of C = B(0, R) for the default projection; INFINITY: R^p (0: must be set)"},
    {.name = "steps", .type = DPC_FIELD_SIZE, CFG(steps), .lo = 1, .hi = INFINITY,
     .flags = DPC_FIELD_UNSET_ZERO, .doc = "rounds: T (0: set by dpc_srgd_preset)"},
    {.name = "batch", .type = DPC_FIELD_SIZE, CFG(batch), .lo = 1, .hi = INFINITY,
     .flags = DPC_FIELD_UNSET_ZERO, .doc = "batch: B examples per round, B T <= n (0: preset)"},
    {.name = "beta", .type = DPC_FIELD_DOUBLE, CFG(beta), .lo = 0, .hi = INFINITY,
     .flags = POS_OPEN | DPC_FIELD_UNSET_ZERO, .doc = "beta: the step scale 1/beta (0: preset)"},
    {.name = "clip", .type = DPC_FIELD_DOUBLE, CFG(clip), .lo = 0, .hi = INFINITY,
     .flags = DPC_FIELD_LO_OPEN | DPC_FIELD_UNSET_ZERO,
     .doc = "clip: C_Delta on Delta_t(d); INFINITY only when non-private (0: preset)"},
    {.name = "z_step", .type = DPC_FIELD_DOUBLE, CFG(z_step), .def = 0.5, .lo = 0, .hi = 1,
     .flags = DPC_FIELD_LO_OPEN,
     .doc = "z step: s of z_{t+1} = Pi(z_t - s S^_t / beta); 1/2 is the proof's choice"},
    {.name = "variant", .type = DPC_FIELD_ENUM, CFG(variant),
     DPC_FIELD_NAMES(dpc__srgd_variant_names), .doc = "variant: the algorithm (ablations)"},
    {.name = "noise", .type = DPC_FIELD_ENUM, CFG(noise), DPC_FIELD_NAMES(dpc__srgd_noise_names),
     .doc = "noise: the prefix-sum noise"},
    {.name = "epsilon", .type = DPC_FIELD_DOUBLE, CFG(epsilon), .lo = 0, .hi = INFINITY,
     .flags = DPC_FIELD_LO_OPEN | DPC_FIELD_UNSET_ZERO,
     .doc = "epsilon: target; INFINITY = non-private (0: must be set)"},
    {.name = "delta", .type = DPC_FIELD_DOUBLE, CFG(delta), .lo = 0, .hi = 1,
     .flags = POS_OPEN | DPC_FIELD_UNSET_ZERO, .def_text = DPC__DELTA_DEFAULT_TEXT,
     .doc = "delta: target, < 1/N unless allow_large_delta (0: dpc_account_default_delta(N))"},
    {.name = "allow_large_delta", .type = DPC_FIELD_BOOL, CFG(allow_large_delta),
     .flags = DPC_FIELD_RUNTIME,
     .doc = "allow large delta: 1 accepts delta >= 1/N (admits a run, changes no value)"},
    {.name = "calibration", .type = DPC_FIELD_ENUM, CFG(calibration),
     DPC_FIELD_NAMES(dpc__calibration_names), .doc = "calibration: the rule giving mu"},
    {.name = "permute", .type = DPC_FIELD_BOOL, CFG(permute),
     .doc = "permutation: 1 = a public random order of the examples first (0: stream order)"},
    {.name = "project", .type = DPC_FIELD_POINTER, CFG(project),
     .doc = "projection hook onto C (NULL: the l2 ball B(0, R))"},
    {.name = "project_ctx", .type = DPC_FIELD_POINTER, CFG(project_ctx),
     .doc = "context of the projection hook"},
    {.name = "risk", .type = DPC_FIELD_POINTER, CFG(risk),
     .doc = "population risk hook for the telemetry (NULL: mean loss on heldout)"},
    {.name = "risk_ctx", .type = DPC_FIELD_POINTER, CFG(risk_ctx),
     .doc = "context of the risk hook"},
    {.name = "heldout", .type = DPC_FIELD_POINTER, CFG(heldout),
     .doc = "held-out set for the telemetry (borrowed; NULL: none)"},
    {.name = "eval_every", .type = DPC_FIELD_SIZE, CFG(eval_every), .lo = 0, .hi = INFINITY,
     .doc = "evaluation interval: F(y_{t+1}) every this many steps and at the end (0: never)"},
    {.name = "chunk", .type = DPC_FIELD_SIZE, CFG(chunk), .def = 256, .lo = 1, .hi = INFINITY,
     .flags = DPC_FIELD_RUNTIME,
     .doc = "chunk: examples per gradient chunk (memory only: sums stay in example order)"},
};
#undef CFG

#define PC(m) DPC_FIELD_AT(dpc_srgd_problem_config, m)
static const dpc_field srgd_problem_fields[] = {
    {.name = "kind", .type = DPC_FIELD_ENUM, PC(kind), DPC_FIELD_NAMES(dpc__srgd_problem_kind_names),
     .doc = "problem: P1 logistic, P2 least squares, P3 quadratic or Nesterov's function"},
    {.name = "design", .type = DPC_FIELD_ENUM, PC(design), DPC_FIELD_NAMES(design_names),
     .group = "problem", .when = "kind p1|p2",
     .doc = "design: of the features (P1, P2)"},
    {.name = "n", .type = DPC_FIELD_SIZE, PC(n), .def = 65536, .lo = 1, .hi = INFINITY,
     .group = "problem", .doc = "examples: n"},
    {.name = "p", .type = DPC_FIELD_SIZE, PC(p), .def = 32, .lo = 1, .hi = DPC_MODEL_MAX_WIDTH,
     .group = "problem", .doc = "dimension: p (Nesterov: >= 2)"},
    {.name = "relevant", .type = DPC_FIELD_SIZE, PC(relevant), .lo = 1, .hi = INFINITY,
     .flags = DPC_FIELD_UNSET_ZERO, .group = "problem", .when = "kind p1|p2|p3",
     .doc = "relevant coordinates: p0 <= p (0: all p)"},
    {.name = "decades", .type = DPC_FIELD_DOUBLE, PC(decades), .def = 4, .lo = 0, .hi = 30,
     .group = "problem", .when = "kind p1|p2|p3",
     .doc = "spectrum decades: log10 of lambda_1/lambda_p0"},
    {.name = "w_norm", .type = DPC_FIELD_DOUBLE, PC(w_norm), .def = 1, .lo = 0,
     .hi = DPC__SCALE_MAX, .flags = DPC_FIELD_LO_OPEN,
     .group = "problem", .when = "kind p1|p2|p3",
     .doc = "|w0|: (P3 QUADRATIC: |x*|); > R puts x-dagger outside C"},
    {.name = "noise", .type = DPC_FIELD_DOUBLE, PC(noise), .def = 0.5, .lo = 0,
     .hi = DPC__SCALE_MAX, .group = "problem", .when = "kind p2",
     .doc = "label noise: half-width of P2's uniform label noise"},
    {.name = "R", .type = DPC_FIELD_DOUBLE, PC(R), .def = 2, .lo = 0, .hi = DPC__SCALE_MAX,
     .flags = DPC_FIELD_LO_OPEN, .doc = "radius: of C = B(0, R)"},
    {.name = "eval_n", .type = DPC_FIELD_SIZE, PC(eval_n), .def = 100000, .lo = 1,
     .hi = INFINITY, .doc = "Monte-Carlo sample: feature vectors of P1 SPHERE's risk"},
};
#undef PC

#define SI(m) DPC_FIELD_AT(dpc_srgd_step_info, m)
#define OUT (DPC_FIELD_DERIVED | DPC_FIELD_NO_RANGE)
static const dpc_field srgd_step_fields[] = {
    {.name = "step", .type = DPC_FIELD_SIZE, SI(step), .flags = OUT, .doc = "t, the step taken"},
    {.name = "eta", .type = DPC_FIELD_DOUBLE, SI(eta), .flags = OUT, .doc = "eta_t = t + 1"},
    {.name = "max_norm", .type = DPC_FIELD_DOUBLE, SI(max_norm), .flags = OUT,
     .doc = "max_d |Delta_t(d)| before clipping (ACCEL_SGD: max |grad f|)"},
    {.name = "clip_fraction", .type = DPC_FIELD_DOUBLE, SI(clip_fraction), .flags = OUT,
     .doc = "fraction of the batch with that norm > C_Delta"},
    {.name = "noise_norm", .type = DPC_FIELD_DOUBLE, SI(noise_norm), .flags = OUT,
     .doc = "|xi_t|: the prefix-sum noise (ACCEL_SGD: of g_t)"},
    {.name = "b_norm", .type = DPC_FIELD_DOUBLE, SI(b_norm), .flags = OUT,
     .doc = "|xi_t| / beta (the note's |b_t|)"},
    {.name = "grad_norm", .type = DPC_FIELD_DOUBLE, SI(grad_norm), .flags = OUT,
     .doc = "|S^_t / eta_t|: the noisy gradient estimate"},
    {.name = "srg_error", .type = DPC_FIELD_DOUBLE, SI(srg_error), .flags = OUT,
     .doc = "|S_t/eta_t - grad F(x_t)|, noise-free, or NaN"},
    {.name = "grad_F_norm", .type = DPC_FIELD_DOUBLE, SI(grad_F_norm), .flags = OUT,
     .doc = "|grad F(x_t)| or NaN"},
    {.name = "loss", .type = DPC_FIELD_DOUBLE, SI(loss), .flags = OUT,
     .doc = "mean loss of the batch at x_t"},
    {.name = "risk", .type = DPC_FIELD_DOUBLE, SI(risk), .flags = OUT,
     .doc = "F(output after the step) when evaluated, else NaN"},
    {.name = "grad_evals", .type = DPC_FIELD_SIZE, SI(grad_evals), .flags = OUT,
     .doc = "per-example gradient evaluations so far"},
};
#undef SI
#undef OUT
#undef POS_OPEN

static const dpc_field_table srgd_config_table =
    DPC_FIELD_TABLE(dpc_srgd_config, srgd_config_fields);
static const dpc_field_table srgd_problem_table =
    DPC_FIELD_TABLE(dpc_srgd_problem_config, srgd_problem_fields);
static const dpc_field_table srgd_step_table =
    DPC_FIELD_TABLE(dpc_srgd_step_info, srgd_step_fields);

const dpc_field_table *dpc_srgd_config_fields(void) { return &srgd_config_table; }
const dpc_field_table *dpc_srgd_problem_config_fields(void) { return &srgd_problem_table; }
const dpc_field_table *dpc_srgd_step_info_fields(void) { return &srgd_step_table; }
