/* train_linreg.c — `dpcorr train --algo dp-ambssgd|dp-ssgd`: private linear regression with
 * adaptive clipping (DP-AMBSSGD + DP-STAT) or DP-SSGD (papers/001; dpcorr/papers/linreg.h), on any data
 * set with real-valued targets, with optional baselines (fixed clip, non-private SGD, SSP, OLS)
 * and a JSON report that logs gamma_t, zeta_t, the clip fraction and the risk per step. */
#include "cli.h"
#include "dpcorr/papers/linreg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { B_FIXED = 1, B_SGD = 2, B_SSP = 4, B_OLS = 8 };

typedef struct lr_cli {
    dpc_linreg_opts o;
    const char *data, *report, *label;
    const char *src[7];   /* where each public input came from */
    int given[7];         /* h-norm, kappa, rx, k2, tail-a, w-bound, sigma-bound */
    int secure, quiet, k_paper, baselines;
    uint64_t seed;
    size_t log_every;
    double ssp_x, ssp_y;
} lr_cli;

typedef struct base_res {
    const char *name;
    double risk, train_loss, test_loss, epsilon, seconds;
    char note[160];
} base_res;

static double wall_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double cpu_now(void) { return (double)clock() / CLOCKS_PER_SEC; }

static void usage(FILE *f, dpc_linreg_algo a)
{
    fprintf(f,
            "usage: dpcorr train --algo %s --data SPEC (--epsilon E | --noise-multiplier A)\n"
            "                    [--delta D] [public inputs] [options] [--report F.json]\n\n",
            dpc_linreg_algo_name(a));
    if (a == DPC_LINREG_AMBSSGD)
        fprintf(f, "DP-AMBSSGD (Varshney, Thakurta & Jain 2022, Alg. 2 + DP-STAT, Alg. 3): one shuffled\n"
                   "pass of T = c1 kappa ln N mini-batch steps; each step privately estimates the\n"
                   "residual scale gamma_t on s fresh records, clips at zeta_t = R_x gamma_t (ln N)^a,\n"
                   "adds N(0, (2 z zeta_t / b)^2) to the mean gradient of b disjoint records;\n"
                   "output: the mean of the last T/2 iterates. GDP sqrt(2)/z by parallel composition.\n\n");
    else
        fprintf(f, "DP-SSGD (Varshney, Thakurta & Jain 2022, Alg. 1): one shuffled pass of N\n"
                   "single-record steps with a fixed clip zeta and noise N(0, (2 zeta z)^2);\n"
                   "privacy by amplification by shuffling (FMT21), valid only for eps ~ 1/sqrt(N).\n\n");
    fprintf(f,
            "data and privacy:\n"
            "  --data SPEC            csv:PATH[,opts] | libsvm:PATH[,opts] | synthetic:linreg[,opts]\n"
            "                         (real-valued targets; see doc/data.md)\n"
            "  --epsilon E            target epsilon (> 0)\n"
            "  --delta D              target delta in (0,1) (default 1e-5)\n"
            "  --noise-multiplier Z   use this noise multiplier (the paper's alpha) instead of\n"
            "                         calibrating (the report gives the epsilon it spends)\n"
            "  --calibration C        accountant (default: %s) | paper: %s\n"
            "public inputs (prior knowledge, not estimated from the data; synthetic linreg data take\n"
            "them from the generator, files from --kappa plus x_norm_bound or --rx/--h-norm):\n"
            "  --kappa K              condition number of H = E[x x^T] (>= 1)\n"
            "  --h-norm H             ||H||_2\n"
            "  --rx R                 R_x with E[||x||^2 x x^T] <= R_x^2 H (paper: R_x^2 = Tr H)\n"
            "  --k2 K2                tail constant K2 (default sqrt(8/3), Gaussian)\n"
            "  --tail-a A             tail exponent a (default 0.5 Gaussian; 1 sub-exponential)\n"
            "  --w-bound W            bound on ||w*||_H (default 1)\n"
            "  --sigma-bound S        bound on the label-noise std (default 1)\n"
            "algorithm:\n"
            "  --c1 C                 T = ceil(c1 kappa ln N), even (default 3)\n"
            "  --steps T              number of steps (even) instead of --c1\n"
            "  --stat-batch S         DP-STAT records per step (default (b+s)/11)\n"
            "  --lr ETA               step size (default b/(R_x^2 + (b-1)||H||); DP-SSGD 1/(4 R_x^2))\n"
            "  --clip Z               DP-SSGD / fixed-clip baseline: zeta (default\n"
            "                         R_x sqrt(w-bound^2 + sigma-bound^2) (ln N)^(2a), Cor. 3.3)\n"
            "  --domain B             DP-STAT domain (default K2 R_x (w-bound + sigma-bound) (ln N)^(2a))\n"
            "  --dpstat-k K|paper     DP-STAT doublings (default 40; paper: ceil(200 log2 N), whose\n"
            "                         Delta = B/N^200 underflows)\n"
            "  --dpstat-rule R        margin (default: stop at noisy count >= s - Gamma) | paper\n"
            "                         (stop at >= s, as printed; overshoots)\n"
            "  --dpstat-beta P        failure probability in Gamma (default 1/N)\n"
            "  --baselines LIST       also run fixed,sgd,ssp,ols (or all): each is a separate\n"
            "                         release at the same (eps, delta); together they compose\n"
            "  --ssp-x-bound R        SSP row clip (default R_x (ln N)^a)\n"
            "  --ssp-y-bound Y        SSP target clip (default K2 sqrt(w-bound^2 + sigma-bound^2) (ln N)^a)\n"
            "randomness and output:\n"
            "  --seed S               seeded mode (experiments; default 1); recorded in reports\n"
            "  --secure               key from the OS (getrandom); not reproducible\n"
            "  --stream I             stream index of the run's noise and permutation (default 0)\n"
            "  --report F.json        JSON report: plan, public inputs, privacy ledger, theory\n"
            "                         preconditions, per-step gamma_t, zeta_t, clip fraction, risk\n"
            "  --log-every K          steps per report entry (default 1; DP-SSGD: T/1000)\n"
            "  --label NAME           name of the run in the report\n"
            "  --quiet                no progress output\n",
            a == DPC_LINREG_AMBSSGD ? "the exact GDP of the run"
                                    : "the exact Gaussian eps0",
            a == DPC_LINREG_AMBSSGD ? "Thm. 3.7's sqrt(8 ln(1/delta))/eps"
                                    : "the classical Gaussian eps0 (requires eps0 < 1)");
}

