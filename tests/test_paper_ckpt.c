/* test_paper_ckpt.c — checkpoints of the papers' trainers in the trainers' container
 * (dpc_ckpt, dpcorr/train.h): for projected DP-lambda-CGD (both noise forms), DP-AMBSSGD and
 * Accelerated-DP-SRGD (tree noise, mid-tree), a run saved after K steps and restored into a fresh run
 * holds the same state (saving it again gives the same sections) and finishes bit for bit like
 * an uninterrupted one; a changed option is refused naming the library parameter, another
 * generator naming "rng"/"seed", another trainer kind naming "algorithm" (also a DP-FTRL file);
 * a flipped byte, a cut file and bytes after the checksum are refused as corrupt; the file has
 * mode 0600; malformed state (counters, sizes) is refused by _restore. Every trainer (and the
 * DP-FTRL trainer) driven, saved and restored through its ops table (dpc_run_ops) finishes bit
 * for bit like an uninterrupted run. */
#include "dpcorr.h"
#include "harness.h"

#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

static char g_path[64];

static unsigned char *slurp(const char *p, size_t *n)
{
    FILE *f = fopen(p, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)len + 1);
    *n = fread(b, 1, (size_t)len, f);
    fclose(f);
    return b;
}

static void spit(const char *p, const unsigned char *b, size_t n)
{
    FILE *f = fopen(p, "wb");
    if (!f) return;
    fwrite(b, 1, n, f);
    fclose(f);
}

/* Every section of a equals the one of b (same names, sizes and bytes). */
static int same_sections(const dpc_ckpt *a, const dpc_ckpt *b, const char *const *names)
{
    for (size_t i = 0; names[i]; i++) {
        size_t na = 0, nb = 0;
        const double *va = dpc_ckpt_section(a, names[i], &na), *vb = dpc_ckpt_section(b, names[i], &nb);
        if (na != nb || (va == NULL) != (vb == NULL) || (na && memcmp(va, vb, na * sizeof *va)))
            return 0;
    }
    return 1;
}

/* The corrupt-file refusals of any container file at path, read as kind. */
static void corrupt_files(const char *path, const char *kind)
{
    dpc_error err = {0};
    size_t n = 0;
    unsigned char *b = slurp(path, &n);
    char bad[96];
    snprintf(bad, sizeof bad, "%s.bad", path);
    dpc_ckpt *ck = NULL;
    b[n / 2] ^= 0x10; /* a flipped byte inside */
    spit(bad, b, n);
    CHECK(dpc_ckpt_read(&ck, bad, kind, &err) == DPC_E_FORMAT && strstr(err.msg, "checksum"),
          "%s: a flipped byte is refused: %s", kind, err.msg);
    b[n / 2] ^= 0x10;
    spit(bad, b, n - 5); /* truncated */
    CHECK(dpc_ckpt_read(&ck, bad, kind, &err) == DPC_E_FORMAT, "%s: cut: %s", kind, err.msg);
    unsigned char *c = malloc(n + 1);
    memcpy(c, b, n);
    c[n] = 0;
    spit(bad, c, n + 1); /* a byte after the checksum */
    CHECK(dpc_ckpt_read(&ck, bad, kind, &err) == DPC_E_FORMAT, "%s: appended: %s", kind, err.msg);
    CHECK(dpc_ckpt_read(&ck, path, "another-kind", &err) == DPC_E_STATE &&
              !strcmp(err.field, "algorithm") && strstr(err.msg, kind),
          "%s: read as another kind: %s", kind, err.msg);
    struct stat sb;
    CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0600, "%s: mode 0600", kind);
    CHECK(ck == NULL, "nothing returned on failure");
    unlink(bad);
    free(b);
    free(c);
}

/* ---- the one run interface (dpc_run_ops) --------------------------------------------------- */

/* Drives a (a fresh run) K steps through its ops table, saves it and restores the state into b (a
 * fresh run of the same configuration) through b's, finishes b: its parameters are want (P values)
 * bit for bit, the step after the last is refused, and the counts are the table's. */
