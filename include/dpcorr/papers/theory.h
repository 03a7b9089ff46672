/* dpcorr/papers/theory.h — stationary-error theory of Noisy-SGD / DP-FTRL with Toeplitz noise
 * coefficients (Choquette-Choo, Dvijotham, Pillutla, Ganesh, Steinke, Thakurta, "Correlated
 * noise provably beats independent noise for differentially private learning", the
 * "nu-DP-FTRL paper"; equation and section numbers below are the arXiv version's, "note" is
 * the project's reading note on the paper, [OURS] marks its derived formulas; doc/theory.md).
 *
 * Model (zero-based, T -> infinity):  theta_{t+1} = theta_t - eta (g_t + sum_tau beta_tau w_{t-tau}),
 * w_t ~ N(0, sigma^2 I), sigma^2 = G^2 gamma_inf(beta)^2 / (2 rho) (rho-zCDP, Theorem 1.1), and
 * B(omega) = sum_t beta_t e^{i omega t}. Quantities:
 *
 *   gamma_inf^2(beta) = (1/2pi) int |B|^-2 = sum_t c_t^2, c = 1/beta     (eq. 5, Property C.1)
 *   S_b(beta)         = sum_{t,s} beta_t beta_s (1-b)^|t-s|             (Lemma C.4, note 5.1)
 *                     = b (2-b) (1/2pi) int |B|^2 / |1-b-e^{i omega}|^2
 *   V0 (fixed design, = exact stationary E||theta - theta*||_H^2 of the LTI model, note 5.3.2)
 *                     = sum_j [eta sigma_sgd^2 lambda_j + eta sigma^2 S_{eta lambda_j}(beta)] / (2 - eta lambda_j)
 *   Mean estimation (Theorem 2.1) is the case d = 1, lambda = 1: E delta^2 (= 2 x objective gap).
 *
 * Conventions: every linear-regression error here is E||theta - theta*||_H^2 (no 1/2; the
 * paper's appendix eq. 22/46 convention; main-text F - F* is half of it). Elliptic integrals
 * use the modulus k (the paper's eq. 94): K(k) = int_0^{pi/2} (1 - k^2 sin^2)^{-1/2}.
 *
 * Two independent evaluation routes, which the tests require to agree to 1e-8:
 *   DPC_THEORY_SERIES      time domain: S_b by two first-order recursions over beta, O(len)
 *                          per eigenvalue (len from a proven tail bound, see _beta_tail)
 *   DPC_THEORY_QUADRATURE  frequency domain: graded Gauss-Legendre on [0, pi] (octaves down to
 *                          the smallest pole distance) with closed-form |B|^2 for the families;
 *                          for long ARRAY coefficients the periodic trapezoid rule with |B|^2
 *                          from an FFT (exact for M >= len + 40 / pole distance, error e^-40)
 *
 * The library never prints; every fallible call returns dpc_status and fills dpc_error.
 * No allocation is kept between calls; all functions are thread-safe.
 */
#ifndef DPCORR_THEORY_H
#define DPCORR_THEORY_H

#include "dpcorr/common.h"
#include "dpcorr/field.h"
#include "dpcorr/mech.h"
#include "dpcorr/special.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Special functions --------------------------------------------------------------------- */

/* Elliptic integrals K, E, Pi and Carlson R_F, R_D, R_J: dpcorr/special.h. */

/* I(a, b) = int_{-pi}^{pi} |1 - a - e^{iw}| / |1 - b - e^{iw}|^2 dw, 0 < a, b < 1 (eq. 49,
 * Lemmas C.21/F.15/F.16): (2a^2 / (b^2 (1 - a/2))) Pi(alpha^2, k), alpha^2 = (b^2(1-a) -
 * a^2(1-b)) / (b^2 (1-a/2)^2), k = sqrt(1-a)/(1-a/2). NaN outside the domain. */
DPC_API double dpc_theory_integral_i(double a, double b);

/* ---- Noise coefficients beta --------------------------------------------------------------- */

typedef enum dpc_theory_beta_kind {
    DPC_THEORY_BETA_SGD = 0, /* beta = (1, 0, 0, ...): Noisy-SGD / DP-SGD */
    DPC_THEORY_BETA_NU,      /* beta_t = (-1)^t binom(1/2, t) (1-nu)^t, 0 <= nu < 1 (eq. 7);
                                nu = 0 is "Optimal CC" (Fichtenberger et al. 2023) */
    DPC_THEORY_BETA_ANTIPGD, /* beta = (1, -(1-nu)), 0 <= nu < 1; nu = 0 undamped anti-PGD */
    DPC_THEORY_BETA_ARRAY    /* explicit beta_0..beta_{len-1}, zero beyond (any Toeplitz mech) */
} dpc_theory_beta_kind;

