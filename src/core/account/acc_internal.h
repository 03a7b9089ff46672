/* acc_internal.h — declarations shared between the accounting translation units (internal). */
#ifndef DPCORR_SRC_ACC_INTERNAL_H
#define DPCORR_SRC_ACC_INTERNAL_H

#include "dpcorr/account.h"

#define DPC__MAX_ORDER 1e6

dpc_status dpc__check_orders(const double *orders, size_t n, dpc_error *err);

/* The field table of dpc_account_opts (dpc_account_opts_fields), for tables that nest it. */
extern const dpc_field_table dpc__account_opts_table;

/* Single-order RDP curves (arguments already validated). z = noise multiplier. */
double dpc__rdp_gauss1(double z, double a);
double dpc__rdp_poisson1(double q, double z, double a, int *ok);
double dpc__rdp_wor1(double q, double z, double a);
/* Improved conversion at one order: eps for log(delta) = logd; log delta for eps. */
double dpc__rdp_eps1(double a, double r, double logd);
double dpc__rdp_logdelta1(double a, double r, double eps);

/* PLD internals (pld.c). The Gaussian PLD whose initial truncation (tail * 1e-5) is divided by
 * the number of compositions it will undergo; grid points the count-fold composition needs (the
 * larger direction); the point budget of one composition; the binary-powering reference. */
dpc_status dpc__pld_new_gaussian_count(dpc_pld **out, double z, double q,
                                       const dpc_pld_params *par, size_t count, dpc_error *err);
/* dpc_pld_self_compose that also reports the grid points the composition needs (filled on
 * DPC_E_RANGE too, when the window exceeds dpc__pld_max_points). */
dpc_status dpc__pld_self_compose_pts(dpc_pld **out, const dpc_pld *a, size_t count,
                                     double *points, double tilt_level, dpc_error *err);
/* Round-off mass the FFT may have left in the losses above eps (largest clamped negative
 * times the entries there; 0 when the composition was refined by tilting). */
double dpc__pld_noise_above(const dpc_pld *a, double eps);
/* Mean and variance of the finite loss under P (max over directions) and the mass at +inf. */
void dpc__pld_moments(const dpc_pld *a, double *mean, double *var, double *inf);
size_t dpc__pld_max_points(void);
double dpc__pld_interval(const dpc_pld *a);
dpc_status dpc__pld_self_compose_naive(dpc_pld **out, const dpc_pld *a, size_t count,
                                       dpc_error *err);

/* dpc_account_calibrate_sigma that also reports the number of evaluations of the requested
 * accountant (for PLD: the secant steps after the RDP bracket). */
/* dpc_account_mech_calibrate with o's grid as given (the public function first applies
 * dpc_account_opts_for_target; callers that already did use this one). */
dpc_status dpc__account_mech_calibrate(const dpc_mech *m, const dpc_participation *part, double q,
                                       const dpc_account_opts *o, double epsilon, double delta,
                                       double *noise_multiplier, dpc_gauss_event *ev_out,
                                       dpc_account_mech_info *info_out, dpc_error *err);
dpc_status dpc__calibrate_sigma_count(const dpc_event *ev, const dpc_account_opts *o,
                                      double epsilon, double delta, double *sigma,
                                      size_t *evals, dpc_error *err);

/* PLD (both directions) of the pair P = sum_k w[k] N((off + k) g, s^2) vs Q = N(0, s^2) (w: (K),
 * sum 1), connect-the-dots on par->interval; `count` spreads the initial truncation as for the
 * Gaussian (pld_mog.c). */
dpc_status dpc__pld_new_mog(dpc_pld **out, const double *w, size_t K, size_t off, double g,
                            double s, const dpc_pld_params *par, size_t count, dpc_error *err);

/* MMCC (mmcc.c): the PLD dominating Poisson-sampled runs (rate p) of the matrix mechanism with
 * nonnegative strategy C (rows, n; row-major, rows in release order) and noise std s per row (in
 * units of the clip norm), by conditional composition; *slack receives the delta that the
 * conditioning events and truncations cost (the run is (eps, delta_pld + slack)-DP). delta is
 * the target the slack is budgeted against (about 0.11 delta). groups: runs of rows that share
 * one dominating row. */
dpc_status dpc__mmcc_pld(const double *C, size_t rows, size_t n, double p, double s,
                         double delta, const dpc_account_opts *o, size_t groups, dpc_pld **out,
                         double *slack, dpc_error *err);
