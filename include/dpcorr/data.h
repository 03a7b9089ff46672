/* dpcorr/data.h — datasets: a dense in-memory type, file loaders (IDX, CSV, LIBSVM; each plain or
 * gzip-compressed; NumPy .npy, memory-mapped), synthetic generators, row preprocessing, the
 * `--data` spec parser and shards of a training set for data-parallel runs.
 *
 * A dataset is n examples of d features, row-major, plus one target per example:
 *
 *     x   (n, d)   x[i*d + j] = feature j of example i
 *     y   (n)      regression (n_classes == 0): a real target;
 *                  classification (n_classes == K >= 1): a class index 0..K-1 stored exactly as a
 *                  double (y[i] == (double)k)
 *
 * Example:
 *     dpc_dataset *train = NULL, *test = NULL;
 *     dpc_error err = {0};
 *     if (dpc_data_load_fashion_mnist(&train, &test, NULL, &err)) fail(err.msg);
 *     // train->n == 60000, train->d == 784, train->n_classes == 10, pixels in [0, 1]
 *     dpc_dataset_free(train); dpc_dataset_free(test);
 *
 * Files. Every loader but npy (memory-mapped) opens its file through zlib, so a gzip-compressed
 * file is recognised by its magic bytes (1f 8b) and read transparently; the name does not matter.
 * Every malformed input is rejected with DPC_E_FORMAT (or DPC_E_IO for an unreadable file) and a
 * one-line message naming the file, the line (text formats) or byte offset and record (IDX;
 * offsets are in the decompressed stream), and the fault. Loaders never read out of bounds, check every size
 * product for overflow, and leave *out == NULL on failure. Formats and the spec syntax are
 * described in doc/data.md.
 *
 * Privacy. The guarantee of a training run covers the examples (x_i, y_i) as they enter the
 * trainer. A transformation applied before training stays inside the guarantee when it is
 * data-independent: a fixed function of one example and public constants (pixels / 255,
 * clipping or normalising a row to a public radius, mapping labels through a public class list).
 * Anything derived from the dataset as a whole (standardisation statistics, a class count or a
 * dimension inferred from the labels / indices) is outside it: such a step sets
 * ds->data_dependent = 1 and describes itself in ds->preprocessing, and the run's report should
 * say so. Pass the public values (n_classes, d) to avoid it.
 *
 * Randomness. Synthetic data and seeded splits are pure functions of (rng key, stream index,
 * parameters): example i uses counter row i of stream DPC_STREAM_ID(DPC_STREAM_DATA,
 * stream_index), so the first m examples of a set of n > m are the set of m, bit for bit.
 *
 * Threading: functions are re-entrant; a dataset may be read concurrently, not modified.
 */
#ifndef DPCORR_DATA_H
#define DPCORR_DATA_H

#include "dpcorr/common.h"
#include "dpcorr/field.h"
#include "dpcorr/rng.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest class count a loader will infer or accept (labels >= this are rejected). */
#define DPC_DATA_MAX_CLASSES 65536
/* A dataset holds at most 2^24 features per example and 2^32 values in all (32 GB of doubles):
 * a small file (a LIBSVM index of 10^12, a huge IDX dimension) is refused with DPC_E_RANGE
 * naming "d" or "n", not an attempt to allocate terabytes. */
#define DPC_DATA_MAX_FEATURES ((size_t)1 << 24)
#define DPC_DATA_MAX_VALUES ((size_t)1 << 32)
/* Counter row of the DPC_STREAM_DATA stream used by dpc_dataset_split (far above any example row
 * a generator uses, so a split never reuses synthetic-data randomness). */
#define DPC_DATA_SPLIT_ROW (UINT64_C(1) << 62)
/* Default Fashion-MNIST directory (Debian package dataset-fashion-mnist). */
#define DPC_DATA_FASHION_MNIST_DIR "/usr/share/datasets/fashion-mnist"

#define DPC_DATA_MAX_RELEASES 4 /* private statistics recorded on a dataset (n_releases) */

