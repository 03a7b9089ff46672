/* gauss.c — exact standard-normal sampling on the counter-based stream (ziggurat).
 *
 * Method (Marsaglia & Tsang 2000, in Doornik's 2005 "ZIGNOR" form), 256 layers of equal area V:
 *   word w = 64 random bits at (row, index, attempt);
 *   layer i = w & 255; u = ((w >> 11) + 1/2) * 2^-52 - 1, a symmetric uniform in (-1, 1);
 *   if |u| < X[i+1]/X[i]        accept u*X[i]                       (~98.8% of draws)
 *   else if i == 0              tail beyond r (Marsaglia 1964): x = -ln(U1)/r, y = -ln(U2),
 *                               accept r + x when 2y > x^2, sign of u
 *   else                        wedge: accept x = u*X[i] with probability
 *                               (f(x) - f(X[i])) / (f(X[i+1]) - f(X[i]))
 *   otherwise continue with the next attempt words of the same (row, index).
 * Every accepted value has exactly the N(0,1) law up to the 2^-52 grid of u (the rejection steps
 * are exact), so the sampler is exact in the same sense as inversion with a 53-bit uniform.
 */
#include "dpcorr/rng.h"
#include "rng/gauss_impl.h"
#include "rng/chacha_impl.h"
#include "rng/philox_impl.h"
#include "rng/ziggurat.h"

#include <math.h>

/* Uniform in (0, 1] with 53 bits, never 0 (safe for log). */
static inline double u01_open0(uint64_t w) { return (double)((w >> 11) + 1) * 0x1.0p-53; }

/* The wedge test of layer i >= 1 for u with the uniform word wv of the next attempt: returns 1
 * and the sample x = u X[i] when accepted with probability
 * (f(x) - f(X[i])) / (f(X[i+1]) - f(X[i])). The reference decision: every faster form
 * (dpc__gauss_wedge_squeeze and its vector twins) must agree with it. */
int dpc__gauss_wedge(unsigned i, double u, uint64_t wv, double *x)
{
    const double *X = dpc__zig_x;
    *x = u * X[i];
    double f0 = exp(-0.5 * (X[i] * X[i] - *x * *x));         /* f(X[i]) / f(x)   <= 1 */
    double f1 = exp(-0.5 * (X[i + 1] * X[i + 1] - *x * *x)); /* f(X[i+1]) / f(x) >= 1 */
    double v = (double)(wv >> 11) * 0x1.0p-53;
    return f1 + v * (f0 - f1) < 1.0;
}

/* exp(e) by its Taylor polynomial of degree 13, Horner, for |e| <= DPC__SQZ_EMAX. */
const double dpc__sqz_taylor[14] = {
    1.0,           1.0,           1.0 / 2,          1.0 / 6,          1.0 / 24,
    1.0 / 120,     1.0 / 720,     1.0 / 5040,       1.0 / 40320,      1.0 / 362880,
    1.0 / 3628800, 1.0 / 39916800, 1.0 / 479001600, 1.0 / 6227020800.0,
};

static double exp_taylor(double e)
{
    const double *c = dpc__sqz_taylor;
    double p = c[13];
    for (int k = 12; k >= 0; k--) p = p * e + c[k];
    return p;
}

