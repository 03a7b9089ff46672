/* train_linreg.c — `dpcorr train --algo dp-ambssgd|dp-ssgd`: private linear regression with
 * adaptive clipping (DP-AMBSSGD + DP-STAT) or DP-SSGD (papers/001; dpcorr/papers/linreg.h), on
 * any data set with real-valued targets, with optional baselines (fixed clip, non-private SGD,
 * SSP, OLS). The run frame (frame.h) does seeding, data, the report and the plot; the library
 * resolves the plan (dpc_linreg_plan_make) and accounts for it (the shared dpc_ledger). */
#include "train_algo.h"
#include "train_linreg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- options ------------------------------------------------------------------------------- */

#define PRIV "privacy"
#define PUB "public inputs (prior knowledge of the distribution, never estimated from the data)"
#define ALG "algorithm"
static const opt_spec L_ALGO_AMB = {
    .name = "--algo", .metavar = "NAME", .type = OPT_CHOICE, .choices = "dp-ambssgd",
    .section = "data and model", .param = "algorithm", .help = "dp-ambssgd",
    .example = "--algo dp-ambssgd"};
static const opt_spec L_ALGO_SSGD = {
    .name = "--algo", .metavar = "NAME", .type = OPT_CHOICE, .choices = "dp-ssgd",
    .section = "data and model", .param = "algorithm", .help = "dp-ssgd",
    .example = "--algo dp-ssgd"};
static const opt_spec L_DATA = {
    .name = "--data", .metavar = "SPEC", .type = OPT_STR, .flags = OPT_IN_DATA,
    .section = "data and model", .param = "data,train,test",
    .help = "csv:PATH[,opts] | libsvm:PATH[,opts] | synthetic:linreg[,opts] (real-valued targets; "
            "doc/data.md) (required)",
    .example = "--data synthetic:linreg,n=30000,d=2,alpha=0"};
static const opt_spec L_EPSILON =
    FR_EPSILON_OPT(dpc_linreg_opts_fields, PRIV, "--noise-multiplier", "--epsilon 3");
static const opt_spec L_DELTA = FR_DELTA_OPT(dpc_linreg_opts_fields, PRIV, NULL, "--delta 1e-7");
static const opt_spec L_LARGE_DELTA = FR_LARGE_DELTA_OPT(PRIV, NULL);
static const opt_spec L_NOISE = FR_NOISE_OPT(
    dpc_linreg_opts_fields, PRIV, "the paper's alpha: gradient noise std 2 Z zeta / b",
    "! --data synthetic:linreg,n=20000,d=3,alpha=0 --noise-multiplier 30");
static const opt_spec L_CALIBRATION = FR_CALIBRATION_OPT(
    dpc_linreg_opts_fields, PRIV, NULL,
    "dp-ambssgd the exact GDP of the run, dp-ssgd the shuffling theorem with the exact Gaussian "
    "eps0; paper: dp-ambssgd Thm. 3.7's sqrt(8 ln(1/delta))/eps, dp-ssgd the classical Gaussian "
    "eps0, which needs eps0 < 1",
    "--calibration paper");
/* The options of library fields take their type, range and default from the field table
 * (opt_spec.fields). */
#define LINREG_FIELD .fields = dpc_linreg_opts_fields
/* The public inputs, in the order of dpc_linreg_prior's fields (the bits of
 * dpc_linreg_prior_from_data). */
static const opt_spec L_PRIOR[NPRIOR] = {
    {LINREG_FIELD, .name = "--h-norm", .metavar = "H", .type = OPT_DOUBLE,
     .section = PUB, .param = "prior.h_norm", .help = "||H||_2", .example = "--h-norm 2"},
    {LINREG_FIELD, .name = "--kappa", .metavar = "K", .type = OPT_DOUBLE,
     .section = PUB, .param = "prior.kappa", .help = "condition number of H = E[x x^T] (>= 1)",
     .example = "--kappa 2"},
    {LINREG_FIELD, .name = "--rx", .metavar = "R", .type = OPT_DOUBLE,
     .section = PUB, .param = "prior.r_x",
     .help = "R_x with E[||x||^2 x x^T] <= R_x^2 H (paper: R_x^2 = Tr H)", .example = "--rx 3"},
    {LINREG_FIELD, .name = "--k2", .metavar = "K2", .type = OPT_DOUBLE,
     .section = PUB, .param = "prior.k2",
     .help = "tail constant K2 (Gaussian: sqrt(8/3))", .example = "--k2 2"},
    {LINREG_FIELD, .name = "--tail-a", .metavar = "A", .type = OPT_DOUBLE,
     .section = PUB, .param = "prior.a",
     .help = "tail exponent a (0.5 Gaussian; 1 sub-exponential)", .example = "--tail-a 1"},
    {LINREG_FIELD, .name = "--w-bound", .metavar = "W", .type = OPT_DOUBLE,
     .section = PUB, .param = "prior.w_bound", .help = "bound on ||w*||_H (synthetic: the generator's)",
     .example = "--w-bound 2"},
    {LINREG_FIELD, .name = "--sigma-bound", .metavar = "S", .type = OPT_DOUBLE,
     .section = PUB, .param = "prior.sigma_bound",
     .help = "bound on the label-noise std (synthetic: the generator's)",
     .example = "--sigma-bound 0.5"},
};
static const opt_spec L_C1 = {LINREG_FIELD,
    .name = "--c1", .metavar = "C", .type = OPT_DOUBLE, .section = ALG, .param = "c1",
    .conflicts = "--steps", .help = "T = ceil(c1 kappa ln N), even", .example = "--c1 4"};
