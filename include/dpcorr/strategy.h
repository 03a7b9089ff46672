/* dpcorr/strategy.h — strategy optimization: BLT, banded Toeplitz and dense ("ME") strategies
 * optimized for a workload, a horizon n and a participation pattern (k, b); strategy files.
 *
 * Vocabulary as in dpcorr/mech.h (workload A, strategy C, noising B = C^-1, n, k, b).
 * The loss of a strategy is  sensitivity^2 x error^2  (scale-free in C):
 *   objective MAX   error = max row norm of A B   (for Toeplitz strategies: the last row)
 *   objective MEAN  error = RMSE = ||A B||_F / sqrt(n)
 * Sensitivity is the min-separation sensitivity for at most k participations at least b apart
 * (dpc_participation DPC_PART_MINSEP); every optimizer keeps the strategy in a region where its
 * value is exact (see below), so the reported loss is the true loss, not a bound.
 *
 * Optimizers (all double precision, L-BFGS from liblbfgs; parameters mapped to an unconstrained
 * space so that every iterate is feasible):
 *   BLT      (Dvijotham et al. 2024, "Efficient and near-optimal noise generation for streaming
 *            differential privacy"; McMahan et al. 2024 multi-participation BLT):
 *            C has c_0 = 1, c_j = sum_i omega_i theta_i^(j-1). Constraints: theta_i in (0, 1),
 *            omega_i > 0, sum_i omega_i < 1. Then c is positive and non-increasing (the min-sep
 *            sensitivity is exact: Kalinin & Lampert 2024, Thm 2) and C^-1 is a BLT with real
 *            buffer decays in (-1, 1) interlacing the theta_i (the "BLT inversion theorem",
 *            arXiv 2504.21413): both C and C^-1 are stable. Sensitivity in closed form
 *            (O(nbuf^2), multi-participation O(k nbuf^2)); the error by a state-space Gramian
 *            computed by doubling (O(nbuf^3 log n)) with an exact reverse-mode gradient. The
 *            number of buffers grows from 1 until one more buffer improves the loss by less
 *            than min_improvement (default 1%).
 *   BANDED   Toeplitz C with `bands` coefficients, c_0 = 1. Single participation: c_1.. free;
 *            k > 1: c positive non-increasing (ratios in (0,1)) so the min-sep sensitivity is
 *            exact. Exact adjoint gradient in O(n bands). Started from BSR (same bands).
 *   DENSE    optimal factorization over X = C^T C (Denisov et al. 2022; Choquette-Choo et al.
 *            2023 multi-epoch), n <= 2048: diag(X) = 1 and, for k > 1, X banded with bandwidth
 *            `bands` <= b (default b: the jax_privacy min-sep formulation), so sens^2 = k_eff
 *            exactly whatever the signs; C lower-triangular with C^T C = X (reversed Cholesky,
 *            LAPACK). MEAN is tr(A^T A X^-1); MAX is minimised through the smooth p-norm of the
 *            row errors (p = 64, an upper bound of the max within n^(1/64)); the reported loss
 *            is always the exact max.
 *
 * Strategy files (JSON, written with %.17g so that every double round-trips exactly):
 *   {"format": "dpcorr-strategy", "version": 1, "kind": "blt"|"toeplitz"|"dense",
 *    "method": "...", "steps": n, "participations": k, "min_sep": b,
 *    "objective": "max"|"mean", "workload": {"momentum": m, "decay": a},
 *    "loss": L, "sensitivity": s, "error": e,
 *    blt:      "theta": [...], "omega": [...]
 *    toeplitz: "of": "strategy"|"noising", "coeffs": [...]
 *    dense:    "of": "strategy"|"noising", "matrix": [[row 0], [row 1 (2 values)], ...]}
 *   The reader is strict (unknown or duplicate keys, wrong types, trailing data are errors) and
 *   names file:line and the field at fault.
 *
 * Ownership: a dpc_strategy owns its arrays; dpc_strategy_free releases it (NULL allowed). The
 * library keeps no state between calls; optimizers are deterministic for a given input. */
#ifndef DPCORR_STRATEGY_H
#define DPCORR_STRATEGY_H

#include "dpcorr/common.h"
#include "dpcorr/mech.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dpc_objective {
    DPC_OBJECTIVE_MAX = 0, /* max row norm of A B */
    DPC_OBJECTIVE_MEAN = 1 /* RMSE of A B */
} dpc_objective;

