/* dpcorr/papers/kan.h — Kolmogorov-Arnold networks (KANs) trained with DP-lambda-CGD: the paper's
 * two-layer B-spline KAN, projected DP-lambda-CGD, and the theory's constants and bounds.
 *
 * Source: P. Wang, J. Schuchardt, N. Kalinin, J. Zhou, S. Fellenz, C. Lampert, M. Kloft,
 * "Population risk bounds for Kolmogorov-Arnold networks trained by DP-SGD with correlated
 * noise", arXiv:2605.12648 (2026); cited below as [KAN].
 * doc/kan.md maps its notation to dpcorr:
 *
 *   paper                         dpcorr
 *   kappa ("noise multiplier")    noise_std: the std of each entry of Z per unit clip, on the
 *                                 batch sum; dpcorr's noise multiplier (dpcorr/account.h) is
 *                                 z = noise_std / colnorm(C), colnorm(C) = ||C e_0|| =
 *                                 sqrt(sum_j lambda^(2j)) for lambda-CGD (z = kappa at lambda = 0)
 *   xi_t = kappa (Z_t - lam Z_t-1) noise_std * (B Z)_t, B bidiagonal (1, -lambda): dpc_noise
 *   c_priv = C_clip kappa / B     dpc_kan_lcgd_noise_scale()
 *   T (iterates W_0..W_{T-1})     iterates; T - 1 updates (Algorithm 1 taken literally)
 *   W (m x dp), c (mp)            W: slab of m*d*p doubles, row j = w_j; c: owned by dpc_kan2
 *   h(x) in R^{dp}                dpc_kan2_features(), order (i, k) -> i*p + k
 *
 * The module's parts (sections below): 1 basis and activation, 2 the paper's KAN, 3 the NTK
 * margin, 4 theory, 5 privacy helpers, 6 fresh batches and synthetic data, 7 projected
 * DP-lambda-CGD, 8 gradient oracles for the paper's KAN and for any dpc_model, 9 the
 * reproduction (`dpcorr repro kan`). In short:
 *
 *  1. Uniform cubic B-splines on an extended grid (any KAN here uses them; the practical KAN of
 *     dpcorr/model.h, kind DPC_MODEL_KAN, too) and the fixed activation sigma.
 *  2. The paper's KAN ([KAN] Sec. 3, App. B): inputs x in the unit ball of R^d, labels +-1,
 *         f_W(x) = (1/sqrt m) sum_j sum_k c_jk b_k( sigma( (1/sqrt d) sum_i sum_k w_ijk b_k(x_i) ) )
 *     with logistic loss l(y f), W_0 ~ N(0, I), c ~ N(0, I) fixed. Per-example gradients are
 *     rank one, grad_W l = l'(y f) y alpha h(x)^T with alpha_j = sigma'(pre_j) <c_j, h'(u_j)>
 *     / sqrt(m d), so their norm |l'| ||alpha|| ||h|| is exact and no gradient is formed.
 *  3. Projected DP-lambda-CGD ([KAN] Algorithm 1): a fresh uniform batch of B of the n examples
 *     per step, per-example clipping, noise noise_std (Z_t - lambda Z_{t-1}) C_clip / B from the
 *     core's dpc_mech (kind LCGD) and dpc_noise (REPLAY form: no memory beyond the iterate),
 *     projection onto the ball B(W_0, R*) with an activation counter. Model-agnostic: any
 *     gradient oracle (dpc_kan2, or any dpc_model through dpc_kan_model_task).
 *  4. Theory: the NTK margin gamma, G_delta, beta, eta_max, R*, the width window and the risk
 *     bounds A_corr, A_van, A_non with unit constants (the paper's constants are unknown).
 *  5. Privacy: the paper's closed noise_std formulas (dpc_account_kan_paper_indep and
 *     dpc_account_kan_paper_lcgd, src/papers/kan/paper_noise.c; their accountant names kept for
 *     the ABI), the lambda-CGD pattern sensitivity, the
 *     participation tail, the eq. 19 RDP epsilon, and dpcorr's tighter calibration; a run's
 *     decisions (dpc_kan2_to_unit_ball, dpc_kan2_run_theory, dpc_kan_run_resolve,
 *     dpc_kan2_run_bounds), which every front end of a run makes through them.
 *  9. The reproduction: grids, seeds, runs, statistics and verdicts of the paper's empirical
 *     check (dpc_kan_repro_*), the front end writing the files.
 *
 * Example (train the paper's KAN privately on synthetic data):
 *     dpc_rng rng;  dpc_rng_seed(&rng, 7);
 *     dpc_dataset *tr = NULL;   dpc_kan2 *k = NULL;   dpc_kan_task *task = NULL;
 *     dpc_kan2_config kc = {5, 64, 5, DPC_KAN_SIGMOID};          // d, m, grid G, sigma
 *     if (dpc_kan_synth(&tr, &rng, 0, 1000, 5, 0.05, NULL, &err) ||
 *         dpc_kan2_new(&k, &kc, &rng, 0, &err) ||
 *         dpc_kan2_task_new(&task, k, tr, NULL, &err)) goto fail;
 *     double *W0 = malloc(dpc_kan2_num_params(k) * sizeof *W0);
 *     if (dpc_kan2_init(k, W0, &rng, 0, &err)) goto fail;
 *     dpc_kan_lcgd_config c;  dpc_kan_lcgd_config_init(&c);
 *     c.n = 1000; c.iterates = 400; c.batch = 100; c.eta = 0.5; c.clip = 1; c.lambda = 0.5;
 *     if (dpc_account_kan_paper_lcgd(1000, 100, 399, 1.0, 1e-5, 0.5, &c.noise_std, &err)) goto fail;
 *     dpc_kan_lcgd_result res;
 *     if (dpc_kan_lcgd_train(&c, dpc_kan2_num_params(k), &rng, W0, dpc_kan_task_grad,
 *                            dpc_kan_task_eval, task, 10, NULL, NULL, &res, &err)) goto fail;
 *     // res.avg_train_loss: L_S(W_t) averaged over t = 0, 10, ..., T-1 (eval_every = 10;
 *     // 1 gives (1/T) sum_t L_S(W_t), the quantity of Thm. 4.1)
 * (tests/test_kan_lcgd.c runs this example.)
 *
 * Conventions: the library never prints or exits; functions return dpc_status and fill the
 * optional dpc_error naming the parameter at fault. A dpc_kan2 is immutable after creation and
 * may be shared by threads; a dpc_kan_lcgd run and a dpc_kan_task are used by one thread at a
 * time. Every random value is a pure function of (key, stream, row, index).
 */
#ifndef DPCORR_KAN_H
#define DPCORR_KAN_H

#include "dpcorr/account.h"
#include "dpcorr/bspline.h"
#include "dpcorr/common.h"
#include "dpcorr/field.h"
#include "dpcorr/data.h"
#include "dpcorr/mech.h"
#include "dpcorr/model.h"
#include "dpcorr/rng.h"
#include "dpcorr/train.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== 1. Uniform cubic B-splines and the activation ======================================== */

/* The basis is the core's uniform cubic B-spline (dpcorr/bspline.h). */

/* Constants of Assumption 3.2 for the basis, computed numerically (a scan of every piece on a
 * fine grid refined by golden-section search), over all x:
 *     B = max |b_k|, B1 = max |b_k'|, B2 = max |b_k''| (the piecewise-linear b'' attains its
 *     max at a knot; the one-sided value is used), sumsq = max_{x in [lo, hi]} sum_k b_k(x)^2.
 * For the uniform cubic basis they are 2/3, 2/(3h), 2/h^2 and 1/2 (doc/kan.md). */
typedef struct dpc_kan_spline_consts {
    double B, B1, B2, sumsq;
} dpc_kan_spline_consts;
DPC_API void dpc_kan_spline_constants(const dpc_bspline *s, dpc_kan_spline_consts *out);

/* The fixed activation between the two spline layers of the paper's KAN. */
typedef enum dpc_kan_act {
    DPC_KAN_SIGMOID = 0, /* 1/(1+e^-x): range (0, 1) */
    DPC_KAN_TANH = 1     /* range (-1, 1) */
} dpc_kan_act;

DPC_API const char *dpc_kan_act_name(dpc_kan_act a); /* "sigmoid", "tanh" */
DPC_API DPC_NODISCARD dpc_status dpc_kan_act_parse(const char *s, dpc_kan_act *out,
                                                   dpc_error *err);
/* sigma(x), sigma'(x), sigma''(x) (s1, s2 may be NULL). */
DPC_API void dpc_kan_act_eval(dpc_kan_act a, double x, double *s, double *s1, double *s2);
/* sup |sigma|, sup |sigma'|, sup |sigma''| over R, computed numerically (golden-section search
 * on the derivative magnitudes): sigmoid 1, 1/4, 1/(6 sqrt 3); tanh 1, 1, 4/(3 sqrt 3). */
DPC_API void dpc_kan_act_constants(dpc_kan_act a, double *B, double *B1, double *B2);

