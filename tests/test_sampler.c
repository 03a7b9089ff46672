/* test_sampler.c — batch selection: permutations are bijections, fixed-order epochs repeat,
 * participation patterns match what dpc_sampler_describe tells the accountant, Poisson batch
 * sizes and inclusion rates are right, batches are pure functions of the step. */
#include "dpcorr/sampler.h"
#include "harness.h"

#include <stdlib.h>

static dpc_sampler *mk(dpc_sampler_kind kind, size_t N, size_t B, size_t steps, size_t groups,
                       uint64_t seed)
{
    dpc_rng rng;
    dpc_rng_seed(&rng, seed);
    dpc_sampler_config cfg = {kind, N, B, steps, groups};
    dpc_sampler *s = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_sampler_new(&s, &cfg, &rng, &err), &err);
    return s;
}

static void test_fixed_shuffle(void)
{
    size_t N = 1003, B = 50, spe = N / B, steps = 3 * spe + 5;
    for (int kind = 0; kind < 2; kind++) {
        dpc_sampler *s = mk(kind ? DPC_SAMPLER_SHUFFLE : DPC_SAMPLER_FIXED, N, B, steps, 0, 9);
        dpc_sampler_desc d;
        dpc_sampler_describe(s, &d);
        CHECK(d.steps_per_epoch == spe && d.part.k == 4 && !d.poisson, "describe %d", kind);
        CHECK(d.part.kind == (kind ? DPC_PART_MINSEP : DPC_PART_CYCLIC) &&
                  d.part.b == (kind ? 1 : spe), "pattern kind %d", kind);
        size_t *idx = malloc(dpc_sampler_max_batch(s) * sizeof *idx), cnt;
        int *seen = calloc(N, sizeof *seen);
        size_t *first_step = calloc(N, sizeof *first_step);
        int bijective = 1, cyclic = 1, pure = 1, same_order = 1;
        size_t *epoch0 = malloc(spe * B * sizeof *epoch0);
        dpc_error err = {0};
        for (size_t t = 0; t < steps; t++) {
            CHECK_OK(dpc_sampler_batch(s, t, idx, &cnt, &err), &err);
            if (cnt != B) bijective = 0;
            size_t e = t / spe;
            for (size_t j = 0; j < cnt; j++) {
                size_t ex = idx[j];
                if (ex >= N) { bijective = 0; continue; }
                if (seen[ex] == (int)e + 1) bijective = 0; /* at most once per epoch */
                if (kind == 0 && seen[ex] != (int)e) bijective = 0; /* fixed: every epoch */
                seen[ex] = (int)e + 1;
                if (e == 0) first_step[ex] = t, epoch0[(t % spe) * B + j] = ex;
                else if (t % spe != first_step[ex] % spe) cyclic = 0;
                if (e > 0 && epoch0[(t % spe) * B + j] != ex) same_order = 0;
            }
            size_t again[64], c2;
            CHECK_OK(dpc_sampler_batch(s, t, again, &c2, &err), &err);
            for (size_t j = 0; j < c2; j++) pure &= again[j] == idx[j];
        }
        size_t used = 0;
        for (size_t i = 0; i < N; i++) used += seen[i] > 0;
        CHECK(bijective, "kind %d: each example at most once per epoch", kind);
        if (kind == 0)
            CHECK(used == spe * B, "fixed: %zu examples used, expected %zu", used, spe * B);
        else
            CHECK(used > spe * B && used <= N, "shuffle: %zu examples used over 4 epochs", used);
        CHECK(pure, "kind %d: batches are pure functions of the step", kind);
        if (kind == 0) {
            CHECK(cyclic && same_order, "fixed: participation exactly every %zu steps", spe);
        } else {
            CHECK(!same_order, "shuffle: epochs differ");
        }
        dpc_error e2 = {0};
        CHECK(dpc_sampler_batch(s, steps, idx, &cnt, &e2) == DPC_E_RANGE, "step beyond the run");
        free(idx); free(seen); free(first_step); free(epoch0);
        dpc_sampler_free(s);
    }
}

