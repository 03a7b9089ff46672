/* outfile.c — outputs that never destroy inputs (dpcorr/io.h): the identity of a file, the check
 * of an output path before any work, and the safe write (a temporary beside the target, every
 * write checked, fsync, rename; symbolic links written through, never replaced). */
#include "io/outfile.h"
#include "common/util.h"
#include "dpcorr/io.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif
#ifndef NAME_MAX
#define NAME_MAX 255
#endif

/* The directory part of path ("." when none, "/" for a file at the root); 0 when too long. */
static int dir_of(const char *path, char *dir, size_t len)
{
    const char *slash = strrchr(path, '/');
    int n;
    if (!slash) n = snprintf(dir, len, ".");
    else if (slash == path) n = snprintf(dir, len, "/");
    else n = snprintf(dir, len, "%.*s", (int)(slash - path), path);
    return n >= 0 && (size_t)n < len;
}

static const char *base_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

dpc_status dpc__io_target(const char *path, char *out, size_t len, dpc_error *err)
{
    if (!path || !*path) return dpc_error_param(err, DPC_E_INVALID, "path", "empty path");
    size_t n = strlen(path);
    if (n >= len || n >= PATH_MAX)
        return dpc_error_param(err, DPC_E_INVALID, "path",
                               "cannot write %.40s... (the path is %zu bytes, at most %d)", path,
                               n, PATH_MAX - 1);
    struct stat ls;
    if (lstat(path, &ls) != 0 || !S_ISLNK(ls.st_mode)) {
        memcpy(out, path, n + 1);
        return DPC_OK;
    }
    /* a link: its final target is what gets written (the link itself stays) */
    char *r = realpath(path, NULL);
    if (!r) {
        int e = errno;
        return dpc_error_param(err, DPC_E_INVALID, "path",
                               "cannot write %s (a symbolic link %s: %s)", path,
                               e == ENOENT ? "to nothing (dangling)" : "that does not resolve",
                               strerror(e));
    }
    size_t rn = strlen(r);
    if (rn >= len || rn >= PATH_MAX) {
        free(r);
        return dpc_error_param(err, DPC_E_INVALID, "path",
                               "cannot write %s (its link target is %zu bytes long)", path, rn);
    }
    memcpy(out, r, rn + 1);
    free(r);
    return DPC_OK;
}

/* ---- identity ------------------------------------------------------------------------------ */

typedef struct file_id {
    int kind; /* 0 unresolved, 1 an existing file, 2 a name not there yet in a directory */
    dev_t dev;
    ino_t ino;
    const char *base; /* kind 2 */
} file_id;

static file_id identify(const char *path)
{
    file_id id = {0, 0, 0, NULL};
    struct stat st;
    char dir[PATH_MAX];
    if (!path || !*path) return id;
    if (stat(path, &st) == 0) {
        id.kind = 1;
        id.dev = st.st_dev;
        id.ino = st.st_ino;
        return id;
    }
    const char *b = base_of(path);
    if (!*b || !strcmp(b, ".") || !strcmp(b, "..")) return id;
    if (!dir_of(path, dir, sizeof dir) || stat(dir, &st) != 0) return id;
    id.kind = 2;
    id.dev = st.st_dev;
    id.ino = st.st_ino;
    id.base = b;
    return id;
}

int dpc_io_same_file(const char *a, const char *b)
{
    file_id x = identify(a), y = identify(b);
    if (!x.kind || x.kind != y.kind || x.dev != y.dev || x.ino != y.ino) return 0;
    return x.kind == 1 || !strcmp(x.base, y.base);
}

/* ---- the check before any work ------------------------------------------------------------- */

/* An existing target must be a writable regular file (a rename over a device node would turn
 * it into a regular file; a directory cannot be a report). */
static dpc_status check_existing(const char *path, const char *target, dpc_error *err)
{
    struct stat st;
    if (stat(target, &st) != 0) return DPC_OK; /* not there yet */
    if (S_ISDIR(st.st_mode))
        return dpc_error_param(err, DPC_E_INVALID, "path",
                               "cannot write %s (a directory, not a file)", path);
    if (!S_ISREG(st.st_mode))
        return dpc_error_param(err, DPC_E_INVALID, "path",
                               "refusing to write %s: it exists and is not a regular file (a "
                               "device, FIFO or socket)",
                               path);
    if (access(target, W_OK) != 0)
        return dpc_error_param(err, DPC_E_INVALID, "path", "cannot write %s (%s)", path,
                               strerror(errno));
    return DPC_OK;
}

