/* apply.c — feature transforms of whole datasets: the --features spec, threads over example
 * ranges, and the on-disk cache (dpcorr/features.h). */
#include "dpcorr/features.h"
#include "common/util.h"
#include "field/field_def.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CACHE_MAGIC "DPCSCAT1"

/* The manual of dpc_features_config, one row per field in struct order (dpcorr/features.h). */
#define FC(m) DPC_FIELD_AT(dpc_features_config, m)
static const char *const fc_kind_names[] = {"none", "scatter"};
static const dpc_field fc_fields[] = {
    {.name = "kind", .type = DPC_FIELD_ENUM, FC(kind), .def = DPC_FEATURES_NONE,
     DPC_FIELD_NAMES(fc_kind_names), .doc = "none, or scatter (wavelet scattering features)"},
    {.name = "J", .type = DPC_FIELD_SIZE, FC(J), .def = 2, .lo = 1, .hi = DPC_SCATTER_MAX_J,
     .doc = "scatter: scales, 2^J <= the image's side (the output is 2^J times smaller)"},
    {.name = "L", .type = DPC_FIELD_SIZE, FC(L), .def = 8, .lo = 1, .hi = DPC_SCATTER_MAX_L,
     .doc = "scatter: angles"},
    {.name = "groups", .type = DPC_FIELD_SIZE, FC(groups), .lo = 1, .hi = 4096,
     .flags = DPC_FIELD_UNSET_ZERO, .def_text = "none",
     .doc = "per-example GroupNorm of the features in this many groups of whole channels "
            "(0: none)"},
    {.name = "center", .type = DPC_FIELD_DOUBLE, FC(center), .lo = 0, .hi = 1e6,
     .flags = DPC_FIELD_LO_OPEN | DPC_FIELD_UNSET_ZERO, .def_text = "none",
     .doc = "private centering with this noise multiplier, needs groups (0: none)"},
};
#undef FC
static const dpc_field_table fc_table = DPC_FIELD_TABLE(dpc_features_config, fc_fields);

const dpc_field_table *dpc_features_config_fields(void) { return &fc_table; }

/* One "key=value" of a features spec at p (keys J, L, gn: integers; center: a real). */
static dpc_status parse_key(dpc_features_config *c, const char *spec, const char **pp,
                            dpc_error *err)
{
    const char *p = *pp;
    static const char *const keys[] = {"J", "L", "gn", "center"};
    size_t k = 0, kl = 0;
    for (; k < 4; k++) {
        kl = strlen(keys[k]);
        if (!strncmp(p, keys[k], kl) && p[kl] == '=') break;
    }
    if (k == 4)
        return dpc_error_set(err, DPC_E_INVALID,
                             "features spec '%s': expected J=N, L=N, gn=G or center=Z at '%s'",
                             spec, p);
    char *end;
    errno = 0;
    if (k == 3) {
        double v = strtod(p + kl + 1, &end);
        if (end == p + kl + 1 || errno || !(v > 0) || !isfinite(v) || v > 1e6)
            return dpc_error_set(err, DPC_E_INVALID, "features spec '%s': center must be a "
                                 "noise multiplier in (0, 1e6]", spec);
        c->center = v;
    } else {
        unsigned long v = strtoul(p + kl + 1, &end, 10);
        if (end == p + kl + 1 || errno || v < 1 || v > (k == 2 ? 4096 : 64) ||
            !isdigit((unsigned char)p[kl + 1]))
            return dpc_error_set(err, DPC_E_INVALID, "features spec '%s': %s must be a small "
                                 "positive integer", spec, keys[k]);
        if (k == 0) c->J = v;
        else if (k == 1) c->L = v;
        else c->groups = v;
    }
    *pp = end;
    return DPC_OK;
}

dpc_status dpc_features_parse(dpc_features_config *cfg, const char *spec, dpc_error *err)
{
    if (!cfg || !spec) return dpc_error_set(err, DPC_E_INVALID, "features spec: NULL argument");
    dpc_features_config c;
    dpc_field_defaults(&fc_table, &c); /* none; scatter's J = 2, L = 8 when not given */
    if (!strcmp(spec, "none")) {
        *cfg = c;
        return DPC_OK;
    }
    size_t n = strcspn(spec, ":");
    if (n != 7 || memcmp(spec, "scatter", 7) != 0)
        return dpc_error_set(err, DPC_E_INVALID,
                             "features spec '%s': unknown transform (expected none or "
                             "scatter[:J=2,L=8][,gn=G][,center=Z])", spec);
    c.kind = DPC_FEATURES_SCATTER;
    const char *p = spec + n;
    while (*p == ':' || *p == ',') {
        p++;
        dpc_status st = parse_key(&c, spec, &p, err);
        if (st) return st;
    }
    if (*p)
        return dpc_error_set(err, DPC_E_INVALID, "features spec '%s': unexpected '%s'", spec, p);
    dpc_error range = {0}; /* the keys' own bounds are checked above: only J, L can fail */
    if (dpc_field_check(&fc_table, &c, &range))
        return dpc_error_set(err, DPC_E_INVALID, "features spec '%s': J <= %d and L <= %d", spec,
                             DPC_SCATTER_MAX_J, DPC_SCATTER_MAX_L);
    if (c.center > 0 && !c.groups)
        return dpc_error_set(err, DPC_E_INVALID, "features spec '%s': center needs gn=G (the "
                             "GroupNorm bounds every row's norm, the mean's sensitivity)", spec);
    *cfg = c;
    return DPC_OK;
}

