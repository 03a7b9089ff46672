/* bib_sf.c — a deterministic (sampling-free) balls-in-bins bound for any nonnegative strategy
 * (doc/accounting.md section 7, "sampling-free bound"; DP-REQ: bib-sf).
 *
 * Pair. With C >= 0 the balls-in-bins run is dominated by P = (1/b) sum_j N(m_j, s^2 I) vs
 * Q = N(0, s^2 I), m_j = C x_j (bib_route.c). Everything depends on the Gram matrix G = M^T M.
 *
 * Domination by post-processing. Let a, c >= 0 with G <= a I + c 11^T (PSD order) and let
 * M' = [sqrt(a) I ; sqrt(c) 1^T] ((b + 1) x b), so M'^T M' = a I + c 11^T =: B. The reference
 * pair P' = (1/b) sum_j N(M' e_j, s^2 I), Q' = N(0, s^2 I) is a Gaussian shift sqrt(c) in one
 * coordinate (present for every j) times random allocation of one Gaussian with mean sqrt(a)
 * among b coordinates. The linear map L = M B^-1 M'^T sends M' e_j to m_j and has
 * L L^T = M B^-1 M^T <= I exactly when G <= B; adding independent N(0, s^2 (I - L L^T)) noise
 * maps Q' onto Q and P' onto P. So every divergence of (P, Q) in both directions is at most
 * that of (P', Q') (post-processing), which is the composition of a Gaussian mechanism
 * (mu0 = sqrt(c)/s) and random allocation (mu = sqrt(a)/s, b bins). The latter is bounded
 * deterministically by bib_ra.c; the composition is charged by basic composition with delta
 * split evenly (c > 0), or is the allocation alone (c = 0). For C = I (G = k I) the c = 0
 * candidate is exactly the random-allocation bound: nothing is lost for DP-SGD.
 *
 * Certificate. For each candidate c (fractions of the smallest off-diagonal entry of G: the
 * part every pair of columns shares) a = lambda_max(G - c 11^T) is estimated by power
 * iteration and then certified: a Cholesky factorization of (a + m) I - (G - c 11^T) must
 * succeed, m >= 1e-9 of the spectral radius bound (far above the factorization's backward
 * error, about b u max|entry|); m grows tenfold until it does. The guarantee therefore never
 * rests on the iteration having converged.
 *
 * Negative entries: the balls-in-bins pair itself is only known to dominate for C >= 0 (the
 * route refuses other strategies); the post-processing step above would hold for any C. */
#include "account/acc_internal.h"

#include "account/acc_math.h"
#include "common/util.h"

#include <stdlib.h>
#include <string.h>

/* 1 when S (b x b, symmetric) is positive definite by Cholesky (W: scratch b x b). */
static int chol_pd(const double *S, size_t b, double *W)
{
    memcpy(W, S, b * b * sizeof *W);
    for (size_t j = 0; j < b; j++) {
        double d = W[j * b + j];
        for (size_t k = 0; k < j; k++) d -= W[j * b + k] * W[j * b + k];
        if (!(d > 0.0)) return 0;
        d = sqrt(d);
        W[j * b + j] = d;
        for (size_t i = j + 1; i < b; i++) {
            double v = W[i * b + j];
            for (size_t k = 0; k < j; k++) v -= W[i * b + k] * W[j * b + k];
            W[i * b + j] = v / d;
        }
    }
    return 1;
}

/* A certified a >= lambda_max(G - c 11^T), a >= 0. S, W: scratch (b x b); v, w: (b). */
static double lmax_cert(const double *G, size_t b, double c, double *S, double *W, double *v,
                        double *w)
{
    double rad = 0.0; /* Gershgorin: the spectrum of B = G - c 11^T lies in [-rad, rad] */
    for (size_t i = 0; i < b; i++) {
        double r = 0.0;
        for (size_t j = 0; j < b; j++) r += fabs(G[i * b + j] - c);
        if (r > rad) rad = r;
    }
    if (!(rad > 0.0)) return 0.0;
    for (size_t i = 0; i < b; i++) v[i] = 1.0 + (double)i / (double)b; /* fixed start */
    double ray = 0.0;
    for (int it = 0; it < 400; it++) { /* power iteration on B + rad I (PSD) */
        double nn = 0.0, vb = 0.0, vv = 0.0;
        for (size_t i = 0; i < b; i++) {
            double x = 0.0;
            for (size_t j = 0; j < b; j++) x += (G[i * b + j] - c) * v[j];
            vb += v[i] * x;
            vv += v[i] * v[i];
            w[i] = x + rad * v[i];
            nn += w[i] * w[i];
        }
        double r = vb / vv;
        nn = sqrt(nn);
        if (!(nn > 0.0)) break;
        for (size_t i = 0; i < b; i++) v[i] = w[i] / nn;
        if (it > 10 && fabs(r - ray) <= 1e-13 * rad) {
            ray = r;
            break;
        }
        ray = r;
    }
    for (double m = 1e-9 * rad;; m *= 10.0) {
        double a = ray + m;
        if (a >= rad) return rad; /* a rad I - B is diagonally dominant: no check needed */
        for (size_t i = 0; i < b; i++)
            for (size_t j = 0; j < b; j++) S[i * b + j] = (i == j ? a : 0.0) - (G[i * b + j] - c);
        if (chol_pd(S, b, W)) return a > 0.0 ? a : 0.0;
    }
}

