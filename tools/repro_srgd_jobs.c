/* repro_srgd_jobs.c — the run jobs of `dpcorr repro srgd` and their statistics; see
 * repro_srgd.h. */
#include "cli.h"
#include "repro.h"
#include "repro_srgd.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ==== jobs ============================================================================ */

static void job_fail(sjob *j, const dpc_error *e)
{
    j->failed = 1;
    snprintf(j->err, sizeof j->err, "%s", e->msg);
}

/* The core trainer's DP-SGD (identity, Poisson sampling, amplified) or DP-FTRL (tree, fixed
 * order, whole-run GDP), one epoch. Calibration jobs build the trainer for (eps, delta) with the
 * PLD accountant and return its noise multiplier; the runs then use it as given. */
static void run_trainer(sjob *j, dpc_srgd_problem *pr, const dpc_model *m, const dpc_rng *rng)
{
    dpc_error err = {0};
    dpc_train_config tc;
    dpc_train_config_init(&tc);
    dpc_mech_params_init(&tc.mech);
    int sgd = j->alg == ALG_DPSGD || j->alg == ALG_CALIB_SGD;
    int calib = j->alg >= ALG_CALIB_SGD;
    tc.mech.kind = sgd ? DPC_MECH_IDENTITY : DPC_MECH_TREE;
    tc.mech.steps = 1;
    tc.sampler = sgd ? DPC_SAMPLER_POISSON : DPC_SAMPLER_FIXED;
    tc.batch = j->bbatch;
    tc.epochs = 1;
    tc.epsilon = calib ? j->eps : 0;
    tc.noise_multiplier = j->sigma;
    tc.delta = 1e-6;
    /* calibration by the trainer's PLD accountant (tight); the runs then only report their
     * epsilon, by RDP (fast, an upper bound) */
    tc.accountant = calib ? DPC_ACCOUNTANT_PLD : DPC_ACCOUNTANT_RDP;
    double L;
    dpc_srgd_problem_constants(pr, &L, NULL, NULL);
    tc.clip = L; /* the per-example gradient bound: clipping never binds */
    tc.lr = j->lr;
    tc.isa = cli_isa_for(DPC_TUNE_NOISE);
    dpc_trainer *tr = NULL;
    if (dpc_trainer_new(&tr, m, dpc_srgd_problem_data(pr), NULL, &tc, rng, &err)) {
        job_fail(j, &err);
        return;
    }
    const dpc_ledger *led = dpc_trainer_ledger(tr);
    if (calib) {
        j->sigma = led->noise_multiplier;
        if (!(led->epsilon <= j->eps * (1 + 1e-9))) {
            snprintf(j->err, sizeof j->err, "baseline epsilon %g exceeds %g", led->epsilon, j->eps);
            j->failed = 1;
        }
        dpc_trainer_free(tr);
        return;
    }
    dpc_run run = dpc_trainer_run_ops(tr);
    if (dpc_run_drive(&run, NULL, NULL, NULL, NULL, &err)) job_fail(j, &err);
    j->T = dpc_trainer_steps_total(tr);
    j->B = j->bbatch;
    if (!j->failed && dpc_srgd_problem_excess(pr, dpc_trainer_params(tr), &j->excess, &err))
        job_fail(j, &err);
    dpc_trainer_free(tr);
}

static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void run_job_timed(sjob *j);

static void run_job(sjob *j)
{
    double t0 = thread_cpu();
    run_job_timed(j);
    j->cpu = thread_cpu() - t0;
}

