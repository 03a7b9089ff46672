/* checkpoint.c — atomic trainer checkpoints and resume.
 *
 * File (native byte order, guarded by a byte-order mark), version 3:
 *   "DPCCKPT\0" | u32 version 3 | u32 0x01020304 | u64 fingerprint of the run configuration |
 *   u64 step | u64 P | u32 key[2] | u64 seed | u32 rng mode | u32 secure key[8] (0 if seeded) |
 *   u32 nitems | nitems configuration items (ck_items.c, CK_ITEM_BYTES each) |
 *   params (P) | velocity (P) | u64 L | noise state (L, coordinate-major; a function of the key
 *   and the step: on resume it is replayed from the key and compared, never trusted) |
 *   u64 nrec | nrec history records (u64 step, u64 epoch, 5 doubles) |
 *   u64 FNV-1a of all of the above | end of file.
 * Version 2 (still read) has no items and no records; its fingerprint covers the configuration,
 * the data path and shape, not the data content.
 * The header, the items, the checksum and the atomic write are the file layer shared with the
 * container of the papers' trainers (ck_file.c, ckpt.c); a file of the DP-FTRL trainer has no
 * "algorithm" item (its kind is "dp-ftrl"), so resuming another trainer's file is refused naming
 * "algorithm".
 * Written to "<path>.tmp.<pid>" (mode 0600: a secure-mode checkpoint holds the key), fsync'ed,
 * then renamed over <path>: a crash leaves either the old or the new checkpoint, never a torn
 * one; temporaries of processes that no longer exist are removed by the next save.
 *
 * Distributed runs (dist.h): rank 0 does all the file I/O. Saving, the other ranks stream their
 * momentum and noise-state shards to rank 0 in pieces, in rank order, which is the file order
 * (coordinate-major state concatenates); resuming, rank 0 streams every rank its shards (and
 * everyone the parameters) and the ranks import only once rank 0 has verified the checksum. The
 * file is the single-process one, so a run may resume with another number of ranks. */
#include "common/util.h"
#include "train/train_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CK_REC_BYTES 56u

/* Floats of noise state per coordinate (0 when it regenerates from the RNG). */
size_t dpc__train_noise_per_coord(const dpc_trainer *tr)
{
    for (size_t i = 0; i < tr->T; i++) {
        const thread_ctx *c = &tr->tc[i];
        if (c->noise && c->p1 > c->p0) return dpc_noise_state_size(c->noise) / (c->p1 - c->p0);
    }
    return 0;
}

/* The byte counter of the ranks is not part of the trainer's value: saving a const trainer
 * counts its messages. */
static dpc__dist *dist_of(const dpc_trainer *tr) { return (dpc__dist *)&tr->dist; }

static size_t shard_of(const dpc__dist *d, size_t s) { return d->bound[s + 1] - d->bound[s]; }

/* This rank's noise state, coordinate-major ((s1 - s0) x per), or NULL when per = 0. */
static dpc_status export_noise(const dpc_trainer *tr, size_t per, double **out, dpc_error *err)
{
    *out = NULL;
    if (!per) return DPC_OK;
    double *ns = dpc__malloc_array(per * (tr->s1 - tr->s0), sizeof *ns);
    if (!ns) return DPC__NOMEM(err, "checkpoint noise state");
    for (size_t i = 0; i < tr->T; i++) {
        const thread_ctx *c = &tr->tc[i];
        size_t step;
        if (!c->noise) continue;
        dpc_status st = dpc_noise_export(c->noise, &step, ns + (c->p0 - tr->s0) * per, err);
        if (st) {
            free(ns);
            return st;
        }
    }
    *out = ns;
    return DPC_OK;
}

/* One section of the file, per floats per coordinate, in rank order: rank 0 writes its own and
 * the pieces the others send (a failed write keeps receiving, so no rank is left waiting). */
