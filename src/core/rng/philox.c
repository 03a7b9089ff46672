/* philox.c — Philox4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel random numbers: as easy as
 * 1, 2, 3", SC 2011), root seeding, stream derivation and 64-bit words.
 * Known-answer vectors from Random123's kat_vectors are checked in tests/test_rng.c. */
#include "rng/chacha_impl.h"
#include "rng/gauss_impl.h"
#include "rng/philox_impl.h"
#include "dpcorr/rng.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

void dpc_philox4x32_10(uint32_t out[4], const uint32_t ctr[4], const uint32_t key[2])
{
    uint32_t c[4] = {ctr[0], ctr[1], ctr[2], ctr[3]};
    dpc__philox_block(c, key[0], key[1]);
    memcpy(out, c, sizeof c);
}

/* splitmix64 (Steele, Lea, Flood 2014): a bijective mix, so distinct seeds give distinct keys. */
static uint64_t splitmix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

void dpc_rng_seed(dpc_rng *rng, uint64_t seed)
{
    uint64_t k = splitmix64(seed);
    memset(rng, 0, sizeof *rng);
    rng->key[0] = (uint32_t)k;
    rng->key[1] = (uint32_t)(k >> 32);
    rng->seed = seed;
    rng->mode = DPC_RNG_SEEDED;
}

dpc_status dpc_rng_seed_os(dpc_rng *rng, dpc_error *err)
{
    uint32_t k[10]; /* Philox key (unused in secure mode, kept distinct) and the ChaCha20 key */
    size_t got = 0;
    while (got < sizeof k) {
        ssize_t r = getrandom((char *)k + got, sizeof k - got, 0);
        if (r < 0) {
            if (errno == EINTR) continue;
            return dpc_error_set(err, DPC_E_IO, "getrandom failed: %s", strerror(errno));
        }
        got += (size_t)r;
    }
    memset(rng, 0, sizeof *rng);
    rng->key[0] = k[0];
    rng->key[1] = k[1];
    memcpy(rng->skey, k + 2, sizeof rng->skey);
    memset(k, 0, sizeof k);
    rng->seed = 0;
    rng->mode = DPC_RNG_SECURE;
    return DPC_OK;
}

dpc_status dpc_rng_check(const dpc_rng *rng, dpc_error *err)
{
    if (!rng) return dpc_error_param(err, DPC_E_INVALID, "rng", "NULL");
    uint32_t any = 0;
    for (size_t i = 0; i < 8; i++) any |= rng->skey[i];
    if (rng->mode == DPC_RNG_SECURE) {
        if (!any)
            return dpc_error_param(err, DPC_E_INVALID, "rng.skey",
                                   "a secure generator with an all-zero key: never seeded "
                                   "(dpc_rng_seed_os); its noise would be public");
        return DPC_OK;
    }
    if (rng->mode != DPC_RNG_SEEDED)
        return dpc_error_param(err, DPC_E_INVALID, "rng.mode",
                               "%d is no generator mode (seeded 0 or secure 1): not made by "
                               "dpc_rng_seed or dpc_rng_seed_os",
                               (int)rng->mode);
    /* a seeded key is a function of the seed: a zeroed dpc_rng (seed 0, key 0) is not one */
    uint64_t k = splitmix64(rng->seed);
    if (rng->key[0] != (uint32_t)k || rng->key[1] != (uint32_t)(k >> 32) || any)
        return dpc_error_param(err, DPC_E_INVALID, "rng.key",
                               "the key is not seed %llu's: a generator not made by "
                               "dpc_rng_seed (never seeded, zeroed or edited)",
                               (unsigned long long)rng->seed);
    return DPC_OK;
}

const char *dpc_rng_mode_name(dpc_rng_mode mode)
{
    return mode == DPC_RNG_SECURE ? "secure" : "seeded";
}

dpc_rng_stream dpc_rng_stream_derive(const dpc_rng *rng, uint64_t stream_id)
{
    /* Domain tag 'STRM' in ctr[3] keeps derivation blocks apart from any data block of the
     * root key (data blocks are only ever drawn from derived keys). */
    dpc_rng_stream s;
    memset(&s, 0, sizeof s);
    if (rng->mode == DPC_RNG_SECURE) {
        /* the stream key is a ChaCha20 block of the root key: a PRF of the stream id */
        uint32_t nonce[3] = {(uint32_t)stream_id, (uint32_t)(stream_id >> 32), 0x5354524Du};
        uint32_t o[16];
        dpc_chacha20_block(o, rng->skey, 0, nonce);
        memcpy(s.skey, o, sizeof s.skey);
        s.secure = 1;
        return s;
    }
    uint32_t c[4] = {(uint32_t)stream_id, (uint32_t)(stream_id >> 32), 0u, 0x5354524Du};
    dpc__philox_block(c, rng->key[0], rng->key[1]);
    s.key[0] = c[0];
    s.key[1] = c[1];
    return s;
}

