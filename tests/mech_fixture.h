/* mech_fixture.h — the mechanism the accounting tests build most: kind, n steps, nu (for nu and
 * anti-PGD; 0 otherwise) and bands (0: the kind's default), failing the test when refused.
 * Include after harness.h. */
#ifndef DPCORR_TEST_MECH_FIXTURE_H
#define DPCORR_TEST_MECH_FIXTURE_H

#include "dpcorr/mech.h"

static inline dpc_mech *mech_of(dpc_mech_kind kind, size_t n, double nu, size_t bands)
{
    dpc_mech_params p;
    dpc_mech_params_init(&p);
    p.kind = kind;
    p.steps = n;
    p.nu = nu;
    if (bands) p.bands = bands;
    dpc_mech *m = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_mech_new(&m, &p, &err), &err);
    return m;
}

#endif
