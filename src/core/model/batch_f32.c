/* batch_f32.c — the float32 path of the batch clipped sum (dpcorr/model.h): the passes of
 * chunk.c and the two phases of batch.c in float arithmetic, for the dense kinds without
 * expanded features (linear, logistic, softmax, mlp).
 *
 * Per chunk of M examples and dense layer l, in float (the workspace's double buffers hold the
 * float arrays: every float array fits in the double array of the same shape):
 *     forward    Z_l^T (out, M) = W_l A_l^T (float GEMM);  A_{l+1} = tanh / relu (Z_l + b_l),
 *                tanh as the float rounding of the double tanh
 *     head       losses and dloss/dZ in double from the float logits; Delta_{L-1} rounded to float
 *     backward   Delta_{l-1} = (Delta_l W_l) * act'(A_l)  (float GEMM, float products)
 *     norms      ||g_i||^2 = sum_l (sum_o Delta^2)(sum_k In^2 + bias), the squares of the float
 *                values summed in double in the order of chunk_steps.c
 *     clip       s_i = clip / ||g_i|| (double); kept: (float)(s_i Delta_l[i][o]) and In_l
 * and phase 2 adds the segmented float GEMM sums to the float gradient. The store (keep), phase 2
 * and the argument checks are batch_kernel.inc with T = float (batch.c includes it with double);
 * the passes above are this file's own. */
#include "common/util.h"
#include "model/gemm.h"
#include "model/tanh_f32.h"
#include "model/internal.h"

#include <math.h>
#include <string.h>

static const char *const prec_names[] = {"double", "float32"};

const char *dpc_precision_name(dpc_precision p)
{
    return (unsigned)p < 2 ? prec_names[p] : "unknown";
}

dpc_status dpc_precision_parse(const char *s, dpc_precision *out, dpc_error *err)
{
    for (int k = 0; k < 2; k++)
        if (s && !strcmp(s, prec_names[k])) {
            *out = (dpc_precision)k;
            return DPC_OK;
        }
    return dpc_error_param(err, DPC_E_INVALID, "precision",
                           "unknown precision '%s' (expected double or float32)", s ? s : "(null)");
}

int dpc_model_has_f32(const dpc_model *m)
{
    return m && m->cfg.kind != DPC_MODEL_KAN && dpc__model_is_dense(m);
}

dpc_status dpc_model_precision_check(const dpc_model *m, dpc_precision p, dpc_error *err)
{
    if (p == DPC_PRECISION_FLOAT32 && m && !dpc_model_has_f32(m))
        return dpc_error_param(err, DPC_E_UNSUPPORTED, "precision",
                               "float32 is available for linear, logistic, softmax and mlp "
                               "models");
    return DPC_OK;
}

dpc_status dpc_model_batch_new_f32(dpc_model_batch **out, const dpc_model *m, size_t max_batch,
                                   size_t chunk, dpc_error *err)
{
    if (out) *out = NULL;
    dpc_status st = dpc_model_precision_check(m, DPC_PRECISION_FLOAT32, err);
    if (st) return st;
    return dpc__batch_new(out, m, max_batch, chunk, DPC__BATCH_F32, err);
}

/* ==== Phase 1 ============================================================================ */

static float *fl(double *p) { return (float *)p; } /* a workspace array viewed as float */

static const float *layer_in(const float *X, dpc_model_ws *ws, size_t l)
{
    return l == 0 ? X : fl(ws->act[l]);
}

/* Finite-ness of v (n): v - v is 0 for finite v and NaN otherwise; eight independent sums
 * (the order is irrelevant: any NaN stays NaN, finite values add exact zeros). */
static int finite_f(const float *v, size_t n)
{
    float a[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (size_t j = 0; j < 8; j++) a[j] += v[i + j] - v[i + j];
    for (; i < n; i++) a[0] += v[i] - v[i];
    return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7])) == 0.0f;
}

static void forward(const dpc_model *m, const float *W, const float *X, size_t M, dpc_model_ws *ws)
{
    size_t L = m->n_layers;
    const float *A = X;
    for (size_t l = 0; l < L; l++) {
        size_t in = m->dim[l], out = m->dim[l + 1];
        float *Z = fl(l + 1 < L ? ws->act[l + 1] : ws->delta[L - 1]); /* (M, out) */
        float *Zt = fl(ws->sdt), *pack = fl(ws->pack);                  /* (out, M) */
        dpc__gemmf_pack_bt(in, M, A, in, pack);
        dpc__gemmf_seg(m->cfg.isa, out, M, in, 0, W + m->w_off[l], in, pack, in, Zt, M, 0);
        const float *b = m->cfg.bias ? W + m->b_off[l] : NULL;
        for (size_t i = 0; i < M; i++)
            for (size_t o = 0; o < out; o++)
                Z[i * out + o] = b ? Zt[o * M + i] + b[o] : Zt[o * M + i];
        if (l + 1 < L) {
            if (m->cfg.act == DPC_ACT_RELU)
                for (size_t i = 0; i < M * out; i++) Z[i] = Z[i] < 0.0f ? 0.0f : Z[i];
            else /* the float rounding of libm's double tanh (more accurate than tanhf), bit
                    for bit, by the vector kernels of tanh_f32.h: 2 against 13 ns */
                dpc__tanh_f32(m->cfg.isa, Z, M * out);
        }
        A = Z;
    }
}

#define MAX_K 4096 /* outputs of the float32 path's head (checked) */

