/* train_algos.c — `dpcorr train --algo NAME`: the papers' own training algorithms. The default
 * (no --algo, or --algo dp-ftrl) is the DP-FTRL trainer of train_run.c (DP-SGD or any
 * correlated-noise mechanism). Each paper adds one line to this table and its runner, which
 * receives the whole `train` argv (argv[0] = "train") and parses it with its own option table. */
#include "train_algo.h"
#include "train_run.h"

#include <string.h>

typedef struct train_algo {
    const char *name;
    int (*run)(int argc, char **argv);
} train_algo;

static const train_algo algos[] = {
    {"dp-ftrl", NULL},
    {"dp-ambssgd", train_linreg_ambssgd},
    {"dp-ssgd", train_linreg_ssgd},
    {"lcgd-projected", train_lcgd_projected},
    {"dp-srgd", train_srgd},
};

const char TRAIN_ALGOS_HELP[] =
    "algorithms (--algo NAME; each has its own options: dpcorr train --algo NAME --help):\n"
    "  dp-ftrl          DP-SGD / DP-FTRL with any mechanism (the default)\n"
    "  dp-ambssgd       linear regression, adaptive clipping (DP-AMBSSGD + DP-STAT)\n"
    "  dp-ssgd          linear regression, shuffled single-record DP-SGD (DP-SSGD)\n"
    "  lcgd-projected   KAN paper: projected DP-lambda-CGD, fresh batches (kan2:M, kan:H, any model)\n"
    "  dp-srgd          Accelerated-DP-SRGD: single-epoch large-batch DP-SCO, tree noise\n";

/* Returns the runner for --algo NAME in argv, NULL for the default trainer; *bad is set (and a
 * message printed) for an unknown name or a missing value. */
int (*train_algo_lookup(int argc, char **argv, int *bad))(int, char **)
{
    *bad = 0;
    const char *name = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--algo")) {
            if (i + 1 >= argc) return NULL; /* the parser reports the missing value */
            name = argv[++i];
        } else if (!strncmp(argv[i], "--algo=", 7)) {
            name = argv[i] + 7;
        }
    }
    if (!name) return NULL;
    for (size_t k = 0; k < sizeof algos / sizeof algos[0]; k++)
        if (!strcmp(name, algos[k].name)) return algos[k].run;
    *bad = 1;
    fprintf(stderr, "dpcorr train: --algo: unknown algorithm '%s' (known:", name);
    for (size_t k = 0; k < sizeof algos / sizeof algos[0]; k++) fprintf(stderr, " %s", algos[k].name);
    fprintf(stderr, ")\n");
    return NULL;
}
