/* theory_lti.c — stationary error of linear regression in the fixed-design (LTI) model and of
 * mean estimation, the LTI optimum, the bounds of Appendix C, and the Table 1 / Table 4 rates
 * (nu-DP-FTRL paper Sec. 2, Appendices B and C; note Sec. 5). */
#include "nu/theory_internal.h"
#include "dpcorr/fft.h"
#include "common/util.h"

#include <math.h>
#include <stdlib.h>

#define QUAD_ORDER 24
#define ARRAY_GL_MAX 4096 /* longer arrays: FFT trapezoid rule */

dpc_status dpc_theory_problem_check(const dpc_theory_problem *p, dpc_error *err)
{
    if (!p) return dpc_error_set(err, DPC_E_INVALID, "problem: NULL");
    /* each field's range is its table row's (the constants enter squared: above 1e150 they
     * overflow, issue 28); the table's 0 means "unset", which a problem cannot be */
    dpc_status st = dpc_field_check(dpc_theory_problem_fields(), p, err);
    if (st) return st;
    if (p->eta == 0.0) return dpc_error_param(err, DPC_E_INVALID, "eta", "must be set (> 0)");
    if (p->rho == 0.0) return dpc_error_param(err, DPC_E_INVALID, "rho", "must be set (> 0)");
    if (p->G == 0.0) return dpc_error_param(err, DPC_E_INVALID, "G", "must be set (> 0)");
    if (p->d == 0 || !p->lambda) return dpc_error_param(err, DPC_E_INVALID, "d", "0 (no eigenvalues)");
    for (size_t j = 0; j < p->d; j++) {
        double b = p->eta * p->lambda[j];
        if (!(p->lambda[j] > 0.0) || !(b < 2.0)) /* eta is the step the caller chose */
            return dpc_error_param(err, DPC_E_INVALID, "eta",
                                   "eta x lambda[%zu] = %g x %g: need lambda > 0 and eta lambda "
                                   "< 2", j, p->eta, p->lambda[j]);
    }
    return DPC_OK;
}

void dpc_theory_powerlaw(double *lambda, size_t d, double alpha)
{
    for (size_t k = 0; k < d; k++) lambda[k] = pow((double)(k + 1), -alpha);
}

/* Pole distances of 1/|1 - b - e^{iw}|^2 from w = 0 (b < 1) or from w = pi (b > 1). */
static void pole_scales(const double *bb, size_t n, double *s0, double *spi)
{
    *s0 = 1.0;
    *spi = 1.0;
    for (size_t j = 0; j < n; j++) {
        if (bb[j] < 1.0) {
            double s = -log1p(-bb[j]);
            if (s < *s0) *s0 = s;
        } else if (bb[j] > 1.0) {
            double s = -log(bb[j] - 1.0);
            if (s < *spi) *spi = s;
        }
    }
}

