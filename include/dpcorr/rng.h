/* dpcorr/rng.h — counter-based random numbers (Philox4x32-10) and an exact Gaussian sampler.
 *
 * Every random value in dpcorr is a pure function of
 *
 *     (root key, stream, row, index)        row = step (or tree node), index = coordinate
 *
 * so noise can be regenerated (replay), checkpointed as a counter, and split across threads
 * with no communication and identical results. There is no sequential generator state.
 *
 *   dpc_rng          the root: a 64-bit Philox key plus how it was obtained (seeded or secure).
 *   dpc_rng_stream   a derived, independent key for one purpose (noise, sampling, init, ...).
 *
 * Example:
 *     dpc_rng rng;
 *     if (dpc_rng_seed_os(&rng, &err)) ...                   // private releases: secure mode
 *     dpc_rng_seed(&rng, 42);                                // experiments only: seeded mode
 *     dpc_rng_stream s = dpc_rng_stream_derive(&rng, DPC_STREAM_NOISE);
 *     double z[100];
 *     dpc_rng_gaussian_fill(&s, step, 0, z, 100);            // z[j] = N(0,1) at (step, j)
 *     assert(z[7] == dpc_rng_gaussian(&s, step, 7));         // pure: same value, any order
 *
 * Counter layout (one Philox block = 128 bits = two 64-bit words; word h in {0,1} of block
 * (row, index>>1, attempt) belongs to index with (index & 1) == h):
 *     ctr[0] = (index >> 1)        low 32 bits
 *     ctr[1] = row                 low 32 bits
 *     ctr[2] = row                 high 32 bits
 *     ctr[3] = ((index >> 33) << 16) | attempt      attempt < 2^16, index < 2^49
 * Word attempt = 0 serves the fast path of every sampler; samplers that reject (ziggurat)
 * continue with attempt = 1, 2, ... of the same (row, index).
 *
 * Gaussian method: ziggurat (Marsaglia & Tsang 2000) with 256 layers, 52-bit uniforms,
 * Marsaglia's exact exponential-rejection tail (1964) beyond r = 3.6541528853610088.
 * The method is exact up to floating-point resolution: no CLT or polynomial approximation.
 * Tail: unbounded in principle; the 53-bit uniform feeding the tail caps |z| at about
 * r + 36.74/r ≈ 13.7, a region of probability < 1e-42. See doc/mechanisms.md for the
 * floating-point caveats (Mironov 2012) and why this is acceptable for our threat model.
 *
 * Security: use secure mode (dpc_rng_seed_os) for any release that must be private: with seeded
 * mode anyone who knows the seed regenerates the noise and subtracts it. The dpcorr tool is
 * secure by default and warns when --seed asks for seeded mode. Seeded mode uses Philox4x32-10, a statistically strong (BigCrush-passing)
 * counter-based generator with a 64-bit key: right for experiments, which are reproducible
 * and recorded in every report, but not a cryptographic generator. Secure mode draws a 256-bit
 * key from the OS (getrandom) and generates every word with ChaCha20 (RFC 8439) instead, a
 * cryptographic PRF, with the same addressing: the 64-bit word (row, index, attempt) is word
 * index & 7 of the ChaCha20 block with counter index >> 3 and nonce
 * (row low, row high, ((index >> 35) << 16) | attempt); stream keys are ChaCha20 blocks of the
 * root key. Same samplers on top, so secure noise has the same distribution, is as
 * replayable given the key, and is unpredictable without it.
 */
#ifndef DPCORR_RNG_H
#define DPCORR_RNG_H

#include "dpcorr/common.h"
#include "dpcorr/isa.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dpc_rng_mode {
    DPC_RNG_SEEDED = 0, /* key derived from a user seed: reproducible, for experiments only */
    DPC_RNG_SECURE = 1  /* key from getrandom(2): unpredictable, not reproducible */
} dpc_rng_mode;

/* Root generator: plain value type (no heap), copyable. */
typedef struct dpc_rng {
    uint32_t key[2];   /* Philox key (seeded mode) */
    uint64_t seed;     /* the user seed in seeded mode; 0 in secure mode */
    dpc_rng_mode mode;
    uint32_t skey[8];  /* secure mode: the ChaCha20 key (secret: never print it); else 0 */
} dpc_rng;

/* A derived stream: an independent key for one purpose (Philox, or ChaCha20 when secure). */
typedef struct dpc_rng_stream {
    uint32_t key[2];  /* Philox key (seeded mode) */
    uint32_t secure;  /* 1: words come from ChaCha20 with skey */
    uint32_t skey[8]; /* ChaCha20 key (secure mode) */
} dpc_rng_stream;

/* Stream purposes. A stream id is (purpose << 32) | index, so each purpose has 2^32 streams
 * and changing, e.g., batch sampling never shifts the noise. */
enum {
    DPC_STREAM_NOISE = 1,    /* mechanism noise Z */
    DPC_STREAM_SAMPLER = 2,  /* Poisson / shuffle batch selection */
    DPC_STREAM_INIT = 3,     /* model initialisation */
    DPC_STREAM_DATA = 4,     /* synthetic data generation */
    DPC_STREAM_TEST = 5,     /* tests and benchmarks */
    DPC_STREAM_AUDIT = 6,    /* privacy audits: canary inclusion and design (audit.h) */
    DPC_STREAM_STAT = 7,     /* private data statistics (features.h) */
    DPC_STREAM_USER = 16     /* first id free for applications */
};
#define DPC_STREAM_ID(purpose, index) (((uint64_t)(purpose) << 32) | (uint64_t)(uint32_t)(index))