dpc_status dpc__bib_sf_prepare(const double *G, size_t b, double *a, double *c, size_t *count,
                               dpc_error *err)
{
    *count = 0;
    if (b > DPC__BIB_SF_MAX_BINS)
        return dpc_error_param(err, DPC_E_RANGE, "part.b",
                               "the sampling-free balls-in-bins bound takes O(b^3) work per "
                               "candidate; at most %d bins",
                               DPC__BIB_SF_MAX_BINS);
    double offmin = INFINITY;
    for (size_t i = 0; i < b; i++)
        for (size_t j = 0; j < b; j++)
            if (i != j && G[i * b + j] < offmin) offmin = G[i * b + j];
    if (!(offmin > 0.0)) offmin = 0.0;
    double *S = dpc__malloc_array(b * b, sizeof *S), *W = dpc__malloc_array(b * b, sizeof *W);
    double *v = dpc__malloc_array(b, sizeof *v), *w = dpc__malloc_array(b, sizeof *w);
    dpc_status st = DPC_OK;
    if (!S || !W || !v || !w) st = DPC__NOMEM(err, "the sampling-free balls-in-bins bound");
    static const double frac[DPC__BIB_SF_CAND] = {0.0, 0.8, 1.0};
    for (size_t i = 0; !st && i < DPC__BIB_SF_CAND; i++) {
        if (i > 0 && offmin == 0.0) break;
        c[*count] = frac[i] * offmin;
        a[*count] = lmax_cert(G, b, c[*count], S, W, v, w);
        (*count)++;
    }
    free(S);
    free(W);
    free(v);
    free(w);
    return st;
}

dpc_status dpc__bib_sf_epsilon2(const double *a, const double *c, size_t count, size_t b,
                                double s, double delta, double *e_remove, double *e_add,
                                dpc_error *err)
{
    *e_remove = *e_add = INFINITY;
    for (size_t i = 0; i < count; i++) { /* each direction: the best candidate for it */
        double er = 0.0, ea = 0.0, eg = 0.0, mu = sqrt(a[i]) / s, mu0 = sqrt(c[i]) / s;
        double dr = c[i] > 0.0 ? 0.5 * delta : delta;
        dpc_status st = DPC_OK;
        if (mu > 0.0) st = dpc__ra_epsilon2(b, mu, dr, &er, &ea, err);
        if (!st && mu0 > 0.0) st = dpc_gdp_epsilon(mu0, 0.5 * delta, &eg, err);
        if (st) return st;
        if (er + eg < *e_remove) *e_remove = er + eg;
        if (ea + eg < *e_add) *e_add = ea + eg;
    }
    return DPC_OK;
}

/* One candidate's direction needs no computing when it certainly exceeds floor: the Gaussian
 * part alone does, or the exact random-allocation divergence at floor - eg (a lower bound from
 * test events, dpc__ra_log_delta_lower) exceeds its share dr of delta, so the exact epsilon,
 * and the upper bound that would be computed, lie above floor - eg. The test point is moved up
 * by a relative 1e-12 and the lower bound must clear log(dr) by 1e-6 (its rounding). */
#define SF_ABOVE_OPS 2e5 /* the test events: 2 x 2001 normal log-tails, about 0.2 ms */
static int sf_above(size_t b, double mu, double eg, double dr, double floor, int remove)
{
    if (!isfinite(floor)) return 0;
    if (eg > floor) return 1;
    double x = floor - eg;
    x += 1e-12 * (fabs(floor) + fabs(eg)) + 1e-300;
    return dpc__ra_log_delta_lower(b, mu, x, remove) > log(dr) + 1e-6;
}

dpc_status dpc__bib_sf_epsilon2_over(const double *a, const double *c, size_t count, size_t b,
                                     double s, double delta, double floor_r, double floor_a,
                                     double *e_remove, double *e_add, double *ops, dpc_error *err)
{
    *e_remove = *e_add = INFINITY;
    *ops = 0.0;
    for (size_t i = 0; i < count; i++) { /* each direction: the best candidate for it */
        double mu = sqrt(a[i]) / s, mu0 = sqrt(c[i]) / s, eg = 0.0;
        double dr = c[i] > 0.0 ? 0.5 * delta : delta;
        dpc_status st = DPC_OK;
        if (mu0 > 0.0 && (st = dpc_gdp_epsilon(mu0, 0.5 * delta, &eg, err))) return st;
        for (int remove = 1; remove >= 0; remove--) {
            double fl = remove ? floor_r : floor_a, e = 0.0, *out = remove ? e_remove : e_add;
            if (mu > 0.0) {
                *ops += SF_ABOVE_OPS;
                if (sf_above(b, mu, eg, dr, fl, remove)) continue;
                *ops += 0.5 * dpc__ra_epsilon_ops(b); /* one direction's curves */
                if ((st = dpc__ra_epsilon_dir(b, mu, dr, remove, &e, err))) return st;
            }
            if (e + eg < *out) *out = e + eg;
        }
    }
    return DPC_OK;
}

dpc_status dpc__bib_sf_epsilon(const double *a, const double *c, size_t count, size_t b,
                               double s, double delta, double *eps, dpc_error *err)
{
    double er, ea;
    dpc_status st = dpc__bib_sf_epsilon2(a, c, count, b, s, delta, &er, &ea, err);
    *eps = st ? INFINITY : er > ea ? er : ea;
    return st;
}
