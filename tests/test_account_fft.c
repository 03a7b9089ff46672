/* test_account_fft.c — the accounting module's own FFT against a naive DFT, and FFT
 * convolution (two-sequence and squaring) against direct summation, across the size at which
 * the FFT path takes over. */
#include "account/acc_internal.h"
#include "harness.h"

#include <stdlib.h>

#define PI 3.14159265358979323846

/* X_k = sum_j x_j exp(sign 2 pi i j k / n), O(n^2), long double accumulation. */
static void naive_dft(const double *x, double *out, size_t n, int sign)
{
    for (size_t k = 0; k < n; k++) {
        long double sr = 0, si = 0;
        for (size_t j = 0; j < n; j++) {
            long double t = (long double)sign * 2.0L * PI * (long double)((j * k) % n) / n;
            long double c = cosl(t), s = sinl(t);
            sr += x[2 * j] * c - x[2 * j + 1] * s;
            si += x[2 * j] * s + x[2 * j + 1] * c;
        }
        out[2 * k] = (double)sr;
        out[2 * k + 1] = (double)si;
    }
}

static void test_fft_vs_dft(void)
{
    size_t nmax = tests_scale() < 1.0 ? 128 : 512;
    for (size_t n = 1; n <= nmax; n *= 2) {
        double *x = malloc(2 * n * sizeof *x), *y = malloc(2 * n * sizeof *y);
        double *ref = malloc(2 * n * sizeof *ref), *tw = dpc__fft_twiddles(n);
        CHECK(x && y && ref && tw, "alloc n=%zu", n);
        if (!x || !y || !ref || !tw) return;
        for (size_t j = 0; j < 2 * n; j++) x[j] = sin(0.7 * (double)j + 0.3) + 0.25 * cos(3.1 * j);
        for (int sign = -1; sign <= 1; sign += 2) {
            for (size_t j = 0; j < 2 * n; j++) y[j] = x[j];
            dpc__fft(y, n, sign, tw);
            naive_dft(x, ref, n, sign);
            double err = 0, scale = 0;
            for (size_t j = 0; j < 2 * n; j++) {
                err = fmax(err, fabs(y[j] - ref[j]));
                scale = fmax(scale, fabs(ref[j]));
            }
            CHECK(err <= 1e-13 * (scale + 1.0), "FFT n=%zu sign=%d: max error %g (scale %g)", n,
                  sign, err, scale);
        }
        /* forward then inverse returns n x */
        for (size_t j = 0; j < 2 * n; j++) y[j] = x[j];
        dpc__fft(y, n, -1, tw);
        dpc__fft(y, n, +1, tw);
        double err = 0;
        for (size_t j = 0; j < 2 * n; j++) err = fmax(err, fabs(y[j] / (double)n - x[j]));
        CHECK(err < 1e-14, "FFT round trip n=%zu: %g", n, err);
        free(x);
        free(y);
        free(ref);
        free(tw);
    }
}

/* Sizes beyond the 2^14-point cache block exercise the long (streaming) stages and their
 * radix-4 fusion with an odd and an even number of long stages: sampled output frequencies
 * against the direct sum, and the round trip. */
