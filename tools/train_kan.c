/* train_kan.c — `dpcorr train --algo lcgd-projected`: projected DP-lambda-CGD ([KAN] Algorithm 1)
 * for the paper's two-layer KAN (--model kan2:M) or any dpcorr model (--model kan:64, mlp:...),
 * with kappa from the paper's formulas or dpcorr's calibration (both reported), projection onto
 * B(W_0, R*) and iterate-averaged metrics. The library does the work (dpcorr/papers/kan.h); this file
 * parses options, loads data, prints progress and writes the JSON report. */
#include "cli.h"
#include "dpcorr/papers/kan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *CMD = "train --algo lcgd-projected";

typedef struct kopts {
    const char *data, *model, *report, *label;
    size_t iterates, epochs, batch, eval_every, chunk, margin_iters;
    double lr, clip, lambda, noise_multiplier, eps, delta, conf_delta, radius, C_R;
    int lr_theory, clip_theory, radius_theory, secure, quiet, have_nm;
    dpc_calibration calibration;
    dpc_noise_form form;
    uint64_t seed;
} kopts;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: dpcorr train --algo lcgd-projected --data SPEC --model SPEC\n"
            "                    (--epsilon E [--delta D] [--calibration accountant|paper] |\n"
            "                     --noise-multiplier Z)\n"
            "                    [--lambda L] [--iterates T | --epochs N] [--batch B] [--lr ETA]\n"
            "                    [--clip C] [--radius R|theory] [--report F.json]\n\n"
            "Projected DP-lambda-CGD (Wang et al. 2026, Algorithm 1): a fresh uniform batch of B\n"
            "examples per step, per-example clipping, correlated noise kappa (Z_t - lambda Z_t-1)\n"
            "C/B (the core's lambda-CGD mechanism, replayed from the RNG: no extra memory),\n"
            "projection onto the ball B(W_0, R); metrics averaged over the iterates W_0..W_T-1.\n\n"
            "data and model:\n"
            "  --data SPEC            any --data of `dpcorr train`, or\n"
            "                         kan-synth:n=N,d=D[,margin=M][,test-n=N] (inputs uniform in\n"
            "                         the unit ball, labels from a linear teacher, margin M)\n"
            "  --model SPEC           kan2:M[:grid=G][:sigmoid|:tanh]   the paper's two-layer KAN\n"
            "                         (binary data; rows scaled into the unit ball if needed), or\n"
            "                         any model spec (kan:64[:grid=G][:range=LO,HI], mlp:256, ...)\n"
            "privacy (the paper's neighbouring relations: replace-one at lambda = 0, zero-out else):\n"
            "  --epsilon E            target epsilon (> 0)\n"
            "  --delta D              target delta (default 1e-5)\n"
            "  --calibration C        accountant (default): exact binomial participation tail +\n"
            "                         exact sensitivity + exact Gaussian; paper: Thm. D.9 at\n"
            "                         lambda = 0, Thm. F.12 at lambda > 0 (conditions checked);\n"
            "                         the reported epsilon is always the accountant's\n"
            "  --noise-multiplier Z   use this noise multiplier (noise std per row of Z = Z clip\n"
            "                         colnorm(C); the paper's kappa = Z colnorm; 0: non-private)\n"
            "optimization:\n"
            "  --lambda L             noise correlation in [0, 1) (default 0.5)\n"
            "  --iterates T           iterates W_0..W_T-1, i.e. T-1 updates (default 1000)\n"
            "  --epochs N             T = 1 + N floor(n/B) instead\n"
            "  --batch B              batch size (default 100)\n"
            "  --lr ETA|theory        step size (default 0.5; theory: 1/(12 beta), kan2 only)\n"
            "  --clip C|theory        clip norm (default 1; theory: G from c, kan2 only: no clipping)\n"
            "  --radius R|theory      projection radius (default none; theory: C_R (log T +\n"
            "                         sqrt(log(n/delta)))/gamma with gamma estimated, kan2 only)\n"
            "  --C-R X                the constant C_R (default 2)\n"
            "  --margin-iters N       iterations of the NTK-margin solver (default 20000; the\n"
            "                         margin is reported for n <= 2048 or with --radius theory)\n"
            "  --conf-delta D         confidence level of the theory constants (default 0.01)\n"
            "execution and output:\n"
            "  --eval-every K         evaluate L_S every K iterates (default 1: the exact average)\n"
            "  --noise-form F         replay (default) | buffer\n"
            "  --chunk K              examples per model chunk (default 32)\n"
            "  --seed S | --secure    randomness (default seed 1; recorded)\n"
            "  --report F.json        JSON report;  --label NAME;  --quiet\n");
}

