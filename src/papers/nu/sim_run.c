/* sim_run.c — the simulators of dpcorr/papers/sim.h: fixed design (and 1-D mean estimation), random
 * Gaussian design, and the separable log-cosh strongly convex toy problem, with burn-in and
 * batch-means error bars. */
#include "nu/sim_internal.h"
#include "common/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TILE 64

const char *dpc_sim_model_name(dpc_sim_model m)
{
    switch (m) {
    case DPC_SIM_FIXED: return "fixed";
    case DPC_SIM_RANDOM: return "random";
    case DPC_SIM_LOGCOSH: return "logcosh";
    }
    return "?";
}

void dpc_sim_config_init(dpc_sim_config *c)
{
    dpc_field_defaults(dpc_sim_config_fields(), c);
}

dpc_status dpc_sim_config_check(const dpc_sim_config *c, dpc_error *err)
{
    if (!c) return dpc_error_set(err, DPC_E_INVALID, "sim: config NULL");
    if (c->eta == 0) return dpc_error_param(err, DPC_E_INVALID, "eta", "must be > 0, got 0");
    if (c->d == 0) return dpc_error_param(err, DPC_E_INVALID, "d", "must be >= 1, got 0");
    dpc_status st = dpc_field_check(dpc_sim_config_fields(), c, err);
    if (st) return st;
    if (c->model == DPC_SIM_LOGCOSH) {
        if (!(c->mu > 0.0) || !(c->L >= c->mu) || !(c->eta * c->L < 2.0))
            return dpc_error_set(err, DPC_E_INVALID,
                                 "sim: mu = %g, L = %g: need 0 < mu <= L and eta L < 2", c->mu, c->L);
    } else {
        if (!c->lambda) return dpc_error_set(err, DPC_E_INVALID, "sim: lambda is NULL");
        for (size_t j = 0; j < c->d; j++)
            if (!(c->lambda[j] > 0.0) || !(c->eta * c->lambda[j] < 2.0))
                return dpc_error_set(err, DPC_E_INVALID,
                                     "sim: lambda[%zu] = %g: need lambda > 0 and eta lambda < 2", j,
                                     c->lambda[j]);
    }
    if (c->steps < c->batches)
        return dpc_error_set(err, DPC_E_INVALID, "sim: steps = %zu must be >= batches = %zu",
                             c->steps, c->batches);
    if (c->method == DPC_SIM_NOISE_MECH) {
        if (!c->mech) return dpc_error_set(err, DPC_E_INVALID, "sim: method mech needs mech");
    } else if (!c->beta || c->len == 0) {
        return dpc_error_set(err, DPC_E_INVALID, "sim: beta is empty");
    }
    return DPC_OK;
}

typedef struct acc {
    size_t burn, bl, K;
    double *b, *g; /* (K) per-batch sums */
} acc;

/* Adds v[s] (and gv[s]) for steps first..first+m-1 into their batches. */
static void acc_add(acc *a, size_t first, const double *v, const double *gv, size_t m)
{
    for (size_t s = 0; s < m; s++) {
        size_t t = first + s;
        if (t < a->burn) continue;
        size_t k = (t - a->burn) / a->bl;
        if (k >= a->K) break;
        a->b[k] += v[s];
        if (gv) a->g[k] += gv[s];
    }
}

static void acc_stats(const acc *a, const double *x, double *mean, double *se)
{
    double m = 0.0;
    for (size_t k = 0; k < a->K; k++) m += x[k] / (double)a->bl;
    m /= (double)a->K;
    double ss = 0.0;
    for (size_t k = 0; k < a->K; k++) {
        double dk = x[k] / (double)a->bl - m;
        ss += dk * dk;
    }
    *mean = m;
    *se = sqrt(ss / ((double)a->K - 1.0) / (double)a->K);
}

static double log_cosh(double x)
{
    double ax = fabs(x);
    return ax + log1p(exp(-2.0 * ax)) - M_LN2;
}

