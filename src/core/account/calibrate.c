/* calibrate.c — noise and step calibration for every accountant: bracket the crossing of the
 * monotone map parameter -> epsilon, then bisect (sigma: on log sigma; steps: on integers).
 * The answer is always on the private side of the crossing. */
#include "account/acc_internal.h"

#include "account/acc_math.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    dpc_event ev;          /* a copy whose parts point into `parts` */
    dpc_gauss_event *parts;
    const dpc_gauss_event *orig;
    const dpc_account_opts *o;
    double eps, delta;
    size_t part;
    dpc_status st;         /* first failure of an evaluation */
    size_t evals;          /* evaluations with the requested options (tests, benchmarks) */
    size_t evals_done;     /* every evaluation (progress reports) */
    double evals_all;      /* sum of PLD grid steps evaluated (cost ~ 1/step) */
    dpc_error *err;
} cal_ctx;

/* Progress of a calibration: one report per evaluation (at most about CAL_EVALS_MAX). */
#define CAL_EVALS_MAX 120.0
static dpc_status cal_progress(cal_ctx *c)
{
    c->evals_done++;
    return dpc__progress(&c->o->progress, (double)c->evals_done,
                         fmax(CAL_EVALS_MAX, (double)c->evals_done + 1.0), c->err);
}

static int eval_ok(cal_ctx *c, int *ok)
{
    dpc_account_result r;
    dpc_status st = cal_progress(c);
    if (!st) st = dpc_account_epsilon(&c->ev, c->o, c->delta, &r, c->err);
    c->evals++;
    if (st) {
        if (!c->st) c->st = st;
        *ok = 0;
        return 0;
    }
    *ok = 1;
    return r.epsilon <= c->eps;
}

/* sigma -> "the event with every sigma set to s is (eps, delta)-DP" (true for large s). */
static int sigma_private(double s, void *vc)
{
    cal_ctx *c = vc;
    for (size_t i = 0; i < c->ev.nparts; i++) c->parts[i].sigma = s;
    int ok, v = eval_ok(c, &ok);
    return ok ? v : 1; /* a failed evaluation stops the bisection moving; st is reported */
}

static dpc_status ctx_init(cal_ctx *c, const dpc_event *ev, const dpc_account_opts *o,
                           double eps, double delta, dpc_error *err)
{
    dpc_status st;
    memset(c, 0, sizeof *c);
    if (!o) return dpc_error_param(err, DPC_E_INVALID, "o", "NULL");
    if ((st = dpc_event_check(ev, o->accountant, err))) return st;
    if ((st = dpc__check_pos(eps, "epsilon", err))) return st;
    if ((st = dpc__check_open01(delta, "delta", err))) return st;
    c->parts = dpc__malloc_array(ev->nparts, sizeof *c->parts);
    if (!c->parts) return DPC__NOMEM(err, "a calibration event");
    memcpy(c->parts, ev->parts, ev->nparts * sizeof *c->parts);
    c->ev = *ev;
    c->ev.parts = c->parts;
    c->orig = ev->parts;
    c->o = o;
    c->eps = eps;
    c->delta = delta;
    c->err = err;
    return DPC_OK;
}

/* eps of the context's event with every sigma set to s (NAN and c->st set on failure). */
static double eps_at(cal_ctx *c, double s, const dpc_account_opts *o)
{
    for (size_t i = 0; i < c->ev.nparts; i++) c->parts[i].sigma = s;
    dpc_account_result r;
    dpc_status st = cal_progress(c);
    if (!st) st = dpc_account_epsilon(&c->ev, o, c->delta, &r, c->err);
    c->evals_all += o->accountant == DPC_ACCOUNTANT_PLD ? o->pld_interval : 0.0;
    if (o == c->o) c->evals++;
    if (st) {
        if (!c->st) c->st = st;
        return NAN;
    }
    return r.epsilon;
}

