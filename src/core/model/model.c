/* model.c — model configuration (check, CLI spec parsing and formatting), the model object and
 * its slab layout, deterministic initialisation, and the chunk workspace. */
#include "common/util.h"
#include "field/field_def.h"
#include "model/gemm.h"
#include "model/internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ==== Configuration ==================================================================== */

static const char *kind_name(dpc_model_kind k)
{
    switch (k) {
    case DPC_MODEL_LINEAR: return "linear";
    case DPC_MODEL_LOGISTIC: return "logistic";
    case DPC_MODEL_SOFTMAX: return "softmax";
    case DPC_MODEL_MLP: return "mlp";
    case DPC_MODEL_KAN: return "kan";
    case DPC_MODEL_CNN: return "cnn";
    }
    return "?";
}

/* The manual of dpc_model_config, one row per field in struct order (dpcorr/model.h). A field
 * applies to the kinds its doc names; dpc_model_config_check (and the kan and cnn checks)
 * range-check exactly those (dpc__model_check_field). */
#define MC(m) DPC_FIELD_AT(dpc_model_config, m)
static const char *const mc_kind_names[] = {"linear", "logistic", "softmax", "mlp", "kan", "cnn"};
static const char *const mc_act_names[] = {"tanh", "relu"};
static const char *const mc_isa_names[] = {"auto", "sse2", "avx2", "avx512"};
static const char *const mc_norm_names[] = {"auto", "ghost", "direct"};
static const dpc_field mc_fields[] = {
    {.name = "kind", .label = "model", .type = DPC_FIELD_ENUM, MC(kind), .def = DPC_MODEL_LINEAR,
     DPC_FIELD_NAMES(mc_kind_names), .doc = "linear, logistic, softmax, mlp, kan or cnn"},
    {.name = "n_in", .type = DPC_FIELD_SIZE, MC(n_in), .lo = 1, .hi = DPC_MODEL_MAX_WIDTH,
     .flags = DPC_FIELD_UNSET_ZERO, .doc = "D: features per example (0: must be set; the data's)"},
    {.name = "n_classes", .type = DPC_FIELD_SIZE, MC(n_classes), .lo = 0,
     .hi = DPC_MODEL_MAX_WIDTH,
     .doc = "0 or 1: regression (linear, mlp, kan, cnn); 2: logistic; >= 2: classes"},
    {.name = "n_hidden", .type = DPC_FIELD_SIZE, MC(n_hidden), .flags = DPC_FIELD_NO_RANGE,
     .doc = "mlp, kan: hidden layers, 1..DPC_MODEL_MAX_HIDDEN; others: 0"},
    {.name = "hidden", .type = DPC_FIELD_BYTES, MC(hidden),
     .doc = "mlp, kan: (DPC_MODEL_MAX_HIDDEN) hidden widths from the input, each 1..2^24"},
    {.name = "act", .label = "activation", .type = DPC_FIELD_ENUM, MC(act), .def = DPC_ACT_TANH,
     DPC_FIELD_NAMES(mc_act_names), .doc = "mlp: activation after every hidden layer; kan: tanh"},
    {.name = "bias", .type = DPC_FIELD_BOOL, MC(bias), .def = 1,
     .doc = "1: every layer has a bias vector (nobias in a spec: 0)"},
    {.name = "grid", .type = DPC_FIELD_SIZE, MC(grid), .def = 5, .lo = 1,
     .hi = DPC_MODEL_MAX_GRID, .doc = "kan: G, spline intervals per edge"},
    {.name = "grid_lo", .type = DPC_FIELD_DOUBLE, MC(grid_lo), .def = -1,
     .flags = DPC_FIELD_NO_RANGE, .doc = "kan: the first layer's grid range, finite, < grid_hi"},
    {.name = "grid_hi", .type = DPC_FIELD_DOUBLE, MC(grid_hi), .def = 1,
     .flags = DPC_FIELD_NO_RANGE, .doc = "kan: the first layer's grid range, finite, > grid_lo"},
    {.name = "isa", .type = DPC_FIELD_ENUM, MC(isa), .def = DPC_ISA_AUTO,
     DPC_FIELD_NAMES(mc_isa_names), .flags = DPC_FIELD_RUNTIME,
     .doc = "instruction-set level of the kernels (auto = the best this CPU runs; every level "
            "computes the same)"},
    {.name = "in_shape", .type = DPC_FIELD_BYTES, MC(in_shape),
     .doc = "cnn: (C, H, W) of an example, C H W = n_in (a spec's default: the data's shape)"},
    {.name = "n_layers", .type = DPC_FIELD_SIZE, MC(n_layers), .lo = 0,
     .hi = DPC_MODEL_MAX_LAYERS, .doc = "cnn: layers before the output layer (added)"},
    {.name = "layers", .type = DPC_FIELD_BYTES, MC(layers),
     .doc = "cnn: (DPC_MODEL_MAX_LAYERS) dpc_layer, in order from the input"},
    {.name = "conv_norm", .type = DPC_FIELD_ENUM, MC(conv_norm), .def = DPC_CONV_NORM_AUTO,
     DPC_FIELD_NAMES(mc_norm_names),
     .doc = "cnn: per-example norm of conv and linear layers: auto (the cheaper), ghost, "
            "direct"},
};
#undef MC
static const dpc_field_table mc_table = DPC_FIELD_TABLE(dpc_model_config, mc_fields);

