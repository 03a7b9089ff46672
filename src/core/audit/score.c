/* score.c — white-box scores of gradient canaries: the whitener W of the mechanism's noise
 * (W B B^T W^T = I) and the log-likelihood ratios of dpcorr/audit.h.
 *
 * Two representations of W:
 *   Toeplitz  W = C, lower-triangular Toeplitz with first column c (the L leading coefficients
 *             that are not zero; zero beyond). W y and W^T w are causal / anti-causal
 *             convolutions: direct when L <= 64 (banded strategies, DP-SGD), by FFT otherwise.
 *   dense     (n, n) row-major lower triangular: C itself for DENSE strategies; for the tree
 *             (2n noise rows) L^-1 where L L^T = B B^T (Cholesky), which whitens exactly what
 *             the trainer releases, G + sigma B Z. */
#include "audit/audit_internal.h"
#include "common/util.h"
#include "dpcorr/fft.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DIRECT_MAX 64 /* Toeplitz: nonzero coefficients up to which convolutions are direct */

struct dpc_audit_scorer {
    size_t n;
    double sigma, clip;
    double *c;   /* Toeplitz: (L) first column of C; NULL for dense */
    size_t L;
    double *W;   /* dense: (n, n) row-major, lower triangular; NULL for Toeplitz */
    double *cn2; /* (n) ||W e_s||^2, the squared column norms */
};

void dpc_audit_scorer_free(dpc_audit_scorer *s)
{
    if (!s) return;
    free(s->c);
    free(s->W);
    free(s->cn2);
    free(s);
}

size_t dpc_audit_scorer_steps(const dpc_audit_scorer *s) { return s->n; }

/* In-place Cholesky of the lower triangle of A (n, n): A = L L^T. DPC_E_NUMERIC if A is not
 * numerically positive definite. */
static dpc_status cholesky(double *A, size_t n, dpc_error *err)
{
    for (size_t j = 0; j < n; j++) {
        double d = A[j * n + j];
        for (size_t k = 0; k < j; k++) d -= A[j * n + k] * A[j * n + k];
        if (!(d > 0))
            return dpc_error_set(err, DPC_E_NUMERIC,
                                 "audit: the noise covariance B B^T is not positive definite "
                                 "(pivot %zu is %g)", j, d);
        double ljj = sqrt(d);
        A[j * n + j] = ljj;
        for (size_t i = j + 1; i < n; i++) {
            double s = A[i * n + j];
            for (size_t k = 0; k < j; k++) s -= A[i * n + k] * A[j * n + k];
            A[i * n + j] = s / ljj;
        }
    }
    return DPC_OK;
}

/* In-place inverse of the lower-triangular L (n, n), column by column from the left:
 *     X[j][j] = 1 / L[j][j],   X[i][j] = -(sum_{k=j..i-1} L[i][k] X[k][j]) / L[i][i]  (i > j).
 * Column j of X needs only columns >= j of L (not yet overwritten) and X's column j above row i. */
static void invert_lower(double *A, size_t n)
{
    for (size_t j = 0; j < n; j++) {
        for (size_t i = j + 1; i < n; i++) {
            double s = A[i * n + j] / A[j * n + j]; /* k = j: L[i][j] X[j][j] */
            for (size_t k = j + 1; k < i; k++) s += A[i * n + k] * A[k * n + j];
            A[i * n + j] = -s / A[i * n + i];
        }
        A[j * n + j] = 1.0 / A[j * n + j];
    }
}

/* W = L^-1, L L^T = B B^T, from the dense noising matrix B (n, rows). */
static dpc_status whitener_from_noising(dpc_audit_scorer *s, const dpc_mech *m, dpc_error *err)
{
    size_t n = s->n, rows = dpc_mech_noise_rows(m);
    double *B = dpc__malloc_array(n, rows * sizeof(double));
    s->W = dpc__calloc(n * n, sizeof(double));
    if (!B || !s->W) {
        free(B);
        return DPC__NOMEM(err, "audit whitener");
    }
    dpc_status st = dpc_mech_dense_noising(m, B, err);
    if (st) {
        free(B);
        return st;
    }
    /* G = B B^T (lower triangle), skipping the zeros of B (the tree's B is sparse) */
    double *G = s->W;
    for (size_t t = 0; t < n; t++)
        for (size_t r = 0; r < rows; r++) {
            double b = B[t * rows + r];
            if (b == 0.0) continue;
            for (size_t u = 0; u <= t; u++) G[t * n + u] += b * B[u * rows + r];
        }
    free(B);
    st = cholesky(G, n, err);
    if (st) return st;
    invert_lower(G, n);
    return DPC_OK;
}

