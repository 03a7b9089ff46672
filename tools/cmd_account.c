/* cmd_account.c — `dpcorr account MODE`: epsilon, delta, noise and step calibration, and
 * zCDP/GDP conversions, for DP-SGD-style events and for correlated-noise mechanisms (--mech).
 * Each mode has its own option table; the searches and calibrations are the library's. */
#include "cli.h"
#include "progress.h"
#include "dpcorr/account.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef enum { MODE_EPSILON, MODE_DELTA, MODE_SIGMA, MODE_STEPS, MODE_CONVERT } acct_mode;
static const char *const mode_names[] = {"epsilon", "delta", "sigma", "steps", "convert"};

/* ---- options ------------------------------------------------------------------------------- */

#define SEC "accounting"
static const opt_spec A_ACCOUNTANT = {
    .name = "--accountant", .metavar = "A", .type = OPT_CHOICE, .choices = "rdp|pld|zcdp|gdp",
    .section = SEC, .param = "accountant",
    .help = "rdp | pld | zcdp | gdp (default pld, as train; with --mech and no --q: gdp, exact; --sampling fixed: rdp)",
    .example = "--accountant rdp"};
static const opt_spec A_CONV_ACCOUNTANT = {
    .name = "--accountant", .metavar = "A", .type = OPT_CHOICE, .choices = "zcdp|gdp",
    .section = SEC, .param = "accountant",
    .help = "zcdp (default; gdp when --mu is given) | gdp", .example = "! --accountant gdp --epsilon 1 --delta 1e-5"};
static const opt_spec A_SIGMA = {
    .name = "--sigma", .metavar = "S", .type = OPT_DOUBLE, .lo = 0, .hi = INFINITY,
    .flags = OPT_LO_OPEN, .section = SEC, .param = "sigma,parts.sigma,noise_multiplier,z",
    .help = "noise multiplier: noise std / sensitivity; with --mech the noise std per row of Z "
            "is S x clip x the column norm of C (required)",
    .example = "--sigma 3"};
static const opt_spec A_Q = {
    .name = "--q", .metavar = "Q", .type = OPT_DOUBLE, .lo = 0, .hi = 1, .flags = OPT_LO_OPEN,
    .section = SEC, .param = "q,parts.q",
    .help = "sampling rate in (0,1] (default 1: no sampling); with --mech: Poisson at every step "
            "(any mechanism; MMCC for C >= 0), or with --cyclic cyclic Poisson (amplified banded "
            "MF); the best valid route is reported",
    .example = "--q 0.5"};
static const opt_spec A_STEPS = {
    .name = "--steps", .metavar = "N", .type = OPT_UINT, .lo = 1, .hi = 1099511627776.0,
    .section = SEC, .param = "steps,count,parts.count,mech.steps",
    .help = "number of steps (compositions); with --mech also its n (required)",
    .example = "--steps 17"};
static const opt_spec A_CONV_STEPS = {
    .name = "--steps", .metavar = "N", .type = OPT_UINT, .lo = 1, .hi = 1099511627776.0,
    .section = SEC, .param = "steps,count",
    .help = "also print the noise multiplier of N composed Gaussians with that total (default 1)",
    .example = "! --rho 1 --delta 1e-5 --steps 17"};
static const opt_spec A_DELTA = {
    .name = "--delta", .metavar = "D", .type = OPT_DOUBLE, .lo = 0, .hi = 1,
    .flags = OPT_LO_OPEN | OPT_HI_OPEN, .section = SEC, .param = "delta",
    .help = "target or given delta, in (0,1)", .example = "--delta 1e-3"};
static const opt_spec A_EPSILON = {
    .name = "--epsilon", .metavar = "E", .type = OPT_DOUBLE, .lo = 0, .hi = INFINITY,
    .section = SEC, .param = "epsilon,eps", .help = "target or given epsilon, >= 0 (sigma, steps: > 0)",
    .example = "--epsilon 2.5"};
static const opt_spec A_SAMPLING = {
    .name = "--sampling", .metavar = "S", .type = OPT_CHOICE, .choices = "poisson|fixed",
    .section = SEC, .param = "sampling,parts.sampling", .when = "--q < 1 and no --mech",
    .help = "poisson | fixed: how a batch is drawn (default poisson; fixed = a batch of q n "
            "without replacement, rdp and replace-one only)",
    .example = "--q 0.5 --neighbor replace-one --sampling fixed"};
static const opt_spec A_NEIGHBOR = {
    .name = "--neighbor", .metavar = "R", .type = OPT_CHOICE,
    .choices = "add-remove|zero-out|replace-one", .section = SEC, .param = "neighbor",
    .help = "add-remove | zero-out | replace-one (default add-remove; zero-out with --mech)",
    .example = "--neighbor replace-one"};
static const opt_spec A_SENSITIVITY = {
    .name = "--sensitivity", .metavar = "X", .type = OPT_DOUBLE, .lo = 0, .hi = INFINITY,
    .flags = OPT_LO_OPEN, .section = SEC, .param = "sensitivity,parts.sensitivity",
    .when = "no --mech (a mechanism has its own)",
    .help = "L2 sensitivity under --neighbor (default 1; only the ratio sigma/sensitivity matters)",
    .example = "--sensitivity 2"};
static const opt_spec A_ORDERS = {
    .name = "--orders", .metavar = "A1,A2,..", .type = OPT_LIST, .lo = 1, .hi = 1e6,
    .flags = OPT_LO_OPEN, .section = SEC, .param = "orders", .when = "--accountant rdp",
    .help = "Renyi orders, each in (1, 1e6] (default 144, 1.05..4096)",
    .example = "--accountant rdp --orders 2,8"};
