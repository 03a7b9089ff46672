/* test_model.c — models: slab layout and spec parsing, hand-computed losses, central
 * finite-difference gradient checks for every kind (ReLU kinks skipped, ggml style), GEMM
 * kernel parity, fast chunk path vs the naive per-example path, chunk-composition
 * independence, the clipping invariant, initialisation, prediction/evaluation and errors. */
#include "dpcorr/abi.h"
#include "dpcorr/model.h"
#include "harness.h"
#include "model/gemm.h"

#include <float.h>
#include <pthread.h>
#include <stdint.h>

/* ==== Helpers ========================================================================== */

typedef struct {
    const char *spec;
    size_t D, K;
} model_case;

/* Every kind, both activations, with and without bias, regression and classification. */
static const model_case CASES[] = {
    {"linear", 6, 0},          {"linear:nobias", 6, 1},    {"logistic", 6, 2},
    {"softmax", 6, 4},         {"softmax:nobias", 7, 3},   {"mlp:5:tanh", 6, 3},
    {"mlp:5,4:relu", 6, 3},    {"mlp:9,3:tanh:nobias", 6, 4}, {"mlp:7:relu", 6, 0},
    {"mlp:5,6,3:relu", 4, 2},  {"mlp:11:tanh", 5, 1},
};
#define N_CASES (sizeof CASES / sizeof CASES[0])

static dpc_model *make_model(const char *spec, size_t D, size_t K)
{
    dpc_model_config cfg;
    dpc_model *m = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_model_parse(&cfg, spec, D, K, &err), &err);
    CHECK_OK(dpc_model_new(&m, &cfg, &err), &err);
    if (!m) {
        fprintf(stderr, "cannot build model %s\n", spec);
        exit(1);
    }
    return m;
}

static double *dalloc(size_t n)
{
    double *p = calloc(n ? n : 1, sizeof *p);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

/* params ~ sd * N(0,1) from a test stream (all entries, biases included). */
static void random_params(const dpc_model *m, double *w, double sd, uint64_t seed)
{
    dpc_rng rng;
    dpc_rng_seed(&rng, seed);
    dpc_rng_stream s = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_TEST, 1));
    size_t P = dpc_model_num_params(m);
    dpc_rng_gaussian_fill(&s, 0, 0, w, P);
    for (size_t i = 0; i < P; i++) w[i] *= sd;
}

/* X (n, D) ~ N(0,1); y: a class in 0..K-1 (K >= 2) or N(0,1) targets (K <= 1). */
static void random_data(size_t n, size_t D, size_t K, double *X, double *y, uint64_t seed)
{
    dpc_rng rng;
    dpc_rng_seed(&rng, seed);
    dpc_rng_stream s = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_TEST, 2));
    dpc_rng_gaussian_fill(&s, 0, 0, X, n * D);
    for (size_t i = 0; i < n; i++)
        y[i] = K >= 2 ? (double)dpc_rng_below(&s, 1, i, K) : dpc_rng_gaussian(&s, 2, i);
}

static double norm2(const double *v, size_t n)
{
    long double s = 0;
    for (size_t i = 0; i < n; i++) s += (long double)v[i] * v[i];
    return sqrt((double)s);
}

/* max_i |a_i - b_i| / max(max_i |b_i|, tiny) */
static double max_rel_diff(const double *a, const double *b, size_t n)
{
    double md = 0, mb = 1e-300;
    for (size_t i = 0; i < n; i++) {
        double d = fabs(a[i] - b[i]);
        if (!(d <= md)) md = d; /* NaN propagates */
        if (fabs(b[i]) > mb) mb = fabs(b[i]);
    }
    return md / mb;
}

static double loss_at(const dpc_model *m, const double *w, const double *x, double y,
                      double *gbuf)
{
    dpc_error err = {0};
    double loss = NAN;
    CHECK_OK(dpc_model_loss_grad(m, w, x, y, &loss, gbuf, &err), &err);
    return loss;
}

/* ==== Layout, parsing ================================================================== */

static void test_layout(void)
{
    dpc_model *m = make_model("mlp:5,4", 3, 3);
    /* W0 (5,3) b0 (5) W1 (4,5) b1 (4) W2 (3,4) b2 (3) */
    CHECK(dpc_model_num_params(m) == 15 + 5 + 20 + 4 + 12 + 3, "mlp P = %zu",
          dpc_model_num_params(m));
    CHECK(dpc_model_num_outputs(m) == 3 && dpc_model_num_tensors(m) == 6, "mlp K, tensors");
    static const char *names[] = {"W0", "b0", "W1", "b1", "W2", "b2"};
    static const size_t rows[] = {5, 5, 4, 4, 3, 3}, cols[] = {3, 1, 5, 1, 4, 1};
    size_t off = 0;
    for (size_t i = 0; i < 6; i++) {
        const dpc_model_tensor *t = dpc_model_tensor_at(m, i);
        CHECK(t && strcmp(t->name, names[i]) == 0 && t->offset == off && t->rows == rows[i] &&
                  t->cols == cols[i],
              "tensor %zu: %s off %zu (%zu,%zu)", i, t ? t->name : "?", t ? t->offset : 0,
              t ? t->rows : 0, t ? t->cols : 0);
        off += rows[i] * cols[i];
    }
    CHECK(dpc_model_tensor_at(m, 6) == NULL, "tensor past the end");
    dpc_model_free(m);

    struct { const char *spec; size_t D, K, P, K_out, T; } t[] = {
        {"linear", 10, 0, 11, 1, 2},        {"linear:nobias", 10, 1, 10, 1, 1},
        {"logistic", 10, 2, 11, 1, 2},      {"softmax", 784, 10, 7850, 10, 2},
        {"softmax:nobias", 784, 10, 7840, 10, 1},
        {"mlp:256", 784, 10, 784 * 256 + 256 + 2560 + 10, 10, 4},
        {"mlp:8:relu:nobias", 4, 0, 32 + 8, 1, 2},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        m = make_model(t[i].spec, t[i].D, t[i].K);
        CHECK(dpc_model_num_params(m) == t[i].P && dpc_model_num_outputs(m) == t[i].K_out &&
                  dpc_model_num_tensors(m) == t[i].T,
              "%s: P %zu K %zu T %zu", t[i].spec, dpc_model_num_params(m),
              dpc_model_num_outputs(m), dpc_model_num_tensors(m));
        dpc_model_free(m);
    }
    dpc_model_free(NULL);
    dpc_model_ws_free(NULL);
}

