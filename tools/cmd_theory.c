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

#define PB "problem"
static const opt_spec T_PROBLEM = {
    .name = "--problem", .metavar = "P", .type = OPT_CHOICE, .choices = "lti|mean|sc",
    .section = PB, .param = "problem",
    .help = "lti: linear regression, H = diag(k^-alpha), fixed design (default); mean: mean "
            "estimation (Theorem 2.1, d = 1, lambda = 1); sc: the Theorem 3.1/E.1 bound for "
            "mu-strongly convex, L-smooth F",
    .example = "--problem sc"};
static const opt_spec T_D = {
    .name = "--d", .metavar = "D", .type = OPT_UINT, .lo = 1, .hi = 100000, .section = PB,
    .param = "d", .when = "--problem lti|sc", .help = "dimension in [1, 100000] (default 128)",
    .example = "--d 16"};
static const opt_spec T_ALPHA = {
    .name = "--alpha", .metavar = "A", .type = OPT_DOUBLE, .lo = 0, .hi = 100, .section = PB,
    .param = "alpha", .when = "--problem lti",
    .help = "eigenvalue decay lambda_k = k^-A, A in [0, 100] (default 1)", .example = "--alpha 2"};
static const opt_spec T_ETA = {
    .name = "--eta", .metavar = "E", .type = OPT_DOUBLE, .lo = 0, .hi = INFINITY,
    .flags = OPT_LO_OPEN, .section = PB, .param = "eta", .help = "learning rate (default 0.02)",
    .example = "--eta 0.05"};
static const opt_spec T_RHO = {
    .name = "--rho", .metavar = "R", .type = OPT_DOUBLE, .lo = 0, .hi = INFINITY,
    .flags = OPT_LO_OPEN, .section = PB, .param = "rho", .help = "zCDP parameter (default 0.5)",
    .example = "--rho 2"};
static const opt_spec T_G = {
    .name = "--G", .metavar = "G", .type = OPT_DOUBLE, .lo = 0, .hi = INFINITY,
    .flags = OPT_LO_OPEN, .section = PB, .param = "G", .help = "clip norm (default 1)",
    .example = "--G 2"};
static const opt_spec T_SGD = {
    .name = "--sigma-sgd", .metavar = "S", .type = OPT_DOUBLE, .lo = 0, .hi = INFINITY,
    .section = PB, .param = "sigma_sgd", .help = "data-noise std (default 0)",
    .example = "--sigma-sgd 0.5"};
static const opt_spec T_MU = {
    .name = "--mu", .metavar = "M", .type = OPT_DOUBLE, .lo = 0, .hi = INFINITY,
    .flags = OPT_LO_OPEN, .section = PB, .param = "mu", .when = "--problem sc",
    .help = "strong convexity (default 0.01)", .example = "--problem sc --mu 0.1"};
static const opt_spec T_L = {
    .name = "--L", .metavar = "L", .type = OPT_DOUBLE, .lo = 0, .hi = INFINITY,
    .flags = OPT_LO_OPEN, .section = PB, .param = "L", .when = "--problem sc",
    .help = "smoothness (default 1)", .example = "--problem sc --L 2"};
static const opt_spec T_TMAX = {
    .name = "--tmax", .metavar = "T", .type = OPT_UINT, .lo = 0, .hi = 1000, .section = PB,
    .param = "tmax", .when = "--problem sc",
    .help = "Zames-Falb multipliers |t| <= T, T <= 1000 (default 4)",
    .example = "--problem sc --tmax 2"};
static const opt_spec T_SIMULATE = {
    .name = "--simulate", .metavar = "N", .type = OPT_UINT, .lo = 1, .hi = 1e9, .section = PB,
    .param = "simulate,steps", .when = "--problem lti|mean",
    .help = "also simulate N measured steps, N <= 1e9 (burn-in 10/min(nu, eta mu))",
    .example = "--simulate 1000"};
