/* dpcorr/account.h — privacy accounting: zCDP, Gaussian DP, Renyi DP and privacy loss
 * distributions for (subsampled, composed) Gaussian mechanisms and correlated-noise mechanisms.
 *
 * What is accounted. An *event* is a composition of self-composed Gaussian components. One
 * component releases f(D) + N(0, sigma^2 I) `count` times (adaptively), where f has L2
 * sensitivity `sensitivity` under the event's neighbouring relation, on a batch chosen by
 * `sampling` (none, Poisson with rate q, or a uniformly random fixed-size batch, q = B/n).
 * Only the ratio z = sigma / sensitivity (the noise multiplier) matters.
 *
 * Neighbouring relations (every result below states which ones it holds for):
 *   ADD_REMOVE   D' = D with one record added or removed (n changes).
 *   ZERO_OUT     D' = D with one record's contribution replaced by zero (Kairouz et al. 2021,
 *                Ponomareva et al. 2023). For Poisson subsampling and for no subsampling it
 *                gives the same pair of distributions as ADD_REMOVE with the same sensitivity.
 *   REPLACE_ONE  D' = D with one record replaced by another (n fixed). The caller gives the
 *                replace-one sensitivity (for a sum of gradients clipped to C it is 2C).
 * Support matrix (anything else returns DPC_E_UNSUPPORTED with a message):
 *   sampling   relation                  accountants
 *   NONE       any                       RDP, PLD, zCDP, GDP     (exact Gaussian results)
 *   POISSON    ADD_REMOVE, ZERO_OUT      RDP, PLD                (amplification by sampling)
 *   FIXED      REPLACE_ONE               RDP                     (Wang, Balle, Kasiviswanathan)
 * A sampled component with q = 1 is treated as NONE.
 *
 * Accountants:
 *   ZCDP  rho-zCDP (Bun & Steinke 2016); converted to (eps, delta) by the tight conversion of
 *         Canonne, Kamath & Steinke 2020 (Prop. 12; the nu-DP-FTRL note's App. A.2 form) or by
 *         Bun & Steinke Prop. 1.3. Exact composition.
 *   GDP   mu-Gaussian DP (Dong, Roth & Su 2022); exact (eps, delta) curve. Exact composition.
 *   RDP   Renyi DP over a grid of orders (Mironov 2017); subsampled Gaussian by Mironov, Talwar
 *         & Zhang 2019; improved conversion (Canonne, Kamath & Steinke 2020, Prop. 12). An upper
 *         bound on the true epsilon.
 *   PLD   privacy loss distributions on a grid (Koskela et al. 2020; Doroshenko et al. 2022);
 *         FFT composition (a T-fold composition is one FFT power inside a Chernoff window).
 *         Pessimistic discretizations give upper bounds (truncated tails are moved to +inf), the
 *         optimistic one a lower bound; both converge to the exact value as the grid is refined.
 *         When a long run's window would exceed 2^24 grid points the accountant coarsens the
 *         grid (still an upper bound, only looser), so every request is answered. A pessimistic
 *         request is answered by the smaller of the PLD and the RDP bound (both upper bounds;
 *         the result's order says when RDP answered), and the PLD is not composed where its
 *         grid's floor is predicted above twice the RDP bound (10^12 steps: seconds -> ms).
 *
 * Example (DP-SGD: Poisson rate 0.01, noise multiplier 1.1, 10000 steps):
 *     dpc_gauss_event c;  dpc_gauss_event_init(&c);
 *     c.sigma = 1.1; c.sampling = DPC_SAMPLING_POISSON; c.q = 0.01; c.count = 10000;
 *     dpc_event ev = {DPC_NEIGHBOR_ADD_REMOVE, 1, &c};
 *     dpc_account_opts o;  dpc_account_opts_init(&o, DPC_ACCOUNTANT_PLD);
 *     dpc_account_result r;
 *     if (dpc_account_epsilon(&ev, &o, 1e-5, &r, &err) == DPC_OK) printf("%g\n", r.epsilon);
 *
 * Correlated noise (section "Correlated-noise mechanisms"): a dpc_mech plus its dpc_participation
 * and a noise multiplier z is turned into the equivalent event by dpc_account_mech_event, with the
 * library-wide meaning of z: noise std per row of Z = z * clip * (max column norm of C), i.e.
 * the per-step noise multiplier of DP-SGD. Every trainer reports a dpc_ledger.
 *
 * All functions are pure (no global state), thread-safe, and validate their inputs (NaN,
 * non-positive, out-of-range) before any work. delta and epsilon are never negative on output;
 * an epsilon of INFINITY means no finite epsilon achieves the requested delta.
 */
#ifndef DPCORR_ACCOUNT_H
#define DPCORR_ACCOUNT_H

#include "dpcorr/common.h"
#include "dpcorr/mech.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ==== Events ================================================================================ */

typedef enum dpc_neighbor {
    DPC_NEIGHBOR_ADD_REMOVE = 0,
    DPC_NEIGHBOR_ZERO_OUT = 1,
    DPC_NEIGHBOR_REPLACE_ONE = 2
} dpc_neighbor;

typedef enum dpc_sampling {
    DPC_SAMPLING_NONE = 0,    /* every record is used at every step */
    DPC_SAMPLING_POISSON = 1, /* each record independently with probability q */
    DPC_SAMPLING_FIXED = 2    /* a uniformly random batch of B = q n records, without replacement */
} dpc_sampling;

typedef enum dpc_accountant {
    DPC_ACCOUNTANT_RDP = 0,
    DPC_ACCOUNTANT_PLD = 1,
    DPC_ACCOUNTANT_ZCDP = 2,
    DPC_ACCOUNTANT_GDP = 3
} dpc_accountant;

/* "add-remove", "zero-out", "replace-one" / "none", "poisson", "fixed" / "rdp", "pld", "zcdp",
 * "gdp". The parsers accept exactly these names. */
DPC_API const char *dpc_neighbor_name(dpc_neighbor r);
DPC_API const char *dpc_sampling_name(dpc_sampling s);
DPC_API const char *dpc_accountant_name(dpc_accountant a);
DPC_API DPC_NODISCARD dpc_status dpc_neighbor_parse(const char *s, dpc_neighbor *out,
                                                    dpc_error *err);
DPC_API DPC_NODISCARD dpc_status dpc_sampling_parse(const char *s, dpc_sampling *out,
                                                    dpc_error *err);
DPC_API DPC_NODISCARD dpc_status dpc_accountant_parse(const char *s, dpc_accountant *out,
                                                      dpc_error *err);

/* One self-composed Gaussian component. */
typedef struct dpc_gauss_event {
    double sigma;          /* noise standard deviation, > 0 */
    double sensitivity;    /* L2 sensitivity under the event's relation, > 0 (default 1) */
    dpc_sampling sampling; /* NONE (default), POISSON or FIXED */
    double q;              /* sampling rate in (0, 1]; ignored for NONE (default 1) */
    size_t count;          /* number of (adaptive) compositions, >= 1 (default 1) */
} dpc_gauss_event;

/* Largest count of a component (2^40 compositions): dpc_event_check refuses more (DPC_E_RANGE)
 * for every front end, so a binding cannot ask for 2^63 steps. */
#define DPC_ACCOUNT_MAX_COUNT ((size_t)1 << 40)
/* DPC_ACCOUNT_MAX_COUNT as a function, for bindings (one range, not a copy per front end). */
DPC_API size_t dpc_account_max_count(void);

/* Defaults: sigma 1, sensitivity 1, NONE, q 1, count 1. */
DPC_API void dpc_gauss_event_init(dpc_gauss_event *e);
/* The field table of dpc_gauss_event (dpcorr/field.h): name, type, offset, default, range and
 * one-line doc of every field; dpc_gauss_event_init writes its defaults and dpc_event_check
 * range-checks each component through it (errors name "parts[i].sigma", ...). */
