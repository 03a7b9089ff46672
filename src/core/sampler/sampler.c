/* sampler.c — batch selection as a pure function of (key, step); see dpcorr/sampler.h.
 *
 * Permutations are random-access: a 6-round Feistel network on the smallest even-bit domain
 * 2^w >= N whose round function is Philox on the sampler stream, with cycle walking back into
 * [0, N). pi(i) costs O(1) expected (the domain is < 4N), so a batch costs O(B) and no
 * permutation is ever stored. (Shuffling is not used for privacy amplification, so a
 * pseudorandom permutation is all that is needed.) */
#include "common/util.h"
#include "dpcorr/sampler.h"

#include <stdlib.h>
#include <string.h>

#define FEISTEL_ROUNDS 6
#define ROW_PERM ((uint64_t)1 << 62) /* Feistel rows; Poisson draws use rows = step < 2^62 */
#define ROW_BINS ((uint64_t)3 << 61) /* balls-in-bins: the bin of example i is draw (ROW_BINS, i) */

struct dpc_sampler {
    dpc_sampler_config cfg;
    dpc_rng_stream s;
    unsigned half;       /* Feistel half width in bits */
    size_t spe;          /* steps per epoch (FIXED, SHUFFLE) */
    size_t group_size;   /* CYCLIC_POISSON: floor(N / groups) */
    double q;            /* Poisson rate */
};

#define WORD_RUN 256 /* words drawn per dpc_rng_word_fill call (2 KiB on the stack) */

static size_t min_sz(size_t a, size_t b) { return a < b ? a : b; }

/* dpc_rng_uniform's map from a word to [0, 1) (53 bits). */
static double word_uniform(uint64_t w) { return (double)(w >> 11) * 0x1.0p-53; }

/* dpc_rng_below's first attempt on word w: 1 and *out when accepted, 0 when rejected. */
static int below_first(uint64_t w, uint64_t bound, uint64_t *out)
{
    __extension__ typedef unsigned __int128 u128;
    if (bound <= 1) {
        *out = 0;
        return 1;
    }
    u128 m = (u128)w * bound;
    if ((uint64_t)m < (0 - bound) % bound) return 0;
    *out = (uint64_t)(m >> 64);
    return 1;
}

static const char *const names[] = {"fixed", "shuffle", "poisson", "cyclic-poisson",
                                    "balls-in-bins"};

const char *dpc_sampler_kind_name(dpc_sampler_kind k)
{
    if (k == DPC_SAMPLER_AUTO) return "auto";
    return (unsigned)k < 5 ? names[k] : "unknown";
}

dpc_status dpc_sampler_kind_parse(const char *s, dpc_sampler_kind *out, dpc_error *err)
{
    for (int k = 0; k < 5; k++)
        if (s && !strcmp(s, names[k])) {
            *out = (dpc_sampler_kind)k;
            return DPC_OK;
        }
    if (s && !strcmp(s, "auto")) {
        *out = DPC_SAMPLER_AUTO;
        return DPC_OK;
    }
    return dpc_error_param(err, DPC_E_INVALID, "sampler",
                           "unknown '%s' (expected auto, fixed, shuffle, poisson, "
                           "cyclic-poisson or balls-in-bins)",
                           s ? s : "(null)");
}

/* Feistel permutation of [0, 2^(2 half)) for permutation id `perm`. */
static uint64_t feistel(const dpc_sampler *sp, uint64_t perm, uint64_t x)
{
    unsigned h = sp->half;
    uint64_t mask = ((uint64_t)1 << h) - 1;
    uint64_t L = x >> h, R = x & mask;
    for (uint32_t r = 0; r < FEISTEL_ROUNDS; r++) {
        uint64_t f = dpc_rng_word(&sp->s, ROW_PERM + perm, R, r) & mask;
        uint64_t nl = R;
        R = L ^ f;
        L = nl;
    }
    return (L << h) | R;
}