/* Logistic loss of the margin z = y f: l = log(1 + e^-z), l' = -1/(1 + e^z), l'' = s(z)s(-z),
 * without overflow (l1, l2 may be NULL). */
DPC_API double dpc_kan_logistic(double z, double *l1, double *l2);

/* ==== 2. The paper's two-layer KAN ========================================================= */

typedef struct dpc_kan2_config {
    size_t d;        /* input dimension >= 1 (inputs in the unit ball of R^d) */
    size_t m;        /* hidden width >= 1 */
    size_t grid;     /* G: intervals of the basis on [-1, 1]; p = G + 3 bases */
    dpc_kan_act act; /* sigma */
} dpc_kan2_config;

/* The field table of dpc_kan2_config (dpcorr/field.h): d and m in [1, 2^24], grid in [1, 256]
 * (default 5), act (default sigmoid); dpc_kan2_config_parse writes its defaults and
 * dpc_kan2_new range-checks through it, naming the field. */
DPC_API const dpc_field_table *dpc_kan2_config_fields(void);

typedef struct dpc_kan2 dpc_kan2; /* the shape, the basis and the fixed second layer c */

/* Builds the model with c ~ N(0, I_{mp}): c[j*p + k] = gaussian(stream, row 1, index j*p + k),
 * stream = DPC_STREAM_ID(DPC_STREAM_INIT, stream_index). The basis is the uniform cubic
 * B-spline on [-1, 1] with cfg->grid intervals (it covers range(sigma) for both sigmas). */
DPC_API DPC_NODISCARD dpc_status dpc_kan2_new(dpc_kan2 **out, const dpc_kan2_config *cfg,
                                              const dpc_rng *rng, uint64_t stream_index,
                                              dpc_error *err);
/* The same with a given c (m*p values, copied). */
DPC_API DPC_NODISCARD dpc_status dpc_kan2_new_with_c(dpc_kan2 **out, const dpc_kan2_config *cfg,
                                                     const double *c, dpc_error *err);
DPC_API void dpc_kan2_free(dpc_kan2 *k); /* NULL is a no-op */

/* The configuration k was built with, and its B-spline basis (both owned by k). */
DPC_API const dpc_kan2_config *dpc_kan2_get_config(const dpc_kan2 *k);
DPC_API const dpc_bspline *dpc_kan2_basis(const dpc_kan2 *k);
DPC_API size_t dpc_kan2_num_params(const dpc_kan2 *k); /* m * d * p */
/* 1 when spec names the paper's two-layer KAN (the "kan2:" grammar above), 0 for any other
 * model spec (NULL included): what decides the unit-ball rule, the theory settings and the
 * model a run builds. */
DPC_API int dpc_kan2_spec_is(const char *spec);
/* The model spec "kan2:M[:grid=G][:sigmoid|:tanh]" (width M in [1, 1e6], G in 1..256; defaults
 * G = 5, sigmoid) for inputs of dimension d into *c. DPC_E_INVALID naming "model". Numbers are
 * strict: digits, or an exact integer in exponent form; no sign, no spaces. */
DPC_API DPC_NODISCARD dpc_status dpc_kan2_config_parse(dpc_kan2_config *c, const char *spec,
                                                       size_t d, dpc_error *err);
DPC_API const double *dpc_kan2_c(const dpc_kan2 *k);   /* (m*p): c_j = c + j*p */

/* W_0 ~ N(0, I): W[q] = gaussian(stream, row 0, index q), same stream as c. W (m*d*p). */
DPC_API DPC_NODISCARD dpc_status dpc_kan2_init(const dpc_kan2 *k, double *W, const dpc_rng *rng,
                                               uint64_t stream_index, dpc_error *err);

/* h(x) (d*p), dense: h[i*p + k] = b_k(x_i). x (d) finite. */
DPC_API DPC_NODISCARD dpc_status dpc_kan2_features(const dpc_kan2 *k, const double *x, double *h,
                                                   dpc_error *err);

/* Forward pass of one example: *f = f_W(x); alpha (m) or NULL receives
 * alpha_j = sigma'(pre_j) <c_j, h'(u_j)> / sqrt(m d) (so grad_W f = alpha h(x)^T);
 * *hnorm (or NULL) = ||h(x)||. */
DPC_API DPC_NODISCARD dpc_status dpc_kan2_forward(const dpc_kan2 *k, const double *W,
                                                  const double *x, double *f, double *alpha,
                                                  double *hnorm, dpc_error *err);

/* Naive reference: loss l(y f) and the materialized gradient grad (m*d*p) of one example,
 * y in {-1, +1}, by dense loops over every (j, i, k) (no sparsity, no rank-one shortcut):
 *     grad[j*dp + q] = a_j * h_q,   a_j = (l'(y f) y) alpha_j. */
DPC_API DPC_NODISCARD dpc_status dpc_kan2_loss_grad(const dpc_kan2 *k, const double *W,
                                                    const double *x, double y, double *loss,
                                                    double *grad, dpc_error *err);

/* The Hessian of f in W is block diagonal ([KAN] Lemma B.6): block j = beta_j h h^T with
 * beta_j = <c_j, v_j>/(d sqrt m), v_j = sigma''(pre_j) h'(u_j) + sigma'(pre_j)^2 h''(u_j).
 * beta (m). */
DPC_API DPC_NODISCARD dpc_status dpc_kan2_hessian_beta(const dpc_kan2 *k, const double *W,
                                                       const double *x, double *beta,
                                                       dpc_error *err);

/* Clipped sum over B examples (the rows idx[0..B) of X (n, d) and y (n), y in {-1, +1}; idx
 * NULL = rows 0..B-1, B <= n):
 *     gsum (m*d*p) += sum_i s_i g_i,  s_i = min(1, clip / ||g_i||),  g_i = a^(i) h(x_i)^T,
 * with the exact norm ||g_i|| = |l'| ||alpha|| ||h|| and a sparse rank-one update (4 bases
 * per input coordinate): O(B m d) work, no per-example gradient formed. Every entry of the
 * update is s_i * (a_j * h_q), summed over i in order into a zeroed buffer that is then added
 * to gsum, so the result is bit-identical to dpc_kan2_clipped_sum_naive when the clip factors
 * agree (clip = INFINITY, or norms far from clip). losses (B), norms (B) may be NULL;
 * *n_clipped (or NULL) = examples with ||g_i|| > clip. clip >= 0 (INFINITY allowed). */
DPC_API DPC_NODISCARD dpc_status dpc_kan2_clipped_sum(const dpc_kan2 *k, const double *W,
                                                      const double *X, const double *y, size_t n,
                                                      const size_t *idx, size_t B, double clip,
                                                      double *gsum, double *losses,
                                                      double *norms, size_t *n_clipped,
                                                      dpc_error *err);
/* The reference: every g_i materialized by dpc_kan2_loss_grad, its norm summed over the slab. */
DPC_API DPC_NODISCARD dpc_status dpc_kan2_clipped_sum_naive(const dpc_kan2 *k, const double *W,
                                                            const double *X, const double *y,
                                                            size_t n, const size_t *idx, size_t B,
                                                            double clip, double *gsum,
                                                            double *losses, double *norms,
                                                            size_t *n_clipped, dpc_error *err);

/* Mean logistic loss and 0-1 error (sign(f) != y; f = 0 counts as an error) over X (n, d),
 * y (n) in {-1, +1}. err01 may be NULL. n >= 1. */
DPC_API DPC_NODISCARD dpc_status dpc_kan2_evaluate(const dpc_kan2 *k, const double *W,
                                                   const double *X, const double *y, size_t n,
                                                   double *mean_loss, double *err01,
                                                   dpc_error *err);

/* ==== 3. NTK margin ========================================================================= */

/* Assumption 3.3: gamma = max_{||u|| <= 1} min_i y_i <grad f_{W0}(x_i), u>, equal (when
 * positive) to the distance from 0 to the convex hull of the points v_i = y_i grad f_{W0}(x_i)
 * (hard-margin duality). Solved by the Mitchell-Dem'yanov-Malozemov algorithm on the kernel
 * <v_i, v_l> = y_i y_l <alpha_i, alpha_l> <h_i, h_l>, with kernel columns formed on the fly
 * (memory O(n (m + d p)), no n x n matrix). Certified bounds:
 *     gamma_hi = ||z|| (z the current hull point) >= gamma,
 *     gamma_lo = min_i <v_i, z>/||z|| <= gamma (the margin achieved by u = z/||z||).
 * gamma_lo <= 0 means no positive margin was certified (not separable in the NTK features, or
 * not yet). Stops when gamma_hi - gamma_lo <= tol * gamma_hi or after max_iter iterations,
 * fewer when max_iter x n (m + 4d) would exceed DPC_WORK_LIMIT (bounded running time; the
 * bounds stay certified, converged = 0). */
typedef struct dpc_kan_margin {
    double gamma_lo, gamma_hi;
    size_t iterations;
    size_t support;     /* examples with positive weight in z */
    int converged;
} dpc_kan_margin;

/* The certified margin bounds above at W0 (P) for the n examples X (n x d) with labels y (n,
 * each +1 or -1); max_iter and tol as above. */
