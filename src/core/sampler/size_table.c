/* size_table.c — the batch size of the Poisson kinds below rate 1/16, drawn exactly from
 * Binomial(n, B / n): a table of 128-bit cumulative masses computed in exact integer arithmetic,
 * and the exact comparison where the table's precision does not decide (sampler_internal.h).
 *
 * Walks. The mode of Binomial(n, B / n) is B (every ratio below is <= 1), and
 *     r(k + 1) / r(k) = (n - k) B / ((k + 1)(n - B))    (k >= B, upward),
 *     r(k - 1) / r(k) = k (n - B) / ((n - k + 1) B)      (k <= B, downward),
 * r(B) = 1. R(k) = 2^f r(k) is carried in fixed point on L 64-bit limbs (f = 64 L - 96: the
 * table L = 4, f = 160), each step R^(k +- 1) = floor(R^(k) a b / (c d)): exact multiplications
 * by factors below 2^48 (N <= 2^48), then exact floor divisions, and floor(floor(x / c) / d) =
 * floor(x / (c d)), so a step is the exact floor of its exact rational. With D(k) = R^(k) - R(k):
 * D(B) = 0 and, the ratio rho being <= 1, R(k +- 1) - |D(k)| - 1 <= R^(k +- 1) <= R(k +- 1), so
 * -|k - B| <= D(k) <= 0. A walk runs outward from the mode until R^ < 2^20 (r below 2^(20 - f)),
 * both ends included. Beyond an end the ratios keep falling (they are monotone in k), so the sum
 * of R there is at most R(end) rho / (1 - rho), R(end) <= R^(end) + |end - B|. X = sum over the
 * walk of |k - B| plus both tail bounds (rounded up) bounds the error of every sum: with S = the
 * sum of R^ over the walk and C = the sum up to k, the CDF F(k) lies in [C / (S + X), (C + X) / S]
 * (C <= C_true <= C + X, S <= R_total <= S + X).
 *
 * The table (L = 4). cum_j = floor(C_j V / 2^s), V = floor(2^(128 + s) / S), s = bit length of S:
 * 2^128 C_j / S - 2 < cum_j <= 2^128 C_j / S, and |C_j / S - F(k)| <= X / S, so
 * |2^128 F(k0 + j) - cum_j| < win = 3 + ceil(2^128 X / S) (3 or 4 for n <= 2^48, B <= 10^6),
 * also for the virtual boundaries 0 below the table and 2^128 at its last size. Sizes of table
 * mass 0 are kept (never drawn: a boundary equal to the one before is never the first above U).
 * The 128-bit rule alone (the first j with U < cum_j) would be within total variation tv = nk
 * 2^-127 + X / S of the binomial (5e-36 at B = 10^3, 2e-34 at B = 10^6).
 *
 * The draw. U = sum_i u_i 2^(-64 (i + 1)). The first word decides when no boundary's high word
 * is within one of it (the 128-bit comparisons below then hold with 2^64 to spare); else the
 * 128-bit prefix v decides when every boundary is either above v + win or at most v - win; else
 * the candidate sizes (those whose boundaries lie within win of v, and all sizes below or above
 * the table when v is within win of 0 or 2^128) are bisected with exact comparisons U < F(k): a
 * walk at L = 8, 16, ... limbs and U's first L words decide when (U_L + 1)(S + X) <= C 2^(64 L)
 * (then U < F(k)) or U_L S >= (C + X) 2^(64 L) (then U >= F(k)); a level decides unless U lies
 * within about 2^(60 - 64 L) of F(k). So the size is exactly the inverse CDF of U. */
#include "common/util.h"
#include "sampler/sampler_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

__extension__ typedef unsigned __int128 u128;

#define TL 4             /* limbs of the table's fixed point */
#define CUT_BITS 20      /* a walk ends where R^ < 2^CUT_BITS: r < 2^(CUT_BITS - FRAC) */
#define MAX_LIMBS 65536  /* the exact comparison's last level: U's words are attempts < 2^16 */

/* ---- unsigned fixed point on L little-endian 64-bit limbs; R(B) = 2^(64 L - 96) ---------- */

static unsigned frac_bits(int L) { return 64u * (unsigned)L - 96u; }

static void mp_mode(uint64_t *x, int L)
{
    memset(x, 0, (size_t)L * sizeof *x);
    unsigned f = frac_bits(L);
    x[f / 64] = (uint64_t)1 << (f % 64);
}

