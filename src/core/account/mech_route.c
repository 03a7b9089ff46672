/* mech_route.c — a mechanism run (dpc_mech + its sampler's description) accounted by the best
 * valid route: the whole-run Gaussian, amplified banded MF, or MMCC-style conditional
 * composition (mmcc.c); and the calibration of the noise multiplier z (noise std per row of Z =
 * z * clip * column norm of C) over all routes. Each route is an upper bound on epsilon, so
 * their minimum is one. */
#include "account/acc_internal.h"

#include "account/acc_math.h"
#include "common/util.h"

#include <stdlib.h>
#include <string.h>

#define MMCC_MAX_STEPS 4096 /* the dense strategy is materialized */
#define MMCC_GROUPS 24

static const char *const route_names[DPC_ROUTE_COUNT] = {"whole-run", "bandmf", "mmcc",
                                                          "balls-in-bins"};

const char *dpc_mech_route_name(dpc_mech_route r)
{
    return (unsigned)r < DPC_ROUTE_COUNT ? route_names[r] : "unknown";
}

double *dpc__mech_nonneg_matrix(const dpc_mech *m, size_t *rows, const char **why)
{
    size_t n = dpc_mech_steps(m), r = dpc_mech_noise_rows(m), rn;
    *why = NULL;
    if (n > MMCC_MAX_STEPS || !dpc__mul_ok(r, n, &rn)) {
        *why = "more than 4096 steps";
        return NULL;
    }
    double *C = dpc__malloc_array(rn, sizeof *C), *S = dpc__malloc_array(rn, sizeof *S);
    size_t *last = dpc__malloc_array(r, sizeof *last), *ord = dpc__malloc_array(r, sizeof *ord);
    if (!C || !S || !last || !ord || dpc_mech_dense_strategy(m, C, NULL)) {
        if (!*why) *why = "the strategy matrix is not available";
        free(C);
        free(S);
        free(last);
        free(ord);
        return NULL;
    }
    size_t kept = 0;
    for (size_t i = 0; i < r && !*why; i++) {
        last[i] = n;
        for (size_t t = 0; t < n; t++) {
            if (C[i * n + t] < 0.0) *why = "its strategy C has negative entries";
            if (C[i * n + t] != 0.0) last[i] = t;
        }
        if (last[i] < n) ord[kept++] = i; /* all-zero rows release nothing */
    }
    /* stable insertion order by release step (rows are nearly sorted already) */
    for (size_t a = 1; a < kept && !*why; a++) {
        size_t v = ord[a], b = a;
        while (b > 0 && last[ord[b - 1]] > last[v]) {
            ord[b] = ord[b - 1];
            b--;
        }
        ord[b] = v;
    }
    for (size_t a = 0; a < kept && !*why; a++) memcpy(S + a * n, C + ord[a] * n, n * sizeof *S);
    free(C);
    free(last);
    free(ord);
    if (*why) {
        free(S);
        return NULL;
    }
    *rows = kept;
    return S;
}

static dpc_status check_run(const dpc_mech_run *run, dpc_error *err)
{
    if (!run || !run->mech)
        return dpc_error_param(err, DPC_E_INVALID, run ? "run.mech" : "run", "NULL");
    dpc_status st = dpc__check_half_open01(run->q, "q", err);
    if (st) return st;
    if (run->n_pre > DPC_MECH_RUN_MAX_PRE || (run->n_pre && !run->pre))
        return dpc_error_param(err, DPC_E_INVALID, "run.n_pre",
                               "must be <= %d with run.pre set, got %zu", DPC_MECH_RUN_MAX_PRE,
                               run->n_pre);
    for (size_t i = 0; i < run->n_pre; i++)
        if (run->pre[i].sampling != DPC_SAMPLING_NONE)
            return dpc_error_param(err, DPC_E_UNSUPPORTED, "run.pre",
                                   "release %zu: only releases without sampling are composed", i);
    if (run->n_pre) {
        dpc_event pe = {DPC_NEIGHBOR_ADD_REMOVE, run->n_pre, run->pre};
        if ((st = dpc_event_check(&pe, DPC_ACCOUNTANT_GDP, err)))
            return dpc_error_nest(err, "run.pre");
    }
    if (run->balls_in_bins && run->part.b > dpc_mech_steps(run->mech))
        return dpc_error_param(err, DPC_E_INVALID, "part.b",
                               "balls-in-bins with a period of %zu steps in a run of n = %zu: "
                               "the period must be at most n",
                               run->part.b, dpc_mech_steps(run->mech));
    if (run->balls_in_bins && run->q < 1.0)
        return dpc_error_param(err, DPC_E_INVALID, "q",
                               "balls-in-bins takes every example once per period (q = 1), got "
                               "%g",
                             run->q);
    return DPC_OK;
}

/* The event of a route's component `ev` composed with the run's pre-releases.
 * parts: (1 + DPC_MECH_RUN_MAX_PRE) storage. */
static dpc_event with_pre(const dpc_mech_run *run, dpc_neighbor rel, const dpc_gauss_event *ev,
                          dpc_gauss_event *parts)
{
    parts[0] = *ev;
    for (size_t i = 0; i < run->n_pre; i++) parts[1 + i] = run->pre[i];
    dpc_event e = {rel, 1 + run->n_pre, parts};
    return e;
}

/* epsilon of the whole-run Gaussian at noise multiplier z: exact GDP unless zCDP was asked
 * for. */
