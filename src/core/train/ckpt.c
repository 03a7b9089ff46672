/* ckpt.c — the checkpoint container of the trainers other than dpc_trainer (dpcorr/train.h):
 * the file layer of ck_file.c (header, configuration items, checksum, atomic write) with the
 * trainer kind as the first item ("algorithm") and a body of named sections of doubles:
 *   u32 nsections | per section: name (DPC_CKPT_NAME_LEN bytes, NUL-padded) | u64 n | n doubles
 * then the FNV-1a 64 checksum of everything before it, and nothing after it. */
#include "common/util.h"
#include "train/train_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CKPT_MAX_SECTIONS 64

typedef struct ckpt_section {
    char name[DPC_CKPT_NAME_LEN];
    size_t n;
    double *v; /* (n) */
} ckpt_section;

struct dpc_ckpt {
    char kind[CK_STR_LEN];
    dpc_rng rng;
    uint64_t step, P;
    ck_item items[CK_MAX_ITEMS];
    dpc__ck_items list; /* over items */
    int from_file;      /* read from a file: items include the generator's */
    uint64_t fp;        /* from a file: the stored fingerprint */
    ckpt_section sec[CKPT_MAX_SECTIONS];
    size_t nsec;
    char path[1024];    /* the file read (for messages) */
};

dpc_status dpc_ckpt_new(dpc_ckpt **out, const char *kind, const dpc_rng *rng, dpc_error *err)
{
    if (!out) return dpc_error_param(err, DPC_E_INVALID, "out", "NULL");
    *out = NULL;
    if (!kind || !kind[0] || strlen(kind) >= CK_STR_LEN)
        return dpc_error_param(err, DPC_E_INVALID, "kind", "must be a name of 1 to %d characters",
                               CK_STR_LEN - 1);
    if (!rng) return dpc_error_param(err, DPC_E_INVALID, "rng", "NULL");
    dpc_ckpt *ck = calloc(1, sizeof *ck);
    if (!ck) return DPC__NOMEM(err, "checkpoint");
    snprintf(ck->kind, sizeof ck->kind, "%s", kind);
    ck->rng = *rng;
    ck->list = (dpc__ck_items){ck->items, 0, 0};
    dpc__ck_str(&ck->list, "algorithm", "trainer", kind);
    *out = ck;
    return DPC_OK;
}

void dpc_ckpt_free(dpc_ckpt *ck)
{
    if (!ck) return;
    for (size_t i = 0; i < ck->nsec; i++) free(ck->sec[i].v);
    free(ck);
}

void dpc_ckpt_item_num(dpc_ckpt *ck, const char *field, const char *what, double v)
{
    if (ck && field && what) dpc__ck_num(&ck->list, field, what, v);
}
void dpc_ckpt_item_count(dpc_ckpt *ck, const char *field, const char *what, uint64_t v)
{
    if (ck && field && what) dpc__ck_count(&ck->list, field, what, v);
}
void dpc_ckpt_item_str(dpc_ckpt *ck, const char *field, const char *what, const char *v)
{
    if (ck && field && what) dpc__ck_str(&ck->list, field, what, v);
}
void dpc_ckpt_item_hash(dpc_ckpt *ck, const char *field, const char *what, const void *p,
                        size_t bytes)
{
    if (ck && field && what) dpc__ck_hash(&ck->list, field, what, p, bytes);
}

void dpc_ckpt_set_progress(dpc_ckpt *ck, size_t step, size_t P)
{
    if (!ck) return;
    ck->step = step;
    ck->P = P;
}

const char *dpc_ckpt_kind(const dpc_ckpt *ck) { return ck ? ck->kind : ""; }
size_t dpc_ckpt_step(const dpc_ckpt *ck) { return ck ? (size_t)ck->step : 0; }
size_t dpc_ckpt_num_params(const dpc_ckpt *ck) { return ck ? (size_t)ck->P : 0; }
const char *dpc_ckpt_path(const dpc_ckpt *ck) { return ck && ck->from_file ? ck->path : ""; }

