/* cnn.c — the cnn kind's configuration: layer shapes and checks, the spec grammar (layer tokens
 * and options), the canonical spec, the slab layout, initialisation and the workspace. The chunk
 * passes are in cnn_chunk.c, the per-example layer kernels in cnn_layers.c and the naive twin in
 * cnn_naive.c (doc/models.md §11). */
#include "common/util.h"
#include "model/gemm.h"
#include "model/internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define GN_NAME "groupnorm"

static const char *layer_name(dpc_layer_kind k)
{
    switch (k) {
    case DPC_LAYER_CONV: return "conv";
    case DPC_LAYER_AVGPOOL: return "avgpool";
    case DPC_LAYER_MAXPOOL: return "maxpool";
    case DPC_LAYER_GROUPNORM: return GN_NAME;
    case DPC_LAYER_RELU: return "relu";
    case DPC_LAYER_TANH: return "tanh";
    case DPC_LAYER_FLATTEN: return "flatten";
    case DPC_LAYER_LINEAR: return "linear";
    }
    return "?";
}

/* Resolves layer spec s on input shape (c, h, w) into L (shapes and geometry only). */
static dpc_status resolve_one(const dpc_layer *s, size_t idx, size_t c, size_t h, size_t w,
                              dpc__layer *L, dpc_error *err)
{
    memset(L, 0, sizeof *L);
    L->kind = s->kind;
    L->ic = c, L->ih = h, L->iw = w;
    L->oc = c, L->oh = h, L->ow = w;
    L->w_off = L->b_off = SIZE_MAX;
    switch (s->kind) {
    case DPC_LAYER_CONV:
    case DPC_LAYER_AVGPOOL:
    case DPC_LAYER_MAXPOOL: {
        int conv = s->kind == DPC_LAYER_CONV;
        size_t p = conv ? s->pad : 0;
        if (s->k < 1 || s->stride < 1)
            return dpc_error_param(err, DPC_E_INVALID, "layers", "layer %zu (%s): kernel and "
                                   "stride must be >= 1", idx, layer_name(s->kind));
        if (!conv && s->pad != 0)
            return dpc_error_param(err, DPC_E_INVALID, "layers", "layer %zu (%s): pooling has "
                                   "no padding", idx, layer_name(s->kind));
        if (p >= s->k)
            return dpc_error_param(err, DPC_E_INVALID, "layers", "layer %zu (conv): padding %zu "
                                   "must be < the kernel %zu", idx, p, s->k);
        if (h + 2 * p < s->k || w + 2 * p < s->k)
            return dpc_error_param(err, DPC_E_INVALID, "layers", "layer %zu (%s): kernel %zu "
                                   "larger than its padded %zu x %zu input", idx,
                                   layer_name(s->kind), s->k, h + 2 * p, w + 2 * p);
        if (conv && (s->out < 1 || s->out > DPC_MODEL_MAX_WIDTH))
            return dpc_error_param(err, DPC_E_INVALID, "layers", "layer %zu (conv): channels "
                                   "must be in 1..%u", idx, (unsigned)DPC_MODEL_MAX_WIDTH);
        L->k = s->k, L->stride = s->stride, L->pad = p;
        L->oh = (h + 2 * p - s->k) / s->stride + 1;
        L->ow = (w + 2 * p - s->k) / s->stride + 1;
        if (conv) {
            L->oc = s->out;
            L->T = L->oh * L->ow;
            if (!dpc__mul_ok(c, s->k * s->k, &L->Kc)) goto range;
        }
        break;
    }
    case DPC_LAYER_GROUPNORM:
        if (s->out < 1 || c % s->out != 0)
            return dpc_error_param(err, DPC_E_INVALID, "layers", "layer %zu (" GN_NAME "): %zu "
                                   "groups do not divide %zu channels", idx, s->out, c);
        L->groups = s->out;
        L->affine = s->affine ? 1 : 0;
        break;
    case DPC_LAYER_RELU:
    case DPC_LAYER_TANH: break;
    case DPC_LAYER_FLATTEN:
    case DPC_LAYER_LINEAR:
        L->ic = c * h * w, L->ih = L->iw = 1;
        L->oc = L->ic, L->oh = L->ow = 1;
        if (s->kind == DPC_LAYER_LINEAR) {
            if (s->out < 1 || s->out > DPC_MODEL_MAX_WIDTH)
                return dpc_error_param(err, DPC_E_INVALID, "layers", "layer %zu (linear): "
                                       "width must be in 1..%u", idx,
                                       (unsigned)DPC_MODEL_MAX_WIDTH);
            L->kind = DPC_LAYER_LINEAR;
            L->oc = s->out, L->k = 1, L->stride = 1, L->T = 1, L->Kc = L->ic;
        }
        break;
    default:
        return dpc_error_param(err, DPC_E_INVALID, "layers", "layer %zu: unknown kind %d", idx,
                               (int)s->kind);
    }
    size_t sz;
    if (!dpc__mul_ok(L->oc, L->oh * L->ow, &sz) || sz > DPC_MODEL_MAX_WIDTH) goto range;
    return DPC_OK;
range:
    return dpc_error_param(err, DPC_E_RANGE, "layers", "layer %zu (%s): output larger than %u "
                           "values", idx, layer_name(s->kind), (unsigned)DPC_MODEL_MAX_WIDTH);
}