static dpc_status eps_whole(const dpc_mech_run *run, double sigma, const dpc_account_opts *o,
                            double delta, double *eps, dpc_account_mech_info *inf,
                            dpc_error *err)
{
    dpc_gauss_event ev;
    dpc_status st = dpc_account_mech_event(run->mech, &run->part, sigma, 1.0, &ev, inf, err);
    if (st) return st;
    dpc_account_opts w;
    dpc_account_opts_init(&w, o->accountant == DPC_ACCOUNTANT_ZCDP ? DPC_ACCOUNTANT_ZCDP
                                                                    : DPC_ACCOUNTANT_GDP);
    w.zcdp_conv = o->zcdp_conv;
    dpc_gauss_event parts[1 + DPC_MECH_RUN_MAX_PRE];
    dpc_event e = with_pre(run, DPC_NEIGHBOR_ZERO_OUT, &ev, parts);
    dpc_account_result r;
    if ((st = dpc_account_epsilon(&e, &w, delta, &r, err))) return st;
    *eps = r.epsilon;
    return DPC_OK;
}

/* Why a sampled route does not apply to the run (NULL: it may). */
static const char *sampled_why(const dpc_mech_run *run, const dpc_account_opts *o)
{
    if (run->balls_in_bins) return "not applicable: balls-in-bins sampling (its own route)";
    if (run->q >= 1.0) return "not applicable: no Poisson sampling (q = 1)";
    if (o->accountant == DPC_ACCOUNTANT_ZCDP || o->accountant == DPC_ACCOUNTANT_GDP)
        return "not applicable: the zcdp and gdp accountants have no amplification by sampling";
    return NULL;
}

/* epsilon by amplified banded MF; DPC_E_UNSUPPORTED when the route does not apply. */
static dpc_status eps_bandmf(const dpc_mech_run *run, double sigma, const dpc_account_opts *o,
                             double delta, double *eps, dpc_account_mech_info *inf,
                             dpc_error *err)
{
    if (sampled_why(run, o)) return DPC_E_UNSUPPORTED;
    dpc_gauss_event ev;
    dpc_status st = dpc_account_mech_event(run->mech, &run->part, sigma, run->q, &ev, inf, NULL);
    if (st == DPC_E_UNSUPPORTED) return st;
    if (st) return dpc_account_mech_event(run->mech, &run->part, sigma, run->q, &ev, inf, err);
    dpc_gauss_event parts[1 + DPC_MECH_RUN_MAX_PRE];
    dpc_event e = with_pre(run, DPC_NEIGHBOR_ADD_REMOVE, &ev, parts);
    dpc_account_result r;
    if ((st = dpc_account_epsilon(&e, o, delta, &r, err))) return st;
    *eps = r.epsilon;
    return DPC_OK;
}

/* The MMCC route's matrix, materialized once per evaluation sequence. */
typedef struct mmcc_ctx {
    double *C;     /* (rows, width) the bands of C's rows (dpc__mmcc_mat) */
    size_t *col0;  /* (rows) or NULL (dense) */
    size_t rows, n, width;
    double sens, colmax, q, delta;
    const dpc_account_opts *o;
    double slack;
    dpc_status st;
    dpc_error *err;
    const char *why; /* why the route does not apply to a Poisson run (NULL: it does) */
    const char *skip; /* why the route does not apply to this run at all (NULL: it may) */
    int band2;        /* C has at most two bands: the banded Renyi bound answers beside MMCC */
} mmcc_ctx;

/* A Toeplitz C >= 0 whose coefficients end after `width` <= n (banded: BSR, banded
 * strategies) is stored by its rows' bands, rows x width values (n = 10^4 with 64 bands:
 * 5 MB instead of the dense 800 MB); anything else densely (n <= 4096). 0: stored;
 * 1: not applicable (c->why set); -1: no memory. */
static int mmcc_matrix(const dpc_mech *m, mmcc_ctx *c)
{
    size_t n = dpc_mech_steps(m), w = 0, rn;
    double *coef = NULL;
    if (dpc_mech_is_toeplitz(m) && dpc_mech_noise_rows(m) == n &&
        (coef = dpc__malloc_array(n, sizeof *coef)) &&
        dpc_mech_strategy_coeffs(m, coef, n, NULL) == DPC_OK && coef[0] > 0.0) {
        for (size_t j = 0; j < n; j++) {
            if (coef[j] < 0.0) {
                free(coef);
                c->why = "its strategy C has negative entries";
                return 1;
            }
            if (coef[j] != 0.0) w = j + 1;
        }
    }
    if (w && (n <= MMCC_MAX_STEPS || (dpc__mul_ok(n, w, &rn) &&
                                      rn <= (size_t)MMCC_MAX_STEPS * MMCC_MAX_STEPS))) {
        c->C = dpc__calloc(n * w, sizeof *c->C);
        c->col0 = dpc__malloc_array(n, sizeof *c->col0);
        if (!c->C || !c->col0) {
            free(coef);
            return -1;
        }
        for (size_t i = 0; i < n; i++) { /* row i: C[i, t] = coef[i - t], t in [col0, i] */
            size_t len = i + 1 < w ? i + 1 : w;
            c->col0[i] = i + 1 - len;
            for (size_t j = 0; j < len; j++) c->C[i * w + j] = coef[i - c->col0[i] - j];
        }
        free(coef);
        c->rows = n;
        c->width = w;
        return 0;
    }
    free(coef);
    c->C = dpc__mech_nonneg_matrix(m, &c->rows, &c->why);
    c->width = n;
    return c->C ? 0 : 1;
}