static const opt_spec L_STEPS = {LINREG_FIELD,
    .name = "--steps", .metavar = "T", .type = OPT_UINT, .section = ALG,
    .param = "steps", .help = "number of steps (even) instead of --c1", .example = "--steps 40"};
static const opt_spec L_STAT_BATCH = {LINREG_FIELD,
    .name = "--stat-batch", .metavar = "S", .type = OPT_UINT, .section = ALG,
    .param = "stat_batch", .flags = OPT_OWN_DEFAULT,
    .help = "DP-STAT records per step (default (b+s)/11)",
    .example = "--stat-batch 50"};
static const opt_spec L_LR = {LINREG_FIELD,
    .name = "--lr", .metavar = "ETA", .type = OPT_DOUBLE, .section = ALG, .param = "eta",
    .help = "step size",
    .example = "--lr 0.01"};
static const opt_spec L_CLIP = {LINREG_FIELD,
    .name = "--clip", .metavar = "Z", .type = OPT_DOUBLE, .section = ALG, .param = "clip",
    .help = "dp-ssgd and the fixed-clip baseline: zeta",
    .example = "--baselines fixed --clip 2"};
static const opt_spec L_DOMAIN = {LINREG_FIELD,
    .name = "--domain", .metavar = "B", .type = OPT_DOUBLE, .section = ALG, .param = "domain",
    .help = "DP-STAT domain",
    .example = "--domain 10"};
/* the table's dpstat_k has no range (0 and the paper's sentinel SIZE_MAX are values of it; the
 * CLI's "paper" is the sentinel): the library's limit DPC_LINREG_MAX_DPSTAT_K bounds a count */
static const opt_spec L_DPSTAT_K = {LINREG_FIELD, /* the CLI's range: the library's limit */
    .name = "--dpstat-k", .metavar = "K|paper", .type = OPT_UINT, .lo = 1,
    .hi = DPC_LINREG_MAX_DPSTAT_K,
    .flags = OPT_WORDS, .choices = "paper", .section = ALG, .param = "dpstat_k",
    .help = "DP-STAT doublings (paper: ceil(200 log2 N), whose Delta = B/N^200 underflows)",
    .example = "--dpstat-k 30"};
static const opt_spec L_DPSTAT_RULE = {LINREG_FIELD,
    .name = "--dpstat-rule", .metavar = "R", .type = OPT_CHOICE,
    .section = ALG, .param = "dpstat_rule",
    .help = "margin (stop at noisy count >= s - Gamma) | paper (stop at >= s, as printed; "
            "overshoots)",
    .example = "--dpstat-rule paper"};
static const opt_spec L_DPSTAT_BETA = {LINREG_FIELD,
    .name = "--dpstat-beta", .metavar = "P", .type = OPT_DOUBLE, .section = ALG,
    .param = "dpstat_beta",
    .help = "failure probability in Gamma (unset: 1/N)", .example = "--dpstat-beta 0.01"};
static const opt_spec L_BASELINES = {
    .name = "--baselines", .metavar = "LIST", .type = OPT_STR, .section = "baselines",
    .param = "baselines",
    .help = "also run fixed,sgd,ssp,ols (or all, none): each is a separate release at the same "
            "(eps, delta); together they compose",
    .example = "--baselines ols"};
