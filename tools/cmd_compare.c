/* cmd_compare.c — `dpcorr compare`: every mechanism side by side at n steps, single and
 * multiple participation. nu is shown at the library's search (dpc_strategy_best_nu, the same
 * answer as everywhere); BSR, BISR and BLT as the library makes them for a run of this n, k and
 * b (dpc_mech_default_bands, dpc_strategy_default_blt: what train gets); damping and lambda,
 * which no run picks by default, at the best of a small grid (the scaled RMSE, i.e. the error at
 * equal privacy). */
#include "cli.h"
#include "progress.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct row {
    char name[64];
    double sens, rmse, maxe;
    int exact;
    size_t state;
    int replay, anytime;
} row;

/* The comparison's state: the last library error and the progress (one step per mechanism
 * evaluated; each evaluation is bounded by the library's work limit). */
typedef struct cmp_run {
    dpc_error err;
    cli_progress pr;
    dpc_progress dp;
    double done;
    int failed; /* evaluations of the current table that failed (err: the first one) */
    size_t nbuf; /* buffers of the last default BLT */
} cmp_run;
/* evaluations of both tables: identity, nu = 0, the best nu (searched by the library), 6
 * dampings, 8 lambdas, BSR and BISR, BLT, 2 trees */
#define CMP_EVALS (2.0 * (1 + 1 + 1 + 6 + 8 + 2 + 1 + 2))

static int eval(const dpc_mech_params *p, const dpc_participation *part, row *r, cmp_run *c)
{
    dpc_error e = {0};
    c->done += 1.0;
    if (c->dp.fn) (void)c->dp.fn(c->dp.ctx, c->done, CMP_EVALS);
    dpc_mech *m = NULL;
    dpc_sensitivity sv;
    dpc_mech_error me;
    int ok = !dpc_mech_new(&m, p, &e) && !dpc_mech_sensitivity(m, part, &sv, &e) &&
             !dpc_mech_error_of(m, NULL, &me, &e);
    if (ok) {
        r->sens = sv.value;
        r->exact = sv.exact;
        r->rmse = me.rmse;
        r->maxe = me.max_error;
        r->state = dpc_mech_state_floats(m, DPC_NOISE_BUFFER);
        r->replay = dpc_mech_form_available(m, DPC_NOISE_REPLAY);
        r->anytime = dpc_mech_is_anytime(m);
    } else if (!c->failed++) {
        c->err = e; /* the first failure of the table is the one shown */
    }
    dpc_mech_free(m);
    return ok;
}

/* Evaluates *p with *field (a member of *p) set to each grid value; keeps the best scaled
 * RMSE. */
static int tune(dpc_mech_params *p, double *field, const double *grid, size_t ng,
                const dpc_participation *part, row *best, double *best_v, cmp_run *err)
{
    int found = 0;
    for (size_t i = 0; i < ng; i++) {
        *field = grid[i];
        row r;
        memset(&r, 0, sizeof r);
        if (!eval(p, part, &r, err)) continue;
        if (!found || r.sens * r.rmse < best->sens * best->rmse) {
            *best = r;
            *best_v = grid[i];
            found = 1;
        }
    }
    return found;
}

/* nu-DP-FTRL at the library's best nu for this problem (dpc_strategy_best_nu: the scaled RMSE,
 * k participations at min-separation b, prefix workload), evaluated as the other rows. */
static int best_nu(size_t n, const dpc_participation *part, row *r, double *nu, cmp_run *c)
{
    dpc_strategy_problem pb;
    dpc_strategy_problem_init(&pb, n);
    pb.participations = part->k;
    pb.min_sep = part->b;
    pb.objective = DPC_OBJECTIVE_MEAN;
    dpc_strategy_loss l;
    dpc_error e = {0};
    if (dpc_strategy_best_nu(&pb, nu, &l, &e)) {
        c->done += 1.0;
        if (!c->failed++) c->err = e;
        return 0;
    }
    dpc_mech_params p;
    dpc_mech_params_init(&p);
    p.kind = DPC_MECH_NU;
    p.steps = n;
    p.nu = *nu;
    return eval(&p, part, r, c);
}

/* The library's default BLT for this n, k and b (dpc_strategy_default_blt: what train and
 * account use for a BLT without theta and omega), evaluated as the other rows. */
