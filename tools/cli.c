/* cli.c — clock and output-path helpers of the dpcorr tool; see cli.h. */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

double cli_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The directory part of path ("." when none). */
static void dir_of(const char *path, char *dir, size_t len)
{
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(dir, len, ".");
    else if (slash == path) snprintf(dir, len, "/");
    else snprintf(dir, len, "%.*s", (int)(slash - path), path);
}

static int writable_dir(const char *dir, const char **why)
{
    struct stat st;
    if (stat(dir, &st) != 0) {
        *why = strerror(errno);
        return 0;
    }
    if (!S_ISDIR(st.st_mode)) {
        *why = "not a directory";
        return 0;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        *why = strerror(errno);
        return 0;
    }
    return 1;
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

/* The measured levels, once per process (dpc_tune_isa: ~10 ms, at the first run that builds
 * a model or a trainer). On failure (no memory for its buffers) the detected level serves. */
static dpc_tune_levels tuning;
static int tuning_state; /* 0 not yet, 1 measured, 2 failed */

const dpc_tune_levels *cli_isa_tuning(void)
{
    if (!tuning_state) {
        dpc_error err = {0};
        tuning_state = dpc_tune_isa(&tuning, &err) ? 2 : 1;
    }
    return tuning_state == 1 ? &tuning : NULL;
}

int cli_isa_forced(void)
{
    const char *v = getenv("DPCORR_ISA");
    return v && *v && strcmp(v, "auto") != 0;
}

dpc_isa cli_isa_for(dpc_tune_family family)
{
    dpc_isa isa = DPC_ISA_SSE2;
    dpc_error err = {0};
    if (isa_from_env(&isa, &err)) return dpc_isa_detect();
    if (cli_isa_forced()) return isa;
    const dpc_tune_levels *t = cli_isa_tuning();
    return t ? t->level[family] : dpc_isa_detect();
}

dpc_isa cli_isa(void) { return cli_isa_for(DPC_TUNE_GEMM); }

dpc_status cli_model_new(dpc_model **m, dpc_model_config *cfg, const char *spec, size_t n_in,
                         const size_t *shape, size_t n_classes, dpc_error *err)
{
    dpc_model_config c;
    dpc_status st = dpc_model_parse_shape(&c, spec, n_in, shape, n_classes, err);
    if (st) return st;
    c.isa = cli_isa_for(DPC_TUNE_GEMM);
    if (cfg) *cfg = c;
    return dpc_model_new(m, &c, err);
}

int cli_check_out_file(const opt_set *s, const opt_spec *o, const char *path)
{
    char dir[4096];
    const char *why = NULL;
    struct stat st;
    if (strlen(path) >= sizeof dir) return opt_fail_at(s, o, "path too long");
    if (path[strlen(path) - 1] == '/')
        return opt_fail_at(s, o, "cannot write %s (a directory, not a file)", path);
    dir_of(path, dir, sizeof dir);
    if (!writable_dir(dir, &why))
        return opt_fail_at(s, o, "cannot write %s (directory %s: %s)", path, dir, why);
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return opt_fail_at(s, o, "cannot write %s (a directory, not a file)", path);
        if (!S_ISREG(st.st_mode))
            return opt_fail_at(s, o, "refusing to write %s: it exists and is not a regular file "
                                     "(a device, FIFO or socket)", path);
        if (access(path, W_OK) != 0)
            return opt_fail_at(s, o, "cannot write %s (%s)", path, strerror(errno));
    }
    return 0;
}

int cli_make_out_dir(const opt_set *s, const opt_spec *o, const char *path)
{
    char buf[4096];
    const char *why = NULL;
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf) return opt_fail_at(s, o, "bad directory name");
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0') continue;
        char keep = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return opt_fail_at(s, o, "cannot create directory %s (%s)", buf, strerror(errno));
        buf[i] = keep;
    }
    if (!writable_dir(path, &why)) return opt_fail_at(s, o, "cannot write into %s (%s)", path, why);
    return 0;
}

int cli_close_out(FILE *f, const char *what, const char *path)
{
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    if (!bad) return 0;
    fprintf(stderr, "dpcorr: %s: write error on %s\n", what, path);
    return CLI_RUNTIME;
}