static const opt_spec A_REFINE = {
    .name = "--refine", .type = OPT_FLAG, .section = SEC, .param = "rdp_refine",
    .when = "--accountant rdp", .help = "refine the best order by a continuous search",
    .example = "--accountant rdp --refine"};
static const opt_spec A_INTERVAL = {
    .name = "--interval", .metavar = "H", .type = OPT_DOUBLE, .lo = 0, .hi = 1,
    .flags = OPT_LO_OPEN, .section = SEC, .param = "pld_interval,interval",
    .when = "--accountant pld", .help = "loss grid step in (0, 1] (default 1e-4)",
    .example = "--accountant pld --interval 1e-3"};
static const opt_spec A_DISC = {
    .name = "--disc", .metavar = "D", .type = OPT_CHOICE,
    .choices = "connect-dots|round-up|round-down", .section = SEC, .param = "pld_disc,disc",
    .when = "--accountant pld",
    .help = "connect-dots (default) | round-up (both upper bounds) | round-down (a lower bound)",
    .example = "--accountant pld --disc round-up"};
static const opt_spec A_CONVERSION = {
    .name = "--conversion", .metavar = "C", .type = OPT_CHOICE, .choices = "tight|bun-steinke",
    .section = SEC, .param = "zcdp_conv,conversion", .when = "--accountant zcdp",
    .help = "tight (default) | bun-steinke", .example = "--accountant zcdp --conversion bun-steinke"};
static const opt_spec A_RHO = {
    .name = "--rho", .metavar = "R", .type = OPT_DOUBLE, .lo = 0, .hi = INFINITY, .section = SEC,
    .param = "rho", .when = "--accountant zcdp", .conflicts = "--mu",
    .help = "zCDP rho >= 0; with --delta gives epsilon, with --epsilon gives delta",
    .example = "! --rho 0.7 --delta 1e-5"};
static const opt_spec A_MU = {
    .name = "--mu", .metavar = "M", .type = OPT_DOUBLE, .lo = 0, .hi = INFINITY,
    .flags = OPT_LO_OPEN, .section = SEC, .param = "mu", .when = "--accountant gdp",
    .help = "GDP mu > 0; with --delta gives epsilon, with --epsilon gives delta",
    .example = "! --mu 0.7 --delta 1e-5"};
static const opt_spec A_BIB = {
    .name = "--balls-in-bins", .metavar = "B", .type = OPT_UINT, .lo = 1, .hi = 1099511627776.0,
    .section = SEC, .param = "balls_in_bins,part.b", .when = "--mech", .conflicts = "--q --cyclic",
    .help = "balls-in-bins sampling over B steps per period: each example in one uniformly random "
            "step of each period, the same every period (k = ceil(N/B)); amplified by the "
            "balls-in-bins route (identity: exact bound; other C >= 0: a deterministic "
            "sampling-free bound, with the Monte Carlo upper confidence bound beside it) when it "
            "beats the whole run; default accountant pld",
    .example = "--mech identity --balls-in-bins 10"};
static const opt_spec A_BIB_MC = {
    .name = "--bib-monte-carlo", .type = OPT_FLAG, .section = SEC, .param = "bib_monte_carlo",
    .when = "--balls-in-bins",
    .help = "let the Monte Carlo's high-probability bound (confidence 1 - 1e-6) be the "
            "balls-in-bins epsilon where it is below the deterministic bound",
    .example = "--mech nu --balls-in-bins 10 --bib-monte-carlo"};
static const opt_spec A_MAX_STEPS = {
    .name = "--max-steps", .metavar = "N", .type = OPT_UINT, .lo = 1, .hi = 1099511627776.0,
    .section = SEC, .param = "max_steps", .help = "the largest answer searched (default 10000000)",
    .example = "--max-steps 5"};
#undef SEC

#define ACCT_COMMON                                                                                \
    &A_ACCOUNTANT, &A_Q, &A_SAMPLING, &A_NEIGHBOR, &A_SENSITIVITY, &A_ORDERS, &A_REFINE,         \
        &A_INTERVAL, &A_DISC, &A_CONVERSION,                                                      \
        MECH_KIND_OPTS(MO_MECH, MO_MECH_MOMENTUM, MO_MECH_DECAY), &MO_PARTICIPATIONS,             \
        &MO_MIN_SEP, &MO_CYCLIC, &OPT_JSON, &OPT_DRY_RUN, &OPT_HELP

static const opt_spec *const EPS_OPTS[] = {&A_SIGMA, &A_STEPS, &A_DELTA, &A_BIB, &A_BIB_MC,
                                           ACCT_COMMON, NULL};
static const opt_spec *const DELTA_OPTS[] = {&A_SIGMA, &A_STEPS, &A_EPSILON, ACCT_COMMON, NULL};
static const opt_spec *const SIGMA_OPTS[] = {&A_STEPS, &A_EPSILON, &A_DELTA, &A_BIB, &A_BIB_MC,
                                             ACCT_COMMON, NULL};
static const opt_spec *const STEPS_OPTS[] = {&A_SIGMA, &A_EPSILON, &A_DELTA, &A_MAX_STEPS,
                                             ACCT_COMMON, NULL};
static const opt_spec *const CONVERT_OPTS[] = {
    &A_CONV_ACCOUNTANT, &A_RHO, &A_MU, &A_DELTA, &A_EPSILON, &A_CONVERSION, &A_CONV_STEPS,
    &OPT_JSON, &OPT_DRY_RUN, &OPT_HELP, NULL};