static int parse(kopts *o, int argc, char **argv)
{
    cli_iter it;
    cli_iter_init(&it, CMD, argc, argv, 1);
    const char *v;
#define VAL() if (!(v = cli_value(&it))) return CLI_USAGE
#define DBL(name, f) else if (cli_is(&it, name)) { VAL(); if (cli_double(&it, v, &(f))) return CLI_USAGE; }
#define SZ(name, f) else if (cli_is(&it, name)) { VAL(); if (cli_size(&it, v, &(f))) return CLI_USAGE; }
#define STR(name, f) else if (cli_is(&it, name)) { VAL(); f = v; }
    while (cli_next(&it)) {
        if (cli_is(&it, "--help") || cli_is(&it, "-h")) {
            usage(stdout);
            return -1;
        }
        STR("--data", o->data) STR("--model", o->model) STR("--report", o->report)
        STR("--label", o->label) SZ("--iterates", o->iterates) SZ("--epochs", o->epochs)
        SZ("--batch", o->batch) SZ("--eval-every", o->eval_every) SZ("--chunk", o->chunk)
        SZ("--margin-iters", o->margin_iters) DBL("--lambda", o->lambda)
        DBL("--epsilon", o->eps) DBL("--delta", o->delta) DBL("--conf-delta", o->conf_delta)
        DBL("--C-R", o->C_R)
        else if (cli_is(&it, "--algo")) { VAL(); }
        else if (cli_is(&it, "--noise-multiplier")) {
            VAL();
            if (cli_double(&it, v, &o->noise_multiplier)) return CLI_USAGE;
            o->have_nm = 1;
        } else if (cli_is(&it, "--lr")) {
            VAL();
            if (!strcmp(v, "theory")) o->lr_theory = 1;
            else if (cli_double(&it, v, &o->lr)) return CLI_USAGE;
        } else if (cli_is(&it, "--clip")) {
            VAL();
            if (!strcmp(v, "theory")) o->clip_theory = 1;
            else if (cli_double(&it, v, &o->clip)) return CLI_USAGE;
        } else if (cli_is(&it, "--radius")) {
            VAL();
            if (!strcmp(v, "theory")) o->radius_theory = 1;
            else if (cli_double(&it, v, &o->radius)) return CLI_USAGE;
        } else if (cli_is(&it, "--calibration")) {
            VAL();
            dpc_error e = {0};
            if (dpc_calibration_parse(v, &o->calibration, &e))
                return cli_fail(CMD, "--calibration: expected accountant or paper, got '%s'", v);
        } else if (cli_is(&it, "--noise-form")) {
            VAL();
            if (!strcmp(v, "replay")) o->form = DPC_NOISE_REPLAY;
            else if (!strcmp(v, "buffer")) o->form = DPC_NOISE_BUFFER;
            else return cli_fail(CMD, "--noise-form: expected replay or buffer, got '%s'", v);
        } else if (cli_is(&it, "--seed")) {
            VAL();
            if (cli_u64(&it, v, &o->seed)) return CLI_USAGE;
        } else if (cli_is(&it, "--secure")) {
            o->secure = 1;
        } else if (cli_is(&it, "--quiet")) {
            o->quiet = 1;
        } else {
            return cli_fail(CMD, "%s: unknown option (see dpcorr train --algo lcgd-projected --help)",
                            it.name);
        }
    }
#undef VAL
#undef DBL
#undef SZ
#undef STR
    if (!o->data) return cli_fail(CMD, "--data: required (e.g. kan-synth:n=1000,d=5)");
    if (!o->model) return cli_fail(CMD, "--model: required (e.g. kan2:256 or kan:64)");
    if (!o->have_nm && !(o->eps > 0))
        return cli_fail(CMD, "--epsilon: required (> 0), or --noise-multiplier");
    if (o->have_nm && o->eps > 0)
        return cli_fail(CMD, "--noise-multiplier: give either --noise-multiplier or --epsilon");
    if (o->have_nm && !(o->noise_multiplier >= 0))
        return cli_fail(CMD, "--noise-multiplier: must be >= 0");
    if (!(o->lambda >= 0 && o->lambda < 1)) return cli_fail(CMD, "--lambda: must be in [0, 1), got %g", o->lambda);
    if (!(o->delta > 0 && o->delta < 1)) return cli_fail(CMD, "--delta: must be in (0, 1)");
    if (o->batch < 1) return cli_fail(CMD, "--batch: must be >= 1");
    if (o->iterates < 2 && !o->epochs) return cli_fail(CMD, "--iterates: must be >= 2");
    if (o->eval_every < 1) return cli_fail(CMD, "--eval-every: must be >= 1");
    if (!o->lr_theory && !(o->lr > 0)) return cli_fail(CMD, "--lr: must be > 0");
    if (!o->clip_theory && !(o->clip > 0)) return cli_fail(CMD, "--clip: must be > 0");
    if (!o->radius_theory && !(o->radius > 0)) return cli_fail(CMD, "--radius: must be > 0");
    if (!(o->C_R > 0)) return cli_fail(CMD, "--C-R: must be > 0");
    return 0;
}

