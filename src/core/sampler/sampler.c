/* sampler.c — batch selection as a pure function of (key, step); see dpcorr/sampler.h.
 *
 * Permutations are random-access: a Feistel network on the smallest even-bit domain 2^w >= N
 * with cycle walking back into [0, N); FIXED and SHUFFLE use 6 rounds whose round function is
 * a generator word of the sampler stream, cyclic Poisson's groups 8 rounds of a 64-bit mixer
 * keyed once from the stream. pi(i) costs O(1) expected (the domain is < 4N), so a batch costs
 * O(B) and no permutation is ever stored. (Neither shuffling nor the groups are used for
 * privacy amplification, so a pseudorandom permutation is all that is needed.)
 *
 * The Poisson kinds draw a step's batch at the cost of the batch (scheme 2, see the header):
 * the size from a table of the binomial, then that many distinct uniform members; the bins of
 * balls-in-bins are drawn once and kept bucketed. */
#include "common/util.h"
#include "field/field_def.h"
#include "dpcorr/sampler.h"
#include "sampler/sampler_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FEISTEL_ROUNDS 6
#define ROW_PERM ((uint64_t)1 << 62) /* Feistel rows; Poisson draws use rows = step < 2^62 */
#define ROW_BINS ((uint64_t)3 << 61) /* balls-in-bins: the bin of example i is draw (ROW_BINS, i) */
#define ROW_GROUPS ((uint64_t)7 << 61) /* cyclic Poisson: the group permutation's round keys */
#define GROUP_ROUNDS 8
/* Bytes of Feistel round tables a FIXED / SHUFFLE sampler may keep (make_ftab) */
#define FTAB_MAX_BYTES ((size_t)64 << 20)

struct dpc_sampler {
    dpc_sampler_config cfg;
    dpc_rng_stream s;
    unsigned half;       /* Feistel half width in bits */
    size_t spe;          /* steps per epoch (FIXED, SHUFFLE) */
    /* FIXED, SHUFFLE: the Feistel round function of permutations [ftab0, ftab0 + nftab) as a
     * table, the same words as drawn each time (make_ftab): ftab[((perm - ftab0) ROUNDS + r)
     * 2^half + x] = word(ROW_PERM + perm, x, r) mod 2^half; NULL or other perms: drawn */
    uint16_t *ftab;
    uint64_t ftab0, nftab;
    size_t group_size;   /* CYCLIC_POISSON: floor(N / groups) */
    double q;            /* Poisson rate */
    /* Poisson kinds: each step draws from a population of pop (N, or the group size) */
    size_t pop;
    int dense;           /* q >= 1/DENSE_DIV: one exact draw per member of the population */
    dpc__size_table size; /* else the batch-size table (sampler_internal.h) */
    size_t cap;          /* capacity dpc_sampler_batch needs in idx */
    uint64_t gk[GROUP_ROUNDS]; /* CYCLIC_POISSON: round keys of the group permutation */
    /* BALLS_IN_BINS: the members of bin b are mem[off[b] .. off[b + 1]), increasing */
    size_t *off;
    uint32_t *mem32;     /* N <= 2^32 */
    size_t *mem;         /* else */
};

#define WORD_RUN 256 /* words drawn per dpc_rng_word_fill call (2 KiB on the stack) */
#define DENSE_DIV 16 /* from q = 1/16 on, one word per member: <= 16 words per expected member */

static size_t min_sz(size_t a, size_t b) { return a < b ? a : b; }

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

/* out[j] = dpc_rng_below(row, index0 + j, bound) for j < n, the words in runs. */
static void below_fill(const dpc_sampler *sp, uint64_t row, uint64_t index0, uint64_t bound,
                       size_t *out, size_t n)
{
    uint64_t w[WORD_RUN];
    for (size_t j0 = 0; j0 < n; j0 += WORD_RUN) {
        size_t m = min_sz(WORD_RUN, n - j0);
        dpc_rng_word_fill(&sp->s, row, index0 + j0, 0, w, m);
        for (size_t j = 0; j < m; j++) {
            uint64_t v;
            if (!below_first(w[j], bound, &v)) /* p < bound / 2^64: redrawn on attempts 1.. */
                v = dpc_rng_below(&sp->s, row, index0 + j0 + j, bound);
            out[j0 + j] = (size_t)v;
        }
    }
}

