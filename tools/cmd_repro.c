/* cmd_repro.c — `dpcorr repro TARGET [--quick | --smoke] [--out DIR] [--json] [--seed S]`: the
 * dispatcher over the reproduction targets. Adding a paper's target is one line in `targets`
 * (plus its function, declared in repro.h). A deterministic target (no simulation) takes only
 * --out and --json. */
#include "cli.h"
#include "frame.h"
#include "repro.h"

#include <stdlib.h>
#include <string.h>

typedef struct repro_target {
    const char *name;
    int (*run)(repro_ctx *c);
    const char *summary;
    int deterministic; /* no simulation: --quick, --smoke and --seed do not apply */
    const char *const *files; /* what it writes into --out besides TARGET.json (NULL-ended) */
    const char *data;  /* a data spec it reads (its files are inputs no output may be), or NULL */
} repro_target;

/* A plot NAME: the PNG and the data and script kept beside it (tools/plot.h, keep). */
#define PLOT(n) n ".png", n ".dat", n ".gp"
static const char *const F_FIG1[] = {"nu-fig1.json", "fig1_ratio.csv", "fig1_sim.csv",
                                     "fig1_beta.csv", "fig1_spectrum.csv", PLOT("nu-fig1"), NULL};
static const char *const F_FIG2[] = {"nu-fig2.json", "fig2_slopes.csv", "fig2_points.csv",
                                     PLOT("nu-fig2"), NULL};
static const char *const F_FIG3[] = {"nu-fig3.json", "fig3_bound.csv", "fig3_sim.csv",
                                     PLOT("nu-fig3"), NULL};
static const char *const F_FIG4[] = {"nu-fig4.json", "fig4_tuning.csv", "fig4_runs.csv",
                                     "fig4_summary.csv", PLOT("fig4"), NULL};
static const char *const F_TABLES[] = {"nu-tables.json", "table2_mechanisms.csv",
                                       "table2_gamma_T.csv", "table1.csv", "table4.csv",
                                       PLOT("nu-tables"), NULL};
static const char *const F_AMBSSGD[] = {"ambssgd.json", "ambssgd_sigma.csv",
                                        "ambssgd_epsilon.csv", "ambssgd_n_d.csv",
                                        "ambssgd_slopes.csv", PLOT("ambssgd"),
                                        PLOT("ambssgd_d_zeta"), NULL};
static const char *const F_KAN[] = {"kan.json", "noise_stats.csv", "noise_cumvar.csv",
                                    "sensitivity.csv", "kappa_table.csv",
                                    "lambda_fixed_kappa.csv", "lambda_calibrated.csv",
                                    "width_window.csv", "n_eps_trends.csv",
                                    "fmnist_kan_vs_mlp.csv", PLOT("kan-noise"),
                                    PLOT("kan-lambda"), PLOT("kan-width"), PLOT("kan-trends"),
                                    PLOT("kan-fmnist"), NULL};
static const char *const F_SRGD[] = {"srgd.json", "srgd_vs_n.csv", "srgd_vs_p.csv",
                                     "srgd_vs_eps.csv", "srgd_regimes.csv",
                                     "srgd_tree_vs_independent.csv", "srgd_baselines.csv",
                                     "srgd_trace.csv", PLOT("srgd"), PLOT("srgd-ablations"),
                                     NULL};
#undef PLOT

static const repro_target targets[] = {
    {"nu-fig1", repro_nu_fig1, "nu-DP-FTRL Fig. 1: mean estimation ratio R(eta), beta*_t, |B*(w)|^2; simulation", 0, F_FIG1, NULL},
    {"nu-fig2", repro_nu_fig2, "nu-DP-FTRL Fig. 2: linear regression error vs d, d_eff, eta; slopes; simulation", 0, F_FIG2, NULL},
    {"nu-fig3", repro_nu_fig3, "nu-DP-FTRL Fig. 3: Theorem 3.1 bound vs condition number (SGD, nu, Optimized)", 0, F_FIG3, NULL},
    {"nu-fig4", repro_nu_fig4, "nu-DP-FTRL Fig. 4 on Fashion-MNIST: every mechanism at eps 1..8, seeds, mean +- std", 0, F_FIG4, "fashion-mnist"},
    {"nu-tables", repro_nu_tables, "nu-DP-FTRL Tables 1, 2, 4: rates, sensitivities, F_inf of every mechanism (exact; no options)", 1, F_TABLES, NULL},
    {"ambssgd", repro_ambssgd, "adaptive-clipping linear regression: sigma, eps, N, d sweeps; adaptive vs fixed clip", 0, F_AMBSSGD, NULL},
    {"kan", repro_kan, "KAN + DP-lambda-CGD: noise, sensitivity, kappa tables, lambda/width/n/eps trends, FMNIST KAN vs MLP", 0, F_KAN, "fashion-mnist"},
    {"srgd", repro_srgd, "DP-SRGD: excess risk vs n, p, eps; regimes A/B; acceleration; tree vs independent; baselines", 0, F_SRGD, NULL},
};
#define NTARGETS (sizeof targets / sizeof targets[0])

