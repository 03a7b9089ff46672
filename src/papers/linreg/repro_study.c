/* repro_study.c — the runs of the DP-AMBSSGD reproduction (`dpcorr repro ambssgd`): one job per
 * seed of a sweep point, each drawing its data set and running every arm on it, on a pool of
 * threads; the statistics are repro.c's (dpcorr/papers/linreg.h, "The reproduction"). */
#include "common/util.h"
#include "linreg/repro_internal.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* run_algo's sums over the steps: clipped examples, the tail's sum of zeta^2, the traces. */
typedef struct run_sums {
    size_t tail_start;
    double *tz, *tg;
    size_t clipped;
    double z2;
} run_sums;

static int add_step(void *ctx, const void *info, size_t t)
{
    run_sums *rs = ctx;
    const dpc_linreg_step_info *in = info;
    (void)t;
    rs->clipped += in->clipped;
    if (in->step >= rs->tail_start) rs->z2 += in->zeta * in->zeta;
    if (in->step < DPC_LINREG_REPRO_MAXT && rs->tz)
        rs->tz[in->step] = in->zeta, rs->tg[in->step] = in->gamma;
    return 0;
}

/* The options of one arm: the paper's calibrations: Thm. 3.7's closed form (paper_alpha), or
 * Thm. 3.6's alpha* (the exact inverse of rho = 1/alpha^2 under Bun & Steinke) given as the
 * noise multiplier; the fixed-clip baseline by zCDP; DP-SSGD by the shuffling theorem with the
 * exact eps0. The prior: the spectrum's, ||w*||_H = 1 and the true sigma. */
static dpc_status arm_opts(dpc_linreg_opts *o, const dpc_dataset *ds, const amb_arm *a,
                           dpc_error *err)
{
    dpc_linreg_opts_init(o, a->algo);
    o->delta = DPC__AMB_PAPER_DELTA;
    o->allow_large_delta = 1;
    o->epsilon = a->eps;
    if (a->algo == DPC_LINREG_AMBSSGD && !a->paper_alpha) {
        dpc_status st = dpc_account_ambssgd_alpha(a->eps, o->delta, 0, &o->noise_multiplier, err);
        if (st) return st;
        o->epsilon = 0;
    } else if (a->paper_alpha || a->algo == DPC_LINREG_FIXED) {
        o->calibration = DPC_CALIBRATION_PAPER;
    }
    o->dpstat_rule = a->rule;
    o->stat_batch = a->stat_batch;
    o->stream = a->stream;
    dpc_status st = dpc_linreg_prior_from_spectrum(&o->prior, ds->cov_diag, ds->d, err);
    o->prior.w_bound = 1;            /* ||w*||_H = 1 */
    o->prior.sigma_bound = a->sigma; /* the note's B and fixed clip use the true sigma */
    return st;
}

/* One run of an arm on ds: its risk, clip fraction and O5 oracle (adaptive runs); *s_out the
 * stat batch, *T_out the steps (may be NULL); a->tz / tg (T) may be NULL. */
static dpc_status run_algo(const dpc_dataset *ds, const amb_arm *a, const dpc_rng *rng,
                           dpc__amb_run *out, size_t *s_out, size_t *T_out, dpc_error *err)
{
    dpc_linreg_opts o;
    dpc_linreg *lr = NULL;
    dpc_status st = arm_opts(&o, ds, a, err);
    if (!st) st = dpc_linreg_new(&lr, ds, &o, rng, err);
    if (st) return dpc_error_prefix(err, "%s", dpc_linreg_algo_name(a->algo));
    const dpc_linreg_plan *P = dpc_linreg_plan_get(lr);
    double w[64];
    dpc_linreg_step_info in;
    run_sums rs = {P->tail_start, a->tz, a->tg, 0, 0};
    dpc_run run = dpc_linreg_run_ops(lr);
    dpc_run_hooks h = {.ctx = &rs, .on_step = add_step};
    if ((st = dpc_run_drive(&run, &in, NULL, &h, NULL, err)) ||
        (st = dpc_linreg_average(lr, w, err))) {
        dpc_linreg_free(lr);
        return dpc_error_prefix(err, "%s", dpc_linreg_algo_name(a->algo));
    }
    double T = (double)P->steps, b = (double)P->batch, al = P->ledger.noise_multiplier,
           d = (double)ds->d, sg = a->sigma;
    out->risk = dpc_linreg_excess_risk(w, ds->truth, ds->cov_diag, ds->d);
    out->clipf = (double)rs.clipped / (T * b);
    out->oracle = sg * sg * d / (T * b) +
                  (a->algo == DPC_LINREG_AMBSSGD
                       ? 4 * rs.z2 / (T - (double)P->tail_start) * al * al * d / (T * b * b) : 0);
    if (s_out) *s_out = P->stat_batch;
    if (T_out) *T_out = P->steps;
    dpc_linreg_free(lr);
    return DPC_OK;
}