/* kan-synth:n=N,d=D[,margin=M][,test-n=N][,stream=S] */
static int load_synth(const char *spec, const dpc_rng *rng, dpc_dataset **tr, dpc_dataset **te)
{
    size_t n = 0, d = 0, tn = 0, stream = 0;
    double margin = 0.05;
    char buf[256];
    if (strlen(spec) >= sizeof buf) return cli_fail(CMD, "--data: spec too long");
    strcpy(buf, spec + strlen("kan-synth:"));
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        char *eq = strchr(tok, '=');
        if (!eq) return cli_fail(CMD, "--data: kan-synth: expected key=value, got '%s'", tok);
        *eq = '\0';
        const char *val = eq + 1;
        char *end;
        double x = strtod(val, &end);
        if (end == val || *end || !isfinite(x) || x < 0)
            return cli_fail(CMD, "--data: kan-synth: %s: expected a number >= 0, got '%s'", tok, val);
        if (!strcmp(tok, "n")) n = (size_t)x;
        else if (!strcmp(tok, "d")) d = (size_t)x;
        else if (!strcmp(tok, "test-n")) tn = (size_t)x;
        else if (!strcmp(tok, "stream")) stream = (size_t)x;
        else if (!strcmp(tok, "margin")) margin = x;
        else return cli_fail(CMD, "--data: kan-synth: unknown key '%s' (n, d, margin, test-n, stream)", tok);
    }
    dpc_error err = {0};
    if (dpc_kan_synth(tr, rng, 2 * (uint64_t)stream, n, d, margin, NULL, &err) ||
        (tn && dpc_kan_synth(te, rng, 2 * (uint64_t)stream + 1, tn, d, margin, NULL, &err)))
        return cli_fail(CMD, "--data: %s", err.msg);
    return 0;
}

/* The paper's KAN needs rows in the unit ball: a public bound B > 1 is divided out, an unknown
 * one is enforced by clipping the rows (both data-independent). */
static int to_unit_ball(dpc_dataset *ds, int quiet)
{
    if (!ds) return 0;
    dpc_error err = {0};
    dpc_status st = DPC_OK;
    if (ds->x_norm_bound > 1) {
        if (!quiet) fprintf(stderr, "note: rows scaled by 1/%g into the unit ball\n", ds->x_norm_bound);
        st = dpc_dataset_scale(ds, 1.0 / ds->x_norm_bound, &err);
    } else if (ds->x_norm_bound == 0) {
        if (!quiet) fprintf(stderr, "note: rows clipped to norm 1 (no public bound known)\n");
        st = dpc_dataset_clip_rows(ds, 1.0, &err);
    }
    return st ? cli_fail(CMD, "--data: %s", err.msg) : 0;
}

