/* test_train_demo.c — the README demo's recipe (dpc_train_demo_setup, dpcorr/train.h): each run
 * carries the documented choices (doc/training.md, the header), every other field keeps
 * dpc_train_config_init's default, the model spec is an MLP 784-256-10 (tanh), the mechanisms
 * pass the trainer's own check, and a run outside {0, 1} is refused naming "run"; the frontier
 * configuration (dpc_train_demo_frontier) likewise, its feature spec parsing to the documented
 * ScatterNet (J = 2, L = 8, 27 GroupNorm groups, centering at noise multiplier 20). */
#include "dpcorr/features.h"
#include "dpcorr/model.h"
#include "dpcorr/train.h"
#include "harness.h"

#include <string.h>

/* The documented recipe, written out from the header's prose, not from the code. */
static const struct {
    const char *label, *name;
    dpc_mech_kind kind;
    size_t bands;
    dpc_sampler_kind sampler;
    double lr;
} WANT[2] = {
    {"DP-SGD", "dpsgd", DPC_MECH_IDENTITY, 0, DPC_SAMPLER_POISSON, 0.125},
    {"BSR (amplified BandMF)", "bsr", DPC_MECH_BSR, 32, DPC_SAMPLER_CYCLIC_POISSON, 0.25},
};

static void check_run(int r)
{
    dpc_train_demo d;
    dpc_error err = {0};
    memset(&d, 0xA5, sizeof d); /* every field must be written */
    CHECK(dpc_train_demo_setup(r, &d, &err) == DPC_OK, "run %d: %s", r, err.msg);
    CHECK(!strcmp(d.label, WANT[r].label), "run %d label %s", r, d.label);
    CHECK(!strcmp(d.name, WANT[r].name), "run %d name %s", r, d.name);
    CHECK(d.features == NULL, "run %d has no features", r);
    CHECK(d.cfg.mech.kind == WANT[r].kind && d.cfg.mech.bands == WANT[r].bands,
          "run %d mech %d bands %zu", r, (int)d.cfg.mech.kind, d.cfg.mech.bands);
    CHECK(d.cfg.sampler == WANT[r].sampler, "run %d sampler %d", r, (int)d.cfg.sampler);
    CHECK(d.cfg.lr == WANT[r].lr && d.cfg.momentum == 0.9, "run %d lr %g momentum %g", r,
          d.cfg.lr, d.cfg.momentum);
    CHECK(d.cfg.epsilon == 3.0 && d.cfg.delta == 1e-5, "run %d budget (%g, %g)", r,
          d.cfg.epsilon, d.cfg.delta);
    CHECK(d.cfg.epochs == 15 && d.cfg.batch == 250 && d.cfg.clip == 1.0,
          "run %d epochs %zu batch %zu clip %g", r, d.cfg.epochs, d.cfg.batch, d.cfg.clip);
    CHECK(d.cfg.schedule == DPC_LR_COOLDOWN && d.cfg.accountant == DPC_ACCOUNTANT_PLD,
          "run %d schedule %d accountant %d", r, (int)d.cfg.schedule, (int)d.cfg.accountant);

    /* the rest: the defaults, field by field against a config set to the documented values */
    dpc_train_config want;
    dpc_train_config_init(&want);
    want.mech.kind = WANT[r].kind;
    want.mech.bands = WANT[r].bands;
    want.sampler = WANT[r].sampler;
    want.epsilon = 3.0;
    want.delta = 1e-5;
    want.epochs = 15;
    want.batch = 250;
    want.clip = 1.0;
    want.lr = WANT[r].lr;
    want.momentum = 0.9;
    want.schedule = DPC_LR_COOLDOWN;
    want.accountant = DPC_ACCOUNTANT_PLD;
    CHECK(!memcmp(&want, &d.cfg, sizeof want), "run %d: a field other than the recipe's moved",
          r);
    CHECK(dpc_train_mech_check(&d.cfg.mech, &err) == DPC_OK, "run %d mech: %s", r, err.msg);

    dpc_model_config m;
    CHECK(dpc_model_parse(&m, d.model, 784, 10, &err) == DPC_OK, "run %d model %s: %s", r,
          d.model, err.msg);
    CHECK(m.kind == DPC_MODEL_MLP && m.n_hidden == 1 && m.hidden[0] == 256 &&
              m.act == DPC_ACT_TANH,
          "run %d model %s", r, d.model);
}

static void check_frontier(void)
{
    dpc_train_demo d;
    dpc_error err = {0};
    memset(&d, 0xA5, sizeof d);
    dpc_train_demo_frontier(&d);
    CHECK(!strcmp(d.label, "frontier") && !strcmp(d.name, "frontier"), "frontier label %s",
          d.label);
    dpc_train_config want;
    dpc_train_config_init(&want);
    want.mech.kind = DPC_MECH_BSR;
    want.mech.bands = 32;
    want.sampler = DPC_SAMPLER_CYCLIC_POISSON;
    want.epsilon = 3.0;
    want.delta = 1e-5;
    want.epochs = 20;
    want.batch = 500;
    want.clip = 1.0;
    want.lr = 0.18;
    want.momentum = 0.9;
    want.schedule = DPC_LR_COOLDOWN;
    want.accountant = DPC_ACCOUNTANT_PLD;
    CHECK(!memcmp(&want, &d.cfg, sizeof want), "frontier: config differs from the documented");
    CHECK(dpc_train_mech_check(&d.cfg.mech, &err) == DPC_OK, "frontier mech: %s", err.msg);
    dpc_model_config m;
    CHECK(dpc_model_parse(&m, d.model, 100, 10, &err) == DPC_OK && m.kind == DPC_MODEL_SOFTMAX,
          "frontier model %s: %s", d.model, err.msg);
    dpc_features_config fc = {0};
    CHECK(d.features && dpc_features_parse(&fc, d.features, &err) == DPC_OK,
          "frontier features: %s", err.msg);
    if (d.features) CHECK(!strcmp(d.features, "scatter:J=2,L=8,gn=27,center=20"), "spec %s",
                          d.features);
    CHECK(fc.J == 2 && fc.L == 8 && fc.groups == 27 && fc.center == 20,
          "scatter J %zu L %zu groups %zu center %g", fc.J, fc.L, fc.groups, fc.center);
}

int main(void)
{
    check_frontier();
    for (int r = 0; r < DPC_TRAIN_DEMO_RUNS; r++) check_run(r);
    CHECK(DPC_TRAIN_DEMO_RUNS == 2, "two runs");
    int bad[2] = {-1, 2};
    for (int i = 0; i < 2; i++) {
        dpc_train_demo d;
        dpc_error err = {0};
        CHECK(dpc_train_demo_setup(bad[i], &d, &err) == DPC_E_INVALID && !strcmp(err.field, "run"),
              "run %d refused naming run: %s", bad[i], err.field);
    }
    return TEST_SUMMARY();
}
