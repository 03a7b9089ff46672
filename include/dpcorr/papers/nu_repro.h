/* dpcorr/papers/nu_repro.h — the reproduction of the nu-DP-FTRL paper's figures and tables
 * (dpcorr/papers/theory.h names the paper): the grids, constants, horizons, seeds and salts,
 * the sweeps, simulations and slopes, the checks the paper's claims are held to, and the list
 * of what is and is not reproduced. `dpcorr repro nu-*` calls these functions and only writes
 * their results (CSV, JSON, text, plots); any other front end (the Python binding) gets the
 * same numbers from the same calls.
 *
 * Every target is one function dpc_nu_<target>_run(params, ..., &result, err): params holds
 * the scale (the library's grids: FULL, QUICK for seconds, SMOKE for sanitizer runs, whose
 * numbers are not meaningful) and the root seed (the exact tables take neither); the result is
 * one allocation of plain arrays and numbers, *result = NULL on failure, which the caller frees
 * with dpc_nu_<target>_free (NULL accepted). Errors: a dpc_status with dpc_error naming the
 * parameter ("scale", "model", ...) or the failing computation's own. Randomness: only the
 * counter-based RNG, each simulation seeded with the root seed + a salt fixed here (recorded in
 * the result).
 * The library never prints; a target that runs for minutes reports its stages through an
 * event callback (the front end prints or writes rows as they come).
 */
#ifndef DPCORR_NU_REPRO_H
#define DPCORR_NU_REPRO_H

#include "dpcorr/common.h"
#include "dpcorr/data.h"
#include "dpcorr/field.h"
#include "dpcorr/isa.h"
#include "dpcorr/model.h"
#include "dpcorr/papers/sim.h"
#include "dpcorr/papers/theory.h"
#include "dpcorr/sampler.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dpc_nu_repro_scale {
    DPC_NU_REPRO_FULL = 0,  /* the grids and horizons of the reproduction (minutes to hours) */
    DPC_NU_REPRO_QUICK = 1, /* reduced grids and horizons (seconds; fig4 about 1.5 min) */
    DPC_NU_REPRO_SMOKE = 2  /* tiny grids for sanitizer runs (numbers not meaningful) */
} dpc_nu_repro_scale;

/* "full", "quick", "smoke" ("?" outside the enum). */
DPC_API const char *dpc_nu_repro_scale_name(dpc_nu_repro_scale s);

/* What every target states: the paper's items it reproduces and those it cannot, and why
 * (static strings). */
typedef struct dpc_nu_repro_claims {
    const char *const *reproduces;
    size_t n_reproduces;
    const char *const *not_reproduced;
    size_t n_not_reproduced;
} dpc_nu_repro_claims;

/* ---- Figure 4: every mechanism on Fashion-MNIST (the offline stand-in for CIFAR-10) ----------
 * Softmax regression on pixels / 255, fixed-order epochs (the paper's multi-epoch setting: an
 * example takes part every b = N/B steps, k = epochs times), so every correlated mechanism's
 * sensitivity is the exact cyclic multi-participation sensitivity of its strategy. DP-SGD
 * appears under the same fixed-order sampling (like for like), with Poisson sampling and
 * amplification (the paper's stronger baseline) and with balls-in-bins; nu-DP-FTRL also with
 * Poisson (MMCC) and balls-in-bins amplification. nu and the anti-PGD damping are chosen by the
 * data-independent rule of the note (section 3.4): minimise sensitivity^2 x prefix-sum RMSE^2
 * for (n, k, b); BLT, banded Toeplitz (min(b, 32) bands) and dense ME are optimized for the same
 * (n, k, b). SGD with momentum 0.9 and a cool-down, clip 1, delta 1e-5, the PLD accountant. The
 * learning rate is chosen per mechanism and epsilon (as the paper's Appendix G.1) on a holdout
 * of the training set, never the test set: the tuning runs train on N - H images with the batch
 * scaled so that (n, k, b), hence every strategy and sensitivity, are those of the final runs;
 * ties keep the smaller rate. The noise multiplier is calibrated once per (mechanism, epsilon)
 * and reused for every seed and rate. */
#define DPC_NU_FIG4_MECHS 12
#define DPC_NU_FIG4_MAX_EPS 4
#define DPC_NU_FIG4_MAX_SEEDS 3
#define DPC_NU_FIG4_MAX_LRS 5

