/* test_model_batch.c — the two-phase batch clipped sum (dpc_model_batch_*) against its
 * reference, dpc_model_clipped_sum called chunk by chunk on a running total: bit for bit, for
 * every kind, bias on and off, batch sizes that do and do not divide into chunks, phase 1 run in
 * any chunk order, phase 2 cut into any number of parts run in any order; the per-chunk-sums
 * path of other kinds; the float32 path (against the double path to float accuracy, and bit for
 * bit against itself in any chunk order and part count); and the argument errors. */
#include "dpcorr/model.h"
#include "harness.h"
#include "model/internal.h"

#include <stdint.h>

static double *dalloc(size_t n)
{
    double *p = calloc(n ? n : 1, sizeof *p);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

static dpc_model *make_model(const char *spec, size_t D, size_t K)
{
    dpc_model_config cfg;
    dpc_model *m = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_model_parse(&cfg, spec, D, K, &err), &err);
    CHECK_OK(dpc_model_new(&m, &cfg, &err), &err);
    if (!m) exit(1);
    return m;
}

/* v (n) ~ sd * N(0, 1) from test stream `id`, row `row`. */
static void gauss(double *v, size_t n, double sd, uint64_t id, uint64_t row)
{
    dpc_rng rng;
    dpc_rng_seed(&rng, 99);
    dpc_rng_stream s = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_TEST, id));
    dpc_rng_gaussian_fill(&s, row, 0, v, n);
    for (size_t i = 0; i < n; i++) v[i] *= sd;
}

typedef struct {
    const char *spec;
    size_t D, K;
} bcase;

/* The reference: running total from g0 over the chunks in order. */
static void reference(const dpc_model *m, const double *w, const double *X, const double *y,
                      size_t n, size_t chunk, double clip, const double *g0, double *g,
                      double *loss, double *norm)
{
    size_t P = dpc_model_num_params(m), D = dpc_model_get_config(m)->n_in;
    dpc_error err = {0};
    memcpy(g, g0, P * sizeof *g);
    for (size_t i0 = 0; i0 < n; i0 += chunk) {
        size_t M = n - i0 < chunk ? n - i0 : chunk;
        CHECK_OK(dpc_model_clipped_sum(m, w, X + i0 * D, y + i0, M, clip, g, loss + i0,
                                       norm + i0, NULL, &err), &err);
    }
}

/* The batch path: phase 1 in reverse chunk order, phase 2 in nparts parts, last part first. */
static int batch_run(const dpc_model *m, dpc_model_batch *b, dpc_model_ws *ws, const double *w,
                     const double *X, const double *y, size_t n, size_t chunk, double clip,
                     size_t nparts, const double *g0, double *g, double *loss, double *norm)
{
    size_t P = dpc_model_num_params(m), D = dpc_model_get_config(m)->n_in;
    size_t nc = (n + chunk - 1) / chunk;
    dpc_error err = {0};
    for (size_t c = nc; c-- > 0;) {
        size_t i0 = c * chunk, M = n - i0 < chunk ? n - i0 : chunk;
        if (dpc_model_batch_grads(m, w, X + i0 * D, y + i0, M, i0, clip, b, ws, loss + i0,
                                  norm + i0, &err)) {
            fprintf(stderr, "phase 1: %s\n", err.msg);
            return 0;
        }
    }
    memcpy(g, g0, P * sizeof *g);
    for (size_t k = nparts; k-- > 0;) dpc_model_batch_sum(m, b, n, k, nparts, g);
    return 1;
}

