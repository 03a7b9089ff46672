/* train_srgd.c — `dpcorr train --algo dp-srgd`: Accelerated-DP-SRGD (include/dpcorr/papers/srgd.h) on
 * any dataset with a linear or logistic model (any dpc_model with --L/--M), or on the DP-SRGD
 * note's synthetic problems, with per-step instrumentation, a JSON report and a CSV trace. */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct srgd_opts {
    const char *data, *model, *report, *trace;
    int have_problem;
    dpc_srgd_problem_config pc;
    dpc_srgd_config c;
    dpc_srgd_regime regime;
    double cc;
    int literal, secure, quiet, nonprivate;
    uint64_t seed;
    double L, M, R, ybound, row_radius;
    size_t steps, batch;
    double beta, clip;
} srgd_opts;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: dpcorr train --algo dp-srgd [--regime A|B] (--problem P [--n N --dim D ...] |\n"
            "                    --data SPEC [--model linear|logistic]) (--epsilon E | --nonprivate)\n"
            "                    [--delta D] [--c C | --literal] [--seed S | --secure]\n"
            "                    [--report F.json] [--trace F.csv]\n\n"
            "Accelerated-DP-SRGD (Choquette-Choo, Ganesh & Thakurta 2024, Algorithm 1): one pass\n"
            "over fixed disjoint batches, per-example increments eta_t grad f(x_t) - eta_{t-1}\n"
            "grad f(x_{t-1}) clipped to C_Delta, prefix sums privatized by the binary tree\n"
            "(sigma_S = (C_Delta/B) sqrt(1 + ceil(log2 T))/mu, exact GDP mu), accelerated z/y/x\n"
            "updates projected onto the ball B(0, R); output y_T. See doc/srgd.md.\n\n"
            "problem (one of):\n"
            "  --problem P          the note's synthetic problems: p1 (logistic), p2 (least\n"
            "                       squares), quadratic, nesterov (P3, non-private checks)\n"
            "    --n N --dim D      examples (default 65536) and dimension (default 32)\n"
            "    --relevant K       coordinates with signal (default all)\n"
            "    --decades G        spectrum lambda_1/lambda_K = 10^G (default 4)\n"
            "    --w-norm W         |w0| (default 1; > R puts x-dagger outside C)\n"
            "    --label-noise S    p2: label noise half-width (default 0.5)\n"
            "    --design D         sparse (default) | sphere\n"
            "  --data SPEC          any dataset (doc/data.md); its held-out part estimates F\n"
            "    --model SPEC       linear | logistic (labels 0/1; +-1 files are mapped) | any\n"
            "                       dpc_model with --L and --M (default: by the data's task)\n"
            "    --row-radius X     clip every row to norm X first (data-independent)\n"
            "    --y-bound Y        linear: public bound on |y| (for L)\n"
            "constants (default: from the problem or the data's public norm bound):\n"
            "  --L L                per-example Lipschitz constant on C\n"
            "  --M M                per-example smoothness on C\n"
            "  --R R                radius of C = B(0, R) (default 2)\n"
            "schedule:\n"
            "  --regime A|B         A: T = ceil(c n^(1/4)), B = n/T (default); B: B = sqrt n\n"
            "  --c C                Regime A practical constant (default 1)\n"
            "  --literal            Regime A with the paper's c_DP (explains when infeasible)\n"
            "  --steps T --batch B --beta BETA --clip-delta C    override the preset (C: inf\n"
            "                       only with --nonprivate)\n"
            "  --z-step S           z-step scale in (0, 1] (default 0.5, the proof's choice)\n"
            "  --variant V          accel (default) | srg (unaccelerated) | accel-sgd (Thm 5.13)\n"
            "  --noise K            tree (default) | honaker | independent\n"
            "  --permute            public random order of the examples first\n"
            "privacy:\n"
            "  --epsilon E          target epsilon (zero-out adjacency)\n"
            "  --nonprivate         no noise (epsilon = infinity)\n"
            "  --delta D            default 1e-6\n"
            "  --calibration C      accountant (default: exact GDP mu) | paper (mu =\n"
            "                       eps/sqrt(2 ln(2.5/delta)), Lemma 5.6)\n"
            "randomness and output:\n"
            "  --seed S             seeded mode (experiments; default 1); recorded in reports\n"
            "  --secure             key from the OS (getrandom); not reproducible\n"
            "  --eval-every K       F(y_t) every K steps (default 1 for problems, 0 for data)\n"
            "  --report F.json      configuration, ledger, per-step telemetry, final risk\n"
            "  --trace F.csv        per-step telemetry (not privatized)\n"
            "  --quiet              no per-step lines\n");
}