static void mmcc_release(mmcc_ctx *c)
{
    free(c->C);
    free(c->col0);
    c->C = NULL;
    c->col0 = NULL;
}

static dpc_status mmcc_prepare(const dpc_mech_run *run, const dpc_account_opts *o,
                               double delta, mmcc_ctx *c, dpc_error *err)
{
    memset(c, 0, sizeof *c);
    if ((c->skip = sampled_why(run, o))) return DPC_E_UNSUPPORTED;
    if (run->part.kind != DPC_PART_CYCLIC || run->part.b != 1)
        c->skip = "not applicable: needs Poisson sampling at every step (cyclic period 1)";
    else if (o->accountant != DPC_ACCOUNTANT_PLD)
        c->skip = "not applicable: needs the pld accountant";
    else if (run->n_pre)
        c->skip = "not applicable: it does not compose pre-releases";
    /* C = I: MMCC's dominating pair is the n-fold Poisson-subsampled Gaussian itself, which the
     * banded-MF route (b = 1) accounts with the same PLD: the same epsilon at n times the cost. */
    else if (dpc_mech_get_params(run->mech)->kind == DPC_MECH_IDENTITY)
        c->skip = "not needed: for C = I it is the banded-MF route's PLD (the same epsilon)";
    if (c->skip) return DPC_E_UNSUPPORTED;
    int mr = mmcc_matrix(run->mech, c);
    if (mr < 0) return DPC__NOMEM(err, "the MMCC strategy matrix");
    if (mr > 0) return DPC_E_UNSUPPORTED;
    dpc_sensitivity s, col;
    dpc_participation single = {DPC_PART_MINSEP, 1, 1};
    dpc_status st = dpc_mech_sensitivity(run->mech, &run->part, &s, err);
    if (!st) st = dpc_mech_sensitivity(run->mech, &single, &col, err);
    if (st) {
        mmcc_release(c);
        return st;
    }
    c->n = dpc_mech_steps(run->mech);
    c->sens = s.value;
    c->colmax = col.value;
    c->q = run->q;
    c->delta = delta;
    c->o = o;
    c->err = err;
    dpc__mmcc_mat M = {c->C, c->col0, c->rows, c->n, c->width};
    c->band2 = dpc__band2_applies(&M) || dpc__band_span(&M);
    return DPC_OK;
}

/* epsilon of the MMCC route at noise multiplier z (std per row z * column norm, per clip);
 * adaptive: the grid chosen from a coarse first pass (dpc__mmcc_epsilon; 0 in calibrations,
 * which search along one grid). */
static double mmcc_eps(const mmcc_ctx *cc, double z, int adaptive, double *slack,
                       double *work, dpc_status *stp, dpc_error *err)
{
    double e = NAN;
    dpc__mmcc_mat M = {cc->C, cc->col0, cc->rows, cc->n, cc->width};
    *work = 0.0;
    /* two bands: the exact Renyi chain's bound beside MMCC, the smaller answers (both are upper
     * bounds of the same pair; DP-REQ: mmcc-band, doc/accounting.md section 7.1.2) */
    double eb = INFINITY;
    if (cc->band2 && (*stp = dpc__band2_epsilon(&M, cc->q, z * cc->colmax, cc->delta, &eb, NULL,
                                                NULL, NULL, err)))
        return NAN;
    *stp = dpc__mmcc_epsilon(&M, cc->q, z * cc->colmax, cc->delta, cc->o, MMCC_GROUPS, adaptive,
                             &e, slack, NULL, work, err);
    if (*stp == DPC_E_RANGE && eb < INFINITY) *stp = DPC_OK, e = INFINITY;
    if (*stp) return NAN;
    if (eb < e) *slack = 0.0, e = eb; /* no conditioning events: no slack */
    return e;
}

/* The ledger's note for a sampled run that no amplification route could take. */
static const char *route_note(const char *why)
{
    if (!why) return NULL;
    if (strstr(why, "negative"))
        return "no MMCC or balls-in-bins amplification: C has negative entries (both dominating "
               "pairs need C >= 0; doc/accounting.md section 7)";
    if (strstr(why, "4096")) return "no MMCC or balls-in-bins amplification: more than 4096 steps";
    if (strstr(why, "256")) return "no balls-in-bins amplification: more than 256 bins";
    return "no MMCC or balls-in-bins amplification: the strategy matrix is not available";
}

/* epsilon by the balls-in-bins route at z (INFINITY when it does not apply); the Monte Carlo's
 * samples, confidence and seed go to mc (left alone when the route does not apply). */
static dpc_status eps_bib(const dpc_mech_run *run, double z, const dpc_account_opts *o,
                          double delta, double eps_whole, double *eps,
                          dpc_account_mech_info *mc, const char **why, dpc_error *err)
{
    dpc__bib_ctx bc;
    dpc_status st = dpc__bib_prepare(run, o, delta, &bc, err);
    *why = bc.why;
    if (st == DPC_E_UNSUPPORTED) return DPC_OK;
    if (st) return st;
    st = dpc__bib_epsilon(&bc, z, eps_whole, eps, mc, err);
    dpc__bib_free(&bc);
    return st;
}

