/* test_pitfalls.c — the nine critical DP pitfalls of jax_privacy's "Common Pitfalls" page
 * (division by batch size, sensitivity alignment, accounting vs sampler, public vs private
 * metadata, the neighbouring relation, empty batches and non-finite gradients, gradient
 * accumulation, cross-example operations, auxiliary outputs), each shown refused or handled
 * exactly by the C API: the trainer (dpcorr/train.h) and the privatizer of the caller's own loop
 * (dpcorr/privatize.h). doc/reliability.md "The critical DP pitfalls" has the table of every
 * front end; the CLI, MPI and Python halves are tests/cli/pitfalls.sh and
 * python/tests/test_pitfalls.py. */
#include "dpcorr/model.h"
#include "dpcorr/privatize.h"
#include "dpcorr/train.h"
#include "harness.h"
#include "train_fixture.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DIM 4


/* A privatizer of DIM coordinates over n records, (expected) batch b, given noise multiplier. */
static void pv_config(dpc_privatize_config *c, size_t n, size_t b, dpc_mech_kind kind)
{
    dpc_privatize_config_init(c);
    c->dim = DIM;
    c->n_examples = n;
    c->batch = b;
    c->epochs = 2;
    c->noise_multiplier = 1.1;
    c->clip = 0.7;
    c->mech.kind = kind;
    c->accountant = DPC_ACCOUNTANT_RDP; /* fast; the routes are the accounting tests' */
}

/* The independent reference of a privatizer's run: the plan of the same configuration and a
 * noise generator on the documented stream of the same rng. */
typedef struct ref_run {
    dpc_train_plan *plan;
    dpc_noise *noise;
} ref_run;

static int ref_new(ref_run *r, const dpc_privatize_config *c, const dpc_rng *rng)
{
    dpc_error err = {0};
    dpc_train_config tc;
    dpc_train_config_init(&tc);
    tc.mech = c->mech;
    tc.sampler = c->sampler;
    tc.batch = c->batch;
    tc.epochs = c->epochs;
    tc.noise_multiplier = c->noise_multiplier;
    tc.epsilon = c->epsilon;
    tc.clip = c->clip;
    tc.accountant = c->accountant;
    tc.workload_explicit = 1;
    r->plan = NULL;
    r->noise = NULL;
    CHECK_OK(dpc_train_plan_new(&r->plan, &tc, c->n_examples, rng, &err), &err);
    if (!r->plan) return 0;
    dpc_noise_config nc;
    dpc_noise_config_init(&nc, c->dim);
    dpc_rng_stream s = dpc_rng_stream_derive(rng, DPC_STREAM_ID(DPC_STREAM_NOISE, 0));
    CHECK_OK(dpc_noise_new(&r->noise, dpc_train_plan_mech(r->plan), &s, &nc, &err), &err);
    return r->noise != NULL;
}

static void ref_free(ref_run *r)
{
    dpc_noise_free(r->noise);
    dpc_train_plan_free(r->plan);
}

/* ---- 1. division by batch size ------------------------------------------------------------- */

/* Poisson batches are divided by the EXPECTED batch size B, a public constant, never by the
 * realised (random, private) size m: the release is (sum + noise) x (1 / B) bit for bit on
 * steps whose batch has m != B, and differs from the division by m there. */
static void test_division_by_batch_privatizer(void)
{
    dpc_privatize_config c;
    pv_config(&c, 200, 20, DPC_MECH_IDENTITY); /* AUTO -> Poisson, q = 0.1 */
    dpc_rng rng;
    dpc_rng_seed(&rng, 3);
    dpc_error err = {0};
    dpc_privatizer *pv = NULL;
    ref_run r;
    CHECK_OK(dpc_privatize_new(&pv, &c, &rng, &err), &err);
    if (!pv || !ref_new(&r, &c, &rng)) {
        dpc_privatize_free(pv);
        return;
    }
    const dpc_ledger *L = dpc_privatize_ledger(pv);
    CHECK(!strcmp(L->sampler, "poisson") && L->expected_batch == 20.0,
          "ledger: %s sampler, expected batch %g", L->sampler, L->expected_batch);
    size_t *idx = malloc(dpc_privatize_max_batch(pv) * sizeof *idx), m, other = 0, bad = 0;
    double sum[DIM], h[DIM], z[DIM];
    double scale = dpc_privatize_noise_scale(pv);
    for (size_t t = 0; t < dpc_privatize_steps_total(pv); t++) {
        CHECK_OK(dpc_privatize_batch(pv, idx, &m, &err), &err);
        /* m gradients of norm 0.7 x 0.728 <= clip 0.7: a sum a clipped batch can produce */
        for (size_t j = 0; j < DIM; j++) sum[j] = 0.7 * (double)m * (j % 2 ? -0.25 : 0.45);
        CHECK_OK(dpc_noise_next(r.noise, z, &err), &err);
        CHECK_OK(dpc_privatize_step(pv, sum, h, &err), &err);
        for (size_t j = 0; j < DIM; j++) {
            double by_b = (sum[j] + scale * z[j]) * (1.0 / 20.0);
            bad += memcmp(&h[j], &by_b, sizeof by_b) != 0;
            if (m != 20 && m > 0 && j == 0) {
                double by_m = (sum[j] + scale * z[j]) / (double)m;
                other += fabs(h[j] - by_m) > 1e-6 * fabs(by_m);
            }
        }
    }
    CHECK(bad == 0, "%zu coordinates differ from (sum + noise) x (1/B) bit for bit", bad);
    CHECK(other >= 5, "steps with m != B released something else than a division by m: %zu",
          other);
    free(idx);
    ref_free(&r);
    dpc_privatize_free(pv);
}

