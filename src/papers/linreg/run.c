/* run.c — the one-pass engine shared by DP-AMBSSGD (Alg. 2), DP-SSGD (Alg. 1) and the SGD
 * baselines: uniform permutation, per-step clip (DP-STAT, fixed or none), clipped mean gradient,
 * Gaussian noise 2 alpha zeta_t / b, constant step, tail average of the last T/2 iterates. */
#include "common/util.h"
#include "linreg/linreg_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void dpc_linreg_free(dpc_linreg *lr)
{
    if (!lr) return;
    free(lr->perm);
    free(lr->w);
    free(lr->scratch);
    free(lr);
}

dpc_status dpc_linreg_new(dpc_linreg **out, const dpc_dataset *ds, const dpc_linreg_opts *o,
                          const dpc_rng *rng, dpc_error *err)
{
    if (!out) return dpc_error_set(err, DPC_E_INVALID, "linreg: out is NULL");
    *out = NULL;
    if (!ds || !o || !rng) return dpc_error_set(err, DPC_E_INVALID, "linreg: NULL argument");
    dpc_status rst = dpc_rng_check(rng, err); /* a never-seeded key makes public noise */
    if (rst) return rst;
    if (ds->n_classes != 0)
        return dpc_error_set(err, DPC_E_INVALID,
                             "data set: linear regression needs real-valued targets; '%s' is a "
                             "classification set with %zu classes",
                             ds->source, ds->n_classes);
    dpc_status st = dpc_dataset_check(ds, err);
    if (st) return st;
    dpc_linreg *lr = calloc(1, sizeof *lr);
    if (!lr) return DPC__NOMEM(err, "linreg run");
    if ((st = dpc_linreg_plan_make(&lr->plan, o, ds->n, ds->d, err))) {
        free(lr);
        return st;
    }
    lr->plan.ledger.rng_mode = rng->mode;
    lr->plan.ledger.seed = rng->mode == DPC_RNG_SEEDED ? rng->seed : 0;
    lr->ds = ds;
    lr->stream = o->stream;
    size_t n = ds->n, d = ds->d, s = lr->plan.stat_batch;
    lr->perm = dpc__malloc_array(n, sizeof *lr->perm);
    lr->w = dpc__calloc(4 * d, sizeof *lr->w); /* w, sum, update, noise */
    lr->scratch = dpc__malloc_array(2 * s + d, sizeof *lr->scratch);
    if (!lr->perm || !lr->w || !lr->scratch) {
        dpc_linreg_free(lr);
        return DPC__NOMEM(err, "linreg buffers");
    }
    lr->sum = lr->w + d;
    lr->update = lr->w + 2 * d;
    lr->noise = lr->w + 3 * d;
    lr->g = lr->scratch;
    lr->resid = lr->scratch + d;
    lr->work = lr->scratch + d + s;
    /* a uniformly random permutation: exact Fisher-Yates (amplification by shuffling needs a
     * uniform one), position i's draw at (row 0, index i) of the SHUFFLE stream */
    dpc_rng_stream sh = dpc_rng_stream_derive(rng, DPC_STREAM_ID(DPC_LINREG_STREAM_SHUFFLE, o->stream));
    for (size_t i = 0; i < n; i++) lr->perm[i] = i;
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = (size_t)dpc_rng_below(&sh, 0, i, (uint64_t)i + 1);
        size_t tmp = lr->perm[i];
        lr->perm[i] = lr->perm[j];
        lr->perm[j] = tmp;
    }
    lr->s_noise = dpc_rng_stream_derive(rng, DPC_STREAM_ID(DPC_LINREG_STREAM_NOISE, o->stream));
    lr->s_stat = dpc_rng_stream_derive(rng, DPC_STREAM_ID(DPC_LINREG_STREAM_STAT, o->stream));
    *out = lr;
    return DPC_OK;
}

