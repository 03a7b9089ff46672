/* trainer.c — the DP training step: sampler -> per-example clipped gradients (threads, fixed
 * chunks, chunk-order reduction) -> correlated noise (per coordinate slice) -> heavy-ball SGD.
 * See dpcorr/train.h for the update and the reproducibility argument. */
#include "common/util.h"
#include "train/train_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- construction ------------------------------------------------------------------------ */

static void free_threads(dpc_trainer *tr)
{
    if (!tr->tc) return;
    for (size_t i = 0; i < tr->T; i++) {
        thread_ctx *c = &tr->tc[i];
        dpc_model_ws_free(c->ws);
        free(c->X);
        free(c->y);
        free(c->losses);
        free(c->norms);
        dpc_noise_free(c->noise);
    }
    free(tr->tc);
    tr->tc = NULL;
}

void dpc_trainer_free(dpc_trainer *tr)
{
    if (!tr) return;
    dpc__pool_free(tr->pool);
    free_threads(tr);
    dpc_model_batch_free(tr->batch);
    dpc_sampler_free(tr->sampler);
    dpc_mech_free(tr->mech);
    free(tr->params);
    free(tr->velocity);
    free(tr->gsum);
    free(tr->noise);
    free(tr->params32);
    free(tr->velocity32);
    free(tr->gsum32);
    free(tr->idx);
    free(tr->chunk_loss);
    free(tr->chunk_nclip);
    free(tr);
}

/* Builds thread t's noise generator over its parameter slice [p0, p1). */
static dpc_status make_noise(dpc_trainer *tr, thread_ctx *c, dpc_error *err)
{
    dpc_noise_free(c->noise);
    c->noise = NULL;
    if (c->p1 <= c->p0) return DPC_OK;
    dpc_noise_config nc = {c->p0, c->p1 - c->p0, tr->cfg.noise_form,
                           tr->cfg.noise_memory / tr->T, tr->isa};
    return dpc_noise_new(&c->noise, tr->mech, &tr->noise_stream, &nc, err);
}

/* Float32 slabs (if f32), the initial parameters (rounded to float for f32), and the batch
 * state for a realized batch up to the expected size plus six standard deviations (Poisson
 * sampling; grown when a larger batch comes, ensure_batch). */
static dpc_status init_state(dpc_trainer *tr, int f32, const dpc_rng *rng, dpc_error *err)
{
    size_t P = tr->P;
    if (f32) {
        tr->params32 = dpc__calloc(P, sizeof(float));
        tr->velocity32 = dpc__calloc(P, sizeof(float));
        tr->gsum32 = dpc__calloc(P, sizeof(float));
        if (!tr->params32 || !tr->velocity32 || !tr->gsum32)
            return DPC__NOMEM(err, "float32 slabs");
    }
    dpc_status st = dpc_model_init(tr->model, tr->params, rng, 0, err);
    if (st) return st;
    dpc__train_sync_f32(tr);
    double eb = tr->sdesc.expected_batch;
    return dpc__train_batch_resize(tr, (size_t)(eb + 6.0 * sqrt(eb) + 1.0) + tr->cfg.chunk, err);
}

