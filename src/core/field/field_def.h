/* field_def.h — macros for writing field tables (dpcorr/field.h) beside their structs:
 *
 *   static const dpc_field train_fields[] = {
 *       {.name = "clip", .type = DPC_FIELD_DOUBLE, DPC_FIELD_AT(dpc_train_config, clip),
 *        .def = 1, .lo = 0, .hi = INFINITY, .flags = DPC_FIELD_LO_OPEN | DPC_FIELD_HI_OPEN,
 *        .doc = "per-example L2 clip norm C"},
 *       ...};
 *   static const dpc_field_table train_table = DPC_FIELD_TABLE(dpc_train_config, train_fields);
 */
#ifndef DPC_FIELD_DEF_H
#define DPC_FIELD_DEF_H

#include "dpcorr/field.h"

#include <stddef.h>

#define DPC_FIELD_AT(S, m) .offset = offsetof(S, m), .size = sizeof(((S *)0)->m)
/* def_text of every target delta that 0 leaves to dpc_account_default_delta */
#define DPC__DELTA_DEFAULT_TEXT "the largest power of ten <= 1/(10 N), at most 1e-5; below 1/N"
#define DPC_FIELD_NAMES(arr) .names = (arr), .nnames = sizeof(arr) / sizeof((arr)[0])
#define DPC_FIELD_TABLE(S, arr)                                                                \
    {                                                                                          \
        .name = #S, .size = sizeof(S), .align = _Alignof(S), .fields = (arr),                  \
        .count = sizeof(arr) / sizeof((arr)[0])                                                \
    }

#endif
