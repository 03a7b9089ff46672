/* dist_data.c — a training set held in shards by the ranks (doc/distributed.md, "Sharded
 * data"): rank r holds the contiguous rows [bound[r], bound[r + 1]) of the N rows
 * (dpc_data_load_spec_shard). Every rank draws the same batch (the sampler is a pure function of
 * the key and the step) and computes the same chunks as with whole copies; before each round it
 * receives, from their owners, the rows of the batch positions of its share of the round, and
 * sends the owners' rows the other ranks' shares need. The chunks then see the same rows in the
 * same positions, so every sum, and the parameters, are bit-identical to one process. Memory per
 * rank: N / P rows plus three buffers of one round's share of the batch.
 *
 * Setup: the ranks' row ranges are gathered and must tile [0, N) in rank order; the content hash
 * of the whole set (checkpoints, the run fingerprint) is computed by passing the running hash
 * rank to rank, features then targets, which is dpc_dataset_hash of the whole set. */
#include "common/util.h"
#include "train/train_internal.h"

#include <string.h>

#define NONE DPC_RANK_NONE

/* Rank 0 gathers every rank's (shard?, first row, rows, whole rows) and checks the tiling; the
 * verdict and the row bounds go to every rank. */
static dpc_status share_rows(dpc_trainer *tr, dpc_error *err)
{
    dpc__dist *d = &tr->dist;
    size_t P = d->size;
    const dpc_dataset *ds = tr->train;
    uint64_t mine[4] = {ds->shard_total != 0, ds->shard_first, ds->n, dpc_dataset_rows(ds)};
    uint64_t *all = dpc__calloc(P + 3, sizeof(uint64_t)); /* bounds (P+1), bad rank+1, why */
    dpc_status st = dpc__dist_agree(d, all ? DPC_OK : DPC__NOMEM(err, "row bounds"), err);
    if (st) {
        free(all);
        return st;
    }
    uint64_t v[4], *bad = all + P + 1;
    for (size_t s = 0; s < P && !st; s++) {
        if (d->rank != 0 && d->rank != s) continue;
        memcpy(v, mine, sizeof v);
        if (s && (st = dpc__dist_to_root(d, s, v, sizeof v, err))) break;
        if (d->rank != 0) continue;
        all[s + 1] = all[s] + v[2];
        if (!bad[0] && (v[0] != mine[0] || v[3] != mine[3] || (v[0] && v[1] != all[s]))) {
            bad[0] = s + 1;
            bad[1] = v[0] != mine[0] ? 1 : v[3] != mine[3] ? 2 : 3;
        }
    }
    if (!st && d->rank == 0 && !bad[0] && mine[0] && all[P] != mine[3]) bad[0] = P, bad[1] = 4;
    if (!st) st = dpc__dist_bcast(d, 0, all, (P + 3) * sizeof(uint64_t), err);
    if (!st && bad[0]) {
        static const char *const why[] = {"", "holds a shard where rank 0 does not, or not where "
                                          "it does (every rank or none)", "has a shard of "
                                          "another set (other number of rows)", "holds rows "
                                          "that do not follow the previous rank's",
                                          "and the others do not hold every row"};
        st = dpc_error_param(err, DPC_E_STATE, "train", "rank %llu %s (shards are rank r's rows "
                             "[floor(N r / P), floor(N (r + 1) / P)): dpc_data_load_spec_shard)",
                             (unsigned long long)(bad[0] - 1), why[bad[1] < 5 ? bad[1] : 0]);
    }
    if (!st && mine[0]) {
        tr->row_bound = dpc__calloc(P + 1, sizeof(size_t));
        if (!tr->row_bound) st = DPC__NOMEM(err, "row bounds");
        for (size_t s = 0; !st && s <= P; s++) tr->row_bound[s] = (size_t)all[s];
    }
    free(all);
    return st;
}

/* The content hash of the whole set, rank to rank: features, then targets, then the end. */
static dpc_status chain_hash(dpc_trainer *tr, dpc_error *err)
{
    dpc__dist *d = &tr->dist;
    const dpc_dataset *ds = tr->train;
    size_t P = d->size, r = d->rank;
    uint64_t h = dpc_dataset_hash_begin(dpc_dataset_rows(ds), ds->d, ds->n_classes);
    dpc_status st = DPC_OK;
    for (int pass = 0; pass < 2 && !st; pass++) {
        if (r > 0 || pass == 1)
            st = dpc__dist_sendrecv(d, NONE, NULL, 0, r > 0 ? r - 1 : P - 1, &h, sizeof h, err);
        if (st) break;
        h = pass == 0 ? dpc_dataset_hash_add(h, ds->x, ds->n * ds->d)
                      : dpc_dataset_hash_add(h, ds->y, ds->n);
        if (r + 1 < P || pass == 0)
            st = dpc__dist_sendrecv(d, (r + 1) % P, &h, sizeof h, NONE, NULL, 0, err);
    }
    if (!st) h = dpc_dataset_hash_end(h);
    if (!st) st = dpc__dist_bcast(d, P - 1, &h, sizeof h, err);
    if (!st) tr->train_hash = h;
    return st;
}

