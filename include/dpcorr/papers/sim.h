/* dpcorr/papers/sim.h — long-horizon simulators of Noisy-SGD / nu-Noisy-FTRL / any correlated-noise
 * mechanism, for checking the stationary-error theory (dpcorr/papers/theory.h; nu-DP-FTRL paper
 * Sec. 2-3, note 5 and 10).
 *
 * Noise: w~_t[j] = sum_{tau <= t} beta_tau Z[t - tau, j], Z[r, j] = dpc_rng_gaussian(stream, r,
 * coord0 + j) — the same Z as the streaming generator dpc_noise of dpcorr/mech.h, so every
 * method below produces the same noise (up to rounding) from the same seed:
 *   DPC_SIM_NOISE_FFT     blocked overlap-save convolution with a truncated beta (len
 *                         coefficients; truncate with dpc_theory_beta_len_for_tail, whose l1
 *                         tail bound bounds the change of every variance), radix-2 FFT of size
 *                         N = 2^k >= len + block - 1, two coordinates packed per complex FFT:
 *                         O(log N) per sample instead of O(len)
 *   DPC_SIM_NOISE_DIRECT  the direct convolution with the same beta (O(len) per sample), the
 *                         naive reference kept for the parity test
 *   DPC_SIM_NOISE_MECH    the mechanism's own streaming generator (dpc_noise; any kind, steps of
 *                         the mechanism >= burn_in + steps)
 *
 * Models (theta* = 0 without loss of generality; theta_0 = 0):
 *   DPC_SIM_FIXED    fixed design (the LTI model of note 5.3.2; mean estimation is d = 1,
 *                    lambda = 1): theta_j <- (1 - eta lambda_j) theta_j
 *                                           - eta (sigma_sgd sqrt(lambda_j) u_{t,j} + w~_t[j]);
 *                    measures E||theta||_H^2 = sum_j lambda_j theta_j^2 (= V0 exactly)
 *   DPC_SIM_RANDOM   random Gaussian design x_t = H^{1/2} z_t, y = <theta*, x> + xi_t (eq. 23):
 *                    theta <- theta - eta x_t (x_t^T theta - xi_t) - eta w~_t; E||theta||_H^2
 *   DPC_SIM_LOGCOSH  a separable mu-strongly convex, L-smooth toy problem
 *                    F(theta) = sum_j L theta_j^2 / 2 - (L - mu) log cosh theta_j
 *                    (F'' = L - (L - mu) sech^2 in [mu, L]: mu at the optimum, L far from it):
 *                    theta <- theta - eta (grad F(theta) + sigma_sgd u_t + w~_t); E||theta||^2
 * with u, z, xi standard normal from the DATA stream (u[t,j], z[t,j] = gaussian(data, t, j),
 * xi_t = sigma_sgd gaussian(data, t, d)). FIXED and LOGCOSH simulate independent coordinates
 * in chunks (low memory); RANDOM needs all d at once (memory ~ 8 d (len + block) bytes).
 *
 * Estimation: burn_in steps are discarded; the next `steps` are averaged; the error bar is the
 * batch-means standard error over `batches` equal consecutive batches (each batch should span
 * many correlation times, ~1/min(eta mu, nu)). Randomness: only dpcorr's counter-based RNG,
 * seeded with `seed` (recorded in the result).
 */
#ifndef DPCORR_SIM_H
#define DPCORR_SIM_H

#include "dpcorr/common.h"
#include "dpcorr/field.h"
#include "dpcorr/mech.h"
#include "dpcorr/papers/theory.h"
#include "dpcorr/rng.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dpc_sim_noise_method {
    DPC_SIM_NOISE_FFT = 0,
    DPC_SIM_NOISE_DIRECT = 1,
    DPC_SIM_NOISE_MECH = 2
} dpc_sim_noise_method;

/* "fft", "direct", "mech" ("?" for a value outside the enum). */
DPC_API const char *dpc_sim_noise_method_name(dpc_sim_noise_method m);

/* ---- Correlated-noise source ---------------------------------------------------------------- */

typedef struct dpc_sim_noise_config {
    dpc_sim_noise_method method;
    const double *beta;           /* FFT, DIRECT: (len) Toeplitz coefficients, borrowed */
    size_t len;                   /* >= 1 */
    const dpc_mech *mech;         /* MECH: borrowed, must outlive the source */
    const dpc_rng_stream *stream; /* Z stream (copied) */
    size_t coord0, d;             /* coordinates [coord0, coord0 + d), d >= 1 */
    size_t block;                 /* steps per block (0 = auto: FFT ~len, others 1024) */
    size_t memory_budget;         /* bytes (0 = 1 GiB); DPC_E_RANGE if the buffers exceed it */
} dpc_sim_noise_config;