/* The SSP baseline's bounds: their range from its table (0, the note's bound, is not typed) */
static const opt_spec L_SSP_X = {.fields = dpc_linreg_ssp_opts_fields,
    .name = "--ssp-x-bound", .metavar = "R", .type = OPT_DOUBLE,
    .section = "baselines", .param = "ssp.x_bound",
    .when = "--baselines ssp", .help = "SSP row clip",
    .example = "--baselines ssp --ssp-x-bound 3"};
static const opt_spec L_SSP_Y = {.fields = dpc_linreg_ssp_opts_fields,
    .name = "--ssp-y-bound", .metavar = "Y", .type = OPT_DOUBLE,
    .section = "baselines", .param = "ssp.y_bound",
    .when = "--baselines ssp",
    .help = "SSP target clip",
    .example = "--baselines ssp --ssp-y-bound 3"};
static const opt_spec L_STREAM = {LINREG_FIELD, /* a uint32: the library's type check */
    .name = "--stream", .metavar = "I", .type = OPT_UINT,
    .section = "randomness and execution", .param = "stream",
    .help = "stream index of the run's noise and permutation", .example = "--stream 3"};
static const opt_spec L_LOG_EVERY = {
    .name = "--log-every", .metavar = "K", .type = OPT_UINT, .lo = 1, .hi = 1e9,
    .section = "output", .param = "log_every",
    .help = "steps per report entry (default 1; dp-ssgd: T/1000)", .example = "--log-every 5"};
#undef PRIV
#undef PUB
#undef ALG

#define LR_COMMON                                                                                  \
    &L_DATA, &L_EPSILON, &L_DELTA, &L_LARGE_DELTA, &L_NOISE, &L_CALIBRATION, &L_PRIOR[0],      \
        &L_PRIOR[1], &L_PRIOR[2], &L_PRIOR[3], &L_PRIOR[4], &L_PRIOR[5], &L_PRIOR[6]
#define LR_TAIL                                                                                    \
    &L_BASELINES, &L_SSP_X, &L_SSP_Y, &FR_SEED, &FR_SECURE, &L_STREAM, FRAME_CKPT_OPTS,         \
        &FR_REPORT, &FR_PLOT, &L_LOG_EVERY, &FR_LABEL, &FR_QUIET, &OPT_DRY_RUN, &OPT_HELP, NULL
static const opt_spec *const AMB_OPTS[] = {
    &L_ALGO_AMB, LR_COMMON, &L_C1, &L_STEPS, &L_STAT_BATCH, &L_LR, &L_CLIP, &L_DOMAIN,
    &L_DPSTAT_K, &L_DPSTAT_RULE, &L_DPSTAT_BETA, LR_TAIL};
static const opt_spec *const SSGD_OPTS[] = {&L_ALGO_SSGD, LR_COMMON, &L_LR, &L_CLIP, LR_TAIL};

static const opt_cmd AMB_CMD = {
    .name = "train --algo dp-ambssgd",
    .usage = "dpcorr train --algo dp-ambssgd --data SPEC (--epsilon E | --noise-multiplier Z)\n"
             "                    [--delta D] [public inputs] [options] [--report F.json]",
    .about = "DP-AMBSSGD (Varshney, Thakurta & Jain 2022, Alg. 2 + DP-STAT, Alg. 3): one shuffled\n"
             "pass of T = c1 kappa ln N mini-batch steps; each step privately estimates the\n"
             "residual scale gamma_t on s fresh records, clips at zeta_t = R_x gamma_t (ln N)^a,\n"
             "adds N(0, (2 z zeta_t / b)^2) to the mean gradient of b disjoint records;\n"
             "output: the mean of the last T/2 iterates. GDP sqrt(2)/z by parallel composition.\n"
             "Public inputs: synthetic linreg data take them from the generator; files need\n"
             "--kappa plus a row-norm bound (x_norm_bound) or --rx and --h-norm.",
    .opts = AMB_OPTS,
    .minimal = "--algo dp-ambssgd --data synthetic:linreg,n=20000,d=3,alpha=0 --epsilon 1",
};
static const opt_cmd SSGD_CMD = {
    .name = "train --algo dp-ssgd",
    .usage = "dpcorr train --algo dp-ssgd --data SPEC (--epsilon E | --noise-multiplier Z)\n"
             "                    [--delta D] [public inputs] [options] [--report F.json]",
    .about = "DP-SSGD (Varshney, Thakurta & Jain 2022, Alg. 1): one shuffled pass of N\n"
             "single-record steps with a fixed clip zeta and noise N(0, (2 zeta z)^2);\n"
             "privacy by amplification by shuffling (FMT21), valid only for eps ~ 1/sqrt(N).\n"
             "Public inputs: synthetic linreg data take them from the generator; files need\n"
             "--kappa plus a row-norm bound (x_norm_bound) or --rx and --h-norm.",
    .opts = SSGD_OPTS,
    .minimal = "--algo dp-ssgd --data synthetic:linreg,n=20000,d=3,alpha=0 --epsilon 0.5",
};

