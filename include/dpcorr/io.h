/* dpcorr/io.h — small text readers shared by the library and the tool.
 *
 * Number files: whitespace/comma separated decimal numbers, '#' starts a comment to the end of
 * the line, blank lines ignored. Every failure names the file, line and token at fault. */
#ifndef DPCORR_IO_H
#define DPCORR_IO_H

#include "dpcorr/common.h"

#include <stdint.h>
#include <stdio.h>

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

/* ---- Output files: never destroying an input, never left half written ----------------------
 *
 * Front ends check every output path before any work (dpc_io_check_output) and compare it with
 * every input and every other output (dpc_io_same_file), then write it with dpc_io_out_*: a
 * temporary beside the target ("NAME.tmp.PID"), every write and the close checked, fsync, then
 * a rename over the target, so a failed write (a full disk, a file size limit) leaves the
 * previous file as it was. A symbolic link is written through: the file it points to is
 * replaced, the link stays a link. A dangling link is refused (there is nothing to write
 * through to). */

/* 1 when a and b name the same file, else 0. An existing path is identified by its device and
 * inode after following links (so hard links, symbolic links and "dir/../x" spellings of one
 * file are the same); a path not there yet by its directory's device and inode (links
 * followed) and its last component. A path whose directory cannot be resolved is the same as
 * nothing. */
DPC_API int dpc_io_same_file(const char *a, const char *b);

/* Whether path can be written by dpc_io_out_open, for a check before any work: the path (its
 * links resolved) is shorter than PATH_MAX and its last component leaves DPC_IO_TMP_SUFFIX bytes
 * of the directory's NAME_MAX for the temporary; a link resolves to an existing file; its
 * directory exists and is writable; an existing target is a writable regular file (never a
 * directory, device, FIFO or socket). DPC_E_INVALID with field "path" and a message naming
 * path and the reason ("cannot write P (...)" or "refusing to write P: ..."). */
#define DPC_IO_TMP_SUFFIX 16
DPC_API DPC_NODISCARD dpc_status dpc_io_check_output(const char *path, dpc_error *err);

/* A file being written safely (opaque). */
typedef struct dpc_io_out dpc_io_out;
/* Checks path (dpc_io_check_output) and creates the temporary beside its target (the target's
 * mode when it exists, else 0666 less the umask). *out is the caller's: commit or abort it. */
DPC_API DPC_NODISCARD dpc_status dpc_io_out_open(dpc_io_out **out, const char *path,
                                                 dpc_error *err);
/* The stream to write to (NULL for a NULL handle). */
DPC_API FILE *dpc_io_out_file(dpc_io_out *o);
/* Flushes, checks every write (ferror), fsyncs and closes the temporary, then renames it over
 * the target; on any failure the temporary is removed and the target is unchanged (DPC_E_IO
 * naming the path and the reason). After a successful rename, the stale "TARGET.tmp.PID" of
 * writers that no longer exist (killed mid-write) are removed; a live process's is kept. Frees
 * o in every case. */
DPC_API DPC_NODISCARD dpc_status dpc_io_out_commit(dpc_io_out *o, dpc_error *err);
/* Closes and removes the temporary, the target unchanged; frees o (NULL: nothing). */
DPC_API void dpc_io_out_abort(dpc_io_out *o);

/* A JSON writer for reports and --json outputs, onto the caller's stream (the library never
 * writes to stdout by itself; a buffer is a stream from fmemopen/open_memstream). Commas and
 * nesting are tracked, so writers cannot forget a separator. Numbers are written with %.17g
 * (exact round trip), NaN as null and infinities as the strings "inf" / "-inf". Strings (keys
 * and values) are always valid UTF-8: a byte that is not part of a well-formed UTF-8 sequence is
 * written as \ufffd (U+FFFD); controls are \u-escaped. Members of the top-level object and the
 * elements of its arrays start on their own lines; deeper levels stay inline. Keys are NULL
 * inside arrays. Nesting deeper than DPC_JSON_DEPTH levels is not supported.
 *
 *   dpc_json_writer w;  dpc_json_begin(&w, f);  dpc_json_str(&w, "kind", "nu");
 *   dpc_json_obj(&w, "config");  dpc_json_num(&w, "lr", 0.1);  dpc_json_finish(&w);
 */
#define DPC_JSON_DEPTH 16
typedef struct dpc_json_writer {
    FILE *f;
    int depth;
    int count[DPC_JSON_DEPTH];  /* members written at each level */
    char close[DPC_JSON_DEPTH]; /* '}' or ']' */
    int oneline;                /* everything on one line */
    dpc_io_out *out;            /* the safe output behind f, if the caller keeps one there */
} dpc_json_writer;

DPC_API void dpc_json_begin(dpc_json_writer *w, FILE *f);      /* "{" */
DPC_API void dpc_json_begin_line(dpc_json_writer *w, FILE *f); /* "{", all on one line */
DPC_API void dpc_json_finish(dpc_json_writer *w); /* closes every open level, ends the line */
DPC_API void dpc_json_obj(dpc_json_writer *w, const char *key); /* "key": { */
DPC_API void dpc_json_arr(dpc_json_writer *w, const char *key); /* "key": [ */
DPC_API void dpc_json_end(dpc_json_writer *w);                  /* } or ] */
DPC_API void dpc_json_num(dpc_json_writer *w, const char *key, double v);
DPC_API void dpc_json_int(dpc_json_writer *w, const char *key, long long v);
DPC_API void dpc_json_str(dpc_json_writer *w, const char *key, const char *v);
DPC_API void dpc_json_bool(dpc_json_writer *w, const char *key, int v);
DPC_API void dpc_json_null(dpc_json_writer *w, const char *key);
/* A 64-bit hash (dpc_params_hash) as a string of 16 lowercase hex digits: exact, where a
 * JSON number would round it. */
DPC_API void dpc_json_hash(dpc_json_writer *w, const char *key, uint64_t h);
/* A member whose value is already JSON text (e.g. dpc_ledger_json). */
DPC_API void dpc_json_raw(dpc_json_writer *w, const char *key, const char *json);
/* Numbers of an array (one line). */
DPC_API void dpc_json_nums(dpc_json_writer *w, const char *key, const double *v, size_t n);
/* A numeric or enum field of a library table (dpcorr/field.h) under its name: an ENUM by its
 * name, a double as a number, a CHAR as its text (dpc_field_format_char: ",", "space"), the
 * integer types as integers; base is the struct it describes. */
struct dpc_field;
DPC_API void dpc_json_field(dpc_json_writer *w, const struct dpc_field *f, const void *base);

#ifdef __cplusplus
}
#endif
#endif
