/* opt.c — the table-driven option parser; see opt.h. */
#include "opt.h"
#include "dpcorr/io.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const opt_spec OPT_HELP = {.name = "--help", .type = OPT_FLAG, .section = "general",
                           .help = "this text (--help-table: the option table as tab-separated "
                                   "values, for scripts)"};
const opt_spec OPT_DRY_RUN = {.name = "--dry-run", .type = OPT_FLAG, .section = "general",
                              .help = "validate, resolve the configuration through the library, "
                                      "print it (key = value) and exit without running"};
const opt_spec OPT_JSON = {.name = "--json", .type = OPT_FLAG, .param = "json",
                           .section = "output", .help = "one JSON object on stdout",
                           .example = "--json"};

/* ---- messages ------------------------------------------------------------------------------ */

/* Prints a message with control bytes escaped (\xNN): messages may quote data files and argv. */
static void put_escaped(const char *m)
{
    for (const unsigned char *p = (const unsigned char *)m; *p; p++) {
        if (*p < 0x20 || *p == 0x7f) fprintf(stderr, "\\x%02x", *p);
        else fputc(*p, stderr);
    }
}

static void vmsg(const opt_set *s, const char *opt, const char *fmt, va_list ap)
{
    char buf[2 * DPC_ERROR_MSG_LEN];
    vsnprintf(buf, sizeof buf, fmt, ap);
    if (s && s->cmd) fprintf(stderr, "dpcorr %s: ", s->cmd->name);
    else fputs("dpcorr: ", stderr);
    if (opt) fprintf(stderr, "%s: ", opt);
    put_escaped(buf);
    fputc('\n', stderr);
}

int opt_fail(const opt_set *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg(s, NULL, fmt, ap);
    va_end(ap);
    return CLI_USAGE;
}

int opt_fail_at(const opt_set *s, const opt_spec *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg(s, o ? o->name : NULL, fmt, ap);
    va_end(ap);
    return CLI_USAGE;
}

static int fail_name(const opt_set *s, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail_name(const opt_set *s, const char *name, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg(s, name, fmt, ap);
    va_end(ap);
    return CLI_USAGE;
}

/* "{kind}" in text replaced by the command's mechanism option. */
static const char *subst(char *buf, size_t len, const char *text, const opt_cmd *c)
{
    const char *k = c && c->kind_opt ? c->kind_opt : "--mech";
    size_t o = 0;
    for (const char *p = text; *p && o + 1 < len; p++) {
        if (!strncmp(p, "{kind}", 6)) {
            for (const char *q = k; *q && o + 1 < len; q++) buf[o++] = *q;
            p += 5;
        } else {
            buf[o++] = *p;
        }
    }
    buf[o] = '\0';
    return buf;
}

/* ---- table lookups ------------------------------------------------------------------------- */

static size_t table_len(const opt_cmd *c)
{
    size_t n = 0;
    while (c->opts[n]) n++;
    return n;
}

static size_t index_of(const opt_set *s, const opt_spec *o)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->cmd->opts[i] == o) return i;
    /* a command reading an option that is not in its own table: a bug of the tool */
    fprintf(stderr, "dpcorr %s: internal error: %s is not in the option table\n", s->cmd->name,
            o->name);
    abort();
}

static const opt_spec *find(const opt_cmd *c, const char *name, size_t len, size_t *idx)
{
    for (size_t i = 0; c->opts[i]; i++)
        if (strlen(c->opts[i]->name) == len && !strncmp(c->opts[i]->name, name, len)) {
            *idx = i;
            return c->opts[i];
        }
    if (len == 2 && !strncmp(name, "-h", 2)) {
        for (size_t i = 0; c->opts[i]; i++)
            if (c->opts[i] == &OPT_HELP) {
                *idx = i;
                return &OPT_HELP;
            }
    }
    return NULL;
}

/* 1 + index of word w in "a|b|c", 0 if absent. */
static int word_index(const char *list, const char *w)
{
    if (!list) return 0;
    size_t wl = strlen(w);
    int k = 1;
    for (const char *p = list;; k++) {
        const char *bar = strchr(p, '|');
        size_t l = bar ? (size_t)(bar - p) : strlen(p);
        if (l == wl && !strncmp(p, w, l)) return k;
        if (!bar) return 0;
        p = bar + 1;
    }
}