#define ACCT_USAGE(mode, need) "dpcorr account " mode " " need " [options]"
static const opt_cmd MODE_CMDS[5] = {
    {.name = "account epsilon", .usage = ACCT_USAGE("epsilon", "--sigma S --steps N --delta D"),
     .about = "The smallest epsilon for the delta given.", .opts = EPS_OPTS, .kind_opt = "--mech",
     .minimal = "--sigma 2 --steps 10 --delta 1e-5"},
    {.name = "account delta", .usage = ACCT_USAGE("delta", "--sigma S --steps N --epsilon E"),
     .about = "The smallest delta for the epsilon given.", .opts = DELTA_OPTS,
     .kind_opt = "--mech", .minimal = "--sigma 2 --steps 10 --epsilon 1"},
    {.name = "account sigma", .usage = ACCT_USAGE("sigma", "--steps N --epsilon E --delta D"),
     .about = "The smallest noise multiplier for the budget.", .opts = SIGMA_OPTS,
     .kind_opt = "--mech", .minimal = "--steps 10 --epsilon 1 --delta 1e-5"},
    {.name = "account steps", .usage = ACCT_USAGE("steps", "--sigma S --epsilon E --delta D"),
     .about = "The largest number of steps for the budget (with --mech: the mechanism is rebuilt "
              "for every candidate n).",
     .opts = STEPS_OPTS, .kind_opt = "--mech", .minimal = "--sigma 2 --epsilon 1 --delta 1e-5"},
    {.name = "account convert", .usage = ACCT_USAGE("convert", "(--rho R | --mu M) ..."),
     .about = "zcdp: --rho with --delta (-> epsilon) or --epsilon (-> delta), or --epsilon "
              "--delta (-> the largest rho); gdp: the same with --mu.",
     .opts = CONVERT_OPTS, .minimal = "--epsilon 1 --delta 1e-5"},
};

static void account_overview(FILE *f)
{
    fprintf(f, "usage: dpcorr account MODE [options]   (dpcorr account MODE --help for its options)\n\n"
               "modes:\n"
               "  epsilon   the smallest epsilon for --delta (needs --sigma --steps --delta)\n"
               "  delta     the smallest delta for --epsilon (needs --sigma --steps --epsilon)\n"
               "  sigma     the smallest noise multiplier for the budget (--steps --epsilon --delta)\n"
               "  steps     the largest number of steps for the budget (--sigma --epsilon --delta)\n"
               "  convert   zcdp: --rho with --delta (-> epsilon) or --epsilon (-> delta), or\n"
               "            --epsilon --delta (-> the largest rho); gdp: the same with --mu\n\n"
               "Every mode also takes --mech KIND [mechanism options] (not convert): the event of\n"
               "a correlated-noise mechanism run, with --sigma its noise multiplier.\n");
}

/* ---- configuration ------------------------------------------------------------------------- */

typedef struct acct {
    acct_mode mode;
    dpc_account_opts o;
    dpc_neighbor neighbor;
    dpc_sampling sampling;
    double sigma, q, delta, epsilon, sensitivity, rho, mu;
    int have_delta, have_epsilon, have_rho, have_mu, json;
    size_t steps, max_steps, bins; /* bins: --balls-in-bins (0: not balls-in-bins) */
    cli_mech_opts mo;
} acct;

static const mech_read ACCT_MECH = {&MO_MECH, NULL, &MO_MECH_MOMENTUM, &MO_MECH_DECAY, 1, 0, 1, 1};

/* The accountant and its own options (only the chosen accountant's are read). */
static void read_accountant(acct *a, opt_set *s, dpc_accountant def)
{
    static const dpc_accountant accs[] = {DPC_ACCOUNTANT_RDP, DPC_ACCOUNTANT_PLD,
                                          DPC_ACCOUNTANT_ZCDP, DPC_ACCOUNTANT_GDP};
    int d = def == DPC_ACCOUNTANT_GDP ? 3 : def == DPC_ACCOUNTANT_PLD ? 1 : 0;
    dpc_accountant acc = accs[opt_word(s, &A_ACCOUNTANT, d)];
    dpc_account_opts_init(&a->o, acc);
    if (acc == DPC_ACCOUNTANT_RDP) {
        a->o.orders = opt_list(s, &A_ORDERS, &a->o.norders);
        a->o.rdp_refine = opt_given(s, &A_REFINE);
    } else if (acc == DPC_ACCOUNTANT_PLD) {
        a->o.pld_interval = opt_dbl(s, &A_INTERVAL, a->o.pld_interval);
        a->o.pld_disc = (dpc_pld_disc)opt_word(s, &A_DISC, (int)a->o.pld_disc);
    } else if (acc == DPC_ACCOUNTANT_ZCDP) {
        a->o.zcdp_conv = opt_word(s, &A_CONVERSION, 0) ? DPC_ZCDP_BUN_STEINKE : DPC_ZCDP_TIGHT;
    }
}

static int need(opt_set *s, const opt_spec *o, acct_mode mode)
{
    if (opt_typed(s, o)) return 0;
    return opt_fail_at(s, o, "required in mode %s", mode_names[mode]);
}

/* --mech with --q < 1 in modes epsilon and sigma: Poisson at every step (every route is tried)
 * unless --cyclic gives the period; the participation options then have no say. */
static int poisson_every_step(const acct *a)
{
    return a->mo.have_kind && a->q < 1.0 && a->mo.part.kind != DPC_PART_CYCLIC &&
           (a->mode == MODE_EPSILON || a->mode == MODE_SIGMA);
}