DPC_API const dpc_field_table *dpc_gauss_event_fields(void);

/* The composition of nparts components (nparts >= 1), all under one neighbouring relation. */
typedef struct dpc_event {
    dpc_neighbor neighbor;
    size_t nparts;
    const dpc_gauss_event *parts; /* (nparts), borrowed */
} dpc_event;

/* The field table of dpc_event (dpcorr/field.h): neighbor and nparts as dpc_event_check
 * range-checks them. */
DPC_API const dpc_field_table *dpc_event_fields(void);

/* Validates the event and whether `acc` supports it (see the support matrix above). */
DPC_API DPC_NODISCARD dpc_status dpc_event_check(const dpc_event *ev, dpc_accountant acc,
                                                 dpc_error *err);

/* ==== Accountant options and results ======================================================= */

typedef enum dpc_zcdp_conv {
    DPC_ZCDP_TIGHT = 0,      /* inf_a rho a + log1p(-1/a) - log(delta a)/(a - 1) (CKS 2020) */
    DPC_ZCDP_BUN_STEINKE = 1 /* rho + 2 sqrt(rho log(1/delta)) (Bun & Steinke 2016, Prop. 1.3) */
} dpc_zcdp_conv;

typedef enum dpc_pld_disc {
    DPC_PLD_CONNECT_DOTS = 0, /* pessimistic, second-order accurate (Doroshenko et al. 2022) */
    DPC_PLD_ROUND_UP = 1,     /* pessimistic, first order (Meiser & Mohammadi 2018) */
    DPC_PLD_ROUND_DOWN = 2    /* optimistic (lower bound), first order */
} dpc_pld_disc;

DPC_API const char *dpc_pld_disc_name(dpc_pld_disc d); /* "connect-dots", "round-up", ... */
DPC_API DPC_NODISCARD dpc_status dpc_pld_disc_parse(const char *s, dpc_pld_disc *out,
                                                    dpc_error *err);

typedef struct dpc_account_opts {
    dpc_accountant accountant;
    const double *orders;   /* RDP orders, each > 1 (borrowed); NULL: dpc_rdp_default_orders */
    size_t norders;
    int rdp_refine;         /* RDP: refine the best grid order by a continuous 1-D search */
    double pld_interval;    /* PLD: loss grid step h in (0, 1] (default 1e-4); enlarged
                               automatically when a component's composition needs more than 2^24
                               points */
    double pld_tail;        /* PLD: mass truncated at each end per composition (default 1e-15;
                               the upper part is added to the mass at +inf); the initial
                               discretization truncates pld_tail * 1e-5 / count */
    dpc_pld_disc pld_disc;  /* PLD: default CONNECT_DOTS */
    dpc_zcdp_conv zcdp_conv;/* zCDP: default TIGHT */
    dpc_progress progress;  /* called by the long computations (calibrations: per evaluation;
                               MMCC: per composed group); a non-zero return cancels them
                               (DPC_E_CANCELLED). Default none. */
    int bib_monte_carlo;    /* balls-in-bins with C not the identity: 1 lets the Monte Carlo's
                               high-probability bound be the route's epsilon where it is below
                               the deterministic bound (default 0: deterministic only; the
                               Monte Carlo is still reported beside it) */
} dpc_account_opts;

/* Defaults for accountant `acc`, as listed in the field comments. */
DPC_API void dpc_account_opts_init(dpc_account_opts *o, dpc_accountant acc);
/* The field table of dpc_account_opts (dpcorr/field.h): name, type, offset, default, range and
 * one-line doc of every field; dpc_account_opts_init writes its defaults (then acc), and the
 * accountants range-check the fields they use through it. */
DPC_API const dpc_field_table *dpc_account_opts_fields(void);

typedef struct dpc_account_result {
    double epsilon;  /* >= 0; INFINITY if unattainable */
    double delta;    /* in [0, 1] */
    double order;    /* RDP: the order achieving the bound; PLD: the RDP order when RDP's bound
                        (computed beside it) was smaller and answered, else NAN; NAN for
                        other accountants */
    double rho;      /* ZCDP: total rho of the event; NAN otherwise */
    double mu;       /* GDP: total mu of the event; NAN otherwise */
    int upper_bound; /* 1: epsilon/delta are upper bounds (valid guarantees); 0: PLD ROUND_DOWN */
} dpc_account_result;

/* Smallest epsilon such that the event is (epsilon, delta)-DP according to the accountant,
 * under the event's neighbouring relation (for ADD_REMOVE/ZERO_OUT the maximum over the add
 * and the remove direction). delta in (0, 1). */
DPC_API DPC_NODISCARD dpc_status dpc_account_epsilon(const dpc_event *ev,
                                                     const dpc_account_opts *o, double delta,
                                                     dpc_account_result *out, dpc_error *err);

/* Smallest delta such that the event is (epsilon, delta)-DP; epsilon >= 0. */
DPC_API DPC_NODISCARD dpc_status dpc_account_delta(const dpc_event *ev, const dpc_account_opts *o,
                                                   double epsilon, dpc_account_result *out,
                                                   dpc_error *err);

/* ==== Calibration (epsilon is monotone in each parameter) ==================================== */

/* The default delta for a data set of n_records records (n_records >= 1): the largest power of
 * ten <= 1/(10 n_records), and never above 1e-5 (1e-5 up to 10^4 records, 1e-6 for Fashion-MNIST's
 * 60000, 1e-7 at 10^6), so that a default is always below 1/N (a mechanism that publishes one
 * record outright must not satisfy it). Trainers record a derived delta in the ledger
 * (dpc_ledger.delta_derived). */
DPC_API double dpc_account_default_delta(size_t n_records);

/* The delta rule of every trainer and front end (dpc_train_config, dpc_privatize, DP-(AMB)SSGD,
 * Accelerated-DP-SRGD, DP-lambda-CGD, the Python binding): delta 0 is the default
 * dpc_account_default_delta(n_records) (*derived = 1); a given delta must be in (0, 1) and below
 * 1/N, because a mechanism that publishes one record outright satisfies (eps, 1/N)-DP: a delta
 * >= 1/N is refused (DPC_E_PRIVACY, field "delta"; the message names the override by its
 * library name, allow_large_delta, which front ends spell their own way) unless allow_large is
 * set. n_records >= 1 (field "n"). *derived may be NULL. */
DPC_API DPC_NODISCARD dpc_status dpc_account_resolve_delta(double delta, size_t n_records,
                                                           int allow_large, double *out,
                                                           int *derived, dpc_error *err);

/* The default accountant of every front end and trainer: PLD (exact up to its grid for every
 * amplified route; unamplified runs are one Gaussian and are answered by exact GDP under it). */
DPC_API dpc_accountant dpc_account_default_accountant(void);

/* The PLD grid a calibration to `epsilon` uses (every dpc_account_*calibrate* function applies
 * it to a copy of o; trainers report the calibrated run's epsilon on the same grid): for PLD,
 * pld_interval x max(1, epsilon / 10) (at most 1), so that the grid's resolution relative to epsilon never
 * drops below that of the requested interval at epsilon = 10 (connect-the-dots moves epsilon by
 * about 1e-7 relative at 1000 with the default 1e-4 -> 1e-2, measured) while a large-epsilon
 * calibration stays a fraction of a second instead of building 10^7-point grids. Any grid gives
 * a valid upper bound (pessimistic discretization); other accountants are left alone. */
DPC_API void dpc_account_opts_for_target(dpc_account_opts *o, double epsilon);

