/* gauss_avx512.c — AVX-512 kernels of the bulk Gaussian fill (compiled with the AVX-512 flags;
 * called only when the CPU has them, see dpc_rng_gaussian_fill_isa).
 *
 * Pieces of WBUF samples, each in two passes so that each runs at its own pace:
 *  1. words: Philox4x32-10 in 64-bit lanes. A block (c0, c1, c2, c3) lives in two u64 lanes,
 *     X = c1:c0 and Y = c3:c2, so one round on eight blocks is
 *         p0 = M0 * lo32(X),  p1 = M1 * lo32(Y)                 (vpmuludq: exact 32x32 -> 64)
 *         X' = (p1 >> 32) ^ (X >> 32) ^ k0 = (garbage : hi(p1) ^ c1 ^ k0)
 *         Y' = (p0 >> 32) ^ (Y >> 32) ^ k1 = (garbage : hi(p0) ^ c3 ^ k1)
 *     — the Random123 round (c0, c1, c2, c3) <- (hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0); only
 *     the low halves feed the next multiply, the last round writes whole words — and afterwards
 *     X and Y are the 64-bit words of the block's even and odd index (dpcorr/rng.h). The first
 *     two rounds of a row's blocks are mostly constants (philox_head); six groups of eight
 *     blocks are interleaved to hide the multiply latency.
 *     Secure mode: ChaCha20 on 2 x 16 consecutive blocks (one per 32-bit lane, RFC 8439 double
 *     rounds, the two sets interleaved), transposed back to keystream (= sample) order.
 *  2. ziggurat fast path on eight words at a time with the scalar code's IEEE operations
 *     ((double)(w >> 11) is exact below 2^53, + 0.5, * 2^-52, - 1, |u| < R[i], u * X[i]); the
 *     layer's (R[i], X[i]) come from one 16-byte load (dpc__zig_pair): hardware gathers are
 *     several times slower on the target. The positions of the rejected samples (~1.5%) are
 *     compressed into a list.
 * The rejected samples of several pieces (a batch of about 8700 samples) are then finished
 * together, attempt by attempt as dpc_rng_gaussian would: the words of each attempt in full
 * vectors, the fast test and the wedge test eight lanes at a time — the wedge by the exact
 * exp-free squeeze (gauss.c: the same decision, proved and tested), so libm's exp is called
 * only in the squeeze's narrow undecided band — and the rare tail in scalar code.
 * Hence bit-identical to dpc_rng_gaussian. */
#include "rng/gauss_impl.h"
#include "rng/philox_impl.h"
#include "rng/ziggurat.h"

#if defined(__AVX512F__) && defined(__AVX512DQ__) && defined(__AVX512VL__)
#include <immintrin.h>

#define WBUF 512 /* samples per piece: 4 KiB of output (unalias relies on whole pages) */
#include "rng/gauss_kernel.inc"

/* ---- ziggurat pass ---------------------------------------------------------------------- */

/* Fast path of the 8 words at w (sample order) into out[0..8); returns the accepted lanes. */
static inline __mmask8 zig8(const uint64_t *w, double *out)
{
    const __m512d half = _mm512_set1_pd(0.5), scale = _mm512_set1_pd(0x1.0p-52);
    const __m512d one = _mm512_set1_pd(1.0);
    const double *P = dpc__zig_pair;
    const unsigned char *b = (const unsigned char *)w; /* the layer of word l is b[8 l] */
#define PAIR(l) _mm_loadu_pd(P + 2 * (size_t)b[8 * (l)])
    __m256d a0 = _mm256_insertf128_pd(_mm256_castpd128_pd256(PAIR(0)), PAIR(2), 1);
    __m256d a1 = _mm256_insertf128_pd(_mm256_castpd128_pd256(PAIR(1)), PAIR(3), 1);
    __m256d b0 = _mm256_insertf128_pd(_mm256_castpd128_pd256(PAIR(4)), PAIR(6), 1);
    __m256d b1 = _mm256_insertf128_pd(_mm256_castpd128_pd256(PAIR(5)), PAIR(7), 1);
#undef PAIR
    __m512d v0 = _mm512_insertf64x4(_mm512_castpd256_pd512(a0), b0, 1);
    __m512d v1 = _mm512_insertf64x4(_mm512_castpd256_pd512(a1), b1, 1);
    __m512d r = _mm512_unpacklo_pd(v0, v1), x = _mm512_unpackhi_pd(v0, v1);
    __m512i wv = _mm512_loadu_si512((const void *)w);
    __m512d d = _mm512_cvtepu64_pd(_mm512_srli_epi64(wv, 11));
    __m512d u = _mm512_sub_pd(_mm512_mul_pd(_mm512_add_pd(d, half), scale), one);
    _mm512_storeu_pd(out, _mm512_mul_pd(u, x));
    return _mm512_cmp_pd_mask(_mm512_abs_pd(u), r, _CMP_LT_OQ);
}

/* Fast path over w (m, a multiple of 16) into out (m); the rejected positions (plus off) are
 * appended to pos (m + 16 entries), sixteen lanes compressed at a time. Returns their number.
 * Branch-free: a walk over the rejection bits mispredicts about once per 64 samples. */