typedef struct dpc_theory_beta {
    dpc_theory_beta_kind kind;
    double nu;            /* NU, ANTIPGD: damping */
    size_t len;           /* ARRAY: number of coefficients (>= 1) */
    const double *coeffs; /* ARRAY: (len), borrowed; coeffs[0] != 0 */
} dpc_theory_beta;

/* The four kinds of beta (dpc_theory_beta_array borrows coeffs). */
DPC_API dpc_theory_beta dpc_theory_beta_sgd(void);
DPC_API dpc_theory_beta dpc_theory_beta_nu(double nu);
DPC_API dpc_theory_beta dpc_theory_beta_antipgd(double nu);
DPC_API dpc_theory_beta dpc_theory_beta_array(const double *coeffs, size_t len);

/* Validates (message names the field). */
DPC_API DPC_NODISCARD dpc_status dpc_theory_beta_check(const dpc_theory_beta *b, dpc_error *err);

/* "sgd", "nu", "antipgd", "array"; and a one-line description ("nu-FTRL (nu=0.01)"). */
DPC_API const char *dpc_theory_beta_kind_name(dpc_theory_beta_kind k);
DPC_API int dpc_theory_beta_describe(const dpc_theory_beta *b, char *buf, size_t len);

/* Maps a Toeplitz mechanism to coefficients: IDENTITY -> SGD, NU -> NU, ANTIPGD -> ANTIPGD,
 * LCGD -> ANTIPGD with nu = 1 - lambda; other Toeplitz kinds -> ARRAY of the first `len`
 * noising coefficients (from dpc_mech_noising_coeffs; *owned receives the malloc'ed array,
 * caller frees; NULL for the families). DPC_E_UNSUPPORTED for TREE and DENSE. */
DPC_API DPC_NODISCARD dpc_status dpc_theory_beta_from_mech(const dpc_mech *m, size_t len,
                                                           dpc_theory_beta *out, double **owned,
                                                           dpc_error *err);

/* The first len coefficients (families by the recurrences of note 3.1; ARRAY zero-padded).
 *                                                                                 out: (len) */
DPC_API void dpc_theory_beta_coeffs(const dpc_theory_beta *b, double *out, size_t len);

/* Proven bound on sum_{t >= len} |beta_t| (the l1 tail dropped by truncating at len):
 * SGD 0 (len >= 1); ANTIPGD 0 (len >= 2); NU |a_len| (1-nu)^len / nu with a_t the binomial
 * coefficients of sqrt(1-x) (|a_t| is non-increasing; INFINITY for nu = 0); ARRAY the exact sum.
 * Truncation changes S_b by at most 4 x tail (|S(beta) - S(beta_L)| <= tail (||beta||_1 +
 * ||beta_L||_1) and ||beta||_1 <= 2 for every family). */
DPC_API double dpc_theory_beta_tail(const dpc_theory_beta *b, size_t len);
/* Smallest power of two len >= min_len with tail(len) <= tol (0 if none up to 2^30). */
DPC_API size_t dpc_theory_beta_len_for_tail(const dpc_theory_beta *b, double tol, size_t min_len);

/* |B(omega)|^2: closed forms (NU: |1 - nu - e^{iw}| (C.4); ANTIPGD |1 - (1-nu) e^{iw}|^2);
 * ARRAY by Horner's rule on e^{iw}. */
DPC_API double dpc_theory_beta_spectrum(const dpc_theory_beta *b, double omega);

/* gamma_inf(beta)^2 = (1/2pi) int |B|^-2 (eq. 5): SGD 1; NU (2/pi) K(1-nu) [OURS, note 3.3];
 * ANTIPGD 1/(nu(2-nu)); INFINITY for nu = 0. ARRAY: periodic trapezoid rule with |B|^2 from an
 * FFT of the folded coefficients, doubled until two successive values agree to 1e-13
 * (DPC_E_NUMERIC if B nearly vanishes on the unit circle). */
DPC_API DPC_NODISCARD dpc_status dpc_theory_gamma_inf2(const dpc_theory_beta *b, double *g2,
                                                       dpc_error *err);
