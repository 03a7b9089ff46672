/* linreg_fields.c — the field tables of the linear-regression paper's parameter structs and
 * step record (dpcorr/field.h): dpc_linreg_opts (the run's options, 0 = the paper's default,
 * with the public prior nested), dpc_linreg_prior, dpc_dpstat_params, dpc_linreg_ssp_opts (the SSP
 * baseline's; the zeroed struct is its default) and dpc_linreg_step_info.
 * The _init functions write these defaults, the checks range-check through them, and the CLI's
 * option ranges, defaults and dry-run read them. */
#include "common/util.h"
#include "field/field_def.h"
#include "train/field_items.h"
#include "linreg/linreg_internal.h"

#include <math.h>

const char *const dpc__linreg_algo_names[4] = {"dp-ambssgd", "dp-ssgd", "dp-sgd-fixed", "sgd"};
const char *const dpc__dpstat_rule_names[2] = {"margin", "paper"};

#define SCALE DPC__SCALE_MAX /* scales enter squared: larger ones overflow (issue 28) */

#define PR(m) DPC_FIELD_AT(dpc_linreg_prior, m)
static const dpc_field prior_fields[] = {
    {.name = "h_norm", .type = DPC_FIELD_DOUBLE, PR(h_norm), .lo = 0, .hi = SCALE,
     .flags = DPC_FIELD_LO_OPEN | DPC_FIELD_UNSET_ZERO,
     .doc = "||H||_2: the covariance's norm (0: must be set, e.g. from the data)"},
    {.name = "kappa", .type = DPC_FIELD_DOUBLE, PR(kappa), .lo = 1, .hi = SCALE,
     .flags = DPC_FIELD_UNSET_ZERO, .doc = "kappa: ||H||_2 / lambda_min(H) (0: must be set)"},
    {.name = "r_x", .type = DPC_FIELD_DOUBLE, PR(r_x), .lo = 0, .hi = SCALE,
     .flags = DPC_FIELD_LO_OPEN | DPC_FIELD_UNSET_ZERO,
     .doc = "R_x: E[||x||^2 x x^T] <= R_x^2 H (0: must be set)"},
    {.name = "k2", .type = DPC_FIELD_DOUBLE, PR(k2), .def = 1.6329931618554521 /* sqrt(8/3) */,
     .lo = 0, .hi = SCALE, .flags = DPC_FIELD_LO_OPEN,
     .doc = "K2: of the (H, K2, a, beta)-Tail (Def. 2.1); sqrt(8/3) for Gaussians"},
    {.name = "a", .type = DPC_FIELD_DOUBLE, PR(a), .def = 0.5, .lo = 0, .hi = 10,
     .flags = DPC_FIELD_LO_OPEN,
     .doc = "tail exponent: a, 1/2 Gaussian, 1 sub-exponential (beyond 10, (ln N)^(2a) "
            "overflows)"},
    {.name = "w_bound", .type = DPC_FIELD_DOUBLE, PR(w_bound), .def = 1, .lo = 0, .hi = SCALE,
     .doc = "||w*||_H bound: enters B and the fixed clip"},
    {.name = "sigma_bound", .type = DPC_FIELD_DOUBLE, PR(sigma_bound), .def = 1, .lo = 0,
     .hi = SCALE, .doc = "label-noise std bound: enters B and the fixed clip"},
};
#undef PR
static const dpc_field_table prior_table = DPC_FIELD_TABLE(dpc_linreg_prior, prior_fields);

