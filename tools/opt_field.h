/* opt_field.h — option specs that read their type, range and default from the library's field
 * tables (dpcorr/field.h), and dry-run echoes written from a table, so that a front end states
 * no default or range of a library parameter. */
#ifndef DPCORR_TOOLS_OPT_FIELD_H
#define DPCORR_TOOLS_OPT_FIELD_H

#include "dpcorr/field.h"
#include "opt.h"

/* Binds each spec of the NULL-terminated list to the field of t that its `param` names (the
 * first comma-separated name that starts with prefix, the prefix removed: "problem." binds
 * "problem.w_norm" to t's "w_norm"): numeric fields give the option's type (DOUBLE: a number,
 * integer types: OPT_UINT), its range and open ends (an UNSET_ZERO field's 0 stays refused: the
 * option's absence is the unset value), and " (default X)" appended to its help unless the help
 * already states one or the default is an unset 0; an ENUM field marks its default word in the
 * help ("tree (default) | honaker"). Specs that name no field of t are left as they are. Call
 * once before the command's table is parsed or printed (idempotent). */
void opt_field_bind(opt_spec *const *specs, const dpc_field_table *t, const char *prefix);

/* Appends " (default X)" to o's help unless it states one: the default of an option that is
 * not a table field but a library constant (DPC_SRGD_PRACTICAL_C) or a field without a table
 * range (linreg's dpstat_k, with its paper sentinel). */
void opt_field_default(opt_spec *o, double def);

/* Binds o to the field `name` of t whatever its `param` says (an option that sets a field of
 * another name: --lr sets dpc_kan_run_config.lr, which the run's errors call eta). */
void opt_field_bind_as(opt_spec *o, const dpc_field_table *t, const char *name);

/* Reads each spec of the NULL-terminated list into the field of obj it is bound to (as
 * opt_field_bind finds it), marking it used: a given number is written with dpc_field_set, an
 * OPT_CHOICE word of an ENUM field by its index (the choices in the order of the enum's
 * names); an option not given leaves the field's value. A command reads a list only in the
 * configurations that use it (opt_finish refuses the others). */
void opt_field_read(opt_set *s, opt_spec *const *specs, const dpc_field_table *t, void *obj,
                    const char *prefix);

/* The dry-run lines "prefix+name = value" of obj's fields in table order: numbers, counts,
 * ENUM names, strings; pointers and nested structs left out. */
void opt_field_dry(const dpc_field_table *t, const void *obj, const char *prefix);

/* Step records saved in checkpoints by their table: v (t->count * n) <- the numeric fields of
 * n records (t->size bytes each) at recs as doubles, field after field, and back. Non-numeric
 * fields are packed as 0 and left alone when unpacked. */
void opt_field_pack(const dpc_field_table *t, const void *recs, size_t n, double *v);
void opt_field_unpack(const dpc_field_table *t, const double *v, size_t n, void *recs);

#endif
