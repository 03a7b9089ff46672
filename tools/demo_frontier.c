/* demo_frontier.c — `dpcorr demo --frontier`: the best Fashion-MNIST configuration found on the
 * training set's holdout (doc/training.md, "The frontier at epsilon 3"), run once at
 * (epsilon, delta) = (3, 1e-5) on the full training set and scored on t10k: ScatterNet features
 * (J = 2, L = 8; cached), a GroupNorm + linear model, BSR correlated noise with cyclic Poisson
 * sampling (amplified banded MF). Writes DIR/frontier.json (test accuracy, epsilon, delta, the
 * configuration and the privacy ledger), DIR/frontier_run.json (the full run report) and
 * DIR/frontier.png. */
#include "demo_frontier.h"
#include "train_run.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

/* The configuration (chosen on the holdout; doc/training.md lists every run tried). */
#define FR_FEATURES "scatter:J=2,L=8"
#define FR_MODEL "cnn:gn27n"
#define FR_MECH DPC_MECH_BSR
#define FR_BANDS 32
#define FR_BATCH 500
#define FR_EPOCHS 20
#define FR_LR 0.25
#define FR_MOM 0.9
#define FR_CLIP 1.0

static void write_json(const char *path, const train_opts *o, const train_result *r)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "dpcorr demo: cannot write %s\n", path);
        return;
    }
    const dpc_ledger *L = &r->ledger;
    const dpc_train_config *c = &o->cfg;
    fprintf(f, "{\n  ");
    cli_json_num(f, "test_accuracy", r->final_acc, 1);
    cli_json_num(f, "epsilon", L->epsilon, 1);
    cli_json_num(f, "delta", L->delta, 1);
    fprintf(f, "\n  \"config\": {");
    cli_json_str(f, "data", o->data, 1);
    cli_json_str(f, "features", o->features, 1);
    cli_json_str(f, "model", r->model_spec, 1);
    cli_json_int(f, "parameters", (long long)r->n_params, 1);
    cli_json_str(f, "mech", dpc_mech_kind_name(o->mech.p.kind), 1);
    cli_json_int(f, "bands", (long long)o->mech.p.bands, 1);
    cli_json_str(f, "sampler", dpc_sampler_kind_name(c->sampler), 1);
    cli_json_int(f, "batch", (long long)c->batch, 1);
    cli_json_int(f, "epochs", (long long)c->epochs, 1);
    cli_json_num(f, "clip", c->clip, 1);
    cli_json_num(f, "lr", c->lr, 1);
    cli_json_num(f, "momentum", c->momentum, 1);
    cli_json_str(f, "schedule", dpc_lr_schedule_name(c->schedule), 1);
    cli_json_int(f, "threads", (long long)c->threads, 1);
    cli_json_int(f, "seed", (long long)o->seed, 0);
    fprintf(f, "},\n  \"normalization\": \"per-example GroupNorm inside the model "
               "(data-independent; no privacy cost)\",\n  \"ledger\": ");
    char lj[4096];
    dpc_ledger_json(L, lj, sizeof lj);
    fputs(lj, f);
    fprintf(f, ",\n  ");
    cli_json_num(f, "wall_time_s", r->wall_s, 1);
    cli_json_num(f, "train_time_s", r->train_s, 1);
    cli_json_num(f, "examples_per_s", r->examples_per_s, 0);
    fprintf(f, "\n}\n");
    if (fclose(f) != 0) fprintf(stderr, "dpcorr demo: write error on %s\n", path);
}

int demo_frontier(const char *out, size_t threads, uint64_t seed, size_t epochs, int quick)
{
    if (mkdir(out, 0755) != 0 && errno != EEXIST)
        return cli_fail("demo", "--out: cannot create directory %s", out);
    /* --quick: 6000 training and 1000 test images, batch 100 (a smoke test of the pipeline) */
    const char *spec = quick ? "fashion-mnist:limit=6000,test-limit=1000" : "fashion-mnist";
    train_opts o;
    train_opts_init(&o);
    char rep[1024], js[1024], png[1024];
    snprintf(rep, sizeof rep, "%s/frontier_run.json", out);
    snprintf(js, sizeof js, "%s/frontier.json", out);
    snprintf(png, sizeof png, "%s/frontier.png", out);
    o.data = spec;
    o.features = FR_FEATURES;
    o.model = FR_MODEL;
    o.mech.p.kind = FR_MECH;
    o.mech.p.bands = FR_BANDS;
    o.mech.have_kind = 1;
    o.cfg.sampler = DPC_SAMPLER_CYCLIC_POISSON;
    o.cfg.epsilon = 3.0;
    o.cfg.delta = 1e-5;
    o.cfg.epochs = epochs ? epochs : (quick ? 2 : FR_EPOCHS);
    o.cfg.batch = quick ? 100 : FR_BATCH;
    o.cfg.clip = FR_CLIP;
    o.cfg.lr = FR_LR;
    o.cfg.momentum = FR_MOM;
    o.cfg.schedule = DPC_LR_COOLDOWN;
    o.cfg.accountant = DPC_ACCOUNTANT_PLD;
    o.cfg.threads = threads;
    o.seed = seed;
    o.report = rep;
    o.label = "frontier";
    printf("dpcorr demo --frontier: Fashion-MNIST%s, ScatterNet (%s) + %s, BSR-%d (amplified "
           "banded MF), epsilon = 3, delta = 1e-5, %zu epochs, batch %zu, %zu threads\n",
           quick ? " (subset, --quick)" : "", FR_FEATURES, FR_MODEL, FR_BANDS, o.cfg.epochs,
           o.cfg.batch, threads);
    fflush(stdout);
    train_result res;
    int rc = train_run(&o, NULL, NULL, &res);
    if (!rc) {
        write_json(js, &o, &res);
        const char *lab = "ScatterNet + linear, BSR";
        int prc = train_plot(png, &res, &lab, 1);
        printf("\ntest accuracy %.4f at epsilon %.4g, delta %.3g (%s); %.1f s, %.0f examples/s\n",
               res.final_acc, res.ledger.epsilon, res.ledger.delta, res.ledger.route, res.wall_s,
               res.examples_per_s);
        printf("wrote %s, %s%s%s\n", js, rep, prc ? "" : ", ", prc ? "" : png);
    }
    train_result_free(&res);
    cli_mech_opts_free(&o.mech);
    return rc;
}
