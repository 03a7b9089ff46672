/* test_data.c — the data module: CSV / LIBSVM / IDX loaders on fixture files written at test
 * time (valid and malformed, plain and gzip), Fashion-MNIST (if installed), synthetic
 * generators (statistics, determinism), split/select, preprocessing and the spec parser.
 *
 * Reference values for Fashion-MNIST (labels, pixel sums) were computed independently with
 * Python's gzip module from the Debian files, not with this library. */
#include "dpcorr/data.h"
#include "harness.h"

#include <stdint.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

/* ==== Fixtures ============================================================================== */

static char g_dir[64];
static char g_paths[256][320];
static int g_npaths;

static const char *fixture_path(const char *name)
{
    if (g_npaths == 256) {
        fprintf(stderr, "too many fixtures\n");
        exit(1);
    }
    char *p = g_paths[g_npaths++];
    snprintf(p, sizeof g_paths[0], "%s/%s", g_dir, name);
    return p;
}

static const char *write_bytes(const char *name, const void *data, size_t len)
{
    const char *p = fixture_path(name);
    FILE *f = fopen(p, "wb");
    if (!f || fwrite(data, 1, len, f) != len || fclose(f)) {
        fprintf(stderr, "cannot write fixture %s\n", p);
        exit(1);
    }
    return p;
}

static const char *write_text(const char *name, const char *text)
{
    return write_bytes(name, text, strlen(text));
}

static const char *write_gz(const char *name, const void *data, size_t len)
{
    const char *p = fixture_path(name);
    gzFile f = gzopen(p, "wb9");
    if (!f || (len && gzwrite(f, data, (unsigned)len) != (int)len) || gzclose(f) != Z_OK) {
        fprintf(stderr, "cannot write gz fixture %s\n", p);
        exit(1);
    }
    return p;
}

static void cleanup(void)
{
    for (int i = 0; i < g_npaths; i++) unlink(g_paths[i]);
    rmdir(g_dir);
}

/* Checks status == want and that err.msg contains every needle (NULL-terminated list). */
static void check_err_(int line, const char *what, dpc_status got, dpc_status want,
                       const dpc_error *e, ...)
{
    CHECK(got == want, "line %d (%s): status %d, want %d; msg: %s", line, what, (int)got, (int)want,
          e->msg);
    va_list ap;
    va_start(ap, e);
    const char *needle;
    while ((needle = va_arg(ap, const char *)))
        CHECK(strstr(e->msg, needle) != NULL, "line %d (%s): message '%s' lacks '%s'", line, what,
              e->msg, needle);
    va_end(ap);
}
#define CHECK_ERR(what, got, want, e, ...) check_err_(__LINE__, what, got, want, e, __VA_ARGS__)

/* Big-endian IDX writer (independent of the loader). */
typedef struct bytes {
    unsigned char b[4096];
    size_t n;
} bytes;

static void put8(bytes *B, unsigned v) { B->b[B->n++] = (unsigned char)v; }
static void put32(bytes *B, uint32_t v)
{
    for (int s = 24; s >= 0; s -= 8) put8(B, (v >> s) & 0xff);
}
static void idx_head(bytes *B, int type, int ndim, const uint32_t *dims)
{
    B->n = 0;
    put8(B, 0);
    put8(B, 0);
    put8(B, (unsigned)type);
    put8(B, (unsigned)ndim);
    for (int k = 0; k < ndim; k++) put32(B, dims[k]);
}

/* ==== Dataset object ======================================================================== */

static void test_dataset_object(void)
{
    dpc_error e = {0};
    dpc_dataset *ds = NULL;
    CHECK_OK(dpc_dataset_new(&ds, 3, 2, 0, &e), &e);
    CHECK(ds && ds->n == 3 && ds->d == 2 && ds->x[5] == 0 && ds->y[2] == 0, "new zero-filled");
    dpc_dataset_free(ds);
    dpc_dataset_free(NULL);
    ds = (dpc_dataset *)1;
    CHECK_ERR("overflow", dpc_dataset_new(&ds, SIZE_MAX / 4, 8, 0, &e), DPC_E_NOMEM, &e, "overflow",
              NULL);
    CHECK(ds == NULL, "out cleared on failure");
    CHECK_ERR("d=0", dpc_dataset_new(&ds, 3, 0, 0, &e), DPC_E_INVALID, &e, "d", NULL);

    CHECK_OK(dpc_dataset_new(&ds, 3, 2, 3, &e), &e);
    snprintf(ds->source, sizeof ds->source, "mem");
    ds->y[0] = 0, ds->y[1] = 2, ds->y[2] = 1;
    CHECK_OK(dpc_dataset_check(ds, &e), &e);
    ds->x[3] = NAN;
    CHECK_ERR("check nan", dpc_dataset_check(ds, &e), DPC_E_NUMERIC, &e, "example 1 feature 1",
              NULL);
    ds->x[3] = 0;
    ds->y[1] = 3;
    CHECK_ERR("check label", dpc_dataset_check(ds, &e), DPC_E_INVALID, &e, "example 1", "label 3",
              NULL);
    ds->y[1] = 1.5;
    CHECK_ERR("check label frac", dpc_dataset_check(ds, &e), DPC_E_INVALID, &e, "1.5", NULL);
    ds->y[1] = 2; /* labels {0, 2, 1}: fine for K = 3, not for K = 2 */
    CHECK_ERR("set_classes", dpc_dataset_set_classes(ds, 2, &e), DPC_E_INVALID, &e, "example 1",
              "label 2", NULL);
    CHECK(ds->n_classes == 3, "failed set_classes leaves K");
    ds->y[1] = 0;
    CHECK_OK(dpc_dataset_set_classes(ds, 2, &e), &e);
    CHECK(ds->n_classes == 2, "set_classes sets K");
    dpc_dataset *other = NULL;
    CHECK_OK(dpc_dataset_new(&other, 2, 3, 2, &e), &e);
    CHECK_ERR("compat", dpc_dataset_check_compatible(ds, other, &e), DPC_E_FORMAT, &e,
              "dimension mismatch", "2 features", "has 3", NULL);
    dpc_dataset_free(other);
    dpc_dataset_free(ds);
}

/* ==== CSV =================================================================================== */

static void test_csv_valid(void)
{
    dpc_error e = {0};
    dpc_dataset *ds = NULL;
    const char *p = write_text("ok1.csv", "a,b,label\n1,2,0\n3.5,-4e-1,1\n# comment\n\n"
                                          "0x1p-3 , 6 ,2\r\n");
    dpc_csv_opts o = dpc_csv_opts_default();
    o.task = DPC_TASK_CLASSIFICATION;
    CHECK_OK(dpc_data_load_csv(&ds, p, &o, &e), &e);
    if (ds) {
        CHECK(ds->n == 3 && ds->d == 2 && ds->n_classes == 3, "shape %zu %zu %zu", ds->n, ds->d,
              ds->n_classes);
        CHECK(ds->x[2] == 3.5 && ds->x[3] == -0.4 && ds->x[4] == 0.125 && ds->x[5] == 6, "values");
        CHECK(ds->y[0] == 0 && ds->y[1] == 1 && ds->y[2] == 2, "labels");
        CHECK(ds->data_dependent == 1 && strstr(ds->preprocessing, "inferred"),
              "inferred K is flagged: '%s'", ds->preprocessing);
        CHECK(!strcmp(ds->source, p), "source is the path");
        CHECK_OK(dpc_dataset_check(ds, &e), &e);
    }
    /* Same content gzip-compressed under a name without .gz: identical result. */
    const char *raw = "a,b,label\n1,2,0\n3.5,-4e-1,1\n# comment\n\n0x1p-3 , 6 ,2\r\n";
    const char *pg = write_gz("ok1_gz.data", raw, strlen(raw));
    dpc_dataset *dg = NULL;
    CHECK_OK(dpc_data_load_csv(&dg, pg, &o, &e), &e);
    CHECK(ds && dg && dg->n == ds->n && !memcmp(dg->x, ds->x, ds->n * ds->d * sizeof(double)) &&
              !memcmp(dg->y, ds->y, ds->n * sizeof(double)),
          "gzip round trip gives identical data");
    dpc_dataset_free(dg);
    dpc_dataset_free(ds);

    /* Label by name in the first column, public K, ';' delimiter, quoted fields. */
    p = write_text("ok2.csv", "\"cls\";\"x 1\";x2\n\"1\";\"1.5\";2\n0;3;\"4\"\n");
    o = dpc_csv_opts_default();
    o.delimiter = ';';
    o.label_name = "cls";
    o.task = DPC_TASK_CLASSIFICATION;
    o.n_classes = 4;
    CHECK_OK(dpc_data_load_csv(&ds, p, &o, &e), &e);
    if (ds) {
        CHECK(ds->n == 2 && ds->d == 2 && ds->n_classes == 4 && ds->y[0] == 1 && ds->y[1] == 0,
              "label by name");
        CHECK(ds->x[0] == 1.5 && ds->x[1] == 2 && ds->x[3] == 4, "quoted numbers");
        CHECK(ds->data_dependent == 0, "public K is not data-dependent");
    }
    dpc_dataset_free(ds);

    /* Public class names; auto header with text labels; regression default elsewhere. */
    p = write_text("ok3.csv", "sl,sw,species\n5.1,3.5,setosa\n7.0,3.2,versicolor\n"
                              "6.3,3.3,virginica\n4.9,3.0,setosa\n");
    o = dpc_csv_opts_default();
    o.task = DPC_TASK_CLASSIFICATION;
    o.classes = "setosa|versicolor|virginica";
    CHECK_OK(dpc_data_load_csv(&ds, p, &o, &e), &e);
    if (ds) {
        CHECK(ds->n == 4 && ds->n_classes == 3 && ds->y[0] == 0 && ds->y[1] == 1 && ds->y[2] == 2 &&
                  ds->y[3] == 0,
              "class names mapped");
        CHECK(ds->data_dependent == 0, "public class list is data-independent");
    }
    dpc_dataset_free(ds);

    /* No header (numeric first row), label_col 0, tab-separated, -1/+1 labels. */
    p = write_text("ok4.tsv", "-1\t0.5\t1\n+1\t2\t3\n-1\t4\t5\n");
    o = dpc_csv_opts_default();
    o.delimiter = '\t';
    o.label_col = 0;
    o.task = DPC_TASK_CLASSIFICATION;
    CHECK_OK(dpc_data_load_csv(&ds, p, &o, &e), &e);
    if (ds)
        CHECK(ds->n == 3 && ds->n_classes == 2 && ds->y[0] == 0 && ds->y[1] == 1 && ds->x[0] == 0.5,
              "-1/+1 read as 0/1, no header");
    dpc_dataset_free(ds);

    /* UTF-8 BOM before a headerless numeric file: the first row is data. */
    p = write_text("ok_bom.csv", "\xEF\xBB\xBF"
                                 "1,2,3\n4,5,6\n");
    CHECK_OK(dpc_data_load_csv(&ds, p, NULL, &e), &e);
    CHECK(ds && ds->n == 2 && ds->x[0] == 1 && ds->y[0] == 3, "BOM skipped, row 1 kept");
    dpc_dataset_free(ds);

    /* Whitespace-separated regression, label_col -2 (middle), row limit. */
    p = write_text("ok5.txt", "  1   2.5  3\n4 \t 5.5 6  \n7 8 9\n");
    o = dpc_csv_opts_default();
    o.delimiter = ' ';
    o.label_col = -2;
    o.max_rows = 2;
    CHECK_OK(dpc_data_load_csv(&ds, p, &o, &e), &e);
    if (ds)
        CHECK(ds->n == 2 && ds->d == 2 && ds->n_classes == 0 && ds->y[0] == 2.5 &&
                  ds->y[1] == 5.5 && ds->x[2] == 4 && ds->x[3] == 6,
              "whitespace, middle label, limit");
    dpc_dataset_free(ds);
}

