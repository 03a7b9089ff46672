/* train_linreg.h — the state of one `dpcorr train --algo dp-ambssgd|dp-ssgd` run shared by
 * train_linreg.c (options, run, report) and train_linreg_ckpt.c (its checkpoints). */
#ifndef DPCORR_TOOLS_TRAIN_LINREG_H
#define DPCORR_TOOLS_TRAIN_LINREG_H

#include "frame.h"
#include "dpcorr/papers/linreg.h"

enum { NPRIOR = 7 };

typedef struct lr_cli {
    run_frame fr;
    dpc_linreg_opts o;
    const char *src[NPRIOR]; /* where each public input came from */
    int given[NPRIOR];
    unsigned baselines; /* bit k: run dpc_linreg_baseline_kind k */
    size_t log_every;
    double ssp_x, ssp_y;
} lr_cli;

typedef struct log_rec {
    size_t t;
    double gamma, zeta, noise_std, clip_fraction, batch_loss, excess_risk;
    size_t counts;
} log_rec;

typedef struct base_res {
    const char *name;
    double risk, train_loss, test_loss, epsilon, seconds;
    char note[160];
} base_res;

typedef struct lr_out {
    const dpc_linreg_plan *P;
    log_rec *lg;
    size_t nlog, cap;       /* log records, their room */
    size_t every;           /* steps per log record */
    double blk[4];          /* clipped in total, and in the block: clipped, steps, loss sum */
    uint64_t params_hash;   /* of the output */
    double *w; /* (d) the output */
    double risk, train_loss, test_loss, clipf, wall, cpu;
    base_res br[4];
    size_t nb;
} lr_out;

/* train_linreg_ckpt.c: the run's checkpoint parts around the trainer's state (frame_run's hooks):
 * its items (options beyond the trainer's), its sections (the log so far), and --resume F's
 * sections into u (0 or an exit code, message printed). */
void lr_ckpt_items(const lr_cli *c, const lr_out *u, dpc_ckpt *ck);
dpc_status lr_ckpt_put(const lr_out *u, dpc_ckpt *ck, dpc_error *err);
int lr_ckpt_get(opt_set *s, lr_out *u, const dpc_ckpt *ck);

#endif
