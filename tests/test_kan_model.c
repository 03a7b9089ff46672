/* test_kan_model.c — the paper's two-layer KAN (note 004 §1, oracles 2-4): central finite
 * differences of f and l against the rank-one gradient alpha h^T, the ghost-norm identity
 * ||alpha|| ||h|| = ||materialized gradient||_F, the block-diagonal Hessian beta_j h h^T, the
 * gradient bound of Lemma B.6 on the event E_delta, self-bounding ||grad L_S||^2 <= 4 beta L_S,
 * fast vs naive clipped sums, initialization, the NTK margin, and input validation. */
#include "dpcorr/papers/kan.h"
#include "harness.h"

static double *dalloc(size_t n)
{
    double *p = calloc(n ? n : 1, sizeof *p);
    if (!p) exit(1);
    return p;
}

/* n points uniform in the unit ball (independent of the library's generator), labels +-1. */
static void ball_data(size_t n, size_t d, double *X, double *y, uint64_t seed)
{
    dpc_rng rng;
    dpc_rng_seed(&rng, seed);
    dpc_rng_stream s = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_TEST, 7));
    for (size_t i = 0; i < n; i++) {
        double g2 = 0;
        for (size_t j = 0; j < d; j++) {
            X[i * d + j] = dpc_rng_gaussian(&s, i, j);
            g2 += X[i * d + j] * X[i * d + j];
        }
        double r = pow(dpc_rng_uniform(&s, i, d), 1.0 / (double)d) / sqrt(g2);
        for (size_t j = 0; j < d; j++) X[i * d + j] *= r * (1 - 1e-12);
        y[i] = dpc_rng_uniform(&s, i, d + 1) < 0.5 ? -1.0 : 1.0;
    }
}

static dpc_kan2 *make(size_t d, size_t m, size_t G, dpc_kan_act act, uint64_t seed, double **W)
{
    dpc_kan2_config c = {d, m, G, act};
    dpc_kan2 *k = NULL;
    dpc_error err = {0};
    dpc_rng rng;
    dpc_rng_seed(&rng, seed);
    CHECK_OK(dpc_kan2_new(&k, &c, &rng, 0, &err), &err);
    if (!k) exit(1);
    *W = dalloc(dpc_kan2_num_params(k));
    CHECK_OK(dpc_kan2_init(k, *W, &rng, 0, &err), &err);
    return k;
}

static double f_at(const dpc_kan2 *k, const double *W, const double *x)
{
    double f = NAN;
    dpc_error err = {0};
    CHECK_OK(dpc_kan2_forward(k, W, x, &f, NULL, NULL, &err), &err);
    return f;
}

