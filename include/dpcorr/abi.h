/* dpcorr/abi.h — the sizes of the public structs, for bindings that mirror them.
 *
 * A binding that reaches the library without a C compiler (Python ctypes, cffi in ABI mode)
 * declares its own copy of each struct it passes by pointer. dpc_abi_sizeof lets it compare
 * every copy with the layout the library was built with when it loads the library, and refuse
 * to run (instead of corrupting memory) against a libdpcorr.so built from other headers. */
#ifndef DPCORR_ABI_H
#define DPCORR_ABI_H

#include "dpcorr/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* sizeof of the public struct named by its typedef ("dpc_mech_params", "dpc_train_config", ...:
 * the structs of rng.h, mech.h, account.h, strategy.h, sampler.h and train.h that a caller
 * allocates or reads; the full list through dpc_abi_name); 0 for a name the library does not
 * know (or NULL). */
DPC_API size_t dpc_abi_sizeof(const char *type_name);

/* The number of names dpc_abi_sizeof knows, and the i-th of them (NULL when i >= count). */
DPC_API size_t dpc_abi_count(void);
DPC_API const char *dpc_abi_name(size_t i);

#ifdef __cplusplus
}
#endif
#endif /* DPCORR_ABI_H */
