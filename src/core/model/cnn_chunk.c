/* cnn_chunk.c — the cnn kind's fast path for a chunk of M examples (doc/models.md §11).
 *
 * conv / linear layer l (a linear layer is a 1 x 1 conv on the flattened input, T = 1):
 *     unfold     U (M T, Kc)             rows (i, t): the input patch of output position t
 *     forward    Z^T (oc, M T) = W (oc, Kc) U^T                  GEMM (W read in place)
 *     backward   dU (M T, Kc) = Delta^T (M T, oc) W, then fold    GEMM, B = W packed
 *     norm       ghost:  <U_i U_i^T, D_i^T D_i>_F + ||D_i 1||^2        (two T x T Grams)
 *                direct: ||G_i||^2, G_i = D_i (oc, T) U_i (T, Kc) kept for the sum
 *     sum        ghost:  dW += (S Delta)^T U over all (i, t) in order   GEMM
 *                direct: dW += sum_i s_i G_i (i in order)
 * with D_i = dloss/dz of example i as (oc, T). Pooling, GroupNorm and activations run the
 * per-example kernels of cnn_layers.c. Every per-example row depends on that example only
 * (gemm.h's summation contract), so losses and norms do not depend on the chunk. */
#include "model/gemm.h"
#include "model/internal.h"

#include <math.h>
#include <string.h>

static double sumsq(const double *v, size_t n)
{
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t j = 0;
    for (; j + 4 <= n; j += 4) {
        s0 += v[j] * v[j];
        s1 += v[j + 1] * v[j + 1];
        s2 += v[j + 2] * v[j + 2];
        s3 += v[j + 3] * v[j + 3];
    }
    for (; j < n; j++) s0 += v[j] * v[j];
    return (s0 + s1) + (s2 + s3);
}

/* Input of layer l for the chunk (X for l = 0). */
static const double *layer_in(const dpc_model_ws *ws, const double *X, size_t l)
{
    return l == 0 ? X : ws->cact[l];
}

/* Unfolded input U (M T, Kc) of a conv/linear layer whose input rows are A (M, in). */
static const double *unfolded(const dpc__layer *y, const dpc_model_ws *ws, const double *A,
                              size_t l)
{
    return y->kind == DPC_LAYER_CONV ? ws->unf[l] : A;
}

static const double *unf_i(const dpc_model *m, const dpc_model_ws *ws, const double *X, size_t l,
                           size_t i);

/* C (m, n) = [C +] A (m, k) Bp: dpc__gemm_packed by the kernels of level isa (the same bits at
 * every level, gemm.h). */
static void gemm(dpc_isa isa, size_t m, size_t n, size_t k, const double *A, size_t lda,
                 const double *Bp, double *C, size_t ldc, int accumulate)
{
    dpc__gemm_seg(isa, m, n, k, 0, A, lda, Bp, 0, C, ldc, accumulate);
}

static void conv_forward(dpc_isa isa, const dpc__layer *y, size_t l, const double *params,
                         const double *A, size_t M, double *O, dpc_model_ws *ws)
{
    size_t T = y->T, Kc = y->Kc, MT = M * T, in = y->ic * y->ih * y->iw, out = y->oc * T;
    if (y->kind == DPC_LAYER_CONV)
        for (size_t i = 0; i < M; i++) dpc__cnn_unfold(y, A + i * in, ws->unf[l] + i * T * Kc);
    const double *U = unfolded(y, ws, A, l);
    double *Zt = ws->cscr; /* (oc, M T) */
    dpc__gemm_pack_bt(Kc, MT, U, Kc, ws->pack);
    gemm(isa, y->oc, MT, Kc, params + y->w_off, Kc, ws->pack, Zt, MT, 0);
    const double *b = y->b_off != SIZE_MAX ? params + y->b_off : NULL;
    for (size_t i = 0; i < M; i++)
        for (size_t o = 0; o < y->oc; o++)
            for (size_t t = 0; t < T; t++) {
                double z = Zt[o * MT + i * T + t];
                O[i * out + o * T + t] = b ? z + b[o] : z;
            }
}

