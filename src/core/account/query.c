/* query.c — one accounting question (dpc_account_query): the library's defaults for the
 * accountant, the neighbouring relation, the sampling and a mechanism's run, applied in one place
 * (dpc_account_query_resolve) for every front end, and the answer by the accounting functions
 * of this directory (dpc_account_query_solve). */
#include "account/acc_internal.h"

#include "field/field_def.h"
#include "mech/mech_internal.h"

#include <math.h>
#include <string.h>

#define QUERY_MAX_STEPS_DEFAULT 10000000u /* mode steps: the largest answer searched */

static const char *const mode_names[] = {"epsilon", "delta", "sigma", "steps", "convert"};

const char *dpc_account_mode_name(dpc_account_mode m)
{
    return (unsigned)m < sizeof mode_names / sizeof *mode_names ? mode_names[m] : "?";
}

/* The manual of dpc_account_query, one row per field in struct order (dpcorr/account.h). The
 * query range-checks through it every value of its own that the mode reads (check_values): the
 * question (sigma, steps, epsilon, delta, rho, mu, max_steps, balls_in_bins) and the choices; the
 * ranges are the limits of what answers them (a Gaussian's noise and sensitivity > 0, at most
 * DPC_ACCOUNT_MAX_COUNT compositions or steps, delta in (0, 1)), so a front end refuses a value
 * under the query's name before any work. The mechanism, the pattern and the accountant options
 * are checked where they are used (OWN_CHECK nested), under their own names. */
