/* spec.c — the --data spec parser: "KIND[:ITEM,ITEM,...]" where the first ITEM may be
 * positional (a path or generator name) and the others are key=value. See dpc_data_spec_help. */
#include "data/internal.h"
#include "common/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPEC_MAX_ITEMS 32

static const char HELP[] =
    "Data specs: KIND[:ITEM,ITEM,...]; the first ITEM may be positional, the rest are key=value.\n"
    "  fashion-mnist[:dir=DIR,part=train|test]   Fashion-MNIST (default "
    "dir " DPC_DATA_FASHION_MNIST_DIR ");\n"
    "                     train = 60000 x 784, test = the t10k split; pixels / 255\n"
    "  idx:IMAGES,labels=LABELS[,test=IMAGES,test-labels=LABELS,scale=C,classes=K]\n"
    "  csv:PATH[,header=auto|yes|no,label=INDEX|NAME,delim=comma|tab|semicolon|space|pipe|C,\n"
    "           task=regression|classification,classes=K|NAME|NAME...,test=PATH]\n"
    "  libsvm:PATH[,d=N,task=regression|classification,classes=K,test=PATH]\n"
    "  npy:X.npy,labels=Y.npy[,task=regression|classification,classes=K,test=X.npy,\n"
    "           test-labels=Y.npy]   NumPy arrays: X 2-D '<f8'/'<f4' (C order), Y 1-D; mapped\n"
    "  synthetic:linreg[,n=1000,d=10,alpha=1|kappa=K,noise=0.1]   x ~ N(0, diag(k^-alpha))\n"
    "  synthetic:mean[,n=1000,d=1,spread=0.5,radius=1]             bounded mean estimation\n"
    "  synthetic:logistic[,n=1000,d=10,margin=0.1,flip=0]          separable with a margin\n"
    "     (synthetic: also test-n=N fresh test examples, stream=S data stream index)\n"
    "Common: limit=N, test-limit=N (first N examples), holdout=F|N (F in (0,1): fraction, else a\n"
    "  count, held out as the test set), holdout-mode=random|last, split-stream=S,\n"
    "  scale=C (features * C), clip=R / normalize=R (rows to L2 norm <= R / = R),\n"
    "  standardize=1 (train mean/std: DATA-DEPENDENT, outside the privacy guarantee).\n"
    "Paths cannot contain ','. Files may be gzip-compressed.\n";

const char *dpc_data_spec_help(void) { return HELP; }

typedef struct spec_item {
    const char *key, *val;
    int used;
} spec_item;

typedef struct spec {
    char *buf;
    const char *kind;
    const char *pos; /* positional first item or NULL */
    spec_item it[SPEC_MAX_ITEMS];
    size_t n;
} spec;

static dpc_status spec_parse(spec *s, const char *text, dpc_error *err)
{
    memset(s, 0, sizeof *s);
    size_t len = strlen(text);
    s->buf = malloc(len + 1);
    if (!s->buf) return DPC__NOMEM(err, "data spec");
    memcpy(s->buf, text, len + 1);
    char *colon = strchr(s->buf, ':');
    s->kind = s->buf;
    if (!colon) return DPC_OK;
    *colon = '\0';
    char *p = colon + 1;
    for (int first = 1;; first = 0) {
        char *comma = strchr(p, ',');
        if (comma) *comma = '\0';
        char *eq = strchr(p, '=');
        if (!*p) return dpc_error_set(err, DPC_E_INVALID, "data spec: empty item in '%s'", text);
        if (!eq) {
            if (!first)
                return dpc_error_set(err, DPC_E_INVALID,
                                     "data spec: '%s' is not key=value (only the first item may "
                                     "be a path or name)",
                                     p);
            s->pos = p;
        } else {
            *eq = '\0';
            if (!*p) return dpc_error_set(err, DPC_E_INVALID, "data spec: empty key in '%s'", text);
            for (size_t k = 0; k < s->n; k++)
                if (!strcmp(s->it[k].key, p))
                    return dpc_error_set(err, DPC_E_INVALID, "data spec: option '%s' given twice",
                                         p);
            if (s->n == SPEC_MAX_ITEMS)
                return dpc_error_set(err, DPC_E_INVALID, "data spec: more than %d options",
                                     SPEC_MAX_ITEMS);
            s->it[s->n].key = p;
            s->it[s->n].val = eq + 1;
            s->n++;
        }
        if (!comma) return DPC_OK;
        p = comma + 1;
    }
}

static const char *opt_str(spec *s, const char *key)
{
    for (size_t k = 0; k < s->n; k++)
        if (!strcmp(s->it[k].key, key)) {
            s->it[k].used = 1;
            return s->it[k].val;
        }
    return NULL;
}

