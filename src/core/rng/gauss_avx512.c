/* gauss_avx512.c — the AVX-512 level of the bulk Gaussian fill (compiled with the AVX-512
 * flags; called only when the CPU has them, see dpc_rng_gaussian_fill_isa): gauss_kernel.inc
 * on 512-bit vectors, eight u64 lanes.
 *
 * The level's own instructions: vpternlogq for the Philox rounds' three-way xors and
 * a ^ (b & c), 64-bit rotates, vcvtuqq2pd, mask registers for every lane test, vpcompressd
 * for the lists of rejected samples and vscatterdpd for the slow path's accepted ones
 * (GL_COMPRESS 1), 32-bit rotates in ChaCha20. Thirty-two vector registers: six groups of
 * eight blocks interleaved in the Philox pass, two sets of sixteen ChaCha20 blocks per call. */
#include "rng/gauss_impl.h"
#include "rng/philox_impl.h"
#include "rng/ziggurat.h"

#if defined(__AVX512F__) && defined(__AVX512DQ__) && defined(__AVX512VL__)
#include <immintrin.h>

#define GL_LEVEL avx512
#define GL_LANES 8
#define GL_FULL 0xFF
#define GL_PHILOX_GROUPS(W) W(6) W(2) W(1)
#define GL_COMPRESS 1
#define GL_CHACHA_SETS 2

typedef __m512i vi;
typedef __m512d vd;
typedef __mmask8 lmask;

/* u64 lanes */
#define V_SET1(x) _mm512_set1_epi64((long long)(x))
#define V_LOAD(p) _mm512_loadu_si512((const void *)(p))
#define V_LOADM(m, p) _mm512_maskz_loadu_epi64(m, p)
#define V_STORE(p, v) _mm512_storeu_si512((void *)(p), v)
#define V_ADD _mm512_add_epi64
#define V_MULU _mm512_mul_epu32
#define V_XOR _mm512_xor_si512
#define V_AND _mm512_and_si512
#define V_OR _mm512_or_si512
#define V_SRL _mm512_srli_epi64
#define V_SLL _mm512_slli_epi64
#define V_XOR3(a, b, c) _mm512_ternarylogic_epi64(a, b, c, 0x96)
#define V_XORAND(a, b, c) _mm512_ternarylogic_epi64(a, b, c, 0x78)
#define V_SWAP32(v) _mm512_rol_epi64(v, 32)
#define V_UNLO _mm512_unpacklo_epi64
#define V_UNHI _mm512_unpackhi_epi64
#define V_PAIRLANES _mm512_setr_epi64(0, 4, 1, 5, 2, 6, 3, 7)
#define V_POS(p) _mm512_cvtepu32_epi64(_mm256_loadu_si256((const __m256i *)(const void *)(p)))
#define V_PICK_ODD(i, x, y) _mm512_mask_blend_epi64(_mm512_test_epi64_mask(i, V_SET1(1)), x, y)

/* u32 lanes */
#define V_SET1_32(x) _mm512_set1_epi32((int)(x))
#define V_ADD32 _mm512_add_epi32
#define V_ROL32 _mm512_rol_epi32
#define V_UNLO32 _mm512_unpacklo_epi32
#define V_UNHI32 _mm512_unpackhi_epi32

/* doubles */
#define D_SET1 _mm512_set1_pd
#define D_ADD _mm512_add_pd
#define D_SUB _mm512_sub_pd
#define D_MUL _mm512_mul_pd
#define D_ABS _mm512_abs_pd
#define D_STORE _mm512_storeu_pd
#define D_U53 _mm512_cvtepu64_pd /* exact below 2^53 */
#define D_CMP(a, b, pred) _mm512_cmp_pd_mask(a, b, pred)
#define D_CMPM(m, a, b, pred) _mm512_mask_cmp_pd_mask(m, a, b, pred)
/* scalar loads (a hardware gather is several times slower here) */
#define D_LOOKUP(T, b)                                                                       \
    _mm512_setr_pd((T)[(b)[0]], (T)[(b)[8]], (T)[(b)[16]], (T)[(b)[24]], (T)[(b)[32]],       \
                   (T)[(b)[40]], (T)[(b)[48]], (T)[(b)[56]])

