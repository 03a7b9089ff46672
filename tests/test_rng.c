/* test_rng.c — Philox known answers, sampler known answers (independent Python implementation,
 * tests/gen/rng_golden.py), purity/replay, bulk-vs-scalar parity, ziggurat table invariants,
 * moments, a binned goodness-of-fit test, tail frequency, stream independence, uniform/below. */
#include "dpcorr/rng.h"
#include "harness.h"
#include "rng/ziggurat.h"

#include <stdlib.h>
#include <string.h>

static void test_philox_kat(void)
{
    /* Random123 kat_vectors, "philox4x32 10" lines: ctr[4] key[2] -> out[4]. */
    static const uint32_t kat[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d,
         0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09,
         0x94fdcceb, 0x5001e420, 0x24126ea1},
    };
    for (int v = 0; v < 3; v++) {
        uint32_t out[4];
        dpc_philox4x32_10(out, kat[v], kat[v] + 4);
        for (int j = 0; j < 4; j++)
            CHECK(out[j] == kat[v][6 + j], "philox KAT %d word %d: %08x vs %08x", v, j, out[j],
                  kat[v][6 + j]);
    }
}

static void test_known_answers(void)
{
    dpc_rng rng;
    dpc_rng_seed(&rng, 42);
    CHECK(rng.key[0] == 0x2feb6e95u && rng.key[1] == 0xbdd73226u, "root key of seed 42");
    CHECK(rng.mode == DPC_RNG_SEEDED && rng.seed == 42, "seeded mode recorded");
    dpc_rng_stream s = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_NOISE, 0));
    CHECK(s.key[0] == 0x64857b6bu && s.key[1] == 0x37711fd7u, "noise stream key");
    struct { uint64_t row, idx; double z; } g[] = {
        {0, 0, 0x1.28886b97ccca9p+0},          {0, 1, -0x1.89386e353a96fp-1},
        {0, 2, 0x1.544c4a78c07eep+0},          {7, 5, 0x1.afb68639b7be7p-1},
        {123456789012ull, 3, -0x1.039e41032e675p-1},
        {5, (1ull << 40) + 17, 0x1.c30c4e33ac5afp-1},
        {0, 62, -0x1.a2cd825640f15p-1}, /* first wedge rejection path in row 0 */
        {0, 3072, 0x1.ec2e75063db39p+1}, /* first tail path in row 0 */
    };
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
        double z = dpc_rng_gaussian(&s, g[i].row, g[i].idx);
        CHECK(z == g[i].z, "gauss(row %llu, index %llu) = %a, expected %a",
              (unsigned long long)g[i].row, (unsigned long long)g[i].idx, z, g[i].z);
    }
    CHECK(dpc_rng_word(&s, 3, 4, 0) == 0x783907efda9db8a2ull, "word known answer");
}

static void test_tables(void)
{
    /* Every layer has area V: X[i] * (f(X[i+1]) - f(X[i])) = V, base: X[0] f(r) = V. */
    const double *X = dpc__zig_x;
    double v = dpc__zig_v, maxrel = 0;
    CHECK_NEAR_REL(X[0] * exp(-0.5 * X[1] * X[1]), v, 1e-14, "base layer area");
    for (int i = 1; i < 256; i++) {
        double a = X[i] * (exp(-0.5 * X[i + 1] * X[i + 1]) - exp(-0.5 * X[i] * X[i]));
        double rel = fabs(a - v) / v;
        if (rel > maxrel) maxrel = rel;
    }
    CHECK(maxrel < 1e-12, "layer areas equal V (max rel dev %g)", maxrel);
    /* V = r f(r) + int_r^inf f  (erfc) */
    double r = dpc__zig_r;
    CHECK_NEAR_REL(r * exp(-0.5 * r * r) + sqrt(M_PI / 2) * erfc(r / sqrt(2.0)), v, 1e-13,
                   "V identity");
    CHECK(X[256] == 0.0 && X[1] == r, "table ends");
}

