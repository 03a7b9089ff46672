/* internal.h — the model object, the workspace, and the pieces shared by the naive and the
 * fast path (loss heads, activations, input checks). Sharing them is what makes the two
 * paths agree bit for bit. Internal: not installed. */
#ifndef DPCORR_SRC_MODEL_INTERNAL_H
#define DPCORR_SRC_MODEL_INTERNAL_H

#include "dpcorr/bspline.h"
#include "dpcorr/model.h"

#define DPC__MAX_LAYERS (DPC_MODEL_MAX_HIDDEN + 1)
#define DPC__CNN_MAX (DPC_MODEL_MAX_LAYERS + 1) /* cnn layers with the output layer */
#define DPC__MAX_TENSORS (2 * DPC__CNN_MAX)

/* One resolved cnn layer (cnn.c): shapes, geometry and slab offsets. A linear layer is a conv
 * with a 1 x 1 kernel on the flattened input (ic = C H W, ih = iw = 1). */
typedef struct dpc__layer {
    dpc_layer_kind kind;
    size_t ic, ih, iw;   /* input (C, H, W) */
    size_t oc, oh, ow;   /* output (C, H, W) */
    size_t k, stride, pad, groups;
    int affine;          /* groupnorm with gamma, beta */
    size_t T, Kc;        /* conv/linear: output positions oh ow, unfolded width ic k k */
    size_t w_off, b_off; /* conv/linear: W (oc, Kc), b (oc) (SIZE_MAX: no bias);
                            groupnorm affine: gamma (oc), beta (oc) */
    size_t n_par;        /* parameters of the layer (0 for parameter-free layers) */
    int direct;          /* conv/linear: norm from the materialised gradient D U */
} dpc__layer;

typedef enum dpc__head {
    DPC__HEAD_SQUARED,  /* 0.5 (z - y)^2, K = 1 */
    DPC__HEAD_LOGISTIC, /* log(1 + e^z) - y z, K = 1 */
    DPC__HEAD_SOFTMAX   /* logsumexp(z) - z_y, K >= 2 */
} dpc__head;

struct dpc_model {
    dpc_model_config cfg;
    dpc__head head;
    int has_act;                      /* hidden activations present (mlp) */
    size_t n_layers;                  /* L = n_hidden + 1 dense layers */
    size_t dim[DPC__MAX_LAYERS + 1];  /* dim[0] = D, dim[l + 1] = out_l, dim[L] = K */
    size_t feat[DPC__MAX_LAYERS];     /* columns of W<l>: dim[l] (dense), dim[l] (G + 4) (kan) */
    dpc_bspline spline[2];         /* kan: grid of layer 0, of the hidden layers */
    size_t w_off[DPC__MAX_LAYERS];    /* W<l> (dim[l+1], feat[l]) at params + w_off[l] */
    size_t b_off[DPC__MAX_LAYERS];    /* b<l> (dim[l+1]) at params + b_off[l] (if bias) */
    size_t n_params;                  /* P */
    size_t n_tensors;
    dpc_model_tensor tensors[DPC__MAX_TENSORS];
    char names[DPC__MAX_TENSORS][24]; /* "W0", "b0", ... */
    size_t n_cnn;                     /* cnn: layers including the output layer */
    dpc__layer cnn[DPC__CNN_MAX];
};

struct dpc_model_ws {
    size_t max_chunk;                  /* Mmax */
    size_t n_layers;                   /* shape this workspace was made for ... */
    size_t dim[DPC__MAX_LAYERS + 1];   /* ... checked on every use */
    size_t feat[DPC__MAX_LAYERS];      /* ... (kan: the expanded widths) */
    int kan;                           /* made for a kan model */
    int cnn;                           /* made for a cnn model: ... */
    uint64_t cnn_sig;                  /* ... with this layer signature (dpc__cnn_signature) */
    double *cact[DPC__CNN_MAX + 1];    /* cnn: cact[l] (Mmax, size of layer l's input) */
    double *cdel[DPC__CNN_MAX + 1];    /* cnn: dloss/d cact[l], l >= 1 */
    double *unf[DPC__CNN_MAX];         /* cnn conv: unfolded inputs (Mmax T, Kc) */
    double *pgrad[DPC__CNN_MAX];       /* cnn direct layers: per-example grads (Mmax, n_par) */
    double *gnx[DPC__CNN_MAX];         /* cnn groupnorm: normalized input (Mmax, size) */
    double *gninv[DPC__CNN_MAX];       /* cnn groupnorm: 1/sigma (Mmax, groups) */
    double *cscr;                      /* cnn: scratch (max over layers of the uses) */
    double *phi[DPC__MAX_LAYERS];      /* kan: phi[l] (Mmax, feat[l]) expanded layer inputs */
    double *dphi[DPC__MAX_LAYERS];     /* kan: dphi[l] (Mmax, feat[l]) their derivatives, l >= 1 */
    double *dfeat;                     /* kan: (Mmax, max_{l>=1} feat[l]) dloss/dphi */
    double *slab;                      /* one allocation; the views below point into it */
    size_t slab_len;                   /* its doubles */
    double *act[DPC__MAX_LAYERS];      /* act[l] (Mmax, dim[l]) for l >= 1: input of layer l */
    double *delta[DPC__MAX_LAYERS];    /* delta[l] (Mmax, dim[l+1]): dloss/dz of layer l;
                                          delta[L-1] first holds the logits z */
    double *pack;                      /* packed B operand, max over the uses */
    double *sdt;                       /* (max_l dim[l+1], Mmax): (s_i delta_l[i])^T */
    double *loss;                      /* (Mmax) */
    double *norm;                      /* (Mmax) */
    double *scale;                     /* (Mmax) s_i */
};