static void ops_resume(const char *what, dpc_run a, dpc_run b, size_t K, const dpc_rng *rng,
                       const double *want, size_t P, void *info)
{
    dpc_error err = {0};
    size_t total = a.ops->steps_total(a.self);
    CHECK(a.ops->steps_done(a.self) == 0 && total > K && b.ops == a.ops,
          "%s: a fresh run of %zu steps", what, total);
    while (a.ops->steps_done(a.self) < K) CHECK_OK(a.ops->step(a.self, info, &err), &err);
    dpc_ckpt *ck = NULL;
    if (a.ops->own_file) {
        CHECK_OK(a.ops->save(a.self, NULL, g_path, &err), &err);
        CHECK_OK(b.ops->restore(b.self, NULL, g_path, &err), &err);
    } else {
        CHECK_OK(dpc_ckpt_new(&ck, a.ops->kind, rng, &err), &err);
        CHECK_OK(a.ops->save(a.self, ck, NULL, &err), &err);
        CHECK_OK(b.ops->restore(b.self, ck, NULL, &err), &err);
        CHECK(dpc_ckpt_step(ck) == K, "%s: the container holds step %zu", what, dpc_ckpt_step(ck));
    }
    CHECK(b.ops->steps_done(b.self) == K, "%s: restored at step %zu", what, K);
    while (b.ops->steps_done(b.self) < total) CHECK_OK(b.ops->step(b.self, info, &err), &err);
    size_t n = 0;
    const double *w = b.ops->params(b.self, &n);
    CHECK(n == P && w && !memcmp(w, want, P * sizeof *w),
          "%s: through the ops table, resumed = uninterrupted, bit for bit", what);
    CHECK(b.ops->step(b.self, info, &err) == DPC_E_RANGE, "%s: no step after the last", what);
    dpc_ckpt_free(ck);
}

/* ---- projected DP-lambda-CGD --------------------------------------------------------------- */

/* A quadratic oracle: g_i = W - a_i with a_i[q] = sin(i + q), clipped; loss 1/2 |W - a_i|^2. */
static dpc_status quad_grad(void *ctx, const double *W, const size_t *idx, size_t B, double clip,
                            double *gsum, double *loss_sum, size_t *n_clipped, dpc_error *err)
{
    size_t P = *(const size_t *)ctx;
    (void)err;
    *loss_sum = 0;
    *n_clipped = 0;
    double g[16];
    for (size_t b = 0; b < B; b++) {
        double nn = 0;
        for (size_t q = 0; q < P; q++) g[q] = W[q] - sin((double)(idx[b] + q)), nn += g[q] * g[q];
        double f = sqrt(nn) > clip ? clip / sqrt(nn) : 1.0;
        if (f < 1) ++*n_clipped;
        for (size_t q = 0; q < P; q++) gsum[q] += f * g[q];
        *loss_sum += 0.5 * nn;
    }
    return DPC_OK;
}

static dpc_status quad_eval(void *ctx, const double *W, int which, double *loss, double *e01,
                            dpc_error *err)
{
    size_t P = *(const size_t *)ctx;
    (void)err;
    double s = 0;
    for (size_t q = 0; q < P; q++) s += W[q] * W[q] * (which ? 2.0 : 1.0);
    *loss = s;
    *e01 = s > 1;
    return DPC_OK;
}

static dpc_kan_lcgd *lcgd_make(const dpc_kan_lcgd_config *c, size_t P, const dpc_rng *rng)
{
    double W0[16];
    for (size_t q = 0; q < P; q++) W0[q] = 0.1 * (double)q;
    dpc_kan_lcgd *r = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_kan_lcgd_new(&r, c, P, W0, rng, &err), &err);
    return r;
}

static void lcgd_advance(dpc_kan_lcgd *r, size_t *P, size_t k)
{
    dpc_error err = {0};
    for (size_t i = 0; i < k; i++)
        CHECK_OK(dpc_kan_lcgd_advance(r, quad_grad, quad_eval, P, 3, NULL, NULL, NULL, &err), &err);
}

static dpc_ckpt *lcgd_ckpt(const dpc_kan_lcgd *r, const dpc_rng *rng)
{
    dpc_ckpt *ck = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_ckpt_new(&ck, DPC_KAN_LCGD_KIND, rng, &err), &err);
    CHECK_OK(dpc_kan_lcgd_save(r, ck, &err), &err);
    return ck;
}

