/* fuzz_idx.c — the IDX loader (images + labels, plain or gzip). Input: u16 split k, then
 * k bytes of the images file and the rest as the labels file; byte 2's low bits choose the
 * options (scale, public class count, record limit). */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3) return 0;
    size_t k = ((size_t)data[0] << 8 | data[1]), flags = data[2];
    data += 3;
    size -= 3;
    if (k > size) k = size;
    const char *img = fz_file(0, data, k, ".idx"), *lab = fz_file(1, data + k, size - k, ".idx");
    dpc_idx_opts o = {0, 0, 0};
    if (flags & 1) o.scale = 0.5;
    if (flags & 2) o.n_classes = 10;
    if (flags & 4) o.max_records = 3;
    dpc_dataset *ds = NULL;
    dpc_error err = {0};
    dpc_status st = dpc_data_load_idx(&ds, img, lab, &o, &err);
    fz_check_error(st, &err);
    if (!st) {
        if (!ds || ds->n == 0 || ds->d == 0) abort();
        dpc_error e2 = {0};
        fz_check_error(dpc_dataset_check(ds, &e2), &e2);
        (void)dpc_dataset_hash(ds);
    }
    dpc_dataset_free(ds);
    return 0;
}
