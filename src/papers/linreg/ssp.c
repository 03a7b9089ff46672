/* ssp.c — the non-iterative baselines (ordinary least squares; sufficient statistics
 * perturbation, Smith et al. 2017 / Sheffet 2019 / Wang 2018 without the adaptive ridge), the
 * exact excess risk and the empirical loss. */
#include "common/util.h"
#include "linreg/linreg_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int dpc__lr_cholesky(double *a, size_t n)
{
    for (size_t j = 0; j < n; j++) {
        double s = a[j * n + j];
        for (size_t k = 0; k < j; k++) s -= a[j * n + k] * a[j * n + k];
        if (!(s > 0) || !isfinite(s)) return 1;
        double l = sqrt(s);
        a[j * n + j] = l;
        for (size_t i = j + 1; i < n; i++) {
            double v = a[i * n + j];
            for (size_t k = 0; k < j; k++) v -= a[i * n + k] * a[j * n + k];
            a[i * n + j] = v / l;
        }
    }
    return 0;
}

void dpc__lr_cholesky_solve(const double *l, size_t n, double *b)
{
    for (size_t i = 0; i < n; i++) { /* L z = b */
        double v = b[i];
        for (size_t k = 0; k < i; k++) v -= l[i * n + k] * b[k];
        b[i] = v / l[i * n + i];
    }
    for (size_t i = n; i-- > 0;) { /* L^T x = z */
        double v = b[i];
        for (size_t k = i + 1; k < n; k++) v -= l[k * n + i] * b[k];
        b[i] = v / l[i * n + i];
    }
}

/* Upper triangle of A = X^T X and c = X^T y of the (optionally clipped) data, in row order. */
static void moments(const dpc_dataset *ds, double xb, double yb, double *A, double *c, double *xr)
{
    size_t d = ds->d;
    memset(A, 0, d * d * sizeof *A);
    memset(c, 0, d * sizeof *c);
    for (size_t i = 0; i < ds->n; i++) {
        const double *x = ds->x + i * d;
        double y = ds->y[i], f = 1.0;
        if (xb > 0) { /* clip the row to ||x|| <= xb and y to [-yb, yb] */
            double nx = sqrt(dpc__lr_dot(x, x, d));
            if (nx > xb) f = xb / nx;
            y = y > yb ? yb : (y < -yb ? -yb : y);
        }
        for (size_t j = 0; j < d; j++) xr[j] = f * x[j];
        for (size_t j = 0; j < d; j++) {
            double xj = xr[j];
            double *row = A + j * d;
            for (size_t k = j; k < d; k++) row[k] += xj * xr[k];
            c[j] += xj * y;
        }
    }
}

/* Copies the upper triangle of A into the lower one (A symmetric). */
static void symmetrize(double *A, size_t d)
{
    for (size_t j = 0; j < d; j++)
        for (size_t k = j + 1; k < d; k++) A[k * d + j] = A[j * d + k];
}

dpc_status dpc_linreg_ols(const dpc_dataset *ds, double *w, dpc_error *err)
{
    if (!ds || !w) return dpc_error_set(err, DPC_E_INVALID, "ols: NULL argument");
    if (ds->n_classes != 0)
        return dpc_error_set(err, DPC_E_INVALID, "data set: OLS needs real-valued targets");
    dpc_status st = dpc_dataset_check(ds, err);
    if (st) return st;
    size_t d = ds->d, dd;
    if (!dpc__mul_ok(d, d, &dd)) return DPC__NOMEM(err, "X^T X");
    double *A = dpc__malloc_array(dd + 2 * d, sizeof *A);
    if (!A) return DPC__NOMEM(err, "X^T X");
    double *c = A + dd, *xr = c + d;
    moments(ds, 0, 0, A, c, xr);
    symmetrize(A, d);
    if (dpc__lr_cholesky(A, d)) {
        free(A);
        return dpc_error_set(err, DPC_E_NUMERIC,
                             "ols: X^T X is singular (collinear features or N < d)");
    }
    dpc__lr_cholesky_solve(A, d, c);
    memcpy(w, c, d * sizeof *w);
    free(A);
    return DPC_OK;
}

