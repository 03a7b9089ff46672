/* dpcorr/mech.h — correlated-noise mechanisms: description, streaming noise, sensitivity, error.
 *
 * Vocabulary (matrix factorization; shared by every module and document):
 *   n            number of steps (rows of the workload)
 *   workload A   n x n lower-triangular; prefix sums (A = all-ones lower triangle), or the
 *                SGD-with-momentum / weight-decay workload (generating function
 *                1 / ((1 - a x)(1 - m x)), a = decay factor, m = momentum)
 *   strategy C   m x n (m = n for square mechanisms); the mechanism releases C G + Z, Z with
 *                i.i.d. N(0, sigma^2) rows, G the n x d matrix of (clipped) gradients
 *   noising B    n x m, B C = I: the per-step noise added to gradient g_t is (B Z)_t.
 *                For square mechanisms B = C^-1. B is the "B" (noise coefficient matrix) of the
 *                nu-DP-FTRL paper; for Toeplitz B its first column is the paper's beta.
 *   k, b         participations per example and their min-separation (in steps)
 *   sensitivity  max over participation patterns of ||C (sum of participating columns)||,
 *                per unit clip norm; sigma_noise = noise_multiplier * sensitivity * clip
 *   error        of the workload: A B. RMSE = ||A B||_F / sqrt(n), max error = max row norm.
 *
 * Paper notation maps: nu-DP-FTRL paper: B = noising (beta its Toeplitz coefficients), C = B^-1,
 * gamma_T(B) = single-participation sensitivity; DP-SRGD: tree aggregation of prefix sums;
 * KAN paper (DP-lambda-CGD): xi_t = kappa (Z_t - lambda Z_{t-1}), i.e. B bidiagonal (1, -lambda).
 *
 * Kinds (parameters in dpc_mech_params):
 *   IDENTITY   DP-SGD: B = C = I.
 *   NU         nu-DP-FTRL: beta_t = (-1)^t binom(1/2, t) (1-nu)^t, 0 <= nu < 1; nu = 0 is the
 *              optimal Toeplitz square root (Fichtenberger et al. 2023). C has coefficients
 *              binom(2t,t)/4^t (1-nu)^t.
 *   ANTIPGD    anti-PGD (Orvieto et al. 2022) B bidiagonal (1, -(1-nu)); nu = 0 undamped.
 *   LCGD       lambda-CGD: B bidiagonal (1, -lambda), 0 <= lambda <= 1.
 *   BSR        banded square root (Kalinin & Lampert 2024): C = the first `bands` Toeplitz
 *              coefficients of A^{1/2} for the workload (momentum, decay); B = C^-1 (IIR).
 *   BISR       banded inverse square root (Kalinin et al. 2025): B = the first `bands`
 *              coefficients of A^{-1/2}; C = B^-1.
 *   BLT        buffered linear Toeplitz (Dvijotham et al. 2024; McMahan et al. 2024): C has
 *              coefficients c_0 = 1, c_j = sum_i omega_i theta_i^(j-1); B = C^-1 is again a BLT,
 *              computed at creation (error if its buffer decays are not real).
 *   TREE       binary-tree aggregation (Dwork et al. 2010; Kairouz et al. 2021): m = 2n rows (one
 *              per dyadic node, in-order id i*2^(h+1) + 2^h - 1), prefix-sum noise = sum of the
 *              noises of the dyadic nodes; honaker != 0 uses the online Honaker efficient
 *              estimator (inverse-variance combination over each completed subtree).
 *   TOEPLITZ   general Toeplitz from coefficients (of B, or of C if coeffs_of_strategy).
 *   DENSE      general n x n lower-triangular matrix (of B, or of C), row-major, n <= 4096.
 *
 * Ownership: dpc_mech_new copies every array it is given. A dpc_mech is immutable afterwards
 * and may be shared by any number of threads and noise generators.
 */
