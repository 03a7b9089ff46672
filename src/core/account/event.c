/* event.c — events (compositions of subsampled Gaussians), their validation against each
 * accountant's support, and the accountant front end: epsilon(delta) and delta(epsilon). */
#include "account/acc_internal.h"

#include "account/acc_math.h"
#include "common/util.h"
#include "field/field_def.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== Names ================================================================================= */

static const char *const neighbor_names[] = {"add-remove", "zero-out", "replace-one"};
static const char *const sampling_names[] = {"none", "poisson", "fixed"};
static const char *const accountant_names[] = {"rdp", "pld", "zcdp", "gdp"};
static const char *const disc_names[] = {"connect-dots", "round-up", "round-down"};

#define NAME_OF(tab, v)                                                                            \
    ((unsigned)(v) < sizeof tab / sizeof tab[0] ? tab[(unsigned)(v)] : "unknown")

const char *dpc_neighbor_name(dpc_neighbor r) { return NAME_OF(neighbor_names, r); }
const char *dpc_sampling_name(dpc_sampling s) { return NAME_OF(sampling_names, s); }
const char *dpc_accountant_name(dpc_accountant a) { return NAME_OF(accountant_names, a); }
const char *dpc_pld_disc_name(dpc_pld_disc d) { return NAME_OF(disc_names, d); }

static dpc_status parse_name(const char *s, const char *const *tab, size_t n, int *out,
                             const char *what, dpc_error *err)
{
    if (s)
        for (size_t i = 0; i < n; i++)
            if (strcmp(s, tab[i]) == 0) {
                *out = (int)i;
                return DPC_OK;
            }
    char list[160] = "";
    for (size_t i = 0; i < n; i++) {
        strncat(list, tab[i], sizeof list - strlen(list) - 1);
        if (i + 1 < n) strncat(list, ", ", sizeof list - strlen(list) - 1);
    }
    return dpc_error_param(err, DPC_E_INVALID, what, "expected one of %s, got '%s'", list,
                           s ? s : "(null)");
}

#define PARSER(fn, type, tab, what)                                                            \
    dpc_status fn(const char *s, type *out, dpc_error *err)                                    \
    {                                                                                          \
        int v;                                                                                 \
        dpc_status st = parse_name(s, tab, sizeof tab / sizeof tab[0], &v, what, err);         \
        if (st == DPC_OK && out) *out = (type)v;                                               \
        return st;                                                                             \
    }
PARSER(dpc_neighbor_parse, dpc_neighbor, neighbor_names, "neighbor")
PARSER(dpc_sampling_parse, dpc_sampling, sampling_names, "sampling")
PARSER(dpc_accountant_parse, dpc_accountant, accountant_names, "accountant")
PARSER(dpc_pld_disc_parse, dpc_pld_disc, disc_names, "discretization")

/* ==== Defaults ============================================================================== */

/* The manual of dpc_gauss_event, one row per field in struct order (dpcorr/account.h). */
#define GE(m) DPC_FIELD_AT(dpc_gauss_event, m)
static const dpc_field ge_fields[] = {
    {.name = "sigma", .type = DPC_FIELD_DOUBLE, GE(sigma), .def = 1, .lo = 0, .hi = INFINITY,
     .flags = DPC_FIELD_LO_OPEN | DPC_FIELD_HI_OPEN, .doc = "noise standard deviation"},
    {.name = "sensitivity", .type = DPC_FIELD_DOUBLE, GE(sensitivity), .def = 1, .lo = 0,
     .hi = INFINITY, .flags = DPC_FIELD_LO_OPEN | DPC_FIELD_HI_OPEN,
     .doc = "L2 sensitivity under the event's relation (at most 1e150)"},
    {.name = "sampling", .type = DPC_FIELD_ENUM, GE(sampling), .def = DPC_SAMPLING_NONE,
     DPC_FIELD_NAMES(sampling_names),
     .doc = "none, poisson (rate q) or fixed (a batch of q n records)"},
    {.name = "q", .type = DPC_FIELD_DOUBLE, GE(q), .def = 1, .lo = 0, .hi = 1,
     .flags = DPC_FIELD_LO_OPEN, .doc = "sampling rate (ignored for none)"},
    {.name = "count", .type = DPC_FIELD_SIZE, GE(count), .def = 1, .lo = 1,
     .hi = (double)DPC_ACCOUNT_MAX_COUNT, .doc = "(adaptive) compositions, at most 2^40"},
};
#undef GE
static const dpc_field_table ge_table = DPC_FIELD_TABLE(dpc_gauss_event, ge_fields);

