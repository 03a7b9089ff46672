/* test_sampler.c — batch selection: permutations are bijections, fixed-order epochs repeat,
 * participation patterns match what dpc_sampler_describe tells the accountant, Poisson batch
 * sizes and inclusion rates are right, batches are pure functions of the step. */
#include "dpcorr/abi.h"
#include "dpcorr/sampler.h"
#include "harness.h"
#include "sampler/sampler_internal.h"
#include "size_table_oracle.h"

#include <float.h>
#include <stdint.h>
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

/* The fixed-order and shuffled batches by their definition (doc/training.md): position i of
 * epoch e's order is the Feistel permutation pi_perm (perm 0 fixed, 1 + e shuffle) of i, six
 * rounds whose round function is dpc_rng_word(ROW_PERM + perm, half, round) mod 2^half, cycle
 * walking into [0, N). The sampler keeps the round function as tables (make_ftab); the batches
 * must be these, bit for bit, in seeded and secure mode, for half widths 1 .. 9 and epochs past
 * the first. */
static size_t ref_permute(const dpc_rng_stream *st, unsigned h, size_t N, uint64_t perm, size_t i)
{
    uint64_t mask = ((uint64_t)1 << h) - 1, y = i;
    do {
        uint64_t L = y >> h, R = y & mask;
        for (uint32_t r = 0; r < 6; r++) {
            uint64_t f = dpc_rng_word(st, ((uint64_t)1 << 62) + perm, R, r) & mask, nl = R;
            R = L ^ f;
            L = nl;
        }
        y = (L << h) | R;
    } while (y >= N);
    return (size_t)y;
}

static void test_permutation_definition(void)
{
    static const size_t Ns[] = {3, 17, 1003, 70000};
    for (int secure = 0; secure < 2; secure++)
        for (size_t k = 0; k < sizeof Ns / sizeof Ns[0]; k++)
            for (int kind = 0; kind < 2; kind++) {
                size_t N = Ns[k], B = N > 100 ? 100 : 1, spe = N / B, steps = 2 * spe + 3;
                dpc_rng rng;
                dpc_error err = {0};
                if (secure) CHECK_OK(dpc_rng_seed_os(&rng, &err), &err); /* ChaCha20 words */
                else dpc_rng_seed(&rng, 21 + k);
                dpc_sampler_config cfg = {kind ? DPC_SAMPLER_SHUFFLE : DPC_SAMPLER_FIXED, N, B,
                                          steps, 0};
                dpc_sampler *s = NULL;
                CHECK_OK(dpc_sampler_new(&s, &cfg, &rng, &err), &err);
                if (!s) continue;
                dpc_rng_stream st =
                    dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_SAMPLER, 0));
                unsigned w = 2;
                while (((uint64_t)1 << w) < N) w += 2;
                size_t *idx = calloc(B, sizeof *idx), c, bad = 0;
                for (size_t t = 0; t < steps; t += (t % spe == 1 && spe > 4 ? spe - 3 : 1)) {
                    CHECK_OK(dpc_sampler_batch(s, t, idx, &c, &err), &err);
                    uint64_t perm = kind ? 1 + t / spe : 0;
                    for (size_t j = 0; j < c; j++)
                        bad += idx[j] != ref_permute(&st, w / 2, N, perm, (t % spe) * B + j);
                }
                CHECK(bad == 0, "%s %s N=%zu: %zu members differ from the definition",
                      secure ? "secure" : "seeded", kind ? "shuffle" : "fixed", N, bad);
                free(idx);
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

/* The batches are the documented draws (sampler.h, scheme 2), on the sampler's stream
 * (DPC_STREAM_SAMPLER, 0), seeded and secure:
 *   Poisson at rate >= 1/16   {i : below(t, i, N) < B};
 *   Poisson below 1/16        the first `count` distinct values of below(t, 1, N),
 *                             below(t, 2, N), ... (the size itself comes from the table);
 *   balls-in-bins             {i : below(ROW_BINS, i, b) == t mod b} (unchanged since scheme 1).
 * N not a multiple of the samplers' word runs (256) nor of a block. */
