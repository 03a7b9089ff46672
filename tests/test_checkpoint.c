/* test_checkpoint.c — checkpoint hardening (issue 19, class 7 and 5): the refusal of a resume
 * names the option or input that changed (an optimizer option, the training data's content, the
 * seed); a corrupt file, bytes after the checksum and a future version are refused as such; the
 * history records travel in the checkpoint; temporaries of dead processes are removed; a version-2
 * file (the previous format, rebuilt here from a version-3 one) still resumes bit for bit; a
 * checkpoint of a Poisson kind written before sampler scheme 2 is refused as such; sections of
 * records by a field table (dpc_ckpt_put_records / _get_records) through a file and back. */
#include "dpcorr/train.h"
#include "harness.h"
#include "train/train_internal.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static dpc_dataset *data(uint64_t seed)
{
    dpc_rng rng;
    dpc_rng_seed(&rng, seed);
    dpc_dataset *ds = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_data_synth_logistic(&ds, &rng, 0, 200, 5, 0.1, 0.0, NULL, &err), &err);
    return ds;
}

static dpc_model *model(void)
{
    dpc_model_config mc;
    dpc_model *m = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_model_parse(&mc, "mlp:6", 5, 2, &err), &err);
    CHECK_OK(dpc_model_new(&m, &mc, &err), &err);
    return m;
}

static void config(dpc_train_config *c)
{
    dpc_train_config_init(c);
    c->mech.kind = DPC_MECH_NU;
    c->mech.nu = 0.05;
    c->sampler = DPC_SAMPLER_FIXED;
    c->batch = 20;
    c->epochs = 2;
    c->epsilon = 4.0;
    c->delta = 1e-5;
    c->clip = 0.5;
    c->lr = 0.5;
    c->momentum = 0.9;
    c->accountant = DPC_ACCOUNTANT_RDP;
}

static dpc_trainer *make(const dpc_model *m, const dpc_dataset *ds, const dpc_train_config *c,
                         uint64_t seed)
{
    dpc_rng rng;
    dpc_rng_seed(&rng, seed);
    dpc_trainer *tr = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_trainer_new(&tr, m, ds, NULL, c, &rng, &err), &err);
    return tr;
}

static void steps(dpc_trainer *tr, size_t n)
{
    dpc_error err = {0};
    for (size_t t = 0; t < n; t++) CHECK_OK(dpc_trainer_step(tr, NULL, &err), &err);
}

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)sz);
    *n = fread(b, 1, (size_t)sz, f);
    fclose(f);
    return b;
}

static void spit(const char *path, const unsigned char *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    fwrite(b, 1, n, f);
    fclose(f);
}

