/* test_abi.c — dpc_abi_sizeof reports each public struct's size as this translation unit sees
 * it, knows every listed name exactly once, and returns 0 for unknown names. */
#include "dpcorr.h"
#include "harness.h"

#include <string.h>

#define SIZE_OF(T) {#T, sizeof(T)}

int main(void)
{
    static const struct {
        const char *name;
        size_t size;
    } expect[] = {
        SIZE_OF(dpc_error),          SIZE_OF(dpc_rng),
        SIZE_OF(dpc_rng_stream),     SIZE_OF(dpc_mech_params),
        SIZE_OF(dpc_participation),  SIZE_OF(dpc_sensitivity),
        SIZE_OF(dpc_workload),       SIZE_OF(dpc_mech_error),
        SIZE_OF(dpc_noise_config),   SIZE_OF(dpc_gauss_event),
        SIZE_OF(dpc_event),          SIZE_OF(dpc_account_opts),
        SIZE_OF(dpc_account_result), SIZE_OF(dpc_account_mech_info),
        SIZE_OF(dpc_ledger),         SIZE_OF(dpc_strategy_problem),
        SIZE_OF(dpc_strategy_loss),  SIZE_OF(dpc_strategy_options),
        SIZE_OF(dpc_strategy),       SIZE_OF(dpc_sampler_config),
        SIZE_OF(dpc_sampler_desc),   SIZE_OF(dpc_train_config),
        SIZE_OF(dpc_step_info),      SIZE_OF(dpc_progress),
        SIZE_OF(dpc_train_record),   SIZE_OF(dpc_privatize_config),
        SIZE_OF(dpc_account_query),  SIZE_OF(dpc_account_solution),
    SIZE_OF(dpc_pld_params),     SIZE_OF(dpc_audit_config),
    SIZE_OF(dpc_model_config),   SIZE_OF(dpc_features_config),
    SIZE_OF(dpc_advise_query),
    };
    size_t ne = sizeof expect / sizeof expect[0];
    for (size_t i = 0; i < ne; i++)
        CHECK(dpc_abi_sizeof(expect[i].name) == expect[i].size, "%s: library %zu, header %zu",
              expect[i].name, dpc_abi_sizeof(expect[i].name), expect[i].size);
    CHECK(dpc_abi_count() == ne, "the library lists %zu names, the test %zu", dpc_abi_count(), ne);
    for (size_t i = 0; i < dpc_abi_count(); i++) {
        const char *a = dpc_abi_name(i);
        CHECK(a && dpc_abi_sizeof(a) > 0, "name %zu is known", i);
        for (size_t j = 0; j < i; j++)
            CHECK(strcmp(a, dpc_abi_name(j)) != 0, "%s listed twice", a);
    }
    CHECK(dpc_abi_name(dpc_abi_count()) == NULL, "past the end: NULL");
    CHECK(dpc_abi_sizeof("dpc_no_such_struct") == 0, "unknown name: 0");
    CHECK(dpc_abi_sizeof("") == 0, "empty name: 0");
    CHECK(dpc_abi_sizeof(NULL) == 0, "NULL: 0");
    return TEST_SUMMARY();
}
