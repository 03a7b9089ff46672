/* strategy_core.c — problems, losses through the mechanism API, closed-form baselines, the
 * strategy object and the L-BFGS driver shared by the optimizers (see dpcorr/strategy.h). */
#include "common/util.h"
#include "field/field_def.h"
#include "mech/mech_internal.h"
#include "strategy/strategy_internal.h"

#include <lbfgs.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* The manuals of dpc_strategy_problem (its workload nested: dpc__workload_table, mech.h) and
 * dpc_strategy_options, one row per field in struct order (dpcorr/strategy.h). */
#define SP(m) DPC_FIELD_AT(dpc_strategy_problem, m)
static const char *const objective_names[] = {"max", "mean"};
static const dpc_field sp_fields[] = {
    {.name = "steps", .type = DPC_FIELD_SIZE, SP(steps), .lo = 1, .hi = 1099511627776.0,
     .flags = DPC_FIELD_UNSET_ZERO,
     .doc = "n, the steps (the argument of dpc_strategy_problem_init), at most 2^40"},
    {.name = "participations", .type = DPC_FIELD_SIZE, SP(participations), .def = 1, .lo = 1,
     .hi = INFINITY, .flags = DPC_FIELD_HI_OPEN, .doc = "k: participations of one example"},
    {.name = "min_sep", .type = DPC_FIELD_SIZE, SP(min_sep), .def = 1, .lo = 1, .hi = INFINITY,
     .flags = DPC_FIELD_HI_OPEN, .doc = "b: steps between two participations (k = 1: ignored)"},
    {.name = "workload", .type = DPC_FIELD_STRUCT, SP(workload), .sub = &dpc__workload_table,
     .doc = "the workload A: prefix sums, or SGD with momentum and weight decay"},
    {.name = "objective", .type = DPC_FIELD_ENUM, SP(objective), .def = DPC_OBJECTIVE_MAX,
     DPC_FIELD_NAMES(objective_names), .doc = "max (max row norm of A B) or mean (RMSE)"},
};
#undef SP
static const dpc_field_table sp_table = DPC_FIELD_TABLE(dpc_strategy_problem, sp_fields);

#define SO(m) DPC_FIELD_AT(dpc_strategy_options, m)
/* 0 means "the optimizer's own" for every count (UNSET_ZERO); a count that is set is in its
 * range: buffers of a BLT are fixed arrays of DPC__STRAT_BLT_MAX, iterations reach liblbfgs as
 * an int */
#define UNSET DPC_FIELD_UNSET_ZERO
static const dpc_field so_fields[] = {
    {.name = "max_iterations", .type = DPC_FIELD_SIZE, SO(max_iterations), .lo = 1,
     .hi = INT_MAX, .flags = UNSET, .def_text = "blt 500, banded 1000, dense 300",
     .doc = "L-BFGS iterations per run (0: the optimizer's default)"},
    {.name = "buffers", .type = DPC_FIELD_SIZE, SO(buffers), .lo = 1, .hi = DPC__STRAT_BLT_MAX,
     .flags = UNSET, .def_text = "automatic growth",
     .doc = "blt: a fixed number of buffers (0: grown)"},
    {.name = "max_buffers", .type = DPC_FIELD_SIZE, SO(max_buffers), .lo = 1,
     .hi = DPC__STRAT_BLT_MAX, .flags = UNSET, .def_text = "10",
     .doc = "blt, grown: at most this many buffers (0: 10)"},
    {.name = "min_improvement", .type = DPC_FIELD_DOUBLE, SO(min_improvement), .lo = 0, .hi = 1,
     .flags = DPC_FIELD_HI_OPEN, .def_text = "0.01",
     .doc = "blt, grown: stop when a buffer improves the loss by less than this fraction "
            "(0: 0.01)"},
    {.name = "bands", .type = DPC_FIELD_SIZE, SO(bands), .lo = 1, .hi = INFINITY,
     .flags = UNSET | DPC_FIELD_HI_OPEN,
     .doc = "banded: bands, >= 1 (required); dense: bandwidth of X for k > 1 (0: b, <= b)"},
    {.name = "progress", .type = DPC_FIELD_BYTES, SO(progress), .flags = DPC_FIELD_RUNTIME,
     .def_text = "none",
     .doc = "dpc_progress after every L-BFGS iteration; a non-zero return cancels"},
};
#undef SO
#undef UNSET
static const dpc_field_table so_table = DPC_FIELD_TABLE(dpc_strategy_options, so_fields);

