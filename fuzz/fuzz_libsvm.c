/* fuzz_libsvm.c — the LIBSVM loader. Byte 0 chooses the options (public d, task, public class
 * count, row limit); the rest is the file. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    unsigned f = data[0];
    const char *path = fz_file(0, data + 1, size - 1, ".svm");
    dpc_libsvm_opts o = {0, DPC_TASK_REGRESSION, 0, 0};
    if (f & 1) o.d = 1 + (f >> 4);
    if (f & 2) o.task = DPC_TASK_CLASSIFICATION;
    if (f & 4) o.n_classes = 2 + (f >> 6);
    if (f & 8) o.max_rows = 2;
    dpc_dataset *ds = NULL;
    dpc_error err = {0};
    dpc_status st = dpc_data_load_libsvm(&ds, path, &o, &err);
    fz_check_error(st, &err);
    if (!st) {
        if (!ds || ds->n == 0 || ds->d == 0) abort();
        dpc_error e2 = {0};
        fz_check_error(dpc_dataset_check(ds, &e2), &e2);
    }
    dpc_dataset_free(ds);
    return 0;
}