#ifndef DPCORR_MECH_H
#define DPCORR_MECH_H

#include "dpcorr/common.h"
#include "dpcorr/field.h"
#include "dpcorr/rng.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dpc_mech_kind {
    DPC_MECH_IDENTITY = 0,
    DPC_MECH_NU,
    DPC_MECH_ANTIPGD,
    DPC_MECH_LCGD,
    DPC_MECH_BSR,
    DPC_MECH_BISR,
    DPC_MECH_BLT,
    DPC_MECH_TREE,
    DPC_MECH_TOEPLITZ,
    DPC_MECH_DENSE,
    DPC_MECH_KIND_COUNT
} dpc_mech_kind;

/* Parameters. Initialise with dpc_mech_params_init() and set what the kind needs. The manual of
 * every field (its range, default and which kinds read it) is the table of
 * dpc_mech_params_fields(); the comments below are a summary. */
typedef struct dpc_mech_params {
    dpc_mech_kind kind;
    size_t steps;            /* n >= 1 */
    double nu;               /* NU: 0 <= nu < 1; ANTIPGD: damping 0 <= nu < 1 */
    double lambda;           /* LCGD: 0 <= lambda <= 1 */
    size_t bands;            /* BSR, BISR: number of bands >= 1 */
    double momentum;         /* BSR, BISR workload momentum m in [0, 1); 0 = plain prefix sums */
    double decay;            /* BSR, BISR workload decay factor a in (0, 1]; 1 = no weight decay */
    int honaker;             /* TREE: 0 plain, 1 Honaker efficient estimator */
    size_t nbuf;             /* BLT: number of buffers (1..32) */
    const double *theta;     /* BLT: (nbuf) buffer decays of C, each in (0, 1) */
    const double *omega;     /* BLT: (nbuf) output scales of C */
    size_t ncoeffs;          /* TOEPLITZ: number of coefficients given (>= 1); zero beyond */
    const double *coeffs;    /* TOEPLITZ: (ncoeffs) first column; coeffs[0] != 0 */
    const double *dense;     /* DENSE: (steps, steps) row-major lower-triangular */
    int coeffs_of_strategy;  /* TOEPLITZ/DENSE: 0 = the values are B (noising), 1 = C */
} dpc_mech_params;

typedef struct dpc_mech dpc_mech; /* opaque, immutable */

/* The field table of dpc_mech_params (dpcorr/field.h): for each field its name (= the
 * dpc_error.field of dpc_mech_params_check), type, offset, default, range and doc; written out
 * in doc/parameters.md (generated from the table). dpc_mech_params_check applies a field's range
 * only for the kinds that read it. */
DPC_API const dpc_field_table *dpc_mech_params_fields(void);

/* Sets the table's defaults: IDENTITY, steps 0 (must be set), decay 1, everything else 0/NULL. */
DPC_API void dpc_mech_params_init(dpc_mech_params *p);

/* The default number of bands of BSR / BISR for `steps` steps in which an example participates
 * up to `participations` times, at least `min_sep` steps apart: max(min_sep, 16) when
 * participations > 1 (bands that do not reach from one participation into the next), 32 for a
 * single participation; at most max(16, 2e8 / steps) (building BSR/BISR is O(steps x bands))
 * and at most steps. Used by the trainer (dpc_train_config_resolve, mech.bands = 0) and the
 * strategy baselines. Returns 0 only for steps = 0. */
DPC_API size_t dpc_mech_default_bands(size_t steps, size_t participations, size_t min_sep);

/* Validates p (check_parameter style) without building anything. */
DPC_API DPC_NODISCARD dpc_status dpc_mech_params_check(const dpc_mech_params *p, dpc_error *err);