static void test_purity_and_parity(void)
{
    dpc_rng rng;
    dpc_rng_seed(&rng, 7);
    dpc_rng_stream s = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_TEST, 1));
    enum { N = 5003 };
    double *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    int bad = 0;
    for (uint64_t off = 0; off < 4; off++) {
        for (size_t len = 0; len < 40; len++) {
            dpc_rng_gaussian_fill(&s, 11, off + 1000, a, len);
            dpc_rng_gaussian_fill_naive(&s, 11, off + 1000, b, len);
            for (size_t i = 0; i < len; i++) bad += a[i] != b[i];
        }
    }
    dpc_rng_gaussian_fill(&s, 3, 1, a, N);
    dpc_rng_gaussian_fill_naive(&s, 3, 1, b, N);
    for (size_t i = 0; i < N; i++) bad += a[i] != b[i];
    CHECK(bad == 0, "bulk fill equals scalar sampler bit for bit (%d mismatches)", bad);
    /* Split across "threads": two halves generated independently equal the whole. */
    dpc_rng_gaussian_fill(&s, 9, 0, a, N);
    dpc_rng_gaussian_fill(&s, 9, 0, b, 2501);
    dpc_rng_gaussian_fill(&s, 9, 2501, b + 2501, N - 2501);
    bad = 0;
    for (size_t i = 0; i < N; i++) bad += a[i] != b[i];
    CHECK(bad == 0, "split generation identical (%d mismatches)", bad);
    /* Replay: a second call returns the same values; a copied generator too. */
    dpc_rng copy = rng;
    dpc_rng_stream s2 = dpc_rng_stream_derive(&copy, DPC_STREAM_ID(DPC_STREAM_TEST, 1));
    CHECK(dpc_rng_gaussian(&s2, 9, 77) == a[77], "replay from a copied root");
    free(a);
    free(b);
}

/* Standard normal CDF. */
static double Phi(double x) { return 0.5 * erfc(-x / sqrt(2.0)); }

/* A secure-mode root with a fixed key (tests only: real secure roots come from the OS). */
static dpc_rng fixed_secure_root(void)
{
    dpc_rng r;
    memset(&r, 0, sizeof r);
    r.mode = DPC_RNG_SECURE;
    for (int i = 0; i < 8; i++) r.skey[i] = 0x01010101u * (uint32_t)(4 * i) + 0x03020100u;
    return r;
}

static void test_distribution_of(const dpc_rng *root)
{
    const dpc_rng rng = *root;
    dpc_rng_stream s = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_TEST, 2));
    size_t n = (size_t)(4e6 * tests_scale());
    size_t rows = 8, per = n / rows;
    double *z = malloc(per * sizeof *z);
    /* moments */
    double m1 = 0, m2 = 0, m3 = 0, m4 = 0;
    /* binned GOF: 100 bins on [-5, 5) by width 0.1, plus two tail bins */
    enum { NB = 102 };
    double cnt[NB] = {0};
    size_t beyond_r = 0;
    for (size_t r = 0; r < rows; r++) {
        dpc_rng_gaussian_fill(&s, r, 0, z, per);
        for (size_t i = 0; i < per; i++) {
            double x = z[i];
            m1 += x;
            m2 += x * x;
            m3 += x * x * x;
            m4 += x * x * x * x;
            int b = x < -5 ? 0 : x >= 5 ? NB - 1 : 1 + (int)floor((x + 5) / 0.1);
            if (b > NB - 2 && x < 5) b = NB - 2;
            cnt[b]++;
            if (fabs(x) >= dpc__zig_r) beyond_r++;
        }
    }
    double N = (double)(per * rows);
    m1 /= N; m2 /= N; m3 /= N; m4 /= N;
    /* standard errors: mean 1/sqrt(N), var sqrt(2/N), skew ~ sqrt(15/N), kurt ~ sqrt(96/N) */
    CHECK(fabs(m1) < 5 / sqrt(N), "mean %g", m1);
    CHECK(fabs(m2 - 1) < 5 * sqrt(2 / N), "variance %g", m2);
    CHECK(fabs(m3) < 5 * sqrt(15 / N), "third moment %g", m3);
    CHECK(fabs(m4 - 3) < 5 * sqrt(96 / N), "fourth moment %g", m4);
    double chi2 = 0;
    int df = 0;
    for (int b = 0; b < NB; b++) {
        double lo = b == 0 ? -INFINITY : -5 + 0.1 * (b - 1);
        double hi = b == NB - 1 ? INFINITY : -5 + 0.1 * b;
        double p = (b == 0 ? Phi(-5) : b == NB - 1 ? Phi(-5) : Phi(hi) - Phi(lo));
        double e = p * N;
        if (e < 5) continue; /* skip bins too sparse for the chi-square approximation */
        chi2 += (cnt[b] - e) * (cnt[b] - e) / e;
        df++;
    }
    /* df-1 degrees of freedom; threshold ~ chi2 quantile at 1 - 1e-7 (tests/gen: scipy). */
    double crit = (df - 1) + 7.0 * sqrt(2.0 * (df - 1)); /* ~190 for df = 99 */
    CHECK(chi2 < crit, "binned chi-square %g over %d bins (crit %g)", chi2, df, crit);
    CHECK(chi2 > 0.3 * (df - 1), "chi-square suspiciously small: %g", chi2);
    /* tail branch frequency: P(|Z| >= r) = 2 Phi(-r) */
    double pt = 2 * Phi(-dpc__zig_r), et = pt * N;
    CHECK(fabs((double)beyond_r - et) < 5 * sqrt(et), "tail count %zu vs %g", beyond_r, et);
    free(z);
}

