/* test_kan_lcgd.c — projected DP-lambda-CGD (note 004 §2.1, §3.8): the fresh uniform batches
 * (oracle 1), the noise statistics of xi_t = kappa (Z_t - lambda Z_{t-1}) as the training loop
 * applies them (oracle 7, incl. Var(sum xi_t) = kappa^2 (1 + (1-lambda)^2 (T-1))), the exact
 * pure-noise walk (oracle 8), the shifted-iterate identity (oracle 9), clipping and projection
 * inactivity and the width window (oracle 16), determinism and the header example. */
#include "dpcorr/papers/kan.h"
#include "harness.h"

#include <string.h>

static double *dalloc(size_t n)
{
    double *p = calloc(n ? n : 1, sizeof *p);
    if (!p) exit(1);
    return p;
}

/* ---- oracle 1 ------------------------------------------------------------------------------ */

static void test_batches(void)
{
    dpc_error err = {0};
    dpc_rng rng;
    dpc_rng_seed(&rng, 17);
    dpc_rng_stream s = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_SAMPLER, 1));
    size_t n = 10, B = 4, R = (size_t)(40000 * tests_scale());
    size_t incl[10] = {0}, pair01 = 0, idx[4];
    /* fixed vectors x_i in R^2 */
    double x[10][2], xb[2] = {0, 0}, spread = 0;
    for (size_t i = 0; i < n; i++) {
        x[i][0] = sin(1.0 + (double)i), x[i][1] = (double)(i * i) / 10.0;
        xb[0] += x[i][0] / (double)n, xb[1] += x[i][1] / (double)n;
    }
    for (size_t i = 0; i < n; i++)
        spread += ((x[i][0] - xb[0]) * (x[i][0] - xb[0]) + (x[i][1] - xb[1]) * (x[i][1] - xb[1])) / (double)n;
    double m0 = 0, m1 = 0, msq = 0;
    int sorted = 1;
    for (size_t r = 0; r < R; r++) {
        CHECK_OK(dpc_kan_batch(&s, r, n, B, idx, &err), &err);
        double a0 = 0, a1 = 0;
        int h0 = 0, h1 = 0;
        for (size_t b = 0; b < B; b++) {
            incl[idx[b]]++;
            if (b && !(idx[b] > idx[b - 1])) sorted = 0;
            h0 |= idx[b] == 0, h1 |= idx[b] == 1;
            a0 += x[idx[b]][0] / (double)B, a1 += x[idx[b]][1] / (double)B;
        }
        pair01 += h0 && h1;
        m0 += a0, m1 += a1;
        msq += (a0 - xb[0]) * (a0 - xb[0]) + (a1 - xb[1]) * (a1 - xb[1]);
    }
    CHECK(sorted, "batches are sorted and distinct");
    double p = (double)B / (double)n, se = sqrt(p * (1 - p) / (double)R);
    for (size_t i = 0; i < n; i++)
        CHECK_NEAR_ABS((double)incl[i] / (double)R, p, 5 * se, "inclusion probability of %zu", i);
    double pp = (double)(B * (B - 1)) / (double)(n * (n - 1));
    CHECK_NEAR_ABS((double)pair01 / (double)R, pp, 5 * sqrt(pp * (1 - pp) / (double)R), "pair probability");
    /* Lemma B.2: E xbar_B = xbar, E||xbar_B - xbar||^2 = (n-B)/(B(n-1)) spread */
    double want = (double)(n - B) / (double)(B * (n - 1)) * spread;
    CHECK_NEAR_ABS(m0 / (double)R, xb[0], 0.02, "E xbar_B (0)");
    CHECK_NEAR_ABS(m1 / (double)R, xb[1], 0.05, "E xbar_B (1)");
    CHECK_NEAR_REL(msq / (double)R, want, 0.05, "E||xbar_B - xbar||^2");
    /* a pure function of (key, step) */
    size_t a[4], b[4];
    CHECK_OK(dpc_kan_batch(&s, 123, n, B, a, &err), &err);
    CHECK_OK(dpc_kan_batch(&s, 123, n, B, b, &err), &err);
    CHECK(memcmp(a, b, sizeof a) == 0, "same step, same batch");
    dpc_error e = {0};
    CHECK(dpc_kan_batch(&s, 0, 3, 4, a, &e) == DPC_E_INVALID && strstr(e.msg, "batch"), "B > n");
    CHECK_OK(dpc_kan_batch(&s, 0, 4, 4, a, &err), &err);
    CHECK(a[0] == 0 && a[1] == 1 && a[2] == 2 && a[3] == 3, "B = n takes everything");
}

/* ---- a gradient oracle that returns zero ---------------------------------------------------- */

