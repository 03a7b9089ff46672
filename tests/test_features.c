/* test_features.c — the scattering transform against a direct spatial-domain computation
 * (tests/gen/scatter_oracle.py), its mixed-radix FFT against a naive DFT, the --features spec,
 * dataset transforms (shape, labels, thread-count invariance) and the cache (miss, hit,
 * corrupted file recomputed). */
#include "dpcorr/features.h"
#include "features/fft2d.h"
#include "harness.h"
#include "scatter_oracles.h"

#include <unistd.h>

static void test_fft(void)
{
    size_t sizes[] = {1, 2, 3, 4, 5, 7, 9, 10, 12, 18, 36, 40};
    dpc_error err = {0};
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        size_t n = sizes[si], V = 3;
        dpc__fftp p;
        CHECK_OK(dpc__fft2d_plan(&p, n, &err), &err);
        double *re = calloc(n * V, 8), *im = calloc(n * V, 8), *r0 = calloc(n * V, 8),
               *i0 = calloc(n * V, 8), *scr = calloc(dpc__fft2d_scratch(n, V), 8);
        for (size_t j = 0; j < n * V; j++) r0[j] = re[j] = sin(1.3 * j + 0.2), i0[j] = im[j] = cos(0.7 * j * j);
        dpc__fft_rows(&p, re, im, V, 0, scr);
        double worst = 0;
        for (size_t k = 0; k < n; k++)
            for (size_t v = 0; v < V; v++) {
                double xr = 0, xi = 0;
                for (size_t j = 0; j < n; j++) {
                    double a = -2 * M_PI * (double)((j * k) % n) / (double)n;
                    xr += r0[j * V + v] * cos(a) - i0[j * V + v] * sin(a);
                    xi += r0[j * V + v] * sin(a) + i0[j * V + v] * cos(a);
                }
                worst = fmax(worst, fmax(fabs(xr - re[k * V + v]), fabs(xi - im[k * V + v])));
            }
        CHECK(worst < 1e-12 * n, "fft n=%zu: max error %g vs naive DFT", n, worst);
        dpc__fft_rows(&p, re, im, V, 1, scr);
        worst = 0;
        for (size_t j = 0; j < n * V; j++) worst = fmax(worst, fabs(re[j] - r0[j]) + fabs(im[j] - i0[j]));
        CHECK(worst < 1e-13 * n, "fft n=%zu: inverse round trip error %g", n, worst);
        free(re), free(im), free(r0), free(i0), free(scr);
        dpc__fft2d_plan_free(&p);
    }
}

static void check_case(const double *img, const double *ref, size_t H, size_t J, size_t L,
                       size_t K)
{
    dpc_scatter *s = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_scatter_new(&s, H, H, J, L, &err), &err);
    if (!s) return;
    size_t k, h, w;
    dpc_scatter_shape(s, &k, &h, &w);
    CHECK(k == K && h == H >> J && w == H >> J, "shape %zu x %zu x %zu", k, h, w);
    double *out = calloc(K * h * w, 8), *scr = calloc(dpc_scatter_scratch_len(s), 8);
    dpc_scatter_apply(s, img, out, scr);
    double worst = 0, scale = 0;
    for (size_t i = 0; i < K * h * w; i++) {
        worst = fmax(worst, fabs(out[i] - ref[i]));
        scale = fmax(scale, fabs(ref[i]));
    }
    CHECK(worst <= 1e-11 * scale, "H=%zu J=%zu L=%zu: max |C - oracle| = %g (scale %g)", H, J,
          L, worst, scale);
    free(out);
    free(scr);
    dpc_scatter_free(s);
}

static void test_oracle(void)
{
    check_case(scat0_img, scat0_out, SCAT0_H, SCAT0_J, SCAT0_L, SCAT0_K);
    check_case(scat1_img, scat1_out, SCAT1_H, SCAT1_J, SCAT1_L, SCAT1_K);
    check_case(scat2_img, scat2_out, SCAT2_H, SCAT2_J, SCAT2_L, SCAT2_K);
    check_case(scat3_img, scat3_out, SCAT3_H, SCAT3_J, SCAT3_L, SCAT3_K);
    CHECK(SCAT0_K == 81, "J = 2, L = 8 gives 81 channels");
}

