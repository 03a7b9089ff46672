/* test_release.c — one release formula for every front end (dpc_noise_release,
 * dpc_model_clip_factors): the kernel against the formula written out, its refusals, and the
 * C trainer and the privatizer producing bit-identical updates for the same clipped sums and
 * keys (dpcorr.torch's half is python/tests/test_torch_release.py). */
#include "dpcorr.h"
#include "harness.h"

#include <math.h>
#include <stdlib.h>

#define N 300
#define D 7
#define B 24 /* one chunk of the trainer (32): its sum is one dpc_model_clipped_sum */

static void test_kernel(void)
{
    double g[5] = {0.1, -2.5, 3e-300, 7.0, -0.0}, z[5] = {1.5, 0.25, -1e300, 1e-10, 2.0};
    double out[5], al[5];
    dpc_error e = {0};
    CHECK_OK(dpc_noise_release(g, z, 5, 1.7, 1.0 / 24, out, &e), &e);
    for (int p = 0; p < 5; p++) {
        volatile double s = 1.7 * z[p], t = g[p] + s, h = t * (1.0 / 24);
        CHECK(out[p] == h || (isnan(out[p]) && isnan(h)), "coordinate %d: %.17g vs %.17g", p,
              out[p], (double)h);
    }
    memcpy(al, z, sizeof al); /* release in place of the noise (the trainer's use) */
    CHECK_OK(dpc_noise_release(g, al, 5, 1.7, 1.0 / 24, al, &e), &e);
    CHECK(!memcmp(al, out, sizeof al), "aliasing z gives the same bits");
    CHECK(dpc_noise_release(g, z, 5, NAN, 1, out, &e) == DPC_E_INVALID &&
              !strcmp(e.field, "noise_scale"), "NaN scale refused: %s", e.msg);
    CHECK(dpc_noise_release(g, z, 5, -1, 1, out, &e) == DPC_E_INVALID, "negative scale refused");
    CHECK(dpc_noise_release(g, z, 5, 1, 0, out, &e) == DPC_E_INVALID && !strcmp(e.field, "inv_b"),
          "inv_b 0 refused: %s", e.msg);
    CHECK(dpc_noise_release(g, NULL, 5, 1, 1, out, &e) == DPC_E_INVALID && !strcmp(e.field, "z"),
          "NULL z refused");
    CHECK_OK(dpc_noise_release(NULL, NULL, 0, 1, 1, NULL, &e), &e);
    /* a non-finite clipped sum: refused naming it, before anything is written (the trainer's
     * release aliases the noise row) */
    double bad[3] = {1.0, NAN, 2.0}, inf[3] = {INFINITY, 0.0, 0.0}, row[3] = {0.5, 0.25, 0.125};
    double keep[3];
    memcpy(keep, row, sizeof keep);
    dpc_status st = dpc_noise_release(bad, row, 3, 1.0, 0.5, row, &e);
    CHECK(st == DPC_E_INVALID && !strcmp(e.field, "clipped_sum") && strstr(e.msg, "coordinate 1"),
          "NaN in the sum refused naming clipped_sum and the coordinate: %d %s", (int)st, e.msg);
    CHECK(!memcmp(row, keep, sizeof row), "a refused release writes nothing");
    st = dpc_noise_release(inf, row, 3, 1.0, 0.5, out, &e);
    CHECK(st == DPC_E_INVALID && !strcmp(e.field, "clipped_sum"), "inf in the sum refused: %s",
          e.msg);
    float badf[2] = {0.0f, -INFINITY}, of2[2] = {7.0f, 7.0f};
    st = dpc_noise_release_f32(badf, row, 2, 1.0, 0.5f, of2, &e);
    CHECK(st == DPC_E_INVALID && !strcmp(e.field, "clipped_sum") && of2[0] == 7.0f,
          "f32: -inf in the sum refused, nothing written: %s", e.msg);
    float gf[3] = {0.5f, -1.25f, 3.0f}, of[3];
    double zf[3] = {0.1, 0.2, -0.3};
    CHECK_OK(dpc_noise_release_f32(gf, zf, 3, 2.5, 0.125f, of, &e), &e);
    for (int p = 0; p < 3; p++) {
        volatile float w = (float)(2.5 * zf[p]), t = gf[p] + w, h = t * 0.125f;
        CHECK(of[p] == h, "f32 coordinate %d", p);
    }
    double nr[4] = {0.0, 0.7, 0.7000000001, 9.0}, f[4];
    dpc_model_clip_factors(nr, 4, 0.7, f);
    CHECK(f[0] == 1 && f[1] == 1 && f[2] == 0.7 / 0.7000000001 && f[3] == 0.7 / 9.0,
          "clip factors: %.17g %.17g %.17g %.17g", f[0], f[1], f[2], f[3]);
}

/* STEPS steps of the C trainer (no momentum or weight decay: params_{t+1} = params_t - lr_t
 * release_t) and of the privatizer on the clipped sum the trainer's model computes at params_t
 * for the same batch: the two releases are the same bits at every step (same key: the same
 * batches and the same noise rows). */