const dpc_field_table *dpc_strategy_problem_fields(void) { return &sp_table; }
const dpc_field_table *dpc_strategy_options_fields(void) { return &so_table; }

void dpc_strategy_problem_init(dpc_strategy_problem *pb, size_t steps)
{
    dpc_field_defaults(&sp_table, pb); /* k = 1, b = 1, prefix sums, max */
    pb->steps = steps;
}

const char *dpc_objective_name(dpc_objective o)
{
    return o == DPC_OBJECTIVE_MEAN ? "mean" : o == DPC_OBJECTIVE_MAX ? "max" : "unknown";
}

dpc_status dpc_strategy_problem_check(const dpc_strategy_problem *pb, dpc_error *err)
{
    if (!pb) return dpc_error_param(err, DPC_E_INVALID, "pb", "NULL");
    if (pb->steps == 0) return dpc_error_param(err, DPC_E_INVALID, "steps", "must be >= 1");
    if (pb->steps > ((size_t)1 << 40)) /* the library's bound keeps its status */
        return dpc_error_param(err, DPC_E_RANGE, "steps", "%zu is beyond the supported 2^40",
                               pb->steps);
    return dpc_field_check(&sp_table, pb, err); /* k, b, the workload, the objective */
}

dpc_status dpc__strat_check_options(const dpc_strategy_options *o, dpc_error *err)
{
    if (!o) return DPC_OK; /* NULL: every option at its default */
    return dpc_field_check(&so_table, o, err);
}

size_t dpc__strat_keff(const dpc_strategy_problem *pb)
{
    if (pb->participations <= 1) return 1;
    size_t kmax = dpc__ceil_div(pb->steps, pb->min_sep);
    return pb->participations < kmax ? pb->participations : kmax;
}

void dpc__strat_workload_coeffs(double *w, size_t n, const dpc_workload *wl)
{
    /* impulse response of u_t = x_t + m u_{t-1}, y_t = u_t + a y_{t-1} */
    double u = 0.0, y = 0.0;
    for (size_t t = 0; t < n; t++) {
        u = (t == 0 ? 1.0 : 0.0) + wl->momentum * u;
        y = u + wl->decay * y;
        w[t] = y;
    }
}

void dpc_strategy_options_init(dpc_strategy_options *o) { dpc_field_defaults(&so_table, o); }

dpc_status dpc_strategy_loss_of(const dpc_mech *m, const dpc_strategy_problem *pb,
                                dpc_strategy_loss *out, dpc_error *err)
{
    dpc_status st = dpc_strategy_problem_check(pb, err);
    if (st) return st;
    if (dpc_mech_steps(m) != pb->steps)
        return dpc_error_param(err, DPC_E_INVALID, "steps",
                               "the mechanism has %zu, the problem %zu", dpc_mech_steps(m),
                               pb->steps);
    dpc_participation part = {DPC_PART_MINSEP, pb->participations,
                              pb->participations > 1 ? pb->min_sep : 1};
    dpc_sensitivity sv;
    dpc_mech_error me;
    if ((st = dpc_mech_sensitivity(m, &part, &sv, err))) return st;
    if ((st = dpc_mech_error_of(m, &pb->workload, &me, err))) return st;
    out->sensitivity = sv.value;
    out->exact = sv.exact;
    out->error = pb->objective == DPC_OBJECTIVE_MEAN ? me.rmse : me.max_error;
    out->loss = out->sensitivity * out->sensitivity * out->error * out->error;
    return DPC_OK;
}