static void test_draw_definition(void)
{
    const struct { dpc_sampler_kind kind; size_t N, B; } cases[] = {
        {DPC_SAMPLER_POISSON, 1037, 90},  /* q = 0.087: one draw per example */
        {DPC_SAMPLER_POISSON, 1037, 20},  /* q = 0.019: size table + distinct positions */
        {DPC_SAMPLER_POISSON, 300, 150},  /* q = 0.5: distinct positions would repeat often */
        {DPC_SAMPLER_BALLS_IN_BINS, 1037, 90}};
    size_t steps = 23;
    const uint64_t rows_bins = (uint64_t)3 << 61; /* sampler.c's ROW_BINS */
    for (int secure = 0; secure < 2; secure++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            size_t N = cases[c].N, B = cases[c].B;
            int bib = cases[c].kind == DPC_SAMPLER_BALLS_IN_BINS, dense = B * 16 >= N;
            dpc_rng rng;
            dpc_rng_seed(&rng, 41);
            if (secure) {
                memset(&rng, 0, sizeof rng);
                rng.mode = DPC_RNG_SECURE;
                for (int i = 0; i < 8; i++) rng.skey[i] = 0x2545F491u * (uint32_t)(i + 5);
            }
            dpc_sampler_config cfg = {cases[c].kind, N, B, steps, 0};
            dpc_sampler *s = NULL;
            dpc_error err = {0};
            CHECK_OK(dpc_sampler_new(&s, &cfg, &rng, &err), &err);
            if (!s) continue;
            dpc_sampler_desc d;
            dpc_sampler_describe(s, &d);
            dpc_rng_stream st = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_SAMPLER, 0));
            size_t *idx = malloc(dpc_sampler_max_batch(s) * sizeof *idx), cnt, bad = 0, total = 0;
            unsigned char *in = malloc(N);
            size_t bins = d.steps_per_epoch ? d.steps_per_epoch : 1;
            for (size_t t = 0; t < steps; t++) {
                CHECK_OK(dpc_sampler_batch(s, t, idx, &cnt, &err), &err);
                memset(in, 0, N);
                if (bib || dense) {
                    for (size_t i = 0; i < N; i++)
                        in[i] = bib ? dpc_rng_below(&st, rows_bins, i, bins) == t % bins
                                    : dpc_rng_below(&st, t, i, N) < B;
                } else {
                    for (size_t got = 0, dd = 1; got < cnt && dd < 100 * N; dd++) {
                        size_t v = (size_t)dpc_rng_below(&st, t, dd, N);
                        if (!in[v]) in[v] = 1, got++;
                    }
                }
                size_t j = 0;
                for (size_t i = 0; i < N; i++)
                    if (in[i]) bad += j >= cnt || idx[j++] != i;
                bad += j != cnt;
                total += cnt;
            }
            CHECK(bad == 0 && total > 0, "%s case %zu: batches differ from the definition in %zu "
                  "places", secure ? "secure" : "seeded", c, bad);
            free(idx);
            free(in);
            dpc_sampler_free(s);
        }
}

/* Binomial(n, q) pmf at k0 .. k0 + m - 1, by the ratio recurrence from the mode in long double
 * (for the chi-square of drawn sizes; the table itself is checked exactly, below). */
static void binom_pmf(size_t n, size_t B, size_t k0, size_t m, long double *p)
{
    long double nb = (long double)(n - B), bd = (long double)B, S = 0;
    /* r over [lo, hi] wide enough to normalize: the mode +- 60 sd */
    double sd = sqrt((double)B * (1.0 - (double)B / (double)n)) + 1.0;
    size_t lo = (double)B > 60 * sd ? B - (size_t)(60 * sd) : 0;
    size_t hi = B + (size_t)(60 * sd) < n ? B + (size_t)(60 * sd) : n;
    long double *r = malloc((hi - lo + 1) * sizeof *r);
    r[B - lo] = 1;
    for (size_t k = B; k < hi; k++) r[k + 1 - lo] = r[k - lo] * ((n - k) * bd) / ((k + 1) * nb);
    for (size_t k = B; k > lo; k--) r[k - 1 - lo] = r[k - lo] * (k * nb) / ((n - k + 1) * bd);
    for (size_t k = lo; k <= hi; k++) S += r[k - lo];
    for (size_t j = 0; j < m; j++) {
        size_t k = k0 + j;
        p[j] = k >= lo && k <= hi ? r[k - lo] / S : 0;
    }
    free(r);
}

/* Wilson-Hilferty: the chi-square quantile with df degrees of freedom at the standard normal
 * quantile z (z = 3.719: upper 1e-4). */
static double chi2_quantile(double df, double z)
{
    double h = 2.0 / (9.0 * df), c = 1.0 - h + z * sqrt(h);
    return df * c * c * c;
}

/* Unsigned numbers in units of 2^-192 up to 1 (four little-endian limbs), for the oracle. */
typedef struct u192 {
    uint64_t w[4];
} u192;

static u192 u192_of(const uint64_t v[3])
{
    u192 r = {{v[0], v[1], v[2], 0}};
    return r;
}

static int u192_lt(u192 a, u192 b)
{
    for (int i = 4; i-- > 0;)
        if (a.w[i] != b.w[i]) return a.w[i] < b.w[i];
    return 0;
}

static u192 u192_sub(u192 a, u192 b) /* a >= b */
{
    u192 r;
    uint64_t br = 0;
    for (int i = 0; i < 4; i++) {
        r.w[i] = a.w[i] - b.w[i] - br;
        br = a.w[i] < b.w[i] || (a.w[i] == b.w[i] && br);
    }
    return r;
}

static long double u192_ld(u192 a)
{
    long double v = 0;
    for (int i = 4; i-- > 0;) v = v * 0x1p64L + (long double)a.w[i];
    return v;
}

/* The table's boundary j (0 for j < 0, 2^128 for j >= nk - 1) in units of 2^-192. */
static u192 table_cdf(const dpc__size_table *t, long j)
{
    u192 r = {{0, 0, 0, 0}};
    if (j < 0) return r;
    if ((size_t)j >= t->nk - 1) {
        r.w[3] = 1;
        return r;
    }
    r.w[1] = t->lo[j];
    r.w[2] = t->hi[j];
    return r;
}

/* The 128-bit batch-size table against the binomial computed independently and exactly
 * (tests/size_table_oracle.h: integers for n <= 10^6, 100-digit decimal at n = 10^12, to
 * 2^-192): every boundary is within the window the exact draw relies on (also the virtual ones,
 * 0 below the table and 1 at its last size), and the 128-bit rule alone is within the total
 * variation the table states (below 1e-33 there). The oracle's range covers the table's; outside
 * it the oracle's mass counts whole. */
