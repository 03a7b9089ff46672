/* cmd_account.c — `dpcorr account`: epsilon, delta, noise and step calibration, and zCDP/GDP
 * conversions, for DP-SGD-style events and for correlated-noise mechanisms (--mech). */
#include "cli.h"
#include "dpcorr/account.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef enum { MODE_EPSILON, MODE_DELTA, MODE_SIGMA, MODE_STEPS, MODE_CONVERT } acct_mode;
static const char *const mode_names[] = {"epsilon", "delta", "sigma", "steps", "convert"};

typedef struct {
    acct_mode mode;
    dpc_account_opts o;
    dpc_neighbor neighbor;
    int have_neighbor;
    dpc_sampling sampling;
    int have_sampling;
    double sigma, q, delta, epsilon, sensitivity, rho, mu;
    int have_sigma, have_delta, have_epsilon, have_rho, have_mu, have_steps;
    size_t max_steps;
    double *orders;
    size_t norders;
    int json;
} acct_opts;

static void account_usage(FILE *f)
{
    fprintf(f,
            "usage: dpcorr account MODE [options]\n\n"
            "modes:\n"
            "  epsilon   the smallest epsilon for --delta (needs --sigma --steps --delta)\n"
            "  delta     the smallest delta for --epsilon (needs --sigma --steps --epsilon)\n"
            "  sigma     the smallest noise multiplier for the budget (--steps --epsilon --delta)\n"
            "  steps     the largest number of steps for the budget (--sigma --epsilon --delta)\n"
            "  convert   zcdp: --rho with --delta (-> epsilon) or --epsilon (-> delta), or\n"
            "            --epsilon --delta (-> the largest rho); gdp: the same with --mu\n\n"
            "accounting options:\n"
            "  --accountant A        rdp | pld | zcdp | gdp (default rdp; --mech without --q:\n"
            "                        gdp, exact; convert: zcdp)\n"
            "  --sigma S             noise multiplier: noise std / sensitivity; with --mech the\n"
            "                        noise std per row of Z is S x clip x sensitivity(mech)\n"
            "  --q Q                 sampling rate in (0,1] (default 1: no sampling); with --mech\n"
            "                        Poisson at every step (any mechanism; MMCC for C >= 0), or with\n"
            "                        --cyclic: cyclic Poisson (amplified banded MF); the best valid\n"
            "                        route is reported\n"
            "  --steps N             number of steps (compositions); with --mech also its n\n"
            "  --delta D             target or given delta, in (0,1)\n"
            "  --epsilon E           target or given epsilon, >= 0\n"
            "  --sampling S          poisson | fixed: how a batch is drawn when q < 1 (default\n"
            "                        poisson; fixed = a batch of q n without replacement, rdp and\n"
            "                        replace-one only)\n"
            "  --neighbor R          add-remove | zero-out | replace-one (default add-remove;\n"
            "                        zero-out with --mech)\n"
            "  --sensitivity X       L2 sensitivity under --neighbor (default 1; only the ratio\n"
            "                        sigma/sensitivity matters)\n"
            "  --orders A1,A2,..     rdp: Renyi orders, each > 1 (default 144, 1.05..4096)\n"
            "  --refine              rdp: refine the best order by a continuous search\n"
            "  --interval H          pld: loss grid step (default 1e-4)\n"
            "  --disc D              pld: connect-dots (default) | round-up (both upper bounds)\n"
            "                        | round-down (a lower bound)\n"
            "  --conversion C        zcdp: tight (default) | bun-steinke\n"
            "  --rho R               convert: zCDP rho >= 0\n"
            "  --mu M                convert: GDP mu > 0\n"
            "  --max-steps N         steps: the largest answer searched (default 10000000)\n"
            "  --json                one JSON object (keys: mode, accountant, epsilon, delta,\n"
            "                        sigma, steps, q, neighbor, order (rdp), rho, mu, ...)\n"
            "  --help                this text\n\n");
    cli_mech_help(f, "--mech");
}

