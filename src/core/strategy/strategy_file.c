/* strategy_file.c — strategy files: JSON with the parameters or coefficients, the workload, n, k,
 * b and the achieved loss (format in dpcorr/strategy.h). Doubles are written with %.17g, which
 * strtod reads back to the identical value. The reader is strict and names file:line and field. */
#include "common/util.h"
#include "dpcorr/io.h"
#include "dpcorr/strategy.h"
#include "io/json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define STRATEGY_FORMAT "dpcorr-strategy"
#define STRATEGY_VERSION 1

/* ---- writer ----------------------------------------------------------------------------------- */

static int put_array(FILE *f, const double *a, size_t n)
{
    fputc('[', f);
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(a[i])) return 0;
        fprintf(f, "%s%.17g", i ? ", " : "", a[i]);
    }
    fputc(']', f);
    return 1;
}

static const char *kind_word(dpc_mech_kind k)
{
    return k == DPC_MECH_BLT ? "blt" : k == DPC_MECH_TOEPLITZ ? "toeplitz" : "dense";
}

dpc_status dpc_strategy_save(const dpc_strategy *s, const char *path, dpc_error *err)
{
    if (!s || !path) return dpc_error_param(err, DPC_E_INVALID, s ? "path" : "s", "NULL");
    if (s->kind != DPC_MECH_BLT && s->kind != DPC_MECH_TOEPLITZ && s->kind != DPC_MECH_DENSE)
        return dpc_error_set(err, DPC_E_INVALID, "%s: kind must be blt, toeplitz or dense", path);
    dpc_status st = dpc_strategy_problem_check(&s->problem, err);
    if (st) return dpc_error_prefix(err, "%s: ", path);
    const dpc_strategy_loss *l = &s->achieved;
    if (!isfinite(l->loss) || !isfinite(l->sensitivity) || !isfinite(l->error))
        return dpc_error_set(err, DPC_E_NUMERIC, "%s: loss: not finite", path);
    for (const char *c = s->method; *c; c++)
        if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20)
            return dpc_error_set(err, DPC_E_INVALID, "%s: method: characters not allowed", path);
    dpc_io_out *out = NULL; /* a temporary renamed into place: a failed write keeps the old file */
    dpc_error e = {0};     /* its messages name the path (field "path" dropped) */
    if (dpc_io_out_open(&out, path, &e)) return dpc_error_set(err, DPC_E_IO, "%s", e.msg + 6);
    FILE *f = dpc_io_out_file(out);
    const dpc_strategy_problem *pb = &s->problem;
    fprintf(f, "{\n  \"format\": \"%s\",\n  \"version\": %d,\n", STRATEGY_FORMAT, STRATEGY_VERSION);
    fprintf(f, "  \"kind\": \"%s\",\n  \"method\": \"%s\",\n", kind_word(s->kind), s->method);
    fprintf(f, "  \"steps\": %zu,\n  \"participations\": %zu,\n  \"min_sep\": %zu,\n", pb->steps,
            pb->participations, pb->min_sep);
    fprintf(f, "  \"objective\": \"%s\",\n", dpc_objective_name(pb->objective));
    fprintf(f, "  \"workload\": {\"momentum\": %.17g, \"decay\": %.17g},\n", pb->workload.momentum,
            pb->workload.decay);
    fprintf(f, "  \"loss\": %.17g,\n  \"sensitivity\": %.17g,\n  \"error\": %.17g,\n", l->loss,
            l->sensitivity, l->error);
    fprintf(f, "  \"exact\": %s,\n", l->exact ? "true" : "false");
    int ok = 1;
    if (s->kind == DPC_MECH_BLT) {
        fprintf(f, "  \"theta\": ");
        ok = ok && put_array(f, s->theta, s->nbuf);
        fprintf(f, ",\n  \"omega\": ");
        ok = ok && put_array(f, s->omega, s->nbuf);
        fprintf(f, "\n");
    } else {
        fprintf(f, "  \"of\": \"%s\",\n", s->of_strategy ? "strategy" : "noising");
        if (s->kind == DPC_MECH_TOEPLITZ) {
            fprintf(f, "  \"coeffs\": ");
            ok = ok && put_array(f, s->coeffs, s->ncoeffs);
            fprintf(f, "\n");
        } else {
            size_t n = pb->steps;
            fprintf(f, "  \"matrix\": [\n");
            for (size_t t = 0; t < n && ok; t++) {
                fprintf(f, "    ");
                ok = put_array(f, s->dense + t * n, t + 1);
                fprintf(f, "%s\n", t + 1 < n ? "," : "");
            }
            fprintf(f, "  ]\n");
        }
    }
    fprintf(f, "}\n");
    if (!ok) {
        dpc_io_out_abort(out);
        return dpc_error_set(err, DPC_E_NUMERIC, "%s: strategy has a non-finite value", path);
    }
    if (dpc_io_out_commit(out, &e)) return dpc_error_set(err, DPC_E_IO, "%s", e.msg + 6);
    return DPC_OK;
}

