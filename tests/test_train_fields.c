/* test_train_fields.c — the exported field tables of the trainer: dpc_train_config (with the
 * nested dpc_mech_params), dpc_mech_params, dpc_step_info and dpc_train_record. Each covers its
 * struct byte for byte (dpc_field_table_verify); _init writes the documented defaults from the
 * table; the range checks of dpc_train_config_check and dpc_mech_params_check are the table's
 * and name the field; the formatters give what front ends print. */
#include "dpcorr.h"
#include "harness.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static void test_coverage(void)
{
    dpc_error e;
    const dpc_field_table *t[] = {dpc_train_config_fields(), dpc_mech_params_fields(),
                                  dpc_step_info_fields(), dpc_train_record_fields(),
                                  dpc_noise_config_fields()};
    const size_t sz[] = {sizeof(dpc_train_config), sizeof(dpc_mech_params),
                         sizeof(dpc_step_info), sizeof(dpc_train_record),
                         sizeof(dpc_noise_config)};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        CHECK(t[i] && t[i]->size == sz[i], "table %zu describes a struct of its size", i);
        CHECK_OK(dpc_field_table_verify(t[i], &e), &e);
    }
    /* dpc_noise_config_init: the documented defaults (0 = 1 GiB budget) */
    dpc_noise_config nc;
    memset(&nc, 0x5a, sizeof nc);
    dpc_noise_config_init(&nc, 7);
    CHECK(nc.coord0 == 0 && nc.d == 7 && nc.form == DPC_NOISE_AUTO && nc.memory_budget == 0 &&
              nc.isa == DPC_ISA_AUTO, "noise config defaults");
    /* the nested mechanism is the mechanism's own table */
    const dpc_field *m = dpc_field_find(dpc_train_config_fields(), "mech", NULL);
    CHECK(m && m->sub == dpc_mech_params_fields() && (m->flags & DPC_FIELD_OWN_CHECK),
          "mech nests dpc_mech_params_fields, checked by kind");
    size_t base = 1;
    const dpc_field *nu = dpc_field_find(dpc_train_config_fields(), "mech.nu", &base);
    CHECK(nu && base == offsetof(dpc_train_config, mech) &&
          nu->offset == offsetof(dpc_mech_params, nu), "mech.nu found at its offset");
}

/* The defaults the header documented before the table (written here by hand on purpose: the
 * table must reproduce them). */
static void test_defaults(void)
{
    dpc_train_config c;
    memset(&c, 0xAB, sizeof c);
    dpc_train_config_init(&c);
    CHECK(c.batch == 256 && c.epochs == 1 && c.clip == 1.0 && c.lr == 0.1 && c.delta == 0 &&
          c.epsilon == 0 && c.noise_multiplier == 0 && c.momentum == 0 && c.weight_decay == 0,
          "privacy and optimizer defaults");
    CHECK(c.cooldown_fraction == 0.25 && c.cooldown_factor == 0.05 && c.threads == 1 &&
          c.chunk == 32 && c.schedule == DPC_LR_CONSTANT, "schedule and execution defaults");
    CHECK(c.sampler == DPC_SAMPLER_AUTO && c.noise_form == DPC_NOISE_AUTO &&
          c.accountant == dpc_account_default_accountant() && c.isa == DPC_ISA_AUTO &&
          c.precision == DPC_PRECISION_DOUBLE && !c.transport && !c.canaries && c.groups == 0,
          "enum and pointer defaults");
    CHECK(c.mech.kind == DPC_MECH_IDENTITY && c.mech.decay == 1.0 && c.mech.steps == 0 &&
          c.mech.nu == 0 && !c.mech.theta, "mechanism defaults");
    char buf[64];
    dpc_field_format_default(dpc_field_find(dpc_train_config_fields(), "cooldown_fraction",
                                            NULL), buf, sizeof buf);
    CHECK(!strcmp(buf, "0.25"), "default text 0.25: %s", buf);
    dpc_field_format_default(dpc_field_find(dpc_train_config_fields(), "schedule", NULL), buf,
                             sizeof buf);
    CHECK(!strcmp(buf, "constant"), "enum default by name: %s", buf);
    dpc_field_format_number(0.1, buf, sizeof buf);
    CHECK(!strcmp(buf, "0.1"), "shortest decimal: %s", buf);
    dpc_field_format_number(0.1 + 0.2, buf, sizeof buf);
    CHECK(strtod(buf, NULL) == 0.1 + 0.2, "round trip: %s", buf);
}

