/* noise.c — the streaming correlated-noise generator: out_t = (B Z)_t on a coordinate range.
 *
 * Z[r, j] = dpc_rng_gaussian(stream, r, j) is a pure function of (row, coordinate), so the
 * generator's only state is what an engine chooses to remember:
 *   FIR   (B banded or Toeplitz)  buffer: the last b_len - 1 rows of Z;  replay: nothing
 *   IIR   (C banded: BSR)         the last c_len - 1 outputs (solves C x = z forward)
 *   BLT                            k buffers s_i of past outputs
 *   DENSE                          buffer: all past rows of Z;  replay: nothing
 *   TREE                           buffer: the estimates of the maximal complete nodes (a stack);
 *                                  replay: nothing (node estimates are recomputed from Z)
 * Buffer and replay forms perform the same floating-point operations in the same order on the
 * same Z values, hence produce bit-identical output. Every coordinate is independent, so
 * generators over disjoint coordinate ranges reproduce a single generator exactly. The steps
 * themselves (noise_step.inc) run fused over pieces of the range, at the generator's
 * instruction-set level; every level computes the same values. */
#include "common/util.h"
#include "field/field_def.h"
#include "mech/noise_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_BUDGET ((size_t)1 << 30)

const char *dpc_noise_form_name(dpc_noise_form f)
{
    return f == DPC_NOISE_BUFFER ? "buffer" : f == DPC_NOISE_REPLAY ? "replay" : "auto";
}

int dpc_mech_form_available(const dpc_mech *m, dpc_noise_form form)
{
    if (form != DPC_NOISE_REPLAY) return 1;
    return m->engine == ENGINE_FIR || m->engine == ENGINE_DENSE || m->engine == ENGINE_TREE;
}

size_t dpc_mech_state_floats(const dpc_mech *m, dpc_noise_form form)
{
    if (form == DPC_NOISE_REPLAY && dpc_mech_form_available(m, form)) return 0;
    switch (m->engine) {
    case ENGINE_FIR: return m->b_len - 1;
    case ENGINE_IIR: return m->c_len - 1;
    case ENGINE_BLT: return m->p.nbuf;
    case ENGINE_DENSE: return m->n - 1;
    case ENGINE_TREE: return dpc__tree_levels(m->n);
    }
    return 0;
}

static inline double *row_of(double *base, size_t slot, size_t d) { return base + slot * d; }

/* Z[row] over the generator's whole range into dst (d) (seek: refilling buffers). */
static void gen_row(const dpc_noise *g, uint64_t row, double *dst)
{
    dpc_rng_gaussian_fill_isa(&g->s, row, g->coord0, dst, g->d, g->isa);
}

/* ---- construction -------------------------------------------------------------------------- */

void dpc_noise_free(dpc_noise *g)
{
    if (!g) return;
    free(g->state);
    free(g->scratch);
    free(g);
}

/* The manual of dpc_noise_config, one row per field in struct order (dpcorr/mech.h). The
 * refusals of dpc_noise_new name them as "cfg." + name. */
#define NC(m) DPC_FIELD_AT(dpc_noise_config, m)
static const char *const nc_form_names[] = {"auto", "buffer", "replay"};
static const char *const nc_isa_names[] = {"auto", "sse2", "avx2", "avx512"};
static const dpc_field nc_fields[] = {
    {.name = "coord0", .type = DPC_FIELD_SIZE, NC(coord0), .flags = DPC_FIELD_NO_RANGE,
     .doc = "first global coordinate handled (coord0 + d <= 2^49)"},
    {.name = "d", .type = DPC_FIELD_SIZE, NC(d), .flags = DPC_FIELD_NO_RANGE,
     .doc = "number of coordinates, >= 1 (the argument of dpc_noise_config_init)"},
    {.name = "form", .type = DPC_FIELD_ENUM, NC(form), .def = DPC_NOISE_AUTO,
     DPC_FIELD_NAMES(nc_form_names),
     .doc = "state form: auto (buffer when it fits memory_budget), buffer, replay"},
    {.name = "memory_budget", .type = DPC_FIELD_SIZE, NC(memory_budget),
     .flags = DPC_FIELD_NO_RANGE, .def_text = "1 GiB",
     .doc = "auto form: max bytes of buffer state (0 = 1 GiB)"},
    {.name = "isa", .type = DPC_FIELD_ENUM, NC(isa), .def = DPC_ISA_AUTO,
     DPC_FIELD_NAMES(nc_isa_names), .flags = DPC_FIELD_RUNTIME,
     .doc = "instruction-set level (auto = the best this CPU runs; the noise is the same)"},
};
#undef NC
static const dpc_field_table nc_table = DPC_FIELD_TABLE(dpc_noise_config, nc_fields);

const dpc_field_table *dpc_noise_config_fields(void) { return &nc_table; }

void dpc_noise_config_init(dpc_noise_config *cfg, size_t d)
{
    dpc_field_defaults(&nc_table, cfg);
    cfg->d = d;
}

