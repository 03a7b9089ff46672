/* advise.c — which mechanism for a run's shape (dpc_train_advise): every candidate is calibrated
 * to the budget by the trainer's own decisions (dpc_train_plan_new: sampler, mechanism, route,
 * noise multiplier) and scored by the noise it adds to the running gradient sums, so the ranking
 * includes amplification by sampling, which `dpcorr compare` (equal sensitivity) leaves out. */
#include "common/util.h"
#include "field/field_def.h"
#include "dpcorr/io.h"
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

/* The manual of dpc_advise_query, one row per field in struct order (dpcorr/train.h). */
#define AQ(m) DPC_FIELD_AT(dpc_advise_query, m)
#define POS (DPC_FIELD_LO_OPEN | DPC_FIELD_HI_OPEN) /* (0, inf): a finite number > 0 */
static const char *const aq_accountant_names[] = {"rdp", "pld", "zcdp", "gdp"};
static const dpc_field aq_fields[] = {
    {.name = "n_examples", .type = DPC_FIELD_SIZE, AQ(n_examples), .lo = 1, .hi = INFINITY,
     .flags = DPC_FIELD_UNSET_ZERO | DPC_FIELD_HI_OPEN,
     .doc = "N: training examples (0: must be set)"},
    {.name = "batch", .type = DPC_FIELD_SIZE, AQ(batch), .def = 256, .lo = 1, .hi = INFINITY,
     .flags = DPC_FIELD_HI_OPEN, .doc = "(expected) batch size B, at most N"},
    {.name = "epochs", .type = DPC_FIELD_SIZE, AQ(epochs), .def = 1, .lo = 1, .hi = INFINITY,
     .flags = DPC_FIELD_HI_OPEN, .doc = "passes over the data"},
    {.name = "epsilon", .type = DPC_FIELD_DOUBLE, AQ(epsilon), .lo = 0, .hi = INFINITY,
     .flags = POS | DPC_FIELD_UNSET_ZERO, .doc = "the budget every candidate is calibrated to "
                                                 "(0: must be set)"},
    {.name = "delta", .type = DPC_FIELD_DOUBLE, AQ(delta), .lo = 0, .hi = 1,
     .flags = POS | DPC_FIELD_UNSET_ZERO, .def_text = DPC__DELTA_DEFAULT_TEXT,
     .doc = "target delta, below 1/N unless allow_large_delta; 0 = derived from N"},
    {.name = "allow_large_delta", .type = DPC_FIELD_BOOL, AQ(allow_large_delta),
     .doc = "1 accepts delta >= 1/N"},
    {.name = "accountant", .type = DPC_FIELD_ENUM, AQ(accountant), .def = DPC_ACCOUNTANT_PLD,
     DPC_FIELD_NAMES(aq_accountant_names),
     .doc = "accountant of the amplified routes (dpc_account_default_accountant)"},
    {.name = "momentum", .type = DPC_FIELD_DOUBLE, AQ(momentum), .lo = 0, .hi = 1,
     .flags = DPC_FIELD_HI_OPEN, .doc = "the optimizer's momentum: the workload scored"},
    {.name = "skip_slow", .type = DPC_FIELD_BOOL, AQ(skip_slow),
     .doc = "1 leaves out candidates whose calibration takes seconds to minutes"},
};
#undef AQ
#undef POS
static const dpc_field_table aq_table = DPC_FIELD_TABLE(dpc_advise_query, aq_fields);

const dpc_field_table *dpc_advise_query_fields(void) { return &aq_table; }

void dpc_advise_query_init(dpc_advise_query *q)
{
    if (!q) return;
    dpc_field_defaults(&aq_table, q);
    q->accountant = dpc_account_default_accountant(); /* the one rule (PLD), the table's too */
}

static dpc_status check_query(const dpc_advise_query *q, dpc_error *err)
{
    if (q->n_examples == 0)
        return dpc_error_param(err, DPC_E_INVALID, "n_examples", "must be >= 1");
    if (q->epsilon == 0)
        return dpc_error_param(err, DPC_E_INVALID, "epsilon", "must be a finite number > 0, got 0");
    dpc_status st = dpc_field_check(&aq_table, q, err);
    if (st) return st;
    if (q->batch > q->n_examples)
        return dpc_error_param(err, DPC_E_INVALID, "batch", "must be in [1, N = %zu], got %zu",
                               q->n_examples, q->batch);
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

void dpc_advise_json(dpc_json_writer *w, const dpc_advise_query *q, const dpc_advice *a,
                     size_t n, const char *const *run)
{
    if (!w || !q) return;
    dpc_json_int(w, "n_examples", (long long)q->n_examples);
    dpc_json_int(w, "batch", (long long)q->batch);
    dpc_json_int(w, "epochs", (long long)q->epochs);
    dpc_json_num(w, "epsilon", q->epsilon);
    dpc_json_arr(w, "candidates");
    for (size_t i = 0; a && i < n; i++) {
        dpc_json_obj(w, NULL);
        dpc_json_bool(w, "applicable", a[i].ok);
        dpc_json_str(w, "mechanism", a[i].mechanism);
        dpc_json_str(w, "sampler", dpc_sampler_kind_name(a[i].sampler));
        if (run && run[i]) dpc_json_str(w, "train_options", run[i]);
        if (a[i].ok) {
            dpc_json_str(w, "route", a[i].route);
            dpc_json_bool(w, "amplified", a[i].amplified);
            dpc_json_num(w, "noise_multiplier", a[i].noise_multiplier);
            dpc_json_num(w, "noise_std_per_unit_clip", a[i].noise_std);
            dpc_json_num(w, "rmse", a[i].rmse);
            dpc_json_num(w, "error", a[i].error);
            dpc_json_num(w, "vs_sgd", a[i].loss_ratio);
            dpc_json_num(w, "epsilon", a[i].epsilon);
        }
        dpc_json_num(w, "calibration_s", a[i].seconds);
        dpc_json_str(w, "why", a[i].why);
        dpc_json_end(w);
    }
    dpc_json_end(w);
}
