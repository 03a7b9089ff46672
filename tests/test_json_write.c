/* test_json_write.c — the library's JSON writer (dpcorr/io.h, dpc_json_writer): separators and
 * line layout, escapes, UTF-8 repair, NaN/inf and %.17g numbers, nesting, one-line mode, enum and
 * integer fields, 64-bit hashes (dpc_json_hash); the "isa_levels" report section
 * (dpc_tune_report_json), the "memory" one (dpc_train_memory_report_json), the DP-FTRL run's
 * "epochs" and "time_split_s" (dpc_train_records_report_json, dpc_train_times_report_json), the
 * features' "normalization" (dpc_features_normalization_report_json), the randomness
 * (dpc_rng_report_json) and the reports of advise, theory and mech optimize (dpc_advise_json,
 * dpc_nu_eval_json, dpc_strategy_report_json). Expected strings are built by the documented
 * rules, not copied from output. */
#include "dpcorr/account.h"
#include "dpcorr/features.h"
#include "dpcorr/field.h"
#include "dpcorr/io.h"
#include "dpcorr/papers/sim.h"
#include "dpcorr/rng.h"
#include "dpcorr/strategy.h"
#include "dpcorr/train.h"
#include "dpcorr/tune.h"
#include "harness.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

/* Runs fn on a writer into a temporary stream and returns the text (static buffer). */
static const char *render(void (*fn)(dpc_json_writer *w), int oneline)
{
    static char buf[4096];
    FILE *f = tmpfile();
    if (!f) return "";
    dpc_json_writer w;
    if (oneline) dpc_json_begin_line(&w, f);
    else dpc_json_begin(&w, f);
    fn(&w);
    dpc_json_finish(&w);
    rewind(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

static void nested(dpc_json_writer *w)
{
    dpc_json_str(w, "kind", "nu");
    dpc_json_obj(w, "config");
    dpc_json_num(w, "lr", 0.5);
    dpc_json_int(w, "steps", -3);
    dpc_json_end(w);
    dpc_json_arr(w, "log");
    dpc_json_obj(w, NULL);
    dpc_json_bool(w, "ok", 1);
    dpc_json_null(w, "x");
    dpc_json_end(w);
    dpc_json_end(w);
    dpc_json_obj(w, "empty");
    dpc_json_end(w);
}

static void numbers(dpc_json_writer *w)
{
    double v[4] = {NAN, INFINITY, -INFINITY, 0.1};
    dpc_json_nums(w, "v", v, 4);
    dpc_json_hash(w, "h", 0xfedcba9876543210ull);
    dpc_json_hash(w, "h0", 42);
    dpc_json_num(w, "third", 1.0 / 3.0);
    dpc_json_raw(w, "raw", "{\"a\": 1}");
}

static void strings(dpc_json_writer *w)
{
    /* quote, backslash, newline, DEL, a 2-byte and a 4-byte character (kept), a lone
     * continuation byte, an overlong form, a surrogate and a Latin-1 byte (each U+FFFD) */
    dpc_json_str(w, "s", "a\"b\\c\nd\x7f" "\xc3\xa9" "\xf0\x9f\x98\x80" "\x80" "\xc0\xaf"
                         "\xed\xa0\x80" "\xe9x");
    dpc_json_str(w, "k\x01", NULL);
}

static int g_enum_value = 1;
static void field(dpc_json_writer *w)
{
    static const char *const names[] = {"zero", "one"};
    dpc_field fe = {0};
    fe.name = "mode";
    fe.type = DPC_FIELD_ENUM;
    fe.offset = 0;
    fe.size = sizeof g_enum_value;
    fe.names = names;
    fe.nnames = 2;
    dpc_json_field(w, &fe, &g_enum_value);
}

/* The narrow types: a CHAR as the character's text (a delimiter: ";" or "space"), a u32 and a
 * long (negative) as integers. */
typedef struct narrow_rec { uint32_t stream; char delim, blank; long col; } narrow_rec;
static narrow_rec g_narrow = {4294967295u, ';', ' ', -2};
static void narrow_fields(dpc_json_writer *w)
{
    dpc_field f[4] = {{.name = "stream", .type = DPC_FIELD_U32, .size = 4},
                      {.name = "delim", .type = DPC_FIELD_CHAR, .size = 1},
                      {.name = "blank", .type = DPC_FIELD_CHAR, .size = 1},
                      {.name = "col", .type = DPC_FIELD_LONG, .size = sizeof(long)}};
    f[0].offset = offsetof(narrow_rec, stream);
    f[1].offset = offsetof(narrow_rec, delim);
    f[2].offset = offsetof(narrow_rec, blank);
    f[3].offset = offsetof(narrow_rec, col);
    for (int i = 0; i < 4; i++) dpc_json_field(w, &f[i], &g_narrow);
}

/* A measured table with holes (levels the CPU lacks are 0 and must be left out) and a forced
 * one, whose table is not written. */
static const dpc_isa g_levels[DPC_TUNE_NFAMILIES] = {DPC_ISA_AVX2, DPC_ISA_AVX512, DPC_ISA_SSE2};
static void tune_measured(dpc_json_writer *w)
{
    dpc_tune_levels t = {{DPC_ISA_AVX2, DPC_ISA_AVX512, DPC_ISA_SSE2},
                         {{0, 0.5, 0.25, 0}, {0, 4, 0, 2}, {0, 1.5, 0, 0}},
                         0.125};
    dpc_tune_report_json(w, 0, g_levels, &t);
}
static void tune_forced(dpc_json_writer *w) { dpc_tune_report_json(w, 1, g_levels, NULL); }

/* 10 x 3 train and 4 x 3 test examples: (10 + 4) x (3 + 1) doubles = 448 bytes of data. */
static dpc_dataset *g_train, *g_test;
static long long g_rss;
static void memory(dpc_json_writer *w)
{
    dpc_train_memory_report_json(w, g_train, g_test, 7, 1234, g_rss);
}

/* Two records (the second without a test set: NAN written as null) and a time split whose
 * loop is the front end's time in the loop minus the steps' parts (10 - (1+2+3+0.5+0.25)). */
static void records(dpc_json_writer *w)
{
    dpc_train_record r[2] = {{.step = 5, .epoch = 1, .train_loss = 0.5, .test_loss = 0.25,
                              .test_accuracy = 0.75, .epsilon = 1.5, .time_s = 2},
                             {.step = 7, .epoch = 2, .train_loss = 0.125, .test_loss = NAN,
                              .test_accuracy = NAN, .epsilon = 2, .time_s = 3}};
    dpc_train_records_report_json(w, r, 2);
    dpc_train_times tm = {.sample_s = 1, .gradient_s = 2, .noise_s = 3, .update_s = 0.5,
                          .other_s = 0.25, .evaluate_s = 4};
    dpc_train_times_report_json(w, &tm, 0.75, 0.125, 10);
}

/* Private centering (its release the ledger's first pre-release), GroupNorm only, none. */
static dpc_features_config g_fc;
static void normalization(dpc_json_writer *w)
{
    dpc_ledger L;
    memset(&L, 0, sizeof L);
    L.n_pre = 1;
    L.pre_noise_multiplier[0] = 20;
    L.epsilon_pre = 0.5;
    dpc_features_normalization_report_json(w, &g_fc, &L);
}

/* Seeded: the 64-bit seed exact (2^64 - 1 is not a double); secure: null, never the key. */
static dpc_rng g_rng;
static void randomness(dpc_json_writer *w) { dpc_rng_report_json(w, &g_rng); }

/* ---- the command reports, from hand-made library objects ---- */
static dpc_advise_query g_q;
static dpc_advice g_adv[2];
static const char *g_run[2] = {"--mech nu --nu 0.5", NULL};
static void advise(dpc_json_writer *w) { dpc_advise_json(w, &g_q, g_adv, 2, g_run); }
static void advise_norun(dpc_json_writer *w) { dpc_advise_json(w, &g_q, g_adv, 1, NULL); }

static dpc_nu_setup_params g_np;
static dpc_nu_setup g_su;
static dpc_nu_eval g_ev;
static dpc_sim_result g_sr;
static void nu_eval(dpc_json_writer *w) { dpc_nu_eval_json(w, &g_np, &g_su, "m", 2, &g_ev, NULL); }
static void nu_sim(dpc_json_writer *w) { dpc_nu_eval_json(w, &g_np, &g_su, "m", 2, &g_ev, &g_sr); }

static dpc_strategy g_st;
static dpc_strategy_baseline g_bl[2];
static void strat(dpc_json_writer *w) { dpc_strategy_report_json(w, &g_st, 0.5, "o.json", g_bl, 2); }
static void strat_noout(dpc_json_writer *w) { dpc_strategy_report_json(w, &g_st, 0.5, NULL, NULL, 0); }

static void test_reports(void)
{
    dpc_advise_query_init(&g_q);
    g_q.n_examples = 100, g_q.batch = 10, g_q.epochs = 2, g_q.epsilon = 1.5;
    memset(g_adv, 0, sizeof g_adv);
    g_adv[0] = (dpc_advice){.mech = DPC_MECH_NU, .sampler = DPC_SAMPLER_FIXED, .ok = 1,
                            .amplified = 0, .noise_multiplier = 2, .noise_std = 4, .rmse = 0.5,
                            .error = 2, .loss_ratio = 0.25, .epsilon = 1.25, .seconds = 0.5};
    snprintf(g_adv[0].mechanism, sizeof g_adv[0].mechanism, "nu");
    snprintf(g_adv[0].route, sizeof g_adv[0].route, "r");
    snprintf(g_adv[0].why, sizeof g_adv[0].why, "best");
    g_adv[1].sampler = DPC_SAMPLER_POISSON, g_adv[1].seconds = 1;
    snprintf(g_adv[1].mechanism, sizeof g_adv[1].mechanism, "x");
    snprintf(g_adv[1].why, sizeof g_adv[1].why, "no");
    /* the query's shape, then per candidate its numbers only when it applies (ok) */
    CHECK(!strcmp(render(advise, 1),
                  "{\"n_examples\": 100, \"batch\": 10, \"epochs\": 2, \"epsilon\": 1.5, "
                  "\"candidates\": [{\"applicable\": true, \"mechanism\": \"nu\", \"sampler\": "
                  "\"fixed\", \"train_options\": \"--mech nu --nu 0.5\", \"route\": \"r\", "
                  "\"amplified\": false, \"noise_multiplier\": 2, \"noise_std_per_unit_clip\": 4, "
                  "\"rmse\": 0.5, \"error\": 2, \"vs_sgd\": 0.25, \"epsilon\": 1.25, "
                  "\"calibration_s\": 0.5, \"why\": \"best\"}, {\"applicable\": false, "
                  "\"mechanism\": \"x\", \"sampler\": \"poisson\", \"calibration_s\": 1, "
                  "\"why\": \"no\"}]}\n"),
          "advise: %s", render(advise, 1));
    CHECK(!strstr(render(advise_norun, 1), "train_options"), "advise without runs: %s",
          render(advise_norun, 1));

    dpc_nu_setup_params_init(&g_np);
    memset(&g_su, 0, sizeof g_su);
    memset(&g_ev, 0, sizeof g_ev);
    g_np.problem = DPC_NU_PROBLEM_SC, g_np.mu = 0.5, g_np.L = 2;
    g_ev.sc = (dpc_theory_sc_result){1.5, 3, 0, 0};
    CHECK(!strcmp(render(nu_eval, 1),
                  "{\"problem\": \"sc\", \"mechanism\": \"m\", \"kappa\": 4, "
                  "\"gamma_inf2\": 2, \"bound_F\": 1.5, \"bound_dist2\": 3, "
                  "\"optimized_bound_F\": null}\n"),
          "theory sc: %s", render(nu_eval, 1));
    g_np.problem = DPC_NU_PROBLEM_MEAN, g_su.d = 1, g_ev.series_ok = 0;
    g_ev.mean_opt = 0.125, g_ev.ratio_R = 8, g_ev.quadrature.v0 = 0.75;
    const char *t = render(nu_eval, 1);
    CHECK(strstr(t, "{\"problem\": \"mean\", \"mechanism\": \"m\", \"d\": 1, ") == t &&
              strstr(t, "\"v0\": 0.75, \"v0_series\": null, ") &&
              strstr(t, "\"mean_opt\": 0.125, \"ratio_R\": 8, ") && !strstr(t, "sim_"),
          "theory mean: %s", t);
    g_np.problem = DPC_NU_PROBLEM_LTI, g_np.model = DPC_SIM_RANDOM;
    g_sr = (dpc_sim_result){.mean = 0.5, .stderr_ = 0.25, .steps = 10, .burn_in = 3, .seed = 7};
    t = render(nu_sim, 1);
    CHECK(!strstr(t, "mean_opt") &&
              strstr(t, "\"rate_lower\": 0, \"sim_design\": \"random\", \"sim_mean\": 0.5, "
                        "\"sim_stderr\": 0.25, \"sim_steps\": 10, \"sim_burn_in\": 3, "
                        "\"sim_seed\": 7}\n"),
          "theory lti with a simulation: %s", t);

    memset(&g_st, 0, sizeof g_st);
    g_st.kind = DPC_MECH_BLT, g_st.nbuf = 2, g_st.iterations = 7;
    snprintf(g_st.method, sizeof g_st.method, "blt");
    dpc_strategy_problem_init(&g_st.problem, 10);
    g_st.achieved = (dpc_strategy_loss){4, 2, 1, 1};
    memset(g_bl, 0, sizeof g_bl);
    snprintf(g_bl[0].name, sizeof g_bl[0].name, "b");
    g_bl[0].loss.loss = 8, g_bl[0].available = 1;
    snprintf(g_bl[1].name, sizeof g_bl[1].name, "c");
    CHECK(!strcmp(render(strat, 1),
                  "{\"kind\": \"blt\", \"description\": \"BLT, 2 buffers\", \"steps\": 10, "
                  "\"participations\": 1, \"min_sep\": 1, \"objective\": \"max\", "
                  "\"momentum\": 0, \"decay\": 1, \"loss\": 4, \"sensitivity\": 2, "
                  "\"error\": 1, \"exact\": true, \"buffers\": 2, \"iterations\": 7, "
                  "\"seconds\": 0.5, \"out\": \"o.json\", \"baselines\": [{\"name\": \"b\", "
                  "\"loss\": 8, \"ratio\": 2}, {\"name\": \"c\", \"loss\": null, "
                  "\"ratio\": null}]}\n"),
          "strategy report: %s", render(strat, 1));
    g_st.kind = DPC_MECH_TOEPLITZ, g_st.ncoeffs = 5;
    t = render(strat_noout, 1);
    CHECK(strstr(t, "\"description\": \"banded Toeplitz, 5 bands\"") &&
              strstr(t, "\"bands\": 5, \"iterations\": 7, \"seconds\": 0.5, \"baselines\": []}") &&
              !strstr(t, "\"out\"") && !strstr(t, "buffers"),
          "strategy report without a file: %s", t);
}

int main(void)
{
    char want[1024], third[64];
    snprintf(third, sizeof third, "%.17g", 1.0 / 3.0);

    CHECK(!strcmp(render(nested, 0),
                  "{\n  \"kind\": \"nu\",\n  \"config\": {\"lr\": 0.5, \"steps\": -3},\n"
                  "  \"log\": [\n    {\"ok\": true, \"x\": null}\n  ],\n  \"empty\": {}\n}\n"),
          "nested layout: %s", render(nested, 0));
    CHECK(!strcmp(render(nested, 1),
                  "{\"kind\": \"nu\", \"config\": {\"lr\": 0.5, \"steps\": -3}, \"log\": "
                  "[{\"ok\": true, \"x\": null}], \"empty\": {}}\n"),
          "one-line: %s", render(nested, 1));

    snprintf(want, sizeof want,
             "{\"v\": [null, \"inf\", \"-inf\", %.17g], \"h\": \"fedcba9876543210\", \"h0\": "
             "\"000000000000002a\", \"third\": %s, \"raw\": {\"a\": 1}}\n",
             0.1, third);
    CHECK(!strcmp(render(numbers, 1), want), "numbers: %s want %s", render(numbers, 1), want);

    const char *rep = "\\ufffd";
    snprintf(want, sizeof want,
             "{\"s\": \"a\\\"b\\\\c\\u000ad\\u007f\xc3\xa9\xf0\x9f\x98\x80%s%s%s%s%s%s%sx\", "
             "\"k\\u0001\": \"\"}\n", rep, rep, rep, rep, rep, rep, rep);
    CHECK(!strcmp(render(strings, 1), want), "strings: %s want %s", render(strings, 1), want);

    CHECK(!strcmp(render(field, 1), "{\"mode\": \"one\"}\n"), "enum field: %s", render(field, 1));
    CHECK(!strcmp(render(narrow_fields, 1), "{\"stream\": 4294967295, \"delim\": \";\", "
                                            "\"blank\": \"space\", \"col\": -2}\n"),
          "u32, char and long fields: %s", render(narrow_fields, 1));

    CHECK(!strcmp(render(tune_measured, 1),
                  "{\"isa_levels\": {\"forced_by_DPCORR_ISA\": false, \"gemm\": \"avx2\", "
                  "\"gauss\": \"avx512\", \"noise\": \"sse2\", \"measured_ns_per_unit\": "
                  "{\"gemm\": {\"sse2\": 0.5, \"avx2\": 0.25}, \"gauss\": {\"sse2\": 4, "
                  "\"avx512\": 2}, \"noise\": {\"sse2\": 1.5}}, \"measurement_s\": 0.125}}\n"),
          "isa_levels measured: %s", render(tune_measured, 1));
    CHECK(!strcmp(render(tune_forced, 1),
                  "{\"isa_levels\": {\"forced_by_DPCORR_ISA\": true, \"gemm\": \"avx2\", "
                  "\"gauss\": \"avx512\", \"noise\": \"sse2\"}}\n"),
          "isa_levels forced: %s", render(tune_forced, 1));

    CHECK(!strcmp(render(records, 1),
                  "{\"epochs\": [{\"epoch\": 1, \"step\": 5, \"train_loss\": 0.5, "
                  "\"test_loss\": 0.25, \"test_accuracy\": 0.75, \"epsilon_so_far\": 1.5, "
                  "\"time_s\": 2}, {\"epoch\": 2, \"step\": 7, \"train_loss\": 0.125, "
                  "\"test_loss\": null, \"test_accuracy\": null, \"epsilon_so_far\": 2, "
                  "\"time_s\": 3}], \"time_split_s\": {\"setup\": 0.75, \"sample\": 1, "
                  "\"gradient\": 2, \"noise\": 3, \"update\": 0.5, \"step_other\": 0.25, "
                  "\"evaluate\": 4, \"account\": 0.125, \"loop\": 3.25}}\n"),
          "epochs and time split: %s", render(records, 1));
    g_fc = (dpc_features_config){.kind = DPC_FEATURES_SCATTER, .groups = 27, .center = 20};
    const char *nm = render(normalization, 1);
    CHECK(!strncmp(nm, "{\"normalization\": {\"kind\": \"private\", \"method\": \"per-example "
                       "GroupNorm (data-independent), then ", 89) &&
              strstr(nm, "\"groups\": 27, \"noise_multiplier\": 20, \"epsilon_alone\": 0.5, "
                         "\"accounting\": \"composed with the training run"),
          "private centering: %s", nm);
    g_fc.center = 0;
    CHECK(!strcmp(render(normalization, 1),
                  "{\"normalization\": {\"kind\": \"data-independent\", \"method\": "
                  "\"per-example GroupNorm (data-independent)\", \"groups\": 27}}\n"),
          "GroupNorm only: %s", render(normalization, 1));
    g_fc.groups = 0;
    CHECK(!strcmp(render(normalization, 1), "{\"normalization\": {\"kind\": \"none\"}}\n"),
          "none: %s", render(normalization, 1));

    g_rng.mode = DPC_RNG_SEEDED;
    g_rng.seed = 18446744073709551615ull;
    CHECK(!strcmp(render(randomness, 1),
                  "{\"rng_mode\": \"seeded\", \"seed\": 18446744073709551615}\n"),
          "seeded: %s", render(randomness, 1));
    g_rng.mode = DPC_RNG_SECURE;
    CHECK(!strcmp(render(randomness, 1), "{\"rng_mode\": \"secure\", \"seed\": null}\n"),
          "secure: %s", render(randomness, 1));

    dpc_error err = {0};
    CHECK(!dpc_dataset_new(&g_train, 10, 3, 2, &err) && !dpc_dataset_new(&g_test, 4, 3, 2, &err),
          "datasets: %s", err.msg);
    if (g_train && g_test) {
        g_rss = 4096;
        CHECK(!strcmp(render(memory, 1),
                      "{\"memory\": {\"data_bytes\": 448, \"train_rows_held\": 10, "
                      "\"peak_rss_bytes\": 4096, \"parameter_bytes\": 56, \"trainer_bytes\": "
                      "1234}}\n"),
              "memory: %s", render(memory, 1));
        g_rss = -1; /* not measured: left out */
        dpc_dataset_free(g_test);
        g_test = NULL; /* no test set: train only, 10 x 4 x 8 = 320 */
        CHECK(!strcmp(render(memory, 1),
                      "{\"memory\": {\"data_bytes\": 320, \"train_rows_held\": 10, "
                      "\"parameter_bytes\": 56, \"trainer_bytes\": 1234}}\n"),
              "memory without rss/test: %s", render(memory, 1));
    }
    dpc_dataset_free(g_train);
    dpc_dataset_free(g_test);
    test_reports();
    return TEST_SUMMARY();
}
