/* train_linreg_ckpt.c — checkpoints of `dpcorr train --algo dp-ambssgd|dp-ssgd`: the command's
 * items and its log so far, around the trainer's state (dpc_linreg_save) in the container of
 * dpcorr/train.h, written and read by the run frame (frame_run, frame_resume). */
#include "train_linreg.h"

#include <stdlib.h>

/* The log records by field name (the section "cli.log": these fields, record after record). */
static const frame_field LOG_FIELDS[] = {
    FRAME_CNT(log_rec, t),          FRAME_DBL(log_rec, gamma),
    FRAME_DBL(log_rec, zeta),       FRAME_DBL(log_rec, noise_std),
    FRAME_DBL(log_rec, clip_fraction), FRAME_DBL(log_rec, batch_loss),
    FRAME_DBL(log_rec, excess_risk), FRAME_CNT(log_rec, counts)};
#define NLOG (sizeof LOG_FIELDS / sizeof LOG_FIELDS[0])

void lr_ckpt_items(const lr_cli *c, const lr_out *u, dpc_ckpt *ck)
{
    dpc_ckpt_item_num(ck, "c1", "c1", c->o.c1);
    dpc_ckpt_item_num(ck, "dpstat_beta", "DP-STAT beta", c->o.dpstat_beta);
    dpc_ckpt_item_count(ck, "log_every", "steps per log record", u->every);
}

dpc_status lr_ckpt_put(const lr_out *u, dpc_ckpt *ck, dpc_error *err)
{
    double *lg = malloc((u->nlog * NLOG + 1) * sizeof *lg);
    if (!lg) return dpc_error_set(err, DPC_E_NOMEM, "out of memory");
    frame_pack(LOG_FIELDS, NLOG, u->lg, sizeof *u->lg, u->nlog, lg);
    dpc_status st = dpc_ckpt_put(ck, "cli.block", u->blk, 4, err);
    if (!st) st = dpc_ckpt_put(ck, "cli.log", lg, NLOG * u->nlog, err);
    free(lg);
    return st;
}

int lr_ckpt_get(const lr_cli *c, opt_set *s, lr_out *u, const dpc_ckpt *ck)
{
    dpc_error err = {0};
    size_t n = 0;
    const double *lg = dpc_ckpt_section(ck, "cli.log", &n);
    if (dpc_ckpt_get(ck, "cli.block", u->blk, 4, &err)) return frame_ckpt_fail(s, &err);
    if (n % NLOG || n / NLOG > u->cap)
        return opt_fail(s, "--resume: %s: a log of %zu values does not fit this run", c->fr.resume,
                        n);
    frame_unpack(LOG_FIELDS, NLOG, lg, sizeof *u->lg, n / NLOG, u->lg);
    u->nlog = n / NLOG;
    return 0;
}
