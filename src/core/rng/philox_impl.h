/* philox_impl.h — internal inline Philox4x32-10 block and counter layout (see dpcorr/rng.h). */
#ifndef DPCORR_SRC_PHILOX_IMPL_H
#define DPCORR_SRC_PHILOX_IMPL_H

#include <stdint.h>

#define DPC__PHILOX_M0 0xD2511F53u
#define DPC__PHILOX_M1 0xCD9E8D57u
#define DPC__PHILOX_W0 0x9E3779B9u /* golden ratio */
#define DPC__PHILOX_W1 0xBB67AE85u /* sqrt(3) - 1 */

/* Ten rounds in place; the key is bumped before rounds 2..10 (Random123 schedule). */
static inline void dpc__philox_block(uint32_t c[4], uint32_t k0, uint32_t k1)
{
    for (int r = 0; r < 10; r++) {
        if (r > 0) {
            k0 += DPC__PHILOX_W0;
            k1 += DPC__PHILOX_W1;
        }
        uint64_t p0 = (uint64_t)DPC__PHILOX_M0 * c[0];
        uint64_t p1 = (uint64_t)DPC__PHILOX_M1 * c[2];
        uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
        uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
        uint32_t n0 = hi1 ^ c[1] ^ k0, n2 = hi0 ^ c[3] ^ k1;
        c[0] = n0;
        c[1] = lo1;
        c[2] = n2;
        c[3] = lo0;
    }
}

/* The counter of the block holding the 64-bit word for (row, index, attempt). */
static inline void dpc__philox_ctr(uint32_t c[4], uint64_t row, uint64_t index, uint32_t attempt)
{
    c[0] = (uint32_t)(index >> 1);
    c[1] = (uint32_t)row;
    c[2] = (uint32_t)(row >> 32);
    c[3] = (uint32_t)(((index >> 33) & 0xFFFFu) << 16) | (attempt & 0xFFFFu);
}

/* The block-independent constants of the first two rounds of a row's attempt-0 blocks whose
 * pair indices share their bits 32..47 (ph); the vector kernels broadcast them (the derivation
 * is in gauss_kernel.inc, philox_head). out: c3 ^ k1[0]; lo(M1 c2) ^ k0[1]; hi(M0 x1) ^ k1[1];
 * M0 x1. */
static inline void dpc__philox_head(uint32_t key0, uint32_t key1, uint64_t row, uint64_t ph,
                                    uint64_t out[4])
{
    uint32_t c1 = (uint32_t)row, c2 = (uint32_t)(row >> 32), c3 = (uint32_t)((ph & 0xFFFFu) << 16);
    uint32_t k01 = key0 + DPC__PHILOX_W0, k11 = key1 + DPC__PHILOX_W1;
    uint64_t p1 = (uint64_t)DPC__PHILOX_M1 * c2;
    uint32_t x1 = (uint32_t)(p1 >> 32) ^ c1 ^ key0;
    uint64_t p0 = (uint64_t)DPC__PHILOX_M0 * x1;
    out[0] = c3 ^ key1;
    out[1] = (uint32_t)p1 ^ k01;
    out[2] = (uint32_t)(p0 >> 32) ^ k11;
    out[3] = p0;
}

#endif
