/* test_mech_compare.c — dpc_mech_compare (`dpcorr compare`'s table): each row against the
 * library functions called directly for the same parameters, the grid rule (the chosen value is
 * the grid's argmin of the scaled RMSE), the searched and default rows, progress, refusals. */
#include "dpcorr.h"
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The row's measurements recomputed from its mechanism's parameters. */
static int direct(const dpc_mech_params *p, const dpc_participation *part,
                  dpc_mech_compare_row *r)
{
    dpc_error e;
    memset(&e, 0, sizeof e);
    dpc_mech *m = NULL;
    dpc_sensitivity sv;
    dpc_mech_error me;
    int ok = !dpc_mech_new(&m, p, &e) && !dpc_mech_sensitivity(m, part, &sv, &e) &&
             !dpc_mech_error_of(m, NULL, &me, &e);
    memset(r, 0, sizeof *r);
    if (ok) {
        r->sensitivity = sv.value;
        r->exact = sv.exact;
        r->rmse = me.rmse;
        r->max_error = me.max_error;
        r->state_floats = dpc_mech_state_floats(m, DPC_NOISE_BUFFER);
        r->replay = dpc_mech_form_available(m, DPC_NOISE_REPLAY);
        r->anytime = dpc_mech_is_anytime(m);
    }
    dpc_mech_free(m);
    return ok;
}

static void same_row(const dpc_mech_compare_row *a, const dpc_mech_compare_row *b)
{
    CHECK(a->sensitivity == b->sensitivity && a->exact == b->exact && a->rmse == b->rmse &&
              a->max_error == b->max_error && a->state_floats == b->state_floats &&
              a->replay == b->replay && a->anytime == b->anytime,
          "%s: sens %.17g/%.17g rmse %.17g/%.17g max %.17g/%.17g", a->name, a->sensitivity,
          b->sensitivity, a->rmse, b->rmse, a->max_error, b->max_error);
}

/* The grid's argmin (first on ties) recomputed; checks the row took it. */
static void check_grid(const dpc_mech_compare_row *row, size_t n, const dpc_participation *part)
{
    size_t ng = 0;
    const double *g = dpc_mech_compare_grid(row->kind, &ng);
    CHECK(g && ng == (row->kind == DPC_MECH_LCGD ? 8u : 6u), "%s: grid of %zu", row->name, ng);
    double best = INFINITY, arg = NAN;
    for (size_t i = 0; g && i < ng; i++) {
        dpc_mech_params p;
        dpc_mech_params_init(&p);
        p.kind = row->kind;
        p.steps = n;
        if (row->kind == DPC_MECH_LCGD) p.lambda = g[i]; else p.nu = g[i];
        dpc_mech_compare_row r;
        if (!direct(&p, part, &r)) continue;
        if (r.sensitivity * r.rmse < best) best = r.sensitivity * r.rmse, arg = g[i];
    }
    CHECK(row->value == arg, "%s: chose %g, the grid's argmin is %g", row->name, row->value, arg);
    CHECK(row->sensitivity * row->rmse == best, "%s: scaled RMSE is the grid's least", row->name);
}

