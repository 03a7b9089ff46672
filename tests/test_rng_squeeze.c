/* test_rng_squeeze.c — the exp-free squeeze of the ziggurat's wedge test (gauss.c) against the
 * reference test with libm's exp: the premises of the proof (exponent range, polynomial error),
 * then brute force — random wedge samples, and samples constructed at the decision boundary
 * by bisection — for the scalar squeeze and the AVX2 and AVX-512 kernels' vector squeezes. A
 * squeeze may abstain (-1) but must never decide differently from dpc__gauss_wedge. */
#include "dpcorr/isa.h"
#include "dpcorr/rng.h"
#include "harness.h"
#include "rng/gauss_impl.h"
#include "rng/ziggurat.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static uint64_t splitmix(uint64_t *s)
{
    uint64_t x = (*s += 0x9E3779B97F4A7C15ull);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* u of word w, exactly as the sampler derives it. */
static double u_of(uint64_t w) { return ((double)(w >> 11) + 0.5) * 0x1.0p-52 - 1.0; }

/* A word of layer i (>= 1) whose fast test fails: a wedge sample. */
static uint64_t wedge_word(uint64_t *seed, unsigned i)
{
    for (;;) {
        uint64_t w = (splitmix(seed) & ~(uint64_t)255) | i;
        if (!(fabs(u_of(w)) < dpc__zig_ratio[i])) return w;
    }
}

/* The proof's premises: |e| <= 0.73 < DPC__SQZ_EMAX on every wedge layer, and the Taylor
 * polynomial (the committed coefficients, Horner) within d = 1.3e-12 of exp on [-0.8, 0.8]. */
static void test_premises(void)
{
    double emax = 0;
    for (int i = 1; i < 256; i++) {
        double xi = dpc__zig_x[i], xn = dpc__zig_x[i + 1];
        double e = 0.5 * (xi * xi - xn * xn);
        if (e > emax) emax = e;
    }
    CHECK(emax <= 0.73 && emax < DPC__SQZ_EMAX, "wedge exponents within 0.73 (max %.6f)", emax);
    double worst = 0;
    for (int k = -8000; k <= 8000; k++) {
        double e = k * 1e-4, p = dpc__sqz_taylor[13];
        for (int j = 12; j >= 0; j--) p = p * e + dpc__sqz_taylor[j];
        double err = fabs(p - exp(e));
        if (err > worst) worst = err;
    }
    CHECK(worst < 1.3e-12, "Taylor polynomial within 1.3e-12 of exp on [-0.8, 0.8] (max %.3g)",
          worst);
    double fact = 1, dev = 0;
    for (int k = 0; k < 14; k++) {
        if (k) fact *= k; /* exact: 13! < 2^53 */
        dev = fmax(dev, fabs(dpc__sqz_taylor[k] * fact - 1));
    }
    CHECK(dev <= 0x1.0p-52, "coefficients are 1/k! to the last bit (max rel dev %g)", dev);
}

/* Random wedge samples: the squeeze agrees whenever it decides, and almost always decides. */
static void test_random(void)
{
    uint64_t seed = 2024;
    size_t n = (size_t)(400000 * tests_scale()), bad = 0, abstain = 0;
    for (size_t k = 0; k < n; k++) {
        unsigned i = 1 + (unsigned)(splitmix(&seed) % 255);
        uint64_t w = wedge_word(&seed, i), wn = splitmix(&seed);
        double x0, x1;
        int ref = dpc__gauss_wedge(i, u_of(w), wn, &x0);
        int sq = dpc__gauss_wedge_squeeze(i, u_of(w), wn, &x1);
        if (sq < 0)
            abstain++;
        else if (sq != ref || (ref && x0 != x1))
            bad++;
    }
    CHECK(bad == 0, "squeeze equals the exact wedge test on %zu random samples (%zu differ)", n,
          bad);
    CHECK(abstain <= n / 100000 + 2, "squeeze abstains rarely (%zu of %zu)", abstain, n);
}

/* The smallest q in [0, 2^53) whose uniform (q << 11) the exact test accepts (acceptance is
 * monotone in v: the test expression decreases with it), or 2^53 if none. */
static uint64_t boundary(unsigned i, double u)
{
    double x;
    uint64_t lo = 0, hi = (uint64_t)1 << 53; /* accept(hi) taken as true */
    if (dpc__gauss_wedge(i, u, 0, &x)) return 0;
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (dpc__gauss_wedge(i, u, mid << 11, &x))
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

/* Samples at and around the boundary of every layer: no squeeze may decide wrongly there (it
 * must abstain in the band) and it must decide far from it. */
static void test_boundary(void)
{
    static const int64_t offs[] = {-(1ll << 40), -(1ll << 32), -(1ll << 28), -(1ll << 24), -4096,
                                   -64, -3, -1, 0, 1, 2, 64, 4096, 1ll << 24, 1ll << 28,
                                   1ll << 32, 1ll << 40};
    enum { NO = sizeof offs / sizeof offs[0], PER = 4, NMAX = 255 * PER * NO + 8 };
    uint64_t *w = malloc(NMAX * sizeof *w), *wn = malloc(NMAX * sizeof *wn);
    signed char *dec = malloc(NMAX);
    int *ref = malloc(NMAX * sizeof *ref);
    uint64_t seed = 77;
    size_t n = 0, bad = 0, abstain_near = 0, decided_far = 0, far = 0;
    for (unsigned i = 1; i < 256; i++)
        for (int r = 0; r < PER; r++) {
            uint64_t wi = wedge_word(&seed, i);
            uint64_t q = boundary(i, u_of(wi));
            for (int o = 0; o < NO; o++) {
                int64_t qq = (int64_t)q + offs[o];
                if (qq < 0 || qq >= (int64_t)1 << 53) continue;
                double x0, x1;
                w[n] = wi;
                wn[n] = (uint64_t)qq << 11 | (splitmix(&seed) & 0x7FF); /* low bits unused */
                ref[n] = dpc__gauss_wedge(i, u_of(wi), wn[n], &x0);
                int sq = dpc__gauss_wedge_squeeze(i, u_of(wi), wn[n], &x1);
                if (sq >= 0 && sq != ref[n]) bad++;
                if (sq < 0 && llabs(offs[o]) <= 4096) abstain_near++;
                if (llabs(offs[o]) >= 1ll << 32) far++, decided_far += sq >= 0;
                n++;
            }
        }
    CHECK(bad == 0, "scalar squeeze never decides against the exact test at the boundary (%zu)",
          bad);
    CHECK(abstain_near > 0, "the band around the boundary is exercised (%zu abstentions)",
          abstain_near);
    CHECK(decided_far == far, "far from the boundary the squeeze decides (%zu of %zu)",
          decided_far, far);
    for (int lv = 0; lv < 2; lv++) {
        if (!dpc_isa_supported(lv ? DPC_ISA_AVX512 : DPC_ISA_AVX2)) continue;
        size_t nv = n / 8 * 8, vbad = 0, vabstain = 0;
        (lv ? dpc__gauss_wedge_squeeze_avx512 : dpc__gauss_wedge_squeeze_avx2)(w, wn, nv, dec);
        for (size_t k = 0; k < nv; k++) {
            if (dec[k] >= 0 && dec[k] != ref[k]) vbad++;
            vabstain += dec[k] < 0;
        }
        CHECK(vbad == 0 && vabstain > 0,
              "%s squeeze never decides against the exact test (%zu bad, %zu abstain of %zu)",
              lv ? "AVX-512" : "AVX2", vbad, vabstain, nv);
    }
    free(w);
    free(wn);
    free(dec);
    free(ref);
}

/* The vector squeezes decide random wedge samples as the exact test. */
static void test_vector_random(void)
{
    enum { N = 1 << 15 };
    uint64_t *w = malloc(N * sizeof *w), *wn = malloc(N * sizeof *wn), seed = 5;
    signed char *dec = malloc(N);
    for (size_t k = 0; k < N; k++) {
        w[k] = wedge_word(&seed, 1 + (unsigned)(splitmix(&seed) % 255));
        wn[k] = splitmix(&seed);
    }
    for (int lv = 0; lv < 2; lv++) {
        if (!dpc_isa_supported(lv ? DPC_ISA_AVX512 : DPC_ISA_AVX2)) continue;
        (lv ? dpc__gauss_wedge_squeeze_avx512 : dpc__gauss_wedge_squeeze_avx2)(w, wn, N, dec);
        size_t bad = 0;
        for (size_t k = 0; k < N; k++) {
            double x;
            bad += dec[k] != dpc__gauss_wedge(w[k] & 255u, u_of(w[k]), wn[k], &x);
        }
        CHECK(bad == 0, "%s squeeze decides %d random wedge samples as the exact test (%zu)",
              lv ? "AVX-512" : "AVX2", N, bad);
    }
    free(w);
    free(wn);
    free(dec);
}

int main(void)
{
    test_premises();
    test_random();
    test_boundary();
    test_vector_random();
    return TEST_SUMMARY();
}