typedef struct dpc_nu_fig4_config {
    const char *data;        /* dpc_data_load_spec spec of the data (static) */
    size_t batch, epochs, nseeds, neps, threads;
    double eps[DPC_NU_FIG4_MAX_EPS];
    size_t nlr, holdout;     /* learning-rate grid size; images held out for tuning (nlr > 1) */
    double lrs[DPC_NU_FIG4_MAX_LRS]; /* the paper's {1, 2, 5} x 10^p grid, the decades that
                                        matter for SGD with momentum 0.9 here */
} dpc_nu_fig4_config;

/* The study's grid at a scale (FULL: 4 epsilons, 3 seeds, 5 rates on a 10,000-image holdout). */
DPC_API dpc_nu_fig4_config dpc_nu_fig4_config_of(dpc_nu_repro_scale scale);

typedef struct dpc_nu_fig4_mech {
    char name[64];           /* "nu-DP-FTRL (nu=0.0123)", ... */
    dpc_sampler_kind sampler;
    double sigma[DPC_NU_FIG4_MAX_EPS];      /* noise multiplier per epsilon, final runs */
    double sigma_tune[DPC_NU_FIG4_MAX_EPS]; /* ... tuning runs (Poisson: another q) */
    double lr[DPC_NU_FIG4_MAX_EPS];         /* the chosen learning rate */
    double tune_acc[DPC_NU_FIG4_MAX_EPS][DPC_NU_FIG4_MAX_LRS]; /* holdout accuracy */
    double acc[DPC_NU_FIG4_MAX_EPS][DPC_NU_FIG4_MAX_SEEDS];    /* test accuracy (NAN: failed) */
    double eps_accounted[DPC_NU_FIG4_MAX_EPS][DPC_NU_FIG4_MAX_SEEDS];
    double mean[DPC_NU_FIG4_MAX_EPS], sd[DPC_NU_FIG4_MAX_EPS]; /* over seeds (sd: n - 1) */
} dpc_nu_fig4_mech;

/* Indices into dpc_nu_fig4_result.mech. */
enum {
    DPC_NU_FIG4_SGD_FIXED = 0, DPC_NU_FIG4_SGD_POISSON = 1, DPC_NU_FIG4_NU = 2,
    DPC_NU_FIG4_OPTIMAL_CC = 3, DPC_NU_FIG4_TREE = 4, DPC_NU_FIG4_ANTIPGD = 5,
    DPC_NU_FIG4_BLT = 6, DPC_NU_FIG4_BANDED = 7, DPC_NU_FIG4_DENSE = 8,
    DPC_NU_FIG4_NU_POISSON = 9, DPC_NU_FIG4_NU_BIB = 10, DPC_NU_FIG4_SGD_BIB = 11
};

typedef struct dpc_nu_fig4_result {
    dpc_nu_fig4_config cfg;
    size_t n_train, n_test;
    size_t spe, n;               /* steps per epoch (= min_sep b), steps n = spe x epochs */
    double nu, damping;          /* the data-independent choices */
    size_t blt_buffers, bands;
    size_t tune_n, tune_batch;   /* the tuning runs' training images and batch */
    double optimize_seconds, tune_seconds, train_seconds;
    dpc_nu_fig4_mech mech[DPC_NU_FIG4_MECHS];
    /* the checks (per epsilon where an array) */
    int nu_ge_sgd_fixed;         /* nu-DP-FTRL >= DP-SGD (same sampling) at every epsilon */
    int nu_within_1pp_of_me;     /* nu-DP-FTRL within 1 point of dense ME at every epsilon */
    int nu_ge_sgd_amplified[DPC_NU_FIG4_MAX_EPS];     /* vs DP-SGD (Poisson, amplified) */
    int nu_bib_ge_sgd_amplified[DPC_NU_FIG4_MAX_EPS]; /* nu balls-in-bins vs the same */
    dpc_nu_repro_claims claims;
} dpc_nu_fig4_result;

