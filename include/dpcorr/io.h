/* dpcorr/io.h — small text readers shared by the library and the tool.
 *
 * Number files: whitespace/comma separated decimal numbers, '#' starts a comment to the end of
 * the line, blank lines ignored. Every failure names the file, line and token at fault. */
#ifndef DPCORR_IO_H
#define DPCORR_IO_H

#include "dpcorr/common.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Reads every number of a file in order (at most max_count; 0 = at most 2^27). Non-finite values
 * are rejected. Every reader here is bounded: a line over 64 MiB, a NUL byte (a binary file or a
 * device such as /dev/zero or /dev/urandom) or too many numbers is a DPC_E_FORMAT error naming
 * path:line, at once. *out is malloc'ed, caller frees. */
DPC_API DPC_NODISCARD dpc_status dpc_io_read_numbers(const char *path, size_t max_count,
                                                     double **out, size_t *count, dpc_error *err);

/* Reads an n x n lower-triangular matrix, one row per non-empty line: row t holds either t+1
 * numbers (the triangle) or n numbers whose entries above the diagonal must be 0. If n == 0 the
 * size is taken from the number of rows. *out (n*n, row-major, zero above the diagonal) is
 * malloc'ed; *n_out receives n. */
DPC_API DPC_NODISCARD dpc_status dpc_io_read_lower_triangular(const char *path, size_t n,
                                                              double **out, size_t *n_out,
                                                              dpc_error *err);

/* The strict number rules of every option and spec value (the CLI's options, the KAN and data
 * spec grammars): a finite decimal number made of digits, '.', 'e'/'E' and signs only (no hex,
 * inf, nan, leading or trailing space). 1 and *out on success, 0 otherwise (*out untouched). */
DPC_API int dpc_io_parse_double(const char *text, double *out);

/* A non-negative integer: digits (up to 2^64 - 1 when big, else 2^53), or a decimal or exponent
 * form whose value is an exact integer <= 2^53 ("1e6"). No sign, no spaces. 1 or 0 as above. */
DPC_API int dpc_io_parse_uint(const char *text, uint64_t *out, int big);

#ifdef __cplusplus
}
#endif
#endif