/* gamma_T^2 = sum_{t<T} c_t^2 with c = 1/beta (single participation, Toeplitz; note 2.1).
 * NU: c_t = binom(2t,t)/4^t (1-nu)^t; ANTIPGD: (1-nu)^t; ARRAY: reciprocal series, O(T len). */
DPC_API DPC_NODISCARD dpc_status dpc_theory_gamma_t2(const dpc_theory_beta *b, size_t T,
                                                     double *g2, dpc_error *err);

/* S_b(beta) for 0 < b < 2 (b = eta lambda_j), time domain: with r = 1 - b,
 * u_t = beta_t + r u_{t-1}, v_t = beta_t + r v_{t+1}, S = sum_t beta_t (u_t + v_t - beta_t),
 * over the truncation len = dpc_theory_beta_len_for_tail(b, 1e-15 b, ..). ARRAY uses its len. */
DPC_API DPC_NODISCARD dpc_status dpc_theory_s(const dpc_theory_beta *b, double bb, double *S,
                                              dpc_error *err);
/* Naive reference for an explicit array: ac_k = sum_t beta_t beta_{t+k} (O(len^2)), then
 * S = ac_0 + 2 sum_k (1-b)^k ac_k (note 5.1). For the parity test.                        */
DPC_API double dpc_theory_s_naive(const double *beta, size_t len, double bb);

/* ---- Linear regression in the LTI (fixed-design) model; mean estimation ------------------- */

typedef enum dpc_theory_method {
    DPC_THEORY_SERIES = 0,
    DPC_THEORY_QUADRATURE = 1
} dpc_theory_method;

/* Problem: H = diag(lambda_1..lambda_d) (eigenvalues > 0; the order does not matter). */
typedef struct dpc_theory_problem {
    double eta;           /* learning rate, 0 < eta lambda_j < 2 for every j */
    double rho;           /* zCDP parameter > 0 */
    double G;             /* clip norm > 0 */
    double sigma_sgd;     /* data-noise std >= 0 (E xi^2 = sigma_sgd^2, assumption A2') */
    size_t d;             /* dimension >= 1 */
    const double *lambda; /* (d) eigenvalues of H, borrowed */
} dpc_theory_problem;

/* The field table of dpc_theory_problem (dpcorr/field.h): the single-field ranges below (the
 * zeroed struct is the default; eta, rho, G and d must be set). */
DPC_API const dpc_field_table *dpc_theory_problem_fields(void);

/* DPC_OK, or DPC_E_INVALID naming the first field out of its range above (eta, rho, G,
 * sigma_sgd, d, lambda[j] with 0 < eta lambda_j < 2). */
DPC_API DPC_NODISCARD dpc_status dpc_theory_problem_check(const dpc_theory_problem *p,
                                                          dpc_error *err);

/* lambda_k = k^-alpha, k = 1..d (the Figure 2 spectra).                           out: (d) */
DPC_API void dpc_theory_powerlaw(double *lambda, size_t d, double alpha);

typedef struct dpc_theory_lti {
    double v0;         /* E||theta - theta*||_H^2 = v0_dp + v0_sgd */
    double v0_dp;      /* the DP-noise part */
    double v0_sgd;     /* eta sigma_sgd^2 sum_j lambda_j / (2 - eta lambda_j) */
    double gamma_inf2; /* gamma_inf(beta)^2 */
    double sigma2;     /* per-coordinate DP noise variance G^2 gamma_inf^2 / (2 rho) */
    double sum_s;      /* <beta, T beta> = sum_j S_{eta lambda_j}(beta) */
} dpc_theory_lti;

/* V0 of note 5.3.2 by the chosen route. Infinite (v0 = INFINITY) when gamma_inf = inf. */
DPC_API DPC_NODISCARD dpc_status dpc_theory_lti_error(const dpc_theory_problem *p,
                                                      const dpc_theory_beta *b,
                                                      dpc_theory_method method,
                                                      dpc_theory_lti *out, dpc_error *err);

/* The LTI optimum over all beta (Cauchy-Schwarz, note 5.3.3): eta^2 G^2/(2 rho)
 * ((1/2pi) int sqrt(h))^2 + v0_sgd, h(w) = sum_j lambda_j / |1 - e^{iw} - eta lambda_j|^2;
 * attained by |B*|^2 = 1/sqrt(h). Graded quadrature.                                        */
DPC_API DPC_NODISCARD dpc_status dpc_theory_lti_opt(const dpc_theory_problem *p, double *v,
                                                    dpc_error *err);