/* The prior's field of public input k (its option's param, "prior.h_norm", in the table). */
static double *prior_field(dpc_linreg_prior *p, int k)
{
    const dpc_field *f = dpc_field_find(dpc_linreg_prior_fields(), L_PRIOR[k].param + 6, NULL);
    return (double *)(void *)((char *)p + f->offset);
}

/* The algorithm's own options (DP-AMBSSGD: layout and DP-STAT). */
static void read_algorithm(lr_cli *c, opt_set *s, dpc_linreg_algo algo)
{
    static const opt_spec *const amb[] = {&L_C1,     &L_STEPS,       &L_STAT_BATCH,
                                          &L_DOMAIN, &L_DPSTAT_RULE, &L_DPSTAT_BETA};
    dpc_linreg_opts *o = &c->o;
    opt_read_field(s, &L_LR, o);
    if (algo == DPC_LINREG_SSGD || (c->baselines & (1u << DPC_LINREG_BASELINE_FIXED)))
        opt_read_field(s, &L_CLIP, o);
    if (algo != DPC_LINREG_AMBSSGD) return;
    for (size_t i = 0; i < sizeof amb / sizeof amb[0]; i++) opt_read_field(s, amb[i], o);
    o->dpstat_k = opt_size(s, &L_DPSTAT_K, o->dpstat_k);
    if (opt_word(s, &L_DPSTAT_K, 0) == 1) o->dpstat_k = DPC_LINREG_DPSTAT_K_PAPER;
}

static int read_opts(lr_cli *c, opt_set *s, dpc_linreg_algo algo)
{
    memset(c, 0, sizeof *c);
    frame_init(&c->fr);
    dpc_linreg_opts_init(&c->o, algo);
    c->fr.data_opt = &L_DATA;
    opt_use(s, algo == DPC_LINREG_AMBSSGD ? &L_ALGO_AMB : &L_ALGO_SSGD);
    frame_read(&c->fr, s);
    frame_read_ckpt(&c->fr, s);
    dpc_linreg_opts *o = &c->o;
    o->epsilon = opt_dbl(s, &L_EPSILON, 0);
    o->noise_multiplier = opt_dbl(s, &L_NOISE, 0);
    o->delta = opt_dbl(s, &L_DELTA, o->delta);
    o->allow_large_delta = opt_given(s, &L_LARGE_DELTA);
    o->calibration = opt_word(s, &L_CALIBRATION, 0) ? DPC_CALIBRATION_PAPER
                                                    : DPC_CALIBRATION_ACCOUNTANT;
    for (int k = 0; k < NPRIOR; k++) {
        c->given[k] = opt_given(s, &L_PRIOR[k]);
        double *f = prior_field(&o->prior, k);
        *f = opt_dbl(s, &L_PRIOR[k], *f);
    }
    dpc_error err = {0};
    if (dpc_linreg_baselines_parse(opt_str(s, &L_BASELINES, "none"), &c->baselines, &err))
        return opt_fail_lib(s, &err);
    if (c->baselines & (1u << DPC_LINREG_BASELINE_SSP)) {
        c->ssp_x = opt_dbl(s, &L_SSP_X, 0);
        c->ssp_y = opt_dbl(s, &L_SSP_Y, 0);
    }
    read_algorithm(c, s, algo);
    /* written through its row, which refuses what does not fit a uint32 (naming stream) */
    const dpc_field *sf = dpc_field_find(dpc_linreg_opts_fields(), "stream", NULL);
    dpc_error serr = {0};
    if (dpc_field_set(sf, o, (double)opt_u64(s, &L_STREAM, (uint64_t)sf->def), &serr) ||
        dpc_field_check_value(sf, "", dpc_field_get(sf, o), &serr))
        return opt_fail_lib_at(s, &L_STREAM, &serr);
    c->log_every = opt_size(s, &L_LOG_EVERY, 0);
    int rc = opt_finish(s);
    if (rc || (rc = frame_check(&c->fr, s, 1))) return rc;
    if (o->epsilon == 0 && o->noise_multiplier == 0)
        return opt_fail_at(s, &L_EPSILON, "required (or --noise-multiplier)");
    return 0;
}

