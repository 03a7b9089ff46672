/* bench_model.c — examples/s of the clipped gradient sum (dpc_model_clipped_sum) against the
 * naive per-example path (dpc_model_clipped_sum_naive: materialise g_i, norm, scale, add), for
 * the Fashion-MNIST shapes: softmax 784-10 and MLP 784-256-10, random data in [0, 1), clip 1.
 * One thread; time is this process's CPU time (CLOCK_PROCESS_CPUTIME_ID), best of several
 * repetitions, so that other load on a shared machine distorts the numbers less.
 * Prints one line per configuration. */
#include "dpcorr/model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(const char *what, const dpc_error *err)
{
    fprintf(stderr, "bench_model: %s: %s\n", what, err->msg);
    exit(1);
}

/* Runs `chunks` chunks of M examples (cycling over the data set) through the fast or the
 * naive path; returns examples per second of the best of `reps` repetitions. */
static double run(const dpc_model *m, const double *w, const double *X, const double *y,
                  size_t n, size_t M, size_t chunks, int naive, dpc_model_ws *ws, double *gsum,
                  int reps)
{
    size_t D = dpc_model_get_config(m)->n_in;
    double best = 0;
    dpc_error err = {0};
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        for (size_t c = 0; c < chunks; c++) {
            size_t i0 = (c * M) % (n - M + 1);
            dpc_status st = naive
                ? dpc_model_clipped_sum_naive(m, w, X + i0 * D, y + i0, M, 1.0, gsum, NULL,
                                              NULL, &err)
                : dpc_model_clipped_sum(m, w, X + i0 * D, y + i0, M, 1.0, gsum, NULL, NULL, ws,
                                        &err);
            if (st) die("clipped sum", &err);
        }
        double eps = (double)(chunks * M) / (now() - t0);
        if (eps > best) best = eps;
    }
    return best;
}

static void bench(const char *spec, size_t naive_chunks, size_t fast_chunks)
{
    const size_t D = 784, K = 10, n = 2048;
    dpc_model_config cfg;
    dpc_model *m = NULL;
    dpc_error err = {0};
    if (dpc_model_parse(&cfg, spec, D, K, &err) || dpc_model_new(&m, &cfg, &err))
        die(spec, &err);
    size_t P = dpc_model_num_params(m);
    double *w = malloc(P * sizeof *w), *g = calloc(P, sizeof *g), *g2 = calloc(P, sizeof *g2);
    double *X = malloc(n * D * sizeof *X), *y = malloc(n * sizeof *y);
    if (!w || !g || !g2 || !X || !y) {
        fprintf(stderr, "bench_model: out of memory\n");
        exit(1);
    }
    dpc_rng rng;
    dpc_rng_seed(&rng, 1);
    if (dpc_model_init(m, w, &rng, 0, &err)) die("init", &err);
    dpc_rng_stream s = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_TEST, 0));
    for (size_t i = 0; i < P; i++) w[i] += 0.01 * dpc_rng_gaussian(&s, 0, i); /* biases != 0 */
    for (size_t i = 0; i < n * D; i++) X[i] = dpc_rng_uniform(&s, 1, i);
    for (size_t i = 0; i < n; i++) y[i] = (double)dpc_rng_below(&s, 2, i, K);

    /* parity on one chunk, for the record */
    dpc_model_ws *ws = NULL;
    if (dpc_model_ws_new(&ws, m, 64, &err)) die("ws", &err);
    if (dpc_model_clipped_sum(m, w, X, y, 32, 1.0, g, NULL, NULL, ws, &err) ||
        dpc_model_clipped_sum_naive(m, w, X, y, 32, 1.0, g2, NULL, NULL, &err))
        die("parity", &err);
    double md = 0, mx = 0;
    for (size_t i = 0; i < P; i++) {
        if (fabs(g[i] - g2[i]) > md) md = fabs(g[i] - g2[i]);
        if (fabs(g2[i]) > mx) mx = fabs(g2[i]);
    }
    double naive = run(m, w, X, y, n, 32, naive_chunks, 1, ws, g, 3);
    printf("%-14s P=%-7zu naive   chunk 32: %10.0f examples/s\n", spec, P, naive);
    static const size_t chunks[] = {16, 32, 64};
    for (size_t k = 0; k < 3; k++) {
        size_t M = chunks[k];
        double fast = run(m, w, X, y, n, M, fast_chunks * 32 / M, 0, ws, g, 5);
        printf("%-14s P=%-7zu fast    chunk %2zu: %10.0f examples/s  (x%.1f)\n", spec, P, M,
               fast, fast / naive);
    }
    printf("%-14s fast vs naive on one chunk: max |diff| / max |g| = %.2g\n", spec, md / mx);
    dpc_model_ws_free(ws);
    dpc_model_free(m);
    free(w), free(g), free(g2), free(X), free(y);
}

int main(void)
{
    bench("softmax", 100, 1000);
    bench("mlp:256:tanh", 4, 64);
    bench("mlp:256:relu", 4, 64);
    return 0;
}
