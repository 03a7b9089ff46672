/* task.c — gradient and evaluation oracles for DP-lambda-CGD: a data set bound to the paper's
 * KAN (dpc_kan2; labels 0/1 mapped to -1/+1, rows checked to lie in the unit ball) or to any
 * dpc_model (the batch gathered and passed to dpc_model_clipped_sum chunk by chunk, in order,
 * so the sum is the model module's fixed-order, chunk-independent one). */
#include "common/util.h"
#include "kan/kan_internal.h"

#include <math.h>
#include <string.h>

struct dpc_kan_task {
    const dpc_kan2 *k;                /* one of k, m */
    const dpc_model *m;
    const dpc_dataset *train, *test;
    double *ytr, *yte;                /* kan2: labels +-1 */
    dpc_model_ws *ws;                 /* model: workspace of `chunk` examples */
    size_t chunk;
    double *Xb, *yb, *lb, *nb;        /* (chunk, D), (chunk), (chunk), (chunk) */
    double *losses;                   /* kan2: (cap) */
    size_t cap;
    size_t P;
};

void dpc_kan_task_free(dpc_kan_task *t)
{
    if (!t) return;
    free(t->ytr);
    free(t->yte);
    dpc_model_ws_free(t->ws);
    free(t->Xb);
    free(t->yb);
    free(t->lb);
    free(t->nb);
    free(t->losses);
    free(t);
}

size_t dpc_kan_task_num_params(const dpc_kan_task *t) { return t ? t->P : 0; }

/* Labels 0/1 -> -1/+1, rows within the unit ball. */
static dpc_status kan2_labels(const dpc_kan2 *k, const dpc_dataset *ds, const char *which,
                              double **out, dpc_error *err)
{
    if (ds->d != k->cfg.d)
        return dpc_error_set(err, DPC_E_INVALID, "%s data: %zu features, the KAN takes d = %zu",
                             which, ds->d, k->cfg.d);
    if (ds->n_classes != 2)
        return dpc_error_set(err, DPC_E_INVALID,
                             "%s data: the paper's KAN is a binary classifier (2 classes), got %zu",
                             which, ds->n_classes);
    double *y = dpc__malloc_array(ds->n, sizeof *y);
    if (!y) return DPC__NOMEM(err, "labels");
    for (size_t i = 0; i < ds->n; i++) {
        const double *x = ds->x + i * ds->d;
        double n2 = 0.0;
        for (size_t j = 0; j < ds->d; j++) n2 += x[j] * x[j];
        if (!(n2 <= 1.0 + 1e-12)) {
            free(y);
            return dpc_error_set(err, DPC_E_INVALID,
                                 "%s data: example %zu has ||x|| = %.6g > 1; the paper's KAN "
                                 "needs inputs in the unit ball (scale or clip the rows)",
                                 which, i, sqrt(n2));
        }
        if (ds->y[i] != 0.0 && ds->y[i] != 1.0) {
            free(y);
            return dpc_error_set(err, DPC_E_INVALID, "%s data: example %zu: label %g is not 0/1",
                                 which, i, ds->y[i]);
        }
        y[i] = ds->y[i] == 1.0 ? 1.0 : -1.0;
    }
    *out = y;
    return DPC_OK;
}

dpc_status dpc_kan2_task_new(dpc_kan_task **out, const dpc_kan2 *k, const dpc_dataset *train,
                             const dpc_dataset *test, dpc_error *err)
{
    if (!out) return dpc_error_param(err, DPC_E_INVALID, "kan2_task_new", "out is NULL");
    *out = NULL;
    if (!k || !train) return dpc_error_param(err, DPC_E_INVALID, "kan2_task_new", "NULL model or data");
    dpc_kan_task *t = calloc(1, sizeof *t);
    if (!t) return DPC__NOMEM(err, "task");
    t->k = k;
    t->train = train;
    t->test = test;
    t->P = k->P;
    dpc_status st = kan2_labels(k, train, "training", &t->ytr, err);
    if (!st && test) st = kan2_labels(k, test, "test", &t->yte, err);
    if (st) {
        dpc_kan_task_free(t);
        return st;
    }
    *out = t;
    return DPC_OK;
}