/* Public inputs not given: from the synthetic generator, else from x_norm_bound, else an error. */
static int fill_prior(lr_cli *c, opt_set *s, const dpc_dataset *ds)
{
    dpc_linreg_prior *p = &c->o.prior;
    dpc_error err = {0};
    unsigned keep = 0, filled = 0;
    for (int k = 0; k < NPRIOR; k++)
        if (c->given[k]) keep |= 1u << k;
    if (dpc_linreg_prior_from_data(p, ds, keep, &filled, &err)) return opt_fail_lib_at(s, &L_DATA, &err);
    for (int k = 0; k < NPRIOR; k++) c->src[k] = dpc_linreg_prior_source(ds, keep, filled, 1u << k);
    if (dpc_linreg_prior_require(keep, filled, &err))
        for (int k = 0; k < NPRIOR; k++)
            if (!strcmp(L_PRIOR[k].param, err.field)) return opt_fail_lib_at(s, &L_PRIOR[k], &err);
    return err.status ? opt_fail_lib(s, &err) : 0;
}

/* ---- report -------------------------------------------------------------------------------- */

static void report_results(dpc_json_writer *w, const lr_out *u, size_t d)
{
    dpc_json_arr(w, "steps");
    for (size_t i = 0; i < u->nlog; i++) {
        const log_rec *r = &u->lg[i];
        dpc_json_obj(w, NULL);
        dpc_json_int(w, "t", (long long)r->t);
        dpc_json_num(w, "gamma", r->gamma);
        dpc_json_num(w, "zeta", r->zeta);
        dpc_json_num(w, "noise_std", r->noise_std);
        dpc_json_int(w, "dpstat_counts", (long long)r->counts);
        dpc_json_num(w, "clip_fraction", r->clip_fraction);
        dpc_json_num(w, "batch_loss", r->batch_loss);
        dpc_json_num(w, "excess_risk", r->excess_risk);
        dpc_json_end(w);
    }
    dpc_json_end(w);
    dpc_json_obj(w, "final");
    dpc_json_num(w, "excess_risk", u->risk);
    dpc_json_num(w, "train_loss", u->train_loss);
    dpc_json_num(w, "test_loss", u->test_loss);
    dpc_json_num(w, "clip_fraction", u->clipf);
    dpc_json_num(w, "wall_time_s", u->wall);
    dpc_json_num(w, "cpu_time_s", u->cpu);
    dpc_json_nums(w, "w", u->w, d);
    dpc_json_hash(w, "params_hash", u->params_hash);
    dpc_json_end(w);
    dpc_json_arr(w, "baselines");
    for (size_t i = 0; i < u->nb; i++) {
        const base_res *b = &u->br[i];
        dpc_json_obj(w, NULL);
        dpc_json_str(w, "name", b->name);
        dpc_json_num(w, "excess_risk", b->risk);
        dpc_json_num(w, "train_loss", b->train_loss);
        dpc_json_num(w, "test_loss", b->test_loss);
        dpc_json_num(w, "epsilon", b->epsilon);
        dpc_json_num(w, "seconds", b->seconds);
        dpc_json_str(w, "note", b->note);
        dpc_json_end(w);
    }
    dpc_json_end(w);
    dpc_json_str(w, "baselines_note", "each baseline is a separate release at the same (epsilon, "
                                "delta); releasing several composes their costs");
}

static int write_report(const lr_cli *c, const lr_out *u)
{
    dpc_json_writer w;
    FILE *f = frame_report_open(&c->fr, &w, dpc_linreg_algo_name(u->P->algo));
    if (!f) return CLI_RUNTIME;
    dpc_dataset_report_json(&w, c->fr.data, c->fr.train, c->fr.test);
    dpc_linreg_plan_report_json(&w, u->P, &c->o, c->src);
    dpc_ledger_report_json(&w, &u->P->ledger,
                           "clip_fraction, batch_loss and risk are not privatized");
    dpc_linreg_paper_report_json(&w, u->P, &c->o);
    report_results(&w, u, c->fr.train->d);
    return frame_report_close(&w, f, c->fr.report);
}

