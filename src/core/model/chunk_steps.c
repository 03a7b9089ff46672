/* chunk_steps.c — the steps the dense-MLP fast path (chunk.c) and the KAN fast path
 * (kan_chunk.c) share once their layer inputs are formed: ghost norms with the finiteness
 * check, the clipped (scaled) gradient sum, and the workspace prologue. A layer l of either
 * model is dense over its input features In_l (M, feat[l]): the activations A_l (X for l = 0)
 * of an MLP, the expanded spline features phi_l of a KAN (doc/models.md, doc/kan.md). One
 * implementation keeps the two paths' reduction orders identical. */
#include "model/gemm.h"
#include "model/internal.h"

#include <math.h>

const double *dpc__layer_input(const dpc_model *m, const double *X, const dpc_model_ws *ws,
                               size_t l)
{
    if (m->cfg.kind == DPC_MODEL_KAN) return ws->phi[l];
    return l == 0 ? X : ws->act[l];
}

/* sum_j v[j]^2 in a fixed order: four interleaved partial sums (j mod 4), combined as
 * (s0 + s1) + (s2 + s3). Independent chains, so it runs at SSE2 width instead of one add
 * latency per element; the order depends on n only. */
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

dpc_status dpc__chunk_norms(const dpc_model *m, const double *X, size_t M, dpc_model_ws *ws,
                            dpc_error *err)
{
    double bias = m->cfg.bias ? 1.0 : 0.0;
    for (size_t i = 0; i < M; i++) {
        double n2 = 0.0;
        for (size_t l = 0; l < m->n_layers; l++) {
            size_t out = m->dim[l + 1], fe = m->feat[l];
            const double *in = dpc__layer_input(m, X, ws, l) + i * fe;
            n2 += sumsq(ws->delta[l] + i * out, out) * (sumsq(in, fe) + bias);
        }
        ws->norm[i] = sqrt(n2);
    }
    for (size_t i = 0; i < M; i++) {
        if (!isfinite(ws->loss[i]))
            return dpc_error_set(err, DPC_E_NUMERIC, "example %zu: loss is not finite (%g)", i,
                                 ws->loss[i]);
        /* A finite ghost norm bounds every |Delta_o In_k| and |Delta_o|: the whole gradient
         * is finite exactly when the norm is. */
        if (!isfinite(ws->norm[i]))
            return dpc_error_set(err, DPC_E_NUMERIC,
                                 "example %zu: gradient is not finite (norm %g)", i,
                                 ws->norm[i]);
    }
    return DPC_OK;
}

void dpc__chunk_scaled_sum(const dpc_model *m, const double *X, size_t M, double *grad_sum,
                           dpc_model_ws *ws)
{
    for (size_t l = 0; l < m->n_layers; l++) {
        size_t out = m->dim[l + 1], fe = m->feat[l];
        const double *In = dpc__layer_input(m, X, ws, l); /* (M, fe) */
        const double *Dl = ws->delta[l];                 /* (M, out) */
        double *sdt = ws->sdt;                           /* (out, M) */
        for (size_t i = 0; i < M; i++)
            for (size_t o = 0; o < out; o++) sdt[o * M + i] = ws->scale[i] * Dl[i * out + o];
        dpc__gemm_pack_b(M, fe, In, fe, ws->pack);
        dpc__gemm_seg(m->cfg.isa, out, fe, M, 0, sdt, M, ws->pack, 0, grad_sum + m->w_off[l],
                      fe, 1);
        if (m->cfg.bias) {
            double *gb = grad_sum + m->b_off[l];
            for (size_t o = 0; o < out; o++) {
                double acc = 0.0;
                for (size_t i = 0; i < M; i++) acc += sdt[o * M + i];
                gb[o] = gb[o] + acc;
            }
        }
    }
}

dpc_status dpc__chunk_prologue(const dpc_model *m, dpc_model_ws **ws, dpc_model_ws **tmp,
                               size_t chunk, size_t need, dpc_error *err)
{
    *tmp = NULL;
    if (*ws) return dpc__check_ws(m, *ws, need, err);
    dpc_status st = dpc_model_ws_new(tmp, m, chunk, err);
    *ws = *tmp;
    return st;
}
