/* cmd_theory.c — `dpcorr theory`: the stationary-error theory of the nu-DP-FTRL paper for one
 * mechanism: gamma_inf, V0 by both routes, the LTI optimum, the Appendix C bounds and the
 * Table 1 rates (linear regression, lambda_k = k^-alpha); mean estimation; the Theorem 3.1
 * bound for strongly convex functions; optionally a simulation beside the theory. */
#include "cli.h"
#include "frame.h"
#include "dpcorr/papers/sim.h"
#include "dpcorr/papers/theory.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* the problem's options set fields of dpc_nu_setup_params: type, range, default and words are
 * its table's */
#define NU_FIELD .fields = dpc_nu_setup_params_fields
#define PB "problem"
static const opt_spec T_PROBLEM = {
    .name = "--problem", .metavar = "P", .type = OPT_CHOICE, NU_FIELD, .section = PB,
    .param = "problem",
    .help = "lti: linear regression, H = diag(k^-alpha), fixed design; mean: mean "
            "estimation (Theorem 2.1, d = 1, lambda = 1); sc: the Theorem 3.1/E.1 bound for "
            "mu-strongly convex, L-smooth F",
    .example = "--problem sc"};
static const opt_spec T_D = {
    .name = "--d", .metavar = "D", .type = OPT_UINT, NU_FIELD, .section = PB, .param = "d",
    .when = "--problem lti|sc", .help = "dimension", .example = "--d 16"};
static const opt_spec T_ALPHA = {
    .name = "--alpha", .metavar = "A", .type = OPT_DOUBLE, NU_FIELD, .section = PB,
    .param = "alpha", .when = "--problem lti", .help = "eigenvalue decay lambda_k = k^-A",
    .example = "--alpha 2"};
static const opt_spec T_ETA = {
    .name = "--eta", .metavar = "E", .type = OPT_DOUBLE, NU_FIELD, .section = PB, .param = "eta",
    .help = "learning rate", .example = "--eta 0.05"};
static const opt_spec T_RHO = {
    .name = "--rho", .metavar = "R", .type = OPT_DOUBLE, NU_FIELD, .section = PB, .param = "rho",
    .help = "zCDP parameter", .example = "--rho 2"};
static const opt_spec T_G = {
    .name = "--G", .metavar = "G", .type = OPT_DOUBLE, NU_FIELD, .section = PB, .param = "G",
    .help = "clip norm", .example = "--G 2"};
static const opt_spec T_SGD = {
    .name = "--sigma-sgd", .metavar = "S", .type = OPT_DOUBLE, NU_FIELD, .section = PB,
    .param = "sigma_sgd", .help = "data-noise std", .example = "--sigma-sgd 0.5"};
static const opt_spec T_MU = {
    .name = "--mu", .metavar = "M", .type = OPT_DOUBLE, NU_FIELD, .section = PB, .param = "mu",
    .when = "--problem sc", .help = "strong convexity, <= L", .example = "--problem sc --mu 0.1"};
static const opt_spec T_L = {
    .name = "--L", .metavar = "L", .type = OPT_DOUBLE, NU_FIELD, .section = PB, .param = "L",
    .when = "--problem sc", .help = "smoothness", .example = "--problem sc --L 2"};
static const opt_spec T_TMAX = {
    .name = "--tmax", .metavar = "T", .type = OPT_UINT, NU_FIELD, .section = PB, .param = "tmax",
    .when = "--problem sc", .help = "Zames-Falb multipliers |t| <= T",
    .example = "--problem sc --tmax 2"};
static const opt_spec T_SIMULATE = {
    .name = "--simulate", .metavar = "N", .type = OPT_UINT, NU_FIELD, .section = PB,
    .param = "simulate,steps", .when = "--problem lti|mean",
    .help = "also simulate N measured steps after a burn-in of the slowest mode's correlation "
            "times",
    .example = "--simulate 1000"};
static const opt_spec T_RANDOM = {
    .name = "--random", .type = OPT_FLAG, .section = PB, .param = "model",
    .when = "--simulate", .help = "... in random Gaussian design instead of the fixed design",
    .example = "--simulate 1000 --random"};
