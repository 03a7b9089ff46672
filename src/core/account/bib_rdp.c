/* bib_rdp.c — a deterministic Renyi-DP bound for balls-in-bins with any C >= 0, by a dynamic
 * program over the bins (DP-REQ: bib-rdp; doc/accounting.md section 7.2). After Schuchardt &
 * Kalinin 2026 ("Sampling-Free Privacy Accounting for Matrix Mechanisms under Random
 * Allocation", arXiv 2601.21636: Renyi divergence of the random-allocation matrix mechanism by
 * dynamic programming); the decomposition and the bounds below are our derivation, stated in
 * full in the doc.
 *
 * Pair (bib_route.c): P = (1/b) sum_j N(m_j, s^2 I), Q = N(0, s^2 I); A = G / s^2, G = M^T M.
 * Lambda = dP/dQ = (1/b) sum_j exp(t_j - A_jj / 2), t ~ N(0, A) under Q.
 *
 * Remove, integer order m (multinomial expansion, E_Q exp(<t, v>) = exp(v^T A v / 2)):
 *   E_Q[Lambda^m] = m! b^-m sum_{c in N^b, |c| = m} prod_j (1 / c_j!) exp(F(c)),
 *   F(c) = sum_j A_jj c_j (c_j - 1) / 2 + sum_{j < l} A_jl c_j c_l.
 * Bound on F for a constant rho >= 0 (R_jl = A_jl - rho):
 *   F(c) = rho m (m - 1) / 2 + sum_j (A_jj - rho) c_j (c_j - 1) / 2 + sum_{j<l} R_jl c_j c_l;
 *   adjacent bins (l = j + 1) keep R exactly; every other pair is bounded by
 *   R_jl c_j c_l <= R_jl^+ (c_j^2 + c_l^2) / 2, which moves e_j = sum_l R_jl^+ onto bin j
 *   (c^2 = c (c - 1) + c). What is left couples only neighbours: a chain, summed exactly by a
 *   dynamic program over the bins with state (balls so far, balls in the last bin). Where
 *   b (M+1)^4 / 24 allows, pairs at distance 2 are kept exactly too (state: the last two bins;
 *   dpc__bib_rdp_logmoments3), never looser.
 * Add (beta = alpha - 1): for 0 < beta' <= 1 the power mean M_{-beta'} <= M_1 over the bins gives
 *   Lambda^{-beta} <= ((1/b) sum_j exp(-beta' t_j + beta' A_jj / 2))^{beta / beta'}
 *                 <= e^{gamma beta' (1 + beta') a / 2} Lambda~(u)^gamma,  gamma = beta / beta',
 *   with u = -beta' t ~ N(0, beta'^2 A) under Q and Lambda~ the remove likelihood ratio of the
 *   pair at noise s / beta' (a = max A_jj). So
 *   RDP_add(alpha) <= (1 + beta') a / 2 + log E_Q[Lambda~^gamma] / beta.
 *   beta' = 1 (harmonic mean) is a + log E_Q[Lambda^beta] / beta, the add bound of Feldman &
 *   Shenfeld's random-allocation RDP for C = I; beta' = 1/2 ... 1/16 approach the geometric mean
 *   (constant a/2 instead of a) and need the moments at noise s / beta' (one more dynamic
 *   program each, one neighbour).
 * Both directions are also at most the unamplified alpha a / 2 (quasi-convexity). Fractional
 * orders: log E_Q[Lambda^alpha] is convex in alpha (Hoelder), so linear interpolation between
 * integers is an upper bound (log E = 0 at alpha = 0, 1). RDP -> (eps, delta): rdp-conv, each
 * direction on its own, the larger eps. */
#include "account/acc_internal.h"

#include "account/acc_math.h"
#include "common/util.h"

#include <stdlib.h>
#include <string.h>

#define RDP_ORDER0 64  /* first largest integer order; doubled (to RDP_ORDER_MAX) while optimal */
#define RDP_ORDER_MAX 256
#define RDP_NPOW 4 /* the add direction's power means beta' = 1/2, 1/4, 1/8, 1/16 (item 4) */
static const double rdp_pow[RDP_NPOW] = {0.5, 0.25, 0.125, 0.0625};
#define RDP_W3_WORK 2e8 /* the two-neighbour program where b (M+1)^4 / 24 is below this */

