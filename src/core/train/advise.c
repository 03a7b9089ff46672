/* advise.c — which mechanism for a run's shape (dpc_train_advise): every candidate is calibrated
 * to the budget by the trainer's own decisions (dpc_train_plan_new: sampler, mechanism, route,
 * noise multiplier) and scored by the noise it adds to the running gradient sums, so the ranking
 * includes amplification by sampling, which `dpcorr compare` (equal sensitivity) leaves out. */
#include "common/util.h"
#include "dpcorr/train.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Formats into a fixed field; a longer text is cut (messages and names are display only). */
static void text(char *dst, size_t len, const char *fmt, ...) DPC_PRINTF(3, 4);
static void text(char *dst, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst, len, fmt, ap);
    va_end(ap);
}

void dpc_advise_query_init(dpc_advise_query *q)
{
    if (!q) return;
    memset(q, 0, sizeof *q);
    q->batch = 256;
    q->epochs = 1;
    q->accountant = dpc_account_default_accountant();
}

static dpc_status check_query(const dpc_advise_query *q, dpc_error *err)
{
    if (q->n_examples == 0)
        return dpc_error_param(err, DPC_E_INVALID, "n_examples", "must be >= 1");
    if (q->batch == 0 || q->batch > q->n_examples)
        return dpc_error_param(err, DPC_E_INVALID, "batch", "must be in [1, N = %zu], got %zu",
                               q->n_examples, q->batch);
    if (q->epochs == 0) return dpc_error_param(err, DPC_E_INVALID, "epochs", "must be >= 1");
    if (!(q->epsilon > 0) || !isfinite(q->epsilon))
        return dpc_error_param(err, DPC_E_INVALID, "epsilon", "must be a finite number > 0, got %g",
                               q->epsilon);
    if (!(q->momentum >= 0 && q->momentum < 1))
        return dpc_error_param(err, DPC_E_INVALID, "momentum", "must be in [0, 1), got %g",
                               q->momentum);
    double d; /* the rule of every trainer, checked once here so that it names the query */
    return dpc_account_resolve_delta(q->delta, q->n_examples, q->allow_large_delta, &d, NULL,
                                     err);
}

/* The candidate's configuration: the trainer's defaults with the query's shape. */
static void candidate_config(const dpc_advise_query *q, const dpc_advice *a, dpc_train_config *c)
{
    dpc_train_config_init(c);
    c->batch = q->batch;
    c->epochs = q->epochs;
    c->epsilon = q->epsilon;
    c->delta = q->delta;
    c->allow_large_delta = q->allow_large_delta;
    c->accountant = q->accountant;
    c->momentum = q->momentum;
    c->mech.kind = a->mech;
    c->mech.bands = a->bands;
    c->mech.nu = a->nu;
    c->sampler = a->sampler;
    c->groups = a->groups;
}

/* Calibrates one candidate and fills its score (ok = 0 with the reason when it cannot run). */
static dpc_status evaluate(const dpc_advise_query *q, dpc_advice *a, dpc_error *err)
{
    dpc_train_config c;
    candidate_config(q, a, &c);
    dpc_rng rng;
    dpc_rng_seed(&rng, 0); /* the ledger does not depend on the key: deterministic advice */
    dpc_train_plan *p = NULL;
    dpc_error e = {0};
    double t0 = dpc__now();
    dpc_status st = dpc_train_plan_new(&p, &c, q->n_examples, &rng, &e);
    a->seconds = dpc__now() - t0;
    if (st == DPC_E_NOMEM) {
        *err = e;
        return st;
    }
    if (a->mech == DPC_MECH_BSR && a->bands)
        text(a->mechanism, sizeof a->mechanism, "%s (bands=%zu)", dpc_mech_kind_name(a->mech),
                 a->bands);
    else
        text(a->mechanism, sizeof a->mechanism, "%s", dpc_mech_kind_name(a->mech));
    if (st) { /* does not apply to this shape, or cannot meet the budget */
        text(a->why, sizeof a->why, "%s", e.msg);
        return DPC_OK;
    }
    const dpc_ledger *L = dpc_train_plan_ledger(p);
    dpc_mech_error me;
    dpc_workload w = {q->momentum, 1.0}; /* the optimizer's: what the noise reaches the model by */
    st = dpc_mech_error_of(dpc_train_plan_mech(p), &w, &me, &e);
    if (!st) {
        a->ok = 1;
        text(a->mechanism, sizeof a->mechanism, "%s", L->mechanism);
        text(a->route, sizeof a->route, "%s", L->route);
        a->amplified = L->amplified;
        a->noise_multiplier = L->noise_multiplier;
        a->noise_std = L->noise_std;
        a->rmse = me.rmse;
        a->error = L->noise_std * me.rmse;
        a->epsilon = L->epsilon;
    } else {
        text(a->why, sizeof a->why, "%s", e.msg);
    }
    dpc_train_plan_free(p);
    if (st == DPC_E_NOMEM) *err = e;
    return st == DPC_E_NOMEM ? st : DPC_OK;
}

