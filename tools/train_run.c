/* train_run.c — one run of the DP-FTRL trainer as the CLI performs it; see train_run.h. */
#include "train_run.h"
#include "mpi_run.h"
#include "progress.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

const mech_read TRAIN_MECH_READ = {&MO_MECH, NULL, &MO_MECH_MOMENTUM, &MO_MECH_DECAY, 0, 1, 1, 0};

void train_opts_init(train_opts *o)
{
    memset(o, 0, sizeof *o);
    frame_init(&o->fr);
    cli_mech_opts_init(&o->mech);
    dpc_train_config_init(&o->cfg);
    o->cfg.epsilon = 0; /* must be given (or a noise multiplier) */
}

void train_opts_free(train_opts *o)
{
    cli_mech_opts_free(&o->mech);
    frame_free(&o->fr);
}

void train_result_free(train_result *r)
{
    free(r->epochs);
    r->epochs = NULL;
}

typedef struct run_ctx {
    train_opts *o;
    opt_set *s;          /* NULL for programmatic runs */
    train_result *res;
    dpc_model *model;
    dpc_trainer *tr;
    int tty;
    char tag[80];        /* "[label] " */
} run_ctx;

/* ---- features ----------------------------------------------------------------------------- */

void train_default_cache_dir(char *buf, size_t cap)
{
    const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");
    buf[0] = 0;
    if (x && *x) {
        mkdir(x, 0700);
        snprintf(buf, cap, "%s/dpcorr", x);
    } else if (h && *h) {
        char parent[1024];
        snprintf(parent, sizeof parent, "%s/.cache", h);
        mkdir(parent, 0700);
        snprintf(buf, cap, "%s/.cache/dpcorr", h);
    }
}

int train_apply_features(run_frame *f, opt_set *s, const char *spec, const char *cache_opt,
                         size_t threads)
{
    dpc_features_config fc;
    dpc_error err = {0};
    if (dpc_features_parse(&fc, spec, &err)) return opt_fail(s, "--features: %s", err.msg);
    if (fc.kind == DPC_FEATURES_NONE) return 0;
    char dir[1024];
    if (cache_opt && !strcmp(cache_opt, "none")) dir[0] = 0;
    else if (cache_opt) snprintf(dir, sizeof dir, "%s", cache_opt);
    else train_default_cache_dir(dir, sizeof dir);
    /* a cache the user named must be usable: an error now, not a silent run without it (the
     * default cache stays best effort) */
    int rc = cache_opt && dir[0] ? cli_make_out_dir(s, &TR_FEATURE_CACHE, dir) : 0;
    if (rc) return rc;
    dpc_dataset **sets[2] = {&f->train, &f->test}, *out[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
        if (!*sets[k]) continue;
        double t0 = cli_now();
        int hit = 0;
        if (dpc_features_apply(&out[k], *sets[k], &fc, dir[0] ? dir : NULL, threads ? threads : 1,
                               &hit, &err)) {
            dpc_dataset_free(out[0]);
            opt_fail(s, "--features: %s", err.msg);
            return err.status == DPC_E_NOMEM ? CLI_RUNTIME : CLI_USAGE;
        }
        if (!f->quiet)
            fprintf(stderr, "features %s of %zu %s images: %s (%.1f s)%s%s\n", spec,
                    (*sets[k])->n, k ? "test" : "training", hit ? "cached" : "computed",
                    cli_now() - t0, dir[0] ? ", cache " : "", dir);
    }
    frame_free(f); /* the raw images, when the frame loaded them */
    f->train = out[0];
    f->test = out[1];
    f->owned = 1;
    /* the private mean: its release is recorded on the training set; the trainer accounts it */
    if (fc.center > 0 &&
        dpc_features_center_private(f->train, f->test, fc.center, &f->rng, NULL, &err))
        return opt_fail(s, "--features: %s", err.msg);
    return 0;
}

/* ---- preparation: randomness, data, model, mechanism, configuration ---------------------- */

/* The generator: the checkpoint's when resuming (frame_seed checks its mode and seed). */
static int seed_local(run_ctx *x) { return frame_seed(&x->o->fr, x->s); }

