/* cli.c — option iteration, strict number parsing and JSON helpers for the dpcorr tool. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void cli_iter_init(cli_iter *it, const char *cmd, int argc, char **argv, int first)
{
    memset(it, 0, sizeof *it);
    it->argc = argc;
    it->argv = argv;
    it->i = first;
    it->cmd = cmd;
}

int cli_next(cli_iter *it)
{
    if (it->i >= it->argc) return 0;
    const char *a = it->argv[it->i++];
    it->inline_value = NULL;
    it->value = NULL;
    const char *eq = (strncmp(a, "--", 2) == 0) ? strchr(a, '=') : NULL;
    if (eq) {
        size_t n = (size_t)(eq - a);
        if (n >= sizeof it->namebuf) n = sizeof it->namebuf - 1;
        memcpy(it->namebuf, a, n);
        it->namebuf[n] = '\0';
        it->name = it->namebuf;
        it->inline_value = eq + 1;
    } else {
        it->name = a;
    }
    return 1;
}

const char *cli_value(cli_iter *it)
{
    if (it->inline_value) {
        it->value = it->inline_value;
        it->inline_value = NULL;
        return it->value;
    }
    if (it->i >= it->argc) {
        cli_fail(it->cmd, "%s: missing value", it->name);
        return NULL;
    }
    it->value = it->argv[it->i++];
    return it->value;
}

int cli_is(const cli_iter *it, const char *name) { return strcmp(it->name, name) == 0; }

int cli_fail(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "dpcorr %s: ", cmd ? cmd : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return CLI_USAGE;
}

/* The requested level and the resolution status (pure: reads the environment and the CPU). */
static dpc_status isa_from_env(dpc_isa *out, dpc_error *err)
{
    const char *v = getenv("DPCORR_ISA");
    dpc_isa want = DPC_ISA_AUTO;
    dpc_status st = v && *v ? dpc_isa_parse(v, &want, err) : DPC_OK;
    return st ? st : dpc_isa_resolve(want, out, err);
}

int cli_isa_check(void)
{
    dpc_isa isa;
    dpc_error err = {0};
    if (!isa_from_env(&isa, &err)) return 0;
    fprintf(stderr, "dpcorr: DPCORR_ISA=%s: %s\n", getenv("DPCORR_ISA"),
            err.msg + (strncmp(err.msg, "isa: ", 5) ? 0 : 5));
    return CLI_USAGE;
}

dpc_isa cli_isa(void)
{
    dpc_isa isa = DPC_ISA_SSE2;
    dpc_error err = {0};
    return isa_from_env(&isa, &err) ? dpc_isa_detect() : isa;
}

dpc_status cli_model_new(dpc_model **m, dpc_model_config *cfg, const char *spec, size_t n_in,
                         size_t n_classes, dpc_error *err)
{
    dpc_model_config c;
    dpc_status st = dpc_model_parse(&c, spec, n_in, n_classes, err);
    if (st) return st;
    c.isa = cli_isa();
    if (cfg) *cfg = c;
    return dpc_model_new(m, &c, err);
}

int cli_double(const cli_iter *it, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v))
        return cli_fail(it->cmd, "%s: expected a finite number, got '%s'", it->name, s);
    *out = v;
    return 0;
}

int cli_u64(const cli_iter *it, const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    if (s[0] == '-' || s[0] == '\0')
        return cli_fail(it->cmd, "%s: expected a non-negative integer, got '%s'", it->name, s);
    unsigned long long v = strtoull(s, &end, 10);
    if (*end == 'e' || *end == 'E' || *end == '.') { /* allow 1e5 when it is an exact integer */
        double d;
        if (cli_double(it, s, &d)) return CLI_USAGE;
        if (d < 0 || d != floor(d) || d > 1.8e19)
            return cli_fail(it->cmd, "%s: expected a non-negative integer, got '%s'", it->name, s);
        *out = (uint64_t)d;
        return 0;
    }
    if (*end != '\0' || errno == ERANGE)
        return cli_fail(it->cmd, "%s: expected a non-negative integer, got '%s'", it->name, s);
    *out = v;
    return 0;
}

int cli_size(const cli_iter *it, const char *s, size_t *out)
{
    uint64_t v;
    if (cli_u64(it, s, &v)) return CLI_USAGE;
    if (v > SIZE_MAX) return cli_fail(it->cmd, "%s: value too large: '%s'", it->name, s);
    *out = (size_t)v;
    return 0;
}

int cli_double_list(const cli_iter *it, const char *s, double **out, size_t *n)
{
    size_t cap = 1;
    for (const char *p = s; *p; p++) cap += *p == ',';
    double *v = malloc(cap * sizeof *v);
    if (!v) return cli_fail(it->cmd, "%s: out of memory", it->name);
    size_t k = 0;
    const char *p = s;
    for (;;) {
        char *end;
        errno = 0;
        double x = strtod(p, &end);
        if (end == p || (*end != ',' && *end != '\0') || errno == ERANGE || !isfinite(x)) {
            free(v);
            return cli_fail(it->cmd, "%s: expected comma-separated numbers, got '%s'", it->name,
                            s);
        }
        v[k++] = x;
        if (*end == '\0') break;
        p = end + 1;
    }
    *out = v;
    *n = k;
    return 0;
}

static void json_key(FILE *f, const char *key) { fprintf(f, "\"%s\": ", key); }

void cli_json_num(FILE *f, const char *key, double v, int comma)
{
    json_key(f, key);
    if (isfinite(v)) fprintf(f, "%.17g", v);
    else if (isnan(v)) fputs("null", f);
    else fputs(v > 0 ? "\"inf\"" : "\"-inf\"", f);
    if (comma) fputs(", ", f);
}

void cli_json_str(FILE *f, const char *key, const char *v, int comma)
{
    json_key(f, key);
    fputc('"', f);
    for (const char *p = v; *p; p++) {
        if (*p == '"' || *p == '\\') fputc('\\', f);
        if ((unsigned char)*p < 0x20) fprintf(f, "\\u%04x", (unsigned char)*p);
        else fputc(*p, f);
    }
    fputc('"', f);
    if (comma) fputs(", ", f);
}

void cli_json_int(FILE *f, const char *key, long long v, int comma)
{
    json_key(f, key);
    fprintf(f, "%lld", v);
    if (comma) fputs(", ", f);
}

void cli_json_bool(FILE *f, const char *key, int v, int comma)
{
    json_key(f, key);
    fputs(v ? "true" : "false", f);
    if (comma) fputs(", ", f);
}