static dpc_status zero_grad(void *ctx, const double *W, const size_t *idx, size_t B, double clip,
                            double *gsum, double *loss_sum, size_t *n_clipped, dpc_error *err)
{
    (void)ctx, (void)W, (void)idx, (void)B, (void)clip, (void)gsum, (void)err;
    *loss_sum = 0;
    *n_clipped = 0;
    return DPC_OK;
}

/* Runs T - 1 pure-noise updates and stores every iterate: out ((T) x P). */
static void noise_run(const dpc_kan_lcgd_config *c, size_t P, const double *W0, uint64_t seed,
                      double *out)
{
    dpc_error err = {0};
    dpc_rng rng;
    dpc_rng_seed(&rng, seed);
    dpc_kan_lcgd *r = NULL;
    CHECK_OK(dpc_kan_lcgd_new(&r, c, P, W0, &rng, &err), &err);
    memcpy(out, W0, P * sizeof *out);
    for (size_t t = 1; t < c->iterates; t++) {
        CHECK_OK(dpc_kan_lcgd_step(r, zero_grad, NULL, NULL, &err), &err);
        memcpy(out + t * P, dpc_kan_lcgd_params(r), P * sizeof *out);
    }
    CHECK(dpc_kan_lcgd_step(r, zero_grad, NULL, NULL, &err) == DPC_E_RANGE, "T - 1 updates only");
    dpc_kan_lcgd_free(r);
}

/* ---- oracle 7 ------------------------------------------------------------------------------ */

static void test_noise_stats(void)
{
    size_t N = (size_t)(20000 * tests_scale()), T = 100;
    const double lams[3] = {0.0, 0.5, 0.9}, var_sum[3] = {100.0, 25.75, 1.99};
    double *W0 = dalloc(N), *Ws = dalloc((T + 1) * N);
    for (int l = 0; l < 3; l++) {
        dpc_kan_lcgd_config c;
        dpc_kan_lcgd_config_init(&c);
        c.n = 1, c.batch = 1, c.iterates = T + 1, c.eta = 1, c.clip = 1, c.noise_std = 3.0;
        c.lambda = lams[l];
        noise_run(&c, N, W0, 99 + (uint64_t)l, Ws);
        /* xi_t = (W_{t-1} - W_t)/kappa (eta = 1, c_priv = kappa), in units of kappa^2 */
        double v1 = 0, v = 0, c1 = 0, c2 = 0, vs = 0;
        size_t nv = 0, nc1 = 0, nc2 = 0;
        for (size_t q = 0; q < N; q++) {
            double prev = 0, prev2 = 0;
            for (size_t t = 1; t <= T; t++) {
                double xi = (Ws[(t - 1) * N + q] - Ws[t * N + q]) / c.noise_std;
                if (t == 1) v1 += xi * xi;
                else v += xi * xi, nv++;
                if (t >= 2) c1 += xi * prev, nc1++;
                if (t >= 3) c2 += xi * prev2, nc2++;
                prev2 = prev, prev = xi;
            }
            double sum = (W0[q] - Ws[T * N + q]) / c.noise_std;
            vs += sum * sum;
        }
        double lam = lams[l], sq = sqrt(2.0 / (double)N);
        CHECK_NEAR_ABS(v1 / (double)N, 1.0, 5 * sq, "Var(xi_1) = kappa^2 (lambda %g)", lam);
        CHECK_NEAR_ABS(v / (double)nv, 1 + lam * lam, 5 * (1 + lam * lam) * sqrt(2.0 / (double)nv) * 3,
                       "Var(xi_t) = kappa^2 (1 + lambda^2) (lambda %g)", lam);
        CHECK_NEAR_ABS(c1 / (double)nc1, -lam, 5 * (1 + lam * lam) / sqrt((double)nc1) * 3,
                       "Cov(xi_t, xi_t-1) = -lambda kappa^2 (lambda %g)", lam);
        CHECK_NEAR_ABS(c2 / (double)nc2, 0.0, 5 * (1 + lam * lam) / sqrt((double)nc2) * 3,
                       "Cov at lag 2 = 0 (lambda %g)", lam);
        double want = 1 + (1 - lam) * (1 - lam) * (double)(T - 1);
        CHECK_NEAR_REL(want, var_sum[l], 1e-12, "formula: %g kappa^2 at T = 100", var_sum[l]);
        CHECK_NEAR_REL(vs / (double)N, want, 5 * sq, "Var(sum xi_t) = kappa^2 (1 + (1-lambda)^2 (T-1)) at lambda %g", lam);
    }
    /* the whole covariance of (xi_1..xi_6) equals kappa^2 C^-1 C^-T (lambda = 0.5) */
    size_t T6 = 6;
    dpc_kan_lcgd_config c;
    dpc_kan_lcgd_config_init(&c);
    c.n = 1, c.batch = 1, c.iterates = T6 + 1, c.eta = 1, c.clip = 1, c.noise_std = 1.0, c.lambda = 0.5;
    noise_run(&c, N, W0, 7, Ws);
    double worst = 0;
    for (size_t a = 1; a <= T6; a++)
        for (size_t b = 1; b <= T6; b++) {
            double s = 0;
            for (size_t q = 0; q < N; q++)
                s += (Ws[(a - 1) * N + q] - Ws[a * N + q]) * (Ws[(b - 1) * N + q] - Ws[b * N + q]);
            s /= (double)N;
            /* B B^T for B bidiagonal (1, -lambda): diag 1 + lambda^2 (1 at t = 1), off -lambda */
            double want = a == b ? (a == 1 ? 1 : 1.25) : (a == b + 1 || b == a + 1) ? -0.5 : 0;
            if (fabs(s - want) > worst) worst = fabs(s - want);
        }
    CHECK(worst < 5 * 1.25 * sqrt(2.0 / (double)N) * 2, "covariance vs kappa^2 C^-1 C^-T: %g", worst);
    free(W0);
    free(Ws);
}

