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

static const opt_spec *const *opts_of(const opt_cmd *c);

static size_t table_len(const opt_spec *const *opts)
{
    size_t n = 0;
    while (opts[n]) n++;
    return n;
}

static size_t index_of(const opt_set *s, const opt_spec *o)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->opts[i] == o) return i;
    /* a command reading an option that is not in its own table: a bug of the tool */
    fprintf(stderr, "dpcorr %s: internal error: %s is not in the option table\n", s->cmd->name,
            o->name);
    abort();
}

static const opt_spec *find(const opt_spec *const *opts, const char *name, size_t len,
                            size_t *idx)
{
    if (len == 2 && !strncmp(name, "-h", 2)) name = OPT_HELP.name, len = strlen(name);
    for (size_t i = 0; opts[i]; i++)
        if (strlen(opts[i]->name) == len && !strncmp(opts[i]->name, name, len)) {
            *idx = i;
            return opts[i];
        }
    return NULL;
}

/* 1 + the index of word w (length wl) in list, its words separated by sep ("a|b|c" with '|',
 * "--x --y" with ' ', "mech.nu,nu" with ','); 0 when absent or list is NULL. */
static int list_index(const char *list, char sep, const char *w, size_t wl)
{
    const char seps[2] = {sep, '\0'};
    int k = 1;
    for (const char *p = list; p && *p; k++) {
        size_t l = strcspn(p, seps);
        if (l == wl && !strncmp(p, w, wl)) return k;
        p += l + (p[l] == sep);
    }
    return 0;
}

static int word_index(const char *list, const char *w)
{
    return list_index(list, '|', w, strlen(w));
}

/* 1 if the comma-separated param list names field f. */
static int names_param(const char *list, const char *f)
{
    return list_index(list, ',', f, strlen(f)) != 0;
}

/* ---- ranges: the library's field rules ----------------------------------------------------- */

/* The library field an option sets when its spec names the table (opt_spec.fields): the first
 * name of `param` found in it, a leading "problem." dropped for the nested struct's own table;
 * NULL otherwise. */
static const dpc_field *spec_field_at(const opt_spec *o, size_t *base_offset)
{
    if (!o->fields || !o->param) return NULL;
    for (const char *p = o->param; *p;) {
        char name[DPC_ERROR_FIELD_LEN];
        size_t n = strcspn(p, ",");
        snprintf(name, sizeof name, "%.*s", (int)n, p);
        const char *dot = strchr(name, '.');
        const dpc_field *f = dpc_field_find(o->fields(), name, base_offset);
        if (!f && dot) f = dpc_field_find(o->fields(), dot + 1, base_offset);
        if (f) return f;
        p += n + (p[n] == ',');
    }
    return NULL;
}

/* The words of an OPT_CHOICE or OPT_WORDS option: its own `choices`, else its ENUM field's
 * names ("constant|cosine|cooldown"); NULL when none. */
static const char *choices_of(const opt_spec *o, char *buf, size_t len)
{
    const dpc_field *f = o->choices ? NULL : spec_field_at(o, NULL);
    if (!f || f->type != DPC_FIELD_ENUM) return o->choices;
    dpc_field_format_enum(f, "|", NULL, buf, len);
    return buf;
}

static const dpc_field *spec_field(const opt_spec *o) { return spec_field_at(o, NULL); }

/* The accepted range as a library field, checked and worded by the library's rules (lo, hi and
 * the open flags; DPC_FIELD_NO_RANGE when lo = hi = 0): the table's for a field of a table (a
 * typed value must be in the range: 0 as "unset" is the library's convention for a value not
 * given), else the spec's. */
static dpc_field range_of(const opt_spec *o)
{
    const dpc_field *f = spec_field(o);
    dpc_field r = {.name = "", .type = DPC_FIELD_DOUBLE, .lo = o->lo, .hi = o->hi,
                   .flags = o->flags & (OPT_LO_OPEN | OPT_HI_OPEN)};
    if (f && !(f->flags & DPC_FIELD_NO_RANGE)) { /* else the spec's own ("the CLI's range") */
        /* a list of an array field (a POINTER row): its lo, hi are each entry's (mech.theta,
         * orders); a word list the CLI spells over an integer field (auto = -1): no range */
        int numeric = (dpc_field_is_numeric(f) && f->type != DPC_FIELD_BOOL &&
                       f->type != DPC_FIELD_ENUM && f->type != DPC_FIELD_CHAR &&
                       o->type != OPT_CHOICE) ||
                      (o->type == OPT_LIST && f->type == DPC_FIELD_POINTER);
        r.lo = numeric ? f->lo : 0, r.hi = numeric ? f->hi : 0;
        r.flags = numeric ? f->flags & (DPC_FIELD_LO_OPEN | DPC_FIELD_HI_OPEN) : 0u;
    }
    if (r.lo == 0 && r.hi == 0) r.flags |= DPC_FIELD_NO_RANGE;
    return r;
}