/* The same decision as dpc__gauss_wedge without libm's exp, when it is clear: returns 1
 * (accept, *x = u X[i]), 0 (reject) or -1 (too close to call: use dpc__gauss_wedge).
 *
 * Why it agrees. Write e0, e1 for the two exponents exactly as dpc__gauss_wedge rounds them
 * (the same IEEE operations on the same x), f0 = exp(e0), f1 = exp(e1) for libm's values and
 * E = f1 + v (f0 - f1) for its rounded test expression. With |x| in [X[i+1], X[i]] (up to
 * rounding), |e0|, |e1| <= (X[i]^2 - X[i+1]^2) / 2 <= 0.73 (layer 1; tests/test_rng_squeeze.c
 * checks all), f0 in [0.48, 1] and f1 in [1, 2.1].
 *  1. libm's exp is within 1 ulp: |f_k - exp(e_k)| <= 2^-52 * 2.1 < 5e-16.
 *  2. p_k = the degree-13 Taylor polynomial at e_k, evaluated in double by any scheme in which
 *     every term c_j e^j passes through at most 28 roundings (Horner here: 26; the kernels'
 *     Estrin form: 11): truncation <= 0.8^14 / 14! * e^0.8 < 1.2e-12 for |e| <= 0.8, rounding
 *     of the coefficients and the evaluation <= 29 * 2^-53 * e^0.8 < 1e-14 (sum_j |c_j e^j| <=
 *     e^0.8); so |p_k - f_k| < d = 1.3e-12.
 *  3. The test expression is a convex combination (v in [0, 1)): the exact
 *     p1 + v (p0 - p1) is within d of the exact f1 + v (f0 - f1); each of the two rounded
 *     evaluations (three operations on values below 4) is within 3 * 2^-52 * 2 < 1.4e-15 of
 *     its exact value. So |P - E| < d + 2.8e-15 < 1.4e-12 for the rounded P computed here.
 * Hence P < 1 - M implies E < 1 (accept), and P > 1 + M implies E > 1 (reject), for any
 * M >= 1.4e-12; DPC__SQZ_MARGIN = 1e-9 leaves a factor of 700. Between the two (a band of
 * width 2M around the boundary, met by 4 of 2 * 10^7 random wedge samples) and for exponents
 * outside [-DPC__SQZ_EMAX, DPC__SQZ_EMAX] (none with these tables) the caller asks
 * dpc__gauss_wedge. Tests: every fill level against dpc_rng_gaussian, and brute force over
 * wedge samples including ones constructed at the boundary (tests/test_rng_squeeze.c). */
int dpc__gauss_wedge_squeeze(unsigned i, double u, uint64_t wv, double *x)
{
    const double *X = dpc__zig_x;
    *x = u * X[i];
    double x2 = *x * *x;
    double e0 = -0.5 * (X[i] * X[i] - x2), e1 = -0.5 * (X[i + 1] * X[i + 1] - x2);
    if (!(fabs(e0) <= DPC__SQZ_EMAX && fabs(e1) <= DPC__SQZ_EMAX)) return -1;
    double p0 = exp_taylor(e0), p1 = exp_taylor(e1);
    double v = (double)(wv >> 11) * 0x1.0p-53;
    double P = p1 + v * (p0 - p1);
    if (P < 1.0 - DPC__SQZ_MARGIN) return 1;
    if (P > 1.0 + DPC__SQZ_MARGIN) return 0;
    return -1;
}

/* Slow path: the full algorithm starting at attempt `a` with its word w already drawn. */
double dpc__gauss_from(const dpc_rng_stream *s, uint64_t row, uint64_t index, uint32_t a,
                       uint64_t w)
{
    for (;;) {
        unsigned i = (unsigned)(w & 255u);
        double u = ((double)(w >> 11) + 0.5) * 0x1.0p-52 - 1.0;
        if (fabs(u) < dpc__zig_ratio[i]) return u * dpc__zig_x[i];
        if (i == 0) {
            /* Tail: exact exponential rejection; uses two fresh words per trial. */
            const double r = dpc__zig_r;
            for (;;) {
                double x = -log(u01_open0(dpc_rng_word(s, row, index, ++a))) / r;
                double y = -log(u01_open0(dpc_rng_word(s, row, index, ++a)));
                if (y + y > x * x) return u < 0 ? -(r + x) : r + x;
            }
        }
        double x;
        if (dpc__gauss_wedge(i, u, dpc_rng_word(s, row, index, ++a), &x)) return x;
        w = dpc_rng_word(s, row, index, ++a);
    }
}

double dpc_rng_gaussian(const dpc_rng_stream *s, uint64_t row, uint64_t index)
{
    return dpc__gauss_from(s, row, index, 0, dpc_rng_word(s, row, index, 0));
}

void dpc_rng_gaussian_fill_naive(const dpc_rng_stream *s, uint64_t row, uint64_t index0,
                                 double *out, size_t n)
{
    for (size_t i = 0; i < n; i++) out[i] = dpc_rng_gaussian(s, row, index0 + i);
}