static void test_lcgd(dpc_noise_form form)
{
    size_t P = 5, T = 30, K = 11;
    dpc_kan_lcgd_config c;
    dpc_kan_lcgd_config_init(&c);
    c.n = 40, c.iterates = T, c.batch = 4, c.eta = 0.2, c.clip = 1, c.lambda = 0.6;
    c.noise_std = 1.5, c.radius = 1.2, c.noise_form = form;
    dpc_rng rng;
    dpc_rng_seed(&rng, 21);
    dpc_error err = {0};
    dpc_kan_lcgd *full = lcgd_make(&c, P, &rng), *a = lcgd_make(&c, P, &rng), *b = lcgd_make(&c, P, &rng);
    lcgd_advance(full, &P, T);
    lcgd_advance(a, &P, K);
    dpc_ckpt *ca = lcgd_ckpt(a, &rng), *rd = NULL;
    CHECK_OK(dpc_ckpt_write(ca, g_path, &err), &err);
    CHECK_OK(dpc_ckpt_read(&rd, g_path, DPC_KAN_LCGD_KIND, &err), &err);
    dpc_ckpt *cb = lcgd_ckpt(b, &rng);
    CHECK_OK(dpc_ckpt_match(rd, cb, &err), &err);
    CHECK_OK(dpc_kan_lcgd_restore(b, rd, &err), &err);
    dpc_ckpt *cb2 = lcgd_ckpt(b, &rng);
    static const char *const names[] = {"lcgd.counters", "lcgd.W", "lcgd.metrics", "lcgd.noise", NULL};
    CHECK(same_sections(ca, cb2, names) && dpc_ckpt_step(rd) == K - 1,
          "lcgd (%s): the restored state is the saved one", dpc_noise_form_name(form));
    size_t ns = 0;
    dpc_ckpt_section(ca, "lcgd.noise", &ns);
    CHECK(ns == 0, "lambda-CGD noise regenerates from the RNG in both forms: no state stored "
          "(%zu values)", ns);
    lcgd_advance(b, &P, T - K);
    dpc_kan_lcgd_result r1, r2;
    dpc_kan_lcgd_result_get(full, &r1);
    dpc_kan_lcgd_result_get(b, &r2);
    CHECK(dpc_params_hash(dpc_kan_lcgd_params(full), P) == dpc_params_hash(dpc_kan_lcgd_params(b), P) &&
              memcmp(&r1, &r2, sizeof r1) == 0 && r1.evaluated > 0,
          "lcgd (%s): resumed = uninterrupted, bit for bit", dpc_noise_form_name(form));
    {
        dpc_kan_lcgd *oa = lcgd_make(&c, P, &rng), *ob = lcgd_make(&c, P, &rng);
        dpc_ledger led;
        memset(&led, 0, sizeof led);
        dpc_kan_lcgd_runner ra = {oa, quad_grad, quad_eval, &P, 3, &led}, rb = ra;
        rb.run = ob;
        dpc_kan_lcgd_run_info info;
        dpc_run ops = dpc_kan_lcgd_run_ops(&ra);
        CHECK(ops.ops->ledger(ops.self) == &led && !strcmp(ops.ops->kind, DPC_KAN_LCGD_KIND) &&
                  ops.ops->steps_total(ops.self) == T - 1,
              "lcgd ops: kind, ledger and T - 1 updates");
        CHECK_OK(ops.ops->step(ops.self, &info, &err), &err);
        CHECK(ops.ops->steps_done(ops.self) == 0 && dpc_kan_lcgd_visited(oa) == 1 &&
                  !isnan(info.train_loss),
              "lcgd ops: the first step visits W_0 (evaluated) and makes no update");
        ops_resume("lcgd ops", ops, dpc_kan_lcgd_run_ops(&rb), K - 1, &rng, dpc_kan_lcgd_params(full),
                   P, &info);
        dpc_kan_lcgd_free(oa), dpc_kan_lcgd_free(ob);
    }
    /* a changed option is named; a changed generator too */
    c.eta = 0.25;
    dpc_kan_lcgd *e = lcgd_make(&c, P, &rng);
    dpc_ckpt *ce = lcgd_ckpt(e, &rng);
    CHECK(dpc_ckpt_match(rd, ce, &err) == DPC_E_STATE && !strcmp(err.field, "eta") &&
              strstr(err.msg, "0.2") && strstr(err.msg, "0.25"),
          "lcgd: a changed eta named: %s", err.msg);
    dpc_rng other;
    dpc_rng_seed(&other, 22);
    dpc_ckpt *co = lcgd_ckpt(b, &other);
    CHECK(dpc_ckpt_match(rd, co, &err) == DPC_E_STATE && !strcmp(err.field, "seed"),
          "lcgd: another seed named: %s", err.msg);
    corrupt_files(g_path, DPC_KAN_LCGD_KIND);
    dpc_ckpt_free(ce), dpc_ckpt_free(co), dpc_ckpt_free(cb2), dpc_ckpt_free(cb);
    dpc_ckpt_free(rd), dpc_ckpt_free(ca);
    dpc_kan_lcgd_free(e), dpc_kan_lcgd_free(b), dpc_kan_lcgd_free(a), dpc_kan_lcgd_free(full);
}

