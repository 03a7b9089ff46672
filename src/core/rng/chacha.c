/* chacha.c — the ChaCha20 block function (Bernstein 2008; IETF layout of RFC 8439: 32-bit block
 * counter, 96-bit nonce) and the secure-mode word generator. Secure mode keeps dpcorr's
 * counter-based addressing — every value a pure function of (key, stream, row, index,
 * attempt) — with a 256-bit key and a cryptographic PRF in place of Philox4x32-10 (64-bit
 * key, statistically strong but not cryptographic). Known-answer vectors of RFC 8439 sections
 * 2.1.1 and 2.3.2 are checked in tests/test_rng.c. */
#include "rng/chacha_impl.h"
#include "dpcorr/rng.h"

static inline uint32_t rotl32(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

#define DPC__QR(a, b, c, d)                                                                  \
    do {                                                                                     \
        a += b; d ^= a; d = rotl32(d, 16);                                                   \
        c += d; b ^= c; b = rotl32(b, 12);                                                   \
        a += b; d ^= a; d = rotl32(d, 8);                                                    \
        c += d; b ^= c; b = rotl32(b, 7);                                                    \
    } while (0)

void dpc_chacha20_quarter_round(uint32_t s[4]) { DPC__QR(s[0], s[1], s[2], s[3]); }

void dpc_chacha20_block(uint32_t out[16], const uint32_t key[8], uint32_t counter,
                        const uint32_t nonce[3])
{
    /* "expand 32-byte k" | key | counter | nonce */
    uint32_t in[16] = {0x61707865u, 0x3320646eu, 0x79622d32u, 0x6b206574u, key[0], key[1],
                       key[2],      key[3],      key[4],      key[5],      key[6], key[7],
                       counter,     nonce[0],    nonce[1],    nonce[2]};
    uint32_t x[16];
    for (int i = 0; i < 16; i++) x[i] = in[i];
    for (int r = 0; r < 10; r++) { /* 20 rounds: a column round and a diagonal round */
        DPC__QR(x[0], x[4], x[8], x[12]);
        DPC__QR(x[1], x[5], x[9], x[13]);
        DPC__QR(x[2], x[6], x[10], x[14]);
        DPC__QR(x[3], x[7], x[11], x[15]);
        DPC__QR(x[0], x[5], x[10], x[15]);
        DPC__QR(x[1], x[6], x[11], x[12]);
        DPC__QR(x[2], x[7], x[8], x[13]);
        DPC__QR(x[3], x[4], x[9], x[14]);
    }
    for (int i = 0; i < 16; i++) out[i] = x[i] + in[i];
}

void dpc__chacha_words(uint64_t w[8], const uint32_t key[8], uint64_t row, uint64_t index,
                       uint32_t attempt)
{
    uint32_t nonce[3] = {(uint32_t)row, (uint32_t)(row >> 32),
                         (uint32_t)(((index >> 35) & 0xFFFFu) << 16) | (attempt & 0xFFFFu)};
    uint32_t o[16];
    dpc_chacha20_block(o, key, (uint32_t)(index >> 3), nonce);
    for (int j = 0; j < 8; j++) w[j] = (uint64_t)o[2 * j + 1] << 32 | o[2 * j];
}
