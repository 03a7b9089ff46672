/* kan_chunk.c — the fast path of the KAN kind: chunk forward, backward, ghost norms and the
 * clipped sum without per-example gradients. A KAN layer is a dense layer over the expanded
 * features Phi_l (M, feat_l) of its input (kan_layer.c), so the pipeline is chunk.c's:
 *     expand     Phi_l = phi(A_l), and dPhi_l = phi'(A_l) for l >= 1
 *     forward    Z_l^T (out, M) = W_l (out, feat) Phi_l^T (feat, M) + b;  A_{l+1} = tanh(Z_l)
 *     head       Delta_{L-1} = dloss/dZ_{L-1}, losses
 *     backward   G (M, feat) = Delta_l W_l;  Delta_{l-1} = contract(G, dPhi_l) * (1 - A_l^2)
 *     norms      ||g_i||^2 = sum_l ||Delta_l[i]||^2 (||Phi_l[i]||^2 + bias)      (ghost norm)
 *     sum        dW_l += (S Delta_l)^T Phi_l,  db_l += sum_i s_i Delta_l[i]
 * with the same fixed-order GEMM kernels (gemm.h): every row depends on its example only. Only
 * the two passes that differ from a dense layer live here; chunk.c runs the head, the norms,
 * the sums and the entry points for every kind (chunk_steps.c). */
#include "model/gemm.h"
#include "model/internal.h"

#include <math.h>
#include <string.h>

void dpc__kan_forward(const dpc_model *m, const double *params, const double *X, size_t M,
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
        dpc__gemm_seg(m->cfg.isa, out, M, fe, 0, params + m->w_off[l], fe, ws->pack, 0, Zt, M, 0);
        const double *b = m->cfg.bias ? params + m->b_off[l] : NULL;
        for (size_t i = 0; i < M; i++)
            for (size_t o = 0; o < out; o++)
                Z[i * out + o] = b ? Zt[o * M + i] + b[o] : Zt[o * M + i];
        if (l + 1 < L) dpc__act_forward(DPC_ACT_TANH, Z, M * out);
        A = Z;
    }
}

void dpc__kan_backward(const dpc_model *m, const double *params, size_t M, dpc_model_ws *ws)
{
    for (size_t l = m->n_layers - 1; l > 0; l--) {
        size_t in = m->dim[l], out = m->dim[l + 1], fe = m->feat[l];
        dpc__gemm_pack_b(out, fe, params + m->w_off[l], fe, ws->pack);
        dpc__gemm_seg(m->cfg.isa, M, fe, out, 0, ws->delta[l], out, ws->pack, 0, ws->dfeat, fe, 0);
        for (size_t i = 0; i < M; i++)
            dpc__kan_contract(m, l, ws->dfeat + i * fe, ws->dphi[l] + i * fe,
                              ws->delta[l - 1] + i * in);
        dpc__act_backward(DPC_ACT_TANH, ws->act[l], ws->delta[l - 1], M * in);
    }
}
