/* bench_train.c — training throughput of the MLP 784-256-10 (tanh) on Fashion-MNIST, batch 500:
 *  1. DP-SGD (Poisson) at every instruction-set level on 1 and 2 threads;
 *  2. next to plain PyTorch DP-SGD with functorch per-example gradients (bench/anchors.py, 2
 *     threads, the same precision), measured in the same run: rounds alternate torch and dpcorr,
 *     the ratio is the median of the per-round ratios;
 *  3. test accuracy after one epoch of both at the same noise multiplier, clip, batch, learning
 *     rate and momentum (skipped with DPC_BENCH_QUICK=1: the torch epoch takes minutes);
 *  4. float32 precision at the default level next to torch in float32;
 *  5. correlated noise (BLT, nu-DP-FTRL, BSR) at the default level.
 * Wall clock (two threads). Synthetic data of the same shape when Debian's dataset-fashion-mnist
 * is missing (then without the torch comparison). */
#include "bench_util.h"
#include "dpcorr/train.h"

#include <math.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define ROUNDS 3
#define STEPS 20
#define BATCH 500
#define LR 0.5
#define MOMENTUM 0.9

typedef struct bcase {
    const char *name;
    dpc_mech_kind kind;
    dpc_sampler_kind sampler;
    double nu;
    size_t bands;
} bcase;

static dpc_trainer *make_trainer(const dpc_model *m, const dpc_dataset *tr, const dpc_dataset *te,
                                 const bcase *c, size_t T, dpc_isa isa, size_t epochs,
                                 dpc_precision prec)
{
    static const double th[4] = {0.999, 0.99, 0.9, 0.5}, om[4] = {0.01, 0.05, 0.1, 0.2};
    dpc_train_config cfg;
    dpc_train_config_init(&cfg);
    cfg.mech.kind = c->kind;
    cfg.mech.nu = c->nu;
    cfg.mech.bands = c->bands;
    cfg.mech.momentum = c->kind == DPC_MECH_BSR ? MOMENTUM : 0;
    if (c->kind == DPC_MECH_BLT) {
        cfg.mech.nbuf = 4;
        cfg.mech.theta = th;
        cfg.mech.omega = om;
    }
    cfg.sampler = c->sampler;
    cfg.batch = BATCH;
    cfg.epochs = epochs;
    cfg.epsilon = 3;
    cfg.accountant = DPC_ACCOUNTANT_RDP; /* fast calibration; the run is the same */
    cfg.lr = LR;
    cfg.momentum = MOMENTUM;
    cfg.threads = T;
    cfg.isa = isa;
    cfg.precision = prec;
    dpc_rng rng;
    dpc_rng_seed(&rng, 1);
    dpc_trainer *t = NULL;
    dpc_error err = {0};
    if (dpc_trainer_new(&t, m, tr, te, &cfg, &rng, &err)) {
        fprintf(stderr, "%s: %s\n", c->name, err.msg);
        exit(1);
    }
    return t;
}

/* Examples per second (wall clock) of `steps` steps after one warm-up step; *per_cpu (if not
 * NULL) = examples per CPU-second of the process (all threads), which other jobs on the cores
 * disturb much less. */
static double throughput2(dpc_trainer *t, size_t steps, double *per_cpu)
{
    dpc_step_info info;
    dpc_error err = {0};
    if (dpc_trainer_step(t, &info, &err)) goto fail;
    size_t ex = 0;
    double t0 = bench_now(), c0 = bench_cpu();
    for (size_t k = 0; k < steps; k++) {
        if (dpc_trainer_step(t, &info, &err)) goto fail;
        ex += info.batch;
    }
    if (per_cpu) *per_cpu = (double)ex / (bench_cpu() - c0);
    return (double)ex / (bench_now() - t0);
fail:
    fprintf(stderr, "step: %s\n", err.msg);
    exit(1);
}

static double throughput(dpc_trainer *t, size_t steps) { return throughput2(t, steps, NULL); }

