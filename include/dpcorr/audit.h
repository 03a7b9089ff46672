/* dpcorr/audit.h — empirical privacy auditing in one training run: canaries, scores and the
 * lower bound on epsilon of Steinke, Nasr & Jagielski, "Privacy auditing with one (1) training
 * run" (NeurIPS 2023; arXiv:2305.08846). doc/audit.md explains the method and its results.
 *
 * The game. m canaries are added to the training set; each is included independently with
 * probability 1/2 (in_i = 1) or left out (in_i = 0). A left-out canary keeps its slot in the
 * data set and contributes nothing: the zero-out neighbour of the run with it (for Poisson
 * sampling the same pair of distributions as add/remove; dpcorr/account.h). The audited run is
 * the real trainer: canaries are training examples, drawn by the run's sampler exactly like every
 * other example (dpc_train_canaries, dpcorr/train.h), noised by the run's mechanism and
 * accounted by the run's accountant, so what is audited is the mechanism that ran with its real
 * participation pattern. After the run the auditor scores every canary from what the run
 * releases, guesses "included" for the k+ highest scores and "excluded" for the k- lowest, and
 * counts the correct guesses v among r = k+ + k- guesses.
 *
 * The bound (their main theorem; App. D gives this numerical form). If the run is
 * (eps, delta)-DP with respect to each canary, then for every v
 *     P[correct >= v] <= beta + 2 m delta alpha,
 *     beta  = P[Bin(r, p) >= v],   alpha = max_{1 <= i <= v} P[v - i <= Bin(r, p) < v] / i,
 *     p     = e^eps / (1 + e^eps).
 * The right-hand side, evaluated at the observed v, is the p-value of the claim "(eps, delta)-DP"
 * (dpc_audit_pvalue). The lower bound at confidence c is the largest eps such that every claim
 * (eps', delta) with eps' <= eps is rejected at level 1 - c (dpc_audit_epsilon_bound): with
 * probability >= c over the canaries and the run, the run is not (eps', delta)-DP for any such
 * eps'. When several guess sizes are tried (dpc_audit_bound), each is tested at level
 * (1 - c) / count (Bonferroni), so the reported bound holds at confidence c as a whole.
 *
 * Canaries (dpc_audit_canary):
 *   GRADIENT  white-box gradient ("Dirac") canaries: canary i's clipped gradient is
 *             clip * e_j(i), one parameter coordinate per canary, inserted into the clipped sum
 *             whenever the canary is drawn (a gradient of norm clip: the strongest an example
 *             can contribute). The coordinates are the m that the real data move least (sum of
 *             |per-example gradient| over the first real examples at the initial parameters;
 *             ties in a seeded order), chosen before the run and independently of which
 *             canaries are included. Scored on the released trajectory (below).
 *   MISLABEL  black-box: m training examples (a seeded random subset, removed from the real
 *             data) relabelled with a uniformly random other class. Score: loss under the
 *             initial model minus loss under the final model (the final model's loss, centred
 *             by the public initial model).
 *   OOD       black-box: m out-of-distribution inputs (every feature uniform over that
 *             feature's range in the training data) with a uniformly random label (regression:
 *             a target uniform over the targets' range). Score as MISLABEL.
 *
 * The white-box statistic. Every intermediate model is released, and the optimizer
 * (dpcorr/train.h) is post-processing with public hyper-parameters, so the noisy clipped sums
 *     g~_t = g_t + sigma (B Z)_t          (sigma = the noise std per row of Z: ledger.noise_std
 *                                          x clip; B = the mechanism's noising matrix)
 * are released too (dpc_audit_unroll recovers them from the parameters). Canary i's trajectory
 * y (n) = <e_j(i), g~_t> over the steps is clip * x + r + sigma B z, x (n) its participation
 * indicator, r the real data's gradients in that coordinate (interference), z ~ N(0, I). Let W
 * (n x n, lower triangular) whiten the noise: W B B^T W^T = I — W = C for square mechanisms
 * (C B = I), W = L^-1 with L L^T = B B^T for the tree (2n noise rows). Then
 *   - participation public (FIXED, SHUFFLE: the permutations are not secret — the accountant
 *     takes the worst case over them): the Neyman-Pearson statistic for "included or not" is
 *         LLR = <clip W x, W y> / sigma^2 - ||clip W x||^2 / (2 sigma^2),
 *     the whole trajectory weighted by the dual direction C^T C x (not one step, nor the plain
 *     sum of the updates). Without interference it is N(-mu^2/2, mu^2) when left out and
 *     N(+mu^2/2, mu^2) when included, mu = clip ||W x|| / sigma <= the run's sensitivity over
 *     its noise: the audit faces exactly the whole-run Gaussian mechanism the accountant bounds.
 *   - Poisson kinds (the draws are secret): every opportunity s (a step at which the canary may
 *     be drawn: every step for POISSON, its group's steps for CYCLIC_POISSON) is an independent
 *     q-coin. a_s = <W e_s, W y> / (sigma ||W e_s||) is N(mu_s b_s, 1), mu_s = clip ||W e_s|| /
 *     sigma, b_s ~ Bernoulli(q), and the score is
 *         LLR = sum_s log(1 - q + q exp(mu_s a_s - mu_s^2 / 2)),
 *     the likelihood ratio of the Poisson-subsampled Gaussian the accountant composes (exact for
 *     DP-SGD, W = I, and for banded strategies whose columns at the opportunities do not overlap:
 *     the amplified banded route). Otherwise it remains a valid score (any score is), not the
 *     optimal one.
 *   - balls-in-bins (one secret offset o per canary, the same every epoch): the mixture
 *         LLR = log((1/b) sum_o exp(LLR_public(x_o))) over the b offsets.
 * Any score gives a valid bound; a weak score only gives a weak one.
 *
 * Randomness: inclusion, canary design and tie-breaks come from stream
 * DPC_STREAM_ID(DPC_STREAM_AUDIT, 0) of the run's generator (rows: 0 inclusion, 1 coordinate
 * order, 2 labels, 3 OOD inputs); the MISLABEL subset is dpc_dataset_split with stream index
 * DPC_AUDIT_SPLIT_STREAM. An audit is a pure function of (key, configuration, data).
 *
 * Threading: everything is re-entrant; a scorer is immutable after creation and may be shared.
 */
