/* srgd.c — the Accelerated-DP-SRGD run (Algorithm 1 of Choquette-Choo, Ganesh & Thakurta 2024)
 * and its ablations, over the core: per-example gradients from the model module, the tree (or
 * identity) mechanism's streaming noise, the exact GDP calibration of the accountant. */
#include "common/util.h"
#include "dpcorr/account.h"
#include "srgd/srgd_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static double norm2(const double *v, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += v[i] * v[i];
    return sqrt(s);
}

static void project(const dpc_srgd *s, double *v)
{
    if (s->cfg.project) {
        s->cfg.project(s->cfg.project_ctx, v, s->P);
        return;
    }
    if (!isfinite(s->cfg.R)) return;
    double nr = norm2(v, s->P);
    if (nr > s->cfg.R) {
        double f = s->cfg.R / nr;
        for (size_t i = 0; i < s->P; i++) v[i] *= f;
    }
}

void dpc_srgd_free(dpc_srgd *s)
{
    if (!s) return;
    dpc_sampler_free(s->sampler);
    dpc_noise_free(s->noise);
    dpc_mech_free(s->mech);
    dpc_model_ws_free(s->ws);
    free(s->x);
    free(s->X);
    free(s->Y);
    free(s->G1);
    free(s->G0);
    free(s->losses);
    free(s->idx);
    free(s);
}

/* ---- calibration ----------------------------------------------------------------------------- */

/* The shared ledger of a private run: one participation (zero-out), the whole run one Gaussian
 * (tree or independent noise), epsilon by the accountant's exact GDP curve at the target delta.
 * unit = C_Delta / B is the sensitivity of one increment. */
static void fill_ledger(dpc_srgd *s, double unit)
{
    const dpc_srgd_config *c = &s->cfg;
    const dpc_srgd_plan *p = &s->plan;
    dpc_ledger *L = &s->ledger;
    snprintf(L->algorithm, sizeof L->algorithm, "dp-srgd");
    snprintf(L->sampler, sizeof L->sampler, "%s", c->permute ? "fixed" : "disjoint");
    snprintf(L->route, sizeof L->route,
             "whole-run Gaussian, one participation per example (zero-out)");
    snprintf(L->accountant, sizeof L->accountant, "gdp");
    snprintf(L->calibration, sizeof L->calibration, "%s",
             c->calibration == DPC_CALIBRATION_PAPER
                 ? "paper: mu = eps / sqrt(2 ln(2.5/delta)) (Lemma 5.6)"
                 : "accountant");
    L->neighbor = DPC_NEIGHBOR_ZERO_OUT;
    L->sensitivity = L->column_norm = p->sens_mechanism;
    L->sensitivity_exact = 1;
    L->noise_std = p->sigma / unit;
    L->noise_multiplier = L->noise_std / p->sens_mechanism;
    L->epsilon_target = c->epsilon;
    L->delta = c->delta;
    dpc_error e = {0};
    if (dpc_gdp_epsilon(p->mu_effective, c->delta, &L->epsilon, &e)) L->epsilon = NAN;
    L->epsilon_paper = c->calibration == DPC_CALIBRATION_PAPER ? c->epsilon : NAN;
    L->steps = L->steps_per_epoch = p->steps;
    L->expected_batch = (double)p->batch;
}