static int parse_baselines(const cli_iter *it, const char *v, int *out)
{
    *out = 0;
    if (!strcmp(v, "none")) return 0;
    if (!strcmp(v, "all")) {
        *out = B_FIXED | B_SGD | B_SSP | B_OLS;
        return 0;
    }
    char buf[128];
    snprintf(buf, sizeof buf, "%s", v);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (!strcmp(tok, "fixed")) *out |= B_FIXED;
        else if (!strcmp(tok, "sgd")) *out |= B_SGD;
        else if (!strcmp(tok, "ssp")) *out |= B_SSP;
        else if (!strcmp(tok, "ols")) *out |= B_OLS;
        else
            return cli_fail(it->cmd, "%s: unknown baseline '%s' (fixed, sgd, ssp, ols, all, none)",
                            it->name, tok);
    }
    return 0;
}

/* Returns 0 to run, 1 after --help, CLI_USAGE on a bad option. */
static int parse(lr_cli *c, dpc_linreg_algo algo, int argc, char **argv)
{
    memset(c, 0, sizeof *c);
    dpc_linreg_opts_init(&c->o, algo);
    c->seed = 1;
    cli_iter it;
    cli_iter_init(&it, "train", argc, argv, 1);
    const char *v;
    dpc_error err = {0};
    double *pr[7] = {&c->o.prior.h_norm, &c->o.prior.kappa, &c->o.prior.r_x, &c->o.prior.k2,
                     &c->o.prior.a, &c->o.prior.w_bound, &c->o.prior.sigma_bound};
    const char *pn[7] = {"--h-norm", "--kappa", "--rx", "--k2", "--tail-a", "--w-bound",
                         "--sigma-bound"};
#define VAL() if (!(v = cli_value(&it))) return CLI_USAGE
#define DBL(name, field) if (cli_is(&it, name)) { VAL(); if (cli_double(&it, v, &(field))) return CLI_USAGE; continue; }
#define SZ(name, field) if (cli_is(&it, name)) { VAL(); if (cli_size(&it, v, &(field))) return CLI_USAGE; continue; }
    while (cli_next(&it)) {
        if (cli_is(&it, "--help") || cli_is(&it, "-h")) {
            usage(stdout, algo);
            return 1;
        }
        int hit = 0;
        for (int k = 0; k < 7 && !hit; k++)
            if (cli_is(&it, pn[k])) {
                VAL();
                if (cli_double(&it, v, pr[k])) return CLI_USAGE;
                c->given[k] = hit = 1;
            }
        if (hit) continue;
        DBL("--epsilon", c->o.epsilon)
        DBL("--delta", c->o.delta)
        DBL("--noise-multiplier", c->o.noise_multiplier)
        DBL("--c1", c->o.c1)
        SZ("--steps", c->o.steps)
        SZ("--stat-batch", c->o.stat_batch)
        DBL("--lr", c->o.eta)
        DBL("--clip", c->o.clip)
        DBL("--domain", c->o.domain)
        DBL("--dpstat-beta", c->o.dpstat_beta)
        DBL("--ssp-x-bound", c->ssp_x)
        DBL("--ssp-y-bound", c->ssp_y)
        SZ("--log-every", c->log_every)
        if (cli_is(&it, "--algo")) {
            VAL();
            if (strcmp(v, dpc_linreg_algo_name(algo)))
                return cli_fail("train", "--algo: expected %s, got '%s'", dpc_linreg_algo_name(algo), v);
        } else if (cli_is(&it, "--data")) {
            VAL();
            c->data = v;
        } else if (cli_is(&it, "--report")) {
            VAL();
            c->report = v;
        } else if (cli_is(&it, "--label")) {
            VAL();
            c->label = v;
        } else if (cli_is(&it, "--calibration")) {
            VAL();
            if (dpc_calibration_parse(v, &c->o.calibration, &err))
                return cli_fail("train", "--calibration: expected accountant or paper, got '%s'", v);
        } else if (cli_is(&it, "--dpstat-k")) {
            VAL();
            if (!strcmp(v, "paper")) c->k_paper = 1;
            else if (cli_size(&it, v, &c->o.dpstat_k)) return CLI_USAGE;
            else if (c->o.dpstat_k == 0) return cli_fail("train", "--dpstat-k: must be >= 1");
        } else if (cli_is(&it, "--dpstat-rule")) {
            VAL();
            if (dpc_dpstat_rule_parse(v, &c->o.dpstat_rule, &err))
                return cli_fail("train", "--dpstat-rule: expected margin or paper, got '%s'", v);
        } else if (cli_is(&it, "--baselines")) {
            VAL();
            if (parse_baselines(&it, v, &c->baselines)) return CLI_USAGE;
        } else if (cli_is(&it, "--seed")) {
            VAL();
            if (cli_u64(&it, v, &c->seed)) return CLI_USAGE;
        } else if (cli_is(&it, "--stream")) {
            VAL();
            uint64_t s;
            if (cli_u64(&it, v, &s)) return CLI_USAGE;
            if (s > UINT32_MAX) return cli_fail("train", "--stream: must be < 2^32");
            c->o.stream = (uint32_t)s;
        } else if (cli_is(&it, "--secure")) {
            c->secure = 1;
        } else if (cli_is(&it, "--quiet")) {
            c->quiet = 1;
        } else {
            return cli_fail("train", "%s: unknown option (see dpcorr train --algo %s --help)",
                            it.name, dpc_linreg_algo_name(algo));
        }
    }
#undef VAL
#undef DBL
#undef SZ
    if (!c->data) return cli_fail("train", "--data: required (e.g. synthetic:linreg,n=100000,d=10,alpha=0)");
    if (c->o.epsilon == 0 && c->o.noise_multiplier == 0)
        return cli_fail("train", "--epsilon: required (or --noise-multiplier)");
    if (c->o.epsilon != 0 && c->o.noise_multiplier != 0)
        return cli_fail("train", "--noise-multiplier: give --epsilon or --noise-multiplier, not both");
    for (int k = 0; k < 7; k++) c->src[k] = c->given[k] ? "option" : "default";
    return 0;
}