dpc_status dpc_linreg_ssp(const dpc_dataset *ds, const dpc_linreg_ssp_opts *o, const dpc_rng *rng,
                          double *w, dpc_linreg_ssp_info *info, dpc_error *err)
{
    if (!ds || !o || !rng || !w) return dpc_error_set(err, DPC_E_INVALID, "ssp: NULL argument");
    dpc_status rst = dpc_rng_check(rng, err); /* a never-seeded key makes public noise */
    if (rst) return rst;
    if (ds->n_classes != 0)
        return dpc_error_set(err, DPC_E_INVALID, "data set: SSP needs real-valued targets");
    dpc_status st = dpc_field_check(dpc_linreg_ssp_opts_fields(), o, err); /* the ranges */
    if (st) return st;
    /* 0 is "unset" in the table (dpc_linreg_ssp_bounds derives the note's bounds): here the
     * bounds must be set, they make the sensitivities */
    if (o->x_bound == 0 || o->y_bound == 0)
        return dpc_error_param(err, DPC_E_INVALID, o->x_bound == 0 ? "x_bound" : "y_bound",
                               "is 0 (unset): must be in (0, 1e150] (dpc_linreg_ssp_bounds "
                               "gives the note's)");
    st = dpc_dataset_check(ds, err);
    if (st) return st;
    double rho, eps, delta; /* the delta rule of every trainer */
    if ((st = dpc_account_resolve_delta(o->delta, ds->n, o->allow_large_delta, &delta, NULL, err)))
        return st;
    if ((st = dpc_zcdp_rho_for(o->epsilon, delta, DPC_ZCDP_BUN_STEINKE, &rho, err)))
        return dpc_error_prefix(err, "ssp: ");
    size_t d = ds->d, dd;
    if (!dpc__mul_ok(d, d, &dd)) return DPC__NOMEM(err, "X^T X");
    double *A = dpc__malloc_array(2 * dd + 3 * d, sizeof *A);
    if (!A) return DPC__NOMEM(err, "X^T X");
    double *F = A + dd, *c = F + dd, *xr = c + d, *cw = xr + d;
    moments(ds, o->x_bound, o->y_bound, A, c, xr);
    /* DP-REQ: linreg-ssp: replace-one sensitivities of the clipped statistics:
     * ||x x^T - x' x'^T||_F <= sqrt(2) R^2 (its upper triangle no more), ||x y - x' y'|| <= 2 R Y;
     * half of rho each, Gaussian mechanism rho = Delta^2 / (2 sigma^2) (Bun & Steinke Prop. 1.6),
     * sequential composition of the two releases. */
    double R = o->x_bound, Y = o->y_bound, half = 0.5 * rho;
    double s_xx = sqrt(2.0) * R * R / sqrt(2.0 * half), s_xy = 2.0 * R * Y / sqrt(2.0 * half);
    double r1, r2;
    if ((st = dpc_zcdp_rho_gaussian(sqrt(2.0) * R * R, s_xx, &r1, err)) ||
        (st = dpc_zcdp_rho_gaussian(2.0 * R * Y, s_xy, &r2, err)) ||
        (st = dpc_zcdp_epsilon(r1 + r2, delta, DPC_ZCDP_BUN_STEINKE, &eps, NULL, err))) {
        free(A);
        return st;
    }
    dpc_rng_stream s = dpc_rng_stream_derive(rng, DPC_STREAM_ID(DPC_LINREG_STREAM_SSP, o->stream));
    size_t k = 0;
    for (size_t j = 0; j < d; j++)
        for (size_t m = j; m < d; m++) A[j * d + m] += s_xx * dpc_rng_gaussian(&s, 0, k++);
    symmetrize(A, d);
    for (size_t j = 0; j < d; j++) c[j] += s_xy * dpc_rng_gaussian(&s, 1, j);
    /* post-processing: the smallest ridge (0, then sigma_xx sqrt(d) doubling) that makes the
     * noisy X^T X positive definite */
    double lambda = 0;
    int ok = 0;
    for (int tries = 0; tries < 200 && !ok; tries++) {
        memcpy(F, A, dd * sizeof *F);
        for (size_t j = 0; j < d; j++) F[j * d + j] += lambda;
        ok = !dpc__lr_cholesky(F, d);
        if (!ok) lambda = lambda > 0 ? 2.0 * lambda : s_xx * sqrt((double)d);
    }
    if (!ok) {
        free(A);
        return dpc_error_set(err, DPC_E_NUMERIC, "ssp: the noisy X^T X could not be regularised");
    }
    memcpy(cw, c, d * sizeof *cw);
    dpc__lr_cholesky_solve(F, d, cw);
    memcpy(w, cw, d * sizeof *w);
    if (info) {
        info->rho = r1 + r2;
        info->sigma_xx = s_xx;
        info->sigma_xy = s_xy;
        info->ridge = lambda;
        info->epsilon = eps;
        info->delta = delta;
    }
    free(A);
    return DPC_OK;
}

double dpc_linreg_excess_risk(const double *w, const double *w_star, const double *h, size_t d)
{
    double s = 0;
    for (size_t k = 0; k < d; k++) {
        double e = w[k] - w_star[k];
        s += h[k] * e * e;
    }
    return 0.5 * s;
}

double dpc_linreg_data_risk(const dpc_dataset *ds, const double *w)
{
    return ds && w && ds->truth && ds->cov_diag
               ? dpc_linreg_excess_risk(w, ds->truth, ds->cov_diag, ds->d)
               : NAN;
}

void dpc_linreg_evaluate(const dpc_dataset *train, const dpc_dataset *test, const double *w,
                         double *risk, double *train_loss, double *test_loss)
{
    dpc_error err = {0}; /* a NULL or empty set has no loss: NAN, reported as such */
    if (risk) *risk = dpc_linreg_data_risk(train, w);
    if (train_loss && dpc_linreg_loss(train, w, train_loss, &err)) *train_loss = NAN;
    if (test_loss && dpc_linreg_loss(test, w, test_loss, &err)) *test_loss = NAN;
}

dpc_status dpc_linreg_loss(const dpc_dataset *ds, const double *w, double *loss, dpc_error *err)
{
    if (!ds || !w || !loss) return dpc_error_param(err, DPC_E_INVALID, "loss", "NULL argument");
    if (ds->n == 0) return dpc_error_param(err, DPC_E_INVALID, "loss", "empty data set");
    double s = 0;
    for (size_t i = 0; i < ds->n; i++) {
        double r = ds->y[i] - dpc__lr_dot(ds->x + i * ds->d, w, ds->d);
        s += r * r;
    }
    *loss = 0.5 * s / (double)ds->n;
    return DPC_OK;
}