static void test_parse(void)
{
    struct { const char *spec, *canon; size_t K; } good[] = {
        {"linear", "linear", 0},           {"logistic", "logistic", 2},
        {"softmax", "softmax", 10},        {"mlp:256", "mlp:256:tanh", 10},
        {"mlp:256,128:relu", "mlp:256,128:relu", 10},
        {"mlp:3:nobias:relu", "mlp:3:relu:nobias", 0},
        {"softmax:nobias", "softmax:nobias", 3},
        {"mlp:1,2,3,4,5,6,7,8", "mlp:1,2,3,4,5,6,7,8:tanh", 4},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        dpc_model_config cfg, cfg2;
        dpc_error err = {0};
        CHECK_OK(dpc_model_parse(&cfg, good[i].spec, 5, good[i].K, &err), &err);
        char buf[DPC_MODEL_SPEC_LEN];
        size_t n = dpc_model_format_spec(&cfg, buf, sizeof buf);
        CHECK(strcmp(buf, good[i].canon) == 0 && n == strlen(buf), "format '%s' -> '%s'",
              good[i].spec, buf);
        CHECK_OK(dpc_model_parse(&cfg2, buf, 5, good[i].K, &err), &err);
        int same = cfg.kind == cfg2.kind && cfg.n_hidden == cfg2.n_hidden &&
                   cfg.act == cfg2.act && cfg.bias == cfg2.bias && cfg.n_in == cfg2.n_in &&
                   cfg.n_classes == cfg2.n_classes;
        for (size_t l = 0; l < cfg.n_hidden; l++) same &= cfg.hidden[l] == cfg2.hidden[l];
        CHECK(same, "round trip of '%s'", buf);
        char small[6];
        n = dpc_model_format_spec(&cfg, small, sizeof small);
        CHECK(n == strlen(good[i].canon) && strlen(small) == (n < 5 ? n : 5),
              "truncated format of '%s'", good[i].spec);
    }
    dpc_model_config cfg;
    dpc_error err = {0};
    CHECK_OK(dpc_model_parse(&cfg, "mlp:256,128:relu", 784, 10, &err), &err);
    CHECK(cfg.kind == DPC_MODEL_MLP && cfg.n_hidden == 2 && cfg.hidden[0] == 256 &&
              cfg.hidden[1] == 128 && cfg.act == DPC_ACT_RELU && cfg.bias == 1 &&
              cfg.n_in == 784 && cfg.n_classes == 10,
          "parsed fields");

    struct { const char *spec; size_t K; const char *needle; } bad[] = {
        {"", 2, "unknown model"},          {"MLP:4", 2, "unknown model"},
        {"mlp", 2, "hidden layer widths"}, {"mlp:", 2, "hidden width ''"},
        {"mlp:256,", 2, "hidden width"},   {"mlp:0", 2, "hidden width '0'"},
        {"mlp:4x", 2, "'4x'"},             {"mlp:-4", 2, "'-4'"},
        {"mlp:1,2,3,4,5,6,7,8,9", 2, "at most 8"},
        {"mlp:99999999999", 2, "hidden width"},
        {"softmax:relu", 3, "only applies to mlp"},
        {"mlp:4:relu:tanh", 2, "activation given twice"},
        {"linear:foo", 0, "unknown option 'foo'"},
        {"linear", 10, "linear regression needs n_classes 0 or 1"},
        {"logistic", 3, "n_classes = 2"},  {"softmax", 1, "n_classes >= 2"},
        {"softmax:nobias:nobias", 3, "nobias given twice"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dpc_error e = {0};
        dpc_status st = dpc_model_parse(&cfg, bad[i].spec, 5, bad[i].K, &e);
        CHECK(st == DPC_E_INVALID && strstr(e.msg, bad[i].needle) &&
                  strstr(e.msg, "model spec"),
              "bad spec '%s': status %d, msg '%s'", bad[i].spec, (int)st, e.msg);
    }
    dpc_error e = {0};
    CHECK(dpc_model_parse(&cfg, "linear", 0, 0, &e) == DPC_E_INVALID && strstr(e.msg, "n_in"),
          "n_in = 0: %s", e.msg);
    CHECK(dpc_model_parse(&cfg, "softmax", 5, (size_t)DPC_MODEL_MAX_WIDTH + 1, &e) ==
              DPC_E_RANGE, "huge n_classes: %s", e.msg);

    /* Direct configs. */
    dpc_model_config c = {0};
    c.kind = DPC_MODEL_SOFTMAX;
    c.n_in = 3;
    c.n_classes = 3;
    c.n_hidden = 1;
    c.hidden[0] = 4;
    c.bias = 1;
    dpc_model *m = (dpc_model *)&c; /* must be overwritten with NULL */
    CHECK(dpc_model_new(&m, &c, &e) == DPC_E_INVALID && m == NULL && strstr(e.msg, "n_hidden"),
          "softmax with hidden layers: %s", e.msg);
    c.n_hidden = 0;
    c.bias = 2;
    CHECK(dpc_model_config_check(&c, &e) == DPC_E_INVALID && strstr(e.msg, "bias"), "bias 2");
    c.bias = 1;
    c.kind = (dpc_model_kind)9;
    CHECK(dpc_model_config_check(&c, &e) == DPC_E_INVALID && strstr(e.msg, "kind"), "kind 9");
    c.kind = DPC_MODEL_MLP;
    c.n_hidden = 1;
    c.act = (dpc_activation)5;
    CHECK(dpc_model_config_check(&c, &e) == DPC_E_INVALID && !strcmp(e.field, "act"),
          "activation 5: %s", e.msg);
    CHECK(dpc_model_config_check(NULL, &e) == DPC_E_INVALID, "NULL config");
}

/* ==== Losses by hand =================================================================== */

static void test_known_values(void)
{
    double g[16], loss;
    /* linear: w = (1, 2), b = 0.5, x = (3, -1), y = 1: z = 1.5, loss = 0.125,
     * dw = (z - y) x = (1.5, -0.5), db = 0.5 */
    dpc_model *m = make_model("linear", 2, 0);
    double w[] = {1, 2, 0.5}, x[] = {3, -1};
    loss = loss_at(m, w, x, 1.0, g);
    CHECK(loss == 0.125 && g[0] == 1.5 && g[1] == -0.5 && g[2] == 0.5, "linear by hand");
    dpc_model_free(m);

    /* logistic at z = 0: loss = log 2, dz = 1/2 - y */
    m = make_model("logistic", 2, 2);
    double wl[] = {0, 0, 0};
    loss = loss_at(m, wl, x, 1.0, g);
    CHECK_NEAR_REL(loss, log(2.0), 1e-15, "logistic loss at 0");
    CHECK(g[0] == -1.5 && g[1] == 0.5 && g[2] == -0.5, "logistic grad at 0, y = 1");
    /* large margins: z = 800 (exp would overflow without the stable forms) */
    double wb[] = {400, 0, 0}, xb[] = {2, 0};
    loss = loss_at(m, wb, xb, 0.0, g);
    CHECK(loss == 800.0 && g[0] == 2.0 && g[2] == 1.0, "logistic z = 800, y = 0: %g", loss);
    loss = loss_at(m, wb, xb, 1.0, g);
    CHECK(loss >= 0 && loss < 1e-300 && fabs(g[0]) < 1e-300, "logistic z = 800, y = 1: %g",
          loss);
    dpc_model_free(m);

    /* softmax with zero weights: uniform p = 1/K, loss = log K, dW[o] = (1/K - [o = y]) x */
    m = make_model("softmax", 2, 4);
    double ws[12] = {0};
    loss = loss_at(m, ws, x, 2.0, g);
    CHECK_NEAR_REL(loss, log(4.0), 1e-15, "softmax loss log K");
    int ok = 1;
    for (int o = 0; o < 4; o++) {
        double d = 0.25 - (o == 2 ? 1.0 : 0.0);
        ok &= g[o * 2] == d * 3 && g[o * 2 + 1] == -d && g[8 + o] == d;
    }
    CHECK(ok, "softmax gradient at 0");
    /* huge logits: z = (1000, 0, 0, 0): loss of class 0 ~ 3e-434 (underflows), class 1 ~ 1000 */
    double wh[12] = {1000, 0}, xh[] = {1, 0};
    double l0 = loss_at(m, wh, xh, 0.0, g), l1 = loss_at(m, wh, xh, 1.0, g);
    CHECK(l0 >= 0 && l0 < 1e-300 && l1 == 1000.0, "softmax stable at 1000: %g %g", l0, l1);
    dpc_model_free(m);
}

/* ==== Finite differences =============================================================== */

/* Central differences over every parameter of example (x, y). Coordinates whose one-sided
 * differences disagree (a ReLU kink inside [w-h, w+h]) are skipped, as ggml's grad checks
 * skip non-differentiable points; returns the normalised error
 * ||g - g_fd|| / max(||g||, ||g_fd||) over the kept coordinates, and the skip count. */
static double fd_error(const dpc_model *m, double *w, const double *x, double y,
                       const double *g, size_t *skipped)
{
    size_t P = dpc_model_num_params(m);
    double *tmp = dalloc(P);
    double f0 = loss_at(m, w, x, y, tmp), num = 0, dg = 0, dfd = 0;
    const double h = 1e-6;
    *skipped = 0;
    for (size_t p = 0; p < P; p++) {
        double keep = w[p];
        w[p] = keep + h;
        double fp = loss_at(m, w, x, y, tmp);
        w[p] = keep - h;
        double fm = loss_at(m, w, x, y, tmp);
        w[p] = keep;
        double fd = (fp - fm) / (2 * h);
        if (fabs((fp - f0) - (f0 - fm)) / h > 1e-4) { /* smooth: ~ h |f''| */
            (*skipped)++;
            continue;
        }
        num += (g[p] - fd) * (g[p] - fd);
        dg += g[p] * g[p];
        dfd += fd * fd;
    }
    free(tmp);
    double den = sqrt(dg > dfd ? dg : dfd);
    return den > 0 ? sqrt(num) / den : sqrt(num);
}

static void test_gradcheck(void)
{
    for (size_t c = 0; c < N_CASES; c++) {
        dpc_model *m = make_model(CASES[c].spec, CASES[c].D, CASES[c].K);
        size_t P = dpc_model_num_params(m), D = CASES[c].D, n = 4;
        int relu = strstr(CASES[c].spec, "relu") != NULL;
        double *w = dalloc(P), *g = dalloc(P), *X = dalloc(n * D), y[4];
        random_params(m, w, 0.6, 100 + c);
        random_data(n, D, CASES[c].K, X, y, 200 + c);
        size_t skipped_total = 0;
        double worst = 0;
        for (size_t i = 0; i < n; i++) {
            loss_at(m, w, X + i * D, y[i], g);
            size_t skipped;
            double e = fd_error(m, w, X + i * D, y[i], g, &skipped);
            if (!(e <= worst)) worst = e;
            skipped_total += skipped;
            if (i == 0) {
                /* The check can fail: a gradient off by 1e-4 in one coordinate is caught. */
                size_t p = P / 2;
                g[p] += 1e-4 * (1 + fabs(g[p])) + 1e-4 * norm2(g, P);
                double e2 = fd_error(m, w, X, y[0], g, &skipped);
                CHECK(e2 > 1e-6, "%s: perturbed gradient not detected (%g)", CASES[c].spec, e2);
            }
        }
        CHECK(worst < 1e-6, "%s: finite-difference error %g", CASES[c].spec, worst);
        if (relu)
            CHECK(skipped_total * 10 < n * P, "%s: %zu of %zu coordinates at kinks",
                  CASES[c].spec, skipped_total, n * P);
        else
            CHECK(skipped_total == 0, "%s: smooth model but %zu coordinates skipped",
                  CASES[c].spec, skipped_total);
        free(w);
        free(g);
        free(X);
        dpc_model_free(m);
    }
}

/* ==== GEMM kernels ===================================================================== */

static void test_gemm_parity(void)
{
    /* k = 4100: the packed B no longer fits the L2 block, one panel per column block */
    static const size_t ms[] = {1, 2, 3, 5, 17}, ns[] = {1, 7, 8, 9, 20};
    static const size_t ks[] = {1, 3, 16, 31, 4100};
    dpc_rng rng;
    dpc_rng_seed(&rng, 5);
    dpc_rng_stream s = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_TEST, 3));
    int bad_bits = 0, bad_ref = 0, cases = 0;
    uint64_t row = 0;
    for (size_t a = 0; a < 5; a++)
        for (size_t b = 0; b < 5; b++)
            for (size_t c = 0; c < 5; c++)
                for (int acc = 0; acc < 2; acc++) {
                    size_t m = ms[a], n = ns[b], k = ks[c], lda = k + 1, ldc = n + 2;
                    double *A = dalloc(m * lda), *B = dalloc(k * n), *Bt = dalloc(n * k);
                    double *C1 = dalloc(m * ldc), *C2 = dalloc(m * ldc), *C3 = dalloc(m * ldc);
                    double *Bp = dalloc(dpc__gemm_packed_size(k, n));
                    dpc_rng_gaussian_fill(&s, row++, 0, A, m * lda);
                    dpc_rng_gaussian_fill(&s, row++, 0, B, k * n);
                    dpc_rng_gaussian_fill(&s, row++, 0, C1, m * ldc);
                    for (size_t t = 0; t < k; t++)
                        for (size_t j = 0; j < n; j++) Bt[j * k + t] = B[t * n + j];
                    memcpy(C2, C1, m * ldc * sizeof *C1);
                    memcpy(C3, C1, m * ldc * sizeof *C1);
                    dpc__gemm_naive(m, n, k, A, lda, B, n, C1, ldc, acc);
                    dpc__gemm_pack_b(k, n, B, n, Bp);
                    dpc__gemm_packed(m, n, k, A, lda, Bp, C2, ldc, acc);
                    dpc__gemm_pack_bt(k, n, Bt, k, Bp);
                    dpc__gemm_packed(m, n, k, A, lda, Bp, C3, ldc, acc);
                    /* bit-identical, padding columns of C untouched */
                    if (memcmp(C1, C2, m * ldc * sizeof *C1) ||
                        memcmp(C1, C3, m * ldc * sizeof *C1))
                        bad_bits++;
                    /* and the naive sum itself is right (against long double) */
                    for (size_t i = 0; i < m; i++)
                        for (size_t j = 0; j < n; j++) {
                            long double r = 0;
                            double d = 0;
                            for (size_t t = 0; t < k; t++) {
                                r += (long double)A[i * lda + t] * B[t * n + j];
                                d += A[i * lda + t] * B[t * n + j];
                            }
                            if (fabs(d - (double)r) > 1e-15 * (double)k * (1 + fabs((double)r)))
                                bad_ref++;
                        }
                    if (!acc) {
                        double d = 0;
                        for (size_t t = 0; t < k; t++) d += A[t] * B[t * n];
                        if (C1[0] != d) bad_ref++; /* C = A B, row 0 col 0, exactly */
                    }
                    cases++;
                    free(A), free(B), free(Bt), free(C1), free(C2), free(C3), free(Bp);
                }
    CHECK(bad_bits == 0, "packed GEMM differs from naive in %d of %d cases", bad_bits, cases);
    CHECK(bad_ref == 0, "naive GEMM inaccurate in %d entries", bad_ref);
}