static void test_checks(void)
{
    dpc_error e;
    dpc_dataset *ds = NULL;
    dpc_rng rng;
    dpc_rng_seed(&rng, 1);
    CHECK_OK(dpc_data_synth_logistic(&ds, &rng, 0, 100, 3, 0.1, 0.0, NULL, &e), &e);
    if (!ds) return;
    dpc_train_config c;
    dpc_train_config_init(&c);
    c.epsilon = 1;
    c.batch = 10;
    CHECK_OK(dpc_train_config_check(&c, ds, &e), &e);
    c.cooldown_fraction = 2;
    CHECK(dpc_train_config_check(&c, ds, &e) == DPC_E_INVALID &&
          !strcmp(e.field, "cooldown_fraction") && strstr(e.msg, "[0, 1], got 2"),
          "cooldown_fraction range from the table: %s", e.msg);
    c.cooldown_fraction = 0.25;
    c.clip = -1;
    CHECK(dpc_train_config_check(&c, ds, &e) == DPC_E_INVALID && !strcmp(e.field, "clip") &&
          strstr(e.msg, "finite number > 0, got -1"), "clip > 0: %s", e.msg);
    c.clip = INFINITY;
    CHECK(dpc_train_config_check(&c, ds, &e) == DPC_E_INVALID && !strcmp(e.field, "clip"),
          "clip inf refused: %s", e.msg);
    c.clip = 1;
    c.threads = 0;
    CHECK(dpc_train_config_check(&c, ds, &e) == DPC_E_INVALID && !strcmp(e.field, "threads") &&
          strstr(e.msg, "[1, 256]"), "threads: %s", e.msg);
    c.threads = 1;
    c.batch = 0;
    CHECK(dpc_train_config_check(&c, ds, &e) == DPC_E_INVALID && !strcmp(e.field, "batch"),
          "batch 0: %s", e.msg);
    c.batch = 1000; /* the refusal between fields stays */
    CHECK(dpc_train_config_check(&c, ds, &e) == DPC_E_INVALID && !strcmp(e.field, "batch") &&
          strstr(e.msg, "larger than the training data"), "batch > N: %s", e.msg);
    c.batch = 10;
    c.epsilon = 0;
    CHECK(dpc_train_config_check(&c, ds, &e) == DPC_E_INVALID && !strcmp(e.field, "epsilon") &&
          strstr(e.msg, "noise_multiplier"), "neither epsilon nor z: %s", e.msg);
    c.epsilon = 1;
    c.noise_multiplier = 1;
    CHECK(dpc_train_config_check(&c, ds, &e) == DPC_E_INVALID &&
          !strcmp(e.field, "noise_multiplier"), "both: %s", e.msg);
    c.noise_multiplier = 0;
    c.accountant = (dpc_accountant)7;
    CHECK(dpc_train_config_check(&c, ds, &e) == DPC_E_INVALID && !strcmp(e.field, "accountant"),
          "unknown accountant: %s", e.msg);
    c.accountant = DPC_ACCOUNTANT_RDP;
    /* the mechanism's fields apply by kind: nu is not read by identity */
    c.mech.nu = 5;
    CHECK_OK(dpc_train_config_check(&c, ds, &e), &e);
    c.mech.kind = DPC_MECH_NU;
    CHECK(dpc_train_config_check(&c, ds, &e) == DPC_E_INVALID && !strcmp(e.field, "mech.nu") &&
          !strcmp(e.msg, "mech.nu: must be in [0, 1), got 5"), "mech.nu: %s", e.msg);
    dpc_dataset_free(ds);
}

int main(void)
{
    test_coverage();
    test_defaults();
    test_checks();
    return TEST_SUMMARY();
}
