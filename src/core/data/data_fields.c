/* data_fields.c — the field tables of the data readers' options (dpcorr/data.h): dpc_idx_opts,
 * dpc_libsvm_opts and dpc_npy_opts. The zeroed struct is each one's default (the loaders take
 * NULL options as zeroed), so every default here is 0; the loaders keep their own checks. */
#include "field/field_def.h"
#include "dpcorr/data.h"

#include <math.h>

static const char *const task_names[] = {"regression", "classification"};

#define ALL (DPC_FIELD_HI_OPEN) /* [0, inf): every count, 0 meaning "none" or "infer" */
#define KMAX DPC_DATA_MAX_CLASSES /* a public class count: [0, KMAX], 0 meaning "infer" */
#define IX(m) DPC_FIELD_AT(dpc_idx_opts, m)
static const dpc_field idx_fields[] = {
    {.name = "scale", .type = DPC_FIELD_DOUBLE, IX(scale), .lo = 0, .hi = INFINITY,
     .flags = DPC_FIELD_LO_OPEN | DPC_FIELD_HI_OPEN | DPC_FIELD_UNSET_ZERO,
     .def_text = "1/255 for ubyte images, else 1",
     .doc = "feature = raw value x scale, a public constant (0: the default by type)"},
    {.name = "n_classes", .type = DPC_FIELD_SIZE, IX(n_classes), .lo = 0, .hi = KMAX, .doc = "public class count, labels < it (0: max label + 1, data-dependent)"},
    {.name = "max_records", .type = DPC_FIELD_SIZE, IX(max_records), .lo = 0, .hi = INFINITY,
     .flags = ALL, .doc = "read only the first K examples (0: all)"},
};
#undef IX

#define LS(m) DPC_FIELD_AT(dpc_libsvm_opts, m)
static const dpc_field libsvm_fields[] = {
    {.name = "d", .type = DPC_FIELD_SIZE, LS(d), .lo = 0, .hi = INFINITY, .flags = ALL,
     .doc = "public feature count, indices <= d (0: the largest index, data-dependent)"},
    {.name = "task", .type = DPC_FIELD_ENUM, LS(task), .def = DPC_TASK_REGRESSION,
     DPC_FIELD_NAMES(task_names), .doc = "regression or classification (labels class indices)"},
    {.name = "n_classes", .type = DPC_FIELD_SIZE, LS(n_classes), .lo = 0, .hi = KMAX, .doc = "classification: public K (0: inferred, data-dependent)"},
    {.name = "max_rows", .type = DPC_FIELD_SIZE, LS(max_rows), .lo = 0, .hi = INFINITY,
     .flags = ALL, .doc = "read only the first K rows (0: all)"},
};
#undef LS

#define NP(m) DPC_FIELD_AT(dpc_npy_opts, m)
static const dpc_field npy_fields[] = {
    {.name = "task", .type = DPC_FIELD_ENUM, NP(task), .def = DPC_TASK_REGRESSION,
     DPC_FIELD_NAMES(task_names), .doc = "regression or classification (targets class indices)"},
    {.name = "n_classes", .type = DPC_FIELD_SIZE, NP(n_classes), .lo = 0, .hi = KMAX, .doc = "classification: public K (0: max label + 1 over the whole file)"},
    {.name = "max_rows", .type = DPC_FIELD_SIZE, NP(max_rows), .lo = 0, .hi = INFINITY,
     .flags = ALL, .doc = "only the first K rows form the set (0: all)"},
    {.name = "first", .type = DPC_FIELD_SIZE, NP(first), .lo = 0, .hi = INFINITY, .flags = ALL,
     .doc = "first row of the shard loaded"},
    {.name = "count", .type = DPC_FIELD_SIZE, NP(count), .lo = 0, .hi = INFINITY, .flags = ALL,
     .doc = "rows of the shard loaded (0: to the end)"},
};
#undef NP

static const char *const header_names[] = {"auto", "yes", "no"};

#define CS(m) DPC_FIELD_AT(dpc_csv_opts, m)
static const dpc_field csv_fields[] = {
    {.name = "header", .type = DPC_FIELD_ENUM, CS(header), .def = DPC_CSV_HEADER_AUTO,
     DPC_FIELD_NAMES(header_names),
     .doc = "first row a header: auto (if its fields are text), yes or no"},
    /* any byte but 0 (','); '"', '#', CR and LF are refused by the loader, not a range */
    {.name = "delimiter", .type = DPC_FIELD_CHAR, CS(delimiter), .def = ',', .lo = 1, .hi = 255,
     .flags = DPC_FIELD_UNSET_ZERO,
     .doc = "field separator, one byte (space: any run of blanks; 0: ',')"},
    {.name = "label_col", .type = DPC_FIELD_LONG, CS(label_col), .def = -1,
     .flags = DPC_FIELD_NO_RANGE,
     .doc = "0-based column of the target; negative counts from the end (-1: the last)"},
    {.name = "label_name", .type = DPC_FIELD_STRING, CS(label_name),
     .doc = "the target is the header column of this name (NULL: label_col)"},
    {.name = "task", .type = DPC_FIELD_ENUM, CS(task), .def = DPC_TASK_REGRESSION,
     DPC_FIELD_NAMES(task_names), .doc = "regression or classification (labels class indices)"},
    {.name = "n_classes", .type = DPC_FIELD_SIZE, CS(n_classes), .lo = 0, .hi = KMAX,
     .doc = "classification, numeric labels: public K, labels < K (0: max label + 1, "
            "data-dependent)"},
    {.name = "classes", .type = DPC_FIELD_STRING, CS(classes),
     .doc = "classification: public class names \"cat|dog\" -> 0, 1 (overrides n_classes)"},
    {.name = "max_rows", .type = DPC_FIELD_SIZE, CS(max_rows), .lo = 0, .hi = INFINITY,
     .flags = ALL, .doc = "read only the first K data rows (0: all)"},
};
#undef CS
#undef ALL
#undef KMAX

static const dpc_field_table idx_table = DPC_FIELD_TABLE(dpc_idx_opts, idx_fields);
static const dpc_field_table libsvm_table = DPC_FIELD_TABLE(dpc_libsvm_opts, libsvm_fields);
static const dpc_field_table npy_table = DPC_FIELD_TABLE(dpc_npy_opts, npy_fields);
static const dpc_field_table csv_table = DPC_FIELD_TABLE(dpc_csv_opts, csv_fields);

const dpc_field_table *dpc_idx_opts_fields(void) { return &idx_table; }
const dpc_field_table *dpc_libsvm_opts_fields(void) { return &libsvm_table; }
const dpc_field_table *dpc_npy_opts_fields(void) { return &npy_table; }
const dpc_field_table *dpc_csv_opts_fields(void) { return &csv_table; }