/* ---- reader ----------------------------------------------------------------------------------- */

typedef struct rd {
    const char *path;
    dpc_error *err;
} rd;

static dpc_status bad(const rd *r, const jv *v, const char *field, const char *what)
{
    return dpc_error_set(r->err, DPC_E_FORMAT, "%s:%zu: field '%s': %s", r->path,
                         v ? v->line : (size_t)1, field, what);
}

/* What a value is, for "expected X, got Y" (issue 37: refusals that did not say what they
 * found). */
static const char *got(const jv *v, char *buf, size_t cap)
{
    switch (v->type) {
    case JV_NUM: snprintf(buf, cap, "%.17g", v->num); break;
    case JV_STR: snprintf(buf, cap, "the string \"%.40s%s\"", v->str, strlen(v->str) > 40 ? "..." : ""); break;
    case JV_BOOL: snprintf(buf, cap, "%s", v->num != 0.0 ? "true" : "false"); break;
    case JV_ARR: snprintf(buf, cap, "an array of %zu", v->n); break;
    case JV_OBJ: snprintf(buf, cap, "an object"); break;
    default: snprintf(buf, cap, "null"); break;
    }
    return buf;
}

/* bad() with ", got <the value>" after what was expected. */
static dpc_status bad_got(const rd *r, const jv *v, const char *field, const char *expected)
{
    char g[80], what[256];
    snprintf(what, sizeof what, "%s, got %s", expected, got(v, g, sizeof g));
    return bad(r, v, field, what);
}

/* A library check's refusal ("theta: entry 0 must be ...") as the reader's own:
 * "<path>:<line>: field 'theta': entry 0 must be ...", status FORMAT. */
static dpc_status lib_refusal(const rd *r, size_t line)
{
    if (!r->err) return DPC_E_FORMAT;
    char msg[DPC_ERROR_MSG_LEN];
    size_t fl = strlen(r->err->field);
    if (fl && !strncmp(r->err->msg, r->err->field, fl) && !strncmp(r->err->msg + fl, ": ", 2))
        snprintf(msg, sizeof msg, "%.200s:%zu: field '%.40s': %.240s", r->path, line,
                 r->err->field, r->err->msg + fl + 2);
    else
        snprintf(msg, sizeof msg, "%.200s:%zu: %.280s", r->path, line, r->err->msg);
    snprintf(r->err->msg, sizeof r->err->msg, "%s", msg);
    r->err->status = DPC_E_FORMAT;
    return DPC_E_FORMAT;
}

static dpc_status get_size(const rd *r, const jv *v, const char *field, size_t *out)
{
    if (v->type != JV_NUM || v->num != floor(v->num) || v->num < 1.0 || v->num > 1099511627776.0)
        return bad_got(r, v, field, "expected an integer in [1, 2^40]");
    *out = (size_t)v->num;
    return DPC_OK;
}

static dpc_status get_num(const rd *r, const jv *v, const char *field, double *out)
{
    if (v->type != JV_NUM) return bad_got(r, v, field, "expected a number");
    *out = v->num;
    return DPC_OK;
}

