/* test_fft.c — radix-2 FFT against the naive DFT, inverse round trip, FFT convolution against
 * the direct convolution (the naive references kept next to the fast kernels). */
#include "dpcorr/fft.h"
#include "harness.h"

int main(void)
{
    dpc_error err = {0};
    unsigned x = 99;
    for (size_t n = 1; n <= 1024; n *= 2) {
        double *re = malloc(n * sizeof *re), *im = malloc(n * sizeof *im);
        double *r0 = malloc(n * sizeof *r0), *i0 = malloc(n * sizeof *i0);
        double *nr = malloc(n * sizeof *nr), *ni = malloc(n * sizeof *ni);
        for (size_t k = 0; k < n; k++) {
            x = x * 1103515245u + 12345u;
            re[k] = r0[k] = ((x >> 8) & 0xFFFF) / 32768.0 - 1.0;
            x = x * 1103515245u + 12345u;
            im[k] = i0[k] = ((x >> 8) & 0xFFFF) / 32768.0 - 1.0;
        }
        dpc_fft *f = NULL;
        CHECK_OK(dpc_fft_new(&f, n, &err), &err);
        dpc_fft_exec(f, re, im, 0);
        dpc_fft_dft_naive(nr, ni, r0, i0, n, 0);
        double e = 0, s = 0;
        for (size_t k = 0; k < n; k++) {
            e = fmax(e, fmax(fabs(re[k] - nr[k]), fabs(im[k] - ni[k])));
            s = fmax(s, fabs(nr[k]));
        }
        CHECK(e <= 1e-13 * (s + 1), "fft vs dft n=%zu: %g", n, e);
        dpc_fft_exec(f, re, im, 1);
        e = 0;
        for (size_t k = 0; k < n; k++) e = fmax(e, fmax(fabs(re[k] - r0[k]), fabs(im[k] - i0[k])));
        CHECK(e <= 1e-14, "round trip n=%zu: %g", n, e);
        /* inverse naive agrees too */
        dpc_fft_dft_naive(nr, ni, r0, i0, n, 1);
        dpc_fft_exec(f, re, im, 1);
        e = 0;
        for (size_t k = 0; k < n; k++) e = fmax(e, fmax(fabs(re[k] - nr[k]), fabs(im[k] - ni[k])));
        CHECK(e <= 1e-14, "inverse vs naive n=%zu: %g", n, e);
        dpc_fft_free(f);
        free(re), free(im), free(r0), free(i0), free(nr), free(ni);
    }
    /* known answer: the DFT of a unit impulse at 1 is e^{-2 pi i k / n} */
    double re[8] = {0, 1, 0, 0, 0, 0, 0, 0}, im[8] = {0};
    dpc_fft *f = NULL;
    CHECK_OK(dpc_fft_new(&f, 8, &err), &err);
    dpc_fft_exec(f, re, im, 0);
    for (int k = 0; k < 8; k++) {
        CHECK_NEAR_ABS(re[k], cos(2 * M_PI * k / 8), 1e-15, "impulse re %d", k);
        CHECK_NEAR_ABS(im[k], -sin(2 * M_PI * k / 8), 1e-15, "impulse im %d", k);
    }
    dpc_fft_free(f);
    /* convolution */
    const size_t na[] = {1, 5, 100, 300}, nb[] = {1, 17, 64, 1000};
    for (int c = 0; c < 4; c++) {
        double *a = malloc(na[c] * sizeof *a), *b = malloc(nb[c] * sizeof *b);
        size_t ny = na[c] + nb[c] - 1;
        double *y1 = malloc(ny * sizeof *y1), *y2 = malloc(ny * sizeof *y2);
        for (size_t k = 0; k < na[c]; k++) a[k] = sin(1.0 + (double)k);
        for (size_t k = 0; k < nb[c]; k++) b[k] = cos(0.3 * (double)k) / (1.0 + (double)k);
        CHECK_OK(dpc_fft_convolve(y1, a, na[c], b, nb[c], &err), &err);
        dpc_fft_convolve_naive(y2, a, na[c], b, nb[c]);
        double e = 0;
        for (size_t k = 0; k < ny; k++) e = fmax(e, fabs(y1[k] - y2[k]));
        CHECK(e <= 1e-12, "convolution %zu x %zu: %g", na[c], nb[c], e);
        free(a), free(b), free(y1), free(y2);
    }
    CHECK(dpc_fft_new(&f, 12, &err) == DPC_E_INVALID && strstr(err.msg, "power of two"), "n = 12 rejected");
    CHECK(dpc_fft_next_pow2(1000) == 1024 && dpc_fft_next_pow2(1024) == 1024, "next_pow2");
    return TEST_SUMMARY();
}