DPC_API DPC_NODISCARD dpc_status dpc_kan2_margin(const dpc_kan2 *k, const double *W0,
                                                 const double *X, const double *y, size_t n,
                                                 size_t max_iter, double tol,
                                                 dpc_kan_margin *out, dpc_error *err);

/* ==== 4. Theory: constants, radius, width window and bounds ================================ */

/* Constants of one configuration ([KAN] Lemmas B.5-B.7; note 004 §2.5), from the numeric
 * basis and activation constants:
 *   G_delta = B'_s B_b B'_b p (4 sqrt p + 2 sqrt(log(2/delta)/m))   (eq. 5; bounds every
 *             per-example gradient on the initialization event E_delta)
 *   G_c     = B'_s B_b B'_b p ||c|| / sqrt m                           (realized, given c)
 *   beta    = G_delta^2/4 + B_b^2 (B''_s B'_b + B'_s^2 B''_b) p^{3/2} (4 sqrt p +
 *             2 sqrt(log(2m/delta))) / sqrt m                          (Lemma B.7 smoothness)
 *   eta_max = 1/(12 beta)
 *   E_delta: ||c|| <= 4 sqrt(p m) + 2 sqrt(log(2/delta)) and
 *            max_j ||c_j|| <= 4 sqrt p + 2 sqrt(log(2m/delta))        (Lemma B.5) */
typedef struct dpc_kan_consts {
    double G_delta, G_c, beta, eta_max;
    int event_ok;             /* 1 if c satisfies E_delta */
    double c_norm, c_row_max; /* ||c||, max_j ||c_j|| */
} dpc_kan_consts;

/* delta in (0, 1) is the confidence level (not the DP delta). */
DPC_API DPC_NODISCARD dpc_status dpc_kan2_consts(const dpc_kan2 *k, double delta,
                                                 dpc_kan_consts *out, dpc_error *err);

/* R* = C_R (log T + sqrt(log(n/delta))) / gamma ([KAN] Thm. 4.1; C_R "sufficiently large",
 * not given by the paper). */
DPC_API DPC_NODISCARD dpc_status dpc_kan_radius(double C_R, size_t T, size_t n, double delta,
                                                double gamma, double *R, dpc_error *err);

/* Inputs of the bound evaluators (unit constants, polylog factors dropped where the paper
 * writes ~). */
typedef struct dpc_kan_rate_in {
    size_t n, m, d, T, B;
    double eta, lambda, noise_std, gamma;
    double delta; /* confidence level in (0, 1), used by A_van's explicit logs */
} dpc_kan_rate_in;
/* The field table of dpc_kan_rate_in (dpcorr/field.h): the ranges the evaluators below refuse
 * outside of, naming the field ("eta"); 0 is "must be set" for the counts, eta, gamma and
 * delta (delta read by dpc_kan_bound_indep only). */
DPC_API const dpc_field_table *dpc_kan_rate_in_fields(void);

/* Thm. 4.1: A_corr = 1/(g^2 eta T) + 1/(g sqrt(B T)) + eta (1/B + 1/T)
 *          + ((1-lam) noise_std/(B sqrt T)) (1/g + eta sqrt(m d)/sqrt B)
 *          + ((1-lam)^2 + lam^2 eta) eta noise_std^2 m d / B^2. */
DPC_API DPC_NODISCARD dpc_status dpc_kan_bound_corr(const dpc_kan_rate_in *r, double *A,
                                                    dpc_error *err);
/* Thm. D.14 (lambda = 0): A_van with its explicit log factors, L = log(1/delta),
 * lT = log T, ln = log(n/delta): (lT^2 + ln)/(g^2 eta T) + L (lT + sqrt ln)/(g sqrt(B T))
 * + L (lT + sqrt ln) noise_std/(g B sqrt T) + eta L (1/B + L/T) + eta m d L^2 noise_std^2/B^2. */
DPC_API DPC_NODISCARD dpc_status dpc_kan_bound_indep(const dpc_kan_rate_in *r, double *A,
                                                     dpc_error *err);
/* Thm. E.1 (noise_std = 0): A_non = 1/(g^2 eta T) + 1/(g sqrt(B T)) + eta/B. */
DPC_API DPC_NODISCARD dpc_status dpc_kan_bound_nonpriv(const dpc_kan_rate_in *r, double *A,
                                                       dpc_error *err);

/* Thm. 4.1 width window with unit constants: m_lo = 1/g^4 and
 *     m_hi = B^2/(eta^2 noise_std^2 g^2 d) min{1, 1/(T((1-lam)^2 + lam^2 eta))}   (INFINITY at
 * noise_std = 0). And the calibrated upper edge of this implementation, where the expected norm of
 * the accumulated noise walk (oracle 8) reaches the radius R:
 *     m_edge = R^2 / (d p (eta c_priv)^2 (1 + (1-lam)^2 (T-2))),  c_priv = clip noise_std / B
 * (T - 1 updates; INFINITY at noise_std = 0). */
typedef struct dpc_kan_window {
    double m_lo, m_hi, m_edge;
} dpc_kan_window;
DPC_API DPC_NODISCARD dpc_status dpc_kan_width_window(const dpc_kan_rate_in *r, size_t p,
                                                      double clip, double R,
                                                      dpc_kan_window *out, dpc_error *err);

/* ==== 5. Privacy helpers ==================================================================== */

/* KAN DP-lambda-CGD (Wang et al. 2026). noise_std is the paper's kappa, the "noise multiplier"
 * of Algorithm 1: the std of each entry of Z per unit clip on the batch sum (noise std C_clip
 * noise_std / B on the averaged gradient); dpcorr's noise multiplier is noise_std / colnorm(C).
 * lambda = 0, Thm. 5.4 = D.9 (replace-one, batches of size B without replacement, RDP with
 * the j = 2 term of Wang et al. 2019 eq. 19, order 1 + 2 log(1/delta)/eps):
 *   noise_std^2 = 16 B^2 T / (n^2 eps) + 32 B^2 T log(1/delta) / (n^2 eps^2).
 * Conditions: eps > 0, 0 < delta < 1, 1 <= B < n (subsampled regime), T >= 1. */
DPC_API DPC_NODISCARD dpc_status dpc_account_kan_paper_indep(size_t n, size_t batch, size_t steps,
                                                             double eps, double delta,
                                                             double *noise_std, dpc_error *err);
/* lambda > 0, Thm. 5.1 = F.12 (zero-out, Chernoff bound on participations, r = B/n):
 *   noise_std^2 = 8 ((1 - lambda^T)/(1 - lambda))^2 (rT + sqrt(3 rT log(2/delta))) log(2.5/delta)
 *             / eps^2.
 * Conditions (checked, DPC_E_PRIVACY when they fail): eps, delta in (0, 1], r T >= 3 log(2/delta),
 * 0 <= lambda < 1, 1 <= B <= n. */
DPC_API DPC_NODISCARD dpc_status dpc_account_kan_paper_lcgd(size_t n, size_t batch, size_t steps,
                                                            double eps, double delta,
                                                            double lambda, double *noise_std,
                                                            dpc_error *err);
/* The inverses: the epsilon the paper's closed form claims for a given noise_std > 0 (D.9:
 * eps = 2 b / (sqrt(a^2 + 4 b noise_std^2) - a), a = 16 q^2 T, b = 32 q^2 T log(1/delta);
 * F.12: eps = noise_std(eps = 1) / noise_std). Same conditions as above; DPC_E_PRIVACY when the
 * resulting epsilon is outside the theorem's range (F.12: eps > 1). */
DPC_API DPC_NODISCARD dpc_status dpc_account_kan_paper_indep_epsilon(size_t n, size_t batch,
                                                                     size_t steps,
                                                                     double noise_std,
                                                                     double delta, double *eps,
                                                                     dpc_error *err);
DPC_API DPC_NODISCARD dpc_status dpc_account_kan_paper_lcgd_epsilon(size_t n, size_t batch,
                                                                    size_t steps, double lambda,
                                                                    double noise_std,
                                                                    double delta, double *eps,
                                                                    dpc_error *err);

/* T and `steps` below count noisy releases (rows of C): a run with T iterates has T - 1. */

/* ||C y||_2 for a participation pattern y (T entries, 0 or 1) of lambda-CGD, C = B^-1 lower
 * triangular Toeplitz with C_{t,u} = lambda^{t-u} ([KAN] App. F), lambda in [0, 1]. */
DPC_API DPC_NODISCARD dpc_status dpc_kan_sens_pattern(size_t T, double lambda,
                                                      const unsigned char *y, double *sens,
                                                      dpc_error *err);
/* Lemma F.11's bound ((1 - lambda^T)/(1 - lambda)) sqrt(tau) (T sqrt(tau) at lambda = 1). */
DPC_API DPC_NODISCARD dpc_status dpc_kan_sens_bound(size_t T, double lambda, double tau,
                                                    double *bound, dpc_error *err);
/* The exact max of ||C y|| over patterns with at most k participations, from the core's
 * dpc_mech_sensitivity (lambda-CGD's C is non-negative and non-increasing Toeplitz, so k
 * consecutive participations from step 0 are worst: Kalinin & Lampert 2024, Thm. 2). */