static int default_blt(size_t n, const dpc_participation *part, row *r, cmp_run *c)
{
    dpc_strategy *st = NULL;
    dpc_error e = {0};
    if (n < 2 || dpc_strategy_default_blt(&st, n, part->k, part->b, DPC_WORKLOAD_PREFIX, &e)) {
        c->done += 1.0;
        if (n < 2) snprintf(e.msg, sizeof e.msg, "BLT needs n >= 2 steps");
        if (!c->failed++) c->err = e;
        return 0;
    }
    dpc_mech_params p;
    dpc_mech_params_init(&p);
    dpc_strategy_mech_params(st, &p);
    p.steps = n;
    c->nbuf = p.nbuf;
    int ok = eval(&p, part, r, c);
    dpc_strategy_free(st);
    return ok;
}

static void print_table(row *rows, size_t nr, const char *title, double sgd_loss)
{
    printf("\n%s\n", title);
    printf("%-30s %9s %9s %9s %11s %11s %7s %8s %7s\n", "mechanism", "sens", "rmse", "max_err",
           "scaled_rmse", "scaled_max", "state", "anytime", "vs SGD");
    for (size_t i = 0; i < nr; i++) {
        row *r = &rows[i];
        char st[16];
        snprintf(st, sizeof st, "%zu%s", r->state, r->replay && r->state ? "/0" : "");
        printf("%-30s %9.4g%s%9.4g %9.4g %11.4g %11.4g %7s %8s %6.3fx\n", r->name, r->sens,
               r->exact ? " " : "*", r->rmse, r->maxe, r->sens * r->rmse, r->sens * r->maxe, st,
               r->anytime ? "yes" : "no", (r->sens * r->rmse) * (r->sens * r->rmse) / sgd_loss);
    }
}

static int run_setting(size_t n, const dpc_participation *part, const char *title,
                       const opt_set *s, cmp_run *c)
{
    static const double damp[] = {1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 3e-1};
    static const double lams[] = {0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99};
    row rows[16];
    size_t nr = 0;
    cmp_run *err = c;
    dpc_mech_params p;
    double v = 0;

#define BASE(k)                                                                                    \
    dpc_mech_params_init(&p);                                                                      \
    p.kind = (k);                                                                                  \
    p.steps = n;
    BASE(DPC_MECH_IDENTITY);
    if (eval(&p, part, &rows[nr], err)) snprintf(rows[nr++].name, 64, "DP-SGD (identity)");
    BASE(DPC_MECH_NU);
    if (eval(&p, part, &rows[nr], err)) snprintf(rows[nr++].name, 64, "optimal CC (nu=0)");
    if (best_nu(n, part, &rows[nr], &v, err)) snprintf(rows[nr++].name, 64, "nu-DP-FTRL (nu=%.3g)", v);
    BASE(DPC_MECH_ANTIPGD);
    if (tune(&p, &p.nu, damp, 6, part, &rows[nr], &v, err))
        snprintf(rows[nr++].name, 64, "damped anti-PGD (nu=%g)", v);
    BASE(DPC_MECH_LCGD);
    if (tune(&p, &p.lambda, lams, 8, part, &rows[nr], &v, err))
        snprintf(rows[nr++].name, 64, "lambda-CGD (lambda=%g)", v);
    /* BSR, BISR and BLT as a run of this shape gets them from the library (train, account,
     * advise): the default bands and the default BLT for n, k and b, not a front end's grid */
    for (int kind = 0; kind < 2; kind++) {
        BASE(kind ? DPC_MECH_BISR : DPC_MECH_BSR);
        p.bands = dpc_mech_default_bands(n, part->k, part->b);
        if (eval(&p, part, &rows[nr], err))
            snprintf(rows[nr++].name, 64, "%s (bands=%zu)", kind ? "BISR" : "BSR", p.bands);
    }
    if (default_blt(n, part, &rows[nr], c)) snprintf(rows[nr++].name, 64, "BLT (%zu buffers)", c->nbuf);
    BASE(DPC_MECH_TREE);
    if (eval(&p, part, &rows[nr], err)) snprintf(rows[nr++].name, 64, "tree (binary)");
    BASE(DPC_MECH_TREE);
    p.honaker = 1;
    if (eval(&p, part, &rows[nr], err)) snprintf(rows[nr++].name, 64, "tree (Honaker)");
#undef BASE
    cli_progress_end(&c->pr);
    if (nr == 0) return opt_fail_lib(s, &c->err);
    double sgd = rows[0].sens * rows[0].rmse;
    print_table(rows, nr, title, sgd * sgd);
    if (c->failed) printf("(%d configurations not shown; the first: %s)\n", c->failed, c->err.msg);
    c->failed = 0;
    return 0;
}