/* Bracketing + bisection on log sigma (every accountant; the cheap ones and the fallback). */
static dpc_status bisect_sigma(cal_ctx *c, double smax, double rtol, double *sigma,
                               dpc_error *err)
{
    /* Bracket [lo, hi] with lo not private and hi private, starting at sigma = sensitivity. */
    double lo = smax, hi = smax;
    if (sigma_private(smax, c)) {
        do {
            hi = lo;
            lo *= 0.5;
        } while (!c->st && lo > 1e-12 * smax && sigma_private(lo, c));
        if (!c->st && lo <= 1e-12 * smax) { /* private for (almost) any sigma */
            *sigma = hi;
            return DPC_OK;
        }
    } else {
        do {
            lo = hi;
            hi *= 2.0;
        } while (!c->st && hi <= 1e9 * smax && !sigma_private(hi, c));
        if (!c->st && hi > 1e9 * smax)
            return dpc_error_param(err, DPC_E_PRIVACY, "epsilon",
                                   "(%g, %g) cannot be met with sigma <= %g times the "
                                   "sensitivity",
                                 c->eps, c->delta, 1e9);
    }
    /* Bisection on log sigma; stop when the bracket is relatively rtol wide or when the
     * private end is within 10 rtol (relative) of the target epsilon. */
    while (!c->st && hi / lo - 1.0 > rtol) {
        double mid = sqrt(lo) * sqrt(hi), e = eps_at(c, mid, c->o);
        if (c->st) break;
        if (e <= c->eps) {
            hi = mid;
            if (c->eps - e <= 10.0 * rtol * (c->eps > 1.0 ? c->eps : 1.0)) break;
        } else {
            lo = mid;
        }
    }
    if (c->st) return c->st;
    *sigma = hi;
    return DPC_OK;
}

/* Secant search for log eps(e^u) = log target, eps from the callback (NAN: failure; stops).
 * private_end = 1: stop at a private point within tol of the target (f in [-tol, 0]) and return
 * the private end; 0: stop at |f| <= tol (either side). *slope (dlog eps / du < 0) is the first
 * step's slope estimate and receives the last secant slope. Returns 0 on success, -1 when it did
 * not converge in max_it evaluations or an evaluation failed. */
int dpc__secant_log(dpc__fn eps_of_u, void *ctx, double target, double *u, double *slope,
                    double tol, int private_end, int max_it, double umax)
{
    double L = log(target);
    double lo = NAN, hi = NAN, up = NAN, fp = NAN, x = *u;
    for (int it = 0; it < max_it; it++) {
        double e = eps_of_u(x, ctx);
        if (isnan(e)) return -1;
        double f = e > 0.0 ? log(e) - L : -1.0; /* eps = 0: far on the private side */
        if (f <= 0.0 && (isnan(hi) || x < hi)) hi = x;
        if (f > 0.0 && (isnan(lo) || x > lo)) lo = x;
        double sl = *slope;
        if (!isnan(up) && e > 0.0 && x != up && f != fp && (f - fp) / (x - up) < 0.0)
            sl = (f - fp) / (x - up);
        *slope = sl;
        if (private_end ? (f <= 0.0 && -f <= tol) : fabs(f) <= tol) {
            *u = x;
            return 0;
        }
        if (!isnan(lo) && !isnan(hi) && hi - lo <= 1e-11) {
            *u = hi;
            return 0;
        }
        double xn = x - (f + (private_end ? 0.5 * tol : 0.0)) / sl;
        if (!(e > 0.0)) {
            /* eps = 0 (large delta, much noise): f = -1 is no measure of the distance, so
             * neither a secant slope nor a step size: bisect a bracket, else the longest step
             * towards less noise (crawling by the last slope took 40+ PLD evaluations, 13 s
             * CPU, at delta 0.5; issue 37) */
            xn = !isnan(lo) ? 0.5 * (lo + hi) : x - 1.0;
            up = NAN;
            x = xn;
            if (x > umax) return -1;
            continue;
        }
        if (!isnan(lo) && !isnan(hi)) {
            if (!(xn > lo && xn < hi)) xn = 0.5 * (lo + hi);
        } else if (fabs(xn - x) > 1.0) {
            xn = x + (xn > x ? 1.0 : -1.0);
        }
        up = x;
        fp = f;
        x = xn;
        if (x > umax) return -1;
    }
    return -1;
}

