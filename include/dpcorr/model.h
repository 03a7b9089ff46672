/* dpcorr/model.h — models with per-example losses and gradients over one flat parameter slab.
 *
 * Five kinds, all built from the same pieces: a stack of layers (the parameters) and a loss
 * "head" on the last layer's outputs z:
 *
 *   kind       layers                         head (loss of one example; y = label)
 *   linear     D -> 1                         squared    0.5 (z - y)^2
 *   logistic   D -> 1                         logistic   log(1 + e^z) - y z          y in {0, 1}
 *   softmax    D -> K                         softmax    logsumexp(z) - z_y          y in {0..K-1}
 *   mlp        D -> H1 -> ... -> Hn -> K      softmax if K >= 2, squared if K <= 1 (regression)
 *              (tanh or ReLU after every hidden layer, none after the last)
 *   kan        D -> H1 -> ... -> Hn -> K      as mlp; Kolmogorov-Arnold layers (below)
 *   cnn        (C, H, W) -> layers -> K       as mlp; convolution, pooling, GroupNorm,
 *              activation and linear layers in any order (below), then a linear layer to K
 *
 * A cnn example is an image of in_shape = (C, H, W), stored channel-major (x[c*H*W + h*W + w],
 * as PyTorch's NCHW); every intermediate tensor has the same layout, and flattening keeps it.
 * Layers (dpc_layer, spec tokens in dpc_model_parse):
 *   conv    z[o][y][x] = b[o] + sum_{c,ky,kx} W[o][c][ky][kx] in[c][y s + ky - p][x s + kx - p]
 *           (zero padding p, stride s, square kernel k; W (out, C k k) row-major = PyTorch's)
 *   avgpool / maxpool   k x k windows with stride s, no padding (max: first maximum on ties)
 *   gn      GroupNorm (Wu & He 2018) with G groups, eps 1e-5, per example (never across
 *           examples, unlike BatchNorm); optional per-channel scale gamma and shift beta
 *   relu, tanh, flatten, linear (a dense layer on the flattened input)
 * The per-example gradient of a conv layer is D U with D = dloss/dz (out, T) and U the unfolded
 * input (T, C k k), T = output positions: its squared norm is either the ghost form
 * <U U^T, D^T D> (cost T^2 (C k k + out)) or the norm of the materialised D U (cost
 * T C k k out); the cheaper one is used per layer (conv_norm = AUTO; doc/models.md).
 *
 * A KAN layer (Liu et al. 2024, "KAN: Kolmogorov-Arnold networks"; the B-spline KAN of
 * dpcorr/papers/kan.h) puts a learnable function on every edge i -> o:
 *     z_o = b_o + sum_i [ wb_oi silu(a_i) + sum_k c_oik B_k(a_i) ]
 * with B_k the p = G + 3 uniform cubic B-splines of dpc_bspline (G = cfg.grid intervals on
 * [grid_lo, grid_hi] for the first layer, on [-1, 1] for the others) and silu(x) = x s(x).
 * That is a dense layer over the expanded features phi(a) = [silu(a_i), B_0(a_i) .. B_{p-1}(a_i)]
 * (in * (p + 1) of them, at most 5 nonzero per input), so the per-example gradient is again an
 * outer product delta phi^T and the ghost norm, the clipped-sum GEMM and the reproducibility
 * contract below carry over unchanged. Like the paper's KAN, a fixed tanh between layers keeps
 * every hidden output in (-1, 1), inside the next layer's grid (no grid updates are needed).
 *
 * Legend for the shape comments:  M = examples in a chunk, D = n_in (features),
 * K = n_out (outputs: 1 for linear/logistic/regression, n_classes otherwise), P = parameters.
 * Every matrix is row-major; X is (M, D) with example i in row i.
 *
 * Parameters: one flat double slab of P values (llm.c style). Dense layer l (l = 0..n_hidden)
 * maps in_l -> out_l and owns the views
 *     W<l>  (out_l, in_l)   at offset off_W,   row o holds the weights into output o
 *     b<l>  (out_l)         right after W<l>   (absent when cfg.bias == 0)
 * (kan: W<l> is (out_l, in_l * (G + 4)), row o = [wb_o0, c_o00 .. c_o0(p-1), wb_o1, ...])
 * in slab order W0, b0, W1, b1, ... ; dpc_model_tensor_at() lists them by name, offset and
 * shape, for reports and checkpoints. The model object holds only the shape, never
 * parameters: the caller owns the slab (and the gradient slabs, also of length P), so the
 * optimizer, clipping and noise all act on flat vectors.
 *
 * Gradients. For an example (x, y) the gradient of its loss is g (P). Per dense layer, with
 * a_l (in_l) the layer's input and delta_l = dloss/dz_l (out_l),
 *     dW_l = delta_l a_l^T   (an outer product)        db_l = delta_l
 * so ||g||^2 = sum_l ||delta_l||^2 (||a_l||^2 + [bias]) — the "ghost norm" — and the clipped
 * sum over a chunk, sum_i min(1, C/||g_i||) g_i, is one GEMM per layer. dpc_model_clipped_sum
 * computes both without ever forming a per-example gradient (see doc/models.md).
 *
 * Reproducibility contract (what the DP trainer relies on):
 *   - Every per-example quantity (loss, norm, the rows of dpc_model_per_example_grads) is a
 *     pure function of (params, x_i, y_i): bit for bit independent of which chunk the example
 *     is in, of the chunk size and of the thread. Kernels fix the order of every sum.
 *   - The chunk sum S = sum_i s_i g_i is accumulated over i = 0..M-1 in order and is a pure
 *     function of (params, X, y, M, clip). The call then does grad_sum[p] = grad_sum[p] + S[p]:
 *     passing a running total gives exactly the same bits as summing zeroed per-chunk buffers
 *     afterwards in the same order.
 *   - dpc_model_loss_grad (the naive one-example reference) gives bit-identical losses and
 *     gradients to the fast path: the same sums in the same order. Norms agree to rounding
 *     (the ghost norm sums the squares in another order).
 *
 * Threading: a dpc_model is immutable after dpc_model_new and may be shared by any number of
 * threads. A dpc_model_ws is scratch memory for one thread at a time.
 *
 * Numerics: a non-finite parameter or input is DPC_E_INVALID, a non-finite loss or gradient
 * DPC_E_NUMERIC; the message names the slab entry ("params[17] (W0[0][17])") or the example
 * row within the call. Inputs are all checked before any work, and on error nothing is written
 * to the caller's outputs (dpc_model_loss_grad excepted, see there). ReLU propagates NaN (it
 * is max(z, 0) written so that a NaN z stays NaN), so an activation never hides a NaN.
 *
 * The example below is compiled and run as test_header_example in tests/test_model.c.
 *
 * Example:
 *     dpc_model_config cfg;  dpc_model *m = NULL;  dpc_model_ws *ws = NULL;  dpc_error err = {0};
 *     if (dpc_model_parse(&cfg, "mlp:256:relu", 784, 10, &err) ||
 *         dpc_model_new(&m, &cfg, &err) || dpc_model_ws_new(&ws, m, 32, &err)) goto fail;
 *     double *w = calloc(dpc_model_num_params(m), sizeof *w);            // (P)
 *     double *g = calloc(dpc_model_num_params(m), sizeof *g);            // (P), zeroed
 *     dpc_rng rng;  dpc_rng_seed(&rng, 1);
 *     if (dpc_model_init(m, w, &rng, 0, &err)) goto fail;
 *     // X (32, 784), y (32): one chunk; g += sum_i min(1, 1.0/||g_i||) g_i
 *     if (dpc_model_clipped_sum(m, w, X, y, 32, 1.0, g, losses, norms, ws, &err)) goto fail;
 *     ...  dpc_model_ws_free(ws);  dpc_model_free(m);
 */