static dpc_status loss_of_params(const dpc_mech_params *p, const dpc_strategy_problem *pb,
                                 dpc_strategy_loss *out, dpc_error *err)
{
    dpc_mech *m = NULL;
    dpc_status st = dpc_mech_new(&m, p, err);
    if (st) return st;
    st = dpc_strategy_loss_of(m, pb, out, err);
    dpc_mech_free(m);
    return st;
}

dpc_status dpc_strategy_best_nu(const dpc_strategy_problem *pb, double *best_nu,
                                dpc_strategy_loss *best, dpc_error *err)
{
    dpc_status st = dpc_strategy_problem_check(pb, err);
    if (st) return st;
    /* per grid point: the coefficients, the sensitivity (n k) and the error (DPC_WORK_LIMIT) */
    double keff = (double)dpc__strat_keff(pb);
    if ((st = dpc__work_check(DPC_STRATEGY_NU_GRID * (double)pb->steps * (40.0 + 2.0 * keff),
                              "steps", "the nu grid search (49 mechanisms of n steps)", err)))
        return st;
    int found = 0;
    for (int i = 0; i < DPC_STRATEGY_NU_GRID; i++) {
        /* 0, then 1e-7 .. 0.5 log-spaced (48 values) */
        double nu =
            i == 0 ? 0.0 : 1e-7 * pow(0.5 / 1e-7, (double)(i - 1) / (DPC_STRATEGY_NU_GRID - 2));
        dpc_mech_params p;
        dpc_mech_params_init(&p);
        p.kind = DPC_MECH_NU;
        p.steps = pb->steps;
        p.nu = nu;
        dpc_strategy_loss l;
        if ((st = loss_of_params(&p, pb, &l, err))) return st;
        if (!found || l.loss < best->loss) {
            *best = l;
            *best_nu = nu;
            found = 1;
        }
    }
    return DPC_OK;
}

#define BASELINE_OPS 40.0 /* per step of a baseline through the mechanism API */

dpc_status dpc_strategy_baselines(const dpc_strategy_problem *pb, size_t bands,
                                  dpc_strategy_baseline *out, size_t cap, size_t *count,
                                  dpc_error *err)
{
    dpc_status st = dpc_strategy_problem_check(pb, err);
    if (st) return st;
    *count = 0;
    size_t n = pb->steps;
    if (bands == 0) bands = dpc_mech_default_bands(n, pb->participations, pb->min_sep);
    for (int which = 0; which < 5 && *count < cap; which++) {
        dpc_strategy_baseline *b = &out[*count];
        memset(b, 0, sizeof *b);
        dpc_mech_params p;
        dpc_mech_params_init(&p);
        p.steps = n;
        dpc_error e2 = {0};
        switch (which) {
        case 0:
            p.kind = DPC_MECH_IDENTITY;
            snprintf(b->name, sizeof b->name, "DP-SGD (identity)");
            break;
        case 1:
            p.kind = DPC_MECH_NU;
            snprintf(b->name, sizeof b->name, "optimal CC (nu=0)");
            break;
        case 2: {
            double nu = 0.0;
            st = dpc_strategy_best_nu(pb, &nu, &b->loss, &e2);
            if (st && st != DPC_E_RANGE) return dpc_error_set(err, st, "%s", e2.msg);
            if (st) snprintf(b->name, sizeof b->name, "nu-DP-FTRL (skipped: work limit)");
            else snprintf(b->name, sizeof b->name, "nu-DP-FTRL (best nu=%.3g)", nu);
            b->available = st == DPC_OK;
            (*count)++;
            continue;
        }
        case 3:
        case 4:
            p.kind = which == 3 ? DPC_MECH_BSR : DPC_MECH_BISR;
            p.bands = bands;
            p.momentum = pb->workload.momentum;
            p.decay = pb->workload.decay;
            snprintf(b->name, sizeof b->name, "%s (bands=%zu)", which == 3 ? "BSR" : "BISR", bands);
            break;
        }
        /* through the mechanism API: O(n) time and memory per row (about 24 bytes a step),
         * bounded like every computation; BLT itself optimizes at any n */
        if (dpc__work_check(BASELINE_OPS * (double)n, "steps", "a baseline", &e2) != DPC_OK) {
            size_t l = strlen(b->name);
            snprintf(b->name + l, sizeof b->name - l, " (skipped: work limit)");
        } else {
            b->available = loss_of_params(&p, pb, &b->loss, &e2) == DPC_OK;
        }
        (*count)++;
    }
    return DPC_OK;
}