dpc_status dpc_trainer_new(dpc_trainer **out, const dpc_model *model, const dpc_dataset *train,
                           const dpc_dataset *test, const dpc_train_config *cfg,
                           const dpc_rng *rng, dpc_error *err)
{
    *out = NULL;
    if (!model || !rng) return dpc_error_set(err, DPC_E_INVALID, "train: NULL model or rng");
    dpc_status st = dpc_train_config_check(cfg, train, err);
    dpc_isa isa = DPC_ISA_SSE2;
    if (st || (st = dpc_isa_resolve(cfg->isa, &isa, err))) return st;
    const dpc_model_config *mc = dpc_model_get_config(model);
    if (mc->n_in != train->d)
        return dpc_error_set(err, DPC_E_INVALID, "model: expects %zu features, the data has %zu",
                             mc->n_in, train->d);
    if (test && test->d != train->d)
        return dpc_error_set(err, DPC_E_INVALID, "test data: %zu features, training data %zu",
                             test->d, train->d);
    if ((mc->n_classes >= 2) != (train->n_classes >= 2) ||
        (mc->n_classes >= 2 && mc->n_classes != train->n_classes))
        return dpc_error_set(err, DPC_E_INVALID,
                             "model: %zu classes, the data has %zu (0 = regression)",
                             mc->n_classes, train->n_classes);
    int f32 = cfg->precision == DPC_PRECISION_FLOAT32;
    if (f32 && !dpc_model_has_f32(model))
        return dpc_error_param(err, DPC_E_UNSUPPORTED, "precision",
                               "float32 is available for linear, logistic, softmax and mlp "
                               "models");
    dpc_trainer *tr = calloc(1, sizeof *tr);
    if (!tr) return DPC__NOMEM(err, "trainer");
    tr->cfg = *cfg;
    tr->model = model;
    tr->train = train;
    tr->test = test;
    tr->rng = *rng;
    tr->P = dpc_model_num_params(model);
    tr->D = train->d;
    tr->T = cfg->threads;
    tr->isa = isa;
    tr->noise_stream = dpc_rng_stream_derive(rng, DPC_STREAM_ID(DPC_STREAM_NOISE, 0));
    /* sampler: n = epochs * floor(N / B) steps */
    size_t spe = train->n / cfg->batch;
    tr->n_steps = cfg->epochs * spe;
    dpc_sampler_config sc = {cfg->sampler, train->n, cfg->batch, tr->n_steps, cfg->groups};
    if (cfg->sampler == DPC_SAMPLER_CYCLIC_POISSON && sc.groups == 0) {
        /* default: as many groups as the strategy has bands (1 for DP-SGD) */
        if (cfg->mech.kind == DPC_MECH_IDENTITY) sc.groups = 1;
        else if (cfg->mech.kind == DPC_MECH_BSR) sc.groups = cfg->mech.bands;
        else {
            dpc_trainer_free(tr);
            return dpc_error_set(err, DPC_E_INVALID,
                                 "groups: give --groups for cyclic-poisson with %s",
                                 dpc_mech_kind_name(cfg->mech.kind));
        }
    }
    st = dpc_sampler_new(&tr->sampler, &sc, rng, err);
    if (st) goto fail;
    dpc_sampler_describe(tr->sampler, &tr->sdesc);
    st = dpc__train_privacy(tr, err);
    if (st) goto fail;
    /* slabs */
    size_t P = tr->P;
    tr->params = dpc__calloc(P, sizeof(double));
    tr->velocity = dpc__calloc(P, sizeof(double));
    tr->gsum = dpc__calloc(P, sizeof(double));
    tr->noise = dpc__calloc(P, sizeof(double));
    tr->idx_cap = dpc_sampler_max_batch(tr->sampler);
    tr->idx = dpc__calloc(tr->idx_cap, sizeof(size_t));
    tr->max_chunks = (tr->idx_cap + cfg->chunk - 1) / cfg->chunk;
    tr->chunk_loss = dpc__calloc(tr->max_chunks, sizeof(double));
    tr->chunk_nclip = dpc__calloc(tr->max_chunks, sizeof(size_t));
    tr->tc = calloc(tr->T, sizeof *tr->tc);
    if (!tr->params || !tr->velocity || !tr->gsum || !tr->noise || !tr->idx || !tr->chunk_loss ||
        !tr->chunk_nclip || !tr->tc) {
        st = DPC__NOMEM(err, "trainer slabs");
        goto fail;
    }
    if ((st = init_state(tr, f32, rng, err))) goto fail;
    for (size_t i = 0; i < tr->T; i++) {
        thread_ctx *c = &tr->tc[i];
        c->p0 = P * i / tr->T;
        c->p1 = P * (i + 1) / tr->T;
        size_t ch = cfg->chunk;
        st = dpc_model_ws_new(&c->ws, model, ch, err);
        if (st) goto fail;
        c->X = dpc__malloc_array(ch * tr->D, sizeof(double));
        c->y = dpc__malloc_array(ch, sizeof(double));
        c->losses = dpc__malloc_array(ch, sizeof(double));
        c->norms = dpc__malloc_array(ch, sizeof(double));
        if (!c->X || !c->y || !c->losses || !c->norms) {
            st = DPC__NOMEM(err, "thread buffers");
            goto fail;
        }
        st = make_noise(tr, c, err);
        if (st) goto fail;
    }
    if (!dpc__pool_new(&tr->pool, tr->T)) {
        st = dpc_error_set(err, DPC_E_NOMEM, "threads: cannot start %zu threads", tr->T);
        goto fail;
    }
    *out = tr;
    return DPC_OK;
fail:
    dpc_trainer_free(tr);
    return st;
}