/* Public inputs not given: from the synthetic generator, else from x_norm_bound, else an error. */
static int fill_prior(lr_cli *c, const dpc_dataset *ds)
{
    dpc_linreg_prior *p = &c->o.prior;
    dpc_error err = {0};
    if (ds->cov_diag && ds->truth) { /* synthetic: the generator's parameters are public */
        dpc_linreg_prior q = *p;
        if (dpc_linreg_prior_from_spectrum(&q, ds->cov_diag, ds->d, &err))
            return cli_fail("train", "--data: %s", err.msg);
        double *dst[3] = {&p->h_norm, &p->kappa, &p->r_x}, val[3] = {q.h_norm, q.kappa, q.r_x};
        for (int k = 0; k < 3; k++)
            if (!c->given[k]) *dst[k] = val[k], c->src[k] = "synthetic generator";
        if (!c->given[5]) {
            double wh = 0;
            for (size_t j = 0; j < ds->d; j++) wh += ds->cov_diag[j] * ds->truth[j] * ds->truth[j];
            p->w_bound = sqrt(wh);
            c->src[5] = "synthetic generator";
        }
        const char *nz = strstr(ds->source, "noise=");
        if (!c->given[6] && nz) {
            p->sigma_bound = strtod(nz + 6, NULL);
            c->src[6] = "synthetic generator";
        }
    } else if (ds->x_norm_bound > 0) { /* ||x|| <= B: R_x <= B and ||H|| <= E||x||^2 <= B^2 */
        if (!c->given[2]) p->r_x = ds->x_norm_bound, c->src[2] = "x_norm_bound";
        if (!c->given[0]) p->h_norm = ds->x_norm_bound * ds->x_norm_bound, c->src[0] = "x_norm_bound^2";
    }
    const char *need[3] = {"--h-norm", "--kappa", "--rx"};
    for (int k = 0; k < 3; k++)
        if (!c->given[k] && !strcmp(c->src[k], "default"))
            return cli_fail("train", "%s: required for this data set (public prior knowledge of H; "
                                     "no generator spectrum or row-norm bound is known)", need[k]);
    if (c->k_paper) c->o.dpstat_k = (size_t)ceil(200.0 * log2((double)ds->n));
    return 0;
}

