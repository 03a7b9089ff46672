/* size_table.c — the batch-size table of the Poisson kinds below rate 1/16: Binomial(n, B / n)
 * as 128-bit cumulative masses, computed in exact integer arithmetic, with a proven bound on
 * its total variation distance from the binomial (sampler_internal.h).
 *
 * Construction. The mode of Binomial(n, B / n) is B (every ratio below is <= 1), and
 *     r(k + 1) / r(k) = (n - k) B / ((k + 1)(n - B))    (k >= B, upward),
 *     r(k - 1) / r(k) = k (n - B) / ((n - k + 1) B)      (k <= B, downward),
 * r(B) = 1. R(k) = 2^160 r(k) is carried in 256-bit fixed point (four 64-bit limbs), each step
 * R^(k +- 1) = floor(R^(k) a b / (c d)): two exact multiplications by factors below 2^48 (N <=
 * 2^48), then two exact floor divisions, and floor(floor(x / c) / d) = floor(x / (c d)), so a
 * step is the exact floor of its exact rational. With D(k) = R^(k) - R(k): D(B) = 0 and, the
 * ratio rho being <= 1, R(k +- 1) - |D(k)| - 1 <= R^(k +- 1) <= R(k +- 1), so -|k - B| <= D(k) <= 0.
 * The table runs outward from the mode until R^ < 2^20 (r below 2^-140), both ends included.
 *
 * Normalization. S = sum of R^ over the table (exact), C_j = the sum up to size k0 + j, and
 *     cum_j = floor(C_j V / 2^s), V = floor(2^(128 + s) / S), s = bit length of S,
 * so 2^128 C_j / S - 2 < cum_j <= 2^128 C_j / S for j < nk - 1 (cum_j < 2^128); the last size
 * takes the rest, 2^128 - cum_(nk-2). Sizes of mass 0 are dropped at the ends (the low ones have
 * P = 0 already; dropping high ones moves the last size's mass down, `moved` units).
 *
 * Total variation from p = Binomial(n, B / n), with p~ = R^ / S on the table:
 *   TV(table, p~) <= nk 2^-127 (each cum_j within 2 units of 2^128 C_j / S),
 *   TV(p~, p) <= (Tail + sum_table |k - B|) / S, where Tail bounds the sum of R outside the
 *     table: beyond the ends the ratios keep falling (they are monotone in k), so Tail <= R(end)
 *     rho / (1 - rho) per end, R(end) <= R^(end) + |end - B| (derivation: L1(p~, p) <=
 *     sum |D| / S + S_K |R_tot - S| / (S R_tot) + Tail / R_tot with S <= S_K <= R_tot and
 *     R_tot - S = Tail + sum |D|),
 *   plus moved 2^-128; the sum, rounded up, is the table's bound tv: at B = 10^3 about 5e-36,
 *   at B = 10^6 about 2e-34, at any n <= 2^48. */
#include "common/util.h"
#include "sampler/sampler_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

__extension__ typedef unsigned __int128 u128;

#define LIMBS 4
#define FRAC 160         /* R(B) = 2^FRAC */
#define CUT_BITS 20      /* the table ends where R^ < 2^CUT_BITS: r < 2^(CUT_BITS - FRAC) = 2^-140 */
#define QL 7             /* limbs of C_j V */

typedef struct fx {
    uint64_t w[LIMBS]; /* little-endian */
} fx;

static void fx_mode(fx *x)
{
    memset(x, 0, sizeof *x);
    x->w[FRAC / 64] = (uint64_t)1 << (FRAC % 64);
}

/* x *= m; the callers' sizes keep the product below 2^256 (R^ <= 2^160, factors < 2^48). */
static void fx_mul(fx *x, uint64_t m)
{
    u128 c = 0;
    for (int i = 0; i < LIMBS; i++) {
        c += (u128)x->w[i] * m;
        x->w[i] = (uint64_t)c;
        c >>= 64;
    }
}

/* x = floor(x / d), d >= 1 */
static void fx_div(fx *x, uint64_t d)
{
    u128 r = 0;
    for (int i = LIMBS; i-- > 0;) {
        r = (r << 64) | x->w[i];
        uint64_t q = (uint64_t)(r / d); /* r < d 2^64: q < 2^64 */
        x->w[i] = q;
        r -= (u128)q * d;
    }
}

static void fx_add(fx *x, const fx *y)
{
    u128 c = 0;
    for (int i = 0; i < LIMBS; i++) {
        c += (u128)x->w[i] + y->w[i];
        x->w[i] = (uint64_t)c;
        c >>= 64;
    }
}

static void fx_sub(fx *x, const fx *y) /* x >= y */
{
    uint64_t b = 0;
    for (int i = 0; i < LIMBS; i++) {
        uint64_t v = x->w[i] - y->w[i] - b;
        b = x->w[i] < y->w[i] || (x->w[i] == y->w[i] && b);
        x->w[i] = v;
    }
}

static int fx_cmp(const fx *x, const fx *y)
{
    for (int i = LIMBS; i-- > 0;)
        if (x->w[i] != y->w[i]) return x->w[i] < y->w[i] ? -1 : 1;
    return 0;
}

