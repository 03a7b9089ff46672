/* test_linreg_privacy.c — privacy of DP-AMBSSGD / DP-SSGD (papers/001 note, oracles O3, O4,
 * O13): the zCDP arithmetic and the alpha round trip against the note's §3.2 table, DP-STAT's
 * per-count noise and total rho for every K, the shuffling accountant against mpmath, the noise
 * std actually added (2 alpha zeta_t / b, regenerated from the documented stream), and the
 * neighbouring-dataset test: replacing one record moves the pre-noise update by at most
 * 2 eta zeta_t / b and changes nothing before its step. */
#include "dpcorr.h"
#include "harness.h"
#include "linreg_oracles.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static dpc_dataset *synth(size_t n, size_t d, double noise, uint64_t seed)
{
    dpc_rng rng;
    dpc_rng_seed(&rng, seed);
    dpc_dataset *ds = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_data_synth_linreg(&ds, &rng, 0, n, d, 0.0, noise, NULL, &err), &err);
    return ds;
}

static void prior_identity(dpc_linreg_prior *p, size_t d)
{
    p->h_norm = 1;
    p->kappa = 1;
    p->r_x = sqrt((double)d);
}

/* O3: the note's §3.2 table, rho = 1/alpha^2, eps = rho + 2 sqrt(rho log(1/delta)). */
static void test_zcdp(void)
{
    dpc_error err = {0};
    const double t[][5] = {{0.1, 1e-5, 68.008, 68.156, 95.971}, {0.5, 1e-5, 13.718, 13.864, 19.194},
                           {1.0, 1e-5, 6.930, 7.075, 9.597},    {1.0, 1e-6, 7.566, 7.698, 10.513},
                           {2.0, 1e-5, 3.535, 3.676, 4.799},    {4.0, 1e-5, 1.833, 1.969, 2.399}};
    for (size_t i = 0; i < NELEM(t); i++) {
        double eps = t[i][0], delta = t[i][1], L = log(1 / delta);
        dpc_linreg_opts o;
        dpc_linreg_opts_init(&o, DPC_LINREG_AMBSSGD);
        prior_identity(&o.prior, 10);
        o.epsilon = eps;
        o.delta = delta;
        o.allow_large_delta = 1; /* the note's table at N = 10^6 (delta 1e-5 >= 1/N) */
        /* the paper's Thm. 3.6 calibration alpha* (Bun & Steinke inverse), given as z */
        double astar;
        CHECK_OK(dpc_account_ambssgd_alpha(eps, delta, 0, &astar, &err), &err);
        CHECK_NEAR_ABS(astar, t[i][2], 5e-4, "alpha*(%g, %g) (note table)", eps, delta);
        o.epsilon = 0;
        o.noise_multiplier = astar;
        dpc_linreg_plan p;
        CHECK_OK(dpc_linreg_plan_make(&p, &o, 1000000, 10, &err), &err);
        const dpc_linreg_plan *G = &p;
        double z = G->ledger.noise_multiplier;
        CHECK(z == astar && G->noise_multiplier_stat == z, "DP-STAT uses the same z");
        CHECK_NEAR_REL(G->rho, 1 / (z * z), 1e-14, "rho = 1/z^2");
        CHECK_NEAR_REL(G->rho_grad, 0.5 / (z * z), 1e-14, "gradient 1/(2 z^2)");
        CHECK_NEAR_REL(G->rho_stat, 0.5 / (z * z), 1e-14, "DP-STAT 1/(2 z^2)");
        CHECK_NEAR_REL(G->rho + 2 * sqrt(G->rho * L), eps, 1e-12, "Bun-Steinke conversion");
        CHECK_NEAR_REL(G->ledger.epsilon_paper, eps, 1e-12, "the paper claims eps for alpha*");
        double e_acc, e_gdp;
        CHECK_OK(dpc_account_ambssgd_epsilon(z, delta, &e_acc, &err), &err);
        CHECK_NEAR_REL(G->ledger.epsilon_paper, e_acc, 1e-14, "= dpc_account_ambssgd_epsilon");
        /* the accountant: two Gaussians of multiplier z, exactly: mu = sqrt(2)/z */
        CHECK_OK(dpc_gdp_epsilon(sqrt(2.0) / z, delta, &e_gdp, &err), &err);
        CHECK_NEAR_REL(G->ledger.epsilon, e_gdp, 1e-12, "ledger epsilon = GDP(sqrt 2 / z)");
        CHECK(G->ledger.epsilon < eps, "the exact accountant is tighter (%g < %g)",
              G->ledger.epsilon, eps);
        CHECK(G->ledger.neighbor == DPC_NEIGHBOR_REPLACE_ONE && strstr(G->ledger.route, "parallel") &&
                  !strcmp(G->ledger.calibration, "given"), "route");
        /* accountant calibration: spends eps exactly, with less noise than alpha* */
        o.noise_multiplier = 0;
        o.epsilon = eps;
        CHECK_OK(dpc_linreg_plan_make(&p, &o, 1000000, 10, &err), &err);
        CHECK_NEAR_REL(p.ledger.epsilon, eps, 1e-9, "accountant calibration spends eps");
        CHECK(p.ledger.noise_multiplier < astar && !strcmp(p.ledger.calibration, "accountant"),
              "z %g < alpha* %g", p.ledger.noise_multiplier, astar);
        o.calibration = DPC_CALIBRATION_PAPER;
        CHECK_OK(dpc_linreg_plan_make(&p, &o, 1000000, 10, &err), &err);
        CHECK_NEAR_ABS(p.ledger.noise_multiplier, t[i][4], 5e-4, "Thm. 3.7 alpha (note table)");
        CHECK(p.ledger.epsilon <= eps && p.ledger.epsilon_paper <= eps,
              "Thm. 3.7 alpha is valid (%g, %g <= %g)", p.ledger.epsilon, p.ledger.epsilon_paper,
              eps);
        o.calibration = DPC_CALIBRATION_ACCOUNTANT;
        o.epsilon = 0;
        o.noise_multiplier = 2 * sqrt(L + eps) / eps; /* Thm. 3.6's sufficient condition */
        /* 1e-3: the note prints 68.156 for 68.15549 */
        CHECK_NEAR_ABS(o.noise_multiplier, t[i][3], 1e-3, "Thm. 3.6 alpha (note table)");
        CHECK_OK(dpc_linreg_plan_make(&p, &o, 1000000, 10, &err), &err);
        CHECK(p.ledger.epsilon_paper <= eps && isnan(p.ledger.epsilon_target),
              "Thm. 3.6 alpha is valid");
        o.noise_multiplier = 0;
    }
    double rho;
    CHECK_OK(dpc_zcdp_rho_for(1.0, 1e-5, DPC_ZCDP_BUN_STEINKE, &rho, &err), &err);
    CHECK_NEAR_ABS(rho, 0.020820, 5e-7, "rho*(1, 1e-5) (note)");
    /* DP-STAT: K counts of std sqrt(K) alpha cost 1/(2 alpha^2) in total, for every K */
    size_t Ks[] = {1, 7, 40, 4000};
    for (size_t i = 0; i < NELEM(Ks); i++) {
        dpc_linreg_opts o;
        dpc_linreg_opts_init(&o, DPC_LINREG_AMBSSGD);
        prior_identity(&o.prior, 10);
        o.noise_multiplier = 3.0;
        o.dpstat_k = Ks[i];
        dpc_linreg_plan p;
        CHECK_OK(dpc_linreg_plan_make(&p, &o, 100000, 10, &err), &err);
        CHECK_NEAR_REL(p.rho_stat, 1.0 / 18, 1e-13, "K = %zu: DP-STAT rho", Ks[i]);
    }
    /* fixed clip, the paper's zCDP calibration: rho = rho*(eps, delta) = 1/(2 z^2) */
    dpc_linreg_opts o;
    dpc_linreg_opts_init(&o, DPC_LINREG_FIXED);
    prior_identity(&o.prior, 10);
    o.epsilon = 1;
    o.delta = 1e-5; /* the paper's setting at N = 10^6 (>= 1/N: allowed explicitly) */
    o.allow_large_delta = 1;
    o.calibration = DPC_CALIBRATION_PAPER;
    dpc_linreg_plan p;
    CHECK_OK(dpc_linreg_plan_make(&p, &o, 1000000, 10, &err), &err);
    CHECK_NEAR_REL(p.rho, rho, 1e-13, "fixed clip spends rho*");
    CHECK_NEAR_REL(p.ledger.noise_multiplier, 1 / sqrt(2 * rho), 1e-13, "fixed clip z");
    CHECK_NEAR_REL(p.ledger.epsilon_paper, 1.0, 1e-12, "fixed clip epsilon (Bun & Steinke)");
    CHECK(p.ledger.epsilon < 1.0, "GDP tighter than zCDP + Bun & Steinke");
    CHECK(p.rho_stat == 0 && p.noise_multiplier_stat == 0, "no DP-STAT");
    /* ... and the accountant's: one Gaussian, z = 1/mu(1, 1e-5) */
    o.calibration = DPC_CALIBRATION_ACCOUNTANT;
    CHECK_OK(dpc_linreg_plan_make(&p, &o, 1000000, 10, &err), &err);
    double mu1;
    CHECK_OK(dpc_gdp_mu_for(1.0, 1e-5, &mu1, &err), &err);
    CHECK_NEAR_REL(p.ledger.noise_multiplier, 1 / mu1, 1e-14, "fixed clip z = 1/mu");
    CHECK_NEAR_REL(p.ledger.epsilon, 1.0, 1e-9, "accountant epsilon");
    /* the empirical count noise: std sqrt(K) alpha (1e5 draws: 1% is 4.5 standard errors) */
    size_t calls = tests_scale() < 1 ? 250 : 2500, s = 1000;
    double *r = malloc(s * sizeof *r), *work = malloc(s * sizeof *work), c[40], nz[40];
    for (size_t j = 0; j < s; j++) r[j] = 1e3 + (double)j; /* above B: true counts are 0 */
    dpc_rng rng;
    dpc_rng_seed(&rng, 3);
    dpc_rng_stream ns = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_LINREG_STREAM_STAT, 0));
    dpc_dpstat_params dp = {10.0, 40, 2.0, DPC_DPSTAT_PAPER, 0};
    double ss = 0, sm = 0;
    size_t m = 0;
    for (size_t k = 0; k < calls; k++) {
        dpc_dpstat_result res;
        CHECK_OK(dpc_linreg_dpstat(r, s, &dp, &ns, k, work, &res, c, nz, &err), &err);
        CHECK(res.rounds == 40 && res.gamma == 10.0, "never stops (%zu)", res.rounds);
        for (size_t i = 0; i < res.rounds; i++) {
            double z = nz[i] - c[i];
            CHECK(nz[i] == c[i] + sqrt(40.0) * 2.0 * dpc_rng_gaussian(&ns, k, i),
                  "count noise from (stream, row t, index i)");
            ss += z * z;
            sm += z;
            m++;
        }
    }
    double sd = sqrt(ss / (double)m), want = sqrt(40.0) * 2.0;
    CHECK_NEAR_REL(sd, want, 4.5 / sqrt(2.0 * (double)m), "O3: count noise std sqrt(K) alpha over %zu",
                   m);
    CHECK_NEAR_ABS(sm / (double)m / want, 0, 4.5 / sqrt((double)m), "count noise mean 0");
    free(r);
    free(work);
}