/* All layers of cfg plus the output layer into L (DPC__CNN_MAX), with parameter offsets;
 * *n layers, *P parameters. */
static dpc_status resolve(const dpc_model_config *cfg, dpc__layer *L, size_t *n, size_t *P,
                          dpc_error *err)
{
    const size_t *s = cfg->in_shape;
    size_t K = cfg->n_classes >= 2 ? cfg->n_classes : 1, sz;
    if (s[0] < 1 || s[1] < 1 || s[2] < 1 || !dpc__mul_ok(s[0], s[1] * s[2], &sz) ||
        sz != cfg->n_in)
        return dpc_error_param(err, DPC_E_INVALID, "in_shape", "%zu x %zu x %zu does not match "
                               "n_in = %zu", s[0], s[1], s[2], cfg->n_in);
    dpc_status rst = dpc__model_check_field(cfg, "n_layers", err);
    if (rst || (rst = dpc__model_check_field(cfg, "conv_norm", err))) return rst;
    size_t c = s[0], h = s[1], w = s[2], off = 0;
    for (size_t l = 0; l <= cfg->n_layers; l++) {
        dpc_layer out = {DPC_LAYER_LINEAR, K, 1, 1, 0, 0};
        const dpc_layer *sp = l < cfg->n_layers ? &cfg->layers[l] : &out;
        dpc_status st = resolve_one(sp, l, c, h, w, &L[l], err);
        if (st) return st;
        dpc__layer *y = &L[l];
        size_t np = 0;
        if (y->kind == DPC_LAYER_CONV || y->kind == DPC_LAYER_LINEAR) {
            if (!dpc__mul_ok(y->oc, y->Kc, &np) || np > SIZE_MAX / 2) goto range;
            y->w_off = off;
            if (cfg->bias) y->b_off = off + np, np += y->oc;
            /* direct when materialising D U (T Kc oc) costs no more than the ghost form
             * (T^2 (Kc + oc)); the forced modes override */
            int cheaper = (double)y->Kc * (double)y->oc <= (double)y->T * (double)(y->Kc + y->oc);
            y->direct = cfg->conv_norm == DPC_CONV_NORM_DIRECT ||
                        (cfg->conv_norm == DPC_CONV_NORM_AUTO && cheaper);
        } else if (y->kind == DPC_LAYER_GROUPNORM && y->affine) {
            y->w_off = off, y->b_off = off + y->oc, np = 2 * y->oc;
            y->direct = 1;
        }
        y->n_par = np;
        if (np > SIZE_MAX - off) goto range;
        off += np;
        c = y->oc, h = y->oh, w = y->ow;
    }
    *n = cfg->n_layers + 1;
    *P = off;
    return DPC_OK;
range:
    return dpc_error_set(err, DPC_E_RANGE, "model config: parameter count overflows");
}