static void test_fft_large(void)
{
    size_t sizes[] = {(size_t)1 << 16, (size_t)1 << 17};
    for (size_t t = 0; t < 2; t++) {
        size_t n = sizes[t];
        double *x = malloc(2 * n * sizeof *x), *y = malloc(2 * n * sizeof *y);
        double *tw = dpc__fft_twiddles(n);
        if (!x || !y || !tw) {
            CHECK(0, "alloc");
            return;
        }
        for (size_t j = 0; j < 2 * n; j++) x[j] = sin(0.37 * (double)j) + 0.5 * cos(1.3 * j * j);
        memcpy(y, x, 2 * n * sizeof *y);
        dpc__fft(y, n, -1, tw);
        size_t ks[] = {0, 1, 7, n / 4 + 3, n / 2, n - 1, 12345 % n};
        double err = 0, scale = 0;
        for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
            size_t k = ks[i];
            long double sr = 0, si = 0;
            for (size_t j = 0; j < n; j++) {
                long double a = -2.0L * PI * (long double)((j * k) % n) / n;
                sr += x[2 * j] * cosl(a) - x[2 * j + 1] * sinl(a);
                si += x[2 * j] * sinl(a) + x[2 * j + 1] * cosl(a);
            }
            err = fmax(err, fmax(fabs(y[2 * k] - (double)sr), fabs(y[2 * k + 1] - (double)si)));
            scale = fmax(scale, sqrt((double)n));
        }
        CHECK(err <= 1e-11 * scale, "FFT n=%zu sampled bins: max error %g", n, err);
        dpc__fft(y, n, +1, tw);
        double rt = 0;
        for (size_t j = 0; j < 2 * n; j++) rt = fmax(rt, fabs(y[j] / (double)n - x[j]));
        CHECK(rt < 1e-13, "FFT round trip n=%zu: %g", n, rt);
        free(x);
        free(y);
        free(tw);
    }
}

static void test_convolution(void)
{
    size_t sizes[][2] = {{1, 1},     {3, 7},      {33, 33},    {40, 1700},  {300, 301},
                         {1000, 999}, {4097, 333}, {2048, 2048}, {5000, 1},
                         {40000, 40}, {70000, 50}}; /* the last two: long FFT stages */
    for (size_t t = 0; t < sizeof sizes / sizeof sizes[0]; t++) {
        size_t na = sizes[t][0], nb = sizes[t][1], m = na + nb - 1, mm = 2 * na - 1;
        double *a = malloc(na * sizeof *a), *b = malloc(nb * sizeof *b);
        double *o = malloc(m * sizeof *o), *r = malloc(m * sizeof *r);
        double *s = malloc(mm * sizeof *s), *rs = malloc(mm * sizeof *rs);
        if (!a || !b || !o || !r || !s || !rs) {
            CHECK(0, "alloc");
            return;
        }
        /* probability-like data: positive, decaying, with tiny entries */
        for (size_t i = 0; i < na; i++) a[i] = exp(-0.01 * (double)i) * (1.5 + sin((double)i));
        for (size_t i = 0; i < nb; i++) b[i] = exp(-0.003 * (double)i) * (1.2 + cos(0.5 * i));
        CHECK(dpc__convolve(a, na, b, nb, o) == DPC_OK, "convolve %zu x %zu", na, nb);
        dpc__convolve_direct(a, na, b, nb, r);
        CHECK(dpc__convolve(a, na, a, na, s) == DPC_OK, "square %zu", na);
        if (na <= 5000) {
            dpc__convolve_direct(a, na, a, na, rs);
        } else { /* too slow directly: the general two-sequence path (checked above) instead */
            double *ac = malloc(na * sizeof *ac);
            if (!ac) return;
            memcpy(ac, a, na * sizeof *ac);
            CHECK(dpc__convolve(a, na, ac, na, rs) == DPC_OK, "a * copy(a)");
            free(ac);
        }
        double e1 = 0, s1 = 0, e2 = 0, s2 = 0;
        for (size_t i = 0; i < m; i++) {
            e1 = fmax(e1, fabs(o[i] - r[i]));
            s1 = fmax(s1, fabs(r[i]));
        }
        for (size_t i = 0; i < mm; i++) {
            e2 = fmax(e2, fabs(s[i] - rs[i]));
            s2 = fmax(s2, fabs(rs[i]));
        }
        CHECK(e1 <= 1e-13 * s1, "convolution %zu x %zu: max error %g of %g", na, nb, e1, s1);
        CHECK(e2 <= 1e-13 * s2, "squaring %zu: max error %g of %g", na, e2, s2);
        free(a);
        free(b);
        free(o);
        free(r);
        free(s);
        free(rs);
    }
}

int main(void)
{
    test_fft_vs_dft();
    test_fft_large();
    test_convolution();
    return TEST_SUMMARY();
}
