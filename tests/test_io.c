/* test_io.c — the number-file readers of dpcorr/io.h, which parse user files (`--coeffs`, dense
 * strategies): the accepted syntax (separators, comments, CRLF, blank lines, long lines), every
 * refusal with the file, line and token it names, the lower-triangular reader's two row forms
 * and its size checks; then every input of the fuzz target's seed corpus (fuzz/corpus/io) is
 * replayed through the target itself (fuzz/fuzz_io.c, which aborts on a broken promise), so the
 * corpus is exercised by every `make check`, not only by `make fuzz`. */
#include "../fuzz/fuzz_io.c"

#include "harness.h"

#include <dirent.h>

static char tmp_path[64];

/* Writes text to a fresh temporary file; returns its path (one at a time). */
static const char *put(const char *text, size_t len)
{
    if (tmp_path[0]) unlink(tmp_path);
    snprintf(tmp_path, sizeof tmp_path, "/tmp/dpcorr_test_io_XXXXXX");
    int fd = mkstemp(tmp_path);
    if (fd < 0) return "/nonexistent/dpcorr_test_io";
    FILE *f = fdopen(fd, "wb");
    if (!f) return "/nonexistent/dpcorr_test_io";
    fwrite(text, 1, len, f);
    fclose(f);
    return tmp_path;
}
#define PUT(s) put(s, sizeof(s) - 1)

static void test_numbers(void)
{
    dpc_error err = {0};
    double *v = NULL;
    size_t n = 0;
    const char *p = PUT("# header\n1 2.5, -3e-2\t4\r\n\n  5 # tail comment 6\n,,7,\n-0\n");
    CHECK_OK(dpc_io_read_numbers(p, 0, &v, &n, &err), &err);
    static const double want[] = {1, 2.5, -3e-2, 4, 5, 7, -0.0};
    CHECK(n == 7, "7 numbers, got %zu", n);
    for (size_t i = 0; v && i < 7 && i < n; i++)
        CHECK(v[i] == want[i], "number %zu: %.17g vs %.17g", i, v[i], want[i]);
    CHECK(v && n == 7 && signbit(v[6]), "-0 keeps its sign");
    free(v);

    /* no newline at the end; the exact limit is accepted */
    p = PUT("0.1 0.2 0.3");
    CHECK_OK(dpc_io_read_numbers(p, 3, &v, &n, &err), &err);
    CHECK(n == 3 && v && v[2] == 0.3, "last line without newline");
    free(v);

    /* a line of 200000 characters (the buffer grows) */
    size_t L = 40000;
    char *big = malloc(5 * L + 2);
    for (size_t i = 0; i < L; i++) memcpy(big + 5 * i, "0.25 ", 5);
    big[5 * L] = '\n';
    p = put(big, 5 * L + 1);
    free(big);
    CHECK_OK(dpc_io_read_numbers(p, 0, &v, &n, &err), &err);
    double s = 0;
    for (size_t i = 0; v && i < n; i++) s += v[i];
    CHECK(n == L && s == 0.25 * (double)L, "long line: %zu numbers, sum %g", n, s);
    free(v);

    struct {
        const char *text, *expect;
        dpc_status st;
        size_t limit;
    } bad[] = {
        {"1 2\n3 x4 5\n", ":2: expected a number, got 'x4'", DPC_E_FORMAT, 0},
        {"1 2.5q\n", ":1: junk after number: 'q'", DPC_E_FORMAT, 0},
        {"1\ninf\n", ":2: non-finite", DPC_E_FORMAT, 0},
        {"nan\n", ":1: non-finite", DPC_E_FORMAT, 0},
        {"1e400\n", ":1: non-finite or out-of-range", DPC_E_FORMAT, 0},
        {"1 2\n3\n", ":2: more than 2 numbers", DPC_E_FORMAT, 2},
        {"# nothing\n\n   \n", ": no numbers in file", DPC_E_FORMAT, 0},
        {"", ": no numbers in file", DPC_E_FORMAT, 0},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        p = put(bad[i].text, strlen(bad[i].text));
        v = (double *)&err; /* must be reset to NULL on failure */
        n = 99;
        dpc_status st = dpc_io_read_numbers(p, bad[i].limit, &v, &n, &err);
        CHECK(st == bad[i].st && strstr(err.msg, p) && strstr(err.msg, bad[i].expect),
              "case %zu: status %d, message '%s' (want '%s')", i, (int)st, err.msg, bad[i].expect);
        CHECK(v == NULL && n == 0, "case %zu: outputs cleared", i);
    }
    dpc_status st = dpc_io_read_numbers("/nonexistent/dpcorr/coeffs.txt", 0, &v, &n, &err);
    CHECK(st == DPC_E_IO && strstr(err.msg, "/nonexistent/dpcorr/coeffs.txt"), "missing: %s",
          err.msg);
}