static dpc_status parse_size(const char *key, const char *v, size_t *out, dpc_error *err)
{
    char *end;
    errno = 0;
    unsigned long long u = (*v >= '0' && *v <= '9') ? strtoull(v, &end, 10) : 0;
    if (!(*v >= '0' && *v <= '9') || *end || errno == ERANGE || u > SIZE_MAX)
        return dpc_error_set(err, DPC_E_INVALID,
                             "data spec: %s: expected a non-negative integer, got '%s'", key, v);
    *out = (size_t)u;
    return DPC_OK;
}

static dpc_status opt_size(spec *s, const char *key, size_t def, size_t *out, dpc_error *err)
{
    const char *v = opt_str(s, key);
    *out = def;
    return v ? parse_size(key, v, out, err) : DPC_OK;
}

static dpc_status opt_double(spec *s, const char *key, double def, double *out, dpc_error *err)
{
    const char *v = opt_str(s, key);
    *out = def;
    if (!v) return DPC_OK;
    if (dpc__parse_double(v, out))
        return dpc_error_set(err, DPC_E_INVALID,
                             "data spec: %s: expected a finite number, got '%s'", key, v);
    return DPC_OK;
}

/* One of the words in names (NULL-terminated); *out = its index; absent = def. */
static dpc_status opt_word(spec *s, const char *key, const char *const *names, int def, int *out,
                           dpc_error *err)
{
    const char *v = opt_str(s, key);
    *out = def;
    if (!v) return DPC_OK;
    for (int k = 0; names[k]; k++)
        if (!strcmp(v, names[k])) {
            *out = k;
            return DPC_OK;
        }
    return dpc_error_set(err, DPC_E_INVALID, "data spec: %s: unknown value '%s'", key, v);
}

/* Keys each kind accepts (besides the common ones), checked before anything is loaded so that
 * a misspelt option fails fast. */
static const char *const COMMON_KEYS[] = {"limit",        "test-limit", "holdout", "holdout-mode",
                                          "split-stream", "scale",      "clip",    "normalize",
                                          "standardize",  NULL};
static const struct {
    const char *kind, *pos; /* pos: the positional item (synthetic generator) or NULL = any */
    const char *keys[12];
} KIND_KEYS[] = {
    {"fashion-mnist", NULL, {"dir", "part", NULL}},
    {"idx", NULL, {"labels", "test", "test-labels", "classes", "task", NULL}},
    {"csv", NULL, {"header", "label", "delim", "task", "classes", "test", NULL}},
    {"libsvm", NULL, {"d", "task", "classes", "test", NULL}},
    {"npy", NULL, {"labels", "test", "test-labels", "task", "classes", NULL}},
    {"synthetic", "linreg", {"n", "d", "test-n", "stream", "alpha", "kappa", "noise", NULL}},
    {"synthetic", "mean", {"n", "d", "test-n", "stream", "radius", "spread", NULL}},
    {"synthetic", "logistic", {"n", "d", "test-n", "stream", "margin", "flip", NULL}},
};

static int in_list(const char *const *list, const char *key)
{
    for (size_t k = 0; list[k]; k++)
        if (!strcmp(list[k], key)) return 1;
    return 0;
}

static dpc_status spec_check_keys(const spec *s, dpc_error *err)
{
    for (size_t t = 0; t < sizeof KIND_KEYS / sizeof KIND_KEYS[0]; t++) {
        if (strcmp(KIND_KEYS[t].kind, s->kind)) continue;
        if (KIND_KEYS[t].pos && (!s->pos || strcmp(KIND_KEYS[t].pos, s->pos))) continue;
        for (size_t k = 0; k < s->n; k++)
            if (!in_list(COMMON_KEYS, s->it[k].key) && !in_list(KIND_KEYS[t].keys, s->it[k].key))
                return dpc_error_set(
                    err, DPC_E_INVALID, "data spec: unknown option '%s' for %s%s%s", s->it[k].key,
                    s->kind, KIND_KEYS[t].pos ? ":" : "", KIND_KEYS[t].pos ? KIND_KEYS[t].pos : "");
        return DPC_OK;
    }
    return DPC_OK; /* unknown kind or generator: reported by the loader */
}

static dpc_status spec_finish(const spec *s, dpc_error *err)
{
    for (size_t k = 0; k < s->n; k++)
        if (!s->it[k].used)
            return dpc_error_set(err, DPC_E_INVALID, "data spec: unknown option '%s' for %s",
                                 s->it[k].key, s->kind);
    return DPC_OK;
}

