/* mech_compare.c — every mechanism side by side at n steps (dpc_mech_compare, dpcorr/strategy.h):
 * the rows, the grids of the tuned rows and the "best of a grid by scaled RMSE" rule live here so
 * that `dpcorr compare` and the Python binding show the same table. */
#include "common/util.h"
#include "field/field_def.h"
#include "mech/mech_internal.h"
#include "strategy/strategy_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double damp_grid[] = {1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 3e-1};
static const double lambda_grid[] = {0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99};

const double *dpc_mech_compare_grid(dpc_mech_kind kind, size_t *count)
{
    size_t n = 0;
    const double *g = NULL;
    if (kind == DPC_MECH_ANTIPGD) g = damp_grid, n = sizeof damp_grid / sizeof *damp_grid;
    if (kind == DPC_MECH_LCGD) g = lambda_grid, n = sizeof lambda_grid / sizeof *lambda_grid;
    if (count) *count = n;
    return g;
}

/* The manual of dpc_mech_compare_params (dpcorr/strategy.h); the pattern is dpc_participation's
 * own table (mech.h), its defaults single participation. */
#define CP(m) DPC_FIELD_AT(dpc_mech_compare_params, m)
static const dpc_field cmp_fields[] = {
    /* n <= 1e6 bounds the whole comparison (its 22 evaluations of n-step mechanisms): each row
     * stops at the work limit on its own, but the rows below it add up (2 s at n = 1e6, 4 s at
     * 1e7, 42 s at 1e8 and 122 s at 1e9 on a 2-core Zen 5), so the table refuses up front */
    {.name = "steps", .type = DPC_FIELD_SIZE, CP(steps), .def = 2000, .lo = 1, .hi = 1e6,
     .doc = "n: steps of every row (the default is a comparison of seconds)"},
    {.name = "part", .type = DPC_FIELD_STRUCT, CP(part), .sub = &dpc__participation_table,
     .doc = "the participation pattern of the sensitivities and of the searches"},
    {.name = "progress", .type = DPC_FIELD_BYTES, CP(progress), .flags = DPC_FIELD_RUNTIME,
     .doc = "called after each evaluation (done, DPC_MECH_COMPARE_EVALS); none when fn is NULL"},
};
#undef CP
static const dpc_field_table cmp_table = DPC_FIELD_TABLE(dpc_mech_compare_params, cmp_fields);

const dpc_field_table *dpc_mech_compare_params_fields(void) { return &cmp_table; }

void dpc_mech_compare_params_init(dpc_mech_compare_params *p, size_t steps)
{
    if (!p) return;
    dpc_field_defaults(&cmp_table, p);
    p->steps = steps;
}

void dpc_mech_compare_multi_part(size_t steps, dpc_participation *part)
{
    if (!part) return;
    part->kind = DPC_PART_MINSEP;
    if (!part->k) part->k = DPC_MECH_COMPARE_K;
    /* the farthest apart k participations fit in n steps: the least sensitivity for that k */
    if (!part->b) part->b = steps / part->k ? steps / part->k : 1;
}

void dpc_mech_compare_free(dpc_mech_compare_row *rows) { free(rows); }

/* The comparison under way: the progress, the failures (the first one's error kept). */
typedef struct cmp_state {
    const dpc_mech_compare_params *p;
    double done;
    size_t failed;
    dpc_error first;
    dpc_status stop; /* DPC_E_CANCELLED once the progress asked to stop */
    dpc_error *err;
} cmp_state;

static void cmp_fail(cmp_state *c, const dpc_error *e)
{
    if (!c->failed++) c->first = *e;
}

/* One evaluation done, failed or not: the progress, which may ask to stop. */
static void cmp_step(cmp_state *c)
{
    c->done += 1.0;
    if (dpc__progress(&c->p->progress, c->done, DPC_MECH_COMPARE_EVALS, c->err)) c->stop = 1;
}

