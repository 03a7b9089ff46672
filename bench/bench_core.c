/* bench_core.c — RNG throughput against memory bandwidth, and per-step noise time of every
 * mechanism at d = 1e6 next to identity (DP-SGD). Single thread. */
#include "bench_util.h"
#include "dpcorr/mech.h"

#include <stdlib.h>

#define D 1000000

static double best_of(int reps, void (*fn)(void *), void *arg)
{
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t = bench_now();
        fn(arg);
        t = bench_now() - t;
        if (t < best) best = t;
    }
    return best;
}

typedef struct buf_arg { double *a, *b; size_t n; dpc_rng_stream s; uint64_t row; } buf_arg;
static void do_memcpy(void *p) { buf_arg *x = p; memcpy(x->b, x->a, x->n * sizeof(double)); bench_sink = x->b[x->n / 2]; }
static void do_memset(void *p) { buf_arg *x = p; memset(x->b, (int)(x->row++ & 0x3f), x->n * sizeof(double)); bench_sink = x->b[x->n / 3]; }
static void do_fill(void *p) { buf_arg *x = p; dpc_rng_gaussian_fill(&x->s, x->row++, 0, x->b, x->n); bench_sink = x->b[x->n / 2]; }
static void do_naive(void *p) { buf_arg *x = p; dpc_rng_gaussian_fill_naive(&x->s, x->row++, 0, x->b, x->n); bench_sink = x->b[x->n / 2]; }

typedef struct mcase {
    const char *name;
    dpc_mech_params p;
    dpc_noise_form form;
    size_t t0, steps;
} mcase;