/* The shuffling accountant (FMT21) and the DP-SSGD calculator against mpmath. */
static void test_shuffle(void)
{
    dpc_error err = {0};
    for (size_t i = 0; i < NELEM(oracle_fmt); i++) {
        const double *q = oracle_fmt[i];
        double e, dt;
        CHECK_OK(dpc_account_shuffle_epsilon(q[0], 1e-12, (size_t)q[1], q[2], &e, &dt, &err), &err);
        CHECK_NEAR_REL(e, q[3], 1e-12, "FMT closed form eps0=%g n=%g", q[0], q[1]);
        double extra = (exp(e) + 1) * (1 + exp(-q[0]) / 2) * q[1] * 1e-12;
        CHECK_NEAR_REL(dt, q[2] + extra, 1e-12, "delta_total (Thm. 3.8)");
        CHECK_OK(dpc_account_shuffle_epsilon(q[4] * (1 - 1e-9), 0, (size_t)q[1], q[2], &e, NULL, &err),
                 &err);
        CHECK(dpc_account_shuffle_epsilon(q[4] * (1 + 1e-9), 0, (size_t)q[1], q[2], &e, NULL, &err) ==
                      DPC_E_PRIVACY && strstr(err.msg, "eps0"),
              "beyond log(n/(16 log(4/delta))) = %g refused: %s", q[4], err.msg);
    }
    for (size_t i = 0; i < NELEM(oracle_dpssgd); i++) {
        const double *q = oracle_dpssgd[i];
        double e, e0, d0;
        CHECK_OK(dpc_account_dpssgd_epsilon(q[0], (size_t)q[1], q[2], (int)q[3], &e, &e0, &d0, &err),
                 &err);
        CHECK_NEAR_REL(e, q[4], 1e-7, "DP-SSGD eps (alpha %g, n %g, paper %g)", q[0], q[1], q[3]);
        CHECK_NEAR_REL(e0, q[5], 1e-7, "DP-SSGD eps0");
        CHECK_NEAR_REL(d0, q[6], 1e-6, "DP-SSGD delta0");
        CHECK(d0 <= q[6], "delta0 on the private side");
        double a;
        CHECK_OK(dpc_account_dpssgd_alpha(q[4], (size_t)q[1], q[2], (int)q[3], &a, &err), &err);
        CHECK_NEAR_REL(a, q[0], 1e-6, "alpha round trip");
        CHECK_OK(dpc_account_dpssgd_epsilon(a, (size_t)q[1], q[2], (int)q[3], &e, NULL, NULL, &err),
                 &err);
        CHECK(e <= q[4] * (1 + 1e-12), "calibrated alpha meets the target");
    }
    double e;
    CHECK(dpc_account_dpssgd_epsilon(0.5, 1000000, 1e-5, 0, &e, NULL, NULL, &err) == DPC_E_PRIVACY &&
              strstr(err.msg, "eps0"), "too little noise for n: %s", err.msg);
    CHECK(dpc_account_dpssgd_epsilon(5.0, 1000000, 1e-5, 1, &e, NULL, NULL, &err) == DPC_E_PRIVACY &&
              strstr(err.msg, "< 1"), "classical bound needs eps0 < 1: %s", err.msg);
    /* the plan's ledger uses it; a given alpha outside the range claims nothing */
    dpc_linreg_opts o;
    dpc_linreg_opts_init(&o, DPC_LINREG_SSGD);
    prior_identity(&o.prior, 10);
    o.epsilon = 0.05;
    dpc_linreg_plan p;
    CHECK_OK(dpc_linreg_plan_make(&p, &o, 1000001, 10, &err), &err);
    CHECK(p.steps == 1000000 && p.ledger.epsilon <= 0.05 && p.ledger.epsilon > 0.05 * (1 - 1e-6) &&
              strstr(p.ledger.route, "shuffling"), "DP-SSGD ledger eps %g (%s)", p.ledger.epsilon,
          p.ledger.route);
    o.epsilon = 0;
    o.noise_multiplier = 0.2;
    CHECK_OK(dpc_linreg_plan_make(&p, &o, 1000000, 10, &err), &err);
    CHECK(isinf(p.ledger.epsilon) && strstr(p.ledger.route, "no guarantee"), "z 0.2: %s",
          p.ledger.route);
}