dpc_status dpc_kan_model_task_new(dpc_kan_task **out, const dpc_model *m,
                                  const dpc_dataset *train, const dpc_dataset *test,
                                  size_t chunk, dpc_error *err)
{
    if (!out) return dpc_error_param(err, DPC_E_INVALID, "model_task_new", "out is NULL");
    *out = NULL;
    if (!m || !train) return dpc_error_param(err, DPC_E_INVALID, "model_task_new", "NULL model or data");
    if (chunk < 1) return dpc_error_param(err, DPC_E_INVALID, "chunk", "must be >= 1");
    const dpc_model_config *mc = dpc_model_get_config(m);
    if (mc->n_in != train->d || (test && test->d != train->d))
        return dpc_error_set(err, DPC_E_INVALID, "data: %zu features, the model takes %zu",
                             train->d, mc->n_in);
    dpc_kan_task *t = calloc(1, sizeof *t);
    if (!t) return DPC__NOMEM(err, "task");
    t->m = m;
    t->train = train;
    t->test = test;
    t->chunk = chunk;
    t->P = dpc_model_num_params(m);
    size_t D = train->d;
    t->Xb = dpc__malloc_array(chunk * D, sizeof(double));
    t->yb = dpc__malloc_array(chunk, sizeof(double));
    t->lb = dpc__malloc_array(chunk, sizeof(double));
    t->nb = dpc__malloc_array(chunk, sizeof(double));
    dpc_status st = DPC_OK;
    if (!t->Xb || !t->yb || !t->lb || !t->nb) st = DPC__NOMEM(err, "task buffers");
    if (!st) st = dpc_model_ws_new(&t->ws, m, chunk, err);
    if (st) {
        dpc_kan_task_free(t);
        return st;
    }
    *out = t;
    return DPC_OK;
}

dpc_status dpc_kan_task_grad(void *task, const double *W, const size_t *idx, size_t B,
                             double clip, double *gsum, double *loss_sum, size_t *n_clipped,
                             dpc_error *err)
{
    dpc_kan_task *t = task;
    if (!t || !W || !idx || !gsum || !loss_sum || !n_clipped)
        return dpc_error_param(err, DPC_E_INVALID, "task_grad", "NULL argument");
    dpc_status st;
    double ls = 0.0;
    if (t->k) {
        if (B > t->cap) {
            double *l = realloc(t->losses, B * sizeof *l);
            if (!l) return DPC__NOMEM(err, "task losses");
            t->losses = l;
            t->cap = B;
        }
        st = dpc_kan2_clipped_sum(t->k, W, t->train->x, t->ytr, t->train->n, idx, B, clip, gsum,
                                  t->losses, NULL, n_clipped, err);
        if (st) return st;
        for (size_t b = 0; b < B; b++) ls += t->losses[b];
        *loss_sum = ls;
        return DPC_OK;
    }
    size_t D = t->train->d, nclip = 0;
    for (size_t b0 = 0; b0 < B; b0 += t->chunk) {
        size_t c = B - b0 < t->chunk ? B - b0 : t->chunk;
        for (size_t i = 0; i < c; i++) {
            size_t r = idx[b0 + i];
            if (r >= t->train->n)
                return dpc_error_set(err, DPC_E_INVALID, "idx[%zu] = %zu is not below n = %zu",
                                     b0 + i, r, t->train->n);
            memcpy(t->Xb + i * D, t->train->x + r * D, D * sizeof(double));
            t->yb[i] = t->train->y[r];
        }
        st = dpc_model_clipped_sum(t->m, W, t->Xb, t->yb, c, clip, gsum, t->lb, t->nb, t->ws, err);
        if (st) return dpc_error_prefix(err, "batch rows %zu..: ", b0);
        for (size_t i = 0; i < c; i++) {
            ls += t->lb[i];
            nclip += t->nb[i] > clip;
        }
    }
    *loss_sum = ls;
    *n_clipped = nclip;
    return DPC_OK;
}

dpc_status dpc_kan_task_eval(void *task, const double *W, int which, double *loss, double *err01,
                             dpc_error *err)
{
    dpc_kan_task *t = task;
    if (!t || !W || !loss) return dpc_error_param(err, DPC_E_INVALID, "task_eval", "NULL argument");
    const dpc_dataset *ds = which ? t->test : t->train;
    if (!ds) return dpc_error_param(err, DPC_E_UNSUPPORTED, "task_eval", "no %s set",
                                  which ? "test" : "training");
    if (t->k)
        return dpc_kan2_evaluate(t->k, W, ds->x, which ? t->yte : t->ytr, ds->n, loss, err01, err);
    double acc = NAN;
    dpc_status st = dpc_model_evaluate(t->m, W, ds->x, ds->y, ds->n, loss, &acc, t->ws, err);
    if (!st && err01) *err01 = 1.0 - acc;
    return st;
}
