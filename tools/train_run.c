/* train_run.c — one training run as the CLI performs it; see train_run.h. */
#include "train_run.h"
#include "mpi_run.h"
#include "plot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

void train_opts_init(train_opts *o)
{
    memset(o, 0, sizeof *o);
    cli_mech_opts_init(&o->mech);
    dpc_train_config_init(&o->cfg);
    o->cfg.epsilon = 0; /* must be given (or --noise-multiplier) */
    o->seed = 1;
}

void train_opts_help(FILE *f)
{
    fprintf(f,
            "data and model:\n"
            "  --data SPEC            fashion-mnist | csv:PATH[,opts] | libsvm:PATH[,opts] |\n"
            "                         idx:PATH,labels=PATH | synthetic:linreg|mean|logistic[,opts]\n"
            "                         (see doc/data.md)\n"
            "  --model SPEC           linear | logistic | softmax | mlp:H1[,H2][:tanh|:relu] |\n"
            "                         kan:H1[,H2][:grid=G][:range=LO,HI] (doc/models.md, doc/kan.md)\n"
            "privacy:\n"
            "  --epsilon E            target epsilon (> 0)\n"
            "  --delta D              target delta in (0,1) (default 1e-5)\n"
            "  --noise-multiplier Z   use this noise multiplier instead of calibrating (then the\n"
            "                         run reports the epsilon it spends)\n"
            "  --accountant A         pld (default) | rdp for amplified runs; gdp (exact) is used\n"
            "                         for unamplified ones unless zcdp is asked for\n"
            "sampling and optimization:\n"
            "  --epochs N             passes over the data (default 1)\n"
            "  --batch B              (expected) batch size (default 256)\n"
            "  --sampler S            poisson (default for identity) | fixed (default otherwise) |\n"
            "                         shuffle | cyclic-poisson | balls-in-bins (any mechanism;\n"
            "                         the best valid accounting route is used and reported)\n"
            "  --groups G             cyclic-poisson: number of groups (default: the bands)\n"
            "  --clip C               per-example L2 clip norm (default 1)\n"
            "  --lr L                 learning rate (default 0.1)\n"
            "  --momentum M           heavy-ball momentum in [0,1) (default 0)\n"
            "  --weight-decay W       L2 weight decay (default 0)\n"
            "  --schedule S           constant (default) | cosine | cooldown\n"
            "  --cooldown-fraction F  cooldown: last fraction of steps (default 0.25)\n"
            "  --cooldown-factor F    cooldown: final lr factor (default 0.05)\n"
            "randomness and execution:\n"
            "  --seed S               seeded mode (experiments; default 1); recorded in reports\n"
            "  --secure               key from the OS (getrandom); not reproducible\n"
            "  --threads T            worker threads (default 1); results do not depend on T\n"
            "  --chunk K              examples per chunk (default 32; part of the sum order)\n"
            "  --precision P          double (default) | float32: parameters, activations and\n"
            "                         gradients in float (clipping norms and noise in double)\n"
            "  --checkpoint F         write an atomic checkpoint to F after every epoch\n"
            "  --checkpoint-every K   ... and every K steps\n"
            "  --resume F             continue the run saved in F (same options required)\n"
            "output:\n"
            "  --report F.json        JSON report (configuration, privacy ledger, per epoch\n"
            "                         loss and accuracy, wall time, examples/s)\n"
            "  --plot F.png           test accuracy and training loss per epoch (gnuplot)\n"
            "  --quiet                no progress output\n");
}