void dpc__cnn_forward(const dpc_model *m, const double *params, const double *X, size_t M,
                      dpc_model_ws *ws)
{
    const double *A = X;
    for (size_t l = 0; l < m->n_cnn; l++) {
        const dpc__layer *y = &m->cnn[l];
        size_t in = dpc__cnn_size(m, l), out = dpc__cnn_size(m, l + 1);
        double *O = ws->cact[l + 1]; /* (M, out); the logits for the last layer */
        switch (y->kind) {
        case DPC_LAYER_CONV:
        case DPC_LAYER_LINEAR: conv_forward(m->cfg.isa, y, l, params, A, M, O, ws); break;
        case DPC_LAYER_AVGPOOL:
        case DPC_LAYER_MAXPOOL:
            for (size_t i = 0; i < M; i++) dpc__cnn_pool_forward(y, A + i * in, O + i * out);
            break;
        case DPC_LAYER_GROUPNORM:
            for (size_t i = 0; i < M; i++)
                dpc__cnn_gn_forward(y, params, A + i * in, ws->gnx[l] + i * out,
                                    ws->gninv[l] + i * y->groups, O + i * out);
            break;
        case DPC_LAYER_RELU:
        case DPC_LAYER_TANH:
        case DPC_LAYER_FLATTEN:
            memcpy(O, A, M * out * sizeof *O);
            if (y->kind != DPC_LAYER_FLATTEN)
                dpc__act_forward(y->kind == DPC_LAYER_RELU ? DPC_ACT_RELU : DPC_ACT_TANH, O,
                                 M * out);
            break;
        }
        A = O;
    }
}

void dpc__cnn_backward(const dpc_model *m, const double *params, size_t M, dpc_model_ws *ws)
{
    for (size_t l = m->n_cnn - 1; l > 0; l--) { /* the input of layer 0 needs no gradient */
        const dpc__layer *y = &m->cnn[l];
        size_t in = dpc__cnn_size(m, l), out = dpc__cnn_size(m, l + 1);
        const double *dO = ws->cdel[l + 1], *A = ws->cact[l];
        double *dI = ws->cdel[l];
        switch (y->kind) {
        case DPC_LAYER_CONV:
        case DPC_LAYER_LINEAR: {
            size_t T = y->T, MT = M * T, oc = y->oc, Kc = y->Kc;
            double *Dt = ws->cscr, *dU = Dt + MT * oc; /* (M T, oc), (M T, Kc) */
            for (size_t i = 0; i < M; i++)
                for (size_t o = 0; o < oc; o++)
                    for (size_t t = 0; t < T; t++) Dt[(i * T + t) * oc + o] = dO[i * out + o * T + t];
            dpc__gemm_pack_b(oc, Kc, params + y->w_off, Kc, ws->pack);
            gemm(m->cfg.isa, MT, Kc, oc, Dt, oc, ws->pack, dU, Kc, 0);
            for (size_t i = 0; i < M; i++) dpc__cnn_fold(y, dU + i * T * Kc, dI + i * in);
            break;
        }
        case DPC_LAYER_AVGPOOL:
        case DPC_LAYER_MAXPOOL:
            for (size_t i = 0; i < M; i++)
                dpc__cnn_pool_backward(y, A + i * in, dO + i * out, dI + i * in);
            break;
        case DPC_LAYER_GROUPNORM:
            for (size_t i = 0; i < M; i++)
                dpc__cnn_gn_backward(y, params, ws->gnx[l] + i * out, ws->gninv[l] + i * y->groups,
                                     dO + i * out, dI + i * in);
            break;
        case DPC_LAYER_RELU:
        case DPC_LAYER_TANH:
        case DPC_LAYER_FLATTEN:
            memcpy(dI, dO, M * in * sizeof *dI);
            if (y->kind != DPC_LAYER_FLATTEN)
                dpc__act_backward(y->kind == DPC_LAYER_RELU ? DPC_ACT_RELU : DPC_ACT_TANH,
                                  ws->cact[l + 1], dI, M * in);
            break;
        }
    }
}

