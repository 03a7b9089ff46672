/* fuzz_io.c — the number-file readers of dpcorr/io.h (user files: `--coeffs`, dense strategies).
 * Input: byte 0 chooses the reader and its limit (bit 0: the lower-triangular reader, else the
 * number list; bits 1-3: max_count / n in 0..7, 0 meaning no limit / n from the file), the rest
 * is the file. A success must return what it promises: finite values, the count within the
 * limit; for a matrix N x N with zeros above the diagonal. */
#include "fuzz_common.h"

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    unsigned flags = data[0];
    size_t lim = (flags >> 1) & 7;
    const char *path = fz_file(0, data + 1, size - 1, ".txt");
    dpc_error err = {0};
    if (flags & 1) {
        double *M = NULL;
        size_t n = 0;
        dpc_status st = dpc_io_read_lower_triangular(path, lim, &M, &n, &err);
        fz_check_error(st, &err);
        if (!st) {
            if (!M || n == 0 || (lim && n != lim)) abort();
            for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < n; j++)
                    if (!isfinite(M[i * n + j]) || (j > i && M[i * n + j] != 0)) abort();
        } else if (M) {
            abort(); /* a failure leaves *out NULL */
        }
        free(M);
    } else {
        double *v = NULL;
        size_t n = 0;
        dpc_status st = dpc_io_read_numbers(path, lim, &v, &n, &err);
        fz_check_error(st, &err);
        if (!st) {
            if (!v || n == 0 || (lim && n > lim)) abort();
            for (size_t i = 0; i < n; i++)
                if (!isfinite(v[i])) abort();
        } else if (v || n) {
            abort();
        }
        free(v);
    }
    return 0;
}