/* exp(x), with the arguments whose exp is exactly 0 in double (x < -745.14) answered without
 * the library's underflow path (a tenth of the programs' time went there): the same values */
static inline double exp0(double x)
{
    return x < -746.0 ? 0.0 : exp(x);
}

/* S[c] = sum_k pp[k] x_c^k (descending: Horner from pp[n] down) or sum_k pp[k] x_c^(n - k)
 * (ascending), x_c = xs[c], for c = 0..cmax. The loop over c is innermost: every c runs exactly
 * the operations of its own Horner chain in the same order (the same bits as one c at a time),
 * but the chains are independent, so they overlap instead of waiting on one multiply-add's
 * latency each (the programs' inner loop; about 4x). */
static void horner_all(const double *pp, size_t n, int descending, const double *xs,
                       size_t cmax, double *S)
{
    if (descending) {
        for (size_t c = 0; c <= cmax; c++) S[c] = pp[n];
        for (size_t k = n; k-- > 0;)
            for (size_t c = 0; c <= cmax; c++) S[c] = S[c] * xs[c] + pp[k];
    } else {
        for (size_t c = 0; c <= cmax; c++) S[c] = pp[0];
        for (size_t k = 1; k <= n; k++)
            for (size_t c = 0; c <= cmax; c++) S[c] = S[c] * xs[c] + pp[k];
    }
}

/* Upper bound on log E_Q[Lambda^m], m = 0..M, without the rho part (see the file comment).
 * d, e: (b) per-bin weights, r: (b - 1) neighbour couplings, all in units of G; s: noise std. */
dpc_status dpc__bib_rdp_logmoments(size_t b, const double *d, const double *e, const double *r,
                                   double s, size_t M, double *logm, dpc_error *err)
{
    double work = (double)b * (double)(M + 1) * (double)(M + 1) * (double)(M + 1) / 6.0;
    if (b < 1 || work > DPC_WORK_LIMIT)
        return dpc_error_param(err, DPC_E_RANGE, "part.b",
                               "the balls-in-bins Renyi dynamic program over %zu bins up to order "
                               "%zu takes about %.3g operations, above the work limit %.3g",
                               b, M, work, DPC_WORK_LIMIT);
    size_t W = M + 1;
    double *L = dpc__malloc_array(W * W, sizeof *L), *N = dpc__malloc_array(W * W, sizeof *N);
    double *p = dpc__malloc_array(W * W, sizeof *p), *lmax = dpc__malloc_array(W, sizeof *lmax);
    double *u = dpc__malloc_array(W, sizeof *u), *xs = dpc__malloc_array(W, sizeof *xs);
    double *Sv = dpc__malloc_array(W, sizeof *Sv);
    if (!L || !N || !p || !lmax || !u || !xs || !Sv) {
        free(L), free(N), free(p), free(lmax), free(u), free(xs), free(Sv);
        return DPC__NOMEM(err, "the balls-in-bins Renyi dynamic program");
    }
    double is2 = 1.0 / (s * s);
    /* L[m * W + c]: log of the sum over the bins so far with m balls, c in the last bin */
    for (size_t i = 0; i < W * W; i++) L[i] = -INFINITY;
    for (size_t c = 0; c <= M; c++) {
        double x = (double)c;
        L[c * W + c] = d[0] * is2 * x * (x - 1.0) / 2.0 + e[0] * is2 * x / 2.0 - lgamma(x + 1.0);
    }
    for (size_t j = 1; j < b; j++) {
        double rj = r[j - 1] * is2;
        for (size_t c = 0; c <= M; c++) {
            double x = (double)c;
            u[c] = d[j] * is2 * x * (x - 1.0) / 2.0 + e[j] * is2 * x / 2.0 - lgamma(x + 1.0);
        }
        for (size_t m = 0; m <= M; m++) { /* p = exp(L - lmax) in [0, 1] */
            double mx = -INFINITY;
            for (size_t c = 0; c <= m; c++)
                if (L[m * W + c] > mx) mx = L[m * W + c];
            lmax[m] = mx;
            for (size_t c = 0; c <= m; c++)
                p[m * W + c] = isfinite(mx) ? exp0(L[m * W + c] - mx) : 0.0;
        }
        for (size_t i = 0; i < W * W; i++) N[i] = -INFINITY;
        for (size_t c = 0; c <= M; c++) xs[c] = exp0(-fabs(rj) * (double)c);
        for (size_t mp = 0; mp <= M; mp++) {
            if (!isfinite(lmax[mp])) continue;
            /* sum_{c'} p[m', c'] exp(rj c c') for every c <= M - m', scaled so that no power
             * exceeds 1: Horner's rule in x = xs[c], all c at once (the same operations for each
             * c as one at a time: independent chains the CPU overlaps) */
            horner_all(p + mp * W, mp, rj < 0.0, xs, M - mp, Sv);
            for (size_t c = 0; c + mp <= M; c++) {
                /* rounding (relative, ~m' u) and underflow (absolute) allowances: upper bound */
                double Sc = Sv[c] * (1.0 + 1e-13) + (double)(mp + 2) * 1e-300;
                double v = u[c] + lmax[mp] + log(Sc);
                if (rj >= 0.0) v += rj * (double)c * (double)mp;
                N[(mp + c) * W + c] = v;
            }
        }
        double *t = L;
        L = N;
        N = t;
    }
    double lb = log((double)b);
    for (size_t m = 0; m <= M; m++) {
        double mx = -INFINITY, S = 0.0;
        for (size_t c = 0; c <= m; c++)
            if (L[m * W + c] > mx) mx = L[m * W + c];
        for (size_t c = 0; c <= m; c++) S += exp0(L[m * W + c] - mx);
        S = S * (1.0 + 1e-13) + (double)(m + 2) * 1e-300;
        logm[m] = mx + log(S) + lgamma((double)m + 1.0) - (double)m * lb;
    }
    logm[0] = logm[1] = 0.0; /* exact: E[Lambda^0] = E[Lambda] = 1 */
    free(L), free(N), free(p), free(lmax), free(u), free(xs), free(Sv);
    return DPC_OK;
}

