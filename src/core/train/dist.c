/* dist.c — rank layout and the small collectives of the distributed trainer, on
 * dpc_transport.sendrecv only (see dist.h for the message pattern of each). */
#include "common/util.h"
#include "train/dist.h"
#include "dpcorr/io.h"

#include <stdio.h>
#include <string.h>

#define NONE DPC_RANK_NONE

/* One sendrecv through tp, counting the bytes sent into *sent (may be NULL). */
static dpc_status xfer(const dpc_transport *tp, uint64_t *sent, size_t to, const void *sbuf,
                       size_t sbytes, size_t from, void *rbuf, size_t rbytes, dpc_error *err)
{
    if (to == NONE) sbytes = 0;
    if (from == NONE) rbytes = 0;
    if (!sbytes && !rbytes) return DPC_OK;
    dpc_status st = tp->sendrecv(tp->ctx, sbytes ? to : NONE, sbuf, sbytes, rbytes ? from : NONE,
                                 rbuf, rbytes, err);
    if (st) return st; /* the transport's message names the peer */
    if (sent) *sent += sbytes;
    return DPC_OK;
}

static dpc_status check_transport(const dpc_transport *tp, dpc_error *err)
{
    if (!tp) return DPC_OK;
    if (tp->size == 0 || tp->rank >= tp->size)
        return dpc_error_param(err, DPC_E_INVALID, "transport",
                               "rank %zu of %zu: need 0 <= rank < size", tp->rank, tp->size);
    if (tp->size > 1 && !tp->sendrecv)
        return dpc_error_param(err, DPC_E_INVALID, "transport", "no sendrecv function");
    return DPC_OK;
}

/* The failing rank f's error, sent from f to every other rank; prefixed unless all failed. */
static dpc_status spread_error(const dpc_transport *tp, uint64_t *sent, size_t f, size_t nfail,
                               dpc_status st, dpc_error *e)
{
    dpc_error fe;
    memset(&fe, 0, sizeof fe);
    dpc_status ts;
    if (tp->rank == f) {
        fe = *e;
        fe.status = st;
        for (size_t s = 0; s < tp->size; s++)
            if (s != f && (ts = xfer(tp, sent, s, &fe, sizeof fe, NONE, NULL, 0, e))) return ts;
    } else if ((ts = xfer(tp, sent, NONE, NULL, 0, f, &fe, sizeof fe, e))) {
        return ts;
    }
    fe.msg[sizeof fe.msg - 1] = '\0';
    fe.field[sizeof fe.field - 1] = '\0';
    if (fe.status == DPC_OK) fe.status = DPC_E_STATE;
    *e = fe;
    if (nfail < tp->size) dpc_error_prefix(e, "rank %zu: ", f);
    e->status = fe.status;
    return fe.status;
}

static dpc_status agree_raw(const dpc_transport *tp, uint64_t *sent, dpc_status st,
                            dpc_error *err)
{
    if (!tp || tp->size <= 1) return st;
    dpc_error tmp = {0}, *e = err ? err : &tmp;
    int64_t mine = (int64_t)st, verdict[2] = {-1, 0}; /* lowest failing rank, ranks failing */
    dpc_status ts;
    if (tp->rank == 0) {
        if (st) {
            verdict[0] = 0;
            verdict[1] = 1;
        }
        for (size_t s = 1; s < tp->size; s++) {
            int64_t v = 0;
            if ((ts = xfer(tp, sent, NONE, NULL, 0, s, &v, sizeof v, e))) return ts;
            if (v) {
                if (verdict[0] < 0) verdict[0] = (int64_t)s;
                verdict[1]++;
            }
        }
        for (size_t s = 1; s < tp->size; s++)
            if ((ts = xfer(tp, sent, s, verdict, sizeof verdict, NONE, NULL, 0, e))) return ts;
    } else if ((ts = xfer(tp, sent, 0, &mine, sizeof mine, 0, verdict, sizeof verdict, e))) {
        return ts;
    }
    if (verdict[0] < 0) return DPC_OK;
    return spread_error(tp, sent, (size_t)verdict[0], (size_t)verdict[1], st, e);
}

static dpc_status bcast_raw(const dpc_transport *tp, uint64_t *sent, size_t root, void *buf,
                            size_t bytes, dpc_error *err)
{
    if (!tp || tp->size <= 1) return DPC_OK;
    if (root >= tp->size)
        return dpc_error_param(err, DPC_E_INVALID, "root", "%zu is not a rank (size %zu)", root,
                               tp->size);
    if (tp->rank != root) return xfer(tp, sent, NONE, NULL, 0, root, buf, bytes, err);
    for (size_t s = 0; s < tp->size; s++) {
        if (s == root) continue;
        dpc_status st = xfer(tp, sent, s, buf, bytes, NONE, NULL, 0, err);
        if (st) return st;
    }
    return DPC_OK;
}

dpc_status dpc_transport_agree(const dpc_transport *tp, dpc_status st, dpc_error *err)
{
    dpc_status c = check_transport(tp, err);
    if (c) return c;
    return agree_raw(tp, NULL, st, err);
}