/* Upper and lower bounds of Appendix C for random Gaussian design x ~ N(0, H):
 * R^2 (E||x||^2 x x^T <= R^2 H) and C_kurt given; for Gaussian x use R^2 = Tr H + 2 lambda_max,
 * C_kurt = 3 (Property C.3). Bounds are on E||theta - theta*||_H^2; q = eta R^2.          */
typedef struct dpc_theory_bounds {
    double v0;               /* fixed-design V0 (exact LTI part) */
    double upper_time;       /* Thm C.14: (1+(1-sqrt q)^-2) q sgd^2 + (1+Ck(1-sqrt q)^-2)(eta G^2 g^2/2rho)<b,Tb> */
    double upper_freq;       /* Thm C.15: same with (eta^2 G^2 g^2/(2 pi rho)) int |B|^2 h */
    double lower_freq;       /* Thm C.18: eta sgd^2 Tr H / 2 + (eta^2 G^2 g^2/(4 pi rho)) int |B|^2 h */
    double lower_time;       /* Thm C.18, second form: eta sgd^2 Tr H/2 + (eta G^2 g^2/(4 rho))<b,Tb> */
    double lower_universal;  /* any beta: (eta sgd^2 / 2 + eta^2 G^2 / (8 rho)) Tr H */
    double sandwich_upper;   /* [OURS] sigma_sgd = 0: (sqrt V0 + sqrt(Ck U) sqrt q/(1-sqrt q))^2,
                                U = eta sigma^2 <beta, T beta> (NaN when sigma_sgd > 0) */
    double q;                /* eta R^2; the upper bounds are INFINITY unless q < 1 */
} dpc_theory_bounds;

/* The bounds above for problem p and noise coefficients b, with R2 = R^2 and c_kurt = C_kurt. */
DPC_API DPC_NODISCARD dpc_status dpc_theory_lti_bounds(const dpc_theory_problem *p,
                                                       const dpc_theory_beta *b, double R2,
                                                       double c_kurt, dpc_theory_bounds *out,
                                                       dpc_error *err);

/* Mean estimation (Theorem 2.1, Appendix B; note 5.2), s^2 = G^2/(2 rho):
 * E delta^2 for beta: eta s^2 gamma_inf^2 S_eta(beta)/(2-eta) + eta sigma_sgd^2/(2-eta).   */
DPC_API DPC_NODISCARD dpc_status dpc_theory_mean_error(double eta, double rho, double G,
                                                       double sigma_sgd, const dpc_theory_beta *b,
                                                       dpc_theory_method method, double *e,
                                                       dpc_error *err);
/* The optimum over beta (attained by nu = eta): eta^2 s^2 (2K(1-eta)/pi)^2 + eta sgd^2/(2-eta). */
DPC_API double dpc_theory_mean_opt(double eta, double rho, double G, double sigma_sgd);
/* R(eta) = optimum / DP-SGD at sigma_sgd = 0 = eta (2 - eta) (2 K(1-eta)/pi)^2, 0 < eta < 2. */
DPC_API double dpc_theory_mean_ratio(double eta);

/* ---- Table 1 / Table 4 rates ---------------------------------------------------------------- */

/* The rho-terms of Table 1 (constants dropped, G = 1 after normalising ||H|| = lambda_max = 1,
 * eta measured in units of 1/lambda_max) for the problem's spectrum, and the exact LTI values
 * for comparison. */
typedef struct dpc_theory_rates {
    double trace, lambda_max, lambda_min, d_eff; /* d_eff = Tr H / ||H|| */
    double nu;           /* eta mu (the Theorem 2.2 choice) */
    double sgd;          /* Theta(eta d / rho) */
    double ftrl;         /* O(eta^2 d_eff log^2(1/(eta mu)) / rho) */
    double lower;        /* Omega(eta^2 d_eff / rho) */
    double ratio_sgd;    /* sgd / lower = d / (eta d_eff) */
    double ratio_ftrl;   /* ftrl / lower = log^2(1/(eta mu)) */
    double v0_sgd, v0_ftrl, v0_opt; /* exact LTI values (nu = eta mu), sigma_sgd as given */
} dpc_theory_rates;

/* The rates above for p's spectrum. */
DPC_API DPC_NODISCARD dpc_status dpc_theory_rates_of(const dpc_theory_problem *p,
                                                     dpc_theory_rates *out, dpc_error *err);