const dpc_field_table *dpc_gauss_event_fields(void) { return &ge_table; }

/* The manual of dpc_event: dpc_event_check range-checks neighbor and nparts through it. */
#define EV(m) DPC_FIELD_AT(dpc_event, m)
static const dpc_field ev_fields[] = {
    {.name = "neighbor", .type = DPC_FIELD_ENUM, EV(neighbor), .def = DPC_NEIGHBOR_ADD_REMOVE,
     DPC_FIELD_NAMES(neighbor_names),
     .doc = "the neighbouring relation of every component: add-remove, zero-out or replace-one"},
    {.name = "nparts", .type = DPC_FIELD_SIZE, EV(nparts), .lo = 1, .hi = INFINITY,
     .flags = DPC_FIELD_HI_OPEN | DPC_FIELD_UNSET_ZERO, .def_text = "must be set",
     .doc = "the number of components composed (0: must be set)"},
    {.name = "parts", .type = DPC_FIELD_POINTER, EV(parts),
     .doc = "(nparts) dpc_gauss_event components, borrowed"},
};
#undef EV
static const dpc_field_table ev_table = DPC_FIELD_TABLE(dpc_event, ev_fields);

const dpc_field_table *dpc_event_fields(void) { return &ev_table; }

void dpc_gauss_event_init(dpc_gauss_event *e)
{
    if (!e) return;
    dpc_field_defaults(&ge_table, e);
}

/* The manual of dpc_account_opts, one row per field in struct order (dpcorr/account.h). A
 * field applies to the accountant its doc names, and check_opts range-checks exactly those. */
#define AO(m) DPC_FIELD_AT(dpc_account_opts, m)
static const char *const zcdp_conv_names[] = {"tight", "bun-steinke"};
static const dpc_field ao_fields[] = {
    {.name = "accountant", .type = DPC_FIELD_ENUM, AO(accountant), .def = DPC_ACCOUNTANT_PLD,
     DPC_FIELD_NAMES(accountant_names), .def_text = "the argument of dpc_account_opts_init",
     .doc = "rdp, pld, zcdp or gdp"},
    {.name = "orders", .type = DPC_FIELD_POINTER, AO(orders), .lo = 1, .hi = DPC__MAX_ORDER,
     .flags = DPC_FIELD_LO_OPEN, .def_text = "dpc_rdp_default_orders (144, 1.05 to 4096)",
     .doc = "rdp: (norders) orders, each in the range (borrowed); NULL: dpc_rdp_default_orders"},
    {.name = "norders", .type = DPC_FIELD_SIZE, AO(norders), .flags = DPC_FIELD_NO_RANGE,
     .doc = "rdp: the number of orders given"},
    {.name = "rdp_refine", .type = DPC_FIELD_BOOL, AO(rdp_refine),
     .doc = "rdp: 1 refines the best grid order by a continuous 1-D search"},
    /* at most 1: a coarser grid resolves no budget worth accounting (a step of 1e308 answers
     * "even one step exceeds" whatever the noise); the calibrations' coarse grids and
     * dpc_account_opts_for_target stay within it */
    {.name = "pld_interval", .type = DPC_FIELD_DOUBLE, AO(pld_interval), .def = 1e-4, .lo = 0,
     .hi = 1, .flags = DPC_FIELD_LO_OPEN,
     .doc = "pld: loss grid step h (enlarged when a composition needs more than 2^24 points)"},
    {.name = "pld_tail", .type = DPC_FIELD_DOUBLE, AO(pld_tail), .def = 1e-15, .lo = 0,
     .hi = 1e-3, .flags = DPC_FIELD_LO_OPEN,
     .doc = "pld: mass truncated at each end per composition (the upper part goes to +inf)"},
    {.name = "pld_disc", .type = DPC_FIELD_ENUM, AO(pld_disc), .def = DPC_PLD_CONNECT_DOTS,
     DPC_FIELD_NAMES(disc_names), .doc = "pld: connect-dots, round-up or round-down"},
    {.name = "zcdp_conv", .type = DPC_FIELD_ENUM, AO(zcdp_conv), .def = DPC_ZCDP_TIGHT,
     DPC_FIELD_NAMES(zcdp_conv_names),
     .doc = "zcdp: the conversion to (eps, delta): tight (CKS 2020) or bun-steinke"},
    {.name = "progress", .type = DPC_FIELD_BYTES, AO(progress), .flags = DPC_FIELD_RUNTIME,
     .def_text = "none",
     .doc = "dpc_progress of the long computations; a non-zero return cancels them"},
    {.name = "bib_monte_carlo", .type = DPC_FIELD_BOOL, AO(bib_monte_carlo),
     .doc = "balls-in-bins: 1 lets the Monte Carlo's high-probability bound be the epsilon"},
};
#undef AO
const dpc_field_table dpc__account_opts_table = DPC_FIELD_TABLE(dpc_account_opts, ao_fields);