dpc_status dpc_noise_new(dpc_noise **out, const dpc_mech *m, const dpc_rng_stream *stream,
                         const dpc_noise_config *cfg, dpc_error *err)
{
    *out = NULL;
    if (!m || !stream || !cfg) return dpc_error_set(err, DPC_E_INVALID, "noise: NULL argument");
    if (cfg->d == 0) return dpc_error_param(err, DPC_E_INVALID, "cfg.d", "must be >= 1");
    if (cfg->coord0 + cfg->d < cfg->coord0 || cfg->coord0 + cfg->d > ((uint64_t)1 << 49))
        return dpc_error_param(err, DPC_E_RANGE, "cfg.d", "coordinates beyond 2^49");
    if (cfg->form != DPC_NOISE_AUTO && cfg->form != DPC_NOISE_BUFFER &&
        cfg->form != DPC_NOISE_REPLAY)
        return dpc_error_param(err, DPC_E_INVALID, "cfg.form", "unknown value %d", (int)cfg->form);
    dpc_isa isa;
    dpc_status ist = dpc_isa_resolve(cfg->isa, &isa, err);
    if (ist) {
        if (err) dpc_error_nest(err, "cfg");
        return ist;
    }
    if (cfg->form == DPC_NOISE_REPLAY && !dpc_mech_form_available(m, DPC_NOISE_REPLAY))
        return dpc_error_param(err, DPC_E_UNSUPPORTED, "cfg.form",
                               "%s has no replay form (its state depends on past outputs); use "
                               "buffer",
                               dpc_mech_kind_name(m->p.kind));
    dpc_noise *g = calloc(1, sizeof *g);
    if (!g) return DPC__NOMEM(err, "noise generator");
    g->m = m;
    g->s = *stream;
    g->coord0 = cfg->coord0;
    g->d = cfg->d;
    g->n = m->n;
    g->engine = m->engine;
    g->isa = isa;
    size_t d = g->d, budget = cfg->memory_budget ? cfg->memory_budget : DEFAULT_BUDGET;
    size_t per = dpc_mech_state_floats(m, DPC_NOISE_BUFFER) + 1;
    dpc_noise_form form = cfg->form;
    if (form == DPC_NOISE_AUTO) {
        size_t bytes;
        int fits = dpc__mul_ok(per, d, &bytes) && dpc__mul_ok(bytes, sizeof(double), &bytes) &&
                   bytes <= budget;
        form = (fits || !dpc_mech_form_available(m, DPC_NOISE_REPLAY)) ? DPC_NOISE_BUFFER
                                                                       : DPC_NOISE_REPLAY;
    }
    g->form = form;
    unsigned levels = dpc__tree_levels(m->n);
    for (unsigned h = 0; h < DPC__NOISE_TREE_LEVELS; h++) {
        g->hv[h] = dpc__tree_honaker_var(h);
        g->hw[h] = 1.0 - g->hv[h];
    }
    size_t slots = 0, nscratch = 1;
    switch (g->engine) {
    case ENGINE_FIR:
        slots = form == DPC_NOISE_BUFFER && m->b_len > 1 ? m->b_len : 0;
        nscratch = 1;
        break;
    case ENGINE_IIR: slots = m->c_len > 1 ? m->c_len - 1 : 0; nscratch = 1; break;
    case ENGINE_BLT: slots = m->p.nbuf; nscratch = 1; break;
    case ENGINE_DENSE: slots = form == DPC_NOISE_BUFFER ? m->n : 0; nscratch = 1; break;
    case ENGINE_TREE:
        slots = form == DPC_NOISE_BUFFER ? levels + 1 : 0;
        nscratch = 2 + 2 * (size_t)levels + 2;
        break;
    }
    g->slots = slots;
    g->nscratch = nscratch;
    if (slots) {
        g->state = dpc__calloc(slots * d, sizeof(double));
        if (!g->state || slots * d / slots != d) {
            dpc_noise_free(g);
            return dpc_error_set(err, DPC_E_NOMEM,
                                 "noise: cannot allocate %zu x %zu doubles of %s state", slots, d,
                                 dpc_noise_form_name(form));
        }
    }
    g->piece = d < DPC__NOISE_PIECE ? d : DPC__NOISE_PIECE;
    g->scratch = dpc__calloc(nscratch * g->piece, sizeof(double));
    if (!g->scratch) {
        dpc_noise_free(g);
        return DPC__NOMEM(err, "noise scratch");
    }
    *out = g;
    return DPC_OK;
}

size_t dpc_noise_step(const dpc_noise *g) { return g->t; }

size_t dpc_noise_bytes(const dpc_noise *g)
{
    return g ? sizeof *g + (g->slots * g->d + g->nscratch * g->piece) * sizeof(double) : 0;
}
dpc_noise_form dpc_noise_get_form(const dpc_noise *g) { return g->form; }

/* ---- one step ----------------------------------------------------------------------------- */

dpc_status dpc_noise_next(dpc_noise *g, double *out, dpc_error *err)
{
    if (g->t >= g->n)
        return dpc_error_set(err, DPC_E_RANGE, "noise: all %zu steps have been emitted", g->n);
    switch (g->isa) {
    case DPC_ISA_AVX512: dpc__noise_step_avx512(g, out); break;
    case DPC_ISA_AVX2: dpc__noise_step_avx2(g, out); break;
    default: dpc__noise_step_sse2(g, out); break;
    }
    g->t++;
    return DPC_OK;
}

