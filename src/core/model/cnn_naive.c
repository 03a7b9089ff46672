/* cnn_naive.c — the cnn kind's naive twin: one example, convolutions written from their
 * definition (no unfold, no GEMM, no packing), the full gradient materialised. The sums run in
 * the same order as the fast path's GEMMs, so losses and gradients agree bit for bit; pooling,
 * GroupNorm and activations call the same per-example kernels (cnn_layers.c). */
#include "model/internal.h"

#include <math.h>
#include <string.h>

/* in[c][yy - pad][xx - pad] of a conv layer's input, 0 in the padding. */
static double at(const dpc__layer *L, const double *in, size_t c, size_t yy, size_t xx)
{
    if (yy < L->pad || yy - L->pad >= L->ih || xx < L->pad || xx - L->pad >= L->iw) return 0.0;
    return in[(c * L->ih + yy - L->pad) * L->iw + xx - L->pad];
}

static void conv_fwd(const dpc__layer *L, const double *params, const double *in, double *out)
{
    const double *W = params + L->w_off, *b = L->b_off != SIZE_MAX ? params + L->b_off : NULL;
    size_t k = L->k, s = L->stride;
    for (size_t o = 0; o < L->oc; o++)
        for (size_t oy = 0; oy < L->oh; oy++)
            for (size_t ox = 0; ox < L->ow; ox++) {
                double acc = 0.0;
                for (size_t c = 0; c < L->ic; c++)
                    for (size_t ky = 0; ky < k; ky++)
                        for (size_t kx = 0; kx < k; kx++)
                            acc += W[o * L->Kc + (c * k + ky) * k + kx] *
                                   at(L, in, c, oy * s + ky, ox * s + kx);
                out[(o * L->oh + oy) * L->ow + ox] = b ? acc + b[o] : acc;
            }
}

/* Parameter gradient g (n_par) and, if din != NULL, the input gradient of a conv layer. */
static void conv_bwd(const dpc__layer *L, const double *params, const double *in,
                     const double *D, double *g, double *din)
{
    const double *W = params + L->w_off;
    size_t k = L->k, s = L->stride, T = L->T, oc = L->oc;
    for (size_t o = 0; o < oc; o++)
        for (size_t c = 0; c < L->ic; c++)
            for (size_t ky = 0; ky < k; ky++)
                for (size_t kx = 0; kx < k; kx++) {
                    double acc = 0.0;
                    for (size_t t = 0; t < T; t++)
                        acc += D[o * T + t] *
                               at(L, in, c, (t / L->ow) * s + ky, (t % L->ow) * s + kx);
                    g[o * L->Kc + (c * k + ky) * k + kx] = acc;
                }
    if (L->b_off != SIZE_MAX)
        for (size_t o = 0; o < oc; o++) {
            double acc = 0.0;
            for (size_t t = 0; t < T; t++) acc += D[o * T + t];
            g[oc * L->Kc + o] = acc;
        }
    if (!din) return;
    memset(din, 0, L->ic * L->ih * L->iw * sizeof *din);
    for (size_t t = 0; t < T; t++)
        for (size_t c = 0; c < L->ic; c++)
            for (size_t ky = 0; ky < k; ky++)
                for (size_t kx = 0; kx < k; kx++) {
                    size_t yy = (t / L->ow) * s + ky, xx = (t % L->ow) * s + kx, kk = (c * k + ky) * k + kx;
                    double acc = 0.0;
                    for (size_t o = 0; o < oc; o++) acc += D[o * T + t] * W[o * L->Kc + kk];
                    if (yy >= L->pad && yy - L->pad < L->ih && xx >= L->pad && xx - L->pad < L->iw)
                        din[(c * L->ih + yy - L->pad) * L->iw + xx - L->pad] += acc;
                }
}

size_t dpc__cnn_naive_scratch_len(const dpc_model *m)
{
    size_t n = 0;
    for (size_t l = 0; l < m->n_cnn; l++) {
        n += 2 * dpc__cnn_size(m, l + 1);                       /* a[l+1], d[l+1] */
        if (m->cnn[l].kind == DPC_LAYER_GROUPNORM) n += dpc__cnn_size(m, l + 1) + m->cnn[l].groups;
    }
    return n;
}