int main(void)
{
    bench_machine();
    dpc_rng rng;
    dpc_rng_seed(&rng, 1);
    size_t n = (size_t)8 << 20; /* 64 MiB buffers: beyond the caches */
    buf_arg x = {malloc(n * sizeof(double)), malloc(n * sizeof(double)), n,
                 dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_TEST, 0)), 0};
    memset(x.a, 1, n * sizeof(double));
    memset(x.b, 2, n * sizeof(double));
    double tcpy = best_of(5, do_memcpy, &x), tset = best_of(5, do_memset, &x);
    double tfill = best_of(5, do_fill, &x), tnaive = best_of(2, do_naive, &x);
    double bytes = (double)n * sizeof(double);
    double bw_cpy = bytes / tcpy, bw_set = bytes / tset;
    double gs = (double)n / tfill, gsn = (double)n / tnaive;
    printf("\n== RNG vs memory bandwidth (1 thread, %zu doubles = %.0f MiB)\n", n,
           bytes / (1 << 20));
    printf("memcpy bandwidth      %8.2f GB/s (bytes copied per second)\n", bw_cpy / 1e9);
    printf("memset (write) bw     %8.2f GB/s\n", bw_set / 1e9);
    printf("gaussian fill         %8.1f M samples/s = %.2f GB/s written (%.0f%% of memset, "
           "%.0f%% of memcpy; target >= 50%%)\n",
           gs / 1e6, gs * 8 / 1e9, 100 * gs * 8 / bw_set, 100 * gs * 8 / bw_cpy);
    printf("gaussian naive        %8.1f M samples/s (one dpc_rng_gaussian per sample)\n",
           gsn / 1e6);
    /* secure mode: the same sampler over ChaCha20 words (fixed test key; real keys come from
     * the OS) */
    dpc_rng sec;
    memset(&sec, 0, sizeof sec);
    sec.mode = DPC_RNG_SECURE;
    for (int i = 0; i < 8; i++) sec.skey[i] = 0x9e3779b9u * (uint32_t)(i + 1);
    x.s = dpc_rng_stream_derive(&sec, DPC_STREAM_ID(DPC_STREAM_TEST, 0));
    double tsec = best_of(3, do_fill, &x);
    printf("gaussian fill, secure %8.1f M samples/s (ChaCha20, %.2fx the seeded fill's time)\n",
           (double)n / tsec / 1e6, tsec / tfill);
    free(x.a);
    free(x.b);

    printf("\n== per-step noise time at d = %d (1 thread)\n", D);
    static const double tc[3] = {1.0, -0.6, 0.1};
    static double dn[64 * 64];
    for (size_t i = 0; i < 64; i++)
        for (size_t j = 0; j <= i; j++) dn[i * 64 + j] = i == j ? 1.0 : 0.5 / (double)(1 + i - j);
    static const double th[4] = {0.9999, 0.999, 0.99, 0.9}, om[4] = {0.01, 0.05, 0.1, 0.2};
    mcase cases[] = {
        {"identity (DP-SGD)", {.kind = DPC_MECH_IDENTITY}, DPC_NOISE_BUFFER, 100, 20},
        {"lcgd lambda=0.9 buffer", {.kind = DPC_MECH_LCGD, .lambda = 0.9}, DPC_NOISE_BUFFER, 100, 20},
        {"lcgd lambda=0.9 replay", {.kind = DPC_MECH_LCGD, .lambda = 0.9}, DPC_NOISE_REPLAY, 100, 20},
        {"antipgd nu=0.05 replay", {.kind = DPC_MECH_ANTIPGD, .nu = 0.05}, DPC_NOISE_REPLAY, 100, 20},
        {"blt k=4", {.kind = DPC_MECH_BLT, .nbuf = 4, .theta = th, .omega = om}, DPC_NOISE_BUFFER, 100, 20},
        {"bsr bands=8 (buffer)", {.kind = DPC_MECH_BSR, .bands = 8, .decay = 1}, DPC_NOISE_BUFFER, 100, 10},
        {"bisr bands=8 buffer", {.kind = DPC_MECH_BISR, .bands = 8, .decay = 1}, DPC_NOISE_BUFFER, 100, 10},
        {"bisr bands=8 replay", {.kind = DPC_MECH_BISR, .bands = 8, .decay = 1}, DPC_NOISE_REPLAY, 100, 10},
        {"tree buffer", {.kind = DPC_MECH_TREE}, DPC_NOISE_BUFFER, 1000, 24},
        {"tree replay", {.kind = DPC_MECH_TREE}, DPC_NOISE_REPLAY, 1000, 24},
        {"tree Honaker buffer", {.kind = DPC_MECH_TREE, .honaker = 1}, DPC_NOISE_BUFFER, 1000, 24},
        {"toeplitz B (3 coeffs)", {.kind = DPC_MECH_TOEPLITZ, .ncoeffs = 3, .coeffs = tc}, DPC_NOISE_BUFFER, 100, 10},
        {"dense n=64 replay, t=32", {.kind = DPC_MECH_DENSE, .dense = dn}, DPC_NOISE_REPLAY, 32, 2},
        {"nu=0.01 buffer, t=32", {.kind = DPC_MECH_NU, .nu = 0.01}, DPC_NOISE_BUFFER, 32, 4},
        {"nu=0.01 replay, t=32", {.kind = DPC_MECH_NU, .nu = 0.01}, DPC_NOISE_REPLAY, 32, 4},
    };
    double *out = malloc(D * sizeof *out);
    double t_id = 0;
    dpc_rng_stream s = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_NOISE, 0));
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        mcase *mc = &cases[c];
        mc->p.steps = mc->p.kind == DPC_MECH_DENSE ? 64 : mc->t0 + mc->steps + 1;
        if (mc->p.decay == 0) mc->p.decay = 1;
        dpc_mech *m = NULL;
        dpc_noise *g = NULL;
        dpc_error err = {0};
        dpc_noise_config cfg = {0, D, mc->form, (size_t)4 << 30, DPC_ISA_AUTO};
        if (dpc_mech_new(&m, &mc->p, &err) || dpc_noise_new(&g, m, &s, &cfg, &err) ||
            dpc_noise_seek(g, mc->t0, &err)) {
            printf("%-26s error: %s\n", mc->name, err.msg);
            dpc_mech_free(m);
            continue;
        }
        double t = bench_now();
        for (size_t k = 0; k < mc->steps; k++)
            if (dpc_noise_next(g, out, &err)) break;
        t = (bench_now() - t) / (double)mc->steps;
        bench_sink = out[D / 2];
        if (c == 0) t_id = t;
        printf("%-26s %8.2f ms/step  %5.2fx identity  (state %zu floats/coord)\n", mc->name,
               1e3 * t, t / t_id, dpc_mech_state_floats(m, dpc_noise_get_form(g)));
        dpc_noise_free(g);
        dpc_mech_free(m);
    }
    printf("targets: BLT (k=4) <= 1.5x identity; lambda-CGD replay <= 2.2x identity\n");
    free(out);
    return 0;
}
