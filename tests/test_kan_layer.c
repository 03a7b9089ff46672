/* test_kan_layer.c — the practical KAN (model kind DPC_MODEL_KAN): spec parsing and layout, a
 * forward pass recomputed from the basis by hand, central finite differences, fast vs naive
 * (losses and per-example gradients bit for bit, clipped sums), chunk-composition
 * independence, the clipping invariant, initialisation, predict/evaluate, errors, and the DP
 * trainer with several mechanisms (1 vs 2 threads bit-identical). */
#include "dpcorr/papers/kan.h"
#include "dpcorr/model.h"
#include "dpcorr/train.h"
#include "harness.h"

static double *dalloc(size_t n)
{
    double *p = calloc(n ? n : 1, sizeof *p);
    if (!p) exit(1);
    return p;
}

static dpc_model *make(const char *spec, size_t D, size_t K)
{
    dpc_model_config c;
    dpc_model *m = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_model_parse(&c, spec, D, K, &err), &err);
    CHECK_OK(dpc_model_new(&m, &c, &err), &err);
    if (!m) exit(1);
    return m;
}

static void random_vec(double *v, size_t n, double sd, uint64_t seed, uint64_t row)
{
    dpc_rng rng;
    dpc_rng_seed(&rng, seed);
    dpc_rng_stream s = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_TEST, 3));
    dpc_rng_gaussian_fill(&s, row, 0, v, n);
    for (size_t i = 0; i < n; i++) v[i] *= sd;
}

static void random_labels(double *y, size_t n, size_t K, uint64_t seed)
{
    dpc_rng rng;
    dpc_rng_seed(&rng, seed);
    dpc_rng_stream s = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_TEST, 4));
    for (size_t i = 0; i < n; i++)
        y[i] = K >= 2 ? (double)dpc_rng_below(&s, 0, i, K) : dpc_rng_gaussian(&s, 1, i);
}