/* Ascending sort of n indices (quicksort, median of three, insertion sort below 16): the keys
 * are pseudorandom, so the expected O(n log n) holds. */
static void sort_idx(size_t *a, size_t n)
{
    while (n > 16) {
        size_t x = a[0], y = a[n / 2], z = a[n - 1];
        size_t p = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
        size_t i = 0, j = n - 1;
        for (;;) {
            while (a[i] < p) i++;
            while (a[j] > p) j--;
            if (i >= j) break;
            size_t t = a[i];
            a[i++] = a[j];
            a[j--] = t;
        }
        /* [0, j] <= p <= [j + 1, n): recurse on the smaller part, loop on the larger */
        if (j + 1 < n - j - 1) {
            sort_idx(a, j + 1);
            a += j + 1;
            n -= j + 1;
        } else {
            sort_idx(a + j + 1, n - j - 1);
            n = j + 1;
        }
    }
    for (size_t i = 1; i < n; i++) {
        size_t v = a[i], j = i;
        for (; j > 0 && a[j - 1] > v; j--) a[j] = a[j - 1];
        a[j] = v;
    }
}

/* Ascending sort of n keys below 2^bits with tmp (n) as scratch: least-significant-digit radix
 * sort, 8 bits a pass (3 passes below 2^24 examples), O(n + 256) a pass; short runs by
 * sort_idx. */
static void radix_idx(size_t *a, size_t n, size_t *tmp, unsigned bits)
{
    if (n < 64) {
        sort_idx(a, n);
        return;
    }
    size_t *src = a, *dst = tmp;
    for (unsigned sh = 0; sh < bits; sh += 8) {
        size_t cnt[257] = {0};
        for (size_t i = 0; i < n; i++) cnt[((src[i] >> sh) & 255) + 1]++;
        for (int d = 0; d < 256; d++) cnt[d + 1] += cnt[d];
        for (size_t i = 0; i < n; i++) dst[cnt[(src[i] >> sh) & 255]++] = src[i];
        size_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != a) memcpy(a, src, n * sizeof *a);
}

static unsigned bit_length(uint64_t v)
{
    unsigned b = 0;
    while (v) {
        b++;
        v >>= 1;
    }
    return b;
}

/* Removes repeats from a sorted run; returns the new length. */
static size_t unique_idx(size_t *a, size_t n)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!m || a[i] != a[m - 1]) a[m++] = a[i];
    return m;
}