/* The same with two neighbours kept exactly (w = 3): state (balls so far, balls in the last two
 * bins); d3, e3: (b) per-bin weights with the pairs at distance >= 3 bounded; r1: (b - 1)
 * distance-1 couplings, r2: (b - 2) distance-2 couplings. Work b (M+1)^4 / 24. */
dpc_status dpc__bib_rdp_logmoments3(size_t b, const double *d3, const double *e3,
                                    const double *r1, const double *r2, double s, size_t M,
                                    double *logm, dpc_error *err)
{
    double work = (double)b * pow((double)(M + 1), 4.0) / 24.0;
    if (b < 3 || work > DPC_WORK_LIMIT)
        return dpc_error_param(err, DPC_E_RANGE, "part.b",
                               "the balls-in-bins Renyi dynamic program (two neighbours) over %zu "
                               "bins up to order %zu takes about %.3g operations, above the work "
                               "limit %.3g (or fewer than 3 bins)",
                               b, M, work, DPC_WORK_LIMIT);
    size_t W = M + 1, W2 = W * W;
    double *L = dpc__malloc_array(W * W2, sizeof *L), *N = dpc__malloc_array(W * W2, sizeof *N);
    double *p = dpc__malloc_array(W, sizeof *p), *u = dpc__malloc_array(W, sizeof *u);
    double *xs = dpc__malloc_array(W, sizeof *xs), *Sv = dpc__malloc_array(W, sizeof *Sv);
    if (!L || !N || !p || !u || !xs || !Sv) {
        free(L), free(N), free(p), free(u), free(xs), free(Sv);
        return DPC__NOMEM(err, "the balls-in-bins Renyi dynamic program");
    }
    double is2 = 1.0 / (s * s);
#define U(j, c)                                                                                    \
    (d3[j] * is2 * (double)(c) * ((double)(c) - 1.0) / 2.0 + e3[j] * is2 * (double)(c) / 2.0 -    \
     lgamma((double)(c) + 1.0))
    /* L[m W^2 + c W + a]: m balls so far, a in the bin before the last, c in the last (a
     * innermost: the sums over a read contiguous memory) */
    for (size_t i = 0; i < W * W2; i++) L[i] = -INFINITY;
    for (size_t a = 0; a <= M; a++)
        for (size_t c = 0; a + c <= M; c++)
            L[(a + c) * W2 + c * W + a] = U(0, a) + U(1, c) + r1[0] * is2 * (double)a * (double)c;
    for (size_t j = 2; j < b; j++) {
        double q1 = r1[j - 1] * is2, q2 = r2[j - 2] * is2;
        for (size_t c = 0; c <= M; c++) u[c] = U(j, c);
        for (size_t c = 0; c <= M; c++) xs[c] = exp0(-fabs(q2) * (double)c);
        for (size_t i = 0; i < W * W2; i++) N[i] = -INFINITY;
        for (size_t mp = 0; mp <= M; mp++)
            for (size_t bb = 0; bb <= mp; bb++) {
                /* p[a] = exp(L[mp][bb][a] - max), a <= mp - bb */
                size_t na = mp - bb;
                const double *row = L + mp * W2 + bb * W;
                double mx = -INFINITY;
                for (size_t a = 0; a <= na; a++)
                    if (row[a] > mx) mx = row[a];
                if (!isfinite(mx)) continue;
                for (size_t a = 0; a <= na; a++) p[a] = exp0(row[a] - mx);
                horner_all(p, na, q2 < 0.0, xs, M - mp, Sv);
                for (size_t c = 0; mp + c <= M; c++) {
                    double Sc = Sv[c] * (1.0 + 1e-13) + (double)(na + 2) * 1e-300;
                    double v = u[c] + mx + log(Sc) + q1 * (double)bb * (double)c;
                    if (q2 >= 0.0) v += q2 * (double)c * (double)na;
                    N[(mp + c) * W2 + c * W + bb] = v;
                }
            }
        double *t = L;
        L = N;
        N = t;
    }
#undef U
    double lb = log((double)b);
    for (size_t m = 0; m <= M; m++) {
        double mx = -INFINITY, S = 0.0;
        for (size_t i = 0; i < W2; i++)
            if (L[m * W2 + i] > mx) mx = L[m * W2 + i];
        for (size_t a = 0; a <= M; a++) /* summed in (a, c) order */
            for (size_t c = 0; c <= M; c++)
                if (isfinite(L[m * W2 + c * W + a])) S += exp0(L[m * W2 + c * W + a] - mx);
        S = S * (1.0 + 1e-13) + (double)(W2 + 2) * 1e-300;
        logm[m] = mx + log(S) + lgamma((double)m + 1.0) - (double)m * lb;
    }
    logm[0] = logm[1] = 0.0;
    free(L), free(N), free(p), free(u), free(xs), free(Sv);
    return DPC_OK;
}