typedef enum dpc_nu_fig4_stage {
    DPC_NU_FIG4_EV_STUDY = 0,    /* the problem is set: n_train, n_test, spe, n */
    DPC_NU_FIG4_EV_CHOSEN,       /* nu, damping and the strategies are chosen */
    DPC_NU_FIG4_EV_TUNING,       /* the tuning stage starts: tune_n, tune_batch */
    DPC_NU_FIG4_EV_CALIBRATED,   /* mech's sigma at eps is set (route: the accountant's) */
    DPC_NU_FIG4_EV_FAILED,       /* a run of mech at eps failed (err; stepping: in a step) */
    DPC_NU_FIG4_EV_TUNED,        /* a tuning run: mech, eps, lr, acc */
    DPC_NU_FIG4_EV_TUNING_DONE,  /* every mech's lr is chosen */
    DPC_NU_FIG4_EV_RUN           /* a final run: mech, eps, seed, acc */
} dpc_nu_fig4_stage;

typedef struct dpc_nu_fig4_event {
    dpc_nu_fig4_stage stage;
    const dpc_nu_fig4_result *res; /* the state so far */
    size_t mech, eps, lr, seed;    /* indices */
    double acc;
    double sigma;                  /* CALIBRATED: the noise multiplier */
    const char *route;             /* CALIBRATED: the accountant's route */
    const dpc_error *err;          /* FAILED */
    int stepping;                  /* FAILED: in a training step (else building the trainer) */
} dpc_nu_fig4_event;

/* A non-zero return stops the study (DPC_E_CANCELLED). */
typedef int (*dpc_nu_fig4_event_fn)(void *ctx, const dpc_nu_fig4_event *ev);

typedef struct dpc_nu_fig4_params {
    dpc_nu_repro_scale scale;  /* QUICK */
    uint64_t seed;             /* root seed: the split (stream 7), seed + s for seed s */
    dpc_isa isa;               /* the noise kernels' ISA (dpc_train_config.isa) */
    dpc_nu_fig4_event_fn event;/* NULL: none */
    void *ctx;
} dpc_nu_fig4_params;

DPC_API void dpc_nu_fig4_params_init(dpc_nu_fig4_params *p);
/* The field table of dpc_nu_fig4_params (dpcorr/field.h): defaults (quick, 20240101, the ISA
 * detected), ranges (dpc_nu_fig4_run refuses a scale outside it) and docs. */
DPC_API const dpc_field_table *dpc_nu_fig4_params_fields(void);

/* Runs the study with model (softmax regression for the data of dpc_nu_fig4_config_of's spec,
 * loaded by the caller) on train and test (borrowed); the root rng is the one the data was
 * loaded with. DPC_E_INVALID naming "holdout" when the holdout leaves no tuning batch with the
 * final runs' steps per epoch; a failed tuning run stops the study with its error, a failed
 * final run is recorded as NAN (event FAILED). *out: dpc_nu_fig4_free. */
DPC_API DPC_NODISCARD dpc_status dpc_nu_fig4_run(const dpc_nu_fig4_params *p,
                                                 const dpc_model *model,
                                                 const dpc_dataset *train,
                                                 const dpc_dataset *test, const dpc_rng *rng,
                                                 dpc_nu_fig4_result **out, dpc_error *err);
DPC_API void dpc_nu_fig4_free(dpc_nu_fig4_result *r);

/* ---- Shared ----------------------------------------------------------------------------------- */

/* Least-squares slope of log y against log x over the points with x, y > 0 (NAN with < 2). */
DPC_API double dpc_nu_loglog_slope(const double *x, const double *y, size_t n);

/* One simulation point: the simulated mean and its batch-means standard error beside the exact
 * LTI value V0 for the same beta. */
typedef struct dpc_nu_sim_point {
    double mean, se;    /* E||theta - theta*||_H^2 (or E delta^2) and its s.e. */
    double theory;      /* V0 */
    size_t steps, burn_in, len;
    double tail;        /* proven l1 tail bound of the truncated beta */
    double seconds;
    uint64_t seed;
} dpc_nu_sim_point;

/* Simulates the problem of sp (dpc_nu_setup_make's setup, sp->seed the simulation's seed, a
 * 1 GiB memory budget) with beta b for burn_in + sp->steps steps, and V0 by quadrature. */
DPC_API DPC_NODISCARD dpc_status dpc_nu_simulate(const dpc_nu_setup_params *sp,
                                                 const dpc_theory_beta *b,
                                                 dpc_nu_sim_point *out, dpc_error *err);