const dpc_field_table *dpc_model_config_fields(void) { return &mc_table; }

dpc_status dpc__model_check_field(const dpc_model_config *cfg, const char *name, dpc_error *err)
{
    const dpc_field *f = dpc_field_find(&mc_table, name, NULL);
    return dpc_field_check_value(f, "", dpc_field_get(f, cfg), err);
}

static dpc_status check_width(size_t v, const char *field, dpc_error *err)
{
    if (v < 1) return dpc_error_param(err, DPC_E_INVALID, field, "must be >= 1, got 0");
    if (v > DPC_MODEL_MAX_WIDTH)
        return dpc_error_param(err, DPC_E_RANGE, field, "%zu exceeds the maximum %u", v,
                               (unsigned)DPC_MODEL_MAX_WIDTH);
    return DPC_OK;
}

dpc_status dpc_model_config_check(const dpc_model_config *cfg, dpc_error *err)
{
    if (!cfg) return dpc_error_param(err, DPC_E_INVALID, "cfg", "NULL");
    dpc_status st = check_width(cfg->n_in, "n_in", err);
    if (st || (st = dpc__model_check_field(cfg, "kind", err))) return st;
    size_t K = cfg->n_classes;
    switch (cfg->kind) {
    case DPC_MODEL_LINEAR:
        if (K > 1)
            return dpc_error_param(err, DPC_E_INVALID, "n_classes",
                                   "linear regression needs n_classes 0 or 1 "
                                   "(real-valued targets), got %zu; use softmax for classes",
                                   K);
        break;
    case DPC_MODEL_LOGISTIC:
        if (K != 2)
            return dpc_error_param(err, DPC_E_INVALID, "n_classes",
                                   "logistic regression needs n_classes = 2 "
                                   "(labels 0/1), got %zu%s",
                                   K, K > 2 ? "; use softmax for more classes" : "");
        break;
    case DPC_MODEL_SOFTMAX:
        if (K < 2)
            return dpc_error_param(err, DPC_E_INVALID, "n_classes",
                                   "softmax needs n_classes >= 2, got %zu", K);
        break;
    case DPC_MODEL_MLP:
    case DPC_MODEL_KAN:
    case DPC_MODEL_CNN: break;
    default: return dpc_error_param(err, DPC_E_INVALID, "kind", "unknown value %d", (int)cfg->kind);
    }
    if (K > DPC_MODEL_MAX_WIDTH) return check_width(K, "n_classes", err);
    int deep = cfg->kind == DPC_MODEL_MLP || cfg->kind == DPC_MODEL_KAN;
    if (deep) {
        if (cfg->n_hidden < 1 || cfg->n_hidden > DPC_MODEL_MAX_HIDDEN)
            return dpc_error_param(err, DPC_E_INVALID, "n_hidden",
                                   "%s needs n_hidden in 1..%d, got %zu", kind_name(cfg->kind),
                                   DPC_MODEL_MAX_HIDDEN, cfg->n_hidden);
        for (size_t l = 0; l < cfg->n_hidden; l++) {
            char field[32];
            snprintf(field, sizeof field, "hidden[%zu]", l);
            if ((st = check_width(cfg->hidden[l], field, err))) return st;
        }
        if ((st = dpc__model_check_field(cfg, "act", err))) return st;
        if (cfg->kind == DPC_MODEL_KAN && (st = dpc__kan_config_check(cfg, err))) return st;
    } else if (cfg->n_hidden != 0) {
        return dpc_error_param(err, DPC_E_INVALID, "n_hidden",
                               "%s has no hidden layers, got n_hidden = %zu", kind_name(cfg->kind),
                               cfg->n_hidden);
    }
    if ((st = dpc__model_check_field(cfg, "isa", err)) ||
        (st = dpc__model_check_field(cfg, "bias", err)))
        return st;
    if (cfg->kind == DPC_MODEL_CNN) {
        size_t Pc;
        return dpc__cnn_config_check(cfg, &Pc, err);
    }
    /* P must fit in size_t (it does on 64-bit hosts for any widths <= 2^24). */
    size_t in = cfg->n_in, P = 0, F = cfg->kind == DPC_MODEL_KAN ? cfg->grid + 4 : 1;
    for (size_t l = 0; l <= cfg->n_hidden; l++) {
        size_t out = l < cfg->n_hidden ? cfg->hidden[l] : (K >= 2 ? K : 1), w, cols;
        if (!dpc__mul_ok(in, F, &cols) || !dpc__mul_ok(cols, out, &w) || w > SIZE_MAX - P - out)
            return dpc_error_set(err, DPC_E_RANGE, "model config: the parameter count overflows");
        P += w + (cfg->bias ? out : 0);
        in = out;
    }
    return DPC_OK;
}