/* The Philox4x32-10 block function (Salmon et al. 2011): out = Philox(ctr, key).
 * Verified against the Random123 known-answer vectors in tests/test_rng.c. */
DPC_API void dpc_philox4x32_10(uint32_t out[4], const uint32_t ctr[4], const uint32_t key[2]);

/* The ChaCha20 block function (RFC 8439, section 2.3): out = state after 20 rounds plus the
 * input state for (key, 32-bit block counter, 96-bit nonce); and its quarter round on
 * (a, b, c, d) in place (section 2.1). Verified against the RFC's known answers. */
DPC_API void dpc_chacha20_block(uint32_t out[16], const uint32_t key[8], uint32_t counter,
                                const uint32_t nonce[3]);
DPC_API void dpc_chacha20_quarter_round(uint32_t s[4]);

/* Seeded mode: the key is a fixed bijective mix (splitmix64) of seed. Never fails. */
DPC_API void dpc_rng_seed(dpc_rng *rng, uint64_t seed);

/* Secure mode: a 256-bit ChaCha20 key (32 bytes) from getrandom(2). DPC_E_IO if the OS cannot
 * provide them. */
DPC_API DPC_NODISCARD dpc_status dpc_rng_seed_os(dpc_rng *rng, dpc_error *err);

/* Whether rng is a generator dpc_rng_seed or dpc_rng_seed_os made (or a copy of one): the
 * mode is SEEDED or SECURE; seeded: the key is the seed's key and the secure key is zero;
 * secure: the secure key is not all zero (a never-seeded or zeroed dpc_rng, whose noise anyone
 * can regenerate, is refused). DPC_E_INVALID naming "rng" (NULL), "rng.mode", "rng.key" or
 * "rng.skey". Every library call that releases with a caller's dpc_rng checks it (the trainer,
 * its plan, the sampler, the privatizer, the private feature mean, the papers' trainers). */
DPC_API DPC_NODISCARD dpc_status dpc_rng_check(const dpc_rng *rng, dpc_error *err);

/* "seeded" or "secure". */
DPC_API const char *dpc_rng_mode_name(dpc_rng_mode mode);
/* A report's members "rng_mode" (dpc_rng_mode_name) and "seed": the seed in seeded mode (an
 * integer), null in secure mode (the key is never written), so a report says which randomness
 * ran. */
struct dpc_json_writer;
DPC_API void dpc_rng_report_json(struct dpc_json_writer *w, const dpc_rng *rng);

/* Derives the key of stream `stream_id` (see DPC_STREAM_ID). Pure and cheap (one block). */
DPC_API dpc_rng_stream dpc_rng_stream_derive(const dpc_rng *rng, uint64_t stream_id);

/* 64 random bits at (row, index, attempt). attempt < 65536, index < 2^49. */
DPC_API uint64_t dpc_rng_word(const dpc_rng_stream *s, uint64_t row, uint64_t index,
                              uint32_t attempt);

/* Uniform double in [0, 1) with 53 random bits, at (row, index). */
DPC_API double dpc_rng_uniform(const dpc_rng_stream *s, uint64_t row, uint64_t index);
/* out[i] = dpc_rng_word(s, row, index0 + i, attempt) for i < n, bit for bit, computing each
 * block once (a Philox block holds two consecutive indices' words, a ChaCha20 block eight), so
 * a run of consecutive indices costs 2x (seeded) or 8x (secure) fewer blocks than word by
 * word. The samplers draw their per-example uniforms this way.                 out: (n) */
DPC_API void dpc_rng_word_fill(const dpc_rng_stream *s, uint64_t row, uint64_t index0,
                               uint32_t attempt, uint64_t *out, size_t n);

/* Uniform integer in [0, bound) without modulo bias (Lemire's method, retrying on attempt
 * 1, 2, ...). bound must be >= 1. */
DPC_API uint64_t dpc_rng_below(const dpc_rng_stream *s, uint64_t row, uint64_t index,
                               uint64_t bound);

/* Standard normal N(0,1) at (row, index): a pure function of its arguments. */
DPC_API double dpc_rng_gaussian(const dpc_rng_stream *s, uint64_t row, uint64_t index);

/* out[i] = dpc_rng_gaussian(s, row, index0 + i) for i < n, bit for bit, but generated in
 * bulk by the kernels of instruction-set level `isa` (dpcorr/isa.h; AUTO, or a level this CPU
 * lacks, means the highest level it has). The values do not depend on the level, on n or on
 * how a range is split into calls: only the speed does.                            out: (n) */
DPC_API void dpc_rng_gaussian_fill_isa(const dpc_rng_stream *s, uint64_t row, uint64_t index0,
                                       double *out, size_t n, dpc_isa isa);

/* dpc_rng_gaussian_fill_isa at DPC_ISA_AUTO.                                        out: (n) */
DPC_API void dpc_rng_gaussian_fill(const dpc_rng_stream *s, uint64_t row, uint64_t index0,
                                   double *out, size_t n);

/* The naive reference for dpc_rng_gaussian_fill (one dpc_rng_gaussian per element); kept for
 * the parity test and the benchmark. */
DPC_API void dpc_rng_gaussian_fill_naive(const dpc_rng_stream *s, uint64_t row,
                                         uint64_t index0, double *out, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* DPCORR_RNG_H */
