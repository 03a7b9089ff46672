/* trainer.c — the DP training step: sampler -> per-example clipped gradients (threads, fixed
 * chunks, chunk-order reduction) -> correlated noise (per coordinate slice) -> heavy-ball SGD.
 * See dpcorr/train.h for the update and the reproducibility argument. With a transport of size
 * P > 1 (dist_train.c) the rounds of chunks are shared among the ranks, the chunk-order
 * reduction runs as a chain over the ranks, and this rank updates its coordinate shard only. In
 * one process the clipped sum of the batch runs in two phases (dpc_model_batch_*): the chunks'
 * passes on the threads, then one segmented GEMM per layer on each thread's share of the rows —
 * the same additions in the same order, without P-sized chunk buffers. */
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
        free(c->bufs);
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
    dpc__dist_free(&tr->dist);
    dpc_sampler_free(tr->sampler);
    dpc_mech_free(tr->mech);
    dpc_strategy_free(tr->blt);
    dpc_model_batch_free(tr->batch);
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
    free(tr->tele_list);
    free(tr->tele_msg);
    free(tr->hist);
    free(tr->canary_hits);
    free(tr->row_bound);
    free(tr->rows);
    free(tr->rows_out);
    free(tr->rows_in);
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

/* Chunks per rank per round: K per thread in one process; with ranks, a share of the largest
 * batch (one round per step) within DPC__ROUND_BYTES of chunk sums, from rank-independent inputs
 * (every rank must cut the same rounds). */
static size_t round_chunks(const dpc_trainer *tr)
{
    if (!dpc__dist_on(&tr->dist)) return tr->T * DPC__CHUNKS_PER_THREAD;
    size_t ranks = tr->dist.size, want = (tr->max_chunks + ranks - 1) / ranks;
    size_t cap = DPC__ROUND_BYTES / (tr->P * sizeof(double));
    if (cap < DPC__CHUNKS_PER_THREAD) cap = DPC__CHUNKS_PER_THREAD;
    if (want > cap) want = cap;
    return want ? want : 1;
}

/* Thread i: workspace, chunk buffers and the noise generator over its slice of the shard. */
static dpc_status make_thread(dpc_trainer *tr, size_t i, dpc_error *err)
{
    thread_ctx *c = &tr->tc[i];
    size_t len = tr->s1 - tr->s0, ch = tr->cfg.chunk;
    c->p0 = tr->s0 + len * i / tr->T;
    c->p1 = tr->s0 + len * (i + 1) / tr->T;
    dpc_status st = dpc_model_ws_new(&c->ws, tr->model, ch, err);
    if (st) return st;
    c->X = dpc__malloc_array(ch * tr->D, sizeof(double));
    c->y = dpc__malloc_array(ch, sizeof(double));
    c->losses = dpc__malloc_array(ch, sizeof(double));
    c->norms = dpc__malloc_array(ch, sizeof(double));
    size_t nb;
    if (dpc__dist_on(&tr->dist)) /* chunk sums for the chain; one process: the batch state */
        c->bufs = dpc__mul_ok(tr->K, tr->P, &nb) ? dpc__malloc_array(nb, sizeof(double)) : NULL;
    if (!c->X || !c->y || !c->losses || !c->norms || (dpc__dist_on(&tr->dist) && !c->bufs))
        return DPC__NOMEM(err, "thread buffers");
    return make_noise(tr, c, err);
}

static dpc_status check_shapes(const dpc_model *model, const dpc_dataset *train,
                               const dpc_dataset *test, dpc_error *err)
{
    const dpc_model_config *mc = dpc_model_get_config(model);
    if (mc->n_in != train->d)
        return dpc_error_param(err, DPC_E_INVALID, "model",
                               "expects %zu features, the data has %zu", mc->n_in, train->d);
    if (test && test->d != train->d)
        return dpc_error_param(err, DPC_E_INVALID, "test",
                               "%zu features, the training data has %zu", test->d, train->d);
    if ((mc->n_classes >= 2) != (train->n_classes >= 2) ||
        (mc->n_classes >= 2 && mc->n_classes != train->n_classes))
        return dpc_error_param(err, DPC_E_INVALID, "model",
                               "%zu classes, the data has %zu (0 = regression)", mc->n_classes,
                               train->n_classes);
    return DPC_OK;
}

