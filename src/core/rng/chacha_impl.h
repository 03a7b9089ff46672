/* chacha_impl.h — internal: the secure-mode block layout (see dpcorr/rng.h). */
#ifndef DPCORR_SRC_CHACHA_IMPL_H
#define DPCORR_SRC_CHACHA_IMPL_H

#include <stdint.h>

/* The eight 64-bit words of the ChaCha20 block holding (row, index, attempt): block counter =
 * index >> 3 (low 32 bits), nonce = (row low, row high, ((index >> 35) << 16) | attempt);
 * word j (j = index & 7) = out[2j] | out[2j+1] << 32. */
void dpc__chacha_words(uint64_t w[8], const uint32_t key[8], uint64_t row, uint64_t index,
                       uint32_t attempt);

#endif
