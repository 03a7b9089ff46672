/* plan.c — options, public prior, the resolved plan (T, b, s, eta, clip, B, K, Gamma), the
 * privacy ledger (through the accountant's calculators) and the theory's preconditions, for
 * DP-AMBSSGD / DP-SSGD / the SGD baselines (Varshney, Thakurta & Jain 2022; note 001). */
#include "common/util.h"
#include "train/field_items.h"
#include "linreg/linreg_internal.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define algo_names dpc__linreg_algo_names
#define rule_names dpc__dpstat_rule_names

const char *dpc_linreg_algo_name(dpc_linreg_algo a)
{
    return (unsigned)a < 4 ? algo_names[a] : "unknown";
}

dpc_status dpc_linreg_algo_parse(const char *s, dpc_linreg_algo *out, dpc_error *err)
{
    for (int k = 0; k < 4; k++)
        if (s && !strcmp(s, algo_names[k])) {
            *out = (dpc_linreg_algo)k;
            return DPC_OK;
        }
    return dpc_error_param(err, DPC_E_INVALID, "algo",
                         "unknown '%s' (expected dp-ambssgd, dp-ssgd, dp-sgd-fixed or sgd)",
                         s ? s : "(null)");
}

const char *dpc_dpstat_rule_name(dpc_dpstat_rule r)
{
    return (unsigned)r < 2 ? rule_names[r] : "unknown";
}

dpc_status dpc_dpstat_rule_parse(const char *s, dpc_dpstat_rule *out, dpc_error *err)
{
    for (int k = 0; k < 2; k++)
        if (s && !strcmp(s, rule_names[k])) {
            *out = (dpc_dpstat_rule)k;
            return DPC_OK;
        }
    return dpc_error_param(err, DPC_E_INVALID, "dpstat_rule", "unknown '%s' (expected margin or paper)",
                         s ? s : "(null)");
}

void dpc_linreg_prior_init(dpc_linreg_prior *p)
{
    dpc_field_defaults(dpc_linreg_prior_fields(), p);
}

dpc_status dpc_linreg_prior_from_spectrum(dpc_linreg_prior *p, const double *lambda, size_t d,
                                          dpc_error *err)
{
    if (!p || !lambda || d == 0)
        return dpc_error_param(err, DPC_E_INVALID, "prior", "NULL argument or empty spectrum");
    double mx = 0, mn = INFINITY, tr = 0;
    for (size_t k = 0; k < d; k++) {
        if (!(lambda[k] > 0) || !isfinite(lambda[k]))
            return dpc_error_param(err, DPC_E_INVALID, "prior", "lambda[%zu] = %g must be positive",
                                 k, lambda[k]);
        mx = lambda[k] > mx ? lambda[k] : mx;
        mn = lambda[k] < mn ? lambda[k] : mn;
        tr += lambda[k];
    }
    p->h_norm = mx;
    p->kappa = mx / mn;
    p->r_x = sqrt(tr);
    return DPC_OK;
}

void dpc_linreg_opts_init(dpc_linreg_opts *o, dpc_linreg_algo algo)
{
    dpc_field_defaults(dpc_linreg_opts_fields(), o);
    o->algo = algo;
}

/* The prior's fields that must be set (0 is their unset value); their ranges are the table's. */
static dpc_status check_prior_set(const dpc_linreg_prior *p, dpc_error *err)
{
    if (p->h_norm == 0)
        return dpc_error_param(err, DPC_E_INVALID, "prior.h_norm", "must be a finite number > 0, got 0");
    if (p->kappa == 0)
        return dpc_error_param(err, DPC_E_INVALID, "prior.kappa", "must be a finite number >= 1, got 0");
    if (p->r_x == 0)
        return dpc_error_param(err, DPC_E_INVALID, "prior.r_x", "must be a finite number > 0, got 0");
    return DPC_OK;
}