/* ==== Fast path vs naive =============================================================== */

static void test_fast_vs_naive(void)
{
    static const size_t chunks[] = {1, 2, 3, 7, 16, 33};
    for (size_t c = 0; c < N_CASES; c++) {
        dpc_model *m = make_model(CASES[c].spec, CASES[c].D, CASES[c].K);
        size_t P = dpc_model_num_params(m), D = CASES[c].D, Mx = 33;
        double *w = dalloc(P), *X = dalloc(Mx * D), *y = dalloc(Mx);
        double *s1 = dalloc(P), *s2 = dalloc(P), *G = dalloc(Mx * P), *g = dalloc(P);
        double l1[33], l2[33], n1[33], n2[33];
        random_params(m, w, 0.5, 300 + c);
        random_data(Mx, D, CASES[c].K, X, y, 400 + c);
        dpc_model_ws *ws = NULL;
        dpc_error err = {0};
        CHECK_OK(dpc_model_ws_new(&ws, m, Mx, &err), &err);
        /* per-example gradients: bit-identical to the one-example reference */
        CHECK_OK(dpc_model_per_example_grads(m, w, X, y, Mx, G, l1, ws, &err), &err);
        int same = 1;
        for (size_t i = 0; i < Mx; i++) {
            double li = loss_at(m, w, X + i * D, y[i], g);
            same &= li == l1[i] && memcmp(g, G + i * P, P * sizeof *g) == 0;
        }
        CHECK(same, "%s: per_example_grads differ from loss_grad", CASES[c].spec);
        for (size_t a = 0; a < sizeof chunks / sizeof chunks[0]; a++) {
            size_t M = chunks[a];
            /* clip: none, then the median-ish norm (some clipped, some not) */
            for (int pass = 0; pass < 2; pass++) {
                double clip = INFINITY;
                if (pass) {
                    CHECK_OK(dpc_model_clipped_sum_naive(m, w, X, y, M, INFINITY, s2, l2, n2,
                                                         &err), &err);
                    clip = n2[M / 2];
                }
                memset(s1, 0, P * sizeof *s1);
                memset(s2, 0, P * sizeof *s2);
                CHECK_OK(dpc_model_clipped_sum(m, w, X, y, M, clip, s1, l1, n1, ws, &err), &err);
                CHECK_OK(dpc_model_clipped_sum_naive(m, w, X, y, M, clip, s2, l2, n2, &err),
                         &err);
                CHECK(memcmp(l1, l2, M * sizeof *l1) == 0, "%s M=%zu: losses differ",
                      CASES[c].spec, M);
                CHECK(max_rel_diff(n1, n2, M) < 1e-13, "%s M=%zu: norms differ by %g",
                      CASES[c].spec, M, max_rel_diff(n1, n2, M));
                CHECK(max_rel_diff(s1, s2, P) < 1e-12, "%s M=%zu clip=%g: sums differ by %g",
                      CASES[c].spec, M, clip, max_rel_diff(s1, s2, P));
                /* the norms are the norms of the materialised gradients */
                double worst = 0;
                for (size_t i = 0; i < M; i++) {
                    double r = fabs(n1[i] - norm2(G + i * P, P)) / norm2(G + i * P, P);
                    if (!(r <= worst)) worst = r;
                }
                CHECK(worst < 1e-13, "%s M=%zu: ghost norm vs ||g_i||: %g", CASES[c].spec, M,
                      worst);
            }
        }
        dpc_model_ws_free(ws);
        free(w), free(X), free(y), free(s1), free(s2), free(G), free(g);
        dpc_model_free(m);
    }
}

