/* bench_core.c — the noise side, one thread:
 *  1. Gaussian fill (seeded Philox and secure ChaCha20) at every instruction-set level, next to
 *     NumPy's standard_normal measured in the same run (rounds alternate NumPy and dpcorr;
 *     the ratio is the median over rounds); memory bandwidth for scale;
 *  2. the float32 path's tanh at every level against the libm loop it replaces;
 *  3. per-step noise time of every mechanism at d = 1e6 next to identity (DP-SGD), at the
 *     default level, and identity / BLT / BSR at every level.
 * CPU time of the process (NumPy's figure too: anchors.py times with process_time), best of
 * several repetitions inside each round, so that other jobs on the cores distort little. */
#include "bench_util.h"
#include "dpcorr/mech.h"
#include "model/tanh_f32.h"

#include <math.h>
#include <stdlib.h>

#define D 1000000
#define ROUNDS 3

static double best_of(int reps, void (*fn)(void *), void *arg)
{
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t = bench_cpu();
        fn(arg);
        t = bench_cpu() - t;
        if (t < best) best = t;
    }
    return best;
}

typedef struct buf_arg {
    double *a, *b;
    size_t n;
    dpc_rng_stream s;
    uint64_t row;
    dpc_isa isa;
} buf_arg;
static void do_memcpy(void *p) { buf_arg *x = p; memcpy(x->b, x->a, x->n * sizeof(double)); bench_sink = x->b[x->n / 2]; }
static void do_memset(void *p) { buf_arg *x = p; memset(x->b, (int)(x->row++ & 0x3f), x->n * sizeof(double)); bench_sink = x->b[x->n / 3]; }
static void do_fill(void *p) { buf_arg *x = p; dpc_rng_gaussian_fill_isa(&x->s, x->row++, 0, x->b, x->n, x->isa); bench_sink = x->b[x->n / 2]; }
static void do_naive(void *p) { buf_arg *x = p; dpc_rng_gaussian_fill_naive(&x->s, x->row++, 0, x->b, x->n); bench_sink = x->b[x->n / 2]; }

static const dpc_isa LEVELS[3] = {DPC_ISA_SSE2, DPC_ISA_AVX2, DPC_ISA_AVX512};

static void bench_fill(void)
{
    dpc_rng rng, sec;
    dpc_rng_seed(&rng, 1);
    memset(&sec, 0, sizeof sec); /* secure mode with a fixed test key (real keys: the OS) */
    sec.mode = DPC_RNG_SECURE;
    for (int i = 0; i < 8; i++) sec.skey[i] = 0x9e3779b9u * (uint32_t)(i + 1);
    size_t n = (size_t)8 << 20; /* 64 MiB: beyond the caches, as NumPy's 8 Mi samples */
    buf_arg x = {malloc(n * sizeof(double)), malloc(n * sizeof(double)), n,
                 dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_TEST, 0)), 0, DPC_ISA_AUTO};
    memset(x.a, 1, n * sizeof(double));
    memset(x.b, 2, n * sizeof(double));
    double bytes = (double)n * sizeof(double);
    printf("\n== Gaussian fill, one core, %zu samples (CPU time; %d rounds, each best of 5)\n", n,
           ROUNDS);
    printf("memcpy %.1f GB/s copied, memset %.1f GB/s (for scale)\n",
           bytes / best_of(5, do_memcpy, &x) / 1e9, bytes / best_of(5, do_memset, &x) / 1e9);
    double seeded[3][ROUNDS], secure[3][ROUNDS], numpy[ROUNDS], ratio[ROUNDS];
    const char *keys[1] = {"samples_per_s"};
    char why[256] = "", args[64];
    snprintf(args, sizeof args, "numpy-normal --n %zu --reps 5", n);
    int have_np = 1;
    dpc_isa best = dpc_isa_detect();
    for (int r = 0; r < ROUNDS; r++) {
        if (have_np) have_np = bench_anchor(args, keys, &numpy[r], 1, why, sizeof why);
        for (int l = 0; l < 3; l++) {
            seeded[l][r] = secure[l][r] = 0;
            if (!dpc_isa_supported(LEVELS[l])) continue;
            x.isa = LEVELS[l];
            x.s = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_TEST, 0));
            seeded[l][r] = (double)n / best_of(5, do_fill, &x);
            x.s = dpc_rng_stream_derive(&sec, DPC_STREAM_ID(DPC_STREAM_TEST, 0));
            secure[l][r] = (double)n / best_of(3, do_fill, &x);
        }
        if (have_np) ratio[r] = seeded[best - 1][r] / numpy[r];
    }
    printf("%-8s %14s %14s %14s\n", "level", "seeded M/s", "secure M/s", "secure slower");
    for (int l = 0; l < 3; l++) {
        if (!dpc_isa_supported(LEVELS[l])) {
            printf("%-8s (this CPU lacks it)\n", dpc_isa_name(LEVELS[l]));
            continue;
        }
        double a = bench_median(seeded[l], ROUNDS), b = bench_median(secure[l], ROUNDS);
        printf("%-8s %14.0f %14.0f %13.2fx\n", dpc_isa_name(LEVELS[l]), a / 1e6, b / 1e6, a / b);
    }
    x.s = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_TEST, 0));
    printf("naive    %14.0f  (one dpc_rng_gaussian per sample)\n",
           (double)n / best_of(1, do_naive, &x) / 1e6);
    if (have_np) {
        printf("NumPy standard_normal, one core: %.0f M/s (median of %d rounds)\n",
               bench_median(numpy, ROUNDS) / 1e6, ROUNDS);
        printf("fill at %s / NumPy: %.1fx (median of the per-round ratios; target >= 10x)\n",
               dpc_isa_name(best), bench_median(ratio, ROUNDS));
    } else {
        printf("NumPy anchor not available (%s): no ratio\n", why);
    }
    free(x.a);
    free(x.b);
}