static dpc_status get_array(const rd *r, const jv *v, const char *field, double **out, size_t *n)
{
    if (v->type != JV_ARR || v->n == 0)
        return bad_got(r, v, field, "expected a non-empty array of numbers");
    double *a = dpc__malloc_array(v->n, sizeof *a);
    if (!a) return DPC__NOMEM(r->err, field);
    for (size_t i = 0; i < v->n; i++) {
        if (v->items[i].type != JV_NUM) {
            free(a);
            char what[64];
            snprintf(what, sizeof what, "element %zu: expected a number", i);
            return bad_got(r, &v->items[i], field, what);
        }
        a[i] = v->items[i].num;
    }
    *out = a;
    *n = v->n;
    return DPC_OK;
}

/* Largest strategy file read (a dense n = 4096 strategy is about 0.4 GB of JSON). */
#define STRATEGY_FILE_MAX ((size_t)1 << 31)

static dpc_status read_text(const char *path, char **text, size_t *len, dpc_error *err)
{
    dpc_status ost;
    FILE *f = dpc__fopen_input(path, 0, &ost, err); /* never blocks on a FIFO */
    if (!f) return ost;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    int binary = 0, huge = 0;
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        /* a JSON text has no NUL byte: a binary file or a device (/dev/zero, /dev/urandom) is
         * refused at its first chunk instead of read without end */
        if (memchr(buf + n, '\0', got)) {
            binary = 1;
            break;
        }
        n += got;
        if (n < cap) break;
        if (cap >= STRATEGY_FILE_MAX) {
            huge = 1;
            break;
        }
        char *nb = realloc(buf, cap * 2);
        if (!nb) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    int rerr = ferror(f);
    fclose(f);
    if (!buf) return DPC__NOMEM(err, "strategy file");
    if (binary || huge) {
        free(buf);
        return binary ? dpc_error_set(err, DPC_E_FORMAT,
                                      "%s: NUL byte: not a strategy file (binary, or a device?)",
                                      path)
                      : dpc_error_set(err, DPC_E_FORMAT, "%s: larger than %zu bytes", path,
                                      (size_t)STRATEGY_FILE_MAX);
    }
    if (rerr) {
        free(buf);
        return dpc_error_set(err, DPC_E_IO, "%s: read error", path);
    }
    *text = buf;
    *len = n;
    return DPC_OK;
}

static const char *const known_keys[] = {
    "format", "version", "kind", "method", "steps", "participations", "min_sep", "objective",
    "workload", "loss", "sensitivity", "error", "exact", "theta", "omega", "of", "coeffs",
    "matrix"};

/* The "matrix" of a dense strategy: n rows of t + 1 (or n) numbers, zero above the diagonal. */
static dpc_status parse_matrix(const rd *r, const jv *root, dpc_strategy *s)
{
    size_t n = s->problem.steps;
    const jv *v;
    if (n > 4096)
        return bad_got(r, dpc__json_get(root, "steps"), "steps",
                       "expected at most 4096 for kind dense (the matrix is n x n)");
    if (!(v = dpc__json_get(root, "matrix")))
        return bad(r, root, "matrix", "missing (kind dense needs an array of n rows)");
    char exp_rows[64];
    snprintf(exp_rows, sizeof exp_rows, "expected an array of %zu rows (n = steps)", n);
    if (v->type != JV_ARR || v->n != n) return bad_got(r, v, "matrix", exp_rows);
    if (!(s->dense = dpc__calloc(n * n, sizeof(double)))) return DPC__NOMEM(r->err, "matrix");
    for (size_t t = 0; t < n; t++) {
        const jv *row = &v->items[t];
        char what[96];
        if (row->type != JV_ARR || (row->n != t + 1 && row->n != n)) {
            if (t + 1 == n) snprintf(what, sizeof what, "row %zu: expected %zu numbers", t, n);
            else snprintf(what, sizeof what, "row %zu: expected %zu (or %zu) numbers", t, t + 1, n);
            return bad_got(r, row, "matrix", what);
        }
        for (size_t j = 0; j < row->n; j++) {
            const jv *e = &row->items[j];
            if (e->type != JV_NUM) {
                snprintf(what, sizeof what, "row %zu, column %zu: expected a number", t, j);
                return bad_got(r, e, "matrix", what);
            }
            if (j > t && e->num != 0.0) {
                snprintf(what, sizeof what,
                         "row %zu, column %zu: expected 0 above the diagonal (C is lower "
                         "triangular)", t, j);
                return bad_got(r, e, "matrix", what);
            }
            s->dense[t * n + j] = e->num;
        }
    }
    return DPC_OK;
}

