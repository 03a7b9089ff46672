/* test_run.c — the one run driver (dpc_run_drive) on a toy trainer whose ops table counts what
 * it is asked to do: every step made, the stop, the checkpoint cadence (every K, the end, the
 * hook's points, the stop), a first step that makes no update, cancellation by the progress hook,
 * and a failing step or checkpoint returned with its own status and the step it happened at. */
#include "dpcorr/field.h"
#include "dpcorr/train.h"
#include "harness.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct toy {
    size_t t, total, calls;
    int visit_first; /* 1: the first step makes no update (like dpc_kan_lcgd's W_0 visit) */
    size_t fail_at;  /* a step at steps_done == fail_at - 1 fails (0: never) */
} toy;

static dpc_status toy_step(void *self, void *info, dpc_error *err)
{
    toy *y = self;
    if (y->t >= y->total) return dpc_error_set(err, DPC_E_RANGE, "toy: done");
    if (y->fail_at && y->t + 1 == y->fail_at) return dpc_error_set(err, DPC_E_NUMERIC, "toy: blew up");
    y->calls++;
    if (y->visit_first && y->calls == 1) return DPC_OK;
    y->t++;
    if (info) *(size_t *)info = y->t * 10;
    return DPC_OK;
}
static size_t toy_done(const void *self) { return ((const toy *)self)->t; }
static size_t toy_total(const void *self) { return ((const toy *)self)->total; }
static const dpc_run_ops TOY_OPS = {.kind = "toy", .step = toy_step, .steps_done = toy_done,
                                    .steps_total = toy_total};

typedef struct seen {
    size_t on_step[32], n_on_step, ckpt[32], n_ckpt;
    size_t cancel_at;  /* on_step returns 7 at this t (0: never) */
    size_t ckpt_fail;  /* checkpoint fails at this t (0: never) */
    size_t extra_every; /* checkpoint_due: every t % extra_every == 0 (0: none) */
    size_t last_info;
} seen;

static int on_step(void *ctx, const void *info, size_t t)
{
    seen *s = ctx;
    s->on_step[s->n_on_step++] = t;
    if (info) s->last_info = *(const size_t *)info;
    return s->cancel_at && t == s->cancel_at ? 7 : 0;
}
static int ckpt_due(void *ctx, size_t t)
{
    const seen *s = ctx;
    return s->extra_every && t % s->extra_every == 0;
}
static dpc_status ckpt(void *ctx, size_t t, dpc_error *err)
{
    seen *s = ctx;
    if (s->ckpt_fail == t) return dpc_error_set(err, DPC_E_IO, "disk full at %zu", t);
    s->ckpt[s->n_ckpt++] = t;
    return DPC_OK;
}
static double g_now;
static double fake_clock(void) { return g_now += 0.5; }

static dpc_status drive(toy *y, const dpc_run_params *p, seen *s, int with_ckpt,
                        dpc_run_outcome *o, dpc_error *err)
{
    dpc_run r = {&TOY_OPS, y};
    dpc_run_hooks h = {.ctx = s, .on_step = on_step, .checkpoint_due = ckpt_due,
                       .checkpoint = with_ckpt ? ckpt : NULL, .clock = fake_clock};
    size_t info = 0;
    return dpc_run_drive(&r, &info, p, &h, o, err);
}

static void test_to_the_end(void)
{
    toy y = {.total = 7};
    seen s = {0};
    dpc_run_outcome o;
    dpc_error err = {0};
    g_now = 0;
    CHECK_OK(drive(&y, NULL, &s, 0, &o, &err), &err);
    CHECK(y.t == 7 && y.calls == 7, "steps %zu calls %zu", y.t, y.calls);
    CHECK(o.end == DPC_RUN_DONE && o.steps_done == 7, "end %d done %zu", (int)o.end, o.steps_done);
    CHECK(s.n_on_step == 7 && s.on_step[0] == 1 && s.on_step[6] == 7, "on_step %zu", s.n_on_step);
    CHECK(s.last_info == 70, "info %zu", s.last_info);
    CHECK(s.n_ckpt == 0, "no checkpoint hook, no checkpoints (%zu)", s.n_ckpt);
    CHECK_NEAR_ABS(o.step_s, 7 * 0.5, 1e-12, "step_s");
    /* a finished run: no step, DONE */
    CHECK_OK(drive(&y, NULL, &s, 0, &o, &err), &err);
    CHECK(y.calls == 7 && o.end == DPC_RUN_DONE, "finished run stepped again");
    /* no hooks, no params, no outcome */
    toy z = {.total = 3};
    dpc_run r = {&TOY_OPS, &z};
    CHECK_OK(dpc_run_drive(&r, NULL, NULL, NULL, NULL, &err), &err);
    CHECK(z.t == 3, "bare run %zu", z.t);
    CHECK(dpc_run_drive(NULL, NULL, NULL, NULL, NULL, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "run"), "NULL run: %s", err.msg);
}

