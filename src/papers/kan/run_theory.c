/* run_theory.c — the decisions of a run of the paper's KAN that precede and follow its training
 * (dpcorr/papers/kan.h): inputs into the unit ball, the theory settings (eta_max, G_c, the NTK
 * margin and R*), the derived privacy and lambda-CGD parameters, and the paper's bounds for the
 * run, so that every front end makes them alike. */
#include "common/util.h"
#include "kan/kan_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

dpc_status dpc_kan2_to_unit_ball(dpc_dataset *ds, dpc_kan_ball_action *action, double *bound,
                                 dpc_error *err)
{
    if (action) *action = DPC_KAN_BALL_KEPT;
    if (!ds) return DPC_OK;
    double b = ds->x_norm_bound;
    if (bound) *bound = b;
    if (b > 1) {
        if (action) *action = DPC_KAN_BALL_SCALED;
        return dpc_dataset_scale(ds, 1.0 / b, err);
    }
    if (b == 0) {
        if (action) *action = DPC_KAN_BALL_CLIPPED;
        return dpc_dataset_clip_rows(ds, 1.0, err);
    }
    return DPC_OK;
}

/* Re-names a failure of R* after the radius (what the run asked for), keeping its message. */
static dpc_status radius_error(dpc_error *err, dpc_status st, const dpc_error *e)
{
    size_t fl = strlen(e->field);
    const char *body = e->msg;
    if (fl && !strncmp(body, e->field, fl) && body[fl] == ':' && body[fl + 1] == ' ') body += fl + 2;
    return dpc_error_param(err, st, "radius", "%s", body);
}

/* The certified NTK margin at W0 on the training set. */
static dpc_status margin_at(const dpc_kan2 *k, const double *W0, const dpc_dataset *tr,
                            size_t iters, dpc_kan_margin *mg, dpc_error *err)
{
    double *ypm = malloc(tr->n * sizeof *ypm);
    if (!ypm) return DPC__NOMEM(err, "the margin's labels");
    for (size_t i = 0; i < tr->n; i++) ypm[i] = tr->y[i] == 1.0 ? 1.0 : -1.0;
    dpc_status st = dpc_kan2_margin(k, W0, tr->x, ypm, tr->n, iters, 1e-3, mg, err);
    free(ypm);
    if (st && err) dpc_error_prefix(err, "margin");
    return st;
}

dpc_status dpc_kan2_run_theory(const dpc_kan2 *k, const double *W0, const dpc_dataset *train,
                               size_t T, const dpc_kan2_theory_want *want, dpc_kan_run_config *rc,
                               dpc_kan_consts *consts, dpc_kan_margin *mg, dpc_error *err)
{
    if (!k || !W0 || !train || !want || !rc || !consts || !mg)
        return dpc_error_param(err, DPC_E_INVALID, "run_theory", "NULL argument");
    dpc_status st = dpc_kan2_consts(k, rc->conf_delta, consts, err);
    if (st) return st;
    if (want->lr) rc->lr = consts->eta_max;
    if (want->clip) rc->clip = consts->G_c;
    /* the margin (for a report, and R*): by default only while the kernel is cheap (n <= 2048);
     * R* needs it at any n (columns formed on the fly) */
    if (!(want->radius || (want->margin && train->n <= 2048))) return DPC_OK;
    if ((st = margin_at(k, W0, train, rc->margin_iters, mg, err))) return st;
    if (!want->radius) return DPC_OK;
    if (!(mg->gamma_lo > 0))
        return dpc_error_param(err, DPC_E_INVALID, "radius",
                               "theory: no positive NTK margin certified (gamma_lo = %g)",
                               mg->gamma_lo);
    dpc_error e = {0};
    st = dpc_kan_radius(rc->C_R, T, train->n, rc->conf_delta, mg->gamma_lo, &rc->radius, &e);
    if (!st) return DPC_OK;
    if (!strcmp(e.field, "C_R")) { /* the constant itself: its own name */
        if (err) *err = e;
        return st;
    }
    return radius_error(err, st, &e);
}

void dpc_kan2_run_bounds(const dpc_kan2 *k, const dpc_kan_run_config *rc, size_t n, size_t d,
                         size_t T, double noise_std, const dpc_kan_margin *mg,
                         dpc_kan2_bounds *out)
{
    if (!out) return;
    *out = (dpc_kan2_bounds){.A_corr = NAN, .A_van = NAN, .A_non = NAN, .m_lo = NAN, .m_hi = NAN,
                             .m_edge = NAN};
    if (!k || !rc || !mg) return;
    dpc_kan_rate_in ri = {.n = n, .m = dpc_kan2_get_config(k)->m, .d = d, .T = T, .B = rc->batch,
                          .eta = rc->lr, .lambda = rc->privacy.lambda, .noise_std = noise_std,
                          .gamma = mg->gamma_lo > 0 ? mg->gamma_lo : NAN, .delta = rc->conf_delta};
    if (!(ri.gamma > 0)) return;
    if (dpc_kan_bound_corr(&ri, &out->A_corr, NULL)) out->A_corr = NAN;
    if (dpc_kan_bound_indep(&ri, &out->A_van, NULL)) out->A_van = NAN;
    if (dpc_kan_bound_nonpriv(&ri, &out->A_non, NULL)) out->A_non = NAN;
    dpc_kan_window w;
    if (dpc_kan_width_window(&ri, dpc_kan2_basis(k)->p, rc->clip,
                             isfinite(rc->radius) ? rc->radius : 1.0, &w, NULL))
        w.m_lo = w.m_hi = w.m_edge = NAN;
    out->m_lo = w.m_lo, out->m_hi = w.m_hi;
    out->m_edge = isfinite(rc->radius) ? w.m_edge : NAN;
}

dpc_status dpc_kan_run_resolve(dpc_kan_run_config *rc, size_t n, size_t T, dpc_noise_form form,
                               double *noise_std, dpc_ledger *L, dpc_kan_lcgd_config *lc,
                               dpc_error *err)
{
    if (!rc || !noise_std || !L || !lc)
        return dpc_error_param(err, DPC_E_INVALID, "run_resolve", "NULL argument");
    if (T < 1) return dpc_error_param(err, DPC_E_INVALID, "iterates", "must be >= 1, got 0");
    rc->privacy.n = n;
    rc->privacy.batch = rc->batch;
    rc->privacy.steps = T - 1;
    dpc_status st = dpc_kan_lcgd_privacy(&rc->privacy, noise_std, L, err);
    if (st) return st;
    dpc_kan_lcgd_config_init(lc);
    lc->n = n, lc->iterates = T, lc->batch = rc->batch, lc->eta = rc->lr, lc->clip = rc->clip;
    lc->lambda = rc->privacy.lambda, lc->noise_std = *noise_std, lc->radius = rc->radius;
    lc->noise_form = form;
    return dpc_kan_lcgd_config_check(lc, err);
}