/* Losses (double) and Delta_{L-1} (float) in place of the logits. */
static void head(const dpc_model *m, const double *y, size_t M, dpc_model_ws *ws)
{
    size_t K = m->dim[m->n_layers];
    float *Z = fl(ws->delta[m->n_layers - 1]);
    double z[MAX_K];
    for (size_t i = 0; i < M; i++) {
        float *zi = Z + i * K;
        for (size_t k = 0; k < K; k++) z[k] = zi[k];
        ws->loss[i] = dpc__head_loss(m, z, y[i], z);
        for (size_t k = 0; k < K; k++) zi[k] = (float)z[k];
    }
}

static void backward(const dpc_model *m, const float *W, size_t M, dpc_model_ws *ws)
{
    for (size_t l = m->n_layers - 1; l > 0; l--) {
        size_t in = m->dim[l], out = m->dim[l + 1];
        float *pack = fl(ws->pack), *D = fl(ws->delta[l - 1]);
        const float *A = fl(ws->act[l]);
        dpc__gemmf_pack_b(out, in, W + m->w_off[l], in, pack);
        dpc__gemmf_seg(m->cfg.isa, M, in, out, 0, fl(ws->delta[l]), out, pack, out, D, in, 0);
        if (m->cfg.act == DPC_ACT_RELU)
            for (size_t i = 0; i < M * in; i++) D[i] = A[i] > 0.0f ? D[i] : 0.0f;
        else
            for (size_t i = 0; i < M * in; i++) D[i] = D[i] * (1.0f - A[i] * A[i]);
    }
}

/* sum_j v[j]^2 in double, in the order of chunk_steps.c (four partial sums). */
static double sumsq(const float *v, size_t n)
{
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t j = 0;
    for (; j + 4 <= n; j += 4) {
        double a = v[j], b = v[j + 1], c = v[j + 2], d = v[j + 3];
        s0 += a * a;
        s1 += b * b;
        s2 += c * c;
        s3 += d * d;
    }
    for (; j < n; j++) s0 += (double)v[j] * (double)v[j];
    return (s0 + s1) + (s2 + s3);
}

static dpc_status norms(const dpc_model *m, const float *X, size_t M, double clip,
                        dpc_model_ws *ws, dpc_error *err)
{
    double bias = m->cfg.bias ? 1.0 : 0.0;
    for (size_t i = 0; i < M; i++) {
        double n2 = 0.0;
        for (size_t l = 0; l < m->n_layers; l++) {
            size_t out = m->dim[l + 1], in = m->dim[l];
            const float *a = layer_in(X, ws, l) + i * in;
            n2 += sumsq(fl(ws->delta[l]) + i * out, out) * (sumsq(a, in) + bias);
        }
        ws->norm[i] = sqrt(n2);
        if (!isfinite(ws->loss[i]))
            return dpc_error_set(err, DPC_E_NUMERIC, "example %zu: loss is not finite (%g)", i,
                                 ws->loss[i]);
        if (!isfinite(ws->norm[i]))
            return dpc_error_set(err, DPC_E_NUMERIC,
                                 "example %zu: gradient is not finite (norm %g)", i, ws->norm[i]);
        dpc_model_clip_factors(&ws->norm[i], 1, clip, &ws->scale[i]);
    }
    return DPC_OK;
}

/* The shared phase-1 checks, keep and phase 2 (batch_kernel.inc), in float: In_l and
 * (float)(s_i Delta_l[i][o]) kept in float, s_i double. */
#define BK_T float
#define BK_NR DPC__NRF
#define BK_F32 1
#define BK_GRADS_NAME "dpc_model_batch_grads_f32"
#define BK_IN(b, l) ((b)->inf[l])
#define BK_SDT(b, l) ((b)->sdtf[l])
#define BK_LAYER_IN(m, X, ws, l) layer_in(X, ws, l)
#define BK_DELTA(ws, l) ((const float *)fl((ws)->delta[l]))
#define BK_GEMM_SEG dpc__gemmf_seg
#include "model/batch_kernel.inc"

dpc_status dpc_model_batch_grads_f32(const dpc_model *m, const float *params, const float *X,
                                     const double *y, size_t M, size_t i0, double clip,
                                     dpc_model_batch *b, dpc_model_ws *ws, double *losses,
                                     double *norms_out, dpc_error *err)
{
    dpc_status st = check_chunk(m, b, ws, params && X && y, M, i0, clip, err);
    if (st || M == 0) return st;
    if (i0 == 0 && !finite_f(params, m->n_params)) /* (the chunk at 0 checks the batch's) */
        return dpc_error_param(err, DPC_E_INVALID, "params", "a float parameter is not finite");
    size_t D = m->dim[0];
    for (size_t i = 0; i < M; i++) {
        if (!finite_f(X + i * D, D))
            return dpc_error_set(err, DPC_E_INVALID, "example %zu: a feature is not finite", i);
        if ((st = dpc__check_y(m, y[i], i, err))) return st;
    }
    if (m->dim[m->n_layers] > MAX_K)
        return dpc_error_set(err, DPC_E_UNSUPPORTED, "float32 path: at most %d outputs", MAX_K);
    forward(m, params, X, M, ws);
    head(m, y, M, ws);
    backward(m, params, M, ws);
    if ((st = norms(m, X, M, clip, ws, err))) return st;
    keep(m, X, M, i0, b, ws);
    if (losses) memcpy(losses, ws->loss, M * sizeof *losses);
    if (norms_out) memcpy(norms_out, ws->norm, M * sizeof *norms_out);
    return DPC_OK;
}

/* ==== Phase 2 ============================================================================ */

void dpc_model_batch_sum_f32(const dpc_model *m, const dpc_model_batch *b, size_t n, size_t part,
                             size_t nparts, float *grad_sum)
{
    if (!m || !b || !b->f32 || !grad_sum || nparts == 0 || part >= nparts || n == 0 ||
        !dpc__batch_same_shape(m, b))
        return;
    if (n > b->cap) n = b->cap;
    sum_dense(m, b, n, part, nparts, grad_sum);
}
