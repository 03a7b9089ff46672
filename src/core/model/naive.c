/* naive.c — the reference path: one example at a time, plain loops, the full gradient vector
 * materialised. Kept beside the fast chunk path (chunk.c) as its oracle: the forward and
 * backward sums here run in the same order as the GEMM kernels, so losses and gradients agree
 * bit for bit; only the norm (sum of squares over the slab vs the ghost norm) rounds
 * differently. */
#include "common/util.h"
#include "model/internal.h"

#include <math.h>
#include <string.h>

/* Scratch for one example: act (sum_{l>=1} dim[l]) then delta (sum_l dim[l+1]). */
static size_t scratch_len(const dpc_model *m)
{
    size_t n = 0;
    for (size_t l = 0; l < m->n_layers; l++) n += (l > 0 ? m->dim[l] : 0) + m->dim[l + 1];
    return n;
}

/* Loss and gradient of example `row` (used in messages). x and y are validated here, params
 * by the caller. grad (P) is overwritten. */
static dpc_status naive_one(const dpc_model *m, const double *params, const double *x,
                            double y, size_t row, double *loss, double *grad, double *scratch,
                            dpc_error *err)
{
    dpc_status st = dpc__check_x(m, x, row, err);
    if (!st) st = dpc__check_y(m, y, row, err);
    if (st) return st;
    size_t L = m->n_layers;
    const double *act[DPC__MAX_LAYERS]; /* act[l] (dim[l]): input of layer l */
    double *delta[DPC__MAX_LAYERS];     /* delta[l] (dim[l+1]): z_l, then dloss/dz_l */
    double *p = scratch;
    act[0] = x;
    for (size_t l = 0; l < L; l++) {
        if (l > 0) {
            act[l] = p;
            p += m->dim[l];
        }
        delta[l] = p;
        p += m->dim[l + 1];
    }
    /* Forward: z_l[o] = (sum_k W_l[o][k] a_l[k]) + b_l[o]; a_{l+1} = act(z_l). */
    for (size_t l = 0; l < L; l++) {
        size_t in = m->dim[l], out = m->dim[l + 1];
        const double *W = params + m->w_off[l]; /* (out, in) */
        double *z = delta[l];                   /* (out) */
        for (size_t o = 0; o < out; o++) {
            double acc = 0.0;
            for (size_t k = 0; k < in; k++) acc += act[l][k] * W[o * in + k];
            z[o] = m->cfg.bias ? acc + params[m->b_off[l] + o] : acc;
        }
        if (l + 1 < L) {
            memcpy((double *)act[l + 1], z, out * sizeof *z);
            dpc__act_forward(m->cfg.act, (double *)act[l + 1], out);
        }
    }
    *loss = dpc__head_loss(m, delta[L - 1], y, delta[L - 1]);
    if (!isfinite(*loss))
        return dpc_error_set(err, DPC_E_NUMERIC, "example %zu: loss is not finite (%g)", row,
                             *loss);
    /* Backward: delta_{l-1}[k] = (sum_o delta_l[o] W_l[o][k]) * act'(a_l[k]). */
    for (size_t l = L - 1; l > 0; l--) {
        size_t in = m->dim[l], out = m->dim[l + 1];
        const double *W = params + m->w_off[l];
        double *dp = delta[l - 1];
        for (size_t k = 0; k < in; k++) {
            double acc = 0.0;
            for (size_t o = 0; o < out; o++) acc += delta[l][o] * W[o * in + k];
            dp[k] = acc;
        }
        dpc__act_backward(m->cfg.act, act[l], dp, in);
    }
    /* Gradient: dW_l = delta_l a_l^T, db_l = delta_l. */
    for (size_t l = 0; l < L; l++) {
        size_t in = m->dim[l], out = m->dim[l + 1];
        double *gW = grad + m->w_off[l];
        for (size_t o = 0; o < out; o++)
            for (size_t k = 0; k < in; k++) gW[o * in + k] = delta[l][o] * act[l][k];
        if (m->cfg.bias) memcpy(grad + m->b_off[l], delta[l], out * sizeof *grad);
    }
    for (size_t i = 0; i < m->n_params; i++)
        if (!isfinite(grad[i]))
            return dpc_error_set(err, DPC_E_NUMERIC,
                                 "example %zu: gradient entry %zu is not finite (%g)", row, i,
                                 grad[i]);
    return DPC_OK;
}

