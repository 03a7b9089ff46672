/* gauss_avx2.c — the AVX2 level of the bulk Gaussian fill (compiled with the AVX2 flags; called
 * only when the CPU has them, see dpc_rng_gaussian_fill_isa): gauss_kernel.inc on 256-bit
 * vectors, four u64 lanes.
 *
 * What AVX2 lacks is spelled here with the sequences this kernel has always used: the exact
 * u64 -> double conversion of w >> 11 < 2^53 as hi * 2^32 + lo (both parts exact), lane masks
 * by movemask, the three-way xor as two xors, the 32-bit half swap as a shuffle, ChaCha20's
 * 16- and 8-bit rotations as byte shuffles; no compress or scatter (GL_COMPRESS 0: walks over
 * the mask bits instead). Four groups of four blocks in the Philox pass and one set of eight
 * ChaCha20 blocks per call: sixteen vector registers. */
#include "rng/gauss_impl.h"
#include "rng/philox_impl.h"
#include "rng/ziggurat.h"

#if defined(__AVX2__)
#include <immintrin.h>

#define GL_LEVEL avx2
#define GL_LANES 4
#define GL_FULL 0xF
#define GL_PHILOX_GROUPS(W) W(4) W(2)
#define GL_COMPRESS 0
#define GL_CHACHA_SETS 1

typedef __m256i vi;
typedef __m256d vd;
typedef int lmask;

/* u64 lanes */
#define V_SET1(x) _mm256_set1_epi64x((long long)(x))
#define V_LOAD(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define V_LOADM(m, p) V_LOAD(p) /* whole vectors: the lanes past the end are defined */
#define V_STORE(p, v) _mm256_storeu_si256((__m256i *)(void *)(p), v)
#define V_ADD _mm256_add_epi64
#define V_MULU _mm256_mul_epu32
#define V_XOR _mm256_xor_si256
#define V_AND _mm256_and_si256
#define V_OR _mm256_or_si256
#define V_SRL _mm256_srli_epi64
#define V_SLL _mm256_slli_epi64
#define V_XOR3(a, b, c) V_XOR(a, V_XOR(b, c))
#define V_XORAND(a, b, c) V_XOR(a, V_AND(b, c))
#define V_SWAP32(v) _mm256_shuffle_epi32(v, 0xB1)
#define V_UNLO _mm256_unpacklo_epi64
#define V_UNHI _mm256_unpackhi_epi64
#define V_PAIRLANES _mm256_setr_epi64x(0, 2, 1, 3)
#define V_POS(p) _mm256_cvtepu32_epi64(_mm_loadu_si128((const __m128i *)(const void *)(p)))
#define V_PICK_ODD(i, x, y)                                                                  \
    _mm256_blendv_epi8(x, y, _mm256_cmpeq_epi64(V_AND(i, V_SET1(1)), V_SET1(1)))

/* u32 lanes */
#define V_SET1_32(x) _mm256_set1_epi32((int)(x))
#define V_ADD32 _mm256_add_epi32
#define V_UNLO32 _mm256_unpacklo_epi32
#define V_UNHI32 _mm256_unpackhi_epi32

/* Every 32-bit lane rotated left by n (16 and 8: byte shuffles). */
static inline vi V_ROL32(vi v, int n)
{
    if (n == 16)
        return _mm256_shuffle_epi8(v, _mm256_setr_epi8(2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14,
                                                       15, 12, 13, 2, 3, 0, 1, 6, 7, 4, 5, 10,
                                                       11, 8, 9, 14, 15, 12, 13));
    if (n == 8)
        return _mm256_shuffle_epi8(v, _mm256_setr_epi8(3, 0, 1, 2, 7, 4, 5, 6, 11, 8, 9, 10, 15,
                                                       12, 13, 14, 3, 0, 1, 2, 7, 4, 5, 6, 11,
                                                       8, 9, 10, 15, 12, 13, 14));
    return _mm256_or_si256(_mm256_slli_epi32(v, n), _mm256_srli_epi32(v, 32 - n));
}

/* doubles */
#define D_SET1 _mm256_set1_pd
#define D_ADD _mm256_add_pd
#define D_SUB _mm256_sub_pd
#define D_MUL _mm256_mul_pd
#define D_ABS(v) _mm256_and_pd(v, _mm256_castsi256_pd(_mm256_set1_epi64x(0x7FFFFFFFFFFFFFFFLL)))
#define D_STORE _mm256_storeu_pd
#define D_CMP(a, b, pred) _mm256_movemask_pd(_mm256_cmp_pd(a, b, pred))
#define D_CMPM(m, a, b, pred) ((m) & D_CMP(a, b, pred))
#define D_LOOKUP(T, b) _mm256_setr_pd((T)[(b)[0]], (T)[(b)[8]], (T)[(b)[16]], (T)[(b)[24]])

/* Exact conversion of 4 x u64 values < 2^53 to double: hi * 2^32 + lo, both parts exact. */
static inline vd D_U53(vi m)
{
    const vi magic = _mm256_set1_epi64x(0x4330000000000000LL); /* 2^52 */
    const vd two52 = _mm256_set1_pd(0x1.0p52), two32 = _mm256_set1_pd(0x1.0p32);
    vi lo = _mm256_and_si256(m, _mm256_set1_epi64x(0xFFFFFFFFLL));
    vi hi = _mm256_srli_epi64(m, 32);
    vd dlo = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(lo, magic)), two52);
    vd dhi = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(hi, magic)), two52);
    return _mm256_add_pd(_mm256_mul_pd(dhi, two32), dlo);
}

/* (R[i], X[i]) of the layers b[0], b[8], b[16], b[24]: one 16-byte load per lane. */
static inline void zig_pairs(const unsigned char *b, vd *r, vd *x)
{
    const double *P = dpc__zig_pair;
#define PAIR(l) _mm_loadu_pd(P + 2 * (size_t)b[8 * (l)])
    vd v0 = _mm256_insertf128_pd(_mm256_castpd128_pd256(PAIR(0)), PAIR(2), 1);
    vd v1 = _mm256_insertf128_pd(_mm256_castpd128_pd256(PAIR(1)), PAIR(3), 1);
#undef PAIR
    *r = _mm256_unpacklo_pd(v0, v1);
    *x = _mm256_unpackhi_pd(v0, v1);
}

/* The lanes of m whose layer byte is 0 (the tail). */
static inline lmask layer0(lmask m, vi w, const unsigned char *b)
{
    (void)w;
    lmask t = 0;
    for (unsigned l = 0; l < 4; l++) t |= (b[8 * l] == 0) << l;
    return t & m;
}

/* Blocks 4L + k of the transposed state: lanes L of u[k], u[4+k], u[8+k], u[12+k]. */
static inline void chacha_out(const vi u[16], uint64_t *ks)
{
    for (int k = 0; k < 4; k++) {
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

#include "rng/gauss_kernel.inc"

#else
typedef int dpc__gauss_avx2_unused; /* non-x86: nothing to compile */
#endif
