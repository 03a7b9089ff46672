/* gauss_avx2.c — AVX2 kernel of dpc_rng_gaussian_fill: eight Philox4x32-10 blocks per vector
 * (16 samples), then the ziggurat fast path four samples at a time; rejected lanes (~1.2%) go
 * to the scalar slow path. Integer steps are exact and the floating-point steps are the same
 * IEEE operations as the scalar code ((double)(w >> 11) exact, + 0.5, * 2^-52, - 1, |u| < R[i],
 * u * X[i]), so the output is bit-identical to dpc_rng_gaussian. Selected at run time. */
#include "rng/gauss_impl.h"
#include "rng/philox_impl.h"
#include "rng/ziggurat.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))

/* lo and hi 32-bit halves of a (8 x u32) * m products. */
AVX2 static inline void mulhilo8(__m256i a, __m256i m, __m256i *lo, __m256i *hi)
{
    __m256i pe = _mm256_mul_epu32(a, m);                        /* lanes 0,2,4,6 -> 64 bit */
    __m256i po = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), m); /* lanes 1,3,5,7 */
    *lo = _mm256_blend_epi32(pe, _mm256_slli_epi64(po, 32), 0xAA);
    *hi = _mm256_blend_epi32(_mm256_srli_epi64(pe, 32), po, 0xAA);
}

/* Exact conversion of 4 x u64 values < 2^53 to double: hi * 2^32 + lo, both parts exact. */
AVX2 static inline __m256d u53_to_double(__m256i m)
{
    const __m256i magic = _mm256_set1_epi64x(0x4330000000000000LL); /* 2^52 */
    const __m256d two52 = _mm256_set1_pd(0x1.0p52), two32 = _mm256_set1_pd(0x1.0p32);
    __m256i lo = _mm256_and_si256(m, _mm256_set1_epi64x(0xFFFFFFFFLL));
    __m256i hi = _mm256_srli_epi64(m, 32);
    __m256d dlo = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(lo, magic)), two52);
    __m256d dhi = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(hi, magic)), two52);
    return _mm256_add_pd(_mm256_mul_pd(dhi, two32), dlo);
}

/* Ziggurat fast path for 4 words (samples index..index+3); writes out[0..3]. */
AVX2 static inline void zig4(const dpc_rng_stream *s, uint64_t row, uint64_t index, __m256i w,
                             double *out)
{
    const __m256d half = _mm256_set1_pd(0.5), scale = _mm256_set1_pd(0x1.0p-52);
    const __m256d one = _mm256_set1_pd(1.0);
    const __m256d absmask = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7FFFFFFFFFFFFFFFLL));
    __m256i layer = _mm256_and_si256(w, _mm256_set1_epi64x(255));
    __m256d d = u53_to_double(_mm256_srli_epi64(w, 11));
    __m256d u = _mm256_sub_pd(_mm256_mul_pd(_mm256_add_pd(d, half), scale), one);
    __m256d r = _mm256_i64gather_pd(dpc__zig_ratio, layer, 8);
    __m256d x = _mm256_i64gather_pd(dpc__zig_x, layer, 8);
    __m256d ok = _mm256_cmp_pd(_mm256_and_pd(u, absmask), r, _CMP_LT_OQ);
    _mm256_storeu_pd(out, _mm256_mul_pd(u, x));
    int mask = _mm256_movemask_pd(ok);
    if (mask != 0xF) {
        uint64_t ws[4];
        _mm256_storeu_si256((__m256i *)ws, w);
        for (int l = 0; l < 4; l++)
            if (!(mask >> l & 1)) out[l] = dpc__gauss_from_word(s, row, index + (uint64_t)l, ws[l]);
    }
}