static const ckpt_section *find(const dpc_ckpt *ck, const char *name)
{
    for (size_t i = 0; i < ck->nsec; i++)
        if (!strcmp(ck->sec[i].name, name)) return &ck->sec[i];
    return NULL;
}

dpc_status dpc_ckpt_put(dpc_ckpt *ck, const char *name, const double *v, size_t n, dpc_error *err)
{
    if (!ck) return dpc_error_param(err, DPC_E_INVALID, "ck", "NULL");
    if (!name || !name[0] || strlen(name) >= DPC_CKPT_NAME_LEN)
        return dpc_error_param(err, DPC_E_INVALID, "name", "must be 1 to %d characters",
                               DPC_CKPT_NAME_LEN - 1);
    if (n && !v) return dpc_error_param(err, DPC_E_INVALID, "v", "NULL with n = %zu", n);
    if (find(ck, name)) return dpc_error_param(err, DPC_E_INVALID, "name", "'%s' twice", name);
    if (ck->nsec == CKPT_MAX_SECTIONS)
        return dpc_error_param(err, DPC_E_RANGE, "name", "more than %d sections",
                               CKPT_MAX_SECTIONS);
    ckpt_section *s = &ck->sec[ck->nsec];
    s->v = dpc__malloc_array(n, sizeof(double));
    if (!s->v) return DPC__NOMEM(err, "checkpoint section");
    if (n) memcpy(s->v, v, n * sizeof(double));
    snprintf(s->name, sizeof s->name, "%s", name);
    s->n = n;
    ck->nsec++;
    return DPC_OK;
}

const double *dpc_ckpt_section(const dpc_ckpt *ck, const char *name, size_t *n)
{
    const ckpt_section *s = ck && name ? find(ck, name) : NULL;
    if (n) *n = s ? s->n : 0;
    return s ? s->v : NULL;
}

dpc_status dpc_ckpt_get(const dpc_ckpt *ck, const char *name, double *v, size_t n, dpc_error *err)
{
    if (!ck || !name || (n && !v))
        return dpc_error_param(err, DPC_E_INVALID, !ck ? "ck" : !name ? "name" : "v", "NULL");
    const ckpt_section *s = find(ck, name);
    const char *path = ck->from_file ? ck->path : "checkpoint";
    if (!s)
        return dpc_error_set(err, DPC_E_FORMAT, "%s: no section '%s' (a %s checkpoint of another "
                             "version of dpcorr?)", path, name, ck->kind);
    if (s->n != n)
        return dpc_error_set(err, DPC_E_FORMAT, "%s: section '%s' holds %zu values, this run "
                             "needs %zu", path, name, s->n, n);
    if (n) memcpy(v, s->v, n * sizeof(double));
    return DPC_OK;
}

dpc_status dpc_ckpt_put_records(dpc_ckpt *ck, const char *name, const dpc_field_table *t,
                                const void *recs, size_t n, dpc_error *err)
{
    if (!t || (n && !recs)) return dpc_error_param(err, DPC_E_INVALID, !t ? "t" : "recs", "NULL");
    double *v = dpc__malloc_array(n * t->count + 1, sizeof *v);
    if (!v) return DPC__NOMEM(err, "checkpoint records");
    dpc_field_pack(t, recs, n, v);
    dpc_status st = dpc_ckpt_put(ck, name, v, n * t->count, err);
    free(v);
    return st;
}