static const opt_spec C_STEPS = {
    .name = "--steps", .metavar = "N", .type = OPT_UINT, .lo = 1, .hi = 1e6, .section = "options",
    .param = "steps", .help = "number of steps n, at most 1e6 (seconds; with many participations up to a minute, "
            "with progress) (default 2000)",
    .example = "--steps 300"};
static const opt_spec C_PARTICIPATIONS = {
    .name = "--participations", .metavar = "K", .type = OPT_UINT, .lo = 1, .hi = 1e6,
    .section = "options", .param = "part.k", .help = "participations of the second table (default 4)",
    .example = "--participations 3"};
static const opt_spec C_MIN_SEP = {
    .name = "--min-sep", .metavar = "B", .type = OPT_UINT, .lo = 1, .hi = 1e6, .section = "options",
    .param = "part.b", .help = "their minimum separation (default N/K)", .example = "--min-sep 7"};

static const opt_spec *const COMPARE_OPTS[] = {&C_STEPS, &C_PARTICIPATIONS, &C_MIN_SEP,
                                               &OPT_DRY_RUN, &OPT_HELP, NULL};

static const opt_cmd COMPARE_CMD = {
    .name = "compare",
    .usage = "dpcorr compare [--steps N] [--participations K] [--min-sep B]",
    .about = "Compares every mechanism at N steps: single participation, then K participations\n"
             "at min-separation B. Columns: sensitivity (* = upper bound), RMSE and max error of\n"
             "the prefix sums per unit noise, both times the sensitivity (error at equal\n"
             "privacy), generator state in floats per coordinate (buffer/replay), anytime, and\n"
             "the loss (scaled RMSE^2) relative to DP-SGD. nu is the library's best\n"
             "(dpc_strategy_best_nu); BSR, BISR and BLT are the library's defaults for this\n"
             "n, k and B (what train uses); damping and lambda the best of a grid.",
    .opts = COMPARE_OPTS,
    .minimal = "",
};

int cmd_compare(int argc, char **argv)
{
    opt_set s;
    int rc = opt_parse(&s, &COMPARE_CMD, argc, argv, 1, 0);
    if (rc || s.help) return rc;
    size_t n = opt_size(&s, &C_STEPS, 2000), k = opt_size(&s, &C_PARTICIPATIONS, 4);
    size_t b = opt_size(&s, &C_MIN_SEP, n / k ? n / k : 1);
    if ((rc = opt_finish(&s))) return rc;
    if (s.dry_run) {
        opt_dry_uint("steps", n);
        opt_dry_uint("part.k", k);
        opt_dry_uint("part.b", b);
        return 0;
    }
    double c0 = cli_now();
    printf("dpcorr %s: mechanism comparison at n = %zu steps (prefix-sum workload)\n",
           dpc_version(), n);
    fflush(stdout);
    cmp_run c;
    memset(&c, 0, sizeof c);
    c.dp = cli_progress_start(&c.pr, "dpcorr compare", "mechanism evaluations", 0);
    dpc_participation single = {DPC_PART_MINSEP, 1, 1};
    char title[160];
    snprintf(title, sizeof title, "== single participation (k = 1)");
    rc = run_setting(n, &single, title, &s, &c);
    if (rc) return rc;
    dpc_participation multi = {DPC_PART_MINSEP, k, b};
    snprintf(title, sizeof title, "== k = %zu participations, min-separation %zu", k, b);
    rc = run_setting(n, &multi, title, &s, &c);
    printf("\n(* = sensitivity is an upper bound; state a/b = floats per coordinate in the "
           "buffer/replay form; %.1f s)\n",
           cli_now() - c0);
    return rc;
}