#ifndef DPCORR_MODEL_H
#define DPCORR_MODEL_H

#include "dpcorr/common.h"
#include "dpcorr/field.h"
#include "dpcorr/rng.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DPC_MODEL_MAX_HIDDEN 8         /* hidden layers of an MLP */
#define DPC_MODEL_MAX_WIDTH (1u << 24) /* any layer width, n_in and n_classes */
#define DPC_MODEL_SPEC_LEN 400         /* buffer that holds any dpc_model_format_spec output */
#define DPC_MODEL_MAX_GRID 256         /* kan: grid intervals per layer */
#define DPC_MODEL_MAX_LAYERS 16        /* cnn: layers of a spec (the output layer is added) */

typedef enum dpc_model_kind {
    DPC_MODEL_LINEAR = 0,   /* linear regression, squared loss */
    DPC_MODEL_LOGISTIC = 1, /* binary logistic regression, labels 0/1 */
    DPC_MODEL_SOFTMAX = 2,  /* multinomial logistic regression, labels 0..K-1 */
    DPC_MODEL_MLP = 3,      /* multilayer perceptron, softmax (K >= 2) or squared (K <= 1) head */
    DPC_MODEL_KAN = 4,      /* Kolmogorov-Arnold network (B-spline edges), heads as mlp */
    DPC_MODEL_CNN = 5       /* convolutional network on (C, H, W) images, heads as mlp */
} dpc_model_kind;