uint64_t dpc_rng_word(const dpc_rng_stream *s, uint64_t row, uint64_t index, uint32_t attempt)
{
    if (s->secure) {
        uint64_t w[8];
        dpc__chacha_words(w, s->skey, row, index, attempt);
        return w[index & 7];
    }
    uint32_t c[4];
    dpc__philox_ctr(c, row, index, attempt);
    dpc__philox_block(c, s->key[0], s->key[1]);
    return (index & 1) ? ((uint64_t)c[3] << 32 | c[2]) : ((uint64_t)c[1] << 32 | c[0]);
}

/* The reference: the blocks of dpc_rng_word (same counters, same word order), each computed
 * once for the indices it holds: index >> 3 for ChaCha20, index >> 1 for Philox. */
static void word_fill_portable(const dpc_rng_stream *s, uint64_t row, uint64_t index0,
                               uint32_t attempt, uint64_t *out, size_t n)
{
    size_t i = 0;
    while (i < n) {
        uint64_t index = index0 + i;
        if (s->secure) {
            uint64_t w[8];
            dpc__chacha_words(w, s->skey, row, index, attempt);
            for (unsigned j = (unsigned)(index & 7); j < 8 && i < n; j++) out[i++] = w[j];
        } else {
            uint32_t c[4];
            dpc__philox_ctr(c, row, index, attempt);
            dpc__philox_block(c, s->key[0], s->key[1]);
            if (!(index & 1)) out[i++] = (uint64_t)c[1] << 32 | c[0];
            if (i < n) out[i++] = (uint64_t)c[3] << 32 | c[2];
        }
    }
}

/* Attempt 0 (what the samplers draw) on an aligned middle part by the CPU's best level (the
 * Gaussian kernels' word pass: Philox from an even index in multiples of DPC__PHILOX_BULK,
 * ChaCha20 from a block boundary in multiples of the level's bulk); the head, the tail and
 * other attempts by the reference. The same words either way (tests/test_rng.c). */
void dpc__word_fill_isa(const dpc_rng_stream *s, uint64_t row, uint64_t index0, uint32_t attempt,
                        uint64_t *out, size_t n, dpc_isa isa)
{
    dpc_isa have = dpc_isa_detect();
    if (isa < DPC_ISA_SSE2 || isa > have) isa = have;
    if (attempt != 0) isa = DPC_ISA_SSE2;
    size_t bulk = !s->secure ? DPC__PHILOX_BULK
                  : isa == DPC_ISA_AVX512 ? DPC__CHACHA_BULK_AVX512 : DPC__CHACHA_BULK_AVX2;
    size_t align = s->secure ? 8 : 2, head = (size_t)((align - index0 % align) % align);
    if (isa == DPC_ISA_SSE2 || n < head + bulk) {
        word_fill_portable(s, row, index0, attempt, out, n);
        return;
    }
    word_fill_portable(s, row, index0, 0, out, head);
    size_t mid = (n - head) / bulk * bulk;
    if (isa == DPC_ISA_AVX512)
        dpc__word_fill_avx512(s, row, index0 + head, out + head, mid);
    else
        dpc__word_fill_avx2(s, row, index0 + head, out + head, mid);
    word_fill_portable(s, row, index0 + head + mid, 0, out + head + mid, n - head - mid);
}

void dpc_rng_word_fill(const dpc_rng_stream *s, uint64_t row, uint64_t index0, uint32_t attempt,
                       uint64_t *out, size_t n)
{
    dpc__word_fill_isa(s, row, index0, attempt, out, n, DPC_ISA_AUTO);
}

double dpc_rng_uniform(const dpc_rng_stream *s, uint64_t row, uint64_t index)
{
    return (double)(dpc_rng_word(s, row, index, 0) >> 11) * 0x1.0p-53;
}

uint64_t dpc_rng_below(const dpc_rng_stream *s, uint64_t row, uint64_t index, uint64_t bound)
{
    __extension__ typedef unsigned __int128 u128;
    if (bound <= 1) return 0;
    uint64_t threshold = (0 - bound) % bound; /* 2^64 mod bound */
    for (uint32_t a = 0;; a++) {
        u128 m = (u128)dpc_rng_word(s, row, index, a) * bound;
        if ((uint64_t)m >= threshold) return (uint64_t)(m >> 64);
        /* Rejected (probability < bound / 2^64): the next attempt word. Attempts wrap only
         * after 65536 consecutive rejections, which cannot happen for bound < 2^63. */
    }
}