/* Under mpirun every rank must have been given rank 0's options (issue 37: --resume or
 * --checkpoint on one rank only hung the job in mismatched collectives for
 * DPCORR_MPI_TIMEOUT, and other differences surfaced later as an unnamed fingerprint
 * mismatch). First thing, before any other collective, every rank receives rank 0's table of
 * options (given, a hash of the value: numbers by value, the rest as typed; its first
 * characters: a fixed size, the same binary on every rank) and compares it with its own; the
 * first option that differs is named
 * with both values, and the agreement brings that rank's error to every rank (rank 0 prints
 * it). Per-rank options: --threads (threads per rank), --data and --test-data (a copy per node
 * may have its own path; the run fingerprint compares the data themselves) and --quiet. */
#define OPT_SHOWN 48
typedef struct {
    uint64_t n, hash[OPT_MAX];
    unsigned char given[OPT_MAX];
    char shown[OPT_MAX][OPT_SHOWN];
} opt_digest;

static int per_rank_option(const char *name)
{
    return !strcmp(name, "--threads") || !strcmp(name, "--data") ||
           !strcmp(name, "--test-data") || !strcmp(name, "--quiet");
}

static void opt_digest_of(const opt_set *s, opt_digest *d)
{
    memset(d, 0, sizeof *d);
    d->n = s->n;
    for (size_t i = 0; i < s->n && i < OPT_MAX; i++) {
        const char *raw = s->val[i].raw ? s->val[i].raw : "";
        const opt_value *v = &s->val[i];
        opt_type ty = s->opts[i]->type;
        /* numbers by value (0.1 and 1e-1 agree), everything else as typed */
        const unsigned char *p = (const unsigned char *)raw;
        size_t len = strlen(raw);
        if ((ty == OPT_DOUBLE || ty == OPT_UINT) && !v->word) {
            p = (const unsigned char *)&v->num;
            len = sizeof v->num;
        } else if (ty == OPT_LIST) {
            p = (const unsigned char *)v->list;
            len = v->nlist * sizeof v->list[0];
        }
        uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
        for (size_t k = 0; k < len; k++) h = (h ^ p[k]) * 0x100000001b3ull;
        d->given[i] = s->given[i];
        d->hash[i] = s->given[i] ? h : 0;
        if (s->given[i])
            snprintf(d->shown[i], OPT_SHOWN, "'%.*s'%s", OPT_SHOWN - 6, raw,
                     strlen(raw) > OPT_SHOWN - 6 ? "..." : "");
    }
}

static dpc_status same_options(const opt_set *s, const dpc_transport *tp, dpc_error *err)
{
    static opt_digest mine_s, root_s; /* 8 KB each: the CLI's, once per run */
    opt_digest *mine = &mine_s, *root = &root_s;
    dpc_status st;
    opt_digest_of(s, mine);
    *root = *mine;
    st = dpc_transport_bcast(tp, 0, root, sizeof *root, err);
    for (size_t i = 0; !st && i < mine->n && i < OPT_MAX; i++) {
        if (root->n != mine->n) {
            st = dpc_error_set(err, DPC_E_STATE, "rank %zu runs another dpcorr than rank 0 (its "
                               "train options differ in number)", tp->rank);
            break;
        }
        const char *name = s->opts[i]->name;
        if (per_rank_option(name) ||
            (mine->given[i] == root->given[i] && mine->hash[i] == root->hash[i]))
            continue;
        st = dpc_error_set(err, DPC_E_STATE, "%s: rank %zu has %s, rank 0 %s (give every rank the same options; "
                             "only --threads, --data, --test-data and --quiet may differ)",
                             name, tp->rank, mine->given[i] ? mine->shown[i] : "(not given)",
                             root->given[i] ? root->shown[i] : "(not given)");
    }
    return st;
}

/* Under mpirun every rank must have been given rank 0's mode and seed: rank 0's generator is
 * used, so another --seed or --secure on a rank would otherwise be silently ignored. */