/* cnn layers. Spec tokens (dpc_model_parse) in brackets. */
typedef enum dpc_layer_kind {
    DPC_LAYER_CONV = 0,      /* [conv<OUT>k<K>[s<S>][p<P>]] out channels, kernel, stride, pad */
    DPC_LAYER_AVGPOOL = 1,   /* [avgpool<K>[s<S>]] stride defaults to K */
    DPC_LAYER_MAXPOOL = 2,   /* [maxpool<K>[s<S>]] */
    DPC_LAYER_GROUPNORM = 3, /* [gn<G>] with per-channel gamma, beta; [gn<G>n]: none */
    DPC_LAYER_RELU = 4,      /* [relu] */
    DPC_LAYER_TANH = 5,      /* [tanh] */
    DPC_LAYER_FLATTEN = 6,   /* [flatten] (C, H, W) -> (C H W, 1, 1); implied before linear */
    DPC_LAYER_LINEAR = 7     /* [fc<OUT>] dense layer to OUT features */
} dpc_layer_kind;

typedef struct dpc_layer {
    dpc_layer_kind kind;
    size_t out;    /* conv: output channels; linear: output features; groupnorm: groups G
                      (G must divide the channels) */
    size_t k;      /* conv, pools: kernel size (square), >= 1 */
    size_t stride; /* conv, pools: >= 1 */
    size_t pad;    /* conv: zero padding on every side, < k */
    int affine;    /* groupnorm: 1 = learnable per-channel scale (init 1) and shift (init 0) */
} dpc_layer;

/* How a cnn computes the per-example gradient norm of its conv and linear layers. */
typedef enum dpc_conv_norm {
    DPC_CONV_NORM_AUTO = 0,  /* per layer, the cheaper of the two (doc/models.md) */
    DPC_CONV_NORM_GHOST = 1, /* always <U U^T, D^T D> (ghost clipping) */
    DPC_CONV_NORM_DIRECT = 2 /* always from the materialised per-layer gradient D U */
} dpc_conv_norm;

typedef enum dpc_activation {
    DPC_ACT_TANH = 0, /* default: bounded, the DP-friendly choice (tempered sigmoids) */
    DPC_ACT_RELU = 1
} dpc_activation;

