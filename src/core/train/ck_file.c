/* ck_file.c — the file layer of checkpoints, shared by the DP-FTRL trainer (checkpoint.c) and the
 * checkpoint container of the other trainers (ckpt.c): the header, the configuration items, the
 * FNV-1a checksum, the atomic write (temporary file, fsync, rename; mode 0600) and the removal of
 * temporaries left by dead processes. The layout is described in dpcorr/train.h. */
#include "common/util.h"
#include "io/outfile.h"
#include "train/train_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void dpc__ck_fnv_add(dpc__ck_fnv *f, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        f->h ^= b[i];
        f->h *= 0x100000001b3ull;
    }
}

void dpc__ck_wr(dpc__ck_wbuf *w, const void *p, size_t n)
{
    if (!w || !w->ok || !n) return;
    dpc__ck_fnv_add(&w->h, p, n);
    if (fwrite(p, 1, n, w->f) != n) w->ok = 0;
}

void dpc__ck_write_header(dpc__ck_wbuf *w, uint64_t fp, uint64_t step, uint64_t P,
                          const dpc_rng *rng, const ck_item *it, size_t ni)
{
    char magic[8] = DPC__CK_MAGIC;
    uint32_t ver = DPC__CK_VERSION, bom = DPC__CK_BOM, mode = (uint32_t)rng->mode;
    uint64_t seed = rng->seed;
    dpc__ck_wr(w, magic, 8);
    dpc__ck_wr(w, &ver, 4);
    dpc__ck_wr(w, &bom, 4);
    dpc__ck_wr(w, &fp, 8);
    dpc__ck_wr(w, &step, 8);
    dpc__ck_wr(w, &P, 8);
    dpc__ck_wr(w, rng->key, 8);
    dpc__ck_wr(w, &seed, 8);
    dpc__ck_wr(w, &mode, 4);
    dpc__ck_wr(w, rng->skey, sizeof rng->skey);
    uint32_t n32 = (uint32_t)ni;
    unsigned char b[CK_ITEM_BYTES];
    dpc__ck_wr(w, &n32, 4);
    for (size_t i = 0; i < ni; i++) {
        dpc__ck_item_pack(&it[i], b);
        dpc__ck_wr(w, b, sizeof b);
    }
}

void dpc__ck_clean_stale_tmp(const char *path) { dpc__io_clean_stale_tmp(path); }

/* The atomic write replaces `path` by a rename: only a regular file (or nothing) may be there,
 * never a device node, FIFO, socket or directory (root could otherwise turn /dev/full into a
 * regular file). stat follows symlinks: a link to a device is refused too. */
static dpc_status check_replaceable(const char *path, dpc_error *err)
{
    struct stat sb;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))
        return dpc_error_param(err, DPC_E_IO, "path",
                               "%s exists and is not a regular file (a device, FIFO, socket or "
                               "directory): refusing to replace it",
                               path);
    return DPC_OK;
}

dpc_status dpc__ck_open_tmp(const char *path, char *tmp, size_t len, dpc__ck_wbuf *w,
                            dpc_error *err)
{
    w->h.h = DPC__CK_FNV0;
    w->ok = 0;
    char target[4096]; /* a symbolic link is written through, never replaced (outfile.h) */
    dpc_status st = dpc__io_target(path, target, sizeof target, err);
    if (!st) st = check_replaceable(target, err);
    if (st) return st;
    int n = snprintf(tmp, len, "%s.tmp.%ld", target, (long)getpid());
    if (n < 0 || (size_t)n >= len)
        return dpc_error_param(err, DPC_E_INVALID, "path", "too long");
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) return dpc_error_set(err, DPC_E_IO, "%s: cannot create: %s", tmp, strerror(errno));
    w->f = fdopen(fd, "wb");
    if (!w->f) {
        close(fd);
        return dpc_error_set(err, DPC_E_IO, "%s: %s", tmp, strerror(errno));
    }
    w->ok = 1;
    return DPC_OK;
}