static int same_mode(const train_opts *o, const opt_set *s, const dpc_transport *tp)
{
    uint64_t mine[2] = {(uint64_t)o->fr.secure, o->fr.secure ? 0 : o->fr.seed};
    uint64_t root[2] = {mine[0], mine[1]};
    dpc_error err = {0};
    dpc_status st = s ? same_options(s, tp, &err) : DPC_OK;
    int bad = st != DPC_OK;
    st = dpc_transport_agree(tp, st, &err); /* every rank fails, with the first bad rank's error */
    if (st) {
        if (bad || tp->rank == 0) fprintf(stderr, "dpcorr train: %s\n", err.msg);
        return bad || st == DPC_E_STATE ? CLI_USAGE : CLI_RUNTIME;
    }
    st = dpc_transport_bcast(tp, 0, root, sizeof root, &err);
    if (!st && root[0] != mine[0])
        st = dpc_error_param(&err, DPC_E_STATE, "secure",
                             "rank %zu runs in %s mode, rank 0 in %s mode (give every rank the "
                             "same --seed or --secure)", tp->rank, mine[0] ? "secure" : "seeded",
                             root[0] ? "secure" : "seeded");
    else if (!st && root[1] != mine[1])
        st = dpc_error_param(&err, DPC_E_STATE, "seed",
                             "rank %zu has seed %llu, rank 0 seed %llu (give every rank the same "
                             "--seed)", tp->rank, (unsigned long long)mine[1],
                             (unsigned long long)root[1]);
    bad = st != DPC_OK;
    st = dpc_transport_agree(tp, st, &err); /* every rank fails, with the first bad rank's error */
    if (!st) return 0;
    if (bad || tp->rank == 0) fprintf(stderr, "dpcorr train: %s\n", err.msg);
    return bad || st == DPC_E_STATE ? CLI_USAGE : CLI_RUNTIME;
}

/* Under mpirun, rank 0's generator (it reads the checkpoint) is every rank's; the other ranks
 * are quiet. */
static int seed_run(run_ctx *x)
{
    train_opts *o = x->o;
    const dpc_transport *tp = mpi_run_transport();
    dpc_error err = {0};
    int rc;
    if (tp && (rc = same_mode(o, x->s, tp))) return rc;
    if (tp && tp->rank > 0) {
        o->fr.quiet = 1;
        memset(&o->fr.rng, 0, sizeof o->fr.rng);
    } else if ((rc = seed_local(x))) {
        return rc;
    }
    if (dpc_transport_bcast(tp, 0, &o->fr.rng, sizeof o->fr.rng, &err)) {
        fprintf(stderr, "dpcorr train: %s\n", err.msg);
        return CLI_RUNTIME;
    }
    o->cfg.transport = tp;
    return 0;
}

static int prepare(run_ctx *x)
{
    train_opts *o = x->o;
    opt_set *s = x->s;
    dpc_error err = {0};
    int rc;
    const dpc_transport *tp = mpi_run_transport();
    if (tp && !o->features) { /* each rank holds its rows (features need the whole set) */
        o->fr.shard.rank = tp->rank;
        o->fr.shard.ranks = tp->size;
    }
    if ((rc = seed_run(x)) || (rc = frame_load(&o->fr, s))) return rc;
    if (o->features &&
        (rc = train_apply_features(&o->fr, s, o->features, o->feature_cache, o->cfg.threads)))
        return rc;
    /* the trainer sets the steps (dpc_train_config_resolve); a dense strategy (file or
     * --coeffs) brings its own n, which the run must match (the library checks) */
    if (!o->mech.p.steps && !o->mech.strategy_path && o->mech.p.kind != DPC_MECH_DENSE)
        o->mech.p.steps = 1;
    if ((rc = cli_mech_load(&o->mech, s, &TRAIN_MECH_READ))) return rc;
    o->cfg.mech = o->mech.p;
    o->cfg.noise_form = o->mech.form;
    o->cfg.workload_explicit = o->mech.workload_set; /* else the library follows the optimizer */
    o->cfg.isa = cli_isa_for(DPC_TUNE_NOISE); /* the noise generators' level; the model's
                                                       (GEMM family) below */
    const dpc_dataset *tr = o->fr.train;
    dpc_model_config mc;
    if (cli_model_new(&x->model, &mc, o->model, tr->d, tr->shape, tr->n_classes, &err))
        return opt_fail(s, "--model: %s", err.msg);
    dpc_model_format_spec(&mc, x->res->model_spec, sizeof x->res->model_spec);
    x->res->n_params = dpc_model_num_params(x->model);
    x->res->isa = dpc_model_get_config(x->model)->isa;
    return 0;
}

/* --dry-run: the configuration the library resolves (sampler, groups, workload, steps). */
static int dry_run(run_ctx *x)
{
    dpc_train_config c;
    dpc_error err = {0};
    if (dpc_train_config_resolve(&x->o->cfg, x->o->fr.train, &c, &err) ||
        dpc_model_precision_check(x->model, c.precision, &err))
        return opt_fail_lib(x->s, &err);
    train_dry_print(x->o, x->res, &c);
    return 0;
}