static int has_range(const opt_spec *o) { return !(range_of(o).flags & DPC_FIELD_NO_RANGE); }

static int in_range(const opt_spec *o, double x)
{
    dpc_field r = range_of(o);
    return dpc_field_check_value(&r, "", x, NULL) == DPC_OK;
}

static void range_text(const opt_spec *o, char *buf, size_t len)
{
    dpc_field r = range_of(o);
    dpc_field_format_range(&r, buf, len);
}

/* An ENUM field's help: the spec's words with the default's marked ("replay (default) |
 * buffer"), or the table's words appended ("...: constant (default) | cosine | cooldown"). */
static const char *enum_help(const opt_spec *o, const dpc_field *f, char *buf, size_t len)
{
    const char *w = dpc_field_enum_name(f, (int)f->def);
    size_t wl = w ? strlen(w) : 0, n;
    for (const char *h = w ? strstr(o->help, w) : NULL; h; h = strstr(h + wl, w))
        if ((h == o->help || strchr(" |", h[-1])) && strchr(" |,:", h[wl])) {
            snprintf(buf, len, "%.*s (default)%s", (int)(h - o->help + wl), o->help, h + wl);
            return buf;
        }
    if (o->choices) return o->help;
    n = (size_t)snprintf(buf, len, "%s: ", o->help);
    if (n < len) dpc_field_format_enum(f, " | ", " (default)", buf + n, len - n);
    return buf;
}

/* OPT_OWN_DEFAULT: the spec's help with the table's range before its closing parenthetical
 * ("number of steps n, in [1, 1099511627776] (required; ...)"), else at its end. */
static const char *own_default_help(const opt_spec *o, char *buf, size_t len)
{
    char r[96];
    size_t n = strlen(o->help), at = n;
    if (!has_range(o)) return o->help;
    range_text(o, r, sizeof r);
    if (n && o->help[n - 1] == ')')
        for (size_t i = n - 1, depth = 0; i > 0; i--) {
            depth += o->help[i] == ')';
            depth -= o->help[i] == '(';
            if (depth == 0) {
                if (o->help[i - 1] == ' ') at = i - 1;
                break;
            }
        }
    snprintf(buf, len, "%.*s, %s%s", (int)at, o->help, r, o->help + at);
    return buf;
}

/* The option's help line: its spec's text, then for a field of a library table the table's
 * range and default ("last fraction of steps, in [0, 1] (default 0.25)", "number of groups,
 * >= 1 (default: the strategy's bands)"; an unset 0 without words or a value "not given" (NAN):
 * no default; the words of an OPT_CHOICE the CLI lists itself for an integer field with an
 * "auto" value: the default only). */
static const char *help_text(const opt_spec *o, char *buf, size_t len)
{
    const dpc_field *f = spec_field(o);
    if (f && (o->flags & OPT_OWN_DEFAULT)) return own_default_help(o, buf, len);
    if (!f || strstr(o->help, "(default") || f->type == DPC_FIELD_BOOL ||
        (f->flags & DPC_FIELD_DERIVED))
        return o->help;
    if (f->type == DPC_FIELD_ENUM) return enum_help(o, f, buf, len);
    char d[320] = "", dv[288], r[96] = "";
    int not_given = isnan(f->def) && (f->flags & DPC_FIELD_UNSET_NAN);
    if (!not_given &&
        (f->def != 0 || !(f->flags & DPC_FIELD_UNSET_ZERO) || f->def_text)) {
        dpc_field_format_default(f, dv, sizeof dv);
        snprintf(d, sizeof d, " (default%s%s)", f->def_text ? ": " : " ", dv);
    }
    if (has_range(o)) {
        r[0] = ',', r[1] = ' ';
        range_text(o, r + 2, sizeof r - 2);
    }
    snprintf(buf, len, "%s%s%s", o->help, r, d);
    return buf;
}