/* Smallest sigma (the same for every component) such that the event is (epsilon, delta)-DP.
 * The result is on the private side (eps(sigma) <= epsilon). RDP, zCDP, GDP: bracketing and
 * bisection on log sigma, within a relative 1e-11 in sigma or 1e-10 in epsilon of the crossing.
 * PLD: an RDP start (secant steps), secant steps on a 10x coarser grid, one evaluation on a 5x
 * coarser grid there (connect-the-dots is second order in the grid step, so the two predict the
 * requested grid's epsilon by Richardson extrapolation), coarse secant steps onto that
 * prediction, then usually ONE evaluation with the requested grid (1.4x the cost of one
 * evaluation in bench/bench_account.c), accepted when it is <= the target and within a relative
 * 5e-5 of it (the grid resolves eps(sigma) to ~1e-8 only); otherwise the measured offset is
 * used again, then secant steps and bisection on the requested grid. DPC_E_PRIVACY if no
 * sigma <= 1e9 * sensitivity suffices. */
DPC_API DPC_NODISCARD dpc_status dpc_account_calibrate_sigma(const dpc_event *ev,
                                                             const dpc_account_opts *o,
                                                             double epsilon, double delta,
                                                             double *sigma, dpc_error *err);

/* Largest count of component `part` (1 <= count <= max_steps) such that the event is
 * (epsilon, delta)-DP. DPC_E_PRIVACY if even count = 1 exceeds the budget. */
DPC_API DPC_NODISCARD dpc_status dpc_account_calibrate_steps(const dpc_event *ev, size_t part,
                                                             const dpc_account_opts *o,
                                                             double epsilon, double delta,
                                                             size_t max_steps, size_t *steps,
                                                             dpc_error *err);

/* ==== zCDP (Bun & Steinke 2016) ============================================================= */

/* rho of the Gaussian mechanism: sensitivity^2 / (2 sigma^2) (Prop. 1.6); holds for the
 * relation under which `sensitivity` is measured. zCDP composes by adding rho (Lemma 2.3). */
DPC_API DPC_NODISCARD dpc_status dpc_zcdp_rho_gaussian(double sensitivity, double sigma,
                                                       double *rho, dpc_error *err);

/* rho-zCDP -> (eps, delta)-DP, for any relation. rho >= 0, delta in (0, 1). For TIGHT the
 * optimal Renyi order is written to *alpha (may be NULL; NAN for BUN_STEINKE). */
DPC_API DPC_NODISCARD dpc_status dpc_zcdp_epsilon(double rho, double delta, dpc_zcdp_conv conv,
                                                  double *eps, double *alpha, dpc_error *err);

/* rho-zCDP -> smallest delta for the given eps >= 0 (the inverse of dpc_zcdp_epsilon):
 * TIGHT: inf_a exp((a-1)(a rho - eps)) (1-1/a)^(a-1) / a (CKS 2020, Prop. 12);
 * BUN_STEINKE: exp(-(eps - rho)^2 / (4 rho)) for eps >= rho. */
DPC_API DPC_NODISCARD dpc_status dpc_zcdp_delta(double rho, double eps, dpc_zcdp_conv conv,
                                                double *delta, dpc_error *err);

/* (eps, delta) -> the largest rho whose conversion gives eps (every smaller rho also does):
 * the smallest privacy cost one must guarantee. BUN_STEINKE in closed form,
 * sqrt(rho) = sqrt(log(1/delta) + eps) - sqrt(log(1/delta)); TIGHT by bisection. */
DPC_API DPC_NODISCARD dpc_status dpc_zcdp_rho_for(double eps, double delta, dpc_zcdp_conv conv,
                                                  double *rho, dpc_error *err);

/* The noise multiplier z of `count` composed Gaussian mechanisms whose total is rho-zCDP:
 * count / (2 z^2) = rho, z = sqrt(count / (2 rho)). rho > 0, count >= 1. */
DPC_API DPC_NODISCARD dpc_status dpc_zcdp_sigma_for(double rho, size_t count, double *sigma,
                                                    dpc_error *err);

/* ==== Gaussian DP (Dong, Roth & Su 2022) ==================================================== */

/* mu of the Gaussian mechanism: sensitivity / sigma. Composition: mu = sqrt(sum mu_i^2). */
DPC_API DPC_NODISCARD dpc_status dpc_gdp_mu_gaussian(double sensitivity, double sigma, double *mu,
                                                     dpc_error *err);

/* mu-GDP -> delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (DRS Cor. 2.13),
 * exactly (log-space), for eps >= 0, mu > 0. Any relation. */
DPC_API DPC_NODISCARD dpc_status dpc_gdp_delta(double mu, double eps, double *delta,
                                               dpc_error *err);
/* Inverse: the smallest eps with delta(eps) <= delta, delta in (0, 1). */
DPC_API DPC_NODISCARD dpc_status dpc_gdp_epsilon(double mu, double delta, double *eps,
                                                 dpc_error *err);
/* The largest mu with delta(eps; mu) <= delta (eps > 0 or eps = 0, delta in (0, 1)). */
DPC_API DPC_NODISCARD dpc_status dpc_gdp_mu_for(double eps, double delta, double *mu,
                                                dpc_error *err);

/* The noise multiplier z of `count` composed Gaussian mechanisms whose total is mu-GDP:
 * sqrt(count) / z = mu, z = sqrt(count) / mu. mu > 0, count >= 1. */
DPC_API DPC_NODISCARD dpc_status dpc_gdp_sigma_for(double mu, size_t count, double *sigma,
                                                   dpc_error *err);

/* ==== Renyi DP ============================================================================== */

/* The default order grid (orders > 1): 1.05..1.95 step 0.05, 2..11.75 step 0.25, 12..63,
 * 64..256 step 8, 320, 384, 448, 512, 768, 1024, 2048, 4096. Static storage. */
DPC_API void dpc_rdp_default_orders(const double **orders, size_t *n);

/* RDP of the Gaussian mechanism with noise multiplier z = sigma / sensitivity:
 * a / (2 z^2) (Mironov 2017, Prop. 7). Any relation.                          rdp: (n) */
DPC_API DPC_NODISCARD dpc_status dpc_rdp_gaussian(double z, const double *orders, size_t n,
                                                  double *rdp, dpc_error *err);

/* RDP of the Poisson-subsampled Gaussian (rate q in [0, 1], noise multiplier z), ADD_REMOVE or
 * ZERO_OUT: Mironov, Talwar & Zhang 2019, Sec. 3.3 (integer orders: the binomial expansion;
 * fractional orders: the two-sided series), computed in log space. A fractional order that
 * cannot be evaluated to double accuracy (z so small that (a+2)^2 / (2 z^2) > 1e10, where the
 * series' terms cancel beyond rounding) gets INFINITY, the vacuous bound; integer orders are
 * exact for every z. Work: O(a) terms per order.                               rdp: (n) */
DPC_API DPC_NODISCARD dpc_status dpc_rdp_poisson_gaussian(double q, double z,
                                                          const double *orders, size_t n,
                                                          double *rdp, dpc_error *err);

/* RDP of the Gaussian on a uniformly random fixed-size batch (q = B/n), REPLACE_ONE, with z the
 * noise multiplier w.r.t. the replace-one sensitivity: Wang, Balle & Kasiviswanathan 2019,
 * Thm. 9 at integer orders; fractional orders by the convexity of (a-1) D_a in a (linear
 * interpolation between the neighbouring integers, an upper bound).            rdp: (n) */
DPC_API DPC_NODISCARD dpc_status dpc_rdp_wor_gaussian(double q, double z, const double *orders,
                                                      size_t n, double *rdp, dpc_error *err);

/* RDP curve -> (eps, delta): eps = min_a rdp_a + log1p(-1/a) - log(delta a)/(a - 1)
 * (Canonne, Kamath & Steinke 2020, Prop. 12; Asoodeh et al. 2021), clamped at 0; *order (may be
 * NULL) receives the minimizing order. RDP curves compose by adding them order-wise. */
DPC_API DPC_NODISCARD dpc_status dpc_rdp_epsilon(const double *orders, const double *rdp,
                                                 size_t n, double delta, double *eps,
                                                 double *order, dpc_error *err);
