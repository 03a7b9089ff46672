/* ledger.c — the privacy ledger shared by every trainer: defaults and its JSON form; the JSON
 * form of an accounting query's answer (dpc_account_solution_json), the record of `dpcorr account`. */
#include "dpcorr/account.h"
#include "dpcorr/io.h"
#include "field/field_def.h"
#include "mech/mech_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *dpc_calibration_name(dpc_calibration c)
{
    switch (c) {
    case DPC_CALIBRATION_ACCOUNTANT: return "accountant";
    case DPC_CALIBRATION_PAPER: return "paper";
    }
    return "unknown";
}

dpc_status dpc_calibration_parse(const char *s, dpc_calibration *out, dpc_error *err)
{
    if (s && !strcmp(s, "accountant")) *out = DPC_CALIBRATION_ACCOUNTANT;
    else if (s && !strcmp(s, "paper")) *out = DPC_CALIBRATION_PAPER;
    else
        return dpc_error_param(err, DPC_E_INVALID, "calibration",
                               "unknown '%s' (expected accountant or paper)", s ? s : "(null)");
    return DPC_OK;
}

/* The manual of dpc_ledger, one row per field in struct order (dpcorr/account.h); every field
 * is the library's output (DERIVED). Strings are inline char arrays (BYTES). */
#define D DPC_FIELD_DERIVED
/* its pattern nests dpc_participation's own table (mech.h): the ledger's `part` row is DERIVED,
 * so no check descends into it */
