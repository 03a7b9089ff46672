/* fft.c — the public FFT plan (split real/imaginary arrays) over the shared kernel of
 * fft_core.c, the naive DFT reference, and FFT convolution with its direct reference.
 * See dpcorr/fft.h. */
#include "dpcorr/fft.h"
#include "common/util.h"
#include "fft/fft_core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct dpc_fft {
    size_t n;
    double *tw; /* kernel twiddle tables (dpc__fft_twiddles) */
};

size_t dpc_fft_next_pow2(size_t n)
{
    size_t p = 1;
    while (p < n && p < ((size_t)1 << 62)) p <<= 1;
    return p;
}

dpc_status dpc_fft_new(dpc_fft **out, size_t n, dpc_error *err)
{
    *out = NULL;
    if (n == 0 || (n & (n - 1)) != 0 || n > ((size_t)1 << 30))
        return dpc_error_set(err, DPC_E_INVALID, "fft: n = %zu must be a power of two in [1, 2^30]",
                             n);
    dpc_fft *f = calloc(1, sizeof *f);
    if (!f) return DPC__NOMEM(err, "fft plan");
    f->n = n;
    f->tw = dpc__fft_twiddles(n);
    if (!f->tw) {
        free(f);
        return DPC__NOMEM(err, "fft tables");
    }
    *out = f;
    return DPC_OK;
}

void dpc_fft_free(dpc_fft *f)
{
    if (!f) return;
    free(f->tw);
    free(f);
}

size_t dpc_fft_size(const dpc_fft *f) { return f->n; }

void dpc_fft_exec(const dpc_fft *f, double *re, double *im, int inverse)
{
    size_t n = f->n;
    if (n < 2) return;
    /* The kernel works on interleaved (re, im); the plan stays immutable (thread-shareable), so
     * the interleaved copy is per call. Should the allocation fail, fall back to the naive DFT
     * (same result up to rounding) rather than leave the data untransformed. */
    double *x = dpc__malloc_array(2 * n, sizeof *x);
    if (!x) {
        double *r2 = dpc__malloc_array(n, sizeof *r2), *i2 = dpc__malloc_array(n, sizeof *i2);
        if (r2 && i2) {
            dpc_fft_dft_naive(r2, i2, re, im, n, inverse);
            memcpy(re, r2, n * sizeof *re);
            memcpy(im, i2, n * sizeof *im);
        }
        free(r2);
        free(i2);
        return;
    }
    for (size_t k = 0; k < n; k++) {
        x[2 * k] = re[k];
        x[2 * k + 1] = im[k];
    }
    dpc__fft(x, n, inverse ? +1 : -1, f->tw);
    double s = inverse ? 1.0 / (double)n : 1.0;
    for (size_t k = 0; k < n; k++) {
        re[k] = x[2 * k] * s;
        im[k] = x[2 * k + 1] * s;
    }
    free(x);
}

void dpc_fft_dft_naive(double *out_re, double *out_im, const double *re, const double *im,
                       size_t n, int inverse)
{
    double sgn = inverse ? 1.0 : -1.0;
    for (size_t k = 0; k < n; k++) {
        double sr = 0.0, si = 0.0;
        for (size_t j = 0; j < n; j++) {
            /* reduce jk mod n exactly before the angle: accurate twiddles for any n */
            size_t m = (size_t)(((unsigned long long)j * k) % n);
            double a = sgn * 2.0 * M_PI * (double)m / (double)n;
            double c = cos(a), s = sin(a);
            sr += re[j] * c - im[j] * s;
            si += re[j] * s + im[j] * c;
        }
        out_re[k] = inverse ? sr / (double)n : sr;
        out_im[k] = inverse ? si / (double)n : si;
    }
}

void dpc_fft_convolve_naive(double *y, const double *a, size_t na, const double *b, size_t nb)
{
    size_t ny = na + nb - 1;
    for (size_t t = 0; t < ny; t++) {
        double s = 0.0;
        size_t j0 = t + 1 > nb ? t + 1 - nb : 0, j1 = t < na - 1 ? t : na - 1;
        for (size_t j = j0; j <= j1; j++) s += a[j] * b[t - j];
        y[t] = s;
    }
}

dpc_status dpc_fft_convolve(double *y, const double *a, size_t na, const double *b, size_t nb,
                            dpc_error *err)
{
    if (na == 0 || nb == 0) return dpc_error_set(err, DPC_E_INVALID, "fft convolve: empty input");
    dpc_status st = dpc__convolve(a, na, b, nb, y);
    if (st) return DPC__NOMEM(err, "fft convolution");
    return DPC_OK;
}