int train_opt(train_opts *o, cli_iter *it)
{
    int r = cli_mech_opt(&o->mech, it, "--mech");
    if (r) return r;
    const char *v;
    dpc_train_config *c = &o->cfg;
    dpc_error err = {0};
#define VAL() if (!(v = cli_value(it))) return -1
#define DBL(name, field) if (cli_is(it, name)) { VAL(); return cli_double(it, v, &(field)) ? -1 : 1; }
#define SZ(name, field) if (cli_is(it, name)) { VAL(); return cli_size(it, v, &(field)) ? -1 : 1; }
#define STR(name, field) if (cli_is(it, name)) { VAL(); field = v; return 1; }
    STR("--data", o->data)
    STR("--model", o->model)
    DBL("--epsilon", c->epsilon)
    DBL("--delta", c->delta)
    DBL("--noise-multiplier", c->noise_multiplier)
    SZ("--epochs", c->epochs)
    SZ("--batch", c->batch)
    SZ("--groups", c->groups)
    DBL("--clip", c->clip)
    DBL("--lr", c->lr)
    DBL("--momentum", c->momentum)
    DBL("--weight-decay", c->weight_decay)
    DBL("--cooldown-fraction", c->cooldown_fraction)
    DBL("--cooldown-factor", c->cooldown_factor)
    SZ("--threads", c->threads)
    SZ("--chunk", c->chunk)
    SZ("--checkpoint-every", o->checkpoint_every)
    SZ("--stop-after", o->stop_after)
    STR("--checkpoint", o->checkpoint)
    STR("--resume", o->resume)
    STR("--report", o->report)
    STR("--plot", o->plot)
    STR("--label", o->label)
    if (cli_is(it, "--algo")) { /* the default trainer: dp-ftrl (others dispatched earlier) */
        VAL();
        return strcmp(v, "dp-ftrl") ? (cli_fail(it->cmd, "--algo: unknown '%s'", v), -1) : 1;
    }
    if (cli_is(it, "--seed")) {
        VAL();
        return cli_u64(it, v, &o->seed) ? -1 : 1;
    }
    if (cli_is(it, "--secure")) {
        o->secure = 1;
        return 1;
    }
    if (cli_is(it, "--quiet")) {
        o->quiet = 1;
        return 1;
    }
    if (cli_is(it, "--sampler")) {
        VAL();
        if (dpc_sampler_kind_parse(v, &c->sampler, &err)) {
            cli_fail(it->cmd, "--%s", err.msg);
            return -1;
        }
        return 1;
    }
    if (cli_is(it, "--precision")) {
        VAL();
        if (dpc_precision_parse(v, &c->precision, &err)) {
            cli_fail(it->cmd, "--%s", err.msg);
            return -1;
        }
        return 1;
    }
    if (cli_is(it, "--schedule")) {
        VAL();
        if (dpc_lr_schedule_parse(v, &c->schedule, &err)) {
            cli_fail(it->cmd, "--%s", err.msg);
            return -1;
        }
        return 1;
    }
    if (cli_is(it, "--accountant")) {
        VAL();
        if (dpc_accountant_parse(v, &c->accountant, &err)) {
            cli_fail(it->cmd, "--accountant: %s", err.msg);
            return -1;
        }
        return 1;
    }
#undef VAL
#undef DBL
#undef SZ
#undef STR
    return 0;
}

void train_result_free(train_result *r)
{
    free(r->epochs);
    r->epochs = NULL;
}

/* ---- report ------------------------------------------------------------------------------- */

/* "distributed": ranks, threads per rank, shard sizes, bytes moved per step (all ranks), noise
 * state bytes per rank (doc/distributed.md). */
static void write_dist(FILE *f, const dpc_dist_info *d)
{
    fprintf(f, "{");
    cli_json_int(f, "ranks", (long long)d->ranks, 1);
    cli_json_int(f, "threads_per_rank", (long long)d->threads[0], 1);
    fprintf(f, "\"shard_sizes\": [");
    for (size_t r = 0; r < d->ranks; r++)
        fprintf(f, "%s%zu", r ? ", " : "", d->shard_begin[r + 1] - d->shard_begin[r]);
    fprintf(f, "], ");
    cli_json_num(f, "bytes_per_step", d->bytes_per_step, 1);
    fprintf(f, "\"noise_state_bytes_per_rank\": [");
    for (size_t r = 0; r < d->ranks; r++)
        fprintf(f, "%s%zu", r ? ", " : "", d->noise_state_bytes[r]);
    fprintf(f, "]}");
}