/* ---- oracle 8 ------------------------------------------------------------------------------ */

static void test_noise_walk(void)
{
    size_t P = (size_t)(5000 * tests_scale()), T = 40;
    double *W0 = dalloc(P), *Ws = dalloc(T * P), *Z = dalloc(T * P);
    for (size_t q = 0; q < P; q++) W0[q] = sin((double)q);
    dpc_kan_lcgd_config c;
    dpc_kan_lcgd_config_init(&c);
    c.n = 10, c.batch = 4, c.iterates = T, c.eta = 0.3, c.clip = 2, c.noise_std = 1.5, c.lambda = 0.6;
    c.noise_stream = 5;
    noise_run(&c, P, W0, 1234, Ws);
    dpc_rng rng;
    dpc_rng_seed(&rng, 1234);
    dpc_rng_stream zs = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_NOISE, 5));
    for (size_t t = 0; t < T; t++) dpc_rng_gaussian_fill_naive(&zs, t, 0, Z + t * P, P);
    double cp = c.clip * c.noise_std / (double)c.batch, worst = 0;
    double sq[4] = {0, 0, 0, 0};
    size_t ks[4] = {1, 2, 10, T - 1};
    for (size_t k = 1; k < T; k++) {
        for (size_t q = 0; q < P; q++) {
            /* W_k - W_0 = -eta c_priv (Z_{k-1} + (1 - lambda) sum_{t < k-1} Z_t) (0-based rows) */
            double s = 0;
            for (size_t t = 0; t + 1 < k; t++) s += Z[t * P + q];
            double want = -c.eta * cp * (Z[(k - 1) * P + q] + (1 - c.lambda) * s);
            double got = Ws[k * P + q] - W0[q];
            double e = fabs(got - want) / (fabs(want) + 1e-3);
            if (e > worst) worst = e;
            for (int i = 0; i < 4; i++)
                if (k == ks[i]) sq[i] += got * got;
        }
    }
    CHECK(worst < 1e-11, "pure-noise walk matches the telescoped sum: %g", worst);
    for (int i = 0; i < 4; i++) {
        double k = (double)ks[i];
        double want = c.eta * c.eta * cp * cp * (double)P * (1 + (1 - c.lambda) * (1 - c.lambda) * (k - 1));
        CHECK_NEAR_REL(sq[i], want, 5 * sqrt(2.0 / (double)P) * 2, "E||W_k - W_0||^2 at k = %g", k);
    }
    /* REPLAY and BUFFER forms give the same bits */
    double *Wb = dalloc(T * P);
    c.noise_form = DPC_NOISE_BUFFER;
    noise_run(&c, P, W0, 1234, Wb);
    CHECK(memcmp(Ws, Wb, T * P * sizeof *Ws) == 0, "replay == buffer, bit for bit");
    free(W0), free(Ws), free(Z), free(Wb);
}

/* ---- the paper's KAN on synthetic data ------------------------------------------------------- */

typedef struct setup {
    dpc_rng rng;
    dpc_dataset *ds;
    dpc_kan2 *k;
    dpc_kan_task *task;
    double *W0;
    size_t P;
} setup;