#define OP(m) DPC_FIELD_AT(dpc_linreg_opts, m)
static const dpc_field opts_fields[] = {
    {.name = "algo", .type = DPC_FIELD_ENUM, OP(algo), DPC_FIELD_NAMES(dpc__linreg_algo_names),
     .doc = "algorithm: set by dpc_linreg_opts_init"},
    {.name = "epsilon", .type = DPC_FIELD_DOUBLE, OP(epsilon), .lo = 0, .hi = SCALE,
     .flags = DPC_FIELD_LO_OPEN | DPC_FIELD_UNSET_ZERO,
     .doc = "epsilon: target, calibrates the noise (0: noise_multiplier given)"},
    {.name = "delta", .type = DPC_FIELD_DOUBLE, OP(delta), .lo = 0, .hi = 1,
     .flags = DPC_FIELD_LO_OPEN | DPC_FIELD_HI_OPEN | DPC_FIELD_UNSET_ZERO,
     .def_text = DPC__DELTA_DEFAULT_TEXT,
     .doc = "delta: target, < 1/N unless allow_large_delta (0: dpc_account_default_delta(N))"},
    {.name = "allow_large_delta", .type = DPC_FIELD_BOOL, OP(allow_large_delta),
     .flags = DPC_FIELD_RUNTIME,
     .doc = "allow large delta: 1 accepts delta >= 1/N (admits a run, changes no value)"},
    {.name = "noise_multiplier", .type = DPC_FIELD_DOUBLE, OP(noise_multiplier), .lo = 0,
     .hi = SCALE, .flags = DPC_FIELD_LO_OPEN | DPC_FIELD_UNSET_ZERO,
     .doc = "noise multiplier: z when epsilon = 0 (the paper's alpha)"},
    {.name = "calibration", .type = DPC_FIELD_ENUM, OP(calibration),
     DPC_FIELD_NAMES(dpc__calibration_names), .doc = "calibration: accountant or paper"},
    {.name = "prior", .type = DPC_FIELD_STRUCT, OP(prior), .sub = &prior_table,
     .doc = "prior: public prior knowledge (note §2.5)"},
    {.name = "c1", .type = DPC_FIELD_DOUBLE, OP(c1), .def = 3, .lo = 0, .hi = INFINITY,
     .flags = DPC_FIELD_LO_OPEN | DPC_FIELD_HI_OPEN | DPC_FIELD_UNSET_ZERO,
     .doc = "c1: T = ceil(c1 kappa ln N), rounded up to even (0: 3)"},
    {.name = "steps", .type = DPC_FIELD_SIZE, OP(steps), .lo = 2, .hi = INFINITY,
     .flags = DPC_FIELD_UNSET_ZERO, .doc = "steps: T, even, instead of c1 (0: from c1)"},
    {.name = "stat_batch", .type = DPC_FIELD_SIZE, OP(stat_batch), .lo = 0, .hi = INFINITY,
     .doc = "stat batch: s (0: b/10 for AMBSSGD, none otherwise)"},
    {.name = "eta", .type = DPC_FIELD_DOUBLE, OP(eta), .lo = 0, .hi = SCALE,
     .flags = DPC_FIELD_LO_OPEN | DPC_FIELD_UNSET_ZERO,
     .def_text = "b/(R_x^2 + (b-1)||H||); SSGD: min(1/(4 R_x^2), Thm. 3.2's cap)",
     .doc = "step size: eta (0: the theory's)"},
    {.name = "clip", .type = DPC_FIELD_DOUBLE, OP(clip), .lo = 0, .hi = SCALE,
     .flags = DPC_FIELD_LO_OPEN | DPC_FIELD_UNSET_ZERO,
     .def_text = "R_x sqrt(w_bound^2 + sigma_bound^2) (ln N)^(2a), Cor. 3.3",
     .doc = "clip: zeta of FIXED and SSGD (0: Cor. 3.3's)"},
    {.name = "dpstat_k", .type = DPC_FIELD_SIZE, OP(dpstat_k), .def = 40,
     .flags = DPC_FIELD_NO_RANGE,
     .doc = "K doublings: of DP-STAT, in [1, DPC_LINREG_MAX_DPSTAT_K] or "
            "DPC_LINREG_DPSTAT_K_PAPER (0: 40)"},
    {.name = "dpstat_rule", .type = DPC_FIELD_ENUM, OP(dpstat_rule),
     DPC_FIELD_NAMES(dpc__dpstat_rule_names), .doc = "DP-STAT rule: margin or paper"},
    {.name = "dpstat_beta", .type = DPC_FIELD_DOUBLE, OP(dpstat_beta), .lo = 0, .hi = 1,
     .flags = DPC_FIELD_LO_OPEN | DPC_FIELD_HI_OPEN | DPC_FIELD_UNSET_ZERO,
     .doc = "beta of Gamma: (0: 1/N)"},
    {.name = "domain", .type = DPC_FIELD_DOUBLE, OP(domain), .lo = 0, .hi = SCALE,
     .flags = DPC_FIELD_LO_OPEN | DPC_FIELD_UNSET_ZERO,
     .def_text = "K2 R_x (w_bound + sigma_bound) (ln N)^(2a), Thm. 3.7",
     .doc = "domain: B of DP-STAT (0: Thm. 3.7's)"},
    {.name = "stream", .type = DPC_FIELD_U32, OP(stream), .lo = 0, .hi = 4294967295.0,
     .doc = "stream: index of every stream the run uses (its noise and permutation)"},
};
#undef OP

