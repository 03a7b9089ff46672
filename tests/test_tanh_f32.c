/* test_tanh_f32.c — the float32 path's tanh (model/tanh_f32.h) against libm: every float in
 * [2^-13, 10] (all of the vector range and its edges: 136 million) at every level this CPU
 * runs equals (float)tanh((double)x) bit for bit; negative inputs, zeros, subnormals, the
 * range ends, huge values, infinities and NaN; random bit patterns over all exponents; every
 * tail length; and the premise of the guard: y' within 2^-44 (relative) of the long double
 * tanh on a dense sample, where the guard needs 2^-40. */
#include "dpcorr/isa.h"
#include "harness.h"
#include "model/tanh_f32.h"

#include <float.h>
#include <stdint.h>
#include <string.h>

static const dpc_isa LEVELS[] = {DPC_ISA_SSE2, DPC_ISA_AVX2, DPC_ISA_AVX512};
#define N_LEVELS (sizeof LEVELS / sizeof LEVELS[0])

static float f_of(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

static uint32_t bits_of(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

static float ref(float x) { return (float)tanh((double)x); }

/* Same float, or both NaN. */
static int same(float a, float b) { return bits_of(a) == bits_of(b) || (isnan(a) && isnan(b)); }

/* Every float from lo to hi (bit patterns, step stride) at every level. */
static void sweep(float lo, float hi, uint32_t stride, const char *what)
{
    enum { C = 4096 };
    static float x[C], want[C], got[C];
    uint32_t b0 = bits_of(lo), b1 = bits_of(hi);
    size_t bad[N_LEVELS] = {0}, slow[N_LEVELS] = {0}, total = 0;
    for (uint64_t b = b0; b <= b1;) {
        size_t m = 0;
        for (; m < C && b <= b1; m++, b += stride) {
            x[m] = f_of((uint32_t)b);
            want[m] = ref(x[m]);
        }
        total += m;
        for (size_t k = 0; k < N_LEVELS; k++) {
            if (!dpc_isa_supported(LEVELS[k])) continue;
            memcpy(got, x, m * sizeof *x);
            slow[k] += dpc__tanh_f32(LEVELS[k], got, m);
            for (size_t i = 0; i < m; i++) bad[k] += !same(got[i], want[i]);
        }
    }
    for (size_t k = 0; k < N_LEVELS; k++) {
        if (!dpc_isa_supported(LEVELS[k])) continue;
        CHECK(bad[k] == 0, "%s at %s: %zu of %zu floats differ from (float)tanh((double)x)", what,
              dpc_isa_name(LEVELS[k]), bad[k], total);
        printf("  %s at %s: %zu floats, %zu to libm (the guard)\n", what, dpc_isa_name(LEVELS[k]),
               total, slow[k]);
    }
}

static void test_exhaustive(void)
{
    /* under sanitizers every 7th float (still 19 million) */
    uint32_t stride = tests_scale() < 1.0 ? 7 : 1;
    sweep(0x1p-13f, 10.0f, stride, "every float in [2^-13, 10]");
    sweep(-0x1p-13f, -10.0f, 61 * stride, "negative floats, every 61st"); /* bits grow with |x| */
}

static void test_special(void)
{
    const float xs[] = {0.0f, -0.0f, FLT_TRUE_MIN, -FLT_TRUE_MIN, FLT_MIN, 0x1.fffffcp-127f,
                        0x1p-12f, nextafterf(0x1p-12f, 0), nextafterf(0x1p-12f, 1), -0x1p-12f,
                        9.5f, nextafterf(9.5f, 0), nextafterf(9.5f, 20), -9.5f, 20.0f, 1e30f,
                        FLT_MAX, -FLT_MAX, INFINITY, -INFINITY, NAN, -NAN, 0.5f, -0.5f,
                        (float)(0.5 * M_LN2), 1.0f, 3.0f};
    size_t n = sizeof xs / sizeof xs[0];
    for (size_t k = 0; k < N_LEVELS; k++) {
        if (!dpc_isa_supported(LEVELS[k])) continue;
        float got[sizeof xs / sizeof xs[0]];
        memcpy(got, xs, sizeof got);
        dpc__tanh_f32(LEVELS[k], got, n);
        int bad = 0;
        for (size_t i = 0; i < n; i++)
            if (!same(got[i], ref(xs[i]))) {
                bad++;
                fprintf(stderr, "  %s: tanh(%a) = %a, libm %a\n", dpc_isa_name(LEVELS[k]),
                        (double)xs[i], (double)got[i], (double)ref(xs[i]));
            }
        CHECK(bad == 0, "%s: zeros (sign kept), subnormals, range ends, huge, inf, NaN", dpc_isa_name(LEVELS[k]));
        CHECK(signbit(got[1]) && got[1] == 0.0f, "%s: tanh(-0) = -0", dpc_isa_name(LEVELS[k]));
    }
}

/* Random bit patterns: every exponent, both signs, NaN payloads. */
static void test_random_bits(void)
{
    size_t n = (size_t)(tests_scale() * (1 << 22));
    float *x = malloc(n * sizeof *x), *got = malloc(n * sizeof *got);
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        x[i] = f_of((uint32_t)(s >> 32));
    }
    for (size_t k = 0; k < N_LEVELS; k++) {
        if (!dpc_isa_supported(LEVELS[k])) continue;
        memcpy(got, x, n * sizeof *x);
        dpc__tanh_f32(LEVELS[k], got, n);
        size_t bad = 0;
        for (size_t i = 0; i < n; i++) bad += !same(got[i], ref(x[i]));
        CHECK(bad == 0, "%s: %zu of %zu random bit patterns differ", dpc_isa_name(LEVELS[k]), bad,
              n);
    }
    free(x);
    free(got);
}

/* Lengths 0..19 at offsets 0..3: the padded tail writes nothing beyond n. */
static void test_tails(void)
{
    float x[32], got[32];
    for (int i = 0; i < 32; i++) x[i] = (float)(i - 13) * 0.37f;
    int bad = 0;
    for (size_t k = 0; k < N_LEVELS; k++) {
        if (!dpc_isa_supported(LEVELS[k])) continue;
        for (size_t off = 0; off < 4; off++)
            for (size_t n = 0; n < 20; n++) {
                memcpy(got, x, sizeof got);
                dpc__tanh_f32(LEVELS[k], got + off, n);
                for (size_t i = 0; i < 32; i++) {
                    int inside = i >= off && i < off + n;
                    bad += !same(got[i], inside ? ref(x[i]) : x[i]);
                }
            }
    }
    CHECK(bad == 0, "every length and offset: the n values and nothing else (%d wrong)", bad);
}

/* The premise: |y' - tanh| <= 2^-44 tanh on [2^-12, 9.5), tanh in long double (64-bit
 * significand, a few ulps: 2^-60); every 17th float (every 101st under sanitizers). The guard
 * assumes 2^-40. */
static void test_premise(void)
{
    enum { C = 4096 };
    static float x[C];
    static double y[C];
    uint32_t stride = tests_scale() < 1.0 ? 101 : 17;
    uint32_t b0 = bits_of(0x1p-12f), b1 = bits_of(nextafterf(9.5f, 0));
    for (size_t k = 0; k < N_LEVELS; k++) {
        if (!dpc_isa_supported(LEVELS[k])) continue;
        double worst = 0;
        size_t total = 0;
        for (uint64_t b = b0; b <= b1;) {
            size_t m = 0;
            for (; m < C && b <= b1; m++, b += stride) x[m] = f_of((uint32_t)b);
            dpc__tanh_f32_approx(LEVELS[k], x, y, m);
            for (size_t i = 0; i < m; i++) {
                long double t = tanhl((long double)x[i]);
                double rel = (double)(fabsl((long double)y[i] - t) / t);
                if (!(rel <= worst)) worst = rel; /* NaN makes it NaN */
            }
            total += m;
        }
        CHECK(worst <= 0x1p-44, "%s: y' within 2^-44 of tanh (worst %.3g = 2^%.1f, %zu floats)",
              dpc_isa_name(LEVELS[k]), worst, log2(worst), total);
        printf("  premise at %s: worst relative error of y' %.3g (2^%.1f) over %zu floats\n",
               dpc_isa_name(LEVELS[k]), worst, log2(worst), total);
    }
}

/* The levels compute the same y' (the same IEEE operations in the same order). */
static void test_levels_agree(void)
{
    enum { N = 1 << 16 };
    static float x[N];
    static double y0[N], y1[N];
    for (int i = 0; i < N; i++) x[i] = (float)(0x1p-12 + (9.5 - 0x1p-12) * i / N);
    dpc__tanh_f32_approx(DPC_ISA_SSE2, x, y0, N);
    for (size_t k = 1; k < N_LEVELS; k++) {
        if (!dpc_isa_supported(LEVELS[k])) continue;
        dpc__tanh_f32_approx(LEVELS[k], x, y1, N);
        CHECK(memcmp(y0, y1, sizeof y0) == 0, "%s computes the baseline's y' bit for bit",
              dpc_isa_name(LEVELS[k]));
    }
}

int main(void)
{
    test_special();
    test_tails();
    test_levels_agree();
    test_random_bits();
    test_premise();
    test_exhaustive();
    return TEST_SUMMARY();
}