static void test_equals_reference(void)
{
    static const bcase cases[] = {
        {"mlp:37,16:tanh", 21, 10}, {"mlp:24:relu", 13, 4},  {"mlp:9,3:tanh:nobias", 11, 3},
        {"softmax", 17, 5},         {"logistic", 9, 2},      {"linear", 7, 0},
        {"mlp:7:relu", 6, 0},       {"kan:5:grid=3", 6, 3},  {"kan:4,3", 5, 2},
    };
    static const size_t ns[] = {1, 31, 64, 70}, chunks[] = {1, 7, 32}, parts[] = {1, 2, 3, 5, 1000};
    int bad = 0, runs = 0;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        dpc_model *m = make_model(cases[c].spec, cases[c].D, cases[c].K);
        size_t P = dpc_model_num_params(m), D = cases[c].D, K = cases[c].K, nmax = 70;
        double *w = dalloc(P), *X = dalloc(nmax * D), *y = dalloc(nmax), *g0 = dalloc(P);
        double *gr = dalloc(P), *gb = dalloc(P), *lr = dalloc(nmax), *lb = dalloc(nmax);
        double *nr = dalloc(nmax), *nb = dalloc(nmax);
        gauss(w, P, 0.5, 1, c);
        gauss(X, nmax * D, 1.0, 2, c);
        gauss(g0, P, 3.0, 3, c); /* a running total that is not zero */
        for (size_t i = 0; i < nmax; i++) {
            double u = fabs(X[i * D]) * 1e3;
            y[i] = K >= 2 ? (double)((size_t)u % K) : X[i * D] + 0.5;
        }
        double clip = 0.7; /* the models' norms straddle it: both branches of the clip */
        for (int generic = 0; generic < 2; generic++)
            for (size_t a = 0; a < sizeof chunks / sizeof *chunks; a++) {
                dpc_model_batch *b = NULL;
                dpc_model_ws *ws = NULL;
                dpc_error err = {0};
                int mode = generic ? DPC__BATCH_GENERIC : DPC__BATCH_AUTO;
                CHECK_OK(dpc__batch_new(&b, m, nmax, chunks[a], mode, &err), &err);
                CHECK_OK(dpc_model_ws_new(&ws, m, chunks[a], &err), &err);
                for (size_t e = 0; e < sizeof ns / sizeof *ns; e++)
                    for (size_t k = 0; k < sizeof parts / sizeof *parts; k++) {
                        if (generic && k > 2) continue;
                        reference(m, w, X, y, ns[e], chunks[a], clip, g0, gr, lr, nr);
                        int ok = batch_run(m, b, ws, w, X, y, ns[e], chunks[a], clip, parts[k],
                                           g0, gb, lb, nb);
                        runs++;
                        if (!ok || memcmp(gr, gb, P * sizeof *gr) ||
                            memcmp(lr, lb, ns[e] * sizeof *lr) ||
                            memcmp(nr, nb, ns[e] * sizeof *nr)) {
                            bad++;
                            fprintf(stderr, "  %s%s n %zu chunk %zu parts %zu differs\n",
                                    cases[c].spec, generic ? " (generic)" : "", ns[e], chunks[a],
                                    parts[k]);
                        }
                    }
                dpc_model_ws_free(ws);
                dpc_model_batch_free(b);
            }
        free(w), free(X), free(y), free(g0), free(gr), free(gb), free(lr), free(lb), free(nr),
            free(nb);
        dpc_model_free(m);
    }
    CHECK(bad == 0 && runs > 500, "batch sums equal the chunk-by-chunk running total bit for bit "
                                  "(%d of %d runs differ)", bad, runs);
}