/* Float32 slabs (precision float32), the initial parameters (rounded to float then), and in one
 * process the batch state for a realized batch up to the expected size plus six standard
 * deviations (Poisson sampling; grown when a larger batch comes, ensure_batch). */
static dpc_status init_state(dpc_trainer *tr, dpc_error *err)
{
    size_t P = tr->P;
    if (tr->cfg.precision == DPC_PRECISION_FLOAT32) {
        tr->params32 = dpc__calloc(P, sizeof(float));
        tr->velocity32 = dpc__calloc(P, sizeof(float));
        tr->gsum32 = dpc__calloc(P, sizeof(float));
        if (!tr->params32 || !tr->velocity32 || !tr->gsum32)
            return DPC__NOMEM(err, "float32 slabs");
    }
    dpc_status st = dpc_model_init(tr->model, tr->params, &tr->rng, 0, err);
    if (st) return st;
    dpc__train_sync_f32(tr);
    if (dpc__dist_on(&tr->dist)) return DPC_OK;
    double eb = tr->sdesc.expected_batch;
    return dpc__train_batch_resize(tr, (size_t)(eb + 6.0 * sqrt(eb) + 1.0) + tr->cfg.chunk, err);
}

/* Slabs, threads and noise generators of this rank (the sampler and mechanism exist). */
static dpc_status make_slabs(dpc_trainer *tr, dpc_error *err)
{
    size_t P = tr->P, S = tr->s1 - tr->s0;
    tr->params = dpc__calloc(P, sizeof(double));
    tr->velocity = dpc__calloc(S, sizeof(double));
    tr->gsum = dpc__calloc(P, sizeof(double));
    tr->noise = dpc__calloc(S, sizeof(double));
    tr->idx_cap = dpc_sampler_max_batch(tr->sampler);
    tr->idx = dpc__calloc(tr->idx_cap, sizeof(size_t));
    tr->max_chunks = (tr->idx_cap + tr->cfg.chunk - 1) / tr->cfg.chunk;
    tr->chunk_loss = dpc__calloc(tr->max_chunks, sizeof(double));
    tr->chunk_nclip = dpc__calloc(tr->max_chunks, sizeof(size_t));
    tr->tele_list = dpc__calloc(tr->max_chunks, sizeof(size_t));
    tr->tele_msg = dpc__calloc(1 + 2 * tr->max_chunks, sizeof(double));
    tr->tc = calloc(tr->T, sizeof *tr->tc);
    if (tr->cfg.canaries) tr->canary_hits = dpc__calloc(tr->idx_cap, sizeof(size_t));
    if (!tr->params || !tr->velocity || !tr->gsum || !tr->noise || !tr->idx || !tr->chunk_loss ||
        !tr->chunk_nclip || !tr->tele_list || !tr->tele_msg || !tr->tc ||
        (tr->cfg.canaries && !tr->canary_hits))
        return DPC__NOMEM(err, "trainer slabs");
    dpc_status st = init_state(tr, err);
    if (st) return st;
    tr->C = round_chunks(tr);
    tr->K = (tr->C + tr->T - 1) / tr->T;
    size_t state = 0;
    for (size_t i = 0; i < tr->T; i++) {
        if ((st = make_thread(tr, i, err))) return st;
        const thread_ctx *c = &tr->tc[i];
        if (c->noise)
            state += dpc_mech_state_floats(tr->mech, dpc_noise_get_form(c->noise)) *
                     (c->p1 - c->p0) * sizeof(double);
    }
    tr->dist.state_bytes[tr->dist.rank] = state;
    if (!dpc__pool_new(&tr->pool, tr->T))
        return dpc_error_param(err, DPC_E_NOMEM, "threads", "cannot start %zu threads", tr->T);
    return DPC_OK;
}