static size_t zig_pass(const uint64_t *w, size_t m, double *out, uint32_t off, uint32_t *pos)
{
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    size_t R = 0;
    for (size_t j = 0; j < m; j += 16) {
        unsigned acc = (unsigned)zig8(w + j, out + j) | (unsigned)zig8(w + j + 8, out + j + 8) << 8;
        __m512i p = _mm512_add_epi32(_mm512_set1_epi32((int)(off + j)), lane);
        _mm512_storeu_si512((void *)(pos + R), _mm512_maskz_compress_epi32((__mmask16)~acc, p));
        R += (size_t)__builtin_popcount(~acc & 0xFFFFu);
    }
    return R;
}

/* The same, also appending the rejected samples' words to w0 (m entries). */
static size_t zig_pass_words(const uint64_t *w, size_t m, double *out, uint32_t off,
                             uint32_t *pos, uint64_t *w0)
{
    size_t R = zig_pass(w, m, out, off, pos);
    for (size_t k = 0; k < R; k++) w0[k] = w[pos[k] - off];
    return R;
}


/* ---- Philox4x32-10 -------------------------------------------------------------------------- */

typedef struct keys {
    __m512i k0[10], k1[10]; /* round keys, broadcast in the low half of every u64 lane */
} keys;

static void round_keys(const dpc_rng_stream *s, keys *K)
{
    uint32_t k0 = s->key[0], k1 = s->key[1];
    for (int r = 0; r < 10; r++) {
        if (r > 0) {
            k0 += DPC__PHILOX_W0;
            k1 += DPC__PHILOX_W1;
        }
        K->k0[r] = _mm512_set1_epi64(k0);
        K->k1[r] = _mm512_set1_epi64(k1);
    }
}

/* Counters of the blocks p (pair indices, index >> 1) at `attempt` as X = c1:c0, Y = c3:c2. */
static inline void ctr8(__m512i p, uint64_t row, uint32_t attempt, __m512i *X, __m512i *Y)
{
    const __m512i rowlo = _mm512_set1_epi64((long long)((row & 0xFFFFFFFFu) << 32));
    const __m512i rowhi = _mm512_set1_epi64((long long)((row >> 32) | (uint64_t)attempt << 32));
    *X = _mm512_or_si512(rowlo, _mm512_and_si512(p, _mm512_set1_epi64(0xFFFFFFFFLL)));
    *Y = _mm512_or_si512(rowhi, _mm512_slli_epi64(_mm512_srli_epi64(p, 32), 48));
}

/* Round r on blocks (X, Y), with P1, P0 the products of the round before. Only the low
 * halves of X and Y feed the multiplies, and the old c1 (c3) is the low half of the previous
 * round's P1 (P0), so the new low halves hi(p1) ^ c1 ^ k0 and hi(p0) ^ c3 ^ k1 come from one
 * shift and one three-way xor each; the high halves (garbage here) are set right by LAST.
 * Before round 0, P1 and P0 hold c1 and c3 (the counter) in their low halves. */
#define ROUND(X, Y, P0, P1, r)                                                               \
    do {                                                                                     \
        __m512i p0_ = _mm512_mul_epu32(X, M0), p1_ = _mm512_mul_epu32(Y, M1);                \
        X = _mm512_ternarylogic_epi64(_mm512_srli_epi64(p1_, 32), P1, K->k0[r], 0x96);       \
        Y = _mm512_ternarylogic_epi64(_mm512_srli_epi64(p0_, 32), P0, K->k1[r], 0x96);       \
        P0 = p0_;                                                                            \
        P1 = p1_;                                                                            \
    } while (0)

/* The last round: full words, X = lo(p1) : hi(p1) ^ c1 ^ k0 and Y = lo(p0) : hi(p0) ^ c3 ^ k1
 * (0x78 = a ^ (b & c) with c = the low-half mask). */
#define LAST(X, Y, P0, P1)                                                                   \
    do {                                                                                     \
        __m512i p0_ = _mm512_mul_epu32(X, M0), p1_ = _mm512_mul_epu32(Y, M1);                \
        X = _mm512_xor_si512(_mm512_ternarylogic_epi64(_mm512_rol_epi64(p1_, 32), P1, LO, 0x78), \
                             K->k0[9]);                                                      \
        Y = _mm512_xor_si512(_mm512_ternarylogic_epi64(_mm512_rol_epi64(p0_, 32), P0, LO, 0x78), \
                             K->k1[9]);                                                      \
    } while (0)

/* Ten rounds on groups g of (X, Y). */
#define PHILOX10(G)                                                                          \
    do {                                                                                     \
        __m512i P0[G], P1[G];                                                                \
        _Pragma("GCC unroll 8") for (int g = 0; g < (G); g++) {                              \
            P1[g] = _mm512_srli_epi64(X[g], 32);                                             \
            P0[g] = _mm512_srli_epi64(Y[g], 32);                                             \
        }                                                                                    \
        _Pragma("GCC unroll 9") for (int r = 0; r < 9; r++)                                  \
            _Pragma("GCC unroll 8") for (int g = 0; g < (G); g++)                            \
                ROUND(X[g], Y[g], P0[g], P1[g], r);                                          \
        _Pragma("GCC unroll 8") for (int g = 0; g < (G); g++) LAST(X[g], Y[g], P0[g], P1[g]); \
    } while (0)