typedef struct dpc_dataset {
    size_t n;                /* examples */
    size_t d;                /* features per example (>= 1) */
    size_t n_classes;        /* 0 = regression (y real); K >= 1: y[i] in {0..K-1}, exact */
    double *x;               /* (n, d) row-major, owned */
    double *y;               /* (n), owned */
    double *truth;           /* (d) synthetic sets only, owned, else NULL: linreg / logistic: the
                                ground-truth w* (logistic: unit norm); mean: the true mean */
    double *cov_diag;        /* (d) linreg only, owned, else NULL: diag of H = E[x x^T] (H is
                                diagonal: lambda_k); excess risk = 1/2 sum_k lambda_k (w-w*)_k^2 */
    double x_norm_bound;     /* public B with ||x_i||_2 <= B for every i, guaranteed by how the
                                data were made (IDX bytes / 255: sqrt(d); clip / normalise: the
                                radius; synthetic mean: the radius); 0 = no bound known */
    size_t shape[3];         /* (C, H, W) when every row is an image stored channel-major
                                (C H W = d): IDX images (1, H, W), scattering features
                                (channels, H', W'); all 0 = not an image */
    int data_dependent;      /* 1 = some step or metadata was derived from the data set as a
                                whole (outside the privacy guarantee; see preprocessing) */
    char source[256];        /* origin: "fashion-mnist:train", a file path, a synthetic spec */
    char preprocessing[256]; /* "; "-separated log of what was applied ("" = values as read);
                                data-dependent steps are marked "[data-dependent]" */
    size_t n_releases;       /* private statistics of these records already published (e.g.
                                dpc_features_center_private): release k is a Gaussian mechanism
                                without sampling, noise multiplier release_z[k] (noise std / L2
                                sensitivity, under add/remove and zero-out). dpc_trainer_new
                                composes them into its ledger. Copied with the data. */
    double release_z[DPC_DATA_MAX_RELEASES];
    /* A shard (dpc_data_load_spec_shard): rows [shard_first, shard_first + n) of a set of
     * shard_total rows, the rest held by other ranks. shard_total == 0: not a shard (the n rows
     * are the whole set). Everything else (source, d, classes, bounds) describes the whole set. */
    size_t shard_first, shard_total;
} dpc_dataset;
/* The report's "data" member: the spec as given (NULL: ""), source, row counts (test NULL: 0),
 * features, classes and the preprocessing, with whether it depends on the data. */
struct dpc_json_writer;
DPC_API void dpc_dataset_report_json(struct dpc_json_writer *w, const char *spec,
                                     const dpc_dataset *train, const dpc_dataset *test);

/* The rows of the whole set ds is (a shard: shard_total; else n). */
static inline size_t dpc_dataset_rows(const dpc_dataset *ds)
{
    return ds->shard_total ? ds->shard_total : ds->n;
}

typedef enum dpc_data_task {
    DPC_TASK_REGRESSION = 0,    /* y real, n_classes = 0 */
    DPC_TASK_CLASSIFICATION = 1 /* y a class index */
} dpc_data_task;

/* ==== Dataset object ======================================================================== */

/* Allocates a zero-filled n x d dataset (n may be 0; 1 <= d <= DPC_DATA_MAX_FEATURES, n d <=
 * DPC_DATA_MAX_VALUES, n_classes <= DPC_DATA_MAX_CLASSES).
 * DPC_E_NOMEM if n*d overflows or allocation fails. Caller frees with dpc_dataset_free. */
DPC_API DPC_NODISCARD dpc_status dpc_dataset_new(dpc_dataset **out, size_t n, size_t d,
                                                 size_t n_classes, dpc_error *err);
/* Frees the dataset and its arrays. Accepts NULL. */
DPC_API void dpc_dataset_free(dpc_dataset *ds);

/* A 64-bit hash of the dataset's content: n, d, n_classes and the bit patterns of every x and y
 * (word-wise FNV-1a with a final avalanche; O(n d), about 1 ns per value). Checkpoints record it
 * to refuse a resume on edited data; not a cryptographic hash. 0 for NULL. */