#ifndef DPCORR_AUDIT_H
#define DPCORR_AUDIT_H

#include "dpcorr/common.h"
#include "dpcorr/data.h"
#include "dpcorr/mech.h"
#include "dpcorr/model.h"
#include "dpcorr/rng.h"
#include "dpcorr/train.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== The lower bound ======================================================================= */

/* The p-value of v correct guesses out of r on m canaries under the claim "(eps, delta)-DP":
 * min(1, beta + 2 m delta alpha) as above, with binomial terms summed exactly in log space.
 * 0 <= v <= r <= m, m >= 1, eps >= 0 finite, delta in [0, 1). */
DPC_API DPC_NODISCARD dpc_status dpc_audit_pvalue(size_t m, size_t r, size_t v, double eps,
                                                  double delta, double *p, dpc_error *err);

/* The lower bound: the largest eps with pvalue(eps') < significance for every eps' in
 * [0, eps] (the first crossing; 0 when even eps = 0 is not rejected). Found by a scan in steps
 * of 1/64 and a bisection to 1e-9 inside the first step that is not rejected (the p-value is
 * continuous and, where it is below 1/2, increasing in eps in every case we have checked; the
 * scan guards against the rest). significance in (0, 1). */
DPC_API DPC_NODISCARD dpc_status dpc_audit_epsilon_bound(size_t m, size_t r, size_t v,
                                                         double delta, double significance,
                                                         double *eps, dpc_error *err);

/* Correct guesses for k+ "included" guesses on the highest scores and k- "excluded" guesses on
 * the lowest (k+ + k- <= m). Ties are broken by canary index (higher index ranks higher), a
 * public rule. scores (m), included (m): 1 = the canary was in the run. */
DPC_API DPC_NODISCARD dpc_status dpc_audit_correct(const double *scores,
                                                   const unsigned char *included, size_t m,
                                                   size_t k_plus, size_t k_minus, size_t *correct,
                                                   dpc_error *err);

typedef struct dpc_audit_bound_result {
    double epsilon;       /* the lower bound (>= 0) at `confidence` */
    double confidence;    /* overall confidence c */
    double significance;  /* level of each candidate test: (1 - c) / candidates */
    double p_value;       /* p-value of the chosen candidate at eps = epsilon (<= significance) */
    size_t k_plus, k_minus; /* the guess sizes that gave the bound */
    size_t guesses;       /* r = k_plus + k_minus */
    size_t correct;       /* v */
    size_t candidates;    /* guess sizes tried: the Bonferroni factor */
} dpc_audit_bound_result;

/* Number of default guess sizes for m canaries (the grid of dpc_audit_bound). */
#define DPC_AUDIT_GRID_MAX 12

