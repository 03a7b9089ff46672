/* lcgd_ckpt.c — checkpoints of a projected DP-lambda-CGD run (dpc_kan_lcgd_save / _restore) in
 * the trainers' container (dpcorr/train.h): the iterate, the counters, the run's metrics and the
 * noise state when it cannot be regenerated from the RNG (the BUFFER form). */
#include "common/util.h"
#include "train/field_items.h"
#include "kan/kan_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NMETRICS 17

static void metrics_pack(const dpc__kan_run_metrics *m, double *v)
{
    for (int i = 0; i < 4; i++) v[i] = m->sums[i], v[4 + i] = m->last[i];
    v[8] = m->init_train_loss;
    v[9] = m->max_dist;
    v[10] = m->last_dist;
    v[11] = (double)m->clipped;
    v[12] = (double)m->examples;
    v[13] = (double)m->evaluated;
    v[14] = m->have_test;
    v[15] = m->eval_given;
    v[16] = 0; /* reserved */
}

/* a count stored as a double: an exact integer in [0, max] */
static int count_ok(double x, double max) { return x >= 0 && x <= max && x == floor(x); }

static int metrics_unpack(dpc__kan_run_metrics *m, const double *v, size_t T, size_t B)
{
    double big = (double)T * (double)B;
    if (!count_ok(v[11], big) || !count_ok(v[12], big) || !count_ok(v[13], (double)T) ||
        !count_ok(v[14], 1) || !count_ok(v[15], 1))
        return 0;
    for (int i = 0; i < 4; i++) m->sums[i] = v[i], m->last[i] = v[4 + i];
    m->init_train_loss = v[8];
    m->max_dist = v[9];
    m->last_dist = v[10];
    m->clipped = (size_t)v[11];
    m->examples = (size_t)v[12];
    m->evaluated = (size_t)v[13];
    m->have_test = (int)v[14];
    m->eval_given = (int)v[15];
    return 1;
}

dpc_status dpc_kan_lcgd_save(const dpc_kan_lcgd *r, dpc_ckpt *ck, dpc_error *err)
{
    if (!r || !ck) return dpc_error_param(err, DPC_E_INVALID, r ? "ck" : "r", "NULL");
    if (strcmp(dpc_ckpt_kind(ck), DPC_KAN_LCGD_KIND))
        return dpc_error_param(err, DPC_E_INVALID, "ck", "a container of kind '%s', not '%s'",
                               dpc_ckpt_kind(ck), DPC_KAN_LCGD_KIND);
    /* the configuration items: the table's fields in order */
    dpc__field_ckpt_items(ck, dpc_kan_lcgd_config_fields(), &r->cfg);
    dpc_ckpt_item_count(ck, "P", "parameters", r->P);
    dpc_ckpt_item_hash(ck, "W0", "initial point", r->W0, r->P * sizeof(double));
    dpc_ckpt_set_progress(ck, r->t, r->P);
    double cnt[3] = {(double)r->t, (double)r->projections, (double)r->visited}, m[NMETRICS];
    metrics_pack(&r->m, m);
    dpc_status st = dpc_ckpt_put(ck, "lcgd.counters", cnt, 3, err);
    if (!st) st = dpc_ckpt_put(ck, "lcgd.W", r->W, r->P, err);
    if (!st) st = dpc_ckpt_put(ck, "lcgd.metrics", m, NMETRICS, err);
    size_t ns = r->noise ? dpc_noise_state_size(r->noise) : 0;
    if (st || !ns) return st;
    double *state = dpc__malloc_array(ns, sizeof *state);
    if (!state) return DPC__NOMEM(err, "noise state");
    size_t step;
    st = dpc_noise_export(r->noise, &step, state, err);
    if (!st) st = dpc_ckpt_put(ck, "lcgd.noise", state, ns, err);
    free(state);
    return st;
}

/* The counters and the iterate, checked; W is written only when everything is valid. */
static dpc_status read_state(const dpc_kan_lcgd *r, const dpc_ckpt *ck, size_t *cnt, double *W,
                             dpc__kan_run_metrics *m, dpc_error *err)
{
    const char *path = dpc_ckpt_path(ck);
    double c[3], mv[NMETRICS];
    size_t T = r->cfg.iterates;
    dpc_status st = dpc_ckpt_get(ck, "lcgd.counters", c, 3, err);
    if (!st) st = dpc_ckpt_get(ck, "lcgd.W", W, r->P, err);
    if (!st) st = dpc_ckpt_get(ck, "lcgd.metrics", mv, NMETRICS, err);
    if (st) return st;
    if (!count_ok(c[0], (double)(T - 1)) || !count_ok(c[1], c[0]) || !count_ok(c[2], (double)T) ||
        !(c[2] == c[0] + 1 || (c[2] == 0 && c[0] == 0)) || (size_t)c[0] != dpc_ckpt_step(ck))
        return dpc_error_set(err, DPC_E_FORMAT, "%s: the counters (%g, %g, %g) do not fit a run "
                             "of %zu iterates", path, c[0], c[1], c[2], T);
    if (!metrics_unpack(m, mv, T, r->cfg.batch))
        return dpc_error_set(err, DPC_E_FORMAT, "%s: malformed run metrics", path);
    for (size_t q = 0; q < r->P; q++)
        if (!isfinite(W[q]))
            return dpc_error_set(err, DPC_E_FORMAT, "%s: non-finite parameter %zu", path, q);
    for (int i = 0; i < 3; i++) cnt[i] = (size_t)c[i];
    return DPC_OK;
}

dpc_status dpc_kan_lcgd_restore(dpc_kan_lcgd *r, const dpc_ckpt *ck, dpc_error *err)
{
    if (!r || !ck) return dpc_error_param(err, DPC_E_INVALID, r ? "ck" : "r", "NULL");
    if (strcmp(dpc_ckpt_kind(ck), DPC_KAN_LCGD_KIND))
        return dpc_error_param(err, DPC_E_STATE, "algorithm", "%s: a checkpoint of a %s run, "
                               "this run is %s", dpc_ckpt_path(ck), dpc_ckpt_kind(ck),
                               DPC_KAN_LCGD_KIND);
    size_t cnt[3] = {0, 0, 0}, ns = r->noise ? dpc_noise_state_size(r->noise) : 0, nfile = 0;
    dpc__kan_run_metrics m;
    double *W = dpc__malloc_array(r->P, sizeof *W);
    if (!W) return DPC__NOMEM(err, "checkpoint iterate");
    dpc_status st = read_state(r, ck, cnt, W, &m, err);
    const double *state = dpc_ckpt_section(ck, "lcgd.noise", &nfile);
    if (!st && nfile != ns)
        st = dpc_error_set(err, DPC_E_FORMAT, "%s: noise state of %zu values, this run needs %zu",
                           dpc_ckpt_path(ck), nfile, ns);
    if (!st && r->noise) st = dpc_noise_import(r->noise, cnt[0], ns ? state : NULL, err);
    if (!st) {
        memcpy(r->W, W, r->P * sizeof *W);
        r->t = cnt[0];
        r->projections = cnt[1];
        r->visited = cnt[2];
        r->m = m;
    }
    free(W);
    return st;
}