typedef struct mcase {
    const char *name;
    dpc_mech_params p;
    dpc_noise_form form;
    size_t t0, steps;
} mcase;

/* ms per step of case mc at level isa (best of 3 rounds of `steps` steps), NAN on error. */
static double step_ms(mcase *mc, dpc_isa isa, double *out, size_t *floats)
{
    dpc_rng rng;
    dpc_rng_seed(&rng, 1);
    dpc_rng_stream s = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_NOISE, 0));
    mc->p.steps = mc->p.kind == DPC_MECH_DENSE ? 64 : mc->t0 + 3 * mc->steps + 2;
    if (mc->p.decay == 0) mc->p.decay = 1;
    dpc_mech *m = NULL;
    dpc_noise *g = NULL;
    dpc_error err = {0};
    dpc_noise_config cfg = {0, D, mc->form, (size_t)4 << 30, isa};
    if (dpc_mech_new(&m, &mc->p, &err) || dpc_noise_new(&g, m, &s, &cfg, &err) ||
        dpc_noise_seek(g, mc->t0, &err) || dpc_noise_next(g, out, &err)) {
        printf("%-26s error: %s\n", mc->name, err.msg);
        dpc_noise_free(g);
        dpc_mech_free(m);
        return NAN;
    }
    double best = 1e30;
    for (int r = 0; r < 3 && mc->p.kind != DPC_MECH_DENSE; r++) {
        double t = bench_cpu();
        for (size_t k = 0; k < mc->steps; k++)
            if (dpc_noise_next(g, out, &err)) break;
        t = (bench_cpu() - t) / (double)mc->steps;
        if (t < best) best = t;
    }
    if (mc->p.kind == DPC_MECH_DENSE) { /* fixed steps t0..: one round */
        double t = bench_cpu();
        for (size_t k = 0; k < mc->steps; k++)
            if (dpc_noise_next(g, out, &err)) break;
        best = (bench_cpu() - t) / (double)mc->steps;
    }
    bench_sink = out[D / 2];
    *floats = dpc_mech_state_floats(m, dpc_noise_get_form(g));
    dpc_noise_free(g);
    dpc_mech_free(m);
    return 1e3 * best;
}

