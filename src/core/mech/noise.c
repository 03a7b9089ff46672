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
 * generators over disjoint coordinate ranges reproduce a single generator exactly. */
#include "common/util.h"
#include "mech/mech_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_BUDGET ((size_t)1 << 30)
#define TREE_MAX_LEVELS 64

struct dpc_noise {
    const dpc_mech *m;
    dpc_rng_stream s;
    size_t coord0, d, t, n;
    dpc_noise_form form;
    mech_engine engine;
    size_t slots;        /* FIR: b_len; IIR: c_len - 1; DENSE: n; TREE: stack capacity */
    double *state;       /* (slots, d) or BLT (d, k) */
    double *scratch;     /* (nscratch, d) */
    size_t nscratch;
    unsigned depth;      /* TREE buffer: stack depth */
    double hv[TREE_MAX_LEVELS], hw[TREE_MAX_LEVELS]; /* Honaker v_h and 1 - v_h */
};

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

static void gen(const dpc_noise *g, uint64_t row, double *dst)
{
    dpc_rng_gaussian_fill(&g->s, row, g->coord0, dst, g->d);
}

/* ---- TREE helpers ------------------------------------------------------------------------ */

/* est(h, i) into dst using scratch buffers tmp[0 .. 2h+1) (replay / rebuild). */
static void tree_est(const dpc_noise *g, unsigned h, uint64_t i, double *dst, double *tmp)
{
    size_t d = g->d;
    if (h == 0 || !g->m->p.honaker) {
        gen(g, dpc__tree_node_row(h, i), dst);
        return;
    }
    double *L = tmp, *R = tmp + d, *rest = tmp + 2 * d;
    tree_est(g, h - 1, 2 * i, L, rest);
    tree_est(g, h - 1, 2 * i + 1, R, rest);
    gen(g, dpc__tree_node_row(h, i), dst);
    double v = g->hv[h], w = g->hw[h];
    for (size_t j = 0; j < d; j++) dst[j] = v * dst[j] + w * (L[j] + R[j]);
}

static void tree_next_buffer(dpc_noise *g, double *out)
{
    size_t d = g->d, t = g->t;
    uint64_t t1 = (uint64_t)t + 1;
    unsigned H = 0;
    while (!((t1 >> H) & 1)) H++;
    double *slot = g->state;
    double *sumL = g->scratch, *zp = g->scratch + d;
    unsigned top = g->depth; /* the leaf goes on top */
    gen(g, dpc__tree_node_row(0, t), row_of(slot, top, d));
    for (unsigned h = 1; h <= H; h++) {
        double *L = row_of(slot, top - 1, d), *R = row_of(slot, top, d);
        if (h == 1)
            for (size_t j = 0; j < d; j++) sumL[j] = 0.0 + L[j];
        else
            for (size_t j = 0; j < d; j++) sumL[j] += L[j];
        uint64_t ih = (t1 >> h) - 1;
        if (g->m->p.honaker) {
            gen(g, dpc__tree_node_row(h, ih), zp);
            double v = g->hv[h], w = g->hw[h];
            for (size_t j = 0; j < d; j++) L[j] = v * zp[j] + w * (L[j] + R[j]);
        } else {
            gen(g, dpc__tree_node_row(h, ih), L);
        }
        top--;
    }
    double *cur = row_of(slot, top, d);
    if (H == 0)
        memcpy(out, cur, d * sizeof *out);
    else
        for (size_t j = 0; j < d; j++) out[j] = cur[j] - sumL[j];
    g->depth = top + 1;
}

static void tree_next_replay(dpc_noise *g, double *out)
{
    size_t d = g->d, t = g->t;
    uint64_t t1 = (uint64_t)t + 1;
    unsigned H = 0;
    while (!((t1 >> H) & 1)) H++;
    double *sumL = g->scratch, *L = g->scratch + d, *tmp = g->scratch + 2 * d;
    for (unsigned h = 1; h <= H; h++) {
        uint64_t ih = (t1 >> h) - 1;
        tree_est(g, h - 1, 2 * ih, L, tmp);
        if (h == 1)
            for (size_t j = 0; j < d; j++) sumL[j] = 0.0 + L[j];
        else
            for (size_t j = 0; j < d; j++) sumL[j] += L[j];
    }
    tree_est(g, H, (t1 >> H) - 1, out, tmp);
    if (H > 0)
        for (size_t j = 0; j < d; j++) out[j] = out[j] - sumL[j];
}