/* One line per route that gave no finite epsilon (dpc_account_mech_info.route_why). */
static void explain_routes(const dpc_mech_run *run, const dpc_account_opts *o, const mmcc_ctx *cc,
                           dpc_status mmcc_st, double mmcc_work, const char *bwhy,
                           dpc_account_mech_info *in)
{
    static const char *const inf_text =
        "numerically infinite: the mass at infinite loss exceeds delta (too little noise for it)";
    for (int k = 0; k < DPC_ROUTE_COUNT; k++) in->route_why[k] = NULL;
    if (!isfinite(in->eps_routes[DPC_ROUTE_WHOLE_RUN]))
        in->route_why[DPC_ROUTE_WHOLE_RUN] = "numerically infinite: too little noise for delta";
    if (!isfinite(in->eps_routes[DPC_ROUTE_BANDMF])) {
        const char *w = sampled_why(run, o);
        in->route_why[DPC_ROUTE_BANDMF] =
            w ? w
            : run->part.kind != DPC_PART_CYCLIC
                ? "not applicable: needs cyclic Poisson sampling (the pattern is min-sep)"
                : "not applicable: C has more bands than the cyclic period b (needs a b-banded "
                  "C: bsr or banded with bands <= b)";
    }
    if (!isfinite(in->eps_routes[DPC_ROUTE_MMCC])) {
        const char *w = cc->skip;
        if (!w && cc->why)
            w = strstr(cc->why, "4096") ? "stopped by the work limit: more than 4096 steps (its "
                                          "strategy matrix is materialized)"
                : strstr(cc->why, "negative")
                    ? "not applicable: C has negative entries (its dominating pair needs C >= 0)"
                    : "not applicable: the strategy matrix is not available";
        if (!w && mmcc_st == DPC_E_RANGE && mmcc_work > DPC_WORK_LIMIT)
            w = "stopped by the work limit before any work: its estimated cost at this noise is "
                "above DPC_WORK_LIMIT (about 10 s; too little noise for its per-row mixtures)";
        if (!w && mmcc_st == DPC_E_RANGE)
            w = "numerically infinite: the privacy losses are too wide for one PLD grid (too "
                "little noise)";
        in->route_why[DPC_ROUTE_MMCC] = w ? w : inf_text;
    }
    if (!isfinite(in->eps_routes[DPC_ROUTE_BALLS_IN_BINS])) {
        const char *w = !run->balls_in_bins ? "not applicable: not balls-in-bins sampling"
                        : run->n_pre ? "not applicable: it does not compose pre-releases"
                        : o->accountant != DPC_ACCOUNTANT_PLD && o->accountant != DPC_ACCOUNTANT_RDP
                            ? "not applicable: needs the pld or rdp accountant"
                            : NULL;
        if (!w && bwhy)
            w = strstr(bwhy, "negative")
                    ? "not applicable: C has negative entries (its dominating pair needs C >= 0)"
                : strstr(bwhy, "4096") ? "stopped by the work limit: more than 4096 steps"
                : strstr(bwhy, "256")  ? "stopped by the work limit: more than 256 bins"
                                       : "not applicable: the strategy matrix is not available";
        in->route_why[DPC_ROUTE_BALLS_IN_BINS] = w ? w : inf_text;
    }
}

/* epsilon of one participation without amplification: the Gaussian with mu = 1/z (each entry of
 * Z has std z x column norm; one participation moves C G by at most the column norm). */
static double single_epsilon(double z, double delta)
{
    double e = NAN;
    if (dpc_gdp_epsilon(1.0 / z, delta, &e, NULL) != DPC_OK) return NAN;
    return e;
}

/* What would amplify better, when the reported epsilon is > 10x a single participation's. */
static const char *route_advice(const dpc_mech_run *run, const dpc_account_mech_info *in)
{
    double e = in->eps_routes[in->route];
    if (!(in->epsilon_single > 0) || !(e > 10.0 * in->epsilon_single)) return NULL;
    if (dpc_mech_get_params(run->mech)->kind == DPC_MECH_IDENTITY)
        return "epsilon is > 10x one participation's: the run composes many participations; "
               "Poisson sampling (smaller q) amplifies DP-SGD";
    if (run->q < 1.0 && run->part.b == 1)
        return "epsilon is > 10x one participation's: Poisson sampling at every step amplifies "
               "a dense C weakly (MMCC); cyclic Poisson sampling with a banded C (bsr, bands <= "
               "the period) or balls-in-bins sampling, or fewer bands, usually does far better "
               "(doc/accounting.md)";
    if (run->q < 1.0)
        return "epsilon is > 10x one participation's: the banded-MF route needs at most b bands "
               "for a cyclic period b; a bsr/banded C with bands <= b amplifies";
    return "epsilon is > 10x one participation's: the run is accounted without amplification "
           "(every participation counted); sampling with amplification (Poisson for DP-SGD, "
           "cyclic Poisson with a banded C, balls-in-bins) would lower it";
}