static void test_csv_malformed(void)
{
    dpc_error e = {0};
    dpc_dataset *ds = NULL;
    dpc_csv_opts o = dpc_csv_opts_default();
    dpc_csv_opts oc = o;
    oc.task = DPC_TASK_CLASSIFICATION;
    const char *p;

    p = write_text("bad_ragged.csv", "a,b,y\n1,2,3\n4,5\n");
    CHECK_ERR("ragged", dpc_data_load_csv(&ds, p, &o, &e), DPC_E_FORMAT, &e,
              "bad_ragged.csv:3:", "ragged", "2 fields", "expected 3", NULL);
    CHECK(ds == NULL, "out stays NULL");
    p = write_text("bad_mixed.csv", "1,abc,3\n1,2,3\n");
    CHECK_ERR("mixed first row", dpc_data_load_csv(&ds, p, &o, &e), DPC_E_FORMAT, &e,
              "bad_mixed.csv:1:", "mixes numbers and text", NULL);
    p = write_text("bad_text.csv", "1,2,3\n1,abc,3\n");
    CHECK_ERR("text", dpc_data_load_csv(&ds, p, &o, &e), DPC_E_FORMAT, &e,
              "bad_text.csv:2:", "column 2", "not a number", "abc", NULL);
    p = write_text("bad_nan.csv", "x,y\n1,2\nnan,3\n");
    CHECK_ERR("nan", dpc_data_load_csv(&ds, p, &o, &e), DPC_E_FORMAT, &e,
              "bad_nan.csv:3:", "column 1 ('x')", "NaN/Inf", NULL);
    p = write_text("bad_inf.csv", "1,-inf\n");
    CHECK_ERR("inf label", dpc_data_load_csv(&ds, p, &o, &e), DPC_E_FORMAT, &e,
              "bad_inf.csv:1:", "label", "NaN/Inf", NULL);
    p = write_text("bad_overflow.csv", "1e999,1\n");
    CHECK_ERR("overflow", dpc_data_load_csv(&ds, p, &o, &e), DPC_E_FORMAT, &e,
              "bad_overflow.csv:1:", "out-of-range", NULL);
    p = write_text("bad_empty_field.csv", "1,,3\n");
    CHECK_ERR("empty field", dpc_data_load_csv(&ds, p, &o, &e), DPC_E_FORMAT, &e,
              "bad_empty_field.csv:1:", "column 2", "empty field", NULL);
    p = write_text("bad_frac.csv", "1,2,0\n1,2,0.5\n");
    CHECK_ERR("fractional label", dpc_data_load_csv(&ds, p, &oc, &e), DPC_E_FORMAT, &e,
              "bad_frac.csv:2:", "not an integer", NULL);
    dpc_csv_opts ok2 = oc;
    ok2.n_classes = 2;
    p = write_text("bad_range.csv", "1,2,1\n1,2,5\n");
    CHECK_ERR("label range", dpc_data_load_csv(&ds, p, &ok2, &e), DPC_E_FORMAT, &e,
              "bad_range.csv:2:", "label 5 out of range 0..1", NULL);
    p = write_text("bad_neg.csv", "1,2,-3\n");
    CHECK_ERR("negative label", dpc_data_load_csv(&ds, p, &oc, &e), DPC_E_FORMAT, &e,
              "bad_neg.csv:1:", "out of range", NULL);
    p = write_text("bad_pm.csv", "1,2,-1\n3,4,0\n");
    CHECK_ERR("-1 and 0", dpc_data_load_csv(&ds, p, &oc, &e), DPC_E_FORMAT, &e,
              "bad_pm.csv:2:", "line 1 has label -1", NULL);
    p = write_text("bad_empty.csv", "");
    CHECK_ERR("empty file", dpc_data_load_csv(&ds, p, &o, &e), DPC_E_FORMAT, &e, "bad_empty.csv",
              "empty file", NULL);
    p = write_text("bad_blank.csv", "\n# only a comment\n  \n");
    CHECK_ERR("blank file", dpc_data_load_csv(&ds, p, &o, &e), DPC_E_FORMAT, &e, "empty file",
              NULL);
    p = write_text("bad_hdr_only.csv", "a,b,c\n");
    CHECK_ERR("header only", dpc_data_load_csv(&ds, p, &o, &e), DPC_E_FORMAT, &e,
              "bad_hdr_only.csv", "no data rows", NULL);
    dpc_csv_opts on = o;
    on.label_name = "price";
    p = write_text("bad_name.csv", "a,b,c\n1,2,3\n");
    CHECK_ERR("label name", dpc_data_load_csv(&ds, p, &on, &e), DPC_E_FORMAT, &e,
              "bad_name.csv:1:", "no column named 'price'", NULL);
    dpc_csv_opts ol = o;
    ol.label_col = 7;
    CHECK_ERR("label col", dpc_data_load_csv(&ds, p, &ol, &e), DPC_E_FORMAT, &e,
              "label column 7 out of range for 3 columns", NULL);
    ol.label_col = -4;
    CHECK_ERR("label col neg", dpc_data_load_csv(&ds, p, &ol, &e), DPC_E_FORMAT, &e,
              "label column -4", NULL);
    p = write_text("bad_quote.csv", "1,\"2,3\n");
    CHECK_ERR("unterminated quote", dpc_data_load_csv(&ds, p, &o, &e), DPC_E_FORMAT, &e,
              "bad_quote.csv:1:", "column 2", "unterminated", NULL);
    p = write_text("bad_afterquote.csv", "1,\"2\"x,3\n");
    CHECK_ERR("after quote", dpc_data_load_csv(&ds, p, &o, &e), DPC_E_FORMAT, &e,
              "bad_afterquote.csv:1:", "after the closing quote", NULL);
    dpc_csv_opts onames = oc;
    onames.classes = "cat|dog";
    p = write_text("bad_class.csv", "1,cat\n2,dog\n3,cow\n");
    CHECK_ERR("unlisted class", dpc_data_load_csv(&ds, p, &onames, &e), DPC_E_FORMAT, &e,
              "bad_class.csv:3:", "'cow' is not a listed class", NULL);
    p = write_bytes("bad_nul.csv", "1,2\n3,\0,4\n", 10);
    CHECK_ERR("NUL byte", dpc_data_load_csv(&ds, p, &o, &e), DPC_E_FORMAT, &e,
              "bad_nul.csv:2:", "NUL byte", NULL);
    p = write_text("bad_onecol.csv", "1\n2\n");
    CHECK_ERR("one column", dpc_data_load_csv(&ds, p, &o, &e), DPC_E_FORMAT, &e,
              "bad_onecol.csv:1:", "no feature columns", NULL);
    CHECK_ERR("missing file", dpc_data_load_csv(&ds, "/nonexistent/dpc.csv", &o, &e), DPC_E_IO, &e,
              "/nonexistent/dpc.csv", "cannot open", NULL);
    /* A truncated gzip stream is an error, not a short file. */
    char big[4000];
    for (size_t i = 0; i < sizeof big; i++) big[i] = "0123456789,\n"[(i * 7 + i / 13) % 12];
    unsigned char gz[8192];
    uLongf gzlen = sizeof gz;
    CHECK(compress2(gz, &gzlen, (const unsigned char *)big, sizeof big, 9) == Z_OK, "compress");
    const char *pg = write_gz("trunc_src.gz", big, sizeof big);
    FILE *f = fopen(pg, "rb");
    unsigned char whole[8192];
    size_t wl = f ? fread(whole, 1, sizeof whole, f) : 0;
    if (f) fclose(f);
    p = write_bytes("bad_trunc.csv.gz", whole, wl / 2);
    CHECK_ERR("truncated gzip", dpc_data_load_csv(&ds, p, &o, &e), DPC_E_FORMAT, &e,
              "bad_trunc.csv.gz", "truncated", NULL);
    dpc_csv_opts bad = o;
    bad.delimiter = '"';
    CHECK_ERR("bad delimiter", dpc_data_load_csv(&ds, p, &bad, &e), DPC_E_INVALID, &e, "delimiter",
              NULL);
    CHECK(ds == NULL, "never set on failure");
}

/* ==== LIBSVM ================================================================================ */

