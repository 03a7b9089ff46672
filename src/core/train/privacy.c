/* privacy.c — from the run's exact description (mechanism, sampler, participation) to the
 * noise multiplier and the ledger. The accountant sees the same dpc_mech and dpc_participation
 * objects the noise generator and the sampler use. */
#include "train/train_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#ifdef DPC_TEST_BREAK_PRIVACY
/* TEST-ONLY. Never defined for libdpcorr, the CLI or any other binary: tests/test_audit_broken.c
 * compiles this file itself with DPC_TEST_BREAK_PRIVACY to check that the privacy audit
 * (dpcorr/audit.h) catches a run that breaks its own claim. dpc__test_break_privacy (defined by
 * that test) selects the fault: 1 = the noise scaled down 4x while the ledger claims the
 * calibrated epsilon; 2 = the noise calibrated (and accounted) for a single participation while
 * the ledger claims the run's multi-epoch participation pattern. */
extern int dpc__test_break_privacy;
#endif

/* The noise multiplier of the run: calibrated to (epsilon, delta) or given, over every valid
 * accounting route (whole-run Gaussian, amplified banded MF, MMCC conditional composition). */
static dpc_status noise_of(dpc_trainer *tr, const dpc_mech_run *run, const dpc_account_opts *o,
                           double *z, dpc_error *err)
{
    const dpc_train_config *c = &tr->cfg;
    *z = c->noise_multiplier;
    if (!(c->epsilon > 0)) return DPC_OK;
    dpc_status st = dpc_account_mech_calibrate_run(run, o, c->epsilon, c->delta, z, NULL, err);
    if (st == DPC_E_PRIVACY) {
        char msg[DPC_ERROR_MSG_LEN];
        snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
        return dpc_error_param(err, DPC_E_PRIVACY, "epsilon",
                               "(%g, %g)-DP cannot be met with %zu steps of batch %zu (%s)",
                               c->epsilon, c->delta, tr->n_steps, c->batch, msg);
    }
    return st;
}

#if DPC_DATA_MAX_RELEASES > DPC_LEDGER_MAX_PRE || DPC_DATA_MAX_RELEASES > DPC_MECH_RUN_MAX_PRE
#error "a dataset may hold more releases than a ledger or a run composes"
#endif

/* The training set's private releases (dpc_dataset.release_z) as Gaussian events without
 * sampling; returns their number (0 for a plan, which has no data). pre: (DPC_DATA_MAX_RELEASES) */
static size_t pre_events(const dpc_trainer *tr, dpc_gauss_event *pre)
{
    size_t n = tr->train ? tr->train->n_releases : 0;
    for (size_t k = 0; k < n; k++) {
        dpc_gauss_event_init(&pre[k]);
        pre[k].sigma = tr->train->release_z[k];
    }
    return n;
}

/* epsilon at delta of the pre-releases alone (exact GDP: unsampled Gaussians). */
static dpc_status pre_epsilon(const dpc_gauss_event *pre, size_t n, double delta, double *eps,
                              dpc_error *err)
{
    dpc_event ev = {DPC_NEIGHBOR_ADD_REMOVE, n, pre};
    dpc_account_opts o;
    dpc_account_opts_init(&o, DPC_ACCOUNTANT_GDP);
    dpc_account_result r;
    dpc_status st = dpc_account_epsilon(&ev, &o, delta, &r, err);
    if (!st) *eps = r.epsilon;
    return st;
}