#define LG(m) DPC_FIELD_AT(dpc_ledger, m)
#define NUM(m, d) .type = DPC_FIELD_DOUBLE, LG(m), .def = (d), .flags = D
static const char *const neighbor_names[] = {"add-remove", "zero-out", "replace-one"};
static const char *const rng_mode_names[] = {"seeded", "secure"};
static const dpc_field ledger_fields[] = {
    {.name = "algorithm", .type = DPC_FIELD_BYTES, LG(algorithm), .flags = D,
     .doc = "the trainer: dp-ftrl (DP-SGD: its identity mechanism), lcgd-projected, ..."},
    {.name = "mechanism", .type = DPC_FIELD_BYTES, LG(mechanism), .flags = D,
     .doc = "dpc_mech_describe of the noise mechanism"},
    {.name = "sampler", .type = DPC_FIELD_BYTES, LG(sampler), .flags = D,
     .doc = "batch selection (poisson, fixed, uniform, disjoint, ...)"},
    {.name = "route", .type = DPC_FIELD_BYTES, LG(route), .flags = D,
     .doc = "how the run maps to an event (e.g. amplified by sampling)"},
    {.name = "accountant", .type = DPC_FIELD_BYTES, LG(accountant), .flags = D,
     .doc = "dpc_accountant_name of the accountant that gave epsilon"},
    {.name = "calibration", .type = DPC_FIELD_BYTES, LG(calibration), .flags = D,
     .doc = "how the noise was chosen: accountant, given, or paper: <source>"},
    {.name = "neighbor", .type = DPC_FIELD_ENUM, LG(neighbor), .def = DPC_NEIGHBOR_ZERO_OUT,
     DPC_FIELD_NAMES(neighbor_names), .flags = D, .doc = "the relation the guarantee holds for"},
    {.name = "part", .type = DPC_FIELD_STRUCT, LG(part), .sub = &dpc__participation_table, .flags = D,
     .doc = "participation pattern of one example"},
    {.name = "q", NUM(q, 1), .doc = "sampling rate (1 = none)"},
    {.name = "rounds", .type = DPC_FIELD_SIZE, LG(rounds), .def = 1, .flags = D,
     .doc = "compositions of the amplified route (1 otherwise)"},
    {.name = "amplified", .type = DPC_FIELD_BOOL, LG(amplified), .flags = D,
     .doc = "1: epsilon is amplified by sampling"},
    {.name = "noise_multiplier", NUM(noise_multiplier, NAN),
     .doc = "z: noise std per row of Z / (clip x column_norm)"},
    {.name = "sensitivity", NUM(sensitivity, NAN),
     .doc = "sens(C, pattern) per unit clip (all participations)"},
    {.name = "sensitivity_exact", .type = DPC_FIELD_BOOL, LG(sensitivity_exact), .flags = D,
     .doc = "1: the sensitivity is exact (else an upper bound)"},
    {.name = "column_norm", NUM(column_norm, NAN),
     .doc = "one participation's sensitivity per unit clip"},
    {.name = "noise_std", NUM(noise_std, NAN),
     .doc = "std of each entry of Z per unit clip (z x column_norm)"},
    {.name = "epsilon_target", NUM(epsilon_target, NAN),
     .doc = "the target epsilon (NAN when the noise multiplier was given)"},
    {.name = "delta", NUM(delta, NAN), .doc = "the run's delta"},
    {.name = "epsilon", NUM(epsilon, NAN), .doc = "epsilon of the full run, by accountant"},
    {.name = "epsilon_paper", NUM(epsilon_paper, NAN),
     .doc = "the paper's own closed form for the same run (NAN if none)"},
    {.name = "steps", .type = DPC_FIELD_SIZE, LG(steps), .flags = D, .doc = "n"},
    {.name = "steps_per_epoch", .type = DPC_FIELD_SIZE, LG(steps_per_epoch), .flags = D,
     .doc = "steps that process N examples (on average)"},
    {.name = "expected_batch", NUM(expected_batch, NAN), .doc = "the divisor of the gradient sum"},
    {.name = "rng_mode", .type = DPC_FIELD_ENUM, LG(rng_mode), .def = DPC_RNG_SEEDED,
     DPC_FIELD_NAMES(rng_mode_names), .flags = D, .doc = "seeded (experiments) or secure"},
    {.name = "seed", .type = DPC_FIELD_U64, LG(seed), .flags = D, .doc = "seeded mode only"},
    {.name = "note", .type = DPC_FIELD_BYTES, LG(note), .flags = D,
     .doc = "why a route was not available when it matters; empty otherwise"},
    {.name = "mc_samples", .type = DPC_FIELD_SIZE, LG(mc_samples), .flags = D,
     .doc = "balls-in-bins Monte Carlo: samples per direction (0: none)"},
    {.name = "mc_confidence", NUM(mc_confidence, NAN), .doc = "its confidence (NAN: none)"},
    {.name = "mc_seed", .type = DPC_FIELD_U64, LG(mc_seed), .flags = D,
     .doc = "the key of its draws"},
    {.name = "guarantee", .type = DPC_FIELD_BYTES, LG(guarantee), .flags = D,
     .doc = "balls-in-bins: deterministic or high-probability, confidence c; empty otherwise"},
    {.name = "epsilon_mc", NUM(epsilon_mc, NAN),
     .doc = "balls-in-bins: the Monte Carlo epsilon beside the deterministic bound (NAN: none)"},
    {.name = "n_pre", .type = DPC_FIELD_SIZE, LG(n_pre), .flags = D,
     .doc = "releases of the same records composed into epsilon before the run (0: none)"},
    {.name = "pre_noise_multiplier", .type = DPC_FIELD_BYTES, LG(pre_noise_multiplier),
     .flags = D, .doc = "(DPC_LEDGER_MAX_PRE) their noise multipliers (Gaussian, no sampling)"},
    {.name = "epsilon_pre", NUM(epsilon_pre, NAN),
     .doc = "epsilon of the pre-releases alone at delta (NAN: none)"},
    {.name = "delta_derived", .type = DPC_FIELD_BOOL, LG(delta_derived), .flags = D,
     .doc = "1: delta was not given and is dpc_account_default_delta(N)"},
    {.name = "eps_routes", .type = DPC_FIELD_BYTES, LG(eps_routes), .flags = D,
     .def_text = "NAN each", .doc = "(DPC_ROUTE_COUNT) epsilon by every route (NAN: not computed)"},
    {.name = "route_why", .type = DPC_FIELD_BYTES, LG(route_why), .flags = D,
     .doc = "(DPC_ROUTE_COUNT) static text: why a route gave no epsilon"},
    {.name = "epsilon_single", NUM(epsilon_single, NAN),
     .doc = "one participation, no amplification (NAN: not computed)"},
    {.name = "advice", .type = DPC_FIELD_POINTER, LG(advice), .flags = D,
     .doc = "static text when epsilon > 10x epsilon_single, else NULL"},
};
#undef LG
#undef NUM
#undef D
static const dpc_field_table ledger_table = DPC_FIELD_TABLE(dpc_ledger, ledger_fields);

