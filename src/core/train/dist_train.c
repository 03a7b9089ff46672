/* dist_train.c — the trainer's message protocol over P ranks (doc/distributed.md).
 *
 * Step t on rank r (d parameters, shard [s0, s1)):
 *   rounds   the batch's chunks in rounds of P x C; rank r computes a contiguous share of each
 *            round (threads, as one process), the ranks agree that every share succeeded, then
 *            the chain: the running total gsum travels 0 -> 1 -> ... -> P-1 in pieces of
 *            DPC__PIECE coordinates, each rank adding its chunks in chunk order (P-1 returns the
 *            total to rank 0 at the start of the next round). The additions are exactly those of
 *            one process, so gsum is bit-identical for every P.
 *   scatter  rank P-1 sends each rank its shard of gsum.
 *   update   noise of the shard (its own generators), momentum and parameters of the shard;
 *            the ranks agree; the shards go around the ring (all-gather).
 *   telemetry per-chunk losses and clip counts to rank 0 with each rank's byte count; rank 0
 *            adds them in chunk order and sends the totals back.
 * Every collective is called by every rank in the same order with sizes both sides know. */
#include "common/util.h"
#include "train/train_internal.h"

#include <math.h>
#include <string.h>

#define NONE DPC_RANK_NONE

/* ---- setup --------------------------------------------------------------------------------- */

/* Rank 0 calibrates (accounting runs once) and sends the ledger and the noise scale to all. */
static dpc_status share_privacy(dpc_trainer *tr, dpc_error *err)
{
    dpc__dist *d = &tr->dist;
    struct {
        int64_t status;
        dpc_error err;
        dpc_ledger ledger;
        double noise_scale;
    } m;
    memset(&m, 0, sizeof m);
    if (d->rank == 0) {
        m.status = (int64_t)dpc__train_privacy(tr, &m.err);
        m.ledger = tr->ledger;
        m.noise_scale = tr->noise_scale;
    }
    dpc_status st = dpc__dist_bcast(d, 0, &m, sizeof m, err);
    if (st) return st;
    if (m.status) {
        if (err) {
            *err = m.err;
            err->msg[sizeof err->msg - 1] = '\0';
            err->field[sizeof err->field - 1] = '\0';
        }
        return (dpc_status)m.status;
    }
    tr->ledger = m.ledger;
    tr->noise_scale = m.noise_scale;
    return DPC_OK;
}

/* Every rank must run the same run (configuration, data, model, seed: the checkpoint
 * fingerprint); rank 0 compares and sends back its verdict with every rank's threads and noise
 * state bytes. */
static dpc_status share_layout(dpc_trainer *tr, dpc_error *err)
{
    dpc__dist *d = &tr->dist;
    size_t P = d->size;
    uint64_t mine[3] = {dpc__train_fingerprint(tr), tr->T, d->state_bytes[d->rank]};
    uint64_t *all = dpc__calloc(1 + 2 * P, sizeof(uint64_t)); /* bad rank + 1, threads, bytes */
    dpc_status st = all ? DPC_OK : DPC__NOMEM(err, "rank layout");
    st = dpc__dist_agree(d, st, err);
    if (st) {
        free(all);
        return st;
    }
    if (d->rank == 0) {
        all[1] = mine[1];
        all[1 + P] = mine[2];
        for (size_t s = 1; s < P && !st; s++) {
            uint64_t v[3];
            st = dpc__dist_sendrecv(d, NONE, NULL, 0, s, v, sizeof v, err);
            if (!st && v[0] != mine[0] && !all[0]) all[0] = s + 1;
            all[1 + s] = v[1];
            all[1 + P + s] = v[2];
        }
    } else {
        st = dpc__dist_sendrecv(d, 0, mine, sizeof mine, NONE, NULL, 0, err);
    }
    if (!st) st = dpc__dist_bcast(d, 0, all, (1 + 2 * P) * sizeof(uint64_t), err);
    if (!st && all[0])
        st = dpc_error_param(err, DPC_E_STATE, "transport",
                             "rank %llu runs another run than rank 0 (configuration, data, "
                             "model or seed differ)", (unsigned long long)(all[0] - 1));
    for (size_t s = 0; !st && s < P; s++) {
        d->threads[s] = (size_t)all[1 + s];
        d->state_bytes[s] = (size_t)all[1 + P + s];
    }
    free(all);
    return st;
}

dpc_status dpc__dist_setup(dpc_trainer *tr, dpc_error *err)
{
    if (!dpc__dist_on(&tr->dist)) return DPC_OK;
    dpc_status st = share_privacy(tr, err);
    if (!st) st = dpc__dist_data_setup(tr, err); /* the content hash of a sharded set first */
    return st ? st : share_layout(tr, err);
}

