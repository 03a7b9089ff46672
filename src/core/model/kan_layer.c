/* kan_layer.c — the pieces of the KAN model kind that both paths share: configuration checks
 * and spec options, the feature expansion phi(a) = [silu(a_i), B_0(a_i) .. B_{p-1}(a_i)] per
 * input with its derivative, the contraction back to dloss/da, initialisation and the chunk
 * workspace. One implementation of each, so the naive and the fast path compute the same bits
 * (doc/kan.md, doc/models.md §7). */
#include "common/util.h"
#include "model/gemm.h"
#include "model/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ==== Configuration ==================================================================== */

dpc_status dpc__kan_config_check(const dpc_model_config *cfg, dpc_error *err)
{
    if (cfg->act != DPC_ACT_TANH)
        return dpc_error_param(err, DPC_E_INVALID, "act",
                               "kan uses a fixed tanh between layers (act must be tanh)");
    dpc_status st = dpc__model_check_field(cfg, "grid", err);
    if (st) return st;
    if (!isfinite(cfg->grid_lo) || !isfinite(cfg->grid_hi) || !(cfg->grid_lo < cfg->grid_hi))
        return dpc_error_param(err, DPC_E_INVALID, "grid_lo",
                               "kan grid range needs finite grid_lo < grid_hi, got [%g, %g]",
                               cfg->grid_lo, cfg->grid_hi);
    return DPC_OK;
}

static int tok_is(const char *s, size_t n, const char *word)
{
    return strlen(word) == n && memcmp(s, word, n) == 0;
}

dpc_status dpc__kan_parse_option(dpc_model_config *c, const char *spec, const char *tok, size_t n,
                                 int *seen, dpc_error *err)
{
    char buf[96];
    if (tok_is(tok, n, "tanh")) return DPC_OK;
    if (tok_is(tok, n, "relu"))
        return dpc_error_set(err, DPC_E_INVALID,
                             "model spec '%s': kan uses a fixed tanh between layers (no relu)",
                             spec);
    if (n > 5 && !memcmp(tok, "grid=", 5)) {
        if (seen[0]++)
            return dpc_error_set(err, DPC_E_INVALID, "model spec '%s': grid given twice", spec);
        size_t v = 0, len = n - 5;
        int ok = len >= 1 && len <= 4;
        for (size_t i = 0; ok && i < len; i++) {
            char ch = tok[5 + i];
            ok = ch >= '0' && ch <= '9';
            v = v * 10 + (size_t)(ch - '0');
        }
        if (!ok || v < 1 || v > DPC_MODEL_MAX_GRID)
            return dpc_error_set(err, DPC_E_INVALID,
                                 "model spec '%s': grid '%.*s' is not an integer in 1..%d", spec,
                                 (int)len, tok + 5, DPC_MODEL_MAX_GRID);
        c->grid = v;
        return DPC_OK;
    }
    if (n > 6 && !memcmp(tok, "range=", 6)) {
        if (seen[1]++)
            return dpc_error_set(err, DPC_E_INVALID, "model spec '%s': range given twice", spec);
        size_t len = n - 6;
        if (len >= sizeof buf)
            return dpc_error_set(err, DPC_E_INVALID, "model spec '%s': range too long", spec);
        memcpy(buf, tok + 6, len);
        buf[len] = '\0';
        char *comma = strchr(buf, ','), *e1, *e2;
        double lo = NAN, hi = NAN;
        if (comma) {
            *comma = '\0';
            lo = strtod(buf, &e1);
            hi = strtod(comma + 1, &e2);
            if (e1 == buf || *e1 || e2 == comma + 1 || *e2) lo = hi = NAN;
        }
        if (!isfinite(lo) || !isfinite(hi) || !(lo < hi))
            return dpc_error_set(err, DPC_E_INVALID,
                                 "model spec '%s': range '%.*s' must be LO,HI with finite LO < HI",
                                 spec, (int)len, tok + 6);
        c->grid_lo = lo;
        c->grid_hi = hi;
        return DPC_OK;
    }
    return DPC_E_STATE; /* not a kan option */
}

/* ==== Expansion ========================================================================== */