/* Plain data; zero-initialise and fill, or use dpc_model_parse. */
typedef struct dpc_model_config {
    dpc_model_kind kind;
    size_t n_in;                         /* D: features per example, >= 1 */
    size_t n_classes;                    /* 0 or 1: regression (linear, mlp); 2: logistic;
                                            >= 2: softmax, mlp classifier */
    size_t n_hidden;                     /* mlp, kan: 1..DPC_MODEL_MAX_HIDDEN; others: 0 */
    size_t hidden[DPC_MODEL_MAX_HIDDEN]; /* mlp, kan: hidden widths, in order from the input */
    dpc_activation act;                  /* mlp: activation after every hidden layer;
                                            kan: must be DPC_ACT_TANH */
    int bias;                            /* 1: every layer has a bias vector; 0: none */
    size_t grid;                         /* kan: G, spline intervals 1..DPC_MODEL_MAX_GRID */
    double grid_lo, grid_hi;             /* kan: first layer's grid range, lo < hi */
    dpc_isa isa;                         /* instruction-set level of the kernels (dpcorr/isa.h):
                                            AUTO (0, the default) = the best this CPU runs.
                                            dpc_model_new resolves it (refusing a level the CPU
                                            lacks) and the model keeps the resolved level.
                                            Every result is the same at every level. */
    size_t in_shape[3];                  /* cnn: (C, H, W) of an example, C H W = n_in */
    size_t n_layers;                     /* cnn: 0..DPC_MODEL_MAX_LAYERS layers before the
                                            output layer (a linear layer to K, always added) */
    dpc_layer layers[DPC_MODEL_MAX_LAYERS]; /* cnn: in order from the input */
    dpc_conv_norm conv_norm;             /* cnn: norm method of conv/linear layers (AUTO) */
    /* L2 weight decay is the optimizer's job: the models compute data losses only. */
} dpc_model_config;

/* The field table of dpc_model_config (dpcorr/field.h): name, type, offset, range and one-line
 * doc of every field; its defaults are those of dpc_model_parse (bias 1, tanh, kan grid 5 on
 * [-1, 1], the rest 0), which starts from them. A field applies to the kinds its doc names, and
 * dpc_model_config_check range-checks exactly those through the table. */
DPC_API const dpc_field_table *dpc_model_config_fields(void);

/* One named view into the parameter slab: params[offset .. offset + rows*cols), row-major. */
typedef struct dpc_model_tensor {
    const char *name; /* "W0", "b0", "W1", ... ; valid while the model lives */
    size_t offset;    /* first element in the slab */
    size_t rows;      /* W<l>: out_l; b<l>: out_l */
    size_t cols;      /* W<l>: in_l;  b<l>: 1 */
} dpc_model_tensor;

typedef struct dpc_model dpc_model;       /* immutable shape description (opaque) */
typedef struct dpc_model_ws dpc_model_ws; /* per-thread scratch for chunks (opaque) */

/* ==== Configuration ==================================================================== */

/* The clip factors of per-example gradients, the one formula of every front end (the models'
 * clipped sums, the paper trainers and dpcorr.torch through ctypes):
 *     factor[i] = clip / norm[i] if norm[i] > clip, else 1
 * so ||factor_i g_i|| <= clip up to one rounding of the division. norm[i] must be finite and
 * >= 0 (callers refuse a non-finite gradient before: one example must not decide the output);
 * clip > 0. factor may alias norm.                                    norm, factor: (m) */
DPC_API void dpc_model_clip_factors(const double *norm, size_t m, double clip, double *factor);

/* Checks cfg: kind/n_classes compatibility, sizes >= 1 and <= DPC_MODEL_MAX_WIDTH, n_hidden,
 * activation, and that P fits in size_t. DPC_E_INVALID / DPC_E_RANGE naming the field. */
DPC_API DPC_NODISCARD dpc_status dpc_model_config_check(const dpc_model_config *cfg,
                                                       dpc_error *err);

/* Fills *cfg from a CLI spec and the data's dimensions, then checks it. Grammar:
 *     linear | logistic | softmax | mlp:H1[,H2,...] | kan:H1[,H2,...]
 *     then optionally, in any order,
 *     :tanh | :relu   (mlp only; default tanh)           :nobias   (default: biases on)
 *     :grid=G         (kan only; default 5)              :range=LO,HI (kan only; default -1,1)
 * e.g. "mlp:256", "mlp:256,128:relu", "softmax:nobias", "kan:64:grid=8:range=0,1".
 *     cnn[:L1,L2,...]  layer tokens as in dpc_layer_kind, e.g. conv16k8s2p2, maxpool2s1, gn27,
 *                      gn81n, tanh, fc32; then optionally
 *     :in=CxHxW        input shape (default: the shape argument of dpc_model_parse_shape, else
 *                      1 x s x s when n_in = s^2, else n_in x 1 x 1)
 *     :norm=auto|ghost|direct   conv_norm          :nobias  (conv and linear layers)
 * e.g. Tramer & Boneh's Fashion-MNIST CNN and their CNN on ScatterNet features:
 *     "cnn:conv16k8s2p2,tanh,maxpool2s1,conv32k4s2,tanh,maxpool2s1,fc32,tanh"
 *     "cnn:gn27n,conv16k3s2p1,tanh,conv32k3p1,tanh,fc32,tanh:in=81x7x7"
 * n_classes as in dpc_model_config.
 * DPC_E_INVALID with a message quoting the spec on any syntax or compatibility error. */