/* The trainer: theta_{t+1} = theta_t - lr (g + w) / B on every step, B the expected batch size,
 * whatever the realised size (recomputed independently, as test_train does). */
static void test_division_by_batch_trainer(void)
{
    dpc_dataset *ds = logistic_data(150, DIM, 2);
    dpc_model *m = model_of("logistic", DIM, 2);
    dpc_train_config c;
    dpc_train_config_init(&c);
    c.batch = 15;
    c.epochs = 1;
    c.noise_multiplier = 0.8;
    c.clip = 0.5;
    c.lr = 0.3;
    c.chunk = 64; /* one chunk: the trainer's sum is the naive sum */
    c.accountant = DPC_ACCOUNTANT_RDP;
    dpc_rng rng;
    dpc_rng_seed(&rng, 11);
    dpc_error err = {0};
    dpc_trainer *tr = NULL;
    CHECK_OK(dpc_trainer_new(&tr, m, ds, NULL, &c, &rng, &err), &err);
    if (!tr) goto out;
    size_t P = dpc_model_num_params(m), n = dpc_trainer_steps_total(tr);
    const dpc_ledger *L = dpc_trainer_ledger(tr);
    dpc_mech_params mp = {0};
    mp.kind = DPC_MECH_IDENTITY;
    mp.steps = n;
    dpc_mech *mech = NULL;
    CHECK_OK(dpc_mech_new(&mech, &mp, &err), &err);
    dpc_rng_stream ns = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_NOISE, 0));
    dpc_noise_config nc;
    dpc_noise_config_init(&nc, P);
    dpc_noise *gen = NULL;
    if (mech) CHECK_OK(dpc_noise_new(&gen, mech, &ns, &nc, &err), &err);
    const dpc_sampler *s = dpc_trainer_sampler(tr);
    double theta[DIM + 1], g[DIM + 1], w[DIM + 1], X[150 * DIM], y[150];
    size_t idx[150], cnt, other = 0;
    double maxdev = 0, scale = L->noise_std * c.clip;
    for (size_t t = 0; gen && t < n; t++) {
        memcpy(theta, dpc_trainer_params(tr), P * sizeof *theta);
        CHECK_OK(dpc_sampler_batch(s, t, idx, &cnt, &err), &err);
        for (size_t j = 0; j < cnt; j++) {
            memcpy(X + j * DIM, ds->x + idx[j] * DIM, DIM * sizeof *X);
            y[j] = ds->y[idx[j]];
        }
        memset(g, 0, sizeof g);
        if (cnt)
            CHECK_OK(dpc_model_clipped_sum_naive(m, theta, X, y, cnt, c.clip, g, NULL, NULL, &err),
                     &err);
        CHECK_OK(dpc_noise_next(gen, w, &err), &err);
        dpc_step_info info;
        CHECK_OK(dpc_trainer_step(tr, &info, &err), &err);
        CHECK(info.batch == cnt, "step %zu: realised batch %zu = the sampler's %zu", t,
              info.batch, cnt);
        const double *th1 = dpc_trainer_params(tr);
        for (size_t p = 0; p < P; p++) {
            double want = theta[p] - c.lr * (g[p] + scale * w[p]) / L->expected_batch;
            double dev = fabs(th1[p] - want) / (1 + fabs(want));
            if (dev > maxdev) maxdev = dev;
            if (p == 0 && cnt != c.batch && cnt > 0) {
                double by_m = theta[p] - c.lr * (g[p] + scale * w[p]) / (double)cnt;
                other += fabs(th1[p] - by_m) > 1e-9;
            }
        }
    }
    CHECK(L->expected_batch == 15.0, "trainer ledger: expected batch %g", L->expected_batch);
    CHECK(maxdev < 1e-13, "trainer update = theta - lr (g + w) / B_expected: deviation %g",
          maxdev);
    CHECK(other >= 3, "steps with m != B are not divided by m (%zu)", other);
    dpc_noise_free(gen);
    dpc_mech_free(mech);