#define DP(m) DPC_FIELD_AT(dpc_dpstat_params, m)
static const dpc_field dpstat_fields[] = {
    {.name = "domain", .type = DPC_FIELD_DOUBLE, DP(domain), .lo = 0, .hi = INFINITY,
     .flags = DPC_FIELD_LO_OPEN | DPC_FIELD_HI_OPEN | DPC_FIELD_UNSET_ZERO,
     .doc = "domain: B (0: must be set)"},
    {.name = "k", .type = DPC_FIELD_SIZE, DP(k), .lo = 1, .hi = DPC_LINREG_MAX_DPSTAT_K,
     .flags = DPC_FIELD_UNSET_ZERO, .doc = "K doublings: (0: must be set)"},
    {.name = "noise_multiplier", .type = DPC_FIELD_DOUBLE, DP(noise_multiplier), .lo = 0,
     .hi = INFINITY, .flags = DPC_FIELD_LO_OPEN | DPC_FIELD_HI_OPEN | DPC_FIELD_UNSET_ZERO,
     .doc = "noise multiplier: count noise std sqrt(K) z (0: must be set)"},
    {.name = "rule", .type = DPC_FIELD_ENUM, DP(rule), DPC_FIELD_NAMES(dpc__dpstat_rule_names),
     .doc = "rule: the stopping rule"},
    {.name = "margin", .type = DPC_FIELD_DOUBLE, DP(margin), .lo = 0, .hi = INFINITY,
     .flags = DPC_FIELD_HI_OPEN, .doc = "margin: Gamma of the MARGIN rule"},
};
#undef DP

#define SS(m) DPC_FIELD_AT(dpc_linreg_ssp_opts, m)
static const dpc_field ssp_fields[] = {
    {.name = "epsilon", .type = DPC_FIELD_DOUBLE, SS(epsilon), .lo = 0, .hi = SCALE,
     .flags = DPC_FIELD_LO_OPEN | DPC_FIELD_UNSET_ZERO,
     .doc = "epsilon: (eps, delta)-DP target, replace-one (0: must be set)"},
    {.name = "delta", .type = DPC_FIELD_DOUBLE, SS(delta), .lo = 0, .hi = 1,
     .flags = DPC_FIELD_LO_OPEN | DPC_FIELD_HI_OPEN | DPC_FIELD_UNSET_ZERO,
     .def_text = DPC__DELTA_DEFAULT_TEXT,
     .doc = "delta: target, < 1/N unless allow_large_delta (0: dpc_account_default_delta(N))"},
    /* squared in the sensitivity: the scale cap */
    {.name = "x_bound", .type = DPC_FIELD_DOUBLE, SS(x_bound), .lo = 0, .hi = SCALE,
     .flags = DPC_FIELD_LO_OPEN | DPC_FIELD_UNSET_ZERO, .def_text = "R_x (ln N)^a",
     .doc = "row clip: ||x|| <= x_bound, public (0: must be set; dpc_linreg_ssp_bounds sets "
            "the note's)"},
    {.name = "y_bound", .type = DPC_FIELD_DOUBLE, SS(y_bound), .lo = 0, .hi = SCALE,
     .flags = DPC_FIELD_LO_OPEN | DPC_FIELD_UNSET_ZERO,
     .def_text = "K2 sqrt(w_bound^2 + sigma_bound^2) (ln N)^a",
     .doc = "target clip: |y| <= y_bound, public (0: must be set; dpc_linreg_ssp_bounds sets "
            "the note's)"},
    {.name = "stream", .type = DPC_FIELD_U32, SS(stream), .lo = 0, .hi = 4294967295.0,
     .doc = "stream: index of the release's noise stream"},
    {.name = "allow_large_delta", .type = DPC_FIELD_BOOL, SS(allow_large_delta),
     .flags = DPC_FIELD_RUNTIME,
     .doc = "allow large delta: 1 accepts delta >= 1/N (admits a run, changes no value)"},
};
#undef SS

