/* ck_items.c — the configuration items a checkpoint records: one per option or input that
 * determines the values of a run (mechanism, sampler, privacy, optimizer, model, data, the
 * generator), each with the library's name of the parameter. Their hash is the run's fingerprint
 * (also compared across the ranks of a distributed run); stored in version-3 checkpoints, they
 * let a refused resume say which option or input changed. */
#include "common/util.h"
#include "train/train_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FNV0 0xcbf29ce484222325ull

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static ck_item *add(dpc__ck_items *s, const char *field, const char *what, ck_kind kind)
{
    if (s->n >= CK_MAX_ITEMS) { /* the trainer's list is shorter; a container's caller is told */
        s->overflow = 1;
        return NULL;
    }
    ck_item *i = &s->it[s->n++];
    memset(i, 0, sizeof *i);
    snprintf(i->field, sizeof i->field, "%s", field);
    snprintf(i->what, sizeof i->what, "%s", what);
    i->kind = (uint32_t)kind;
    return i;
}

void dpc__ck_num(dpc__ck_items *s, const char *field, const char *what, double v)
{
    ck_item *i = add(s, field, what, CK_NUM);
    if (i) i->num = v;
}

void dpc__ck_count(dpc__ck_items *s, const char *field, const char *what, uint64_t v)
{
    ck_item *i = add(s, field, what, CK_COUNT);
    if (i) i->count = v;
}

void dpc__ck_str(dpc__ck_items *s, const char *field, const char *what, const char *v)
{
    ck_item *i = add(s, field, what, CK_STR);
    if (!i) return;
    snprintf(i->str, sizeof i->str, "%s", v ? v : "");
    i->count = fnv(FNV0, v ? v : "", v ? strlen(v) : 0); /* the whole string, cut or not */
}

void dpc__ck_hash(dpc__ck_items *s, const char *field, const char *what, const void *p, size_t bytes)
{
    ck_item *i = add(s, field, what, CK_HASH);
    if (!i) return;
    uint64_t b = bytes;
    i->count = fnv(fnv(FNV0, &b, sizeof b), p, p ? bytes : 0);
}

/* Whether a field of a table is a checkpoint item: a parameter that changes a value of the run. */
static int recorded(const dpc_field *f)
{
    return f->type != DPC_FIELD_STRUCT &&
           !(f->flags & (DPC_FIELD_RUNTIME | DPC_FIELD_UNRECORDED | DPC_FIELD_DERIVED));
}

/* An int-sized field (INT, BOOL, ENUM) as the count it was always recorded as. */
static uint64_t int_count(const dpc_field *f, const void *base)
{
    int v;
    memcpy(&v, (const char *)base + f->offset, sizeof v);
    return (uint64_t)v;
}

/* The bytes of a mechanism's array (the table does not know their lengths). */
static size_t mech_array_bytes(const dpc_mech_params *mp, const char *name)
{
    if (!strcmp(name, "theta") || !strcmp(name, "omega")) return mp->nbuf * sizeof(double);
    if (!strcmp(name, "coeffs")) return mp->ncoeffs * sizeof(double);
    return mp->dense ? mp->steps * mp->steps * sizeof(double) : 0; /* dense */
}