static dpc_status run_ssp(const dpc_dataset *ds, double sigma, const dpc_rng *rng,
                          uint32_t stream, dpc__amb_run *out, dpc_error *err)
{
    double w[64];
    /* the note's default bounds for the run's prior (as run_algo's): R_x = sqrt(Tr H),
     * ||w*||_H = 1, the true sigma */
    dpc_linreg_prior pr;
    dpc_linreg_prior_init(&pr);
    pr.sigma_bound = sigma;
    dpc_linreg_ssp_opts so = {.epsilon = 1.0, .delta = DPC__AMB_PAPER_DELTA, .stream = stream,
                              .allow_large_delta = 1}; /* bounds: the note's, below */
    dpc_status st = dpc_linreg_prior_from_spectrum(&pr, ds->cov_diag, ds->d, err);
    if (!st) dpc_linreg_ssp_bounds(&so, &pr, ds->n);
    if (st || (st = dpc_linreg_ssp(ds, &so, rng, w, NULL, err))) return dpc_error_prefix(err, "ssp");
    out->risk = dpc_linreg_excess_risk(w, ds->truth, ds->cov_diag, ds->d);
    return DPC_OK;
}

static amb_arm arm(dpc_linreg_algo algo, double eps, int paper_alpha, dpc_dpstat_rule rule,
                   size_t stat_batch, double sigma, uint32_t stream)
{
    return (amb_arm){algo, eps, paper_alpha, rule, stat_batch, sigma, stream, NULL, NULL};
}

/* A sigma-sweep job: every arm on one data set (at sigma = 1 also eps, exact alpha*, SSGD). */
static dpc_status job_sigma(dpc__amb_study *S, const dpc__amb_job *j, const dpc_dataset *ds,
                            const dpc_rng *rng, dpc_error *err)
{
    const dpc_linreg_repro_grid *cf = &S->grid;
    double sg = cf->sig[j->idx];
    uint32_t k = (uint32_t)j->seed;
    const dpc_dpstat_rule M = DPC_DPSTAT_MARGIN;
    dpc__amb_run *r = S->sig[j->idx][j->seed];
    size_t s = 0, T = 0;
    int first = j->seed == 0;
    amb_arm ad = arm(DPC_LINREG_AMBSSGD, 1, 1, M, 0, sg, k);
    if (first) ad.tz = S->zeta[j->idx], ad.tg = S->gamma[j->idx];
    dpc_status st = run_algo(ds, &ad, rng, &r[DPC_LINREG_REPRO_ADAPTIVE], &s, &T, err);
    if (st) return st;
    if (first && j->idx == 0) S->T0 = T; /* the same T for every sigma */
    amb_arm fx = arm(DPC_LINREG_FIXED, 1, 0, M, 0, sg, k), np = arm(DPC_LINREG_SGD, 0, 0, M, s, sg, k),
            pa = arm(DPC_LINREG_AMBSSGD, 1, 1, DPC_DPSTAT_PAPER, 0, sg, k);
    if ((st = run_algo(ds, &fx, rng, &r[DPC_LINREG_REPRO_FIXED], NULL, NULL, err)) ||
        (st = run_algo(ds, &np, rng, &r[DPC_LINREG_REPRO_NONPRIVATE], NULL, NULL, err)) ||
        (st = run_ssp(ds, sg, rng, k, &r[DPC_LINREG_REPRO_SSP], err)) ||
        (st = run_algo(ds, &pa, rng, &r[DPC_LINREG_REPRO_PAPER_RULE], NULL, NULL, err)))
        return st;
    if (sg != 1.0) return DPC_OK;
    for (size_t e = 0; e < cf->neps; e++) {
        amb_arm ae = arm(DPC_LINREG_AMBSSGD, cf->eps[e], 1, M, 0, sg, k);
        if ((st = run_algo(ds, &ae, rng, &S->eps[e][j->seed], NULL, NULL, err))) return st;
    }
    amb_arm ex = arm(DPC_LINREG_AMBSSGD, 1, 0, M, 0, sg, k), ss = arm(DPC_LINREG_SSGD, 1, 0, M, 0, sg, k);
    if ((st = run_algo(ds, &ex, rng, &S->exact[j->seed], NULL, NULL, err))) return st;
    if (j->seed < cf->ssgd_seeds) return run_algo(ds, &ss, rng, &S->ssgd[j->seed], NULL, NULL, err);
    return DPC_OK;
}