static void test_size_table_exact(void)
{
    size_t nc = sizeof STO_CASES / sizeof STO_CASES[0];
    for (size_t c = 0; c < nc; c++) {
        uint64_t n = STO_CASES[c].n, B = STO_CASES[c].B, kf = STO_CASES[c].kf;
        size_t cnt = STO_CASES[c].count;
        dpc__size_table t;
        dpc_error err = {0};
        CHECK_OK(dpc__size_table_build(&t, n, B, &err), &err);
        if (!t.nk) continue;
        CHECK(kf <= t.k0 && t.k0 + t.nk <= kf + cnt, "case %zu: table %zu..%zu outside the "
              "oracle's %llu..%llu", c, t.k0, t.k0 + t.nk - 1, (unsigned long long)kf,
              (unsigned long long)(kf + cnt - 1));
        u192 one = {{0, 0, 0, 1}}, prev_o = u192_of(STO_CASES[c].below), prev_t = table_cdf(&t, -1);
        long double l1 = u192_ld(prev_o); /* the oracle's mass below kf */
        for (size_t i = 0; i < cnt; i++) {
            u192 o = u192_of(STO_CASES[c].cdf[i]);
            long j = (long)(kf + i) - (long)t.k0;
            u192 tc = table_cdf(&t, j);
            /* masses: each oracle mass within one unit of its exact value */
            long double mo = u192_ld(u192_sub(o, prev_o)), mt = u192_ld(u192_sub(tc, prev_t));
            l1 += fabsl(mo - mt);
            prev_o = o;
            prev_t = tc;
        }
        l1 += u192_ld(u192_sub(one, prev_o)); /* the oracle's mass above the range */
        /* the window of the exact draw: |2^128 F(k0 + j) - cum_j| < win at every boundary,
         * F(k0 - 1) <= win 2^-128, F(last) >= 1 - win 2^-128 (the oracle to 2^-192) */
        long double win = (long double)t.win, worst = 0;
        for (size_t j = 0; j + 1 < t.nk; j++) {
            u192 o = u192_of(STO_CASES[c].cdf[t.k0 + j - kf]), tc = table_cdf(&t, (long)j);
            long double d = u192_lt(o, tc) ? u192_ld(u192_sub(tc, o)) : u192_ld(u192_sub(o, tc));
            d = d * 0x1p-64L + 1; /* in units of 2^-128, the oracle's floor taken up */
            if (d > worst) worst = d;
        }
        u192 below = t.k0 > kf ? u192_of(STO_CASES[c].cdf[t.k0 - 1 - kf])
                               : u192_of(STO_CASES[c].below);
        u192 top = u192_sub(one, u192_of(STO_CASES[c].cdf[t.k0 + t.nk - 1 - kf]));
        CHECK(worst < win && u192_ld(below) * 0x1p-64L + 1 <= win &&
                  u192_ld(top) * 0x1p-64L + 1 <= win,
              "n = %llu, B = %llu: boundaries within %.3Lg of 2^128 F, window %llu",
              (unsigned long long)n, (unsigned long long)B, worst, (unsigned long long)t.win);
        long double tv = l1 / 2 * 0x1p-192L, slack = (long double)cnt * 0x1p-192L;
        CHECK(tv <= (long double)t.tv + slack && t.tv < 1e-33,
              "n = %llu, B = %llu: total variation %.3Lg, stated bound %.3g",
              (unsigned long long)n, (unsigned long long)B, tv, t.tv);
        printf("size table n = %llu, B = %llu: %zu sizes from %zu, total variation %.3Lg "
               "(bound %.3g)\n", (unsigned long long)n, (unsigned long long)B, t.nk, t.k0, tv,
               t.tv);
        dpc__size_table_free(&t);
    }
}

/* Every table below rate 1/16 of the samplers: the 128-bit rule's bound is below 1e-25 up to B =
 * 10^6 and n = 2^48 and the exact draw's window is 3 or 4 units of 2^-128, the capacity holds
 * the largest size twice, the boundaries increase to 1. */
static void test_size_table(void)
{
    const size_t Ns[] = {1000, 100000, 10000000, 100000000, 60000, 1000000, 1000000000000,
                         (size_t)1 << 48, 17};
    const size_t Bs[] = {10, 1000, 1000, 1000000, 1, 10000, 1000000, 1000000, 1};
    for (int c = 0; c < 9; c++) {
        dpc_sampler *s = mk(DPC_SAMPLER_POISSON, Ns[c], Bs[c], 10, 0, 5);
        if (!s) continue;
        const dpc__size_table *t = dpc__sampler_size_table(s);
        CHECK(t && t->nk > 1 && t->k0 <= Bs[c] && t->k0 + t->nk > Bs[c], "case %d: table", c);
        if (!t) {
            dpc_sampler_free(s);
            continue;
        }
        CHECK(t->tv > 0 && t->tv < 1e-25, "case %d (B = %zu): stated total variation %.3g", c,
              Bs[c], t->tv);
        CHECK(dpc_sampler_max_batch(s) == 2 * (t->k0 + t->nk - 1), "case %d: capacity", c);
        int inc = 1;
        for (size_t j = 1; j + 1 < t->nk; j++)
            inc &= t->hi[j] > t->hi[j - 1] || (t->hi[j] == t->hi[j - 1] && t->lo[j] >= t->lo[j - 1]);
        CHECK(inc && t->hi[t->nk - 2] == UINT64_MAX, "case %d: boundaries non-decreasing to 1", c);
        CHECK(t->win >= 3 && t->win <= 4, "case %d: window %llu", c,
              (unsigned long long)t->win);
        dpc_sampler_free(s);
    }
}