static const opt_spec R_QUICK = {
    .name = "--quick", .type = OPT_FLAG, .section = "options", .param = "quick",
    .conflicts = "--smoke", .help = "reduced grids and horizons (seconds; nu-fig4 about 1.5 min of CPU)",
    .example = "--quick"};
static const opt_spec R_SMOKE = {
    .name = "--smoke", .type = OPT_FLAG, .section = "options", .param = "smoke",
    .help = "tiny grids for sanitizer test runs (numbers not meaningful)", .example = "--smoke"};
static const opt_spec R_OUT = {
    .name = "--out", .metavar = "DIR", .type = OPT_STR, .flags = OPT_OUT_DIR,
    .section = "options", .param = "out", .help = "output directory (default repro-out/TARGET)",
    .example = "--out {tmp}/repro"};
static const opt_spec R_JSON = {
    .name = "--json", .type = OPT_FLAG, .section = "options", .param = "json",
    .help = "print the JSON summary on stdout (the text report goes to stderr)",
    .example = "--json"};
static const opt_spec R_SEED = {
    .name = "--seed", .metavar = "S", .type = OPT_UINT, .flags = OPT_BIG, .section = "options",
    .param = "seed", .help = "root seed of the simulations and trainings (seeded mode, default 20240101; warned, recorded)",
    .example = "--seed 5"};

static const opt_spec *const SIM_OPTS[] = {&R_QUICK, &R_SMOKE, &R_OUT, &R_JSON, &R_SEED,
                                           &OPT_DRY_RUN, &OPT_HELP, NULL};
static const opt_spec *const EXACT_OPTS[] = {&R_OUT, &R_JSON, &OPT_DRY_RUN, &OPT_HELP, NULL};

static void repro_usage(FILE *f)
{
    fprintf(f, "usage: dpcorr repro TARGET [--quick | --smoke] [--out DIR] [--json] [--seed S]\n\n"
               "Reproduces a paper's figure or table: writes CSV files, a PNG plot (gnuplot) and\n"
               "TARGET.json into DIR, and reports which paper numbers are reproduced and which are\n"
               "not (and why). dpcorr repro TARGET --help lists the options of a target.\n\ntargets:\n");
    for (size_t i = 0; i < NTARGETS; i++) fprintf(f, "  %-10s %s\n", targets[i].name, targets[i].summary);
    fprintf(f, "\noptions:\n"
               "  --quick      reduced grids and horizons (seconds; nu-fig4 about 1.5 min of CPU)\n"
               "  --smoke      tiny grids for sanitizer test runs (numbers not meaningful)\n"
               "  --out DIR    output directory (default repro-out/TARGET)\n"
               "  --json       print the JSON summary on stdout (the text report goes to stderr)\n"
               "  --seed S     root seed (seeded mode, default 20240101; warned, recorded)\n"
               "  --dry-run    check the options and the output directory, print them and exit\n"
               "  --help       this text\n");
}