static void test_lower_triangular(void)
{
    dpc_error err = {0};
    double *M = NULL;
    size_t n = 0;
    /* the triangle, with comments and blank lines; n taken from the file */
    const char *p = PUT("# C\n1\n\n0.5 2 # row 1\n0.25,0.5,3\n");
    CHECK_OK(dpc_io_read_lower_triangular(p, 0, &M, &n, &err), &err);
    static const double tri[9] = {1, 0, 0, 0.5, 2, 0, 0.25, 0.5, 3};
    CHECK(n == 3 && M && memcmp(M, tri, sizeof tri) == 0, "triangle read as 3 x 3 (n %zu)", n);
    free(M);
    /* full rows with zeros above the diagonal, and mixed forms, give the same matrix */
    p = PUT("1 0 0\n0.5 2\n0.25 0.5 3\n");
    CHECK_OK(dpc_io_read_lower_triangular(p, 3, &M, &n, &err), &err);
    CHECK(n == 3 && M && memcmp(M, tri, sizeof tri) == 0, "mixed rows");
    free(M);

    struct {
        const char *text, *expect;
        size_t n;
    } bad[] = {
        {"1 0.1 0\n0.5 2 0\n0.25 0.5 3\n", ":1: entry (0,1) above the diagonal is not zero", 0},
        {"1\n0.5 2 7\n", ":2: row 1 has 3 entries (want 2, or 2", 0},
        {"1\n0.5 2\n", ": expected 3 rows, found 2", 3},
        {"1\n0.5 y\n", ":2: expected a number, got 'y'", 0},
        {"# empty\n", ": no rows in file", 0},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        p = put(bad[i].text, strlen(bad[i].text));
        M = (double *)&err;
        dpc_status st = dpc_io_read_lower_triangular(p, bad[i].n, &M, &n, &err);
        CHECK(st == DPC_E_FORMAT && strstr(err.msg, p) && strstr(err.msg, bad[i].expect),
              "case %zu: status %d, message '%s' (want '%s')", i, (int)st, err.msg, bad[i].expect);
        CHECK(M == NULL, "case %zu: output cleared", i);
    }
}

/* Every seed of fuzz/corpus/io through the fuzz target (run from the repository root, as make
 * check does). */
static void test_fuzz_corpus(void)
{
    const char *dir = "fuzz/corpus/io";
    DIR *d = opendir(dir);
    CHECK(d != NULL, "%s: seed corpus present", dir);
    if (!d) return;
    size_t seeds = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        CHECK(f != NULL, "%s readable", path);
        if (!f) continue;
        uint8_t buf[1 << 16];
        size_t len = fread(buf, 1, sizeof buf, f);
        fclose(f);
        CHECK(LLVMFuzzerTestOneInput(buf, len) == 0, "%s replayed", path);
        seeds++;
    }
    closedir(d);
    CHECK(seeds >= 8, "%zu seeds replayed", seeds);
}

/* The strict number rules every option and spec grammar shares (dpc_io_parse_double / _uint). */
static void test_strict_numbers(void)
{
    static const struct {
        const char *text;
        int ok;
        double v;
    } dbl[] = {{"1.5", 1, 1.5},   {"-2", 1, -2},    {"1e6", 1, 1e6}, {"+.5e-3", 1, 5e-4},
               {" 1", 0, 0},      {"1 ", 0, 0},     {"", 0, 0},      {"inf", 0, 0},
               {"nan", 0, 0},     {"0x10", 0, 0},   {"1e400", 0, 0}, {"1,5", 0, 0},
               {"1e", 0, 0},      {"--1", 0, 0}};
    for (size_t i = 0; i < sizeof dbl / sizeof dbl[0]; i++) {
        double v = -7;
        int ok = dpc_io_parse_double(dbl[i].text, &v);
        CHECK(ok == dbl[i].ok && (ok ? v == dbl[i].v : v == -7), "double '%s': %d %g",
              dbl[i].text, ok, v);
    }
    static const struct {
        const char *text;
        int big, ok;
        uint64_t v;
    } uin[] = {{"0", 0, 1, 0},
               {"42", 0, 1, 42},
               {"1e6", 0, 1, 1000000},
               {"2.5e1", 0, 1, 25},
               {"9007199254740992", 0, 1, 9007199254740992ull},
               {"9007199254740993", 0, 0, 0},
               {"9007199254740993", 1, 1, 9007199254740993ull},
               {"18446744073709551615", 1, 1, 18446744073709551615ull},
               {"18446744073709551616", 1, 0, 0},
               {"1e17", 1, 0, 0}, /* a float form above 2^53: not exact */
               {"1.5", 0, 0, 0},
               {"-1", 0, 0, 0},
               {"+1", 0, 0, 0},
               {" 3", 0, 0, 0},
               {"", 0, 0, 0}};
    for (size_t i = 0; i < sizeof uin / sizeof uin[0]; i++) {
        uint64_t v = 7;
        int ok = dpc_io_parse_uint(uin[i].text, &v, uin[i].big);
        CHECK(ok == uin[i].ok && (ok ? v == uin[i].v : v == 7), "uint '%s' (big %d): %d %llu",
              uin[i].text, uin[i].big, ok, (unsigned long long)v);
    }
    double d;
    uint64_t u;
    CHECK(!dpc_io_parse_double(NULL, &d) && !dpc_io_parse_uint(NULL, &u, 1), "NULL refused");
}

int main(void)
{
    test_strict_numbers();
    test_numbers();
    test_lower_triangular();
    test_fuzz_corpus();
    if (tmp_path[0]) unlink(tmp_path);
    return TEST_SUMMARY();
}