DPC_API uint64_t dpc_dataset_hash(const dpc_dataset *ds);

/* The pieces of dpc_dataset_hash, for a set held in shards by several processes: begin with the
 * whole set's (n, d, n_classes), add every row's features in row order (shard after shard), then
 * every target in row order, and end: the same value as dpc_dataset_hash of the whole set. */
DPC_API uint64_t dpc_dataset_hash_begin(size_t n, size_t d, size_t n_classes);
DPC_API uint64_t dpc_dataset_hash_add(uint64_t h, const double *v, size_t count);
DPC_API uint64_t dpc_dataset_hash_end(uint64_t h);

/* Validates a dataset before training: n >= 1, d >= 1, every x and y finite (DPC_E_NUMERIC,
 * naming example and feature), classification labels integers in 0..K-1 (DPC_E_INVALID), rows
 * within x_norm_bound (if set; relative slack 1e-12). */
DPC_API DPC_NODISCARD dpc_status dpc_dataset_check(const dpc_dataset *ds, dpc_error *err);

/* Train/test compatibility: same d (DPC_E_FORMAT "dimension mismatch"), same task, test labels
 * below the train class count. */
DPC_API DPC_NODISCARD dpc_status dpc_dataset_check_compatible(const dpc_dataset *train,
                                                              const dpc_dataset *test,
                                                              dpc_error *err);

/* *out = the examples idx[0..m) of ds, in that order (indices may repeat; each must be < n).
 * Copies truth / cov_diag / bounds / logs / releases. */
DPC_API DPC_NODISCARD dpc_status dpc_dataset_select(dpc_dataset **out, const dpc_dataset *ds,
                                                    const size_t *idx, size_t m, dpc_error *err);

/* Splits ds into *first (n_first examples) and *second (the other n - n_first), n_first <= n.
 * rng == NULL: first = rows 0..n_first-1, second = the rest (file order).
 * rng != NULL: a uniformly random subset of size n_first, chosen by a partial Fisher-Yates
 * shuffle with dpc_rng_below(stream, DPC_DATA_SPLIT_ROW, i, ...), stream =
 * DPC_STREAM_ID(DPC_STREAM_DATA, stream_index); both parts keep the original relative order.
 * Either output pointer may be NULL if that part is not wanted. The split depends only on
 * (rng, stream_index, n, n_first), never on the values, so it is data-independent. */
DPC_API DPC_NODISCARD dpc_status dpc_dataset_split(dpc_dataset **first, dpc_dataset **second,
                                                   const dpc_dataset *ds, size_t n_first,
                                                   const dpc_rng *rng, uint64_t stream_index,
                                                   dpc_error *err);

/* ==== Preprocessing ========================================================================= */
/* The first four are data-independent (per-example functions of public constants) and keep
 * the privacy guarantee; each is logged in ds->preprocessing. */

/* x <- c * x for a public finite constant c != 0 (x_norm_bound scales with |c|). */
DPC_API DPC_NODISCARD dpc_status dpc_dataset_scale(dpc_dataset *ds, double c, dpc_error *err);

/* x_i <- x_i * min(1, radius / ||x_i||_2): every row afterwards has ||x_i||_2 <= radius exactly
 * (as computed in floating point). radius > 0 finite; sets x_norm_bound = radius (or keeps a
 * smaller existing bound). DPC_E_NUMERIC if a feature is NaN/Inf. */
DPC_API DPC_NODISCARD dpc_status dpc_dataset_clip_rows(dpc_dataset *ds, double radius,
                                                       dpc_error *err);

/* x_i <- radius * x_i / ||x_i||_2 (all-zero rows stay zero). Sets x_norm_bound = radius. */
DPC_API DPC_NODISCARD dpc_status dpc_dataset_normalize_rows(dpc_dataset *ds, double radius,
                                                            dpc_error *err);