size_t dpc_features_format(const dpc_features_config *cfg, char *buf, size_t cap)
{
    if (cfg->kind != DPC_FEATURES_SCATTER) {
        int n = snprintf(buf, cap, "none");
        return n < 0 ? 0 : (size_t)n;
    }
    char gn[32] = "", ce[48] = "";
    if (cfg->groups) snprintf(gn, sizeof gn, ",gn=%zu", cfg->groups);
    if (cfg->center > 0) snprintf(ce, sizeof ce, ",center=%.17g", cfg->center);
    int n = snprintf(buf, cap, "scatter:J=%zu,L=%zu%s%s", cfg->J, cfg->L, gn, ce);
    return n < 0 ? 0 : (size_t)n;
}

/* 64-bit hash of n words (FNV-style mixing of whole words; not cryptographic). */
static uint64_t hash_words(uint64_t h, const void *data, size_t bytes)
{
    const unsigned char *p = data;
    size_t i = 0;
    for (; i + 8 <= bytes; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0x100000001b3ull;
        h ^= h >> 29;
    }
    for (; i < bytes; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

typedef struct job {
    const dpc_scatter *s;
    const dpc_dataset *in;
    double *out;
    size_t i0, i1, C, HW, K;
    dpc_status st;
} job;

static void *run_job(void *a)
{
    job *j = a;
    double *scr = dpc__malloc_array(dpc_scatter_scratch_len(j->s), sizeof(double));
    if (!scr) {
        j->st = DPC_E_NOMEM;
        return NULL;
    }
    size_t d = j->in->d, kk, oh, ow;
    dpc_scatter_shape(j->s, &kk, &oh, &ow);
    size_t dout = j->C * kk * oh * ow;
    for (size_t i = j->i0; i < j->i1; i++)
        for (size_t c = 0; c < j->C; c++)
            dpc_scatter_apply(j->s, j->in->x + i * d + c * j->HW,
                              j->out + i * dout + c * kk * oh * ow, scr);
    free(scr);
    return NULL;
}

/* Computes the features of every example into out (n, dout) with T threads. */
static dpc_status compute(const dpc_scatter *s, const dpc_dataset *in, double *out, size_t T,
                          dpc_error *err)
{
    size_t C = in->shape[0], HW = in->shape[1] * in->shape[2], K;
    dpc_scatter_shape(s, &K, NULL, NULL);
    job jobs[64];
    pthread_t th[64];
    if (T > 64) T = 64;
    if (T > in->n) T = in->n ? in->n : 1;
    int started[64] = {0};
    for (size_t t = 0; t < T; t++) {
        jobs[t] = (job){s, in, out, in->n * t / T, in->n * (t + 1) / T, C, HW, K, DPC_OK};
        if (t > 0) started[t] = pthread_create(&th[t], NULL, run_job, &jobs[t]) == 0;
    }
    run_job(&jobs[0]);
    dpc_status st = jobs[0].st;
    for (size_t t = 1; t < T; t++) {
        if (started[t]) pthread_join(th[t], NULL);
        else run_job(&jobs[t]); /* could not start a thread: do its share here */
        if (jobs[t].st) st = jobs[t].st;
    }
    if (st) return DPC__NOMEM(err, "scattering scratch");
    return DPC_OK;
}

/* Reads the cache file into x (n, dout) if it matches; 1 on a hit. */
static int cache_read(const char *path, uint64_t key, size_t J, size_t L, size_t n, size_t dout,
                      double *x)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    char magic[8];
    uint64_t hdr[6];
    int ok = fread(magic, 1, 8, f) == 8 && !memcmp(magic, CACHE_MAGIC, 8) &&
             fread(hdr, sizeof hdr[0], 6, f) == 6 && hdr[0] == key && hdr[1] == J && hdr[2] == L &&
             hdr[3] == n && hdr[4] == dout && fread(x, sizeof *x, n * dout, f) == n * dout &&
             fgetc(f) == EOF && hash_words(key, x, n * dout * sizeof *x) == hdr[5];
    fclose(f);
    return ok;
}

static void cache_write(const char *dir, const char *path, uint64_t key, size_t J, size_t L,
                        size_t n, size_t dout, const double *x)
{
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) return;
    char tmp[4200];
    if (snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid()) >= (int)sizeof tmp) return;
    FILE *f = fopen(tmp, "wb");
    if (!f) return;
    uint64_t hdr[6] = {key, J, L, n, dout, hash_words(key, x, n * dout * sizeof *x)};
    int ok = fwrite(CACHE_MAGIC, 1, 8, f) == 8 && fwrite(hdr, sizeof hdr[0], 6, f) == 6 &&
             fwrite(x, sizeof *x, n * dout, f) == n * dout;
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) remove(tmp);
}