/* Rounds 2..9 on groups g of (X, Y) after the first two (P0, P1: their products). */
#define PHILOX_TAIL8(G)                                                                      \
    do {                                                                                     \
        _Pragma("GCC unroll 7") for (int r = 2; r < 9; r++)                                  \
            _Pragma("GCC unroll 8") for (int g = 0; g < (G); g++)                            \
                ROUND(X[g], Y[g], P0[g], P1[g], r);                                          \
        _Pragma("GCC unroll 8") for (int g = 0; g < (G); g++) LAST(X[g], Y[g], P0[g], P1[g]); \
    } while (0)

/* The attempt-0 blocks of one row whose pair indices share their bits 32..47 (ph) differ only
 * in c0, so the first two rounds hold constants (Random123's round maps (c0, c1, c2, c3) to
 * (hi(M1 c2) ^ c1 ^ k0, lo(M1 c2), hi(M0 c0) ^ c3 ^ k1, lo(M0 c0))):
 *   round 0: c0' = hi(M1 c2) ^ c1 ^ k0[0] =: x1 and c1' = lo(M1 c2) are constants;
 *            c2' = hi(M0 c0) ^ c3 ^ k1[0], c3' = lo(M0 c0);
 *   round 1: c0'' = hi(M1 c2') ^ lo(M1 c2) ^ k0[1], c1'' = lo(M1 c2'),
 *            c2'' = lo(M0 c0) ^ hi(M0 x1) ^ k1[1], c3'' = lo(M0 x1), the last a constant.
 * So two multiplies, two shifts and three xors per group instead of the counter set-up and
 * four multiplies, shifts and xors: the same values, a sixth fewer operations. */
typedef struct head {
    __m512i y1, x2, y2, p0; /* c3 ^ k1[0]; lo(M1 c2) ^ k0[1]; hi(M0 x1) ^ k1[1]; M0 x1 */
} head;

static void philox_head(const dpc_rng_stream *s, uint64_t row, uint64_t ph, head *H)
{
    uint64_t c[4];
    dpc__philox_head(s->key[0], s->key[1], row, ph, c);
    H->y1 = _mm512_set1_epi64((long long)c[0]);
    H->x2 = _mm512_set1_epi64((long long)c[1]);
    H->y2 = _mm512_set1_epi64((long long)c[2]);
    H->p0 = _mm512_set1_epi64((long long)c[3]);
}

/* Attempt-0 words of the m samples (a multiple of 16) from index0 (even) into w, in sample
 * order: G groups of eight blocks at a time (G = 6 keeps the multipliers busy through the
 * rounds' latency without spilling). Lane order {0,4,1,5,2,6,3,7} makes unpacklo/unpackhi of
 * (X, Y) samples 0..7, 8..15. H: the constants of the blocks' first two rounds. */
#define PHILOX_WORDS(G)                                                                      \
    for (; j + 16 * (G) <= m; j += 16 * (G)) {                                               \
        __m512i X[G], Y[G], P0[G], P1[G];                                                    \
        __m512i p = _mm512_add_epi64(_mm512_set1_epi64((long long)((index0 + j) >> 1)), lane); \
        _Pragma("GCC unroll 8") for (int g = 0; g < (G); g++) {                              \
            __m512i q0 = _mm512_mul_epu32(_mm512_add_epi64(p, _mm512_set1_epi64(8 * g)), M0); \
            Y[g] = _mm512_xor_si512(_mm512_srli_epi64(q0, 32), H->y1);                       \
            P1[g] = _mm512_mul_epu32(Y[g], M1);                                              \
            X[g] = _mm512_xor_si512(_mm512_srli_epi64(P1[g], 32), H->x2);                    \
            Y[g] = _mm512_xor_si512(q0, H->y2);                                              \
            P0[g] = H->p0;                                                                   \
        }                                                                                    \
        PHILOX_TAIL8(G);                                                                     \
        _Pragma("GCC unroll 8") for (int g = 0; g < (G); g++) {                              \
            _mm512_storeu_si512((void *)(w + j + 16 * g), _mm512_unpacklo_epi64(X[g], Y[g])); \
            _mm512_storeu_si512((void *)(w + j + 16 * g + 8),                                \
                                _mm512_unpackhi_epi64(X[g], Y[g]));                          \
        }                                                                                    \
    }

static void philox_words(const keys *K, const head *H, uint64_t index0, size_t m, uint64_t *w)
{
    const __m512i M0 = _mm512_set1_epi64(DPC__PHILOX_M0), M1 = _mm512_set1_epi64(DPC__PHILOX_M1);
    const __m512i LO = _mm512_set1_epi64(0xFFFFFFFFLL);
    const __m512i lane = _mm512_setr_epi64(0, 4, 1, 5, 2, 6, 3, 7);
    size_t j = 0;
    PHILOX_WORDS(6)
    PHILOX_WORDS(2)
    PHILOX_WORDS(1)
}

/* The same without the constants (any index0, even): the pieces where the pair counter's low
 * word wraps. */
