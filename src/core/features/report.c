/* report.c — what a run's report says about its feature normalization (dpcorr/features.h): the
 * per-example GroupNorm is data-independent, the private centering a Gaussian release that the
 * trainer composes into the run's ledger. */
#include "dpcorr/account.h"
#include "dpcorr/features.h"
#include "dpcorr/io.h"

#include <math.h>

void dpc_features_normalization_report_json(dpc_json_writer *w, const dpc_features_config *cfg,
                                            const dpc_ledger *L)
{
    dpc_json_obj(w, "normalization");
    if (cfg->center > 0) {
        dpc_json_str(w, "kind", "private");
        dpc_json_str(w, "method", "per-example GroupNorm (data-independent), then the training "
                                  "set's per-coordinate mean released by the Gaussian mechanism "
                                  "and subtracted");
    } else {
        dpc_json_str(w, "kind", cfg->groups ? "data-independent" : "none");
        if (cfg->groups) dpc_json_str(w, "method", "per-example GroupNorm (data-independent)");
    }
    if (cfg->groups) dpc_json_int(w, "groups", (long long)cfg->groups);
    if (cfg->center > 0) {
        dpc_json_num(w, "noise_multiplier", L->n_pre ? L->pre_noise_multiplier[0] : NAN);
        dpc_json_num(w, "epsilon_alone", L->epsilon_pre);
        dpc_json_str(w, "accounting", "composed with the training run into the ledger's epsilon");
    }
    dpc_json_end(w);
}