/* oracle 2: FD on f and l, rank one, ghost norm, Hessian blocks */
static void test_gradients(void)
{
    dpc_error err = {0};
    for (int a = 0; a < 2; a++) {
        double *W;
        size_t d = 3, m = 5, G = 4;
        dpc_kan2 *k = make(d, m, G, a ? DPC_KAN_TANH : DPC_KAN_SIGMOID, 11 + a, &W);
        size_t P = dpc_kan2_num_params(k), p = G + 3, dp = d * p;
        CHECK(P == m * d * p, "P = m d p");
        double X[4 * 3], y[4];
        ball_data(4, d, X, y, 3 + a);
        for (size_t q = 0; q < P; q++) W[q] *= 1.7; /* away from W_0 too */
        double *g = dalloc(P), *Wp = dalloc(P), *h = dalloc(dp), alpha[5], beta[5];
        double worst_f = 0, worst_l = 0, worst_rank = 0, worst_h = 0, cross = 0;
        for (size_t i = 0; i < 4; i++) {
            const double *x = X + i * d;
            double f, hn, loss;
            CHECK_OK(dpc_kan2_forward(k, W, x, &f, alpha, &hn, &err), &err);
            CHECK_OK(dpc_kan2_features(k, x, h, &err), &err);
            CHECK_OK(dpc_kan2_loss_grad(k, W, x, y[i], &loss, g, &err), &err);
            CHECK_NEAR_REL(loss, log1p(exp(-y[i] * f)), 1e-14, "loss = log(1 + e^-yf)");
            double l1 = -1.0 / (1.0 + exp(y[i] * f));
            /* ghost norm */
            double an = 0, gn = 0;
            for (size_t j = 0; j < m; j++) an += alpha[j] * alpha[j];
            for (size_t q = 0; q < P; q++) gn += g[q] * g[q];
            CHECK_NEAR_REL(sqrt(gn), fabs(l1) * sqrt(an) * hn, 1e-13, "ghost norm");
            double hh = 0;
            for (size_t q = 0; q < dp; q++) hh += h[q] * h[q];
            CHECK_NEAR_REL(sqrt(hh), hn, 1e-14, "||h||");
            /* FD of f and l in every coordinate: grad f = alpha h^T */
            for (size_t q = 0; q < P; q++) {
                double e = 1e-5;
                memcpy(Wp, W, P * sizeof *W);
                Wp[q] += e;
                double fp = f_at(k, Wp, x);
                Wp[q] -= 2 * e;
                double fm = f_at(k, Wp, x);
                double fd = (fp - fm) / (2 * e), an_ = alpha[q / dp] * h[q % dp];
                if (fabs(fd - an_) > worst_f) worst_f = fabs(fd - an_);
                double fdl = (log1p(exp(-y[i] * fp)) - log1p(exp(-y[i] * fm))) / (2 * e);
                if (fabs(fdl - g[q]) > worst_l) worst_l = fabs(fdl - g[q]);
                double r1 = fabs(g[q] - l1 * y[i] * alpha[q / dp] * h[q % dp]);
                if (r1 > worst_rank) worst_rank = r1;
            }
            /* Hessian: FD of grad f, block j = beta_j h h^T, other blocks exactly 0 */
            CHECK_OK(dpc_kan2_hessian_beta(k, W, x, beta, &err), &err);
            double ap[5], am[5];
            for (size_t q = 0; q < P; q++) {
                double e = 1e-5, fp, fm;
                memcpy(Wp, W, P * sizeof *W);
                Wp[q] += e;
                CHECK_OK(dpc_kan2_forward(k, Wp, x, &fp, ap, NULL, &err), &err);
                Wp[q] -= 2 * e;
                CHECK_OK(dpc_kan2_forward(k, Wp, x, &fm, am, NULL, &err), &err);
                size_t jq = q / dp;
                for (size_t j = 0; j < m; j++) {
                    for (size_t r = 0; r < dp; r++) {
                        double fd = (ap[j] * h[r] - am[j] * h[r]) / (2 * e);
                        if (j != jq) {
                            if (fabs(fd) > cross) cross = fabs(fd);
                        } else {
                            double ex = beta[j] * h[q % dp] * h[r];
                            if (fabs(fd - ex) > worst_h) worst_h = fabs(fd - ex);
                        }
                    }
                }
            }
        }
        CHECK(worst_f < 1e-8, "grad f vs FD: %g", worst_f);
        CHECK(worst_l < 1e-8, "grad l vs FD: %g", worst_l);
        CHECK(worst_rank < 1e-15, "rank one l' y alpha h^T: %g", worst_rank);
        CHECK(worst_h < 1e-7, "Hessian diagonal blocks beta_j h h^T: %g", worst_h);
        CHECK(cross == 0, "Hessian cross-unit blocks are exactly 0: %g", cross);
        free(g), free(Wp), free(h), free(W);
        dpc_kan2_free(k);
    }
}

