/* dpcorr/field.h — field tables: every public parameter struct described once.
 *
 * In the spirit of SQLite's pragma table and libsodium's constant functions, each public
 * parameter struct and step record has one table, owned by the library and exported, that gives
 * for every field its library name (the name a dpc_error.field carries), its type, offset and
 * size, its default, its range, its flags and a one-line description. The library's `_init`
 * functions and range checks read the table; the struct's `_check` keeps only the refusals that
 * involve several fields. Front ends read the same table for their option types, ranges,
 * defaults and help, for dry-run echoes, report config sections and checkpoint items, and the
 * language bindings check their mirrors' offsets against it, so a parameter is written once.
 *
 * A table covers its struct: every byte belongs to exactly one field, or is alignment padding
 * (a gap shorter than the next field's alignment, or at the end shorter than the struct's);
 * dpc_field_table_verify proves it, and the tests run it on every exported table.
 *
 * Nested structs (dpc_train_config.mech) are fields of type DPC_FIELD_STRUCT pointing to the
 * nested table; their fields are named with a dot ("mech.nu") by dpc_field_find and by the
 * errors of dpc_field_check.
 */
#ifndef DPCORR_FIELD_H
#define DPCORR_FIELD_H

#include "dpcorr/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The C type of a field. The numeric types are read and written as double by
 * dpc_field_get/dpc_field_set (exact for every integer below 2^53). Values are appended, never
 * renumbered (the bindings read them). */
typedef enum dpc_field_type {
    DPC_FIELD_DOUBLE = 0, /* double */
    DPC_FIELD_SIZE = 1,   /* size_t */
    DPC_FIELD_INT = 2,    /* int */
    DPC_FIELD_BOOL = 3,   /* int, 0 or 1 */
    DPC_FIELD_ENUM = 4,   /* a C enum (int-sized); names[v] names value v */
    DPC_FIELD_U64 = 5,    /* uint64_t */
    DPC_FIELD_STRUCT = 6, /* a nested struct described by `sub` */
    DPC_FIELD_STRING = 7, /* const char * (borrowed; NULL = unset) */
    DPC_FIELD_POINTER = 8,/* any other pointer (borrowed; NULL = none; not a parameter value) */
    DPC_FIELD_BYTES = 9,  /* an inline array or opaque bytes (keys, fixed buffers) */
    DPC_FIELD_U32 = 10,   /* uint32_t (stream indices) */
    DPC_FIELD_CHAR = 11,  /* char holding one byte (a delimiter): its value is the byte as
                             unsigned char, 0..255; shown as the character (' ' as "space") */
    DPC_FIELD_LONG = 12   /* long (signed: a column counted from the end when negative) */
} dpc_field_type;

/* Flags (bitwise or). */
#define DPC_FIELD_LO_OPEN 0x1u   /* the range excludes lo */
#define DPC_FIELD_HI_OPEN 0x2u   /* the range excludes hi */
#define DPC_FIELD_UNSET_ZERO 0x4u /* 0 means "unset: the library derives it" (e.g. delta from
                                    N); 0 is accepted outside the range */
#define DPC_FIELD_DERIVED 0x8u   /* set by the library, not by the caller (e.g. mech.steps in a
                                    training run); the range check skips it */
#define DPC_FIELD_RUNTIME 0x10u  /* does not change what is computed (threads, isa, transport):
                                    left out of fingerprints */
#define DPC_FIELD_NO_RANGE 0x20u /* no range check (lo and hi unused) */
#define DPC_FIELD_UNRECORDED 0x80u /* not an item of checkpoints and fingerprints although it
                                    is a parameter: what it decides is recorded through the
                                    fields it sets (workload_explicit -> mech.momentum) */
#define DPC_FIELD_UNSET_NAN 0x100u /* a DOUBLE whose NAN means "not given" (a question's value
                                    its mode may leave out: dpc_account_query.epsilon); NAN is
                                    accepted outside the range, as 0 with UNSET_ZERO */
#define DPC_FIELD_OWN_CHECK 0x40u /* a DPC_FIELD_STRUCT whose fields apply by case (a mechanism's
                                    parameters by its kind): dpc_field_check does not descend
                                    into it; the nested struct's own _check checks it */

typedef struct dpc_field_table dpc_field_table;