static void test_parse_layout(void)
{
    dpc_error err = {0};
    struct { const char *spec, *canon; } ok[] = {
        {"kan:64", "kan:64:grid=5"},
        {"kan:8,4:grid=3:range=0,1:nobias", "kan:8,4:grid=3:range=0,1:nobias"},
        {"kan:5:nobias:grid=12", "kan:5:grid=12:nobias"},
        {"kan:7:tanh:range=-2.5,0.5", "kan:7:grid=5:range=-2.5,0.5"},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        dpc_model_config c, c2;
        CHECK_OK(dpc_model_parse(&c, ok[i].spec, 6, 3, &err), &err);
        char buf[DPC_MODEL_SPEC_LEN];
        dpc_model_format_spec(&c, buf, sizeof buf);
        CHECK(!strcmp(buf, ok[i].canon), "format '%s' -> '%s' (want '%s')", ok[i].spec, buf, ok[i].canon);
        CHECK_OK(dpc_model_parse(&c2, buf, 6, 3, &err), &err);
        CHECK(c2.grid == c.grid && c2.grid_lo == c.grid_lo && c2.grid_hi == c.grid_hi &&
                  c2.n_hidden == c.n_hidden && c2.bias == c.bias && c2.kind == DPC_MODEL_KAN,
              "round trip '%s'", buf);
    }
    struct { const char *spec; const char *needle; } bad[] = {
        {"kan", "hidden layer widths"}, {"kan:", "hidden width"}, {"kan:4:grid=0", "grid '0'"},
        {"kan:4:grid=x", "grid 'x'"}, {"kan:4:grid=257", "grid '257'"},
        {"kan:4:range=1,0", "range '1,0'"}, {"kan:4:range=0", "range '0'"},
        {"kan:4:range=a,1", "range"}, {"kan:4:relu", "fixed tanh"},
        {"kan:4:grid=3:grid=4", "grid given twice"}, {"kan:4:foo", "unknown option 'foo'"},
        {"mlp:4:grid=3", "unknown option 'grid=3'"}, {"softmax:range=0,1", "unknown option"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dpc_model_config c;
        dpc_error e = {0};
        dpc_status st = dpc_model_parse(&c, bad[i].spec, 6, 3, &e);
        CHECK(st == DPC_E_INVALID && strstr(e.msg, bad[i].needle) && strstr(e.msg, "model spec"),
              "bad '%s': %d '%s'", bad[i].spec, (int)st, e.msg);
    }
    /* direct configs: zero grid is rejected, relu is rejected */
    dpc_model_config c = {0};
    c.kind = DPC_MODEL_KAN, c.n_in = 3, c.n_classes = 2, c.n_hidden = 1, c.hidden[0] = 4, c.bias = 1;
    dpc_error e = {0};
    CHECK(dpc_model_config_check(&c, &e) == DPC_E_INVALID && strstr(e.msg, "grid"), "grid 0: %s", e.msg);
    c.grid = 3, c.grid_lo = -1, c.grid_hi = 1, c.act = DPC_ACT_RELU;
    CHECK(dpc_model_config_check(&c, &e) == DPC_E_INVALID && strstr(e.msg, "tanh"), "relu: %s", e.msg);
    /* layout: W<l> (out, in (G + 4)), b<l> (out) */
    dpc_model *m = make("kan:5,4:grid=3", 6, 3);
    size_t F = 3 + 4;
    CHECK(dpc_model_num_params(m) == 5 * 6 * F + 5 + 4 * 5 * F + 4 + 3 * 4 * F + 3, "P = %zu",
          dpc_model_num_params(m));
    CHECK(dpc_model_num_tensors(m) == 6 && dpc_model_num_outputs(m) == 3, "tensors, outputs");
    const dpc_model_tensor *t = dpc_model_tensor_at(m, 2);
    CHECK(!strcmp(t->name, "W1") && t->rows == 4 && t->cols == 5 * F && t->offset == 5 * 6 * F + 5,
          "W1 view");
    dpc_model_free(m);
    m = make("kan:256", 784, 10);
    CHECK(dpc_model_num_params(m) == 256 * 784 * 9 + 256 + 10 * 256 * 9 + 10, "FMNIST kan:256 P");
    dpc_model_free(m);
}

/* z recomputed from the basis and silu directly, for a 1-hidden-layer KAN */
static void test_known_values(void)
{
    dpc_error err = {0};
    size_t D = 3, H = 2, K = 2, G = 4, p = G + 3, F = p + 1;
    dpc_model *m = make("kan:2:grid=4:range=-0.5,2", D, K);
    size_t P = dpc_model_num_params(m);
    double *w = dalloc(P), x[3] = {0.3, 1.7, -0.8}, y = 1, out[2];
    random_vec(w, P, 0.5, 5, 0);
    dpc_bspline s0, s1;
    CHECK_OK(dpc_bspline_init(&s0, G, -0.5, 2, &err), &err);
    CHECK_OK(dpc_bspline_init(&s1, G, -1, 1, &err), &err);
    double bv[8], a1[2], z[2];
    const double *W0 = w, *b0 = w + H * D * F, *W1 = b0 + H, *b1 = W1 + K * H * F;
    for (size_t o = 0; o < H; o++) {
        double acc = b0[o];
        for (size_t i = 0; i < D; i++) {
            dpc_bspline_eval_all(&s0, x[i], bv, NULL, NULL);
            acc += W0[o * D * F + i * F] * x[i] / (1 + exp(-x[i]));
            for (size_t k = 0; k < p; k++) acc += W0[o * D * F + i * F + 1 + k] * bv[k];
        }
        a1[o] = tanh(acc);
    }
    for (size_t o = 0; o < K; o++) {
        double acc = b1[o];
        for (size_t i = 0; i < H; i++) {
            dpc_bspline_eval_all(&s1, a1[i], bv, NULL, NULL);
            acc += W1[o * H * F + i * F] * a1[i] / (1 + exp(-a1[i]));
            for (size_t k = 0; k < p; k++) acc += W1[o * H * F + i * F + 1 + k] * bv[k];
        }
        z[o] = acc;
    }
    double mx = fmax(z[0], z[1]), want = mx + log(exp(z[0] - mx) + exp(z[1] - mx)) - z[1];
    double loss, *g = dalloc(P);
    CHECK_OK(dpc_model_loss_grad(m, w, x, y, &loss, g, &err), &err);
    CHECK_NEAR_REL(loss, want, 1e-13, "softmax loss from the hand-built forward pass");
    CHECK_OK(dpc_model_predict(m, w, x, 1, out, NULL, &err), &err);
    CHECK_NEAR_REL(out[1], 1 / (1 + exp(z[0] - z[1])), 1e-13, "predicted probability");
    free(w), free(g);
    dpc_model_free(m);
}

static double loss_at(const dpc_model *m, const double *w, const double *x, double y, double *g)
{
    double l = NAN;
    dpc_error err = {0};
    CHECK_OK(dpc_model_loss_grad(m, w, x, y, &l, g, &err), &err);
    return l;
}

static const struct { const char *spec; size_t D, K; double xs; } CASES[] = {
    {"kan:4:grid=3", 5, 3, 0.7},          {"kan:3,4:grid=5:nobias", 4, 2, 0.9},
    {"kan:5:grid=4:range=0,1", 6, 0, 0.4}, {"kan:3:grid=2", 3, 1, 2.0}, /* inputs beyond the grid */
    {"kan:6,3,2:grid=6", 4, 4, 0.5},
};
#define NC (sizeof CASES / sizeof CASES[0])

static void test_gradcheck(void)
{
    for (size_t c = 0; c < NC; c++) {
        dpc_model *m = make(CASES[c].spec, CASES[c].D, CASES[c].K);
        size_t P = dpc_model_num_params(m), D = CASES[c].D;
        double *w = dalloc(P), *g = dalloc(P), *tmp = dalloc(P), X[3 * 8], y[3];
        dpc_rng rng;
        dpc_rng_seed(&rng, 3 + c);
        dpc_error err = {0};
        CHECK_OK(dpc_model_init(m, w, &rng, 0, &err), &err);
        random_vec(tmp, P, 0.3, 40 + c, 1);
        for (size_t q = 0; q < P; q++) w[q] += tmp[q]; /* spline coefficients away from 0 */
        random_vec(X, 3 * D, CASES[c].xs, 50 + c, 2);
        random_labels(y, 3, CASES[c].K, 60 + c);
        double worst = 0;
        for (size_t i = 0; i < 3; i++) {
            loss_at(m, w, X + i * D, y[i], g);
            double num = 0, den = 0;
            for (size_t q = 0; q < P; q++) {
                double keep = w[q], h = 1e-6;
                w[q] = keep + h;
                double fp = loss_at(m, w, X + i * D, y[i], tmp);
                w[q] = keep - h;
                double fm = loss_at(m, w, X + i * D, y[i], tmp);
                w[q] = keep;
                double fd = (fp - fm) / (2 * h);
                num += (fd - g[q]) * (fd - g[q]);
                den += g[q] * g[q];
            }
            double e = sqrt(num / (den > 0 ? den : 1));
            if (!(e <= worst)) worst = e;
        }
        CHECK(worst < 1e-6, "%s: finite-difference error %g", CASES[c].spec, worst);
        /* the check can fail */
        g[P / 3] += 1e-3 * (1 + fabs(g[P / 3]));
        double keep = w[P / 3], h = 1e-6;
        w[P / 3] = keep + h;
        double fp = loss_at(m, w, X, y[0], tmp);
        w[P / 3] = keep - h;
        double fm = loss_at(m, w, X, y[0], tmp);
        w[P / 3] = keep;
        loss_at(m, w, X, y[0], tmp);
        CHECK(fabs((fp - fm) / (2 * h) - (tmp[P / 3] + 1e-3 * (1 + fabs(tmp[P / 3])))) > 1e-4,
              "perturbed gradient detected");
        free(w), free(g), free(tmp);
        dpc_model_free(m);
    }
}

static void test_fast_vs_naive_and_chunks(void)
{
    dpc_error err = {0};
    for (size_t c = 0; c < NC; c++) {
        dpc_model *m = make(CASES[c].spec, CASES[c].D, CASES[c].K);
        size_t P = dpc_model_num_params(m), D = CASES[c].D, n = 40;
        double *w = dalloc(P), *X = dalloc(n * D), *y = dalloc(n), *G = dalloc(n * P);
        double *g = dalloc(P), l1[40], l2[40], n1[40], n2[40];
        dpc_rng rng;
        dpc_rng_seed(&rng, 90 + c);
        CHECK_OK(dpc_model_init(m, w, &rng, 0, &err), &err);
        random_vec(X, n * D, CASES[c].xs, 70 + c, 3);
        random_labels(y, n, CASES[c].K, 80 + c);
        dpc_model_ws *ws = NULL;
        CHECK_OK(dpc_model_ws_new(&ws, m, 40, &err), &err);
        CHECK_OK(dpc_model_per_example_grads(m, w, X, y, n, G, l1, ws, &err), &err);
        int same = 1;
        for (size_t i = 0; i < n; i++) {
            double l;
            CHECK_OK(dpc_model_loss_grad(m, w, X + i * D, y[i], &l, g, &err), &err);
            same &= l == l1[i] && memcmp(g, G + i * P, P * sizeof *g) == 0;
        }
        CHECK(same, "%s: per-example losses and gradients: fast == naive bit for bit", CASES[c].spec);
        /* clipped sum at clip = inf is bit-identical; norms agree to rounding */
        double *s1 = dalloc(P), *s2 = dalloc(P);
        CHECK_OK(dpc_model_clipped_sum(m, w, X, y, n, INFINITY, s1, l1, n1, ws, &err), &err);
        CHECK_OK(dpc_model_clipped_sum_naive(m, w, X, y, n, INFINITY, s2, l2, n2, &err), &err);
        CHECK(memcmp(s1, s2, P * sizeof *s1) == 0, "%s: unclipped sum bit for bit", CASES[c].spec);
        double worst = 0;
        for (size_t i = 0; i < n; i++) worst = fmax(worst, fabs(n1[i] - n2[i]) / n2[i]);
        CHECK(worst < 1e-13, "%s: ghost norm vs materialized %g", CASES[c].spec, worst);
        /* chunks of 1, 7, 32: identical norms/losses; running total == per-chunk buffers */
        double clip = n1[n / 2];
        static const size_t chunks[] = {1, 7, 32};
        double *ref = NULL;
        for (int a = 0; a < 3; a++) {
            double *tot = dalloc(P), *acc = dalloc(P), *cs = dalloc(P), ln[40], nn[40];
            for (size_t i0 = 0; i0 < n; i0 += chunks[a]) {
                size_t M = n - i0 < chunks[a] ? n - i0 : chunks[a];
                memset(cs, 0, P * sizeof *cs);
                CHECK_OK(dpc_model_clipped_sum(m, w, X + i0 * D, y + i0, M, clip, cs, ln + i0,
                                               nn + i0, ws, &err), &err);
                for (size_t q = 0; q < P; q++) tot[q] += cs[q];
                CHECK_OK(dpc_model_clipped_sum(m, w, X + i0 * D, y + i0, M, clip, acc, NULL,
                                               NULL, ws, &err), &err);
            }
            CHECK(memcmp(tot, acc, P * sizeof *tot) == 0, "%s chunk %zu: running total == buffers",
                  CASES[c].spec, chunks[a]);
            CHECK(memcmp(ln, l1, sizeof ln) == 0 && memcmp(nn, n1, sizeof nn) == 0,
                  "%s chunk %zu: losses and norms independent of the chunk", CASES[c].spec, chunks[a]);
            if (!ref) ref = tot;
            else {
                double md = 0, mx = 0;
                for (size_t q = 0; q < P; q++) md = fmax(md, fabs(tot[q] - ref[q])), mx = fmax(mx, fabs(ref[q]));
                CHECK(md <= 1e-13 * mx, "%s: chunked sums agree to rounding", CASES[c].spec);
                free(tot);
            }
            free(acc), free(cs);
        }
        /* naive clipped sum at a finite clip: to rounding */
        memset(s1, 0, P * sizeof *s1);
        memset(s2, 0, P * sizeof *s2);
        CHECK_OK(dpc_model_clipped_sum(m, w, X, y, n, clip, s1, NULL, NULL, ws, &err), &err);
        CHECK_OK(dpc_model_clipped_sum_naive(m, w, X, y, n, clip, s2, NULL, NULL, &err), &err);
        double md = 0, mx = 0;
        for (size_t q = 0; q < P; q++) md = fmax(md, fabs(s1[q] - s2[q])), mx = fmax(mx, fabs(s2[q]));
        CHECK(md <= 1e-12 * mx, "%s: clipped fast vs naive %g", CASES[c].spec, md / mx);
        /* each contribution has norm <= clip */
        int ok = 1;
        for (size_t i = 0; i < n; i++) {
            memset(s1, 0, P * sizeof *s1);
            CHECK_OK(dpc_model_clipped_sum(m, w, X + i * D, y + i, 1, clip, s1, NULL, NULL, ws, &err), &err);
            double s = 0;
            for (size_t q = 0; q < P; q++) s += s1[q] * s1[q];
            ok &= sqrt(s) <= clip * (1 + 1e-13);
        }
        CHECK(ok, "%s: clipped contributions <= clip", CASES[c].spec);
        /* evaluate = mean of the losses; predict rows are distributions (classifiers) */
        double ml, acc;
        CHECK_OK(dpc_model_evaluate(m, w, X, y, n, &ml, &acc, NULL, &err), &err);
        double tl = 0;
        for (size_t i = 0; i < n; i++) tl += l1[i];
        CHECK_NEAR_REL(ml, tl / (double)n, 1e-13, "%s: evaluate", CASES[c].spec);
        size_t K = dpc_model_num_outputs(m);
        double *pr = dalloc(n * K);
        CHECK_OK(dpc_model_predict(m, w, X, n, pr, NULL, &err), &err);
        if (CASES[c].K >= 2) {
            double wsum = 0;
            for (size_t i = 0; i < n; i++) {
                double s = 0;
                for (size_t k = 0; k < K; k++) s += pr[i * K + k];
                wsum = fmax(wsum, fabs(s - 1));
            }
            CHECK(wsum < 1e-14 && !isnan(acc), "%s: probabilities", CASES[c].spec);
        } else {
            CHECK(isnan(acc), "%s: regression accuracy NaN", CASES[c].spec);
        }
        free(pr), free(ref), free(s1), free(s2);
        dpc_model_ws_free(ws);
        free(w), free(X), free(y), free(G), free(g);
        dpc_model_free(m);
    }
}

static void test_init_errors(void)
{
    dpc_error err = {0};
    dpc_model *m = make("kan:4,3:grid=3", 5, 2);
    size_t P = dpc_model_num_params(m), F = 7;
    double *w = dalloc(P), *w2 = dalloc(P);
    dpc_rng rng;
    dpc_rng_seed(&rng, 12);
    CHECK_OK(dpc_model_init(m, w, &rng, 3, &err), &err);
    CHECK_OK(dpc_model_init(m, w2, &rng, 3, &err), &err);
    CHECK(memcmp(w, w2, P * sizeof *w) == 0, "deterministic");
    dpc_rng_stream s = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_INIT, 3));
    double sd = sqrt(2.0 / 9.0);
    CHECK(w[0] == sd * dpc_rng_gaussian(&s, 0, 0) && w[1] == 0.1 * sd * dpc_rng_gaussian(&s, 0, 1),
          "base and spline scales, counter layout");
    CHECK(w[4 * 5 * F] == 0 && w[4 * 5 * F + 3] == 0, "biases 0");
    /* errors */
    double X[5] = {0.1, NAN, 0, 0, 0}, y = 1, g[1];
    dpc_error e = {0};
    double *gs = dalloc(P);
    CHECK(dpc_model_clipped_sum(m, w, X, &y, 1, 1, gs, NULL, NULL, NULL, &e) == DPC_E_INVALID &&
              strstr(e.msg, "x[1]"), "NaN feature: %s", e.msg);
    X[1] = 0;
    y = 2;
    CHECK(dpc_model_clipped_sum(m, w, X, &y, 1, 1, gs, NULL, NULL, NULL, &e) == DPC_E_INVALID &&
              strstr(e.msg, "label"), "label 2: %s", e.msg);
    y = 1;
    w[7] = INFINITY;
    CHECK(dpc_model_clipped_sum(m, w, X, &y, 1, 1, gs, NULL, NULL, NULL, &e) == DPC_E_INVALID &&
              strstr(e.msg, "W0[0][7]"), "inf param: %s", e.msg);
    w[7] = 0;
    dpc_model *mlp = make("mlp:4,3", 5, 2);
    dpc_model_ws *ws = NULL;
    CHECK_OK(dpc_model_ws_new(&ws, mlp, 4, &err), &err);
    CHECK(dpc_model_clipped_sum(m, w, X, &y, 1, 1, gs, NULL, NULL, ws, &e) == DPC_E_INVALID &&
              strstr(e.msg, "another shape"), "mlp workspace for a kan: %s", e.msg);
    dpc_model_ws_free(ws);
    dpc_model_free(mlp);
    int zero = 1;
    for (size_t q = 0; q < P; q++) zero &= gs[q] == 0;
    CHECK(zero, "nothing written on error");
    (void)g;
    free(w), free(w2), free(gs);
    dpc_model_free(m);
}