/* Parses a decimal width in [1, DPC_MODEL_MAX_WIDTH] from s[0..n). */
static int parse_width(const char *s, size_t n, size_t *out)
{
    if (n == 0 || n > 9) return 0;
    size_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        v = v * 10 + (size_t)(s[i] - '0');
    }
    if (v < 1 || v > DPC_MODEL_MAX_WIDTH) return 0;
    *out = v;
    return 1;
}

static int tok_is(const char *s, size_t n, const char *word)
{
    return strlen(word) == n && memcmp(s, word, n) == 0;
}

dpc_status dpc_model_parse(dpc_model_config *cfg, const char *spec, size_t n_in,
                           size_t n_classes, dpc_error *err)
{
    return dpc_model_parse_shape(cfg, spec, n_in, NULL, n_classes, err);
}

/* The default input shape of a cnn: the data's shape, else s x s when n_in = s^2, else a vector. */
static void default_shape(dpc_model_config *c, const size_t *shape)
{
    if (shape && shape[0] && shape[1] && shape[2]) {
        memcpy(c->in_shape, shape, 3 * sizeof *shape);
        return;
    }
    size_t s = (size_t)sqrt((double)c->n_in);
    while (s * s > c->n_in) s--;
    while ((s + 1) * (s + 1) <= c->n_in) s++;
    if (s * s == c->n_in) c->in_shape[0] = 1, c->in_shape[1] = c->in_shape[2] = s;
    else c->in_shape[0] = c->n_in, c->in_shape[1] = c->in_shape[2] = 1;
}

