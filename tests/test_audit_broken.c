/* test_audit_broken.c — the privacy audit catches runs that break their own claim.
 *
 * This binary (and only this one) compiles the trainer's privacy decision, src/core/train/
 * privacy.c, with the TEST-ONLY flag DPC_TEST_BREAK_PRIVACY: its definitions replace the
 * library's (the archive member is then never linked), and dpc__test_break_privacy selects a
 * fault. libdpcorr and the CLI are built without the flag, so the faults cannot be reached from
 * them. Each audit must give a lower bound above the epsilon the broken run claims:
 *   fault 1: the noise scaled down 4x while the ledger claims the calibrated epsilon
 *            (DP-SGD and nu-DP-FTRL, fixed-order epochs);
 *   fault 2: the noise calibrated for a single participation while the run takes 16 epochs and
 *            the ledger claims them (DP-SGD and BSR).
 * And without a fault the same audits stay below the claim. */
#define DPC_TEST_BREAK_PRIVACY 1
int dpc__test_break_privacy = 0;
#include "train/privacy.c"

#include "dpcorr/audit.h"
#include "harness.h"

#include <stdlib.h>

static dpc_dataset *synth(size_t n, size_t d, size_t K)
{
    dpc_dataset *ds = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_dataset_new(&ds, n, d, K, &err), &err);
    dpc_rng rng;
    dpc_rng_seed(&rng, 8);
    dpc_rng_stream s = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_TEST, 22));
    for (size_t i = 0; i < n; i++) { /* feature 0 only: the canary coordinates stay quiet */
        ds->y[i] = (double)dpc_rng_below(&s, 0, i, K);
        ds->x[i * d] = dpc_rng_gaussian(&s, 1, i) + 0.5 * ds->y[i];
    }
    return ds;
}

static dpc_audit_result audit(dpc_mech_kind kind, size_t epochs, int fault)
{
    const size_t Nr = 200, d = 201, K = 10, m = 2000;
    dpc_dataset *ds = synth(Nr, d, K);
    dpc_model_config mc;
    dpc_model *model = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_model_parse(&mc, "softmax", d, K, &err), &err);
    CHECK_OK(dpc_model_new(&model, &mc, &err), &err);
    dpc_train_config c;
    dpc_train_config_init(&c);
    c.mech.kind = kind;
    c.mech.nu = 0.02;
    c.mech.bands = 4;
    c.sampler = DPC_SAMPLER_FIXED;
    c.batch = (Nr + m) / 10;
    c.epochs = epochs;
    c.epsilon = 2.0;
    c.delta = 1e-5;
    c.lr = 0.2;
    dpc_audit_config ac;
    dpc_audit_config_init(&ac);
    ac.canaries = m;
    dpc_rng rng;
    dpc_rng_seed(&rng, 99);
    dpc__test_break_privacy = fault;
    dpc_audit_result r;
    CHECK_OK(dpc_audit_run(&ac, &c, model, ds, NULL, &rng, NULL, NULL, &r, &err), &err);
    dpc__test_break_privacy = 0;
    dpc_model_free(model);
    dpc_dataset_free(ds);
    return r;
}

int main(void)
{
    const struct { const char *name; dpc_mech_kind kind; size_t epochs; int fault; } cases[] = {
        {"dp-sgd, noise / 4", DPC_MECH_IDENTITY, 4, 1},
        {"nu-DP-FTRL, noise / 4", DPC_MECH_NU, 4, 1},
        {"dp-sgd, 1-participation calibration, 16 epochs", DPC_MECH_IDENTITY, 16, 2},
        {"bsr, 1-participation calibration, 16 epochs", DPC_MECH_BSR, 16, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (int broken = 1; broken >= 0; broken--) {
            dpc_audit_result r = audit(cases[i].kind, cases[i].epochs, broken ? cases[i].fault : 0);
            if (broken)
                CHECK(r.bound.epsilon > r.ledger.epsilon, "%s: not caught: bound %g <= claimed %g",
                      cases[i].name, r.bound.epsilon, r.ledger.epsilon);
            else
                CHECK(r.bound.epsilon <= r.ledger.epsilon, "%s without the fault: bound %g > %g",
                      cases[i].name, r.bound.epsilon, r.ledger.epsilon);
            printf("  %-48s %s: claimed eps %.3f, lower bound %.3f (%zu/%zu correct)\n",
                   cases[i].name, broken ? "broken" : "sound ", r.ledger.epsilon, r.bound.epsilon,
                   r.bound.correct, r.bound.guesses);
            dpc_audit_result_free(&r);
        }
    }
    return TEST_SUMMARY();
}
