/* srgd_ckpt.c — checkpoints of an Accelerated-DP-SRGD run (dpc_srgd_save / _restore) in the
 * trainers' container (dpcorr/train.h): the iterates, the prefix sums, the counters and the
 * tree noise's state; the batches and independent noise are regenerated from the RNG, and the
 * noise slabs of the state (noise_cum, xi, S_hat - S) are replayed from the key and compared. */
#include "common/util.h"
#include "train/field_items.h"
#include "srgd/srgd_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NSLABS 8 /* x, x_prev, y, z, S, noise_cum, S_hat, xi: the first slabs of s->x */

dpc_status dpc_srgd_save(const dpc_srgd *s, dpc_ckpt *ck, dpc_error *err)
{
    if (!s || !ck) return dpc_error_param(err, DPC_E_INVALID, s ? "ck" : "s", "NULL");
    if (strcmp(dpc_ckpt_kind(ck), DPC_SRGD_KIND))
        return dpc_error_param(err, DPC_E_INVALID, "ck", "a container of kind '%s', not '%s'",
                               dpc_ckpt_kind(ck), DPC_SRGD_KIND);
    /* the configuration items: the table's fields in order (RUNTIME ones and hooks left out) */
    dpc__field_ckpt_items(ck, dpc_srgd_config_fields(), &s->cfg);
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

/* The noise slabs are a pure function of the key and the step: noise_cum (the running sum of
 * the rows of B Z, ACCEL_SGD: the last row) and xi = sigma noise_cum are replayed from step 0 and
 * compared bit for bit, and S_hat must be S + xi; the saved values are never trusted. Leaves the
 * generator at step t. */
static dpc_status verify_noise(dpc_srgd *s, const double *v, size_t t, const char *path,
                               dpc_error *err)
{
    size_t P = s->P;
    int srg = s->cfg.variant != DPC_SRGD_ACCEL_SGD;
    double *nc = dpc__calloc(P, sizeof *nc);
    if (!nc) return DPC__NOMEM(err, "noise replay");
    dpc_status st = s->noise && t ? dpc_noise_seek(s->noise, 0, err) : DPC_OK;
    for (size_t r = 0; s->noise && !st && r < t; r++) {
        if ((st = dpc_noise_next(s->noise, s->step_noise, err))) break;
        for (size_t p = 0; p < P; p++) nc[p] = srg ? nc[p] + s->step_noise[p] : s->step_noise[p];
    }
    const double *S = v + 4 * P, *ncs = v + 5 * P, *sh = v + 6 * P, *xi = v + 7 * P;
    for (size_t p = 0; !st && p < P; p++) {
        double x = s->noise ? s->sigma * nc[p] : 0.0, h = S[p] + x;
        const char *slab = memcmp(&ncs[p], &nc[p], sizeof x) ? "noise_cum"
                           : memcmp(&xi[p], &x, sizeof x)    ? "xi"
                           : memcmp(&sh[p], &h, sizeof x)    ? "S_hat"
                                                             : NULL;
        if (slab)
            st = dpc_error_param(err, DPC_E_STATE, "noise_state",
                                 "%s: srgd.state (%s) coordinate %zu at round %zu differs from "
                                 "the replay of the noise from the key (the noise state is a "
                                 "function of the key and the round: an edited checkpoint)",
                                 path, slab, p, t);
    }
    free(nc);
    return st;
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
    if (!st) st = verify_noise(s, v, (size_t)cnt[0], path, err);
    if (!st) {
        memcpy(s->x, v, n * sizeof *v);
        s->t = (size_t)cnt[0];
        s->grad_evals = (size_t)cnt[1];
    }
    free(v);
    return st;
}
