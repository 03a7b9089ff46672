/* cli.c — clock and output-path helpers of the dpcorr tool; see cli.h. */
#include "cli.h"
#include "dpcorr/data.h"
#include "dpcorr/io.h"

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
    dpc_error err = {0};
    if (dpc_io_check_output(path, &err)) return opt_fail_lib_at(s, o, &err);
    return 0;
}

/* ---- no output may be an input or another output ------------------------------------------- */

#define IO_MAX 32

typedef struct io_path {
    const opt_spec *o;
    const char *value; /* as typed */
    const char *path;  /* the file (the value, or one a spec names) */
    int output, continues;
} io_path;

/* The files an input option names: itself, a spec's files, a kind's file:PATH. */
static size_t input_paths(const opt_spec *o, const char *v, io_path *p, size_t room, char **own)
{
    size_t n = 0;
    if ((o->flags & OPT_IN_FILE) && room)
        p[n++] = (io_path){o, v, v, 0, (o->flags & OPT_CONTINUES) != 0};
    if ((o->flags & OPT_IN_STRATEGY) && !strncmp(v, "file:", 5) && v[5] && room)
        p[n++] = (io_path){o, v, v + 5, 0, 0};
    if (o->flags & OPT_IN_DATA) {
        size_t count = 0;
        dpc_error err = {0};
        if (dpc_data_spec_files(v, own, &count, &err)) return n; /* the loader names the fault */
        const char *f = *own;
        for (size_t k = 0; k < count && n < room; k++, f += strlen(f) + 1)
            p[n++] = (io_path){o, v, f, 0, 0};
    }
    return n;
}

/* "--report F" or "--data SPEC (its file F)" */
static void describe(const io_path *p, char *buf, size_t len)
{
    if (p->path == p->value) snprintf(buf, len, "%s %s", p->o->name, p->value);
    else snprintf(buf, len, "%s %s (its file %s)", p->o->name, p->value, p->path);
}

/* The command's typed outputs (checked writable) and the files of its inputs, into p. */
static int collect(const opt_set *s, io_path *p, size_t *n, char **own, size_t *nown)
{
    for (size_t i = 0; i < s->n; i++) {
        const opt_spec *o = s->opts[i];
        if (!s->given[i] || o->type != OPT_STR) continue;
        const char *v = s->val[i].raw;
        if (o->flags & OPT_OUT_FILE) {
            int rc = cli_check_out_file(s, o, v);
            if (rc) return rc;
            if (*n < IO_MAX) p[(*n)++] = (io_path){o, v, v, 1, (o->flags & OPT_CONTINUES) != 0};
        }
        if (o->flags & (OPT_IN_FILE | OPT_IN_DATA | OPT_IN_STRATEGY))
            *n += input_paths(o, v, p + *n, IO_MAX - *n, &own[(*nown)++]);
    }
    return 0;
}

/* Every output of p against every input and every other output (each pair once). */
static int compare_paths(const opt_set *s, const io_path *p, size_t n)
{
    for (size_t a = 0; a < n; a++) {
        if (!p[a].output) continue;
        for (size_t b = 0; b < n; b++) {
            if (b == a || (p[b].output && b < a)) continue;
            if (!p[b].output && p[a].continues && p[b].continues) continue;
            if (!dpc_io_same_file(p[a].path, p[b].path)) continue;
            char da[4200], db[4200];
            describe(&p[a], da, sizeof da);
            describe(&p[b], db, sizeof db);
            return opt_fail(s, "%s is the same file as %s: %s", da, db,
                            p[b].output ? "each output needs its own file"
                                        : "refusing to overwrite an input");
        }
    }
    return 0;
}

int cli_check_outputs(const opt_set *s)
{
    io_path p[IO_MAX];
    char *own[OPT_MAX] = {0};
    size_t n = 0, nown = 0;
    int rc = collect(s, p, &n, own, &nown);
    if (!rc) rc = compare_paths(s, p, n);
    for (size_t k = 0; k < nown; k++) free(own[k]);
    return rc;
}

int cli_check_dir_outputs(const opt_set *s, const opt_spec *dir, const char *path,
                          const char *const *names, const char *data_spec)
{
    static const opt_spec implicit = {.name = "the data", .flags = OPT_IN_DATA};
    io_path p[IO_MAX + 64];
    char *own[OPT_MAX + 1] = {0}, (*files)[4200] = NULL;
    size_t n = 0, nown = 0, nf = 0;
    int rc = collect(s, p, &n, own, &nown);
    if (!rc && data_spec) n += input_paths(&implicit, data_spec, p + n, IO_MAX - n, &own[nown++]);
    while (names && names[nf]) nf++;
    if (!rc && nf > 64) rc = opt_fail_at(s, dir, "too many files (%zu)", nf);
    if (!rc && nf && !(files = malloc(nf * sizeof *files))) rc = opt_fail(s, "out of memory");
    for (size_t k = 0; k < nf && !rc; k++) {
        if (snprintf(files[k], sizeof files[k], "%s/%s", path, names[k]) >= (int)sizeof files[k])
            rc = opt_fail_at(s, dir, "cannot write %s/%s (the path is too long)", path, names[k]);
        dpc_error err = {0};
        if (!rc && dpc_io_check_output(files[k], &err)) rc = opt_fail_lib_at(s, dir, &err);
        if (!rc) p[n++] = (io_path){dir, path, files[k], 1, 0};
    }
    if (!rc) rc = compare_paths(s, p, n);
    free(files);
    for (size_t k = 0; k < nown; k++) free(own[k]);
    return rc;
}

/* ---- outputs written safely ------------------------------------------------------------------ */

FILE *cli_out_open(dpc_io_out **h, const char *what, const char *path)
{
    dpc_error err = {0};
    if (dpc_io_out_open(h, path, &err)) {
        fprintf(stderr, "dpcorr: %s: %s\n", what, err.msg + (err.field[0] ? 6 : 0));
        return NULL;
    }
    return dpc_io_out_file(*h);
}

int cli_out_commit(dpc_io_out *h, const char *what)
{
    dpc_error err = {0};
    if (!dpc_io_out_commit(h, &err)) return 0;
    fprintf(stderr, "dpcorr: %s: %s\n", what, err.msg + (err.field[0] ? 6 : 0));
    return CLI_RUNTIME;
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

