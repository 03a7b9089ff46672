/* dpcorr/papers/srgd.h — Accelerated-DP-SRGD: single-epoch, large-batch DP stochastic convex
 * optimization by stochastic recursive gradients, Nesterov acceleration and binary-tree
 * (continual-counting) noise. Choquette-Choo, Ganesh & Thakurta 2024, "Optimal rates for
 * O(1)-smooth DP-SCO with a single epoch and large batches" (arXiv 2406.02716), Algorithm 1.
 * Derivations and measurements: doc/srgd.md.
 *
 * The algorithm (one pass, T rounds, fixed disjoint batches B_0..B_{T-1} of B examples, eta_t =
 * t + 1, eta_{-1} = 0, x_0 = z_0 = 0):
 *
 *     Delta_t(d) = eta_t grad f(x_t, d) - eta_{t-1} grad f(x_{t-1}, d)      two points, one example
 *     Delta_t    = (1/B) sum_{d in B_t} clip(Delta_t(d), C_Delta)           clip(v,c) = v min(1, c/|v|)
 *     S^_t       = sum_{i<=t} Delta_i + xi_t                                xi_t: prefix-sum noise
 *     z_{t+1}    = Pi_C(z_t - s S^_t / beta)                                s = z_step (see below)
 *     y_{t+1}    = Pi_C(x_t - S^_t / (beta eta_t))
 *     x_{t+1}    = (1 - tau_{t+1}) y_{t+1} + tau_{t+1} z_{t+1},   tau_{t+1} = 2/(t+3)
 *     output y_T
 *
 * Paper -> dpcorr vocabulary:
 *   stream of increments Delta_t  = the "gradients" g_t of the matrix-factorization view (n = T
 *                                   steps, single participation: each example is in one Delta)
 *   TREE(T, sigma), Lemma 5.6     = dpc_mech kind DPC_MECH_TREE; dpc_noise emits the per-step noise
 *                                   whose running sum is the tree's prefix-sum noise:
 *                                   xi_t = sigma * sum_{i<=t} (B Z)_i, variance sigma^2
 *                                   popcount(t+1) per coordinate (O1)
 *   b_t (noise in the z-step)     = -s xi_t / beta  (the y-step sees -xi_t/(beta eta_t))
 *   sigma (Delta/beta scale)      = sigma_S / beta; sigma_S = (C_Delta/B) sqrt(1+ceil(log2 T))/mu
 *   mu-GDP, zero-out adjacency    = dpc_gdp_mu_for (exact) or dpc_account_srgd_mu_paper
 *   sigma_S / ((C_Delta/B) colnorm) = the noise multiplier z of dpcorr/account.h
 *
 * Privacy (zero-out adjacency). An example enters exactly one increment Delta_{t*} (fixed
 * disjoint batches, a single epoch), through the clipped difference of its two gradients, so
 * zeroing it changes that increment by at most C_Delta/B given the released history, and the
 * node vector of the tree by at most (C_Delta/B) sqrt(1 + ceil(log2 T)). Node noise std sigma_S
 * therefore gives mu-GDP for the adaptive run (Denisov et al. 2022); projections, the coupling
 * and the output are post-processing. This holds for ANY loss (convexity is not used) and any
 * beta, T, B, c: the constants only affect utility. The ledger reports mu, the (epsilon, delta)
 * actually achieved by the exact GDP curve, and the mechanism's own sensitivity (dpcorr's tree
 * has 1 + floor(log2 T) <= 1 + ceil(log2 T) levels: the formula is never optimistic).
 *
 * Resolved inconsistencies of the paper (note §2.8; doc/srgd.md):
 *   z-step   Algorithm 1 prints z_{t+1} = Pi(z_t - (eta_t/beta) grad_t); its proof needs
 *            eta_t/(s beta) with eta_t^2/eta_{0:t} <= s, i.e. s = 2 for eta_t = t + 1. Default
 *            z_step = 1/2 (the provably safe choice; O4 bound 2 beta |x0 - x*|^2/(T(T+1)));
 *            1 reproduces the printed algorithm, 1/4 the paper's potential coefficient 2 beta.
 *   noise    Corollary 5.7 prints sigma ~ sqrt(log T); Lemma 5.6 requires sqrt(1+ceil(log2 T))
 *            with mu-GDP: we use the latter with an exactly calibrated mu.
 *
 * Ablations (dpc_srgd_variant, dpc_srgd_noise): the unaccelerated SRG (Sec. 4.3), accelerated
 * DP-SGD with independent batch gradients (Thm. 5.13), independent per-step noise
 * (DPC_MECH_IDENTITY, sigma = C_Delta/(B mu)) and Honaker's tree estimator.
 *
 * Example (the note's P2 problem, Regime A, practical constant c = 1; compiled and run as
 * test_header_example in tests/test_srgd_opt.c):
 *     dpc_error err = {0};  dpc_rng rng;  dpc_rng_seed(&rng, 7);
 *     dpc_srgd_problem_config pc;  dpc_srgd_problem_config_init(&pc);
 *     pc.kind = DPC_SRGD_P2_LSQ;  pc.n = 65536;  pc.p = 32;
 *     dpc_srgd_problem *pr = NULL;  dpc_model_config mc;  dpc_model *model = NULL;
 *     if (dpc_srgd_problem_new(&pr, &pc, &rng, 0, &err) ||
 *         dpc_model_parse(&mc, dpc_srgd_problem_model_spec(pr), pc.p, 0, &err) ||
 *         dpc_model_new(&model, &mc, &err)) goto fail;
 *     dpc_srgd_config c;  dpc_srgd_config_init(&c);
 *     dpc_srgd_problem_constants(pr, &c.L, &c.M, &c.R);
 *     c.epsilon = 1;  c.delta = 1e-6;
 *     if (dpc_srgd_preset(&c, DPC_SRGD_REGIME_A, 1.0, 0, pc.n, pc.p, &err)) goto fail;
 *     dpc_srgd *s = NULL;  double excess;       // T = 16 rounds of B = 4096
 *     if (dpc_srgd_new(&s, model, dpc_srgd_problem_data(pr), &c, &rng, &err) ||
 *         dpc_srgd_run(s, NULL, &err) ||
 *         dpc_srgd_problem_excess(pr, dpc_srgd_output(s), &excess, &err)) goto fail;
 *     printf("excess risk %g\n", excess);      // about 1e-3
 *     dpc_srgd_free(s);  dpc_model_free(model);  dpc_srgd_problem_free(pr);
 *
 * Ownership and threading: dpc_srgd_new borrows the model, the data and the hooks' contexts
 * (they must outlive the run) and copies the configuration. A run is used by one thread.
 * Telemetry in dpc_srgd_step_info (norms, clip rate, losses, risk) is NOT privatized.
 */