const dpc_field_table *dpc_account_opts_fields(void) { return &dpc__account_opts_table; }

void dpc_account_opts_init(dpc_account_opts *o, dpc_accountant acc)
{
    if (!o) return;
    dpc_field_defaults(&dpc__account_opts_table, o);
    o->accountant = acc;
}

/* The range check (the table's) of field `name` of obj under table t; prefix names the object. */
static dpc_status check_field(const dpc_field_table *t, const void *obj, const char *prefix,
                              const char *name, dpc_error *err)
{
    const dpc_field *f = dpc_field_find(t, name, NULL);
    return dpc_field_check_value(f, prefix, dpc_field_get(f, obj), err);
}

/* ==== Validation ============================================================================ */

/* Effective sampling rate: 1 for unsampled components (and sampled ones with q = 1). */
static double part_q(const dpc_gauss_event *e)
{
    return e->sampling == DPC_SAMPLING_NONE ? 1.0 : e->q;
}

/* "parts[i].name": the field of component i. */
static const char *part_field(char *buf, size_t len, size_t i, const char *name)
{
    snprintf(buf, len, "parts[%zu].%s", i, name);
    return buf;
}

dpc_status dpc_event_check(const dpc_event *ev, dpc_accountant acc, dpc_error *err)
{
    if (!ev) return dpc_error_param(err, DPC_E_INVALID, "ev", "NULL");
    if ((unsigned)acc > DPC_ACCOUNTANT_GDP)
        return dpc_error_param(err, DPC_E_INVALID, "accountant", "unknown accountant %d", (int)acc);
    dpc_status st0;
    if ((st0 = check_field(&ev_table, ev, "", "neighbor", err))) return st0;
    if (ev->nparts == 0) /* 0 is "unset" in the table: here it must be set */
        return dpc_error_param(err, DPC_E_INVALID, "nparts", "must be >= 1, got 0");
    if (!ev->parts) return dpc_error_param(err, DPC_E_INVALID, "parts", "NULL");
    for (size_t i = 0; i < ev->nparts; i++) {
        const dpc_gauss_event *e = &ev->parts[i];
        char f[48], pre[32];
        snprintf(pre, sizeof pre, "parts[%zu].", i);
        dpc_status st;
        if ((st = check_field(&ge_table, e, pre, "sigma", err)) ||
            (st = check_field(&ge_table, e, pre, "sensitivity", err)))
            return st;
        if (e->sensitivity > DPC__SCALE_MAX) /* sigma / sensitivity would underflow to 0 */
            return dpc_error_param(err, DPC_E_RANGE, part_field(f, sizeof f, i, "sensitivity"),
                                   "%g overflows: must be at most 1e150", e->sensitivity);
        if ((st = check_field(&ge_table, e, pre, "sampling", err))) return st;
        if (e->sampling != DPC_SAMPLING_NONE && (st = check_field(&ge_table, e, pre, "q", err)))
            return st;
        if (e->count > DPC_ACCOUNT_MAX_COUNT) /* every front end gets the CLI's range */
            return dpc_error_param(err, DPC_E_RANGE, part_field(f, sizeof f, i, "count"),
                                   "must be <= %zu (2^40), got %zu", (size_t)DPC_ACCOUNT_MAX_COUNT,
                                   e->count);
        if ((st = check_field(&ge_table, e, pre, "count", err))) return st;
        double q = part_q(e);
        if (q == 1.0) continue; /* an unsampled Gaussian: every accountant, every relation */
        if (acc == DPC_ACCOUNTANT_ZCDP || acc == DPC_ACCOUNTANT_GDP)
            return dpc_error_param(err, DPC_E_UNSUPPORTED, part_field(f, sizeof f, i, "q"),
                                   "the %s accountant has no amplification by sampling; use rdp "
                                   "or pld, or no sampling",
                                   dpc_accountant_name(acc));
        if (e->sampling == DPC_SAMPLING_POISSON && ev->neighbor == DPC_NEIGHBOR_REPLACE_ONE)
            return dpc_error_param(err, DPC_E_UNSUPPORTED, "neighbor",
                                   "replace-one is not supported with Poisson sampling "
                                   "(component %zu); use add-remove or zero-out",
                                   i);
        if (e->sampling == DPC_SAMPLING_FIXED) {
            if (ev->neighbor != DPC_NEIGHBOR_REPLACE_ONE)
                return dpc_error_param(err, DPC_E_UNSUPPORTED, "neighbor",
                                       "fixed-size batches (component %zu) are accounted under "
                                       "replace-one only (Wang et al. 2019)",
                                       i);
            if (acc != DPC_ACCOUNTANT_RDP)
                return dpc_error_param(err, DPC_E_UNSUPPORTED, "accountant",
                                       "fixed-size batches (component %zu) need the rdp "
                                       "accountant",
                                       i);
        }
    }
    return DPC_OK;
}