static void fill_ledger(dpc_trainer *tr, dpc_accountant acc, const dpc_account_mech_info *info,
                        const dpc_participation *part, double q, double epsilon)
{
    const dpc_train_config *c = &tr->cfg;
    dpc_ledger *L = &tr->ledger;
    dpc_ledger_init(L);
    snprintf(L->algorithm, sizeof L->algorithm, "dp-ftrl");
    dpc_mech_describe(tr->mech, L->mechanism, sizeof L->mechanism);
    snprintf(L->sampler, sizeof L->sampler, "%s", dpc_sampler_kind_name(c->sampler));
    snprintf(L->accountant, sizeof L->accountant, "%s", dpc_accountant_name(acc));
    /* the identity's bound is the exact random allocation; any other C's the sampling-free
     * bound, with or without the Monte Carlo beside it (omitted above its work limit) */
    int ident = dpc_mech_get_params(tr->mech)->kind == DPC_MECH_IDENTITY;
    if (info->route == DPC_ROUTE_BALLS_IN_BINS)
        snprintf(L->route, sizeof L->route, "balls-in-bins: %s (add/remove)",
                 !info->bib_deterministic ? "Monte Carlo upper confidence bound"
                 : !ident                 ? "sampling-free bound (Renyi DP, post-processing)"
                                          : "random allocation, exact bound");
    else
        snprintf(L->route, sizeof L->route, "%s (%s, %s)",
                 /* MMCC always spends part of delta on its conditioning; the two-band Renyi
                  * bound beside it (mmcc_band.c) spends none */
                 info->route == DPC_ROUTE_MMCC && info->delta_slack == 0.0
                     ? "Poisson two-band Renyi bound (MMCC route)"
                 : info->route == DPC_ROUTE_MMCC   ? "MMCC conditional composition"
                 : info->route == DPC_ROUTE_BANDMF ? "amplified by sampling (banded MF)"
                                                   : "whole-run Gaussian",
                 dpc_accountant_name(acc), info->amplified ? "add/remove" : "zero-out");
    if (info->note) snprintf(L->note, sizeof L->note, "%s", info->note);
    for (int k = 0; k < DPC_ROUTE_COUNT; k++) {
        L->eps_routes[k] = info->eps_routes[k];
        L->route_why[k] = info->route_why[k];
    }
    L->epsilon_single = info->epsilon_single;
    L->advice = info->advice;
    if (info->route == DPC_ROUTE_BALLS_IN_BINS && info->mc_samples) {
        L->mc_samples = info->mc_samples;
        L->mc_confidence = info->mc_confidence;
        L->mc_seed = info->mc_seed;
        if (info->bib_deterministic) L->epsilon_mc = info->eps_bib_mc;
    }
    if (info->route == DPC_ROUTE_BALLS_IN_BINS) {
        if (info->bib_deterministic)
            snprintf(L->guarantee, sizeof L->guarantee, "deterministic");
        else
            snprintf(L->guarantee, sizeof L->guarantee, "high-probability, confidence %.10g",
                     info->mc_confidence);
    }
    snprintf(L->calibration, sizeof L->calibration, "%s", c->epsilon > 0 ? "accountant" : "given");
    L->neighbor = info->amplified ? DPC_NEIGHBOR_ADD_REMOVE : DPC_NEIGHBOR_ZERO_OUT;
    L->part = *part;
    L->q = q;
    L->rounds = info->rounds;
    L->amplified = info->amplified;
    L->noise_multiplier = info->noise_multiplier;
    L->sensitivity = info->sensitivity;
    L->sensitivity_exact = info->sensitivity_exact;
    L->column_norm = info->column_norm;
    L->noise_std = info->noise_std;
    L->epsilon_target = c->epsilon > 0 ? c->epsilon : NAN;
    L->delta = c->delta;
    L->delta_derived = tr->delta_derived;
    L->epsilon = epsilon;
    L->steps = tr->n_steps;
    L->steps_per_epoch = tr->sdesc.steps_per_epoch;
    L->expected_batch = tr->sdesc.expected_batch;
    L->rng_mode = tr->rng.mode;
    L->seed = tr->rng.seed;
}

