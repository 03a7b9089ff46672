/* srgd_ckpt.c — checkpoints of an Accelerated-DP-SRGD run (dpc_srgd_save / _restore) in the
 * trainers' container (dpcorr/train.h): the iterates, the prefix sums, the counters and the
 * tree noise's state; the batches and independent noise are regenerated from the RNG. */
#include "common/util.h"
#include "srgd/srgd_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NSLABS 8 /* x, x_prev, y, z, S, noise_cum, S_hat, xi: the first slabs of s->x */

static void config_items(dpc_ckpt *ck, const dpc_srgd_config *c)
{
    dpc_ckpt_item_num(ck, "L", "Lipschitz constant", c->L);
    dpc_ckpt_item_num(ck, "M", "smoothness", c->M);
    dpc_ckpt_item_num(ck, "R", "radius", c->R);
    dpc_ckpt_item_count(ck, "steps", "rounds", c->steps);
    dpc_ckpt_item_count(ck, "batch", "batch", c->batch);
    dpc_ckpt_item_num(ck, "beta", "beta", c->beta);
    dpc_ckpt_item_num(ck, "clip", "clip", c->clip);
    dpc_ckpt_item_num(ck, "z_step", "z step", c->z_step);
    dpc_ckpt_item_str(ck, "variant", "variant", dpc_srgd_variant_name(c->variant));
    dpc_ckpt_item_str(ck, "noise", "noise", dpc_srgd_noise_name(c->noise));
    dpc_ckpt_item_num(ck, "epsilon", "epsilon", c->epsilon);
    dpc_ckpt_item_num(ck, "delta", "delta", c->delta);
    dpc_ckpt_item_str(ck, "calibration", "calibration", dpc_calibration_name(c->calibration));
    dpc_ckpt_item_count(ck, "permute", "permutation", (uint64_t)c->permute);
    dpc_ckpt_item_count(ck, "eval_every", "evaluation interval", c->eval_every);
}

dpc_status dpc_srgd_save(const dpc_srgd *s, dpc_ckpt *ck, dpc_error *err)
{
    if (!s || !ck) return dpc_error_param(err, DPC_E_INVALID, s ? "ck" : "s", "NULL");
    if (strcmp(dpc_ckpt_kind(ck), DPC_SRGD_KIND))
        return dpc_error_param(err, DPC_E_INVALID, "ck", "a container of kind '%s', not '%s'",
                               dpc_ckpt_kind(ck), DPC_SRGD_KIND);
    config_items(ck, &s->cfg);
    char spec[DPC_MODEL_SPEC_LEN];
    dpc_model_format_spec(dpc_model_get_config(s->model), spec, sizeof spec);
    dpc_ckpt_item_str(ck, "model", "model", spec);
    dpc_ckpt_item_count(ck, "model", "parameters", s->P);
    dpc_ckpt_item_count(ck, "data", "training examples", s->data->n);
    dpc_ckpt_item_count(ck, "data", "features", s->data->d);
    dpc_ckpt_item_count(ck, "data", "training data content", dpc_dataset_hash(s->data));
    dpc_ckpt_set_progress(ck, s->t, s->P);
    double cnt[2] = {(double)s->t, (double)s->grad_evals};
    dpc_status st = dpc_ckpt_put(ck, "srgd.counters", cnt, 2, err);
    if (!st) st = dpc_ckpt_put(ck, "srgd.state", s->x, NSLABS * s->P, err);
    size_t ns = s->noise ? dpc_noise_state_size(s->noise) : 0;
    if (st || !ns) return st;
    double *state = dpc__malloc_array(ns, sizeof *state);
    if (!state) return DPC__NOMEM(err, "noise state");
    size_t step;
    st = dpc_noise_export(s->noise, &step, state, err);
    if (!st) st = dpc_ckpt_put(ck, "srgd.noise", state, ns, err);
    free(state);
    return st;
}

/* The counters: t rounds done, grad_evals between the one-gradient count B t and 2 B t. */
static int counters_ok(const dpc_srgd *s, const double *c, size_t step)
{
    double t = c[0], B = (double)s->B;
    return t >= 0 && t <= (double)s->T && t == floor(t) && (size_t)t == step &&
           c[1] == floor(c[1]) && c[1] >= B * t && c[1] <= 2 * B * t;
}

dpc_status dpc_srgd_restore(dpc_srgd *s, const dpc_ckpt *ck, dpc_error *err)
{
    if (!s || !ck) return dpc_error_param(err, DPC_E_INVALID, s ? "ck" : "s", "NULL");
    const char *path = dpc_ckpt_path(ck);
    if (strcmp(dpc_ckpt_kind(ck), DPC_SRGD_KIND))
        return dpc_error_param(err, DPC_E_STATE, "algorithm", "%s: a checkpoint of a %s run, "
                               "this run is %s", path, dpc_ckpt_kind(ck), DPC_SRGD_KIND);
    size_t n = NSLABS * s->P, ns = s->noise ? dpc_noise_state_size(s->noise) : 0, nfile = 0;
    double cnt[2], *v = dpc__malloc_array(n, sizeof *v);
    if (!v) return DPC__NOMEM(err, "checkpoint state");
    dpc_status st = dpc_ckpt_get(ck, "srgd.counters", cnt, 2, err);
    if (!st) st = dpc_ckpt_get(ck, "srgd.state", v, n, err);
    if (!st && !counters_ok(s, cnt, dpc_ckpt_step(ck)))
        st = dpc_error_set(err, DPC_E_FORMAT, "%s: the counters (%g, %g) do not fit a run of %zu "
                           "rounds of %zu", path, cnt[0], cnt[1], s->T, s->B);
    for (size_t i = 0; !st && i < n; i++)
        if (!isfinite(v[i]))
            st = dpc_error_set(err, DPC_E_FORMAT, "%s: non-finite state value %zu", path, i);
    const double *state = dpc_ckpt_section(ck, "srgd.noise", &nfile);
    if (!st && nfile != ns)
        st = dpc_error_set(err, DPC_E_FORMAT, "%s: noise state of %zu values, this run needs %zu",
                           path, nfile, ns);
    if (!st && s->noise) st = dpc_noise_import(s->noise, (size_t)cnt[0], ns ? state : NULL, err);
    if (!st) {
        memcpy(s->x, v, n * sizeof *v);
        s->t = (size_t)cnt[0];
        s->grad_evals = (size_t)cnt[1];
    }
    free(v);
    return st;
}