static void check_setting(size_t n, size_t k, size_t b)
{
    dpc_mech_compare_params cp;
    dpc_mech_compare_params_init(&cp, n);
    cp.part.k = k;
    cp.part.b = b;
    dpc_mech_compare_row *rows = NULL;
    size_t nr = 0, failed = 99;
    dpc_error first, err;
    memset(&err, 0, sizeof err);
    CHECK_OK(dpc_mech_compare(&cp, &rows, &nr, &failed, &first, &err), &err);
    CHECK(nr == 10 && failed == 0, "n=%zu k=%zu: %zu rows, %zu failed", n, k, nr, failed);
    static const dpc_mech_kind kinds[] = {DPC_MECH_IDENTITY, DPC_MECH_NU,    DPC_MECH_NU,
                                          DPC_MECH_ANTIPGD,  DPC_MECH_LCGD,  DPC_MECH_BSR,
                                          DPC_MECH_BISR,     DPC_MECH_BLT,   DPC_MECH_TREE,
                                          DPC_MECH_TREE};
    for (size_t i = 0; rows && i < nr && i < 10; i++) {
        const dpc_mech_compare_row *row = &rows[i];
        CHECK(row->kind == kinds[i], "row %zu (%s): kind %d", i, row->name, (int)row->kind);
        dpc_mech_params p;
        dpc_mech_params_init(&p);
        p.kind = row->kind;
        p.steps = n;
        p.honaker = row->honaker;
        dpc_strategy *st = NULL;
        if (row->kind == DPC_MECH_NU) p.nu = row->value;
        if (row->kind == DPC_MECH_ANTIPGD) p.nu = row->value;
        if (row->kind == DPC_MECH_LCGD) p.lambda = row->value;
        if (row->kind == DPC_MECH_BSR || row->kind == DPC_MECH_BISR) {
            p.bands = (size_t)row->value;
            CHECK(p.bands == dpc_mech_default_bands(n, k, b), "%s: the default bands", row->name);
        }
        if (row->kind == DPC_MECH_BLT) {
            CHECK_OK(dpc_strategy_default_blt(&st, n, k, b, DPC_WORKLOAD_PREFIX, &err), &err);
            if (st) dpc_strategy_mech_params(st, &p);
            p.steps = n;
            CHECK(st && (double)p.nbuf == row->value, "%s: buffers of the default BLT", row->name);
        }
        dpc_mech_compare_row d;
        CHECK(direct(&p, &cp.part, &d), "%s evaluates directly", row->name);
        same_row(row, &d);
        dpc_strategy_free(st);
    }
    if (nr == 10) {
        CHECK(rows[1].value == 0, "row 2 is nu = 0");
        CHECK(rows[8].honaker == 0 && rows[9].honaker == 1, "binary, then Honaker tree");
        dpc_strategy_problem pb;
        dpc_strategy_problem_init(&pb, n);
        pb.participations = k;
        pb.min_sep = b;
        pb.objective = DPC_OBJECTIVE_MEAN;
        double nu = -1;
        dpc_strategy_loss l;
        CHECK_OK(dpc_strategy_best_nu(&pb, &nu, &l, &err), &err);
        CHECK(rows[2].value == nu, "best nu %g vs dpc_strategy_best_nu %g", rows[2].value, nu);
        char want[64];
        snprintf(want, sizeof want, "nu-DP-FTRL (nu=%.3g)", nu);
        CHECK(!strcmp(rows[2].name, want), "name %s", rows[2].name);
        check_grid(&rows[3], n, &cp.part);
        check_grid(&rows[4], n, &cp.part);
        CHECK(!strcmp(rows[0].name, "DP-SGD (identity)") && !strcmp(rows[9].name, "tree (Honaker)"),
              "names %s, %s", rows[0].name, rows[9].name);
    }
    dpc_mech_compare_free(rows);
}

typedef struct counter {
    double last, total;
    int calls, stop_at;
} counter;

static int count_fn(void *ctx, double done, double total)
{
    counter *c = ctx;
    c->calls++;
    c->last = done;
    c->total = total;
    return c->stop_at && c->calls >= c->stop_at;
}

static void check_progress_and_refusals(void)
{
    dpc_mech_compare_params cp;
    dpc_mech_compare_params_init(&cp, 40);
    counter c = {0};
    cp.progress.fn = count_fn;
    cp.progress.ctx = &c;
    dpc_mech_compare_row *rows = NULL;
    size_t nr = 0;
    dpc_error err;
    memset(&err, 0, sizeof err);
    CHECK_OK(dpc_mech_compare(&cp, &rows, &nr, NULL, NULL, &err), &err);
    CHECK(c.calls == DPC_MECH_COMPARE_EVALS && c.last == DPC_MECH_COMPARE_EVALS &&
              c.total == DPC_MECH_COMPARE_EVALS,
          "progress: %d calls, last %g of %g", c.calls, c.last, c.total);
    dpc_mech_compare_free(rows);
    c = (counter){.stop_at = 3};
    rows = (dpc_mech_compare_row *)&c; /* overwritten with NULL on every return */
    CHECK(dpc_mech_compare(&cp, &rows, &nr, NULL, NULL, &err) == DPC_E_CANCELLED && !rows &&
              nr == 0 && c.calls == 3,
          "cancel: %s, %d calls", err.msg, c.calls);

    /* n = 1: every row but the BLT; the failure named */
    dpc_mech_compare_params_init(&cp, 1);
    c = (counter){0};
    cp.progress.fn = count_fn;
    cp.progress.ctx = &c;
    size_t failed = 0;
    dpc_error first;
    CHECK_OK(dpc_mech_compare(&cp, &rows, &nr, &failed, &first, &err), &err);
    CHECK(nr == 9 && failed == 1 && !strcmp(first.field, "steps") &&
              strstr(first.msg, "BLT needs n >= 2"),
          "n = 1: %zu rows, %zu failed (%s: %s)", nr, failed, first.field, first.msg);
    CHECK(c.calls == DPC_MECH_COMPARE_EVALS && c.last == DPC_MECH_COMPARE_EVALS,
          "n = 1: the failed BLT counts in the progress (%d calls)", c.calls);
    for (size_t i = 0; rows && i < nr; i++)
        CHECK(rows[i].kind != DPC_MECH_BLT, "no BLT row at n = 1");
    dpc_mech_compare_free(rows);

    dpc_mech_compare_params_init(&cp, 0);
    CHECK(dpc_mech_compare(&cp, &rows, &nr, NULL, NULL, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "steps"),
          "steps 0 refused: %s", err.field);
    /* the pattern's ranges from the table, before any row is evaluated (no progress call) */
    dpc_mech_compare_params_init(&cp, 40);
    c.calls = 0;
    cp.progress.fn = count_fn;
    cp.progress.ctx = &c;
    cp.part.b = 0;
    CHECK(dpc_mech_compare(&cp, &rows, &nr, NULL, NULL, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "part.b") && strstr(err.msg, ">= 1") && c.calls == 0 && !rows,
          "part.b 0 refused up front: %s (%d calls)", err.msg, c.calls);
    cp.part.b = 1;
    cp.part.kind = (dpc_participation_kind)5;
    CHECK(dpc_mech_compare(&cp, &rows, &nr, NULL, NULL, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "part.kind") && c.calls == 0, "unknown pattern kind: %s",
          err.msg);
    dpc_mech_compare_params_init(&cp, 10);
    CHECK(dpc_mech_compare(NULL, &rows, &nr, NULL, NULL, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "p"), "NULL p: %s", err.field);
    CHECK(dpc_mech_compare(&cp, NULL, &nr, NULL, NULL, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "rows"), "NULL rows: %s", err.field);
    CHECK(dpc_mech_compare(&cp, &rows, NULL, NULL, NULL, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "count"), "NULL count: %s", err.field);
    size_t ng = 1;
    CHECK(dpc_mech_compare_grid(DPC_MECH_BSR, &ng) == NULL && ng == 0, "no grid for BSR");
    dpc_mech_compare_free(NULL);
}

