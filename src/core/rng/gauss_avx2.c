/* gauss_avx2.c — AVX2 kernels of the bulk Gaussian fill (compiled with the AVX2 flags; called
 * only when the CPU has them, see dpc_rng_gaussian_fill_isa).
 *
 * The structure of gauss_avx512.c at half the width: Philox4x32-10 in 64-bit lanes (X = c1:c0,
 * Y = c3:c2; a round is two vpmuludq, two shifts and four xors per four blocks, the first two
 * rounds from per-row constants) or ChaCha20 on eight consecutive blocks (one per 32-bit lane)
 * into a buffer of words in sample order; then the ziggurat fast path four samples at a time
 * with the scalar code's IEEE operations (the u64 -> double conversion of w >> 11 < 2^53 done
 * exactly as hi * 2^32 + lo); the rejected samples of a batch of pieces are finished together,
 * four lanes at a time with the exact exp-free squeeze for the wedge test (gauss.c). Bit-identical
 * to the portable fills. */
#include "rng/gauss_impl.h"
#include "rng/philox_impl.h"
#include "rng/ziggurat.h"

#if defined(__AVX2__)
#include <immintrin.h>

#define WBUF 512 /* samples per piece */
#include "rng/gauss_kernel.inc"

/* ---- ziggurat pass ---------------------------------------------------------------------- */

/* Exact conversion of 4 x u64 values < 2^53 to double: hi * 2^32 + lo, both parts exact. */
static inline __m256d u53_to_double(__m256i m)
{
    const __m256i magic = _mm256_set1_epi64x(0x4330000000000000LL); /* 2^52 */
    const __m256d two52 = _mm256_set1_pd(0x1.0p52), two32 = _mm256_set1_pd(0x1.0p32);
    __m256i lo = _mm256_and_si256(m, _mm256_set1_epi64x(0xFFFFFFFFLL));
    __m256i hi = _mm256_srli_epi64(m, 32);
    __m256d dlo = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(lo, magic)), two52);
    __m256d dhi = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(hi, magic)), two52);
    return _mm256_add_pd(_mm256_mul_pd(dhi, two32), dlo);
}

/* Fast path of the 4 words at w (sample order) into out[0..4); returns the accepted lanes (bit
 * l = lane l). (R[i], X[i]) come from one 16-byte load per lane: gathers are slower here. */
static inline int zig4(const uint64_t *w, double *out)
{
    const __m256d half = _mm256_set1_pd(0.5), scale = _mm256_set1_pd(0x1.0p-52);
    const __m256d one = _mm256_set1_pd(1.0);
    const __m256d absmask = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7FFFFFFFFFFFFFFFLL));
    const double *P = dpc__zig_pair;
    const unsigned char *b = (const unsigned char *)w; /* the layer of word l is b[8 l] */
#define PAIR(l) _mm_loadu_pd(P + 2 * (size_t)b[8 * (l)])
    __m256d v0 = _mm256_insertf128_pd(_mm256_castpd128_pd256(PAIR(0)), PAIR(2), 1);
    __m256d v1 = _mm256_insertf128_pd(_mm256_castpd128_pd256(PAIR(1)), PAIR(3), 1);
#undef PAIR
    __m256d r = _mm256_unpacklo_pd(v0, v1), x = _mm256_unpackhi_pd(v0, v1);
    __m256d d = u53_to_double(_mm256_srli_epi64(_mm256_loadu_si256((const __m256i *)w), 11));
    __m256d u = _mm256_sub_pd(_mm256_mul_pd(_mm256_add_pd(d, half), scale), one);
    _mm256_storeu_pd(out, _mm256_mul_pd(u, x));
    return _mm256_movemask_pd(_mm256_cmp_pd(_mm256_and_pd(u, absmask), r, _CMP_LT_OQ));
}

/* Fast path over w (m, a multiple of 16) into out (m); the rejected positions (plus off) and
 * their words are appended to pos and w0. Returns their number. The rejections of 64 samples
 * form one bit mask, walked afterwards (a branch per four samples mispredicted more often). */