/* The size the oracle of case c gives the uniform whose first three words are u (the first k
 * with U192 < floor(2^192 F(k))), SIZE_MAX where it cannot tell (U192 equal to one of its
 * values, or below or above its range). */
static size_t oracle_size(size_t c, const uint64_t u[3])
{
    u192 U = {{u[2], u[1], u[0], 0}}, lo = u192_of(STO_CASES[c].below);
    if (!u192_lt(lo, U)) return SIZE_MAX;
    for (size_t i = 0; i < STO_CASES[c].count; i++) {
        u192 e = u192_of(STO_CASES[c].cdf[i]);
        if (u192_lt(U, e)) return (size_t)STO_CASES[c].kf + i;
        if (!u192_lt(e, U)) return SIZE_MAX;
    }
    return SIZE_MAX;
}

static uint64_t lcg(uint64_t *x)
{
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return *x >> 11 ^ *x << 29;
}

/* One draw with the first three words fixed against the oracle; counts the paths. */
static void draw_vs_oracle(size_t c, const dpc__size_table *t, const dpc_rng_stream *st,
                           const uint64_t u[3], size_t *bad, size_t *told, size_t paths[3])
{
    dpc__uniform U = {st, 99, u, 3};
    size_t size = SIZE_MAX, want = oracle_size(c, u);
    int path = -1;
    dpc_status s = dpc__size_table_draw(t, &U, &size, &path);
    if (s || path < 0 || path > 20) {
        ++*bad;
        return;
    }
    paths[path > 2 ? 2 : path]++;
    if (want == SIZE_MAX) return;
    ++*told;
    *bad += size != want;
}

/* The exact draw against the binomial computed independently (tests/size_table_oracle.h, to
 * 2^-192): uniforms whose 128-bit prefix lies within twice the window of a boundary (the exact
 * comparisons at 512 bits and up decide), just below and above the oracle's own CDF values at
 * sizes inside the table and outside it at both ends (bisection over sizes the table does not
 * hold), and first words far from every boundary (decided by the first word alone, as the
 * 64-bit table did). Every draw the oracle can tell is its size. */
static void test_exact_draw(void)
{
    dpc_rng rng;
    dpc_rng_seed(&rng, 77);
    dpc_rng_stream st = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_SAMPLER, 0));
    const size_t cases[] = {0, 1, 3, 5};
    for (size_t ci = 0; ci < 4; ci++) {
        size_t c = cases[ci], bad = 0, told = 0, paths[3] = {0, 0, 0}, outside = 0;
        dpc__size_table t;
        dpc_error err = {0};
        CHECK_OK(dpc__size_table_build(&t, STO_CASES[c].n, STO_CASES[c].B, &err), &err);
        if (!t.nk) continue;
        uint64_t x = 12345 + c;
        size_t nb = t.nk - 1, kf = (size_t)STO_CASES[c].kf, cnt = STO_CASES[c].count;
        for (size_t j = 0; j < nb; j++) /* near each boundary: delta in [-2 win, 2 win] */
            for (int d = -2 * (int)t.win; d <= 2 * (int)t.win; d += 1 + (j % 3)) {
                /* v = cum_j + d, mod 2^128 */
                uint64_t lo = t.lo[j] + (uint64_t)(int64_t)d;
                uint64_t hi = t.hi[j] + (d < 0 ? (lo > t.lo[j] ? UINT64_MAX : 0)
                                               : (lo < t.lo[j]));
                uint64_t u[3] = {hi, lo, lcg(&x)};
                draw_vs_oracle(c, &t, &st, u, &bad, &told, paths);
            }
        for (size_t i = 1; i < cnt; i++) /* just below and above the oracle's values */
            for (int side = 0; side < 2; side++) {
                u192 e = u192_of(STO_CASES[c].cdf[i]), one = {{1 + (lcg(&x) & 255), 0, 0, 0}};
                u192 v = side ? e : u192_sub(e, one);
                if (side) { /* e + 1 .. e + 256 */
                    u192 z = {{0, 0, 0, 0}};
                    v = u192_sub(e, u192_sub(z, one)); /* e + one, mod 2^256 */
                }
                uint64_t u[3] = {v.w[2], v.w[1], v.w[0]};
                size_t k = kf + i;
                outside += k < t.k0 || k >= t.k0 + t.nk;
                draw_vs_oracle(c, &t, &st, u, &bad, &told, paths);
            }
        for (int r = 0; r < 20000; r++) { /* random first words */
            uint64_t u[3] = {lcg(&x), lcg(&x), lcg(&x)};
            draw_vs_oracle(c, &t, &st, u, &bad, &told, paths);
        }
        CHECK(bad == 0 && told > 20000 && paths[0] > 19000 && paths[2] > nb,
              "n = %llu, B = %llu: %zu of %zu draws differ from the oracle (paths %zu / %zu / "
              "%zu)", (unsigned long long)STO_CASES[c].n, (unsigned long long)STO_CASES[c].B,
              bad, told, paths[0], paths[1], paths[2]);
        if (t.k0 > kf)
            CHECK(outside > 0, "n = %llu: sizes outside the table were drawn",
                  (unsigned long long)STO_CASES[c].n);
        dpc__size_table_free(&t);
    }
}

