/* fft.c — radix-2 complex FFT (iterative DIT, split arrays), the naive DFT reference, and FFT
 * convolution with its direct reference. See dpcorr/fft.h. */
#include "dpcorr/fft.h"
#include "common/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct dpc_fft {
    size_t n;
    unsigned logn;
    size_t *rev;   /* (n) bit-reversal permutation */
    double *twr;   /* (n) stage twiddles: for half-length h, twr[h + j] = cos(pi j / h), j < h */
    double *twi;   /* (n) sin(pi j / h) */
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
    while (((size_t)1 << f->logn) < n) f->logn++;
    f->rev = dpc__malloc_array(n, sizeof *f->rev);
    f->twr = dpc__malloc_array(n, sizeof *f->twr);
    f->twi = dpc__malloc_array(n, sizeof *f->twi);
    if (!f->rev || !f->twr || !f->twi) {
        dpc_fft_free(f);
        return DPC__NOMEM(err, "fft tables");
    }
    for (size_t i = 0; i < n; i++) {
        size_t r = 0;
        for (unsigned b = 0; b < f->logn; b++) r |= ((i >> b) & 1u) << (f->logn - 1 - b);
        f->rev[i] = r;
    }
    f->twr[0] = 1.0;
    f->twi[0] = 0.0;
    for (size_t h = 1; h < n; h <<= 1)
        for (size_t j = 0; j < h; j++) {
            double a = M_PI * (double)j / (double)h;
            f->twr[h + j] = cos(a);
            f->twi[h + j] = sin(a);
        }
    *out = f;
    return DPC_OK;
}

void dpc_fft_free(dpc_fft *f)
{
    if (!f) return;
    free(f->rev);
    free(f->twr);
    free(f->twi);
    free(f);
}

size_t dpc_fft_size(const dpc_fft *f) { return f->n; }

void dpc_fft_exec(const dpc_fft *f, double *re, double *im, int inverse)
{
    size_t n = f->n;
    for (size_t i = 0; i < n; i++) {
        size_t r = f->rev[i];
        if (r > i) {
            double t = re[i];
            re[i] = re[r];
            re[r] = t;
            t = im[i];
            im[i] = im[r];
            im[r] = t;
        }
    }
    double sgn = inverse ? 1.0 : -1.0;
    for (size_t h = 1; h < n; h <<= 1) {
        const double *wr = f->twr + h, *wi = f->twi + h;
        for (size_t i = 0; i < n; i += 2 * h) {
            double *ar = re + i, *ai = im + i, *br = re + i + h, *bi = im + i + h;
            for (size_t j = 0; j < h; j++) {
                double c = wr[j], s = sgn * wi[j];
                double tr = br[j] * c - bi[j] * s;
                double ti = br[j] * s + bi[j] * c;
                br[j] = ar[j] - tr;
                bi[j] = ai[j] - ti;
                ar[j] += tr;
                ai[j] += ti;
            }
        }
    }
    if (inverse) {
        double s = 1.0 / (double)n;
        for (size_t i = 0; i < n; i++) {
            re[i] *= s;
            im[i] *= s;
        }
    }
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
    if (na == 0 || nb == 0) return dpc_error_set(err, DPC_E_INVALID, "convolve: empty input");
    size_t ny = na + nb - 1, n = dpc_fft_next_pow2(ny);
    dpc_fft *f = NULL;
    dpc_status st = dpc_fft_new(&f, n, err);
    if (st) return st;
    double *buf = dpc__calloc(2 * n, sizeof *buf);
    if (!buf) {
        dpc_fft_free(f);
        return DPC__NOMEM(err, "convolution buffer");
    }
    /* pack a in the real part and b in the imaginary part: one forward FFT gives both spectra
     * (A_k = (Z_k + conj Z_{-k})/2, B_k = (Z_k - conj Z_{-k})/(2i)); then A B by one inverse. */
    double *re = buf, *im = buf + n;
    memcpy(re, a, na * sizeof *a);
    memcpy(im, b, nb * sizeof *b);
    dpc_fft_exec(f, re, im, 0);
    double *pr = dpc__malloc_array(2 * n, sizeof *pr);
    if (!pr) {
        free(buf);
        dpc_fft_free(f);
        return DPC__NOMEM(err, "convolution buffer");
    }
    double *pi = pr + n;
    for (size_t k = 0; k < n; k++) {
        size_t mk = (n - k) & (n - 1);
        double zr = re[k], zi = im[k], cr = re[mk], ci = -im[mk];
        double ar = 0.5 * (zr + cr), ai = 0.5 * (zi + ci);     /* A_k */
        double br = 0.5 * (zi - ci), bi = -0.5 * (zr - cr);    /* B_k = (Z - conjZ-)/(2i) */
        pr[k] = ar * br - ai * bi;
        pi[k] = ar * bi + ai * br;
    }
    dpc_fft_exec(f, pr, pi, 1);
    memcpy(y, pr, ny * sizeof *y);
    free(pr);
    free(buf);
    dpc_fft_free(f);
    return DPC_OK;
}