/* One item per recorded field of the mechanism's table, in table order, named "mech.X". */
static void mech_items(dpc__ck_items *s, const dpc_trainer *tr)
{
    const dpc_mech_params *mp = dpc_mech_get_params(tr->mech);
    const dpc_field_table *t = dpc_mech_params_fields();
    for (size_t i = 0; i < t->count; i++) {
        const dpc_field *f = &t->fields[i];
        if (!recorded(f)) continue;
        char name[CK_FIELD_LEN];
        snprintf(name, sizeof name, "mech.%s", f->name);
        const char *what = f->label ? f->label : f->name;
        if (f->type == DPC_FIELD_ENUM) {
            dpc__ck_str(s, name, what, dpc_field_enum_name(f, (int)int_count(f, mp)));
        } else if (f->type == DPC_FIELD_POINTER) {
            const void *p;
            memcpy(&p, (const char *)mp + f->offset, sizeof p);
            dpc__ck_hash(s, name, what, p, mech_array_bytes(mp, f->name));
        } else if (f->type == DPC_FIELD_DOUBLE) {
            dpc__ck_num(s, name, what, dpc_field_get(f, mp));
        } else if (f->type == DPC_FIELD_SIZE) {
            dpc__ck_count(s, name, what, (uint64_t)dpc_field_get(f, mp));
        } else {
            dpc__ck_count(s, name, what, int_count(f, mp));
        }
    }
}

/* One item per recorded field of dpc_train_config's table, in table order (the mechanism after
 * them); the sampler by name, groups as the sampler runs them, and the sampler's scheme where
 * it matters. */
static void config_items(dpc__ck_items *s, const dpc_trainer *tr)
{
    const dpc_train_config *c = &tr->cfg;
    const dpc_field_table *t = dpc_train_config_fields();
    for (size_t i = 0; i < t->count; i++) {
        const dpc_field *f = &t->fields[i];
        if (!recorded(f) || f->type == DPC_FIELD_POINTER) continue;
        const char *what = f->label ? f->label : f->name;
        if (!strcmp(f->name, "sampler")) { /* an int: AUTO (99) is resolved before a run */
            dpc__ck_str(s, f->name, what, dpc_sampler_kind_name(c->sampler));
        } else if (!strcmp(f->name, "groups")) {
            dpc__ck_count(s, f->name, what, dpc_sampler_get_config(tr->sampler)->groups);
            /* the Poisson kinds' batches changed with scheme 2: recorded, an older file is
             * refused */
            if (dpc__ck_scheme_matters(c->sampler))
                dpc__ck_count(s, "sampler", "sampler scheme", DPC_SAMPLER_SCHEME);
        } else if (f->type == DPC_FIELD_ENUM) {
            dpc__ck_str(s, f->name, what, dpc_field_enum_name(f, (int)int_count(f, c)));
        } else if (f->type == DPC_FIELD_DOUBLE) {
            dpc__ck_num(s, f->name, what, dpc_field_get(f, c));
        } else if (f->type == DPC_FIELD_SIZE) {
            dpc__ck_count(s, f->name, what, (uint64_t)dpc_field_get(f, c));
        } else {
            dpc__ck_count(s, f->name, what, int_count(f, c));
        }
    }
}

size_t dpc__train_items(const dpc_trainer *tr, ck_item *out)
{
    dpc__ck_items s = {out, 0, 0};
    /* the options first, then what they derive (the steps from epochs and batch, the noise) */
    config_items(&s, tr);
    mech_items(&s, tr);
    dpc__ck_num(&s, "noise_multiplier", "noise std (calibrated)", tr->noise_scale);
    char spec[DPC_MODEL_SPEC_LEN];
    dpc_model_format_spec(dpc_model_get_config(tr->model), spec, sizeof spec);
    dpc__ck_str(&s, "model", "model", spec);
    dpc__ck_count(&s, "model", "parameters", tr->P);
    dpc__ck_str(&s, "data", "training data source", tr->train->source);
    dpc__ck_str(&s, "data", "training data preprocessing", tr->train->preprocessing);
    dpc__ck_count(&s, "data", "training examples", dpc_dataset_rows(tr->train));
    dpc__ck_count(&s, "data", "features", tr->train->d);
    dpc__ck_count(&s, "data", "training data content", tr->train_hash);
    dpc__ck_rng_items(&s, &tr->rng);
    return s.n;
}