/* ==== Chunk composition ================================================================ */

static void run_chunked(const dpc_model *m, const double *w, const double *X, const double *y,
                        size_t n, size_t chunk, double clip, dpc_model_ws *ws, double *total,
                        double *losses, double *norms, double *chunk_sum, double *naive_dev)
{
    size_t P = dpc_model_num_params(m), D = dpc_model_get_config(m)->n_in;
    double *ref = dalloc(P);
    dpc_error err = {0};
    memset(total, 0, P * sizeof *total);
    *naive_dev = 0;
    for (size_t i0 = 0; i0 < n; i0 += chunk) {
        size_t M = n - i0 < chunk ? n - i0 : chunk;
        memset(chunk_sum, 0, P * sizeof *chunk_sum);
        memset(ref, 0, P * sizeof *ref);
        CHECK_OK(dpc_model_clipped_sum(m, w, X + i0 * D, y + i0, M, clip, chunk_sum,
                                       losses + i0, norms + i0, ws, &err), &err);
        CHECK_OK(dpc_model_clipped_sum_naive(m, w, X + i0 * D, y + i0, M, clip, ref, NULL, NULL,
                                             &err), &err);
        double d = max_rel_diff(chunk_sum, ref, P);
        if (!(d <= *naive_dev)) *naive_dev = d;
        for (size_t p = 0; p < P; p++) total[p] += chunk_sum[p];
    }
    free(ref);
}

static void test_chunk_composition(void)
{
    struct { const char *spec; size_t D, K; } t[] = {
        {"mlp:37,16:tanh", 50, 10}, {"mlp:24:relu", 50, 10}, {"softmax", 50, 10},
        {"mlp:256", 784, 10},
    };
    static const size_t chunks[] = {1, 7, 32};
    for (size_t c = 0; c < sizeof t / sizeof t[0]; c++) {
        size_t n = c == 3 ? 40 : 64;
        dpc_model *m = make_model(t[c].spec, t[c].D, t[c].K);
        size_t P = dpc_model_num_params(m), D = t[c].D;
        double *w = dalloc(P), *X = dalloc(n * D), *y = dalloc(n);
        double *tot[3], *loss[3], *nrm[3], *cs = dalloc(P), *acc = dalloc(P);
        dpc_rng rng;
        dpc_rng_seed(&rng, 77);
        dpc_error err = {0};
        CHECK_OK(dpc_model_init(m, w, &rng, 0, &err), &err);
        random_data(n, D, t[c].K, X, y, 500 + c);
        dpc_model_ws *ws = NULL;
        CHECK_OK(dpc_model_ws_new(&ws, m, 32, &err), &err);
        /* clip at the median norm (norms from a first, unclipped pass) */
        double *nn = dalloc(n), *tmp = dalloc(P), clip = 0;
        CHECK_OK(dpc_model_clipped_sum(m, w, X, y, 32, INFINITY, tmp, NULL, nn, ws, &err), &err);
        for (size_t i = 0; i < 32; i++) {
            size_t below = 0;
            for (size_t j = 0; j < 32; j++) below += nn[j] < nn[i];
            if (below == 16) clip = nn[i];
        }
        free(nn), free(tmp);
        for (int a = 0; a < 3; a++) {
            tot[a] = dalloc(P), loss[a] = dalloc(n), nrm[a] = dalloc(n);
            double dev;
            run_chunked(m, w, X, y, n, chunks[a], clip, ws, tot[a], loss[a], nrm[a], cs, &dev);
            CHECK(dev < 1e-12, "%s chunk %zu: chunk sums vs naive %g", t[c].spec, chunks[a],
                  dev);
        }
        for (int a = 1; a < 3; a++) {
            CHECK(memcmp(nrm[0], nrm[a], n * sizeof(double)) == 0,
                  "%s: norms depend on the chunking (1 vs %zu)", t[c].spec, chunks[a]);
            CHECK(memcmp(loss[0], loss[a], n * sizeof(double)) == 0,
                  "%s: losses depend on the chunking (1 vs %zu)", t[c].spec, chunks[a]);
            CHECK(max_rel_diff(tot[a], tot[0], P) < 1e-12, "%s: totals 1 vs %zu differ by %g",
                  t[c].spec, chunks[a], max_rel_diff(tot[a], tot[0], P));
        }
        /* Some but not all examples are clipped, so the test exercises both branches. */
        size_t nclip = 0;
        for (size_t i = 0; i < n; i++) nclip += nrm[0][i] > clip;
        CHECK(nclip > 0 && nclip < n, "%s: %zu of %zu clipped", t[c].spec, nclip, n);

        /* Reproducibility: the same chunk gives the same bits, through a fresh workspace, and
         * a running total equals summing zeroed chunk buffers in the same order. */
        memset(acc, 0, P * sizeof *acc);
        double *sum2 = dalloc(P);
        for (size_t i0 = 0; i0 < n; i0 += 7) {
            size_t M = n - i0 < 7 ? n - i0 : 7;
            memset(cs, 0, P * sizeof *cs);
            CHECK_OK(dpc_model_clipped_sum(m, w, X + i0 * D, y + i0, M, clip, cs, NULL, NULL,
                                           NULL, &err), &err);
            for (size_t p = 0; p < P; p++) sum2[p] += cs[p];
            CHECK_OK(dpc_model_clipped_sum(m, w, X + i0 * D, y + i0, M, clip, acc, NULL, NULL,
                                           ws, &err), &err);
        }
        CHECK(memcmp(sum2, tot[1], P * sizeof *sum2) == 0, "%s: not reproducible", t[c].spec);
        CHECK(memcmp(acc, tot[1], P * sizeof *acc) == 0,
              "%s: running total differs from summed chunks", t[c].spec);
        free(sum2);
        for (int a = 0; a < 3; a++) free(tot[a]), free(loss[a]), free(nrm[a]);
        dpc_model_ws_free(ws);
        free(w), free(X), free(y), free(cs), free(acc);
        dpc_model_free(m);
    }
}

