/* test_isa.c — instruction-set levels: the level API (names, parsing, resolution, refusal of a
 * level the CPU lacks), and every level's kernels against their scalar twins bit for bit on odd
 * sizes and awkward offsets: the bulk Gaussian fill (Philox and ChaCha20 words, the ziggurat
 * and its batched slow path), the model's GEMM with summation segments. Levels this CPU lacks
 * are skipped (and say so). */
#include "dpcorr/isa.h"
#include "dpcorr/rng.h"
#include "harness.h"
#include "model/gemm.h"

#include <stdint.h>
#include <string.h>

static const dpc_isa LEVELS[] = {DPC_ISA_SSE2, DPC_ISA_AVX2, DPC_ISA_AVX512};
#define N_LEVELS (sizeof LEVELS / sizeof LEVELS[0])

/* ==== The level API ===================================================================== */

static void test_api(void)
{
    dpc_error err = {0};
    dpc_isa have = dpc_isa_detect(), got;
    CHECK(have >= DPC_ISA_SSE2 && have <= DPC_ISA_AVX512, "detect returns a level (%d)", (int)have);
    fprintf(stderr, "test_isa: this CPU runs up to %s\n", dpc_isa_name(have));
    CHECK(!strcmp(dpc_isa_name(DPC_ISA_AUTO), "auto") && !strcmp(dpc_isa_name(DPC_ISA_SSE2), "sse2") &&
              !strcmp(dpc_isa_name(DPC_ISA_AVX2), "avx2") &&
              !strcmp(dpc_isa_name(DPC_ISA_AVX512), "avx512") &&
              !strcmp(dpc_isa_name((dpc_isa)9), "unknown"),
          "names");
    for (int k = 0; k <= 3; k++) {
        CHECK_OK(dpc_isa_parse(dpc_isa_name((dpc_isa)k), &got, &err), &err);
        CHECK(got == (dpc_isa)k, "parse(name(%d)) round trip", k);
    }
    CHECK(dpc_isa_parse("AVX2", &got, &err) == DPC_E_INVALID && !strcmp(err.field, "isa"),
          "parse refuses an unknown name, naming field isa: %s", err.msg);
    CHECK(dpc_isa_parse(NULL, &got, &err) == DPC_E_INVALID, "parse(NULL)");
    CHECK_OK(dpc_isa_resolve(DPC_ISA_AUTO, &got, &err), &err);
    CHECK(got == have, "AUTO resolves to the detected level");
    CHECK(dpc_isa_supported(DPC_ISA_AUTO) && dpc_isa_supported(DPC_ISA_SSE2),
          "auto and sse2 always run");
    CHECK(!dpc_isa_supported((dpc_isa)7) && !dpc_isa_supported((dpc_isa)-1), "unknown values");
    for (size_t k = 0; k < N_LEVELS; k++) {
        dpc_isa l = LEVELS[k];
        dpc_status st = dpc_isa_resolve(l, &got, &err);
        if (l <= have) {
            CHECK(st == DPC_OK && got == l, "%s resolves to itself", dpc_isa_name(l));
            CHECK(dpc_isa_supported(l), "%s supported", dpc_isa_name(l));
        } else {
            CHECK(st == DPC_E_UNSUPPORTED && !strcmp(err.field, "isa") &&
                      strstr(err.msg, dpc_isa_name(l)),
                  "%s refused on this CPU with a message naming it: %s", dpc_isa_name(l), err.msg);
            CHECK(!dpc_isa_supported(l), "%s not supported", dpc_isa_name(l));
        }
    }
    CHECK(dpc_isa_resolve((dpc_isa)5, &got, &err) == DPC_E_INVALID && !strcmp(err.field, "isa"),
          "resolve refuses an unknown value: %s", err.msg);
}

/* ==== Gaussian fill: every level equals the scalar sampler ============================== */

/* Sizes around every kernel's vector and piece boundaries (16, 64, 128, 512), starts with odd
 * parity, mid-block ChaCha offsets, a Philox pair counter about to wrap its low 32 bits and a
 * ChaCha block counter about to wrap into the nonce. */
static void test_gaussian_levels(void)
{
    static const size_t sizes[] = {0, 1, 3, 7, 16, 17, 63, 129, 513, 1031, 4100};
    static const uint64_t starts[] = {0, 1, 7, 13, 2 * 0xFFFFFFF8ull + 1, 8 * 0xFFFFFFFAull + 3};
    enum { NMAX = 4100 + 8 };
    double *ref = malloc(NMAX * sizeof *ref), *got = malloc(NMAX * sizeof *got);
    dpc_rng roots[2];
    dpc_error err = {0};
    dpc_rng_seed(&roots[0], 2024);
    CHECK_OK(dpc_rng_seed_os(&roots[1], &err), &err);
    int bad = 0, cases = 0;
    for (int mode = 0; mode < 2; mode++) {
        dpc_rng_stream s = dpc_rng_stream_derive(&roots[mode], DPC_STREAM_ID(DPC_STREAM_TEST, 3));
        for (size_t a = 0; a < sizeof starts / sizeof starts[0]; a++)
            for (size_t b = 0; b < sizeof sizes / sizeof sizes[0]; b++) {
                size_t n = sizes[b];
                /* the largest size only at two starts: it is the slow scalar reference */
                if (n > 1100 && a % 3) continue;
                uint64_t row = 5 + a + ((uint64_t)a << 33);
                dpc_rng_gaussian_fill_naive(&s, row, starts[a], ref, n);
                for (size_t k = 0; k < N_LEVELS; k++) {
                    if (!dpc_isa_supported(LEVELS[k])) continue;
                    got[n] = 12345.0; /* guard */
                    dpc_rng_gaussian_fill_isa(&s, row, starts[a], got, n, LEVELS[k]);
                    cases++;
                    if (memcmp(ref, got, n * sizeof *ref) || got[n] != 12345.0) {
                        bad++;
                        fprintf(stderr, "  %s %s: n %zu start %llu differs\n",
                                mode ? "secure" : "seeded", dpc_isa_name(LEVELS[k]), n,
                                (unsigned long long)starts[a]);
                    }
                }
            }
    }
    CHECK(bad == 0 && cases >= 150, "every level's fill equals the scalar sampler (%d of %d cases differ)",
          bad, cases);
    /* a level above the CPU's, AUTO and garbage all run (clamped), with the same values */
    dpc_rng_stream s = dpc_rng_stream_derive(&roots[0], DPC_STREAM_ID(DPC_STREAM_TEST, 4));
    dpc_rng_gaussian_fill_naive(&s, 3, 0, ref, 1000);
    int clamp_bad = 0;
    const int odd_levels[] = {DPC_ISA_AUTO, DPC_ISA_AVX512, 99, -3};
    for (int k = 0; k < 4; k++) {
        dpc_rng_gaussian_fill_isa(&s, 3, 0, got, 1000, (dpc_isa)odd_levels[k]);
        clamp_bad += memcmp(ref, got, 1000 * sizeof *ref) != 0;
    }
    CHECK(clamp_bad == 0, "AUTO, unsupported and unknown levels fall back to a level this CPU runs");
    free(ref);
    free(got);
}