static void setup_make(setup *s, size_t n, size_t d, size_t m, size_t G, uint64_t seed)
{
    dpc_error err = {0};
    dpc_rng_seed(&s->rng, seed);
    dpc_kan2_config kc = {d, m, G, DPC_KAN_SIGMOID};
    s->ds = NULL, s->k = NULL, s->task = NULL;
    CHECK_OK(dpc_kan_synth(&s->ds, &s->rng, 0, n, d, 0.05, NULL, &err), &err);
    CHECK_OK(dpc_kan2_new(&s->k, &kc, &s->rng, 0, &err), &err);
    CHECK_OK(dpc_kan2_task_new(&s->task, s->k, s->ds, NULL, &err), &err);
    if (!s->task) exit(1);
    s->P = dpc_kan2_num_params(s->k);
    s->W0 = dalloc(s->P);
    CHECK_OK(dpc_kan2_init(s->k, s->W0, &s->rng, 0, &err), &err);
}

static void setup_free(setup *s)
{
    dpc_kan_task_free(s->task);
    dpc_kan2_free(s->k);
    dpc_dataset_free(s->ds);
    free(s->W0);
}

/* ---- oracle 9 ------------------------------------------------------------------------------ */

static void test_shifted_iterate(void)
{
    dpc_error err = {0};
    setup s;
    setup_make(&s, 60, 3, 16, 4, 5);
    size_t P = s.P, T = 25;
    dpc_kan_lcgd_config c;
    dpc_kan_lcgd_config_init(&c);
    c.n = 60, c.batch = 10, c.iterates = T, c.eta = 0.05, c.clip = 1e3, c.noise_std = 0.02;
    c.lambda = 0.7;
    dpc_kan_lcgd *r = NULL;
    CHECK_OK(dpc_kan_lcgd_new(&r, &c, P, s.W0, &s.rng, &err), &err);
    double cp = dpc_kan_lcgd_noise_scale(r);
    CHECK_NEAR_REL(cp, c.clip * c.noise_std / (double)c.batch, 1e-15, "c_priv = C kappa / B");
    dpc_rng_stream zs = dpc_rng_stream_derive(&s.rng, DPC_STREAM_ID(DPC_STREAM_NOISE, 0));
    dpc_rng_stream bs = dpc_rng_stream_derive(&s.rng, DPC_STREAM_ID(DPC_STREAM_SAMPLER, 1));
    double *W = dalloc(P), *Uprev = dalloc(P), *g = dalloc(P), *Zs = dalloc(P), *Zp = dalloc(P);
    size_t idx[10];
    memcpy(W, s.W0, P * sizeof *W);
    memcpy(Uprev, s.W0, P * sizeof *W); /* U_0 = W_0 (Z_{-1} = 0) */
    double worst = 0;
    size_t clipped = 0;
    for (size_t st = 0; st + 1 < T; st++) {
        /* g_s: the batch gradient at W_s on the batch of update s */
        CHECK_OK(dpc_kan_batch(&bs, st, c.n, c.batch, idx, &err), &err);
        memset(g, 0, P * sizeof *g);
        double ls;
        size_t nc;
        CHECK_OK(dpc_kan_task_grad(s.task, W, idx, c.batch, INFINITY, g, &ls, &nc, &err), &err);
        dpc_kan_lcgd_step_info info;
        CHECK_OK(dpc_kan_lcgd_step(r, dpc_kan_task_grad, s.task, &info, &err), &err);
        clipped += info.clipped;
        memcpy(W, dpc_kan_lcgd_params(r), P * sizeof *W);
        dpc_rng_gaussian_fill(&zs, st, 0, Zs, P);
        for (size_t q = 0; q < P; q++) {
            /* U_{s+1} = W_{s+1} + eta c Z_s;  U_{s+1} - U_s = -eta (g_s/B + (1-lambda) c Z_{s-1}) */
            double U = W[q] + c.eta * cp * Zs[q];
            double want = -c.eta * (g[q] / (double)c.batch + (st ? (1 - c.lambda) * cp * Zp[q] : 0));
            double e = fabs((U - Uprev[q]) - want);
            if (e > worst) worst = e;
            Uprev[q] = U;
        }
        memcpy(Zp, Zs, P * sizeof *Zp);
    }
    CHECK(clipped == 0, "no clipping at C = 1e3");
    CHECK(worst < 1e-13, "shifted iterate: U_t - U_t-1 = -eta (g + (1-lambda) c Z_t-1): %g", worst);
    dpc_kan_lcgd_free(r);
    free(W), free(Uprev), free(g), free(Zs), free(Zp);
    setup_free(&s);
}

/* ---- oracle 16 ----------------------------------------------------------------------------- */

/* Counts its calls (ctx[0]) and stops the run at call ctx[1] (0: never). */
static int count_trace(void *tctx, const dpc_kan_lcgd_step_info *info, double trl, double tel)
{
    size_t *c = tctx;
    (void)info, (void)trl, (void)tel;
    return ++c[0] == c[1];
}