static dpc_status calibrate(dpc_srgd *s, dpc_error *err)
{
    dpc_srgd_plan *L = &s->plan;
    const dpc_srgd_config *c = &s->cfg;
    double mu;
    dpc_status st = dpc_srgd_mu(c->epsilon, c->delta, c->calibration, &mu, err);
    if (st) return st;
    L->mu = mu;
    L->private_run = isfinite(mu);
    if (!L->private_run) {
        L->sigma = 0;
        L->mu_effective = INFINITY;
        L->delta_achieved = 1.0;
        dpc_ledger *G = &s->ledger;
        snprintf(G->algorithm, sizeof G->algorithm, "dp-srgd");
        snprintf(G->route, sizeof G->route, "none (non-private)");
        snprintf(G->calibration, sizeof G->calibration, "none (non-private)");
        G->noise_multiplier = G->noise_std = 0;
        G->epsilon = INFINITY;
        G->delta = c->delta;
        G->steps = L->steps;
        return DPC_OK;
    }
    int tree = c->noise != DPC_SRGD_NOISE_INDEPENDENT;
    double unit = c->clip / (double)s->B; /* zero-out sensitivity of one increment */
    if (tree) {
        /* DP-REQ: srgd-tree (Lemma 5.6): node std (C_Delta/B) sqrt(1 + ceil(log2 T)) / mu */
        if ((st = dpc_account_srgd_tree_sigma(s->T, c->clip, s->B, mu, &s->sigma, err))) return st;
        L->sens_formula = s->sigma * mu / unit;
    } else {
        /* each example is in one increment: independent noise (C_Delta/B)/mu per step is one
         * Gaussian mechanism of sensitivity C_Delta/B on the whole stream (mu-GDP) */
        s->sigma = unit / mu;
        L->sens_formula = 1.0;
    }
    dpc_mech_params mp;
    dpc_mech_params_init(&mp);
    mp.kind = tree ? DPC_MECH_TREE : DPC_MECH_IDENTITY;
    mp.honaker = c->noise == DPC_SRGD_NOISE_HONAKER;
    mp.steps = s->T;
    if ((st = dpc_mech_new(&s->mech, &mp, err))) return st;
    dpc_mech_describe(s->mech, s->ledger.mechanism, sizeof s->ledger.mechanism);
    dpc_participation part = {DPC_PART_MINSEP, 1, 1};
    dpc_sensitivity sens;
    if ((st = dpc_mech_sensitivity(s->mech, &part, &sens, err))) return st;
    L->sens_mechanism = sens.value;
    if (!(sens.value <= L->sens_formula * (1.0 + 1e-12)))
        return dpc_error_set(err, DPC_E_PRIVACY,
                             "noise: the mechanism's sensitivity %.17g exceeds the calibrated "
                             "%.17g",
                             sens.value, L->sens_formula);
    L->mu_effective = unit * sens.value / s->sigma;
    if ((st = dpc_gdp_delta(L->mu_effective, c->epsilon, &L->delta_achieved, err))) return st;
    if (!(L->delta_achieved <= c->delta * (1.0 + 1e-9)))
        return dpc_error_param(err, DPC_E_PRIVACY, "delta",
                             "the calibrated noise gives delta %.3g > the target %.3g",
                             L->delta_achieved, c->delta);
    L->sigma = s->sigma;
    fill_ledger(s, unit);
    dpc_rng_stream ns = dpc_rng_stream_derive(&s->rng, DPC_STREAM_ID(DPC_STREAM_NOISE, 0));
    /* the noise runs at the model's instruction-set level (the same values at any level) */
    dpc_noise_config nc = {0, s->P, DPC_NOISE_AUTO, 0, dpc_model_get_config(s->model)->isa};
    return dpc_noise_new(&s->noise, s->mech, &ns, &nc, err);
}

/* ---- construction ------------------------------------------------------------------------------ */