/* Rebuilds the stack for "next step = t": the maximal complete nodes of [0, t). */
static void tree_rebuild(dpc_noise *g)
{
    uint64_t t = g->t, start = 0;
    unsigned depth = 0;
    double *tmp = g->scratch + g->d; /* scratch[1..] */
    for (int h = 63; h >= 0; h--) {
        if (!((t >> h) & 1)) continue;
        uint64_t i = start >> h;
        tree_est(g, (unsigned)h, i, row_of(g->state, depth, g->d), tmp);
        depth++;
        start += (uint64_t)1 << h;
    }
    g->depth = depth;
}

/* ---- construction -------------------------------------------------------------------------- */

void dpc_noise_free(dpc_noise *g)
{
    if (!g) return;
    free(g->state);
    free(g->scratch);
    free(g);
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
    for (unsigned h = 0; h < TREE_MAX_LEVELS; h++) {
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
    g->scratch = dpc__calloc(nscratch * d, sizeof(double));
    if (!g->scratch) {
        dpc_noise_free(g);
        return DPC__NOMEM(err, "noise scratch");
    }
    *out = g;
    return DPC_OK;
}

size_t dpc_noise_step(const dpc_noise *g) { return g->t; }
dpc_noise_form dpc_noise_get_form(const dpc_noise *g) { return g->form; }

/* ---- one step ----------------------------------------------------------------------------- */

static void fir_next(dpc_noise *g, double *out)
{
    /* out = b_0 z_t, then out += b_j z_{t-j} for j = 1, 2, ... (this order in both forms). */
    const double *b = g->m->bcoef;
    size_t d = g->d, t = g->t, L = g->m->b_len;
    size_t jmax = t < L - 1 ? t : L - 1;
    size_t j = 1;
    if (g->form == DPC_NOISE_BUFFER && L > 1) {
        double *zt = row_of(g->state, t % L, d);
        gen(g, t, zt);
        if (jmax >= 1 && b[1] != 0.0) { /* fuse the first two terms: same operations */
            const double *z1 = row_of(g->state, (t - 1) % L, d);
            double b0 = b[0], b1 = b[1];
            for (size_t i = 0; i < d; i++) out[i] = b0 * zt[i] + b1 * z1[i];
            j = 2;
        } else {
            for (size_t i = 0; i < d; i++) out[i] = b[0] * zt[i];
        }
        for (; j <= jmax; j++) {
            if (b[j] == 0.0) continue;
            const double *z = row_of(g->state, (t - j) % L, d);
            double bj = b[j];
            for (size_t i = 0; i < d; i++) out[i] += bj * z[i];
        }
    } else {
        gen(g, t, out);
        if (b[0] != 1.0)
            for (size_t i = 0; i < d; i++) out[i] = b[0] * out[i];
        double *z = g->scratch;
        for (; j <= jmax; j++) {
            if (b[j] == 0.0) continue;
            gen(g, t - j, z);
            double bj = b[j];
            for (size_t i = 0; i < d; i++) out[i] += bj * z[i];
        }
    }
}

static void iir_next(dpc_noise *g, double *out)
{
    /* C x = z: x_t = (z_t - sum_{j=1}^{c_len-1} c_j x_{t-j}) / c_0 (Kalinin & Lampert 2024). */
    const double *c = g->m->ccoef;
    size_t d = g->d, t = g->t, S = g->slots;
    gen(g, t, out);
    size_t jmax = t < S ? t : S;
    for (size_t j = 1; j <= jmax; j++) {
        if (c[j] == 0.0) continue;
        const double *x = row_of(g->state, (t - j) % S, d);
        double cj = c[j];
        for (size_t i = 0; i < d; i++) out[i] -= cj * x[i];
    }
    if (c[0] != 1.0)
        for (size_t i = 0; i < d; i++) out[i] /= c[0];
    if (S) memcpy(row_of(g->state, t % S, d), out, d * sizeof *out);
}

static void blt_next(dpc_noise *g, double *out)
{
    /* x_t = z_t - sum_i omega_i s_i;  s_i <- theta_i s_i + x_t  (state laid out (d, k)).
     * Z is generated in cache-sized pieces and consumed at once, so the pass over the state
     * is the only trip to memory (the values are those of a whole-row fill: pure RNG). */
    size_t d = g->d, k = g->m->p.nbuf;
    const double *th = g->m->p.theta, *om = g->m->p.omega;
    double *s = g->state;
    enum { PIECE = 512 };
    for (size_t i0 = 0; i0 < d; i0 += PIECE) {
        size_t m = d - i0 < PIECE ? d - i0 : PIECE;
        double *z = out + i0;
        dpc_rng_gaussian_fill(&g->s, g->t, g->coord0 + i0, z, m);
        for (size_t i = 0; i < m; i++) {
            double *si = s + (i0 + i) * k;
            double x = z[i];
            for (size_t q = 0; q < k; q++) x -= om[q] * si[q];
            for (size_t q = 0; q < k; q++) si[q] = th[q] * si[q] + x;
            z[i] = x;
        }
    }
}

static void dense_next(dpc_noise *g, double *out)
{
    size_t d = g->d, t = g->t, n = g->n;
    const double *Brow = g->m->Bd + t * n;
    double *z = g->form == DPC_NOISE_BUFFER ? row_of(g->state, t, d) : g->scratch;
    if (g->form == DPC_NOISE_BUFFER) gen(g, t, z);
    int first = 1;
    for (size_t s = 0; s <= t; s++) {
        if (Brow[s] == 0.0) continue;
        const double *zs;
        if (g->form == DPC_NOISE_BUFFER) {
            zs = row_of(g->state, s, d);
        } else {
            gen(g, s, g->scratch);
            zs = g->scratch;
        }
        double bs = Brow[s];
        if (first)
            for (size_t i = 0; i < d; i++) out[i] = bs * zs[i];
        else
            for (size_t i = 0; i < d; i++) out[i] += bs * zs[i];
        first = 0;
    }
    if (first) memset(out, 0, d * sizeof *out); /* unreachable: the diagonal is non-zero */
}

dpc_status dpc_noise_next(dpc_noise *g, double *out, dpc_error *err)
{
    if (g->t >= g->n)
        return dpc_error_set(err, DPC_E_RANGE, "noise: all %zu steps have been emitted", g->n);
    switch (g->engine) {
    case ENGINE_FIR: fir_next(g, out); break;
    case ENGINE_IIR: iir_next(g, out); break;
    case ENGINE_BLT: blt_next(g, out); break;
    case ENGINE_DENSE: dense_next(g, out); break;
    case ENGINE_TREE:
        if (g->form == DPC_NOISE_BUFFER) tree_next_buffer(g, out);
        else tree_next_replay(g, out);
        break;
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
                for (size_t r = from; r < t; r++) gen(g, r, row_of(g->state, r % L, d));
            } else if (g->engine == ENGINE_DENSE) {
                for (size_t r = 0; r < t; r++) gen(g, r, row_of(g->state, r, d));
            } else if (g->engine == ENGINE_TREE) {
                tree_rebuild(g);
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
    if (g->engine == ENGINE_BLT) {
        memcpy(state, g->state, S * d * sizeof *state);
    } else if (g->engine == ENGINE_IIR) {
        /* coordinate-major: state[i * S + j] = x_{t-1-j}[i] (zero where t-1-j < 0) */
        for (size_t j = 0; j < S; j++) {
            const double *x = j + 1 <= g->t ? row_of(g->state, (g->t - 1 - j) % S, d) : NULL;
            for (size_t i = 0; i < d; i++) state[i * S + j] = x ? x[i] : 0.0;
        }
    }
    return DPC_OK;
}

dpc_status dpc_noise_import(dpc_noise *g, size_t step, const double *state, dpc_error *err)
{
    if (step > g->n) return dpc_error_param(err, DPC_E_STATE, "step", "%zu > n = %zu", step, g->n);
    size_t d = g->d, S = g->slots;
    if (g->engine == ENGINE_BLT) {
        for (size_t i = 0; i < S * d; i++)
            if (!isfinite(state[i]))
                return dpc_error_param(err, DPC_E_STATE, "state", "not finite");
        memcpy(g->state, state, S * d * sizeof *state);
        g->t = step;
        return DPC_OK;
    }
    if (g->engine == ENGINE_IIR) {
        for (size_t i = 0; i < S * d; i++)
            if (!isfinite(state[i]))
                return dpc_error_param(err, DPC_E_STATE, "state", "not finite");
        for (size_t j = 0; j < S && j + 1 <= step; j++) {
            double *x = row_of(g->state, (step - 1 - j) % S, d);
            for (size_t i = 0; i < d; i++) x[i] = state[i * S + j];
        }
        g->t = step;
        return DPC_OK;
    }
    return dpc_noise_seek(g, step, err);
}