dpc_status dpc_model_parse_shape(dpc_model_config *cfg, const char *spec, size_t n_in,
                                 const size_t shape[3], size_t n_classes, dpc_error *err)
{
    if (!cfg || !spec) return dpc_error_set(err, DPC_E_INVALID, "model spec: NULL argument");
    dpc_model_config c;
    dpc_field_defaults(&mc_table, &c); /* bias, tanh, the kan grid; the rest 0 */
    c.n_in = n_in;
    c.n_classes = n_classes;
    const char *p = spec;
    size_t n = strcspn(p, ":");
    if (tok_is(p, n, "linear")) c.kind = DPC_MODEL_LINEAR;
    else if (tok_is(p, n, "logistic")) c.kind = DPC_MODEL_LOGISTIC;
    else if (tok_is(p, n, "softmax")) c.kind = DPC_MODEL_SOFTMAX;
    else if (tok_is(p, n, "mlp")) c.kind = DPC_MODEL_MLP;
    else if (tok_is(p, n, "kan")) c.kind = DPC_MODEL_KAN;
    else if (tok_is(p, n, "cnn")) c.kind = DPC_MODEL_CNN;
    else
        return dpc_error_set(err, DPC_E_INVALID,
                             "model spec '%s': unknown model '%.*s' (expected linear, "
                             "logistic, softmax, mlp:H1[,H2...], kan:H1[,H2...] or "
                             "cnn:LAYER[,LAYER...])", spec, (int)n,
                             p);
    p += n;
    if (c.kind == DPC_MODEL_MLP || c.kind == DPC_MODEL_KAN) {
        const char *kn = kind_name(c.kind);
        if (*p != ':')
            return dpc_error_set(err, DPC_E_INVALID,
                                 "model spec '%s': %s needs hidden layer widths, "
                                 "e.g. %s:256 or %s:256,128", spec, kn, kn, kn);
        p++;
        n = strcspn(p, ":");
        const char *end = p + n;
        while (1) {
            size_t len = strcspn(p, ",:");
            if (p + len > end) len = (size_t)(end - p);
            if (c.n_hidden == DPC_MODEL_MAX_HIDDEN)
                return dpc_error_set(err, DPC_E_INVALID,
                                     "model spec '%s': at most %d hidden layers", spec,
                                     DPC_MODEL_MAX_HIDDEN);
            if (!parse_width(p, len, &c.hidden[c.n_hidden]))
                return dpc_error_set(err, DPC_E_INVALID,
                                     "model spec '%s': hidden width '%.*s' is not an integer "
                                     "in 1..%u", spec, (int)len, p,
                                     (unsigned)DPC_MODEL_MAX_WIDTH);
            c.n_hidden++;
            p += len;
            if (p == end) break;
            p++; /* ',' */
        }
    }
    int seen_in = 0;
    if (c.kind == DPC_MODEL_CNN) {
        default_shape(&c, shape);
        n = *p == ':' ? strcspn(p + 1, ":") : 0;
        if (n && !memchr(p + 1, '=', n) && !tok_is(p + 1, n, "nobias")) { /* the layer list */
            dpc_status lst = dpc__cnn_parse_layers(&c, spec, p + 1, n, err);
            if (lst) return lst;
            p += 1 + n;
        }
    }
    int seen_act = 0, seen_bias = 0, seen_kan[2] = {0, 0};
    while (*p == ':') {
        p++;
        n = strcspn(p, ":");
        if (c.kind == DPC_MODEL_CNN) { /* in=, norm=; DPC_E_STATE: not one */
            dpc_status cst = dpc__cnn_parse_option(&c, spec, p, n, &seen_in, err);
            if (cst != DPC_E_STATE) {
                if (cst) return cst;
                p += n;
                continue;
            }
        }
        int is_act = tok_is(p, n, "tanh") || tok_is(p, n, "relu");
        if (c.kind == DPC_MODEL_KAN) { /* grid=, range=, tanh, relu; DPC_E_STATE: not one */
            dpc_status kst = dpc__kan_parse_option(&c, spec, p, n, seen_kan, err);
            if (kst != DPC_E_STATE) {
                if (kst) return kst;
                p += n;
                continue;
            }
        }
        if (is_act) {
            if (c.kind != DPC_MODEL_MLP)
                return dpc_error_set(err, DPC_E_INVALID,
                                     "model spec '%s': activation '%.*s' only applies to mlp",
                                     spec, (int)n, p);
            if (seen_act++)
                return dpc_error_set(err, DPC_E_INVALID,
                                     "model spec '%s': activation given twice", spec);
            c.act = tok_is(p, n, "relu") ? DPC_ACT_RELU : DPC_ACT_TANH;
        } else if (tok_is(p, n, "nobias")) {
            if (seen_bias++)
                return dpc_error_set(err, DPC_E_INVALID, "model spec '%s': nobias given twice",
                                     spec);
            c.bias = 0;
        } else {
            return dpc_error_set(err, DPC_E_INVALID,
                                 "model spec '%s': unknown option '%.*s' (expected tanh, relu, "
                                 "nobias%s)", spec, (int)n, p,
                                 c.kind == DPC_MODEL_KAN   ? ", grid=G or range=LO,HI"
                                 : c.kind == DPC_MODEL_CNN ? ", in=CxHxW or norm=..."
                                                           : "");
        }
        p += n;
    }
    if (*p != '\0')
        return dpc_error_set(err, DPC_E_INVALID, "model spec '%s': unexpected '%s'", spec, p);
    dpc_status st = dpc_model_config_check(&c, err);
    if (st) return dpc_error_prefix(err, "model spec '%s': ", spec);
    *cfg = c;
    return DPC_OK;
}