/* The kind's own fields (theta/omega, coeffs/of, matrix/of) and the mechanism's checks. */
static dpc_status parse_kind_fields(const rd *r, const jv *root, dpc_strategy *s)
{
    dpc_status st;
    const jv *v;
    /* kind-specific fields */
    const char *own[3][2] = {{"theta", "omega"}, {"coeffs", "of"}, {"matrix", "of"}};
    int ki = s->kind == DPC_MECH_BLT ? 0 : s->kind == DPC_MECH_TOEPLITZ ? 1 : 2;
    const char *all[4] = {"theta", "omega", "coeffs", "matrix"};
    for (int i = 0; i < 4; i++)
        if ((v = dpc__json_get(root, all[i])) && strcmp(all[i], own[ki][0]) &&
            strcmp(all[i], own[ki][1]))
            return bad(r, v, all[i],
                       ki == 0   ? "not allowed for kind blt (it takes theta and omega)"
                       : ki == 1 ? "not allowed for kind toeplitz (it takes coeffs and of)"
                                 : "not allowed for kind dense (it takes matrix and of)");
    if (ki == 0 && dpc__json_get(root, "of"))
        return bad(r, dpc__json_get(root, "of"), "of",
                   "not allowed for kind blt (it takes theta and omega)");
    s->of_strategy = 1;
    if ((v = dpc__json_get(root, "of"))) {
        if (v->type == JV_STR && !strcmp(v->str, "strategy")) s->of_strategy = 1;
        else if (v->type == JV_STR && !strcmp(v->str, "noising")) s->of_strategy = 0;
        else return bad_got(r, v, "of", "expected \"strategy\" or \"noising\"");
    }
    if (ki == 0) {
        const jv *vt = dpc__json_get(root, "theta"), *vo = dpc__json_get(root, "omega");
        size_t nt, no;
        if (!vt) return bad(r, root, "theta", "missing (kind blt needs theta and omega arrays)");
        if (!vo) return bad(r, root, "omega", "missing (kind blt needs theta and omega arrays)");
        if ((st = get_array(r, vt, "theta", &s->theta, &nt))) return st;
        if ((st = get_array(r, vo, "omega", &s->omega, &no))) return st;
        if (nt != no) {
            char what[96];
            snprintf(what, sizeof what, "expected %zu numbers (as many as theta), got %zu", nt,
                     no);
            return bad(r, vo, "omega", what);
        }
        s->nbuf = nt;
    } else if (ki == 1) {
        if (!(v = dpc__json_get(root, "coeffs")))
            return bad(r, root, "coeffs", "missing (kind toeplitz needs a coeffs array)");
        if ((st = get_array(r, v, "coeffs", &s->coeffs, &s->ncoeffs))) return st;
    } else if ((st = parse_matrix(r, root, s))) {
        return st;
    }
    dpc_mech_params p;
    dpc_strategy_mech_params(s, &p);
    if ((st = dpc_mech_params_check(&p, r->err))) {
        const jv *pv = dpc__json_get(root, own[ki][0]);
        return lib_refusal(r, pv ? pv->line : root->line);
    }
    return DPC_OK;
}