/* Evaluations of one accountant configuration along log sigma, remembered so that the point a
 * secant search stops at can be read back without another evaluation. */
#define CAL_MEMO 24
typedef struct {
    cal_ctx *c;
    const dpc_account_opts *o;
    size_t n;
    double u[CAL_MEMO], e[CAL_MEMO];
} secant_ctx;

static double secant_eps(double u, void *vc)
{
    secant_ctx *sc = vc;
    for (size_t i = 0; i < sc->n; i++)
        if (sc->u[i] == u) return sc->e[i];
    double e = eps_at(sc->c, exp(u), sc->o);
    if (sc->c->st) return NAN;
    size_t k = sc->n < CAL_MEMO ? sc->n++ : CAL_MEMO - 1;
    sc->u[k] = u;
    sc->e[k] = e;
    return e;
}

static int secant(secant_ctx *sc, double target, double *u, double *slope, double tol,
                  int private_end, int max_it, double umax)
{
    return dpc__secant_log(secant_eps, sc, target, u, slope, tol, private_end, max_it, umax);
}

/* The RDP start: secant steps on log eps(log sigma) (RDP evaluations cost microseconds and any
 * orders give a valid bound; this is only a start), bisection if they do not converge. *u and
 * *slope receive log sigma and d log eps / d log sigma there. */
static dpc_status rdp_start(cal_ctx *c, double smax, double *u, double *slope, dpc_error *err)
{
    static const double orders[] = {1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 5, 6, 8, 10, 12, 16,
                                    20, 24, 32, 48, 64, 96, 128, 256, 512, 1024};
    dpc_account_opts ro;
    dpc_account_opts_init(&ro, DPC_ACCOUNTANT_RDP);
    ro.orders = orders;
    ro.norders = sizeof orders / sizeof orders[0];
    cal_ctx rc = *c;
    rc.o = &ro;
    secant_ctx sc = {&rc, &ro, 0, {0}, {0}};
    *u = log(smax);
    *slope = -1.0;
    if (secant(&sc, c->eps, u, slope, 1e-3, 0, 30, log(1e9 * smax)) == 0) return DPC_OK;
    rc.st = DPC_OK;
    double s0;
    dpc_status st = bisect_sigma(&rc, smax, 1e-3, &s0, err);
    if (st) return st;
    *u = log(s0);
    *slope = -1.0;
    return DPC_OK;
}

/* DP-REQ: calib-pld: PLD calibration in a few evaluations. (1) RDP secant steps (microseconds
 * per evaluation) give a start sigma and the slope dlog eps / dlog sigma; (2) secant steps with
 * a 10x coarser PLD grid (about 1/15 of the cost) find the coarse crossing; (3) one PLD
 * evaluation with a 5x coarser grid there: connect-the-dots is second order in the grid step,
 * so eps(h) ~ eps_0 + c h^2 and the two coarse values predict the requested grid's epsilon
 * (Richardson: eps_10h + (eps_5h - eps_10h) 99/75; measured within ~1e-6 where eps >> h); (4)
 * coarse secant steps onto the target shifted by that offset and 2.5e-5 to the private side,
 * then ONE evaluation with the requested grid, accepted when it is private and within 5e-5
 * (relative) of the target (the grid resolves eps(sigma) to ~1e-8 only: below that eps(sigma)
 * is not monotone). A miss measures the offset exactly at that sigma and repeats (4); after
 * three misses, secant steps on the requested grid, then bisection, finish. The answer is
 * always an evaluation with the requested options that is <= the target. */