dpc_status dpc_srgd_new(dpc_srgd **out, const dpc_model *model, const dpc_dataset *data,
                        const dpc_srgd_config *cfg, const dpc_rng *rng, dpc_error *err)
{
    if (!out) return dpc_error_param(err, DPC_E_INVALID, "out", "NULL");
    *out = NULL;
    if (!model || !data || !cfg || !rng)
        return dpc_error_set(err, DPC_E_INVALID, "model, data, cfg and rng must be non-NULL");
    dpc_status st = dpc_rng_check(rng, err); /* a never-seeded key makes public noise */
    if (!st) st = dpc_srgd_config_check(cfg, data->n, err);
    if (st) return st;
    const dpc_model_config *mc = dpc_model_get_config(model);
    if (mc->n_in != data->d)
        return dpc_error_set(err, DPC_E_INVALID, "data: %zu features, the model expects %zu",
                             data->d, mc->n_in);
    if (cfg->heldout && cfg->heldout->d != data->d)
        return dpc_error_param(err, DPC_E_INVALID, "heldout", "%zu features, the data has %zu",
                             cfg->heldout->d, data->d);
    dpc_srgd *s = calloc(1, sizeof *s);
    if (!s) return DPC__NOMEM(err, "the run");
    s->cfg = *cfg;
    /* the run's own copy holds the resolved delta (checked above: cannot fail here) */
    int derived = 0;
    if ((st = dpc__srgd_delta(cfg, data->n, &s->cfg.delta, &derived, err))) {
        free(s);
        return st;
    }
    s->model = model;
    s->data = data;
    s->rng = *rng;
    s->P = dpc_model_num_params(model);
    s->D = data->d;
    s->T = cfg->steps;
    s->B = cfg->batch;
    s->chunk = cfg->chunk < s->B ? cfg->chunk : s->B;
    dpc_srgd_plan *L = &s->plan;
    dpc_ledger_init(&s->ledger);
    s->ledger.delta_derived = derived;
    L->n_examples = data->n;
    L->n_used = s->B * s->T;
    L->steps = s->T;
    L->batch = s->B;
    L->beta = cfg->beta;
    L->clip = cfg->clip;
    L->z_step = cfg->z_step;
    L->grad_evals_planned =
        cfg->variant == DPC_SRGD_ACCEL_SGD ? L->n_used : 2 * L->n_used - s->B;
    if ((st = calibrate(s, err))) goto fail;
    s->ledger.rng_mode = rng->mode;
    s->ledger.seed = rng->mode == DPC_RNG_SEEDED ? rng->seed : 0;
    if (cfg->permute) {
        dpc_sampler_config sc = {DPC_SAMPLER_FIXED, data->n, s->B, s->T, 0};
        if ((st = dpc_sampler_new(&s->sampler, &sc, rng, err))) goto fail;
    }
    size_t P = s->P;
    s->x = P <= SIZE_MAX / 11 ? dpc__calloc(11 * P, sizeof(double)) : NULL;
    if (!s->x) {
        st = DPC__NOMEM(err, "parameter slabs");
        goto fail;
    }
    s->x_prev = s->x + P;
    s->y = s->x + 2 * P;
    s->z = s->x + 3 * P;
    s->S = s->x + 4 * P;
    s->noise_cum = s->x + 5 * P;
    s->S_hat = s->x + 6 * P;
    s->xi = s->x + 7 * P;
    s->delta = s->x + 8 * P;
    s->step_noise = s->x + 9 * P;
    s->gradF = s->x + 10 * P;
    if ((st = dpc_model_ws_new(&s->ws, model, s->chunk, err))) goto fail;
    s->X = dpc__malloc_array(s->chunk, s->D * sizeof(double));
    s->Y = dpc__malloc_array(s->chunk, sizeof(double));
    s->G1 = dpc__malloc_array(s->chunk, P * sizeof(double));
    s->G0 = dpc__malloc_array(s->chunk, P * sizeof(double));
    s->losses = dpc__malloc_array(s->chunk, sizeof(double));
    s->idx = dpc__malloc_array(s->B, sizeof(size_t));
    if (!s->X || !s->Y || !s->G1 || !s->G0 || !s->losses || !s->idx) {
        st = DPC__NOMEM(err, "gradient chunk buffers");
        goto fail;
    }
    *out = s;
    return DPC_OK;
fail:
    dpc_srgd_free(s);
    return st;
}

/* ---- accessors ---------------------------------------------------------------------------------- */

size_t dpc_srgd_steps_done(const dpc_srgd *s) { return s->t; }
size_t dpc_srgd_num_params(const dpc_srgd *s) { return s->P; }
const dpc_ledger *dpc_srgd_ledger(const dpc_srgd *s) { return &s->ledger; }
size_t dpc_srgd_steps_total(const dpc_srgd *s) { return s->plan.steps; }
const dpc_srgd_plan *dpc_srgd_plan_get(const dpc_srgd *s) { return &s->plan; }
const dpc_srgd_config *dpc_srgd_config_get(const dpc_srgd *s) { return &s->cfg; }

void dpc_srgd_config_resolved(const dpc_srgd *s, dpc_srgd_config *out)
{
    *out = s->cfg;
    out->steps = s->plan.steps;
    out->batch = s->plan.batch;
    out->beta = s->plan.beta;
    out->clip = s->plan.clip;
    out->z_step = s->plan.z_step;
    out->delta = s->ledger.delta; /* dpc_account_resolve_delta's */
}
const double *dpc_srgd_output(const dpc_srgd *s)
{
    return s->cfg.variant == DPC_SRGD_SRG ? s->x : s->y;
}
const double *dpc_srgd_x(const dpc_srgd *s) { return s->x; }
const double *dpc_srgd_z(const dpc_srgd *s) { return s->z; }
const double *dpc_srgd_prefix(const dpc_srgd *s) { return s->S_hat; }
const double *dpc_srgd_prefix_noise(const dpc_srgd *s) { return s->xi; }

dpc_status dpc_srgd_batch(const dpc_srgd *s, size_t t, size_t *idx, dpc_error *err)
{
    if (t >= s->T)
        return dpc_error_param(err, DPC_E_RANGE, "t", "round %zu is beyond T = %zu", t, s->T);
    if (s->sampler) {
        size_t count = 0;
        dpc_status st = dpc_sampler_batch(s->sampler, t, idx, &count, err);
        if (st) return st;
        if (count != s->B)
            return dpc_error_param(err, DPC_E_STATE, "sampler", "batch %zu has %zu examples, not %zu",
                                 t, count, s->B);
        return DPC_OK;
    }
    for (size_t i = 0; i < s->B; i++) idx[i] = t * s->B + i;
    return DPC_OK;
}