static dpc_status build_whitener(dpc_audit_scorer *s, const dpc_mech *m, dpc_error *err)
{
    size_t n = s->n;
    if (dpc_mech_is_toeplitz(m)) {
        double *c = dpc__malloc_array(n, sizeof *c);
        if (!c) return DPC__NOMEM(err, "audit whitener");
        dpc_status st = dpc_mech_strategy_coeffs(m, c, n, err);
        if (st) {
            free(c);
            return st;
        }
        size_t L = n;
        while (L > 1 && c[L - 1] == 0.0) L--;
        s->c = c;
        s->L = L;
        return DPC_OK;
    }
    if (n > 4096)
        return dpc_error_param(err, DPC_E_RANGE, "mech.steps",
                               "white-box scores of the %s mechanism need its dense matrices: "
                               "at most 4096 steps, got %zu",
                               dpc_mech_kind_name(dpc_mech_get_params(m)->kind), n);
    if (dpc_mech_noise_rows(m) == n) { /* square: W = C */
        s->W = dpc__malloc_array(n * n, sizeof(double));
        if (!s->W) return DPC__NOMEM(err, "audit whitener");
        return dpc_mech_dense_strategy(m, s->W, err);
    }
    return whitener_from_noising(s, m, err);
}

dpc_status dpc_audit_scorer_new(dpc_audit_scorer **out, const dpc_mech *m, double sigma,
                                double clip, dpc_error *err)
{
    *out = NULL;
    if (!m) return dpc_error_param(err, DPC_E_INVALID, "mech", "NULL");
    if (!(sigma > 0) || !isfinite(sigma))
        return dpc_error_param(err, DPC_E_INVALID, "sigma", "must be finite and > 0, got %g",
                               sigma);
    if (!(clip > 0) || !isfinite(clip))
        return dpc_error_param(err, DPC_E_INVALID, "clip", "must be finite and > 0, got %g", clip);
    dpc_audit_scorer *s = calloc(1, sizeof *s);
    if (!s) return DPC__NOMEM(err, "audit scorer");
    s->n = dpc_mech_steps(m);
    s->sigma = sigma;
    s->clip = clip;
    dpc_status st = build_whitener(s, m, err);
    if (!st) {
        s->cn2 = dpc__calloc(s->n, sizeof(double));
        if (!s->cn2) st = DPC__NOMEM(err, "audit scorer");
    }
    if (st) {
        dpc_audit_scorer_free(s);
        return st;
    }
    size_t n = s->n;
    if (s->c) { /* ||W e_s||^2 = sum_{j < min(L, n - s)} c_j^2 */
        double acc = 0.0;
        double *pre = s->cn2; /* pre[k] = sum_{j < k+1} c_j^2, then mapped */
        for (size_t j = 0; j < n; j++) {
            if (j < s->L) acc += s->c[j] * s->c[j];
            pre[j] = acc;
        }
        for (size_t a = 0, b = n - 1; a < b; a++, b--) { /* cn2[s] = pre[n - 1 - s] */
            double t = pre[a];
            pre[a] = pre[b];
            pre[b] = t;
        }
    } else {
        for (size_t t = 0; t < n; t++)
            for (size_t u = 0; u <= t; u++) s->cn2[u] += s->W[t * n + u] * s->W[t * n + u];
    }
    *out = s;
    return DPC_OK;
}

/* ---- W y, W^T w, W x ----------------------------------------------------------------------- */

/* w = W y (n). */
static dpc_status whiten(const dpc_audit_scorer *s, const double *y, double *w, dpc_error *err)
{
    size_t n = s->n;
    if (s->W) {
        for (size_t t = 0; t < n; t++) {
            double a = 0.0;
            for (size_t u = 0; u <= t; u++) a += s->W[t * n + u] * y[u];
            w[t] = a;
        }
        return DPC_OK;
    }
    if (s->L <= DIRECT_MAX) {
        for (size_t t = 0; t < n; t++) {
            double a = 0.0;
            size_t jmax = t + 1 < s->L ? t + 1 : s->L;
            for (size_t j = 0; j < jmax; j++) a += s->c[j] * y[t - j];
            w[t] = a;
        }
        return DPC_OK;
    }
    double *full = dpc__malloc_array(s->L + n - 1, sizeof *full);
    if (!full) return DPC__NOMEM(err, "audit convolution");
    dpc_status st = dpc_fft_convolve(full, s->c, s->L, y, n, err);
    if (!st) memcpy(w, full, n * sizeof *w);
    free(full);
    return st;
}