/* What a strategy is optimized for. */
typedef struct dpc_strategy_problem {
    size_t steps;          /* n >= 1 */
    size_t participations; /* k >= 1 */
    size_t min_sep;        /* b >= 1 (ignored when k = 1) */
    dpc_workload workload; /* prefix sums, or SGD with momentum / weight decay */
    dpc_objective objective;
} dpc_strategy_problem;

/* Prefix workload, k = 1, b = 1, objective MAX. */
DPC_API void dpc_strategy_problem_init(dpc_strategy_problem *pb, size_t steps);
DPC_API DPC_NODISCARD dpc_status dpc_strategy_problem_check(const dpc_strategy_problem *pb,
                                                            dpc_error *err);
DPC_API const char *dpc_objective_name(dpc_objective o); /* "max", "mean" */
/* The field table of dpc_strategy_problem (dpcorr/field.h): name, type, offset, default, range
 * and one-line doc of every field (workload nested: "workload.momentum"); dpc_strategy_problem_init
 * writes its defaults and dpc_strategy_problem_check range-checks through it. */
DPC_API const dpc_field_table *dpc_strategy_problem_fields(void);

typedef struct dpc_strategy_loss {
    double loss;        /* sensitivity^2 * error^2 */
    double sensitivity; /* per unit clip norm */
    double error;       /* max error or RMSE (per the objective), per unit noise std */
    int exact;          /* 1 if the sensitivity is exact (else an upper bound) */
} dpc_strategy_loss;

/* Loss of any mechanism for the problem, computed through the mechanism API
 * (dpc_mech_sensitivity with min-sep participation, dpc_mech_error_of): the independent check of
 * every optimizer's own closed forms. The mechanism's steps must equal pb->steps. */
DPC_API DPC_NODISCARD dpc_status dpc_strategy_loss_of(const dpc_mech *m,
                                                      const dpc_strategy_problem *pb,
                                                      dpc_strategy_loss *out, dpc_error *err);

/* BLT loss in closed form (the optimizer's objective): theta, omega (nbuf) of C. Requires
 * theta in (0,1); the sensitivity is exact when omega >= 0 and sum omega <= 1 (else out->exact
 * = 0 for k > 1 and the value is that of the pattern 0, b, 2b, ...). O(nbuf^3 log n + k nbuf^2). */
DPC_API DPC_NODISCARD dpc_status dpc_strategy_blt_loss(const double *theta, const double *omega,
                                                       size_t nbuf,
                                                       const dpc_strategy_problem *pb,
                                                       dpc_strategy_loss *out, dpc_error *err);

/* Optimizer options. Zero-initialise (dpc_strategy_options_init) and set what you need. */
typedef struct dpc_strategy_options {
    size_t max_iterations;  /* L-BFGS iterations per run; 0 = default (blt 500, banded 1000,
                               dense 300) */
    size_t buffers;         /* BLT: fixed number of buffers (0 = automatic growth) */
    size_t max_buffers;     /* BLT automatic: at most this many (0 = 10; at most 32) */
    double min_improvement; /* BLT automatic: stop when a buffer improves the loss by less
                               than this fraction (0 = 0.01; else in (0, 1), refused
                               otherwise: "min_improvement") */
    size_t bands;           /* BANDED: number of bands (required, >= 1);
                               DENSE: bandwidth of X for k > 1 (0 = min-sep b; must be <= b) */
    dpc_progress progress;  /* called after every L-BFGS iteration (done, total: iterations, the
                               total an upper estimate); a non-zero return stops the optimizer
                               with DPC_E_CANCELLED. Default none. */
} dpc_strategy_options;

/* All zero: every option at the default its field names. */
DPC_API void dpc_strategy_options_init(dpc_strategy_options *o);
/* The field table of dpc_strategy_options (dpcorr/field.h): every option's name, type, offset,
 * range and one-line doc (all defaults 0: the optimizer's own); dpc_strategy_options_init writes
 * its defaults and each optimizer range-checks the options it uses through it. */
DPC_API const dpc_field_table *dpc_strategy_options_fields(void);

