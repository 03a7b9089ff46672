/* sim_noise.c — correlated Gaussian noise w~_t = sum_tau beta_tau Z_{t-tau} for long horizons:
 * blocked overlap-save FFT convolution (two real coordinates per complex FFT), the direct
 * convolution reference, and any mechanism's streaming generator. See dpcorr/papers/sim.h. */
#include "nu/sim_internal.h"
#include "dpcorr/fft.h"
#include "common/util.h"

#include <stdlib.h>
#include <string.h>

#define DIRECT_BLOCK 1024
#define FFT_MIN_LEN 33 /* shorter beta: the direct sum is cheaper (same mathematics) */

struct dpc_sim_noise {
    dpc_sim_noise_method method; /* effective method */
    dpc_rng_stream stream;
    size_t coord0, d, len, M, N, stride;
    double *beta;   /* (len) copy */
    double *cols;   /* FFT: (d, stride = len - 1 + M) inputs [history | new], outputs in [0, M);
                       DIRECT: (d, stride = M) outputs */
    double *hist;   /* DIRECT: (d, len) ring of past Z */
    double *bre, *bim, *wre, *wim; /* FFT: (N) spectrum of beta and work arrays */
    double *row;    /* (d) scratch */
    dpc_fft *fft;
    dpc_noise *gen; /* MECH */
    const dpc_mech *mech;
    size_t next_block; /* first step of the next block */
    size_t bfirst, bfill, bpos; /* current block: first step, valid steps, next row to emit */
    size_t bytes;
};

const char *dpc_sim_noise_method_name(dpc_sim_noise_method m)
{
    switch (m) {
    case DPC_SIM_NOISE_FFT: return "fft";
    case DPC_SIM_NOISE_DIRECT: return "direct";
    case DPC_SIM_NOISE_MECH: return "mech";
    }
    return "?";
}

void dpc_sim_noise_free(dpc_sim_noise *ns)
{
    if (!ns) return;
    free(ns->beta);
    free(ns->cols);
    free(ns->hist);
    free(ns->bre);
    free(ns->row);
    dpc_fft_free(ns->fft);
    dpc_noise_free(ns->gen);
    free(ns);
}

static int add_bytes(size_t *acc, size_t n, size_t m)
{
    size_t b;
    if (!dpc__mul_ok(n, m, &b) || !dpc__mul_ok(b, sizeof(double), &b) || *acc + b < *acc) return 0;
    *acc += b;
    return 1;
}