/* The MMCC route's epsilon at delta (the slack taken off delta inside): rows computed once;
 * adaptive = 1 composes on a coarse grid first and then on max(o->pld_interval, 1e-5 epsilon),
 * answering the smaller (both are upper bounds); 0: on o->pld_interval only (calibrations: one
 * grid along the search). *h_used: the grid of the answer (may be NULL). *work: the estimated
 * operations, set before any work; above DPC_WORK_LIMIT the route is refused at once
 * (DPC_E_RANGE, field "noise_multiplier"). */
typedef struct dpc__mmcc_mat { /* C >= 0 by rows in release order, each row a band */
    const double *v;     /* (rows, width): v[i width + j] = C[i, col0[i] + j] */
    const size_t *col0;  /* (rows) first column of each row's band; NULL: all 0 (dense) */
    size_t rows, n, width;
} dpc__mmcc_mat;
double dpc__mmcc_cmax(const dpc__mmcc_mat *M);
dpc_status dpc__mmcc_epsilon(const dpc__mmcc_mat *M, double p, double s, double delta,
                             const dpc_account_opts *o, size_t groups, int adaptive, double *eps,
                             double *slack, double *h_used, double *work, dpc_error *err);

/* The two-band Poisson bound beside MMCC (mmcc_band.c, doc/accounting.md section 7.1.2): for
 * C >= 0 with at most two bands (C[i, i], C[i, i - 1]; one row per step) an upper bound on
 * epsilon at delta over both directions of MMCC's dominating pair: remove by the exact integer
 * Renyi moments (a chain over the count of copies participating at the last step), add by a
 * Gibbs lower bound on the likelihood ratio. Each direction's epsilon and the Renyi order used
 * go to the optional outputs. DPC_E_UNSUPPORTED when C has other entries. */
int dpc__band2_applies(const dpc__mmcc_mat *M);
/* log E_Q[(P/Q)^al] of the pair, integer al >= 2 (exact up to rounding; tests). -1: no memory. */
int dpc__band2_log_moment(const dpc__mmcc_mat *M, double q, double s, size_t al, double *out);
/* For C >= 0 with at most 8 bands (one row per step): each direction's epsilon by the per-column
 * bounds and Hoelder over the residues mod the band count (mmcc_band.c); DPC_E_UNSUPPORTED when C
 * has more bands or its columns take more than 64 forms. dpc__band2_epsilon takes, per
 * direction, the smaller of these and the two-band chain, and answers for any C it covers. */
size_t dpc__band_span(const dpc__mmcc_mat *M);
dpc_status dpc__band_holder(const dpc__mmcc_mat *M, double q, double s, double delta,
                            double *eps_remove, double *eps_add, dpc_error *err);
dpc_status dpc__band2_epsilon(const dpc__mmcc_mat *M, double q, double s, double delta,
                              double *eps, double *eps_remove, double *eps_add, size_t *order,
                              dpc_error *err);

/* Random allocation of one Gaussian participation among b steps (bib_ra.c): the pair
 * (1/b) sum_j N(mu e_j, I) vs N(0, I). dpc__ra_epsilon: an upper bound on the smallest eps with
 * delta(eps) <= delta over both directions (never above the single Gaussian's). dpc__ra_delta:
 * upper bounds on both directions' delta at eps on a grid of K cells (tests). */
dpc_status dpc__ra_epsilon(size_t b, double mu, double delta, double *eps, dpc_error *err);
dpc_status dpc__ra_epsilon2(size_t b, double mu, double delta, double *e_remove, double *e_add,
                           dpc_error *err); /* each direction (dpc__ra_epsilon: the larger) */
/* The work of one dpc__ra_epsilon over b bins, in the units of DPC_WORK_LIMIT (its curves are
 * binary powers: about RA_OPS_PER_LEVEL per bit of b, whatever mu). */
double dpc__ra_epsilon_ops(size_t b);
/* One direction of dpc__ra_epsilon2 (remove 1, add 0), the same value. */
dpc_status dpc__ra_epsilon_dir(size_t b, double mu, double delta, int remove, double *eps,
                               dpc_error *err);
/* log of a lower bound on the exact delta of the pair at eps, one direction (test events;
 * -INFINITY when none separates): decides that an upper bound need not be computed. */
double dpc__ra_log_delta_lower(size_t b, double mu, double eps, int remove);
dpc_status dpc__ra_delta(size_t b, double mu, double eps, size_t K, double *d_remove,
                         double *d_add);

/* Balls-in-bins Monte Carlo (bib_mc.c): an upper confidence bound (confidence 1 - beta) on the
 * eps at delta of the pair (1/b) sum_j N(m_j, s^2 I) vs N(0, s^2 I) given the Gram matrix
 * G = M^T M (b, b) of the m_j; N samples per direction (plus a pilot of N/8), draws keyed by
 * dpc__bib_seed of the configuration (written to *seed). eps_whole: the unamplified epsilon (the
 * search range). INFINITY when nothing below 2 eps_whole + 1 is certified. */