/* The inverse: delta = min_a exp((a-1)(rdp_a - eps)) (1-1/a)^(a-1) / a, clamped at 1. */
DPC_API DPC_NODISCARD dpc_status dpc_rdp_delta(const double *orders, const double *rdp, size_t n,
                                               double eps, double *delta, double *order,
                                               dpc_error *err);

/* ==== Privacy loss distributions ============================================================ */

/* A discretized PLD for the ADD_REMOVE (equivalently ZERO_OUT) relation: one distribution of
 * the privacy loss per direction ("remove": P = output with the record, Q = without; "add": the
 * reverse). delta(eps) is the maximum over the two directions. Immutable once built. */
typedef struct dpc_pld dpc_pld;

typedef struct dpc_pld_params {
    double interval;   /* loss grid step h > 0 (default 1e-4) */
    double tail;       /* mass truncated at each end per composition, in (0, 1e-3] (default
                          1e-15); pessimistic modes add the upper part to the mass at +inf */
    dpc_pld_disc disc; /* default CONNECT_DOTS */
} dpc_pld_params;

/* Sets the defaults named above: interval 1e-4, tail 1e-15, CONNECT_DOTS. */
DPC_API void dpc_pld_params_init(dpc_pld_params *p);
/* The field table of dpc_pld_params (dpcorr/field.h): name, type, offset, default, range and
 * one-line doc of every field; dpc_pld_params_init writes its defaults and the PLD builders
 * range-check through it (errors name "interval", "tail", "disc"). */
DPC_API const dpc_field_table *dpc_pld_params_fields(void);

/* PLD of the Poisson-subsampled Gaussian with rate q in (0, 1] (q = 1: the plain Gaussian) and
 * noise multiplier z > 0. Losses L(x) = +-log(1 - q + q exp((2x - 1)/(2 z^2))) on the grid
 * h Z; mass beyond tail*1e-5 quantiles is moved pessimistically (or dropped when optimistic). */
DPC_API DPC_NODISCARD dpc_status dpc_pld_new_gaussian(dpc_pld **out, double z, double q,
                                                      const dpc_pld_params *p, dpc_error *err);
/* Composition of two PLDs built with the same interval and discretization (FFT convolution). */
DPC_API DPC_NODISCARD dpc_status dpc_pld_compose(dpc_pld **out, const dpc_pld *a,
                                                 const dpc_pld *b, dpc_error *err);
/* count-fold self-composition (count >= 1): one FFT power of the distribution inside a window
 * that holds all but `tail` of the composed mass at each end (Chernoff bounds from the
 * distribution's moment generating function); the circular convolution aliases the mass outside
 * the window into it, and pessimistic modes add the upper-tail bound to the mass at +inf.
 * DPC_E_RANGE (naming the interval that would fit) when the window exceeds 2^24 points.
 * Floating point: the FFT resolves probabilities down to ~count * 1e-16 of the peak; below that
 * the clamped round-off makes delta pessimistic (relevant only for tiny delta on long runs). */
DPC_API DPC_NODISCARD dpc_status dpc_pld_self_compose(dpc_pld **out, const dpc_pld *a,
                                                      size_t count, dpc_error *err);
DPC_API void dpc_pld_free(dpc_pld *pld);

/* delta(eps) = max over directions of P(L = inf) + E[(1 - e^(eps - L))_+], eps >= 0. */
DPC_API DPC_NODISCARD dpc_status dpc_pld_delta(const dpc_pld *pld, double eps, double *delta,
                                               dpc_error *err);
/* The smallest eps >= 0 with delta(eps) <= delta (exact on the discrete PLD); INFINITY when the
 * mass at infinite loss exceeds delta. */
DPC_API DPC_NODISCARD dpc_status dpc_pld_epsilon(const dpc_pld *pld, double delta, double *eps,
                                                 dpc_error *err);
/* Number of grid points stored (both directions), and the mass at infinite loss (max). */
DPC_API size_t dpc_pld_size(const dpc_pld *pld);
DPC_API double dpc_pld_infinity_mass(const dpc_pld *pld);

/* ==== Correlated-noise mechanisms =========================================================== */

/* Accounting routes for a mechanism run (dpc_account_mech_epsilon picks the best valid one). */
typedef enum dpc_mech_route {
    DPC_ROUTE_WHOLE_RUN = 0, /* one Gaussian with the pattern's sensitivity: no amplification */
    DPC_ROUTE_BANDMF = 1,    /* amplified banded MF (Choquette-Choo et al. 2023): b-banded C under
                                cyclic Poisson sampling = DP-SGD with ceil(n/b) rounds */
    DPC_ROUTE_MMCC = 2,      /* conditional composition of per-row mixtures of Gaussians
                                (Choquette-Choo, Ganesh, Steinke & Thakurta 2024): Poisson
                                sampling at every step, any nonnegative strategy C */
    DPC_ROUTE_BALLS_IN_BINS = 3 /* balls-in-bins sampling (one uniformly random step per period,
                                the same every period): the dominating pair (1/b) sum_j
                                N(C x_j, s^2) vs N(0, s^2) — exact random-allocation bound for
                                the identity (DP-SGD), importance-sampled Monte Carlo with an
                                upper confidence bound for any other nonnegative C */
} dpc_mech_route;

#define DPC_ROUTE_COUNT 4

/* "whole-run", "bandmf", "mmcc", "balls-in-bins". */
DPC_API const char *dpc_mech_route_name(dpc_mech_route r);

/* The noise multiplier z: one meaning in the whole library, the CLI, the bindings and every
 * report. A run of mechanism m releases C G + Z; each entry of Z has standard deviation
 *     noise_std = z * clip * column_norm(C),
 * column_norm(C) = the max column norm of C = the sensitivity of ONE participation per unit clip.
 * For DP-SGD (C = I, column norm 1) z is the usual per-step noise multiplier (noise std z * clip
 * on every step's gradient sum, as in Opacus, dp_accounting and jax_privacy). For a correlated
 * mechanism z is the noise std per row of Z divided by clip x the per-participation
 * sensitivity of C. The accountant turns (m, participation, z, q) into the event that is
 * accounted:
 *  - no sampling (q = 1): the whole run is ONE Gaussian mechanism with sensitivity
 *    clip * sens(C, participation) (all participations) and noise std noise_std, i.e. noise
 *    multiplier run_sigma = z * column_norm / sens(C, participation): rho = 1/(2 run_sigma^2)
 *    zCDP, mu = 1/run_sigma GDP (Denisov et al. 2022; nu-DP-FTRL Thm. 1.1), any relation for
 *    which `part` bounds the participations (ZERO_OUT in the MF literature);
 *  - Poisson sampling (0 < q < 1), amplified banded MF (Choquette-Choo et al. 2023, Sec. 4):
 *    requires `part` CYCLIC with period b and a strategy C with at most b bands; the run is then
 *    the min(k, ceil(n/b))-fold composition of the Poisson-subsampled Gaussian (rate q) with
 *    noise multiplier z, for ADD_REMOVE / ZERO_OUT. */