static int parse(srgd_opts *o, int argc, char **argv, int *help)
{
    cli_iter it;
    cli_iter_init(&it, "train", argc, argv, 1);
    dpc_error err = {0};
    const char *v;
    size_t eval_every = (size_t)-1;
#define VAL() if (!(v = cli_value(&it))) return CLI_USAGE
#define DBL(name, field) else if (cli_is(&it, name)) { VAL(); if (cli_double(&it, v, &(field))) return CLI_USAGE; }
#define SZ(name, field) else if (cli_is(&it, name)) { VAL(); if (cli_size(&it, v, &(field))) return CLI_USAGE; }
#define STR(name, field) else if (cli_is(&it, name)) { VAL(); field = v; }
    while (cli_next(&it)) {
        if (cli_is(&it, "--help") || cli_is(&it, "-h")) {
            *help = 1;
            return 0;
        } else if (cli_is(&it, "--algo")) {
            VAL(); /* dp-srgd (dispatched here by train_algos.c) */
        }
        STR("--data", o->data)
        STR("--model", o->model)
        STR("--report", o->report)
        STR("--trace", o->trace)
        SZ("--n", o->pc.n)
        SZ("--dim", o->pc.p)
        SZ("--relevant", o->pc.relevant)
        DBL("--decades", o->pc.decades)
        DBL("--w-norm", o->pc.w_norm)
        DBL("--label-noise", o->pc.noise)
        DBL("--L", o->L)
        DBL("--M", o->M)
        DBL("--R", o->R)
        DBL("--y-bound", o->ybound)
        DBL("--row-radius", o->row_radius)
        DBL("--c", o->cc)
        SZ("--steps", o->steps)
        SZ("--batch", o->batch)
        DBL("--beta", o->beta)
        else if (cli_is(&it, "--clip-delta")) {
            VAL();
            if (!strcmp(v, "inf")) o->clip = INFINITY; /* non-private runs only (checked) */
            else if (cli_double(&it, v, &o->clip)) return CLI_USAGE;
        }
        DBL("--z-step", o->c.z_step)
        DBL("--epsilon", o->c.epsilon)
        DBL("--delta", o->c.delta)
        SZ("--eval-every", eval_every)
        else if (cli_is(&it, "--problem")) {
            VAL();
            if (dpc_srgd_problem_kind_parse(v, &o->pc.kind, &err))
                return cli_fail("train", "--%s", err.msg);
            o->have_problem = 1;
        } else if (cli_is(&it, "--design")) {
            VAL();
            if (!strcmp(v, "sparse")) o->pc.design = DPC_SRGD_DESIGN_SPARSE;
            else if (!strcmp(v, "sphere")) o->pc.design = DPC_SRGD_DESIGN_SPHERE;
            else return cli_fail("train", "--design: expected sparse or sphere, got '%s'", v);
        } else if (cli_is(&it, "--regime")) {
            VAL();
            if (!strcmp(v, "A") || !strcmp(v, "a")) o->regime = DPC_SRGD_REGIME_A;
            else if (!strcmp(v, "B") || !strcmp(v, "b")) o->regime = DPC_SRGD_REGIME_B;
            else return cli_fail("train", "--regime: expected A or B, got '%s'", v);
        } else if (cli_is(&it, "--variant")) {
            VAL();
            if (dpc_srgd_variant_parse(v, &o->c.variant, &err))
                return cli_fail("train", "--%s", err.msg);
        } else if (cli_is(&it, "--noise")) {
            VAL();
            if (dpc_srgd_noise_parse(v, &o->c.noise, &err)) return cli_fail("train", "--%s", err.msg);
        } else if (cli_is(&it, "--calibration")) {
            VAL();
            if (dpc_calibration_parse(v, &o->c.calibration, &err))
                return cli_fail("train", "--calibration: expected accountant or paper, got '%s'", v);
        } else if (cli_is(&it, "--seed")) {
            VAL();
            if (cli_u64(&it, v, &o->seed)) return CLI_USAGE;
        } else if (cli_is(&it, "--literal")) {
            o->literal = 1;
        } else if (cli_is(&it, "--nonprivate")) {
            o->nonprivate = 1;
        } else if (cli_is(&it, "--permute")) {
            o->c.permute = 1;
        } else if (cli_is(&it, "--secure")) {
            o->secure = 1;
        } else if (cli_is(&it, "--quiet")) {
            o->quiet = 1;
        } else {
            return cli_fail("train", "%s: unknown option (see dpcorr train --algo dp-srgd --help)",
                            it.name);
        }
    }
#undef VAL
#undef DBL
#undef SZ
#undef STR
    if (o->have_problem == !!o->data)
        return cli_fail("train", "--problem / --data: give exactly one (see --help)");
    if (o->have_problem && o->model)
        return cli_fail("train", "--model: the synthetic problem fixes the loss (p1: logistic, "
                                 "others: least squares)");
    if (o->nonprivate) o->c.epsilon = INFINITY;
    else if (o->c.epsilon == 0)
        return cli_fail("train", "--epsilon: required (or --nonprivate)");
    o->c.eval_every = eval_every != (size_t)-1 ? eval_every : o->have_problem ? 1 : 0;
    return 0;
}