/* Everything this rank builds on its own; *out is set as soon as the trainer exists. */
static dpc_status build(dpc_trainer **out, const dpc_model *model, const dpc_dataset *train,
                        const dpc_dataset *test, const dpc_train_config *cfg, const dpc_rng *rng,
                        dpc_progress progress, dpc_error *err)
{
    if (!model) return dpc_error_param(err, DPC_E_INVALID, "model", "NULL");
    dpc_status st = dpc_rng_check(rng, err); /* a never-seeded key makes public noise */
    if (st) return st;
    dpc_train_config rc;
    st = dpc_train_config_resolve(cfg, train, &rc, err);
    if (st || (st = check_shapes(model, train, test, err))) return st;
    dpc_trainer *tr = calloc(1, sizeof *tr);
    if (!tr) return DPC__NOMEM(err, "trainer");
    *out = tr;
    tr->cfg = rc;
    tr->progress = progress;
    tr->delta_derived = cfg->delta == 0.0;
    tr->model = model;
    tr->train = train;
    tr->test = test;
    tr->rng = *rng;
    /* checkpoints and ranks compare the content (a shard's: the whole set's, in setup) */
    tr->train_hash = train->shard_total ? 0 : dpc_dataset_hash(train);
    tr->P = dpc_model_num_params(model);
    tr->D = train->d;
    tr->T = rc.threads;
    tr->noise_stream = dpc_rng_stream_derive(rng, DPC_STREAM_ID(DPC_STREAM_NOISE, 0));
    if ((st = dpc_isa_resolve(rc.isa, &tr->isa, err))) return st;
    if ((st = dpc__dist_init(&tr->dist, rc.transport, tr->P, tr->T, err))) return st;
    if ((st = dpc_model_precision_check(model, rc.precision, err))) return st;
    if (train->shard_total && !dpc__dist_on(&tr->dist))
        return dpc_error_param(err, DPC_E_INVALID, "train", "rows %zu..%zu of %zu: a shard of a "
                               "training set trains only with the ranks that hold the others "
                               "(a transport)", train->shard_first,
                               train->shard_first + train->n - 1, train->shard_total);
    if (rc.precision == DPC_PRECISION_FLOAT32 && dpc__dist_on(&tr->dist))
        return dpc_error_param(err, DPC_E_UNSUPPORTED, "precision",
                               "float32 runs in one process (no transport)");
    tr->s0 = tr->dist.bound[tr->dist.rank];
    tr->s1 = tr->dist.bound[tr->dist.rank + 1];
    /* sampler: n = epochs * floor(N / B) steps (resolved into mech.steps) */
    tr->n_steps = rc.mech.steps;
    dpc_sampler_config sc = {rc.sampler, dpc_dataset_rows(train), rc.batch, tr->n_steps,
                             rc.groups};
    if ((st = dpc_sampler_new(&tr->sampler, &sc, rng, err))) return st;
    dpc_sampler_describe(tr->sampler, &tr->sdesc);
    if ((st = dpc__train_mech(tr, err))) return st;
    /* one process calibrates before allocating; with ranks, rank 0 does it in dpc__dist_setup */
    if (!dpc__dist_on(&tr->dist) && (st = dpc__train_privacy(tr, err))) return st;
    return make_slabs(tr, err);
}

dpc_status dpc_trainer_new(dpc_trainer **out, const dpc_model *model, const dpc_dataset *train,
                           const dpc_dataset *test, const dpc_train_config *cfg,
                           const dpc_rng *rng, dpc_error *err)
{
    return dpc_trainer_new_progress(out, model, train, test, cfg, rng, (dpc_progress){NULL, NULL},
                                    err);
}

dpc_status dpc_trainer_new_progress(dpc_trainer **out, const dpc_model *model,
                                    const dpc_dataset *train, const dpc_dataset *test,
                                    const dpc_train_config *cfg, const dpc_rng *rng,
                                    dpc_progress progress, dpc_error *err)
{
    if (!out) return dpc_error_param(err, DPC_E_INVALID, "out", "NULL");
    *out = NULL;
    dpc_trainer *tr = NULL;
    dpc_status st = build(&tr, model, train, test, cfg, rng, progress, err);
    const dpc_transport *tp = cfg ? cfg->transport : NULL;
    if (tp && tp->size > 1 && tp->rank < tp->size) {
        /* every rank learns whether every rank is ready before any trainer message */
        st = dpc_transport_agree(tp, st, err);
        if (!st) st = dpc__dist_setup(tr, err);
    }
    if (st) {
        dpc_trainer_free(tr);
        return st;
    }
    *out = tr;
    return DPC_OK;
}

