/* fuzz_csv.c — the CSV loader. Byte 0 chooses the options (header mode, delimiter, label column,
 * task, public classes or class names, row limit); the rest is the file. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    unsigned f = data[0];
    const char *path = fz_file(0, data + 1, size - 1, ".csv");
    dpc_csv_opts o = dpc_csv_opts_default();
    o.header = (dpc_csv_header)(f % 3);
    static const char delims[4] = {',', ';', ' ', '\t'};
    o.delimiter = delims[(f >> 2) & 3];
    o.label_col = (f & 16) ? 0 : -1;
    if (f & 32) {
        o.task = DPC_TASK_CLASSIFICATION;
        if (f & 64) o.n_classes = 3;
        if (f & 128) o.classes = "cat|dog|bird";
    } else if (f & 128) {
        o.label_name = "label";
    }
    if ((f & 96) == 64) o.max_rows = 2;
    dpc_dataset *ds = NULL;
    dpc_error err = {0};
    dpc_status st = dpc_data_load_csv(&ds, path, &o, &err);
    fz_check_error(st, &err);
    if (!st) {
        if (!ds || ds->n == 0 || ds->d == 0) abort();
        dpc_error e2 = {0};
        fz_check_error(dpc_dataset_check(ds, &e2), &e2);
    }
    dpc_dataset_free(ds);
    return 0;
}