/* ---- seek / checkpoint -------------------------------------------------------------------- */

dpc_status dpc_noise_seek(dpc_noise *g, size_t t, dpc_error *err)
{
    if (t > g->n) return dpc_error_param(err, DPC_E_RANGE, "t", "step %zu > n = %zu", t, g->n);
    size_t d = g->d;
    if (g->form == DPC_NOISE_REPLAY || g->engine == ENGINE_FIR || g->engine == ENGINE_DENSE ||
        g->engine == ENGINE_TREE) {
        g->t = t;
        if (g->form == DPC_NOISE_BUFFER) {
            if (g->engine == ENGINE_FIR && g->m->b_len > 1) {
                size_t L = g->m->b_len, from = t >= L - 1 ? t - (L - 1) : 0;
                for (size_t r = from; r < t; r++) gen_row(g, r, row_of(g->state, r % L, d));
            } else if (g->engine == ENGINE_DENSE) {
                for (size_t r = 0; r < t; r++) gen_row(g, r, row_of(g->state, r, d));
            } else if (g->engine == ENGINE_TREE) {
                dpc__noise_tree_rebuild(g);
            }
        }
        return DPC_OK;
    }
    /* IIR and BLT: the state depends on every past output; replay from step 0. */
    if (g->state) memset(g->state, 0, g->slots * d * sizeof(double));
    g->t = 0;
    double *tmp = dpc__malloc_array(d, sizeof *tmp);
    if (!tmp) return DPC__NOMEM(err, "seek scratch");
    for (size_t r = 0; r < t; r++) {
        dpc_status st = dpc_noise_next(g, tmp, err);
        if (st) {
            free(tmp);
            return st;
        }
    }
    free(tmp);
    return DPC_OK;
}

size_t dpc_noise_state_size(const dpc_noise *g)
{
    if (g->engine == ENGINE_IIR || g->engine == ENGINE_BLT) return g->slots * g->d;
    return 0; /* regenerated from the RNG on import */
}

dpc_status dpc_noise_export(const dpc_noise *g, size_t *step, double *state, dpc_error *err)
{
    (void)err;
    *step = g->t;
    size_t d = g->d, S = g->slots;
    if (g->engine == ENGINE_BLT) { /* coordinate-major: state[i * k + q] = s_q[i] */
        for (size_t q = 0; q < S; q++)
            for (size_t i = 0; i < d; i++) state[i * S + q] = g->state[q * d + i];
    } else if (g->engine == ENGINE_IIR) {
        /* coordinate-major: state[i * S + j] = x_{t-1-j}[i] (zero where t-1-j < 0) */
        for (size_t j = 0; j < S; j++) {
            const double *x = j + 1 <= g->t ? row_of(g->state, (g->t - 1 - j) % S, d) : NULL;
            for (size_t i = 0; i < d; i++) state[i * S + j] = x ? x[i] : 0.0;
        }
    }
    return DPC_OK;
}

/* The saved state of a BUFFER form whose state depends on every past output (IIR, BLT) is a
 * pure function of (key, step): the import replays steps 0..step-1 from the key (dpc_noise_seek)
 * and compares the result with the saved state bit for bit, so an edited buffer (with its file's
 * checksum recomputed: the checksum is not a MAC) or a state of another key or step is refused
 * rather than released as noise. */
static dpc_status verify_replayed(const dpc_noise *g, size_t step, const double *state,
                                  dpc_error *err)
{
    size_t d = g->d, S = g->slots, n = S * d;
    double *mine = dpc__malloc_array(n, sizeof *mine);
    if (!mine) return DPC__NOMEM(err, "noise state replay");
    size_t t;
    dpc_status st = dpc_noise_export(g, &t, mine, err);
    for (size_t k = 0; !st && k < n; k++) {
        if (memcmp(&mine[k], &state[k], sizeof(double)) == 0) continue;
        st = dpc_error_param(err, DPC_E_STATE, "noise_state",
                             "coordinate %zu, buffer %zu at step %zu: the saved noise state has "
                             "%.17g, its replay from the key gives %.17g (the state is a function "
                             "of the key and the step: an edited state, or one of another key or "
                             "step)",
                             g->coord0 + k / S, k % S, step, state[k], mine[k]);
    }
    free(mine);
    return st;
}

dpc_status dpc_noise_import(dpc_noise *g, size_t step, const double *state, dpc_error *err)
{
    if (step > g->n) return dpc_error_param(err, DPC_E_STATE, "step", "%zu > n = %zu", step, g->n);
    if (!dpc_noise_state_size(g)) return dpc_noise_seek(g, step, err); /* regenerated */
    if (!state) return dpc_error_param(err, DPC_E_INVALID, "state", "NULL");
    dpc_status st = dpc_noise_seek(g, step, err);
    return st ? st : verify_replayed(g, step, state, err);
}
