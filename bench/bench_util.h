/* bench_util.h — helpers of the benchmarks: clocks, the machine / level / load header, medians,
 * and the reference figures of bench/anchors.py (Debian's /usr/bin/python3 with NumPy and
 * torch; the benchmarks say so and go on when it is not there). */
#ifndef DPCORR_BENCH_UTIL_H
#define DPCORR_BENCH_UTIL_H

#include "dpcorr/isa.h"
#include "dpcorr/tune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static inline double bench_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* CPU time of this process: for single-threaded measurements on a shared machine, where wall
 * time also counts the time other jobs hold the core. */
static inline double bench_cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Keeps results observable so the compiler cannot drop the measured work. */
static volatile double bench_sink;

/* The load average (1 minute) from /proc/loadavg, -1 if unknown. */
static inline double bench_loadavg(void)
{
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1) l = -1;
        fclose(f);
    }
    return l;
}

static inline void bench_machine(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[256], model[128] = "unknown";
    int cpus = 0, have_model = 0;
    if (f) {
        while (fgets(line, sizeof line, f)) {
            if (!strncmp(line, "model name", 10) && !have_model) {
                char *c = strchr(line, ':');
                if (c) {
                    snprintf(model, sizeof model, "%s", c + 2);
                    model[strcspn(model, "\n")] = 0;
                    have_model = 1;
                }
            }
            if (!strncmp(line, "processor", 9)) cpus++;
        }
        fclose(f);
    }
    printf("machine: %s, %d logical CPUs; load average %.2f (other jobs share the cores: "
           "ratios are measured side by side)\n", model, cpus, bench_loadavg());
    const char *env = getenv("DPCORR_ISA");
    printf("isa: this CPU runs up to %s; default level %s%s%s\n", dpc_isa_name(dpc_isa_detect()),
           dpc_isa_name(dpc_isa_detect()), env ? " (DPCORR_ISA is ignored by the benchmarks, "
                                                "which measure every level: " : "",
           env ? env : "");
    if (env) printf(")\n");
}

/* Median of v (n <= 64), v reordered. */
static inline double bench_median(double *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Runs "/usr/bin/python3 bench/anchors.py <args>" and reads the values of the n keys (key=value
 * lines) into vals. Returns 1 when all were found; 0 with a reason in why (cap bytes). */
static inline int bench_anchor(const char *args, const char *const *keys, double *vals, int n,
                               char *why, size_t cap)
{
    if (access("/usr/bin/python3", X_OK) != 0) {
        snprintf(why, cap, "no /usr/bin/python3");
        return 0;
    }
    if (access("bench/anchors.py", R_OK) != 0) {
        snprintf(why, cap, "bench/anchors.py not found (run from the source tree)");
        return 0;
    }
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 bench/anchors.py %s 2>&1", args);
    FILE *p = popen(cmd, "r");
    if (!p) {
        snprintf(why, cap, "cannot run /usr/bin/python3");
        return 0;
    }
    char line[512];
    int found = 0;
    snprintf(why, cap, "/usr/bin/python3 bench/anchors.py %s printed no %s", args, keys[0]);
    while (fgets(line, sizeof line, p)) {
        for (int k = 0; k < n; k++) {
            size_t kl = strlen(keys[k]);
            if (!strncmp(line, keys[k], kl) && line[kl] == '=') {
                vals[k] = strtod(line + kl + 1, NULL);
                found |= 1 << k;
            }
        }
        if (strstr(line, "ModuleNotFoundError") || strstr(line, "ImportError") ||
            strstr(line, "No such file")) {
            line[strcspn(line, "\n")] = 0;
            snprintf(why, cap, "%.200s", line);
        }
    }
    int rc = pclose(p);
    return found == (1 << n) - 1 && rc == 0;
}

#endif