static void test_distribution(void)
{
    dpc_rng rng;
    dpc_rng_seed(&rng, 2024);
    test_distribution_of(&rng);
    dpc_rng sec = fixed_secure_root(); /* the same samplers over ChaCha20 words */
    test_distribution_of(&sec);
}

static void test_tail_shape(void)
{
    /* Conditional law beyond r: P(|Z| > r + 0.5 | |Z| > r). Sample only tail-path indices. */
    dpc_rng rng;
    dpc_rng_seed(&rng, 99);
    dpc_rng_stream s = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_TEST, 3));
    size_t n = (size_t)(2e6 * (tests_scale() < 0.5 ? 0.5 : 1.0)), tail = 0, far = 0;
    double r = dpc__zig_r, maxabs = 0;
    for (size_t i = 0; i < n; i++) {
        double z = dpc_rng_gaussian(&s, 1, i);
        if (fabs(z) > maxabs) maxabs = fabs(z);
        if (fabs(z) > r) {
            tail++;
            if (fabs(z) > r + 0.5) far++;
        }
    }
    double p = Phi(-(r + 0.5)) / Phi(-r);
    double e = p * (double)tail, sd = sqrt((double)tail * p * (1 - p));
    CHECK(tail > 100, "enough tail samples (%zu)", tail);
    CHECK(fabs((double)far - e) < 5 * sd + 1, "tail shape: %zu beyond r+0.5 vs %g", far, e);
    CHECK(maxabs < 7.5, "max |z| %g plausible for %zu draws", maxabs, n);
}

static void test_streams(void)
{
    dpc_rng rng;
    dpc_rng_seed(&rng, 5);
    dpc_rng_stream a = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_NOISE, 0));
    dpc_rng_stream b = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_NOISE, 1));
    dpc_rng_stream c = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_SAMPLER, 0));
    CHECK(a.key[0] != b.key[0] || a.key[1] != b.key[1], "distinct stream keys");
    size_t n = (size_t)(1e6 * tests_scale());
    double sab = 0, sac = 0, sa_shift = 0;
    for (size_t i = 0; i < n; i++) {
        double za = dpc_rng_gaussian(&a, 0, i), zb = dpc_rng_gaussian(&b, 0, i);
        double zc = dpc_rng_gaussian(&c, 0, i), za1 = dpc_rng_gaussian(&a, 1, i);
        sab += za * zb;
        sac += za * zc;
        sa_shift += za * za1; /* neighbouring rows of one stream */
    }
    double se = 1 / sqrt((double)n);
    CHECK(fabs(sab / (double)n) < 5 * se, "corr(noise0, noise1) %g", sab / (double)n);
    CHECK(fabs(sac / (double)n) < 5 * se, "corr(noise, sampler) %g", sac / (double)n);
    CHECK(fabs(sa_shift / (double)n) < 5 * se, "corr(row0, row1) %g", sa_shift / (double)n);
    /* Another seed gives other values; same seed same values. */
    dpc_rng r2;
    dpc_rng_seed(&r2, 6);
    dpc_rng_stream a2 = dpc_rng_stream_derive(&r2, DPC_STREAM_ID(DPC_STREAM_NOISE, 0));
    CHECK(dpc_rng_gaussian(&a2, 0, 0) != dpc_rng_gaussian(&a, 0, 0), "seed changes values");
}