static dpc_participation run_part(const acct *a, size_t steps)
{
    dpc_participation p = {DPC_PART_CYCLIC, steps, 1};
    if (a->bins) { /* balls in bins: one step per period of `bins`, ceil(n / bins) periods */
        p.b = a->bins;
        p.k = (steps + a->bins - 1) / a->bins;
        return p;
    }
    return poisson_every_step(a) ? p : a->mo.part;
}

/* The run handed to the library's best-route accounting (sampled or balls-in-bins). */
static int every_route(const acct *a)
{
    return a->mo.have_kind && (a->q < 1.0 || a->bins);
}

/* The mechanism options (only with --mech). */
static int read_mech(acct *a, opt_set *s)
{
    if (!opt_typed(s, &MO_MECH)) return 0; /* the mechanism and participation options unused */
    mech_read r = ACCT_MECH;
    if (a->mode == MODE_EPSILON || a->mode == MODE_SIGMA) {
        a->bins = opt_size(s, &A_BIB, 0);
    }
    int every = a->q < 1.0 && !opt_typed(s, &MO_CYCLIC) &&
                (a->mode == MODE_EPSILON || a->mode == MODE_SIGMA);
    r.participation = !every && !a->bins;
    if (a->bins && (opt_typed(s, &MO_PARTICIPATIONS) || opt_typed(s, &MO_MIN_SEP)))
        return opt_fail_at(s, opt_typed(s, &MO_PARTICIPATIONS) ? &MO_PARTICIPATIONS : &MO_MIN_SEP,
                           "not used with --balls-in-bins (the pattern is one step per period)");
    int rc = cli_mech_read(&a->mo, s, &r);
    if (rc || !every) return rc;
    if (opt_typed(s, &MO_PARTICIPATIONS) || opt_typed(s, &MO_MIN_SEP))
        return opt_fail_at(s, opt_typed(s, &MO_PARTICIPATIONS) ? &MO_PARTICIPATIONS : &MO_MIN_SEP,
                           "not used by this configuration (with --q < 1 every step is a Poisson "
                           "sample; --cyclic makes the pattern cyclic)");
    return 0;
}

/* Every mode but convert. */
static int read_event_opts(acct *a, opt_set *s)
{
    a->q = opt_dbl(s, &A_Q, 1.0);
    int rc = read_mech(a, s);
    if (rc) return rc;
    int mech = a->mo.have_kind;
    a->sigma = a->mode == MODE_SIGMA ? 1.0 : opt_dbl(s, &A_SIGMA, 0);
    if (a->mode != MODE_STEPS) a->steps = opt_size(s, &A_STEPS, 0);
    else a->max_steps = opt_size(s, &A_MAX_STEPS, 10000000);
    a->delta = a->mode == MODE_DELTA ? NAN : opt_dbl(s, &A_DELTA, NAN);
    a->epsilon = a->mode == MODE_EPSILON ? NAN : opt_dbl(s, &A_EPSILON, NAN);
    a->neighbor = (dpc_neighbor)opt_word(s, &A_NEIGHBOR, mech ? DPC_NEIGHBOR_ZERO_OUT
                                                              : DPC_NEIGHBOR_ADD_REMOVE);
    a->sampling = DPC_SAMPLING_NONE;
    if (!mech && a->q < 1.0)
        a->sampling = opt_word(s, &A_SAMPLING, 0) ? DPC_SAMPLING_FIXED : DPC_SAMPLING_POISSON;
    a->sensitivity = mech ? 1.0 : opt_dbl(s, &A_SENSITIVITY, 1.0);
    /* the library's default, as the trainer: a mechanism without sampling is one Gaussian
     * release, which GDP accounts exactly (the trainer does the same) */
    read_accountant(a, s, mech && a->q == 1.0 && !a->bins       ? DPC_ACCOUNTANT_GDP
                          : a->sampling == DPC_SAMPLING_FIXED ? DPC_ACCOUNTANT_RDP /* PLD: n/a */
                                                              : dpc_account_default_accountant());
    if ((a->mode == MODE_EPSILON || a->mode == MODE_SIGMA) && a->bins) /* else: not used */
        a->o.bib_monte_carlo = opt_given(s, &A_BIB_MC);
    a->json = opt_given(s, &OPT_JSON);
    if (a->mode != MODE_STEPS && (rc = need(s, &A_STEPS, a->mode))) return rc;
    if (a->mode != MODE_SIGMA && (rc = need(s, &A_SIGMA, a->mode))) return rc;
    if (a->mode != MODE_DELTA && (rc = need(s, &A_DELTA, a->mode))) return rc;
    if (a->mode != MODE_EPSILON && (rc = need(s, &A_EPSILON, a->mode))) return rc;
    if ((a->mode == MODE_SIGMA || a->mode == MODE_STEPS) && !(a->epsilon > 0.0))
        return opt_fail_at(s, &A_EPSILON, "must be > 0 for mode %s", mode_names[a->mode]);
    if ((rc = opt_finish(s))) return rc;
    if (mech) {
        a->mo.p.steps = a->mode == MODE_STEPS ? 1 : a->steps; /* steps: searched (validated at 1) */
        if ((rc = cli_mech_load(&a->mo, s, &ACCT_MECH))) return rc;
        dpc_mech_params *p = &a->mo.p;
        if ((p->kind == DPC_MECH_BSR || p->kind == DPC_MECH_BISR) && !p->bands) {
            if (a->mode == MODE_STEPS) /* the bands would change with every candidate n */
                return opt_fail_at(s, &MO_BANDS, "must be given with mode steps");
            dpc_participation part = run_part(a, a->steps);
            p->bands = dpc_mech_default_bands(a->steps, part.k, part.b); /* as train */
        }
    }
    return 0;
}