/* Loss of one example from its outputs z (K); writes dloss/dz into delta (K) if non-NULL
 * (delta may alias z). y has been validated. The loss does not depend on whether delta is
 * requested. Used by both paths. */
double dpc__head_loss(const dpc_model *m, const double *z, double y, double *delta);

/* Output transform for predict: z (K) -> out (K) (identity, sigmoid or softmax). */
void dpc__head_predict(const dpc_model *m, const double *z, double *out);

/* Predicted class of z (K) (argmax, lowest index on ties; logistic: z > 0). */
size_t dpc__head_class(const dpc_model *m, const double *z);

/* a (n) = act(a) in place. */
void dpc__act_forward(dpc_activation act, double *a, size_t n);
/* d (n) *= act'(z), with the derivative taken from the activation output a (n). */
void dpc__act_backward(dpc_activation act, const double *a, double *d, size_t n);

/* Input checks; messages name the slab entry ("params[17] (W0[0][17])") or example row. */
dpc_status dpc__check_params(const dpc_model *m, const double *params, dpc_error *err);
dpc_status dpc__check_x(const dpc_model *m, const double *x, size_t row, dpc_error *err);
dpc_status dpc__check_y(const dpc_model *m, double y, size_t row, dpc_error *err);
dpc_status dpc__check_ws(const dpc_model *m, const dpc_model_ws *ws, size_t M, dpc_error *err);
/* A workspace of one slab of `total` doubles for chunks of Mx examples, shape fields set from m
 * (the caller lays out the views; `what` names it in the out-of-memory message). */
dpc_status dpc__ws_alloc(dpc_model_ws **out, const dpc_model *m, size_t Mx, size_t total,
                         const char *what, dpc_error *err);
/* The views every kind ends its slab with, from p: pack (n_pack), sdt (max_out, Mx), loss,
 * norm, scale (Mx each). */
void dpc__ws_tail(dpc_model_ws *ws, double *p, size_t n_pack, size_t max_out);

/* ==== Chunk steps shared by the MLP and KAN fast paths (chunk_steps.c) =================== */

/* In_l (M, feat[l]): the input features of dense layer l for a chunk whose forward pass is in
 * ws: X (l = 0) or ws->act[l] for mlp-like kinds, ws->phi[l] for kan. */
const double *dpc__layer_input(const dpc_model *m, const double *X, const dpc_model_ws *ws,
                               size_t l);
/* Ghost norms into ws->norm (M): ||g_i||^2 = sum_l ||Delta_l[i]||^2 (||In_l[i]||^2 + bias), in
 * a fixed order; then the first non-finite loss or norm is DPC_E_NUMERIC naming the example. */
dpc_status dpc__chunk_norms(const dpc_model *m, const double *X, size_t M, dpc_model_ws *ws,
                            dpc_error *err);
/* grad_sum (P) += sum_i s_i g_i with s = ws->scale (M): dW_l += (S Delta_l)^T In_l (GEMM,
 * inner index in order), db_l += sum_i s_i Delta_l[i] (i in order). */
void dpc__chunk_scaled_sum(const dpc_model *m, const double *X, size_t M, double *grad_sum,
                           dpc_model_ws *ws);
/* The gradient pass of one chunk on ws (checked, holding M): validates the inputs (params
 * unless skip_params), runs forward, head and backward, the ghost norms (ws->norm, ws->loss)
 * and the clip factors ws->scale. */
dpc_status dpc__chunk_grads(const dpc_model *m, const double *params, const double *X,
                            const double *y, size_t M, double clip, int skip_params,
                            dpc_model_ws *ws, dpc_error *err);