dpc_status dpc__train_mech(dpc_trainer *tr, dpc_error *err)
{
    dpc_train_config *c = &tr->cfg;
    if (dpc__train_default_blt(&c->mech)) {
        /* the trainer owns the strategy; its resolved configuration points at its arrays */
        dpc_status st = dpc_train_default_blt(c, &tr->blt, err);
        if (st) return st;
        c->mech.nbuf = tr->blt->nbuf;
        c->mech.theta = tr->blt->theta;
        c->mech.omega = tr->blt->omega;
    }
    dpc_status st = dpc_mech_new(&tr->mech, &c->mech, err);
    if (st) return dpc_error_nest(err, "mech");
    if (c->noise_form == DPC_NOISE_REPLAY && !dpc_mech_form_available(tr->mech, DPC_NOISE_REPLAY))
        return dpc_error_param(err, DPC_E_UNSUPPORTED, "noise_form",
                               "%s has no replay form (its state depends on past outputs); use "
                               "buffer or auto",
                               dpc_mech_kind_name(c->mech.kind));
    return DPC_OK;
}

dpc_status dpc__train_privacy(dpc_trainer *tr, dpc_error *err)
{
    const dpc_train_config *c = &tr->cfg;
    dpc_status st;
    dpc_participation part = tr->sdesc.part;
    double q = tr->sdesc.poisson ? tr->sdesc.q : 1.0;
    int amplified = q < 1.0, bib = tr->sdesc.balls_in_bins;
    /* Amplified routes compose subsampled Gaussians: RDP or PLD. The whole-run Gaussian is
     * exact under GDP (and PLD); zCDP/RDP are allowed when asked for. */
    dpc_accountant acc = c->accountant;
    if (amplified && (acc == DPC_ACCOUNTANT_GDP || acc == DPC_ACCOUNTANT_ZCDP))
        return dpc_error_param(err, DPC_E_UNSUPPORTED, "accountant",
                               "%s cannot account Poisson amplification; use pld or rdp",
                               dpc_accountant_name(acc));
    /* A single Gaussian mechanism is accounted exactly by GDP; RDP/PLD could only be looser
     * (or equal), so they are replaced. zCDP is kept when asked for (the nu-DP-FTRL paper's
     * notion), at the price of its conversion slack. Balls-in-bins runs keep PLD/RDP: their
     * amplified route is taken when it is the best (GDP/zCDP: whole run only). */
    if (!amplified && !bib && acc != DPC_ACCOUNTANT_ZCDP) acc = DPC_ACCOUNTANT_GDP;
    dpc_account_opts o;
    dpc_account_opts_init(&o, acc);
    o.progress = tr->progress; /* balls-in-bins and MMCC calibrations take seconds */
    dpc_gauss_event pre[DPC_DATA_MAX_RELEASES];
    size_t n_pre = pre_events(tr, pre);
    dpc_mech_run run = {tr->mech, part, q, tr->sdesc.balls_in_bins, n_pre ? pre : NULL, n_pre};
#ifdef DPC_TEST_BREAK_PRIVACY
    if (dpc__test_break_privacy == 2) run.part.k = 1; /* TEST-ONLY fault 2 (see above) */
#endif
    double z;
    if ((st = noise_of(tr, &run, &o, &z, err))) return st;
    /* the calibrated run's epsilon on the grid its calibration used */
    if (c->epsilon > 0) dpc_account_opts_for_target(&o, c->epsilon);
    dpc_account_mech_info info;
    dpc_account_result res;
    if ((st = dpc_account_mech_epsilon(&run, z, &o, c->delta, &res, &info, err))) return st;
    if (c->epsilon > 0 && res.epsilon > c->epsilon * (1 + 1e-9))
        return dpc_error_param(err, DPC_E_PRIVACY, "epsilon",
                               "internal: calibrated noise multiplier %.9g gives epsilon %.9g > "
                               "target %g", info.noise_multiplier, res.epsilon, c->epsilon);
    if (info.route == DPC_ROUTE_WHOLE_RUN && acc != DPC_ACCOUNTANT_ZCDP) acc = DPC_ACCOUNTANT_GDP;
    fill_ledger(tr, acc, &info, &part, q, res.epsilon);
    tr->ledger.n_pre = n_pre;
    for (size_t k = 0; k < n_pre; k++) tr->ledger.pre_noise_multiplier[k] = pre[k].sigma;
    if (n_pre && (st = pre_epsilon(pre, n_pre, c->delta, &tr->ledger.epsilon_pre, err)))
        return st;
    tr->noise_scale = info.noise_std * c->clip;
#ifdef DPC_TEST_BREAK_PRIVACY
    if (dpc__test_break_privacy == 1) tr->noise_scale /= 4.0; /* TEST-ONLY fault 1 */
#endif
    if (!(tr->noise_scale > 0) || !isfinite(tr->noise_scale))
        return dpc_error_param(err, DPC_E_NUMERIC, "noise_multiplier",
                               "noise scale %g is not a positive number", tr->noise_scale);
    return DPC_OK;
}