static void write_report(const train_opts *o, const dpc_dataset *train, const dpc_dataset *test,
                         const train_result *r, size_t resumed_from)
{
    FILE *f = fopen(o->report, "w");
    if (!f) {
        fprintf(stderr, "dpcorr train: --report: cannot write %s\n", o->report);
        return;
    }
    const dpc_train_config *c = &o->cfg;
    const dpc_ledger *L = &r->ledger;
    fprintf(f, "{\n  ");
    cli_json_str(f, "dpcorr_version", dpc_version(), 1);
    cli_json_str(f, "label", o->label ? o->label : "", 0);
    fprintf(f, ",\n  \"config\": {");
    cli_json_str(f, "data", o->data ? o->data : "", 1);
    cli_json_str(f, "model", r->model_spec, 1);
    cli_json_int(f, "parameters", (long long)r->n_params, 1);
    cli_json_str(f, "mech", dpc_mech_kind_name(o->mech.p.kind), 1);
    cli_json_num(f, "nu", o->mech.p.nu, 1);
    cli_json_num(f, "lambda", o->mech.p.lambda, 1);
    cli_json_int(f, "bands", (long long)o->mech.p.bands, 1);
    cli_json_str(f, "sampler", dpc_sampler_kind_name(c->sampler), 1);
    cli_json_int(f, "batch", (long long)c->batch, 1);
    cli_json_int(f, "epochs", (long long)c->epochs, 1);
    cli_json_num(f, "clip", c->clip, 1);
    cli_json_num(f, "lr", c->lr, 1);
    cli_json_num(f, "momentum", c->momentum, 1);
    cli_json_num(f, "weight_decay", c->weight_decay, 1);
    cli_json_str(f, "schedule", dpc_lr_schedule_name(c->schedule), 1);
    cli_json_int(f, "threads", (long long)c->threads, 1);
    cli_json_int(f, "chunk", (long long)c->chunk, 1);
    cli_json_str(f, "isa", dpc_isa_name(r->isa), 1);
    cli_json_str(f, "precision", dpc_precision_name(c->precision), 0);
    fprintf(f, "},\n  \"data\": {");
    cli_json_str(f, "source", train->source, 1);
    cli_json_int(f, "n_train", (long long)train->n, 1);
    cli_json_int(f, "n_test", test ? (long long)test->n : 0, 1);
    cli_json_int(f, "features", (long long)train->d, 1);
    cli_json_int(f, "classes", (long long)train->n_classes, 1);
    cli_json_str(f, "preprocessing", train->preprocessing, 1);
    cli_json_bool(f, "data_dependent_preprocessing", train->data_dependent, 0);
    fprintf(f, "},\n  \"memory\": {");
    size_t data_bytes = train->n * (train->d + 1) * sizeof(double) +
                        (test ? test->n * (test->d + 1) * sizeof(double) : 0);
    cli_json_int(f, "data_bytes", (long long)data_bytes, 1);
    cli_json_int(f, "parameter_bytes", (long long)(r->n_params * sizeof(double)), 1);
    cli_json_int(f, "trainer_bytes", (long long)r->trainer_bytes, 0);
    fprintf(f, "},\n  \"privacy\": {");
    cli_json_num(f, "epsilon", L->epsilon, 1);
    cli_json_num(f, "delta", L->delta, 1);
    cli_json_num(f, "epsilon_target", L->epsilon_target, 1);
    cli_json_num(f, "sigma", L->noise_multiplier, 1);
    cli_json_num(f, "noise_std_per_unit_clip", L->noise_std, 1);
    cli_json_num(f, "sensitivity", L->sensitivity, 1);
    cli_json_bool(f, "sensitivity_exact", L->sensitivity_exact, 1);
    cli_json_str(f, "mechanism", L->mechanism, 1);
    cli_json_str(f, "sampler", L->sampler, 1);
    cli_json_str(f, "route", L->route, 1);
    cli_json_str(f, "accountant", L->accountant, 1);
    cli_json_int(f, "steps", (long long)L->steps, 1);
    cli_json_num(f, "q", L->q, 1);
    cli_json_int(f, "rounds", (long long)L->rounds, 1);
    cli_json_str(f, "participation", L->part.kind == DPC_PART_CYCLIC ? "cyclic" : "min-sep", 1);
    cli_json_int(f, "participations", (long long)L->part.k, 1);
    cli_json_int(f, "separation", (long long)L->part.b, 1);
    cli_json_str(f, "seed_mode", dpc_rng_mode_name(L->rng_mode), 1);
    if (L->rng_mode == DPC_RNG_SEEDED) cli_json_int(f, "seed", (long long)L->seed, 1);
    cli_json_str(f, "telemetry", "train_loss and clip fraction are not privatized", 0);
    fprintf(f, "},\n  \"epochs\": [");
    for (size_t i = 0; i < r->nepochs; i++) {
        const epoch_rec *e = &r->epochs[i];
        fprintf(f, "%s\n    {", i ? "," : "");
        cli_json_int(f, "epoch", (long long)e->epoch, 1);
        cli_json_int(f, "step", (long long)e->step, 1);
        cli_json_num(f, "train_loss", e->train_loss, 1);
        cli_json_num(f, "test_loss", e->test_loss, 1);
        cli_json_num(f, "test_accuracy", e->test_acc, 1);
        cli_json_num(f, "epsilon_so_far", e->eps, 1);
        cli_json_num(f, "time_s", e->time_s, 0);
        fprintf(f, "}");
    }
    fprintf(f, "\n  ],\n  \"final\": {");
    cli_json_num(f, "test_accuracy", r->final_acc, 1);
    cli_json_num(f, "test_loss", r->final_loss, 1);
    cli_json_num(f, "wall_time_s", r->wall_s, 1);
    cli_json_num(f, "train_time_s", r->train_s, 1);
    cli_json_num(f, "examples_per_s", r->examples_per_s, 1);
    cli_json_int(f, "steps_done", (long long)r->steps_done, 1);
    cli_json_int(f, "resumed_from_step", (long long)resumed_from, 1);
    char hash[24];
    snprintf(hash, sizeof hash, "%016llx", (unsigned long long)r->params_hash);
    cli_json_str(f, "params_hash", hash, 0);
    fprintf(f, "},\n  \"distributed\": ");
    write_dist(f, &r->dist);
    fprintf(f, "\n}\n");
    if (fclose(f) != 0) fprintf(stderr, "dpcorr train: --report: write error on %s\n", o->report);
}

