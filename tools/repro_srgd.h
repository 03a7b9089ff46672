/* repro_srgd.h — the run jobs of `dpcorr repro srgd` (tools/repro_srgd_jobs.c): one job is one
 * training run on a freshly drawn synthetic problem (DP-SRGD or a core-trainer baseline), run
 * on min(2, cores) threads; plus the seed statistics used by the reports. */
#ifndef DPCORR_TOOLS_REPRO_SRGD_H
#define DPCORR_TOOLS_REPRO_SRGD_H

#include "dpcorr.h"

enum { ALG_SRGD = 0, ALG_DPSGD = 1, ALG_DPFTRL = 2, ALG_CALIB_SGD = 3, ALG_CALIB_FTRL = 4 };

typedef struct sjob {
    /* problem: P2 (or P1) sparse design, fresh data per seed */
    dpc_srgd_problem_kind kind;
    size_t n, p, rel;
    double w;               /* |w0| (x-dagger = w0 inside C = B(0, 2)) */
    uint64_t seed;
    /* algorithm */
    int alg;
    dpc_srgd_regime regime;
    double cc, eps;
    dpc_srgd_variant var;
    dpc_srgd_noise noise;
    size_t bbatch;          /* trainer baselines: batch */
    double lr;              /* trainer baselines: learning rate */
    double sigma;           /* trainer baselines: noise multiplier (ALG_CALIB_*: output) */
    int want_trace;
    /* results */
    double excess, beta, cpu;
    size_t T, B;
    dpc_srgd_step_info *trace;
    int failed;
    char err[DPC_ERROR_MSG_LEN];
} sjob;

/* Runs every job on min(2, cores) threads (results independent of the thread count); returns 1
 * (message printed) if one failed. */
int srgd_run_jobs(sjob *jobs, size_t n);
/* mean and standard error of the excess over the ns consecutive seed jobs starting at j */
void srgd_mean_se(const sjob *j, size_t ns, double *mean, double *se);
/* Slope of log(mean over seeds) on log x with its jackknife standard error over the seeds.
 * v: (npts, ns) row-major; npts, ns <= 16. */
double srgd_slope_jk(const double *x, const double *v, size_t npts, size_t ns, double *se);

#endif