static dpc_status check_opts(const dpc_account_opts *o, dpc_error *err)
{
    if (!o) return dpc_error_param(err, DPC_E_INVALID, "o", "NULL");
    if (o->accountant == DPC_ACCOUNTANT_RDP && o->orders)
        return dpc__check_orders(o->orders, o->norders, err);
    dpc_status st = DPC_OK;
    if (o->accountant == DPC_ACCOUNTANT_PLD &&
        ((st = check_field(&dpc__account_opts_table, o, "", "pld_interval", err)) ||
         (st = check_field(&dpc__account_opts_table, o, "", "pld_tail", err)) ||
         (st = check_field(&dpc__account_opts_table, o, "", "pld_disc", err))))
        return st;
    if (o->accountant == DPC_ACCOUNTANT_ZCDP)
        st = check_field(&dpc__account_opts_table, o, "", "zcdp_conv", err);
    return st;
}

/* ==== Per-accountant evaluation ============================================================= */

static double part_rdp(const dpc_gauss_event *e, double a, int *ok)
{
    double z = e->sigma / e->sensitivity, q = part_q(e), r;
    *ok = 1;
    if (q == 1.0)
        r = dpc__rdp_gauss1(z, a);
    else if (e->sampling == DPC_SAMPLING_POISSON)
        r = dpc__rdp_poisson1(q, z, a, ok);
    else
        r = dpc__rdp_wor1(q, z, a);
    /* DP-REQ: rdp-compose: Mironov 2017, Prop. 1: RDP adds up under adaptive composition. */
    return (double)e->count * r;
}

static double event_rdp(const dpc_event *ev, double a, int *ok)
{
    double r = 0.0;
    *ok = 1;
    for (size_t i = 0; i < ev->nparts && *ok; i++) r += part_rdp(&ev->parts[i], a, ok);
    return r;
}

/* The improved conversion at one order of the event's curve: eps for log delta (mode 0) or
 * log delta for eps (mode 1). */
typedef struct {
    const dpc_event *ev;
    int mode;
    double x; /* log(delta) or eps */
    int ok;
} refine_ctx;

static double refine_fn(double a, void *vc)
{
    refine_ctx *c = vc;
    int ok;
    double r = event_rdp(c->ev, a, &ok);
    if (!ok) {
        c->ok = 0;
        return INFINITY;
    }
    return c->mode == 0 ? dpc__rdp_eps1(a, r, c->x) : dpc__rdp_logdelta1(a, r, c->x);
}

