/* repro_internal.h — the study of the DP-AMBSSGD reproduction (repro_study.c), shared with
 * repro.c (not public; the contract is the reproduction's section of dpcorr/papers/linreg.h). */
#ifndef DPCORR_SRC_LINREG_REPRO_INTERNAL_H
#define DPCORR_SRC_LINREG_REPRO_INTERNAL_H

#include "dpcorr/papers/linreg.h"

#include <pthread.h>

/* The paper's delta (Varshney, Thakurta & Jain 2022, its experiments). */
#define DPC__AMB_PAPER_DELTA DPC_LINREG_REPRO_DELTA

enum { AMB_MAXS = DPC_LINREG_REPRO_MAXS, AMB_MAXE = DPC_LINREG_REPRO_MAXE,
       AMB_MAXN = DPC_LINREG_REPRO_MAXN, AMB_MAXD = DPC_LINREG_REPRO_MAXD,
       AMB_MAXSEED = DPC_LINREG_REPRO_MAXSEED, AMB_NA = DPC_LINREG_REPRO_NARMS };

/* One arm's run on a data set. */
typedef struct dpc__amb_run {
    double risk, clipf, oracle; /* oracle: note O5 (adaptive runs) */
} dpc__amb_run;

/* What an arm runs: the algorithm at eps (paper_alpha: Thm. 3.7's closed form), the DP-STAT
 * rule, a stat batch to skip (matched layouts), the true sigma, the stream; the traces of
 * zeta_t and gamma_t (may be NULL). */
typedef struct amb_arm {
    dpc_linreg_algo algo;
    double eps;
    int paper_alpha;
    dpc_dpstat_rule rule;
    size_t stat_batch;
    double sigma;
    uint32_t stream;
    double *tz, *tg;
} amb_arm;

typedef struct dpc__amb_job {
    int kind; /* 0 sigma, 1 N, 2 d */
    size_t idx, seed;
} dpc__amb_job;

typedef struct dpc__amb_study {
    dpc_linreg_repro_grid grid;
    uint64_t seed;
    dpc__amb_run sig[AMB_MAXS][AMB_MAXSEED][AMB_NA];
    dpc__amb_run eps[AMB_MAXE][AMB_MAXSEED], exact[AMB_MAXSEED], ssgd[AMB_MAXSEED];
    dpc__amb_run nsw[AMB_MAXN][AMB_MAXSEED][2], dsw[AMB_MAXD][AMB_MAXSEED][2];
    double zeta[AMB_MAXS][DPC_LINREG_REPRO_MAXT], gamma[AMB_MAXS][DPC_LINREG_REPRO_MAXT];
    size_t T0;
    /* the job queue */
    dpc__amb_job jobs[AMB_MAXS * AMB_MAXSEED + AMB_MAXSEED + AMB_MAXD * AMB_MAXSEED];
    pthread_mutex_t mu;
    size_t next, njobs;
    dpc_error err; /* the first failure */
} dpc__amb_study;

/* The jobs of a grid into jobs (room for the maximum); returns their number. */
size_t dpc__amb_jobs(const dpc_linreg_repro_grid *cf, dpc__amb_job *jobs);
/* Runs every job of S (grid and seed set) on `threads` threads; *started: threads used. */
dpc_status dpc__amb_run_study(dpc__amb_study *S, size_t threads, size_t *started,
                              dpc_error *err);

#endif
