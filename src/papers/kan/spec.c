/* spec.c — the KAN paper's run defaults (dpc_kan_run_config_init) and spec grammars
 * (dpcorr/papers/kan.h): the model "kan2:M[:...]" and the data "kan-synth:...", with the strict numbers of every spec (digits, or an exact integer in
 * exponent form; no sign, no spaces). */
#include "dpcorr/field.h"
#include "dpcorr/io.h"
#include "dpcorr/papers/kan.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void dpc_kan_run_config_init(dpc_kan_run_config *c)
{
    dpc_field_defaults(dpc_kan_run_config_fields(), c);
}

dpc_status dpc_kan_run_config_check(const dpc_kan_run_config *c, dpc_error *err)
{
    if (!c) return dpc_error_param(err, DPC_E_INVALID, "config", "NULL");
    return dpc_field_check(dpc_kan_run_config_fields(), c, err);
}

size_t dpc_kan_run_iterates(size_t iterates, size_t epochs, size_t batch, size_t n)
{
    return epochs ? 1 + epochs * (n / (batch ? batch : 1)) : iterates;
}

dpc_status dpc_kan_run_count_iterates(const dpc_kan_run_config *c, size_t epochs, size_t n,
                                      size_t *T, dpc_error *err)
{
    if (!c || !T) return dpc_error_param(err, DPC_E_INVALID, "config", "NULL");
    if (c->batch > n)
        return dpc_error_param(err, DPC_E_INVALID, "batch",
                               "%zu is larger than the data (%zu examples)", c->batch, n);
    *T = dpc_kan_run_iterates(c->iterates, epochs, c->batch, n);
    return DPC_OK;
}

int dpc_kan2_spec_is(const char *spec) { return spec && !strncmp(spec, "kan2:", 5); }

dpc_status dpc_kan2_config_parse(dpc_kan2_config *c, const char *spec, size_t d, dpc_error *err)
{
    if (!c || !spec) return dpc_error_param(err, DPC_E_INVALID, "model", "NULL argument");
    dpc_field_defaults(dpc_kan2_config_fields(), c); /* m 0 (set below), grid 5, sigmoid */
    c->d = d;
    char buf[128];
    if (!dpc_kan2_spec_is(spec))
        return dpc_error_param(err, DPC_E_INVALID, "model", "expected kan2:M, got '%s'", spec);
    if (strlen(spec) >= sizeof buf)
        return dpc_error_param(err, DPC_E_INVALID, "model", "spec too long");
    strcpy(buf, spec + 5);
    char *save = NULL, *tok = strtok_r(buf, ":", &save);
    uint64_t u;
    if (!tok) return dpc_error_param(err, DPC_E_INVALID, "model", "kan2 needs a width, e.g. kan2:256");
    if (!dpc_io_parse_uint(tok, &u, 0) || u < 1 || u > 1000000)
        return dpc_error_param(err, DPC_E_INVALID, "model",
                               "kan2 width '%s' is not an integer in [1, 1e6]", tok);
    c->m = (size_t)u;
    while ((tok = strtok_r(NULL, ":", &save))) {
        if (!strcmp(tok, "sigmoid")) c->act = DPC_KAN_SIGMOID;
        else if (!strcmp(tok, "tanh")) c->act = DPC_KAN_TANH;
        else if (!strncmp(tok, "grid=", 5)) {
            if (!dpc_io_parse_uint(tok + 5, &u, 0) || u < 1 || u > 256)
                return dpc_error_param(err, DPC_E_INVALID, "model", "grid '%s' must be in 1..256",
                                       tok + 5);
            c->grid = (size_t)u;
        } else {
            return dpc_error_param(err, DPC_E_INVALID, "model",
                                   "kan2 option '%s' (expected grid=G, sigmoid or tanh)", tok);
        }
    }
    return DPC_OK;
}

dpc_status dpc_kan_synth_spec(dpc_dataset **train, dpc_dataset **test, const char *spec,
                              const dpc_rng *rng, dpc_error *err)
{
    if (train) *train = NULL;
    if (test) *test = NULL;
    if (!train || !test || !spec || !rng)
        return dpc_error_param(err, DPC_E_INVALID, "data", "NULL argument");
    size_t v[4] = {0, 0, 0, 0}; /* n, d, test-n, stream */
    static const char *const keys[4] = {"n", "d", "test-n", "stream"};
    double margin = 0.05;
    char buf[256];
    if (strncmp(spec, "kan-synth:", 10))
        return dpc_error_param(err, DPC_E_INVALID, "data", "expected kan-synth:..., got '%s'", spec);
    if (strlen(spec) >= sizeof buf) return dpc_error_param(err, DPC_E_INVALID, "data", "spec too long");
    strcpy(buf, spec + 10);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq)
            return dpc_error_param(err, DPC_E_INVALID, "data",
                                   "kan-synth: expected key=value, got '%s'", tok);
        *eq = '\0';
        int k = 0;
        while (k < 4 && strcmp(tok, keys[k])) k++;
        uint64_t u;
        if (k < 4) {
            if (!dpc_io_parse_uint(eq + 1, &u, 0) || u > ((uint64_t)1 << 32))
                return dpc_error_param(err, DPC_E_INVALID, "data",
                                       "kan-synth: %s: expected an integer in [0, 2^32], got '%s'",
                                       tok, eq + 1);
            v[k] = (size_t)u;
        } else if (!strcmp(tok, "margin")) {
            if (!dpc_io_parse_double(eq + 1, &margin) || margin < 0)
                return dpc_error_param(err, DPC_E_INVALID, "data",
                                       "kan-synth: margin: expected a number >= 0, got '%s'",
                                       eq + 1);
        } else {
            return dpc_error_param(err, DPC_E_INVALID, "data",
                                   "kan-synth: unknown key '%s' (n, d, margin, test-n, stream)", tok);
        }
    }
    dpc_status st = dpc_kan_synth(train, rng, 2 * (uint64_t)v[3], v[0], v[1], margin, NULL, err);
    if (!st && v[2]) st = dpc_kan_synth(test, rng, 2 * (uint64_t)v[3] + 1, v[2], v[1], margin, NULL, err);
    if (st) {
        dpc_dataset_free(*train);
        *train = NULL;
    }
    return st;
}
