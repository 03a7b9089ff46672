/* jw.h — a small JSON writer for the tool's reports and --json outputs (commas and nesting are
 * tracked, so writers cannot forget a separator). Numbers are written with %.17g (exact round
 * trip), NaN as null and infinities as the strings "inf" / "-inf". Strings (keys and values) are
 * always valid UTF-8: a byte that is not part of a well-formed UTF-8 sequence is written as
 * \ufffd (U+FFFD, the replacement character); controls are \u-escaped. Members of the top-level
 * object and the elements of its arrays start on their own lines; deeper levels stay inline.
 *
 *   jw w;  jw_begin(&w, f);  jw_str(&w, "kind", "nu");  jw_obj(&w, "config");
 *   jw_num(&w, "lr", 0.1);  jw_end(&w);  jw_finish(&w);      // {"kind": "nu", "config": {...}}
 */
#ifndef DPCORR_TOOLS_JW_H
#define DPCORR_TOOLS_JW_H

#include "dpcorr/field.h"

#include <stdio.h>

#define JW_DEPTH 16

typedef struct jw {
    FILE *f;
    int depth;
    int count[JW_DEPTH];   /* members written at each level */
    char close[JW_DEPTH];  /* '}' or ']' */
    int oneline;           /* everything on one line (stdout --json) */
    struct dpc_io_out *out;/* the safe output behind f (frame_report_open), or NULL */
} jw;

void jw_begin(jw *w, FILE *f);        /* "{" */
void jw_begin_line(jw *w, FILE *f);   /* "{", the whole object on one line */
void jw_finish(jw *w);                /* closes every open level and ends the line */
void jw_obj(jw *w, const char *key);  /* "key": {   (key NULL inside arrays) */
void jw_arr(jw *w, const char *key);  /* "key": [ */
void jw_end(jw *w);                   /* } or ] */
void jw_num(jw *w, const char *key, double v);
void jw_int(jw *w, const char *key, long long v);
/* A numeric or enum field of a library table (dpcorr/field.h) under its name: an ENUM by its
 * name, a double as a number, the integer types as integers; base is the struct it describes. */
void jw_field(jw *w, const dpc_field *f, const void *base);
void jw_str(jw *w, const char *key, const char *v);
void jw_bool(jw *w, const char *key, int v);
void jw_null(jw *w, const char *key);
/* A member whose value is already JSON text (e.g. dpc_ledger_json). */
void jw_raw(jw *w, const char *key, const char *json);
/* Numbers of an array (one line). */
void jw_nums(jw *w, const char *key, const double *v, size_t n);

#endif
