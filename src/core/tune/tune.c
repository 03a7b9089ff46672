/* tune.c — the instruction-set level by measurement (dpc_tune_isa, see dpcorr/tune.h).
 *
 * Each family's kernel runs at every level this CPU has on a small, cache-resident instance;
 * the time is the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID). The first timings of a
 * process are cold (page faults on the buffers, the clock ramping up, wide units powering on:
 * on a Zen 1 core one cold run in three picked SSE2 over an AVX2 17% faster), so every level
 * of a family first runs WARM rounds untimed, then ROUNDS rounds timed with the levels
 * interleaved (alternating order, so a drift of the clock falls on all levels alike); a level's
 * time is the median of its rounds, and the choice keeps the wider level unless a narrower one
 * is more than 3% faster on those medians. A job sharing the core inflates some rounds but
 * rarely the median. Nothing measured here enters a value: every level computes the same
 * bits. */
#include "common/util.h"
#include "dpcorr/io.h"
#include "dpcorr/mech.h"
#include "dpcorr/rng.h"
#include "dpcorr/tune.h"
#include "model/gemm.h"
#include "tune/tune_internal.h"

#include <math.h>
#include <string.h>

#define WARM 2   /* untimed rounds of every level first */
#define ROUNDS 7 /* timed rounds, levels interleaved; the median decides */
#define WIDER_KEPT 1.03 /* a narrower level must be more than 3% faster to be chosen */

#define GEMM_M 16
#define GEMM_N 128
#define GEMM_K 256
#define GAUSS_N 32768
#define NOISE_D 32768

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct work {
    double *A, *Bp, *C, *buf;
    dpc_rng_stream stream;
    dpc_mech *blt;
    dpc_noise *noise[4]; /* per level */
} work;

static void run_gemm(work *w, dpc_isa isa)
{
    dpc__gemm_seg(isa, GEMM_M, GEMM_N, GEMM_K, 0, w->A, GEMM_K, w->Bp, 0, w->C, GEMM_N, 0);
}

static void run_gauss(work *w, dpc_isa isa, uint64_t row)
{
    dpc_rng_gaussian_fill_isa(&w->stream, row, 0, w->buf, GAUSS_N, isa);
}

static dpc_status run_noise(work *w, dpc_isa isa, dpc_error *err)
{
    return dpc_noise_next(w->noise[isa], w->buf, err);
}

static dpc_status run_once(work *w, int fam, dpc_isa isa, uint64_t row, dpc_error *err)
{
    if (fam == DPC_TUNE_GEMM) run_gemm(w, isa);
    else if (fam == DPC_TUNE_GAUSS) run_gauss(w, isa, row);
    else return run_noise(w, isa, err);
    return DPC_OK;
}

/* CPU seconds of one family at every level this CPU has: sec[r * 4 + level] for the timed
 * rounds r < ROUNDS, after WARM untimed rounds; within a round the levels run in increasing
 * order on even rounds and decreasing on odd ones. */
static dpc_status measure(work *w, int fam, dpc_isa have, double *sec, dpc_error *err)
{
    int nl = (int)have - DPC_ISA_SSE2 + 1;
    for (int r = -WARM; r < ROUNDS; r++)
        for (int j = 0; j < nl; j++) {
            dpc_isa l = (dpc_isa)((r & 1) ? (int)have - j : DPC_ISA_SSE2 + j);
            double t = thread_cpu();
            dpc_status st = run_once(w, fam, l, (uint64_t)(r + WARM + 1), err);
            if (st) return st;
            t = thread_cpu() - t;
            if (r >= 0) sec[r * 4 + (int)l] = t;
        }
    return DPC_OK;
}