static dpc_status pld_sigma(cal_ctx *c, double smax, double *sigma, dpc_error *err)
{
    double u, slope;
    dpc_status st = rdp_start(c, smax, &u, &slope, err);
    if (st == DPC_E_PRIVACY) return bisect_sigma(c, smax, 1e-11, sigma, err);
    if (st) return st;
    if (!(slope < 0.0) || !isfinite(slope)) slope = -1.0;
    double umax = log(1e9 * smax);
    dpc_account_opts co = *c->o, mo = *c->o;
    co.pld_interval = fmin(co.pld_interval * 10.0, 1.0); /* the table's largest grid step */
    mo.pld_interval = fmin(mo.pld_interval * 5.0, 1.0);
    secant_ctx cs = {c, &co, 0, {0}, {0}}, fs = {c, c->o, 0, {0}, {0}};
    if (secant(&cs, c->eps, &u, &slope, 1e-3, 0, 8, umax) == 0) {
        double e10 = secant_eps(u, &cs), e5 = eps_at(c, exp(u), &mo);
        double off = log((e10 + (e5 - e10) * (99.0 / 75.0)) / e10);
        for (int round = 0; round < 3 && !c->st && isfinite(off); round++) {
            double ut = u, ec;
            if (secant(&cs, c->eps * exp(-2.5e-5 - off), &ut, &slope, 5e-6, 0, 6, umax) ||
                !((ec = secant_eps(ut, &cs)) > 0.0))
                break;
            double ef = secant_eps(ut, &fs);
            if (c->st) return c->st; /* the requested grid failed: nothing to fall back to */
            double f = log(ef / c->eps);
            if (f <= 0.0 && f >= -5e-5) {
                *sigma = exp(ut);
                return DPC_OK;
            }
            off = log(ef / ec); /* the offset measured at this sigma */
            u = ut;
        }
    }
    c->st = DPC_OK; /* a coarse-grid failure only costs the shortcut */
    if (secant(&fs, c->eps, &u, &slope, 5e-5, 1, 10, umax)) {
        if (c->st) return c->st;
        return bisect_sigma(c, smax, 1e-11, sigma, err); /* rare: the slow path */
    }
    *sigma = exp(u);
    return DPC_OK;
}

double dpc_account_default_delta(size_t n_records)
{
    if (n_records == 0) return 1e-5;
    /* 10^floor(log10(1 / (10 N))); the 1e-9 keeps N = 10^k (1/(10N) a power of ten) on it */
    double e = floor(-log10(10.0 * (double)n_records) + 1e-9);
    return e >= -5.0 ? 1e-5 : pow(10.0, e);
}

dpc_status dpc_account_resolve_delta(double delta, size_t n_records, int allow_large, double *out,
                                     int *derived, dpc_error *err)
{
    if (!out) return dpc_error_param(err, DPC_E_INVALID, "delta", "NULL output");
    if (n_records == 0)
        return dpc_error_param(err, DPC_E_INVALID, "n", "the number of records must be >= 1");
    if (derived) *derived = delta == 0.0;
    if (delta == 0.0) { /* derived: below 1/(10 N) by construction */
        *out = dpc_account_default_delta(n_records);
        return DPC_OK;
    }
    if (!(delta > 0 && delta < 1))
        return dpc_error_param(err, DPC_E_INVALID, "delta",
                               "must be in (0, 1) (or 0: derived from N), got %g", delta);
    if (delta >= 1.0 / (double)n_records && !allow_large)
        return dpc_error_param(err, DPC_E_PRIVACY, "delta",
                               "%g >= 1/N = %g for N = %zu training examples: a mechanism that "
                               "publishes one record outright would satisfy it (set "
                               "allow_large_delta to accept)",
                               delta, 1.0 / (double)n_records, n_records);
    *out = delta;
    return DPC_OK;
}

dpc_accountant dpc_account_default_accountant(void)
{
    return DPC_ACCOUNTANT_PLD;
}

void dpc_account_opts_for_target(dpc_account_opts *o, double epsilon)
{
    if (o && o->accountant == DPC_ACCOUNTANT_PLD && epsilon > 10.0 && isfinite(epsilon) &&
        o->pld_interval < 1.0)
        o->pld_interval = fmin(o->pld_interval * epsilon / 10.0, 1.0); /* the largest grid step
                                                                         (the table's) */
}