static void run_job_timed(sjob *j)
{
    dpc_error err = {0};
    dpc_srgd_problem_config pc;
    dpc_srgd_problem_config_init(&pc);
    pc.kind = j->kind;
    pc.n = j->n;
    pc.p = j->p;
    pc.relevant = j->rel;
    pc.w_norm = j->w;
    dpc_rng rng;
    dpc_rng_seed(&rng, j->seed);
    dpc_srgd_problem *pr = NULL;
    dpc_model *m = NULL;
    dpc_srgd *s = NULL;
    j->excess = NAN;
    if (dpc_srgd_problem_new(&pr, &pc, &rng, 0, &err) ||
        cli_model_new(&m, NULL, dpc_srgd_problem_model_spec(pr), j->p, NULL,
                      j->kind == DPC_SRGD_P1_LOGISTIC ? 2 : 0, &err)) {
        job_fail(j, &err);
        goto done;
    }
    if (j->alg != ALG_SRGD) {
        run_trainer(j, pr, m, &rng);
        goto done;
    }
    dpc_srgd_config c;
    dpc_srgd_config_init(&c);
    dpc_srgd_problem_constants(pr, &c.L, &c.M, &c.R);
    c.epsilon = j->eps;
    c.delta = 1e-6; /* the paper's, kept where it is >= 1/N (n = 10^6); the default is from N */
    c.allow_large_delta = 1;
    c.variant = j->var;
    c.noise = j->noise;
    if (dpc_srgd_preset(&c, j->regime, j->cc, 0, j->n, j->p, &err)) {
        job_fail(j, &err);
        goto done;
    }
    j->beta = c.beta;
    j->T = c.steps;
    j->B = c.batch;
    if (j->want_trace) {
        c.risk = dpc_srgd_problem_risk;
        c.risk_ctx = pr;
        c.eval_every = 1;
        j->trace = calloc(c.steps, sizeof *j->trace);
    }
    if (dpc_srgd_new(&s, m, dpc_srgd_problem_data(pr), &c, &rng, &err) ||
        dpc_srgd_run(s, j->trace, &err) ||
        dpc_srgd_problem_excess(pr, dpc_srgd_output(s), &j->excess, &err))
        job_fail(j, &err);
done:
    dpc_srgd_free(s);
    dpc_model_free(m);
    dpc_srgd_problem_free(pr);
}

typedef struct pool {
    sjob *jobs;
    size_t njobs, next;
    pthread_mutex_t mu;
} pool;

static void *worker(void *arg)
{
    pool *P = arg;
    for (;;) {
        pthread_mutex_lock(&P->mu);
        size_t i = P->next++;
        pthread_mutex_unlock(&P->mu);
        if (i >= P->njobs) return NULL;
        run_job(&P->jobs[i]);
    }
}

/* Runs every job on min(2, cores) threads; returns 1 (message printed) if one failed. */
int srgd_run_jobs(sjob *jobs, size_t n)
{
    pool P = {jobs, n, 0, PTHREAD_MUTEX_INITIALIZER};
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t nt = cores >= 2 ? 2 : 1;
    pthread_t th[2];
    size_t started = 0;
    for (size_t t = 1; t < nt; t++)
        if (pthread_create(&th[t], NULL, worker, &P) == 0) started = t;
    worker(&P);
    for (size_t t = 1; t <= started; t++) pthread_join(th[t], NULL);
    for (size_t i = 0; i < n; i++)
        if (jobs[i].failed) {
            fprintf(stderr, "dpcorr repro: srgd run failed: %s\n", jobs[i].err);
            return 1;
        }
    return 0;
}

/* ==== statistics ============================================================================ */

/* mean and standard error of the excess over the `ns` consecutive seed jobs starting at j */
void srgd_mean_se(const sjob *j, size_t ns, double *mean, double *se)
{
    double s = 0, s2 = 0;
    for (size_t k = 0; k < ns; k++) s += j[k].excess;
    double m = s / (double)ns;
    for (size_t k = 0; k < ns; k++) s2 += (j[k].excess - m) * (j[k].excess - m);
    *mean = m;
    *se = ns > 1 ? sqrt(s2 / (double)(ns - 1) / (double)ns) : NAN;
}

/* Slope of log(mean over seeds) on log x, with its jackknife standard error over seeds: the
 * series reuse the same seeds (common random numbers: data and noise keys) at every x, so the
 * points are correlated and the seed is the unit of replication. v: (npts, ns) row-major. */
double srgd_slope_jk(const double *x, const double *v, size_t npts, size_t ns, double *se)
{
    double y[16], yj[16];
    for (size_t i = 0; i < npts; i++) {
        y[i] = 0;
        for (size_t s = 0; s < ns; s++) y[i] += v[i * ns + s] / (double)ns;
    }
    double full = repro_loglog_slope(x, y, npts), acc = 0, acc2 = 0;
    if (ns < 2) {
        *se = NAN;
        return full;
    }
    for (size_t d = 0; d < ns; d++) {
        for (size_t i = 0; i < npts; i++)
            yj[i] = (y[i] * (double)ns - v[i * ns + d]) / (double)(ns - 1);
        double sl = repro_loglog_slope(x, yj, npts);
        acc += sl;
        acc2 += sl * sl;
    }
    double m = acc / (double)ns;
    *se = sqrt(fmax(0, (acc2 / (double)ns - m * m)) * (double)(ns - 1));
    return full;
}
