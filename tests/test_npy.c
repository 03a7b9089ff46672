/* test_npy.c — the .npy reader (dpc_data_load_npy, the npy spec kind) and sharded loading
 * (dpc_data_load_spec_shard): values read exactly from '<f8' and '<f4' features and every
 * target dtype; every refusal of a malformed file names the file and the header field or row;
 * shards of npy, synthetic and csv sets concatenate to the whole set bit for bit with the whole
 * set's source, and the hash pieces over the shards equal the whole set's hash; the memory limit
 * (field max_data_bytes) refuses a shard too large before its rows are read. Files are written
 * here byte by byte (no numpy needed). */
#include "dpcorr/data.h"
#include "harness.h"

#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

static char dir[] = "/tmp/dpcorr_npy_XXXXXX";

static const char *path_of(const char *name) { return harness_fmt("%s/%s", dir, name); }

/* Writes a .npy of version `ver` with the given header dict and raw data bytes; extra bytes
 * appended (or cut when negative). */
static void write_npy(const char *name, int ver, const char *dict, const void *data, size_t bytes,
                      long extra)
{
    char h[512];
    size_t pre = ver == 1 ? 10 : 12, len = (size_t)snprintf(h, sizeof h, "%s", dict);
    while ((pre + len + 1) % 64) h[len++] = ' ';
    h[len++] = '\n';
    FILE *f = fopen(path_of(name), "wb");
    fwrite("\x93NUMPY", 1, 6, f);
    unsigned char v[6] = {(unsigned char)ver, 0, (unsigned char)(len & 255),
                          (unsigned char)(len >> 8), 0, 0};
    fwrite(v, 1, ver == 1 ? 4 : 6, f);
    fwrite(h, 1, len, f);
    long n = (long)bytes + (extra < 0 ? extra : 0);
    fwrite(data, 1, (size_t)(n > 0 ? n : 0), f);
    for (long k = 0; k < extra; k++) fputc(0, f);
    fclose(f);
}

#define N 37
#define D 3
static double X[N * D];
static float X4[N * D];
static int64_t Y8[N];

static void fixtures(void)
{
    for (size_t i = 0; i < N * D; i++) {
        X[i] = (double)i * 0.37 - 5.0 + 1e-9 * (double)(i % 7);
        X4[i] = (float)X[i];
    }
    for (size_t i = 0; i < N; i++) Y8[i] = (int64_t)(i % 4);
    char dict[160];
    snprintf(dict, sizeof dict, "{'descr': '<f8', 'fortran_order': False, 'shape': (%d, %d), }",
             N, D);
    write_npy("X.npy", 1, dict, X, sizeof X, 0);
    snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }",
             N, D);
    write_npy("X4.npy", 2, dict, X4, sizeof X4, 0);
    snprintf(dict, sizeof dict, "{'descr': '<i8', 'fortran_order': False, 'shape': (%d,), }", N);
    write_npy("y.npy", 1, dict, Y8, sizeof Y8, 0);
}

static void test_read(void)
{
    dpc_dataset *ds = NULL, *d4 = NULL;
    dpc_error err = {0};
    dpc_npy_opts o = {.task = DPC_TASK_CLASSIFICATION};
    CHECK_OK(dpc_data_load_npy(&ds, path_of("X.npy"), path_of("y.npy"), &o, &err), &err);
    CHECK_OK(dpc_data_load_npy(&d4, path_of("X4.npy"), path_of("y.npy"), NULL, &err), &err);
    if (!ds || !d4) return;
    CHECK(ds->n == N && ds->d == D && ds->n_classes == 4 && ds->data_dependent,
          "shape %zu x %zu, %zu classes (inferred: data-dependent)", ds->n, ds->d, ds->n_classes);
    CHECK(!memcmp(ds->x, X, sizeof X), "f8 features bit for bit");
    int same4 = 1, y = 1;
    for (size_t i = 0; i < N * D; i++) same4 &= d4->x[i] == (double)X4[i];
    for (size_t i = 0; i < N; i++) y &= ds->y[i] == (double)Y8[i] && d4->y[i] == (double)Y8[i];
    CHECK(same4 && y, "f4 features widened exactly, targets");
    CHECK(d4->n_classes == 0 && ds->shard_total == 0, "regression by default; not a shard");
    CHECK(strstr(ds->source, "X.npy") != NULL, "source %s", ds->source);
    /* a part: rows [10, 25) */
    dpc_dataset *p = NULL;
    o.first = 10;
    o.count = 15;
    o.n_classes = 4;
    CHECK_OK(dpc_data_load_npy(&p, path_of("X.npy"), path_of("y.npy"), &o, &err), &err);
    if (p) {
        CHECK(p->n == 15 && p->shard_first == 10 && p->shard_total == N && !p->data_dependent,
              "part: %zu rows from %zu of %zu", p->n, p->shard_first, p->shard_total);
        CHECK(!memcmp(p->x, X + 10 * D, 15 * D * sizeof(double)), "part's rows");
        CHECK(!strcmp(p->source, ds->source), "a part's source is the whole file's");
    }
    dpc_dataset_free(p);
    dpc_dataset_free(ds);
    dpc_dataset_free(d4);
}