static void philox_words_gen(const keys *K, uint64_t row, uint64_t index0, size_t m,
                             uint64_t *w)
{
    const __m512i M0 = _mm512_set1_epi64(DPC__PHILOX_M0), M1 = _mm512_set1_epi64(DPC__PHILOX_M1);
    const __m512i LO = _mm512_set1_epi64(0xFFFFFFFFLL);
    const __m512i lane = _mm512_setr_epi64(0, 4, 1, 5, 2, 6, 3, 7);
    for (size_t j = 0; j < m; j += 16) {
        __m512i X[1], Y[1];
        __m512i p = _mm512_add_epi64(_mm512_set1_epi64((long long)((index0 + j) >> 1)), lane);
        ctr8(p, row, 0, &X[0], &Y[0]);
        PHILOX10(1);
        _mm512_storeu_si512((void *)(w + j), _mm512_unpacklo_epi64(X[0], Y[0]));
        _mm512_storeu_si512((void *)(w + j + 8), _mm512_unpackhi_epi64(X[0], Y[0]));
    }
}

/* Words of attempt a of the R samples index0 + pos[k] into wa (R rounded up to 8 lanes; pos
 * and wa have room), four vectors interleaved. */
static void philox_words_at(const keys *K, uint64_t row, uint64_t index0, const uint32_t *pos,
                            size_t R, uint32_t a, uint64_t *wa)
{
    const __m512i M0 = _mm512_set1_epi64(DPC__PHILOX_M0), M1 = _mm512_set1_epi64(DPC__PHILOX_M1);
    const __m512i LO = _mm512_set1_epi64(0xFFFFFFFFLL), one = _mm512_set1_epi64(1);
    const __m512i base = _mm512_set1_epi64((long long)index0);
    __m512i X[4], Y[4], idx[4];
    size_t k = 0;
    for (; k + 32 <= R + 7; k += 32) {
#pragma GCC unroll 4
        for (int g = 0; g < 4; g++) {
            __m256i pk = _mm256_loadu_si256((const __m256i *)(pos + k + 8 * g));
            idx[g] = _mm512_add_epi64(base, _mm512_cvtepu32_epi64(pk));
            ctr8(_mm512_srli_epi64(idx[g], 1), row, a & 0xFFFFu, &X[g], &Y[g]);
        }
        PHILOX10(4);
#pragma GCC unroll 4
        for (int g = 0; g < 4; g++) {
            __mmask8 odd = _mm512_test_epi64_mask(idx[g], one);
            _mm512_storeu_si512((void *)(wa + k + 8 * g), _mm512_mask_blend_epi64(odd, X[g], Y[g]));
        }
    }
    for (; k < R; k += 8) {
        __m256i pk = _mm256_loadu_si256((const __m256i *)(pos + k));
        idx[0] = _mm512_add_epi64(base, _mm512_cvtepu32_epi64(pk));
        ctr8(_mm512_srli_epi64(idx[0], 1), row, a & 0xFFFFu, &X[0], &Y[0]);
        PHILOX10(1);
        __mmask8 odd = _mm512_test_epi64_mask(idx[0], one);
        _mm512_storeu_si512((void *)(wa + k), _mm512_mask_blend_epi64(odd, X[0], Y[0]));
    }
}

/* ---- the rejected samples ------------------------------------------------------------------- */

/* exp(e) by the Taylor polynomial of dpc__gauss_wedge_squeeze (gauss.c) in Estrin's scheme
 * (depth 5 instead of Horner's 13): every term passes through at most eleven roundings, inside
 * the error bound proved there. Products and sums rounded separately, as in all kernels. */
#define MADD(a, b, c) _mm512_add_pd(_mm512_mul_pd(a, b), c) /* rounded twice, as everywhere */
static inline __m512d exp_taylor8(__m512d e)
{
    const double *c = dpc__sqz_taylor;
#define C(k) _mm512_set1_pd(c[k])
    __m512d e2 = _mm512_mul_pd(e, e), e4 = _mm512_mul_pd(e2, e2), e8 = _mm512_mul_pd(e4, e4);
    __m512d q0 = MADD(C(1), e, C(0)), q1 = MADD(C(3), e, C(2));
    __m512d q2 = MADD(C(5), e, C(4)), q3 = MADD(C(7), e, C(6));
    __m512d q4 = MADD(C(9), e, C(8)), q5 = MADD(C(11), e, C(10));
    __m512d q6 = MADD(C(13), e, C(12));
#undef C
    __m512d r0 = MADD(q1, e2, q0), r1 = MADD(q3, e2, q2);
    __m512d r2 = MADD(q5, e2, q4);
    __m512d s0 = MADD(r1, e4, r0), s1 = MADD(q6, e4, r2);
    return MADD(s1, e8, s0);
}
#undef MADD

/* Lanes (of valid) whose wedge test the squeeze decides, and which of them accept (*acc): the
 * vector form of dpc__gauss_wedge_squeeze, with x = u X[i] and the layer edges Xi, Xn. */