static dpc_model *make_model(size_t D, size_t K, dpc_isa isa)
{
    dpc_model_config mc;
    dpc_model *m = NULL;
    dpc_error err = {0};
    if (dpc_model_parse(&mc, "mlp:256:tanh", D, K, &err)) return NULL;
    mc.isa = isa;
    if (dpc_model_new(&m, &mc, &err)) return NULL;
    return m;
}

static const dpc_isa LEVELS[3] = {DPC_ISA_SSE2, DPC_ISA_AVX2, DPC_ISA_AVX512};

typedef struct ctx {
    dpc_dataset *train, *test;
    int real;           /* Fashion-MNIST (else synthetic, no torch) */
    dpc_model *models[3];
    dpc_isa best;
    double sigma;       /* noise multiplier of the calibrated DP-SGD run, for torch */
    int have_torch;
    char why[256];
} ctx;

static const bcase SGD = {"DP-SGD (Poisson)", DPC_MECH_IDENTITY, DPC_SAMPLER_POISSON, 0, 0};

/* torch-dpsgd arguments: `steps` timed steps (0: one epoch) in precision dtype. */
static void torch_args(char *buf, size_t cap, const ctx *x, int steps, const char *dtype)
{
    snprintf(buf, cap, "torch-dpsgd --sigma %.17g --steps %d --batch %d --lr %g --momentum %g "
             "--threads 2 --dtype %s", x->sigma, steps, BATCH, LR, MOMENTUM, dtype);
}

/* 1-2: DP-SGD at every level and thread count, next to torch in double. */
static void bench_levels(ctx *x)
{
    char args[256];
    torch_args(args, sizeof args, x, 5, "float64");
    const char *tkeys[1] = {"examples_per_s"};
    double eps[3][2][ROUNDS], cpu[3][2][ROUNDS], torch[ROUNDS], ratio[ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        if (x->have_torch)
            x->have_torch = bench_anchor(args, tkeys, &torch[r], 1, x->why, sizeof x->why);
        for (int l = 0; l < 3; l++)
            for (size_t T = 1; T <= 2; T++) {
                eps[l][T - 1][r] = cpu[l][T - 1][r] = 0;
                if (!x->models[l]) continue;
                dpc_trainer *t = make_trainer(x->models[l], x->train, x->test, &SGD, T, LEVELS[l],
                                              1, DPC_PRECISION_DOUBLE);
                eps[l][T - 1][r] = throughput2(t, STEPS, &cpu[l][T - 1][r]);
                dpc_trainer_free(t);
            }
        if (x->have_torch) ratio[r] = eps[x->best - 1][1][r] / torch[r];
    }
    printf("%-8s %14s %14s %10s   %s\n", "level", "1 thread ex/s", "2 threads ex/s", "2 vs 1",
           "ex per CPU-second (1, 2 threads)");
    for (int l = 0; l < 3; l++) {
        if (!x->models[l]) continue;
        double a = bench_median(eps[l][0], ROUNDS), b = bench_median(eps[l][1], ROUNDS);
        printf("%-8s %14.0f %14.0f %9.2fx   %.0f, %.0f\n", dpc_isa_name(LEVELS[l]), a, b, b / a,
               bench_median(cpu[l][0], ROUNDS), bench_median(cpu[l][1], ROUNDS));
    }
    if (x->have_torch) {
        printf("torch 1.13 functorch DP-SGD (float64, 2 threads): %.0f examples/s\n",
               bench_median(torch, ROUNDS));
        printf("dpcorr (%s, 2 threads) / torch: %.1fx (median of per-round ratios; "
               "target >= 60x)\n", dpc_isa_name(x->best), bench_median(ratio, ROUNDS));
    } else {
        printf("torch anchor not available (%s): no ratio\n", x->why);
    }
}