/* One evaluation (one progress step); 1 when *r was filled. */
static int cmp_eval(cmp_state *c, const dpc_mech_params *mp, dpc_mech_compare_row *r)
{
    dpc_error e;
    memset(&e, 0, sizeof e);
    if (c->stop) return 0;
    dpc_mech *m = NULL;
    dpc_sensitivity sv;
    dpc_mech_error me;
    int ok = !dpc_mech_new(&m, mp, &e) && !dpc_mech_sensitivity(m, &c->p->part, &sv, &e) &&
             !dpc_mech_error_of(m, NULL, &me, &e);
    if (ok) {
        r->kind = mp->kind;
        r->honaker = mp->honaker;
        r->sensitivity = sv.value;
        r->exact = sv.exact;
        r->rmse = me.rmse;
        r->max_error = me.max_error;
        r->state_floats = dpc_mech_state_floats(m, DPC_NOISE_BUFFER);
        r->replay = dpc_mech_form_available(m, DPC_NOISE_REPLAY);
        r->anytime = dpc_mech_is_anytime(m);
    } else {
        memset(r, 0, sizeof *r); /* the slot goes to the next row */
        cmp_fail(c, &e);
    }
    dpc_mech_free(m);
    cmp_step(c);
    return ok;
}

/* The best of *field's grid (a member of *mp) by scaled RMSE, the first on ties. */
static int cmp_tune(cmp_state *c, dpc_mech_params *mp, double *field, dpc_mech_compare_row *best)
{
    size_t ng = 0;
    const double *grid = dpc_mech_compare_grid(mp->kind, &ng);
    int found = 0;
    for (size_t i = 0; i < ng; i++) {
        *field = grid[i];
        dpc_mech_compare_row r;
        memset(&r, 0, sizeof r);
        if (!cmp_eval(c, mp, &r)) continue;
        if (!found || r.sensitivity * r.rmse < best->sensitivity * best->rmse) {
            *best = r;
            best->value = grid[i];
            found = 1;
        }
    }
    return found;
}

/* nu-DP-FTRL at dpc_strategy_best_nu for the pattern (objective MEAN, prefix workload). */
static int cmp_best_nu(cmp_state *c, dpc_mech_compare_row *r)
{
    if (c->stop) return 0; /* cancelled: no further search */
    dpc_strategy_problem pb;
    dpc_strategy_problem_init(&pb, c->p->steps);
    pb.participations = c->p->part.k;
    pb.min_sep = c->p->part.b;
    pb.objective = DPC_OBJECTIVE_MEAN;
    dpc_strategy_loss l;
    dpc_error e;
    memset(&e, 0, sizeof e);
    double nu = 0;
    if (dpc_strategy_best_nu(&pb, &nu, &l, &e)) {
        cmp_fail(c, &e);
        cmp_step(c);
        return 0;
    }
    dpc_mech_params mp;
    dpc_mech_params_init(&mp);
    mp.kind = DPC_MECH_NU;
    mp.steps = c->p->steps;
    mp.nu = nu;
    r->value = nu;
    return cmp_eval(c, &mp, r);
}

/* The default BLT for n, k and b (dpc_strategy_default_blt: what train and account use). */
static int cmp_default_blt(cmp_state *c, dpc_mech_compare_row *r)
{
    if (c->stop) return 0; /* cancelled: no BLT optimization */
    size_t n = c->p->steps;
    dpc_strategy *st = NULL;
    dpc_error e;
    memset(&e, 0, sizeof e);
    if (n < 2) {
        dpc_error_set(&e, DPC_E_INVALID, "BLT needs n >= 2 steps");
        snprintf(e.field, sizeof e.field, "steps");
    }
    if (n < 2 ||
        dpc_strategy_default_blt(&st, n, c->p->part.k, c->p->part.b, DPC_WORKLOAD_PREFIX, &e)) {
        cmp_fail(c, &e);
        cmp_step(c);
        return 0;
    }
    dpc_mech_params mp;
    dpc_mech_params_init(&mp);
    dpc_strategy_mech_params(st, &mp);
    mp.steps = n;
    r->value = (double)mp.nbuf;
    int ok = cmp_eval(c, &mp, r);
    dpc_strategy_free(st);
    return ok;
}