dpc_status dpc_sim_noise_new(dpc_sim_noise **out, const dpc_sim_noise_config *cfg, dpc_error *err)
{
    *out = NULL;
    if (!cfg || !cfg->stream) return dpc_error_set(err, DPC_E_INVALID, "noise: config/stream NULL");
    if (cfg->d == 0) return dpc_error_param(err, DPC_E_INVALID, "d", "must be >= 1, got 0");
    dpc_status st0 = dpc_field_check(dpc_sim_noise_config_fields(), cfg, err);
    if (st0) return st0;
    if (cfg->method == DPC_SIM_NOISE_MECH) {
        if (!cfg->mech) return dpc_error_set(err, DPC_E_INVALID, "noise: method mech needs mech");
    } else if (!cfg->beta || cfg->len == 0) {
        return dpc_error_set(err, DPC_E_INVALID, "noise: beta is empty (len = %zu)", cfg->len);
    }
    size_t budget = cfg->memory_budget ? cfg->memory_budget : ((size_t)1 << 30);
    dpc_sim_noise *ns = calloc(1, sizeof *ns);
    if (!ns) return DPC__NOMEM(err, "noise source");
    ns->method = cfg->method;
    ns->stream = *cfg->stream;
    ns->coord0 = cfg->coord0;
    ns->d = cfg->d;
    ns->len = cfg->len;
    if (ns->method == DPC_SIM_NOISE_FFT && ns->len < FFT_MIN_LEN) ns->method = DPC_SIM_NOISE_DIRECT;
    size_t bytes = 0;
    dpc_status st = DPC_OK;
    ns->row = dpc__malloc_array(ns->d, sizeof *ns->row);
    if (!ns->row) goto nomem;
    if (ns->method == DPC_SIM_NOISE_FFT) {
        size_t L = ns->len;
        ns->M = cfg->block ? cfg->block : dpc_fft_next_pow2(L);
        ns->N = dpc_fft_next_pow2(L - 1 + ns->M);
        ns->stride = L - 1 + ns->M;
        if (!add_bytes(&bytes, ns->d, ns->stride) || !add_bytes(&bytes, 4, ns->N)) goto range;
    } else {
        ns->M = cfg->block ? cfg->block : DIRECT_BLOCK;
        ns->stride = ns->M;
        if (!add_bytes(&bytes, ns->d, ns->stride)) goto range;
        if (ns->method == DPC_SIM_NOISE_DIRECT && !add_bytes(&bytes, ns->d, ns->len)) goto range;
    }
    if (bytes > budget) goto range;
    ns->bytes = bytes;
    ns->cols = dpc__calloc(ns->d * ns->stride, sizeof *ns->cols);
    if (!ns->cols) goto nomem;
    if (ns->method == DPC_SIM_NOISE_MECH) {
        ns->mech = cfg->mech;
        dpc_noise_config nc = {ns->coord0, ns->d, DPC_NOISE_AUTO, cfg->memory_budget,
                               DPC_ISA_AUTO};
        if ((st = dpc_noise_new(&ns->gen, cfg->mech, cfg->stream, &nc, err))) goto fail;
        *out = ns;
        return DPC_OK;
    }
    ns->beta = dpc__malloc_array(ns->len, sizeof *ns->beta);
    if (!ns->beta) goto nomem;
    memcpy(ns->beta, cfg->beta, ns->len * sizeof *ns->beta);
    if (ns->method == DPC_SIM_NOISE_DIRECT) {
        ns->hist = dpc__calloc(ns->d * ns->len, sizeof *ns->hist);
        if (!ns->hist) goto nomem;
    } else {
        if ((st = dpc_fft_new(&ns->fft, ns->N, err))) goto fail;
        ns->bre = dpc__calloc(4 * ns->N, sizeof *ns->bre);
        if (!ns->bre) goto nomem;
        ns->bim = ns->bre + ns->N;
        ns->wre = ns->bim + ns->N;
        ns->wim = ns->wre + ns->N;
        memcpy(ns->bre, ns->beta, ns->len * sizeof *ns->bre);
        dpc_fft_exec(ns->fft, ns->bre, ns->bim, 0);
    }
    *out = ns;
    return DPC_OK;
range:
    st = dpc_error_set(err, DPC_E_RANGE,
                       "noise: buffers for d = %zu, len = %zu exceed memory_budget = %zu bytes",
                       cfg->d, cfg->len, budget);
    goto fail;
nomem:
    st = DPC__NOMEM(err, "noise buffers");
fail:
    dpc_sim_noise_free(ns);
    return st;
}

static void block_direct(dpc_sim_noise *ns, size_t t0)
{
    size_t d = ns->d, L = ns->len, M = ns->M;
    for (size_t s = 0; s < M; s++) {
        size_t t = t0 + s;
        dpc_rng_gaussian_fill(&ns->stream, t, ns->coord0, ns->row, d);
        size_t slot = t % L, kmax = t + 1 < L ? t + 1 : L;
        for (size_t j = 0; j < d; j++) {
            double *h = ns->hist + j * L;
            h[slot] = ns->row[j];
            double acc = 0.0;
            /* sum_{k < kmax} beta_k Z_{t-k}: ring positions slot, slot-1, ... (two ranges) */
            size_t k = 0;
            for (size_t p = slot + 1; p-- > 0 && k < kmax; k++) acc += ns->beta[k] * h[p];
            for (size_t p = L; k < kmax; k++) acc += ns->beta[k] * h[--p];
            ns->cols[j * ns->stride + s] = acc;
        }
    }
}