/* ---- Figure 2: linear regression, Noisy-SGD vs nu-Noisy-FTRL ---------------------------------
 * E||theta - theta*||_H^2 against d, against d_eff (lambda_k = k^-alpha) and against eta: the
 * exact LTI theory (V0), the fixed-design simulation (must match V0) and the random Gaussian
 * design simulation (must lie between V0 - 3 s.e. and the sandwich bound), with the log-log
 * slopes beside the paper's (1.00, 0.18, 0.94, 2.03, 1.27). G = 1, rho = 1/2, sigma_sgd = 0,
 * nu = eta lambda_min and a burn-in of 10 correlation times (dpc_nu_setup_make); measured steps
 * mult / nu, clamped, rounded up to a multiple of 32. A point shared by two sweeps is computed
 * once; point i (from 1) is seeded root + 1000 + 10 i + m (m: 0 SGD, 1 nu-FTRL), its random
 * design + 5. */
#define DPC_NU_FIG2_MAX_POINTS 16
#define DPC_NU_FIG2_SLOPES 6

typedef struct dpc_nu_fig2_config {
    size_t d0;
    double alpha0, eta0;       /* the base point */
    size_t ds[5], nd;          /* the d sweep */
    double alphas[4];          /* the alpha (d_eff) sweep */
    size_t nalpha;
    double etas[5];            /* the eta sweep */
    size_t neta;
    double mult;               /* measured steps = mult / nu, clamped to max_steps */
    size_t max_steps;
} dpc_nu_fig2_config;

DPC_API dpc_nu_fig2_config dpc_nu_fig2_config_of(dpc_nu_repro_scale scale);

typedef struct dpc_nu_fig2_point {
    const char *sweep;         /* the sweep that computed it: "d", "alpha", "eta" */
    size_t d;
    double alpha, eta, nu, d_eff;
    /* [0] Noisy-SGD, [1] nu-Noisy-FTRL */
    double theory[2], fixed[2], fixed_se[2], random[2], random_se[2];
    uint64_t seed[2];          /* the fixed design's (random design: + 5) */
    double sandwich;           /* nu-FTRL's sandwich upper bound on the random design */
    size_t steps, burn_in[2];
} dpc_nu_fig2_point;

typedef struct dpc_nu_fig2_slope {
    const char *name, *key;    /* "Noisy-SGD vs d", "sgd_vs_d" */
    double paper;              /* the paper's empirical slope (NAN: none) */
    double lti, fixed, random; /* ours */
} dpc_nu_fig2_slope;

typedef struct dpc_nu_fig2_result {
    dpc_nu_fig2_config cfg;
    dpc_nu_fig2_point points[DPC_NU_FIG2_MAX_POINTS];
    size_t npoints;
    size_t nsweep[3];          /* d, alpha, eta */
    size_t sweep[3][5];        /* index into points */
    double x[3][5];            /* d, d_eff, eta */
    dpc_nu_fig2_slope slopes[DPC_NU_FIG2_SLOPES];
    double max_rel_dev;        /* fixed design vs V0, over every point and mechanism */
    int inside, total;         /* nu-FTRL random design in [V0 - 3 s.e., sandwich] */
    dpc_nu_repro_claims claims;
} dpc_nu_fig2_result;

/* Called after each new point (a non-zero return stops: DPC_E_CANCELLED). */
typedef int (*dpc_nu_fig2_point_fn)(void *ctx, const dpc_nu_fig2_point *pt);

typedef struct dpc_nu_repro_params {
    dpc_nu_repro_scale scale; /* QUICK */
    uint64_t seed;            /* root seed (20240101) */
} dpc_nu_repro_params;

/* Writes the table's defaults (quick, 20240101). */
DPC_API void dpc_nu_repro_params_init(dpc_nu_repro_params *p);
/* The field table of dpc_nu_repro_params (dpcorr/field.h): defaults, ranges and docs. */
DPC_API const dpc_field_table *dpc_nu_repro_params_fields(void);

DPC_API DPC_NODISCARD dpc_status dpc_nu_fig2_run(const dpc_nu_repro_params *p,
                                                 dpc_nu_fig2_point_fn on_point, void *ctx,
                                                 dpc_nu_fig2_result **out, dpc_error *err);
