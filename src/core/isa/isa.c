/* isa.c — instruction-set levels: detection, resolution of AUTO, names (see dpcorr/isa.h).
 *
 * Detection reads the CPU model that the compiler runtime (libgcc / compiler-rt) fills in
 * once from cpuid and XGETBV before main: __builtin_cpu_supports reports a feature only when
 * the CPU has it and the OS saves its registers (XCR0 YMM state for AVX2, opmask and ZMM state
 * for AVX-512). It is a read-only query of the hardware, costs a load, and keeps no state of
 * ours. */
#include "isa/isa_internal.h"

#include <string.h>

static const char *const names[] = {"auto", "sse2", "avx2", "avx512"};

dpc_isa dpc_isa_detect(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx2") &&
        __builtin_cpu_supports("fma"))
        return DPC_ISA_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return DPC_ISA_AVX2;
#endif
    return DPC_ISA_SSE2;
}

int dpc_isa_supported(dpc_isa isa)
{
    if (isa == DPC_ISA_AUTO) return 1;
    if (isa < DPC_ISA_SSE2 || isa > DPC_ISA_AVX512) return 0;
    return isa <= dpc_isa_detect();
}

dpc_status dpc_isa_resolve(dpc_isa isa, dpc_isa *out, dpc_error *err)
{
    return dpc__isa_resolve_on(isa, dpc_isa_detect(), out, err);
}

dpc_status dpc__isa_resolve_on(dpc_isa isa, dpc_isa have, dpc_isa *out, dpc_error *err)
{
    if (isa < DPC_ISA_AUTO || isa > DPC_ISA_AVX512)
        return dpc_error_param(err, DPC_E_INVALID, "isa", "unknown level %d", (int)isa);
    if (isa == DPC_ISA_AUTO) {
        *out = have;
        return DPC_OK;
    }
    if (isa > have)
        return dpc_error_param(err, DPC_E_UNSUPPORTED, "isa",
                               "this CPU does not support %s (the highest level here is %s)",
                               names[isa], names[have]);
    *out = isa;
    return DPC_OK;
}

const char *dpc_isa_name(dpc_isa isa)
{
    return (isa >= DPC_ISA_AUTO && isa <= DPC_ISA_AVX512) ? names[isa] : "unknown";
}

dpc_status dpc_isa_parse(const char *name, dpc_isa *out, dpc_error *err)
{
    for (int k = 0; k <= DPC_ISA_AVX512; k++)
        if (name && !strcmp(name, names[k])) {
            *out = (dpc_isa)k;
            return DPC_OK;
        }
    return dpc_error_param(err, DPC_E_INVALID, "isa",
                           "unknown level '%s' (expected auto, sse2, avx2 or avx512)",
                           name ? name : "(null)");
}