/* (R[i], X[i]) of the layers b[0], b[8], ..., b[56]: one 16-byte load per lane. */
static inline void zig_pairs(const unsigned char *b, vd *r, vd *x)
{
    const double *P = dpc__zig_pair;
#define PAIR(l) _mm_loadu_pd(P + 2 * (size_t)b[8 * (l)])
    __m256d a0 = _mm256_insertf128_pd(_mm256_castpd128_pd256(PAIR(0)), PAIR(2), 1);
    __m256d a1 = _mm256_insertf128_pd(_mm256_castpd128_pd256(PAIR(1)), PAIR(3), 1);
    __m256d b0 = _mm256_insertf128_pd(_mm256_castpd128_pd256(PAIR(4)), PAIR(6), 1);
    __m256d b1 = _mm256_insertf128_pd(_mm256_castpd128_pd256(PAIR(5)), PAIR(7), 1);
#undef PAIR
    vd v0 = _mm512_insertf64x4(_mm512_castpd256_pd512(a0), b0, 1);
    vd v1 = _mm512_insertf64x4(_mm512_castpd256_pd512(a1), b1, 1);
    *r = _mm512_unpacklo_pd(v0, v1);
    *x = _mm512_unpackhi_pd(v0, v1);
}

/* The lanes of m whose layer (the low byte of w) is 0 (the tail). */
static inline lmask layer0(lmask m, vi w, const unsigned char *b)
{
    (void)b;
    return _mm512_mask_testn_epi64_mask(m, w, _mm512_set1_epi64(255));
}

/* Blocks 4L + k of the transposed state: lanes L of u[k], u[4+k], u[8+k], u[12+k]. */
static inline void chacha_out(const vi u[16], uint64_t *ks)
{
    for (int k = 0; k < 4; k++) {
        vi p0 = _mm512_shuffle_i32x4(u[k], u[4 + k], 0x44);
        vi p1 = _mm512_shuffle_i32x4(u[k], u[4 + k], 0xEE);
        vi q0 = _mm512_shuffle_i32x4(u[8 + k], u[12 + k], 0x44);
        vi q1 = _mm512_shuffle_i32x4(u[8 + k], u[12 + k], 0xEE);
        _mm512_storeu_si512((void *)(ks + 8 * (0 + k)), _mm512_shuffle_i32x4(p0, q0, 0x88));
        _mm512_storeu_si512((void *)(ks + 8 * (4 + k)), _mm512_shuffle_i32x4(p0, q0, 0xDD));
        _mm512_storeu_si512((void *)(ks + 8 * (8 + k)), _mm512_shuffle_i32x4(p1, q1, 0x88));
        _mm512_storeu_si512((void *)(ks + 8 * (12 + k)), _mm512_shuffle_i32x4(p1, q1, 0xDD));
    }
}

/* GL_COMPRESS: the positions first + l of the set bits l of m (16 lanes) stored to dst, in
 * order (a whole vector is written); returns their number. */
static inline size_t compress_seq(uint32_t *dst, unsigned m, uint32_t first)
{
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    __m512i p = _mm512_add_epi32(_mm512_set1_epi32((int)first), lane);
    _mm512_storeu_si512((void *)dst, _mm512_maskz_compress_epi32((__mmask16)m, p));
    return (size_t)__builtin_popcount(m);
}

/* The slow path's eight u32 positions: masked load, scatter of the accepted values, compress
 * (a whole vector is written to dst). */
typedef __m256i vpos;
#define P_LOADM(m, p) _mm256_maskz_loadu_epi32(m, p)
#define P_SCATTER(out, m, p, x) _mm512_mask_i32scatter_pd(out, m, p, x, 8)
#define P_SEQ(k)                                                                             \
    _mm256_add_epi32(_mm256_set1_epi32((int)(k)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))
static inline size_t compress_u32(uint32_t *dst, lmask m, vpos v)
{
    _mm256_storeu_si256((__m256i *)dst, _mm256_maskz_compress_epi32(m, v));
    return (size_t)__builtin_popcount(m);
}

#include "rng/gauss_kernel.inc"

#else
typedef int dpc__gauss_avx512_unused; /* non-x86 or no AVX-512 flags: nothing to compile */
#endif