static dpc_status parse_strategy(const rd *r, const jv *root, dpc_strategy *s)
{
    dpc_status st;
    if (root->type != JV_OBJ) return bad_got(r, root, "(top level)", "expected an object");
    for (size_t i = 0; i < root->n; i++) {
        int known = 0;
        for (size_t k = 0; k < sizeof known_keys / sizeof known_keys[0]; k++)
            if (!strcmp(root->keys[i], known_keys[k])) known = 1;
        if (!known)
            return bad(r, &root->items[i], root->keys[i],
                       "unknown field (expected format, version, kind, method, steps, "
                       "participations, min_sep, objective, workload, loss, sensitivity, error, "
                       "exact, theta, omega, of, coeffs or matrix)");
    }
    const jv *v = dpc__json_get(root, "format");
    if (!v) return bad(r, root, "format", "missing (expected \"" STRATEGY_FORMAT "\")");
    if (v->type != JV_STR || strcmp(v->str, STRATEGY_FORMAT))
        return bad_got(r, v, "format", "expected \"" STRATEGY_FORMAT "\"");
    if (!(v = dpc__json_get(root, "version")))
        return bad(r, root, "version", "missing (expected 1)");
    if (v->type != JV_NUM || v->num != STRATEGY_VERSION)
        return bad_got(r, v, "version", "expected 1 (the version this reader knows)");
    if (!(v = dpc__json_get(root, "kind")))
        return bad(r, root, "kind", "missing (expected \"blt\", \"toeplitz\" or \"dense\")");
    if (v->type != JV_STR)
        return bad_got(r, v, "kind", "expected \"blt\", \"toeplitz\" or \"dense\"");
    if (!strcmp(v->str, "blt")) s->kind = DPC_MECH_BLT;
    else if (!strcmp(v->str, "toeplitz")) s->kind = DPC_MECH_TOEPLITZ;
    else if (!strcmp(v->str, "dense")) s->kind = DPC_MECH_DENSE;
    else return bad_got(r, v, "kind", "expected \"blt\", \"toeplitz\" or \"dense\"");
    snprintf(s->method, sizeof s->method, "%s", v->str);
    if ((v = dpc__json_get(root, "method"))) {
        if (v->type != JV_STR || strlen(v->str) >= sizeof s->method)
            return bad_got(r, v, "method", "expected a string of at most 23 characters");
        snprintf(s->method, sizeof s->method, "%s", v->str);
    }
    dpc_strategy_problem *pb = &s->problem;
    if (!(v = dpc__json_get(root, "steps")))
        return bad(r, root, "steps", "missing (expected an integer >= 1: the strategy's n)");
    if ((st = get_size(r, v, "steps", &pb->steps))) return st;
    if ((v = dpc__json_get(root, "participations")) &&
        (st = get_size(r, v, "participations", &pb->participations)))
        return st;
    if ((v = dpc__json_get(root, "min_sep")) && (st = get_size(r, v, "min_sep", &pb->min_sep)))
        return st;
    if ((v = dpc__json_get(root, "objective"))) {
        if (v->type == JV_STR && !strcmp(v->str, "max")) pb->objective = DPC_OBJECTIVE_MAX;
        else if (v->type == JV_STR && !strcmp(v->str, "mean")) pb->objective = DPC_OBJECTIVE_MEAN;
        else return bad_got(r, v, "objective", "expected \"max\" or \"mean\"");
    }
    size_t pline = root->line; /* line named by problem errors: the workload's, if given */
    if ((v = dpc__json_get(root, "workload"))) {
        pline = v->line;
        if (v->type != JV_OBJ)
            return bad_got(r, v, "workload", "expected an object {\"momentum\", \"decay\"}");
        for (size_t i = 0; i < v->n; i++)
            if (strcmp(v->keys[i], "momentum") && strcmp(v->keys[i], "decay"))
                return bad(r, &v->items[i], v->keys[i],
                           "unknown field in workload (expected momentum or decay)");
        const jv *w;
        if ((w = dpc__json_get(v, "momentum")) &&
            (st = get_num(r, w, "workload.momentum", &pb->workload.momentum)))
            return st;
        if ((w = dpc__json_get(v, "decay")) &&
            (st = get_num(r, w, "workload.decay", &pb->workload.decay)))
            return st;
    }
    if ((st = dpc_strategy_problem_check(pb, r->err))) return lib_refusal(r, pline);
    const char *lossf[3] = {"loss", "sensitivity", "error"};
    double *lossv[3] = {&s->achieved.loss, &s->achieved.sensitivity, &s->achieved.error};
    for (int i = 0; i < 3; i++) {
        *lossv[i] = NAN;
        if ((v = dpc__json_get(root, lossf[i]))) {
            if ((st = get_num(r, v, lossf[i], lossv[i]))) return st;
            if (*lossv[i] < 0.0) return bad_got(r, v, lossf[i], "expected a number >= 0");
        }
    }
    if ((v = dpc__json_get(root, "exact"))) {
        if (v->type != JV_BOOL) return bad_got(r, v, "exact", "expected true or false");
        s->achieved.exact = v->num != 0.0;
    }
    return parse_kind_fields(r, root, s);
}