/* ---- strict numbers ------------------------------------------------------------------------ */

/* the rules are the library's (dpc_io_parse_double / _uint: every spec grammar shares them) */
int opt_strict_double(const char *v, double *out) { return dpc_io_parse_double(v, out); }
int opt_strict_uint(const char *v, uint64_t *out) { return dpc_io_parse_uint(v, out, 0); }

/* The library field an option sets when its spec names the table (opt_spec.fields): the first
 * name of `param`; NULL otherwise. */
static const dpc_field *spec_field_at(const opt_spec *o, size_t *base_offset)
{
    if (!o->fields || !o->param) return NULL;
    char name[DPC_ERROR_FIELD_LEN];
    size_t n = strcspn(o->param, ",");
    if (n >= sizeof name) return NULL;
    memcpy(name, o->param, n);
    name[n] = '\0';
    return dpc_field_find(o->fields(), name, base_offset);
}

static const dpc_field *spec_field(const opt_spec *o) { return spec_field_at(o, NULL); }

typedef struct opt_range {
    double lo, hi;  /* lo = hi = 0: none */
    unsigned flags; /* OPT_LO_OPEN, OPT_HI_OPEN */
} opt_range;

/* The accepted range: the library table's for a field of a table (a typed value must be in the
 * range: 0 as "unset" is the library's convention for a value not given), else the spec's. */
static opt_range range_of(const opt_spec *o)
{
    const dpc_field *f = spec_field(o);
    if (!f) return (opt_range){o->lo, o->hi, o->flags & (OPT_LO_OPEN | OPT_HI_OPEN)};
    if ((f->flags & DPC_FIELD_NO_RANGE) || f->type == DPC_FIELD_BOOL ||
        f->type == DPC_FIELD_ENUM || f->type > DPC_FIELD_U64)
        return (opt_range){0, 0, 0};
    return (opt_range){f->lo, f->hi,
                       ((f->flags & DPC_FIELD_LO_OPEN) ? OPT_LO_OPEN : 0u) |
                           ((f->flags & DPC_FIELD_HI_OPEN) ? OPT_HI_OPEN : 0u)};
}

static int has_range(const opt_spec *o)
{
    opt_range r = range_of(o);
    return r.lo != 0 || r.hi != 0;
}

static int in_range(const opt_spec *o, double x)
{
    opt_range r = range_of(o);
    if (r.lo == 0 && r.hi == 0) return 1;
    int lo_ok = (r.flags & OPT_LO_OPEN) ? x > r.lo : x >= r.lo;
    int hi_ok = (r.flags & OPT_HI_OPEN) ? x < r.hi : x <= r.hi;
    return lo_ok && hi_ok;
}

static void range_text(const opt_spec *o, char *buf, size_t len)
{
    opt_range r = range_of(o);
    if (isinf(r.hi))
        snprintf(buf, len, "%s %.15g", (r.flags & OPT_LO_OPEN) ? ">" : ">=", r.lo);
    else
        snprintf(buf, len, "in %c%.15g, %.15g%c", (r.flags & OPT_LO_OPEN) ? '(' : '[', r.lo,
                 r.hi, (r.flags & OPT_HI_OPEN) ? ')' : ']');
}

/* The option's help line: its spec's text, then for a field of a library table the table's
 * range and default ("last fraction of steps, in [0, 1] (default 0.25)", "number of groups,
 * >= 1 (default: the strategy's bands)"). */
static const char *help_text(const opt_spec *o, char *buf, size_t len)
{
    const dpc_field *f = spec_field(o);
    if (!f) return o->help;
    char d[128], r[96] = "";
    dpc_field_format_default(f, d, sizeof d);
    if (has_range(o)) {
        r[0] = ',', r[1] = ' ';
        range_text(o, r + 2, sizeof r - 2);
    }
    snprintf(buf, len, "%s%s (default%s%s)", o->help, r, f->def_text ? ": " : " ", d);
    return buf;
}

static int bad_range(const opt_set *s, const opt_spec *o, const char *v)
{
    char r[96];
    range_text(o, r, sizeof r);
    return fail_name(s, o->name, "must be %s, got %s", r, v);
}