/* ---- option parsing ---------------------------------------------------------------------- */

static int parse_pos(cli_iter *it, double *out, int *have, int open_zero)
{
    const char *v = cli_value(it);
    if (!v || cli_double(it, v, out)) return CLI_USAGE;
    if (open_zero ? !(*out > 0.0) : !(*out >= 0.0))
        return cli_fail(it->cmd, "%s: must be %s, got %s", it->name, open_zero ? "> 0" : ">= 0", v);
    if (have) *have = 1;
    return 0;
}

static int parse_args(acct_opts *a, cli_mech_opts *mo, int argc, char **argv, int *help)
{
    cli_iter it;
    cli_iter_init(&it, "account", argc, argv, 1);
    int have_mode = 0, have_acc = 0;
    const char *mech_param = NULL;
    char mech_buf[64];
    dpc_error err = {0};
    while (cli_next(&it)) {
        const char *v;
        int r = cli_mech_opt(mo, &it, "--mech");
        if (r < 0) return CLI_USAGE;
        if (r > 0) {
            if (cli_is(&it, "--steps")) a->have_steps = 1;
            if (!cli_is(&it, "--steps") && !cli_is(&it, "--mech") && !mech_param) {
                snprintf(mech_buf, sizeof mech_buf, "%s", it.name);
                mech_param = mech_buf;
            }
            continue;
        }
        if (cli_is(&it, "--help") || cli_is(&it, "-h")) {
            *help = 1;
            return 0;
        } else if (it.name[0] != '-') {
            if (have_mode)
                return cli_fail("account", "%s: unexpected word (the mode is already %s)", it.name,
                                mode_names[a->mode]);
            size_t k = 0;
            while (k < 5 && strcmp(it.name, mode_names[k])) k++;
            if (k == 5)
                return cli_fail("account", "%s: unknown mode; expected epsilon, delta, sigma, "
                                           "steps or convert", it.name);
            a->mode = (acct_mode)k;
            have_mode = 1;
        } else if (cli_is(&it, "--accountant")) {
            if (!(v = cli_value(&it))) return CLI_USAGE;
            if (dpc_accountant_parse(v, &a->o.accountant, &err))
                return cli_fail("account", "--accountant: expected rdp, pld, zcdp or gdp, got '%s'",
                                v);
            have_acc = 1;
        } else if (cli_is(&it, "--neighbor")) {
            if (!(v = cli_value(&it))) return CLI_USAGE;
            if (dpc_neighbor_parse(v, &a->neighbor, &err))
                return cli_fail("account", "--neighbor: expected add-remove, zero-out or "
                                           "replace-one, got '%s'",
                                v);
            a->have_neighbor = 1;
        } else if (cli_is(&it, "--sampling")) {
            if (!(v = cli_value(&it))) return CLI_USAGE;
            if (dpc_sampling_parse(v, &a->sampling, &err) || a->sampling == DPC_SAMPLING_NONE)
                return cli_fail("account", "--sampling: expected poisson or fixed, got '%s'", v);
            a->have_sampling = 1;
        } else if (cli_is(&it, "--disc")) {
            if (!(v = cli_value(&it))) return CLI_USAGE;
            if (dpc_pld_disc_parse(v, &a->o.pld_disc, &err))
                return cli_fail("account",
                                "--disc: expected connect-dots, round-up or round-down, got '%s'",
                                v);
        } else if (cli_is(&it, "--conversion")) {
            if (!(v = cli_value(&it))) return CLI_USAGE;
            if (!strcmp(v, "tight")) a->o.zcdp_conv = DPC_ZCDP_TIGHT;
            else if (!strcmp(v, "bun-steinke")) a->o.zcdp_conv = DPC_ZCDP_BUN_STEINKE;
            else
                return cli_fail("account",
                                "--conversion: expected tight or bun-steinke, got '%s'", v);
        } else if (cli_is(&it, "--sigma")) {
            if (parse_pos(&it, &a->sigma, &a->have_sigma, 1)) return CLI_USAGE;
        } else if (cli_is(&it, "--q")) {
            if (parse_pos(&it, &a->q, NULL, 1)) return CLI_USAGE;
            if (a->q > 1.0) return cli_fail("account", "--q: must be in (0, 1], got %g", a->q);
        } else if (cli_is(&it, "--delta")) {
            if (parse_pos(&it, &a->delta, &a->have_delta, 1)) return CLI_USAGE;
            if (!(a->delta < 1.0))
                return cli_fail("account", "--delta: must be in (0, 1), got %g", a->delta);
        } else if (cli_is(&it, "--epsilon")) {
            if (parse_pos(&it, &a->epsilon, &a->have_epsilon, 0)) return CLI_USAGE;
        } else if (cli_is(&it, "--sensitivity")) {
            if (parse_pos(&it, &a->sensitivity, NULL, 1)) return CLI_USAGE;
        } else if (cli_is(&it, "--rho")) {
            if (parse_pos(&it, &a->rho, &a->have_rho, 0)) return CLI_USAGE;
        } else if (cli_is(&it, "--mu")) {
            if (parse_pos(&it, &a->mu, &a->have_mu, 1)) return CLI_USAGE;
        } else if (cli_is(&it, "--interval")) {
            if (parse_pos(&it, &a->o.pld_interval, NULL, 1)) return CLI_USAGE;
        } else if (cli_is(&it, "--orders")) {
            if (!(v = cli_value(&it))) return CLI_USAGE;
            free(a->orders);
            a->orders = NULL;
            if (cli_double_list(&it, v, &a->orders, &a->norders)) return CLI_USAGE;
            for (size_t i = 0; i < a->norders; i++)
                if (!(a->orders[i] > 1.0 && a->orders[i] <= 1e6))
                    return cli_fail("account", "--orders: each order must be in (1, 1e6], got %g",
                                    a->orders[i]);
            a->o.orders = a->orders;
            a->o.norders = a->norders;
        } else if (cli_is(&it, "--refine")) {
            a->o.rdp_refine = 1;
        } else if (cli_is(&it, "--max-steps")) {
            if (!(v = cli_value(&it)) || cli_size(&it, v, &a->max_steps)) return CLI_USAGE;
            if (a->max_steps == 0) return cli_fail("account", "--max-steps: must be >= 1");
        } else if (cli_is(&it, "--json")) {
            a->json = 1;
        } else {
            return cli_fail("account", "%s: unknown option (see dpcorr account --help)", it.name);
        }
    }
    if (!have_mode)
        return cli_fail("account", "expected a mode: epsilon, delta, sigma, steps or convert");
    if (!have_acc && a->mode == MODE_CONVERT)
        a->o.accountant = a->have_mu ? DPC_ACCOUNTANT_GDP : DPC_ACCOUNTANT_ZCDP;
    if (mech_param && !mo->have_kind)
        return cli_fail("account", "%s: only with --mech KIND", mech_param);
    if (!a->have_neighbor && mo->have_kind) a->neighbor = DPC_NEIGHBOR_ZERO_OUT;
    /* a mechanism without sampling is one Gaussian release: GDP is exact (what the trainer
     * uses); RDP would overstate epsilon by a few percent */
    if (!have_acc && mo->have_kind && a->q == 1.0) a->o.accountant = DPC_ACCOUNTANT_GDP;
    return 0;
}