#ifndef DPCORR_SRGD_H
#define DPCORR_SRGD_H

#include "dpcorr/account.h"
#include "dpcorr/common.h"
#include "dpcorr/data.h"
#include "dpcorr/field.h"
#include "dpcorr/mech.h"
#include "dpcorr/model.h"
#include "dpcorr/rng.h"
#include "dpcorr/train.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== Configuration ========================================================================= */

typedef enum dpc_srgd_variant {
    DPC_SRGD_ACCEL = 0,    /* Algorithm 1: SRG estimator + accelerated z/y/x updates; output y_T */
    DPC_SRGD_SRG = 1,      /* unaccelerated SRG (Sec. 4.3): x_{t+1} = Pi(x_t - S^_t/(beta eta_t));
                              output x_T */
    DPC_SRGD_ACCEL_SGD = 2 /* accelerated DP-SGD with independent batch gradients (Thm. 5.13):
                              g_t = (1/B) sum clip(grad f(x_t,d), C) + noise; z-step eta_t s g_t/beta,
                              y-step g_t/beta; one gradient per example */
} dpc_srgd_variant;

typedef enum dpc_srgd_noise {
    DPC_SRGD_NOISE_TREE = 0,       /* binary tree (DPC_MECH_TREE), node std sigma_S (the paper) */
    DPC_SRGD_NOISE_HONAKER = 1,    /* the same tree nodes with Honaker's online estimator */
    DPC_SRGD_NOISE_INDEPENDENT = 2 /* independent per-step noise (DPC_MECH_IDENTITY), std
                                      C_Delta/(B mu): prefix error grows like sqrt(t) */
} dpc_srgd_noise;

/* The GDP parameter mu of the calibration (dpc_calibration of dpcorr/account.h):
 *   ACCOUNTANT  the largest mu with delta(epsilon; mu) <= delta (dpc_gdp_mu_for, exact);
 *   PAPER       mu = epsilon / sqrt(2 ln(2.5/delta)) (epsilon <= 1): (eps, delta/2) (Lemma 5.6). */

typedef enum dpc_srgd_regime {
    DPC_SRGD_REGIME_A = 0, /* x-dagger in C: T ~ c n^(1/4) rounds, B = n/T (Eq. 19, Cor. 5.7) */
    DPC_SRGD_REGIME_B = 1  /* no assumption on x-dagger: B = floor(sqrt n), T = n/B (Lemma 5.9,
                              Cor. 5.10, Thm. 5.12) */
} dpc_srgd_regime;

/* In-place Euclidean projection of x (P) onto a closed convex set C with 0 in C (x_0 = 0).
 * The analysis uses only non-expansiveness and <Pi(w) - w, Pi(w) - u> <= 0 for u in C. */
typedef void (*dpc_srgd_project_fn)(void *ctx, double *x, size_t P);

/* Population risk hook: *F = F(x) (or an estimate) and, if grad != NULL, grad = grad F(x) (P).
 * DPC_E_UNSUPPORTED when the gradient is not available (the run then reports NaN). */
typedef dpc_status (*dpc_srgd_risk_fn)(void *ctx, const double *x, size_t P, double *F,
                                       double *grad, dpc_error *err);

/* Defaults and ranges: dpc_srgd_config_fields (below). */
typedef struct dpc_srgd_config {
    /* problem constants: used by dpc_srgd_preset and the Lemma 5.9 check, never by privacy */
    double L;        /* per-example Lipschitz constant of f on C, > 0 */
    double M;        /* per-example smoothness of f on C, > 0 */
    double R;        /* radius of C = B(0, R) for the default projection, > 0; INFINITY: R^p */
    /* schedule (dpc_srgd_preset fills these; or set them by hand) */
    size_t steps;    /* T >= 1 rounds */
    size_t batch;    /* B >= 1 examples per round; B T <= n */
    double beta;     /* > 0 */
    double clip;     /* C_Delta > 0 on Delta_t(d) (ACCEL_SGD: on grad f); INFINITY only when
                        non-private */
    double z_step;   /* s in (0, 1]: z_{t+1} = Pi(z_t - s S^_t / beta) */
    dpc_srgd_variant variant;
    dpc_srgd_noise noise;
    /* privacy */
    double epsilon;  /* > 0; INFINITY = non-private (no noise) */
    double delta;    /* in (0, 1/N), or 0: dpc_account_default_delta(N) (the rule of
                        every trainer, dpc_account_resolve_delta; the paper's runs set 1e-6) */
    int allow_large_delta; /* 1 accepts delta >= 1/N (a mechanism may then publish a record) */
    dpc_calibration calibration; /* mu of the noise: ACCOUNTANT or PAPER (above) */
    /* data order */
    int permute;     /* 0: batch t = examples [tB, (t+1)B) (stream order); 1: a public
                        random permutation first (dpc_sampler FIXED, stream SAMPLER of the rng) */
    /* hooks (all optional) */
    dpc_srgd_project_fn project; /* NULL: the l2 ball B(0, R) */
    void *project_ctx;
    dpc_srgd_risk_fn risk;       /* F for the telemetry; NULL: mean loss on `heldout` if given */
    void *risk_ctx;
    const dpc_dataset *heldout;  /* borrowed; NULL: none */
    size_t eval_every;           /* evaluate F(y_{t+1}) every this many steps and at the end
                                    (0 = never) */
    size_t chunk;                /* examples per gradient chunk */
} dpc_srgd_config;

/* The field table of dpc_srgd_config (dpcorr/field.h): every field's name (= dpc_error.field),
 * default, range and one-line doc; the checkpoint items are its fields in table order, less the
 * RUNTIME ones (allow_large_delta, chunk) and the hooks. */
DPC_API const dpc_field_table *dpc_srgd_config_fields(void);