static void test_libsvm(void)
{
    dpc_error e = {0};
    dpc_dataset *ds = NULL;
    const char *txt = "+1 1:0.5 3:2\n-1 2:1e1   # comment\n\n+1\n";
    const char *p = write_text("ok.svm", txt);
    dpc_libsvm_opts o = {.task = DPC_TASK_CLASSIFICATION};
    CHECK_OK(dpc_data_load_libsvm(&ds, p, &o, &e), &e);
    if (ds) {
        CHECK(ds->n == 3 && ds->d == 3 && ds->n_classes == 2, "libsvm shape");
        CHECK(ds->x[0] == 0.5 && ds->x[1] == 0 && ds->x[2] == 2 && ds->x[4] == 10 &&
                  ds->x[6] == 0 && ds->x[8] == 0,
              "libsvm dense values");
        CHECK(ds->y[0] == 1 && ds->y[1] == 0 && ds->y[2] == 1, "libsvm +-1 labels");
        CHECK(ds->data_dependent && strstr(ds->preprocessing, "d = 3 inferred"),
              "inferred d flagged: %s", ds->preprocessing);
    }
    dpc_dataset *dg = NULL;
    const char *pg = write_gz("ok.svm.gz", txt, strlen(txt));
    CHECK_OK(dpc_data_load_libsvm(&dg, pg, &o, &e), &e);
    CHECK(ds && dg && !memcmp(ds->x, dg->x, 9 * sizeof(double)) &&
              !memcmp(ds->y, dg->y, 3 * sizeof(double)),
          "libsvm gzip round trip");
    dpc_dataset_free(dg);
    dpc_dataset_free(ds);
    dpc_libsvm_opts oreg = {.d = 5};
    CHECK_OK(dpc_data_load_libsvm(&ds, write_text("reg.svm", "2.5 5:1\n-0.25 1:3\n"), &oreg, &e),
             &e);
    if (ds)
        CHECK(ds->d == 5 && ds->n_classes == 0 && ds->y[0] == 2.5 && ds->y[1] == -0.25 &&
                  ds->x[4] == 1 && ds->x[5] == 3 && !ds->data_dependent,
              "libsvm regression with public d");
    dpc_dataset_free(ds);

    struct {
        const char *name, *text;
        dpc_status st;
        const char *n1, *n2;
    } bad[] = {
        {"s_idx0.svm", "1 1:1\n1 0:2\n", DPC_E_FORMAT, "s_idx0.svm:2:", "index 0"},
        {"s_unsorted.svm", "1 3:1 2:1\n", DPC_E_FORMAT, "s_unsorted.svm:1:", "strictly increasing"},
        {"s_dup.svm", "1 2:1 2:3\n", DPC_E_FORMAT, "s_dup.svm:1:", "index 2 after 2"},
        {"s_range.svm", "1 1:1\n1 2:1 4:1\n", DPC_E_FORMAT,
         "s_range.svm:2:", "index 4 out of range 1..3"},
        {"s_dash.svm", "1 3-1\n", DPC_E_FORMAT, "s_dash.svm:1:", "malformed pair '3-1'"},
        {"s_novalue.svm", "1 3:\n", DPC_E_FORMAT, "s_novalue.svm:1:", "empty field"},
        {"s_noindex.svm", "1 :3\n", DPC_E_FORMAT, "s_noindex.svm:1:", "malformed pair ':3'"},
        {"s_alpha.svm", "1 a:1\n", DPC_E_FORMAT, "s_alpha.svm:1:", "malformed pair"},
        {"s_val.svm", "1 2:x\n", DPC_E_FORMAT, "s_val.svm:1:", "not a number"},
        {"s_nan.svm", "1 2:nan\n", DPC_E_FORMAT, "s_nan.svm:1:", "NaN/Inf"},
        {"s_label.svm", "abc 1:1\n", DPC_E_FORMAT, "s_label.svm:1:", "label: not a number"},
        {"s_pairfirst.svm", "1:2 3:4\n", DPC_E_FORMAT, "s_pairfirst.svm:1:", "not a label"},
        {"s_qid.svm", "1 qid:3 1:1\n", DPC_E_UNSUPPORTED, "s_qid.svm:1:", "qid"},
        {"s_empty.svm", "# nothing\n", DPC_E_FORMAT, "s_empty.svm", "empty file"},
        {"s_fraclabel.svm", "1.5 1:1\n", DPC_E_FORMAT, "s_fraclabel.svm:1:", "not an integer"},
        {"s_huge.svm", "1 99999999999999999999999:1\n", DPC_E_FORMAT, "s_huge.svm:1:", "too large"},
    };
    /* a tiny file with one huge index (found by fuzz/fuzz_libsvm.c): d inferred beyond
     * DPC_DATA_MAX_FEATURES is refused, never an allocation of terabytes */
    dpc_libsvm_opts oinf = {.task = DPC_TASK_CLASSIFICATION};
    CHECK(dpc_data_load_libsvm(&ds, write_text("s_bigidx.svm", "1 2133333333333:1\n0 1:1\n"),
                               &oinf, &e) == DPC_E_RANGE && !strcmp(e.field, "d") && !ds,
          "index 2.1e12 refused: %s", e.msg);
    dpc_libsvm_opts o3 = {.d = 3, .task = DPC_TASK_CLASSIFICATION};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        p = write_text(bad[k].name, bad[k].text);
        CHECK_ERR(bad[k].name, dpc_data_load_libsvm(&ds, p, &o3, &e), bad[k].st, &e, bad[k].n1,
                  bad[k].n2, NULL);
        CHECK(ds == NULL, "%s: no output", bad[k].name);
    }
}

/* ==== IDX =================================================================================== */

static void test_idx(void)
{
    dpc_error e = {0};
    dpc_dataset *ds = NULL;
    bytes I, L;
    const uint32_t di[3] = {3, 2, 2}, dl[1] = {3};
    idx_head(&I, 0x08, 3, di);
    const unsigned char px[12] = {0, 255, 1, 128, 10, 20, 30, 40, 254, 3, 2, 7};
    for (int k = 0; k < 12; k++) put8(&I, px[k]);
    idx_head(&L, 0x08, 1, dl);
    put8(&L, 2), put8(&L, 0), put8(&L, 1);
    const char *pi = write_bytes("img.idx", I.b, I.n), *pl = write_bytes("lab.idx", L.b, L.n);
    CHECK_OK(dpc_data_load_idx(&ds, pi, pl, NULL, &e), &e);
    if (ds) {
        CHECK(ds->n == 3 && ds->d == 4 && ds->n_classes == 3, "idx shape");
        int exact = 1;
        for (int k = 0; k < 12; k++) exact &= ds->x[k] == px[k] / 255.0;
        CHECK(exact, "pixels are exactly b / 255");
        CHECK(ds->y[0] == 2 && ds->y[1] == 0 && ds->y[2] == 1, "idx labels");
        CHECK(ds->x_norm_bound == 2.0, "bound sqrt(d)");
        CHECK(ds->data_dependent && strstr(ds->preprocessing, "pixels / 255"),
              "K inferred is flagged, /255 logged: %s", ds->preprocessing);
    }
    /* gzip round trip, public K, record limit. */
    const char *gi = write_gz("img.idx.gz", I.b, I.n), *gl = write_gz("lab.idx.gz", L.b, L.n);
    dpc_dataset *dg = NULL;
    dpc_idx_opts o = {.n_classes = 3};
    CHECK_OK(dpc_data_load_idx(&dg, gi, gl, &o, &e), &e);
    CHECK(ds && dg && !memcmp(ds->x, dg->x, 12 * sizeof(double)) && !dg->data_dependent,
          "idx gzip round trip");
    dpc_dataset_free(dg);
    o.max_records = 2;
    o.scale = 2;
    CHECK_OK(dpc_data_load_idx(&dg, gi, gl, &o, &e), &e);
    CHECK(dg && dg->n == 2 && dg->x[1] == 510 && dg->y[1] == 0, "limit and scale");
    dpc_dataset_free(dg);
    dpc_dataset_free(ds);

    /* Other element types: float32 and int16, big-endian. */
    bytes F;
    const uint32_t df[2] = {3, 1};
    idx_head(&F, 0x0D, 2, df);
    const float fv[3] = {1.5f, -2.25f, 1e-3f};
    for (int k = 0; k < 3; k++) {
        uint32_t u;
        memcpy(&u, &fv[k], 4);
        put32(&F, u);
    }
    CHECK_OK(dpc_data_load_idx(&ds, write_bytes("f32.idx", F.b, F.n), pl, NULL, &e), &e);
    CHECK(ds && ds->d == 1 && ds->x[0] == 1.5 && ds->x[1] == -2.25 && ds->x[2] == (double)1e-3f,
          "float32 decode");
    dpc_dataset_free(ds);
    idx_head(&F, 0x0B, 2, df);
    put8(&F, 0xff), put8(&F, 0xfe), put8(&F, 0x01), put8(&F, 0x00), put8(&F, 0), put8(&F, 5);
    CHECK_OK(dpc_data_load_idx(&ds, write_bytes("i16.idx", F.b, F.n), pl, NULL, &e), &e);
    CHECK(ds && ds->x[0] == -2 && ds->x[1] == 256 && ds->x[2] == 5, "int16 decode");
    dpc_dataset_free(ds);

    /* Malformed. */
    bytes B = I;
    B.b[0] = 1;
    const char *p = write_bytes("bad_magic.idx", B.b, B.n);
    CHECK_ERR("magic", dpc_data_load_idx(&ds, p, pl, NULL, &e), DPC_E_FORMAT, &e, "bad_magic.idx",
              "byte 0", "bad magic", NULL);
    p = write_bytes("bad_short.idx", I.b, 3);
    CHECK_ERR("short header", dpc_data_load_idx(&ds, p, pl, NULL, &e), DPC_E_FORMAT, &e,
              "bad_short.idx", "truncated header", NULL);
    p = write_bytes("bad_dims.idx", I.b, 10);
    CHECK_ERR("short dims", dpc_data_load_idx(&ds, p, pl, NULL, &e), DPC_E_FORMAT, &e,
              "bad_dims.idx", "byte 10", "truncated header", NULL);
    p = write_bytes("bad_trunc.idx", I.b, I.n - 2);
    CHECK_ERR("truncated data", dpc_data_load_idx(&ds, p, pl, NULL, &e), DPC_E_FORMAT, &e,
              "bad_trunc.idx", "byte 26", "truncated in record 2 of 3", NULL);
    p = write_gz("bad_trunc2.idx.gz", I.b, I.n - 5);
    CHECK_ERR("truncated data (gz)", dpc_data_load_idx(&ds, p, pl, NULL, &e), DPC_E_FORMAT, &e,
              "bad_trunc2.idx.gz", "truncated in record 1", NULL);
    B = I;
    put8(&B, 9);
    p = write_bytes("bad_trail.idx", B.b, B.n);
    CHECK_ERR("trailing", dpc_data_load_idx(&ds, p, pl, NULL, &e), DPC_E_FORMAT, &e,
              "bad_trail.idx", "byte 28", "after the last record", NULL);
    const uint32_t dl2[1] = {2};
    idx_head(&B, 0x08, 1, dl2);
    put8(&B, 0), put8(&B, 1);
    p = write_bytes("bad_count.idx", B.b, B.n);
    CHECK_ERR("count", dpc_data_load_idx(&ds, pi, p, NULL, &e), DPC_E_FORMAT, &e, "count mismatch",
              "3 images", "bad_count.idx has 2 labels", NULL);
    const uint32_t dl3[2] = {3, 1};
    idx_head(&B, 0x08, 2, dl3);
    put8(&B, 0), put8(&B, 1), put8(&B, 1);
    p = write_bytes("bad_lab2d.idx", B.b, B.n);
    CHECK_ERR("labels 2-D", dpc_data_load_idx(&ds, pi, p, NULL, &e), DPC_E_FORMAT, &e,
              "bad_lab2d.idx", "1-dimensional", NULL);
    B = I;
    B.b[2] = 0x07;
    p = write_bytes("bad_type.idx", B.b, B.n);
    CHECK_ERR("type", dpc_data_load_idx(&ds, p, pl, NULL, &e), DPC_E_FORMAT, &e, "byte 2",
              "unknown IDX data type 0x07", NULL);
    dpc_idx_opts o2 = {.n_classes = 2};
    CHECK_ERR("label range", dpc_data_load_idx(&ds, pi, pl, &o2, &e), DPC_E_FORMAT, &e, "lab.idx",
              "byte 8", "record 0", "label 2 out of range 0..1", NULL);
    p = write_bytes("bad_empty.idx", "", 0);
    CHECK_ERR("empty", dpc_data_load_idx(&ds, p, pl, NULL, &e), DPC_E_FORMAT, &e, "bad_empty.idx",
              "empty file", NULL);
    const uint32_t dz[3] = {3, 0, 2};
    idx_head(&B, 0x08, 3, dz);
    p = write_bytes("bad_zero.idx", B.b, B.n);
    CHECK_ERR("zero dim", dpc_data_load_idx(&ds, p, pl, NULL, &e), DPC_E_FORMAT, &e, "bad_zero.idx",
              "dimension 1 is 0", NULL);
    idx_head(&B, 0x0D, 1, dl);
    put32(&B, 0), put32(&B, 0), put32(&B, 0);
    p = write_bytes("bad_flab.idx", B.b, B.n);
    CHECK_ERR("float labels", dpc_data_load_idx(&ds, pi, p, NULL, &e), DPC_E_FORMAT, &e,
              "bad_flab.idx", "integer type", NULL);
    idx_head(&B, 0x0D, 2, df);
    put32(&B, 0x3f800000u), put32(&B, 0x7fc00000u), put32(&B, 0);
    p = write_bytes("bad_fnan.idx", B.b, B.n);
    CHECK_ERR("float NaN", dpc_data_load_idx(&ds, p, pl, NULL, &e), DPC_E_FORMAT, &e,
              "bad_fnan.idx", "record 1", "NaN/Inf", NULL);
    const uint32_t dh[3] = {0xffffffffu, 0xffffffffu, 0xffffffffu}, dhl[1] = {0xffffffffu};
    idx_head(&B, 0x0E, 3, dh);
    p = write_bytes("bad_huge.idx", B.b, B.n);
    idx_head(&L, 0x08, 1, dhl);
    const char *pl2 = write_bytes("huge_lab.idx", L.b, L.n);
    dpc_status st = dpc_data_load_idx(&ds, p, pl2, NULL, &e);
    CHECK(st == DPC_E_RANGE || st == DPC_E_NOMEM, "huge dims: status %d (%s)", (int)st, e.msg);
    CHECK(strstr(e.msg, "bad_huge.idx") != NULL, "huge dims names the file: %s", e.msg);
    /* A 16-byte header declaring 2^51 bytes of doubles with no data: must fail as truncated,
     * without first allocating for the declared size. */
    const uint32_t dbig[3] = {0xffffffu, 0xffffu, 0xffu}, dbigl[1] = {0xffffffu};
    idx_head(&B, 0x08, 3, dbig);
    put8(&B, 1), put8(&B, 2);
    p = write_bytes("bad_bigdecl.idx", B.b, B.n);
    idx_head(&L, 0x08, 1, dbigl);
    pl2 = write_bytes("bigdecl_lab.idx", L.b, L.n);
    CHECK_ERR("huge declared, no data", dpc_data_load_idx(&ds, p, pl2, NULL, &e), DPC_E_FORMAT, &e,
              "bad_bigdecl.idx", "truncated in record 0 of 16777215", NULL);
    CHECK_ERR("missing", dpc_data_load_idx(&ds, "/nonexistent/x.idx", pl, NULL, &e), DPC_E_IO, &e,
              "/nonexistent/x.idx", NULL);
    CHECK(ds == NULL, "idx: no output on failure");
}

