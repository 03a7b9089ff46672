/* mech_account.c — correlated-noise mechanisms as accountant events. One description (a dpc_mech
 * plus its dpc_participation) is read by both the trainer and the accountant, with the library
 * meaning of the noise multiplier z: noise std per row of Z = z * clip * (max column norm of C). */
#include "account/acc_internal.h"

#include "account/acc_math.h"
#include "common/util.h"

#include <math.h>
#include <stdlib.h>

/* 1 if the strategy C (n x n, lower triangular) has nonzeros only on its first `bands`
 * diagonals; 0 if not; -1 if that cannot be decided (allocation failure). */
static int strategy_is_banded(const dpc_mech *m, size_t bands, dpc_error *err)
{
    size_t n = dpc_mech_steps(m);
    if (bands >= n) return 1; /* every lower-triangular n x n matrix */
    if (dpc_mech_noise_rows(m) != n) return 0; /* TREE: not a square factorization */
    if (dpc_mech_is_toeplitz(m)) {
        double *c = dpc__malloc_array(n, sizeof *c);
        if (!c) return -1;
        int ok = dpc_mech_strategy_coeffs(m, c, n, err) == DPC_OK;
        for (size_t j = bands; ok && j < n; j++) ok = c[j] == 0.0;
        free(c);
        return ok;
    }
    size_t nn;
    if (!dpc__mul_ok(n, n, &nn)) return -1;
    double *C = dpc__malloc_array(nn, sizeof *C);
    if (!C) return -1;
    int ok = dpc_mech_dense_strategy(m, C, err) == DPC_OK;
    for (size_t i = 0; ok && i < n; i++)
        for (size_t j = 0; ok && j + bands <= i; j++) ok = C[i * n + j] == 0.0;
    free(C);
    return ok;
}

/* The event of the run whose entries of Z have std inf->noise_std per unit clip (inf carries the
 * sensitivities, z, noise_std and run_sigma). Both public entry points end here. */
static dpc_status event_of(const dpc_mech *m, const dpc_participation *part, double q,
                           dpc_account_mech_info inf, dpc_gauss_event *ev,
                           dpc_account_mech_info *info, dpc_error *err)
{
    double run_sigma = inf.run_sigma;
    dpc_gauss_event_init(ev);
    if (q >= 1.0) {
        /* DP-REQ: mech-whole-run: the run releases C G + Z (plus post-processing), a Gaussian
         * mechanism with L2 sensitivity clip * sens(C, participation) (Denisov et al. 2022;
         * nu-DP-FTRL Thm. 1.1, App. A.1) and noise std clip * noise_std: one unsampled
         * Gaussian with noise multiplier run_sigma = noise_std / sens, rho = 1/(2 run_sigma^2),
         * mu = 1/run_sigma. An upper bound on the sensitivity (exact = 0) only makes the
         * guarantee conservative. */
        ev->sigma = run_sigma;
        ev->count = 1;
    } else {
        if (part->kind != DPC_PART_CYCLIC)
            return dpc_error_param(err, DPC_E_UNSUPPORTED, "q",
                                   "amplification needs cyclic Poisson participation (every b "
                                   "steps, b = the band count: DPC_PART_CYCLIC)");
        int banded = strategy_is_banded(m, part->b, err);
        if (banded < 0) return DPC__NOMEM(err, "the strategy matrix");
        if (!banded)
            return dpc_error_param(err, DPC_E_UNSUPPORTED, "q",
                                   "amplified banded MF needs a strategy C with at most b = %zu "
                                   "bands; %s is not banded enough (use bsr with bands <= the "
                                   "min-separation, identity, or no sampling)",
                                   part->b, dpc_mech_kind_name(dpc_mech_get_params(m)->kind));
        /* DP-REQ: mech-amplified-bandmf: Choquette-Choo et al. 2023 ("(Amplified) Banded Matrix
         * Factorizations"), Sec. 4: with C lower triangular and b-banded, the examples split
         * into b cyclic groups and each step Poisson-sampling its group with rate q, the run is as
         * private as DP-SGD with ceil(n/b) steps, sampling rate q and noise multiplier
         * (noise std) / (clip * max column norm of C) = z. */
        size_t n = dpc_mech_steps(m), b = part->b, rounds = dpc__ceil_div(n, b);
        if (part->k < rounds) rounds = part->k;
        inf.amplified = 1;
        inf.route = DPC_ROUTE_BANDMF;
        inf.rounds = rounds;
        ev->sigma = inf.noise_multiplier;
        ev->sampling = DPC_SAMPLING_POISSON;
        ev->q = q;
        ev->count = rounds;
    }
    if (info) *info = inf;
    return DPC_OK;
}

