/* fft_core.c — the FFT kernel: radix-2/4 complex transform (cache-blocked stages) and FFT-based
 * linear convolution of real sequences. Used by the accountant (PLD composition) and by the
 * public dpc_fft API. Tested against a naive DFT in tests/test_account_fft.c and tests/test_fft.c.
 *
 * Transform: X_k = sum_j x_j exp(sign * 2 pi i j k / n), iterative Cooley-Tukey (1965) with
 * bit-reversed input order; no normalization (the caller divides the inverse by n). */
#include "fft/fft_core.h"

#include "common/util.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DPC__PI 3.14159265358979323846

/* Twiddle tables for every stage length len = 2, 4, ..., n, each contiguous so that the
 * butterflies read them with unit stride: stage len holds (cos, sin)(2 pi k / len) for
 * k < len/2 at pair offset len/2 - 1. Total n - 1 pairs. */
double *dpc__fft_twiddles(size_t n)
{
    if (n < 2) n = 2;
    double *tw = dpc__malloc_array(2 * (n - 1), sizeof *tw);
    if (!tw) return NULL;
    double *top = tw + 2 * (n / 2 - 1); /* the stage len = n */
    size_t h = n / 2, q = n / 4;
    /* Direct cos/sin on the first quarter; the second quarter by cos(t + pi/2) = -sin t,
     * sin(t + pi/2) = cos t, which keeps every entry within one rounding of libm. */
    if (q == 0) {
        top[0] = 1.0;
        top[1] = 0.0;
    } else {
        for (size_t k = 0; k < q; k++) {
            double t = 2.0 * DPC__PI * (double)k / (double)n;
            top[2 * k] = cos(t);
            top[2 * k + 1] = sin(t);
        }
        for (size_t k = q; k < h; k++) {
            top[2 * k] = -top[2 * (k - q) + 1];
            top[2 * k + 1] = top[2 * (k - q)];
        }
    }
    /* Each shorter stage takes every other entry of the next longer one (sequential reads). */
    for (size_t len = n / 2; len >= 2; len >>= 1) {
        double *w = tw + 2 * (len / 2 - 1);
        const double *up = tw + 2 * (len - 1);
        for (size_t k = 0; k < len / 2; k++) {
            w[2 * k] = up[4 * k];
            w[2 * k + 1] = up[4 * k + 1];
        }
    }
    return tw;
}

/* Butterflies stay inside aligned blocks of this many points for the short stages, so those
 * stages run from cache (the long ones stream through memory). */
#define FFT_BLOCK ((size_t)1 << 14)

/* One radix-2 decimation-in-frequency stage of length len on x[base .. end). */
static void dif_stage(double *x, size_t base, size_t end, size_t len, double s, const double *tw)
{
    size_t half = len >> 1;
    const double *w = tw + 2 * (half - 1);
    for (size_t i = base; i < end; i += len) {
        double *u = x + 2 * i, *v = x + 2 * (i + half);
        for (size_t k = 0; k < half; k++) {
            double wr = w[2 * k], wi = s * w[2 * k + 1];
            double ar = u[2 * k], ai = u[2 * k + 1], br = v[2 * k], bi = v[2 * k + 1];
            u[2 * k] = ar + br;
            u[2 * k + 1] = ai + bi;
            double dr = ar - br, di = ai - bi;
            v[2 * k] = dr * wr - di * wi;
            v[2 * k + 1] = dr * wi + di * wr;
        }
    }
}

/* One radix-2 decimation-in-time stage. */
static void dit_stage(double *x, size_t base, size_t end, size_t len, double s, const double *tw)
{
    size_t half = len >> 1;
    const double *w = tw + 2 * (half - 1);
    for (size_t i = base; i < end; i += len) {
        double *u = x + 2 * i, *v = x + 2 * (i + half);
        for (size_t k = 0; k < half; k++) {
            double wr = w[2 * k], wi = s * w[2 * k + 1];
            double vr = v[2 * k] * wr - v[2 * k + 1] * wi;
            double vi = v[2 * k] * wi + v[2 * k + 1] * wr;
            double ur = u[2 * k], ui = u[2 * k + 1];
            u[2 * k] = ur + vr;
            u[2 * k + 1] = ui + vi;
            v[2 * k] = ur - vr;
            v[2 * k + 1] = ui - vi;
        }
    }
}