/* One malformed file: refused with status st, the message naming the file and pattern, the
 * error's field `field`. */
static void refused(const char *xname, const char *yname, const dpc_npy_opts *o, dpc_status st,
                    const char *field, const char *pat)
{
    dpc_dataset *ds = NULL;
    dpc_error err = {0};
    dpc_status got = dpc_data_load_npy(&ds, path_of(xname), path_of(yname), o, &err);
    CHECK(got == st && ds == NULL, "%s/%s: status %d (want %d): %s", xname, yname, (int)got,
          (int)st, err.msg);
    CHECK(strstr(err.msg, pat) && (strstr(err.msg, xname) || strstr(err.msg, yname)),
          "%s/%s: message '%s' lacks '%s' or the file", xname, yname, err.msg, pat);
    CHECK(!strcmp(err.field, field), "%s/%s: field '%s', want '%s'", xname, yname, err.field,
          field);
    dpc_dataset_free(ds);
}

static void test_refusals(void)
{
    const char *F8 = "'descr': '<f8', 'fortran_order': False";
    char dict[200];
    snprintf(dict, sizeof dict, "{%s, 'shape': (%d, %d), }", F8, N, D);
    write_npy("trunc.npy", 1, dict, X, sizeof X, -8);
    refused("trunc.npy", "y.npy", NULL, DPC_E_FORMAT, "shape", "truncated");
    write_npy("trail.npy", 1, dict, X, sizeof X, 3);
    refused("trail.npy", "y.npy", NULL, DPC_E_FORMAT, "shape", "trailing bytes");
    write_npy("v4.npy", 4, dict, X, sizeof X, 0);
    refused("v4.npy", "y.npy", NULL, DPC_E_FORMAT, "version", "version 4");
    FILE *f = fopen(path_of("text.npy"), "w");
    fputs("not a numpy file at all\n", f);
    fclose(f);
    refused("text.npy", "y.npy", NULL, DPC_E_FORMAT, "magic", "not a .npy");
    f = fopen(path_of("gz.npy"), "wb");
    fwrite("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 1, 10, f);
    fclose(f);
    refused("gz.npy", "y.npy", NULL, DPC_E_FORMAT, "magic", "gzip");
    snprintf(dict, sizeof dict, "{'descr': '>f8', 'fortran_order': False, 'shape': (%d, %d), }",
             N, D);
    write_npy("be.npy", 1, dict, X, sizeof X, 0);
    refused("be.npy", "y.npy", NULL, DPC_E_FORMAT, "descr", "'>f8'");
    snprintf(dict, sizeof dict, "{'descr': '<i8', 'fortran_order': False, 'shape': (%d, %d), }",
             N, D);
    write_npy("int.npy", 1, dict, X, sizeof X, 0);
    refused("int.npy", "y.npy", NULL, DPC_E_FORMAT, "descr", "features of dtype '<i8'");
    snprintf(dict, sizeof dict, "{'descr': '<f8', 'fortran_order': True, 'shape': (%d, %d), }",
             N, D);
    write_npy("fo.npy", 1, dict, X, sizeof X, 0);
    refused("fo.npy", "y.npy", NULL, DPC_E_FORMAT, "fortran_order", "Fortran order");
    snprintf(dict, sizeof dict, "{%s, 'shape': (%d,), }", F8, N * D);
    write_npy("flat.npy", 1, dict, X, sizeof X, 0);
    refused("flat.npy", "y.npy", NULL, DPC_E_FORMAT, "shape", "1 dimension");
    snprintf(dict, sizeof dict, "{%s, 'shape': (%d, 1, %d), }", F8, N, D);
    write_npy("cube.npy", 1, dict, X, sizeof X, 0);
    refused("cube.npy", "y.npy", NULL, DPC_E_FORMAT, "shape", "3 dimensions");
    snprintf(dict, sizeof dict, "{%s, 'shape': (0, %d), }", F8, D);
    write_npy("empty.npy", 1, dict, X, 0, 0);
    refused("empty.npy", "y.npy", NULL, DPC_E_FORMAT, "shape", "zero size");
    snprintf(dict, sizeof dict, "{'descr': '<f8', 'shape': (%d, %d), }", N, D);
    write_npy("nofo.npy", 1, dict, X, sizeof X, 0);
    refused("nofo.npy", "y.npy", NULL, DPC_E_FORMAT, "header", "are required");
    snprintf(dict, sizeof dict, "{%s, 'shape': (%d, %d), 'extra': 1}", F8, N, D);
    write_npy("key.npy", 1, dict, X, sizeof X, 0);
    refused("key.npy", "y.npy", NULL, DPC_E_FORMAT, "header", "unknown key");
    write_npy("junk.npy", 1, "[1, 2, 3]", X, sizeof X, 0);
    refused("junk.npy", "y.npy", NULL, DPC_E_FORMAT, "header", "does not start with '{'");
    /* NaN feature: the row and column named */
    double Xn[N * D];
    memcpy(Xn, X, sizeof Xn);
    Xn[7 * D + 2] = NAN;
    snprintf(dict, sizeof dict, "{%s, 'shape': (%d, %d), }", F8, N, D);
    write_npy("nan.npy", 1, dict, Xn, sizeof Xn, 0);
    refused("nan.npy", "y.npy", NULL, DPC_E_NUMERIC, "x", "row 7 column 2 is nan");
    /* targets: another length, NaN, not a class, beyond K */
    double yv[N];
    for (size_t i = 0; i < N; i++) yv[i] = (double)(i % 3);
    snprintf(dict, sizeof dict, "{%s, 'shape': (%d,), }", F8, N - 1);
    write_npy("ylen.npy", 1, dict, yv, (N - 1) * sizeof(double), 0);
    refused("X.npy", "ylen.npy", NULL, DPC_E_FORMAT, "labels", "36 targets");
    yv[5] = NAN;
    snprintf(dict, sizeof dict, "{%s, 'shape': (%d,), }", F8, N);
    write_npy("ynan.npy", 1, dict, yv, sizeof yv, 0);
    refused("X.npy", "ynan.npy", NULL, DPC_E_NUMERIC, "y", "row 5 is nan");
    yv[5] = 1.5;
    write_npy("yfrac.npy", 1, dict, yv, sizeof yv, 0);
    dpc_npy_opts cls = {.task = DPC_TASK_CLASSIFICATION};
    refused("X.npy", "yfrac.npy", &cls, DPC_E_FORMAT, "y", "row 5: label 1.5 is not a class");
    cls.n_classes = 2;
    refused("X.npy", "y.npy", &cls, DPC_E_FORMAT, "y", "label 2 is not a class in 0..1");
    dpc_dataset *ds = NULL;
    dpc_error err = {0};
    CHECK(dpc_data_load_npy(&ds, path_of("X.npy"), NULL, NULL, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "labels"),
          "no labels file: field '%s'", err.field);
    CHECK(dpc_data_load_npy(&ds, path_of("absent.npy"), path_of("y.npy"), NULL, &err) ==
                  DPC_E_IO && strstr(err.msg, "absent.npy: cannot open"),
          "absent: %s", err.msg);
}

/* The shards of ranks 0..P-1 concatenate to the whole set; the hash pieces give its hash. */
static void shards_match(const char *spec, const dpc_rng *rng, size_t P, const char *what)
{
    dpc_dataset *whole = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_data_load_spec(&whole, NULL, spec, rng, &err), &err);
    if (!whole) return;
    uint64_t h = dpc_dataset_hash_begin(whole->n, whole->d, whole->n_classes);
    size_t next = 0, ok = 1;
    for (size_t r = 0; r < P; r++) {
        dpc_dataset *part = NULL;
        dpc_data_shard sh = {r, P, 0};
        CHECK_OK(dpc_data_load_spec_shard(&part, NULL, spec, rng, &sh, &err), &err);
        if (!part) return;
        ok &= part->shard_first == next && part->shard_total == whole->n &&
              part->n == dpc_data_shard_row(whole->n, r + 1, P) - next &&
              !memcmp(part->x, whole->x + next * whole->d, part->n * whole->d * sizeof(double)) &&
              !memcmp(part->y, whole->y + next, part->n * sizeof(double)) &&
              !strcmp(part->source, whole->source) &&
              !strcmp(part->preprocessing, whole->preprocessing) &&
              part->n_classes == whole->n_classes && part->x_norm_bound == whole->x_norm_bound;
        h = dpc_dataset_hash_add(h, part->x, part->n * part->d);
        next += part->n;
        dpc_dataset_free(part);
    }
    h = dpc_dataset_hash_add(h, whole->y, whole->n); /* the targets after every feature */
    CHECK(ok && next == whole->n, "%s P=%zu: the shards are the whole set's rows", what, P);
    CHECK(dpc_dataset_hash_end(h) == dpc_dataset_hash(whole), "%s: hash pieces", what);
    dpc_dataset_free(whole);
}

