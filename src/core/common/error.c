/* error.c — status names and error-message formatting (no global state). */
#include "dpcorr/common.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *dpc_status_str(dpc_status s)
{
    switch (s) {
    case DPC_OK: return "ok";
    case DPC_E_INVALID: return "invalid argument";
    case DPC_E_NOMEM: return "out of memory";
    case DPC_E_IO: return "i/o error";
    case DPC_E_FORMAT: return "malformed input";
    case DPC_E_NUMERIC: return "numerical error";
    case DPC_E_PRIVACY: return "privacy parameters cannot be met";
    case DPC_E_UNSUPPORTED: return "unsupported";
    case DPC_E_RANGE: return "size out of range";
    case DPC_E_STATE: return "wrong state";
    case DPC_E_CANCELLED: return "cancelled";
    }
    return "unknown status";
}

dpc_status dpc_error_set(dpc_error *err, dpc_status st, const char *fmt, ...)
{
    if (err) {
        err->status = st;
        err->field[0] = '\0';
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return st;
}

dpc_status dpc_error_param(dpc_error *err, dpc_status st, const char *field, const char *fmt,
                           ...)
{
    if (err) {
        err->status = st;
        snprintf(err->field, sizeof err->field, "%s", field ? field : "");
        int n = snprintf(err->msg, sizeof err->msg, "%s: ", err->field);
        if (n < 0 || (size_t)n >= sizeof err->msg) return st;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg + n, sizeof err->msg - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return st;
}

dpc_status dpc_error_nest(dpc_error *err, const char *parent)
{
    if (!err) return DPC_E_INVALID;
    char field[DPC_ERROR_FIELD_LEN], rest[DPC_ERROR_MSG_LEN];
    size_t fl = strnlen(err->field, sizeof err->field);
    if (fl && !strncmp(err->msg, err->field, fl) && !strncmp(err->msg + fl, ": ", 2))
        snprintf(rest, sizeof rest, "%s", err->msg + fl + 2);
    else
        snprintf(rest, sizeof rest, "%s", err->msg);
    if (fl) snprintf(field, sizeof field, "%s.%.*s", parent, (int)fl, err->field);
    else snprintf(field, sizeof field, "%s", parent);
    snprintf(err->field, sizeof err->field, "%s", field);
    size_t n = strlen(field), cap = sizeof err->msg - 1;
    memcpy(err->msg, field, n); /* n < DPC_ERROR_FIELD_LEN < cap - 2 */
    memcpy(err->msg + n, ": ", 2);
    n += 2;
    size_t nr = strlen(rest);
    if (nr > cap - n) nr = cap - n;
    memcpy(err->msg + n, rest, nr);
    err->msg[n + nr] = '\0';
    return err->status;
}

dpc_status dpc_error_prefix(dpc_error *err, const char *fmt, ...)
{
    if (!err) return DPC_E_INVALID;
    char head[DPC_ERROR_MSG_LEN], old[DPC_ERROR_MSG_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    old[sizeof old - 1] = '\0';
    size_t nh = strlen(head), cap = sizeof err->msg - 1;
    if (nh > cap) nh = cap;
    memcpy(err->msg, head, nh);
    size_t no = strlen(old);
    if (no > cap - nh) no = cap - nh;
    memcpy(err->msg + nh, old, no);
    err->msg[nh + no] = '\0';
    return err->status;
}

const char *dpc_version(void) { return DPC_VERSION_STRING; }
