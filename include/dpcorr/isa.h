/* dpcorr/isa.h — instruction-set levels of the hot kernels.
 *
 * One x86-64 binary carries three variants of every hot kernel (model GEMMs, ghost norms and
 * activations, Philox4x32-10 and ChaCha20 with the ziggurat Gaussian, the streaming noise
 * engines' state updates, the optimizer update) and picks one per object at creation:
 *
 *   DPC_ISA_SSE2     baseline x86-64 (SSE2; also the only level of non-x86 builds)
 *   DPC_ISA_AVX2     AVX2 + FMA (x86-64-v3)
 *   DPC_ISA_AVX512   AVX-512 F, CD, BW, DQ, VL (x86-64-v4)
 *
 * The level is an explicit parameter of the objects that run kernels (dpc_model_config.isa,
 * dpc_noise_config.isa, dpc_train_config.isa; dpc_rng_gaussian_fill_isa for the bulk
 * sampler); its default DPC_ISA_AUTO resolves to dpc_isa_detect() when the object is created
 * and the object keeps the resolved level (reports record it). There is no global "current
 * level": the only process-wide input is the CPU itself (a read-only cpuid query).
 *
 * What may differ across levels: nothing. Every level performs the same IEEE-754 double
 * operations in the same order on every value — products and sums are rounded separately
 * (no fused multiply-add, as -ffp-contract=off already guarantees for the scalar code), sums
 * keep their documented order, and vector lanes only ever hold independent elements — so
 * the noise (Philox and ChaCha20 words, the Gaussian transform, every mechanism's noise rows),
 * the model (losses, norms, gradients, clipped sums) and hence whole training runs are bit
 * for bit the same at every level and thread count (tests/test_isa.c checks each kernel
 * against its scalar twin and whole runs across levels). A level only changes speed.
 * doc/performance.md explains the choice (on the AMD Zen 5 target separate multiply and add
 * run as fast as FMA, because additions have their own pipes).
 */
#ifndef DPCORR_ISA_H
#define DPCORR_ISA_H

#include "dpcorr/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dpc_isa {
    DPC_ISA_AUTO = 0,  /* resolve to dpc_isa_detect() at object creation (the default) */
    DPC_ISA_SSE2 = 1,  /* baseline */
    DPC_ISA_AVX2 = 2,  /* AVX2 + FMA */
    DPC_ISA_AVX512 = 3 /* AVX-512 F/CD/BW/DQ/VL */
} dpc_isa;

/* The highest level this CPU and OS support (cpuid, and XGETBV for the OS-enabled register
 * state); DPC_ISA_SSE2 on non-x86 builds. A pure, cheap query. */
DPC_API dpc_isa dpc_isa_detect(void);

/* 1 if `isa` can run here (AUTO always can), 0 otherwise (including unknown values). */
DPC_API int dpc_isa_supported(dpc_isa isa);

/* *out = the level to use for a request: AUTO -> dpc_isa_detect(); a supported level ->
 * itself. DPC_E_UNSUPPORTED naming field "isa" when this CPU lacks the level, DPC_E_INVALID
 * for an unknown value. */
DPC_API DPC_NODISCARD dpc_status dpc_isa_resolve(dpc_isa isa, dpc_isa *out, dpc_error *err);

/* "auto", "sse2", "avx2", "avx512" ("unknown" otherwise). */
DPC_API const char *dpc_isa_name(dpc_isa isa);

/* Parses one of the names above (exact, lower case). DPC_E_INVALID naming field "isa". */
DPC_API DPC_NODISCARD dpc_status dpc_isa_parse(const char *name, dpc_isa *out, dpc_error *err);

#ifdef __cplusplus
}
#endif
#endif /* DPCORR_ISA_H */