/* ==== Fashion-MNIST ========================================================================= */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void check_fm_split(const dpc_dataset *ds, size_t n, const int *first10, double pix_sum,
                           double img0_sum, const char *name)
{
    CHECK(ds->n == n && ds->d == 784 && ds->n_classes == 10, "%s shape %zu x %zu, K %zu", name,
          ds->n, ds->d, ds->n_classes);
    size_t hist[10] = {0};
    int bad_label = 0;
    for (size_t i = 0; i < ds->n; i++) {
        double y = ds->y[i];
        if (y >= 0 && y < 10 && y == (int)y)
            hist[(int)y]++;
        else
            bad_label = 1;
    }
    CHECK(!bad_label, "%s labels in 0..9", name);
    for (int c = 0; c < 10; c++)
        CHECK(hist[c] == n / 10, "%s class %d has %zu examples", name, c, hist[c]);
    int ok = 1;
    for (int i = 0; i < 10; i++) ok &= ds->y[i] == first10[i];
    CHECK(ok, "%s first ten labels", name);
    double mn = 1, mx = 0, s = 0, s0 = 0;
    for (size_t k = 0; k < ds->n * ds->d; k++) {
        double v = ds->x[k];
        if (v < mn) mn = v;
        if (v > mx) mx = v;
        s += v * 255.0;
        if (k < 784) s0 += v * 255.0;
    }
    CHECK(mn == 0 && mx == 1, "%s pixel range [%g, %g]", name, mn, mx);
    CHECK_NEAR_REL(s, pix_sum, 1e-9, "%s pixel byte sum", name);
    CHECK_NEAR_REL(s0, img0_sum, 1e-12, "%s first image byte sum", name);
    CHECK(ds->x_norm_bound == 28 && !ds->data_dependent, "%s public bound, no data-dependence",
          name);
}

static void test_fashion_mnist(void)
{
    struct stat sb;
    if (stat(DPC_DATA_FASHION_MNIST_DIR, &sb) != 0) {
        SKIP("%s absent; Fashion-MNIST test skipped", DPC_DATA_FASHION_MNIST_DIR);
        return;
    }
    dpc_error e = {0};
    dpc_dataset *tr = NULL, *te = NULL;
    double t0 = now_s();
    CHECK_OK(dpc_data_load_fashion_mnist(&tr, &te, NULL, &e), &e);
    double t1 = now_s();
    printf("note: Fashion-MNIST train+test loaded in %.3f s\n", t1 - t0);
    if (tr && te) {
        static const int tr10[10] = {9, 0, 0, 3, 0, 2, 7, 2, 5, 5};
        static const int te10[10] = {9, 2, 1, 1, 6, 1, 4, 6, 5, 7};
        check_fm_split(tr, 60000, tr10, 3431114169.0, 76247.0, "train");
        check_fm_split(te, 10000, te10, 573469082.0, 33456.0, "test");
        CHECK(!strcmp(tr->source, "fashion-mnist:train") &&
                  !strcmp(te->source, "fashion-mnist:test"),
              "sources %s %s", tr->source, te->source);
        CHECK_OK(dpc_dataset_check(tr, &e), &e);
        CHECK_OK(dpc_dataset_check_compatible(tr, te, &e), &e);
    }
    /* Spec path with limits. */
    dpc_dataset *a = NULL, *b = NULL;
    CHECK_OK(dpc_data_load_spec(&a, &b, "fashion-mnist:limit=100,test-limit=10,clip=5", NULL, &e),
             &e);
    if (a && b && tr) {
        CHECK(a->n == 100 && b->n == 10 && a->x_norm_bound == 5, "spec limits");
        CHECK(a->y[0] == 9 && b->y[1] == 2, "spec labels");
    }
    dpc_dataset_free(a);
    dpc_dataset_free(b);
    CHECK_ERR("missing dir", dpc_data_load_fashion_mnist(&a, NULL, "/nonexistent", &e), DPC_E_IO,
              &e, "/nonexistent/train-images-idx3-ubyte", NULL);
    dpc_dataset_free(tr);
    dpc_dataset_free(te);
}

/* ==== Synthetic ============================================================================= */

/* Jacobi eigenvalues of the symmetric d x d matrix A (destroyed), into ev (descending). */
static void jacobi_eigen(double *A, size_t d, double *ev)
{
    for (int sweep = 0; sweep < 100; sweep++) {
        double off = 0;
        for (size_t p = 0; p < d; p++)
            for (size_t q = p + 1; q < d; q++) off += A[p * d + q] * A[p * d + q];
        if (off < 1e-30) break;
        for (size_t p = 0; p < d; p++)
            for (size_t q = p + 1; q < d; q++) {
                double apq = A[p * d + q];
                if (fabs(apq) < 1e-300) continue;
                double theta = (A[q * d + q] - A[p * d + p]) / (2 * apq);
                double t = (theta >= 0 ? 1 : -1) / (fabs(theta) + sqrt(theta * theta + 1));
                double c = 1 / sqrt(t * t + 1), s = t * c;
                for (size_t k = 0; k < d; k++) {
                    double akp = A[k * d + p], akq = A[k * d + q];
                    A[k * d + p] = c * akp - s * akq;
                    A[k * d + q] = s * akp + c * akq;
                }
                for (size_t k = 0; k < d; k++) {
                    double apk = A[p * d + k], aqk = A[q * d + k];
                    A[p * d + k] = c * apk - s * aqk;
                    A[q * d + k] = s * apk + c * aqk;
                }
            }
    }
    for (size_t k = 0; k < d; k++) ev[k] = A[k * d + k];
    for (size_t i = 0; i < d; i++)
        for (size_t j = i + 1; j < d; j++)
            if (ev[j] > ev[i]) {
                double t = ev[i];
                ev[i] = ev[j];
                ev[j] = t;
            }
}