#define AQ(m) DPC_FIELD_AT(dpc_account_query, m)
#define NOT_GIVEN DPC_FIELD_UNSET_NAN
#define POS (DPC_FIELD_LO_OPEN | DPC_FIELD_HI_OPEN)
#define MAX_COUNT ((double)DPC_ACCOUNT_MAX_COUNT)
static const dpc_field query_fields[] = {
    {.name = "mode", .type = DPC_FIELD_ENUM, AQ(mode), .def = DPC_ACCOUNT_MODE_EPSILON,
     DPC_FIELD_NAMES(mode_names), .def_text = "the argument of dpc_account_query_init",
     .doc = "what the query solves for, the others of epsilon, delta, sigma, steps given "
            "(convert: a zCDP / GDP total)"},
    {.name = "sigma", .type = DPC_FIELD_DOUBLE, AQ(sigma), .def = NAN, .lo = 0, .hi = INFINITY,
     .flags = NOT_GIVEN | POS, .def_text = "not given",
     .doc = "noise multiplier z (with a mechanism: noise std per row of Z / (clip x "
            "column_norm(C)))"},
    {.name = "steps", .type = DPC_FIELD_SIZE, AQ(steps), .lo = 1, .hi = MAX_COUNT,
     .flags = DPC_FIELD_UNSET_ZERO, .def_text = "not given; mode convert: 1",
     .doc = "compositions; with a mechanism its n (0: not given; mode convert: 1)"},
    {.name = "epsilon", .type = DPC_FIELD_DOUBLE, AQ(epsilon), .def = NAN, .lo = 0,
     .hi = INFINITY, .flags = NOT_GIVEN | DPC_FIELD_HI_OPEN, .def_text = "not given",
     .doc = "the budget's epsilon (> 0 in modes sigma and steps)"},
    {.name = "delta", .type = DPC_FIELD_DOUBLE, AQ(delta), .def = NAN, .lo = 0, .hi = 1,
     .flags = NOT_GIVEN | POS, .def_text = "not given", .doc = "the budget's delta"},
    {.name = "rho", .type = DPC_FIELD_DOUBLE, AQ(rho), .def = NAN, .lo = 0, .hi = INFINITY,
     .flags = NOT_GIVEN | DPC_FIELD_HI_OPEN, .def_text = "not given",
     .doc = "mode convert: the zCDP total"},
    {.name = "mu", .type = DPC_FIELD_DOUBLE, AQ(mu), .def = NAN, .lo = 0, .hi = INFINITY,
     .flags = NOT_GIVEN | POS, .def_text = "not given", .doc = "mode convert: the GDP total"},
    {.name = "q", .type = DPC_FIELD_DOUBLE, AQ(q), .def = 1, .lo = 0, .hi = 1,
     .flags = DPC_FIELD_LO_OPEN, .doc = "sampling rate (1: no sampling)"},
    {.name = "sampling", .type = DPC_FIELD_INT, AQ(sampling), .def = DPC_ACCOUNT_AUTO, .lo = -1,
     .hi = DPC_SAMPLING_FIXED, .def_text = "auto: poisson when q < 1",
     .doc = "-1 (auto) or a dpc_sampling (0 none, 1 poisson, 2 fixed); read without a "
            "mechanism and with q < 1"},
    {.name = "neighbor", .type = DPC_FIELD_INT, AQ(neighbor), .def = DPC_ACCOUNT_AUTO, .lo = -1,
     .hi = DPC_NEIGHBOR_REPLACE_ONE,
     .def_text = "auto: zero-out with a mechanism, else add-remove",
     .doc = "-1 (auto) or a dpc_neighbor (0 add-remove, 1 zero-out, 2 replace-one)"},
    {.name = "sensitivity", .type = DPC_FIELD_DOUBLE, AQ(sensitivity), .def = 1, .lo = 0,
     .hi = INFINITY, .flags = POS,
     .doc = "L2 sensitivity under neighbor without a mechanism (only sigma / sensitivity "
            "matters)"},
    {.name = "accountant", .type = DPC_FIELD_INT, AQ(accountant), .def = DPC_ACCOUNT_AUTO,
     .lo = -1, .hi = DPC_ACCOUNTANT_GDP,
     .def_text = "auto: gdp for a mechanism's unsampled release, rdp for fixed batches, "
                 "else pld; mode convert: gdp when mu is given, else zcdp",
     .doc = "-1 (auto) or a dpc_accountant (0 rdp, 1 pld, 2 zcdp, 3 gdp)"},
    {.name = "opts", .type = DPC_FIELD_STRUCT, AQ(opts), .sub = &dpc__account_opts_table,
     .flags = DPC_FIELD_OWN_CHECK,
     .doc = "the accountant's options (opts.accountant set from accountant by resolve); "
            "checked by the accountant"},
    {.name = "max_steps", .type = DPC_FIELD_SIZE, AQ(max_steps), .lo = 1, .hi = MAX_COUNT,
     .flags = DPC_FIELD_UNSET_ZERO, .def_text = "10^7",
     .doc = "mode steps: the largest answer searched (0: 10^7)"},
    {.name = "with_mech", .type = DPC_FIELD_BOOL, AQ(with_mech),
     .doc = "1: the run is the mechanism mech; 0: Gaussian events"},
    {.name = "mech", .type = DPC_FIELD_STRUCT, AQ(mech), .sub = &dpc__mech_params_table,
     .flags = DPC_FIELD_OWN_CHECK,
     .doc = "the mechanism (mech.steps set from steps; arrays borrowed); checked by "
            "dpc_mech_new"},
    {.name = "part", .type = DPC_FIELD_STRUCT, AQ(part), .sub = &dpc__participation_table,
     .flags = DPC_FIELD_OWN_CHECK,
     .doc = "the mechanism's participation pattern; checked by its sensitivity (part.k)"},
    {.name = "balls_in_bins", .type = DPC_FIELD_SIZE, AQ(balls_in_bins), .lo = 1,
     .hi = MAX_COUNT, .flags = DPC_FIELD_UNSET_ZERO,
     .doc = "modes epsilon, sigma with a mechanism: B > 0 is balls-in-bins sampling, one step "
            "per period of B (q = 1); 0: none"},
    {.name = "part_used", .type = DPC_FIELD_BOOL, AQ(part_used), .flags = DPC_FIELD_DERIVED,
     .doc = "1: part is the run's pattern (a mechanism)"},
    {.name = "every_route", .type = DPC_FIELD_BOOL, AQ(every_route), .flags = DPC_FIELD_DERIVED,
     .doc = "1: a sampled or balls-in-bins mechanism run, accounted by the best route"},
};
#undef AQ
#undef NOT_GIVEN
#undef POS
#undef MAX_COUNT
static const dpc_field_table query_table = DPC_FIELD_TABLE(dpc_account_query, query_fields);