static void bench_noise(void)
{
    static const double tc[3] = {1.0, -0.6, 0.1};
    static double dn[64 * 64];
    for (size_t i = 0; i < 64; i++)
        for (size_t j = 0; j <= i; j++) dn[i * 64 + j] = i == j ? 1.0 : 0.5 / (double)(1 + i - j);
    static const double th[4] = {0.9999, 0.999, 0.99, 0.9}, om[4] = {0.01, 0.05, 0.1, 0.2};
    mcase cases[] = {
        {"identity (DP-SGD)", {.kind = DPC_MECH_IDENTITY}, DPC_NOISE_BUFFER, 100, 20},
        {"blt k=4", {.kind = DPC_MECH_BLT, .nbuf = 4, .theta = th, .omega = om}, DPC_NOISE_BUFFER, 100, 20},
        {"bsr bands=8 (buffer)", {.kind = DPC_MECH_BSR, .bands = 8, .decay = 1}, DPC_NOISE_BUFFER, 100, 10},
        {"lcgd lambda=0.9 buffer", {.kind = DPC_MECH_LCGD, .lambda = 0.9}, DPC_NOISE_BUFFER, 100, 20},
        {"lcgd lambda=0.9 replay", {.kind = DPC_MECH_LCGD, .lambda = 0.9}, DPC_NOISE_REPLAY, 100, 20},
        {"antipgd nu=0.05 replay", {.kind = DPC_MECH_ANTIPGD, .nu = 0.05}, DPC_NOISE_REPLAY, 100, 20},
        {"bsr bands=32 (buffer)", {.kind = DPC_MECH_BSR, .bands = 32, .momentum = 0.9, .decay = 1}, DPC_NOISE_BUFFER, 100, 5},
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
    size_t floats;
    dpc_isa best = dpc_isa_detect();
    printf("\n== per-step noise time at d = %d (1 thread), every level: identity, BLT, BSR\n", D);
    printf("(state moved per step: k doubles read and written per coordinate, plus the output)\n");
    printf("%-8s %12s %16s %18s\n", "level", "identity ms", "blt k=4 ms (x)", "bsr 8 ms (x)");
    double rb[3] = {0, 0, 0}, rs[3] = {0, 0, 0};
    for (int l = 0; l < 3; l++) {
        if (!dpc_isa_supported(LEVELS[l])) continue;
        double ti = step_ms(&cases[0], LEVELS[l], out, &floats);
        double tb = step_ms(&cases[1], LEVELS[l], out, &floats);
        double ts = step_ms(&cases[2], LEVELS[l], out, &floats);
        rb[l] = tb / ti;
        rs[l] = ts / ti;
        printf("%-8s %12.2f %9.2f (%4.2fx) %11.2f (%4.2fx)\n", dpc_isa_name(LEVELS[l]), ti, tb,
               rb[l], ts, rs[l]);
    }
    printf("targets: BLT k=4 <= 1.2x identity, BSR bands 8 <= 1.5x identity (at %s: %.2fx, %.2fx; "
           "doc/performance.md: both are bound by memory traffic, identity by the RNG)\n",
           dpc_isa_name(best), rb[best - 1], rs[best - 1]);
    printf("\n== every mechanism at the default level (%s); the stateful ones against the copy "
           "bandwidth of their own footprint\n", dpc_isa_name(best));
    printf("(moved = (2 x state + 1) x 8 bytes per coordinate: the state read and written, the "
           "output written; copy = memcpy of the state's bytes, read + written, best of 5)\n");
    double t_id = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        double t = step_ms(&cases[c], best, out, &floats);
        if (c == 0) t_id = t;
        if (t != t) continue; /* NAN: reported by step_ms */
        printf("%-26s %8.2f ms/step  %5.2fx identity  (state %2zu floats/coord)", cases[c].name, t,
               t / t_id, floats);
        if (floats && cases[c].p.kind != DPC_MECH_DENSE) {
            size_t n = floats * (size_t)D;
            buf_arg x;
            memset(&x, 0, sizeof x);
            x.a = malloc(n * sizeof(double));
            x.b = malloc(n * sizeof(double));
            x.n = n;
            if (x.a && x.b) {
                memset(x.a, 1, n * sizeof(double));
                memset(x.b, 2, n * sizeof(double));
                double copy = 2.0 * (double)n * sizeof(double) / best_of(5, do_memcpy, &x);
                double moved = (2.0 * (double)floats + 1) * 8.0 * D / (t * 1e-3);
                printf("  moved %5.1f GB/s, copy %5.1f GB/s: %3.0f%%", moved / 1e9, copy / 1e9,
                       100 * moved / copy);
            }
            free(x.a);
            free(x.b);
        }
        printf("\n");
    }
    printf("target: each stateful mechanism >= 70%% of the copy bandwidth of its footprint\n");
    free(out);
}