void train_dry_print(const train_opts *o, const train_result *res, const dpc_train_config *c)
{
    frame_dry(&o->fr);
    opt_dry_str("features", o->features ? o->features : "none");
    if (o->features) {
        char dir[1024];
        if (o->feature_cache) snprintf(dir, sizeof dir, "%s", o->feature_cache);
        else train_default_cache_dir(dir, sizeof dir);
        opt_dry_str("feature_cache", dir);
    }
    opt_dry_str("model", res->model_spec);
    opt_dry_uint("parameters", res->n_params);
    cli_mech_opts m = o->mech;
    m.p = c->mech;
    cli_mech_dry(&m, 0);
    /* every field of the resolved configuration, from the library's table (the mechanism
     * above; the sampler by name; the isa the model resolved) */
    const dpc_field_table *t = dpc_train_config_fields();
    for (size_t i = 0; i < t->count; i++) {
        const dpc_field *f = &t->fields[i];
        if (!strcmp(f->name, "sampler")) opt_dry_str(f->name, dpc_sampler_kind_name(c->sampler));
        else if (!strcmp(f->name, "isa")) opt_dry_str(f->name, dpc_isa_name(res->isa));
        else opt_dry_field(f, c, "");
    }
    opt_dry_uint("max_data_bytes", o->fr.shard.max_bytes);
    frame_dry_ckpt(&o->fr);
    opt_dry_uint("ranks", mpi_run_size());
}

/* ---- the run ------------------------------------------------------------------------------- */

static void banner(const run_ctx *x, size_t resumed_from)
{
    const dpc_ledger *L = &x->res->ledger;
    char rd[96];
    fprintf(stderr,
            "%s%s | %s sampler, batch %zu, %zu steps | %s %.4g, %s %.4g%s | (%.4g, %.3g)-DP, %s "
            "| %s | isa %s, %s\n",
            x->tag, L->mechanism, L->sampler, x->o->cfg.batch, L->steps,
            L->amplified ? "noise multiplier per step" : "noise multiplier (whole run)",
            L->noise_multiplier,
            L->amplified ? "per-participation sensitivity" : "sensitivity (all participations)",
            L->amplified ? L->noise_std / L->noise_multiplier : L->sensitivity,
            L->sensitivity_exact ? "" : " (bound)", L->epsilon, L->delta, L->route,
            frame_rng_desc(L->rng_mode, L->seed, rd, sizeof rd),
            dpc_isa_name(dpc_trainer_isa(x->tr)), dpc_precision_name(x->o->cfg.precision));
    for (size_t k = 0; k < L->n_pre && k < DPC_LEDGER_MAX_PRE; k++)
        fprintf(stderr, "%sincludes a private statistic of the training set released before "
                        "training: Gaussian, noise multiplier %.4g (epsilon %.4g alone)\n",
                x->tag, L->pre_noise_multiplier[k], L->n_pre == 1 ? L->epsilon_pre : NAN);
    if (resumed_from) fprintf(stderr, "%sresumed at step %zu\n", x->tag, resumed_from);
}

static int start(run_ctx *x)
{
    train_opts *o = x->o;
    dpc_error err = {0};
    double t0 = cli_now();
    cli_progress pr; /* the calibration (balls-in-bins, MMCC) can take seconds */
    char what[128];
    snprintf(what, sizeof what, "%sdpcorr train: calibrating", x->tag);
    dpc_status st = dpc_trainer_new_progress(&x->tr, x->model, o->fr.train, o->fr.test, &o->cfg,
                                             &o->fr.rng,
                                             cli_progress_start(&pr, what, "stages", o->fr.quiet),
                                             &err);
    cli_progress_end(&pr);
    x->res->setup_s = cli_now() - t0;
    if (st) return opt_fail_lib(x->s, &err);
    if (o->fr.resume) {
        /* a changed option or input is named (err.field); a bad file is --resume's */
        frame_loop L = {.run = dpc_trainer_run_ops(x->tr)};
        int rc = frame_resume(&o->fr, x->s, &L);
        if (rc) return rc;
        x->res->resumed_from = dpc_trainer_steps_done(x->tr);
    }
    x->res->ledger = *dpc_trainer_ledger(x->tr);
    x->res->trainer_bytes = dpc_trainer_bytes(x->tr);
    if (!o->fr.quiet) banner(x, x->res->resumed_from);
    return 0;
}