static int in_sorted(const size_t *a, size_t n, size_t v)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (a[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && a[lo] == v;
}

/* K distinct positions of [0, pop), increasing, into idx[0, K); idx[K, 2K) is scratch. Draw d
 * (d = 0, 1, ...) is dpc_rng_below(t, 1 + d, pop); the set is the distinct values of the draws
 * up to the first round that completes K. Every rule here treats the labels alike (it depends
 * on the draws only through equalities), so the set is exactly uniform among the K-subsets,
 * which is the law of independent Bernoulli(q) draws given their number. */
static void distinct_positions(const dpc_sampler *sp, uint64_t t, size_t K, size_t *idx)
{
    size_t a = 0;
    uint64_t d = 1;
    while (a < K) {
        size_t m = K - a, *nw = a ? idx + K : idx;
        below_fill(sp, t, d, sp->pop, nw, m);
        d += m;
        if (a) sort_idx(nw, m); /* a few repeats redrawn */
        else radix_idx(nw, m, idx + K, bit_length(sp->pop - 1));
        m = unique_idx(nw, m);
        if (a) { /* keep the new ones not yet in [0, a), then merge from the back */
            size_t k = 0;
            for (size_t i = 0; i < m; i++)
                if (!in_sorted(idx, a, nw[i])) nw[k++] = nw[i];
            size_t i = a, j = k, w = a + k;
            while (j > 0) idx[--w] = (i > 0 && idx[i - 1] > nw[j - 1]) ? idx[--i] : nw[--j];
            m = k;
        }
        a += m;
    }
}

/* The batch size of step t, exactly Binomial(pop, B / pop): the inverse of its CDF at the uniform
 * whose words are (t, 0, 0), (t, 0, 1), ...; the first word decides alone at all but about
 * 3 nk 2^-64 of the steps, as the 64-bit table did (dpc__size_table_draw). */
static dpc_status draw_size(const dpc_sampler *sp, uint64_t t, size_t *size, dpc_error *err)
{
    int path;
    dpc__uniform u = {&sp->s, t, NULL, 0};
    dpc_status st = dpc__size_table_draw(&sp->size, &u, size, &path);
    if (st == DPC_E_NOMEM) return DPC__NOMEM(err, "exact batch-size comparison");
    if (st)
        return dpc_error_param(err, st, "t", "step %llu: the batch-size draw did not settle",
                               (unsigned long long)t);
    /* above the table: probability below 1e-40 a step (P(size) < 2^-140 P(B) there), an event
     * of the generator's words alone, refused rather than written past the capacity */
    if (*size > sp->size.k0 + sp->size.nk - 1)
        return dpc_error_param(err, DPC_E_RANGE, "t",
                               "step %llu: batch size %zu drawn beyond the capacity %zu",
                               (unsigned long long)t, *size, sp->size.k0 + sp->size.nk - 1);
    return DPC_OK;
}

/* Bins of balls-in-bins, once: bin(i) = dpc_rng_below(ROW_BINS, i, b) (exactly uniform), the
 * members of each bin in increasing order (a counting sort): O(N) words and memory. */
static dpc_status make_bins(dpc_sampler *sp, dpc_error *err)
{
    size_t N = sp->cfg.n_examples, b = sp->spe, chunk = 4096;
    size_t *bin = dpc__malloc_array(chunk, sizeof(size_t));
    sp->off = dpc__calloc(b + 1, sizeof(size_t));
    if (N <= ((size_t)1 << 32)) sp->mem32 = dpc__malloc_array(N, sizeof(uint32_t));
    else sp->mem = dpc__malloc_array(N, sizeof(size_t));
    if (!bin || !sp->off || (!sp->mem32 && !sp->mem)) {
        free(bin);
        return DPC__NOMEM(err, "balls-in-bins bins");
    }
    for (int pass = 0; pass < 2; pass++) { /* counts, then the members */
        for (size_t i0 = 0; i0 < N; i0 += chunk) {
            size_t m = min_sz(chunk, N - i0);
            below_fill(sp, ROW_BINS, i0, b, bin, m);
            for (size_t j = 0; j < m; j++) {
                if (!pass) {
                    sp->off[bin[j] + 1]++;
                    continue;
                }
                size_t at = sp->off[bin[j]]++;
                if (sp->mem32) sp->mem32[at] = (uint32_t)(i0 + j);
                else sp->mem[at] = i0 + j;
            }
        }
        if (!pass)
            for (size_t g = 0; g < b; g++) sp->off[g + 1] += sp->off[g];
        else /* the fill advanced off[g] to the start of g + 1 */
            for (size_t g = b; g > 0; g--) sp->off[g] = sp->off[g - 1];
    }
    sp->off[0] = 0;
    sp->cap = 1;
    for (size_t g = 0; g < b; g++)
        if (sp->off[g + 1] - sp->off[g] > sp->cap) sp->cap = sp->off[g + 1] - sp->off[g];
    free(bin);
    return DPC_OK;
}

/* Whether a Poisson draw over pop with B expected takes one exact Bernoulli(B / pop) per member
 * (no batch-size table, no departure from exact Poisson sampling). */
static int dense_rate(size_t pop, size_t B) { return (uint64_t)B * DENSE_DIV >= (uint64_t)pop; }

/* The Poisson kinds' draw over a population of pop with B expected: dense (one exact
 * Bernoulli(B / pop) per member) or the batch-size table. */
static dpc_status make_poisson(dpc_sampler *sp, size_t pop, dpc_error *err)
{
    size_t B = sp->cfg.batch;
    sp->pop = pop;
    sp->q = (double)B / (double)pop;
    sp->dense = dense_rate(pop, B);
    if (sp->dense) {
        sp->cap = pop;
        return DPC_OK;
    }
    dpc_status st = dpc__size_table_build(&sp->size, pop, B, err);
    if (st) return st;
    sp->cap = 2 * (sp->size.k0 + sp->size.nk - 1); /* the largest size, and as much scratch */
    if (sp->cap < 1) sp->cap = 1;
    return DPC_OK;
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
/* The round function: word(ROW_PERM + perm, x, r) mod 2^half, from the table when it holds perm
 * (one load instead of a generator block: the cost of a fixed-order or shuffled epoch). */
static uint64_t round_word(const dpc_sampler *sp, uint64_t perm, uint64_t x, uint32_t r,
                           uint64_t mask)
{
    if (sp->ftab && perm - sp->ftab0 < sp->nftab)
        return sp->ftab[(((perm - sp->ftab0) * FEISTEL_ROUNDS + r) << sp->half) + x];
    return dpc_rng_word(&sp->s, ROW_PERM + perm, x, r) & mask;
}

static uint64_t feistel(const dpc_sampler *sp, uint64_t perm, uint64_t x)
{
    unsigned h = sp->half;
    uint64_t mask = ((uint64_t)1 << h) - 1;
    uint64_t L = x >> h, R = x & mask;
    for (uint32_t r = 0; r < FEISTEL_ROUNDS; r++) {
        uint64_t f = round_word(sp, perm, R, r, mask);
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
        uint64_t f = round_word(sp, perm, L, r, mask);
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

/* Cyclic Poisson's public partition into groups (scheme 2): a Feistel network like the one
 * above whose round function is a 64-bit mixer (splitmix64's finalizer) of the half and a
 * round key drawn once from the stream, 8 rounds, cycle walking into [0, N). A member costs a
 * few ns instead of 6 generator blocks (the partition is public and needs no secrecy: it only
 * has to mix, e.g. data sorted by class). */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t gfeistel(const dpc_sampler *sp, uint64_t x, int inverse)
{
    unsigned h = sp->half;
    uint64_t mask = ((uint64_t)1 << h) - 1, L = x >> h, R = x & mask;
    for (int k = 0; k < GROUP_ROUNDS; k++) {
        if (!inverse) {
            uint64_t nl = R;
            R = L ^ (mix64(R ^ sp->gk[k]) & mask);
            L = nl;
        } else {
            uint64_t nr = L;
            L = R ^ (mix64(L ^ sp->gk[GROUP_ROUNDS - 1 - k]) & mask);
            R = nr;
        }
    }
    return (L << h) | R;
}

/* Position i of the group permutation -> example, and back. */
static size_t group_member(const dpc_sampler *sp, size_t i)
{
    uint64_t y = gfeistel(sp, i, 0);
    while (y >= sp->cfg.n_examples) y = gfeistel(sp, y, 0);
    return (size_t)y;
}

static size_t group_position(const dpc_sampler *sp, size_t x)
{
    uint64_t y = gfeistel(sp, x, 1);
    while (y >= sp->cfg.n_examples) y = gfeistel(sp, y, 1);
    return (size_t)y;
}

/* FIXED (permutation 0) and SHUFFLE (permutations 1 .. epochs): the Feistel round function as
 * tables of 2^half words per round, drawn by dpc_rng_word_fill (the same words as dpc_rng_word,
 * whole generator blocks at a time). The batches are unchanged, bit for bit; an index then costs
 * ~6 loads per cycle-walking step instead of ~6 generator blocks (doc/performance.md §8). Only
 * for half <= 16 (N <= 2^32) and within FTAB_MAX_BYTES (the first permutations of a long
 * shuffled run: the rest are drawn); 6 2^half words per permutation, about 6 sqrt(N) to
 * 12 sqrt(N) against an epoch's ~10 N drawn. */
static dpc_status make_ftab(dpc_sampler *s, dpc_error *err)
{
    size_t len = (size_t)1 << s->half, per = FEISTEL_ROUNDS * len * sizeof(uint16_t);
    if (s->half > 16) return DPC_OK;
    uint64_t first = s->cfg.kind == DPC_SAMPLER_FIXED ? 0 : 1;
    uint64_t n = s->cfg.kind == DPC_SAMPLER_FIXED ? 1 : (s->cfg.steps - 1) / s->spe + 1;
    if (n > FTAB_MAX_BYTES / per) n = FTAB_MAX_BYTES / per;
    if (n == 0) return DPC_OK;
    uint64_t *w = dpc__malloc_array(len, sizeof *w), mask = len - 1;
    s->ftab = dpc__malloc_array((size_t)n * FEISTEL_ROUNDS * len, sizeof *s->ftab);
    if (!w || !s->ftab) {
        free(w);
        return DPC__NOMEM(err, "sampler permutation tables");
    }
    for (uint64_t p = 0; p < n; p++)
        for (uint32_t r = 0; r < FEISTEL_ROUNDS; r++) {
            uint16_t *t = s->ftab + (p * FEISTEL_ROUNDS + r) * len;
            dpc_rng_word_fill(&s->s, ROW_PERM + first + p, 0, r, w, len);
            for (size_t x = 0; x < len; x++) t[x] = (uint16_t)(w[x] & mask);
        }
    free(w);
    s->ftab0 = first;
    s->nftab = n;
    return DPC_OK;
}

void dpc_sampler_free(dpc_sampler *s)
{
    if (!s) return;
    free(s->ftab);
    dpc__size_table_free(&s->size);
    free(s->off);
    free(s->mem32);
    free(s->mem);
    free(s);
}

/* The manual of dpc_sampler_config, one row per field in struct order (dpcorr/sampler.h). The
 * counts have no default (0: must be set); the kind names are dpc_sampler_kind_name's. */
#define SC(m) DPC_FIELD_AT(dpc_sampler_config, m)
static const dpc_field sc_fields[] = {
    {.name = "kind", .type = DPC_FIELD_ENUM, SC(kind), .def = DPC_SAMPLER_FIXED,
     DPC_FIELD_NAMES(names),
     .doc = "fixed, shuffle, poisson, cyclic-poisson or balls-in-bins (auto is a trainer's)"},
    {.name = "n_examples", .type = DPC_FIELD_SIZE, SC(n_examples), .lo = 1,
     .hi = 281474976710656.0, /* 2^48 */
     .flags = DPC_FIELD_UNSET_ZERO, .doc = "N: examples of the data set (0: must be set)"},
    {.name = "batch", .type = DPC_FIELD_SIZE, SC(batch), .lo = 1, .hi = INFINITY,
     .flags = DPC_FIELD_UNSET_ZERO | DPC_FIELD_HI_OPEN,
     .doc = "B <= N: batch size, exact (fixed, shuffle) or expected (0: must be set)"},
    {.name = "steps", .type = DPC_FIELD_SIZE, SC(steps), .lo = 1, .hi = INFINITY,
     .flags = DPC_FIELD_UNSET_ZERO | DPC_FIELD_HI_OPEN,
     .doc = "n: total steps of the run (0: must be set)"},
    {.name = "groups", .type = DPC_FIELD_SIZE, SC(groups), .flags = DPC_FIELD_NO_RANGE,
     .doc = "cyclic-poisson: groups (= min-separation) in [1, N]; other kinds: unused"},
};
#undef SC
static const dpc_field_table sc_table = DPC_FIELD_TABLE(dpc_sampler_config, sc_fields);

const dpc_field_table *dpc_sampler_config_fields(void) { return &sc_table; }

dpc_status dpc_sampler_new(dpc_sampler **out, const dpc_sampler_config *cfg, const dpc_rng *rng,
                           dpc_error *err)
{
    *out = NULL;
    if (!cfg) return dpc_error_param(err, DPC_E_INVALID, "cfg", "NULL");
    dpc_status rst = dpc_rng_check(rng, err); /* a never-seeded key makes public batches */
    if (rst) return rst;
    size_t N = cfg->n_examples;
    /* the index width's bound keeps its status (a size beyond the library, not a typo) */
    if (N > ((size_t)1 << 48))
        return dpc_error_param(err, DPC_E_RANGE, "n_examples", "%zu examples exceed 2^48", N);
    rst = dpc_field_check(&sc_table, cfg, err); /* kind; the counts' ranges */
    if (rst) return rst;
    if (N == 0) return dpc_error_param(err, DPC_E_INVALID, "n_examples", "the data set is empty");
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
    dpc_status st = DPC_OK;
    switch (cfg->kind) {
    case DPC_SAMPLER_POISSON: st = make_poisson(s, N, err); break;
    case DPC_SAMPLER_CYCLIC_POISSON:
        if (cfg->groups == 0 || cfg->groups > N) {
            st = dpc_error_param(err, DPC_E_INVALID, "groups", "must be in [1, %zu], got %zu", N,
                                 cfg->groups);
            break;
        }
        s->group_size = N / cfg->groups;
        if (cfg->batch > s->group_size) {
            st = dpc_error_param(err, DPC_E_INVALID, "batch",
                                 "%zu exceeds the group size %zu (N = %zu in %zu groups)",
                                 cfg->batch, s->group_size, N, cfg->groups);
            break;
        }
        for (int k = 0; k < GROUP_ROUNDS; k++) s->gk[k] = dpc_rng_word(&s->s, ROW_GROUPS, k, 0);
        st = make_poisson(s, s->group_size, err);
        break;
    case DPC_SAMPLER_BALLS_IN_BINS:
        s->q = 1.0;
        st = make_bins(s, err);
        break;
    default:
        s->q = 1.0;
        s->cap = cfg->batch;
        st = make_ftab(s, err);
        break;
    }
    if (st) {
        dpc_sampler_free(s);
        return st;
    }
    *out = s;
    return DPC_OK;
}

const dpc__size_table *dpc__sampler_size_table(const dpc_sampler *s)
{
    return s->size.nk ? &s->size : NULL;
}

const dpc_sampler_config *dpc_sampler_get_config(const dpc_sampler *s) { return &s->cfg; }

size_t dpc_sampler_max_batch(const dpc_sampler *s) { return s->cap; }

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

/* A Poisson kind's batch at step t, increasing. Dense: member j of the population is in when
 * dpc_rng_below(t, j, pop) < B (exactly Bernoulli(B / pop)). Else a size from the table at
 * word (t, 0) and that many distinct uniform members (distinct_positions). CYCLIC_POISSON's
 * members are the positions of its group in the public permutation. */
static dpc_status poisson_batch(const dpc_sampler *s, size_t t, size_t *idx, size_t *count,
                                dpc_error *err)
{
    size_t c = 0, B = s->cfg.batch;
    if (s->dense) {
        size_t v[WORD_RUN];
        for (size_t j0 = 0; j0 < s->pop; j0 += WORD_RUN) {
            size_t m = min_sz(WORD_RUN, s->pop - j0);
            below_fill(s, t, j0, s->pop, v, m);
            for (size_t j = 0; j < m; j++)
                if (v[j] < B) idx[c++] = j0 + j;
        }
    } else {
        dpc_status st = draw_size(s, t, &c, err);
        if (st) return st;
        distinct_positions(s, t, c, idx);
    }
    if (s->cfg.kind == DPC_SAMPLER_CYCLIC_POISSON) {
        size_t base = (t % s->cfg.groups) * s->group_size;
        for (size_t j = 0; j < c; j++) idx[j] = group_member(s, base + idx[j]);
        if (s->dense) sort_idx(idx, c); /* idx holds no scratch beyond the group's size */
        else radix_idx(idx, c, idx + c, bit_length(s->cfg.n_examples - 1));
    }
    *count = c;
    return DPC_OK;
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
    case DPC_SAMPLER_POISSON:
    case DPC_SAMPLER_CYCLIC_POISSON: {
        dpc_status st = poisson_batch(s, t, idx, &c, err);
        if (st) return st;
        break;
    }
    case DPC_SAMPLER_BALLS_IN_BINS: {
        size_t g = t % s->spe, a = s->off[g];
        c = s->off[g + 1] - a;
        if (s->mem32)
            for (size_t j = 0; j < c; j++) idx[j] = s->mem32[a + j];
        else
            memcpy(idx, s->mem + a, c * sizeof *idx);
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
        size_t pos = group_position(s, example), G = s->cfg.groups;
        if (pos < G * s->group_size)
            for (size_t t = pos / s->group_size; t < n; t += G) steps[c++] = t;
        break;
    }
    case DPC_SAMPLER_AUTO: break; /* refused by dpc_sampler_new */
    }
    *count = c;
    return DPC_OK;
}
