/* field.c — the generic operations on field tables (dpcorr/field.h): lookup by dotted name,
 * defaults, typed get/set, range checks and the coverage proof. The tables themselves live
 * beside the structs they describe. */
#include "dpcorr/field.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_numeric(dpc_field_type t)
{
    return t == DPC_FIELD_DOUBLE || t == DPC_FIELD_SIZE || t == DPC_FIELD_INT ||
           t == DPC_FIELD_BOOL || t == DPC_FIELD_ENUM || t == DPC_FIELD_U64 ||
           t == DPC_FIELD_U32 || t == DPC_FIELD_CHAR || t == DPC_FIELD_LONG;
}

int dpc_field_is_numeric(const dpc_field *f) { return f && is_numeric(f->type); }

const dpc_field *dpc_field_find(const dpc_field_table *t, const char *name, size_t *base_offset)
{
    size_t base = 0;
    if (!t || !name) return NULL;
    for (;;) {
        const char *dot = strchr(name, '.');
        size_t len = dot ? (size_t)(dot - name) : strlen(name);
        const dpc_field *hit = NULL;
        for (size_t i = 0; i < t->count && !hit; i++)
            if (strlen(t->fields[i].name) == len && !strncmp(t->fields[i].name, name, len))
                hit = &t->fields[i];
        if (!hit) return NULL;
        if (!dot) {
            if (base_offset) *base_offset = base;
            return hit;
        }
        if (hit->type != DPC_FIELD_STRUCT || !hit->sub) return NULL;
        base += hit->offset;
        t = hit->sub;
        name = dot + 1;
    }
}

double dpc_field_get(const dpc_field *f, const void *member_base)
{
    const char *p = (const char *)member_base + f->offset;
    switch (f->type) {
    case DPC_FIELD_DOUBLE: { double v; memcpy(&v, p, sizeof v); return v; }
    case DPC_FIELD_SIZE: { size_t v; memcpy(&v, p, sizeof v); return (double)v; }
    case DPC_FIELD_U64: { uint64_t v; memcpy(&v, p, sizeof v); return (double)v; }
    case DPC_FIELD_U32: { uint32_t v; memcpy(&v, p, sizeof v); return (double)v; }
    case DPC_FIELD_CHAR: return (double)*(const unsigned char *)p; /* char's sign aside */
    case DPC_FIELD_LONG: { long v; memcpy(&v, p, sizeof v); return (double)v; }
    case DPC_FIELD_INT:
    case DPC_FIELD_BOOL:
    case DPC_FIELD_ENUM: { int v; memcpy(&v, p, sizeof v); return (double)v; }
    default: return NAN;
    }
}

/* dpc_field_set of the integer types narrower than 64 bits and of long (v integral). */
static dpc_status set_small(const dpc_field *f, char *p, double v, dpc_error *err)
{
    char got[40];
    dpc_field_format_number(v, got, sizeof got); /* exact: a stream 2^32 is not 4.29497e+09 */
    switch (f->type) {
    case DPC_FIELD_U32: {
        if (!(v >= 0 && v <= 4294967295.0))
            return dpc_error_param(err, DPC_E_INVALID, f->name,
                                   "must fit a 32-bit unsigned integer, got %s", got);
        uint32_t u = (uint32_t)v;
        memcpy(p, &u, sizeof u);
        return DPC_OK;
    }
    case DPC_FIELD_CHAR:
        if (!(v >= 0 && v <= 255))
            return dpc_error_param(err, DPC_E_INVALID, f->name, "must be a byte (0..255), got %s",
                                   got);
        *(unsigned char *)p = (unsigned char)v;
        return DPC_OK;
    case DPC_FIELD_LONG: {
        /* LONG_MIN is a power of two, exact in double; -LONG_MIN is the first value above */
        if (!(v >= (double)LONG_MIN && v < -(double)LONG_MIN))
            return dpc_error_param(err, DPC_E_INVALID, f->name, "must fit a long, got %s", got);
        long l = (long)v;
        memcpy(p, &l, sizeof l);
        return DPC_OK;
    }
    default: {
        if (!(v >= -2147483648.0 && v <= 2147483647.0))
            return dpc_error_param(err, DPC_E_INVALID, f->name, "must fit an int, got %s", got);
        int i = (int)v;
        memcpy(p, &i, sizeof i);
        return DPC_OK;
    }
    }
}