static inline __mmask8 squeeze8(__mmask8 valid, __m512d x, __m512d Xi, __m512d Xn, __m512i wn,
                                __mmask8 *acc)
{
    const __m512d mhalf = _mm512_set1_pd(-0.5), emax = _mm512_set1_pd(DPC__SQZ_EMAX);
    __m512d x2 = _mm512_mul_pd(x, x);
    __m512d e0 = _mm512_mul_pd(mhalf, _mm512_sub_pd(_mm512_mul_pd(Xi, Xi), x2));
    __m512d e1 = _mm512_mul_pd(mhalf, _mm512_sub_pd(_mm512_mul_pd(Xn, Xn), x2));
    __mmask8 in = _mm512_mask_cmp_pd_mask(valid, _mm512_abs_pd(e0), emax, _CMP_LE_OQ);
    in = _mm512_mask_cmp_pd_mask(in, _mm512_abs_pd(e1), emax, _CMP_LE_OQ);
    __m512d p0 = exp_taylor8(e0), p1 = exp_taylor8(e1);
    __m512d v = _mm512_mul_pd(_mm512_cvtepu64_pd(_mm512_srli_epi64(wn, 11)),
                              _mm512_set1_pd(0x1.0p-53));
    __m512d P = _mm512_add_pd(p1, _mm512_mul_pd(v, _mm512_sub_pd(p0, p1)));
    *acc = _mm512_mask_cmp_pd_mask(in, P, _mm512_set1_pd(1.0 - DPC__SQZ_MARGIN), _CMP_LT_OQ);
    __mmask8 rej = _mm512_mask_cmp_pd_mask(in, P, _mm512_set1_pd(1.0 + DPC__SQZ_MARGIN),
                                           _CMP_GT_OQ);
    return *acc | rej;
}

/* T[layer of lane l] for the 8 lanes whose layers are the bytes b[0], b[8], ..., b[56]:
 * scalar loads (a hardware gather is several times slower here). */
#define LOOKUP8(T, b)                                                                        \
    _mm512_setr_pd((T)[(b)[0]], (T)[(b)[8]], (T)[(b)[16]], (T)[(b)[24]], (T)[(b)[32]],       \
                   (T)[(b)[40]], (T)[(b)[48]], (T)[(b)[56]])

/* One round of the rejected samples out[pos[k]] (index index0 + pos[k]) at attempt a (even),
 * with the words wa of attempt a and wb of a + 1: what one pass of dpc__gauss_from's loop
 * does, eight lanes at a time — the fast test when a > 0 (at attempt 0 it failed), the squeeze
 * for the wedges — with the tail (finished by dpc__gauss_from) and the undecided wedges
 * (dpc__gauss_wedge) deferred to scalar code, their entries k listed in rare. The positions
 * of the samples still rejected, which go on at attempt a + 2, go to next; returns their
 * number. */
static size_t slow_step(const dpc_rng_stream *s, uint64_t row, uint64_t index0, double *out,
                        const uint32_t *pos, const uint64_t *wa, const uint64_t *wb, size_t R,
                        uint32_t a, uint32_t *next, uint32_t *rare)
{
    const __m512i b255 = _mm512_set1_epi64(255);
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    size_t left = 0, nr = 0;
    for (size_t k = 0; k < R; k += 8) {
        __mmask8 valid = R - k >= 8 ? 0xFF : (__mmask8)((1u << (R - k)) - 1);
        __m256i p = _mm256_maskz_loadu_epi32(valid, pos + k);
        __m512i w = _mm512_maskz_loadu_epi64(valid, wa + k);
        __m512i wn = _mm512_maskz_loadu_epi64(valid, wb + k);
        __m512d d = _mm512_cvtepu64_pd(_mm512_srli_epi64(w, 11));
        __m512d u = _mm512_sub_pd(_mm512_mul_pd(_mm512_add_pd(d, _mm512_set1_pd(0.5)),
                                                _mm512_set1_pd(0x1.0p-52)),
                                  _mm512_set1_pd(1.0));
        const unsigned char *b = (const unsigned char *)(wa + k); /* layer of lane l: b[8 l] */
        __m512d Xi = LOOKUP8(dpc__zig_x, b), Xn = LOOKUP8(dpc__zig_x + 1, b);
        __m512d x = _mm512_mul_pd(u, Xi);
        __mmask8 fast = 0;
        if (a)
            fast = _mm512_mask_cmp_pd_mask(valid, _mm512_abs_pd(u), LOOKUP8(dpc__zig_ratio, b),
                                           _CMP_LT_OQ);
        __mmask8 tail = _mm512_mask_testn_epi64_mask((__mmask8)(valid & ~fast), w, b255);
        __mmask8 wedge = (__mmask8)(valid & ~fast & ~tail), acc = 0, decided = 0;
        if (wedge) decided = squeeze8(wedge, x, Xi, Xn, wn, &acc); /* after attempt 0: rare */
        __mmask8 done = (__mmask8)(fast | acc);
        __mmask8 hard = (__mmask8)(tail | (wedge & ~decided));
        __mmask8 keep = (__mmask8)(valid & ~done & ~hard);
        _mm512_mask_i32scatter_pd(out, done, p, x, 8);
        _mm256_storeu_si256((__m256i *)(next + left), _mm256_maskz_compress_epi32(keep, p));
        left += (size_t)__builtin_popcount(keep);
        __m256i kk = _mm256_add_epi32(_mm256_set1_epi32((int)k), lane);
        _mm256_storeu_si256((__m256i *)(rare + nr), _mm256_maskz_compress_epi32(hard, kk));
        nr += (size_t)__builtin_popcount(hard);
    }
    for (size_t q = 0; q < nr; q++) { /* the tail (finished here) and the undecided wedges */
        size_t k = rare[q];
        unsigned i = (unsigned)(wa[k] & 255u);
        double u = ((double)(wa[k] >> 11) + 0.5) * 0x1.0p-52 - 1.0, x;
        if (i == 0)
            out[pos[k]] = dpc__gauss_from(s, row, index0 + pos[k], a, wa[k]);
        else if (dpc__gauss_wedge(i, u, wb[k], &x))
            out[pos[k]] = x;
        else
            next[left++] = pos[k];
    }
    return left;
}