static void test_poisson(void)
{
    size_t N = 2000, B = 40, steps = (size_t)(400 * tests_scale()) + 40;
    dpc_sampler *s = mk(DPC_SAMPLER_POISSON, N, B, steps, 0, 3);
    dpc_sampler_desc d;
    dpc_sampler_describe(s, &d);
    double q = (double)B / N;
    CHECK(d.poisson && d.opportunities == steps && fabs(d.q - q) < 1e-15 &&
              d.part.kind == DPC_PART_CYCLIC && d.part.b == 1 && d.part.k == steps,
          "poisson describe");
    size_t *idx = malloc(N * sizeof *idx), cnt, total = 0, ex7 = 0;
    dpc_error err = {0};
    int sorted = 1;
    for (size_t t = 0; t < steps; t++) {
        CHECK_OK(dpc_sampler_batch(s, t, idx, &cnt, &err), &err);
        total += cnt;
        for (size_t j = 0; j < cnt; j++) {
            if (j && idx[j] <= idx[j - 1]) sorted = 0;
            ex7 += idx[j] == 7;
        }
    }
    double mean = (double)total / steps, sd = sqrt(N * q * (1 - q) / steps);
    CHECK(fabs(mean - B) < 5 * sd, "poisson mean batch %g vs %zu", mean, B);
    CHECK(sorted, "poisson indices increasing");
    double e7 = q * steps;
    CHECK(fabs(ex7 - e7) < 5 * sqrt(e7) + 1, "example 7 drawn %zu times vs %g", ex7, e7);
    free(idx);
    dpc_sampler_free(s);
}

/* The batches are the documented per-example draws, word by word: Poisson t = {i : uniform(t,
 * i) < q}, balls-in-bins t = {i : below(ROW_BINS, i, b) == t mod b}, on the sampler's stream
 * (DPC_STREAM_SAMPLER, 0), seeded and secure; N not a multiple of the samplers' word runs (256)
 * nor of a block. Guards the bulk draws (dpc_rng_word_fill) against the definition. */
static void test_draw_definition(void)
{
    size_t N = 1037, B = 90, steps = 23;
    const uint64_t rows_bins = (uint64_t)3 << 61; /* sampler.c's ROW_BINS */
    for (int secure = 0; secure < 2; secure++)
        for (int kind = 0; kind < 2; kind++) {
            dpc_rng rng;
            dpc_rng_seed(&rng, 41);
            if (secure) {
                memset(&rng, 0, sizeof rng);
                rng.mode = DPC_RNG_SECURE;
                for (int i = 0; i < 8; i++) rng.skey[i] = 0x2545F491u * (uint32_t)(i + 5);
            }
            dpc_sampler_config cfg = {kind ? DPC_SAMPLER_BALLS_IN_BINS : DPC_SAMPLER_POISSON, N,
                                      B, steps, 0};
            dpc_sampler *s = NULL;
            dpc_error err = {0};
            CHECK_OK(dpc_sampler_new(&s, &cfg, &rng, &err), &err);
            if (!s) continue;
            dpc_sampler_desc d;
            dpc_sampler_describe(s, &d);
            dpc_rng_stream st = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_SAMPLER, 0));
            size_t *idx = malloc(N * sizeof *idx), cnt, bad = 0, total = 0;
            size_t bins = d.steps_per_epoch ? d.steps_per_epoch : 1;
            for (size_t t = 0; t < steps; t++) {
                CHECK_OK(dpc_sampler_batch(s, t, idx, &cnt, &err), &err);
                size_t j = 0;
                for (size_t i = 0; i < N; i++) {
                    int in = kind ? dpc_rng_below(&st, rows_bins, i, bins) == t % bins
                                  : dpc_rng_uniform(&st, t, i) < (double)B / (double)N;
                    if (in) bad += j >= cnt || idx[j++] != i;
                }
                bad += j != cnt;
                total += cnt;
            }
            CHECK(bad == 0 && total > 0,
                  "%s %s: batches differ from the per-example definition in %zu places",
                  secure ? "secure" : "seeded", kind ? "balls-in-bins" : "poisson", bad);
            free(idx);
            dpc_sampler_free(s);
        }
}