dpc_status dpc_strategy_load(dpc_strategy **out, const char *path, dpc_error *err)
{
    *out = NULL;
    if (!path) return dpc_error_param(err, DPC_E_INVALID, "path", "NULL");
    char *text = NULL;
    size_t len = 0;
    dpc_status st = read_text(path, &text, &len, err);
    if (st) return st;
    jv *root = NULL;
    char msg[256];
    size_t line = 0;
    int nomem = 0;
    int ok = dpc__json_parse(text, len, &root, msg, sizeof msg, &line, &nomem);
    free(text);
    if (!ok) {
        if (nomem) return DPC__NOMEM(err, "strategy file");
        return dpc_error_set(err, DPC_E_FORMAT, "%s:%zu: %s", path, line, msg);
    }
    dpc_strategy_problem pb;
    dpc_strategy_problem_init(&pb, 1);
    dpc_strategy *s = calloc(1, sizeof *s);
    if (!s) {
        dpc__json_free(root);
        return DPC__NOMEM(err, "strategy");
    }
    s->problem = pb;
    rd r = {path, err};
    st = parse_strategy(&r, root, s);
    dpc__json_free(root);
    if (st) {
        dpc_strategy_free(s);
        return st;
    }
    *out = s;
    return DPC_OK;
}

/* ---- The report of an optimization ------------------------------------------------------ */

int dpc_strategy_describe(const dpc_strategy *s, char *buf, size_t len)
{
    if (!s) return snprintf(buf, len, "(none)");
    if (s->kind == DPC_MECH_BLT) return snprintf(buf, len, "BLT, %zu buffers", s->nbuf);
    if (s->kind == DPC_MECH_TOEPLITZ)
        return snprintf(buf, len, "banded Toeplitz, %zu bands", s->ncoeffs);
    if (s->kind == DPC_MECH_DENSE) return snprintf(buf, len, "dense ME (n x n lower-triangular C)");
    return snprintf(buf, len, "%s", s->method);
}

void dpc_strategy_report_json(dpc_json_writer *w, const dpc_strategy *s, double seconds,
                              const char *out, const dpc_strategy_baseline *bl, size_t n)
{
    if (!w || !s) return;
    const dpc_strategy_problem *pb = &s->problem;
    const dpc_strategy_loss *l = &s->achieved;
    char desc[96];
    dpc_strategy_describe(s, desc, sizeof desc);
    dpc_json_str(w, "kind", s->method);
    dpc_json_str(w, "description", desc);
    dpc_json_int(w, "steps", (long long)pb->steps);
    dpc_json_int(w, "participations", (long long)pb->participations);
    dpc_json_int(w, "min_sep", (long long)pb->min_sep);
    dpc_json_str(w, "objective", dpc_objective_name(pb->objective));
    dpc_json_num(w, "momentum", pb->workload.momentum);
    dpc_json_num(w, "decay", pb->workload.decay);
    dpc_json_num(w, "loss", l->loss);
    dpc_json_num(w, "sensitivity", l->sensitivity);
    dpc_json_num(w, "error", l->error);
    dpc_json_bool(w, "exact", l->exact);
    if (s->kind == DPC_MECH_BLT) dpc_json_int(w, "buffers", (long long)s->nbuf);
    if (s->kind == DPC_MECH_TOEPLITZ) dpc_json_int(w, "bands", (long long)s->ncoeffs);
    dpc_json_int(w, "iterations", (long long)s->iterations);
    dpc_json_num(w, "seconds", seconds);
    if (out) dpc_json_str(w, "out", out);
    dpc_json_arr(w, "baselines");
    for (size_t i = 0; bl && i < n; i++) {
        dpc_json_obj(w, NULL);
        dpc_json_str(w, "name", bl[i].name);
        dpc_json_num(w, "loss", bl[i].available ? bl[i].loss.loss : NAN);
        dpc_json_num(w, "ratio", bl[i].available ? bl[i].loss.loss / l->loss : NAN);
        dpc_json_end(w);
    }
    dpc_json_end(w);
}