size_t dpc_model_format_spec(const dpc_model_config *cfg, char *buf, size_t cap)
{
    char tmp[DPC_MODEL_SPEC_LEN + 64];
    size_t n = 0;
    if (!cfg) {
        tmp[0] = '\0';
    } else {
        n += (size_t)snprintf(tmp, sizeof tmp, "%s", kind_name(cfg->kind));
        if (cfg->kind == DPC_MODEL_MLP || cfg->kind == DPC_MODEL_KAN) {
            for (size_t l = 0; l < cfg->n_hidden && l < DPC_MODEL_MAX_HIDDEN; l++)
                n += (size_t)snprintf(tmp + n, sizeof tmp - n, "%c%zu", l ? ',' : ':',
                                      cfg->hidden[l]);
        }
        if (cfg->kind == DPC_MODEL_MLP)
            n += (size_t)snprintf(tmp + n, sizeof tmp - n, ":%s",
                                  cfg->act == DPC_ACT_RELU ? "relu" : "tanh");
        if (cfg->kind == DPC_MODEL_KAN) {
            n += (size_t)snprintf(tmp + n, sizeof tmp - n, ":grid=%zu", cfg->grid);
            if (cfg->grid_lo != -1.0 || cfg->grid_hi != 1.0)
                n += (size_t)snprintf(tmp + n, sizeof tmp - n, ":range=%.17g,%.17g",
                                      cfg->grid_lo, cfg->grid_hi);
        }
        if (cfg->kind == DPC_MODEL_CNN)
            n += dpc__cnn_format(cfg, tmp + n, n < sizeof tmp ? sizeof tmp - n : 0);
        if (!cfg->bias && n < sizeof tmp)
            n += (size_t)snprintf(tmp + n, sizeof tmp - n, ":nobias");
    }
    if (cap > 0) {
        size_t c = n < cap - 1 ? n : cap - 1;
        memcpy(buf, tmp, c);
        buf[c] = '\0';
    }
    return n;
}

/* ==== Model object ===================================================================== */

dpc_status dpc_model_new(dpc_model **out, const dpc_model_config *cfg, dpc_error *err)
{
    if (!out) return dpc_error_param(err, DPC_E_INVALID, "out", "NULL");
    *out = NULL;
    dpc_status st = dpc_model_config_check(cfg, err);
    dpc_isa isa = DPC_ISA_SSE2;
    if (st || (st = dpc_isa_resolve(cfg->isa, &isa, err))) return st;
    dpc_model *m = calloc(1, sizeof *m);
    if (!m) return DPC__NOMEM(err, "the model");
    m->cfg = *cfg;
    m->cfg.isa = isa;
    size_t K = cfg->n_classes >= 2 ? cfg->n_classes : 1;
    switch (cfg->kind) {
    case DPC_MODEL_LINEAR: m->head = DPC__HEAD_SQUARED; break;
    case DPC_MODEL_LOGISTIC: m->head = DPC__HEAD_LOGISTIC; K = 1; break;
    case DPC_MODEL_SOFTMAX: m->head = DPC__HEAD_SOFTMAX; break;
    case DPC_MODEL_MLP:
    case DPC_MODEL_KAN:
    case DPC_MODEL_CNN: m->head = K >= 2 ? DPC__HEAD_SOFTMAX : DPC__HEAD_SQUARED; break;
    }
    if (cfg->kind == DPC_MODEL_CNN) {
        dpc__cnn_layout(m);
        *out = m;
        return DPC_OK;
    }
    m->has_act = cfg->kind == DPC_MODEL_MLP || cfg->kind == DPC_MODEL_KAN;
    if (cfg->kind == DPC_MODEL_KAN &&
        (dpc_bspline_init(&m->spline[0], cfg->grid, cfg->grid_lo, cfg->grid_hi, err) ||
         dpc_bspline_init(&m->spline[1], cfg->grid, -1.0, 1.0, err))) {
        free(m);
        return err ? err->status : DPC_E_INVALID;
    }
    m->n_layers = cfg->n_hidden + 1;
    m->dim[0] = cfg->n_in;
    for (size_t l = 0; l < cfg->n_hidden; l++) m->dim[l + 1] = cfg->hidden[l];
    m->dim[m->n_layers] = K;
    size_t off = 0;
    for (size_t l = 0; l < m->n_layers; l++) {
        size_t in = m->dim[l], o = m->dim[l + 1];
        m->feat[l] = cfg->kind == DPC_MODEL_KAN ? in * (cfg->grid + 4) : in;
        dpc_model_tensor *t = &m->tensors[m->n_tensors];
        snprintf(m->names[m->n_tensors], sizeof m->names[0], "W%zu", l);
        *t = (dpc_model_tensor){m->names[m->n_tensors], off, o, m->feat[l]};
        m->n_tensors++;
        m->w_off[l] = off;
        off += o * m->feat[l];
        if (cfg->bias) {
            t = &m->tensors[m->n_tensors];
            snprintf(m->names[m->n_tensors], sizeof m->names[0], "b%zu", l);
            *t = (dpc_model_tensor){m->names[m->n_tensors], off, o, 1};
            m->n_tensors++;
            m->b_off[l] = off;
            off += o;
        } else {
            m->b_off[l] = SIZE_MAX;
        }
    }
    m->n_params = off;
    *out = m;
    return DPC_OK;
}