static int read_convert_opts(acct *a, opt_set *s)
{
    a->have_mu = opt_typed(s, &A_MU);
    int w = opt_word(s, &A_CONV_ACCOUNTANT, a->have_mu ? 1 : 0);
    dpc_account_opts_init(&a->o, w ? DPC_ACCOUNTANT_GDP : DPC_ACCOUNTANT_ZCDP);
    if (w) {
        a->have_mu = opt_given(s, &A_MU);
        a->mu = opt_dbl(s, &A_MU, NAN);
    } else {
        a->have_rho = opt_given(s, &A_RHO);
        a->rho = opt_dbl(s, &A_RHO, NAN);
        a->o.zcdp_conv = opt_word(s, &A_CONVERSION, 0) ? DPC_ZCDP_BUN_STEINKE : DPC_ZCDP_TIGHT;
    }
    a->have_delta = opt_given(s, &A_DELTA);
    a->delta = opt_dbl(s, &A_DELTA, NAN);
    a->have_epsilon = opt_given(s, &A_EPSILON);
    a->epsilon = opt_dbl(s, &A_EPSILON, NAN);
    a->steps = opt_size(s, &A_CONV_STEPS, 1);
    a->json = opt_given(s, &OPT_JSON);
    int rc = opt_finish(s);
    if (rc) return rc;
    const opt_spec *p = w ? &A_MU : &A_RHO;
    if (w ? a->have_mu : a->have_rho) {
        if (a->have_delta == a->have_epsilon)
            return opt_fail_at(s, p, "give exactly one of --delta and --epsilon");
    } else if (!a->have_delta || !a->have_epsilon) {
        return opt_fail_at(s, p, "give it, or both --epsilon and --delta");
    }
    return 0;
}

static void dry_run(const acct *a)
{
    opt_dry_str("mode", mode_names[a->mode]);
    opt_dry_str("accountant", dpc_accountant_name(a->o.accountant));
    opt_dry_list("orders", a->o.orders, a->o.orders ? a->o.norders : 0);
    opt_dry_uint("rdp_refine", (uint64_t)a->o.rdp_refine);
    opt_dry_num("pld_interval", a->o.pld_interval);
    opt_dry_str("pld_disc", dpc_pld_disc_name(a->o.pld_disc));
    opt_dry_str("zcdp_conv", a->o.zcdp_conv == DPC_ZCDP_TIGHT ? "tight" : "bun-steinke");
    opt_dry_num("sigma", a->sigma);
    opt_dry_num("q", a->q);
    opt_dry_uint("steps", a->steps);
    opt_dry_uint("max_steps", a->max_steps);
    opt_dry_num("delta", a->delta);
    opt_dry_num("epsilon", a->epsilon);
    opt_dry_num("rho", a->rho);
    opt_dry_num("mu", a->mu);
    opt_dry_str("neighbor", dpc_neighbor_name(a->neighbor));
    opt_dry_str("sampling", a->sampling == DPC_SAMPLING_FIXED     ? "fixed"
                            : a->sampling == DPC_SAMPLING_POISSON ? "poisson"
                                                                   : "none");
    opt_dry_num("sensitivity", a->sensitivity);
    opt_dry_uint("json", (uint64_t)a->json);
    opt_dry_uint("balls_in_bins", a->bins);
    opt_dry_uint("bib_monte_carlo", (uint64_t)a->o.bib_monte_carlo);
    if (a->mo.have_kind) cli_mech_dry(&a->mo, !poisson_every_step(a) && !a->bins);
}

/* ---- evaluation ---------------------------------------------------------------------------- */

typedef struct built {
    dpc_gauss_event ev;
    dpc_account_mech_info info;
    int have_info;
} built;

static dpc_status build(acct *a, size_t steps, double sigma, built *b, dpc_error *err)
{
    b->have_info = 0;
    if (!a->mo.have_kind) {
        dpc_gauss_event_init(&b->ev);
        b->ev.sigma = sigma;
        b->ev.sensitivity = a->sensitivity;
        b->ev.sampling = a->sampling;
        b->ev.q = a->q;
        b->ev.count = steps;
        return DPC_OK;
    }
    a->mo.p.steps = steps;
    dpc_mech *m = NULL;
    dpc_status st = dpc_mech_new(&m, &a->mo.p, err);
    if (!st) st = dpc_account_mech_event(m, &a->mo.part, sigma, a->q, &b->ev, &b->info, err);
    dpc_mech_free(m);
    b->have_info = st == DPC_OK;
    return st;
}

static dpc_status eval_eps(acct *a, size_t steps, double sigma, built *b, dpc_account_result *r,
                           dpc_error *err)
{
    if (every_route(a)) { /* every route: whole run, banded MF, MMCC, balls in bins */
        a->mo.p.steps = steps;
        dpc_mech *m = NULL;
        dpc_status st = dpc_mech_new(&m, &a->mo.p, err);
        dpc_mech_run run = {m, run_part(a, steps), a->q, a->bins > 0, NULL, 0};
        if (!st) st = dpc_account_mech_epsilon(&run, sigma, &a->o, a->delta, r, &b->info, err);
        dpc_mech_free(m);
        b->have_info = st == DPC_OK;
        return st;
    }
    dpc_status st = build(a, steps, sigma, b, err);
    if (st) return st;
    dpc_event ev = {a->neighbor, 1, &b->ev};
    return dpc_account_epsilon(&ev, &a->o, a->delta, r, err);
}