dpc_status dpc__cnn_naive_one(const dpc_model *m, const double *params, const double *x,
                              double y, size_t row, double *loss, double *grad, double *scratch,
                              dpc_error *err)
{
    dpc_status st = dpc__check_x(m, x, row, err);
    if (!st) st = dpc__check_y(m, y, row, err);
    if (st) return st;
    size_t n = m->n_cnn;
    const double *a[DPC__CNN_MAX + 1];
    double *d[DPC__CNN_MAX + 1], *gx[DPC__CNN_MAX], *gi[DPC__CNN_MAX], *p = scratch;
    a[0] = x;
    d[0] = NULL;
    for (size_t l = 0; l < n; l++) {
        size_t sz = dpc__cnn_size(m, l + 1);
        a[l + 1] = p, p += sz;
        d[l + 1] = p, p += sz;
        gx[l] = gi[l] = NULL;
        if (m->cnn[l].kind == DPC_LAYER_GROUPNORM) gx[l] = p, p += sz, gi[l] = p, p += m->cnn[l].groups;
    }
    for (size_t l = 0; l < n; l++) {
        const dpc__layer *L = &m->cnn[l];
        double *o = (double *)a[l + 1];
        switch (L->kind) {
        case DPC_LAYER_CONV:
        case DPC_LAYER_LINEAR: conv_fwd(L, params, a[l], o); break;
        case DPC_LAYER_AVGPOOL:
        case DPC_LAYER_MAXPOOL: dpc__cnn_pool_forward(L, a[l], o); break;
        case DPC_LAYER_GROUPNORM: dpc__cnn_gn_forward(L, params, a[l], gx[l], gi[l], o); break;
        default:
            memcpy(o, a[l], dpc__cnn_size(m, l + 1) * sizeof *o);
            if (L->kind != DPC_LAYER_FLATTEN)
                dpc__act_forward(L->kind == DPC_LAYER_RELU ? DPC_ACT_RELU : DPC_ACT_TANH, o,
                                 dpc__cnn_size(m, l + 1));
        }
    }
    memset(grad, 0, m->n_params * sizeof *grad);
    *loss = dpc__head_loss(m, a[n], y, d[n]);
    if (!isfinite(*loss))
        return dpc_error_set(err, DPC_E_NUMERIC, "example %zu: loss is not finite (%g)", row,
                             *loss);
    for (size_t l = n; l-- > 0;) {
        const dpc__layer *L = &m->cnn[l];
        size_t sz = dpc__cnn_size(m, l);
        double *din = l > 0 ? d[l] : NULL;
        switch (L->kind) {
        case DPC_LAYER_CONV:
        case DPC_LAYER_LINEAR: conv_bwd(L, params, a[l], d[l + 1], grad + L->w_off, din); break;
        case DPC_LAYER_AVGPOOL:
        case DPC_LAYER_MAXPOOL:
            if (din) dpc__cnn_pool_backward(L, a[l], d[l + 1], din);
            break;
        case DPC_LAYER_GROUPNORM:
            if (L->affine) dpc__cnn_gn_param_grad(L, gx[l], d[l + 1], grad + L->w_off);
            if (din) dpc__cnn_gn_backward(L, params, gx[l], gi[l], d[l + 1], din);
            break;
        default:
            if (!din) break;
            memcpy(din, d[l + 1], sz * sizeof *din);
            if (L->kind != DPC_LAYER_FLATTEN)
                dpc__act_backward(L->kind == DPC_LAYER_RELU ? DPC_ACT_RELU : DPC_ACT_TANH, a[l + 1],
                                  din, sz);
        }
    }
    for (size_t i = 0; i < m->n_params; i++)
        if (!isfinite(grad[i]))
            return dpc_error_set(err, DPC_E_NUMERIC,
                                 "example %zu: gradient entry %zu is not finite (%g)", row, i,
                                 grad[i]);
    return DPC_OK;
}
