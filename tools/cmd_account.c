/* cmd_account.c — `dpcorr account MODE`: epsilon, delta, noise and step calibration, and
 * zCDP/GDP conversions, for DP-SGD-style events and for correlated-noise mechanisms (--mech).
 * Each mode has its own option table; the searches and calibrations are the library's. */
#include "cli.h"
#include "progress.h"
#include "dpcorr/account.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


/* ---- options ------------------------------------------------------------------------------- */

/* Every option but the shared switches and the mechanism's sets a field of dpc_account_query
 * (the accountant's options its nested "opts."): type, range, default and words are its table's. */
#define AQ_FIELD .fields = dpc_account_query_fields
#define SEC "accounting"
static const opt_spec A_ACCOUNTANT = {
    .name = "--accountant", .metavar = "A", .type = OPT_CHOICE, .choices = "rdp|pld|zcdp|gdp",
    AQ_FIELD, .section = SEC, .param = "accountant", .help = "rdp | pld | zcdp | gdp",
    .example = "--accountant rdp"};
static const opt_spec A_CONV_ACCOUNTANT = {
    .name = "--accountant", .metavar = "A", .type = OPT_CHOICE, .choices = "zcdp|gdp", AQ_FIELD,
    .section = SEC, .param = "accountant", .help = "zcdp | gdp",
    .example = "! --accountant gdp --epsilon 1 --delta 1e-5"};
static const opt_spec A_SIGMA = {
    .name = "--sigma", .metavar = "S", .type = OPT_DOUBLE, AQ_FIELD, .flags = OPT_OWN_DEFAULT,
    .section = SEC, .param = "sigma,parts.sigma,noise_multiplier,z",
    .help = "noise multiplier: noise std / sensitivity; with --mech the noise std per row of Z "
            "is S x clip x the column norm of C (required)",
    .example = "--sigma 3"};
static const opt_spec A_Q = {
    .name = "--q", .metavar = "Q", .type = OPT_DOUBLE, AQ_FIELD, .section = SEC,
    .param = "q,parts.q",
    .help = "sampling rate (1: no sampling); with --mech: Poisson at every step (any mechanism; "
            "MMCC for C >= 0), or with --cyclic cyclic Poisson (amplified banded MF); the best "
            "valid route is reported",
    .example = "--q 0.5"};
static const opt_spec A_STEPS = {
    .name = "--steps", .metavar = "N", .type = OPT_UINT, AQ_FIELD, .flags = OPT_OWN_DEFAULT,
    .section = SEC, .param = "steps,count,parts.count,mech.steps",
    .help = "number of steps (compositions); with --mech also its n (required)",
    .example = "--steps 17"};
static const opt_spec A_CONV_STEPS = {
    .name = "--steps", .metavar = "N", .type = OPT_UINT, AQ_FIELD, .section = SEC,
    .param = "steps,count",
    .help = "also print the noise multiplier of N composed Gaussians with that total",
    .example = "! --rho 1 --delta 1e-5 --steps 17"};
static const opt_spec A_DELTA = {
    .name = "--delta", .metavar = "D", .type = OPT_DOUBLE, AQ_FIELD, .section = SEC,
    .param = "delta", .help = "target or given delta", .example = "--delta 1e-3"};
static const opt_spec A_EPSILON = {
    .name = "--epsilon", .metavar = "E", .type = OPT_DOUBLE, AQ_FIELD, .section = SEC,
    .param = "epsilon,eps", .help = "target or given epsilon (sigma, steps: > 0)",
    .example = "--epsilon 2.5"};
static const opt_spec A_SAMPLING = {
    .name = "--sampling", .metavar = "S", .type = OPT_CHOICE, .choices = "poisson|fixed",
    AQ_FIELD, .section = SEC, .param = "sampling,parts.sampling", .when = "--q < 1 and no --mech",
    .help = "poisson | fixed: how a batch is drawn (fixed = a batch of q n without replacement, "
            "rdp and replace-one only)",
    .example = "--q 0.5 --neighbor replace-one --sampling fixed"};
static const opt_spec A_NEIGHBOR = {
    .name = "--neighbor", .metavar = "R", .type = OPT_CHOICE,
    .choices = "add-remove|zero-out|replace-one", AQ_FIELD, .section = SEC, .param = "neighbor",
    .help = "add-remove | zero-out | replace-one", .example = "--neighbor replace-one"};