typedef struct dpc_account_mech_info {
    double sensitivity;       /* sens(C, participation) per unit clip (all participations) */
    int sensitivity_exact;    /* 1 exact, 0 an upper bound (the guarantee still holds) */
    double column_norm;       /* max column norm of C: one participation's sensitivity */
    int amplified;            /* 1: amplified by sampling, 0: whole-run Gaussian */
    size_t rounds;            /* amplified: compositions min(k, ceil(n/b)); else 1 */
    double noise_multiplier;  /* z */
    double noise_std;         /* std of each entry of Z per unit clip: z * column_norm */
    double run_sigma;         /* noise_std / sensitivity: the whole-run noise multiplier */
    dpc_mech_route route;     /* the route whose epsilon is reported (WHOLE_RUN or BANDMF from
                                 dpc_account_mech_event; any from dpc_account_mech_epsilon) */
    double delta_slack;       /* MMCC: the part of delta spent on its conditioning events */
    double eps_routes[DPC_ROUTE_COUNT]; /* epsilon by each route (INFINITY: not applicable),
                                 indexed by dpc_mech_route; filled by dpc_account_mech_epsilon */
    size_t mc_samples;        /* balls-in-bins Monte Carlo (route BALLS_IN_BINS, C not the
                                 identity): samples per direction; 0 when the route is exact */
    double mc_confidence;     /* ... the confidence of its upper bound (1 - 1e-6); NAN if exact */
    uint64_t mc_seed;         /* ... the key of its draws, derived from the configuration */
    const char *note;         /* static text: why an amplification route did not apply to a
                                 sampled run (e.g. negative entries in C), or NULL */
    const char *route_why[DPC_ROUTE_COUNT]; /* filled by dpc_account_mech_epsilon: for each route
                                 whose eps_routes entry is INFINITY, one static line saying why
                                 ("not applicable: ...", "stopped by the work limit: ...",
                                 "numerically infinite: ..."); NULL where the route answered */
    double epsilon_single;    /* epsilon of ONE participation without amplification (the
                                 Gaussian with mu = 1/z: what the noise gives a record seen once;
                                 NAN when not computed) */
    const char *advice;       /* static text when the reported epsilon is more than 10x
                                 epsilon_single: what would amplify better (NULL otherwise) */
    int bib_deterministic;    /* route BALLS_IN_BINS: 1 when its epsilon is a deterministic
                                 (sampling-free) bound, 0 when it is the Monte Carlo's upper
                                 confidence bound (confidence mc_confidence) */
    double eps_bib_mc;        /* the Monte Carlo epsilon computed beside the sampling-free bound
                                 (C not the identity; NAN when not run) */
    double bib_mu;            /* the balls-in-bins bound of C the identity (exact): random
                                 allocation over b bins of one Gaussian with this mu = sqrt(k) / z,
                                 k = min(part.k, ceil(n / b)) periods (each a unit-sensitivity
                                 Gaussian of std z, composed); NAN when that bound was not
                                 computed */
} dpc_account_mech_info;

/* Builds the event equivalent to running mechanism m with participation `part`, noise
 * multiplier z (above) and Poisson rate q (1 = no sampling). DPC_E_UNSUPPORTED when
 * amplification is requested for a strategy that is not banded enough (dpc_account_mech_epsilon
 * then accounts it by MMCC or the whole-run route). `info` may be NULL. */
DPC_API DPC_NODISCARD dpc_status dpc_account_mech_event(const dpc_mech *m,
                                                        const dpc_participation *part,
                                                        double noise_multiplier, double q,
                                                        dpc_gauss_event *ev,
                                                        dpc_account_mech_info *info,
                                                        dpc_error *err);

#define DPC_MECH_RUN_MAX_PRE 16 /* pre-releases a run may compose (dpc_mech_run.pre) */

/* A mechanism run as the sampler describes it. */
typedef struct dpc_mech_run {
    const dpc_mech *mech;    /* borrowed */
    dpc_participation part;  /* participation pattern of one example (sensitivity convention) */
    double q;                /* Poisson rate in each step the pattern allows; 1: no sampling */
    int balls_in_bins;       /* 1: each example takes part in one uniformly random step of each
                                period part.b, the same position every period (balls in bins);
                                q must be 1. Accounted by the whole-run route (which holds for
                                any placement) and the BALLS_IN_BINS route (amplification) */
    const dpc_gauss_event *pre; /* (n_pre) releases of the same records composed with the run:
                                   private data statistics published before training (e.g.
                                   dpc_features_center_private), each a Gaussian without
                                   sampling (sampling NONE) under both relations; NULL if none */
    size_t n_pre;
} dpc_mech_run;

/* Epsilon at delta of the run with noise multiplier z (noise std per row of Z = z * clip *
 * column_norm(C), above) by every valid route, reporting the smallest (each is an upper
 * bound, so the minimum is one):
 *   WHOLE_RUN  always (GDP, exact for the one Gaussian, when o asks for PLD or RDP; zCDP if asked);
 *   BANDMF     q < 1, part CYCLIC with period b, C at most b-banded; RDP or PLD;
 *   MMCC       q < 1, part CYCLIC with period 1 (Poisson at every step), C >= 0 entrywise
 *              (identity, nu, BLT, BSR, tree, lambda-CGD with lambda >= 0, nonnegative Toeplitz,
 *              dense or file strategies), n <= 4096 (banded Toeplitz C, e.g. BSR: n x bands
 *              <= 4096^2); PLD only. Add/remove and zero-out. Its cost is estimated before
 *              any work: above DPC_WORK_LIMIT (too little noise for its per-row mixtures) it
 *              is refused at once (route_why "stopped by the work limit ..."). Its grid is
 *              chosen from a coarse first pass (max(o->pld_interval, 1e-5 epsilon)).
 *   BALLS_IN_BINS  balls_in_bins = 1, part CYCLIC with period b (the bins) and k participations;
 *              PLD or RDP asked for. Identity (DP-SGD): the random allocation of one Gaussian
 *              with mu = sqrt(k)/z among b steps, a deterministic upper bound (connect-the-dots
 *              spread + FFT sums, doc/accounting.md). Other C >= 0 (n <= 4096, b <= 256):
 *              importance-sampled Monte Carlo of the dominating pair, an upper confidence bound
 *              at confidence 1 - 1e-6 with 2^17 samples per direction and draws keyed by the
 *              configuration (info->mc_*). Add/remove and zero-out. Strategies with a negative
 *              entry get neither MMCC nor this route (doc/accounting.md explains why).
 * The pre-releases (run->pre) are composed into the WHOLE_RUN route (exact GDP composition)
 * and the BANDMF route (the accountant's composition); MMCC and BALLS_IN_BINS do not compose
 * them and are skipped when n_pre > 0 (the other routes still give an upper bound).
 * res->upper_bound = 1; info (may be NULL) names the route and every route's epsilon. */
DPC_API DPC_NODISCARD dpc_status dpc_account_mech_epsilon(const dpc_mech_run *run,
                                                          double noise_multiplier,
                                                          const dpc_account_opts *o,
                                                          double delta,
                                                          dpc_account_result *res,
                                                          dpc_account_mech_info *info,
                                                          dpc_error *err);

/* Smallest noise multiplier z for which the run is (epsilon, delta)-DP by the best route: the
 * minimum over the valid routes of each route's calibrated z (epsilon is monotone in z on every
 * route), on the private side. info (may be NULL) describes the result at that z.
 * With pre-releases (fixed noise) the run's z is found by secant steps on log z from the
 * calibration without them (a lower bound on z), to within a relative 5e-5 of epsilon on the
 * private side; DPC_E_PRIVACY when the pre-releases alone spend epsilon. */
DPC_API DPC_NODISCARD dpc_status dpc_account_mech_calibrate_run(const dpc_mech_run *run,
                                                                const dpc_account_opts *o,
                                                                double epsilon, double delta,
                                                                double *noise_multiplier,
                                                                dpc_account_mech_info *info,
                                                                dpc_error *err);

/* The smallest noise multiplier z for which the mechanism run (as in dpc_account_mech_event) is
 * (epsilon, delta)-DP under accountant o. ev and info (either may be NULL) receive the event and
 * the description of the calibrated run, computed from the calibrated value itself (so that
 * info->noise_std is exactly the noise a trainer adds and ev exactly what it accounts). */
DPC_API DPC_NODISCARD dpc_status dpc_account_mech_calibrate(const dpc_mech *m,
                                                            const dpc_participation *part,
                                                            double q, const dpc_account_opts *o,
                                                            double epsilon, double delta,
                                                            double *noise_multiplier,
                                                            dpc_gauss_event *ev,
                                                            dpc_account_mech_info *info,
                                                            dpc_error *err);