/* u[s] = (W^T w)[s] = <W e_s, w> for every s (n). */
static dpc_status whiten_t(const dpc_audit_scorer *s, const double *w, double *u, dpc_error *err)
{
    size_t n = s->n;
    if (s->W) {
        memset(u, 0, n * sizeof *u);
        for (size_t t = 0; t < n; t++)
            for (size_t v = 0; v <= t; v++) u[v] += s->W[t * n + v] * w[t];
        return DPC_OK;
    }
    if (s->L <= DIRECT_MAX) {
        for (size_t t = 0; t < n; t++) {
            double a = 0.0;
            size_t jmax = n - t < s->L ? n - t : s->L;
            for (size_t j = 0; j < jmax; j++) a += s->c[j] * w[t + j];
            u[t] = a;
        }
        return DPC_OK;
    }
    /* u[t] = sum_j c_j w[t + j] = (c * rev(w))[n - 1 - t], rev(w)[i] = w[n - 1 - i] */
    double *rw = dpc__malloc_array(n, sizeof *rw), *full = dpc__malloc_array(s->L + n - 1,
                                                                            sizeof *full);
    if (!rw || !full) {
        free(rw);
        free(full);
        return DPC__NOMEM(err, "audit convolution");
    }
    for (size_t i = 0; i < n; i++) rw[i] = w[n - 1 - i];
    dpc_status st = dpc_fft_convolve(full, s->c, s->L, rw, n, err);
    if (!st)
        for (size_t t = 0; t < n; t++) u[t] = full[n - 1 - t];
    free(rw);
    free(full);
    return st;
}

/* v = W x, x the indicator of steps (nsteps). */
static void whiten_steps(const dpc_audit_scorer *s, const size_t *steps, size_t nsteps, double *v)
{
    size_t n = s->n;
    memset(v, 0, n * sizeof *v);
    for (size_t k = 0; k < nsteps; k++) {
        size_t c0 = steps[k];
        if (s->W) {
            for (size_t t = c0; t < n; t++) v[t] += s->W[t * n + c0];
        } else {
            size_t jmax = n - c0 < s->L ? n - c0 : s->L;
            for (size_t j = 0; j < jmax; j++) v[c0 + j] += s->c[j];
        }
    }
}

static dpc_status check_steps(const dpc_audit_scorer *s, const size_t *steps, size_t nsteps,
                              dpc_error *err)
{
    if (nsteps && !steps) return dpc_error_param(err, DPC_E_INVALID, "steps", "NULL");
    for (size_t k = 0; k < nsteps; k++)
        if (steps[k] >= s->n || (k && steps[k] <= steps[k - 1]))
            return dpc_error_param(err, DPC_E_INVALID, "steps",
                                   "must be increasing and below %zu (entry %zu is %zu)", s->n, k,
                                   steps[k]);
    return DPC_OK;
}

dpc_status dpc_audit_scorer_mu(const dpc_audit_scorer *s, const size_t *steps, size_t nsteps,
                               double *mu, dpc_error *err)
{
    dpc_status st = check_steps(s, steps, nsteps, err);
    if (st) return st;
    double *v = dpc__malloc_array(s->n, sizeof *v);
    if (!v) return DPC__NOMEM(err, "audit score");
    whiten_steps(s, steps, nsteps, v);
    double a = 0.0;
    for (size_t t = 0; t < s->n; t++) a += v[t] * v[t];
    *mu = s->clip * sqrt(a) / s->sigma;
    free(v);
    return DPC_OK;
}

/* log(1 - q + q e^x) without overflow or cancellation. */
static double log_mix(double q, double x)
{
    if (x > 0) return x + log(q + (1.0 - q) * exp(-x));
    return log1p(q * expm1(x));
}

