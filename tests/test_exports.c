/* test_exports.c — the public functions that no front end, bench or other test called (issue 26,
 * "loose ends"): every name table against its parser, the checks against the fields they must
 * refuse (and the message naming each), Carlson's R_D against published values and an identity,
 * the default spectrum against an independent power, and the size accessors of an FFT plan, a
 * checkpoint written and read back, an audit scorer and a simulation noise source against the
 * sizes they were built with or the memory budget they must respect. (The KAN run accessors,
 * dpc_kan_lcgd_initial / _projections and dpc_kan_task_num_params, are tested in
 * test_kan_lcgd.c next to the run they describe.) */
#include "dpcorr/account.h"
#include "dpcorr/audit.h"
#include "dpcorr/data.h"
#include "dpcorr/fft.h"
#include "dpcorr/mech.h"
#include "dpcorr/papers/linreg.h"
#include "dpcorr/papers/sim.h"
#include "dpcorr/papers/theory.h"
#include "dpcorr/special.h"
#include "dpcorr/train.h"
#include "harness.h"

#include <unistd.h>

static void test_names_and_parsers(void)
{
    dpc_error err = {0};
    static const char *const cal[] = {"accountant", "paper"};
    for (int i = 0; i < 2; i++) {
        dpc_calibration c = (dpc_calibration)-1;
        CHECK(!strcmp(dpc_calibration_name((dpc_calibration)i), cal[i]), "calibration name %d", i);
        CHECK_OK(dpc_calibration_parse(cal[i], &c, &err), &err);
        CHECK((int)c == i, "calibration %s parses to %d", cal[i], (int)c);
    }
    dpc_calibration c;
    CHECK(dpc_calibration_parse("papers", &c, &err) == DPC_E_INVALID && strstr(err.msg, "papers"),
          "unknown calibration refused, named: %s", err.msg);
    CHECK(dpc_calibration_parse(NULL, &c, &err) == DPC_E_INVALID, "NULL calibration refused");

    static const char *const sch[] = {"constant", "cosine", "cooldown"};
    for (int i = 0; i < 3; i++) {
        dpc_lr_schedule s = (dpc_lr_schedule)-1;
        CHECK(!strcmp(dpc_lr_schedule_name((dpc_lr_schedule)i), sch[i]), "schedule name %d", i);
        CHECK_OK(dpc_lr_schedule_parse(sch[i], &s, &err), &err);
        CHECK((int)s == i, "schedule %s parses to %d", sch[i], (int)s);
    }
    dpc_lr_schedule s;
    CHECK(dpc_lr_schedule_parse("Cosine", &s, &err) == DPC_E_INVALID && strstr(err.msg, "Cosine"),
          "schedule names are exact: %s", err.msg);

    static const char *const smp[] = {"none", "poisson", "fixed"};
    for (int i = 0; i < 3; i++) {
        dpc_sampling p = (dpc_sampling)-1;
        CHECK(!strcmp(dpc_sampling_name((dpc_sampling)i), smp[i]), "sampling name %d: %s", i,
              dpc_sampling_name((dpc_sampling)i));
        CHECK_OK(dpc_sampling_parse(dpc_sampling_name((dpc_sampling)i), &p, &err), &err);
        CHECK((int)p == i, "sampling name round trip %d", i);
    }

    CHECK(!strcmp(dpc_sim_model_name(DPC_SIM_FIXED), "fixed") &&
              !strcmp(dpc_sim_model_name(DPC_SIM_RANDOM), "random") &&
              !strcmp(dpc_sim_model_name(DPC_SIM_LOGCOSH), "logcosh") &&
              !strcmp(dpc_sim_model_name((dpc_sim_model)7), "?"),
          "simulation model names");
    CHECK(!strcmp(dpc_sim_noise_method_name(DPC_SIM_NOISE_FFT), "fft") &&
              !strcmp(dpc_sim_noise_method_name(DPC_SIM_NOISE_DIRECT), "direct") &&
              !strcmp(dpc_sim_noise_method_name(DPC_SIM_NOISE_MECH), "mech") &&
              !strcmp(dpc_sim_noise_method_name((dpc_sim_noise_method)7), "?"),
          "simulation noise method names");
    CHECK(!strcmp(dpc_theory_beta_kind_name(DPC_THEORY_BETA_SGD), "sgd") &&
              !strcmp(dpc_theory_beta_kind_name(DPC_THEORY_BETA_NU), "nu") &&
              !strcmp(dpc_theory_beta_kind_name(DPC_THEORY_BETA_ANTIPGD), "antipgd") &&
              !strcmp(dpc_theory_beta_kind_name(DPC_THEORY_BETA_ARRAY), "array"),
          "beta kind names (theory.h)");
}

