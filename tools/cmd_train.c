/* cmd_train.c — `dpcorr train`: one private training run with the DP-FTRL trainer (DP-SGD or
 * any correlated-noise mechanism; train_run.c), or `train --algo NAME` (train_algos.c). The
 * entries that configure a run (TRAIN_RUN_OPTS) and their reader are shared with `audit`. */
#include "mpi_run.h"
#include "train_run.h"

#include <math.h>
#include <string.h>

#define PRIV "privacy"
#define OPTIM "sampling and optimization"
#define EXEC "randomness and execution"
/* an option setting a field of dpc_train_config: range and default from the library's table */
#define TRAIN_FIELDS dpc_train_config_fields
#define TRAIN_FIELD .fields = TRAIN_FIELDS

const opt_spec TR_ALGO = {
    .name = "--algo", .metavar = "NAME", .type = OPT_CHOICE, .choices = "dp-ftrl",
    .section = "data and model", .param = "algorithm",
    .help = "the training algorithm (default dp-ftrl; train's others, listed in `dpcorr train "
            "--help`, have their own options; an audit runs dp-ftrl)",
    .example = "--algo dp-ftrl"};
const opt_spec TR_MODEL = {
    .name = "--model", .metavar = "SPEC", .type = OPT_STR, .section = "data and model",
    .param = "model",
    .help = "linear | logistic | softmax | mlp:H1[,H2][:tanh|:relu] | "
            "kan:H1[,H2][:grid=G][:range=LO,HI] | cnn:LAYER,...[:in=CxHxW] with "
            "conv<C>k<K>[s<S>][p<P>], avgpool<K>[s<S>], maxpool<K>[s<S>], gn<G>[n], relu, tanh, "
            "flatten, fc<N> (doc/models.md, doc/kan.md) (required)",
    .example = "--model mlp:4"};
const opt_spec TR_FEATURES = {
    .name = "--features", .metavar = "SPEC", .type = OPT_STR, .section = "data and model",
    .param = "features",
    .help = "none (default) | scatter[:J=2,L=8][,gn=G][,center=Z]: ScatterNet features of the "
            "images (81 x 7 x 7 for 28 x 28; doc/data.md), computed once and cached; gn: "
            "per-example GroupNorm in G groups; center: subtract the training set's mean, "
            "released with noise multiplier Z and composed into the run's epsilon",
    .example = "! --data fashion-mnist:limit=100,test-limit=100 --model softmax --epsilon 1 "
               "--batch 20 --features scatter:J=1,L=2"};
const opt_spec TR_FEATURE_CACHE = {
    .name = "--feature-cache", .metavar = "DIR", .type = OPT_STR, .section = "data and model",
    .param = "feature_cache", .when = "--features",
    .help = "where computed features are cached (default $XDG_CACHE_HOME/dpcorr or "
            "~/.cache/dpcorr; none: no cache)",
    .example = "! --data fashion-mnist:limit=100,test-limit=100 --model softmax --epsilon 1 "
               "--batch 20 --features scatter:J=1,L=2 --feature-cache none"};
const opt_spec TR_EPSILON = FR_EPSILON_OPT(TRAIN_FIELDS, PRIV, "--noise-multiplier", "--epsilon 2");
const opt_spec TR_DELTA =
    FR_DELTA_OPT(TRAIN_FIELDS, PRIV, NULL, "--delta 1e-4");
const opt_spec TR_NOISE = FR_NOISE_OPT(
    TRAIN_FIELDS, PRIV,
    "noise std per row of Z = Z x clip x the column norm of C; DP-SGD: the per-step multiplier",
    "! --data synthetic:logistic,n=600,d=1000 --model logistic --batch 20 "
    "--noise-multiplier 1.5");
const opt_spec TR_LARGE_DELTA = FR_LARGE_DELTA_OPT(PRIV, NULL);
const opt_spec TR_ACCOUNTANT = {
    .name = "--accountant", .metavar = "A", .type = OPT_CHOICE, TRAIN_FIELD, .section = PRIV,
    .param = "accountant",
    .help = "pld | rdp for amplified runs; gdp (exact) is used for unamplified ones "
            "unless zcdp is asked for",
    .example = "--accountant rdp"};
