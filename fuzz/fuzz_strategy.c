/* fuzz_strategy.c — the strategy file loader (JSON), then the mechanism of a loaded strategy
 * (its parameters validated and built when small: n <= 4096). */
#include "fuzz_common.h"
#include "dpcorr/strategy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fz_file(0, data, size, ".json");
    dpc_strategy *s = NULL;
    dpc_error err = {0};
    dpc_status st = dpc_strategy_load(&s, path, &err);
    fz_check_error(st, &err);
    if (!st) {
        if (!s) abort();
        dpc_mech_params p;
        dpc_strategy_mech_params(s, &p);
        dpc_error e2 = {0};
        if (p.steps <= 4096) {
            dpc_mech *m = NULL;
            dpc_status ms = dpc_mech_new(&m, &p, &e2);
            fz_check_error(ms, &e2);
            dpc_mech_free(m);
        } else {
            fz_check_error(dpc_mech_params_check(&p, &e2), &e2);
        }
    }
    dpc_strategy_free(s);
    return 0;
}
