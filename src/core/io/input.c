/* input.c — opening the library's input files without blocking (issue 37: a FIFO with no
 * writer as --data, --coeffs or a strategy file blocked forever in open(2)).
 *
 * open(2) of a FIFO for reading waits for a writer; with O_NONBLOCK it returns at once. The
 * descriptor's own fstat (no race with the path) then decides: a regular file or a character
 * device (read boundedly by the parsers, which refuse NUL bytes) is read; a directory is
 * refused; a FIFO is read only when data (or its writer's end) arrives within
 * DPC__INPUT_WAIT_MS, so a pipe that is being fed (a shell's <(...)) still works and a FIFO
 * nobody writes to is refused naming the file instead of hanging. Callers that need a size or
 * a second pass (checkpoints) ask for a regular file. */
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DPC__INPUT_WAIT_MS 1000

static const char *kind_of(mode_t m)
{
    return S_ISDIR(m)    ? "a directory"
           : S_ISFIFO(m) ? "a FIFO (named pipe)"
           : S_ISSOCK(m) ? "a socket"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
                         : "not a regular file";
}

dpc_status dpc__open_input(const char *path, int regular_only, int *fd_out, dpc_error *err)
{
    *fd_out = -1;
    if (!path || !*path) return dpc_error_set(err, DPC_E_INVALID, "empty file path");
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return dpc_error_set(err, DPC_E_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    dpc_status st = DPC_OK;
    if (fstat(fd, &sb) != 0) {
        st = dpc_error_set(err, DPC_E_IO, "%s: cannot stat: %s", path, strerror(errno));
    } else if (S_ISDIR(sb.st_mode) || (regular_only && !S_ISREG(sb.st_mode))) {
        st = dpc_error_set(err, DPC_E_IO, "%s: is %s, not a regular file", path,
                           kind_of(sb.st_mode));
    } else if (S_ISFIFO(sb.st_mode) || S_ISSOCK(sb.st_mode)) {
        struct pollfd p = {fd, POLLIN, 0};
        int r;
        while ((r = poll(&p, 1, DPC__INPUT_WAIT_MS)) < 0 && errno == EINTR) {}
        if (r <= 0 || !(p.revents & (POLLIN | POLLHUP)))
            st = dpc_error_set(err, DPC_E_IO,
                               "%s: is %s with nothing to read after %d ms (no writer?): give a "
                               "regular file",
                               path, kind_of(sb.st_mode), DPC__INPUT_WAIT_MS);
    }
    int fl;
    if (!st && ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0))
        st = dpc_error_set(err, DPC_E_IO, "%s: cannot read: %s", path, strerror(errno));
    if (st) {
        close(fd);
        return st;
    }
    *fd_out = fd;
    return DPC_OK;
}

FILE *dpc__fopen_input(const char *path, int regular_only, dpc_status *st, dpc_error *err)
{
    int fd;
    *st = dpc__open_input(path, regular_only, &fd, err);
    if (*st) return NULL;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        close(fd);
        *st = DPC__NOMEM(err, "a file stream");
    }
    return f;
}
