/* test_params_doc.c — doc/parameters.md is the library's field tables written out, never edited
 * by hand: this test renders every exported table (name, type, default, accepted values, when
 * it applies, one-line doc) and fails when the file differs, naming the first differing line.
 * DPCORR_WRITE_DOC=1 writes the file instead (after a table changed). It also proves the list
 * below names every table the public headers export, so a new table cannot be left out.
 * Run from the repository root (make check does). */
#include "dpcorr.h"
#include "harness.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DOC "doc/parameters.md"

typedef const dpc_field_table *(*table_fn)(void);
static const struct { const char *name; table_fn fn; } TABLES[] = {
#define T(x) {#x, x}
    T(dpc_train_config_fields),       T(dpc_mech_params_fields),
    T(dpc_noise_config_fields),       T(dpc_privatize_config_fields),
    T(dpc_sampler_config_fields),     T(dpc_model_config_fields),
    T(dpc_features_config_fields),    T(dpc_audit_config_fields),
    T(dpc_advise_query_fields),       T(dpc_gauss_event_fields),
    T(dpc_account_opts_fields),       T(dpc_pld_params_fields),
    T(dpc_strategy_problem_fields),   T(dpc_strategy_options_fields),
    T(dpc_step_info_fields),          T(dpc_train_record_fields),
    T(dpc_ledger_fields),             T(dpc_nu_setup_params_fields),
    T(dpc_sim_config_fields),         T(dpc_sim_noise_config_fields),
    T(dpc_linreg_opts_fields),        T(dpc_linreg_prior_fields),
    T(dpc_dpstat_params_fields),      T(dpc_linreg_step_info_fields),
    T(dpc_srgd_config_fields),        T(dpc_srgd_problem_config_fields),
    T(dpc_srgd_step_info_fields),     T(dpc_kan_run_config_fields),
    T(dpc_kan_lcgd_config_fields),    T(dpc_kan_privacy_fields),
    T(dpc_kan_lcgd_step_info_fields), T(dpc_kan_repro_params_fields),
    T(dpc_run_params_fields),          T(dpc_nu_repro_params_fields),
    T(dpc_linreg_repro_params_fields),  T(dpc_srgd_repro_params_fields),
    T(dpc_theory_sc_fields),
    T(dpc_mech_compare_params_fields),  T(dpc_kan2_config_fields),
    T(dpc_theory_problem_fields),       T(dpc_idx_opts_fields),
    T(dpc_libsvm_opts_fields),          T(dpc_npy_opts_fields),
    T(dpc_csv_opts_fields),             T(dpc_linreg_ssp_opts_fields),
    T(dpc_account_query_fields),        T(dpc_event_fields),
    T(dpc_participation_fields),        T(dpc_workload_fields),
    T(dpc_kan_rate_in_fields),          T(dpc_kan2_theory_want_fields),
    T(dpc_nu_fig4_params_fields),
#undef T
};
#define NTABLES (sizeof TABLES / sizeof TABLES[0])

static const char *const TYPE_NAMES[] = {"double", "size_t", "int", "bool", "enum", "uint64",
                                         "struct", "string", "pointer", "bytes",
                                         "uint32", "char", "long"};

typedef struct sbuf { char *s; size_t n, cap; } sbuf;

static void put(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (k < 0) return;
    if (b->n + (size_t)k + 1 > b->cap) {
        b->cap = (b->n + (size_t)k + 1) * 2;
        b->s = realloc(b->s, b->cap);
        if (!b->s) abort();
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->n, (size_t)k + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)k;
}

/* A cell: '|' escaped, so a doc line cannot break the table. */
static void cell(sbuf *b, const char *text)
{
    put(b, " ");
    for (const char *p = text ? text : ""; *p; p++) put(b, *p == '|' ? "\\|" : "%c", *p);
    put(b, " |");
}

static void flags_text(const dpc_field *f, char *out, size_t len)
{
    int derived = (f->flags & DPC_FIELD_DERIVED) != 0, runtime = (f->flags & DPC_FIELD_RUNTIME) != 0;
    snprintf(out, len, "%s%s%s", derived ? "set by the library" : "", derived && runtime ? "; " : "",
             runtime ? "runtime (results do not depend on it)" : "");
}