/* task=..., classes=K|names: fills task, n_classes and (csv only) names. */
static dpc_status opt_task(spec *s, int allow_names, dpc_data_task *task, size_t *k,
                           const char **names, dpc_error *err)
{
    static const char *const tasks[] = {"regression", "classification", NULL};
    int t;
    dpc_status st = opt_word(s, "task", tasks, -1, &t, err);
    if (st) return st;
    const char *c = opt_str(s, "classes");
    *k = 0;
    if (names) *names = NULL;
    if (c) {
        if (t == 0)
            return dpc_error_set(err, DPC_E_INVALID, "data spec: classes= with task=regression");
        t = 1;
        if (*c >= '0' && *c <= '9' && strspn(c, "0123456789") == strlen(c)) {
            st = parse_size("classes", c, k, err);
            if (st) return st;
            if (*k < 1 || *k > DPC_DATA_MAX_CLASSES)
                return dpc_error_set(err, DPC_E_INVALID, "data spec: classes=%s not in 1..%d", c,
                                     DPC_DATA_MAX_CLASSES);
        } else if (allow_names) {
            *names = c;
        } else {
            return dpc_error_set(err, DPC_E_INVALID,
                                 "data spec: classes: expected a class count, got '%s'", c);
        }
    }
    *task = t == 1 ? DPC_TASK_CLASSIFICATION : DPC_TASK_REGRESSION;
    return DPC_OK;
}

/* ==== Kinds ================================================================================= */

typedef struct loaded {
    dpc_dataset *train, *test;
    int has_test; /* the spec names a test set (loaded only if the caller wants it) */
} loaded;

static dpc_status need_path(const spec *s, dpc_error *err)
{
    if (!s->pos || !*s->pos)
        return dpc_error_set(err, DPC_E_INVALID, "data spec: %s needs a path (%s:PATH)", s->kind,
                             s->kind);
    return DPC_OK;
}

static dpc_status load_fashion(spec *s, loaded *L, int want_test, size_t lim, size_t tlim,
                               dpc_error *err)
{
    static const char *const parts[] = {"train", "test", NULL};
    if (s->pos)
        return dpc_error_set(err, DPC_E_INVALID, "data spec: fashion-mnist takes dir=DIR, not '%s'",
                             s->pos);
    const char *dir = opt_str(s, "dir");
    int part;
    dpc_status st = opt_word(s, "part", parts, 0, &part, err);
    if (st) return st;
    L->has_test = part == 0;
    st = dpc__load_fm_part(&L->train, dir, part, lim, err);
    if (!st && want_test && part == 0) st = dpc__load_fm_part(&L->test, dir, 1, tlim, err);
    return st;
}

static dpc_status load_idx_kind(spec *s, loaded *L, int want_test, size_t lim, size_t tlim,
                                dpc_error *err)
{
    dpc_status st = need_path(s, err);
    if (st) return st;
    const char *labels = opt_str(s, "labels"), *test = opt_str(s, "test");
    const char *tlabels = opt_str(s, "test-labels");
    dpc_idx_opts o = {.max_records = lim};
    dpc_data_task task;
    if ((st = opt_double(s, "scale", 0, &o.scale, err))) return st;
    if ((st = opt_task(s, 0, &task, &o.n_classes, NULL, err))) return st;
    if (task == DPC_TASK_REGRESSION && opt_str(s, "task"))
        return dpc_error_set(err, DPC_E_INVALID, "data spec: idx labels are classes");
    if (!labels) return dpc_error_set(err, DPC_E_INVALID, "data spec: idx needs labels=PATH");
    if (!test != !tlabels)
        return dpc_error_set(err, DPC_E_INVALID,
                             "data spec: idx test= and test-labels= go together");
    if (!(o.scale >= 0)) return dpc_error_set(err, DPC_E_INVALID, "data spec: scale must be > 0");
    L->has_test = test != NULL;
    st = dpc_data_load_idx(&L->train, s->pos, labels, &o, err);
    if (!st && want_test && test) {
        o.max_records = tlim;
        if (!o.n_classes) o.n_classes = L->train->n_classes;
        st = dpc_data_load_idx(&L->test, test, tlabels, &o, err);
    }
    return st;
}