DPC_API DPC_NODISCARD dpc_status dpc_kan_sens_exact(size_t T, double lambda, size_t k,
                                                    double *sens, dpc_error *err);

/* Lemma F.10: tau = rT + sqrt(3 rT log(2/delta)), valid (P(Bin(T, r) > tau) <= delta/2) when
 * r T >= 3 log(2/delta); DPC_E_PRIVACY otherwise. r in (0, 1], delta in (0, 1). */
DPC_API DPC_NODISCARD dpc_status dpc_kan_chernoff_tau(double r, size_t T, double delta,
                                                      double *tau, dpc_error *err);
/* The smallest integer k with P(Bin(T, r) > k) <= tail (exact, log-space binomial sums);
 * *p_tail (or NULL) = that probability. tail in (0, 1). */
DPC_API DPC_NODISCARD dpc_status dpc_kan_binom_quantile(size_t T, double r, double tail,
                                                        size_t *k, double *p_tail,
                                                        dpc_error *err);

/* Lemma D.7's closed form (lambda = 0): eps = 8 a T q^2 / noise_std^2 + log(1/delta)/(a - 1). At
 * a = 1 + 2 log(1/delta)/eps and noise_std = dpc_account_kan_paper_indep it returns eps. */
DPC_API DPC_NODISCARD dpc_status dpc_kan_rdp_closed_eps(double q, size_t T, double noise_std,
                                                        double alpha, double delta, double *eps,
                                                        dpc_error *err);
/* The full eq. 19 (Wang, Balle & Kasiviswanathan 2019, Thm. 9; the core's dpc_rdp_wor_gaussian
 * with noise multiplier noise_std/2 w.r.t. the replace-one sensitivity 2 C_clip/B), composed over
 * T steps and converted as in Thm. D.9, eps = min over integer a in 2..256 of
 * T rdp(a) + log(1/delta)/(a - 1). *alpha (or NULL) = the minimizing order. */
DPC_API DPC_NODISCARD dpc_status dpc_kan_rdp_eq19_eps(size_t n, size_t B, size_t T, double noise_std,
                                                      double delta, double *eps, double *alpha,
                                                      dpc_error *err);

/* dpcorr's calibration of lambda-CGD (zero-out, fresh uniform batches, r = B/n), following
 * Thm. F.12's argument with each step made tight:
 *   - participations: the exact binomial quantile k with P(Bin(steps, r) > k) <= delta/2
 *     (instead of the Chernoff tau; no condition on r T), and k = steps with no tail at r = 1;
 *   - sensitivity: the exact max_{|y| <= k} ||C y|| (dpc_kan_sens_exact) instead of ||C|| sqrt(tau);
 *   - Gaussian: the exact (analytic) Gaussian mechanism, mu = dpc_gdp_mu_for(eps, delta/2)
 *     (or delta at r = 1), instead of the classical 2 log(1.25/delta')/eps^2 (valid for any eps);
 * noise_std = sens / mu. steps = noisy updates (T - 1 for T iterates). Any lambda in [0, 1).
 * Not amplified by subsampling (neither is F.12); doc/kan.md compares it with the paper's. */
typedef struct dpc_kan_calib {
    double noise_std;
    size_t participations; /* k */
    double tail;           /* P(Bin > k) */
    double sensitivity;    /* exact max ||C y|| */
    double mu;             /* Gaussian DP parameter used */
} dpc_kan_calib;
DPC_API DPC_NODISCARD dpc_status dpc_kan_calibrate(size_t n, size_t B, size_t steps, double eps,
                                                      double delta, double lambda,
                                                      dpc_kan_calib *out, dpc_error *err);
/* lambda = 0 under replace-one with fixed-size batches: the smallest noise_std for which the full
 * eq. 19 RDP bound (the accountant, DPC_ACCOUNTANT_RDP, event FIXED / REPLACE_ONE with
 * sensitivity 2, sigma = noise_std, `steps` compositions) gives (eps, delta): a valid replacement for the
 * heuristic Thm. D.9 closed form. */
DPC_API DPC_NODISCARD dpc_status dpc_kan_calibrate_rdp_wor(size_t n, size_t B, size_t steps, double eps,
                                                       double delta, double *noise_std,
                                                       dpc_error *err);
/* Full batch (r = 1, every record in all `steps` updates): exact delta(eps) of the Gaussian
 * mechanism with sensitivity ||C 1|| and noise noise_std (oracle 12). */
DPC_API DPC_NODISCARD dpc_status dpc_kan_full_batch_delta(size_t steps, double lambda, double noise_std,
                                                          double eps, double *delta,
                                                          dpc_error *err);

/* The privacy of one projected DP-lambda-CGD run (fresh uniform batches of B of the n examples,
 * `steps` noisy updates, correlation lambda): the run decision and its ledger in one place.
 * Exactly one of epsilon (> 0: calibrate) and noise_multiplier (> 0: given; both 0: a
 * non-private run, epsilon INFINITY) is set. */
typedef struct dpc_kan_privacy {
    size_t n, batch, steps;
    double lambda;                /* in [0, 1) */
    double epsilon, delta;        /* target (delta also the ledger's); delta 0: the default
                                     from n, and a delta >= 1/n is refused (the rule of every
                                     trainer, dpc_account_resolve_delta) */
    double noise_multiplier;      /* z when epsilon = 0: noise_std = z colnorm(C) */
    dpc_calibration calibration;  /* ACCOUNTANT: dpc_kan_calibrate (exact binomial
                                     participation tail, exact sensitivity, exact Gaussian);
                                     PAPER: Thm. D.9 (lambda = 0) or Thm. F.12 (lambda > 0) */
    int allow_large_delta;        /* 1 accepts delta >= 1/n */
} dpc_kan_privacy;

/* The field table of dpc_kan_privacy (dpcorr/field.h): n, batch and steps are DERIVED (set
 * from the data and the run; dpc_kan_lcgd_privacy checks them), the others have their ranges. */
DPC_API const dpc_field_table *dpc_kan_privacy_fields(void);

/* A run of the paper's experiments (what `dpcorr train --algo lcgd-projected` and the repro
 * start from; the fields have dpc_kan_lcgd_config's and dpc_kan_privacy's meaning). Defaults,
 * ranges and docs: dpc_kan_run_config_fields (privacy nested as "privacy.lambda"); epsilon and
 * noise_multiplier are 0 (to be set), delta 0 (from n: dpc_account_resolve_delta). */
typedef struct dpc_kan_run_config {
    dpc_kan_privacy privacy;
    size_t iterates, batch, eval_every, chunk, margin_iters;
    double lr, clip, radius, C_R, conf_delta;
} dpc_kan_run_config;
DPC_API const dpc_field_table *dpc_kan_run_config_fields(void);
/* Writes the table's defaults (dpc_field_defaults). */
DPC_API void dpc_kan_run_config_init(dpc_kan_run_config *c);
/* Every field within its table's range (dpc_field_check; the DERIVED privacy.n, .batch, .steps
 * are dpc_kan_lcgd_privacy's to check). DPC_E_INVALID naming the field ("privacy.lambda"). */
DPC_API DPC_NODISCARD dpc_status dpc_kan_run_config_check(const dpc_kan_run_config *c,
                                                          dpc_error *err);
/* The iterates T of a run over n examples in batches of `batch`: `iterates`, or with epochs > 0
 * W_0 and epochs passes of floor(n / batch) updates, T = 1 + epochs floor(n / batch). */
DPC_API size_t dpc_kan_run_iterates(size_t iterates, size_t epochs, size_t batch, size_t n);
/* The same for a run's configuration, after the refusal of a batch larger than the data:
 * *T = dpc_kan_run_iterates(c->iterates, epochs, c->batch, n); DPC_E_INVALID naming "batch"
 * when c->batch > n (a fresh batch of B distinct examples needs B <= n). */
DPC_API DPC_NODISCARD dpc_status dpc_kan_run_count_iterates(const dpc_kan_run_config *c,
                                                            size_t epochs, size_t n, size_t *T,
                                                            dpc_error *err);

/* ---- A run of the paper's KAN: its data rule, theory settings and bounds (what `train --algo
 * lcgd-projected --model kan2:M` decides through these) ---- */

/* The paper's KAN takes inputs in the unit ball ([KAN] Sec. 3). A data set whose public row-norm
 * bound B = x_norm_bound exceeds 1 is scaled by 1/B (*action = DPC_KAN_BALL_SCALED); one without
 * a known bound (0) has its rows clipped to norm 1 (DPC_KAN_BALL_CLIPPED); both data-independent.
 * *bound (or NULL) receives B before the change. ds NULL: nothing (KEPT). */
typedef enum dpc_kan_ball_action {
    DPC_KAN_BALL_KEPT = 0,
    DPC_KAN_BALL_SCALED = 1,
    DPC_KAN_BALL_CLIPPED = 2
} dpc_kan_ball_action;
DPC_API DPC_NODISCARD dpc_status dpc_kan2_to_unit_ball(dpc_dataset *ds, dpc_kan_ball_action *action,
                                                       double *bound, dpc_error *err);

