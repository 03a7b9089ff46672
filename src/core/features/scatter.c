/* scatter.c — the 2-D scattering transform (dpcorr/features.h): the Morlet filter bank in
 * Fourier, and the order-0/1/2 coefficients of one image. Square images. */
#include "dpcorr/features.h"
#include "common/util.h"
#include "features/fft2d.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RES (DPC_SCATTER_MAX_J + 1)

struct dpc_scatter {
    size_t H, J, L, Np, pad, K, oh;
    dpc__fftp plan[MAX_RES];          /* size Np >> res */
    double *psi[DPC_SCATTER_MAX_J * DPC_SCATTER_MAX_L][MAX_RES]; /* real, (Np>>res)^2 */
    double *phi[MAX_RES];
};

/* kymatio's gabor_2d on an (N, N) grid: the 5 x 5 periodised sum, normalised by
 * 2 * 3.1415 sigma^2 / slant (kymatio's constant). g: complex (re, im) (N, N). */
static void gabor(size_t N, double sigma, double theta, double xi, double slant, double *gr,
                  double *gi)
{
    double c = cos(theta), s = sin(theta), s2 = 2 * sigma * sigma, sl2 = slant * slant;
    double c00 = (c * c + s * s * sl2) / s2, c01 = c * s * (1 - sl2) / s2;
    double c11 = (s * s + c * c * sl2) / s2, norm = 2 * 3.1415 * sigma * sigma / slant;
    double n = (double)N;
    for (size_t x = 0; x < N; x++)
        for (size_t y = 0; y < N; y++) {
            double ar = 0, ai = 0;
            for (int ex = -2; ex <= 2; ex++)
                for (int ey = -2; ey <= 2; ey++) {
                    double xx = (double)x + ex * n, yy = (double)y + ey * n;
                    double e = exp(-(c00 * xx * xx + 2 * c01 * xx * yy + c11 * yy * yy));
                    double ph = xi * (xx * c + yy * s);
                    ar += e * cos(ph);
                    ai += e * sin(ph);
                }
            gr[x * N + y] = ar / norm;
            gi[x * N + y] = ai / norm;
        }
}

/* kymatio's periodize_filter_fft: F (N, N) masked to the central band, folded to
 * (N / 2^res)^2. */
static void periodize(const double *F, size_t N, size_t res, double *out)
{
    size_t k = (size_t)1 << res, n = N / k;
    size_t len = (size_t)((double)N * (1.0 - ldexp(1.0, -(int)res)));
    size_t start = (size_t)((double)N * ldexp(1.0, -(int)res - 1));
    memset(out, 0, n * n * sizeof *out);
    for (size_t i = 0; i < N; i++)
        for (size_t j = 0; j < N; j++) {
            int masked = (i >= start && i < start + len) || (j >= start && j < start + len);
            if (!masked) out[(i % n) * n + j % n] += F[i * N + j];
        }
}

/* Real part of fft2 of a complex filter (the imaginary part is zero by symmetry). */
static void to_fourier(const dpc__fftp *p, double *re, double *im, double *scr)
{
    dpc__fft2d(p, re, im, 0, scr);
}

void dpc_scatter_free(dpc_scatter *s)
{
    if (!s) return;
    for (size_t r = 0; r < MAX_RES; r++) {
        dpc__fft2d_plan_free(&s->plan[r]);
        free(s->phi[r]);
        for (size_t n = 0; n < DPC_SCATTER_MAX_J * DPC_SCATTER_MAX_L; n++) free(s->psi[n][r]);
    }
    free(s);
}

