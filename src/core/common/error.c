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
    }
    return "unknown status";
}

dpc_status dpc_error_set(dpc_error *err, dpc_status st, const char *fmt, ...)
{
    if (err) {
        err->status = st;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return st;
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
