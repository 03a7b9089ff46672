/* dpcorr/papers/linreg.h — differentially private linear regression with adaptive clipping:
 * DP-AMBSSGD with DP-STAT (Varshney, Thakurta & Jain 2022, "(Nearly) Optimal Private Linear
 * Regression via Adaptive Clipping", Algorithms 2 and 3), DP-SSGD (Algorithm 1), and baselines for
 * contrast: DP mini-batch SGD with a fixed clip, non-private tail-averaged SGD, sufficient
 * statistics perturbation (SSP) and ordinary least squares (OLS).
 *
 * Problem. Records (x_i, y_i), x in R^d, real y; squared loss L(w) = 1/2 E(y - <x, w>)^2 with
 * H = E[x x^T]. Per-record gradient x (<x, w> - y), of norm ||x|| |r| (r = residual).
 *
 * The iterative algorithms share one engine: a uniformly random permutation of the N records
 * (Fisher-Yates), then ONE pass of T steps. Step t (records tau = (b+s) t onward, disjoint):
 *     s "stat" records   -> gamma_t = DP-STAT(residuals at w_t)           (adaptive clip only)
 *     zeta_t             =  clip_scale * gamma_t  (= R_x gamma_t (ln N)^a, Alg. 2 line 8),
 *                           or a fixed clip, or none (non-private)
 *     b gradient records -> G_t = (1/b) sum_i clip_zeta_t(x_i (<x_i, w_t> - y_i))    (min rule)
 *     w_{t+1}            =  w_t - eta (G_t + (2 alpha zeta_t / b) g_t),   g_t ~ N(0, I_d)
 * and the output is the mean of the last T - T/2 iterates w_{T/2+1}..w_T (Alg. 2 line 12).
 * The N - T(b+s) records left over (T does not divide N) are never used.
 *
 * DP-STAT (Alg. 3, corrected, note §2.6): K doublings from Delta = B / 2^K; count c_i of stat
 * residuals with |r| <= gamma_i = 2^i Delta, noisy count c_i + sqrt(K) alpha_stat N(0,1); stop at
 * the first round whose noisy count reaches the threshold — s (rule PAPER, as printed) or
 * s - Gamma with Gamma = alpha_stat sqrt(2 K ln2 ln(K ln2 / beta)) from Lemma 3.10 (rule MARGIN,
 * the default: the printed rule overshoots, note §2.6.1) — and return gamma_i; if no round stops,
 * return gamma_K = B. Exactly K counts at most (the paper's loop makes K+1, erratum 3).
 *
 * Privacy (replace-one neighbours; the plan's dpc_ledger). Notation: the paper's alpha is the
 * noise multiplier z (dpcorr/account.h), alpha_stat is z_stat.
 *   DP-AMBSSGD, fixed clip. A gradient step is the Gaussian mechanism with sensitivity
 *     2 zeta_t / b and std 2 z zeta_t / b (multiplier z); DP-STAT's K counts (sensitivity 1
 *     each, std sqrt(K) z_stat) are one Gaussian with multiplier z_stat (Lemma 3.10); zeta_t is
 *     a function of earlier releases only. Every record is in exactly one step's batch, so
 *     parallel composition gives one step's cost for the whole run (Thm. 3.6). The accountant
 *     composes these Gaussians exactly (GDP, mu^2 = 1/z^2 + 1/z_stat^2); the paper's route is
 *     zCDP, rho = 1/(2 z^2) + 1/(2 z_stat^2), converted by Bun & Steinke (epsilon_paper).
 *   DP-SSGD: each step is a local randomiser with noise multiplier z; amplification by
 *     shuffling (dpc_account_dpssgd_epsilon; valid only for eps of order 1/sqrt(N)).
 *   The permutation must be uniform for DP-SSGD's amplification; we use an exact Fisher-Yates
 *   shuffle with dpc_rng_below, not the sampler's Feistel permutation (which is pseudorandom).
 *
 * Randomness: pure functions of (rng key, stream, row, index), streams
 * DPC_STREAM_ID(DPC_LINREG_STREAM_*, opts.stream):
 *   SHUFFLE   row 0, index i        Fisher-Yates draw for position i (dpc_rng_below)
 *   NOISE     row t, index j        g_t[j], the gradient noise of step t
 *   STAT      row t, index i        the noise of DP-STAT's count i at step t
 *   SSP       row 0/1, index k      SSP noise on X^T X (upper triangle) / X^T y
 * so runs are reproducible bit for bit, and a neighbouring data set sees the same noise.
 *
 * Public inputs (dpc_linreg_prior) are prior knowledge the paper assumes (note §2.5): ||H||_2,
 * kappa, R_x, the tail constants K2 and a, and bounds on ||w*||_H and sigma. They are NOT
 * estimated from the data. dpc_linreg_checks reports whether the theory's preconditions hold
 * (sample complexity, Lemma 3.11's batch condition, DP-STAT's margin, ...): a failed check is a
 * warning about the utility guarantee, never about privacy.
 *
 * Example (DP-AMBSSGD at (1, 1e-7)-DP on synthetic data with H = I; delta left 0 is the default
 * for N = 10^6, dpc_account_default_delta):
 *     dpc_dataset *ds;  dpc_rng rng;  dpc_rng_seed(&rng, 1);
 *     if (dpc_data_synth_linreg(&ds, &rng, 0, 1000000, 10, 0.0, 0.1, NULL, &err)) ...
 *     dpc_linreg_opts o;  dpc_linreg_opts_init(&o, DPC_LINREG_AMBSSGD);
 *     o.epsilon = 1;
 *     dpc_linreg_prior_from_spectrum(&o.prior, ds->cov_diag, ds->d, &err);
 *     dpc_linreg *lr;
 *     if (dpc_linreg_new(&lr, ds, &o, &rng, &err)) ...
 *     while (dpc_linreg_steps_done(lr) < dpc_linreg_plan_get(lr)->steps)
 *         if (dpc_linreg_step(lr, &info, &err)) ...       // info.gamma, info.zeta, ...
 *     double w[10];  dpc_linreg_average(lr, w, &err);      // the released model
 *     dpc_linreg_free(lr);
 *
 * Threading: an object is used by one thread at a time; different objects are independent.
 * Ownership: the run borrows the data set (it must outlive the run) and owns everything else. */
