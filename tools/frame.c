/* frame.c — the run frame shared by every trainer; see frame.h. */
#include "frame.h"
#include "mpi_run.h"

#include <stdlib.h>
#include <string.h>

const opt_spec FR_DATA = {
    .name = "--data", .metavar = "SPEC", .type = OPT_STR, .flags = OPT_IN_DATA,
    .section = "data and model", .param = "data,train,test",
    .help = "fashion-mnist | csv:PATH[,opts] | libsvm:PATH[,opts] | idx:PATH,labels=PATH | "
            "synthetic:linreg|mean|logistic[,opts] (doc/data.md) (required)",
    .example = "--data synthetic:logistic,n=900,d=5"};
const opt_spec FR_SEED = {
    .name = "--seed", .metavar = "S", .type = OPT_UINT, .flags = OPT_BIG,
    .section = "randomness and execution", .param = "seed", .conflicts = "--secure",
    .help = "seeded mode for reproducible experiments: not private against anyone who knows S "
            "(warned on stderr; recorded in reports; default: secure mode)",
    .example = "--seed 9"};
const opt_spec FR_SECURE = {
    .name = "--secure", .type = OPT_FLAG, .section = "randomness and execution",
    .param = "rng_mode",
    .help = "secure mode, the default: key from the OS (getrandom, ChaCha20); not reproducible",
    .example = "--secure"};
const opt_spec FR_REPORT = {
    .name = "--report", .metavar = "F.json", .type = OPT_STR, .flags = OPT_OUT_FILE,
    .section = "output", .param = "report",
    .help = "JSON report: configuration, data, the privacy ledger, per-step or per-epoch "
            "telemetry, final metrics (checked writable before the run)",
    .example = "--report {tmp}/r.json"};
const opt_spec FR_PLOT = {
    .name = "--plot", .metavar = "F.png", .type = OPT_STR, .flags = OPT_OUT_FILE,
    .section = "output", .param = "plot",
    .help = "PNG of the run's curves (gnuplot; replaced only by a whole PNG, written through "
            "a link; DPCORR_PLOT_KEEP_DATA=1 keeps its data and script beside it)",
    .example = "--plot {tmp}/p.png"};
const opt_spec FR_LABEL = {
    .name = "--label", .metavar = "NAME", .type = OPT_STR, .section = "output", .param = "label",
    .help = "name of the run in progress lines, reports and plots", .example = "--label x1"};
const opt_spec FR_QUIET = {
    .name = "--quiet", .type = OPT_FLAG, .section = "output", .param = "quiet",
    .help = "no progress output", .example = "--quiet"};

void frame_init(run_frame *f)
{
    memset(f, 0, sizeof *f);
    f->data_opt = &FR_DATA;
    f->secure = 1; /* secure by default: --seed opts in to seeded mode */
    f->warn_seed = 1;
    f->t0 = cli_now();
}

void frame_read(run_frame *f, opt_set *s)
{
    f->data = opt_str(s, f->data_opt, f->data);
    f->secure_typed = opt_given(s, &FR_SECURE);
    if (opt_given(s, &FR_SEED)) {
        f->seed = opt_u64(s, &FR_SEED, 0);
        f->secure = 0;
    }
    f->report = opt_str(s, &FR_REPORT, NULL);
    f->plot = opt_str(s, &FR_PLOT, NULL);
    f->label = opt_str(s, &FR_LABEL, NULL);
    f->quiet = opt_given(s, &FR_QUIET);
}

int frame_check(const run_frame *f, opt_set *s, int need_data)
{
    int rc = 0;
    if (need_data && !f->data && !f->train)
        return opt_fail_at(s, f->data_opt, "required (e.g. fashion-mnist, synthetic:logistic,n=1000,d=5)");
    /* a stop without a checkpoint would silently run fewer steps and keep nothing */
    if (f->stop_after && !f->checkpoint)
        return opt_fail_at(s, &FR_STOP_AFTER, "needs --checkpoint F: the run stops as if killed "
                                              "after K steps and continues from F with --resume F");
    if (mpi_run_rank() > 0) return 0; /* under mpirun, rank 0 writes */
    /* every output (--report, --plot, --checkpoint, a trainer's own): writable, and neither an
     * input nor another output */
    if ((rc = cli_check_outputs(s))) return rc;
    return 0;
}

void frame_use_seed(run_frame *f, uint64_t seed)
{
    f->secure = 0;
    f->seed = seed;
}

void frame_warn_seeded(const char *cmd, uint64_t seed, const char *note)
{
    fprintf(stderr, "dpcorr %s: warning: seeded mode (seed %llu): the noise is reproducible from "
                    "the seed; not private against anyone who knows it (%s)\n",
            cmd, (unsigned long long)seed, note);
}

int frame_seed(run_frame *f, opt_set *s)
{
    dpc_error err = {0};
    if (f->resume) return frame_seed_resume(f, s);
    if (f->secure) {
        if (dpc_rng_seed_os(&f->rng, &err)) return opt_fail_lib_at(s, &FR_SECURE, &err);
    } else {
        dpc_rng_seed(&f->rng, f->seed);
        if (f->warn_seed)
            frame_warn_seeded(s && s->cmd ? s->cmd->name : "train", f->seed,
                              "omit --seed for secure mode");
    }
    return 0;
}

