/* frame_run.c — the one run loop of every trainer of `dpcorr train` (frame.h): steps through the
 * library's ops table (dpc_run), the command's telemetry hook, checkpoints, --stop-after and
 * --resume, and the per-step telemetry of checkpoints by field name. */
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

int frame_run(const run_frame *f, frame_loop *L)
{
    const dpc_run *r = &L->run;
    size_t total = r->ops->steps_total(r->self);
    dpc_error err = {0};
    while (r->ops->steps_done(r->self) < total) {
        size_t t = r->ops->steps_done(r->self);
        double ts = cli_now();
        if (r->ops->step(r->self, L->info, &err)) {
            fprintf(stderr, "\ndpcorr train: %s %zu: %s\n", L->unit ? L->unit : "step", t, err.msg);
            return CLI_RUNTIME;
        }
        L->step_s += cli_now() - ts;
        t = r->ops->steps_done(r->self);
        int rc = L->on_step ? L->on_step(L->ctx, L->info, t) : 0;
        if (rc) return rc;
        if (!t) continue; /* a first step that made no update (lcgd: W_0 visited) */
        int due = frame_ckpt_due(f, t, total) || (f->checkpoint && L->ckpt_due && L->ckpt_due(L->ctx, t));
        /* --stop-after: the checkpoint at the stop is what a resume continues from */
        int stop = frame_stop_due(f, t);
        if ((due || (stop && f->checkpoint)) && (rc = ckpt_write(f, L))) return rc;
        if (stop) {
            fprintf(stderr, "\nstopped after %zu of %zu %ss (--stop-after); checkpoint written to "
                            "%s: continue with --resume %s\n",
                    t, total, L->unit ? L->unit : "step", f->checkpoint, f->checkpoint);
            return FRAME_STOPPED;
        }
    }
    return 0;
}

void frame_pack(const frame_field *fl, size_t nf, const void *recs, size_t size, size_t n,
                double *v)
{
    for (size_t i = 0; i < n; i++) {
        const char *rec = (const char *)recs + i * size;
        for (size_t k = 0; k < nf; k++) {
            if (fl[k].count) {
                size_t c;
                memcpy(&c, rec + fl[k].offset, sizeof c);
                v[nf * i + k] = (double)c;
            } else {
                memcpy(&v[nf * i + k], rec + fl[k].offset, sizeof(double));
            }
        }
    }
}

void frame_unpack(const frame_field *fl, size_t nf, const double *v, size_t size, size_t n,
                  void *recs)
{
    for (size_t i = 0; i < n; i++) {
        char *rec = (char *)recs + i * size;
        for (size_t k = 0; k < nf; k++) {
            if (fl[k].count) {
                size_t c = (size_t)v[nf * i + k];
                memcpy(rec + fl[k].offset, &c, sizeof c);
            } else {
                memcpy(rec + fl[k].offset, &v[nf * i + k], sizeof(double));
            }
        }
    }
}