/* _restore refuses malformed state: counters beyond the run, a short iterate, another kind. */
static void test_lcgd_malformed(void)
{
    size_t P = 3;
    dpc_kan_lcgd_config c;
    dpc_kan_lcgd_config_init(&c);
    c.n = 10, c.iterates = 6, c.batch = 2, c.noise_std = 1;
    dpc_rng rng;
    dpc_rng_seed(&rng, 3);
    dpc_error err = {0};
    dpc_kan_lcgd *r = lcgd_make(&c, P, &rng);
    dpc_ckpt *ck = NULL;
    CHECK_OK(dpc_ckpt_new(&ck, DPC_KAN_LCGD_KIND, &rng, &err), &err);
    double cnt[3] = {9, 0, 10}, W[2] = {0, 0}, m[17] = {0};
    CHECK_OK(dpc_ckpt_put(ck, "lcgd.counters", cnt, 3, &err), &err);
    CHECK_OK(dpc_ckpt_put(ck, "lcgd.W", W, 2, &err), &err);
    CHECK_OK(dpc_ckpt_put(ck, "lcgd.metrics", m, 17, &err), &err);
    CHECK(dpc_kan_lcgd_restore(r, ck, &err) == DPC_E_FORMAT && strstr(err.msg, "lcgd.W"),
          "a short iterate refused: %s", err.msg);
    CHECK(dpc_ckpt_put(ck, "lcgd.W", W, 2, &err) == DPC_E_INVALID, "a section twice refused");
    dpc_ckpt_free(ck);
    CHECK_OK(dpc_ckpt_new(&ck, DPC_KAN_LCGD_KIND, &rng, &err), &err);
    double W3[3] = {0, 0, 0};
    CHECK_OK(dpc_ckpt_put(ck, "lcgd.counters", cnt, 3, &err), &err);
    CHECK_OK(dpc_ckpt_put(ck, "lcgd.W", W3, 3, &err), &err);
    CHECK_OK(dpc_ckpt_put(ck, "lcgd.metrics", m, 17, &err), &err);
    CHECK(dpc_kan_lcgd_restore(r, ck, &err) == DPC_E_FORMAT && strstr(err.msg, "counters"),
          "counters beyond the run refused: %s", err.msg);
    CHECK(dpc_kan_lcgd_iterate(r) == 0, "a refused restore leaves the run as it was");
    dpc_ckpt_free(ck);
    CHECK_OK(dpc_ckpt_new(&ck, DPC_SRGD_KIND, &rng, &err), &err);
    CHECK(dpc_kan_lcgd_restore(r, ck, &err) == DPC_E_STATE && !strcmp(err.field, "algorithm"),
          "another kind refused: %s", err.msg);
    CHECK(dpc_kan_lcgd_save(r, ck, &err) == DPC_E_INVALID, "saving into another kind refused");
    dpc_ckpt_free(ck);
    dpc_kan_lcgd_free(r);
}


/* ---- edited noise state, the checksum recomputed (issue 37) -------------------------------- */

static uint64_t fnv(const unsigned char *b, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* Writes to bad the container file at path with value i of section name replaced by v (or, when
 * v is NaN and i is SIZE_MAX, every value zeroed), and the checksum recomputed over the edit: the
 * checksum is not a MAC, only a replay of the noise from the key can tell. */
static void edit_section(const char *path, const char *bad, const char *name, size_t i, double v)
{
    size_t n = 0;
    unsigned char *b = slurp(path, &n);
    char key[DPC_CKPT_NAME_LEN] = {0};
    snprintf(key, sizeof key, "%s", name);
    for (size_t o = 0; b && o + sizeof key + 8 <= n; o++) {
        if (memcmp(b + o, key, sizeof key)) continue;
        uint64_t len;
        memcpy(&len, b + o + sizeof key, 8);
        double *vals = (double *)(void *)(b + o + sizeof key + 8);
        if (i == SIZE_MAX) memset(vals, 0, (size_t)len * 8);
        else if (i < len) memcpy(&vals[i], &v, 8);
        break;
    }
    uint64_t h = fnv(b, n - 8);
    memcpy(b + n - 8, &h, 8);
    spit(bad, b, n);
    free(b);
}

/* Restores the edited file bad into run through restore; the refusal must name noise_state. */
typedef dpc_status (*restore_fn)(void *run, const dpc_ckpt *ck, dpc_error *err);

static int refused_noise(const char *bad, const char *kind, restore_fn restore, void *run,
                         dpc_error *err)
{
    dpc_ckpt *ck = NULL;
    dpc_status st = dpc_ckpt_read(&ck, bad, kind, err);
    if (!st) st = restore(run, ck, err);
    dpc_ckpt_free(ck);
    return st == DPC_E_STATE && !strcmp(err->field, "noise_state") && strstr(err->msg, bad);
}

static dpc_status srgd_restore_fn(void *r, const dpc_ckpt *ck, dpc_error *err)
{
    return dpc_srgd_restore(r, ck, err);
}
static dpc_status linreg_restore_fn(void *r, const dpc_ckpt *ck, dpc_error *err)
{
    return dpc_linreg_restore(r, ck, err);
}

/* ---- DP-AMBSSGD ------------------------------------------------------------------------------ */

static dpc_linreg *linreg_make(const dpc_dataset *ds, double eps, const dpc_rng *rng)
{
    dpc_linreg_opts o;
    dpc_error err = {0};
    dpc_linreg_opts_init(&o, DPC_LINREG_AMBSSGD);
    o.epsilon = eps;
    CHECK_OK(dpc_linreg_prior_from_spectrum(&o.prior, ds->cov_diag, ds->d, &err), &err);
    o.prior.sigma_bound = 0.5;
    o.steps = 20;
    dpc_linreg *lr = NULL;
    CHECK_OK(dpc_linreg_new(&lr, ds, &o, rng, &err), &err);
    return lr;
}

static dpc_ckpt *linreg_ckpt(const dpc_linreg *lr, const dpc_rng *rng)
{
    dpc_ckpt *ck = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_ckpt_new(&ck, dpc_linreg_algo_name(dpc_linreg_plan_get(lr)->algo), rng, &err),
             &err);
    CHECK_OK(dpc_linreg_save(lr, ck, &err), &err);
    return ck;
}