out:
    dpc_trainer_free(tr);
    dpc_model_free(m);
    dpc_dataset_free(ds);
}

/* ---- 2. sensitivity alignment -------------------------------------------------------------- */

/* The clip the caller clips to is the clip the noise is calibrated with: noise scale = clip x z x
 * column norm of C, the column norm being the mechanism's sensitivity of one participation
 * (dpc_mech_sensitivity, computed here independently); doubling clip doubles the noise exactly;
 * and the released noise has that standard deviation (identity, 4000 draws: within 5%). */
static void test_sensitivity_alignment(void)
{
    static const dpc_mech_kind kinds[] = {DPC_MECH_IDENTITY, DPC_MECH_NU, DPC_MECH_BSR,
                                          DPC_MECH_BLT};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        double scales[2] = {0, 0};
        for (int twice = 0; twice < 2; twice++) {
            dpc_privatize_config c;
            pv_config(&c, 300, 30, kinds[k]);
            c.clip = twice ? 1.4 : 0.7;
            dpc_rng rng;
            dpc_rng_seed(&rng, 5);
            dpc_error err = {0};
            dpc_privatizer *pv = NULL;
            CHECK_OK(dpc_privatize_new(&pv, &c, &rng, &err), &err);
            ref_run r;
            if (!pv || !ref_new(&r, &c, &rng)) {
                dpc_privatize_free(pv);
                continue;
            }
            const dpc_ledger *L = dpc_privatize_ledger(pv);
            dpc_participation single = {DPC_PART_MINSEP, 1, 1};
            dpc_sensitivity col;
            CHECK_OK(dpc_mech_sensitivity(dpc_train_plan_mech(r.plan), &single, &col, &err), &err);
            CHECK_NEAR_REL(L->column_norm, col.value, 1e-15, "kind %zu: column norm", k);
            CHECK_NEAR_REL(dpc_privatize_noise_scale(pv), c.clip * 1.1 * col.value, 1e-15,
                           "kind %zu clip %g: noise scale = clip x z x colnorm", k, c.clip);
            CHECK(L->noise_multiplier == 1.1, "kind %zu: z as given", k);
            scales[twice] = dpc_privatize_noise_scale(pv);
            ref_free(&r);
            dpc_privatize_free(pv);
        }
        CHECK(scales[1] == 2 * scales[0], "kind %zu: twice the clip, twice the noise (%.17g, "
              "%.17g)", k, scales[0], scales[1]);
    }
    /* empirical: DP-SGD's released noise (zero sums) has std clip x z / B per coordinate */
    dpc_privatize_config c;
    pv_config(&c, 4000, 1, DPC_MECH_IDENTITY);
    c.epochs = 1;
    dpc_rng rng;
    dpc_rng_seed(&rng, 8);
    dpc_error err = {0};
    dpc_privatizer *pv = NULL;
    CHECK_OK(dpc_privatize_new(&pv, &c, &rng, &err), &err);
    if (!pv) return;
    size_t idx[64], m, draws = 0;
    double zero[DIM] = {0}, h[DIM], ss = 0;
    while (dpc_privatize_steps_done(pv) < 1000) {
        CHECK_OK(dpc_privatize_batch(pv, idx, &m, &err), &err);
        CHECK_OK(dpc_privatize_step(pv, zero, h, &err), &err);
        for (size_t j = 0; j < DIM; j++) ss += h[j] * h[j], draws++;
    }
    CHECK_NEAR_REL(sqrt(ss / (double)draws), 0.7 * 1.1, 0.05,
                   "released noise std = clip x z (DP-SGD, B = 1)");
    dpc_privatize_free(pv);
}

/* ---- 3. accounting vs sampler ---------------------------------------------------------------- */

/* For every sampler the ledger names the sampler that ran and the batches are its batches (the
 * trainer's realised batch sizes are the sampler's); the privatizer refuses a step whose batch
 * was not drawn from the accounted sampler. */