/* Validates the arguments and computes the two sensitivities every route needs. */
static dpc_status sensitivities(const dpc_mech *m, const dpc_participation *part, double q,
                                const dpc_gauss_event *ev, dpc_sensitivity *s,
                                dpc_sensitivity *col, dpc_error *err)
{
    dpc_status st;
    if (!m) return dpc_error_param(err, DPC_E_INVALID, "mech", "NULL");
    if (!part) return dpc_error_param(err, DPC_E_INVALID, "part", "NULL");
    if (!ev) return dpc_error_param(err, DPC_E_INVALID, "ev", "output pointer is NULL");
    if ((st = dpc__check_half_open01(q, "q", err))) return st;
    dpc_participation single = {DPC_PART_MINSEP, 1, 1};
    if ((st = dpc_mech_sensitivity(m, part, s, err))) return st;
    if ((st = dpc_mech_sensitivity(m, &single, col, err))) return st;
    if (!(s->value > 0.0) || !(col->value > 0.0))
        return dpc_error_param(err, DPC_E_NUMERIC, "mech", "zero sensitivity");
    return DPC_OK;
}

dpc_status dpc_account_mech_event(const dpc_mech *m, const dpc_participation *part,
                                  double noise_multiplier, double q, dpc_gauss_event *ev,
                                  dpc_account_mech_info *info, dpc_error *err)
{
    dpc_sensitivity s, col;
    dpc_status st = sensitivities(m, part, q, ev, &s, &col, err);
    if (st) return st;
    if ((st = dpc__check_pos(noise_multiplier, "noise_multiplier", err))) return st;
    /* given z: the noise is exactly z * colnorm per unit clip */
    dpc_account_mech_info inf = {s.value, s.exact, col.value, 0, 1, noise_multiplier, 0, 0,
                                 DPC_ROUTE_WHOLE_RUN, 0.0,
                                 {INFINITY, INFINITY, INFINITY, INFINITY}, 0, NAN, 0, NULL,
                                 {NULL, NULL, NULL, NULL}, NAN, NULL, 0, NAN, NAN};
    inf.noise_std = noise_multiplier * col.value;
    inf.run_sigma = s.value == col.value ? noise_multiplier : inf.noise_std / s.value;
    if (!(inf.run_sigma > 0) || !isfinite(inf.run_sigma) || !isfinite(inf.noise_std))
        return dpc_error_param(err, DPC_E_NUMERIC, "noise_multiplier",
                               "%g gives the whole-run multiplier %g", noise_multiplier,
                               inf.run_sigma);
    return event_of(m, part, q, inf, ev, info, err);
}

/* The run whose whole-run multiplier is run_sigma (what calibration searches). */
static dpc_account_mech_info info_of_run_sigma(const dpc_sensitivity *s,
                                               const dpc_sensitivity *col, double run_sigma)
{
    dpc_account_mech_info inf = {s->value, s->exact, col->value, 0, 1, 0, 0, run_sigma,
                                 DPC_ROUTE_WHOLE_RUN, 0.0,
                                 {INFINITY, INFINITY, INFINITY, INFINITY}, 0, NAN, 0, NULL,
                                 {NULL, NULL, NULL, NULL}, NAN, NULL, 0, NAN, NAN};
    inf.noise_std = run_sigma * s->value;
    inf.noise_multiplier = s->value == col->value ? run_sigma : inf.noise_std / col->value;
    return inf;
}

dpc_status dpc_account_mech_calibrate(const dpc_mech *m, const dpc_participation *part, double q,
                                      const dpc_account_opts *o, double epsilon, double delta,
                                      double *noise_multiplier, dpc_gauss_event *ev_out,
                                      dpc_account_mech_info *info_out, dpc_error *err)
{
    if (!o) return dpc_error_param(err, DPC_E_INVALID, "o", "NULL");
    dpc_account_opts t = *o;
    dpc_account_opts_for_target(&t, epsilon);
    return dpc__account_mech_calibrate(m, part, q, &t, epsilon, delta, noise_multiplier, ev_out,
                                       info_out, err);
}

