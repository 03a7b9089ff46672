/* theory_beta.c — noise-coefficient families: coefficients, proven truncation tails, |B|^2,
 * limiting and finite-horizon sensitivity, and the time-domain series S_b(beta). */
#include "nu/theory_internal.h"
#include "common/util.h"
#include "dpcorr/fft.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

dpc_theory_beta dpc_theory_beta_sgd(void)
{
    return (dpc_theory_beta){.kind = DPC_THEORY_BETA_SGD};
}
dpc_theory_beta dpc_theory_beta_nu(double nu)
{
    return (dpc_theory_beta){.kind = DPC_THEORY_BETA_NU, .nu = nu};
}
dpc_theory_beta dpc_theory_beta_antipgd(double nu)
{
    return (dpc_theory_beta){.kind = DPC_THEORY_BETA_ANTIPGD, .nu = nu};
}
dpc_theory_beta dpc_theory_beta_array(const double *coeffs, size_t len)
{
    return (dpc_theory_beta){.kind = DPC_THEORY_BETA_ARRAY, .len = len, .coeffs = coeffs};
}

const char *dpc_theory_beta_kind_name(dpc_theory_beta_kind k)
{
    switch (k) {
    case DPC_THEORY_BETA_SGD: return "sgd";
    case DPC_THEORY_BETA_NU: return "nu";
    case DPC_THEORY_BETA_ANTIPGD: return "antipgd";
    case DPC_THEORY_BETA_ARRAY: return "array";
    }
    return "?";
}

int dpc_theory_beta_describe(const dpc_theory_beta *b, char *buf, size_t len)
{
    switch (b->kind) {
    case DPC_THEORY_BETA_SGD: return snprintf(buf, len, "Noisy-SGD");
    case DPC_THEORY_BETA_NU:
        return b->nu == 0.0 ? snprintf(buf, len, "Optimal CC (nu=0)")
                            : snprintf(buf, len, "nu-FTRL (nu=%g)", b->nu);
    case DPC_THEORY_BETA_ANTIPGD:
        return b->nu == 0.0 ? snprintf(buf, len, "anti-PGD")
                            : snprintf(buf, len, "damped anti-PGD (nu=%g)", b->nu);
    case DPC_THEORY_BETA_ARRAY: return snprintf(buf, len, "Toeplitz (%zu coefficients)", b->len);
    }
    return snprintf(buf, len, "?");
}

dpc_status dpc_theory_beta_check(const dpc_theory_beta *b, dpc_error *err)
{
    if (!b) return dpc_error_param(err, DPC_E_INVALID, "beta", "NULL");
    switch (b->kind) {
    case DPC_THEORY_BETA_SGD: return DPC_OK;
    case DPC_THEORY_BETA_NU:
    case DPC_THEORY_BETA_ANTIPGD:
        if (!(b->nu >= 0.0 && b->nu < 1.0))
            return dpc_error_set(err, DPC_E_INVALID, "beta.nu = %g must be in [0, 1)", b->nu);
        return DPC_OK;
    case DPC_THEORY_BETA_ARRAY:
        if (b->len == 0 || !b->coeffs)
            return dpc_error_set(err, DPC_E_INVALID, "beta.coeffs: empty array");
        if (!(b->coeffs[0] != 0.0) || !isfinite(b->coeffs[0]))
            return dpc_error_set(err, DPC_E_INVALID, "beta.coeffs[0] must be finite and nonzero");
        for (size_t t = 1; t < b->len; t++)
            if (!isfinite(b->coeffs[t]))
                return dpc_error_set(err, DPC_E_INVALID, "beta.coeffs[%zu] is not finite", t);
        return DPC_OK;
    }
    return dpc_error_set(err, DPC_E_INVALID, "beta.kind = %d unknown", (int)b->kind);
}

