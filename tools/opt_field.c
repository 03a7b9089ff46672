/* opt_field.c — option specs and dry-run echoes from the library's field tables (opt_field.h). */
#include "opt_field.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Help texts with their default appended: the specs point into this arena for the life of the
 * process (a tool's option tables are static). */
static char g_help[16384];
static size_t g_help_used;

static const char *help_with(const char *help, const char *add)
{
    size_t n = strlen(help) + strlen(add) + 1;
    if (g_help_used + n > sizeof g_help) return help; /* full: the help keeps its own text */
    char *p = g_help + g_help_used;
    snprintf(p, n, "%s%s", help, add);
    g_help_used += n;
    return p;
}

/* The field named by o->param under prefix, or NULL; *base: the offset of its enclosing struct
 * (nested fields). */
static const dpc_field *param_field(const opt_spec *o, const dpc_field_table *t,
                                    const char *prefix, size_t *base)
{
    const char *p = o->param;
    size_t pl = strlen(prefix);
    while (p && *p) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char name[96];
        if (len > pl && len - pl < sizeof name && !strncmp(p, prefix, pl)) {
            snprintf(name, sizeof name, "%.*s", (int)(len - pl), p + pl);
            const dpc_field *f = dpc_field_find(t, name, base); /* dotted: nested fields */
            if (f) return f;
        }
        p = e ? e + 1 : NULL;
    }
    return NULL;
}

/* "WORD" -> "WORD (default)" at the default's word of an enum's help. */
static void mark_default_word(opt_spec *o, const char *word)
{
    size_t wl = strlen(word);
    for (const char *h = o->help; h && (h = strstr(h, word)); h += wl) {
        int start = h == o->help || h[-1] == ' ' || h[-1] == '|';
        int end = h[wl] == 0 || h[wl] == ' ' || h[wl] == '|' || h[wl] == ',';
        if (!start || !end) continue;
        char buf[1024];
        snprintf(buf, sizeof buf, "%.*s (default)%s", (int)(h - o->help + wl), o->help, h + wl);
        o->help = help_with(buf, "");
        return;
    }
}

static void bind_one(opt_spec *o, const dpc_field *f)
{
    if (f->type == DPC_FIELD_ENUM) {
        const char *w = dpc_field_enum_name(f, (int)f->def);
        if (w && o->help && !strstr(o->help, "(default")) mark_default_word(o, w);
        return;
    }
    if (f->type != DPC_FIELD_DOUBLE && f->type != DPC_FIELD_SIZE && f->type != DPC_FIELD_U64 &&
        f->type != DPC_FIELD_INT)
        return;
    if (o->type == OPT_DOUBLE || o->type == OPT_UINT)
        o->type = f->type == DPC_FIELD_DOUBLE ? OPT_DOUBLE : OPT_UINT;
    o->flags &= ~(OPT_LO_OPEN | OPT_HI_OPEN);
    if (f->flags & DPC_FIELD_NO_RANGE) {
        o->lo = o->hi = 0;
    } else {
        o->lo = f->lo;
        o->hi = f->hi;
        if (f->flags & DPC_FIELD_LO_OPEN) o->flags |= OPT_LO_OPEN;
        if (f->flags & DPC_FIELD_HI_OPEN) o->flags |= OPT_HI_OPEN;
    }
    int unset = f->def == 0 && (f->flags & DPC_FIELD_UNSET_ZERO);
    if (!unset && !(f->flags & DPC_FIELD_DERIVED)) opt_field_default(o, f->def);
}

void opt_field_default(opt_spec *o, double def)
{
    if (!o->help || strstr(o->help, "(default")) return;
    char add[64]; /* the shortest form that reads back as the library's value */
    snprintf(add, sizeof add, " (default %.15g)", def);
    if (strtod(add + 10, NULL) != def) snprintf(add, sizeof add, " (default %.17g)", def);
    o->help = help_with(o->help, add);
}

void opt_field_bind(opt_spec *const *specs, const dpc_field_table *t, const char *prefix)
{
    for (size_t i = 0; specs[i]; i++) {
        size_t base;
        const dpc_field *f = param_field(specs[i], t, prefix, &base);
        if (f) bind_one(specs[i], f);
    }
}

void opt_field_bind_as(opt_spec *o, const dpc_field_table *t, const char *name)
{
    const dpc_field *f = dpc_field_find(t, name, NULL);
    if (f) bind_one(o, f);
}

void opt_field_read(opt_set *s, opt_spec *const *specs, const dpc_field_table *t, void *obj,
                    const char *prefix)
{
    for (size_t i = 0; specs[i]; i++) {
        const opt_spec *o = specs[i];
        size_t base = 0;
        const dpc_field *f = param_field(o, t, prefix, &base);
        if (!f) continue;
        char *m = (char *)obj + base;
        double cur = dpc_field_get(f, m), v = cur;
        if (f->type == DPC_FIELD_ENUM && o->type == OPT_CHOICE) v = opt_word(s, o, (int)cur);
        else if (f->type == DPC_FIELD_DOUBLE) v = opt_dbl(s, o, cur);
        else if (f->type != DPC_FIELD_ENUM) v = (double)opt_u64(s, o, (uint64_t)cur);
        else continue;
        if (v != cur && dpc_field_set(f, m, v, NULL) != DPC_OK) {
            /* unreachable: the parser checked the value against the field's range */
        }
    }
}

void opt_field_dry(const dpc_field_table *t, const void *obj, const char *prefix)
{
    for (size_t i = 0; i < t->count; i++) {
        const dpc_field *f = &t->fields[i];
        const char *m = (const char *)obj + f->offset;
        char key[128];
        snprintf(key, sizeof key, "%s%s", prefix, f->name);
        double v = dpc_field_get(f, obj);
        switch (f->type) {
        case DPC_FIELD_DOUBLE: opt_dry_num(key, v); break;
        case DPC_FIELD_INT:
            if (v < 0) {
                opt_dry_num(key, v);
                break;
            }
            opt_dry_uint(key, (uint64_t)v);
            break;
        case DPC_FIELD_SIZE:
        case DPC_FIELD_BOOL: opt_dry_uint(key, (uint64_t)v); break;
        case DPC_FIELD_U64: {
            uint64_t u;
            memcpy(&u, m, sizeof u);
            opt_dry_uint(key, u);
            break;
        }
        case DPC_FIELD_ENUM: {
            const char *nm = dpc_field_enum_name(f, (int)v);
            opt_dry_str(key, nm ? nm : "unknown");
            break;
        }
        case DPC_FIELD_STRING: {
            const char *s;
            memcpy(&s, m, sizeof s);
            opt_dry_str(key, s);
            break;
        }
        default: break;
        }
    }
}

void opt_field_pack(const dpc_field_table *t, const void *recs, size_t n, double *v)
{
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < t->count; k++) {
            double x = dpc_field_get(&t->fields[k], (const char *)recs + i * t->size);
            v[t->count * i + k] = isnan(x) && t->fields[k].type != DPC_FIELD_DOUBLE ? 0 : x;
        }
}

void opt_field_unpack(const dpc_field_table *t, const double *v, size_t n, void *recs)
{
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < t->count; k++) {
            const dpc_field *f = &t->fields[k];
            char *rec = (char *)recs + i * t->size;
            if (f->type == DPC_FIELD_DOUBLE) /* bit for bit, NaN included */
                memcpy(rec + f->offset, &v[t->count * i + k], sizeof(double));
            else if (dpc_field_set(f, rec, v[t->count * i + k], NULL) != DPC_OK) {
                /* a value out of the type's range (an edited file): the field keeps its value */
            }
        }
}
