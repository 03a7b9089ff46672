/* test_outfile.c — outputs that never destroy inputs (dpcorr/io.h, issue 37): file identity
 * through hard links, symbolic links, "dir/../name" and names not there yet; the check before
 * any work (missing directory, a directory, a FIFO, a dangling link, names too long for the
 * temporary, a name that just fits); the safe write (a new file, a replaced file with its mode
 * kept, an abort, a write past RLIMIT_FSIZE that must leave the old file and no temporary, a
 * link written through); checkpoints and strategy files written through a link; and the files
 * a data spec names (dpc_data_spec_files). */
#include "dpcorr/data.h"
#include "dpcorr/io.h"
#include "dpcorr/train.h"
#include "harness.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

static const char *at(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", dir, name);
    return buf;
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* 1 when path holds exactly text */
static int holds(const char *path, const char *text)
{
    char buf[256] = {0};
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    return n == strlen(text) && !memcmp(buf, text, n);
}

static int tmp_left(const char *path)
{
    char t[512];
    snprintf(t, sizeof t, "%s.tmp.%ld", path, (long)getpid());
    return access(t, F_OK) == 0;
}

static void test_identity(void)
{
    char a[256], h[256], s[256], dots[256], x[256], x2[256], y[256], m[256];
    put(at(a, sizeof a, "a.csv"), "1,2\n");
    if (link(a, at(h, sizeof h, "hard.csv")) != 0 || symlink(a, at(s, sizeof s, "soft.csv")) != 0)
        CHECK(0, "fixture links");
    mkdir(at(m, sizeof m, "sub"), 0700);
    snprintf(dots, sizeof dots, "%s/sub/../a.csv", dir);
    CHECK(dpc_io_same_file(a, a), "a file is itself");
    CHECK(dpc_io_same_file(a, h), "a hard link is the same file");
    CHECK(dpc_io_same_file(s, a) && dpc_io_same_file(a, s), "a symbolic link is its target");
    CHECK(dpc_io_same_file(dots, a), "dir/../name is name");
    at(x, sizeof x, "new.json");
    snprintf(x2, sizeof x2, "%s/sub/../new.json", dir);
    CHECK(dpc_io_same_file(x, x2), "two spellings of a name not there yet");
    CHECK(!dpc_io_same_file(x, at(y, sizeof y, "other.json")), "two names not there yet differ");
    CHECK(!dpc_io_same_file(a, x), "an existing file and a name not there differ");
    CHECK(!dpc_io_same_file("/nonexistent-dir/a", "/nonexistent-dir/a"),
          "a name in a missing directory is nothing");
    CHECK(!dpc_io_same_file(NULL, a) && !dpc_io_same_file(a, NULL) && !dpc_io_same_file("", ""),
          "NULL and empty are nothing");
}

static void test_check_output(void)
{
    dpc_error err = {0};
    char p[512], f[256], l[256];
    CHECK_OK(dpc_io_check_output(at(p, sizeof p, "fresh.json"), &err), &err);
    CHECK(dpc_io_check_output("/nonexistent-dir/r.json", &err) == DPC_E_INVALID &&
              strstr(err.msg, "directory /nonexistent-dir") && !strcmp(err.field, "path"),
          "missing directory: %s", err.msg);
    CHECK(dpc_io_check_output(dir, &err) == DPC_E_INVALID && strstr(err.msg, "a directory"),
          "a directory: %s", err.msg);
    at(f, sizeof f, "fifo");
    CHECK(mkfifo(f, 0600) == 0, "fixture fifo");
    CHECK(dpc_io_check_output(f, &err) == DPC_E_INVALID && strstr(err.msg, "not a regular file"),
          "a FIFO: %s", err.msg);
    CHECK(symlink("/nonexistent-dir/x", at(l, sizeof l, "dangling")) == 0, "fixture link");
    CHECK(dpc_io_check_output(l, &err) == DPC_E_INVALID && strstr(err.msg, "to nothing"),
          "a dangling link: %s", err.msg);
    char name[320];
    memset(name, 'n', 300);
    name[300] = 0;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    CHECK(dpc_io_check_output(p, &err) == DPC_E_INVALID && strstr(err.msg, "300 bytes"),
          "a 300-byte name: %s", err.msg);
    long nm = pathconf(dir, _PC_NAME_MAX);
    if (nm > DPC_IO_TMP_SUFFIX && nm < 300) {
        name[nm - DPC_IO_TMP_SUFFIX + 1] = 0;
        snprintf(p, sizeof p, "%s/%s", dir, name);
        CHECK(dpc_io_check_output(p, &err) == DPC_E_INVALID && strstr(err.msg, "temporary"),
              "a name with no room for the temporary: %s", err.msg);
        name[nm - DPC_IO_TMP_SUFFIX] = 0;
        snprintf(p, sizeof p, "%s/%s", dir, name);
        CHECK_OK(dpc_io_check_output(p, &err), &err);
    }
    CHECK(dpc_io_check_output(NULL, &err) == DPC_E_INVALID, "NULL refused");
}

/* Writes text through the safe writer; the status of the commit. */
static dpc_status write_text(const char *path, const char *text, dpc_error *err)
{
    dpc_io_out *o = NULL;
    dpc_status st = dpc_io_out_open(&o, path, err);
    if (st) return st;
    fputs(text, dpc_io_out_file(o));
    return dpc_io_out_commit(o, err);
}

static void test_safe_write(void)
{
    dpc_error err = {0};
    char p[256], t[256], l[256];
    at(p, sizeof p, "r.json");
    CHECK_OK(write_text(p, "first\n", &err), &err);
    CHECK(holds(p, "first\n") && !tmp_left(p), "a new file written, no temporary left");
    chmod(p, 0640);
    CHECK_OK(write_text(p, "second\n", &err), &err);
    struct stat sb;
    CHECK(holds(p, "second\n") && stat(p, &sb) == 0 && (sb.st_mode & 0777) == 0640,
          "replaced, its mode 0640 kept (got %o)", (unsigned)(sb.st_mode & 0777));
    dpc_io_out *o = NULL;
    CHECK_OK(dpc_io_out_open(&o, p, &err), &err);
    fputs("never", dpc_io_out_file(o));
    dpc_io_out_abort(o);
    CHECK(holds(p, "second\n") && !tmp_left(p), "an abort keeps the old file, no temporary");
    /* a write past the file size limit (SIGXFSZ ignored: EFBIG) must fail and keep the old */
    struct rlimit old, lim;
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
    if (getrlimit(RLIMIT_FSIZE, &old) == 0) {
        lim = old;
        lim.rlim_cur = 4096;
        CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0, "lower RLIMIT_FSIZE");
        CHECK_OK(dpc_io_out_open(&o, p, &err), &err);
        for (int k = 0; k < 2000; k++) fputs("0123456789", dpc_io_out_file(o));
        dpc_status st = dpc_io_out_commit(o, &err);
        setrlimit(RLIMIT_FSIZE, &old);
        CHECK(st == DPC_E_IO && strstr(err.msg, "unchanged"), "a write past the limit fails: %s",
              err.msg);
        CHECK(holds(p, "second\n") && !tmp_left(p), "... the old file kept, no temporary");
    }
    signal(SIGXFSZ, prev);
    /* a link is written through: the target replaced, the link still a link */
    put(at(t, sizeof t, "target.json"), "old\n");
    CHECK(symlink(t, at(l, sizeof l, "link.json")) == 0, "fixture link");
    CHECK_OK(write_text(l, "through\n", &err), &err);
    struct stat ls;
    CHECK(lstat(l, &ls) == 0 && S_ISLNK(ls.st_mode) && holds(t, "through\n") && !tmp_left(t),
          "written through the link, the link kept");
    CHECK(dpc_io_out_open(NULL, p, &err) == DPC_E_INVALID, "NULL handle refused");
    CHECK(dpc_io_out_commit(NULL, &err) == DPC_E_INVALID && !dpc_io_out_file(NULL),
          "NULL commit refused");
    dpc_io_out_abort(NULL);
}