static void test_sampler_is_the_accounted_one(void)
{
    static const dpc_sampler_kind kinds[] = {DPC_SAMPLER_POISSON, DPC_SAMPLER_FIXED,
                                             DPC_SAMPLER_SHUFFLE, DPC_SAMPLER_CYCLIC_POISSON,
                                             DPC_SAMPLER_BALLS_IN_BINS};
    dpc_dataset *ds = logistic_data(120, DIM, 4);
    dpc_model *m = model_of("logistic", DIM, 2);
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        dpc_train_config c;
        dpc_train_config_init(&c);
        c.sampler = kinds[k];
        c.batch = 12;
        c.epochs = 2;
        c.noise_multiplier = 1.5;
        c.accountant = DPC_ACCOUNTANT_RDP;
        dpc_rng rng;
        dpc_rng_seed(&rng, 21 + k);
        dpc_error err = {0};
        dpc_trainer *tr = NULL;
        CHECK_OK(dpc_trainer_new(&tr, m, ds, NULL, &c, &rng, &err), &err);
        if (!tr) continue;
        const dpc_ledger *L = dpc_trainer_ledger(tr);
        const char *name = dpc_sampler_kind_name(kinds[k]);
        CHECK(!strcmp(L->sampler, name), "ledger sampler '%s' = the sampler run '%s'", L->sampler,
              name);
        CHECK(dpc_trainer_config(tr)->sampler == kinds[k], "%s: resolved as asked", name);
        size_t idx[120], cnt, bad = 0;
        for (size_t t = 0; t < dpc_trainer_steps_total(tr); t++) {
            dpc_step_info info;
            CHECK_OK(dpc_sampler_batch(dpc_trainer_sampler(tr), t, idx, &cnt, &err), &err);
            CHECK_OK(dpc_trainer_step(tr, &info, &err), &err);
            bad += info.batch != cnt;
        }
        CHECK(bad == 0, "%s: %zu steps ran another batch size than the sampler's", name, bad);
        if (kinds[k] == DPC_SAMPLER_POISSON)
            CHECK(L->amplified && L->q == 12.0 / 120.0, "poisson: amplified at q = B/N = %g",
                  L->q);
        if (kinds[k] == DPC_SAMPLER_FIXED || kinds[k] == DPC_SAMPLER_SHUFFLE)
            CHECK(!L->amplified && L->q == 1.0, "%s: no amplification claimed (q %g)", name,
                  L->q);
        dpc_trainer_free(tr);
    }
    dpc_model_free(m);
    dpc_dataset_free(ds);
    /* the privatizer: no step without this step's batch from the accounted sampler */
    dpc_privatize_config c;
    pv_config(&c, 200, 20, DPC_MECH_IDENTITY);
    dpc_rng rng;
    dpc_rng_seed(&rng, 6);
    dpc_error err = {0};
    dpc_privatizer *pv = NULL;
    CHECK_OK(dpc_privatize_new(&pv, &c, &rng, &err), &err);
    if (!pv) return;
    double sum[DIM] = {0}, h[DIM];
    size_t idx[200], cnt;
    CHECK(dpc_privatize_step(pv, sum, h, &err) == DPC_E_STATE, "step without a batch refused");
    CHECK_OK(dpc_privatize_batch(pv, idx, &cnt, &err), &err);
    CHECK_OK(dpc_privatize_step(pv, sum, h, &err), &err);
    CHECK(dpc_privatize_step(pv, sum, h, &err) == DPC_E_STATE,
          "step 1 on step 0's batch refused: %s", err.msg);
    dpc_privatize_free(pv);
}

/* ---- 4. public vs private metadata --------------------------------------------------------- */

static void ledger_text(const dpc_ledger *L, char *buf, size_t len)
{
    dpc_ledger_json(L, buf, len);
}

/* What the ledger says is public configuration only: two training sets of the same N with other
 * contents, and two keys whose Poisson batches have other realised sizes, give the same ledger
 * (the seed field aside); q = B/N for the N passed, steps = epochs x floor(N / B). */
static void test_public_metadata(void)
{
    dpc_model *m = model_of("logistic", DIM, 2);
    char text[3][4096];
    size_t sizes[3][16];
    for (int run = 0; run < 3; run++) {
        dpc_dataset *ds = logistic_data(160, DIM, run == 1 ? 99 : 7); /* run 1: other content */
        dpc_train_config c;
        dpc_train_config_init(&c);
        c.batch = 16;
        c.epochs = 1;
        c.noise_multiplier = 1.2;
        c.accountant = DPC_ACCOUNTANT_RDP;
        dpc_rng rng;
        dpc_rng_seed(&rng, run == 2 ? 12 : 13); /* run 2: other batches */
        dpc_error err = {0};
        dpc_trainer *tr = NULL;
        CHECK_OK(dpc_trainer_new(&tr, m, ds, NULL, &c, &rng, &err), &err);
        if (tr) {
            for (size_t t = 0; t < dpc_trainer_steps_total(tr) && t < 16; t++) {
                dpc_step_info info;
                CHECK_OK(dpc_trainer_step(tr, &info, &err), &err);
                sizes[run][t] = info.batch;
            }
            dpc_ledger L = *dpc_trainer_ledger(tr);
            CHECK(L.q == 16.0 / 160.0 && L.steps == 10 && L.expected_batch == 16,
                  "q %g = B/N, steps %zu", L.q, L.steps);
            L.seed = 0; /* the key is not data; it differs by construction in run 2 */
            ledger_text(&L, text[run], sizeof text[run]);
        } else {
            text[run][0] = 0;
        }
        dpc_trainer_free(tr);
        dpc_dataset_free(ds);
    }
    CHECK(text[0][0] && !strcmp(text[0], text[1]), "other data content, same ledger");
    CHECK(memcmp(sizes[0], sizes[2], sizeof sizes[0]) != 0,
          "the keys give other realised batch sizes");
    CHECK(text[0][0] && !strcmp(text[0], text[2]),
          "other realised batch sizes, same ledger: no realised size in it");
    CHECK(!strstr(text[0], "\"batch\""), "the ledger has no realised batch field");
    dpc_model_free(m);
}

