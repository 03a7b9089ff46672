/* checkpoint.c — atomic trainer checkpoints and resume.
 *
 * File (native byte order, guarded by a byte-order mark):
 *   "DPCCKPT\0" | u32 version 2 | u32 0x01020304 | u64 fingerprint of the run configuration |
 *   u64 step | u64 P | u32 key[2] | u64 seed | u32 rng mode | u32 secure key[8] (0 if seeded) |
 *   params (P) | velocity (P) | u64 L | noise state (L, coordinate-major) | u64 FNV-1a of all of
 *   the above.
 * Written to "<path>.tmp.<pid>" (mode 0600: a secure-mode checkpoint holds the key), fsync'ed,
 * then renamed over <path>: a crash leaves either the old or the new checkpoint, never a torn
 * one.
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
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CK_MAGIC "DPCCKPT"
#define CK_VERSION 2u /* 2: the secure-mode ChaCha20 key */
#define CK_BOM 0x01020304u

typedef struct fnv {
    uint64_t h;
} fnv;

static void fnv_add(fnv *f, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        f->h ^= b[i];
        f->h *= 0x100000001b3ull;
    }
}

static void fnv_str(fnv *f, const char *s) { fnv_add(f, s, strlen(s) + 1); }
static void fnv_num(fnv *f, double x) { fnv_add(f, &x, sizeof x); }
static void fnv_size(fnv *f, size_t x)
{
    uint64_t v = x;
    fnv_add(f, &v, sizeof v);
}

/* Everything that determines the values of a run (not threads, not the noise form, which
 * give bit-identical results). */
uint64_t dpc__train_fingerprint(const dpc_trainer *tr)
{
    fnv f = {0xcbf29ce484222325ull};
    const dpc_train_config *c = &tr->cfg;
    const dpc_mech_params *mp = dpc_mech_get_params(tr->mech);
    fnv_str(&f, "dpcorr-run-v1");
    fnv_size(&f, (size_t)mp->kind);
    fnv_size(&f, mp->steps);
    fnv_num(&f, mp->nu);
    fnv_num(&f, mp->lambda);
    fnv_size(&f, mp->bands);
    fnv_num(&f, mp->momentum);
    fnv_num(&f, mp->decay);
    fnv_size(&f, (size_t)mp->honaker);
    fnv_size(&f, mp->nbuf);
    if (mp->nbuf) {
        fnv_add(&f, mp->theta, mp->nbuf * sizeof(double));
        fnv_add(&f, mp->omega, mp->nbuf * sizeof(double));
    }
    fnv_size(&f, mp->ncoeffs);
    if (mp->ncoeffs) fnv_add(&f, mp->coeffs, mp->ncoeffs * sizeof(double));
    if (mp->dense) fnv_add(&f, mp->dense, mp->steps * mp->steps * sizeof(double));
    fnv_size(&f, (size_t)mp->coeffs_of_strategy);
    fnv_size(&f, (size_t)c->sampler);
    fnv_size(&f, c->batch);
    fnv_size(&f, c->epochs);
    fnv_size(&f, dpc_sampler_get_config(tr->sampler)->groups);
    fnv_num(&f, c->epsilon);
    fnv_num(&f, c->delta);
    fnv_num(&f, c->noise_multiplier);
    fnv_num(&f, tr->noise_scale);
    fnv_size(&f, (size_t)c->accountant);
    fnv_num(&f, c->clip);
    fnv_num(&f, c->lr);
    fnv_num(&f, c->momentum);
    fnv_num(&f, c->weight_decay);
    fnv_size(&f, (size_t)c->schedule);
    fnv_num(&f, c->cooldown_fraction);
    fnv_num(&f, c->cooldown_factor);
    fnv_size(&f, c->chunk);
    if (c->precision != DPC_PRECISION_DOUBLE) /* (absent for double: old checkpoints resume) */
        fnv_str(&f, dpc_precision_name(c->precision));
    char spec[DPC_MODEL_SPEC_LEN];
    dpc_model_format_spec(dpc_model_get_config(tr->model), spec, sizeof spec);
    fnv_str(&f, spec);
    fnv_size(&f, tr->P);
    fnv_size(&f, tr->train->n);
    fnv_size(&f, tr->train->d);
    fnv_str(&f, tr->train->source);
    fnv_str(&f, tr->train->preprocessing);
    fnv_add(&f, tr->rng.key, sizeof tr->rng.key);
    fnv_size(&f, (size_t)tr->rng.mode);
    if (tr->rng.mode == DPC_RNG_SECURE) fnv_add(&f, tr->rng.skey, sizeof tr->rng.skey);
    return f.h;
}

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