/* The size of the uniform given exactly by its first nw words (the rest 0). */
static size_t size_of_words(const dpc__size_table *t, const uint64_t *w, size_t nw, int *path)
{
    uint64_t z[16] = {0};
    memcpy(z, w, nw * sizeof *w);
    dpc__uniform u = {NULL, 0, z, 16};
    size_t size = SIZE_MAX;
    *path = -1;
    if (dpc__size_table_draw(t, &u, &size, path)) return SIZE_MAX;
    return size;
}

/* Deep comparisons: F(k) found to 640 bits by bisection on U through the draw itself (U < F(k)
 * exactly when the size of U is at most k); its first 192 bits are the oracle's floor(2^192
 * F(k)), and the uniforms one unit of 2^-640 on either side of it, which agree with F(k) beyond
 * what the first exact level (512 bits) resolves, draw k and k + 1 through a deeper level. */
static void test_exact_deep(void)
{
    dpc__size_table t;
    dpc_error err = {0};
    CHECK_OK(dpc__size_table_build(&t, STO_CASES[0].n, STO_CASES[0].B, &err), &err);
    if (!t.nk) return;
    const size_t ks[] = {3, 10, 17};
    for (int c = 0; c < 3; c++) {
        size_t k = ks[c], nw = 10, bad = 0;
        uint64_t w[10] = {0};
        int path;
        for (size_t b = 0; b < 64 * nw; b++) { /* the largest U (640 bits) with U < F(k) */
            size_t i = b / 64;
            uint64_t bit = (uint64_t)1 << (63 - b % 64);
            w[i] |= bit;
            size_t sz = size_of_words(&t, w, nw, &path);
            bad += sz == SIZE_MAX;
            if (sz > k) w[i] &= ~bit;
        }
        const uint64_t *o = STO_CASES[0].cdf[k - STO_CASES[0].kf];
        CHECK(!bad && w[0] == o[2] && w[1] == o[1] && w[2] == o[0],
              "k = %zu: F(k) by bisection %016llx %016llx %016llx, oracle %016llx %016llx %016llx",
              k, (unsigned long long)w[0], (unsigned long long)w[1], (unsigned long long)w[2],
              (unsigned long long)o[2], (unsigned long long)o[1], (unsigned long long)o[0]);
        int p_lo, p_hi;
        size_t lo = size_of_words(&t, w, nw, &p_lo);
        uint64_t up[10];
        memcpy(up, w, sizeof up);
        for (size_t i = nw; i-- > 0;) /* + 2^-640 */
            if (++up[i]) break;
        size_t hi = size_of_words(&t, up, nw, &p_hi);
        CHECK(lo == k && hi == k + 1 && p_lo >= 3 && p_hi >= 3,
              "k = %zu: sizes %zu and %zu either side of F(k) (paths %d, %d: deeper than 512 "
              "bits)", k, lo, hi, p_lo, p_hi);
    }
    dpc__size_table_free(&t);
}

/* How often a sampler's draw needs more than its first word: over 10^6 steps (expected about
 * 3 nk 2^-64 a step for the second word, 1e-34 for the exact comparison), none. */
static void test_draw_counts(void)
{
    dpc_rng rng;
    dpc_rng_seed(&rng, 77);
    dpc_rng_stream st = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_SAMPLER, 0));
    dpc_sampler *s = mk(DPC_SAMPLER_POISSON, 1000000, 1000, 1000000, 0, 77);
    const dpc__size_table *ts = s ? dpc__sampler_size_table(s) : NULL;
    if (!ts) {
        dpc_sampler_free(s);
        return;
    }
    size_t paths[3] = {0, 0, 0}, T = (size_t)(1000000 * tests_scale()), bad = 0;
    for (uint64_t tt = 0; tt < T; tt++) {
        dpc__uniform u = {&st, tt, NULL, 0};
        size_t size;
        int path = 0;
        bad += dpc__size_table_draw(ts, &u, &size, &path) != DPC_OK;
        paths[path > 2 ? 2 : path]++;
    }
    CHECK(bad == 0 && paths[0] == T, "%zu of %zu steps needed the second word, %zu the exact "
          "comparison (expected %.2g)", paths[1], T, paths[2], 3.0 * (double)T *
          (double)ts->nk * 0x1p-64);
    printf("exact draw: %zu of %zu steps needed the second word\n", paths[1] + paths[2], T);
    dpc_sampler_free(s);
}

/* The sets of the Poisson kinds are those the 64-bit size table drew (recorded by the previous
 * library: FNV-1a of every step's size, and of sizes and members, over 20000-100000 steps,
 * seeded and secure, cyclic-poisson, B up to 10^5): the exact draw changes a step only where its
 * first word falls between an old and a new boundary or within one of a new boundary's high
 * word (together below 1e-13 a step), so none of these changed. */
static uint64_t fnv8(uint64_t h, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        h ^= (v >> (8 * i)) & 255;
        h *= 0x100000001b3ull;
    }
    return h;
}