static size_t zig_pass(const uint64_t *w, size_t m, double *out, uint32_t off, uint32_t *pos,
                       uint64_t *w0)
{
    size_t R = 0;
    for (size_t j = 0; j < m; j += 64) {
        size_t g4 = m - j >= 64 ? 16 : (m - j) / 4;
        uint64_t rej = 0;
        for (size_t g = 0; g < g4; g++)
            rej |= (uint64_t)(~zig4(w + j + 4 * g, out + j + 4 * g) & 0xF) << (4 * g);
        for (; rej; rej &= rej - 1) {
            size_t t = j + (size_t)__builtin_ctzll(rej);
            pos[R] = off + (uint32_t)t;
            w0[R++] = w[t];
        }
    }
    return R;
}


/* ---- Philox4x32-10 -------------------------------------------------------------------------- */

typedef struct keys {
    __m256i k0[10], k1[10]; /* round keys, broadcast in the low half of every u64 lane */
} keys;

static void round_keys(const dpc_rng_stream *s, keys *K)
{
    uint32_t k0 = s->key[0], k1 = s->key[1];
    for (int r = 0; r < 10; r++) {
        if (r > 0) {
            k0 += DPC__PHILOX_W0;
            k1 += DPC__PHILOX_W1;
        }
        K->k0[r] = _mm256_set1_epi64x(k0);
        K->k1[r] = _mm256_set1_epi64x(k1);
    }
}

/* Counters of the blocks p (pair indices, index >> 1) at `attempt` as X = c1:c0, Y = c3:c2. */
static inline void ctr4(__m256i p, uint64_t row, uint32_t attempt, __m256i *X, __m256i *Y)
{
    const __m256i rowlo = _mm256_set1_epi64x((long long)((row & 0xFFFFFFFFu) << 32));
    const __m256i rowhi = _mm256_set1_epi64x((long long)((row >> 32) | (uint64_t)attempt << 32));
    *X = _mm256_or_si256(rowlo, _mm256_and_si256(p, _mm256_set1_epi64x(0xFFFFFFFFLL)));
    *Y = _mm256_or_si256(rowhi, _mm256_slli_epi64(_mm256_srli_epi64(p, 32), 48));
}

/* Round r on blocks (X, Y), with P1, P0 the products of the round before (see gauss_avx512.c:
 * only the low halves matter until LAST sets the high halves, so a shift brings hi(p) down; the
 * old halves and the key are combined off the multiply's critical path). */
#define ROUND(X, Y, P0, P1, r)                                                               \
    do {                                                                                     \
        __m256i p0_ = _mm256_mul_epu32(X, M0), p1_ = _mm256_mul_epu32(Y, M1);                \
        X = _mm256_xor_si256(_mm256_srli_epi64(p1_, 32), _mm256_xor_si256(P1, K->k0[r]));   \
        Y = _mm256_xor_si256(_mm256_srli_epi64(p0_, 32), _mm256_xor_si256(P0, K->k1[r]));   \
        P0 = p0_;                                                                            \
        P1 = p1_;                                                                            \
    } while (0)

#define LAST(X, Y, P0, P1)                                                                   \
    do {                                                                                     \
        __m256i p0_ = _mm256_mul_epu32(X, M0), p1_ = _mm256_mul_epu32(Y, M1);                \
        X = _mm256_xor_si256(_mm256_xor_si256(_mm256_shuffle_epi32(p1_, 0xB1),               \
                                              _mm256_and_si256(P1, LO)), K->k0[9]);          \
        Y = _mm256_xor_si256(_mm256_xor_si256(_mm256_shuffle_epi32(p0_, 0xB1),               \
                                              _mm256_and_si256(P0, LO)), K->k1[9]);          \
    } while (0)