static const opt_spec A_SENSITIVITY = {
    .name = "--sensitivity", .metavar = "X", .type = OPT_DOUBLE, AQ_FIELD, .section = SEC,
    .param = "sensitivity,parts.sensitivity", .when = "no --mech (a mechanism has its own)",
    .help = "L2 sensitivity under --neighbor (only the ratio sigma/sensitivity matters)",
    .example = "--sensitivity 2"};
static const opt_spec A_ORDERS = {
    .name = "--orders", .metavar = "A1,A2,..", .type = OPT_LIST, AQ_FIELD, .section = SEC,
    .param = "orders,opts.orders", .when = "--accountant rdp", .help = "Renyi orders",
    .example = "--accountant rdp --orders 2,8"};
static const opt_spec A_REFINE = {
    .name = "--refine", .type = OPT_FLAG, AQ_FIELD, .section = SEC,
    .param = "rdp_refine,opts.rdp_refine", .when = "--accountant rdp",
    .help = "refine the best order by a continuous search",
    .example = "--accountant rdp --refine"};
static const opt_spec A_INTERVAL = {
    .name = "--interval", .metavar = "H", .type = OPT_DOUBLE, AQ_FIELD, .section = SEC,
    .param = "pld_interval,interval,opts.pld_interval", .when = "--accountant pld",
    .help = "loss grid step", .example = "--accountant pld --interval 1e-3"};
static const opt_spec A_DISC = {
    .name = "--disc", .metavar = "D", .type = OPT_CHOICE, AQ_FIELD, .section = SEC,
    .param = "pld_disc,disc,opts.pld_disc", .when = "--accountant pld",
    .help = "connect-dots | round-up (both upper bounds) | round-down (a lower bound)",
    .example = "--accountant pld --disc round-up"};
static const opt_spec A_CONVERSION = {
    .name = "--conversion", .metavar = "C", .type = OPT_CHOICE, AQ_FIELD, .section = SEC,
    .param = "zcdp_conv,conversion,opts.zcdp_conv", .when = "--accountant zcdp",
    .help = "tight | bun-steinke", .example = "--accountant zcdp --conversion bun-steinke"};
static const opt_spec A_RHO = {
    .name = "--rho", .metavar = "R", .type = OPT_DOUBLE, AQ_FIELD, .section = SEC,
    .param = "rho", .when = "--accountant zcdp", .conflicts = "--mu",
    .help = "zCDP rho; with --delta gives epsilon, with --epsilon gives delta",
    .example = "! --rho 0.7 --delta 1e-5"};
static const opt_spec A_MU = {
    .name = "--mu", .metavar = "M", .type = OPT_DOUBLE, AQ_FIELD, .section = SEC,
    .param = "mu", .when = "--accountant gdp",
    .help = "GDP mu; with --delta gives epsilon, with --epsilon gives delta",
    .example = "! --mu 0.7 --delta 1e-5"};
static const opt_spec A_BIB = {
    .name = "--balls-in-bins", .metavar = "B", .type = OPT_UINT, AQ_FIELD, .section = SEC,
    .param = "balls_in_bins,part.b", .when = "--mech", .conflicts = "--q --cyclic",
    .help = "balls-in-bins sampling over B steps per period: each example in one uniformly random "
            "step of each period, the same every period (k = ceil(N/B)); amplified by the "
            "balls-in-bins route (identity: exact bound; other C >= 0: a deterministic "
            "sampling-free bound, with the Monte Carlo upper confidence bound beside it) when it "
            "beats the whole run",
    .example = "--mech identity --balls-in-bins 10"};
static const opt_spec A_BIB_MC = {
    .name = "--bib-monte-carlo", .type = OPT_FLAG, AQ_FIELD, .section = SEC,
    .param = "bib_monte_carlo,opts.bib_monte_carlo", .when = "--balls-in-bins",
    .help = "let the Monte Carlo's high-probability bound be the balls-in-bins epsilon where it "
            "is below the deterministic bound",
    .example = "--mech nu --balls-in-bins 10 --bib-monte-carlo"};
static const opt_spec A_MAX_STEPS = {
    .name = "--max-steps", .metavar = "N", .type = OPT_UINT, AQ_FIELD, .section = SEC,
    .param = "max_steps", .help = "the largest answer searched", .example = "--max-steps 5"};
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