static void json_check(FILE *f, const dpc_linreg_check *k, int comma)
{
    fprintf(f, "    {");
    cli_json_str(f, "name", k->name, 1);
    cli_json_bool(f, "ok", k->ok, 1);
    cli_json_num(f, "value", k->value, 1);
    cli_json_num(f, "required", k->required, 1);
    cli_json_str(f, "source", k->source, 1);
    cli_json_str(f, "meaning", k->meaning, 0);
    fprintf(f, "}%s\n", comma ? "," : "");
}

typedef struct log_rec {
    size_t t;
    double gamma, zeta, noise_std, clip_fraction, batch_loss, excess_risk;
    size_t counts;
} log_rec;

static void write_report(const lr_cli *c, const dpc_linreg_plan *P, const dpc_dataset *tr,
                         const dpc_dataset *te, const log_rec *lg, size_t nlog, const double *w,
                         double risk, double train_loss, double test_loss, double clipf,
                         double wall, double cpu, const base_res *br, size_t nb)
{
    FILE *f = fopen(c->report, "w");
    if (!f) {
        fprintf(stderr, "dpcorr train: --report: cannot write %s\n", c->report);
        return;
    }
    const dpc_ledger *L = &P->ledger;
    const dpc_linreg_prior *q = &P->prior;
    fprintf(f, "{\n  ");
    cli_json_str(f, "dpcorr_version", dpc_version(), 1);
    cli_json_str(f, "algo", dpc_linreg_algo_name(P->algo), 1);
    cli_json_str(f, "label", c->label ? c->label : "", 0);
    fprintf(f, ",\n  \"data\": {");
    cli_json_str(f, "spec", c->data, 1);
    cli_json_str(f, "source", tr->source, 1);
    cli_json_int(f, "n_train", (long long)tr->n, 1);
    cli_json_int(f, "n_test", te ? (long long)te->n : 0, 1);
    cli_json_int(f, "features", (long long)tr->d, 1);
    cli_json_str(f, "preprocessing", tr->preprocessing, 1);
    cli_json_bool(f, "data_dependent_preprocessing", tr->data_dependent, 0);
    fprintf(f, "},\n  \"plan\": {");
    cli_json_int(f, "steps", (long long)P->steps, 1);
    cli_json_int(f, "batch", (long long)P->batch, 1);
    cli_json_int(f, "stat_batch", (long long)P->stat_batch, 1);
    cli_json_int(f, "tail_start", (long long)P->tail_start, 1);
    cli_json_int(f, "unused_records", (long long)P->unused, 1);
    cli_json_num(f, "eta", P->eta, 1);
    cli_json_num(f, "clip", P->clip, 1);
    cli_json_num(f, "clip_scale", P->clip_scale, 1);
    cli_json_num(f, "domain_B", P->domain, 1);
    cli_json_int(f, "dpstat_k", (long long)P->dpstat_k, 1);
    cli_json_num(f, "dpstat_delta", P->dpstat_delta, 1);
    cli_json_num(f, "dpstat_margin_gamma", P->dpstat_margin, 1);
    cli_json_str(f, "dpstat_rule", dpc_dpstat_rule_name(P->dpstat_rule), 1);
    cli_json_str(f, "calibration", dpc_calibration_name(c->o.calibration), 0);
    fprintf(f, "},\n  \"public_inputs\": {");
    const char *pn[7] = {"h_norm", "kappa", "r_x", "k2", "tail_a", "w_bound", "sigma_bound"};
    double pv[7] = {q->h_norm, q->kappa, q->r_x, q->k2, q->a, q->w_bound, q->sigma_bound};
    for (int k = 0; k < 7; k++) cli_json_num(f, pn[k], pv[k], 1);
    fprintf(f, "\"source\": {");
    for (int k = 0; k < 7; k++) cli_json_str(f, pn[k], c->src[k], k < 6);
    fprintf(f, "}},\n  \"privacy\": ");
    char lj[4096];
    dpc_ledger_json(L, lj, sizeof lj);
    fputs(lj, f);
    fprintf(f, ",\n  \"privacy_paper\": {");
    cli_json_num(f, "rho", P->rho, 1);
    cli_json_num(f, "rho_grad", P->rho_grad, 1);
    cli_json_num(f, "rho_stat", P->rho_stat, 1);
    cli_json_num(f, "noise_multiplier_stat", P->noise_multiplier_stat, 1);
    cli_json_num(f, "eps0", P->eps0, 1);
    cli_json_num(f, "delta0", P->delta0, 1);
    cli_json_int(f, "stream", (long long)c->o.stream, 1);
    cli_json_str(f, "telemetry", "clip_fraction, batch_loss and risk are not privatized", 0);
    fprintf(f, "},\n  \"preconditions\": [\n");
    dpc_linreg_check ck[DPC_LINREG_MAX_CHECKS];
    size_t nc = dpc_linreg_checks(P, ck, DPC_LINREG_MAX_CHECKS);
    for (size_t i = 0; i < nc; i++) json_check(f, &ck[i], i + 1 < nc);
    fprintf(f, "  ],\n  \"steps\": [");
    for (size_t i = 0; i < nlog; i++) {
        fprintf(f, "%s\n    {", i ? "," : "");
        cli_json_int(f, "t", (long long)lg[i].t, 1);
        cli_json_num(f, "gamma", lg[i].gamma, 1);
        cli_json_num(f, "zeta", lg[i].zeta, 1);
        cli_json_num(f, "noise_std", lg[i].noise_std, 1);
        cli_json_int(f, "dpstat_counts", (long long)lg[i].counts, 1);
        cli_json_num(f, "clip_fraction", lg[i].clip_fraction, 1);
        cli_json_num(f, "batch_loss", lg[i].batch_loss, 1);
        cli_json_num(f, "excess_risk", lg[i].excess_risk, 0);
        fprintf(f, "}");
    }
    fprintf(f, "\n  ],\n  \"final\": {");
    cli_json_num(f, "excess_risk", risk, 1);
    cli_json_num(f, "train_loss", train_loss, 1);
    cli_json_num(f, "test_loss", test_loss, 1);
    cli_json_num(f, "clip_fraction", clipf, 1);
    cli_json_num(f, "wall_time_s", wall, 1);
    cli_json_num(f, "cpu_time_s", cpu, 1);
    fprintf(f, "\"w\": [");
    for (size_t j = 0; j < tr->d; j++) fprintf(f, "%s%.17g", j ? ", " : "", w[j]);
    fprintf(f, "]},\n  \"baselines\": [");
    for (size_t i = 0; i < nb; i++) {
        fprintf(f, "%s\n    {", i ? "," : "");
        cli_json_str(f, "name", br[i].name, 1);
        cli_json_num(f, "excess_risk", br[i].risk, 1);
        cli_json_num(f, "train_loss", br[i].train_loss, 1);
        cli_json_num(f, "test_loss", br[i].test_loss, 1);
        cli_json_num(f, "epsilon", br[i].epsilon, 1);
        cli_json_num(f, "seconds", br[i].seconds, 1);
        cli_json_str(f, "note", br[i].note, 0);
        fprintf(f, "}");
    }
    fprintf(f, "\n  ],\n  ");
    cli_json_str(f, "baselines_note", "each baseline is a separate release at the same (epsilon, "
                                      "delta); releasing several composes their costs", 0);
    fprintf(f, "\n}\n");
    if (fclose(f) != 0) fprintf(stderr, "dpcorr train: --report: write error on %s\n", c->report);
}