/* Declares the public class count K: checks every label is an integer in 0..K-1 (DPC_E_INVALID
 * naming the example) and sets n_classes = K. If the previous count was inferred from the data,
 * this does not clear data_dependent (the log keeps the history). ds must be a classification
 * set. */
DPC_API DPC_NODISCARD dpc_status dpc_dataset_set_classes(dpc_dataset *ds, size_t n_classes,
                                                         dpc_error *err);

/* DATA-DEPENDENT (outside the privacy guarantee): per-feature standardisation with the mean and
 * standard deviation of `train` (features with zero spread are only centred), applied to train
 * and, if non-NULL, to test. Sets data_dependent = 1 on both and clears x_norm_bound. */
DPC_API DPC_NODISCARD dpc_status dpc_dataset_standardize(dpc_dataset *train, dpc_dataset *test,
                                                         dpc_error *err);

/* ==== Loaders =============================================================================== */

/* IDX (LeCun's MNIST format): bytes 00 00 <type> <ndim>, ndim big-endian uint32 dimensions, then
 * the data, big-endian, C order. Types 08 ubyte, 09 sbyte, 0B int16, 0C int32, 0D float32,
 * 0E float64. The images file has dims (n, d1, d2, ...) and gives d = d1*d2*... features; the
 * labels file is 1-dimensional (n) of an integer type. Zero-initialised options = defaults. */
typedef struct dpc_idx_opts {
    double scale;       /* feature = raw value * scale, a public constant. 0 = default: raw / 255
                           (exactly rounded) for ubyte images, raw * 1 otherwise */
    size_t n_classes;   /* public class count (labels must be < it); 0 = infer max label + 1
                           (data-dependent) */
    size_t max_records; /* 0 = all; else only the first max_records examples are read */
} dpc_idx_opts;
/* Its field table (dpcorr/field.h; the zeroed struct is the default). */
DPC_API const dpc_field_table *dpc_idx_opts_fields(void);

/* Loads an images file and its labels file (each plain or gzip). opts may be NULL (defaults).
 * Faults reported: unreadable file, truncated header or data (byte offset and record), bad
 * magic, unknown type, labels not 1-D or not integer, empty set, image/label count mismatch,
 * trailing bytes, label out of range, non-finite float values, n*d overflow. */
DPC_API DPC_NODISCARD dpc_status dpc_data_load_idx(dpc_dataset **out, const char *images_path,
                                                   const char *labels_path,
                                                   const dpc_idx_opts *opts, dpc_error *err);

/* Fashion-MNIST (Xiao et al. 2017) from dir (NULL = DPC_DATA_FASHION_MNIST_DIR): files
 * {train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz]. train: 60000 x 784, test: 10000 x 784,
 * 10 classes (public), pixels / 255 in [0, 1], x_norm_bound = 28. Either output may be NULL to
 * skip that split. */
DPC_API DPC_NODISCARD dpc_status dpc_data_load_fashion_mnist(dpc_dataset **train,
                                                             dpc_dataset **test, const char *dir,
                                                             dpc_error *err);

typedef enum dpc_csv_header {
    DPC_CSV_HEADER_AUTO = 0, /* the first row is a header if its fields are text, data if
                                none is; text mixed with numbers is an error (forced on by
                                label_name; with named classes the label field is ignored) */
    DPC_CSV_HEADER_YES = 1,
    DPC_CSV_HEADER_NO = 2
} dpc_csv_header;

/* CSV options. Start from dpc_csv_opts_default(). */
typedef struct dpc_csv_opts {
    dpc_csv_header header;
    char delimiter;         /* field separator; ' ' = any run of spaces/tabs. 0 = ',' */
    long label_col;         /* 0-based column of the target; negative counts from the end
                               (-1 = last column) */
    const char *label_name; /* non-NULL: the target is the header column with this name */
    dpc_data_task task;
    size_t n_classes;       /* classification, numeric labels: public K (labels must be < K);
                               0 = infer max label + 1 (data-dependent) */
    const char *classes;    /* classification: public class names "cat|dog|bird" -> 0, 1, 2; the
                               label field must be one of them. Overrides n_classes. */
    size_t max_rows;        /* 0 = all; else only the first max_rows data rows are read */
} dpc_csv_opts;