dpc_status dpc__cnn_config_check(const dpc_model_config *cfg, size_t *P, dpc_error *err)
{
    dpc__layer L[DPC__CNN_MAX];
    size_t n;
    return resolve(cfg, L, &n, P, err);
}

void dpc__cnn_layout(dpc_model *m)
{
    size_t P = 0;
    dpc_status st = resolve(&m->cfg, m->cnn, &m->n_cnn, &P, NULL);
    (void)st; /* the config was checked */
    m->n_params = P;
    m->n_layers = 1; /* the generic code sees one layer D -> K: logits in ws->delta[0] */
    m->dim[0] = m->cfg.n_in;
    m->dim[1] = m->cnn[m->n_cnn - 1].oc;
    m->feat[0] = m->cfg.n_in;
    m->n_tensors = 0;
    for (size_t l = 0; l < m->n_cnn; l++) {
        const dpc__layer *y = &m->cnn[l];
        if (!y->n_par) continue;
        int gn = y->kind == DPC_LAYER_GROUPNORM;
        dpc_model_tensor *t = &m->tensors[m->n_tensors];
        snprintf(m->names[m->n_tensors], sizeof m->names[0], gn ? "gamma%u" : "W%u", (unsigned)l);
        *t = (dpc_model_tensor){m->names[m->n_tensors], y->w_off, y->oc, gn ? 1 : y->Kc};
        m->n_tensors++;
        if (y->b_off != SIZE_MAX) {
            t = &m->tensors[m->n_tensors];
            snprintf(m->names[m->n_tensors], sizeof m->names[0], gn ? "beta%u" : "b%u", (unsigned)l);
            *t = (dpc_model_tensor){m->names[m->n_tensors], y->b_off, y->oc, 1};
            m->n_tensors++;
        }
    }
}

size_t dpc__cnn_size(const dpc_model *m, size_t l)
{
    if (l < m->n_cnn) return m->cnn[l].ic * m->cnn[l].ih * m->cnn[l].iw;
    const dpc__layer *y = &m->cnn[m->n_cnn - 1];
    return y->oc * y->oh * y->ow;
}

uint64_t dpc__cnn_signature(const dpc_model *m)
{
    uint64_t h = 1469598103934665603ull;
    const unsigned char *p = (const unsigned char *)m->cnn;
    for (size_t i = 0; i < m->n_cnn * sizeof m->cnn[0]; i++) h = (h ^ p[i]) * 1099511628211ull;
    return h ^ m->n_cnn;
}

/* ==== Initialisation =================================================================== */

void dpc__cnn_init(const dpc_model *m, double *params, const dpc_rng_stream *s)
{
    for (size_t l = 0; l < m->n_cnn; l++) {
        const dpc__layer *y = &m->cnn[l];
        if (!y->n_par) continue;
        if (y->kind == DPC_LAYER_GROUPNORM) {
            for (size_t c = 0; c < y->oc; c++) params[y->w_off + c] = 1.0; /* gamma */
            continue;
        }
        /* He for a layer whose next non-pooling layer is a ReLU, Glorot otherwise */
        int relu = 0;
        for (size_t j = l + 1; j < m->n_cnn; j++) {
            dpc_layer_kind k = m->cnn[j].kind;
            if (k == DPC_LAYER_AVGPOOL || k == DPC_LAYER_MAXPOOL || k == DPC_LAYER_FLATTEN)
                continue;
            relu = k == DPC_LAYER_RELU;
            break;
        }
        double fan_in = (double)y->Kc, fan_out = (double)(y->oc * y->k * y->k);
        double sd = relu ? sqrt(2.0 / fan_in) : sqrt(2.0 / (fan_in + fan_out));
        double *W = params + y->w_off; /* (oc, Kc) */
        dpc_rng_gaussian_fill(s, l, 0, W, y->oc * y->Kc);
        for (size_t i = 0; i < y->oc * y->Kc; i++) W[i] *= sd;
    }
}