static void test_checkpoint_cadence(void)
{
    toy y = {.total = 10};
    seen s = {.extra_every = 4};
    dpc_run_params p = {.checkpoint_every = 3};
    dpc_run_outcome o;
    dpc_error err = {0};
    CHECK_OK(drive(&y, &p, &s, 1, &o, &err), &err);
    size_t want[] = {3, 4, 6, 8, 9, 10};
    CHECK(s.n_ckpt == 6, "checkpoints %zu", s.n_ckpt);
    for (size_t i = 0; i < 6 && i < s.n_ckpt; i++)
        CHECK(s.ckpt[i] == want[i], "checkpoint %zu at %zu, want %zu", i, s.ckpt[i], want[i]);
    /* every 0: only the end */
    toy y2 = {.total = 5};
    seen s2 = {0};
    dpc_run_params p0 = {0};
    CHECK_OK(drive(&y2, &p0, &s2, 1, &o, &err), &err);
    CHECK(s2.n_ckpt == 1 && s2.ckpt[0] == 5, "end only: %zu", s2.n_ckpt);
}

/* The checkpoint writer's own context (checkpoint_ctx) when the caller gives one. */
static void test_checkpoint_ctx(void)
{
    toy y = {.total = 4};
    seen prog = {0}, writer = {0};
    dpc_run r = {&TOY_OPS, &y};
    dpc_run_hooks h = {.ctx = &prog, .on_step = on_step, .checkpoint = ckpt,
                       .checkpoint_ctx = &writer};
    dpc_run_params p = {.checkpoint_every = 2};
    dpc_error err = {0};
    CHECK_OK(dpc_run_drive(&r, NULL, &p, &h, NULL, &err), &err);
    CHECK(prog.n_on_step == 4 && prog.n_ckpt == 0, "progress ctx: %zu steps %zu checkpoints",
          prog.n_on_step, prog.n_ckpt);
    CHECK(writer.n_ckpt == 2 && writer.ckpt[0] == 2 && writer.ckpt[1] == 4,
          "writer ctx: %zu checkpoints", writer.n_ckpt);
}

static void test_stop_after(void)
{
    toy y = {.total = 10};
    seen s = {0};
    dpc_run_params p = {.checkpoint_every = 4, .stop_after = 6};
    dpc_run_outcome o;
    dpc_error err = {0};
    CHECK_OK(drive(&y, &p, &s, 1, &o, &err), &err);
    CHECK(o.end == DPC_RUN_STOPPED && y.t == 6 && o.steps_done == 6, "stop: end %d t %zu",
          (int)o.end, y.t);
    CHECK(s.n_ckpt == 2 && s.ckpt[0] == 4 && s.ckpt[1] == 6, "stop checkpoints %zu", s.n_ckpt);
    /* resumed (the toy keeps t), then to the end: the cadence continues */
    p.stop_after = 0;
    s.n_ckpt = 0;
    CHECK_OK(drive(&y, &p, &s, 1, &o, &err), &err);
    CHECK(o.end == DPC_RUN_DONE && y.t == 10 && s.n_ckpt == 2 && s.ckpt[0] == 8 && s.ckpt[1] == 10,
          "resumed: t %zu checkpoints %zu", y.t, s.n_ckpt);
    /* without a checkpoint hook the stop still stops */
    toy y2 = {.total = 10};
    seen s2 = {0};
    dpc_run_params p2 = {.stop_after = 3};
    CHECK_OK(drive(&y2, &p2, &s2, 0, &o, &err), &err);
    CHECK(o.end == DPC_RUN_STOPPED && y2.t == 3 && s2.n_ckpt == 0, "bare stop t %zu", y2.t);
}

