/* chunk.c — the fast path: forward, backward, ghost norms and the clipped sum for a chunk of
 * examples, without materialising per-example gradients (doc/models.md has the derivation).
 *
 * Per chunk of M examples and dense layer l (in_l -> out_l), all in the workspace:
 *     forward    Z_l (M, out_l)  = A_l (M, in_l) W_l^T + b_l        GEMM (as W_l A_l^T)
 *                A_{l+1}         = act(Z_l)
 *     head       Delta_{L-1} (M, K) = dloss/dZ_{L-1}, losses (M)
 *     backward   Delta_{l-1} (M, in_l) = (Delta_l W_l) * act'(A_l)  GEMM, B = W_l packed
 *     norms      ||g_i||^2 = sum_l ||Delta_l[i]||^2 (||A_l[i]||^2 + bias)      (ghost norm)
 *     clip       s_i = clip / ||g_i|| if ||g_i|| > clip else 1
 *     sum        dW_l += (S Delta_l)^T A_l   (out_l, in_l)              GEMM, B = A_l packed
 *                db_l += sum_i s_i Delta_l[i]
 * Every GEMM sums over its inner index in order (gemm.h), so rows of Z, A and Delta, and hence
 * losses and norms, do not depend on M or on the other examples of the chunk. */
#include "model/gemm.h"
#include "model/internal.h"

#include <math.h>
#include <string.h>

/* ==== Passes =========================================================================== */

/* Validates params (P) unless skip_params, X (M, D), y (M) (y may be NULL: predict). */
static dpc_status check_inputs(const dpc_model *m, const double *params, const double *X,
                               const double *y, size_t M, int skip_params, dpc_error *err)
{
    dpc_status st = skip_params ? DPC_OK : dpc__check_params(m, params, err);
    size_t D = m->dim[0];
    for (size_t i = 0; !st && i < M; i++) {
        st = dpc__check_x(m, X + i * D, i, err);
        if (!st && y) st = dpc__check_y(m, y[i], i, err);
    }
    return st;
}

/* Forward pass: ws->act[l] (M, dim[l]) for l >= 1 and the logits ws->delta[L-1] (M, K).
 * Computed transposed, Z^T (out, M) = W (out, in) A^T (in, M), so that W, the big operand,
 * is read in place, row by row, and only the small A is packed; the same sums as A W^T. */
static void dense_forward(const dpc_model *m, const double *params, const double *X, size_t M,
                          dpc_model_ws *ws)
{
    size_t L = m->n_layers;
    const double *A = X;
    for (size_t l = 0; l < L; l++) {
        size_t in = m->dim[l], out = m->dim[l + 1];
        double *Z = l + 1 < L ? ws->act[l + 1] : ws->delta[L - 1]; /* (M, out) */
        double *Zt = ws->sdt;                                      /* (out, M) */
        dpc__gemm_pack_bt(in, M, A, in, ws->pack);
        dpc__gemm_seg(m->cfg.isa, out, M, in, 0, params + m->w_off[l], in, ws->pack, 0, Zt, M,
                      0);
        const double *b = m->cfg.bias ? params + m->b_off[l] : NULL;
        for (size_t i = 0; i < M; i++)
            for (size_t o = 0; o < out; o++)
                Z[i * out + o] = b ? Zt[o * M + i] + b[o] : Zt[o * M + i];
        if (l + 1 < L) dpc__act_forward(m->cfg.act, Z, M * out);
        A = Z;
    }
}

/* Losses into ws->loss (M) and Delta_{L-1} in place of the logits; y validated. */
static void head(const dpc_model *m, const double *y, size_t M, dpc_model_ws *ws)
{
    size_t K = m->dim[m->n_layers];
    double *Z = ws->delta[m->n_layers - 1];
    for (size_t i = 0; i < M; i++) ws->loss[i] = dpc__head_loss(m, Z + i * K, y[i], Z + i * K);
}

/* Backward pass: ws->delta[l] (M, dim[l+1]) for every l. */
static void dense_backward(const dpc_model *m, const double *params, size_t M, dpc_model_ws *ws)
{
    for (size_t l = m->n_layers - 1; l > 0; l--) {
        size_t in = m->dim[l], out = m->dim[l + 1];
        dpc__gemm_pack_b(out, in, params + m->w_off[l], in, ws->pack);
        dpc__gemm_seg(m->cfg.isa, M, in, out, 0, ws->delta[l], out, ws->pack, 0,
                      ws->delta[l - 1], in, 0);
        dpc__act_backward(m->cfg.act, ws->act[l], ws->delta[l - 1], M * in);
    }
}