/* ---- 5. the neighbouring relation ---------------------------------------------------------- */

/* The ledger states its relation (add/remove when amplified by Poisson sampling, zero-out for
 * the whole-run Gaussian); the accountant takes the relation with the sensitivity under it:
 * replace-one at sensitivity 2C is add/remove at C (the same epsilon), at C it would claim a
 * smaller epsilon; Poisson sampling under replace-one is refused (no amplification result). */
static void test_neighbouring_relation(void)
{
    for (int fixed = 0; fixed < 2; fixed++) {
        dpc_privatize_config c;
        pv_config(&c, 200, 20, DPC_MECH_IDENTITY);
        c.sampler = fixed ? DPC_SAMPLER_FIXED : DPC_SAMPLER_POISSON;
        dpc_rng rng;
        dpc_rng_seed(&rng, 2);
        dpc_error err = {0};
        dpc_privatizer *pv = NULL;
        CHECK_OK(dpc_privatize_new(&pv, &c, &rng, &err), &err);
        if (!pv) continue;
        dpc_neighbor want = fixed ? DPC_NEIGHBOR_ZERO_OUT : DPC_NEIGHBOR_ADD_REMOVE;
        CHECK(dpc_privatize_ledger(pv)->neighbor == want, "sampler %s: ledger relation %s",
              fixed ? "fixed" : "poisson", dpc_neighbor_name(dpc_privatize_ledger(pv)->neighbor));
        dpc_privatize_free(pv);
    }
    dpc_account_opts o;
    dpc_account_opts_init(&o, DPC_ACCOUNTANT_GDP);
    dpc_gauss_event g;
    dpc_gauss_event_init(&g);
    g.sigma = 3.0;
    g.count = 10;
    dpc_event ar = {DPC_NEIGHBOR_ADD_REMOVE, 1, &g};
    dpc_account_result r1, r2, r3;
    dpc_error err = {0};
    CHECK_OK(dpc_account_epsilon(&ar, &o, 1e-5, &r1, &err), &err);
    dpc_gauss_event g2 = g;
    g2.sensitivity = 2.0;
    dpc_event ro = {DPC_NEIGHBOR_REPLACE_ONE, 1, &g2};
    CHECK_OK(dpc_account_epsilon(&ro, &o, 1e-5, &r2, &err), &err);
    g2.sigma = 6.0;
    CHECK_OK(dpc_account_epsilon(&ro, &o, 1e-5, &r3, &err), &err);
    CHECK(r2.epsilon > r1.epsilon * 1.5, "replace-one at 2C spends more: %g vs %g", r2.epsilon,
          r1.epsilon);
    CHECK_NEAR_REL(r3.epsilon, r1.epsilon, 1e-12, "replace-one with twice the noise = add/remove");
    dpc_account_opts_init(&o, DPC_ACCOUNTANT_RDP);
    dpc_gauss_event gp = g;
    gp.sampling = DPC_SAMPLING_POISSON;
    gp.q = 0.1;
    dpc_event rp = {DPC_NEIGHBOR_REPLACE_ONE, 1, &gp};
    CHECK(dpc_account_epsilon(&rp, &o, 1e-5, &r1, &err) == DPC_E_UNSUPPORTED,
          "Poisson sampling under replace-one refused: %s", err.msg);
}

/* ---- 6. empty batches and non-finite gradients --------------------------------------------- */

/* An empty Poisson batch is an ordinary step: it releases (0 + noise) x (1/B) and counts. A NaN or
 * infinite sum is refused (DPC_E_NUMERIC, nothing released, the step and its noise unspent): the
 * next finite step releases the reference run's noise of that step. */