static void test_scheme2_golden(void)
{
    static const struct {
        dpc_sampler_kind k;
        size_t N, B, T, G;
        int secure;
        uint64_t sizes, sets;
    } cs[] = {
        {DPC_SAMPLER_POISSON, 1000000, 1000, 20000, 0, 0, 0x58c5342d3248514dull,
         0xb0ce99441e0fb12aull},
        {DPC_SAMPLER_POISSON, 100000, 10, 100000, 0, 0, 0xafb1400c56bee30bull,
         0xd51d509998ad113cull},
        {DPC_SAMPLER_POISSON, 60000, 1, 100000, 0, 1, 0xaac88bafc606d967ull,
         0x2df90be10c22acccull},
        {DPC_SAMPLER_CYCLIC_POISSON, 100003, 50, 50000, 4, 0, 0xd518e8f60fd8dbb8ull,
         0x114ee658b73cab11ull},
        {DPC_SAMPLER_POISSON, 10000000, 100000, 200, 0, 0, 0x052b2c9c3a3251b2ull,
         0xf79cfa6366f76778ull},
    };
    for (int c = 0; c < 5; c++) {
        dpc_rng rng;
        dpc_rng_seed(&rng, 1234 + (uint64_t)c);
        if (cs[c].secure) {
            memset(&rng, 0, sizeof rng);
            rng.mode = DPC_RNG_SECURE;
            for (int i = 0; i < 8; i++) rng.skey[i] = 0x2545F491u * (uint32_t)(i + 5);
        }
        dpc_sampler_config cfg = {cs[c].k, cs[c].N, cs[c].B, cs[c].T, cs[c].G};
        dpc_sampler *s = NULL;
        dpc_error e = {0};
        CHECK_OK(dpc_sampler_new(&s, &cfg, &rng, &e), &e);
        if (!s) continue;
        size_t *idx = malloc(dpc_sampler_max_batch(s) * sizeof *idx), cnt;
        uint64_t h = 0xcbf29ce484222325ull, hs = h;
        for (size_t t = 0; t < cs[c].T; t++) {
            CHECK_OK(dpc_sampler_batch(s, t, idx, &cnt, &e), &e);
            hs = fnv8(hs, cnt);
            h = fnv8(h, cnt);
            for (size_t j = 0; j < cnt; j++) h = fnv8(h, idx[j]);
        }
        CHECK(hs == cs[c].sizes && h == cs[c].sets,
              "case %d: sizes %016llx (recorded %016llx), sets %016llx (recorded %016llx)", c,
              (unsigned long long)hs, (unsigned long long)cs[c].sizes, (unsigned long long)h,
              (unsigned long long)cs[c].sets);
        free(idx);
        dpc_sampler_free(s);
    }
}

/* One Poisson-kind sampler over many steps: sorted, in range, no repeats; per-example
 * inclusion ~ Binomial(steps, q) (chi-square over the examples and the largest |z|); batch
 * size ~ Binomial(n, q) exactly (chi-square against the pmf, tails pooled to >= 20 expected);
 * independence: co-inclusion of an example at steps t and t + lag (lags 1, 2, 7), and of
 * examples i and i + 1 in one step, each within 4.5 sd of its count under independence.
 * Fixed seeds; each check's false-failure rate under a correct sampler is about 1e-4 or below
 * (the chi-square checks at the upper 1e-4 quantile, |z| < 4.5 at 7e-6, the max over n
 * examples at n 6.8e-7). */
typedef struct stat_case {
    dpc_sampler_kind kind;
    size_t N, B, steps, G;
} stat_case;