#define PHILOX10(G)                                                                          \
    do {                                                                                     \
        __m256i P0[G], P1[G];                                                                \
        _Pragma("GCC unroll 4") for (int g = 0; g < (G); g++) {                              \
            P1[g] = _mm256_srli_epi64(X[g], 32);                                             \
            P0[g] = _mm256_srli_epi64(Y[g], 32);                                             \
        }                                                                                    \
        _Pragma("GCC unroll 9") for (int r = 0; r < 9; r++)                                  \
            _Pragma("GCC unroll 4") for (int g = 0; g < (G); g++)                            \
                ROUND(X[g], Y[g], P0[g], P1[g], r);                                          \
        _Pragma("GCC unroll 4") for (int g = 0; g < (G); g++) LAST(X[g], Y[g], P0[g], P1[g]); \
    } while (0)

/* The constants of the first two rounds of a row's attempt-0 blocks whose pair indices share
 * their bits 32..47 (ph): see philox_head in gauss_avx512.c. */
typedef struct head {
    __m256i y1, x2, y2, p0; /* c3 ^ k1[0]; lo(M1 c2) ^ k0[1]; hi(M0 x1) ^ k1[1]; M0 x1 */
} head;

static void philox_head(const dpc_rng_stream *s, uint64_t row, uint64_t ph, head *H)
{
    uint64_t c[4];
    dpc__philox_head(s->key[0], s->key[1], row, ph, c);
    H->y1 = _mm256_set1_epi64x((long long)c[0]);
    H->x2 = _mm256_set1_epi64x((long long)c[1]);
    H->y2 = _mm256_set1_epi64x((long long)c[2]);
    H->p0 = _mm256_set1_epi64x((long long)c[3]);
}

/* Attempt-0 words of the m samples (a multiple of 16) from index0 (even) into w, in sample
 * order: G groups of four blocks at a time, the first two rounds from the constants H. Lanes
 * hold blocks {0,2,1,3}, so unpacklo/unpackhi of (X, Y) are samples 0..3, 4..7. */
#define PHILOX_WORDS(G)                                                                      \
    for (; j + 8 * (G) <= m; j += 8 * (G)) {                                                 \
        __m256i X[G], Y[G], P0[G], P1[G];                                                    \
        __m256i p = _mm256_add_epi64(_mm256_set1_epi64x((long long)((index0 + j) >> 1)), lane); \
        _Pragma("GCC unroll 4") for (int g = 0; g < (G); g++) {                              \
            __m256i q0 = _mm256_mul_epu32(_mm256_add_epi64(p, _mm256_set1_epi64x(4 * g)), M0); \
            Y[g] = _mm256_xor_si256(_mm256_srli_epi64(q0, 32), H->y1);                       \
            P1[g] = _mm256_mul_epu32(Y[g], M1);                                              \
            X[g] = _mm256_xor_si256(_mm256_srli_epi64(P1[g], 32), H->x2);                    \
            Y[g] = _mm256_xor_si256(q0, H->y2);                                              \
            P0[g] = H->p0;                                                                   \
        }                                                                                    \
        _Pragma("GCC unroll 7") for (int r = 2; r < 9; r++)                                  \
            _Pragma("GCC unroll 4") for (int g = 0; g < (G); g++)                            \
                ROUND(X[g], Y[g], P0[g], P1[g], r);                                          \
        _Pragma("GCC unroll 4") for (int g = 0; g < (G); g++) LAST(X[g], Y[g], P0[g], P1[g]); \
        _Pragma("GCC unroll 4") for (int g = 0; g < (G); g++) {                              \
            _mm256_storeu_si256((__m256i *)(w + j + 8 * g), _mm256_unpacklo_epi64(X[g], Y[g])); \
            _mm256_storeu_si256((__m256i *)(w + j + 8 * g + 4),                              \
                                _mm256_unpackhi_epi64(X[g], Y[g]));                          \
        }                                                                                    \
    }

static void philox_words(const keys *K, const head *H, uint64_t index0, size_t m, uint64_t *w)
{
    const __m256i M0 = _mm256_set1_epi64x(DPC__PHILOX_M0), M1 = _mm256_set1_epi64x(DPC__PHILOX_M1);
    const __m256i LO = _mm256_set1_epi64x(0xFFFFFFFFLL);
    const __m256i lane = _mm256_setr_epi64x(0, 2, 1, 3);
    size_t j = 0;
    PHILOX_WORDS(4)
    PHILOX_WORDS(2)
}