static dpc_status load_csv_kind(spec *s, loaded *L, int want_test, size_t lim, size_t tlim,
                                dpc_error *err)
{
    static const char *const headers[] = {"auto", "yes", "no", NULL};
    dpc_status st = need_path(s, err);
    if (st) return st;
    dpc_csv_opts o = dpc_csv_opts_default();
    o.max_rows = lim;
    int h;
    if ((st = opt_word(s, "header", headers, 0, &h, err))) return st;
    o.header = h == 1 ? DPC_CSV_HEADER_YES : h == 2 ? DPC_CSV_HEADER_NO : DPC_CSV_HEADER_AUTO;
    const char *dl = opt_str(s, "delim");
    if (dl) { /* the words of the table's CHAR row (dpc_field_parse_char) */
        int dc;
        if (dpc_field_parse_char(dpc_field_find(dpc_csv_opts_fields(), "delimiter", NULL), dl,
                                 &dc, NULL))
            return dpc_error_set(err, DPC_E_INVALID,
                                 "data spec: delim: expected comma, tab, semicolon, space, pipe, "
                                 "one character or 0xNN, got '%s'",
                                 dl);
        o.delimiter = (char)dc;
    }
    const char *lab = opt_str(s, "label");
    if (lab) {
        const char *q = lab + (*lab == '-');
        if (*q && strspn(q, "0123456789") == strlen(q)) {
            char *end;
            errno = 0;
            long v = strtol(lab, &end, 10);
            if (errno == ERANGE)
                return dpc_error_set(err, DPC_E_INVALID, "data spec: label: '%s' too large", lab);
            o.label_col = v;
        } else {
            o.label_name = lab;
        }
    }
    if ((st = opt_task(s, 1, &o.task, &o.n_classes, &o.classes, err))) return st;
    const char *test = opt_str(s, "test");
    L->has_test = test != NULL;
    st = dpc_data_load_csv(&L->train, s->pos, &o, err);
    if (!st && want_test && test) {
        o.max_rows = tlim;
        if (L->train->n_classes && !o.classes) o.n_classes = L->train->n_classes;
        st = dpc_data_load_csv(&L->test, test, &o, err);
    }
    return st;
}

static dpc_status load_libsvm_kind(spec *s, loaded *L, int want_test, size_t lim, size_t tlim,
                                   dpc_error *err)
{
    dpc_status st = need_path(s, err);
    if (st) return st;
    dpc_libsvm_opts o = {.max_rows = lim};
    if ((st = opt_size(s, "d", 0, &o.d, err))) return st;
    if ((st = opt_task(s, 0, &o.task, &o.n_classes, NULL, err))) return st;
    const char *test = opt_str(s, "test");
    L->has_test = test != NULL;
    st = dpc_data_load_libsvm(&L->train, s->pos, &o, err);
    if (!st && want_test && test) {
        o.max_rows = tlim;
        o.d = L->train->d;
        if (L->train->n_classes) o.n_classes = L->train->n_classes;
        st = dpc_data_load_libsvm(&L->test, test, &o, err);
    }
    return st;
}

/* ==== Shards ================================================================================ */

/* Rank sh->rank's rows of a training set of N rows of d features (sh NULL or ranks <= 1: all),
 * within the memory limit; whole = 1: the set is read whole (the limit applies to all of it). */
static dpc_status shard_window(const dpc_data_shard *sh, size_t N, size_t d, int whole,
                               dpc__rows *w, dpc_error *err)
{
    size_t P = sh && sh->ranks > 1 ? sh->ranks : 1, r = P > 1 ? sh->rank : 0, row, bytes;
    if (P > 1 && r >= P)
        return dpc_error_param(err, DPC_E_INVALID, "rank", "rank %zu of %zu ranks", r, P);
    if (N < P)
        return dpc_error_param(err, DPC_E_INVALID, "ranks", "%zu training rows cannot be shared "
                               "by %zu ranks (at least one row each)", N, P);
    w->first = dpc_data_shard_row(N, r, P);
    w->count = dpc_data_shard_row(N, r + 1, P) - w->first;
    size_t held = whole ? N : w->count;
    row = (d + 1) * sizeof(double); /* d <= DPC_DATA_MAX_FEATURES */
    if (!dpc__mul_ok(held, row, &bytes)) bytes = SIZE_MAX;
    if (!sh || !sh->max_bytes || bytes <= sh->max_bytes) return DPC_OK;
    size_t fit = sh->max_bytes / row, need = fit ? (N + fit - 1) / fit : 0;
    char who[64];
    if (P > 1) snprintf(who, sizeof who, "rank %zu's", r);
    else snprintf(who, sizeof who, "the");
    if (whole && P > 1)
        return dpc_error_param(err, DPC_E_RANGE, "max_data_bytes", "this data format is read "
                               "whole by every rank: its %zu training rows (%zu features and the "
                               "target in double) take %zu bytes, more than the limit of %zu per "
                               "rank (npy and synthetic sets are read in shards)", N, d, bytes,
                               sh->max_bytes);
    if (!need)
        return dpc_error_param(err, DPC_E_RANGE, "max_data_bytes", "one training row (%zu "
                               "features and the target in double) takes %zu bytes, more than the "
                               "limit of %zu", d, row, sh->max_bytes);
    return dpc_error_param(err, DPC_E_RANGE, "max_data_bytes", "%s %zu of %zu training rows (%zu "
                           "features and the target in double) take %zu bytes, more than the "
                           "limit of %zu per rank: run on at least %zu ranks%s", who, held, N, d,
                           bytes, sh->max_bytes, need, whole ? " with an npy or synthetic set "
                           "(read in shards)" : "");
}