/* ---- one step ---------------------------------------------------------------------------- */

/* ---- one process: the batch in two phases ---------------------------------------------------- */

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

/* Gathers chunk `chunk`'s rows into c->X (float32: rounded to float) and c->y; returns M. */
static size_t gather(dpc_trainer *tr, thread_ctx *c, size_t chunk)
{
    size_t ch = tr->cfg.chunk, D = tr->D, i0 = chunk * ch;
    size_t m = tr->count - i0 < ch ? tr->count - i0 : ch;
    for (size_t j = 0; j < m; j++) {
        double yj, yn;
        const double *src = dpc__train_row(tr, i0 + j, &yj);
        if (j + 1 < m) { /* rows are scattered: ask for the next one while this one is copied */
            const double *next = dpc__train_row(tr, i0 + j + 1, &yn);
            for (size_t k = 0; k < D; k += 8) __builtin_prefetch(next + k, 0, 3);
        }
        if (tr->params32) {
            float *X = (float *)c->X + j * D;
            for (size_t k = 0; k < D; k++) X[k] = (float)src[k];
        } else {
            memcpy(c->X + j * D, src, D * sizeof(double));
        }
        c->y[j] = yj;
    }
    return m;
}

/* The failure of a chunk of batch positions [i0, i0 + m) named by its training record: the
 * model's message says "example i" of the chunk, so the chunk's rows are tried one by one on the
 * naive path (the failure path only: at most a chunk of single-row calls) and the first that
 * fails is named with its record and batch position. Float32 runs, or no row failing alone, name
 * the chunk's positions instead (never the chunk's first record as if it were at fault). */
static void name_failed_record(const dpc_trainer *tr, thread_ctx *c, size_t i0, size_t m)
{
    double *g = tr->params32 ? NULL : dpc__malloc_array(tr->P, sizeof *g);
    for (size_t j = 0; g && j < m; j++) {
        dpc_error e = {0};
        size_t r = tr->idx[i0 + j];
        double yr;
        const double *xr = dpc__train_row(tr, i0 + j, &yr);
        memset(g, 0, tr->P * sizeof *g);
        if (dpc_model_clipped_sum_naive(tr->model, tr->params, xr, &yr, 1, tr->cfg.clip, g, NULL,
                                        NULL, &e)) {
            const char *why = strncmp(e.msg, "example 0: ", 11) ? e.msg : e.msg + 11;
            dpc_error_set(&c->err, c->st, "training record %zu (batch position %zu): %s", r,
                          i0 + j, why);
            free(g);
            return;
        }
    }
    free(g);
    dpc_error_prefix(&c->err, "batch positions %zu-%zu: ", i0, i0 + m - 1);
}

/* Loss sum and clipped count of chunk `chunk` for the step's telemetry. */
static void chunk_telemetry(dpc_trainer *tr, const thread_ctx *c, size_t chunk, size_t m)
{
    double ls = 0.0;
    size_t nclip = 0;
    for (size_t j = 0; j < m; j++) {
        ls += c->losses[j];
        nclip += c->norms[j] > tr->cfg.clip;
    }
    tr->chunk_loss[chunk] = ls;
    tr->chunk_nclip[chunk] = nclip;
}

/* Phase 1: thread tid computes chunks tid, tid + T, ... of the batch (each chunk's per-example
 * results do not depend on where it runs). */
