/* driver.c — a main() for the fuzz targets without libFuzzer: AFL++ (afl-fuzz ... -- target @@)
 * and replaying inputs (./fuzz_csv crash-file ...): each argument is a file (no argument: stdin)
 * passed to LLVMFuzzerTestOneInput. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(FILE *f)
{
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap);
    if (!buf) return 1;
    size_t r;
    while ((r = fread(buf + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) {
            uint8_t *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                return 1;
            }
            buf = nb;
        }
    }
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) return run_file(stdin);
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            perror(argv[i]);
            return 1;
        }
        int rc = run_file(f);
        fclose(f);
        if (rc) return rc;
    }
    return 0;
}