static double median(double *v, size_t n)
{
    for (size_t i = 1; i < n; i++) /* insertion sort: n is ROUNDS */
        for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

dpc_isa dpc__tune_decide(const double *sec, size_t rounds, dpc_isa have, double scale,
                         double ns[4])
{
    double v[64];
    if (rounds > 64) rounds = 64;
    ns[0] = 0;
    for (int l = DPC_ISA_SSE2; l <= DPC_ISA_AVX512; l++) {
        ns[l] = 0;
        if (l > (int)have || !rounds) continue;
        for (size_t r = 0; r < rounds; r++) v[r] = sec[r * 4 + (size_t)l];
        ns[l] = median(v, rounds) * scale;
    }
    return dpc_tune_choose(ns, have);
}

dpc_isa dpc_tune_choose(const double ns[4], dpc_isa have)
{
    dpc_isa pick = DPC_ISA_SSE2;
    for (int l = DPC_ISA_SSE2; l <= (int)have && l <= DPC_ISA_AVX512; l++)
        if (ns[l] > 0 && isfinite(ns[l])) pick = (dpc_isa)l; /* the widest measured */
    for (int l = DPC_ISA_SSE2; l <= (int)have && l <= DPC_ISA_AVX512; l++)
        if (ns[l] > 0 && isfinite(ns[l]) && ns[l] * WIDER_KEPT < ns[pick]) pick = (dpc_isa)l;
    return pick;
}

static void work_free(work *w)
{
    for (int l = 0; l < 4; l++) dpc_noise_free(w->noise[l]);
    dpc_mech_free(w->blt);
    free(w->A);
    free(w->Bp);
    free(w->C);
    free(w->buf);
}

static dpc_status work_new(work *w, dpc_isa have, dpc_error *err)
{
    memset(w, 0, sizeof *w);
    size_t bp = dpc__gemm_packed_size(GEMM_K, GEMM_N);
    w->A = dpc__malloc_array(GEMM_M * GEMM_K, sizeof(double));
    w->Bp = dpc__malloc_array(bp, sizeof(double));
    w->C = dpc__malloc_array(GEMM_M * GEMM_N, sizeof(double));
    w->buf = dpc__malloc_array(GAUSS_N > NOISE_D ? GAUSS_N : NOISE_D, sizeof(double));
    double *B = dpc__malloc_array(GEMM_K * GEMM_N, sizeof(double));
    if (!w->A || !w->Bp || !w->C || !w->buf || !B) {
        free(B);
        return dpc_error_set(err, DPC_E_NOMEM, "isa tuning: out of memory");
    }
    for (size_t i = 0; i < GEMM_M * GEMM_K; i++) w->A[i] = (double)(i % 17) * 0.25 - 2;
    for (size_t i = 0; i < GEMM_K * GEMM_N; i++) B[i] = (double)(i % 13) * 0.125 - 0.75;
    dpc__gemm_pack_b(GEMM_K, GEMM_N, B, GEMM_N, w->Bp);
    free(B);
    dpc_rng rng;
    dpc_rng_seed(&rng, 0x15a); /* the values are never used: a fixed key is fine */
    w->stream = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_TEST, 0x15a));
    static const double theta[4] = {0.999, 0.99, 0.9, 0.5}, omega[4] = {0.01, 0.05, 0.1, 0.2};
    dpc_mech_params p;
    dpc_mech_params_init(&p);
    p.kind = DPC_MECH_BLT;
    p.nbuf = 4;
    p.theta = theta;
    p.omega = omega;
    p.steps = 64;
    dpc_status st = dpc_mech_new(&w->blt, &p, err);
    for (int l = DPC_ISA_SSE2; !st && l <= (int)have; l++) {
        dpc_noise_config nc;
        dpc_noise_config_init(&nc, NOISE_D);
        nc.form = DPC_NOISE_BUFFER;
        nc.isa = (dpc_isa)l;
        st = dpc_noise_new(&w->noise[l], w->blt, &w->stream, &nc, err);
    }
    return st;
}

dpc_status dpc_tune_isa(dpc_tune_levels *out, dpc_error *err)
{
    double t0 = dpc__now();
    dpc_isa have = dpc_isa_detect();
    memset(out, 0, sizeof *out);
    work w;
    dpc_status st = work_new(&w, have, err);
    static const double units[DPC_TUNE_NFAMILIES] = {(double)GEMM_M * GEMM_N * GEMM_K, GAUSS_N,
                                                    NOISE_D};
    for (int f = 0; !st && f < DPC_TUNE_NFAMILIES; f++) {
        double sec[ROUNDS * 4] = {0};
        st = measure(&w, f, have, sec, err);
        if (!st) out->level[f] = dpc__tune_decide(sec, ROUNDS, have, 1e9 / units[f], out->ns[f]);
    }
    work_free(&w);
    if (st) dpc_error_prefix(err, "isa tuning: ");
    out->seconds = dpc__now() - t0;
    return st;
}

const char *dpc_tune_family_name(dpc_tune_family f)
{
    static const char *const names[DPC_TUNE_NFAMILIES] = {"gemm", "gauss", "noise"};
    return (f >= 0 && (int)f < DPC_TUNE_NFAMILIES) ? names[f] : "unknown";
}

void dpc_tune_report_json(dpc_json_writer *w, int forced, const dpc_isa level[DPC_TUNE_NFAMILIES],
                          const dpc_tune_levels *measured)
{
    dpc_json_obj(w, "isa_levels");
    dpc_json_bool(w, "forced_by_DPCORR_ISA", forced);
    for (int f = 0; f < DPC_TUNE_NFAMILIES; f++)
        dpc_json_str(w, dpc_tune_family_name((dpc_tune_family)f), dpc_isa_name(level[f]));
    if (measured) {
        /* gemm: per multiply-add; gauss: per sample; noise: per coordinate of a BLT-4 step */
        dpc_json_obj(w, "measured_ns_per_unit");
        for (int f = 0; f < DPC_TUNE_NFAMILIES; f++) {
            dpc_json_obj(w, dpc_tune_family_name((dpc_tune_family)f));
            for (int l = DPC_ISA_SSE2; l <= DPC_ISA_AVX512; l++)
                if (measured->ns[f][l] > 0)
                    dpc_json_num(w, dpc_isa_name((dpc_isa)l), measured->ns[f][l]);
            dpc_json_end(w);
        }
        dpc_json_end(w);
        dpc_json_num(w, "measurement_s", measured->seconds);
    }
    dpc_json_end(w);
}