#ifndef DPCORR_LINREG_H
#define DPCORR_LINREG_H

#include "dpcorr/account.h"
#include "dpcorr/common.h"
#include "dpcorr/field.h"
#include "dpcorr/data.h"
#include "dpcorr/rng.h"
#include "dpcorr/train.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Stream purposes (DPC_STREAM_ID(purpose, opts.stream)); see above. */
#define DPC_LINREG_STREAM_SHUFFLE (DPC_STREAM_USER + 0x100)
#define DPC_LINREG_STREAM_NOISE (DPC_STREAM_USER + 0x101)
#define DPC_LINREG_STREAM_STAT (DPC_STREAM_USER + 0x102)
#define DPC_LINREG_STREAM_SSP (DPC_STREAM_USER + 0x103)

/* Largest number of DP-STAT doublings (the paper's K = ceil(200 log2 N) is about 4000 at
 * N = 1e6; gamma_i = B 2^(i-K) then underflows to 0 for small i, as the note warns). */
#define DPC_LINREG_MAX_DPSTAT_K 16384
#define DPC_LINREG_DPSTAT_K_PAPER ((size_t)-1) /* opts.dpstat_k: the paper's ceil(200 log2 N) */

typedef enum dpc_linreg_algo {
    DPC_LINREG_AMBSSGD = 0, /* Alg. 2 + 3: adaptive clip, mini-batch, one pass, zCDP */
    DPC_LINREG_SSGD = 1,    /* Alg. 1: b = 1, fixed clip, N steps, shuffling amplification */
    DPC_LINREG_FIXED = 2,   /* baseline: DP mini-batch SGD, fixed clip, one pass, zCDP */
    DPC_LINREG_SGD = 3      /* baseline: non-private tail-averaged mini-batch SGD, no clip */
} dpc_linreg_algo;

/* "dp-ambssgd", "dp-ssgd", "dp-sgd-fixed", "sgd" (and the parser for these names). */
DPC_API const char *dpc_linreg_algo_name(dpc_linreg_algo a);
DPC_API DPC_NODISCARD dpc_status dpc_linreg_algo_parse(const char *s, dpc_linreg_algo *out,
                                                       dpc_error *err);

typedef enum dpc_dpstat_rule {
    DPC_DPSTAT_MARGIN = 0, /* stop when the noisy count >= s - Gamma (default; note §2.6.1) */
    DPC_DPSTAT_PAPER = 1   /* stop when the noisy count >= s (Alg. 3 as printed; overshoots) */
} dpc_dpstat_rule;

DPC_API const char *dpc_dpstat_rule_name(dpc_dpstat_rule r); /* "margin", "paper" */
DPC_API DPC_NODISCARD dpc_status dpc_dpstat_rule_parse(const char *s, dpc_dpstat_rule *out,
                                                       dpc_error *err);

/* ==== Public prior knowledge (note §2.5) ==================================================== */

typedef struct dpc_linreg_prior {
    double h_norm;      /* ||H||_2 > 0 */
    double kappa;       /* ||H||_2 / lambda_min(H) >= 1 */
    double r_x;         /* R_x > 0 with E[||x||^2 x x^T] <= R_x^2 H; the paper (and the default of
                           dpc_linreg_prior_from_spectrum) takes R_x^2 = Tr H */
    double k2;          /* K2 of the (H, K2, a, beta)-Tail (Def. 2.1); sqrt(8/3) for Gaussians */
    double a;           /* tail exponent a > 0: 1/2 Gaussian, 1 sub-exponential */
    double w_bound;     /* upper bound on ||w*||_H (enters B, and the fixed clip) */
    double sigma_bound; /* upper bound on the label-noise std sigma (enters B, the fixed clip) */
} dpc_linreg_prior;

/* The field table of dpc_linreg_prior (dpcorr/field.h): defaults, ranges, docs. */
DPC_API const dpc_field_table *dpc_linreg_prior_fields(void);
/* Writes the table's defaults (dpc_field_defaults); h_norm = kappa = r_x = 0 (must be set). */
DPC_API void dpc_linreg_prior_init(dpc_linreg_prior *p);
/* From a known diagonal spectrum lambda (d), e.g. a synthetic set's cov_diag: h_norm = max,
 * kappa = max/min, r_x = sqrt(sum). Other fields untouched. */
DPC_API DPC_NODISCARD dpc_status dpc_linreg_prior_from_spectrum(dpc_linreg_prior *p,
                                                                const double *lambda, size_t d,
                                                                dpc_error *err);

/* The fields of dpc_linreg_prior as bits, in their order (the `keep` and `filled` masks of
 * dpc_linreg_prior_from_data). */