/* The same without the constants (any index0, even): the pieces where the pair counter's low
 * word wraps. */
static void philox_words_gen(const keys *K, uint64_t row, uint64_t index0, size_t m,
                             uint64_t *w)
{
    const __m256i M0 = _mm256_set1_epi64x(DPC__PHILOX_M0), M1 = _mm256_set1_epi64x(DPC__PHILOX_M1);
    const __m256i LO = _mm256_set1_epi64x(0xFFFFFFFFLL);
    const __m256i lane = _mm256_setr_epi64x(0, 2, 1, 3);
    for (size_t j = 0; j < m; j += 8) {
        __m256i X[1], Y[1];
        __m256i p = _mm256_add_epi64(_mm256_set1_epi64x((long long)((index0 + j) >> 1)), lane);
        ctr4(p, row, 0, &X[0], &Y[0]);
        PHILOX10(1);
        _mm256_storeu_si256((__m256i *)(w + j), _mm256_unpacklo_epi64(X[0], Y[0]));
        _mm256_storeu_si256((__m256i *)(w + j + 4), _mm256_unpackhi_epi64(X[0], Y[0]));
    }
}

/* Words of attempt a of the R samples index0 + pos[k] into wa (R rounded up to 4 lanes; pos
 * and wa have room), four vectors interleaved. */
static void philox_words_at(const keys *K, uint64_t row, uint64_t index0, const uint32_t *pos,
                            size_t R, uint32_t a, uint64_t *wa)
{
    const __m256i M0 = _mm256_set1_epi64x(DPC__PHILOX_M0), M1 = _mm256_set1_epi64x(DPC__PHILOX_M1);
    const __m256i LO = _mm256_set1_epi64x(0xFFFFFFFFLL), one = _mm256_set1_epi64x(1);
    const __m256i base = _mm256_set1_epi64x((long long)index0);
    __m256i X[4], Y[4], idx[4];
    size_t k = 0;
    for (; k + 16 <= R + 3; k += 16) {
#pragma GCC unroll 4
        for (int g = 0; g < 4; g++) {
            __m128i pk = _mm_loadu_si128((const __m128i *)(pos + k + 4 * g));
            idx[g] = _mm256_add_epi64(base, _mm256_cvtepu32_epi64(pk));
            ctr4(_mm256_srli_epi64(idx[g], 1), row, a & 0xFFFFu, &X[g], &Y[g]);
        }
        PHILOX10(4);
#pragma GCC unroll 4
        for (int g = 0; g < 4; g++) {
            __m256i odd = _mm256_cmpeq_epi64(_mm256_and_si256(idx[g], one), one);
            _mm256_storeu_si256((__m256i *)(wa + k + 4 * g), _mm256_blendv_epi8(X[g], Y[g], odd));
        }
    }
    for (; k < R; k += 4) {
        __m128i pk = _mm_loadu_si128((const __m128i *)(pos + k));
        idx[0] = _mm256_add_epi64(base, _mm256_cvtepu32_epi64(pk));
        ctr4(_mm256_srli_epi64(idx[0], 1), row, a & 0xFFFFu, &X[0], &Y[0]);
        PHILOX10(1);
        __m256i odd = _mm256_cmpeq_epi64(_mm256_and_si256(idx[0], one), one);
        _mm256_storeu_si256((__m256i *)(wa + k), _mm256_blendv_epi8(X[0], Y[0], odd));
    }
}

/* ---- the rejected samples (see gauss_avx512.c) ---------------------------------------------- */

/* exp(e) by the Taylor polynomial of dpc__gauss_wedge_squeeze in Estrin's scheme, products and
 * sums rounded separately (the error bound proved in gauss.c covers it). */