static dpc_status make_noise(const dpc_sim_config *c, const dpc_rng_stream *ns_stream, size_t c0,
                             size_t dc, dpc_sim_noise **ns, dpc_error *err)
{
    dpc_sim_noise_config nc = {c->method, c->beta, c->len, c->mech, ns_stream, c0, dc, c->block,
                               c->memory_budget};
    return dpc_sim_noise_new(ns, &nc, err);
}

/* FIXED and LOGCOSH: independent coordinates, simulated chunk by chunk. */
static dpc_status run_separable(const dpc_sim_config *c, const dpc_rng_stream *zs,
                                const dpc_rng_stream *ds, acc *a, dpc_error *err)
{
    size_t chunk = c->chunk ? c->chunk : 16, total = a->burn + a->bl * a->K;
    int logc = c->model == DPC_SIM_LOGCOSH;
    dpc_status st = DPC_OK;
    for (size_t c0 = 0; c0 < c->d; c0 += chunk) {
        size_t dc = c->d - c0 < chunk ? c->d - c0 : chunk;
        dpc_sim_noise *ns = NULL;
        if ((st = make_noise(c, zs, c0, dc, &ns, err))) return st;
        double *theta = dpc__calloc(dc, sizeof *theta), *v = NULL, *gv = NULL;
        size_t done = 0;
        while (done < total) {
            size_t m, first;
            if ((st = dpc__sim_noise_block(ns, &m, &first, err))) break;
            if (!v) {
                v = dpc__malloc_array(2 * m, sizeof *v);
                if (!v || !theta) {
                    st = DPC__NOMEM(err, "simulation buffers");
                    break;
                }
                gv = v + m;
            }
            if (first + m > total) m = total - first;
            memset(v, 0, m * sizeof *v);
            memset(gv, 0, m * sizeof *gv);
            for (size_t j = 0; j < dc; j++) {
                const double *w = dpc__sim_noise_col(ns, j);
                double th = theta[j], eta = c->eta, sg = c->sigma, ssgd = c->sigma_sgd;
                if (!logc) {
                    double lam = c->lambda[c0 + j], r = 1.0 - eta * lam;
                    double sd = ssgd * sqrt(lam);
                    for (size_t s = 0; s < m; s++) {
                        double g = sg * w[s];
                        if (ssgd > 0.0) g += sd * dpc_rng_gaussian(ds, first + s, c0 + j);
                        th = r * th - eta * g;
                        v[s] += lam * th * th;
                    }
                } else {
                    /* F = L th^2/2 - (L - mu) log cosh th: F'' = L - (L - mu) sech^2 th in
                     * [mu, L], equal to mu at the optimum */
                    double Lc = c->L, dl = c->L - c->mu;
                    for (size_t s = 0; s < m; s++) {
                        double g = Lc * th - dl * tanh(th) + sg * w[s];
                        if (ssgd > 0.0) g += ssgd * dpc_rng_gaussian(ds, first + s, c0 + j);
                        th -= eta * g;
                        v[s] += th * th;
                        gv[s] += 0.5 * Lc * th * th - dl * log_cosh(th);
                    }
                }
                theta[j] = th;
            }
            acc_add(a, first, v, logc ? gv : NULL, m);
            done = first + m;
        }
        free(v);
        free(theta);
        dpc_sim_noise_free(ns);
        if (st) return st;
    }
    return DPC_OK;
}