const dpc_field_table *dpc_account_query_fields(void) { return &query_table; }

void dpc_account_query_init(dpc_account_query *q, dpc_account_mode mode)
{
    if (!q) return;
    dpc_field_defaults(&query_table, q); /* NAN: not given; AUTO; the nested tables' defaults */
    q->mode = mode;
    q->opts.accountant = dpc_account_default_accountant();
}

static int mode_samples_routes(const dpc_account_query *q)
{
    return q->mode == DPC_ACCOUNT_MODE_EPSILON || q->mode == DPC_ACCOUNT_MODE_SIGMA;
}

/* A mechanism with q < 1 and no cyclic pattern, in modes epsilon and sigma: Poisson sampling at
 * every step (every route is tried); the participation pattern then has no say. */
static int poisson_every_step(const dpc_account_query *q)
{
    return q->with_mech && q->q < 1.0 && q->part.kind != DPC_PART_CYCLIC &&
           mode_samples_routes(q);
}

static int bins_of(const dpc_account_query *q)
{
    return q->with_mech && mode_samples_routes(q) && q->balls_in_bins > 0;
}

/* The pattern a mechanism's run of `steps` steps is accounted with. */
static dpc_participation run_part(const dpc_account_query *q, size_t steps)
{
    dpc_participation p = {DPC_PART_CYCLIC, steps, 1};
    if (bins_of(q)) { /* one step per period of B, ceil(n / B) periods */
        p.b = q->balls_in_bins;
        p.k = (steps + q->balls_in_bins - 1) / q->balls_in_bins;
        return p;
    }
    return poisson_every_step(q) ? p : q->part;
}

static dpc_sampling sampling_of(const dpc_account_query *q)
{
    if (q->with_mech || !(q->q < 1.0)) return DPC_SAMPLING_NONE; /* a mechanism's run says */
    return q->sampling == DPC_ACCOUNT_AUTO ? DPC_SAMPLING_POISSON : (dpc_sampling)q->sampling;
}

/* The default accountant: one Gaussian release (a mechanism without sampling) is accounted
 * exactly by GDP (as the trainer); fixed-size batches only by RDP; otherwise the library's. */
static dpc_accountant accountant_of(const dpc_account_query *q)
{
    if (q->accountant != DPC_ACCOUNT_AUTO) return (dpc_accountant)q->accountant;
    if (q->mode == DPC_ACCOUNT_MODE_CONVERT)
        return isnan(q->mu) ? DPC_ACCOUNTANT_ZCDP : DPC_ACCOUNTANT_GDP;
    if (q->with_mech && q->q == 1.0 && !bins_of(q)) return DPC_ACCOUNTANT_GDP;
    if (sampling_of(q) == DPC_SAMPLING_FIXED) return DPC_ACCOUNTANT_RDP;
    return dpc_account_default_accountant();
}