DPC_API DPC_NODISCARD dpc_status dpc_model_parse(dpc_model_config *cfg, const char *spec,
                                                size_t n_in, size_t n_classes, dpc_error *err);

/* As dpc_model_parse, with the data's image shape (C, H, W) (or NULL / all zero: unknown) as
 * the default in_shape of a cnn spec without in=. */
DPC_API DPC_NODISCARD dpc_status dpc_model_parse_shape(dpc_model_config *cfg, const char *spec,
                                                      size_t n_in, const size_t shape[3],
                                                      size_t n_classes, dpc_error *err);

/* Writes the canonical spec of cfg ("mlp:256,128:relu", "softmax:nobias"; dpc_model_parse
 * reads it back to the same layers) into buf (capacity cap, always NUL-terminated when
 * cap > 0). Returns the length of the full spec, as snprintf does. */
DPC_API size_t dpc_model_format_spec(const dpc_model_config *cfg, char *buf, size_t cap);

/* ==== Model object ===================================================================== */

/* Builds the model for a checked copy of *cfg, with cfg->isa resolved (dpc_isa_resolve:
 * DPC_E_UNSUPPORTED naming field "isa" when this CPU lacks the level). *out = NULL on
 * failure. */
DPC_API DPC_NODISCARD dpc_status dpc_model_new(dpc_model **out, const dpc_model_config *cfg,
                                              dpc_error *err);
DPC_API void dpc_model_free(dpc_model *m); /* NULL is a no-op */

/* The configuration the model was built with (owned by m). */
DPC_API const dpc_model_config *dpc_model_get_config(const dpc_model *m);
DPC_API size_t dpc_model_num_params(const dpc_model *m);  /* P */
DPC_API size_t dpc_model_num_outputs(const dpc_model *m); /* K: columns of predict's output */
DPC_API size_t dpc_model_num_tensors(const dpc_model *m); /* 2 per layer with bias, else 1 */
/* The i-th view in slab order (offsets increasing, contiguous, covering [0, P)); NULL if
 * i >= dpc_model_num_tensors(m). Owned by the model. */
DPC_API const dpc_model_tensor *dpc_model_tensor_at(const dpc_model *m, size_t i);

/* Deterministic initialisation of params (P), overwritten. Randomness comes from stream
 * DPC_STREAM_ID(DPC_STREAM_INIT, stream_index) of rng (stream_index <= UINT32_MAX):
 *   linear, logistic, softmax: all zeros (convex: nothing to break; the papers start at 0).
 *   mlp: W<l>[o][k] = std_l * dpc_rng_gaussian(stream, row = l, index = o*in_l + k), with
 *        std_l = sqrt(2 / in_l) (He) for a hidden layer followed by ReLU, and
 *        std_l = sqrt(2 / (in_l + out_l)) (Glorot) for tanh hidden layers and the output layer;
 *        all biases 0.
 *   kan: W<l>[o][f] = s_f * dpc_rng_gaussian(stream, row = l, index = o*cols_l + f), with
 *        s_f = sqrt(2 / (in_l + out_l)) for the silu weights and a tenth of it for the spline
 *        coefficients (the network starts close to its silu part, as in pykan); biases 0.
 *   cnn: conv and linear W<l> as mlp with fan_in = C_in k k and fan_out = C_out k k (He when
 *        the next layer other than pooling/flatten is a ReLU, Glorot otherwise), row = l (the
 *        layer's index in the spec); biases 0; GroupNorm gamma 1, beta 0.
 * A layer's values depend only on its own shape, the key and l (not on other layers). */