#define DPC_LINREG_PRIOR_H_NORM 0x01u
#define DPC_LINREG_PRIOR_KAPPA 0x02u
#define DPC_LINREG_PRIOR_R_X 0x04u
#define DPC_LINREG_PRIOR_K2 0x08u
#define DPC_LINREG_PRIOR_A 0x10u
#define DPC_LINREG_PRIOR_W_BOUND 0x20u
#define DPC_LINREG_PRIOR_SIGMA_BOUND 0x40u

/* The public prior knowledge a data set carries, into the fields of p not in keep (the caller's
 * own values): a synthetic set (cov_diag and truth: its generator's parameters are public):
 * h_norm, kappa, r_x from the spectrum (dpc_linreg_prior_from_spectrum), w_bound = ||w*||_H and
 * sigma_bound = the generator's label-noise std (the noise= of its source); else a set with a
 * public row-norm bound B (x_norm_bound > 0): r_x = B and h_norm = B^2 (||H|| <= E||x||^2 <= B^2).
 * *filled (may be NULL) receives the bits of the fields set. Errors of the spectrum name
 * "prior". */
DPC_API DPC_NODISCARD dpc_status dpc_linreg_prior_from_data(dpc_linreg_prior *p,
                                                            const dpc_dataset *ds, unsigned keep,
                                                            unsigned *filled, dpc_error *err);

/* Where field bit `bit` (one DPC_LINREG_PRIOR_*) of a prior came from, for reports: "option"
 * when in keep (the caller's value); when in filled (dpc_linreg_prior_from_data on ds)
 * "synthetic generator" for a synthetic set, else "x_norm_bound^2" (h_norm) or "x_norm_bound"
 * (r_x); else "default" (the table's default). */
DPC_API const char *dpc_linreg_prior_source(const dpc_dataset *ds, unsigned keep, unsigned filled,
                                            unsigned bit);

/* h_norm, kappa and r_x have no default: each must be the caller's (keep) or the data's (filled).
 * DPC_E_INVALID naming the first missing one ("prior.h_norm", "prior.kappa", "prior.r_x", the
 * fields of dpc_linreg_opts) otherwise. */
DPC_API DPC_NODISCARD dpc_status dpc_linreg_prior_require(unsigned keep, unsigned filled,
                                                          dpc_error *err);

/* ==== Options (what the user chooses; 0 = the paper's default) ============================= */

typedef struct dpc_linreg_opts {
    dpc_linreg_algo algo;
    /* privacy: exactly one of epsilon (calibrated) and noise_multiplier (given) */
    double epsilon, delta;  /* target; epsilon = 0: use noise_multiplier as given; delta 0:
                               dpc_account_default_delta(N), and a given delta >= 1/N
                               is refused (dpc_account_resolve_delta) */
    int allow_large_delta;  /* 1 accepts delta >= 1/N (a mechanism may then publish a record) */
    double noise_multiplier; /* z when epsilon = 0 (the paper's alpha): gradient noise std
                               2 z zeta / b, i.e. z x the replace-one sensitivity; the ledger then
                               reports the epsilon it spends (DP-SSGD outside the shuffling
                               theorem's range: INFINITY, no guarantee; utility experiments only) */
    dpc_calibration calibration; /* ACCOUNTANT: AMBSSGD and FIXED the exact GDP of the
                               run's Gaussians (replace-one, parallel composition); SSGD the
                               shuffling theorem with the exact Gaussian eps0. PAPER: AMBSSGD
                               Thm. 3.7's sqrt(8 log(1/delta))/eps, FIXED zCDP with Bun &
                               Steinke's conversion, SSGD the classical Gaussian eps0 */
    dpc_linreg_prior prior;
    /* layout and optimisation */
    double c1;              /* T = ceil(c1 kappa ln N), rounded up to even */
    size_t steps;           /* T (even, >= 2) instead of c1; SSGD: ignored (T = N, b = 1) */
    size_t stat_batch;      /* s. 0 = floor((b+s)/11) for AMBSSGD (s = b/10), 0 otherwise; for
                               FIXED and SGD a non-zero s skips s records per step (matched
                               layouts in comparisons) */
    double eta;             /* step; 0 = b/(R_x^2 + (b-1)||H||) (Thm. 3.7); SSGD
                               min{1/(4 R_x^2) (Cor. 3.3), ||H||/(4 kappa d alpha^2 R_x^2
                               (ln N)^(2a))} (Thm. 3.2's noise term with its constant set to
                               1/4: the printed one gives eta ~ 1e-12; without the cap the
                               iterate noise outgrows the clip and the pass diverges) */
    double clip;            /* FIXED, SSGD: zeta; 0 = R_x sqrt(w_bound^2 + sigma_bound^2)
                               (ln N)^(2a) (Cor. 3.3) */
    /* DP-STAT */
    size_t dpstat_k;        /* K doublings (Delta = B/2^K); DPC_LINREG_DPSTAT_K_PAPER:
                               the paper's K = ceil(200 log2 N) */
    dpc_dpstat_rule dpstat_rule;
    double dpstat_beta;     /* beta of Gamma (0: 1/N) */
    double domain;          /* B; 0 = K2 R_x (w_bound + sigma_bound) (ln N)^(2a) (Thm. 3.7) */
    /* randomness */
    uint32_t stream;        /* stream index of every stream this run uses */
} dpc_linreg_opts;

/* The field table of dpc_linreg_opts: defaults, ranges (0 = the paper's default where the doc
 * says so), docs; the prior nested as "prior.k2". dpc_linreg_new refuses a field outside its
 * range naming it (dpc_field_check), then the combinations. */
DPC_API const dpc_field_table *dpc_linreg_opts_fields(void);
/* The table's defaults (dpc_field_defaults: epsilon 0, must be set or noise_multiplier; delta
 * 0, from N: the rule of every trainer, dpc_account_resolve_delta; the paper's experiments set
 * 1e-5) and algo. */