int dpc_account_query_uses(const dpc_account_query *q, const char *f)
{
    if (!q || !f) return 0;
    dpc_accountant acc = accountant_of(q);
    dpc_account_mode m = q->mode;
    if (m == DPC_ACCOUNT_MODE_CONVERT) /* no event: the totals and the budget */
        return !strcmp(f, "steps") || !strcmp(f, "epsilon") || !strcmp(f, "delta") ||
               !strcmp(f, "rho") || !strcmp(f, "mu") ||
               (!strcmp(f, "zcdp_conv") && acc == DPC_ACCOUNTANT_ZCDP);
    if (!strcmp(f, "sigma")) return m != DPC_ACCOUNT_MODE_SIGMA;
    if (!strcmp(f, "steps")) return m != DPC_ACCOUNT_MODE_STEPS;
    if (!strcmp(f, "epsilon")) return m != DPC_ACCOUNT_MODE_EPSILON;
    if (!strcmp(f, "delta")) return m != DPC_ACCOUNT_MODE_DELTA;
    if (!strcmp(f, "max_steps")) return m == DPC_ACCOUNT_MODE_STEPS;
    if (!strcmp(f, "sampling")) return !q->with_mech && q->q < 1.0;
    if (!strcmp(f, "sensitivity")) return !q->with_mech;
    if (!strcmp(f, "balls_in_bins")) return q->with_mech && mode_samples_routes(q);
    if (!strcmp(f, "bib_monte_carlo")) return bins_of(q);
    if (!strcmp(f, "part")) return q->with_mech && !bins_of(q) && !poisson_every_step(q);
    if (!strcmp(f, "orders") || !strcmp(f, "rdp_refine")) return acc == DPC_ACCOUNTANT_RDP;
    if (!strcmp(f, "pld_interval") || !strcmp(f, "pld_tail") || !strcmp(f, "pld_disc"))
        return acc == DPC_ACCOUNTANT_PLD;
    if (!strcmp(f, "zcdp_conv")) return acc == DPC_ACCOUNTANT_ZCDP;
    return 0;
}

/* What mode q->mode needs: each given value, epsilon > 0 where it is a budget. */
static dpc_status check_required(const dpc_account_query *q, dpc_error *err)
{
    const char *mode = dpc_account_mode_name(q->mode);
    if (q->mode != DPC_ACCOUNT_MODE_STEPS && q->steps == 0)
        return dpc_error_param(err, DPC_E_INVALID, "steps", "required in mode %s", mode);
    if (q->mode != DPC_ACCOUNT_MODE_SIGMA && isnan(q->sigma))
        return dpc_error_param(err, DPC_E_INVALID, "sigma", "required in mode %s", mode);
    if (q->mode != DPC_ACCOUNT_MODE_DELTA && isnan(q->delta))
        return dpc_error_param(err, DPC_E_INVALID, "delta", "required in mode %s", mode);
    if (q->mode != DPC_ACCOUNT_MODE_EPSILON && isnan(q->epsilon))
        return dpc_error_param(err, DPC_E_INVALID, "epsilon", "required in mode %s", mode);
    if ((q->mode == DPC_ACCOUNT_MODE_SIGMA || q->mode == DPC_ACCOUNT_MODE_STEPS) &&
        !(q->epsilon > 0.0))
        return dpc_error_param(err, DPC_E_INVALID, "epsilon", "must be > 0 for mode %s", mode);
    return DPC_OK;
}

/* The table's range of each field in `names` that q's mode reads (all = 1: every one). */
static dpc_status check_rows(const dpc_account_query *q, const char *const *names, size_t n,
                             int all, dpc_error *err)
{
    for (size_t i = 0; i < n; i++) {
        if (!all && !dpc_account_query_uses(q, names[i])) continue;
        const dpc_field *f = dpc_field_find(&query_table, names[i], NULL);
        dpc_status st = dpc_field_check_value(f, "", dpc_field_get(f, q), err);
        if (st) return st;
    }
    return DPC_OK;
}

/* The question's values the mode reads (the event's, the budget, the search's bound). */
static const char *const value_rows[] = {"sigma",       "steps",     "epsilon",      "delta",
                                         "rho",         "mu",        "sensitivity", "max_steps",
                                         "balls_in_bins"};
#define NVALUE_ROWS (sizeof value_rows / sizeof *value_rows)

/* The enums and the fields only some configurations allow. */
static dpc_status check_choices(const dpc_account_query *q, dpc_error *err)
{
    static const char *const own[] = {"mode", "q", "accountant", "neighbor", "sampling"};
    dpc_status st = check_rows(q, own, sizeof own / sizeof *own, 1, err);
    if (!st) st = check_rows(q, value_rows, NVALUE_ROWS, 0, err);
    if (st) return st;
    if (q->with_mech && q->sampling == DPC_SAMPLING_FIXED)
        return dpc_error_param(err, DPC_E_INVALID, "sampling",
                               "mechanisms are amplified by (cyclic) Poisson sampling only");
    if (!q->with_mech && q->q < 1.0 && q->sampling == DPC_SAMPLING_NONE)
        return dpc_error_param(err, DPC_E_INVALID, "sampling",
                               "expected poisson or fixed (q = 1 means no sampling)");
    if (q->balls_in_bins && !dpc_account_query_uses(q, "balls_in_bins"))
        return dpc_error_param(err, DPC_E_INVALID, "balls_in_bins",
                               "not used by this configuration (a mechanism in mode epsilon or "
                               "sigma)");
    if (bins_of(q) && q->q < 1.0)
        return dpc_error_param(err, DPC_E_INVALID, "balls_in_bins",
                               "balls-in-bins sampling needs q = 1, got %g", q->q);
    return DPC_OK;
}