DPC_API DPC_NODISCARD dpc_status dpc_model_init(const dpc_model *m, double *params,
                                               const dpc_rng *rng, uint64_t stream_index,
                                               dpc_error *err);

/* ==== Naive reference (one example at a time) ========================================= */

/* Loss and gradient of one example: params (P), x (D), y (label or target);
 * *loss = its loss, grad (P) overwritten with its gradient. Plain loops, allocates a small
 * scratch per call: the reference for the fast path, not the training path.
 * Errors: invalid label/x/params (DPC_E_INVALID, nothing written), non-finite loss or
 * gradient (DPC_E_NUMERIC; *loss and grad then hold the partial, non-finite result). */
DPC_API DPC_NODISCARD dpc_status dpc_model_loss_grad(const dpc_model *m, const double *params,
                                                    const double *x, double y, double *loss,
                                                    double *grad, dpc_error *err);

/* The reference for dpc_model_clipped_sum, by materialising every g_i with
 * dpc_model_loss_grad: norm_i = sqrt(sum_p g_i[p]^2) in slab order, s_i as documented there,
 * S = sum_i s_i g_i (i in order), grad_sum += S. Same contract and outputs as the fast path. */
DPC_API DPC_NODISCARD dpc_status dpc_model_clipped_sum_naive(
    const dpc_model *m, const double *params, const double *X, const double *y, size_t M,
    double clip, double *grad_sum, double *losses, double *norms, dpc_error *err);

/* ==== Fast chunk path ================================================================== */

/* Workspace for chunks of up to max_chunk examples (1..2^30), for models of m's shape (any
 * model with the same layer widths may use it). At most about 8 * max_chunk * (2 * (sum of
 * all widths) + max width) bytes plus 8 * max_{l >= 1} in_l * out_l (for the MLP
 * 784-256-10 at max_chunk 32: 0.4 MB). A cnn workspace also holds every layer's activations
 * and gradients, the unfolded conv inputs (max_chunk T C_in k k each) and the per-example
 * gradients of direct-norm layers (Tramer & Boneh's CNN at max_chunk 32: about 17 MB). */
DPC_API DPC_NODISCARD dpc_status dpc_model_ws_new(dpc_model_ws **out, const dpc_model *m,
                                                 size_t max_chunk, dpc_error *err);
DPC_API void dpc_model_ws_free(dpc_model_ws *ws); /* NULL is a no-op */
DPC_API size_t dpc_model_ws_max_chunk(const dpc_model_ws *ws);
DPC_API size_t dpc_model_ws_bytes(const dpc_model_ws *ws); /* memory held by ws */

/* One chunk of M examples (M <= max chunk of ws; M == 0 is a no-op):
 *     params (P), X (M, D), y (M)
 *     losses (M) or NULL      loss of each example
 *     norms (M) or NULL       ||g_i||, the L2 norm of each unclipped per-example gradient
 *     grad_sum (P)            grad_sum += sum_i s_i g_i, s_i = clip/||g_i|| if ||g_i|| > clip
 *                             else 1 (so clip = INFINITY gives the plain sum; clip = 0 adds 0)
 * clip must be >= 0 (INFINITY allowed). ws may be NULL (a temporary one is allocated).
 * Each clipped contribution has norm <= clip up to rounding (relative 1e-13).
 * Errors: DPC_E_INVALID (clip, dimensions, label, non-finite x or params; the message names
 * the example row / slab entry), DPC_E_RANGE (M > max chunk), DPC_E_NUMERIC (non-finite loss
 * or gradient norm of example i, named). On error nothing is written to any output. */
DPC_API DPC_NODISCARD dpc_status dpc_model_clipped_sum(const dpc_model *m, const double *params,
                                                      const double *X, const double *y,
                                                      size_t M, double clip, double *grad_sum,
                                                      double *losses, double *norms,
                                                      dpc_model_ws *ws, dpc_error *err);

