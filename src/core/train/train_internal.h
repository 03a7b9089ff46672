/* train_internal.h — the trainer object shared by the files of src/train (not public). */
#ifndef DPCORR_SRC_TRAIN_INTERNAL_H
#define DPCORR_SRC_TRAIN_INTERNAL_H

#include "dpcorr/train.h"
#include "train/pool.h"

#define DPC__EVAL_BLOCK 256      /* examples per evaluation block */

typedef struct thread_ctx {
    dpc_model_ws *ws;
    double *X;            /* (chunk, D) gathered rows (float32 precision: (chunk, D) floats) */
    double *y;            /* (chunk) */
    double *losses;       /* (chunk) */
    double *norms;        /* (chunk) */
    dpc_noise *noise;     /* over coordinates [p0, p1) */
    size_t p0, p1;        /* this thread's parameter slice */
    dpc_status st;
    dpc_error err;
} thread_ctx;

struct dpc_trainer {
    dpc_train_config cfg;
    const dpc_model *model;
    const dpc_dataset *train, *test;
    dpc_rng rng;
    size_t P, D;
    size_t n_steps, t;
    dpc_sampler *sampler;
    dpc_sampler_desc sdesc;
    dpc_mech *mech;
    dpc_ledger ledger;
    double noise_scale; /* sigma * sens * clip: std of each entry of Z in gradient-sum units */
    /* slabs, each (P) */
    double *params, *velocity, *gsum, *noise;
    /* float32 precision: the optimizer's float state (P each); params and velocity above then
     * hold the same values widened to double, refreshed after every step */
    float *params32, *velocity32, *gsum32;
    /* the current batch */
    size_t *idx, idx_cap, count;
    dpc_model_batch *batch; /* the batch's per-example state (two-phase clipped sum) */
    double *chunk_loss;   /* (max chunks) per-chunk loss sums */
    size_t *chunk_nclip;  /* (max chunks) per-chunk clipped counts */
    size_t max_chunks;
    /* threads */
    dpc__pool *pool;
    size_t T;
    thread_ctx *tc;
    dpc_rng_stream noise_stream;
    dpc_isa isa; /* resolved cfg.isa */
};

/* privacy.c: builds the mechanism for n steps, calibrates sigma, fills the ledger. */
dpc_status dpc__train_privacy(dpc_trainer *tr, dpc_error *err);

/* trainer.c: float32 precision: the float state from the double views (after init/resume). */
void dpc__train_sync_f32(dpc_trainer *tr);

/* trainer.c: replaces the batch state by one for batches of up to cap examples (clamped to
 * [chunk, the sampler's largest batch]); the step grows it when a batch is larger. */
dpc_status dpc__train_batch_resize(dpc_trainer *tr, size_t cap, dpc_error *err);

/* train_config.c */
double dpc__train_lr(const dpc_train_config *c, size_t t, size_t n);

#endif