dpc_status dpc_transport_bcast(const dpc_transport *tp, size_t root, void *buf, size_t bytes,
                               dpc_error *err)
{
    dpc_status c = check_transport(tp, err);
    if (c) return c;
    return bcast_raw(tp, NULL, root, buf, bytes, err);
}

/* ---- the trainer's layout ------------------------------------------------------------------ */

dpc_status dpc__dist_init(dpc__dist *d, const dpc_transport *tp, size_t nparams, size_t threads,
                          dpc_error *err)
{
    memset(d, 0, sizeof *d);
    dpc_status st = check_transport(tp, err);
    if (st) return st;
    d->tp = tp;
    d->rank = tp ? tp->rank : 0;
    d->size = tp ? tp->size : 1;
    if (d->size > nparams)
        return dpc_error_param(err, DPC_E_INVALID, "transport",
                               "%zu ranks for a model of %zu parameters (each rank needs a shard "
                               "of at least one coordinate)", d->size, nparams);
    d->bound = dpc__calloc(d->size + 1, sizeof(size_t));
    d->threads = dpc__calloc(d->size, sizeof(size_t));
    d->state_bytes = dpc__calloc(d->size, sizeof(size_t));
    if (!d->bound || !d->threads || !d->state_bytes) return DPC__NOMEM(err, "rank layout");
    for (size_t r = 0; r <= d->size; r++) /* floor(nparams r / size) without overflow */
        d->bound[r] = nparams / d->size * r + nparams % d->size * r / d->size;
    d->threads[d->rank] = threads;
    d->piece_len = DPC__PIECE;
    if (dpc__dist_on(d)) {
        d->piece = dpc__malloc_array(DPC__PIECE, sizeof(double));
        if (!d->piece) return DPC__NOMEM(err, "transport buffer");
    }
    return DPC_OK;
}

void dpc__dist_free(dpc__dist *d)
{
    free(d->bound);
    free(d->threads);
    free(d->state_bytes);
    free(d->piece);
    memset(d, 0, sizeof *d);
}

dpc_status dpc__dist_sendrecv(dpc__dist *d, size_t to, const void *sbuf, size_t sbytes,
                              size_t from, void *rbuf, size_t rbytes, dpc_error *err)
{
    if (!dpc__dist_on(d)) return DPC_OK;
    return xfer(d->tp, &d->sent, to, sbuf, sbytes, from, rbuf, rbytes, err);
}

dpc_status dpc__dist_agree(dpc__dist *d, dpc_status st, dpc_error *err)
{
    if (!dpc__dist_on(d)) return st;
    return agree_raw(d->tp, &d->sent, st, err);
}

dpc_status dpc__dist_root(dpc__dist *d, dpc_status st, dpc_error *err)
{
    if (!dpc__dist_on(d)) return st;
    dpc_error tmp = {0}, *e = err ? err : &tmp;
    struct {
        int64_t status;
        dpc_error err;
    } m;
    memset(&m, 0, sizeof m);
    if (d->rank == 0) {
        m.status = (int64_t)st;
        if (st) m.err = *e;
    }
    dpc_status ts = bcast_raw(d->tp, &d->sent, 0, &m, sizeof m, e);
    if (ts) return ts;
    if (d->rank != 0 && m.status) {
        *e = m.err;
        e->msg[sizeof e->msg - 1] = '\0';
        e->field[sizeof e->field - 1] = '\0';
    }
    return (dpc_status)m.status;
}

dpc_status dpc__dist_bcast(dpc__dist *d, size_t root, void *buf, size_t bytes, dpc_error *err)
{
    if (!dpc__dist_on(d)) return DPC_OK;
    return bcast_raw(d->tp, &d->sent, root, buf, bytes, err);
}

dpc_status dpc__dist_to_root(dpc__dist *d, size_t from, void *buf, size_t bytes, dpc_error *err)
{
    if (!dpc__dist_on(d) || from == 0) return DPC_OK;
    if (d->rank == 0) return xfer(d->tp, &d->sent, NONE, NULL, 0, from, buf, bytes, err);
    if (d->rank == from) return xfer(d->tp, &d->sent, 0, buf, bytes, NONE, NULL, 0, err);
    return DPC_OK;
}

void dpc_dist_report_json(dpc_json_writer *w, const dpc_dist_info *d)
{
    dpc_json_obj(w, "distributed");
    dpc_json_int(w, "ranks", (long long)d->ranks);
    dpc_json_int(w, "threads_per_rank", (long long)d->threads[0]);
    dpc_json_arr(w, "shard_sizes");
    for (size_t r = 0; r < d->ranks; r++)
        dpc_json_int(w, NULL, (long long)(d->shard_begin[r + 1] - d->shard_begin[r]));
    dpc_json_end(w);
    dpc_json_num(w, "bytes_per_step", d->bytes_per_step);
    dpc_json_arr(w, "noise_state_bytes_per_rank");
    for (size_t r = 0; r < d->ranks; r++) dpc_json_int(w, NULL, (long long)d->noise_state_bytes[r]);
    dpc_json_end(w);
    dpc_json_end(w);
}