static int bad_range(const opt_set *s, const opt_spec *o, const char *v)
{
    const dpc_field *f = spec_field(o);
    double x;
    if (f && f->hi == 1e150 && dpc_io_parse_double(v, &x) && x > f->hi) /* the library's words */
        return opt_fail_at(s, o, "%s overflows: must be at most 1e150", v);
    char r[96];
    range_text(o, r, sizeof r);
    return opt_fail_at(s, o, "must be %s, got %s", r, v);
}

static int parse_list(const opt_set *s, const opt_spec *o, const char *v, opt_value *out)
{
    char item[64];
    out->nlist = 0;
    for (const char *p = v;;) {
        const char *comma = strchr(p, ',');
        size_t l = comma ? (size_t)(comma - p) : strlen(p);
        double d;
        if (l < sizeof item) memcpy(item, p, l), item[l] = '\0';
        if (l >= sizeof item || !dpc_io_parse_double(item, &d)) /* the library's number rules */
            return opt_fail_at(s, o, "expected comma-separated numbers, got '%s'", v);
        if (!in_range(o, d)) return bad_range(s, o, item);
        if (out->nlist == OPT_MAX_LIST)
            return opt_fail_at(s, o, "at most %d values, got more", OPT_MAX_LIST);
        out->list[out->nlist++] = d;
        if (!comma) return 0;
        p = comma + 1;
    }
}