/* The options fill one dpc_account_query; its defaults, the rules that complete it and what it
 * reads are the library's (dpc_account_query_resolve, dpc_account_query_uses). */
typedef struct acct {
    dpc_account_query q; /* convert: no event (its fields 0) */
    int json;
    cli_mech_opts mo;
} acct;

static const mech_read ACCT_MECH = {&MO_MECH, NULL, &MO_MECH_MOMENTUM, &MO_MECH_DECAY, 1, 0, 1, 1};

/* A library error of the query, at the option of its field (typed or not: "required"). */
static int fail_query(opt_set *s, const dpc_error *err)
{
    static const struct { const char *field; const opt_spec *opt; } at[] = {
        {"steps", &A_STEPS}, {"sigma", &A_SIGMA}, {"delta", &A_DELTA},
        {"epsilon", &A_EPSILON}, {"mech.bands", &MO_BANDS}};
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++)
        if (!strcmp(err->field, at[i].field)) return opt_fail_lib_at(s, at[i].opt, err);
    return opt_fail_lib(s, err);
}

/* The accountant's own options (only those the resolved configuration reads). */
static void read_accountant(dpc_account_query *q, opt_set *s)
{
    q->accountant = opt_word(s, &A_ACCOUNTANT, DPC_ACCOUNT_AUTO); /* choices in enum order */
    dpc_account_opts *o = &q->opts;
    if (dpc_account_query_uses(q, "orders")) {
        o->orders = opt_list(s, &A_ORDERS, &o->norders); /* borrowed from s */
        opt_read_field(s, &A_REFINE, q);
    } else if (dpc_account_query_uses(q, "pld_interval")) {
        opt_read_field(s, &A_INTERVAL, q);
        opt_read_field(s, &A_DISC, q);
    } else if (dpc_account_query_uses(q, "zcdp_conv")) {
        opt_read_field(s, &A_CONVERSION, q);
    }
}

/* The mechanism options (only with --mech); the participation options where the run uses them. */
static int read_mech(acct *a, opt_set *s)
{
    dpc_account_query *q = &a->q;
    if (!(q->with_mech = opt_typed(s, &MO_MECH))) return 0;
    if (dpc_account_query_uses(q, "balls_in_bins")) opt_read_field(s, &A_BIB, q);
    q->part.kind = opt_typed(s, &MO_CYCLIC) ? DPC_PART_CYCLIC : DPC_PART_MINSEP;
    mech_read r = ACCT_MECH;
    r.participation = dpc_account_query_uses(q, "part");
    const opt_spec *pat = opt_typed(s, &MO_PARTICIPATIONS) ? &MO_PARTICIPATIONS
                          : opt_typed(s, &MO_MIN_SEP)      ? &MO_MIN_SEP
                                                           : NULL;
    if (q->balls_in_bins && pat)
        return opt_fail_at(s, pat, "not used with --balls-in-bins (the pattern is one step per "
                                   "period)");
    int rc = cli_mech_read(&a->mo, s, &r);
    q->mech = a->mo.p;
    q->part = a->mo.part;
    if (rc || r.participation || !pat) return rc;
    return opt_fail_at(s, pat, "not used by this configuration (with --q < 1 every step is a "
                               "Poisson sample; --cyclic makes the pattern cyclic)");
}