const dpc_field_table *dpc_ledger_fields(void) { return &ledger_table; }

void dpc_ledger_init(dpc_ledger *L)
{
    if (!L) return;
    dpc_field_defaults(&ledger_table, L);
    for (int k = 0; k < DPC_ROUTE_COUNT; k++) L->eps_routes[k] = NAN; /* an array: per entry */
}

/* A bounded appender: keeps counting past the end so the caller learns the full length. */
typedef struct sink {
    char *buf;
    size_t len, n;
} sink;

static void put(sink *s, const char *fmt, ...) DPC_PRINTF(2, 3);
static void put(sink *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t room = s->n < s->len ? s->len - s->n : 0;
    int k = vsnprintf(room ? s->buf + s->n : NULL, room, fmt, ap);
    va_end(ap);
    if (k > 0) s->n += (size_t)k;
}

static void key(sink *s, const char *k, int *first)
{
    put(s, "%s\"%s\": ", *first ? "" : ", ", k);
    *first = 0;
}

static void num(sink *s, const char *k, double v, int *first)
{
    key(s, k, first);
    if (isnan(v)) put(s, "null");
    else if (isinf(v)) put(s, v > 0 ? "\"inf\"" : "\"-inf\"");
    else put(s, "%.17g", v);
}

static void str(sink *s, const char *k, const char *v, int *first)
{
    key(s, k, first);
    put(s, "\"");
    for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
        if (*p == '"' || *p == '\\') put(s, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f) put(s, "\\u%04x", *p);
        else put(s, "%c", *p);
    }
    put(s, "\"");
}

static void cnt(sink *s, const char *k, unsigned long long v, int *first)
{
    key(s, k, first);
    put(s, "%llu", v);
}