/* ---- one step ---------------------------------------------------------------------------- */

dpc_status dpc__train_batch_resize(dpc_trainer *tr, size_t cap, dpc_error *err)
{
    if (cap > tr->idx_cap) cap = tr->idx_cap;
    if (cap < tr->cfg.chunk) cap = tr->cfg.chunk < tr->idx_cap ? tr->cfg.chunk : tr->idx_cap;
    dpc_model_batch *b = NULL;
    size_t ch = cap < tr->cfg.chunk ? cap : tr->cfg.chunk;
    dpc_status st = tr->params32 ? dpc_model_batch_new_f32(&b, tr->model, cap, ch, err)
                                 : dpc_model_batch_new(&b, tr->model, cap, ch, err);
    if (st) return st;
    dpc_model_batch_free(tr->batch);
    tr->batch = b;
    return DPC_OK;
}

/* The batch state holds at least n examples (a rare large Poisson batch: doubled). */
static dpc_status ensure_batch(dpc_trainer *tr, size_t n, dpc_error *err)
{
    size_t cap = dpc_model_batch_max(tr->batch);
    if (n <= cap) return DPC_OK;
    return dpc__train_batch_resize(tr, 2 * cap > n ? 2 * cap : n, err);
}

/* Phase 1: thread tid computes chunks tid, tid + T, ... of the batch (each chunk's per-example
 * results do not depend on where it runs). */
static void phase_chunks(void *a, size_t tid, size_t T)
{
    dpc_trainer *tr = a;
    thread_ctx *c = &tr->tc[tid];
    size_t ch = tr->cfg.chunk, D = tr->D, nchunks = (tr->count + ch - 1) / ch;
    for (size_t chunk = tid; chunk < nchunks && !c->st; chunk += T) {
        size_t i0 = chunk * ch, m = tr->count - i0 < ch ? tr->count - i0 : ch;
        if (tr->params32) { /* float32: the rows rounded to float */
            float *X = (float *)c->X;
            for (size_t j = 0; j < m; j++) {
                const double *src = tr->train->x + tr->idx[i0 + j] * D;
                for (size_t k = 0; k < D; k++) X[j * D + k] = (float)src[k];
                c->y[j] = tr->train->y[tr->idx[i0 + j]];
            }
            c->st = dpc_model_batch_grads_f32(tr->model, tr->params32, X, c->y, m, i0,
                                              tr->cfg.clip, tr->batch, c->ws, c->losses,
                                              c->norms, &c->err);
        } else {
            for (size_t j = 0; j < m; j++) {
                size_t ex = tr->idx[i0 + j];
                memcpy(c->X + j * D, tr->train->x + ex * D, D * sizeof(double));
                c->y[j] = tr->train->y[ex];
            }
            c->st = dpc_model_batch_grads(tr->model, tr->params, c->X, c->y, m, i0,
                                          tr->cfg.clip, tr->batch, c->ws, c->losses, c->norms,
                                          &c->err);
        }
        if (c->st) {
            dpc_error_prefix(&c->err, "example %zu: ", tr->idx[i0]);
            break;
        }
        double ls = 0.0;
        size_t nclip = 0;
        for (size_t j = 0; j < m; j++) {
            ls += c->losses[j];
            nclip += c->norms[j] > tr->cfg.clip;
        }
        tr->chunk_loss[chunk] = ls;
        tr->chunk_nclip[chunk] = nclip;
    }
}

/* Phase 2: gsum += the chunk sums in chunk order, on part tid of T of the slab. */
static void phase_sum(void *a, size_t tid, size_t T)
{
    dpc_trainer *tr = a;
    if (tr->params32)
        dpc_model_batch_sum_f32(tr->model, tr->batch, tr->count, tid, T, tr->gsum32);
    else
        dpc_model_batch_sum(tr->model, tr->batch, tr->count, tid, T, tr->gsum);
}

void dpc__train_sync_f32(dpc_trainer *tr)
{
    if (!tr->params32) return;
    for (size_t p = 0; p < tr->P; p++) {
        tr->params32[p] = (float)tr->params[p];
        tr->velocity32[p] = (float)tr->velocity[p];
        tr->params[p] = tr->params32[p]; /* the double views hold exactly the float values */
        tr->velocity[p] = tr->velocity32[p];
    }
}