/* Builds the Fourier filters of s (Np, J, L set). */
static dpc_status build_filters(dpc_scatter *s, dpc_error *err)
{
    size_t N = s->Np, NN = N * N;
    double *re = dpc__malloc_array(4 * NN + dpc__fft2d_scratch(N, N), sizeof(double));
    if (!re) return DPC__NOMEM(err, "scattering filters");
    double *im = re + NN, *mr = im + NN, *mi = mr + NN, *scr = mi + NN;
    dpc_status st = DPC_OK;
    for (size_t j = 0; j < s->J && !st; j++)
        for (size_t l = 0; l < s->L && !st; l++) {
            double sigma = 0.8 * ldexp(1.0, (int)j), xi = 0.75 * M_PI / ldexp(1.0, (int)j);
            double theta = ((double)(s->L / 2) - 1.0 - (double)l) * M_PI / (double)s->L;
            double slant = 4.0 / (double)s->L;
            gabor(N, sigma, theta, xi, slant, re, im);
            gabor(N, sigma, theta, 0.0, slant, mr, mi);
            double swr = 0, swi = 0, smr = 0, smi = 0;
            for (size_t q = 0; q < NN; q++) swr += re[q], swi += im[q], smr += mr[q], smi += mi[q];
            double den = smr * smr + smi * smi; /* K = sum(wv) / sum(wv_modulus) */
            double kr = (swr * smr + swi * smi) / den, ki = (swi * smr - swr * smi) / den;
            for (size_t q = 0; q < NN; q++) {
                double ar = re[q] - (kr * mr[q] - ki * mi[q]);
                double ai = im[q] - (kr * mi[q] + ki * mr[q]);
                re[q] = ar, im[q] = ai;
            }
            to_fourier(&s->plan[0], re, im, scr);
            size_t nres = j + 1 < (s->J > 2 ? s->J - 1 : 1) ? j + 1 : (s->J > 2 ? s->J - 1 : 1);
            for (size_t r = 0; r < nres; r++) {
                size_t n = N >> r;
                double *f = dpc__malloc_array(n * n, sizeof(double));
                if (!f) {
                    st = DPC__NOMEM(err, "scattering filters");
                    break;
                }
                periodize(re, N, r, f);
                s->psi[j * s->L + l][r] = f;
            }
        }
    if (!st) {
        gabor(N, 0.8 * ldexp(1.0, (int)s->J - 1), 0.0, 0.0, 1.0, re, im);
        to_fourier(&s->plan[0], re, im, scr);
        for (size_t r = 0; r < s->J && !st; r++) {
            size_t n = N >> r;
            s->phi[r] = dpc__malloc_array(n * n, sizeof(double));
            if (!s->phi[r]) st = DPC__NOMEM(err, "scattering filters");
            else periodize(re, N, r, s->phi[r]);
        }
    }
    free(re);
    return st;
}

dpc_status dpc_scatter_new(dpc_scatter **out, size_t H, size_t W, size_t J, size_t L,
                           dpc_error *err)
{
    if (!out) return dpc_error_set(err, DPC_E_INVALID, "dpc_scatter_new: out is NULL");
    *out = NULL;
    if (J < 1 || J > DPC_SCATTER_MAX_J)
        return dpc_error_param(err, DPC_E_INVALID, "J", "must be in 1..%d, got %zu",
                               DPC_SCATTER_MAX_J, J);
    if (L < 1 || L > DPC_SCATTER_MAX_L)
        return dpc_error_param(err, DPC_E_INVALID, "L", "must be in 1..%d, got %zu",
                               DPC_SCATTER_MAX_L, L);
    if (H != W)
        return dpc_error_param(err, DPC_E_UNSUPPORTED, "W", "images must be square, got %zu x %zu",
                               H, W);
    if (H < ((size_t)1 << J) || H > 4096)
        return dpc_error_param(err, DPC_E_INVALID, "H", "must be in 2^J..4096, got %zu", H);
    dpc_scatter *s = calloc(1, sizeof *s);
    if (!s) return DPC__NOMEM(err, "the scattering transform");
    size_t k = (size_t)1 << J;
    s->H = H, s->J = J, s->L = L;
    s->Np = ((H + k) / k + 1) * k;
    s->pad = (s->Np - H) / 2;
    s->K = 1 + J * L + L * L * J * (J - 1) / 2;
    s->oh = H / k;
    dpc_status st = DPC_OK;
    for (size_t r = 0; r <= J && !st; r++) st = dpc__fft2d_plan(&s->plan[r], s->Np >> r, err);
    if (!st) st = build_filters(s, err);
    if (st) {
        dpc_scatter_free(s);
        return st;
    }
    *out = s;
    return DPC_OK;
}

void dpc_scatter_shape(const dpc_scatter *s, size_t *channels, size_t *h, size_t *w)
{
    if (channels) *channels = s->K;
    if (h) *h = s->oh;
    if (w) *w = s->oh;
}

size_t dpc_scatter_scratch_len(const dpc_scatter *s)
{
    size_t NN = s->Np * s->Np;
    return 10 * NN + dpc__fft2d_scratch(s->Np, s->Np);
}

/* out (N/k)^2 = periodisation-mean of in (N, N) (kymatio's subsample_fourier), complex. */
static void subsample(const double *ir, const double *ii, size_t N, size_t k, double *or_,
                      double *oi)
{
    size_t n = N / k;
    double inv = 1.0 / (double)(k * k);
    for (size_t a = 0; a < n; a++)
        for (size_t b = 0; b < n; b++) {
            double sr = 0, si = 0;
            for (size_t i = 0; i < k; i++)
                for (size_t j = 0; j < k; j++) {
                    sr += ir[(a + i * n) * N + b + j * n];
                    si += ii[(a + i * n) * N + b + j * n];
                }
            or_[a * n + b] = sr * inv;
            oi[a * n + b] = si * inv;
        }
}

