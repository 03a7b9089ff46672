/* test_srgd_opt.c — Accelerated-DP-SRGD: optimization side. The note's oracles O3 (SRG
 * exactness on identical examples; the SRG error shrinks like 1/sqrt(B(t+1)) within its Azuma
 * bound), O4 (noise-free accelerated rate below 2 beta |x0 - x*|^2 / (T(T+1)), slope <= -2, on
 * an ill-conditioned quadratic and Nesterov's worst-case function), O5 (Lemma 5.9's
 * deterministic bound on every per-example |Delta_t(d)| in Regime B, x-dagger inside and outside
 * C) and O6 (per-example |Delta_t(d)| flat in t in Regime A), plus the synthetic problems: the
 * closed-form F against Monte-Carlo means of the generated data, and x* by its KKT conditions. */
#include "dpcorr.h"
#include "harness.h"
#include "slope_fixture.h"

static dpc_model *model_of(const char *spec, size_t d, size_t k)
{
    dpc_model_config mc;
    dpc_model *m = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_model_parse(&mc, spec, d, k, &err), &err);
    CHECK_OK(dpc_model_new(&m, &mc, &err), &err);
    return m;
}

typedef struct prob_spec {
    dpc_srgd_problem_kind kind;
    dpc_srgd_design design;
    size_t n, p;
    double w, R, decades;
} prob_spec;

static dpc_srgd_problem *make(const prob_spec *ps, uint64_t seed)
{
    dpc_srgd_problem_config pc;
    dpc_srgd_problem_config_init(&pc);
    pc.kind = ps->kind;
    pc.design = ps->design;
    pc.n = ps->n;
    pc.p = ps->p;
    if (ps->w > 0) pc.w_norm = ps->w;
    if (ps->R > 0) pc.R = ps->R;
    if (ps->decades > 0) pc.decades = ps->decades;
    pc.eval_n = 20000;
    dpc_rng rng;
    dpc_rng_seed(&rng, seed);
    dpc_srgd_problem *pr = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_srgd_problem_new(&pr, &pc, &rng, 0, &err), &err);
    return pr;
}

static dpc_model *model_for(const dpc_srgd_problem *pr)
{
    const dpc_srgd_problem_config *pc = dpc_srgd_problem_get_config(pr);
    return model_of(dpc_srgd_problem_model_spec(pr), pc->p,
                    pc->kind == DPC_SRGD_P1_LOGISTIC ? 2 : 0);
}

/* Runs cfg on the problem; trace (T) may be NULL; returns the excess risk of the output. */
static double run(const dpc_srgd_problem *pr, const dpc_model *m, dpc_srgd_config *c,
                  uint64_t seed, dpc_srgd_step_info *trace)
{
    dpc_error err = {0};
    dpc_rng rng;
    dpc_rng_seed(&rng, seed);
    dpc_srgd *s = NULL;
    double ex = NAN;
    CHECK_OK(dpc_srgd_new(&s, m, dpc_srgd_problem_data(pr), c, &rng, &err), &err);
    if (!s) return NAN;
    CHECK_OK(dpc_srgd_run(s, trace, &err), &err);
    CHECK_OK(dpc_srgd_problem_excess(pr, dpc_srgd_output(s), &ex, &err), &err);
    dpc_srgd_free(s);
    return ex;
}

/* ==== the problems ================================================================================ */