size_t dpc_ledger_json(const dpc_ledger *L, char *buf, size_t len)
{
    sink s = {buf, len, 0};
    if (buf && len) buf[0] = '\0';
    if (!L) {
        put(&s, "null");
        return s.n;
    }
    int f = 1;
    put(&s, "{");
    str(&s, "algorithm", L->algorithm, &f);
    str(&s, "mechanism", L->mechanism, &f);
    str(&s, "sampler", L->sampler, &f);
    str(&s, "route", L->route, &f);
    str(&s, "accountant", L->accountant, &f);
    str(&s, "calibration", L->calibration, &f);
    str(&s, "neighbor", dpc_neighbor_name(L->neighbor), &f);
    str(&s, "participation", L->part.kind == DPC_PART_CYCLIC ? "cyclic" : "min-sep", &f);
    cnt(&s, "participations", L->part.k, &f);
    cnt(&s, "separation", L->part.b, &f);
    num(&s, "q", L->q, &f);
    cnt(&s, "rounds", L->rounds, &f);
    key(&s, "amplified", &f);
    put(&s, L->amplified ? "true" : "false");
    num(&s, "noise_multiplier", L->noise_multiplier, &f);
    num(&s, "sigma", L->noise_multiplier, &f);
    num(&s, "sensitivity", L->sensitivity, &f);
    key(&s, "sensitivity_exact", &f);
    put(&s, L->sensitivity_exact ? "true" : "false");
    num(&s, "column_norm", L->column_norm, &f);
    num(&s, "noise_std_per_unit_clip", L->noise_std, &f);
    num(&s, "epsilon", L->epsilon, &f);
    num(&s, "delta", L->delta, &f);
    if (L->delta_derived) {
        key(&s, "delta_derived", &f);
        put(&s, "true");
    }
    num(&s, "epsilon_target", L->epsilon_target, &f);
    num(&s, "epsilon_paper", L->epsilon_paper, &f);
    cnt(&s, "steps", L->steps, &f);
    cnt(&s, "steps_per_epoch", L->steps_per_epoch, &f);
    num(&s, "expected_batch", L->expected_batch, &f);
    str(&s, "seed_mode", dpc_rng_mode_name(L->rng_mode), &f);
    if (L->rng_mode == DPC_RNG_SEEDED) cnt(&s, "seed", L->seed, &f);
    if (L->note[0]) str(&s, "note", L->note, &f);
    if (!isnan(L->eps_routes[0])) {
        key(&s, "routes", &f);
        put(&s, "{");
        int fi = 1;
        for (int k = 0; k < DPC_ROUTE_COUNT; k++) {
            const char *nm = dpc_mech_route_name((dpc_mech_route)k);
            if (isfinite(L->eps_routes[k])) num(&s, nm, L->eps_routes[k], &fi);
            else str(&s, nm, L->route_why[k] ? L->route_why[k] : "infinite", &fi);
        }
        put(&s, "}");
        num(&s, "epsilon_single", L->epsilon_single, &f);
    }
    if (L->advice) str(&s, "advice", L->advice, &f);
    if (L->mc_samples) {
        cnt(&s, "mc_samples", L->mc_samples, &f);
        num(&s, "mc_confidence", L->mc_confidence, &f);
        cnt(&s, "mc_seed", L->mc_seed, &f);
    }
    if (L->guarantee[0]) str(&s, "guarantee", L->guarantee, &f);
    if (!isnan(L->epsilon_mc)) num(&s, "epsilon_mc", L->epsilon_mc, &f);
    if (L->n_pre) {
        key(&s, "pre_noise_multipliers", &f);
        put(&s, "[");
        for (size_t i = 0; i < L->n_pre && i < DPC_LEDGER_MAX_PRE; i++)
            put(&s, "%s%.17g", i ? ", " : "", L->pre_noise_multiplier[i]);
        put(&s, "]");
        num(&s, "epsilon_pre", L->epsilon_pre, &f);
    }
    put(&s, "}");
    return s.n;
}

/* ---- the answer to an accounting query (dpc_account_solution_json) ------------------------- */

static void boolean(sink *s, const char *k, int v, int *first)
{
    key(s, k, first);
    put(s, v ? "true" : "false");
}

/* Every route's epsilon (or why it gave none), the single-participation epsilon, the advice. */
static void routes_json(sink *s, const dpc_account_mech_info *in, int *f)
{
    for (int k = 0; k < DPC_ROUTE_COUNT; k++) {
        char name[40];
        snprintf(name, sizeof name, "epsilon_%s", dpc_mech_route_name((dpc_mech_route)k));
        num(s, name, in->eps_routes[k], f);
        if (in->route_why[k]) {
            snprintf(name, sizeof name, "why_%s", dpc_mech_route_name((dpc_mech_route)k));
            str(s, name, in->route_why[k], f);
        }
    }
    num(s, "epsilon_single", in->epsilon_single, f);
    if (in->advice) str(s, "advice", in->advice, f);
}

