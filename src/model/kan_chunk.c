/* kan_chunk.c — the fast path of the KAN kind: chunk forward, backward, ghost norms and the
 * clipped sum without per-example gradients. A KAN layer is a dense layer over the expanded
 * features Phi_l (M, feat_l) of its input (kan_layer.c), so the pipeline is chunk.c's:
 *     expand     Phi_l = phi(A_l), and dPhi_l = phi'(A_l) for l >= 1
 *     forward    Z_l^T (out, M) = W_l (out, feat) Phi_l^T (feat, M) + b;  A_{l+1} = tanh(Z_l)
 *     head       Delta_{L-1} = dloss/dZ_{L-1}, losses
 *     backward   G (M, feat) = Delta_l W_l;  Delta_{l-1} = contract(G, dPhi_l) * (1 - A_l^2)
 *     norms      ||g_i||^2 = sum_l ||Delta_l[i]||^2 (||Phi_l[i]||^2 + bias)      (ghost norm)
 *     sum        dW_l += (S Delta_l)^T Phi_l,  db_l += sum_i s_i Delta_l[i]
 * with the same fixed-order GEMM kernels (gemm.h): every row depends on its example only. */
#include "model/gemm.h"
#include "model/internal.h"

#include <math.h>
#include <string.h>

static dpc_status check_inputs(const dpc_model *m, const double *params, const double *X,
                               const double *y, size_t M, dpc_error *err)
{
    dpc_status st = dpc__check_params(m, params, err);
    size_t D = m->dim[0];
    for (size_t i = 0; !st && i < M; i++) {
        st = dpc__check_x(m, X + i * D, i, err);
        if (!st && y) st = dpc__check_y(m, y[i], i, err);
    }
    return st;
}

/* Forward: ws->phi[l], ws->dphi[l] (l >= 1, when grads), ws->act[l] and the logits. */
static void forward(const dpc_model *m, const double *params, const double *X, size_t M,
                    int grads, dpc_model_ws *ws)
{
    size_t L = m->n_layers;
    const double *A = X;
    for (size_t l = 0; l < L; l++) {
        size_t in = m->dim[l], out = m->dim[l + 1], fe = m->feat[l];
        double *Phi = ws->phi[l];
        for (size_t i = 0; i < M; i++)
            dpc__kan_expand(m, l, A + i * in, Phi + i * fe,
                            grads && l > 0 ? ws->dphi[l] + i * fe : NULL);
        double *Z = l + 1 < L ? ws->act[l + 1] : ws->delta[L - 1]; /* (M, out) */
        double *Zt = ws->sdt;                                      /* (out, M) */
        dpc__gemm_pack_bt(fe, M, Phi, fe, ws->pack);
        dpc__gemm_packed(out, M, fe, params + m->w_off[l], fe, ws->pack, Zt, M, 0);
        const double *b = m->cfg.bias ? params + m->b_off[l] : NULL;
        for (size_t i = 0; i < M; i++)
            for (size_t o = 0; o < out; o++)
                Z[i * out + o] = b ? Zt[o * M + i] + b[o] : Zt[o * M + i];
        if (l + 1 < L) dpc__act_forward(DPC_ACT_TANH, Z, M * out);
        A = Z;
    }
}

static void head(const dpc_model *m, const double *y, size_t M, dpc_model_ws *ws)
{
    size_t K = m->dim[m->n_layers];
    double *Z = ws->delta[m->n_layers - 1];
    for (size_t i = 0; i < M; i++) ws->loss[i] = dpc__head_loss(m, Z + i * K, y[i], Z + i * K);
}

static void backward(const dpc_model *m, const double *params, size_t M, dpc_model_ws *ws)
{
    for (size_t l = m->n_layers - 1; l > 0; l--) {
        size_t in = m->dim[l], out = m->dim[l + 1], fe = m->feat[l];
        dpc__gemm_pack_b(out, fe, params + m->w_off[l], fe, ws->pack);
        dpc__gemm_packed(M, fe, out, ws->delta[l], out, ws->pack, ws->dfeat, fe, 0);
        for (size_t i = 0; i < M; i++)
            dpc__kan_contract(m, l, ws->dfeat + i * fe, ws->dphi[l] + i * fe,
                              ws->delta[l - 1] + i * in);
        dpc__act_backward(DPC_ACT_TANH, ws->act[l], ws->delta[l - 1], M * in);
    }
}

/* ==== Entry points (dispatched from chunk.c) ============================================= */