/* The batch state (batch.c, batch_f32.c, batch_kernel.inc; dpcorr/model.h "Batch clipped sums"). */
struct dpc_model_batch {
    size_t cap, chunk, nchunks; /* max_batch, chunk size, ceil(cap / chunk) */
    int dense;                  /* 1: per-layer GEMM path; 0: per-chunk sums */
    int f32;                    /* 1: the float32 path (dense kinds only) */
    size_t n_layers;            /* shape the batch was made for ... */
    size_t dim[DPC__MAX_LAYERS + 1];
    size_t feat[DPC__MAX_LAYERS];
    size_t n_params;            /* ... checked on every use */
    double *slab;               /* one allocation; the views below point into it */
    double *in[DPC__MAX_LAYERS];  /* dense: In_l packed, (ceil(feat[l] / NR), cap, NR) */
    double *sdt[DPC__MAX_LAYERS]; /* dense: (dim[l+1], cap), s_i Delta_l[i][o] at [o][i] */
    float *inf[DPC__MAX_LAYERS];  /* f32: In_l packed, (ceil(feat[l] / NRF), cap, NRF) */
    float *sdtf[DPC__MAX_LAYERS]; /* f32: (dim[l+1], cap) */
    double *sums;                 /* other kinds: (nchunks, P) chunk sums */
    size_t doubles;
};

enum { DPC__BATCH_AUTO = 0, DPC__BATCH_GENERIC = 1, DPC__BATCH_F32 = 2 };
/* dpc_model_batch_new with a mode: AUTO (the kind's path), GENERIC (per-chunk sums whatever the
 * kind: tests) or F32 (the float32 path). */
dpc_status dpc__batch_new(dpc_model_batch **out, const dpc_model *m, size_t max_batch,
                          size_t chunk, int mode, dpc_error *err);
int dpc__batch_same_shape(const dpc_model *m, const dpc_model_batch *b);
int dpc__model_is_dense(const dpc_model *m); /* the per-layer GEMM path applies */
/* When *ws is NULL, *tmp and *ws receive a temporary workspace for chunks of `chunk` examples
 * (the caller frees *tmp); otherwise *ws is checked against m's shape and must hold at least
 * `need` examples. */
dpc_status dpc__chunk_prologue(const dpc_model *m, dpc_model_ws **ws, dpc_model_ws **tmp,
                               size_t chunk, size_t need, dpc_error *err);

/* ==== KAN layers (kan_layer.c, kan_chunk.c, kan_naive.c) ================================ */

/* Expanded features of layer l for one input a (dim[l]): phi (feat[l]) = per input i,
 * [silu(a_i), B_0(a_i), .., B_{p-1}(a_i)]; dphi (feat[l]) or NULL = their derivatives. */
void dpc__kan_expand(const dpc_model *m, size_t l, const double *a, double *phi, double *dphi);
/* da (dim[l]) = per input i, sum_f dfeat[i F + f] dphi[i F + f] (f in order). */
void dpc__kan_contract(const dpc_model *m, size_t l, const double *dfeat, const double *dphi,
                       double *da);
/* Config checks of the kan fields (grid, range, activation), called by dpc_model_config_check. */
/* The range check of the field `name` of cfg (dpc_model_config_fields' range), for the fields
 * a kind uses. */
dpc_status dpc__model_check_field(const dpc_model_config *cfg, const char *name, dpc_error *err);
dpc_status dpc__kan_config_check(const dpc_model_config *cfg, dpc_error *err);
/* One ':'-separated spec option tok[0..n) of a kan spec: grid=G, range=LO,HI, tanh (the fixed
 * activation; accepted), relu (refused). Returns DPC_E_STATE when tok is none of them (the
 * caller handles it), an error naming the spec, or DPC_OK. seen (2): grid, range given. */
dpc_status dpc__kan_parse_option(dpc_model_config *c, const char *spec, const char *tok, size_t n,
                                 int *seen, dpc_error *err);
/* Initialisation (see dpc_model_init) and the workspace. */
void dpc__kan_init(const dpc_model *m, double *params, const dpc_rng_stream *s);
dpc_status dpc__kan_ws_new(dpc_model_ws **out, const dpc_model *m, size_t max_chunk,
                           dpc_error *err);
/* The kan kind's chunk passes (kan_chunk.c), called by chunk.c for the kan kind.
 * Forward: ws->phi[l], ws->dphi[l] (l >= 1, only when grads), ws->act[l] (l >= 1) and the
 * logits ws->delta[L-1] (M, K). Backward: ws->delta[l] (M, dim[l+1]) for every l, from the head's
 * Delta_{L-1}; needs a forward with grads. */
void dpc__kan_forward(const dpc_model *m, const double *params, const double *X, size_t M,
                      int grads, dpc_model_ws *ws);