static void test_spec(void)
{
    dpc_features_config c;
    dpc_error err = {0};
    char buf[64];
    CHECK_OK(dpc_features_parse(&c, "scatter:J=2,L=8", &err), &err);
    CHECK(c.kind == DPC_FEATURES_SCATTER && c.J == 2 && c.L == 8, "parse");
    CHECK_OK(dpc_features_parse(&c, "scatter", &err), &err);
    dpc_features_format(&c, buf, sizeof buf);
    CHECK(!strcmp(buf, "scatter:J=2,L=8"), "format %s", buf);
    CHECK_OK(dpc_features_parse(&c, "scatter:L=4", &err), &err);
    CHECK(c.L == 4 && c.J == 2, "L only");
    const char *bad[] = {"scat", "scatter:J=0", "scatter:K=2", "scatter:J=2,L=99", "scatter:J=x"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK(dpc_features_parse(&c, bad[i], &err) == DPC_E_INVALID, "'%s' accepted", bad[i]);
    dpc_scatter *s = NULL;
    CHECK(dpc_scatter_new(&s, 3, 3, 2, 8, &err) == DPC_E_INVALID, "2^J > H accepted");
}

static void test_dataset(void)
{
    dpc_error err = {0};
    dpc_dataset *in = NULL, *a = NULL, *b = NULL, *c = NULL;
    size_t n = 5, H = 16;
    CHECK_OK(dpc_dataset_new(&in, n, H * H, 3, &err), &err);
    for (size_t i = 0; i < n * H * H; i++) in->x[i] = 0.5 + 0.5 * sin(0.37 * i + 0.01 * i * i);
    for (size_t i = 0; i < n; i++) in->y[i] = (double)(i % 3);
    in->shape[0] = 1, in->shape[1] = in->shape[2] = H;
    dpc_features_config cfg = {DPC_FEATURES_SCATTER, 2, 4};
    char dir[] = "/tmp/dpcorr_feat_XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char cache[64];
    snprintf(cache, sizeof cache, "%s/cache", dir);
    int hit = -1;
    CHECK_OK(dpc_features_apply(&a, in, &cfg, cache, 1, &hit, &err), &err);
    CHECK(a && hit == 0 && a->d == 25 * 16 && a->shape[0] == 25 && a->shape[1] == 4, "miss");
    CHECK_OK(dpc_features_apply(&b, in, &cfg, cache, 3, &hit, &err), &err);
    CHECK(b && hit == 1 && !memcmp(a->x, b->x, n * a->d * 8) && !memcmp(a->y, in->y, n * 8),
          "hit, identical");
    CHECK_OK(dpc_features_apply(&c, in, &cfg, NULL, 3, &hit, &err), &err);
    CHECK(c && hit == 0 && !memcmp(a->x, c->x, n * a->d * 8), "3 threads = 1 thread");
    /* the single-image transform agrees with the dataset rows */
    dpc_scatter *s = NULL;
    CHECK_OK(dpc_scatter_new(&s, H, H, 2, 4, &err), &err);
    double *o = calloc(a->d, 8), *scr = calloc(dpc_scatter_scratch_len(s), 8);
    dpc_scatter_apply(s, in->x + 3 * H * H, o, scr);
    CHECK(!memcmp(o, a->x + 3 * a->d, a->d * 8), "row 3");
    free(o), free(scr);
    dpc_scatter_free(s);
    /* corrupt the cached features: detected by the content hash, recomputed */
    char cmd[256];
    snprintf(cmd, sizeof cmd, "f=$(ls %s/*.bin) && printf 'XXXXXXXX' | dd of=$f bs=1 seek=200 "
             "conv=notrunc 2>/dev/null", cache);
    CHECK(system(cmd) == 0, "corrupt");
    dpc_dataset_free(b);
    b = NULL;
    CHECK_OK(dpc_features_apply(&b, in, &cfg, cache, 1, &hit, &err), &err);
    CHECK(b && hit == 0 && !memcmp(a->x, b->x, n * a->d * 8), "corrupted cache recomputed");
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0, "cleanup");
    in->shape[0] = 0;
    dpc_dataset_free(c);
    c = NULL;
    CHECK(dpc_features_apply(&c, in, &cfg, NULL, 1, NULL, &err) == DPC_E_INVALID && !c,
          "a dataset without an image shape is refused");
    dpc_dataset_free(in), dpc_dataset_free(a), dpc_dataset_free(b);
}

int main(void)
{
    test_fft();
    test_oracle();
    test_spec();
    test_dataset();
    return TEST_SUMMARY();
}