/* mean per-example loss of the generated data at x vs the closed-form F(x), within 5 s.e. */
static void check_mc(const dpc_srgd_problem *pr, const dpc_model *m, const double *x,
                     const char *what)
{
    dpc_error err = {0};
    const dpc_dataset *ds = dpc_srgd_problem_data(pr);
    size_t P = ds->d;
    double *g = malloc(P * sizeof *g), s = 0, s2 = 0, F;
    int ok = 1;
    for (size_t i = 0; i < ds->n; i++) {
        double l = 0;
        ok &= dpc_model_loss_grad(m, x, ds->x + i * P, ds->y[i], &l, g, &err) == DPC_OK;
        s += l;
        s2 += l * l;
    }
    CHECK(ok, "losses: %s", err.msg);
    free(g);
    double N = (double)ds->n, mean = s / N, se = sqrt(fmax(s2 / N - mean * mean, 0) / N);
    CHECK_OK(dpc_srgd_problem_risk((void *)pr, x, P, &F, NULL, &err), &err);
    CHECK(fabs(mean - F) <= 5 * se + 1e-12, "%s: sample mean loss %.6g vs F %.6g (se %.2g)", what,
          mean, F, se);
}

static void test_problems(void)
{
    dpc_error err = {0};
    const prob_spec specs[] = {
        {DPC_SRGD_P1_LOGISTIC, DPC_SRGD_DESIGN_SPARSE, 40000, 6, 1.5, 2, 2},
        {DPC_SRGD_P1_LOGISTIC, DPC_SRGD_DESIGN_SPHERE, 40000, 6, 1.5, 2, 2},
        {DPC_SRGD_P2_LSQ, DPC_SRGD_DESIGN_SPARSE, 40000, 6, 1.5, 2, 2},
        {DPC_SRGD_P2_LSQ, DPC_SRGD_DESIGN_SPHERE, 40000, 6, 1.5, 2, 2},
        {DPC_SRGD_P1_LOGISTIC, DPC_SRGD_DESIGN_SPARSE, 40000, 6, 3.0, 1, 2}, /* x-dagger out */
        {DPC_SRGD_P2_LSQ, DPC_SRGD_DESIGN_SPARSE, 40000, 6, 3.0, 1, 2},
    };
    for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
        dpc_srgd_problem *pr = make(&specs[k], 40 + k);
        if (!pr) continue;
        dpc_model *m = model_for(pr);
        const double *xs = dpc_srgd_problem_xstar(pr);
        double x[6], F, Fs, ex, g[6], L, M, R;
        dpc_srgd_problem_constants(pr, &L, &M, &R);
        for (int j = 0; j < 6; j++) x[j] = 0.3 * (j % 3) - 0.25;
        check_mc(pr, m, x, "random x");
        check_mc(pr, m, xs, "x*");
        /* x*: feasible, stationary (interior) or KKT on the sphere (nu >= 0) */
        CHECK_OK(dpc_srgd_problem_risk(pr, xs, 6, &Fs, g, &err), &err);
        CHECK_NEAR_REL(Fs, dpc_srgd_problem_fstar(pr), 1e-14, "F* stored");
        double nx = 0, gx = 0, ng = 0;
        for (int j = 0; j < 6; j++) nx += xs[j] * xs[j], gx += g[j] * xs[j], ng += g[j] * g[j];
        nx = sqrt(nx);
        if (specs[k].w <= R) {
            CHECK(sqrt(ng) <= 1e-9, "problem %zu: interior x*, grad F = %g", k, sqrt(ng));
        } else {
            double nu = -gx / (nx * nx), res = 0;
            for (int j = 0; j < 6; j++) res += (g[j] + nu * xs[j]) * (g[j] + nu * xs[j]);
            CHECK_NEAR_REL(nx, R, 1e-9, "problem %zu: |x*| = R", k);
            CHECK(nu > 0 && sqrt(res) <= 1e-8 * sqrt(ng), "problem %zu: KKT (nu %g, res %g)", k,
                  nu, sqrt(res));
        }
        /* F(x*) <= F on random feasible points; excess >= 0 and 0 at x* */
        dpc_rng rng;
        dpc_rng_seed(&rng, 3);
        dpc_rng_stream st = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_TEST, k));
        int worse = 0;
        for (int r = 0; r < 200; r++) {
            double nr = 0;
            for (int j = 0; j < 6; j++) {
                x[j] = dpc_rng_gaussian(&st, r, j);
                nr += x[j] * x[j];
            }
            double f = R * dpc_rng_uniform(&st, r, 7) / sqrt(nr);
            for (int j = 0; j < 6; j++) x[j] *= f;
            CHECK_OK(dpc_srgd_problem_risk(pr, x, 6, &F, NULL, &err), &err);
            CHECK_OK(dpc_srgd_problem_excess(pr, x, &ex, &err), &err);
            worse += F < Fs - 1e-12;
            if (specs[k].design == DPC_SRGD_DESIGN_SPARSE || specs[k].kind == DPC_SRGD_P2_LSQ)
                CHECK_NEAR_ABS(ex, F - Fs, 1e-12, "excess = F - F*");
        }
        CHECK(worse == 0, "problem %zu: no feasible point beats x* (%d did)", k, worse);
        CHECK_OK(dpc_srgd_problem_excess(pr, xs, &ex, &err), &err);
        CHECK(ex <= 1e-15, "excess(x*) = %g", ex);
        CHECK(specs[k].kind == DPC_SRGD_P1_LOGISTIC ? L == 1 && M == 0.25 : M == 1,
              "constants L %g M %g", L, M);
        dpc_model_free(m);
        dpc_srgd_problem_free(pr);
    }
    /* Nesterov's function: x*_i = 1 - i/(p+1), F* = 1/(8(p+1)), grad F(x*) = 0 */
    prob_spec ns = {DPC_SRGD_P3_NESTEROV, DPC_SRGD_DESIGN_SPARSE, 101 * 3, 100, 0, 10, 0};
    dpc_srgd_problem *pr = make(&ns, 1);
    if (pr) {
        const double *xs = dpc_srgd_problem_xstar(pr);
        double g[100], F, ng = 0;
        CHECK_OK(dpc_srgd_problem_risk(pr, xs, 100, &F, g, &err), &err);
        for (int i = 0; i < 100; i++) ng += g[i] * g[i];
        CHECK_NEAR_REL(F, 1.0 / (8.0 * 101), 1e-12, "Nesterov F*");
        CHECK(sqrt(ng) < 1e-14, "Nesterov grad F(x*) = %g", sqrt(ng));
        CHECK_NEAR_REL(xs[0], 1 - 1.0 / 101, 1e-15, "x*_1");
        dpc_model *m = model_for(pr);
        double x[100];
        for (int i = 0; i < 100; i++) x[i] = 0.01 * (i % 7);
        double mean;
        const dpc_dataset *ds = dpc_srgd_problem_data(pr);
        CHECK_OK(dpc_model_evaluate(m, x, ds->x, ds->y, ds->n, &mean, NULL, NULL, &err), &err);
        CHECK_OK(dpc_srgd_problem_risk(pr, x, 100, &F, NULL, &err), &err);
        CHECK_NEAR_REL(mean, F, 1e-12, "the repeated design reproduces F exactly");
        dpc_model_free(m);
        dpc_srgd_problem_free(pr);
    }
    ns.R = 1; /* |x*| ~ 5.8 > R */
    dpc_srgd_problem_config pc;
    dpc_srgd_problem_config_init(&pc);
    pc.kind = DPC_SRGD_P3_NESTEROV;
    pc.n = 10;
    pc.p = 100;
    pc.R = 1;
    dpc_rng rng;
    dpc_rng_seed(&rng, 1);
    dpc_srgd_problem *bad = NULL;
    CHECK(dpc_srgd_problem_new(&bad, &pc, &rng, 0, &err) == DPC_E_UNSUPPORTED && !bad &&
              strstr(err.msg, "R"),
          "P3 with x* outside C: %s", err.msg);
    pc.kind = DPC_SRGD_P1_LOGISTIC;
    pc.p = 0;
    CHECK(dpc_srgd_problem_new(&bad, &pc, &rng, 0, &err) == DPC_E_INVALID && strstr(err.msg, "p:"),
          "p = 0: %s", err.msg);
}