/* G (oc, Kc) = D (oc, T) U (T, Kc) and the bias part G[oc Kc + o] = sum_t D[o][t]: the
 * per-example gradient of a conv/linear layer (t in order, as the naive path). */
static void conv_example_grad(dpc_isa isa, const dpc__layer *y, const double *D, const double *U,
                              double *G, double *pack)
{
    size_t T = y->T, Kc = y->Kc;
    dpc__gemm_pack_b(T, Kc, U, Kc, pack);
    gemm(isa, y->oc, Kc, T, D, T, pack, G, Kc, 0);
    if (y->b_off == SIZE_MAX) return;
    for (size_t o = 0; o < y->oc; o++) {
        double acc = 0.0;
        for (size_t t = 0; t < T; t++) acc += D[o * T + t];
        G[y->oc * Kc + o] = acc;
    }
}

/* ||g_i||^2 contribution of a ghost conv/linear layer for example i. */
static double ghost_norm2(dpc_isa isa, const dpc__layer *y, const double *D, const double *U,
                          dpc_model_ws *ws)
{
    size_t T = y->T, Kc = y->Kc, oc = y->oc;
    double bias = 0.0;
    if (T == 1) /* the dense-layer form: ||delta||^2 (||u||^2 + bias) */
        return sumsq(D, oc) * (sumsq(U, Kc) + (y->b_off != SIZE_MAX ? 1.0 : 0.0));
    double *UU = ws->cscr, *DD = UU + T * T, *Dt = DD + T * T; /* (T, T), (T, T), (T, oc) */
    dpc__gemm_pack_bt(Kc, T, U, Kc, ws->pack);
    gemm(isa, T, T, Kc, U, Kc, ws->pack, UU, T, 0);
    for (size_t o = 0; o < oc; o++)
        for (size_t t = 0; t < T; t++) Dt[t * oc + o] = D[o * T + t];
    dpc__gemm_pack_bt(oc, T, Dt, oc, ws->pack);
    gemm(isa, T, T, oc, Dt, oc, ws->pack, DD, T, 0);
    double n2 = 0.0;
    for (size_t j = 0; j < T * T; j++) n2 += UU[j] * DD[j];
    if (y->b_off != SIZE_MAX)
        for (size_t o = 0; o < oc; o++) {
            double s = 0.0;
            for (size_t t = 0; t < T; t++) s += D[o * T + t];
            bias += s * s;
        }
    return n2 + bias;
}

/* U_i (T, Kc) of a conv/linear layer l for example i. */
static const double *unf_i(const dpc_model *m, const dpc_model_ws *ws, const double *X, size_t l,
                           size_t i)
{
    const dpc__layer *y = &m->cnn[l];
    if (y->kind == DPC_LAYER_CONV) return ws->unf[l] + i * y->T * y->Kc;
    return layer_in(ws, X, l) + i * dpc__cnn_size(m, l);
}