/* The per-example gradients materialised: G (M, P), row i = g_i (bit-identical to
 * dpc_model_loss_grad), losses (M) or NULL. For tests, small models and algorithms that need
 * the vectors themselves (e.g. gradient differences at two points). M <= max chunk of ws
 * (ws may be NULL). Errors as dpc_model_clipped_sum (a non-finite loss or gradient is
 * DPC_E_NUMERIC). */
DPC_API DPC_NODISCARD dpc_status dpc_model_per_example_grads(const dpc_model *m,
                                                            const double *params,
                                                            const double *X, const double *y,
                                                            size_t M, double *G,
                                                            double *losses, dpc_model_ws *ws,
                                                            dpc_error *err);

/* ==== Batch clipped sums (the trainer's path) ========================================= */

/* The clipped sum of a whole batch of n examples in two phases that parallelise without
 * per-chunk gradient buffers. The batch is cut into chunks of `chunk` examples, chunk c holding
 * examples [c chunk, min((c + 1) chunk, n)).
 *   Phase 1, dpc_model_batch_grads, one call per chunk, in any order and on any threads (each
 *   with its own dpc_model_ws): forward, backward, ghost norms and clip factors of the chunk;
 *   the per-example quantities the sum needs are kept in the batch object, so the memory is
 *   O(max_batch * (sum of layer input and output widths)) instead of O(chunks * P).
 *   Phase 2, dpc_model_batch_sum, once per part = 0..nparts-1, in any order and on any threads
 *   (parts are disjoint sets of grad_sum entries): for every entry p of the part,
 *       grad_sum[p] = (((grad_sum[p] + S_0[p]) + S_1[p]) + ...) + S_last[p]
 *   where S_c = sum over the examples i of chunk c, in order, of s_i g_i: exactly the bits of
 *   dpc_model_clipped_sum called on chunk 0, 1, ... with grad_sum as the running total, for any
 *   nparts (tests/test_model.c). Dense kinds (linear, logistic, softmax, mlp, kan) sum with one
 *   segmented GEMM per layer (gemm.h); the cnn kind keeps per-chunk sums of P doubles
 *   (dpc_model_clipped_sum per chunk, then the chunk-order sum of phase 2). */
typedef struct dpc_model_batch dpc_model_batch;

/* State for batches of up to max_batch examples (1..2^30) reduced in chunks of `chunk` (1 ..
 * max_batch) examples, for models of m's shape. */
DPC_API DPC_NODISCARD dpc_status dpc_model_batch_new(dpc_model_batch **out, const dpc_model *m,
                                                    size_t max_batch, size_t chunk,
                                                    dpc_error *err);
DPC_API void dpc_model_batch_free(dpc_model_batch *b); /* NULL is a no-op */
/* Bytes the batch object holds (for memory reports), and its max_batch. */
DPC_API size_t dpc_model_batch_bytes(const dpc_model_batch *b);
DPC_API size_t dpc_model_batch_max(const dpc_model_batch *b);

/* Phase 1 for the M examples X (M, D), y (M) that start the chunk at batch position i0 (a
 * multiple of the chunk size; M <= chunk; i0 + M <= max_batch): as dpc_model_clipped_sum for
 * this chunk (same checks, losses (M) and norms (M) or NULL, same messages naming the row within
 * the chunk), but the contribution is kept in b for phase 2. The parameters, the same for every
 * chunk, are validated by the call for the chunk at i0 = 0 only (elsewhere a non-finite one
 * shows as a non-finite loss, DPC_E_NUMERIC). ws: a workspace of m's shape with
 * max chunk >= M (not NULL). On error nothing is kept for the chunk. */
DPC_API DPC_NODISCARD dpc_status dpc_model_batch_grads(const dpc_model *m, const double *params,
                                                      const double *X, const double *y,
                                                      size_t M, size_t i0, double clip,
                                                      dpc_model_batch *b, dpc_model_ws *ws,
                                                      double *losses, double *norms,
                                                      dpc_error *err);

/* Phase 2: adds part `part` (< nparts) of the clipped sum of the batch's first n examples
 * (phase 1 done for every chunk of [0, n)) to grad_sum (P), as documented above. */