/* Builds the mechanism: validates, derives the coefficients of C and B (reciprocal power
 * series, inverse BLT, forward substitution for DENSE). Caller frees with dpc_mech_free.
 * Work (DPC_WORK_LIMIT, else DPC_E_RANGE): n x bands for BSR/BISR ("bands"), n x ncoeffs for
 * TOEPLITZ ("coeffs"), n x nbuf for BLT, n otherwise ("steps"); DENSE n^3/6 (n <= 4096). */
DPC_API DPC_NODISCARD dpc_status dpc_mech_new(dpc_mech **out, const dpc_mech_params *p,
                                              dpc_error *err);
DPC_API void dpc_mech_free(dpc_mech *m);

/* "identity", "nu", "antipgd", "lcgd", "bsr", "bisr", "blt", "tree", "toeplitz", "dense". */
DPC_API const char *dpc_mech_kind_name(dpc_mech_kind kind);
DPC_API DPC_NODISCARD dpc_status dpc_mech_kind_parse(const char *name, dpc_mech_kind *out,
                                                     dpc_error *err);

/* A copy of the parameters the mechanism was built with (arrays point into the mechanism). */
DPC_API const dpc_mech_params *dpc_mech_get_params(const dpc_mech *m);
/* A one-line human description, e.g. "nu-DP-FTRL (nu=0.01)". Returns snprintf's count. */
DPC_API int dpc_mech_describe(const dpc_mech *m, char *buf, size_t len);

DPC_API size_t dpc_mech_steps(const dpc_mech *m);        /* n */
DPC_API size_t dpc_mech_noise_rows(const dpc_mech *m);   /* m: rows of C and of Z */
DPC_API int dpc_mech_is_toeplitz(const dpc_mech *m);     /* B and C lower-triangular Toeplitz */
/* Anytime: the same coefficients serve every horizon (not DENSE). */
DPC_API int dpc_mech_is_anytime(const dpc_mech *m);

/* Toeplitz mechanisms only: the first `len` coefficients (len may exceed n) of C (strategy)
 * or of B (noising). DPC_E_UNSUPPORTED for TREE and DENSE.                    out: (len) */
DPC_API DPC_NODISCARD dpc_status dpc_mech_strategy_coeffs(const dpc_mech *m, double *out,
                                                          size_t len, dpc_error *err);
DPC_API DPC_NODISCARD dpc_status dpc_mech_noising_coeffs(const dpc_mech *m, double *out,
                                                         size_t len, dpc_error *err);

/* Dense matrices, for tests and small n (n <= 4096). B: (n, m) row-major; C: (m, n). */
DPC_API DPC_NODISCARD dpc_status dpc_mech_dense_noising(const dpc_mech *m, double *B,
                                                        dpc_error *err);
DPC_API DPC_NODISCARD dpc_status dpc_mech_dense_strategy(const dpc_mech *m, double *C,
                                                         dpc_error *err);

/* ---- Sensitivity ------------------------------------------------------------------------- */

/* Participation pattern of one example. */
typedef enum dpc_participation_kind {
    DPC_PART_MINSEP = 0, /* at most k steps, any two at least b apart (b >= 1; k = 1: single) */
    DPC_PART_CYCLIC = 1  /* exactly the steps t0, t0+b, ..., t0+(k'-1)b within [0,n), any t0 < b */
} dpc_participation_kind;

typedef struct dpc_participation {
    dpc_participation_kind kind;
    size_t k;   /* max participations, >= 1 */
    size_t b;   /* min-separation / period in steps, >= 1 */
} dpc_participation;

/* The default pattern: single participation (MINSEP, k = 1, b = 1), the setting of DP-SGD's
 * one-epoch accounting and of every front end's --participations / --min-sep left unset. */
DPC_API void dpc_participation_init(dpc_participation *p);
/* The field table of dpc_participation (dpcorr/field.h): dpc_participation_init writes its
 * defaults and dpc_mech_sensitivity range-checks a pattern through it (errors "part.k", ...). */
DPC_API const dpc_field_table *dpc_participation_fields(void);

