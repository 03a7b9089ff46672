/* train_linreg_ckpt.c — checkpoints of `dpcorr train --algo dp-ambssgd|dp-ssgd`: the command's
 * items and its log so far, around the trainer's state (dpc_linreg_save) in the container of
 * dpcorr/train.h, written and read by the run frame (frame_run, frame_resume). */
#include "train_linreg.h"

#include <stddef.h>

/* The log records as a field table (dpcorr/field.h), packed by the library
 * (dpc_ckpt_put_records; the section "cli.log": these fields, record after record). */
#define LOG_NUM(m, ty) \
    {.name = #m, .type = ty, .offset = offsetof(log_rec, m), \
     .size = sizeof(((log_rec *)0)->m), .flags = DPC_FIELD_NO_RANGE}
static const dpc_field LOG_ROWS[] = {
    LOG_NUM(t, DPC_FIELD_SIZE),                 LOG_NUM(gamma, DPC_FIELD_DOUBLE),
    LOG_NUM(zeta, DPC_FIELD_DOUBLE),            LOG_NUM(noise_std, DPC_FIELD_DOUBLE),
    LOG_NUM(clip_fraction, DPC_FIELD_DOUBLE),   LOG_NUM(batch_loss, DPC_FIELD_DOUBLE),
    LOG_NUM(excess_risk, DPC_FIELD_DOUBLE),     LOG_NUM(counts, DPC_FIELD_SIZE)};
#define NLOG (sizeof LOG_ROWS / sizeof LOG_ROWS[0])
static const dpc_field_table LOG_TABLE = {.name = "log_rec", .size = sizeof(log_rec),
                                          .align = _Alignof(log_rec), .fields = LOG_ROWS,
                                          .count = NLOG};

void lr_ckpt_items(const lr_cli *c, const lr_out *u, dpc_ckpt *ck)
{
    dpc_ckpt_item_num(ck, "c1", "c1", c->o.c1);
    dpc_ckpt_item_num(ck, "dpstat_beta", "DP-STAT beta", c->o.dpstat_beta);
    dpc_ckpt_item_count(ck, "log_every", "steps per log record", u->every);
}

dpc_status lr_ckpt_put(const lr_out *u, dpc_ckpt *ck, dpc_error *err)
{
    dpc_status st = dpc_ckpt_put(ck, "cli.block", u->blk, 4, err);
    return st ? st : dpc_ckpt_put_records(ck, "cli.log", &LOG_TABLE, u->lg, u->nlog, err);
}

int lr_ckpt_get(opt_set *s, lr_out *u, const dpc_ckpt *ck)
{
    dpc_error err = {0};
    if (dpc_ckpt_get(ck, "cli.block", u->blk, 4, &err) ||
        dpc_ckpt_get_records(ck, "cli.log", &LOG_TABLE, u->lg, u->cap, &u->nlog, &err))
        return frame_ckpt_fail(s, &err);
    return 0;
}