/* Writes the table's defaults (dpc_field_defaults): L, M, R and epsilon 0 (must be set),
 * steps, batch, beta and clip 0 (set by dpc_srgd_preset or by hand), delta 0 (from N), no
 * hooks; the others as the table says. */
DPC_API void dpc_srgd_config_init(dpc_srgd_config *c);

/* c_DP of Regime A (Eq. 19): 4 sqrt(2) log2(n)^(3/2) sqrt(ln(2n/delta)) ln(2.5/delta) (log base 2
 * in log^(3/2) n, as the note's value 3.95e4 at n = 1e6, delta = 1e-6 requires). NAN if n < 2 or
 * delta not in (0, 1). */
DPC_API double dpc_srgd_c_dp(double n, double delta);

/* The smallest n at which the literal Regime A is feasible (T = c_DP n^(1/4) <= n, i.e.
 * n^(3/4) >= c_DP(n, delta)), by fixed-point iteration: 1.43e6 for delta = 1e-6 (B = 1 there,
 * a fully sequential run; B = 15 at n = 1e8). */
DPC_API double dpc_srgd_literal_min_n(double delta);

/* GDP parameter for (epsilon, delta) under the rule (INFINITY when epsilon is INFINITY). */
DPC_API DPC_NODISCARD dpc_status dpc_srgd_mu(double epsilon, double delta, dpc_calibration rule,
                                             double *mu, dpc_error *err);

/* Fills steps, batch, beta and clip of c from c->L, M, R, epsilon, delta, calibration, for n
 * examples in dimension p (P = number of parameters), with lev = 1 + ceil(log2 T):
 *
 * Regime A, practical (literal = 0; constant cc > 0, e.g. 1):
 *     T = ceil(cc n^(1/4)) (at most n), B = floor(n/T), C_Delta = cc L,
 *     beta = max{ M, (cc^2 L / R) max{1, sqrt(lev p)/(mu sqrt n)} }      (non-private: no 2nd term)
 *   The paper's beta = c_DP^2 L max{1, sqrt(p)/(eps sqrt n)}/R hides the tree's noise factor
 *   sqrt(lev)/mu ~ (5..15)/eps inside c_DP^2; with a practical cc it must be explicit, or beta
 *   switches to its private branch only once the noise already swamps the iterates (doc/srgd.md).
 * Regime A, literal (literal = 1; cc ignored): cc = c_DP(n, delta) and the printed Eq. 19,
 *     T = c_DP n^(1/4), B = n/T, C_Delta = c_DP L, beta = c_DP^2 L max{1, sqrt(p)/(eps sqrt n)}/R.
 *   Returns DPC_E_UNSUPPORTED with a message giving c_DP, T and the smallest feasible n when
 *   T > n (B < 1): e.g. n = 1e6, delta = 1e-6 gives c_DP = 3.95e4, T = 1.25e6 > n.
 * Regime B (cc and literal ignored; the paper's constants are feasible): c_M = M R / L,
 *     B = floor(sqrt n), T = floor(n/B), beta = (16 c_M + 8) L n^(3/2) / (R B^2) (>= 2 M T),
 *     C_Delta = (8 c_M + 4) L.
 * Requires L, M > 0, R > 0 finite, n >= 1, p >= 1, epsilon > 0 (INFINITY allowed), delta in
 * (0, 1). Errors name the field. */
/* The constant a preset is built from, and its name in the paper's words (*label, may be NULL):
 * Regime B: c_M = M R / L ("paper constants, c_M ="); Regime A literal: c_DP(n, delta) of Eq. 19
 * ("literal c_DP ="; NAN where c_DP is, see dpc_srgd_c_dp); Regime A practical: cc ("practical
 * c ="). Reads c->L, M, R only in Regime B. What dpc_srgd_preset uses and front ends print. */
DPC_API double dpc_srgd_preset_constant(const dpc_srgd_config *c, dpc_srgd_regime regime,
                                        double cc, int literal, size_t n, double delta,
                                        const char **label);

#define DPC_SRGD_PRACTICAL_C 1.0 /* the default regime-A practical constant cc */
DPC_API DPC_NODISCARD dpc_status dpc_srgd_preset(dpc_srgd_config *c, dpc_srgd_regime regime,
                                                 double cc, int literal, size_t n, size_t p,
                                                 dpc_error *err);

/* The constants of a model on data with a public row-norm bound x_norm_bound = X (||x|| <= X;
 * a bias adds 1: b = X^2 + 1, else b = X^2), for L and M left <= 0 (values > 0 are kept):
 *     logistic loss:  L = sqrt(b) (|(sigmoid(z) - y) (x, 1)|),  M = b / 4;
 *     squared loss (linear model, parameters in the ball of radius R, |y| <= y_bound):
 *                     L = sqrt(b) (sqrt(b) R + y_bound),  M = b.
 * Errors: DPC_E_INVALID naming "x_norm_bound" (X <= 0: no public bound) or "y_bound" (linear
 * without a positive bound); DPC_E_UNSUPPORTED naming "model" for other kinds. */
DPC_API DPC_NODISCARD dpc_status dpc_srgd_data_constants(const dpc_model_config *mc,
                                                         double x_norm_bound, double R,
                                                         double y_bound, double *L, double *M,
                                                         dpc_error *err);

/* The model of a DP-SRGD run on data when the caller names none (a spec for dpc_model_parse):
 * "logistic" for two classes (the paper's smooth convex classification loss), "linear" (squared
 * loss) otherwise. NULL ds: "linear". */
DPC_API const char *dpc_srgd_default_model(const dpc_dataset *ds);

/* A run's setup besides dpc_srgd_config: the preset's regime and constant, the constants L and
 * M (given, or derived), and the schedule's overrides. What every front end resolves before
 * dpc_srgd_new, by dpc_srgd_config_resolve. */
struct dpc_srgd_problem; /* the synthetic problems (below) */
typedef struct dpc_srgd_setup {
    dpc_srgd_regime regime; /* default A */
    double c;               /* Regime A's practical constant (default DPC_SRGD_PRACTICAL_C);
                               ignored with literal and in Regime B */
    int literal;            /* Regime A with the paper's literal c_DP (default 0) */
    double L, M;            /* > 0: given; 0 (default): the problem's, or on data derived from the
                               model and the data's public row-norm bound (dpc_srgd_data_constants) */
    double y_bound;         /* linear models on data: the public bound on |y| for L (default 0) */
    size_t steps, batch;    /* > 0: instead of the preset's (default 0) */
    double beta, clip;      /* > 0: instead of the preset's (default 0) */
} dpc_srgd_setup;
DPC_API void dpc_srgd_setup_init(dpc_srgd_setup *s);