/* The bound from scores. k_plus = k_minus = 0: the default grid — k+ = max(1, round(f m)) for
 * f in {0.01, 0.02, 0.05, 0.1, 0.2, 0.5}, each with k- = 0 and with k- = k+ (duplicates
 * removed), every candidate at level (1 - confidence) / candidates; the best bound is reported.
 * Otherwise the one candidate (k_plus, k_minus) at level 1 - confidence. confidence in (0, 1),
 * delta as dpc_audit_pvalue. */
DPC_API DPC_NODISCARD dpc_status dpc_audit_bound(const double *scores,
                                                 const unsigned char *included, size_t m,
                                                 size_t k_plus, size_t k_minus, double delta,
                                                 double confidence, dpc_audit_bound_result *out,
                                                 dpc_error *err);

/* ==== White-box scores ====================================================================== */

/* The whitener W of a mechanism and the scores above. Toeplitz kinds keep C's first column
 * (any n; convolutions by FFT when C has more than 64 nonzero coefficients); DENSE uses C;
 * TREE uses L^-1 of the Cholesky factor of B B^T (n <= 4096: O(n^3) once). Immutable. */
typedef struct dpc_audit_scorer dpc_audit_scorer;

/* sigma: the noise std per row of Z in the units of y (ledger.noise_std x clip); clip: the
 * canary's gradient norm. Both finite and > 0. */
DPC_API DPC_NODISCARD dpc_status dpc_audit_scorer_new(dpc_audit_scorer **out, const dpc_mech *m,
                                                      double sigma, double clip,
                                                      dpc_error *err);
DPC_API void dpc_audit_scorer_free(dpc_audit_scorer *s);
DPC_API size_t dpc_audit_scorer_steps(const dpc_audit_scorer *s); /* n */

/* The LLR score of one gradient canary. y (n): its trajectory; steps (nsteps, increasing, each
 * < n): its participation steps when q == 1, its opportunities when 0 < q < 1 (Poisson rate).
 * nsteps == 0 gives score 0 (a canary that can never take part carries no signal). */
DPC_API DPC_NODISCARD dpc_status dpc_audit_score(const dpc_audit_scorer *s, const double *y,
                                                 const size_t *steps, size_t nsteps, double q,
                                                 double *score, dpc_error *err);

/* The score of a canary that takes part at o, o + period, o + 2 period, ... (< n) for one
 * secret offset o uniform in [0, period) (balls-in-bins sampling): the likelihood ratio of that
 * mixture, log((1/period) sum_o exp(LLR(x_o))), LLR as for public participation x_o. */
DPC_API DPC_NODISCARD dpc_status dpc_audit_score_cyclic(const dpc_audit_scorer *s,
                                                        const double *y, size_t period,
                                                        double *score, dpc_error *err);

/* mu = clip ||W x|| / sigma for the participation set `steps` (the signal-to-noise ratio of a
 * canary with public participation; sqrt(sum_s mu_s^2) is not what Poisson canaries face). */
DPC_API DPC_NODISCARD dpc_status dpc_audit_scorer_mu(const dpc_audit_scorer *s,
                                                     const size_t *steps, size_t nsteps,
                                                     double *mu, dpc_error *err);

/* The released noisy clipped sums from the public parameter trajectory, inverting the heavy-ball
 * update of dpcorr/train.h coordinate by coordinate:
 *     v_t = (theta_t - theta_{t+1}) / lr_t,   h_t = v_t - momentum v_{t-1}   (v_{-1} = 0),
 *     g~_t = expected_batch (h_t - weight_decay theta_t).
 * theta (n + 1, d): the d audited coordinates before step 0 and after each of the n steps;
 * lr (n): the learning rate of each step (dpc_step_info.lr); out (n, d). */
DPC_API DPC_NODISCARD dpc_status dpc_audit_unroll(const double *theta, size_t n, size_t d,
                                                  const double *lr, double momentum,
                                                  double weight_decay, double expected_batch,
                                                  double *out, dpc_error *err);

/* ==== One audited training run ============================================================== */

typedef enum dpc_audit_canary {
    DPC_AUDIT_GRADIENT = 0, /* white-box Dirac gradient canaries */
    DPC_AUDIT_MISLABEL = 1, /* black-box: mislabelled training examples */
    DPC_AUDIT_OOD = 2       /* black-box: out-of-distribution inputs */
} dpc_audit_canary;

DPC_API const char *dpc_audit_canary_name(dpc_audit_canary c); /* "gradient", "mislabel", "ood" */
DPC_API DPC_NODISCARD dpc_status dpc_audit_canary_parse(const char *s, dpc_audit_canary *out,
                                                        dpc_error *err);

