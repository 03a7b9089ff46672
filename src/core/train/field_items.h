/* field_items.h — library-internal uses of the field tables (dpcorr/field.h) shared by the
 * papers' modules: the short noun of a field, checkpoint items in table order, one field's
 * range check by name, and the name tables of enums that several structs share. */
#ifndef DPC_FIELD_ITEMS_H
#define DPC_FIELD_ITEMS_H

#include "dpcorr/field.h"
#include "dpcorr/train.h"

/* dpc_calibration's names, indexed by value ("accountant", "paper"; = dpc_calibration_name). */
extern const char *const dpc__calibration_names[2];

/* The short noun of f, for messages and checkpoint items: its doc up to the first ": " (the
 * whole doc when it has none). Returns out. */
const char *dpc__field_what(const dpc_field *f, char *out, size_t cap);

/* One configuration item per field of obj, in table order, under the field's name and its
 * dpc__field_what: DOUBLE as a number, the integer types and BOOL as counts, ENUM as its name.
 * Left out: RUNTIME fields (they change no value) and the non-numeric ones (hooks, pointers). */
void dpc__field_ckpt_items(dpc_ckpt *ck, const dpc_field_table *t, const void *obj);

/* The range check (dpc_field_check_value) of the field `name` of obj. */
DPC_NODISCARD dpc_status dpc__field_check_one(const dpc_field_table *t, const void *obj,
                                              const char *name, dpc_error *err);

/* The scales of obj whose table range ends at DPC__SCALE_MAX (they enter squared and in
 * products, issue 28): a finite value above it is refused as DPC_E_RANGE, "%g overflows: must
 * be at most 1e150", naming the field (dotted for nested structs). Run before dpc_field_check,
 * whose message for the same value would not say why. */
DPC_NODISCARD dpc_status dpc__field_check_overflow(const dpc_field_table *t, const void *obj,
                                                   dpc_error *err);

#endif