static dpc_status save_section(dpc__dist *d, dpc__ck_wbuf *w, const double *mine, size_t per,
                               double *buf, dpc_error *err)
{
    for (size_t s = 0; s < d->size; s++) {
        size_t n = per * shard_of(d, s);
        if (d->rank == 0 && s == 0) dpc__ck_wr(w, mine, n * sizeof(double));
        if (s == 0 || (d->rank != 0 && d->rank != s)) continue;
        for (size_t q = 0; q < n; q += d->piece_len) {
            size_t b = (n - q < d->piece_len ? n - q : d->piece_len) * sizeof(double);
            dpc_status st = d->rank == s
                                ? dpc__dist_sendrecv(d, 0, mine + q, b, DPC_RANK_NONE, NULL, 0, err)
                                : dpc__dist_sendrecv(d, DPC_RANK_NONE, NULL, 0, s, buf, b, err);
            if (st) return st;
            if (d->rank == 0) dpc__ck_wr(w, buf, b);
        }
    }
    return DPC_OK;
}

/* The file up to the checksum (rank 0 writes; the others send their shards). */
static dpc_status save_stream(const dpc_trainer *tr, dpc__ck_wbuf *w, const double *ns, size_t per,
                              double *buf, dpc_error *err)
{
    dpc__dist *d = dist_of(tr);
    if (d->rank == 0) {
        ck_item it[CK_MAX_ITEMS];
        size_t ni = dpc__train_items(tr, it);
        dpc__ck_write_header(w, dpc__train_fingerprint(tr), tr->t, tr->P, &tr->rng, it, ni);
        dpc__ck_wr(w, tr->params, tr->P * sizeof(double));
    }
    dpc_status st = save_section(d, w, tr->velocity, 1, buf, err);
    uint64_t LL = per * tr->P;
    if (!st && d->rank == 0) dpc__ck_wr(w, &LL, 8);
    if (!st) st = save_section(d, w, ns, per, buf, err);
    if (!st && d->rank == 0) { /* the history */
        uint64_t nr = tr->nhist;
        dpc__ck_wr(w, &nr, 8);
        for (size_t i = 0; i < tr->nhist; i++) {
            const dpc_train_record *h = &tr->hist[i];
            uint64_t se[2] = {h->step, h->epoch};
            double v[5] = {h->train_loss, h->test_loss, h->test_accuracy, h->epsilon, h->time_s};
            dpc__ck_wr(w, se, sizeof se);
            dpc__ck_wr(w, v, sizeof v);
        }
    }
    return st;
}

dpc_status dpc_trainer_save(const dpc_trainer *tr, const char *path, dpc_error *err)
{
    dpc__dist *d = dist_of(tr);
    size_t per = dpc__train_noise_per_coord(tr);
    double *ns = NULL, *buf = NULL;
    dpc_status st = export_noise(tr, per, &ns, err);
    if (!st && dpc__dist_on(d) && d->rank == 0) {
        buf = dpc__malloc_array(DPC__PIECE, sizeof *buf);
        if (!buf) st = DPC__NOMEM(err, "checkpoint buffer");
    }
    if ((st = dpc__dist_agree(d, st, err))) {
        free(ns);
        free(buf);
        return st;
    }
    char tmp[4096];
    dpc__ck_wbuf w = {NULL, {DPC__CK_FNV0}, 0};
    dpc_error werr = {0};
    if (d->rank == 0) dpc__ck_clean_stale_tmp(path);
    dpc_status wst = d->rank == 0 ? dpc__ck_open_tmp(path, tmp, sizeof tmp, &w, &werr) : DPC_OK;
    st = save_stream(tr, d->rank == 0 ? &w : NULL, ns, per, buf, err);
    if (d->rank == 0 && !wst) {
        if (st) { /* a transport failure: drop the temporary file */
            fclose(w.f);
            unlink(tmp);
        } else {
            wst = dpc__ck_commit_tmp(&w, tmp, path, &werr);
        }
    }
    free(ns);
    free(buf);
    if (st) return st;
    if (wst && err) *err = werr;
    return dpc__dist_root(d, wst, err);
}