dpc_status dpc__kan_clipped_sum(const dpc_model *m, const double *params, const double *X,
                                const double *y, size_t M, double clip, double *grad_sum,
                                double *losses, double *norms_out, dpc_model_ws *ws,
                                dpc_error *err)
{
    dpc_status st = check_inputs(m, params, X, y, M, err);
    if (st) return st;
    dpc_model_ws *tmp;
    if ((st = dpc__chunk_prologue(m, &ws, &tmp, M, M, err))) return st;
    forward(m, params, X, M, 1, ws);
    head(m, y, M, ws);
    backward(m, params, M, ws);
    if (!(st = dpc__chunk_norms(m, X, M, ws, err))) {
        for (size_t i = 0; i < M; i++)
            ws->scale[i] = ws->norm[i] > clip ? clip / ws->norm[i] : 1.0;
        dpc__chunk_scaled_sum(m, X, M, grad_sum, ws);
        if (losses) memcpy(losses, ws->loss, M * sizeof *losses);
        if (norms_out) memcpy(norms_out, ws->norm, M * sizeof *norms_out);
    }
    dpc_model_ws_free(tmp);
    return st;
}

dpc_status dpc__kan_per_example_grads(const dpc_model *m, const double *params, const double *X,
                                      const double *y, size_t M, double *G, double *losses,
                                      dpc_model_ws *ws, dpc_error *err)
{
    dpc_status st = check_inputs(m, params, X, y, M, err);
    if (st) return st;
    dpc_model_ws *tmp;
    if ((st = dpc__chunk_prologue(m, &ws, &tmp, M, M, err))) return st;
    forward(m, params, X, M, 1, ws);
    head(m, y, M, ws);
    backward(m, params, M, ws);
    if (!(st = dpc__chunk_norms(m, X, M, ws, err))) {
        size_t P = m->n_params;
        for (size_t i = 0; i < M; i++) {
            double *g = G + i * P;
            for (size_t l = 0; l < m->n_layers; l++) {
                size_t out = m->dim[l + 1], fe = m->feat[l];
                const double *a = ws->phi[l] + i * fe, *d = ws->delta[l] + i * out;
                double *gW = g + m->w_off[l];
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

#define EVAL_CHUNK 64

dpc_status dpc__kan_predict(const dpc_model *m, const double *params, const double *X, size_t M,
                            double *out, dpc_model_ws *ws, dpc_error *err)
{
    dpc_status st = dpc__check_params(m, params, err);
    if (st || M == 0) return st;
    dpc_model_ws *tmp;
    if ((st = dpc__chunk_prologue(m, &ws, &tmp, M < EVAL_CHUNK ? M : EVAL_CHUNK, 0, err))) return st;
    size_t D = m->dim[0], K = m->dim[m->n_layers], C = ws->max_chunk;
    for (size_t i = 0; i < M && !st; i++) st = dpc__check_x(m, X + i * D, i, err);
    for (size_t i0 = 0; i0 < M && !st; i0 += C) {
        size_t n = M - i0 < C ? M - i0 : C;
        forward(m, params, X + i0 * D, n, 0, ws);
        for (size_t i = 0; i < n; i++)
            dpc__head_predict(m, ws->delta[m->n_layers - 1] + i * K, out + (i0 + i) * K);
    }
    dpc_model_ws_free(tmp);
    return st;
}

dpc_status dpc__kan_evaluate(const dpc_model *m, const double *params, const double *X,
                             const double *y, size_t n, double *mean_loss, double *accuracy,
                             dpc_model_ws *ws, dpc_error *err)
{
    dpc_status st = dpc__check_params(m, params, err);
    if (st) return st;
    dpc_model_ws *tmp;
    if ((st = dpc__chunk_prologue(m, &ws, &tmp, n < EVAL_CHUNK ? n : EVAL_CHUNK, 0, err))) return st;
    size_t D = m->dim[0], K = m->dim[m->n_layers], C = ws->max_chunk, correct = 0;
    double total = 0.0;
    for (size_t i = 0; i < n && !st; i++) {
        st = dpc__check_x(m, X + i * D, i, err);
        if (!st) st = dpc__check_y(m, y[i], i, err);
    }
    for (size_t i0 = 0; i0 < n && !st; i0 += C) {
        size_t c = n - i0 < C ? n - i0 : C;
        forward(m, params, X + i0 * D, c, 0, ws);
        const double *Z = ws->delta[m->n_layers - 1];
        for (size_t i = 0; i < c && !st; i++) {
            double loss = dpc__head_loss(m, Z + i * K, y[i0 + i], NULL);
            if (!isfinite(loss))
                st = dpc_error_set(err, DPC_E_NUMERIC, "example %zu: loss is not finite (%g)",
                                   i0 + i, loss);
            total += loss;
            if (m->head != DPC__HEAD_SQUARED &&
                dpc__head_class(m, Z + i * K) == (size_t)y[i0 + i])
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