/* The field table of dpc_sim_noise_config (dpcorr/field.h); dpc_sim_noise_new checks through it. */
DPC_API const dpc_field_table *dpc_sim_noise_config_fields(void);

typedef struct dpc_sim_noise dpc_sim_noise;

/* A source of the noise sum_s beta_s Z_{t-s} (FFT, DIRECT) or of the mechanism's noise (MECH)
 * over cfg's coordinates; DPC_E_RANGE naming "memory_budget" when its buffers
 * (dpc_sim_noise_bytes) would exceed the budget. Free with dpc_sim_noise_free. */
DPC_API DPC_NODISCARD dpc_status dpc_sim_noise_new(dpc_sim_noise **out,
                                                   const dpc_sim_noise_config *cfg,
                                                   dpc_error *err);
DPC_API void dpc_sim_noise_free(dpc_sim_noise *ns);

/* The next m steps, row-major: out[s * d + j] = w~_{t+s}[coord0 + j].         out: (m, d) */
DPC_API DPC_NODISCARD dpc_status dpc_sim_noise_next(dpc_sim_noise *ns, double *out, size_t m,
                                                    dpc_error *err);
DPC_API size_t dpc_sim_noise_step(const dpc_sim_noise *ns); /* next step to be emitted */
DPC_API size_t dpc_sim_noise_bytes(const dpc_sim_noise *ns); /* buffer memory in use */

/* ---- Simulators ------------------------------------------------------------------------------ */

typedef enum dpc_sim_model {
    DPC_SIM_FIXED = 0,
    DPC_SIM_RANDOM = 1,
    DPC_SIM_LOGCOSH = 2
} dpc_sim_model;

/* "fixed", "random", "logcosh" ("?" for a value outside the enum). */
DPC_API const char *dpc_sim_model_name(dpc_sim_model m);

typedef struct dpc_sim_config {
    dpc_sim_model model;
    double eta;                /* learning rate > 0 */
    double sigma;              /* std of w (DP noise): G gamma_inf / sqrt(2 rho) >= 0 */
    double sigma_sgd;          /* data-noise std >= 0 */
    size_t d;                  /* dimension >= 1 */
    const double *lambda;      /* FIXED, RANDOM: (d) eigenvalues of H (diagonal), borrowed */
    double mu, L;              /* LOGCOSH: 0 < mu <= L */
    size_t burn_in, steps;     /* discarded and measured steps (steps >= batches) */
    size_t batches;            /* >= 2 */
    uint64_t seed;             /* root seed (dpc_rng_seed) */
    dpc_sim_noise_method method;
    const double *beta;        /* FFT, DIRECT */
    size_t len;
    const dpc_mech *mech;      /* MECH */
    size_t block;              /* noise block (0 = auto) */
    size_t chunk;              /* FIXED, LOGCOSH: coordinates per pass (0 = auto, 16) */
    size_t memory_budget;      /* bytes (0 = 1 GiB) */
} dpc_sim_config;

/* The field table of dpc_sim_config: defaults, ranges, docs. */
DPC_API const dpc_field_table *dpc_sim_config_fields(void);
/* Writes the table's defaults (dpc_field_defaults): eta and d 0 (must be set), no hooks. */
DPC_API void dpc_sim_config_init(dpc_sim_config *c);
/* Every field within its table's range (naming it), eta and d set, then the refusals across
 * fields (the spectrum, mu <= L, eta L < 2, steps >= batches, the noise's source). */
DPC_API DPC_NODISCARD dpc_status dpc_sim_config_check(const dpc_sim_config *c, dpc_error *err);

typedef struct dpc_sim_result {
    double mean;      /* time average over the measured window: E||theta||_H^2 (FIXED, RANDOM)
                         or E||theta||^2 (LOGCOSH) */
    double stderr_;   /* batch-means standard error of mean */
    double gap;       /* time average of F(theta) - F* (LOGCOSH; = mean/2 otherwise) */
    double gap_stderr;
    size_t burn_in, steps, batches;
    uint64_t seed;
} dpc_sim_result;

/* Runs the simulation. Work: (burn_in + steps) x d noisy updates (DPC_WORK_LIMIT, else
 * DPC_E_RANGE naming "steps" or "burn_in", whichever is longer). */
