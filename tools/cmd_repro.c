/* cmd_repro.c — `dpcorr repro TARGET [--quick] [--out DIR] [--json] [--seed S]`: the dispatcher
 * over the reproduction targets. Adding a paper's target is one line in `targets` (plus its
 * function, declared in repro.h). */
#include "cli.h"
#include "repro.h"

#include <stdlib.h>
#include <string.h>

typedef struct repro_target {
    const char *name;
    int (*run)(repro_ctx *c);
    const char *summary;
} repro_target;

static const repro_target targets[] = {
    {"nu-fig1", repro_nu_fig1, "nu-DP-FTRL Fig. 1: mean estimation ratio R(eta), beta*_t, |B*(w)|^2; simulation"},
    {"nu-fig2", repro_nu_fig2, "nu-DP-FTRL Fig. 2: linear regression error vs d, d_eff, eta; slopes; simulation"},
    {"nu-fig3", repro_nu_fig3, "nu-DP-FTRL Fig. 3: Theorem 3.1 bound vs condition number (SGD, nu, Optimized)"},
    {"nu-fig4", repro_nu_fig4, "nu-DP-FTRL Fig. 4 on Fashion-MNIST: every mechanism at eps 1..8, seeds, mean +- std"},
    {"nu-tables", repro_nu_tables, "nu-DP-FTRL Tables 1, 2, 4: rates, sensitivities, F_inf of every mechanism"},
    {"ambssgd", repro_ambssgd, "adaptive-clipping linear regression: sigma, eps, N, d sweeps; adaptive vs fixed clip"},
    {"kan", repro_kan, "KAN + DP-lambda-CGD: noise, sensitivity, kappa tables, lambda/width/n/eps trends, FMNIST KAN vs MLP"},
    {"srgd", repro_srgd, "DP-SRGD: excess risk vs n, p, eps; regimes A/B; acceleration; tree vs independent; baselines"},
};
#define NTARGETS (sizeof targets / sizeof targets[0])

static void repro_usage(FILE *f)
{
    fprintf(f, "usage: dpcorr repro TARGET [--quick] [--out DIR] [--json] [--seed S]\n\n"
               "Reproduces a paper's figure or table: writes CSV files, a PNG plot (gnuplot) and\n"
               "TARGET.json into DIR, and reports which paper numbers are reproduced and which are\n"
               "not (and why).\n\ntargets:\n");
    for (size_t i = 0; i < NTARGETS; i++) fprintf(f, "  %-10s %s\n", targets[i].name, targets[i].summary);
    fprintf(f, "\noptions:\n"
               "  --quick      reduced grids and horizons (each target < 1 minute)\n"
               "  --smoke      tiny grids for sanitizer test runs (numbers not meaningful)\n"
               "  --out DIR    output directory (default repro-out/TARGET)\n"
               "  --json       print the JSON summary on stdout (the text report goes to stderr)\n"
               "  --seed S     root seed of the simulations (default 20240101; recorded)\n"
               "  --help       this text\n");
}

int cmd_repro(int argc, char **argv)
{
    cli_iter it;
    cli_iter_init(&it, "repro", argc, argv, 1);
    repro_opts o = {NULL, 0, 0, 0, NULL, 20240101u};
    const char *v;
    while (cli_next(&it)) {
        if (cli_is(&it, "--help") || cli_is(&it, "-h")) {
            repro_usage(stdout);
            return 0;
        } else if (cli_is(&it, "--quick")) {
            o.quick = 1;
        } else if (cli_is(&it, "--smoke")) {
            o.quick = o.smoke = 1;
        } else if (cli_is(&it, "--json")) {
            o.json = 1;
        } else if (cli_is(&it, "--out")) {
            if (!(v = cli_value(&it))) return CLI_USAGE;
            o.out = v;
        } else if (cli_is(&it, "--seed")) {
            if (!(v = cli_value(&it)) || cli_u64(&it, v, &o.seed)) return CLI_USAGE;
        } else if (it.name[0] != '-' && !o.target) {
            o.target = it.name;
        } else {
            return cli_fail("repro", "%s: unknown option (see dpcorr repro --help)", it.name);
        }
    }
    if (!o.target) {
        repro_usage(stderr);
        return cli_fail("repro", "missing TARGET");
    }
    const repro_target *t = NULL;
    for (size_t i = 0; i < NTARGETS; i++)
        if (!strcmp(o.target, targets[i].name)) t = &targets[i];
    if (!t) return cli_fail("repro", "%s: unknown target (see dpcorr repro --help)", o.target);
    char outbuf[4096];
    if (!o.out) {
        snprintf(outbuf, sizeof outbuf, "repro-out/%s", t->name);
        o.out = outbuf;
    }
    if (repro_mkdir_p(o.out)) return cli_fail("repro", "--out: cannot create directory '%s'", o.out);
    repro_ctx c = {&o, NULL, NULL, 0, 1, 1, repro_now()};
    c.json = open_memstream(&c.json_buf, &c.json_len);
    if (!c.json) {
        fprintf(stderr, "dpcorr repro: out of memory\n");
        return CLI_RUNTIME;
    }
    repro_json_str(&c, "target", t->name);
    repro_json_raw(&c, "quick", "%s", o.quick ? "true" : "false");
    repro_json_raw(&c, "smoke", "%s", o.smoke ? "true" : "false");
    repro_json_raw(&c, "seed", "%llu", (unsigned long long)o.seed);
    repro_json_str(&c, "out", o.out);
    repro_say(&c, "dpcorr repro %s%s  (seed %llu, output %s)\n", t->name,
              o.smoke ? " --smoke" : o.quick ? " --quick" : "",
              (unsigned long long)o.seed, o.out);
    int rc = t->run(&c);
    double secs = repro_now() - c.t0;
    repro_json_raw(&c, "png_ok", "%s", c.plots_ok ? "true" : "false");
    repro_json_num(&c, "seconds", secs);
    fclose(c.json);
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.json", o.out, t->name);
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "{%s\n}\n", c.json_buf);
        fclose(f);
    } else {
        fprintf(stderr, "dpcorr repro: cannot write %s\n", path);
        rc = rc ? rc : CLI_RUNTIME;
    }
    if (o.json) printf("{%s\n}\n", c.json_buf);
    else printf("summary: %s (%.1f s)\n", path, secs);
    free(c.json_buf);
    return rc ? CLI_RUNTIME : 0;
}