/* ==== O3: SRG exactness and concentration ============================================================ */

static void test_o3_srg(void)
{
    /* identical batches (P3 quadratic, B = 2K): grad_t == grad F(x_t) up to rounding */
    const size_t p = 10, T = 30, B = 20;
    prob_spec qs = {DPC_SRGD_P3_QUADRATIC, DPC_SRGD_DESIGN_SPARSE, T * B, p, 0.8, 2, 3};
    dpc_srgd_problem *pr = make(&qs, 1);
    if (!pr) return;
    dpc_model *m = model_for(pr);
    for (int var = 0; var < 2; var++) {
        dpc_srgd_config c;
        dpc_srgd_config_init(&c);
        dpc_srgd_problem_constants(pr, &c.L, &c.M, &c.R);
        c.steps = T;
        c.batch = B;
        c.beta = 1;
        c.clip = INFINITY;
        c.epsilon = INFINITY;
        c.variant = var ? DPC_SRGD_SRG : DPC_SRGD_ACCEL;
        c.risk = dpc_srgd_problem_risk;
        c.risk_ctx = pr;
        c.eval_every = 1;
        dpc_srgd_step_info tr[30];
        run(pr, m, &c, 1, tr);
        double worst = 0;
        for (size_t t = 0; t < T; t++)
            worst = fmax(worst, tr[t].srg_error / fmax(tr[t].grad_F_norm, 1e-300));
        CHECK(worst <= 1e-12, "O3 %s: |S_t/eta_t - grad F(x_t)| / |grad F| <= %g",
              var ? "srg" : "accel", worst);
    }
    dpc_model_free(m);
    dpc_srgd_problem_free(pr);

    /* random batches (P2): the error shrinks like 1/sqrt(B(t+1)) and stays within Azuma */
    size_t nseeds = tests_scale() < 1 ? 3 : 10;
    prob_spec ps = {DPC_SRGD_P2_LSQ, DPC_SRGD_DESIGN_SPARSE, 65536, 16, 1, 2, 4};
    pr = make(&ps, 2);
    if (!pr) return;
    m = model_for(pr);
    dpc_srgd_config c;
    dpc_srgd_config_init(&c);
    dpc_srgd_problem_constants(pr, &c.L, &c.M, &c.R);
    c.epsilon = INFINITY;
    dpc_error err = {0};
    CHECK_OK(dpc_srgd_preset(&c, DPC_SRGD_REGIME_A, 1, 0, 65536, 16, &err), &err);
    c.clip = INFINITY;
    c.risk = dpc_srgd_problem_risk;
    c.risk_ctx = pr;
    c.eval_every = 1;
    size_t T2 = c.steps;
    double mean_err[16] = {0}, ts[16], within = 1, Q = 0;
    dpc_srgd_step_info tr[16];
    for (size_t sd = 0; sd < nseeds; sd++) {
        dpc_srgd_problem *prs = make(&ps, 100 + sd); /* fresh data per seed */
        c.risk_ctx = prs;
        run(prs, m, &c, sd, tr);
        for (size_t t = 0; t < T2; t++) Q = fmax(Q, 2 * tr[t].max_norm);
        for (size_t t = 0; t < T2; t++) {
            mean_err[t] += tr[t].srg_error / (double)nseeds;
            /* Thm 5.1: l_t = sqrt(3 (t+1) log(6T/gamma)), |q_t| <= Q l_t / (sqrt B eta_t) */
            double bound = Q * sqrt(3.0 * (double)(t + 1) * log(6.0 * (double)T2 / 0.01)) /
                           (sqrt((double)c.batch) * (double)(t + 1));
            if (tr[t].srg_error > bound) within = 0;
        }
        dpc_srgd_problem_free(prs);
    }
    for (size_t t = 0; t < T2; t++) ts[t] = (double)(t + 1);
    double sl = ols_loglog(ts, mean_err, T2);
    printf("O3: mean SRG error slope vs t+1: %.3f (want -1/2); Q = %.3g\n", sl, Q);
    CHECK(sl >= -0.75 && sl <= -0.25, "O3: SRG error ~ (t+1)^%.3f (want -1/2)", sl);
    CHECK(within, "O3: every SRG error within Q sqrt(3 (t+1) log(6T/0.01))/(sqrt B eta_t)");
    dpc_model_free(m);
    dpc_srgd_problem_free(pr);
}

