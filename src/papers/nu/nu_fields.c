/* nu_fields.c — the field tables of the nu-DP-FTRL paper's simulation and theory setup
 * (dpcorr/field.h): dpc_sim_noise_config, dpc_sim_config and dpc_nu_setup_params. The _init
 * functions write these defaults and the checks range-check through them; the setup's and the
 * simulation's front ends read them for their options. */
#include "common/util.h"
#include "field/field_def.h"
#include "nu/theory_internal.h"
#include "dpcorr/papers/sim.h"
#include "dpcorr/papers/theory.h"

#include <math.h>

#define SCALE_MAX DPC__SCALE_MAX

static const char *const method_names[] = {"fft", "direct", "mech"};
static const char *const model_names[] = {"fixed", "random", "logcosh"};
static const char *const problem_names[] = {"lti", "mean", "sc"};

#define NN(m) DPC_FIELD_AT(dpc_sim_noise_config, m)
static const dpc_field noise_fields[] = {
    {.name = "method", .type = DPC_FIELD_ENUM, NN(method), DPC_FIELD_NAMES(method_names),
     .doc = "how the correlated noise is made: FFT or direct convolution of beta, or the "
            "mechanism's generator"},
    {.name = "beta", .type = DPC_FIELD_POINTER, NN(beta),
     .doc = "FFT, DIRECT: (len) Toeplitz coefficients, borrowed"},
    {.name = "len", .type = DPC_FIELD_SIZE, NN(len), .lo = 0, .hi = INFINITY,
     .doc = "coefficients of beta (>= 1 for FFT and DIRECT)"},
    {.name = "mech", .type = DPC_FIELD_POINTER, NN(mech),
     .doc = "MECH: the mechanism, borrowed"},
    {.name = "stream", .type = DPC_FIELD_POINTER, NN(stream), .doc = "the Z stream (copied)"},
    {.name = "coord0", .type = DPC_FIELD_SIZE, NN(coord0), .lo = 0, .hi = INFINITY,
     .doc = "first coordinate"},
    {.name = "d", .type = DPC_FIELD_SIZE, NN(d), .lo = 1, .hi = INFINITY,
     .flags = DPC_FIELD_UNSET_ZERO, .doc = "coordinates (0: must be set)"},
    {.name = "block", .type = DPC_FIELD_SIZE, NN(block), .lo = 0, .hi = INFINITY,
     .flags = DPC_FIELD_RUNTIME, .doc = "steps per block (0: auto, FFT ~len, others 1024)"},
    {.name = "memory_budget", .type = DPC_FIELD_SIZE, NN(memory_budget), .lo = 0,
     .hi = INFINITY, .flags = DPC_FIELD_RUNTIME, .doc = "bytes of buffers (0: 1 GiB)"},
};
#undef NN

