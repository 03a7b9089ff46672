/* heads.c — what the naive and the fast path share: loss heads (loss, dloss/dz, prediction),
 * hidden activations and input validation. One implementation of each, so that both paths
 * compute the same bits. */
#include "model/internal.h"

#include <math.h>

/* ==== Loss heads ======================================================================= */

/* softplus(t) = log(1 + e^t), without overflow or cancellation. */
static double softplus(double t) { return (t > 0 ? t : 0.0) + log1p(exp(-fabs(t))); }

/* sigmoid(t) = 1 / (1 + e^-t), without overflow. */
static double sigmoid(double t)
{
    if (t >= 0) return 1.0 / (1.0 + exp(-t));
    double e = exp(t);
    return e / (1.0 + e);
}

double dpc__head_loss(const dpc_model *m, const double *z, double y, double *delta)
{
    switch (m->head) {
    case DPC__HEAD_SQUARED: {
        double r = z[0] - y;
        if (delta) delta[0] = r;
        return 0.5 * r * r;
    }
    case DPC__HEAD_LOGISTIC: {
        /* y = 1: log(1 + e^-z), dz = -sigmoid(-z);  y = 0: log(1 + e^z), dz = sigmoid(z). */
        double t = z[0], loss = y != 0.0 ? softplus(-t) : softplus(t);
        if (delta) delta[0] = y != 0.0 ? -sigmoid(-t) : sigmoid(t);
        return loss;
    }
    case DPC__HEAD_SOFTMAX: {
        size_t K = m->dim[m->n_layers], c = (size_t)y;
        double mx = z[0], zc = z[c];
        for (size_t j = 1; j < K; j++)
            if (z[j] > mx) mx = z[j];
        double s = 0.0;
        if (delta) {
            for (size_t j = 0; j < K; j++) {
                delta[j] = exp(z[j] - mx);
                s += delta[j];
            }
            for (size_t j = 0; j < K; j++) delta[j] = delta[j] / s - (j == c ? 1.0 : 0.0);
        } else {
            for (size_t j = 0; j < K; j++) s += exp(z[j] - mx);
        }
        return (mx + log(s)) - zc;
    }
    }
    return NAN;
}

void dpc__head_predict(const dpc_model *m, const double *z, double *out)
{
    switch (m->head) {
    case DPC__HEAD_SQUARED: out[0] = z[0]; return;
    case DPC__HEAD_LOGISTIC: out[0] = sigmoid(z[0]); return;
    case DPC__HEAD_SOFTMAX: {
        size_t K = m->dim[m->n_layers];
        double mx = z[0], s = 0.0;
        for (size_t j = 1; j < K; j++)
            if (z[j] > mx) mx = z[j];
        for (size_t j = 0; j < K; j++) {
            out[j] = exp(z[j] - mx);
            s += out[j];
        }
        for (size_t j = 0; j < K; j++) out[j] /= s;
        return;
    }
    }
}

size_t dpc__head_class(const dpc_model *m, const double *z)
{
    if (m->head == DPC__HEAD_LOGISTIC) return z[0] > 0 ? 1 : 0;
    size_t K = m->dim[m->n_layers], best = 0;
    for (size_t j = 1; j < K; j++)
        if (z[j] > z[best]) best = j;
    return best;
}

/* ==== Activations ====================================================================== */

void dpc__act_forward(dpc_activation act, double *a, size_t n)
{
    if (act == DPC_ACT_RELU) {
        for (size_t i = 0; i < n; i++) a[i] = a[i] < 0.0 ? 0.0 : a[i]; /* NaN stays NaN */
    } else {
        for (size_t i = 0; i < n; i++) a[i] = tanh(a[i]);
    }
}

void dpc__act_backward(dpc_activation act, const double *a, double *d, size_t n)
{
    if (act == DPC_ACT_RELU) {
        for (size_t i = 0; i < n; i++) d[i] = a[i] > 0.0 ? d[i] : 0.0;
    } else {
        for (size_t i = 0; i < n; i++) d[i] = d[i] * (1.0 - a[i] * a[i]);
    }
}

/* ==== Input validation ================================================================= */

/* 1 if v (n) is all finite: v - v is 0 for finite v and NaN for inf or nan, and a NaN stays
 * in a sum. Four independent sums let the compiler use SSE2 lanes (about 0.3 ns/value). */
static int all_finite(const double *v, size_t n)
{
    double a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    size_t j = 0;
    for (; j + 4 <= n; j += 4) {
        a0 += v[j] - v[j];
        a1 += v[j + 1] - v[j + 1];
        a2 += v[j + 2] - v[j + 2];
        a3 += v[j + 3] - v[j + 3];
    }
    for (; j < n; j++) a0 += v[j] - v[j];
    return (a0 + a1) + (a2 + a3) == 0.0;
}

dpc_status dpc__check_params(const dpc_model *m, const double *params, dpc_error *err)
{
    size_t P = m->n_params;
    for (size_t i0 = 0; i0 < P; i0 += 1024) {
        size_t n = P - i0 < 1024 ? P - i0 : 1024;
        if (all_finite(params + i0, n)) continue;
        size_t i = i0;
        while (isfinite(params[i])) i++;
        const dpc_model_tensor *t = m->tensors;
        while (i >= t->offset + t->rows * t->cols) t++;
        size_t r = (i - t->offset) / t->cols, c = (i - t->offset) % t->cols;
        if (t->cols == 1)
            return dpc_error_set(err, DPC_E_INVALID, "params[%zu] (%s[%zu]) is not finite (%g)",
                                 i, t->name, r, params[i]);
        return dpc_error_set(err, DPC_E_INVALID, "params[%zu] (%s[%zu][%zu]) is not finite (%g)",
                             i, t->name, r, c, params[i]);
    }
    return DPC_OK;
}

dpc_status dpc__check_x(const dpc_model *m, const double *x, size_t row, dpc_error *err)
{
    size_t D = m->dim[0];
    if (all_finite(x, D)) return DPC_OK;
    size_t j = 0;
    while (isfinite(x[j])) j++;
    return dpc_error_set(err, DPC_E_INVALID, "example %zu: feature x[%zu] is not finite (%g)",
                         row, j, x[j]);
}

dpc_status dpc__check_y(const dpc_model *m, double y, size_t row, dpc_error *err)
{
    if (m->head == DPC__HEAD_SQUARED) {
        if (isfinite(y)) return DPC_OK;
        return dpc_error_set(err, DPC_E_INVALID, "example %zu: target y is not finite (%g)", row,
                             y);
    }
    size_t K = m->head == DPC__HEAD_LOGISTIC ? 2 : m->dim[m->n_layers];
    if (y >= 0.0 && y < (double)K && y == floor(y)) return DPC_OK;
    return dpc_error_set(err, DPC_E_INVALID,
                         "example %zu: label y = %.17g is not a class index in 0..%zu", row, y,
                         K - 1);
}