AVX2 static int fill_avx2(const dpc_rng_stream *s, uint64_t row, uint64_t index0, double *out,
                          size_t n)
{
    const __m256i M0 = _mm256_set1_epi32((int)DPC__PHILOX_M0);
    const __m256i M1 = _mm256_set1_epi32((int)DPC__PHILOX_M1);
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i c1init = _mm256_set1_epi32((int)(uint32_t)row);
    const __m256i c2init = _mm256_set1_epi32((int)(uint32_t)(row >> 32));
    for (size_t i = 0; i < n; i += 16) {
        uint64_t pair0 = (index0 + i) >> 1; /* 8 blocks: pairs pair0 .. pair0 + 7 */
        /* ctr[0] = pair (low 32), ctr[3] = ((pair >> 32) & 0xFFFF) << 16; the 8 pairs never
         * cross a 2^32 boundary in the high bits unless pair0's low word wraps: handle it. */
        uint32_t plo = (uint32_t)pair0;
        __m256i c0 = _mm256_add_epi32(_mm256_set1_epi32((int)plo), lane);
        __m256i c1 = c1init, c2 = c2init;
        __m256i c3;
        if (plo > 0xFFFFFFFFu - 7u) { /* rare: the low word wraps inside this batch */
            uint32_t tmp[8];
            for (int l = 0; l < 8; l++)
                tmp[l] = (uint32_t)((((pair0 + (uint64_t)l) >> 32) & 0xFFFFu) << 16);
            c3 = _mm256_loadu_si256((const __m256i *)tmp);
        } else {
            c3 = _mm256_set1_epi32((int)(uint32_t)(((pair0 >> 32) & 0xFFFFu) << 16));
        }
        uint32_t k0 = s->key[0], k1 = s->key[1];
        for (int r = 0; r < 10; r++) {
            if (r > 0) {
                k0 += DPC__PHILOX_W0;
                k1 += DPC__PHILOX_W1;
            }
            __m256i lo0, hi0, lo1, hi1;
            mulhilo8(c0, M0, &lo0, &hi0);
            mulhilo8(c2, M1, &lo1, &hi1);
            __m256i n0 = _mm256_xor_si256(_mm256_xor_si256(hi1, c1), _mm256_set1_epi32((int)k0));
            __m256i n2 = _mm256_xor_si256(_mm256_xor_si256(hi0, c3), _mm256_set1_epi32((int)k1));
            c0 = n0;
            c1 = lo1;
            c2 = n2;
            c3 = lo0;
        }
        /* words: sample 2j = c1:c0 of block j, sample 2j+1 = c3:c2 */
        __m256i E = _mm256_unpacklo_epi32(c0, c1), E2 = _mm256_unpackhi_epi32(c0, c1);
        __m256i O = _mm256_unpacklo_epi32(c2, c3), O2 = _mm256_unpackhi_epi32(c2, c3);
        __m256i a = _mm256_unpacklo_epi64(E, O);   /* b0e b0o | b4e b4o */
        __m256i b = _mm256_unpackhi_epi64(E, O);   /* b1e b1o | b5e b5o */
        __m256i c = _mm256_unpacklo_epi64(E2, O2); /* b2 | b6 */
        __m256i d = _mm256_unpackhi_epi64(E2, O2); /* b3 | b7 */
        __m256i w01 = _mm256_permute2x128_si256(a, b, 0x20);
        __m256i w23 = _mm256_permute2x128_si256(c, d, 0x20);
        __m256i w45 = _mm256_permute2x128_si256(a, b, 0x31);
        __m256i w67 = _mm256_permute2x128_si256(c, d, 0x31);
        uint64_t idx = index0 + i;
        zig4(s, row, idx, w01, out + i);
        zig4(s, row, idx + 4, w23, out + i + 4);
        zig4(s, row, idx + 8, w45, out + i + 8);
        zig4(s, row, idx + 12, w67, out + i + 12);
    }
    return 1;
}

int dpc__gaussian_fill_avx2(const dpc_rng_stream *s, uint64_t row, uint64_t index0, double *out,
                            size_t n)
{
    if (!__builtin_cpu_supports("avx2")) return 0;
    return fill_avx2(s, row, index0, out, n);
}

#else
int dpc__gaussian_fill_avx2(const dpc_rng_stream *s, uint64_t row, uint64_t index0, double *out,
                            size_t n)
{
    (void)s; (void)row; (void)index0; (void)out; (void)n;
    return 0;
}
#endif