static const opt_spec T_SEED = {
    .name = "--seed", .metavar = "S", .type = OPT_UINT, .flags = OPT_BIG, NU_FIELD, .section = PB,
    .param = "seed", .when = "--simulate", .help = "simulation seed (seeded mode: warned, recorded)",
    .example = "--simulate 1000 --seed 7"};
static const opt_spec T_LEN = {
    .name = "--len", .metavar = "N", .type = OPT_UINT, NU_FIELD, .section = PB,
    .param = "beta_len,len,mech.steps", .when = "--kind bsr|bisr|blt|toeplitz|file:PATH",
    .help = "noising coefficients kept for non-family Toeplitz kinds",
    .example = "--kind bsr --bands 4 --len 1000"};
#undef PB
static const opt_spec T_KIND = {
    .name = "--kind", .metavar = "KIND", .type = OPT_STR, .flags = OPT_IN_STRATEGY,
    .section = "mechanism (the noising "
    "coefficients beta of B)", .param = "mech.kind,kind",
    .help = "identity | nu | antipgd | lcgd | bsr | bisr | blt | toeplitz | file:PATH (default "
            "nu with nu = eta lambda_min, the Theorem 2.2 choice)",
    .example = "--kind antipgd"};

static const opt_spec *const THEORY_OPTS[] = {
    &T_PROBLEM, &T_D, &T_ALPHA, &T_ETA, &T_RHO, &T_G, &T_SGD, &T_MU, &T_L, &T_TMAX, &T_SIMULATE,
    &T_RANDOM, &T_SEED, &T_LEN, MECH_KIND_OPTS(T_KIND, MO_MOMENTUM, MO_DECAY), &OPT_JSON,
    &OPT_DRY_RUN, &OPT_HELP, NULL};

static const opt_cmd THEORY_CMD = {
    .name = "theory",
    .usage = "dpcorr theory [--problem lti|mean|sc] [mechanism options] [problem options] [--json]",
    .about = "Stationary error (T -> infinity) of Noisy-SGD / DP-FTRL with Toeplitz noise\n"
             "coefficients (Choquette-Choo et al., nu-DP-FTRL paper), at sigma^2 = G^2 gamma_inf^2 /\n"
             "(2 rho). Errors are E||theta - theta*||_H^2 (lti; = 2 x (F - F*)), E delta^2 (mean),\n"
             "F - F* (sc).",
    .opts = THEORY_OPTS,
    .kind_opt = "--kind",
    .minimal = "",
};

typedef struct th_opts {
    int json;
    cli_mech_opts mo;
    dpc_nu_setup_params sp; /* the library's setup of the run (defaults, nu, simulation) */
    dpc_nu_setup setup;
} th_opts;

static const mech_read THEORY_MECH = {&T_KIND, NULL, &MO_MOMENTUM, &MO_DECAY, 0, 0, 0, 0};

static int toeplitz_array_kind(const cli_mech_opts *mo)
{
    dpc_mech_kind k = mo->p.kind;
    return mo->strategy_path || k == DPC_MECH_BSR || k == DPC_MECH_BISR || k == DPC_MECH_BLT ||
           k == DPC_MECH_TOEPLITZ;
}

/* Reads the options the problem and mechanism chosen use into the library's setup parameters
 * (unset: its defaults, dpc_nu_setup_params_init); the setup (spectrum, Theorem 2.2's nu) is
 * the library's. */