/* ---- Strategy object ---------------------------------------------------------------------- */

dpc_strategy *dpc__strategy_alloc(dpc_mech_kind kind, const char *method,
                                  const dpc_strategy_problem *pb)
{
    dpc_strategy *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->kind = kind;
    snprintf(s->method, sizeof s->method, "%s", method);
    s->problem = *pb;
    s->of_strategy = 1;
    return s;
}

void dpc_strategy_free(dpc_strategy *s)
{
    if (!s) return;
    free(s->theta);
    free(s->omega);
    free(s->coeffs);
    free(s->dense);
    free(s);
}

void dpc_strategy_mech_params(const dpc_strategy *s, dpc_mech_params *p)
{
    dpc_mech_params_init(p);
    p->kind = s->kind;
    p->steps = s->problem.steps;
    p->nbuf = s->nbuf;
    p->theta = s->theta;
    p->omega = s->omega;
    p->ncoeffs = s->ncoeffs;
    p->coeffs = s->coeffs;
    p->dense = s->dense;
    p->coeffs_of_strategy = s->of_strategy;
}

dpc_status dpc_strategy_mech_params_at(const dpc_strategy *s, size_t steps, const char *source,
                                       dpc_mech_params *p, dpc_error *err)
{
    if (!s || !p) return dpc_error_param(err, DPC_E_INVALID, s ? "params" : "strategy", "NULL");
    size_t n = steps ? steps : s->problem.steps;
    if (s->kind == DPC_MECH_DENSE && n != s->problem.steps)
        return dpc_error_param(err, DPC_E_INVALID, "steps", "the dense strategy%s%s has n = %zu, got %zu",
                               source ? " in " : "", source ? source : "", s->problem.steps, n);
    dpc_strategy_mech_params(s, p);
    p->steps = n;
    return DPC_OK;
}

/* ---- L-BFGS driver -------------------------------------------------------------------------- */

typedef struct lb_ctx {
    strat_objective f;
    void *ctx;
    size_t n;
    double *best_x;
    double best_f;
    size_t iters;
    const strat_lbfgs_result *in; /* progress */
    int cancelled;
} lb_ctx;

static int lb_progress(void *inst, const lbfgsfloatval_t *x, const lbfgsfloatval_t *g,
                       const lbfgsfloatval_t fx, const lbfgsfloatval_t xnorm,
                       const lbfgsfloatval_t gnorm, const lbfgsfloatval_t step, int n, int k,
                       int ls)
{
    (void)x, (void)g, (void)fx, (void)xnorm, (void)gnorm, (void)step, (void)n, (void)k, (void)ls;
    lb_ctx *c = inst;
    c->iters++;
    const dpc_progress *p = c->in->progress;
    if (p && p->fn && p->fn(p->ctx, c->in->done0 + (double)c->iters, c->in->total)) {
        c->cancelled = 1;
        return 1; /* liblbfgs stops */
    }
    return 0;
}