static void test_cyclic_poisson(void)
{
    size_t N = 1000, G = 8, B = 25, steps = 200;
    dpc_sampler *s = mk(DPC_SAMPLER_CYCLIC_POISSON, N, B, steps, G, 4);
    dpc_sampler_desc d;
    dpc_sampler_describe(s, &d);
    CHECK(d.poisson && d.part.kind == DPC_PART_CYCLIC && d.part.b == G && d.part.k == 25 &&
              d.opportunities == 25, "cyclic-poisson describe");
    CHECK(fabs(d.q - (double)B / (N / G)) < 1e-15, "q = B / group size");
    int *group = malloc(N * sizeof *group);
    for (size_t i = 0; i < N; i++) group[i] = -1;
    size_t *idx = malloc(dpc_sampler_max_batch(s) * sizeof *idx), cnt, total = 0;
    dpc_error err = {0};
    int consistent = 1;
    for (size_t t = 0; t < steps; t++) {
        CHECK_OK(dpc_sampler_batch(s, t, idx, &cnt, &err), &err);
        total += cnt;
        for (size_t j = 0; j < cnt; j++) {
            int g = (int)(t % G);
            if (group[idx[j]] >= 0 && group[idx[j]] != g) consistent = 0;
            group[idx[j]] = g;
        }
    }
    CHECK(consistent, "an example only appears at steps of its group");
    CHECK(fabs((double)total / steps - B) < 5 * sqrt((double)B / steps) + 0.5, "mean batch");
    free(group);
    free(idx);
    dpc_sampler_free(s);
}

/* dpc_sampler_opportunities inverts the permutations: for FIXED and SHUFFLE the listed steps are
 * exactly those at which the example is in a batch; for the Poisson kinds every draw of the
 * example falls on a listed step (POISSON: all steps; CYCLIC_POISSON: its group's steps). */
static void test_opportunities(void)
{
    const struct { dpc_sampler_kind kind; size_t N, B, steps, G; } cases[] = {
        {DPC_SAMPLER_FIXED, 1003, 50, 65, 0},   {DPC_SAMPLER_SHUFFLE, 1003, 50, 65, 0},
        {DPC_SAMPLER_POISSON, 300, 30, 40, 0},  {DPC_SAMPLER_CYCLIC_POISSON, 1003, 20, 60, 7},
        {DPC_SAMPLER_FIXED, 17, 4, 9, 0},       {DPC_SAMPLER_BALLS_IN_BINS, 500, 50, 25, 0},
    };
    dpc_error err = {0};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        dpc_sampler *s = mk(cases[c].kind, cases[c].N, cases[c].B, cases[c].steps, cases[c].G, 11);
        size_t N = cases[c].N, n = cases[c].steps;
        unsigned char *drawn = calloc(N * n, 1);
        size_t *idx = malloc(dpc_sampler_max_batch(s) * sizeof *idx), cnt;
        for (size_t t = 0; t < n; t++) {
            CHECK_OK(dpc_sampler_batch(s, t, idx, &cnt, &err), &err);
            for (size_t j = 0; j < cnt; j++) drawn[idx[j] * n + t] = 1;
        }
        size_t *steps = malloc(n * sizeof *steps), k;
        int certain, exact = 1, covered = 1, increasing = 1, never = 0;
        for (size_t ex = 0; ex < N; ex++) {
            CHECK_OK(dpc_sampler_opportunities(s, ex, steps, &k, &certain, &err), &err);
            unsigned char *opp = calloc(n, 1);
            for (size_t i = 0; i < k; i++) {
                opp[steps[i]] = 1;
                if (i && steps[i] <= steps[i - 1]) increasing = 0;
            }
            for (size_t t = 0; t < n; t++) {
                if (drawn[ex * n + t] && !opp[t]) covered = 0;
                if (certain && drawn[ex * n + t] != opp[t]) exact = 0;
            }
            never += k == 0;
            free(opp);
        }
        int want_certain = cases[c].kind == DPC_SAMPLER_FIXED || cases[c].kind == DPC_SAMPLER_SHUFFLE;
        CHECK(certain == want_certain, "case %zu: certain %d", c, certain);
        CHECK(exact && covered && increasing, "case %zu: exact %d covered %d increasing %d", c, exact,
              covered, increasing);
        if (cases[c].kind == DPC_SAMPLER_FIXED)
            CHECK(never == (int)(N % cases[c].B), "case %zu: %d left over", c, never);
        if (cases[c].kind == DPC_SAMPLER_CYCLIC_POISSON)
            CHECK(never == (int)(N % cases[c].G), "case %zu: %d left over", c, never);
        CHECK(dpc_sampler_opportunities(s, N, steps, &k, &certain, &err) == DPC_E_INVALID,
              "example beyond N refused");
        free(drawn);
        free(idx);
        free(steps);
        dpc_sampler_free(s);
    }
}