dpc_status dpc__bib_rdp_prepare(const double *G, size_t b, dpc__bib_rdp *R, dpc_error *err)
{
    memset(R, 0, sizeof *R);
    R->b = b;
    double offmin = INFINITY, farmax = 0.0;
    for (size_t i = 0; i < b; i++) {
        if (G[i * b + i] > R->gmax) R->gmax = G[i * b + i];
        for (size_t j = 0; j < b; j++) {
            if (i == j) continue;
            double g = G[i * b + j];
            if (g < offmin) offmin = g;
            if ((i > j ? i - j : j - i) != 1 && g > farmax) farmax = g;
        }
    }
    if (!(offmin > 0.0)) offmin = 0.0;
    double cand[DPC__BIB_RDP_CAND] = {0.0, offmin, farmax};
    R->d = dpc__malloc_array(DPC__BIB_RDP_CAND * b, sizeof *R->d);
    R->e = dpc__malloc_array(DPC__BIB_RDP_CAND * b, sizeof *R->e);
    R->r = dpc__malloc_array(DPC__BIB_RDP_CAND * b, sizeof *R->r);
    R->d3 = dpc__malloc_array(DPC__BIB_RDP_CAND * b, sizeof *R->d3);
    R->e3 = dpc__malloc_array(DPC__BIB_RDP_CAND * b, sizeof *R->e3);
    R->r2 = dpc__malloc_array(DPC__BIB_RDP_CAND * b, sizeof *R->r2);
    if (!R->d || !R->e || !R->r || !R->d3 || !R->e3 || !R->r2) {
        dpc__bib_rdp_free(R);
        return DPC__NOMEM(err, "the balls-in-bins Renyi bound");
    }
    for (size_t k = 0; k < DPC__BIB_RDP_CAND; k++) {
        double rho = cand[k];
        int dup = 0;
        for (size_t q = 0; q < R->ncand; q++) dup |= R->rho[q] == rho;
        if (dup) continue;
        size_t o = R->ncand++;
        R->rho[o] = rho;
        double *d = R->d + o * b, *e = R->e + o * b, *r = R->r + o * b;
        double *d3 = R->d3 + o * b, *e3 = R->e3 + o * b, *r2 = R->r2 + o * b;
        for (size_t i = 0; i < b; i++) {
            double ei = 0.0, e3i = 0.0;
            for (size_t j = 0; j < b; j++) {
                size_t dist = i > j ? i - j : j - i;
                double v = G[i * b + j] - rho;
                if (dist <= 1 || !(v > 0.0)) continue;
                ei += v;
                if (dist >= 3) e3i += v;
            }
            e[i] = ei;
            d[i] = G[i * b + i] - rho + ei;
            e3[i] = e3i;
            d3[i] = G[i * b + i] - rho + e3i;
            if (i + 1 < b) r[i] = G[i * b + i + 1] - rho;
            if (i + 2 < b) r2[i] = G[i * b + i + 2] - rho;
        }
    }
    return DPC_OK;
}

