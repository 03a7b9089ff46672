/* bench_demo.c — peak resident memory of the demo run (`dpcorr demo`, one epoch per mechanism,
 * as a child process: its peak RSS from wait4) against what it must hold: the data, the
 * parameters and the trainer's workspace (the report's "memory" section: dpc_trainer_bytes).
 * Skipped with DPC_BENCH_QUICK=1 or without Debian's dataset-fashion-mnist. */
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* The integer value of "key": in file f (first occurrence), -1 if absent. */
static long long json_int(const char *path, const char *key)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = strstr(buf, pat);
    return p ? strtoll(p + strlen(pat), NULL, 10) : -1;
}

int main(void)
{
    bench_machine();
    const char *quick = getenv("DPC_BENCH_QUICK");
    if (quick && *quick && *quick != '0') {
        printf("\n(DPC_BENCH_QUICK: no demo run, no peak RSS)\n");
        return 0;
    }
    if (access("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz", R_OK) != 0 ||
        access("build/dpcorr", X_OK) != 0) {
        printf("\n(no Fashion-MNIST or no build/dpcorr: no demo run, no peak RSS)\n");
        return 0;
    }
    char dir[] = "/tmp/dpcorr-bench-demo-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    printf("\n== peak RSS of the demo run (dpcorr demo --epochs 1, both mechanisms, 2 threads)\n");
    fflush(stdout);
    double t0 = bench_now();
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) _exit(127);
        execl("build/dpcorr", "dpcorr", "demo", "--epochs", "1", "--out", dir, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    if (pid < 0 || wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
        printf("demo run failed (status %d)\n", status);
        return 1;
    }
    double wall = bench_now() - t0, rss = (double)ru.ru_maxrss * 1024.0;
    char path[256];
    double need = 0, data = 0, params = 0, ws = 0;
    for (int r = 0; r < 2; r++) {
        snprintf(path, sizeof path, "%s/%s.json", dir, r ? "bsr" : "dpsgd");
        double d = (double)json_int(path, "data_bytes");
        double p = (double)json_int(path, "parameter_bytes");
        double w = (double)json_int(path, "trainer_bytes");
        if (d + p + w > need) need = d + p + w, data = d, params = p, ws = w;
        remove(path);
    }
    static const char *const other[] = {"demo.png", "demo.dat", "demo.gp", "demo.gnuplot.log"};
    for (size_t k = 0; k < sizeof other / sizeof *other; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, other[k]);
        remove(path);
    }
    rmdir(dir);
    printf("data %.0f MB + parameters %.1f MB + trainer workspace %.1f MB (of the larger run) = "
           "%.0f MB\n", data / 1e6, params / 1e6, ws / 1e6, need / 1e6);
    printf("peak RSS %.0f MB = %.2fx that (target <= 1.5x; the demo took %.0f s; "
           "doc/performance.md says what else is resident)\n", rss / 1e6, rss / need, wall);
    printf("\nload average at the end: %.2f\n", bench_loadavg());
    return 0;
}