/* ---- the increment ------------------------------------------------------------------------------ */

dpc_status dpc_srgd_increment(dpc_srgd *s, size_t t, const double *x_t, const double *x_prev,
                              double *out, dpc_srgd_incr_stats *stats, dpc_error *err)
{
    if (!x_t || !out) return dpc_error_set(err, DPC_E_INVALID, "x_t, out: NULL");
    int srg = s->cfg.variant != DPC_SRGD_ACCEL_SGD;
    int two = srg && t > 0; /* eta_{-1} = 0: one gradient at t = 0 */
    if (two && !x_prev) return dpc_error_param(err, DPC_E_INVALID, "x_prev", "NULL at t = %zu", t);
    dpc_status st = dpc_srgd_batch(s, t, s->idx, err);
    if (st) return st;
    size_t P = s->P, D = s->D, B = s->B;
    double eta = (double)(t + 1), eta_prev = (double)t, clip = s->cfg.clip;
    double maxn = 0, loss = 0;
    size_t clipped = 0;
    for (size_t p = 0; p < P; p++) out[p] = 0;
    for (size_t c0 = 0; c0 < B; c0 += s->chunk) {
        size_t m = B - c0 < s->chunk ? B - c0 : s->chunk;
        for (size_t i = 0; i < m; i++) {
            size_t r = s->idx[c0 + i];
            memcpy(s->X + i * D, s->data->x + r * D, D * sizeof(double));
            s->Y[i] = s->data->y[r];
        }
        if ((st = dpc_model_per_example_grads(s->model, x_t, s->X, s->Y, m, s->G1, s->losses,
                                              s->ws, err)))
            return dpc_error_prefix(err, "round %zu: ", t);
        s->grad_evals += m;
        if (two) {
            if ((st = dpc_model_per_example_grads(s->model, x_prev, s->X, s->Y, m, s->G0, NULL,
                                                  s->ws, err)))
                return dpc_error_prefix(err, "round %zu: ", t);
            s->grad_evals += m;
        }
        for (size_t i = 0; i < m; i++) {
            double *v = s->G1 + i * P;
            loss += s->losses[i];
            if (srg) { /* Delta_t(d) = eta_t grad f(x_t, d) - eta_{t-1} grad f(x_{t-1}, d) */
                const double *g0 = s->G0 + i * P;
                if (two)
                    for (size_t p = 0; p < P; p++) v[p] = eta * v[p] - eta_prev * g0[p];
                else
                    for (size_t p = 0; p < P; p++) v[p] = eta * v[p];
            }
            double nr = norm2(v, P);
            if (!isfinite(nr))
                return dpc_error_set(err, DPC_E_NUMERIC, "round %zu: example %zu: non-finite "
                                                         "increment", t, s->idx[c0 + i]);
            if (nr > maxn) maxn = nr;
            double f; /* clip(v, C) = v min(1, C/|v|) */
            dpc_model_clip_factors(&nr, 1, clip, &f);
            clipped += nr > clip;
            for (size_t p = 0; p < P; p++) out[p] += f * v[p];
        }
    }
    for (size_t p = 0; p < P; p++) out[p] /= (double)B;
    if (stats) {
        stats->max_norm = maxn;
        stats->clip_fraction = (double)clipped / (double)B;
        stats->loss = loss / (double)B;
    }
    return DPC_OK;
}

/* ---- one round ----------------------------------------------------------------------------------- */

static dpc_status eval_risk(dpc_srgd *s, const double *v, double *F, double *grad, dpc_error *err)
{
    if (s->cfg.risk) {
        dpc_status st = s->cfg.risk(s->cfg.risk_ctx, v, s->P, F, grad, err);
        if (st == DPC_E_UNSUPPORTED && grad) {
            for (size_t p = 0; p < s->P; p++) grad[p] = NAN;
            return s->cfg.risk(s->cfg.risk_ctx, v, s->P, F, NULL, err);
        }
        return st;
    }
    if (grad)
        for (size_t p = 0; p < s->P; p++) grad[p] = NAN;
    const dpc_dataset *h = s->cfg.heldout;
    return dpc_model_evaluate(s->model, v, h->x, h->y, h->n, F, NULL, s->ws, err);
}