/* float32 precision: the same update in float on [p0, p1): the noise (double, scaled in double)
 * rounded to float and added to the float sum; then the double views. */
static void update_f32(dpc_trainer *tr, size_t p0, size_t p1, double lr)
{
    const dpc_train_config *cfg = &tr->cfg;
    float inv_b = (float)(1.0 / tr->sdesc.expected_batch), lr32 = (float)lr;
    float mom = (float)cfg->momentum, wd = (float)cfg->weight_decay;
    double scale = tr->noise_scale;
    float *th = tr->params32, *v = tr->velocity32;
    const float *g = tr->gsum32;
    const double *w = tr->noise;
    for (size_t p = p0; p < p1; p++) {
        float n = (float)(scale * w[p]);
        float h = (g[p] + n) * inv_b + wd * th[p];
        v[p] = mom * v[p] + h;
        th[p] = th[p] - lr32 * v[p];
        tr->params[p] = th[p];
        tr->velocity[p] = v[p];
    }
}

/* Phase 3: noise for this slice, then the optimizer update. */
static void phase_update(void *a, size_t tid, size_t T)
{
    dpc_trainer *tr = a;
    thread_ctx *c = &tr->tc[tid];
    (void)T;
    if (c->p1 <= c->p0) return;
    c->st = dpc_noise_next(c->noise, tr->noise + c->p0, &c->err);
    if (c->st) return;
    const dpc_train_config *cfg = &tr->cfg;
    double scale = tr->noise_scale, inv_b = 1.0 / tr->sdesc.expected_batch;
    double lr = dpc__train_lr(cfg, tr->t, tr->n_steps), mom = cfg->momentum,
           wd = cfg->weight_decay;
    if (tr->params32) {
        update_f32(tr, c->p0, c->p1, lr);
        return;
    }
    double *th = tr->params, *v = tr->velocity;
    const double *g = tr->gsum, *w = tr->noise;
    for (size_t p = c->p0; p < c->p1; p++) {
        double h = (g[p] + scale * w[p]) * inv_b + wd * th[p];
        v[p] = mom * v[p] + h;
        th[p] = th[p] - lr * v[p];
    }
}

static dpc_status collect(dpc_trainer *tr, dpc_error *err)
{
    for (size_t i = 0; i < tr->T; i++)
        if (tr->tc[i].st) {
            dpc_status st = tr->tc[i].st;
            if (err) *err = tr->tc[i].err;
            for (size_t j = 0; j < tr->T; j++) tr->tc[j].st = DPC_OK;
            return st;
        }
    return DPC_OK;
}

dpc_status dpc_trainer_step(dpc_trainer *tr, dpc_step_info *info, dpc_error *err)
{
    if (tr->t >= tr->n_steps)
        return dpc_error_set(err, DPC_E_RANGE, "train: all %zu steps are done", tr->n_steps);
    dpc_status st = dpc_sampler_batch(tr->sampler, tr->t, tr->idx, &tr->count, err);
    if (st) return st;
    if ((st = ensure_batch(tr, tr->count, err))) return st;
    if (tr->params32)
        memset(tr->gsum32, 0, tr->P * sizeof(float));
    else
        memset(tr->gsum, 0, tr->P * sizeof(double));
    size_t ch = tr->cfg.chunk, nchunks = (tr->count + ch - 1) / ch;
    dpc__pool_run(tr->pool, phase_chunks, tr);
    if ((st = collect(tr, err))) return st;
    dpc__pool_run(tr->pool, phase_sum, tr);
    double lr = dpc__train_lr(&tr->cfg, tr->t, tr->n_steps);
    dpc__pool_run(tr->pool, phase_update, tr);
    if ((st = collect(tr, err))) return st;
    for (size_t p = 0; p < tr->P; p++)
        if (!isfinite(tr->params[p]))
            return dpc_error_set(err, DPC_E_NUMERIC,
                                 "train: parameter %zu became %g at step %zu (lower --lr?)", p,
                                 tr->params[p], tr->t);
    if (info) {
        double ls = 0.0;
        size_t nclip = 0;
        for (size_t c = 0; c < nchunks; c++) {
            ls += tr->chunk_loss[c];
            nclip += tr->chunk_nclip[c];
        }
        info->step = tr->t;
        info->batch = tr->count;
        info->loss = tr->count ? ls / (double)tr->count : NAN;
        info->clip_fraction = tr->count ? (double)nclip / (double)tr->count : 0.0;
        info->lr = lr;
    }
    tr->t++;
    return DPC_OK;
}