/* ==== Spec grammar ===================================================================== */

/* Reads a decimal in 1..DPC_MODEL_MAX_WIDTH (or 0.. when zero_ok) at *p, advancing it. */
static int read_num(const char **p, const char *end, size_t *out, int zero_ok)
{
    size_t v = 0, nd = 0;
    while (*p < end && **p >= '0' && **p <= '9' && nd < 9) v = v * 10 + (size_t)(*(*p)++ - '0'), nd++;
    if (nd == 0 || (*p < end && **p >= '0' && **p <= '9')) return 0;
    if ((!zero_ok && v < 1) || v > DPC_MODEL_MAX_WIDTH) return 0;
    *out = v;
    return 1;
}

static int starts(const char **p, const char *end, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(end - *p) < n || memcmp(*p, w, n) != 0) return 0;
    *p += n;
    return 1;
}

/* One layer token tok[0..n) into L; 0 on a syntax error. */
static int parse_layer(const char *tok, size_t n, dpc_layer *L)
{
    const char *p = tok, *end = tok + n;
    memset(L, 0, sizeof *L);
    L->stride = 1;
    if (starts(&p, end, "conv")) {
        L->kind = DPC_LAYER_CONV;
        if (!read_num(&p, end, &L->out, 0) || !starts(&p, end, "k") ||
            !read_num(&p, end, &L->k, 0))
            return 0;
        if (starts(&p, end, "s") && !read_num(&p, end, &L->stride, 0)) return 0;
        if (starts(&p, end, "p") && !read_num(&p, end, &L->pad, 1)) return 0;
    } else if (starts(&p, end, "avgpool") || starts(&p, end, "maxpool")) {
        L->kind = tok[0] == 'a' ? DPC_LAYER_AVGPOOL : DPC_LAYER_MAXPOOL;
        if (!read_num(&p, end, &L->k, 0)) return 0;
        L->stride = L->k;
        if (starts(&p, end, "s") && !read_num(&p, end, &L->stride, 0)) return 0;
    } else if (starts(&p, end, "gn")) {
        L->kind = DPC_LAYER_GROUPNORM;
        if (!read_num(&p, end, &L->out, 0)) return 0;
        L->affine = !starts(&p, end, "n");
    } else if (starts(&p, end, "fc")) {
        L->kind = DPC_LAYER_LINEAR;
        if (!read_num(&p, end, &L->out, 0)) return 0;
    } else if (starts(&p, end, "relu")) {
        L->kind = DPC_LAYER_RELU;
    } else if (starts(&p, end, "tanh")) {
        L->kind = DPC_LAYER_TANH;
    } else if (starts(&p, end, "flatten")) {
        L->kind = DPC_LAYER_FLATTEN;
    } else {
        return 0;
    }
    return p == end;
}