/* Batch layout: T, b, s for the mini-batch algorithms. */
static dpc_status layout(dpc_linreg_plan *pl, const dpc_linreg_opts *o, dpc_error *err)
{
    size_t n = pl->n, T;
    if (o->algo == DPC_LINREG_SSGD) { /* Alg. 1: N single-record steps, N even */
        pl->steps = n - n % 2;
        pl->batch = 1;
        pl->stat_batch = 0;
        if (pl->steps < 2) return dpc_error_set(err, DPC_E_INVALID, "data set: need N >= 2 records");
        return DPC_OK;
    }
    if (o->steps) {
        if (o->steps % 2)
            return dpc_error_param(err, DPC_E_INVALID, "steps", "T must be even and >= 2, got %zu",
                                 o->steps);
        T = o->steps;
    } else {
        double c1 = o->c1 > 0 ? o->c1 : 3.0;
        /* Thm. 3.7: T = c1 kappa log N, an even integer (note §2.6.10) */
        double t = ceil(c1 * pl->prior.kappa * pl->log_n);
        if (!(t < 1e15)) return dpc_error_param(err, DPC_E_INVALID, "c1", "T = %g steps", t);
        T = (size_t)t;
        T += T % 2;
        if (T < 2) T = 2;
    }
    if (T > n)
        return dpc_error_param(err, DPC_E_INVALID, "steps",
                             "T = %zu exceeds the number of records N = %zu", T, n);
    size_t bs = n / T; /* b + s per step; N - T (b+s) records are left over */
    size_t s = o->stat_batch;
    if (o->algo == DPC_LINREG_AMBSSGD && s == 0) s = bs / 11; /* s = b/10, b = 10N/(11T) */
    if (o->algo == DPC_LINREG_AMBSSGD && s == 0)
        return dpc_error_param(err, DPC_E_INVALID, "stat_batch",
                             "N/T = %zu records per step leave no stat records "
                             "(need N/T >= 11, or set the stat batch)",
                             bs);
    if (s >= bs)
        return dpc_error_param(err, DPC_E_INVALID, "stat_batch",
                             "s = %zu leaves no gradient records (N/T = %zu)", s, bs);
    pl->steps = T;
    pl->stat_batch = s;
    pl->batch = bs - s;
    return DPC_OK;
}

/* The ledger's common fields: the run releases independent Gaussian noise on disjoint
 * batches of one shuffled pass (replace-one: sensitivity 2 zeta/b of the mean, 2 per unit clip
 * of the sum). */
static void ledger_base(dpc_linreg_plan *pl, const dpc_linreg_opts *o)
{
    dpc_ledger *L = &pl->ledger;
    dpc_ledger_init(L);
    snprintf(L->algorithm, sizeof L->algorithm, "%s", dpc_linreg_algo_name(o->algo));
    snprintf(L->mechanism, sizeof L->mechanism, "independent Gaussian noise");
    snprintf(L->sampler, sizeof L->sampler, "shuffled single pass");
    L->neighbor = DPC_NEIGHBOR_REPLACE_ONE;
    L->sensitivity = L->column_norm = 2.0;
    L->sensitivity_exact = 1;
    L->delta = o->delta;
    L->epsilon_target = o->epsilon > 0 ? o->epsilon : NAN;
    pl->rho_grad = pl->rho_stat = pl->rho = NAN;
    pl->eps0 = pl->delta0 = NAN;
    pl->noise_multiplier_stat = 0;
}

static void ledger_noise(dpc_linreg_plan *pl, double z, const char *calibration)
{
    dpc_ledger *L = &pl->ledger;
    L->noise_multiplier = z;
    L->noise_std = 2.0 * z;
    snprintf(L->calibration, sizeof L->calibration, "%s", calibration);
}

/* DP-SSGD: amplification by shuffling; the paper's eps0 is the classical Gaussian bound. */
static dpc_status privacy_ssgd(dpc_linreg_plan *pl, const dpc_linreg_opts *o, dpc_error *err)
{
    dpc_ledger *L = &pl->ledger;
    size_t n = pl->steps; /* records the shuffled pass processes */
    int paper = o->calibration == DPC_CALIBRATION_PAPER;
    double z = o->noise_multiplier;
    dpc_status st;
    if (o->epsilon > 0 && (st = dpc_account_dpssgd_alpha(o->epsilon, n, o->delta, paper, &z, err)))
        return dpc_error_nest(err, "epsilon");
    ledger_noise(pl, z, o->epsilon > 0 ? (paper ? "paper: classical Gaussian eps0 (Thm. 3.1)"
                                                : "accountant")
                                       : "given");
    snprintf(L->accountant, sizeof L->accountant, "shuffle");
    st = dpc_account_dpssgd_epsilon(z, n, o->delta, 0, &L->epsilon, &pl->eps0, &pl->delta0, err);
    if (st == DPC_E_PRIVACY && o->epsilon == 0) {
        /* a multiplier given outside the shuffling theorem's range: run, but claim nothing */
        L->epsilon = INFINITY;
        snprintf(L->route, sizeof L->route,
                 "none: the noise is outside the shuffling theorem's range (no guarantee)");
        return DPC_OK;
    }
    if (st) return dpc_error_nest(err, "noise_multiplier");
    dpc_error e2 = {0};
    if (dpc_account_dpssgd_epsilon(z, n, o->delta, 1, &L->epsilon_paper, NULL, NULL, &e2))
        L->epsilon_paper = NAN;
    snprintf(L->route, sizeof L->route,
             "amplification by shuffling (Feldman, McMillan & Talwar 2021, Thm. 3.8)");
    return DPC_OK;
}