/* oracle 3 (gradient bound, E_delta) and oracle 4 (self-bounding) */
static void test_bounds(void)
{
    dpc_error err = {0};
    for (int a = 0; a < 2; a++) {
        double *W;
        size_t d = 4, m = 64, G = 5, n = 40;
        dpc_kan2 *k = make(d, m, G, a ? DPC_KAN_TANH : DPC_KAN_SIGMOID, 21 + a, &W);
        size_t P = dpc_kan2_num_params(k), p = G + 3;
        dpc_kan_consts kc;
        CHECK_OK(dpc_kan2_consts(k, 0.01, &kc, &err), &err);
        CHECK(kc.event_ok, "c satisfies E_delta (Lemma B.5)");
        CHECK(kc.G_c <= kc.G_delta, "G_c %g <= G_delta %g on E_delta", kc.G_c, kc.G_delta);
        CHECK_NEAR_REL(kc.eta_max, 1 / (12 * kc.beta), 1e-15, "eta_max");
        /* independent recomputation of G_c from the closed-form constants */
        double Bs1 = a ? 1.0 : 0.25, Bb = 2.0 / 3, Bb1 = 2.0 / (3 * 2.0 / (double)G);
        CHECK_NEAR_REL(kc.G_c, Bs1 * Bb * Bb1 * (double)p * kc.c_norm / sqrt((double)m), 1e-9, "G_c");
        double *X = dalloc(n * d), *y = dalloc(n), *g = dalloc(P), *gs = dalloc(P);
        ball_data(n, d, X, y, 5 + a);
        double *v = dalloc(p), *v1 = dalloc(p);
        const double *c = dpc_kan2_c(k);
        int ok_bound = 1, ok_self = 1, ok_eq = 1;
        for (int trial = 0; trial < 6; trial++) {
            double scale = trial < 2 ? 1.0 : trial < 4 ? 4.0 : 0.2;
            double *Wt = dalloc(P);
            dpc_rng rng;
            dpc_rng_seed(&rng, 100 + (uint64_t)trial);
            dpc_rng_stream s = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_TEST, 1));
            dpc_rng_gaussian_fill(&s, 0, 0, Wt, P);
            for (size_t q = 0; q < P; q++) Wt[q] = W[q] + scale * Wt[q];
            memset(gs, 0, P * sizeof *gs);
            double LS = 0;
            for (size_t i = 0; i < n; i++) {
                const double *x = X + i * d;
                double f, hn, alpha[64], loss;
                CHECK_OK(dpc_kan2_forward(k, Wt, x, &f, alpha, &hn, &err), &err);
                CHECK_OK(dpc_kan2_loss_grad(k, Wt, x, y[i], &loss, g, &err), &err);
                double gl = 0, gf = 0;
                for (size_t q = 0; q < P; q++) gl += g[q] * g[q];
                for (size_t j = 0; j < m; j++) gf += alpha[j] * alpha[j];
                gf = sqrt(gf) * hn;
                if (!(sqrt(gl) <= gf * (1 + 1e-12) && gf <= kc.G_c * (1 + 1e-12))) ok_bound = 0;
                /* the per-sample formula, recomputed from the basis and sigma directly */
                double pre[64], acc2 = 0;
                for (size_t j = 0; j < m; j++) {
                    double s0 = 0;
                    for (size_t ii = 0; ii < d; ii++) {
                        dpc_bspline_eval_all(dpc_kan2_basis(k), x[ii], v, NULL, NULL);
                        for (size_t kk = 0; kk < p; kk++) s0 += Wt[j * d * p + ii * p + kk] * v[kk];
                    }
                    pre[j] = s0 / sqrt((double)d);
                    double u, s1;
                    dpc_kan_act_eval(a ? DPC_KAN_TANH : DPC_KAN_SIGMOID, pre[j], &u, &s1, NULL);
                    dpc_bspline_eval_all(dpc_kan2_basis(k), u, v, v1, NULL);
                    double dot = 0;
                    for (size_t kk = 0; kk < p; kk++) dot += c[j * p + kk] * v1[kk];
                    acc2 += s1 * s1 * dot * dot;
                }
                double formula = hn * sqrt(acc2) / sqrt((double)(m * d));
                if (!harness_near_rel(formula, gf, 1e-12)) ok_eq = 0;
                LS += loss;
                for (size_t q = 0; q < P; q++) gs[q] += g[q];
            }
            LS /= (double)n;
            double gn2 = 0;
            for (size_t q = 0; q < P; q++) gn2 += (gs[q] / (double)n) * (gs[q] / (double)n);
            if (!(gn2 <= 4 * kc.beta * LS)) ok_self = 0;
            free(Wt);
        }
        CHECK(ok_bound, "||grad l|| <= ||grad f|| <= B's Bb B'b p ||c||/sqrt m (Lemma B.6)");
        CHECK(ok_eq, "per-sample gradient formula is an equality");
        CHECK(ok_self, "||grad L_S||^2 <= 4 beta L_S (Lemma B.7)");
        free(X), free(y), free(g), free(gs), free(v), free(v1), free(W);
        dpc_kan2_free(k);
    }
}