/* The passes of m's kind (the kan kind's are in kan_chunk.c); grads: the backward pass follows. */
static void forward(const dpc_model *m, const double *params, const double *X, size_t M,
                    int grads, dpc_model_ws *ws)
{
    if (m->cfg.kind == DPC_MODEL_KAN)
        dpc__kan_forward(m, params, X, M, grads, ws);
    else if (m->cfg.kind == DPC_MODEL_CNN)
        dpc__cnn_forward(m, params, X, M, ws);
    else
        dense_forward(m, params, X, M, ws);
}

static void backward(const dpc_model *m, const double *params, size_t M, dpc_model_ws *ws)
{
    if (m->cfg.kind == DPC_MODEL_KAN)
        dpc__kan_backward(m, params, M, ws);
    else if (m->cfg.kind == DPC_MODEL_CNN)
        dpc__cnn_backward(m, params, M, ws);
    else
        dense_backward(m, params, M, ws);
}

/* ==== Public entry points (every kind) ================================================= */

/* The shared part of the two gradient entry points, after argument checks: validates the
 * inputs, takes a workspace (a temporary one in *tmp when *ws is NULL; the caller frees it),
 * runs forward, head and backward and the ghost norms (ws->norm, ws->loss). */
static dpc_status gradient_pass(const dpc_model *m, const double *params, const double *X,
                                const double *y, size_t M, int skip_params, dpc_model_ws **ws,
                                dpc_model_ws **tmp, dpc_error *err)
{
    *tmp = NULL;
    dpc_status st = check_inputs(m, params, X, y, M, skip_params, err);
    if (st || (st = dpc__chunk_prologue(m, ws, tmp, M, M, err))) return st;
    forward(m, params, X, M, 1, *ws);
    head(m, y, M, *ws);
    backward(m, params, M, *ws);
    if (m->cfg.kind == DPC_MODEL_CNN) return dpc__cnn_norms(m, X, M, *ws, err);
    return dpc__chunk_norms(m, X, M, *ws, err);
}

void dpc_model_clip_factors(const double *norm, size_t m, double clip, double *factor)
{
    for (size_t i = 0; i < m; i++) factor[i] = norm[i] > clip ? clip / norm[i] : 1.0;
}

/* s_i = clip / ||g_i|| if ||g_i|| > clip else 1, into ws->scale. */
static void clip_factors(size_t M, double clip, dpc_model_ws *ws)
{
    dpc_model_clip_factors(ws->norm, M, clip, ws->scale);
}

dpc_status dpc__chunk_grads(const dpc_model *m, const double *params, const double *X,
                            const double *y, size_t M, double clip, int skip_params,
                            dpc_model_ws *ws, dpc_error *err)
{
    dpc_model_ws *tmp;
    dpc_status st = gradient_pass(m, params, X, y, M, skip_params, &ws, &tmp, err);
    if (!st) clip_factors(M, clip, ws);
    return st;
}

dpc_status dpc_model_clipped_sum(const dpc_model *m, const double *params, const double *X,
                                 const double *y, size_t M, double clip, double *grad_sum,
                                 double *losses, double *norms_out, dpc_model_ws *ws,
                                 dpc_error *err)
{
    if (!m || (M > 0 && (!params || !X || !y || !grad_sum)))
        return dpc_error_set(err, DPC_E_INVALID, "dpc_model_clipped_sum: NULL argument");
    if (!(clip >= 0.0))
        return dpc_error_param(err, DPC_E_INVALID, "clip", "must be >= 0, got %g", clip);
    if (ws) {
        dpc_status st = dpc__check_ws(m, ws, M, err);
        if (st) return st;
    }
    if (M == 0) return DPC_OK;
    dpc_model_ws *tmp;
    dpc_status st = gradient_pass(m, params, X, y, M, 0, &ws, &tmp, err);
    if (!st) {
        clip_factors(M, clip, ws);
        if (m->cfg.kind == DPC_MODEL_CNN)
            dpc__cnn_scaled_sum(m, X, M, grad_sum, ws);
        else
            dpc__chunk_scaled_sum(m, X, M, grad_sum, ws);
        if (losses) memcpy(losses, ws->loss, M * sizeof *losses);
        if (norms_out) memcpy(norms_out, ws->norm, M * sizeof *norms_out);
    }
    dpc_model_ws_free(tmp);
    return st;
}

