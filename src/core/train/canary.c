/* canary.c — the auditing hook of the trainer (dpc_train_config.canaries, dpcorr/train.h):
 * canary slots are drawn by the run's sampler like every other example; here the batch is
 * adjusted so that an excluded canary contributes nothing and a white-box canary contributes its
 * given gradient instead of the model's. Without canaries both functions do nothing. */
#include "train/train_internal.h"

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
    for (size_t k = 0; k < tr->ncanary_hits; k++)
        cn->add_gradient(cn->ctx, tr->canary_hits[k], tr->gsum);
}
