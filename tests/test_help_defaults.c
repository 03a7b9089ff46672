/* test_help_defaults.c — every default that a command's --help prints for a library field is the
 * value of the library's _init (the library decides; the help text of each option table,
 * tools/opt.h, is a copy that only this test compares), where the option does not read it from
 * the library's field table yet: `train` and `audit` against dpc_train_config_init (all read
 * from dpc_train_config_fields now: the marking of the default word is checked), `train --algo
 * dp-ambssgd|dp-ssgd` against dpc_linreg_opts_init (its --stream; the other paper options read
 * the library's field tables: nothing to compare), `advise` against dpc_advise_query_init. Runs
 * $BUILD/dpcorr (default build/dpcorr) from the repository root. */
#include "dpcorr.h"
#include "dpcorr/papers/linreg.h"
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>

static char g_help[65536];

/* The --help of the command (argv words after the binary), into g_help; 0 on failure. */
static int help_of(const char *words)
{
    const char *b = getenv("BUILD");
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s/dpcorr %s --help 2>/dev/null", b && *b ? b : "build", words);
    FILE *p = popen(cmd, "r");
    if (!p) return 0;
    size_t n = fread(g_help, 1, sizeof g_help - 1, p);
    g_help[n] = 0;
    return pclose(p) == 0 && n > 0;
}

/* The help text of option `name` (its line and continuation lines joined) into buf; 0 if the
 * command has no such option. */
static int opt_text(const char *name, char *buf, size_t cap)
{
    size_t nl = strlen(name);
    const char *p = g_help;
    buf[0] = 0;
    while ((p = strstr(p, "\n  --"))) {
        p += 3;
        if (strncmp(p, name, nl) || (p[nl] != ' ' && p[nl] != '\n')) continue;
        const char *e = p;
        size_t n = 0;
        for (;;) {
            const char *le = strchr(e, '\n');
            size_t len = le ? (size_t)(le - e) : strlen(e);
            if (n + len + 2 < cap) memcpy(buf + n, e, len), n += len, buf[n++] = ' ';
            if (!le || strncmp(le + 1, "          ", 10)) break;
            e = le + 1;
        }
        buf[n] = 0;
        return 1;
    }
    return 0;
}

/* The number after "(default " in the option's help; NAN when none. */
static double help_default(const char *cmd, const char *name)
{
    char t[1024];
    if (!opt_text(name, t, sizeof t)) {
        CHECK(0, "%s: no option %s in --help", cmd, name);
        return NAN;
    }
    const char *d = strstr(t, "(default ");
    if (!d) {
        CHECK(0, "%s %s: no default printed: %s", cmd, name, t);
        return NAN;
    }
    char *end;
    double v = strtod(d + 9, &end);
    CHECK(end != d + 9 && *end && strchr(";), :", *end), "%s %s: a number as the default: %s", cmd, name, t);
    return v;
}

static void same(const char *cmd, const char *name, double lib)
{
    double h = help_default(cmd, name);
    CHECK(h == lib, "%s %s: --help says %.17g, the library's _init %.17g", cmd, name, h, lib);
}

/* "WORD (default)" in the option's help names the library's default word. */
static void same_word(const char *cmd, const char *name, const char *lib)
{
    char t[1024], want[64];
    CHECK(opt_text(name, t, sizeof t), "%s: no option %s", cmd, name);
    snprintf(want, sizeof want, "%s (default", lib);
    CHECK(strstr(t, want) != NULL, "%s %s: the default word is not the library's %s: %s", cmd,
          name, lib, t);
}

/* Every trainer's default delta is the one rule, derived from N (dpc_account_resolve_delta):
 * 0 in its _init, and --help says so. */
static void derived_delta(const char *cmd, double init_delta)
{
    char t[1024];
    CHECK(init_delta == 0 && opt_text("--delta", t, sizeof t) && strstr(t, "largest power of ten"),
          "%s --delta: derived from N (dpc_account_default_delta), as --help says", cmd);
}

static void test_train(const char *cmd)
{
    if (!help_of(cmd)) {
        CHECK(0, "dpcorr %s --help failed (BUILD=%s)", cmd, getenv("BUILD") ? getenv("BUILD") : "");
        return;
    }
    dpc_train_config c;
    dpc_train_config_init(&c);
    /* every default of these options is printed from dpc_train_config_fields (numbers, the
     * enum words marked "(default)", delta's rule: its def_text); no copy is left in the
     * option specs (tests/check_layout.sh refuses one): these checks now prove the marking */
    same_word(cmd, "--accountant", dpc_accountant_name(c.accountant));
    same_word(cmd, "--schedule", dpc_lr_schedule_name(c.schedule));
    same_word(cmd, "--precision", dpc_precision_name(c.precision));
    derived_delta(cmd, c.delta);
}

static void test_linreg(const char *algo, dpc_linreg_algo a)
{
    char cmd[64];
    snprintf(cmd, sizeof cmd, "train --algo %s", algo);
    if (!help_of(cmd)) {
        CHECK(0, "dpcorr %s --help failed", cmd);
        return;
    }
    dpc_linreg_opts o;
    dpc_linreg_opts_init(&o, a);
    derived_delta(cmd, o.delta);
    /* the other options read the field table; the stream is a uint32_t, of no table type */
    same(cmd, "--stream", (double)o.stream);
    same_word(cmd, "--calibration", dpc_calibration_name(o.calibration));
}

static void test_advise(void)
{
    const char *cmd = "advise";
    if (!help_of(cmd)) {
        CHECK(0, "dpcorr %s --help failed", cmd);
        return;
    }
    dpc_advise_query q;
    dpc_advise_query_init(&q);
    same(cmd, "--batch", (double)q.batch);
    same(cmd, "--epochs", (double)q.epochs);
    same(cmd, "--momentum", q.momentum);
    same_word(cmd, "--accountant", dpc_accountant_name(q.accountant));
    derived_delta(cmd, q.delta);
}

int main(void)
{
    test_advise();
    test_train("train");
    test_train("audit");
    test_linreg("dp-ambssgd", DPC_LINREG_AMBSSGD);
    test_linreg("dp-ssgd", DPC_LINREG_SSGD);
    return TEST_SUMMARY();
}