typedef struct dpc_field {
    const char *name;       /* library name, = dpc_error.field ("lr") */
    dpc_field_type type;
    size_t offset, size;    /* offsetof and sizeof of the member */
    double def;             /* default written by dpc_field_defaults (numeric types) */
    double lo, hi;          /* accepted range (numeric types, and a POINTER to doubles: each
                               element's; see the flags) */
    unsigned flags;
    const char *const *names; /* DPC_FIELD_ENUM: names[0..nnames) */
    size_t nnames;
    const dpc_field_table *sub; /* DPC_FIELD_STRUCT: the nested table */
    const char *doc;        /* one line: meaning, unit, what 0 means */
    const char *label;      /* a few words for messages and checkpoint items ("learning rate");
                               NULL: the name */
    const char *def_text;   /* the default in words when it is not a plain value (a field with
                               DPC_FIELD_UNSET_ZERO: "the strategy's bands"); NULL: the value */
    const char *group;      /* the topic a front end lists the parameter under ("optimization",
                               "execution", "problem"): its command-line options of a table are
                               generated by group; NULL: no front-end option (set by programs) */
    const char *when;       /* the configurations it applies to: "FIELD W1|W2" = only while the
                               ENUM field FIELD of the same struct is one of the named values
                               ("schedule cooldown"; dpc_field_applies); NULL: always */
} dpc_field;

struct dpc_field_table {
    const char *name;       /* the struct's name ("dpc_train_config") */
    size_t size;            /* sizeof the struct */
    size_t align;           /* its alignment (_Alignof) */
    const dpc_field *fields;
    size_t count;
};

/* The field named `name` in t; a dotted name ("mech.nu") descends into DPC_FIELD_STRUCT fields.
 * *base_offset (may be NULL) receives the offset of the field's enclosing struct from the start
 * of t's struct, so that (char *)obj + *base_offset + f->offset is the member. NULL when none. */
DPC_API const dpc_field *dpc_field_find(const dpc_field_table *t, const char *name,
                                        size_t *base_offset);

/* 1 when f (a field of t) applies to obj by its `when` (always without one), else 0: a front end
 * reads or shows the field only where it applies. */
DPC_API int dpc_field_applies(const dpc_field_table *t, const dpc_field *f, const void *obj);

/* 1 when f holds a number that dpc_field_get and dpc_field_set read and write (DOUBLE, SIZE,
 * INT, BOOL, ENUM, U64, U32, CHAR, LONG), else 0: a front end reads and range-checks exactly
 * these (compare with this, never with an enum value's order). */
DPC_API int dpc_field_is_numeric(const dpc_field *f);

/* Zeroes obj (t->size bytes) and writes every numeric field's default, recursively. */
DPC_API void dpc_field_defaults(const dpc_field_table *t, void *obj);

/* A numeric field's value as double (dpc_field_is_numeric; a CHAR's byte as unsigned char);
 * NAN for the others. */
DPC_API double dpc_field_get(const dpc_field *f, const void *member_base);

/* Writes v into a numeric field after checking it: integer types need an integral v within the
 * type's limits. The range is not checked here (dpc_field_check_value does). */
DPC_API DPC_NODISCARD dpc_status dpc_field_set(const dpc_field *f, void *member_base, double v,
                                               dpc_error *err);

/* The range check of one value: NaN refused (accepted with DPC_FIELD_UNSET_NAN), lo/hi with the
 * open flags, 0 accepted with DPC_FIELD_UNSET_ZERO, ENUM within its names, BOOL 0 or 1. The error names `prefix` + f->name
 * and states the range ("must be in [0, 1], got 2"). */
DPC_API DPC_NODISCARD dpc_status dpc_field_check_value(const dpc_field *f, const char *prefix,
                                                       double v, dpc_error *err);

/* Range-checks every numeric field of obj (recursively, DERIVED fields skipped), in table order;
 * the first failure is returned, its field named with t's dotted names. */
DPC_API DPC_NODISCARD dpc_status dpc_field_check(const dpc_field_table *t, const void *obj,
                                                 dpc_error *err);

/* Step records as doubles (checkpoint sections of telemetry): v (t->count * n values) <- the
 * numeric fields of the n records of t->size bytes at recs, field after field and record after
 * record (other fields as 0); dpc_field_unpack writes them back (a DOUBLE bit for bit, a value
 * out of an integer type's range leaves the field as it was). */
DPC_API void dpc_field_pack(const dpc_field_table *t, const void *recs, size_t n, double *v);
DPC_API void dpc_field_unpack(const dpc_field_table *t, const double *v, size_t n, void *recs);

