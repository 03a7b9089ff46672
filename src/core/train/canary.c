/* canary.c — the auditing hook of the trainer (dpc_train_config.canaries, dpcorr/train.h):
 * canary slots are drawn by the run's sampler like every other example; here the batch is
 * adjusted so that an excluded canary contributes nothing and a white-box canary contributes its
 * given gradient instead of the model's. Without canaries both functions do nothing. */
#include "train/train_internal.h"

#include <string.h>

void dpc__train_canary_filter(dpc_trainer *tr)
{
    const dpc_train_canaries *cn = tr->cfg.canaries;
    tr->ncanary_hits = 0;
    if (!cn) return;
    size_t kept = 0;
    for (size_t j = 0; j < tr->count; j++) {
        size_t ex = tr->idx[j];
        if (ex >= cn->first && ex - cn->first < cn->count) {
            size_t c = ex - cn->first;
            if (!cn->included[c]) continue; /* zero-out neighbour: nothing */
            if (cn->add_gradient) {         /* white-box: its gradient is added after the sum */
                tr->canary_hits[tr->ncanary_hits++] = c;
                continue;
            }
        }
        tr->idx[kept++] = ex; /* real example or input canary: through the model, in order */
    }
    tr->count = kept;
}

void dpc__train_canary_add(dpc_trainer *tr)
{
    const dpc_train_canaries *cn = tr->cfg.canaries;
    if (!tr->ncanary_hits) return;
    if (!tr->params32) {
        for (size_t k = 0; k < tr->ncanary_hits; k++)
            cn->add_gradient(cn->ctx, tr->canary_hits[k], tr->gsum);
        return;
    }
    /* float32 precision (one process): the canaries' gradients summed in double in gsum (unused
     * at this precision), then added to the float sum, as the model's chunk sums are */
    memset(tr->gsum, 0, tr->P * sizeof(double));
    for (size_t k = 0; k < tr->ncanary_hits; k++)
        cn->add_gradient(cn->ctx, tr->canary_hits[k], tr->gsum);
    for (size_t p = 0; p < tr->P; p++) tr->gsum32[p] += (float)tr->gsum[p];
}