/* w^j for the stage of length len (table of len/2 entries), j < len, sign s:
 * w^j = -w^(j - len/2) beyond the table. */
static inline void tw_at(const double *w, size_t half, size_t j, double s, double *wr, double *wi)
{
    if (j < half) {
        *wr = w[2 * j];
        *wi = s * w[2 * j + 1];
    } else {
        *wr = -w[2 * (j - half)];
        *wi = -s * w[2 * (j - half) + 1];
    }
}

/* Two radix-2 DIF stages (lengths len, len/2) fused into one radix-4 pass: with m = len/4,
 * a..d = x[k], x[k+m], x[k+2m], x[k+3m] and w = the length-len twiddle,
 *   x[k] = (a+c) + (b+d),          x[k+m]  = w^2k ((a+c) - (b+d)),
 *   x[k+2m] = w^k ((a-c) + si(b-d)), x[k+3m] = w^3k ((a-c) - si(b-d))   (i = sqrt(-1)),
 * exactly what the two radix-2 stages produce, with half the passes over memory. */
static void dif_stage4(double *x, size_t base, size_t end, size_t len, double s, const double *tw)
{
    size_t m = len >> 2, half = len >> 1;
    const double *w = tw + 2 * (half - 1);
    for (size_t i = base; i < end; i += len) {
        double *p0 = x + 2 * i, *p1 = p0 + 2 * m, *p2 = p1 + 2 * m, *p3 = p2 + 2 * m;
        for (size_t k = 0; k < m; k++) {
            double ar = p0[2 * k], ai = p0[2 * k + 1], br = p1[2 * k], bi = p1[2 * k + 1];
            double cr = p2[2 * k], ci = p2[2 * k + 1], dr = p3[2 * k], di = p3[2 * k + 1];
            double t0r = ar + cr, t0i = ai + ci, t1r = ar - cr, t1i = ai - ci;
            double t2r = br + dr, t2i = bi + di;
            double t3r = -s * (bi - di), t3i = s * (br - dr); /* s i (b - d) */
            double w1r, w1i, w2r, w2i, w3r, w3i;
            tw_at(w, half, k, s, &w1r, &w1i);
            tw_at(w, half, 2 * k, s, &w2r, &w2i);
            tw_at(w, half, 3 * k, s, &w3r, &w3i);
            p0[2 * k] = t0r + t2r;
            p0[2 * k + 1] = t0i + t2i;
            double yr = t0r - t2r, yi = t0i - t2i;
            p1[2 * k] = yr * w2r - yi * w2i;
            p1[2 * k + 1] = yr * w2i + yi * w2r;
            yr = t1r + t3r;
            yi = t1i + t3i;
            p2[2 * k] = yr * w1r - yi * w1i;
            p2[2 * k + 1] = yr * w1i + yi * w1r;
            yr = t1r - t3r;
            yi = t1i - t3i;
            p3[2 * k] = yr * w3r - yi * w3i;
            p3[2 * k + 1] = yr * w3i + yi * w3r;
        }
    }
}

/* Two radix-2 DIT stages (lengths len/2, len) fused: with A = a, B = w^2k b, C = w^k c,
 * D = w^3k d: x[k] = (A+B) + (C+D), x[k+2m] = (A+B) - (C+D), x[k+m] = (A-B) + si(C-D),
 * x[k+3m] = (A-B) - si(C-D). */