/* L and M for a dataset from its public row-norm bound (logistic / linear models). */
static int data_constants(srgd_opts *o, const dpc_dataset *ds, const dpc_model *m)
{
    const dpc_model_config *mc = dpc_model_get_config(m);
    if (o->L > 0 && o->M > 0) return 0;
    double X = ds->x_norm_bound;
    if (!(X > 0))
        return cli_fail("train", "--L/--M: the data has no public row-norm bound; give --L and "
                                 "--M, or --row-radius X");
    double Xb2 = X * X + (mc->bias ? 1.0 : 0.0);
    if (mc->kind == DPC_MODEL_LOGISTIC) {
        if (!(o->L > 0)) o->L = sqrt(Xb2); /* |(sigmoid(z) - y) (x, 1)| */
        if (!(o->M > 0)) o->M = Xb2 / 4.0;
    } else if (mc->kind == DPC_MODEL_LINEAR) {
        if (!(o->ybound > 0))
            return cli_fail("train", "--y-bound: linear regression needs a public bound on |y| "
                                     "for L (or give --L)");
        if (!(o->L > 0)) o->L = sqrt(Xb2) * (sqrt(Xb2) * o->R + o->ybound);
        if (!(o->M > 0)) o->M = Xb2;
    } else {
        return cli_fail("train", "--L/--M: required for model '%s'", o->model);
    }
    return 0;
}