/* Bulk path: Philox blocks for attempt 0 are computed for a run of index pairs in
 * structure-of-arrays form (a loop the compiler vectorises), then the ziggurat fast path is
 * applied per element; the rare rejections fall back to gauss_from, which continues exactly
 * as the scalar sampler would. Hence bit-identical to dpc_rng_gaussian. */
#define DPC__FILL_PAIRS 128

static void philox_pairs(uint32_t *restrict o0, uint32_t *restrict o1, uint32_t *restrict o2,
                         uint32_t *restrict o3, uint64_t pair0, size_t npairs, uint64_t row,
                         uint32_t k0, uint32_t k1)
{
    uint32_t c1 = (uint32_t)row, c2 = (uint32_t)(row >> 32);
    for (size_t j = 0; j < npairs; j++) {
        uint64_t p = pair0 + j; /* index >> 1 */
        o0[j] = (uint32_t)p;
        o1[j] = c1;
        o2[j] = c2;
        o3[j] = (uint32_t)(((p >> 32) & 0xFFFFu) << 16);
    }
    uint32_t ka = k0, kb = k1;
    for (int r = 0; r < 10; r++) {
        if (r > 0) {
            ka += DPC__PHILOX_W0;
            kb += DPC__PHILOX_W1;
        }
        for (size_t j = 0; j < npairs; j++) {
            uint64_t p0 = (uint64_t)DPC__PHILOX_M0 * o0[j];
            uint64_t p1 = (uint64_t)DPC__PHILOX_M1 * o2[j];
            uint32_t n0 = (uint32_t)(p1 >> 32) ^ o1[j] ^ ka;
            uint32_t n2 = (uint32_t)(p0 >> 32) ^ o3[j] ^ kb;
            o1[j] = (uint32_t)p1;
            o3[j] = (uint32_t)p0;
            o0[j] = n0;
            o2[j] = n2;
        }
    }
}

static inline double fast_or_slow(const dpc_rng_stream *s, uint64_t row, uint64_t index,
                                  uint64_t w)
{
    unsigned i = (unsigned)(w & 255u);
    double u = ((double)(w >> 11) + 0.5) * 0x1.0p-52 - 1.0;
    if (fabs(u) < dpc__zig_ratio[i]) return u * dpc__zig_x[i];
    return dpc__gauss_from(s, row, index, 0, w);
}

void dpc__gaussian_fill_portable(const dpc_rng_stream *s, uint64_t row, uint64_t index0,
                                 double *out, size_t n)
{
    size_t i = 0;
    if (n && (index0 & 1)) { /* odd start: the first element is the high word of its block */
        out[0] = dpc_rng_gaussian(s, row, index0);
        i = 1;
    }
    uint32_t o0[DPC__FILL_PAIRS], o1[DPC__FILL_PAIRS], o2[DPC__FILL_PAIRS], o3[DPC__FILL_PAIRS];
    while (n - i >= 2) {
        size_t npairs = (n - i) / 2;
        if (npairs > DPC__FILL_PAIRS) npairs = DPC__FILL_PAIRS;
        uint64_t idx = index0 + i;
        philox_pairs(o0, o1, o2, o3, idx >> 1, npairs, row, s->key[0], s->key[1]);
        for (size_t j = 0; j < npairs; j++) {
            uint64_t w0 = (uint64_t)o1[j] << 32 | o0[j];
            uint64_t w1 = (uint64_t)o3[j] << 32 | o2[j];
            out[i + 2 * j] = fast_or_slow(s, row, idx + 2 * j, w0);
            out[i + 2 * j + 1] = fast_or_slow(s, row, idx + 2 * j + 1, w1);
        }
        i += 2 * npairs;
    }
    if (i < n) out[i] = dpc_rng_gaussian(s, row, index0 + i);
}

/* Secure mode: one ChaCha20 block serves the attempt-0 words of eight consecutive indices
 * (aligned to index & ~7); then the same ziggurat step per element as dpc_rng_gaussian. */