/* The theory settings of a run of T iterates on the training set train (classes 0/1 = -1/+1):
 * the constants at confidence rc->conf_delta into *consts; with want->lr rc->lr = eta_max, with
 * want->clip rc->clip = G_c; the NTK margin at W0 (rc->margin_iters iterations, tolerance 1e-3)
 * into *mg when want->margin and n <= 2048 (the n x n kernel is cheap) or always with
 * want->radius, which then sets rc->radius = R* (dpc_kan_radius with rc->C_R and the certified
 * gamma_lo). *mg is left as given when not computed. Errors: a margin solver's prefixed
 * "margin: "; no positive margin certified under want->radius, or R* undefined, DPC_E_INVALID
 * naming "radius" (a bad C_R keeps its own name). */
typedef struct dpc_kan2_theory_want {
    int lr, clip, radius, margin;
} dpc_kan2_theory_want;
/* The field table of dpc_kan2_theory_want (dpcorr/field.h): four switches, 0 by default. */
DPC_API const dpc_field_table *dpc_kan2_theory_want_fields(void);
DPC_API DPC_NODISCARD dpc_status dpc_kan2_run_theory(const dpc_kan2 *k, const double *W0,
                                                     const dpc_dataset *train, size_t T,
                                                     const dpc_kan2_theory_want *want,
                                                     dpc_kan_run_config *rc, dpc_kan_consts *consts,
                                                     dpc_kan_margin *mg, dpc_error *err);

/* The paper's bounds for a run (unit constants): A_corr, A_van, A_non and the width window with
 * the run's n, d, T, batch, lr, lambda, noise_std, conf_delta and the certified gamma_lo of mg;
 * every value NAN without a positive margin; the window evaluated at rc->radius (1 when
 * infinite), m_edge NAN when the run has no radius; a bound undefined for the inputs is NAN. */
typedef struct dpc_kan2_bounds {
    double A_corr, A_van, A_non, m_lo, m_hi, m_edge;
} dpc_kan2_bounds;
DPC_API void dpc_kan2_run_bounds(const dpc_kan2 *k, const dpc_kan_run_config *rc, size_t n,
                                 size_t d, size_t T, double noise_std, const dpc_kan_margin *mg,
                                 dpc_kan2_bounds *out);
/* The member "theory" of a run's report (dpcorr/io.h's writer): the margin's gamma_lo and
 * gamma_hi, the constants (G_delta, G_c, beta, eta_max, init_event_ok) and the bounds b
 * (A_corr_unit, A_van_unit, A_non_unit, width_m_lo, width_m_hi, width_m_edge). */
struct dpc_json_writer;
DPC_API void dpc_kan2_theory_report_json(struct dpc_json_writer *w, const dpc_kan_margin *mg,
                                         const dpc_kan_consts *kc, const dpc_kan2_bounds *b);

/* Chooses the noise std per unit clip (the paper's kappa) and fills the ledger: epsilon is the
 * accountant's route (the dpc_kan_calibrate argument: zero-out, participations bounded by the
 * binomial quantile with tail delta/2 when B < n, the exact Gaussian at the remaining delta)
 * for that noise; epsilon_paper the paper's closed form for the same noise (NAN outside its
 * theorem's conditions). DPC_E_PRIVACY (with the reason) when the chosen calibration cannot
 * meet the target. */
DPC_API DPC_NODISCARD dpc_status dpc_kan_lcgd_privacy(const dpc_kan_privacy *p, double *noise_std,
                                                      dpc_ledger *L, dpc_error *err);

/* ==== 6. Batches and synthetic data ========================================================= */

/* A uniformly random size-B subset of 0..n-1 (Floyd's algorithm with dpc_rng_below(s, step,
 * j, .)), sorted increasingly into idx (B): a pure function of (key, step). 1 <= B <= n. */
DPC_API DPC_NODISCARD dpc_status dpc_kan_batch(const dpc_rng_stream *s, uint64_t step, size_t n,
                                               size_t B, size_t *idx, dpc_error *err);

/* Binary data in the unit ball (note 004 §6.1): x uniform in {||x|| <= 1} of R^d
 * (x = U^{1/d} g/||g||, g ~ N(0, I)), y = sign(<w, x>) with w = w_star/||w_star|| (NULL: the
 * first axis), rejecting draws with |<w, x>| < margin (attempt a of example i uses row i,
 * indices a*(d+1) + 0..d). Labels are stored as classes 0 (y = -1) and 1 (y = +1);
 * n_classes 2, x_norm_bound 1, truth = w. margin in [0, 0.5]. */
DPC_API DPC_NODISCARD dpc_status dpc_kan_synth(dpc_dataset **out, const dpc_rng *rng,
                                               uint64_t stream_index, size_t n, size_t d,
                                               double margin, const double *w_star,
                                               dpc_error *err);
/* The data spec "kan-synth:n=N,d=D[,margin=M][,test-n=N][,stream=S]" (integers in [0, 2^32],
 * margin >= 0, default 0.05): the training set of dpc_kan_synth (stream 2 S) and, when test-n >
 * 0, a test set (stream 2 S + 1; else *test = NULL). Both are the caller's. DPC_E_INVALID naming
 * "data" for a malformed spec; dpc_kan_synth's errors. */
DPC_API DPC_NODISCARD dpc_status dpc_kan_synth_spec(dpc_dataset **train, dpc_dataset **test,
                                                    const char *spec, const dpc_rng *rng,
                                                    dpc_error *err);

/* ==== 7. Projected DP-lambda-CGD ([KAN] Algorithm 1) ======================================== */

/* Gradient oracle: gsum (P) += sum over the B examples idx of min(1, clip/||g_i||) g_i;
 * *loss_sum = sum of their losses; *n_clipped = how many had ||g_i|| > clip. */
typedef dpc_status (*dpc_kan_grad_fn)(void *ctx, const double *W, const size_t *idx, size_t B,
                                      double clip, double *gsum, double *loss_sum,
                                      size_t *n_clipped, dpc_error *err);
/* Evaluation oracle: mean loss and 0-1 error of W on the training set (which = 0) or the test
 * set (which = 1; return DPC_E_UNSUPPORTED when there is none). */
typedef dpc_status (*dpc_kan_eval_fn)(void *ctx, const double *W, int which, double *loss,
                                      double *err01, dpc_error *err);

/* Defaults and ranges: dpc_kan_lcgd_config_fields (below). */
typedef struct dpc_kan_lcgd_config {
    size_t n;                  /* training examples >= 1 */
    size_t iterates;           /* T >= 2: the run produces W_0..W_{T-1} (T - 1 updates) */
    size_t batch;              /* B in 1..n: a fresh uniform subset each step */
    double eta;                /* step size > 0 */
    double clip;               /* C_clip > 0 (INFINITY: no clipping) */
    double lambda;             /* correlation in [0, 1) */
    double noise_std;              /* noise multiplier >= 0 (0: non-private) */
    double radius;             /* R* > 0; INFINITY: no projection */
    dpc_noise_form noise_form; /* REPLAY (no memory beyond the iterate) or BUFFER */
    uint64_t noise_stream;     /* Z = DPC_STREAM_ID(DPC_STREAM_NOISE, noise_stream) */
    uint64_t batch_stream;     /* batches from DPC_STREAM_ID(DPC_STREAM_SAMPLER, batch_stream) */
} dpc_kan_lcgd_config;

/* The field table of dpc_kan_lcgd_config: defaults, ranges, docs; the checkpoint items of
 * dpc_kan_lcgd_save are its fields in table order. */
DPC_API const dpc_field_table *dpc_kan_lcgd_config_fields(void);
/* Writes the table's defaults (dpc_field_defaults); n (0) must be set. */
DPC_API void dpc_kan_lcgd_config_init(dpc_kan_lcgd_config *c);
/* Every field within its range (dpc_field_check), n set, then the refusals across fields
 * (batch <= n, a finite clip with noise, the overflow of eta clip and noise_std clip). */
DPC_API DPC_NODISCARD dpc_status dpc_kan_lcgd_config_check(const dpc_kan_lcgd_config *c,
                                                           dpc_error *err);

/* A run's derived parameters: rc->privacy's n, batch (rc->batch) and steps (T - 1) set, the
 * privacy decision (dpc_kan_lcgd_privacy: *noise_std, *L) and the lambda-CGD configuration of
 * the run, lc = dpc_kan_lcgd_config_init's with n, T, rc's batch, lr (eta), clip, lambda, radius,
 * the noise std and form, checked (dpc_kan_lcgd_config_check). */
DPC_API DPC_NODISCARD dpc_status dpc_kan_run_resolve(dpc_kan_run_config *rc, size_t n, size_t T,
                                                     dpc_noise_form form, double *noise_std,
                                                     dpc_ledger *L, dpc_kan_lcgd_config *lc,
                                                     dpc_error *err);

typedef struct dpc_kan_lcgd dpc_kan_lcgd;