/* The values a field accepts, as its check states them: an enum's names, 0 or 1, the range
 * (dpc_field_format_range) with "or 0 (unset)" where 0 means the library derives it; nothing
 * for fields without a range (structs, strings, pointers, bytes, derived, no-range). */
static void accepted(const dpc_field *f, char *out, size_t len)
{
    out[0] = 0;
    if (!dpc_field_is_numeric(f) || (f->flags & (DPC_FIELD_NO_RANGE | DPC_FIELD_DERIVED))) return;
    if (f->type == DPC_FIELD_ENUM) {
        dpc_field_format_enum(f, " | ", NULL, out, len);
        return;
    }
    if (f->type == DPC_FIELD_BOOL) {
        snprintf(out, len, "0 or 1");
        return;
    }
    int n = dpc_field_format_range(f, out, len);
    if ((f->flags & DPC_FIELD_UNSET_ZERO) && n > 0 && (size_t)n < len)
        n += snprintf(out + n, len - (size_t)n, ", or 0 (unset)");
    if ((f->flags & DPC_FIELD_UNSET_NAN) && n > 0 && (size_t)n < len)
        snprintf(out + n, len - (size_t)n, ", or NaN (not given)");
}

static void render_table(sbuf *b, const dpc_field_table *t, const char *prefix)
{
    for (size_t i = 0; i < t->count; i++) {
        const dpc_field *f = &t->fields[i];
        char name[160], def[128], range[512], notes[160], when[400];
        snprintf(name, sizeof name, "`%s%s`", prefix, f->name);
        put(b, "|");
        cell(b, name);
        if (f->type == DPC_FIELD_STRUCT && f->sub) {
            char sub[160];
            snprintf(sub, sizeof sub, "%s (below)", f->sub->name);
            cell(b, sub);
        } else {
            cell(b, (size_t)f->type < sizeof TYPE_NAMES / sizeof TYPE_NAMES[0] ? TYPE_NAMES[f->type] : "?");
        }
        int numeric = dpc_field_is_numeric(f);
        if (numeric || f->def_text) dpc_field_format_default(f, def, sizeof def);
        else snprintf(def, sizeof def, "%s", f->type == DPC_FIELD_STRUCT ? "" : "NULL / none");
        cell(b, def);
        accepted(f, range, sizeof range);
        cell(b, range);
        flags_text(f, notes, sizeof notes);
        if (f->when) snprintf(when, sizeof when, "only with `%s`", f->when);
        else snprintf(when, sizeof when, "%s", notes);
        if (f->when && notes[0]) {
            size_t k = strlen(when);
            snprintf(when + k, sizeof when - k, "; %s", notes);
        }
        cell(b, when);
        cell(b, f->doc);
        put(b, "\n");
    }
}

/* Nested tables once each, after the table that holds them (mech.h's dpc_mech_params is
 * exported on its own; a nested one that is not gets its own section here). */
static int seen_table(const char *const *seen, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(seen[i], name)) return 1;
    return 0;
}

static char *render(void)
{
    sbuf b = {0};
    put(&b, "# Parameters\n\n"
            "Every public parameter struct and step record of the library, as its field table\n"
            "(`dpcorr/field.h`) states it: the name (the `dpc_error.field` a refusal names), the\n"
            "type, the default its `_init` writes, the values accepted (what the range check\n"
            "refuses outside), when it applies, and its meaning. Generated from the tables by\n"
            "`tests/test_params_doc.c` (`DPCORR_WRITE_DOC=1 build/tests/test_params_doc` rewrites\n"
            "it; `make check` fails when it is stale): do not edit by hand. Refusals that involve\n"
            "several fields are stated in each struct's header comment.\n");
    const char *seen[4 * NTABLES];
    size_t nseen = 0;
    const dpc_field_table *queue[4 * NTABLES];
    size_t nq = 0;
    for (size_t i = 0; i < NTABLES; i++) queue[nq++] = TABLES[i].fn();
    for (size_t q = 0; q < nq; q++) {
        const dpc_field_table *t = queue[q];
        if (seen_table(seen, nseen, t->name)) continue;
        seen[nseen++] = t->name;
        put(&b, "\n## %s\n\n| field | type | default | accepted | applies | meaning |\n"
                "|---|---|---|---|---|---|\n", t->name);
        render_table(&b, t, "");
        for (size_t i = 0; i < t->count; i++) /* nested tables not exported on their own */
            if (t->fields[i].type == DPC_FIELD_STRUCT && t->fields[i].sub && nq < 4 * NTABLES)
                queue[nq++] = t->fields[i].sub;
    }
    return b.s;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    sbuf b = {0};
    char chunk[4096];
    size_t k;
    while ((k = fread(chunk, 1, sizeof chunk, f)) > 0) put(&b, "%.*s", (int)k, chunk);
    fclose(f);
    return b.s ? b.s : calloc(1, 1);
}