/* Each check accepts a valid configuration and refuses each bad field with a message naming it. */
static void test_checks(void)
{
    dpc_error err = {0};
    double lambda[3] = {1.0, 0.5, 0.25}, beta[2] = {1.0, -0.5};
    dpc_theory_problem p = {0.5, 1.0, 1.0, 0.1, 3, lambda};
    CHECK_OK(dpc_theory_problem_check(&p, &err), &err);
    struct {
        dpc_theory_problem p;
        const char *name;
    } bad[] = {
        {{0, 1, 1, 0, 3, lambda}, "eta"},       {{0.5, 0, 1, 0, 3, lambda}, "rho"},
        {{0.5, 1, NAN, 0, 3, lambda}, "G"},     {{0.5, 1, 1, -1, 3, lambda}, "sigma_sgd"},
        {{0.5, 1, 1, 0, 0, lambda}, "d"},       {{2.5, 1, 1, 0, 3, lambda}, "lambda[0]"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(dpc_theory_problem_check(&bad[i].p, &err) == DPC_E_INVALID &&
                  strstr(err.msg, bad[i].name),
              "theory problem: bad %s refused: %s", bad[i].name, err.msg);
    CHECK(dpc_theory_problem_check(NULL, &err) == DPC_E_INVALID, "NULL problem refused");

    dpc_sim_config c;
    dpc_sim_config_init(&c);
    c.eta = 0.5, c.d = 3, c.lambda = lambda, c.steps = 64, c.beta = beta, c.len = 2;
    CHECK_OK(dpc_sim_config_check(&c, &err), &err);
    dpc_sim_config b = c;
    b.eta = 4.5; /* eta lambda_0 >= 2 */
    CHECK(dpc_sim_config_check(&b, &err) == DPC_E_INVALID && strstr(err.msg, "lambda[0]"), "%s",
          err.msg);
    b = c, b.steps = 16, b.batches = 32;
    CHECK(dpc_sim_config_check(&b, &err) == DPC_E_INVALID && strstr(err.msg, "steps"), "%s",
          err.msg);
    b = c, b.batches = 1;
    CHECK(dpc_sim_config_check(&b, &err) == DPC_E_INVALID && strstr(err.msg, "batches"), "%s",
          err.msg);
    b = c, b.len = 0;
    CHECK(dpc_sim_config_check(&b, &err) == DPC_E_INVALID && strstr(err.msg, "beta"), "%s",
          err.msg);
    b = c, b.model = DPC_SIM_LOGCOSH, b.mu = 2, b.L = 1;
    CHECK(dpc_sim_config_check(&b, &err) == DPC_E_INVALID && strstr(err.msg, "mu"), "%s", err.msg);
    b = c, b.method = DPC_SIM_NOISE_MECH;
    CHECK(dpc_sim_config_check(&b, &err) == DPC_E_INVALID && strstr(err.msg, "mech"), "%s",
          err.msg);
    b = c, b.sigma = -1;
    CHECK(dpc_sim_config_check(&b, &err) == DPC_E_INVALID && strstr(err.msg, "sigma"), "%s",
          err.msg);
}

static void test_numbers(void)
{
    /* Carlson (1995, Numer. Algorithms 10, §3 test values) and R_D(x, x, x) = x^(-3/2) */
    CHECK_NEAR_REL(dpc_special_carlson_rd(0, 2, 1), 1.7972103521033883, 1e-13, "R_D(0, 2, 1)");
    CHECK_NEAR_REL(dpc_special_carlson_rd(2, 3, 4), 0.16510527294261053, 1e-13, "R_D(2, 3, 4)");
    for (double x = 0.25; x < 20; x *= 3)
        CHECK_NEAR_REL(dpc_special_carlson_rd(x, x, x), pow(x, -1.5), 1e-13, "R_D(%g, %g, %g)", x,
                       x, x);
    /* Legendre's E(k) = R_F(0, 1 - k^2, 1) - k^2 / 3 R_D(0, 1 - k^2, 1) against the library's E */
    for (double k = 0.1; k < 1; k += 0.2) {
        double y = 1 - k * k;
        double e = dpc_special_carlson_rf(0, y, 1) - k * k / 3 * dpc_special_carlson_rd(0, y, 1);
        CHECK_NEAR_REL(e, dpc_special_ellip_e(k), 1e-13, "E(%g) from R_F and R_D", k);
    }

    double lam[50];
    dpc_data_spectrum_power(lam, 50, 1.5);
    double worst = 0;
    for (size_t k = 0; k < 50; k++) {
        double want = exp(-1.5 * log((double)(k + 1)));
        worst = fmax(worst, fabs(lam[k] - want) / want);
    }
    CHECK(lam[0] == 1 && worst < 1e-14, "lambda_k = k^-1.5 (relative error %g)", worst);

    dpc_linreg_prior pr;
    memset(&pr, 0x55, sizeof pr);
    dpc_linreg_prior_init(&pr);
    CHECK_NEAR_REL(pr.k2 * pr.k2, 8.0 / 3.0, 1e-15, "prior k2^2 = 8/3");
    CHECK(pr.a == 0.5 && pr.w_bound == 1 && pr.sigma_bound == 1 && pr.h_norm == 0 &&
              pr.kappa == 0 && pr.r_x == 0,
          "prior defaults: a 1/2, bounds 1, spectrum fields 0 (to be set)");
}

static void test_sizes(void)
{
    dpc_error err = {0};
    for (size_t n = 1; n <= 1024; n *= 4) {
        dpc_fft *f = NULL;
        CHECK_OK(dpc_fft_new(&f, n, &err), &err);
        CHECK(dpc_fft_size(f) == n, "fft size %zu", n);
        dpc_fft_free(f);
    }

    /* a checkpoint's parameter count survives a write and a read */
    dpc_rng rng;
    dpc_rng_seed(&rng, 3);
    dpc_ckpt *ck = NULL, *back = NULL;
    CHECK_OK(dpc_ckpt_new(&ck, "exports-test", &rng, &err), &err);
    char path[] = "/tmp/dpcorr_test_exports_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "temporary file");
    if (ck && fd >= 0) {
        close(fd);
        double v[3] = {1, 2, 3};
        dpc_ckpt_set_progress(ck, 7, 3);
        CHECK_OK(dpc_ckpt_put(ck, "params", v, 3, &err), &err);
        CHECK(dpc_ckpt_num_params(ck) == 3 && dpc_ckpt_step(ck) == 7, "built: P 3, step 7");
        CHECK_OK(dpc_ckpt_write(ck, path, &err), &err);
        CHECK_OK(dpc_ckpt_read(&back, path, "exports-test", &err), &err);
        CHECK(back && dpc_ckpt_num_params(back) == 3 && dpc_ckpt_step(back) == 7,
              "read back: P 3, step 7");
        unlink(path);
    }
    dpc_ckpt_free(back);
    dpc_ckpt_free(ck);

    /* an audit scorer covers the mechanism's n steps */
    dpc_mech_params mp;
    dpc_mech_params_init(&mp);
    mp.kind = DPC_MECH_NU;
    mp.nu = 0.1;
    mp.steps = 37;
    dpc_mech *m = NULL;
    CHECK_OK(dpc_mech_new(&m, &mp, &err), &err);
    dpc_audit_scorer *sc = NULL;
    CHECK_OK(dpc_audit_scorer_new(&sc, m, 1.0, 1.0, &err), &err);
    CHECK(sc && dpc_audit_scorer_steps(sc) == 37, "scorer steps = n = 37");
    dpc_audit_scorer_free(sc);

    /* the noise source's reported buffers decide the budget: a budget of exactly that many bytes
     * is accepted, one byte less is refused naming memory_budget */
    double beta[64];
    CHECK_OK(dpc_mech_noising_coeffs(m, beta, 37, &err), &err);
    dpc_rng_stream s = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_NOISE, 0));
    dpc_sim_noise_config nc = {DPC_SIM_NOISE_DIRECT, beta, 37, NULL, &s, 0, 5, 16, 0};
    dpc_sim_noise *ns = NULL;
    CHECK_OK(dpc_sim_noise_new(&ns, &nc, &err), &err);
    size_t bytes = ns ? dpc_sim_noise_bytes(ns) : 0;
    CHECK(bytes >= 5 * 16 * sizeof(double), "buffers hold at least one block (%zu bytes)", bytes);
    dpc_sim_noise_free(ns);
    ns = NULL;
    nc.memory_budget = bytes;
    CHECK_OK(dpc_sim_noise_new(&ns, &nc, &err), &err);
    CHECK(ns && dpc_sim_noise_bytes(ns) == bytes, "same source, same bytes");
    dpc_sim_noise_free(ns);
    ns = NULL;
    nc.memory_budget = bytes - 1;
    CHECK(dpc_sim_noise_new(&ns, &nc, &err) == DPC_E_RANGE && strstr(err.msg, "memory_budget"),
          "budget below the buffers refused: %s", err.msg);
    dpc_sim_noise_free(ns);
    dpc_mech_free(m);
}

int main(void)
{
    test_names_and_parsers();
    test_checks();
    test_numbers();
    test_sizes();
    return TEST_SUMMARY();
}