/* A run from W0 (P values, copied). The noise is the core's lambda-CGD mechanism over
 * T - 1 steps: the update at step t (0-based; it makes W_{t+1}) adds
 * c_priv (B Z)_t = c_priv (Z_t - lambda Z_{t-1}) (Z_{-1} = 0), c_priv = clip noise_std / B,
 * Z[t][q] = dpc_rng_gaussian(noise stream, t, q). */
DPC_API DPC_NODISCARD dpc_status dpc_kan_lcgd_new(dpc_kan_lcgd **out,
                                                  const dpc_kan_lcgd_config *cfg, size_t P,
                                                  const double *W0, const dpc_rng *rng,
                                                  dpc_error *err);
DPC_API void dpc_kan_lcgd_free(dpc_kan_lcgd *r); /* NULL is a no-op */

typedef struct dpc_kan_lcgd_step_info {
    size_t t;          /* index of the iterate just produced (1..T-1) */
    double batch_loss; /* mean loss of the batch at W_{t-1} (not private) */
    size_t clipped;    /* examples of the batch with ||g_i|| > clip */
    int projected;     /* 1 if the projection changed the step */
    double dist;       /* ||W_t - W_0|| after projection */
} dpc_kan_lcgd_step_info;

/* The field table of dpc_kan_lcgd_step_info (every field DERIVED). */
DPC_API const dpc_field_table *dpc_kan_lcgd_step_info_fields(void);

/* One update, [KAN] Algorithm 1:  v = gsum/B;  V = W - eta (v + c_priv xi);
 * W = W_0 + (V - W_0) min(1, R* / ||V - W_0||). DPC_E_RANGE when all T - 1 updates are done.
 * info may be NULL. */
DPC_API DPC_NODISCARD dpc_status dpc_kan_lcgd_step(dpc_kan_lcgd *r, dpc_kan_grad_fn grad,
                                                   void *ctx, dpc_kan_lcgd_step_info *info,
                                                   dpc_error *err);

DPC_API const double *dpc_kan_lcgd_params(const dpc_kan_lcgd *r);   /* W_t (P), owned */
DPC_API const double *dpc_kan_lcgd_initial(const dpc_kan_lcgd *r);  /* W_0 (P), owned */
DPC_API size_t dpc_kan_lcgd_iterate(const dpc_kan_lcgd *r);         /* t of W_t */
DPC_API size_t dpc_kan_lcgd_projections(const dpc_kan_lcgd *r);     /* activations so far */
DPC_API double dpc_kan_lcgd_noise_scale(const dpc_kan_lcgd *r);     /* c_priv */

/* Metrics of a whole run. Averages are over the evaluated iterates W_t, t in {0, e, 2e, ...}
 * plus T-1 (e = eval_every): with e = 1 exactly the (1/T) sum_t of [KAN] Thm. 4.1 / 5.2. */
typedef struct dpc_kan_lcgd_result {
    double avg_train_loss, avg_train_err, avg_test_loss, avg_test_err; /* NAN: no test set */
    double last_train_loss, last_train_err, last_test_loss, last_test_err;
    double init_train_loss;  /* L_S(W_0) */
    double max_dist;         /* max_t ||W_t - W_0|| */
    double last_dist;
    size_t projections;      /* projection activations */
    size_t clipped;          /* clip activations (examples) */
    size_t examples;         /* examples processed */
    size_t evaluated;        /* iterates evaluated */
    double noise_scale;      /* c_priv */
} dpc_kan_lcgd_result;

/* Per-iterate callback (progress, traces); nonzero return stops the run with DPC_E_STATE. */
typedef int (*dpc_kan_lcgd_trace_fn)(void *tctx, const dpc_kan_lcgd_step_info *info,
                                     double train_loss, double test_loss);

/* Runs all T - 1 updates from W0 (P parameters) and evaluates (eval may be NULL: no averages). W0 is
 * not modified; the last iterate is not returned (use the step API for it). trace may be
 * NULL; its train/test loss are NAN for iterates that were not evaluated. */
DPC_API DPC_NODISCARD dpc_status dpc_kan_lcgd_train(const dpc_kan_lcgd_config *cfg, size_t P,
                                                    const dpc_rng *rng, const double *W0,
                                                    dpc_kan_grad_fn grad, dpc_kan_eval_fn eval,
                                                    void *ctx, size_t eval_every,
                                                    dpc_kan_lcgd_trace_fn trace, void *tctx,
                                                    dpc_kan_lcgd_result *res, dpc_error *err);

/* A whole run one iterate at a time (what dpc_kan_lcgd_train does, for callers that checkpoint
 * or stop between iterates): the first call evaluates W_0 (no update), each later call makes one
 * update (dpc_kan_lcgd_step) and evaluates W_t when t % eval_every == 0 or t = T - 1 (eval may
 * be NULL: no evaluations); the run's metrics accumulate in r. info, train_loss and test_loss
 * (NAN when not evaluated) may be NULL. DPC_E_RANGE once all T iterates are visited. */
DPC_API DPC_NODISCARD dpc_status dpc_kan_lcgd_advance(dpc_kan_lcgd *r, dpc_kan_grad_fn grad,
                                                      dpc_kan_eval_fn eval, void *ctx,
                                                      size_t eval_every,
                                                      dpc_kan_lcgd_step_info *info,
                                                      double *train_loss, double *test_loss,
                                                      dpc_error *err);
DPC_API size_t dpc_kan_lcgd_visited(const dpc_kan_lcgd *r); /* iterates visited, 0..T */
/* The updates made (t of W_t, as dpc_kan_lcgd_iterate) and of the whole run (T - 1): the
 * steps of the one run interface. */
DPC_API size_t dpc_kan_lcgd_steps_done(const dpc_kan_lcgd *r);
DPC_API size_t dpc_kan_lcgd_steps_total(const dpc_kan_lcgd *r);
/* The metrics of the iterates visited so far (dpc_kan_lcgd_train's result after all T). */
DPC_API void dpc_kan_lcgd_result_get(const dpc_kan_lcgd *r, dpc_kan_lcgd_result *res);
/* The metrics of res as members of the open object of dpcorr/io.h's writer (avg_train_loss
 * ... evaluated, in the struct's order; noise_scale is reported with the noise), as `train --algo
 * lcgd-projected --report` writes its "metrics". */
DPC_API void dpc_kan_lcgd_result_json(struct dpc_json_writer *w, const dpc_kan_lcgd_result *res);
/* A run's report members (dpcorr/io.h's writer). dpc_kan_run_config_report_json, in the open
 * "config" object: "iterates" (T), batch, "eta" (c->lr), clip, lambda, radius, eval_every and
 * the noise form (as the run resolved them). dpc_kan_run_noise_report_json: "noise" with the
 * noise std per unit clip (the paper's kappa, dpc_kan_run_resolve's), c_priv (res->noise_scale)
 * and the noisy steps (T - 1: W_0 is not noised). */
DPC_API void dpc_kan_run_config_report_json(struct dpc_json_writer *w, const dpc_kan_run_config *c,
                                            size_t T, dpc_noise_form form);
DPC_API void dpc_kan_run_noise_report_json(struct dpc_json_writer *w, double noise_std,
                                           const dpc_kan_lcgd_result *res, size_t T);

/* Checkpoints (the container of dpcorr/train.h, kind DPC_KAN_LCGD_KIND). _save adds the run's
 * configuration items (n, iterates, batch, eta, clip, lambda, noise_std, radius, noise_form, the
 * streams, P and a hash of W_0), its progress and its state: the iterate W_t, the counters, the
 * run's metrics and, in the BUFFER noise form, the noise state (the REPLAY form regenerates
 * Z_{t-1} from the RNG; W_0 is the caller's, regenerated from the seed). _restore puts a saved
 * state into r, a run built with the same configuration, W_0 and generator (check them first
 * with dpc_ckpt_match against a container of this run): DPC_E_STATE for another kind,
 * DPC_E_FORMAT for missing or malformed state; the run then continues bit for bit. */
#define DPC_KAN_LCGD_KIND "lcgd-projected"
DPC_API DPC_NODISCARD dpc_status dpc_kan_lcgd_save(const dpc_kan_lcgd *r, dpc_ckpt *ck,
                                                   dpc_error *err);
DPC_API DPC_NODISCARD dpc_status dpc_kan_lcgd_restore(dpc_kan_lcgd *r, const dpc_ckpt *ck,
                                                      dpc_error *err);

/* The run as a dpc_run (dpcorr/train.h): one step is one dpc_kan_lcgd_advance (the first visits
 * W_0 and makes no update; steps_done stays 0), with the oracles, evaluation interval and ledger
 * of the binding below (caller-owned; it and everything it points to must outlive the dpc_run).
 * Kind DPC_KAN_LCGD_KIND, step info dpc_kan_lcgd_run_info, params W_t, the container
 * checkpoints of _save / _restore. */