static void test_checkpoint_link(void)
{
    dpc_error err = {0};
    char t[256], l[256];
    put(at(t, sizeof t, "ck.target"), "old\n");
    CHECK(symlink(t, at(l, sizeof l, "ck.link")) == 0, "fixture link");
    dpc_rng rng;
    dpc_rng_seed(&rng, 5);
    dpc_ckpt *ck = NULL, *back = NULL;
    CHECK_OK(dpc_ckpt_new(&ck, "test", &rng, &err), &err);
    CHECK_OK(dpc_ckpt_write(ck, l, &err), &err);
    struct stat ls;
    CHECK(lstat(l, &ls) == 0 && S_ISLNK(ls.st_mode), "the checkpoint link is still a link");
    CHECK_OK(dpc_ckpt_read(&back, t, "test", &err), &err);
    dpc_ckpt_free(back);
    dpc_ckpt_free(ck);
}

static void test_spec_files(void)
{
    dpc_error err = {0};
    char *files = NULL;
    size_t n = 99;
    CHECK_OK(dpc_data_spec_files("csv:a.csv,label=y,test=b.csv", &files, &n, &err), &err);
    CHECK(n == 2 && files && !strcmp(files, "a.csv") && !strcmp(files + 6, "b.csv"),
          "csv: PATH and test= (%zu)", n);
    free(files);
    CHECK_OK(dpc_data_spec_files("idx:i.gz,labels=l.gz,test=ti,test-labels=tl", &files, &n, &err),
             &err);
    CHECK(n == 4 && !strcmp(files, "i.gz") && !strcmp(files + 5, "l.gz") &&
              !strcmp(files + 10, "ti") && !strcmp(files + 13, "tl"),
          "idx: the four files (%zu)", n);
    free(files);
    CHECK_OK(dpc_data_spec_files("fashion-mnist:dir=/d", &files, &n, &err), &err);
    CHECK(n == 8 && !strcmp(files, "/d/train-images-idx3-ubyte"), "fashion-mnist: 8 (%zu) %s",
          n, files ? files : "");
    free(files);
    CHECK_OK(dpc_data_spec_files("synthetic:logistic,n=10", &files, &n, &err), &err);
    CHECK(n == 0 && !files, "synthetic: none");
    CHECK(dpc_data_spec_files("csv:a,,b", &files, &n, &err) == DPC_E_INVALID && !files && !n,
          "a malformed spec refused: %s", err.msg);
    CHECK(dpc_data_spec_files(NULL, &files, &n, &err) == DPC_E_INVALID, "NULL spec refused");
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/dpcorr_test_outfile_XXXXXX");
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp");
        return TEST_SUMMARY();
    }
    test_identity();
    test_check_output();
    test_safe_write();
    test_checkpoint_link();
    test_spec_files();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return TEST_SUMMARY();
}