/* 3: test accuracy after one epoch of both, same noise multiplier and optimizer. */
static void bench_accuracy(ctx *x)
{
    const char *quick = getenv("DPC_BENCH_QUICK");
    if (!x->have_torch) return;
    if (quick && *quick && *quick != '0') {
        printf("(DPC_BENCH_QUICK: no one-epoch accuracy comparison)\n");
        return;
    }
    dpc_error err = {0};
    dpc_trainer *t = make_trainer(x->models[x->best - 1], x->train, x->test, &SGD, 2, x->best, 1,
                                  DPC_PRECISION_DOUBLE);
    while (dpc_trainer_steps_done(t) < dpc_trainer_steps_total(t))
        if (dpc_trainer_step(t, NULL, &err)) exit(1);
    double loss, acc;
    if (dpc_trainer_evaluate(t, x->test, &loss, &acc, &err)) exit(1);
    dpc_trainer_free(t);
    const char *akeys[2] = {"test_accuracy", "examples_per_s"};
    double av[2];
    char args[256];
    torch_args(args, sizeof args, x, 0, "float64");
    if (bench_anchor(args, akeys, av, 2, x->why, sizeof x->why))
        printf("test accuracy after one epoch (sigma %.4f, eps 3): dpcorr %.2f%%, torch %.2f%% "
               "(difference %+.2f pp; target |difference| <= 0.5 pp)\n", x->sigma, 100 * acc,
               100 * av[0], 100 * (acc - av[0]));
    else
        printf("torch one-epoch run failed (%s)\n", x->why);
}

/* 4: float32 at the default level next to torch in float32. */
static void bench_float32(ctx *x)
{
    printf("\n== float32 precision at %s, DP-SGD (Poisson), batch %d\n", dpc_isa_name(x->best),
           BATCH);
    double f32[2][ROUNDS], fc[2][ROUNDS], tf[ROUNDS], rf[ROUNDS];
    int have_tf = x->have_torch;
    char args[256];
    const char *tkeys[1] = {"examples_per_s"};
    torch_args(args, sizeof args, x, 5, "float32");
    for (int r = 0; r < ROUNDS; r++) {
        if (have_tf) have_tf = bench_anchor(args, tkeys, &tf[r], 1, x->why, sizeof x->why);
        for (size_t T = 1; T <= 2; T++) {
            dpc_trainer *t = make_trainer(x->models[x->best - 1], x->train, x->test, &SGD, T,
                                          x->best, 1, DPC_PRECISION_FLOAT32);
            f32[T - 1][r] = throughput2(t, STEPS, &fc[T - 1][r]);
            dpc_trainer_free(t);
        }
        if (have_tf) rf[r] = f32[1][r] / tf[r];
    }
    printf("float32: %.0f examples/s (1 thread), %.0f (2 threads); per CPU-second %.0f, %.0f\n",
           bench_median(f32[0], ROUNDS), bench_median(f32[1], ROUNDS),
           bench_median(fc[0], ROUNDS), bench_median(fc[1], ROUNDS));
    if (have_tf)
        printf("torch float32 (2 threads): %.0f examples/s; "
               "dpcorr float32 / torch float32: %.1fx\n",
               bench_median(tf, ROUNDS), bench_median(rf, ROUNDS));
}

/* 5: correlated noise at the default level. */
static void bench_correlated(ctx *x)
{
    printf("\n== correlated noise at %s (fixed-order epochs)\n", dpc_isa_name(x->best));
    bcase cases[] = {
        {"BLT k=4", DPC_MECH_BLT, DPC_SAMPLER_FIXED, 0, 0},
        {"nu-DP-FTRL nu=0.01", DPC_MECH_NU, DPC_SAMPLER_FIXED, 0.01, 0},
        {"BSR bands=32, momentum 0.9", DPC_MECH_BSR, DPC_SAMPLER_FIXED, 0, 32},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        double e[2];
        for (size_t T = 1; T <= 2; T++) {
            double v[ROUNDS];
            for (int r = 0; r < ROUNDS; r++) {
                dpc_trainer *t = make_trainer(x->models[x->best - 1], x->train, x->test,
                                              &cases[c], T, x->best, 1, DPC_PRECISION_DOUBLE);
                v[r] = throughput(t, STEPS / 2);
                dpc_trainer_free(t);
            }
            e[T - 1] = bench_median(v, ROUNDS);
        }
        printf("%-28s %9.0f examples/s (1 thread) %9.0f (2 threads)\n", cases[c].name, e[0], e[1]);
    }
}