static void test_uniform_below(void)
{
    dpc_rng rng;
    dpc_rng_seed(&rng, 11);
    dpc_rng_stream s = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_TEST, 4));
    size_t n = (size_t)(1e6 * tests_scale());
    double sum = 0, mn = 1, mx = 0;
    size_t counts[7] = {0};
    for (size_t i = 0; i < n; i++) {
        double u = dpc_rng_uniform(&s, 0, i);
        sum += u;
        if (u < mn) mn = u;
        if (u > mx) mx = u;
        uint64_t k = dpc_rng_below(&s, 1, i, 7);
        if (k < 7) counts[k]++;
    }
    CHECK(mn >= 0 && mx < 1, "uniform in [0,1): [%g, %g]", mn, mx);
    CHECK(fabs(sum / (double)n - 0.5) < 5 * sqrt(1.0 / 12 / (double)n), "uniform mean");
    double chi2 = 0, e = (double)n / 7;
    size_t tot = 0;
    for (int k = 0; k < 7; k++) {
        chi2 += (counts[k] - e) * (counts[k] - e) / e;
        tot += counts[k];
    }
    CHECK(tot == n, "below(7) always < 7");
    CHECK(chi2 < 40, "below(7) chi-square %g (6 df)", chi2);
    CHECK(dpc_rng_below(&s, 0, 0, 1) == 0, "below(1) == 0");
}

/* dpc_rng_word_fill against word-by-word dpc_rng_word (its naive twin): both modes, every
 * start alignment within a block, lengths crossing blocks, counters near the 2^32 block wrap
 * (index bits above the block counter move into the nonce / ctr[3]), attempts > 0. */
static void test_word_fill(void)
{
    dpc_rng seeded, secure;
    dpc_rng_seed(&seeded, 12);
    memset(&secure, 0, sizeof secure);
    secure.mode = DPC_RNG_SECURE;
    for (int i = 0; i < 8; i++) secure.skey[i] = 0x01234567u * (uint32_t)(i + 3);
    const dpc_rng *roots[2] = {&seeded, &secure};
    static const uint64_t bases[4] = {0, 1000, ((uint64_t)1 << 33) - 9, ((uint64_t)1 << 35) - 13};
    /* short runs (the reference alone) and runs through the level kernels at attempt 0: their
     * bulk (16 Philox words, 64 or 128 ChaCha20 words), pieces of 512, the pair counter's
     * wrap at index 2^33 */
    static const size_t sizes[] = {0, 7, 14, 21, 28, 35, 42, 49, 56, 63, 70, 127, 128, 129,
                                   255, 256, 300, 513, 1031, 2049};
    static uint64_t out[2049 + 1];
    size_t bad = 0, tried = 0;
    for (int r = 0; r < 2; r++) {
        dpc_rng_stream s = dpc_rng_stream_derive(roots[r], DPC_STREAM_ID(DPC_STREAM_TEST, 9));
        for (int b = 0; b < 4; b++)
            for (uint64_t off = 0; off < 8; off++)
                for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++)
                    for (uint32_t a = 0; a < 3; a += 2) {
                        size_t n = sizes[z];
                        uint64_t index0 = bases[b] + off, row = 77 + (uint64_t)b;
                        out[n] = 0xDEADBEEFu; /* the word past the end stays untouched */
                        dpc_rng_word_fill(&s, row, index0, a, out, n);
                        for (size_t i = 0; i < n; i++)
                            bad += out[i] != dpc_rng_word(&s, row, index0 + i, a);
                        bad += out[n] != 0xDEADBEEFu;
                        tried++;
                    }
    }
    CHECK(bad == 0, "dpc_rng_word_fill differs from dpc_rng_word in %zu places (%zu fills)", bad,
          tried);
}

/* RFC 8439 known answers: the quarter round of section 2.1.1 and the block of section 2.3.2. */
static void test_chacha_kat(void)
{
    uint32_t q[4] = {0x11111111u, 0x01020304u, 0x9b8d6f43u, 0x01234567u};
    dpc_chacha20_quarter_round(q);
    CHECK(q[0] == 0xea2a92f4u && q[1] == 0xcb1cf8ceu && q[2] == 0x4581472eu &&
              q[3] == 0x5881c4bbu,
          "chacha quarter round KAT");
    uint32_t key[8], out[16];
    for (int i = 0; i < 8; i++) key[i] = 0x01010101u * (uint32_t)(4 * i) + 0x03020100u;
    const uint32_t nonce[3] = {0x09000000u, 0x4a000000u, 0x00000000u};
    static const uint32_t want[16] = {0xe4e7f110u, 0x15593bd1u, 0x1fdd0f50u, 0xc47120a3u,
                                      0xc7f4d1c7u, 0x0368c033u, 0x9aaa2204u, 0x4e6cd4c3u,
                                      0x466482d2u, 0x09aa9f07u, 0x05d7c214u, 0xa2028bd9u,
                                      0xd19c12b5u, 0xb94e16deu, 0xe883d0cbu, 0x4e3c50a2u};
    dpc_chacha20_block(out, key, 1, nonce);
    for (int i = 0; i < 16; i++)
        CHECK(out[i] == want[i], "chacha block KAT word %d: %08x vs %08x", i, out[i], want[i]);
}