void dpc_model_free(dpc_model *m) { free(m); }

const dpc_model_config *dpc_model_get_config(const dpc_model *m) { return m ? &m->cfg : NULL; }
size_t dpc_model_num_params(const dpc_model *m) { return m ? m->n_params : 0; }
size_t dpc_model_num_outputs(const dpc_model *m) { return m ? m->dim[m->n_layers] : 0; }
size_t dpc_model_num_tensors(const dpc_model *m) { return m ? m->n_tensors : 0; }

const dpc_model_tensor *dpc_model_tensor_at(const dpc_model *m, size_t i)
{
    return (m && i < m->n_tensors) ? &m->tensors[i] : NULL;
}

/* ==== Initialisation =================================================================== */

dpc_status dpc_model_init(const dpc_model *m, double *params, const dpc_rng *rng,
                          uint64_t stream_index, dpc_error *err)
{
    if (!m || !params || !rng)
        return dpc_error_set(err, DPC_E_INVALID, "dpc_model_init: NULL argument");
    if (stream_index > UINT32_MAX)
        return dpc_error_param(err, DPC_E_RANGE, "stream_index", "%llu exceeds 2^32 - 1",
                               (unsigned long long)stream_index);
    memset(params, 0, m->n_params * sizeof *params);
    if (m->cfg.kind != DPC_MODEL_MLP && m->cfg.kind != DPC_MODEL_KAN &&
        m->cfg.kind != DPC_MODEL_CNN)
        return DPC_OK; /* convex models start at 0 */
    dpc_rng_stream s = dpc_rng_stream_derive(rng, DPC_STREAM_ID(DPC_STREAM_INIT, stream_index));
    if (m->cfg.kind == DPC_MODEL_CNN) {
        dpc__cnn_init(m, params, &s);
        return DPC_OK;
    }
    if (m->cfg.kind == DPC_MODEL_KAN) {
        dpc__kan_init(m, params, &s);
        return DPC_OK;
    }
    for (size_t l = 0; l < m->n_layers; l++) {
        size_t in = m->dim[l], out = m->dim[l + 1];
        int he = (l + 1 < m->n_layers) && m->cfg.act == DPC_ACT_RELU;
        double sd = he ? sqrt(2.0 / (double)in) : sqrt(2.0 / (double)(in + out));
        double *W = params + m->w_off[l]; /* (out, in) */
        dpc_rng_gaussian_fill(&s, l, 0, W, out * in);
        for (size_t i = 0; i < out * in; i++) W[i] *= sd;
    }
    return DPC_OK;
}

/* ==== Workspace ======================================================================== */