static void base(dpc_mech_params *mp, dpc_mech_kind kind, size_t n)
{
    dpc_mech_params_init(mp);
    mp->kind = kind;
    mp->steps = n;
}

/* The rows in the documented order; returns their number. */
static size_t cmp_rows(cmp_state *c, dpc_mech_compare_row *rows)
{
    size_t n = c->p->steps, nr = 0;
    dpc_mech_params mp;
    base(&mp, DPC_MECH_IDENTITY, n);
    if (cmp_eval(c, &mp, &rows[nr])) snprintf(rows[nr++].name, 64, "DP-SGD (identity)");
    base(&mp, DPC_MECH_NU, n);
    if (cmp_eval(c, &mp, &rows[nr])) snprintf(rows[nr++].name, 64, "optimal CC (nu=0)");
    if (cmp_best_nu(c, &rows[nr]))
        snprintf(rows[nr].name, 64, "nu-DP-FTRL (nu=%.3g)", rows[nr].value), nr++;
    base(&mp, DPC_MECH_ANTIPGD, n);
    if (cmp_tune(c, &mp, &mp.nu, &rows[nr]))
        snprintf(rows[nr].name, 64, "damped anti-PGD (nu=%g)", rows[nr].value), nr++;
    base(&mp, DPC_MECH_LCGD, n);
    if (cmp_tune(c, &mp, &mp.lambda, &rows[nr]))
        snprintf(rows[nr].name, 64, "lambda-CGD (lambda=%g)", rows[nr].value), nr++;
    for (int bisr = 0; bisr < 2; bisr++) {
        base(&mp, bisr ? DPC_MECH_BISR : DPC_MECH_BSR, n);
        mp.bands = dpc_mech_default_bands(n, c->p->part.k, c->p->part.b);
        rows[nr].value = (double)mp.bands;
        if (cmp_eval(c, &mp, &rows[nr]))
            snprintf(rows[nr].name, 64, "%s (bands=%zu)", bisr ? "BISR" : "BSR", mp.bands), nr++;
    }
    if (cmp_default_blt(c, &rows[nr]))
        snprintf(rows[nr].name, 64, "BLT (%zu buffers)", (size_t)rows[nr].value), nr++;
    for (int honaker = 0; honaker < 2; honaker++) {
        base(&mp, DPC_MECH_TREE, n);
        mp.honaker = honaker;
        if (cmp_eval(c, &mp, &rows[nr]))
            snprintf(rows[nr++].name, 64, "tree (%s)", honaker ? "Honaker" : "binary");
    }
    return nr;
}

dpc_status dpc_mech_compare(const dpc_mech_compare_params *p, dpc_mech_compare_row **rows,
                            size_t *count, size_t *failed, dpc_error *first_failure,
                            dpc_error *err)
{
    if (rows) *rows = NULL;
    if (count) *count = 0;
    if (failed) *failed = 0;
    if (first_failure) memset(first_failure, 0, sizeof *first_failure);
    if (!p) return dpc_error_param(err, DPC_E_INVALID, "p", "NULL");
    if (!rows) return dpc_error_param(err, DPC_E_INVALID, "rows", "NULL");
    if (!count) return dpc_error_param(err, DPC_E_INVALID, "count", "NULL");
    /* the ranges from the table ("steps", "part.k") */
    dpc_status st = dpc_field_check(&cmp_table, p, err);
    if (st) return st;
    dpc_mech_compare_row *r = dpc__calloc(16, sizeof *r);
    if (!r) return DPC__NOMEM(err, "the comparison's rows");
    cmp_state c;
    memset(&c, 0, sizeof c);
    c.p = p;
    c.err = err;
    size_t nr = cmp_rows(&c, r);
    if (failed) *failed = c.failed;
    if (first_failure) *first_failure = c.first;
    if (c.stop || nr == 0) {
        free(r);
        if (c.stop) return DPC_E_CANCELLED; /* err set by the progress */
        if (err) *err = c.first;
        return c.first.status ? c.first.status : DPC_E_INVALID;
    }
    *rows = r;
    *count = nr;
    return DPC_OK;
}