dpc_status dpc_ckpt_get_records(const dpc_ckpt *ck, const char *name, const dpc_field_table *t,
                                void *recs, size_t cap, size_t *n, dpc_error *err)
{
    *n = 0;
    if (!ck || !name || !t || !t->count || (cap && !recs))
        return dpc_error_param(err, DPC_E_INVALID, !ck ? "ck" : !name ? "name" : !t ? "t"
                               : !t->count ? "t" : "recs", "NULL or empty");
    const ckpt_section *s = find(ck, name);
    const char *path = ck->from_file ? ck->path : "checkpoint";
    if (!s)
        return dpc_error_set(err, DPC_E_FORMAT, "%s: no section '%s' (a %s checkpoint of another "
                             "version of dpcorr?)", path, name, ck->kind);
    if (s->n % t->count || s->n / t->count > cap)
        return dpc_error_set(err, DPC_E_FORMAT, "%s: section '%s' holds %zu values, not up to "
                             "%zu records of %zu", path, name, s->n, cap, t->count);
    dpc_field_unpack(t, s->v, s->n / t->count, recs);
    *n = s->n / t->count;
    return DPC_OK;
}

/* The whole list: the items, then the generator's (a file's list already ends with them). */
static size_t full_items(const dpc_ckpt *ck, ck_item *out)
{
    memcpy(out, ck->items, ck->list.n * sizeof *out);
    if (ck->from_file) return ck->list.n;
    dpc__ck_items s = {out, ck->list.n, 0};
    dpc__ck_rng_items(&s, &ck->rng);
    return s.n;
}

static dpc_status check_overflow(const dpc_ckpt *ck, dpc_error *err)
{
    if (ck->list.overflow || ck->list.n + 4 > CK_MAX_ITEMS)
        return dpc_error_param(err, DPC_E_RANGE, "items", "more than %d configuration items",
                               CK_MAX_ITEMS - 4);
    return DPC_OK;
}

dpc_status dpc_ckpt_write(const dpc_ckpt *ck, const char *path, dpc_error *err)
{
    if (!ck || !path) return dpc_error_param(err, DPC_E_INVALID, ck ? "path" : "ck", "NULL");
    dpc_status st = check_overflow(ck, err);
    if (st) return st;
    ck_item it[CK_MAX_ITEMS];
    size_t ni = full_items(ck, it);
    char tmp[4096];
    dpc__ck_wbuf w;
    dpc__ck_clean_stale_tmp(path);
    if ((st = dpc__ck_open_tmp(path, tmp, sizeof tmp, &w, err))) return st;
    dpc__ck_write_header(&w, dpc__train_items_hash(it, ni), ck->step, ck->P, &ck->rng, it, ni);
    uint32_t ns = (uint32_t)ck->nsec;
    dpc__ck_wr(&w, &ns, 4);
    for (size_t i = 0; i < ck->nsec; i++) {
        uint64_t n = ck->sec[i].n;
        dpc__ck_wr(&w, ck->sec[i].name, DPC_CKPT_NAME_LEN);
        dpc__ck_wr(&w, &n, 8);
        dpc__ck_wr(&w, ck->sec[i].v, ck->sec[i].n * sizeof(double));
    }
    return dpc__ck_commit_tmp(&w, tmp, path, err);
}

/* The sections of the body, each bounded by what is left of the file. */
static dpc_status read_sections(dpc_ckpt *ck, dpc__ck_rbuf *r, dpc_error *err)
{
    uint32_t ns;
    dpc_status st = dpc__ck_rd(r, &ns, 4, "section count", err);
    if (st) return st;
    if (ns > CKPT_MAX_SECTIONS)
        return dpc_error_set(err, DPC_E_FORMAT, "%s: %u sections (at most %d)", r->path, ns,
                             CKPT_MAX_SECTIONS);
    for (uint32_t i = 0; i < ns; i++) {
        ckpt_section *s = &ck->sec[i];
        uint64_t n;
        if ((st = dpc__ck_rd(r, s->name, DPC_CKPT_NAME_LEN, "section name", err)) ||
            (st = dpc__ck_rd(r, &n, 8, "section size", err)))
            return st;
        size_t len = strnlen(s->name, DPC_CKPT_NAME_LEN);
        if (!len || len == DPC_CKPT_NAME_LEN || find(ck, s->name))
            return dpc_error_set(err, DPC_E_FORMAT, "%s: malformed or repeated section name %u",
                                 r->path, i);
        if (n > (r->size - r->pos) / 8)
            return dpc_error_set(err, DPC_E_FORMAT, "%s: section '%s' of %llu values does not fit "
                                 "the file", r->path, s->name, (unsigned long long)n);
        s->v = dpc__malloc_array((size_t)n, sizeof(double));
        if (!s->v) return DPC__NOMEM(err, "checkpoint section");
        s->n = (size_t)n;
        ck->nsec = i + 1;
        if ((st = dpc__ck_rd(r, s->v, s->n * sizeof(double), s->name, err))) return st;
    }
    return DPC_OK;
}