static void metrics(const dpc_dataset *tr, const dpc_dataset *te, const double *w, double *risk,
                    double *trl, double *tel)
{
    dpc_error err = {0};
    *risk = tr->truth && tr->cov_diag ? dpc_linreg_excess_risk(w, tr->truth, tr->cov_diag, tr->d)
                                      : NAN;
    if (dpc_linreg_loss(tr, w, trl, &err)) *trl = NAN;
    if (!te || dpc_linreg_loss(te, w, tel, &err)) *tel = NAN;
}

/* The requested baselines on the same data, each a separate release at the same (eps, delta). */
static size_t run_baselines(const lr_cli *c, const dpc_linreg_plan *P, const dpc_dataset *tr,
                            const dpc_dataset *te, const dpc_rng *rng, base_res *br)
{
    size_t nb = 0;
    double *w = calloc(tr->d, sizeof *w);
    if (!w) return 0;
    dpc_error err = {0};
    for (int k = 0; k < 4; k++) {
        int bit = 1 << k;
        if (!(c->baselines & bit)) continue;
        base_res *r = &br[nb];
        memset(r, 0, sizeof *r);
        double t0 = wall_now();
        dpc_status st = DPC_OK;
        if (bit == B_FIXED || bit == B_SGD) {
            dpc_linreg_opts o = c->o;
            o.algo = bit == B_FIXED ? DPC_LINREG_FIXED : DPC_LINREG_SGD;
            o.steps = P->algo == DPC_LINREG_SSGD ? 0 : P->steps;
            o.stat_batch = 0;
            o.eta = 0; /* the baseline's own default step (--clip applies to it) */
            dpc_linreg *lr = NULL;
            st = dpc_linreg_new(&lr, tr, &o, rng, &err);
            if (!st) st = dpc_linreg_run(lr, NULL, &err);
            if (!st) st = dpc_linreg_average(lr, w, &err);
            if (!st) {
                const dpc_linreg_plan *Q = dpc_linreg_plan_get(lr);
                r->epsilon = Q->ledger.epsilon;
                snprintf(r->note, sizeof r->note, "T = %zu, b = %zu, %s", Q->steps, Q->batch,
                         bit == B_FIXED ? "fixed clip (Cor. 3.3 form unless --clip)" : "no clip, no noise");
            }
            dpc_linreg_free(lr);
            r->name = bit == B_FIXED ? "dp-sgd-fixed" : "sgd";
        } else if (bit == B_SSP) {
            double L = log((double)tr->n), a = c->o.prior.a;
            dpc_linreg_ssp_opts so = {c->o.epsilon, c->o.delta, c->ssp_x, c->ssp_y, c->o.stream};
            if (so.epsilon == 0) so.epsilon = P->ledger.epsilon;
            if (so.x_bound == 0) so.x_bound = P->prior.r_x * pow(L, a);
            if (so.y_bound == 0) so.y_bound = P->prior.k2 * hypot(P->prior.w_bound, P->prior.sigma_bound) * pow(L, a);
            dpc_linreg_ssp_info si;
            st = dpc_linreg_ssp(tr, &so, rng, w, &si, &err);
            r->epsilon = st ? NAN : si.epsilon;
            snprintf(r->note, sizeof r->note, "rows clipped to %.4g, targets to %.4g, ridge %.3g",
                     so.x_bound, so.y_bound, st ? NAN : si.ridge);
            r->name = "ssp";
        } else {
            st = dpc_linreg_ols(tr, w, &err);
            r->epsilon = INFINITY;
            snprintf(r->note, sizeof r->note, "ordinary least squares (not private)");
            r->name = "ols";
        }
        if (st) {
            fprintf(stderr, "dpcorr train: baseline %s: %s\n", r->name, err.msg);
            continue;
        }
        metrics(tr, te, w, &r->risk, &r->train_loss, &r->test_loss);
        r->seconds = wall_now() - t0;
        nb++;
    }
    free(w);
    return nb;
}