static void write_report(const srgd_opts *o, const dpc_srgd *s, const dpc_dataset *ds,
                         const dpc_srgd_step_info *tr, size_t T, const char *model_spec,
                         double final_risk, double excess, double acc, double secs, double cpu)
{
    FILE *f = fopen(o->report, "w");
    if (!f) {
        fprintf(stderr, "dpcorr train: --report: cannot write %s\n", o->report);
        return;
    }
    const dpc_srgd_plan *L = dpc_srgd_get_plan(s);
    const dpc_ledger *G = dpc_srgd_get_ledger(s);
    const dpc_srgd_config *c = dpc_srgd_get_config(s);
    fprintf(f, "{\n  ");
    cli_json_str(f, "dpcorr_version", dpc_version(), 1);
    cli_json_str(f, "algo", "dp-srgd", 0);
    fprintf(f, ",\n  \"config\": {");
    cli_json_str(f, "data", ds->source, 1);
    cli_json_str(f, "model", model_spec, 1);
    cli_json_str(f, "isa", dpc_isa_name(cli_isa()), 1); /* the model's and its noise's level */
    cli_json_str(f, "regime", o->regime == DPC_SRGD_REGIME_B ? "B" : "A", 1);
    cli_json_num(f, "c", o->literal ? dpc_srgd_c_dp((double)ds->n, c->delta) : o->cc, 1);
    cli_json_bool(f, "literal", o->literal, 1);
    cli_json_str(f, "variant", dpc_srgd_variant_name(c->variant), 1);
    cli_json_str(f, "noise", dpc_srgd_noise_name(c->noise), 1);
    cli_json_num(f, "L", c->L, 1);
    cli_json_num(f, "M", c->M, 1);
    cli_json_num(f, "R", c->R, 1);
    cli_json_int(f, "steps", (long long)L->steps, 1);
    cli_json_int(f, "batch", (long long)L->batch, 1);
    cli_json_num(f, "beta", L->beta, 1);
    cli_json_num(f, "clip_delta", L->clip, 1);
    cli_json_num(f, "z_step", L->z_step, 1);
    cli_json_bool(f, "permute", c->permute, 0);
    fprintf(f, "},\n  \"privacy\": ");
    char lj[4096];
    dpc_ledger_json(G, lj, sizeof lj);
    fputs(lj, f);
    fprintf(f, ",\n  \"privacy_paper\": {");
    cli_json_bool(f, "private", L->private_run, 1);
    cli_json_num(f, "mu", L->mu, 1);
    cli_json_num(f, "mu_effective", L->mu_effective, 1);
    cli_json_num(f, "delta_achieved", L->delta_achieved, 1);
    cli_json_num(f, "sigma_S", L->sigma, 1);
    cli_json_num(f, "sensitivity_formula", L->sens_formula, 1);
    cli_json_num(f, "sensitivity_mechanism", L->sens_mechanism, 1);
    cli_json_str(f, "telemetry", "norms, clip rates, losses and risks are not privatized", 0);
    fprintf(f, "},\n  \"steps\": [");
    for (size_t t = 0; t < T; t++) {
        const dpc_srgd_step_info *i = &tr[t];
        fprintf(f, "%s\n    {", t ? "," : "");
        cli_json_int(f, "t", (long long)i->step, 1);
        cli_json_num(f, "max_delta_norm", i->max_norm, 1);
        cli_json_num(f, "clip_fraction", i->clip_fraction, 1);
        cli_json_num(f, "noise_norm", i->noise_norm, 1);
        cli_json_num(f, "b_norm", i->b_norm, 1);
        cli_json_num(f, "grad_norm", i->grad_norm, 1);
        cli_json_num(f, "srg_error", i->srg_error, 1);
        cli_json_num(f, "batch_loss", i->loss, 1);
        cli_json_num(f, "risk", i->risk, 0);
        fprintf(f, "}");
    }
    fprintf(f, "\n  ],\n  \"final\": {");
    cli_json_int(f, "rounds", (long long)T, 1);
    cli_json_int(f, "grad_evals", T ? (long long)tr[T - 1].grad_evals : 0, 1);
    cli_json_int(f, "n_used", (long long)L->n_used, 1);
    cli_json_num(f, "risk", final_risk, 1);
    cli_json_num(f, "excess_risk", excess, 1);
    cli_json_num(f, "test_accuracy", acc, 1);
    cli_json_num(f, "wall_time_s", secs, 1);
    cli_json_num(f, "cpu_time_s", cpu, 0);
    fprintf(f, "}\n}\n");
    if (fclose(f) != 0) fprintf(stderr, "dpcorr train: --report: write error on %s\n", o->report);
}

static void write_trace(const char *path, const dpc_srgd_step_info *tr, size_t T)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "dpcorr train: --trace: cannot write %s\n", path);
        return;
    }
    fprintf(f, "t,eta,max_delta_norm,clip_fraction,noise_norm,b_norm,grad_norm,srg_error,"
               "grad_F_norm,batch_loss,risk,grad_evals\n");
    for (size_t t = 0; t < T; t++)
        fprintf(f, "%zu,%.17g,%.10g,%.6g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%zu\n",
                tr[t].step, tr[t].eta, tr[t].max_norm, tr[t].clip_fraction, tr[t].noise_norm,
                tr[t].b_norm, tr[t].grad_norm, tr[t].srg_error, tr[t].grad_F_norm, tr[t].loss,
                tr[t].risk, tr[t].grad_evals);
    fclose(f);
}