/* Runs target t with the options; writes TARGET.json. */
static int run_target(const repro_target *t, repro_opts *o)
{
    repro_ctx c = {.o = o, .json_first = 1, .plots_ok = 1, .t0 = repro_now()};
    c.json = open_memstream(&c.json_buf, &c.json_len);
    if (!c.json) {
        fprintf(stderr, "dpcorr repro: out of memory\n");
        return CLI_RUNTIME;
    }
    repro_json_str(&c, "target", t->name);
    repro_json_raw(&c, "quick", "%s", o->quick ? "true" : "false");
    repro_json_raw(&c, "smoke", "%s", o->smoke ? "true" : "false");
    repro_json_raw(&c, "seed", "%llu", (unsigned long long)o->seed);
    repro_json_str(&c, "rng_mode", t->deterministic ? "none" : "seeded");
    repro_json_str(&c, "out", o->out);
    repro_say(&c, "dpcorr repro %s%s  (seed %llu, output %s)\n", t->name,
              o->smoke ? " --smoke" : o->quick ? " --quick" : "", (unsigned long long)o->seed,
              o->out);
    if (!t->deterministic) { /* an experiment: seeded for reproducibility, warned once */
        char cmdname[64];
        snprintf(cmdname, sizeof cmdname, "repro %s", t->name);
        frame_warn_seeded(cmdname, o->seed, "an experiment with fixed seeds");
    }
    int rc = t->run(&c);
    repro_abort_open(&c); /* a file its error path left open: the old file stays */
    double secs = repro_now() - c.t0;
    repro_json_raw(&c, "png_ok", "%s", c.plots_ok ? "true" : "false");
    repro_json_num(&c, "seconds", secs);
    fclose(c.json);
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.json", o->out, t->name);
    dpc_io_out *h = NULL; /* a temporary renamed into place: a failed write keeps the old */
    FILE *f = cli_out_open(&h, "repro", path);
    if (f) {
        fprintf(f, "{%s\n}\n", c.json_buf);
        if (cli_out_commit(h, "repro")) rc = 1;
    } else {
        rc = 1;
    }
    if (c.write_failed) rc = 1;
    if (o->json) printf("{%s\n}\n", c.json_buf);
    else printf("summary: %s (%.1f s)\n", path, secs);
    free(c.json_buf);
    return rc ? CLI_RUNTIME : 0;
}

int cmd_repro(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        repro_usage(argc < 2 ? stderr : stdout);
        if (argc < 2) fprintf(stderr, "dpcorr repro: missing TARGET\n");
        return argc < 2 ? CLI_USAGE : 0;
    }
    const repro_target *t = NULL;
    for (size_t i = 0; i < NTARGETS; i++)
        if (!strcmp(argv[1], targets[i].name)) t = &targets[i];
    if (!t) {
        if (argv[1][0] == '-')
            fprintf(stderr, "dpcorr repro: missing TARGET (the first argument; got the option %s)\n",
                    argv[1]);
        else
            fprintf(stderr, "dpcorr repro: %s: unknown target (see dpcorr repro --help)\n", argv[1]);
        return CLI_USAGE;
    }
    char name[64], outbuf[4096];
    snprintf(name, sizeof name, "repro %s", t->name);
    opt_cmd cmd = {.name = name,
                   .usage = t->deterministic ? "dpcorr repro TARGET [--out DIR] [--json]"
                                             : "dpcorr repro TARGET [--quick | --smoke] [--out DIR] "
                                               "[--json] [--seed S]",
                   .about = t->summary,
                   .opts = t->deterministic ? EXACT_OPTS : SIM_OPTS,
                   .minimal = ""};
    opt_set s;
    int rc = opt_parse(&s, &cmd, argc, argv, 2, 0);
    if (rc || s.help) return rc;
    repro_opts o = {t->name, 0, 0, 0, NULL, 20240101u, t->files};
    if (!t->deterministic) {
        o.smoke = opt_given(&s, &R_SMOKE);
        o.quick = o.smoke || opt_given(&s, &R_QUICK);
        o.seed = opt_u64(&s, &R_SEED, o.seed);
    }
    o.json = opt_given(&s, &R_JSON);
    snprintf(outbuf, sizeof outbuf, "repro-out/%s", t->name);
    o.out = opt_str(&s, &R_OUT, outbuf);
    if ((rc = opt_finish(&s)) || (rc = cli_make_out_dir(&s, &R_OUT, o.out))) return rc;
    /* every file of the target checked before any work: against the data it reads, and each
     * other (a link in DIR to an input, or two names of one file, would be overwritten) */
    if ((rc = cli_check_dir_outputs(&s, &R_OUT, o.out, t->files, t->data))) return rc;
    if (s.dry_run) {
        opt_dry_str("target", t->name);
        opt_dry_uint("quick", (uint64_t)o.quick);
        opt_dry_uint("smoke", (uint64_t)o.smoke);
        opt_dry_uint("seed", o.seed);
        opt_dry_str("out", o.out);
        opt_dry_uint("json", (uint64_t)o.json);
        return 0;
    }
    return run_target(t, &o);
}