dpc_status dpc__theory_q_many(const dpc_theory_beta *b, const double *bb, size_t n, double *Q,
                              dpc_error *err)
{
    double s0, spi;
    pole_scales(bb, n, &s0, &spi);
    double sb = dpc__beta_scale(b);
    if (sb < s0) s0 = sb;
    for (size_t j = 0; j < n; j++) Q[j] = 0.0;
    if (b->kind == DPC_THEORY_BETA_ARRAY && b->len > ARRAY_GL_MAX) {
        /* periodic trapezoid rule: error <= ||ac||_1 e^{-s (M - len)}; M >= len + 40/s. */
        double smin = s0 < spi ? s0 : spi;
        double need = (double)b->len + 40.0 / smin;
        if (need > (double)((size_t)1 << 26))
            return dpc_error_set(err, DPC_E_RANGE, "quadrature grid too large (%g points)", need);
        size_t M = dpc_fft_next_pow2((size_t)need);
        if (M < 2 * b->len) M = dpc_fft_next_pow2(2 * b->len);
        /* the spectrum by FFT, then every eigenvalue at every grid point (DPC_WORK_LIMIT) */
        dpc_status wst = dpc__work_check(20.0 * (double)M * log2((double)M) +
                                             2.0 * (double)M * (double)n, "d",
                                         "the quadrature over the eigenvalues (d x grid)", err);
        if (wst) return wst;
        double *sp = dpc__malloc_array(M / 2 + 1, sizeof *sp);
        if (!sp || !dpc__spectrum_grid(b->coeffs, b->len, M, sp)) {
            free(sp);
            return DPC__NOMEM(err, "spectrum grid");
        }
        for (size_t k = 0; k <= M / 2; k++) {
            double s = sin(M_PI * (double)k / (double)M), s2 = s * s;
            double wk = ((k == 0 || k == M / 2) ? 1.0 : 2.0) / (double)M;
            for (size_t j = 0; j < n; j++) Q[j] += wk * sp[k] / dpc__pole2(bb[j], s2);
        }
        free(sp);
        return DPC_OK;
    }
    theory_quad q;
    size_t degree = b->kind == DPC_THEORY_BETA_ARRAY ? 2 * b->len : 0;
    if (!dpc__quad_graded2(&q, s0, spi, QUAD_ORDER, degree)) return DPC__NOMEM(err, "quadrature");
    /* each node: the spectrum (O(len) for arrays) and every eigenvalue (DPC_WORK_LIMIT) */
    double per = (b->kind == DPC_THEORY_BETA_ARRAY ? 4.0 * (double)b->len : 30.0) + 4.0 * (double)n;
    dpc_status wst = dpc__work_check((double)q.n * per, "d",
                                     "the quadrature over the eigenvalues (d x nodes)", err);
    if (wst) {
        dpc__quad_free(&q);
        return wst;
    }
    for (size_t i = 0; i < q.n; i++) {
        double s = sin(0.5 * q.x[i]), s2 = s * s;
        double f = q.w[i] * dpc_theory_beta_spectrum(b, q.x[i]);
        for (size_t j = 0; j < n; j++) Q[j] += f / dpc__pole2(bb[j], s2);
    }
    dpc__quad_free(&q);
    return DPC_OK;
}

dpc_status dpc_theory_lti_error(const dpc_theory_problem *p, const dpc_theory_beta *b,
                                dpc_theory_method method, dpc_theory_lti *out, dpc_error *err)
{
    dpc_status st = dpc_theory_problem_check(p, err);
    if (st || (st = dpc_theory_beta_check(b, err))) return st;
    if (method != DPC_THEORY_SERIES && method != DPC_THEORY_QUADRATURE)
        return dpc_error_set(err, DPC_E_INVALID, "method = %d unknown", (int)method);
    double g2;
    if ((st = dpc_theory_gamma_inf2(b, &g2, err))) return st;
    size_t d = p->d;
    double *bb = dpc__malloc_array(2 * d, sizeof *bb);
    if (!bb) return DPC__NOMEM(err, "eigenvalue scratch");
    double *S = bb + d;
    for (size_t j = 0; j < d; j++) bb[j] = p->eta * p->lambda[j];
    int series = method == DPC_THEORY_SERIES && !(b->kind == DPC_THEORY_BETA_NU && b->nu == 0.0);
    if (series) {
        st = dpc__theory_s_many(b, bb, d, S, err);
    } else {
        st = dpc__theory_q_many(b, bb, d, S, err);
        for (size_t j = 0; j < d && !st; j++) S[j] *= bb[j] * (2.0 - bb[j]);
    }
    if (st) {
        free(bb);
        return st;
    }
    double sig2 = p->G * p->G * g2 / (2.0 * p->rho);
    double sum_s = 0.0, vdp = 0.0, vsgd = 0.0;
    for (size_t j = 0; j < d; j++) {
        sum_s += S[j];
        vdp += S[j] / (2.0 - bb[j]);
        vsgd += p->lambda[j] / (2.0 - bb[j]);
    }
    free(bb);
    out->gamma_inf2 = g2;
    out->sigma2 = sig2;
    out->sum_s = sum_s;
    out->v0_dp = isinf(sig2) ? INFINITY : p->eta * sig2 * vdp;
    out->v0_sgd = p->eta * p->sigma_sgd * p->sigma_sgd * vsgd;
    out->v0 = out->v0_dp + out->v0_sgd;
    return DPC_OK;
}

