/* cmd_theory.c — `dpcorr theory`: the stationary-error theory of the nu-DP-FTRL paper for one
 * mechanism: gamma_inf, V0 by both routes, the LTI optimum, the Appendix C bounds and the
 * Table 1 rates (linear regression, lambda_k = k^-alpha); mean estimation; the Theorem 3.1
 * bound for strongly convex functions; optionally a simulation beside the theory. */
#include "cli.h"
#include "dpcorr/papers/sim.h"
#include "dpcorr/papers/theory.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void theory_usage(FILE *f)
{
    fprintf(f,
            "usage: dpcorr theory [--problem lti|mean|sc] [mechanism options] [problem options] [--json]\n\n"
            "Stationary error (T -> infinity) of Noisy-SGD / DP-FTRL with Toeplitz noise coefficients\n"
            "(Choquette-Choo et al., nu-DP-FTRL paper), at sigma^2 = G^2 gamma_inf^2 / (2 rho).\n"
            "Errors are E||theta - theta*||_H^2 (lti; = 2 x (F - F*)), E delta^2 (mean), F - F* (sc).\n\n"
            "problems:\n"
            "  --problem lti         linear regression, H = diag(k^-alpha), fixed design (default)\n"
            "  --problem mean        mean estimation (Theorem 2.1): d = 1, lambda = 1\n"
            "  --problem sc          Theorem 3.1/E.1 bound for mu-strongly convex, L-smooth F\n"
            "problem options:\n"
            "  --d D                 dimension (default 128)\n"
            "  --alpha A             eigenvalue decay lambda_k = k^-A (default 1)\n"
            "  --eta E               learning rate (default 0.02)\n"
            "  --rho R               zCDP parameter (default 0.5)\n"
            "  --G G                 clip norm (default 1)\n"
            "  --sigma-sgd S         data-noise std (default 0)\n"
            "  --mu M --L L          sc: strong convexity and smoothness (default 0.01, 1)\n"
            "  --tmax T              sc: Zames-Falb multipliers |t| <= T (default 4)\n"
            "  --simulate N          lti/mean: also simulate N measured steps (burn-in 10/min(nu, eta mu))\n"
            "  --random              ... in random Gaussian design (default fixed design)\n"
            "  --seed S              simulation seed (default 1; recorded)\n"
            "  --len N               coefficients kept for non-family Toeplitz kinds (default 65536)\n"
            "mechanism (the noising coefficients beta of B):\n"
            "  --kind KIND           identity | nu | antipgd | lcgd | bisr | bsr | blt | toeplitz\n"
            "                        (default nu with nu = eta lambda_min, the Theorem 2.2 choice)\n"
            "  --nu V                nu / antipgd damping; other kind options as in `dpcorr mech`\n"
            "output:\n"
            "  --json                one JSON object\n"
            "  --help                this text\n");
}

typedef struct th_opts {
    int problem; /* 0 lti, 1 mean, 2 sc */
    size_t d, tmax, len;
    double alpha, eta, rho, G, sgd, mu, L;
    size_t simulate;
    int random, json, have_kind, have_nu;
    uint64_t seed;
} th_opts;

static int simulate(const th_opts *o, const dpc_theory_beta *b, size_t d, const double *lam, double g2,
                    double nu, dpc_sim_result *r, size_t *len)
{
    dpc_error err = {0};
    *len = dpc_theory_beta_len_for_tail(b, 1e-8, 1);
    if (!*len) return cli_fail("theory", "--simulate: coefficients do not decay");
    double *beta = malloc(*len * sizeof *beta);
    if (!beta) return CLI_RUNTIME;
    dpc_theory_beta_coeffs(b, beta, *len);
    dpc_sim_config c;
    dpc_sim_config_init(&c);
    c.model = o->random ? DPC_SIM_RANDOM : DPC_SIM_FIXED;
    c.eta = o->eta;
    c.sigma = o->G * sqrt(g2 / (2 * o->rho));
    c.sigma_sgd = o->sgd;
    c.d = d;
    c.lambda = lam;
    double lmin = lam[0];
    for (size_t j = 0; j < d; j++) lmin = fmin(lmin, lam[j]);
    double slow = fmin(o->eta * lmin, nu > 0 ? nu : 1.0);
    c.burn_in = (size_t)(10.0 / slow);
    c.steps = o->simulate;
    c.seed = o->seed;
    c.beta = beta;
    c.len = *len;
    int rc = 0;
    if (dpc_sim_run(&c, r, &err)) {
        fprintf(stderr, "dpcorr theory: --simulate: %s\n", err.msg);
        rc = err.status == DPC_E_INVALID ? CLI_USAGE : CLI_RUNTIME;
    }
    free(beta);
    return rc;
}