dpc_status dpc_theory_beta_from_mech(const dpc_mech *m, size_t len, dpc_theory_beta *out,
                                     double **owned, dpc_error *err)
{
    *owned = NULL;
    const dpc_mech_params *p = dpc_mech_get_params(m);
    switch (p->kind) {
    case DPC_MECH_IDENTITY: *out = dpc_theory_beta_sgd(); return DPC_OK;
    case DPC_MECH_NU: *out = dpc_theory_beta_nu(p->nu); return DPC_OK;
    case DPC_MECH_ANTIPGD: *out = dpc_theory_beta_antipgd(p->nu); return DPC_OK;
    case DPC_MECH_LCGD:
        if (!(p->lambda > 0.0)) /* nu = 1 - lambda must be below 1 */
            return dpc_error_param(err, DPC_E_INVALID, "mech.lambda",
                                   "must be > 0 for the theory (the Anti-PGD beta with nu = 1 - "
                                   "lambda needs nu < 1), got %g", p->lambda);
        *out = dpc_theory_beta_antipgd(1.0 - p->lambda);
        return DPC_OK;
    default: break;
    }
    if (!dpc_mech_is_toeplitz(m))
        return dpc_error_set(err, DPC_E_UNSUPPORTED, "beta from mechanism: %s is not Toeplitz",
                             dpc_mech_kind_name(p->kind));
    if (len == 0) return dpc_error_set(err, DPC_E_INVALID, "beta from mechanism: len = 0");
    double *c = dpc__malloc_array(len, sizeof *c);
    if (!c) return DPC__NOMEM(err, "coefficients");
    dpc_status st = dpc_mech_noising_coeffs(m, c, len, err);
    if (st) {
        free(c);
        return st;
    }
    *owned = c;
    *out = dpc_theory_beta_array(c, len);
    return DPC_OK;
}

void dpc_theory_beta_coeffs(const dpc_theory_beta *b, double *out, size_t len)
{
    for (size_t t = 0; t < len; t++) out[t] = 0.0;
    if (len == 0) return;
    switch (b->kind) {
    case DPC_THEORY_BETA_SGD: out[0] = 1.0; break;
    case DPC_THEORY_BETA_ANTIPGD:
        out[0] = 1.0;
        if (len > 1) out[1] = -(1.0 - b->nu);
        break;
    case DPC_THEORY_BETA_NU: {
        /* a_0 = 1, a_t = a_{t-1} (t - 3/2) / t; beta_t = a_t (1-nu)^t (note 3.1) */
        double a = 1.0, p = 1.0, r = 1.0 - b->nu;
        out[0] = 1.0;
        for (size_t t = 1; t < len; t++) {
            double td = (double)t;
            a *= (td - 1.5) / td;
            p *= r;
            out[t] = a * p;
        }
        break;
    }
    case DPC_THEORY_BETA_ARRAY:
        for (size_t t = 0; t < len && t < b->len; t++) out[t] = b->coeffs[t];
        break;
    }
}

double dpc_theory_beta_tail(const dpc_theory_beta *b, size_t len)
{
    switch (b->kind) {
    case DPC_THEORY_BETA_SGD: return len >= 1 ? 0.0 : 1.0;
    case DPC_THEORY_BETA_ANTIPGD: return len >= 2 ? 0.0 : len == 1 ? 1.0 - b->nu : 2.0 - b->nu;
    case DPC_THEORY_BETA_NU: {
        if (len == 0) return 2.0;
        if (b->nu == 0.0) return INFINITY; /* sum_{t>=L} |a_t| ~ 1/sqrt(pi L): finite, but the
                                              series S_b needs the exponential damping */
        /* |a_t| is non-increasing for t >= 1, so sum_{t>=L} |a_t| r^t <= |a_L| r^L / (1 - r).
         * |a_L| via lgamma: |a_L| = Gamma(L - 1/2) / (2 sqrt(pi) Gamma(L + 1)). */
        double L = (double)len;
        double la = lgamma(L - 0.5) - lgamma(L + 1.0) - log(2.0 * sqrt(M_PI));
        return exp(la + L * log1p(-b->nu)) / b->nu;
    }
    case DPC_THEORY_BETA_ARRAY: {
        double s = 0.0;
        for (size_t t = len; t < b->len; t++) s += fabs(b->coeffs[t]);
        return s;
    }
    }
    return INFINITY;
}

size_t dpc_theory_beta_len_for_tail(const dpc_theory_beta *b, double tol, size_t min_len)
{
    if (b->kind == DPC_THEORY_BETA_ARRAY) {
        size_t L = 1;
        while (L < min_len) L <<= 1;
        while (L < b->len && dpc_theory_beta_tail(b, L) > tol) L <<= 1;
        return L;
    }
    size_t L = 2;
    while (L < min_len) L <<= 1;
    for (; L <= ((size_t)1 << 30); L <<= 1)
        if (dpc_theory_beta_tail(b, L) <= tol) return L;
    return 0;
}