/* Table 4 closed-form d_eff for lambda_k = k^-a (rows 1, 1/sqrt k, k^-a a<1, 1/k, 1/k^2,
 * k^-a a>1): d, sqrt d, d^{1-a}/(1-a), log d, constant (pi^2/6 -> reported as a/(a-1) = 2),
 * a/(a-1). The FTRL column (up to constants): eta^2 d_eff log^2(d/eta)/rho (times log d for
 * a = 1, as printed). */
DPC_API double dpc_theory_table4_deff(double a, size_t d);
DPC_API double dpc_theory_table4_ftrl(double a, size_t d, double eta, double rho);

/* ---- Strongly convex functions: Theorem 3.1 / E.1 -------------------------------------------- */

/* F mu-strongly convex, L-smooth; f(.; z) G-Lipschitz; ||grad f - E grad f|| <= sigma_sgd.
 * Multipliers lambda_t >= 0, sum_t lambda_t <= 2 lambda_0 (Zames-Falb, Heath & Wills 2005);
 * for fixed lambda the smallest feasible psi is the Schur complement [OURS, note 5.5]
 *   psi(w) = N22 + |N12|^2 / (-eta^2 - N11),   N = A(w)^* Mtilde(w) A(w)   (eq. 89),
 * requiring -eta^2 - N11 > 0 for all w.
 * Constant convention (documented in doc/theory.md): the returned `dist` bounds the stationary
 * E||theta - theta*||^2 as  dist = (d / eta^2) (1/2pi) int psi(w) S_zeta(w) dw  with the noise
 * PSD S_zeta = |B|^2 G^2 gamma_inf^2 / (2 rho) when sigma_sgd = 0, and 2 (|B|^2 G^2 g^2/(2 rho) +
 * sigma_sgd^2) otherwise (Cauchy-Schwarz); the function-value bound is `value` = (L/2) dist.
 * The paper's eq. (10) and Sec. E.1 print other constants (Ld/2pi with G^2/rho, and 2Ld/(2 pi
 * eta^2)); these differ from ours by constant factors only, so ratios between mechanisms are
 * unchanged. */
typedef struct dpc_theory_sc {
    double mu, L;         /* 0 < mu <= L */
    double eta;           /* 0 < eta <= 2/(mu + L) */
    double rho, G;        /* privacy and clip norm */
    double sigma_sgd;     /* >= 0 */
    size_t d;             /* dimension >= 1 (the bound scales linearly) */
    size_t tmax;          /* multipliers lambda_t for |t| <= tmax (0 = circle criterion, 1-D),
                             at most 31 */
} dpc_theory_sc;

/* The field table of dpc_theory_sc (dpcorr/field.h): each field's range (the zeroed struct is
 * the default; mu, L, eta, rho, G and d must be set); dpc_theory_sc_bound and
 * dpc_theory_sc_optimized range-check through it and keep mu <= L and eta <= 2/(mu + L). */
DPC_API const dpc_field_table *dpc_theory_sc_fields(void);

typedef struct dpc_theory_sc_result {
    double value;         /* bound on F_inf (function-value suboptimality), our convention */
    double dist;          /* bound on E||theta - theta*||^2 */
    double lambda0;       /* optimal lambda_0 */
    size_t evaluations;   /* objective evaluations used */
} dpc_theory_sc_result;

/* The bound for given beta, minimised over the multipliers: lambda_0 by golden-section search on
 * log(lambda_0 - 1/(2 mu L)); with tmax > 0 also lambda_{+-1..+-tmax} by projected coordinate
 * descent (a few sweeps). Graded Gauss-Legendre quadrature (not the paper's uniform k = 1000
 * grid, which under-resolves the peak of width ~ eta mu at large condition numbers).         */
DPC_API DPC_NODISCARD dpc_status dpc_theory_sc_bound(const dpc_theory_sc *p,
                                                     const dpc_theory_beta *b,
                                                     dpc_theory_sc_result *out, dpc_error *err);
/* "Optimized" DP-FTRL: alternating minimisation of (10) over (psi, lambda) and B. For fixed psi
 * the B-step is closed form, |B|^2 ~ psi^{-1/2} (Cauchy-Schwarz), giving gamma^2 (1/2pi) int
 * |B|^2 psi = ((1/2pi) int sqrt psi)^2; so the fixed point minimises that over the multipliers.
 * sigma_sgd must be 0. */
DPC_API DPC_NODISCARD dpc_status dpc_theory_sc_optimized(const dpc_theory_sc *p,
                                                         dpc_theory_sc_result *out,
                                                         dpc_error *err);

#ifdef __cplusplus
}
#endif
#endif /* DPCORR_THEORY_H */