/* ==== O4: the noise-free accelerated rate ========================================================== */

/* Ill-conditioned quadratic (p = 20, kappa = 1e3, |x*| = 0.8) and Nesterov's worst case on its
 * hard family p = 2T + 1 (for p >> T its error is >= (1/8)(1/(T+1) - 1/(p+1)) ~ 1/T by the span
 * argument, so the T^-2 rate shows only relative to |x0 - x*|^2 ~ p/3). beta = M = 1. */
static void test_o4_rate(void)
{
    const size_t Ts[] = {10, 20, 40, 80};
    for (int kind = 0; kind < 2; kind++) {
        double ex[4], tt[4];
        for (size_t i = 0; i < 4; i++) {
            size_t T = Ts[i], p = kind ? 2 * T + 1 : 20, K = kind ? p + 1 : p;
            prob_spec qs = {kind ? DPC_SRGD_P3_NESTEROV : DPC_SRGD_P3_QUADRATIC,
                            DPC_SRGD_DESIGN_SPARSE, T * K, p, 0.8, 20, 3};
            dpc_srgd_problem *pr = make(&qs, 1);
            if (!pr) return;
            dpc_model *m = model_for(pr);
            const double *xs = dpc_srgd_problem_xstar(pr);
            double r2 = 0;
            for (size_t j = 0; j < p; j++) r2 += xs[j] * xs[j];
            double bound = 2.0 * 1.0 * r2 / ((double)T * (double)(T + 1));
            const double zs[3] = {0.5, 1.0, 0.25};
            for (int z = 0; z < 3; z++) {
                dpc_srgd_config c;
                dpc_srgd_config_init(&c);
                dpc_srgd_problem_constants(pr, &c.L, &c.M, &c.R);
                c.steps = T;
                c.batch = K;
                c.beta = 1; /* = M */
                c.clip = INFINITY;
                c.epsilon = INFINITY;
                c.z_step = zs[z];
                double e = run(pr, m, &c, 1, NULL);
                CHECK(e <= bound, "O4 %s T = %zu z_step %g: F(y_T) - F* = %.3g <= "
                      "2 beta |x0-x*|^2/(T(T+1)) = %.3g", kind ? "nesterov" : "quadratic", T,
                      zs[z], e, bound);
                if (z == 0) ex[i] = kind ? e / r2 : e;
                /* Nesterov (2004, Thm 2.1.7): any span method after T steps on f_{2T+1} */
                if (kind)
                    CHECK(e >= 3.0 * r2 / (32.0 * (double)(T + 1) * (double)(T + 1)),
                          "O4 nesterov T = %zu: %.3g above the lower bound", T, e);
            }
            tt[i] = (double)T;
            dpc_model_free(m);
            dpc_srgd_problem_free(pr);
        }
        double sl = ols_loglog(tt, ex, 4);
        printf("O4 %s: slope %.3f\n", kind ? "nesterov (normalized)" : "quadratic", sl);
        if (kind == 0) CHECK(sl <= -2.0, "O4 quadratic: log-log slope %.3f <= -2 (z_step 1/2)", sl);
        else
            CHECK(sl <= -1.8 && sl >= -2.2, "O4 nesterov (hard family): slope of (F - F*)/"
                  "|x0-x*|^2 = %.3f, both bounds ~ T^-2", sl);
    }
}