static void dit_stage4(double *x, size_t base, size_t end, size_t len, double s, const double *tw)
{
    size_t m = len >> 2, half = len >> 1;
    const double *w = tw + 2 * (half - 1);
    for (size_t i = base; i < end; i += len) {
        double *p0 = x + 2 * i, *p1 = p0 + 2 * m, *p2 = p1 + 2 * m, *p3 = p2 + 2 * m;
        for (size_t k = 0; k < m; k++) {
            double w1r, w1i, w2r, w2i, w3r, w3i;
            tw_at(w, half, k, s, &w1r, &w1i);
            tw_at(w, half, 2 * k, s, &w2r, &w2i);
            tw_at(w, half, 3 * k, s, &w3r, &w3i);
            double Ar = p0[2 * k], Ai = p0[2 * k + 1];
            double br = p1[2 * k], bi = p1[2 * k + 1];
            double Br = br * w2r - bi * w2i, Bi = br * w2i + bi * w2r;
            double cr = p2[2 * k], ci = p2[2 * k + 1];
            double Cr = cr * w1r - ci * w1i, Ci = cr * w1i + ci * w1r;
            double dr = p3[2 * k], di = p3[2 * k + 1];
            double Dr = dr * w3r - di * w3i, Di = dr * w3i + di * w3r;
            double s0r = Ar + Br, s0i = Ai + Bi, s1r = Ar - Br, s1i = Ai - Bi;
            double s2r = Cr + Dr, s2i = Ci + Di;
            double s3r = -s * (Ci - Di), s3i = s * (Cr - Dr); /* s i (C - D) */
            p0[2 * k] = s0r + s2r;
            p0[2 * k + 1] = s0i + s2i;
            p2[2 * k] = s0r - s2r;
            p2[2 * k + 1] = s0i - s2i;
            p1[2 * k] = s1r + s3r;
            p1[2 * k + 1] = s1i + s3i;
            p3[2 * k] = s1r - s3r;
            p3[2 * k + 1] = s1i - s3i;
        }
    }
}

/* DIF stages of lengths from `top` down to `bottom` (powers of two) on [base, end), two at a
 * time where possible. */
static void dif_range(double *x, size_t base, size_t end, size_t top, size_t bottom, double s,
                      const double *tw)
{
    size_t len = top;
    while (len >= bottom && len >= 2) {
        if (len / 2 >= bottom && len >= 4) {
            dif_stage4(x, base, end, len, s, tw);
            len >>= 2;
        } else {
            dif_stage(x, base, end, len, s, tw);
            len >>= 1;
        }
    }
}

static void dit_range(double *x, size_t base, size_t end, size_t bottom, size_t top, double s,
                      const double *tw)
{
    size_t len = bottom < 2 ? 2 : bottom;
    while (len <= top) {
        if (2 * len <= top) {
            dit_stage4(x, base, end, 2 * len, s, tw);
            len <<= 2;
        } else {
            dit_stage(x, base, end, len, s, tw);
            len <<= 1;
        }
    }
}

/* Forward-style transform, natural order in, bit-reversed order out (Gentleman-Sande). */
static void fft_dif(double *x, size_t n, int sign, const double *tw)
{
    double s = sign < 0 ? -1.0 : 1.0;
    size_t blk = n < FFT_BLOCK ? n : FFT_BLOCK;
    if (n > blk) dif_range(x, 0, n, n, 2 * blk, s, tw);
    for (size_t b = 0; b < n; b += blk) dif_range(x, b, b + blk, blk, 2, s, tw);
}

/* Bit-reversed order in, natural order out (Cooley-Tukey). */
static void fft_dit(double *x, size_t n, int sign, const double *tw)
{
    double s = sign < 0 ? -1.0 : 1.0;
    size_t blk = n < FFT_BLOCK ? n : FFT_BLOCK;
    for (size_t b = 0; b < n; b += blk) dit_range(x, b, b + blk, 2, blk, s, tw);
    if (n > blk) dit_range(x, 0, n, 2 * blk, n, s, tw);
}

static void bit_reverse(double *x, size_t n)
{
    for (size_t i = 1, j = 0; i < n; i++) {
        size_t bit = n >> 1;
        for (; j & bit; bit >>= 1) j ^= bit;
        j ^= bit;
        if (i < j) {
            double tr = x[2 * i], ti = x[2 * i + 1];
            x[2 * i] = x[2 * j];
            x[2 * i + 1] = x[2 * j + 1];
            x[2 * j] = tr;
            x[2 * j + 1] = ti;
        }
    }
}

void dpc__fft(double *x, size_t n, int sign, const double *tw)
{
    if (n < 2) return;
    fft_dif(x, n, sign, tw);
    bit_reverse(x, n);
}