/* Defaults: header auto, delimiter ',', label_col -1 (last), regression, no limits (the
 * defaults of its field table). */
DPC_API dpc_csv_opts dpc_csv_opts_default(void);
/* Its field table (dpcorr/field.h): a delimiter is a DPC_FIELD_CHAR, label_col a
 * DPC_FIELD_LONG. */
DPC_API const dpc_field_table *dpc_csv_opts_fields(void);

/* Loads a CSV file (plain or gzip). Fields may be surrounded by blanks and may be double-quoted
 * ("" escapes a quote; no newlines inside quotes). Blank lines and lines starting with '#' are
 * skipped; a UTF-8 byte-order mark is ignored. Numbers are C decimal or hex floats (strtod,
 * whole field). Classification labels are
 * integers (1.0 is accepted as 1) in 0..K-1; the binary convention -1/+1 is read as 0/1 when
 * K is 2 or inferred (an error if the file also has label 0). opts may be NULL (defaults).
 * Faults: empty file, ragged rows, empty or non-numeric fields, NaN/Inf, label column out of
 * range or name not in the header, label out of range / non-integer / not a listed class,
 * unterminated quote, NUL bytes, no feature column. */
DPC_API DPC_NODISCARD dpc_status dpc_data_load_csv(dpc_dataset **out, const char *path,
                                                   const dpc_csv_opts *opts, dpc_error *err);

/* LIBSVM / SVMlight options. Zero-initialised = defaults. */
typedef struct dpc_libsvm_opts {
    size_t d;           /* number of features (public); indices must be <= d. 0 = infer as the
                           largest index (data-dependent) */
    dpc_data_task task;
    size_t n_classes;   /* classification: public K; 0 = infer (data-dependent) */
    size_t max_rows;    /* 0 = all */
} dpc_libsvm_opts;
/* Its field table (dpcorr/field.h; the zeroed struct is the default). */
DPC_API const dpc_field_table *dpc_libsvm_opts_fields(void);

/* Loads "label idx:value idx:value ..." lines (plain or gzip): indices 1-based, strictly
 * increasing; absent features are 0; '#' starts a comment; blank lines skipped. Labels as for
 * CSV. Faults: malformed pair, index 0 / out of range / unsorted / duplicate, non-numeric or
 * non-finite value or label, "qid:" (unsupported), empty file. opts may be NULL. */
DPC_API DPC_NODISCARD dpc_status dpc_data_load_libsvm(dpc_dataset **out, const char *path,
                                                      const dpc_libsvm_opts *opts,
                                                      dpc_error *err);

/* NumPy .npy (format versions 1.0, 2.0 and 3.0), read through a memory map: features a 2-D
 * array (n, d) of dtype '<f8' or '<f4' in C order (fortran_order False); targets a second file,
 * a 1-D array (n) of '<f8', '<f4', '<i8', '<i4', '|u1' or '|i1' (np.save(X) and np.save(y) as
 * scikit-learn and PyTorch users hold them). Only the rows asked for are touched: the map is
 * read in blocks that are released after their rows are copied (converted to double), so a file
 * larger than memory can be read in shards. Refused, naming the file and the header field or
 * the row: not a .npy (magic), gzip-compressed (cannot be mapped), unknown version, a header
 * that is not the dict numpy writes, 'descr' of another dtype or byte order, 'fortran_order'
 * True, 'shape' of another rank or with a zero dimension, a file shorter (truncated) or longer
 * than the header says, labels of another length, NaN/Inf features or targets, labels that are
 * not classes. */