/* The noise multiplier for the budget (mode sigma): the library's calibrations. */
static dpc_status calibrate(acct *a, double *sigma, built *b, dpc_error *err)
{
    if (a->mo.have_kind) {
        dpc_mech *m = NULL;
        a->mo.p.steps = a->steps;
        dpc_status st = dpc_mech_new(&m, &a->mo.p, err);
        dpc_mech_run run = {m, run_part(a, a->steps), a->q, a->bins > 0, NULL, 0}; /* every route */
        if (!st && every_route(a))
            st = dpc_account_mech_calibrate_run(&run, &a->o, a->epsilon, a->delta, sigma, NULL, err);
        else if (!st)
            st = dpc_account_mech_calibrate(m, &a->mo.part, a->q, &a->o, a->epsilon, a->delta,
                                            sigma, NULL, NULL, err);
        dpc_mech_free(m);
        return st;
    }
    dpc_status st = build(a, a->steps, 1.0, b, err);
    if (st) return st;
    dpc_event ev = {a->neighbor, 1, &b->ev};
    return dpc_account_calibrate_sigma(&ev, &a->o, a->epsilon, a->delta, sigma, err);
}

/* The largest number of steps for the budget (mode steps): the library's searches. */
static dpc_status search_steps(acct *a, size_t *steps, built *b, dpc_error *err)
{
    if (a->mo.have_kind)
        return dpc_account_mech_steps(&a->mo.p, &a->mo.part, a->sigma, a->q, &a->o, a->epsilon,
                                      a->delta, a->max_steps, steps, err);
    dpc_status st = build(a, 1, a->sigma, b, err);
    if (st) return st;
    dpc_event ev = {a->neighbor, 1, &b->ev};
    return dpc_account_calibrate_steps(&ev, 0, &a->o, a->epsilon, a->delta, a->max_steps, steps,
                                       err);
}

/* ---- output -------------------------------------------------------------------------------- */

static void report_json(const acct *a, const built *b, size_t steps, double sigma,
                        const dpc_account_result *r)
{
    jw w;
    jw_begin_line(&w, stdout);
    jw_str(&w, "mode", mode_names[a->mode]);
    jw_str(&w, "accountant", dpc_accountant_name(a->o.accountant));
    jw_num(&w, "epsilon", r->epsilon);
    jw_num(&w, "delta", r->delta);
    jw_num(&w, "sigma", sigma);
    jw_int(&w, "steps", (long long)steps);
    jw_num(&w, "q", a->q);
    jw_str(&w, "neighbor", dpc_neighbor_name(a->neighbor));
    if (a->o.accountant == DPC_ACCOUNTANT_RDP) jw_num(&w, "order", r->order);
    if (a->o.accountant == DPC_ACCOUNTANT_ZCDP) jw_num(&w, "rho", r->rho);
    if (a->o.accountant == DPC_ACCOUNTANT_GDP) jw_num(&w, "mu", r->mu);
    if (a->o.accountant == DPC_ACCOUNTANT_PLD) {
        jw_num(&w, "interval", a->o.pld_interval);
        jw_str(&w, "discretization", dpc_pld_disc_name(a->o.pld_disc));
        if (!isnan(r->order)) jw_num(&w, "rdp_order", r->order); /* RDP's bound was smaller */
    }
    if (b && b->have_info) {
        const dpc_account_mech_info *in = &b->info;
        dpc_participation pp = run_part(a, steps);
        jw_str(&w, "mech", dpc_mech_kind_name(a->mo.p.kind));
        jw_int(&w, "participations", (long long)pp.k);
        jw_int(&w, "min_sep", (long long)pp.b);
        jw_num(&w, "sensitivity", in->sensitivity);
        jw_bool(&w, "sensitivity_exact", in->sensitivity_exact);
        jw_bool(&w, "amplified", in->amplified);
        jw_int(&w, "rounds", (long long)in->rounds);
        jw_num(&w, "noise_multiplier", in->noise_multiplier);
        jw_num(&w, "column_norm", in->column_norm);
        jw_num(&w, "noise_std_per_unit_clip", in->noise_std);
        jw_num(&w, "run_sigma", in->run_sigma);
        jw_str(&w, "route", dpc_mech_route_name(in->route));
        if (every_route(a)) {
            for (int k = 0; k < DPC_ROUTE_COUNT; k++) {
                char key[40];
                snprintf(key, sizeof key, "epsilon_%s", dpc_mech_route_name((dpc_mech_route)k));
                jw_num(&w, key, in->eps_routes[k]);
                if (in->route_why[k]) {
                    snprintf(key, sizeof key, "why_%s", dpc_mech_route_name((dpc_mech_route)k));
                    jw_str(&w, key, in->route_why[k]);
                }
            }
            jw_num(&w, "epsilon_single", in->epsilon_single);
            if (in->advice) jw_str(&w, "advice", in->advice);
        }
        if (a->bins) jw_int(&w, "bins", (long long)a->bins);
        if (in->mc_samples) {
            jw_int(&w, "mc_samples", (long long)in->mc_samples);
            jw_num(&w, "mc_confidence", in->mc_confidence);
            jw_int(&w, "mc_seed", (long long)in->mc_seed);
        }
        if (in->route == DPC_ROUTE_BALLS_IN_BINS) {
            char g[48];
            if (in->bib_deterministic) snprintf(g, sizeof g, "deterministic");
            else snprintf(g, sizeof g, "high-probability, confidence %.10g", in->mc_confidence);
            jw_str(&w, "guarantee", g);
        }
        if (in->mc_samples && in->bib_deterministic) jw_num(&w, "epsilon_mc", in->eps_bib_mc);
        if (in->note) jw_str(&w, "note", in->note);
    }
    jw_bool(&w, "upper_bound", r->upper_bound);
    jw_finish(&w);
}

