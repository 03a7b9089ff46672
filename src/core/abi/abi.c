/* abi.c — sizes of the public structs (dpcorr/abi.h), for bindings that mirror them. */
#include "dpcorr/abi.h"
#include "dpcorr/account.h"
#include "dpcorr/audit.h"
#include "dpcorr/features.h"
#include "dpcorr/mech.h"
#include "dpcorr/model.h"
#include "dpcorr/privatize.h"
#include "dpcorr/rng.h"
#include "dpcorr/sampler.h"
#include "dpcorr/strategy.h"
#include "dpcorr/train.h"

#include <string.h>

#define ENTRY(T) {#T, sizeof(T)}

static const struct {
    const char *name;
    size_t size;
} abi_table[] = {
    ENTRY(dpc_error),            ENTRY(dpc_rng),
    ENTRY(dpc_rng_stream),       ENTRY(dpc_mech_params),
    ENTRY(dpc_participation),    ENTRY(dpc_sensitivity),
    ENTRY(dpc_workload),         ENTRY(dpc_mech_error),
    ENTRY(dpc_noise_config),     ENTRY(dpc_gauss_event),
    ENTRY(dpc_event),            ENTRY(dpc_account_opts),
    ENTRY(dpc_account_result),   ENTRY(dpc_account_mech_info),
    ENTRY(dpc_ledger),           ENTRY(dpc_strategy_problem),
    ENTRY(dpc_strategy_loss),    ENTRY(dpc_strategy_options),
    ENTRY(dpc_strategy),         ENTRY(dpc_sampler_config),
    ENTRY(dpc_sampler_desc),     ENTRY(dpc_train_config),
    ENTRY(dpc_step_info),        ENTRY(dpc_progress),
    ENTRY(dpc_train_record),     ENTRY(dpc_privatize_config),
    ENTRY(dpc_account_query),    ENTRY(dpc_account_solution),
    ENTRY(dpc_pld_params),       ENTRY(dpc_audit_config),
    ENTRY(dpc_model_config),     ENTRY(dpc_features_config),
    ENTRY(dpc_advise_query),
};

#define ABI_COUNT (sizeof abi_table / sizeof abi_table[0])

size_t dpc_abi_sizeof(const char *type_name)
{
    if (!type_name) return 0;
    for (size_t i = 0; i < ABI_COUNT; i++)
        if (!strcmp(abi_table[i].name, type_name)) return abi_table[i].size;
    return 0;
}

size_t dpc_abi_count(void)
{
    return ABI_COUNT;
}

const char *dpc_abi_name(size_t i)
{
    return i < ABI_COUNT ? abi_table[i].name : NULL;
}