static dpc_status load_npy_kind(spec *s, loaded *L, int want_test, size_t lim, size_t tlim,
                                const dpc_data_shard *sh, dpc_error *err)
{
    dpc_status st = need_path(s, err);
    if (st) return st;
    const char *labels = opt_str(s, "labels"), *test = opt_str(s, "test");
    const char *tlabels = opt_str(s, "test-labels");
    dpc_npy_opts o = {.max_rows = lim};
    if ((st = opt_task(s, 0, &o.task, &o.n_classes, NULL, err))) return st;
    if (!labels)
        return dpc_error_set(err, DPC_E_INVALID, "data spec: npy needs labels=PATH (the "
                                                 "targets: a 1-D .npy, one per row)");
    if (!test != !tlabels)
        return dpc_error_set(err, DPC_E_INVALID,
                             "data spec: npy test= and test-labels= go together");
    size_t N, d;
    dpc__rows w;
    if ((st = dpc__npy_shape(s->pos, &N, &d, err))) return st;
    if (lim && lim < N) N = lim;
    if ((st = shard_window(sh, N, d, 0, &w, err))) return st;
    o.first = w.first;
    o.count = w.count;
    L->has_test = test != NULL;
    st = dpc_data_load_npy(&L->train, s->pos, labels, &o, err);
    if (!st && want_test && test) {
        dpc_npy_opts t = {o.task, o.n_classes ? o.n_classes : L->train->n_classes, tlim, 0, 0};
        st = dpc_data_load_npy(&L->test, test, tlabels, &t, err);
    }
    return st;
}

/* Synthetic rows of the window w of the set of n + tn (train: [0, n), test: [n, n + tn)). */
static dpc_status synth_rows(int g, spec *s, const dpc_rng *rng, size_t stream, size_t n,
                             size_t d, const dpc__rows *w, dpc_dataset **out, dpc_error *err)
{
    dpc_status st;
    if (g == 0) {
        const char *kv = opt_str(s, "kappa");
        double alpha, noise, kappa = 0;
        if ((st = opt_double(s, "alpha", 1.0, &alpha, err)) ||
            (st = opt_double(s, "noise", 0.1, &noise, err)))
            return st;
        if (kv && opt_str(s, "alpha"))
            return dpc_error_set(err, DPC_E_INVALID,
                                 "data spec: alpha= and kappa= exclude each other");
        if (kv && (dpc__parse_double(kv, &kappa) || !(kappa >= 1)))
            return dpc_error_set(err, DPC_E_INVALID,
                                 "data spec: kappa: expected a number >= 1, got '%s'", kv);
        if (!kv && (!isfinite(alpha) || alpha < 0))
            return dpc_error_set(err, DPC_E_INVALID,
                                 "synthetic linreg: alpha %g must be finite and >= 0", alpha);
        double *lam = d && d < ((size_t)1 << 48) ? dpc__malloc_array(d, sizeof *lam) : NULL;
        if (!lam)
            return d ? DPC__NOMEM(err, "spectrum")
                     : dpc_error_set(err, DPC_E_INVALID, "data spec: d must be >= 1");
        char desc[64];
        if (kv) {
            for (size_t k = 0; k < d; k++)
                lam[k] = d == 1 ? 1.0 : pow(kappa, -(double)k / (double)(d - 1));
            snprintf(desc, sizeof desc, "spectrum=%.6g..%.6g", lam[0], lam[d - 1]);
        } else {
            dpc_data_spectrum_power(lam, d, alpha);
            snprintf(desc, sizeof desc, "alpha=%.17g", alpha);
        }
        st = dpc__synth_linreg(out, rng, stream, n, d, lam, noise, NULL, desc, w, err);
        free(lam);
        return st;
    }
    if (g == 1) {
        double spread, radius;
        if ((st = opt_double(s, "radius", 1.0, &radius, err)) ||
            (st = opt_double(s, "spread", radius / 2, &spread, err)))
            return st;
        return dpc__synth_mean(out, rng, stream, n, d, NULL, spread, radius, w, err);
    }
    double margin, flip;
    if ((st = opt_double(s, "margin", 0.1, &margin, err)) ||
        (st = opt_double(s, "flip", 0.0, &flip, err)))
        return st;
    return dpc__synth_logistic(out, rng, stream, n, d, margin, flip, NULL, w, err);
}

/* A proper window of the generated set: a shard of the training set's n rows, or the whole
 * test set (rows n.. of the stream), named as the split of the whole would name it. */
static void synth_part(dpc_dataset *ds, size_t n, size_t tn, int test)
{
    char src[sizeof ds->source];
    memcpy(src, ds->source, sizeof src);
    ds->shard_total = test || ds->n == n ? 0 : n;
    if (test) ds->shard_first = 0;
    if (tn) dpc__dataset_source(ds, "%.200s:%s", src, test ? "test" : "train");
}