#define MADD(a, b, c) _mm256_add_pd(_mm256_mul_pd(a, b), c) /* rounded twice, as everywhere */
static inline __m256d exp_taylor4(__m256d e)
{
    const double *c = dpc__sqz_taylor;
#define C(k) _mm256_set1_pd(c[k])
    __m256d e2 = _mm256_mul_pd(e, e), e4 = _mm256_mul_pd(e2, e2), e8 = _mm256_mul_pd(e4, e4);
    __m256d q0 = MADD(C(1), e, C(0)), q1 = MADD(C(3), e, C(2));
    __m256d q2 = MADD(C(5), e, C(4)), q3 = MADD(C(7), e, C(6));
    __m256d q4 = MADD(C(9), e, C(8)), q5 = MADD(C(11), e, C(10));
    __m256d q6 = MADD(C(13), e, C(12));
#undef C
    __m256d r0 = MADD(q1, e2, q0), r1 = MADD(q3, e2, q2);
    __m256d r2 = MADD(q5, e2, q4);
    __m256d s0 = MADD(r1, e4, r0), s1 = MADD(q6, e4, r2);
    return MADD(s1, e8, s0);
}
#undef MADD

/* The wedge lanes the squeeze decides (bit l = lane l), *acc those it accepts: the vector
 * form of dpc__gauss_wedge_squeeze with x = u X[i] and the layer edges Xi, Xn. */
static inline int squeeze4(__m256d x, __m256d Xi, __m256d Xn, __m256i wn, int *acc)
{
    const __m256d mhalf = _mm256_set1_pd(-0.5), emax = _mm256_set1_pd(DPC__SQZ_EMAX);
    const __m256d absmask = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7FFFFFFFFFFFFFFFLL));
    __m256d x2 = _mm256_mul_pd(x, x);
    __m256d e0 = _mm256_mul_pd(mhalf, _mm256_sub_pd(_mm256_mul_pd(Xi, Xi), x2));
    __m256d e1 = _mm256_mul_pd(mhalf, _mm256_sub_pd(_mm256_mul_pd(Xn, Xn), x2));
    int in = _mm256_movemask_pd(_mm256_and_pd(
        _mm256_cmp_pd(_mm256_and_pd(e0, absmask), emax, _CMP_LE_OQ),
        _mm256_cmp_pd(_mm256_and_pd(e1, absmask), emax, _CMP_LE_OQ)));
    __m256d p0 = exp_taylor4(e0), p1 = exp_taylor4(e1);
    __m256d v = _mm256_mul_pd(u53_to_double(_mm256_srli_epi64(wn, 11)), _mm256_set1_pd(0x1.0p-53));
    __m256d P = _mm256_add_pd(p1, _mm256_mul_pd(v, _mm256_sub_pd(p0, p1)));
    *acc = in & _mm256_movemask_pd(_mm256_cmp_pd(P, _mm256_set1_pd(1.0 - DPC__SQZ_MARGIN),
                                                 _CMP_LT_OQ));
    return *acc | (in & _mm256_movemask_pd(_mm256_cmp_pd(
                            P, _mm256_set1_pd(1.0 + DPC__SQZ_MARGIN), _CMP_GT_OQ)));
}

#define LOOKUP4(T, b) _mm256_setr_pd((T)[(b)[0]], (T)[(b)[8]], (T)[(b)[16]], (T)[(b)[24]])

/* One round of the rejected samples out[pos[k]] at attempt a (even) with the words wa (attempt
 * a) and wb (a + 1), as slow_step in gauss_avx512.c four lanes at a time: the samples still
 * rejected go to next; returns their number. wa[R..R+4) must be defined. */