dpc_status dpc__bib_mc_epsilon(const double *G, size_t b, double s, double delta, size_t N,
                               double beta, double eps_whole, double *eps, uint64_t *seed,
                               dpc_error *err);
uint64_t dpc__bib_seed(const double *G, size_t b, double s, double delta, size_t N, double beta);
/* The estimators at one eps with given tilts and key (tests): out = {mean, standard error, UCB
 * at failure probability beta} for the remove direction, then the same for add. */
dpc_status dpc__bib_mc_delta(const double *G, size_t b, double s, double eps, size_t N,
                             uint64_t seed, double lambda, double theta_a, double beta,
                             double out[6]);

/* Sampling-free balls-in-bins bound (bib_sf.c): prepare certifies up to DPC__BIB_SF_CAND pairs
 * (a[i], c[i]) with G <= a I + c 11^T (PSD order; DPC_E_RANGE naming part.b above
 * DPC__BIB_SF_MAX_BINS bins); epsilon: the deterministic bound at delta for noise std s, the
 * smallest over the candidates of random allocation (mu = sqrt(a)/s, b bins) composed with a
 * Gaussian (mu0 = sqrt(c)/s). Valid in both directions; nonincreasing in s. */
#define DPC__BIB_SF_CAND 3 /* each costs one random-allocation bound per evaluation */
#define DPC__BIB_SF_MAX_BINS 512
dpc_status dpc__bib_sf_prepare(const double *G, size_t b, double *a, double *c, size_t *count,
                               dpc_error *err);
dpc_status dpc__bib_sf_epsilon(const double *a, const double *c, size_t count, size_t b,
                               double s, double delta, double *eps, dpc_error *err);
/* the same, each direction on its own (the route combines them with the Renyi bound's) */
dpc_status dpc__bib_sf_epsilon2(const double *a, const double *c, size_t count, size_t b,
                                double s, double delta, double *e_remove, double *e_add,
                                dpc_error *err);
/* The same, except that a candidate's direction is skipped when it provably exceeds that
 * direction's floor (a test-event lower bound): each result is the same value whenever it is
 * below its floor, else some value above the floor (INFINITY when nothing was computed), so
 * min(result, floor) is exactly min(dpc__bib_sf_epsilon2's, floor). */
dpc_status dpc__bib_sf_epsilon2_over(const double *a, const double *c, size_t count, size_t b,
                                     double s, double delta, double floor_r, double floor_a,
                                     double *e_remove, double *e_add, double *ops,
                                     dpc_error *err); /* ops: the work done */

/* Renyi-DP dynamic program for balls-in-bins (bib_rdp.c; doc/accounting.md 7.2): prepare
 * builds, for each constant rho in {0, min off-diagonal G, max non-neighbour G}, the chain
 * weights d, e (per bin) and r (neighbours), units of G; epsilon: the deterministic bound at
 * delta for noise std s (for each direction the smallest over the candidates).
 * logmoments (tests): upper bounds on log E_Q[Lambda^m], m = 0..M, without the rho part;
 * work b (M+1)^3 / 6 (DPC_WORK_LIMIT, else DPC_E_RANGE naming part.b). curve: RDP of both
 * directions at order alpha from the integer log moments tl (rho part included). */
#define DPC__BIB_RDP_CAND 3
typedef struct dpc__bib_rdp {
    size_t b, ncand;
    double rho[DPC__BIB_RDP_CAND], gmax;
    double *d, *e, *r;    /* (ncand, b) each: one neighbour exact */
    double *d3, *e3, *r2; /* (ncand, b) each: two neighbours exact (r: distance 1 as above) */
} dpc__bib_rdp;
dpc_status dpc__bib_rdp_prepare(const double *G, size_t b, dpc__bib_rdp *R, dpc_error *err);
void dpc__bib_rdp_free(dpc__bib_rdp *R);
dpc_status dpc__bib_rdp_epsilon(const dpc__bib_rdp *R, double s, double delta, double *eps,
                                dpc_error *err);
/* the same, each direction on its own (remove: D(P||Q), add: D(Q||P)) */
dpc_status dpc__bib_rdp_epsilon2(const dpc__bib_rdp *R, double s, double delta, double *e_remove,
                                 double *e_add, dpc_error *err);
/* The same, with the work done (DPC_WORK_LIMIT's units) in *ops; ops_max: the most one
 * evaluation can take (every order level it may double to). */
dpc_status dpc__bib_rdp_epsilon2_ops(const dpc__bib_rdp *R, double s, double delta,
                                     double *e_remove, double *e_add, double *ops, dpc_error *err);
