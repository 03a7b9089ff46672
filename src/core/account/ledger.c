/* ledger.c — the privacy ledger shared by every trainer: defaults and its JSON form. */
#include "dpcorr/account.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
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

void dpc_ledger_init(dpc_ledger *L)
{
    if (!L) return;
    memset(L, 0, sizeof *L);
    L->neighbor = DPC_NEIGHBOR_ZERO_OUT;
    L->part.kind = DPC_PART_MINSEP;
    L->part.k = 1;
    L->part.b = 1;
    L->q = 1.0;
    L->rounds = 1;
    L->noise_multiplier = L->sensitivity = L->column_norm = L->noise_std = NAN;
    L->epsilon_target = L->delta = L->epsilon = L->epsilon_paper = NAN;
    L->expected_batch = NAN;
    L->epsilon_pre = NAN;
    for (int k = 0; k < DPC_ROUTE_COUNT; k++) L->eps_routes[k] = NAN;
    L->epsilon_single = NAN;
    L->mc_confidence = NAN;
    L->epsilon_mc = NAN;
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