void dpc__gaussian_fill_secure_portable(const dpc_rng_stream *s, uint64_t row, uint64_t index0,
                                        double *out, size_t n)
{
    uint64_t w[8];
    for (size_t i = 0; i < n;) {
        uint64_t idx = index0 + i;
        dpc__chacha_words(w, s->skey, row, idx, 0);
        for (size_t j = idx & 7; j < 8 && i < n; j++, i++)
            out[i] = fast_or_slow(s, row, index0 + i, w[j]);
    }
}

/* The level's kernel on an aligned middle part (Philox: even start, multiples of
 * DPC__PHILOX_BULK; ChaCha20: start at a block boundary, multiples of the level's bulk), the
 * portable fill on the head and the tail. Every part computes the same IEEE operations,
 * hence the same values at every level. */
static void fill_secure(const dpc_rng_stream *s, uint64_t row, uint64_t index0, double *out,
                        size_t n, dpc_isa isa)
{
    size_t bulk = isa == DPC_ISA_AVX512 ? DPC__CHACHA_BULK_AVX512 : DPC__CHACHA_BULK_AVX2;
    size_t head = (size_t)((8 - (index0 & 7)) & 7);
    if (isa == DPC_ISA_SSE2 || n < head + bulk) {
        dpc__gaussian_fill_secure_portable(s, row, index0, out, n);
        return;
    }
    dpc__gaussian_fill_secure_portable(s, row, index0, out, head);
    size_t mid = (n - head) / bulk * bulk;
    if (isa == DPC_ISA_AVX512)
        dpc__gaussian_fill_secure_avx512(s, row, index0 + head, out + head, mid);
    else
        dpc__gaussian_fill_secure_avx2(s, row, index0 + head, out + head, mid);
    dpc__gaussian_fill_secure_portable(s, row, index0 + head + mid, out + head + mid,
                                       n - head - mid);
}

static void fill_seeded(const dpc_rng_stream *s, uint64_t row, uint64_t index0, double *out,
                        size_t n, dpc_isa isa)
{
    /* The kernels start at an even index (a Philox block holds a pair). When they can also
     * start on a 64-byte line of out (the parity of the line offset agrees with index0's), the
     * head reaches it: stores that split cache lines made a long fill into malloc'ed memory
     * (16 bytes into a line) a third slower on the Xeon of issue 29 (doc/performance.md). */
    size_t head = (size_t)(index0 & 1);
    size_t to_line = (size_t)((8 - (((uintptr_t)out / sizeof(double)) & 7)) & 7);
    if ((uintptr_t)out % sizeof(double) == 0 && (to_line & 1) == head) head = to_line;
    if (isa == DPC_ISA_SSE2 || n < head + DPC__PHILOX_BULK) {
        dpc__gaussian_fill_portable(s, row, index0, out, n);
        return;
    }
    dpc__gaussian_fill_portable(s, row, index0, out, head);
    size_t mid = (n - head) / DPC__PHILOX_BULK * DPC__PHILOX_BULK;
    if (isa == DPC_ISA_AVX512)
        dpc__gaussian_fill_avx512(s, row, index0 + head, out + head, mid);
    else
        dpc__gaussian_fill_avx2(s, row, index0 + head, out + head, mid);
    dpc__gaussian_fill_portable(s, row, index0 + head + mid, out + head + mid, n - head - mid);
}

void dpc_rng_gaussian_fill_isa(const dpc_rng_stream *s, uint64_t row, uint64_t index0,
                               double *out, size_t n, dpc_isa isa)
{
    /* AUTO, an unknown value or a level this CPU lacks: the highest level it has */
    dpc_isa have = dpc_isa_detect();
    if (isa < DPC_ISA_SSE2 || isa > have) isa = have;
    if (s->secure)
        fill_secure(s, row, index0, out, n, isa);
    else
        fill_seeded(s, row, index0, out, n, isa);
}

void dpc_rng_gaussian_fill(const dpc_rng_stream *s, uint64_t row, uint64_t index0, double *out,
                           size_t n)
{
    dpc_rng_gaussian_fill_isa(s, row, index0, out, n, DPC_ISA_AUTO);
}