static size_t slow_step(const dpc_rng_stream *s, uint64_t row, uint64_t index0, double *out,
                        const uint32_t *pos, const uint64_t *wa, const uint64_t *wb, size_t R,
                        uint32_t a, uint32_t *next, uint32_t *rare)
{
    const __m256d absmask = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7FFFFFFFFFFFFFFFLL));
    size_t left = 0, nr = 0;
    for (size_t k = 0; k < R; k += 4) {
        int valid = R - k >= 4 ? 0xF : (1 << (R - k)) - 1;
        __m256i w = _mm256_loadu_si256((const __m256i *)(wa + k));
        __m256i wn = _mm256_loadu_si256((const __m256i *)(wb + k));
        __m256d d = u53_to_double(_mm256_srli_epi64(w, 11));
        __m256d u = _mm256_sub_pd(_mm256_mul_pd(_mm256_add_pd(d, _mm256_set1_pd(0.5)),
                                                _mm256_set1_pd(0x1.0p-52)),
                                  _mm256_set1_pd(1.0));
        const unsigned char *b = (const unsigned char *)(wa + k); /* layer of lane l: b[8 l] */
        __m256d Xi = LOOKUP4(dpc__zig_x, b), Xn = LOOKUP4(dpc__zig_x + 1, b);
        __m256d x = _mm256_mul_pd(u, Xi);
        int fast = 0, acc;
        if (a)
            fast = valid & _mm256_movemask_pd(_mm256_cmp_pd(_mm256_and_pd(u, absmask),
                                                            LOOKUP4(dpc__zig_ratio, b),
                                                            _CMP_LT_OQ));
        int tail = 0;
        for (unsigned l = 0; l < 4; l++) tail |= (b[8 * l] == 0) << l;
        tail &= valid & ~fast;
        int wedge = valid & ~fast & ~tail, decided = squeeze4(x, Xi, Xn, wn, &acc) & wedge;
        int done = fast | (acc & wedge), hard = tail | (wedge & ~decided);
        double xl[4];
        _mm256_storeu_pd(xl, x);
        for (unsigned l = 0; l < 4; l++) {
            if (done >> l & 1)
                out[pos[k + l]] = xl[l];
            else if (hard >> l & 1)
                rare[nr++] = (uint32_t)(k + l);
            else if (valid >> l & 1)
                next[left++] = pos[k + l];
        }
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

void dpc__gauss_wedge_squeeze_avx2(const uint64_t *w, const uint64_t *wn, size_t n,
                                   signed char *dec)
{
    for (size_t k = 0; k < n; k += 4) {
        __m256i wk = _mm256_loadu_si256((const __m256i *)(w + k));
        __m256d d = u53_to_double(_mm256_srli_epi64(wk, 11));
        __m256d u = _mm256_sub_pd(_mm256_mul_pd(_mm256_add_pd(d, _mm256_set1_pd(0.5)),
                                                _mm256_set1_pd(0x1.0p-52)),
                                  _mm256_set1_pd(1.0));
        const unsigned char *b = (const unsigned char *)(w + k);
        __m256d Xi = LOOKUP4(dpc__zig_x, b), Xn = LOOKUP4(dpc__zig_x + 1, b);
        int acc, decided = squeeze4(_mm256_mul_pd(u, Xi), Xi, Xn,
                                    _mm256_loadu_si256((const __m256i *)(wn + k)), &acc);
        for (unsigned l = 0; l < 4; l++)
            dec[k + l] = (signed char)(decided >> l & 1 ? acc >> l & 1 : -1);
    }
}


/* Finishes the R pending samples of the batch at out (index index0), attempt by attempt,
 * exactly as the scalar sampler would; secure: the words from ChaCha20, P->wa holding the
 * attempt-0 words. */
static void chacha_words_at(const dpc_rng_stream *s, uint64_t row, uint64_t index0,
                            const uint32_t *pos, size_t R, uint32_t a, uint64_t *wa);

static void finish(const keys *K, const dpc_rng_stream *s, uint64_t row, uint64_t index0,
                   double *out, pending *P, size_t R)
{
    uint32_t *pos = P->pos, *next = P->next;
    for (uint32_t a = 0; R; a += 2) {
        for (size_t k = R; k < R + 8; k++) pos[k] = 0; /* whole vectors of defined lanes */
        if (s->secure) {
            if (a) chacha_words_at(s, row, index0, pos, R, a, P->wa);
            chacha_words_at(s, row, index0, pos, R, a + 1, P->wb);
            for (size_t k = R; k < R + 4; k++) P->wa[k] = P->wb[k] = 0;
        } else {
            if (a) philox_words_at(K, row, index0, pos, R, a, P->wa);
            else
                for (size_t k = R; k < R + 4; k++) P->wa[k] = 0;
            philox_words_at(K, row, index0, pos, R, a + 1, P->wb);
        }
        R = slow_step(s, row, index0, out, pos, P->wa, P->wb, R, a, next, P->rare);
        uint32_t *t = pos;
        pos = next;
        next = t;
    }
}

void dpc__gaussian_fill_avx2(const dpc_rng_stream *s, uint64_t row, uint64_t index0, double *out,
                             size_t n)
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
        R += zig_pass(w, m, out + i, (uint32_t)(i - base), P.pos + R, P.wa + R);
        if (R >= PEND_FLUSH || i + m - base >= PEND_SPAN || i + m == n) {
            finish(&K, s, row, index0 + base, out + base, &P, R);
            R = 0;
            base = i + m;
        }
    }
}