static void test_fast_vs_naive(void)
{
    dpc_error err = {0};
    double *W;
    size_t d = 5, m = 24, G = 6, n = 50, B = 17;
    dpc_kan2 *k = make(d, m, G, DPC_KAN_SIGMOID, 31, &W);
    size_t P = dpc_kan2_num_params(k);
    double *X = dalloc(n * d), *y = dalloc(n);
    ball_data(n, d, X, y, 9);
    size_t idx[17];
    for (size_t b = 0; b < B; b++) idx[b] = (b * 7 + 3) % n;
    double *g1 = dalloc(P), *g2 = dalloc(P), l1[17], l2[17], n1[17], n2[17];
    for (size_t q = 0; q < P; q++) g1[q] = g2[q] = 0.001 * (double)(q % 13); /* running totals */
    size_t c1 = 9, c2 = 9;
    CHECK_OK(dpc_kan2_clipped_sum(k, W, X, y, n, idx, B, INFINITY, g1, l1, n1, &c1, &err), &err);
    CHECK_OK(dpc_kan2_clipped_sum_naive(k, W, X, y, n, idx, B, INFINITY, g2, l2, n2, &c2, &err), &err);
    CHECK(memcmp(g1, g2, P * sizeof *g1) == 0, "clip = inf: fast == naive bit for bit");
    CHECK(memcmp(l1, l2, sizeof l1) == 0, "losses bit for bit");
    double worst = 0;
    for (size_t b = 0; b < B; b++) worst = fmax(worst, fabs(n1[b] - n2[b]) / n2[b]);
    CHECK(worst < 1e-13, "ghost vs materialized norms: %g", worst);
    CHECK(c1 == 0 && c2 == 0, "no clipping at inf");
    /* a clip in the middle of the norms: both clip the same examples, sums agree to rounding */
    double med = n1[B / 2];
    memset(g1, 0, P * sizeof *g1);
    memset(g2, 0, P * sizeof *g2);
    CHECK_OK(dpc_kan2_clipped_sum(k, W, X, y, n, idx, B, med, g1, NULL, NULL, &c1, &err), &err);
    CHECK_OK(dpc_kan2_clipped_sum_naive(k, W, X, y, n, idx, B, med, g2, NULL, NULL, &c2, &err), &err);
    size_t expect = 0;
    for (size_t b = 0; b < B; b++) expect += n1[b] > med;
    CHECK(c1 == expect && c2 == expect, "clipped counts %zu %zu (expect %zu)", c1, c2, expect);
    double md = 0, mx = 0;
    for (size_t q = 0; q < P; q++) {
        md = fmax(md, fabs(g1[q] - g2[q]));
        mx = fmax(mx, fabs(g2[q]));
    }
    CHECK(md <= 1e-13 * mx, "clipped sums agree: %g of %g", md, mx);
    /* each clipped contribution has norm <= clip: one example at a time */
    for (size_t b = 0; b < B; b++) {
        memset(g1, 0, P * sizeof *g1);
        CHECK_OK(dpc_kan2_clipped_sum(k, W, X, y, n, idx + b, 1, med, g1, NULL, NULL, NULL, &err), &err);
        double s = 0;
        for (size_t q = 0; q < P; q++) s += g1[q] * g1[q];
        CHECK(sqrt(s) <= med * (1 + 1e-13), "clipped norm %g <= %g", sqrt(s), med);
    }
    /* mean loss via evaluate equals the mean of the per-example losses */
    double ml, e01;
    CHECK_OK(dpc_kan2_evaluate(k, W, X, y, n, &ml, &e01, &err), &err);
    double tot = 0;
    size_t wrong = 0;
    for (size_t i = 0; i < n; i++) {
        double f = f_at(k, W, X + i * d);
        tot += log1p(exp(-y[i] * f));
        wrong += !(y[i] * f > 0);
    }
    CHECK_NEAR_REL(ml, tot / (double)n, 1e-13, "evaluate mean loss");
    CHECK(e01 == (double)wrong / (double)n, "evaluate 0-1 error");
    /* errors name the fault; nothing written */
    double y0 = y[3];
    y[3] = 0;
    dpc_error e = {0};
    memset(g1, 0, P * sizeof *g1);
    CHECK(dpc_kan2_clipped_sum(k, W, X, y, n, NULL, B, 1, g1, NULL, NULL, NULL, &e) == DPC_E_INVALID &&
              strstr(e.msg, "example 3") && strstr(e.msg, "label"), "label 0: %s", e.msg);
    y[3] = y0;
    X[2 * d + 1] = NAN;
    CHECK(dpc_kan2_clipped_sum(k, W, X, y, n, NULL, B, 1, g1, NULL, NULL, NULL, &e) == DPC_E_INVALID &&
              strstr(e.msg, "example 2") && strstr(e.msg, "x[1]"), "NaN x: %s", e.msg);
    X[2 * d + 1] = 0.1;
    double w0 = W[77];
    W[77] = INFINITY;
    CHECK(dpc_kan2_clipped_sum(k, W, X, y, n, NULL, B, 1, g1, NULL, NULL, NULL, &e) == DPC_E_INVALID &&
              strstr(e.msg, "W[77]"), "inf W: %s", e.msg);
    W[77] = w0;
    size_t bad_idx[2] = {1, 50};
    CHECK(dpc_kan2_clipped_sum(k, W, X, y, n, bad_idx, 2, 1, g1, NULL, NULL, NULL, &e) == DPC_E_INVALID &&
              strstr(e.msg, "idx[1]"), "idx out of range: %s", e.msg);
    CHECK(dpc_kan2_clipped_sum(k, W, X, y, n, NULL, n + 1, 1, g1, NULL, NULL, NULL, &e) == DPC_E_INVALID,
          "B > n");
    CHECK(dpc_kan2_clipped_sum(k, W, X, y, n, NULL, B, -1, g1, NULL, NULL, NULL, &e) == DPC_E_INVALID &&
              strstr(e.msg, "clip"), "negative clip");
    int zero = 1;
    for (size_t q = 0; q < P; q++) zero &= g1[q] == 0;
    CHECK(zero, "nothing written on error");
    free(X), free(y), free(g1), free(g2), free(W);
    dpc_kan2_free(k);
}