dpc_status dpc__account_mech_calibrate(const dpc_mech *m, const dpc_participation *part, double q,
                                       const dpc_account_opts *o, double epsilon, double delta,
                                       double *noise_multiplier, dpc_gauss_event *ev_out,
                                       dpc_account_mech_info *info_out, dpc_error *err)
{
    dpc_gauss_event ev;
    dpc_account_mech_info info;
    dpc_sensitivity s, col;
    dpc_status st = sensitivities(m, part, q, &ev, &s, &col, err);
    if (st) return st;
    if (!noise_multiplier)
        return dpc_error_param(err, DPC_E_INVALID, "noise_multiplier", "output pointer is NULL");
    /* the event at run_sigma = 1; its multiplier is linear in run_sigma */
    if ((st = event_of(m, part, q, info_of_run_sigma(&s, &col, 1.0), &ev, &info, err))) return st;
    dpc_event e = {DPC_NEIGHBOR_ZERO_OUT, 1, &ev};
    double z;
    if ((st = dpc__calibrate_sigma_count(&e, o, epsilon, delta, &z, NULL, err))) return st;
    double run_sigma = info.amplified ? z / info.noise_multiplier : z;
    if ((st = event_of(m, part, q, info_of_run_sigma(&s, &col, run_sigma), &ev, &info, err)))
        return st;
    *noise_multiplier = info.noise_multiplier;
    if (ev_out) *ev_out = ev;
    if (info_out) *info_out = info;
    return DPC_OK;
}

/* epsilon of the run with n steps (the mechanism rebuilt for n) */
static dpc_status eps_at(const dpc_mech_params *p, size_t n, const dpc_participation *part,
                         double z, double q, const dpc_account_opts *o, double delta, double *eps,
                         dpc_error *err)
{
    dpc_mech_params pn = *p;
    pn.steps = n;
    dpc_mech *m = NULL;
    /* progress: one report per evaluation of the search (about 2 log2(max_steps)) */
    dpc_status st = dpc__progress(&o->progress, log2((double)n + 1.0), 2.0 * 40.0, err);
    if (st) return st;
    st = dpc_mech_new(&m, &pn, err);
    if (st) return dpc_error_nest(err, "mech");
    dpc_gauss_event ev;
    st = dpc_account_mech_event(m, part, z, q, &ev, NULL, err);
    dpc_mech_free(m);
    if (st) return st;
    dpc_event e = {q < 1.0 ? DPC_NEIGHBOR_ADD_REMOVE : DPC_NEIGHBOR_ZERO_OUT, 1, &ev};
    dpc_account_result r;
    if ((st = dpc_account_epsilon(&e, o, delta, &r, err))) return st;
    *eps = r.epsilon;
    return DPC_OK;
}

dpc_status dpc_account_mech_steps(const dpc_mech_params *p, const dpc_participation *part,
                                  double noise_multiplier, double q, const dpc_account_opts *o,
                                  double epsilon, double delta, size_t max_steps, size_t *steps,
                                  dpc_error *err)
{
    if (!p) return dpc_error_param(err, DPC_E_INVALID, "p", "NULL");
    if (!steps) return dpc_error_param(err, DPC_E_INVALID, "steps", "output pointer is NULL");
    if (p->kind == DPC_MECH_DENSE)
        return dpc_error_param(err, DPC_E_UNSUPPORTED, "mech.kind",
                               "a dense strategy is defined for one n only");
    if (max_steps == 0) return dpc_error_param(err, DPC_E_INVALID, "max_steps", "must be >= 1");
    dpc_status st;
    if ((st = dpc__check_pos(epsilon, "epsilon", err))) return st;
    double e;
    if ((st = eps_at(p, 1, part, noise_multiplier, q, o, delta, &e, err))) return st;
    if (e > epsilon)
        return dpc_error_param(err, DPC_E_PRIVACY, "epsilon",
                               "even one step exceeds (%g, %g)-DP (epsilon %g)", epsilon, delta,
                               e);
    /* exponential search for an infeasible hi, then bisection on [lo feasible, hi infeasible) */
    size_t lo = 1, hi = 2;
    for (;;) {
        if (hi >= max_steps) {
            hi = max_steps;
            if ((st = eps_at(p, hi, part, noise_multiplier, q, o, delta, &e, err))) return st;
            if (e <= epsilon) {
                *steps = hi;
                return DPC_OK;
            }
            break;
        }
        if ((st = eps_at(p, hi, part, noise_multiplier, q, o, delta, &e, err))) return st;
        if (e > epsilon) break;
        lo = hi;
        hi = hi > max_steps / 2 ? max_steps : 2 * hi;
    }
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if ((st = eps_at(p, mid, part, noise_multiplier, q, o, delta, &e, err))) return st;
        if (e <= epsilon) lo = mid;
        else hi = mid;
    }
    *steps = lo;
    return DPC_OK;
}
