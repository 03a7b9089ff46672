/* noise_ref.c — the C library's noise rows, for the Python suite's bit-identity test (compiled by
 * python/tests/conftest.py against libdpcorr). Prints ROWS rows of (B Z)_t over coordinates
 * [0, DIM) of stream DPC_STREAM_ID(DPC_STREAM_NOISE, 0) of the seeded key SEED, one value per
 * line in %a (exact), for the mechanism KIND over STEPS steps with parameters name=value
 * (nu, lambda, bands, momentum, decay, honaker, theta=a,b,.., omega=a,b,..).
 *
 *     noise_ref KIND STEPS SEED DIM ROWS [name=value ...]
 */
#include "dpcorr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t list(const char *s, double *out, size_t cap)
{
    size_t n = 0;
    while (*s && n < cap) {
        char *end;
        out[n++] = strtod(s, &end);
        s = *end == ',' ? end + 1 : end;
        if (end == s && *s) break;
    }
    return n;
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: noise_ref KIND STEPS SEED DIM ROWS [name=value ...]\n");
        return 2;
    }
    dpc_error err = {0};
    dpc_mech_params p;
    dpc_mech_params_init(&p);
    if (dpc_mech_kind_parse(argv[1], &p.kind, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 2;
    }
    p.steps = strtoull(argv[2], NULL, 10);
    uint64_t seed = strtoull(argv[3], NULL, 10);
    size_t dim = strtoull(argv[4], NULL, 10), rows = strtoull(argv[5], NULL, 10);
    double theta[32], omega[32];
    for (int i = 6; i < argc; i++) {
        char *eq = strchr(argv[i], '=');
        if (!eq) return 2;
        *eq = 0;
        const char *k = argv[i], *v = eq + 1;
        if (!strcmp(k, "nu")) p.nu = atof(v);
        else if (!strcmp(k, "lambda")) p.lambda = atof(v);
        else if (!strcmp(k, "bands")) p.bands = strtoull(v, NULL, 10);
        else if (!strcmp(k, "momentum")) p.momentum = atof(v);
        else if (!strcmp(k, "decay")) p.decay = atof(v);
        else if (!strcmp(k, "honaker")) p.honaker = atoi(v);
        else if (!strcmp(k, "theta")) p.nbuf = list(v, theta, 32), p.theta = theta;
        else if (!strcmp(k, "omega")) list(v, omega, 32), p.omega = omega;
        else return 2;
    }
    dpc_rng rng;
    dpc_rng_seed(&rng, seed);
    dpc_rng_stream s = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_NOISE, 0));
    dpc_mech *m = NULL;
    dpc_noise *g = NULL;
    dpc_noise_config cfg = {0, dim, DPC_NOISE_AUTO, 0, DPC_ISA_AUTO};
    double *out = malloc(dim * sizeof *out);
    if (!out || dpc_mech_new(&m, &p, &err) || dpc_noise_new(&g, m, &s, &cfg, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    for (size_t r = 0; r < rows; r++) {
        if (dpc_noise_next(g, out, &err)) {
            fprintf(stderr, "%s\n", err.msg);
            return 1;
        }
        for (size_t j = 0; j < dim; j++) printf("%a\n", out[j]);
    }
    dpc_noise_free(g);
    dpc_mech_free(m);
    free(out);
    return 0;
}