/* Every `dpc_X_fields(void)` the umbrella's headers declare is in TABLES. */
static void check_every_table_listed(void)
{
    static const char *const headers[] = {
        "include/dpcorr/train.h", "include/dpcorr/mech.h", "include/dpcorr/privatize.h",
        "include/dpcorr/sampler.h", "include/dpcorr/model.h", "include/dpcorr/features.h",
        "include/dpcorr/audit.h", "include/dpcorr/account.h", "include/dpcorr/strategy.h",
        "include/dpcorr/data.h", "include/dpcorr/io.h", "include/dpcorr/common.h",
        "include/dpcorr/rng.h", "include/dpcorr/tune.h", "include/dpcorr/papers/theory.h",
        "include/dpcorr/papers/sim.h", "include/dpcorr/papers/nu_repro.h",
        "include/dpcorr/papers/linreg.h", "include/dpcorr/papers/srgd.h",
        "include/dpcorr/papers/kan.h"};
    size_t found = 0;
    for (size_t h = 0; h < sizeof headers / sizeof headers[0]; h++) {
        char *text = slurp(headers[h]);
        CHECK(text != NULL, "%s: cannot read (run from the repository root)", headers[h]);
        if (!text) continue;
        for (char *p = strstr(text, "_fields(void)"); p; p = strstr(p + 1, "_fields(void)")) {
            char *s = p;
            while (s > text && (s[-1] == '_' || (s[-1] >= 'a' && s[-1] <= 'z') ||
                                (s[-1] >= '0' && s[-1] <= '9')))
                s--;
            char name[128];
            snprintf(name, sizeof name, "%.*s_fields", (int)(p - s), s);
            int listed = 0;
            for (size_t i = 0; i < NTABLES; i++) listed |= !strcmp(TABLES[i].name, name);
            CHECK(listed, "%s declares %s: add it to TABLES in tests/test_params_doc.c", headers[h], name);
            found++;
        }
        free(text);
    }
    CHECK(found == NTABLES, "the headers declare %zu tables, TABLES lists %zu", found, NTABLES);
}

int main(void)
{
    check_every_table_listed();
    for (size_t i = 0; i < NTABLES; i++) {
        const dpc_field_table *t = TABLES[i].fn();
        char want[128];
        snprintf(want, sizeof want, "%s_fields", t->name);
        CHECK(!strcmp(want, TABLES[i].name), "%s describes %s", TABLES[i].name, t->name);
    }
    char *doc = render();
    const char *write = getenv("DPCORR_WRITE_DOC");
    if (write && !strcmp(write, "1")) {
        FILE *f = fopen(DOC, "wb");
        CHECK(f && fputs(doc, f) >= 0 && fclose(f) == 0, "cannot write %s", DOC);
        printf("wrote %s\n", DOC);
    } else {
        char *have = slurp(DOC);
        CHECK(have != NULL, "%s is missing: DPCORR_WRITE_DOC=1 build/tests/test_params_doc", DOC);
        if (have) {
            size_t line = 1, i = 0;
            while (doc[i] && doc[i] == have[i]) line += doc[i++] == '\n';
            CHECK(doc[i] == have[i], "%s is stale from line %zu (a field table changed): "
                  "DPCORR_WRITE_DOC=1 build/tests/test_params_doc", DOC, line);
        }
        free(have);
    }
    free(doc);
    return TEST_SUMMARY();
}