/* O4: the noise added is eta (2 alpha zeta_t / b) g_t with g_t = N(0, I) from the NOISE stream. */
static void check_noise(dpc_linreg_algo algo, size_t n, size_t d, size_t steps)
{
    dpc_error err = {0};
    dpc_dataset *ds = synth(n, d, 0.5, 17);
    if (!ds) return;
    dpc_rng rng;
    dpc_rng_seed(&rng, 23);
    dpc_linreg_opts o;
    dpc_linreg_opts_init(&o, algo);
    prior_identity(&o.prior, d);
    o.prior.sigma_bound = 0.5;
    if (algo == DPC_LINREG_SSGD) o.noise_multiplier = 20;
    else o.epsilon = 1, o.steps = steps;
    o.stream = 4;
    dpc_linreg *lr = NULL;
    CHECK_OK(dpc_linreg_new(&lr, ds, &o, &rng, &err), &err);
    if (!lr) return;
    const dpc_linreg_plan *P = dpc_linreg_plan_get(lr);
    dpc_rng_stream ns = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_LINREG_STREAM_NOISE, 4));
    double ss = 0;
    size_t m = 0, exact = 0, stdok = 0;
    dpc_linreg_step_info info;
    while (dpc_linreg_steps_done(lr) < P->steps) {
        size_t t = dpc_linreg_steps_done(lr);
        if (dpc_linreg_step(lr, &info, &err)) break;
        double want = 2 * P->ledger.noise_multiplier * info.zeta / (double)P->batch;
        stdok += info.noise_std == want;
        const double *nz = dpc_linreg_last_noise(lr);
        for (size_t j = 0; j < d; j++) {
            double z = nz[j] / (P->eta * want);
            exact += nz[j] == P->eta * (want * dpc_rng_gaussian(&ns, t, j));
            ss += z * z;
            m++;
        }
    }
    CHECK(stdok == P->steps, "%s: reported std = 2 alpha zeta_t / b at every step",
          dpc_linreg_algo_name(algo));
    CHECK(exact == m, "%s: noise = eta std g_t[j], g from (NOISE stream, row t, index j)",
          dpc_linreg_algo_name(algo));
    CHECK_NEAR_REL(sqrt(ss / (double)m), 1.0, 4.5 / sqrt(2.0 * (double)m),
                   "O4 %s: empirical std of noise / (eta 2 alpha zeta_t / b) over %zu draws",
                   dpc_linreg_algo_name(algo), m);
    dpc_linreg_free(lr);
    dpc_dataset_free(ds);
}

