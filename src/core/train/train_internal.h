/* train_internal.h — the trainer object shared by the files of src/train (not public). */
#ifndef DPCORR_SRC_TRAIN_INTERNAL_H
#define DPCORR_SRC_TRAIN_INTERNAL_H

#include "dpcorr/strategy.h"
#include "dpcorr/train.h"
#include "train/dist.h"
#include "train/pool.h"

#include <stdio.h>

#define DPC__CHUNKS_PER_THREAD 4 /* chunk buffers per thread per round (one process) */
#define DPC__EVAL_BLOCK 256      /* examples per evaluation block */

typedef struct thread_ctx {
    dpc_model_ws *ws;
    double *X;            /* (chunk, D) gathered rows (float32 precision: (chunk, D) floats) */
    double *y;            /* (chunk) */
    double *losses;       /* (chunk) */
    double *norms;        /* (chunk) */
    double *bufs;         /* (K, P) chunk sums S_c (ranks > 1 only; one process sums the batch
                             in two phases, dpc_model_batch_*) */
    dpc_noise *noise;     /* over coordinates [p0, p1) */
    size_t p0, p1;        /* this thread's parameter slice (within the rank's shard) */
    double noise_s, update_s; /* this thread's time in dpc_noise_next and in the update, last step */
    dpc_status st;
    dpc_error err;
} thread_ctx;

struct dpc_trainer {
    dpc_train_config cfg;
    dpc_progress progress; /* the calibration's reports (dpc_trainer_new_progress) */
    const dpc_model *model;
    const dpc_dataset *train, *test;
    dpc_rng rng;
    size_t P, D;
    size_t n_steps, t;
    dpc_sampler *sampler;
    dpc_sampler_desc sdesc;
    dpc_mech *mech;
    dpc_strategy *blt;  /* the default BLT (dpc_train_default_blt); cfg.mech's theta/omega */
    dpc_ledger ledger;
    int delta_derived; /* cfg.delta was 0: dpc_account_default_delta(N) (recorded in the ledger) */
    double noise_scale; /* sigma * sens * clip: std of each entry of Z in gradient-sum units */
    /* slabs: params, gsum (P); velocity, noise (s1 - s0), indexed by coordinate - s0 */
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
    size_t *tele_list;    /* (max chunks) chunk indices of one rank (distributed telemetry) */
    double *tele_msg;     /* (1 + 2 max chunks) a telemetry message */
    /* threads */
    size_t *canary_hits, ncanary_hits; /* (idx_cap) gradient canaries drawn this step */
    dpc__pool *pool;
    size_t T;
    size_t C;             /* chunks of this rank per round (the same on every rank) */
    size_t K;             /* chunk buffers per thread: ceil(C / T) */
    thread_ctx *tc;
    dpc_rng_stream noise_stream;
    dpc_isa isa; /* resolved cfg.isa */
    /* ranks: this one owns coordinates [s0, s1) (one process: [0, P)) */
    dpc__dist dist;
    size_t s0, s1;
    /* a training set held in shards (dist_data.c): rank s holds rows [row_bound[s],
     * row_bound[s + 1]); NULL when every rank holds every row. rows: this round's share of the
     * batch (rows_cap rows of D features and the target), position rows_base first; rows_out,
     * rows_in: the rows sent to and received from one rank */
    size_t *row_bound;
    double *rows, *rows_out, *rows_in;
    size_t rows_base, rows_cap;
    /* content hash of the training data (dpc_dataset_hash); the test set does not enter the
     * values of a run and may change between a save and a resume */
    uint64_t train_hash;
    /* the run's history (dpc_trainer_record), saved in checkpoints */
    dpc_train_record *hist;
    size_t nhist, hist_cap;
    dpc_train_times times; /* dpc_trainer_times */
};

/* ck_items.c: the items of a run's configuration that a checkpoint records (everything that
 * determines the values of the run; not threads, noise form or ranks), for the fingerprint and
 * for naming what changed when a resume is refused. Fixed-size records (the file format). */