static void linreg_steps(dpc_linreg *lr, size_t k)
{
    dpc_error err = {0};
    for (size_t i = 0; i < k; i++) CHECK_OK(dpc_linreg_step(lr, NULL, &err), &err);
}

static void test_linreg(void)
{
    dpc_rng rng;
    dpc_rng_seed(&rng, 5);
    dpc_dataset *ds = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_data_synth_linreg(&ds, &rng, 0, 4000, 3, 0.0, 0.5, NULL, &err), &err);
    if (!ds) return;
    size_t d = ds->d;
    dpc_linreg *full = linreg_make(ds, 2, &rng), *a = linreg_make(ds, 2, &rng),
               *b = linreg_make(ds, 2, &rng);
    linreg_steps(full, 20);
    linreg_steps(a, 13); /* past the tail start T/2 = 10 */
    dpc_ckpt *ca = linreg_ckpt(a, &rng), *rd = NULL;
    CHECK_OK(dpc_ckpt_write(ca, g_path, &err), &err);
    CHECK_OK(dpc_ckpt_read(&rd, g_path, "dp-ambssgd", &err), &err);
    dpc_ckpt *cb = linreg_ckpt(b, &rng);
    CHECK_OK(dpc_ckpt_match(rd, cb, &err), &err);
    CHECK_OK(dpc_linreg_restore(b, rd, &err), &err);
    dpc_ckpt *cb2 = linreg_ckpt(b, &rng);
    static const char *const names[] = {"linreg.counters", "linreg.w", "linreg.sum",
                                        "linreg.update", "linreg.noise", NULL};
    CHECK(same_sections(ca, cb2, names), "linreg: the restored state is the saved one");
    linreg_steps(b, 7);
    double w1[3], w2[3];
    CHECK_OK(dpc_linreg_average(full, w1, &err), &err);
    CHECK_OK(dpc_linreg_average(b, w2, &err), &err);
    CHECK(memcmp(w1, w2, sizeof w1) == 0 &&
              dpc_params_hash(dpc_linreg_params(full), d) == dpc_params_hash(dpc_linreg_params(b), d),
          "linreg: resumed = uninterrupted, bit for bit");
    {
        dpc_linreg *oa = linreg_make(ds, 2, &rng), *ob = linreg_make(ds, 2, &rng);
        dpc_run ops = dpc_linreg_run_ops(oa);
        CHECK(ops.ops->ledger(ops.self) == &dpc_linreg_plan_get(oa)->ledger &&
                  dpc_linreg_ledger(oa) == ops.ops->ledger(ops.self) &&
                  !strcmp(ops.ops->kind, "dp-ambssgd") && dpc_linreg_steps_total(oa) == 20,
              "linreg ops: kind, the plan's ledger, T");
        dpc_linreg_step_info info;
        ops_resume("linreg ops", ops, dpc_linreg_run_ops(ob), 13, &rng, dpc_linreg_params(full), d,
                   &info);
        CHECK(info.step == 19, "linreg ops: the step record filled (step %zu)", info.step);
        dpc_linreg_free(oa), dpc_linreg_free(ob);
    }
    /* the last step's noise row, edited under a recomputed checksum: refused; the same file
     * unedited restores */
    {
        char bad[96];
        snprintf(bad, sizeof bad, "%s.noise", g_path);
        dpc_linreg *y = linreg_make(ds, 2, &rng);
        const double *nz = dpc_linreg_last_noise(a);
        double edits[4] = {nextafter(nz[1], INFINITY), 0.0, -nz[1], 2 * nz[1]};
        for (int k = 0; k < 4; k++) {
            edit_section(g_path, bad, "linreg.noise", 1, edits[k]);
            CHECK(refused_noise(bad, "dp-ambssgd", linreg_restore_fn, y, &err),
                  "linreg: edited noise row (%d) refused naming noise_state: %s", k, err.msg);
        }
        edit_section(g_path, bad, "linreg.noise", SIZE_MAX, NAN); /* the row zeroed */
        CHECK(refused_noise(bad, "dp-ambssgd", linreg_restore_fn, y, &err),
              "linreg: a zeroed noise row refused: %s", err.msg);
        edit_section(g_path, bad, "linreg.noise", 99, 0.0); /* no such value: the file as saved */
        dpc_ckpt *ok = NULL;
        CHECK_OK(dpc_ckpt_read(&ok, bad, "dp-ambssgd", &err), &err);
        CHECK_OK(dpc_linreg_restore(y, ok, &err), &err);
        dpc_ckpt_free(ok);
        unlink(bad);
        dpc_linreg_free(y);
    }
    dpc_linreg *e = linreg_make(ds, 3, &rng); /* another epsilon */
    dpc_ckpt *ce = linreg_ckpt(e, &rng);
    CHECK(dpc_ckpt_match(rd, ce, &err) == DPC_E_STATE && !strcmp(err.field, "epsilon"),
          "linreg: a changed epsilon named: %s", err.msg);
    dpc_dataset *ds2 = NULL; /* other data of the same shape: its content hash */
    CHECK_OK(dpc_data_synth_linreg(&ds2, &rng, 1, 4000, 3, 0.0, 0.5, NULL, &err), &err);
    dpc_linreg *f = linreg_make(ds2, 2, &rng);
    dpc_ckpt *cf = linreg_ckpt(f, &rng);
    CHECK(dpc_ckpt_match(rd, cf, &err) == DPC_E_STATE && !strcmp(err.field, "data") &&
              strstr(err.msg, "content"),
          "linreg: other data named: %s", err.msg);
    dpc_rng sec;
    CHECK_OK(dpc_rng_seed_os(&sec, &err), &err);
    dpc_ckpt *cs = linreg_ckpt(b, &sec);
    CHECK(dpc_ckpt_match(rd, cs, &err) == DPC_E_STATE && !strcmp(err.field, "rng"),
          "linreg: secure vs seeded named: %s", err.msg);
    corrupt_files(g_path, "dp-ambssgd");
    dpc_ckpt_free(cs), dpc_ckpt_free(cf), dpc_ckpt_free(ce), dpc_ckpt_free(cb2);
    dpc_ckpt_free(cb), dpc_ckpt_free(rd), dpc_ckpt_free(ca);
    dpc_linreg_free(f), dpc_linreg_free(e), dpc_linreg_free(b), dpc_linreg_free(a);
    dpc_linreg_free(full);
    dpc_dataset_free(ds2);
    dpc_dataset_free(ds);
}

