/* kan_naive.c — the reference path of the KAN kind: one example at a time, plain loops, the
 * full gradient materialised (the oracle of kan_chunk.c). The expansion, the contraction, the
 * head and the activation are the shared ones, and every sum runs in the order of the GEMM
 * kernels, so losses and gradients agree with the fast path bit for bit. */
#include "common/util.h"
#include "model/internal.h"

#include <math.h>
#include <string.h>

/* Scratch: per layer phi (feat), dphi (feat), act (dim), z/delta (dim+1), plus dfeat. */
size_t dpc__kan_naive_scratch_len(const dpc_model *m)
{
    size_t n = 0, mx = 0;
    for (size_t l = 0; l < m->n_layers; l++) {
        n += 2 * m->feat[l] + m->dim[l] + m->dim[l + 1];
        if (m->feat[l] > mx) mx = m->feat[l];
    }
    return n + mx;
}

dpc_status dpc__kan_naive_one(const dpc_model *m, const double *params, const double *x,
                              double y, size_t row, double *loss, double *grad, double *scratch,
                              dpc_error *err)
{
    dpc_status st = dpc__check_x(m, x, row, err);
    if (!st) st = dpc__check_y(m, y, row, err);
    if (st) return st;
    size_t L = m->n_layers;
    double *phi[DPC__MAX_LAYERS], *dphi[DPC__MAX_LAYERS], *delta[DPC__MAX_LAYERS];
    const double *act[DPC__MAX_LAYERS];
    double *p = scratch;
    act[0] = x;
    for (size_t l = 0; l < L; l++) {
        phi[l] = p, p += m->feat[l];
        dphi[l] = p, p += m->feat[l];
        if (l > 0) act[l] = p, p += m->dim[l];
        delta[l] = p, p += m->dim[l + 1];
    }
    double *dfeat = p;
    /* forward: z_l[o] = (sum_f W_l[o][f] phi_l[f]) + b_l[o]; a_{l+1} = tanh(z_l) */
    for (size_t l = 0; l < L; l++) {
        size_t out = m->dim[l + 1], fe = m->feat[l];
        dpc__kan_expand(m, l, act[l], phi[l], l > 0 ? dphi[l] : NULL);
        const double *W = params + m->w_off[l];
        double *z = delta[l];
        for (size_t o = 0; o < out; o++) {
            double acc = 0.0;
            for (size_t f = 0; f < fe; f++) acc += phi[l][f] * W[o * fe + f];
            z[o] = m->cfg.bias ? acc + params[m->b_off[l] + o] : acc;
        }
        if (l + 1 < L) {
            memcpy((double *)act[l + 1], z, out * sizeof *z);
            dpc__act_forward(DPC_ACT_TANH, (double *)act[l + 1], out);
        }
    }
    *loss = dpc__head_loss(m, delta[L - 1], y, delta[L - 1]);
    if (!isfinite(*loss))
        return dpc_error_set(err, DPC_E_NUMERIC, "example %zu: loss is not finite (%g)", row,
                             *loss);
    /* backward: dfeat[f] = sum_o delta_l[o] W_l[o][f]; delta_{l-1} = contract * tanh' */
    for (size_t l = L - 1; l > 0; l--) {
        size_t out = m->dim[l + 1], fe = m->feat[l];
        const double *W = params + m->w_off[l];
        for (size_t f = 0; f < fe; f++) {
            double acc = 0.0;
            for (size_t o = 0; o < out; o++) acc += delta[l][o] * W[o * fe + f];
            dfeat[f] = acc;
        }
        dpc__kan_contract(m, l, dfeat, dphi[l], delta[l - 1]);
        dpc__act_backward(DPC_ACT_TANH, act[l], delta[l - 1], m->dim[l]);
    }
    for (size_t l = 0; l < L; l++) {
        size_t out = m->dim[l + 1], fe = m->feat[l];
        double *gW = grad + m->w_off[l];
        for (size_t o = 0; o < out; o++)
            for (size_t f = 0; f < fe; f++) gW[o * fe + f] = delta[l][o] * phi[l][f];
        if (m->cfg.bias) memcpy(grad + m->b_off[l], delta[l], out * sizeof *grad);
    }
    for (size_t i = 0; i < m->n_params; i++)
        if (!isfinite(grad[i]))
            return dpc_error_set(err, DPC_E_NUMERIC,
                                 "example %zu: gradient entry %zu is not finite (%g)", row, i,
                                 grad[i]);
    return DPC_OK;
}