static void test_empty_and_nonfinite_privatizer(void)
{
    dpc_privatize_config c;
    pv_config(&c, 100, 1, DPC_MECH_IDENTITY); /* q = 0.01: about 37% of the batches are empty */
    c.epochs = 1;
    dpc_rng rng;
    dpc_rng_seed(&rng, 17);
    dpc_error err = {0};
    dpc_privatizer *pv = NULL;
    ref_run r;
    CHECK_OK(dpc_privatize_new(&pv, &c, &rng, &err), &err);
    if (!pv || !ref_new(&r, &c, &rng)) {
        dpc_privatize_free(pv);
        return;
    }
    double scale = dpc_privatize_noise_scale(pv), sum[DIM] = {0}, h[DIM], z[DIM];
    size_t idx[100], m, empty = 0, bad = 0, refused = 0;
    const double poison[3] = {NAN, INFINITY, -INFINITY};
    for (size_t t = 0; t < dpc_privatize_steps_total(pv); t++) {
        CHECK_OK(dpc_privatize_batch(pv, idx, &m, &err), &err);
        if (t < 3) { /* refused, then the same step goes on */
            sum[t % DIM] = poison[t];
            refused += dpc_privatize_step(pv, sum, h, &err) == DPC_E_NUMERIC &&
                       dpc_privatize_steps_done(pv) == t;
            sum[t % DIM] = 0;
        }
        for (size_t j = 0; j < DIM; j++) sum[j] = m ? 0.3 * (double)m : 0.0;
        CHECK_OK(dpc_noise_next(r.noise, z, &err), &err);
        CHECK_OK(dpc_privatize_step(pv, sum, h, &err), &err);
        for (size_t j = 0; j < DIM; j++) {
            double want = (sum[j] + scale * z[j]) * (1.0 / 1.0);
            bad += memcmp(&h[j], &want, sizeof want) != 0;
            if (m == 0) bad += h[j] == 0.0; /* an empty step still releases noise */
        }
        empty += m == 0;
    }
    CHECK(empty > 20, "%zu empty batches of 100 steps", empty);
    CHECK(bad == 0, "%zu released coordinates differ from (sum + noise) / B", bad);
    CHECK(refused == 3, "NaN, +inf, -inf refused with nothing spent (%zu of 3)", refused);
    CHECK(dpc_privatize_steps_done(pv) == dpc_privatize_steps_total(pv), "every step released");
    ref_free(&r);
    dpc_privatize_free(pv);
}

/* The trainer: empty batches are steps like the others (the update is the noise alone); a record
 * whose loss overflows (finite data, y = 1e300 under squared loss) makes the step refused with
 * DPC_E_NUMERIC naming that record (not the first of its chunk), the steps done unchanged: the
 * run stops deterministically, nothing of the step is released. */
static void test_empty_and_nonfinite_trainer(void)
{
    dpc_dataset *ds = logistic_data(100, DIM, 5);
    dpc_model *m = model_of("logistic", DIM, 2);
    dpc_train_config c;
    dpc_train_config_init(&c);
    c.batch = 1;
    c.epochs = 1;
    c.noise_multiplier = 1.0;
    c.accountant = DPC_ACCOUNTANT_RDP;
    dpc_rng rng;
    dpc_rng_seed(&rng, 9);
    dpc_error err = {0};
    dpc_trainer *tr = NULL;
    CHECK_OK(dpc_trainer_new(&tr, m, ds, NULL, &c, &rng, &err), &err);
    size_t empty = 0, moved = 0;
    while (tr && dpc_trainer_steps_done(tr) < dpc_trainer_steps_total(tr)) {
        double before[DIM + 1];
        memcpy(before, dpc_trainer_params(tr), sizeof before);
        dpc_step_info info;
        if (dpc_trainer_step(tr, &info, &err)) {
            CHECK(0, "step: %s", err.msg);
            break;
        }
        if (info.batch == 0) {
            empty++;
            moved += memcmp(before, dpc_trainer_params(tr), sizeof before) != 0;
        }
    }
    CHECK(empty > 20 && moved == empty, "%zu empty steps, %zu moved by their noise", empty, moved);
    dpc_trainer_free(tr);
    dpc_model_free(m);
    dpc_dataset_free(ds);
    /* a regression record whose squared loss overflows */
    dpc_dataset *rs = NULL;
    CHECK_OK(dpc_dataset_new(&rs, 40, 2, 0, &err), &err);
    dpc_model *lin = model_of("linear", 2, 0);
    if (!rs || !lin) goto done;
    for (size_t i = 0; i < 40; i++) {
        rs->x[2 * i] = 0.1 * (double)i;
        rs->x[2 * i + 1] = 1.0;
        rs->y[i] = i == 7 ? 1e300 : 0.5;
    }
    dpc_train_config_init(&c);
    c.sampler = DPC_SAMPLER_FIXED;
    c.mech.kind = DPC_MECH_IDENTITY;
    c.batch = 40;
    c.epochs = 2;
    c.noise_multiplier = 1.0;
    tr = NULL;
    CHECK_OK(dpc_trainer_new(&tr, lin, rs, NULL, &c, &rng, &err), &err);
    if (tr) {
        dpc_status st = dpc_trainer_step(tr, NULL, &err);
        CHECK(st == DPC_E_NUMERIC && strstr(err.msg, "not finite"),
              "an overflowing record refuses the step: status %d, %s", (int)st, err.msg);
        CHECK(strstr(err.msg, "training record 7 (batch position ") != NULL,
              "the refusal names the record at fault (7): %s", err.msg);
        CHECK(dpc_trainer_steps_done(tr) == 0, "nothing released");
    }
    dpc_trainer_free(tr);
done:
    dpc_model_free(lin);
    dpc_dataset_free(rs);
}

