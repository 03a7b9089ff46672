/* test_features.c — the scattering transform against a direct spatial-domain computation
 * (tests/gen/scatter_oracle.py), its mixed-radix FFT against a naive DFT, the --features spec,
 * dataset transforms (shape, labels, thread-count invariance) and the cache (miss, hit,
 * corrupted file recomputed). */
#include "dpcorr/abi.h"
#include "dpcorr/features.h"
#include "features/fft2d.h"
#include "harness.h"
#include "scatter_oracles.h"

#include <math.h>
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
    CHECK_OK(dpc_features_parse(&c, "scatter:J=2,L=8,gn=27,center=12.5", &err), &err);
    CHECK(c.groups == 27 && c.center == 12.5, "gn, center");
    dpc_features_format(&c, buf, sizeof buf);
    CHECK(!strcmp(buf, "scatter:J=2,L=8,gn=27,center=12.5"), "format %s", buf);
    CHECK_OK(dpc_features_parse(&c, "scatter:gn=9", &err), &err);
    CHECK(c.groups == 9 && c.center == 0 && c.J == 2, "gn only");
    const char *bad[] = {"scat", "scatter:J=0", "scatter:K=2", "scatter:J=2,L=99", "scatter:J=x",
                         "scatter:center=10", "scatter:gn=0", "scatter:gn=-3",
                         "scatter:gn=27,center=0", "scatter:gn=27,center=-1",
                         "scatter:gn=27,center=nan", "scatter:gn=27,center=1e9",
                         "scatter:gn=27,"};
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
    dpc_features_config cfg = {DPC_FEATURES_SCATTER, 2, 4, 0, 0.0};
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

/* GroupNorm against its definition (two-pass mean and variance per group, written out here),
 * the norm bound it guarantees, and its refusals. */
static void test_group_norm(void)
{
    dpc_error err = {0};
    dpc_dataset *ds = NULL;
    size_t n = 4, C = 6, HW = 5, G = 3, m = C / G * HW;
    CHECK_OK(dpc_dataset_new(&ds, n, C * HW, 2, &err), &err);
    ds->shape[0] = C, ds->shape[1] = 1, ds->shape[2] = HW;
    for (size_t i = 0; i < n * C * HW; i++) ds->x[i] = cos(1.3 * i) * (1.0 + (i % 7));
    for (size_t k = 0; k < m; k++) ds->x[2 * C * HW + k] = 0.25; /* a constant group: var 0 */
    double *ref = malloc(n * C * HW * sizeof *ref);
    for (size_t i = 0; i < n; i++)
        for (size_t g = 0; g < G; g++) {
            const double *v = ds->x + i * C * HW + g * m;
            double mean = 0, var = 0;
            for (size_t k = 0; k < m; k++) mean += v[k] / m;
            for (size_t k = 0; k < m; k++) var += (v[k] - mean) * (v[k] - mean) / m;
            for (size_t k = 0; k < m; k++)
                ref[i * C * HW + g * m + k] = (v[k] - mean) / sqrt(var + 1e-5);
        }
    CHECK_OK(dpc_features_group_norm(ds, G, &err), &err);
    double md = 0;
    for (size_t i = 0; i < n * C * HW; i++)
        if (fabs(ds->x[i] - ref[i]) > md) md = fabs(ds->x[i] - ref[i]);
    CHECK(md < 1e-12, "GroupNorm differs from its definition by %g", md);
    CHECK(ds->x_norm_bound == sqrt((double)(C * HW)), "bound %g", ds->x_norm_bound);
    for (size_t i = 0; i < n; i++) {
        double s = 0;
        for (size_t k = 0; k < C * HW; k++) s += ds->x[i * C * HW + k] * ds->x[i * C * HW + k];
        CHECK(sqrt(s) <= ds->x_norm_bound, "row %zu norm %.17g above the bound", i, sqrt(s));
    }
    CHECK(ds->x[2 * C * HW] == 0.0, "a constant group maps to 0");
    CHECK(strstr(ds->preprocessing, "GroupNorm, 3 groups") != NULL, "logged: %s",
          ds->preprocessing);
    CHECK(dpc_features_group_norm(ds, 4, &err) == DPC_E_INVALID && !strcmp(err.field, "groups"),
          "4 groups of 6 channels accepted");
    ds->shape[0] = 0;
    CHECK(dpc_features_group_norm(ds, 3, &err) == DPC_E_INVALID, "no shape accepted");
    free(ref);
    dpc_dataset_free(ds);
}