/* AMBSSGD and FIXED: Gaussians on disjoint batches; the accountant composes them exactly
 * (GDP), the paper through zCDP and Bun & Steinke. */
static dpc_status privacy_gauss(dpc_linreg_plan *pl, const dpc_linreg_opts *o, dpc_error *err)
{
    dpc_ledger *L = &pl->ledger;
    int stat = o->algo == DPC_LINREG_AMBSSGD, paper = o->calibration == DPC_CALIBRATION_PAPER;
    size_t parts = stat ? 2 : 1; /* the gradient, and DP-STAT with the same multiplier */
    double z = o->noise_multiplier;
    dpc_status st = DPC_OK;
    if (o->epsilon > 0 && paper) {
        if (stat) st = dpc_account_ambssgd_alpha(o->epsilon, o->delta, 1, &z, err);
        else {
            double r;
            if (!(st = dpc_zcdp_rho_for(o->epsilon, o->delta, DPC_ZCDP_BUN_STEINKE, &r, err)))
                st = dpc_zcdp_sigma_for(r, 1, &z, err); /* rho = 1/(2 z^2) (Prop. 1.6) */
        }
    } else if (o->epsilon > 0) {
        double mu;
        if (!(st = dpc_gdp_mu_for(o->epsilon, o->delta, &mu, err)))
            st = dpc_gdp_sigma_for(mu, parts, &z, err); /* mu^2 = parts / z^2 */
    }
    if (st) return dpc_error_nest(err, "epsilon");
    ledger_noise(pl, z, o->epsilon > 0 ? (paper ? (stat ? "paper: Thm. 3.7 closed form"
                                                        : "paper: zCDP (Bun & Steinke)")
                                                : "accountant")
                                       : "given");
    pl->noise_multiplier_stat = stat ? z : 0;
    /* the accountant: GDP of the composed Gaussians (sampling none: any relation) */
    dpc_gauss_event ge[2];
    for (size_t i = 0; i < 2; i++) {
        dpc_gauss_event_init(&ge[i]);
        ge[i].sigma = z;
    }
    dpc_event ev = {DPC_NEIGHBOR_REPLACE_ONE, parts, ge};
    dpc_account_opts ao;
    dpc_account_opts_init(&ao, DPC_ACCOUNTANT_GDP);
    dpc_account_result r;
    if ((st = dpc_account_epsilon(&ev, &ao, o->delta, &r, err))) return st;
    L->epsilon = r.epsilon;
    if (!isfinite(r.epsilon))
        /* e.g. epsilon 1e308: the noise multiplier underflows and the run would release its
         * data outright while reporting "(inf, delta)-DP": refused, not reported */
        return dpc_error_param(err, DPC_E_PRIVACY, o->epsilon > 0 ? "epsilon" : "noise_multiplier",
                               "the run's noise multiplier %g gives no finite epsilon at delta "
                               "%g%s",
                               z, o->delta, o->epsilon > 0 ? ": the target cannot be met" : "");
    snprintf(L->accountant, sizeof L->accountant, "gdp");
    /* the paper's route: zCDP (gradient sensitivity 2, std 2z; K counts of sensitivity 1 and std
     * sqrt(K) z, composed: Lemma 3.10 / Bun & Steinke Lemma 2.3), Bun & Steinke's conversion */
    if ((st = dpc_zcdp_rho_gaussian(2.0, 2.0 * z, &pl->rho_grad, err))) return st;
    pl->rho_stat = 0;
    if (stat) {
        double r1, K = (double)pl->dpstat_k;
        if ((st = dpc_zcdp_rho_gaussian(1.0, sqrt(K) * z, &r1, err))) return st;
        pl->rho_stat = K * r1;
    }
    pl->rho = pl->rho_grad + pl->rho_stat; /* parallel composition: the run costs one step */
    if ((st = dpc_zcdp_epsilon(pl->rho, o->delta, DPC_ZCDP_BUN_STEINKE, &L->epsilon_paper, NULL,
                               err)))
        return st;
    snprintf(L->route, sizeof L->route,
             "whole-run Gaussian, parallel composition over disjoint batches (replace-one)");
    return DPC_OK;
}