/* An optimized (or loaded) strategy. Plain data; arrays owned. */
typedef struct dpc_strategy {
    dpc_mech_kind kind;           /* DPC_MECH_BLT, DPC_MECH_TOEPLITZ or DPC_MECH_DENSE */
    char method[24];              /* "blt", "banded", "dense", or as read from a file */
    dpc_strategy_problem problem; /* what it was optimized for; problem.steps = n */
    size_t nbuf;                  /* BLT */
    double *theta, *omega;        /* BLT: (nbuf) of C */
    size_t ncoeffs;               /* TOEPLITZ */
    double *coeffs;               /* TOEPLITZ: (ncoeffs) first column */
    double *dense;                /* DENSE: (n, n) row-major lower-triangular */
    int of_strategy;              /* TOEPLITZ/DENSE: 1 = values are C, 0 = B = C^-1 */
    dpc_strategy_loss achieved;   /* the loss reported by the optimizer (or the file) */
    size_t iterations;            /* L-BFGS iterations spent (0 when loaded) */
} dpc_strategy;

/* NULL is a no-op. */
DPC_API void dpc_strategy_free(dpc_strategy *s);

/* Mechanism parameters for the strategy (arrays borrowed from s; steps = s->problem.steps). */
DPC_API void dpc_strategy_mech_params(const dpc_strategy *s, dpc_mech_params *p);
/* The same for a run of `steps` steps (0: the strategy's own n): p->steps = steps. BLT and
 * Toeplitz strategies apply at any n; a dense one only at its own n (its matrix is n x n):
 * DPC_E_INVALID naming "steps" otherwise, the message naming the strategy by `source` (a file
 * path; NULL: none). */
DPC_API DPC_NODISCARD dpc_status dpc_strategy_mech_params_at(const dpc_strategy *s, size_t steps,
                                                             const char *source,
                                                             dpc_mech_params *p, dpc_error *err);

/* The default BLT of a BLT mechanism given without buffers (theta and omega both NULL) and of at
 * least 2 steps: *out = dpc_strategy_default_blt(p->steps, part->k, part->b, prefix workload)
 * and p takes its theta, omega and nbuf (borrowed from *out; p->steps kept). Otherwise (another
 * kind, a list given, fewer than 2 steps: the lists are the caller's to give) p is unchanged
 * and *out NULL. The caller frees *out (dpc_strategy_free). Errors of the optimization name
 * its fields. */
DPC_API DPC_NODISCARD dpc_status dpc_mech_params_default_blt(dpc_mech_params *p,
                                                             const dpc_participation *part,
                                                             dpc_strategy **out, dpc_error *err);

/* The BLT strategy C (theta, omega) of least loss for pb (buffers per opt: fixed, or grown one
 * at a time while a buffer improves the loss by min_improvement). *out is the caller's
 * (dpc_strategy_free). */
DPC_API DPC_NODISCARD dpc_status dpc_strategy_optimize_blt(dpc_strategy **out,
                                                           const dpc_strategy_problem *pb,
                                                           const dpc_strategy_options *opt,
                                                           dpc_error *err);
/* The default BLT of a run: the strategy a BLT mechanism gets when it comes without theta and
 * omega (dpc_trainer_new, dpc_train_plan_new, dpc_audit_run and `dpcorr account --mech blt`).
 * dpc_strategy_optimize_blt with objective MAX and the default options (automatic buffer
 * growth) for n = steps, k = participations at least min_sep apart, and the workload (prefix
 * sums, or the optimizer's momentum and decay). Deterministic: every front end asking for the
 * same run gets the same coefficients. *out is owned by the caller (dpc_strategy_free). */
DPC_API DPC_NODISCARD dpc_status dpc_strategy_default_blt(dpc_strategy **out, size_t steps,
                                                          size_t participations, size_t min_sep,
                                                          dpc_workload workload,
                                                          dpc_error *err);
/* Work: each L-BFGS iteration costs about 4 n bands; one evaluation above a quarter of
 * DPC_WORK_LIMIT is refused (DPC_E_RANGE, "bands"). All three optimizers report progress per
 * iteration (options.progress). */
DPC_API DPC_NODISCARD dpc_status dpc_strategy_optimize_banded(dpc_strategy **out,
                                                              const dpc_strategy_problem *pb,
                                                              const dpc_strategy_options *opt,
                                                              dpc_error *err);
DPC_API DPC_NODISCARD dpc_status dpc_strategy_optimize_dense(dpc_strategy **out,
                                                             const dpc_strategy_problem *pb,
                                                             const dpc_strategy_options *opt,
                                                             dpc_error *err);

