/* test_cnn.c — the cnn model kind: losses and per-example gradients against PyTorch
 * (tests/gen/cnn_oracle.py), central finite differences over every parameter, the fast chunk
 * path against its naive twin (losses and per-example gradients bit for bit, norms and clipped
 * sums to rounding, ghost and direct norms), chunking invariance, the spec grammar (Tramer &
 * Boneh's CNNs, parameter counts, round trip, errors) and workspace checks. */
#include "dpcorr/model.h"
#include "dpcorr/train.h"
#include "harness.h"
#include "cnn_oracles.h"

static double *dalloc(size_t n)
{
    double *p = calloc(n ? n : 1, sizeof *p);
    if (!p) exit(1);
    return p;
}

static dpc_model *make(const char *spec, size_t n_in, size_t K)
{
    dpc_model_config c;
    dpc_model *m = NULL;
    dpc_error err = {0};
    if (dpc_model_parse(&c, spec, n_in, K, &err) || dpc_model_new(&m, &c, &err)) {
        fprintf(stderr, "make %s: %s\n", spec, err.msg);
        exit(1);
    }
    return m;
}

static void fill(double *v, size_t n, uint64_t seed, double lo, double hi)
{
    dpc_rng rng;
    dpc_rng_seed(&rng, seed);
    dpc_rng_stream s = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_TEST, 3));
    for (size_t i = 0; i < n; i++) v[i] = lo + (hi - lo) * dpc_rng_uniform(&s, 0, i);
}

static void test_oracle(void)
{
    dpc_model *m = make(CNN_ORACLE_SPEC, CNN_ORACLE_D, CNN_ORACLE_K);
    size_t P = dpc_model_num_params(m);
    CHECK(P == CNN_ORACLE_P, "P = %zu, oracle %d", P, CNN_ORACLE_P);
    double *g = dalloc(P), *G = dalloc(CNN_ORACLE_N * P), losses[CNN_ORACLE_N];
    dpc_error err = {0};
    for (size_t n = 0; n < CNN_ORACLE_N; n++) {
        double loss;
        CHECK_OK(dpc_model_loss_grad(m, cnn_oracle_params, cnn_oracle_x + n * CNN_ORACLE_D,
                                     cnn_oracle_y[n], &loss, g, &err), &err);
        CHECK_NEAR_REL(loss, cnn_oracle_loss[n], 1e-12, "loss %zu", n);
        double worst = 0;
        for (size_t p = 0; p < P; p++) {
            double d = fabs(g[p] - cnn_oracle_grad[n * P + p]);
            if (d > worst) worst = d;
        }
        CHECK(worst < 1e-12, "example %zu: max |grad - torch| = %g", n, worst);
    }
    for (int mode = 0; mode < 3; mode++) {
        dpc_model_config c = *dpc_model_get_config(m);
        c.conv_norm = (dpc_conv_norm)mode;
        dpc_model *mm = NULL;
        CHECK_OK(dpc_model_new(&mm, &c, &err), &err);
        CHECK_OK(dpc_model_per_example_grads(mm, cnn_oracle_params, cnn_oracle_x, cnn_oracle_y,
                                             CNN_ORACLE_N, G, losses, NULL, &err), &err);
        double worst = 0;
        for (size_t p = 0; p < CNN_ORACLE_N * P; p++) {
            double d = fabs(G[p] - cnn_oracle_grad[p]);
            if (d > worst) worst = d;
        }
        CHECK(worst < 1e-12, "fast path (norm mode %d): max |grad - torch| = %g", mode, worst);
        CHECK_NEAR_REL(losses[1], cnn_oracle_loss[1], 1e-12, "fast loss");
        dpc_model_free(mm);
    }
    free(g);
    free(G);
    dpc_model_free(m);
}

