/* isa_internal.h — level resolution against a given CPU level (tests exercise the refusal of a
 * level "this CPU" lacks on any machine). Not public. */
#ifndef DPCORR_SRC_ISA_INTERNAL_H
#define DPCORR_SRC_ISA_INTERNAL_H

#include "dpcorr/isa.h"

/* dpc_isa_resolve for a CPU whose highest level is `have`. */
dpc_status dpc__isa_resolve_on(dpc_isa isa, dpc_isa have, dpc_isa *out, dpc_error *err);

#endif