/* ---- plot --------------------------------------------------------------------------------- */

int train_plot(const char *png, const train_result *runs, const char *const *labels, size_t nruns)
{
    /* png = DIR/NAME.png: plot_render writes DIR/NAME.dat, DIR/NAME.gp and DIR/NAME.png */
    char dir[1024], name[256];
    const char *slash = strrchr(png, '/');
    size_t dl = slash ? (size_t)(slash - png) : 0;
    if (dl >= sizeof dir) return 1;
    memcpy(dir, png, dl);
    dir[dl] = 0;
    if (!slash) snprintf(dir, sizeof dir, ".");
    snprintf(name, sizeof name, "%s", slash ? slash + 1 : png);
    size_t nl = strlen(name);
    if (nl > 4 && !strcmp(name + nl - 4, ".png")) name[nl - 4] = 0;
    plot_series *acc = calloc(nruns, sizeof *acc), *loss = calloc(nruns, sizeof *loss);
    double **xs = calloc(nruns, sizeof *xs), **ya = calloc(nruns, sizeof *ya),
           **yl = calloc(nruns, sizeof *yl);
    int rc = 1;
    if (!acc || !loss || !xs || !ya || !yl) goto out;
    for (size_t k = 0; k < nruns; k++) {
        size_t n = runs[k].nepochs;
        xs[k] = malloc((n + 1) * sizeof **xs);
        ya[k] = malloc((n + 1) * sizeof **ya);
        yl[k] = malloc((n + 1) * sizeof **yl);
        if (!xs[k] || !ya[k] || !yl[k]) goto out;
        for (size_t i = 0; i < n; i++) {
            xs[k][i] = (double)runs[k].epochs[i].epoch;
            ya[k][i] = runs[k].epochs[i].test_acc;
            yl[k][i] = runs[k].epochs[i].train_loss;
        }
        acc[k] = (plot_series){labels[k], xs[k], ya[k], NULL, n, PLOT_LINESPOINTS};
        loss[k] = (plot_series){labels[k], xs[k], yl[k], NULL, n, PLOT_LINESPOINTS};
    }
    plot_panel panels[2] = {{"test accuracy", "epoch", "accuracy", 0, 0, acc, nruns},
                            {"training loss (non-private telemetry)", "epoch", "loss", 0, 0, loss,
                             nruns}};
    char msg[256];
    rc = plot_render(dir, name, panels, 2, msg, sizeof msg);
    if (rc) fprintf(stderr, "dpcorr: warning: %s\n", msg);
out:
    for (size_t k = 0; k < nruns && xs && ya && yl; k++) {
        free(xs[k]);
        free(ya[k]);
        free(yl[k]);
    }
    free(xs);
    free(ya);
    free(yl);
    free(acc);
    free(loss);
    return rc;
}