static void progress(const run_ctx *x, size_t t, size_t n, size_t epoch, size_t E,
                     const dpc_step_info *info, double t0)
{
    if (x->o->fr.quiet || !x->tty) return;
    int width = 24, fill = (int)((double)width * (double)t / (double)n);
    char bar[32];
    for (int i = 0; i < width; i++) bar[i] = i < fill ? '#' : '.';
    bar[width] = 0;
    fprintf(stderr, "\r%sepoch %zu/%zu [%s] step %zu/%zu  loss %.4f  clipped %3.0f%%  "
                    "eps(final) %.3g  %.0fs ",
            x->tag, epoch, E, bar, t, n, info->loss, 100 * info->clip_fraction,
            x->res->ledger.epsilon, cli_now() - t0);
    fflush(stderr);
}

/* The record of the epoch ending at step t: mean training loss, test metrics, epsilon so far. */
static int end_epoch(run_ctx *x, size_t t, size_t spe, double loss_mean, double t0)
{
    train_result *res = x->res;
    dpc_error err = {0};
    dpc_train_record *e = &res->epochs[res->nepochs++];
    e->epoch = (t + spe - 1) / spe;
    e->step = t;
    e->train_loss = loss_mean;
    e->test_loss = e->test_accuracy = NAN;
    if (x->o->fr.test &&
        dpc_trainer_evaluate(x->tr, x->o->fr.test, &e->test_loss, &e->test_accuracy, &err)) {
        fprintf(stderr, "\ndpcorr train: evaluation: %s\n", err.msg);
        return CLI_RUNTIME;
    }
    double ta = cli_now();
    if (dpc_trainer_epsilon_at(x->tr, t, &e->epsilon, &err)) e->epsilon = NAN;
    res->account_s += cli_now() - ta;
    e->time_s = cli_now() - t0;
    /* kept by the trainer and saved in checkpoints: a resumed report keeps the earlier epochs */
    if (dpc_trainer_record(x->tr, e, &err)) {
        fprintf(stderr, "\ndpcorr train: %s\n", err.msg);
        return CLI_RUNTIME;
    }
    if (!x->o->fr.quiet) {
        char test[96] = "";
        if (x->o->fr.test && x->o->fr.train->n_classes)
            snprintf(test, sizeof test, "  test_loss %.4f  test_acc %.4f", e->test_loss,
                     e->test_accuracy);
        else if (x->o->fr.test)
            snprintf(test, sizeof test, "  test_loss %.6g (regression)", e->test_loss);
        if (x->tty) fputc('\n', stderr);
        fprintf(stderr, "%sepoch %3zu  step %6zu  train_loss %.4f%s  eps_so_far %.3f  %.1fs\n",
                x->tag, e->epoch, e->step, e->train_loss, test, e->epsilon, e->time_s);
    }
    return 0;
}

/* frame_run's hooks: progress, the epoch records (before the checkpoint, which then holds the
 * epoch's record) and the epochs as checkpoint points. */
typedef struct loop_ctx {
    run_ctx *x;
    size_t n, spe, E, examples, loss_n;
    double t0, loss_acc, last_draw;
} loop_ctx;

static int on_step(void *ctx, const void *vinfo, size_t t)
{
    loop_ctx *c = ctx;
    const dpc_step_info *info = vinfo;
    c->examples += info->batch;
    if (info->batch) c->loss_acc += info->loss, c->loss_n++;
    if (cli_now() - c->last_draw > 0.25 || t == c->n) {
        progress(c->x, t, c->n, (t - 1) / c->spe + 1, c->E, info, c->t0);
        c->last_draw = cli_now();
    }
    if (t % c->spe == 0 || t == c->n) {
        if (end_epoch(c->x, t, c->spe, c->loss_n ? c->loss_acc / (double)c->loss_n : NAN, c->t0))
            return CLI_RUNTIME;
        c->loss_acc = 0;
        c->loss_n = 0;
    }
    return 0;
}

static int epoch_due(void *ctx, size_t t)
{
    const loop_ctx *c = ctx;
    return t % c->spe == 0 || t == c->n;
}