/* The plot: excess risk per logged step (synthetic data), else the batch loss. */
static int plot(const lr_cli *c, const lr_out *u)
{
    double *x = malloc((u->nlog + 1) * sizeof *x), *y = malloc((u->nlog + 1) * sizeof *y);
    int rc = CLI_RUNTIME, risk = u->nlog && isfinite(u->lg[0].excess_risk);
    if (x && y) {
        for (size_t i = 0; i < u->nlog; i++) {
            x[i] = (double)u->lg[i].t + 1;
            y[i] = risk ? u->lg[i].excess_risk : u->lg[i].batch_loss;
        }
        plot_series sr = {dpc_linreg_algo_name(u->P->algo), x, y, NULL, u->nlog, PLOT_LINES};
        plot_panel p = {risk ? "excess risk (non-private telemetry)"
                             : "batch loss (non-private telemetry)",
                        "step", risk ? "excess risk" : "loss", 0, 1, &sr, 1};
        rc = frame_plot(c->fr.plot, &p, 1);
    }
    free(x);
    free(y);
    return rc;
}

/* ---- baselines ----------------------------------------------------------------------------- */

/* The requested baselines on the same data (dpc_linreg_baseline: what each runs is the
 * library's), each a separate release at the same (eps, delta). The first one that fails is
 * kept in *bad: the command then fails naming its option (a requested baseline is never
 * silently left out). */
static size_t run_baselines(const lr_cli *c, const dpc_linreg_plan *P, base_res *br,
                            dpc_error *bad)
{
    size_t nb = 0;
    double *w = calloc(c->fr.train->d, sizeof *w);
    if (!w) return 0;
    dpc_error err = {0};
    for (int k = 0; k < DPC_LINREG_NBASELINES; k++) {
        if (!(c->baselines & (1 << k))) continue;
        base_res *r = &br[nb];
        memset(r, 0, sizeof *r);
        double t0 = cli_now();
        dpc_linreg_baseline_info bi;
        dpc_status st = dpc_linreg_baseline(c->fr.train, &c->o, P, (dpc_linreg_baseline_kind)k,
                                            c->ssp_x, c->ssp_y, &c->fr.rng, w, &bi, &err);
        r->name = dpc_linreg_baseline_name((dpc_linreg_baseline_kind)k);
        r->epsilon = bi.epsilon;
        if (k == DPC_LINREG_BASELINE_SSP)
            snprintf(r->note, sizeof r->note, "rows clipped to %.4g, targets to %.4g, ridge %.3g",
                     bi.x_bound, bi.y_bound, bi.ridge);
        else if (k == DPC_LINREG_BASELINE_OLS)
            snprintf(r->note, sizeof r->note, "ordinary least squares (not private)");
        else if (!st)
            snprintf(r->note, sizeof r->note, "T = %zu, b = %zu, %s", bi.steps, bi.batch,
                     k == DPC_LINREG_BASELINE_FIXED ? "fixed clip (Cor. 3.3 form unless --clip)"
                                                    : "no clip, no noise");
        if (st && k == DPC_LINREG_BASELINE_SSP &&
            (!strcmp(err.field, "x_bound") || !strcmp(err.field, "y_bound")))
            dpc_error_nest(&err, "ssp"); /* the option's name: --ssp-x-bound */
        if (st) {
            fprintf(stderr, "dpcorr train: baseline %s: %s\n", r->name, err.msg);
            if (!bad->status) *bad = err;
            continue;
        }
        dpc_linreg_evaluate(c->fr.train, c->fr.test, w, &r->risk, &r->train_loss, &r->test_loss);
        r->seconds = cli_now() - t0;
        nb++;
    }
    free(w);
    return nb;
}

/* ---- the run ------------------------------------------------------------------------------- */

static void dry_run(const lr_cli *c, const dpc_linreg_plan *P)
{
    frame_dry(&c->fr);
    opt_dry_str("algo", dpc_linreg_algo_name(P->algo));
    opt_dry_num("epsilon", c->o.epsilon);
    opt_dry_num("delta", P->ledger.delta); /* resolved: dpc_account_resolve_delta */
    opt_dry_uint("allow_large_delta", (uint64_t)c->o.allow_large_delta);
    opt_dry_num("noise_multiplier", P->ledger.noise_multiplier);
    opt_dry_str("calibration", dpc_calibration_name(c->o.calibration));
    dpc_linreg_prior q = P->prior;
    opt_dry_fields(dpc_linreg_prior_fields(), &q, "prior.");
    opt_dry_num("c1", c->o.c1);
    opt_dry_uint("steps", P->steps);
    opt_dry_uint("batch", P->batch);
    opt_dry_uint("stat_batch", P->stat_batch);
    opt_dry_num("eta", P->eta);
    opt_dry_num("clip", c->o.clip);
    opt_dry_num("domain", P->domain);
    opt_dry_uint("dpstat_k", P->dpstat_k);
    opt_dry_str("dpstat_rule", dpc_dpstat_rule_name(P->dpstat_rule));
    opt_dry_num("dpstat_beta", c->o.dpstat_beta);
    opt_dry_uint("baselines", (uint64_t)c->baselines);
    opt_dry_num("ssp.x_bound", c->ssp_x);
    opt_dry_num("ssp.y_bound", c->ssp_y);
    opt_dry_uint("stream", c->o.stream);
    opt_dry_uint("log_every", c->log_every);
    frame_dry_ckpt(&c->fr);
    opt_dry_num("ledger.epsilon", P->ledger.epsilon);
}