void dpc__bib_rdp_free(dpc__bib_rdp *R)
{
    free(R->d), free(R->e), free(R->r), free(R->d3), free(R->e3), free(R->r2);
    R->d = R->e = R->r = R->d3 = R->e3 = R->r2 = NULL;
    R->ncand = 0;
}

/* log E_Q[Lambda^x] for real x in [0, M] by convex interpolation of the integer moments. */
static double lm_at(const double *lm, size_t M, double x)
{
    if (x <= 0.0) return 0.0;
    size_t i = (size_t)floor(x);
    if (i >= M) return lm[M];
    double f = x - (double)i;
    return f == 0.0 ? lm[i] : (1.0 - f) * lm[i] + f * lm[i + 1];
}

void dpc__bib_rdp_curve(const double *tl, size_t M, double a, double alpha, double *r_remove,
                        double *r_add)
{
    /* tl: the bound on log E_Q[Lambda^m] at integers m (rho part included); a = max A_jj */
    double cap = alpha * a / 2.0;
    double rr = lm_at(tl, M, alpha) / (alpha - 1.0);
    double ra = alpha - 1.0 <= 1.0 ? a /* E[Lambda^x] <= 1 for x in (0, 1] (Jensen) */
                                   : a + lm_at(tl, M, alpha - 1.0) / (alpha - 1.0);
    *r_remove = rr < cap ? (rr > 0.0 ? rr : 0.0) : cap;
    *r_add = ra < cap ? (ra > 0.0 ? ra : 0.0) : cap;
}

/* The work of one order level in DPC_WORK_LIMIT's units (about 1 ns each). Per step of the
 * programs (b (M+1)^4 / 24 two-neighbour, b (M+1)^3 / 6 one-neighbour) the cost falls with M
 * (short Horner rows cost more per step): counted as 0.4 + 22 / (M+1) and 0.35 + 15 / (M+1),
 * which put whole evaluations (BSR-4 and BSR-16 over 150 and 200 bins, with their
 * post-processing checks) at 1.6 counted units per measured ns of CPU on the 2-core AMD
 * EPYC Zen 5 (KVM, load 12): the budget errs on the safe side. */
static int rdp_uses3(size_t b, size_t M)
{
    return b >= 3 && (double)b * pow((double)(M + 1), 4.0) / 24.0 <= RDP_W3_WORK;
}

static double rdp_level_ops(size_t b, size_t M)
{
    double w1 = (double)b * pow((double)(M + 1), 3.0) / 6.0;
    double w3 = (double)b * pow((double)(M + 1), 4.0) / 24.0;
    double n3 = 0.4 + 22.0 / (double)(M + 1), n1 = 0.35 + 15.0 / (double)(M + 1);
    return (rdp_uses3(b, M) ? n3 * w3 : n1 * w1) + n1 * w1 * RDP_NPOW;
}

/* Whether the order doubles past M when the optimum sits at M (the loop below). */
static int rdp_can_double(size_t b, size_t M)
{
    double next = (double)b * pow((double)(2 * M + 1), 3.0) / 6.0 * (1 + RDP_NPOW);
    return 2 * M <= RDP_ORDER_MAX && next <= DPC_WORK_LIMIT;
}

double dpc__bib_rdp_ops_max(const dpc__bib_rdp *R)
{
    double w = 0.0;
    for (size_t M = RDP_ORDER0;; M *= 2) {
        w += rdp_level_ops(R->b, M);
        if (!rdp_can_double(R->b, M)) break;
    }
    return w * (double)R->ncand;
}