void dpc__convolve_direct(const double *a, size_t na, const double *b, size_t nb, double *out)
{
    memset(out, 0, (na + nb - 1) * sizeof *out);
    for (size_t i = 0; i < na; i++) {
        double ai = a[i];
        if (ai == 0.0) continue;
        for (size_t j = 0; j < nb; j++) out[i + j] += ai * b[j];
    }
}

/* Even/odd half-spectra of a real sequence packed as z_j = x_2j + i x_2j+1 (M-point DFT Z):
 * E_k = (Z_k + conj Z_{M-k})/2, O_k = (Z_k - conj Z_{M-k})/(2i). */
static void even_odd(const double *zk, const double *zmk, double e[2], double o[2])
{
    double cr = zmk[0], ci = -zmk[1];
    e[0] = 0.5 * (zk[0] + cr);
    e[1] = 0.5 * (zk[1] + ci);
    double dr = zk[0] - cr, di = zk[1] - ci; /* (dr + i di) / (2i) = (di - i dr) / 2 */
    o[0] = 0.5 * di;
    o[1] = -0.5 * dr;
}

void dpc__conv_ws_free(dpc__conv_ws *ws)
{
    if (!ws) return;
    free(ws->tw);
    free(ws->br);
    free(ws->za);
    free(ws->zb);
    ws->tw = ws->br = ws->za = ws->zb = NULL;
    ws->M = ws->cap = 0;
}

/* Tables for M points: the per-stage twiddles and br[p] = exp(2 pi i rev(p) / M) in
 * bit-reversed order, built sequentially by doubling: for size 2N the first half is the table
 * for N and the second half that times exp(2 pi i / 2N) (rev_2N(N + p) = 2 rev_N(p) + 1). Each
 * entry is a product of at most log2(M) correctly rounded factors. */
static dpc_status ws_tables(dpc__conv_ws *ws, size_t M)
{
    if (ws->M == M) return DPC_OK;
    free(ws->tw);
    free(ws->br);
    ws->M = 0;
    ws->tw = dpc__fft_twiddles(M);
    ws->br = dpc__malloc_array(2 * M, sizeof *ws->br);
    if (!ws->tw || !ws->br) return DPC_E_NOMEM;
    double *br = ws->br;
    br[0] = 1.0;
    br[1] = 0.0;
    for (size_t N = 1; N < M; N <<= 1) {
        double c = cos(DPC__PI / (double)N), sn = sin(DPC__PI / (double)N);
        for (size_t p = 0; p < N; p++) {
            br[2 * (N + p)] = br[2 * p] * c - br[2 * p + 1] * sn;
            br[2 * (N + p) + 1] = br[2 * p] * sn + br[2 * p + 1] * c;
        }
    }
    ws->M = M;
    return DPC_OK;
}

dpc_status dpc__convolve(const double *a, size_t na, const double *b, size_t nb, double *out)
{
    dpc__conv_ws ws = {0, NULL, NULL, 0, NULL, NULL};
    dpc_status st = dpc__convolve_ws(&ws, a, na, b, nb, out);
    dpc__conv_ws_free(&ws);
    return st;
}