typedef struct dpc_kan_lcgd_runner {
    dpc_kan_lcgd *run;
    dpc_kan_grad_fn grad;
    dpc_kan_eval_fn eval;     /* may be NULL: no evaluations */
    void *ctx;                /* of grad and eval */
    size_t eval_every;
    const dpc_ledger *ledger; /* the run's (dpc_kan_lcgd_privacy); may be NULL */
} dpc_kan_lcgd_runner;
typedef struct dpc_kan_lcgd_run_info {
    dpc_kan_lcgd_step_info step;   /* the update (zeros when W_0 was visited) */
    double train_loss, test_loss;  /* at the iterate visited; NAN when not evaluated */
} dpc_kan_lcgd_run_info;
DPC_API dpc_run dpc_kan_lcgd_run_ops(dpc_kan_lcgd_runner *b);

/* ==== 8. Oracles for the two model families ================================================= */

/* A data set bound to a model, for dpc_kan_lcgd: pass dpc_kan_task_grad / dpc_kan_task_eval
 * with the task as ctx. The task borrows the model and the data (they must outlive it).
 *   dpc_kan2_task_new: the paper's KAN; classes 0/1 are the labels -1/+1; every row of both
 *     sets must lie in the unit ball (DPC_E_INVALID naming the example otherwise).
 *   dpc_kan_model_task_new: any dpc_model (the practical KAN, an MLP, ...); the batch is
 *     gathered and passed to dpc_model_clipped_sum in chunks of `chunk` examples, in order. */
typedef struct dpc_kan_task dpc_kan_task;
DPC_API DPC_NODISCARD dpc_status dpc_kan2_task_new(dpc_kan_task **out, const dpc_kan2 *k,
                                                   const dpc_dataset *train,
                                                   const dpc_dataset *test, dpc_error *err);
DPC_API DPC_NODISCARD dpc_status dpc_kan_model_task_new(dpc_kan_task **out, const dpc_model *m,
                                                        const dpc_dataset *train,
                                                        const dpc_dataset *test, size_t chunk,
                                                        dpc_error *err);
DPC_API void dpc_kan_task_free(dpc_kan_task *t); /* NULL is a no-op */
DPC_API size_t dpc_kan_task_num_params(const dpc_kan_task *t);
/* The oracles (dpc_kan_grad_fn / dpc_kan_eval_fn) of a task; a task is used by one thread at a
 * time (it owns gather buffers and a model workspace). */
DPC_API DPC_NODISCARD dpc_status dpc_kan_task_grad(void *task, const double *W, const size_t *idx,
                                                   size_t B, double clip, double *gsum,
                                                   double *loss_sum, size_t *n_clipped,
                                                   dpc_error *err);
DPC_API DPC_NODISCARD dpc_status dpc_kan_task_eval(void *task, const double *W, int which,
                                                   double *loss, double *err01, dpc_error *err);

/* ==== 9. The reproduction (`dpcorr repro kan`) ============================================== *
 *
 * [KAN] runs no experiments; this section is its first empirical check, as the paper module's
 * own knowledge (grids, constants, horizons, seeds, statistics and verdicts), so that every
 * front end (the CLI's `repro kan`, the Python binding) reproduces the same numbers. Each
 * function below computes one part into a plain struct of fixed-size arrays (nothing to free);
 * the front end writes CSV, JSON, text and plots from it. Every run of the paper's KAN uses
 * kan-synth data (dpc_kan_synth, margin 0.05: training stream 0, test stream 1), the model's
 * streams 0, grid G = 5, sigmoid, and the generator dpc_rng_seed(params->seed + salt) with the
 * part's salt (noise 11; lambda trend 100 + seed index, calibrated 200 + seed index; width 300;
 * trends 400); every run steps through the run driver (dpc_kan_lcgd_train, dpc_run_drive).
 * Parts 4-7 train the paper's KAN and take seconds (quick) to minutes (full); 1-3 are fast.
 *   1. the noise xi_t = kappa (Z_t - lambda Z_{t-1}) as the training loop applies it;
 *   2. the lambda-CGD sensitivity: brute force, exact (core) and Lemma F.11's bound;
 *   3. kappa for (eps, delta): Thm. D.9, Thm. F.12, dpcorr's calibration; eq. 19; full batch;
 *   4. lambda at fixed kappa (Remark 4.2, oracle 18d) and 5. at calibrated kappa (18e);
 *   6. the width window: projection activations and max ||W_t - W_0|| against m (oracle 16);
 *   7. n and epsilon trends at lambda = 0 (oracle 18c);
 *   8. the practical KAN against the MLP on Fashion-MNIST at epsilon = 3: the setup only
 *      (dpc_kan_repro_fmnist_setup); the front end trains both with the DP-FTRL trainer. */

/* Scale of the grids and horizons. */
typedef enum dpc_kan_repro_scale {
    DPC_KAN_REPRO_FULL = 0,  /* the reported grids (minutes) */
    DPC_KAN_REPRO_QUICK = 1, /* reduced grids and horizons (seconds) */
    DPC_KAN_REPRO_SMOKE = 2  /* tiny, for sanitizer runs (numbers not meaningful) */
} dpc_kan_repro_scale;

/* Defaults and docs: dpc_kan_repro_params_fields (scale full, seed 20240101: the CLI's). */
typedef struct dpc_kan_repro_params {
    dpc_kan_repro_scale scale;
    uint64_t seed; /* root seed of every run */
} dpc_kan_repro_params;
DPC_API const dpc_field_table *dpc_kan_repro_params_fields(void);
/* Writes the table's defaults. */
DPC_API void dpc_kan_repro_params_init(dpc_kan_repro_params *p);

/* The grids of one scale (what parts 1 and 4-7 run; the text and plots quote them). */
#define DPC_KAN_REPRO_MAX_SEEDS 5
#define DPC_KAN_REPRO_MAX_WIDTHS 6
#define DPC_KAN_REPRO_MAX_POINTS 5
typedef struct dpc_kan_repro_grid {
    size_t noise_N;                      /* coordinates of the noise statistics */
    size_t seeds;                        /* seeds per lambda point (<= MAX_SEEDS) */
    size_t n, n_test, d, m, T, B, every; /* lambda trend at fixed kappa (every: eval interval) */
    double kappa, eta;
    size_t n_cal, B_cal, T_cal;          /* calibrated trend */
    size_t wm[DPC_KAN_REPRO_MAX_WIDTHS], nwm; /* width sweep: widths, */
    size_t wT, wtarget;                  /* its iterates, and where the reference edge sits */
    size_t ns[DPC_KAN_REPRO_MAX_POINTS], nn;  /* n trend */
    double eps[DPC_KAN_REPRO_MAX_POINTS];     /* epsilon trend (ne points) */
    size_t ne, tr_T, tr_B, tr_m;         /* the trends' iterates, batch and width */
} dpc_kan_repro_grid;
/* The grid of scale s; DPC_E_INVALID naming "scale" for an unknown one. */
DPC_API DPC_NODISCARD dpc_status dpc_kan_repro_grid_get(dpc_kan_repro_scale s,
                                                        dpc_kan_repro_grid *out, dpc_error *err);

/* The lambdas of parts 4 and 5 (0, 0.3, 0.5, 0.7, 0.9). */
DPC_API const double *dpc_kan_repro_lambdas(void);
#define DPC_KAN_REPRO_NLAMBDA 5

/* 1. Noise statistics: lambda-CGD over noise_N coordinates with zero gradients, eta = clip =
 * kappa = B = 1 and T + 1 = 101 iterates (100 updates), so xi_t = W_{t-1} - W_t; per coordinate
 * means of xi_1^2, xi_t^2 (t >= 2), xi_t xi_{t-1}, xi_t xi_{t-2} and (sum_{s<=t} xi_s)^2, with
 * their theory 1 + lambda^2, -lambda, 0 and 1 + (1 - lambda)^2 (t - 1). */
#define DPC_KAN_REPRO_NOISE_T 100
typedef struct dpc_kan_repro_noise {
    size_t coordinates, T;
    double lambda[3];                             /* 0, 0.5, 0.9 */
    double var_xi1[3], var_xi_t[3], theory_var_xi_t[3];
    double cov_lag1[3], theory_cov_lag1[3], cov_lag2[3];
    double var_sum[3][DPC_KAN_REPRO_NOISE_T + 1]; /* [l][t], t = 1..T (index 0 unused) */
    double theory_var_sum[3][DPC_KAN_REPRO_NOISE_T + 1];
} dpc_kan_repro_noise;
DPC_API DPC_NODISCARD dpc_status dpc_kan_repro_noise_stats(const dpc_kan_repro_params *p,
                                                           dpc_kan_repro_noise *out,
                                                           dpc_error *err);

/* 2. max_{|y| <= tau} ||C y|| for 8 (T, lambda, tau) cases: by brute force over y in {0,1}^T
 * (dpc_kan_sens_pattern; T <= 12, else NAN), dpc_kan_sens_exact and dpc_kan_sens_bound. */
typedef struct dpc_kan_repro_sens_row {
    size_t T, tau;
    double lambda, brute, exact, bound, bound_over_exact;
} dpc_kan_repro_sens_row;
typedef struct dpc_kan_repro_sens {
    dpc_kan_repro_sens_row row[8];
    size_t rows;
} dpc_kan_repro_sens;
DPC_API DPC_NODISCARD dpc_status dpc_kan_repro_sensitivity(dpc_kan_repro_sens *out,
                                                           dpc_error *err);