void dpc__ck_rng_items(dpc__ck_items *s, const dpc_rng *rng)
{
    dpc__ck_str(s, "rng", "randomness", dpc_rng_mode_name(rng->mode));
    dpc__ck_count(s, "seed", "seed", rng->mode == DPC_RNG_SEEDED ? rng->seed : 0);
    dpc__ck_hash(s, "rng", "generator key", rng->key, sizeof rng->key);
    if (rng->mode == DPC_RNG_SECURE)
        dpc__ck_hash(s, "rng", "secure key", rng->skey, sizeof rng->skey);
}

void dpc__ck_item_pack(const ck_item *it, unsigned char *b)
{
    memset(b, 0, CK_ITEM_BYTES);
    memcpy(b, it->field, CK_FIELD_LEN);
    memcpy(b + CK_FIELD_LEN, it->what, CK_WHAT_LEN);
    unsigned char *p = b + CK_FIELD_LEN + CK_WHAT_LEN;
    memcpy(p, &it->kind, 4);
    if (it->kind == CK_NUM) memcpy(p + 4, &it->num, 8);
    else memcpy(p + 4, &it->count, 8);
    memcpy(p + 12, it->str, CK_STR_LEN);
}

/* a NUL-terminated string of at most len - 1 bytes, no control bytes */
static int clean_str(const char *s, size_t len)
{
    size_t n = strnlen(s, len);
    if (n == len) return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) return 0;
    return 1;
}

int dpc__ck_item_unpack(const unsigned char *b, ck_item *it)
{
    memset(it, 0, sizeof *it);
    memcpy(it->field, b, CK_FIELD_LEN);
    memcpy(it->what, b + CK_FIELD_LEN, CK_WHAT_LEN);
    const unsigned char *p = b + CK_FIELD_LEN + CK_WHAT_LEN;
    memcpy(&it->kind, p, 4);
    if (it->kind == CK_NUM) memcpy(&it->num, p + 4, 8);
    else memcpy(&it->count, p + 4, 8);
    memcpy(it->str, p + 12, CK_STR_LEN);
    return it->kind >= CK_NUM && it->kind <= CK_HASH && it->field[0] &&
           clean_str(it->field, CK_FIELD_LEN) && clean_str(it->what, CK_WHAT_LEN) &&
           clean_str(it->str, CK_STR_LEN);
}

uint64_t dpc__train_items_hash(const ck_item *it, size_t n)
{
    unsigned char b[CK_ITEM_BYTES];
    uint64_t h = fnv(FNV0, "dpcorr-run-v3", 14);
    for (size_t i = 0; i < n; i++) {
        dpc__ck_item_pack(&it[i], b);
        h = fnv(h, b, sizeof b);
    }
    return h;
}

uint64_t dpc__train_fingerprint(const dpc_trainer *tr)
{
    ck_item it[CK_MAX_ITEMS];
    size_t n = dpc__train_items(tr, it);
    return dpc__train_items_hash(it, n);
}

static int same(const ck_item *a, const ck_item *b)
{
    if (a->kind != b->kind) return 0;
    if (a->kind == CK_NUM) return memcmp(&a->num, &b->num, sizeof a->num) == 0;
    return a->count == b->count;
}

static void show(const ck_item *i, char *buf, size_t len)
{
    switch (i->kind) {
    case CK_NUM: /* the shortest form that reads back the same double */
        for (int prec = 6; prec <= 17; prec++) {
            snprintf(buf, len, "%.*g", prec, i->num);
            if (strtod(buf, NULL) == i->num || isnan(i->num)) break;
        }
        break;
    case CK_COUNT: snprintf(buf, len, "%llu", (unsigned long long)i->count); break;
    case CK_STR: snprintf(buf, len, "'%s'", i->str); break;
    default: snprintf(buf, len, "%016llx", (unsigned long long)i->count); break;
    }
}

const char *dpc__ck_items_kind(const ck_item *it, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (it[i].kind == CK_STR && !strcmp(it[i].field, "algorithm")) return it[i].str;
    return "dp-ftrl";
}