DPC_API void dpc_linreg_opts_init(dpc_linreg_opts *o, dpc_linreg_algo algo);

/* ==== The resolved plan and the privacy ledger ============================================= */

typedef struct dpc_linreg_plan {
    dpc_linreg_algo algo;
    size_t n, d;            /* data set */
    size_t steps;           /* T (even) */
    size_t batch;           /* b gradient records per step */
    size_t stat_batch;      /* s stat records per step (before the gradient records) */
    size_t tail_start;      /* T/2: the output averages w_{T/2+1}..w_T */
    size_t unused;          /* N - T(b+s) records never used */
    double eta;
    double log_n;           /* ln N */
    double clip;            /* fixed zeta (FIXED, SSGD); INFINITY for SGD; NAN for AMBSSGD */
    double clip_scale;      /* AMBSSGD: zeta_t = clip_scale gamma_t = R_x (ln N)^a gamma_t */
    double domain;          /* B */
    size_t dpstat_k;        /* K */
    double dpstat_delta;    /* Delta = B 2^-K (may underflow to 0 for huge K) */
    double dpstat_margin;   /* Gamma (MARGIN rule; computed for both rules) */
    dpc_dpstat_rule dpstat_rule;
    dpc_linreg_prior prior;
    /* privacy (the ledger is the accountant's record; these are the paper's quantities) */
    dpc_ledger ledger;              /* noise_multiplier = z of the gradient steps */
    double noise_multiplier_stat;   /* DP-STAT: count std sqrt(K) z_stat; 0 = no DP-STAT */
    double rho_grad, rho_stat, rho; /* zCDP of a gradient step, of a DP-STAT call, their sum
                                       (= the run, by parallel composition); NAN for SSGD */
    double eps0, delta0;            /* SSGD: the per-step local randomiser; NAN otherwise */
} dpc_linreg_plan;

/* Resolves opts for a data set of n records and d features into *plan, including the ledger
 * (without the rng fields): epsilon is the accountant's (GDP of the run's Gaussians, or the
 * shuffling theorem for SSGD), epsilon_paper the paper's own (Bun & Steinke on rho for the zCDP
 * routes, the classical eps0 for SSGD). Validates every option (DPC_E_INVALID naming it) and the privacy
 * parameters (DPC_E_PRIVACY: e.g. DP-SSGD outside the shuffling theorem's range). */
DPC_API DPC_NODISCARD dpc_status dpc_linreg_plan_make(dpc_linreg_plan *plan,
                                                      const dpc_linreg_opts *o, size_t n,
                                                      size_t d, dpc_error *err);

/* Theory preconditions (warnings about utility, never about privacy). */
typedef struct dpc_linreg_check {
    const char *name;       /* "sample_complexity", "batch_condition", "dpstat_margin",
                               "step_size", "domain_resolution", "shuffle_epsilon_range",
                               "no_clipping_step" */
    int ok;
    double value, required; /* ok iff value >= required (after the check's own direction) */
    const char *source;     /* "Thm. 3.7", "Lemma 3.11", ... */
    const char *meaning;    /* one line: what the check compares */
} dpc_linreg_check;

#define DPC_LINREG_MAX_CHECKS 8

/* Fills up to cap checks for the plan; returns how many were written. */
DPC_API size_t dpc_linreg_checks(const dpc_linreg_plan *plan, dpc_linreg_check *out, size_t cap);

/* The run's report sections (dpcorr/io.h's writer, members of the open object), as `train
 * --algo dp-ambssgd|dp-ssgd --report` writes them. dpc_linreg_plan_report_json: "plan" (the
 * layout, steps, clips, domain, DP-STAT and o's calibration) and "public_inputs" (the prior's
 * values, "tail_a" for a, and their "source": src[k] for field k of dpc_linreg_prior, e.g. from
 * dpc_linreg_prior_source). dpc_linreg_paper_report_json: "privacy_paper" (the paper's zCDP
 * and SSGD quantities, o's stream) and "preconditions" (dpc_linreg_checks, one object each). */
DPC_API void dpc_linreg_plan_report_json(struct dpc_json_writer *w, const dpc_linreg_plan *plan,
                                         const dpc_linreg_opts *o, const char *const src[7]);
DPC_API void dpc_linreg_paper_report_json(struct dpc_json_writer *w, const dpc_linreg_plan *plan,
                                          const dpc_linreg_opts *o);

/* ==== The run ============================================================================== */

typedef struct dpc_linreg dpc_linreg;

/* Builds the plan, validates the data set (regression targets, finite values: dpc_dataset_check)
 * and draws the permutation. The data set is borrowed. */
DPC_API DPC_NODISCARD dpc_status dpc_linreg_new(dpc_linreg **out, const dpc_dataset *train,
                                                const dpc_linreg_opts *o, const dpc_rng *rng,
                                                dpc_error *err);
DPC_API void dpc_linreg_free(dpc_linreg *lr);

/* Per-step telemetry. clip_fraction and batch_loss are computed on raw data and are NOT
 * privatized (outside the guarantee); gamma, zeta and noise_std are released quantities. */
