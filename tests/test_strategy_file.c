/* test_strategy_file.c — strategy files: exact round trips (BLT, Toeplitz, dense; awkward
 * doubles), the loaded strategy builds the same mechanism, and malformed files fail with
 * DPC_E_FORMAT / DPC_E_IO and a message naming file:line and the field. */
#include "dpcorr.h"
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char dir[64];

static const char *path_of(const char *name)
{
    static char buf[4][160];
    static int i;
    i = (i + 1) & 3;
    snprintf(buf[i], sizeof buf[i], "%s/%s", dir, name);
    return buf[i];
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

static void check_same(const dpc_strategy *a, const dpc_strategy *b)
{
    CHECK(a->kind == b->kind, "kind");
    CHECK(!strcmp(a->method, b->method), "method %s vs %s", a->method, b->method);
    CHECK(a->problem.steps == b->problem.steps && a->problem.participations == b->problem.participations &&
              a->problem.min_sep == b->problem.min_sep && a->problem.objective == b->problem.objective,
          "problem");
    CHECK(same_bits(a->problem.workload.momentum, b->problem.workload.momentum) &&
              same_bits(a->problem.workload.decay, b->problem.workload.decay),
          "workload");
    CHECK(same_bits(a->achieved.loss, b->achieved.loss) &&
              same_bits(a->achieved.sensitivity, b->achieved.sensitivity) &&
              same_bits(a->achieved.error, b->achieved.error) && a->achieved.exact == b->achieved.exact,
          "achieved loss bits");
    CHECK(a->nbuf == b->nbuf && a->ncoeffs == b->ncoeffs && a->of_strategy == b->of_strategy,
          "sizes");
    int ok = 1;
    for (size_t i = 0; i < a->nbuf && i < b->nbuf; i++)
        ok &= same_bits(a->theta[i], b->theta[i]) && same_bits(a->omega[i], b->omega[i]);
    for (size_t i = 0; i < a->ncoeffs && i < b->ncoeffs; i++) ok &= same_bits(a->coeffs[i], b->coeffs[i]);
    if (a->dense && b->dense)
        for (size_t i = 0; i < a->problem.steps * a->problem.steps; i++)
            ok &= same_bits(a->dense[i], b->dense[i]);
    CHECK(ok, "values round-trip bit for bit");
}

static void test_round_trips(void)
{
    dpc_error err = {0};
    dpc_strategy_problem pb;
    dpc_strategy_problem_init(&pb, 5000);
    pb.participations = 3;
    pb.min_sep = 1000;
    pb.objective = DPC_OBJECTIVE_MEAN;
    pb.workload.momentum = 0.9;
    pb.workload.decay = 0.99999999999999989;
    dpc_strategy *s = NULL, *r = NULL;
    CHECK_OK(dpc_strategy_optimize_blt(&s, &pb, NULL, &err), &err);
    if (!s) return;
    CHECK_OK(dpc_strategy_save(s, path_of("blt.json"), &err), &err);
    CHECK_OK(dpc_strategy_load(&r, path_of("blt.json"), &err), &err);
    if (r) check_same(s, r);
    /* the loaded strategy gives the same mechanism loss */
    if (r) {
        dpc_mech_params p;
        dpc_strategy_mech_params(r, &p);
        dpc_mech *m = NULL;
        dpc_strategy_loss l;
        CHECK_OK(dpc_mech_new(&m, &p, &err), &err);
        if (m) CHECK_OK(dpc_strategy_loss_of(m, &r->problem, &l, &err), &err);
        if (m) CHECK_NEAR_REL(l.loss, r->achieved.loss, 1e-9, "loaded BLT loss");
        dpc_mech_free(m);
    }
    dpc_strategy_free(s);
    dpc_strategy_free(r);

    /* hand-made Toeplitz (noising) with awkward doubles, and a dense strategy */
    dpc_strategy_problem_init(&pb, 4);
    dpc_strategy t = {0};
    double co[5] = {1.0, -0.1, 5e-324, 1.7976931348623157e308 / 1e300, -0x1.fffffffffffffp-3};
    t.kind = DPC_MECH_TOEPLITZ;
    snprintf(t.method, sizeof t.method, "hand");
    t.problem = pb;
    t.ncoeffs = 5;
    t.coeffs = co;
    t.of_strategy = 0;
    t.achieved = (dpc_strategy_loss){0.1 + 0.2, 1.0 / 3.0, 2.0 / 3.0, 0};
    CHECK_OK(dpc_strategy_save(&t, path_of("toe.json"), &err), &err);
    CHECK_OK(dpc_strategy_load(&r, path_of("toe.json"), &err), &err);
    if (r) check_same(&t, r);
    dpc_strategy_free(r);
    r = NULL;

    dpc_strategy_problem_init(&pb, 40);
    pb.objective = DPC_OBJECTIVE_MEAN;
    CHECK_OK(dpc_strategy_optimize_dense(&s, &pb, NULL, &err), &err);
    if (!s) return;
    CHECK_OK(dpc_strategy_save(s, path_of("dense.json"), &err), &err);
    CHECK_OK(dpc_strategy_load(&r, path_of("dense.json"), &err), &err);
    if (r) check_same(s, r);
    dpc_strategy_free(s);
    dpc_strategy_free(r);
}

static void expect_fail(const char *name, const char *text, dpc_status want, const char *needle1,
                        const char *needle2)
{
    const char *p = path_of(name);
    write_file(p, text);
    dpc_strategy *s = NULL;
    dpc_error err = {0};
    dpc_status st = dpc_strategy_load(&s, p, &err);
    CHECK(st == want && s == NULL, "%s: status %d, want %d (%s)", name, (int)st, (int)want, err.msg);
    CHECK(strstr(err.msg, needle1) != NULL, "%s: message lacks '%s': %s", name, needle1, err.msg);
    if (needle2) CHECK(strstr(err.msg, needle2) != NULL, "%s: message lacks '%s': %s", name, needle2, err.msg);
    dpc_strategy_free(s);
}

#define HEAD "{\"format\": \"dpcorr-strategy\", \"version\": 1,\n"

static void test_malformed(void)
{
    char pfx[96];
    snprintf(pfx, sizeof pfx, "%s/", dir);
    expect_fail("e1.json", HEAD "\"kind\": \"blt\", \"steps\": 10,\n\"theta\": [0.5], \"omega\": [0.1],\n\"bogus\": 1}",
                DPC_E_FORMAT, "e1.json:4", "bogus");
    expect_fail("e2.json", HEAD "\"kind\": \"blt\", \"steps\": 10,\n\"theta\": [0.5, 0.7],\n\"omega\": [0.1]}",
                DPC_E_FORMAT, "e2.json:4", "field 'omega': expected 2 numbers (as many as theta), got 1");
    expect_fail("e3.json", HEAD "\"kind\": \"blt\", \"steps\": 10,\n\"theta\": [1.5], \"omega\": [0.1]}",
                DPC_E_FORMAT, "e3.json:3", "field 'theta': entry 0");
    expect_fail("e4.json", HEAD "\"kind\": \"blt\", \"steps\": 10.5,\n\"theta\": [0.5], \"omega\": [0.1]}",
                DPC_E_FORMAT, "e4.json:2", "field 'steps': expected an integer in [1, 2^40], got 10.5");
    expect_fail("e5.json", HEAD "\"kind\": \"blt\", \"steps\": 10,\n\"theta\": [0.5,], \"omega\": [0.1]}",
                DPC_E_FORMAT, "e5.json:3", "trailing comma (expected another item after ',')");
    expect_fail("e6.json", HEAD "\"kind\": \"blt\", \"kind\": \"blt\"}", DPC_E_FORMAT, "e6.json:2",
                "duplicate key");
    expect_fail("e7.json", HEAD "\"kind\": \"toeplitz\", \"steps\": 5,\n\"coeffs\": [1, NaN]}",
                DPC_E_FORMAT, "e7.json:3", "unexpected character 'N' (expected a value: a number");
    expect_fail("e8.json", HEAD "\"kind\": \"toeplitz\", \"steps\": 5,\n\"coeffs\": [01]}",
                DPC_E_FORMAT, "e8.json:3", "leading zero");
    expect_fail("e9.json", "{\"format\": \"dpcorr-strategy\", \"version\": 2}", DPC_E_FORMAT,
                "e9.json:1", "field 'version': expected 1 (the version this reader knows), got 2");
    expect_fail("e10.json", HEAD "\"kind\": \"dense\", \"steps\": 2,\n\"matrix\": [[1],\n [0.5, 1, 3]]}",
                DPC_E_FORMAT, "e10.json:4", "field 'matrix': row 1: expected 2 numbers, got an array of 3");
    expect_fail("e11.json", HEAD "\"kind\": \"dense\", \"steps\": 2,\n\"matrix\": [[1, 2],\n [0.5, 1]]}",
                DPC_E_FORMAT, "e11.json:3", "row 0, column 1: expected 0 above the diagonal (C is lower triangular), got 2");
    expect_fail("e12.json", HEAD "\"kind\": \"toeplitz\", \"steps\": 5,\n\"coeffs\": [1], \"theta\": [0.5]}",
                DPC_E_FORMAT, "e12.json:3", "field 'theta': not allowed for kind toeplitz (it takes coeffs and of)");
    expect_fail("e13.json", HEAD "\"kind\": \"toeplitz\", \"steps\": 5, \"coeffs\": [1]} extra",
                DPC_E_FORMAT, "e13.json:2", "trailing data");
    expect_fail("e14.json", HEAD "\"kind\": \"toeplitz\", \"steps\": 5,\n\"coeffs\": [1, 0.5",
                DPC_E_FORMAT, "e14.json:3", "end of file");
    expect_fail("e15.json", HEAD "\"kind\": \"toeplitz\", \"steps\": 5,\n\"coeffs\": [0, 1]}",
                DPC_E_FORMAT, "e15.json:3", "field 'coeffs': entry 0");
    expect_fail("e16.json", HEAD "\"kind\": \"blt\", \"steps\": 10, \"workload\": {\"momentum\": 1.5},\n"
                "\"theta\": [0.5], \"omega\": [0.1]}",
                DPC_E_FORMAT, "e16.json:2", "field 'workload.momentum': must be in [0, 1), got 1.5");
    expect_fail("e17.json", HEAD "\"kind\": \"spiral\", \"steps\": 10}", DPC_E_FORMAT, "e17.json:2",
                "field 'kind': expected \"blt\", \"toeplitz\" or \"dense\", got the string \"spiral\"");
    expect_fail("e18.json", HEAD "\"kind\": \"blt\",\n\"theta\": [0.5], \"omega\": [0.1]}",
                DPC_E_FORMAT, "e18.json:1", "field 'steps': missing (expected an integer >= 1");
    expect_fail("e19.json", "", DPC_E_FORMAT, "e19.json:1", "end of file");
    expect_fail("e20.json", HEAD "\"kind\": \"blt\", \"steps\": 10, \"objective\": \"median\",\n"
                "\"theta\": [0.5], \"omega\": [0.1]}", DPC_E_FORMAT, "e20.json:2",
                "field 'objective': expected \"max\" or \"mean\", got the string \"median\"");
    /* issue 37: every reader refusal names the file, the line, the field, what it expected and
     * what it found */
    expect_fail("e21.json", HEAD "\"kind\": \"blt\", \"steps\": \"ten\", \"theta\": [0.5], \"omega\": [0.1]}",
                DPC_E_FORMAT, "e21.json:2", "field 'steps': expected an integer in [1, 2^40], got the string \"ten\"");
    expect_fail("e22.json", HEAD "\"kind\": 3, \"steps\": 10}", DPC_E_FORMAT, "e22.json:2",
                "field 'kind': expected \"blt\", \"toeplitz\" or \"dense\", got 3");
    expect_fail("e23.json", HEAD "\"kind\": \"blt\", \"steps\": 10, \"theta\": [0.5, \"x\"], \"omega\": [0.1, 0.2]}",
                DPC_E_FORMAT, "e23.json:2", "field 'theta': element 1: expected a number, got the string \"x\"");
    expect_fail("e24.json", "[1, 2]", DPC_E_FORMAT, "e24.json:1",
                "field '(top level)': expected an object, got an array of 2");
    expect_fail("e25.json", HEAD "\"kind\": \"blt\", \"steps\": 10, \"exact\": 1, \"theta\": [0.5], \"omega\": [0.1]}",
                DPC_E_FORMAT, "e25.json:2", "field 'exact': expected true or false, got 1");
    expect_fail("e26.json", HEAD "\"kind\": \"blt\", \"steps\": 10,\n\"omega\": [0.1]}", DPC_E_FORMAT,
                "e26.json:1", "field 'theta': missing (kind blt needs theta and omega arrays)");
    expect_fail("e27.json", HEAD "\"kind\": \"blt\", \"steps\": 10, \"bogus\": 1}", DPC_E_FORMAT,
                "e27.json:2", "field 'bogus': unknown field (expected format, version, kind");
    expect_fail("e28.json", HEAD "\"kind\": \"dense\", \"steps\": 3,\n\"matrix\": [[1], [0, 1]]}",
                DPC_E_FORMAT, "e28.json:3", "field 'matrix': expected an array of 3 rows (n = steps), got an array of 2");
    dpc_strategy *s = NULL;
    dpc_error err = {0};
    CHECK(dpc_strategy_load(&s, path_of("missing.json"), &err) == DPC_E_IO, "missing file");
    CHECK(strstr(err.msg, "missing.json") != NULL, "names the file: %s", err.msg);
    /* minimal valid file: defaults for the optional fields */
    write_file(path_of("ok.json"), HEAD "\"kind\": \"blt\", \"steps\": 10, \"theta\": [0.5], "
                                        "\"omega\": [0.1]}");
    CHECK_OK(dpc_strategy_load(&s, path_of("ok.json"), &err), &err);
    if (s) CHECK(s->problem.participations == 1 && s->problem.objective == DPC_OBJECTIVE_MAX &&
                     s->problem.workload.decay == 1.0 && isnan(s->achieved.loss),
                 "defaults");
    dpc_strategy_free(s);
    /* save refuses non-finite values and unwritable paths */
    dpc_strategy t = {0};
    double th[1] = {0.5}, om[1] = {NAN};
    t.kind = DPC_MECH_BLT;
    dpc_strategy_problem_init(&t.problem, 10);
    t.nbuf = 1;
    t.theta = th;
    t.omega = om;
    CHECK(dpc_strategy_save(&t, path_of("nan.json"), &err) == DPC_E_NUMERIC, "NaN refused");
    om[0] = 0.1;
    CHECK(dpc_strategy_save(&t, "/nonexistent-dir/x.json", &err) == DPC_E_IO, "unwritable");
    CHECK(strstr(err.msg, "/nonexistent-dir/x.json") != NULL, "names the path: %s", err.msg);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/dpc_strat_XXXXXX");
    if (!mkdtemp(dir)) {
        printf("cannot create a temporary directory\n0 passed, 1 failed\n");
        return 1;
    }
    test_round_trips();
    test_malformed();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "warning: could not remove %s\n", dir);
    return TEST_SUMMARY();
}