static int parse_list(const opt_set *s, const opt_spec *o, const char *v, opt_value *out)
{
    char item[64];
    out->nlist = 0;
    for (const char *p = v;;) {
        const char *comma = strchr(p, ',');
        size_t l = comma ? (size_t)(comma - p) : strlen(p);
        double d;
        if (l >= sizeof item) return fail_name(s, o->name, "expected comma-separated numbers, got '%s'", v);
        memcpy(item, p, l);
        item[l] = '\0';
        if (!dpc_io_parse_double(item, &d))
            return fail_name(s, o->name, "expected comma-separated numbers, got '%s'", v);
        if (!in_range(o, d)) return bad_range(s, o, item);
        if (out->nlist == OPT_MAX_LIST)
            return fail_name(s, o->name, "at most %d values, got more", OPT_MAX_LIST);
        out->list[out->nlist++] = d;
        if (!comma) return 0;
        p = comma + 1;
    }
}

/* Parses v for option o into out; prints the refusal and returns CLI_USAGE when bad. */
static int parse_value(const opt_set *s, const opt_spec *o, const char *v, opt_value *out)
{
    memset(out, 0, sizeof *out);
    out->raw = v;
    switch (o->type) {
    case OPT_FLAG: return 0;
    case OPT_STR:
        if (!*v) return fail_name(s, o->name, "empty value");
        return 0;
    case OPT_CHOICE:
        if (!(out->word = word_index(o->choices, v))) {
            char alts[256];
            snprintf(alts, sizeof alts, "%s", o->choices);
            for (char *p = alts; *p; p++)
                if (*p == '|') *p = ',';
            return fail_name(s, o->name, "expected one of %s, got '%s'", alts, v);
        }
        return 0;
    case OPT_LIST: return parse_list(s, o, v, out);
    case OPT_DOUBLE:
    case OPT_UINT: break;
    }
    if ((o->flags & OPT_WORDS) && (out->word = word_index(o->choices, v))) return 0;
    if (o->type == OPT_DOUBLE) {
        if (!dpc_io_parse_double(v, &out->num))
            return fail_name(s, o->name, "expected a number%s%s, got '%s'",
                             (o->flags & OPT_WORDS) ? " or " : "",
                             (o->flags & OPT_WORDS) ? o->choices : "", v);
    } else {
        if (!dpc_io_parse_uint(v, &out->u, (o->flags & OPT_BIG) != 0)) {
            /* an integer too large to be represented: say the bound, not "expected an integer" */
            if (v[0] && strspn(v, "0123456789") == strlen(v)) {
                if (has_range(o)) return bad_range(s, o, v);
                return fail_name(s, o->name, "must be at most %s, got %s",
                                 (o->flags & OPT_BIG) ? "18446744073709551615" : "2^53 = 9007199254740992", v);
            }
            return fail_name(s, o->name, "expected a non-negative integer%s%s, got '%s'",
                             (o->flags & OPT_WORDS) ? " or " : "",
                             (o->flags & OPT_WORDS) ? o->choices : "", v);
        }
        out->num = (double)out->u;
    }
    if (!in_range(o, out->num)) return bad_range(s, o, v);
    return 0;
}

static int same_value(const opt_spec *o, const opt_value *a, const opt_value *b)
{
    switch (o->type) {
    case OPT_FLAG: return 1;
    case OPT_STR: return !strcmp(a->raw, b->raw);
    case OPT_CHOICE: return a->word == b->word;
    case OPT_LIST:
        if (a->nlist != b->nlist) return 0;
        for (size_t i = 0; i < a->nlist; i++)
            if (a->list[i] != b->list[i]) return 0;
        return 1;
    default: return a->word == b->word && (a->word || (a->num == b->num && a->u == b->u));
    }
}

/* 1 if name (length len) is in the space-separated list. */
static int in_list(const char *list, const char *name)
{
    size_t l = strlen(name);
    for (const char *p = list; p && *p;) {
        while (*p == ' ') p++;
        const char *e = p;
        while (*e && *e != ' ') e++;
        if ((size_t)(e - p) == l && !strncmp(p, name, l)) return 1;
        p = e;
    }
    return 0;
}

