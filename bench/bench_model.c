/* bench_model.c — the model kernels, one thread, CPU time (CLOCK_PROCESS_CPUTIME_ID; best of
 * several repetitions, so that other jobs on a shared machine distort little):
 *  1. the two-phase batch clipped sum (the trainer's path, batch 500, chunks of 32) of the
 *     Fashion-MNIST shapes at every instruction-set level: phase 1 (forward, backward, ghost
 *     norms) and phase 2 (the segmented GEMM sums) per example, and against the naive path;
 *  2. the two big GEMMs of the MLP 784-256-10 at every level in GFLOP/s, next to OpenBLAS's
 *     dgemm on one thread (a reference for the kernels' efficiency; dpcorr does not call it:
 *     doc/performance.md says why).
 * Random data in [0, 1), clip 1. */
#include "bench_util.h"
#include "dpcorr/model.h"
#include "model/gemm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* OpenBLAS (linked for LAPACKE): row-major dgemm and its thread count. */
void cblas_dgemm(int order, int ta, int tb, int m, int n, int k, double alpha, const double *A,
                 int lda, const double *B, int ldb, double beta, double *C, int ldc);
void openblas_set_num_threads(int n);

static void die(const char *what, const dpc_error *err)
{
    fprintf(stderr, "bench_model: %s: %s\n", what, err->msg);
    exit(1);
}

static const dpc_isa LEVELS[3] = {DPC_ISA_SSE2, DPC_ISA_AVX2, DPC_ISA_AVX512};

#define B 500
#define CH 32

typedef struct data {
    size_t D, K, n;
    double *X, *y;
} data;

/* Phase 1 and phase 2 seconds per example (best of reps) of the batch [0, B) of d. */
static void batch_times(const dpc_model *m, const double *w, const data *d, int reps, double *t1,
                        double *t2)
{
    dpc_error err = {0};
    dpc_model_batch *b = NULL;
    dpc_model_ws *ws = NULL;
    size_t P = dpc_model_num_params(m);
    double *g = calloc(P, sizeof *g);
    if (dpc_model_batch_new(&b, m, B, CH, &err) || dpc_model_ws_new(&ws, m, CH, &err) || !g)
        die("batch", &err);
    *t1 = *t2 = 1e30;
    for (int r = 0; r < reps; r++) {
        double a = bench_cpu();
        for (size_t i0 = 0; i0 < B; i0 += CH)
            if (dpc_model_batch_grads(m, w, d->X + i0 * d->D, d->y + i0, CH < B - i0 ? CH : B - i0,
                                      i0, 1.0, b, ws, NULL, NULL, &err))
                die("phase 1", &err);
        double c = bench_cpu();
        dpc_model_batch_sum(m, b, B, 0, 1, g);
        double e = bench_cpu();
        if (c - a < *t1) *t1 = c - a;
        if (e - c < *t2) *t2 = e - c;
    }
    bench_sink = g[P / 2];
    *t1 /= B;
    *t2 /= B;
    free(g);
    dpc_model_ws_free(ws);
    dpc_model_batch_free(b);
}

static void bench_batch(const char *spec, const data *d)
{
    dpc_error err = {0};
    printf("%-14s", spec);
    double naive_eps = 0;
    for (int l = 0; l < 3; l++) {
        if (!dpc_isa_supported(LEVELS[l])) {
            printf("  %s: -", dpc_isa_name(LEVELS[l]));
            continue;
        }
        dpc_model_config cfg;
        dpc_model *m = NULL;
        if (dpc_model_parse(&cfg, spec, d->D, d->K, &err)) die(spec, &err);
        cfg.isa = LEVELS[l];
        if (dpc_model_new(&m, &cfg, &err)) die(spec, &err);
        size_t P = dpc_model_num_params(m);
        double *w = malloc(P * sizeof *w);
        dpc_rng rng;
        dpc_rng_seed(&rng, 1);
        if (!w || dpc_model_init(m, w, &rng, 0, &err)) die("init", &err);
        for (size_t i = 0; i < P; i++) w[i] += 1e-3 * (double)(i % 7); /* biases != 0 */
        if (l == 0) { /* the naive reference, once */
            double *g = calloc(P, sizeof *g), t = bench_cpu();
            if (dpc_model_clipped_sum_naive(m, w, d->X, d->y, CH, 1.0, g, NULL, NULL, &err))
                die("naive", &err);
            naive_eps = CH / (bench_cpu() - t);
            free(g);
        }
        double t1, t2;
        batch_times(m, w, d, 5, &t1, &t2);
        printf("  %s: %5.1f + %4.1f us = %6.0f ex/s", dpc_isa_name(LEVELS[l]), 1e6 * t1,
               1e6 * t2, 1.0 / (t1 + t2));
        free(w);
        dpc_model_free(m);
    }
    printf("  (naive %.0f ex/s)\n", naive_eps);
}