/* 6 (issue 29): end to end = kernels. `dpcorr train` (one epoch, the report's examples_per_s
 * over its steps, which include sampling, noise and update) next to the library trainer of the
 * same configuration (the loop above, at the levels the CLI measures: dpc_tune_isa), both
 * seeded, double and float32, and next to torch float32; rounds alternate the three. The CLI's
 * default secure mode once more, and the CLI's time split (report final.time_split_s). */
static int cli_run(const char *prec, int secure, const char *report, double *eps, char *split,
                   size_t cap)
{
    fflush(stdout); /* else the child's freopen writes the parent's pending output once more */
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) _exit(127);
        char lr[32], mom[32], batch[32];
        snprintf(lr, sizeof lr, "%g", LR);
        snprintf(mom, sizeof mom, "%g", MOMENTUM);
        snprintf(batch, sizeof batch, "%d", BATCH);
        if (secure)
            execl("build/dpcorr", "dpcorr", "train", "--data", "fashion-mnist", "--model",
                  "mlp:256:tanh", "--epochs", "1", "--batch", batch, "--lr", lr, "--momentum",
                  mom, "--epsilon", "3", "--accountant", "rdp", "--threads", "2", "--precision",
                  prec, "--quiet", "--report", report, (char *)NULL);
        else
            execl("build/dpcorr", "dpcorr", "train", "--data", "fashion-mnist", "--model",
                  "mlp:256:tanh", "--epochs", "1", "--batch", batch, "--lr", lr, "--momentum",
                  mom, "--epsilon", "3", "--accountant", "rdp", "--threads", "2", "--precision",
                  prec, "--seed", "1", "--quiet", "--report", report, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
        return 0;
    FILE *f = fopen(report, "r");
    if (!f) return 0;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *e = strstr(buf, "\"examples_per_s\": "), *t = strstr(buf, "\"time_split_s\": ");
    if (!e) return 0;
    *eps = strtod(e + 18, NULL);
    if (split && t) {
        const char *end = strchr(t, '}');
        size_t len = end ? (size_t)(end - t) + 1 : 0;
        snprintf(split, cap, "%.*s", (int)(len < cap ? len : cap - 1), t);
    }
    return 1;
}

static void bench_end_to_end(ctx *x)
{
    if (!x->real || access("build/dpcorr", X_OK) != 0) {
        printf("\n(no Fashion-MNIST or no build/dpcorr: no end-to-end comparison)\n");
        return;
    }
    dpc_tune_levels tu;
    dpc_error err = {0};
    dpc_isa gemm = x->best, noise = x->best;
    if (!dpc_tune_isa(&tu, &err)) {
        gemm = tu.level[DPC_TUNE_GEMM];
        noise = tu.level[DPC_TUNE_NOISE];
    }
    char report[] = "/tmp/dpcorr-bench-e2e-XXXXXX";
    int fd = mkstemp(report);
    if (fd < 0) return;
    close(fd);
    printf("\n== end to end: dpcorr train (one epoch, 2 threads, seeded) vs the trainer loop of the "
           "same configuration (model %s, noise %s, as dpc_tune_isa chose)\n",
           dpc_isa_name(gemm), dpc_isa_name(noise));
    const dpc_precision precs[2] = {DPC_PRECISION_DOUBLE, DPC_PRECISION_FLOAT32};
    const char *pname[2] = {"double", "float32"};
    double kern[2][ROUNDS], cli[2][ROUNDS], torch[ROUNDS], sec[ROUNDS];
    char split[2][512] = {"", ""}, args[256];
    const char *tkeys[1] = {"examples_per_s"};
    int have_t = x->have_torch;
    torch_args(args, sizeof args, x, 5, "float32");
    dpc_model *m = make_model(x->train->d, x->train->n_classes, gemm);
    for (int r = 0; r < ROUNDS; r++) {
        if (have_t) have_t = bench_anchor(args, tkeys, &torch[r], 1, x->why, sizeof x->why);
        for (int p = 0; p < 2; p++) {
            dpc_trainer *t = make_trainer(m, x->train, x->test, &SGD, 2, noise, 1, precs[p]);
            kern[p][r] = throughput(t, STEPS);
            dpc_trainer_free(t);
            if (!cli_run(pname[p], 0, report, &cli[p][r], split[p], sizeof split[p]))
                cli[p][r] = NAN;
        }
        if (!cli_run("double", 1, report, &sec[r], NULL, 0)) sec[r] = NAN;
    }
    unlink(report);
    dpc_model_free(m);
    double tf = have_t ? bench_median(torch, ROUNDS) : NAN;
    printf("%-8s %16s %16s %12s %18s\n", "", "trainer ex/s", "dpcorr train ex/s", "train/loop",
           "train / torch f32");
    for (int p = 0; p < 2; p++) {
        double k = bench_median(kern[p], ROUNDS), c = bench_median(cli[p], ROUNDS);
        printf("%-8s %16.0f %16.0f %11.2fx %17.1fx\n", pname[p], k, c, c / k, c / tf);
    }
    printf("dpcorr train, secure mode (the default), double: %.0f examples/s\n",
           bench_median(sec, ROUNDS));
    if (have_t) printf("torch float32 (2 threads): %.0f examples/s\n", tf);
    else printf("torch anchor not available (%s)\n", x->why);
    printf("targets: dpcorr train within 15%% of the trainer loop (train/loop >= 0.85); end to end "
           ">= 60x torch float32 (double and float32 rows)\n");
    for (int p = 0; p < 2; p++)
        if (split[p][0]) printf("time split, %s, last round (s): %s\n", pname[p], split[p]);
}

