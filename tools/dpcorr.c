/* dpcorr.c — the command-line tool: a thin dispatcher over the library.
 * Exit codes: 0 ok, 1 runtime failure, 2 usage or configuration error.
 * Environment: DPCORR_ISA=sse2|avx2|avx512 forces the kernels' instruction-set level (the
 * default is the best this CPU runs; results are the same at every level; reports record it). */
#include "cli.h"
#include "mpi_run.h"

#include <string.h>

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv); /* argv[0] is the subcommand name */
    const char *summary;
} command;

static const command commands[] = {
    {"mech", cmd_mech, "sensitivity, error and memory of a correlated-noise mechanism"},
    {"compare", cmd_compare, "comparison table of every mechanism (single and multi participation)"},
    {"advise", cmd_advise, "which mechanism and sampler for a run's N, batch, epochs and epsilon"},
    {"account", cmd_account, "privacy accounting: epsilon, delta, noise and step calibration"},
    {"theory", cmd_theory, "stationary-error theory of DP-FTRL (nu-DP-FTRL paper): V0, bounds, rates"},
    {"repro", cmd_repro, "reproduce a paper's figure or table (CSV, PNG, JSON): dpcorr repro --help"},
    {"train", cmd_train, "private training (DP-SGD or any correlated-noise mechanism)"},
    {"demo", cmd_demo, "the main job: Fashion-MNIST at epsilon 3 with DP-SGD and with correlated noise"},
    {"audit", cmd_audit, "empirical privacy audit: a lower bound on epsilon from one run with canaries"},
    {"version", cmd_version, "print the version"},
};

static const opt_spec *const VERSION_OPTS[] = {&OPT_HELP, NULL};
static const opt_cmd VERSION_CMD = {.name = "version",
                                    .usage = "dpcorr version",
                                    .about = "Prints the version of the tool and library.",
                                    .opts = VERSION_OPTS};

int cmd_version(int argc, char **argv)
{
    opt_set s;
    int rc = opt_parse(&s, &VERSION_CMD, argc, argv, 1, 0);
    if (rc || s.help) return rc;
    printf("dpcorr %s\n", dpc_version());
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "dpcorr %s — differentially private learning with correlated noise\n\n",
            dpc_version());
    fprintf(f, "usage: dpcorr <command> [options]   (dpcorr <command> --help for details)\n\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nEvery command refuses unknown, unused, duplicated (with different values) and\n"
               "conflicting options (exit 2); --dry-run validates and prints the resolved\n"
               "configuration; --help-table prints a command's option table as tab-separated values.\n");
    fprintf(f, "\nenvironment: DPCORR_ISA=sse2|avx2|avx512 forces the kernels' instruction-set level\n"
               "(default: the best this CPU runs, here %s; results do not depend on it)\n",
            dpc_isa_name(dpc_isa_detect()));
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) return cmd_version(argc - 1, argv + 1);
    if (cli_isa_check()) return CLI_USAGE; /* DPCORR_ISA names a level this CPU can run */
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(argv[1], commands[i].name)) {
            /* under mpirun: train and demo are data-parallel, the rest runs on rank 0 */
            mpi_run_command(commands[i].run == cmd_train || commands[i].run == cmd_demo);
            if (mpi_run_skip()) return 0;
            return commands[i].run(argc - 1, argv + 1);
        }
    fprintf(stderr, "dpcorr: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return CLI_USAGE;
}

int main(int argc, char **argv)
{
    int rc = mpi_run_init(&argc, &argv);
    if (rc) return rc;
    rc = dispatch(argc, argv);
    /* results on stdout that could not be written are a failure too (a full disk, a closed
     * pipe's reader): never exit 0 after losing them */
    if ((fflush(stdout) != 0 || ferror(stdout)) && rc == 0) {
        fprintf(stderr, "dpcorr: write error on standard output\n");
        rc = CLI_RUNTIME;
    }
    return mpi_run_finish(rc);
}