/* x *= m; the walks keep the product below 2^(64 L) (R^ <= 2^(64 L - 96), factors < 2^48). */
static void mp_mul1(uint64_t *x, int L, uint64_t m)
{
    u128 c = 0;
    for (int i = 0; i < L; i++) {
        c += (u128)x[i] * m;
        x[i] = (uint64_t)c;
        c >>= 64;
    }
}

/* x = floor(x / d), d >= 1 */
static void mp_div1(uint64_t *x, int L, uint64_t d)
{
    u128 r = 0;
    for (int i = L; i-- > 0;) {
        r = (r << 64) | x[i];
        uint64_t q = (uint64_t)(r / d); /* r < d 2^64: q < 2^64 */
        x[i] = q;
        r -= (u128)q * d;
    }
}

static void mp_add(uint64_t *x, const uint64_t *y, int L)
{
    u128 c = 0;
    for (int i = 0; i < L; i++) {
        c += (u128)x[i] + y[i];
        x[i] = (uint64_t)c;
        c >>= 64;
    }
}

static void mp_sub(uint64_t *x, const uint64_t *y, int L) /* x >= y */
{
    uint64_t b = 0;
    for (int i = 0; i < L; i++) {
        uint64_t v = x[i] - y[i] - b;
        b = x[i] < y[i] || (x[i] == y[i] && b);
        x[i] = v;
    }
}

static int mp_cmp(const uint64_t *x, const uint64_t *y, int L)
{
    for (int i = L; i-- > 0;)
        if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
    return 0;
}

static unsigned mp_bits(const uint64_t *x, int L)
{
    for (int i = L; i-- > 0;)
        if (x[i]) {
            unsigned b = 0;
            for (uint64_t v = x[i]; v; v >>= 1) b++;
            return 64u * (unsigned)i + b;
        }
    return 0;
}

/* x as a double rounded down (within 2^-48 of x, relative) */
static double mp_lower(const uint64_t *x, int L)
{
    double v = 0.0;
    for (int i = L; i-- > 0;) v += ldexp((double)(x[i] >> 11), 64 * i + 11);
    return v * (1 - 0x1.0p-48);
}

static int mp_below_cut(const uint64_t *x, int L)
{
    for (int i = L; i-- > 1;)
        if (x[i]) return 0;
    return x[0] < ((uint64_t)1 << CUT_BITS);
}

/* One step of the recurrence from size k: up to k + 1 or down to k - 1 (see above). */
static void mp_step(uint64_t *x, int L, uint64_t n, uint64_t B, uint64_t k, int up)
{
    uint64_t a = up ? n - k : k, b = up ? B : n - B, c = up ? k + 1 : n - k + 1;
    uint64_t d = up ? n - B : B;
    /* one multiplication / division where the product fits a word (n below ~2^32): the same
     * exact results (floor(floor(x / c) / d) = floor(x / (c d))) */
    if (a <= UINT64_MAX / b) {
        mp_mul1(x, L, a * b);
    } else {
        mp_mul1(x, L, a);
        mp_mul1(x, L, b);
    }
    if (c <= UINT64_MAX / d) {
        mp_div1(x, L, c * d);
    } else {
        mp_div1(x, L, c);
        mp_div1(x, L, d);
    }
}

/* An upper bound on the sum of R over the sizes beyond `end` (exclusive), R(end) <= r_end +
 * |end - B| (r_end < 2^CUT_BITS), the ratio from end onward at most rho (computed in double:
 * relative error below 2^-50, taken up). */
static double tail_bound(uint64_t n, uint64_t B, uint64_t end, uint64_t r_end, int up)
{
    double num = up ? (double)(n - end) * (double)B : (double)end * (double)(n - B);
    double den = up ? (double)(end + 1) * (double)(n - B) : (double)(n - end + 1) * (double)B;
    double rho = num / den * (1 + 0x1.0p-48);
    if (!(rho < 1)) return INFINITY;
    double dist = up ? (double)(end - B) : (double)(B - end);
    return ((double)r_end + dist) * rho / (1 - rho) * (1 + 0x1.0p-48);
}

/* One walk at L limbs: the sizes lo <= B <= hi out to the cut, S = the sum of R^ over them,
 * C = the sum of R^ over lo .. k (0 below lo, S above hi; C NULL: not wanted), Slow = the sum
 * below the mode (NULL: not wanted), and X, an upper bound on sum |D| + both tails (in units
 * of R: the error of S, and of C, as sums of R). tmp: (L). */
typedef struct walk {
    uint64_t lo, hi;
    double X;
} walk;