dpc_status dpc__ck_commit_tmp(dpc__ck_wbuf *w, const char *tmp, const char *path, dpc_error *err)
{
    uint64_t sum = w->h.h;
    char target[4096];
    if (dpc__io_target(path, target, sizeof target, NULL)) w->ok = 0; /* the link went away */
    path = target;
    if (w->ok && fwrite(&sum, 1, 8, w->f) != 8) w->ok = 0;
    if (w->ok && fflush(w->f) != 0) w->ok = 0;
    if (w->ok && fsync(fileno(w->f)) != 0) w->ok = 0;
    int saved_errno = errno;
    if (fclose(w->f) != 0) w->ok = 0;
    if (!w->ok) {
        unlink(tmp);
        return dpc_error_set(err, DPC_E_IO, "%s: write failed: %s", tmp, strerror(saved_errno));
    }
    if (check_replaceable(path, NULL) != DPC_OK) { /* appeared while writing */
        unlink(tmp);
        return check_replaceable(path, err);
    }
    if (rename(tmp, path) != 0) {
        saved_errno = errno;
        unlink(tmp);
        return dpc_error_set(err, DPC_E_IO, "%s: cannot rename into place: %s", path,
                             strerror(saved_errno));
    }
    return DPC_OK;
}

dpc__ck_rbuf dpc__ck_rbuf_open(const char *path, int open_it)
{
    dpc__ck_rbuf r = {NULL, {DPC__CK_FNV0}, path, 0, 0, 0, ""};
    if (open_it) { /* a checkpoint is a regular file: a FIFO is refused, never waited on */
        dpc_status st;
        dpc_error e = {0};
        r.f = dpc__fopen_input(path, 1, &st, &e);
        if (!r.f) snprintf(r.why, sizeof r.why, "%s", e.msg);
    }
    struct stat sb;
    if (r.f && fstat(fileno(r.f), &sb) == 0) r.size = (uint64_t)sb.st_size;
    return r;
}

dpc_status dpc__ck_rd(dpc__ck_rbuf *r, void *p, size_t n, const char *what, dpc_error *err)
{
    if (!n) return DPC_OK;
    if (fread(p, 1, n, r->f) != n)
        return dpc_error_set(err, DPC_E_FORMAT, "%s: truncated checkpoint (reading %s)", r->path,
                             what);
    dpc__ck_fnv_add(&r->h, p, n);
    r->pos += n;
    return DPC_OK;
}

dpc_status dpc__ck_read_items(dpc__ck_rbuf *r, ck_item *it, size_t *n, dpc_error *err)
{
    uint32_t ni;
    unsigned char b[CK_ITEM_BYTES];
    dpc_status st = dpc__ck_rd(r, &ni, 4, "item count", err);
    if (st) return st;
    if (ni > CK_MAX_ITEMS)
        return dpc_error_set(err, DPC_E_FORMAT, "%s: %u configuration items (at most %d)", r->path,
                             ni, CK_MAX_ITEMS);
    for (uint32_t i = 0; i < ni; i++) {
        if ((st = dpc__ck_rd(r, b, sizeof b, "configuration items", err))) return st;
        if (!dpc__ck_item_unpack(b, &it[i]))
            return dpc_error_set(err, DPC_E_FORMAT, "%s: malformed configuration item %u",
                                 r->path, i);
    }
    *n = ni;
    return DPC_OK;
}