/* ---- evaluation -------------------------------------------------------------------------- */

typedef struct eval_arg {
    dpc_trainer *tr;
    const dpc_dataset *ds;
    size_t nblocks;
    double *loss;    /* (nblocks) loss sums */
    double *correct; /* (nblocks) correct counts */
} eval_arg;

static void phase_eval(void *a, size_t tid, size_t T)
{
    eval_arg *e = a;
    thread_ctx *c = &e->tr->tc[tid];
    for (size_t b = tid; b < e->nblocks && !c->st; b += T) {
        size_t i0 = b * DPC__EVAL_BLOCK, m = e->ds->n - i0;
        if (m > DPC__EVAL_BLOCK) m = DPC__EVAL_BLOCK;
        double ml, acc;
        c->st = dpc_model_evaluate(e->tr->model, e->tr->params, e->ds->x + i0 * e->ds->d,
                                   e->ds->y + i0, m, &ml, &acc, NULL, &c->err);
        e->loss[b] = ml * (double)m;
        e->correct[b] = isnan(acc) ? NAN : floor(acc * (double)m + 0.5);
    }
}

dpc_status dpc_trainer_evaluate(dpc_trainer *tr, const dpc_dataset *ds, double *loss,
                                double *accuracy, dpc_error *err)
{
    if (!ds || ds->n == 0) return dpc_error_set(err, DPC_E_INVALID, "evaluate: empty data set");
    if (ds->d != tr->D)
        return dpc_error_set(err, DPC_E_INVALID, "evaluate: %zu features, the model takes %zu",
                             ds->d, tr->D);
    eval_arg e = {tr, ds, (ds->n + DPC__EVAL_BLOCK - 1) / DPC__EVAL_BLOCK, NULL, NULL};
    e.loss = dpc__malloc_array(e.nblocks, sizeof(double));
    e.correct = dpc__malloc_array(e.nblocks, sizeof(double));
    if (!e.loss || !e.correct) {
        free(e.loss);
        free(e.correct);
        return DPC__NOMEM(err, "evaluation");
    }
    dpc__pool_run(tr->pool, phase_eval, &e);
    dpc_status st = collect(tr, err);
    if (!st) {
        double ls = 0.0, cor = 0.0;
        for (size_t b = 0; b < e.nblocks; b++) {
            ls += e.loss[b];
            cor += e.correct[b];
        }
        *loss = ls / (double)ds->n;
        *accuracy = cor / (double)ds->n;
    }
    free(e.loss);
    free(e.correct);
    return st;
}

/* ---- accessors ---------------------------------------------------------------------------- */

size_t dpc_trainer_steps_done(const dpc_trainer *tr) { return tr->t; }
dpc_isa dpc_trainer_isa(const dpc_trainer *tr) { return tr->isa; }

size_t dpc_trainer_bytes(const dpc_trainer *tr)
{
    size_t b = sizeof *tr + 4 * tr->P * sizeof(double) + tr->idx_cap * sizeof(size_t) +
               (tr->params32 ? 3 * tr->P * sizeof(float) : 0) +
               tr->max_chunks * (sizeof(double) + sizeof(size_t)) + tr->T * sizeof *tr->tc +
               dpc_model_batch_bytes(tr->batch);
    size_t ch = tr->cfg.chunk;
    for (size_t i = 0; i < tr->T; i++) {
        const thread_ctx *c = &tr->tc[i];
        b += dpc_model_ws_bytes(c->ws) + dpc_noise_bytes(c->noise) +
             (ch * tr->D + 3 * ch) * sizeof(double);
    }
    return b;
}
size_t dpc_trainer_steps_total(const dpc_trainer *tr) { return tr->n_steps; }
const dpc_ledger *dpc_trainer_ledger(const dpc_trainer *tr) { return &tr->ledger; }
const double *dpc_trainer_params(const dpc_trainer *tr) { return tr->params; }

uint64_t dpc_trainer_params_hash(const dpc_trainer *tr)
{
    uint64_t h = 0xcbf29ce484222325ull;
    const unsigned char *b = (const unsigned char *)tr->params;
    for (size_t i = 0; i < tr->P * sizeof(double); i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    return h;
}