#define SI(m) DPC_FIELD_AT(dpc_linreg_step_info, m)
#define OUT (DPC_FIELD_DERIVED | DPC_FIELD_NO_RANGE)
static const dpc_field step_fields[] = {
    {.name = "step", .type = DPC_FIELD_SIZE, SI(step), .flags = OUT, .doc = "t, the step taken"},
    {.name = "gamma", .type = DPC_FIELD_DOUBLE, SI(gamma), .flags = OUT,
     .doc = "DP-STAT output gamma_t (NAN unless AMBSSGD)"},
    {.name = "zeta", .type = DPC_FIELD_DOUBLE, SI(zeta), .flags = OUT,
     .doc = "clip norm used (INFINITY when none)"},
    {.name = "noise_std", .type = DPC_FIELD_DOUBLE, SI(noise_std), .flags = OUT,
     .doc = "noise std per coordinate of the mean gradient"},
    {.name = "dpstat_counts", .type = DPC_FIELD_SIZE, SI(dpstat_counts), .flags = OUT,
     .doc = "noisy counts DP-STAT made"},
    {.name = "clipped", .type = DPC_FIELD_SIZE, SI(clipped), .flags = OUT,
     .doc = "gradient records whose norm exceeded zeta"},
    {.name = "clip_fraction", .type = DPC_FIELD_DOUBLE, SI(clip_fraction), .flags = OUT,
     .doc = "clipped / b (not private)"},
    {.name = "batch_loss", .type = DPC_FIELD_DOUBLE, SI(batch_loss), .flags = OUT,
     .doc = "1/2 mean r^2 over the gradient batch (not private)"},
    {.name = "excess_risk", .type = DPC_FIELD_DOUBLE, SI(excess_risk), .flags = OUT,
     .doc = "1/2 ||w_{t+1} - w*||_H^2 (synthetic), else NAN"},
};
#undef SI
#undef OUT

static const dpc_field_table opts_table = DPC_FIELD_TABLE(dpc_linreg_opts, opts_fields);
static const dpc_field_table dpstat_table = DPC_FIELD_TABLE(dpc_dpstat_params, dpstat_fields);
static const dpc_field_table step_table = DPC_FIELD_TABLE(dpc_linreg_step_info, step_fields);
static const dpc_field_table ssp_table = DPC_FIELD_TABLE(dpc_linreg_ssp_opts, ssp_fields);

const dpc_field_table *dpc_linreg_prior_fields(void) { return &prior_table; }
const dpc_field_table *dpc_linreg_opts_fields(void) { return &opts_table; }
const dpc_field_table *dpc_dpstat_params_fields(void) { return &dpstat_table; }
const dpc_field_table *dpc_linreg_step_info_fields(void) { return &step_table; }
const dpc_field_table *dpc_linreg_ssp_opts_fields(void) { return &ssp_table; }