static void test_init_and_config(void)
{
    dpc_error err = {0};
    dpc_rng rng;
    dpc_rng_seed(&rng, 5);
    dpc_kan2_config c = {3, 4, 5, DPC_KAN_TANH};
    dpc_kan2 *k = NULL;
    CHECK_OK(dpc_kan2_new(&k, &c, &rng, 2, &err), &err);
    size_t P = dpc_kan2_num_params(k);
    double *W = dalloc(P);
    CHECK_OK(dpc_kan2_init(k, W, &rng, 2, &err), &err);
    dpc_rng_stream s = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_INIT, 2));
    int ok = 1;
    for (size_t q = 0; q < P; q++) ok &= W[q] == dpc_rng_gaussian(&s, 0, q);
    for (size_t q = 0; q < 4 * 8; q++) ok &= dpc_kan2_c(k)[q] == dpc_rng_gaussian(&s, 1, q);
    CHECK(ok, "W_0 = row 0, c = row 1 of the init stream");
    dpc_kan2 *k2 = NULL;
    CHECK_OK(dpc_kan2_new_with_c(&k2, &c, dpc_kan2_c(k), &err), &err);
    CHECK(memcmp(dpc_kan2_c(k2), dpc_kan2_c(k), 32 * sizeof(double)) == 0, "new_with_c copies c");
    dpc_kan2_free(k2);
    dpc_kan2_free(k);
    dpc_kan2_free(NULL);
    dpc_error e = {0};
    dpc_kan2_config bad[] = {{0, 4, 5, DPC_KAN_TANH}, {3, 0, 5, DPC_KAN_TANH}, {3, 4, 0, DPC_KAN_TANH},
                             {3, 4, 5, (dpc_kan_act)7}};
    const char *field[] = {"d", "m", "grid", "act"};
    for (size_t i = 0; i < 4; i++) {
        k = (dpc_kan2 *)&c;
        CHECK(dpc_kan2_new(&k, &bad[i], &rng, 0, &e) == DPC_E_INVALID && k == NULL &&
                  !strcmp(e.field, field[i]), "bad config %zu: %s: %s", i, e.field, e.msg);
    }
    /* the field table covers the struct and the parser writes its defaults (the values it
     * wrote by hand before the table: d from the data, grid 5, sigmoid) */
    const dpc_field_table *t = dpc_kan2_config_fields();
    CHECK(t && t->size == sizeof(dpc_kan2_config) && t->count == 4, "kan2 table of the struct");
    CHECK_OK(dpc_field_table_verify(t, &e), &e);
    dpc_kan2_config pc;
    memset(&pc, 0x5a, sizeof pc);
    CHECK_OK(dpc_kan2_config_parse(&pc, "kan2:16", 7, &e), &e);
    CHECK(pc.d == 7 && pc.m == 16 && pc.grid == 5 && pc.act == DPC_KAN_SIGMOID, "parser defaults");
    dpc_kan2_config big = {(size_t)1 << 24, 1, 256, DPC_KAN_TANH};
    CHECK_OK(dpc_field_check(t, &big, &e), &e);
    big.d++;
    CHECK(dpc_field_check(t, &big, &e) == DPC_E_INVALID && !strcmp(e.field, "d"), "d = 2^24 + 1");
    free(W);
}