static dpc_status run_random(const dpc_sim_config *c, const dpc_rng_stream *zs,
                             const dpc_rng_stream *ds, acc *a, dpc_error *err)
{
    size_t d = c->d, total = a->burn + a->bl * a->K;
    dpc_sim_noise *ns = NULL;
    dpc_status st = make_noise(c, zs, 0, d, &ns, err);
    if (st) return st;
    double *theta = dpc__calloc(d, sizeof *theta), *z = dpc__malloc_array(d, sizeof *z);
    double *sl = dpc__malloc_array(d, sizeof *sl), *tile = dpc__malloc_array(TILE * d, sizeof *tile);
    double v[TILE];
    if (!theta || !z || !sl || !tile) {
        st = DPC__NOMEM(err, "simulation buffers");
        goto done;
    }
    for (size_t j = 0; j < d; j++) sl[j] = sqrt(c->lambda[j]);
    size_t done_steps = 0;
    while (done_steps < total) {
        size_t m, first;
        if ((st = dpc__sim_noise_block(ns, &m, &first, err))) break;
        if (first + m > total) m = total - first;
        for (size_t s0 = 0; s0 < m; s0 += TILE) {
            size_t tm = m - s0 < TILE ? m - s0 : TILE;
            for (size_t j = 0; j < d; j++) {
                const double *w = dpc__sim_noise_col(ns, j) + s0;
                for (size_t s = 0; s < tm; s++) tile[s * d + j] = w[s];
            }
            for (size_t s = 0; s < tm; s++) {
                size_t t = first + s0 + s;
                dpc_rng_gaussian_fill(ds, t, 0, z, d);
                double xi = c->sigma_sgd > 0.0 ? c->sigma_sgd * dpc_rng_gaussian(ds, t, d) : 0.0;
                double in = 0.0;
                for (size_t j = 0; j < d; j++) in += sl[j] * z[j] * theta[j];
                double e = in - xi, acc2 = 0.0;
                const double *w = tile + s * d;
                for (size_t j = 0; j < d; j++) {
                    theta[j] -= c->eta * (sl[j] * z[j] * e + c->sigma * w[j]);
                    acc2 += c->lambda[j] * theta[j] * theta[j];
                }
                v[s] = acc2;
            }
            acc_add(a, first + s0, v, NULL, tm);
        }
        done_steps = first + m;
    }
done:
    free(theta);
    free(z);
    free(sl);
    free(tile);
    dpc_sim_noise_free(ns);
    return st;
}

dpc_status dpc_sim_run(const dpc_sim_config *c, dpc_sim_result *out, dpc_error *err)
{
    dpc_status st = dpc_sim_config_check(c, err);
    if (st) return st;
    /* (burn-in + steps) x d updates, each with its noise (DPC_WORK_LIMIT); the longer of the
     * two phases is named */
    double per = 40.0 + (c->method == DPC_SIM_NOISE_DIRECT ? 2.0 * (double)c->len
                                                           : 10.0 * log2((double)c->len + 2.0));
    double work = ((double)c->burn_in + (double)c->steps) * (double)c->d * per;
    if ((st = dpc__work_check(work, c->burn_in > c->steps ? "burn_in" : "steps",
                              "the simulation ((burn-in + steps) x d)", err)))
        return st;
    dpc_rng rng;
    dpc_rng_seed(&rng, c->seed);
    dpc_rng_stream zs = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_NOISE, 0));
    dpc_rng_stream ds = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_DATA, 0));
    acc a = {c->burn_in, c->steps / c->batches, c->batches, NULL, NULL};
    a.b = dpc__calloc(2 * a.K, sizeof *a.b);
    if (!a.b) return DPC__NOMEM(err, "batch sums");
    a.g = a.b + a.K;
    st = c->model == DPC_SIM_RANDOM ? run_random(c, &zs, &ds, &a, err)
                                    : run_separable(c, &zs, &ds, &a, err);
    if (!st) {
        acc_stats(&a, a.b, &out->mean, &out->stderr_);
        if (c->model == DPC_SIM_LOGCOSH) {
            acc_stats(&a, a.g, &out->gap, &out->gap_stderr);
        } else {
            out->gap = 0.5 * out->mean;
            out->gap_stderr = 0.5 * out->stderr_;
        }
        out->burn_in = c->burn_in;
        out->steps = a.bl * a.K;
        out->batches = a.K;
        out->seed = c->seed;
        if (!isfinite(out->mean))
            st = dpc_error_set(err, DPC_E_NUMERIC, "sim: the iterates diverged (eta too large?)");
    }
    free(a.b);
    return st;
}