static const opt_spec T_RANDOM = {
    .name = "--random", .type = OPT_FLAG, .section = PB, .param = "model",
    .when = "--simulate", .help = "... in random Gaussian design (default fixed design)",
    .example = "--simulate 1000 --random"};
static const opt_spec T_SEED = {
    .name = "--seed", .metavar = "S", .type = OPT_UINT, .flags = OPT_BIG, .section = PB,
    .param = "seed", .when = "--simulate", .help = "simulation seed (seeded mode, default 1; warned, recorded)",
    .example = "--simulate 1000 --seed 7"};
static const opt_spec T_LEN = {
    .name = "--len", .metavar = "N", .type = OPT_UINT, .lo = 1, .hi = 1e8, .section = PB,
    .param = "len,mech.steps", .when = "--kind bsr|bisr|blt|toeplitz|file:PATH",
    .help = "noising coefficients kept for non-family Toeplitz kinds (default 65536)",
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
    int problem; /* 0 lti, 1 mean, 2 sc */
    size_t d, tmax, len, simulate;
    double alpha, eta, rho, G, sgd, mu, L;
    int random, json;
    uint64_t seed;
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

/* Reads the options the problem and mechanism chosen use (unset: the library's defaults,
 * dpc_nu_setup_params_init); the setup (spectrum, Theorem 2.2's nu) is the library's. */
static int th_read(th_opts *o, opt_set *s)
{
    dpc_nu_setup_params *P = &o->sp;
    dpc_nu_setup_params_init(P);
    o->problem = opt_word(s, &T_PROBLEM, (int)P->problem);
    P->problem = (dpc_nu_problem)o->problem;
    o->d = o->problem == 1 ? 1 : opt_size(s, &T_D, P->d);
    o->alpha = o->problem == 0 ? opt_dbl(s, &T_ALPHA, P->alpha) : P->alpha;
    o->eta = opt_dbl(s, &T_ETA, P->eta);
    o->rho = opt_dbl(s, &T_RHO, P->rho);
    o->G = opt_dbl(s, &T_G, P->G);
    o->sgd = opt_dbl(s, &T_SGD, P->sigma_sgd);
    if (o->problem == 2) {
        o->mu = opt_dbl(s, &T_MU, P->mu);
        o->L = opt_dbl(s, &T_L, P->L);
        o->tmax = opt_size(s, &T_TMAX, P->tmax);
    } else {
        o->simulate = opt_size(s, &T_SIMULATE, 0);
        if (o->simulate) {
            o->random = opt_given(s, &T_RANDOM);
            o->seed = opt_u64(s, &T_SEED, P->seed);
        }
    }
    o->json = opt_given(s, &OPT_JSON);
    cli_mech_opts *mo = &o->mo;
    mo->p.kind = DPC_MECH_NU;
    int rc = cli_mech_read(mo, s, &THEORY_MECH);
    if (rc) return rc;
    o->len = toeplitz_array_kind(mo) ? opt_size(s, &T_LEN, 65536) : 65536;
    if ((rc = opt_finish(s))) return rc;
    P->d = o->d;
    P->alpha = o->alpha;
    P->eta = o->eta;
    P->rho = o->rho;
    P->G = o->G;
    P->sigma_sgd = o->sgd;
    if (o->problem == 2) P->mu = o->mu, P->L = o->L, P->tmax = o->tmax;
    P->steps = o->simulate;
    P->model = o->random ? DPC_SIM_RANDOM : DPC_SIM_FIXED;
    if (o->simulate) P->seed = o->seed;
    dpc_error err = {0};
    if (dpc_nu_setup_make(&o->setup, P, NULL, &err)) return opt_fail_lib(s, &err);
    /* the Theorem 2.2 choice nu = eta lambda_min (a derived value: library errors say so) */
    if (mo->p.kind == DPC_MECH_NU && !mo->strategy_path && !opt_typed(s, &MO_NU))
        mo->p.nu = o->setup.nu;
    mo->p.steps = o->len;
    return cli_mech_load(mo, s, &THEORY_MECH);
}

static void th_dry(const th_opts *o)
{
    static const char *const problems[] = {"lti", "mean", "sc"};
    opt_dry_str("problem", problems[o->problem]);
    opt_dry_uint("d", o->d);
    opt_dry_num("alpha", o->alpha);
    opt_dry_num("eta", o->eta);
    opt_dry_num("rho", o->rho);
    opt_dry_num("G", o->G);
    opt_dry_num("sigma_sgd", o->sgd);
    opt_dry_num("mu", o->mu);
    opt_dry_num("L", o->L);
    opt_dry_uint("tmax", o->tmax);
    opt_dry_uint("simulate", o->simulate);
    opt_dry_str("model", o->random ? "random" : "fixed");
    opt_dry_uint("seed", o->seed);
    opt_dry_uint("len", o->len);
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

static void sc_print(const th_opts *o, const char *desc, double g2, const dpc_nu_eval *ev)
{
    const dpc_theory_sc_result r = ev->sc, ro = ev->sc_opt;
    int have_opt = ev->have_sc_opt;
    if (o->json) {
        dpc_json_writer w;
        dpc_json_begin_line(&w, stdout);
        dpc_json_str(&w, "problem", "sc");
        dpc_json_str(&w, "mechanism", desc);
        dpc_json_num(&w, "kappa", o->L / o->mu);
        dpc_json_num(&w, "gamma_inf2", g2);
        dpc_json_num(&w, "bound_F", r.value);
        dpc_json_num(&w, "bound_dist2", r.dist);
        dpc_json_num(&w, "optimized_bound_F", have_opt ? ro.value : NAN);
        dpc_json_finish(&w);
        return;
    }
    printf("mechanism            %s\n", desc);
    printf("problem              mu = %g, L = %g (kappa %g), eta = %g, rho = %g, G = %g, d = %zu\n",
           o->mu, o->L, o->L / o->mu, o->eta, o->rho, o->G, o->d);
    printf("gamma_inf^2          %.8g\n", g2);
    printf("Thm 3.1 bound F-F*   %.8g  (E||theta-theta*||^2 <= %.8g; doc/theory.md constants)\n",
           r.value, r.dist);
    if (have_opt) printf("Optimized DP-FTRL    %.8g\n", ro.value);
}

/* Everything the lti and mean problems print: the library's evaluation and the simulation. */
typedef struct lti_out {
    dpc_nu_eval ev;
    int have_sim;
    dpc_sim_result sr;
    size_t slen;
} lti_out;

static void lti_json(const th_opts *o, const char *desc, double g2, const lti_out *u)
{
    dpc_json_writer w;
    dpc_json_begin_line(&w, stdout);
    dpc_json_str(&w, "problem", o->problem ? "mean" : "lti");
    dpc_json_str(&w, "mechanism", desc);
    dpc_json_int(&w, "d", (long long)o->d);
    dpc_json_num(&w, "alpha", o->alpha);
    dpc_json_num(&w, "eta", o->eta);
    dpc_json_num(&w, "rho", o->rho);
    dpc_json_num(&w, "d_eff", u->ev.rates.d_eff);
    dpc_json_num(&w, "gamma_inf2", g2);
    dpc_json_num(&w, "v0", u->ev.quadrature.v0);
    dpc_json_num(&w, "v0_series", u->ev.series_ok ? u->ev.series.v0 : NAN);
    dpc_json_num(&w, "v0_sgd_noise", u->ev.quadrature.v0_sgd);
    dpc_json_num(&w, "lti_opt", u->ev.lti_opt);
    if (o->problem == 1) {
        dpc_json_num(&w, "mean_opt", u->ev.mean_opt);
        dpc_json_num(&w, "ratio_R", u->ev.ratio_R);
    }
    dpc_json_num(&w, "lower_universal", u->ev.bounds.lower_universal);
    dpc_json_num(&w, "lower_c18", u->ev.bounds.lower_freq);
    dpc_json_num(&w, "upper_c14", u->ev.bounds.upper_time);
    dpc_json_num(&w, "upper_c15", u->ev.bounds.upper_freq);
    dpc_json_num(&w, "sandwich_upper", u->ev.bounds.sandwich_upper);
    dpc_json_num(&w, "rate_sgd", u->ev.rates.sgd);
    dpc_json_num(&w, "rate_ftrl", u->ev.rates.ftrl);
    dpc_json_num(&w, "rate_lower", u->ev.rates.lower);
    if (u->have_sim) {
        dpc_json_str(&w, "sim_design", o->random ? "random" : "fixed");
        dpc_json_num(&w, "sim_mean", u->sr.mean);
        dpc_json_num(&w, "sim_stderr", u->sr.stderr_);
        dpc_json_int(&w, "sim_steps", (long long)u->sr.steps);
        dpc_json_int(&w, "sim_burn_in", (long long)u->sr.burn_in);
        dpc_json_int(&w, "sim_seed", (long long)u->sr.seed);
    }
    dpc_json_finish(&w);
}

static void lti_text(const th_opts *o, const char *desc, double g2, const lti_out *u)
{
    printf("mechanism            %s\n", desc);
    if (o->problem == 1)
        printf("problem              mean estimation, eta = %g, rho = %g, G = %g, sigma_sgd = %g\n",
               o->eta, o->rho, o->G, o->sgd);
    else
        printf("problem              linear regression, d = %zu, lambda_k = k^-%g (d_eff %.6g), "
               "eta = %g, rho = %g, G = %g, sigma_sgd = %g\n",
               o->d, o->alpha, u->ev.rates.d_eff, o->eta, o->rho, o->G, o->sgd);
    printf("gamma_inf^2          %.8g\n", g2);
    printf("F_inf (V0)           %.8g  (quadrature)%s", u->ev.quadrature.v0, u->ev.series_ok ? "" : "\n");
    if (u->ev.series_ok)
        printf("; series %.8g (rel. diff %.1e)\n", u->ev.series.v0,
               fabs(u->ev.series.v0 - u->ev.quadrature.v0) / fabs(u->ev.quadrature.v0));
    if (o->problem == 1)
        printf("optimum over beta    %.8g  (nu = eta; R(eta) = %.6g)\n", u->ev.mean_opt, u->ev.ratio_R);
    else
        printf("LTI optimum          %.8g  (over all beta)\n", u->ev.lti_opt);
    printf("lower bounds         universal %.6g, Thm C.18 %.6g\n", u->ev.bounds.lower_universal,
           u->ev.bounds.lower_freq);
    printf("upper bounds         Thm C.14 %.6g, Thm C.15 %.6g, sandwich %.6g (random Gaussian "
           "design)\n",
           u->ev.bounds.upper_time, u->ev.bounds.upper_freq, u->ev.bounds.sandwich_upper);
    if (o->problem == 0)
        printf("Table 1 rates        SGD %.4g, FTRL %.4g, lower %.4g (constants dropped)\n",
               u->ev.rates.sgd, u->ev.rates.ftrl, u->ev.rates.lower);
    if (u->have_sim)
        printf("simulation           %.8g +- %.2g (%s design, %zu steps after %zu burn-in, seed "
               "%llu, %zu coefficients)\n",
               u->sr.mean, u->sr.stderr_, o->random ? "random" : "fixed", u->sr.steps,
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
    if (o->problem == 2) {
        sc_print(o, desc, g2, &u.ev);
        return 0;
    }
    if (o->simulate) {
        int rc = simulate(s, o, b, &u.sr, &u.slen);
        if (rc) return rc;
        u.have_sim = 1;
    }
    if (o->json) lti_json(o, desc, g2, &u);
    else lti_text(o, desc, g2, &u);
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
        dpc_theory_beta_from_mech(m, o->len, &b, &owned, &err) ||
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