dpc_status dpc__cnn_parse_layers(dpc_model_config *c, const char *spec, const char *tok,
                                 size_t n, dpc_error *err)
{
    const char *p = tok, *end = tok + n;
    /* an empty layer (a leading, doubled or trailing comma) is a malformed spec, not nothing */
    if (n == 0 || tok[0] == ',' || tok[n - 1] == ',')
        return dpc_error_set(err, DPC_E_INVALID, "model spec '%s': an empty layer (a stray comma)",
                             spec);
    while (p < end) {
        size_t len = strcspn(p, ",");
        if (len == 0)
            return dpc_error_set(err, DPC_E_INVALID,
                                 "model spec '%s': an empty layer (a stray comma)", spec);
        if (p + len > end) len = (size_t)(end - p);
        if (c->n_layers == DPC_MODEL_MAX_LAYERS)
            return dpc_error_set(err, DPC_E_INVALID, "model spec '%s': at most %d layers", spec,
                                 DPC_MODEL_MAX_LAYERS);
        if (!parse_layer(p, len, &c->layers[c->n_layers]))
            return dpc_error_set(err, DPC_E_INVALID,
                                 "model spec '%s': layer '%.*s' is not one of conv<C>k<K>[s<S>]"
                                 "[p<P>], avgpool<K>[s<S>], maxpool<K>[s<S>], gn<G>[n], relu, "
                                 "tanh, flatten, fc<N>", spec, (int)len, p);
        c->n_layers++;
        p += len;
        if (p < end) p++;
    }
    return DPC_OK;
}

dpc_status dpc__cnn_parse_option(dpc_model_config *c, const char *spec, const char *tok,
                                 size_t n, int *seen_in, dpc_error *err)
{
    const char *p = tok, *end = tok + n;
    if (starts(&p, end, "in=")) {
        size_t v[3];
        for (int i = 0; i < 3; i++)
            if (!read_num(&p, end, &v[i], 0) || (i < 2 && !starts(&p, end, "x")) ||
                (i == 2 && p != end))
                return dpc_error_set(err, DPC_E_INVALID, "model spec '%s': in= needs CxHxW "
                                     "(e.g. in=81x7x7), got '%.*s'", spec, (int)n, tok);
        memcpy(c->in_shape, v, sizeof v);
        *seen_in = 1;
        return DPC_OK;
    }
    if (starts(&p, end, "norm=")) {
        size_t r = (size_t)(end - p);
        if (r == 4 && !memcmp(p, "auto", 4)) c->conv_norm = DPC_CONV_NORM_AUTO;
        else if (r == 5 && !memcmp(p, "ghost", 5)) c->conv_norm = DPC_CONV_NORM_GHOST;
        else if (r == 6 && !memcmp(p, "direct", 6)) c->conv_norm = DPC_CONV_NORM_DIRECT;
        else
            return dpc_error_set(err, DPC_E_INVALID, "model spec '%s': norm= must be auto, "
                                 "ghost or direct", spec);
        return DPC_OK;
    }
    return DPC_E_STATE;
}

size_t dpc__cnn_format(const dpc_model_config *cfg, char *buf, size_t cap)
{
    size_t n = 0;
#define PUT(...) n += (size_t)snprintf(buf + (n < cap ? n : cap), n < cap ? cap - n : 0, __VA_ARGS__)
    for (size_t l = 0; l < cfg->n_layers && l < DPC_MODEL_MAX_LAYERS; l++) {
        const dpc_layer *L = &cfg->layers[l];
        PUT("%c", l ? ',' : ':');
        switch (L->kind) {
        case DPC_LAYER_CONV:
            PUT("conv%zuk%zu", L->out, L->k);
            if (L->stride != 1) PUT("s%zu", L->stride);
            if (L->pad) PUT("p%zu", L->pad);
            break;
        case DPC_LAYER_AVGPOOL:
        case DPC_LAYER_MAXPOOL:
            PUT("%s%zu", L->kind == DPC_LAYER_AVGPOOL ? "avgpool" : "maxpool", L->k);
            if (L->stride != L->k) PUT("s%zu", L->stride);
            break;
        case DPC_LAYER_GROUPNORM: PUT("gn%zu%s", L->out, L->affine ? "" : "n"); break;
        case DPC_LAYER_LINEAR: PUT("fc%zu", L->out); break;
        default: PUT("%s", layer_name(L->kind)); break;
        }
    }
    PUT(":in=%zux%zux%zu", cfg->in_shape[0], cfg->in_shape[1], cfg->in_shape[2]);
    if (cfg->conv_norm == DPC_CONV_NORM_GHOST) PUT(":norm=ghost");
    if (cfg->conv_norm == DPC_CONV_NORM_DIRECT) PUT(":norm=direct");
#undef PUT
    return n;
}