/* ---- ChaCha20 (secure mode) ----------------------------------------------------------------- */

static inline __m256i rol32(__m256i v, int n) /* n = 7 or 12 */
{
    return _mm256_or_si256(_mm256_slli_epi32(v, n), _mm256_srli_epi32(v, 32 - n));
}

#define QR8(a, b, c, d)                                                                      \
    do {                                                                                     \
        a = _mm256_add_epi32(a, b); d = _mm256_shuffle_epi8(_mm256_xor_si256(d, a), r16);    \
        c = _mm256_add_epi32(c, d); b = rol32(_mm256_xor_si256(b, c), 12);                   \
        a = _mm256_add_epi32(a, b); d = _mm256_shuffle_epi8(_mm256_xor_si256(d, a), r8);     \
        c = _mm256_add_epi32(c, d); b = rol32(_mm256_xor_si256(b, c), 7);                    \
    } while (0)

/* Eight ChaCha20 blocks (key skey, block counters ctr, nonces (row lo, row hi, non)), one per
 * lane, written to ks in keystream order: block b's 64 bytes at ks + 8 b (u64 units). */
static void chacha8(const uint32_t skey[8], __m256i ctr, uint64_t row, __m256i non, uint64_t *ks)
{
    /* byte shuffles rotating every 32-bit lane left by 16 and by 8 */
    const __m256i r16 = _mm256_setr_epi8(2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13,
                                         2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13);
    const __m256i r8 = _mm256_setr_epi8(3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14,
                                        3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15, 12, 13, 14);
    __m256i in[16], x[16];
    in[0] = _mm256_set1_epi32(0x61707865);
    in[1] = _mm256_set1_epi32(0x3320646e);
    in[2] = _mm256_set1_epi32(0x79622d32);
    in[3] = _mm256_set1_epi32(0x6b206574);
    for (int k = 0; k < 8; k++) in[4 + k] = _mm256_set1_epi32((int)skey[k]);
    in[12] = ctr;
    in[13] = _mm256_set1_epi32((int)(uint32_t)row);
    in[14] = _mm256_set1_epi32((int)(uint32_t)(row >> 32));
    in[15] = non;
    for (int k = 0; k < 16; k++) x[k] = in[k];
    for (int r = 0; r < 10; r++) {
        QR8(x[0], x[4], x[8], x[12]);
        QR8(x[1], x[5], x[9], x[13]);
        QR8(x[2], x[6], x[10], x[14]);
        QR8(x[3], x[7], x[11], x[15]);
        QR8(x[0], x[5], x[10], x[15]);
        QR8(x[1], x[6], x[11], x[12]);
        QR8(x[2], x[7], x[8], x[13]);
        QR8(x[3], x[4], x[9], x[14]);
    }
    for (int k = 0; k < 16; k++) x[k] = _mm256_add_epi32(x[k], in[k]);
    /* transpose: state word q of lane b -> ks32[16 b + q] */
    __m256i t[16], u[16];
    for (int k = 0; k < 16; k += 2) {
        t[k] = _mm256_unpacklo_epi32(x[k], x[k + 1]);     /* per 128-bit lane: a0 b0 a1 b1 */
        t[k + 1] = _mm256_unpackhi_epi32(x[k], x[k + 1]); /* a2 b2 a3 b3 */
    }
    for (int g = 0; g < 16; g += 4) { /* words g..g+3 of the 4 blocks of every 128-bit lane */
        u[g] = _mm256_unpacklo_epi64(t[g], t[g + 2]);     /* block 4L + 0 */
        u[g + 1] = _mm256_unpackhi_epi64(t[g], t[g + 2]); /* block 4L + 1 */
        u[g + 2] = _mm256_unpacklo_epi64(t[g + 1], t[g + 3]);
        u[g + 3] = _mm256_unpackhi_epi64(t[g + 1], t[g + 3]);
    }
    for (int k = 0; k < 4; k++) { /* block 4L + k: lane L of u[k], u[4+k], u[8+k], u[12+k] */
        _mm256_storeu_si256((__m256i *)(ks + 8 * k),
                            _mm256_permute2x128_si256(u[k], u[4 + k], 0x20));
        _mm256_storeu_si256((__m256i *)(ks + 8 * k + 4),
                            _mm256_permute2x128_si256(u[8 + k], u[12 + k], 0x20));
        _mm256_storeu_si256((__m256i *)(ks + 8 * (4 + k)),
                            _mm256_permute2x128_si256(u[k], u[4 + k], 0x31));
        _mm256_storeu_si256((__m256i *)(ks + 8 * (4 + k) + 4),
                            _mm256_permute2x128_si256(u[8 + k], u[12 + k], 0x31));
    }
}