void dpc__kan_expand(const dpc_model *m, size_t l, const double *a, double *phi, double *dphi)
{
    const dpc_bspline *sp = &m->spline[l > 0];
    size_t in = m->dim[l], F = sp->p + 1;
    for (size_t i = 0; i < in; i++) {
        double x = a[i], *ph = phi + i * F, *dp = dphi ? dphi + i * F : NULL;
        /* s(x) and s(-x) from one exponential, without overflow: e = e^-|x| */
        double e = exp(-fabs(x)), dd = 1.0 / (1.0 + e);
        double s = x >= 0 ? dd : e * dd, sn = x >= 0 ? e * dd : dd;
        memset(ph, 0, F * sizeof *ph);
        ph[0] = x * s; /* silu */
        double v[4], d1[4];
        size_t k0, n = dpc_bspline_eval(sp, x, &k0, v, dp ? d1 : NULL, NULL);
        for (size_t q = 0; q < n; q++) ph[1 + k0 + q] = v[q];
        if (dp) {
            memset(dp, 0, F * sizeof *dp);
            dp[0] = s + x * (s * sn); /* silu' = s (1 + x (1 - s)) */
            for (size_t q = 0; q < n; q++) dp[1 + k0 + q] = d1[q];
        }
    }
}

void dpc__kan_contract(const dpc_model *m, size_t l, const double *dfeat, const double *dphi,
                       double *da)
{
    size_t in = m->dim[l], F = m->spline[l > 0].p + 1;
    for (size_t i = 0; i < in; i++) {
        double acc = 0.0;
        for (size_t f = 0; f < F; f++) acc += dfeat[i * F + f] * dphi[i * F + f];
        da[i] = acc;
    }
}

/* ==== Initialisation ===================================================================== */

void dpc__kan_init(const dpc_model *m, double *params, const dpc_rng_stream *s)
{
    for (size_t l = 0; l < m->n_layers; l++) {
        size_t in = m->dim[l], out = m->dim[l + 1], cols = m->feat[l], F = cols / in;
        double sd = sqrt(2.0 / (double)(in + out));
        double *W = params + m->w_off[l]; /* (out, cols) */
        dpc_rng_gaussian_fill(s, l, 0, W, out * cols);
        for (size_t o = 0; o < out; o++)
            for (size_t f = 0; f < cols; f++) W[o * cols + f] *= f % F == 0 ? sd : 0.1 * sd;
    }
}

/* ==== Workspace ========================================================================== */

dpc_status dpc__kan_ws_new(dpc_model_ws **out, const dpc_model *m, size_t max_chunk,
                           dpc_error *err)
{
    size_t L = m->n_layers, Mx = max_chunk;
    size_t n_act = 0, n_phi = 0, n_dphi = 0, n_delta = 0, n_pack = 0, max_out = 0, max_df = 0;
    for (size_t l = 0; l < L; l++) {
        size_t in = m->dim[l], o = m->dim[l + 1], fe = m->feat[l], need;
        if (l > 0) {
            n_act += Mx * in;
            n_dphi += Mx * fe;
            if (fe > max_df) max_df = fe;
        }
        n_phi += Mx * fe;
        n_delta += Mx * o;
        size_t fwd = dpc__gemm_packed_size(fe, Mx);            /* Phi_l^T (fe, M) */
        size_t bwd = l > 0 ? dpc__gemm_packed_size(o, fe) : 0; /* W_l (out, fe) */
        size_t grd = dpc__gemm_packed_size(Mx, fe);            /* Phi_l (M, fe) */
        need = fwd > bwd ? fwd : bwd;
        if (grd > need) need = grd;
        if (need > n_pack) n_pack = need;
        if (o > max_out) max_out = o;
    }
    /* every term is below 2^60 for widths <= 2^24, grid <= 256, Mx <= 2^30; the sum too */
    size_t total = n_act + n_phi + n_dphi + n_delta + Mx * max_df + n_pack + max_out * Mx + 3 * Mx;
    dpc_model_ws *ws;
    dpc_status st = dpc__ws_alloc(&ws, m, Mx, total, "the KAN workspace", err);
    if (st) return st;
    double *p = ws->slab;
    for (size_t l = 0; l < L; l++) {
        if (l > 0) {
            ws->act[l] = p;
            p += Mx * m->dim[l];
            ws->dphi[l] = p;
            p += Mx * m->feat[l];
        }
        ws->phi[l] = p;
        p += Mx * m->feat[l];
        ws->delta[l] = p;
        p += Mx * m->dim[l + 1];
    }
    ws->dfeat = p;  p += Mx * max_df;
    dpc__ws_tail(ws, p, n_pack, max_out);
    *out = ws;
    return DPC_OK;
}