/* The largest number of steps n <= max_steps for which mechanism kind `p` (its parameters; p->steps
 * is ignored: the mechanism is rebuilt for every candidate n, since C and hence its sensitivity
 * depend on n) run with participation `part`, noise multiplier z and rate q is (epsilon,
 * delta)-DP under o. Exponential then binary search over n (epsilon grows with n for every
 * kind). DPC_E_PRIVACY when even one step exceeds the budget; DENSE has one n only:
 * DPC_E_UNSUPPORTED. */
DPC_API DPC_NODISCARD dpc_status dpc_account_mech_steps(const dpc_mech_params *p,
                                                        const dpc_participation *part,
                                                        double noise_multiplier, double q,
                                                        const dpc_account_opts *o,
                                                        double epsilon, double delta,
                                                        size_t max_steps, size_t *steps,
                                                        dpc_error *err);

/* ==== Accounting queries: one description, the library's defaults ========================= */

/* What a query solves for: the other three of epsilon, delta, sigma, steps are given. */
typedef enum dpc_account_mode {
    DPC_ACCOUNT_MODE_EPSILON = 0, /* the smallest epsilon at delta */
    DPC_ACCOUNT_MODE_DELTA = 1,   /* the smallest delta at epsilon (>= 0) */
    DPC_ACCOUNT_MODE_SIGMA = 2,   /* the smallest noise multiplier for (epsilon > 0, delta) */
    DPC_ACCOUNT_MODE_STEPS = 3,   /* the largest number of steps for (epsilon > 0, delta) */
    DPC_ACCOUNT_MODE_CONVERT = 4  /* zCDP / GDP: rho (mu) with delta -> epsilon, with epsilon ->
                                     delta, or epsilon and delta -> the largest rho (mu); and the
                                     noise multiplier of `steps` Gaussians with that total */
} dpc_account_mode;

/* "epsilon", "delta", "sigma", "steps", "convert". */
DPC_API const char *dpc_account_mode_name(dpc_account_mode m);

/* An enum field of dpc_account_query left to the library (resolved by the rules below). */
#define DPC_ACCOUNT_AUTO (-1)

/* One accounting question, as every front end asks it (`dpcorr account`, dpcorr.account). Fields
 * a mode does not read are ignored (dpc_account_query_uses names those it reads).
 *
 * The library's defaults (dpc_account_query_resolve applies them; this is their manual):
 *   neighbor    AUTO: ZERO_OUT with a mechanism (the MF literature's relation), else ADD_REMOVE.
 *   sampling    without a mechanism and q < 1: AUTO is POISSON; q = 1: NONE (any value).
 *               With a mechanism it is not read (the mechanism's run says how it samples).
 *   accountant  AUTO: GDP for a mechanism with q = 1 and no balls-in-bins (one Gaussian release,
 *               exact); RDP for FIXED sampling (the only accountant for it); otherwise
 *               dpc_account_default_accountant() (PLD).
 *   the run of a mechanism (modes epsilon and sigma): with balls_in_bins = B > 0, one step per
 *               period of B, ceil(steps / B) periods (`part` is not read); with q < 1 and `part`
 *               not CYCLIC, Poisson sampling at every step (CYCLIC, period 1, k = steps; `part` not
 *               read); otherwise `part`. Sampled (q < 1) and balls-in-bins runs are accounted by
 *               the best valid route (dpc_account_mech_epsilon, _calibrate_run); the other runs
 *               by their event (dpc_account_mech_event). Modes delta and steps always use `part`.
 *   mech.bands  BSR / BISR with bands 0: dpc_mech_default_bands(steps, run k, run b), as the
 *               trainer; mode steps refuses bands 0 (the bands would change with every n).
 *   max_steps   mode steps, 0: 10^7.
 *   sigma       mode sigma: set to 1 (the unit event the calibration scales).
 *   mode convert  accountant AUTO: GDP when mu is given, else ZCDP (only these two); steps 0: 1;
 *               no event is read (sigma, q, sampling, neighbor, sensitivity, mech are ignored).
 * Required: mode epsilon: sigma, steps, delta; delta: sigma, steps, epsilon; sigma: steps,
 * epsilon > 0, delta; steps: sigma, epsilon > 0, delta (a mechanism's n is searched); convert:
 * rho (mu) and exactly one of epsilon and delta, or no rho (mu) and both (DPC_E_INVALID naming
 * "rho" / "mu"). A missing value (NAN, 0 steps) is DPC_E_INVALID naming the field ("required in
 * mode <mode>"). */
typedef struct dpc_account_query {
    dpc_account_mode mode;
    double sigma;          /* noise multiplier z (with a mechanism: noise std per row of Z /
                              (clip x column_norm(C))); NAN: not given (default) */
    size_t steps;          /* compositions; with a mechanism its n; 0: not given (default) */
    double epsilon;        /* NAN: not given (default) */
    double delta;          /* NAN: not given (default) */
    double rho, mu;        /* mode convert: the zCDP / GDP total (NAN: not given, default) */
    double q;              /* sampling rate in (0, 1] (default 1: no sampling) */
    int sampling;          /* a dpc_sampling or AUTO (default AUTO) */
    int neighbor;          /* a dpc_neighbor or AUTO (default AUTO) */
    double sensitivity;    /* L2 sensitivity under `neighbor` without a mechanism (default 1) */
    int accountant;        /* a dpc_accountant or AUTO (default AUTO) */
    dpc_account_opts opts; /* the accountant's options (dpc_account_opts_init's defaults);
                              opts.accountant is set from `accountant` by resolve */
    size_t max_steps;      /* mode steps: the largest answer searched (0: the default 10^7) */
    int with_mech;         /* 1: the run is mechanism `mech` (default 0: Gaussian events) */
    dpc_mech_params mech;  /* its parameters (dpc_mech_params_init; mech.steps is set from
                              `steps`; arrays borrowed) */
    dpc_participation part;/* its participation pattern (default MINSEP, k = 1, b = 1) */
    size_t balls_in_bins;  /* modes epsilon, sigma with a mechanism: B > 0 is balls-in-bins
                              sampling over B steps per period (q must be 1); 0: none */
    /* derived by dpc_account_query_resolve (inputs ignored): */
    int part_used;         /* 1: `part` is the run's pattern (a mechanism, rules above) */
    int every_route;       /* 1: a sampled or balls-in-bins mechanism run, by the best route */
} dpc_account_query;

/* Defaults for `mode`, as listed in the field comments. Example (DP-SGD, as above):
 *     dpc_account_query q;  dpc_account_query_init(&q, DPC_ACCOUNT_MODE_EPSILON);
 *     q.sigma = 1.1; q.q = 0.01; q.steps = 10000; q.delta = 1e-5;
 *     dpc_account_solution s;
 *     if (dpc_account_query_solve(&q, &s, &err) == DPC_OK) printf("%g\n", s.result.epsilon); */
DPC_API void dpc_account_query_init(dpc_account_query *q, dpc_account_mode mode);
/* The field table of dpc_account_query (dpcorr/field.h): dpc_account_query_init writes its
 * defaults (NAN "not given", AUTO, the nested tables' own; opts.accountant the library's
 * default) and dpc_account_query_resolve range-checks through it mode, q, sampling, neighbor,
 * accountant and every value of the question the mode reads (sigma, steps, epsilon, delta, rho,
 * mu, sensitivity, max_steps, balls_in_bins). */
DPC_API const dpc_field_table *dpc_account_query_fields(void);

/* Replaces every AUTO and 0-default field of q by the library's value (the rules above), derives
 * part_used and every_route, and validates what the mode needs (DPC_E_INVALID naming the field:
 * "mode", "steps", "sigma", "epsilon", "delta", "q", "balls_in_bins", "mech.bands", "neighbor",
 * "sampling", "accountant", "rho", "mu", "sensitivity", "max_steps"; each value the mode reads
 * against its row of dpc_account_query_fields: sigma and sensitivity > 0, steps, max_steps and
 * balls_in_bins at most DPC_ACCOUNT_MAX_COUNT, delta in (0, 1), epsilon and rho >= 0, mu > 0).
 * Idempotent: resolving a resolved query changes nothing. The mechanism is range-checked by
 * dpc_mech_new, the pattern by its sensitivity, the accountant options by the accountant (all
 * through dpc_account_query_solve). */