/* The private mean: the released value is (sum + z R g) / n with g the documented stream's
 * Gaussians (recomputed here), the sum's sensitivity is within R for every removed or zeroed
 * row (brute force), the noise is N(0, (z R / n)^2) per coordinate (Monte Carlo over
 * coordinates), and the release is recorded for the trainer. */
static void test_center_private(void)
{
    dpc_error err = {0};
    dpc_dataset *tr = NULL, *te = NULL, *nb = NULL;
    size_t n = 6, d = 4000;
    CHECK_OK(dpc_dataset_new(&tr, n, d, 2, &err), &err);
    CHECK_OK(dpc_dataset_new(&te, 2, d, 2, &err), &err);
    for (size_t i = 0; i < n * d; i++) tr->x[i] = 0.02 * sin(0.7 * i) + 0.01;
    for (size_t i = 0; i < 2 * d; i++) te->x[i] = 0.5;
    double R = 0;
    for (size_t i = 0; i < n; i++) {
        double s = 0;
        for (size_t k = 0; k < d; k++) s += tr->x[i * d + k] * tr->x[i * d + k];
        if (sqrt(s) > R) R = sqrt(s);
    }
    tr->x_norm_bound = R;
    double *x0 = malloc(n * d * sizeof *x0), *mu = malloc(d * sizeof *mu);
    double *mu2 = malloc(d * sizeof *mu2);
    memcpy(x0, tr->x, n * d * sizeof *x0);
    dpc_rng rng;
    dpc_rng_seed(&rng, 77);
    double z = 3.0;
    CHECK(dpc_features_center_private(tr, te, z, &rng, mu, &err) == DPC_OK, "%s", err.msg);
    dpc_rng_stream st = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_STAT, 0));
    double md = 0, m1 = 0, m2 = 0;
    for (size_t k = 0; k < d; k++) {
        double sum = 0;
        for (size_t i = 0; i < n; i++) sum += x0[i * d + k];
        double g = dpc_rng_gaussian(&st, 0, k);
        double want = (sum + z * R * g) / n;
        if (fabs(mu[k] - want) > md) md = fabs(mu[k] - want);
        double e = (mu[k] * n - sum) / (z * R); /* the noise in units of its std */
        m1 += e / d, m2 += e * e / d;
    }
    CHECK(md < 1e-15, "released mean differs from (sum + z R g) / n by %g", md);
    CHECK(fabs(m1) < 4 / sqrt((double)d) && fabs(m2 - 1) < 0.1, "noise mean %g, var %g", m1, m2);
    CHECK(tr->x[5] == x0[5] - mu[5] && te->x[d + 7] == 0.5 - mu[7], "rows centred by mu");
    CHECK(tr->n_releases == 1 && tr->release_z[0] == z && te->n_releases == 0, "recorded");
    CHECK(tr->x_norm_bound == 0 && strstr(tr->preprocessing, "private mean"), "bound, log");
    /* sensitivity: a neighbour without row r (or with row r zeroed) releases, with the same
     * noise, a sum that differs by x_r: within R = the noise's scale, for every r */
    for (size_t r = 0; r < n; r++) {
        CHECK_OK(dpc_dataset_new(&nb, n, d, 2, &err), &err);
        memcpy(nb->x, x0, n * d * sizeof *x0);
        memset(nb->x + r * d, 0, d * sizeof *nb->x);
        nb->x_norm_bound = R;
        CHECK_OK(dpc_features_center_private(nb, NULL, z, &rng, mu2, &err), &err);
        double s = 0;
        for (size_t k = 0; k < d; k++) s += (mu[k] - mu2[k]) * n * (mu[k] - mu2[k]) * n;
        CHECK(sqrt(s) <= R * (1 + 1e-12), "row %zu moves the sum by %g > R = %g", r, sqrt(s), R);
        dpc_dataset_free(nb);
        nb = NULL;
    }
    /* refusals: no bound, bad z, a test set of another width, the release list full */
    CHECK(dpc_features_center_private(tr, NULL, z, &rng, NULL, &err) == DPC_E_INVALID &&
          !strcmp(err.field, "train"), "no bound accepted");
    tr->x_norm_bound = 1;
    CHECK(dpc_features_center_private(tr, NULL, 0.0, &rng, NULL, &err) == DPC_E_INVALID &&
          !strcmp(err.field, "noise_multiplier"), "z = 0 accepted");
    CHECK(dpc_features_center_private(tr, NULL, NAN, &rng, NULL, &err) == DPC_E_INVALID,
          "z = NaN accepted");
    tr->n_releases = DPC_DATA_MAX_RELEASES;
    CHECK(dpc_features_center_private(tr, NULL, z, &rng, NULL, &err) == DPC_E_RANGE,
          "a full release list accepted");
    tr->n_releases = 1;
    dpc_dataset *w = NULL;
    CHECK_OK(dpc_dataset_new(&w, 1, d + 1, 2, &err), &err);
    CHECK(dpc_features_center_private(tr, w, z, &rng, NULL, &err) == DPC_E_INVALID &&
          !strcmp(err.field, "test"), "a test set of another width accepted");
    dpc_dataset_free(w);
    /* the releases travel with copies */
    dpc_dataset *cp = NULL;
    size_t idx[2] = {0, 3};
    CHECK_OK(dpc_dataset_select(&cp, tr, idx, 2, &err), &err);
    CHECK(cp->n_releases == 1 && cp->release_z[0] == z, "select keeps the releases");
    dpc_dataset_free(cp);
    free(x0), free(mu), free(mu2);
    dpc_dataset_free(tr), dpc_dataset_free(te);
}