/* ---- Accelerated-DP-SRGD --------------------------------------------------------------------- */

typedef struct srgd_fix {
    dpc_srgd_problem *pr;
    dpc_model *m;
} srgd_fix;

static dpc_srgd *srgd_make(const srgd_fix *x, double clip, const dpc_rng *rng)
{
    dpc_srgd_config c;
    dpc_srgd_config_init(&c);
    c.L = 1, c.M = 1, c.R = 2, c.steps = 16, c.batch = 50, c.beta = 0.5, c.clip = clip;
    c.epsilon = 2, c.delta = 1e-6;
    dpc_srgd *s = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_srgd_new(&s, x->m, dpc_srgd_problem_data(x->pr), &c, rng, &err), &err);
    return s;
}

static dpc_ckpt *srgd_ckpt(const dpc_srgd *s, const dpc_rng *rng)
{
    dpc_ckpt *ck = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_ckpt_new(&ck, DPC_SRGD_KIND, rng, &err), &err);
    CHECK_OK(dpc_srgd_save(s, ck, &err), &err);
    return ck;
}

static void srgd_steps(dpc_srgd *s, size_t k)
{
    dpc_error err = {0};
    for (size_t i = 0; i < k; i++) CHECK_OK(dpc_srgd_step(s, NULL, &err), &err);
}