typedef enum dpc_sens_method {
    DPC_SENS_EXACT_COLUMN = 0,      /* single participation: max column norm of C */
    DPC_SENS_EXACT_TOEPLITZ_MINSEP, /* non-negative non-increasing Toeplitz C: pattern 0,b,2b,..
                                       is optimal (Kalinin & Lampert 2024, Thm 2) */
    DPC_SENS_EXACT_ENUMERATION,     /* C^T C >= 0 entrywise and all patterns enumerated */
    DPC_SENS_EXACT_CYCLIC,          /* cyclic pattern, C^T C >= 0: max over the b offsets */
    DPC_SENS_BOUND_MAJORANT,        /* Toeplitz with mixed-sign or increasing coefficients:
                                       exact value for the monotone majorant of |c| (>= truth) */
    DPC_SENS_BOUND_ABSGRAM,         /* max over patterns of sum |X_ij| via dynamic programming */
    DPC_SENS_BOUND_TREE_LEVELS      /* tree, large n: per level, at most min(k, ceil(2^h / b))
                                       participations share a node */
} dpc_sens_method;

typedef struct dpc_sensitivity {
    double value;            /* L2 sensitivity per unit clip norm (upper bound if !exact) */
    int exact;               /* 1 if value is the exact sensitivity, 0 if an upper bound */
    dpc_sens_method method;
    size_t k_effective;      /* participations actually possible: min(k, ceil(n / b)) */
} dpc_sensitivity;

/* How the sensitivity was obtained, in words for reports ("exact: max column norm", ...). */
DPC_API const char *dpc_sens_method_name(dpc_sens_method m);

/* Sensitivity of the mechanism under the participation pattern. For vector-valued gradients
 * with ||g|| <= 1 the exact sensitivity is sqrt(max_pattern max_g sum_ij X_ij <g_i, g_j>),
 * X = C^T C; it equals sqrt(max_pattern 1^T X 1) when X >= 0 entrywise. Otherwise the
 * returned value is an upper bound (sum |X_ij|) and exact = 0.
 * Work: n x k for Toeplitz mechanisms with k > 1 (DPC_WORK_LIMIT, else DPC_E_RANGE naming
 * "part.k"); n <= 4096 otherwise. */
DPC_API DPC_NODISCARD dpc_status dpc_mech_sensitivity(const dpc_mech *m,
                                                      const dpc_participation *part,
                                                      dpc_sensitivity *out, dpc_error *err);

/* Limiting single-participation sensitivity gamma_inf = lim_{n->inf} max column norm of C, for
 * Toeplitz mechanisms: sqrt(sum_t c_t^2) (closed forms: nu: (2/pi) K(1-nu); damped anti-PGD
 * 1/(nu(2-nu)); lambda-CGD 1/(1-lambda^2); BLT 1 + sum_ij w_i w_j / (1 - t_i t_j)); INFINITY when
 * it diverges (nu = 0, undamped anti-PGD, lambda = 1, TREE). DPC_E_UNSUPPORTED for DENSE. */
DPC_API DPC_NODISCARD dpc_status dpc_mech_limit_sensitivity(const dpc_mech *m, double *gamma_inf,
                                                            dpc_error *err);

/* ---- Error ------------------------------------------------------------------------------- */

typedef struct dpc_workload {
    double momentum; /* m in [0, 1): 0 = prefix sums */
    double decay;    /* a in (0, 1]: 1 = no weight decay */
} dpc_workload;

#define DPC_WORKLOAD_PREFIX ((dpc_workload){0.0, 1.0})
/* The field table of dpc_workload (dpcorr/field.h): defaults (prefix sums) and ranges, through
 * which dpc_mech_error_of ("w.momentum") and dpc_strategy_problem_check ("workload.decay")
 * refuse. */
DPC_API const dpc_field_table *dpc_workload_fields(void);