#define STEPS 4
static void test_trainer_is_the_privatizer(dpc_mech_kind kind, const char *what)
{
    dpc_error e = {0};
    dpc_dataset *ds = NULL;
    dpc_model *m = NULL;
    dpc_model_ws *ws = NULL;
    dpc_trainer *tr = NULL;
    dpc_privatizer *pv = NULL;
    dpc_model_config mc;
    double *p0 = NULL, *X = NULL, *y = NULL, *sum = NULL, *h = NULL, *ls = NULL, *nr = NULL;
    size_t *idx = NULL;
    if (dpc_dataset_new(&ds, N, D, 0, &e) || dpc_model_parse(&mc, "linear", D, 0, &e) ||
        dpc_model_new(&m, &mc, &e) || dpc_model_ws_new(&ws, m, 32, &e)) {
        CHECK(0, "%s: setup: %s", what, e.msg);
        goto done;
    }
    for (size_t i = 0; i < (size_t)N * D; i++) ds->x[i] = sin(0.37 * (double)i);
    for (size_t i = 0; i < N; i++) ds->y[i] = cos(1.3 * (double)i) * 3.0;
    dpc_rng rng;
    dpc_rng_seed(&rng, 77);
    dpc_train_config tc;
    dpc_train_config_init(&tc);
    tc.mech.kind = kind;
    if (kind == DPC_MECH_NU) tc.mech.nu = 0.05;
    tc.batch = B;
    tc.epochs = 1;
    tc.noise_multiplier = 1.3;
    tc.clip = 0.4;
    tc.lr = 1.0;
    tc.sampler = DPC_SAMPLER_FIXED;
    tc.workload_explicit = 1; /* the privatizer takes the workload as given */
    dpc_privatize_config pc;
    dpc_privatize_config_init(&pc);
    pc.dim = D + 1;
    pc.n_examples = N;
    pc.batch = B;
    pc.epochs = 1;
    pc.noise_multiplier = 1.3;
    pc.clip = 0.4;
    pc.mech = tc.mech;
    pc.sampler = DPC_SAMPLER_FIXED;
    if (dpc_trainer_new(&tr, m, ds, NULL, &tc, &rng, &e) ||
        dpc_privatize_new(&pv, &pc, &rng, &e)) {
        CHECK(0, "%s: trainer/privatizer: %s", what, e.msg);
        goto done;
    }
    size_t P = D + 1, cap = dpc_privatize_max_batch(pv), M = 0;
    p0 = malloc(P * sizeof *p0), sum = calloc(P, sizeof *sum), h = malloc(P * sizeof *h);
    idx = malloc(cap * sizeof *idx), X = malloc(cap * D * sizeof *X), y = malloc(cap * sizeof *y);
    ls = malloc(cap * sizeof *ls), nr = malloc(cap * sizeof *nr);
    CHECK(dpc_privatize_noise_scale(pv) > 0, "%s: a noise scale", what);
    for (size_t t = 0; t < STEPS; t++) {
        memcpy(p0, dpc_trainer_params(tr), P * sizeof *p0);
        CHECK_OK(dpc_privatize_batch(pv, idx, &M, &e), &e);
        CHECK(M == B, "%s: fixed batch of %d, got %zu", what, B, M);
        for (size_t i = 0; i < M && i < cap; i++) {
            memcpy(X + i * D, ds->x + idx[i] * D, D * sizeof *X);
            y[i] = ds->y[idx[i]];
        }
        memset(sum, 0, P * sizeof *sum);
        CHECK_OK(dpc_model_clipped_sum(m, p0, X, y, M, 0.4, sum, ls, nr, ws, &e), &e);
        CHECK_OK(dpc_privatize_step(pv, sum, h, &e), &e);
        dpc_step_info info;
        CHECK_OK(dpc_trainer_step(tr, &info, &e), &e);
        const double *p1 = dpc_trainer_params(tr);
        size_t same = 0, moved = 0;
        for (size_t p = 0; p < P; p++) {
            double want = p0[p] - info.lr * h[p]; /* the trainer's th - lr v, v = release */
            same += !memcmp(&want, &p1[p], sizeof want);
            moved += p1[p] != p0[p];
        }
        CHECK(same == P && moved == P, "%s, step %zu: %zu of %zu coordinates bit-identical "
              "(%zu moved)", what, t, same, P, moved);
    }
done:
    free(p0), free(sum), free(h), free(idx), free(X), free(y), free(ls), free(nr);
    dpc_privatize_free(pv);
    dpc_trainer_free(tr);
    dpc_model_ws_free(ws);
    dpc_model_free(m);
    dpc_dataset_free(ds);
}

int main(void)
{
    test_kernel();
    test_trainer_is_the_privatizer(DPC_MECH_BLT, "default BLT");
    test_trainer_is_the_privatizer(DPC_MECH_NU, "nu-DP-FTRL");
    test_trainer_is_the_privatizer(DPC_MECH_IDENTITY, "DP-SGD");
    return TEST_SUMMARY();
}