/* ==== Threads ========================================================================== */

/* Two threads share one model and process alternate chunks, each with its own workspace and
 * output buffers; the results must equal a sequential run bit for bit. */
typedef struct {
    const dpc_model *m;
    const double *w, *X, *y;
    size_t n, chunk, first, P, D;
    double *sums, *norms; /* (n_chunks, P), (n) */
    int failed;
} thread_job;

static void *thread_run(void *arg)
{
    thread_job *j = arg;
    dpc_model_ws *ws = NULL;
    dpc_error err = {0};
    if (dpc_model_ws_new(&ws, j->m, j->chunk, &err)) {
        j->failed = 1;
        return NULL;
    }
    for (size_t c = j->first; c * j->chunk < j->n; c += 2) {
        size_t i0 = c * j->chunk, M = j->n - i0 < j->chunk ? j->n - i0 : j->chunk;
        if (dpc_model_clipped_sum(j->m, j->w, j->X + i0 * j->D, j->y + i0, M, 0.3,
                                  j->sums + c * j->P, NULL, j->norms + i0, ws, &err))
            j->failed = 1;
    }
    dpc_model_ws_free(ws);
    return NULL;
}

static void test_threads(void)
{
    dpc_model *m = make_model("mlp:33,12:tanh", 40, 10);
    size_t P = dpc_model_num_params(m), D = 40, n = 100, chunk = 16, nc = (n + chunk - 1) / chunk;
    double *w = dalloc(P), *X = dalloc(n * D), *y = dalloc(n);
    double *seq = dalloc(nc * P), *par = dalloc(nc * P), *ns = dalloc(n), *np = dalloc(n);
    random_params(m, w, 0.4, 41);
    random_data(n, D, 10, X, y, 42);
    thread_job seqjob = {m, w, X, y, n, chunk, 0, P, D, seq, ns, 0};
    thread_job seqjob1 = seqjob;
    seqjob1.first = 1;
    thread_run(&seqjob);
    thread_run(&seqjob1);
    thread_job j0 = {m, w, X, y, n, chunk, 0, P, D, par, np, 0}, j1 = j0;
    j1.first = 1;
    pthread_t t0, t1;
    int ok = pthread_create(&t0, NULL, thread_run, &j0) == 0;
    ok &= pthread_create(&t1, NULL, thread_run, &j1) == 0;
    pthread_join(t0, NULL);
    pthread_join(t1, NULL);
    CHECK(ok && !j0.failed && !j1.failed && !seqjob.failed && !seqjob1.failed, "thread runs");
    CHECK(memcmp(seq, par, nc * P * sizeof *seq) == 0 && memcmp(ns, np, n * sizeof *ns) == 0,
          "two threads give the sequential bits");
    free(w), free(X), free(y), free(seq), free(par), free(ns), free(np);
    dpc_model_free(m);
}

/* ==== Clipping ========================================================================= */

static void test_clipping(void)
{
    for (size_t c = 0; c < N_CASES; c++) {
        dpc_model *m = make_model(CASES[c].spec, CASES[c].D, CASES[c].K);
        size_t P = dpc_model_num_params(m), D = CASES[c].D, n = 24;
        double *w = dalloc(P), *X = dalloc(n * D), *y = dalloc(n), *G = dalloc(n * P);
        double *ci = dalloc(P), *sum = dalloc(P), *ref = dalloc(P), norms[24];
        random_params(m, w, 0.7, 600 + c);
        random_data(n, D, CASES[c].K, X, y, 700 + c);
        dpc_error err = {0};
        CHECK_OK(dpc_model_per_example_grads(m, w, X, y, n, G, NULL, NULL, &err), &err);
        CHECK_OK(dpc_model_clipped_sum(m, w, X, y, n, INFINITY, sum, NULL, norms, NULL, &err),
                 &err);
        /* clip = INFINITY: the plain sum */
        for (size_t p = 0; p < P; p++) {
            long double r = 0;
            for (size_t i = 0; i < n; i++) r += G[i * P + p];
            ref[p] = (double)r;
        }
        CHECK(max_rel_diff(sum, ref, P) < 1e-12, "%s: unclipped sum off by %g", CASES[c].spec,
              max_rel_diff(sum, ref, P));
        double clips[3] = {0.0, norms[3] * 0.5, norms[5] * 1.5};
        for (int k = 0; k < 3; k++) {
            double clip = clips[k];
            int over = 0, wrong = 0, unclipped_bits = 0;
            for (size_t i = 0; i < n; i++) {
                memset(ci, 0, P * sizeof *ci);
                double nrm;
                CHECK_OK(dpc_model_clipped_sum(m, w, X + i * D, y + i, 1, clip, ci, NULL, &nrm,
                                               NULL, &err), &err);
                double gn = norm2(G + i * P, P), cn = norm2(ci, P);
                if (cn > clip * (1 + 1e-12)) over++;
                double s = gn > clip ? clip / gn : 1.0;
                for (size_t p = 0; p < P; p++) ref[p] = s * G[i * P + p];
                if (max_rel_diff(ci, ref, P) > 1e-12 && !(clip == 0 && cn == 0)) wrong++;
                /* unclipped: exactly g_i (== also equates the -0 of a product with 0 + -0) */
                if (nrm <= clip)
                    for (size_t p = 0; p < P; p++) unclipped_bits += ci[p] != G[i * P + p];
            }
            CHECK(over == 0, "%s clip %g: %d contributions exceed the clip norm", CASES[c].spec,
                  clip, over);
            CHECK(wrong == 0, "%s clip %g: %d contributions are not min(1, C/|g|) g",
                  CASES[c].spec, clip, wrong);
            CHECK(unclipped_bits == 0, "%s clip %g: %d unclipped contributions not exact",
                  CASES[c].spec, clip, unclipped_bits);
        }
        free(w), free(X), free(y), free(G), free(ci), free(sum), free(ref);
        dpc_model_free(m);
    }
}

/* ==== Initialisation =================================================================== */

