/* frame_ckpt.c — checkpoints and interruption in the run frame (frame.h): the options, shared by
 * every trainer of `dpcorr train`, the resumed generator, and the glue between the papers'
 * trainers and the library's checkpoint container (dpc_ckpt, dpcorr/train.h). */
#include "frame.h"
#include "mpi_run.h"

#include <string.h>

#define EXEC "randomness and execution"

const opt_spec FR_CHECKPOINT = {
    .name = "--checkpoint", .metavar = "F", .type = OPT_STR, .flags = OPT_OUT_FILE | OPT_CONTINUES,
    .section = EXEC, .param = "checkpoint",
    .help = "write an atomic checkpoint to F after every epoch (the papers' one-pass "
            "algorithms: at the end of the run)",
    .example = "--checkpoint {tmp}/c"};
/* the run driver's counts (dpc_run_params): range and meaning of 0 from its table (a run has at
 * most DPC_TRAIN_MAX_STEPS steps; a larger count is accepted and never reached) */
#define RUN_FIELD .fields = dpc_run_params_fields
const opt_spec FR_CHECKPOINT_EVERY = {
    .name = "--checkpoint-every", .metavar = "K", .type = OPT_UINT, RUN_FIELD,
    .section = EXEC, .param = "checkpoint_every", .when = "--checkpoint",
    .help = "... and every K steps", .example = "--checkpoint {tmp}/c --checkpoint-every 3"};
const opt_spec FR_RESUME = {
    .name = "--resume", .metavar = "F", .type = OPT_STR, .flags = OPT_IN_FILE | OPT_CONTINUES,
    .section = EXEC, .param = "resume",
    .help = "continue the run saved in F (same options required; the result is bit-identical "
            "to an uninterrupted run)",
    .example = "--resume {tmp}/ckpt"};
const opt_spec FR_STOP_AFTER = {
    .name = "--stop-after", .metavar = "K", .type = OPT_UINT, RUN_FIELD,
    .section = "testing", .param = "stop_after",
    .help = "stop (as if killed) after K steps, with a checkpoint written there (needs "
            "--checkpoint F; continue with --resume F; tests of checkpoint and resume)",
    .example = "--checkpoint {tmp}/c --stop-after 3"};

void frame_read_ckpt(run_frame *f, opt_set *s)
{
    f->checkpoint = opt_str(s, &FR_CHECKPOINT, NULL);
    if (f->checkpoint) f->checkpoint_every = opt_size(s, &FR_CHECKPOINT_EVERY, 0);
    f->resume = opt_str(s, &FR_RESUME, NULL);
    f->stop_after = opt_size(s, &FR_STOP_AFTER, 0);
}

void frame_dry_ckpt(const run_frame *f)
{
    opt_dry_str("checkpoint", f->checkpoint);
    opt_dry_uint("checkpoint_every", f->checkpoint_every);
    opt_dry_str("resume", f->resume);
    opt_dry_uint("stop_after", f->stop_after);
}

/* The generator of --resume F: its mode and seed must be the ones asked for. */
int frame_seed_resume(run_frame *f, opt_set *s)
{
    dpc_error err = {0};
    dpc_rng *rng = &f->rng;
    if (dpc_checkpoint_read_rng(f->resume, rng, &err))
        return opt_fail(s, "--resume: %s", err.msg);
    unsigned long long cs = (unsigned long long)rng->seed;
    if (rng->mode == DPC_RNG_SEEDED && f->secure)
        return opt_fail(s, "%s: the checkpoint %s was written in seeded mode (seed %llu); "
                           "resume it with --seed %llu",
                        f->secure_typed ? "--secure" : "--resume", f->resume, cs, cs);
    if (rng->mode != DPC_RNG_SEEDED && !f->secure)
        return opt_fail(s, "--seed: the checkpoint %s was written in secure mode (OS key); "
                           "resume it without --seed", f->resume);
    if (rng->mode == DPC_RNG_SEEDED && rng->seed != f->seed)
        return opt_fail(s, "--seed: the checkpoint %s was written with seed %llu, got %llu",
                        f->resume, cs, (unsigned long long)f->seed);
    if (rng->mode == DPC_RNG_SEEDED && f->warn_seed)
        frame_warn_seeded(s && s->cmd ? s->cmd->name : "train", rng->seed,
                          "resumed seeded checkpoint");
    return 0;
}

int frame_ckpt_new(const run_frame *f, const char *kind, dpc_ckpt **out)
{
    dpc_error err = {0};
    if (dpc_ckpt_new(out, kind, &f->rng, &err)) {
        fprintf(stderr, "dpcorr train: checkpoint: %s\n", err.msg);
        return CLI_RUNTIME;
    }
    dpc_ckpt_item_str(*out, "data", "data spec", f->data ? f->data : "");
    if (f->train) dpc_ckpt_item_count(*out, "data", "training data content", dpc_dataset_hash(f->train));
    return 0;
}

int frame_ckpt_write(const run_frame *f, const dpc_ckpt *ck)
{
    dpc_error err = {0};
    if (!dpc_ckpt_write(ck, f->checkpoint, &err)) return 0;
    fprintf(stderr, "\ndpcorr train: --checkpoint: %s\n", err.msg);
    return CLI_RUNTIME;
}

int frame_ckpt_fail(const opt_set *s, const dpc_error *err)
{
    /* saved state that is not its replay from the key (edited): the file's fault, not an option's */
    if (!strcmp(err->field, "noise_state")) opt_fail(s, "--resume: %s", err->msg);
    else if (err->field[0]) opt_fail_lib(s, err); /* a changed option or input: its flag */
    else opt_fail(s, "--resume: %s", err->msg);
    return err->status == DPC_E_NOMEM ? CLI_RUNTIME : CLI_USAGE;
}

int frame_ckpt_read(const run_frame *f, opt_set *s, const char *kind, const dpc_ckpt *run,
                    dpc_ckpt **saved)
{
    dpc_error err = {0};
    *saved = NULL;
    if (dpc_ckpt_read(saved, f->resume, kind, &err) || dpc_ckpt_match(*saved, run, &err)) {
        dpc_ckpt_free(*saved);
        *saved = NULL;
        return frame_ckpt_fail(s, &err);
    }
    return 0;
}