static void block_fft(dpc_sim_noise *ns, size_t t0)
{
    size_t d = ns->d, L = ns->len, M = ns->M, N = ns->N, S = ns->stride;
    /* history: the last L-1 inputs sit at [M, M + L - 1) after the previous block */
    if (t0 > 0)
        for (size_t j = 0; j < d; j++) memmove(ns->cols + j * S, ns->cols + j * S + M, (L - 1) * sizeof(double));
    for (size_t s = 0; s < M; s++) {
        dpc_rng_gaussian_fill(&ns->stream, t0 + s, ns->coord0, ns->row, d);
        for (size_t j = 0; j < d; j++) ns->cols[j * S + L - 1 + s] = ns->row[j];
    }
    for (size_t j = 0; j < d; j += 2) {
        double *xr = ns->cols + j * S, *xi = j + 1 < d ? ns->cols + (j + 1) * S : NULL;
        memcpy(ns->wre, xr, S * sizeof(double));
        memset(ns->wre + S, 0, (N - S) * sizeof(double));
        if (xi) {
            memcpy(ns->wim, xi, S * sizeof(double));
            memset(ns->wim + S, 0, (N - S) * sizeof(double));
        } else {
            memset(ns->wim, 0, N * sizeof(double));
        }
        dpc_fft_exec(ns->fft, ns->wre, ns->wim, 0);
        for (size_t k = 0; k < N; k++) {
            double ar = ns->wre[k], ai = ns->wim[k], br = ns->bre[k], bi = ns->bim[k];
            ns->wre[k] = ar * br - ai * bi;
            ns->wim[k] = ar * bi + ai * br;
        }
        dpc_fft_exec(ns->fft, ns->wre, ns->wim, 1);
        memcpy(xr, ns->wre + L - 1, M * sizeof(double));
        if (xi) memcpy(xi, ns->wim + L - 1, M * sizeof(double));
    }
}

dpc_status dpc__sim_noise_block(dpc_sim_noise *ns, size_t *m, size_t *first, dpc_error *err)
{
    size_t t0 = ns->next_block, M = ns->M;
    if (ns->method == DPC_SIM_NOISE_MECH) {
        size_t n = dpc_mech_steps(ns->mech);
        if (t0 >= n)
            return dpc_error_set(err, DPC_E_RANGE, "noise: the mechanism has only %zu steps", n);
        if (M > n - t0) M = n - t0;
        for (size_t s = 0; s < M; s++) {
            dpc_status st = dpc_noise_next(ns->gen, ns->row, err);
            if (st) return st;
            for (size_t j = 0; j < ns->d; j++) ns->cols[j * ns->stride + s] = ns->row[j];
        }
    } else if (ns->method == DPC_SIM_NOISE_DIRECT) {
        block_direct(ns, t0);
    } else {
        block_fft(ns, t0);
    }
    ns->next_block = t0 + M;
    ns->bfirst = t0;
    ns->bfill = M;
    ns->bpos = 0;
    *m = M;
    *first = t0;
    return DPC_OK;
}

const double *dpc__sim_noise_col(const dpc_sim_noise *ns, size_t j) { return ns->cols + j * ns->stride; }

dpc_status dpc_sim_noise_next(dpc_sim_noise *ns, double *out, size_t m, dpc_error *err)
{
    while (m > 0) {
        if (ns->bpos == ns->bfill) {
            size_t mm, f;
            dpc_status st = dpc__sim_noise_block(ns, &mm, &f, err);
            if (st) return st;
        }
        size_t k = ns->bfill - ns->bpos < m ? ns->bfill - ns->bpos : m;
        for (size_t s = 0; s < k; s++)
            for (size_t j = 0; j < ns->d; j++) out[s * ns->d + j] = ns->cols[j * ns->stride + ns->bpos + s];
        ns->bpos += k;
        out += k * ns->d;
        m -= k;
    }
    return DPC_OK;
}

size_t dpc_sim_noise_step(const dpc_sim_noise *ns) { return ns->bfirst + ns->bpos; }
size_t dpc_sim_noise_bytes(const dpc_sim_noise *ns) { return ns->bytes; }