/* the field is an int (a dpc_sampler_kind or AUTO), so the words are the CLI's; the default its
 * row's */
const opt_spec TR_SAMPLER = {
    .name = "--sampler", .metavar = "S", .type = OPT_CHOICE, TRAIN_FIELD,
    .choices = "auto|poisson|fixed|shuffle|cyclic-poisson|balls-in-bins", .section = OPTIM,
    .param = "sampler",
    .help = "auto: poisson for identity, fixed-order epochs otherwise | poisson | fixed | shuffle "
            "| cyclic-poisson | balls-in-bins (any mechanism; the best valid accounting route is "
            "used and reported)",
    .example = "--sampler shuffle"};
const opt_spec TR_GROUPS = {
    .name = "--groups", .metavar = "G", .type = OPT_UINT, TRAIN_FIELD,
    .section = OPTIM, .param = "groups", .when = "--sampler cyclic-poisson",
    .help = "number of groups",
    .example = "--sampler cyclic-poisson --groups 2"};
/* the optimizer's and the execution's fields of dpc_train_config, one option each (epochs,
 * batch, clip, lr, momentum, weight decay, schedule and its cooldown, threads, chunk) */
const opt_spec TR_OPTIM = {.type = OPT_FIELDS, TRAIN_FIELD, .group = "optimization",
                           .section = OPTIM};
const opt_spec TR_EXEC = {.type = OPT_FIELDS, TRAIN_FIELD, .group = "execution",
                          .section = EXEC};
const opt_spec TR_PRECISION = {
    .name = "--precision", .metavar = "P", .type = OPT_CHOICE, TRAIN_FIELD, .section = EXEC,
    .param = "precision",
    .help = "double | float32: parameters, activations and gradients in float "
            "(clipping norms and noise in double; linear, logistic, softmax and mlp models, one "
            "process)",
    .example = "--precision float32"};
const opt_spec TR_MAX_DATA_BYTES = {
    .name = "--max-data-bytes", .metavar = "B", .type = OPT_UINT, .lo = 1, .hi = 9e15,
    .section = EXEC, .param = "max_data_bytes",
    .help = "refuse to hold more than B bytes of training data (rows x (features + 1) x 8) per "
            "process; under mpirun each rank holds only its rows of npy and synthetic sets "
            "(doc/distributed.md), so P ranks take P times as much (default: no limit)",
    .example = "! --data synthetic:logistic,n=600,d=1000 --model logistic --epsilon 1 "
               "--batch 20 --max-data-bytes 1e7"};
static const opt_spec *const TRAIN_OPTS[] = {
    &TR_ALGO, TRAIN_RUN_OPTS, FRAME_CKPT_OPTS, &OPT_DRY_RUN, &OPT_HELP, NULL};

extern const char TRAIN_ALGOS_HELP[];

static const opt_cmd TRAIN_CMD = {
    .name = "train",
    .usage = "dpcorr train --data SPEC --model SPEC [--mech KIND [parameters]]\n"
             "                    (--epsilon E [--delta D] | --noise-multiplier Z) --epochs N\n"
             "                    --batch B --lr L [--momentum M] --clip C [--seed S | --secure]\n"
             "                    [--checkpoint F] [--resume F] [--report F.json] [--plot F.png]\n"
             "       dpcorr train --algo NAME ...   (see below)",
    .about = "Trains with DP-SGD (--mech identity, Poisson sampling, the default) or any\n"
             "correlated-noise mechanism; the noise multiplier is calibrated to (epsilon, delta)\n"
             "for the exact mechanism, sampler and participation pattern, and the run refuses to\n"
             "start when the budget cannot be met.",
    .opts = TRAIN_OPTS,
    .kind_opt = "--mech",
    .minimal = "--data synthetic:logistic,n=600,d=4 --model logistic --epsilon 1 --batch 20",
    .epilog = TRAIN_ALGOS_HELP,
};

/* Privacy, optimizer, sampling and execution options into o->cfg (each read only where it
 * applies; the values in o->cfg are the defaults). */