/* GFLOP/s of C (m, n) [+]= A (m, k) B (k, n) in segments of seg, per level and by OpenBLAS. */
static void bench_gemm(const char *what, size_t m, size_t n, size_t k, size_t seg)
{
    double *A = malloc(m * k * sizeof *A), *Bm = malloc(k * n * sizeof *Bm);
    double *Bp = malloc(dpc__gemm_packed_size(k, n) * sizeof *Bp), *C = calloc(m * n, sizeof *C);
    for (size_t i = 0; i < m * k; i++) A[i] = 1e-3 * (double)(i % 101);
    for (size_t i = 0; i < k * n; i++) Bm[i] = 1e-3 * (double)(i % 97);
    dpc__gemm_pack_b(k, n, Bm, n, Bp);
    double flops = 2.0 * (double)m * (double)n * (double)k;
    printf("%-34s", what);
    for (int l = 0; l < 3; l++) {
        if (!dpc_isa_supported(LEVELS[l])) continue;
        double best = 1e30;
        for (int r = 0; r < 5; r++) {
            double t = bench_cpu();
            dpc__gemm_seg(LEVELS[l], m, n, k, seg, A, k, Bp, k, C, n, 1);
            t = bench_cpu() - t;
            if (t < best) best = t;
        }
        printf("  %s %5.1f", dpc_isa_name(LEVELS[l]), flops / best / 1e9);
    }
    double best = 1e30;
    for (int r = 0; r < 5; r++) {
        double t = bench_cpu();
        cblas_dgemm(101 /* row major */, 111, 111, (int)m, (int)n, (int)k, 1.0, A, (int)k, Bm,
                    (int)n, 1.0, C, (int)n);
        t = bench_cpu() - t;
        if (t < best) best = t;
    }
    printf("  OpenBLAS %5.1f GFLOP/s\n", flops / best / 1e9);
    bench_sink = C[m * n / 2];
    free(A), free(Bm), free(Bp), free(C);
}

int main(void)
{
    bench_machine();
    openblas_set_num_threads(1);
    data d = {784, 10, B, malloc((size_t)B * 784 * sizeof(double)), malloc(B * sizeof(double))};
    dpc_rng rng;
    dpc_rng_seed(&rng, 1);
    dpc_rng_stream s = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_TEST, 0));
    for (size_t i = 0; i < B * d.D; i++) d.X[i] = dpc_rng_uniform(&s, 1, i);
    for (size_t i = 0; i < B; i++) d.y[i] = (double)dpc_rng_below(&s, 2, i, d.K);
    printf("\n== batch clipped sum, one thread, batch %d in chunks of %d (CPU time, best of 5):\n"
           "   phase 1 (forward, backward, ghost norms) + phase 2 (sums) per example\n", B, CH);
    bench_batch("softmax", &d);
    bench_batch("mlp:256:relu", &d);
    bench_batch("mlp:256:tanh", &d);
    double *v = malloc(256 * B * sizeof *v), t = bench_cpu();
    for (size_t i = 0; i < 256 * B; i++) v[i] = tanh(1e-4 * (double)i);
    t = bench_cpu() - t;
    printf("(of which libm tanh, 256 per example: %.1f us per example)\n", 1e6 * t / B);
    bench_sink = v[7];
    free(v);
    printf("\n== the MLP's GEMMs, one thread, GFLOP/s (2 m n k flops; CPU time, best of 5)\n");
    bench_gemm("forward W (256x784) X^T, 32 ex.", 256, 32, 784, 0);
    bench_gemm("batch sum (256x500) X (500x784)", 256, 784, B, CH);
    printf("(the batch sum in %d segments of %d; OpenBLAS computes one plain product, "
           "summing in its own blocked order)\n", (B + CH - 1) / CH, CH);
    free(d.X);
    free(d.y);
    printf("\nload average at the end: %.2f\n", bench_loadavg());
    return 0;
}