DPC_API DPC_NODISCARD dpc_status dpc_account_query_resolve(dpc_account_query *q,
                                                           dpc_error *err);

/* 1 if the query reads `field` (the dpc_account_query / dpc_account_opts field name: "sigma",
 * "steps", "epsilon", "delta", "max_steps", "sampling", "sensitivity", "part", "balls_in_bins",
 * "bib_monte_carlo", "orders", "rdp_refine", "pld_interval", "pld_tail", "pld_disc",
 * "zcdp_conv"), 0 if the configuration ignores it (front ends refuse a value given for it).
 * Decided by the rules above on q's mode, q, with_mech, part.kind, balls_in_bins and the
 * accountant AUTO resolves to (q need not be resolved). */
DPC_API int dpc_account_query_uses(const dpc_account_query *q, const char *field);

/* The answer to a query. */
typedef struct dpc_account_solution {
    dpc_account_result result; /* epsilon, delta (and order, rho, mu) of the run answered */
    double sigma;              /* the noise multiplier (given, or found in mode sigma) */
    size_t steps;              /* the number of steps (given, or found in mode steps) */
    dpc_account_opts opts;     /* the accountant options used (mode sigma: the calibration's
                                  grid, dpc_account_opts_for_target) */
    int have_info;             /* 1: a mechanism run; info and part describe it */
    dpc_account_mech_info info;
    dpc_participation part;    /* the pattern the run was accounted with (at `steps`) */
} dpc_account_solution;

/* Resolves a copy of q (dpc_account_query_resolve) and answers it with the library's accounting
 * functions (mode convert: dpc_zcdp_* / dpc_gdp_*, result.rho / mu, sigma for `steps`): without a mechanism dpc_account_epsilon / _delta / _calibrate_sigma /
 * _calibrate_steps on the query's event; with one, dpc_account_mech_epsilon or
 * _calibrate_run (every_route) or dpc_account_mech_event / _calibrate / _steps. Modes sigma and
 * steps then report the epsilon of the answer (mode sigma on the calibration's grid). Errors of
 * the event name its fields as dpc_event does ("parts[0].sigma"). */
DPC_API DPC_NODISCARD dpc_status dpc_account_query_solve(const dpc_account_query *q,
                                                         dpc_account_solution *out,
                                                         dpc_error *err);

/* The answer as one JSON object on one line, the record of every front end (`dpcorr account
 * --json`, dpcorr.account's details): "mode", "accountant", "epsilon", "delta", "sigma",
 * "steps", "q", "neighbor"; "order" (RDP), "rho" (zCDP), "mu" (GDP), "interval",
 * "discretization" and "rdp_order" when RDP answered (PLD); for a mechanism run "mech",
 * "participations" and "min_sep" (the run's pattern), the dpc_account_mech_info fields
 * ("noise_std_per_unit_clip" = noise_std), "route", and for every-route runs "epsilon_<route>",
 * "why_<route>", "epsilon_single", "advice", "bins", the Monte Carlo's "mc_*", "guarantee",
 * "epsilon_mc", "note"; last "upper_bound". NAN is null, infinities "inf" / "-inf". q is the
 * resolved query the solution answers. Writes at most len bytes including the NUL (like
 * snprintf) and returns the length of the full text. */
DPC_API size_t dpc_account_solution_json(const dpc_account_query *q,
                                         const dpc_account_solution *s, char *buf, size_t len);

/* ==== Calibration choice and the privacy ledger =========================================== */

/* How a trainer chooses its noise for a target (epsilon, delta). Every reported epsilon is the
 * accountant's for exactly what ran; the choice only decides the noise. */
typedef enum dpc_calibration {
    DPC_CALIBRATION_ACCOUNTANT = 0, /* the smallest noise the accountant certifies (default) */
    DPC_CALIBRATION_PAPER = 1       /* the paper's own closed form (named in the ledger) */
} dpc_calibration;

DPC_API const char *dpc_calibration_name(dpc_calibration c); /* "accountant", "paper" */
DPC_API DPC_NODISCARD dpc_status dpc_calibration_parse(const char *s, dpc_calibration *out,
                                                       dpc_error *err);


#define DPC_LEDGER_MAX_PRE 4 /* pre-releases a ledger lists */

/* What was accounted, exactly for what ran: one record for every trainer of the library (the
 * DP-FTRL trainer of dpcorr/train.h and the papers' algorithms). Strings are NUL-terminated;
 * numbers are NAN where a field does not apply (counts 0). */
typedef struct dpc_ledger {
    char algorithm[32];         /* "dp-ftrl" (DP-SGD is its identity mechanism), "lcgd-projected",
                                   "dp-ambssgd", "dp-ssgd", "dp-srgd", ... */
    char mechanism[96];         /* dpc_mech_describe of the noise mechanism */
    char sampler[32];           /* batch selection ("poisson", "fixed", "uniform", "disjoint") */
    char route[96];             /* how the run maps to an event, e.g. "amplified by sampling" */
    char accountant[8];         /* dpc_accountant_name of the accountant that gave epsilon */
    char calibration[64];       /* how the noise was chosen: "accountant" (calibrated to
                                   epsilon_target), "given" (noise multiplier given), or
                                   "paper: <source>" (a paper's closed form, then accounted) */
    dpc_neighbor neighbor;      /* the relation the guarantee holds for */
    dpc_participation part;     /* participation pattern of one example */
    double q;                   /* sampling rate (1 = none) */
    size_t rounds;              /* compositions of the amplified route (1 otherwise) */
    int amplified;
    double noise_multiplier;    /* z: noise std per row of Z / (clip x column_norm) */
    double sensitivity;         /* sens(C, pattern) per unit clip (all participations) */
    int sensitivity_exact;
    double column_norm;         /* one participation's sensitivity per unit clip */
    double noise_std;           /* std of each entry of Z per unit clip (z x column_norm) */
    double epsilon_target;      /* NAN when the noise multiplier was given */
    double delta;
    double epsilon;             /* of the full run, by `accountant` */
    double epsilon_paper;       /* the paper's own closed form for the same run (NAN if none) */
    size_t steps;               /* n */
    size_t steps_per_epoch;
    double expected_batch;
    dpc_rng_mode rng_mode;
    uint64_t seed;              /* seeded mode only */
    char note[160];             /* why a route was not available when it matters (e.g. a strategy
                                   with negative entries under balls-in-bins or Poisson sampling:
                                   no amplification route, doc/accounting.md); "" otherwise */
    size_t mc_samples;          /* route balls-in-bins by Monte Carlo: samples per direction (0:
                                   no Monte Carlo), its confidence (NAN) and the key of its draws */
    double mc_confidence;
    uint64_t mc_seed;
    char guarantee[48];         /* route balls-in-bins: "deterministic" or "high-probability,
                                   confidence c" (the Monte Carlo's); "" for other routes */
    double epsilon_mc;          /* balls-in-bins: the Monte Carlo epsilon computed beside the
                                   deterministic bound (NAN: none) */
    size_t n_pre;               /* releases of the same records composed into epsilon before the
                                   run (private data statistics, dpc_mech_run.pre; 0: none) */
    double pre_noise_multiplier[DPC_LEDGER_MAX_PRE]; /* their noise multipliers (Gaussian, no
                                                        sampling) */
    double epsilon_pre;         /* epsilon of the pre-releases alone at delta (NAN: none) */
    int delta_derived;          /* 1: delta was not given and is dpc_account_default_delta(N) */
    double eps_routes[DPC_ROUTE_COUNT]; /* epsilon by every route (dpc_account_mech_info; NAN:
                                   not computed by this trainer) */
    const char *route_why[DPC_ROUTE_COUNT]; /* static text: why a route gave no epsilon */
    double epsilon_single;      /* one participation, no amplification (NAN: not computed) */
    const char *advice;         /* static text when epsilon > 10x epsilon_single, else NULL */
} dpc_ledger;