/* kan2:M[:grid=G][:sigmoid|:tanh] */
static int parse_kan2(const char *spec, size_t d, dpc_kan2_config *c)
{
    c->d = d, c->m = 0, c->grid = 5, c->act = DPC_KAN_SIGMOID;
    char buf[128];
    if (strlen(spec) >= sizeof buf) return cli_fail(CMD, "--model: spec too long");
    strcpy(buf, spec + 5);
    char *tok = strtok(buf, ":"), *end;
    if (!tok) return cli_fail(CMD, "--model: kan2 needs a width, e.g. kan2:256");
    unsigned long long mv = strtoull(tok, &end, 10);
    if (*end || mv < 1) return cli_fail(CMD, "--model: kan2 width '%s' is not an integer >= 1", tok);
    c->m = (size_t)mv;
    while ((tok = strtok(NULL, ":"))) {
        if (!strcmp(tok, "sigmoid")) c->act = DPC_KAN_SIGMOID;
        else if (!strcmp(tok, "tanh")) c->act = DPC_KAN_TANH;
        else if (!strncmp(tok, "grid=", 5)) {
            unsigned long long g = strtoull(tok + 5, &end, 10);
            if (*end || g < 1 || g > 256) return cli_fail(CMD, "--model: grid '%s' must be in 1..256", tok + 5);
            c->grid = (size_t)g;
        } else {
            return cli_fail(CMD, "--model: kan2 option '%s' (expected grid=G, sigmoid or tanh)", tok);
        }
    }
    return 0;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct trace_ctx {
    int tty, quiet;
    size_t T;
    double t0, last;
    double *loss; /* (T) evaluated training loss per iterate (NAN if not evaluated) */
} trace_ctx;

static int trace(void *vc, const dpc_kan_lcgd_step_info *info, double train_loss, double test_loss)
{
    trace_ctx *c = vc;
    (void)test_loss;
    c->loss[info->t] = train_loss;
    double t = now_s();
    if (!c->quiet && c->tty && (t - c->last > 0.25 || info->t + 1 == c->T)) {
        fprintf(stderr, "\r  iterate %zu/%zu  batch loss %.4f  dist %.4g  %.0fs ", info->t + 1, c->T,
                info->batch_loss, info->dist, t - c->t0);
        c->last = t;
    }
    return 0;
}

int train_lcgd_projected(int argc, char **argv)
{
    kopts o = {0};
    o.iterates = 1000, o.batch = 100, o.eval_every = 1, o.chunk = 32, o.margin_iters = 20000;
    o.lr = 0.5, o.clip = 1, o.lambda = 0.5, o.delta = 1e-5, o.conf_delta = 0.01;
    o.radius = INFINITY, o.C_R = 2, o.form = DPC_NOISE_REPLAY, o.seed = 1;
    int rc = parse(&o, argc, argv);
    if (rc) return rc < 0 ? 0 : rc;
    double t_start = now_s();
    dpc_error err = {0};
    dpc_rng rng;
    if (o.secure) {
        if (dpc_rng_seed_os(&rng, &err)) return cli_fail(CMD, "--secure: %s", err.msg);
    } else {
        dpc_rng_seed(&rng, o.seed);
    }
    dpc_dataset *tr = NULL, *te = NULL;
    dpc_kan2 *k = NULL;
    dpc_model *m = NULL;
    dpc_kan_task *task = NULL;
    double *W0 = NULL, *ypm = NULL, *lt = NULL;
    int is_kan2 = !strncmp(o.model, "kan2:", 5);
    if (!strncmp(o.data, "kan-synth:", 10)) rc = load_synth(o.data, &rng, &tr, &te);
    else if (dpc_data_load_spec(&tr, &te, o.data, &rng, &err)) rc = cli_fail(CMD, "--data: %s", err.msg);
    if (rc) goto done;
    if (is_kan2 && ((rc = to_unit_ball(tr, o.quiet)) || (rc = to_unit_ball(te, o.quiet)))) goto done;
    size_t n = tr->n, P;
    if (o.batch > n) {
        rc = cli_fail(CMD, "--batch: %zu is larger than the data (%zu examples)", o.batch, n);
        goto done;
    }
    size_t T = o.epochs ? 1 + o.epochs * (n / o.batch) : o.iterates, steps = T - 1;
    dpc_kan_consts kc = {0};
    dpc_kan_margin mg = {NAN, NAN, 0, 0, 0};
    if (is_kan2) {
        dpc_kan2_config c;
        if ((rc = parse_kan2(o.model, tr->d, &c))) goto done;
        if (dpc_kan2_new(&k, &c, &rng, 0, &err) || dpc_kan2_task_new(&task, k, tr, te, &err)) {
            rc = cli_fail(CMD, "--model: %s", err.msg);
            goto done;
        }
        P = dpc_kan2_num_params(k);
        W0 = malloc(P * sizeof *W0);
        if (!W0 || dpc_kan2_init(k, W0, &rng, 0, &err) || dpc_kan2_consts(k, o.conf_delta, &kc, &err)) {
            rc = cli_fail(CMD, "%s", W0 ? err.msg : "out of memory");
            goto done;
        }
        if (o.lr_theory) o.lr = kc.eta_max;
        if (o.clip_theory) o.clip = kc.G_c;
        ypm = malloc(n * sizeof *ypm);
        if (!ypm) goto oom;
        for (size_t i = 0; i < n; i++) ypm[i] = tr->y[i] == 1.0 ? 1.0 : -1.0;
        /* the margin (for the report and --radius theory): by default only when the n x n kernel
         * is cheap (n <= 2048); --radius theory computes it for any n (columns on the fly) */
        if ((n <= 2048 || o.radius_theory) &&
            dpc_kan2_margin(k, W0, tr->x, ypm, n, o.margin_iters, 1e-3, &mg, &err)) {
            rc = cli_fail(CMD, "margin: %s", err.msg);
            goto done;
        }
        if (o.radius_theory) {
            if (!(mg.gamma_lo > 0)) {
                rc = cli_fail(CMD, "--radius theory: no positive NTK margin certified (gamma_lo = %g)",
                              mg.gamma_lo);
                goto done;
            }
            if (dpc_kan_radius(o.C_R, T, n, o.conf_delta, mg.gamma_lo, &o.radius, &err)) {
                rc = cli_fail(CMD, "--radius: %s", err.msg);
                goto done;
            }
        }
    } else {
        if (o.lr_theory || o.clip_theory || o.radius_theory) {
            rc = cli_fail(CMD, "--lr/--clip/--radius theory: only for the paper's KAN (kan2:M)");
            goto done;
        }
        if (cli_model_new(&m, NULL, o.model, tr->d, tr->n_classes, &err) ||
            dpc_kan_model_task_new(&task, m, tr, te, o.chunk, &err)) {
            rc = cli_fail(CMD, "--model: %s", err.msg);
            goto done;
        }
        P = dpc_model_num_params(m);
        W0 = malloc(P * sizeof *W0);
        if (!W0 || dpc_model_init(m, W0, &rng, 0, &err)) {
            rc = cli_fail(CMD, "%s", W0 ? err.msg : "out of memory");
            goto done;
        }
    }
    /* privacy: the library decides the noise and accounts it */
    dpc_kan_privacy pv = {n, o.batch, steps, o.lambda, o.eps, o.delta, o.noise_multiplier,
                          o.calibration};
    dpc_ledger led;
    double noise_std = 0;
    if (dpc_kan_lcgd_privacy(&pv, &noise_std, &led, &err)) {
        rc = cli_fail(CMD, "%s", err.msg);
        goto done;
    }
    led.rng_mode = rng.mode;
    led.seed = rng.seed;
    dpc_kan_lcgd_config lc;
    dpc_kan_lcgd_config_init(&lc);
    lc.n = n, lc.iterates = T, lc.batch = o.batch, lc.eta = o.lr, lc.clip = o.clip;
    lc.lambda = o.lambda, lc.noise_std = noise_std, lc.radius = o.radius, lc.noise_form = o.form;
    if (dpc_kan_lcgd_config_check(&lc, &err)) {
        rc = cli_fail(CMD, "--%s", err.msg);
        goto done;
    }
    if (!o.quiet) {
        fprintf(stderr, "%s%s%sprojected DP-lambda-CGD | %s (%zu parameters) | n %zu, B %zu, %zu iterates | "
                        "lambda %g, noise multiplier %.6g (%s), C %.4g, eta %.4g, R %.4g | %s seed%s%llu\n",
                o.label ? "[" : "", o.label ? o.label : "", o.label ? "] " : "", o.model, P, n, o.batch, T,
                o.lambda, led.noise_multiplier, led.calibration, o.clip, o.lr,
                o.radius, dpc_rng_mode_name(rng.mode), rng.mode == DPC_RNG_SEEDED ? " " : "",
                rng.mode == DPC_RNG_SEEDED ? (unsigned long long)rng.seed : 0ull);
        fprintf(stderr, "  (%.4g, %g)-DP by the accountant (%s); the paper's closed form: %.4g\n",
                led.epsilon, led.delta, led.route, led.epsilon_paper);
    }
    lt = malloc(T * sizeof *lt);
    if (!lt) goto oom;
    for (size_t t = 0; t < T; t++) lt[t] = NAN;
    trace_ctx tc = {isatty(2), o.quiet, T, now_s(), 0, lt};
    dpc_kan_lcgd_result res;
    double t0 = now_s();
    if (dpc_kan_lcgd_train(&lc, P, &rng, W0, dpc_kan_task_grad, dpc_kan_task_eval, task, o.eval_every,
                           trace, &tc, &res, &err)) {
        fprintf(stderr, "\ndpcorr %s: %s\n", CMD, err.msg);
        rc = CLI_RUNTIME;
        goto done;
    }
    double train_s = now_s() - t0;
    if (!o.quiet && tc.tty) fputc('\n', stderr);
    printf("avg train loss %.6f (err %.4f)  avg test loss %.6f (err %.4f)  last train loss %.6f  "
           "projections %zu  clipped %.4f  max ||W-W0|| %.4g  noise multiplier %.6g  epsilon %.4g "
           "(paper %.4g)  (%.1f s)\n",
           res.avg_train_loss, res.avg_train_err, res.avg_test_loss, res.avg_test_err, res.last_train_loss,
           res.projections, res.examples ? (double)res.clipped / (double)res.examples : 0, res.max_dist,
           led.noise_multiplier, led.epsilon, led.epsilon_paper, train_s);
    if (o.report) {
        FILE *f = fopen(o.report, "w");
        if (!f) {
            rc = cli_fail(CMD, "--report: cannot write %s", o.report);
            goto done;
        }
        fprintf(f, "{\n  ");
        cli_json_str(f, "dpcorr_version", dpc_version(), 1);
        cli_json_str(f, "algorithm", "projected DP-lambda-CGD (Wang et al. 2026, Algorithm 1)", 1);
        cli_json_str(f, "label", o.label ? o.label : "", 0);
        fprintf(f, ",\n  \"config\": {");
        cli_json_str(f, "data", o.data, 1);
        cli_json_str(f, "model", o.model, 1);
        cli_json_int(f, "parameters", (long long)P, 1);
        cli_json_int(f, "n", (long long)n, 1);
        cli_json_int(f, "n_test", te ? (long long)te->n : 0, 1);
        cli_json_int(f, "iterates", (long long)T, 1);
        cli_json_int(f, "batch", (long long)o.batch, 1);
        cli_json_num(f, "eta", o.lr, 1);
        cli_json_num(f, "clip", o.clip, 1);
        cli_json_num(f, "lambda", o.lambda, 1);
        cli_json_num(f, "radius", o.radius, 1);
        cli_json_int(f, "eval_every", (long long)o.eval_every, 1);
        cli_json_str(f, "noise_form", dpc_noise_form_name(o.form), 1);
        cli_json_str(f, "preprocessing", tr->preprocessing, 0);
        fprintf(f, "},\n  \"privacy\": ");
        char lj[4096];
        dpc_ledger_json(&led, lj, sizeof lj);
        fputs(lj, f);
        fprintf(f, ",\n  \"noise\": {");
        cli_json_num(f, "noise_std_per_unit_clip", noise_std, 1);
        cli_json_num(f, "noise_scale_c_priv", res.noise_scale, 1);
        cli_json_int(f, "noisy_steps", (long long)steps, 1);
        cli_json_str(f, "telemetry", "losses, clip counts and distances are not privatized", 0);
        fprintf(f, "},\n  \"metrics\": {");
        cli_json_num(f, "avg_train_loss", res.avg_train_loss, 1);
        cli_json_num(f, "avg_train_err", res.avg_train_err, 1);
        cli_json_num(f, "avg_test_loss", res.avg_test_loss, 1);
        cli_json_num(f, "avg_test_err", res.avg_test_err, 1);
        cli_json_num(f, "last_train_loss", res.last_train_loss, 1);
        cli_json_num(f, "last_train_err", res.last_train_err, 1);
        cli_json_num(f, "last_test_loss", res.last_test_loss, 1);
        cli_json_num(f, "last_test_err", res.last_test_err, 1);
        cli_json_num(f, "init_train_loss", res.init_train_loss, 1);
        cli_json_num(f, "max_dist", res.max_dist, 1);
        cli_json_num(f, "last_dist", res.last_dist, 1);
        cli_json_int(f, "projections", (long long)res.projections, 1);
        cli_json_int(f, "clipped", (long long)res.clipped, 1);
        cli_json_int(f, "examples", (long long)res.examples, 1);
        cli_json_int(f, "evaluated", (long long)res.evaluated, 1);
        cli_json_num(f, "train_time_s", train_s, 1);
        cli_json_num(f, "wall_time_s", now_s() - t_start, 0);
        fprintf(f, "}");
        if (is_kan2) {
            dpc_kan_rate_in ri = {n, k ? dpc_kan2_get_config(k)->m : 0, tr->d, T, o.batch, o.lr, o.lambda,
                                  noise_std, mg.gamma_lo > 0 ? mg.gamma_lo : NAN, o.conf_delta};
            double Ac = NAN, Av = NAN, An = NAN;
            dpc_kan_window w = {NAN, NAN, NAN};
            if (ri.gamma > 0) {
                if (dpc_kan_bound_corr(&ri, &Ac, &err)) Ac = NAN;
                if (dpc_kan_bound_indep(&ri, &Av, &err)) Av = NAN;
                if (dpc_kan_bound_nonpriv(&ri, &An, &err)) An = NAN;
                if (dpc_kan_width_window(&ri, dpc_kan2_basis(k)->p, o.clip, isfinite(o.radius) ? o.radius : 1.0,
                                         &w, &err))
                    w.m_lo = w.m_hi = w.m_edge = NAN;
            }
            fprintf(f, ",\n  \"theory\": {");
            cli_json_num(f, "gamma_lo", mg.gamma_lo, 1);
            cli_json_num(f, "gamma_hi", mg.gamma_hi, 1);
            cli_json_num(f, "G_delta", kc.G_delta, 1);
            cli_json_num(f, "G_c", kc.G_c, 1);
            cli_json_num(f, "beta", kc.beta, 1);
            cli_json_num(f, "eta_max", kc.eta_max, 1);
            cli_json_bool(f, "init_event_ok", kc.event_ok, 1);
            cli_json_num(f, "A_corr_unit", Ac, 1);
            cli_json_num(f, "A_van_unit", Av, 1);
            cli_json_num(f, "A_non_unit", An, 1);
            cli_json_num(f, "width_m_lo", w.m_lo, 1);
            cli_json_num(f, "width_m_hi", w.m_hi, 1);
            cli_json_num(f, "width_m_edge", isfinite(o.radius) ? w.m_edge : NAN, 0);
            fprintf(f, "}");
        }
        fprintf(f, ",\n  \"train_loss_per_iterate\": [");
        for (size_t t = 0; t < T; t++) {
            if (t) fputc(',', f);
            if (isfinite(lt[t])) fprintf(f, "%.8g", lt[t]);
            else fputs("null", f);
        }
        fprintf(f, "]\n}\n");
        if (fclose(f)) fprintf(stderr, "dpcorr %s: --report: write error\n", CMD);
    }
    goto done;
oom:
    rc = cli_fail(CMD, "out of memory");
done:
    free(W0);
    free(ypm);
    free(lt);
    dpc_kan_task_free(task);
    dpc_kan2_free(k);
    dpc_model_free(m);
    dpc_dataset_free(tr);
    dpc_dataset_free(te);
    return rc;
}