/* The parts of a checkpoint a rank receives: the parameters, its momentum and noise shards. */
typedef struct ck_parts {
    uint64_t step;
    dpc_train_record *rec; /* (nrec) rank 0: the history */
    size_t nrec;
    double *params; /* (P) */
    double *vel;    /* (s1 - s0) */
    double *ns;     /* (per x (s1 - s0)) or NULL */
    double *buf;    /* (DPC__PIECE) rank 0's relay buffer */
} ck_parts;

static void parts_free(ck_parts *k)
{
    free(k->rec);
    free(k->params);
    free(k->vel);
    free(k->ns);
    free(k->buf);
}

/* Rank 0 reads n doubles into dst unless an earlier read failed (then zeros: the others still
 * receive what they expect; the failure is reported once every rank has its pieces). */
static void rd_or_zero(dpc__ck_rbuf *r, double *dst, size_t n, const char *what, dpc_status *rst,
                       dpc_error *rerr)
{
    if (!n) return; /* an empty section (no noise state): dst may be NULL */
    if (!*rst) *rst = dpc__ck_rd(r, dst, n * sizeof(double), what, rerr);
    if (*rst) memset(dst, 0, n * sizeof(double));
}

/* One section of the file, per floats per coordinate in rank order, from rank 0 to the owners. */
static dpc_status load_section(dpc__dist *d, dpc__ck_rbuf *r, double *mine, size_t per, double *buf,
                               const char *what, dpc_status *rst, dpc_error *rerr, dpc_error *err)
{
    for (size_t s = 0; s < d->size; s++) {
        size_t n = per * shard_of(d, s);
        if (d->rank == 0 && s == 0) rd_or_zero(r, mine, n, what, rst, rerr);
        if (s == 0 || (d->rank != 0 && d->rank != s)) continue;
        for (size_t q = 0; q < n; q += d->piece_len) {
            size_t len = n - q < d->piece_len ? n - q : d->piece_len;
            dpc_status st;
            if (d->rank == 0) {
                rd_or_zero(r, buf, len, what, rst, rerr);
                st = dpc__dist_sendrecv(d, s, buf, len * sizeof(double), DPC_RANK_NONE, NULL, 0,
                                        err);
            } else {
                st = dpc__dist_sendrecv(d, DPC_RANK_NONE, NULL, 0, 0, mine + q,
                                        len * sizeof(double), err);
            }
            if (st) return st;
        }
    }
    return DPC_OK;
}

/* Rank 0: header checks (fingerprint, sizes); the step goes to every rank with the verdict. */
static dpc_status load_header(dpc_trainer *tr, dpc__ck_rbuf *r, const char *path, ck_parts *k,
                              dpc_error *err)
{
    dpc__dist *d = &tr->dist;
    dpc_status st = DPC_OK;
    if (d->rank == 0) {
        uint64_t fp, P;
        dpc_rng rng;
        if (!r->f) st = dpc_error_set(err, DPC_E_IO, "%s", r->why);
        if (!st) st = dpc__ck_verify_sum(path, err);
        if (!st) st = dpc__ck_read_header(r, &fp, &k->step, &P, &rng, err);
        if (!st && r->ver >= 3) { /* name the first option or input that differs */
            ck_item ck[CK_MAX_ITEMS], run[CK_MAX_ITEMS];
            size_t nck = 0, nrun = dpc__train_items(tr, run);
            st = dpc__ck_read_items(r, ck, &nck, err);
            if (!st) st = dpc__ck_items_diff(ck, nck, run, nrun, path, err);
            if (!st && fp != dpc__train_fingerprint(tr))
                st = dpc_error_set(err, DPC_E_STATE, "%s: checkpoint of a different run (its "
                                   "fingerprint differs)", path);
        } else if (!st && fp != dpc__train_fingerprint_v2(tr)) {
            st = dpc_error_set(err, DPC_E_STATE,
                               "%s: checkpoint of a different run (configuration, data path or "
                               "shape, model or seed differ; a version-2 checkpoint does not "
                               "record which)", path);
        } else if (!st && dpc__ck_scheme_matters(tr->cfg.sampler)) {
            st = dpc__ck_scheme_refused(1, path, err); /* version 2 predates scheme 2 */
        }
        if (!st && (P != tr->P || k->step > tr->n_steps))
            st = dpc_error_set(err, DPC_E_STATE,
                               "%s: %llu parameters at step %llu do not fit this run (%zu "
                               "parameters, %zu steps)", path, (unsigned long long)P,
                               (unsigned long long)k->step, tr->P, tr->n_steps);
    }
    if ((st = dpc__dist_root(d, st, err))) return st;
    return dpc__dist_bcast(d, 0, &k->step, sizeof k->step, err);
}