dpc_status dpc_theory_lti_opt(const dpc_theory_problem *p, double *v, dpc_error *err)
{
    dpc_status st = dpc_theory_problem_check(p, err);
    if (st) return st;
    size_t d = p->d;
    double *bb = dpc__malloc_array(d, sizeof *bb);
    if (!bb) return DPC__NOMEM(err, "eigenvalue scratch");
    double vsgd = 0.0;
    for (size_t j = 0; j < d; j++) {
        bb[j] = p->eta * p->lambda[j];
        vsgd += p->lambda[j] / (2.0 - bb[j]);
    }
    double s0, spi;
    pole_scales(bb, d, &s0, &spi);
    theory_quad q;
    if (!dpc__quad_graded2(&q, s0, spi, QUAD_ORDER, 0)) {
        free(bb);
        return DPC__NOMEM(err, "quadrature");
    }
    double I = 0.0;
    for (size_t i = 0; i < q.n; i++) {
        double s = sin(0.5 * q.x[i]), s2 = s * s, h = 0.0;
        for (size_t j = 0; j < d; j++) h += p->lambda[j] / dpc__pole2(bb[j], s2);
        I += q.w[i] * sqrt(h);
    }
    dpc__quad_free(&q);
    free(bb);
    *v = p->eta * p->eta * p->G * p->G / (2.0 * p->rho) * I * I +
         p->eta * p->sigma_sgd * p->sigma_sgd * vsgd;
    return DPC_OK;
}

dpc_status dpc_theory_lti_bounds(const dpc_theory_problem *p, const dpc_theory_beta *b, double R2,
                                 double c_kurt, dpc_theory_bounds *out, dpc_error *err)
{
    if (!(R2 > 0.0) || !isfinite(R2))
        return dpc_error_set(err, DPC_E_INVALID, "R2 = %g must be > 0", R2);
    if (!(c_kurt >= 0.0) || !isfinite(c_kurt))
        return dpc_error_set(err, DPC_E_INVALID, "c_kurt = %g must be >= 0", c_kurt);
    dpc_theory_lti l;
    dpc_status st = dpc_theory_lti_error(p, b, DPC_THEORY_SERIES, &l, err);
    if (st == DPC_E_RANGE) /* a series too long for the work limit: the quadrature */
        st = dpc_theory_lti_error(p, b, DPC_THEORY_QUADRATURE, &l, err);
    if (st) return st;
    double eta = p->eta, sg2 = p->sigma_sgd * p->sigma_sgd, tr = 0.0;
    for (size_t j = 0; j < p->d; j++) tr += p->lambda[j];
    double q = eta * R2, sq = sqrt(q);
    out->q = q;
    out->v0 = l.v0;
    double dp_time = eta * l.sigma2 * l.sum_s; /* eta G^2 g^2/(2 rho) <beta, T beta> */
    double dp_freq = 2.0 * l.v0_dp;            /* (eta^2 G^2 g^2/(2 pi rho)) int |B|^2 h */
    if (q < 1.0) {
        double f = 1.0 / ((1.0 - sq) * (1.0 - sq));
        out->upper_time = (1.0 + f) * q * sg2 + (1.0 + c_kurt * f) * dp_time;
        out->upper_freq = (1.0 + f) * q * sg2 + (1.0 + c_kurt * f) * dp_freq;
        out->sandwich_upper = NAN;
        if (p->sigma_sgd == 0.0) {
            double a = sqrt(l.v0) + sqrt(c_kurt * dp_time) * sq / (1.0 - sq);
            out->sandwich_upper = a * a;
        }
    } else {
        out->upper_time = out->upper_freq = out->sandwich_upper = INFINITY;
    }
    out->lower_freq = 0.5 * eta * sg2 * tr + l.v0_dp;
    out->lower_time = 0.5 * eta * sg2 * tr + 0.5 * dp_time;
    out->lower_universal = (0.5 * eta * sg2 + eta * eta * p->G * p->G / (8.0 * p->rho)) * tr;
    return DPC_OK;
}