static int th_read(th_opts *o, opt_set *s)
{
    dpc_nu_setup_params *P = &o->sp;
    dpc_nu_setup_params_init(P);
    opt_read_field(s, &T_PROBLEM, P);
    int sc = P->problem == DPC_NU_PROBLEM_SC;
    if (P->problem != DPC_NU_PROBLEM_MEAN) opt_read_field(s, &T_D, P);
    if (P->problem == DPC_NU_PROBLEM_LTI) opt_read_field(s, &T_ALPHA, P);
    static const opt_spec *const all[] = {&T_ETA, &T_RHO, &T_G, &T_SGD};
    static const opt_spec *const sc_only[] = {&T_MU, &T_L, &T_TMAX};
    for (size_t i = 0; i < 4; i++) opt_read_field(s, all[i], P);
    for (size_t i = 0; sc && i < 3; i++) opt_read_field(s, sc_only[i], P);
    if (!sc) opt_read_field(s, &T_SIMULATE, P);
    if (P->steps) {
        P->model = opt_given(s, &T_RANDOM) ? DPC_SIM_RANDOM : DPC_SIM_FIXED;
        P->seed = opt_u64(s, &T_SEED, P->seed); /* all 64 bits (a field is read as a double) */
    }
    o->json = opt_given(s, &OPT_JSON);
    cli_mech_opts *mo = &o->mo;
    mo->p.kind = DPC_MECH_NU;
    int rc = cli_mech_read(mo, s, &THEORY_MECH);
    if (rc) return rc;
    if (toeplitz_array_kind(mo)) opt_read_field(s, &T_LEN, P);
    if ((rc = opt_finish(s))) return rc;
    dpc_error err = {0};
    if (dpc_nu_setup_make(&o->setup, P, NULL, &err)) return opt_fail_lib(s, &err);
    /* the Theorem 2.2 choice nu = eta lambda_min (a derived value: library errors say so) */
    if (mo->p.kind == DPC_MECH_NU && !mo->strategy_path && !opt_typed(s, &MO_NU))
        mo->p.nu = o->setup.nu;
    mo->p.steps = P->beta_len;
    return cli_mech_load(mo, s, &THEORY_MECH);
}

/* The resolved configuration: the setup's parameters (d as the problem resolves it: MEAN's 1). */
static void th_dry(const th_opts *o)
{
    dpc_nu_setup_params shown = o->sp;
    shown.d = o->setup.d;
    opt_dry_fields(dpc_nu_setup_params_fields(), &shown, "");
    opt_dry_uint("json", (uint64_t)o->json);
    cli_mech_dry(&o->mo, 0);
}

static int simulate(const opt_set *s, const th_opts *o, const dpc_theory_beta *b,
                    dpc_sim_result *r, size_t *len)
{
    dpc_error err = {0};
    dpc_nu_setup su; /* sigma, burn-in and the truncated beta: the library's rules */
    if (dpc_nu_setup_make(&su, &o->sp, b, &err)) return opt_fail_lib_at(s, &T_SIMULATE, &err);
    *len = su.len;
    int rc = 0;
    /* a simulation of the theory (no private data), seeded for reproducibility: said once */
    frame_warn_seeded("theory", su.sim.seed, "a simulation with a fixed seed; --seed S changes it");
    if (dpc_sim_run(&su.sim, r, &err)) rc = opt_fail_lib_at(s, &T_SIMULATE, &err);
    dpc_nu_setup_free(&su);
    return rc;
}

static void sc_text(const th_opts *o, const char *desc, double g2, const dpc_nu_eval *ev)
{
    const dpc_nu_setup_params *P = &o->sp;
    printf("mechanism            %s\n", desc);
    printf("problem              mu = %g, L = %g (kappa %g), eta = %g, rho = %g, G = %g, d = %zu\n",
           P->mu, P->L, P->L / P->mu, P->eta, P->rho, P->G, o->setup.d);
    printf("gamma_inf^2          %.8g\n", g2);
    printf("Thm 3.1 bound F-F*   %.8g  (E||theta-theta*||^2 <= %.8g; doc/theory.md constants)\n",
           ev->sc.value, ev->sc.dist);
    if (ev->have_sc_opt) printf("Optimized DP-FTRL    %.8g\n", ev->sc_opt.value);
}

/* Everything the lti and mean problems print: the library's evaluation and the simulation. */
typedef struct lti_out {
    dpc_nu_eval ev;
    int have_sim;
    dpc_sim_result sr;
    size_t slen;
} lti_out;