/* dpc_dataset_split stream index of the MISLABEL canary subset. */
#define DPC_AUDIT_SPLIT_STREAM 0x41554454u

typedef struct dpc_audit_config {
    dpc_audit_canary canary;  /* default GRADIENT */
    size_t canaries;          /* m >= 1 (default 1000); GRADIENT: <= the model's parameters;
                                 MISLABEL: < the training examples */
    double confidence;        /* in (0, 1) (default 0.95) */
    size_t k_plus, k_minus;   /* guess sizes; 0, 0 (default): the grid of dpc_audit_bound */
    size_t activity_examples; /* GRADIENT: real examples ranking the coordinates (default 256) */
    dpc_progress calibration; /* reports of the trainer's calibration (balls-in-bins, MMCC:
                                 seconds), as dpc_trainer_new_progress; default none */
} dpc_audit_config;

/* Sets every field to the default named above (GRADIENT, 1000 canaries, 0.95, the k grid, 256). */
DPC_API void dpc_audit_config_init(dpc_audit_config *c);
/* The field table of dpc_audit_config (dpcorr/field.h): name, type, offset, default, range and
 * one-line doc of every field; dpc_audit_config_init writes its defaults and
 * dpc_audit_config_check its single-field ranges. */
DPC_API const dpc_field_table *dpc_audit_config_fields(void);
/* check_parameter style; fields named ("canaries", "confidence", "k_plus", ...). */
DPC_API DPC_NODISCARD dpc_status dpc_audit_config_check(const dpc_audit_config *c,
                                                        dpc_error *err);

typedef struct dpc_audit_result {
    dpc_ledger ledger;             /* the audited run's (claimed epsilon = ledger.epsilon at
                                      ledger.delta; the data set includes the canary slots) */
    dpc_audit_bound_result bound;  /* the lower bound and its guesses */
    dpc_audit_canary canary;
    size_t canaries;               /* m */
    size_t included;               /* canaries in the run */
    size_t examples;               /* training examples of the run (real + m canary slots) */
    double *scores;                /* (m), owned: the canaries' scores */
    unsigned char *in;             /* (m), owned: 1 = included */
    double mu_max;                 /* GRADIENT with public participation: the largest
                                      clip ||W x|| / sigma over the canaries; NAN otherwise */
    double test_loss, test_accuracy; /* final model on the test set (NAN without one) */
    char method[128];              /* the test and its guesses */
    char statistic[128];           /* the score */
} dpc_audit_result;
/* The audit's result fields of its JSON (--json and the report): the claimed epsilon and delta,
 * the lower bound and its confidence, the canary counts and guesses, the method, canary kind
 * and statistic, the bound's internals, mu_max, examples and test accuracy. */
struct dpc_json_writer;
DPC_API void dpc_audit_result_json(struct dpc_json_writer *w, const dpc_audit_result *r);

/* Progress callback after every step; a nonzero return cancels the run (DPC_E_STATE). */
typedef int (*dpc_audit_progress_fn)(void *ctx, const dpc_step_info *info, size_t steps);

/* Runs one audit: builds the canaries and the training set (train's examples, or all but the
 * MISLABEL subset, plus m canary slots), draws the inclusions, trains with tc (tc->canaries must
 * be NULL: the audit sets it), scores and bounds. model, train and test (may be NULL) are
 * borrowed. *out is filled on success (free with dpc_audit_result_free); on failure it owns
 * nothing. Errors name the field at fault ("canaries", or the trainer's fields). */
DPC_API DPC_NODISCARD dpc_status dpc_audit_run(const dpc_audit_config *ac,
                                               const dpc_train_config *tc,
                                               const dpc_model *model, const dpc_dataset *train,
                                               const dpc_dataset *test, const dpc_rng *rng,
                                               dpc_audit_progress_fn progress, void *ctx,
                                               dpc_audit_result *out, dpc_error *err);
DPC_API void dpc_audit_result_free(dpc_audit_result *r);

/* 1 when the audit refutes the run's claim: the lower bound exceeds the claimed epsilon
 * (r->bound.epsilon > r->ledger.epsilon), so with probability >= the bound's confidence the run
 * is less private than its ledger says; 0 otherwise, and for r NULL. */
DPC_API int dpc_audit_refutes(const dpc_audit_result *r);