/* ---- evaluation -------------------------------------------------------------------------- */

typedef struct {
    dpc_gauss_event ev;
    dpc_account_mech_info info;
    int have_info;
} built;

static dpc_status build(const acct_opts *a, cli_mech_opts *mo, size_t steps, double sigma,
                        built *b, dpc_error *err)
{
    b->have_info = 0;
    if (!mo->have_kind) {
        dpc_gauss_event_init(&b->ev);
        b->ev.sigma = sigma;
        b->ev.sensitivity = a->sensitivity;
        b->ev.sampling = a->q < 1.0 ? (a->have_sampling ? a->sampling : DPC_SAMPLING_POISSON)
                                    : DPC_SAMPLING_NONE;
        b->ev.q = a->q;
        b->ev.count = steps;
        return DPC_OK;
    }
    mo->p.steps = steps;
    dpc_mech *m = NULL;
    dpc_status st = dpc_mech_new(&m, &mo->p, err);
    if (!st) st = dpc_account_mech_event(m, &mo->part, sigma, a->q, &b->ev, &b->info, err);
    dpc_mech_free(m);
    b->have_info = st == DPC_OK;
    return st;
}

/* --mech with --q < 1: Poisson at every step unless --cyclic gives the period */
static dpc_participation run_part(const cli_mech_opts *mo, size_t steps)
{
    if (mo->part.kind == DPC_PART_CYCLIC) return mo->part;
    dpc_participation p = {DPC_PART_CYCLIC, steps, 1};
    return p;
}