double dpc_theory_beta_spectrum(const dpc_theory_beta *b, double omega)
{
    double s = sin(0.5 * omega), s2 = s * s;
    switch (b->kind) {
    case DPC_THEORY_BETA_SGD: return 1.0;
    case DPC_THEORY_BETA_NU: return sqrt(dpc__pole2(b->nu, s2));     /* |1 - nu - e^{iw}| */
    case DPC_THEORY_BETA_ANTIPGD: return dpc__pole2(b->nu, s2);      /* |1 - (1-nu)e^{iw}|^2 */
    case DPC_THEORY_BETA_ARRAY: {
        double zr = cos(omega), zi = sin(omega), ar = 0.0, ai = 0.0;
        for (size_t t = b->len; t-- > 0;) { /* Horner: acc = acc z + beta_t */
            double nr = ar * zr - ai * zi + b->coeffs[t];
            double ni = ar * zi + ai * zr;
            ar = nr;
            ai = ni;
        }
        return ar * ar + ai * ai;
    }
    }
    return NAN;
}

double dpc__beta_scale(const dpc_theory_beta *b)
{
    if ((b->kind == DPC_THEORY_BETA_NU || b->kind == DPC_THEORY_BETA_ANTIPGD) && b->nu > 0.0)
        return -log1p(-b->nu);
    return 1.0;
}

dpc_status dpc_theory_gamma_inf2(const dpc_theory_beta *b, double *g2, dpc_error *err)
{
    dpc_status st = dpc_theory_beta_check(b, err);
    if (st) return st;
    switch (b->kind) {
    case DPC_THEORY_BETA_SGD: *g2 = 1.0; return DPC_OK;
    case DPC_THEORY_BETA_NU:
        *g2 = b->nu == 0.0 ? INFINITY : 2.0 / M_PI * dpc_special_ellip_k(1.0 - b->nu);
        return DPC_OK;
    case DPC_THEORY_BETA_ANTIPGD:
        *g2 = b->nu == 0.0 ? INFINITY : 1.0 / (b->nu * (2.0 - b->nu));
        return DPC_OK;
    case DPC_THEORY_BETA_ARRAY: break;
    }
    /* periodic trapezoid rule for (1/2pi) int |B|^-2: geometric convergence when B has no zero
     * on the unit circle; doubling until two values agree. */
    size_t M = dpc_fft_next_pow2(b->len < 8 ? 16 : 2 * b->len);
    double prev = -1.0;
    for (; M <= ((size_t)1 << 24); M <<= 1) {
        double *sp = dpc__malloc_array(M / 2 + 1, sizeof *sp);
        if (!sp || !dpc__spectrum_grid(b->coeffs, b->len, M, sp)) {
            free(sp);
            return DPC__NOMEM(err, "spectrum grid");
        }
        double sum = 0.0;
        int zero = 0;
        for (size_t k = 0; k <= M / 2; k++) {
            if (!(sp[k] > 0.0)) zero = 1;
            double wk = (k == 0 || k == M / 2) ? 1.0 : 2.0;
            sum += wk / sp[k];
        }
        free(sp);
        if (zero) {
            *g2 = INFINITY;
            return DPC_OK;
        }
        double cur = sum / (double)M;
        if (prev > 0.0 && fabs(cur - prev) <= 1e-13 * cur) {
            *g2 = cur;
            return DPC_OK;
        }
        prev = cur;
    }
    return dpc_error_param(err, DPC_E_NUMERIC, "gamma_inf",
                         "quadrature did not converge (B nearly vanishes on the unit "
                         "circle; gamma_inf^2 >= %.6g)", prev);
}

dpc_status dpc_theory_gamma_t2(const dpc_theory_beta *b, size_t T, double *g2, dpc_error *err)
{
    dpc_status st = dpc_theory_beta_check(b, err);
    if (st) return st;
    double s = 0.0;
    switch (b->kind) {
    case DPC_THEORY_BETA_SGD: *g2 = T ? 1.0 : 0.0; return DPC_OK;
    case DPC_THEORY_BETA_NU: {
        double r = 1.0, p = 1.0, q = 1.0 - b->nu;
        for (size_t t = 0; t < T; t++) {
            if (t) {
                r *= (2.0 * (double)t - 1.0) / (2.0 * (double)t);
                p *= q;
            }
            s += (r * p) * (r * p);
        }
        *g2 = s;
        return DPC_OK;
    }
    case DPC_THEORY_BETA_ANTIPGD: {
        double p = 1.0, q = 1.0 - b->nu;
        for (size_t t = 0; t < T; t++, p *= q) s += p * p;
        *g2 = s;
        return DPC_OK;
    }
    case DPC_THEORY_BETA_ARRAY: break;
    }
    double *c = dpc__malloc_array(T ? T : 1, sizeof *c);
    if (!c) return DPC__NOMEM(err, "inverse coefficients");
    for (size_t t = 0; t < T; t++) {
        double acc = (t == 0) ? 1.0 : 0.0;
        size_t jmax = t < b->len - 1 ? t : b->len - 1;
        for (size_t j = 1; j <= jmax; j++) acc -= b->coeffs[j] * c[t - j];
        c[t] = acc / b->coeffs[0];
        s += c[t] * c[t];
    }
    free(c);
    if (!isfinite(s)) return dpc_error_param(err, DPC_E_NUMERIC, "gamma_T", "overflow");
    *g2 = s;
    return DPC_OK;
}