dpc_status dpc_model_ws_new(dpc_model_ws **out, const dpc_model *m, size_t max_chunk,
                            dpc_error *err)
{
    if (!out) return dpc_error_param(err, DPC_E_INVALID, "out", "NULL");
    *out = NULL;
    if (!m) return dpc_error_param(err, DPC_E_INVALID, "m", "NULL");
    if (max_chunk < 1 || max_chunk > ((size_t)1 << 30))
        return dpc_error_param(err, DPC_E_INVALID, "max_chunk", "must be in 1..2^30, got %zu",
                               max_chunk);
    if (m->cfg.kind == DPC_MODEL_KAN) return dpc__kan_ws_new(out, m, max_chunk, err);
    if (m->cfg.kind == DPC_MODEL_CNN) return dpc__cnn_ws_new(out, m, max_chunk, err);
    size_t L = m->n_layers, Mx = max_chunk;
    /* Sizes in doubles (widths <= 2^24 and Mx <= 2^30 keep every product below 2^60). */
    size_t n_act = 0, n_delta = 0, n_pack = 0, max_out = 0;
    for (size_t l = 0; l < L; l++) {
        size_t in = m->dim[l], o = m->dim[l + 1];
        if (l > 0) n_act += Mx * in;
        n_delta += Mx * o;
        size_t fwd = dpc__gemm_packed_size(in, Mx);             /* A_l^T (in, M) */
        size_t bwd = l > 0 ? dpc__gemm_packed_size(o, in) : 0;  /* W_l (out, in) */
        size_t grd = dpc__gemm_packed_size(Mx, in);             /* A_l (M, in) */
        size_t need = fwd > bwd ? fwd : bwd;
        if (grd > need) need = grd;
        if (need > n_pack) n_pack = need;
        if (o > max_out) max_out = o;
    }
    size_t total = n_act + n_delta + n_pack + max_out * Mx + 3 * Mx;
    dpc_model_ws *ws;
    dpc_status st = dpc__ws_alloc(&ws, m, Mx, total, "the model workspace", err);
    if (st) return st;
    double *p = ws->slab;
    for (size_t l = 0; l < L; l++) {
        if (l > 0) {
            ws->act[l] = p;
            p += Mx * m->dim[l];
        }
        ws->delta[l] = p;
        p += Mx * m->dim[l + 1];
    }
    dpc__ws_tail(ws, p, n_pack, max_out);
    *out = ws;
    return DPC_OK;
}

dpc_status dpc__ws_alloc(dpc_model_ws **out, const dpc_model *m, size_t Mx, size_t total,
                         const char *what, dpc_error *err)
{
    dpc_model_ws *ws = calloc(1, sizeof *ws);
    double *slab = dpc__malloc_array(total, sizeof(double));
    if (!ws || !slab) {
        free(ws);
        free(slab);
        return DPC__NOMEM(err, what);
    }
    ws->slab = slab;
    ws->slab_len = total;
    ws->max_chunk = Mx;
    ws->n_layers = m->n_layers;
    ws->kan = m->cfg.kind == DPC_MODEL_KAN;
    memcpy(ws->dim, m->dim, sizeof ws->dim);
    memcpy(ws->feat, m->feat, sizeof ws->feat);
    *out = ws;
    return DPC_OK;
}

void dpc__ws_tail(dpc_model_ws *ws, double *p, size_t n_pack, size_t max_out)
{
    size_t Mx = ws->max_chunk;
    ws->pack = p;  p += n_pack;
    ws->sdt = p;   p += max_out * Mx;
    ws->loss = p;  p += Mx;
    ws->norm = p;  p += Mx;
    ws->scale = p;
}

void dpc_model_ws_free(dpc_model_ws *ws)
{
    if (!ws) return;
    free(ws->slab);
    free(ws);
}

size_t dpc_model_ws_max_chunk(const dpc_model_ws *ws) { return ws ? ws->max_chunk : 0; }

size_t dpc_model_ws_bytes(const dpc_model_ws *ws)
{
    return ws ? sizeof *ws + ws->slab_len * sizeof(double) : 0;
}

dpc_status dpc__check_ws(const dpc_model *m, const dpc_model_ws *ws, size_t M, dpc_error *err)
{
    if (ws->n_layers != m->n_layers || ws->kan != (m->cfg.kind == DPC_MODEL_KAN) ||
        memcmp(ws->dim, m->dim, (m->n_layers + 1) * sizeof m->dim[0]) != 0 ||
        memcmp(ws->feat, m->feat, m->n_layers * sizeof m->feat[0]) != 0 ||
        ws->cnn != (m->cfg.kind == DPC_MODEL_CNN) ||
        (ws->cnn && ws->cnn_sig != dpc__cnn_signature(m)))
        return dpc_error_set(err, DPC_E_INVALID,
                             "workspace was created for a model of another shape");
    if (M > ws->max_chunk)
        return dpc_error_set(err, DPC_E_RANGE,
                             "chunk of %zu examples exceeds the workspace's max_chunk %zu", M,
                             ws->max_chunk);
    return DPC_OK;
}