#define SC(m) DPC_FIELD_AT(dpc_sim_config, m)
static const dpc_field sim_fields[] = {
    {.name = "model", .type = DPC_FIELD_ENUM, SC(model), DPC_FIELD_NAMES(model_names),
     .doc = "the simulated problem: fixed or random design quadratic, or log-cosh"},
    {.name = "eta", .type = DPC_FIELD_DOUBLE, SC(eta), .lo = 0, .hi = INFINITY,
     .flags = DPC_FIELD_LO_OPEN | DPC_FIELD_HI_OPEN | DPC_FIELD_UNSET_ZERO,
     .doc = "learning rate (0: must be set)"},
    {.name = "sigma", .type = DPC_FIELD_DOUBLE, SC(sigma), .lo = 0, .hi = INFINITY,
     .flags = DPC_FIELD_HI_OPEN, .doc = "std of the DP noise w: G gamma_inf / sqrt(2 rho)"},
    {.name = "sigma_sgd", .type = DPC_FIELD_DOUBLE, SC(sigma_sgd), .lo = 0, .hi = INFINITY,
     .flags = DPC_FIELD_HI_OPEN, .doc = "data-noise std"},
    {.name = "d", .type = DPC_FIELD_SIZE, SC(d), .lo = 1, .hi = INFINITY,
     .flags = DPC_FIELD_UNSET_ZERO, .doc = "dimension (0: must be set)"},
    {.name = "lambda", .type = DPC_FIELD_POINTER, SC(lambda),
     .doc = "FIXED, RANDOM: (d) eigenvalues of H, borrowed"},
    {.name = "mu", .type = DPC_FIELD_DOUBLE, SC(mu), .lo = 0, .hi = INFINITY,
     .flags = DPC_FIELD_LO_OPEN | DPC_FIELD_HI_OPEN | DPC_FIELD_UNSET_ZERO,
     .doc = "LOGCOSH: strong convexity, <= L"},
    {.name = "L", .type = DPC_FIELD_DOUBLE, SC(L), .lo = 0, .hi = INFINITY,
     .flags = DPC_FIELD_LO_OPEN | DPC_FIELD_HI_OPEN | DPC_FIELD_UNSET_ZERO,
     .doc = "LOGCOSH: smoothness"},
    {.name = "burn_in", .type = DPC_FIELD_SIZE, SC(burn_in), .lo = 0, .hi = INFINITY,
     .doc = "discarded steps"},
    {.name = "steps", .type = DPC_FIELD_SIZE, SC(steps), .lo = 0, .hi = INFINITY,
     .doc = "measured steps (>= batches)"},
    {.name = "batches", .type = DPC_FIELD_SIZE, SC(batches), .def = 32, .lo = 2,
     .hi = INFINITY, .doc = "batch means of the standard error"},
    {.name = "seed", .type = DPC_FIELD_U64, SC(seed), .flags = DPC_FIELD_NO_RANGE,
     .doc = "root seed (dpc_rng_seed)"},
    {.name = "method", .type = DPC_FIELD_ENUM, SC(method), DPC_FIELD_NAMES(method_names),
     .doc = "noise method (dpc_sim_noise_config.method)"},
    {.name = "beta", .type = DPC_FIELD_POINTER, SC(beta), .doc = "FFT, DIRECT: coefficients"},
    {.name = "len", .type = DPC_FIELD_SIZE, SC(len), .lo = 0, .hi = INFINITY,
     .doc = "coefficients of beta"},
    {.name = "mech", .type = DPC_FIELD_POINTER, SC(mech), .doc = "MECH: the mechanism"},
    {.name = "block", .type = DPC_FIELD_SIZE, SC(block), .lo = 0, .hi = INFINITY,
     .flags = DPC_FIELD_RUNTIME, .doc = "noise block (0: auto)"},
    {.name = "chunk", .type = DPC_FIELD_SIZE, SC(chunk), .lo = 0, .hi = INFINITY,
     .flags = DPC_FIELD_RUNTIME, .doc = "FIXED, LOGCOSH: coordinates per pass (0: auto, 16)"},
    {.name = "memory_budget", .type = DPC_FIELD_SIZE, SC(memory_budget), .lo = 0,
     .hi = INFINITY, .flags = DPC_FIELD_RUNTIME, .doc = "bytes (0: 1 GiB)"},
};
#undef SC