static void test_inactivity(void)
{
    dpc_error err = {0};
    setup s;
    setup_make(&s, 200, 3, 32, 5, 8);
    dpc_kan_consts kc;
    CHECK_OK(dpc_kan2_consts(s.k, 0.01, &kc, &err), &err);
    dpc_kan_margin mg;
    double *y = dalloc(200);
    for (size_t i = 0; i < 200; i++) y[i] = s.ds->y[i] ? 1 : -1;
    CHECK_OK(dpc_kan2_margin(s.k, s.W0, s.ds->x, y, 200, 5000, 1e-2, &mg, &err), &err);
    CHECK(mg.gamma_lo > 0, "positive margin %g", mg.gamma_lo);
    double R;
    CHECK_OK(dpc_kan_radius(2.0, 100, 200, 0.01, mg.gamma_lo, &R, &err), &err);
    dpc_kan_lcgd_config c;
    dpc_kan_lcgd_config_init(&c);
    c.n = 200, c.batch = 20, c.iterates = 100, c.eta = kc.eta_max, c.clip = kc.G_c;
    c.lambda = 0.5, c.noise_std = 1.0, c.radius = R;
    dpc_kan_lcgd_result a, b;
    CHECK_OK(dpc_kan_lcgd_train(&c, s.P, &s.rng, s.W0, dpc_kan_task_grad, NULL, s.task, 1, NULL,
                                NULL, &a, &err), &err);
    CHECK(a.clipped == 0, "C_clip = G_c: no example is clipped (%zu)", a.clipped);
    CHECK(a.projections == 0, "theory radius R* = %g: no projection (max dist %g)", R, a.max_dist);
    /* the trace sees every iterate (W_0 first); a nonzero return stops the run at that iterate */
    size_t calls[2] = {0, 0};
    CHECK_OK(dpc_kan_lcgd_train(&c, s.P, &s.rng, s.W0, dpc_kan_task_grad, NULL, s.task, 1,
                                count_trace, calls, &b, &err), &err);
    CHECK(calls[0] == c.iterates, "trace calls %zu of %zu iterates", calls[0], c.iterates);
    calls[0] = 0, calls[1] = 4;
    CHECK(dpc_kan_lcgd_train(&c, s.P, &s.rng, s.W0, dpc_kan_task_grad, NULL, s.task, 1,
                             count_trace, calls, &b, &err) == DPC_E_STATE &&
              !strcmp(err.field, "lcgd_train") && strstr(err.msg, "callback at 3"),
          "stopped by the trace at iterate 3 (%zu calls): %s", calls[0], err.msg);
    /* bit-identical to the unprojected run: compare the last iterates */
    dpc_kan_lcgd *r1 = NULL, *r2 = NULL;
    dpc_kan_lcgd_config u = c;
    u.radius = INFINITY;
    CHECK_OK(dpc_kan_lcgd_new(&r1, &c, s.P, s.W0, &s.rng, &err), &err);
    CHECK_OK(dpc_kan_lcgd_new(&r2, &u, s.P, s.W0, &s.rng, &err), &err);
    for (size_t t = 1; t < c.iterates; t++) {
        CHECK_OK(dpc_kan_lcgd_step(r1, dpc_kan_task_grad, s.task, NULL, &err), &err);
        CHECK_OK(dpc_kan_lcgd_step(r2, dpc_kan_task_grad, s.task, NULL, &err), &err);
    }
    CHECK(memcmp(dpc_kan_lcgd_params(r1), dpc_kan_lcgd_params(r2), s.P * sizeof(double)) == 0,
          "no activation: bit-identical to the unprojected run");
    dpc_kan_lcgd_free(r1);
    dpc_kan_lcgd_free(r2);
    /* a small radius is hit, and every iterate stays in the ball */
    c.radius = 0.25 * a.max_dist;
    CHECK_OK(dpc_kan_lcgd_train(&c, s.P, &s.rng, s.W0, dpc_kan_task_grad, NULL, s.task, 1, NULL,
                                NULL, &b, &err), &err);
    CHECK(b.projections > 0 && b.max_dist <= c.radius * (1 + 1e-12),
          "small radius: %zu activations, max dist %g <= %g", b.projections, b.max_dist, c.radius);
    /* the same run by hand: the accessors agree with what the steps report and with W_0 as
     * given (a copy, owned by the run), and every iterate stays within the radius of it */
    CHECK(dpc_kan_task_num_params(s.task) == s.P, "task parameters %zu = model's %zu",
          dpc_kan_task_num_params(s.task), s.P);
    dpc_kan_lcgd *r3 = NULL;
    CHECK_OK(dpc_kan_lcgd_new(&r3, &c, s.P, s.W0, &s.rng, &err), &err);
    if (r3) {
        const double *w0 = dpc_kan_lcgd_initial(r3);
        CHECK(w0 != s.W0 && memcmp(w0, s.W0, s.P * sizeof(double)) == 0, "W_0: an owned copy");
        size_t seen = 0;
        double worst = 0;
        for (size_t t = 1; t < c.iterates; t++) {
            dpc_kan_lcgd_step_info info;
            CHECK_OK(dpc_kan_lcgd_step(r3, dpc_kan_task_grad, s.task, &info, &err), &err);
            seen += (size_t)info.projected;
            const double *w = dpc_kan_lcgd_params(r3);
            double d2 = 0;
            for (size_t q = 0; q < s.P; q++) d2 += (w[q] - s.W0[q]) * (w[q] - s.W0[q]);
            if (sqrt(d2) > worst) worst = sqrt(d2);
        }
        CHECK(dpc_kan_lcgd_projections(r3) == seen && seen == b.projections,
              "projections %zu = steps' %zu = run's %zu", dpc_kan_lcgd_projections(r3), seen,
              b.projections);
        CHECK(worst <= c.radius * (1 + 1e-12), "||W_t - W_0|| %g <= %g", worst, c.radius);
    }
    dpc_kan_lcgd_free(r3);
    free(y);
    setup_free(&s);
}