static int loop(run_ctx *x)
{
    train_result *res = x->res;
    size_t n = dpc_trainer_steps_total(x->tr);
    size_t spe = res->ledger.steps_per_epoch ? res->ledger.steps_per_epoch : 1;
    size_t E = (n + spe - 1) / spe;
    res->epochs = calloc(E + 1, sizeof *res->epochs);
    if (!res->epochs) return opt_fail(x->s, "out of memory");
    size_t nrec;
    const dpc_train_record *rec = dpc_trainer_records(x->tr, &nrec); /* a resumed run's history */
    for (size_t i = 0; i < nrec && res->nepochs < E + 1; i++) res->epochs[res->nepochs++] = rec[i];
    loop_ctx c = {.x = x, .n = n, .spe = spe, .E = E, .t0 = cli_now()};
    dpc_step_info info;
    frame_loop L = {.run = dpc_trainer_run_ops(x->tr), .info = &info, .ctx = &c,
                    .on_step = on_step, .ckpt_due = epoch_due};
    int rc = frame_run(&x->o->fr, &L);
    res->train_s += L.step_s;
    res->examples_per_s = res->train_s > 0 ? (double)c.examples / res->train_s : 0;
    return rc == FRAME_STOPPED ? 0 : rc; /* a stopped run reports its steps so far */
}

/* ---- report and plot ----------------------------------------------------------------------- */

/* The configuration that ran (resolved by the library), after the CLI's own specs. */
static void report_config(dpc_json_writer *w, const train_opts *o, const train_result *r,
                          const dpc_train_config *c)
{
    dpc_json_obj(w, "config");
    dpc_json_str(w, "data", o->fr.data ? o->fr.data : "");
    dpc_json_str(w, "features", o->features ? o->features : "none");
    dpc_json_str(w, "model", r->model_spec);
    dpc_json_int(w, "parameters", (long long)r->n_params);
    dpc_train_config_report_json(w, c, r->isa);
    dpc_json_end(w);
    frame_report_isa(w);
}

/* "memory" (dpc_train_memory_report_json: rank 0's shard under mpirun), for the peak-RSS
 * comparison of bench_demo; peak_rss_bytes: this process's peak resident memory so far. */
static void report_memory(dpc_json_writer *w, const dpc_dataset *train, const dpc_dataset *test,
                          const train_result *r)
{
    struct rusage ru;
    long long rss = getrusage(RUSAGE_SELF, &ru) == 0 ? (long long)ru.ru_maxrss * 1024 : -1;
    dpc_train_memory_report_json(w, train, test, r->n_params, r->trainer_bytes, rss);
}

static int write_report(const run_ctx *x)
{
    const train_opts *o = x->o;
    const train_result *r = x->res;
    dpc_json_writer w;
    FILE *f = frame_report_open(&o->fr, &w, "dp-ftrl");
    if (!f) return CLI_RUNTIME;
    report_config(&w, o, r, dpc_trainer_config(x->tr));
    dpc_dataset_report_json(&w, o->fr.data, o->fr.train, o->fr.test);
    report_memory(&w, o->fr.train, o->fr.test, r);
    dpc_ledger_report_json(&w, &r->ledger, "train_loss and clip fraction are not privatized");
    dpc_train_records_report_json(&w, r->epochs, r->nepochs);
    dpc_json_obj(&w, "final");
    dpc_json_num(&w, "test_accuracy", r->final_acc);
    dpc_json_num(&w, "test_loss", r->final_loss);
    dpc_json_num(&w, "wall_time_s", r->wall_s);
    dpc_json_num(&w, "train_time_s", r->train_s);
    dpc_json_num(&w, "examples_per_s", r->examples_per_s);
    dpc_train_times_report_json(&w, &r->times, r->setup_s, r->account_s, r->train_s);
    dpc_json_int(&w, "steps_done", (long long)r->steps_done);
    dpc_json_int(&w, "resumed_from_step", (long long)r->resumed_from);
    dpc_json_hash(&w, "params_hash", r->params_hash);
    dpc_json_end(&w);
    dpc_dist_report_json(&w, &r->dist);
    return frame_report_close(&w, f, o->fr.report);
}

