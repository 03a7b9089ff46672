/* mapfile.c — read-only memory maps of whole files; see mapfile.h. */
#include "io/mapfile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

dpc_status dpc__map_open(dpc__map *m, const char *path, dpc_error *err)
{
    m->p = NULL;
    m->size = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0) return dpc_error_set(err, DPC_E_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return dpc_error_set(err, DPC_E_IO, "%s: not a regular file (a map needs one)", path);
    }
    if ((uint64_t)sb.st_size > (uint64_t)SIZE_MAX) {
        close(fd);
        return dpc_error_set(err, DPC_E_RANGE, "%s: %lld bytes exceed the address space", path,
                             (long long)sb.st_size);
    }
    m->size = (size_t)sb.st_size;
    if (m->size) {
        void *p = mmap(NULL, m->size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            int e = errno;
            close(fd);
            m->size = 0;
            return dpc_error_set(err, DPC_E_IO, "%s: cannot map: %s", path, strerror(e));
        }
        m->p = p;
        (void)madvise(p, m->size, MADV_SEQUENTIAL); /* advice only: readahead, early drop */
    }
    close(fd); /* the map keeps the file */
    return DPC_OK;
}

void dpc__map_release(const dpc__map *m, size_t off, size_t len)
{
    if (!m->p || off >= m->size) return;
    size_t pg = (size_t)sysconf(_SC_PAGESIZE), b = (off + pg - 1) / pg * pg;
    size_t end = off + len < m->size ? off + len : m->size, e = end / pg * pg;
    /* a private map never written: dropped pages read back from the file */
    if (e > b) (void)madvise((void *)(m->p + b), e - b, MADV_DONTNEED);
}

void dpc__map_close(dpc__map *m)
{
    if (m->p) munmap((void *)m->p, m->size);
    m->p = NULL;
    m->size = 0;
}
