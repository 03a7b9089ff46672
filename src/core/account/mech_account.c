/* mech_account.c — correlated-noise mechanisms as accountant events. One description (a dpc_mech
 * plus its dpc_participation) is read by both the trainer and the accountant, with the library
 * convention: noise std per row of Z = sigma * clip * sensitivity(mech, participation). */
#include "account/acc_internal.h"

#include "account/acc_math.h"
#include "common/util.h"

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

dpc_status dpc_account_mech_event(const dpc_mech *m, const dpc_participation *part, double sigma,
                                  double q, dpc_gauss_event *ev, dpc_account_mech_info *info,
                                  dpc_error *err)
{
    dpc_status st;
    if (!m) return dpc_error_set(err, DPC_E_INVALID, "mech: NULL");
    if (!part) return dpc_error_set(err, DPC_E_INVALID, "participation: NULL");
    if (!ev) return dpc_error_set(err, DPC_E_INVALID, "event: output pointer is NULL");
    if ((st = dpc__check_pos(sigma, "sigma", err))) return st;
    if ((st = dpc__check_half_open01(q, "q", err))) return st;
    dpc_sensitivity s, col;
    dpc_participation single = {DPC_PART_MINSEP, 1, 1};
    if ((st = dpc_mech_sensitivity(m, part, &s, err))) return st;
    if ((st = dpc_mech_sensitivity(m, &single, &col, err))) return st;
    if (!(s.value > 0.0) || !(col.value > 0.0))
        return dpc_error_set(err, DPC_E_NUMERIC, "mech: zero sensitivity");
    dpc_account_mech_info inf = {s.value, s.exact, col.value, 0, 1, sigma, DPC_ROUTE_WHOLE_RUN,
                                 0.0, {INFINITY, INFINITY, INFINITY}};
    dpc_gauss_event_init(ev);
    if (q >= 1.0) {
        /* DP-REQ: mech-whole-run: the run releases C G + Z (plus post-processing), a Gaussian
         * mechanism with L2 sensitivity clip * sens(C, participation) (Denisov et al. 2022;
         * nu-DP-FTRL Thm. 1.1, App. A.1) and noise std sigma * clip * sens: one unsampled
         * Gaussian with noise multiplier sigma, rho = 1/(2 sigma^2), mu = 1/sigma. An upper bound
         * on the sensitivity (exact = 0) only makes the guarantee conservative. */
        ev->sigma = sigma;
        ev->count = 1;
    } else {
        if (part->kind != DPC_PART_CYCLIC)
            return dpc_error_set(err, DPC_E_UNSUPPORTED,
                                 "q: amplification needs cyclic Poisson participation (every b "
                                 "steps, b = the band count); use --cyclic / DPC_PART_CYCLIC");
        int banded = strategy_is_banded(m, part->b, err);
        if (banded < 0) return DPC__NOMEM(err, "the strategy matrix");
        if (!banded)
            return dpc_error_set(err, DPC_E_UNSUPPORTED,
                                 "q: amplified banded MF needs a strategy C with at most b = %zu "
                                 "bands; %s is not banded enough (use bsr with bands <= min-sep, "
                                 "identity, or no sampling)",
                                 part->b, dpc_mech_kind_name(dpc_mech_get_params(m)->kind));
        /* DP-REQ: mech-amplified-bandmf: Choquette-Choo et al. 2023 ("(Amplified) Banded Matrix
         * Factorizations"), Sec. 4: with C lower triangular and b-banded, the examples split
         * into b cyclic groups and each step Poisson-sampling its group with rate q, the run is as
         * private as DP-SGD with ceil(n/b) steps, sampling rate q and noise multiplier
         * (noise std) / (clip * max column norm of C). With std sigma * clip * sens that
         * multiplier is sigma * sens / colmax. */
        size_t n = dpc_mech_steps(m), b = part->b, rounds = (n + b - 1) / b;
        if (part->k < rounds) rounds = part->k;
        inf.amplified = 1;
        inf.route = DPC_ROUTE_BANDMF;
        inf.rounds = rounds;
        inf.noise_multiplier = sigma * s.value / col.value;
        ev->sigma = inf.noise_multiplier;
        ev->sampling = DPC_SAMPLING_POISSON;
        ev->q = q;
        ev->count = rounds;
    }
    if (info) *info = inf;
    return DPC_OK;
}