/* Parses v for option o into out; prints the refusal and returns CLI_USAGE when bad. */
static int parse_value(const opt_set *s, const opt_spec *o, const char *v, opt_value *out)
{
    char wbuf[256];
    const char *words = choices_of(o, wbuf, sizeof wbuf);
    memset(out, 0, sizeof *out);
    out->raw = v;
    switch (o->type) {
    case OPT_FLAG: return 0;
    case OPT_STR:
        if (!*v) return opt_fail_at(s, o, "empty value");
        return 0;
    case OPT_CHOICE:
        if (!(out->word = word_index(words, v))) {
            char alts[256];
            snprintf(alts, sizeof alts, "%s", words ? words : "");
            for (char *p = alts; *p; p++)
                if (*p == '|') *p = ',';
            return opt_fail_at(s, o, "expected one of %s, got '%s'", alts, v);
        }
        return 0;
    case OPT_LIST: return parse_list(s, o, v, out);
    default: break;
    }
    if ((o->flags & OPT_WORDS) && (out->word = word_index(words, v))) return 0;
    if (o->type == OPT_DOUBLE) {
        if (!dpc_io_parse_double(v, &out->num))
            return opt_fail_at(s, o, "expected a number%s%s, got '%s'",
                             (o->flags & OPT_WORDS) ? " or " : "",
                             (o->flags & OPT_WORDS) ? o->choices : "", v);
    } else {
        if (!dpc_io_parse_uint(v, &out->u, (o->flags & OPT_BIG) != 0)) {
            /* an integer too large to be represented: say the bound, not "expected an integer" */
            if (v[0] && strspn(v, "0123456789") == strlen(v)) {
                if (has_range(o) && isfinite(range_of(o).hi)) return bad_range(s, o, v);
                return opt_fail_at(s, o, "must be at most %s, got %s",
                                 (o->flags & OPT_BIG) ? "18446744073709551615" : "2^53 = 9007199254740992", v);
            }
            return opt_fail_at(s, o, "expected a non-negative integer%s%s, got '%s'",
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

static int check_conflicts(const opt_set *s)
{
    for (size_t i = 0; i < s->n; i++) {
        const opt_spec *a = s->opts[i];
        if (!s->given[i] || !a->conflicts) continue;
        for (size_t j = 0; j < s->n; j++)
            if (j != i && s->given[j] && list_index(a->conflicts, ' ', s->opts[j]->name, strlen(s->opts[j]->name)))
                return opt_fail_at(s, s->opts[j], "cannot be combined with %s", a->name);
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
    const opt_spec *o = find(s->opts, a, len, &idx);
    for (size_t r = 0; !o && s->cmd->refused && s->cmd->refused[r]; r++)
        if (strlen(s->cmd->refused[r]->name) == len && !strncmp(s->cmd->refused[r]->name, a, len))
            return opt_fail_at(s, s->cmd->refused[r], "%s", s->cmd->refused_why);
    if (!o)
        return opt_fail(s, "%.*s: unknown option (see dpcorr %s --help)", (int)len, a,
                         s->cmd->name);
    const char *v = NULL;
    if (o->type == OPT_FLAG) {
        if (eq) return opt_fail_at(s, o, "takes no value, got '%s'", eq + 1);
    } else if (eq) {
        v = eq + 1;
    } else if (*i + 1 < argc && strncmp(argv[*i + 1], "--", 2) != 0) {
        v = argv[++*i];
    } else {
        return opt_fail_at(s, o, "missing value (%s %s)", o->name, o->metavar);
    }
    opt_value val;
    if (parse_value(s, o, v ? v : "", &val)) return CLI_USAGE;
    if (s->given[idx] && !same_value(o, &s->val[idx], &val))
        return opt_fail_at(s, o, "given twice with different values ('%s' and '%s')",
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
    s->opts = opts_of(cmd);
    s->n = table_len(s->opts);
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
            return opt_fail(s, "'%s': unexpected argument (see dpcorr %s --help)", a,
                             cmd->name);
        }
    }
    return check_conflicts(s);
}

/* ---- accessors ----------------------------------------------------------------------------- */

int opt_typed(const opt_set *s, const opt_spec *o) { return s->given[index_of(s, o)]; }

/* o's index in s, o marked used (every accessor reads through it). */
static size_t use(opt_set *s, const opt_spec *o)
{
    size_t i = index_of(s, o);
    s->used[i] = 1;
    return i;
}

void opt_use(opt_set *s, const opt_spec *o) { (void)use(s, o); }

int opt_given(opt_set *s, const opt_spec *o) { return s->given[use(s, o)]; }

double opt_dbl(opt_set *s, const opt_spec *o, double def)
{
    size_t i = use(s, o);
    return s->given[i] && !s->val[i].word ? s->val[i].num : def;
}

uint64_t opt_u64(opt_set *s, const opt_spec *o, uint64_t def)
{
    size_t i = use(s, o);
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
    if (f->type == DPC_FIELD_BOOL) v = opt_given(s, o) ? 1 : v;
    else if (f->type == DPC_FIELD_ENUM) v = opt_word(s, o, (int)v); /* the table's words */
    else v = o->type == OPT_UINT ? (double)opt_u64(s, o, (uint64_t)v) : opt_dbl(s, o, v);
    /* the parser's range is the field's, and OPT_UINT values are exact below 2^53 */
    if (dpc_field_set(f, member_base, v, NULL) != DPC_OK) { /* unreachable */
    }
}

void opt_read_fields(opt_set *s, const dpc_field_table *t, void *obj)
{
    for (size_t i = 0; i < s->n; i++) {
        const opt_spec *o = s->opts[i];
        const dpc_field *f = o->group && o->fields && o->fields() == t ? spec_field(o) : NULL;
        if (f && dpc_field_applies(t, f, obj)) opt_read_field(s, o, obj);
    }
}

const char *opt_str(opt_set *s, const opt_spec *o, const char *def)
{
    size_t i = use(s, o);
    return s->given[i] ? s->val[i].raw : def;
}

int opt_word(opt_set *s, const opt_spec *o, int def)
{
    size_t i = use(s, o);
    if (!s->given[i]) return def;
    return o->type == OPT_CHOICE ? s->val[i].word - 1 : s->val[i].word;
}

const double *opt_list(opt_set *s, const opt_spec *o, size_t *n)
{
    size_t i = use(s, o);
    *n = s->given[i] ? s->val[i].nlist : 0;
    return s->given[i] ? s->val[i].list : NULL;
}

int opt_finish(opt_set *s)
{
    for (size_t i = 0; i < s->n; i++) {
        const opt_spec *o = s->opts[i];
        if (!s->given[i] || s->used[i] || o == &OPT_HELP || o == &OPT_DRY_RUN) continue;
        if (!o->when) return opt_fail_at(s, o, "not used by this configuration");
        char w[256];
        return opt_fail_at(s, o, "not used by this configuration (it applies with %s)",
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
                    if (s->opts[i]->param && names_param(s->opts[i]->param, w))
                        hit = s->opts[i];
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
        opt_fail(s, "%s", spell_params(s, err->msg, m, sizeof m));
        return rc;
    }
    char f[DPC_ERROR_FIELD_LEN];
    normalize(err->field, f, sizeof f);
    const opt_spec *untyped = NULL;
    for (size_t i = 0; i < s->n; i++) {
        const opt_spec *o = s->opts[i];
        if (!o->param || !names_param(o->param, f)) continue;
        if (s->given[i]) {
            opt_fail_at(s, o, "%s", spell_params(s, msg_body(err), m, sizeof m));
            return rc;
        }
        if (!untyped) untyped = o;
    }
    const char *b = msg_body(err), *body = spell_params(s, b, m, sizeof m);
    const char *head = b != err->msg ? err->field : "", *sep = b != err->msg ? ": " : "";
    if (untyped)
        opt_fail(s, "%s%s%s (%s was not given: a default or derived value; %s sets it)",
                  head, sep, body, f, untyped->name);
    else
        opt_fail(s, "%s%s%s", head, sep, body);
    return rc;
}

int opt_fail_lib_at(const opt_set *s, const opt_spec *o, const dpc_error *err)
{
    char m[DPC_ERROR_MSG_LEN + 256]; /* the option names what the field named */
    opt_fail_at(s, o, "%s", spell_params(s, msg_body(err), m, sizeof m));
    /* a file or spec named by the option that cannot be read is a bad value of the option */
    return err->status == DPC_E_NOMEM || err->status == DPC_E_NUMERIC ? CLI_RUNTIME : CLI_USAGE;
}

/* ---- options generated from a library table (OPT_FIELDS) ---------------------------------- */

/* The generated specs and their texts live as long as the process, like the static tables. */
static opt_spec g_gen[OPT_MAX];
static size_t g_ngen, g_used;
static char g_text[32768];
static struct {
    const opt_cmd *cmd;
    const opt_spec *list[OPT_MAX + 1];
} g_exp[8];
static size_t g_nexp;

static void internal(const char *what)
{
    fprintf(stderr, "dpcorr: internal error: %s\n", what); /* a table mistake of the tool */
    abort();
}

static const char *keep(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static const char *keep(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *p = g_text + g_used;
    int k = vsnprintf(p, sizeof g_text - g_used, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= sizeof g_text - g_used) internal("generated option texts overflow");
    g_used += (size_t)k + 1;
    return p;
}

/* The entry of c other than OPT_FIELDS that sets field prefix+name, or NULL. */
static const opt_spec *setter(const opt_cmd *c, const char *prefix, const char *name)
{
    char full[DPC_ERROR_FIELD_LEN];
    snprintf(full, sizeof full, "%s%s", prefix ? prefix : "", name);
    for (size_t i = 0; c->opts[i]; i++)
        if (c->opts[i]->type != OPT_FIELDS && c->opts[i]->param &&
            names_param(c->opts[i]->param, full))
            return c->opts[i];
    return NULL;
}

/* The option of field `name` of entry e's table: the entry that sets it, else "--" + its rename
 * in e ("p=dim") or its name with '-' for '_'. */
static const char *field_option(const opt_cmd *c, const opt_spec *e, const char *name,
                                char *buf, size_t len)
{
    const opt_spec *x = setter(c, e->param, name);
    if (x) return x->name;
    size_t nl = strlen(name);
    for (const char *r = e->rename; r && *r; r += strspn(r, " ")) {
        size_t l = strcspn(r, " ");
        if (l > nl && !strncmp(r, name, nl) && r[nl] == '=') {
            snprintf(buf, len, "--%.*s", (int)(l - nl - 1), r + nl + 1);
            return buf;
        }
        r += l;
    }
    snprintf(buf, len, "--%s", name);
    for (char *p = buf; *p; p++)
        if (*p == '_') *p = '-';
    return buf;
}

/* The option of field f of entry e (type, names, texts; range, default and words are read from
 * the table when used). */
static const opt_spec *generate(const opt_cmd *c, const opt_spec *e, const dpc_field *f)
{
    /* by dpc_field_type; the non-values (STRUCT .. BYTES) and the CHAR and LONG types, which no
     * option type reads, are not generated (opts_of) */
    static const opt_type types[] = {[DPC_FIELD_DOUBLE] = OPT_DOUBLE, [DPC_FIELD_SIZE] = OPT_UINT,
                                     [DPC_FIELD_INT] = OPT_UINT, [DPC_FIELD_BOOL] = OPT_FLAG,
                                     [DPC_FIELD_ENUM] = OPT_CHOICE, [DPC_FIELD_U64] = OPT_UINT,
                                     [DPC_FIELD_U32] = OPT_UINT};
    if (g_ngen == OPT_MAX) internal("too many generated options");
    opt_spec *g = &g_gen[g_ngen++];
    char nm[64], on[64], ex[64], w[128] = "";
    const char *name = field_option(c, e, f->name, nm, sizeof nm), *lw = strrchr(name, '-');
    *g = (opt_spec){.name = keep("%s", name), .type = types[f->type], .help = f->doc,
                    .param = keep("%s%s", e->param ? e->param : "", f->name),
                    .section = e->section, .when = e->when, .fields = e->fields,
                    .group = e->group};
    if (g->type != OPT_FLAG) g->metavar = keep("%c", toupper((unsigned char)lw[1]));
    if (f->when) { /* "schedule cooldown" -> "--schedule cooldown" */
        const char *sp = strchr(f->when, ' ');
        if (!sp) internal("a field's when without its values"); /* verified by the tables' tests */
        snprintf(w, sizeof w, "%.*s", (int)(sp - f->when), f->when);
        const char *en = field_option(c, e, w, on, sizeof on);
        g->when = keep("%s %s", en, sp + 1);
        snprintf(w, sizeof w, "%s %.*s ", en, (int)strcspn(sp + 1, "|"), sp + 1);
    }
    /* The example's value is in the range and not the default, so that a dry run shows it. */
    if (g->type == OPT_FLAG) g->example = keep("%s%s", w, g->name);
    else if (dpc_field_format_example(f, ex, sizeof ex) < 0)
        internal("no example value for a generated option");
    else g->example = keep("%s%s %s", w, g->name, ex);
    return g;
}

/* c's table with its OPT_FIELDS entries replaced by their options (built once per command). */
static const opt_spec *const *opts_of(const opt_cmd *c)
{
    size_t k = 0, n = 0;
    while (c->opts[n] && c->opts[n]->type != OPT_FIELDS) n++;
    if (!c->opts[n]) return c->opts;
    n = 0;
    while (k < g_nexp && g_exp[k].cmd != c) k++;
    if (k < g_nexp) return g_exp[k].list;
    if (k == sizeof g_exp / sizeof g_exp[0]) internal("too many commands with generated options");
    const opt_spec **list = g_exp[g_nexp].list;
    for (size_t i = 0; c->opts[i]; i++) {
        const opt_spec *e = c->opts[i];
        const dpc_field_table *t = e->type == OPT_FIELDS ? e->fields() : NULL;
        for (size_t j = 0; t && j < t->count; j++) {
            const dpc_field *f = &t->fields[j];
            int typed = dpc_field_is_numeric(f) && f->type != DPC_FIELD_CHAR &&
                        f->type != DPC_FIELD_LONG;
            if (f->group && !strcmp(f->group, e->group) && typed &&
                !setter(c, e->param, f->name) && n < OPT_MAX)
                list[n++] = generate(c, e, f);
        }
        if (!t && n < OPT_MAX) list[n++] = e;
    }
    if (n == OPT_MAX) internal("option table too long");
    list[n] = NULL;
    g_exp[g_nexp++].cmd = c;
    return list;
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
    const opt_spec *const *opts = opts_of(c);
    size_t n = table_len(opts);
    for (size_t i = 0; i < n; i++) {
        const char *sec = opts[i]->section ? opts[i]->section : "options";
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = !strcmp(opts[j]->section ? opts[j]->section : "options", sec);
        if (seen) continue;
        fprintf(f, "%s:\n", sec);
        for (size_t j = i; j < n; j++) {
            const opt_spec *o = opts[j];
            if (strcmp(o->section ? o->section : "options", sec)) continue;
            char head[64], w[256], line[1024], h[768];
            snprintf(head, sizeof head, "  %s%s%s", o->name, o->metavar ? " " : "",
                     o->metavar ? o->metavar : "");
            const char *help = help_text(o, h, sizeof h);
            if (o->when)
                snprintf(line, sizeof line, "%s [%s]", help, subst(w, sizeof w, o->when, c));
            else
                snprintf(line, sizeof line, "%s", help);
            int col = (int)strlen(head); /* the help from column 24, below a long head */
            fprintf(f, "%s%s%*s", head, col >= 22 ? "\n" : "", col >= 22 ? 24 : 24 - col, "");
            wrap(f, line, 24, 24);
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
    const opt_spec *const *opts = opts_of(c);
    for (size_t i = 0; opts[i]; i++) {
        const opt_spec *o = opts[i];
        char ex[512];
        char wh[256];
        fprintf(f, "opt\t%s\t%s\t%s\t%s\t%s\n", o->name, type_name(o->type),
                o->param ? o->param : "-", o->example ? subst(ex, sizeof ex, o->example, c) : "-",
                o->when ? subst(wh, sizeof wh, o->when, c) : "-");
    }
    for (size_t i = 0; c->refused && c->refused[i]; i++)
        fprintf(f, "refused\t%s\n", c->refused[i]->name);
    for (size_t i = 0; opts[i]; i++) { /* the files of cli_check_outputs, for the sweep */
        unsigned fl = opts[i]->flags;
        const char *role = (fl & OPT_OUT_FILE) ? "out" : (fl & OPT_IN_FILE) ? "in"
                         : (fl & OPT_IN_DATA) ? "data" : (fl & OPT_IN_STRATEGY) ? "strategy" : NULL;
        if (role) fprintf(f, "io\t%s\t%s\t%d\n", opts[i]->name, role, (fl & OPT_CONTINUES) != 0);
    }
}

/* ---- dry run ------------------------------------------------------------------------------- */

void opt_dry_num(const char *key, double v) { printf("%s = %.17g\n", key, v); }
void opt_dry_uint(const char *key, uint64_t v) { printf("%s = %llu\n", key, (unsigned long long)v); }
void opt_dry_str(const char *key, const char *v) { printf("%s = %s\n", key, v ? v : ""); }

void opt_dry_field(const dpc_field *f, const void *base, const char *prefix)
{
    const char *m = (const char *)base + f->offset;
    double v = dpc_field_get(f, base);
    uint64_t u;
    const char *str;
    if (!dpc_field_is_numeric(f) && f->type != DPC_FIELD_STRING) return; /* not values */
    printf("%s%s = ", prefix, f->name);
    switch (f->type) {
    case DPC_FIELD_ENUM:
        str = dpc_field_enum_name(f, (int)v);
        printf("%s\n", str ? str : "unknown");
        break;
    case DPC_FIELD_DOUBLE: printf("%.17g\n", v); break;
    case DPC_FIELD_INT: printf("%d\n", (int)v); break; /* (below 2^31: exact in double) */
    case DPC_FIELD_SIZE:
    case DPC_FIELD_BOOL: printf("%llu\n", (unsigned long long)v); break;
    case DPC_FIELD_U64:
        memcpy(&u, m, sizeof u);
        printf("%llu\n", (unsigned long long)u);
        break;
    case DPC_FIELD_U32: printf("%llu\n", (unsigned long long)v); break; /* exact in double */
    case DPC_FIELD_LONG: {
        long l;
        memcpy(&l, m, sizeof l);
        printf("%ld\n", l);
        break;
    }
    case DPC_FIELD_CHAR: {
        char w[16];
        dpc_field_format_char((int)v, w, sizeof w);
        printf("%s\n", w);
        break;
    }
    case DPC_FIELD_STRING:
        memcpy(&str, m, sizeof str);
        printf("%s\n", str ? str : "");
        break;
    default: break;
    }
}

void opt_dry_fields(const dpc_field_table *t, const void *base, const char *prefix)
{
    for (size_t i = 0; i < t->count; i++) {
        const dpc_field *f = &t->fields[i];
        if (f->type == DPC_FIELD_STRUCT && f->sub) { /* "problem.workload.momentum" */
            char sub[128];
            snprintf(sub, sizeof sub, "%s%s.", prefix, f->name);
            opt_dry_fields(f->sub, (const char *)base + f->offset, sub);
        } else {
            opt_dry_field(f, base, prefix);
        }
    }
}

void opt_dry_list(const char *key, const double *v, size_t n)
{
    printf("%s =", key);
    for (size_t i = 0; i < n; i++) printf("%s%.17g", i ? "," : " ", v[i]);
    printf("\n");
}
