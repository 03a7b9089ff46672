/* json.c — minimal strict JSON reader (RFC 8259): objects, arrays, strings (escapes including
 * \uHHHH (4 hex digits) with surrogate pairs, encoded as UTF-8), numbers in the JSON grammar only (no NaN,
 * Infinity, hex, leading '+' or zeros), true/false/null. Duplicate keys, trailing commas,
 * control characters in strings and trailing data are errors. */
#include "io/json.h"
#include "common/util.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSON_MAX_DEPTH 64

typedef struct jp {
    const char *s, *end;
    size_t line;
    char *msg;
    size_t msglen;
    size_t *errline;
    int *nomem;
    int failed;
} jp;

static int fail(jp *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(jp *p, const char *fmt, ...)
{
    if (p->failed) return 0;
    p->failed = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->msg, p->msglen, fmt, ap);
    va_end(ap);
    *p->errline = p->line;
    return 0;
}

static int oom(jp *p)
{
    *p->nomem = 1;
    return fail(p, "out of memory");
}

static void skip_ws(jp *p)
{
    while (p->s < p->end) {
        char c = *p->s;
        if (c == '\n') p->line++;
        else if (c != ' ' && c != '\t' && c != '\r') break;
        p->s++;
    }
}

static void free_items(jv *v)
{
    if (v->type == JV_STR) free(v->str);
    if (v->type == JV_ARR || v->type == JV_OBJ) {
        for (size_t i = 0; i < v->n; i++) {
            free_items(&v->items[i]);
            if (v->keys) free(v->keys[i]);
        }
        free(v->items);
        free(v->keys);
    }
}

void dpc__json_free(jv *v)
{
    if (!v) return;
    free_items(v);
    free(v);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int read_hex4(jp *p, unsigned *out)
{
    if (p->end - p->s < 4) return fail(p, "truncated \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(p->s[i]);
        if (h < 0) return fail(p, "invalid \\u escape");
        v = v * 16 + (unsigned)h;
    }
    p->s += 4;
    *out = v;
    return 1;
}

static int parse_string(jp *p, char **out)
{
    /* p->s at the opening quote */
    p->s++;
    size_t cap = 16, n = 0;
    char *buf = malloc(cap);
    if (!buf) return oom(p);
    for (;;) {
        if (p->s >= p->end) {
            free(buf);
            return fail(p, "unterminated string");
        }
        unsigned char c = (unsigned char)*p->s++;
        char tmp[4];
        size_t tn = 0;
        if (c == '"') break;
        if (c < 0x20) {
            free(buf);
            return fail(p, "control character in a string");
        }
        if (c != '\\') {
            tmp[tn++] = (char)c;
        } else {
            if (p->s >= p->end) {
                free(buf);
                return fail(p, "unterminated escape");
            }
            char e = *p->s++;
            unsigned cp = 0;
            switch (e) {
            case '"': tmp[tn++] = '"'; break;
            case '\\': tmp[tn++] = '\\'; break;
            case '/': tmp[tn++] = '/'; break;
            case 'b': tmp[tn++] = '\b'; break;
            case 'f': tmp[tn++] = '\f'; break;
            case 'n': tmp[tn++] = '\n'; break;
            case 'r': tmp[tn++] = '\r'; break;
            case 't': tmp[tn++] = '\t'; break;
            case 'u':
                if (!read_hex4(p, &cp)) {
                    free(buf);
                    return 0;
                }
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    unsigned lo;
                    if (p->end - p->s < 2 || p->s[0] != '\\' || p->s[1] != 'u') {
                        free(buf);
                        return fail(p, "unpaired surrogate in \\u escape");
                    }
                    p->s += 2;
                    if (!read_hex4(p, &lo) || lo < 0xDC00 || lo > 0xDFFF) {
                        free(buf);
                        return fail(p, "unpaired surrogate in \\u escape");
                    }
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                    free(buf);
                    return fail(p, "unpaired surrogate in \\u escape");
                }
                if (cp == 0) {
                    free(buf);
                    return fail(p, "\\u0000 in a string is not supported");
                }
                if (cp < 0x80) tmp[tn++] = (char)cp;
                else if (cp < 0x800) {
                    tmp[tn++] = (char)(0xC0 | (cp >> 6));
                    tmp[tn++] = (char)(0x80 | (cp & 0x3F));
                } else if (cp < 0x10000) {
                    tmp[tn++] = (char)(0xE0 | (cp >> 12));
                    tmp[tn++] = (char)(0x80 | ((cp >> 6) & 0x3F));
                    tmp[tn++] = (char)(0x80 | (cp & 0x3F));
                } else {
                    tmp[tn++] = (char)(0xF0 | (cp >> 18));
                    tmp[tn++] = (char)(0x80 | ((cp >> 12) & 0x3F));
                    tmp[tn++] = (char)(0x80 | ((cp >> 6) & 0x3F));
                    tmp[tn++] = (char)(0x80 | (cp & 0x3F));
                }
                break;
            default: free(buf); return fail(p, "invalid escape '\\%c'", e);
            }
        }
        if (n + tn + 1 > cap) {
            cap *= 2;
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                return oom(p);
            }
            buf = nb;
        }
        memcpy(buf + n, tmp, tn);
        n += tn;
    }
    buf[n] = '\0';
    *out = buf;
    return 1;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static int parse_number(jp *p, double *out)
{
    const char *s = p->s, *e = p->end, *q = s;
    if (q < e && *q == '-') q++;
    if (q >= e || !is_digit(*q)) return fail(p, "invalid number");
    if (*q == '0') {
        q++;
        if (q < e && is_digit(*q)) return fail(p, "invalid number (leading zero: expected 0, 0.x or a number without it)");
    } else {
        while (q < e && is_digit(*q)) q++;
    }
    if (q < e && *q == '.') {
        q++;
        if (q >= e || !is_digit(*q)) return fail(p, "invalid number (digit expected after '.')");
        while (q < e && is_digit(*q)) q++;
    }
    if (q < e && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < e && (*q == '+' || *q == '-')) q++;
        if (q >= e || !is_digit(*q)) return fail(p, "invalid number (exponent digits expected)");
        while (q < e && is_digit(*q)) q++;
    }
    size_t len = (size_t)(q - s);
    char small[64], *buf = len < sizeof small ? small : malloc(len + 1);
    if (!buf) return oom(p);
    memcpy(buf, s, len);
    buf[len] = '\0';
    double v = strtod(buf, NULL);
    if (buf != small) free(buf);
    if (!isfinite(v)) return fail(p, "number out of range");
    *out = v;
    p->s = q;
    return 1;
}