/* Privacy: the noise multiplier (calibrated or given) and the ledger. */
static dpc_status privacy(dpc_linreg_plan *pl, const dpc_linreg_opts *given, dpc_error *err)
{
    /* the delta rule of every trainer; the non-private baseline has no guarantee to refuse */
    dpc_linreg_opts r = *given;
    const dpc_linreg_opts *o = &r;
    int derived = 0;
    dpc_status st = dpc_account_resolve_delta(given->delta, pl->n,
                                              given->allow_large_delta ||
                                                  given->algo == DPC_LINREG_SGD,
                                              &r.delta, &derived, err);
    if (st) return st;
    ledger_base(pl, o);
    dpc_ledger *L = &pl->ledger;
    L->delta_derived = derived;
    L->steps = L->steps_per_epoch = pl->steps;
    L->expected_batch = (double)pl->batch;
    if (o->algo == DPC_LINREG_SGD) {
        snprintf(L->route, sizeof L->route, "none (non-private baseline)");
        ledger_noise(pl, 0, "none (non-private)");
        L->epsilon = INFINITY;
        return DPC_OK;
    }
    if (o->epsilon > 0 && o->noise_multiplier != 0)
        return dpc_error_param(err, DPC_E_INVALID, "noise_multiplier",
                               "give either epsilon or noise_multiplier, not both");
    if (o->epsilon == 0 && o->noise_multiplier == 0)
        return dpc_error_param(err, DPC_E_INVALID, "noise_multiplier",
                               "must be a finite number > 0, got 0 (or give epsilon)");
    return o->algo == DPC_LINREG_SSGD ? privacy_ssgd(pl, o, err) : privacy_gauss(pl, o, err);
}

