/* fuzz_train_mech.c — strategy and coefficient files at the train entry point (not only the
 * loader): the file becomes the trainer's mechanism, sized from the file as `dpcorr train` does
 * (tools/mech_opts.c), then dpc_train_config_resolve and, when it accepts, dpc_trainer_new and
 * every step. A dense matrix read as another size than the run's n was a heap overflow in
 * dpc_mech_params_check (issue 28): the run here is sized to the file's n or one step more.
 * Input: byte 0 picks the file kind (mod 3: strategy JSON, dense rows, Toeplitz coefficients),
 * byte 1 bit 0 makes the run one step longer than the file's n; the rest is the file. Replayed
 * over fuzz/corpus/train_mech by tests/test_fuzz_train_mech.c in make check. */
#include "fuzz_common.h"
#include "dpcorr/io.h"
#include "dpcorr/strategy.h"

#define FZ_MAX_STEPS 64 /* train only small runs (fuzzing speed); larger files: resolve only */

static void train_with(dpc_mech_params p, int longer)
{
    /* one example per step with batch 1: the run's n is the data size */
    size_t n = p.steps + (longer ? 1 : 0);
    if (p.steps == 0 || p.steps > FZ_MAX_STEPS) n = 4;
    dpc_error err = {0};
    dpc_dataset *ds = NULL;
    fz_check_error(dpc_dataset_new(&ds, n, 2, 2, &err), &err);
    if (!ds) return;
    for (size_t i = 0; i < n; i++) {
        ds->x[2 * i] = (double)(i % 3) - 1.0;
        ds->x[2 * i + 1] = 0.5;
        ds->y[i] = (double)(i % 2);
    }
    dpc_train_config c, r;
    dpc_train_config_init(&c);
    c.mech = p;
    c.batch = 1;
    c.epochs = 1;
    c.noise_multiplier = 1.0; /* no calibration: the mechanism is what is exercised */
    c.clip = 1.0;
    c.lr = 0.1;
    c.accountant = DPC_ACCOUNTANT_RDP;
    dpc_status st = dpc_train_config_resolve(&c, ds, &r, &err);
    fz_check_error(st, &err);
    if (!st && r.mech.steps <= FZ_MAX_STEPS) {
        dpc_model_config mc;
        dpc_model *m = NULL;
        dpc_trainer *tr = NULL;
        dpc_rng rng;
        dpc_rng_seed(&rng, 1);
        if (dpc_model_parse(&mc, "logistic", 2, 2, &err) || dpc_model_new(&m, &mc, &err)) abort();
        st = dpc_trainer_new(&tr, m, ds, NULL, &c, &rng, &err);
        fz_check_error(st, &err);
        while (!st && dpc_trainer_steps_done(tr) < dpc_trainer_steps_total(tr)) {
            st = dpc_trainer_step(tr, NULL, &err);
            fz_check_error(st, &err);
        }
        dpc_trainer_free(tr);
        dpc_model_free(m);
    }
    dpc_dataset_free(ds);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    int kind = data[0] % 3, longer = data[1] & 1;
    const char *path = fz_file(0, data + 2, size - 2, kind == 0 ? ".json" : ".txt");
    dpc_error err = {0};
    dpc_mech_params p;
    dpc_mech_params_init(&p);
    dpc_strategy *s = NULL;
    double *buf = NULL;
    dpc_status st;
    if (kind == 0) {
        st = dpc_strategy_load(&s, path, &err);
        fz_check_error(st, &err);
        if (!st) dpc_strategy_mech_params(s, &p);
    } else if (kind == 1) {
        size_t n = 0;
        st = dpc_io_read_lower_triangular(path, 0, &buf, &n, &err);
        fz_check_error(st, &err);
        p.kind = DPC_MECH_DENSE;
        p.dense = buf;
        p.steps = n;
    } else {
        st = dpc_io_read_numbers(path, 0, &buf, &p.ncoeffs, &err);
        fz_check_error(st, &err);
        p.kind = DPC_MECH_TOEPLITZ;
        p.coeffs = buf;
        p.steps = p.ncoeffs;
    }
    if (!st) train_with(p, longer);
    free(buf);
    dpc_strategy_free(s);
    return 0;
}