static void test_init(void)
{
    dpc_rng rng;
    dpc_rng_seed(&rng, 2024);
    dpc_error err = {0};
    dpc_model *m = make_model("mlp:256", 784, 10);
    size_t P = dpc_model_num_params(m);
    double *a = dalloc(P), *b = dalloc(P), *c = dalloc(P);
    CHECK_OK(dpc_model_init(m, a, &rng, 0, &err), &err);
    for (size_t i = 0; i < P; i++) b[i] = 123.0;
    CHECK_OK(dpc_model_init(m, b, &rng, 0, &err), &err);
    CHECK(memcmp(a, b, P * sizeof *a) == 0, "init is deterministic");
    CHECK_OK(dpc_model_init(m, c, &rng, 1, &err), &err);
    size_t same = 0;
    for (size_t i = 0; i < 784 * 256; i++) same += a[i] == c[i];
    CHECK(same < 10, "stream_index changes the weights (%zu equal)", same);
    /* W0: Glorot std sqrt(2 / (784 + 256)); W1: sqrt(2 / (256 + 10)); biases 0 */
    const dpc_model_tensor *W0 = dpc_model_tensor_at(m, 0), *b0 = dpc_model_tensor_at(m, 1);
    const dpc_model_tensor *W1 = dpc_model_tensor_at(m, 2), *b1 = dpc_model_tensor_at(m, 3);
    double s2 = 0, mean = 0;
    size_t n0 = W0->rows * W0->cols;
    for (size_t i = 0; i < n0; i++) s2 += a[W0->offset + i] * a[W0->offset + i];
    for (size_t i = 0; i < n0; i++) mean += a[W0->offset + i];
    CHECK_NEAR_REL(sqrt(s2 / (double)n0), sqrt(2.0 / 1040.0), 0.01, "W0 std (Glorot)");
    CHECK(fabs(mean / (double)n0) < 4 * sqrt(2.0 / 1040.0) / sqrt((double)n0), "W0 mean %g",
          mean / (double)n0);
    s2 = 0;
    for (size_t i = 0; i < W1->rows * W1->cols; i++) s2 += a[W1->offset + i] * a[W1->offset + i];
    CHECK_NEAR_REL(sqrt(s2 / 2560.0), sqrt(2.0 / 266.0), 0.05, "W1 std (Glorot)");
    int zero = 1;
    for (size_t i = 0; i < b0->rows; i++) zero &= a[b0->offset + i] == 0.0;
    for (size_t i = 0; i < b1->rows; i++) zero &= a[b1->offset + i] == 0.0;
    CHECK(zero, "biases start at 0");
    /* the weights are the documented Gaussians */
    dpc_rng_stream s = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_INIT, 0));
    CHECK(a[W0->offset + 5 * 784 + 7] == sqrt(2.0 / 1040.0) * dpc_rng_gaussian(&s, 0, 5 * 784 + 7),
          "W0[5][7] = std * gaussian(row 0, index 5*784+7)");
    CHECK(a[W1->offset + 3 * 256 + 1] == sqrt(2.0 / 266.0) * dpc_rng_gaussian(&s, 1, 3 * 256 + 1),
          "W1[3][1] = std * gaussian(row 1, index 3*256+1)");
    dpc_model_free(m);

    /* ReLU: He std sqrt(2 / fan_in) for hidden layers; Glorot for the output layer. A layer's
     * values do not depend on the other layers' shapes. */
    dpc_model *r1 = make_model("mlp:400,8:relu", 100, 3), *r2 = make_model("mlp:400,8:relu", 50, 3);
    double *x1 = dalloc(dpc_model_num_params(r1)), *x2 = dalloc(dpc_model_num_params(r2));
    CHECK_OK(dpc_model_init(r1, x1, &rng, 3, &err), &err);
    CHECK_OK(dpc_model_init(r2, x2, &rng, 3, &err), &err);
    const dpc_model_tensor *t1 = dpc_model_tensor_at(r1, 2), *t2 = dpc_model_tensor_at(r2, 2);
    CHECK(memcmp(x1 + t1->offset, x2 + t2->offset, 8 * 400 * sizeof *x1) == 0,
          "W1 independent of W0's shape");
    s2 = 0;
    for (size_t i = 0; i < 40000; i++) s2 += x1[i] * x1[i];
    CHECK_NEAR_REL(sqrt(s2 / 40000.0), sqrt(2.0 / 100.0), 0.02, "He std of W0");
    s2 = 0;
    for (size_t i = 0; i < 3200; i++) s2 += x1[t1->offset + i] * x1[t1->offset + i];
    CHECK_NEAR_REL(sqrt(s2 / 3200.0), sqrt(2.0 / 400.0), 0.05, "He std of W1");
    const dpc_model_tensor *t3 = dpc_model_tensor_at(r1, 4);
    dpc_rng_stream s3 = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_INIT, 3));
    CHECK(x1[t3->offset + 4] == sqrt(2.0 / 11.0) * dpc_rng_gaussian(&s3, 2, 4),
          "output layer Glorot under ReLU");
    dpc_model_free(r1), dpc_model_free(r2), free(x1), free(x2);

    /* Convex models start at 0. */
    m = make_model("softmax", 5, 3);
    for (size_t i = 0; i < 19; i++) a[i] = 1.0;
    CHECK_OK(dpc_model_init(m, a, &rng, 0, &err), &err);
    zero = 1;
    for (size_t i = 0; i < 18; i++) zero &= a[i] == 0.0;
    CHECK(zero && a[18] == 1.0, "softmax init: zeros, nothing beyond P written");
    CHECK(dpc_model_init(m, a, &rng, (uint64_t)UINT32_MAX + 1, &err) == DPC_E_RANGE,
          "stream_index range");
    CHECK(dpc_model_init(m, NULL, &rng, 0, &err) == DPC_E_INVALID, "NULL params");
    dpc_model_free(m);
    free(a), free(b), free(c);
}

/* ==== Predict / evaluate =============================================================== */

static void test_predict_evaluate(void)
{
    for (size_t c = 0; c < N_CASES; c++) {
        dpc_model *m = make_model(CASES[c].spec, CASES[c].D, CASES[c].K);
        size_t P = dpc_model_num_params(m), D = CASES[c].D, K = dpc_model_num_outputs(m);
        size_t n = 23;
        double *w = dalloc(P), *X = dalloc(n * D), *y = dalloc(n), *out = dalloc(n * K);
        double *g = dalloc(P), *out2 = dalloc(n * K);
        random_params(m, w, 0.8, 800 + c);
        random_data(n, D, CASES[c].K, X, y, 900 + c);
        dpc_error err = {0};
        CHECK_OK(dpc_model_predict(m, w, X, n, out, NULL, &err), &err);
        dpc_model_ws *ws = NULL;
        CHECK_OK(dpc_model_ws_new(&ws, m, 5, &err), &err);
        CHECK_OK(dpc_model_predict(m, w, X, n, out2, ws, &err), &err);
        CHECK(memcmp(out, out2, n * K * sizeof *out) == 0, "%s: predict depends on chunking",
              CASES[c].spec);
        double total = 0;
        size_t correct = 0;
        int cls = CASES[c].K >= 2, bad = 0;
        for (size_t i = 0; i < n; i++) {
            double li = loss_at(m, w, X + i * D, y[i], g), *o = out + i * K;
            total += li;
            if (!cls) {
                /* squared loss: the prediction is z, loss = (z - y)^2 / 2 */
                bad += fabs(0.5 * (o[0] - y[i]) * (o[0] - y[i]) - li) > 1e-12 * (1 + li);
            } else if (K == 1) {
                /* logistic: p = P(y = 1), loss = -log p(y) */
                double py = y[i] == 1.0 ? o[0] : 1 - o[0];
                bad += fabs(-log(py) - li) > 1e-10 * (1 + li);
                correct += (o[0] > 0.5) == (y[i] == 1.0);
            } else {
                double s = 0;
                size_t best = 0;
                for (size_t j = 0; j < K; j++) {
                    s += o[j];
                    if (o[j] > o[best]) best = j;
                }
                bad += fabs(s - 1) > 1e-14 || fabs(-log(o[(size_t)y[i]]) - li) > 1e-10 * (1 + li);
                correct += best == (size_t)y[i];
            }
        }
        CHECK(bad == 0, "%s: predictions inconsistent with losses (%d)", CASES[c].spec, bad);
        double ml = 0, acc = 0, ml2 = 0, acc2 = 0;
        CHECK_OK(dpc_model_evaluate(m, w, X, y, n, &ml, &acc, NULL, &err), &err);
        CHECK_OK(dpc_model_evaluate(m, w, X, y, n, &ml2, &acc2, ws, &err), &err);
        CHECK_NEAR_REL(ml, total / (double)n, 1e-15, "%s: mean loss", CASES[c].spec);
        CHECK(ml == ml2 && (cls ? acc == acc2 : isnan(acc2)), "%s: evaluate depends on chunking",
              CASES[c].spec);
        if (cls)
            CHECK(acc == (double)correct / (double)n, "%s: accuracy %g vs %g", CASES[c].spec, acc,
                  (double)correct / (double)n);
        else
            CHECK(isnan(acc), "%s: regression accuracy is NaN", CASES[c].spec);
        dpc_model_ws_free(ws);
        free(w), free(X), free(y), free(out), free(g), free(out2);
        dpc_model_free(m);
    }
}