static dpc_status eval_eps(const acct_opts *a, cli_mech_opts *mo, size_t steps, double sigma,
                           built *b, dpc_account_result *r, dpc_error *err)
{
    if (mo->have_kind && a->q < 1.0) { /* every route: whole run, banded MF, MMCC */
        mo->p.steps = steps;
        dpc_mech *m = NULL;
        dpc_status st = dpc_mech_new(&m, &mo->p, err);
        dpc_mech_run run = {m, run_part(mo, steps), a->q, 0};
        if (!st) st = dpc_account_mech_epsilon(&run, sigma, &a->o, a->delta, r, &b->info, err);
        dpc_mech_free(m);
        b->have_info = st == DPC_OK;
        return st;
    }
    dpc_status st = build(a, mo, steps, sigma, b, err);
    if (st) return st;
    dpc_event ev = {a->neighbor, 1, &b->ev};
    return dpc_account_epsilon(&ev, &a->o, a->delta, r, err);
}

static int need(int have, const char *opt, acct_mode mode)
{
    if (have) return 0;
    return cli_fail("account", "%s: required in mode %s", opt, mode_names[mode]);
}

/* Library messages start with the parameter at fault ("q (component 0): ...", "delta: ...");
 * name the command-line option instead. */
static const char *const param_opts[][2] = {
    {"q", "--q"},           {"sigma", "--sigma"},       {"steps", "--steps"},
    {"delta", "--delta"},   {"eps", "--epsilon"},       {"epsilon", "--epsilon"},
    {"neighbor", "--neighbor"}, {"accountant", "--accountant"}, {"interval", "--interval"},
    {"orders", "--orders"}, {"sensitivity", "--sensitivity"}, {"rho", "--rho"},
    {"mu", "--mu"},         {"tail", "--interval"},     {"participations", "--participations"},
    {"min-sep", "--min-sep"}};

static int status_rc(const dpc_error *err)
{
    const char *msg = err->msg, *colon = strchr(msg, ':');
    const char *opt = NULL;
    if (colon) {
        size_t n = (size_t)(colon - msg);
        const char *paren = memchr(msg, '(', n);
        if (paren && paren > msg) n = (size_t)(paren - msg - 1); /* "q (component 0)" */
        for (size_t i = 0; i < sizeof param_opts / sizeof param_opts[0]; i++)
            if (strlen(param_opts[i][0]) == n && !strncmp(msg, param_opts[i][0], n))
                opt = param_opts[i][1];
    }
    if (opt) fprintf(stderr, "dpcorr account: %s:%s\n", opt, colon + 1);
    else fprintf(stderr, "dpcorr account: %s\n", msg);
    switch (err->status) {
    case DPC_E_INVALID:
    case DPC_E_UNSUPPORTED:
    case DPC_E_PRIVACY:
    case DPC_E_RANGE: return CLI_USAGE; /* a configuration that cannot be served */
    default: return CLI_RUNTIME;
    }
}

/* ---- output ------------------------------------------------------------------------------ */