/* 3. kappa at delta = 1e-5 for three (n, B, T, eps): Thm. D.9 (lambda 0), Thm. F.12 at the five
 * lambdas (outside its eps <= 1 condition: the formula at eps = 1 divided by eps, as the note's
 * table; F12_valid 0) and dpcorr's dpc_kan_calibrate (a value that fails is NAN); eq. 19's
 * epsilon at kappa_D9 of the first row and whether any kappa meets eps = 1 under it; the full
 * batch (n = B = T = 100, eps = 1) at lambda 0.5 and 0: F.12's kappa, its exact delta
 * (dpc_kan_full_batch_delta) and the exact smallest kappa. */
typedef struct dpc_kan_repro_kappa_row {
    size_t n, B, T;
    double eps, kappa_D9;
    double kappa_F12[DPC_KAN_REPRO_NLAMBDA];
    int F12_valid;
    double kappa_dpcorr[DPC_KAN_REPRO_NLAMBDA];
    size_t participations[DPC_KAN_REPRO_NLAMBDA];
    double sensitivity[DPC_KAN_REPRO_NLAMBDA];
} dpc_kan_repro_kappa_row;
typedef struct dpc_kan_repro_kappa {
    dpc_kan_repro_kappa_row row[3];
    size_t rows;
    double eq19_kappa, eq19_eps, eq19_order; /* eq. 19 at kappa_D9 of row 0 */
    int eq19_kappa_exists;                   /* a kappa for eps = 1 under eq. 19 */
    double fb_kappa_F12, fb_delta_F12, fb_kappa_exact, fb_sensitivity; /* lambda 0.5 */
    double fb_kappa_F12_l0, fb_delta_F12_l0, fb_kappa_exact_l0;       /* lambda 0 */
} dpc_kan_repro_kappa;
DPC_API DPC_NODISCARD dpc_status dpc_kan_repro_kappa_table(dpc_kan_repro_kappa *out,
                                                           dpc_error *err);

/* 4 and 5. lambda trends. At fixed kappa (grid n, m, d, T, B, eta; C = 1, no projection,
 * seeds paired: the same data, init and Z across lambdas): each run's metrics, A_corr with unit
 * constants (gamma 0.03, delta 0.01; NAN when undefined), the mean and s.e. over seeds of the
 * average training loss and of its paired difference to lambda 0, the mean of max ||W - W0||.
 * At kappa calibrated for (eps, delta) = (1, 1e-5) on (n_cal, B_cal, T_cal) by F.12, by dpcorr,
 * and by D.9 (lambda 0 only), min(seeds, 2) seeds each. Verdicts: improves (mean loss falls
 * from lambda 0 to 0.3, 0.5, 0.7) and no_gain (F.12's and dpcorr's loss at lambda 0.7 not below
 * lambda 0's, dpcorr's by a 0.002 margin). */
enum {
    DPC_KAN_REPRO_CAL_NONE = 0,   /* not applicable (D.9 beyond lambda 0) */
    DPC_KAN_REPRO_CAL_FAILED = 1, /* the calibration refused (why holds the first reason) */
    DPC_KAN_REPRO_CAL_RUN = 2
};
typedef struct dpc_kan_repro_lambda {
    double lambda[DPC_KAN_REPRO_NLAMBDA];
    size_t seeds;
    dpc_kan_lcgd_result fixed[DPC_KAN_REPRO_NLAMBDA][DPC_KAN_REPRO_MAX_SEEDS];
    double A_corr[DPC_KAN_REPRO_NLAMBDA];
    double mean[DPC_KAN_REPRO_NLAMBDA], se[DPC_KAN_REPRO_NLAMBDA];
    double paired_diff[DPC_KAN_REPRO_NLAMBDA], paired_se[DPC_KAN_REPRO_NLAMBDA];
    double max_dist[DPC_KAN_REPRO_NLAMBDA]; /* mean over seeds */
    int improves;
    /* calibrations k = 0 F.12, 1 dpcorr, 2 D.9 */
    size_t cal_seeds;
    int cal_state[3][DPC_KAN_REPRO_NLAMBDA];     /* DPC_KAN_REPRO_CAL_* */
    double cal_kappa[3][DPC_KAN_REPRO_NLAMBDA];
    dpc_kan_lcgd_result cal[3][DPC_KAN_REPRO_NLAMBDA][2];
    double cal_mean[3][DPC_KAN_REPRO_NLAMBDA];  /* NAN unless run */
    char why[DPC_ERROR_MSG_LEN];                /* the first refusal ("" when none) */
    int no_gain;
} dpc_kan_repro_lambda;
DPC_API DPC_NODISCARD dpc_status dpc_kan_repro_lambda_trend(const dpc_kan_repro_params *p,
                                                            dpc_kan_repro_lambda *out,
                                                            dpc_error *err);

/* 6. The width window at lambda 0.5 with the theory's settings (eta = eta_max, C = G_c, R* from
 * C_R = 2 and the margin estimated per width): kappa is fixed for the sweep so that the
 * calibrated edge m_edge of the reference width wm[0] (a run at kappa 1) sits at wtarget
 * (m_edge scales as 1/kappa^2). Per width: the run's settings, its max ||W - W0||, projection
 * activations and the window (dpc_kan_width_window). consistent: no activation inside the
 * window (m <= m_edge) and some at every width beyond 2 m_edge; verified: consistent with widths
 * seen on both sides (the oracle's check). */
typedef struct dpc_kan_repro_width_row {
    size_t m, P, projections;
    double kappa, eta, clip, gamma_lo, radius, max_dist, m_edge, m_hi, m_lo;
    int inside;
} dpc_kan_repro_width_row;
typedef struct dpc_kan_repro_width {
    double kappa;    /* of the sweep */
    double ref_eta;  /* eta_max of the reference run */
    double edge_ref; /* m_edge of wm[0] at that kappa */
    dpc_kan_repro_width_row row[DPC_KAN_REPRO_MAX_WIDTHS];
    size_t rows;
    int consistent, inside_seen, beyond_seen, verified;
} dpc_kan_repro_width;
DPC_API DPC_NODISCARD dpc_status dpc_kan_repro_width_window(const dpc_kan_repro_params *p,
                                                            dpc_kan_repro_width *out,
                                                            dpc_error *err);

/* 7. lambda = 0 with kappa from Thm. D.9 at delta 1e-5 (batch tr_B, tr_T iterates, width tr_m):
 * the n sweep at eps = 2 and the eps sweep at n = 1000; averages over the evaluated iterates and
 * A_van with unit constants (gamma 0.03; NAN when undefined). decreasing_*: the test loss
 * strictly decreases along the sweep. */
typedef struct dpc_kan_repro_trend_row {
    size_t n;
    double eps, kappa, avg_test_loss, avg_test_err, avg_train_loss, A_van;
} dpc_kan_repro_trend_row;
typedef struct dpc_kan_repro_trends {
    dpc_kan_repro_trend_row n_sweep[DPC_KAN_REPRO_MAX_POINTS], eps_sweep[DPC_KAN_REPRO_MAX_POINTS];
    size_t nn, ne;
    int decreasing_in_n, decreasing_in_eps;
} dpc_kan_repro_trends;
DPC_API DPC_NODISCARD dpc_status dpc_kan_repro_n_eps_trends(const dpc_kan_repro_params *p,
                                                          dpc_kan_repro_trends *out,
                                                          dpc_error *err);

/* 8. Fashion-MNIST: the practical KAN (DPC_MODEL_KAN) against the MLP, trained privately by the
 * DP-FTRL trainer (DP-SGD: Poisson sampling, amplified accounting) at the same (epsilon, delta)
 * = (3, 1e-5), data subset, epochs, batch, clip and learning rate, 2 threads. The learning rate
 * 2 was the best of {1, 2, 4} for both models on a holdout (the last 2000 of the first 12000
 * training images), never on the test set. cfg: dpc_train_config_init's defaults with those
 * set (the accountant PLD at full scale, RDP otherwise). n_train / n_test: the first that many
 * images of each split (fewer when the data has fewer). */
typedef struct dpc_kan_repro_fmnist {
    size_t n_train, n_test;
    dpc_train_config cfg;
    const char *model[2]; /* model specs (dpcorr/model.h): KAN, MLP; static */
    const char *label[2]; /* their names in reports; static */
} dpc_kan_repro_fmnist;
DPC_API DPC_NODISCARD dpc_status dpc_kan_repro_fmnist_setup(dpc_kan_repro_scale s,
                                                            dpc_kan_repro_fmnist *out,
                                                            dpc_error *err);

/* What the reproduction reproduces and what it cannot (and why): static strings, *n each. */
DPC_API const char *const *dpc_kan_repro_reproduced(size_t *n);
DPC_API const char *const *dpc_kan_repro_not_reproduced(size_t *n);

#ifdef __cplusplus
}
#endif
#endif /* DPCORR_KAN_H */