static lbfgsfloatval_t lb_eval(void *inst, const lbfgsfloatval_t *x, lbfgsfloatval_t *g,
                               const int n, const lbfgsfloatval_t step)
{
    (void)step;
    lb_ctx *c = inst;
    double f = c->f(c->ctx, x, g, (size_t)n);
    if (!isfinite(f)) {
        for (int i = 0; i < n; i++) g[i] = 0.0;
        return INFINITY;
    }
    for (int i = 0; i < n; i++)
        if (!isfinite(g[i])) return INFINITY;
    if (f < c->best_f) {
        c->best_f = f;
        memcpy(c->best_x, x, (size_t)n * sizeof *x);
    }
    return f;
}

dpc_status dpc__strat_minimize(strat_objective f, void *ctx, double *x, size_t n, size_t max_iter,
                               double rel_tol, strat_lbfgs_result *res, dpc_error *err)
{
    return dpc__strat_minimize_ex(f, ctx, x, n, max_iter, rel_tol, 15, 0, res, err);
}

dpc_status dpc__strat_minimize_ex(strat_objective f, void *ctx, double *x, size_t n,
                                  size_t max_iter, double rel_tol, int memory, int backtracking,
                                  strat_lbfgs_result *res, dpc_error *err)
{
    if (n == 0 || n > (size_t)0x7fffffff)
        return dpc_error_set(err, DPC_E_RANGE, "optimizer: %zu variables unsupported", n);
    lbfgsfloatval_t *xv = lbfgs_malloc((int)n);
    double *best = dpc__malloc_array(n, sizeof *best), *g = dpc__malloc_array(n, sizeof *g);
    if (!xv || !best || !g) {
        lbfgs_free(xv);
        free(best);
        free(g);
        return DPC__NOMEM(err, "optimizer state");
    }
    memcpy(xv, x, n * sizeof *x);
    memcpy(best, x, n * sizeof *x);
    lb_ctx c = {f, ctx, n, best, f(ctx, x, g, n), 0, res, 0};
    if (!isfinite(c.best_f)) {
        lbfgs_free(xv);
        free(best);
        free(g);
        return dpc_error_set(err, DPC_E_NUMERIC,
                             "optimizer: the starting point has no finite "
                             "loss");
    }
    int ret = 0;
    /* More-Thuente first; if it stops on a line-search failure, up to two restarts from the best
     * point with a backtracking line search (a restart also drops a stale curvature history). */
    for (int round = 0; round < 3 && c.iters < max_iter && !c.cancelled; round++) {
        lbfgs_parameter_t prm;
        lbfgs_parameter_init(&prm);
        prm.m = memory;
        prm.epsilon = 1e-10;
        prm.past = 10;
        prm.delta = rel_tol;
        prm.max_iterations = (int)(max_iter - c.iters);
        prm.linesearch = round == 0 && !backtracking ? LBFGS_LINESEARCH_MORETHUENTE
                                                     : LBFGS_LINESEARCH_BACKTRACKING_STRONG_WOLFE;
        prm.max_linesearch = 40;
        memcpy(xv, best, n * sizeof *x);
        double before = c.best_f;
        lbfgsfloatval_t fx = 0;
        ret = lbfgs((int)n, xv, &fx, lb_eval, lb_progress, &c, &prm);
        if (ret == LBFGS_SUCCESS || ret == LBFGS_STOP || ret == LBFGS_ALREADY_MINIMIZED ||
            ret == LBFGSERR_MAXIMUMITERATION)
            break;
        if (!(c.best_f < before * (1.0 - 1e-12) || before != before)) break; /* no progress */
    }
    memcpy(x, best, n * sizeof *x);
    res->f = c.best_f;
    res->iterations = c.iters;
    res->status = ret;
    lbfgs_free(xv);
    free(best);
    free(g);
    if (c.cancelled)
        return dpc_error_set(err, DPC_E_CANCELLED, "optimizer: cancelled after %zu iterations",
                             c.iters);
    return DPC_OK;
}