/* ==== GEMM: every level equals the three-loop reference, with segments ================== */

/* C = [C +] A B with k summed in segments of seg (0: one), the plain three loops. */
static void gemm_seg_ref(size_t m, size_t n, size_t k, size_t seg, const double *A, size_t lda,
                         const double *B, double *C, size_t ldc, int accumulate)
{
    if (seg == 0 || seg > k) seg = k;
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double c = accumulate ? C[i * ldc + j] : 0.0;
            for (size_t t0 = 0; t0 < k; t0 += seg) {
                double s = 0.0;
                for (size_t t = t0; t < k && t < t0 + seg; t++) s += A[i * lda + t] * B[t * n + j];
                c = (accumulate || t0 > 0) ? c + s : s;
            }
            if (k == 0) c = accumulate ? C[i * ldc + j] + 0.0 : 0.0;
            C[i * ldc + j] = c;
        }
}

static void test_gemm_levels(void)
{
    static const size_t ms[] = {1, 3, 7, 13, 17}, ns[] = {1, 3, 7, 9, 17, 33};
    static const size_t ks[] = {0, 1, 3, 7, 17, 301}, segs[] = {0, 1, 5, 32};
    dpc_rng rng;
    dpc_rng_seed(&rng, 77);
    dpc_rng_stream s = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_TEST, 5));
    enum { MMAX = 17, NMAX = 33, KMAX = 301, LDA = KMAX + 2, LDC = NMAX + 3 };
    double *A = malloc(MMAX * LDA * sizeof *A), *B = malloc(KMAX * NMAX * sizeof *B);
    double *Bp = malloc((KMAX * (NMAX + 8)) * sizeof *Bp);
    double *C0 = malloc(MMAX * LDC * sizeof *C0), *R = malloc(MMAX * LDC * sizeof *R);
    double *G = malloc(MMAX * LDC * sizeof *G);
    dpc_rng_gaussian_fill(&s, 0, 0, A, MMAX * LDA);
    dpc_rng_gaussian_fill(&s, 1, 0, B, KMAX * NMAX);
    dpc_rng_gaussian_fill(&s, 2, 0, C0, MMAX * LDC);
    for (size_t i = 0; i < KMAX * NMAX; i += 7) B[i] = -0.0; /* signed zeros on the way */
    int bad = 0, cases = 0;
    for (size_t a = 0; a < sizeof ms / sizeof *ms; a++)
        for (size_t b = 0; b < sizeof ns / sizeof *ns; b++)
            for (size_t c = 0; c < sizeof ks / sizeof *ks; c++) {
                size_t m = ms[a], n = ns[b], k = ks[c];
                dpc__gemm_pack_b(k, n, B, n, Bp);
                for (size_t d = 0; d < sizeof segs / sizeof *segs; d++)
                    for (int acc = 0; acc < 2; acc++) {
                        memcpy(R, C0, MMAX * LDC * sizeof *R);
                        gemm_seg_ref(m, n, k, segs[d], A, LDA, B, R, LDC, acc);
                        for (size_t l = 0; l < N_LEVELS; l++) {
                            if (!dpc_isa_supported(LEVELS[l])) continue;
                            memcpy(G, C0, MMAX * LDC * sizeof *G);
                            dpc__gemm_seg(LEVELS[l], m, n, k, segs[d], A, LDA, Bp, k, G, LDC, acc);
                            cases++;
                            if (memcmp(R, G, MMAX * LDC * sizeof *R)) { /* padding untouched too */
                                bad++;
                                fprintf(stderr, "  gemm %s m %zu n %zu k %zu seg %zu acc %d\n",
                                        dpc_isa_name(LEVELS[l]), m, n, k, segs[d], acc);
                            }
                        }
                    }
            }
    CHECK(bad == 0 && cases > 500, "every level's GEMM equals the reference bit for bit "
                                   "(%d of %d cases differ)", bad, cases);
    free(A);
    free(B);
    free(Bp);
    free(C0);
    free(R);
    free(G);
}

int main(void)
{
    test_api();
    test_gaussian_levels();
    test_gemm_levels();
    return TEST_SUMMARY();
}