/* The level by measurement (dpc_tune_isa, what the CLI runs once per process): three runs of
 * it, the table of each level's time per family and the choice, and its own cost. */
static void bench_tuning(void)
{
    printf("\n== instruction-set level by measurement (dpc_tune_isa; ns per multiply-add, per "
           "sample, per coordinate of a BLT-4 step)\n");
    printf("%-4s %-6s %10s %10s %10s   %-8s\n", "run", "family", "sse2", "avx2", "avx512",
           "chosen");
    double worst = 0;
    for (int run = 1; run <= 3; run++) {
        dpc_tune_levels t;
        dpc_error err = {0};
        if (dpc_tune_isa(&t, &err)) {
            printf("error: %s\n", err.msg);
            return;
        }
        if (t.seconds > worst) worst = t.seconds;
        for (int f = 0; f < DPC_TUNE_NFAMILIES; f++) {
            printf("%-4d %-6s", run, dpc_tune_family_name((dpc_tune_family)f));
            for (int l = DPC_ISA_SSE2; l <= DPC_ISA_AVX512; l++)
                if (t.ns[f][l] > 0) printf(" %10.4f", t.ns[f][l]);
                else printf(" %10s", "-");
            printf("   %-8s\n", dpc_isa_name(t.level[f]));
        }
    }
    printf("measurement time: at most %.1f ms of the three (target well under 50 ms)\n",
           worst * 1e3);
}

/* The float32 path's tanh (model/tanh_f32.h) at every level against the libm loop it
 * replaces, (float)tanh((double)x): the same floats (tests/test_tanh_f32.c, exhaustive). */
typedef struct tanh_arg {
    float *z;
    const float *x;
    size_t n;
    dpc_isa isa;
} tanh_arg;
static void do_tanh(void *p)
{
    tanh_arg *t = p;
    memcpy(t->z, t->x, t->n * sizeof *t->z);
    dpc__tanh_f32(t->isa, t->z, t->n);
    bench_sink = t->z[t->n / 2];
}
static void do_tanh_libm(void *p)
{
    tanh_arg *t = p;
    for (size_t i = 0; i < t->n; i++) t->z[i] = (float)tanh((double)t->x[i]);
    bench_sink = t->z[t->n / 2];
}
static void do_copy_f(void *p)
{
    tanh_arg *t = p;
    memcpy(t->z, t->x, t->n * sizeof *t->z);
    bench_sink = t->z[t->n / 2];
}

static void bench_tanh(void)
{
    size_t n = 128000; /* one float32 forward's hidden layer: 500 examples x 256 units */
    float *x = malloc(n * sizeof *x), *z = malloc(n * sizeof *z);
    for (size_t i = 0; i < n; i++) x[i] = (float)(4.0 * sin(0.001 * (double)i)); /* [-4, 4] */
    tanh_arg t = {z, x, n, DPC_ISA_SSE2};
    double copy = best_of(5, do_copy_f, &t), libm = best_of(5, do_tanh_libm, &t);
    printf("\n== float32 tanh, one core, %zu values in [-4, 4] (ns per value, best of 5; the "
           "copy of the input included and shown)\n", n);
    printf("libm (float)tanh((double)x): %.2f   copy: %.2f\n", libm / (double)n * 1e9,
           copy / (double)n * 1e9);
    for (int l = DPC_ISA_SSE2; l <= DPC_ISA_AVX512; l++) {
        if (!dpc_isa_supported((dpc_isa)l)) continue;
        t.isa = (dpc_isa)l;
        double s = best_of(5, do_tanh, &t);
        printf("%-8s %.2f  (%.1fx libm)\n", dpc_isa_name((dpc_isa)l), s / (double)n * 1e9,
               libm / s);
    }
    free(x);
    free(z);
}

int main(void)
{
    bench_machine();
    bench_tuning();
    bench_fill();
    bench_tanh();
    bench_noise();
    printf("\nload average at the end: %.2f\n", bench_loadavg());
    return 0;
}