#define NU(m) DPC_FIELD_AT(dpc_nu_setup_params, m)
#define POS (DPC_FIELD_LO_OPEN | DPC_FIELD_HI_OPEN)
static const dpc_field nu_fields[] = {
    {.name = "problem", .type = DPC_FIELD_ENUM, NU(problem), DPC_FIELD_NAMES(problem_names),
     .doc = "linear regression (LTI), mean estimation or strongly convex"},
    {.name = "d", .type = DPC_FIELD_SIZE, NU(d), .def = 128, .lo = 1, .hi = INFINITY,
     .doc = "dimension (MEAN: 1 whatever is set)"},
    {.name = "alpha", .type = DPC_FIELD_DOUBLE, NU(alpha), .def = 1, .lo = 0, .hi = INFINITY,
     .flags = DPC_FIELD_HI_OPEN, .doc = "spectrum exponent: lambda_k = k^-alpha"},
    {.name = "eta", .type = DPC_FIELD_DOUBLE, NU(eta), .def = 0.02, .lo = 0, .hi = INFINITY,
     .flags = POS, .doc = "learning rate"},
    /* rho, G, sigma_sgd, mu and L enter the bounds squared: above SCALE_MAX they overflow */
    {.name = "rho", .type = DPC_FIELD_DOUBLE, NU(rho), .def = 0.5, .lo = 0, .hi = SCALE_MAX,
     .flags = DPC_FIELD_LO_OPEN, .doc = "zCDP parameter"},
    {.name = "G", .type = DPC_FIELD_DOUBLE, NU(G), .def = 1, .lo = 0, .hi = SCALE_MAX,
     .flags = DPC_FIELD_LO_OPEN, .doc = "clip norm"},
    {.name = "sigma_sgd", .type = DPC_FIELD_DOUBLE, NU(sigma_sgd), .lo = 0, .hi = SCALE_MAX,
     .doc = "data-noise std"},
    {.name = "mu", .type = DPC_FIELD_DOUBLE, NU(mu), .def = 0.01, .lo = 0, .hi = SCALE_MAX,
     .flags = DPC_FIELD_LO_OPEN, .doc = "SC and LOGCOSH: strong convexity, <= L"},
    {.name = "L", .type = DPC_FIELD_DOUBLE, NU(L), .def = 1, .lo = 0, .hi = SCALE_MAX,
     .flags = DPC_FIELD_LO_OPEN, .doc = "SC and LOGCOSH: smoothness"},
    /* the bound's multipliers are a fixed array (dpc_theory_sc_bound: |t| <= 31) */
    {.name = "tmax", .type = DPC_FIELD_SIZE, NU(tmax), .def = 4, .lo = 0,
     .hi = DPC__THEORY_SC_TMAX, .doc = "SC: Zames-Falb multipliers |t| <= tmax"},
    {.name = "nu_max", .type = DPC_FIELD_DOUBLE, NU(nu_max), .def = 0.999, .lo = 0, .hi = 1,
     .flags = POS, .doc = "the clamp of Theorem 2.2's nu (nu < 1 keeps the coefficients "
                          "summable)"},
    {.name = "steps", .type = DPC_FIELD_SIZE, NU(steps), .lo = 0, .hi = INFINITY,
     .doc = "measured steps of the simulation (0: none)"},
    {.name = "model", .type = DPC_FIELD_ENUM, NU(model), DPC_FIELD_NAMES(model_names),
     .doc = "simulated model (LOGCOSH for SC's toy problem)"},
    {.name = "seed", .type = DPC_FIELD_U64, NU(seed), .def = 1, .flags = DPC_FIELD_NO_RANGE,
     .doc = "root seed of the simulation"},
    {.name = "burn_in_scale", .type = DPC_FIELD_DOUBLE, NU(burn_in_scale), .def = 10, .lo = 0,
     .hi = INFINITY, .flags = POS,
     .doc = "burn-in in correlation times of the slowest mode"},
    {.name = "tail", .type = DPC_FIELD_DOUBLE, NU(tail), .def = 1e-8, .lo = 0, .hi = 1,
     .flags = POS, .doc = "l1 tail of the truncated beta"},
    {.name = "memory_budget", .type = DPC_FIELD_SIZE, NU(memory_budget), .lo = 0,
     .hi = INFINITY, .flags = DPC_FIELD_RUNTIME, .doc = "bytes (0: dpc_sim_run's default)"},
    /* the mechanism's steps: at most 2^40, as every mechanism (dpc_mech_params.steps) */
    {.name = "beta_len", .type = DPC_FIELD_SIZE, NU(beta_len), .def = 65536, .lo = 1,
     .hi = 1099511627776.0,
     .doc = "coefficients of beta kept for a mechanism without a closed form "
            "(dpc_theory_beta_from_mech; its work is bounded there)"},
};
#undef NU
#undef POS

static const dpc_field_table noise_table = DPC_FIELD_TABLE(dpc_sim_noise_config, noise_fields);
static const dpc_field_table sim_table = DPC_FIELD_TABLE(dpc_sim_config, sim_fields);
static const dpc_field_table nu_table = DPC_FIELD_TABLE(dpc_nu_setup_params, nu_fields);

const dpc_field_table *dpc_sim_noise_config_fields(void) { return &noise_table; }
const dpc_field_table *dpc_sim_config_fields(void) { return &sim_table; }
const dpc_field_table *dpc_nu_setup_params_fields(void) { return &nu_table; }

/* dpc_theory_problem: the ranges dpc_theory_problem_check checks through it (keeping the joint
 * rule 0 < eta lambda_j < 2 and "must be set" for the zeros); the zeroed struct is the default. */
