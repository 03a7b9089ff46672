/* dpcorr/common.h — status codes, error reporting and API macros shared by every module.
 *
 * Contract used across the whole library:
 *   - Every fallible function returns a dpc_status (DPC_OK == 0) and is marked DPC_NODISCARD.
 *   - It takes an optional `dpc_error *err` as its last argument. On failure the library writes
 *     a one-line, human-readable message into err->msg naming the parameter, field, file and line
 *     at fault (e.g. "coeffs.txt:17: expected a number, got 'abc'"). err may be NULL.
 *   - The library never prints, never exits, never keeps global mutable state.
 *   - Objects come in dpc_<module>_new / dpc_<module>_free pairs; _free accepts NULL.
 *   - Sizes and counts are size_t; all privacy-critical arithmetic is double.
 */
#ifndef DPCORR_COMMON_H
#define DPCORR_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define DPC_API __attribute__((visibility("default")))
#define DPC_NODISCARD __attribute__((warn_unused_result))
#define DPC_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define DPC_API
#define DPC_NODISCARD
#define DPC_PRINTF(fmt, args)
#endif

#define DPC_VERSION_STRING "0.1.0"
#define DPC_VERSION_NUMBER 100 /* major*10000 + minor*100 + patch */

/* Status codes. Values are stable (they appear in reports and exit paths). */
typedef enum dpc_status {
    DPC_OK = 0,
    DPC_E_INVALID = 1,     /* a parameter is out of its domain (message names it) */
    DPC_E_NOMEM = 2,       /* allocation failed or a size computation overflowed */
    DPC_E_IO = 3,          /* a file could not be opened, read or written */
    DPC_E_FORMAT = 4,      /* malformed input file (message names file, line/record, field) */
    DPC_E_NUMERIC = 5,     /* NaN/Inf, overflow, or a numerical method failed to converge */
    DPC_E_PRIVACY = 6,     /* impossible privacy parameters or a budget that cannot be met */
    DPC_E_UNSUPPORTED = 7, /* valid request this build/mechanism cannot serve */
    DPC_E_RANGE = 8,       /* a dimension or size beyond what is supported */
    DPC_E_STATE = 9,       /* object used in the wrong state (e.g. checkpoint of another run) */
    DPC_E_CANCELLED = 10   /* a progress callback asked to stop (dpc_progress) */
} dpc_status;

/* Work limits (bounded running time). A library call that reports no progress estimates its
 * cost before it starts and refuses one above DPC_WORK_LIMIT elementary operations with
 * DPC_E_RANGE, naming the parameter that drives the cost (e.g. "steps", "part.k", "bands") and
 * giving the estimate and the limit: about 1e10 multiply-adds, or series terms and
 * transcendental evaluations weighted by their cost, which is 5-20 seconds on one core. Each
 * function documents its estimate in its header ("Work: ..."). Calls that may legitimately run
 * longer (strategy optimizers, long simulations) take a dpc_progress instead and stop when it
 * asks to. */
#define DPC_WORK_LIMIT 1e10

/* Progress of a long computation: fn(ctx, done, total) is called now and then (at most every
 * few milliseconds of work) with the work done so far and the expected total, in the same units
 * (e.g. iterations); total may grow. A non-zero return cancels the computation, which frees what
 * it allocated and returns DPC_E_CANCELLED. fn == NULL: no reports. */
typedef int (*dpc_progress_fn)(void *ctx, double done, double total);
typedef struct dpc_progress {
    dpc_progress_fn fn;
    void *ctx;
} dpc_progress;

#define DPC_ERROR_MSG_LEN 512
#define DPC_ERROR_FIELD_LEN 64

/* Error detail. Zero-initialise (or leave untouched): the library only writes on failure.
 * `field` names the parameter at fault with the library's own name for it: the field of the
 * config struct or the function argument ("epsilon", "batch", "noise_multiplier"), nested with
 * dots for sub-structs ("mech.nu", "part.k"); "" when no single parameter is at fault (a
 * malformed file names its path and line in msg instead). msg is complete on its own and starts
 * with "<field>: " when field is set. Front ends (the CLI, bindings) map field to their own
 * spelling of the parameter; the library never names a command-line flag. */
typedef struct dpc_error {
    dpc_status status;
    char field[DPC_ERROR_FIELD_LEN];
    char msg[DPC_ERROR_MSG_LEN];
} dpc_error;

/* Static, never-NULL name of a status ("ok", "invalid argument", ...). */
DPC_API const char *dpc_status_str(dpc_status s);

/* Writes the formatted message into err (if non-NULL), clears err->field, and returns st. */
DPC_API dpc_status dpc_error_set(dpc_error *err, dpc_status st, const char *fmt, ...)
    DPC_PRINTF(3, 4);

/* The parameter `field` is at fault: sets err->field and msg = "<field>: <formatted>". */
DPC_API dpc_status dpc_error_param(dpc_error *err, dpc_status st, const char *field,
                                   const char *fmt, ...) DPC_PRINTF(4, 5);

/* Prefixes an existing message with context ("mechanism: " + msg); keeps field. Returns
 * err->status. */
DPC_API dpc_status dpc_error_prefix(dpc_error *err, const char *fmt, ...) DPC_PRINTF(2, 3);

/* The error came from a sub-struct `parent` of the caller's parameters: field becomes
 * "<parent>.<field>" (or "<parent>" when no field was set) and the message's leading
 * "<field>: " is rewritten to match. Returns err->status (DPC_E_INVALID for err == NULL). */
DPC_API dpc_status dpc_error_nest(dpc_error *err, const char *parent);

/* Library version string, for comparing the header with the linked library. */
DPC_API const char *dpc_version(void);

#ifdef __cplusplus
}
#endif
#endif /* DPCORR_COMMON_H */