static void report_text(const acct *a, const built *b, size_t steps, double sigma,
                        const dpc_account_result *r)
{
    printf("accountant    %s", dpc_accountant_name(a->o.accountant));
    if (a->o.accountant == DPC_ACCOUNTANT_RDP && !isnan(r->order)) printf(" (order %.6g)", r->order);
    if (a->o.accountant == DPC_ACCOUNTANT_PLD)
        printf(" (%s, interval %g)", dpc_pld_disc_name(a->o.pld_disc), a->o.pld_interval);
    if (a->o.accountant == DPC_ACCOUNTANT_PLD && !isnan(r->order))
        printf("; answered by rdp (order %.6g): its bound is below the grid's", r->order);
    printf("\nneighbor      %s\n", dpc_neighbor_name(a->neighbor));
    if (b && b->have_info) {
        const dpc_account_mech_info *in = &b->info;
        dpc_participation pp = run_part(a, steps);
        printf("mechanism     %s, sensitivity %.6g%s (k = %zu, %s %zu)\n",
               dpc_mech_kind_name(a->mo.p.kind), in->sensitivity,
               in->sensitivity_exact ? "" : " (upper bound)", pp.k,
               pp.kind == DPC_PART_CYCLIC ? "period" : "min-sep", pp.b);
        if (in->route == DPC_ROUTE_BANDMF)
            printf("amplified     %zu rounds of a q = %g Poisson-subsampled Gaussian, z = %.6g\n",
                   in->rounds, a->q, in->noise_multiplier);
        else if (in->route == DPC_ROUTE_WHOLE_RUN)
            printf("whole run     one Gaussian, noise multiplier %.6g (noise std %.6g per unit "
                   "clip / sensitivity)\n",
                   in->run_sigma, in->noise_std);
        else if (in->route == DPC_ROUTE_MMCC && in->delta_slack == 0.0)
            printf("amplified     Poisson two-band bound over %zu rows (exact Renyi moments for "
                   "remove, Gibbs bound for add; below MMCC's conditional composition)\n",
                   in->rounds);
        else if (in->route == DPC_ROUTE_MMCC)
            printf("amplified     MMCC conditional composition over %zu rows (delta spent on "
                   "conditioning %.3g)\n",
                   in->rounds, in->delta_slack);
        else if (in->route == DPC_ROUTE_BALLS_IN_BINS && !in->mc_samples &&
                 a->mo.p.kind != DPC_MECH_IDENTITY)
            printf("amplified     balls in %zu bins: sampling-free bound (Renyi dynamic program and "
                   "post-processing domination, each direction the smaller)\n"
                   "guarantee     deterministic (no Monte Carlo beside it: above its work limit "
                   "of 1e9 operations, 2^17 draws x b^2; --bib-monte-carlo asks for it)\n",
                   pp.b);
        else if (in->route == DPC_ROUTE_BALLS_IN_BINS && in->mc_samples &&
                 in->bib_deterministic) {
            printf("amplified     balls in %zu bins: sampling-free bound (Renyi dynamic program and "
                   "post-processing domination, each direction the smaller)\n",
                   pp.b);
            printf("guarantee     deterministic; Monte Carlo beside it %.6g (%zu samples per "
                   "direction, confidence %.10g, seed %llu)%s\n",
                   in->eps_bib_mc, in->mc_samples, in->mc_confidence,
                   (unsigned long long)in->mc_seed,
                   in->eps_bib_mc < in->eps_routes[DPC_ROUTE_BALLS_IN_BINS]
                       ? ": tighter, but holds only with that confidence"
                       : "");
        } else if (in->route == DPC_ROUTE_BALLS_IN_BINS && in->mc_samples)
            printf("amplified     balls in %zu bins: Monte Carlo upper confidence bound (%zu "
                   "samples per direction, confidence %.10g, seed %llu)\n"
                   "guarantee     high-probability, confidence %.10g\n",
                   pp.b, in->mc_samples, in->mc_confidence, (unsigned long long)in->mc_seed,
                   in->mc_confidence);
        else if (in->route == DPC_ROUTE_BALLS_IN_BINS)
            printf("amplified     balls in %zu bins: random allocation of one Gaussian "
                   "(mu = %.6g), exact bound\nguarantee     deterministic\n",
                   pp.b, sqrt((double)pp.k) / in->noise_multiplier);
        printf("route         %s\n", dpc_mech_route_name(in->route));
        if (every_route(a)) {
            printf("routes       ");
            for (int k = 0; k < DPC_ROUTE_COUNT; k++)
                if (isfinite(in->eps_routes[k]))
                    printf(" %s %.6g", dpc_mech_route_name((dpc_mech_route)k), in->eps_routes[k]);
            printf("\n");
            for (int k = 0; k < DPC_ROUTE_COUNT; k++) /* every route: a number or a reason */
                if (in->route_why[k])
                    printf("  %-14s%s\n", dpc_mech_route_name((dpc_mech_route)k),
                           in->route_why[k]);
            printf("one participation, no amplification: epsilon %.6g\n", in->epsilon_single);
            if (in->advice) printf("advice        %s\n", in->advice);
            if (in->route != DPC_ROUTE_BALLS_IN_BINS && in->mc_samples && in->bib_deterministic)
                printf("balls-in-bins deterministic %.6g; Monte Carlo %.6g (high-probability, "
                       "confidence %.10g; --bib-monte-carlo lets it count)\n",
                       in->eps_routes[DPC_ROUTE_BALLS_IN_BINS], in->eps_bib_mc,
                       in->mc_confidence);
        }
        if (in->note) printf("note          %s\n", in->note);
    }
    if (a->mode != MODE_CONVERT) printf("sampling q    %g\n", a->q);
    printf("sigma         %.10g\n", sigma);
    printf("steps         %zu\n", steps);
    if (!isnan(r->rho)) printf("rho           %.10g\n", r->rho);
    if (!isnan(r->mu)) printf("mu            %.10g\n", r->mu);
    printf("epsilon       %.10g%s\n", r->epsilon,
           r->upper_bound ? "" : "  (optimistic: a lower bound)");
    printf("delta         %.6g\n", r->delta);
}