/* ---- 7. gradient accumulation -------------------------------------------------------------- */

/* The trainer's micro-batching (chunk: the examples summed together) is a performance knob: the
 * ledger is byte-identical and the parameters differ by summation order only (chunk 1 vs 64,
 * relative 1e-12; noise added per chunk would move them by the noise, ~1e-2); epsilon spent
 * after t steps is the t-step epsilon (one noise release per logical step). */
static void test_accumulation(void)
{
    dpc_dataset *ds = logistic_data(200, DIM, 6);
    dpc_model *m = model_of("logistic", DIM, 2);
    double params[2][DIM + 1];
    char text[2][4096];
    for (int k = 0; k < 2; k++) {
        dpc_train_config c;
        dpc_train_config_init(&c);
        c.batch = 40;
        c.epochs = 2;
        c.noise_multiplier = 1.0;
        c.chunk = k ? 64 : 1;
        c.accountant = DPC_ACCOUNTANT_RDP;
        dpc_rng rng;
        dpc_rng_seed(&rng, 4);
        dpc_error err = {0};
        dpc_trainer *tr = NULL;
        CHECK_OK(dpc_trainer_new(&tr, m, ds, NULL, &c, &rng, &err), &err);
        if (!tr) return;
        while (dpc_trainer_steps_done(tr) < dpc_trainer_steps_total(tr))
            if (dpc_trainer_step(tr, NULL, &err)) break;
        memcpy(params[k], dpc_trainer_params(tr), sizeof params[k]);
        ledger_text(dpc_trainer_ledger(tr), text[k], sizeof text[k]);
        dpc_trainer_free(tr);
    }
    CHECK(!strcmp(text[0], text[1]), "chunk 1 vs 64: the same ledger");
    double dev = 0;
    for (size_t p = 0; p <= DIM; p++) dev = fmax(dev, fabs(params[0][p] - params[1][p]));
    CHECK(dev < 1e-12, "chunk 1 vs 64: parameters differ by rounding only (%g)", dev);
    dpc_model_free(m);
    dpc_dataset_free(ds);
    /* the privatizer: one release per logical step, epsilon spent = the plan's t-step epsilon */
    dpc_privatize_config c;
    pv_config(&c, 200, 20, DPC_MECH_BSR);
    dpc_rng rng;
    dpc_rng_seed(&rng, 10);
    dpc_error err = {0};
    dpc_privatizer *pv = NULL;
    ref_run r;
    CHECK_OK(dpc_privatize_new(&pv, &c, &rng, &err), &err);
    if (!pv || !ref_new(&r, &c, &rng)) {
        dpc_privatize_free(pv);
        return;
    }
    size_t idx[200], cnt, bad = 0;
    double sum[DIM] = {0}, h[DIM];
    for (size_t t = 0; t < 5; t++) {
        CHECK_OK(dpc_privatize_batch(pv, idx, &cnt, &err), &err);
        CHECK_OK(dpc_privatize_step(pv, sum, h, &err), &err);
        bad += dpc_privatize_step(pv, sum, h, &err) != DPC_E_STATE; /* a second release */
        double e1, e2;
        CHECK_OK(dpc_privatize_epsilon_spent(pv, &e1, &err), &err);
        CHECK_OK(dpc_train_plan_epsilon_at(r.plan, t + 1, &e2, &err), &err);
        CHECK(e1 == e2, "after %zu steps: spent %g = the plan's %g", t + 1, e1, e2);
    }
    CHECK(bad == 0, "a second release on a step's batch refused (%zu accepted)", bad);
    ref_free(&r);
    dpc_privatize_free(pv);
}

/* ---- 8. cross-example operations ----------------------------------------------------------- */

/* The models have no layer that mixes examples (no batch norm: the spec is refused; GroupNorm
 * normalises each example alone): the clipped sum of a batch is the sum of each example's clipped
 * gradient computed alone, for an MLP and a CNN with GroupNorm. */