int train_srgd(int argc, char **argv)
{
    srgd_opts o;
    memset(&o, 0, sizeof o);
    dpc_srgd_problem_config_init(&o.pc);
    o.pc.n = 65536;
    o.pc.p = 32;
    dpc_srgd_config_init(&o.c);
    o.cc = 1;
    o.seed = 1;
    int help = 0, rc = parse(&o, argc, argv, &help);
    if (help) {
        usage(stdout);
        return 0;
    }
    if (rc) return rc;
    double t0 = (double)clock(), w0;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    w0 = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
    dpc_error err = {0};
    dpc_rng rng;
    if (o.secure) {
        if (dpc_rng_seed_os(&rng, &err)) return cli_fail("train", "--secure: %s", err.msg);
    } else {
        dpc_rng_seed(&rng, o.seed);
    }
    dpc_srgd_problem *pr = NULL;
    dpc_dataset *train = NULL, *test = NULL;
    dpc_model *model = NULL;
    dpc_srgd *s = NULL;
    dpc_srgd_step_info *tr = NULL;
    const dpc_dataset *ds;
    char spec[DPC_MODEL_SPEC_LEN];
    if (o.R > 0) o.pc.R = o.R;
    else o.R = o.pc.R;
    if (o.have_problem) {
        if (dpc_srgd_problem_new(&pr, &o.pc, &rng, 0, &err)) {
            rc = cli_fail("train", "--problem: %s", err.msg);
            goto done;
        }
        ds = dpc_srgd_problem_data(pr);
        snprintf(spec, sizeof spec, "%s", dpc_srgd_problem_model_spec(pr));
    } else {
        if (dpc_data_load_spec(&train, &test, o.data, &rng, &err)) {
            rc = cli_fail("train", "--data: %s", err.msg);
            goto done;
        }
        if (o.row_radius > 0 && dpc_dataset_clip_rows(train, o.row_radius, &err)) {
            rc = cli_fail("train", "--row-radius: %s", err.msg);
            goto done;
        }
        if (o.row_radius > 0 && test && dpc_dataset_clip_rows(test, o.row_radius, &err)) {
            rc = cli_fail("train", "--row-radius: %s", err.msg);
            goto done;
        }
        ds = train;
        snprintf(spec, sizeof spec, "%s",
                 o.model ? o.model : train->n_classes == 2 ? "logistic" : "linear");
    }
    if (cli_model_new(&model, NULL, spec, ds->d, ds->n_classes, &err)) {
        rc = cli_fail("train", "--model: %s", err.msg);
        goto done;
    }
    /* constants, preset, overrides */
    o.c.R = o.R;
    if (pr) dpc_srgd_problem_constants(pr, &o.c.L, &o.c.M, NULL);
    if (o.L > 0) o.c.L = o.L;
    if (o.M > 0) o.c.M = o.M;
    if (!pr) {
        if ((rc = data_constants(&o, ds, model))) goto done;
        o.c.L = o.L;
        o.c.M = o.M;
    }
    size_t P = dpc_model_num_params(model);
    if (dpc_srgd_preset(&o.c, o.regime, o.cc, o.literal, ds->n, P, &err)) {
        rc = cli_fail("train", "--regime: %s", err.msg);
        goto done;
    }
    if (o.steps) o.c.steps = o.steps;
    if (o.batch) o.c.batch = o.batch;
    if (o.beta > 0) o.c.beta = o.beta;
    if (o.clip > 0) o.c.clip = o.clip;
    if (o.c.eval_every) {
        if (pr) {
            o.c.risk = dpc_srgd_problem_risk;
            o.c.risk_ctx = pr;
        } else if (test) {
            o.c.heldout = test;
        } else {
            o.c.eval_every = 0;
        }
    }
    if (dpc_srgd_new(&s, model, ds, &o.c, &rng, &err)) {
        rc = cli_fail("train", "%s", err.msg);
        goto done;
    }
    const dpc_srgd_plan *L = dpc_srgd_get_plan(s);
    const dpc_ledger *G = dpc_srgd_get_ledger(s);
    fprintf(stderr,
            "dp-srgd %s: regime %s (%s %.4g), n = %zu, T = %zu rounds, B = %zu, beta = %.4g, "
            "C_Delta = %.4g, z-step %.3g\n",
            dpc_srgd_variant_name(o.c.variant), o.regime == DPC_SRGD_REGIME_B ? "B" : "A",
            o.regime == DPC_SRGD_REGIME_B ? "paper constants, c_M =" : o.literal ? "literal c_DP ="
                                                                                  : "practical c =",
            o.regime == DPC_SRGD_REGIME_B ? o.c.M * o.c.R / o.c.L
            : o.literal                   ? dpc_srgd_c_dp((double)ds->n, o.c.delta)
                                          : o.cc,
            ds->n, L->steps, L->batch, L->beta, L->clip, L->z_step);
    if (L->private_run)
        fprintf(stderr,
                "privacy: %s, sigma_S = %.4g, z = %.4g, mu = %.4g (%s) -> (%.4g, %.3g)-DP, "
                "zero-out | %s seed%s%llu\n",
                G->mechanism, L->sigma, G->noise_multiplier, L->mu, G->calibration, G->epsilon,
                G->delta, dpc_rng_mode_name(G->rng_mode), G->rng_mode == DPC_RNG_SEEDED ? " " : "",
                G->rng_mode == DPC_RNG_SEEDED ? (unsigned long long)G->seed : 0ull);
    else
        fprintf(stderr, "privacy: none (--nonprivate) | %s seed %llu\n",
                dpc_rng_mode_name(G->rng_mode), (unsigned long long)G->seed);
    if (o.regime == DPC_SRGD_REGIME_A && o.literal)
        fprintf(stderr, "note: the literal constants are feasible here (B >= 1) but beta R^2/T^2 "
                        "= %.3g with C_Delta = c_DP L = %.4g\n",
                L->beta * o.c.R * o.c.R / ((double)L->steps * (double)L->steps), L->clip);
    tr = calloc(L->steps, sizeof *tr);
    if (!tr) {
        rc = cli_fail("train", "out of memory");
        goto done;
    }
    if (!o.quiet)
        fprintf(stderr, "    t   max|Delta_t(d)|  clipped   |xi_t|      |grad^|     F(y_t+1)\n");
    for (size_t t = 0; t < L->steps; t++) {
        if (dpc_srgd_step(s, &tr[t], &err)) {
            fprintf(stderr, "dpcorr train: round %zu: %s\n", t, err.msg);
            rc = CLI_RUNTIME;
            goto done;
        }
        if (!o.quiet)
            fprintf(stderr, "%5zu   %-14.5g  %6.1f%%   %-10.4g  %-10.4g  %.6g\n", t,
                    tr[t].max_norm, 100 * tr[t].clip_fraction, tr[t].noise_norm,
                    tr[t].grad_norm, tr[t].risk);
    }
    double risk = NAN, excess = NAN, acc = NAN;
    const double *y = dpc_srgd_output(s);
    if (pr) {
        if (dpc_srgd_problem_risk(pr, y, P, &risk, NULL, &err) ||
            dpc_srgd_problem_excess(pr, y, &excess, &err)) {
            rc = cli_fail("train", "%s", err.msg);
            goto done;
        }
    } else if (test) {
        if (dpc_model_evaluate(model, y, test->x, test->y, test->n, &risk, &acc, NULL, &err)) {
            fprintf(stderr, "dpcorr train: evaluation: %s\n", err.msg);
            rc = CLI_RUNTIME;
            goto done;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double secs = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec - w0;
    double cpu = ((double)clock() - t0) / CLOCKS_PER_SEC;
    size_t T = L->steps;
    printf("dp-srgd: %zu rounds, %zu gradient evaluations (2n - B = %zu), ", T,
           tr[T - 1].grad_evals, L->grad_evals_planned);
    if (pr) printf("excess risk %.6g (F(y_T) = %.8g, F* = %.8g)", excess, risk,
                   dpc_srgd_problem_fstar(pr));
    else if (test) printf("held-out loss %.6g, accuracy %.4f", risk, acc);
    else printf("no held-out set");
    if (L->private_run) printf(", (epsilon %.4g, delta %.3g)", G->epsilon, G->delta);
    else printf(", non-private");
    printf(", %.2f s (cpu %.2f s)\n", secs, cpu);
    if (o.report) write_report(&o, s, ds, tr, T, spec, risk, excess, acc, secs, cpu);
    if (o.trace) write_trace(o.trace, tr, T);
done:
    free(tr);
    dpc_srgd_free(s);
    dpc_model_free(model);
    dpc_srgd_problem_free(pr);
    dpc_dataset_free(train);
    dpc_dataset_free(test);
    return rc;
}