/* ---- the step ------------------------------------------------------------------------------ */

static size_t piece_len(const dpc__dist *d, size_t n, size_t i)
{
    size_t q0 = i * d->piece_len;
    return n - q0 < d->piece_len ? n - q0 : d->piece_len;
}

/* Ranks 0 .. P-2: receive piece i from upstream into gsum while piece i-1 goes downstream, add
 * this rank's chunks in place; the last piece leaves after the loop. */
static dpc_status chain_middle(dpc_trainer *tr, size_t up, const dpc__round *r, dpc_error *err)
{
    dpc__dist *d = &tr->dist;
    size_t n = tr->P, L = d->piece_len, np = (n + L - 1) / L, down = d->rank + 1;
    double *g = tr->gsum;
    for (size_t i = 0; i <= np; i++) {
        size_t to = i > 0 ? down : NONE, from = i < np ? up : NONE;
        size_t sb = i > 0 ? piece_len(d, n, i - 1) * sizeof(double) : 0;
        size_t rb = i < np ? piece_len(d, n, i) * sizeof(double) : 0;
        dpc_status st = dpc__dist_sendrecv(d, to, i > 0 ? g + (i - 1) * L : NULL, sb, from,
                                           g + i * L, rb, err);
        if (st) return st;
        if (i < np) {
            size_t q0 = i * L, q1 = q0 + piece_len(d, n, i);
            dpc__train_add_chunks(tr, r, q0, q1, g + q0);
        }
    }
    return DPC_OK;
}

/* Rank P-1: piece i of the previous round's total goes to rank 0 (rounds > 0) while piece i of
 * this round's prefix arrives from P-2; the total of the pieces is kept in gsum. */
static dpc_status chain_last(dpc_trainer *tr, size_t round, const dpc__round *r, dpc_error *err)
{
    dpc__dist *d = &tr->dist;
    size_t n = tr->P, L = d->piece_len, np = (n + L - 1) / L;
    for (size_t i = 0; i < np; i++) {
        size_t q0 = i * L, len = piece_len(d, n, i);
        dpc_status st = dpc__dist_sendrecv(d, round > 0 ? 0 : NONE, tr->gsum + q0,
                                           len * sizeof(double), d->rank - 1, d->piece,
                                           len * sizeof(double), err);
        if (st) return st;
        dpc__train_add_chunks(tr, r, q0, q0 + len, d->piece);
    }
    return DPC_OK;
}

dpc_status dpc__dist_chain(dpc_trainer *tr, size_t round, const dpc__round *r, dpc_error *err)
{
    dpc__dist *d = &tr->dist;
    size_t P = d->size;
    if (d->rank == P - 1) return chain_last(tr, round, r, err);
    size_t up = d->rank > 0 ? d->rank - 1 : (round > 0 ? P - 1 : NONE);
    return chain_middle(tr, up, r, err);
}

dpc_status dpc__dist_scatter(dpc_trainer *tr, dpc_error *err)
{
    dpc__dist *d = &tr->dist;
    size_t last = d->size - 1;
    if (!dpc__dist_on(d)) return DPC_OK;
    if (d->rank != last) {
        size_t b = d->bound[d->rank], len = d->bound[d->rank + 1] - b;
        return dpc__dist_sendrecv(d, NONE, NULL, 0, last, tr->gsum + b, len * sizeof(double),
                                  err);
    }
    for (size_t s = 0; s < last; s++) {
        size_t b = d->bound[s], len = d->bound[s + 1] - b;
        dpc_status st = dpc__dist_sendrecv(d, s, tr->gsum + b, len * sizeof(double), NONE, NULL,
                                           0, err);
        if (st) return st;
    }
    return DPC_OK;
}

/* Ring all-gather: in round k rank r passes shard (r - k) mod P on and receives
 * (r - k - 1) mod P. */
dpc_status dpc__dist_allgather(dpc_trainer *tr, dpc_error *err)
{
    dpc__dist *d = &tr->dist;
    size_t P = d->size, r = d->rank;
    if (!dpc__dist_on(d)) return DPC_OK;
    for (size_t k = 0; k + 1 < P; k++) {
        size_t out = (r + P - k) % P, in = (r + 2 * P - k - 1) % P;
        size_t ob = d->bound[out], ib = d->bound[in];
        dpc_status st = dpc__dist_sendrecv(
            d, (r + 1) % P, tr->params + ob, (d->bound[out + 1] - ob) * sizeof(double),
            (r + P - 1) % P, tr->params + ib, (d->bound[in + 1] - ib) * sizeof(double), err);
        if (st) return st;
    }
    return DPC_OK;
}