/* oracle 16, third part: activations appear once m passes the width window's upper edge */
static void test_width_window(void)
{
    dpc_error err = {0};
    const size_t ms[4] = {4, 16, 256, 1024};
    double edge = 0;
    size_t act[4];
    for (int i = 0; i < 4; i++) {
        setup s;
        setup_make(&s, 100, 2, ms[i], 3, 4);
        dpc_kan_lcgd_config c;
        dpc_kan_lcgd_config_init(&c);
        c.n = 100, c.batch = 10, c.iterates = 30, c.eta = 0.1, c.clip = 0.1, c.noise_std = 20;
        c.radius = 1.0;
        dpc_kan_rate_in ri = {100, ms[i], 2, 30, 10, c.eta, c.lambda, c.noise_std, 0.1, 0.01};
        dpc_kan_window w;
        CHECK_OK(dpc_kan_width_window(&ri, 6, c.clip, c.radius, &w, &err), &err);
        edge = w.m_edge;
        dpc_kan_lcgd_result res;
        CHECK_OK(dpc_kan_lcgd_train(&c, s.P, &s.rng, s.W0, dpc_kan_task_grad, NULL, s.task, 1,
                                    NULL, NULL, &res, &err), &err);
        act[i] = res.projections;
        setup_free(&s);
    }
    CHECK_NEAR_REL(edge, 1.0 / (2 * 6 * 0.01 * 0.04 * 29), 1e-12, "m_edge formula");
    for (int i = 0; i < 4; i++) {
        if ((double)ms[i] <= edge / 4) CHECK(act[i] == 0, "m = %zu inside (edge %g): %zu", ms[i], edge, act[i]);
        if ((double)ms[i] >= edge * 3) CHECK(act[i] > 0, "m = %zu beyond (edge %g): %zu", ms[i], edge, act[i]);
    }
}

/* ---- the header example, determinism, errors ----------------------------------------------- */

static int header_example(double *avg_loss)
{
    dpc_error err = {0};
    dpc_rng rng;
    dpc_rng_seed(&rng, 7);
    dpc_dataset *tr = NULL;
    dpc_kan2 *k = NULL;
    dpc_kan_task *task = NULL;
    double *W0 = NULL;
    int rc = 1;
    dpc_kan2_config kc = {5, 64, 5, DPC_KAN_SIGMOID}; /* d, m, grid G, sigma */
    if (dpc_kan_synth(&tr, &rng, 0, 1000, 5, 0.05, NULL, &err) ||
        dpc_kan2_new(&k, &kc, &rng, 0, &err) || dpc_kan2_task_new(&task, k, tr, NULL, &err))
        goto fail;
    W0 = malloc(dpc_kan2_num_params(k) * sizeof *W0);
    if (!W0 || dpc_kan2_init(k, W0, &rng, 0, &err)) goto fail;
    dpc_kan_lcgd_config c;
    dpc_kan_lcgd_config_init(&c);
    c.n = 1000; c.iterates = 400; c.batch = 100; c.eta = 0.5; c.clip = 1; c.lambda = 0.5;
    if (dpc_account_kan_paper_lcgd(1000, 100, 399, 1.0, 1e-5, 0.5, &c.noise_std, &err)) goto fail;
    dpc_kan_lcgd_result res;
    if (dpc_kan_lcgd_train(&c, dpc_kan2_num_params(k), &rng, W0, dpc_kan_task_grad,
                           dpc_kan_task_eval, task, 10, NULL, NULL, &res, &err))
        goto fail;
    *avg_loss = res.avg_train_loss; /* L_S(W_t) averaged over t = 0, 10, ..., T-1 */
    rc = 0;
fail:
    if (rc) fprintf(stderr, "header example: %s\n", err.msg);
    free(W0);
    dpc_kan_task_free(task);
    dpc_kan2_free(k);
    dpc_dataset_free(tr);
    return rc;
}