/* Empty ledger: strings "", numbers NAN, counts 0, q 1, rounds 1. */
DPC_API void dpc_ledger_init(dpc_ledger *L);
/* The field table of dpc_ledger (dpcorr/field.h): every field's name, type, offset, default and
 * one-line doc (all set by the library: DPC_FIELD_DERIVED); dpc_ledger_init writes its defaults
 * (and NAN into every eps_routes entry). */
DPC_API const dpc_field_table *dpc_ledger_fields(void);

/* The ledger as one JSON object (keys = the field names; participation as "participation",
 * "participations", "separation"; the noise multiplier also as "sigma", its conventional name
 * in accountants; NAN as null, infinities as strings; "note" only when set, "mc_samples",
 * "mc_confidence", "mc_seed" only for a Monte Carlo route; "guarantee" when set, "epsilon_mc"
 * when not NAN; "delta_derived": true only when set; "routes" (an object: each route's epsilon or
 * its reason) when eps_routes were computed, "epsilon_single", "advice" when set; "pre_noise_multipliers" (array) and
 * "epsilon_pre" only when n_pre > 0). Writes at most len bytes including the
 * NUL (like snprintf) and returns the length of the full text. */
DPC_API size_t dpc_ledger_json(const dpc_ledger *L, char *buf, size_t len);
/* The report's "privacy" member (the ledger's JSON), then "telemetry" (what the caller says of
 * its unprivatized telemetry), "dp_outputs" and "not_dp": what the guarantee covers, field by
 * field, so a report sitting next to a model is not mistaken for publishable. */
struct dpc_json_writer;
/* The member "key": the ledger's JSON (dpc_ledger_json); null when out of memory. */
DPC_API void dpc_ledger_json_member(struct dpc_json_writer *w, const char *key,
                                    const dpc_ledger *L);
DPC_API void dpc_ledger_report_json(struct dpc_json_writer *w, const dpc_ledger *L,
                                    const char *telemetry);

/* ==== The papers' own calculators =========================================================== */

/* DP-SRGD (Choquette-Choo, Ganesh & Thakurta 2024, Sec. 3 / Lemma 5.6; zero-out relation).
 * The paper's GDP parameter mu = eps / sqrt(2 log(2.5/delta)), which gives (eps, delta/2)-DP by
 * the classical Gaussian-mechanism bound; requires 0 < eps <= 1 and 0 < delta < 1. */
DPC_API DPC_NODISCARD dpc_status dpc_account_srgd_mu_paper(double eps, double delta, double *mu,
                                                           dpc_error *err);
/* Binary-tree noise std on the prefix sums of the SRG increments for mu-GDP:
 * sigma_S = (clip / batch) sqrt(1 + ceil(log2 T)) / mu (Lemma 5.6: each increment lies in at
 * most 1 + ceil(log2 T) tree nodes). T >= 1, batch >= 1, clip > 0, mu > 0. */
DPC_API DPC_NODISCARD dpc_status dpc_account_srgd_tree_sigma(size_t steps, double clip,
                                                             size_t batch, double mu,
                                                             double *sigma, dpc_error *err);

/* DP-AMBSSGD (Varshney, Thakurta & Jain 2022, Thm. 3.6 / Proof B.2; replace-one relation).
 * Per step rho = 1/(2 alpha^2) (gradient) + 1/(2 alpha^2) (DP-STAT) = 1/alpha^2; every record
 * is used in exactly one step, so parallel composition keeps the total at 1/alpha^2 for any
 * number of steps. */
DPC_API DPC_NODISCARD dpc_status dpc_account_ambssgd_rho(double alpha, double *rho,
                                                         dpc_error *err);
/* (eps, delta) of the run: eps = rho + 2 sqrt(rho log(1/delta)) with rho = 1/alpha^2. */
DPC_API DPC_NODISCARD dpc_status dpc_account_ambssgd_epsilon(double alpha, double delta,
                                                             double *eps, dpc_error *err);
/* Noise multiplier for (eps, delta): paper = 0: the exact alpha* = 1/(sqrt(log(1/delta) + eps) -
 * sqrt(log(1/delta))); paper = 1: Thm. 3.7's sqrt(8 log(1/delta))/eps, which requires
 * eps <= log(1/delta). */
DPC_API DPC_NODISCARD dpc_status dpc_account_ambssgd_alpha(double eps, double delta, int paper,
                                                           double *alpha, dpc_error *err);

/* Amplification by shuffling (Feldman, McMillan & Talwar 2021, "Hiding among the clones",
 * Thm. 3.8; replace-one). n records are processed in a uniformly random order, each exactly once,
 * by a (possibly adaptive) (eps0, delta0)-DP local randomiser. Then the whole sequence of outputs
 * is (eps, delta_total)-DP with the closed form of the authors' reference code (Thm. 3.1):
 *     A = 8 sqrt(e^eps0 log(4/delta_s)) / sqrt(n) + 8 e^eps0 / n,
 *     eps = log(1 + (1 - e^-eps0) / (1 + e^(-eps0 - log(1 + A))) * A),
 *     delta_total = delta_s + (e^eps + 1)(1 + e^-eps0 / 2) n delta0,
 * valid only when eps0 <= log(n / (16 log(4/delta_s))) (DPC_E_PRIVACY, with the numbers,
 * otherwise). eps0 > 0, delta0 in [0, 1), delta_s in (0, 1), n >= 1. */
DPC_API DPC_NODISCARD dpc_status dpc_account_shuffle_epsilon(double eps0, double delta0, size_t n,
                                                             double delta_s, double *eps,
                                                             double *delta_total,
                                                             dpc_error *err);
/* DP-SSGD (Varshney, Thakurta & Jain 2022, Algorithm 1 / Thm. 3.1; replace-one): one shuffled
 * pass of single-record steps, each releasing clip_zeta(gradient) + N(0, (2 zeta alpha)^2 I), i.e.
 * a local randomiser with noise multiplier alpha w.r.t. its diameter 2 zeta. Budget split as in
 * the paper's proof: delta_s = delta/2 for the shuffling theorem, and delta0 the largest value
 * with (e^eps + 1)(1 + e^-eps0/2) n delta0 <= delta/2 (so the total is <= delta). eps0 is the
 * Gaussian mechanism's epsilon at delta0: paper = 0: exact (Dong, Roth & Su 2022, mu = 1/alpha);
 * paper = 1: the classical sqrt(2 log(1.25/delta0))/alpha, which requires eps0 < 1.
 * DPC_E_PRIVACY when eps0 is outside the shuffling theorem's range (too little noise for n).
 * Outputs may be NULL except eps. */
DPC_API DPC_NODISCARD dpc_status dpc_account_dpssgd_epsilon(double alpha, size_t n, double delta,
                                                            int paper, double *eps, double *eps0,
                                                            double *delta0, dpc_error *err);
/* The smallest alpha (relative 1e-10, private side) with dpc_account_dpssgd_epsilon <= eps.
 * DPC_E_PRIVACY when no alpha <= 1e9 achieves it. */
DPC_API DPC_NODISCARD dpc_status dpc_account_dpssgd_alpha(double eps, size_t n, double delta,
                                                          int paper, double *alpha,
                                                          dpc_error *err);

/* The KAN DP-lambda-CGD paper's closed forms (dpc_account_kan_paper_indep, _lcgd and their
 * inverses) are the paper's: dpcorr/papers/kan.h, section 5. */

#ifdef __cplusplus
}
#endif
#endif /* DPCORR_ACCOUNT_H */