static int check_conflicts(const opt_set *s)
{
    for (size_t i = 0; i < s->n; i++) {
        const opt_spec *a = s->cmd->opts[i];
        if (!s->given[i] || !a->conflicts) continue;
        for (size_t j = 0; j < s->n; j++)
            if (j != i && s->given[j] && in_list(a->conflicts, s->cmd->opts[j]->name))
                return fail_name(s, s->cmd->opts[j]->name, "cannot be combined with %s", a->name);
    }
    return 0;
}

/* ---- parsing ------------------------------------------------------------------------------- */

static int one_option(opt_set *s, char **argv, int argc, int *i)
{
    const char *a = argv[*i];
    const char *eq = strchr(a, '=');
    size_t len = eq ? (size_t)(eq - a) : strlen(a);
    size_t idx = 0;
    const opt_spec *o = find(s->cmd, a, len, &idx);
    for (size_t r = 0; !o && s->cmd->refused && s->cmd->refused[r]; r++)
        if (strlen(s->cmd->refused[r]->name) == len && !strncmp(s->cmd->refused[r]->name, a, len))
            return fail_name(s, s->cmd->refused[r]->name, "%s", s->cmd->refused_why);
    if (!o)
        return fail_name(s, NULL, "%.*s: unknown option (see dpcorr %s --help)", (int)len, a,
                         s->cmd->name);
    const char *v = NULL;
    if (o->type == OPT_FLAG) {
        if (eq) return fail_name(s, o->name, "takes no value, got '%s'", eq + 1);
    } else if (eq) {
        v = eq + 1;
    } else if (*i + 1 < argc && strncmp(argv[*i + 1], "--", 2) != 0) {
        v = argv[++*i];
    } else {
        return fail_name(s, o->name, "missing value (%s %s)", o->name, o->metavar);
    }
    opt_value val;
    if (parse_value(s, o, v ? v : "", &val)) return CLI_USAGE;
    if (s->given[idx] && !same_value(o, &s->val[idx], &val))
        return fail_name(s, o->name, "given twice with different values ('%s' and '%s')",
                         s->val[idx].raw, val.raw);
    s->given[idx] = 1;
    s->val[idx] = val;
    if (o == &OPT_DRY_RUN) s->dry_run = 1;
    return 0;
}

int opt_parse(opt_set *s, const opt_cmd *cmd, int argc, char **argv, int first, size_t npos_max)
{
    memset(s, 0, sizeof *s);
    s->cmd = cmd;
    s->n = table_len(cmd);
    if (s->n > OPT_MAX) {
        fprintf(stderr, "dpcorr %s: internal error: %zu options > %d\n", cmd->name, s->n, OPT_MAX);
        abort();
    }
    for (int i = first; i < argc; i++) {
        if (!strcmp(argv[i], "--help-table")) {
            opt_help_table(stdout, cmd);
            s->help = 1;
            return 0;
        }
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            opt_help(stdout, cmd);
            s->help = 1;
            return 0;
        }
    }
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] == '-' && a[1] != '\0') {
            if (one_option(s, argv, argc, &i)) return CLI_USAGE;
        } else if (s->npos < npos_max && s->npos < 4) {
            s->pos[s->npos++] = a;
        } else {
            return fail_name(s, NULL, "'%s': unexpected argument (see dpcorr %s --help)", a,
                             cmd->name);
        }
    }
    return check_conflicts(s);
}

/* ---- accessors ----------------------------------------------------------------------------- */

int opt_typed(const opt_set *s, const opt_spec *o) { return s->given[index_of(s, o)]; }

void opt_use(opt_set *s, const opt_spec *o) { s->used[index_of(s, o)] = 1; }

int opt_given(opt_set *s, const opt_spec *o)
{
    size_t i = index_of(s, o);
    s->used[i] = 1;
    return s->given[i];
}

double opt_dbl(opt_set *s, const opt_spec *o, double def)
{
    size_t i = index_of(s, o);
    s->used[i] = 1;
    return s->given[i] && !s->val[i].word ? s->val[i].num : def;
}

uint64_t opt_u64(opt_set *s, const opt_spec *o, uint64_t def)
{
    size_t i = index_of(s, o);
    s->used[i] = 1;
    return s->given[i] && !s->val[i].word ? s->val[i].u : def;
}