dpc_status dpc_field_set(const dpc_field *f, void *member_base, double v, dpc_error *err)
{
    char *p = (char *)member_base + f->offset;
    if (!is_numeric(f->type))
        return dpc_error_param(err, DPC_E_INVALID, f->name, "is not a numeric field");
    if (f->type == DPC_FIELD_DOUBLE) {
        memcpy(p, &v, sizeof v);
        return DPC_OK;
    }
    if (!(v == floor(v)))
        return dpc_error_param(err, DPC_E_INVALID, f->name, "must be an integer, got %g", v);
    if (f->type == DPC_FIELD_SIZE || f->type == DPC_FIELD_U64) {
        /* 2^64 is exact in double; every double below it converts without overflow. */
        if (!(v >= 0 && v < 18446744073709551616.0) || (f->type == DPC_FIELD_SIZE &&
                                                         v > (double)SIZE_MAX))
            return dpc_error_param(err, DPC_E_INVALID, f->name,
                                   "must be a non-negative integer in range, got %g", v);
        if (f->type == DPC_FIELD_SIZE) {
            size_t s = (size_t)v;
            memcpy(p, &s, sizeof s);
        } else {
            uint64_t u = (uint64_t)v;
            memcpy(p, &u, sizeof u);
        }
        return DPC_OK;
    }
    return set_small(f, p, v, err);
}

const char *dpc_field_enum_name(const dpc_field *f, int v)
{
    if (!f || f->type != DPC_FIELD_ENUM || v < 0 || (size_t)v >= f->nnames) return NULL;
    return f->names[v];
}

int dpc_field_format_enum(const dpc_field *f, const char *sep, const char *def_mark, char *buf,
                          size_t len)
{
    size_t n = 0;
    if (len) buf[0] = '\0';
    for (size_t k = 0; f && f->type == DPC_FIELD_ENUM && k < f->nnames; k++) {
        int w = snprintf(buf + (n < len ? n : len), n < len ? len - n : 0, "%s%s%s",
                         k ? sep : "", f->names[k],
                         def_mark && (double)k == f->def ? def_mark : "");
        n += w > 0 ? (size_t)w : 0;
    }
    return (int)n;
}

static void field_path(char *out, size_t cap, const char *prefix, const char *name)
{
    snprintf(out, cap, "%s%s", prefix ? prefix : "", name);
}

int dpc_field_format_number(double v, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%.15g", v);
    if (isfinite(v) && n > 0 && (size_t)n < len && strtod(buf, NULL) != v)
        n = snprintf(buf, len, "%.17g", v);
    return n;
}

int dpc_field_format_default(const dpc_field *f, char *buf, size_t len)
{
    if (!f) return snprintf(buf, len, "%s", "");
    if (f->def_text) return snprintf(buf, len, "%s", f->def_text);
    if (f->type == DPC_FIELD_ENUM) {
        const char *nm = dpc_field_enum_name(f, (int)f->def);
        return snprintf(buf, len, "%s", nm ? nm : "");
    }
    if (f->type == DPC_FIELD_CHAR) return dpc_field_format_char((int)f->def, buf, len);
    return dpc_field_format_number(f->def, buf, len);
}

/* The words of dpc_field_format_char and dpc_field_parse_char besides the printable
 * characters: the blanks a delimiter may be, and the names a data spec gives the usual ones. */
static const struct { const char *word; char c; } char_words[] = {
    {"space", ' '}, {"tab", '\t'}, {"comma", ','}, {"semicolon", ';'}, {"pipe", '|'}};