/* NTK margin: against closed forms (2 points) and a simplex grid (3 points), and certificates */
static void test_margin(void)
{
    dpc_error err = {0};
    double *W;
    size_t d = 2, m = 8, G = 3, p = 6, dp = d * p;
    dpc_kan2 *k = make(d, m, G, DPC_KAN_SIGMOID, 41, &W);
    size_t P = dpc_kan2_num_params(k);
    double X[3 * 2] = {0.3, -0.2, -0.5, 0.4, 0.1, 0.7}, y[3] = {1, -1, 1};
    /* explicit points v_i = y_i alpha_i h_i^T */
    double *v = dalloc(3 * P), h[12], alpha[8];
    for (size_t i = 0; i < 3; i++) {
        double f;
        CHECK_OK(dpc_kan2_forward(k, W, X + 2 * i, &f, alpha, NULL, &err), &err);
        CHECK_OK(dpc_kan2_features(k, X + 2 * i, h, &err), &err);
        for (size_t j = 0; j < m; j++)
            for (size_t q = 0; q < dp; q++) v[i * P + j * dp + q] = y[i] * alpha[j] * h[q];
    }
    /* brute force over a simplex grid of 3 points (and the 2-point segment in closed form) */
    double best3 = INFINITY;
    int N = 400;
    for (int a = 0; a <= N; a++)
        for (int b = 0; a + b <= N; b++) {
            double wa = (double)a / N, wb = (double)b / N, wc = 1 - wa - wb, s = 0;
            for (size_t q = 0; q < P; q++) {
                double z = wa * v[q] + wb * v[P + q] + wc * v[2 * P + q];
                s += z * z;
            }
            best3 = fmin(best3, sqrt(s));
        }
    double aa = 0, bb = 0, ab = 0;
    for (size_t q = 0; q < P; q++) aa += v[q] * v[q], bb += v[P + q] * v[P + q], ab += v[q] * v[P + q];
    double t = fmin(1, fmax(0, (bb - ab) / (aa + bb - 2 * ab)));
    double best2 = sqrt(t * t * aa + 2 * t * (1 - t) * ab + (1 - t) * (1 - t) * bb);
    dpc_kan_margin mg;
    CHECK_OK(dpc_kan2_margin(k, W, X, y, 2, 1000, 1e-12, &mg, &err), &err);
    CHECK(mg.converged, "2 points converged");
    CHECK_NEAR_REL(mg.gamma_hi, best2, 1e-6, "2-point margin (closed form)");
    CHECK(mg.gamma_lo <= mg.gamma_hi, "lo <= hi");
    CHECK_OK(dpc_kan2_margin(k, W, X, y, 3, 1000, 1e-10, &mg, &err), &err);
    CHECK(mg.gamma_hi <= best3 * (1 + 1e-9), "3-point hi %g <= grid min %g", mg.gamma_hi, best3);
    CHECK(mg.gamma_hi >= best3 * (1 - 1e-3), "3-point hi %g ~ grid min %g", mg.gamma_hi, best3);
    CHECK(mg.gamma_lo <= mg.gamma_hi && mg.gamma_lo > 0.99 * mg.gamma_hi, "certificate %g %g",
          mg.gamma_lo, mg.gamma_hi);
    free(v);
    /* many separable points (linear teacher): a positive certified margin */
    dpc_dataset *ds = NULL;
    dpc_rng rng;
    dpc_rng_seed(&rng, 3);
    CHECK_OK(dpc_kan_synth(&ds, &rng, 0, 300, d, 0.1, NULL, &err), &err);
    double *yy = dalloc(300);
    for (size_t i = 0; i < 300; i++) yy[i] = ds->y[i] ? 1 : -1;
    CHECK_OK(dpc_kan2_margin(k, W, ds->x, yy, 300, 20000, 1e-3, &mg, &err), &err);
    CHECK(mg.converged && mg.gamma_lo > 0 && mg.gamma_lo <= mg.gamma_hi &&
              mg.gamma_hi - mg.gamma_lo <= 1e-3 * mg.gamma_hi,
          "300 points: [%g, %g] after %zu iterations", mg.gamma_lo, mg.gamma_hi, mg.iterations);
    /* the certificate: gamma_lo <= y_i <grad f(x_i), u> for the hull point's direction is what
     * the algorithm reports; check that gamma_hi >= every sampled-pair segment distance is not
     * violated, i.e. gamma_hi <= the distance of each single point */
    for (size_t i = 0; i < 300; i += 37) {
        double f, hn, an = 0;
        CHECK_OK(dpc_kan2_forward(k, W, ds->x + i * d, &f, alpha, &hn, &err), &err);
        for (size_t j = 0; j < m; j++) an += alpha[j] * alpha[j];
        CHECK(mg.gamma_hi <= sqrt(an) * hn * (1 + 1e-12), "gamma <= ||v_%zu||", i);
    }
    dpc_dataset_free(ds);
    free(yy);
    free(W);
    dpc_kan2_free(k);
}