/* The candidates of a shape; returns their count. */
static size_t candidates(const dpc_advise_query *q, dpc_advice *c)
{
    size_t n = 0, spe = q->n_examples / q->batch;
    memset(c, 0, DPC_ADVISE_MAX * sizeof *c);
    c[n].mech = DPC_MECH_IDENTITY, c[n++].sampler = DPC_SAMPLER_POISSON;
    /* BSR with cyclic Poisson: G groups of N/G records, bands <= G for the banded-MF route;
     * G <= steps per epoch keeps the per-group rate G B / N <= 1 */
    static const size_t bands[] = {16, 32, 64};
    for (size_t i = 0; i < sizeof bands / sizeof bands[0]; i++)
        if (bands[i] <= spe) {
            c[n].mech = DPC_MECH_BSR, c[n].sampler = DPC_SAMPLER_CYCLIC_POISSON;
            c[n].bands = c[n].groups = bands[i];
            n++;
        }
    c[n].mech = DPC_MECH_BSR, c[n++].sampler = DPC_SAMPLER_FIXED;
    c[n].mech = DPC_MECH_BLT, c[n++].sampler = DPC_SAMPLER_FIXED;
    c[n].mech = DPC_MECH_NU, c[n++].sampler = DPC_SAMPLER_FIXED;
    if (!q->skip_slow) c[n].mech = DPC_MECH_BLT, c[n++].sampler = DPC_SAMPLER_BALLS_IN_BINS;
    return n;
}

/* nu-DP-FTRL's damping: the library's best for n steps, k = epochs participations at the
 * fixed-order separation (the scaled RMSE of the optimizer's workload). */
static double best_nu(const dpc_advise_query *q)
{
    size_t spe = q->n_examples / q->batch;
    dpc_strategy_problem pb;
    dpc_strategy_problem_init(&pb, q->epochs * spe);
    pb.participations = q->epochs;
    pb.min_sep = spe;
    pb.objective = DPC_OBJECTIVE_MEAN;
    pb.workload = (dpc_workload){q->momentum, 1.0};
    double nu = 0.0;
    dpc_strategy_loss l;
    dpc_error e = {0};
    return dpc_strategy_best_nu(&pb, &nu, &l, &e) ? 0.0 : nu;
}

/* Orders by increasing error (stable; the inapplicable ones last, in candidate order). */
static void rank(dpc_advice *a, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        dpc_advice x = a[i];
        size_t j = i;
        while (j > 0 && x.ok && (!a[j - 1].ok || a[j - 1].error > x.error)) {
            a[j] = a[j - 1];
            j--;
        }
        a[j] = x;
    }
}

/* The reason of each applicable candidate's rank, in the library's words. */
static void explain(dpc_advice *a, size_t n, double sgd_error)
{
    for (size_t i = 0; i < n && a[i].ok; i++) {
        a[i].loss_ratio = sgd_error > 0 ? (a[i].error / sgd_error) * (a[i].error / sgd_error)
                                        : NAN;
        char head[96];
        if (i == 0 && i + 1 < n && a[1].ok)
            text(head, sizeof head, "lowest error, %.2fx less squared error than the next",
                     (a[1].error / a[0].error) * (a[1].error / a[0].error));
        else if (i == 0)
            text(head, sizeof head, "the only applicable candidate");
        else
            text(head, sizeof head, "%.2fx the squared error of the first",
                     (a[i].error / a[0].error) * (a[i].error / a[0].error));
        text(a[i].why, sizeof a[i].why,
                 "%s: %s sampling, %s%s; noise multiplier %.4g gives noise std %.4g per unit "
                 "clip, and the mechanism's workload RMSE is %.4g per unit noise",
                 head, dpc_sampler_kind_name(a[i].sampler), a[i].route,
                 a[i].amplified ? "" : " (no amplification)", a[i].noise_multiplier,
                 a[i].noise_std, a[i].rmse);
    }
}

dpc_status dpc_train_advise(const dpc_advise_query *q, dpc_advice *out, size_t cap, size_t *n_out,
                            dpc_error *err)
{
    if (!q || !out || !n_out)
        return dpc_error_set(err, DPC_E_INVALID, "advise: NULL argument");
    *n_out = 0;
    if (cap < DPC_ADVISE_MAX)
        return dpc_error_param(err, DPC_E_INVALID, "cap", "must be >= %d, got %zu",
                               DPC_ADVISE_MAX, cap);
    dpc_status st = check_query(q, err);
    if (st) return st;
    size_t n = candidates(q, out);
    double nu = best_nu(q), sgd_error = NAN;
    for (size_t i = 0; i < n; i++) {
        if (out[i].mech == DPC_MECH_NU) out[i].nu = nu;
        if ((st = evaluate(q, &out[i], err))) return st;
        if (out[i].mech == DPC_MECH_IDENTITY && out[i].ok) sgd_error = out[i].error;
    }
    rank(out, n);
    explain(out, n, sgd_error);
    for (size_t i = 0; i < n; i++)
        if (!out[i].ok) out[i].loss_ratio = NAN;
    *n_out = n;
    return DPC_OK;
}