void dpc__kan_backward(const dpc_model *m, const double *params, size_t M, dpc_model_ws *ws);
/* The naive path of the kan kind, one example (naive.c runs the loops for both kinds): loss and
 * gradient grad (P, overwritten) of example `row` (named in messages); x and y are validated
 * here, params by the caller. scratch holds dpc__kan_naive_scratch_len(m) doubles. */
size_t dpc__kan_naive_scratch_len(const dpc_model *m);
dpc_status dpc__kan_naive_one(const dpc_model *m, const double *params, const double *x,
                              double y, size_t row, double *loss, double *grad, double *scratch,
                              dpc_error *err);

/* ==== CNN layers (cnn.c, cnn_layers.c, cnn_chunk.c, cnn_naive.c) ======================== */

/* Config checks of the cnn fields (shapes, layers) and the parameter count *P. */
dpc_status dpc__cnn_config_check(const dpc_model_config *cfg, size_t *P, dpc_error *err);
/* Resolves the layers of m (m->cnn, n_cnn, tensors, n_params) from m->cfg (checked). */
void dpc__cnn_layout(dpc_model *m);
/* Parses the layer list tok[0..n) ("conv16k3,tanh,...") into c; errors quote spec. */
dpc_status dpc__cnn_parse_layers(dpc_model_config *c, const char *spec, const char *tok,
                                 size_t n, dpc_error *err);
/* One ':' option of a cnn spec (in=CxHxW, norm=...); DPC_E_STATE when not one of them. */
dpc_status dpc__cnn_parse_option(dpc_model_config *c, const char *spec, const char *tok,
                                 size_t n, int *seen_in, dpc_error *err);
/* Appends the layers and options of cfg to buf (used by dpc_model_format_spec). */
size_t dpc__cnn_format(const dpc_model_config *cfg, char *buf, size_t cap);
void dpc__cnn_init(const dpc_model *m, double *params, const dpc_rng_stream *s);
uint64_t dpc__cnn_signature(const dpc_model *m);
dpc_status dpc__cnn_ws_new(dpc_model_ws **out, const dpc_model *m, size_t max_chunk,
                           dpc_error *err);

/* Per-example kernels shared by the naive and the fast path (cnn_layers.c), one example:
 * in (layer input size), out (layer output size). GroupNorm also writes xhat (size) and inv
 * (groups); its backward turns dout into din. */
void dpc__cnn_pool_forward(const dpc__layer *L, const double *in, double *out);
void dpc__cnn_pool_backward(const dpc__layer *L, const double *in, const double *dout,
                            double *din);
void dpc__cnn_gn_forward(const dpc__layer *L, const double *params, const double *in,
                         double *xhat, double *inv, double *out);
void dpc__cnn_gn_backward(const dpc__layer *L, const double *params, const double *xhat,
                          const double *inv, const double *dout, double *din);
/* gamma, beta gradients (2 oc) of one example: sum_t dout xhat, sum_t dout (t in order). */
void dpc__cnn_gn_param_grad(const dpc__layer *L, const double *xhat, const double *dout,
                            double *g);
/* din (ic ih iw) = fold of dU (T, Kc): din zeroed, then += over t, then k, in order. */
void dpc__cnn_fold(const dpc__layer *L, const double *dU, double *din);
/* U (T, Kc) = unfolded input (zeros at padded positions). */
void dpc__cnn_unfold(const dpc__layer *L, const double *in, double *U);
/* Size of layer l's input (l < n_cnn) or of the logits (l = n_cnn). */
size_t dpc__cnn_size(const dpc_model *m, size_t l);

/* The fast chunk path of the cnn kind (cnn_chunk.c): forward (logits into ws->delta[0]),
 * backward (from the head's Delta in ws->delta[0]), norms into ws->norm with the finiteness
 * check, the scaled sum, and per-example gradients materialised. */
void dpc__cnn_forward(const dpc_model *m, const double *params, const double *X, size_t M,
                      dpc_model_ws *ws);
void dpc__cnn_backward(const dpc_model *m, const double *params, size_t M, dpc_model_ws *ws);
dpc_status dpc__cnn_norms(const dpc_model *m, const double *X, size_t M, dpc_model_ws *ws,
                          dpc_error *err);
void dpc__cnn_scaled_sum(const dpc_model *m, const double *X, size_t M, double *grad_sum,
                         dpc_model_ws *ws);
void dpc__cnn_example_grad(const dpc_model *m, const double *X, size_t i, double *g,
                           dpc_model_ws *ws);
/* The naive one-example path (cnn_naive.c); contract as dpc__kan_naive_one. */
size_t dpc__cnn_naive_scratch_len(const dpc_model *m);
dpc_status dpc__cnn_naive_one(const dpc_model *m, const double *params, const double *x,
                              double y, size_t row, double *loss, double *grad, double *scratch,
                              dpc_error *err);

#endif