/* The work of one RDP curve (DPC_WORK_LIMIT): per component and order a, the binomial sum of an
 * integer order (a + 1 terms) or the two-sided series and band quadrature of a fractional one
 * (O(a) terms, each a log-normal-CDF evaluation); the refinement evaluates ~20 more orders near
 * the best. */
static dpc_status rdp_work(const dpc_event *ev, const double *orders, size_t n, int refine,
                           dpc_error *err)
{
    double w = 0.0, amax = 0.0;
    for (size_t i = 0; i < n; i++) {
        double a = orders[i];
        w += a == floor(a) ? 30.0 * (a + 1.0) : 1000.0 * (a + 30.0);
        if (a > amax) amax = a;
    }
    if (refine) w += 20.0 * 1000.0 * (2.0 * amax + 30.0);
    return dpc__work_check(w * (double)ev->nparts, "orders",
                           "the RDP curve over these orders (large orders cost O(order))", err);
}

/* mode 0: epsilon for delta = x; mode 1: delta for epsilon = x. */
static dpc_status run_rdp(const dpc_event *ev, const dpc_account_opts *o, int mode, double x,
                          dpc_account_result *out, dpc_error *err)
{
    const double *orders = o->orders;
    size_t n = o->norders;
    if (!orders) dpc_rdp_default_orders(&orders, &n);
    dpc_status wst = rdp_work(ev, orders, n, o->rdp_refine, err);
    if (wst) return wst;
    double *rdp = dpc__malloc_array(n, sizeof *rdp);
    if (!rdp) return DPC__NOMEM(err, "the RDP curve");
    /* An order whose value cannot be computed reliably is left out (any order gives a valid
     * bound); all of them failing is an error. */
    size_t nok = 0;
    double bad = NAN;
    for (size_t i = 0; i < n; i++) {
        int ok;
        rdp[i] = event_rdp(ev, orders[i], &ok);
        if (!ok) {
            rdp[i] = INFINITY;
            bad = orders[i];
        } else {
            nok++;
        }
    }
    if (!nok) {
        free(rdp);
        return dpc_error_set(err, DPC_E_NUMERIC,
                             "rdp: the subsampled-Gaussian series cannot be evaluated at any "
                             "order (e.g. %g; noise multiplier too small for fractional "
                             "orders: add integer orders)",
                             bad);
    }
    dpc_status st;
    if (mode == 0) {
        st = dpc_rdp_epsilon(orders, rdp, n, x, &out->epsilon, &out->order, err);
        out->delta = x;
    } else {
        st = dpc_rdp_delta(orders, rdp, n, x, &out->delta, &out->order, err);
        out->epsilon = x;
    }
    free(rdp);
    if (st || !o->rdp_refine || isnan(out->order)) return st;
    /* Any order > 1 gives a valid bound: search between the best grid order's neighbours. */
    double lo = out->order, hi = out->order;
    for (size_t i = 0; i < n; i++) {
        if (orders[i] < out->order && (lo == out->order || orders[i] > lo)) lo = orders[i];
        if (orders[i] > out->order && (hi == out->order || orders[i] < hi)) hi = orders[i];
    }
    if (lo == out->order) lo = 1.0 + 0.5 * (out->order - 1.0);
    if (hi == out->order) hi = 2.0 * out->order;
    refine_ctx c = {ev, mode, mode == 0 ? log(x) : x, 1};
    double f, a = dpc__minimize(refine_fn, &c, lo, hi, 9, &f);
    if (!c.ok) return DPC_OK;
    if (mode == 0 && f < out->epsilon) {
        out->epsilon = f > 0.0 ? f : 0.0;
        out->order = a;
    } else if (mode == 1 && f < 0.0 && exp(f) < out->delta) {
        out->delta = exp(f);
        out->order = a;
    }
    return DPC_OK;
}

/* DP-REQ: pld-adaptive-grid: the grid step of one component: the requested interval, or, when
 * its count-fold composition would need more grid points than one FFT window holds, the
 * smallest step that fits (a coarser connect-the-dots/round-up grid is still pessimistic: a
 * valid upper bound, only looser). */