static dpc_status load_synth_kind(spec *s, loaded *L, const dpc_rng *rng, int want_test,
                                  const dpc_data_shard *sh, dpc_error *err)
{
    static const char *const gens[] = {"linreg", "mean", "logistic", NULL};
    if (!s->pos)
        return dpc_error_set(err, DPC_E_INVALID,
                             "data spec: synthetic needs a generator (linreg, mean, logistic)");
    int g = -1;
    for (int k = 0; gens[k]; k++)
        if (!strcmp(s->pos, gens[k])) g = k;
    if (g < 0)
        return dpc_error_set(err, DPC_E_INVALID,
                             "data spec: unknown generator '%s' (linreg, mean, logistic)", s->pos);
    if (!rng)
        return dpc_error_set(err, DPC_E_INVALID, "data spec: synthetic data needs an rng (seed)");
    size_t n, d, tn, stream;
    dpc_status st;
    if ((st = opt_size(s, "n", 1000, &n, err)) ||
        (st = opt_size(s, "d", g == 1 ? 1 : 10, &d, err)) ||
        (st = opt_size(s, "test-n", 0, &tn, err)) || (st = opt_size(s, "stream", 0, &stream, err)))
        return st;
    if (n == 0 || n + tn < n) return dpc_error_set(err, DPC_E_INVALID, "data spec: n must be >= 1");
    if (sh && sh->ranks > 1) { /* only this rank's rows are generated */
        dpc__rows w, wt = {n, tn};
        if ((st = shard_window(sh, n, d, 0, &w, err))) return st;
        L->has_test = tn > 0;
        st = synth_rows(g, s, rng, stream, n + tn, d, &w, &L->train, err);
        if (!st) synth_part(L->train, n, tn, 0);
        if (!st && tn && want_test)
            st = synth_rows(g, s, rng, stream, n + tn, d, &wt, &L->test, err);
        if (!st && L->test) synth_part(L->test, n, tn, 1);
        return st;
    }
    dpc_dataset *all = NULL;
    st = synth_rows(g, s, rng, stream, n + tn, d, NULL, &all, err);
    if (st) return st;
    L->has_test = tn > 0;
    if (!tn) {
        L->train = all;
        return DPC_OK;
    }
    /* Examples n..n+tn-1 of the same stream are fresh i.i.d. test examples. */
    st = dpc_dataset_split(&L->train, want_test ? &L->test : NULL, all, n, NULL, 0, err);
    if (!st) {
        char src[sizeof all->source];
        memcpy(src, all->source, sizeof src);
        dpc__dataset_source(L->train, "%.200s:train", src);
        if (L->test) dpc__dataset_source(L->test, "%.200s:test", src);
    }
    dpc_dataset_free(all);
    return st;
}

/* ==== Entry point =========================================================================== */

static dpc_status apply_common(spec *s, loaded *L, const dpc_rng *rng, int want_test,
                               dpc_error *err)
{
    static const char *const modes[] = {"random", "last", NULL};
    const char *ho = opt_str(s, "holdout");
    int mode;
    size_t sstream;
    double scale, clip, norm, stdz;
    dpc_status st;
    if ((st = opt_word(s, "holdout-mode", modes, 0, &mode, err)) ||
        (st = opt_size(s, "split-stream", 0, &sstream, err)) ||
        (st = opt_double(s, "clip", NAN, &clip, err)) ||
        (st = opt_double(s, "normalize", NAN, &norm, err)) ||
        (st = opt_double(s, "standardize", 0, &stdz, err)))
        return st;
    scale = 1.0; /* idx consumed scale= itself (it replaces the default / 255) */
    if (strcmp(s->kind, "idx") && (st = opt_double(s, "scale", 1.0, &scale, err))) return st;
    int do_clip = !isnan(clip), do_norm = !isnan(norm); /* given: must be > 0 (checked below) */
    if (do_clip && do_norm)
        return dpc_error_set(err, DPC_E_INVALID,
                             "data spec: clip= and normalize= exclude each other");
    if (ho) {
        if (L->has_test)
            return dpc_error_set(err, DPC_E_INVALID,
                                 "data spec: holdout= with a separate test set");
        double f;
        size_t n = L->train->n, nt;
        if (dpc__parse_double(ho, &f) || !(f > 0))
            return dpc_error_set(
                err, DPC_E_INVALID,
                "data spec: holdout: expected a fraction in (0,1) or a count, got '%s'", ho);
        if (f < 1)
            nt = (size_t)floor(f * (double)n + 0.5);
        else if (f == floor(f) && f < (double)SIZE_MAX)
            nt = (size_t)f;
        else
            return dpc_error_set(err, DPC_E_INVALID, "data spec: holdout: '%s' is not a count", ho);
        if (nt < 1 || nt >= n)
            return dpc_error_set(
                err, DPC_E_INVALID,
                "data spec: holdout %s leaves %zu of %zu examples for testing (need 1..n-1)", ho,
                nt, n);
        if (mode == 0 && !rng)
            return dpc_error_set(
                err, DPC_E_INVALID,
                "data spec: random holdout needs an rng (seed) or holdout-mode=last");
        dpc_dataset *tr = NULL, *te = NULL;
        st = dpc_dataset_split(&tr, want_test ? &te : NULL, L->train, n - nt,
                               mode == 0 ? rng : NULL, sstream, err);
        if (st) return st;
        dpc_dataset_free(L->train);
        L->train = tr;
        L->test = te;
        dpc_dataset *sets[2] = {tr, te};
        for (int k = 0; k < 2; k++)
            if (sets[k])
                dpc__dataset_note(sets[k], 0, "%s %zu of %zu held out (%s)",
                                  k ? "test:" : "train:", nt, n, mode == 0 ? "random" : "last");
    }
    dpc_dataset *sets[2] = {L->train, L->test};
    for (int k = 0; k < 2; k++) {
        if (!sets[k]) continue;
        if (scale != 1.0 && (st = dpc_dataset_scale(sets[k], scale, err))) return st;
    }
    if (stdz) {
        if (stdz != 1) return dpc_error_set(err, DPC_E_INVALID, "data spec: standardize=1 or 0");
        if ((st = dpc_dataset_standardize(L->train, L->test, err))) return st;
    }
    for (int k = 0; k < 2; k++) {
        if (!sets[k]) continue;
        if (do_clip && (st = dpc_dataset_clip_rows(sets[k], clip, err))) return st;
        if (do_norm && (st = dpc_dataset_normalize_rows(sets[k], norm, err))) return st;
    }
    return DPC_OK;
}