int dpc__ck_scheme_matters(dpc_sampler_kind kind)
{
    return kind == DPC_SAMPLER_POISSON || kind == DPC_SAMPLER_CYCLIC_POISSON;
}

static const char *scheme_name(uint64_t v)
{
    switch (v) {
    case 1: return " (per-example draws at every step)";
    case 2: return " (a binomial batch size, then that many distinct uniform examples)";
    default: return "";
    }
}

dpc_status dpc__ck_scheme_refused(uint64_t was, const char *path, dpc_error *err)
{
    return dpc_error_param(err, DPC_E_STATE, "sampler",
                           "the checkpoint %s was written by sampler scheme %llu%s; this build "
                           "samples by scheme %d%s; resume is not possible (the batches of the "
                           "remaining steps would not be those of the run); restart the run",
                           path, (unsigned long long)was, scheme_name(was), DPC_SAMPLER_SCHEME,
                           scheme_name(DPC_SAMPLER_SCHEME));
}

dpc_status dpc__ck_items_diff(const ck_item *ck, size_t nck, const ck_item *run, size_t nrun,
                              const char *path, dpc_error *err)
{
    const char *kc = dpc__ck_items_kind(ck, nck), *kr = dpc__ck_items_kind(run, nrun);
    if (strcmp(kc, kr))
        return dpc_error_param(err, DPC_E_STATE, "algorithm", "the checkpoint %s is of a %s run, "
                               "this run is %s", path, kc, kr);
    for (size_t i = 0; i < nrun; i++) {
        const ck_item *a = NULL;
        for (size_t j = 0; j < nck && !a; j++)
            if (!strcmp(ck[j].field, run[i].field) && !strcmp(ck[j].what, run[i].what)) a = &ck[j];
        if (a && same(a, &run[i])) continue;
        if (!strcmp(run[i].what, "sampler scheme")) /* absent: written before scheme 2 */
            return dpc__ck_scheme_refused(a ? a->count : 1, path, err);
        if (!a)
            return dpc_error_param(err, DPC_E_STATE, run[i].field,
                                   "%s: the checkpoint %s does not record it (another version "
                                   "of dpcorr?)", run[i].what, path);
        if (a->kind == CK_HASH || (a->kind == CK_COUNT && strstr(a->what, "content")))
            return dpc_error_param(err, DPC_E_STATE, run[i].field,
                                   "%s changed since the checkpoint %s was written", run[i].what,
                                   path);
        char was[160], now[160];
        show(a, was, sizeof was);
        show(&run[i], now, sizeof now);
        return dpc_error_param(err, DPC_E_STATE, run[i].field,
                               "%s: the checkpoint %s has %s, this run has %s", run[i].what, path,
                               was, now);
    }
    return DPC_OK;
}

/* ---- history -------------------------------------------------------------------------------- */

dpc_status dpc_trainer_record(dpc_trainer *tr, const dpc_train_record *r, dpc_error *err)
{
    if (!tr || !r) return dpc_error_param(err, DPC_E_INVALID, tr ? "r" : "tr", "NULL");
    size_t last = tr->nhist ? tr->hist[tr->nhist - 1].step : 0;
    if (r->step == 0 || r->step > tr->t || r->step <= last)
        return dpc_error_param(err, DPC_E_INVALID, "step",
                               "%zu must be in (%zu, %zu] (after the last record, at most the "
                               "steps done)", r->step, last, tr->t);
    if (tr->nhist == tr->hist_cap) {
        size_t cap = tr->hist_cap ? 2 * tr->hist_cap : 16;
        dpc_train_record *h = realloc(tr->hist, cap * sizeof *h);
        if (!h) return DPC__NOMEM(err, "history records");
        tr->hist = h;
        tr->hist_cap = cap;
    }
    tr->hist[tr->nhist++] = *r;
    return DPC_OK;
}