dpc_status dpc_account_mech_epsilon(const dpc_mech_run *run, double noise_multiplier,
                                    const dpc_account_opts *o, double delta,
                                    dpc_account_result *res, dpc_account_mech_info *info,
                                    dpc_error *err)
{
    dpc_status st;
    double sigma = noise_multiplier;
    if ((st = check_run(run, err))) return st;
    if ((st = dpc__check_pos(sigma, "noise_multiplier", err))) return st;
    if ((st = dpc__check_open01(delta, "delta", err))) return st;
    if (!o) return dpc_error_param(err, DPC_E_INVALID, "o", "NULL");
    if (!res) return dpc_error_param(err, DPC_E_INVALID, "res", "output pointer is NULL");
    dpc_account_mech_info wi, bi, best;
    double ew, eb = INFINITY, em = INFINITY;
    if ((st = eps_whole(run, sigma, o, delta, &ew, &wi, err))) return st;
    best = wi;
    st = eps_bandmf(run, sigma, o, delta, &eb, &bi, err);
    if (st && st != DPC_E_UNSUPPORTED) return st;
    if (!st && eb < ew) best = bi;
    mmcc_ctx cc;
    st = mmcc_prepare(run, o, delta, &cc, err);
    if (st && st != DPC_E_UNSUPPORTED) return st;
    double slack = 0.0, mmcc_work = 0.0;
    dpc_status mmcc_st = st;
    if (!st) {
        em = mmcc_eps(&cc, sigma, 1, &slack, &mmcc_work, &st, err);
        mmcc_release(&cc);
        if (st == DPC_E_RANGE) { /* losses too wide for one grid: the route does not apply */
            em = INFINITY;
            mmcc_st = st;
            st = DPC_OK;
        }
        if (st) return st;
        if (em < (eb < ew ? eb : ew)) {
            best = wi;
            best.amplified = 1;
            best.route = DPC_ROUTE_MMCC;
            best.rounds = cc.rows;
            best.delta_slack = slack;
        }
    }
    double ebb = INFINITY;
    const char *bwhy = NULL;
    dpc_account_mech_info bm = best;
    bm.mc_samples = 0, bm.mc_confidence = NAN, bm.mc_seed = 0;
    bm.bib_deterministic = 0, bm.eps_bib_mc = NAN, bm.bib_mu = NAN;
    if ((st = eps_bib(run, sigma, o, delta, ew, &ebb, &bm, &bwhy, err))) return st;
    if (ebb < (eb < ew ? eb : ew) && ebb < em) {
        best = wi;
        best.amplified = 1;
        best.route = DPC_ROUTE_BALLS_IN_BINS;
    }
    /* the balls-in-bins evaluation (guarantee type, Monte Carlo beside it) whatever route won */
    best.mc_samples = bm.mc_samples, best.mc_confidence = bm.mc_confidence;
    best.mc_seed = bm.mc_seed;
    best.bib_deterministic = bm.bib_deterministic, best.eps_bib_mc = bm.eps_bib_mc;
    best.bib_mu = bm.bib_mu;
    best.eps_routes[DPC_ROUTE_WHOLE_RUN] = ew;
    best.eps_routes[DPC_ROUTE_BANDMF] = eb;
    best.eps_routes[DPC_ROUTE_MMCC] = em;
    best.eps_routes[DPC_ROUTE_BALLS_IN_BINS] = ebb;
    best.note = route_note(cc.why ? cc.why : bwhy);
    explain_routes(run, o, &cc, mmcc_st, mmcc_work, bwhy, &best);
    best.epsilon_single = single_epsilon(sigma, delta);
    best.advice = route_advice(run, &best);
    memset(res, 0, sizeof *res);
    res->epsilon = best.eps_routes[best.route];
    res->delta = delta;
    res->order = res->rho = res->mu = NAN;
    res->upper_bound = 1;
    if (info) *info = best;
    return DPC_OK;
}

typedef struct {
    const mmcc_ctx *cc;
    const dpc_account_opts *o; /* the grid of this search */
    dpc_status st;
    dpc_error *err;
} mmcc_cal;

static double mmcc_eps_u(double u, void *vc)
{
    mmcc_cal *m = vc;
    mmcc_ctx c = *m->cc;
    c.o = m->o;
    double slack;
    double work, e = mmcc_eps(&c, exp(u), 0, &slack, &work, &m->st, m->err);
    /* too little noise for one grid, or for the work limit: certainly above target */
    if (m->st == DPC_E_RANGE) {
        m->st = DPC_OK;
        return INFINITY;
    }
    return m->st ? NAN : e;
}

typedef struct {
    const dpc_mech_run *run;
    const dpc_account_opts *o;
    double delta;
    dpc_status st;
    dpc_error *err;
} pre_cal;

static double pre_eps_u(double u, void *vc)
{
    pre_cal *c = vc;
    dpc_account_result r;
    c->st = dpc_account_mech_epsilon(c->run, exp(u), c->o, c->delta, &r, NULL, c->err);
    return c->st ? NAN : r.epsilon;
}

static dpc_status calibrate_run_at(const dpc_mech_run *run, const dpc_account_opts *o,
                                   double epsilon, double delta, double *noise_multiplier,
                                   dpc_account_mech_info *info, dpc_error *err);

/* DP-REQ: pre-compose: a run composed with fixed pre-releases. Every route's epsilon with the
 * pre-releases is at least its epsilon without them, so the z calibrated without them is a
 * lower bound; epsilon(z) with them is monotone (each route's is), found by secant steps on
 * log z that end on the private side. */
