/* canary.c — the canary designs of dpcorr/audit.h: the training set of an audited run (real
 * examples followed by m canary slots), the inclusion draws, the Dirac coordinates of gradient
 * canaries, the trainer hook that inserts them, and the black-box loss scores. */
#include "audit/audit_internal.h"
#include "common/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ROW_INCLUDE = 0, ROW_COORD = 1, ROW_LABEL = 2, ROW_OOD = 3 }; /* audit stream rows */

void dpc__canaries_free(dpc__canaries *cn)
{
    if (!cn) return;
    free(cn->in);
    free(cn->coord);
    dpc_dataset_free(cn->data);
    memset(cn, 0, sizeof *cn);
}

/* *out = the examples of a followed by m zero rows (labels 0); metadata copied from a. */
static dpc_status append_slots(dpc_dataset **out, const dpc_dataset *a, size_t m, dpc_error *err)
{
    dpc_status st = dpc_dataset_new(out, a->n + m, a->d, a->n_classes, err);
    if (st) return st;
    dpc_dataset *ds = *out;
    memcpy(ds->x, a->x, a->n * a->d * sizeof(double));
    memcpy(ds->y, a->y, a->n * sizeof(double));
    ds->x_norm_bound = a->x_norm_bound;
    ds->data_dependent = a->data_dependent;
    snprintf(ds->source, sizeof ds->source, "%.200s + %zu canaries", a->source, m);
    snprintf(ds->preprocessing, sizeof ds->preprocessing, "%s", a->preprocessing);
    return DPC_OK;
}

/* Rows [first, first + m) of ds: `src`'s examples with a uniformly random other label. */
static void mislabel(dpc_dataset *ds, size_t first, const dpc_dataset *src,
                     const dpc_rng_stream *s)
{
    size_t d = ds->d, K = ds->n_classes;
    for (size_t i = 0; i < src->n; i++) {
        memcpy(ds->x + (first + i) * d, src->x + i * d, d * sizeof(double));
        uint64_t shift = 1 + dpc_rng_below(s, ROW_LABEL, i, K - 1);
        ds->y[first + i] = (double)(((size_t)src->y[i] + shift) % K);
    }
}

/* Rows [first, first + m) of ds: every feature uniform over its range in rows [0, first), the
 * row scaled into the public norm bound if one is set; labels uniform (regression: over the
 * targets' range). */
static dpc_status ood(dpc_dataset *ds, size_t first, size_t m, const dpc_rng_stream *s,
                      dpc_error *err)
{
    size_t d = ds->d;
    double *lo = dpc__malloc_array(2 * d, sizeof *lo), *hi = lo + d;
    if (!lo) return DPC__NOMEM(err, "audit canaries");
    double ylo = INFINITY, yhi = -INFINITY;
    for (size_t j = 0; j < d; j++) lo[j] = INFINITY, hi[j] = -INFINITY;
    for (size_t i = 0; i < first; i++) {
        for (size_t j = 0; j < d; j++) {
            double v = ds->x[i * d + j];
            lo[j] = v < lo[j] ? v : lo[j];
            hi[j] = v > hi[j] ? v : hi[j];
        }
        ylo = ds->y[i] < ylo ? ds->y[i] : ylo;
        yhi = ds->y[i] > yhi ? ds->y[i] : yhi;
    }
    for (size_t i = 0; i < m; i++) {
        double *x = ds->x + (first + i) * d, nrm = 0.0;
        for (size_t j = 0; j < d; j++) {
            x[j] = lo[j] + (hi[j] - lo[j]) * dpc_rng_uniform(s, ROW_OOD, i * d + j);
            nrm += x[j] * x[j];
        }
        nrm = sqrt(nrm);
        if (ds->x_norm_bound > 0 && nrm > ds->x_norm_bound)
            for (size_t j = 0; j < d; j++) x[j] *= ds->x_norm_bound / nrm;
        double u = dpc_rng_uniform(s, ROW_LABEL, i);
        ds->y[first + i] = ds->n_classes >= 2 ? (double)dpc_rng_below(s, ROW_LABEL, i, ds->n_classes)
                                              : ylo + (yhi - ylo) * u;
    }
    free(lo);
    return DPC_OK;
}

dpc_status dpc__canaries_build(dpc__canaries *cn, const dpc_audit_config *ac,
                               const dpc_dataset *train, const dpc_rng *rng, dpc_error *err)
{
    memset(cn, 0, sizeof *cn);
    size_t m = ac->canaries;
    if (ac->canary == DPC_AUDIT_MISLABEL && train->n_classes < 2)
        return dpc_error_param(err, DPC_E_INVALID, "canary",
                               "mislabelled canaries need a classification data set");
    if (ac->canary == DPC_AUDIT_MISLABEL && m >= train->n)
        return dpc_error_param(err, DPC_E_INVALID, "canaries",
                               "%zu mislabelled canaries need more than %zu training examples", m,
                               train->n);
    cn->kind = ac->canary;
    cn->m = m;
    dpc_rng_stream s = dpc_rng_stream_derive(rng, DPC_STREAM_ID(DPC_STREAM_AUDIT, 0));
    cn->in = dpc__malloc_array(m, 1);
    if (!cn->in) return DPC__NOMEM(err, "audit canaries");
    for (size_t i = 0; i < m; i++) cn->in[i] = dpc_rng_uniform(&s, ROW_INCLUDE, i) < 0.5;
    dpc_status st = DPC_OK;
    if (ac->canary == DPC_AUDIT_MISLABEL) {
        dpc_dataset *pool = NULL, *real = NULL;
        st = dpc_dataset_split(&pool, &real, train, m, rng, DPC_AUDIT_SPLIT_STREAM, err);
        if (!st) st = append_slots(&cn->data, real, m, err);
        if (!st) {
            cn->first = real->n;
            mislabel(cn->data, cn->first, pool, &s);
        }
        dpc_dataset_free(pool);
        dpc_dataset_free(real);
    } else {
        st = append_slots(&cn->data, train, m, err);
        cn->first = train->n;
        if (!st && ac->canary == DPC_AUDIT_OOD) st = ood(cn->data, cn->first, m, &s, err);
    }
    if (st) dpc__canaries_free(cn);
    return st;
}