/* Resolves c for a run of model m on train: c->R, the privacy fields, variant, noise, z_step,
 * permute and eval_every as the caller set them; L and M from s (given values kept), else the
 * problem's (pr non-NULL), else dpc_srgd_data_constants on train's x_norm_bound; then
 * dpc_srgd_preset for s->regime over train->n examples and the model's parameters, then s's
 * overrides; the evaluation (eval_every > 0): the problem's exact risk, else the held-out set,
 * else none (eval_every = 0). Errors: dpc_srgd_data_constants' (naming x_norm_bound, y_bound or
 * model), then dpc_srgd_preset's (naming its field). */
DPC_API DPC_NODISCARD dpc_status dpc_srgd_config_resolve(dpc_srgd_config *c,
                                                         const dpc_srgd_setup *s,
                                                         struct dpc_srgd_problem *pr,
                                                         const dpc_model *m,
                                                         const dpc_dataset *train,
                                                         const dpc_dataset *heldout,
                                                         dpc_error *err);

/* The privacy level at which regime A's practical beta (dpc_srgd_preset, constant cc) is k
 * times its non-private value for n examples in dimension p: mu = sqrt(lev p / n) / k, with
 * lev = 1 + ceil(log2 T), T = ceil(cc n^(1/4)). */
DPC_API double dpc_srgd_mu_at_beta_ratio(size_t n, size_t p, double cc, double k);

/* check_parameter: validates c for n examples without doing any work: every field within its
 * table's range (dpc_field_check), the fields that must be set, then the refusals that involve
 * several ("batch: B T = 1100 exceeds the 1000 examples", "clip: must be finite for a private
 * run", ...). */
DPC_API DPC_NODISCARD dpc_status dpc_srgd_config_check(const dpc_srgd_config *c, size_t n,
                                                       dpc_error *err);

/* The Lemma 5.9 bound on every per-example |Delta_t(d)| before clipping when beta >= 2 M T
 * (note's O5, with the diameter for |C|): 2 (M b_max + 2 M diam + L), b_max = max_t |xi_t|/beta. */
DPC_API double dpc_srgd_lemma59_bound(double M, double L, double diam, double b_max);

DPC_API const char *dpc_srgd_variant_name(dpc_srgd_variant v); /* "accel", "srg", "accel-sgd" */
DPC_API const char *dpc_srgd_noise_name(dpc_srgd_noise k);     /* "tree", "honaker", "independent" */
DPC_API DPC_NODISCARD dpc_status dpc_srgd_variant_parse(const char *s, dpc_srgd_variant *out,
                                                        dpc_error *err);
DPC_API DPC_NODISCARD dpc_status dpc_srgd_noise_parse(const char *s, dpc_srgd_noise *out,
                                                      dpc_error *err);

/* ==== The run =============================================================================== */

typedef struct dpc_srgd dpc_srgd; /* opaque */

/* The run's resolved schedule and the paper's privacy quantities. What was accounted is the
 * shared dpc_ledger (dpc_srgd_ledger): epsilon is the accountant's exact GDP epsilon at the
 * target delta for mu_effective, the noise multiplier z = sigma / ((C_Delta/B) colnorm(C)). */
typedef struct dpc_srgd_plan {
    int private_run;         /* 0 when epsilon is INFINITY */
    size_t n_examples;       /* n */
    size_t n_used;           /* B T: each used exactly once */
    size_t steps, batch;     /* T, B */
    double beta, clip, z_step;
    double mu;               /* GDP parameter of the calibration */
    double sigma;            /* noise std per node (tree) or per step (independent), on the
                                scale of S_t (sum of Delta); 0 when non-private */
    double sens_formula;     /* per-node-vector sensitivity / (C_Delta/B) used: sqrt(1+ceil(log2 T))
                                (tree) or 1 (independent) */
    double sens_mechanism;   /* the mechanism's exact single-participation sensitivity
                                (dpc_mech_sensitivity), <= sens_formula */
    double mu_effective;     /* (C_Delta/B) sens_mechanism / sigma <= mu */
    double delta_achieved;   /* delta(epsilon; mu_effective) by the exact GDP curve, <= delta */
    size_t grad_evals_planned; /* 2 n_used - B (SRG variants) or n_used (ACCEL_SGD) */
} dpc_srgd_plan;

/* Builds the run: checks the configuration against the data and model, calibrates the noise
 * (DPC_E_PRIVACY if the achieved delta would exceed the target), builds the mechanism and its
 * noise generator (stream DPC_STREAM_ID(DPC_STREAM_NOISE, 0) of rng) and, if permute, the
 * public permutation. model (its loss is f), data and the hook contexts are borrowed. The
 * parameter slab (P = dpc_model_num_params) is the optimization variable x; x_0 = 0. */
DPC_API DPC_NODISCARD dpc_status dpc_srgd_new(dpc_srgd **out, const dpc_model *model,
                                              const dpc_dataset *data, const dpc_srgd_config *cfg,
                                              const dpc_rng *rng, dpc_error *err);
DPC_API void dpc_srgd_free(dpc_srgd *s); /* NULL is a no-op */

/* Per-step telemetry (NOT privatized: outside the guarantee). */
typedef struct dpc_srgd_step_info {
    size_t step;            /* t, the step just taken */
    double eta;             /* eta_t = t + 1 */
    double max_norm;        /* max_d |Delta_t(d)| before clipping (ACCEL_SGD: max |grad f|) */
    double clip_fraction;   /* fraction of the batch with that norm > C_Delta */
    double noise_norm;      /* |xi_t|: prefix-sum noise (ACCEL_SGD: |noise of g_t|) */
    double b_norm;          /* |xi_t| / beta (the note's |b_t|; O5) */
    double grad_norm;       /* |S^_t / eta_t|: the noisy gradient estimate (ACCEL_SGD: |g^_t|) */
    double srg_error;       /* |S_t/eta_t - grad F(x_t)| (noise-free SRG error; ACCEL_SGD:
                               |g_t - grad F(x_t)|) if the risk hook gives gradients, else NaN */
    double grad_F_norm;     /* |grad F(x_t)| or NaN */
    double loss;            /* mean loss of the batch at x_t */
    double risk;            /* F(output after the step) when evaluated, else NaN */
    size_t grad_evals;      /* per-example gradient evaluations so far (dpc_srgd_increment
                               calls made by the caller count too) */
} dpc_srgd_step_info;