/* ==== O5: Lemma 5.9 in Regime B ====================================================================== */

static void test_o5_lemma59(void)
{
    dpc_error err = {0};
    const prob_spec specs[] = {
        {DPC_SRGD_P1_LOGISTIC, DPC_SRGD_DESIGN_SPARSE, 4096, 8, 1, 2, 3},   /* x-dagger in C */
        {DPC_SRGD_P1_LOGISTIC, DPC_SRGD_DESIGN_SPARSE, 4096, 8, 3, 0.3, 3}, /* outside */
        {DPC_SRGD_P2_LSQ, DPC_SRGD_DESIGN_SPARSE, 4096, 8, 1, 2, 3},
        {DPC_SRGD_P2_LSQ, DPC_SRGD_DESIGN_SPHERE, 4096, 8, 3, 0.5, 3},
    };
    const double eps[] = {INFINITY, 4, 0.25};
    double worst = 0;
    size_t runs = 0;
    for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
        dpc_srgd_problem *pr = make(&specs[k], 7 + k);
        if (!pr) return;
        dpc_model *m = model_for(pr);
        for (int e = 0; e < 3; e++)
            for (uint64_t sd = 0; sd < 2; sd++) {
                dpc_srgd_config c;
                dpc_srgd_config_init(&c);
                dpc_srgd_problem_constants(pr, &c.L, &c.M, &c.R);
                c.epsilon = eps[e];
                CHECK_OK(dpc_srgd_preset(&c, DPC_SRGD_REGIME_B, 1, 0, 4096, 8, &err), &err);
                CHECK(c.beta >= 2 * c.M * (double)c.steps, "beta >= 2 M T");
                dpc_srgd_step_info tr[64];
                run(pr, m, &c, sd, tr);
                double bmax = 0, maxn = 0;
                for (size_t t = 0; t < c.steps; t++) bmax = fmax(bmax, tr[t].b_norm);
                double bound = dpc_srgd_lemma59_bound(c.M, c.L, 2 * c.R, bmax);
                for (size_t t = 0; t < c.steps; t++) maxn = fmax(maxn, tr[t].max_norm);
                CHECK(maxn <= bound, "O5 problem %zu eps %g: max |Delta_t(d)| = %g > Lemma 5.9 "
                      "bound %g", k, eps[e], maxn, bound);
                worst = fmax(worst, maxn / bound);
                runs++;
            }
        dpc_model_free(m);
        dpc_srgd_problem_free(pr);
    }
    printf("O5: %zu Regime-B runs, largest max|Delta_t(d)| / Lemma 5.9 bound = %.3f\n", runs,
           worst);
    CHECK(runs == 24 && worst > 0.05, "O5: %zu runs, largest |Delta|/bound %.3f", runs, worst);
    CHECK_NEAR_REL(dpc_srgd_lemma59_bound(0.25, 1, 4, 0.5), 2 * (0.125 + 2 + 1), 1e-15,
                   "2 (M b_max + 2 M diam + L)");
}