typedef struct act_rank {
    double activity;
    uint64_t tie;
    size_t coord;
} act_rank;

static int cmp_act(const void *a, const void *b)
{
    const act_rank *x = a, *y = b;
    if (x->activity != y->activity) return x->activity < y->activity ? -1 : 1;
    return x->tie < y->tie ? -1 : x->tie > y->tie;
}

/* activity (P) += sum over real rows [0, E) of |per-example gradient| at params. */
static dpc_status activity_of(const dpc_model *model, const double *params, const dpc_dataset *ds,
                              size_t E, double *act, dpc_error *err)
{
    enum { CH = 8 };
    size_t P = dpc_model_num_params(model), d = ds->d;
    dpc_model_ws *ws = NULL;
    double *G = dpc__malloc_array(CH * P, sizeof *G);
    dpc_status st = G ? dpc_model_ws_new(&ws, model, CH, err) : DPC__NOMEM(err, "audit activity");
    for (size_t i0 = 0; !st && i0 < E; i0 += CH) {
        size_t M = E - i0 < CH ? E - i0 : CH;
        st = dpc_model_per_example_grads(model, params, ds->x + i0 * d, ds->y + i0, M, G, NULL, ws,
                                         err);
        for (size_t i = 0; !st && i < M; i++)
            for (size_t p = 0; p < P; p++) act[p] += fabs(G[i * P + p]);
    }
    dpc_model_ws_free(ws);
    free(G);
    return st;
}

dpc_status dpc__canaries_fit_model(dpc_audit_canary kind, size_t m, const dpc_model *model,
                                   dpc_error *err)
{
    size_t P = dpc_model_num_params(model);
    if (kind == DPC_AUDIT_GRADIENT && m > P)
        return dpc_error_param(err, DPC_E_INVALID, "canaries",
                               "%zu gradient canaries need as many parameters; the model has %zu",
                               m, P);
    return DPC_OK;
}

dpc_status dpc__canaries_coords(dpc__canaries *cn, const dpc_model *model, const double *params,
                                size_t examples, const dpc_rng *rng, dpc_error *err)
{
    size_t P = dpc_model_num_params(model), m = cn->m;
    dpc_status st0 = dpc__canaries_fit_model(DPC_AUDIT_GRADIENT, m, model, err);
    if (st0) return st0;
    size_t E = examples < cn->first ? examples : cn->first;
    double *act = dpc__calloc(P, sizeof *act);
    act_rank *rk = dpc__malloc_array(P, sizeof *rk);
    cn->coord = dpc__malloc_array(m, sizeof *cn->coord);
    dpc_status st = act && rk && cn->coord ? DPC_OK : DPC__NOMEM(err, "audit coordinates");
    if (!st) st = activity_of(model, params, cn->data, E, act, err);
    if (!st) {
        dpc_rng_stream s = dpc_rng_stream_derive(rng, DPC_STREAM_ID(DPC_STREAM_AUDIT, 0));
        for (size_t p = 0; p < P; p++)
            rk[p] = (act_rank){act[p], dpc_rng_word(&s, ROW_COORD, p, 0), p};
        qsort(rk, P, sizeof *rk, cmp_act);
        for (size_t i = 0; i < m; i++) cn->coord[i] = rk[i].coord;
    }
    free(act);
    free(rk);
    return st;
}

void dpc__canary_add_gradient(void *ctx, size_t canary, double *sum)
{
    const dpc__canaries *cn = ctx;
    sum[cn->coord[canary]] += cn->clip;
}

dpc_status dpc__canaries_loss_scores(const dpc__canaries *cn, const dpc_model *model,
                                     const double *params0, const double *params1,
                                     double *scores, dpc_error *err)
{
    const dpc_dataset *ds = cn->data;
    for (size_t i = 0; i < cn->m; i++) {
        const double *x = ds->x + (cn->first + i) * ds->d, *y = ds->y + cn->first + i;
        double l0, l1;
        dpc_status st = dpc_model_evaluate(model, params0, x, y, 1, &l0, NULL, NULL, err);
        if (!st) st = dpc_model_evaluate(model, params1, x, y, 1, &l1, NULL, NULL, err);
        if (st) return st;
        scores[i] = l0 - l1;
    }
    return DPC_OK;
}
