/* batch.c — the clipped sum of a whole batch in two phases (dpcorr/model.h, "Batch clipped
 * sums"): phase 1 per chunk keeps what the sum needs, phase 2 per part of the parameter slab
 * does the sum.
 *
 * Dense kinds. The chunk sum of layer l is S_c = (s Delta_l)^T In_l over the chunk's rows, and
 * dpc_model_clipped_sum adds it to the running total row by row of W_l. Phase 1 stores, at the
 * examples' batch positions, In_l packed as the B operand of the GEMM (panels of DPC__NR
 * features over the examples, capacity max_batch) and (s_i Delta_l[i])^T as its A operand
 * (out_l, max_batch). Phase 2 then computes, for the rows of W_l in its part,
 *     dW_l += S_0;  dW_l += S_1;  ...       one dpc__gemm_seg call with segments = chunks
 * and the bias rows the same way, so each entry sees exactly the additions of the per-chunk
 * path, in the same order, while the gradient block stays in registers for a whole segment and
 * each entry is read and written once per chunk from cache instead of through P-sized buffers.
 *
 * Other kinds (cnn) keep the per-chunk sums S_c (P doubles each) from dpc_model_clipped_sum and add
 * them in chunk order on the part's slice of the slab.
 *
 * The store of phase 1 (keep), phase 2's dense sum and the argument checks are one source with
 * the float32 path (batch_kernel.inc, included here with double and in batch_f32.c with float);
 * this file keeps the batch state (both precisions' slabs) and the double-only parts: phase 1 by
 * the chunk passes of chunk.c and the generic (cnn) sum. */
#include "common/util.h"
#include "model/gemm.h"
#include "model/internal.h"

#include <string.h>

int dpc__model_is_dense(const dpc_model *m)
{
    switch (m->cfg.kind) {
    case DPC_MODEL_LINEAR:
    case DPC_MODEL_LOGISTIC:
    case DPC_MODEL_SOFTMAX:
    case DPC_MODEL_MLP:
    case DPC_MODEL_KAN: return 1;
    case DPC_MODEL_CNN: return 0; /* per-chunk sums (dpc__cnn_scaled_sum) */
    }
    return 0;
}

static size_t panels(size_t n) { return (n + DPC__NR - 1) / DPC__NR; }

dpc_status dpc_model_batch_new(dpc_model_batch **out, const dpc_model *m, size_t max_batch,
                               size_t chunk, dpc_error *err)
{
    return dpc__batch_new(out, m, max_batch, chunk, DPC__BATCH_AUTO, err);
}

dpc_status dpc__batch_new(dpc_model_batch **out, const dpc_model *m, size_t max_batch,
                          size_t chunk, int mode, dpc_error *err)
{
    if (!out) return dpc_error_set(err, DPC_E_INVALID, "dpc_model_batch_new: out is NULL");
    *out = NULL;
    if (!m) return dpc_error_set(err, DPC_E_INVALID, "dpc_model_batch_new: model is NULL");
    if (max_batch < 1 || max_batch > ((size_t)1 << 30))
        return dpc_error_param(err, DPC_E_INVALID, "max_batch", "must be in 1..2^30, got %zu",
                               max_batch);
    if (chunk < 1 || chunk > max_batch)
        return dpc_error_param(err, DPC_E_INVALID, "chunk",
                               "must be in 1..max_batch (%zu), got %zu", max_batch, chunk);
    dpc_model_batch *b = calloc(1, sizeof *b);
    if (!b) return DPC__NOMEM(err, "the batch state");
    b->cap = max_batch;
    b->chunk = chunk;
    b->nchunks = (max_batch + chunk - 1) / chunk;
    b->dense = mode != DPC__BATCH_GENERIC && dpc__model_is_dense(m);
    b->f32 = mode == DPC__BATCH_F32;
    b->n_layers = m->n_layers;
    memcpy(b->dim, m->dim, sizeof b->dim);
    memcpy(b->feat, m->feat, sizeof b->feat);
    b->n_params = m->n_params;
    size_t total = 0, ok = 1, t = 0;
    if (b->f32) { /* float views, counted in floats, then rounded up to doubles */
        for (size_t l = 0; l < m->n_layers; l++) {
            size_t pf = (m->feat[l] + DPC__NRF - 1) / DPC__NRF * DPC__NRF;
            ok &= dpc__mul_ok(pf, max_batch, &t);
            total += t;
            ok &= dpc__mul_ok(m->dim[l + 1], max_batch, &t);
            total += t;
        }
        total = total / 2 + m->n_layers + 1; /* (each view starts on a double boundary) */
    } else if (b->dense) {
        for (size_t l = 0; l < m->n_layers; l++) {
            ok &= dpc__mul_ok(panels(m->feat[l]) * DPC__NR, max_batch, &t);
            total += t;
            ok &= dpc__mul_ok(m->dim[l + 1], max_batch, &t);
            total += t;
        }
    } else {
        ok &= dpc__mul_ok(b->nchunks, m->n_params, &total);
    }
    b->doubles = total;
    b->slab = ok ? dpc__malloc_array(total, sizeof(double)) : NULL;
    if (!b->slab) {
        free(b);
        return DPC__NOMEM(err, "the batch state");
    }
    double *p = b->slab;
    if (b->f32) {
        float *f = (float *)p; /* the slab is only ever accessed as float */
        for (size_t l = 0; l < m->n_layers; l++) {
            size_t pf = (m->feat[l] + DPC__NRF - 1) / DPC__NRF * DPC__NRF;
            b->inf[l] = f;
            f += pf * max_batch;
            b->sdtf[l] = f;
            f += m->dim[l + 1] * max_batch + (m->dim[l + 1] * max_batch) % 2;
        }
    } else if (b->dense) {
        for (size_t l = 0; l < m->n_layers; l++) {
            b->in[l] = p;
            p += panels(m->feat[l]) * DPC__NR * max_batch;
            b->sdt[l] = p;
            p += m->dim[l + 1] * max_batch;
        }
    } else {
        b->sums = p;
    }
    *out = b;
    return DPC_OK;
}