int dpc_field_format_char(int c, char *buf, size_t len)
{
    if (c == ' ') return snprintf(buf, len, "space");
    if (c == '\t') return snprintf(buf, len, "tab");
    if (c > ' ' && c < 0x7f) return snprintf(buf, len, "%c", c);
    return snprintf(buf, len, "0x%02x", (unsigned)c & 0xffu);
}

dpc_status dpc_field_parse_char(const dpc_field *f, const char *text, int *c, dpc_error *err)
{
    const char *nm = f && f->name ? f->name : "value";
    if (!text || !c) return dpc_error_param(err, DPC_E_INVALID, nm, "NULL argument");
    for (size_t k = 0; k < sizeof char_words / sizeof char_words[0]; k++)
        if (!strcmp(text, char_words[k].word)) return *c = char_words[k].c, DPC_OK;
    if (text[0] && !text[1]) return *c = (unsigned char)text[0], DPC_OK; /* any one byte */
    char *end = NULL;
    if (text[0] == '0' && text[1] == 'x' && strlen(text) == 4 &&
        strspn(text + 2, "0123456789abcdefABCDEF") == 2)
        return *c = (int)strtoul(text + 2, &end, 16), DPC_OK;
    return dpc_error_param(err, DPC_E_INVALID, nm,
                           "expected one character, space, tab, comma, semicolon, pipe or 0xNN, "
                           "got '%s'", text);
}

int dpc_field_format_example(const dpc_field *f, char *buf, size_t len)
{
    if (len) buf[0] = '\0';
    if (!f || !is_numeric(f->type) || f->type == DPC_FIELD_CHAR) return -1;
    if (f->type == DPC_FIELD_ENUM)
        return f->nnames ? snprintf(buf, len, "%s", f->names[f->def == 0 && f->nnames > 1]) : -1;
    double d = f->def, c[3] = {d != 0 ? 2 * d : f->lo + 1, d / 2, (f->lo + f->hi) / 2};
    for (int k = 0; k < 3; k++) {
        double v = f->type == DPC_FIELD_DOUBLE ? c[k] : floor(c[k]);
        if (v != d && dpc_field_check_value(f, "", v, NULL) == DPC_OK)
            return dpc_field_format_number(v, buf, len);
    }
    return -1;
}

int dpc_field_format_range(const dpc_field *f, char *buf, size_t len)
{
    char lo[40], hi[40];
    dpc_field_format_number(f->lo, lo, sizeof lo);
    dpc_field_format_number(f->hi, hi, sizeof hi);
    int lo_open = (f->flags & DPC_FIELD_LO_OPEN) != 0;
    if (isinf(f->hi) && f->hi > 0) return snprintf(buf, len, "%s %s", lo_open ? ">" : ">=", lo);
    return snprintf(buf, len, "in %c%s, %s%c", lo_open ? '(' : '[', lo, hi,
                    (f->flags & DPC_FIELD_HI_OPEN) ? ')' : ']');
}

int dpc_field_format_values(const dpc_field_table *t, const void *obj, const char *group,
                            const char *sep, char *buf, size_t len)
{
    size_t n = 0;
    if (len) buf[0] = 0;
    for (size_t i = 0; t && obj && i < t->count; i++) {
        const dpc_field *f = &t->fields[i];
        if (!is_numeric(f->type)) continue;
        if ((group && (!f->group || strcmp(f->group, group))) || !dpc_field_applies(t, f, obj))
            continue;
        double v = dpc_field_get(f, obj);
        const char *nm = f->type == DPC_FIELD_ENUM ? dpc_field_enum_name(f, (int)v) : NULL;
        char val[48];
        if (f->type == DPC_FIELD_CHAR) dpc_field_format_char((int)v, val, sizeof val);
        else if (!nm) dpc_field_format_number(v, val, sizeof val);
        /* past the end, snprintf only counts (NULL, 0): the caller learns the length it needs */
        int k = snprintf(n < len ? buf + n : NULL, n < len ? len - n : 0, "%s%s=%s",
                         n ? (sep ? sep : "") : "", f->name, nm ? nm : val);
        if (k > 0) n += (size_t)k;
    }
    return (int)n;
}

