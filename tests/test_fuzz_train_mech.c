/* test_fuzz_train_mech.c — the train-entry fuzz target (fuzz/fuzz_train_mech.c) over its seed
 * corpus (fuzz/corpus/train_mech, run from the repository root as make check does), so make
 * asan replays it under ASan+UBSan; and the dense-size contract of dpc_train_config_resolve:
 * the n x n matrix is used only when the run has exactly n steps (issue 28: a 1 x 1 placeholder
 * read as n x n overflowed the heap). */
#include "harness.h"
#include "../fuzz/fuzz_train_mech.c"

#include <dirent.h>

static size_t replay_corpus(const char *dir)
{
    DIR *dp = opendir(dir);
    CHECK(dp != NULL, "%s: cannot open (run from the repository root)", dir);
    if (!dp) return 0;
    size_t count = 0;
    struct dirent *e;
    while ((e = readdir(dp)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        if (!f) continue;
        static uint8_t buf[1 << 16];
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        LLVMFuzzerTestOneInput(buf, n); /* aborts on a silent failure; ASan on a bad access */
        count++;
    }
    closedir(dp);
    return count;
}

static dpc_dataset *rows(size_t n)
{
    dpc_dataset *ds = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_dataset_new(&ds, n, 2, 2, &err), &err);
    for (size_t i = 0; ds && i < n; i++) {
        ds->x[2 * i] = (double)i;
        ds->y[i] = (double)(i % 2);
    }
    return ds;
}

/* A lower-triangular matrix with unit diagonal, n x n. */
static double *lower(size_t n)
{
    double *a = calloc(n * n, sizeof *a);
    for (size_t t = 0; t < n; t++)
        for (size_t j = 0; j <= t; j++) a[t * n + j] = t == j ? 1.0 : 0.5 / (double)(t - j + 1);
    return a;
}

static void test_dense_size(void)
{
    double *a4 = lower(4);
    dpc_train_config c, r;
    dpc_train_config_init(&c);
    c.mech.kind = DPC_MECH_DENSE;
    c.mech.dense = a4;
    c.batch = 1;
    c.epochs = 1;
    c.noise_multiplier = 1.0;
    c.clip = 1.0;
    c.lr = 0.1;
    const size_t runs[] = {4, 3, 5, 100};
    const size_t sizes[] = {4, 1, 0, 4};
    for (size_t i = 0; i < 4; i++) {
        dpc_dataset *ds = rows(runs[i]);
        dpc_error err = {0};
        c.mech.steps = sizes[i];
        dpc_status st = dpc_train_config_resolve(&c, ds, &r, &err);
        if (runs[i] == sizes[i]) {
            CHECK_OK(st, &err);
            CHECK(r.mech.steps == 4 && r.mech.dense == a4, "resolved n %zu", r.mech.steps);
        } else {
            CHECK(st == DPC_E_INVALID && strstr(err.msg, "mech.steps"),
                  "dense %zu x %zu on a run of %zu steps: status %d '%s'", sizes[i], sizes[i],
                  runs[i], (int)st, err.msg);
        }
        dpc_dataset_free(ds);
    }
    free(a4);
}

int main(void)
{
    test_dense_size();
    size_t n = replay_corpus("fuzz/corpus/train_mech");
    CHECK(n >= 10, "replayed %zu seeds", n);
    return TEST_SUMMARY();
}
