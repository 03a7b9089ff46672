/* run_ops.c — the DP-FTRL trainer behind the one run interface (dpc_run_ops, dpcorr/train.h).
 * The papers' trainers have their tables in src/papers/<p>/. */
#include "dpcorr/train.h"
#include "train/train_internal.h"

static dpc_status tr_step(void *self, void *info, dpc_error *err)
{
    return dpc_trainer_step(self, info, err);
}
static size_t tr_done(const void *self) { return dpc_trainer_steps_done(self); }
static size_t tr_total(const void *self) { return dpc_trainer_steps_total(self); }
static const double *tr_params(const void *self, size_t *n)
{
    const dpc_trainer *tr = self;
    if (n) *n = tr->P;
    return dpc_trainer_params(tr);
}
static const dpc_ledger *tr_ledger(const void *self) { return dpc_trainer_ledger(self); }
static dpc_status tr_save(const void *self, dpc_ckpt *ck, const char *path, dpc_error *err)
{
    (void)ck;
    return dpc_trainer_save(self, path, err);
}
static dpc_status tr_restore(void *self, const dpc_ckpt *ck, const char *path, dpc_error *err)
{
    (void)ck;
    return dpc_trainer_resume(self, path, err);
}

static const dpc_run_ops TRAINER_OPS = {"dp-ftrl", 1,         tr_step, tr_done,   tr_total,
                                        tr_params, tr_ledger, tr_save, tr_restore};

dpc_run dpc_trainer_run_ops(dpc_trainer *tr) { return (dpc_run){&TRAINER_OPS, tr}; }