void dpc__gauss_wedge_squeeze_avx512(const uint64_t *w, const uint64_t *wn, size_t n,
                                     signed char *dec)
{
    for (size_t k = 0; k < n; k += 8) {
        __m512i wv = _mm512_loadu_si512((const void *)(w + k));
        __m512d d = _mm512_cvtepu64_pd(_mm512_srli_epi64(wv, 11));
        __m512d u = _mm512_sub_pd(_mm512_mul_pd(_mm512_add_pd(d, _mm512_set1_pd(0.5)),
                                                _mm512_set1_pd(0x1.0p-52)),
                                  _mm512_set1_pd(1.0));
        const unsigned char *b = (const unsigned char *)(w + k);
        __m512d Xi = LOOKUP8(dpc__zig_x, b), Xn = LOOKUP8(dpc__zig_x + 1, b);
        __mmask8 accm, decided = squeeze8(0xFF, _mm512_mul_pd(u, Xi), Xi, Xn,
                                          _mm512_loadu_si512((const void *)(wn + k)), &accm);
        for (unsigned l = 0; l < 8; l++)
            dec[k + l] = (signed char)(decided >> l & 1 ? accm >> l & 1 : -1);
    }
}


/* Finishes the R pending samples of the batch at out (index index0), attempt by attempt,
 * exactly as the scalar sampler would. */
static void finish(const keys *K, const dpc_rng_stream *s, uint64_t row, uint64_t index0,
                   double *out, pending *P, size_t R)
{
    uint32_t *pos = P->pos, *next = P->next;
    for (uint32_t a = 0; R; a += 2) {
        for (size_t k = R; k < R + 8; k++) pos[k] = 0; /* whole vectors of defined lanes */
        philox_words_at(K, row, index0, pos, R, a, P->wa);
        philox_words_at(K, row, index0, pos, R, a + 1, P->wb);
        R = slow_step(s, row, index0, out, pos, P->wa, P->wb, R, a, next, P->rare);
        uint32_t *t = pos;
        pos = next;
        next = t;
    }
}

void dpc__gaussian_fill_avx512(const dpc_rng_stream *s, uint64_t row, uint64_t index0,
                               double *out, size_t n)
{
    keys K;
    round_keys(s, &K);
    uint64_t wbuf[WBUF + 512], *w = unalias(wbuf, out), hph = 0;
    head H;
    philox_head(s, row, hph, &H);
    pending P;
    size_t R = 0, base = 0; /* the pending samples and their batch's first sample */
    for (size_t i = 0; i < n; i += WBUF) {
        size_t m = n - i < WBUF ? n - i : WBUF; /* a multiple of 16 */
        uint64_t ph = (index0 + i) >> 33, ph_end = (index0 + i + m - 1) >> 33;
        if (ph != hph) philox_head(s, row, hph = ph, &H);
        if (ph_end == ph)
            philox_words(&K, &H, index0 + i, m, w);
        else /* the pair counter's low word wraps inside the piece */
            philox_words_gen(&K, row, index0 + i, m, w);
        R += zig_pass(w, m, out + i, (uint32_t)(i - base), P.pos + R);
        if (R >= PEND_FLUSH || i + m - base >= PEND_SPAN || i + m == n) {
            finish(&K, s, row, index0 + base, out + base, &P, R);
            R = 0;
            base = i + m;
        }
    }
}

/* ---- ChaCha20 (secure mode) ----------------------------------------------------------------- */

#define QR16(a, b, c, d)                                                                     \
    do {                                                                                     \
        a = _mm512_add_epi32(a, b); d = _mm512_rol_epi32(_mm512_xor_si512(d, a), 16);        \
        c = _mm512_add_epi32(c, d); b = _mm512_rol_epi32(_mm512_xor_si512(b, c), 12);        \
        a = _mm512_add_epi32(a, b); d = _mm512_rol_epi32(_mm512_xor_si512(d, a), 8);         \
        c = _mm512_add_epi32(c, d); b = _mm512_rol_epi32(_mm512_xor_si512(b, c), 7);         \
    } while (0)

/* The initial ChaCha20 state of sixteen blocks (key skey, block counters ctr, nonces (row lo,
 * row hi, non)), one per 32-bit lane. */
static inline void chacha_init(__m512i x[16], const uint32_t skey[8], __m512i ctr, uint64_t row,
                               __m512i non)
{
    x[0] = _mm512_set1_epi32(0x61707865);
    x[1] = _mm512_set1_epi32(0x3320646e);
    x[2] = _mm512_set1_epi32(0x79622d32);
    x[3] = _mm512_set1_epi32(0x6b206574);
    for (int k = 0; k < 8; k++) x[4 + k] = _mm512_set1_epi32((int)skey[k]);
    x[12] = ctr;
    x[13] = _mm512_set1_epi32((int)(uint32_t)row);
    x[14] = _mm512_set1_epi32((int)(uint32_t)(row >> 32));
    x[15] = non;
}