/* Secure streams: the documented layout, recomputed from the block function; purity; the bulk
 * fill equal to the scalar sampler at every alignment; independence from seeded mode. */
static void test_secure_layout(void)
{
    dpc_rng root = fixed_secure_root();
    uint64_t id = DPC_STREAM_ID(DPC_STREAM_NOISE, 3);
    dpc_rng_stream s = dpc_rng_stream_derive(&root, id);
    uint32_t o[16];
    const uint32_t sn[3] = {(uint32_t)id, (uint32_t)(id >> 32), 0x5354524Du};
    dpc_chacha20_block(o, root.skey, 0, sn);
    CHECK(s.secure == 1 && memcmp(s.skey, o, sizeof s.skey) == 0, "stream key = block of root");
    const uint64_t rows[3] = {0, 7, (1ull << 40) + 5};
    const uint64_t idx[4] = {0, 13, (1ull << 33) + 9, (1ull << 36) + 2};
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 4; b++)
            for (uint32_t at = 0; at < 3; at++) {
                uint64_t row = rows[a], index = idx[b];
                const uint32_t nonce[3] = {(uint32_t)row, (uint32_t)(row >> 32),
                                           (uint32_t)(((index >> 35) & 0xFFFFu) << 16) | at};
                dpc_chacha20_block(o, s.skey, (uint32_t)(index >> 3), nonce);
                unsigned j = (unsigned)(index & 7);
                uint64_t want = (uint64_t)o[2 * j + 1] << 32 | o[2 * j];
                CHECK(dpc_rng_word(&s, row, index, at) == want,
                      "secure word (row %llu, index %llu, attempt %u)", (unsigned long long)row,
                      (unsigned long long)index, at);
            }
    size_t n = 20011;
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    int bad = 0;
    const uint64_t starts[4] = {0, 1, 5, 8};
    for (int k = 0; k < 4; k++) {
        dpc_rng_gaussian_fill(&s, 3, starts[k], a, n);
        dpc_rng_gaussian_fill_naive(&s, 3, starts[k], b, n);
        for (size_t i = 0; i < n; i++) bad += memcmp(&a[i], &b[i], sizeof a[i]) != 0;
    }
    CHECK(bad == 0, "secure bulk fill equals the scalar sampler (%d mismatches)", bad);
    for (size_t len = 1; len < 20; len++) { /* short runs at every offset */
        dpc_rng_gaussian_fill(&s, 1, 3, a, len);
        for (size_t i = 0; i < len; i++) bad += a[i] != dpc_rng_gaussian(&s, 1, 3 + i);
    }
    CHECK(bad == 0, "secure short fills (%d mismatches)", bad);
    dpc_rng seeded;
    dpc_rng_seed(&seeded, 0);
    dpc_rng_stream t = dpc_rng_stream_derive(&seeded, id);
    CHECK(t.secure == 0 && dpc_rng_word(&t, 0, 0, 0) != dpc_rng_word(&s, 0, 0, 0),
          "seeded and secure streams differ");
    free(a);
    free(b);
}

static void test_secure(void)
{
    dpc_rng a, b;
    dpc_error err = {0};
    CHECK_OK(dpc_rng_seed_os(&a, &err), &err);
    CHECK_OK(dpc_rng_seed_os(&b, &err), &err);
    CHECK(a.mode == DPC_RNG_SECURE && a.seed == 0, "secure mode recorded");
    CHECK(a.key[0] != b.key[0] || a.key[1] != b.key[1], "two OS keys differ");
    CHECK(memcmp(a.skey, b.skey, sizeof a.skey) != 0, "two OS ChaCha20 keys differ");
    dpc_rng_stream s = dpc_rng_stream_derive(&a, DPC_STREAM_ID(DPC_STREAM_NOISE, 0));
    CHECK(s.secure == 1, "secure root derives secure streams");
    CHECK(strcmp(dpc_rng_mode_name(a.mode), "secure") == 0, "mode name");
}

int main(void)
{
    test_philox_kat();
    test_known_answers();
    test_tables();
    test_purity_and_parity();
    test_distribution();
    test_tail_shape();
    test_streams();
    test_uniform_below();
    test_word_fill();
    test_chacha_kat();
    test_secure_layout();
    test_secure();
    return TEST_SUMMARY();
}