/* ==== Errors =========================================================================== */

static void test_errors(void)
{
    dpc_model *m = make_model("mlp:4,3:relu", 5, 3);
    size_t P = dpc_model_num_params(m), D = 5, n = 6;
    double *w = dalloc(P), *X = dalloc(n * D), y[6], *gs = dalloc(P), *g = dalloc(P);
    double losses[6], norms[6], loss;
    random_params(m, w, 0.5, 11);
    random_data(n, D, 3, X, y, 12);
    dpc_model_ws *ws = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_model_ws_new(&ws, m, 4, &err), &err);
    CHECK(dpc_model_ws_max_chunk(ws) == 4, "max chunk");
    for (size_t i = 0; i < P; i++) gs[i] = 7.0;
    for (size_t i = 0; i < n; i++) losses[i] = norms[i] = -1;
#define UNTOUCHED() (gs[0] == 7.0 && gs[P - 1] == 7.0 && losses[0] == -1 && norms[0] == -1)

    dpc_error e = {0};
    dpc_status st = dpc_model_clipped_sum(m, w, X, y, 5, 1.0, gs, losses, norms, ws, &e);
    CHECK(st == DPC_E_RANGE && strstr(e.msg, "max_chunk 4"), "M > max chunk: %s", e.msg);
    st = dpc_model_clipped_sum(m, w, X, y, 3, -1.0, gs, losses, norms, ws, &e);
    CHECK(st == DPC_E_INVALID && strstr(e.msg, "clip"), "negative clip: %s", e.msg);
    st = dpc_model_clipped_sum(m, w, X, y, 3, NAN, gs, losses, norms, ws, &e);
    CHECK(st == DPC_E_INVALID, "NaN clip");
    st = dpc_model_clipped_sum(m, w, X, NULL, 3, 1.0, gs, losses, norms, ws, &e);
    CHECK(st == DPC_E_INVALID && strstr(e.msg, "NULL"), "NULL y");
    CHECK_OK(dpc_model_clipped_sum(m, w, X, y, 0, 1.0, gs, losses, norms, ws, &e), &e);
    CHECK(UNTOUCHED(), "M = 0 writes nothing");

    /* labels */
    double yb[4] = {0, 1, 2, 0};
    double badv[] = {3.0, -1.0, 0.5, NAN, INFINITY};
    for (int k = 0; k < 5; k++) {
        yb[2] = badv[k];
        st = dpc_model_clipped_sum(m, w, X, yb, 4, 1.0, gs, losses, norms, ws, &e);
        CHECK(st == DPC_E_INVALID && strstr(e.msg, "example 2") && strstr(e.msg, "label") &&
                  strstr(e.msg, "0..2"), "label %g: %s", badv[k], e.msg);
        st = dpc_model_loss_grad(m, w, X, badv[k], &loss, g, &e);
        CHECK(st == DPC_E_INVALID && strstr(e.msg, "label"), "loss_grad label %g", badv[k]);
    }
    /* features */
    double keep = X[3 * D + 4];
    X[3 * D + 4] = NAN;
    st = dpc_model_clipped_sum(m, w, X, y, 4, 1.0, gs, losses, norms, ws, &e);
    CHECK(st == DPC_E_INVALID && strstr(e.msg, "example 3") && strstr(e.msg, "x[4]"),
          "NaN feature: %s", e.msg);
    double G[4 * 64];
    st = dpc_model_per_example_grads(m, w, X, y, 4, G, NULL, ws, &e);
    CHECK(st == DPC_E_INVALID && strstr(e.msg, "x[4]"), "per_example_grads NaN feature");
    double pr[6 * 3] = {0};
    dpc_model_ws *ws2 = NULL;
    CHECK_OK(dpc_model_ws_new(&ws2, m, 2, &err), &err);
    st = dpc_model_predict(m, w, X, n, pr, ws2, &e);
    CHECK(st == DPC_E_INVALID && strstr(e.msg, "example 3"), "predict NaN feature: %s", e.msg);
    CHECK(pr[0] == 0.0, "predict wrote output before failing");
    dpc_model_ws_free(ws2);
    X[3 * D + 4] = keep;
    /* params: name the view and the entry */
    const dpc_model_tensor *W1 = dpc_model_tensor_at(m, 2), *b0 = dpc_model_tensor_at(m, 1);
    w[W1->offset + 2 * W1->cols + 3] = INFINITY;
    st = dpc_model_clipped_sum(m, w, X, y, 4, 1.0, gs, losses, norms, ws, &e);
    CHECK(st == DPC_E_INVALID && strstr(e.msg, "W1[2][3]"), "Inf weight: %s", e.msg);
    w[W1->offset + 2 * W1->cols + 3] = 0.1;
    w[b0->offset + 1] = NAN;
    st = dpc_model_loss_grad(m, w, X, y[0], &loss, g, &e);
    CHECK(st == DPC_E_INVALID && strstr(e.msg, "b0[1]"), "NaN bias: %s", e.msg);
    double ml;
    st = dpc_model_evaluate(m, w, X, y, n, &ml, NULL, NULL, &e);
    CHECK(st == DPC_E_INVALID && strstr(e.msg, "b0[1]"), "evaluate NaN bias");
    w[b0->offset + 1] = 0.0;
    CHECK(UNTOUCHED(), "failed calls write nothing");
    /* workspace of another shape */
    dpc_model *m2 = make_model("mlp:4,2:relu", 5, 3);
    st = dpc_model_clipped_sum(m2, w, X, y, 2, 1.0, gs, losses, norms, ws, &e);
    CHECK(st == DPC_E_INVALID && strstr(e.msg, "another shape"), "foreign workspace: %s", e.msg);
    dpc_model_free(m2);
    dpc_model_ws_free(ws);
    ws = (dpc_model_ws *)&e; /* must be overwritten with NULL */
    CHECK(dpc_model_ws_new(&ws, m, 0, &e) == DPC_E_INVALID && ws == NULL, "max_chunk 0");
    CHECK(dpc_model_evaluate(m, w, X, y, 0, &ml, NULL, NULL, &e) == DPC_E_INVALID, "n = 0");
    free(w), free(X), free(gs), free(g);
    dpc_model_free(m);

    /* numeric failures: a finite loss with an overflowing gradient, and an infinite loss */
    m = make_model("linear", 2, 0);
    double wl[3] = {1e150, 0, 0}, xl[2] = {1.0, 1e200}, yl[2] = {0, 0}, sl[3] = {7, 7, 7};
    double ll[2] = {-1, -1}, nl[2] = {-1, -1};
    st = dpc_model_clipped_sum(m, wl, xl, yl, 1, 1.0, sl, ll, nl, NULL, &e);
    CHECK(st == DPC_E_NUMERIC && strstr(e.msg, "example 0") && strstr(e.msg, "gradient"),
          "gradient overflow: %s", e.msg);
    CHECK(sl[0] == 7 && ll[0] == -1 && nl[0] == -1, "nothing written on numeric error");
    double gl[3];
    st = dpc_model_loss_grad(m, wl, xl, 0.0, &loss, gl, &e);
    CHECK(st == DPC_E_NUMERIC && strstr(e.msg, "gradient"), "loss_grad overflow: %s", e.msg);
    double X2[4] = {1, 0, 1e160, 0};
    st = dpc_model_clipped_sum(m, (double[]){1, 0, 0}, X2, yl, 2, 1.0, sl, ll, nl, NULL, &e);
    CHECK(st == DPC_E_NUMERIC && strstr(e.msg, "example 1") && strstr(e.msg, "loss"),
          "loss overflow: %s", e.msg);
    st = dpc_model_clipped_sum_naive(m, (double[]){1, 0, 0}, X2, yl, 2, 1.0, sl, ll, nl, &e);
    CHECK(st == DPC_E_NUMERIC && strstr(e.msg, "example 1"), "naive loss overflow: %s", e.msg);
    st = dpc_model_evaluate(m, (double[]){1, 0, 0}, X2, yl, 2, &ml, NULL, NULL, &e);
    CHECK(st == DPC_E_NUMERIC && strstr(e.msg, "example 1"), "evaluate loss overflow");
    CHECK(sl[0] == 7 && ll[0] == -1, "nothing written");
    dpc_model_free(m);