/* Every mode but convert. */
static int read_event_opts(acct *a, opt_set *s)
{
    dpc_account_query *q = &a->q;
    opt_read_field(s, &A_Q, q);
    int rc = read_mech(a, s);
    if (rc) return rc;
    static const struct { const char *field; const opt_spec *opt; } values[] = {
        {"sigma", &A_SIGMA}, {"steps", &A_STEPS}, {"max_steps", &A_MAX_STEPS},
        {"delta", &A_DELTA}, {"epsilon", &A_EPSILON}, {"sensitivity", &A_SENSITIVITY}};
    for (size_t i = 0; i < sizeof values / sizeof *values; i++) /* the fields the mode reads */
        if (dpc_account_query_uses(q, values[i].field)) opt_read_field(s, values[i].opt, q);
    q->neighbor = opt_word(s, &A_NEIGHBOR, DPC_ACCOUNT_AUTO); /* choices in enum order */
    if (dpc_account_query_uses(q, "sampling")) {
        int w = opt_word(s, &A_SAMPLING, -1);
        q->sampling = w < 0 ? DPC_ACCOUNT_AUTO : w ? DPC_SAMPLING_FIXED : DPC_SAMPLING_POISSON;
    }
    read_accountant(q, s);
    if (dpc_account_query_uses(q, "bib_monte_carlo")) opt_read_field(s, &A_BIB_MC, q);
    a->json = opt_given(s, &OPT_JSON);
    dpc_error err = {0};
    if (dpc_account_query_resolve(q, &err)) return fail_query(s, &err);
    if ((rc = opt_finish(s)) || !q->with_mech) return rc;
    a->mo.p = q->mech; /* n set (mode steps: validated at 1), BSR/BISR bands defaulted */
    if ((rc = cli_mech_load(&a->mo, s, &ACCT_MECH))) return rc;
    q->mech = a->mo.p;
    if (dpc_account_query_resolve(q, &err)) return fail_query(s, &err); /* a file's kind */
    a->mo.p = q->mech; /* what runs, for --dry-run */
    return 0;
}

static int read_convert_opts(acct *a, opt_set *s)
{
    dpc_account_query *q = &a->q;
    q->sigma = q->q = q->sensitivity = 0.0; /* no event */
    q->neighbor = DPC_NEIGHBOR_ADD_REMOVE;
    q->sampling = DPC_SAMPLING_NONE;
    int w = opt_word(s, &A_CONV_ACCOUNTANT, -1); /* -1: the library's (gdp when --mu is given) */
    q->accountant = w < 0 ? DPC_ACCOUNT_AUTO : w ? DPC_ACCOUNTANT_GDP : DPC_ACCOUNTANT_ZCDP;
    if (w != 0) opt_read_field(s, &A_MU, q);
    if (w != 1 && isnan(q->mu)) {
        opt_read_field(s, &A_RHO, q);
        opt_read_field(s, &A_CONVERSION, q);
    }
    opt_read_field(s, &A_DELTA, q);
    opt_read_field(s, &A_EPSILON, q);
    opt_read_field(s, &A_CONV_STEPS, q);
    a->json = opt_given(s, &OPT_JSON);
    int rc = opt_finish(s);
    if (rc) return rc;
    dpc_error err = {0};
    if (!dpc_account_query_resolve(q, &err)) return 0;
    /* the library's rule on the total and the budget, at the total's option (typed or not) */
    if (!strcmp(err.field, "rho") || !strcmp(err.field, "mu"))
        return opt_fail_lib_at(s, !strcmp(err.field, "mu") ? &A_MU : &A_RHO, &err);
    return opt_fail_lib(s, &err);
}

static void dry_run(const acct *a)
{
    const dpc_account_query *q = &a->q;
    const dpc_account_opts *o = &q->opts;
    opt_dry_str("mode", dpc_account_mode_name(a->q.mode));
    opt_dry_str("accountant", dpc_accountant_name(o->accountant));
    opt_dry_list("orders", o->orders, o->orders ? o->norders : 0);
    opt_dry_uint("rdp_refine", (uint64_t)o->rdp_refine);
    opt_dry_num("pld_interval", o->pld_interval);
    opt_dry_str("pld_disc", dpc_pld_disc_name(o->pld_disc));
    opt_dry_str("zcdp_conv", o->zcdp_conv == DPC_ZCDP_TIGHT ? "tight" : "bun-steinke");
    opt_dry_num("sigma", q->sigma);
    opt_dry_num("q", q->q);
    opt_dry_uint("steps", q->steps);
    opt_dry_uint("max_steps", q->max_steps);
    opt_dry_num("delta", q->delta);
    opt_dry_num("epsilon", q->epsilon);
    opt_dry_num("rho", q->rho);
    opt_dry_num("mu", q->mu);
    opt_dry_str("neighbor", dpc_neighbor_name((dpc_neighbor)q->neighbor));
    opt_dry_str("sampling", dpc_sampling_name((dpc_sampling)q->sampling));
    opt_dry_num("sensitivity", q->sensitivity);
    opt_dry_uint("json", (uint64_t)a->json);
    opt_dry_uint("balls_in_bins", q->balls_in_bins);
    opt_dry_uint("bib_monte_carlo", (uint64_t)o->bib_monte_carlo);
    if (q->with_mech) cli_mech_dry(&a->mo, q->part_used);
}