typedef struct dpc_mech_error {
    double rmse;      /* ||A B||_F / sqrt(n) */
    double max_error; /* max_t ||(A B)_t,:||_2 */
} dpc_mech_error;

/* Error of the workload under the mechanism's noise, per unit noise std. O(n) memory for
 * Toeplitz kinds and TREE (prefix workload), O(n^2) for DENSE. */
DPC_API DPC_NODISCARD dpc_status dpc_mech_error_of(const dpc_mech *m, const dpc_workload *w,
                                                   dpc_mech_error *out, dpc_error *err);

/* State kept per model coordinate by the streaming generator in the given form (floats). */
typedef enum dpc_noise_form {
    DPC_NOISE_AUTO = 0,   /* buffer when the state fits the memory budget, else replay */
    DPC_NOISE_BUFFER = 1, /* keep past noise (or outputs) in memory */
    DPC_NOISE_REPLAY = 2  /* regenerate past Z from the counter-based RNG: O(1) memory */
} dpc_noise_form;

/* "auto", "buffer", "replay". */
DPC_API const char *dpc_noise_form_name(dpc_noise_form f);

/* Floats of state per coordinate for `form` (after AUTO is resolved for `d`); and whether the
 * form is available for this kind (replay: banded B, TREE, NU/TOEPLITZ/DENSE; not BSR/BLT). */
DPC_API size_t dpc_mech_state_floats(const dpc_mech *m, dpc_noise_form form);
DPC_API int dpc_mech_form_available(const dpc_mech *m, dpc_noise_form form);

/* ---- Streaming noise generator ------------------------------------------------------------ */

/* Emits, step by step, out = (B Z)_t restricted to coordinates [coord0, coord0 + d), where
 * Z[r, j] = dpc_rng_gaussian(stream, r, j) (r = noise row, j = global coordinate). Generators
 * over disjoint coordinate ranges need no communication and produce exactly the values a
 * single generator over the union would (threading). Per step O(d * state) work. */
typedef struct dpc_noise dpc_noise;

typedef struct dpc_noise_config {
    size_t coord0;          /* first global coordinate handled */
    size_t d;               /* number of coordinates >= 1 */
    dpc_noise_form form;    /* AUTO, BUFFER or REPLAY */
    size_t memory_budget;   /* AUTO: max bytes of buffer state (0 = 1 GiB) */
    dpc_isa isa;            /* instruction-set level of the Gaussian fill and the state updates
                               (dpcorr/isa.h; AUTO = the best this CPU runs; dpc_noise_new
                               refuses a level it lacks). The noise is bit for bit the same at
                               every level. */
} dpc_noise_config;

/* All d coordinates of a model with d parameters from coordinate 0: form AUTO, memory budget 0
 * (1 GiB), isa AUTO. */
DPC_API void dpc_noise_config_init(dpc_noise_config *cfg, size_t d);
/* The field table of dpc_noise_config (dpcorr/field.h): every field's name, type, offset,
 * default and one-line doc; dpc_noise_config_init writes its defaults. */
DPC_API const dpc_field_table *dpc_noise_config_fields(void);

/* A generator of m's correlated noise over cfg's coordinates, Z drawn from stream (copied).
 * m is borrowed and must outlive the generator. Free with dpc_noise_free (NULL is a no-op). */
DPC_API DPC_NODISCARD dpc_status dpc_noise_new(dpc_noise **out, const dpc_mech *m,
                                               const dpc_rng_stream *stream,
                                               const dpc_noise_config *cfg, dpc_error *err);
DPC_API void dpc_noise_free(dpc_noise *g);

/* Writes (B Z)_t for the current step t into out and advances to t + 1.
 * DPC_E_RANGE after n steps.                                                   out: (d) */
DPC_API DPC_NODISCARD dpc_status dpc_noise_next(dpc_noise *g, double *out, dpc_error *err);