dpc_status dpc_theory_mean_error(double eta, double rho, double G, double sigma_sgd,
                                 const dpc_theory_beta *b, dpc_theory_method method, double *e,
                                 dpc_error *err)
{
    double one = 1.0;
    dpc_theory_problem p = {eta, rho, G, sigma_sgd, 1, &one};
    dpc_theory_lti l;
    dpc_status st = dpc_theory_lti_error(&p, b, method, &l, err);
    if (!st) *e = l.v0;
    return st;
}

double dpc_theory_mean_opt(double eta, double rho, double G, double sigma_sgd)
{
    double k = 2.0 * dpc_special_ellip_k(1.0 - eta) / M_PI;
    return eta * eta * G * G / (2.0 * rho) * k * k + eta * sigma_sgd * sigma_sgd / (2.0 - eta);
}

double dpc_theory_mean_ratio(double eta)
{
    if (!(eta > 0.0 && eta < 2.0)) return NAN;
    /* symmetric under eta <-> 2 - eta; K(|1 - eta|) */
    double k = 2.0 * dpc_special_ellip_k(fabs(1.0 - eta)) / M_PI;
    return eta * (2.0 - eta) * k * k;
}

dpc_status dpc_theory_rates_of(const dpc_theory_problem *p, dpc_theory_rates *out,
                               dpc_error *err)
{
    dpc_status st = dpc_theory_problem_check(p, err);
    if (st) return st;
    double tr = 0.0, lmax = 0.0, lmin = INFINITY;
    for (size_t j = 0; j < p->d; j++) {
        tr += p->lambda[j];
        if (p->lambda[j] > lmax) lmax = p->lambda[j];
        if (p->lambda[j] < lmin) lmin = p->lambda[j];
    }
    out->trace = tr;
    out->lambda_max = lmax;
    out->lambda_min = lmin;
    out->d_eff = tr / lmax;
    out->nu = p->eta * lmin;
    double eta = p->eta, rho = p->rho, lg = log(1.0 / out->nu);
    out->sgd = eta * (double)p->d / rho;
    out->lower = eta * eta * out->d_eff / rho;
    out->ftrl = out->lower * lg * lg;
    out->ratio_sgd = out->sgd / out->lower;
    out->ratio_ftrl = lg * lg;
    dpc_theory_lti l;
    dpc_theory_beta sgd = dpc_theory_beta_sgd(), nu = dpc_theory_beta_nu(out->nu);
    if ((st = dpc_theory_lti_error(p, &sgd, DPC_THEORY_SERIES, &l, err))) return st;
    out->v0_sgd = l.v0;
    if (out->nu < 1.0) {
        if ((st = dpc_theory_lti_error(p, &nu, DPC_THEORY_QUADRATURE, &l, err))) return st;
        out->v0_ftrl = l.v0;
    } else {
        out->v0_ftrl = NAN;
    }
    return dpc_theory_lti_opt(p, &out->v0_opt, err);
}

double dpc_theory_table4_deff(double a, size_t d)
{
    double dd = (double)d;
    if (a == 0.0) return dd;
    if (a < 1.0) return pow(dd, 1.0 - a) / (1.0 - a);
    if (a == 1.0) return log(dd);
    return a / (a - 1.0);
}

double dpc_theory_table4_ftrl(double a, size_t d, double eta, double rho)
{
    double l = log((double)d / eta);
    if (a == 0.0) {
        double l1 = log(1.0 / eta);
        return eta * eta * (double)d * l1 * l1 / rho;
    }
    if (a < 1.0) return eta * eta * dpc_theory_table4_deff(a, d) * l * l / rho;
    if (a == 1.0) return eta * eta * l * l * l / rho;
    return a * a / (a - 1.0) * eta * eta * l * l / rho;
}