/* ==== O6: flat per-example increments in Regime A =================================================== */

static void test_o6_flat(void)
{
    dpc_error err = {0};
    /* the note's setting: P1, p = 5, R = 4, beta = M = 1/4, unclipped */
    const size_t ns[] = {1000, 16000, 64000};
    for (int design = 0; design < 2; design++)
        for (size_t i = 0; i < 3; i++) {
            prob_spec ps = {DPC_SRGD_P1_LOGISTIC, (dpc_srgd_design)design, ns[i], 5, 2, 4, 1};
            dpc_srgd_problem *pr = make(&ps, 5 + i);
            if (!pr) return;
            dpc_model *m = model_for(pr);
            dpc_srgd_config c;
            dpc_srgd_config_init(&c);
            dpc_srgd_problem_constants(pr, &c.L, &c.M, &c.R);
            c.epsilon = INFINITY;
            CHECK_OK(dpc_srgd_preset(&c, DPC_SRGD_REGIME_A, 1, 0, ns[i], 5, &err), &err);
            CHECK(c.beta == 0.25, "beta = M = 1/4");
            c.clip = INFINITY;
            dpc_srgd_step_info tr[16];
            run(pr, m, &c, 1, tr);
            double mx = 0, early = 0, late = 0;
            size_t T = c.steps;
            for (size_t t = 0; t < T; t++) {
                mx = fmax(mx, tr[t].max_norm);
                if (t < T / 2) early = fmax(early, tr[t].max_norm);
                else late = fmax(late, tr[t].max_norm);
            }
            printf("O6 n = %zu design %d: T = %zu, max |Delta_t(d)| early %.3f late %.3f\n",
                   ns[i], design, T, early, late);
            CHECK(mx <= 2 * c.L, "O6 n = %zu: max |Delta_t(d)| = %g <= 2L (eta_T = %zu)", ns[i],
                  mx, T);
            CHECK(late <= 1.5 * early, "O6 n = %zu design %d: flat in t (late %g, early %g)",
                  ns[i], design, late, early);
            /* and a private run with C_Delta = 2L never clips */
            c.epsilon = 1;
            c.clip = 2 * c.L;
            run(pr, m, &c, 2, tr);
            double clip = 0;
            for (size_t t = 0; t < T; t++) clip = fmax(clip, tr[t].clip_fraction);
            CHECK(clip == 0, "O6: clipping at 2L never active (max rate %g)", clip);
            dpc_model_free(m);
            dpc_srgd_problem_free(pr);
        }
}