static dpc_status component_pld(const dpc_gauss_event *e, const dpc_pld_params *par0,
                                double tilt_level, dpc_pld **out, dpc_error *err)
{
    dpc_pld_params par = *par0;
    double z = e->sigma / e->sensitivity, q = part_q(e);
    double budget = 0.95 * (double)dpc__pld_max_points();
    dpc_status st = DPC_OK;
    if (q == 1.0) {
        /* T unsampled Gaussians compose to one with z / sqrt(T) exactly (mu^2 adds up): one
         * discretization, no convolution. Its loss range, 2 zt mu wide (mu = sqrt(T)/z, zt the
         * x-quantile of the truncation), sets the grid when that exceeds the point budget. */
        double zeff = z / sqrt((double)e->count), mu = 1.0 / zeff;
        double width = 2.0 * 12.0 * mu + 2.0;
        double cap = (double)((size_t)1 << 21); /* ample: the Gaussian is smooth */
        if (width / par.interval > cap) par.interval = 1.05 * width / cap;
        dpc_pld *one = NULL;
        if ((st = dpc__pld_new_gaussian_count(&one, zeff, 1.0, &par, 1, err))) return st;
        *out = one;
        return DPC_OK;
    }
    for (int attempt = 0; attempt < 4; attempt++) {
        dpc_pld *one = NULL;
        if ((st = dpc__pld_new_gaussian_count(&one, z, q, &par, e->count, err))) return st;
        double pts = 0.0;
        st = dpc__pld_self_compose_pts(out, one, e->count, &pts, tilt_level, err);
        dpc_pld_free(one);
        if (st != DPC_E_RANGE) return st;
        par.interval *= 1.05 * pts / budget; /* the window in loss units barely depends on h */
    }
    return st;
}

static dpc_status event_pld(const dpc_event *ev, const dpc_account_opts *o, double tilt_level,
                            dpc_pld **out, dpc_error *err)
{
    dpc_pld_params par = {o->pld_interval, o->pld_tail, o->pld_disc};
    dpc_pld *acc = NULL;
    /* Components composed with each other must share one grid: the coarsest any needs. */
    for (size_t i = 0; i < ev->nparts; i++) {
        dpc_pld *many = NULL, *sum = NULL;
        dpc_status st = component_pld(&ev->parts[i], &par, tilt_level, &many, err);
        if (!st && acc && dpc__pld_interval(many) != dpc__pld_interval(acc)) {
            /* regrid the coarser-needing event: restart with its interval for all parts */
            double hn = dpc__pld_interval(many) > dpc__pld_interval(acc) ? dpc__pld_interval(many)
                                                                         : dpc__pld_interval(acc);
            dpc_pld_free(many);
            dpc_pld_free(acc);
            dpc_account_opts o2 = *o;
            o2.pld_interval = hn;
            return event_pld(ev, &o2, tilt_level, out, err);
        }
        if (!st && acc) {
            st = dpc_pld_compose(&sum, acc, many, err);
            dpc_pld_free(many);
            many = sum;
        }
        dpc_pld_free(acc);
        acc = many;
        if (st) {
            dpc_pld_free(acc);
            return st;
        }
    }
    *out = acc;
    return DPC_OK;
}

/* The RDP answer beside a pessimistic PLD request (microseconds at the default orders): 1 when
 * it was computed into *r, 0 when RDP does not hold for the event or the request is for a lower
 * bound (round-down), where an upper bound must not replace it. */
static int rdp_beside(const dpc_event *ev, const dpc_account_opts *o, int mode, double x,
                      dpc_account_result *r)
{
    if (o->pld_disc == DPC_PLD_ROUND_DOWN) return 0;
    if (dpc_event_check(ev, DPC_ACCOUNTANT_RDP, NULL) != DPC_OK) return 0;
    dpc_account_opts ro;
    dpc_account_opts_init(&ro, DPC_ACCOUNTANT_RDP);
    r->epsilon = r->delta = r->order = r->rho = r->mu = NAN;
    r->upper_bound = 1;
    return run_rdp(ev, &ro, mode, x, r, NULL) == DPC_OK &&
           (mode == 0 ? r->epsilon >= 0.0 : r->delta >= 0.0);
}