static int run(int argc, char **argv, dpc_linreg_algo algo)
{
    lr_cli c;
    int rc = parse(&c, algo, argc, argv);
    if (rc) return rc == 1 ? 0 : rc;
    double w0 = wall_now(), c0 = cpu_now();
    dpc_error err = {0};
    dpc_rng rng;
    if (c.secure) {
        if (dpc_rng_seed_os(&rng, &err)) return cli_fail("train", "--secure: %s", err.msg);
    } else {
        dpc_rng_seed(&rng, c.seed);
    }
    dpc_dataset *tr = NULL, *te = NULL;
    dpc_linreg *lr = NULL;
    log_rec *lg = NULL;
    double *w = NULL;
    if (dpc_data_load_spec(&tr, &te, c.data, &rng, &err)) return cli_fail("train", "--data: %s", err.msg);
    if (tr->n_classes != 0) {
        rc = cli_fail("train", "--data: %s needs real-valued targets (task=regression); this "
                               "set has %zu classes", dpc_linreg_algo_name(algo), tr->n_classes);
        goto done;
    }
    if ((rc = fill_prior(&c, tr))) goto done;
    dpc_status st = dpc_linreg_new(&lr, tr, &c.o, &rng, &err);
    if (st) {
        rc = st == DPC_E_NOMEM || st == DPC_E_NUMERIC ? CLI_RUNTIME : CLI_USAGE;
        fprintf(stderr, "dpcorr train: %s\n", err.msg);
        goto done;
    }
    const dpc_linreg_plan *P = dpc_linreg_plan_get(lr);
    const dpc_ledger *L = &P->ledger;
    if (!c.quiet)
        fprintf(stderr, "%s: N = %zu, d = %zu | T = %zu steps, b = %zu, s = %zu, eta = %.4g | z = "
                        "%.4g | (%.4g, %.3g)-DP, %s | %s seed%s%llu\n",
                dpc_linreg_algo_name(algo), tr->n, tr->d, P->steps, P->batch, P->stat_batch, P->eta,
                L->noise_multiplier, L->epsilon, L->delta, L->route, dpc_rng_mode_name(L->rng_mode),
                L->rng_mode == DPC_RNG_SEEDED ? " " : "",
                L->rng_mode == DPC_RNG_SEEDED ? (unsigned long long)L->seed : 0ull);
    dpc_linreg_check ck[DPC_LINREG_MAX_CHECKS];
    size_t nc = dpc_linreg_checks(P, ck, DPC_LINREG_MAX_CHECKS);
    for (size_t i = 0; i < nc; i++)
        if (!ck[i].ok)
            fprintf(stderr, "dpcorr train: warning: precondition %s (%s) fails: %.6g vs %.6g (%s); "
                            "the utility guarantee does not apply (privacy is unaffected)\n",
                    ck[i].name, ck[i].source, ck[i].value, ck[i].required, ck[i].meaning);
    size_t every = c.log_every ? c.log_every
                               : (algo == DPC_LINREG_SSGD ? (P->steps + 999) / 1000 : 1);
    lg = calloc(P->steps / every + 2, sizeof *lg);
    w = calloc(tr->d, sizeof *w);
    if (!lg || !w) {
        rc = cli_fail("train", "out of memory");
        goto done;
    }
    size_t nlog = 0, clipped = 0, blk_clip = 0, blk_n = 0;
    double blk_loss = 0;
    dpc_linreg_step_info in;
    while (dpc_linreg_steps_done(lr) < P->steps) {
        if (dpc_linreg_step(lr, &in, &err)) {
            fprintf(stderr, "dpcorr train: %s\n", err.msg);
            rc = CLI_RUNTIME;
            goto done;
        }
        clipped += in.clipped;
        blk_clip += in.clipped;
        blk_loss += in.batch_loss;
        blk_n++;
        size_t t = in.step + 1;
        if (t % every == 0 || t == P->steps) {
            log_rec *r = &lg[nlog++];
            r->t = in.step;
            r->gamma = in.gamma;
            r->zeta = in.zeta;
            r->noise_std = in.noise_std;
            r->counts = in.dpstat_counts;
            r->clip_fraction = (double)blk_clip / ((double)blk_n * (double)P->batch);
            r->batch_loss = blk_loss / (double)blk_n;
            r->excess_risk = in.excess_risk;
            blk_clip = blk_n = 0;
            blk_loss = 0;
        }
    }
    if (dpc_linreg_average(lr, w, &err)) {
        rc = cli_fail("train", "%s", err.msg);
        goto done;
    }
    double risk, trl, tel, clipf = (double)clipped / ((double)P->steps * (double)P->batch);
    metrics(tr, te, w, &risk, &trl, &tel);
    double wall = wall_now() - w0, cpu = cpu_now() - c0;
    base_res br[4];
    size_t nb = c.baselines ? run_baselines(&c, P, tr, te, &rng, br) : 0;
    if (c.report)
        write_report(&c, P, tr, te, lg, nlog, w, risk, trl, tel, clipf, wall, cpu, br, nb);
    printf("%s: excess risk %.6g, train loss %.6g, test loss %.6g | clipped %.2e | (%.4g, %.3g)-DP "
           "| %.2f s (cpu %.2f s)\n",
           dpc_linreg_algo_name(algo), risk, trl, tel, clipf, L->epsilon, L->delta, wall, cpu);
    for (size_t i = 0; i < nb; i++)
        printf("  baseline %-13s excess risk %.6g, train loss %.6g, test loss %.6g, epsilon %.4g\n",
               br[i].name, br[i].risk, br[i].train_loss, br[i].test_loss, br[i].epsilon);
done:
    free(lg);
    free(w);
    dpc_linreg_free(lr);
    dpc_dataset_free(tr);
    dpc_dataset_free(te);
    return rc;
}

int train_linreg_ambssgd(int argc, char **argv) { return run(argc, argv, DPC_LINREG_AMBSSGD); }
int train_linreg_ssgd(int argc, char **argv) { return run(argc, argv, DPC_LINREG_SSGD); }
