/* train_fixture.h — the trainer tests' data and model builders (test_train, test_dist,
 * test_pitfalls): a synthetic logistic data set of n examples in d dimensions from a seed, and a
 * model from its spec. Both fail the test (CHECK_OK) on error. Include after harness.h. */
#ifndef DPCORR_TESTS_TRAIN_FIXTURE_H
#define DPCORR_TESTS_TRAIN_FIXTURE_H

#include "dpcorr/data.h"
#include "dpcorr/model.h"
#include "dpcorr/rng.h"

static inline dpc_dataset *logistic_data(size_t n, size_t d, uint64_t seed)
{
    dpc_rng rng;
    dpc_rng_seed(&rng, seed);
    dpc_dataset *ds = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_data_synth_logistic(&ds, &rng, 0, n, d, 0.1, 0.0, NULL, &err), &err);
    return ds;
}

static inline dpc_model *model_of(const char *spec, size_t d, size_t k)
{
    dpc_model_config mc;
    dpc_model *m = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_model_parse(&mc, spec, d, k, &err), &err);
    CHECK_OK(dpc_model_new(&m, &mc, &err), &err);
    return m;
}

#endif