/* The feed-forward (x += the initial state) and the 16 x 16 transpose of u32 that writes the
 * sixteen blocks to ks in keystream order: block b's 64 bytes at ks + 8 b (u64 units). */
static inline void chacha_store(__m512i x[16], const uint32_t skey[8], __m512i ctr, uint64_t row,
                                __m512i non, uint64_t *ks)
{
    __m512i in[16], t[16], u[16];
    chacha_init(in, skey, ctr, row, non);
    for (int k = 0; k < 16; k++) x[k] = _mm512_add_epi32(x[k], in[k]);
    /* state word q of lane b -> ks32[16 b + q] */
    for (int k = 0; k < 16; k += 2) {
        t[k] = _mm512_unpacklo_epi32(x[k], x[k + 1]);     /* per 128-bit lane: a0 b0 a1 b1 */
        t[k + 1] = _mm512_unpackhi_epi32(x[k], x[k + 1]); /* a2 b2 a3 b3 */
    }
    for (int g = 0; g < 16; g += 4) { /* words g..g+3 of the 4 blocks of every 128-bit lane */
        u[g] = _mm512_unpacklo_epi64(t[g], t[g + 2]);     /* block 4L + 0 */
        u[g + 1] = _mm512_unpackhi_epi64(t[g], t[g + 2]); /* block 4L + 1 */
        u[g + 2] = _mm512_unpacklo_epi64(t[g + 1], t[g + 3]);
        u[g + 3] = _mm512_unpackhi_epi64(t[g + 1], t[g + 3]);
    }
    for (int k = 0; k < 4; k++) { /* blocks 4L + k: lanes L of u[k], u[4+k], u[8+k], u[12+k] */
        __m512i p0 = _mm512_shuffle_i32x4(u[k], u[4 + k], 0x44);
        __m512i p1 = _mm512_shuffle_i32x4(u[k], u[4 + k], 0xEE);
        __m512i q0 = _mm512_shuffle_i32x4(u[8 + k], u[12 + k], 0x44);
        __m512i q1 = _mm512_shuffle_i32x4(u[8 + k], u[12 + k], 0xEE);
        _mm512_storeu_si512((void *)(ks + 8 * (0 + k)), _mm512_shuffle_i32x4(p0, q0, 0x88));
        _mm512_storeu_si512((void *)(ks + 8 * (4 + k)), _mm512_shuffle_i32x4(p0, q0, 0xDD));
        _mm512_storeu_si512((void *)(ks + 8 * (8 + k)), _mm512_shuffle_i32x4(p1, q1, 0x88));
        _mm512_storeu_si512((void *)(ks + 8 * (12 + k)), _mm512_shuffle_i32x4(p1, q1, 0xDD));
    }
}

/* A double round: columns, then diagonals. */
#define DROUND(x)                                                                            \
    do {                                                                                     \
        QR16(x[0], x[4], x[8], x[12]);                                                       \
        QR16(x[1], x[5], x[9], x[13]);                                                       \
        QR16(x[2], x[6], x[10], x[14]);                                                      \
        QR16(x[3], x[7], x[11], x[15]);                                                      \
        QR16(x[0], x[5], x[10], x[15]);                                                      \
        QR16(x[1], x[6], x[11], x[12]);                                                      \
        QR16(x[2], x[7], x[8], x[13]);                                                       \
        QR16(x[3], x[4], x[9], x[14]);                                                       \
    } while (0)

/* Sixteen ChaCha20 blocks, one per lane, written to ks in keystream order (chacha_store). */
static void chacha16(const uint32_t skey[8], __m512i ctr, uint64_t row, __m512i non,
                     uint64_t *ks)
{
    __m512i x[16];
    chacha_init(x, skey, ctr, row, non);
    for (int r = 0; r < 10; r++) DROUND(x);
    chacha_store(x, skey, ctr, row, non, ks);
}

/* Two sets of sixteen blocks (counters ca, cb; nonce words na, nb) into ksa and ksb, their
 * rounds interleaved: a quarter round is a chain of twelve dependent operations of latency 2
 * here, so one set keeps only half the vector units busy. The 32 state vectors fill the
 * register file. */
static void chacha32(const uint32_t skey[8], uint64_t row, __m512i ca, __m512i na, uint64_t *ksa,
                     __m512i cb, __m512i nb, uint64_t *ksb)
{
    __m512i x[16], y[16];
    chacha_init(x, skey, ca, row, na);
    chacha_init(y, skey, cb, row, nb);
    for (int r = 0; r < 10; r++) {
        DROUND(x);
        DROUND(y);
    }
    chacha_store(x, skey, ca, row, na, ksa);
    chacha_store(y, skey, cb, row, nb, ksb);
}

/* Counter (low 32 bits of the block number) and nonce word 2, ((block >> 32) & 0xFFFF) << 16 |
 * attempt, of the 16 blocks blo (lanes 0..7) and bhi (8..15), as 16 u32 lanes. */