typedef struct dpc_npy_opts {
    dpc_data_task task; /* classification: targets are class indices */
    size_t n_classes;   /* classification: public K; 0 = infer max label + 1 over every label of
                           the file (data-dependent; the same on every shard) */
    size_t max_rows;    /* 0 = all; else only the first max_rows rows form the set */
    size_t first, count; /* rows [first, first + count) of the (limited) set are loaded; count 0
                            = to the end. A proper part makes a shard (shard_first, shard_total) */
} dpc_npy_opts;
/* Its field table (dpcorr/field.h; the zeroed struct is the default). */
DPC_API const dpc_field_table *dpc_npy_opts_fields(void);

DPC_API DPC_NODISCARD dpc_status dpc_data_load_npy(dpc_dataset **out, const char *path,
                                                   const char *labels_path,
                                                   const dpc_npy_opts *opts, dpc_error *err);

/* ==== Synthetic data ======================================================================== */
/* All generators are deterministic functions of (rng key, stream_index < 2^32, parameters);
 * example i uses counter row i. Set source to a description of the parameters. */

/* Gaussian linear regression (nu-DP-FTRL paper §2.2 / Figure 2; adaptive-clipping paper §5):
 *     x_i ~ N(0, H),  H = diag(lambda_1..lambda_d),  lambda_k = k^-alpha  (k = 1..d)
 *     y_i = <w*, x_i> + xi_i,   xi_i ~ N(0, noise_std^2) independent of x_i
 * x_ij = sqrt(lambda_j) * gaussian(row i, index j), xi_i = noise_std * gaussian(row i, index d).
 * w_star (d) or NULL = (1, ..., 1)/sqrt(d) (unit norm). alpha >= 0, noise_std >= 0, finite.
 * Sets truth = w*, cov_diag = lambda; regression (n_classes 0). */
DPC_API DPC_NODISCARD dpc_status dpc_data_synth_linreg(dpc_dataset **out, const dpc_rng *rng,
                                                       uint64_t stream_index, size_t n, size_t d,
                                                       double alpha, double noise_std,
                                                       const double *w_star, dpc_error *err);

/* As dpc_data_synth_linreg with an arbitrary spectrum lambda (d), each lambda_k > 0 finite
 * (e.g. geometric 1 .. 1/kappa for a condition number kappa). */
DPC_API DPC_NODISCARD dpc_status dpc_data_synth_linreg_spectrum(dpc_dataset **out,
                                                                const dpc_rng *rng,
                                                                uint64_t stream_index, size_t n,
                                                                size_t d, const double *lambda,
                                                                double noise_std,
                                                                const double *w_star,
                                                                dpc_error *err);

/* Fills lambda[k-1] = k^-alpha, k = 1..d (the default spectrum). */
DPC_API void dpc_data_spectrum_power(double *lambda, size_t d, double alpha);

/* Mean estimation in a bounded set (nu-DP-FTRL paper §2.1: z in [-1, 1], |z - Ez| <= sigma):
 *     x_i = mean + spread * u_i,   u_i uniform on the unit sphere S^{d-1} (d = 1: +-1)
 * so E x = mean exactly, ||x_i - mean||_2 = spread, Cov = spread^2/d I, and every row lies in
 * the L2 ball of radius `radius` (requires ||mean|| + spread <= radius; x_norm_bound = radius).
 * u_i = g/||g|| with g_j = gaussian(row i, index j). mean (d) or NULL = every coordinate
 * radius / (2 sqrt(d)) (norm radius/2). y is unused (all 0), n_classes 0; truth = mean. */
DPC_API DPC_NODISCARD dpc_status dpc_data_synth_mean(dpc_dataset **out, const dpc_rng *rng,
                                                     uint64_t stream_index, size_t n, size_t d,
                                                     const double *mean, double spread,
                                                     double radius, dpc_error *err);

/* Linearly separable binary data with a margin:
 *     g_i ~ N(0, I_d),  s_i = sign(<w, g_i>) (+1 at 0),  x_i = g_i + s_i * margin * w
 *     y_i = (s_i > 0), then flipped with probability flip_prob (uniform(row i, index d))
 * with w = w_star / ||w_star|| (w_star NULL = (1..1)/sqrt(d)). Every unflipped example has
 * signed distance s_i <w, x_i> >= margin from the separating hyperplane <w, x> = 0.
 * margin >= 0, 0 <= flip_prob < 1/2. n_classes 2; truth = w. */