dpc_status dpc_model_per_example_grads(const dpc_model *m, const double *params,
                                       const double *X, const double *y, size_t M, double *G,
                                       double *losses, dpc_model_ws *ws, dpc_error *err)
{
    if (!m || (M > 0 && (!params || !X || !y || !G)))
        return dpc_error_set(err, DPC_E_INVALID, "dpc_model_per_example_grads: NULL argument");
    if (ws) {
        dpc_status st = dpc__check_ws(m, ws, M, err);
        if (st) return st;
    }
    if (M == 0) return DPC_OK;
    dpc_model_ws *tmp;
    dpc_status st = gradient_pass(m, params, X, y, M, 0, &ws, &tmp, err);
    if (!st) {
        size_t P = m->n_params;
        for (size_t i = 0; i < M && m->cfg.kind == DPC_MODEL_CNN; i++)
            dpc__cnn_example_grad(m, X, i, G + i * P, ws);
        for (size_t i = 0; i < M && m->cfg.kind != DPC_MODEL_CNN; i++) {
            double *g = G + i * P; /* (P) */
            for (size_t l = 0; l < m->n_layers; l++) {
                size_t fe = m->feat[l], out = m->dim[l + 1];
                const double *a = dpc__layer_input(m, X, ws, l) + i * fe; /* (fe) */
                const double *d = ws->delta[l] + i * out;                 /* (out) */
                double *gW = g + m->w_off[l];                              /* (out, fe) */
                for (size_t o = 0; o < out; o++)
                    for (size_t k = 0; k < fe; k++) gW[o * fe + k] = d[o] * a[k];
                if (m->cfg.bias) memcpy(g + m->b_off[l], d, out * sizeof *g);
            }
        }
        if (losses) memcpy(losses, ws->loss, M * sizeof *losses);
    }
    dpc_model_ws_free(tmp);
    return st;
}

#define DPC__EVAL_CHUNK 64 /* chunk size of the temporary workspace of predict / evaluate */

dpc_status dpc_model_predict(const dpc_model *m, const double *params, const double *X,
                             size_t M, double *out, dpc_model_ws *ws, dpc_error *err)
{
    if (!m || (M > 0 && (!params || !X || !out)))
        return dpc_error_set(err, DPC_E_INVALID, "dpc_model_predict: NULL argument");
    dpc_status st = dpc__check_params(m, params, err);
    if (st || M == 0) return st;
    dpc_model_ws *tmp;
    if ((st = dpc__chunk_prologue(m, &ws, &tmp, M < DPC__EVAL_CHUNK ? M : DPC__EVAL_CHUNK, 0, err)))
        return st;
    size_t D = m->dim[0], K = m->dim[m->n_layers], C = ws->max_chunk;
    for (size_t i = 0; i < M && !st; i++) st = dpc__check_x(m, X + i * D, i, err);
    for (size_t i0 = 0; i0 < M && !st; i0 += C) {
        size_t n = M - i0 < C ? M - i0 : C;
        const double *Xc = X + i0 * D;
        forward(m, params, Xc, n, 0, ws);
        for (size_t i = 0; i < n; i++)
            dpc__head_predict(m, ws->delta[m->n_layers - 1] + i * K, out + (i0 + i) * K);
    }
    dpc_model_ws_free(tmp);
    return st;
}

dpc_status dpc_model_evaluate(const dpc_model *m, const double *params, const double *X,
                              const double *y, size_t n, double *mean_loss, double *accuracy,
                              dpc_model_ws *ws, dpc_error *err)
{
    if (!m || !params || !X || !y || !mean_loss)
        return dpc_error_set(err, DPC_E_INVALID, "dpc_model_evaluate: NULL argument");
    if (n == 0) return dpc_error_param(err, DPC_E_INVALID, "n", "must be >= 1");
    dpc_status st = dpc__check_params(m, params, err);
    if (st) return st;
    dpc_model_ws *tmp;
    if ((st = dpc__chunk_prologue(m, &ws, &tmp, n < DPC__EVAL_CHUNK ? n : DPC__EVAL_CHUNK, 0, err)))
        return st;
    size_t D = m->dim[0], K = m->dim[m->n_layers], C = ws->max_chunk, correct = 0;
    double total = 0.0;
    for (size_t i = 0; i < n && !st; i++) {
        st = dpc__check_x(m, X + i * D, i, err);
        if (!st) st = dpc__check_y(m, y[i], i, err);
    }
    for (size_t i0 = 0; i0 < n && !st; i0 += C) {
        size_t c = n - i0 < C ? n - i0 : C;
        const double *Xc = X + i0 * D, *yc = y + i0;
        forward(m, params, Xc, c, 0, ws);
        const double *Z = ws->delta[m->n_layers - 1];
        for (size_t i = 0; i < c && !st; i++) {
            double loss = dpc__head_loss(m, Z + i * K, yc[i], NULL);
            if (!isfinite(loss))
                st = dpc_error_set(err, DPC_E_NUMERIC, "example %zu: loss is not finite (%g)",
                                   i0 + i, loss);
            total += loss;
            if (m->head != DPC__HEAD_SQUARED && dpc__head_class(m, Z + i * K) == (size_t)yc[i])
                correct++;
        }
    }
    if (!st) {
        *mean_loss = total / (double)n;
        if (accuracy)
            *accuracy = m->head == DPC__HEAD_SQUARED ? NAN : (double)correct / (double)n;
    }
    dpc_model_ws_free(tmp);
    return st;
}