/* o = U (N, N) times the real filter f, subsampled by k, in o (N/k)^2. */
static void filter_sub(const double *ur, const double *ui, const double *f, size_t N, size_t k,
                       double *tr, double *ti, double *or_, double *oi)
{
    for (size_t q = 0; q < N * N; q++) tr[q] = ur[q] * f[q], ti[q] = ui[q] * f[q];
    if (k == 1) {
        memcpy(or_, tr, N * N * sizeof *or_);
        memcpy(oi, ti, N * N * sizeof *oi);
    } else {
        subsample(tr, ti, N, k, or_, oi);
    }
}

/* Low pass of U (resolution r) to output channel ch: phi, subsample to J, inverse, crop. w, v:
 * complex work arrays of Np^2 each. */
static void lowpass_out(const dpc_scatter *s, const double *ur, const double *ui, size_t r,
                        double *out, size_t ch, double *w, double *v, double *scr)
{
    size_t N = s->Np >> r, nJ = s->Np >> s->J, NN = s->Np * s->Np;
    filter_sub(ur, ui, s->phi[r], N, (size_t)1 << (s->J - r), w, w + NN, v, v + NN);
    dpc__fft2d(&s->plan[s->J], v, v + NN, 1, scr);
    for (size_t y = 0; y < s->oh; y++)
        for (size_t x = 0; x < s->oh; x++)
            out[(ch * s->oh + y) * s->oh + x] = v[(y + 1) * nJ + x + 1];
}

/* |inverse FFT| then forward FFT, in place at resolution r. */
static void modulus_fft(const dpc_scatter *s, size_t r, double *re, double *im, double *scr)
{
    size_t N = s->Np >> r;
    dpc__fft2d(&s->plan[r], re, im, 1, scr);
    for (size_t q = 0; q < N * N; q++) {
        re[q] = sqrt(re[q] * re[q] + im[q] * im[q]);
        im[q] = 0.0;
    }
    dpc__fft2d(&s->plan[r], re, im, 0, scr);
}

void dpc_scatter_apply(const dpc_scatter *s, const double *img, double *out, double *scratch)
{
    size_t N = s->Np, NN = N * N, H = s->H, JL = s->J * s->L;
    /* complex arrays of NN each (re then im): u0 (the image), u1, u2 (first and second
     * order), w (filter products), v (subsampled low-pass) */
    double *u0 = scratch, *u1 = u0 + 2 * NN, *u2 = u1 + 2 * NN, *w = u2 + 2 * NN;
    double *v = w + 2 * NN, *scr = v + 2 * NN;
    for (size_t y = 0; y < N; y++)
        for (size_t x = 0; x < N; x++) { /* reflect padding (the edge is not repeated) */
            long yy = (long)y - (long)s->pad, xx = (long)x - (long)s->pad, h = (long)H;
            while (yy < 0 || yy >= h) yy = yy < 0 ? -yy : 2 * (h - 1) - yy;
            while (xx < 0 || xx >= h) xx = xx < 0 ? -xx : 2 * (h - 1) - xx;
            u0[y * N + x] = img[yy * h + xx];
            u0[NN + y * N + x] = 0.0;
        }
    dpc__fft2d(&s->plan[0], u0, u0 + NN, 0, scr);
    lowpass_out(s, u0, u0 + NN, 0, out, 0, w, v, scr);
    size_t ch2 = 1 + JL;
    for (size_t n1 = 0; n1 < JL; n1++) {
        size_t j1 = n1 / s->L, N1 = N >> j1;
        filter_sub(u0, u0 + NN, s->psi[n1][0], N, (size_t)1 << j1, w, w + NN, u1, u1 + NN);
        modulus_fft(s, j1, u1, u1 + NN, scr);
        lowpass_out(s, u1, u1 + NN, j1, out, 1 + n1, w, v, scr);
        for (size_t n2 = 0; n2 < JL; n2++) {
            size_t j2 = n2 / s->L;
            if (j2 <= j1) continue;
            filter_sub(u1, u1 + NN, s->psi[n2][j1], N1, (size_t)1 << (j2 - j1), w, w + NN, u2,
                       u2 + NN);
            modulus_fft(s, j2, u2, u2 + NN, scr);
            lowpass_out(s, u2, u2 + NN, j2, out, ch2++, w, v, scr);
        }
    }
}