static dpc_status calibrate_pre(const dpc_mech_run *run, const dpc_account_opts *o,
                                double epsilon, double delta, double *z, dpc_error *err)
{
    dpc_event pe = {DPC_NEIGHBOR_ADD_REMOVE, run->n_pre, run->pre};
    dpc_account_opts g;
    dpc_account_opts_init(&g, DPC_ACCOUNTANT_GDP);
    dpc_account_result r;
    dpc_status st = dpc_account_epsilon(&pe, &g, delta, &r, err);
    if (st) return st;
    if (!(r.epsilon < epsilon))
        return dpc_error_param(err, DPC_E_PRIVACY, "epsilon",
                               "the pre-releases alone spend epsilon %.6g >= %g at delta %g",
                               r.epsilon, epsilon, delta);
    dpc_mech_run bare = *run;
    bare.pre = NULL;
    bare.n_pre = 0;
    double z0;
    if ((st = calibrate_run_at(&bare, o, epsilon, delta, &z0, NULL, err))) return st;
    pre_cal c = {run, o, delta, DPC_OK, err};
    double u = log(z0), slope = -1.0;
    int rc = dpc__secant_log(pre_eps_u, &c, epsilon, &u, &slope, 5e-5, 1, 60, log(1e9));
    if (c.st) return c.st;
    if (rc != 0)
        return dpc_error_param(err, DPC_E_PRIVACY, "epsilon",
                               "no noise multiplier <= 1e9 meets (%g, %g) with the pre-releases",
                               epsilon, delta);
    *z = exp(u);
    return DPC_OK;
}

/* The balls-in-bins route along log z: every evaluation whose epsilon is <= the target is a
 * valid answer and the smallest such z is kept (the Monte Carlo's epsilon is not smooth in z:
 * each z has its own draws). */
typedef struct {
    const dpc__bib_ctx *bc;
    const dpc_mech_run *run;
    const dpc_account_opts *o;
    double target, delta, zbest;
    double first, most; /* work: the estimate before any evaluation, the most one took */
    int budget, evals, out; /* budget: the work limit guards each evaluation; out: it stopped */
    dpc_status st;
    dpc_error *err;
} bib_cal;

static double bib_eps_u(double u, void *vc)
{
    bib_cal *c = vc;
    double z = exp(u), ew, e, before = *c->bc->ops;
    /* the work limit decides before each evaluation (other C): the work done so far plus the
     * most one may take (the worst-case estimate before the first, then the most one took) */
    if (c->budget && before + (c->evals ? c->most : c->first) > DPC_WORK_LIMIT) {
        c->out = 1;
        return NAN;
    }
    dpc_account_mech_info mc;
    if ((c->st = eps_whole(c->run, z, c->o, c->delta, &ew, NULL, c->err))) return NAN;
    if ((c->st = dpc__bib_epsilon_ex(c->bc, z, ew, c->bc->allow_mc, &e, &mc, c->err))) return NAN;
    c->evals++;
    if (*c->bc->ops - before > c->most) c->most = *c->bc->ops - before;
    if (e <= c->target && z < c->zbest) c->zbest = z;
    return e;
}

static dpc_status bib_work_refusal(size_t b, double ops, dpc_error *err)
{
    return dpc_error_param(err, DPC_E_RANGE, "part.b",
                           "calibrating the balls-in-bins route over %zu bins needs more than "
                           "%.2g operations, above the work limit %.2g (DPC_WORK_LIMIT, about "
                           "10 s); use fewer bins (larger batches), or give the noise "
                           "multiplier and account its epsilon",
                           b, ops, DPC_WORK_LIMIT);
}

