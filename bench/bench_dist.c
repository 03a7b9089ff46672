/* bench_dist.c — noise-only scaling of the coordinate-sharded generator (doc/distributed.md):
 * for d parameters over P ranks, rank r generates (B Z)_t for its shard of d / P coordinates
 * only and keeps that shard's mechanism state. For BLT (4 buffers) and BSR (4 bands) and
 * P = 1, 2, 4, 8 this measures one rank's shard generator (rank 0, the largest shard): memory
 * (state, and the resident memory the generator added) and time per step; then P = 2 ranks as
 * two concurrent processes on this machine (fork), each timing its own shard.
 *
 *   build/bench/bench_dist [d]      d defaults to 1e7 (make bench); the recorded d = 1e8 run
 *                                   needs ~5 GB for P = 1.
 * Ranks generate independently (no messages), so a rank's time per step is its shard's. */
#include "bench_util.h"
#include "dpcorr/mech.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define STEPS 3

static double rss_mb(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, res = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &res) != 2) res = 0;
        fclose(f);
    }
    return (double)res * (double)sysconf(_SC_PAGESIZE) / 1048576.0;
}

typedef struct shard_result {
    double state_mb, rss_mb, ms_per_step, cpu_ms_per_step, checksum;
} shard_result;

/* CPU time of this process (the machine may be shared: wall time includes waiting). */
static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Rank r of P: a generator over its shard [d r / P, d (r + 1) / P), STEPS timed steps after one
 * untimed (page faults). */
static int run_shard(const dpc_mech *m, const dpc_rng_stream *s, size_t d, size_t P, size_t r,
                     shard_result *out)
{
    size_t c0 = d / P * r + d % P * r / P, c1 = d / P * (r + 1) + d % P * (r + 1) / P;
    double rss0 = rss_mb();
    dpc_noise_config nc = {c0, c1 - c0, DPC_NOISE_BUFFER, (size_t)1 << 40, DPC_ISA_AUTO};
    dpc_noise *g = NULL;
    dpc_error err = {0};
    double *w = malloc((c1 - c0) * sizeof *w);
    if (!w || dpc_noise_new(&g, m, s, &nc, &err) || dpc_noise_next(g, w, &err)) {
        fprintf(stderr, "rank %zu of %zu: %s\n", r, P, err.msg[0] ? err.msg : "out of memory");
        free(w);
        dpc_noise_free(g);
        return 1;
    }
    double t = bench_now(), c = cpu_now();
    for (int k = 0; k < STEPS; k++)
        if (dpc_noise_next(g, w, &err)) return 1;
    out->ms_per_step = 1e3 * (bench_now() - t) / STEPS;
    out->cpu_ms_per_step = 1e3 * (cpu_now() - c) / STEPS;
    out->rss_mb = rss_mb() - rss0;
    out->state_mb = (double)(dpc_mech_state_floats(m, DPC_NOISE_BUFFER) * (c1 - c0)) * 8.0 /
                    1048576.0;
    out->checksum = w[0] + w[c1 - c0 - 1];
    bench_sink = out->checksum;
    dpc_noise_free(g);
    free(w);
    return 0;
}

/* P = 2 concurrent processes, one shard each; results through pipes. */
static int run_concurrent(const dpc_mech *m, const dpc_rng_stream *s, size_t d, size_t P,
                          shard_result *res)
{
    int fds[16][2];
    pid_t pid[16];
    for (size_t r = 0; r < P; r++) {
        if (pipe(fds[r]) != 0) return 1;
        pid[r] = fork();
        if (pid[r] < 0) return 1;
        if (pid[r] == 0) {
            shard_result x = {0, 0, 0, 0, 0};
            int rc = run_shard(m, s, d, P, r, &x);
            if (write(fds[r][1], &x, sizeof x) != (ssize_t)sizeof x) rc = 1;
            _exit(rc);
        }
        close(fds[r][1]);
    }
    int bad = 0;
    for (size_t r = 0; r < P; r++) {
        int st;
        if (read(fds[r][0], &res[r], sizeof res[r]) != (ssize_t)sizeof res[r]) bad = 1;
        close(fds[r][0]);
        waitpid(pid[r], &st, 0);
        bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    }
    return bad;
}

static int bench_kind(const char *name, const dpc_mech_params *p, size_t d)
{
    dpc_mech *m = NULL;
    dpc_error err = {0};
    if (dpc_mech_new(&m, p, &err)) {
        fprintf(stderr, "%s: %s\n", name, err.msg);
        return 1;
    }
    dpc_rng rng;
    dpc_rng_seed(&rng, 1);
    dpc_rng_stream s = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_NOISE, 0));
    printf("\n== %s, d = %.3g, state %zu floats per coordinate\n", name, (double)d,
           dpc_mech_state_floats(m, DPC_NOISE_BUFFER));
    printf("%6s %14s %12s %15s %14s %9s\n", "ranks", "state MB/rank", "RSS MB/rank",
           "wall ms/step", "CPU ms/step", "CPU gain");
    double t1 = 0;
    for (size_t P = 1; P <= 8; P *= 2) {
        shard_result x;
        if (run_shard(m, &s, d, P, 0, &x)) return 1;
        if (P == 1) t1 = x.cpu_ms_per_step;
        printf("%6zu %14.1f %12.1f %15.1f %14.1f %8.2fx\n", P, x.state_mb, x.rss_mb,
               x.ms_per_step, x.cpu_ms_per_step, t1 / x.cpu_ms_per_step);
    }
    shard_result c[2];
    if (run_concurrent(m, &s, d, 2, c)) return 1;
    printf("2 concurrent ranks (processes) on this machine: wall %.1f / %.1f ms/step, CPU %.1f / "
           "%.1f ms/step, %.1f + %.1f MB resident\n", c[0].ms_per_step, c[1].ms_per_step,
           c[0].cpu_ms_per_step, c[1].cpu_ms_per_step, c[0].rss_mb, c[1].rss_mb);
    dpc_mech_free(m);
    return 0;
}

int main(int argc, char **argv)
{
    bench_machine();
    size_t d = argc > 1 ? (size_t)atof(argv[1]) : (size_t)1e7;
    if (d < 16) d = 16;
    if (argc <= 1) printf("(d = 1e7 by default; doc/distributed.md records d = 1e8)\n");
    static const double th[4] = {0.999, 0.99, 0.9, 0.5}, om[4] = {0.01, 0.05, 0.1, 0.2};
    dpc_mech_params blt;
    dpc_mech_params_init(&blt);
    blt.kind = DPC_MECH_BLT;
    blt.steps = 1000;
    blt.nbuf = 4;
    blt.theta = th;
    blt.omega = om;
    dpc_mech_params bsr;
    dpc_mech_params_init(&bsr);
    bsr.kind = DPC_MECH_BSR;
    bsr.steps = 1000;
    bsr.bands = 4;
    bsr.momentum = 0.9;
    if (bench_kind("BLT (4 buffers)", &blt, d) || bench_kind("BSR (4 bands, momentum 0.9)", &bsr, d))
        return 1;
    return 0;
}
