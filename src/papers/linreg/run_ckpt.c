/* run_ckpt.c — checkpoints of a linear-regression run (dpc_linreg_save / _restore) in the
 * trainers' container (dpcorr/train.h): w_t, the tail sum, the last step and the counters; the
 * permutation and the noise (gradient and DP-STAT) are regenerated from the RNG; the last step's
 * noise row, saved for its accessor, is regenerated and compared (verify_noise). */
#include "common/util.h"
#include "linreg/linreg_internal.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static void plan_items(dpc_ckpt *ck, const dpc_linreg_plan *P)
{
    const dpc_ledger *L = &P->ledger;
    dpc_ckpt_item_num(ck, "epsilon", "epsilon", L->epsilon_target);
    dpc_ckpt_item_num(ck, "delta", "delta", L->delta);
    dpc_ckpt_item_str(ck, "calibration", "calibration", L->calibration);
    const dpc_field_table *pt = dpc_linreg_prior_fields(); /* the public inputs, in order */
    for (size_t k = 0; k < pt->count; k++) {
        char name[32];
        snprintf(name, sizeof name, "prior.%s", pt->fields[k].name);
        dpc_ckpt_item_num(ck, name, "public input", dpc_field_get(&pt->fields[k], &P->prior));
    }
    dpc_ckpt_item_count(ck, "steps", "steps", P->steps);
    dpc_ckpt_item_count(ck, "batch", "batch", P->batch);
    dpc_ckpt_item_count(ck, "stat_batch", "DP-STAT batch", P->stat_batch);
    dpc_ckpt_item_num(ck, "eta", "step size", P->eta);
    dpc_ckpt_item_num(ck, "clip", "clip", P->clip);
    dpc_ckpt_item_num(ck, "clip_scale", "clip scale", P->clip_scale);
    dpc_ckpt_item_num(ck, "domain", "DP-STAT domain", P->domain);
    dpc_ckpt_item_count(ck, "dpstat_k", "DP-STAT doublings", P->dpstat_k);
    dpc_ckpt_item_str(ck, "dpstat_rule", "DP-STAT rule", dpc_dpstat_rule_name(P->dpstat_rule));
    dpc_ckpt_item_num(ck, "dpstat_margin", "DP-STAT margin", P->dpstat_margin);
    dpc_ckpt_item_num(ck, "noise_multiplier", "noise multiplier", L->noise_multiplier);
    dpc_ckpt_item_num(ck, "noise_multiplier_stat", "DP-STAT noise", P->noise_multiplier_stat);
}

dpc_status dpc_linreg_save(const dpc_linreg *lr, dpc_ckpt *ck, dpc_error *err)
{
    if (!lr || !ck) return dpc_error_param(err, DPC_E_INVALID, lr ? "ck" : "lr", "NULL");
    const dpc_linreg_plan *P = &lr->plan;
    const char *kind = dpc_linreg_algo_name(P->algo);
    if (strcmp(dpc_ckpt_kind(ck), kind))
        return dpc_error_param(err, DPC_E_INVALID, "ck", "a container of kind '%s', not '%s'",
                               dpc_ckpt_kind(ck), kind);
    plan_items(ck, P);
    dpc_ckpt_item_count(ck, "stream", "stream", lr->stream);
    dpc_ckpt_item_count(ck, "data", "training examples", lr->ds->n);
    dpc_ckpt_item_count(ck, "data", "features", lr->ds->d);
    dpc_ckpt_item_count(ck, "data", "training data content", dpc_dataset_hash(lr->ds));
    size_t d = lr->ds->d;
    dpc_ckpt_set_progress(ck, lr->t, d);
    double cnt[2] = {(double)lr->t, (double)lr->tail_count};
    dpc_status st = dpc_ckpt_put(ck, "linreg.counters", cnt, 2, err);
    if (!st) st = dpc_ckpt_put(ck, "linreg.w", lr->w, d, err);
    if (!st) st = dpc_ckpt_put(ck, "linreg.sum", lr->sum, d, err);
    if (!st) st = dpc_ckpt_put(ck, "linreg.update", lr->update, d, err);
    if (!st) st = dpc_ckpt_put(ck, "linreg.noise", lr->noise, d, err);
    return st;
}

/* Does eta (sd g_j) reproduce every saved noise value bit for bit? */
static int row_is(const double *noise, const double *g, size_t d, double eta, double sd)
{
    for (size_t j = 0; j < d; j++) {
        double x = eta * (sd * g[j]);
        if (memcmp(&x, &noise[j], sizeof x)) return 0;
    }
    return 1;
}