/* ---- output -------------------------------------------------------------------------------- */

static void report_json(const acct *a, const dpc_account_solution *sol)
{
    char line[4096];
    size_t n = dpc_account_solution_json(&a->q, sol, line, sizeof line);
    char *big = n < sizeof line ? NULL : malloc(n + 1);
    if (big) dpc_account_solution_json(&a->q, sol, big, n + 1);
    printf("%s\n", big ? big : line);
    free(big);
}

static void report_text(const acct *a, const dpc_account_solution *sol)
{
    const dpc_account_result *r = &sol->result;
    const dpc_account_opts *o = &sol->opts;
    printf("accountant    %s", dpc_accountant_name(o->accountant));
    if (o->accountant == DPC_ACCOUNTANT_RDP && !isnan(r->order)) printf(" (order %.6g)", r->order);
    if (o->accountant == DPC_ACCOUNTANT_PLD)
        printf(" (%s, interval %g)", dpc_pld_disc_name(o->pld_disc), o->pld_interval);
    if (o->accountant == DPC_ACCOUNTANT_PLD && !isnan(r->order))
        printf("; answered by rdp (order %.6g): its bound is below the grid's", r->order);
    printf("\nneighbor      %s\n", dpc_neighbor_name((dpc_neighbor)a->q.neighbor));
    if (sol->have_info) {
        const dpc_account_mech_info *in = &sol->info;
        const dpc_participation pp = sol->part;
        printf("mechanism     %s, sensitivity %.6g%s (k = %zu, %s %zu)\n",
               dpc_mech_kind_name(a->q.mech.kind), in->sensitivity,
               in->sensitivity_exact ? "" : " (upper bound)", pp.k,
               pp.kind == DPC_PART_CYCLIC ? "period" : "min-sep", pp.b);
        if (in->route == DPC_ROUTE_BANDMF)
            printf("amplified     %zu rounds of a q = %g Poisson-subsampled Gaussian, z = %.6g\n",
                   in->rounds, a->q.q, in->noise_multiplier);
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
                 a->q.mech.kind != DPC_MECH_IDENTITY)
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
                   pp.b, in->bib_mu);
        printf("route         %s\n", dpc_mech_route_name(in->route));
        if (a->q.every_route) {
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
    if (a->q.mode != DPC_ACCOUNT_MODE_CONVERT) printf("sampling q    %g\n", a->q.q);
    printf("sigma         %.10g\n", sol->sigma);
    printf("steps         %zu\n", sol->steps);
    if (!isnan(r->rho)) printf("rho           %.10g\n", r->rho);
    if (!isnan(r->mu)) printf("mu            %.10g\n", r->mu);
    printf("epsilon       %.10g%s\n", r->epsilon,
           r->upper_bound ? "" : "  (optimistic: a lower bound)");
    printf("delta         %.6g\n", r->delta);
}

static void report(const acct *a, const dpc_account_solution *sol)
{
    if (a->json) report_json(a, sol);
    else report_text(a, sol);
}

/* ---- modes --------------------------------------------------------------------------------- */

static int run_mode(acct *a, opt_set *s)
{
    dpc_error err = {0};
    dpc_account_solution sol;
    cli_progress pr;
    char what[48];
    snprintf(what, sizeof what, "dpcorr account %s", dpc_account_mode_name(a->q.mode));
    a->q.opts.progress = cli_progress_start(&pr, what, "stages", 0);
    dpc_status st = dpc_account_query_solve(&a->q, &sol, &err);
    cli_progress_end(&pr);
    if (st) return opt_fail_lib(s, &err);
    report(a, &sol);
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
    while (k < 5 && strcmp(argv[1], dpc_account_mode_name((dpc_account_mode)k))) k++;
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
    dpc_account_query_init(&a.q, (dpc_account_mode)k); /* convert: its fields set by its reader */
    cli_mech_opts_init(&a.mo);
    rc = k == DPC_ACCOUNT_MODE_CONVERT ? read_convert_opts(&a, &s) : read_event_opts(&a, &s);
    if (!rc && s.dry_run) dry_run(&a);
    else if (!rc) rc = run_mode(&a, &s);
    cli_mech_opts_free(&a.mo);
    return rc;
}