/* The accepted range in words: "in [0, 1)", "a finite number > 0", ">= 1". */
static void range_words(const dpc_field *f, char *out, size_t cap)
{
    int finite = f->type == DPC_FIELD_DOUBLE && isinf(f->hi) && f->hi > 0;
    int n = snprintf(out, cap, "%s", finite ? "a finite number " : "");
    dpc_field_format_range(f, out + n, cap - (size_t)n);
}

dpc_status dpc_field_check_value(const dpc_field *f, const char *prefix, double v,
                                 dpc_error *err)
{
    char path[DPC_ERROR_FIELD_LEN];
    field_path(path, sizeof path, prefix, f->name);
    if (isnan(v) && (f->flags & DPC_FIELD_UNSET_NAN)) return DPC_OK; /* not given */
    if (isnan(v)) return dpc_error_param(err, DPC_E_INVALID, path, "must be a number, got NaN");
    if (f->type == DPC_FIELD_BOOL && v != 0 && v != 1)
        return dpc_error_param(err, DPC_E_INVALID, path, "must be 0 or 1, got %g", v);
    if (f->type == DPC_FIELD_ENUM && !(v >= 0 && v < (double)f->nnames))
        return dpc_error_param(err, DPC_E_INVALID, path, "unknown value %g (%zu names)", v,
                               f->nnames);
    if ((f->flags & DPC_FIELD_NO_RANGE) || f->type == DPC_FIELD_BOOL ||
        f->type == DPC_FIELD_ENUM)
        return DPC_OK;
    if ((f->flags & DPC_FIELD_UNSET_ZERO) && v == 0) return DPC_OK;
    int lo_ok = (f->flags & DPC_FIELD_LO_OPEN) ? v > f->lo : v >= f->lo;
    int hi_ok = (f->flags & DPC_FIELD_HI_OPEN) ? v < f->hi : v <= f->hi;
    if (lo_ok && hi_ok) return DPC_OK;
    char range[96], got[40];
    range_words(f, range, sizeof range);
    dpc_field_format_number(v, got, sizeof got);
    return dpc_error_param(err, DPC_E_INVALID, path, "must be %s%s, got %s", range,
                           (f->flags & DPC_FIELD_UNSET_ZERO) ? " or 0 (unset)" : "", got);
}

static dpc_status check_rec(const dpc_field_table *t, const char *base, const char *prefix,
                            int depth, dpc_error *err)
{
    for (size_t i = 0; i < t->count; i++) {
        const dpc_field *f = &t->fields[i];
        if (f->flags & DPC_FIELD_DERIVED) continue;
        if (f->type == DPC_FIELD_STRUCT && (f->flags & DPC_FIELD_OWN_CHECK)) continue;
        if (f->type == DPC_FIELD_STRUCT && f->sub && depth < 8) {
            char sub[DPC_ERROR_FIELD_LEN];
            snprintf(sub, sizeof sub, "%s%s.", prefix, f->name);
            dpc_status st = check_rec(f->sub, base + f->offset, sub, depth + 1, err);
            if (st) return st;
        } else if (is_numeric(f->type)) {
            dpc_status st = dpc_field_check_value(f, prefix, dpc_field_get(f, base), err);
            if (st) return st;
        }
    }
    return DPC_OK;
}

dpc_status dpc_field_check(const dpc_field_table *t, const void *obj, dpc_error *err)
{
    if (!t || !obj) return dpc_error_param(err, DPC_E_INVALID, "table", "is NULL");
    return check_rec(t, (const char *)obj, "", 0, err);
}