size_t opt_size(opt_set *s, const opt_spec *o, size_t def)
{
    return (size_t)opt_u64(s, o, def); /* ranges keep values below SIZE_MAX */
}

void opt_read_field(opt_set *s, const opt_spec *o, void *base)
{
    size_t off = 0;
    const dpc_field *f = spec_field_at(o, &off);
    if (!f) {
        /* a spec without a table field: only marked used (a table mistake, caught by tests) */
        (void)opt_given(s, o);
        return;
    }
    char *member_base = (char *)base + off;
    double v = dpc_field_get(f, member_base);
    v = o->type == OPT_UINT ? (double)opt_u64(s, o, (uint64_t)v) : opt_dbl(s, o, v);
    /* the parser's range is the field's, and OPT_UINT values are exact below 2^53 */
    if (dpc_field_set(f, member_base, v, NULL) != DPC_OK) { /* unreachable */
    }
}

const char *opt_str(opt_set *s, const opt_spec *o, const char *def)
{
    size_t i = index_of(s, o);
    s->used[i] = 1;
    return s->given[i] ? s->val[i].raw : def;
}

int opt_word(opt_set *s, const opt_spec *o, int def)
{
    size_t i = index_of(s, o);
    s->used[i] = 1;
    if (!s->given[i]) return def;
    return o->type == OPT_CHOICE ? s->val[i].word - 1 : s->val[i].word;
}

const double *opt_list(opt_set *s, const opt_spec *o, size_t *n)
{
    size_t i = index_of(s, o);
    s->used[i] = 1;
    *n = s->given[i] ? s->val[i].nlist : 0;
    return s->given[i] ? s->val[i].list : NULL;
}

int opt_finish(opt_set *s)
{
    for (size_t i = 0; i < s->n; i++) {
        const opt_spec *o = s->cmd->opts[i];
        if (!s->given[i] || s->used[i] || o == &OPT_HELP || o == &OPT_DRY_RUN) continue;
        if (!o->when) return fail_name(s, o->name, "not used by this configuration");
        char w[256];
        return fail_name(s, o->name, "not used by this configuration (it applies with %s)",
                         subst(w, sizeof w, o->when, s->cmd));
    }
    return 0;
}

/* ---- library errors ------------------------------------------------------------------------ */

int opt_status_rc(dpc_status st)
{
    switch (st) {
    case DPC_E_INVALID:
    case DPC_E_UNSUPPORTED:
    case DPC_E_PRIVACY:
    case DPC_E_RANGE:
    case DPC_E_FORMAT: return CLI_USAGE;
    default: return CLI_RUNTIME;
    }
}

/* field without array indices: "parts[0].q" -> "parts.q" */
static void normalize(const char *field, char *out, size_t len)
{
    size_t o = 0;
    for (const char *p = field; *p && o + 1 < len; p++) {
        if (*p == '[') {
            while (*p && *p != ']') p++;
            if (!*p) break;
            continue;
        }
        out[o++] = *p;
    }
    out[o] = '\0';
}

/* 1 if the comma-separated param list names field. */
static int names_param(const char *list, const char *field)
{
    size_t l = strlen(field);
    for (const char *p = list; p && *p;) {
        const char *c = strchr(p, ',');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        if (n == l && !strncmp(p, field, l)) return 1;
        if (!c) break;
        p = c + 1;
    }
    return 0;
}

/* The message without its leading "<field>: " (documented in dpcorr/common.h). */
static const char *msg_body(const dpc_error *err)
{
    size_t l = strlen(err->field);
    if (l && !strncmp(err->msg, err->field, l) && err->msg[l] == ':' && err->msg[l + 1] == ' ')
        return err->msg + l + 2;
    return err->msg;
}

static int ident_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '.';
}

/* The message with every library identifier that is a `param` of this command's table spelled
 * as the option the user types ("set allow_large_delta to accept" -> "set --allow-large-delta
 * to accept"). Only names with '_' or '.' are identifiers (plain words such as "delta" or
 * "epsilon" stay prose); whole words only. */