static unsigned fx_bits(const fx *x)
{
    for (int i = LIMBS; i-- > 0;)
        if (x->w[i]) {
            unsigned b = 0;
            for (uint64_t v = x->w[i]; v; v >>= 1) b++;
            return 64u * (unsigned)i + b;
        }
    return 0;
}

/* x as a double, rounded toward zero limb by limb (a lower bound, within 2^-52 of x) */
static double fx_lower(const fx *x)
{
    double v = 0.0;
    for (int i = LIMBS; i-- > 0;) v += ldexp((double)(x->w[i] >> 11), 64 * i + 11);
    return v * (1 - 0x1.0p-48);
}

static int below_cut(const fx *x)
{
    return !x->w[3] && !x->w[2] && !x->w[1] && x->w[0] < ((uint64_t)1 << CUT_BITS);
}

/* One step of the recurrence from size k: up to k + 1 or down to k - 1 (see above). */
static void fx_step(fx *x, uint64_t n, uint64_t B, uint64_t k, int up)
{
    uint64_t a = up ? n - k : k, b = up ? B : n - B, c = up ? k + 1 : n - k + 1;
    uint64_t d = up ? n - B : B;
    /* one multiplication / division where the product fits a word (n below ~2^32): the same
     * exact results (floor(floor(x / c) / d) = floor(x / (c d))) */
    if (a <= UINT64_MAX / b) {
        fx_mul(x, a * b);
    } else {
        fx_mul(x, a);
        fx_mul(x, b);
    }
    if (c <= UINT64_MAX / d) {
        fx_div(x, c * d);
    } else {
        fx_div(x, c);
        fx_div(x, d);
    }
}

/* An upper bound on the sum of R over the sizes beyond `end` (exclusive), R(end) <= r_end +
 * |end - B|, the ratio from end onward at most rho (computed in double: relative error below
 * 2^-50, taken up). */
static double tail_bound(uint64_t n, uint64_t B, uint64_t end, const fx *r_end, int up)
{
    double num = up ? (double)(n - end) * (double)B : (double)end * (double)(n - B);
    double den = up ? (double)(end + 1) * (double)(n - B) : (double)(n - end + 1) * (double)B;
    double rho = num / den * (1 + 0x1.0p-48);
    if (!(rho < 1)) return INFINITY;
    double dist = up ? (double)(end - B) : (double)(B - end);
    return ((double)r_end->w[0] + dist) * rho / (1 - rho) * (1 + 0x1.0p-48);
}

/* V = floor(2^e / S), at most 2^129: three limbs (restoring division bit by bit, once). */
static void reciprocal(const fx *S, unsigned e, uint64_t V[3])
{
    fx rem;
    memset(&rem, 0, sizeof rem);
    memset(V, 0, 3 * sizeof *V);
    for (unsigned i = e + 1; i-- > 0;) {
        uint64_t top = rem.w[LIMBS - 1] >> 63; /* rem < S < 2^255: never set */
        for (int l = LIMBS - 1; l > 0; l--) rem.w[l] = rem.w[l] << 1 | rem.w[l - 1] >> 63;
        rem.w[0] = rem.w[0] << 1 | (i == e);
        if (top || fx_cmp(&rem, S) >= 0) {
            fx_sub(&rem, S);
            V[i / 64] |= (uint64_t)1 << (i % 64);
        }
    }
}

/* floor(C V / 2^s) for C <= S (below 2^128 when C < S). */
static u128 scaled(const fx *C, const uint64_t V[3], unsigned s)
{
    uint64_t p[QL] = {0};
    for (int i = 0; i < LIMBS; i++) {
        u128 c = 0;
        for (int j = 0; j < 3; j++) {
            c += (u128)C->w[i] * V[j] + p[i + j];
            p[i + j] = (uint64_t)c;
            c >>= 64;
        }
        p[i + 3] = (uint64_t)c;
    }
    unsigned l = s / 64, b = s % 64;
    uint64_t w[3];
    for (int j = 0; j < 3; j++) w[j] = l + j < QL ? p[l + j] : 0;
    uint64_t lo = b ? (w[0] >> b | w[1] << (64 - b)) : w[0];
    uint64_t hi = b ? (w[1] >> b | w[2] << (64 - b)) : w[1];
    return (u128)hi << 64 | lo;
}

/* Pass 1: the table's ends lo <= B <= hi and the sums of R^ below the mode (Slow) and over the
 * table (S). */
static void extent(uint64_t n, uint64_t B, uint64_t *lo, uint64_t *hi, fx *Slow, fx *S,
                   fx *r_lo, fx *r_hi)
{
    fx r;
    fx_mode(&r);
    *S = r;
    for (*hi = B; *hi < n;) {
        fx_step(&r, n, B, *hi, 1);
        ++*hi;
        fx_add(S, &r);
        if (below_cut(&r)) break;
    }
    *r_hi = r;
    fx_mode(&r);
    memset(Slow, 0, sizeof *Slow);
    for (*lo = B; *lo > 0;) {
        fx_step(&r, n, B, *lo, 0);
        --*lo;
        fx_add(Slow, &r);
        if (below_cut(&r)) break;
    }
    *r_lo = r;
    fx_add(S, Slow);
}

