/* mapfile.h — a read-only memory map of a whole file (not public), for readers that touch only
 * part of a large file (data/npy.c): the pages of the rows read are faulted in, and a range
 * already read is handed back to the kernel so that the resident memory stays at one block. */
#ifndef DPCORR_SRC_IO_MAPFILE_H
#define DPCORR_SRC_IO_MAPFILE_H

#include "dpcorr/common.h"

#include <stddef.h>
#include <stdint.h>

typedef struct dpc__map {
    const unsigned char *p; /* the file's bytes (NULL for an empty file) */
    size_t size;            /* its length */
} dpc__map;

/* Maps path read-only. DPC_E_IO naming the path (cannot open, not a regular file, map failed). */
dpc_status dpc__map_open(dpc__map *m, const char *path, dpc_error *err);
/* Releases the pages of [off, off + len) that lie wholly inside it (they are re-read from the
 * file if touched again): the resident memory of a reader that copies and moves on. */
void dpc__map_release(const dpc__map *m, size_t off, size_t len);
void dpc__map_close(dpc__map *m);

#endif
