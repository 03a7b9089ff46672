/* stream_noise.c — correlated noise for a large model in constant memory: a BSR mechanism's
 * (B Z)_t over d coordinates, emitted one slice of coordinates at a time (each slice its own
 * dpc_noise over [coord0, coord0 + width), as ranks or threads do), so memory is the slices'
 * state, never n x d. The slices together emit exactly the noise of one generator over all d. */
#include <dpcorr.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define D 200000 /* model parameters */
#define SLICE 50000
#define STEPS 64

int main(void)
{
    dpc_error err = {0};
    dpc_rng rng;
    dpc_rng_seed(&rng, 3); /* seeded: reproducible example; real releases use dpc_rng_seed_os */
    dpc_rng_stream stream = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_NOISE, 0));
    dpc_mech_params mp;
    dpc_mech_params_init(&mp);
    mp.kind = DPC_MECH_BSR;
    mp.steps = STEPS;
    mp.bands = 8;
    mp.momentum = 0.9;
    dpc_mech *mech = NULL;
    if (dpc_mech_new(&mech, &mp, &err)) {
        fprintf(stderr, "mech: %s: %s\n", err.field, err.msg);
        return 1;
    }
    dpc_noise *slice[D / SLICE] = {NULL}, *whole = NULL;
    double *z = malloc(D * sizeof *z), *ref = malloc(D * sizeof *ref);
    int rc = !z || !ref;
    size_t bytes = 0;
    for (size_t s = 0; !rc && s < D / SLICE; s++) {
        dpc_noise_config nc;
        dpc_noise_config_init(&nc, SLICE);
        nc.coord0 = s * SLICE;
        rc = dpc_noise_new(&slice[s], mech, &stream, &nc, &err) != DPC_OK;
        if (!rc) bytes += dpc_noise_bytes(slice[s]);
    }
    dpc_noise_config all;
    dpc_noise_config_init(&all, D);
    if (!rc) rc = dpc_noise_new(&whole, mech, &stream, &all, &err) != DPC_OK;
    size_t differ = 0;
    for (size_t t = 0; !rc && t < STEPS; t++) {
        for (size_t s = 0; !rc && s < D / SLICE; s++)
            rc = dpc_noise_next(slice[s], z + s * SLICE, &err) != DPC_OK;
        if (!rc) rc = dpc_noise_next(whole, ref, &err) != DPC_OK;
        if (!rc && memcmp(z, ref, D * sizeof *z)) differ++;
    }
    if (rc) fprintf(stderr, "noise: %s: %s\n", err.field, err.msg);
    else
        printf("stream_noise: %zu steps of %d coordinates, %s; slices hold %.1f MiB (n x d would "
               "be %.0f MiB); slices vs one generator: %s\n", (size_t)STEPS, D,
               dpc_noise_get_form(whole) == DPC_NOISE_BUFFER ? "buffer form" : "replay form",
               bytes / 1048576.0, (double)STEPS * D * 8 / 1048576.0,
               differ ? "DIFFERENT" : "bit for bit the same");
    for (size_t s = 0; s < D / SLICE; s++) dpc_noise_free(slice[s]);
    dpc_noise_free(whole);
    dpc_mech_free(mech);
    free(z);
    free(ref);
    return rc || differ;
}