#undef UNTOUCHED
}

/* ==== The example of model.h, verbatim in its essentials ============================== */

static int header_example(const double *X, const double *y, double *losses, double *norms)
{
    dpc_model_config cfg;  dpc_model *m = NULL;  dpc_model_ws *ws = NULL;  dpc_error err = {0};
    double *w = NULL, *g = NULL;
    int rc = 1;
    if (dpc_model_parse(&cfg, "mlp:256:relu", 784, 10, &err) ||
        dpc_model_new(&m, &cfg, &err) || dpc_model_ws_new(&ws, m, 32, &err)) goto fail;
    w = calloc(dpc_model_num_params(m), sizeof *w);            // (P)
    g = calloc(dpc_model_num_params(m), sizeof *g);            // (P), zeroed
    if (!w || !g) goto fail;
    dpc_rng rng;  dpc_rng_seed(&rng, 1);
    if (dpc_model_init(m, w, &rng, 0, &err)) goto fail;
    // X (32, 784), y (32): one chunk; g += sum_i min(1, 1.0/||g_i||) g_i
    if (dpc_model_clipped_sum(m, w, X, y, 32, 1.0, g, losses, norms, ws, &err)) goto fail;
    rc = norm2(g, dpc_model_num_params(m)) <= 32.0 * (1 + 1e-12) ? 0 : 2;
fail:
    if (rc == 1) fprintf(stderr, "header example: %s\n", err.msg);
    free(w), free(g);
    dpc_model_ws_free(ws);  dpc_model_free(m);
    return rc;
}

static void test_header_example(void)
{
    double *X = dalloc(32 * 784), y[32], losses[32], norms[32];
    random_data(32, 784, 10, X, y, 31);
    CHECK(header_example(X, y, losses, norms) == 0, "header example runs, |sum| <= M * clip");
    int ok = 1;
    for (size_t i = 0; i < 32; i++) ok &= losses[i] > 0 && norms[i] > 0;
    CHECK(ok, "header example fills losses and norms");
    free(X);
}

/* The field table covers dpc_model_config; its defaults are dpc_model_parse's (the values the
 * parser wrote by hand before the table: bias 1, tanh, grid 5 on [-1, 1], the rest 0); the
 * single-field refusals of each kind go through it, naming the field, and a field a kind does
 * not use is not checked for it. */
static void test_field_table(void)
{
    dpc_error e = {0};
    const dpc_field_table *t = dpc_model_config_fields();
    CHECK(t && t->size == sizeof(dpc_model_config) && t->count == 15, "table of the struct");
    CHECK_OK(dpc_field_table_verify(t, &e), &e);
    CHECK(t->size == dpc_abi_sizeof("dpc_model_config"), "the table's size is the ABI's");
    dpc_model_config d, old, p;
    memset(&d, 0x5a, sizeof d);
    dpc_field_defaults(t, &d);
    memset(&old, 0, sizeof old);
    old.bias = 1, old.act = DPC_ACT_TANH, old.grid = 5, old.grid_lo = -1.0, old.grid_hi = 1.0;
    CHECK(!memcmp(&d, &old, sizeof d), "defaults are the parser's old ones");
    CHECK_OK(dpc_model_parse(&p, "linear", 5, 0, &e), &e);
    old.n_in = 5;
    CHECK(!memcmp(&p, &old, sizeof p), "parse('linear') = the defaults with n_in");
    const char *kinds[] = {"linear", "logistic", "softmax", "mlp", "kan", "cnn"};
    for (int k = 0; k < 6; k++)
        CHECK(!strcmp(dpc_field_enum_name(dpc_field_find(t, "kind", NULL), k), kinds[k]),
              "kind name %d", k);
    struct { const char *spec, *field; double v; } bad[] = {
        {"softmax", "kind", 6},      {"softmax", "isa", 4},       {"softmax", "bias", 2},
        {"mlp:4", "act", 2},         {"kan:4", "grid", 0},        {"kan:4", "grid", 257},
        {"cnn:conv4k3", "n_layers", 17}, {"cnn:conv4k3", "conv_norm", 3},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_OK(dpc_model_parse(&p, bad[i].spec, 64, 3, &e), &e);
        CHECK_OK(dpc_model_config_check(&p, &e), &e);
        CHECK_OK(dpc_field_set(dpc_field_find(t, bad[i].field, NULL), &p, bad[i].v, &e), &e);
        CHECK(dpc_model_config_check(&p, &e) == DPC_E_INVALID && !strcmp(e.field, bad[i].field),
              "%s: %s = %g refused: '%s'", bad[i].spec, bad[i].field, bad[i].v, e.msg);
    }
    /* fields a kind does not use keep their old freedom */
    CHECK_OK(dpc_model_parse(&p, "softmax", 64, 3, &e), &e);
    p.grid = 0, p.n_layers = 99, p.conv_norm = (dpc_conv_norm)7, p.act = (dpc_activation)9;
    CHECK_OK(dpc_model_config_check(&p, &e), &e);
}

int main(void)
{
    test_field_table();
    test_header_example();
    test_layout();
    test_parse();
    test_known_values();
    test_gradcheck();
    test_gemm_parity();
    test_fast_vs_naive();
    test_chunk_composition();
    test_threads();
    test_clipping();
    test_init();
    test_predict_evaluate();
    test_errors();
    return TEST_SUMMARY();
}