static void report(const acct_opts *a, const cli_mech_opts *mo, const built *b, size_t steps,
                   double sigma, const dpc_account_result *r)
{
    const char *acc = dpc_accountant_name(a->o.accountant);
    if (a->json) {
        printf("{");
        cli_json_str(stdout, "mode", mode_names[a->mode], 1);
        cli_json_str(stdout, "accountant", acc, 1);
        cli_json_num(stdout, "epsilon", r->epsilon, 1);
        cli_json_num(stdout, "delta", r->delta, 1);
        cli_json_num(stdout, "sigma", sigma, 1);
        cli_json_int(stdout, "steps", (long long)steps, 1);
        cli_json_num(stdout, "q", a->q, 1);
        cli_json_str(stdout, "neighbor", dpc_neighbor_name(a->neighbor), 1);
        if (a->o.accountant == DPC_ACCOUNTANT_RDP) cli_json_num(stdout, "order", r->order, 1);
        if (a->o.accountant == DPC_ACCOUNTANT_ZCDP) cli_json_num(stdout, "rho", r->rho, 1);
        if (a->o.accountant == DPC_ACCOUNTANT_GDP) cli_json_num(stdout, "mu", r->mu, 1);
        if (a->o.accountant == DPC_ACCOUNTANT_PLD) {
            cli_json_num(stdout, "interval", a->o.pld_interval, 1);
            cli_json_str(stdout, "discretization", dpc_pld_disc_name(a->o.pld_disc), 1);
        }
        if (b && b->have_info) {
            cli_json_str(stdout, "mech", dpc_mech_kind_name(mo->p.kind), 1);
            dpc_participation jp = a->q < 1.0 ? run_part(mo, steps) : mo->part;
            cli_json_int(stdout, "participations", (long long)jp.k, 1);
            cli_json_int(stdout, "min_sep", (long long)jp.b, 1);
            cli_json_num(stdout, "sensitivity", b->info.sensitivity, 1);
            cli_json_bool(stdout, "sensitivity_exact", b->info.sensitivity_exact, 1);
            cli_json_bool(stdout, "amplified", b->info.amplified, 1);
            cli_json_int(stdout, "rounds", (long long)b->info.rounds, 1);
            cli_json_num(stdout, "noise_multiplier", b->info.noise_multiplier, 1);
            cli_json_num(stdout, "column_norm", b->info.column_norm, 1);
            cli_json_num(stdout, "noise_std_per_unit_clip", b->info.noise_std, 1);
            cli_json_num(stdout, "run_sigma", b->info.run_sigma, 1);
            cli_json_str(stdout, "route", dpc_mech_route_name(b->info.route), 1);
        }
        cli_json_bool(stdout, "upper_bound", r->upper_bound, 0);
        printf("}\n");
        return;
    }
    printf("accountant    %s", acc);
    if (a->o.accountant == DPC_ACCOUNTANT_RDP && !isnan(r->order))
        printf(" (order %.6g)", r->order);
    if (a->o.accountant == DPC_ACCOUNTANT_PLD)
        printf(" (%s, interval %g)", dpc_pld_disc_name(a->o.pld_disc), a->o.pld_interval);
    printf("\nneighbor      %s\n", dpc_neighbor_name(a->neighbor));
    if (b && b->have_info) {
        dpc_participation pp = a->q < 1.0 ? run_part(mo, steps) : mo->part;
        printf("mechanism     %s, sensitivity %.6g%s (k = %zu, %s %zu)\n",
               dpc_mech_kind_name(mo->p.kind), b->info.sensitivity,
               b->info.sensitivity_exact ? "" : " (upper bound)", pp.k,
               pp.kind == DPC_PART_CYCLIC ? "period" : "min-sep", pp.b);
        if (b->info.route == DPC_ROUTE_BANDMF)
            printf("amplified     %zu rounds of a q = %g Poisson-subsampled Gaussian, z = %.6g\n",
                   b->info.rounds, a->q, b->info.noise_multiplier);
        else if (b->info.route == DPC_ROUTE_WHOLE_RUN)
            printf("whole run     one Gaussian, noise multiplier %.6g (noise std %.6g per unit "
                   "clip / sensitivity)\n",
                   b->info.run_sigma, b->info.noise_std);
        if (b->info.route == DPC_ROUTE_MMCC)
            printf("amplified     MMCC conditional composition over %zu rows (delta spent on "
                   "conditioning %.3g)\n",
                   b->info.rounds, b->info.delta_slack);
        printf("route         %s\n", dpc_mech_route_name(b->info.route));
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

/* ---- modes ------------------------------------------------------------------------------- */

static int run_convert(acct_opts *a, size_t steps)
{
    dpc_error err = {0};
    dpc_account_result r = {NAN, NAN, NAN, NAN, NAN, 1};
    dpc_accountant acc = a->o.accountant;
    if (acc != DPC_ACCOUNTANT_ZCDP && acc != DPC_ACCOUNTANT_GDP)
        return cli_fail("account", "--accountant: convert supports zcdp and gdp, got %s",
                        dpc_accountant_name(acc));
    int have_param = acc == DPC_ACCOUNTANT_ZCDP ? a->have_rho : a->have_mu;
    const char *popt = acc == DPC_ACCOUNTANT_ZCDP ? "--rho" : "--mu";
    if ((acc == DPC_ACCOUNTANT_ZCDP && a->have_mu) || (acc == DPC_ACCOUNTANT_GDP && a->have_rho))
        return cli_fail("account", "%s: does not belong to the %s accountant",
                        acc == DPC_ACCOUNTANT_ZCDP ? "--mu" : "--rho", dpc_accountant_name(acc));
    dpc_status st;
    if (have_param) {
        if (a->have_delta == a->have_epsilon)
            return cli_fail("account", "%s: give exactly one of --delta and --epsilon", popt);
        if (acc == DPC_ACCOUNTANT_ZCDP) {
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
        if (!a->have_delta || !a->have_epsilon)
            return cli_fail("account", "%s: give it, or both --epsilon and --delta", popt);
        r.epsilon = a->epsilon;
        r.delta = a->delta;
        st = acc == DPC_ACCOUNTANT_ZCDP
                 ? dpc_zcdp_rho_for(a->epsilon, a->delta, a->o.zcdp_conv, &r.rho, &err)
                 : dpc_gdp_mu_for(a->epsilon, a->delta, &r.mu, &err);
    }
    if (st) return status_rc(&err);
    /* the noise multiplier of `steps` composed Gaussians with that total rho / mu */
    double sigma;
    st = acc == DPC_ACCOUNTANT_ZCDP ? dpc_zcdp_sigma_for(r.rho, steps, &sigma, &err)
                                    : dpc_gdp_sigma_for(r.mu, steps, &sigma, &err);
    if (st) return cli_fail("account", "%s", err.msg);
    report(a, NULL, NULL, steps, sigma, &r);
    return 0;
}

int cmd_account(int argc, char **argv)
{
    acct_opts a;
    memset(&a, 0, sizeof a);
    dpc_account_opts_init(&a.o, DPC_ACCOUNTANT_RDP);
    a.neighbor = DPC_NEIGHBOR_ADD_REMOVE;
    a.q = 1.0;
    a.sensitivity = 1.0;
    a.max_steps = 10000000;
    cli_mech_opts mo;
    cli_mech_opts_init(&mo);
    int help = 0, rc = parse_args(&a, &mo, argc, argv, &help);
    if (rc || help) {
        if (help) account_usage(stdout);
        goto done;
    }
    dpc_error err = {0};
    size_t steps = mo.p.steps;
    if (a.have_steps && steps == 0) {
        rc = cli_fail("account", "--steps: must be >= 1, got 0");
        goto done;
    }
    if (a.mode == MODE_CONVERT) {
        rc = run_convert(&a, steps ? steps : 1);
        goto done;
    }
    if (mo.have_kind) {
        /* mode steps searches n itself: validate the mechanism at a placeholder n */
        if (a.mode == MODE_STEPS && mo.p.steps == 0) mo.p.steps = 1;
        if ((rc = cli_mech_finish(&mo, "account", "--mech"))) goto done;
    }
    if (a.mode != MODE_STEPS && (rc = need(steps > 0, "--steps", a.mode))) goto done;
    if (a.mode != MODE_SIGMA && (rc = need(a.have_sigma, "--sigma", a.mode))) goto done;
    if (a.mode != MODE_DELTA && (rc = need(a.have_delta, "--delta", a.mode))) goto done;
    if (a.mode != MODE_EPSILON && (rc = need(a.have_epsilon, "--epsilon", a.mode))) goto done;
    if ((a.mode == MODE_SIGMA || a.mode == MODE_STEPS) && !(a.epsilon > 0.0)) {
        rc = cli_fail("account", "--epsilon: must be > 0 for mode %s", mode_names[a.mode]);
        goto done;
    }
    if (a.have_sampling && a.sampling == DPC_SAMPLING_FIXED && mo.have_kind) {
        rc = cli_fail("account", "--sampling: mechanisms use cyclic Poisson sampling (--cyclic)");
        goto done;
    }

    built b = {0};
    dpc_account_result r;
    dpc_status st = DPC_OK;
    double sigma = a.sigma;
    switch (a.mode) {
    case MODE_EPSILON:
        st = eval_eps(&a, &mo, steps, sigma, &b, &r, &err);
        break;
    case MODE_DELTA:
        if (!(st = build(&a, &mo, steps, sigma, &b, &err))) {
            dpc_event ev = {a.neighbor, 1, &b.ev};
            st = dpc_account_delta(&ev, &a.o, a.epsilon, &r, &err);
        }
        break;
    case MODE_SIGMA:
        if (mo.have_kind) {
            dpc_mech *m = NULL;
            dpc_participation part = a.q < 1.0 ? run_part(&mo, steps) : mo.part;
            if (!(st = dpc_mech_new(&m, &mo.p, &err))) {
                dpc_mech_run run = {m, part, a.q, 0}; /* sampled: every route, MMCC too */
                st = a.q < 1.0 ? dpc_account_mech_calibrate_run(&run, &a.o, a.epsilon, a.delta,
                                                                &sigma, NULL, &err)
                               : dpc_account_mech_calibrate(m, &part, a.q, &a.o, a.epsilon,
                                                            a.delta, &sigma, NULL, NULL, &err);
            }
            dpc_mech_free(m);
        } else {
            if (!(st = build(&a, &mo, steps, 1.0, &b, &err))) {
                dpc_event ev = {a.neighbor, 1, &b.ev};
                st = dpc_account_calibrate_sigma(&ev, &a.o, a.epsilon, a.delta, &sigma, &err);
            }
        }
        if (!st) st = eval_eps(&a, &mo, steps, sigma, &b, &r, &err);
        break;
    case MODE_STEPS:
        if (mo.have_kind) {
            if (mo.p.kind == DPC_MECH_DENSE) {
                rc = cli_fail("account", "--mech: dense is defined for one n only; mode steps "
                                         "needs a mechanism defined for every n");
                goto done;
            }
            st = dpc_account_mech_steps(&mo.p, &mo.part, sigma, a.q, &a.o, a.epsilon, a.delta,
                                        a.max_steps, &steps, &err);
        } else {
            if (!(st = build(&a, &mo, 1, sigma, &b, &err))) {
                dpc_event ev = {a.neighbor, 1, &b.ev};
                st = dpc_account_calibrate_steps(&ev, 0, &a.o, a.epsilon, a.delta, a.max_steps,
                                                 &steps, &err);
            }
        }
        if (!st) st = eval_eps(&a, &mo, steps, sigma, &b, &r, &err);
        break;
    case MODE_CONVERT:
        break;
    }
    if (st) {
        rc = status_rc(&err);
        goto done;
    }
    report(&a, &mo, &b, steps, sigma, &r);
done:
    free(a.orders);
    cli_mech_opts_free(&mo);
    return rc;
}