static void test_header_and_errors(void)
{
    double l1 = NAN, l2 = NAN;
    CHECK(header_example(&l1) == 0 && isfinite(l1) && l1 > 0, "header example runs: %g", l1);
    CHECK(header_example(&l2) == 0 && l1 == l2, "and is reproducible");
    dpc_kan_lcgd_config c;
    dpc_kan_lcgd_config_init(&c);
    dpc_error e = {0};
    CHECK(dpc_kan_lcgd_config_check(&c, &e) == DPC_E_INVALID && strstr(e.msg, "n:"), "n unset: %s", e.msg);
    c.n = 10;
    dpc_kan_lcgd_config b = c;
    b.iterates = 1;
    CHECK(dpc_kan_lcgd_config_check(&b, &e) == DPC_E_INVALID && strstr(e.msg, "iterates"), "T = 1");
    b = c, b.batch = 11;
    CHECK(dpc_kan_lcgd_config_check(&b, &e) == DPC_E_INVALID && strstr(e.msg, "batch"), "B > n");
    b = c, b.lambda = 1;
    CHECK(dpc_kan_lcgd_config_check(&b, &e) == DPC_E_INVALID && strstr(e.msg, "lambda"), "lambda 1");
    b = c, b.noise_std = -1;
    CHECK(dpc_kan_lcgd_config_check(&b, &e) == DPC_E_INVALID && strstr(e.msg, "noise_std"), "noise_std < 0");
    b = c, b.radius = 0;
    CHECK(dpc_kan_lcgd_config_check(&b, &e) == DPC_E_INVALID && strstr(e.msg, "radius"), "radius 0");
    b = c, b.eta = 0;
    CHECK(dpc_kan_lcgd_config_check(&b, &e) == DPC_E_INVALID && strstr(e.msg, "eta"), "eta 0");
    b = c, b.clip = INFINITY, b.noise_std = 1;
    CHECK(dpc_kan_lcgd_config_check(&b, &e) == DPC_E_INVALID && strstr(e.msg, "clip"), "inf clip with noise");
    b = c, b.clip = INFINITY, b.noise_std = 0;
    CHECK_OK(dpc_kan_lcgd_config_check(&b, &e), &e);
    /* the kan2 task refuses rows outside the unit ball and non-binary data */
    dpc_dataset *ds = NULL;
    dpc_rng rng;
    dpc_rng_seed(&rng, 1);
    CHECK_OK(dpc_kan_synth(&ds, &rng, 0, 5, 2, 0.0, NULL, &e), &e);
    dpc_kan2 *k = NULL;
    dpc_kan2_config kc = {2, 3, 3, DPC_KAN_TANH};
    CHECK_OK(dpc_kan2_new(&k, &kc, &rng, 0, &e), &e);
    ds->x[2 * 2 + 1] = 1.5;
    dpc_kan_task *t = NULL;
    CHECK(dpc_kan2_task_new(&t, k, ds, NULL, &e) == DPC_E_INVALID && strstr(e.msg, "example 2") &&
              strstr(e.msg, "unit ball"), "outside the ball: %s", e.msg);
    dpc_kan2_free(k);
    dpc_dataset_free(ds);
    dpc_kan_lcgd_free(NULL);
    dpc_kan_task_free(NULL);
}

/* The paper's spec grammars and run defaults, in the library (dpc_kan2_config_parse,
 * dpc_kan_synth_spec, dpc_kan_run_config_init). */