static dpc_status read_file(dpc_ckpt *ck, dpc__ck_rbuf *r, const char *kind, dpc_error *err)
{
    dpc_status st = dpc__ck_verify_sum(r->path, err);
    if (!st) st = dpc__ck_read_header(r, &ck->fp, &ck->step, &ck->P, &ck->rng, err);
    if (!st) st = r->ver >= 3 ? dpc__ck_read_items(r, ck->items, &ck->list.n, err) : DPC_OK;
    if (st) return st;
    const char *fk = dpc__ck_items_kind(ck->items, ck->list.n);
    if (strcmp(fk, kind))
        return dpc_error_param(err, DPC_E_STATE, "algorithm", "the checkpoint %s is of a %s run, "
                               "this run is %s", r->path, fk, kind);
    snprintf(ck->kind, sizeof ck->kind, "%s", fk);
    if ((st = read_sections(ck, r, err))) return st;
    return dpc__ck_read_sum(r, err);
}

dpc_status dpc_ckpt_read(dpc_ckpt **out, const char *path, const char *kind, dpc_error *err)
{
    if (!out) return dpc_error_param(err, DPC_E_INVALID, "out", "NULL");
    *out = NULL;
    if (!path || !kind) return dpc_error_param(err, DPC_E_INVALID, path ? "kind" : "path", "NULL");
    dpc__ck_clean_stale_tmp(path); /* a resume typically follows a killed run */
    dpc__ck_rbuf r = dpc__ck_rbuf_open(path, 1);
    if (!r.f) return dpc_error_set(err, DPC_E_IO, "%s", r.why);
    dpc_ckpt *ck = calloc(1, sizeof *ck);
    dpc_status st = ck ? read_file(ck, &r, kind, err) : DPC__NOMEM(err, "checkpoint");
    fclose(r.f);
    if (st) {
        dpc_ckpt_free(ck);
        return st;
    }
    ck->list.it = ck->items;
    ck->from_file = 1;
    snprintf(ck->path, sizeof ck->path, "%s", path);
    *out = ck;
    return DPC_OK;
}

dpc_status dpc_ckpt_match(const dpc_ckpt *saved, const dpc_ckpt *run, dpc_error *err)
{
    if (!saved || !run) return dpc_error_param(err, DPC_E_INVALID, saved ? "run" : "saved", "NULL");
    dpc_status st = check_overflow(run, err);
    if (st) return st;
    ck_item a[CK_MAX_ITEMS], b[CK_MAX_ITEMS];
    size_t na = full_items(saved, a), nb = full_items(run, b);
    const char *path = saved->from_file ? saved->path : "(in memory)";
    if ((st = dpc__ck_items_diff(a, na, b, nb, path, err))) return st;
    if (saved->from_file && saved->fp != dpc__train_items_hash(b, nb))
        return dpc_error_set(err, DPC_E_STATE, "%s: checkpoint of a different run (its "
                             "fingerprint differs)", path);
    return DPC_OK;
}

uint64_t dpc_params_hash(const double *v, size_t n)
{
    dpc__ck_fnv h = {DPC__CK_FNV0};
    if (v) dpc__ck_fnv_add(&h, v, n * sizeof(double));
    return h.h;
}