#define CK_FIELD_LEN 32 /* the library's name of the parameter ("lr", "mech.nu", "data") */
#define CK_WHAT_LEN 48  /* what it is, for messages ("training data content") */
#define CK_STR_LEN 128
#define CK_MAX_ITEMS 64
#define CK_ITEM_BYTES (CK_FIELD_LEN + CK_WHAT_LEN + 4 + 8 + CK_STR_LEN)
typedef enum { CK_NUM = 1, CK_COUNT = 2, CK_STR = 3, CK_HASH = 4 } ck_kind;
typedef struct ck_item {
    char field[CK_FIELD_LEN], what[CK_WHAT_LEN];
    uint32_t kind;
    double num;      /* CK_NUM */
    uint64_t count;  /* CK_COUNT, CK_HASH */
    char str[CK_STR_LEN]; /* CK_STR (longer strings are cut, and their hash added) */
} ck_item;
/* A list being built (at most CK_MAX_ITEMS; overflow set when an item did not fit). */
typedef struct dpc__ck_items {
    ck_item *it;
    size_t n;
    int overflow;
} dpc__ck_items;
void dpc__ck_num(dpc__ck_items *s, const char *field, const char *what, double v);
void dpc__ck_count(dpc__ck_items *s, const char *field, const char *what, uint64_t v);
void dpc__ck_str(dpc__ck_items *s, const char *field, const char *what, const char *v);
void dpc__ck_hash(dpc__ck_items *s, const char *field, const char *what, const void *p,
                  size_t bytes);
/* The generator's items (mode, seed, key, secure key), last in every list. */
void dpc__ck_rng_items(dpc__ck_items *s, const dpc_rng *rng);
/* The run's items (at most CK_MAX_ITEMS); returns their count. */
size_t dpc__train_items(const dpc_trainer *tr, ck_item *out);
/* FNV-1a 64 of the items' serialized bytes. */
uint64_t dpc__train_items_hash(const ck_item *it, size_t n);
/* The fingerprint of checkpoint version 2 (path, shape and configuration; no data content). */
uint64_t dpc__train_fingerprint_v2(const dpc_trainer *tr);
/* Serialize / parse one item (CK_ITEM_BYTES); parse returns 0 on a malformed item. */
void dpc__ck_item_pack(const ck_item *it, unsigned char *b);
int dpc__ck_item_unpack(const unsigned char *b, ck_item *it);
/* DPC_E_STATE naming the first item that differs between the checkpoint's and this run's
 * ("lr: the checkpoint ... has 0.1, this run has 0.2"), or DPC_OK when none does. */
dpc_status dpc__ck_items_diff(const ck_item *ck, size_t nck, const ck_item *run, size_t nrun,
                              const char *path, dpc_error *err);
/* DPC_E_STATE naming "sampler": the checkpoint at path drew its batches by sampler scheme
 * `was` (1 when it does not record one), this build by DPC_SAMPLER_SCHEME. */
dpc_status dpc__ck_scheme_refused(uint64_t was, const char *path, dpc_error *err);
/* 1 when the kind's batches depend on the sampler scheme (the Poisson kinds). */
int dpc__ck_scheme_matters(dpc_sampler_kind kind);

/* ck_file.c: the file layer shared by dpc_trainer_save/_resume (checkpoint.c) and the dpc_ckpt
 * container (ckpt.c). Header: "DPCCKPT\0" | u32 version | u32 byte-order mark | u64 fingerprint |
 * u64 step | u64 P | u32 key[2] | u64 seed | u32 rng mode | u32 secure key[8] | u32 nitems |
 * items; then the body of the trainer kind; then the FNV-1a 64 of everything before it. */