void dpc_model_batch_free(dpc_model_batch *b)
{
    if (!b) return;
    free(b->slab);
    free(b);
}

size_t dpc_model_batch_bytes(const dpc_model_batch *b)
{
    return b ? sizeof *b + b->doubles * sizeof(double) : 0;
}

size_t dpc_model_batch_max(const dpc_model_batch *b) { return b ? b->cap : 0; }

int dpc__batch_same_shape(const dpc_model *m, const dpc_model_batch *b)
{
    return b->n_layers == m->n_layers && b->n_params == m->n_params &&
           (!b->dense || dpc__model_is_dense(m)) &&
           !memcmp(b->dim, m->dim, (m->n_layers + 1) * sizeof m->dim[0]) &&
           !memcmp(b->feat, m->feat, m->n_layers * sizeof m->feat[0]);
}

/* The shared phase-1 checks, keep and phase 2 (batch_kernel.inc), in double. */
#define BK_T double
#define BK_NR DPC__NR
#define BK_F32 0
#define BK_GRADS_NAME "dpc_model_batch_grads"
#define BK_IN(b, l) ((b)->in[l])
#define BK_SDT(b, l) ((b)->sdt[l])
#define BK_LAYER_IN(m, X, ws, l) dpc__layer_input(m, X, ws, l)
#define BK_DELTA(ws, l) ((const double *)(ws)->delta[l])
#define BK_GEMM_SEG dpc__gemm_seg
#include "model/batch_kernel.inc"

dpc_status dpc_model_batch_grads(const dpc_model *m, const double *params, const double *X,
                                 const double *y, size_t M, size_t i0, double clip,
                                 dpc_model_batch *b, dpc_model_ws *ws, double *losses,
                                 double *norms, dpc_error *err)
{
    dpc_status st = check_chunk(m, b, ws, params && X && y, M, i0, clip, err);
    if (st || M == 0) return st;
    if (b->dense) {
        /* params are checked by the chunk at 0 only: they are the same for every chunk of the
         * batch (a non-finite one would make every loss non-finite anyway) */
        if ((st = dpc__chunk_grads(m, params, X, y, M, clip, i0 != 0, ws, err))) return st;
        keep(m, X, M, i0, b, ws);
    } else {
        double *S = b->sums + (i0 / b->chunk) * m->n_params;
        memset(S, 0, m->n_params * sizeof *S);
        if ((st = dpc_model_clipped_sum(m, params, X, y, M, clip, S, NULL, NULL, ws, err)))
            return st;
    }
    if (losses) memcpy(losses, ws->loss, M * sizeof *losses);
    if (norms) memcpy(norms, ws->norm, M * sizeof *norms);
    return DPC_OK;
}

void dpc_model_batch_sum(const dpc_model *m, const dpc_model_batch *b, size_t n, size_t part,
                         size_t nparts, double *grad_sum)
{
    if (!m || !b || !grad_sum || nparts == 0 || part >= nparts || n == 0 ||
        !dpc__batch_same_shape(m, b) || b->f32)
        return;
    if (n > b->cap) n = b->cap;
    if (!b->dense) {
        size_t P = m->n_params, p0 = P * part / nparts, p1 = P * (part + 1) / nparts;
        for (size_t c = 0; c * b->chunk < n; c++) {
            const double *S = b->sums + c * P;
            for (size_t p = p0; p < p1; p++) grad_sum[p] = grad_sum[p] + S[p];
        }
        return;
    }
    sum_dense(m, b, n, part, nparts, grad_sum);
}
