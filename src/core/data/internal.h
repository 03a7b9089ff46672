/* internal.h — helpers shared by the data module's files (not installed, not public API):
 * a zlib-backed reader (plain or gzip, chosen by the file's magic bytes) with a line iterator,
 * strict number parsing, classification-label bookkeeping and the preprocessing log. */
#ifndef DPCORR_SRC_DATA_INTERNAL_H
#define DPCORR_SRC_DATA_INTERNAL_H

#include "dpcorr/data.h"

#include <stdint.h>
#include <zlib.h>

/* ==== Reader ================================================================================ */

typedef struct dpc__reader {
    gzFile f;
    const char *path;   /* borrowed, for messages */
    unsigned char *buf; /* chunk buffer (line mode) */
    size_t cap, len, pos;
    char *line; /* current line (line mode), NUL-terminated, '\n' and a final '\r' removed */
    size_t line_cap;
    size_t lineno;   /* 1-based number of the current line */
    uint64_t offset; /* decompressed bytes consumed so far (binary mode) */
    int eof;
} dpc__reader;

/* Opens path (plain or gzip). DPC_E_IO naming the path on failure. */
dpc_status dpc__reader_open(dpc__reader *r, const char *path, dpc_error *err);
void dpc__reader_close(dpc__reader *r);

/* Reads up to n bytes into dst; *got receives the count (< n only at the end of the data).
 * Truncated or corrupt gzip streams and read errors are reported (DPC_E_FORMAT / DPC_E_IO). */
dpc_status dpc__reader_read(dpc__reader *r, void *dst, size_t n, size_t *got, dpc_error *err);

/* Next line into r->line (length in *len). Returns 1 = a line, 0 = end of file, or -status on
 * failure with err set (DPC_E_NOMEM, DPC_E_IO, DPC_E_FORMAT for NUL bytes / corrupt gzip). */
int dpc__reader_line(dpc__reader *r, size_t *len, dpc_error *err);

/* ==== Numbers =============================================================================== */

/* Strictly parses the whole of s (leading/trailing blanks allowed) as a finite double.
 * Returns 0 = ok, 1 = empty, 2 = not a number, 3 = NaN/Inf or overflow. */
int dpc__parse_double(const char *s, double *out);
/* Message fragment for a dpc__parse_double result ("empty field", "not a number", ...). */
const char *dpc__parse_double_why(int code);

/* ==== Classification labels ================================================================= */

typedef struct dpc__labels {
    size_t k;         /* public class count, 0 = infer */
    size_t max_seen;  /* largest class index so far (after mapping -1 -> 0) */
    size_t line_neg1; /* first line with label -1 (0 = none) */
    size_t line_zero; /* first line with label 0 (0 = none) */
    int any;
} dpc__labels;

/* Maps a parsed numeric label v (file path, line) to a class index: integer in 0..K-1, or -1
 * read as 0 under the binary convention (K == 2 or inferred; an error if 0 also occurs).
 * DPC_E_FORMAT naming path:line and the fault. */
dpc_status dpc__label_class(dpc__labels *L, double v, const char *path, size_t line, double *out,
                            dpc_error *err);
/* The class count after all labels: the public K, or max_seen + 1 (inferred). */
size_t dpc__labels_count(const dpc__labels *L);

/* ==== Loaders ============================================================================== */

/* One Fashion-MNIST split (test = 0: train, 1: t10k) from dir (NULL = default), first
 * max_records (0 = all). */
dpc_status dpc__load_fm_part(dpc_dataset **out, const char *dir, int test, size_t max_records,
                             dpc_error *err);

/* npy.c: rows and features of a features .npy from its header (nothing else read). */
dpc_status dpc__npy_shape(const char *path, size_t *n, size_t *d, dpc_error *err);

/* synth.c: the generators for a window of rows: rows [first, first + count) of the set of n
 * (count 0: to the end; NULL: all), a shard of it when proper; the values of every row are those
 * of the whole set's. */
typedef struct dpc__rows {
    size_t first, count;
} dpc__rows;
dpc_status dpc__synth_linreg(dpc_dataset **out, const dpc_rng *rng, uint64_t stream_index,
                             size_t n, size_t d, const double *lambda, double noise_std,
                             const double *w_star, const char *spectrum_desc, const dpc__rows *w,
                             dpc_error *err);
dpc_status dpc__synth_mean(dpc_dataset **out, const dpc_rng *rng, uint64_t stream_index, size_t n,
                           size_t d, const double *mean, double spread, double radius,
                           const dpc__rows *w, dpc_error *err);
dpc_status dpc__synth_logistic(dpc_dataset **out, const dpc_rng *rng, uint64_t stream_index,
                               size_t n, size_t d, double margin, double flip_prob,
                               const double *w_star, const dpc__rows *w, dpc_error *err);

/* ==== Dataset log =========================================================================== */

/* Appends "; <text>" (or "<text>" if empty) to ds->preprocessing, truncating with "..." if the
 * log is full. data_dependent != 0 also sets ds->data_dependent and tags the entry. */
void dpc__dataset_note(dpc_dataset *ds, int data_dependent, const char *fmt, ...) DPC_PRINTF(3, 4);

/* snprintf into ds->source. */
void dpc__dataset_source(dpc_dataset *ds, const char *fmt, ...) DPC_PRINTF(2, 3);

/* Euclidean norm of v (n), scaled to avoid overflow/underflow. */
double dpc__norm2(const double *v, size_t n);

#endif
