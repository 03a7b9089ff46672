/* frame_run.c — every trainer of `dpcorr train` run by the library's driver (dpc_run_drive,
 * frame.h): the command's telemetry hook, checkpoints of the frame's container, --stop-after's
 * message, --resume, and the per-step telemetry of checkpoints by field name. */
#include "frame.h"

#include <string.h>

/* The container of this run: the frame's items, the command's, the trainer's state, the
 * command's sections. 0, or CLI_RUNTIME after printing why. */
static int ckpt_build(const run_frame *f, const frame_loop *L, dpc_ckpt **out)
{
    const dpc_run *r = &L->run;
    int rc = frame_ckpt_new(f, r->ops->kind, out);
    if (rc) return rc;
    if (L->ckpt_items) L->ckpt_items(L->ctx, *out);
    dpc_error err = {0};
    if (r->ops->save(r->self, *out, NULL, &err) ||
        (L->ckpt_put && L->ckpt_put(L->ctx, *out, &err))) {
        fprintf(stderr, "dpcorr train: checkpoint: %s\n", err.msg);
        return CLI_RUNTIME;
    }
    return 0;
}

static int ckpt_write(const run_frame *f, const frame_loop *L)
{
    const dpc_run *r = &L->run;
    if (r->ops->own_file) {
        dpc_error err = {0};
        if (!r->ops->save(r->self, NULL, f->checkpoint, &err)) return 0;
        fprintf(stderr, "\ndpcorr train: --checkpoint: %s\n", err.msg);
        return CLI_RUNTIME;
    }
    dpc_ckpt *ck = NULL;
    int rc = ckpt_build(f, L, &ck);
    if (!rc) rc = frame_ckpt_write(f, ck);
    dpc_ckpt_free(ck);
    return rc;
}

int frame_resume(const run_frame *f, opt_set *s, frame_loop *L)
{
    const dpc_run *r = &L->run;
    dpc_error err = {0};
    int rc = 0;
    if (r->ops->own_file) {
        if (r->ops->restore(r->self, NULL, f->resume, &err)) return frame_ckpt_fail(s, &err);
    } else {
        dpc_ckpt *mine = NULL, *saved = NULL;
        rc = ckpt_build(f, L, &mine);
        if (!rc) rc = frame_ckpt_read(f, s, r->ops->kind, mine, &saved);
        if (!rc && r->ops->restore(r->self, saved, NULL, &err)) rc = frame_ckpt_fail(s, &err);
        if (!rc && L->ckpt_get) rc = L->ckpt_get(L->ctx, saved);
        dpc_ckpt_free(mine);
        dpc_ckpt_free(saved);
    }
    if (!rc && L->unit && !f->quiet)
        fprintf(stderr, "resumed at %s %zu\n", L->unit, r->ops->steps_done(r->self));
    return rc;
}

/* The driver's checkpoint hook: the frame's write, whose exit code (message printed) travels
 * back through rc. */
typedef struct drive_ckpt {
    const run_frame *f;
    const frame_loop *L;
    int rc;
} drive_ckpt;

static dpc_status ckpt_hook(void *ctx, size_t t, dpc_error *err)
{
    drive_ckpt *d = ctx;
    (void)t;
    if (!(d->rc = ckpt_write(d->f, d->L))) return DPC_OK;
    return dpc_error_set(err, DPC_E_IO, "checkpoint not written");
}

int frame_run(const run_frame *f, frame_loop *L)
{
    const dpc_run *r = &L->run;
    drive_ckpt d = {f, L, 0};
    dpc_run_params p = {.checkpoint_every = f->checkpoint_every, .stop_after = f->stop_after};
    dpc_run_hooks h = {.ctx = L->ctx, .on_step = L->on_step, .checkpoint_due = L->ckpt_due,
                       .checkpoint = f->checkpoint ? ckpt_hook : NULL, .checkpoint_ctx = &d,
                       .clock = cli_now};
    dpc_run_outcome o;
    dpc_error err = {0};
    dpc_status st = dpc_run_drive(r, L->info, &p, &h, &o, &err);
    L->step_s += o.step_s;
    if (st && o.end == DPC_RUN_FAILED && !o.step_failed) { /* the checkpoint said why */
        if (!d.rc) fprintf(stderr, "\ndpcorr train: %s\n", err.msg);
        return d.rc ? d.rc : CLI_RUNTIME;
    }
    const char *unit = L->unit ? L->unit : "step";
    switch (o.end) {
    case DPC_RUN_DONE: return 0;
    case DPC_RUN_CANCELLED: return o.hook_rc;
    case DPC_RUN_STOPPED:
        fprintf(stderr, "\nstopped after %zu of %zu %ss (--stop-after); checkpoint written to "
                        "%s: continue with --resume %s\n",
                o.steps_done, r->ops->steps_total(r->self), unit, f->checkpoint, f->checkpoint);
        return FRAME_STOPPED;
    case DPC_RUN_FAILED: break;
    }
    fprintf(stderr, "\ndpcorr train: %s %zu: %s\n", unit, o.failed_step, err.msg);
    return CLI_RUNTIME;
}