dpc_status dpc_srgd_step(dpc_srgd *s, dpc_srgd_step_info *info, dpc_error *err)
{
    if (s->t >= s->T)
        return dpc_error_param(err, DPC_E_RANGE, "step", "all %zu rounds are done", s->T);
    size_t t = s->t, P = s->P;
    const dpc_srgd_config *c = &s->cfg;
    int srg = c->variant != DPC_SRGD_ACCEL_SGD;
    double eta = (double)(t + 1), beta = c->beta;
    int eval = c->eval_every && ((t + 1) % c->eval_every == 0 || t + 1 == s->T);
    double Fx = NAN, srg_err = NAN, gF = NAN, risk = NAN;
    if (eval && c->risk) { /* grad F(x_t) for the SRG-error telemetry (before the update) */
        dpc_status st = eval_risk(s, s->x, &Fx, s->gradF, err);
        if (st) return st;
        gF = norm2(s->gradF, P);
    }
    dpc_srgd_incr_stats is;
    dpc_status st = dpc_srgd_increment(s, t, s->x, s->x_prev, s->delta, &is, err);
    if (st) return st;
    if (srg)
        for (size_t p = 0; p < P; p++) s->S[p] += s->delta[p]; /* S_t = S_{t-1} + Delta_t */
    else
        memcpy(s->S, s->delta, P * sizeof(double));
    if (s->noise) {
        if ((st = dpc_noise_next(s->noise, s->step_noise, err))) return st;
        if (srg) /* the running sum of the per-step noise is the tree's prefix-sum noise */
            for (size_t p = 0; p < P; p++) s->noise_cum[p] += s->step_noise[p];
        else
            memcpy(s->noise_cum, s->step_noise, P * sizeof(double));
        for (size_t p = 0; p < P; p++) s->xi[p] = s->sigma * s->noise_cum[p];
    }
    for (size_t p = 0; p < P; p++) s->S_hat[p] = s->S[p] + s->xi[p];
    if (isfinite(gF)) {
        double e = 0, g = srg ? eta : 1.0;
        for (size_t p = 0; p < P; p++) {
            double d = s->S[p] / g - s->gradF[p];
            e += d * d;
        }
        srg_err = sqrt(e);
    }
    double gnorm = norm2(s->S_hat, P) / (srg ? eta : 1.0);
    /* the updates: post-processing of the released S^_t */
    if (c->variant == DPC_SRGD_SRG) {
        memcpy(s->x_prev, s->x, P * sizeof(double));
        for (size_t p = 0; p < P; p++) s->x[p] -= s->S_hat[p] / (beta * eta);
        project(s, s->x);
        memcpy(s->y, s->x, P * sizeof(double));
    } else {
        /* ACCEL: z <- Pi(z - s S^/beta), y <- Pi(x - S^/(beta eta)); ACCEL_SGD: the same with
         * grad_t = g^_t, i.e. z-step s eta_t g^/beta and y-step g^/beta (Thm. 5.13) */
        double zs = srg ? c->z_step / beta : c->z_step * eta / beta;
        double ys = srg ? 1.0 / (beta * eta) : 1.0 / beta;
        for (size_t p = 0; p < P; p++) {
            s->z[p] -= zs * s->S_hat[p];
            s->y[p] = s->x[p] - ys * s->S_hat[p];
        }
        project(s, s->z);
        project(s, s->y);
        double tau = 2.0 / ((double)t + 3.0); /* tau_{t+1} = eta_{t+1}/eta_{0:t+1} */
        memcpy(s->x_prev, s->x, P * sizeof(double));
        for (size_t p = 0; p < P; p++) s->x[p] = (1.0 - tau) * s->y[p] + tau * s->z[p];
    }
    s->t++;
    if (eval && (st = eval_risk(s, dpc_srgd_output(s), &risk, NULL, err))) return st;
    (void)Fx;
    if (info) {
        info->step = t;
        info->eta = eta;
        info->max_norm = is.max_norm;
        info->clip_fraction = is.clip_fraction;
        info->noise_norm = norm2(s->xi, P);
        info->b_norm = info->noise_norm / beta;
        info->grad_norm = gnorm;
        info->srg_error = srg_err;
        info->grad_F_norm = gF;
        info->loss = is.loss;
        info->risk = risk;
        info->grad_evals = s->grad_evals;
    }
    return DPC_OK;
}

/* dpc_srgd_run's trace: the record of update t lands in trace[t - 1]. */
static int trace_step(void *ctx, const void *info, size_t t)
{
    ((dpc_srgd_step_info *)ctx)[t - 1] = *(const dpc_srgd_step_info *)info;
    return 0;
}

dpc_status dpc_srgd_run(dpc_srgd *s, dpc_srgd_step_info *trace, dpc_error *err)
{
    dpc_run r = dpc_srgd_run_ops(s);
    dpc_srgd_step_info info;
    dpc_run_hooks h = {.ctx = trace, .on_step = trace ? trace_step : NULL};
    return dpc_run_drive(&r, trace ? &info : NULL, NULL, &h, NULL, err);
}