/* The field table of dpc_srgd_step_info (every field DERIVED: the trace's columns). */
DPC_API const dpc_field_table *dpc_srgd_step_info_fields(void);

/* One round; DPC_E_RANGE when all T rounds are done. info may be NULL. */
DPC_API DPC_NODISCARD dpc_status dpc_srgd_step(dpc_srgd *s, dpc_srgd_step_info *info,
                                               dpc_error *err);
/* All remaining rounds; trace (T) receives every step's info if non-NULL (indexed by t). */
DPC_API DPC_NODISCARD dpc_status dpc_srgd_run(dpc_srgd *s, dpc_srgd_step_info *trace,
                                              dpc_error *err);

/* Checkpoints (the container of dpcorr/train.h, kind DPC_SRGD_KIND). _save adds the run's
 * configuration items (L, M, R, steps, batch, beta, clip, z_step, variant, noise, epsilon, delta,
 * calibration, permute, eval_every; the model, P and the training set's size and content hash),
 * its progress and its state: x_t, x_{t-1}, y_t, z_t, the prefix sum S_t, the running noise sum,
 * S^_t and xi_t, the counters, and the noise generator's state (the tree's partial sums; nothing
 * for independent noise, which is regenerated). The batches are regenerated (stream order or
 * the public permutation of the RNG). _restore puts a saved state into s, a run built with the
 * same configuration, model, data and generator (check them first with dpc_ckpt_match against a
 * container of this run): DPC_E_STATE for another kind, DPC_E_FORMAT for missing or malformed
 * state. The hooks (project, risk, heldout) are the caller's: pass the same ones. */
#define DPC_SRGD_KIND "dp-srgd"
DPC_API DPC_NODISCARD dpc_status dpc_srgd_save(const dpc_srgd *s, dpc_ckpt *ck, dpc_error *err);
DPC_API DPC_NODISCARD dpc_status dpc_srgd_restore(dpc_srgd *s, const dpc_ckpt *ck,
                                                  dpc_error *err);
DPC_API size_t dpc_srgd_steps_done(const dpc_srgd *s);
DPC_API size_t dpc_srgd_steps_total(const dpc_srgd *s);         /* T rounds */
DPC_API size_t dpc_srgd_num_params(const dpc_srgd *s);          /* P */
DPC_API const dpc_ledger *dpc_srgd_ledger(const dpc_srgd *s);
DPC_API const dpc_srgd_plan *dpc_srgd_plan_get(const dpc_srgd *s);
/* The optimization term beta R^2 / T^2 of the accelerated rate, for a plan over the ball of
 * radius R (its beta and T = steps); front ends print it beside the literal constants' C_Delta
 * (a small term bought with a huge clip). NAN for a NULL plan or T = 0. */
DPC_API double dpc_srgd_optimization_term(const dpc_srgd_plan *p, double R);
DPC_API const dpc_srgd_config *dpc_srgd_config_get(const dpc_srgd *s);
/* The configuration the run uses: its configuration with the plan's schedule (steps, batch,
 * beta, clip, z_step: the preset's or the overrides) and the ledger's delta (resolved from n
 * when 0), what a dry run shows. */
DPC_API void dpc_srgd_config_resolved(const dpc_srgd *s, dpc_srgd_config *out);
/* The run's report sections (dpcorr/io.h's writer, members of the open object), as `train
 * --algo dp-srgd --report` writes them. dpc_srgd_config_report_json: the regime ("A"/"B"), regime
 * A's constant for n examples (dpc_srgd_preset_constant(c, A, cc, literal, n, c->delta)),
 * literal, c's variant, noise, L, M, R, the plan's schedule (steps, batch, beta, clip_delta,
 * z_step) and permute. dpc_srgd_plan_report_json: "privacy_paper" (private, mu, mu_effective,
 * delta_achieved, sigma_S, the sensitivities). dpc_srgd_steps_report_json: "steps", one object
 * per round of trace (T: t, max_delta_norm, clip_fraction, noise_norm, b_norm, grad_norm,
 * srg_error, batch_loss, risk). */
struct dpc_json_writer;
DPC_API void dpc_srgd_config_report_json(struct dpc_json_writer *w, const dpc_srgd_config *c,
                                         const dpc_srgd_plan *p, dpc_srgd_regime regime,
                                         double cc, int literal, size_t n);
DPC_API void dpc_srgd_plan_report_json(struct dpc_json_writer *w, const dpc_srgd_plan *p);
DPC_API void dpc_srgd_steps_report_json(struct dpc_json_writer *w,
                                        const dpc_srgd_step_info *trace, size_t T);
/* The output: y_t (x_t for DPC_SRGD_SRG) after the steps done; y_T at the end. (P), owned. */
DPC_API const double *dpc_srgd_output(const dpc_srgd *s);
/* The run as a dpc_run (dpcorr/train.h; kind DPC_SRGD_KIND, step info dpc_srgd_step_info,
 * params the output y_t, the container checkpoints of _save / _restore). */
DPC_API dpc_run dpc_srgd_run_ops(dpc_srgd *s);
/* Current iterates x_t, z_t (P), owned. */
DPC_API const double *dpc_srgd_x(const dpc_srgd *s);
DPC_API const double *dpc_srgd_z(const dpc_srgd *s);
/* Of the last step t: the released noisy prefix S^_t and its noise xi_t (ACCEL_SGD: the noisy
 * gradient and its noise). (P), owned; zeros before the first step. For tests and audits. */
DPC_API const double *dpc_srgd_prefix(const dpc_srgd *s);
DPC_API const double *dpc_srgd_prefix_noise(const dpc_srgd *s);

/* The examples of batch t (B indices into the data) in processing order.  idx: (B) */
DPC_API DPC_NODISCARD dpc_status dpc_srgd_batch(const dpc_srgd *s, size_t t, size_t *idx,
                                                dpc_error *err);