DPC_API DPC_NODISCARD dpc_status dpc_sim_run(const dpc_sim_config *c, dpc_sim_result *out,
                                             dpc_error *err);


/* ---- The setup of a theory run and its simulation (nu-DP-FTRL paper) -------------------------
 * One place for the decisions every front end (`dpcorr theory`, the nu-* repro targets) used to
 * make by itself: the defaults of the problem, the spectrum, Theorem 2.2's nu, the DP noise std
 * and the burn-in of a simulation.
 *   spectrum    LTI: lambda_k = k^-alpha (dpc_theory_powerlaw); MEAN: d = 1, lambda = 1; SC: the
 *               same power law (unused by the bound), the curvature that matters being mu
 *   lambda_min  the smallest eigenvalue (LTI, MEAN), mu (SC and the LOGCOSH model)
 *   nu          Theorem 2.2's choice nu = eta lambda_min, clamped to nu_max (nu < 1 keeps the
 *               nu-DP-FTRL coefficients summable)
 *   sigma       G gamma_inf / sqrt(2 rho): the noise std of rho-zCDP at clip norm G
 *   burn_in     burn_in_scale / min(eta lambda_min, nu), nu = 1 for a beta that is not nu-FTRL:
 *               burn_in_scale correlation times of the slowest mode
 *   beta        the mechanism's coefficients truncated where their l1 tail is <= tail
 *               (dpc_theory_beta_len_for_tail) */
typedef enum dpc_nu_problem {
    DPC_NU_PROBLEM_LTI = 0,  /* linear regression, H = diag(k^-alpha) */
    DPC_NU_PROBLEM_MEAN = 1, /* mean estimation (Theorem 2.1): d = 1, lambda = 1 */
    DPC_NU_PROBLEM_SC = 2    /* mu-strongly convex, L-smooth (Theorem 3.1) */
} dpc_nu_problem;

typedef struct dpc_nu_setup_params {
    dpc_nu_problem problem;   /* LTI */
    size_t d;                 /* 128 (MEAN: 1 whatever is set); >= 1 */
    double alpha;             /* 1: lambda_k = k^-alpha, finite >= 0 */
    double eta;               /* 0.02: learning rate > 0 */
    double rho;               /* 0.5: zCDP parameter > 0 */
    double G;                 /* 1: clip norm > 0 */
    double sigma_sgd;         /* 0: data-noise std >= 0 */
    double mu, L;             /* SC and LOGCOSH: 0.01, 1 (0 < mu <= L) */
    size_t tmax;              /* SC: Zames-Falb multipliers |t| <= tmax (4), tmax <= 31 */
    double nu_max;            /* 0.999: the clamp of Theorem 2.2's nu, in (0, 1) */
    /* the simulation (made when a beta is given and steps >= 1) */
    size_t steps;             /* measured steps (0: none) */
    dpc_sim_model model;      /* FIXED (LOGCOSH for SC's toy problem) */
    uint64_t seed;            /* 1 */
    double burn_in_scale;     /* 10, > 0 */
    double tail;              /* 1e-8: l1 tail of the truncated beta, in (0, 1) */
    size_t memory_budget;     /* 0: dpc_sim_run's default */
    size_t beta_len;          /* 65536: the coefficients of beta kept for a mechanism that is
                                 not a closed-form family (dpc_theory_beta_from_mech's len) */
} dpc_nu_setup_params;

typedef struct dpc_nu_setup {
    size_t d;
    double *lambda;            /* (d) owned: the spectrum */
    double lambda_min;
    double nu;                 /* Theorem 2.2's nu for this problem */
    dpc_theory_problem problem;/* eta, rho, G, sigma_sgd, d, lambda (a view of the above) */
    dpc_theory_sc sc;          /* mu, L, eta, rho, G, sigma_sgd, d, tmax */
    /* with a beta: */
    double gamma_inf2;         /* gamma_inf(beta)^2 */
    double sigma;              /* G gamma_inf / sqrt(2 rho) */
    size_t burn_in;
    double *beta;              /* (len) owned, truncated coefficients (with steps >= 1) */
    size_t len;
    dpc_sim_config sim;        /* ready for dpc_sim_run (with steps >= 1); points into this */
} dpc_nu_setup;