/* Mode convert: a zCDP or GDP total and the budget; no event. */
static dpc_status resolve_convert(dpc_account_query *q, dpc_error *err)
{
    if (q->accountant != DPC_ACCOUNT_AUTO && q->accountant != DPC_ACCOUNTANT_ZCDP &&
        q->accountant != DPC_ACCOUNTANT_GDP)
        return dpc_error_param(err, DPC_E_INVALID, "accountant",
                               "mode convert converts zcdp or gdp totals");
    dpc_status st = check_rows(q, value_rows, NVALUE_ROWS, 0, err);
    if (st) return st;
    q->accountant = (int)accountant_of(q);
    q->opts.accountant = (dpc_accountant)q->accountant;
    if (!q->steps) q->steps = 1;
    int zcdp = q->accountant == DPC_ACCOUNTANT_ZCDP;
    int has_eps = !isnan(q->epsilon), has_delta = !isnan(q->delta);
    if (!isnan(zcdp ? q->rho : q->mu) && has_eps == has_delta)
        return dpc_error_param(err, DPC_E_INVALID, zcdp ? "rho" : "mu",
                               "give exactly one of delta and epsilon");
    if (isnan(zcdp ? q->rho : q->mu) && !(has_eps && has_delta))
        return dpc_error_param(err, DPC_E_INVALID, zcdp ? "rho" : "mu",
                               "give it, or both epsilon and delta");
    return DPC_OK;
}

dpc_status dpc_account_query_resolve(dpc_account_query *q, dpc_error *err)
{
    if (!q) return dpc_error_set(err, DPC_E_INVALID, "query is NULL");
    if (q->mode == DPC_ACCOUNT_MODE_CONVERT) return resolve_convert(q, err);
    dpc_status st = check_choices(q, err);
    if (!st) st = check_required(q, err);
    if (st) return st;
    q->sampling = (int)sampling_of(q);
    q->accountant = (int)accountant_of(q);
    q->opts.accountant = (dpc_accountant)q->accountant;
    if (q->neighbor == DPC_ACCOUNT_AUTO)
        q->neighbor = q->with_mech ? DPC_NEIGHBOR_ZERO_OUT : DPC_NEIGHBOR_ADD_REMOVE;
    if (q->mode == DPC_ACCOUNT_MODE_SIGMA) q->sigma = 1.0; /* the unit event calibrations scale */
    if (q->mode == DPC_ACCOUNT_MODE_STEPS && q->max_steps == 0)
        q->max_steps = QUERY_MAX_STEPS_DEFAULT;
    if (!bins_of(q)) q->balls_in_bins = 0;
    if (!q->with_mech) {
        q->part_used = q->every_route = 0;
        return DPC_OK;
    }
    q->sensitivity = 1.0; /* a mechanism has its own */
    q->part_used = dpc_account_query_uses(q, "part");
    q->every_route = q->q < 1.0 || bins_of(q);
    /* mode steps validates the kind at n = 1 (the search rebuilds it for every n) */
    q->mech.steps = q->mode == DPC_ACCOUNT_MODE_STEPS ? 1 : q->steps;
    if ((q->mech.kind == DPC_MECH_BSR || q->mech.kind == DPC_MECH_BISR) && !q->mech.bands) {
        if (q->mode == DPC_ACCOUNT_MODE_STEPS) /* the bands would change with every candidate n */
            return dpc_error_param(err, DPC_E_INVALID, "mech.bands",
                                   "must be given with mode steps");
        dpc_participation part = run_part(q, q->steps);
        q->mech.bands = dpc_mech_default_bands(q->steps, part.k, part.b); /* as the trainer */
    }
    return DPC_OK;
}