static void test_srgd(void)
{
    dpc_error err = {0};
    dpc_srgd_problem_config pc;
    dpc_srgd_problem_config_init(&pc);
    pc.kind = DPC_SRGD_P1_LOGISTIC, pc.n = 800, pc.p = 4, pc.w_norm = 1;
    dpc_rng rng;
    dpc_rng_seed(&rng, 8);
    srgd_fix x = {NULL, NULL};
    CHECK_OK(dpc_srgd_problem_new(&x.pr, &pc, &rng, 0, &err), &err);
    dpc_model_config mc;
    CHECK_OK(dpc_model_parse(&mc, "logistic:nobias", 4, 2, &err), &err);
    CHECK_OK(dpc_model_new(&x.m, &mc, &err), &err);
    if (!x.pr || !x.m) return;
    size_t P = dpc_model_num_params(x.m);
    dpc_srgd *full = srgd_make(&x, 1, &rng), *a = srgd_make(&x, 1, &rng), *b = srgd_make(&x, 1, &rng);
    srgd_steps(full, 16);
    srgd_steps(a, 7); /* mid-tree: partial sums pending */
    dpc_ckpt *ca = srgd_ckpt(a, &rng), *rd = NULL;
    size_t ns = 0;
    dpc_ckpt_section(ca, "srgd.noise", &ns);
    CHECK(ns == 0, "the tree's nodes regenerate from the RNG: no state stored (%zu values)", ns);
    CHECK_OK(dpc_ckpt_write(ca, g_path, &err), &err);
    CHECK_OK(dpc_ckpt_read(&rd, g_path, DPC_SRGD_KIND, &err), &err);
    dpc_ckpt *cb = srgd_ckpt(b, &rng);
    CHECK_OK(dpc_ckpt_match(rd, cb, &err), &err);
    CHECK_OK(dpc_srgd_restore(b, rd, &err), &err);
    dpc_ckpt *cb2 = srgd_ckpt(b, &rng);
    static const char *const names[] = {"srgd.counters", "srgd.state", "srgd.noise", NULL};
    CHECK(same_sections(ca, cb2, names), "srgd: the restored state is the saved one");
    srgd_steps(b, 9);
    CHECK(dpc_params_hash(dpc_srgd_output(full), P) == dpc_params_hash(dpc_srgd_output(b), P) &&
              dpc_params_hash(dpc_srgd_z(full), P) == dpc_params_hash(dpc_srgd_z(b), P),
          "srgd: resumed = uninterrupted, bit for bit");
    {
        dpc_srgd *oa = srgd_make(&x, 1, &rng), *ob = srgd_make(&x, 1, &rng);
        dpc_run ops = dpc_srgd_run_ops(oa);
        CHECK(ops.ops->ledger(ops.self) == dpc_srgd_ledger(oa) &&
                  !strcmp(ops.ops->kind, DPC_SRGD_KIND) && dpc_srgd_steps_total(oa) == 16,
              "srgd ops: kind, ledger, T");
        dpc_srgd_step_info info;
        ops_resume("srgd ops", ops, dpc_srgd_run_ops(ob), 7, &rng, dpc_srgd_output(full), P, &info);
        CHECK(info.step == 15, "srgd ops: the step record filled (step %zu)", info.step);
        dpc_srgd_free(oa), dpc_srgd_free(ob);
    }
    {
        char bad[96];
        snprintf(bad, sizeof bad, "%s.noise", g_path);
        dpc_srgd *y = srgd_make(&x, 1, &rng);
        const char *slab[3] = {"noise_cum", "S_hat", "xi"};
        for (int k = 0; k < 6; k++) { /* slabs 5, 6, 7 of srgd.state: a value nudged or zeroed */
            size_t i = (size_t)(5 + k % 3) * P + 1;
            size_t nsv = 0;
            const double *sv = dpc_ckpt_section(ca, "srgd.state", &nsv);
            double v = k < 3 ? nextafter(sv[i], INFINITY) : 0.0;
            edit_section(g_path, bad, "srgd.state", i, v);
            CHECK(refused_noise(bad, DPC_SRGD_KIND, srgd_restore_fn, y, &err) &&
                      strstr(err.msg, slab[k % 3]),
                  "srgd: edited %s refused naming noise_state: %s", slab[k % 3], err.msg);
        }
        edit_section(g_path, bad, "srgd.state", SIZE_MAX - 1, 0.0); /* unedited */
        dpc_ckpt *ok = NULL;
        CHECK_OK(dpc_ckpt_read(&ok, bad, DPC_SRGD_KIND, &err), &err);
        CHECK_OK(dpc_srgd_restore(y, ok, &err), &err);
        srgd_steps(y, 9);
        CHECK(dpc_params_hash(dpc_srgd_output(full), P) == dpc_params_hash(dpc_srgd_output(y), P),
              "srgd: after the verifying replay, resumed = uninterrupted, bit for bit");
        dpc_ckpt_free(ok);
        unlink(bad);
        dpc_srgd_free(y);
    }
    dpc_srgd *e = srgd_make(&x, 0.5, &rng);
    dpc_ckpt *ce = srgd_ckpt(e, &rng);
    CHECK(dpc_ckpt_match(rd, ce, &err) == DPC_E_STATE && !strcmp(err.field, "clip"),
          "srgd: a changed clip named: %s", err.msg);
    /* a DP-FTRL trainer's file is another kind */
    corrupt_files(g_path, DPC_SRGD_KIND);
    dpc_ckpt_free(ce), dpc_ckpt_free(cb2), dpc_ckpt_free(cb), dpc_ckpt_free(rd), dpc_ckpt_free(ca);
    dpc_srgd_free(e), dpc_srgd_free(b), dpc_srgd_free(a), dpc_srgd_free(full);
    dpc_model_free(x.m);
    dpc_srgd_problem_free(x.pr);
}