/* ---- Closed-form strategies for comparison ------------------------------------------------ */

typedef struct dpc_strategy_baseline {
    char name[64];          /* e.g. "nu-DP-FTRL (best nu=0.0012)", "BSR (bands=32)" */
    dpc_strategy_loss loss; /* through dpc_strategy_loss_of */
    int available;          /* 0 if the mechanism could not be evaluated (e.g. overflow) */
} dpc_strategy_baseline;

/* The nu grid used by dpc_strategy_best_nu: 0 and 48 log-spaced values in [1e-7, 0.5]. */
#define DPC_STRATEGY_NU_GRID 49

/* Best nu-DP-FTRL over the grid (nu = 0 included). Work: 49 n (40 + 2 k_eff) (DPC_WORK_LIMIT,
 * else DPC_E_RANGE naming "steps"). */
DPC_API DPC_NODISCARD dpc_status dpc_strategy_best_nu(const dpc_strategy_problem *pb,
                                                      double *best_nu,
                                                      dpc_strategy_loss *best,
                                                      dpc_error *err);

/* Fills up to `cap` entries: DP-SGD, optimal CC (nu = 0), best nu-DP-FTRL, BSR and BISR with
 * `bands` bands (bands = 0: dpc_mech_default_bands(n, k, b): max(b, 16) when k > 1, else 32;
 * at most max(16, 2e8 / n) and n).
 * *count receives the number written. Cost O(n * bands) for BSR/BISR. A baseline beyond the
 * work limit (DPC_WORK_LIMIT: 49 n (40 + 2 k_eff) for nu-DP-FTRL's grid, 40 n for the others,
 * whose O(n) memory it bounds too) is listed with available = 0 and "(skipped: work limit)"
 * after its name. */
DPC_API DPC_NODISCARD dpc_status dpc_strategy_baselines(const dpc_strategy_problem *pb,
                                                        size_t bands,
                                                        dpc_strategy_baseline *out, size_t cap,
                                                        size_t *count, dpc_error *err);

/* A one-line description of s: "BLT, 3 buffers", "banded Toeplitz, 5 bands", "dense ME (n x n
 * lower-triangular C)" (any other kind: its method). Returns snprintf's count. */
DPC_API int dpc_strategy_describe(const dpc_strategy *s, char *buf, size_t len);

/* The report of an optimized strategy as members of w's open object (dpcorr/io.h; `dpcorr mech
 * optimize --json`): "kind" (s->method), "description" (dpc_strategy_describe), "steps",
 * "participations", "min_sep", "objective", "momentum", "decay" (s->problem), "loss",
 * "sensitivity", "error", "exact" (s->achieved), "buffers" (BLT) or "bands" (Toeplitz),
 * "iterations", "seconds" (the caller's wall time of the optimization), "out" (the file it was
 * saved to; NULL: left out) and "baselines": [{"name", "loss", "ratio"}] (the n baselines bl,
 * ratio = their loss / s's; null when not available). */
struct dpc_json_writer;
DPC_API void dpc_strategy_report_json(struct dpc_json_writer *w, const dpc_strategy *s,
                                      double seconds, const char *out,
                                      const dpc_strategy_baseline *bl, size_t n);

/* ---- Every mechanism side by side (`dpcorr compare`) ---------------------------------------- */

/* dpc_mech_compare evaluates, at n steps and one participation pattern, the rows below in this
 * order; each row is a mechanism built with dpc_mech_new and measured by dpc_mech_sensitivity
 * (under the pattern) and dpc_mech_error_of (prefix sums):
 *   identity (DP-SGD); nu = 0 (optimal CC); nu-DP-FTRL at dpc_strategy_best_nu for the pattern
 *   (objective MEAN); damped anti-PGD and lambda-CGD at the best of their grids
 *   (dpc_mech_compare_grid); BSR and BISR at dpc_mech_default_bands(n, k, b); the default BLT
 *   (dpc_strategy_default_blt, prefix workload; n >= 2); the binary tree; the Honaker tree.
 * "Best of a grid" is the least scaled RMSE (sensitivity x RMSE, the error at equal privacy),
 * the first grid value on ties; a grid value that fails to evaluate is skipped. */
#define DPC_MECH_COMPARE_EVALS 22 /* evaluations per call: 1+1+1+6+8+2+1+2 (progress total) */