/* the example of include/dpcorr/papers/srgd.h, verbatim but for the checks */
static void test_header_example(void)
{
    dpc_error err = {0};  dpc_rng rng;  dpc_rng_seed(&rng, 7);
    dpc_srgd_problem_config pc;  dpc_srgd_problem_config_init(&pc);
    pc.kind = DPC_SRGD_P2_LSQ;  pc.n = 65536;  pc.p = 32;
    dpc_srgd_problem *pr = NULL;  dpc_model_config mc;  dpc_model *model = NULL;
    dpc_srgd *s = NULL;  double excess = NAN;
    if (dpc_srgd_problem_new(&pr, &pc, &rng, 0, &err) ||
        dpc_model_parse(&mc, dpc_srgd_problem_model_spec(pr), pc.p, 0, &err) ||
        dpc_model_new(&model, &mc, &err)) goto fail;
    dpc_srgd_config c;  dpc_srgd_config_init(&c);
    dpc_srgd_problem_constants(pr, &c.L, &c.M, &c.R);
    c.epsilon = 1;  c.delta = 1e-6;
    if (dpc_srgd_preset(&c, DPC_SRGD_REGIME_A, 1.0, 0, pc.n, pc.p, &err)) goto fail;
    CHECK(c.steps == 16 && c.batch == 4096, "header example: T = 16, B = 4096");
    if (dpc_srgd_new(&s, model, dpc_srgd_problem_data(pr), &c, &rng, &err) ||
        dpc_srgd_run(s, NULL, &err) ||
        dpc_srgd_problem_excess(pr, dpc_srgd_output(s), &excess, &err)) goto fail;
    CHECK(excess > 2e-4 && excess < 5e-3, "header example: excess risk %g about 1e-3", excess);
    dpc_srgd_free(s);  dpc_model_free(model);  dpc_srgd_problem_free(pr);
    return;
fail:
    CHECK(0, "header example: %s", err.msg);
    dpc_srgd_free(s);  dpc_model_free(model);  dpc_srgd_problem_free(pr);
}

int main(void)
{
    test_header_example();
    test_problems();
    test_o3_srg();
    test_o4_rate();
    test_o5_lemma59();
    test_o6_flat();
    return TEST_SUMMARY();
}