static void test_errors(void)
{
    dpc_model *m = make_model("mlp:5:tanh", 4, 3), *m2 = make_model("mlp:6:tanh", 4, 3);
    size_t P = dpc_model_num_params(m);
    double *w = dalloc(P), X[4 * 8] = {0}, y[8] = {0}, *g = dalloc(P);
    dpc_model_batch *b = NULL;
    dpc_model_ws *ws = NULL, *ws2 = NULL;
    dpc_error err = {0};
    CHECK(dpc_model_batch_new(&b, m, 0, 1, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "max_batch"), "max_batch 0: %s", err.msg);
    CHECK(dpc_model_batch_new(&b, m, 8, 9, &err) == DPC_E_INVALID && !strcmp(err.field, "chunk"),
          "chunk > max_batch: %s", err.msg);
    CHECK_OK(dpc_model_batch_new(&b, m, 8, 4, &err), &err);
    CHECK(dpc_model_batch_bytes(b) > 8 * (4 + 5 + 5 + 3) * sizeof(double), "bytes reported");
    CHECK_OK(dpc_model_ws_new(&ws, m, 4, &err), &err);
    CHECK_OK(dpc_model_ws_new(&ws2, m2, 4, &err), &err);
    CHECK(dpc_model_batch_grads(m, w, X, y, 4, 2, 1.0, b, ws, NULL, NULL, &err) == DPC_E_RANGE,
          "chunk start not a multiple of the chunk: %s", err.msg);
    CHECK(dpc_model_batch_grads(m, w, X, y, 5, 0, 1.0, b, ws, NULL, NULL, &err) == DPC_E_RANGE,
          "M > chunk: %s", err.msg);
    CHECK(dpc_model_batch_grads(m, w, X, y, 4, 8, 1.0, b, ws, NULL, NULL, &err) == DPC_E_RANGE,
          "beyond max_batch: %s", err.msg);
    CHECK(dpc_model_batch_grads(m2, w, X, y, 4, 0, 1.0, b, ws2, NULL, NULL, &err) ==
              DPC_E_INVALID, "model of another shape: %s", err.msg);
    CHECK(dpc_model_batch_grads(m, w, X, y, 4, 0, 1.0, b, ws2, NULL, NULL, &err) ==
              DPC_E_INVALID, "workspace of another shape: %s", err.msg);
    CHECK(dpc_model_batch_grads(m, w, X, y, 4, 0, -1.0, b, ws, NULL, NULL, &err) ==
              DPC_E_INVALID && !strcmp(err.field, "clip"), "clip < 0: %s", err.msg);
    CHECK(dpc_model_batch_grads(m, w, X, y, 4, 0, 1.0, b, NULL, NULL, NULL, &err) ==
              DPC_E_INVALID, "NULL workspace: %s", err.msg);
    w[3] = NAN; /* the chunk at 0 checks the parameters; the others see non-finite losses */
    CHECK(dpc_model_batch_grads(m, w, X, y, 4, 0, 1.0, b, ws, NULL, NULL, &err) ==
              DPC_E_INVALID && strstr(err.msg, "params[3]"), "bad parameter named: %s", err.msg);
    CHECK(dpc_model_batch_grads(m, w, X, y, 4, 4, 1.0, b, ws, NULL, NULL, &err) ==
              DPC_E_NUMERIC, "bad parameter, later chunk: %s", err.msg);
    w[3] = 0.0;
    y[2] = 7; /* not a class */
    CHECK(dpc_model_batch_grads(m, w, X, y, 4, 4, 1.0, b, ws, NULL, NULL, &err) ==
              DPC_E_INVALID && strstr(err.msg, "example 2"), "bad label named: %s", err.msg);
    /* phase 2 with nonsense arguments touches nothing */
    dpc_model_batch_sum(m, b, 4, 3, 3, g);
    dpc_model_batch_sum(m2, b, 4, 0, 1, g);
    int zero = 1;
    for (size_t p = 0; p < P; p++) zero &= g[p] == 0.0;
    CHECK(zero, "phase 2 ignores a part out of range and a model of another shape");
    dpc_model_batch_free(b);
    dpc_model_batch_free(NULL);
    dpc_model_ws_free(ws);
    dpc_model_ws_free(ws2);
    free(w), free(g);
    dpc_model_free(m);
    dpc_model_free(m2);
}

/* ==== float32 path ===================================================================== */