dpc_status dpc_linreg_plan_make(dpc_linreg_plan *pl, const dpc_linreg_opts *o, size_t n, size_t d,
                                dpc_error *err)
{
    if (!pl || !o) return dpc_error_set(err, DPC_E_INVALID, "linreg: NULL argument");
    memset(pl, 0, sizeof *pl);
    /* every field within its range (dpc_linreg_opts_fields, the prior's nested as "prior.k2");
     * below, the fields that must be set and the refusals that involve several */
    dpc_status st = dpc__field_check_overflow(dpc_linreg_opts_fields(), o, err);
    if (!st) st = dpc_field_check(dpc_linreg_opts_fields(), o, err);
    if (st) return st;
    if (n < 2) return dpc_error_set(err, DPC_E_INVALID, "data set: need N >= 2 records, got %zu", n);
    if (d == 0) return dpc_error_set(err, DPC_E_INVALID, "data set: d must be >= 1");
    if ((st = check_prior_set(&o->prior, err))) return st;
    pl->algo = o->algo;
    pl->n = n;
    pl->d = d;
    pl->prior = o->prior;
    pl->log_n = log((double)n);
    pl->dpstat_rule = o->dpstat_rule;
    if ((st = layout(pl, o, err))) return st;
    pl->tail_start = pl->steps / 2;
    pl->unused = n - pl->steps * (pl->batch + pl->stat_batch);
    const dpc_linreg_prior *P = &pl->prior;
    double rx2 = P->r_x * P->r_x, b = (double)pl->batch;
    if (o->eta != 0) {
        pl->eta = o->eta;
    } else if (o->algo == DPC_LINREG_SSGD) {
        pl->eta = 1.0 / (4.0 * rx2); /* Cor. 3.3: 1/(4d) with R_x^2 = d; capped below (ledger) */
    } else {
        pl->eta = b / (rx2 + (b - 1.0) * P->h_norm); /* Thm. 3.7 (Jain et al. 2018) */
    }
    /* clip */
    pl->clip = NAN;
    pl->clip_scale = NAN;
    if (o->algo == DPC_LINREG_AMBSSGD) {
        pl->clip_scale = P->r_x * pow(pl->log_n, P->a); /* Alg. 2 line 8 */
    } else if (o->algo == DPC_LINREG_SGD) {
        pl->clip = INFINITY;
    } else if (o->clip != 0) {
        pl->clip = o->clip;
    } else { /* Cor. 3.3: zeta = sqrt(d) sqrt(||w*||^2 + sigma^2) log N, with R_x^2 = d, a = 1/2 */
        pl->clip = P->r_x * hypot(P->w_bound, P->sigma_bound) * pow(pl->log_n, 2.0 * P->a);
        if (!(pl->clip > 0))
            return dpc_error_param(err, DPC_E_INVALID, "clip",
                                 "the default R_x sqrt(w_bound^2 + sigma_bound^2) (ln N)^(2a) "
                                 "is 0; give the clip or positive bounds");
    }
    if (isfinite(pl->clip) && pl->eta * pl->clip > DPC__SCALE_MAX) /* the step overflows */
        return dpc_error_param(err, DPC_E_RANGE, o->clip != 0 && pl->clip > pl->eta ? "clip" : "eta",
                               "eta x clip = %g overflows: a step must stay below 1e150 (eta %g, "
                               "clip %g)", pl->eta * pl->clip, pl->eta, pl->clip);
    /* DP-STAT */
    pl->dpstat_k = o->dpstat_k == DPC_LINREG_DPSTAT_K_PAPER ? (size_t)ceil(200.0 * log2((double)n))
                   : o->dpstat_k                          ? o->dpstat_k
                                                          : 40;
    if (pl->dpstat_k > DPC_LINREG_MAX_DPSTAT_K)
        return dpc_error_param(err, DPC_E_INVALID, "dpstat_k", "must be in [1, %d], got %zu",
                             DPC_LINREG_MAX_DPSTAT_K, pl->dpstat_k);
    pl->domain = NAN;
    pl->dpstat_delta = NAN;
    pl->dpstat_margin = NAN;
    if (o->algo == DPC_LINREG_AMBSSGD) {
        if (o->domain != 0) {
            pl->domain = o->domain;
        } else { /* Thm. 3.7: B = K2 R_x (||w*||_H + sigma) log^(2a) N */
            pl->domain = P->k2 * P->r_x * (P->w_bound + P->sigma_bound) *
                         pow(pl->log_n, 2.0 * P->a);
            if (!(pl->domain > 0) || !(pl->domain <= DPC__SCALE_MAX))
                return dpc_error_param(err, DPC_E_INVALID, "domain",
                                     "the default K2 R_x (w_bound + sigma_bound) (ln N)^(2a) "
                                     "is %g; give the domain or positive bounds",
                                     pl->domain);
        }
        pl->dpstat_delta = ldexp(pl->domain, -(int)pl->dpstat_k); /* Delta = B/2^K (note §2.6.2) */
    }
    double beta = o->dpstat_beta != 0 ? o->dpstat_beta : 1.0 / (double)n;
    if (!(beta > 0 && beta < 1))
        return dpc_error_param(err, DPC_E_INVALID, "dpstat_beta", "must be in (0, 1), got %g", beta);
    if ((st = privacy(pl, o, err))) return st;
    if (o->algo == DPC_LINREG_SSGD && o->eta == 0) {
        /* Thm. 3.2's noise term eta <= c1/(log^(4a+2) N K2^2 R_x^2 kappa d alpha^2) with
         * c1/(K2^2 log^(2a+2) N) replaced by 1/4 (note 001 §2.2: the printed constants give
         * eta ~ 1e-12): without it the iterate noise outgrows the clip and the pass diverges
         * for alpha >~ 0.3 at d = 10 */
        double a2 = pl->ledger.noise_multiplier * pl->ledger.noise_multiplier;
        double cap = P->h_norm / (4.0 * P->kappa * (double)d * a2 * rx2 * pow(pl->log_n, 2 * P->a));
        if (cap < pl->eta) pl->eta = cap;
    }
    if (o->algo == DPC_LINREG_AMBSSGD &&
        (st = dpc_linreg_dpstat_margin(pl->noise_multiplier_stat, pl->dpstat_k, beta,
                                       &pl->dpstat_margin, err)))
        return st;
    return DPC_OK;
}