dpc_status dpc__cnn_norms(const dpc_model *m, const double *X, size_t M, dpc_model_ws *ws,
                          dpc_error *err)
{
    for (size_t i = 0; i < M; i++) ws->norm[i] = 0.0;
    for (size_t l = 0; l < m->n_cnn; l++) {
        const dpc__layer *y = &m->cnn[l];
        if (!y->n_par) continue;
        size_t out = dpc__cnn_size(m, l + 1);
        const double *D = ws->cdel[l + 1]; /* (M, out) */
        for (size_t i = 0; i < M; i++) {
            double c2;
            if (y->kind == DPC_LAYER_GROUPNORM) {
                double *g = ws->pgrad[l] + i * y->n_par;
                dpc__cnn_gn_param_grad(y, ws->gnx[l] + i * out, D + i * out, g);
                c2 = sumsq(g, y->n_par);
            } else {
                const double *U = unf_i(m, ws, X, l, i);
                if (y->direct) {
                    double *G = ws->pgrad[l] + i * y->n_par;
                    conv_example_grad(m->cfg.isa, y, D + i * out, U, G, ws->pack);
                    c2 = sumsq(G, y->n_par);
                } else {
                    c2 = ghost_norm2(m->cfg.isa, y, D + i * out, U, ws);
                }
            }
            ws->norm[i] += c2;
        }
    }
    for (size_t i = 0; i < M; i++) ws->norm[i] = sqrt(ws->norm[i]);
    for (size_t i = 0; i < M; i++) {
        if (!isfinite(ws->loss[i]))
            return dpc_error_set(err, DPC_E_NUMERIC, "example %zu: loss is not finite (%g)", i,
                                 ws->loss[i]);
        if (!isfinite(ws->norm[i]))
            return dpc_error_set(err, DPC_E_NUMERIC,
                                 "example %zu: gradient is not finite (norm %g)", i, ws->norm[i]);
    }
    return DPC_OK;
}

void dpc__cnn_scaled_sum(const dpc_model *m, const double *X, size_t M, double *grad_sum,
                         dpc_model_ws *ws)
{
    for (size_t l = 0; l < m->n_cnn; l++) {
        const dpc__layer *y = &m->cnn[l];
        if (!y->n_par) continue;
        double *g = grad_sum + y->w_off; /* (n_par): W then b, or gamma then beta */
        if (y->direct) { /* S = sum_i s_i G_i (i in order), then g += S */
            double *S = ws->cscr;
            memset(S, 0, y->n_par * sizeof *S);
            for (size_t i = 0; i < M; i++) {
                const double *G = ws->pgrad[l] + i * y->n_par;
                double s = ws->scale[i];
                for (size_t p = 0; p < y->n_par; p++) S[p] += s * G[p];
            }
            for (size_t p = 0; p < y->n_par; p++) g[p] = g[p] + S[p];
            continue;
        }
        size_t T = y->T, MT = M * T, oc = y->oc, Kc = y->Kc, out = dpc__cnn_size(m, l + 1);
        const double *D = ws->cdel[l + 1];
        double *sdt = ws->cscr; /* (oc, M T): s_i D_i */
        for (size_t i = 0; i < M; i++)
            for (size_t o = 0; o < oc; o++)
                for (size_t t = 0; t < T; t++)
                    sdt[o * MT + i * T + t] = ws->scale[i] * D[i * out + o * T + t];
        const double *U = y->kind == DPC_LAYER_CONV ? ws->unf[l] : layer_in(ws, X, l);
        dpc__gemm_pack_b(MT, Kc, U, Kc, ws->pack);
        gemm(m->cfg.isa, oc, Kc, MT, sdt, MT, ws->pack, g, Kc, 1);
        if (y->b_off != SIZE_MAX) {
            double *gb = grad_sum + y->b_off;
            for (size_t o = 0; o < oc; o++) {
                double acc = 0.0;
                for (size_t j = 0; j < MT; j++) acc += sdt[o * MT + j];
                gb[o] = gb[o] + acc;
            }
        }
    }
}

void dpc__cnn_example_grad(const dpc_model *m, const double *X, size_t i, double *g,
                           dpc_model_ws *ws)
{
    for (size_t l = 0; l < m->n_cnn; l++) {
        const dpc__layer *y = &m->cnn[l];
        if (!y->n_par) continue;
        size_t out = dpc__cnn_size(m, l + 1);
        const double *D = ws->cdel[l + 1] + i * out;
        if (y->kind == DPC_LAYER_GROUPNORM)
            dpc__cnn_gn_param_grad(y, ws->gnx[l] + i * out, D, g + y->w_off);
        else
            conv_example_grad(m->cfg.isa, y, D, unf_i(m, ws, X, l, i), g + y->w_off, ws->pack);
    }
}