typedef struct dpc_linreg_step_info {
    size_t step;            /* t, 0-based: the step just taken (w_t -> w_{t+1}) */
    double gamma;           /* DP-STAT output gamma_t (NAN unless AMBSSGD) */
    double zeta;            /* clip norm used (INFINITY when none) */
    double noise_std;       /* std of each coordinate of the noise on the mean gradient,
                               2 alpha zeta_t / b (0 when non-private) */
    size_t dpstat_counts;   /* noisy counts DP-STAT made (<= K) */
    size_t clipped;         /* gradient records whose norm exceeded zeta */
    double clip_fraction;   /* clipped / b */
    double batch_loss;      /* 1/2 mean r^2 over the gradient batch at w_t */
    double excess_risk;     /* 1/2 ||w_{t+1} - w*||_H^2 when the data set has truth and
                               cov_diag (synthetic), else NAN */
} dpc_linreg_step_info;

/* The field table of dpc_linreg_step_info (every field DERIVED). */
DPC_API const dpc_field_table *dpc_linreg_step_info_fields(void);

/* One step; DPC_E_RANGE when all T steps are done. info may be NULL. */
DPC_API DPC_NODISCARD dpc_status dpc_linreg_step(dpc_linreg *lr, dpc_linreg_step_info *info,
                                                 dpc_error *err);
/* Runs the remaining steps; trace (T entries, indexed by step) may be NULL. */
DPC_API DPC_NODISCARD dpc_status dpc_linreg_run(dpc_linreg *lr, dpc_linreg_step_info *trace,
                                                dpc_error *err);
/* The released model: the mean of w_{T/2+1}..w_T. DPC_E_STATE before all steps are done. */
DPC_API DPC_NODISCARD dpc_status dpc_linreg_average(const dpc_linreg *lr, double *w,
                                                    dpc_error *err);

DPC_API const dpc_linreg_plan *dpc_linreg_plan_get(const dpc_linreg *lr); /* with rng fields */
DPC_API size_t dpc_linreg_steps_done(const dpc_linreg *lr);
DPC_API size_t dpc_linreg_steps_total(const dpc_linreg *lr);       /* T */
DPC_API const double *dpc_linreg_params(const dpc_linreg *lr);     /* w_t (d) */
DPC_API const dpc_ledger *dpc_linreg_ledger(const dpc_linreg *lr); /* the plan's ledger */
/* The run as a dpc_run (dpcorr/train.h; kind dpc_linreg_algo_name, step info
 * dpc_linreg_step_info, params w_t, the container checkpoints of _save / _restore). */
DPC_API dpc_run dpc_linreg_run_ops(dpc_linreg *lr);
/* Auditing (note oracles O4, O13): the last step was w_{t+1} = w_t - update - noise with
 * update = eta G_t (the clipped mean gradient, before noise) and noise = eta (2 alpha zeta_t/b) g_t.
 * Both (d), owned by lr, valid until the next step. */
DPC_API const double *dpc_linreg_last_update(const dpc_linreg *lr);
DPC_API const double *dpc_linreg_last_noise(const dpc_linreg *lr);
/* The permutation: position p of the pass holds record perm[p] (N entries). Step t reads
 * positions (b+s)t .. (b+s)t+s-1 (stat) and (b+s)t+s .. (b+s)(t+1)-1 (gradient). */
DPC_API const size_t *dpc_linreg_permutation(const dpc_linreg *lr);

/* Checkpoints (the container of dpcorr/train.h; its kind is the algorithm's name,
 * dpc_linreg_algo_name). _save adds the run's configuration items (the resolved plan: algorithm,
 * epsilon, delta, calibration, the public inputs, steps, batch, stat_batch, eta, clip, domain,
 * DP-STAT, noise multipliers, stream; the training set's size and content hash), its progress
 * and its state: w_t, the running tail sum, the last step's update and noise, the counters. The
 * permutation and every noise draw (the gradient noise and DP-STAT's counts at step t) are
 * regenerated from the RNG. _restore puts a saved state into lr, a run built with the same
 * options, data and generator (check them first with dpc_ckpt_match against a container of this
 * run): DPC_E_STATE for another kind, DPC_E_FORMAT for missing or malformed state. */
DPC_API DPC_NODISCARD dpc_status dpc_linreg_save(const dpc_linreg *lr, dpc_ckpt *ck,
                                                 dpc_error *err);
DPC_API DPC_NODISCARD dpc_status dpc_linreg_restore(dpc_linreg *lr, const dpc_ckpt *ck,
                                                    dpc_error *err);

/* ==== DP-STAT (Algorithm 3) ================================================================= */

typedef struct dpc_dpstat_params {
    double domain;          /* B > 0 */
    size_t k;               /* K >= 1 */
    double noise_multiplier; /* z > 0: count noise std sqrt(K) z (the paper's alpha) */
    dpc_dpstat_rule rule;
    double margin;          /* Gamma >= 0 (MARGIN rule) */
} dpc_dpstat_params;

/* The field table of dpc_dpstat_params (domain, k and noise_multiplier 0: must be set). */
DPC_API const dpc_field_table *dpc_dpstat_params_fields(void);

typedef struct dpc_dpstat_result {
    double gamma;           /* gamma_priv = 2^i Delta for the stopping round i (B if none) */
    size_t rounds;          /* noisy counts made (<= K) */
    double noise_std;       /* sqrt(K) z */
} dpc_dpstat_result;

/* Runs DP-STAT on the s residuals r (sign ignored). Round i's noise is
 * sqrt(K) alpha dpc_rng_gaussian(noise, row, i). work: (s) scratch. counts and noisy (each K
 * entries, may be NULL) receive the true and noisy counts of the rounds made (auditing). */
DPC_API DPC_NODISCARD dpc_status dpc_linreg_dpstat(const double *r, size_t s,
                                                   const dpc_dpstat_params *p,
                                                   const dpc_rng_stream *noise, uint64_t row,
                                                   double *work, dpc_dpstat_result *out,
                                                   double *counts, double *noisy,
                                                   dpc_error *err);