static const char *spell_params(const opt_set *s, const char *msg, char *out, size_t len)
{
    if (!s) return msg;
    size_t o = 0;
    for (const char *p = msg; *p && o + 1 < len;) {
        const opt_spec *hit = NULL;
        size_t wl = 0;
        if (p == msg || !ident_char(p[-1])) {
            while (ident_char(p[wl])) wl++;
            while (wl && p[wl - 1] == '.') wl--; /* a sentence's full stop is not the name's */
            char w[DPC_ERROR_FIELD_LEN];
            if (wl && wl < sizeof w && memchr(p, '_', wl)) {
                memcpy(w, p, wl);
                w[wl] = '\0';
                for (size_t i = 0; i < s->n && !hit; i++)
                    if (s->cmd->opts[i]->param && names_param(s->cmd->opts[i]->param, w))
                        hit = s->cmd->opts[i];
            }
        }
        if (hit) {
            int k = snprintf(out + o, len - o, "%s", hit->name);
            o = k < 0 ? o : o + (size_t)k < len ? o + (size_t)k : len - 1;
            p += wl;
        } else {
            out[o++] = *p++;
        }
    }
    out[o] = '\0';
    return out;
}

int opt_fail_lib(const opt_set *s, const dpc_error *err)
{
    int rc = opt_status_rc(err->status);
    char m[DPC_ERROR_MSG_LEN + 256];
    if (!s || !err->field[0]) {
        fail_name(s, NULL, "%s", spell_params(s, err->msg, m, sizeof m));
        return rc;
    }
    char f[DPC_ERROR_FIELD_LEN];
    normalize(err->field, f, sizeof f);
    const opt_spec *untyped = NULL;
    for (size_t i = 0; i < s->n; i++) {
        const opt_spec *o = s->cmd->opts[i];
        if (!o->param || !names_param(o->param, f)) continue;
        if (s->given[i]) {
            fail_name(s, o->name, "%s", spell_params(s, msg_body(err), m, sizeof m));
            return rc;
        }
        if (!untyped) untyped = o;
    }
    const char *b = msg_body(err), *body = spell_params(s, b, m, sizeof m);
    const char *head = b != err->msg ? err->field : "", *sep = b != err->msg ? ": " : "";
    if (untyped)
        fail_name(s, NULL, "%s%s%s (%s was not given: a default or derived value; %s sets it)",
                  head, sep, body, f, untyped->name);
    else
        fail_name(s, NULL, "%s%s%s", head, sep, body);
    return rc;
}

int opt_fail_lib_at(const opt_set *s, const opt_spec *o, const dpc_error *err)
{
    char m[DPC_ERROR_MSG_LEN + 256]; /* the option names what the field named */
    fail_name(s, o->name, "%s", spell_params(s, msg_body(err), m, sizeof m));
    /* a file or spec named by the option that cannot be read is a bad value of the option */
    return err->status == DPC_E_NOMEM || err->status == DPC_E_NUMERIC ? CLI_RUNTIME : CLI_USAGE;
}

/* ---- help ---------------------------------------------------------------------------------- */

/* Prints text wrapped at 100 columns, continuation lines indented by `indent`. */
static void wrap(FILE *f, const char *text, int col, int indent)
{
    const int width = 100;
    const char *p = text;
    while (*p) {
        const char *e = p;
        while (*e && *e != ' ') e++;
        int wl = (int)(e - p);
        if (col > indent && col + 1 + wl > width) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
        } else if (col > indent) {
            fputc(' ', f);
            col++;
        }
        fprintf(f, "%.*s", wl, p);
        col += wl;
        p = e;
        while (*p == ' ') p++;
    }
    fputc('\n', f);
}