static int finish(run_ctx *x)
{
    train_opts *o = x->o;
    train_result *res = x->res;
    dpc_error err = {0};
    res->steps_done = dpc_trainer_steps_done(x->tr);
    res->final_acc = res->final_loss = NAN;
    if (res->nepochs) {
        res->final_acc = res->epochs[res->nepochs - 1].test_accuracy;
        res->final_loss = res->epochs[res->nepochs - 1].test_loss;
    } else if (o->fr.test && res->steps_done == dpc_trainer_steps_total(x->tr) &&
               dpc_trainer_evaluate(x->tr, o->fr.test, &res->final_loss, &res->final_acc, &err)) {
        fprintf(stderr, "dpcorr train: evaluation: %s\n", err.msg); /* a finished checkpoint */
        return CLI_RUNTIME;
    }
    res->params_hash = dpc_trainer_params_hash(x->tr);
    dpc_trainer_times(x->tr, &res->times);
    res->wall_s = cli_now() - o->fr.t0;
    dpc_trainer_dist_info(x->tr, &res->dist);
    if (mpi_run_rank() > 0) return 0; /* rank 0 writes the report and the plot */
    int rc = 0;
    if (o->fr.report) rc = write_report(x);
    if (o->fr.plot && res->nepochs) {
        const char *lab = o->fr.label ? o->fr.label : res->ledger.mechanism;
        int r2 = train_plot(o->fr.plot, res, &lab, 1);
        rc = rc ? rc : r2;
    }
    return rc;
}

int train_prepare(train_opts *o, opt_set *s, train_result *res, dpc_model **model)
{
    memset(res, 0, sizeof *res);
    run_ctx x = {o, s, res, NULL, NULL, 0, ""};
    int rc = prepare(&x);
    if (rc) dpc_model_free(x.model);
    *model = rc ? NULL : x.model;
    return rc;
}

int train_run(train_opts *o, opt_set *s, train_result *res)
{
    memset(res, 0, sizeof *res);
    run_ctx x = {o, s, res, NULL, NULL, isatty(2), ""};
    frame_tag(&o->fr, x.tag, sizeof x.tag);
    int rc = prepare(&x);
    if (!rc && o->dry_run) rc = dry_run(&x);
    else if (!rc && !(rc = start(&x)) && !(rc = loop(&x))) rc = finish(&x);
    dpc_trainer_free(x.tr);
    dpc_model_free(x.model);
    return rc;
}

/* ---- plot ---------------------------------------------------------------------------------- */

int train_plot(const char *png, const train_result *runs, const char *const *labels, size_t nruns)
{
    plot_series *acc = calloc(nruns, sizeof *acc), *loss = calloc(nruns, sizeof *loss);
    double *xs = NULL, *ya = NULL, *yl = NULL;
    size_t total = 0;
    for (size_t k = 0; k < nruns; k++) total += runs[k].nepochs;
    int rc = CLI_RUNTIME;
    xs = malloc((total + 1) * sizeof *xs);
    ya = malloc((total + 1) * sizeof *ya);
    yl = malloc((total + 1) * sizeof *yl);
    if (acc && loss && xs && ya && yl) {
        size_t off = 0;
        for (size_t k = 0; k < nruns; k++) {
            size_t n = runs[k].nepochs;
            for (size_t i = 0; i < n; i++) {
                xs[off + i] = (double)runs[k].epochs[i].epoch;
                ya[off + i] = isnan(runs[k].epochs[i].test_accuracy)
                                  ? runs[k].epochs[i].test_loss
                                  : runs[k].epochs[i].test_accuracy;
                yl[off + i] = runs[k].epochs[i].train_loss;
            }
            acc[k] = (plot_series){labels[k], xs + off, ya + off, NULL, n, PLOT_LINESPOINTS};
            loss[k] = (plot_series){labels[k], xs + off, yl + off, NULL, n, PLOT_LINESPOINTS};
            off += n;
        }
        int regression = nruns && runs[0].nepochs && isnan(runs[0].epochs[0].test_accuracy);
        int tested = 0; /* without a test set the test panel is omitted, not drawn empty */
        for (size_t i = 0; i < total; i++) tested |= !isnan(ya[i]);
        plot_panel panels[2] = {
            {regression ? "test loss" : "test accuracy", "epoch", regression ? "loss" : "accuracy",
             0, 0, acc, nruns},
            {"training loss (non-private telemetry)", "epoch", "loss", 0, 0, loss, nruns}};
        rc = frame_plot(png, panels + !tested, 2 - (size_t)!tested);
    }
    free(xs);
    free(ya);
    free(yl);
    free(acc);
    free(loss);
    return rc;
}
