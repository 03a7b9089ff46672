/* bench_util.h — timing helpers for the benchmarks (wall clock, best of several runs). */
#ifndef DPCORR_BENCH_UTIL_H
#define DPCORR_BENCH_UTIL_H

#include <stdio.h>
#include <string.h>
#include <time.h>

static inline double bench_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Keeps results observable so the compiler cannot drop the measured work. */
static volatile double bench_sink;

static inline void bench_machine(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[256], model[128] = "unknown";
    int cpus = 0;
    if (f) {
        while (fgets(line, sizeof line, f)) {
            if (!strncmp(line, "model name", 10) && !cpus) {
                char *c = strchr(line, ':');
                if (c) {
                    snprintf(model, sizeof model, "%s", c + 2);
                    model[strcspn(model, "\n")] = 0;
                }
            }
            if (!strncmp(line, "processor", 9)) cpus++;
        }
        fclose(f);
    }
    printf("machine: %s, %d logical CPUs\n", model, cpus);
}

#endif