dpc_status dpc_linreg_step(dpc_linreg *lr, dpc_linreg_step_info *info, dpc_error *err)
{
    if (!lr) return dpc_error_set(err, DPC_E_INVALID, "linreg: NULL run");
    const dpc_linreg_plan *P = &lr->plan;
    if (lr->t >= P->steps)
        return dpc_error_set(err, DPC_E_RANGE, "linreg: all %zu steps are done", P->steps);
    const dpc_dataset *ds = lr->ds;
    size_t d = ds->d, s = P->stat_batch, b = P->batch, t = lr->t;
    size_t base = (P->batch + P->stat_batch) * t;
    const size_t *pos = lr->perm + base;
    double gamma = NAN, zeta;
    size_t rounds = 0;
    dpc_status st;
    if (P->algo == DPC_LINREG_AMBSSGD) {
        /* DP-STAT on the s stat records (positions base .. base+s-1), at w_t */
        for (size_t j = 0; j < s; j++) {
            const double *x = ds->x + pos[j] * d;
            lr->resid[j] = dpc__lr_dot(x, lr->w, d) - ds->y[pos[j]];
        }
        dpc_dpstat_params dp = {P->domain, P->dpstat_k, P->noise_multiplier_stat, P->dpstat_rule,
                                P->dpstat_margin};
        dpc_dpstat_result res;
        if ((st = dpc_linreg_dpstat(lr->resid, s, &dp, &lr->s_stat, t, lr->work, &res, NULL, NULL,
                                    err)))
            return dpc_error_prefix(err, "step %zu: ", t);
        gamma = res.gamma;
        rounds = res.rounds;
        zeta = P->clip_scale * gamma; /* Alg. 2 line 8: zeta_t = R_x gamma_t (ln N)^a */
    } else {
        zeta = P->clip; /* fixed, or INFINITY for the non-private baseline */
    }
    /* clipped sum over the b gradient records (positions base+s .. base+s+b-1) */
    double *G = lr->g;
    memset(G, 0, d * sizeof *G);
    double loss = 0;
    size_t clipped = 0;
    for (size_t i = 0; i < b; i++) {
        size_t rec = pos[s + i];
        const double *x = ds->x + rec * d;
        double r = dpc__lr_dot(x, lr->w, d) - ds->y[rec];
        double norm = fabs(r) * sqrt(dpc__lr_dot(x, x, d)); /* ||x (<x,w> - y)|| */
        if (!isfinite(norm))
            return dpc_error_set(err, DPC_E_NUMERIC,
                                 "step %zu: the gradient of record %zu is not finite (the "
                                 "iterate diverged: lower the step)",
                                 t, rec);
        double c = r;
        if (norm > zeta) { /* clip_zeta(v) = v min(1, zeta/||v||) */
            c = r * (zeta / norm);
            clipped++;
        }
        for (size_t j = 0; j < d; j++) G[j] += c * x[j];
        loss += r * r;
    }
    double eta = P->eta, bb = (double)b;
    for (size_t j = 0; j < d; j++) lr->update[j] = eta * (G[j] / bb);
    /* DP-REQ: linreg-noise: Alg. 2 line 10 / Alg. 1 line 5: noise std 2 alpha zeta_t / b on the
     * mean clipped gradient (replace-one sensitivity 2 zeta_t / b). */
    double sd = P->ledger.noise_multiplier > 0 ? 2.0 * P->ledger.noise_multiplier * zeta / bb : 0.0;
    if (sd > 0) {
        dpc_rng_gaussian_fill(&lr->s_noise, t, 0, lr->g, d);
        for (size_t j = 0; j < d; j++) lr->noise[j] = eta * (sd * lr->g[j]);
    } else {
        memset(lr->noise, 0, d * sizeof *lr->noise);
    }
    for (size_t j = 0; j < d; j++) lr->w[j] -= lr->update[j] + lr->noise[j];
    lr->t = ++t;
    if (t > P->tail_start) { /* w_t for t = T/2+1 .. T */
        for (size_t j = 0; j < d; j++) lr->sum[j] += lr->w[j];
        lr->tail_count++;
    }
    if (info) {
        info->step = t - 1;
        info->gamma = gamma;
        info->zeta = zeta;
        info->noise_std = sd;
        info->dpstat_counts = rounds;
        info->clipped = clipped;
        info->clip_fraction = (double)clipped / bb;
        info->batch_loss = 0.5 * loss / bb;
        info->excess_risk = dpc_linreg_data_risk(ds, lr->w);
    }
    return DPC_OK;
}

/* dpc_linreg_run's trace: the record of update t lands in trace[t - 1]. */
static int trace_step(void *ctx, const void *info, size_t t)
{
    ((dpc_linreg_step_info *)ctx)[t - 1] = *(const dpc_linreg_step_info *)info;
    return 0;
}

dpc_status dpc_linreg_run(dpc_linreg *lr, dpc_linreg_step_info *trace, dpc_error *err)
{
    if (!lr) return dpc_error_set(err, DPC_E_INVALID, "linreg: NULL run");
    dpc_run r = dpc_linreg_run_ops(lr);
    dpc_linreg_step_info info;
    dpc_run_hooks h = {.ctx = trace, .on_step = trace ? trace_step : NULL};
    return dpc_run_drive(&r, trace ? &info : NULL, NULL, &h, NULL, err);
}

dpc_status dpc_linreg_average(const dpc_linreg *lr, double *w, dpc_error *err)
{
    if (!lr || !w) return dpc_error_set(err, DPC_E_INVALID, "linreg: NULL argument");
    if (lr->t < lr->plan.steps)
        return dpc_error_set(err, DPC_E_STATE, "linreg: %zu of %zu steps done; the average is "
                                               "released after the last step",
                             lr->t, lr->plan.steps);
    double c = (double)lr->tail_count;
    for (size_t j = 0; j < lr->ds->d; j++) w[j] = lr->sum[j] / c;
    return DPC_OK;
}

const dpc_linreg_plan *dpc_linreg_plan_get(const dpc_linreg *lr) { return lr ? &lr->plan : NULL; }
size_t dpc_linreg_steps_done(const dpc_linreg *lr) { return lr ? lr->t : 0; }
size_t dpc_linreg_steps_total(const dpc_linreg *lr) { return lr ? lr->plan.steps : 0; }
const dpc_ledger *dpc_linreg_ledger(const dpc_linreg *lr) { return lr ? &lr->plan.ledger : NULL; }
const double *dpc_linreg_params(const dpc_linreg *lr) { return lr ? lr->w : NULL; }
const double *dpc_linreg_last_update(const dpc_linreg *lr) { return lr ? lr->update : NULL; }
const double *dpc_linreg_last_noise(const dpc_linreg *lr) { return lr ? lr->noise : NULL; }
const size_t *dpc_linreg_permutation(const dpc_linreg *lr) { return lr ? lr->perm : NULL; }