static int same_data(const dpc_dataset *a, const dpc_dataset *b)
{
    return a && b && a->n == b->n && a->d == b->d &&
           !memcmp(a->x, b->x, a->n * a->d * sizeof(double)) &&
           !memcmp(a->y, b->y, a->n * sizeof(double));
}

static void test_synth_linreg(void)
{
    dpc_error e = {0};
    dpc_rng rng;
    dpc_rng_seed(&rng, 20240601);
    size_t n = tests_scale() < 1 ? 5000 : 40000, d = 8;
    double alpha = 1.0, noise = 0.3;
    dpc_dataset *ds = NULL;
    CHECK_OK(dpc_data_synth_linreg(&ds, &rng, 0, n, d, alpha, noise, NULL, &e), &e);
    if (!ds) return;
    CHECK(ds->n_classes == 0 && ds->truth && ds->cov_diag, "linreg metadata");
    double wn = 0;
    for (size_t k = 0; k < d; k++) wn += ds->truth[k] * ds->truth[k];
    CHECK_NEAR_REL(wn, 1.0, 1e-12, "default w* has unit norm");
    for (size_t k = 0; k < d; k++)
        CHECK_NEAR_REL(ds->cov_diag[k], pow((double)(k + 1), -alpha), 1e-15, "cov_diag %zu", k);
    /* Empirical second-moment matrix and its spectrum. */
    double S[64] = {0}, ev[8], res2 = 0, res1 = 0;
    for (size_t i = 0; i < n; i++) {
        const double *x = ds->x + i * d;
        for (size_t p = 0; p < d; p++)
            for (size_t q = 0; q < d; q++) S[p * d + q] += x[p] * x[q];
        double r = ds->y[i];
        for (size_t k = 0; k < d; k++) r -= x[k] / sqrt((double)d);
        res1 += r;
        res2 += r * r;
    }
    for (int k = 0; k < 64; k++) S[k] /= (double)n;
    double tol = 6 * sqrt(2.0 / (double)n);
    for (size_t k = 0; k < d; k++) {
        double lam = pow((double)(k + 1), -alpha);
        CHECK_NEAR_REL(S[k * d + k], lam, tol, "E x_%zu^2 = %zu^-alpha", k, k + 1);
        for (size_t q = k + 1; q < d; q++)
            CHECK(fabs(S[k * d + q]) < 6 * sqrt(lam * pow((double)(q + 1), -alpha) / (double)n),
                  "cov(%zu,%zu) = %g ~ 0", k, q, S[k * d + q]);
    }
    jacobi_eigen(S, d, ev);
    for (size_t k = 0; k < d; k++)
        CHECK_NEAR_REL(ev[k], pow((double)(k + 1), -alpha), 0.05, "eigenvalue %zu", k);
    CHECK_NEAR_REL(res2 / (double)n, noise * noise, tol, "residual variance = noise^2");
    CHECK(fabs(res1 / (double)n) < 6 * noise / sqrt((double)n), "residual mean 0");

    /* Determinism: same seed -> same bytes; prefix-stable; other stream/seed differ. */
    dpc_dataset *a = NULL, *b = NULL, *c = NULL, *f = NULL;
    CHECK_OK(dpc_data_synth_linreg(&a, &rng, 0, 200, d, alpha, noise, NULL, &e), &e);
    CHECK_OK(dpc_data_synth_linreg(&b, &rng, 0, 100, d, alpha, noise, NULL, &e), &e);
    CHECK_OK(dpc_data_synth_linreg(&c, &rng, 1, 200, d, alpha, noise, NULL, &e), &e);
    dpc_rng other;
    dpc_rng_seed(&other, 20240602);
    CHECK_OK(dpc_data_synth_linreg(&f, &other, 0, 200, d, alpha, noise, NULL, &e), &e);
    CHECK(a && !memcmp(a->x, ds->x, 200 * d * sizeof(double)) &&
              !memcmp(a->y, ds->y, 200 * sizeof(double)),
          "same seed, same bytes");
    CHECK(a && b && !memcmp(a->x, b->x, 100 * d * sizeof(double)), "prefix stable");
    CHECK(a && c && memcmp(a->x, c->x, 200 * d * sizeof(double)), "other stream differs");
    CHECK(a && f && memcmp(a->x, f->x, 200 * d * sizeof(double)), "other seed differs");
    dpc_dataset_free(a);
    dpc_dataset_free(b);
    dpc_dataset_free(c);
    dpc_dataset_free(f);

    /* Given w* and spectrum. */
    const double w[3] = {2, -1, 0.5}, lam[3] = {4, 1, 0.25};
    CHECK_OK(dpc_data_synth_linreg_spectrum(&a, &rng, 3, 1000, 3, lam, 0, w, &e), &e);
    if (a) {
        double maxr = 0, m0 = 0;
        for (size_t i = 0; i < a->n; i++) {
            const double *x = a->x + i * 3;
            maxr = fmax(maxr, fabs(a->y[i] - (2 * x[0] - x[1] + 0.5 * x[2])));
            m0 += x[0] * x[0];
        }
        CHECK(maxr < 1e-12, "noise 0: y = <w*, x> (max residual %g)", maxr);
        CHECK_NEAR_REL(m0 / 1000, 4.0, 6 * sqrt(2.0 / 1000), "lambda_1 = 4");
        CHECK(a->truth[1] == -1 && a->cov_diag[2] == 0.25, "truth and cov_diag stored");
    }
    dpc_dataset_free(a);
    CHECK_ERR("alpha<0", dpc_data_synth_linreg(&a, &rng, 0, 10, 3, -1, 0.1, NULL, &e),
              DPC_E_INVALID, &e, "alpha", NULL);
    CHECK_ERR("noise<0", dpc_data_synth_linreg(&a, &rng, 0, 10, 3, 1, -0.1, NULL, &e),
              DPC_E_INVALID, &e, "noise", NULL);
    CHECK_ERR("n=0", dpc_data_synth_linreg(&a, &rng, 0, 0, 3, 1, 0.1, NULL, &e), DPC_E_INVALID, &e,
              "n must be", NULL);
    CHECK_ERR("rng", dpc_data_synth_linreg(&a, NULL, 0, 10, 3, 1, 0.1, NULL, &e), DPC_E_INVALID, &e,
              "rng", NULL);
    CHECK_ERR("stream", dpc_data_synth_linreg(&a, &rng, 1ull << 32, 10, 3, 1, 0.1, NULL, &e),
              DPC_E_INVALID, &e, "stream", NULL);
    const double badlam[2] = {1, 0};
    CHECK_ERR("lambda", dpc_data_synth_linreg_spectrum(&a, &rng, 0, 10, 2, badlam, 0.1, NULL, &e),
              DPC_E_INVALID, &e, "lambda[1]", NULL);
    dpc_dataset_free(ds);
}

static void test_synth_mean(void)
{
    dpc_error e = {0};
    dpc_rng rng;
    dpc_rng_seed(&rng, 7);
    size_t n = tests_scale() < 1 ? 4000 : 20000;
    dpc_dataset *ds = NULL;
    /* 1-D: the paper's z in [-1, 1] with |z - Ez| = sigma exactly. */
    const double mu1 = 0.3;
    CHECK_OK(dpc_data_synth_mean(&ds, &rng, 0, n, 1, &mu1, 0.6, 1.0, &e), &e);
    if (ds) {
        int two_point = 1;
        double s = 0, pos = 0;
        for (size_t i = 0; i < n; i++) {
            double z = ds->x[i];
            two_point &= fabs(fabs(z - mu1) - 0.6) < 1e-15 && fabs(z) <= 1.0;
            s += z;
            pos += z > mu1;
        }
        CHECK(two_point, "1-D: z = mu +- spread, |z| <= 1");
        CHECK(fabs(s / (double)n - mu1) < 6 * 0.6 / sqrt((double)n), "1-D mean %g", s / (double)n);
        CHECK(fabs(pos / (double)n - 0.5) < 6 * 0.5 / sqrt((double)n), "1-D signs balanced");
        CHECK(ds->x_norm_bound == 1.0 && ds->truth[0] == mu1, "bound and truth");
    }
    dpc_dataset_free(ds);
    /* d = 5 with the default mean. */
    size_t d = 5;
    double spread = 0.4;
    CHECK_OK(dpc_data_synth_mean(&ds, &rng, 1, n, d, NULL, spread, 1.0, &e), &e);
    if (ds) {
        double m[5] = {0}, c[25] = {0};
        int on_sphere = 1, in_ball = 1;
        for (size_t i = 0; i < n; i++) {
            const double *x = ds->x + i * d;
            double r = 0, nr = 0;
            for (size_t k = 0; k < d; k++) {
                double t = x[k] - ds->truth[k];
                r += t * t;
                nr += x[k] * x[k];
                m[k] += x[k];
            }
            on_sphere &= fabs(sqrt(r) - spread) < 1e-12;
            in_ball &= sqrt(nr) <= 1.0;
            for (size_t p = 0; p < d; p++)
                for (size_t q = 0; q < d; q++)
                    c[p * d + q] += (x[p] - ds->truth[p]) * (x[q] - ds->truth[q]);
        }
        CHECK(on_sphere && in_ball, "||x - mean|| = spread and ||x|| <= radius");
        double mn = 0;
        for (size_t k = 0; k < d; k++) mn += ds->truth[k] * ds->truth[k];
        CHECK_NEAR_REL(sqrt(mn), 0.5, 1e-12, "default mean has norm radius/2");
        double v = spread * spread / (double)d;
        for (size_t k = 0; k < d; k++) {
            CHECK(fabs(m[k] / (double)n - ds->truth[k]) < 6 * sqrt(v / (double)n), "mean %zu", k);
            CHECK_NEAR_REL(c[k * d + k] / (double)n, v, 0.1, "cov %zu = spread^2/d", k);
        }
        CHECK_OK(dpc_dataset_check(ds, &e), &e);
    }
    dpc_dataset_free(ds);
    CHECK_ERR("outside ball", dpc_data_synth_mean(&ds, &rng, 0, 10, 1, &mu1, 0.8, 1.0, &e),
              DPC_E_INVALID, &e, "exceeds the radius", NULL);
}

