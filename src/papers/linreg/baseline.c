/* baseline.c — the baselines of a DP-AMBSSGD or DP-SSGD run (dpc_linreg_baseline): what each
 * runs is decided from the run's options and plan, so every front end compares the same. */
#include "common/util.h"
#include "linreg/linreg_internal.h"

#include <math.h>
#include <string.h>

const char *dpc_linreg_baseline_name(dpc_linreg_baseline_kind k)
{
    static const char *const names[DPC_LINREG_NBASELINES] = {"dp-sgd-fixed", "sgd", "ssp", "ols"};
    return (unsigned)k < DPC_LINREG_NBASELINES ? names[k] : "unknown";
}

dpc_status dpc_linreg_baselines_parse(const char *list, unsigned *mask, dpc_error *err)
{
    static const char *const words[DPC_LINREG_NBASELINES] = {"fixed", "sgd", "ssp", "ols"};
    *mask = 0;
    if (!list) return dpc_error_param(err, DPC_E_INVALID, "baselines", "NULL");
    if (!strcmp(list, "none")) return DPC_OK;
    if (!strcmp(list, "all")) {
        *mask = (1u << DPC_LINREG_NBASELINES) - 1;
        return DPC_OK;
    }
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ","), k = 0;
        if (n == 0) { /* empty items ("fixed,,ols", a trailing comma) are skipped */
            p++;
            continue;
        }
        while (k < DPC_LINREG_NBASELINES && (strlen(words[k]) != n || strncmp(p, words[k], n)))
            k++;
        if (k == DPC_LINREG_NBASELINES)
            return dpc_error_param(err, DPC_E_INVALID, "baselines", "unknown baseline '%.*s' "
                                   "(fixed, sgd, ssp, ols, all, none)", (int)n, p);
        *mask |= 1u << k;
        p += n + (p[n] == ',');
    }
    return DPC_OK;
}

/* The fixed-clip DP-SGD or the non-private SGD baseline (the same layout as the run). */
static dpc_status sgd_baseline(const dpc_dataset *train, const dpc_linreg_opts *opts,
                               const dpc_linreg_plan *P, int fixed, const dpc_rng *rng,
                               double *w, dpc_linreg_baseline_info *bi, dpc_error *err)
{
    dpc_linreg_opts o = *opts;
    o.algo = fixed ? DPC_LINREG_FIXED : DPC_LINREG_SGD;
    o.steps = P->algo == DPC_LINREG_SSGD ? 0 : P->steps;
    o.stat_batch = 0;
    o.eta = 0; /* the baseline's own default step (opts->clip applies to it) */
    dpc_linreg *lr = NULL;
    dpc_status st = dpc_linreg_new(&lr, train, &o, rng, err);
    if (!st) st = dpc_linreg_run(lr, NULL, err);
    if (!st) st = dpc_linreg_average(lr, w, err);
    if (!st) {
        const dpc_linreg_plan *Q = dpc_linreg_plan_get(lr);
        bi->epsilon = Q->ledger.epsilon;
        bi->steps = Q->steps;
        bi->batch = Q->batch;
    }
    dpc_linreg_free(lr);
    return st;
}

static dpc_status ssp_baseline(const dpc_dataset *train, const dpc_linreg_opts *opts,
                               const dpc_linreg_plan *P, double x_bound, double y_bound,
                               const dpc_rng *rng, double *w, dpc_linreg_baseline_info *bi,
                               dpc_error *err)
{
    dpc_linreg_ssp_opts so = {.epsilon = opts->epsilon, .delta = opts->delta,
                              .x_bound = x_bound, .y_bound = y_bound, .stream = opts->stream,
                              .allow_large_delta = opts->allow_large_delta};
    if (so.epsilon == 0) so.epsilon = P->ledger.epsilon;
    dpc_linreg_ssp_bounds(&so, &P->prior, train->n);
    dpc_linreg_ssp_info si;
    dpc_status st = dpc_linreg_ssp(train, &so, rng, w, &si, err);
    bi->epsilon = st ? NAN : si.epsilon;
    bi->x_bound = so.x_bound;
    bi->y_bound = so.y_bound;
    bi->ridge = st ? NAN : si.ridge;
    return st;
}

dpc_status dpc_linreg_baseline(const dpc_dataset *train, const dpc_linreg_opts *opts,
                               const dpc_linreg_plan *plan, dpc_linreg_baseline_kind k,
                               double ssp_x_bound, double ssp_y_bound, const dpc_rng *rng,
                               double *w, dpc_linreg_baseline_info *info, dpc_error *err)
{
    dpc_linreg_baseline_info bi;
    memset(&bi, 0, sizeof bi);
    bi.ridge = NAN;
    if (!train || !opts || !plan || !rng || !w)
        return dpc_error_set(err, DPC_E_INVALID, "baseline: NULL argument");
    dpc_status st;
    switch (k) {
    case DPC_LINREG_BASELINE_FIXED:
    case DPC_LINREG_BASELINE_SGD:
        st = sgd_baseline(train, opts, plan, k == DPC_LINREG_BASELINE_FIXED, rng, w, &bi, err);
        break;
    case DPC_LINREG_BASELINE_SSP:
        st = ssp_baseline(train, opts, plan, ssp_x_bound, ssp_y_bound, rng, w, &bi, err);
        break;
    case DPC_LINREG_BASELINE_OLS:
        st = dpc_linreg_ols(train, w, err);
        bi.epsilon = INFINITY;
        break;
    default:
        return dpc_error_param(err, DPC_E_INVALID, "kind", "unknown baseline %d", (int)k);
    }
    if (info) *info = bi;
    return st;
}