dpc_status dpc__convolve_ws(dpc__conv_ws *ws, const double *a, size_t na, const double *b,
                            size_t nb, double *out)
{
    size_t m = na + nb - 1;
    if ((na < nb ? na : nb) <= 32 || (double)na * (double)nb <= 65536.0) {
        dpc__convolve_direct(a, na, b, nb, out);
        return DPC_OK;
    }
    size_t n = 4;
    unsigned bits = 1; /* log2(M), M = n/2 */
    while (n < m) {
        n <<= 1;
        bits++;
    }
    size_t M = n / 2;
    int square = (a == b && na == nb);
    /* A zero-padded real array of n doubles is exactly the packed complex sequence z_j =
     * x_2j + i x_2j+1 of M points: real-input FFTs at half size (Cooley, Lewis & Welch 1970). */
    if (ws_tables(ws, M)) return DPC_E_NOMEM;
    if (ws->cap < n) {
        free(ws->za);
        free(ws->zb);
        ws->cap = 0;
        ws->za = dpc__malloc_array(n, sizeof *ws->za);
        ws->zb = dpc__malloc_array(n, sizeof *ws->zb);
        if (!ws->za || !ws->zb) return DPC_E_NOMEM;
        ws->cap = n;
    }
    double *za = ws->za, *zb = ws->zb, *tw = ws->tw;
    const double *br = ws->br;
    memset(za + na, 0, (n - na) * sizeof *za);
    memcpy(za, a, na * sizeof *a);
    fft_dif(za, M, -1, tw);
    if (!square) {
        memcpy(zb, b, nb * sizeof *b);
        memset(zb + nb, 0, (n - nb) * sizeof *zb);
        fft_dif(zb, M, -1, tw);
    } else {
        zb = za;
    }
    /* Pointwise product of the n-point spectra, folded back into one M-point spectrum:
     * with X = E + W^k O and X_{k+M} = E - W^k O (W = e^{-2 pi i/n}), the packed spectrum of the
     * product y = a * b is Z'_k = E_a E_b + W^2k O_a O_b + i (E_a O_b + O_a E_b).
     * The DIF output is bit-reversed: position p holds frequency rev(p), and the partner
     * frequency M - k sits at the mirror image of p within its dyadic block [2^j, 2^(j+1)). */
    for (size_t blk = 0; blk <= bits; blk++) {
        /* blk 0: position 0 (k = 0) alone; blk 1: position 1 (k = M/2) alone; blk j >= 2:
         * positions [2^(j-1), 2^j), paired by mirror image. */
        size_t lo = blk == 0 ? 0 : (size_t)1 << (blk - 1), hi = blk == 0 ? 1 : (size_t)1 << blk;
        for (size_t pp = lo; pp < lo + (hi - lo + 1) / 2; pp++) {
            size_t p2 = lo + hi - 1 - pp;
            double wr = br[2 * pp], wi = -br[2 * pp + 1]; /* W^2k = e^{-2 pi i k / M} */
            double ea[2], oa[2], eb[2], ob[2];
            even_odd(za + 2 * pp, za + 2 * p2, ea, oa);
            even_odd(zb + 2 * pp, zb + 2 * p2, eb, ob);
            double eer = ea[0] * eb[0] - ea[1] * eb[1], eei = ea[0] * eb[1] + ea[1] * eb[0];
            double oor = oa[0] * ob[0] - oa[1] * ob[1], ooi = oa[0] * ob[1] + oa[1] * ob[0];
            double pr = eer + (wr * oor - wi * ooi), pi = eei + (wr * ooi + wi * oor);
            double xr = ea[0] * ob[0] - ea[1] * ob[1] + oa[0] * eb[0] - oa[1] * eb[1];
            double xi = ea[0] * ob[1] + ea[1] * ob[0] + oa[0] * eb[1] + oa[1] * eb[0];
            /* Z'_k = P + i X and Z'_{M-k} = conj(P) + i conj(X) */
            za[2 * pp] = pr - xi;
            za[2 * pp + 1] = pi + xr;
            if (p2 != pp) {
                za[2 * p2] = pr + xi;
                za[2 * p2 + 1] = xr - pi;
            }
        }
    }
    fft_dit(za, M, +1, tw);
    double inv = 1.0 / (double)M;
    for (size_t i = 0; i < m; i++) out[i] = za[i] * inv;
    return DPC_OK;
}

/* ==== Circular self-convolution power ====================================================== */

static size_t rev_bits(size_t p, unsigned bits)
{
    size_t r = 0;
    for (unsigned b = 0; b < bits; b++, p >>= 1) r = (r << 1) | (p & 1u);
    return r;
}

/* z^T for complex z = (re, im), T >= 1, as exp(T log z) with log|z| = log1p((re-1)(re+1) +
 * im^2)/2: re - 1 is exact near 1, so log|z| keeps its relative accuracy where |z| ~ 1 (binary
 * powering would lose a factor T there: each squaring doubles the relative error). */