/* ---- solve --------------------------------------------------------------------------------- */

/* The Gaussian event of the query without a mechanism (one component). */
static dpc_gauss_event plain_event(const dpc_account_query *q, size_t steps, double sigma)
{
    dpc_gauss_event ev;
    dpc_gauss_event_init(&ev);
    ev.sigma = sigma;
    ev.sensitivity = q->sensitivity;
    ev.sampling = (dpc_sampling)q->sampling;
    ev.q = q->q;
    ev.count = steps;
    return ev;
}

/* The mechanism of `steps` steps (the caller frees it). */
static dpc_status mech_at(const dpc_account_query *q, size_t steps, dpc_mech **m, dpc_error *err)
{
    dpc_mech_params p = q->mech;
    p.steps = steps;
    return dpc_mech_new(m, &p, err);
}

/* The event of the run at (steps, sigma): plain, or a mechanism's by dpc_account_mech_event
 * (its info into out). */
static dpc_status build_event(const dpc_account_query *q, size_t steps, double sigma,
                              dpc_gauss_event *ev, dpc_account_solution *out, dpc_error *err)
{
    out->have_info = 0;
    if (!q->with_mech) {
        *ev = plain_event(q, steps, sigma);
        return DPC_OK;
    }
    dpc_mech *m = NULL;
    dpc_status st = mech_at(q, steps, &m, err);
    if (!st) st = dpc_account_mech_event(m, &q->part, sigma, q->q, ev, &out->info, err);
    dpc_mech_free(m);
    out->have_info = st == DPC_OK;
    return st;
}

/* Epsilon at delta of the run at (steps, sigma): every route, or the event's accountant. */
static dpc_status solve_epsilon(const dpc_account_query *q, size_t steps, double sigma,
                                dpc_account_solution *out, dpc_error *err)
{
    if (q->every_route) { /* whole run, banded MF, MMCC, balls in bins */
        dpc_mech *m = NULL;
        dpc_status st = mech_at(q, steps, &m, err);
        dpc_mech_run run = {m, run_part(q, steps), q->q, q->balls_in_bins > 0, NULL, 0};
        if (!st)
            st = dpc_account_mech_epsilon(&run, sigma, &out->opts, q->delta, &out->result,
                                          &out->info, err);
        dpc_mech_free(m);
        out->have_info = st == DPC_OK;
        return st;
    }
    dpc_gauss_event g;
    dpc_status st = build_event(q, steps, sigma, &g, out, err);
    if (st) return st;
    dpc_event ev = {(dpc_neighbor)q->neighbor, 1, &g};
    return dpc_account_epsilon(&ev, &out->opts, q->delta, &out->result, err);
}

/* The noise multiplier for the budget (mode sigma). */
static dpc_status solve_sigma(const dpc_account_query *q, dpc_account_solution *out,
                              dpc_error *err)
{
    if (q->with_mech) {
        dpc_mech *m = NULL;
        dpc_status st = mech_at(q, q->steps, &m, err);
        dpc_mech_run run = {m, run_part(q, q->steps), q->q, q->balls_in_bins > 0, NULL, 0};
        if (!st && q->every_route)
            st = dpc_account_mech_calibrate_run(&run, &out->opts, q->epsilon, q->delta,
                                                &out->sigma, NULL, err);
        else if (!st)
            st = dpc_account_mech_calibrate(m, &q->part, q->q, &out->opts, q->epsilon, q->delta,
                                            &out->sigma, NULL, NULL, err);
        dpc_mech_free(m);
        return st;
    }
    dpc_gauss_event g = plain_event(q, q->steps, 1.0);
    dpc_event ev = {(dpc_neighbor)q->neighbor, 1, &g};
    return dpc_account_calibrate_sigma(&ev, &out->opts, q->epsilon, q->delta, &out->sigma, err);
}