static dpc_status check_target(const char *path, const char *target, dpc_error *err)
{
    char dir[PATH_MAX];
    struct stat st;
    size_t n = strlen(target);
    if (target[n - 1] == '/')
        return dpc_error_param(err, DPC_E_INVALID, "path",
                               "cannot write %s (a directory, not a file)", path);
    if (n + DPC_IO_TMP_SUFFIX >= PATH_MAX || !dir_of(target, dir, sizeof dir))
        return dpc_error_param(err, DPC_E_INVALID, "path",
                               "cannot write %.40s... (the path is %zu bytes, at most %d)", path,
                               n, PATH_MAX - 1 - DPC_IO_TMP_SUFFIX);
    if (stat(dir, &st) != 0)
        return dpc_error_param(err, DPC_E_INVALID, "path", "cannot write %s (directory %s: %s)",
                               path, dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return dpc_error_param(err, DPC_E_INVALID, "path",
                               "cannot write %s (directory %s: not a directory)", path, dir);
    if (access(dir, W_OK | X_OK) != 0)
        return dpc_error_param(err, DPC_E_INVALID, "path", "cannot write %s (directory %s: %s)",
                               path, dir, strerror(errno));
    long name_max = pathconf(dir, _PC_NAME_MAX);
    if (name_max <= 0) name_max = NAME_MAX;
    size_t bl = strlen(base_of(target));
    if ((long)(bl + DPC_IO_TMP_SUFFIX) > name_max)
        return dpc_error_param(err, DPC_E_INVALID, "path",
                               "cannot write %.40s... (the file name is %zu bytes; at most %ld "
                               "here, less %d for the temporary written beside it)",
                               path, bl, name_max, DPC_IO_TMP_SUFFIX);
    return check_existing(path, target, err);
}

dpc_status dpc_io_check_output(const char *path, dpc_error *err)
{
    char target[PATH_MAX];
    dpc_status st = dpc__io_target(path, target, sizeof target, err);
    return st ? st : check_target(path, target, err);
}

/* ---- the safe write ------------------------------------------------------------------------ */

void dpc__io_clean_stale_tmp(const char *path)
{
    char dir[4096], target[4096];
    if (!dpc__io_target(path, target, sizeof target, NULL)) path = target; /* where it writes */
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    size_t dl = slash ? (size_t)(slash - path) : 0;
    if (dl + 1 >= sizeof dir) return;
    if (slash) snprintf(dir, sizeof dir, "%.*s", (int)(dl ? dl : 1), path);
    else snprintf(dir, sizeof dir, ".");
    DIR *dp = opendir(dir);
    if (!dp) return;
    size_t bl = strlen(base);
    struct dirent *e;
    while ((e = readdir(dp)) != NULL) {
        const char *nm = e->d_name;
        if (strncmp(nm, base, bl) || strncmp(nm + bl, ".tmp.", 5)) continue;
        const char *digits = nm + bl + 5;
        char *end = NULL;
        if (!*digits || *digits < '0' || *digits > '9') continue;
        long pid = strtol(digits, &end, 10);
        if (*end || pid <= 0 || pid == (long)getpid()) continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue; /* alive, or not ours to know */
        char full[4096 + 300];
        if (snprintf(full, sizeof full, "%s/%s", dir, nm) < (int)sizeof full) unlink(full);
    }
    closedir(dp);
}


struct dpc_io_out {
    FILE *f;
    char target[PATH_MAX];
    char tmp[PATH_MAX];
};

dpc_status dpc_io_out_open(dpc_io_out **out, const char *path, dpc_error *err)
{
    if (!out) return dpc_error_param(err, DPC_E_INVALID, "out", "NULL");
    *out = NULL;
    dpc_io_out *o = calloc(1, sizeof *o);
    if (!o) return DPC__NOMEM(err, "output file");
    dpc_status st = dpc__io_target(path, o->target, sizeof o->target, err);
    if (!st) st = check_target(path, o->target, err);
    int n = st ? 0 : snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld", o->target, (long)getpid());
    if (!st && (n < 0 || (size_t)n >= sizeof o->tmp))
        st = dpc_error_param(err, DPC_E_INVALID, "path", "cannot write %s (path too long)", path);
    if (st) {
        free(o);
        return st;
    }
    struct stat sb;
    mode_t mode = stat(o->target, &sb) == 0 ? (sb.st_mode & 07777) : 0666;
    unlink(o->tmp); /* a leftover of a dead process with our pid; O_EXCL never follows a link */
    int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
    if (fd >= 0 && mode != 0666) (void)fchmod(fd, mode); /* keep the old file's permissions */
    if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
        int e = errno;
        if (fd >= 0) close(fd);
        unlink(o->tmp);
        free(o);
        return dpc_error_param(err, DPC_E_IO, "path", "cannot write %s (%s)", path, strerror(e));
    }
    *out = o;
    return DPC_OK;
}

FILE *dpc_io_out_file(dpc_io_out *o) { return o ? o->f : NULL; }

dpc_status dpc_io_out_commit(dpc_io_out *o, dpc_error *err)
{
    if (!o) return dpc_error_param(err, DPC_E_INVALID, "out", "NULL");
    int e = 0;
    if (fflush(o->f) != 0) e = errno ? errno : EIO;
    if (!e && ferror(o->f)) e = EIO;
    if (!e && fsync(fileno(o->f)) != 0) e = errno;
    if (fclose(o->f) != 0 && !e) e = errno ? errno : EIO;
    struct stat sb;
    if (!e && stat(o->target, &sb) == 0 && !S_ISREG(sb.st_mode)) e = EEXIST; /* appeared since */
    if (!e && rename(o->tmp, o->target) != 0) e = errno;
    if (!e) dpc__io_clean_stale_tmp(o->target); /* a killed writer's TARGET.tmp.PID */
    dpc_status st = DPC_OK;
    if (e) {
        unlink(o->tmp);
        st = dpc_error_param(err, DPC_E_IO, "path", "write error on %s (%s); %s unchanged",
                             o->target,
                             e == EEXIST ? "it is no longer a regular file" : strerror(e),
                             "the previous file, if any, is");
    }
    free(o);
    return st;
}

void dpc_io_out_abort(dpc_io_out *o)
{
    if (!o) return;
    fclose(o->f);
    unlink(o->tmp);
    free(o);
}