/* The plan (unless --quiet) and the failing theory preconditions (always). */
static void banner(const lr_cli *c, const dpc_linreg_plan *P)
{
    const dpc_ledger *L = &P->ledger;
    const dpc_dataset *tr = c->fr.train;
    char rd[96];
    if (!c->fr.quiet)
        fprintf(stderr, "%s: N = %zu, d = %zu | T = %zu steps, b = %zu, s = %zu, eta = %.4g | z = "
                    "%.4g | (%.4g, %.3g)-DP, %s | %s\n",
            dpc_linreg_algo_name(P->algo), tr->n, tr->d, P->steps, P->batch, P->stat_batch,
            P->eta, L->noise_multiplier, L->epsilon, L->delta, L->route,
            frame_rng_desc(L->rng_mode, L->seed, rd, sizeof rd));
    dpc_linreg_check ck[DPC_LINREG_MAX_CHECKS];
    size_t nc = dpc_linreg_checks(P, ck, DPC_LINREG_MAX_CHECKS);
    for (size_t i = 0; i < nc; i++)
        if (!ck[i].ok)
            fprintf(stderr, "dpcorr train: warning: precondition %s (%s) fails: %.6g vs %.6g (%s); "
                            "the utility guarantee does not apply (privacy is unaffected)\n",
                    ck[i].name, ck[i].source, ck[i].value, ck[i].required, ck[i].meaning);
}

/* frame_run's hooks: the log in blocks of u->every steps. */
typedef struct lr_loop {
    const lr_cli *c;
    opt_set *s;
    lr_out *u;
    dpc_linreg_step_info in;
} lr_loop;

static int lr_on_step(void *ctx, const void *vinfo, size_t t)
{
    lr_out *u = ((lr_loop *)ctx)->u;
    const dpc_linreg_step_info *in = vinfo;
    u->blk[0] += (double)in->clipped, u->blk[1] += (double)in->clipped;
    u->blk[2] += 1, u->blk[3] += in->batch_loss;
    if (t % u->every == 0 || t == u->P->steps) {
        u->lg[u->nlog++] = (log_rec){.t = in->step,
                                     .gamma = in->gamma,
                                     .zeta = in->zeta,
                                     .noise_std = in->noise_std,
                                     .clip_fraction = u->blk[1] / (u->blk[2] * (double)u->P->batch),
                                     .batch_loss = u->blk[3] / u->blk[2],
                                     .excess_risk = in->excess_risk,
                                     .counts = in->dpstat_counts};
        u->blk[1] = u->blk[2] = u->blk[3] = 0;
    }
    return 0;
}

static void lr_items(void *ctx, dpc_ckpt *ck)
{
    const lr_loop *l = ctx;
    lr_ckpt_items(l->c, l->u, ck);
}
static dpc_status lr_put(void *ctx, dpc_ckpt *ck, dpc_error *err)
{
    const lr_loop *l = ctx;
    return lr_ckpt_put(l->u, ck, err);
}
static int lr_get(void *ctx, const dpc_ckpt *ck)
{
    const lr_loop *l = ctx;
    return lr_ckpt_get(l->s, l->u, ck);
}

/* --resume (when given) and the steps, with checkpoints; FRAME_STOPPED when stopped by
 * --stop-after. */
static int steps(const lr_cli *c, opt_set *s, dpc_linreg *lr, lr_out *u)
{
    lr_loop l = {.c = c, .s = s, .u = u};
    frame_loop L = {.run = dpc_linreg_run_ops(lr), .info = &l.in, .unit = "step", .ctx = &l,
                    .on_step = lr_on_step, .ckpt_items = lr_items, .ckpt_put = lr_put,
                    .ckpt_get = lr_get};
    int rc = c->fr.resume ? frame_resume(&c->fr, s, &L) : 0;
    return rc ? rc : frame_run(&c->fr, &L);
}