/* The field table covers dpc_features_config; its defaults are the spec's (none, J = 2, L = 8,
 * no GroupNorm, no centering: the literal dpc_features_parse started from before the table);
 * dpc_features_apply refuses an out-of-range field naming it. */
static void test_field_table(void)
{
    dpc_error err = {0};
    const dpc_field_table *t = dpc_features_config_fields();
    CHECK(t && t->size == sizeof(dpc_features_config) && t->count == 5, "table of the struct");
    CHECK_OK(dpc_field_table_verify(t, &err), &err);
    CHECK(t->size == dpc_abi_sizeof("dpc_features_config"), "the table's size is the ABI's");
    dpc_features_config d, old = {DPC_FEATURES_NONE, 2, 8, 0, 0.0}, p;
    memset(&d, 0x5a, sizeof d);
    dpc_field_defaults(t, &d);
    CHECK(d.kind == old.kind && d.J == old.J && d.L == old.L && d.groups == old.groups &&
              d.center == old.center, "defaults are the old spec defaults");
    CHECK_OK(dpc_features_parse(&p, "none", &err), &err);
    CHECK(p.kind == d.kind && p.J == d.J && p.L == d.L && p.groups == 0 && p.center == 0,
          "parse('none') = the defaults");
    CHECK_OK(dpc_features_parse(&p, "scatter", &err), &err);
    CHECK(p.kind == DPC_FEATURES_SCATTER && p.J == d.J && p.L == d.L, "scatter's J, L defaults");
    CHECK(!strcmp(dpc_field_enum_name(dpc_field_find(t, "kind", NULL), 1), "scatter"), "names");
    CHECK(dpc_field_find(t, "J", NULL)->hi == DPC_SCATTER_MAX_J &&
              dpc_field_find(t, "L", NULL)->hi == DPC_SCATTER_MAX_L, "J, L bounds");
    CHECK(dpc_features_parse(&p, "scatter:J=5", &err) == DPC_E_INVALID &&
              strstr(err.msg, "J <= 4 and L <= 16"), "the spec's message: '%s'", err.msg);
    dpc_dataset *in = NULL, *out = NULL;
    CHECK_OK(dpc_dataset_new(&in, 4, 64, 2, &err), &err);
    if (!in) return;
    in->shape[0] = 1, in->shape[1] = 8, in->shape[2] = 8;
    struct { const char *field; double v; } bad[] = {
        {"J", 0}, {"J", 5}, {"L", 17}, {"groups", 4097}, {"center", -1}, {"center", NAN},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dpc_features_config c = d;
        c.kind = DPC_FEATURES_SCATTER;
        CHECK_OK(dpc_field_set(dpc_field_find(t, bad[i].field, NULL), &c, bad[i].v, &err), &err);
        CHECK(dpc_features_apply(&out, in, &c, NULL, 1, NULL, &err) == DPC_E_INVALID && !out &&
                  !strcmp(err.field, bad[i].field), "%s = %g refused: '%s'", bad[i].field,
              bad[i].v, err.msg);
    }
    dpc_dataset_free(in);
}

int main(void)
{
    test_field_table();
    test_fft();
    test_oracle();
    test_spec();
    test_dataset();
    test_group_norm();
    test_center_private();
    return TEST_SUMMARY();
}
