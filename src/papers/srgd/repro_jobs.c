/* repro_jobs.c — the run jobs of the DP-SRGD reproduction: one job is one training run on a
 * freshly drawn synthetic problem (DP-SRGD or a core-trainer baseline), run on a pool of
 * threads taking jobs in order; each job's result depends on its own seed only. */
#include "common/util.h"
#include "srgd/repro_internal.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static void job_fail(srgd_job *j, const dpc_error *e) { j->err = *e; }

/* The core trainer's DP-SGD (identity, Poisson sampling, amplified) or DP-FTRL (tree, fixed
 * order, whole-run GDP), one epoch. Calibration jobs build the trainer for (eps, delta) with the
 * PLD accountant and return its noise multiplier; the runs then use it as given. */
static void run_trainer(srgd_job *j, dpc_srgd_problem *pr, const dpc_model *m, const dpc_rng *rng,
                        dpc_isa noise_isa)
{
    dpc_error err = {0};
    dpc_train_config tc;
    dpc_train_config_init(&tc);
    dpc_mech_params_init(&tc.mech);
    int sgd = j->alg == SRGD_JOB_DPSGD || j->alg == SRGD_JOB_CALIB_SGD;
    int calib = j->alg >= SRGD_JOB_CALIB_SGD;
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
    tc.isa = noise_isa;
    dpc_trainer *tr = NULL;
    if (dpc_trainer_new(&tr, m, dpc_srgd_problem_data(pr), NULL, &tc, rng, &err)) {
        job_fail(j, &err);
        return;
    }
    const dpc_ledger *led = dpc_trainer_ledger(tr);
    if (calib) {
        j->sigma = led->noise_multiplier;
        if (!(led->epsilon <= j->eps * (1 + 1e-9)))
            dpc_error_set(&j->err, DPC_E_PRIVACY, "baseline epsilon %g exceeds %g", led->epsilon,
                          j->eps);
        dpc_trainer_free(tr);
        return;
    }
    dpc_run run = dpc_trainer_run_ops(tr);
    if (dpc_run_drive(&run, NULL, NULL, NULL, NULL, &err)) job_fail(j, &err);
    j->T = dpc_trainer_steps_total(tr);
    j->B = j->bbatch;
    if (!j->err.status && dpc_srgd_problem_excess(pr, dpc_trainer_params(tr), &j->excess, &err))
        job_fail(j, &err);
    dpc_trainer_free(tr);
}

static dpc_status job_model(dpc_model **m, const srgd_job *j, const dpc_srgd_problem *pr,
                            dpc_isa isa, dpc_error *err)
{
    dpc_model_config mc;
    dpc_status st = dpc_model_parse_shape(&mc, dpc_srgd_problem_model_spec(pr), j->p, NULL,
                                          j->kind == DPC_SRGD_P1_LOGISTIC ? 2 : 0, err);
    if (st) return st;
    mc.isa = isa;
    return dpc_model_new(m, &mc, err);
}

static void run_job(srgd_job *j, const dpc_srgd_repro_params *P)
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
    if (dpc_srgd_problem_new(&pr, &pc, &rng, 0, &err) || job_model(&m, j, pr, P->model_isa, &err)) {
        job_fail(j, &err);
        goto done;
    }
    if (j->alg != SRGD_JOB_SRGD) {
        run_trainer(j, pr, m, &rng, P->noise_isa);
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
        if (!(j->trace = dpc__calloc(c.steps, sizeof *j->trace))) {
            DPC__NOMEM(&j->err, "the trace");
            goto done;
        }
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
    const dpc_srgd_repro_params *P;
    srgd_job *jobs;
    size_t njobs, next;
    pthread_mutex_t mu;
} pool;

static void *worker(void *arg)
{
    pool *W = arg;
    for (;;) {
        pthread_mutex_lock(&W->mu);
        size_t i = W->next++;
        pthread_mutex_unlock(&W->mu);
        if (i >= W->njobs) return NULL;
        srgd_job *j = &W->jobs[i];
        double t0 = W->P->cpu_clock ? W->P->cpu_clock() : 0;
        run_job(j, W->P);
        j->cpu = W->P->cpu_clock ? W->P->cpu_clock() - t0 : 0;
    }
}

dpc_status dpc__srgd_repro_run_jobs(const dpc_srgd_repro_params *p, srgd_job *jobs, size_t n,
                                    dpc_error *err)
{
    enum { MAX_THREADS = 64 };
    pool W = {p, jobs, n, 0, PTHREAD_MUTEX_INITIALIZER};
    size_t nt = p->threads < MAX_THREADS ? p->threads : MAX_THREADS;
    pthread_t th[MAX_THREADS];
    size_t started = 0;
    for (size_t t = 1; t < nt; t++) /* a thread that cannot start leaves its jobs to the others */
        if (pthread_create(&th[started + 1], NULL, worker, &W) == 0) started++;
    worker(&W);
    for (size_t t = 1; t <= started; t++) pthread_join(th[t], NULL);
    for (size_t i = 0; i < n; i++)
        if (jobs[i].err.status) {
            if (err) *err = jobs[i].err;
            return jobs[i].err.status;
        }
    return DPC_OK;
}
