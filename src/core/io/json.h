/* json.h — a minimal strict JSON reader (RFC 8259) into a small tree, for strategy files (not
 * public). Every value records the line where it starts, so callers can name file:line. */
#ifndef DPCORR_SRC_IO_JSON_H
#define DPCORR_SRC_IO_JSON_H

#include <stddef.h>

typedef enum jv_type { JV_NULL, JV_BOOL, JV_NUM, JV_STR, JV_ARR, JV_OBJ } jv_type;

typedef struct jv {
    jv_type type;
    size_t line;      /* 1-based line of the first character */
    double num;       /* JV_NUM (finite), JV_BOOL (0/1) */
    char *str;        /* JV_STR: NUL-terminated (embedded NULs are rejected) */
    size_t n;         /* JV_ARR / JV_OBJ: number of items */
    struct jv *items; /* (n) */
    char **keys;      /* JV_OBJ: (n) keys, unique */
} jv;

/* Parses text[0..len). On success returns 1 and *out (free with dpc__json_free). On failure
 * returns 0 (*out = NULL), writes a message into msg and the line into *line; 
 * nomem is set to 1 if the failure was an allocation failure. Nesting depth is limited to 64. */
int dpc__json_parse(const char *text, size_t len, jv **out, char *msg, size_t msglen,
                    size_t *line, int *nomem);
void dpc__json_free(jv *v);

/* Object member by key, or NULL. */
const jv *dpc__json_get(const jv *obj, const char *key);

#endif