#define TP(m) DPC_FIELD_AT(dpc_theory_problem, m)
#define MUST (DPC_FIELD_UNSET_ZERO | DPC_FIELD_LO_OPEN)
static const dpc_field theory_fields[] = {
    {.name = "eta", .type = DPC_FIELD_DOUBLE, TP(eta), .lo = 0, .hi = INFINITY,
     .flags = MUST | DPC_FIELD_HI_OPEN,
     .doc = "learning rate, 0 < eta lambda_j < 2 for every j (0: must be set)"},
    {.name = "rho", .type = DPC_FIELD_DOUBLE, TP(rho), .lo = 0, .hi = SCALE_MAX, .flags = MUST,
     .doc = "zCDP parameter (0: must be set)"},
    {.name = "G", .type = DPC_FIELD_DOUBLE, TP(G), .lo = 0, .hi = SCALE_MAX, .flags = MUST,
     .doc = "clip norm (0: must be set)"},
    {.name = "sigma_sgd", .type = DPC_FIELD_DOUBLE, TP(sigma_sgd), .lo = 0, .hi = SCALE_MAX,
     .doc = "data-noise std (E xi^2 = sigma_sgd^2, assumption A2')"},
    {.name = "d", .type = DPC_FIELD_SIZE, TP(d), .lo = 1, .hi = INFINITY,
     .flags = DPC_FIELD_UNSET_ZERO | DPC_FIELD_HI_OPEN, .doc = "dimension (0: must be set)"},
    {.name = "lambda", .type = DPC_FIELD_POINTER, TP(lambda),
     .doc = "(d) eigenvalues of H, each > 0, borrowed"},
};
#undef TP
#undef MUST
static const dpc_field_table theory_table = DPC_FIELD_TABLE(dpc_theory_problem, theory_fields);
const dpc_field_table *dpc_theory_problem_fields(void) { return &theory_table; }

/* dpc_theory_sc: the single-field ranges of the Theorem 3.1 bound (dpc_theory_sc_bound checks
 * through it, keeping "must be set" for the zeros, mu <= L and eta <= 2/(mu + L)). */
#define TS(m) DPC_FIELD_AT(dpc_theory_sc, m)
#define MUST (DPC_FIELD_UNSET_ZERO | DPC_FIELD_LO_OPEN)
static const dpc_field sc_fields[] = {
    {.name = "mu", .type = DPC_FIELD_DOUBLE, TS(mu), .lo = 0, .hi = SCALE_MAX, .flags = MUST,
     .doc = "strong convexity, <= L (0: must be set)"},
    {.name = "L", .type = DPC_FIELD_DOUBLE, TS(L), .lo = 0, .hi = SCALE_MAX, .flags = MUST,
     .doc = "smoothness (0: must be set)"},
    {.name = "eta", .type = DPC_FIELD_DOUBLE, TS(eta), .lo = 0, .hi = INFINITY,
     .flags = MUST | DPC_FIELD_HI_OPEN, .doc = "learning rate, <= 2/(mu + L) (0: must be set)"},
    {.name = "rho", .type = DPC_FIELD_DOUBLE, TS(rho), .lo = 0, .hi = SCALE_MAX, .flags = MUST,
     .doc = "zCDP parameter (0: must be set)"},
    {.name = "G", .type = DPC_FIELD_DOUBLE, TS(G), .lo = 0, .hi = SCALE_MAX, .flags = MUST,
     .doc = "clip norm (0: must be set)"},
    {.name = "sigma_sgd", .type = DPC_FIELD_DOUBLE, TS(sigma_sgd), .lo = 0, .hi = SCALE_MAX,
     .doc = "data-noise std"},
    {.name = "d", .type = DPC_FIELD_SIZE, TS(d), .lo = 1, .hi = INFINITY,
     .flags = DPC_FIELD_UNSET_ZERO | DPC_FIELD_HI_OPEN,
     .doc = "dimension: the bound scales linearly (0: must be set)"},
    {.name = "tmax", .type = DPC_FIELD_SIZE, TS(tmax), .lo = 0, .hi = DPC__THEORY_SC_TMAX,
     .doc = "Zames-Falb multipliers |t| <= tmax (0: the circle criterion)"},
};
#undef TS
#undef MUST
static const dpc_field_table sc_table = DPC_FIELD_TABLE(dpc_theory_sc, sc_fields);
const dpc_field_table *dpc_theory_sc_fields(void) { return &sc_table; }