/* Central differences of the naive loss against its gradient, every parameter. */
static void fd_check(const char *spec, size_t n_in, size_t K, uint64_t seed)
{
    dpc_model *m = make(spec, n_in, K);
    size_t P = dpc_model_num_params(m);
    double *w = dalloc(P), *g = dalloc(P), *g2 = dalloc(P), *x = dalloc(n_in), loss, lp, lm;
    dpc_rng rng;
    dpc_rng_seed(&rng, seed);
    dpc_error err = {0};
    CHECK_OK(dpc_model_init(m, w, &rng, 0, &err), &err);
    fill(g2, P, seed + 1, -0.1, 0.1);
    for (size_t p = 0; p < P; p++) w[p] += g2[p]; /* nonzero biases, gamma != 1 */
    fill(x, n_in, seed + 2, -1, 1);
    double y = (double)(seed % K);
    CHECK_OK(dpc_model_loss_grad(m, w, x, y, &loss, g, &err), &err);
    size_t bad = 0;
    double h = 1e-6;
    for (size_t p = 0; p < P; p++) {
        double w0 = w[p];
        w[p] = w0 + h;
        CHECK_OK(dpc_model_loss_grad(m, w, x, y, &lp, g2, &err), &err);
        w[p] = w0 - h;
        CHECK_OK(dpc_model_loss_grad(m, w, x, y, &lm, g2, &err), &err);
        w[p] = w0;
        double fd = (lp - lm) / (2 * h);
        if (fabs(fd - g[p]) > 1e-6 * (1 + fabs(g[p]))) {
            if (bad++ < 3)
                fprintf(stderr, "%s: param %zu: fd %.10g grad %.10g\n", spec, p, fd, g[p]);
        }
    }
    CHECK(bad == 0, "%s: %zu of %zu parameters fail the finite-difference check", spec, bad, P);
    free(w);
    free(g);
    free(g2);
    free(x);
    dpc_model_free(m);
}

static void test_fd(void)
{
    fd_check(CNN_ORACLE_SPEC, CNN_ORACLE_D, 3, 11);
    fd_check("cnn:conv3k3p1,tanh,avgpool2,gn3n,conv2k2s2,relu,flatten,fc4,relu:in=1x8x8", 64, 4,
             12);
    fd_check("cnn:gn3,maxpool3s2,conv5k1,tanh:in=6x7x5:nobias", 210, 2, 13);
    fd_check("cnn", 5, 3, 14); /* softmax regression as a cnn */
    fd_check("cnn:conv2k3,tanh:in=1x5x5", 25, 1, 15); /* squared-loss head */
}

/* The fast path against the naive one, in every norm mode, and chunking invariance. */
static void parity(const char *spec, size_t n_in, size_t K, size_t M, uint64_t seed)
{
    dpc_error err = {0};
    for (int mode = 0; mode < 3; mode++) {
        dpc_model_config c;
        CHECK_OK(dpc_model_parse(&c, spec, n_in, K, &err), &err);
        c.conv_norm = (dpc_conv_norm)mode;
        dpc_model *m = NULL;
        CHECK_OK(dpc_model_new(&m, &c, &err), &err);
        size_t P = dpc_model_num_params(m);
        double *w = dalloc(P), *X = dalloc(M * n_in), *y = dalloc(M), *G = dalloc(M * P);
        double *g = dalloc(P), *S = dalloc(P), *Sn = dalloc(P), *lf = dalloc(M), *nf = dalloc(M);
        double *ln = dalloc(M), *nn = dalloc(M), *nc = dalloc(M);
        dpc_rng rng;
        dpc_rng_seed(&rng, seed);
        CHECK_OK(dpc_model_init(m, w, &rng, 0, &err), &err);
        fill(X, M * n_in, seed + 5, 0, 1);
        for (size_t i = 0; i < M; i++) y[i] = (double)(i % (K >= 2 ? K : 1));
        if (K < 2)
            for (size_t i = 0; i < M; i++) y[i] = 0.3 * (double)i;
        CHECK_OK(dpc_model_per_example_grads(m, w, X, y, M, G, lf, NULL, &err), &err);
        for (size_t i = 0; i < M; i++) {
            double loss;
            CHECK_OK(dpc_model_loss_grad(m, w, X + i * n_in, y[i], &loss, g, &err), &err);
            CHECK(memcmp(&loss, &lf[i], sizeof loss) == 0, "%s: loss %zu not bit-identical", spec, i);
            CHECK(memcmp(g, G + i * P, P * sizeof *g) == 0,
                  "%s (mode %d): per-example gradient %zu not bit-identical", spec, mode, i);
        }
        double clip = 0.5;
        CHECK_OK(dpc_model_clipped_sum(m, w, X, y, M, clip, S, lf, nf, NULL, &err), &err);
        CHECK_OK(dpc_model_clipped_sum_naive(m, w, X, y, M, clip, Sn, ln, nn, &err), &err);
        double scale = 0;
        for (size_t p = 0; p < P; p++) scale = fabs(Sn[p]) > scale ? fabs(Sn[p]) : scale;
        size_t bad = 0;
        for (size_t p = 0; p < P; p++) bad += !(fabs(S[p] - Sn[p]) <= 1e-12 * scale);
        CHECK(bad == 0, "%s (mode %d): %zu clipped-sum entries differ from naive", spec, mode, bad);
        for (size_t i = 0; i < M; i++) CHECK_NEAR_REL(nf[i], nn[i], 1e-12, "%s norm %zu", spec, i);
        /* chunks of 1 and 3: identical norms and losses */
        for (size_t ch = 1; ch <= 3; ch += 2) {
            dpc_model_ws *ws = NULL;
            CHECK_OK(dpc_model_ws_new(&ws, m, ch, &err), &err);
            for (size_t i0 = 0; i0 < M; i0 += ch) {
                size_t k = M - i0 < ch ? M - i0 : ch;
                CHECK_OK(dpc_model_clipped_sum(m, w, X + i0 * n_in, y + i0, k, clip, Sn, ln + i0,
                                               nc + i0, ws, &err), &err);
            }
            CHECK(memcmp(nc, nf, M * sizeof *nc) == 0 && memcmp(ln, lf, M * sizeof *ln) == 0,
                  "%s: norms or losses depend on the chunk size %zu", spec, ch);
            dpc_model_ws_free(ws);
        }
        free(w), free(X), free(y), free(G), free(g), free(S), free(Sn), free(lf), free(nf);
        free(ln), free(nn), free(nc);
        dpc_model_free(m);
    }
}

