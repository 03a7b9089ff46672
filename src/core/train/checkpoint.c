/* checkpoint.c — atomic trainer checkpoints and resume.
 *
 * File (native byte order, guarded by a byte-order mark):
 *   "DPCCKPT\0" | u32 version 2 | u32 0x01020304 | u64 fingerprint of the run configuration |
 *   u64 step | u64 P | u32 key[2] | u64 seed | u32 rng mode | u32 secure key[8] (0 if seeded) |
 *   params (P) | velocity (P) | u64 L | noise state (L, coordinate-major) | u64 FNV-1a of all of
 *   the above.
 * Written to "<path>.tmp.<pid>" (mode 0600: a secure-mode checkpoint holds the key), fsync'ed,
 * then renamed over <path>: a crash leaves either the old or the new checkpoint, never a torn
 * one. */
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
static uint64_t fingerprint(const dpc_trainer *tr)
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
static size_t noise_per_coord(const dpc_trainer *tr)
{
    for (size_t i = 0; i < tr->T; i++) {
        const thread_ctx *c = &tr->tc[i];
        if (c->noise && c->p1 > c->p0) return dpc_noise_state_size(c->noise) / (c->p1 - c->p0);
    }
    return 0;
}

typedef struct wbuf {
    FILE *f;
    fnv h;
    int ok;
} wbuf;

static void wr(wbuf *w, const void *p, size_t n)
{
    if (!w->ok) return;
    fnv_add(&w->h, p, n);
    if (fwrite(p, 1, n, w->f) != n) w->ok = 0;
}

dpc_status dpc_trainer_save(const dpc_trainer *tr, const char *path, dpc_error *err)
{
    size_t per = noise_per_coord(tr), L = per * tr->P;
    double *ns = NULL;
    if (L) {
        ns = dpc__malloc_array(L, sizeof *ns);
        if (!ns) return DPC__NOMEM(err, "checkpoint noise state");
        for (size_t i = 0; i < tr->T; i++) {
            const thread_ctx *c = &tr->tc[i];
            size_t step;
            if (c->noise) {
                dpc_status st = dpc_noise_export(c->noise, &step, ns + c->p0 * per, err);
                if (st) {
                    free(ns);
                    return st;
                }
            }
        }
    }
    char tmp[4096];
    int n = snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof tmp) {
        free(ns);
        return dpc_error_set(err, DPC_E_INVALID, "checkpoint: path too long");
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) {
        free(ns);
        return dpc_error_set(err, DPC_E_IO, "%s: cannot create: %s", tmp, strerror(errno));
    }
    wbuf w = {fdopen(fd, "wb"), {0xcbf29ce484222325ull}, 1};
    if (!w.f) {
        close(fd);
        free(ns);
        return dpc_error_set(err, DPC_E_IO, "%s: %s", tmp, strerror(errno));
    }
    char magic[8] = CK_MAGIC;
    uint32_t ver = CK_VERSION, bom = CK_BOM, mode = (uint32_t)tr->rng.mode;
    uint64_t fp = fingerprint(tr), step = tr->t, P = tr->P, seed = tr->rng.seed, LL = L;
    wr(&w, magic, 8);
    wr(&w, &ver, 4);
    wr(&w, &bom, 4);
    wr(&w, &fp, 8);
    wr(&w, &step, 8);
    wr(&w, &P, 8);
    wr(&w, tr->rng.key, 8);
    wr(&w, &seed, 8);
    wr(&w, &mode, 4);
    wr(&w, tr->rng.skey, sizeof tr->rng.skey);
    wr(&w, tr->params, tr->P * sizeof(double));
    wr(&w, tr->velocity, tr->P * sizeof(double));
    wr(&w, &LL, 8);
    if (L) wr(&w, ns, L * sizeof(double));
    uint64_t sum = w.h.h;
    if (w.ok && fwrite(&sum, 1, 8, w.f) != 8) w.ok = 0;
    if (w.ok && fflush(w.f) != 0) w.ok = 0;
    if (w.ok && fsync(fileno(w.f)) != 0) w.ok = 0;
    int saved_errno = errno;
    if (fclose(w.f) != 0) w.ok = 0;
    free(ns);
    if (!w.ok) {
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

dpc_status dpc_trainer_resume(dpc_trainer *tr, const char *path, dpc_error *err)
{
    rbuf r = {fopen(path, "rb"), {0xcbf29ce484222325ull}, path};
    if (!r.f) return dpc_error_set(err, DPC_E_IO, "%s: cannot open: %s", path, strerror(errno));
    uint64_t fp, step, P, L = 0, sum;
    dpc_rng rng;
    double *params = NULL, *vel = NULL, *ns = NULL;
    dpc_status st = read_header(&r, &fp, &step, &P, &rng, err);
    if (st) goto done;
    if (fp != fingerprint(tr)) {
        st = dpc_error_set(err, DPC_E_STATE,
                           "%s: checkpoint of a different run (configuration, data, model or "
                           "seed differ)", path);
        goto done;
    }
    if (P != tr->P || step > tr->n_steps) {
        st = dpc_error_set(err, DPC_E_STATE, "%s: %llu parameters at step %llu do not fit this "
                                             "run (%zu parameters, %zu steps)",
                           path, (unsigned long long)P, (unsigned long long)step, tr->P,
                           tr->n_steps);
        goto done;
    }
    params = dpc__malloc_array(tr->P, sizeof *params);
    vel = dpc__malloc_array(tr->P, sizeof *vel);
    if (!params || !vel) {
        st = DPC__NOMEM(err, "checkpoint");
        goto done;
    }
    if ((st = rd(&r, params, tr->P * sizeof(double), "parameters", err)) ||
        (st = rd(&r, vel, tr->P * sizeof(double), "momentum", err)) ||
        (st = rd(&r, &L, 8, "noise state size", err)))
        goto done;
    size_t per = noise_per_coord(tr);
    if (L != per * tr->P) {
        st = dpc_error_set(err, DPC_E_STATE, "%s: noise state of %llu values, expected %zu", path,
                           (unsigned long long)L, per * tr->P);
        goto done;
    }
    if (L) {
        ns = dpc__malloc_array(L, sizeof *ns);
        if (!ns) {
            st = DPC__NOMEM(err, "checkpoint noise state");
            goto done;
        }
        if ((st = rd(&r, ns, L * sizeof(double), "noise state", err))) goto done;
    }
    uint64_t expect = r.h.h;
    if (fread(&sum, 1, 8, r.f) != 8 || sum != expect) {
        st = dpc_error_set(err, DPC_E_FORMAT, "%s: checksum mismatch (corrupt checkpoint)", path);
        goto done;
    }
    for (size_t i = 0; i < tr->P; i++)
        if (!isfinite(params[i]) || !isfinite(vel[i])) {
            st = dpc_error_set(err, DPC_E_FORMAT, "%s: non-finite parameter %zu", path, i);
            goto done;
        }
    for (size_t i = 0; i < tr->T; i++) {
        thread_ctx *c = &tr->tc[i];
        if (!c->noise) continue;
        st = dpc_noise_import(c->noise, (size_t)step, L ? ns + c->p0 * per : NULL, err);
        if (st) goto done;
    }
    memcpy(tr->params, params, tr->P * sizeof(double));
    memcpy(tr->velocity, vel, tr->P * sizeof(double));
    dpc__train_sync_f32(tr); /* float32: the float state (the stored values are floats) */
    tr->t = (size_t)step;
done:
    fclose(r.f);
    free(params);
    free(vel);
    free(ns);
    return st;
}