/* What the PLD on the requested grid is predicted to answer, before it is composed: the
 * discretized one-step PLD of each component (cheap: no composition) gives the mean M and
 * variance V of the composed loss, and the composition is close to mu-GDP with
 * mu = sqrt(max(V, 2 M)) (a PLD has mean ~ variance / 2; the central limit theorem, Dong, Roth
 * & Su 2022, Thm. 3.4). The grid's own spread enters V: connect-the-dots moves a loss l in a
 * cell [a, a + h] to the cell's ends, adding (l - a)(a + h - l) of variance per composition,
 * which after 10^12 compositions dominates (issue 37). NAN when no prediction is made (a
 * component whose one-step losses, of order q / z, exceed 10 grid steps has no such floor). */
static double pld_predicted(const dpc_event *ev, const dpc_account_opts *o, int mode, double x)
{
    dpc_pld_params par = {o->pld_interval, o->pld_tail, o->pld_disc};
    double M = 0.0, V = 0.0;
    for (size_t i = 0; i < ev->nparts; i++) {
        const dpc_gauss_event *e = &ev->parts[i];
        double z = e->sigma / e->sensitivity, q = part_q(e), m, v, inf, c = (double)e->count;
        if (q == 1.0) { /* exact GDP: no grid floor (one discretization) */
            V += c / (z * z);
            M += c / (2.0 * z * z);
            continue;
        }
        /* one-step losses of order q / z well above the grid step: no floor to predict (and
         * their one-step PLD is the costly part of the composition: not built twice) */
        if (q / z > 10.0 * par.interval) return NAN;
        dpc_pld *one = NULL;
        if (dpc__pld_new_gaussian_count(&one, z, q, &par, e->count, NULL) != DPC_OK) return NAN;
        dpc__pld_moments(one, &m, &v, &inf);
        dpc_pld_free(one);
        if (inf > 0.0) return NAN;
        M += c * m;
        V += c * v;
    }
    double mu = sqrt(fmax(V, 2.0 * M)), y = NAN;
    if (!isfinite(mu)) return NAN;
    if (mode == 0 && dpc_gdp_epsilon(mu, x, &y, NULL) != DPC_OK) return NAN;
    if (mode == 1 && dpc_gdp_delta(mu, x, &y, NULL) != DPC_OK) return NAN;
    return y;
}

