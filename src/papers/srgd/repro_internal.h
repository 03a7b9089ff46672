/* repro_internal.h — the run jobs of the DP-SRGD reproduction (repro_jobs.c), shared with
 * repro.c (not public; the contract is the reproduction's section of dpcorr/papers/srgd.h). */
#ifndef DPCORR_SRC_SRGD_REPRO_INTERNAL_H
#define DPCORR_SRC_SRGD_REPRO_INTERNAL_H

#include "dpcorr/papers/srgd.h"

/* What a job runs: DP-SRGD (its variant and noise) or a core-trainer baseline; a calibration
 * builds the trainer for (eps, delta) and returns its noise multiplier without a step. */
enum { SRGD_JOB_SRGD = 0, SRGD_JOB_DPSGD = 1, SRGD_JOB_DPFTRL = 2, SRGD_JOB_CALIB_SGD = 3,
       SRGD_JOB_CALIB_FTRL = 4 };

/* One training run on a freshly drawn synthetic problem. */
typedef struct srgd_job {
    /* the problem: P2 (or P1) sparse design, fresh data per seed */
    dpc_srgd_problem_kind kind;
    size_t n, p, rel;
    double w;                /* |w0| (x-dagger = w0 inside C = B(0, 2)) */
    uint64_t seed;
    /* the algorithm */
    int alg;
    dpc_srgd_regime regime;
    double cc, eps;
    dpc_srgd_variant var;
    dpc_srgd_noise noise;
    size_t bbatch;           /* trainer baselines: batch */
    double lr;               /* trainer baselines: learning rate */
    double sigma;            /* trainer baselines: noise multiplier (calibrations: output) */
    int want_trace;
    /* results */
    double excess, beta, cpu;
    size_t T, B;
    dpc_srgd_step_info *trace;
    dpc_error err;           /* err.status != DPC_OK: the job failed */
} srgd_job;

/* Runs every job on p->threads threads (results independent of the thread count); the first
 * failed job's error is returned. */
dpc_status dpc__srgd_repro_run_jobs(const dpc_srgd_repro_params *p, srgd_job *jobs, size_t n,
                                    dpc_error *err);

#endif
