/* internal.h — the model object, the workspace, and the pieces shared by the naive and the
 * fast path (loss heads, activations, input checks). Sharing them is what makes the two
 * paths agree bit for bit. Internal: not installed. */
#ifndef DPCORR_SRC_MODEL_INTERNAL_H
#define DPCORR_SRC_MODEL_INTERNAL_H

#include "dpcorr/model.h"

#define DPC__MAX_LAYERS (DPC_MODEL_MAX_HIDDEN + 1)

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
    size_t w_off[DPC__MAX_LAYERS];    /* W<l> (dim[l+1], dim[l]) at params + w_off[l] */
    size_t b_off[DPC__MAX_LAYERS];    /* b<l> (dim[l+1]) at params + b_off[l] (if bias) */
    size_t n_params;                  /* P */
    size_t n_tensors;
    dpc_model_tensor tensors[2 * DPC__MAX_LAYERS];
    char names[2 * DPC__MAX_LAYERS][24]; /* "W0", "b0", ... */
};

struct dpc_model_ws {
    size_t max_chunk;                  /* Mmax */
    size_t n_layers;                   /* shape this workspace was made for ... */
    size_t dim[DPC__MAX_LAYERS + 1];   /* ... checked on every use */
    double *slab;                      /* one allocation; the views below point into it */
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

#endif