static void test_synth_logistic(void)
{
    dpc_error e = {0};
    dpc_rng rng;
    dpc_rng_seed(&rng, 99);
    size_t n = tests_scale() < 1 ? 4000 : 20000, d = 6;
    double margin = 0.5;
    const double w[6] = {3, 0, -4, 0, 0, 0}; /* normalised to (0.6, 0, -0.8, 0, 0, 0) */
    dpc_dataset *ds = NULL;
    CHECK_OK(dpc_data_synth_logistic(&ds, &rng, 0, n, d, margin, 0.0, w, &e), &e);
    if (ds) {
        CHECK(ds->n_classes == 2 && fabs(ds->truth[0] - 0.6) < 1e-15 &&
                  fabs(ds->truth[2] + 0.8) < 1e-15,
              "unit truth");
        double minm = INFINITY, ones = 0;
        for (size_t i = 0; i < n; i++) {
            const double *x = ds->x + i * d;
            double t = 0.6 * x[0] - 0.8 * x[2], s = ds->y[i] == 1 ? 1 : -1;
            minm = fmin(minm, s * t);
            ones += ds->y[i];
        }
        CHECK(minm >= margin * (1 - 1e-12), "margin respected: min signed distance %g", minm);
        CHECK(minm < margin + 0.01, "margin is tight (min %g)", minm);
        CHECK(fabs(ones / (double)n - 0.5) < 6 * 0.5 / sqrt((double)n), "classes balanced");
        CHECK_OK(dpc_dataset_check(ds, &e), &e);
    }
    dpc_dataset_free(ds);
    double flip = 0.1;
    CHECK_OK(dpc_data_synth_logistic(&ds, &rng, 0, n, d, margin, flip, NULL, &e), &e);
    if (ds) {
        double wrong = 0;
        for (size_t i = 0; i < n; i++) {
            double t = 0;
            for (size_t k = 0; k < d; k++) t += ds->x[i * d + k] / sqrt((double)d);
            wrong += (t > 0) != (ds->y[i] == 1);
        }
        CHECK(fabs(wrong / (double)n - flip) < 6 * sqrt(flip * (1 - flip) / (double)n),
              "flip rate %g", wrong / (double)n);
    }
    dpc_dataset *a = NULL;
    CHECK_OK(dpc_data_synth_logistic(&a, &rng, 0, n, d, margin, flip, NULL, &e), &e);
    CHECK(same_data(ds, a), "logistic deterministic");
    dpc_dataset_free(a);
    dpc_dataset_free(ds);
    CHECK_ERR("flip", dpc_data_synth_logistic(&ds, &rng, 0, 10, 2, 0.1, 0.5, NULL, &e),
              DPC_E_INVALID, &e, "flip", NULL);
    const double zero[2] = {0, 0};
    CHECK_ERR("w=0", dpc_data_synth_logistic(&ds, &rng, 0, 10, 2, 0.1, 0, zero, &e), DPC_E_INVALID,
              &e, "non-zero", NULL);
}

/* ==== Split and preprocessing =============================================================== */

static void test_split(void)
{
    dpc_error e = {0};
    dpc_dataset *ds = NULL, *a = NULL, *b = NULL, *a2 = NULL, *c = NULL;
    size_t n = 1000;
    CHECK_OK(dpc_dataset_new(&ds, n, 2, 0, &e), &e);
    if (!ds) return;
    for (size_t i = 0; i < n; i++) ds->y[i] = (double)i, ds->x[2 * i] = (double)i;
    dpc_rng rng;
    dpc_rng_seed(&rng, 5);
    CHECK_OK(dpc_dataset_split(&a, &b, ds, 700, &rng, 0, &e), &e);
    if (a && b) {
        CHECK(a->n == 700 && b->n == 300, "split sizes");
        unsigned char seen[1000] = {0};
        int ok = 1, ordered = 1, prefix = 1;
        for (size_t i = 0; i < a->n; i++) {
            ok &= a->x[2 * i] == a->y[i];
            seen[(size_t)a->y[i]]++;
            if (i) ordered &= a->y[i] > a->y[i - 1];
            prefix &= a->y[i] == (double)i;
        }
        for (size_t i = 0; i < b->n; i++) {
            seen[(size_t)b->y[i]]++;
            if (i) ordered &= b->y[i] > b->y[i - 1];
        }
        for (size_t i = 0; i < n; i++) ok &= seen[i] == 1;
        CHECK(ok, "split is a partition, rows intact");
        CHECK(ordered, "parts keep the original order");
        CHECK(!prefix, "random split is not the prefix");
        double mean_b = 0;
        for (size_t i = 0; i < b->n; i++) mean_b += b->y[i] / (double)b->n;
        CHECK(fabs(mean_b - 499.5) < 6 * 288.7 / sqrt(300.0), "held-out part spread: mean %g",
              mean_b);
    }
    CHECK_OK(dpc_dataset_split(&a2, NULL, ds, 700, &rng, 0, &e), &e);
    CHECK(same_data(a, a2), "split deterministic");
    dpc_dataset_free(a2);
    CHECK_OK(dpc_dataset_split(&a2, NULL, ds, 700, &rng, 1, &e), &e);
    CHECK(a && a2 && memcmp(a->y, a2->y, 700 * sizeof(double)), "other stream, other split");
    dpc_dataset_free(a2);
    CHECK_OK(dpc_dataset_split(&a2, &c, ds, 700, NULL, 0, &e), &e);
    CHECK(a2 && c && a2->y[699] == 699 && c->y[0] == 700, "ordered split");
    dpc_dataset_free(a2);
    dpc_dataset_free(c);
    CHECK_ERR("split n", dpc_dataset_split(&a2, &c, ds, 1001, NULL, 0, &e), DPC_E_INVALID, &e,
              "1001", NULL);
    const size_t idx[3] = {5, 5, 999};
    CHECK_OK(dpc_dataset_select(&c, ds, idx, 3, &e), &e);
    CHECK(c && c->n == 3 && c->y[0] == 5 && c->y[1] == 5 && c->y[2] == 999, "select");
    dpc_dataset_free(c);
    const size_t badidx[1] = {1000};
    CHECK_ERR("select range", dpc_dataset_select(&c, ds, badidx, 1, &e), DPC_E_INVALID, &e, "1000",
              NULL);
    dpc_dataset_free(a);
    dpc_dataset_free(b);
    dpc_dataset_free(ds);
}

static void test_preprocess(void)
{
    dpc_error e = {0};
    dpc_dataset *ds = NULL;
    CHECK_OK(dpc_dataset_new(&ds, 4, 3, 0, &e), &e);
    if (!ds) return;
    const double x0[12] = {3, 4, 0, 0.1, 0.2, 0.2, 0, 0, 0, 1e200, -1e200, 1e199};
    memcpy(ds->x, x0, sizeof x0);
    CHECK_OK(dpc_dataset_clip_rows(ds, 1.0, &e), &e);
    double n0 = sqrt(ds->x[0] * ds->x[0] + ds->x[1] * ds->x[1]);
    CHECK(n0 <= 1.0 && n0 > 1 - 1e-15, "row 0 clipped to norm 1 (%.17g)", n0);
    CHECK_NEAR_REL(ds->x[0] / ds->x[1], 0.75, 1e-15, "direction kept");
    CHECK(ds->x[3] == 0.1 && ds->x[5] == 0.2, "small row untouched");
    CHECK(ds->x[6] == 0 && ds->x[7] == 0, "zero row untouched");
    double n3 = sqrt(ds->x[9] * ds->x[9] + ds->x[10] * ds->x[10] + ds->x[11] * ds->x[11]);
    CHECK(n3 <= 1.0 && n3 > 1 - 1e-15, "huge row clipped without overflow (%.17g)", n3);
    CHECK(ds->x_norm_bound == 1.0 && !ds->data_dependent &&
              strstr(ds->preprocessing, "clipped to L2 norm 1"),
          "clip logged as data-independent: %s", ds->preprocessing);
    CHECK_OK(dpc_dataset_check(ds, &e), &e);
    CHECK_OK(dpc_dataset_normalize_rows(ds, 2.0, &e), &e);
    double n1 = sqrt(ds->x[3] * ds->x[3] + ds->x[4] * ds->x[4] + ds->x[5] * ds->x[5]);
    CHECK(n1 <= 2.0 && n1 > 2 - 1e-14, "normalised to 2 (%.17g)", n1);
    CHECK(ds->x[6] == 0, "zero row stays zero");
    CHECK_OK(dpc_dataset_scale(ds, 0.5, &e), &e);
    CHECK(ds->x_norm_bound >= 1.0 && ds->x_norm_bound < 1 + 1e-12, "bound scales");
    CHECK_OK(dpc_dataset_check(ds, &e), &e);
    CHECK_ERR("clip radius", dpc_dataset_clip_rows(ds, 0, &e), DPC_E_INVALID, &e, "radius", NULL);
    CHECK_ERR("scale 0", dpc_dataset_scale(ds, 0, &e), DPC_E_INVALID, &e, "factor", NULL);
    ds->x[1] = NAN;
    CHECK_ERR("clip nan", dpc_dataset_clip_rows(ds, 1, &e), DPC_E_NUMERIC, &e,
              "example 0 feature 1", NULL);
    dpc_dataset_free(ds);

    /* Standardisation: data-dependent, flagged on train and test. */
    dpc_rng rng;
    dpc_rng_seed(&rng, 11);
    dpc_dataset *tr = NULL, *te = NULL;
    CHECK_OK(dpc_data_synth_linreg(&tr, &rng, 0, 500, 3, 0, 0.1, NULL, &e), &e);
    CHECK_OK(dpc_data_synth_linreg(&te, &rng, 1, 100, 3, 0, 0.1, NULL, &e), &e);
    if (tr) tr->x[0] += 50; /* an outlier changes the statistics */
    CHECK_OK(dpc_dataset_standardize(tr, te, &e), &e);
    if (tr && te) {
        double m = 0, v = 0;
        for (size_t i = 0; i < tr->n; i++) m += tr->x[i * 3 + 1];
        m /= (double)tr->n;
        for (size_t i = 0; i < tr->n; i++) v += pow(tr->x[i * 3 + 1] - m, 2);
        v /= (double)(tr->n - 1);
        CHECK(fabs(m) < 1e-12 && fabs(v - 1) < 1e-12, "standardised mean %g var %g", m, v);
        CHECK(tr->data_dependent && te->data_dependent &&
                  strstr(tr->preprocessing, "[data-dependent]"),
              "standardisation flagged: %s", tr->preprocessing);
    }
    dpc_dataset_free(tr);
    dpc_dataset_free(te);
}