#define DPC__CK_MAGIC "DPCCKPT"
#define DPC__CK_VERSION 3u /* 2: the secure-mode ChaCha20 key; 3: configuration items, records */
#define DPC__CK_BOM 0x01020304u
#define DPC__CK_FNV0 0xcbf29ce484222325ull
typedef struct dpc__ck_fnv {
    uint64_t h;
} dpc__ck_fnv;
typedef struct dpc__ck_wbuf { /* a file being written, with the running checksum */
    FILE *f;
    dpc__ck_fnv h;
    int ok;
} dpc__ck_wbuf;
typedef struct dpc__ck_rbuf { /* a file being read, with the running checksum */
    FILE *f;
    dpc__ck_fnv h;
    const char *path;
    uint64_t pos, size; /* bytes read; the file's size */
    uint32_t ver;       /* the file's version (dpc__ck_read_header) */
    char why[DPC_ERROR_MSG_LEN]; /* f NULL: why ("<path>: cannot open: ..." or "<path>: is
                                    a FIFO ..., not a regular file") */
} dpc__ck_rbuf;
void dpc__ck_fnv_add(dpc__ck_fnv *f, const void *p, size_t n);
/* Appends n bytes (no-op after a failure or with w NULL: the ranks that do not write). */
void dpc__ck_wr(dpc__ck_wbuf *w, const void *p, size_t n);
void dpc__ck_write_header(dpc__ck_wbuf *w, uint64_t fp, uint64_t step, uint64_t P,
                          const dpc_rng *rng, const ck_item *it, size_t ni);
/* Removes "<path>.tmp.<pid>" of processes that no longer exist (best effort). */
void dpc__ck_clean_stale_tmp(const char *path);
/* "<path>.tmp.<pid>" (mode 0600) into tmp (len bytes), opened in w. */
dpc_status dpc__ck_open_tmp(const char *path, char *tmp, size_t len, dpc__ck_wbuf *w,
                            dpc_error *err);
/* Checksum, fsync, rename tmp over path (tmp removed on failure). */
dpc_status dpc__ck_commit_tmp(dpc__ck_wbuf *w, const char *tmp, const char *path, dpc_error *err);
dpc__ck_rbuf dpc__ck_rbuf_open(const char *path, int open_it);
dpc_status dpc__ck_rd(dpc__ck_rbuf *r, void *p, size_t n, const char *what, dpc_error *err);
/* The header up to the items (version 2 or 3; r->ver set). */
dpc_status dpc__ck_read_header(dpc__ck_rbuf *r, uint64_t *fp, uint64_t *step, uint64_t *P,
                               dpc_rng *rng, dpc_error *err);
dpc_status dpc__ck_read_items(dpc__ck_rbuf *r, ck_item *it, size_t *n, dpc_error *err);
/* The checksum of the whole file (its last 8 bytes), before parsing. */
dpc_status dpc__ck_verify_sum(const char *path, dpc_error *err);
/* At the end of the body: the checksum, then the end of the file. */
dpc_status dpc__ck_read_sum(dpc__ck_rbuf *r, dpc_error *err);
/* The trainer kind the items record (the "algorithm" item; "dp-ftrl" when absent: files of the
 * DP-FTRL trainer carry none). */
const char *dpc__ck_items_kind(const ck_item *it, size_t n);

/* A round of chunks: this rank computes chunks [c0, c1) of the batch. */
typedef struct dpc__round {
    dpc_trainer *tr;
    size_t c0, c1;
} dpc__round;

/* privacy.c: the mechanism for n steps; then sigma by calibration and the ledger. */
dpc_status dpc__train_mech(dpc_trainer *tr, dpc_error *err);
dpc_status dpc__train_privacy(dpc_trainer *tr, dpc_error *err);

/* canary.c: the canary hook of dpc_train_config.canaries (NULL: both are no-ops). filter
 * removes the canary slots the model must not see from the batch (excluded canaries, gradient
 * canaries) and records the drawn gradient canaries; add adds their gradients to gsum. */
void dpc__train_canary_filter(dpc_trainer *tr);
void dpc__train_canary_add(dpc_trainer *tr);

/* trainer.c: float32 precision: the float state from the double views (after init/resume). */
void dpc__train_sync_f32(dpc_trainer *tr);

