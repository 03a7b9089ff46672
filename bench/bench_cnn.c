/* bench_cnn.c — the cnn kind's clipped sum per example (one thread, chunk 32): Tramer & Boneh's
 * CNN on 28 x 28 images and on ScatterNet features, ScatterNet + linear, in each norm mode, and
 * the naive twin; plus the scattering transform's images per second. */
#include "bench_util.h"
#include "dpcorr/features.h"
#include "dpcorr/model.h"

#include <stdlib.h>

static void die(const char *what, const dpc_error *err)
{
    fprintf(stderr, "bench_cnn: %s: %s\n", what, err->msg);
    exit(1);
}

static void bench(const char *spec, size_t d, int mode, int naive)
{
    dpc_error err = {0};
    dpc_model_config c;
    dpc_model *m = NULL;
    dpc_model_ws *ws = NULL;
    if (dpc_model_parse(&c, spec, d, 10, &err)) die(spec, &err);
    c.conv_norm = (dpc_conv_norm)mode;
    if (dpc_model_new(&m, &c, &err) || dpc_model_ws_new(&ws, m, 32, &err)) die(spec, &err);
    size_t P = dpc_model_num_params(m), M = 32;
    double *w = calloc(P, sizeof *w), *g = calloc(P, sizeof *g), *X = malloc(M * d * sizeof *X);
    double y[32];
    dpc_rng rng;
    dpc_rng_seed(&rng, 1);
    if (dpc_model_init(m, w, &rng, 0, &err)) die("init", &err);
    for (size_t i = 0; i < M * d; i++) X[i] = (double)((i * 2654435761u) % 1000) / 1000.0;
    for (size_t i = 0; i < M; i++) y[i] = (double)(i % 10);
    double best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = bench_now();
        size_t done = 0;
        while (bench_now() - t0 < 0.5) {
            dpc_status st = naive ? dpc_model_clipped_sum_naive(m, w, X, y, M, 1.0, g, NULL, NULL, &err)
                                  : dpc_model_clipped_sum(m, w, X, y, M, 1.0, g, NULL, NULL, ws, &err);
            if (st) die("clipped sum", &err);
            done += M;
        }
        double per = (bench_now() - t0) / (double)done;
        if (per < best) best = per;
    }
    bench_sink = g[0];
    static const char *modes[] = {"auto", "ghost", "direct"};
    printf("%-62.62s %-6s %-6s P=%-7zu %9.0f examples/s\n", spec, naive ? "naive" : "fast",
           modes[mode], P, 1.0 / best);
    free(w), free(g), free(X);
    dpc_model_ws_free(ws);
    dpc_model_free(m);
}

static void bench_scatter(void)
{
    dpc_error err = {0};
    dpc_scatter *s = NULL;
    if (dpc_scatter_new(&s, 28, 28, 2, 8, &err)) die("scatter", &err);
    double img[784], *out = malloc(3969 * sizeof *out),
                     *scr = malloc(dpc_scatter_scratch_len(s) * sizeof *scr);
    for (int i = 0; i < 784; i++) img[i] = (double)((i * 37) % 255) / 255.0;
    double t0 = bench_now();
    size_t n = 0;
    while (bench_now() - t0 < 1.0) dpc_scatter_apply(s, img, out, scr), n++;
    printf("scattering J=2 L=8 on 28 x 28: %.0f images/s per thread (70 000 images: %.1f s on one "
           "thread)\n", (double)n / (bench_now() - t0), 70000.0 * (bench_now() - t0) / (double)n);
    bench_sink = out[0];
    free(out), free(scr);
    dpc_scatter_free(s);
}

int main(void)
{
    bench_machine();
    const char *tb = "cnn:conv16k8s2p2,tanh,maxpool2s1,conv32k4s2,tanh,maxpool2s1,fc32,tanh";
    const char *sc = "cnn:gn27n,conv16k3s2p1,tanh,conv32k3p1,tanh,fc32,tanh:in=81x7x7";
    for (int mode = 0; mode < 3; mode++) bench(tb, 784, mode, 0);
    bench(tb, 784, 0, 1);
    for (int mode = 0; mode < 3; mode++) bench(sc, 3969, mode, 0);
    bench(sc, 3969, 0, 1);
    bench("cnn:gn27n:in=81x7x7", 3969, 0, 0);
    bench_scatter();
    return 0;
}