static uint64_t fnv(const unsigned char *b, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

static void test_named_refusals(const char *path)
{
    dpc_dataset *ds = data(1);
    dpc_model *m = model();
    dpc_train_config c;
    config(&c);
    dpc_error err = {0};
    dpc_trainer *a = make(m, ds, &c, 7);
    steps(a, 5);
    CHECK_OK(dpc_trainer_save(a, path, &err), &err);
    /* the learning rate */
    c.lr = 0.25;
    dpc_trainer *b = make(m, ds, &c, 7);
    CHECK(dpc_trainer_resume(b, path, &err) == DPC_E_STATE && !strcmp(err.field, "lr") &&
              strstr(err.msg, "has 0.5, this run has 0.25"),
          "lr change named: %s", err.msg);
    dpc_trainer_free(b);
    c.lr = 0.5;
    /* the data content, same source and shape */
    dpc_dataset *ds2 = data(1);
    ds2->x[17] += 1e-9;
    b = make(m, ds2, &c, 7);
    CHECK(dpc_trainer_resume(b, path, &err) == DPC_E_STATE && !strcmp(err.field, "data") &&
              strstr(err.msg, "training data content changed"),
          "data content change named: %s", err.msg);
    dpc_trainer_free(b);
    dpc_dataset_free(ds2);
    /* the mechanism */
    c.mech.nu = 0.1;
    b = make(m, ds, &c, 7);
    CHECK(dpc_trainer_resume(b, path, &err) == DPC_E_STATE && !strcmp(err.field, "mech.nu"),
          "nu change named: %s", err.msg);
    dpc_trainer_free(b);
    c.mech.nu = 0.05;
    /* the same run resumes; a test set (not part of the run's values) may differ */
    dpc_rng rng;
    dpc_rng_seed(&rng, 7);
    dpc_dataset *test = data(3);
    CHECK_OK(dpc_trainer_new(&b, m, ds, test, &c, &rng, &err), &err);
    CHECK_OK(dpc_trainer_resume(b, path, &err), &err);
    dpc_trainer_free(b);
    dpc_dataset_free(test);
    dpc_trainer_free(a);
    dpc_model_free(m);
    dpc_dataset_free(ds);
}

static void test_corrupt_files(const char *path)
{
    dpc_dataset *ds = data(1);
    dpc_model *m = model();
    dpc_train_config c;
    config(&c);
    dpc_error err = {0};
    dpc_trainer *a = make(m, ds, &c, 7);
    steps(a, 4);
    CHECK_OK(dpc_trainer_save(a, path, &err), &err);
    size_t n = 0;
    unsigned char *b = slurp(path, &n);
    char bad[512];
    snprintf(bad, sizeof bad, "%s.bad", path);
    /* one byte appended; one flipped anywhere (header, items, body); truncated */
    unsigned char *c2 = malloc(n + 1);
    memcpy(c2, b, n);
    c2[n] = 0;
    spit(bad, c2, n + 1);
    dpc_trainer *y = make(m, ds, &c, 7);
    CHECK(dpc_trainer_resume(y, bad, &err) == DPC_E_FORMAT && strstr(err.msg, "checksum"),
          "a byte after the checksum refused: %s", err.msg);
    size_t offs[4] = {20, 100, n / 2, n - 9};
    for (int i = 0; i < 4; i++) {
        memcpy(c2, b, n);
        c2[offs[i]] ^= 0x40;
        spit(bad, c2, n);
        CHECK(dpc_trainer_resume(y, bad, &err) == DPC_E_FORMAT && strstr(err.msg, "corrupt"),
              "byte %zu flipped: refused as corrupt: %s", offs[i], err.msg);
    }
    spit(bad, b, n - 3);
    CHECK(dpc_trainer_resume(y, bad, &err) == DPC_E_FORMAT, "truncated: %s", err.msg);
    /* bytes appended with a valid checksum over them: the structure ends early */
    memcpy(c2, b, n - 8);
    c2[n - 8] = 0x11;
    uint64_t h = fnv(c2, n - 7);
    unsigned char *c3 = malloc(n + 1);
    memcpy(c3, c2, n - 7);
    memcpy(c3 + n - 7, &h, 8);
    spit(bad, c3, n + 1);
    CHECK(dpc_trainer_resume(y, bad, &err) == DPC_E_FORMAT,
          "appended bytes under a recomputed checksum refused: %s", err.msg);
    /* a future version, with a valid checksum */
    memcpy(c2, b, n);
    uint32_t v = 99;
    memcpy(c2 + 8, &v, 4);
    h = fnv(c2, n - 8);
    memcpy(c2 + n - 8, &h, 8);
    spit(bad, c2, n);
    CHECK(dpc_trainer_resume(y, bad, &err) == DPC_E_FORMAT && strstr(err.msg, "version 99"),
          "version 99 refused clearly: %s", err.msg);
    /* no noise state (DP-SGD) and a file cut inside the parameters, under a valid checksum:
     * the empty noise section after the failed read (a fuzz finding: memset of NULL) */
    c.mech.kind = DPC_MECH_IDENTITY;
    dpc_trainer *g = make(m, ds, &c, 7), *g2 = make(m, ds, &c, 7);
    CHECK_OK(dpc_trainer_save(g, path, &err), &err);
    free(b);
    b = slurp(path, &n);
    size_t cut = n - 8 - 8 - 40; /* inside the momentum: the noise section is never reached */
    h = fnv(b, cut);
    memcpy(b + cut, &h, 8);
    spit(bad, b, cut + 8);
    CHECK(dpc_trainer_resume(g2, bad, &err) == DPC_E_FORMAT && strstr(err.msg, "truncated"),
          "cut inside the momentum: %s", err.msg);
    dpc_trainer_free(g);
    dpc_trainer_free(g2);
    unlink(bad);
    free(b);
    free(c2);
    free(c3);
    dpc_trainer_free(y);
    dpc_trainer_free(a);
    dpc_model_free(m);
    dpc_dataset_free(ds);
}

/* History records survive a save and resume; the resumed trainer appends after them. */
static void test_records(const char *path)
{
    dpc_dataset *ds = data(1);
    dpc_model *m = model();
    dpc_train_config c;
    config(&c);
    dpc_error err = {0};
    dpc_trainer *a = make(m, ds, &c, 7);
    steps(a, 10);
    dpc_train_record r1 = {10, 1, 0.6, 0.5, 0.75, 1.5, 0.25};
    CHECK_OK(dpc_trainer_record(a, &r1, &err), &err);
    CHECK(dpc_trainer_record(a, &r1, &err) == DPC_E_INVALID && !strcmp(err.field, "step"),
          "a record at the same step refused: %s", err.msg);
    dpc_train_record late = {11, 1, 0, 0, 0, 0, 0};
    CHECK(dpc_trainer_record(a, &late, &err) == DPC_E_INVALID, "a record beyond the steps done");
    CHECK_OK(dpc_trainer_save(a, path, &err), &err);
    dpc_trainer *b = make(m, ds, &c, 7);
    CHECK_OK(dpc_trainer_resume(b, path, &err), &err);
    size_t nr = 0;
    const dpc_train_record *r = dpc_trainer_records(b, &nr);
    CHECK(nr == 1 && r[0].step == 10 && r[0].epoch == 1 && r[0].train_loss == 0.6 &&
              r[0].test_accuracy == 0.75 && r[0].epsilon == 1.5 && r[0].time_s == 0.25,
          "the record travels in the checkpoint (%zu records)", nr);
    steps(b, 10);
    dpc_train_record r2 = {20, 2, 0.4, NAN, NAN, 4.0, 0.5};
    CHECK_OK(dpc_trainer_record(b, &r2, &err), &err);
    r = dpc_trainer_records(b, &nr);
    CHECK(nr == 2 && r[1].step == 20 && isnan(r[1].test_loss), "appended after the resume");
    dpc_trainer_free(b);
    dpc_trainer_free(a);
    dpc_model_free(m);
    dpc_dataset_free(ds);
}

/* "<path>.tmp.<pid>" of a process that has exited is removed by the next save; a live one's is
 * kept. */
static void test_stale_tmp(const char *path)
{
    pid_t child = fork();
    if (child == 0) _exit(0);
    waitpid(child, NULL, 0);
    char dead[512], live[512];
    snprintf(dead, sizeof dead, "%s.tmp.%ld", path, (long)child);
    snprintf(live, sizeof live, "%s.tmp.%ld", path, (long)getppid());
    spit(dead, (const unsigned char *)"key", 3);
    spit(live, (const unsigned char *)"key", 3);
    dpc_dataset *ds = data(1);
    dpc_model *m = model();
    dpc_train_config c;
    config(&c);
    dpc_error err = {0};
    dpc_trainer *a = make(m, ds, &c, 7);
    CHECK_OK(dpc_trainer_save(a, path, &err), &err);
    CHECK(access(dead, F_OK) != 0, "the dead process's temporary was removed");
    CHECK(access(live, F_OK) == 0, "a live process's temporary is kept");
    unlink(live);
    dpc_trainer_free(a);
    dpc_model_free(m);
    dpc_dataset_free(ds);
}

/* Version 2 = version 3 without the items and records, with the version-2 fingerprint: rebuilt
 * from a version-3 file, it resumes and finishes bit-identically to an uninterrupted run. */
static void test_version2(const char *path)
{
    dpc_dataset *ds = data(1);
    dpc_model *m = model();
    dpc_train_config c;
    config(&c);
    dpc_error err = {0};
    dpc_trainer *full = make(m, ds, &c, 7), *a = make(m, ds, &c, 7);
    steps(full, dpc_trainer_steps_total(full));
    uint64_t want = dpc_trainer_params_hash(full);
    steps(a, 7);
    CHECK_OK(dpc_trainer_save(a, path, &err), &err);
    size_t n = 0;
    unsigned char *b = slurp(path, &n);
    size_t head = 8 + 4 + 4 + 8 + 8 + 8 + 8 + 8 + 4 + 32; /* through the secure key */
    uint32_t ni;
    memcpy(&ni, b + head, 4);
    size_t items = 4 + (size_t)ni * CK_ITEM_BYTES, recs = 8; /* no records were made */
    size_t body = n - 8 - head - items - recs;
    unsigned char *v2 = malloc(n);
    memcpy(v2, b, head);
    uint32_t ver = 2;
    memcpy(v2 + 8, &ver, 4);
    uint64_t fp = dpc__train_fingerprint_v2(a);
    memcpy(v2 + 16, &fp, 8);
    memcpy(v2 + head, b + head + items, body);
    uint64_t h = fnv(v2, head + body);
    memcpy(v2 + head + body, &h, 8);
    spit(path, v2, head + body + 8);
    dpc_trainer *y = make(m, ds, &c, 7);
    CHECK_OK(dpc_trainer_resume(y, path, &err), &err);
    steps(y, dpc_trainer_steps_total(y) - dpc_trainer_steps_done(y));
    CHECK(dpc_trainer_params_hash(y) == want, "a version-2 checkpoint resumes bit for bit");
    c.lr = 0.25; /* another run: refused, without details */
    dpc_trainer *z = make(m, ds, &c, 7);
    CHECK(dpc_trainer_resume(z, path, &err) == DPC_E_STATE && strstr(err.msg, "version-2"),
          "version 2 of another run refused: %s", err.msg);
    free(b);
    free(v2);
    dpc_trainer_free(z);
    dpc_trainer_free(y);
    dpc_trainer_free(a);
    dpc_trainer_free(full);
    dpc_model_free(m);
    dpc_dataset_free(ds);
}

/* The Poisson kinds' batches changed with sampler scheme 2 (dpcorr/sampler.h): a checkpoint
 * written before (no "sampler scheme" item, or a version-2 file) or by another scheme is refused
 * naming "sampler" and both schemes, never resumed with other batches; a scheme-2 file resumes
 * bit for bit; the other kinds record no scheme (their batches did not change). */
static void test_sampler_scheme(const char *path)
{
    dpc_dataset *ds = data(1);
    dpc_model *m = model();
    dpc_train_config c;
    config(&c);
    dpc_error err = {0};
    const dpc_sampler_kind kinds[] = {DPC_SAMPLER_POISSON, DPC_SAMPLER_CYCLIC_POISSON};
    for (int k = 0; k < 2; k++) {
        c.sampler = kinds[k];
        c.groups = k ? 2 : 0;
        dpc_trainer *full = make(m, ds, &c, 7), *a = make(m, ds, &c, 7);
        steps(full, dpc_trainer_steps_total(full));
        steps(a, 5);
        CHECK_OK(dpc_trainer_save(a, path, &err), &err);
        size_t n = 0;
        unsigned char *b = slurp(path, &n);
        dpc_trainer *y = make(m, ds, &c, 7);
        CHECK_OK(dpc_trainer_resume(y, path, &err), &err);
        steps(y, dpc_trainer_steps_total(y) - dpc_trainer_steps_done(y));
        CHECK(dpc_trainer_params_hash(y) == dpc_trainer_params_hash(full),
              "%s: a scheme-2 checkpoint resumes bit for bit", dpc_sampler_kind_name(c.sampler));
        /* the file without its scheme item, as scheme 1 wrote it */
        size_t head = 8 + 4 + 4 + 8 + 8 + 8 + 8 + 8 + 4 + 32, at = 0;
        uint32_t ni;
        memcpy(&ni, b + head, 4);
        ck_item it[CK_MAX_ITEMS], kept[CK_MAX_ITEMS];
        size_t nk = 0;
        for (uint32_t i = 0; i < ni && i < CK_MAX_ITEMS; i++) {
            dpc__ck_item_unpack(b + head + 4 + (size_t)i * CK_ITEM_BYTES, &it[i]);
            if (!strcmp(it[i].what, "sampler scheme")) at = i + 1;
            else kept[nk++] = it[i];
        }
        CHECK(at && it[at - 1].count == DPC_SAMPLER_SCHEME, "%s records scheme %d",
              dpc_sampler_kind_name(c.sampler), DPC_SAMPLER_SCHEME);
        if (!at) {
            free(b);
            dpc_trainer_free(full);
            dpc_trainer_free(a);
            dpc_trainer_free(y);
            continue;
        }
        size_t item_at = head + 4 + (at - 1) * CK_ITEM_BYTES;
        unsigned char *old = malloc(n);
        memcpy(old, b, item_at);
        memcpy(old + item_at, b + item_at + CK_ITEM_BYTES, n - item_at - CK_ITEM_BYTES);
        uint32_t ni1 = ni - 1;
        memcpy(old + head, &ni1, 4);
        uint64_t fp = dpc__train_items_hash(kept, nk), h;
        memcpy(old + 16, &fp, 8);
        size_t n1 = n - CK_ITEM_BYTES;
        h = fnv(old, n1 - 8);
        memcpy(old + n1 - 8, &h, 8);
        spit(path, old, n1);
        dpc_trainer *z = make(m, ds, &c, 7);
        CHECK(dpc_trainer_resume(z, path, &err) == DPC_E_STATE && !strcmp(err.field, "sampler") &&
                  strstr(err.msg, "sampler scheme 1 (per-example draws") &&
                  strstr(err.msg, "by scheme 2") && strstr(err.msg, "resume is not possible"),
              "%s: a scheme-1 checkpoint refused: %s", dpc_sampler_kind_name(c.sampler), err.msg);
        CHECK(dpc_trainer_steps_done(z) == 0, "nothing resumed");
        dpc_trainer_free(z);
        /* another scheme number */
        uint64_t three = 3;
        memcpy(b + item_at + CK_FIELD_LEN + CK_WHAT_LEN + 4, &three, 8);
        h = fnv(b, n - 8);
        memcpy(b + n - 8, &h, 8);
        spit(path, b, n);
        z = make(m, ds, &c, 7);
        CHECK(dpc_trainer_resume(z, path, &err) == DPC_E_STATE &&
                  strstr(err.msg, "sampler scheme 3;"),
              "%s: a scheme-3 checkpoint refused: %s", dpc_sampler_kind_name(c.sampler), err.msg);
        dpc_trainer_free(z);
        /* a version-2 file of this run (it predates the schemes) */
        size_t items = 4 + (size_t)ni * CK_ITEM_BYTES, body = n - 8 - head - items - 8;
        uint32_t ver = 2;
        memcpy(old, b, head);
        memcpy(old + 8, &ver, 4);
        fp = dpc__train_fingerprint_v2(a);
        memcpy(old + 16, &fp, 8);
        memcpy(old + head, b + head + items, body);
        h = fnv(old, head + body);
        memcpy(old + head + body, &h, 8);
        spit(path, old, head + body + 8);
        z = make(m, ds, &c, 7);
        CHECK(dpc_trainer_resume(z, path, &err) == DPC_E_STATE &&
                  strstr(err.msg, "sampler scheme 1 (per-example draws"),
              "%s: a version-2 checkpoint refused: %s", dpc_sampler_kind_name(c.sampler), err.msg);
        dpc_trainer_free(z);
        free(old);
        free(b);
        dpc_trainer_free(full);
        dpc_trainer_free(a);
        dpc_trainer_free(y);
    }
    /* fixed-order batches did not change: no scheme recorded */
    config(&c);
    dpc_trainer *f = make(m, ds, &c, 7);
    ck_item it[CK_MAX_ITEMS];
    size_t ni = dpc__train_items(f, it), found = 0;
    for (size_t i = 0; i < ni; i++) found += !strcmp(it[i].what, "sampler scheme");
    CHECK(found == 0, "a fixed-order run records no sampler scheme");
    dpc_trainer_free(f);
    dpc_model_free(m);
    dpc_dataset_free(ds);
}

/* The atomic write never replaces a non-regular file (issue 28): a FIFO, a symlink to a
 * character device or a directory is refused naming the path and left as it was. */
static void test_not_regular(const char *path)
{
    dpc_dataset *ds = data(1);
    dpc_model *m = model();
    dpc_train_config c;
    config(&c);
    dpc_trainer *a = make(m, ds, &c, 7);
    steps(a, 2);
    char fifo[300], link[300], dir[300];
    snprintf(fifo, sizeof fifo, "%s.fifo", path);
    snprintf(link, sizeof link, "%s.devlink", path);
    snprintf(dir, sizeof dir, "%s.dir", path);
    unlink(fifo);
    unlink(link);
    rmdir(dir);
    CHECK(mkfifo(fifo, 0600) == 0 && symlink("/dev/null", link) == 0 && mkdir(dir, 0700) == 0,
          "fifo, link and directory made");
    const char *bad[] = {fifo, link, dir};
    for (int i = 0; i < 3; i++) {
        dpc_error e = {0};
        struct stat sb;
        CHECK(dpc_trainer_save(a, bad[i], &e) == DPC_E_IO && !strcmp(e.field, "path") &&
                  strstr(e.msg, "not a regular file"),
              "%s refused: %s", bad[i], e.msg);
        CHECK(stat(bad[i], &sb) == 0 && !S_ISREG(sb.st_mode), "%s left as it was", bad[i]);
    }
    struct stat ln;
    CHECK(lstat(link, &ln) == 0 && S_ISLNK(ln.st_mode), "the link is still a link");
    unlink(fifo);
    unlink(link);
    rmdir(dir);
    dpc_trainer_free(a);
    dpc_model_free(m);
    dpc_dataset_free(ds);
}

/* The noise state is a function of the key and the step (issue 37): a checkpoint whose BLT or
 * BSR buffers were edited, with the checksum recomputed (it is not a MAC), is refused naming
 * "noise_state" (10 edits each: one ulp, a sign, zero, NaN, a swap, a scale, another run's
 * state, a rewound step); the unedited file resumes bit for bit; a secure-mode checkpoint read
 * by a seeded run (and another seed) is refused naming the generator. */
static void edit_noise(const char *path, const char *bad, dpc_mech_kind kind)
{
    dpc_dataset *ds = data(1);
    dpc_model *m = model();
    dpc_train_config c;
    config(&c);
    c.mech.kind = kind;
    if (kind == DPC_MECH_BSR) c.mech.bands = 4;
    dpc_error err = {0};
    dpc_trainer *full = make(m, ds, &c, 7), *a = make(m, ds, &c, 7), *o = make(m, ds, &c, 7);
    steps(full, dpc_trainer_steps_total(full));
    uint64_t want = dpc_trainer_params_hash(full);
    steps(a, 6);
    steps(o, 5);
    CHECK_OK(dpc_trainer_save(o, path, &err), &err); /* the state of step 5 */
    size_t n5 = 0;
    unsigned char *b5 = slurp(path, &n5);
    CHECK_OK(dpc_trainer_save(a, path, &err), &err);
    size_t n = 0;
    unsigned char *b = slurp(path, &n), *e = malloc(n);
    size_t head = 8 + 4 + 4 + 8 + 8 + 8 + 8 + 8 + 4 + 32, P = a->P;
    uint32_t ni;
    memcpy(&ni, b + head, 4);
    size_t at_L = head + 4 + (size_t)ni * CK_ITEM_BYTES + 2 * P * 8, off = at_L + 8;
    uint64_t L;
    memcpy(&L, b + at_L, 8);
    CHECK(L >= P && n5 == n, "%s: a noise state of %llu values is stored",
          dpc_mech_kind_name(kind), (unsigned long long)L);
    const char *what[10] = {"one ulp", "sign", "zero", "NaN", "swap", "x2", "last value",
                            "step 5's state", "step rewound to 5", "step 5 and its state"};
    int refused = 0;
    for (int k = 0; k < 10 && L >= P; k++) {
        memcpy(e, b, n);
        double *ns = (double *)(void *)(e + off), v;
        size_t i = (size_t)k * 3 % L;
        memcpy(&v, &ns[i], 8);
        switch (k) {
        case 0: v = nextafter(v, INFINITY); break;
        case 1: v = -v; break;
        case 2: v = 0.0; break;
        case 3: v = NAN; break;
        case 4: memcpy(&v, &ns[i + 1], 8), memcpy(&ns[i + 1], &ns[i], 8); break;
        case 5: v *= 2; break;
        case 6: memcpy(&v, &ns[L - 1], 8), v += 1e-3; break;
        default: break;
        }
        if (k < 7) memcpy(&ns[i], &v, 8);
        if (k == 7 || k == 9) memcpy(e + off, b5 + off, L * 8);
        if (k >= 8) {
            uint64_t five = 5;
            memcpy(e + 8 + 4 + 4 + 8, &five, 8);
        }
        uint64_t h = fnv(e, n - 8);
        memcpy(e + n - 8, &h, 8);
        spit(bad, e, n);
        dpc_trainer *y = make(m, ds, &c, 7);
        dpc_status st = dpc_trainer_resume(y, bad, &err);
        int ok = k == 9 ? 1 : st == DPC_E_STATE && !strcmp(err.field, "noise_state") &&
                                  strstr(err.msg, "replay") && strstr(err.msg, bad);
        if (k == 9) { /* a consistent rewind: the step's own state: allowed, and step 5 runs */
            ok = st == DPC_OK && dpc_trainer_steps_done(y) == 5;
        }
        refused += ok && k < 9;
        CHECK(ok, "%s: edited noise state (%s), checksum recomputed: %s",
              dpc_mech_kind_name(kind), what[k], st ? err.msg : "accepted");
        dpc_trainer_free(y);
    }
    CHECK(refused == 9, "%s: 9 of 9 edits refused", dpc_mech_kind_name(kind));
    dpc_trainer *r = make(m, ds, &c, 7);
    CHECK_OK(dpc_trainer_resume(r, path, &err), &err);
    steps(r, dpc_trainer_steps_total(r) - 6);
    CHECK(dpc_trainer_params_hash(r) == want, "%s: the unedited checkpoint resumes bit for bit",
          dpc_mech_kind_name(kind));
    dpc_trainer_free(r);
    free(e), free(b), free(b5);
    dpc_trainer_free(o), dpc_trainer_free(a), dpc_trainer_free(full);
    dpc_model_free(m);
    dpc_dataset_free(ds);
}

static void test_noise_state(const char *path)
{
    char bad[512];
    snprintf(bad, sizeof bad, "%s.noise", path);
    edit_noise(path, bad, DPC_MECH_BLT);
    edit_noise(path, bad, DPC_MECH_BSR);
    unlink(bad);
    /* the generator's mode and key agree with the run's (the ledger's rng_mode and seed) */
    dpc_dataset *ds = data(1);
    dpc_model *m = model();
    dpc_train_config c;
    config(&c);
    c.mech.kind = DPC_MECH_BLT;
    dpc_error err = {0};
    dpc_rng sec;
    CHECK_OK(dpc_rng_seed_os(&sec, &err), &err);
    dpc_trainer *a = NULL;
    CHECK_OK(dpc_trainer_new(&a, m, ds, NULL, &c, &sec, &err), &err);
    steps(a, 3);
    CHECK_OK(dpc_trainer_save(a, path, &err), &err);
    dpc_trainer *y = make(m, ds, &c, 7);
    CHECK(dpc_trainer_resume(y, path, &err) == DPC_E_STATE && !strcmp(err.field, "rng"),
          "a secure checkpoint into a seeded run: refused naming rng: %s", err.msg);
    dpc_rng back;
    CHECK_OK(dpc_checkpoint_read_rng(path, &back, &err), &err);
    dpc_trainer *z = NULL;
    CHECK_OK(dpc_trainer_new(&z, m, ds, NULL, &c, &back, &err), &err);
    CHECK_OK(dpc_trainer_resume(z, path, &err), &err);
    CHECK(dpc_trainer_ledger(z)->rng_mode == DPC_RNG_SECURE && dpc_trainer_steps_done(z) == 3,
          "the secure run resumes with its stored key (ledger: secure)");
    dpc_trainer_free(z), dpc_trainer_free(y);
    dpc_trainer *s7 = make(m, ds, &c, 7), *s8 = make(m, ds, &c, 8);
    steps(s7, 2);
    CHECK_OK(dpc_trainer_save(s7, path, &err), &err);
    CHECK(dpc_trainer_resume(s8, path, &err) == DPC_E_STATE &&
              (!strcmp(err.field, "seed") || !strcmp(err.field, "rng")),
          "another seed refused naming the generator: %s", err.msg);
    dpc_trainer_free(s8), dpc_trainer_free(s7), dpc_trainer_free(a);
    dpc_model_free(m);
    dpc_dataset_free(ds);
}

/* Records through a file: the values packed field by field, read back equal; a section that is
 * not whole records, holds more than the room, or is missing: DPC_E_FORMAT naming it. */
static void test_record_sections(const char *path)
{
    dpc_error err = {0};
    dpc_rng rng;
    dpc_rng_seed(&rng, 5);
    const dpc_field_table *t = dpc_train_record_fields();
    dpc_train_record r[3] = {{1, 1, 0.5, 0.25, 0.75, 1.5, 2}, {2, 1, 0.4, NAN, NAN, 2, 3},
                             {3, 2, 0.3, 0.2, 0.8, 2.5, 4}}, back[3];
    dpc_ckpt *ck = NULL, *rd = NULL;
    CHECK_OK(dpc_ckpt_new(&ck, "records-test", &rng, &err), &err);
    if (!ck) return;
    CHECK_OK(dpc_ckpt_put_records(ck, "cli.recs", t, r, 3, &err), &err);
    double odd[5] = {1, 2, 3, 4, 5};
    CHECK_OK(dpc_ckpt_put(ck, "cli.odd", odd, 5, &err), &err);
    size_t nv = 0;
    const double *v = dpc_ckpt_section(ck, "cli.recs", &nv);
    CHECK(v && nv == 3 * t->count && v[0] == 1 && v[t->count] == 2, "packed: %zu values", nv);
    CHECK_OK(dpc_ckpt_write(ck, path, &err), &err);
    CHECK_OK(dpc_ckpt_read(&rd, path, "records-test", &err), &err);
    size_t n = 99;
    memset(back, 0, sizeof back);
    CHECK_OK(dpc_ckpt_get_records(rd, "cli.recs", t, back, 3, &n, &err), &err);
    CHECK(n == 3 && back[1].step == 2 && back[1].epoch == 1 && isnan(back[1].test_loss) &&
              back[2].test_accuracy == 0.8 && back[2].time_s == 4 && back[0].epsilon == 1.5,
          "read back: %zu records", n);
    CHECK(dpc_ckpt_get_records(rd, "cli.recs", t, back, 2, &n, &err) == DPC_E_FORMAT && n == 0 &&
              strstr(err.msg, "cli.recs"), "more records than room: %s", err.msg);
    CHECK(dpc_ckpt_get_records(rd, "cli.odd", t, back, 3, &n, &err) == DPC_E_FORMAT &&
              strstr(err.msg, "cli.odd"), "not whole records: %s", err.msg);
    CHECK(dpc_ckpt_get_records(rd, "cli.none", t, back, 3, &n, &err) == DPC_E_FORMAT &&
              strstr(err.msg, "no section 'cli.none'"), "missing: %s", err.msg);
    CHECK_OK(dpc_ckpt_put_records(ck, "cli.empty", t, NULL, 0, &err), &err);
    CHECK_OK(dpc_ckpt_get_records(ck, "cli.empty", t, back, 3, &n, &err), &err);
    CHECK(n == 0, "no records");
    dpc_ckpt_free(rd);
    dpc_ckpt_free(ck);
}

int main(void)
{
    char path[] = "/tmp/dpcorr_ck3_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    test_named_refusals(path);
    test_corrupt_files(path);
    test_records(path);
    test_record_sections(path);
    test_stale_tmp(path);
    test_version2(path);
    test_sampler_scheme(path);
    test_not_regular(path);
    test_noise_state(path);
    unlink(path);
    return TEST_SUMMARY();
}
