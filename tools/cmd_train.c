/* cmd_train.c — `dpcorr train`: one private training run (see train_run.c). */
#include "mpi_run.h"
#include "train_run.h"

#include <string.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: dpcorr train --data SPEC --model SPEC [--mech KIND [parameters]]\n"
               "                    --epsilon E [--delta D] --epochs N --batch B --lr L\n"
               "                    [--momentum M] --clip C [--seed S | --secure] [--threads T]\n"
               "                    [--checkpoint F] [--resume F] [--report F.json] [--plot F.png]\n\n"
               "Trains with DP-SGD (--mech identity, Poisson sampling, the default) or any\n"
               "correlated-noise mechanism; sigma is calibrated to (epsilon, delta) for the exact\n"
               "mechanism, sampler and participation pattern, and the run refuses to start when\n"
               "the budget cannot be met.\n\n");
    train_opts_help(f);
    cli_mech_help(f, "--mech");
    train_algos_help(f);
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
    train_opts o;
    train_opts_init(&o);
    cli_iter it;
    cli_iter_init(&it, "train", argc, argv, 1);
    int rc = 0;
    while (cli_next(&it)) {
        if (cli_is(&it, "--help") || cli_is(&it, "-h")) {
            usage(stdout);
            goto out;
        }
        int r = train_opt(&o, &it);
        if (r < 0) {
            rc = CLI_USAGE;
            goto out;
        }
        if (r == 0) {
            rc = cli_fail("train", "%s: unknown option (see dpcorr train --help)", it.name);
            goto out;
        }
    }
    train_result res;
    rc = train_run(&o, NULL, NULL, &res);
    if (rc == 0)
        printf("final test accuracy %.4f  (epsilon %.4g, delta %.3g, %s, %.1f s, %.0f examples/s, "
               "params %016llx)\n",
               res.final_acc, res.ledger.epsilon, res.ledger.delta, res.ledger.mechanism,
               res.wall_s, res.examples_per_s, (unsigned long long)res.params_hash);
    train_result_free(&res);
out:
    cli_mech_opts_free(&o.mech);
    return rc;
}
