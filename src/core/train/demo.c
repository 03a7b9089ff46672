/* demo.c — the README demo's recipes (dpc_train_demo_setup, dpc_train_demo_frontier; dpcorr/train.h): the fixed choices of
 * `dpcorr demo` in the library, so that every front end (the CLI, the Python package) trains the
 * same two runs. The hyperparameters were chosen on the training data's own split, never on the
 * test set (doc/training.md explains how). */
#include "common/util.h"
#include "dpcorr/train.h"

#define DEMO_EPOCHS 15
#define DEMO_BATCH 250
#define DEMO_CLIP 1.0
#define DEMO_BANDS 32

typedef struct demo_run {
    const char *label, *name;
    dpc_mech_kind kind;
    size_t bands;
    dpc_sampler_kind sampler;
    double lr, momentum;
} demo_run;

static const demo_run RUNS[DPC_TRAIN_DEMO_RUNS] = {
    {"DP-SGD", "dpsgd", DPC_MECH_IDENTITY, 0, DPC_SAMPLER_POISSON, 0.125, 0.9},
    {"BSR (amplified BandMF)", "bsr", DPC_MECH_BSR, DEMO_BANDS, DPC_SAMPLER_CYCLIC_POISSON, 0.25,
     0.9},
};

dpc_status dpc_train_demo_setup(int run, dpc_train_demo *out, dpc_error *err)
{
    if (run < 0 || run >= DPC_TRAIN_DEMO_RUNS)
        return dpc_error_param(err, DPC_E_INVALID, "run", "must be 0 or 1, got %d", run);
    const demo_run *r = &RUNS[run];
    dpc_train_config *c = &out->cfg;
    dpc_train_config_init(c);
    out->label = r->label;
    out->name = r->name;
    out->model = "mlp:256:tanh";
    out->features = NULL;
    c->mech.kind = r->kind;
    c->mech.bands = r->bands;
    c->sampler = r->sampler;
    c->epsilon = 3.0;
    c->delta = 1e-5;
    c->epochs = DEMO_EPOCHS;
    c->batch = DEMO_BATCH;
    c->clip = DEMO_CLIP;
    c->lr = r->lr;
    c->momentum = r->momentum;
    c->schedule = DPC_LR_COOLDOWN;
    c->accountant = DPC_ACCOUNTANT_PLD;
    return DPC_OK;
}

/* Chosen on the holdout (doc/training.md lists every run tried). */
void dpc_train_demo_frontier(dpc_train_demo *out)
{
    dpc_train_config *c = &out->cfg;
    dpc_train_config_init(c);
    out->label = "frontier";
    out->name = "frontier";
    out->model = "softmax";
    out->features = "scatter:J=2,L=8,gn=27,center=20";
    c->mech.kind = DPC_MECH_BSR;
    c->mech.bands = 32;
    c->sampler = DPC_SAMPLER_CYCLIC_POISSON;
    c->epsilon = 3.0;
    c->delta = 1e-5;
    c->epochs = 20;
    c->batch = 500;
    c->clip = 1.0;
    c->lr = 0.18;
    c->momentum = 0.9;
    c->schedule = DPC_LR_COOLDOWN;
    c->accountant = DPC_ACCOUNTANT_PLD;
}