/* Lemma 3.10's margin Gamma = z sqrt(2 log(B/Delta) log(log(B/Delta)/beta)) with
 * log(B/Delta) = K ln 2 (natural logs), z the count noise multiplier. z > 0, K >= 1, beta in
 * (0, 1). */
DPC_API DPC_NODISCARD dpc_status dpc_linreg_dpstat_margin(double noise_multiplier, size_t k,
                                                          double beta,
                                                          double *gamma, dpc_error *err);

/* ==== Non-iterative baselines and risk =================================================== */

/* Ordinary least squares: solves X^T X w = X^T y (Cholesky). Not private. DPC_E_NUMERIC when
 * X^T X is singular. w: (d). */
DPC_API DPC_NODISCARD dpc_status dpc_linreg_ols(const dpc_dataset *ds, double *w,
                                                dpc_error *err);

typedef struct dpc_linreg_ssp_opts {
    double epsilon, delta;  /* (eps, delta)-DP, replace-one; delta as dpc_linreg_opts.delta */
    double x_bound;         /* rows clipped to ||x|| <= x_bound (public) */
    double y_bound;         /* targets clipped to [-y_bound, y_bound] (public) */
    uint32_t stream;
    int allow_large_delta;  /* as dpc_linreg_opts.allow_large_delta */
} dpc_linreg_ssp_opts;
/* Its field table (dpcorr/field.h; the zeroed struct is the default: bounds 0 are left to
 * dpc_linreg_ssp_bounds, which dpc_linreg_ssp does not call). */
DPC_API const dpc_field_table *dpc_linreg_ssp_opts_fields(void);

typedef struct dpc_linreg_ssp_info {
    double rho;             /* total zCDP, half on each statistic */
    double sigma_xx;        /* noise std on each upper-triangle entry of X^T X */
    double sigma_xy;        /* noise std on each entry of X^T y */
    double ridge;           /* lambda added to the diagonal to make the noisy X^T X positive
                               definite (post-processing; 0 if none was needed) */
    double epsilon, delta;
} dpc_linreg_ssp_info;

/* Sufficient statistics perturbation (Smith et al. 2017; Sheffet 2019; Wang 2018): releases
 * X^T X + E (E symmetric, upper triangle i.i.d. N(0, sigma_xx^2)) and X^T y + N(0, sigma_xy^2 I)
 * of the clipped data, each with half the zCDP budget (replace-one sensitivities sqrt(2) R^2 and
 * 2 R Y), then solves (A + lambda I) w = c by Cholesky with lambda = 0, or, if the noisy A is not
 * positive definite, lambda = sigma_xx sqrt(d) doubled until it is (post-processing). w: (d). */
/* The note's default clipping bounds of SSP for bounds left 0 in o, from the public prior and
 * the data set's size N: x_bound = R_x (ln N)^a, y_bound = K2 sqrt(w_bound^2 + sigma_bound^2)
 * (ln N)^a. */
DPC_API void dpc_linreg_ssp_bounds(dpc_linreg_ssp_opts *o, const dpc_linreg_prior *p, size_t n);
DPC_API DPC_NODISCARD dpc_status dpc_linreg_ssp(const dpc_dataset *ds, const dpc_linreg_ssp_opts *o,
                                                const dpc_rng *rng, double *w,
                                                dpc_linreg_ssp_info *info, dpc_error *err);

/* Exact excess population risk 1/2 (w - w*)^T H (w - w*) for diagonal H = diag(h) (note O1:
 * equals L(w) - L(w*) when the noise is independent of x). */
DPC_API double dpc_linreg_excess_risk(const double *w, const double *w_star, const double *h,
                                      size_t d);
/* Empirical loss 1/2 mean (y - <x, w>)^2 over the data set. */
DPC_API DPC_NODISCARD dpc_status dpc_linreg_loss(const dpc_dataset *ds, const double *w,
                                                 double *loss, dpc_error *err);

/* The excess population risk of w on a data set whose generator is known (truth and cov_diag:
 * dpc_linreg_excess_risk against them), NAN for any other set (no w* to compare with). */
DPC_API double dpc_linreg_data_risk(const dpc_dataset *ds, const double *w);
/* The metrics a front end reports for a release w: *risk = dpc_linreg_data_risk(train, w), the
 * empirical losses on train and test (dpc_linreg_loss); NAN for a NULL or empty set (no test
 * set: a loss of NAN, never an error). Outputs may be NULL. */
DPC_API void dpc_linreg_evaluate(const dpc_dataset *train, const dpc_dataset *test,
                                 const double *w, double *risk, double *train_loss,
                                 double *test_loss);

/* ==== The baselines of a run ================================================================
 *
 * The comparisons a front end offers beside a DP-AMBSSGD or DP-SSGD run (`train --baselines`),
 * each a separate release on the same data at the run's (epsilon, delta): what each one runs is
 * decided here from the run's options and resolved plan. */
typedef enum dpc_linreg_baseline_kind {
    DPC_LINREG_BASELINE_FIXED = 0, /* DP mini-batch SGD with a fixed clip (Cor. 3.3's unless
                                      opts->clip), the run's T (DP-SSGD's: its own), no stat
                                      records, its own default step */
    DPC_LINREG_BASELINE_SGD = 1,   /* non-private SGD on the same layout */
    DPC_LINREG_BASELINE_SSP = 2,   /* sufficient statistics perturbation at the run's epsilon
                                      (the plan's when opts->epsilon is 0: a noise multiplier
                                      given) and delta; clipping bounds from the plan's prior
                                      (dpc_linreg_ssp_bounds) unless given */
    DPC_LINREG_BASELINE_OLS = 3    /* ordinary least squares (not private) */
} dpc_linreg_baseline_kind;
#define DPC_LINREG_NBASELINES 4