/* Rank 0: the history records (bounded by the file's size, steps increasing up to the step). */
static dpc_status read_records(dpc__ck_rbuf *r, const dpc_trainer *tr, ck_parts *k, dpc_error *err)
{
    uint64_t nr;
    dpc_status st = dpc__ck_rd(r, &nr, 8, "record count", err);
    if (st) return st;
    if (nr > (r->size - r->pos) / CK_REC_BYTES || nr > tr->n_steps)
        return dpc_error_set(err, DPC_E_FORMAT, "%s: %llu history records do not fit the file",
                             r->path, (unsigned long long)nr);
    k->rec = nr ? dpc__malloc_array((size_t)nr, sizeof *k->rec) : NULL;
    if (nr && !k->rec) return DPC__NOMEM(err, "checkpoint records");
    for (uint64_t i = 0; i < nr; i++) {
        uint64_t se[2];
        double v[5];
        if ((st = dpc__ck_rd(r, se, sizeof se, "records", err)) || (st = dpc__ck_rd(r, v, sizeof v, "records", err)))
            return st;
        if (se[0] == 0 || se[0] > k->step || (i && se[0] <= k->rec[i - 1].step))
            return dpc_error_set(err, DPC_E_FORMAT, "%s: history record %llu at step %llu is out "
                                 "of order", r->path, (unsigned long long)i,
                                 (unsigned long long)se[0]);
        k->rec[i] = (dpc_train_record){(size_t)se[0], (size_t)se[1], v[0], v[1], v[2], v[3], v[4]};
    }
    k->nrec = (size_t)nr;
    return DPC_OK;
}

/* Rank 0 streams the body; *rst / rerr: its read or verification failure. */
static dpc_status load_body(dpc_trainer *tr, dpc__ck_rbuf *r, const char *path, size_t per, ck_parts *k,
                            dpc_status *rst, dpc_error *rerr, dpc_error *err)
{
    dpc__dist *d = &tr->dist;
    if (d->rank == 0) rd_or_zero(r, k->params, tr->P, "parameters", rst, rerr);
    dpc_status st = dpc__dist_bcast(d, 0, k->params, tr->P * sizeof(double), err);
    if (!st) st = load_section(d, r, k->vel, 1, k->buf, "momentum", rst, rerr, err);
    if (st) return st;
    if (d->rank == 0 && !*rst) {
        uint64_t L = 0;
        *rst = dpc__ck_rd(r, &L, 8, "noise state size", rerr);
        if (!*rst && L != per * tr->P)
            *rst = dpc_error_set(rerr, DPC_E_STATE, "%s: noise state of %llu values, expected %zu",
                                 path, (unsigned long long)L, per * tr->P);
    }
    if ((st = load_section(d, r, k->ns, per, k->buf, "noise state", rst, rerr, err))) return st;
    if (d->rank == 0 && !*rst && r->ver >= 3) *rst = read_records(r, tr, k, rerr);
    if (d->rank == 0 && !*rst) {
        *rst = dpc__ck_read_sum(r, rerr);
        for (size_t i = 0; !*rst && i < tr->P; i++)
            if (!isfinite(k->params[i]))
                *rst = dpc_error_set(rerr, DPC_E_FORMAT, "%s: non-finite parameter %zu", path, i);
    }
    return DPC_OK;
}