/* The field table covers dpc_mech_compare_params and _init writes its defaults (the values it
 * wrote by hand before the table: steps = n, dpc_participation_init's pattern, no progress). */
static void test_field_table(void)
{
    dpc_error err = {0};
    const dpc_field_table *t = dpc_mech_compare_params_fields();
    CHECK(t && t->size == sizeof(dpc_mech_compare_params) && t->count == 3, "table of the struct");
    CHECK_OK(dpc_field_table_verify(t, &err), &err);
    dpc_mech_compare_params p;
    memset(&p, 0x5a, sizeof p);
    dpc_mech_compare_params_init(&p, 64);
    dpc_participation part;
    memset(&part, 0, sizeof part);
    dpc_participation_init(&part);
    CHECK(p.steps == 64 && !memcmp(&p.part, &part, sizeof part) && p.progress.fn == NULL &&
              p.progress.ctx == NULL, "defaults");
    CHECK_OK(dpc_field_check(t, &p, &err), &err);
    /* steps: the table's default 2000 and its limit 1e6 on the whole comparison */
    dpc_field_defaults(t, &p);
    CHECK(p.steps == 2000 && p.part.k == 1, "table defaults: steps %zu", p.steps);
    p.steps = 1000001;
    CHECK(dpc_field_check(t, &p, &err) == DPC_E_INVALID && !strcmp(err.field, "steps") &&
              strstr(err.msg, "1000000"), "steps 1e6 + 1 refused: %s", err.msg);
    dpc_mech_compare_row *rows = NULL;
    size_t nr = 7;
    CHECK(dpc_mech_compare(&p, &rows, &nr, NULL, NULL, &err) == DPC_E_INVALID && !rows &&
              nr == 0 && !strcmp(err.field, "steps"), "compare at 1e6 + 1 refused up front");
    p.steps = 1000000;
    CHECK_OK(dpc_field_check(t, &p, &err), &err);
    /* the second table's pattern: k = DPC_MECH_COMPARE_K, b = n / k, each kept when given */
    static const struct { size_t n, k, b, want_k, want_b; } mp[] = {
        {2000, 0, 0, 4, 500}, {600, 5, 0, 5, 120}, {10, 40, 0, 40, 1}, {3, 0, 0, 4, 1},
        {300, 7, 9, 7, 9},    {50, 0, 3, 4, 3}};
    for (size_t i = 0; i < sizeof mp / sizeof mp[0]; i++) {
        dpc_participation q = {DPC_PART_CYCLIC, mp[i].k, mp[i].b};
        dpc_mech_compare_multi_part(mp[i].n, &q);
        CHECK(q.kind == DPC_PART_MINSEP && q.k == mp[i].want_k && q.b == mp[i].want_b,
              "multi pattern n %zu k %zu b %zu: %zu, %zu", mp[i].n, mp[i].k, mp[i].b, q.k, q.b);
    }
    dpc_mech_compare_multi_part(10, NULL);
    const dpc_field *k = dpc_field_find(t, "part.k", NULL);
    CHECK(k && dpc_field_check_value(k, "part.", 0, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "part.k"), "part.k = 0 refused naming part.k: '%s'", err.msg);
}

int main(void)
{
    test_field_table();
    check_setting(64, 1, 1);
    check_setting(120, 3, 30);
    check_setting(50, 4, 1);
    check_progress_and_refusals();
    return TEST_SUMMARY();
}