static void test_noise_scale(void)
{
    int asan = tests_scale() < 1;
    check_noise(DPC_LINREG_AMBSSGD, asan ? 40000 : 200000, 50, asan ? 400 : 2000);
    check_noise(DPC_LINREG_SSGD, asan ? 2000 : 10000, 10, 0);
}

static double dist(const double *a, const double *b, size_t d)
{
    double s = 0;
    for (size_t j = 0; j < d; j++) s += (a[j] - b[j]) * (a[j] - b[j]);
    return sqrt(s);
}

/* O13: neighbouring data sets (replace one record; the same key, hence the same permutation and
 * noise): a gradient record of step t0, then (DP-AMBSSGD) a stat record of step t0. */
static void test_neighbours(dpc_linreg_algo algo)
{
    dpc_error err = {0};
    size_t n = algo == DPC_LINREG_SSGD ? 4000 : 100000, d = 5, t0 = algo == DPC_LINREG_SSGD ? 1500 : 5;
    dpc_dataset *ds = synth(n, d, 0.5, 31), *nb = NULL;
    if (!ds) return;
    dpc_rng rng;
    dpc_rng_seed(&rng, 37);
    dpc_linreg_opts o;
    dpc_linreg_opts_init(&o, algo);
    prior_identity(&o.prior, d);
    o.prior.sigma_bound = 0.5;
    if (algo == DPC_LINREG_SSGD) o.noise_multiplier = 20;
    else o.epsilon = 1;
    for (int which = 0; which < 2; which++) { /* 0: a gradient record, 1: a stat record */
        if (which == 1 && algo != DPC_LINREG_AMBSSGD) break;
        dpc_linreg *a = NULL, *b = NULL;
        CHECK_OK(dpc_linreg_new(&a, ds, &o, &rng, &err), &err);
        if (!a) return;
        const dpc_linreg_plan *P = dpc_linreg_plan_get(a);
        size_t per = P->batch + P->stat_batch, s = P->stat_batch;
        size_t pos = per * t0 + (which ? 7 : s + (P->batch > 3 ? 3 : 0)), rec = dpc_linreg_permutation(a)[pos];
        /* the neighbour: a copy with record `rec` replaced by an adversarial one */
        size_t *all = malloc(n * sizeof *all);
        for (size_t i = 0; i < n; i++) all[i] = i;
        CHECK_OK(dpc_dataset_select(&nb, ds, all, n, &err), &err);
        free(all);
        for (size_t j = 0; j < d; j++) nb->x[rec * d + j] = (j % 2 ? -50.0 : 50.0);
        nb->y[rec] = 1e3;
        CHECK_OK(dpc_linreg_new(&b, nb, &o, &rng, &err), &err);
        if (!b) return;
        CHECK(!memcmp(dpc_linreg_permutation(a), dpc_linreg_permutation(b), n * sizeof(size_t)),
              "the permutation does not depend on the data");
        dpc_linreg_step_info ia, ib;
        int same_before = 1;
        for (size_t t = 0; t < t0; t++) {
            CHECK_OK(dpc_linreg_step(a, &ia, &err), &err);
            CHECK_OK(dpc_linreg_step(b, &ib, &err), &err);
            same_before &= !memcmp(dpc_linreg_params(a), dpc_linreg_params(b), d * sizeof(double));
            same_before &= (isnan(ia.gamma) && isnan(ib.gamma)) || ia.gamma == ib.gamma;
        }
        CHECK(same_before, "%s: nothing changes before the record's step",
              dpc_linreg_algo_name(algo));
        if (which == 1) {
            /* DP-STAT at step t0 on the two stat batches: every true count moves by <= 1 */
            double *ra = malloc(2 * s * sizeof *ra), *rb = ra + s, *work = malloc(s * sizeof *work);
            double ca[40], cb[40];
            const size_t *pm = dpc_linreg_permutation(a);
            const double *w = dpc_linreg_params(a);
            for (size_t j = 0; j < s; j++) {
                size_t r = pm[per * t0 + j];
                ra[j] = -ds->y[r], rb[j] = -nb->y[r];
                for (size_t k = 0; k < d; k++) ra[j] += ds->x[r * d + k] * w[k], rb[j] += nb->x[r * d + k] * w[k];
            }
            /* counts only (negligible noise, the run's B and K = 40) */
            dpc_dpstat_params dp = {P->domain, 40, 1e-300, DPC_DPSTAT_PAPER, 0};
            dpc_rng_stream ns = dpc_rng_stream_derive(&rng, 12345);
            dpc_dpstat_result x, y;
            CHECK_OK(dpc_linreg_dpstat(ra, s, &dp, &ns, 0, work, &x, ca, NULL, &err), &err);
            CHECK_OK(dpc_linreg_dpstat(rb, s, &dp, &ns, 0, work, &y, cb, NULL, &err), &err);
            size_t rounds = x.rounds < y.rounds ? x.rounds : y.rounds;
            int sens1 = 1;
            for (size_t i = 0; i < rounds; i++) sens1 &= fabs(ca[i] - cb[i]) <= 1;
            CHECK(sens1, "DP-STAT counts have sensitivity 1 (%zu rounds)", rounds);
            free(ra);
            free(work);
        } else {
            CHECK_OK(dpc_linreg_step(a, &ia, &err), &err);
            CHECK_OK(dpc_linreg_step(b, &ib, &err), &err);
            double zeta = ia.zeta, bound = 2 * P->eta * zeta / (double)P->batch;
            CHECK((isnan(ia.gamma) && isnan(ib.gamma)) || ia.gamma == ib.gamma,
                  "gamma_t is computed before the gradient batch is read");
            CHECK(ia.zeta == ib.zeta, "zeta_t unchanged");
            double du = dist(dpc_linreg_last_update(a), dpc_linreg_last_update(b), d);
            /* the adversarial record is clipped to zeta_t: the move is at least about half
             * the bound (zeta_t minus the small original gradient, over b) */
            CHECK(du <= bound * (1 + 1e-12) && du >= 0.25 * bound,
                  "O13 %s: pre-noise update moved by %.6g, bound 2 eta zeta_t / b = %.6g",
                  dpc_linreg_algo_name(algo), du, bound);
            CHECK(!memcmp(dpc_linreg_last_noise(a), dpc_linreg_last_noise(b), d * sizeof(double)),
                  "the same noise on both");
        }
        dpc_linreg_free(a);
        dpc_linreg_free(b);
        dpc_dataset_free(nb);
        nb = NULL;
    }
    /* every record adversarial: each clipped gradient has norm <= zeta_t, so ||update|| <= eta zeta */
    dpc_dataset *adv = NULL;
    size_t *all = malloc(n * sizeof *all);
    for (size_t i = 0; i < n; i++) all[i] = i;
    CHECK_OK(dpc_dataset_select(&adv, ds, all, n, &err), &err);
    free(all);
    for (size_t i = 0; i < n; i++) adv->y[i] = (i % 3 ? 1e4 : -1e4) * (double)(i % 7 + 1);
    dpc_linreg *lr = NULL;
    CHECK_OK(dpc_linreg_new(&lr, adv, &o, &rng, &err), &err);
    if (lr) {
        const dpc_linreg_plan *P = dpc_linreg_plan_get(lr);
        size_t steps = P->steps < 3000 ? P->steps : 3000, bad = 0;
        dpc_linreg_step_info in;
        for (size_t t = 0; t < steps; t++) {
            CHECK_OK(dpc_linreg_step(lr, &in, &err), &err);
            double u = 0;
            for (size_t j = 0; j < d; j++) u += dpc_linreg_last_update(lr)[j] * dpc_linreg_last_update(lr)[j];
            bad += sqrt(u) > P->eta * in.zeta * (1 + 1e-12);
        }
        CHECK(bad == 0, "%s: ||update|| <= eta zeta_t on adversarial data (%zu violations)",
              dpc_linreg_algo_name(algo), bad);
        dpc_linreg_free(lr);
    }
    dpc_dataset_free(adv);
    dpc_dataset_free(ds);
}