static void test_f32(void)
{
    static const bcase cases[] = {
        {"mlp:37,16:tanh", 21, 10}, {"mlp:24:relu", 13, 4}, {"mlp:9,3:tanh:nobias", 11, 3},
        {"softmax", 17, 5},         {"logistic", 9, 2},     {"linear", 7, 0},
    };
    size_t n = 70, chunk = 16;
    double worst = 0;
    int bad = 0, runs = 0;
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        dpc_model *m = make_model(cases[c].spec, cases[c].D, cases[c].K);
        size_t P = dpc_model_num_params(m), D = cases[c].D, K = cases[c].K;
        double *w = dalloc(P), *X = dalloc(n * D), *y = dalloc(n), *g0 = dalloc(P), *gd = dalloc(P);
        double *ld = dalloc(n), *nd = dalloc(n), *lf = dalloc(n), *nf = dalloc(n);
        float *w32 = calloc(P, sizeof *w32), *X32 = calloc(n * D, sizeof *X32);
        float *g1 = calloc(P, sizeof *g1), *g2 = calloc(P, sizeof *g2);
        gauss(w, P, 0.5, 11, c);
        gauss(X, n * D, 1.0, 12, c);
        for (size_t p = 0; p < P; p++) w[p] = w32[p] = (float)w[p]; /* representable in both */
        for (size_t i = 0; i < n * D; i++) X[i] = X32[i] = (float)X[i];
        for (size_t i = 0; i < n; i++) y[i] = K >= 2 ? (double)(i * 5 % K) : X[i * D];
        double clip = 0.7;
        reference(m, w, X, y, n, chunk, clip, g0, gd, ld, nd); /* double, from zero */
        dpc_model_batch *b = NULL;
        dpc_model_ws *ws = NULL;
        dpc_error err = {0};
        CHECK_OK(dpc_model_batch_new_f32(&b, m, n, chunk, &err), &err);
        CHECK_OK(dpc_model_ws_new(&ws, m, chunk, &err), &err);
        for (int order = 0; order < 2 && b && ws; order++) {
            size_t nc = (n + chunk - 1) / chunk;
            for (size_t k = 0; k < nc; k++) {
                size_t cc = order ? nc - 1 - k : k, i0 = cc * chunk;
                size_t M = n - i0 < chunk ? n - i0 : chunk;
                CHECK_OK(dpc_model_batch_grads_f32(m, w32, X32 + i0 * D, y + i0, M, i0, clip, b, ws,
                                                   lf + i0, nf + i0, &err), &err);
            }
            float *g = order ? g2 : g1;
            size_t parts = order ? 3 : 1;
            for (size_t q = parts; q-- > 0;) dpc_model_batch_sum_f32(m, b, n, q, parts, g);
        }
        runs++;
        bad += memcmp(g1, g2, P * sizeof *g1) != 0;
        /* float accuracy against the double path: relative to the largest entry */
        /* (relative to the largest gradient entry, loss and norm: float rounding of a logit is
         * relative to the logit, so a small residual can lose digits) */
        double mx = 0, mn = 0, dg = 0, dl = 0, dn = 0, dev;
        for (size_t p = 0; p < P; p++) mx = fmax(mx, fabs(gd[p]));
        for (size_t i = 0; i < n; i++) mn = fmax(mn, nd[i]);
        for (size_t p = 0; p < P; p++) dg = fmax(dg, fabs(gd[p] - g1[p]) / mx);
        for (size_t i = 0; i < n; i++) {
            dl = fmax(dl, fabs(lf[i] - ld[i]) / fmax(1.0, fabs(ld[i])));
            dn = fmax(dn, fabs(nf[i] - nd[i]) / mn);
        }
        dev = fmax(dg, fmax(dl, dn));
        if (dev > 2e-5)
            fprintf(stderr, "  %s: grad %g loss %g norm %g\n", cases[c].spec, dg, dl, dn);
        if (dev > worst) worst = dev;
        CHECK(dev < 2e-5, "%s: float32 vs double %g", cases[c].spec, dev);
        dpc_model_ws_free(ws);
        dpc_model_batch_free(b);
        free(w), free(X), free(y), free(g0), free(gd), free(ld), free(nd), free(lf), free(nf);
        free(w32), free(X32), free(g1), free(g2);
        dpc_model_free(m);
    }
    CHECK(bad == 0 && runs == 6, "float32 sums the same bits in any chunk order and part count "
                                 "(%d of %d differ; worst deviation from double %g)", bad, runs,
          worst);
    /* kinds without a float32 path, and precision names */
    dpc_model *kan = make_model("kan:4", 5, 3);
    dpc_model_batch *b = NULL;
    dpc_error err = {0};
    CHECK(!dpc_model_has_f32(kan) &&
              dpc_model_batch_new_f32(&b, kan, 8, 4, &err) == DPC_E_UNSUPPORTED &&
              !strcmp(err.field, "precision") && !b, "kan has no float32 path: %s", err.msg);
    {
        /* the one refusal (trainer, float32 batch, front ends): the same status and message */
        dpc_error e2 = {0};
        dpc_model *lin = make_model("logistic", 5, 2);
        CHECK(dpc_model_precision_check(kan, DPC_PRECISION_FLOAT32, &e2) == DPC_E_UNSUPPORTED &&
                  !strcmp(e2.field, "precision") && !strcmp(e2.msg, err.msg) &&
                  dpc_model_precision_check(kan, DPC_PRECISION_DOUBLE, &e2) == DPC_OK &&
                  dpc_model_precision_check(lin, DPC_PRECISION_FLOAT32, &e2) == DPC_OK,
              "dpc_model_precision_check: float32 refused for kan only, as the batch refuses it");
        dpc_model_free(lin);
    }
    dpc_precision pr;
    CHECK(dpc_precision_parse("float32", &pr, &err) == DPC_OK && pr == DPC_PRECISION_FLOAT32 &&
              dpc_precision_parse("double", &pr, &err) == DPC_OK && pr == DPC_PRECISION_DOUBLE &&
              !strcmp(dpc_precision_name(DPC_PRECISION_FLOAT32), "float32"), "precision names");
    CHECK(dpc_precision_parse("half", &pr, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "precision"),
          "unknown precision refused: %s", err.msg);
    dpc_model_free(kan);
}

int main(void)
{
    test_equals_reference();
    test_errors();
    test_f32();
    return TEST_SUMMARY();
}