/* adaptive and non-private (the adaptive run's stat layout) on one data set of the N or d sweep */
static dpc_status pair(const dpc_dataset *ds, uint32_t k, const dpc_rng *rng, dpc__amb_run out[2],
                       dpc_error *err)
{
    size_t s = 0;
    amb_arm ad = arm(DPC_LINREG_AMBSSGD, 1, 1, DPC_DPSTAT_MARGIN, 0, 1, k);
    dpc_status st = run_algo(ds, &ad, rng, &out[0], &s, NULL, err);
    if (st) return st;
    amb_arm np = arm(DPC_LINREG_SGD, 0, 0, DPC_DPSTAT_MARGIN, s, 1, k);
    return run_algo(ds, &np, rng, &out[1], NULL, NULL, err);
}

static dpc_status do_job(dpc__amb_study *S, const dpc__amb_job *j, const dpc_rng *rng,
                         dpc_error *err)
{
    const dpc_linreg_repro_grid *cf = &S->grid;
    dpc_dataset *ds = NULL;
    uint32_t k = (uint32_t)j->seed;
    size_t n = j->kind == 0 ? cf->n0 : j->kind == 1 ? cf->ns[cf->nn - 1] : cf->d_n;
    size_t d = j->kind == 2 ? cf->ds[j->idx] : cf->d0;
    double sg = j->kind == 0 ? cf->sig[j->idx] : 1.0;
    dpc_status st = dpc_data_synth_linreg(&ds, rng, k, n, d, 0.0, sg, NULL, err);
    if (st) return dpc_error_prefix(err, "data");
    if (j->kind == 0) {
        st = job_sigma(S, j, ds, rng, err);
    } else if (j->kind == 1) { /* N sweep: prefixes of one set (the generator is prefix-stable) */
        for (size_t i = 0; i < cf->nn && !st; i++) {
            dpc_dataset v = *ds;
            v.n = cf->ns[i];
            st = pair(&v, k, rng, S->nsw[i][j->seed], err);
        }
    } else {
        st = pair(ds, k, rng, S->dsw[j->idx][j->seed], err);
    }
    dpc_dataset_free(ds);
    return st;
}

static void *worker(void *arg)
{
    dpc__amb_study *S = arg;
    dpc_rng rng;
    dpc_rng_seed(&rng, S->seed);
    for (;;) {
        pthread_mutex_lock(&S->mu);
        size_t i = S->next++;
        int stop = i >= S->njobs || S->err.status;
        pthread_mutex_unlock(&S->mu);
        if (stop) break;
        dpc_error e = {0};
        dpc_status st = do_job(S, &S->jobs[i], &rng, &e);
        pthread_mutex_lock(&S->mu);
        if (st && !S->err.status) S->err = e; /* the first failure is the study's */
        pthread_mutex_unlock(&S->mu);
    }
    return NULL;
}

size_t dpc__amb_jobs(const dpc_linreg_repro_grid *cf, dpc__amb_job *jobs)
{
    size_t nj = 0;
    for (size_t s = 0; s < cf->n_seeds; s++) jobs[nj++] = (dpc__amb_job){1, 0, s}; /* biggest first */
    for (size_t i = cf->nd; i-- > 0;)
        for (size_t s = 0; s < cf->d_seeds; s++) jobs[nj++] = (dpc__amb_job){2, i, s};
    for (size_t i = 0; i < cf->nsig; i++)
        for (size_t s = 0; s < cf->seeds; s++) jobs[nj++] = (dpc__amb_job){0, i, s};
    return nj;
}

dpc_status dpc__amb_run_study(dpc__amb_study *S, size_t threads, size_t *started, dpc_error *err)
{
    enum { MAX_THREADS = 64 };
    pthread_t th[MAX_THREADS];
    size_t nth = 0, nt = threads < MAX_THREADS ? threads : MAX_THREADS;
    if (pthread_mutex_init(&S->mu, NULL)) return dpc_error_set(err, DPC_E_NOMEM, "mutex");
    S->njobs = dpc__amb_jobs(&S->grid, S->jobs);
    for (size_t i = 0; nt > 1 && i < nt; i++)
        if (pthread_create(&th[nth], NULL, worker, S) == 0) nth++;
    if (nth == 0) worker(S); /* one thread, or none could start: the caller's */
    for (size_t i = 0; i < nth; i++) pthread_join(th[i], NULL);
    pthread_mutex_destroy(&S->mu);
    *started = nth ? nth : 1;
    if (S->err.status && err) *err = S->err;
    return S->err.status;
}