dpc_status dpc__ck_read_header(dpc__ck_rbuf *r, uint64_t *fp, uint64_t *step, uint64_t *P,
                               dpc_rng *rng, dpc_error *err)
{
    char magic[8];
    uint32_t ver, bom, mode;
    dpc_status st;
    if ((st = dpc__ck_rd(r, magic, 8, "magic", err))) return st;
    if (memcmp(magic, DPC__CK_MAGIC, 8) != 0)
        return dpc_error_set(err, DPC_E_FORMAT, "%s: not a dpcorr checkpoint (bad magic)",
                             r->path);
    if ((st = dpc__ck_rd(r, &ver, 4, "version", err)) ||
        (st = dpc__ck_rd(r, &bom, 4, "byte order", err)))
        return st;
    if (bom != DPC__CK_BOM)
        return dpc_error_set(err, DPC_E_FORMAT, "%s: written with another byte order", r->path);
    if (ver != DPC__CK_VERSION && ver != 2u)
        return dpc_error_set(err, DPC_E_FORMAT,
                             "%s: checkpoint version %u; this dpcorr reads versions 2 and %u",
                             r->path, ver, DPC__CK_VERSION);
    r->ver = ver;
    if ((st = dpc__ck_rd(r, fp, 8, "fingerprint", err)) ||
        (st = dpc__ck_rd(r, step, 8, "step", err)) ||
        (st = dpc__ck_rd(r, P, 8, "parameter count", err)) ||
        (st = dpc__ck_rd(r, rng->key, 8, "key", err)) ||
        (st = dpc__ck_rd(r, &rng->seed, 8, "seed", err)) ||
        (st = dpc__ck_rd(r, &mode, 4, "rng mode", err)) ||
        (st = dpc__ck_rd(r, rng->skey, sizeof rng->skey, "secure key", err)))
        return st;
    if (mode > DPC_RNG_SECURE)
        return dpc_error_set(err, DPC_E_FORMAT, "%s: bad rng mode %u", r->path, mode);
    rng->mode = (dpc_rng_mode)mode;
    return DPC_OK;
}

dpc_status dpc__ck_verify_sum(const char *path, dpc_error *err)
{
    dpc_status ost;
    FILE *f = dpc__fopen_input(path, 1, &ost, err); /* a regular file: never blocks */
    if (!f) return ost;
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || sb.st_size < 8) {
        fclose(f);
        return dpc_error_set(err, DPC_E_FORMAT, "%s: truncated checkpoint", path);
    }
    uint64_t body = (uint64_t)sb.st_size - 8, done = 0, sum = 0;
    dpc__ck_fnv h = {DPC__CK_FNV0};
    unsigned char buf[65536];
    while (done < body) {
        size_t want = body - done < sizeof buf ? (size_t)(body - done) : sizeof buf;
        if (fread(buf, 1, want, f) != want) break;
        dpc__ck_fnv_add(&h, buf, want);
        done += want;
    }
    int ok = done == body && fread(&sum, 1, 8, f) == 8 && sum == h.h;
    fclose(f);
    if (!ok)
        return dpc_error_set(err, DPC_E_FORMAT, "%s: checksum mismatch (corrupt, truncated or "
                             "appended-to checkpoint)", path);
    return DPC_OK;
}

dpc_status dpc__ck_read_sum(dpc__ck_rbuf *r, dpc_error *err)
{
    uint64_t expect = r->h.h, sum;
    if (fread(&sum, 1, 8, r->f) != 8 || sum != expect)
        return dpc_error_set(err, DPC_E_FORMAT, "%s: checksum mismatch (corrupt checkpoint)",
                             r->path);
    if (fgetc(r->f) != EOF)
        return dpc_error_set(err, DPC_E_FORMAT, "%s: bytes after the checksum (corrupt or "
                             "appended-to checkpoint)", r->path);
    return DPC_OK;
}

dpc_status dpc_checkpoint_read_rng(const char *path, dpc_rng *rng, dpc_error *err)
{
    if (!path || !rng) return dpc_error_param(err, DPC_E_INVALID, path ? "rng" : "path", "NULL");
    dpc__ck_rbuf r = dpc__ck_rbuf_open(path, 1);
    if (!r.f) return dpc_error_set(err, DPC_E_IO, "%s", r.why);
    uint64_t fp, step, P;
    dpc_status st = dpc__ck_read_header(&r, &fp, &step, &P, rng, err);
    fclose(r.f);
    return st;
}