/* A mechanism run: its pattern, sensitivity, noise and route (dpc_account_mech_info). */
static void mech_json(sink *s, const dpc_account_query *q, const dpc_account_solution *sol,
                      int *f)
{
    const dpc_account_mech_info *in = &sol->info;
    str(s, "mech", dpc_mech_kind_name(q->mech.kind), f);
    cnt(s, "participations", sol->part.k, f);
    cnt(s, "min_sep", sol->part.b, f);
    num(s, "sensitivity", in->sensitivity, f);
    boolean(s, "sensitivity_exact", in->sensitivity_exact, f);
    boolean(s, "amplified", in->amplified, f);
    cnt(s, "rounds", in->rounds, f);
    num(s, "noise_multiplier", in->noise_multiplier, f);
    num(s, "column_norm", in->column_norm, f);
    num(s, "noise_std_per_unit_clip", in->noise_std, f);
    num(s, "run_sigma", in->run_sigma, f);
    str(s, "route", dpc_mech_route_name(in->route), f);
    if (q->every_route) routes_json(s, in, f);
    if (q->balls_in_bins) cnt(s, "bins", q->balls_in_bins, f);
    if (in->mc_samples) {
        cnt(s, "mc_samples", in->mc_samples, f);
        num(s, "mc_confidence", in->mc_confidence, f);
        cnt(s, "mc_seed", in->mc_seed, f);
    }
    if (in->route == DPC_ROUTE_BALLS_IN_BINS) {
        char g[48];
        if (in->bib_deterministic) snprintf(g, sizeof g, "deterministic");
        else snprintf(g, sizeof g, "high-probability, confidence %.10g", in->mc_confidence);
        str(s, "guarantee", g, f);
    }
    if (in->mc_samples && in->bib_deterministic) num(s, "epsilon_mc", in->eps_bib_mc, f);
    if (in->note) str(s, "note", in->note, f);
}

size_t dpc_account_solution_json(const dpc_account_query *q, const dpc_account_solution *sol,
                                 char *buf, size_t len)
{
    sink s = {buf, len, 0};
    if (buf && len) buf[0] = '\0';
    if (!q || !sol) {
        put(&s, "null");
        return s.n;
    }
    const dpc_account_result *r = &sol->result;
    dpc_accountant acc = sol->opts.accountant;
    int f = 1;
    put(&s, "{");
    str(&s, "mode", dpc_account_mode_name(q->mode), &f);
    str(&s, "accountant", dpc_accountant_name(acc), &f);
    num(&s, "epsilon", r->epsilon, &f);
    num(&s, "delta", r->delta, &f);
    num(&s, "sigma", sol->sigma, &f);
    cnt(&s, "steps", sol->steps, &f);
    num(&s, "q", q->q, &f);
    str(&s, "neighbor", dpc_neighbor_name((dpc_neighbor)q->neighbor), &f);
    if (acc == DPC_ACCOUNTANT_RDP) num(&s, "order", r->order, &f);
    if (acc == DPC_ACCOUNTANT_ZCDP) num(&s, "rho", r->rho, &f);
    if (acc == DPC_ACCOUNTANT_GDP) num(&s, "mu", r->mu, &f);
    if (acc == DPC_ACCOUNTANT_PLD) {
        num(&s, "interval", sol->opts.pld_interval, &f);
        str(&s, "discretization", dpc_pld_disc_name(sol->opts.pld_disc), &f);
        if (!isnan(r->order)) num(&s, "rdp_order", r->order, &f); /* RDP's bound was smaller */
    }
    if (sol->have_info) mech_json(&s, q, sol, &f);
    boolean(&s, "upper_bound", r->upper_bound, &f);
    put(&s, "}");
    return s.n;
}

void dpc_ledger_json_member(dpc_json_writer *w, const char *key, const dpc_ledger *L)
{
    size_t n = dpc_ledger_json(L, NULL, 0);
    char *buf = malloc(n + 1);
    if (buf) {
        dpc_ledger_json(L, buf, n + 1);
        dpc_json_raw(w, key, buf);
        free(buf);
    } else {
        dpc_json_null(w, key);
    }
}

void dpc_ledger_report_json(dpc_json_writer *w, const dpc_ledger *L, const char *telemetry)
{
    dpc_ledger_json_member(w, "privacy", L);
    dpc_json_str(w, "telemetry", telemetry);
    /* jax_privacy's "auxiliary information" pitfall: a report sits next to the model and looks
     * publishable, so it says field by field what the guarantee covers; the telemetry stays
     * (operators need it to tune and debug) but is marked as what it is */
    dpc_json_str(w, "dp_outputs", "the parameters (params_hash) and the privacy ledger only");
    dpc_json_str(w, "not_dp", "NOT differentially private: the telemetry, the progress lines, "
                              "the timings, throughput and byte counts (they depend on the "
                              "realised batch sizes) are computed from the training data without "
                              "noise, the test metrics from the test set without noise; do not "
                              "publish them with the model");
}
