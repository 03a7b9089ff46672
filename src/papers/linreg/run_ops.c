/* run_ops.c — DP-(AMB)SSGD behind the one run interface (dpc_run_ops, dpcorr/train.h). */
#include "dpcorr/papers/linreg.h"
#include "linreg/linreg_internal.h"

static dpc_status lr_step(void *self, void *info, dpc_error *err)
{
    return dpc_linreg_step(self, info, err);
}
static size_t lr_done(const void *self) { return dpc_linreg_steps_done(self); }
static size_t lr_total(const void *self) { return dpc_linreg_steps_total(self); }
static const double *lr_params(const void *self, size_t *n)
{
    const dpc_linreg *lr = self;
    if (n) *n = lr->ds->d;
    return dpc_linreg_params(lr);
}
static const dpc_ledger *lr_ledger(const void *self) { return dpc_linreg_ledger(self); }
static dpc_status lr_save(const void *self, dpc_ckpt *ck, const char *path, dpc_error *err)
{
    (void)path;
    return dpc_linreg_save(self, ck, err);
}
static dpc_status lr_restore(void *self, const dpc_ckpt *ck, const char *path, dpc_error *err)
{
    (void)path;
    return dpc_linreg_restore(self, ck, err);
}

static const dpc_run_ops AMB_OPS = {"dp-ambssgd", 0,         lr_step, lr_done,   lr_total,
                                    lr_params,    lr_ledger, lr_save, lr_restore};
static const dpc_run_ops SSGD_OPS = {"dp-ssgd", 0,         lr_step, lr_done,   lr_total,
                                     lr_params, lr_ledger, lr_save, lr_restore};

dpc_run dpc_linreg_run_ops(dpc_linreg *lr)
{
    return (dpc_run){lr->plan.algo == DPC_LINREG_SSGD ? &SSGD_OPS : &AMB_OPS, lr};
}