typedef struct wbuf {
    FILE *f;
    fnv h;
    int ok;
} wbuf;

static void wr(wbuf *w, const void *p, size_t n)
{
    if (!w || !w->ok || !n) return;
    fnv_add(&w->h, p, n);
    if (fwrite(p, 1, n, w->f) != n) w->ok = 0;
}

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
static dpc_status save_section(dpc__dist *d, wbuf *w, const double *mine, size_t per,
                               double *buf, dpc_error *err)
{
    for (size_t s = 0; s < d->size; s++) {
        size_t n = per * shard_of(d, s);
        if (d->rank == 0 && s == 0) wr(w, mine, n * sizeof(double));
        if (s == 0 || (d->rank != 0 && d->rank != s)) continue;
        for (size_t q = 0; q < n; q += d->piece_len) {
            size_t b = (n - q < d->piece_len ? n - q : d->piece_len) * sizeof(double);
            dpc_status st = d->rank == s
                                ? dpc__dist_sendrecv(d, 0, mine + q, b, DPC_RANK_NONE, NULL, 0, err)
                                : dpc__dist_sendrecv(d, DPC_RANK_NONE, NULL, 0, s, buf, b, err);
            if (st) return st;
            if (d->rank == 0) wr(w, buf, b);
        }
    }
    return DPC_OK;
}

/* The file up to the checksum (rank 0 writes; the others send their shards). */
static dpc_status save_stream(const dpc_trainer *tr, wbuf *w, const double *ns, size_t per,
                              double *buf, dpc_error *err)
{
    dpc__dist *d = dist_of(tr);
    if (d->rank == 0) {
        char magic[8] = CK_MAGIC;
        uint32_t ver = CK_VERSION, bom = CK_BOM, mode = (uint32_t)tr->rng.mode;
        uint64_t fp = dpc__train_fingerprint(tr), step = tr->t, P = tr->P, seed = tr->rng.seed;
        wr(w, magic, 8);
        wr(w, &ver, 4);
        wr(w, &bom, 4);
        wr(w, &fp, 8);
        wr(w, &step, 8);
        wr(w, &P, 8);
        wr(w, tr->rng.key, 8);
        wr(w, &seed, 8);
        wr(w, &mode, 4);
        wr(w, tr->rng.skey, sizeof tr->rng.skey);
        wr(w, tr->params, tr->P * sizeof(double));
    }
    dpc_status st = save_section(d, w, tr->velocity, 1, buf, err);
    uint64_t LL = per * tr->P;
    if (!st && d->rank == 0) wr(w, &LL, 8);
    if (!st) st = save_section(d, w, ns, per, buf, err);
    return st;
}

/* Rank 0: creates the temporary file. */
static dpc_status open_tmp(const char *path, char *tmp, size_t len, wbuf *w, dpc_error *err)
{
    int n = snprintf(tmp, len, "%s.tmp.%ld", path, (long)getpid());
    if (n < 0 || (size_t)n >= len)
        return dpc_error_param(err, DPC_E_INVALID, "path", "too long");
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) return dpc_error_set(err, DPC_E_IO, "%s: cannot create: %s", tmp, strerror(errno));
    w->f = fdopen(fd, "wb");
    if (!w->f) {
        close(fd);
        return dpc_error_set(err, DPC_E_IO, "%s: %s", tmp, strerror(errno));
    }
    w->ok = 1;
    return DPC_OK;
}

/* Rank 0: checksum, fsync, rename into place. */
static dpc_status commit_tmp(wbuf *w, const char *tmp, const char *path, dpc_error *err)
{
    uint64_t sum = w->h.h;
    if (w->ok && fwrite(&sum, 1, 8, w->f) != 8) w->ok = 0;
    if (w->ok && fflush(w->f) != 0) w->ok = 0;
    if (w->ok && fsync(fileno(w->f)) != 0) w->ok = 0;
    int saved_errno = errno;
    if (fclose(w->f) != 0) w->ok = 0;
    if (!w->ok) {
        unlink(tmp);
        return dpc_error_set(err, DPC_E_IO, "%s: write failed: %s", tmp, strerror(saved_errno));
    }
    if (rename(tmp, path) != 0) {
        saved_errno = errno;
        unlink(tmp);
        return dpc_error_set(err, DPC_E_IO, "%s: cannot rename into place: %s", path,
                             strerror(saved_errno));
    }
    return DPC_OK;
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
    wbuf w = {NULL, {0xcbf29ce484222325ull}, 0};
    dpc_error werr = {0};
    dpc_status wst = d->rank == 0 ? open_tmp(path, tmp, sizeof tmp, &w, &werr) : DPC_OK;
    st = save_stream(tr, d->rank == 0 ? &w : NULL, ns, per, buf, err);
    if (d->rank == 0 && !wst) {
        if (st) { /* a transport failure: drop the temporary file */
            fclose(w.f);
            unlink(tmp);
        } else {
            wst = commit_tmp(&w, tmp, path, &werr);
        }
    }
    free(ns);
    free(buf);
    if (st) return st;
    if (wst && err) *err = werr;
    return dpc__dist_root(d, wst, err);
}