/* Statistics of one batch increment. */
typedef struct dpc_srgd_incr_stats {
    double max_norm;      /* max_d |Delta_t(d)| before clipping */
    double clip_fraction;
    double loss;          /* mean loss at x_t */
} dpc_srgd_incr_stats;

/* The clipped batch increment of round t at the points (x_t, x_{t-1}), exactly as the run
 * computes it (the run calls this): out = (1/B) sum_{d in B_t} clip(eta_t grad f(x_t, d) -
 * eta_{t-1} grad f(x_{t-1}, d), C_Delta); x_prev is not read when t = 0 (may be NULL).
 * ACCEL_SGD: out = (1/B) sum clip(grad f(x_t, d), C). A pure function of (data, t, points):
 * the zero-out test evaluates it on neighbouring data sets along one released history. st may
 * be NULL.                                                        x_t, x_prev, out: (P) */
DPC_API DPC_NODISCARD dpc_status dpc_srgd_increment(dpc_srgd *s, size_t t, const double *x_t,
                                                    const double *x_prev, double *out,
                                                    dpc_srgd_incr_stats *st, dpc_error *err);

/* ==== The note's synthetic problems (§6: P1, P2, P3) ======================================== */
/* Exact population risk, known constants L and M on C = B(0, R), x* = argmin_C F. Example i is
 * drawn from counter row i of stream DPC_STREAM_ID(DPC_STREAM_DATA, stream_index) (the first m
 * examples of a set of n > m are the set of m). Let p0 = relevant coordinates (the others have
 * zero features: only noise moves them), lambda_1 >= ... >= lambda_p0 geometric with
 * lambda_1/lambda_p0 = 10^decades, w0 = w_norm (1, ..., 1, 0, ...)/sqrt(p0).
 *
 *   P1 logistic (labels 0/1, loss log(1+e^z) - y z; L = 1, M = 1/4):
 *        P(y = 1 | a) = sigmoid(<a, w0>) (well specified: x-dagger = w0)
 *   P2 least squares (0.5 (<a, x> - y)^2; L = R + w_norm + noise, M = 1):
 *        y = <a, w0> + u, u uniform on [-noise, noise]; F(x) = 0.5 |x - w0|^2_Lambda + noise^2/6
 *   designs: SPARSE  a = +-e_J, J ~ lambda (sum lambda = 1), |a| = 1, E a a^T = diag(lambda);
 *            SPHERE  a = diag(sqrt(p0 lambda_k)) u, u uniform on the sphere of R^p0,
 *                    lambda_1 = 1/p0 (so |a| <= 1), E a a^T = diag(lambda).
 *        F is exact for P2 and for P1 SPARSE (F(x) = sum_k lambda_k (softplus(x_k) - sigmoid(w0_k)
 *        x_k)); P1 SPHERE uses a Monte-Carlo sample of eval_n feature vectors (exact in y) and
 *        requires w_norm <= R.
 *   P3 quadratic / Nesterov: "identical examples" — a design of K rows repeated in blocks, so
 *        every batch whose size is a multiple of K has exactly the gradient of F (non-private
 *        optimizer checks; clip must be INFINITY). QUADRATIC: K = p, F = 0.5 |x - x*|^2_Lambda,
 *        lambda geometric from 1 to 10^-decades, |x*| = w_norm. NESTEROV: K = p + 1, Nesterov's
 *        worst-case function (Introductory Lectures 2004, Sec. 2.1.2) with smoothness 1:
 *        F = (1/8)(x_1^2 + sum (x_i - x_{i+1})^2 + x_p^2) - x_1/4 + 1/8, x*_i = 1 - i/(p+1).
 *        Both need |x*| <= R. L, M reported are those of F (M = 1). */
typedef enum dpc_srgd_problem_kind {
    DPC_SRGD_P1_LOGISTIC = 0,
    DPC_SRGD_P2_LSQ = 1,
    DPC_SRGD_P3_QUADRATIC = 2,
    DPC_SRGD_P3_NESTEROV = 3
} dpc_srgd_problem_kind;

typedef enum dpc_srgd_design {
    DPC_SRGD_DESIGN_SPARSE = 0,
    DPC_SRGD_DESIGN_SPHERE = 1
} dpc_srgd_design;

typedef struct dpc_srgd_problem_config {
    /* defaults, ranges and docs: dpc_srgd_problem_config_fields */
    dpc_srgd_problem_kind kind;
    dpc_srgd_design design;
    size_t n, p, relevant;
    double decades;
    double w_norm, noise, R;
    size_t eval_n;
} dpc_srgd_problem_config;

typedef struct dpc_srgd_problem dpc_srgd_problem; /* opaque, immutable */

/* The field table of dpc_srgd_problem_config: defaults, ranges, docs (field names as in
 * dpc_error.field, "w_norm"; front ends nest them as "problem.w_norm"). */
DPC_API const dpc_field_table *dpc_srgd_problem_config_fields(void);
/* Writes the table's defaults (dpc_field_defaults; kind P1 LOGISTIC). */
DPC_API void dpc_srgd_problem_config_init(dpc_srgd_problem_config *c);
DPC_API const char *dpc_srgd_problem_kind_name(dpc_srgd_problem_kind k); /* "p1", "p2", ... */
DPC_API DPC_NODISCARD dpc_status dpc_srgd_problem_kind_parse(const char *s,
                                                             dpc_srgd_problem_kind *out,
                                                             dpc_error *err);

/* Draws the data and solves for x* (constrained, by bisection on the Lagrange multiplier of
 * |x| <= R for the diagonal problems). Caller frees. */
DPC_API DPC_NODISCARD dpc_status dpc_srgd_problem_new(dpc_srgd_problem **out,
                                                      const dpc_srgd_problem_config *cfg,
                                                      const dpc_rng *rng, uint64_t stream_index,
                                                      dpc_error *err);
DPC_API void dpc_srgd_problem_free(dpc_srgd_problem *pr);