/* The spec's loader; with a shard, npy and synthetic sets read only this rank's rows (direct). */
static dpc_status load_kind(spec *s, loaded *L, const dpc_rng *rng, int want, size_t lim,
                            size_t tlim, const dpc_data_shard *sh, dpc_error *err)
{
    if (!strcmp(s->kind, "fashion-mnist")) return load_fashion(s, L, want, lim, tlim, err);
    if (!strcmp(s->kind, "idx")) return load_idx_kind(s, L, want, lim, tlim, err);
    if (!strcmp(s->kind, "csv")) return load_csv_kind(s, L, want, lim, tlim, err);
    if (!strcmp(s->kind, "libsvm")) return load_libsvm_kind(s, L, want, lim, tlim, err);
    if (!strcmp(s->kind, "npy")) return load_npy_kind(s, L, want, lim, tlim, sh, err);
    if (!strcmp(s->kind, "synthetic")) {
        if (lim || tlim)
            return dpc_error_set(err, DPC_E_INVALID,
                                 "data spec: use n= / test-n= for synthetic data");
        return load_synth_kind(s, L, rng, want, sh, err);
    }
    return dpc_error_set(err, DPC_E_INVALID, "data spec: unknown kind '%s' (fashion-mnist, idx, "
                         "csv, libsvm, npy, synthetic)", s->kind);
}

/* A set read whole: within the limit (all of it), then cut to this rank's rows. */
static dpc_status cut_shard(loaded *L, const dpc_data_shard *sh, dpc_error *err)
{
    dpc__rows w;
    dpc_status st = shard_window(sh, L->train->n, L->train->d, 1, &w, err);
    if (st || !sh || sh->ranks <= 1) return st;
    size_t *idx = dpc__malloc_array(w.count, sizeof *idx);
    if (!idx) return DPC__NOMEM(err, "shard rows");
    for (size_t i = 0; i < w.count; i++) idx[i] = w.first + i;
    dpc_dataset *part = NULL;
    st = dpc_dataset_select(&part, L->train, idx, w.count, err);
    free(idx);
    if (st) return st;
    part->shard_first = w.first;
    part->shard_total = L->train->n;
    dpc_dataset_free(L->train);
    L->train = part;
    return DPC_OK;
}