void opt_help(FILE *f, const opt_cmd *c)
{
    fprintf(f, "usage: %s\n\n", c->usage);
    if (c->about) fprintf(f, "%s\n\n", c->about);
    size_t n = table_len(c);
    for (size_t i = 0; i < n; i++) {
        const char *sec = c->opts[i]->section ? c->opts[i]->section : "options";
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = !strcmp(c->opts[j]->section ? c->opts[j]->section : "options", sec);
        if (seen) continue;
        fprintf(f, "%s:\n", sec);
        for (size_t j = i; j < n; j++) {
            const opt_spec *o = c->opts[j];
            if (strcmp(o->section ? o->section : "options", sec)) continue;
            char head[64], w[256], line[1024], h[768];
            snprintf(head, sizeof head, "  %s%s%s", o->name, o->metavar ? " " : "",
                     o->metavar ? o->metavar : "");
            const char *help = help_text(o, h, sizeof h);
            if (o->when)
                snprintf(line, sizeof line, "%s [%s]", help, subst(w, sizeof w, o->when, c));
            else
                snprintf(line, sizeof line, "%s", help);
            fputs(head, f);
            int col = (int)strlen(head);
            if (col >= 22) {
                fprintf(f, "\n%24s", "");
                col = 24;
            } else {
                fprintf(f, "%*s", 24 - col, "");
                col = 24;
            }
            wrap(f, line, col, 24);
        }
    }
    if (c->refused && c->refused[0]) {
        char line[512];
        size_t o = (size_t)snprintf(line, sizeof line, "Refused:");
        for (size_t i = 0; c->refused[i] && o < sizeof line; i++)
            o += (size_t)snprintf(line + o, sizeof line - o, "%s %s", i ? "," : "",
                                  c->refused[i]->name);
        if (o < sizeof line) snprintf(line + o, sizeof line - o, ": %s.", c->refused_why);
        fputc('\n', f);
        wrap(f, line, 0, 4);
    }
    if (c->epilog) fprintf(f, "\n%s", c->epilog);
}

static const char *type_name(opt_type t)
{
    static const char *const names[] = {"flag", "string", "choice", "number", "integer", "list"};
    return names[t];
}

void opt_help_table(FILE *f, const opt_cmd *c)
{
    fprintf(f, "cmd\t%s\t%s\n", c->name, c->minimal ? c->minimal : "-");
    for (size_t i = 0; c->opts[i]; i++) {
        const opt_spec *o = c->opts[i];
        char ex[512];
        char wh[256];
        fprintf(f, "opt\t%s\t%s\t%s\t%s\t%s\n", o->name, type_name(o->type),
                o->param ? o->param : "-", o->example ? subst(ex, sizeof ex, o->example, c) : "-",
                o->when ? subst(wh, sizeof wh, o->when, c) : "-");
    }
    for (size_t i = 0; c->refused && c->refused[i]; i++)
        fprintf(f, "refused\t%s\n", c->refused[i]->name);
    for (size_t i = 0; c->opts[i]; i++) { /* the files of cli_check_outputs, for the sweep */
        unsigned fl = c->opts[i]->flags;
        const char *role = (fl & OPT_OUT_FILE) ? "out" : (fl & OPT_IN_FILE) ? "in"
                         : (fl & OPT_IN_DATA) ? "data" : (fl & OPT_IN_STRATEGY) ? "strategy" : NULL;
        if (role) fprintf(f, "io\t%s\t%s\t%d\n", c->opts[i]->name, role, (fl & OPT_CONTINUES) != 0);
    }
}

/* ---- dry run ------------------------------------------------------------------------------- */

void opt_dry_num(const char *key, double v) { printf("%s = %.17g\n", key, v); }
void opt_dry_uint(const char *key, uint64_t v) { printf("%s = %llu\n", key, (unsigned long long)v); }
void opt_dry_str(const char *key, const char *v) { printf("%s = %s\n", key, v ? v : ""); }

void opt_dry_field(const dpc_field *f, const void *base)
{
    if (f->type == DPC_FIELD_ENUM)
        opt_dry_str(f->name, dpc_field_enum_name(f, (int)dpc_field_get(f, base)));
    else if (f->type == DPC_FIELD_DOUBLE)
        opt_dry_num(f->name, dpc_field_get(f, base));
    else if (f->type == DPC_FIELD_INT) /* (values below 2^31: exact in double) */
        printf("%s = %d\n", f->name, (int)dpc_field_get(f, base));
    else if (f->type == DPC_FIELD_SIZE || f->type == DPC_FIELD_U64 || f->type == DPC_FIELD_BOOL)
        opt_dry_uint(f->name, (uint64_t)dpc_field_get(f, base));
}

void opt_dry_list(const char *key, const double *v, size_t n)
{
    printf("%s =", key);
    for (size_t i = 0; i < n; i++) printf("%s%.17g", i ? "," : " ", v[i]);
    printf("\n");
}