double dpc_theory_s_naive(const double *beta, size_t len, double bb)
{
    double r = 1.0 - bb, s = 0.0, p = 1.0;
    for (size_t k = 0; k < len; k++) {
        double ac = 0.0;
        for (size_t t = 0; t + k < len; t++) ac += beta[t] * beta[t + k];
        s += (k == 0 ? 1.0 : 2.0) * p * ac;
        p *= r;
    }
    return s;
}

/* S = 2 sum_t beta_t u_t - sum_t beta_t^2, u_t = beta_t + r u_{t-1}: the two halves of the
 * symmetric double sum are equal, so one forward pass suffices. Compensated sums. */
static double s_series(const double *beta, size_t len, double r)
{
    double u = 0.0, s = 0.0, c = 0.0, q = 0.0, cq = 0.0;
    for (size_t t = 0; t < len; t++) {
        u = beta[t] + r * u;
        double y = beta[t] * u - c, tt = s + y;
        c = (tt - s) - y;
        s = tt;
        double y2 = beta[t] * beta[t] - cq, t2 = q + y2;
        cq = (t2 - q) - y2;
        q = t2;
    }
    return 2.0 * s - q;
}

/* Truncation length for the series at b: tail <= 2.5e-14 max(nu, b) (S_b >= min |B|^2 >= nu
 * for the nu family, and S_b >= b-ish otherwise), at least 64. */
static size_t series_len(const dpc_theory_beta *b, double bb)
{
    if (b->kind == DPC_THEORY_BETA_ARRAY) return b->len;
    if (b->kind != DPC_THEORY_BETA_NU) return 2;
    double scale = bb > b->nu ? bb : b->nu;
    return dpc_theory_beta_len_for_tail(b, 2.5e-14 * scale, 64);
}

dpc_status dpc__theory_s_many(const dpc_theory_beta *b, const double *bb, size_t n, double *S,
                              dpc_error *err)
{
    dpc_status st = dpc_theory_beta_check(b, err);
    if (st) return st;
    if (b->kind == DPC_THEORY_BETA_NU && b->nu == 0.0)
        return dpc_error_set(err, DPC_E_UNSUPPORTED,
                             "S_b series: nu = 0 has no exponential damping (use the quadrature)");
    size_t Lmax = 0;
    double work = 0.0;
    for (size_t j = 0; j < n; j++) {
        if (!(bb[j] > 0.0 && bb[j] < 2.0))
            return dpc_error_param(err, DPC_E_INVALID, "S_b", "b = eta lambda = %g must be in (0, 2)",
                                 bb[j]);
        size_t L = series_len(b, bb[j]);
        if (L == 0 || L > ((size_t)1 << 26))
            return dpc_error_set(err, DPC_E_RANGE,
                                 "S_b series: nu = %g needs more than 2^26 coefficients (use the "
                                 "quadrature)", b->nu);
        if (L > Lmax) Lmax = L;
        work += 8.0 * (double)L;
    }
    /* one compensated pass per eigenvalue (DPC_WORK_LIMIT): small nu means long series */
    if ((st = dpc__work_check(work, b->kind == DPC_THEORY_BETA_NU ? "nu" : "len",
                              "the S_b series over the eigenvalues (d x coefficients; the "
                              "quadrature method is cheaper here)", err)))
        return st;
    double *beta = dpc__malloc_array(Lmax, sizeof *beta);
    if (!beta) return DPC__NOMEM(err, "coefficients");
    dpc_theory_beta_coeffs(b, beta, Lmax);
    for (size_t j = 0; j < n; j++) S[j] = s_series(beta, series_len(b, bb[j]), 1.0 - bb[j]);
    free(beta);
    return DPC_OK;
}

dpc_status dpc_theory_s(const dpc_theory_beta *b, double bb, double *S, dpc_error *err)
{
    return dpc__theory_s_many(b, &bb, 1, S, err);
}