/* Clipping is exact: every record has residual 1 at w_0 = 0 and gradient c e_1; with
 * c = 1.5 zeta_0 every gradient is clipped to norm zeta_0, so the first update is exactly
 * eta zeta_0 e_1 (zeta_0 does not depend on c: DP-STAT sees only the residuals). */
static void test_clip_exact(dpc_linreg_algo algo)
{
    dpc_error err = {0};
    size_t n = algo == DPC_LINREG_SSGD ? 2000 : 50000, d = 3;
    dpc_dataset *ds = NULL;
    CHECK_OK(dpc_dataset_new(&ds, n, d, 0, &err), &err);
    if (!ds) return;
    dpc_rng rng;
    dpc_rng_seed(&rng, 41);
    dpc_linreg_opts o;
    dpc_linreg_opts_init(&o, algo);
    prior_identity(&o.prior, d);
    if (algo == DPC_LINREG_SSGD) o.noise_multiplier = 20;
    else o.epsilon = 4;
    double zeta0 = 0;
    for (int pass = 0; pass < 2; pass++) {
        double c = pass ? 1.5 * zeta0 : 1.0;
        for (size_t i = 0; i < n; i++) ds->x[i * d] = c, ds->y[i] = -1.0;
        dpc_linreg *lr = NULL;
        CHECK_OK(dpc_linreg_new(&lr, ds, &o, &rng, &err), &err);
        if (!lr) break;
        dpc_linreg_step_info in;
        CHECK_OK(dpc_linreg_step(lr, &in, &err), &err);
        const dpc_linreg_plan *P = dpc_linreg_plan_get(lr);
        if (pass == 0) {
            zeta0 = in.zeta;
        } else {
            const double *u = dpc_linreg_last_update(lr);
            CHECK(in.zeta == zeta0 && in.clipped == P->batch, "%s: all %zu gradients clipped",
                  dpc_linreg_algo_name(algo), P->batch);
            CHECK_NEAR_REL(u[0], P->eta * zeta0, 1e-12, "%s: update = eta zeta_0 e_1",
                           dpc_linreg_algo_name(algo));
            CHECK(u[1] == 0 && u[2] == 0, "no other coordinate");
        }
        dpc_linreg_free(lr);
    }
    dpc_dataset_free(ds);
}