static void test_cross_example(void)
{
    dpc_model_config mc;
    dpc_error err = {0};
    CHECK(dpc_model_parse(&mc, "cnn:conv2k3,bn,flatten,fc2:in=1x6x6", 36, 2, &err) != DPC_OK &&
              strstr(err.msg, "bn"),
          "batch norm refused: %s", err.msg);
    static const char *specs[2] = {"mlp:6", "cnn:conv2k3,gn2,relu,flatten,fc2:in=1x6x6"};
    const size_t d = 36, B = 5;
    for (int k = 0; k < 2; k++) {
        dpc_model *m = model_of(specs[k], d, 2);
        dpc_dataset *ds = logistic_data(B, d, 30);
        if (!m || !ds) {
            dpc_model_free(m);
            dpc_dataset_free(ds);
            continue;
        }
        size_t P = dpc_model_num_params(m);
        double *w = malloc(P * sizeof *w), *all = calloc(P, sizeof *all),
               *one = calloc(P, sizeof *one);
        dpc_rng rng;
        dpc_rng_seed(&rng, 1);
        CHECK_OK(dpc_model_init(m, w, &rng, 0, &err), &err);
        CHECK_OK(dpc_model_clipped_sum_naive(m, w, ds->x, ds->y, B, 0.05, all, NULL, NULL, &err),
                 &err);
        for (size_t i = 0; i < B; i++)
            CHECK_OK(dpc_model_clipped_sum_naive(m, w, ds->x + i * d, ds->y + i, 1, 0.05, one,
                                                 NULL, NULL, &err),
                     &err);
        double dev = 0, ref = 0;
        for (size_t p = 0; p < P; p++) dev = fmax(dev, fabs(all[p] - one[p])), ref += fabs(all[p]);
        CHECK(ref > 0 && dev <= 1e-14 * ref, "%s: batch sum = sum of examples alone (%g of %g)",
              specs[k], dev, ref);
        free(w);
        free(all);
        free(one);
        dpc_model_free(m);
        dpc_dataset_free(ds);
    }
}

/* ---- 9. auxiliary outputs ------------------------------------------------------------------ */

/* The step's telemetry (dpc_step_info: loss, clip fraction) is the exact, unnoised statistic of
 * the private batch (train.h says so: outside the guarantee, never to be published as private);
 * asking for it changes nothing that is released (parameters bit for bit, the ledger). */
static void test_auxiliary_outputs(void)
{
    dpc_dataset *ds = logistic_data(100, DIM, 8);
    dpc_model *m = model_of("logistic", DIM, 2);
    uint64_t hash[2] = {0, 0};
    double loss_dev = 0;
    for (int with = 0; with < 2; with++) {
        dpc_train_config c;
        dpc_train_config_init(&c);
        c.batch = 10;
        c.epochs = 1;
        c.noise_multiplier = 1.0;
        c.accountant = DPC_ACCOUNTANT_RDP;
        dpc_rng rng;
        dpc_rng_seed(&rng, 14);
        dpc_error err = {0};
        dpc_trainer *tr = NULL;
        CHECK_OK(dpc_trainer_new(&tr, m, ds, NULL, &c, &rng, &err), &err);
        if (!tr) continue;
        size_t idx[100], cnt;
        double X[100 * DIM], y[100], losses[100], g[DIM + 1], theta[DIM + 1];
        while (dpc_trainer_steps_done(tr) < dpc_trainer_steps_total(tr)) {
            size_t t = dpc_trainer_steps_done(tr);
            dpc_step_info info;
            memcpy(theta, dpc_trainer_params(tr), sizeof theta);
            if (dpc_trainer_step(tr, with ? &info : NULL, &err)) break;
            CHECK_OK(dpc_sampler_batch(dpc_trainer_sampler(tr), t, idx, &cnt, &err), &err);
            if (!with || cnt == 0) continue;
            for (size_t j = 0; j < cnt; j++) {
                memcpy(X + j * DIM, ds->x + idx[j] * DIM, DIM * sizeof *X);
                y[j] = ds->y[idx[j]];
            }
            memset(g, 0, sizeof g);
            CHECK_OK(dpc_model_clipped_sum_naive(m, theta, X, y, cnt, c.clip, g, losses, NULL,
                                                 &err),
                     &err);
            double mean = 0;
            for (size_t j = 0; j < cnt; j++) mean += losses[j];
            mean /= (double)cnt;
            loss_dev = fmax(loss_dev, fabs(info.loss - mean));
        }
        hash[with] = dpc_trainer_params_hash(tr);
        dpc_trainer_free(tr);
    }
    CHECK(loss_dev < 1e-12, "the telemetry loss is the exact batch mean (unnoised): %g", loss_dev);
    CHECK(hash[0] == hash[1], "telemetry asked or not: the same parameters");
    dpc_model_free(m);
    dpc_dataset_free(ds);
}

int main(void)
{
    test_division_by_batch_privatizer();
    test_division_by_batch_trainer();
    test_sensitivity_alignment();
    test_sampler_is_the_accounted_one();
    test_public_metadata();
    test_neighbouring_relation();
    test_empty_and_nonfinite_privatizer();
    test_empty_and_nonfinite_trainer();
    test_accumulation();
    test_cross_example();
    test_auxiliary_outputs();
    return TEST_SUMMARY();
}