static void test_parity(void)
{
    parity(CNN_ORACLE_SPEC, CNN_ORACLE_D, 3, 7, 21);
    parity("cnn:conv5k3s2,tanh,conv7k2p1,relu,maxpool2,fc6,tanh:in=3x11x9", 297, 10, 5, 22);
    parity("cnn:gn9n:in=9x3x3", 81, 4, 6, 23);
    parity("cnn:conv2k3,tanh:in=1x5x5:nobias", 25, 1, 4, 24);
}

static void test_spec(void)
{
    dpc_error err = {0};
    dpc_model_config c, c2;
    /* Tramer & Boneh (2021): the Fashion-MNIST CNN (26 010 parameters) and the CNN on
     * ScatterNet features (81 x 7 x 7, GroupNorm without affine parameters) */
    const char *tb = "cnn:conv16k8s2p2,tanh,maxpool2s1,conv32k4s2,tanh,maxpool2s1,fc32,tanh";
    dpc_model *m = make(tb, 784, 10);
    CHECK(dpc_model_num_params(m) == 26010, "T&B CNN: P = %zu", dpc_model_num_params(m));
    CHECK(dpc_model_get_config(m)->in_shape[1] == 28, "784 = 1 x 28 x 28");
    dpc_model_free(m);
    size_t shape[3] = {81, 7, 7};
    CHECK_OK(dpc_model_parse_shape(&c, "cnn:gn27n,conv16k3s2p1,tanh,conv32k3p1,tanh,fc32,tanh",
                                   3969, shape, 10, &err), &err);
    CHECK_OK(dpc_model_new(&m, &c, &err), &err);
    CHECK(dpc_model_num_params(m) == 33066, "T&B ScatterNet CNN: P = %zu", dpc_model_num_params(m));
    char buf[DPC_MODEL_SPEC_LEN];
    dpc_model_format_spec(&c, buf, sizeof buf);
    CHECK(!strcmp(buf, "cnn:gn27n,conv16k3s2p1,tanh,conv32k3p1,tanh,fc32,tanh:in=81x7x7"),
          "format: %s", buf);
    CHECK_OK(dpc_model_parse(&c2, buf, 3969, 10, &err), &err);
    CHECK(memcmp(c.layers, c2.layers, sizeof c.layers) == 0 &&
              memcmp(c.in_shape, c2.in_shape, sizeof c.in_shape) == 0,
          "round trip of %s", buf);
    const dpc_model_tensor *t = dpc_model_tensor_at(m, 0);
    CHECK(t && !strcmp(t->name, "W1") && t->rows == 16 && t->cols == 729, "first tensor W1");
    dpc_model_free(m);
    /* ScatterNet + linear: GroupNorm then the output layer */
    CHECK_OK(dpc_model_parse_shape(&c, "cnn:gn81n", 3969, shape, 10, &err), &err);
    CHECK_OK(dpc_model_new(&m, &c, &err), &err);
    CHECK(dpc_model_num_params(m) == 39700, "ScatterNet linear: P = %zu", dpc_model_num_params(m));
    /* a workspace of another cnn is refused */
    dpc_model *m2 = make("cnn:gn27n:in=81x7x7", 3969, 10);
    dpc_model_ws *ws = NULL;
    CHECK_OK(dpc_model_ws_new(&ws, m2, 4, &err), &err);
    double *w = dalloc(dpc_model_num_params(m)), *X = dalloc(3969), yy = 0, S[1];
    CHECK(dpc_model_clipped_sum(m, w, X, &yy, 1, 1.0, w, NULL, NULL, ws, &err) == DPC_E_INVALID,
          "foreign workspace accepted");
    (void)S;
    dpc_model_ws_free(ws);
    dpc_model_free(m2);
    dpc_model_free(m);
    free(w);
    free(X);
    const char *bad[] = {"cnn:conv16", "cnn:conv0k3", "cnn:gn5", "cnn:conv4k29", "cnn:conv4k3p3",
                         "cnn:maxpool2s0", "cnn:foo", "cnn:fc8:in=2x2x2", "cnn:tanh:norm=x",
                         "cnn:conv2k2:in=1x28"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK(dpc_model_parse(&c, bad[i], 784, 10, &err) == DPC_E_INVALID,
              "'%s' accepted", bad[i]);
    /* initialisation: gamma = 1, beta = 0 */
    m = make("cnn:gn2,conv3k2:in=4x3x3", 36, 2);
    w = dalloc(dpc_model_num_params(m));
    dpc_rng rng;
    dpc_rng_seed(&rng, 3);
    CHECK_OK(dpc_model_init(m, w, &rng, 0, &err), &err);
    CHECK(w[0] == 1.0 && w[3] == 1.0 && w[4] == 0.0 && w[8] != 0.0, "gn init");
    free(w);
    dpc_model_free(m);
}

/* The trainer on a cnn: 1 and 2 threads give bit-identical parameters (chunk-order reduction),
 * with DP-SGD and with BSR noise. */
static void test_threads(void)
{
    dpc_error err = {0};
    dpc_dataset *ds = NULL;
    size_t n = 120, d = 36;
    CHECK_OK(dpc_dataset_new(&ds, n, d, 3, &err), &err);
    fill(ds->x, n * d, 41, 0, 1);
    for (size_t i = 0; i < n; i++) ds->y[i] = (double)(i % 3);
    ds->shape[0] = 1, ds->shape[1] = ds->shape[2] = 6;
    dpc_model_config c;
    dpc_model *m = NULL;
    CHECK_OK(dpc_model_parse_shape(&c, "cnn:conv3k3,tanh,maxpool2,gn3,fc4,relu", d, ds->shape, 3,
                                   &err), &err);
    CHECK_OK(dpc_model_new(&m, &c, &err), &err);
    for (int bsr = 0; bsr < 2; bsr++) {
        uint64_t h[2];
        for (size_t T = 1; T <= 2; T++) {
            dpc_train_config tc;
            dpc_train_config_init(&tc);
            tc.batch = 20, tc.epochs = 2, tc.noise_multiplier = 1.0, tc.lr = 0.3, tc.momentum = 0.5;
            tc.threads = T, tc.chunk = 7;
            if (bsr) {
                tc.mech.kind = DPC_MECH_BSR, tc.mech.bands = 3, tc.mech.momentum = 0.5;
                tc.sampler = DPC_SAMPLER_CYCLIC_POISSON;
            }
            dpc_rng rng;
            dpc_rng_seed(&rng, 9);
            dpc_trainer *tr = NULL;
            CHECK_OK(dpc_trainer_new(&tr, m, ds, NULL, &tc, &rng, &err), &err);
            if (!tr) return;
            while (dpc_trainer_steps_done(tr) < dpc_trainer_steps_total(tr))
                CHECK_OK(dpc_trainer_step(tr, NULL, &err), &err);
            h[T - 1] = dpc_trainer_params_hash(tr);
            dpc_trainer_free(tr);
        }
        CHECK(h[0] == h[1], "cnn training (%s): 1 and 2 threads differ", bsr ? "BSR" : "DP-SGD");
    }
    dpc_model_free(m);
    dpc_dataset_free(ds);
}

int main(void)
{
    test_threads();
    test_oracle();
    test_fd();
    test_parity();
    test_spec();
    return TEST_SUMMARY();
}