typedef struct rbuf {
    FILE *f;
    fnv h;
    const char *path;
} rbuf;

static dpc_status rd(rbuf *r, void *p, size_t n, const char *what, dpc_error *err)
{
    if (fread(p, 1, n, r->f) != n)
        return dpc_error_set(err, DPC_E_FORMAT, "%s: truncated checkpoint (reading %s)", r->path,
                             what);
    fnv_add(&r->h, p, n);
    return DPC_OK;
}

/* Reads and verifies the header; leaves the stream positioned after the rng fields. */
static dpc_status read_header(rbuf *r, uint64_t *fp, uint64_t *step, uint64_t *P, dpc_rng *rng,
                              dpc_error *err)
{
    char magic[8];
    uint32_t ver, bom, mode;
    dpc_status st;
    if ((st = rd(r, magic, 8, "magic", err))) return st;
    if (memcmp(magic, CK_MAGIC, 8) != 0)
        return dpc_error_set(err, DPC_E_FORMAT, "%s: not a dpcorr checkpoint (bad magic)",
                             r->path);
    if ((st = rd(r, &ver, 4, "version", err)) || (st = rd(r, &bom, 4, "byte order", err)))
        return st;
    if (bom != CK_BOM)
        return dpc_error_set(err, DPC_E_FORMAT, "%s: written with another byte order", r->path);
    if (ver != CK_VERSION)
        return dpc_error_set(err, DPC_E_FORMAT, "%s: checkpoint version %u, expected %u", r->path,
                             ver, CK_VERSION);
    if ((st = rd(r, fp, 8, "fingerprint", err)) || (st = rd(r, step, 8, "step", err)) ||
        (st = rd(r, P, 8, "parameter count", err)) || (st = rd(r, rng->key, 8, "key", err)) ||
        (st = rd(r, &rng->seed, 8, "seed", err)) || (st = rd(r, &mode, 4, "rng mode", err)) ||
        (st = rd(r, rng->skey, sizeof rng->skey, "secure key", err)))
        return st;
    if (mode > DPC_RNG_SECURE)
        return dpc_error_set(err, DPC_E_FORMAT, "%s: bad rng mode %u", r->path, mode);
    rng->mode = (dpc_rng_mode)mode;
    return DPC_OK;
}

dpc_status dpc_checkpoint_read_rng(const char *path, dpc_rng *rng, dpc_error *err)
{
    rbuf r = {fopen(path, "rb"), {0xcbf29ce484222325ull}, path};
    if (!r.f) return dpc_error_set(err, DPC_E_IO, "%s: cannot open: %s", path, strerror(errno));
    uint64_t fp, step, P;
    dpc_status st = read_header(&r, &fp, &step, &P, rng, err);
    fclose(r.f);
    return st;
}

/* The parts of a checkpoint a rank receives: the parameters, its momentum and noise shards. */
typedef struct ck_parts {
    uint64_t step;
    double *params; /* (P) */
    double *vel;    /* (s1 - s0) */
    double *ns;     /* (per x (s1 - s0)) or NULL */
    double *buf;    /* (DPC__PIECE) rank 0's relay buffer */
} ck_parts;

static void parts_free(ck_parts *k)
{
    free(k->params);
    free(k->vel);
    free(k->ns);
    free(k->buf);
}

/* Rank 0 reads n doubles into dst unless an earlier read failed (then zeros: the others still
 * receive what they expect; the failure is reported once every rank has its pieces). */
static void rd_or_zero(rbuf *r, double *dst, size_t n, const char *what, dpc_status *rst,
                       dpc_error *rerr)
{
    if (!*rst) *rst = rd(r, dst, n * sizeof(double), what, rerr);
    if (*rst) memset(dst, 0, n * sizeof(double));
}

