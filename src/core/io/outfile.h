/* outfile.h — the library's side of output files (not public): the file an output path writes
 * (its symbolic links resolved), shared by the safe writer (outfile.c), the checkpoint writer
 * (train/ck_file.c) and the strategy writer (strategy/strategy_file.c). */
#ifndef DPCORR_SRC_IO_OUTFILE_H
#define DPCORR_SRC_IO_OUTFILE_H

#include "dpcorr/common.h"

#include <stddef.h>

/* The file that writing `path` replaces: path itself, or, when path is a symbolic link (a chain
 * of them), its final target, so that a link is written through and never replaced. A dangling
 * link, a loop and a name too long for out (len bytes) are refused (DPC_E_INVALID, field "path"). */
dpc_status dpc__io_target(const char *path, char *out, size_t len, dpc_error *err);

/* Removes "TARGET.tmp.PID" beside the file path writes (links resolved) of processes that no
 * longer exist (kill(pid, 0) fails with ESRCH): the temporaries of writers killed mid-write
 * (kill -9, SIGXFSZ, power loss). A live process's is kept. Best effort, silent. Called by the
 * safe write after a successful commit and by the checkpoint writer. */
void dpc__io_clean_stale_tmp(const char *path);

#endif