/* oracle 17: the bound evaluators' lambda behaviour, and the radius / window formulas */
static void test_theory(void)
{
    dpc_error err = {0};
    dpc_kan_rate_in r = {1000, 256, 5, 1000, 100, 0.25, 0, 10.0, 0.05, 1e-5};
    /* fixed kappa: A_corr decreases in lambda on [0, 1/(1 + eta)] (Remark 4.2) */
    double prev = INFINITY, lmax = 1 / (1 + r.eta);
    int dec = 1;
    for (int i = 0; i <= 40; i++) {
        r.lambda = lmax * i / 40.0;
        double A;
        CHECK_OK(dpc_kan_bound_corr(&r, &A, &err), &err);
        if (!(A < prev)) dec = 0;
        prev = A;
    }
    CHECK(dec, "A_corr decreasing in lambda up to 1/(1+eta) at fixed kappa");
    r.lambda = lmax + 0.05;
    double A1, A2;
    CHECK_OK(dpc_kan_bound_corr(&r, &A1, &err), &err);
    r.lambda = 0.99;
    CHECK_OK(dpc_kan_bound_corr(&r, &A2, &err), &err);
    CHECK(A2 > A1, "and increasing beyond it");
    /* kappa = kappa_F12(lambda): non-decreasing in lambda (1 + lambda^2 eta/(1-lambda)^2) */
    int nondec = 1;
    prev = 0;
    for (int i = 0; i <= 18; i++) {
        r.lambda = 0.05 * i;
        CHECK_OK(dpc_account_kan_paper_lcgd(r.n, r.B, r.T, 1.0, 1e-5, r.lambda, &r.noise_std, &err), &err);
        double A;
        CHECK_OK(dpc_kan_bound_corr(&r, &A, &err), &err);
        if (!(A >= prev * (1 - 1e-12))) nondec = 0;
        prev = A;
    }
    CHECK(nondec, "A_corr non-decreasing in lambda at the F.12 kappa");
    /* A_non is A_corr at kappa = 0 */
    r.noise_std = 0, r.lambda = 0.3;
    double An;
    CHECK_OK(dpc_kan_bound_corr(&r, &A1, &err), &err);
    CHECK_OK(dpc_kan_bound_nonpriv(&r, &An, &err), &err);
    CHECK_NEAR_REL(A1, An + r.eta / (double)r.T, 1e-14, "A_corr(kappa 0) = A_non + eta/T");
    double Av;
    CHECK_OK(dpc_kan_bound_indep(&r, &Av, &err), &err);
    CHECK(Av > An, "A_van (with its logs) > A_non");
    /* radius and window */
    double R;
    CHECK_OK(dpc_kan_radius(3, 100, 1000, 0.01, 0.1, &R, &err), &err);
    CHECK_NEAR_REL(R, 3 * (log(100) + sqrt(log(1e5))) / 0.1, 1e-15, "R*");
    dpc_kan_window w;
    r.noise_std = 4, r.lambda = 0.5;
    CHECK_OK(dpc_kan_width_window(&r, 8, 2.0, R, &w, &err), &err);
    CHECK_NEAR_REL(w.m_lo, pow(0.05, -4), 1e-14, "m_lo = gamma^-4");
    double fac = 1000 * (0.25 + 0.25 * 0.25);
    CHECK_NEAR_REL(w.m_hi, 100.0 * 100 / (0.0625 * 16 * 0.0025 * 5) / fac, 1e-13, "m_hi");
    double c = 2.0 * 4 / 100;
    CHECK_NEAR_REL(w.m_edge, R * R / (5 * 8 * 0.0625 * c * c * (1 + 0.25 * 998)), 1e-13, "m_edge");
    dpc_error e = {0};
    r.gamma = 0;
    CHECK(dpc_kan_bound_corr(&r, &A1, &e) == DPC_E_INVALID && strstr(e.msg, "gamma"), "gamma 0");
    r.gamma = 0.1, r.lambda = 1;
    CHECK(dpc_kan_bound_corr(&r, &A1, &e) == DPC_E_INVALID && strstr(e.msg, "lambda"), "lambda 1");
}

int main(void)
{
    test_theory();
    test_gradients();
    test_bounds();
    test_fast_vs_naive();
    test_init_and_config();
    test_margin();
    return TEST_SUMMARY();
}