/* The lower bound per guess count (the curve a front end plots beside the scores): for the
 * guess counts k_j = round((m/2)^((j + 1)/cap)), j < cap (m = r->canaries; each k >= 1 once,
 * increasing), the bound at r's per-test significance and delta with k "included" guesses on
 * the highest scores (eps_top) and with k more "excluded" guesses on the lowest (eps_both); a k
 * whose bound cannot be computed is left out. k, eps_top, eps_both: (cap). Returns the count. */
DPC_API size_t dpc_audit_bound_curve(const dpc_audit_result *r, size_t cap, double *k,
                                     double *eps_top, double *eps_both);

/* What dpc_audit_run would run, without training (a dry run): the checks that need no training
 * (the configuration, the canaries against the model's parameters and the training examples)
 * and the trainer configuration resolved by dpc_train_config_resolve on the audit's training set
 * (train's examples, or all but the MISLABEL subset, plus m canary slots), whose size is
 * *examples. Same arguments and errors as dpc_audit_run; out and examples may not be NULL. */
DPC_API DPC_NODISCARD dpc_status dpc_audit_resolve(const dpc_audit_config *ac,
                                                   const dpc_train_config *tc,
                                                   const dpc_model *model,
                                                   const dpc_dataset *train, const dpc_rng *rng,
                                                   dpc_train_config *out, size_t *examples,
                                                   dpc_error *err);

/* ==== The epsilon study ===================================================================== */

/* The study of doc/audit.md: the lower bound against the claimed epsilon for DP-SGD and two
 * correlated mechanisms. Its grid is every mechanism row crossed with every claimed epsilon;
 * each cell is one dpc_audit_run of the caller's configuration with the row's mechanism and
 * sampler (dpc_audit_study_config). */
#define DPC_AUDIT_STUDY_EPSILONS 5 /* claimed epsilons 1, 2, 4, 8, 16 */
#define DPC_AUDIT_STUDY_MECHS 3    /* the mechanism rows below */

/* One mechanism row of the study. */
typedef struct dpc_audit_study_mech {
    const char *label;        /* static: "DP-SGD (Poisson)", ... */
    dpc_mech_kind kind;       /* the mechanism */
    dpc_sampler_kind sampler; /* its participation */
    double nu;                /* NU's nu (0 for the others) */
    size_t bands;             /* BSR's bands (0 for the others) */
} dpc_audit_study_mech;

/* The grid: rows (in order) DP-SGD = IDENTITY under POISSON sampling; nu-DP-FTRL with nu = 0.02
 * over FIXED-order epochs (the whole-run Gaussian route); BSR with 16 bands under
 * CYCLIC_POISSON sampling (the amplified banded route); claimed epsilons 1, 2, 4, 8, 16
 * (increasing: the columns). */
typedef struct dpc_audit_study_grid {
    dpc_audit_study_mech mech[DPC_AUDIT_STUDY_MECHS];
    double epsilon[DPC_AUDIT_STUDY_EPSILONS];
} dpc_audit_study_grid;

/* Fills *g with the grid above. */
DPC_API void dpc_audit_study_grid_init(dpc_audit_study_grid *g);

/* The trainer configuration of the study cell (row mech, claimed epsilon): base with the row's
 * mechanism kind, nu, bands and sampler, groups = 0 (the sampler's default), that epsilon and
 * noise_multiplier = 0 (calibrated to the epsilon); every other field is base's (a shallow copy:
 * pointers stay base's). Errors: "mech" (an index >= DPC_AUDIT_STUDY_MECHS), "epsilon" (not
 * finite and > 0), "base"/"out" (NULL). */
DPC_API DPC_NODISCARD dpc_status dpc_audit_study_config(const dpc_train_config *base, size_t mech,
                                                        double epsilon, dpc_train_config *out,
                                                        dpc_error *err);

/* The largest lower bound m canaries can give at this confidence and delta: dpc_audit_bound
 * (the default guess grid) on perfectly separated scores, canary i included when i is odd
 * (every "included" guess right while k+ <= m / 2 rounded down, every "excluded" guess right
 * while k- <= m / 2 rounded up). The cap of the study's plot: an audit of m canaries cannot
 * show more, however leaky the run. m >= 1 ("m"), delta in [0, 1) ("delta"), confidence in
 * (0, 1) ("confidence"); eps not NULL ("eps"). */
DPC_API DPC_NODISCARD dpc_status dpc_audit_perfect_bound(size_t m, double delta,
                                                         double confidence, double *eps,
                                                         dpc_error *err);

#ifdef __cplusplus
}
#endif
#endif /* DPCORR_AUDIT_H */