DPC_API DPC_NODISCARD dpc_status dpc_data_synth_logistic(dpc_dataset **out, const dpc_rng *rng,
                                                         uint64_t stream_index, size_t n,
                                                         size_t d, double margin,
                                                         double flip_prob, const double *w_star,
                                                         dpc_error *err);

/* ==== Spec strings (the CLI's --data) ======================================================= */

/* Loads the dataset described by spec (syntax in dpc_data_spec_help() and doc/data.md), e.g.
 *     "fashion-mnist"   "fashion-mnist:dir=/data/fm,limit=1000"
 *     "csv:train.csv,label=price,test=test.csv"   "libsvm:a9a.txt,d=123,task=classification"
 *     "idx:imgs.gz,labels=lbls.gz"   "synthetic:linreg,n=1000,d=10,alpha=1,noise=0.1,test-n=500"
 * *train receives the training set. If test != NULL, *test receives the held-out set (an
 * explicit test file, Fashion-MNIST's t10k, synthetic test-n, or holdout=F), or NULL if the spec
 * has none. rng is needed for synthetic data and random holdout (else DPC_E_INVALID); it may be
 * NULL otherwise. Spec errors are DPC_E_INVALID naming the option. */
DPC_API DPC_NODISCARD dpc_status dpc_data_load_spec(dpc_dataset **train, dpc_dataset **test,
                                                    const char *spec, const dpc_rng *rng,
                                                    dpc_error *err);

/* Which rows of the training set this process holds (data-parallel training, doc/distributed.md):
 * rank r of `ranks` holds the contiguous rows [floor(N r / ranks), floor(N (r + 1) / ranks)) of
 * the N training rows, and at most max_bytes bytes of them (features and targets in double:
 * rows x (d + 1) x 8; 0 = no limit). */
typedef struct dpc_data_shard {
    size_t rank, ranks; /* ranks 0 or 1: the whole set */
    size_t max_bytes;   /* the field named "max_data_bytes" in errors */
} dpc_data_shard;

/* The first row of rank r's shard of n rows (r = ranks: n). */
static inline size_t dpc_data_shard_row(size_t n, size_t r, size_t ranks)
{
    return n / ranks * r + n % ranks * r / ranks; /* floor(n r / ranks) without overflow */
}

/* dpc_data_load_spec for one rank's shard of the training set (shard NULL or ranks <= 1: the
 * whole set; the test set is always whole). npy and synthetic sets without holdout= or
 * standardize= read only their rows; other specs are read whole and then cut (the memory of the
 * whole set is needed while loading). The shard's bytes (or for a spec read whole, the whole
 * set's) above shard->max_bytes are refused with DPC_E_RANGE, field "max_data_bytes", before the
 * rows are read when the format allows. */
DPC_API DPC_NODISCARD dpc_status dpc_data_load_spec_shard(dpc_dataset **train, dpc_dataset **test,
                                                          const char *spec, const dpc_rng *rng,
                                                          const dpc_data_shard *shard,
                                                          dpc_error *err);

/* The files spec reads (for front ends that refuse an output which is one of their inputs): the
 * paths it names (csv, libsvm: PATH and test=; idx: IMAGES, labels=, test=, test-labels=) and
 * for fashion-mnist the eight candidate files of its directory (plain and .gz). *files receives
 * the *count paths one after the other, each ending with a NUL (malloc'ed, caller frees; NULL
 * and 0 for synthetic data). Only the syntax of KIND:ITEM,... is checked here (DPC_E_INVALID);
 * the loader checks the rest. */
DPC_API DPC_NODISCARD dpc_status dpc_data_spec_files(const char *spec, char **files,
                                                     size_t *count, dpc_error *err);

/* Static help text describing the spec syntax (for --help). */
DPC_API const char *dpc_data_spec_help(void);

#ifdef __cplusplus
}
#endif
#endif /* DPCORR_DATA_H */