/* A DP-FTRL trainer's checkpoint read as a container: another kind, named "algorithm". */
static void test_dpftrl_file(void)
{
    dpc_rng rng;
    dpc_rng_seed(&rng, 1);
    dpc_dataset *ds = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_data_load_spec(&ds, NULL, "synthetic:logistic,n=200,d=3", &rng, &err), &err);
    dpc_model_config mc;
    dpc_model *m = NULL;
    CHECK_OK(dpc_model_parse(&mc, "logistic", 3, 2, &err), &err);
    CHECK_OK(dpc_model_new(&m, &mc, &err), &err);
    dpc_train_config c;
    dpc_train_config_init(&c);
    c.noise_multiplier = 1;
    c.batch = 20;
    dpc_trainer *tr = NULL;
    CHECK_OK(dpc_trainer_new(&tr, m, ds, NULL, &c, &rng, &err), &err);
    if (!tr) return;
    CHECK_OK(dpc_trainer_save(tr, g_path, &err), &err);
    dpc_ckpt *ck = NULL;
    CHECK(dpc_ckpt_read(&ck, g_path, DPC_SRGD_KIND, &err) == DPC_E_STATE &&
              !strcmp(err.field, "algorithm") && strstr(err.msg, "dp-ftrl"),
          "a DP-FTRL file is another kind: %s", err.msg);
    dpc_rng back;
    CHECK_OK(dpc_checkpoint_read_rng(g_path, &back, &err), &err);
    CHECK(back.seed == 1 && back.mode == DPC_RNG_SEEDED, "its generator reads back");
    /* the trainer through the ops table: its own file */
    dpc_trainer *full = NULL, *a = NULL, *b = NULL;
    CHECK_OK(dpc_trainer_new(&full, m, ds, NULL, &c, &rng, &err), &err);
    CHECK_OK(dpc_trainer_new(&a, m, ds, NULL, &c, &rng, &err), &err);
    CHECK_OK(dpc_trainer_new(&b, m, ds, NULL, &c, &rng, &err), &err);
    if (full && a && b) {
        while (dpc_trainer_steps_done(full) < dpc_trainer_steps_total(full))
            CHECK_OK(dpc_trainer_step(full, NULL, &err), &err);
        dpc_run ops = dpc_trainer_run_ops(a);
        CHECK(ops.ops->own_file && !strcmp(ops.ops->kind, "dp-ftrl") &&
                  ops.ops->ledger(ops.self) == dpc_trainer_ledger(a),
              "dp-ftrl ops: its own file, kind, ledger");
        dpc_step_info info;
        ops_resume("dp-ftrl ops", ops, dpc_trainer_run_ops(b), 4, &rng, dpc_trainer_params(full),
                   dpc_model_num_params(m), &info);
    }
    dpc_trainer_free(full), dpc_trainer_free(a), dpc_trainer_free(b);
    dpc_trainer_free(tr);
    dpc_model_free(m);
    dpc_dataset_free(ds);
}

int main(void)
{
    snprintf(g_path, sizeof g_path, "/tmp/dpcorr_pck_%ld", (long)getpid());
    test_lcgd(DPC_NOISE_REPLAY);
    test_lcgd(DPC_NOISE_BUFFER);
    test_lcgd_malformed();
    test_linreg();
    test_srgd();
    test_dpftrl_file();
    unlink(g_path);
    return TEST_SUMMARY();
}