dpc_status dpc_audit_score(const dpc_audit_scorer *s, const double *y, const size_t *steps,
                           size_t nsteps, double q, double *score, dpc_error *err)
{
    if (!y || !score) return dpc_error_param(err, DPC_E_INVALID, "y", "NULL");
    if (!(q > 0 && q <= 1))
        return dpc_error_param(err, DPC_E_INVALID, "q", "must be in (0, 1], got %g", q);
    dpc_status st = check_steps(s, steps, nsteps, err);
    if (st) return st;
    *score = 0.0;
    if (nsteps == 0) return DPC_OK;
    size_t n = s->n;
    double *w = dpc__malloc_array(2 * n, sizeof *w), *v = w + n;
    if (!w) return DPC__NOMEM(err, "audit score");
    st = whiten(s, y, w, err);
    if (!st && q == 1.0) { /* public participation: <clip W x, W y>/s^2 - ||clip W x||^2/(2 s^2) */
        whiten_steps(s, steps, nsteps, v);
        double dot = 0.0, nv = 0.0;
        for (size_t t = 0; t < n; t++) {
            dot += v[t] * w[t];
            nv += v[t] * v[t];
        }
        double s2 = s->sigma * s->sigma;
        *score = s->clip * dot / s2 - s->clip * s->clip * nv / (2.0 * s2);
    } else if (!st) { /* Poisson opportunities: sum_s log(1 - q + q exp(mu_s a_s - mu_s^2/2)) */
        st = whiten_t(s, w, v, err);
        double llr = 0.0;
        for (size_t k = 0; !st && k < nsteps; k++) {
            double nrm = sqrt(s->cn2[steps[k]]);
            if (nrm == 0.0) continue;
            double mu = s->clip * nrm / s->sigma, a = v[steps[k]] / (s->sigma * nrm);
            llr += log_mix(q, mu * a - 0.5 * mu * mu);
        }
        *score = llr;
    }
    free(w);
    if (!st && !isfinite(*score))
        st = dpc_error_set(err, DPC_E_NUMERIC, "audit: non-finite score %g", *score);
    return st;
}

dpc_status dpc_audit_score_cyclic(const dpc_audit_scorer *s, const double *y, size_t period,
                                  double *score, dpc_error *err)
{
    size_t n = s->n;
    if (!y || !score) return dpc_error_param(err, DPC_E_INVALID, "y", "NULL");
    if (period == 0 || period > n)
        return dpc_error_param(err, DPC_E_INVALID, "period", "must be in [1, %zu], got %zu", n,
                               period);
    double *w = dpc__malloc_array(3 * n, sizeof *w), *u = w + n, *v = u + n;
    size_t *steps = dpc__malloc_array(n / period + 1, sizeof *steps);
    double *llr = dpc__malloc_array(period, sizeof *llr);
    dpc_status st = w && steps && llr ? DPC_OK : DPC__NOMEM(err, "audit score");
    if (!st) st = whiten(s, y, w, err);
    if (!st) st = whiten_t(s, w, u, err); /* <W x, W y> = sum over x's steps of (W^T W y) */
    double top = -INFINITY, s2 = s->sigma * s->sigma;
    for (size_t o = 0; !st && o < period; o++) {
        size_t k = 0;
        double dot = 0.0, nv = 0.0;
        for (size_t t = o; t < n; t += period) steps[k++] = t, dot += u[t];
        whiten_steps(s, steps, k, v);
        for (size_t t = 0; t < n; t++) nv += v[t] * v[t];
        llr[o] = s->clip * dot / s2 - s->clip * s->clip * nv / (2.0 * s2);
        if (llr[o] > top) top = llr[o];
    }
    if (!st) { /* log of the mean of exp(llr) over the offsets */
        double acc = 0.0;
        for (size_t o = 0; o < period; o++) acc += exp(llr[o] - top);
        *score = top + log(acc / (double)period);
        if (!isfinite(*score)) st = dpc_error_set(err, DPC_E_NUMERIC, "audit: non-finite score");
    }
    free(w);
    free(steps);
    free(llr);
    return st;
}

/* ---- the released trajectory ---------------------------------------------------------------- */

dpc_status dpc_audit_unroll(const double *theta, size_t n, size_t d, const double *lr,
                            double momentum, double weight_decay, double expected_batch,
                            double *out, dpc_error *err)
{
    if (!theta || !lr || !out) return dpc_error_param(err, DPC_E_INVALID, "theta", "NULL");
    if (!(expected_batch > 0)) return dpc_error_param(err, DPC_E_INVALID, "expected_batch",
                                                      "must be > 0, got %g", expected_batch);
    for (size_t t = 0; t < n; t++)
        if (!(lr[t] > 0) || !isfinite(lr[t]))
            return dpc_error_param(err, DPC_E_INVALID, "lr", "step %zu: must be > 0, got %g", t,
                                   lr[t]);
    for (size_t j = 0; j < d; j++) {
        double vprev = 0.0;
        for (size_t t = 0; t < n; t++) {
            double th0 = theta[t * d + j], th1 = theta[(t + 1) * d + j];
            double v = (th0 - th1) / lr[t], h = v - momentum * vprev;
            out[t * d + j] = expected_batch * (h - weight_decay * th0);
            vprev = v;
        }
    }
    return DPC_OK;
}
