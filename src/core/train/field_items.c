/* field_items.c — library-internal uses of the field tables (field_items.h): checkpoint items
 * and single-field checks written from a table, so a trainer's _save lists no field by hand. */
#include "train/field_items.h"
#include "common/util.h"

#include <math.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

const char *const dpc__calibration_names[2] = {"accountant", "paper"};

const char *dpc__field_what(const dpc_field *f, char *out, size_t cap)
{
    const char *d = f->doc ? f->doc : f->name, *c = strstr(d, ": ");
    size_t n = c ? (size_t)(c - d) : strlen(d);
    snprintf(out, cap, "%.*s", (int)n, d);
    return out;
}

void dpc__field_ckpt_items(dpc_ckpt *ck, const dpc_field_table *t, const void *obj)
{
    for (size_t i = 0; i < t->count; i++) {
        const dpc_field *f = &t->fields[i];
        char what[128];
        if (f->flags & DPC_FIELD_RUNTIME) continue;
        double v = dpc_field_get(f, obj);
        switch (f->type) {
        case DPC_FIELD_DOUBLE:
            dpc_ckpt_item_num(ck, f->name, dpc__field_what(f, what, sizeof what), v);
            break;
        case DPC_FIELD_U64: { /* exact beyond 2^53 */
            uint64_t u;
            memcpy(&u, (const char *)obj + f->offset, sizeof u);
            dpc_ckpt_item_count(ck, f->name, dpc__field_what(f, what, sizeof what), u);
            break;
        }
        case DPC_FIELD_SIZE:
        case DPC_FIELD_INT:
        case DPC_FIELD_BOOL:
        case DPC_FIELD_U32:
        case DPC_FIELD_CHAR: /* the byte */
            dpc_ckpt_item_count(ck, f->name, dpc__field_what(f, what, sizeof what),
                                (uint64_t)v);
            break;
        case DPC_FIELD_ENUM: {
            const char *nm = dpc_field_enum_name(f, (int)v);
            dpc_ckpt_item_str(ck, f->name, dpc__field_what(f, what, sizeof what),
                              nm ? nm : "unknown");
            break;
        }
        case DPC_FIELD_LONG: /* signed: a count would wrap; exact below 2^53 */
            dpc_ckpt_item_num(ck, f->name, dpc__field_what(f, what, sizeof what), v);
            break;
        default: break;
        }
    }
}

dpc_status dpc__field_check_one(const dpc_field_table *t, const void *obj, const char *name,
                                dpc_error *err)
{
    size_t base = 0;
    const dpc_field *f = dpc_field_find(t, name, &base);
    if (!f) return dpc_error_param(err, DPC_E_INVALID, name, "is not a field of %s", t->name);
    char prefix[DPC_ERROR_FIELD_LEN];
    const char *dot = strrchr(name, '.');
    snprintf(prefix, sizeof prefix, "%.*s", dot ? (int)(dot - name + 1) : 0, name);
    return dpc_field_check_value(f, prefix, dpc_field_get(f, (const char *)obj + base), err);
}

static dpc_status overflow_rec(const dpc_field_table *t, const char *base, const char *prefix,
                               int depth, dpc_error *err)
{
    for (size_t i = 0; i < t->count; i++) {
        const dpc_field *f = &t->fields[i];
        if (f->type == DPC_FIELD_STRUCT && f->sub && depth < 8) {
            char sub[DPC_ERROR_FIELD_LEN];
            snprintf(sub, sizeof sub, "%s%s.", prefix, f->name);
            dpc_status st = overflow_rec(f->sub, base + f->offset, sub, depth + 1, err);
            if (st) return st;
        } else if (f->type == DPC_FIELD_DOUBLE && f->hi == DPC__SCALE_MAX) {
            double v = dpc_field_get(f, base);
            if (isfinite(v) && v > DPC__SCALE_MAX) {
                char path[DPC_ERROR_FIELD_LEN];
                snprintf(path, sizeof path, "%s%s", prefix, f->name);
                return dpc_error_param(err, DPC_E_RANGE, path,
                                       "%g overflows: must be at most 1e150", v);
            }
        }
    }
    return DPC_OK;
}

dpc_status dpc__field_check_overflow(const dpc_field_table *t, const void *obj, dpc_error *err)
{
    return overflow_rec(t, (const char *)obj, "", 0, err);
}