/* Fashion-MNIST, or a synthetic stand-in of the same shape. */
static int load_data(ctx *x)
{
    dpc_error err = {0};
    x->real = dpc_data_load_fashion_mnist(&x->train, &x->test, NULL, &err) == DPC_OK;
    if (x->real) return 1;
    size_t N = 20000, D = 784;
    printf("(Fashion-MNIST not available: %s; synthetic data, no torch comparison)\n", err.msg);
    snprintf(x->why, sizeof x->why, "no Fashion-MNIST");
    if (dpc_dataset_new(&x->train, N, D, 10, &err)) return 0;
    dpc_rng rng;
    dpc_rng_seed(&rng, 1);
    dpc_rng_stream s = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_TEST, 9));
    dpc_rng_gaussian_fill(&s, 0, 0, x->train->x, N * D);
    for (size_t i = 0; i < N * D; i++) x->train->x[i] = 0.5 + 0.25 * x->train->x[i];
    for (size_t i = 0; i < N; i++) x->train->y[i] = (double)dpc_rng_below(&s, 1, i, 10);
    return 1;
}

int main(void)
{
    bench_machine();
    ctx x;
    memset(&x, 0, sizeof x);
    if (!load_data(&x)) return 1;
    for (int l = 0; l < 3; l++)
        if (dpc_isa_supported(LEVELS[l]))
            x.models[l] = make_model(x.train->d, x.train->n_classes, LEVELS[l]);
    x.best = dpc_isa_detect();
    x.have_torch = x.real;
    dpc_trainer *t0 = make_trainer(x.models[x.best - 1], x.train, x.test, &SGD, 2, x.best, 1,
                                   DPC_PRECISION_DOUBLE);
    x.sigma = dpc_trainer_ledger(t0)->noise_std; /* std of the noise per unit clip (DP-SGD: z) */
    dpc_trainer_free(t0);
    printf("\n== training throughput, MLP 784-256-10 tanh (P = %zu), DP-SGD (Poisson), batch %d, "
           "%s, double\n", dpc_model_num_params(x.models[0]), BATCH,
           x.real ? "Fashion-MNIST" : "synthetic data");
    printf("(wall clock; %d rounds of %d steps, medians; rounds alternate with the torch anchor)\n",
           ROUNDS, STEPS);
    bench_levels(&x);
    bench_accuracy(&x);
    bench_float32(&x);
    bench_correlated(&x);
    bench_end_to_end(&x);
    for (int l = 0; l < 3; l++) dpc_model_free(x.models[l]);
    dpc_dataset_free(x.train);
    dpc_dataset_free(x.test);
    printf("\nload average at the end: %.2f\n", bench_loadavg());
    return 0;
}