/* The delta rule of every trainer (dpc_account_resolve_delta): delta 0 (the _init default)
 * is derived from N and flagged in the ledger; a delta >= 1/N is refused unless
 * allow_large_delta; the non-private baseline has no guarantee to refuse. */
static void test_delta_rule(void)
{
    static const dpc_linreg_algo algos[] = {DPC_LINREG_AMBSSGD, DPC_LINREG_SSGD,
                                            DPC_LINREG_FIXED};
    for (size_t a = 0; a < NELEM(algos); a++) {
        dpc_error err = {0};
        dpc_linreg_opts o;
        dpc_linreg_opts_init(&o, algos[a]);
        CHECK(o.delta == 0 && o.allow_large_delta == 0, "%s: init derives delta from N",
              dpc_linreg_algo_name(algos[a]));
        prior_identity(&o.prior, 10);
        if (algos[a] == DPC_LINREG_SSGD) o.noise_multiplier = 20;
        else o.epsilon = 1;
        dpc_linreg_plan p;
        size_t n = algos[a] == DPC_LINREG_SSGD ? 20000 : 1000000;
        double want = algos[a] == DPC_LINREG_SSGD ? 1e-6 : 1e-7;
        CHECK_OK(dpc_linreg_plan_make(&p, &o, n, 10, &err), &err);
        CHECK(harness_near_rel(p.ledger.delta, want, 1e-12) && p.ledger.delta_derived,
              "%s N = %zu: delta %g (want %g), derived %d", dpc_linreg_algo_name(algos[a]), n,
              p.ledger.delta, want, p.ledger.delta_derived);
        o.delta = 10.0 / (double)n; /* the former fixed default 1e-5 at N = 1e6 */
        dpc_error e = {0};
        CHECK(dpc_linreg_plan_make(&p, &o, n, 10, &e) == DPC_E_PRIVACY &&
                  !strcmp(e.field, "delta") && strstr(e.msg, "allow_large_delta"),
              "%s: delta 10/N refused: %s", dpc_linreg_algo_name(algos[a]), e.msg);
        o.allow_large_delta = 1;
        CHECK_OK(dpc_linreg_plan_make(&p, &o, n, 10, &e), &e);
        CHECK(p.ledger.delta == o.delta && !p.ledger.delta_derived, "%s: accepted when allowed",
              dpc_linreg_algo_name(algos[a]));
    }
    dpc_error err = {0};
    dpc_linreg_opts o;
    dpc_linreg_opts_init(&o, DPC_LINREG_SGD);
    prior_identity(&o.prior, 10);
    o.delta = 0.5;
    dpc_linreg_plan p;
    CHECK_OK(dpc_linreg_plan_make(&p, &o, 1000, 10, &err), &err);
}

int main(void)
{
    test_delta_rule();
    test_clip_exact(DPC_LINREG_AMBSSGD);
    test_clip_exact(DPC_LINREG_SSGD);
    test_clip_exact(DPC_LINREG_FIXED);
    test_zcdp();
    test_shuffle();
    test_noise_scale();
    test_neighbours(DPC_LINREG_AMBSSGD);
    test_neighbours(DPC_LINREG_SSGD);
    test_neighbours(DPC_LINREG_FIXED);
    return TEST_SUMMARY();
}