static inline void chacha_ctr(__m512i blo, __m512i bhi, uint32_t attempt, __m512i *ctr,
                              __m512i *non)
{
    const __m512i m16 = _mm512_set1_epi64(0xFFFF);
    __m512i nlo = _mm512_slli_epi64(_mm512_and_si512(_mm512_srli_epi64(blo, 32), m16), 16);
    __m512i nhi = _mm512_slli_epi64(_mm512_and_si512(_mm512_srli_epi64(bhi, 32), m16), 16);
    *ctr = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi64_epi32(blo)),
                              _mm512_cvtepi64_epi32(bhi), 1);
    *non = _mm512_or_si512(_mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtepi64_epi32(nlo)),
                                              _mm512_cvtepi64_epi32(nhi), 1),
                           _mm512_set1_epi32((int)attempt));
}

/* Words of attempts a (into wa, unless wa is NULL) and a + 1 (into wb) of the R samples
 * index0 + pos[k]: every word needs a block of its own, so the lanes of each sixteen-block call
 * are filled with both attempts of the samples. */
static void chacha_words_at(const dpc_rng_stream *s, uint64_t row, uint64_t index0,
                            const uint32_t *pos, size_t R, uint32_t a, uint64_t *wa,
                            uint64_t *wb)
{
    uint64_t ks[128], blk[16];
    uint32_t att[16];
    size_t idx[16], lanes = 0, total = wa ? 2 * R : R;
    for (size_t e = 0; e < total; e++) {
        size_t k = wa ? e / 2 : e;
        int first = wa && e % 2 == 0; /* this lane serves attempt a (else a + 1) */
        idx[lanes] = 2 * k + (size_t)!first;
        blk[lanes] = (index0 + pos[k]) >> 3;
        att[lanes] = (first ? a : a + 1) & 0xFFFFu;
        lanes++;
        if (lanes < 16 && e + 1 < total) continue;
        for (size_t l = lanes; l < 16; l++) blk[l] = 0, att[l] = 0; /* defined spare lanes */
        __m512i ctr, non;
        chacha_ctr(_mm512_loadu_si512((const void *)blk),
                   _mm512_loadu_si512((const void *)(blk + 8)), 0, &ctr, &non);
        non = _mm512_or_si512(non, _mm512_loadu_si512((const void *)att));
        chacha16(s->skey, ctr, row, non, ks);
        for (size_t l = 0; l < lanes; l++) {
            size_t kk = idx[l] / 2;
            (idx[l] % 2 ? wb : wa)[kk] = ks[8 * l + ((index0 + pos[kk]) & 7)];
        }
        lanes = 0;
    }
}

/* The attempt-0 words of the m samples (a multiple of 128) from index0 (a multiple of 8) into
 * w: 32 blocks at a time, 16 at the end. */
static void chacha_words(const dpc_rng_stream *s, uint64_t row, uint64_t index0, size_t m,
                         uint64_t *w)
{
    const __m512i lane = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
    for (size_t j = 0; j < m; j += 256) {
        __m512i ctr[2], non[2];
        for (int h = 0; h < 2; h++) {
            uint64_t b0 = (index0 + j + 128 * (size_t)h) >> 3;
            __m512i blo = _mm512_add_epi64(_mm512_set1_epi64((long long)b0), lane);
            __m512i bhi = _mm512_add_epi64(blo, _mm512_set1_epi64(8));
            chacha_ctr(blo, bhi, 0, &ctr[h], &non[h]);
        }
        if (m - j >= 256)
            chacha32(s->skey, row, ctr[0], non[0], w + j, ctr[1], non[1], w + j + 128);
        else
            chacha16(s->skey, ctr[0], row, non[0], w + j);
    }
}

/* finish() for secure mode: the words of the later attempts from ChaCha20. P->wa holds the
 * attempt-0 words (collected by the fast pass). */
static void finish_secure(const dpc_rng_stream *s, uint64_t row, uint64_t index0, double *out,
                          pending *P, size_t R)
{
    uint32_t *pos = P->pos, *next = P->next;
    for (uint32_t a = 0; R; a += 2) {
        chacha_words_at(s, row, index0, pos, R, a, a ? P->wa : NULL, P->wb);
        for (size_t k = R; k < R + 8; k++) P->wa[k] = P->wb[k] = 0; /* defined spare lanes */
        R = slow_step(s, row, index0, out, pos, P->wa, P->wb, R, a, next, P->rare);
        uint32_t *t = pos;
        pos = next;
        next = t;
    }
}

void dpc__gaussian_fill_secure_avx512(const dpc_rng_stream *s, uint64_t row, uint64_t index0,
                                      double *out, size_t n)
{
    uint64_t wbuf[WBUF + 512], *w = unalias(wbuf, out);
    pending P;
    size_t R = 0, base = 0; /* as in dpc__gaussian_fill_avx512 */
    for (size_t i = 0; i < n; i += WBUF) {
        size_t m = n - i < WBUF ? n - i : WBUF; /* a multiple of 128: 16 blocks */
        chacha_words(s, row, index0 + i, m, w);
        R += zig_pass_words(w, m, out + i, (uint32_t)(i - base), P.pos + R, P.wa + R);
        if (R >= PEND_FLUSH || i + m - base >= PEND_SPAN || i + m == n) {
            finish_secure(s, row, index0 + base, out + base, &P, R);
            R = 0;
            base = i + m;
        }
    }
}

#else
typedef int dpc__gauss_avx512_unused; /* non-x86 or no AVX-512 flags: nothing to compile */
#endif