/* ---- the run ------------------------------------------------------------------------------ */

static void progress(const train_opts *o, int tty, size_t t, size_t n, size_t epoch, size_t E,
                     double loss, double clipf, double eps_final, double t0)
{
    if (o->quiet || !tty) return;
    int width = 24, fill = (int)((double)width * (double)t / (double)n);
    char bar[32];
    for (int i = 0; i < width; i++) bar[i] = i < fill ? '#' : '.';
    bar[width] = 0;
    fprintf(stderr, "\r%s epoch %zu/%zu [%s] step %zu/%zu  loss %.4f  clipped %3.0f%%  "
                    "eps(final) %.3g  %.0fs ",
            o->label ? o->label : "", epoch, E, bar, t, n, loss, 100 * clipf, eps_final,
            now_s() - t0);
    fflush(stderr);
}

int train_run(train_opts *o, dpc_dataset *train_in, dpc_dataset *test_in, train_result *res)
{
    memset(res, 0, sizeof *res);
    double t_start = now_s();
    dpc_error err = {0};
    int rc = 0;
    dpc_rng rng;
    dpc_dataset *train = train_in, *test = test_in;
    dpc_model *model = NULL;
    dpc_trainer *tr = NULL;
    size_t resumed_from = 0;
    const char *cmd = "train";
    if (!o->model) return cli_fail(cmd, "--model: required (e.g. softmax, mlp:256)");
    if (!train && !o->data) return cli_fail(cmd, "--data: required (e.g. fashion-mnist)");
    if (o->cfg.epsilon == 0 && o->cfg.noise_multiplier == 0)
        return cli_fail(cmd, "--epsilon: required (or --noise-multiplier)");
    /* randomness: seeded, secure, or the key stored in the checkpoint we resume (under mpirun:
     * rank 0's, which reads the checkpoint) */
    const dpc_transport *tp = mpi_run_transport();
    if (tp && tp->rank > 0) {
        o->quiet = 1;
        memset(&rng, 0, sizeof rng);
    } else if (o->resume) {
        if (dpc_checkpoint_read_rng(o->resume, &rng, &err))
            return cli_fail(cmd, "--resume: %s", err.msg);
        if (rng.mode == DPC_RNG_SEEDED && !o->secure && rng.seed != o->seed)
            return cli_fail(cmd, "--resume: the checkpoint was written with --seed %llu",
                            (unsigned long long)rng.seed);
    } else if (o->secure) {
        if (dpc_rng_seed_os(&rng, &err)) return cli_fail(cmd, "--secure: %s", err.msg);
    } else {
        dpc_rng_seed(&rng, o->seed);
    }
    if (dpc_transport_bcast(tp, 0, &rng, sizeof rng, &err)) {
        fprintf(stderr, "dpcorr train: %s\n", err.msg);
        return CLI_RUNTIME;
    }
    if (!train) {
        if (dpc_data_load_spec(&train, &test, o->data, &rng, &err)) {
            rc = cli_fail(cmd, "--data: %s", err.msg);
            goto done;
        }
    }
    /* mechanism options: the trainer sets the steps */
    if (!o->mech.p.steps) o->mech.p.steps = 1;
    if ((rc = cli_mech_finish(&o->mech, cmd, "--mech"))) goto done;
    o->cfg.mech = o->mech.p;
    o->cfg.noise_form = o->mech.form;
    o->cfg.workload_explicit = o->mech.workload_set; /* else the library follows the optimizer */
    o->cfg.transport = tp;
    o->cfg.isa = cli_isa();
    dpc_model_config mc;
    if (cli_model_new(&model, &mc, o->model, train->d, train->n_classes, &err)) {
        rc = cli_fail(cmd, "--model: %s", err.msg);
        goto done;
    }
    dpc_model_format_spec(&mc, res->model_spec, sizeof res->model_spec);
    res->n_params = dpc_model_num_params(model);
    res->isa = dpc_model_get_config(model)->isa;
    dpc_status st = dpc_trainer_new(&tr, model, train, test, &o->cfg, &rng, &err);
    if (st) {
        if (st == DPC_E_NOMEM || st == DPC_E_NUMERIC || st == DPC_E_IO) {
            fprintf(stderr, "dpcorr train: %s\n", err.msg);
            rc = CLI_RUNTIME;
        } else {
            rc = cli_fail(cmd, "--%s", err.msg);
        }
        goto done;
    }
    if (o->resume) {
        if (dpc_trainer_resume(tr, o->resume, &err)) {
            rc = cli_fail(cmd, "--resume: %s", err.msg);
            goto done;
        }
        resumed_from = dpc_trainer_steps_done(tr);
    }
    const dpc_ledger *L = dpc_trainer_ledger(tr);
    res->ledger = *L;
    res->trainer_bytes = dpc_trainer_bytes(tr);
    int tty = isatty(2);
    if (!o->quiet) {
        fprintf(stderr,
                "%s%s%s %s | %s sampler, batch %zu, %zu steps | %s %.4g, %s %.4g%s"
                " | (%.4g, %.3g)-DP, %s | %s seed%s%llu | isa %s, %s\n",
                o->label ? "[" : "", o->label ? o->label : "", o->label ? "] " : "", L->mechanism,
                L->sampler, o->cfg.batch, L->steps,
                L->amplified ? "noise multiplier per step" : "noise multiplier (whole run)",
                L->noise_multiplier,
                L->amplified ? "per-participation sensitivity" : "sensitivity (all participations)",
                L->amplified ? L->noise_std / L->noise_multiplier : L->sensitivity,
                L->sensitivity_exact ? "" : " (bound)", L->epsilon,
                L->delta, L->route,
                dpc_rng_mode_name(L->rng_mode), L->rng_mode == DPC_RNG_SEEDED ? " " : "",
                L->rng_mode == DPC_RNG_SEEDED ? (unsigned long long)L->seed : 0ull,
                dpc_isa_name(dpc_trainer_isa(tr)), dpc_precision_name(o->cfg.precision));
        if (resumed_from) fprintf(stderr, "resumed at step %zu\n", resumed_from);
    }
    size_t n = dpc_trainer_steps_total(tr), spe = L->steps_per_epoch ? L->steps_per_epoch : 1;
    size_t E = (n + spe - 1) / spe;
    res->epochs = calloc(E + 1, sizeof *res->epochs);
    if (!res->epochs) {
        rc = cli_fail(cmd, "out of memory");
        goto done;
    }
    double t0 = now_s(), train_time = 0, loss_acc = 0, last_draw = 0;
    size_t examples = 0, loss_n = 0;
    dpc_step_info info;
    while (dpc_trainer_steps_done(tr) < n) {
        if (o->stop_after && dpc_trainer_steps_done(tr) >= o->stop_after) break;
        double ts = now_s();
        if (dpc_trainer_step(tr, &info, &err)) {
            fprintf(stderr, "\ndpcorr train: step %zu: %s\n", dpc_trainer_steps_done(tr), err.msg);
            rc = CLI_RUNTIME;
            goto done;
        }
        train_time += now_s() - ts;
        examples += info.batch;
        if (info.batch) {
            loss_acc += info.loss;
            loss_n++;
        }
        size_t t = dpc_trainer_steps_done(tr);
        if (now_s() - last_draw > 0.25 || t == n) {
            progress(o, tty, t, n, (t - 1) / spe + 1, E, info.loss, info.clip_fraction,
                     L->epsilon, t0);
            last_draw = now_s();
        }
        int epoch_end = t % spe == 0 || t == n;
        if (o->checkpoint && ((o->checkpoint_every && t % o->checkpoint_every == 0) || epoch_end)) {
            if (dpc_trainer_save(tr, o->checkpoint, &err)) {
                fprintf(stderr, "\ndpcorr train: --checkpoint: %s\n", err.msg);
                rc = CLI_RUNTIME;
                goto done;
            }
        }
        if (epoch_end) {
            epoch_rec *e = &res->epochs[res->nepochs++];
            e->epoch = (t + spe - 1) / spe;
            e->step = t;
            e->train_loss = loss_n ? loss_acc / (double)loss_n : NAN;
            loss_acc = 0;
            loss_n = 0;
            e->test_loss = e->test_acc = NAN;
            if (test && dpc_trainer_evaluate(tr, test, &e->test_loss, &e->test_acc, &err)) {
                fprintf(stderr, "\ndpcorr train: evaluation: %s\n", err.msg);
                rc = CLI_RUNTIME;
                goto done;
            }
            if (dpc_trainer_epsilon_at(tr, t, &e->eps, &err)) e->eps = NAN;
            e->time_s = now_s() - t0;
            if (!o->quiet) {
                if (tty) fputc('\n', stderr);
                fprintf(stderr,
                        "%s%s%sepoch %3zu  step %6zu  train_loss %.4f  test_loss %.4f  "
                        "test_acc %.4f  eps_so_far %.3f  %.1fs\n",
                        o->label ? "[" : "", o->label ? o->label : "", o->label ? "] " : "",
                        e->epoch, e->step, e->train_loss, e->test_loss, e->test_acc, e->eps,
                        e->time_s);
            }
        }
    }
    res->steps_done = dpc_trainer_steps_done(tr);
    res->final_acc = res->nepochs ? res->epochs[res->nepochs - 1].test_acc : NAN;
    res->final_loss = res->nepochs ? res->epochs[res->nepochs - 1].test_loss : NAN;
    res->train_s = train_time;
    res->examples_per_s = train_time > 0 ? (double)examples / train_time : 0;
    res->params_hash = dpc_trainer_params_hash(tr);
    res->wall_s = now_s() - t_start;
    dpc_trainer_dist_info(tr, &res->dist);
    if (tp && tp->rank > 0) goto done; /* rank 0 writes the report and the plot */
    if (o->report) write_report(o, train, test, res, resumed_from);
    if (o->plot && res->nepochs) {
        const char *lab = o->label ? o->label : L->mechanism;
        train_plot(o->plot, res, &lab, 1);
    }
done:
    dpc_trainer_free(tr);
    dpc_model_free(model);
    if (train != train_in) dpc_dataset_free(train);
    if (test != test_in) dpc_dataset_free(test);
    return rc;
}