/* ==== Workspace ======================================================================== */

dpc_status dpc__cnn_ws_new(dpc_model_ws **out, const dpc_model *m, size_t Mx, dpc_error *err)
{
    size_t n = m->n_cnn, total = 0, n_pack = 0, scr = 0, max_out = 1;
    size_t sz[DPC__CNN_MAX + 1];
    for (size_t l = 0; l <= n; l++) sz[l] = dpc__cnn_size(m, l);
    for (size_t l = 0; l < n; l++) {
        const dpc__layer *y = &m->cnn[l];
        total += l > 0 ? 2 * Mx * sz[l] : 0; /* cact[l], cdel[l] */
        if (y->kind == DPC_LAYER_CONV || y->kind == DPC_LAYER_LINEAR) {
            size_t MT = Mx * y->T, u = y->kind == DPC_LAYER_CONV ? MT * y->Kc : 0;
            total += u + (y->direct ? Mx * y->n_par : 0);
            size_t need[5] = {dpc__gemm_packed_size(y->Kc, MT), dpc__gemm_packed_size(y->oc, y->Kc),
                              dpc__gemm_packed_size(MT, y->Kc),
                              dpc__gemm_packed_size(y->Kc, y->T) + dpc__gemm_packed_size(y->oc, y->T),
                              dpc__gemm_packed_size(y->T, y->Kc)};
            for (int i = 0; i < 5; i++) n_pack = need[i] > n_pack ? need[i] : n_pack;
            /* scratch: Z^T / (S Delta)^T (oc, M T), Delta^T (M T, oc), dU (M T, Kc),
             * Gram matrices 2 T^2 and D^T (T, oc), the direct sum (n_par) */
            size_t s1 = y->oc * MT + MT * y->oc + MT * y->Kc, s2 = 2 * y->T * y->T + y->T * y->oc + y->n_par;
            if (s1 > scr) scr = s1;
            if (s2 > scr) scr = s2;
            if (y->oc > max_out) max_out = y->oc;
        } else if (y->kind == DPC_LAYER_GROUPNORM) {
            total += Mx * sz[l + 1] + Mx * y->groups + (y->affine ? Mx * y->n_par : 0);
            if (y->n_par > scr) scr = y->n_par;
        }
    }
    total += Mx * sz[n] + n_pack + scr + max_out * Mx + 3 * Mx;
    dpc_model_ws *ws;
    dpc_status st = dpc__ws_alloc(&ws, m, Mx, total, "the cnn workspace", err);
    if (st) return st;
    ws->cnn = 1;
    ws->cnn_sig = dpc__cnn_signature(m);
    double *p = ws->slab;
    for (size_t l = 0; l < n; l++) {
        const dpc__layer *y = &m->cnn[l];
        if (l > 0) ws->cact[l] = p, p += Mx * sz[l];
        if (l > 0) ws->cdel[l] = p, p += Mx * sz[l];
        if (y->kind == DPC_LAYER_CONV) ws->unf[l] = p, p += Mx * y->T * y->Kc;
        if (y->direct) ws->pgrad[l] = p, p += Mx * y->n_par;
        if (y->kind == DPC_LAYER_GROUPNORM) {
            ws->gnx[l] = p, p += Mx * sz[l + 1];
            ws->gninv[l] = p, p += Mx * y->groups;
        }
    }
    ws->cact[n] = p, p += Mx * sz[n]; /* logits, then the head's Delta */
    ws->cdel[n] = ws->cact[n];
    ws->delta[0] = ws->cact[n];
    ws->cscr = p, p += scr;
    dpc__ws_tail(ws, p, n_pack, max_out);
    *out = ws;
    return DPC_OK;
}
