/* bench_strategy.c — strategy optimization time: BLT n = 1e6 (automatic buffers, max error),
 * banded Toeplitz n = 1e4 with 64 bands, dense ME n = 1024 (mean error, default iteration
 * budget). Targets (2 cores): BLT <= 1 s, banded <= 5 s, dense <= 10 s. Best of a few runs for
 * the cheap cases. Exits non-zero if a target is missed by more than a factor 2 (noisy machine). */
#include "bench_util.h"
#include "dpcorr.h"

#include <math.h>
#include <stdlib.h>

typedef dpc_status (*optimizer)(dpc_strategy **, const dpc_strategy_problem *,
                                const dpc_strategy_options *, dpc_error *);

static int run(const char *name, optimizer fn, const dpc_strategy_problem *pb,
               const dpc_strategy_options *o, int reps, double target)
{
    double best = 1e30, loss = NAN;
    size_t iters = 0;
    for (int r = 0; r < reps; r++) {
        dpc_strategy *s = NULL;
        dpc_error err = {0};
        double t = bench_now();
        if (fn(&s, pb, o, &err)) {
            printf("%-40s FAILED: %s\n", name, err.msg);
            return 1;
        }
        t = bench_now() - t;
        if (t < best) best = t;
        loss = s->achieved.loss;
        iters = s->iterations;
        dpc_strategy_free(s);
    }
    double nu = 0;
    dpc_strategy_loss bn;
    dpc_error err = {0};
    int have_nu = dpc_strategy_best_nu(pb, &nu, &bn, &err) == DPC_OK;
    printf("%-40s %8.3f s (target %4.1f s)  loss %.8g  %zu iterations", name, best, target, loss,
           iters);
    if (have_nu) printf("  best nu-DP-FTRL %.8g", bn.loss);
    printf("\n");
    return best > 2.0 * target;
}

int main(void)
{
    bench_machine();
    const char *thr = getenv("OPENBLAS_NUM_THREADS");
    printf("OpenBLAS threads: %s\n", thr ? thr : "(default)");
    int bad = 0;
    dpc_strategy_problem pb;
    dpc_strategy_options o;

    dpc_strategy_problem_init(&pb, 1000000);
    dpc_strategy_options_init(&o);
    bad |= run("BLT n=1e6 max, auto buffers", dpc_strategy_optimize_blt, &pb, &o, 3, 1.0);

    dpc_strategy_problem_init(&pb, 1000000);
    pb.participations = 4;
    pb.min_sep = 250000;
    bad |= run("BLT n=1e6 max, k=4 b=250000", dpc_strategy_optimize_blt, &pb, &o, 3, 1.0);

    dpc_strategy_problem_init(&pb, 10000);
    dpc_strategy_options_init(&o);
    o.bands = 64;
    bad |= run("banded n=1e4 b=64 max", dpc_strategy_optimize_banded, &pb, &o, 2, 5.0);
    pb.objective = DPC_OBJECTIVE_MEAN;
    pb.participations = 8;
    pb.min_sep = 1250;
    bad |= run("banded n=1e4 b=64 mean k=8", dpc_strategy_optimize_banded, &pb, &o, 2, 5.0);

    dpc_strategy_problem_init(&pb, 1024);
    pb.objective = DPC_OBJECTIVE_MEAN;
    dpc_strategy_options_init(&o);
    bad |= run("dense ME n=1024 mean", dpc_strategy_optimize_dense, &pb, &o, 1, 10.0);
    return bad;
}