/* trainer.c: replaces the batch state by one for batches of up to cap examples (clamped to
 * [chunk, the sampler's largest batch]); the step grows it when a batch is larger. */
dpc_status dpc__train_batch_resize(dpc_trainer *tr, size_t cap, dpc_error *err);

/* train_config.c */
double dpc__train_lr(const dpc_train_config *c, size_t t, size_t n);

/* A BLT mechanism without coefficients: the run's default BLT (dpc_train_default_blt). */
static inline int dpc__train_default_blt(const dpc_mech_params *p)
{
    return p->kind == DPC_MECH_BLT && !p->theta && !p->omega && p->nbuf == 0;
}

/* The minimum separation b of an example's participations under the resolved sampler (spe:
 * steps per epoch): what the default BSR bands and the default BLT are chosen for. */
size_t dpc__train_min_sep(const dpc_train_config *c, size_t spe);

/* ck_items.c: everything that determines the values of the run (the hash of its items). */
uint64_t dpc__train_fingerprint(const dpc_trainer *tr);
/* checkpoint.c: floats of exportable noise state per coordinate. */
size_t dpc__train_noise_per_coord(const dpc_trainer *tr);

/* trainer.c: gsum[q] = (((src[q - q0] + S_c0[q]) + S_c0+1[q]) + ...) for q in [q0, q1) over the
 * round's chunks, on the pool's threads (src may be gsum + q0). */
void dpc__train_add_chunks(dpc_trainer *tr, const dpc__round *r, size_t q0, size_t q1,
                           const double *src);

/* dist_train.c: the trainer's protocol (no-ops for one process). */
dpc_status dpc__dist_setup(dpc_trainer *tr, dpc_error *err);
dpc_status dpc__dist_chain(dpc_trainer *tr, size_t round, const dpc__round *r, dpc_error *err);
dpc_status dpc__dist_scatter(dpc_trainer *tr, dpc_error *err);
dpc_status dpc__dist_allgather(dpc_trainer *tr, dpc_error *err);
/* Chunk telemetry of the step to every rank (rank 0 sums in chunk order) and the bytes the step
 * moved (sent counter at the step's start: sent0). */
dpc_status dpc__dist_telemetry(dpc_trainer *tr, size_t nchunks, uint64_t sent0, double *loss_sum,
                               size_t *nclip, dpc_error *err);
/* Evaluation blocks [b0, b1) of this rank: loss sums and correct counts of every block to
 * rank 0, which adds them in block order and sends the two totals to all. */
dpc_status dpc__dist_eval_sum(dpc_trainer *tr, size_t nblocks, double *loss, double *correct,
                              double *tot_loss, double *tot_correct, dpc_error *err);
/* dist_data.c: a sharded training set: the ranks' row ranges, the whole set's content hash and
 * the row buffers (no-op when no rank holds a shard); then, each round, this rank's share of the
 * round's chunks [g0, g1) fetched from the rows' owners into rows. */
dpc_status dpc__dist_data_setup(dpc_trainer *tr, dpc_error *err);
dpc_status dpc__dist_fetch_rows(dpc_trainer *tr, size_t g0, size_t g1, dpc_error *err);
/* The features of batch position pos (and *y its target): the fetched row of a sharded set, else
 * the training set's row. */
static inline const double *dpc__train_row(const dpc_trainer *tr, size_t pos, double *y)
{
    if (tr->row_bound) {
        const double *r = tr->rows + (pos - tr->rows_base) * (tr->D + 1);
        *y = r[tr->D];
        return r;
    }
    *y = tr->train->y[tr->idx[pos]];
    return tr->train->x + tr->idx[pos] * tr->D;
}

/* The rank's share [c0, c1) of n items (chunks of a round, evaluation blocks). */
static inline void dpc__dist_share(const dpc__dist *d, size_t n, size_t *c0, size_t *c1)
{
    *c0 = n / d->size * d->rank + n % d->size * d->rank / d->size;
    *c1 = n / d->size * (d->rank + 1) + n % d->size * (d->rank + 1) / d->size;
}

#endif