static void read_config(train_opts *o, opt_set *s)
{
    static const dpc_sampler_kind samplers[] = {DPC_SAMPLER_AUTO, DPC_SAMPLER_POISSON,
                                                DPC_SAMPLER_FIXED, DPC_SAMPLER_SHUFFLE,
                                                DPC_SAMPLER_CYCLIC_POISSON,
                                                DPC_SAMPLER_BALLS_IN_BINS};
    dpc_train_config *c = &o->cfg;
    c->epsilon = opt_dbl(s, &TR_EPSILON, c->epsilon);
    c->noise_multiplier = opt_dbl(s, &TR_NOISE, c->noise_multiplier);
    c->delta = opt_dbl(s, &TR_DELTA, c->delta);
    c->allow_large_delta = opt_given(s, &TR_LARGE_DELTA);
    opt_read_field(s, &TR_ACCOUNTANT, c);
    c->sampler = samplers[opt_word(s, &TR_SAMPLER, 0)];
    if (c->sampler == DPC_SAMPLER_CYCLIC_POISSON) c->groups = opt_size(s, &TR_GROUPS, 0);
    opt_read_fields(s, dpc_train_config_fields(), c); /* each where it applies */
    opt_read_field(s, &TR_PRECISION, c);
}

int train_read_run(train_opts *o, opt_set *s)
{
    frame_read(&o->fr, s);
    o->model = opt_str(s, &TR_MODEL, o->model);
    o->features = opt_str(s, &TR_FEATURES, NULL);
    if (o->features) o->feature_cache = opt_str(s, &TR_FEATURE_CACHE, NULL);
    o->fr.shard.max_bytes = opt_size(s, &TR_MAX_DATA_BYTES, 0);
    read_config(o, s);
    o->dry_run = s->dry_run;
    return cli_mech_read(&o->mech, s, &TRAIN_MECH_READ);
}

static int read_opts(train_opts *o, opt_set *s)
{
    opt_use(s, &TR_ALGO); /* dispatched before parsing (train_algos.c) */
    int rc = train_read_run(o, s);
    if (rc) return rc;
    frame_read_ckpt(&o->fr, s);
    if ((rc = opt_finish(s))) return rc;
    if (!o->model) return opt_fail_at(s, &TR_MODEL, "required (e.g. softmax, mlp:256)");
    if (o->cfg.epsilon == 0 && o->cfg.noise_multiplier == 0)
        return opt_fail_at(s, &TR_EPSILON, "required (or --noise-multiplier)");
    return frame_check(&o->fr, s, 1); /* with --checkpoint F */
}

int cmd_train(int argc, char **argv)
{
    int bad;
    int (*algo)(int, char **) = train_algo_lookup(argc, argv, &bad);
    if (bad) return CLI_USAGE;
    if (algo) { /* the papers' trainers are not data-parallel: rank 0 runs them alone */
        mpi_run_command(0);
        return mpi_run_skip() ? 0 : algo(argc, argv);
    }
    opt_set s;
    int rc = opt_parse(&s, &TRAIN_CMD, argc, argv, 1, 0);
    if (rc || s.help) return rc;
    train_opts o;
    train_opts_init(&o);
    train_result res;
    memset(&res, 0, sizeof res);
    if (!(rc = read_opts(&o, &s)) && !(rc = train_run(&o, &s, &res)) && !o.dry_run) {
        const dpc_ledger *L = &res.ledger;
        if (o.fr.stop_after && res.steps_done < L->steps) /* not "done": --resume continues it */
            printf("stopped at step %zu of %zu (--stop-after; checkpoint %s)", res.steps_done,
                   L->steps, o.fr.checkpoint);
        else if (!o.fr.test) printf("done (no test set)");
        else if (!o.fr.train->n_classes) printf("final test loss %.6g (regression)", res.final_loss);
        else printf("final test accuracy %.4f", res.final_acc);
        printf("  (epsilon %.4g, delta %.3g, %s, %.1f s, %.0f examples/s, params %016llx)\n",
               L->epsilon, L->delta, L->mechanism, res.wall_s, res.examples_per_s,
               (unsigned long long)res.params_hash);
    }
    train_result_free(&res);
    train_opts_free(&o);
    return rc;
}