typedef struct dpc_linreg_baseline_info {
    double epsilon;              /* of the baseline's release (its ledger's; OLS: INFINITY) */
    size_t steps, batch;         /* FIXED, SGD: T and b */
    double x_bound, y_bound;     /* SSP: the clipping bounds used */
    double ridge;                /* SSP: the ridge added (NAN when SSP failed) */
} dpc_linreg_baseline_info;

/* "dp-sgd-fixed", "sgd", "ssp", "ols" ("unknown" otherwise). */
DPC_API const char *dpc_linreg_baseline_name(dpc_linreg_baseline_kind k);
/* A list of baselines to run: "fixed", "sgd", "ssp", "ols" separated by commas, or "all" or
 * "none"; *mask receives bit k for dpc_linreg_baseline_kind k. DPC_E_INVALID naming
 * "baselines" for another word. */
DPC_API DPC_NODISCARD dpc_status dpc_linreg_baselines_parse(const char *list, unsigned *mask,
                                                           dpc_error *err);
/* Runs baseline k for a run of opts (resolved into plan) on train: w (d) the released model,
 * *info (may be NULL) what it ran. ssp_x_bound, ssp_y_bound: SSP's clipping bounds (0: from the
 * prior). Errors are the baseline's own (SSP's naming "x_bound" or "y_bound"). */
DPC_API DPC_NODISCARD dpc_status dpc_linreg_baseline(const dpc_dataset *train,
                                                     const dpc_linreg_opts *opts,
                                                     const dpc_linreg_plan *plan,
                                                     dpc_linreg_baseline_kind k,
                                                     double ssp_x_bound, double ssp_y_bound,
                                                     const dpc_rng *rng, double *w,
                                                     dpc_linreg_baseline_info *info,
                                                     dpc_error *err);

/* ==== The reproduction (`dpcorr repro ambssgd`) ============================================= *
 *
 * The scaling study of DP-AMBSSGD (note papers/001 §5) on synthetic Gaussian data
 * (dpc_data_synth_linreg: H = I, ||w*|| = 1), delta = 1e-5 (the paper's, allowed where >= 1/N),
 * Thm. 3.7's alpha, the margin DP-STAT rule, the library's default K and c1. The paper has no
 * experiments: what is compared is its theory (slopes) and the note's calibration runs. It is the
 * paper module's own knowledge (grids, seeds, the arms, the statistics and the checks), so that
 * every front end (the CLI's `repro ambssgd`, a binding) reproduces the same numbers; the front
 * end only writes CSV, JSON, text and plots. The jobs (one per seed of a sweep point) run on
 * params->threads threads, each from dpc_rng_seed(params->seed) with stream = the seed index s
 * (data and noise), bit-identical for any thread count:
 *   sigma sweep (N0, d0, eps = 1): adaptive (DP-AMBSSGD), fixed clip (DP mini-batch SGD at the
 *     same (eps, delta), zCDP), non-private SGD (same layout), SSP, DP-AMBSSGD with the printed
 *     DP-STAT rule; at sigma = 1 also the epsilon sweep, the exact alpha* (Thm. 3.6) and DP-SSGD
 *     (the shuffling theorem, on the first ssgd_seeds seeds);
 *   N sweep (sigma = 1, d0): prefixes of one set of the largest N (the generator is prefix-stable);
 *   d sweep (sigma = 1, N = d_n).
 * The DP excess risk is a run's risk minus the non-private run's on the same data and
 * permutation; slopes are log-log least squares over the points. Checks: the sigma slope of the
 * adaptive DP excess is 2 +- 0.3, the fixed clip's is flat (|slope| <= 0.3), fixed / adaptive
 * >= 100 at the smallest sigma, the epsilon slope is in [-2.2, -1.4]. */

/* The paper's delta (its experiments): kept even where it is >= 1/N (allow_large_delta); the
 * library's default is from N. */
#define DPC_LINREG_REPRO_DELTA 1e-5

typedef enum dpc_linreg_repro_scale {
    DPC_LINREG_REPRO_FULL = 0,  /* the reported grids (tens of minutes) */
    DPC_LINREG_REPRO_QUICK = 1, /* reduced grids (under a minute) */
    DPC_LINREG_REPRO_SMOKE = 2  /* tiny, for sanitizer runs (numbers not meaningful) */
} dpc_linreg_repro_scale;

typedef struct dpc_linreg_repro_params {
    dpc_linreg_repro_scale scale; /* default FULL */
    uint64_t seed;                /* root seed (default 20240101, the CLI's) */
    size_t threads;               /* worker threads, >= 1 (default 1; results do not depend on it) */
} dpc_linreg_repro_params;
/* Writes the table's defaults (full, 20240101, 1 thread). */
DPC_API void dpc_linreg_repro_params_init(dpc_linreg_repro_params *p);
/* The field table of dpc_linreg_repro_params (dpcorr/field.h): defaults, ranges and docs. */
DPC_API const dpc_field_table *dpc_linreg_repro_params_fields(void);

#define DPC_LINREG_REPRO_MAXS 4    /* sigmas */
#define DPC_LINREG_REPRO_MAXE 4    /* epsilons besides 1 */
#define DPC_LINREG_REPRO_MAXN 5    /* N sweep points */
#define DPC_LINREG_REPRO_MAXD 4    /* d sweep points */
#define DPC_LINREG_REPRO_MAXSEED 8 /* seeds of a point */
#define DPC_LINREG_REPRO_MAXT 160  /* steps of the recorded zeta_t, gamma_t */