dpc_status dpc__bib_rdp_epsilon2(const dpc__bib_rdp *R, double s, double delta, double *e_remove,
                                 double *e_add, dpc_error *err)
{
    double ops;
    return dpc__bib_rdp_epsilon2_ops(R, s, delta, e_remove, e_add, &ops, err);
}

dpc_status dpc__bib_rdp_epsilon2_ops(const dpc__bib_rdp *R, double s, double delta,
                                     double *e_remove, double *e_add, double *ops, dpc_error *err)
{
    *e_remove = *e_add = INFINITY;
    *ops = 0.0;
    if (!(s > 0.0) || !isfinite(s))
        return dpc_error_param(err, DPC_E_INVALID, "sigma", "the noise must be > 0, got %g", s);
    double logd = log(delta), a = R->gmax / (s * s);
    size_t M = RDP_ORDER0;
    double *lm = dpc__malloc_array((RDP_NPOW + 1) * (RDP_ORDER_MAX + 1), sizeof *lm);
    if (!lm) return DPC__NOMEM(err, "the balls-in-bins Renyi bound");
    dpc_status st = DPC_OK;
    for (size_t k = 0; !st && k < R->ncand; k++) {
        size_t b = R->b, o = k * b;
        for (M = RDP_ORDER0;; M *= 2) {
            /* two neighbours exact where affordable (never looser), else one */
            *ops += rdp_level_ops(b, M);
            if (rdp_uses3(b, M))
                st = dpc__bib_rdp_logmoments3(b, R->d3 + o, R->e3 + o, R->r + o, R->r2 + o, s, M,
                                              lm, err);
            else
                st = dpc__bib_rdp_logmoments(b, R->d + o, R->e + o, R->r + o, s, M, lm, err);
            /* the add direction's power means (item 4 of the file comment): the moments of the
             * pair with noise s / beta' (one neighbour: the signal is beta'^2 weaker) */
            for (size_t q = 0; !st && q < RDP_NPOW; q++)
                st = dpc__bib_rdp_logmoments(b, R->d + o, R->e + o, R->r + o, s / rdp_pow[q], M,
                                             lm + (q + 1) * (M + 1), err);
            if (st) break;
            for (size_t q = 0; q <= RDP_NPOW; q++) { /* the common shift rho: exact */
                double bp = q ? rdp_pow[q - 1] : 1.0, rs = R->rho[k] * bp * bp / (s * s);
                for (size_t m = 0; m <= M; m++)
                    lm[q * (M + 1) + m] += rs * (double)m * ((double)m - 1.0) / 2.0;
            }
            double er = INFINITY, ea = INFINITY, or_ = NAN, oa = NAN;
            for (double al = 1.25; al <= (double)M + 1e-9; al += al < 8.0 ? 0.25 : 1.0) {
                double rr, ra;
                dpc__bib_rdp_curve(lm, M, a, al, &rr, &ra);
                for (size_t q = 0; q < RDP_NPOW; q++) { /* DP-REQ: bib-rdp (add, power means) */
                    double bp = rdp_pow[q], be = al - 1.0, gam = be / bp;
                    if (gam > (double)M) continue;
                    double v = (1.0 + bp) * a / 2.0 + lm_at(lm + (q + 1) * (M + 1), M, gam) / be;
                    if (v < ra) ra = v > 0.0 ? v : 0.0;
                }
                double x = dpc__rdp_eps1(al, rr, logd), y = dpc__rdp_eps1(al, ra, logd);
                if (x < er) er = x, or_ = al;
                if (y < ea) ea = y, oa = al;
            }
            if ((or_ >= (double)M || oa >= (double)M) && rdp_can_double(b, M))
                continue; /* an optimum at the largest order: more orders (if affordable) */
            /* each direction: the best candidate for it */
            if (er < 0.0) er = 0.0;
            if (ea < 0.0) ea = 0.0;
            if (er < *e_remove) *e_remove = er;
            if (ea < *e_add) *e_add = ea;
            break;
        }
    }
    free(lm);
    return st;
}

dpc_status dpc__bib_rdp_epsilon(const dpc__bib_rdp *R, double s, double delta, double *eps,
                                dpc_error *err)
{
    double er, ea;
    dpc_status st = dpc__bib_rdp_epsilon2(R, s, delta, &er, &ea, err);
    *eps = st ? INFINITY : er > ea ? er : ea;
    return st;
}