static void phase_batch(void *a, size_t tid, size_t T)
{
    dpc_trainer *tr = a;
    thread_ctx *c = &tr->tc[tid];
    size_t ch = tr->cfg.chunk, nchunks = (tr->count + ch - 1) / ch;
    for (size_t chunk = tid; chunk < nchunks && !c->st; chunk += T) {
        size_t m = gather(tr, c, chunk), i0 = chunk * ch;
        if (tr->params32)
            c->st = dpc_model_batch_grads_f32(tr->model, tr->params32, (const float *)c->X,
                                              c->y, m, i0, tr->cfg.clip, tr->batch, c->ws,
                                              c->losses, c->norms, &c->err);
        else
            c->st = dpc_model_batch_grads(tr->model, tr->params, c->X, c->y, m, i0,
                                          tr->cfg.clip, tr->batch, c->ws, c->losses, c->norms,
                                          &c->err);
        if (c->st) {
            name_failed_record(tr, c, i0, m);
            break;
        }
        chunk_telemetry(tr, c, chunk, m);
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

/* ---- ranks: rounds of chunk sums -------------------------------------------------------------- */

/* Phase 1: thread tid computes its chunks c0 + tid*K .. (at most K) into its own buffers. */
static void phase_chunks(void *a, size_t tid, size_t T)
{
    dpc__round *r = a;
    dpc_trainer *tr = r->tr;
    thread_ctx *c = &tr->tc[tid];
    (void)T;
    size_t K = tr->K, ch = tr->cfg.chunk, P = tr->P;
    for (size_t k = 0; k < K; k++) {
        size_t chunk = r->c0 + tid * K + k;
        if (chunk >= r->c1 || c->st) break;
        size_t i0 = chunk * ch, m = gather(tr, c, chunk);
        double *S = c->bufs + k * P;
        memset(S, 0, P * sizeof *S);
        c->st = dpc_model_clipped_sum(tr->model, tr->params, c->X, c->y, m, tr->cfg.clip, S,
                                      c->losses, c->norms, c->ws, &c->err);
        if (c->st) {
            name_failed_record(tr, c, i0, m);
            break;
        }
        chunk_telemetry(tr, c, chunk, m);
    }
}

/* The chunk sum S_c of the round's chunk c (held by the thread that computed it). */
static const double *chunk_sum(const dpc_trainer *tr, const dpc__round *r, size_t chunk)
{
    size_t owner = (chunk - r->c0) / tr->K, k = (chunk - r->c0) % tr->K;
    return tr->tc[owner].bufs + k * tr->P;
}

typedef struct add_arg {
    const dpc__round *r;
    size_t q0, q1;
    const double *src;
} add_arg;

static void phase_add(void *a, size_t tid, size_t T)
{
    const add_arg *x = a;
    dpc_trainer *tr = x->r->tr;
    size_t n = x->q1 - x->q0, b = x->q0 + n * tid / T, e = x->q0 + n * (tid + 1) / T;
    for (size_t q = b; q < e; q++) {
        double v = x->src[q - x->q0];
        for (size_t chunk = x->r->c0; chunk < x->r->c1; chunk++)
            v = v + chunk_sum(tr, x->r, chunk)[q];
        tr->gsum[q] = v;
    }
}

void dpc__train_add_chunks(dpc_trainer *tr, const dpc__round *r, size_t q0, size_t q1,
                           const double *src)
{
    add_arg x = {r, q0, q1, src};
    if (tr->T == 1 || q1 - q0 < 4096) phase_add(&x, 0, 1);
    else dpc__pool_run(tr->pool, phase_add, &x);
}

void dpc__train_sync_f32(dpc_trainer *tr)
{
    if (!tr->params32) return; /* (float32 runs in one process: shard = the whole slab) */
    for (size_t p = 0; p < tr->P; p++) {
        tr->params32[p] = (float)tr->params[p];
        tr->velocity32[p] = (float)tr->velocity[p];
        tr->params[p] = tr->params32[p]; /* the double views hold exactly the float values */
        tr->velocity[p] = tr->velocity32[p];
    }
}

/* float32 precision: the same update in float on [p0, p1): the release
 * (dpc_noise_release_f32: the noise scaled in double, rounded to float, added to the float sum,
 * divided) in place of the float sum, then the optimizer; then the double views. */
static dpc_status update_f32(dpc_trainer *tr, size_t p0, size_t p1, double lr, dpc_error *err)
{
    const dpc_train_config *cfg = &tr->cfg;
    float inv_b = (float)(1.0 / tr->sdesc.expected_batch), lr32 = (float)lr;
    float mom = (float)cfg->momentum, wd = (float)cfg->weight_decay;
    float *th = tr->params32, *v = tr->velocity32, *r = tr->gsum32;
    dpc_status st = dpc_noise_release_f32(tr->gsum32 + p0, tr->noise + p0, p1 - p0,
                                          tr->noise_scale, inv_b, r + p0, err);
    if (st) return st;
    for (size_t p = p0; p < p1; p++) {
        float h = r[p] + wd * th[p];
        v[p] = mom * v[p] + h;
        th[p] = th[p] - lr32 * v[p];
        tr->params[p] = th[p];
        tr->velocity[p] = v[p];
    }
    return DPC_OK;
}

/* Phase 3: noise for this slice, then the optimizer update (shard arrays start at s0). */
static void phase_update(void *a, size_t tid, size_t T)
{
    dpc_trainer *tr = a;
    thread_ctx *c = &tr->tc[tid];
    (void)T;
    if (c->p1 <= c->p0) return;
    size_t s0 = tr->s0;
    double t0 = dpc__now();
    c->st = dpc_noise_next(c->noise, tr->noise + (c->p0 - s0), &c->err);
    double t1 = dpc__now();
    c->noise_s = t1 - t0;
    c->update_s = 0;
    if (c->st) return;
    const dpc_train_config *cfg = &tr->cfg;
    double inv_b = 1.0 / tr->sdesc.expected_batch;
    double lr = dpc__train_lr(cfg, tr->t, tr->n_steps), mom = cfg->momentum,
           wd = cfg->weight_decay;
    if (tr->params32) {
        c->st = update_f32(tr, c->p0, c->p1, lr, &c->err);
    } else {
        /* the release (dpc_noise_release) in place of the slice's noise, then heavy-ball SGD */
        double *th = tr->params, *v = tr->velocity, *r = tr->noise + (c->p0 - s0);
        c->st = dpc_noise_release(tr->gsum + c->p0, r, c->p1 - c->p0, tr->noise_scale, inv_b, r,
                                  &c->err);
        for (size_t p = c->p0; p < c->p1 && !c->st; p++) {
            double h = r[p - c->p0] + wd * th[p];
            v[p - s0] = mom * v[p - s0] + h;
            th[p] = th[p] - lr * v[p - s0];
        }
    }
    if (c->st && !strcmp(c->err.field, "clipped_sum")) /* a non-finite sum refused: where */
        (void)dpc_error_prefix(&c->err, "trainer: step %zu, parameters %zu..%zu: ", tr->t, c->p0,
                               c->p1 - 1);
    c->update_s = dpc__now() - t1;
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

/* The clipped sum of the batch into gsum (with ranks: this rank's shard of it). Rounds of
 * ranks x C chunks; this rank computes a contiguous share of each round. */
static dpc_status clipped_sum(dpc_trainer *tr, size_t nchunks, dpc_error *err)
{
    dpc__dist *d = &tr->dist;
    if (!dpc__dist_on(d)) { /* one process: the batch in two phases */
        dpc_status st = ensure_batch(tr, tr->count, err);
        if (st) return st;
        dpc__pool_run(tr->pool, phase_batch, tr);
        if ((st = collect(tr, err))) return st;
        dpc__pool_run(tr->pool, phase_sum, tr);
        return DPC_OK;
    }
    size_t per_round = tr->C * d->size;
    dpc__round r = {tr, 0, 0};
    dpc_status st = DPC_OK;
    for (size_t g0 = 0, j = 0; g0 < nchunks; g0 += per_round, j++) {
        size_t g1 = g0 + per_round < nchunks ? g0 + per_round : nchunks, a, b;
        dpc__dist_share(d, g1 - g0, &a, &b);
        r.c0 = g0 + a;
        r.c1 = g0 + b;
        if ((st = dpc__dist_fetch_rows(tr, g0, g1, err))) return st; /* sharded data */
        dpc__pool_run(tr->pool, phase_chunks, &r);
        st = collect(tr, err);
        if ((st = dpc__dist_agree(d, st, err)) || (st = dpc__dist_chain(tr, j, &r, err)))
            return st;
    }
    return nchunks ? dpc__dist_scatter(tr, err) : DPC_OK;
}

dpc_status dpc_trainer_step(dpc_trainer *tr, dpc_step_info *info, dpc_error *err)
{
    if (tr->t >= tr->n_steps)
        return dpc_error_set(err, DPC_E_RANGE, "trainer: all %zu steps are done", tr->n_steps);
    uint64_t sent0 = tr->dist.sent;
    double t0 = dpc__now();
    dpc_status st = dpc_sampler_batch(tr->sampler, tr->t, tr->idx, &tr->count, err);
    if (st) return st;
    double t1 = dpc__now();
    dpc__train_canary_filter(tr);
    if (tr->params32)
        memset(tr->gsum32, 0, tr->P * sizeof(float));
    else
        memset(tr->gsum, 0, tr->P * sizeof(double));
    size_t ch = tr->cfg.chunk, nchunks = (tr->count + ch - 1) / ch;
    if ((st = clipped_sum(tr, nchunks, err))) return st;
    double t2 = dpc__now();
    dpc__train_canary_add(tr); /* with ranks: lands in the shard of the rank that owns it */
    double lr = dpc__train_lr(&tr->cfg, tr->t, tr->n_steps);
    double t3 = dpc__now();
    dpc__pool_run(tr->pool, phase_update, tr);
    st = collect(tr, err);
    if ((st = dpc__dist_agree(&tr->dist, st, err)) || (st = dpc__dist_allgather(tr, err)))
        return st;
    double t4 = dpc__now();
    for (size_t p = 0; p < tr->P; p++)
        if (!isfinite(tr->params[p]))
            return dpc_error_set(err, DPC_E_NUMERIC,
                                 "trainer: parameter %zu became %g at step %zu (is the learning "
                                 "rate lr too large?)",
                                 p, tr->params[p], tr->t);
    double ls = 0.0;
    size_t nclip = 0;
    if (dpc__dist_on(&tr->dist)) {
        if ((st = dpc__dist_telemetry(tr, nchunks, sent0, &ls, &nclip, err))) return st;
    } else {
        for (size_t c = 0; c < nchunks; c++) {
            ls += tr->chunk_loss[c];
            nclip += tr->chunk_nclip[c];
        }
    }
    if (info) {
        info->step = tr->t;
        info->batch = tr->count;
        info->loss = tr->count ? ls / (double)tr->count : NAN;
        info->clip_fraction = tr->count ? (double)nclip / (double)tr->count : 0.0;
        info->lr = lr;
    }
    tr->t++;
    /* the noise-and-update phase split by thread 0's shares (equal slices per thread) */
    const thread_ctx *c0 = &tr->tc[0];
    double busy = c0->noise_s + c0->update_s, noise_share = busy > 0 ? c0->noise_s / busy : 0;
    dpc_train_times *tm = &tr->times;
    tm->sample_s += t1 - t0;
    tm->gradient_s += t2 - t1;
    tm->noise_s += (t4 - t3) * noise_share;
    tm->update_s += (t4 - t3) * (1 - noise_share);
    tm->other_s += (t3 - t2) + (dpc__now() - t4);
    tm->steps++;
    return DPC_OK;
}

/* ---- evaluation -------------------------------------------------------------------------- */

typedef struct eval_arg {
    dpc_trainer *tr;
    const dpc_dataset *ds;
    size_t b0, b1;   /* this rank's blocks */
    double *loss;    /* (nblocks) loss sums */
    double *correct; /* (nblocks) correct counts */
} eval_arg;

static void phase_eval(void *a, size_t tid, size_t T)
{
    eval_arg *e = a;
    thread_ctx *c = &e->tr->tc[tid];
    for (size_t b = e->b0 + tid; b < e->b1 && !c->st; b += T) {
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
    double t0 = dpc__now();
    if (!ds || ds->n == 0) return dpc_error_param(err, DPC_E_INVALID, "ds", "empty data set");
    if (ds->d != tr->D)
        return dpc_error_param(err, DPC_E_INVALID, "ds", "%zu features, the model takes %zu", ds->d,
                               tr->D);
    if (ds->shard_total)
        return dpc_error_param(err, DPC_E_INVALID, "ds", "a shard (rows %zu.. of %zu): evaluation "
                               "takes a whole set on every rank", ds->shard_first,
                               ds->shard_total);
    size_t nblocks = (ds->n + DPC__EVAL_BLOCK - 1) / DPC__EVAL_BLOCK;
    eval_arg e = {tr, ds, 0, nblocks, NULL, NULL};
    dpc__dist_share(&tr->dist, nblocks, &e.b0, &e.b1);
    e.loss = dpc__calloc(nblocks, sizeof(double));
    e.correct = dpc__calloc(nblocks, sizeof(double));
    dpc_status st = DPC_OK;
    if (!e.loss || !e.correct) st = DPC__NOMEM(err, "evaluation");
    else dpc__pool_run(tr->pool, phase_eval, &e);
    if (!st) st = collect(tr, err);
    double ls = 0.0, cor = 0.0;
    if (dpc__dist_on(&tr->dist)) {
        if (!(st = dpc__dist_agree(&tr->dist, st, err)))
            st = dpc__dist_eval_sum(tr, nblocks, e.loss, e.correct, &ls, &cor, err);
    } else if (!st) {
        for (size_t b = 0; b < nblocks; b++) {
            ls += e.loss[b];
            cor += e.correct[b];
        }
    }
    if (!st) {
        *loss = ls / (double)ds->n;
        *accuracy = cor / (double)ds->n;
    }
    free(e.loss);
    free(e.correct);
    tr->times.evaluate_s += dpc__now() - t0;
    tr->times.evaluations++;
    return st;
}

/* ---- accessors ---------------------------------------------------------------------------- */

size_t dpc_trainer_steps_done(const dpc_trainer *tr) { return tr->t; }
void dpc_trainer_times(const dpc_trainer *tr, dpc_train_times *out) { *out = tr->times; }
dpc_isa dpc_trainer_isa(const dpc_trainer *tr) { return tr->isa; }

size_t dpc_trainer_bytes(const dpc_trainer *tr)
{
    size_t S = tr->s1 - tr->s0, ch = tr->cfg.chunk;
    size_t b = sizeof *tr + 2 * (tr->P + S) * sizeof(double) + tr->idx_cap * sizeof(size_t) +
               tr->max_chunks * (sizeof(double) + sizeof(size_t)) + tr->T * sizeof *tr->tc +
               (tr->params32 ? 3 * tr->P * sizeof(float) : 0) + dpc_model_batch_bytes(tr->batch);
    for (size_t i = 0; i < tr->T; i++) {
        const thread_ctx *c = &tr->tc[i];
        b += dpc_model_ws_bytes(c->ws) + dpc_noise_bytes(c->noise) +
             (ch * tr->D + 3 * ch) * sizeof(double) + (c->bufs ? tr->K * tr->P * sizeof(double) : 0);
    }
    if (tr->rows) b += 3 * tr->rows_cap * (tr->D + 1) * sizeof(double);
    return b;
}
size_t dpc_trainer_steps_total(const dpc_trainer *tr) { return tr->n_steps; }
const dpc_ledger *dpc_trainer_ledger(const dpc_trainer *tr) { return &tr->ledger; }
const dpc_train_config *dpc_trainer_config(const dpc_trainer *tr) { return &tr->cfg; }
const double *dpc_trainer_params(const dpc_trainer *tr) { return tr->params; }
const dpc_sampler *dpc_trainer_sampler(const dpc_trainer *tr) { return tr->sampler; }

void dpc_trainer_dist_info(const dpc_trainer *tr, dpc_dist_info *out)
{
    const dpc__dist *d = &tr->dist;
    out->ranks = d->size;
    out->rank = d->rank;
    out->threads = d->threads;
    out->shard_begin = d->bound;
    out->noise_state_bytes = d->state_bytes;
    out->bytes_per_step = d->steps ? (double)d->step_bytes / (double)d->steps : 0.0;
    out->bytes_sent = d->sent;
}

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