int cmd_theory(int argc, char **argv)
{
    th_opts o = {0, 128, 4, 65536, 1.0, 0.02, 0.5, 1.0, 0.0, 0.01, 1.0, 0, 0, 0, 0, 0, 1};
    cli_mech_opts mo;
    cli_mech_opts_init(&mo);
    mo.p.kind = DPC_MECH_NU;
    cli_iter it;
    cli_iter_init(&it, "theory", argc, argv, 1);
    int rc = 0;
    const char *v;
    double *lam = NULL, *owned = NULL;
    dpc_mech *m = NULL;
    while (cli_next(&it)) {
        if (cli_is(&it, "--kind")) o.have_kind = 1;
        if (cli_is(&it, "--nu")) o.have_nu = 1;
        int r = cli_mech_opt(&mo, &it, "--kind");
        if (r < 0) {
            rc = CLI_USAGE;
            goto done;
        }
        if (r > 0) continue;
#define DBL(name, field) else if (cli_is(&it, name)) { if (!(v = cli_value(&it)) || cli_double(&it, v, &field)) { rc = CLI_USAGE; goto done; } }
#define SZ(name, field) else if (cli_is(&it, name)) { if (!(v = cli_value(&it)) || cli_size(&it, v, &field)) { rc = CLI_USAGE; goto done; } }
        if (cli_is(&it, "--help") || cli_is(&it, "-h")) {
            theory_usage(stdout);
            goto done;
        } else if (cli_is(&it, "--json")) {
            o.json = 1;
        } else if (cli_is(&it, "--random")) {
            o.random = 1;
        } else if (cli_is(&it, "--problem")) {
            if (!(v = cli_value(&it))) { rc = CLI_USAGE; goto done; }
            if (!strcmp(v, "lti")) o.problem = 0;
            else if (!strcmp(v, "mean")) o.problem = 1;
            else if (!strcmp(v, "sc")) o.problem = 2;
            else { rc = cli_fail("theory", "--problem: expected lti, mean or sc, got '%s'", v); goto done; }
        } else if (cli_is(&it, "--seed")) {
            if (!(v = cli_value(&it)) || cli_u64(&it, v, &o.seed)) { rc = CLI_USAGE; goto done; }
        }
        DBL("--alpha", o.alpha) DBL("--eta", o.eta) DBL("--rho", o.rho) DBL("--G", o.G)
        DBL("--sigma-sgd", o.sgd) DBL("--mu", o.mu) DBL("--L", o.L)
        SZ("--d", o.d) SZ("--tmax", o.tmax) SZ("--simulate", o.simulate) SZ("--len", o.len)
        else {
            rc = cli_fail("theory", "%s: unknown option (see dpcorr theory --help)", it.name);
            goto done;
        }
#undef DBL
#undef SZ
    }
    if (mo.p.steps == 0) mo.p.steps = o.len;
    if (o.problem == 1) o.d = 1;
    if (o.d == 0 || o.d > 100000) { rc = cli_fail("theory", "--d: must be in [1, 100000]"); goto done; }
    if (!(o.eta > 0)) { rc = cli_fail("theory", "--eta: must be > 0"); goto done; }
    if (!(o.rho > 0)) { rc = cli_fail("theory", "--rho: must be > 0"); goto done; }
    if (!(o.G > 0)) { rc = cli_fail("theory", "--G: must be > 0"); goto done; }
    if (!(o.sgd >= 0)) { rc = cli_fail("theory", "--sigma-sgd: must be >= 0"); goto done; }
    lam = malloc(o.d * sizeof *lam);
    if (!lam) { rc = CLI_RUNTIME; goto done; }
    if (o.problem == 1) lam[0] = 1.0;
    else dpc_theory_powerlaw(lam, o.d, o.alpha);
    double lmin = o.problem == 2 ? o.mu : lam[o.d - 1];
    if (mo.p.kind == DPC_MECH_NU && !o.have_nu) mo.p.nu = fmin(o.eta * lmin, 0.999);
    if ((rc = cli_mech_finish(&mo, "theory", "--kind"))) goto done;
    dpc_error err = {0};
    if (dpc_mech_new(&m, &mo.p, &err)) { rc = cli_fail("theory", "%s", err.msg); goto done; }
    dpc_theory_beta b;
    if (dpc_theory_beta_from_mech(m, o.len, &b, &owned, &err)) { rc = cli_fail("theory", "--kind: %s", err.msg); goto done; }
    char desc[128];
    dpc_theory_beta_describe(&b, desc, sizeof desc);
    double g2;
    if (dpc_theory_gamma_inf2(&b, &g2, &err)) { fprintf(stderr, "dpcorr theory: %s\n", err.msg); rc = CLI_RUNTIME; goto done; }
    FILE *out = stdout;
    if (o.problem == 2) {
        dpc_theory_sc sp = {o.mu, o.L, o.eta, o.rho, o.G, o.sgd, o.d, o.tmax};
        dpc_theory_sc_result r, ro = {NAN, NAN, NAN, 0};
        if (dpc_theory_sc_bound(&sp, &b, &r, &err)) { rc = cli_fail("theory", "%s", err.msg); goto done; }
        int have_opt = o.sgd == 0.0 && !dpc_theory_sc_optimized(&sp, &ro, &err);
        if (o.json) {
            fprintf(out, "{");
            cli_json_str(out, "problem", "sc", 1);
            cli_json_str(out, "mechanism", desc, 1);
            cli_json_num(out, "kappa", o.L / o.mu, 1);
            cli_json_num(out, "gamma_inf2", g2, 1);
            cli_json_num(out, "bound_F", r.value, 1);
            cli_json_num(out, "bound_dist2", r.dist, 1);
            cli_json_num(out, "optimized_bound_F", have_opt ? ro.value : NAN, 0);
            fprintf(out, "}\n");
        } else {
            fprintf(out, "mechanism            %s\n", desc);
            fprintf(out, "problem              mu = %g, L = %g (kappa %g), eta = %g, rho = %g, G = %g, d = %zu\n",
                    o.mu, o.L, o.L / o.mu, o.eta, o.rho, o.G, o.d);
            fprintf(out, "gamma_inf^2          %.8g\n", g2);
            fprintf(out, "Thm 3.1 bound F-F*   %.8g  (E||theta-theta*||^2 <= %.8g; doc/theory.md constants)\n", r.value, r.dist);
            if (have_opt) fprintf(out, "Optimized DP-FTRL    %.8g\n", ro.value);
        }
        goto done;
    }
    dpc_theory_problem p = {o.eta, o.rho, o.G, o.sgd, o.d, lam};
    dpc_theory_lti ls, lq;
    int series_ok = !dpc_theory_lti_error(&p, &b, DPC_THEORY_SERIES, &ls, &err);
    if (dpc_theory_lti_error(&p, &b, DPC_THEORY_QUADRATURE, &lq, &err)) {
        rc = cli_fail("theory", "%s", err.msg);
        goto done;
    }
    double opt, tr = 0;
    for (size_t j = 0; j < o.d; j++) tr += lam[j];
    dpc_theory_bounds bd;
    dpc_theory_rates rt;
    if (dpc_theory_lti_opt(&p, &opt, &err) || dpc_theory_lti_bounds(&p, &b, tr + 2 * lam[0], 3.0, &bd, &err) ||
        dpc_theory_rates_of(&p, &rt, &err)) {
        rc = cli_fail("theory", "%s", err.msg);
        goto done;
    }
    dpc_sim_result sr;
    size_t slen = 0;
    int have_sim = 0;
    if (o.simulate) {
        if ((rc = simulate(&o, &b, o.d, lam, g2, b.kind == DPC_THEORY_BETA_NU ? b.nu : 0.0, &sr, &slen))) goto done;
        have_sim = 1;
    }
    double mean_opt = o.problem == 1 ? dpc_theory_mean_opt(o.eta, o.rho, o.G, o.sgd) : NAN;
    if (o.json) {
        fprintf(out, "{");
        cli_json_str(out, "problem", o.problem ? "mean" : "lti", 1);
        cli_json_str(out, "mechanism", desc, 1);
        cli_json_int(out, "d", (long long)o.d, 1);
        cli_json_num(out, "alpha", o.alpha, 1);
        cli_json_num(out, "eta", o.eta, 1);
        cli_json_num(out, "rho", o.rho, 1);
        cli_json_num(out, "d_eff", rt.d_eff, 1);
        cli_json_num(out, "gamma_inf2", g2, 1);
        cli_json_num(out, "v0", lq.v0, 1);
        cli_json_num(out, "v0_series", series_ok ? ls.v0 : NAN, 1);
        cli_json_num(out, "v0_sgd_noise", lq.v0_sgd, 1);
        cli_json_num(out, "lti_opt", opt, 1);
        if (o.problem == 1) {
            cli_json_num(out, "mean_opt", mean_opt, 1);
            cli_json_num(out, "ratio_R", dpc_theory_mean_ratio(o.eta), 1);
        }
        cli_json_num(out, "lower_universal", bd.lower_universal, 1);
        cli_json_num(out, "lower_c18", bd.lower_freq, 1);
        cli_json_num(out, "upper_c14", bd.upper_time, 1);
        cli_json_num(out, "upper_c15", bd.upper_freq, 1);
        cli_json_num(out, "sandwich_upper", bd.sandwich_upper, 1);
        cli_json_num(out, "rate_sgd", rt.sgd, 1);
        cli_json_num(out, "rate_ftrl", rt.ftrl, 1);
        cli_json_num(out, "rate_lower", rt.lower, have_sim);
        if (have_sim) {
            cli_json_str(out, "sim_design", o.random ? "random" : "fixed", 1);
            cli_json_num(out, "sim_mean", sr.mean, 1);
            cli_json_num(out, "sim_stderr", sr.stderr_, 1);
            cli_json_int(out, "sim_steps", (long long)sr.steps, 1);
            cli_json_int(out, "sim_burn_in", (long long)sr.burn_in, 1);
            cli_json_int(out, "sim_seed", (long long)sr.seed, 0);
        }
        fprintf(out, "}\n");
    } else {
        fprintf(out, "mechanism            %s\n", desc);
        if (o.problem == 1)
            fprintf(out, "problem              mean estimation, eta = %g, rho = %g, G = %g, sigma_sgd = %g\n", o.eta, o.rho, o.G, o.sgd);
        else
            fprintf(out, "problem              linear regression, d = %zu, lambda_k = k^-%g (d_eff %.6g), eta = %g, rho = %g, G = %g, sigma_sgd = %g\n",
                    o.d, o.alpha, rt.d_eff, o.eta, o.rho, o.G, o.sgd);
        fprintf(out, "gamma_inf^2          %.8g\n", g2);
        fprintf(out, "F_inf (V0)           %.8g  (quadrature)%s", lq.v0, series_ok ? "" : "\n");
        if (series_ok) fprintf(out, "; series %.8g (rel. diff %.1e)\n", ls.v0, fabs(ls.v0 - lq.v0) / fabs(lq.v0));
        if (o.problem == 1)
            fprintf(out, "optimum over beta    %.8g  (nu = eta; R(eta) = %.6g)\n", mean_opt, dpc_theory_mean_ratio(o.eta));
        else
            fprintf(out, "LTI optimum          %.8g  (over all beta)\n", opt);
        fprintf(out, "lower bounds         universal %.6g, Thm C.18 %.6g\n", bd.lower_universal, bd.lower_freq);
        fprintf(out, "upper bounds         Thm C.14 %.6g, Thm C.15 %.6g, sandwich %.6g (random Gaussian design)\n",
                bd.upper_time, bd.upper_freq, bd.sandwich_upper);
        if (o.problem == 0)
            fprintf(out, "Table 1 rates        SGD %.4g, FTRL %.4g, lower %.4g (constants dropped)\n", rt.sgd, rt.ftrl, rt.lower);
        if (have_sim)
            fprintf(out, "simulation           %.8g +- %.2g (%s design, %zu steps after %zu burn-in, seed %llu, %zu coefficients)\n",
                    sr.mean, sr.stderr_, o.random ? "random" : "fixed", sr.steps, sr.burn_in,
                    (unsigned long long)sr.seed, slen);
    }
done:
    free(lam);
    free(owned);
    dpc_mech_free(m);
    cli_mech_opts_free(&mo);
    return rc;
}
