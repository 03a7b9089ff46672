/* run_ops.c — projected DP-lambda-CGD behind the one run interface (dpc_run_ops,
 * dpcorr/train.h): a dpc_kan_lcgd_runner binds the run to its oracles. */
#include "dpcorr/papers/kan.h"
#include "kan/kan_internal.h"

#include <stddef.h>

static dpc_status kl_step(void *self, void *info, dpc_error *err)
{
    const dpc_kan_lcgd_runner *b = self;
    dpc_kan_lcgd_run_info *in = info;
    return dpc_kan_lcgd_advance(b->run, b->grad, b->eval, b->ctx, b->eval_every,
                                in ? &in->step : NULL, in ? &in->train_loss : NULL,
                                in ? &in->test_loss : NULL, err);
}
static size_t kl_done(const void *self)
{
    return dpc_kan_lcgd_steps_done(((const dpc_kan_lcgd_runner *)self)->run);
}
static size_t kl_total(const void *self)
{
    return dpc_kan_lcgd_steps_total(((const dpc_kan_lcgd_runner *)self)->run);
}
static const double *kl_params(const void *self, size_t *n)
{
    const dpc_kan_lcgd *r = ((const dpc_kan_lcgd_runner *)self)->run;
    if (n) *n = r->P;
    return dpc_kan_lcgd_params(r);
}
static const dpc_ledger *kl_ledger(const void *self)
{
    return ((const dpc_kan_lcgd_runner *)self)->ledger;
}
static dpc_status kl_save(const void *self, dpc_ckpt *ck, const char *path, dpc_error *err)
{
    (void)path;
    return dpc_kan_lcgd_save(((const dpc_kan_lcgd_runner *)self)->run, ck, err);
}
static dpc_status kl_restore(void *self, const dpc_ckpt *ck, const char *path, dpc_error *err)
{
    (void)path;
    return dpc_kan_lcgd_restore(((dpc_kan_lcgd_runner *)self)->run, ck, err);
}

static const dpc_run_ops KAN_OPS = {DPC_KAN_LCGD_KIND, 0,         kl_step, kl_done,   kl_total,
                                    kl_params,         kl_ledger, kl_save, kl_restore};

dpc_run dpc_kan_lcgd_run_ops(dpc_kan_lcgd_runner *b) { return (dpc_run){&KAN_OPS, b}; }