dpc_status dpc__dist_data_setup(dpc_trainer *tr, dpc_error *err)
{
    dpc_status st = share_rows(tr, err);
    if (st || !tr->row_bound) return st;
    if ((st = chain_hash(tr, err))) return st;
    size_t rows = tr->C * tr->cfg.chunk, w = tr->D + 1, n;
    if (!dpc__mul_ok(rows, w, &n)) return DPC__NOMEM(err, "batch rows");
    tr->rows = dpc__malloc_array(n, sizeof(double));
    tr->rows_out = dpc__malloc_array(n, sizeof(double));
    tr->rows_in = dpc__malloc_array(n, sizeof(double));
    tr->rows_cap = rows;
    if (!tr->rows || !tr->rows_out || !tr->rows_in) return DPC__NOMEM(err, "batch rows");
    return DPC_OK;
}

/* The rank holding training row i. */
static size_t owner_of(const dpc_trainer *tr, size_t i)
{
    size_t lo = 0, hi = tr->dist.size; /* bound[lo] <= i < bound[hi] */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (tr->row_bound[mid] <= i) lo = mid;
        else hi = mid;
    }
    return lo;
}

/* Batch positions [*p0, *p1) of rank s's share of the round's chunks [g0, g1). */
static void share_positions(const dpc_trainer *tr, size_t s, size_t g0, size_t g1, size_t *p0,
                            size_t *p1)
{
    dpc__dist v = tr->dist;
    size_t a, b, ch = tr->cfg.chunk;
    v.rank = s;
    dpc__dist_share(&v, g1 - g0, &a, &b);
    *p0 = (g0 + a) * ch;
    *p1 = (g0 + b) * ch < tr->count ? (g0 + b) * ch : tr->count;
    if (*p0 > *p1) *p0 = *p1;
}

/* Training row i (held here) with its target after the features: D + 1 doubles at dst. */
static void put_row(const dpc_trainer *tr, size_t i, double *dst)
{
    size_t local = i - tr->row_bound[tr->dist.rank], D = tr->D;
    memcpy(dst, tr->train->x + local * D, D * sizeof(double));
    dst[D] = tr->train->y[local];
}

dpc_status dpc__dist_fetch_rows(dpc_trainer *tr, size_t g0, size_t g1, dpc_error *err)
{
    if (!tr->row_bound) return DPC_OK;
    dpc__dist *d = &tr->dist;
    size_t P = d->size, r = d->rank, w = tr->D + 1, a, b;
    for (size_t s = 0; s < P; s++) { /* every rank refuses alike, before any exchange */
        share_positions(tr, s, g0, g1, &a, &b);
        if (b - a > tr->rows_cap) /* a share is at most C chunks (the buffers' size) */
            return dpc_error_set(err, DPC_E_STATE, "trainer: rank %zu's share of the round has "
                                 "%zu batch rows, the row buffers %zu", s, b - a, tr->rows_cap);
    }
    share_positions(tr, r, g0, g1, &a, &b);
    tr->rows_base = a;
    for (size_t i = a; i < b; i++)
        if (owner_of(tr, tr->idx[i]) == r) put_row(tr, tr->idx[i], tr->rows + (i - a) * w);
    for (size_t k = 1; k < P; k++) {
        size_t to = (r + k) % P, from = (r + P - k) % P, ta, tb, ms = 0, mr = 0;
        share_positions(tr, to, g0, g1, &ta, &tb);
        for (size_t i = ta; i < tb; i++)
            if (owner_of(tr, tr->idx[i]) == r) put_row(tr, tr->idx[i], tr->rows_out + ms++ * w);
        for (size_t i = a; i < b; i++) mr += owner_of(tr, tr->idx[i]) == from;
        dpc_status st = dpc__dist_sendrecv(d, ms ? to : NONE, tr->rows_out, ms * w * sizeof(double),
                                           mr ? from : NONE, tr->rows_in,
                                           mr * w * sizeof(double), err);
        if (st) return st;
        for (size_t i = a, j = 0; i < b; i++)
            if (owner_of(tr, tr->idx[i]) == from)
                memcpy(tr->rows + (i - a) * w, tr->rows_in + j++ * w, w * sizeof(double));
    }
    return DPC_OK;
}