static void lti_text(const th_opts *o, const char *desc, double g2, const lti_out *u)
{
    const dpc_nu_setup_params *P = &o->sp;
    int mean = P->problem == DPC_NU_PROBLEM_MEAN;
    printf("mechanism            %s\n", desc);
    if (mean)
        printf("problem              mean estimation, eta = %g, rho = %g, G = %g, sigma_sgd = %g\n",
               P->eta, P->rho, P->G, P->sigma_sgd);
    else
        printf("problem              linear regression, d = %zu, lambda_k = k^-%g (d_eff %.6g), "
               "eta = %g, rho = %g, G = %g, sigma_sgd = %g\n",
               o->setup.d, P->alpha, u->ev.rates.d_eff, P->eta, P->rho, P->G, P->sigma_sgd);
    printf("gamma_inf^2          %.8g\n", g2);
    printf("F_inf (V0)           %.8g  (quadrature)%s", u->ev.quadrature.v0, u->ev.series_ok ? "" : "\n");
    if (u->ev.series_ok)
        printf("; series %.8g (rel. diff %.1e)\n", u->ev.series.v0,
               fabs(u->ev.series.v0 - u->ev.quadrature.v0) / fabs(u->ev.quadrature.v0));
    if (mean)
        printf("optimum over beta    %.8g  (nu = eta; R(eta) = %.6g)\n", u->ev.mean_opt, u->ev.ratio_R);
    else
        printf("LTI optimum          %.8g  (over all beta)\n", u->ev.lti_opt);
    printf("lower bounds         universal %.6g, Thm C.18 %.6g\n", u->ev.bounds.lower_universal,
           u->ev.bounds.lower_freq);
    printf("upper bounds         Thm C.14 %.6g, Thm C.15 %.6g, sandwich %.6g (random Gaussian "
           "design)\n",
           u->ev.bounds.upper_time, u->ev.bounds.upper_freq, u->ev.bounds.sandwich_upper);
    if (!mean)
        printf("Table 1 rates        SGD %.4g, FTRL %.4g, lower %.4g (constants dropped)\n",
               u->ev.rates.sgd, u->ev.rates.ftrl, u->ev.rates.lower);
    if (u->have_sim)
        printf("simulation           %.8g +- %.2g (%s design, %zu steps after %zu burn-in, seed "
               "%llu, %zu coefficients)\n",
               u->sr.mean, u->sr.stderr_, dpc_sim_model_name(P->model), u->sr.steps,
               u->sr.burn_in, (unsigned long long)u->sr.seed, u->slen);
}

/* The library's evaluation of b on the problem, a simulation beside it, the report. */
static int run_problem(const opt_set *s, const th_opts *o, const dpc_theory_beta *b, const char *desc,
                       double g2)
{
    dpc_error err = {0};
    lti_out u;
    memset(&u, 0, sizeof u);
    if (dpc_nu_evaluate(&o->sp, &o->setup, b, &u.ev, &err)) return opt_fail_lib(s, &err);
    int sc = o->sp.problem == DPC_NU_PROBLEM_SC;
    if (!sc && o->sp.steps) {
        int rc = simulate(s, o, b, &u.sr, &u.slen);
        if (rc) return rc;
        u.have_sim = 1;
    }
    if (o->json) {
        dpc_json_writer w;
        dpc_json_begin_line(&w, stdout);
        dpc_nu_eval_json(&w, &o->sp, &o->setup, desc, g2, &u.ev, u.have_sim ? &u.sr : NULL);
        dpc_json_finish(&w);
    } else if (sc) {
        sc_text(o, desc, g2, &u.ev);
    } else {
        lti_text(o, desc, g2, &u);
    }
    return 0;
}

static int run(const opt_set *s, const th_opts *o)
{
    dpc_error err = {0};
    dpc_mech *m = NULL;
    double *owned = NULL;
    dpc_theory_beta b;
    double g2;
    int rc = 0;
    if (dpc_mech_new(&m, &o->mo.p, &err) ||
        dpc_theory_beta_from_mech(m, o->sp.beta_len, &b, &owned, &err) ||
        dpc_theory_gamma_inf2(&b, &g2, &err)) {
        rc = opt_fail_lib(s, &err);
    } else {
        char desc[128];
        dpc_theory_beta_describe(&b, desc, sizeof desc);
        rc = run_problem(s, o, &b, desc, g2);
    }
    free(owned);
    dpc_mech_free(m);
    return rc;
}

int cmd_theory(int argc, char **argv)
{
    opt_set s;
    int rc = opt_parse(&s, &THEORY_CMD, argc, argv, 1, 0);
    if (rc || s.help) return rc;
    th_opts o;
    memset(&o, 0, sizeof o);
    cli_mech_opts_init(&o.mo);
    if (!(rc = th_read(&o, &s))) {
        if (s.dry_run) th_dry(&o);
        else rc = run(&s, &o);
    }
    dpc_nu_setup_free(&o.setup);
    cli_mech_opts_free(&o.mo);
    return rc;
}