/* The chunks rank s computed in this step: the shares of every round. */
static size_t chunks_of(const dpc_trainer *tr, size_t s, size_t nchunks, size_t *list)
{
    dpc__dist v = tr->dist;
    v.rank = s;
    size_t per_round = tr->C * v.size, k = 0;
    for (size_t g0 = 0; g0 < nchunks; g0 += per_round) {
        size_t g1 = g0 + per_round < nchunks ? g0 + per_round : nchunks, a, b;
        dpc__dist_share(&v, g1 - g0, &a, &b);
        for (size_t c = g0 + a; c < g0 + b; c++) {
            if (list) list[k] = c;
            k++;
        }
    }
    return k;
}

/* Rank s's telemetry message: bytes it sent in the step, then (loss, clipped) per chunk. */
static dpc_status telemetry_gather(dpc_trainer *tr, size_t nchunks, uint64_t sent0,
                                   uint64_t *total, dpc_error *err)
{
    dpc__dist *d = &tr->dist;
    size_t *list = tr->tele_list;
    double *msg = tr->tele_msg;
    dpc_status st = DPC_OK;
    for (size_t s = 1; s < d->size && !st; s++) {
        if (d->rank != 0 && d->rank != s) continue;
        size_t k = chunks_of(tr, s, nchunks, list), bytes = (1 + 2 * k) * sizeof(double);
        if (d->rank == s) {
            msg[0] = (double)(d->sent - sent0 + bytes);
            for (size_t i = 0; i < k; i++) {
                msg[1 + 2 * i] = tr->chunk_loss[list[i]];
                msg[2 + 2 * i] = (double)tr->chunk_nclip[list[i]];
            }
        }
        st = dpc__dist_to_root(d, s, msg, bytes, err);
        if (st || d->rank != 0) continue;
        *total += (uint64_t)msg[0];
        for (size_t i = 0; i < k; i++) {
            tr->chunk_loss[list[i]] = msg[1 + 2 * i];
            tr->chunk_nclip[list[i]] = (size_t)msg[2 + 2 * i];
        }
    }
    return st;
}

dpc_status dpc__dist_telemetry(dpc_trainer *tr, size_t nchunks, uint64_t sent0, double *loss_sum,
                               size_t *nclip, dpc_error *err)
{
    dpc__dist *d = &tr->dist;
    uint64_t total = 0;
    dpc_status st = telemetry_gather(tr, nchunks, sent0, &total, err);
    double out[3] = {0.0, 0.0, 0.0}; /* loss sum, clipped count, bytes of the step */
    if (!st && d->rank == 0) {
        for (size_t c = 0; c < nchunks; c++) {
            out[0] += tr->chunk_loss[c];
            out[1] += (double)tr->chunk_nclip[c];
        }
        total += d->sent - sent0 + (d->size - 1) * sizeof out;
        out[2] = (double)total;
    }
    if (!st) st = dpc__dist_bcast(d, 0, out, sizeof out, err);
    if (st) return st;
    *loss_sum = out[0];
    *nclip = (size_t)out[1];
    d->step_bytes += (uint64_t)out[2];
    d->steps++;
    return DPC_OK;
}

dpc_status dpc__dist_eval_sum(dpc_trainer *tr, size_t nblocks, double *loss, double *correct,
                              double *tot_loss, double *tot_correct, dpc_error *err)
{
    dpc__dist *d = &tr->dist;
    double *msg = dpc__calloc(2 * nblocks + 1, sizeof(double));
    dpc_status st = dpc__dist_agree(d, msg ? DPC_OK : DPC__NOMEM(err, "evaluation"), err);
    dpc__dist v = *d;
    for (size_t s = 1; s < d->size && !st; s++) {
        if (d->rank != 0 && d->rank != s) continue;
        size_t b0, b1;
        v.rank = s;
        dpc__dist_share(&v, nblocks, &b0, &b1);
        if (d->rank == s) {
            memcpy(msg, loss + b0, (b1 - b0) * sizeof(double));
            memcpy(msg + (b1 - b0), correct + b0, (b1 - b0) * sizeof(double));
        }
        st = dpc__dist_to_root(d, s, msg, 2 * (b1 - b0) * sizeof(double), err);
        if (!st && d->rank == 0) {
            memcpy(loss + b0, msg, (b1 - b0) * sizeof(double));
            memcpy(correct + b0, msg + (b1 - b0), (b1 - b0) * sizeof(double));
        }
    }
    double out[2] = {0.0, 0.0};
    if (!st && d->rank == 0)
        for (size_t b = 0; b < nblocks; b++) {
            out[0] += loss[b];
            out[1] += correct[b];
        }
    if (!st) st = dpc__dist_bcast(d, 0, out, sizeof out, err);
    free(msg);
    if (st) return st;
    *tot_loss = out[0];
    *tot_correct = out[1];
    return DPC_OK;
}