static void test_shards(void)
{
    dpc_rng rng;
    dpc_rng_seed(&rng, 3);
    const char *npy = harness_fmt("npy:%s,labels=%s,classes=4", path_of("X.npy"), path_of("y.npy"));
    char npy_spec[600], csv_spec[600];
    snprintf(npy_spec, sizeof npy_spec, "%s", npy);
    FILE *f = fopen(path_of("d.csv"), "w");
    for (int i = 0; i < 11; i++) fprintf(f, "%d,%d,%d\n", i, 2 * i + 1, i % 2);
    fclose(f);
    snprintf(csv_spec, sizeof csv_spec, "csv:%s,task=classification,classes=2",
             path_of("d.csv"));
    for (size_t P = 2; P <= 4; P++) {
        shards_match(npy_spec, &rng, P, "npy");
        shards_match("synthetic:linreg,n=101,d=4,test-n=9,clip=1.5", &rng, P, "synthetic linreg");
        shards_match("synthetic:logistic,n=50,d=3,flip=0.1", &rng, P, "synthetic logistic");
        shards_match("synthetic:mean,n=30,d=2", &rng, P, "synthetic mean");
        shards_match("synthetic:linreg,n=60,d=2,holdout=10,holdout-mode=random", &rng, P,
                     "synthetic with holdout (read whole, then cut)");
        shards_match(csv_spec, &rng, P, "csv (read whole, then cut)");
    }
    /* a shard's test set is the whole test set */
    dpc_dataset *tr = NULL, *te = NULL, *te1 = NULL, *tr1 = NULL;
    dpc_error err = {0};
    dpc_data_shard sh = {1, 3, 0};
    const char *syn = "synthetic:logistic,n=90,d=3,test-n=20";
    CHECK_OK(dpc_data_load_spec_shard(&tr, &te, syn, &rng, &sh, &err), &err);
    CHECK_OK(dpc_data_load_spec(&tr1, &te1, syn, &rng, &err), &err);
    if (te && te1)
        CHECK(te->n == 20 && te->shard_total == 0 && !strcmp(te->source, te1->source) &&
                  !memcmp(te->x, te1->x, 20 * 3 * sizeof(double)),
              "the test set of a shard is whole: %zu rows, %s", te->n, te->source);
    dpc_dataset_free(tr);
    dpc_dataset_free(te);
    dpc_dataset_free(tr1);
    dpc_dataset_free(te1);
    /* the limit: rows x (d + 1) x 8; 37 rows of 3 features = 1184 bytes */
    dpc_data_shard lim = {0, 1, 1183};
    tr = NULL;
    CHECK(dpc_data_load_spec_shard(&tr, NULL, npy_spec, &rng, &lim, &err) == DPC_E_RANGE &&
              !strcmp(err.field, "max_data_bytes") && strstr(err.msg, "at least 2 ranks"),
          "one process over the limit: %s (%s)", err.msg, err.field);
    lim = (dpc_data_shard){1, 2, 608}; /* rank 1 holds 19 rows: 608 bytes */
    CHECK_OK(dpc_data_load_spec_shard(&tr, NULL, npy_spec, &rng, &lim, &err), &err);
    CHECK(tr && tr->n == 19, "rank 1 of 2 within the limit");
    dpc_dataset_free(tr);
    tr = NULL;
    lim.max_bytes = 607;
    CHECK(dpc_data_load_spec_shard(&tr, NULL, npy_spec, &rng, &lim, &err) == DPC_E_RANGE &&
              strstr(err.msg, "rank 1's 19 of 37"),
          "rank 1 over the limit: %s", err.msg);
    lim = (dpc_data_shard){0, 2, 200};
    CHECK(dpc_data_load_spec_shard(&tr, NULL, csv_spec, &rng, &lim, &err) == DPC_E_RANGE &&
              strstr(err.msg, "read whole by every rank"),
          "csv read whole over the limit: %s", err.msg);
    lim = (dpc_data_shard){0, 40, 0};
    CHECK(dpc_data_load_spec_shard(&tr, NULL, npy_spec, &rng, &lim, &err) == DPC_E_INVALID &&
              strstr(err.msg, "cannot be shared by 40 ranks"),
          "more ranks than rows: %s", err.msg);
    /* the spec kind: limit=, a test pair, its files listed */
    char spec[800];
    snprintf(spec, sizeof spec, "%s,limit=20,test=%s,test-labels=%s", npy_spec,
             path_of("X4.npy"), path_of("y.npy"));
    CHECK_OK(dpc_data_load_spec(&tr, &te, spec, NULL, &err), &err);
    CHECK(tr && te && tr->n == 20 && te->n == N && te->n_classes == 4, "npy spec with a test");
    dpc_dataset_free(tr);
    dpc_dataset_free(te);
    char *files = NULL;
    size_t count = 0;
    CHECK_OK(dpc_data_spec_files(spec, &files, &count, &err), &err);
    CHECK(count == 4, "npy spec reads 4 files: %zu", count);
    free(files);
    snprintf(spec, sizeof spec, "npy:%s", path_of("X.npy"));
    CHECK(dpc_data_load_spec(&tr, NULL, spec, NULL, &err) == DPC_E_INVALID &&
              strstr(err.msg, "npy needs labels=PATH"),
          "npy without labels: %s", err.msg);
}