double dpc__bib_rdp_ops_max(const dpc__bib_rdp *R);
dpc_status dpc__bib_rdp_logmoments(size_t b, const double *d, const double *e, const double *r,
                                   double s, size_t M, double *logm, dpc_error *err);
dpc_status dpc__bib_rdp_logmoments3(size_t b, const double *d3, const double *e3,
                                    const double *r1, const double *r2, double s, size_t M,
                                    double *logm, dpc_error *err);
void dpc__bib_rdp_curve(const double *tl, size_t M, double a, double alpha, double *r_remove,
                        double *r_add);

/* The strategy as a dense nonnegative matrix with rows in release order (mech_route.c; a row is
 * released at the step of its last nonzero column); all-zero rows dropped. NULL with *why set
 * when C has a negative entry, n > 4096, or memory fails. rows: (out). Caller frees. */
double *dpc__mech_nonneg_matrix(const dpc_mech *m, size_t *rows, const char **why);

/* The balls-in-bins route (bib_route.c). prepare: DPC_E_UNSUPPORTED when the route does not
 * apply (not balls-in-bins, not PLD/RDP, a negative entry, n > 4096 or b > 512 for a
 * non-identity C). epsilon: the route's upper bound at noise multiplier z (eps_whole: the
 * whole-run epsilon at z, the Monte Carlo's search range); mc receives mc_samples,
 * mc_confidence and mc_seed (0 / NAN / 0 when exact). */
#define DPC__BIB_MC_SAMPLES ((size_t)1 << 17) /* the Monte Carlo bound's draws (O(b^2) each) */
typedef struct dpc__bib_ctx {
    int identity;
    size_t b, k;
    double colmax, delta;
    double *G;       /* (b, b) Gram matrix of the m_j (non-identity C) */
    double sf_a[DPC__BIB_SF_CAND], sf_c[DPC__BIB_SF_CAND]; /* the sampling-free certificates */
    size_t sf_n;     /* (in units of G; 0: no sampling-free bound) */
    dpc__bib_rdp rdp; /* the Renyi dynamic program (non-identity C) */
    int allow_mc;    /* opts.bib_monte_carlo */
    const char *why; /* why the route does not apply to a balls-in-bins run (NULL: it does) */
    dpc_progress progress; /* opts.progress: one report per stage of an evaluation (each bound,
                              the Monte Carlo), since one evaluation may take seconds */
    double *stages;        /* stages reported so far (points at stages_done) */
    double stages_done;
    double *ops;           /* work done by the evaluations so far, DPC_WORK_LIMIT's units
                              (points at ops_done): a calibration's budget counts it */
    double ops_done;
} dpc__bib_ctx;
/* The most work one evaluation can take (DPC_WORK_LIMIT's units; every bound computed in full,
 * with_mc: the Monte Carlo too), known before any: the budget decides on it first. */
double dpc__bib_eval_ops(const dpc__bib_ctx *c, int with_mc);
dpc_status dpc__bib_prepare(const dpc_mech_run *run, const dpc_account_opts *o, double delta,
                            dpc__bib_ctx *c, dpc_error *err);
dpc_status dpc__bib_epsilon(const dpc__bib_ctx *c, double z, double eps_whole, double *eps,
                            dpc_account_mech_info *mc, dpc_error *err);
/* with_mc: also run the Monte Carlo beside the sampling-free bound (its epsilon to
 * mc->eps_bib_mc); calibration passes allow_mc (only the bound that may be reported is
 * searched). The route's epsilon is the deterministic bound (mc->bib_deterministic = 1) unless
 * allow_mc and the Monte Carlo is lower, or no certificate exists. */
dpc_status dpc__bib_epsilon_ex(const dpc__bib_ctx *c, double z, double eps_whole, int with_mc,
                               double *eps, dpc_account_mech_info *mc, dpc_error *err);
/* The post-processing bound alone (other C; INFINITY for the identity or without candidates):
 * an upper bound on the route's deterministic epsilon, often far cheaper where the noise is
 * large (the Renyi program's orders grow as epsilon falls). */
dpc_status dpc__bib_epsilon_sf(const dpc__bib_ctx *c, double z, double *eps, dpc_error *err);
void dpc__bib_free(dpc__bib_ctx *c);

/* Secant search on log eps(e^u) = log target (calibrate.c); see the definition. */
#include "account/acc_math.h"
int dpc__secant_log(dpc__fn eps_of_u, void *ctx, double target, double *u, double *slope,
                    double tol, int private_end, int max_it, double umax);

#include "fft/fft_core.h" /* the FFT and convolutions used to compose PLDs */

#endif