dpc_status dpc_trainer_epsilon_at(const dpc_trainer *tr, size_t t, double *eps, dpc_error *err)
{
    const dpc_ledger *L = &tr->ledger;
    if (t >= tr->n_steps) {
        *eps = L->epsilon;
        return DPC_OK;
    }
    dpc_gauss_event parts[1 + DPC_DATA_MAX_RELEASES];
    size_t n_pre = pre_events(tr, parts + 1);
    if (t == 0) {
        *eps = 0.0;
        return n_pre ? pre_epsilon(parts + 1, n_pre, L->delta, eps, err) : DPC_OK;
    }
    if (tr->dist.rank != 0)
        return dpc_error_param(err, DPC_E_UNSUPPORTED, "tr",
                               "rank %zu: accounting runs on rank 0 only", tr->dist.rank);
    dpc_accountant acc;
    if (dpc_accountant_parse(L->accountant, &acc, err)) return DPC_E_STATE;
    dpc_account_opts o;
    dpc_account_opts_init(&o, acc);
    /* Progress reports use a 10x coarser PLD grid: still a pessimistic (valid) bound, ~10x
     * cheaper; the full run's epsilon (t = n, above) is the ledger's. */
    if (acc == DPC_ACCOUNTANT_PLD) o.pld_interval *= 10.0;
    dpc_gauss_event ge;
    dpc_gauss_event_init(&ge);
    /* the prefix composed with the pre-releases (made before step 0) */
    dpc_event ev = {L->amplified ? DPC_NEIGHBOR_ADD_REMOVE : DPC_NEIGHBOR_ZERO_OUT, 1 + n_pre,
                    parts};
    if (!strncmp(L->route, "MMCC", 4) || !strncmp(L->route, "balls-in-bins", 13)) {
        *eps = L->epsilon; /* the first t rows are post-processing of the whole run */
        return DPC_OK;
    }
    if (L->amplified) {
        /* the same subsampled Gaussian, composed over the opportunities within t steps */
        size_t r = (t + L->part.b - 1) / L->part.b;
        if (r > L->rounds) r = L->rounds;
        ge.sigma = L->noise_multiplier;
        ge.sampling = DPC_SAMPLING_POISSON;
        ge.q = L->q;
        ge.count = r;
    } else {
        /* the released prefix is the mechanism on t steps (the leading block of C) with the
         * pattern's participations within t steps, under the run's noise */
        const dpc_mech_params *mp = dpc_mech_get_params(tr->mech);
        if (mp->kind == DPC_MECH_DENSE) {
            *eps = L->epsilon; /* no prefix mechanism object for dense strategies: report all */
            return DPC_OK;
        }
        dpc_mech_params q = *mp;
        q.steps = t;
        dpc_mech *m = NULL;
        dpc_status st = dpc_mech_new(&m, &q, err);
        if (st) return st;
        dpc_participation part = L->part;
        size_t per = part.kind == DPC_PART_CYCLIC ? part.b : L->steps_per_epoch;
        size_t kt = (t + per - 1) / per; /* participations possible within t steps */
        if (kt < part.k) part.k = kt;
        dpc_sensitivity sv;
        st = dpc_mech_sensitivity(m, &part, &sv, err);
        dpc_mech_free(m);
        if (st) return st;
        ge.sigma = L->noise_std / sv.value;
    }
    parts[0] = ge;
    dpc_account_result res;
    dpc_status st = dpc_account_epsilon(&ev, &o, L->delta, &res, err);
    if (st) return st;
    *eps = res.epsilon;
    return DPC_OK;
}
