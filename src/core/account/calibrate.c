/* calibrate.c — noise and step calibration for every accountant: bracket the crossing of the
 * monotone map parameter -> epsilon, then bisect (sigma: on log sigma; steps: on integers).
 * The answer is always on the private side of the crossing. */
#include "account/acc_internal.h"

#include "account/acc_math.h"
#include "common/util.h"

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
    dpc_error *err;
} cal_ctx;

static int eval_ok(cal_ctx *c, int *ok)
{
    dpc_account_result r;
    dpc_status st = dpc_account_epsilon(&c->ev, c->o, c->delta, &r, c->err);
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

dpc_status dpc_account_calibrate_sigma(const dpc_event *ev, const dpc_account_opts *o,
                                       double epsilon, double delta, double *sigma,
                                       dpc_error *err)
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
    /* Bracket [lo, hi] with lo not private and hi private, starting at sigma = sensitivity. */
    double lo = smax, hi = smax;
    if (sigma_private(smax, &c)) {
        do {
            hi = lo;
            lo *= 0.5;
        } while (!c.st && lo > 1e-12 * smax && sigma_private(lo, &c));
        if (!c.st && lo <= 1e-12 * smax) { /* private for (almost) any sigma */
            free(c.parts);
            *sigma = hi;
            return DPC_OK;
        }
    } else {
        do {
            lo = hi;
            hi *= 2.0;
        } while (!c.st && hi <= 1e9 * smax && !sigma_private(hi, &c));
        if (!c.st && hi > 1e9 * smax) {
            free(c.parts);
            return dpc_error_param(err, DPC_E_PRIVACY, "epsilon",
                                   "(%g, %g) cannot be met with sigma <= %g times the "
                                   "sensitivity",
                                   epsilon, delta, 1e9);
        }
    }
    /* Bisection on log sigma; stop when the bracket is relatively 1e-11 wide or when the
     * private end is within 1e-10 (relative) of the target epsilon. */
    while (!c.st && hi / lo - 1.0 > 1e-11) {
        double mid = sqrt(lo) * sqrt(hi);
        for (size_t i = 0; i < c.ev.nparts; i++) c.parts[i].sigma = mid;
        dpc_account_result r;
        dpc_status est = dpc_account_epsilon(&c.ev, c.o, c.delta, &r, c.err);
        if (est) {
            c.st = est;
            break;
        }
        if (r.epsilon <= c.eps) {
            hi = mid;
            if (c.eps - r.epsilon <= 1e-10 * (c.eps > 1.0 ? c.eps : 1.0)) break;
        } else {
            lo = mid;
        }
    }
    free(c.parts);
    if (c.st) return c.st;
    *sigma = hi;
    return DPC_OK;
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