/* Pass 2: cum_j for the sizes lo .. hi - 1 (the same R^ again: the recurrence is exact, so the
 * values are those of pass 1), C(B - 1) = Slow, C(k) = C(k - 1) + R^(k). */
static void fill(uint64_t n, uint64_t B, uint64_t lo, uint64_t hi, const fx *Slow, const fx *S,
                 u128 *cum)
{
    unsigned s = fx_bits(S);
    uint64_t V[3];
    reciprocal(S, 128 + s, V);
    fx r, C = *Slow;
    fx_mode(&r);
    for (uint64_t k = B; k < hi; k++) { /* C = C(k - 1) */
        if (k > B) fx_step(&r, n, B, k - 1, 1);
        fx_add(&C, &r);
        cum[k - lo] = scaled(&C, V, s);
    }
    C = *Slow;
    fx_mode(&r);
    for (uint64_t k = B; k > lo; k--) { /* C = C(k - 1), r = R^(k) */
        cum[k - 1 - lo] = scaled(&C, V, s);
        fx_step(&r, n, B, k, 0);
        fx_sub(&C, &r);
    }
}

void dpc__size_table_free(dpc__size_table *t)
{
    if (!t) return;
    free(t->hi);
    free(t->lo);
    memset(t, 0, sizeof *t);
}

dpc_status dpc__size_table_build(dpc__size_table *t, uint64_t n, uint64_t B, dpc_error *err)
{
    memset(t, 0, sizeof *t);
    fx Slow, S, r_lo, r_hi;
    uint64_t lo, hi;
    extent(n, B, &lo, &hi, &Slow, &S, &r_lo, &r_hi);
    size_t nk = (size_t)(hi - lo + 1), nb = nk - 1; /* boundaries */
    u128 *cum = dpc__malloc_array(nb ? nb : 1, sizeof *cum);
    if (!cum) return DPC__NOMEM(err, "sampler batch-size table");
    fill(n, B, lo, hi, &Slow, &S, cum);
    /* mass 0 at the ends: low sizes with cum 0 (P = 0 there already); high sizes whose mass
     * is 0, the last size's mass moved down onto the last one kept */
    size_t a = 0, b = nb;
    while (a < b && cum[a] == 0) a++;
    double moved = 0.0;
    if (b > a && b >= 2 && cum[b - 1] == cum[b - 2]) {
        moved = (double)((u128)0 - cum[b - 1]); /* 2^128 - cum: the last size's mass */
        while (b > a && (b >= 2 ? cum[b - 1] == cum[b - 2] : cum[b - 1] == 0)) b--;
    }
    t->k0 = (size_t)(lo + a);
    t->nk = b - a + 1;
    t->hi = dpc__malloc_array(b > a ? b - a : 1, sizeof *t->hi);
    t->lo = dpc__malloc_array(b > a ? b - a : 1, sizeof *t->lo);
    if (!t->hi || !t->lo) {
        free(cum);
        dpc__size_table_free(t);
        return DPC__NOMEM(err, "sampler batch-size table");
    }
    for (size_t j = a; j < b; j++) {
        t->hi[j - a] = (uint64_t)(cum[j] >> 64);
        t->lo[j - a] = (uint64_t)cum[j];
    }
    free(cum);
    double tail = (hi < n ? tail_bound(n, B, hi, &r_hi, 1) : 0.0) +
                  (lo > 0 ? tail_bound(n, B, lo, &r_lo, 0) : 0.0);
    double du = (double)(hi - B), dl = (double)(B - lo);
    double dist = (du * (du + 1) + dl * (dl + 1)) / 2; /* sum over the table of |k - B| */
    t->tv = ((double)nk * 0x1.0p-127 + moved * 0x1.0p-128 + (tail + dist) / fx_lower(&S)) *
            (1 + 0x1.0p-40);
    return DPC_OK;
}

/* The first j < nk - 1 with U < cum_j (else nk - 1), U = w 2^64 + (second word): the high words
 * decide unless w equals some, and only then is the second word drawn. */
size_t dpc__size_table_find(const dpc__size_table *t, uint64_t w, const dpc_rng_stream *s,
                            uint64_t row, int *second)
{
    size_t nb = t->nk - 1, a = 0, b = nb;
    while (a < b) { /* a: the first j with hi[j] >= w */
        size_t mid = a + (b - a) / 2;
        if (t->hi[mid] < w) a = mid + 1;
        else b = mid;
    }
    b = a;
    while (b < nb && t->hi[b] == w) b++; /* [a, b): hi == w (at most a few) */
    *second = a < b;
    if (a == b) return a;
    uint64_t w2 = dpc_rng_word(s, row, 0, DPC__SIZE_SECOND_ATTEMPT);
    while (a < b && t->lo[a] <= w2) a++;
    return a;
}