static void test_specs_and_defaults(void)
{
    dpc_error err = {0};
    dpc_kan2_config c;
    CHECK_OK(dpc_kan2_config_parse(&c, "kan2:8:grid=7:tanh", 3, &err), &err);
    CHECK(c.d == 3 && c.m == 8 && c.grid == 7 && c.act == DPC_KAN_TANH, "kan2:8:grid=7:tanh");
    CHECK_OK(dpc_kan2_config_parse(&c, "kan2:1e2", 3, &err), &err);
    CHECK(c.m == 100 && c.grid == 5 && c.act == DPC_KAN_SIGMOID, "an exact exponent width, defaults");
    static const char *const bad[] = {"kan2:", "kan2:0", "kan2:-3", "kan2: 4", "kan2:4:grid=0",
                                      "kan2:4:relu", "kan:4"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(dpc_kan2_config_parse(&c, bad[i], 3, &err) == DPC_E_INVALID &&
                  !strcmp(err.field, "model"),
              "'%s' refused naming model: %s", bad[i], err.msg);
    dpc_rng rng;
    dpc_rng_seed(&rng, 4);
    dpc_dataset *tr = NULL, *te = NULL, *ref = NULL;
    CHECK_OK(dpc_kan_synth_spec(&tr, &te, "kan-synth:n=40,d=3,test-n=10,stream=2,margin=0.1", &rng,
                                &err), &err);
    CHECK_OK(dpc_kan_synth(&ref, &rng, 4, 40, 3, 0.1, NULL, &err), &err);
    CHECK(tr && te && ref && tr->n == 40 && te->n == 10 && tr->d == 3 &&
              !memcmp(tr->x, ref->x, 40 * 3 * sizeof(double)),
          "kan-synth: the training set of stream 2 S, a test set");
    dpc_dataset_free(tr), dpc_dataset_free(te), dpc_dataset_free(ref);
    static const char *const badd[] = {"kan-synth:n=4,d", "kan-synth:n=-4,d=2", "kan-synth:q=1",
                                       "kan-synth:n=4,d=2,margin=-1"};
    for (size_t i = 0; i < sizeof badd / sizeof badd[0]; i++)
        CHECK(dpc_kan_synth_spec(&tr, &te, badd[i], &rng, &err) == DPC_E_INVALID &&
                  !strcmp(err.field, "data") && !tr && !te,
              "'%s' refused naming data: %s", badd[i], err.msg);
    dpc_kan_run_config d;
    dpc_kan_run_config_init(&d);
    CHECK(d.privacy.delta == 0 && d.privacy.lambda == 0.5 && d.iterates == 1000 &&
              d.batch == 100 && d.lr == 0.5 && d.clip == 1 && isinf(d.radius) && d.eval_every == 1,
          "run defaults");
    CHECK(dpc_kan_run_iterates(50, 0, 10, 95) == 50 && dpc_kan_run_iterates(50, 2, 10, 95) == 19,
          "iterates: given, or 1 + epochs floor(n / B)");
}

/* The paper-model test follows the grammar (only what dpc_kan2_config_parse accepts as a kan2
 * spec is one), and a run's iterates refuse a batch larger than the data by name. */
static void test_run_decisions(void)
{
    const char *yes[] = {"kan2:8", "kan2:256:tanh", "kan2:x"}, *no[] = {"kan:64", "kan2", "mlp:8", "", "KAN2:8"};
    for (size_t i = 0; i < 3; i++) CHECK(dpc_kan2_spec_is(yes[i]) == 1, "'%s' is the paper's KAN", yes[i]);
    for (size_t i = 0; i < 5; i++) CHECK(dpc_kan2_spec_is(no[i]) == 0, "'%s' is not", no[i]);
    CHECK(dpc_kan2_spec_is(NULL) == 0, "NULL is not");
    dpc_kan2_config kc;
    dpc_error err = {0};
    CHECK(dpc_kan2_config_parse(&kc, "kan:64", 3, &err) == DPC_E_INVALID, "parse agrees: kan:64 refused");
    dpc_kan_run_config rc;
    dpc_kan_run_config_init(&rc);
    rc.iterates = 50, rc.batch = 10;
    size_t T = 0;
    CHECK_OK(dpc_kan_run_count_iterates(&rc, 2, 95, &T, &err), &err);
    CHECK(T == 1 + 2 * (95 / 10), "epochs: T = 1 + 2 floor(95/10) = %zu", T);
    CHECK_OK(dpc_kan_run_count_iterates(&rc, 0, 10, &T, &err), &err);
    CHECK(T == 50, "batch = n accepted, T given: %zu", T);
    dpc_error e2 = {0};
    T = 7;
    CHECK(dpc_kan_run_count_iterates(&rc, 0, 9, &T, &e2) == DPC_E_INVALID &&
              !strcmp(e2.field, "batch") && T == 7,
          "batch 10 > n 9 refused naming batch (%s), T untouched", e2.field);
}

int main(void)
{
    test_batches();
    test_noise_stats();
    test_noise_walk();
    test_shifted_iterate();
    test_inactivity();
    test_width_window();
    test_header_and_errors();
    test_specs_and_defaults();
    test_run_decisions();
    return TEST_SUMMARY();
}