#define BIB_CAL_MIN_EVALS 8.0 /* the first point, ~5 secant steps, slack */
#define BIB_SLOPE0 -3.0 /* d log eps / d log z assumed before two points are known: the amplified
                           bounds fall faster than 1/z (BSR-16, 200 bins: about -3.3 between the
                           whole run's noise and the answer; -1 overshot to e^-1.3 of it) */

/* Other C: the smallest z whose deterministic bound is <= the target, by safeguarded secant
 * steps on f = log(eps / target) over u = log z that use every point (the first, at the
 * other routes' noise u0 with f0 < 0, included): regula falsi with the Illinois halving inside
 * a bracket, else the secant of the last two points (BIB_SLOPE0 until two are known), steps
 * at most 1.0 in u, aiming at f = -tol/2 so that the answer lands on the private side. Stops
 * at an evaluation with -tol <= f <= 0, a bracket narrower than 1e-4, 14 evaluations, or when
 * the work limit stops bib_eps_u (NAN); the answer is c->zbest either way. */
/* Inverse quadratic interpolation of the point where f = F through the last three points
 * (NAN when two share an f). */
static double bib_iqi(const double *u, const double *f, double F)
{
    if (f[0] == f[1] || f[1] == f[2] || f[0] == f[2]) return NAN;
    return u[0] * (F - f[1]) * (F - f[2]) / ((f[0] - f[1]) * (f[0] - f[2])) +
           u[1] * (F - f[0]) * (F - f[2]) / ((f[1] - f[0]) * (f[1] - f[2])) +
           u[2] * (F - f[0]) * (F - f[1]) / ((f[2] - f[0]) * (f[2] - f[1]));
}

static void bib_search(bib_cal *c, double u0, double f0, double tol)
{
    double lo = NAN, flo = NAN, hi = u0, fhi = f0, pu = u0, pf = f0, x, F = -0.5 * tol;
    double hu[3] = {NAN, NAN, u0}, hf[3] = {NAN, NAN, f0}; /* the last three points */
    int side = 0; /* which end the last two steps moved (Illinois) */
    double xn = u0 + (f0 - F) / -BIB_SLOPE0;
    for (int it = 0; it < 14; it++) {
        x = xn;
        double e = bib_eps_u(x, c);
        if (isnan(e) || c->st) return;
        double f = e > 0.0 ? log(e) - log(c->target) : -1.0;
        if (f <= 0.0 && -f <= tol) return;
        if (f <= 0.0) {
            if (x < hi) hi = x, fhi = f;
            if (side == -1 && !isnan(flo)) flo *= 0.5;
            side = -1;
        } else {
            if (isnan(lo) || x > lo) lo = x, flo = f;
            if (side == 1) fhi *= 0.5;
            side = 1;
        }
        if (!isnan(lo) && hi - lo <= 1e-4) return;
        double sl = (x != pu && f != pf && e > 0.0) ? (f - pf) / (x - pu) : BIB_SLOPE0;
        if (!(sl < 0.0)) sl = BIB_SLOPE0;
        pu = x, pf = f;
        hu[0] = hu[1], hf[0] = hf[1], hu[1] = hu[2], hf[1] = hf[2];
        hu[2] = x, hf[2] = e > 0.0 ? f : NAN;
        if (!isnan(lo)) { /* inverse quadratic, else regula falsi, inside [lo, hi] */
            xn = isnan(hf[0] + hf[1] + hf[2]) ? NAN : bib_iqi(hu, hf, F);
            double m = 0.02 * (hi - lo); /* not onto an end: that would gain nothing */
            if (!(xn > lo + m && xn < hi - m)) xn = lo + (flo - F) * (hi - lo) / (flo - fhi);
            if (!(xn > lo && xn < hi)) xn = 0.5 * (lo + hi);
        } else {
            xn = x - (f - F) / sl;
            if (fabs(xn - x) > 1.0) xn = x + (xn > x ? 1.0 : -1.0);
        }
    }
}

static dpc_status calibrate_bib(const dpc_mech_run *run, const dpc_account_opts *o,
                                double epsilon, double delta, double *best, dpc_error *err)
{
    dpc__bib_ctx bc;
    dpc_status st = dpc__bib_prepare(run, o, delta, &bc, err);
    if (st == DPC_E_UNSUPPORTED) return DPC_OK;
    if (st) return st;
    /* Work (identity: the random-allocation curves; issue 28: 10^5 bins took ~6 s per
     * evaluation and minutes per calibration). The search gets as many evaluations as the work
     * limit holds, at most 15. Fewer than 4 (the first point and the three secant steps it
     * usually needs) is refused up front, and a search the limit stops before it converges is
     * refused too (never a silently looser noise), both naming the bins. */
    /* identity: fewer than BIB_CAL_MIN_EVALS evaluations in the limit is refused before any
     * (issue 37: 4 fit at 5e4 bins, the search ran 16 s and was refused after them) */
    /* Other C (issue 35): the deterministic bounds' own work (the Renyi program at every order
     * level, every post-processing candidate; the Monte Carlo only where it may be the route's
     * answer), not the Monte Carlo's, which ruled out every search above ~140 bins (the
     * route was then never calibrated: BSR-16, 200 bins, kept the whole run's noise, 3.9x
     * more than it needs). A first evaluation above the limit is not started (the other
     * routes calibrate, the bound is reported at their noise); then each evaluation is
     * started only while the work done plus the most one took stays within the limit, and a
     * search so stopped keeps its best valid z (a deterministic bound at or below the target
     * at that z: never a looser guarantee, only more noise than needed). */
    int max_it = 14, cut = 0;
    double one = bc.identity ? dpc__ra_epsilon_ops(bc.b) : dpc__bib_eval_ops(&bc, bc.allow_mc),
           fit = floor(DPC_WORK_LIMIT / one);
    if (fit < (bc.identity ? BIB_CAL_MIN_EVALS : 1.0)) {
        dpc__bib_free(&bc);
        /* identity: the route balls-in-bins exists for, refused */
        return bc.identity ? bib_work_refusal(bc.b, BIB_CAL_MIN_EVALS * one, err) : DPC_OK;
    }
    if (bc.identity && fit - 1.0 < (double)max_it) max_it = (int)fit - 1, cut = 1;
    bib_cal c = {&bc, run, o, epsilon, delta, *best, one, 0.0, !bc.identity, 0, 0, DPC_OK, err};
    double u = log(*best), slope = -1.0, e0 = NAN;
    /* other C, deterministic: at the starting point (the other routes' noise, already valid)
     * the post-processing bound alone, an upper bound on the route's, is enough to show the
     * route below the target and to aim the first step; there the noise is largest and the
     * Renyi program dearest (BSR-16, 200 bins, (0.3, 1e-10): 0.3 s against 3.9 s) */
    if (!bc.identity && !bc.allow_mc) {
        st = dpc__bib_epsilon_sf(&bc, *best, &e0, err);
        if (st) {
            dpc__bib_free(&bc);
            return st;
        }
        if (!(e0 < epsilon)) e0 = NAN;
    }
    if (isnan(e0)) e0 = bib_eps_u(u, &c);
    int rc = 0;
    if (!c.st && e0 < epsilon && !bc.identity) {
        bib_search(&c, u, e0 > 0.0 ? log(e0 / epsilon) : -1.0, 2e-3);
    } else if (!c.st && e0 < epsilon) {
        double uu = u - 0.1;
        rc = dpc__secant_log(bib_eps_u, &c, epsilon, &uu, &slope, 5e-5, 1, max_it, u);
    }
    if (!c.st && cut && rc) {
        dpc__bib_free(&bc);
        return bib_work_refusal(bc.b, (double)(max_it + 2) * one, err);
    }
    dpc__bib_free(&bc);
    if (c.st) return c.st;
    if (c.zbest < *best) *best = c.zbest;
    return DPC_OK;
}

/* MMCC: secant from the best z so far, if MMCC is below the target there. DP-REQ: mmcc-grid
 * (calibration): the search runs first on the coarse grid MMCC_CAL_COARSE (a tenth of the
 * cost: the mixture PLDs shrink with the grid, the rows are the same), whose crossing and slope
 * start the secant steps on the requested grid (usually 2-3 evaluations instead of 6-10; BSR-16,
 * n = 1000, delta 1e-10: 15.7 s -> see bench_account). The answer is always an evaluation on
 * the requested grid that is <= the target, as without the coarse search. */
#define MMCC_CAL_COARSE 1e-2
static dpc_status calibrate_mmcc(const dpc_mech_run *run, const dpc_account_opts *o,
                                 double epsilon, double delta, double *best, dpc_error *err)
{
    mmcc_ctx cc;
    dpc_status st = mmcc_prepare(run, o, delta, &cc, err);
    if (st == DPC_E_UNSUPPORTED) return DPC_OK;
    if (st) return st;
    dpc_account_opts co = *o;
    if (co.pld_interval < MMCC_CAL_COARSE) co.pld_interval = MMCC_CAL_COARSE;
    mmcc_cal mc = {&cc, o, DPC_OK, err}, cc2 = {&cc, &co, DPC_OK, err};
    double u0 = log(*best), u = u0, slope = -1.0, uc = u0 - 0.1;
    /* the coarse crossing (any failure or miss only costs the shortcut) */
    if (co.pld_interval > o->pld_interval && mmcc_eps_u(u0, &cc2) < epsilon && !cc2.st &&
        dpc__secant_log(mmcc_eps_u, &cc2, epsilon, &uc, &slope, 1e-3, 0, 10, u0) == 0 &&
        uc < u0)
        u = uc;
    if (cc2.st == DPC_E_CANCELLED || cc2.st == DPC_E_NOMEM) {
        mmcc_release(&cc);
        return cc2.st;
    }
    /* without a coarse crossing: only where MMCC is below the target at the best z so far */
    if (u == u0 && mmcc_eps_u(u0, &mc) < epsilon && !mc.st) u = u0 - 0.1;
    if (!mc.st && u < u0) {
        double uu = u;
        if (dpc__secant_log(mmcc_eps_u, &mc, epsilon, &uu, &slope, 5e-5, 1, 14, u0) == 0 &&
            uu < u0)
            *best = exp(uu);
    }
    mmcc_release(&cc);
    return mc.st;
}

dpc_status dpc_account_mech_calibrate_run(const dpc_mech_run *run, const dpc_account_opts *o,
                                          double epsilon, double delta, double *noise_multiplier,
                                          dpc_account_mech_info *info, dpc_error *err)
{
    if (!o) return dpc_error_param(err, DPC_E_INVALID, "o", "NULL");
    dpc_account_opts t = *o; /* every route and the reported info on the target's grid */
    dpc_account_opts_for_target(&t, epsilon);
    return calibrate_run_at(run, &t, epsilon, delta, noise_multiplier, info, err);
}

static dpc_status calibrate_run_at(const dpc_mech_run *run, const dpc_account_opts *o,
                                   double epsilon, double delta, double *noise_multiplier,
                                   dpc_account_mech_info *info, dpc_error *err)
{
    dpc_status st;
    if ((st = check_run(run, err))) return st;
    if (!noise_multiplier)
        return dpc_error_param(err, DPC_E_INVALID, "noise_multiplier", "output pointer is NULL");
    if (run->n_pre) {
        if ((st = calibrate_pre(run, o, epsilon, delta, noise_multiplier, err))) return st;
        if (!info) return DPC_OK;
        dpc_account_result r;
        return dpc_account_mech_epsilon(run, *noise_multiplier, o, delta, &r, info, err);
    }
    /* whole run (exact GDP unless zCDP was asked for) */
    dpc_account_opts w;
    dpc_account_opts_init(&w, o->accountant == DPC_ACCOUNTANT_ZCDP ? DPC_ACCOUNTANT_ZCDP
                                                                    : DPC_ACCOUNTANT_GDP);
    w.zcdp_conv = o->zcdp_conv;
    double best, z;
    if ((st = dpc__account_mech_calibrate(run->mech, &run->part, 1.0, &w, epsilon, delta, &best,
                                          NULL, NULL, err)))
        return st;
    /* banded MF, where it applies */
    if (run->q < 1.0 && !run->balls_in_bins && o->accountant != DPC_ACCOUNTANT_ZCDP &&
        o->accountant != DPC_ACCOUNTANT_GDP) {
        st = dpc__account_mech_calibrate(run->mech, &run->part, run->q, o, epsilon, delta, &z,
                                         NULL, NULL, NULL);
        if (st == DPC_OK && z < best) best = z;
        else if (st && st != DPC_E_UNSUPPORTED)
            return dpc__account_mech_calibrate(run->mech, &run->part, run->q, o, epsilon, delta,
                                               &z, NULL, NULL, err);
    }
    if ((st = calibrate_mmcc(run, o, epsilon, delta, &best, err))) return st;
    if ((st = calibrate_bib(run, o, epsilon, delta, &best, err))) return st;
    *noise_multiplier = best;
    if (info) {
        dpc_account_result r;
        if ((st = dpc_account_mech_epsilon(run, best, o, delta, &r, info, err))) return st;
    }
    return DPC_OK;
}