/* The replay of one thread's noise generator (the pool's threads in parallel: the replay costs
 * the noise of the steps done, so it runs at the training's width). */
typedef struct import_job {
    dpc_trainer *tr;
    size_t per;
    const ck_parts *k;
} import_job;

static void phase_import(void *a, size_t tid, size_t T)
{
    const import_job *j = a;
    thread_ctx *c = &j->tr->tc[tid];
    (void)T;
    c->st = DPC_OK;
    if (!c->noise) return;
    /* the saved state is only compared with its replay from the key (dpc_noise_import) */
    c->st = dpc_noise_import(c->noise, (size_t)j->k->step,
                             j->per ? j->k->ns + (c->p0 - j->tr->s0) * j->per : NULL, &c->err);
}

/* Every rank: its momentum shard is finite, then the generators take their states. */
static dpc_status import_parts(dpc_trainer *tr, const char *path, size_t per, const ck_parts *k,
                               dpc_error *err)
{
    for (size_t i = 0; i < tr->s1 - tr->s0; i++)
        if (!isfinite(k->vel[i]))
            return dpc_error_set(err, DPC_E_FORMAT, "%s: non-finite parameter %zu", path,
                                 tr->s0 + i);
    import_job j = {tr, per, k};
    dpc__pool_run(tr->pool, phase_import, &j);
    for (size_t i = 0; i < tr->T; i++) { /* the first thread's refusal (lowest coordinates) */
        thread_ctx *c = &tr->tc[i];
        if (!c->st) continue;
        if (err) *err = c->err;
        return err ? dpc_error_prefix(err, "%s: ", path) : c->st;
    }
    return DPC_OK;
}

dpc_status dpc_trainer_resume(dpc_trainer *tr, const char *path, dpc_error *err)
{
    dpc__dist *d = &tr->dist;
    if (d->rank == 0) dpc__ck_clean_stale_tmp(path); /* a resume typically follows a killed run */
    dpc__ck_rbuf r = dpc__ck_rbuf_open(path, d->rank == 0);
    ck_parts k = {0, NULL, 0, NULL, NULL, NULL, NULL};
    size_t per = dpc__train_noise_per_coord(tr), S = tr->s1 - tr->s0;
    dpc_status st = load_header(tr, &r, path, &k, err), rst = DPC_OK;
    if (st) goto done;
    k.params = dpc__malloc_array(tr->P, sizeof(double));
    k.vel = dpc__malloc_array(S, sizeof(double));
    k.ns = per ? dpc__malloc_array(per * S, sizeof(double)) : NULL;
    k.buf = d->rank == 0 ? dpc__malloc_array(DPC__PIECE, sizeof(double)) : NULL;
    if (!k.params || !k.vel || (per && !k.ns) || (d->rank == 0 && !k.buf))
        st = DPC__NOMEM(err, "checkpoint");
    if ((st = dpc__dist_agree(d, st, err))) goto done;
    dpc_error rerr = {0};
    if ((st = load_body(tr, &r, path, per, &k, &rst, &rerr, err))) goto done;
    if (rst && err) *err = rerr;
    if ((st = dpc__dist_root(d, rst, err))) goto done;
    st = dpc__dist_agree(d, import_parts(tr, path, per, &k, err), err);
    if (st) goto done;
    memcpy(tr->params, k.params, tr->P * sizeof(double));
    memcpy(tr->velocity, k.vel, S * sizeof(double));
    dpc__train_sync_f32(tr); /* float32: the float state (the stored values are floats) */
    tr->t = (size_t)k.step;
    free(tr->hist); /* the checkpoint's history replaces this trainer's */
    tr->hist = k.rec;
    tr->nhist = tr->hist_cap = k.nrec;
    k.rec = NULL;
done:
    if (r.f) fclose(r.f);
    parts_free(&k);
    return st;
}