/* balls-in-bins: every example in exactly one step of each epoch, the same position every epoch;
 * positions uniform (chi-square over the bins, fixed seed); batches average N / b */
static void test_balls_in_bins(void)
{
    size_t N = 2000, B = 100, steps = 60; /* b = 20 bins, 3 epochs */
    dpc_sampler *s = mk(DPC_SAMPLER_BALLS_IN_BINS, N, B, steps, 0, 9);
    dpc_sampler_desc d;
    dpc_sampler_describe(s, &d);
    CHECK(d.balls_in_bins && !d.poisson && d.part.kind == DPC_PART_CYCLIC && d.part.b == 20 &&
              d.part.k == 3 && fabs(d.expected_batch - 100.0) < 1e-12,
          "balls-in-bins describe");
    int *bin = malloc(N * sizeof *bin);
    size_t *seen = calloc(N, sizeof *seen), *per = calloc(20, sizeof *per);
    for (size_t i = 0; i < N; i++) bin[i] = -1;
    size_t *idx = malloc(dpc_sampler_max_batch(s) * sizeof *idx), cnt;
    dpc_error err = {0};
    int consistent = 1;
    for (size_t t = 0; t < steps; t++) {
        CHECK_OK(dpc_sampler_batch(s, t, idx, &cnt, &err), &err);
        for (size_t j = 0; j < cnt; j++) {
            int g = (int)(t % 20);
            if (bin[idx[j]] >= 0 && bin[idx[j]] != g) consistent = 0;
            bin[idx[j]] = g;
            seen[idx[j]]++;
            if (t < 20) per[g]++;
        }
    }
    int thrice = 1;
    for (size_t i = 0; i < N; i++) thrice &= seen[i] == 3;
    CHECK(consistent && thrice, "each example once per epoch, at a fixed position");
    double chi2 = 0.0;
    for (int g = 0; g < 20; g++) chi2 += (per[g] - 100.0) * (per[g] - 100.0) / 100.0;
    CHECK(chi2 < 43.8, "bins uniform: chi2 = %.2f (19 dof, 0.999 quantile 43.8)", chi2);
    free(bin);
    free(seen);
    free(per);
    free(idx);
    dpc_sampler_free(s);
}

static void test_invalid(void)
{
    dpc_rng rng;
    dpc_rng_seed(&rng, 1);
    dpc_error err = {0};
    dpc_sampler *s = NULL;
    dpc_sampler_config bad[] = {
        {DPC_SAMPLER_FIXED, 10, 11, 5, 0}, {DPC_SAMPLER_FIXED, 0, 1, 5, 0},
        {DPC_SAMPLER_FIXED, 10, 0, 5, 0},  {DPC_SAMPLER_CYCLIC_POISSON, 10, 2, 5, 0},
        {DPC_SAMPLER_CYCLIC_POISSON, 10, 6, 5, 2}, {DPC_SAMPLER_POISSON, 10, 2, 0, 0}};
    const char *what[] = {"batch", "empty", "batch", "groups", "batch", "steps"};
    for (int i = 0; i < 6; i++) {
        CHECK(dpc_sampler_new(&s, &bad[i], &rng, &err) == DPC_E_INVALID && !s &&
                  strstr(err.msg, what[i]),
              "bad sampler %d names '%s': %s", i, what[i], err.msg);
    }
    dpc_sampler_kind k;
    CHECK(dpc_sampler_kind_parse("poisson", &k, &err) == DPC_OK && k == DPC_SAMPLER_POISSON,
          "parse");
    CHECK(dpc_sampler_kind_parse("nope", &k, &err) == DPC_E_INVALID, "parse unknown");
    dpc_sampler_free(NULL);
}

int main(void)
{
    test_fixed_shuffle();
    test_poisson();
    test_draw_definition();
    test_cyclic_poisson();
    test_opportunities();
    test_balls_in_bins();
    test_invalid();
    return TEST_SUMMARY();
}
