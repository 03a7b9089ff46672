/* cnn_layers.c — per-example kernels of the cnn layers that have no GEMM: pooling, GroupNorm,
 * and the unfold / fold of a convolution's input. The naive and the fast path call the same
 * functions, so these layers agree bit for bit between the two; their semantics are checked
 * against PyTorch (tests/gen/cnn_oracle.py) and by finite differences. Shapes are (C, H, W),
 * channel-major. */
#include "model/internal.h"

#include <math.h>
#include <string.h>

#define GN_EPS 1e-5 /* as PyTorch's GroupNorm */

void dpc__cnn_pool_forward(const dpc__layer *L, const double *in, double *out)
{
    size_t k = L->k, s = L->stride, H = L->ih, W = L->iw;
    int mx = L->kind == DPC_LAYER_MAXPOOL;
    double inv = 1.0 / (double)(k * k);
    for (size_t c = 0; c < L->oc; c++)
        for (size_t oy = 0; oy < L->oh; oy++)
            for (size_t ox = 0; ox < L->ow; ox++) {
                const double *w0 = in + c * H * W + oy * s * W + ox * s;
                double acc = mx ? w0[0] : 0.0;
                for (size_t ky = 0; ky < k; ky++)
                    for (size_t kx = 0; kx < k; kx++) {
                        double v = w0[ky * W + kx];
                        if (mx) acc = (v > acc || isnan(v)) && !isnan(acc) ? v : acc;
                        else acc += v;
                    }
                out[(c * L->oh + oy) * L->ow + ox] = mx ? acc : acc * inv;
            }
}

void dpc__cnn_pool_backward(const dpc__layer *L, const double *in, const double *dout,
                            double *din)
{
    size_t k = L->k, s = L->stride, H = L->ih, W = L->iw;
    int mx = L->kind == DPC_LAYER_MAXPOOL;
    double inv = 1.0 / (double)(k * k);
    memset(din, 0, L->ic * H * W * sizeof *din);
    for (size_t c = 0; c < L->oc; c++)
        for (size_t oy = 0; oy < L->oh; oy++)
            for (size_t ox = 0; ox < L->ow; ox++) {
                size_t base = c * H * W + oy * s * W + ox * s;
                double g = dout[(c * L->oh + oy) * L->ow + ox];
                if (mx) { /* the first maximum in window order takes the gradient */
                    size_t arg = base;
                    double best = in[base];
                    for (size_t ky = 0; ky < k; ky++)
                        for (size_t kx = 0; kx < k; kx++) {
                            double v = in[base + ky * W + kx];
                            if ((v > best || isnan(v)) && !isnan(best)) best = v, arg = base + ky * W + kx;
                        }
                    din[arg] += g;
                } else {
                    for (size_t ky = 0; ky < k; ky++)
                        for (size_t kx = 0; kx < k; kx++) din[base + ky * W + kx] += g * inv;
                }
            }
}

void dpc__cnn_gn_forward(const dpc__layer *L, const double *params, const double *in,
                         double *xhat, double *inv, double *out)
{
    size_t T = L->ih * L->iw, cpg = L->ic / L->groups, n = cpg * T;
    const double *gam = L->affine ? params + L->w_off : NULL, *bet = L->affine ? params + L->b_off : NULL;
    for (size_t g = 0; g < L->groups; g++) {
        const double *x = in + g * n;
        double sum = 0.0, ss = 0.0;
        for (size_t j = 0; j < n; j++) sum += x[j];
        double mean = sum / (double)n;
        for (size_t j = 0; j < n; j++) ss += (x[j] - mean) * (x[j] - mean);
        double iv = 1.0 / sqrt(ss / (double)n + GN_EPS);
        inv[g] = iv;
        for (size_t j = 0; j < n; j++) {
            size_t c = g * cpg + j / T;
            double h = (x[j] - mean) * iv;
            xhat[g * n + j] = h;
            out[g * n + j] = gam ? h * gam[c] + bet[c] : h;
        }
    }
}

void dpc__cnn_gn_backward(const dpc__layer *L, const double *params, const double *xhat,
                          const double *inv, const double *dout, double *din)
{
    size_t T = L->ih * L->iw, cpg = L->ic / L->groups, n = cpg * T;
    const double *gam = L->affine ? params + L->w_off : NULL;
    for (size_t g = 0; g < L->groups; g++) {
        const double *h = xhat + g * n, *dy = dout + g * n;
        double *dx = din + g * n;
        double a = 0.0, b = 0.0;
        for (size_t j = 0; j < n; j++) {
            double dh = gam ? dy[j] * gam[g * cpg + j / T] : dy[j];
            dx[j] = dh;
            a += dh;
            b += dh * h[j];
        }
        /* dx = inv (dh - mean(dh) - xhat mean(dh xhat)) */
        double ma = a / (double)n, mb = b / (double)n;
        for (size_t j = 0; j < n; j++) dx[j] = inv[g] * ((dx[j] - ma) - h[j] * mb);
    }
}

void dpc__cnn_gn_param_grad(const dpc__layer *L, const double *xhat, const double *dout,
                            double *g)
{
    size_t T = L->ih * L->iw;
    for (size_t c = 0; c < L->oc; c++) {
        double a = 0.0, b = 0.0;
        for (size_t t = 0; t < T; t++) {
            a += dout[c * T + t] * xhat[c * T + t];
            b += dout[c * T + t];
        }
        g[c] = a;
        g[L->oc + c] = b;
    }
}

void dpc__cnn_unfold(const dpc__layer *L, const double *in, double *U)
{
    size_t k = L->k, s = L->stride, H = L->ih, W = L->iw;
    for (size_t oy = 0; oy < L->oh; oy++)
        for (size_t ox = 0; ox < L->ow; ox++) {
            double *u = U + (oy * L->ow + ox) * L->Kc; /* (Kc) = (ic, k, k) */
            for (size_t c = 0; c < L->ic; c++)
                for (size_t ky = 0; ky < k; ky++) {
                    size_t yy = oy * s + ky; /* padded coordinate */
                    for (size_t kx = 0; kx < k; kx++) {
                        size_t xx = ox * s + kx;
                        int inside = yy >= L->pad && yy - L->pad < H && xx >= L->pad &&
                                     xx - L->pad < W;
                        *u++ = inside ? in[(c * H + yy - L->pad) * W + xx - L->pad] : 0.0;
                    }
                }
        }
}

void dpc__cnn_fold(const dpc__layer *L, const double *dU, double *din)
{
    size_t k = L->k, s = L->stride, H = L->ih, W = L->iw;
    memset(din, 0, L->ic * H * W * sizeof *din);
    for (size_t oy = 0; oy < L->oh; oy++)
        for (size_t ox = 0; ox < L->ow; ox++) {
            const double *u = dU + (oy * L->ow + ox) * L->Kc;
            for (size_t c = 0; c < L->ic; c++)
                for (size_t ky = 0; ky < k; ky++) {
                    size_t yy = oy * s + ky;
                    for (size_t kx = 0; kx < k; kx++, u++) {
                        size_t xx = ox * s + kx;
                        if (yy >= L->pad && yy - L->pad < H && xx >= L->pad && xx - L->pad < W)
                            din[(c * H + yy - L->pad) * W + xx - L->pad] += *u;
                    }
                }
        }
}
