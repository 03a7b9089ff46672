/* dist.h — the distributed layer of the trainer (internal; design in doc/distributed.md).
 *
 * Everything is built on one primitive, dpc_transport.sendrecv (point to point, ordered per
 * pair of ranks), so every wait names its peer and the library needs no MPI. One process is the
 * degenerate case (size 1): no message is sent and the single-process code path runs.
 *
 * Collectives (every rank calls them in the same order; sizes are known to both sides):
 *   agree     statuses gathered to rank 0, the verdict (lowest failing rank, number failing) sent
 *             back; the failing rank's dpc_error is then sent to all:  24 (P-1) bytes when all
 *             succeed.
 *   root      rank 0's status and error to all (decisions rank 0 takes for the run: accounting,
 *             checkpoint I/O).
 *   chain     the running total of the chunk sums, in pieces of DPC__PIECE doubles, rank 0 ->
 *             1 -> ... -> P-1 (and P-1 -> 0 between rounds): 8 d bytes per link.
 *   scatter   rank P-1's finished total to the shard owners: 8 (d - d_{P-1}) bytes.
 *   allgather the updated shards around the ring: 8 d (P-1) bytes in total. */
#ifndef DPCORR_SRC_TRAIN_DIST_H
#define DPCORR_SRC_TRAIN_DIST_H

#include "dpcorr/train.h"

#define DPC__PIECE ((size_t)1 << 16) /* doubles per chain message */
#define DPC__ROUND_BYTES ((size_t)256 << 20) /* cap on one rank's chunk-sum buffers per round */

typedef struct dpc__dist {
    const dpc_transport *tp; /* NULL: one process */
    size_t rank, size;
    size_t *bound;           /* (size + 1) rank r owns coordinates [bound[r], bound[r + 1]) */
    size_t *threads;         /* (size) threads of each rank */
    size_t *state_bytes;     /* (size) noise-state bytes of each rank */
    uint64_t sent;           /* bytes this rank sent */
    uint64_t step_bytes;     /* bytes all ranks sent in the steps counted */
    size_t steps;            /* steps counted */
    size_t piece_len;        /* doubles per chain message: DPC__PIECE (tests: smaller) */
    double *piece;           /* (DPC__PIECE) receive buffer of the last rank of the chain */
} dpc__dist;

/* size > 1: the messages of the protocol are exchanged. */
static inline int dpc__dist_on(const dpc__dist *d) { return d->size > 1; }

/* Layout for nparams coordinates over tp's ranks (tp NULL: one rank); threads = this rank's. */
dpc_status dpc__dist_init(dpc__dist *d, const dpc_transport *tp, size_t nparams, size_t threads,
                          dpc_error *err);
void dpc__dist_free(dpc__dist *d);

dpc_status dpc__dist_sendrecv(dpc__dist *d, size_t to, const void *sbuf, size_t sbytes,
                              size_t from, void *rbuf, size_t rbytes, dpc_error *err);
dpc_status dpc__dist_agree(dpc__dist *d, dpc_status st, dpc_error *err);
dpc_status dpc__dist_root(dpc__dist *d, dpc_status st, dpc_error *err);
dpc_status dpc__dist_bcast(dpc__dist *d, size_t root, void *buf, size_t bytes, dpc_error *err);
/* Rank 0 receives `bytes` from rank `from` (rank `from` sends them); no-op for from == 0. */
dpc_status dpc__dist_to_root(dpc__dist *d, size_t from, void *buf, size_t bytes, dpc_error *err);

#endif