/* ==== Spec ================================================================================== */

static void test_spec(void)
{
    dpc_error e = {0};
    dpc_rng rng;
    dpc_rng_seed(&rng, 3);
    dpc_dataset *tr = NULL, *te = NULL, *all = NULL;
    CHECK_OK(dpc_data_load_spec(&tr, &te,
                                "synthetic:linreg,n=100,d=5,alpha=0.5,noise=0.2,test-n=50,stream=2",
                                &rng, &e),
             &e);
    CHECK_OK(dpc_data_synth_linreg(&all, &rng, 2, 150, 5, 0.5, 0.2, NULL, &e), &e);
    if (tr && te && all) {
        CHECK(tr->n == 100 && te->n == 50 && tr->d == 5, "synthetic spec sizes");
        CHECK(!memcmp(tr->x, all->x, 500 * sizeof(double)) &&
                  !memcmp(te->x, all->x + 500, 250 * sizeof(double)) &&
                  !memcmp(te->y, all->y + 100, 50 * sizeof(double)),
              "spec = generator; test = the next examples");
        CHECK(strstr(tr->source, "synthetic:linreg") && strstr(tr->source, ":train"), "source %s",
              tr->source);
    }
    dpc_dataset_free(tr);
    dpc_dataset_free(te);
    dpc_dataset_free(all);

    CHECK_OK(
        dpc_data_load_spec(&tr, &te, "synthetic:logistic,n=200,d=3,holdout=0.25,clip=1", &rng, &e),
        &e);
    CHECK(tr && te && tr->n == 150 && te->n == 50 && tr->n_classes == 2 && tr->x_norm_bound == 1 &&
              te->x_norm_bound == 1,
          "holdout and clip");
    dpc_dataset_free(tr);
    dpc_dataset_free(te);
    CHECK_OK(dpc_data_load_spec(&tr, NULL, "synthetic:mean,n=50,d=2,spread=0.1", &rng, &e), &e);
    CHECK(tr && tr->n == 50 && tr->d == 2 && tr->x_norm_bound == 1, "mean spec");
    dpc_dataset_free(tr);
    CHECK_OK(dpc_data_load_spec(&tr, NULL, "synthetic:linreg,n=10,d=4,kappa=8", &rng, &e), &e);
    CHECK(tr && tr->cov_diag && tr->cov_diag[0] == 1 && fabs(tr->cov_diag[3] - 0.125) < 1e-15,
          "kappa spectrum");
    dpc_dataset_free(tr);

    const char *ptr = write_text("sp_train.csv", "f1,f2,y\n1,2,0\n3,4,1\n5,6,2\n7,8,1\n");
    const char *pte = write_text("sp_test.csv", "f1,f2,y\n1,1,2\n");
    const char *pbad = write_text("sp_test3.csv", "f1,f2,f3,y\n1,1,1,0\n");
    char spec[1024];
    snprintf(spec, sizeof spec, "csv:%s,label=y,task=classification,test=%s,standardize=1", ptr,
             pte);
    CHECK_OK(dpc_data_load_spec(&tr, &te, spec, NULL, &e), &e);
    CHECK(tr && te && tr->n == 4 && te->n == 1 && te->n_classes == 3 && tr->data_dependent,
          "csv spec with test");
    dpc_dataset_free(tr);
    dpc_dataset_free(te);
    snprintf(spec, sizeof spec, "csv:%s,label=-1,test=%s", ptr, pbad);
    CHECK_ERR("csv dim mismatch", dpc_data_load_spec(&tr, &te, spec, NULL, &e), DPC_E_FORMAT, &e,
              "dimension mismatch", "sp_test3.csv", NULL);
    CHECK(tr == NULL && te == NULL, "nothing returned on failure");
    snprintf(spec, sizeof spec, "csv:%s,delim=semicolon,header=no", ptr);
    CHECK_ERR("csv spec error passes through", dpc_data_load_spec(&tr, NULL, spec, NULL, &e),
              DPC_E_FORMAT, &e, "sp_train.csv:1:", NULL);

    const char *ltr = write_text("sp_train.svm", "1 1:1 3:2\n0 2:1\n");
    const char *lte = write_text("sp_test.svm", "1 1:1\n0 4:1\n");
    snprintf(spec, sizeof spec, "libsvm:%s,task=classification,test=%s", ltr, lte);
    CHECK_ERR("libsvm test index beyond train d", dpc_data_load_spec(&tr, &te, spec, NULL, &e),
              DPC_E_FORMAT, &e, "sp_test.svm:2:", "index 4 out of range 1..3", NULL);
    snprintf(spec, sizeof spec, "libsvm:%s,d=4,classes=2,test=%s,test-limit=1", ltr, lte);
    CHECK_OK(dpc_data_load_spec(&tr, &te, spec, NULL, &e), &e);
    CHECK(tr && te && tr->d == 4 && te->n == 1 && !tr->data_dependent, "libsvm spec public d, K");
    dpc_dataset_free(tr);
    dpc_dataset_free(te);

    struct {
        const char *spec;
        const char *needle;
    } bad[] = {
        {"nosuch:x", "unknown kind 'nosuch'"},
        {"synthetic:linreg,n=10,bogus=1", "unknown option 'bogus' for synthetic:linreg"},
        {"synthetic:mean,margin=1", "unknown option 'margin' for synthetic:mean"},
        {"fashion-mnist:dir=/nonexistent,limt=5", "unknown option 'limt'"},
        {"synthetic:linreg,n=abc", "n: expected a non-negative integer"},
        {"synthetic:linreg,n=-5", "n: expected"},
        {"synthetic:linreg,n=10,n=20", "given twice"},
        {"synthetic:linreg,alpha=1,kappa=2", "exclude each other"},
        {"synthetic:linreg,noise=nan", "noise: expected a finite number"},
        {"synthetic:quadratic", "unknown generator"},
        {"synthetic:linreg,n=10,test-n=5,holdout=0.5", "holdout= with a separate test set"},
        {"synthetic:linreg,n=10,holdout=10", "need 1..n-1"},
        {"synthetic:linreg,n=10,clip=1,normalize=1", "exclude each other"},
        {"synthetic:linreg,n=10,limit=5", "n="},
        {"synthetic:linreg,n=10,clip=0", "clip: radius 0"},
        {"csv", "needs a path"},
        {"csv:a.csv,b.csv", "not key=value"},
        {"csv:a.csv,,x=1", "empty item"},
        {"libsvm:a.svm,classes=cat", "expected a class count"},
        {"csv:a.csv,task=regression,classes=3", "task=regression"},
        {"csv:a.csv,delim=colons", "delim"},
        {"", "empty"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        dpc_status st = dpc_data_load_spec(&tr, &te, bad[k].spec, &rng, &e);
        CHECK(st == DPC_E_INVALID, "spec '%s': status %d (%s)", bad[k].spec, (int)st, e.msg);
        CHECK(strstr(e.msg, bad[k].needle) != NULL, "spec '%s': message '%s' lacks '%s'",
              bad[k].spec, e.msg, bad[k].needle);
    }
    CHECK_ERR("synthetic without rng", dpc_data_load_spec(&tr, NULL, "synthetic:mean", NULL, &e),
              DPC_E_INVALID, &e, "rng", NULL);
    CHECK(strstr(dpc_data_spec_help(), "synthetic:linreg") != NULL, "help text");
}

/* ==== Mutation fuzz ========================================================================= */

/* Deterministic mutations of valid CSV / LIBSVM / IDX fixtures (plain and gzip). Invariants: no
 * crash (the sanitizer build checks memory safety), failure <=> *out == NULL with a message
 * naming the file, success => dpc_dataset_check passes. LIBSVM gets a public d so that a
 * mutated index cannot request a huge dense matrix. */
static void test_fuzz(void)
{
    static const char *const seeds[2] = {
        "a,b,label\n1,2,0\n3.5,-4e-1,1\n# c\n\n\"x\",\"6\",2\r\n",
        "+1 1:0.5 3:2\n-1 2:1e1 # c\n\n+1\n0 4:7 5:-1\n",
    };
    static const unsigned char idx[28] = {0, 0, 8, 3,   0, 0,   0,  3,  0,  0,  0,   2, 0, 0,
                                          0, 2, 0, 255, 1, 128, 10, 20, 30, 40, 254, 3, 2, 7};
    static const unsigned char lab[11] = {0, 0, 8, 1, 0, 0, 0, 3, 2, 0, 1};
    static const char alphabet[] = "0123456789:,.-+ \n\"#eEnaix\t\r;";
    const char *pl = write_bytes("fuzz_lab.idx", lab, sizeof lab);
    uint64_t s = 0x9E3779B97F4A7C15ull;
    unsigned char buf[600];
    int iters = tests_scale() < 1 ? 600 : 1800, okc = 0, bad = 0;
    for (int it = 0; it < iters; it++) {
        int kind = it % 3;
        size_t n;
        if (kind < 2)
            n = strlen(seeds[kind]), memcpy(buf, seeds[kind], n);
        else
            n = sizeof idx, memcpy(buf, idx, n);
#define RND() (s ^= s << 13, s ^= s >> 7, s ^= s << 17, (unsigned)(s >> 11))
        for (unsigned m = 0, muts = 1 + RND() % 4; m < muts; m++) {
            unsigned op = RND() % 4;
            size_t pos = n ? RND() % n : 0;
            unsigned char c = kind < 2 ? (unsigned char)alphabet[RND() % (sizeof alphabet - 1)]
                                       : (unsigned char)RND();
            if (op == 0 && n)
                buf[pos] = c;
            else if (op == 1)
                n = pos;
            else if (op == 2 && n < sizeof buf - 1) {
                memmove(buf + pos + 1, buf + pos, n - pos);
                buf[pos] = c;
                n++;
            } else if (op == 3 && n) {
                memmove(buf + pos, buf + pos + 1, n - pos - 1);
                n--;
            }
        }
        const char *p = RND() % 4 ? write_bytes("fuzz_in", buf, n) : write_gz("fuzz_in", buf, n);
        g_npaths--; /* the same file every time */
        dpc_dataset *ds = (dpc_dataset *)&s;
        dpc_error e = {0};
        dpc_status st;
        if (kind == 0) {
            dpc_csv_opts o = dpc_csv_opts_default();
            o.task = (dpc_data_task)(RND() % 2);
            o.header = (dpc_csv_header)(RND() % 3);
            o.label_col = (long)(RND() % 5) - 2;
            if (RND() % 3 == 0) o.delimiter = ' ';
            st = dpc_data_load_csv(&ds, p, &o, &e);
        } else if (kind == 1) {
            dpc_libsvm_opts o = {.d = 1 + RND() % 6};
            o.task = (dpc_data_task)(RND() % 2);
            st = dpc_data_load_libsvm(&ds, p, &o, &e);
        } else {
            dpc_idx_opts o = {.max_records = RND() % 3};
            st = dpc_data_load_idx(&ds, p, pl, &o, &e);
        }
#undef RND
        if (st == DPC_OK) {
            okc++;
            dpc_error e2 = {0};
            if (!ds || dpc_dataset_check(ds, &e2)) {
                bad++;
                fprintf(stderr, "fuzz %d: accepted but invalid: %s\n", it, e2.msg);
            }
            dpc_dataset_free(ds);
        } else if (ds != NULL || !strstr(e.msg, "fuzz_in")) {
            bad++;
            fprintf(stderr, "fuzz %d: status %d, out %p, msg '%s'\n", it, (int)st, (void *)ds,
                    e.msg);
        }
    }
    g_npaths++;
    CHECK(bad == 0, "fuzz: %d of %d inputs broke an invariant", bad, iters);
    CHECK(okc > iters / 50 && okc < iters, "fuzz exercised both outcomes (%d accepted)", okc);
}

/* The readers' option tables cover their structs and their defaults are the zeroed struct the
 * loaders take for NULL options. */
static void test_field_tables(void)
{
    const dpc_field_table *t[3] = {dpc_idx_opts_fields(), dpc_libsvm_opts_fields(),
                                   dpc_npy_opts_fields()};
    size_t size[3] = {sizeof(dpc_idx_opts), sizeof(dpc_libsvm_opts), sizeof(dpc_npy_opts)};
    size_t count[3] = {3, 4, 5};
    unsigned char obj[64], zero[64] = {0};
    for (int i = 0; i < 3; i++) {
        dpc_error e = {0};
        CHECK(t[i] && t[i]->size == size[i] && t[i]->count == count[i] && size[i] <= sizeof obj,
              "table %d of its struct", i);
        CHECK_OK(dpc_field_table_verify(t[i], &e), &e);
        memset(obj, 0x5a, sizeof obj);
        dpc_field_defaults(t[i], obj);
        CHECK(!memcmp(obj, zero, size[i]), "%s: defaults are the zeroed struct", t[i]->name);
        CHECK_OK(dpc_field_check(t[i], obj, &e), &e);
    }
    dpc_error e = {0};
    dpc_idx_opts o = {.scale = -1};
    CHECK(dpc_field_check(t[0], &o, &e) == DPC_E_INVALID && !strcmp(e.field, "scale"),
          "idx scale -1 refused naming scale: '%s'", e.msg);
    dpc_npy_opts n = {.task = (dpc_data_task)2};
    CHECK(dpc_field_check(t[2], &n, &e) == DPC_E_INVALID && !strcmp(e.field, "task"),
          "npy task 2 refused naming task: '%s'", e.msg);
}

/* dpc_csv_opts' table: covers the struct (a char and a long between an enum and a pointer),
 * its defaults are what dpc_csv_opts_default wrote by hand before it read them (header auto,
 * ',', -1, regression, the rest 0), the CHAR row shows ',' and its text reads back. */
static void test_csv_table(void)
{
    const dpc_field_table *t = dpc_csv_opts_fields();
    dpc_error e = {0};
    CHECK(t && t->size == sizeof(dpc_csv_opts) && t->count == 8, "csv table of its struct");
    CHECK_OK(dpc_field_table_verify(t, &e), &e);
    dpc_csv_opts d = dpc_csv_opts_default();
    CHECK(d.header == DPC_CSV_HEADER_AUTO && d.delimiter == ',' && d.label_col == -1 &&
              !d.label_name && d.task == DPC_TASK_REGRESSION && d.n_classes == 0 && !d.classes &&
              d.max_rows == 0,
          "default: header %d delimiter '%c' label_col %ld task %d", (int)d.header, d.delimiter,
          d.label_col, (int)d.task);
    dpc_csv_opts z;
    memset(&z, 0x5a, sizeof z);
    dpc_field_defaults(t, &z);
    CHECK(z.delimiter == d.delimiter && z.label_col == d.label_col && z.header == d.header &&
              z.task == d.task && !z.label_name && !z.classes && !z.n_classes && !z.max_rows,
          "dpc_field_defaults writes dpc_csv_opts_default");
    CHECK_OK(dpc_field_check(t, &d, &e), &e);
    const dpc_field *fd = dpc_field_find(t, "delimiter", NULL);
    const dpc_field *fl = dpc_field_find(t, "label_col", NULL);
    char buf[16];
    dpc_field_format_default(fd, buf, sizeof buf);
    CHECK(fd && fd->type == DPC_FIELD_CHAR && !strcmp(buf, ","), "delimiter a CHAR shown '%s'",
          buf);
    int c = 0;
    CHECK(dpc_field_parse_char(fd, "space", &c, &e) == DPC_OK && c == ' ' &&
              dpc_field_parse_char(fd, "tab", &c, &e) == DPC_OK && c == '\t',
          "the CSV words read as bytes");
    CHECK(fl && fl->type == DPC_FIELD_LONG && dpc_field_get(fl, &d) == -1, "label_col a LONG");
    CHECK_OK(dpc_field_set(fl, &d, -7, &e), &e);
    CHECK(d.label_col == -7, "label_col set through its row");
}

/* Every reader range-checks its options through its table before opening a file: a value out
 * of a row's range is refused naming that field (n_classes above DPC_DATA_MAX_CLASSES, an
 * unknown header or task, a negative scale); DPC_DATA_MAX_CLASSES itself is in range. */
static void test_readers_check_by_table(void)
{
    const char *nope = "/nonexistent/dpc_test_data";
    dpc_dataset *ds = NULL;
    dpc_error e = {0};
    dpc_csv_opts c = dpc_csv_opts_default();
    c.task = DPC_TASK_CLASSIFICATION;
    c.n_classes = DPC_DATA_MAX_CLASSES + 1;
    CHECK_ERR("csv n_classes", dpc_data_load_csv(&ds, nope, &c, &e), DPC_E_INVALID, &e,
              "n_classes", "65536", NULL);
    CHECK(!strcmp(e.field, "n_classes"), "csv: field '%s'", e.field);
    c.n_classes = DPC_DATA_MAX_CLASSES;
    CHECK_OK(dpc_field_check(dpc_csv_opts_fields(), &c, &e), &e);
    c = dpc_csv_opts_default();
    c.header = (dpc_csv_header)7;
    CHECK(dpc_data_load_csv(&ds, nope, &c, &e) == DPC_E_INVALID && !strcmp(e.field, "header"),
          "csv header 7: %s", e.msg);
    c = dpc_csv_opts_default();
    c.task = (dpc_data_task)5;
    CHECK(dpc_data_load_csv(&ds, nope, &c, &e) == DPC_E_INVALID && !strcmp(e.field, "task"),
          "csv task 5: %s", e.msg);
    dpc_idx_opts io = {.scale = -1};
    CHECK_ERR("idx scale", dpc_data_load_idx(&ds, nope, nope, &io, &e), DPC_E_INVALID, &e,
              "idx: scale", NULL);
    CHECK(!strcmp(e.field, "scale"), "idx: field '%s'", e.field);
    io = (dpc_idx_opts){.scale = NAN};
    CHECK(dpc_data_load_idx(&ds, nope, nope, &io, &e) == DPC_E_INVALID &&
              !strcmp(e.field, "scale"), "idx scale NaN: %s", e.msg);
    io = (dpc_idx_opts){.n_classes = DPC_DATA_MAX_CLASSES + 1};
    CHECK(dpc_data_load_idx(&ds, nope, nope, &io, &e) == DPC_E_INVALID &&
              !strcmp(e.field, "n_classes"), "idx n_classes: %s", e.msg);
    dpc_libsvm_opts lo = {.task = (dpc_data_task)3};
    CHECK_ERR("libsvm task", dpc_data_load_libsvm(&ds, nope, &lo, &e), DPC_E_INVALID, &e,
              "libsvm: task", NULL);
    lo = (dpc_libsvm_opts){.task = DPC_TASK_CLASSIFICATION, .n_classes = DPC_DATA_MAX_CLASSES + 1};
    CHECK(dpc_data_load_libsvm(&ds, nope, &lo, &e) == DPC_E_INVALID &&
              !strcmp(e.field, "n_classes"), "libsvm n_classes: %s", e.msg);
    lo = (dpc_libsvm_opts){.n_classes = 3};
    CHECK_ERR("libsvm regression K", dpc_data_load_libsvm(&ds, nope, &lo, &e), DPC_E_INVALID, &e,
              "regression", NULL);
    CHECK(!strcmp(e.field, "n_classes"), "libsvm regression K names n_classes: '%s'", e.field);
    dpc_npy_opts no = {.task = DPC_TASK_CLASSIFICATION, .n_classes = DPC_DATA_MAX_CLASSES + 1};
    CHECK(dpc_data_load_npy(&ds, nope, nope, &no, &e) == DPC_E_INVALID &&
              !strcmp(e.field, "n_classes"), "npy n_classes: %s", e.msg);
    no = (dpc_npy_opts){.task = (dpc_data_task)9};
    CHECK(dpc_data_load_npy(&ds, nope, nope, &no, &e) == DPC_E_INVALID &&
              !strcmp(e.field, "task"), "npy task 9: %s", e.msg);
    CHECK(ds == NULL, "never set on a refusal");
}

int main(void)
{
    test_field_tables();
    test_csv_table();
    test_readers_check_by_table();
    snprintf(g_dir, sizeof g_dir, "/tmp/dpc_test_data_XXXXXX");
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_dataset_object();
    test_csv_valid();
    test_csv_malformed();
    test_libsvm();
    test_idx();
    test_synth_linreg();
    test_synth_mean();
    test_synth_logistic();
    test_split();
    test_preprocess();
    test_spec();
    test_fuzz();
    test_fashion_mnist();
    cleanup();
    return TEST_SUMMARY();
}