static void defaults_rec(const dpc_field_table *t, char *base, int depth)
{
    for (size_t i = 0; i < t->count; i++) {
        const dpc_field *f = &t->fields[i];
        if (f->type == DPC_FIELD_STRUCT && f->sub && depth < 8)
            defaults_rec(f->sub, base + f->offset, depth + 1);
        else if (is_numeric(f->type) && f->def != 0 &&
                 dpc_field_set(f, base, f->def, NULL) != DPC_OK) {
            /* unreachable for a verified table (defaults are in range and of the type) */
        }
    }
}

void dpc_field_defaults(const dpc_field_table *t, void *obj)
{
    if (!t || !obj) return;
    memset(obj, 0, t->size);
    defaults_rec(t, (char *)obj, 0);
}

/* The natural alignment and expected size (0: any) of a field's type. */
static size_t type_align(const dpc_field *f, size_t *want_size)
{
    *want_size = 0;
    switch (f->type) {
    case DPC_FIELD_DOUBLE: *want_size = sizeof(double); return _Alignof(double);
    case DPC_FIELD_SIZE: *want_size = sizeof(size_t); return _Alignof(size_t);
    case DPC_FIELD_U64: *want_size = sizeof(uint64_t); return _Alignof(uint64_t);
    case DPC_FIELD_U32: *want_size = sizeof(uint32_t); return _Alignof(uint32_t);
    case DPC_FIELD_CHAR: *want_size = sizeof(char); return _Alignof(char);
    case DPC_FIELD_LONG: *want_size = sizeof(long); return _Alignof(long);
    case DPC_FIELD_INT:
    case DPC_FIELD_BOOL:
    case DPC_FIELD_ENUM: *want_size = sizeof(int); return _Alignof(int);
    case DPC_FIELD_STRING:
    case DPC_FIELD_POINTER: *want_size = sizeof(void *); return _Alignof(void *);
    case DPC_FIELD_STRUCT: return f->sub ? f->sub->align : 1;
    case DPC_FIELD_BYTES: {
        /* Opaque bytes: the largest power of two up to 16 dividing offset and size. */
        size_t a = 16;
        while (a > 1 && (f->offset % a || f->size % a)) a /= 2;
        return a;
    }
    }
    return 1;
}

/* f->when against obj: 1 applies, 0 not; -1 when the condition is malformed (not "FIELD W|W"
 * with FIELD an ENUM field of t and every W one of its names). obj NULL: only checks it. */
static int when_holds(const dpc_field_table *t, const dpc_field *f, const void *obj)
{
    if (!f->when) return 1;
    const char *sp = strchr(f->when, ' ');
    char name[64];
    if (!sp || (size_t)(sp - f->when) >= sizeof name || !sp[1] || sp[strlen(sp) - 1] == '|')
        return -1;
    memcpy(name, f->when, (size_t)(sp - f->when));
    name[sp - f->when] = '\0';
    const dpc_field *e = NULL;
    for (size_t i = 0; i < t->count && !e; i++)
        if (!strcmp(t->fields[i].name, name) && t->fields[i].type == DPC_FIELD_ENUM)
            e = &t->fields[i];
    if (!e) return -1;
    const char *cur = obj ? dpc_field_enum_name(e, (int)dpc_field_get(e, obj)) : NULL;
    int hit = 0;
    for (const char *w = sp + 1; *w;) {
        size_t l = strcspn(w, "|"), k = 0;
        while (k < e->nnames && (strlen(e->names[k]) != l || strncmp(e->names[k], w, l))) k++;
        if (k == e->nnames) return -1;
        hit |= cur && !strcmp(cur, e->names[k]);
        w += l + (w[l] == '|');
    }
    return hit;
}

int dpc_field_applies(const dpc_field_table *t, const dpc_field *f, const void *obj)
{
    return when_holds(t, f, obj) == 1;
}

