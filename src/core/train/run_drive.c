/* run_drive.c — the one run driver (dpc_run_drive, dpcorr/train.h): every front end's loop that
 * steps a trainer to its end, with the progress hook, checkpoints and the stop, so the order of
 * those (and what "due" means) is written once. */
#include "field/field_def.h"
#include "dpcorr/train.h"

#include <math.h>
#include <string.h>

/* The manual of dpc_run_params (dpcorr/train.h): both counts accept every value, 0 meaning
 * "none" (UNSET_ZERO; a count given is >= 1: what a front end's option accepts); the zeroed
 * struct is the default (what the driver uses for params == NULL). */
#define RP(m) DPC_FIELD_AT(dpc_run_params, m)
static const dpc_field rp_fields[] = {
    {.name = "checkpoint_every", .type = DPC_FIELD_SIZE, RP(checkpoint_every), .lo = 1,
     .hi = INFINITY, .flags = DPC_FIELD_UNSET_ZERO | DPC_FIELD_HI_OPEN | DPC_FIELD_RUNTIME,
     .doc = "a checkpoint every K updates (0: only at the end and the hooks' points)"},
    {.name = "stop_after", .type = DPC_FIELD_SIZE, RP(stop_after), .lo = 1, .hi = INFINITY,
     .flags = DPC_FIELD_UNSET_ZERO | DPC_FIELD_HI_OPEN | DPC_FIELD_RUNTIME,
     .doc = "stop once K updates are done, as if killed (0: never)"},
};
#undef RP
static const dpc_field_table rp_table = DPC_FIELD_TABLE(dpc_run_params, rp_fields);

const dpc_field_table *dpc_run_params_fields(void) { return &rp_table; }

static int checkpoint_due(const dpc_run_params *p, const dpc_run_hooks *h, size_t t, size_t total)
{
    if (!h->checkpoint) return 0;
    if (t == total || (p->checkpoint_every && t % p->checkpoint_every == 0)) return 1;
    return h->checkpoint_due && h->checkpoint_due(h->ctx, t);
}

dpc_status dpc_run_drive(const dpc_run *r, void *info, const dpc_run_params *params,
                         const dpc_run_hooks *hooks, dpc_run_outcome *out, dpc_error *err)
{
    static const dpc_run_params no_params;
    static const dpc_run_hooks no_hooks;
    dpc_run_outcome o;
    memset(&o, 0, sizeof o);
    if (!out) out = &o;
    memset(out, 0, sizeof *out);
    if (!r || !r->ops || !r->self)
        return out->end = DPC_RUN_FAILED, dpc_error_param(err, DPC_E_INVALID, "run", "NULL run");
    const dpc_run_params *p = params ? params : &no_params;
    const dpc_run_hooks *h = hooks ? hooks : &no_hooks;
    const dpc_run_ops *ops = r->ops;
    size_t total = ops->steps_total(r->self);
    dpc_status st = DPC_OK;
    while ((out->steps_done = ops->steps_done(r->self)) < total) {
        size_t before = out->steps_done;
        double t0 = h->clock ? h->clock() : 0.0;
        if ((st = ops->step(r->self, info, err))) {
            out->end = DPC_RUN_FAILED, out->step_failed = 1, out->failed_step = before;
            return st;
        }
        if (h->clock) out->step_s += h->clock() - t0;
        size_t t = out->steps_done = ops->steps_done(r->self);
        if (h->on_step && (out->hook_rc = h->on_step(h->ctx, info, t))) {
            out->end = DPC_RUN_CANCELLED;
            return dpc_error_param(err, DPC_E_CANCELLED, "on_step", "cancelled after step %zu", t);
        }
        if (!t) continue; /* a first step that made no update (dpc_kan_lcgd: W_0 visited) */
        int stop = p->stop_after && t >= p->stop_after;
        /* the checkpoint at the stop is what a resume continues from */
        if ((checkpoint_due(p, h, t, total) || (stop && h->checkpoint)) &&
            (st = h->checkpoint(h->checkpoint_ctx ? h->checkpoint_ctx : h->ctx, t, err)))
            return out->end = DPC_RUN_FAILED, st;
        if (stop) return out->end = DPC_RUN_STOPPED, DPC_OK;
    }
    out->end = DPC_RUN_DONE;
    return DPC_OK;
}