/* The field table of dpc_nu_setup_params: the defaults above, ranges, docs. */
DPC_API const dpc_field_table *dpc_nu_setup_params_fields(void);
/* Writes the table's defaults (dpc_field_defaults). */
DPC_API void dpc_nu_setup_params_init(dpc_nu_setup_params *p);
/* Checks p (DPC_E_INVALID naming the first field out of range) before any work, then fills
 * *out: the spectrum (DPC_E_RANGE naming "d" beyond the work limit; LTI: DPC_E_INVALID naming
 * "alpha" when d^-alpha underflows to 0), lambda_min, nu and the problem views; with b (may be
 * NULL) also
 * gamma_inf2, sigma and burn_in, and with steps >= 1 the truncated beta and the simulation's
 * configuration (DPC_E_INVALID naming "beta" when b's coefficients do not decay). *out is the
 * caller's (dpc_nu_setup_free), zeroed on failure. */
DPC_API DPC_NODISCARD dpc_status dpc_nu_setup_make(dpc_nu_setup *out,
                                                   const dpc_nu_setup_params *p,
                                                   const dpc_theory_beta *b, dpc_error *err);
DPC_API void dpc_nu_setup_free(dpc_nu_setup *s);

/* The bounds of dpc_theory_lti_bounds for the random Gaussian design x = H^{1/2} z of problem p:
 * ||x||^2's fourth-moment constant R^2 = Tr H + 2 ||H|| and C_kurt = 3 (Property C.3). */
DPC_API DPC_NODISCARD dpc_status dpc_nu_bounds_gaussian(const dpc_theory_problem *p,
                                                        const dpc_theory_beta *b,
                                                        dpc_theory_bounds *out, dpc_error *err);

/* Everything the theory says about one beta on a setup's problem (`dpcorr theory`). */
typedef struct dpc_nu_eval {
    /* LTI and MEAN */
    dpc_theory_lti quadrature;  /* V0 by quadrature */
    dpc_theory_lti series;      /* ... by the series (series_ok: when it converged) */
    int series_ok;
    double lti_opt;             /* the LTI optimum over all beta */
    double mean_opt, ratio_R;   /* MEAN: the optimum over beta (nu = eta) and R(eta); else NAN */
    dpc_theory_bounds bounds;   /* dpc_nu_bounds_gaussian */
    dpc_theory_rates rates;     /* Table 1 */
    /* SC */
    dpc_theory_sc_result sc;    /* the Theorem 3.1 / E.1 bound */
    dpc_theory_sc_result sc_opt;/* Optimized DP-FTRL (only with sigma_sgd = 0: have_sc_opt) */
    int have_sc_opt;
} dpc_nu_eval;

/* Fills *out for the problem of p (made by dpc_nu_setup_make(su, p, ...)) and beta b; a series
 * or an Optimized bound that fails is left out (series_ok, have_sc_opt = 0), any other failure
 * is returned. */
DPC_API DPC_NODISCARD dpc_status dpc_nu_evaluate(const dpc_nu_setup_params *p,
                                                 const dpc_nu_setup *su,
                                                 const dpc_theory_beta *b, dpc_nu_eval *out,
                                                 dpc_error *err);

/* The report of one evaluation as members of w's open object (dpcorr/io.h; `dpcorr theory
 * --json`): "problem" (p's), "mechanism" (the caller's description of beta, e.g.
 * dpc_theory_beta_describe), then
 *   SC:        "kappa" (L / mu), "gamma_inf2", "bound_F", "bound_dist2", "optimized_bound_F"
 *              (null without have_sc_opt);
 *   LTI, MEAN: "d" (su's), "alpha", "eta", "rho", "d_eff", "gamma_inf2", "v0", "v0_series"
 *              (null unless series_ok), "v0_sgd_noise", "lti_opt", MEAN: "mean_opt", "ratio_R";
 *              "lower_universal", "lower_c18", "upper_c14", "upper_c15", "sandwich_upper",
 *              "rate_sgd", "rate_ftrl", "rate_lower"; with a simulation (sim, may be NULL)
 *              "sim_design" (p's model), "sim_mean", "sim_stderr", "sim_steps", "sim_burn_in",
 *              "sim_seed".
 * gamma_inf2 is beta's (dpc_theory_gamma_inf2). */
struct dpc_json_writer;
DPC_API void dpc_nu_eval_json(struct dpc_json_writer *w, const dpc_nu_setup_params *p,
                              const dpc_nu_setup *su, const char *mechanism, double gamma_inf2,
                              const dpc_nu_eval *ev, const dpc_sim_result *sim);

#ifdef __cplusplus
}
#endif
#endif /* DPCORR_SIM_H */