/* pi_perm(i) in [0, N) for i in [0, N): cycle walking keeps it a bijection of [0, N). */
static size_t permute(const dpc_sampler *sp, uint64_t perm, size_t i)
{
    uint64_t y = feistel(sp, perm, i);
    while (y >= sp->cfg.n_examples) y = feistel(sp, perm, y);
    return (size_t)y;
}

/* The inverse of feistel: the rounds undone in reverse order. */
static uint64_t feistel_inv(const dpc_sampler *sp, uint64_t perm, uint64_t y)
{
    unsigned h = sp->half;
    uint64_t mask = ((uint64_t)1 << h) - 1;
    uint64_t L = y >> h, R = y & mask;
    for (uint32_t r = FEISTEL_ROUNDS; r-- > 0;) {
        uint64_t f = dpc_rng_word(&sp->s, ROW_PERM + perm, L, r) & mask;
        uint64_t nr = L;
        L = R ^ f;
        R = nr;
    }
    return (L << h) | R;
}

/* The position i with permute(perm, i) = x: cycle walking undone by walking back. */
static size_t unpermute(const dpc_sampler *sp, uint64_t perm, size_t x)
{
    uint64_t y = feistel_inv(sp, perm, x);
    while (y >= sp->cfg.n_examples) y = feistel_inv(sp, perm, y);
    return (size_t)y;
}

void dpc_sampler_free(dpc_sampler *s) { free(s); }

dpc_status dpc_sampler_new(dpc_sampler **out, const dpc_sampler_config *cfg, const dpc_rng *rng,
                           dpc_error *err)
{
    *out = NULL;
    if (!cfg) return dpc_error_param(err, DPC_E_INVALID, "cfg", "NULL");
    dpc_status rst = dpc_rng_check(rng, err); /* a never-seeded key makes public batches */
    if (rst) return rst;
    if ((unsigned)cfg->kind > DPC_SAMPLER_BALLS_IN_BINS)
        return dpc_error_param(err, DPC_E_INVALID, "kind", "unknown value %d", (int)cfg->kind);
    size_t N = cfg->n_examples;
    if (N == 0) return dpc_error_param(err, DPC_E_INVALID, "n_examples", "the data set is empty");
    if (N > ((size_t)1 << 48))
        return dpc_error_param(err, DPC_E_RANGE, "n_examples", "%zu examples exceed 2^48", N);
    if (cfg->batch == 0) return dpc_error_param(err, DPC_E_INVALID, "batch", "must be >= 1");
    if (cfg->batch > N)
        return dpc_error_param(err, DPC_E_INVALID, "batch",
                               "%zu is larger than the data (%zu examples)", cfg->batch, N);
    if (cfg->steps == 0) return dpc_error_param(err, DPC_E_INVALID, "steps", "must be >= 1");
    dpc_sampler *s = calloc(1, sizeof *s);
    if (!s) return DPC__NOMEM(err, "sampler");
    s->cfg = *cfg;
    s->s = dpc_rng_stream_derive(rng, DPC_STREAM_ID(DPC_STREAM_SAMPLER, 0));
    unsigned w = 2;
    while (((uint64_t)1 << w) < N) w += 2;
    s->half = w / 2;
    s->spe = N / cfg->batch;
    switch (cfg->kind) {
    case DPC_SAMPLER_POISSON: s->q = (double)cfg->batch / (double)N; break;
    case DPC_SAMPLER_CYCLIC_POISSON:
        if (cfg->groups == 0 || cfg->groups > N) {
            free(s);
            return dpc_error_param(err, DPC_E_INVALID, "groups", "must be in [1, %zu], got %zu", N,
                                   cfg->groups);
        }
        s->group_size = N / cfg->groups;
        if (cfg->batch > s->group_size) {
            size_t gs = s->group_size;
            free(s);
            return dpc_error_param(err, DPC_E_INVALID, "batch",
                                   "%zu exceeds the group size %zu (N = %zu in %zu groups)",
                                   cfg->batch, gs, N, cfg->groups);
        }
        s->q = (double)cfg->batch / (double)s->group_size;
        break;
    default: s->q = 1.0; break;
    }
    *out = s;
    return DPC_OK;
}