typedef struct dpc_linreg_repro_grid {
    size_t n0, d0, seeds;                     /* the sigma sweep */
    double sig[DPC_LINREG_REPRO_MAXS];
    size_t nsig;
    double eps[DPC_LINREG_REPRO_MAXE];        /* the epsilon sweep, besides 1 */
    size_t neps;
    size_t ns[DPC_LINREG_REPRO_MAXN], nn, n_seeds;          /* the N sweep */
    size_t ds[DPC_LINREG_REPRO_MAXD], nd, d_n, d_seeds;     /* the d sweep */
    size_t ssgd_seeds;                        /* DP-SSGD runs (sigma = 1) */
} dpc_linreg_repro_grid;
/* The grid of scale s; DPC_E_INVALID naming "scale" for an unknown one. */
DPC_API DPC_NODISCARD dpc_status dpc_linreg_repro_grid_get(dpc_linreg_repro_scale s,
                                                           dpc_linreg_repro_grid *out,
                                                           dpc_error *err);

/* The arms of the sigma sweep. */
enum { DPC_LINREG_REPRO_ADAPTIVE = 0, DPC_LINREG_REPRO_FIXED = 1, DPC_LINREG_REPRO_NONPRIVATE = 2,
       DPC_LINREG_REPRO_SSP = 3, DPC_LINREG_REPRO_PAPER_RULE = 4, DPC_LINREG_REPRO_NARMS = 5 };

typedef struct dpc_linreg_repro_point { /* a point of the N or d sweep, means over its seeds */
    size_t n, d;
    double adaptive, nonprivate, dp_excess, clip_fraction;
} dpc_linreg_repro_point;

typedef struct dpc_linreg_repro_result {
    dpc_linreg_repro_grid grid;
    size_t jobs, threads;         /* jobs run; threads started */
    double delta, c1;             /* what the study ran with (the library's defaults) */
    size_t dpstat_k;
    dpc_dpstat_rule dpstat_rule;
    /* the sigma sweep (eps = 1), means over the seeds */
    double sigma[DPC_LINREG_REPRO_MAXS];
    double risk[DPC_LINREG_REPRO_NARMS][DPC_LINREG_REPRO_MAXS]; /* [arm][sigma] */
    double dp_excess_adaptive[DPC_LINREG_REPRO_MAXS], dp_excess_fixed[DPC_LINREG_REPRO_MAXS];
    double clip_fraction[DPC_LINREG_REPRO_MAXS]; /* adaptive: clipped / (T b) */
    double o5_oracle[DPC_LINREG_REPRO_MAXS];     /* note O5: stationary variance (adaptive) */
    double note[3][DPC_LINREG_REPRO_MAXS];       /* the note's §5.1 runs: adaptive, fixed clip
                                                    (same alpha), non-private; NAN where absent */
    double slope_sigma_adaptive, slope_sigma_fixed;
    double ratio_fixed_over_adaptive; /* at the smallest sigma, sigma[nsig - 1] */
    /* the epsilon sweep (sigma = 1, eps = 1 from the sigma sweep inserted in order) */
    double eps[DPC_LINREG_REPRO_MAXE + 1], eps_risk[DPC_LINREG_REPRO_MAXE + 1],
        eps_dp_excess[DPC_LINREG_REPRO_MAXE + 1];
    size_t neps;
    double eps_nonprivate;        /* the non-private risk at sigma = 1 */
    double eps1_risk;             /* DP-AMBSSGD's at eps = 1, sigma = 1 (Thm. 3.7 alpha) */
    double slope_eps, exact_alpha_risk, dpssgd_risk; /* dpssgd_risk NAN without DP-SSGD runs */
    /* the N and d sweeps */
    dpc_linreg_repro_point nsweep[DPC_LINREG_REPRO_MAXN], dsweep[DPC_LINREG_REPRO_MAXD];
    double slope_n, slope_d;
    /* zeta_t and gamma_t of seed 0's adaptive run at each sigma (T0 steps, at most MAXT) */
    double zeta[DPC_LINREG_REPRO_MAXS][DPC_LINREG_REPRO_MAXT];
    double gamma[DPC_LINREG_REPRO_MAXS][DPC_LINREG_REPRO_MAXT];
    size_t T0;
    /* the checks */
    int ok_sigma_slope, ok_fixed_flat, ok_ratio, ok_eps_slope;
} dpc_linreg_repro_result;

/* The number of jobs dpc_linreg_repro_run makes for these parameters. */
DPC_API DPC_NODISCARD dpc_status dpc_linreg_repro_count(const dpc_linreg_repro_params *p,
                                                        size_t *jobs, dpc_error *err);
/* Runs the study and computes its statistics and checks; *out is freed by
 * dpc_linreg_repro_result_free. A failed run fails the whole with its error. */
DPC_API DPC_NODISCARD dpc_status dpc_linreg_repro_run(const dpc_linreg_repro_params *p,
                                                      dpc_linreg_repro_result **out,
                                                      dpc_error *err);
DPC_API void dpc_linreg_repro_result_free(dpc_linreg_repro_result *r); /* NULL is a no-op */
/* What the reproduction reproduces and what it cannot (and why): static strings, *n each. */
DPC_API const char *const *dpc_linreg_repro_reproduced(size_t *n);
DPC_API const char *const *dpc_linreg_repro_not_reproduced(size_t *n);

#ifdef __cplusplus
}
#endif
#endif /* DPCORR_LINREG_H */