static void poisson_stats(const stat_case *sc, uint64_t seed)
{
    size_t G = sc->G ? sc->G : 1, n = sc->N / G, T = sc->steps;
    dpc_sampler *s = mk(sc->kind, sc->N, sc->B, T, sc->G, seed);
    if (!s) return;
    double q = (double)sc->B / (double)n;
    size_t cap = dpc_sampler_max_batch(s), cnt;
    size_t *idx = malloc(cap * sizeof *idx), *hits = calloc(sc->N, sizeof *hits);
    size_t *last = calloc(sc->N, sizeof *last), co[3] = {0, 0, 0}, adj = 0, adj_pairs = 0;
    size_t *sizes = calloc(n + 1, sizeof *sizes), *group_of = malloc(sc->N * sizeof *group_of);
    const size_t lags[3] = {1, 2, 7};
    unsigned char *in = calloc(sc->N, 1);
    /* the steps an example was in, as a bit history of the last 8 steps of its group */
    unsigned *histv = calloc(sc->N, sizeof *histv);
    int sorted = 1, range = 1;
    dpc_error err = {0};
    for (size_t i = 0; i < sc->N; i++) group_of[i] = SIZE_MAX;
    for (size_t t = 0; t < T; t++) {
        CHECK_OK(dpc_sampler_batch(s, t, idx, &cnt, &err), &err);
        sizes[cnt <= n ? cnt : n]++;
        for (size_t j = 0; j < cnt; j++) {
            if (idx[j] >= sc->N) {
                range = 0;
                continue;
            }
            if (j && idx[j] <= idx[j - 1]) sorted = 0;
            size_t ex = idx[j];
            hits[ex]++;
            in[ex] = 1;
            if (group_of[ex] == SIZE_MAX) group_of[ex] = t % G;
            if (group_of[ex] != t % G) range = 0;
            /* histv bit k: in at this group's step k + 1 rounds ago */
            size_t rounds = (t - last[ex]) / G; /* >= 1 after the first hit */
            unsigned h = 0;
            if (hits[ex] > 1 && rounds >= 1 && rounds < 32)
                h = (histv[ex] << rounds) | (1u << (rounds - 1));
            for (int l = 0; l < 3; l++) co[l] += (h >> (lags[l] - 1)) & 1;
            histv[ex] = h;
            last[ex] = t;
        }
        /* adjacent members i, i + 1 of this step's population, both in (POISSON only) */
        if (sc->kind == DPC_SAMPLER_POISSON) {
            for (size_t j = 0; j + 1 < cnt; j++) adj += idx[j + 1] == idx[j] + 1;
            adj_pairs += n - 1;
        }
        for (size_t j = 0; j < cnt; j++)
            if (idx[j] < sc->N) in[idx[j]] = 0;
    }
    const char *kn = dpc_sampler_kind_name(sc->kind);
    CHECK(sorted && range, "%s N %zu B %zu: sorted %d, in range and group %d", kn, sc->N, sc->B,
          sorted, range);
    /* inclusion: each example of a used group ~ Binomial(opportunities, q) */
    double chi = 0, zmax = 0;
    size_t used = 0;
    for (size_t i = 0; i < sc->N; i++) {
        if (group_of[i] == SIZE_MAX && sc->G) continue; /* never drawn: leftover, or unlucky */
        size_t g = sc->G ? group_of[i] : 0, opp = T / G + (g < T % G);
        double e = opp * q, v = e * (1 - q), z = ((double)hits[i] - e) / sqrt(v);
        chi += z * z;
        if (fabs(z) > zmax) zmax = fabs(z);
        used++;
    }
    double zlim = sqrt(2 * log(used / 6.8e-7 / sqrt(2 * M_PI)) - log(2 * log(used / 6.8e-7)));
    CHECK(chi < chi2_quantile((double)used, 3.719),
          "%s N %zu B %zu: inclusion chi2 %.1f over %zu examples (limit %.1f)", kn, sc->N, sc->B,
          chi, used, chi2_quantile((double)used, 3.719));
    CHECK(zmax < zlim, "%s N %zu B %zu: largest inclusion |z| %.2f (limit %.2f)", kn, sc->N,
          sc->B, zmax, zlim);
    /* batch size against the exact pmf */
    long double *p = malloc((n + 1) * sizeof *p);
    binom_pmf(n, sc->B, 0, n + 1, p);
    double chs = 0, acc_o = 0, acc_e = 0;
    int bins = 0;
    for (size_t k = 0; k <= n; k++) {
        acc_o += (double)sizes[k];
        acc_e += (double)(p[k] * T);
        if (acc_e >= 20 || k == n) {
            if (acc_e > 0) chs += (acc_o - acc_e) * (acc_o - acc_e) / acc_e, bins++;
            acc_o = acc_e = 0;
        }
    }
    CHECK(bins >= 5 && chs < chi2_quantile(bins - 1, 3.719),
          "%s N %zu B %zu: batch-size chi2 %.1f over %d bins (limit %.1f)", kn, sc->N, sc->B, chs,
          bins, chi2_quantile(bins - 1, 3.719));
    /* independence across steps and within a step */
    for (int l = 0; l < 3; l++) {
        double pairs = (double)used * (double)(T / G > lags[l] ? T / G - lags[l] : 0);
        double e = pairs * q * q, z = ((double)co[l] - e) / sqrt(e * (1 - q * q));
        CHECK(fabs(z) < 4.5, "%s N %zu B %zu: co-inclusion at lag %zu: %zu vs %.1f (z %.2f)", kn,
              sc->N, sc->B, lags[l], co[l], e, z);
    }
    if (adj_pairs) {
        double e = (double)adj_pairs * q * q, z = ((double)adj - e) / sqrt(e * (1 - q * q));
        CHECK(fabs(z) < 4.5, "%s N %zu B %zu: neighbours in one batch %zu vs %.1f (z %.2f)", kn,
              sc->N, sc->B, adj, e, z);
    }
    free(p);
    free(idx);
    free(hits);
    free(last);
    free(sizes);
    free(group_of);
    free(in);
    free(histv);
    dpc_sampler_free(s);
}

static void test_poisson_stats(void)
{
    double sc = tests_scale();
    const stat_case cases[] = {
        {DPC_SAMPLER_POISSON, 500, 10, (size_t)(20000 * sc) + 2000, 0},   /* table, q = 0.02 */
        {DPC_SAMPLER_POISSON, 100000, 40, (size_t)(20000 * sc) + 2000, 0}, /* table, q 4e-4 */
        {DPC_SAMPLER_POISSON, 200, 40, (size_t)(5000 * sc) + 500, 0},     /* dense, q = 0.2 */
        {DPC_SAMPLER_POISSON, 64, 3, (size_t)(20000 * sc) + 2000, 0},     /* table, q = 0.047 */
        {DPC_SAMPLER_CYCLIC_POISSON, 4003, 10, (size_t)(40000 * sc) + 4000, 4}, /* table */
        {DPC_SAMPLER_CYCLIC_POISSON, 1000, 25, (size_t)(8000 * sc) + 800, 8},   /* dense */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) poisson_stats(&cases[c], 7 + c);
}

/* A batch is a pure function of (key, t): the steps asked for backwards, and twice, give the same
 * sets as forwards, for every kind; another seed gives other sets. */