static walk mp_walk(uint64_t n, uint64_t B, int L, uint64_t k, uint64_t *S, uint64_t *C,
                    uint64_t *Slow, uint64_t *r, uint64_t *tmp)
{
    walk w;
    mp_mode(r, L);
    memcpy(S, r, (size_t)L * sizeof *S);
    if (C) memset(C, 0, (size_t)L * sizeof *C);
    if (C && k >= B) memcpy(C, r, (size_t)L * sizeof *C); /* R^(B), the low part added below */
    for (w.hi = B; w.hi < n;) {
        mp_step(r, L, n, B, w.hi, 1);
        ++w.hi;
        mp_add(S, r, L);
        if (C && w.hi <= k) mp_add(C, r, L);
        if (mp_below_cut(r, L)) break;
    }
    double tail = w.hi < n ? tail_bound(n, B, w.hi, r[0], 1) : 0.0;
    mp_mode(r, L);
    memset(tmp, 0, (size_t)L * sizeof *tmp); /* the sum below the mode */
    for (w.lo = B; w.lo > 0;) {
        mp_step(r, L, n, B, w.lo, 0);
        --w.lo;
        mp_add(tmp, r, L);
        if (C && w.lo <= k && k < B) mp_add(C, r, L);
        if (mp_below_cut(r, L)) break;
    }
    tail += w.lo > 0 ? tail_bound(n, B, w.lo, r[0], 0) : 0.0;
    mp_add(S, tmp, L);
    if (C && k >= B) mp_add(C, tmp, L);
    if (Slow) memcpy(Slow, tmp, (size_t)L * sizeof *tmp);
    double du = (double)(w.hi - B), dl = (double)(B - w.lo);
    w.X = ((du * (du + 1) + dl * (dl + 1)) / 2 + tail) * (1 + 0x1.0p-40);
    return w;
}

/* V = floor(2^e / S), at most 2^129: three limbs (restoring division bit by bit, once). */
static void reciprocal(const uint64_t *S, unsigned e, uint64_t V[3])
{
    uint64_t rem[TL] = {0};
    memset(V, 0, 3 * sizeof *V);
    for (unsigned i = e + 1; i-- > 0;) { /* rem < S < 2^255: the shift loses nothing */
        for (int l = TL - 1; l > 0; l--) rem[l] = rem[l] << 1 | rem[l - 1] >> 63;
        rem[0] = rem[0] << 1 | (i == e);
        if (mp_cmp(rem, S, TL) >= 0) {
            mp_sub(rem, S, TL);
            V[i / 64] |= (uint64_t)1 << (i % 64);
        }
    }
}

/* floor(C V / 2^s) for C <= S (below 2^128 when C < S). */
static u128 scaled(const uint64_t *C, const uint64_t V[3], unsigned s)
{
    uint64_t p[TL + 3] = {0};
    for (int i = 0; i < TL; i++) {
        u128 c = 0;
        for (int j = 0; j < 3; j++) {
            c += (u128)C[i] * V[j] + p[i + j];
            p[i + j] = (uint64_t)c;
            c >>= 64;
        }
        p[i + 3] = (uint64_t)c;
    }
    unsigned l = s / 64, b = s % 64;
    uint64_t w[3];
    for (unsigned j = 0; j < 3; j++) w[j] = l + j < TL + 3 ? p[l + j] : 0;
    uint64_t lo = b ? (w[0] >> b | w[1] << (64 - b)) : w[0];
    uint64_t hi = b ? (w[1] >> b | w[2] << (64 - b)) : w[1];
    return (u128)hi << 64 | lo;
}

/* The boundaries cum_j for the sizes lo .. hi - 1 (the same R^ as the walk: the recurrence is
 * exact), C(B - 1) = Slow, C(k) = C(k - 1) + R^(k). */