/* The configuration the problem was built with (owned by pr). */
DPC_API const dpc_srgd_problem_config *dpc_srgd_problem_get_config(const dpc_srgd_problem *pr);
/* The training set (n x p; labels 0/1 for P1), owned by the problem. */
DPC_API const dpc_dataset *dpc_srgd_problem_data(const dpc_srgd_problem *pr);
/* The dpc_model spec of the loss: "logistic:nobias" (P1) or "linear:nobias". */
DPC_API const char *dpc_srgd_problem_model_spec(const dpc_srgd_problem *pr);
/* L, M on C = B(0, R) and R (any pointer may be NULL). */
DPC_API void dpc_srgd_problem_constants(const dpc_srgd_problem *pr, double *L, double *M,
                                        double *R);
DPC_API const double *dpc_srgd_problem_xstar(const dpc_srgd_problem *pr); /* (p) */
DPC_API const double *dpc_srgd_problem_lambda(const dpc_srgd_problem *pr); /* (p), 0 beyond p0 */
DPC_API double dpc_srgd_problem_fstar(const dpc_srgd_problem *pr);        /* F(x*) */
/* F(x) and grad F(x) (grad may be NULL); a dpc_srgd_risk_fn (ctx = the problem). P must be p. */
DPC_API DPC_NODISCARD dpc_status dpc_srgd_problem_risk(void *pr, const double *x, size_t P,
                                                       double *F, double *grad, dpc_error *err);
/* F(x) - F(x*), clamped at 0 against rounding (P2, P3 QUADRATIC: 0.5 (x-x*).Lambda (x+x*-2w0);
 * P1: per-coordinate differences, or Monte-Carlo KL terms for SPHERE; NESTEROV: F - F*). */
DPC_API DPC_NODISCARD dpc_status dpc_srgd_problem_excess(const dpc_srgd_problem *pr,
                                                         const double *x, double *excess,
                                                         dpc_error *err);

/* ==== The reproduction (`dpcorr repro srgd`) ================================================ *
 *
 * The paper is purely theoretical (no figures or tables); its reproduction measures the scalings
 * its theorems predict on the note's P2 problem (least squares, sparse design, spectrum geometric
 * over 4 decades, |w0| = 1.8 in C = B(0, 2): Regime A; exact excess risk), delta = 1e-6, fresh
 * data per seed. It is the paper module's own knowledge (grids, constants, horizons, seeds,
 * baselines, statistics and checks), so that every front end (the CLI's `repro srgd`, a binding)
 * reproduces the same numbers; the front end only writes CSV, JSON, text and plots.
 *   E1 excess risk vs n (T = n^(1/4)): P2 and P1 non-private, the private part (DP minus non-DP
 *      on the same data) at eps_n, unaccelerated SRG and accelerated DP-SGD (non-private);
 *   E2 the private part vs p at the eps where beta = k_p beta_0 for the smallest p;
 *   E3 the private part vs eps, eps solved for beta = k beta_0 (dpc_srgd_mu_at_beta_ratio);
 *   E4 Regime A vs B, non-private and eps = 1;
 *   E6 tree, Honaker tree, independent noise at equal privacy, and non-private; T = c n^(1/4);
 *   E7 baselines at equal (eps, delta) and n, one epoch: DP-SRGD, accelerated DP-SGD (Thm 5.13),
 *      the core trainer's DP-SGD (identity, Poisson, amplified) and DP-FTRL (tree, fixed order),
 *      whose noise multipliers are calibrated once per (eps, algorithm) by the PLD accountant
 *      and whose lr is the best of a grid (tuned non-privately);
 *   E8 instrumented single runs (Regime A and B, eps = 1): the per-step records.
 * Run s of a series uses seed = params->seed + (series salt) + s for its data and noise (seeded
 * mode): E1 100, E2 5000, E3 7000, E4 9000 + 100 i, E6 11000 + 100 i, E7 13000 + 100 e (the
 * calibrations 13000), E8 15000. Every run steps through dpc_srgd_run or the run driver
 * (dpc_run_drive); the runs are independent jobs on params->threads threads, bit-identical for
 * any thread count. */

/* Scale of the grids and horizons. */
typedef enum dpc_srgd_repro_scale {
    DPC_SRGD_REPRO_FULL = 0,  /* the reported grids (tens of minutes) */
    DPC_SRGD_REPRO_QUICK = 1, /* reduced grids and horizons (about a minute) */
    DPC_SRGD_REPRO_SMOKE = 2  /* tiny, for sanitizer runs (numbers not meaningful) */
} dpc_srgd_repro_scale;

typedef struct dpc_srgd_repro_params {
    dpc_srgd_repro_scale scale;  /* default FULL */
    uint64_t seed;               /* root seed of every run (default 20240101, the CLI's) */
    size_t threads;              /* worker threads, >= 1 (default 1; results do not depend on it) */
    dpc_isa model_isa, noise_isa; /* kernel levels of the models and of the trainer's noise
                                    (default AUTO; results do not depend on them) */
    double (*cpu_clock)(void);   /* CPU seconds of the calling thread, for the runs' cpu_seconds
                                    (NULL: no timing, 0); the library reads no clock of its own */
} dpc_srgd_repro_params;
/* Writes the table's defaults (full, 20240101, 1 thread, AUTO levels, no clock). */
DPC_API void dpc_srgd_repro_params_init(dpc_srgd_repro_params *p);
/* The field table of dpc_srgd_repro_params (dpcorr/field.h): defaults, ranges and docs. */
DPC_API const dpc_field_table *dpc_srgd_repro_params_fields(void);

/* The grids of one scale. */
typedef struct dpc_srgd_repro_grid {
    size_t seeds_n, seeds_private, seeds_ablation, seeds_baseline; /* seeds per point */
    size_t Tn[8], nTn;         /* E1: n = T^4 */
    size_t p_n;                /* E1 dimension */
    double eps_n;              /* E1 private series */
    size_t n_private, relevant; /* E2/E3: n, relevant coordinates */
    size_t ps[5], nps;         /* E2 dimensions */
    double k_p;                /* E2: eps solved for beta = k_p beta_0 at p = ps[0] */
    double ks[10];             /* E3: beta / beta_0 = k (epsilon solved for it), p = ps[0] */
    size_t nks;
    size_t n_ablation;         /* E6, E7 */
    double cs[5];              /* E6: T = c n^(1/4) */
    size_t ncs;
    int honaker;               /* E6: also the Honaker tree */
    double eps_tree;           /* E6 */
    double eps_base[3];        /* E7 */
    size_t neb;
    double lrs[5];             /* E7: the trainer's learning rates */
    size_t nlr;
    size_t base_batch;         /* E7: the trainer's batch */
    size_t n_ab[3], nab;       /* E4 */
} dpc_srgd_repro_grid;
/* The grid of scale s; DPC_E_INVALID naming "scale" for an unknown one. */
DPC_API DPC_NODISCARD dpc_status dpc_srgd_repro_grid_get(dpc_srgd_repro_scale s,
                                                         dpc_srgd_repro_grid *out,
                                                         dpc_error *err);

