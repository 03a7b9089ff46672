/* report.c — which randomness a run used, as its report states it (dpcorr/rng.h). */
#include "dpcorr/io.h"
#include "dpcorr/rng.h"

#include <stdio.h>

void dpc_rng_report_json(dpc_json_writer *w, const dpc_rng *rng)
{
    dpc_json_str(w, "rng_mode", dpc_rng_mode_name(rng->mode));
    if (rng->mode == DPC_RNG_SEEDED) {
        char sd[24]; /* the full 64-bit seed, exact (a double would round it) */
        snprintf(sd, sizeof sd, "%llu", (unsigned long long)rng->seed);
        dpc_json_raw(w, "seed", sd);
    } else {
        dpc_json_null(w, "seed");
    }
}
