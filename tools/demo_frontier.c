/* demo_frontier.c — `dpcorr demo --frontier`: the best Fashion-MNIST configuration found on the
 * training set's holdout (doc/training.md, "The frontier at epsilon 3"), run once at
 * (epsilon, delta) = (3, 1e-5) on the full training set and scored on t10k: ScatterNet features
 * (J = 2, L = 8; cached), per-example GroupNorm and private centering (its Gaussian release
 * composed into the ledger), a linear model, BSR correlated noise with cyclic Poisson sampling
 * (amplified banded MF). Writes DIR/frontier.json (test accuracy, epsilon, delta, the
 * configuration and the privacy ledger), DIR/frontier_run.json (the full run report) and
 * DIR/frontier.png. */
#include "demo_frontier.h"
#include "train_run.h"

#include <string.h>

/* The configuration is the library's (dpc_train_demo_frontier); the report reads the features
 * back from the spec the run used (dpc_features_parse), not from copies. */

static int write_json(const char *path, const train_opts *o, const train_result *r)
{
    dpc_features_config fc;
    dpc_error err = {0};
    if (dpc_features_parse(&fc, o->features, &err)) {
        fprintf(stderr, "dpcorr demo: %s\n", err.msg);
        return CLI_RUNTIME;
    }
    dpc_io_out *h = NULL; /* a temporary renamed into place: a failed write keeps the old */
    FILE *f = cli_out_open(&h, "demo", path);
    if (!f) return CLI_RUNTIME;
    const dpc_ledger *L = &r->ledger;
    const dpc_train_config *c = &o->cfg;
    dpc_json_writer w;
    dpc_json_begin(&w, f);
    dpc_json_num(&w, "test_accuracy", r->final_acc);
    dpc_json_num(&w, "epsilon", L->epsilon);
    dpc_json_num(&w, "delta", L->delta);
    dpc_json_obj(&w, "config");
    dpc_json_str(&w, "data", o->fr.data);
    dpc_json_str(&w, "features", o->features);
    dpc_json_str(&w, "model", r->model_spec);
    dpc_json_int(&w, "parameters", (long long)r->n_params);
    dpc_json_str(&w, "mech", dpc_mech_kind_name(o->mech.p.kind));
    dpc_json_int(&w, "bands", (long long)o->mech.p.bands);
    dpc_json_str(&w, "sampler", dpc_sampler_kind_name(c->sampler));
    dpc_json_int(&w, "batch", (long long)c->batch);
    dpc_json_int(&w, "epochs", (long long)c->epochs);
    dpc_json_num(&w, "clip", c->clip);
    dpc_json_num(&w, "lr", c->lr);
    dpc_json_num(&w, "momentum", c->momentum);
    dpc_json_str(&w, "schedule", dpc_lr_schedule_name(c->schedule));
    dpc_json_int(&w, "threads", (long long)c->threads);
    dpc_json_int(&w, "seed", (long long)o->fr.seed);
    dpc_json_str(&w, "rng_mode", "seeded (reproducible; not private against anyone who knows the seed)");
    dpc_json_end(&w);
    dpc_features_normalization_report_json(&w, &fc, L);
    char lj[4096];
    dpc_ledger_json(L, lj, sizeof lj);
    dpc_json_raw(&w, "ledger", lj);
    dpc_json_num(&w, "wall_time_s", r->wall_s);
    dpc_json_num(&w, "train_time_s", r->train_s);
    dpc_json_num(&w, "examples_per_s", r->examples_per_s);
    dpc_json_finish(&w);
    return cli_out_commit(h, "demo");
}

int demo_frontier(const char *out, size_t threads, uint64_t seed, size_t epochs, int quick,
                  int dry_run)
{
    /* --quick: 6000 training and 1000 test images, batch 100 (a smoke test of the pipeline) */
    const char *spec = quick ? "fashion-mnist:limit=6000,test-limit=1000" : "fashion-mnist";
    train_opts o;
    train_opts_init(&o);
    char rep[1024], js[1024], png[1024];
    snprintf(rep, sizeof rep, "%s/frontier_run.json", out);
    snprintf(js, sizeof js, "%s/frontier.json", out);
    snprintf(png, sizeof png, "%s/frontier.png", out);
    dpc_train_demo fr;
    dpc_train_demo_frontier(&fr);
    o.fr.data = spec;
    o.features = fr.features;
    o.model = fr.model;
    o.cfg = fr.cfg;
    o.mech.p.kind = fr.cfg.mech.kind;
    o.mech.p.bands = fr.cfg.mech.bands;
    o.mech.have_kind = 1;
    o.cfg.epochs = epochs ? epochs : (quick ? 2 : fr.cfg.epochs);
    o.cfg.batch = quick ? 100 : fr.cfg.batch;
    o.cfg.threads = threads;
    frame_use_seed(&o.fr, seed); /* warned once by cmd_demo */
    o.fr.warn_seed = 0;
    o.fr.report = rep;
    o.fr.label = fr.label;
    o.dry_run = dry_run;
    if (dry_run) {
        opt_dry_uint("frontier", 1);
        train_result res;
        int rc = train_run(&o, NULL, &res);
        train_result_free(&res);
        train_opts_free(&o);
        return rc;
    }
    printf("dpcorr demo --frontier: Fashion-MNIST%s, ScatterNet (%s) + %s, BSR-%d (amplified "
           "banded MF), epsilon = 3, delta = 1e-5, %zu epochs, batch %zu, %zu threads\n",
           quick ? " (subset, --quick)" : "", fr.features, fr.model, (int)fr.cfg.mech.bands,
           o.cfg.epochs, o.cfg.batch, threads);
    fflush(stdout);
    train_result res;
    int rc = train_run(&o, NULL, &res);
    if (!rc && !(rc = write_json(js, &o, &res))) {
        const char *lab = "ScatterNet + private centering + linear, BSR";
        int prc = train_plot(png, &res, &lab, 1);
        printf("\ntest accuracy %.4f at epsilon %.4g, delta %.3g (%s); %.1f s, %.0f examples/s\n",
               res.final_acc, res.ledger.epsilon, res.ledger.delta, res.ledger.route, res.wall_s,
               res.examples_per_s);
        printf("wrote %s, %s%s%s\n", js, rep, prc ? "" : ", ", prc ? "" : png);
    }
    train_result_free(&res);
    train_opts_free(&o);
    return rc;
}