/* The release of one step: the one formula every front end applies (the trainer, the
 * privatizer, dpcorr.torch and dpcorr.TrainingPlan.release all call it, so the same clipped
 * sum, noise and scale give bit-identical updates whoever runs the step):
 *     release[p] = (clipped_sum[p] + noise_scale * z[p]) * inv_b
 * in double, each operation rounded once in this order (no contraction). z is the generator's
 * raw (B Z)_t (dpc_noise_next), noise_scale = noise multiplier x clip x the strategy's
 * sensitivity (dpc_train_plan_noise_scale), inv_b = 1 / expected batch size (1 for a sum
 * release). release may alias clipped_sum or z (elementwise). Refusals, DPC_E_INVALID before
 * anything is written (a refused step's noise row stays intact), naming "clipped_sum" when a
 * coordinate of it is NaN or inf (it would pass through the noise, so one example's gradient
 * would decide the output; the message gives the coordinate), "noise_scale" (not finite or
 * < 0), "inv_b" (not finite or <= 0), or a NULL array ("clipped_sum", "z", "release") when
 * n > 0. (The privatizer also refuses a non-finite sum before the step's noise is drawn, and
 * dpcorr.torch a non-finite per-example gradient; the trainer relies on this refusal.)
 *                                                                          arrays: (n) */
DPC_API DPC_NODISCARD dpc_status dpc_noise_release(const double *clipped_sum, const double *z,
                                                   size_t n, double noise_scale, double inv_b,
                                                   double *release, dpc_error *err);
/* The float32-precision release of the trainer (dpc_train_config.precision FLOAT32): the noise
 * scaled in double and rounded once to float, then in float:
 *     release[p] = (clipped_sum[p] + (float)(noise_scale * z[p])) * inv_b
 * Arguments and refusals as dpc_noise_release; release may alias clipped_sum. */
DPC_API DPC_NODISCARD dpc_status dpc_noise_release_f32(const float *clipped_sum,
                                                       const double *z, size_t n,
                                                       double noise_scale, float inv_b,
                                                       float *release, dpc_error *err);

DPC_API size_t dpc_noise_step(const dpc_noise *g);      /* next step to be emitted */
DPC_API size_t dpc_noise_bytes(const dpc_noise *g);     /* memory held (state and scratch) */
DPC_API dpc_noise_form dpc_noise_get_form(const dpc_noise *g);

/* Positions the generator so that the next dpc_noise_next emits step t. Buffer forms rebuild
 * their state from the RNG (banded B, TREE: O(state) draws; BSR, BLT: replays steps 0..t-1). */
DPC_API DPC_NODISCARD dpc_status dpc_noise_seek(dpc_noise *g, size_t t, dpc_error *err);

/* Checkpointing: the generator state is (step, state floats). The state is laid out
 * coordinate-major, (d, floats per coordinate), so the states of generators over adjacent
 * coordinate ranges concatenate into the state of one generator over their union. Kinds whose
 * state can be regenerated from the RNG export nothing (size 0) and import by seeking. The state
 * of the others (BSR, BLT buffers) is a pure function of (key, step): import replays steps
 * 0..step-1 from the key (O(step x d) work, as dpc_noise_seek) and refuses, DPC_E_STATE with
 * err->field "noise_state" naming the coordinate and buffer, a saved state that differs from the
 * replay in any bit (an edited state, or one of another key or step); the saved floats are only
 * compared, never used. On a refusal the generator is left at `step` with the replayed state. */
DPC_API size_t dpc_noise_state_size(const dpc_noise *g); /* doubles */
DPC_API DPC_NODISCARD dpc_status dpc_noise_export(const dpc_noise *g, size_t *step,
                                                  double *state, dpc_error *err);
DPC_API DPC_NODISCARD dpc_status dpc_noise_import(dpc_noise *g, size_t step, const double *state,
                                                  dpc_error *err);

#ifdef __cplusplus
}
#endif
#endif /* DPCORR_MECH_H */