/* Words of attempt a of the R samples index0 + pos[k] into wa, eight blocks at a time. */
static void chacha_words_at(const dpc_rng_stream *s, uint64_t row, uint64_t index0,
                            const uint32_t *pos, size_t R, uint32_t a, uint64_t *wa)
{
    uint64_t ks[64];
    uint32_t ctr[8], non[8];
    for (size_t k = 0; k < R; k += 8) {
        for (size_t l = 0; l < 8; l++) {
            uint64_t blk = (index0 + pos[k + l]) >> 3;
            ctr[l] = (uint32_t)blk;
            non[l] = (uint32_t)(((blk >> 32) & 0xFFFFu) << 16) | (a & 0xFFFFu);
        }
        chacha8(s->skey, _mm256_loadu_si256((const __m256i *)ctr), row,
                _mm256_loadu_si256((const __m256i *)non), ks);
        for (size_t l = 0; l < 8 && k + l < R; l++)
            wa[k + l] = ks[8 * l + ((index0 + pos[k + l]) & 7)];
    }
}

void dpc__gaussian_fill_secure_avx2(const dpc_rng_stream *s, uint64_t row, uint64_t index0,
                                    double *out, size_t n)
{
    uint64_t wbuf[WBUF + 512], *w = unalias(wbuf, out);
    uint32_t ctr[8], non[8];
    pending P;
    size_t R = 0, base = 0; /* as in dpc__gaussian_fill_avx2 */
    for (size_t i = 0; i < n; i += WBUF) {
        size_t m = n - i < WBUF ? n - i : WBUF; /* a multiple of 64: 8 blocks */
        for (size_t j = 0; j < m; j += 64) {
            uint64_t blk0 = (index0 + i + j) >> 3;
            for (unsigned b = 0; b < 8; b++) {
                ctr[b] = (uint32_t)(blk0 + b);
                non[b] = (uint32_t)((((blk0 + b) >> 32) & 0xFFFFu) << 16); /* attempt 0 */
            }
            chacha8(s->skey, _mm256_loadu_si256((const __m256i *)ctr), row,
                    _mm256_loadu_si256((const __m256i *)non), w + j);
        }
        R += zig_pass(w, m, out + i, (uint32_t)(i - base), P.pos + R, P.wa + R);
        if (R >= PEND_FLUSH || i + m - base >= PEND_SPAN || i + m == n) {
            finish(NULL, s, row, index0 + base, out + base, &P, R);
            R = 0;
            base = i + m;
        }
    }
}

#else
typedef int dpc__gauss_avx2_unused; /* non-x86: nothing to compile */
#endif
