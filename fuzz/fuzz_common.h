/* fuzz_common.h — shared by the loader fuzz targets (fuzz/fuzz_*.c): the loaders read files, so
 * each input is written to one temporary file per process (under $TMPDIR, removed at exit) and
 * the loader is called on its path. Built with clang -fsanitize=fuzzer (libFuzzer) or with
 * fuzz/driver.c (AFL++, replaying a crash: the driver calls LLVMFuzzerTestOneInput on files). */
#ifndef DPCORR_FUZZ_COMMON_H
#define DPCORR_FUZZ_COMMON_H

#include "dpcorr.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char fz_paths[4][512];

static void fz_cleanup(void)
{
    for (int i = 0; i < 4; i++)
        if (fz_paths[i][0]) unlink(fz_paths[i]);
}

/* The path of temporary file k (0..3) holding bytes [data, data + size). */
static const char *fz_file(int k, const uint8_t *data, size_t size, const char *suffix)
{
    if (!fz_paths[k][0]) {
        const char *dir = getenv("TMPDIR");
        snprintf(fz_paths[k], sizeof fz_paths[k], "%s/dpcorr-fuzz-%ld-%d%s",
                 dir && *dir ? dir : "/tmp", (long)getpid(), k, suffix);
        static int registered;
        if (!registered++) atexit(fz_cleanup);
    }
    FILE *f = fopen(fz_paths[k], "wb");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    fclose(f);
    return fz_paths[k];
}

/* An error must carry a message and a known status (the loaders never fail silently). */
static void fz_check_error(dpc_status st, const dpc_error *err)
{
    static int verbose = -1;
    if (verbose < 0) verbose = getenv("FUZZ_VERBOSE") != NULL; /* seeds: why an input fails */
    if (verbose) fprintf(stderr, "%s\n", st ? err->msg : "ok");
    if (st == DPC_OK) return;
    if ((unsigned)st > DPC_E_CANCELLED || !err->msg[0]) abort();
}

#endif