typedef struct dpc_mech_compare_params {
    size_t steps;           /* n in [1, 1e6] (the table's default 2000) */
    dpc_participation part; /* the pattern of the sensitivities and of the searches */
    dpc_progress progress;  /* called after each evaluation (done, DPC_MECH_COMPARE_EVALS) */
} dpc_mech_compare_params;

/* steps = n, part single participation (dpc_participation_init), no progress: the table's
 * defaults with steps = n (dpc_field_defaults on the table: steps 2000). */
DPC_API void dpc_mech_compare_params_init(dpc_mech_compare_params *p, size_t steps);
/* The field table of dpc_mech_compare_params (dpcorr/field.h; part nested as "part.k"):
 * dpc_mech_compare range-checks p through it (steps at most 1e6 bounds the whole comparison). */
DPC_API const dpc_field_table *dpc_mech_compare_params_fields(void);

#define DPC_MECH_COMPARE_K 4 /* participations of a comparison under multiple participation */

/* The pattern a comparison under multiple participation uses (`dpcorr compare`'s second table)
 * for a run of `steps` steps: min-sep; part->k participations, 0: DPC_MECH_COMPARE_K; at
 * min-separation part->b, 0: steps / k (at least 1), the farthest apart k participations fit in
 * n steps. Values given are kept (dpc_mech_compare checks them). NULL is a no-op. */
DPC_API void dpc_mech_compare_multi_part(size_t steps, dpc_participation *part);

typedef struct dpc_mech_compare_row {
    char name[64];       /* e.g. "nu-DP-FTRL (nu=0.36)", "BSR (bands=32)", "BLT (3 buffers)" */
    dpc_mech_kind kind;  /* the mechanism of the row */
    int honaker;         /* TREE: the Honaker estimator */
    double value;        /* its chosen parameter: nu (NU, ANTIPGD damping), lambda (LCGD),
                          * bands (BSR, BISR), buffers (BLT); 0 for identity and trees */
    double sensitivity;  /* dpc_mech_sensitivity under part */
    int exact;           /* the sensitivity is exact (else an upper bound) */
    double rmse;         /* dpc_mech_error_of, per unit noise */
    double max_error;
    size_t state_floats; /* dpc_mech_state_floats(DPC_NOISE_BUFFER) */
    int replay;          /* the replay form is available (its state: 0 floats) */
    int anytime;         /* dpc_mech_is_anytime */
} dpc_mech_compare_row;

/* The grid of a tuned row: ANTIPGD the dampings {1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3}, LCGD the
 * lambdas {0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99}; *count its length. NULL (and 0) for
 * another kind. Static storage. */
DPC_API const double *dpc_mech_compare_grid(dpc_mech_kind kind, size_t *count);

/* Evaluates the rows above for p. *rows (the caller's: dpc_mech_compare_free) receives those
 * that evaluated, in order, *count their number. A row that cannot be evaluated (the library's
 * work limit, the BLT below 2 steps, ...) is left out: *failed (may be NULL) counts the
 * evaluations that failed, grid values included, and *first_failure (may be NULL) the first's
 * error. Errors: p, rows or count NULL, steps 0 (DPC_E_INVALID naming "p", "rows", "count",
 * "steps"); no row evaluated: the first failure's error; the progress asking to stop:
 * DPC_E_CANCELLED. Work: that of its rows, each bounded by DPC_WORK_LIMIT. */
DPC_API DPC_NODISCARD dpc_status dpc_mech_compare(const dpc_mech_compare_params *p,
                                                  dpc_mech_compare_row **rows, size_t *count,
                                                  size_t *failed, dpc_error *first_failure,
                                                  dpc_error *err);
/* NULL is a no-op. */
DPC_API void dpc_mech_compare_free(dpc_mech_compare_row *rows);

/* ---- Strategy files ------------------------------------------------------------------------ */

/* Writes s to path in the file format above (DPC_E_IO naming the path). */
DPC_API DPC_NODISCARD dpc_status dpc_strategy_save(const dpc_strategy *s, const char *path,
                                                   dpc_error *err);
/* Reads a strategy file, strictly (DPC_E_FORMAT naming file:line and the field at fault);
 * *out is the caller's (dpc_strategy_free). */
DPC_API DPC_NODISCARD dpc_status dpc_strategy_load(dpc_strategy **out, const char *path,
                                                   dpc_error *err);

#ifdef __cplusplus
}
#endif
#endif /* DPCORR_STRATEGY_H */