static void report(const acct *a, const built *b, size_t steps, double sigma,
                   const dpc_account_result *r)
{
    if (a->json) report_json(a, b, steps, sigma, r);
    else report_text(a, b, steps, sigma, r);
}

/* ---- modes --------------------------------------------------------------------------------- */

static int run_convert(acct *a, opt_set *s)
{
    dpc_error err = {0};
    dpc_account_result r = {NAN, NAN, NAN, NAN, NAN, 1};
    int zcdp = a->o.accountant == DPC_ACCOUNTANT_ZCDP;
    dpc_status st;
    if (zcdp ? a->have_rho : a->have_mu) {
        if (zcdp) {
            r.rho = a->rho;
            st = a->have_delta
                     ? dpc_zcdp_epsilon(a->rho, a->delta, a->o.zcdp_conv, &r.epsilon, NULL, &err)
                     : dpc_zcdp_delta(a->rho, a->epsilon, a->o.zcdp_conv, &r.delta, &err);
        } else {
            r.mu = a->mu;
            st = a->have_delta ? dpc_gdp_epsilon(a->mu, a->delta, &r.epsilon, &err)
                               : dpc_gdp_delta(a->mu, a->epsilon, &r.delta, &err);
        }
        if (a->have_delta) r.delta = a->delta;
        else r.epsilon = a->epsilon;
    } else {
        r.epsilon = a->epsilon;
        r.delta = a->delta;
        st = zcdp ? dpc_zcdp_rho_for(a->epsilon, a->delta, a->o.zcdp_conv, &r.rho, &err)
                  : dpc_gdp_mu_for(a->epsilon, a->delta, &r.mu, &err);
    }
    if (st) return opt_fail_lib(s, &err);
    /* the noise multiplier of `steps` composed Gaussians with that total rho / mu */
    double sigma;
    st = zcdp ? dpc_zcdp_sigma_for(r.rho, a->steps, &sigma, &err)
              : dpc_gdp_sigma_for(r.mu, a->steps, &sigma, &err);
    if (st) return opt_fail_lib(s, &err);
    report(a, NULL, a->steps, sigma, &r);
    return 0;
}

static int run_mode(acct *a, opt_set *s)
{
    dpc_error err = {0};
    built b = {0};
    dpc_account_result r;
    dpc_status st = DPC_OK;
    double sigma = a->sigma;
    size_t steps = a->steps;
    cli_progress pr;
    char what[48];
    snprintf(what, sizeof what, "dpcorr account %s", mode_names[a->mode]);
    a->o.progress = cli_progress_start(&pr, what, "stages", 0);
    switch (a->mode) {
    case MODE_DELTA:
        if (!(st = build(a, steps, sigma, &b, &err))) {
            dpc_event ev = {a->neighbor, 1, &b.ev};
            st = dpc_account_delta(&ev, &a->o, a->epsilon, &r, &err);
        }
        break;
    case MODE_SIGMA:
        st = calibrate(a, &sigma, &b, &err);
        dpc_account_opts_for_target(&a->o, a->epsilon); /* report on the calibration's grid */
        break;
    case MODE_STEPS: st = search_steps(a, &steps, &b, &err); break;
    default: break;
    }
    if (!st && a->mode != MODE_DELTA) st = eval_eps(a, steps, sigma, &b, &r, &err);
    cli_progress_end(&pr);
    if (st) return opt_fail_lib(s, &err);
    report(a, &b, steps, sigma, &r);
    return 0;
}

int cmd_account(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        account_overview(argc < 2 ? stderr : stdout);
        if (argc < 2) fprintf(stderr, "dpcorr account: expected a mode: epsilon, delta, sigma, "
                                      "steps or convert\n");
        return argc < 2 ? CLI_USAGE : 0;
    }
    size_t k = 0;
    while (k < 5 && strcmp(argv[1], mode_names[k])) k++;
    if (k == 5) {
        if (argv[1][0] == '-')
            fprintf(stderr, "dpcorr account: expected a mode first (epsilon, delta, sigma, steps or "
                            "convert), got the option %s\n", argv[1]);
        else
            fprintf(stderr, "dpcorr account: %s: unknown mode; expected epsilon, delta, sigma, "
                            "steps or convert\n", argv[1]);
        return CLI_USAGE;
    }
    opt_set s;
    int rc = opt_parse(&s, &MODE_CMDS[k], argc, argv, 2, 0);
    if (rc || s.help) return rc;
    acct a;
    memset(&a, 0, sizeof a);
    a.mode = (acct_mode)k;
    a.rho = a.mu = NAN;
    cli_mech_opts_init(&a.mo);
    rc = a.mode == MODE_CONVERT ? read_convert_opts(&a, &s) : read_event_opts(&a, &s);
    if (!rc && s.dry_run) dry_run(&a);
    else if (!rc) rc = a.mode == MODE_CONVERT ? run_convert(&a, &s) : run_mode(&a, &s);
    cli_mech_opts_free(&a.mo);
    return rc;
}