static size_t add(dpc_linreg_check *out, size_t k, size_t cap, const char *name, double value,
                  double required, int ok, const char *source, const char *meaning)
{
    if (k < cap) out[k] = (dpc_linreg_check){name, ok, value, required, source, meaning};
    return k + 1;
}

size_t dpc_linreg_checks(const dpc_linreg_plan *pl, dpc_linreg_check *out, size_t cap)
{
    size_t k = 0;
    if (!pl || !out) return 0;
    const dpc_linreg_prior *P = &pl->prior;
    double rx2 = P->r_x * P->r_x, b = (double)pl->batch, N = (double)pl->n, d = (double)pl->d;
    double L = pl->log_n, eps = pl->ledger.epsilon, ld = -log(pl->ledger.delta);
    if (pl->algo == DPC_LINREG_SSGD) {
        double emax = 1.0 / (2.0 * rx2);
        k = add(out, k, cap, "step_size", emax, pl->eta, pl->eta <= emax, "Lemma 3.5",
                "eta <= 1/(2 R_x^2)");
        double a2 = pl->ledger.noise_multiplier * pl->ledger.noise_multiplier;
        double enc = P->h_norm / (4.0 * P->kappa * d * a2 * rx2 * pow(L, 2 * P->a));
        k = add(out, k, cap, "no_clipping_step", enc, pl->eta, pl->eta <= enc * (1 + 1e-12),
                "Thm. 3.2 / Lemma A.9",
                "eta <= ||H||/(4 kappa d alpha^2 R_x^2 log^(2a) N): the iterate noise stays "
                "below the clip (constants replaced)");
        double need = P->kappa * d * pow(log(P->kappa * d > 1 ? P->kappa * d : 2.0), 2 * P->a + 1) *
                      ld / eps;
        k = add(out, k, cap, "sample_complexity", N, need, N >= need, "Thm. 3.2",
                "N >= kappa d log^(2a+1)(kappa d) log(1/delta)/eps (constants unspecified)");
        double emx = sqrt(log(N / pl->ledger.delta) / N);
        k = add(out, k, cap, "shuffle_epsilon_range", emx, eps, eps <= emx, "Thm. 3.1",
                "eps <= sqrt(log(N/delta)/N): the regime the paper's analysis covers");
        return k;
    }
    double bmax = b / (rx2 + (b - 1.0) * P->h_norm);
    k = add(out, k, cap, "step_size", bmax, pl->eta, pl->eta <= bmax * (1 + 1e-12), "Lemma B.5",
            "eta <= b/(R_x^2 + (b-1)||H||) (stable mini-batch step)");
    if (pl->algo != DPC_LINREG_AMBSSGD) return k;
    double a = pl->ledger.noise_multiplier, K2 = P->k2, kap = P->kappa;
    double need = kap * kap * d * (1.0 + sqrt(ld) / eps) * L;
    k = add(out, k, cap, "sample_complexity", N, need, N >= need, "Thm. 3.7",
            "N >= kappa^2 d (1 + sqrt(log(1/delta))/eps) ln N (O~: constants unspecified)");
    /* Lemma 3.11: b^2 >= 24 eta alpha^2 R_x^2 K2^2 kappa log^(4a) N Tr(H)/mu, Tr H <= R_x^2,
     * mu = ||H||/kappa */
    double bneed = sqrt(24.0 * pl->eta * a * a * rx2 * K2 * K2 * kap * pow(L, 4.0 * P->a) * rx2 *
                        kap / P->h_norm);
    k = add(out, k, cap, "batch_condition", b, bneed, b >= bneed, "Lemma 3.11",
            "b >= sqrt(24 eta alpha^2 R_x^2 K2^2 kappa log^(4a)N Tr(H)/mu)");
    double s = (double)pl->stat_batch, g2 = 2.0 * pl->dpstat_margin;
    k = add(out, k, cap, "dpstat_margin", s, g2, s > g2, "Lemma 3.10",
            "s > 2 Gamma: DP-STAT's count margin leaves most stat residuals below gamma");
    k = add(out, k, cap, "domain_resolution", pl->dpstat_delta, DBL_MIN,
            pl->dpstat_delta >= DBL_MIN, "note §2.6.2",
            "Delta = B/2^K is a normal double (the paper's B/N^200 underflows)");
    return k;
}