static void cpow_u64(double re, double im, uint64_t T, double out[2])
{
    double m2 = re * re + im * im;
    if (m2 == 0.0) {
        out[0] = out[1] = 0.0;
        return;
    }
    double lm = (m2 > 0.25 && m2 < 4.0) ? 0.5 * log1p((re - 1.0) * (re + 1.0) + im * im)
                                          : 0.5 * log(m2);
    double t = (double)T, mag = exp(t * lm), ang = atan2(im, re);
    /* T * ang reduced modulo 2 pi in two parts to keep its absolute accuracy */
    double a = fmod(t * ang, 2.0 * DPC__PI);
    out[0] = mag * cos(a);
    out[1] = mag * sin(a);
}

/* One frequency k of the n-point spectrum from its packed half-spectra (E, O) and
 * W^k = e^{-i pi k / M}: X_k = E + W^k O, X_{k+M} = E - W^k O, Y = X^T, and the packed
 * spectrum of y is Z'_k = (Y_k + Y_{k+M})/2 + i conj(W^k) (Y_k - Y_{k+M})/2. */
static void power_bin(const double e[2], const double o[2], size_t k, size_t M, uint64_t T,
                      double thr2, double z[2])
{
    /* |X_k|, |X_{k+M}| <= |E| + |O| <= sqrt(2 (|E|^2 + |O|^2)) */
    if (2.0 * (e[0] * e[0] + e[1] * e[1] + o[0] * o[0] + o[1] * o[1]) < thr2) {
        z[0] = z[1] = 0.0;
        return;
    }
    double ang = DPC__PI * (double)k / (double)M, wr = cos(ang), wi = -sin(ang);
    double wor = wr * o[0] - wi * o[1], woi = wr * o[1] + wi * o[0];
    double y1[2], y2[2];
    cpow_u64(e[0] + wor, e[1] + woi, T, y1);
    cpow_u64(e[0] - wor, e[1] - woi, T, y2);
    double er = 0.5 * (y1[0] + y2[0]), ei = 0.5 * (y1[1] + y2[1]);
    double dr = 0.5 * (y1[0] - y2[0]), di = 0.5 * (y1[1] - y2[1]);
    double orr = wr * dr + wi * di, oi = wr * di - wi * dr; /* conj(W) d */
    z[0] = er - oi;
    z[1] = ei + orr;
}

dpc_status dpc__selfconv_circular(double *x, size_t n, uint64_t T, double floor_abs)
{
    if (n < 4 || (n & (n - 1)) || T == 0) return DPC_E_INVALID;
    if (T == 1) return DPC_OK;
    size_t M = n / 2;
    unsigned bits = 0;
    while (((size_t)1 << bits) < M) bits++;
    double *tw = dpc__fft_twiddles(M);
    if (!tw) return DPC_E_NOMEM;
    fft_dif(x, M, -1, tw);
    /* a bin whose modulus stays below thr has |X|^T < floor_abs: its share of any output
     * value is below floor_abs (the inverse transform averages the bins) */
    double thr = floor_abs > 0.0 ? exp(log(floor_abs) / (double)T) : 0.0, thr2 = thr * thr;
    for (size_t blk = 0; blk <= bits; blk++) {
        size_t lo = blk == 0 ? 0 : (size_t)1 << (blk - 1), hi = blk == 0 ? 1 : (size_t)1 << blk;
        for (size_t pp = lo; pp < lo + (hi - lo + 1) / 2; pp++) {
            size_t p2 = lo + hi - 1 - pp;
            size_t k = rev_bits(pp, bits), k2 = (M - k) & (M - 1);
            double e1[2], o1[2], e2[2], o2[2], z1[2], z2[2];
            even_odd(x + 2 * pp, x + 2 * p2, e1, o1);
            even_odd(x + 2 * p2, x + 2 * pp, e2, o2);
            power_bin(e1, o1, k, M, T, thr2, z1);
            if (p2 != pp) power_bin(e2, o2, k2, M, T, thr2, z2);
            x[2 * pp] = z1[0];
            x[2 * pp + 1] = z1[1];
            if (p2 != pp) {
                x[2 * p2] = z2[0];
                x[2 * p2 + 1] = z2[1];
            }
        }
    }
    fft_dit(x, M, +1, tw);
    free(tw);
    double inv = 1.0 / (double)M;
    for (size_t i = 0; i < n; i++) x[i] *= inv;
    return DPC_OK;
}