static void fill(uint64_t n, uint64_t B, uint64_t lo, uint64_t hi, const uint64_t *Slow,
                 const uint64_t *S, uint64_t *bhi, uint64_t *blo)
{
    unsigned s = mp_bits(S, TL);
    uint64_t V[3], r[TL], C[TL];
    reciprocal(S, 128 + s, V);
    memcpy(C, Slow, sizeof C);
    mp_mode(r, TL);
    for (uint64_t k = B; k < hi; k++) { /* C = C(k - 1) */
        if (k > B) mp_step(r, TL, n, B, k - 1, 1);
        mp_add(C, r, TL);
        u128 c = scaled(C, V, s);
        bhi[k - lo] = (uint64_t)(c >> 64);
        blo[k - lo] = (uint64_t)c;
    }
    memcpy(C, Slow, sizeof C);
    mp_mode(r, TL);
    for (uint64_t k = B; k > lo; k--) { /* C = C(k - 1), r = R^(k) */
        u128 c = scaled(C, V, s);
        bhi[k - 1 - lo] = (uint64_t)(c >> 64);
        blo[k - 1 - lo] = (uint64_t)c;
        mp_step(r, TL, n, B, k, 0);
        mp_sub(C, r, TL);
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
    uint64_t S[TL], Slow[TL], r[TL], tmp[TL];
    walk w = mp_walk(n, B, TL, 0, S, NULL, Slow, r, tmp);
    size_t nk = (size_t)(w.hi - w.lo + 1), nb = nk - 1; /* boundaries */
    t->hi = dpc__malloc_array(nb ? nb : 1, sizeof *t->hi);
    t->lo = dpc__malloc_array(nb ? nb : 1, sizeof *t->lo);
    if (!t->hi || !t->lo) {
        dpc__size_table_free(t);
        return DPC__NOMEM(err, "sampler batch-size table");
    }
    fill(n, B, w.lo, w.hi, Slow, S, t->hi, t->lo);
    t->n = n;
    t->B = B;
    t->k0 = (size_t)w.lo;
    t->nk = nk;
    /* |2^128 F(k) - cum_j| <= 2 + 2^128 X / S */
    double e = ldexp(w.X / mp_lower(S, TL), 128);
    if (!(e < 0x1.0p60)) { /* never for n <= 2^48 (e < 1 there) */
        dpc__size_table_free(t);
        return dpc_error_param(err, DPC_E_NUMERIC, "batch", "size table window %g", e);
    }
    t->win = 3 + (uint64_t)ceil(e);
    t->tv = ((double)nk * 0x1.0p-127 + w.X / mp_lower(S, TL)) * (1 + 0x1.0p-40);
    return DPC_OK;
}

/* ---- the exact draw ---------------------------------------------------------------------- */

/* Word i of the uniform U = sum_i u_i 2^(-64 (i + 1)): fixed[i] (tests), else the generator's
 * (row, 0, attempt i). */
static uint64_t uword(const dpc__uniform *u, size_t i)
{
    return i < u->nfixed ? u->fixed[i] : dpc_rng_word(u->s, u->row, 0, (uint32_t)i);
}

/* out (la + lb) = a (la) b (lb) */
static void mp_mul(const uint64_t *a, int la, const uint64_t *b, int lb, uint64_t *out)
{
    memset(out, 0, (size_t)(la + lb) * sizeof *out);
    for (int i = 0; i < la; i++) {
        u128 c = 0;
        for (int j = 0; j < lb; j++) {
            c += (u128)a[i] * b[j] + out[i + j];
            out[i + j] = (uint64_t)c;
            c >>= 64;
        }
        out[i + lb] = (uint64_t)c;
    }
}

/* x (L) += v, v < 2^128; 0 when it overflows L limbs */
static int mp_add128(uint64_t *x, int L, u128 v)
{
    u128 c = v;
    for (int i = 0; i < L && c; i++) {
        c += x[i];
        x[i] = (uint64_t)c;
        c >>= 64;
    }
    return c == 0;
}

/* Whether U < F(k) at L limbs: 1 / 0 when the walk's bounds decide, -1 when not. With m = L
 * words of U (U_m their integer): F(k) lies in [C / (S + X), (C + X) / S], so U < F(k) when
 * (U_m + 1)(S + X) <= C 2^(64 m), and U >= F(k) when U_m S >= (C + X) 2^(64 m).
 * buf: (12 L + 4) */
static int decide(const dpc__size_table *t, uint64_t k, const dpc__uniform *u, int L,
                  uint64_t *buf)
{
    uint64_t *S = buf, *C = S + L, *r = C + L, *tmp = r + L, *Um = tmp + L, *U1 = Um + L + 1;
    uint64_t *SX = U1 + L + 1, *p = SX + L, *Csh = p + 2 * L + 1;
    walk w = mp_walk(t->n, t->B, L, k, S, C, NULL, r, tmp);
    if (!(w.X < 0x1.0p127)) return -1;
    u128 X = (u128)ceil(w.X);
    for (int i = 0; i < L; i++) Um[L - 1 - i] = uword(u, (size_t)i);
    Um[L] = 0;
    memcpy(U1, Um, (size_t)(L + 1) * sizeof *U1);
    (void)mp_add128(U1, L + 1, 1);
    /* below: (U_m + 1)(S + X) <= C 2^(64 L); S + X fits L limbs (S < 2^(64 L - 56)) */
    memcpy(SX, S, (size_t)L * sizeof *SX);
    (void)mp_add128(SX, L, X);
    mp_mul(U1, L + 1, SX, L, p); /* 2 L + 1 limbs */
    memset(Csh, 0, (size_t)(2 * L + 1) * sizeof *Csh);
    memcpy(Csh + L, C, (size_t)L * sizeof *C);
    if (mp_cmp(p, Csh, 2 * L + 1) <= 0) return 1;
    /* above: U_m S >= (C + X) 2^(64 L) */
    mp_mul(Um, L + 1, S, L, p);
    memcpy(tmp, C, (size_t)L * sizeof *tmp);
    uint64_t carry = !mp_add128(tmp, L, X);
    memset(Csh, 0, (size_t)(2 * L + 1) * sizeof *Csh);
    memcpy(Csh + L, tmp, (size_t)L * sizeof *tmp);
    Csh[2 * L] = carry;
    return mp_cmp(p, Csh, 2 * L + 1) >= 0 ? 0 : -1;
}

/* Whether U < F(k), exactly: levels of 8, 16, 32, ... limbs (each decides unless U agrees with
 * F(k) to about its precision: probability ~2^(-64 L + 60)). DPC_E_NUMERIC past MAX_LIMBS
 * (probability below 2^-4000000), DPC_E_NOMEM. */
static dpc_status exact_below(const dpc__size_table *t, uint64_t k, const dpc__uniform *u,
                              int *below, int *path)
{
    for (int L = 8, lv = 2; L <= MAX_LIMBS; L *= 2, lv++) {
        if (lv > *path) *path = lv;
        uint64_t *buf = dpc__malloc_array((size_t)(12 * L + 4), sizeof *buf);
        if (!buf) return DPC_E_NOMEM;
        int d = decide(t, k, u, L, buf);
        free(buf);
        if (d >= 0) {
            *below = d;
            return DPC_OK;
        }
    }
    return DPC_E_NUMERIC;
}

static u128 cum(const dpc__size_table *t, size_t j)
{
    return (u128)t->hi[j] << 64 | t->lo[j];
}

/* The first j < nb with cum_j > v (nb if none). */
static size_t first_above(const dpc__size_table *t, u128 v)
{
    size_t a = 0, b = t->nk - 1;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (cum(t, mid) <= v) a = mid + 1;
        else b = mid;
    }
    return a;
}