/* the DP trainer with a KAN and several mechanisms; 1 vs 2 threads bit-identical */
static void test_trainer(void)
{
    dpc_error err = {0};
    dpc_rng rng;
    dpc_rng_seed(&rng, 4);
    dpc_dataset *tr = NULL, *te = NULL;
    CHECK_OK(dpc_data_synth_logistic(&tr, &rng, 0, 1200, 6, 0.3, 0.0, NULL, &err), &err);
    CHECK_OK(dpc_data_synth_logistic(&te, &rng, 1, 400, 6, 0.3, 0.0, NULL, &err), &err);
    CHECK_OK(dpc_dataset_clip_rows(tr, 1.0, &err), &err);
    CHECK_OK(dpc_dataset_clip_rows(te, 1.0, &err), &err);
    dpc_model *m = make("kan:8:grid=4", 6, 2);
    const struct { dpc_mech_kind kind; double lambda; size_t bands; } mechs[] = {
        {DPC_MECH_IDENTITY, 0, 0}, {DPC_MECH_LCGD, 0.5, 0}, {DPC_MECH_BISR, 0, 4}, {DPC_MECH_NU, 0, 0}};
    for (size_t k = 0; k < sizeof mechs / sizeof mechs[0]; k++) {
        uint64_t hash[2];
        double acc = NAN;
        for (size_t th = 1; th <= 2; th++) {
            dpc_train_config c;
            dpc_train_config_init(&c);
            c.mech.kind = mechs[k].kind;
            c.mech.lambda = mechs[k].lambda;
            c.mech.bands = mechs[k].bands;
            c.mech.nu = 0.05;
            c.sampler = mechs[k].kind == DPC_MECH_IDENTITY ? DPC_SAMPLER_POISSON : DPC_SAMPLER_FIXED;
            c.batch = 100, c.epochs = 3, c.epsilon = 4, c.delta = 1e-5, c.clip = 1, c.lr = 1.0;
            c.threads = th, c.chunk = 16;
            c.accountant = DPC_ACCOUNTANT_RDP; /* PLD is slower; the route is what matters here */
            dpc_trainer *t = NULL;
            CHECK_OK(dpc_trainer_new(&t, m, tr, te, &c, &rng, &err), &err);
            if (!t) continue;
            while (dpc_trainer_steps_done(t) < dpc_trainer_steps_total(t))
                CHECK_OK(dpc_trainer_step(t, NULL, &err), &err);
            double loss;
            CHECK_OK(dpc_trainer_evaluate(t, te, &loss, &acc, &err), &err);
            hash[th - 1] = dpc_trainer_params_hash(t);
            dpc_trainer_free(t);
        }
        CHECK(hash[0] == hash[1], "%s: 1 vs 2 threads bit-identical", dpc_mech_kind_name(mechs[k].kind));
        CHECK(acc > 0.6, "%s: private KAN learns (accuracy %g)", dpc_mech_kind_name(mechs[k].kind), acc);
    }
    dpc_model_free(m);
    dpc_dataset_free(tr);
    dpc_dataset_free(te);
}

int main(void)
{
    test_parse_layout();
    test_known_values();
    test_gradcheck();
    test_fast_vs_naive_and_chunks();
    test_init_errors();
    test_trainer();
    return TEST_SUMMARY();
}