static int train_and_report(lr_cli *c, opt_set *s, dpc_linreg *lr)
{
    lr_out u;
    memset(&u, 0, sizeof u);
    u.P = dpc_linreg_plan_get(lr);
    const dpc_linreg_plan *P = u.P;
    double c0 = (double)clock() / CLOCKS_PER_SEC;
    banner(c, P);
    u.every = c->log_every ? c->log_every
                           : (P->algo == DPC_LINREG_SSGD ? (P->steps + 999) / 1000 : 1);
    u.cap = P->steps / u.every + 2;
    u.lg = calloc(u.cap, sizeof *u.lg);
    u.w = calloc(c->fr.train->d, sizeof *u.w);
    dpc_error err = {0};
    int rc = !u.lg || !u.w ? opt_fail(s, "out of memory") : 0;
    if (!rc) rc = steps(c, s, lr, &u);
    if (!rc && dpc_linreg_average(lr, u.w, &err)) rc = opt_fail_lib(s, &err);
    if (!rc) {
        u.params_hash = dpc_params_hash(u.w, c->fr.train->d);
        u.clipf = u.blk[0] / ((double)P->steps * (double)P->batch);
        dpc_linreg_evaluate(c->fr.train, c->fr.test, u.w, &u.risk, &u.train_loss, &u.test_loss);
        u.wall = cli_now() - c->fr.t0;
        u.cpu = (double)clock() / CLOCKS_PER_SEC - c0;
        dpc_error bad = {0};
        u.nb = c->baselines ? run_baselines(c, P, u.br, &bad) : 0;
        if (c->fr.report) rc = write_report(c, &u);
        if (c->fr.plot && u.nlog) rc = rc ? rc : plot(c, &u);
        char tl[48] = "no test set"; /* never "test loss nan" */
        if (c->fr.test) snprintf(tl, sizeof tl, "test loss %.6g", u.test_loss);
        printf("%s: excess risk %.6g, train loss %.6g, %s | clipped %.2e | (%.4g, "
               "%.3g)-DP | %.2f s (cpu %.2f s)\n",
               dpc_linreg_algo_name(P->algo), u.risk, u.train_loss, tl, u.clipf,
               P->ledger.epsilon, P->ledger.delta, u.wall, u.cpu);
        for (size_t i = 0; i < u.nb; i++)
            printf("  baseline %-13s excess risk %.6g, train loss %.6g, test loss %.6g, epsilon "
                   "%.4g\n",
                   u.br[i].name, u.br[i].risk, u.br[i].train_loss, u.br[i].test_loss,
                   u.br[i].epsilon);
        if (!rc && bad.status) rc = opt_fail_lib(s, &bad); /* a requested baseline failed */
    }
    free(u.lg);
    free(u.w);
    return rc == FRAME_STOPPED ? 0 : rc;
}

static int run(int argc, char **argv, dpc_linreg_algo algo)
{
    opt_set s;
    int rc = opt_parse(&s, algo == DPC_LINREG_AMBSSGD ? &AMB_CMD : &SSGD_CMD, argc, argv, 1, 0);
    if (rc || s.help) return rc;
    lr_cli c;
    dpc_linreg *lr = NULL;
    if ((rc = read_opts(&c, &s, algo)) || (rc = frame_seed(&c.fr, &s)) ||
        (rc = frame_load(&c.fr, &s)))
        goto done;
    if (c.fr.train->n_classes != 0) {
        rc = opt_fail_at(&s, &L_DATA, "%s needs real-valued targets (task=regression); this set "
                                       "has %zu classes",
                         dpc_linreg_algo_name(algo), c.fr.train->n_classes);
        goto done;
    }
    if ((rc = fill_prior(&c, &s, c.fr.train))) goto done;
    dpc_error err = {0};
    if (s.dry_run) {
        dpc_linreg_plan plan;
        if (dpc_linreg_plan_make(&plan, &c.o, c.fr.train->n, c.fr.train->d, &err))
            rc = opt_fail_lib(&s, &err);
        else dry_run(&c, &plan);
        goto done;
    }
    if (dpc_linreg_new(&lr, c.fr.train, &c.o, &c.fr.rng, &err)) {
        rc = opt_fail_lib(&s, &err);
        goto done;
    }
    rc = train_and_report(&c, &s, lr);
done:
    dpc_linreg_free(lr);
    frame_free(&c.fr);
    return rc;
}

int train_linreg_ambssgd(int argc, char **argv) { return run(argc, argv, DPC_LINREG_AMBSSGD); }
int train_linreg_ssgd(int argc, char **argv) { return run(argc, argv, DPC_LINREG_SSGD); }