static int parse_value(jp *p, jv *v, int depth);

static int push(jp *p, jv *v, size_t *cap)
{
    if (v->n < *cap) return 1;
    size_t nc = *cap ? 2 * *cap : 4;
    jv *ni = realloc(v->items, nc * sizeof *ni);
    if (!ni) return oom(p);
    v->items = ni;
    if (v->type == JV_OBJ) {
        char **nk = realloc(v->keys, nc * sizeof *nk);
        if (!nk) return oom(p);
        v->keys = nk;
    }
    *cap = nc;
    return 1;
}

static int parse_container(jp *p, jv *v, int depth)
{
    int obj = *p->s == '{';
    char close = obj ? '}' : ']';
    v->type = obj ? JV_OBJ : JV_ARR;
    p->s++;
    size_t cap = 0;
    skip_ws(p);
    if (p->s < p->end && *p->s == close) {
        p->s++;
        return 1;
    }
    for (;;) {
        skip_ws(p);
        if (!push(p, v, &cap)) return 0;
        char *key = NULL;
        if (obj) {
            if (p->s >= p->end || *p->s != '"') return fail(p, "expected a key string");
            if (!parse_string(p, &key)) return 0;
            for (size_t i = 0; i < v->n; i++)
                if (!strcmp(v->keys[i], key)) {
                    fail(p, "duplicate key '%s' (expected each key once)", key);
                    free(key);
                    return 0;
                }
            skip_ws(p);
            if (p->s >= p->end || *p->s != ':') {
                free(key);
                return fail(p, "expected ':' after a key");
            }
            p->s++;
            skip_ws(p);
            v->keys[v->n] = key;
        }
        memset(&v->items[v->n], 0, sizeof v->items[v->n]);
        v->n++; /* counted before parsing so that a failure frees it */
        if (!parse_value(p, &v->items[v->n - 1], depth + 1)) return 0;
        skip_ws(p);
        if (p->s >= p->end) return fail(p, "unexpected end of file (missing '%c')", close);
        if (*p->s == ',') {
            p->s++;
            skip_ws(p);
            if (p->s < p->end && *p->s == close) return fail(p, "trailing comma (expected another item after ',')");
            continue;
        }
        if (*p->s == close) {
            p->s++;
            return 1;
        }
        return fail(p, "expected ',' or '%c'", close);
    }
}

static int match_word(jp *p, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(p->end - p->s) >= n && !memcmp(p->s, w, n)) {
        p->s += n;
        return 1;
    }
    return 0;
}

static int parse_value(jp *p, jv *v, int depth)
{
    if (depth > JSON_MAX_DEPTH) return fail(p, "nesting deeper than %d", JSON_MAX_DEPTH);
    skip_ws(p);
    v->line = p->line;
    if (p->s >= p->end) return fail(p, "unexpected end of file (value expected)");
    char c = *p->s;
    if (c == '{' || c == '[') return parse_container(p, v, depth);
    if (c == '"') {
        v->type = JV_STR;
        return parse_string(p, &v->str);
    }
    if (c == '-' || is_digit(c)) {
        v->type = JV_NUM;
        return parse_number(p, &v->num);
    }
    if (match_word(p, "true")) {
        v->type = JV_BOOL;
        v->num = 1;
        return 1;
    }
    if (match_word(p, "false")) {
        v->type = JV_BOOL;
        return 1;
    }
    if (match_word(p, "null")) {
        v->type = JV_NULL;
        return 1;
    }
    return fail(p, "unexpected character '%c' (expected a value: a number, a string, true, false, "
                   "null, [ or {)", c);
}

int dpc__json_parse(const char *text, size_t len, jv **out, char *msg, size_t msglen,
                    size_t *line, int *nomem)
{
    *out = NULL;
    *nomem = 0;
    jp p = {text, text + len, 1, msg, msglen, line, nomem, 0};
    jv *v = calloc(1, sizeof *v);
    if (!v) {
        *nomem = 1;
        snprintf(msg, msglen, "out of memory");
        *line = 1;
        return 0;
    }
    if (!parse_value(&p, v, 0)) {
        dpc__json_free(v);
        return 0;
    }
    skip_ws(&p);
    if (p.s != p.end) {
        fail(&p, "trailing data after the JSON value (expected the end of the file)");
        dpc__json_free(v);
        return 0;
    }
    *out = v;
    return 1;
}

const jv *dpc__json_get(const jv *obj, const char *key)
{
    if (!obj || obj->type != JV_OBJ) return NULL;
    for (size_t i = 0; i < obj->n; i++)
        if (!strcmp(obj->keys[i], key)) return &obj->items[i];
    return NULL;
}