/* The enum name of value v of an ENUM field, NULL when out of range. */
DPC_API const char *dpc_field_enum_name(const dpc_field *f, int v);

/* The default of f as front ends show it ("0.25", "256", "cooldown" for an ENUM, "," for a CHAR,
 * f->def_text when set): the shortest decimal that reads back as the default. Returns
 * snprintf's count. */
DPC_API int dpc_field_format_default(const dpc_field *f, char *buf, size_t len);

/* A CHAR field's value c (0..255) as front ends write it and dpc_field_parse_char reads it:
 * the character itself when printable ("," ";" "|"), "space" (a CSV delimiter ' ' means any run
 * of blanks), "tab", else "0x" and two hex digits. Returns snprintf's count. */
DPC_API int dpc_field_format_char(int c, char *buf, size_t len);

/* The byte a front end's text names, as dpc_field_format_char writes it: one character (any
 * byte but NUL), the words "space", "tab", "comma", "semicolon", "pipe", or "0xNN" (two hex
 * digits). 0 and the byte (0..255) in *c, or DPC_E_INVALID naming f->name. */
DPC_API DPC_NODISCARD dpc_status dpc_field_parse_char(const dpc_field *f, const char *text,
                                                      int *c, dpc_error *err);

/* A numeric value as the shortest decimal that reads back as v (%.15g, else %.17g; "inf",
 * "nan"). Returns snprintf's count. */
DPC_API int dpc_field_format_number(double v, char *buf, size_t len);

/* An example value of a numeric field for a front end's help ("--nu 0.25"): a value the range
 * check accepts and that differs from the default where one exists: an ENUM's second name when
 * the default is its first, else its first; otherwise the first of twice the default (lo + 1
 * for a zero default), half the default and the middle of the range that is accepted (integral
 * for the integer types). Written as dpc_field_format_number does; returns snprintf's count, or
 * -1 (buf "") when the field is not numeric (or a CHAR) or no candidate is in its range. */
DPC_API int dpc_field_format_example(const dpc_field *f, char *buf, size_t len);

/* The names of an ENUM field joined by sep, def_mark (may be NULL) written after the default's
 * ("constant|cosine|cooldown"; with " | " and " (default)": "constant (default) | cosine");
 * "" for a field that is not an ENUM. Returns the length of the whole text (as snprintf; buf
 * holds what fits, terminated). */
DPC_API int dpc_field_format_enum(const dpc_field *f, const char *sep, const char *def_mark,
                                  char *buf, size_t len);

/* The range of a numeric field in words, lo and hi as dpc_field_format_number writes them and
 * the open flags as brackets: "in [0, 1)", "in (0, 1e150]", or with hi = +inf "> 0", ">= 1"
 * (the range only: the messages of dpc_field_check_value add "a finite number" for a DOUBLE
 * without an upper bound and "or 0 (unset)"). Front ends use it for their own range texts.
 * Returns snprintf's count. */
DPC_API int dpc_field_format_range(const dpc_field *f, char *buf, size_t len);

/* A configuration in its fields' own names: "name=value" for each field of obj in `group`
 * (NULL: every field) that applies to it (dpc_field_applies), in table order, joined by sep;
 * numbers as dpc_field_format_number writes them (integers exactly up to 2^53), ENUM fields by
 * their value's name, a CHAR as dpc_field_format_char writes it. Strings, pointers, bytes and
 * nested structs are left out. What a record of a configuration writes (a synthetic dataset's
 * source) so that no field is named twice. Returns the length of the whole text (as snprintf;
 * buf holds what fits, terminated). */
DPC_API int dpc_field_format_values(const dpc_field_table *t, const void *obj, const char *group,
                                    const char *sep, char *buf, size_t len);

/* Proves t describes its struct: names unique and non-empty, offsets + sizes within t->size,
 * fields in increasing offset without overlap, every gap alignment padding (shorter than the
 * next field's natural alignment and ending on it, or at the end shorter than t->align), sizes
 * consistent with the types, ENUM fields with names, STRUCT fields with a sub-table of their
 * size (verified recursively), defaults within the range, a `when` naming an ENUM field of t
 * and its values. DPC_E_INVALID naming the field. */
DPC_API DPC_NODISCARD dpc_status dpc_field_table_verify(const dpc_field_table *t,
                                                        dpc_error *err);

#ifdef __cplusplus
}
#endif

#endif