const dpc_train_record *dpc_trainer_records(const dpc_trainer *tr, size_t *n)
{
    if (n) *n = tr ? tr->nhist : 0;
    return tr ? tr->hist : NULL;
}

/* ---- version 2 ------------------------------------------------------------------------------ */

static uint64_t f_num(uint64_t h, double x) { return fnv(h, &x, sizeof x); }
static uint64_t f_size(uint64_t h, size_t x)
{
    uint64_t v = x;
    return fnv(h, &v, sizeof v);
}
static uint64_t f_str(uint64_t h, const char *s) { return fnv(h, s, strlen(s) + 1); }

/* Version 2's fingerprint: every field of the mechanism's table (the counts too, arrays without
 * their lengths), then the recorded fields of dpc_train_config in table order with enums as
 * their values and the calibrated noise after noise_multiplier; the bytes of that order are
 * what version 2 files hold. */
static uint64_t v2_config(uint64_t h, const dpc_trainer *tr)
{
    const dpc_train_config *c = &tr->cfg;
    const dpc_field_table *t = dpc_train_config_fields();
    for (size_t i = 0; i < t->count; i++) {
        const dpc_field *f = &t->fields[i];
        if (!recorded(f) || f->type == DPC_FIELD_POINTER) continue;
        if (!strcmp(f->name, "groups")) {
            h = f_size(h, dpc_sampler_get_config(tr->sampler)->groups);
        } else if (!strcmp(f->name, "precision")) {
            if (c->precision != DPC_PRECISION_DOUBLE) /* (absent for double in version 2) */
                h = f_str(h, dpc_precision_name(c->precision));
        } else if (f->type == DPC_FIELD_DOUBLE) {
            h = f_num(h, dpc_field_get(f, c));
            if (!strcmp(f->name, "noise_multiplier")) h = f_num(h, tr->noise_scale);
        } else if (f->type == DPC_FIELD_SIZE) {
            h = f_size(h, (size_t)dpc_field_get(f, c));
        } else {
            h = f_size(h, (size_t)int_count(f, c));
        }
    }
    return h;
}

uint64_t dpc__train_fingerprint_v2(const dpc_trainer *tr)
{
    const dpc_mech_params *mp = dpc_mech_get_params(tr->mech);
    const dpc_field_table *mt = dpc_mech_params_fields();
    uint64_t h = f_str(FNV0, "dpcorr-run-v1");
    for (size_t i = 0; i < mt->count; i++) {
        const dpc_field *f = &mt->fields[i];
        if (f->type == DPC_FIELD_POINTER) {
            const void *p;
            memcpy(&p, (const char *)mp + f->offset, sizeof p);
            size_t bytes = mech_array_bytes(mp, f->name);
            if (bytes) h = fnv(h, p, bytes);
        } else if (f->type == DPC_FIELD_DOUBLE) {
            h = f_num(h, dpc_field_get(f, mp));
        } else if (f->type == DPC_FIELD_SIZE) {
            h = f_size(h, (size_t)dpc_field_get(f, mp));
        } else {
            h = f_size(h, (size_t)int_count(f, mp));
        }
    }
    h = v2_config(h, tr);
    char spec[DPC_MODEL_SPEC_LEN];
    dpc_model_format_spec(dpc_model_get_config(tr->model), spec, sizeof spec);
    h = f_str(h, spec);
    h = f_size(h, tr->P);
    h = f_size(h, dpc_dataset_rows(tr->train));
    h = f_size(h, tr->train->d);
    h = f_str(h, tr->train->source);
    h = f_str(h, tr->train->preprocessing);
    h = fnv(h, tr->rng.key, sizeof tr->rng.key);
    h = f_size(h, (size_t)tr->rng.mode);
    if (tr->rng.mode == DPC_RNG_SECURE) h = fnv(h, tr->rng.skey, sizeof tr->rng.skey);
    return h;
}