/* The last step's noise (linreg.noise) is eta sd_t g_t with g_t = row t - 1 of the noise stream,
 * a function of the key and the step: regenerated and compared bit for bit. Its std sd_t is
 * known for a fixed clip (DP-SSGD: 2 z clip / b, or 0 without noise); DP-AMBSSGD's depends on the
 * step's DP-STAT estimate at w_{t-1}, which the checkpoint does not hold, so there the row must
 * be the regenerated one at some scale sd >= 0 (searched around the value the largest coordinate
 * implies). The saved row is only compared; a step recomputes it. */
static dpc_status verify_noise(dpc_linreg *lr, const double *noise, size_t t, const char *path,
                               dpc_error *err)
{
    const dpc_linreg_plan *P = &lr->plan;
    size_t d = lr->ds->d, jm = 0;
    double *g = lr->g, z = P->ledger.noise_multiplier;
    int ok;
    if (t == 0 || !(z > 0)) { /* no step yet, or no noise: zeros */
        memset(g, 0, d * sizeof *g);
        ok = row_is(noise, g, d, 1.0, 0.0);
    } else {
        dpc_rng_gaussian_fill(&lr->s_noise, t - 1, 0, g, d);
        for (size_t j = 1; j < d; j++)
            if (fabs(g[j]) > fabs(g[jm])) jm = j;
        double sd = 2.0 * z * P->clip / (double)P->batch;
        if (P->algo == DPC_LINREG_AMBSSGD) sd = noise[jm] / (P->eta * g[jm]);
        /* the candidates sd, then 1 .. 8 ulps below and above it (AMBSSGD only: a fixed clip's
         * sd is known exactly) */
        int span = P->algo == DPC_LINREG_AMBSSGD ? 8 : 0;
        ok = 0;
        for (int k = 0; !ok && k <= 2 * span && isfinite(sd) && sd >= 0; k++) {
            double c = sd;
            for (int i = 0; i < (k + 1) / 2; i++) c = nextafter(c, k % 2 ? -INFINITY : INFINITY);
            ok = c >= 0 && row_is(noise, g, d, P->eta, c);
        }
    }
    if (ok) return DPC_OK;
    return dpc_error_param(err, DPC_E_STATE, "noise_state",
                           "%s: linreg.noise is not the noise of step %zu regenerated from the "
                           "key (the noise is a function of the key and the step: an edited "
                           "checkpoint)", path, t ? t - 1 : 0);
}

dpc_status dpc_linreg_restore(dpc_linreg *lr, const dpc_ckpt *ck, dpc_error *err)
{
    if (!lr || !ck) return dpc_error_param(err, DPC_E_INVALID, lr ? "ck" : "lr", "NULL");
    const dpc_linreg_plan *P = &lr->plan;
    const char *kind = dpc_linreg_algo_name(P->algo), *path = dpc_ckpt_path(ck);
    if (strcmp(dpc_ckpt_kind(ck), kind))
        return dpc_error_param(err, DPC_E_STATE, "algorithm", "%s: a checkpoint of a %s run, "
                               "this run is %s", path, dpc_ckpt_kind(ck), kind);
    size_t d = lr->ds->d;
    double cnt[2], *v = dpc__malloc_array(4 * d, sizeof *v); /* w, sum, update, noise */
    if (!v) return DPC__NOMEM(err, "checkpoint state");
    dpc_status st = dpc_ckpt_get(ck, "linreg.counters", cnt, 2, err);
    if (!st) st = dpc_ckpt_get(ck, "linreg.w", v, d, err);
    if (!st) st = dpc_ckpt_get(ck, "linreg.sum", v + d, d, err);
    if (!st) st = dpc_ckpt_get(ck, "linreg.update", v + 2 * d, d, err);
    if (!st) st = dpc_ckpt_get(ck, "linreg.noise", v + 3 * d, d, err);
    /* the tail sum holds w_{T/2+1}..w_t: tail_count = max(0, t - T/2) */
    double t = cnt[0], tail = t > (double)P->tail_start ? t - (double)P->tail_start : 0;
    if (!st && (!(t >= 0 && t <= (double)P->steps && t == floor(t)) || cnt[1] != tail ||
                (size_t)t != dpc_ckpt_step(ck)))
        st = dpc_error_set(err, DPC_E_FORMAT, "%s: the counters (%g, %g) do not fit a run of %zu "
                           "steps", path, cnt[0], cnt[1], P->steps);
    for (size_t j = 0; !st && j < 4 * d; j++)
        if (!isfinite(v[j]))
            st = dpc_error_set(err, DPC_E_FORMAT, "%s: non-finite state value %zu", path, j);
    if (!st) st = verify_noise(lr, v + 3 * d, (size_t)cnt[0], path, err);
    if (!st) {
        memcpy(lr->w, v, 4 * d * sizeof *v); /* w, sum, update, noise are one slab */
        lr->t = (size_t)cnt[0];
        lr->tail_count = (size_t)cnt[1];
    }
    free(v);
    return st;
}