DPC_API void dpc_nu_fig2_free(dpc_nu_fig2_result *r);

/* ---- Tables 1, 2 and 4 (exact; no scale or seed) ---------------------------------------------
 * At the Figure 2 point (d = 128, lambda_k = 1/k, eta = 0.02, rho = 1/2, G = 1, sigma_sgd = 0),
 * for DP-SGD, nu-DP-FTRL (nu = eta mu), Optimal CC (nu = 0), anti-PGD and damped anti-PGD (nu
 * tuned on a log grid of 61 points in (1e-4, 1) for the smallest V0): the sensitivity growth
 * gamma_T^2 (single participation), gamma_inf^2, F_inf = the exact LTI V0 and Table 2's rate
 * (constant 1); Table 1's rates beside the exact values and the universal lower bound
 * eta^2 G^2 Tr[H] / (8 rho); Table 4's d_eff and FTRL/SGD ratio for lambda_k = k^-a. */
#define DPC_NU_TABLES_MECHS 5
#define DPC_NU_TABLES_T 18     /* gamma_T^2 at T = 2^0 .. 2^17 */
#define DPC_NU_TABLE4_ROWS 6

typedef struct dpc_nu_table2_row {
    const char *name;          /* "DP-SGD", ... */
    dpc_theory_beta beta;
    double gamma_t2[4];        /* at T = 1e2, 1e3, 1e4, 1e5 */
    double gamma_inf2, f_inf;  /* (may be infinite) */
    double rate;               /* Table 2's rate, constant 1 (INFINITY: diverges) */
    const char *rate_formula;
} dpc_nu_table2_row;

typedef struct dpc_nu_table4_row {
    double a, d_eff, d_eff_table4, v0_sgd, v0_ftrl, ftrl_table4, sgd_table4;
} dpc_nu_table4_row;

typedef struct dpc_nu_tables_result {
    size_t d;
    double eta, rho, trace;    /* the Figure 2 point; trace = Tr H */
    double damped_nu;          /* damped anti-PGD's tuned nu */
    double T[DPC_NU_TABLES_T];
    double gamma_T2[DPC_NU_TABLES_MECHS][DPC_NU_TABLES_T];
    dpc_nu_table2_row table2[DPC_NU_TABLES_MECHS];
    int damped_between;        /* damped anti-PGD's F_inf strictly between nu-FTRL's and SGD's */
    double nu0_log_fit;        /* Optimal CC's gamma_T^2 fit (ln T + gamma_E + 4 ln 2) / pi at T = 2^17 */
    dpc_theory_rates table1;
    double lower_universal;    /* eta^2 Tr[H] / (8 rho) */
    dpc_nu_table4_row table4[DPC_NU_TABLE4_ROWS];
    dpc_nu_repro_claims claims;
} dpc_nu_tables_result;

DPC_API DPC_NODISCARD dpc_status dpc_nu_tables_run(dpc_nu_tables_result **out, dpc_error *err);
DPC_API void dpc_nu_tables_free(dpc_nu_tables_result *r);

/* ---- Figure 3: the Theorem 3.1 / E.1 bound against the condition number ----------------------
 * The bound on F_inf of DP-SGD, nu-DP-FTRL (nu = eta mu, Theorem 2.2's rule and clamp) and
 * "Optimized" (the bound minimised over symmetric Zames-Falb multipliers |t| <= tmax; also with
 * tmax = 0) on a log grid of kappa = L/mu in [1, 1000], at L = G = 1, eta = 1/L (unstated in the
 * paper), rho = 1/2, d = 1, sigma_sgd = 0. Simulations of the log-cosh problem
 * F = L th^2/2 - (L - mu) log cosh th at kappa 10 and 100 must lie below the bound: they use
 * rho = 50 (noise std 0.1 gamma), since at rho = 1/2 the iterates live where log cosh is linear
 * and the curvature is L, not mu; the bound, linear in 1/rho, is rescaled by 0.5/rho. Burn-in 20
 * correlation times, beta truncated at a 1e-10 tail, seeds root + 300 + 2 k + m. */
#define DPC_NU_FIG3_MAX_KAPPA 13