static void test_visit_first(void)
{
    toy y = {.total = 4, .visit_first = 1};
    seen s = {0};
    dpc_run_params p = {.checkpoint_every = 1, .stop_after = 0};
    dpc_run_outcome o;
    dpc_error err = {0};
    CHECK_OK(drive(&y, &p, &s, 1, &o, &err), &err);
    CHECK(y.calls == 5 && y.t == 4, "calls %zu t %zu", y.calls, y.t);
    CHECK(s.n_on_step == 5 && s.on_step[0] == 0, "on_step sees the visit (%zu)", s.n_on_step);
    CHECK(s.n_ckpt == 4 && s.ckpt[0] == 1, "no checkpoint of the visit (%zu)", s.n_ckpt);
}

static void test_cancel_and_failures(void)
{
    dpc_run_outcome o;
    dpc_error err = {0};
    toy y = {.total = 9};
    seen s = {.cancel_at = 4};
    CHECK(drive(&y, NULL, &s, 1, &o, &err) == DPC_E_CANCELLED, "cancel status");
    CHECK(o.end == DPC_RUN_CANCELLED && o.hook_rc == 7 && y.t == 4 && s.n_ckpt == 0,
          "cancel: end %d rc %d t %zu", (int)o.end, o.hook_rc, y.t);
    CHECK(!strcmp(err.field, "on_step") && strstr(err.msg, "after step 4"), "cancel msg %s", err.msg);

    toy f = {.total = 9, .fail_at = 5};
    seen sf = {0};
    CHECK(drive(&f, NULL, &sf, 1, &o, &err) == DPC_E_NUMERIC, "step failure status %d", err.status);
    CHECK(o.end == DPC_RUN_FAILED && o.step_failed && o.failed_step == 4 && o.steps_done == 4,
          "step failure: end %d at %zu", (int)o.end, o.failed_step);
    CHECK(strstr(err.msg, "blew up") != NULL, "the step's own message: %s", err.msg);

    toy c = {.total = 9};
    seen sc = {.ckpt_fail = 6};
    dpc_run_params p = {.checkpoint_every = 3};
    CHECK(drive(&c, &p, &sc, 1, &o, &err) == DPC_E_IO, "checkpoint failure status");
    CHECK(o.end == DPC_RUN_FAILED && !o.step_failed && o.steps_done == 6 && c.t == 6,
          "checkpoint failure: t %zu", c.t);
    CHECK(strstr(err.msg, "disk full at 6") != NULL, "the checkpoint's message: %s", err.msg);
}

/* The field table covers dpc_run_params, its defaults are the zeroed struct the driver uses for
 * params == NULL (no checkpoints by count, no stop), and every count is accepted. */
static void test_field_table(void)
{
    dpc_error err = {0};
    const dpc_field_table *t = dpc_run_params_fields();
    CHECK(t && t->size == sizeof(dpc_run_params) && t->count == 2, "table of the struct");
    CHECK_OK(dpc_field_table_verify(t, &err), &err);
    dpc_run_params p, zero;
    memset(&p, 0x5a, sizeof p);
    memset(&zero, 0, sizeof zero);
    dpc_field_defaults(t, &p);
    CHECK(!memcmp(&p, &zero, sizeof p) && p.checkpoint_every == 0 && p.stop_after == 0,
          "defaults: the zeroed struct");
    p.checkpoint_every = SIZE_MAX, p.stop_after = 1;
    CHECK_OK(dpc_field_check(t, &p, &err), &err);
    p.checkpoint_every = 0, p.stop_after = 0; /* none: accepted as the unset 0 */
    CHECK_OK(dpc_field_check(t, &p, &err), &err);
    for (size_t i = 0; i < t->count; i++) /* a count given is >= 1 (the CLI's options read it) */
        CHECK(t->fields[i].lo == 1 && (t->fields[i].flags & DPC_FIELD_UNSET_ZERO) &&
                  isinf(t->fields[i].hi), "%s: >= 1, 0 = none", t->fields[i].name);
    const dpc_field *f = dpc_field_find(t, "stop_after", NULL);
    CHECK(f && f->offset == offsetof(dpc_run_params, stop_after), "stop_after found");
    CHECK(f && dpc_field_check_value(f, "", NAN, &err) != DPC_OK && !strcmp(err.field, "stop_after"),
          "NaN refused naming stop_after: '%s'", err.msg);
}

int main(void)
{
    test_field_table();
    test_to_the_end();
    test_checkpoint_cadence();
    test_checkpoint_ctx();
    test_stop_after();
    test_visit_first();
    test_cancel_and_failures();
    return TEST_SUMMARY();
}
