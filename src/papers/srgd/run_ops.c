/* run_ops.c — Accelerated-DP-SRGD behind the one run interface (dpc_run_ops, dpcorr/train.h). */
#include "dpcorr/papers/srgd.h"

static dpc_status sg_step(void *self, void *info, dpc_error *err)
{
    return dpc_srgd_step(self, info, err);
}
static size_t sg_done(const void *self) { return dpc_srgd_steps_done(self); }
static size_t sg_total(const void *self) { return dpc_srgd_steps_total(self); }
static const double *sg_params(const void *self, size_t *n)
{
    if (n) *n = dpc_srgd_num_params(self);
    return dpc_srgd_output(self);
}
static const dpc_ledger *sg_ledger(const void *self) { return dpc_srgd_ledger(self); }
static dpc_status sg_save(const void *self, dpc_ckpt *ck, const char *path, dpc_error *err)
{
    (void)path;
    return dpc_srgd_save(self, ck, err);
}
static dpc_status sg_restore(void *self, const dpc_ckpt *ck, const char *path, dpc_error *err)
{
    (void)path;
    return dpc_srgd_restore(self, ck, err);
}

static const dpc_run_ops SRGD_OPS = {DPC_SRGD_KIND, 0,         sg_step, sg_done,   sg_total,
                                     sg_params,     sg_ledger, sg_save, sg_restore};

dpc_run dpc_srgd_run_ops(dpc_srgd *s) { return (dpc_run){&SRGD_OPS, s}; }