typedef struct dpc_nu_fig3_sim {
    double kappa;
    int mech;                  /* 0 DP-SGD, 1 nu-DP-FTRL */
    double gap, se;            /* simulated F - F* and its standard error */
    double bound;              /* at the simulation's rho */
    size_t steps;
    uint64_t seed;
} dpc_nu_fig3_sim;

typedef struct dpc_nu_fig3_result {
    size_t nk, tmax;
    double kappa[DPC_NU_FIG3_MAX_KAPPA], mu[DPC_NU_FIG3_MAX_KAPPA];
    double bound_sgd[DPC_NU_FIG3_MAX_KAPPA], bound_nu[DPC_NU_FIG3_MAX_KAPPA];
    double bound_opt[DPC_NU_FIG3_MAX_KAPPA];  /* Optimized, multipliers |t| <= tmax */
    double bound_opt0[DPC_NU_FIG3_MAX_KAPPA]; /* ... the circle criterion (tmax = 0) */
    double rho_sim;            /* the simulations' rho (50) */
    dpc_nu_fig3_sim sims[4];   /* kappa 10 (SGD, nu), 100 (SGD, nu) */
    int below;                 /* every simulation below its bound */
    int ordering;              /* SGD > nu > Optimized at the largest kappa */
    double ratio_mid, ratio_max; /* SGD / nu bound at the middle and the largest kappa */
    dpc_nu_repro_claims claims;
} dpc_nu_fig3_result;

DPC_API DPC_NODISCARD dpc_status dpc_nu_fig3_run(const dpc_nu_repro_params *p,
                                                 dpc_nu_fig3_result **out, dpc_error *err);
DPC_API void dpc_nu_fig3_free(dpc_nu_fig3_result *r);

/* ---- Figure 1: mean estimation (Theorem 2.1) -------------------------------------------------
 * The ratio R(eta) = F_inf(optimal beta*) / F_inf(DP-SGD) = eta (2 - eta) (2 K(1-eta)/pi)^2 in
 * closed form on (0, 2) (log-spaced on (1e-4, 1], mirrored onto (1, 2)) and by simulation at the
 * note's check points eta = 0.5, 0.1, 0.02 (rho = 1/2, G = 1, sigma_sgd = 0, burn-in 20
 * correlation times, seeds root + 100 + i for nu = eta, root + 200 + i for DP-SGD); beta*_t and
 * |B*(w)|^2 = |1 - eta - e^{iw}| for eta = 0.1 and 0.01 (note 5.2). */
#define DPC_NU_FIG1_RATIO 81
#define DPC_NU_FIG1_SIMS 3
#define DPC_NU_FIG1_BETA 41
#define DPC_NU_FIG1_OMEGA 401

typedef struct dpc_nu_fig1_sim {
    double eta;
    dpc_nu_sim_point opt, sgd; /* E delta^2 (= 2 x gap) with nu = eta, and DP-SGD */
    double ratio, ratio_se, ratio_theory;
} dpc_nu_fig1_sim;

typedef struct dpc_nu_fig1_result {
    double eta[DPC_NU_FIG1_RATIO], ratio[DPC_NU_FIG1_RATIO];  /* closed form */
    double ftrl_opt[DPC_NU_FIG1_RATIO], sgd[DPC_NU_FIG1_RATIO]; /* the two F_inf */
    dpc_nu_fig1_sim sims[DPC_NU_FIG1_SIMS];
    double max_rel_dev;        /* simulation vs theory of the optimum, over the check points */
    double beta_eta[2];        /* 0.1, 0.01 */
    double t[DPC_NU_FIG1_BETA], beta[2][DPC_NU_FIG1_BETA];
    double omega[DPC_NU_FIG1_OMEGA], spectrum[2][DPC_NU_FIG1_OMEGA]; /* on [-pi, pi] */
    dpc_nu_repro_claims claims;
} dpc_nu_fig1_result;

DPC_API DPC_NODISCARD dpc_status dpc_nu_fig1_run(const dpc_nu_repro_params *p,
                                                 dpc_nu_fig1_result **out, dpc_error *err);
DPC_API void dpc_nu_fig1_free(dpc_nu_fig1_result *r);

#ifdef __cplusplus
}
#endif
#endif /* DPCORR_NU_REPRO_H */