/* The size when the 128-bit prefix U128 = v does not decide: the first k in [kmin, kmax] with
 * U < F(k) (U < F(kmax) is known), by bisection on exact comparisons. */
static dpc_status exact_size(const dpc__size_table *t, u128 v, const dpc__uniform *u,
                             size_t *size, int *path)
{
    size_t nb = t->nk - 1;
    u128 W = t->win;
    size_t a = v >= W ? first_above(t, v - W) : 0; /* boundaries below: U >= F certainly */
    size_t b = (u128)0 - 1 - v >= W ? first_above(t, v + W) : nb; /* U < F(k0 + b) certainly */
    uint64_t kmin = a == 0 && v < W ? 0 : t->k0 + a;
    uint64_t kmax = b < nb || (u128)0 - v > W ? t->k0 + b : t->n;
    while (kmin < kmax) {
        uint64_t mid = kmin + (kmax - kmin) / 2;
        int below;
        dpc_status st = exact_below(t, mid, u, &below, path);
        if (st) return st;
        if (below) kmax = mid;
        else kmin = mid + 1;
    }
    *size = (size_t)kmin;
    return DPC_OK;
}

dpc_status dpc__size_table_draw(const dpc__size_table *t, const dpc__uniform *u, size_t *size,
                                int *path)
{
    size_t nb = t->nk - 1;
    uint64_t w = uword(u, 0);
    size_t j = 0, b = nb;
    while (j < b) { /* j: the first boundary with hi >= w - 1 */
        size_t mid = j + (b - j) / 2;
        if (t->hi[mid] < w - (w > 0)) j = mid + 1;
        else b = mid;
    }
    int near = w == 0 || w == UINT64_MAX || (j < nb && t->hi[j] <= w + 1);
    if (!near) { /* hi[j] >= w + 2 > w: the high word decides, as the 64-bit table did */
        *path = 0;
        *size = t->k0 + j;
        return DPC_OK;
    }
    u128 v = (u128)w << 64 | uword(u, 1), W = t->win;
    j = first_above(t, v);
    int sure_below = j < nb ? cum(t, j) - v > W : (v == 0 || (u128)0 - v > W);
    int sure_above = j > 0 ? v - cum(t, j - 1) >= W : v >= W;
    if (sure_below && sure_above) {
        *path = 1;
        *size = t->k0 + j;
        return DPC_OK;
    }
    *path = 2;
    return exact_size(t, v, u, size, path);
}