/* One section of the file, per floats per coordinate in rank order, from rank 0 to the owners. */
static dpc_status load_section(dpc__dist *d, rbuf *r, double *mine, size_t per, double *buf,
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
static dpc_status load_header(dpc_trainer *tr, rbuf *r, const char *path, ck_parts *k,
                              dpc_error *err)
{
    dpc__dist *d = &tr->dist;
    dpc_status st = DPC_OK;
    if (d->rank == 0) {
        uint64_t fp, P;
        dpc_rng rng;
        if (!r->f) st = dpc_error_set(err, DPC_E_IO, "%s: cannot open: %s", path, strerror(errno));
        if (!st) st = read_header(r, &fp, &k->step, &P, &rng, err);
        if (!st && fp != dpc__train_fingerprint(tr))
            st = dpc_error_set(err, DPC_E_STATE,
                               "%s: checkpoint of a different run (configuration, data, model or "
                               "seed differ)", path);
        if (!st && (P != tr->P || k->step > tr->n_steps))
            st = dpc_error_set(err, DPC_E_STATE,
                               "%s: %llu parameters at step %llu do not fit this run (%zu "
                               "parameters, %zu steps)", path, (unsigned long long)P,
                               (unsigned long long)k->step, tr->P, tr->n_steps);
    }
    if ((st = dpc__dist_root(d, st, err))) return st;
    return dpc__dist_bcast(d, 0, &k->step, sizeof k->step, err);
}

/* Rank 0 streams the body; *rst / rerr: its read or verification failure. */
static dpc_status load_body(dpc_trainer *tr, rbuf *r, const char *path, size_t per, ck_parts *k,
                            dpc_status *rst, dpc_error *rerr, dpc_error *err)
{
    dpc__dist *d = &tr->dist;
    if (d->rank == 0) rd_or_zero(r, k->params, tr->P, "parameters", rst, rerr);
    dpc_status st = dpc__dist_bcast(d, 0, k->params, tr->P * sizeof(double), err);
    if (!st) st = load_section(d, r, k->vel, 1, k->buf, "momentum", rst, rerr, err);
    if (st) return st;
    if (d->rank == 0 && !*rst) {
        uint64_t L = 0;
        *rst = rd(r, &L, 8, "noise state size", rerr);
        if (!*rst && L != per * tr->P)
            *rst = dpc_error_set(rerr, DPC_E_STATE, "%s: noise state of %llu values, expected %zu",
                                 path, (unsigned long long)L, per * tr->P);
    }
    if ((st = load_section(d, r, k->ns, per, k->buf, "noise state", rst, rerr, err))) return st;
    if (d->rank == 0 && !*rst) {
        uint64_t expect = r->h.h, sum;
        if (fread(&sum, 1, 8, r->f) != 8 || sum != expect)
            *rst = dpc_error_set(rerr, DPC_E_FORMAT, "%s: checksum mismatch (corrupt checkpoint)",
                                 path);
        for (size_t i = 0; !*rst && i < tr->P; i++)
            if (!isfinite(k->params[i]))
                *rst = dpc_error_set(rerr, DPC_E_FORMAT, "%s: non-finite parameter %zu", path, i);
    }
    return DPC_OK;
}

/* Every rank: its momentum shard is finite, then the generators take their states. */
static dpc_status import_parts(dpc_trainer *tr, const char *path, size_t per, const ck_parts *k,
                               dpc_error *err)
{
    for (size_t i = 0; i < tr->s1 - tr->s0; i++)
        if (!isfinite(k->vel[i]))
            return dpc_error_set(err, DPC_E_FORMAT, "%s: non-finite parameter %zu", path,
                                 tr->s0 + i);
    for (size_t i = 0; i < tr->T; i++) {
        thread_ctx *c = &tr->tc[i];
        if (!c->noise) continue;
        dpc_status st = dpc_noise_import(c->noise, (size_t)k->step,
                                         per ? k->ns + (c->p0 - tr->s0) * per : NULL, err);
        if (st) return st;
    }
    return DPC_OK;
}

dpc_status dpc_trainer_resume(dpc_trainer *tr, const char *path, dpc_error *err)
{
    dpc__dist *d = &tr->dist;
    rbuf r = {d->rank == 0 ? fopen(path, "rb") : NULL, {0xcbf29ce484222325ull}, path};
    ck_parts k = {0, NULL, NULL, NULL, NULL};
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
done:
    if (r.f) fclose(r.f);
    parts_free(&k);
    return st;
}