dpc_status dpc_account_calibrate_sigma(const dpc_event *ev, const dpc_account_opts *o,
                                       double epsilon, double delta, double *sigma,
                                       dpc_error *err)
{
    if (!o) return dpc_error_param(err, DPC_E_INVALID, "o", "NULL");
    dpc_account_opts t = *o;
    dpc_account_opts_for_target(&t, epsilon);
    return dpc__calibrate_sigma_count(ev, &t, epsilon, delta, sigma, NULL, err);
}

dpc_status dpc__calibrate_sigma_count(const dpc_event *ev, const dpc_account_opts *o,
                                      double epsilon, double delta, double *sigma,
                                      size_t *evals, dpc_error *err)
{
    cal_ctx c;
    dpc_status st = ctx_init(&c, ev, o, epsilon, delta, err);
    if (st) return st;
    if (!sigma) {
        free(c.parts);
        return dpc_error_param(err, DPC_E_INVALID, "sigma", "output pointer is NULL");
    }
    double smax = 0.0;
    for (size_t i = 0; i < ev->nparts; i++)
        if (ev->parts[i].sensitivity > smax) smax = ev->parts[i].sensitivity;
    int rdp_ok = dpc_event_check(ev, DPC_ACCOUNTANT_RDP, NULL) == DPC_OK;
    if (o->accountant == DPC_ACCOUNTANT_PLD && rdp_ok) st = pld_sigma(&c, smax, sigma, err);
    else st = bisect_sigma(&c, smax, 1e-11, sigma, err);
    if (evals) *evals = c.evals;
    free(c.parts);
    if (st == DPC_E_RANGE && err && !strcmp(err->field, "noise_multiplier")) {
        /* the search's own trial noise is not the caller's: the target epsilon is what asks
         * for noise too small to account (issue 28: epsilon 1e308 was blamed on the noise) */
        char why[DPC_ERROR_MSG_LEN];
        snprintf(why, sizeof why, "%s", err->msg);
        return dpc_error_param(err, DPC_E_RANGE, "epsilon",
                               "%g is beyond what the accountant can calibrate (the noise it "
                               "needs is too small to account: %s)", epsilon, why);
    }
    return st;
}

static int steps_private(cal_ctx *c, size_t t)
{
    c->parts[c->part].count = t;
    int ok, v = eval_ok(c, &ok);
    return ok ? v : 0;
}

dpc_status dpc_account_calibrate_steps(const dpc_event *ev, size_t part,
                                       const dpc_account_opts *o, double epsilon, double delta,
                                       size_t max_steps, size_t *steps, dpc_error *err)
{
    cal_ctx c;
    dpc_status st = ctx_init(&c, ev, o, epsilon, delta, err);
    if (st) return st;
    if (part >= ev->nparts || !steps || max_steps == 0) {
        free(c.parts);
        if (!steps) return dpc_error_param(err, DPC_E_INVALID, "steps", "output pointer is NULL");
        if (max_steps == 0) return dpc_error_param(err, DPC_E_INVALID, "max_steps", "must be >= 1");
        return dpc_error_param(err, DPC_E_INVALID, "part", "%zu is not a component index (< %zu)",
                               part, ev->nparts);
    }
    c.part = part;
    if (!steps_private(&c, 1)) {
        free(c.parts);
        if (c.st) return c.st;
        return dpc_error_param(err, DPC_E_PRIVACY, "epsilon",
                               "even one step exceeds (%g, %g); increase sigma or the "
                               "budget",
                               epsilon, delta);
    }
    /* Exponential search for the first failing count, then integer bisection on (lo, hi). */
    size_t lo = 1, hi = 2;
    for (;;) {
        if (hi >= max_steps) {
            hi = max_steps;
            if (steps_private(&c, hi)) {
                free(c.parts);
                if (c.st) return c.st;
                *steps = max_steps;
                return DPC_OK;
            }
            break;
        }
        if (!steps_private(&c, hi)) break;
        lo = hi;
        hi = hi > SIZE_MAX / 2 ? SIZE_MAX : 2 * hi;
    }
    while (!c.st && hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (steps_private(&c, mid)) lo = mid;
        else hi = mid;
    }
    free(c.parts);
    if (c.st) return c.st;
    *steps = lo;
    return DPC_OK;
}