/* The one-example kernel and its scratch size for m's kind. */
typedef dpc_status (*naive_one_fn)(const dpc_model *m, const double *params, const double *x,
                                   double y, size_t row, double *loss, double *grad,
                                   double *scratch, dpc_error *err);

static naive_one_fn one_of(const dpc_model *m, size_t *scratch_n)
{
    if (m->cfg.kind == DPC_MODEL_KAN) {
        *scratch_n = dpc__kan_naive_scratch_len(m);
        return dpc__kan_naive_one;
    }
    if (m->cfg.kind == DPC_MODEL_CNN) {
        *scratch_n = dpc__cnn_naive_scratch_len(m);
        return dpc__cnn_naive_one;
    }
    *scratch_n = scratch_len(m);
    return naive_one;
}

dpc_status dpc_model_loss_grad(const dpc_model *m, const double *params, const double *x,
                               double y, double *loss, double *grad, dpc_error *err)
{
    if (!m || !params || !x || !loss || !grad)
        return dpc_error_set(err, DPC_E_INVALID, "dpc_model_loss_grad: NULL argument");
    dpc_status st = dpc__check_params(m, params, err);
    if (st) return st;
    size_t ns;
    naive_one_fn one = one_of(m, &ns);
    double *scratch = dpc__malloc_array(ns, sizeof *scratch);
    if (!scratch) return DPC__NOMEM(err, "model scratch");
    st = one(m, params, x, y, 0, loss, grad, scratch, err);
    free(scratch);
    return st;
}

dpc_status dpc_model_clipped_sum_naive(const dpc_model *m, const double *params,
                                       const double *X, const double *y, size_t M, double clip,
                                       double *grad_sum, double *losses, double *norms,
                                       dpc_error *err)
{
    if (!m || (M > 0 && (!params || !X || !y || !grad_sum)))
        return dpc_error_set(err, DPC_E_INVALID, "dpc_model_clipped_sum_naive: NULL argument");
    if (!(clip >= 0.0))
        return dpc_error_param(err, DPC_E_INVALID, "clip", "must be >= 0, got %g", clip);
    if (M == 0) return DPC_OK;
    dpc_status st = dpc__check_params(m, params, err);
    if (st) return st;
    size_t P = m->n_params, D = m->dim[0], ns;
    naive_one_fn one = one_of(m, &ns);
    double *scratch = dpc__malloc_array(ns, sizeof(double));
    double *g = dpc__malloc_array(P, sizeof(double));
    double *S = dpc__calloc(P, sizeof(double));
    double *buf = dpc__malloc_array(2 * M, sizeof(double)); /* losses, norms */
    if (!scratch || !g || !S || !buf) {
        st = DPC__NOMEM(err, "naive clipped-sum buffers");
        goto done;
    }
    for (size_t i = 0; i < M; i++) {
        st = one(m, params, X + i * D, y[i], i, &buf[i], g, scratch, err);
        if (st) goto done;
        double n2 = 0.0;
        for (size_t p = 0; p < P; p++) n2 += g[p] * g[p];
        double norm = sqrt(n2);
        if (!isfinite(norm)) {
            st = dpc_error_set(err, DPC_E_NUMERIC, "example %zu: gradient norm overflows", i);
            goto done;
        }
        buf[M + i] = norm;
        double s;
        dpc_model_clip_factors(&norm, 1, clip, &s);
        for (size_t p = 0; p < P; p++) S[p] += s * g[p];
    }
    for (size_t p = 0; p < P; p++) grad_sum[p] = grad_sum[p] + S[p];
    if (losses) memcpy(losses, buf, M * sizeof *losses);
    if (norms) memcpy(norms, buf + M, M * sizeof *norms);
done:
    free(scratch);
    free(g);
    free(S);
    free(buf);
    return st;
}