static void test_pure(void)
{
    const stat_case cases[] = {{DPC_SAMPLER_POISSON, 5000, 20, 40, 0},
                               {DPC_SAMPLER_POISSON, 300, 100, 40, 0},
                               {DPC_SAMPLER_CYCLIC_POISSON, 5000, 20, 40, 3},
                               {DPC_SAMPLER_BALLS_IN_BINS, 5000, 250, 40, 0},
                               {DPC_SAMPLER_SHUFFLE, 5000, 250, 40, 0}};
    dpc_error err = {0};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const stat_case *k = &cases[c];
        dpc_sampler *s = mk(k->kind, k->N, k->B, k->steps, k->G, 21);
        dpc_sampler *o = mk(k->kind, k->N, k->B, k->steps, k->G, 22);
        if (!s || !o) continue;
        size_t cap = dpc_sampler_max_batch(s), T = k->steps;
        size_t *fw = malloc(T * cap * sizeof *fw), *fc = malloc(T * sizeof *fc);
        size_t *b = malloc(cap * sizeof *b), *ob = malloc(dpc_sampler_max_batch(o) * sizeof *ob);
        size_t cnt, ocnt, differ = 0;
        int same = 1;
        for (size_t t = 0; t < T; t++)
            CHECK_OK(dpc_sampler_batch(s, t, fw + t * cap, &fc[t], &err), &err);
        for (size_t r = 0; r < 2; r++)
            for (size_t t = T; t-- > 0;) {
                CHECK_OK(dpc_sampler_batch(s, t, b, &cnt, &err), &err);
                same &= cnt == fc[t] && !memcmp(b, fw + t * cap, cnt * sizeof *b);
            }
        for (size_t t = 0; t < T; t++) {
            CHECK_OK(dpc_sampler_batch(o, t, ob, &ocnt, &err), &err);
            differ += ocnt != fc[t] || memcmp(ob, fw + t * cap, ocnt * sizeof *ob);
        }
        CHECK(same, "%s: the same batches backwards and twice", dpc_sampler_kind_name(k->kind));
        CHECK(differ == T, "%s: another key gives other batches (%zu of %zu differ)",
              dpc_sampler_kind_name(k->kind), differ, T);
        free(fw);
        free(fc);
        free(b);
        free(ob);
        dpc_sampler_free(s);
        dpc_sampler_free(o);
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

/* The field table covers dpc_sampler_config, its defaults are a zeroed struct (the struct has
 * no _init: zero-initialise and fill), its kind names are the parser's, and the single-field
 * refusals of dpc_sampler_new go through it naming their field. */
static void test_field_table(void)
{
    dpc_error err = {0};
    const dpc_field_table *t = dpc_sampler_config_fields();
    CHECK(t && t->size == sizeof(dpc_sampler_config) && t->count == 5, "table of the struct");
    CHECK_OK(dpc_field_table_verify(t, &err), &err);
    CHECK(t->size == dpc_abi_sizeof("dpc_sampler_config"), "the table's size is the ABI's");
    dpc_sampler_config c, zero = {0};
    memset(&c, 0x5a, sizeof c);
    dpc_field_defaults(t, &c);
    CHECK(!memcmp(&c, &zero, sizeof c), "defaults: the zeroed struct");
    const dpc_field *kf = dpc_field_find(t, "kind", NULL);
    for (int k = 0; k <= DPC_SAMPLER_BALLS_IN_BINS; k++) {
        dpc_sampler_kind pk;
        CHECK(dpc_sampler_kind_parse(dpc_field_enum_name(kf, k), &pk, &err) == DPC_OK &&
                  (int)pk == k, "kind name %d is the parser's", k);
    }
    dpc_rng rng;
    dpc_rng_seed(&rng, 1);
    dpc_sampler *s = NULL;
    dpc_sampler_config bad[] = {{(dpc_sampler_kind)5, 10, 2, 5, 0},
                                {DPC_SAMPLER_AUTO, 10, 2, 5, 0},
                                {(dpc_sampler_kind)-1, 10, 2, 5, 0},
                                {DPC_SAMPLER_SHUFFLE, 10, 2, 0, 0}};
    const char *field[] = {"kind", "kind", "kind", "steps"};
    for (int i = 0; i < 4; i++)
        CHECK(dpc_sampler_new(&s, &bad[i], &rng, &err) == DPC_E_INVALID && !s &&
                  !strcmp(err.field, field[i]), "bad sampler %d names %s: '%s'", i, field[i],
              err.msg);
    dpc_sampler_config big = {DPC_SAMPLER_FIXED, ((size_t)1 << 48) + 1, 2, 5, 0};
    CHECK(dpc_sampler_new(&s, &big, &rng, &err) == DPC_E_RANGE && !s &&
              !strcmp(err.field, "n_examples"), "N beyond 2^48 keeps its status");
}

int main(void)
{
    test_field_table();
    test_permutation_definition();
    test_fixed_shuffle();
    test_poisson();
    test_draw_definition();
    test_size_table_exact();
    test_size_table();
    test_exact_draw();
    test_exact_deep();
    test_draw_counts();
    test_scheme2_golden();
    test_poisson_stats();
    test_pure();
    test_cyclic_poisson();
    test_opportunities();
    test_balls_in_bins();
    test_invalid();
    return TEST_SUMMARY();
}