/* A mean over seeds and its standard error (NAN for one seed). */
typedef struct dpc_srgd_repro_stat {
    double mean, se;
} dpc_srgd_repro_stat;

typedef struct dpc_srgd_repro_vs_n_row { /* E1, one n */
    size_t n, T, B;
    double beta;
    uint64_t seed0; /* the first seed of the point */
    dpc_srgd_repro_stat nonprivate_p2, nonprivate_p1, private_part, unaccelerated, accel_sgd;
} dpc_srgd_repro_vs_n_row;

typedef struct dpc_srgd_repro_vs_p_row { /* E2, one p */
    size_t p;
    double beta;
    dpc_srgd_repro_stat private_part, excess_private, excess_nonprivate;
} dpc_srgd_repro_vs_p_row;

typedef struct dpc_srgd_repro_vs_eps_row { /* E3, one k */
    double eps, k, beta;
    dpc_srgd_repro_stat private_part;
    int in_fit; /* k >= 3 and beta <= lambda_1 T^2/8 (the noise-dominated range) */
} dpc_srgd_repro_vs_eps_row;

typedef struct dpc_srgd_repro_regime_row { /* E4, one (n, regime) */
    size_t n, T, B;
    dpc_srgd_regime regime;
    double beta;
    dpc_srgd_repro_stat nonprivate, eps1;
} dpc_srgd_repro_regime_row;

typedef struct dpc_srgd_repro_tree_row { /* E6, one c */
    double c;
    size_t T, B;
    double beta;
    dpc_srgd_repro_stat tree, honaker, independent, nonprivate; /* honaker NAN without it */
    double z;  /* (independent - tree) / its s.e. (independent seeds per kind of noise) */
    int wins;  /* z > 3: one-sided test at 3 standard errors */
} dpc_srgd_repro_tree_row;

/* E7 methods: DP-SRGD, accelerated DP-SGD, the trainer's DP-SGD (Poisson), DP-FTRL (tree). */
#define DPC_SRGD_REPRO_NMETHODS 4
typedef struct dpc_srgd_repro_baseline {
    size_t T, B;
    double lr, noise_multiplier; /* the trainer's (0 for DP-SRGD's own) */
    dpc_srgd_repro_stat excess;
} dpc_srgd_repro_baseline;

typedef struct dpc_srgd_repro_result {
    dpc_srgd_repro_grid grid;
    size_t runs, calibrations;     /* jobs run */
    /* E1 */
    dpc_srgd_repro_vs_n_row vs_n[8];
    double slope_n_p2, slope_n_p2_se, slope_n_p1, slope_n_unaccelerated, slope_n_accel_sgd,
        slope_n_private; /* log-log slopes vs n (jackknife s.e. over seeds for P2) */
    /* E2, E3 (of the problem at p = ps[0]: lambda_1, beta_0 and T of its non-private preset) */
    double lambda1, beta0, eps_p, beta_max_fit;
    size_t T_private, fit_points;
    dpc_srgd_repro_vs_p_row vs_p[5];
    dpc_srgd_repro_vs_eps_row vs_eps[10];
    double slope_p, slope_p_se, slope_eps, slope_eps_se, slope_beta_eps, slope_beta_p;
    /* E4 (nab x {A, B}), E6, E7 */
    dpc_srgd_repro_regime_row regimes[6];
    dpc_srgd_repro_tree_row tree[5];
    int tree_beats_independent; /* wins at every T >= 64 (and some T >= 64) */
    dpc_srgd_repro_baseline baselines[3][DPC_SRGD_REPRO_NMETHODS]; /* [eps][method] */
    /* E8: the per-step records of the Regime A and B runs (trace_T[r] each, owned) */
    dpc_srgd_step_info *trace[2];
    size_t trace_T[2];
    double regime_a_max_delta_over_first_step;
    /* CPU seconds (params->cpu_clock) per experiment: E1, E2, E3, E4, E6, E7 (with the
     * calibrations), E8 */
    double cpu_seconds[7];
} dpc_srgd_repro_result;

/* The number of runs and calibrations dpc_srgd_repro_run makes for these parameters (cheap). */
DPC_API DPC_NODISCARD dpc_status dpc_srgd_repro_count(const dpc_srgd_repro_params *p,
                                                      size_t *runs, size_t *calibrations,
                                                      dpc_error *err);
/* Runs every experiment and computes its statistics. *out is freed by
 * dpc_srgd_repro_result_free. A failed run fails the whole with its error. */
DPC_API DPC_NODISCARD dpc_status dpc_srgd_repro_run(const dpc_srgd_repro_params *p,
                                                    dpc_srgd_repro_result **out,
                                                    dpc_error *err);
DPC_API void dpc_srgd_repro_result_free(dpc_srgd_repro_result *r); /* NULL is a no-op */

/* Names of the E7 methods ("dp-srgd", "accel-dp-sgd", "dp-sgd-poisson", "dp-ftrl-tree") and of
 * the experiments of cpu_seconds ("vs-n", ..., "trace"). */
DPC_API const char *dpc_srgd_repro_method_name(size_t m);
DPC_API const char *dpc_srgd_repro_experiment_name(size_t g);
/* Slope of log(mean over seeds) on log x with its jackknife standard error over the seeds (the
 * series reuse the same seeds at every x: the seed is the unit of replication). v: (npts, ns)
 * row-major; npts, ns <= 16; *se NAN for one seed. */
DPC_API double dpc_srgd_repro_slope_jk(const double *x, const double *v, size_t npts, size_t ns,
                                       double *se);
/* What the reproduction reproduces and what it cannot (and why): static strings, *n each. */
DPC_API const char *const *dpc_srgd_repro_reproduced(size_t *n);
DPC_API const char *const *dpc_srgd_repro_not_reproduced(size_t *n);

#ifdef __cplusplus
}
#endif
#endif /* DPCORR_SRGD_H */