const char *frame_rng_desc(dpc_rng_mode mode, uint64_t seed, char *buf, size_t len)
{
    if (mode == DPC_RNG_SEEDED) snprintf(buf, len, "seeded mode, seed %llu (not private against "
                                                   "anyone who knows it)",
                                         (unsigned long long)seed);
    else snprintf(buf, len, "secure mode (OS key)");
    return buf;
}

int frame_load(run_frame *f, opt_set *s)
{
    if (f->train) return 0; /* given by the caller */
    dpc_error err = {0};
    if (dpc_data_load_spec_shard(&f->train, &f->test, f->data, &f->rng, &f->shard, &err))
        return !strcmp(err.field, "max_data_bytes") ? opt_fail_lib(s, &err)
                                                    : opt_fail_lib_at(s, f->data_opt, &err);
    f->owned = 1;
    return 0;
}

void frame_free(run_frame *f)
{
    if (f->owned) {
        dpc_dataset_free(f->train);
        dpc_dataset_free(f->test);
        f->train = f->test = NULL;
        f->owned = 0;
    }
}

void frame_dry(const run_frame *f)
{
    opt_dry_str("data", f->data);
    if (f->train) {
        opt_dry_uint("train.n", dpc_dataset_rows(f->train));
        opt_dry_uint("train.d", f->train->d);
        opt_dry_uint("train.n_classes", f->train->n_classes);
        opt_dry_uint("test.n", f->test ? f->test->n : 0);
    }
    /* the default is told apart from an explicit --secure (both run in secure mode) */
    opt_dry_str("rng_mode", !f->secure ? "seeded" : f->secure_typed ? "secure" : "secure (default)");
    if (!f->secure) opt_dry_uint("seed", f->seed);
    else opt_dry_str("seed", "none (OS key)");
    opt_dry_str("report", f->report);
    opt_dry_str("plot", f->plot);
    opt_dry_str("label", f->label);
    opt_dry_uint("quiet", (uint64_t)f->quiet);
}

const char *frame_tag(const run_frame *f, char *buf, size_t len)
{
    if (f->label) snprintf(buf, len, "[%s] ", f->label);
    else if (len) buf[0] = '\0';
    return buf;
}

/* ---- report -------------------------------------------------------------------------------- */

FILE *frame_report_open(const run_frame *f, dpc_json_writer *w, const char *algo)
{
    dpc_io_out *out = NULL; /* a temporary renamed over the report: a failed write keeps the old */
    FILE *fp = cli_out_open(&out, "--report", f->report);
    if (!fp) return NULL;
    dpc_json_begin(w, fp);
    w->out = out;
    dpc_json_str(w, "dpcorr_version", dpc_version());
    dpc_json_str(w, "algo", algo);
    dpc_json_str(w, "label", f->label ? f->label : "");
    dpc_rng_report_json(w, &f->rng); /* also in the ledger as seed_mode / seed */
    return fp;
}

int frame_report_close(dpc_json_writer *w, FILE *fp, const char *path)
{
    (void)fp;
    (void)path;
    dpc_json_finish(w);
    return cli_out_commit(w->out, "--report");
}

/* ---- plot ---------------------------------------------------------------------------------- */

int frame_plot(const char *png, const plot_panel *panels, size_t npanels)
{
    /* png = DIR/NAME.png: plot_render makes DIR/NAME.png (through a link), nothing else unless
       $DPCORR_PLOT_KEEP_DATA asks for NAME.dat and NAME.gp */
    char dir[1024], name[256], msg[4400];
    const char *slash = strrchr(png, '/');
    size_t dl = slash ? (size_t)(slash - png) : 0;
    if (dl >= sizeof dir || strlen(slash ? slash + 1 : png) >= sizeof name) {
        fprintf(stderr, "dpcorr: --plot: path too long: %s\n", png);
        return CLI_RUNTIME;
    }
    if (slash) snprintf(dir, sizeof dir, "%.*s", (int)(dl ? dl : 1), png);
    else snprintf(dir, sizeof dir, ".");
    snprintf(name, sizeof name, "%s", slash ? slash + 1 : png);
    size_t nl = strlen(name);
    if (nl > 4 && !strcmp(name + nl - 4, ".png")) name[nl - 4] = 0;
    if (plot_render(dir, name, panels, npanels, NULL, msg, sizeof msg) != 0) {
        fprintf(stderr, "dpcorr: --plot: %s\n", msg);
        return CLI_RUNTIME;
    }
    return 0;
}

void frame_report_isa(dpc_json_writer *w)
{
    int forced = cli_isa_forced();
    dpc_isa level[DPC_TUNE_NFAMILIES];
    for (int f = 0; f < DPC_TUNE_NFAMILIES; f++) level[f] = cli_isa_for((dpc_tune_family)f);
    dpc_tune_report_json(w, forced, level, forced ? NULL : cli_isa_tuning());
}