const dpc_sampler_config *dpc_sampler_get_config(const dpc_sampler *s) { return &s->cfg; }

size_t dpc_sampler_max_batch(const dpc_sampler *s)
{
    switch (s->cfg.kind) {
    case DPC_SAMPLER_POISSON:
    case DPC_SAMPLER_BALLS_IN_BINS: return s->cfg.n_examples;
    case DPC_SAMPLER_CYCLIC_POISSON: return s->group_size;
    default: return s->cfg.batch;
    }
}

void dpc_sampler_describe(const dpc_sampler *s, dpc_sampler_desc *d)
{
    memset(d, 0, sizeof *d);
    size_t n = s->cfg.steps;
    d->q = s->q;
    switch (s->cfg.kind) {
    case DPC_SAMPLER_FIXED:
        d->part.kind = DPC_PART_CYCLIC;
        d->part.b = s->spe;
        d->part.k = dpc__ceil_div(n, s->spe);
        d->steps_per_epoch = s->spe;
        d->expected_batch = (double)s->cfg.batch;
        break;
    case DPC_SAMPLER_SHUFFLE:
        d->part.kind = DPC_PART_MINSEP;
        d->part.b = 1;
        d->part.k = dpc__ceil_div(n, s->spe);
        d->steps_per_epoch = s->spe;
        d->expected_batch = (double)s->cfg.batch;
        break;
    case DPC_SAMPLER_POISSON:
        /* any step can include the example: the cyclic pattern with period 1 */
        d->part.kind = DPC_PART_CYCLIC;
        d->part.b = 1;
        d->part.k = n;
        d->poisson = 1;
        d->opportunities = n;
        d->steps_per_epoch = s->spe ? s->spe : 1;
        d->expected_batch = (double)s->cfg.batch;
        break;
    case DPC_SAMPLER_BALLS_IN_BINS:
        /* one step per epoch at the example's bin: the cyclic pattern with period b = spe */
        d->part.kind = DPC_PART_CYCLIC;
        d->part.b = s->spe;
        d->part.k = (n + s->spe - 1) / s->spe;
        d->balls_in_bins = 1;
        d->steps_per_epoch = s->spe;
        d->expected_batch = (double)s->cfg.n_examples / (double)s->spe;
        break;
    case DPC_SAMPLER_CYCLIC_POISSON:
        d->part.kind = DPC_PART_CYCLIC;
        d->part.b = s->cfg.groups;
        d->part.k = dpc__ceil_div(n, s->cfg.groups);
        d->poisson = 1;
        d->opportunities = d->part.k;
        d->steps_per_epoch = s->spe ? s->spe : 1; /* N/B steps process N examples on average */
        d->expected_batch = (double)s->cfg.batch;
        break;
    case DPC_SAMPLER_AUTO: break; /* refused by dpc_sampler_new */
    }
}