dpc_status dpc_features_apply(dpc_dataset **out, const dpc_dataset *in,
                              const dpc_features_config *cfg, const char *cache_dir,
                              size_t threads, int *cache_hit, dpc_error *err)
{
    if (!out || !in || !cfg) return dpc_error_set(err, DPC_E_INVALID, "features: NULL argument");
    *out = NULL;
    if (cache_hit) *cache_hit = 0;
    if (cfg->kind != DPC_FEATURES_SCATTER)
        return dpc_error_param(err, DPC_E_INVALID, "kind", "unknown features kind %d",
                               (int)cfg->kind);
    dpc_status st = dpc_field_check(&fc_table, cfg, err); /* J, L, groups, center */
    if (st) return st;
    if (threads < 1) return dpc_error_param(err, DPC_E_INVALID, "threads", "must be >= 1");
    size_t C = in->shape[0], H = in->shape[1], W = in->shape[2];
    if (!C || !H || !W || C * H * W != in->d)
        return dpc_error_set(err, DPC_E_INVALID, "features: %s is not an image dataset (no "
                             "shape C x H x W)", in->source);
    dpc_scatter *s = NULL;
    st = dpc_scatter_new(&s, H, W, cfg->J, cfg->L, err);
    if (st) return dpc_error_nest(err, "features");
    size_t K, oh, ow;
    dpc_scatter_shape(s, &K, &oh, &ow);
    dpc_dataset *ds = NULL;
    st = dpc_dataset_new(&ds, in->n, C * K * oh * ow, in->n_classes, err);
    if (st) goto done;
    memcpy(ds->y, in->y, in->n * sizeof *ds->y);
    ds->data_dependent = in->data_dependent;
    ds->shape[0] = C * K, ds->shape[1] = oh, ds->shape[2] = ow;
    snprintf(ds->source, sizeof ds->source, "%s", in->source);
    memcpy(ds->preprocessing, in->preprocessing, sizeof ds->preprocessing);
    ds->n_releases = in->n_releases;
    memcpy(ds->release_z, in->release_z, sizeof ds->release_z);
    size_t pl = strlen(ds->preprocessing), room = sizeof ds->preprocessing - pl;
    int wr = snprintf(ds->preprocessing + pl, room, "%sscattering J=%zu L=%zu (%zu x %zu x %zu)",
                      pl ? "; " : "", cfg->J, cfg->L, C * K, oh, ow);
    (void)wr; /* truncation of the log is harmless */
    uint64_t key = hash_words(0xcbf29ce484222325ull ^ (cfg->J << 8) ^ cfg->L, in->shape,
                              sizeof in->shape);
    key = hash_words(key, in->x, in->n * in->d * sizeof(double));
    key = hash_words(key, in->y, in->n * sizeof(double));
    char path[4096];
    int have_path = cache_dir && snprintf(path, sizeof path, "%s/scatter-J%zu-L%zu-%016llx.bin",
                                          cache_dir, cfg->J, cfg->L,
                                          (unsigned long long)key) < (int)sizeof path;
    if (have_path && cache_read(path, key, cfg->J, cfg->L, ds->n, ds->d, ds->x)) {
        if (cache_hit) *cache_hit = 1;
        goto done;
    }
    st = compute(s, in, ds->x, threads, err);
    if (!st && have_path) cache_write(cache_dir, path, key, cfg->J, cfg->L, ds->n, ds->d, ds->x);
done:
    if (!st && cfg->groups) {
        st = dpc_features_group_norm(ds, cfg->groups, err);
        if (st) st = dpc_error_nest(err, "features");
    }
    dpc_scatter_free(s);
    if (st) dpc_dataset_free(ds);
    else *out = ds;
    return st;
}