/* The largest number of steps for the budget (mode steps). */
static dpc_status solve_steps(const dpc_account_query *q, dpc_account_solution *out,
                              dpc_error *err)
{
    if (q->with_mech)
        return dpc_account_mech_steps(&q->mech, &q->part, q->sigma, q->q, &out->opts, q->epsilon,
                                      q->delta, q->max_steps, &out->steps, err);
    dpc_gauss_event g = plain_event(q, 1, q->sigma);
    dpc_event ev = {(dpc_neighbor)q->neighbor, 1, &g};
    return dpc_account_calibrate_steps(&ev, 0, &out->opts, q->epsilon, q->delta, q->max_steps,
                                       &out->steps, err);
}

/* Mode convert: the other of epsilon and delta, or the total; the noise multiplier of `steps`
 * composed Gaussians with that total. */
static dpc_status solve_convert(const dpc_account_query *q, dpc_account_solution *out,
                                dpc_error *err)
{
    dpc_account_result *r = &out->result;
    *r = (dpc_account_result){NAN, NAN, NAN, NAN, NAN, 1};
    int zcdp = q->accountant == DPC_ACCOUNTANT_ZCDP;
    dpc_zcdp_conv conv = q->opts.zcdp_conv;
    double total = zcdp ? q->rho : q->mu;
    dpc_status st;
    if (!isnan(total)) {
        *(zcdp ? &r->rho : &r->mu) = total;
        if (!isnan(q->delta)) {
            r->delta = q->delta;
            st = zcdp ? dpc_zcdp_epsilon(total, q->delta, conv, &r->epsilon, NULL, err)
                      : dpc_gdp_epsilon(total, q->delta, &r->epsilon, err);
        } else {
            r->epsilon = q->epsilon;
            st = zcdp ? dpc_zcdp_delta(total, q->epsilon, conv, &r->delta, err)
                      : dpc_gdp_delta(total, q->epsilon, &r->delta, err);
        }
    } else {
        r->epsilon = q->epsilon;
        r->delta = q->delta;
        st = zcdp ? dpc_zcdp_rho_for(q->epsilon, q->delta, conv, &r->rho, err)
                  : dpc_gdp_mu_for(q->epsilon, q->delta, &r->mu, err);
    }
    if (st) return st;
    return zcdp ? dpc_zcdp_sigma_for(r->rho, q->steps, &out->sigma, err)
                : dpc_gdp_sigma_for(r->mu, q->steps, &out->sigma, err);
}

dpc_status dpc_account_query_solve(const dpc_account_query *query, dpc_account_solution *out,
                                   dpc_error *err)
{
    if (!query || !out) return dpc_error_set(err, DPC_E_INVALID, "query and out are required");
    memset(out, 0, sizeof *out);
    dpc_account_query q = *query;
    dpc_status st = dpc_account_query_resolve(&q, err);
    if (st) return st;
    out->opts = q.opts;
    out->sigma = q.sigma;
    out->steps = q.steps;
    if (q.mode == DPC_ACCOUNT_MODE_CONVERT) return solve_convert(&q, out, err);
    switch (q.mode) {
    case DPC_ACCOUNT_MODE_DELTA: {
        dpc_gauss_event g;
        st = build_event(&q, q.steps, q.sigma, &g, out, err);
        dpc_event ev = {(dpc_neighbor)q.neighbor, 1, &g};
        if (!st) st = dpc_account_delta(&ev, &out->opts, q.epsilon, &out->result, err);
        break;
    }
    case DPC_ACCOUNT_MODE_SIGMA:
        st = solve_sigma(&q, out, err);
        dpc_account_opts_for_target(&out->opts, q.epsilon); /* report on the calibration's grid */
        break;
    case DPC_ACCOUNT_MODE_STEPS: st = solve_steps(&q, out, err); break;
    default: break;
    }
    if (!st && q.mode != DPC_ACCOUNT_MODE_DELTA)
        st = solve_epsilon(&q, out->steps, out->sigma, out, err);
    if (q.with_mech) out->part = run_part(&q, out->steps);
    return st;
}
