/* fuzz_checkpoint.c — the checkpoint reader: dpc_checkpoint_read_rng and dpc_trainer_resume of a
 * small fixed run (logistic regression, nu-DP-FTRL, 20 examples; the seeds in
 * fuzz/corpus/checkpoint are its checkpoints). The input's last 8 bytes are replaced by the
 * checksum of the rest, so that mutations reach the parser (the checksum itself is tested in
 * tests/test_checkpoint.c). With FUZZ_WRITE_SEED=PATH the driver writes a seed checkpoint. */
#include "fuzz_common.h"

#include <math.h>

static dpc_dataset *ds;
static dpc_model *model;
static dpc_trainer *tr;

static void setup(void)
{
    dpc_error err = {0};
    dpc_rng rng;
    dpc_rng_seed(&rng, 5);
    dpc_model_config mc;
    dpc_train_config c;
    dpc_train_config_init(&c);
    c.mech.kind = DPC_MECH_NU;
    c.mech.nu = 0.1;
    c.sampler = DPC_SAMPLER_FIXED;
    c.batch = 5;
    c.epochs = 2;
    c.noise_multiplier = 2.0;
    c.epsilon = 0;
    c.delta = 1e-5;
    c.allow_large_delta = 1;
    c.clip = 1.0;
    c.lr = 0.1;
    c.accountant = DPC_ACCOUNTANT_RDP;
    if (dpc_data_synth_logistic(&ds, &rng, 0, 20, 2, 0.1, 0.0, NULL, &err) ||
        dpc_model_parse(&mc, "logistic", 2, 2, &err) || dpc_model_new(&model, &mc, &err) ||
        dpc_trainer_new(&tr, model, ds, NULL, &c, &rng, &err)) {
        fprintf(stderr, "fuzz_checkpoint: setup: %s\n", err.msg);
        abort();
    }
    const char *seed = getenv("FUZZ_WRITE_SEED");
    if (seed) { /* a checkpoint at step 3 with one record */
        for (int t = 0; t < 3; t++)
            if (dpc_trainer_step(tr, NULL, &err)) abort();
        dpc_train_record r = {3, 1, 0.5, NAN, NAN, 1.0, 0.01};
        if (dpc_trainer_record(tr, &r, &err) || dpc_trainer_save(tr, seed, &err)) abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!tr) setup();
    uint8_t *b = malloc(size ? size : 1);
    if (!b) return 0;
    memcpy(b, data, size);
    if (size >= 16) { /* FNV-1a 64 of everything before the last 8 bytes */
        uint64_t h = 0xcbf29ce484222325ull;
        for (size_t i = 0; i + 8 < size; i++) h = (h ^ b[i]) * 0x100000001b3ull;
        memcpy(b + size - 8, &h, 8);
    }
    const char *path = fz_file(0, b, size, ".ckpt");
    free(b);
    dpc_rng rng;
    dpc_error err = {0};
    dpc_status st = dpc_checkpoint_read_rng(path, &rng, &err);
    fz_check_error(st, &err);
    dpc_error e2 = {0};
    st = dpc_trainer_resume(tr, path, &e2);
    fz_check_error(st, &e2);
    if (!st) {
        size_t n;
        const dpc_train_record *r = dpc_trainer_records(tr, &n);
        for (size_t i = 1; i < n; i++)
            if (r[i].step <= r[i - 1].step) abort(); /* the reader keeps them in order */
        if (dpc_trainer_steps_done(tr) > dpc_trainer_steps_total(tr)) abort();
        /* round trip: what was accepted saves and resumes to the same state */
        uint64_t h = dpc_trainer_params_hash(tr);
        size_t t = dpc_trainer_steps_done(tr), n0 = n, n1 = 0;
        const char *again = fz_file(1, NULL, 0, ".ckpt");
        dpc_error e3 = {0};
        int bad = dpc_trainer_save(tr, again, &e3) || dpc_trainer_resume(tr, again, &e3);
        (void)dpc_trainer_records(tr, &n1);
        if (bad || dpc_trainer_params_hash(tr) != h || dpc_trainer_steps_done(tr) != t ||
            n1 != n0) {
            fprintf(stderr, "round trip: %s\n", e3.msg);
            abort();
        }
    }
    return 0;
}