/* A file of more rows than one 4 MiB block: the rows are read and the labels inferred block by
 * block (the pages of each block released after use), the values of a part and of the whole. */
static void test_blocks(void)
{
    size_t n = 1100000;
    float *x = malloc(n * sizeof *x);
    unsigned char *y = malloc(n);
    for (size_t i = 0; i < n; i++) {
        x[i] = (float)(i % 1000) * 0.5f;
        y[i] = (unsigned char)(i % 7);
    }
    char dict[160];
    snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': (%zu, 1), }",
             n);
    write_npy("bx.npy", 1, dict, x, n * sizeof *x, 0);
    snprintf(dict, sizeof dict, "{'descr': '|u1', 'fortran_order': False, 'shape': (%zu,), }", n);
    write_npy("by.npy", 3, dict, y, n, 0);
    dpc_npy_opts o = {.task = DPC_TASK_CLASSIFICATION, .first = 500000, .count = 600000};
    dpc_dataset *ds = NULL;
    dpc_error err = {0};
    for (int whole = 0; whole < 2; whole++) {
        if (whole) o.first = o.count = 0;
        CHECK_OK(dpc_data_load_npy(&ds, path_of("bx.npy"), path_of("by.npy"), &o, &err), &err);
        if (!ds) break;
        size_t r0 = whole ? 0 : 500000, bad = 0;
        for (size_t i = 0; i < ds->n; i++)
            bad += ds->x[i] != (double)x[r0 + i] || ds->y[i] != (double)y[r0 + i];
        CHECK(bad == 0 && ds->n == (whole ? n : 600000) && ds->n_classes == 7,
              "%s: %zu rows, %zu classes, %zu values differ", whole ? "whole" : "part", ds->n,
              ds->n_classes, bad);
        dpc_dataset_free(ds);
        ds = NULL;
    }
    free(x);
    free(y);
}

int main(void)
{
    if (!mkdtemp(dir)) {
        fprintf(stderr, "cannot create %s\n", dir);
        return 1;
    }
    fixtures();
    test_read();
    test_refusals();
    test_shards();
    test_blocks();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return TEST_SUMMARY();
}