dpc_status dpc_sampler_batch(const dpc_sampler *s, size_t t, size_t *idx, size_t *count,
                             dpc_error *err)
{
    if (t >= s->cfg.steps)
        return dpc_error_param(err, DPC_E_RANGE, "t", "step %zu beyond the %zu steps of the run", t,
                               s->cfg.steps);
    size_t B = s->cfg.batch, c = 0;
    switch (s->cfg.kind) {
    case DPC_SAMPLER_FIXED:
    case DPC_SAMPLER_SHUFFLE: {
        uint64_t perm = s->cfg.kind == DPC_SAMPLER_FIXED ? 0 : 1 + t / s->spe;
        size_t pos0 = (t % s->spe) * B;
        for (size_t j = 0; j < B; j++) idx[c++] = permute(s, perm, pos0 + j);
        break;
    }
    case DPC_SAMPLER_POISSON: {
        /* example i is in batch t when dpc_rng_uniform(t, i) < q; the words come in runs
         * (dpc_rng_word_fill: each block once), the same bits as word by word */
        uint64_t w[WORD_RUN];
        for (size_t i0 = 0; i0 < s->cfg.n_examples; i0 += WORD_RUN) {
            size_t m = min_sz(WORD_RUN, s->cfg.n_examples - i0);
            dpc_rng_word_fill(&s->s, t, i0, 0, w, m);
            for (size_t j = 0; j < m; j++)
                if (word_uniform(w[j]) < s->q) idx[c++] = i0 + j;
        }
        break;
    }
    case DPC_SAMPLER_BALLS_IN_BINS: {
        uint64_t bin = t % s->spe, w[WORD_RUN];
        for (size_t i0 = 0; i0 < s->cfg.n_examples; i0 += WORD_RUN) {
            size_t m = min_sz(WORD_RUN, s->cfg.n_examples - i0);
            dpc_rng_word_fill(&s->s, ROW_BINS, i0, 0, w, m);
            for (size_t j = 0; j < m; j++) {
                /* bin of example i: exactly uniform on [0, b) (Lemire's method, no modulo
                 * bias: the accountant's dominating pair gives every bin probability 1/b);
                 * attempt 0 from the run, a rejected one (probability < b / 2^64) retried
                 * by dpc_rng_below, which redraws attempt 0 identically and goes on */
                uint64_t bi;
                if (!below_first(w[j], s->spe, &bi))
                    bi = dpc_rng_below(&s->s, ROW_BINS, i0 + j, s->spe);
                if (bi == bin) idx[c++] = i0 + j;
            }
        }
        break;
    }
    case DPC_SAMPLER_CYCLIC_POISSON: {
        size_t g = t % s->cfg.groups, m = s->group_size;
        for (size_t j = 0; j < m; j++) {
            size_t ex = permute(s, 0, g * m + j);
            if (dpc_rng_uniform(&s->s, t, ex) < s->q) idx[c++] = ex;
        }
        break;
    }
    case DPC_SAMPLER_AUTO: break; /* refused by dpc_sampler_new */
    }
    *count = c;
    return DPC_OK;
}

dpc_status dpc_sampler_opportunities(const dpc_sampler *s, size_t example, size_t *steps,
                                     size_t *count, int *certain, dpc_error *err)
{
    size_t N = s->cfg.n_examples, n = s->cfg.steps, B = s->cfg.batch, c = 0;
    if (example >= N)
        return dpc_error_param(err, DPC_E_INVALID, "example", "%zu is not below N = %zu", example,
                               N);
    *certain = s->cfg.kind == DPC_SAMPLER_FIXED || s->cfg.kind == DPC_SAMPLER_SHUFFLE;
    switch (s->cfg.kind) {
    case DPC_SAMPLER_FIXED: {
        size_t pos = unpermute(s, 0, example);
        if (pos < s->spe * B)
            for (size_t t = pos / B; t < n; t += s->spe) steps[c++] = t;
        break;
    }
    case DPC_SAMPLER_SHUFFLE:
        for (size_t e = 0; e * s->spe < n; e++) {
            size_t pos = unpermute(s, 1 + e, example), t = e * s->spe + pos / B;
            if (pos < s->spe * B && t < n) steps[c++] = t;
        }
        break;
    case DPC_SAMPLER_POISSON:
    case DPC_SAMPLER_BALLS_IN_BINS: /* the bin is secret: any step, see the header */
        for (size_t t = 0; t < n; t++) steps[c++] = t;
        break;
    case DPC_SAMPLER_CYCLIC_POISSON: {
        size_t pos = unpermute(s, 0, example), G = s->cfg.groups;
        if (pos < G * s->group_size)
            for (size_t t = pos / s->group_size; t < n; t += G) steps[c++] = t;
        break;
    }
    case DPC_SAMPLER_AUTO: break; /* refused by dpc_sampler_new */
    }
    *count = c;
    return DPC_OK;
}