static dpc_status verify_field(const dpc_field_table *t, size_t i, size_t *end, dpc_error *err)
{
    const dpc_field *f = &t->fields[i];
    const char *nm = f->name && f->name[0] ? f->name : "(unnamed)";
    size_t want, al = type_align(f, &want);
    if (!f->name || !f->name[0] || !f->doc || !f->doc[0])
        return dpc_error_param(err, DPC_E_INVALID, nm, "%s field %zu: name and doc required",
                               t->name, i);
    for (size_t j = 0; j < i; j++)
        if (!strcmp(t->fields[j].name, f->name))
            return dpc_error_param(err, DPC_E_INVALID, nm, "%s: name used twice", t->name);
    if (want && f->size != want)
        return dpc_error_param(err, DPC_E_INVALID, nm, "%s: size %zu does not fit its type",
                               t->name, f->size);
    if (f->offset < *end || f->offset + f->size > t->size || f->size == 0)
        return dpc_error_param(err, DPC_E_INVALID, nm,
                               "%s: bytes [%zu, %zu) overlap or leave the struct", t->name,
                               f->offset, f->offset + f->size);
    if (f->offset - *end >= al || f->offset % al)
        return dpc_error_param(err, DPC_E_INVALID, nm,
                               "%s: bytes [%zu, %zu) before it are not covered by any field",
                               t->name, *end, f->offset);
    if (f->type == DPC_FIELD_ENUM && (!f->names || !f->nnames))
        return dpc_error_param(err, DPC_E_INVALID, nm, "%s: enum without names", t->name);
    if (when_holds(t, f, NULL) < 0)
        return dpc_error_param(err, DPC_E_INVALID, nm, "%s: when '%s' names no enum field and "
                               "values of it", t->name, f->when);
    if (f->type == DPC_FIELD_STRUCT) {
        if (!f->sub || f->sub->size != f->size)
            return dpc_error_param(err, DPC_E_INVALID, nm, "%s: nested table missing or of "
                                   "another size", t->name);
        dpc_status st = dpc_field_table_verify(f->sub, err);
        if (st) return st;
    }
    if (is_numeric(f->type) && !(f->flags & DPC_FIELD_DERIVED)) {
        dpc_status st = dpc_field_check_value(f, "", f->def, err);
        if (st) return dpc_error_param(err, DPC_E_INVALID, nm, "%s: its default %g is outside "
                                       "its range", t->name, f->def);
    }
    *end = f->offset + f->size;
    return DPC_OK;
}

dpc_status dpc_field_table_verify(const dpc_field_table *t, dpc_error *err)
{
    if (!t || !t->name || !t->fields || !t->count || !t->size || !t->align)
        return dpc_error_param(err, DPC_E_INVALID, "table", "empty or unnamed table");
    size_t end = 0;
    for (size_t i = 0; i < t->count; i++) {
        dpc_status st = verify_field(t, i, &end, err);
        if (st) return st;
    }
    if (t->size - end >= t->align)
        return dpc_error_param(err, DPC_E_INVALID, "table",
                               "%s: bytes [%zu, %zu) at its end are not covered by any field",
                               t->name, end, t->size);
    return DPC_OK;
}

void dpc_field_pack(const dpc_field_table *t, const void *recs, size_t n, double *v)
{
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < t->count; k++) {
            double x = dpc_field_get(&t->fields[k], (const char *)recs + i * t->size);
            v[t->count * i + k] = isnan(x) && t->fields[k].type != DPC_FIELD_DOUBLE ? 0 : x;
        }
}

void dpc_field_unpack(const dpc_field_table *t, const double *v, size_t n, void *recs)
{
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < t->count; k++) {
            const dpc_field *f = &t->fields[k];
            char *rec = (char *)recs + i * t->size;
            if (f->type == DPC_FIELD_DOUBLE) /* bit for bit, NaN included */
                memcpy(rec + f->offset, &v[t->count * i + k], sizeof(double));
            else if (is_numeric(f->type) &&
                     dpc_field_set(f, rec, v[t->count * i + k], NULL) != DPC_OK) {
                /* out of the type's range (an edited file): the field keeps its value */
            }
        }
}
