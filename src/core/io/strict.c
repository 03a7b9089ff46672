/* strict.c — the strict number rules shared by every option and spec grammar (dpcorr/io.h). */
#include "dpcorr/io.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int space_edge(const char *v)
{
    size_t n = strlen(v);
    return n == 0 || isspace((unsigned char)v[0]) || isspace((unsigned char)v[n - 1]);
}

int dpc_io_parse_double(const char *v, double *out)
{
    if (!v || space_edge(v)) return 0;
    for (const char *p = v; *p; p++)
        if (!isdigit((unsigned char)*p) && !strchr(".eE+-", *p)) return 0;
    char *end;
    errno = 0;
    double d = strtod(v, &end);
    if (end == v || *end || errno == ERANGE || !isfinite(d)) return 0;
    *out = d;
    return 1;
}

int dpc_io_parse_uint(const char *v, uint64_t *out, int big)
{
    if (!v || space_edge(v) || v[0] == '-' || v[0] == '+') return 0;
    int digits = 1;
    for (const char *p = v; *p; p++) digits &= isdigit((unsigned char)*p) != 0;
    if (digits) {
        char *end;
        errno = 0;
        unsigned long long u = strtoull(v, &end, 10);
        if (*end || errno == ERANGE) return 0;
        if (!big && u > (1ull << 53)) return 0;
        *out = u;
        return 1;
    }
    double d;
    if (!dpc_io_parse_double(v, &d) || d < 0 || d != floor(d) || d > 9007199254740992.0) return 0;
    *out = (uint64_t)d;
    return 1;
}