static dpc_status load_spec(dpc_dataset **train, dpc_dataset **test, const char *text,
                            const dpc_rng *rng, const dpc_data_shard *sh, dpc_error *err)
{
    if (!train) return dpc_error_set(err, DPC_E_INVALID, "data spec: train is NULL");
    *train = NULL;
    if (test) *test = NULL;
    if (!text || !*text) return dpc_error_set(err, DPC_E_INVALID, "data spec is empty");
    spec s;
    loaded L = {0};
    dpc_status st = spec_parse(&s, text, err);
    size_t lim = 0, tlim = 0;
    if (!st) st = opt_size(&s, "limit", 0, &lim, err);
    if (!st) st = opt_size(&s, "test-limit", 0, &tlim, err);
    /* 0 would read as "no limit" (every row): refused, never silently widened */
    if (!st && opt_str(&s, "limit") && lim == 0)
        st = dpc_error_set(err, DPC_E_INVALID, "data spec: limit=0: must be >= 1 (omit it for "
                                               "every example)");
    if (!st && opt_str(&s, "test-limit") && tlim == 0)
        st = dpc_error_set(err, DPC_E_INVALID, "data spec: test-limit=0: must be >= 1 (omit it "
                                               "for every example)");
    int want = test != NULL;
    if (!st) st = spec_check_keys(&s, err);
    if (st) goto done;
    /* holdout= and standardize= need the whole set: such a set is read whole, then cut */
    int whole = !!opt_str(&s, "holdout") || !!opt_str(&s, "standardize");
    const dpc_data_shard *direct = whole ? NULL : sh;
    st = load_kind(&s, &L, rng, want, lim, tlim, direct, err);
    if (!st) st = apply_common(&s, &L, rng, want, err);
    if (!st) st = spec_finish(&s, err);
    if (!st && L.test) st = dpc_dataset_check_compatible(L.train, L.test, err);
    if (!st && L.test && L.train->n_classes) L.test->n_classes = L.train->n_classes;
    if (!st && !L.train->shard_total) st = cut_shard(&L, sh, err);
done:
    free(s.buf);
    if (st) {
        dpc_dataset_free(L.train);
        dpc_dataset_free(L.test);
        return st;
    }
    *train = L.train;
    if (test)
        *test = L.test;
    else
        dpc_dataset_free(L.test);
    return DPC_OK;
}

dpc_status dpc_data_load_spec(dpc_dataset **train, dpc_dataset **test, const char *text,
                              const dpc_rng *rng, dpc_error *err)
{
    return load_spec(train, test, text, rng, NULL, err);
}

dpc_status dpc_data_load_spec_shard(dpc_dataset **train, dpc_dataset **test, const char *text,
                                    const dpc_rng *rng, const dpc_data_shard *shard,
                                    dpc_error *err)
{
    return load_spec(train, test, text, rng, shard, err);
}

/* ==== The files a spec reads ================================================================ */

/* Appends path and its NUL to the list (*buf, *len bytes used, *cap allocated). */
static dpc_status list_add(char **buf, size_t *len, size_t *cap, const char *path, dpc_error *err)
{
    size_t n = strlen(path) + 1;
    if (*len + n + 1 > *cap) {
        size_t c = 2 * (*cap + n + 1);
        char *b = realloc(*buf, c);
        if (!b) return DPC__NOMEM(err, "data spec files");
        *buf = b;
        *cap = c;
    }
    memcpy(*buf + *len, path, n);
    *len += n;
    (*buf)[*len] = '\0';
    return DPC_OK;
}

dpc_status dpc_data_spec_files(const char *text, char **files, size_t *count, dpc_error *err)
{
    static const char *const path_keys[] = {"labels", "test", "test-labels", NULL};
    static const char *const fm[] = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                                     "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte", NULL};
    if (!files || !count) return dpc_error_param(err, DPC_E_INVALID, files ? "count" : "files", "NULL");
    *files = NULL;
    *count = 0;
    if (!text) return dpc_error_param(err, DPC_E_INVALID, "spec", "NULL");
    spec s;
    char *buf = NULL, one[4096];
    size_t len = 0, cap = 0, n = 0;
    dpc_status st = spec_parse(&s, text, err);
    int fashion = !st && !strcmp(s.kind, "fashion-mnist");
    int paths = !st && (!strcmp(s.kind, "idx") || !strcmp(s.kind, "csv") ||
                        !strcmp(s.kind, "libsvm") || !strcmp(s.kind, "npy"));
    if (paths && s.pos && !(st = list_add(&buf, &len, &cap, s.pos, err))) n++;
    for (size_t k = 0; paths && !st && path_keys[k]; k++) {
        const char *v = opt_str(&s, path_keys[k]);
        if (v && !(st = list_add(&buf, &len, &cap, v, err))) n++;
    }
    const char *dir = fashion ? opt_str(&s, "dir") : NULL;
    for (size_t k = 0; fashion && !st && fm[k]; k++)
        for (int gz = 0; gz < 2 && !st; gz++) { /* either may be read (find_file: .gz first) */
            int w = snprintf(one, sizeof one, "%s/%s%s", dir ? dir : DPC_DATA_FASHION_MNIST_DIR,
                             fm[k], gz ? ".gz" : "");
            if (w < 0 || (size_t)w >= sizeof one) continue; /* refused by the loader */
            if (!(st = list_add(&buf, &len, &cap, one, err))) n++;
        }
    free(s.buf);
    if (st) {
        free(buf);
        return st;
    }
    *files = buf;
    *count = n;
    return DPC_OK;
}