static dpc_status run(const dpc_event *ev, const dpc_account_opts *o, int mode, double x,
                      dpc_account_result *out, dpc_error *err)
{
    dpc_status st;
    if ((st = check_opts(o, err))) return st;
    if ((st = dpc_event_check(ev, o->accountant, err))) return st;
    if (mode == 0 && (st = dpc__check_open01(x, "delta", err))) return st;
    if (mode == 1 && (st = dpc__check_nonneg(x, "epsilon", err))) return st;
    if (!out) return dpc_error_param(err, DPC_E_INVALID, "out", "output pointer is NULL");
    out->epsilon = out->delta = out->order = out->rho = out->mu = NAN;
    out->upper_bound = 1;
    switch (o->accountant) {
    case DPC_ACCOUNTANT_ZCDP: {
        double rho = 0.0;
        for (size_t i = 0; i < ev->nparts; i++) {
            const dpc_gauss_event *e = &ev->parts[i];
            double r = e->sensitivity / e->sigma;
            /* DP-REQ: zcdp-compose: Bun & Steinke 2016, Lemma 2.3: rho adds up. */
            rho += (double)e->count * 0.5 * r * r;
        }
        out->rho = rho;
        if (mode == 0) {
            out->delta = x;
            if (!isfinite(rho)) return out->epsilon = INFINITY, DPC_OK; /* noise ~ 0: no privacy */
            return dpc_zcdp_epsilon(rho, x, o->zcdp_conv, &out->epsilon, NULL, err);
        }
        out->epsilon = x;
        if (!isfinite(rho)) return out->delta = 1.0, DPC_OK;
        return dpc_zcdp_delta(rho, x, o->zcdp_conv, &out->delta, err);
    }
    case DPC_ACCOUNTANT_GDP: {
        double mu2 = 0.0;
        for (size_t i = 0; i < ev->nparts; i++) {
            const dpc_gauss_event *e = &ev->parts[i];
            double r = e->sensitivity / e->sigma;
            /* DP-REQ: gdp-compose: Dong, Roth & Su 2022, Cor. 3.3: mu^2 adds up. */
            mu2 += (double)e->count * r * r;
        }
        out->mu = sqrt(mu2);
        if (mode == 0) {
            out->delta = x;
            if (!isfinite(out->mu)) return out->epsilon = INFINITY, DPC_OK; /* noise ~ 0 */
            return dpc_gdp_epsilon(out->mu, x, &out->epsilon, err);
        }
        out->epsilon = x;
        if (!isfinite(out->mu)) return out->delta = 1.0, DPC_OK;
        return dpc_gdp_delta(out->mu, x, &out->delta, err);
    }
    case DPC_ACCOUNTANT_RDP: return run_rdp(ev, o, mode, x, out, err);
    case DPC_ACCOUNTANT_PLD: {
        /* DP-REQ: pld-or-rdp: RDP and a pessimistic PLD are both upper bounds, so the smaller
         * is one. The RDP answer (microseconds) is computed beside the PLD; where the PLD is
         * predicted (pld_predicted) above twice the RDP answer -- its grid's floor at huge
         * step counts: 1.1e7 against 4.0e4 for the noise of q = 0.01 and 10^12 steps, issue
         * 37 -- the PLD is not composed at all; otherwise the smaller of the two is answered
         * (out->order is then the RDP order, NAN when the PLD answered). */
        dpc_account_result rr;
        int have_rdp = rdp_beside(ev, o, mode, x, &rr);
        if (have_rdp) {
            double pred = pld_predicted(ev, o, mode, x), rv = mode == 0 ? rr.epsilon : rr.delta;
            if (rv < 0.5 * pred) {
                *out = rr;
                return DPC_OK;
            }
        }
        dpc_pld *pld = NULL;
        if ((st = event_pld(ev, o, 0.0, &pld, err))) return st;
        out->upper_bound = o->pld_disc != DPC_PLD_ROUND_DOWN;
        if (mode == 0) {
            out->delta = x;
            st = dpc_pld_epsilon(pld, x, &out->epsilon, err);
            /* DP-REQ: pld-tilt: when the FFT round-off above the answer is not negligible
             * against delta (tiny delta, long runs), recompose with the tail resolved by an
             * exponentially tilted power centred at the answer */
            int refine = !st && ev->nparts == 1 && isfinite(out->epsilon) &&
                         dpc__pld_noise_above(pld, out->epsilon) > 1e-3 * x;
            for (int it = 0; refine && it < 3; it++) { /* re-centre until the answer settles */
                dpc_pld *fine = NULL;
                double lev = out->epsilon > 0.0 ? out->epsilon : 1e-3, prev = out->epsilon;
                if ((st = event_pld(ev, o, lev, &fine, err))) {
                    dpc_pld_free(pld);
                    return st;
                }
                dpc_pld_free(pld);
                pld = fine;
                if ((st = dpc_pld_epsilon(pld, x, &out->epsilon, err))) break;
                refine = fabs(out->epsilon - prev) > 1e-4 * (prev > 1.0 ? prev : 1.0);
            }
        } else {
            out->epsilon = x;
            st = dpc_pld_delta(pld, x, &out->delta, err);
        }
        dpc_pld_free(pld);
        if (!st && have_rdp && mode == 0 && rr.epsilon < out->epsilon) *out = rr;
        if (!st && have_rdp && mode == 1 && rr.delta < out->delta) *out = rr;
        return st;
    }
    }
    return dpc_error_param(err, DPC_E_INVALID, "accountant", "unknown accountant %d",
                           (int)o->accountant);
}

dpc_status dpc_account_epsilon(const dpc_event *ev, const dpc_account_opts *o, double delta,
                               dpc_account_result *out, dpc_error *err)
{
    return run(ev, o, 0, delta, out, err);
}

dpc_status dpc_account_delta(const dpc_event *ev, const dpc_account_opts *o, double epsilon,
                             dpc_account_result *out, dpc_error *err)
{
    return run(ev, o, 1, epsilon, out, err);
}

size_t dpc_account_max_count(void)
{
    return DPC_ACCOUNT_MAX_COUNT;
}