DPC_API void dpc_model_batch_sum(const dpc_model *m, const dpc_model_batch *b, size_t n,
                                 size_t part, size_t nparts, double *grad_sum);

/* ==== float32 path (the trainer's precision = float32) ================================= */

/* Arithmetic precision of the training path. */
typedef enum dpc_precision {
    DPC_PRECISION_DOUBLE = 0,  /* default: everything in double */
    DPC_PRECISION_FLOAT32 = 1  /* parameters, activations and gradients in float; clipping norms
                                  accumulated in double (the trainer adds double noise) */
} dpc_precision;

DPC_API const char *dpc_precision_name(dpc_precision p); /* "double", "float32" */
/* Parses "double" or "float32"; DPC_E_INVALID naming field "precision". */
DPC_API DPC_NODISCARD dpc_status dpc_precision_parse(const char *s, dpc_precision *out,
                                                    dpc_error *err);
/* 1 if m's kind has a float32 path (linear, logistic, softmax, mlp; not kan or cnn). */
DPC_API int dpc_model_has_f32(const dpc_model *m);
/* The one refusal of a precision m cannot run (the trainer's, the float32 batch's and the front
 * ends' before any work): DPC_E_UNSUPPORTED naming field "precision" for float32 on a kind
 * without a float32 path; DPC_OK otherwise. */
DPC_API DPC_NODISCARD dpc_status dpc_model_precision_check(const dpc_model *m, dpc_precision p,
                                                           dpc_error *err);

/* The batch clipped sum in float32, with the contract of the double one (two phases, any
 * chunk order, any number of parts, chunk-order sums): params (P), X (M, D) and grad_sum (P)
 * are float; the forward and backward passes, the activations (tanh: the float rounding of the
 * double tanh) and the GEMM sums are float arithmetic (products and sums rounded separately, the same bits at every level); the
 * loss head runs in double on the float logits; the ghost norms sum the squares of the float
 * layer inputs and deltas in double, and the clip factor s_i is double, applied to the float
 * deltas with the product rounded to float. The batch object comes from
 * dpc_model_batch_new_f32 (DPC_E_UNSUPPORTED for a kind without a float32 path); ws is an
 * ordinary workspace of m's shape. losses and norms (M, or NULL) are double. */
DPC_API DPC_NODISCARD dpc_status dpc_model_batch_new_f32(dpc_model_batch **out,
                                                        const dpc_model *m, size_t max_batch,
                                                        size_t chunk, dpc_error *err);
DPC_API DPC_NODISCARD dpc_status dpc_model_batch_grads_f32(
    const dpc_model *m, const float *params, const float *X, const double *y, size_t M,
    size_t i0, double clip, dpc_model_batch *b, dpc_model_ws *ws, double *losses, double *norms,
    dpc_error *err);
DPC_API void dpc_model_batch_sum_f32(const dpc_model *m, const dpc_model_batch *b, size_t n,
                                     size_t part, size_t nparts, float *grad_sum);

/* Predictions for X (M, D) into out (M, K), any M (processed in chunks of ws's size; ws may
 * be NULL): linear / mlp regression: z; logistic: P(y = 1) = sigmoid(z); softmax / mlp
 * classifier: class probabilities softmax(z). */
DPC_API DPC_NODISCARD dpc_status dpc_model_predict(const dpc_model *m, const double *params,
                                                  const double *X, size_t M, double *out,
                                                  dpc_model_ws *ws, dpc_error *err);

/* Mean loss over the n examples X (n, D), y (n) (losses summed in example order, divided by
 * n), and the accuracy: fraction of examples whose predicted class (argmax of z, lowest index
 * on ties; logistic: z > 0) equals y; NaN for regression. accuracy may be NULL. n >= 1. */
DPC_API DPC_NODISCARD dpc_status dpc_model_evaluate(const dpc_model *m, const double *params,
                                                   const double *X, const double *y, size_t n,
                                                   double *mean_loss, double *accuracy,
                                                   dpc_model_ws *ws, dpc_error *err);

#ifdef __cplusplus
}
#endif
#endif /* DPCORR_MODEL_H */
