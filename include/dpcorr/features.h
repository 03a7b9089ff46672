/* dpcorr/features.h — handcrafted feature transforms of image datasets: the scattering transform
 * (ScatterNet) of Oyallon & Mallat ("Deep roto-translation scattering for object
 * classification", CVPR 2015; Bruna & Mallat 2013), as used by Tramer & Boneh ("Differentially
 * private learning needs better features (or much more data)", ICLR 2021), computed once per
 * dataset and cached on disk.
 *
 * The transform follows kymatio's Scattering2D (the filter bank facts of
 * kymatio/scattering2d/filter_bank.py; doc/data.md §Features), in double precision:
 *   - the image (H, W) is reflect-padded to Hp = (floor((H + 2^J) / 2^J) + 1) 2^J (same for W;
 *     28 -> 36 for J = 2), all convolutions are circular on the padded grid, in Fourier;
 *   - wavelets psi_{j,l} (j < J, l < L): Morlet filters with sigma = 0.8 2^j, angle
 *     theta = (L/2 - 1 - l) pi / L, central frequency xi = 3 pi / (4 2^j), slant 4 / L, built in
 *     space as a 5 x 5 periodised sum of Gaussians times plane waves, minus the multiple of the
 *     envelope that gives zero mean, normalised by 2 * 3.1415 sigma^2 / slant (kymatio's
 *     constant); the low-pass phi is the Gaussian with sigma = 0.8 2^(J-1), slant 1;
 *   - lower resolutions use the filters' Fourier transforms masked to the central band and
 *     periodised (kymatio's periodize_filter_fft), subsampling is periodisation in Fourier;
 *   - outputs, each low-passed by phi, subsampled by 2^J and cropped by one pixel per side
 *     (H' = H / 2^J, 7 for 28): S0 = x * phi, S1 = |x * psi_l1| * phi (J L of them, j1 major),
 *     S2 = ||x * psi_l1| * psi_l2| * phi for j2 > j1 (L^2 J (J - 1) / 2, l1 major then l2).
 * J = 2, L = 8 on a 28 x 28 image gives 1 + 16 + 64 = 81 channels of 7 x 7 (3969 features),
 * stored channel-major. The test (tests/test_features.c) checks it against a direct
 * spatial-domain circular convolution written in numpy (tests/gen/scatter_oracle.py).
 *
 * Privacy: the transform is a fixed function of one image and public constants, so features
 * computed from private images stay inside the training run's guarantee (data.h); no statistic
 * of the dataset is used. Normalise features per example (dpc_features_group_norm, or a
 * GroupNorm layer, model.h), which is also data-independent. The one data-dependent step,
 * dpc_features_center_private, releases the training set's mean by the Gaussian mechanism and
 * records that release on the dataset (dpc_dataset.release_z), so that the trainer composes
 * it into the run's ledger.
 *
 * Threading: a dpc_scatter is immutable and may be shared; dpc_scatter_apply needs its own
 * scratch per thread. dpc_features_apply runs `threads` threads over disjoint example ranges;
 * the result does not depend on the thread count (each example is computed alone).
 */
#ifndef DPCORR_FEATURES_H
#define DPCORR_FEATURES_H

#include "dpcorr/common.h"
#include "dpcorr/data.h"
#include "dpcorr/field.h"
#include "dpcorr/rng.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DPC_SCATTER_MAX_J 4
#define DPC_SCATTER_MAX_L 16

typedef struct dpc_scatter dpc_scatter; /* filters and FFT plans for one image size (opaque) */

/* Builds the transform for (H, W) images: 2^J <= min(H, W), 1 <= J <= DPC_SCATTER_MAX_J,
 * 1 <= L <= DPC_SCATTER_MAX_L. */
DPC_API DPC_NODISCARD dpc_status dpc_scatter_new(dpc_scatter **out, size_t H, size_t W, size_t J,
                                                 size_t L, dpc_error *err);
DPC_API void dpc_scatter_free(dpc_scatter *s); /* NULL is a no-op */
/* Channels K = 1 + J L + L^2 J (J - 1) / 2 and output size (H / 2^J, W / 2^J) of one image. */
DPC_API void dpc_scatter_shape(const dpc_scatter *s, size_t *channels, size_t *h, size_t *w);
/* Doubles of scratch dpc_scatter_apply needs. */
DPC_API size_t dpc_scatter_scratch_len(const dpc_scatter *s);
/* out (K, h, w) = the scattering coefficients of img (H, W), row-major. */
DPC_API void dpc_scatter_apply(const dpc_scatter *s, const double *img, double *out,
                               double *scratch);

/* ==== Dataset transforms (the CLI's --features) ========================================== */

typedef enum dpc_features_kind {
    DPC_FEATURES_NONE = 0,
    DPC_FEATURES_SCATTER = 1
} dpc_features_kind;

typedef struct dpc_features_config {
    dpc_features_kind kind;
    size_t J, L;   /* scatter: scales and angles (default 2, 8) */
    size_t groups; /* > 0: per-example GroupNorm of the features in `groups` groups of whole
                      channels (dpc_features_group_norm, applied by dpc_features_apply after the
                      cache); 0 (default): none */
    double center; /* > 0: private centering with this noise multiplier
                      (dpc_features_center_private, which the caller runs on the train/test pair
                      after dpc_features_apply; needs groups > 0 for the norm bound); 0: none */
} dpc_features_config;

/* The field table of dpc_features_config (dpcorr/field.h): name, type, offset, default, range and
 * one-line doc of every field; dpc_features_parse starts from its defaults and
 * dpc_features_apply range-checks through it. */
DPC_API const dpc_field_table *dpc_features_config_fields(void);

/* "none" | "scatter[:J=2,L=8][,gn=G][,center=Z]" (every key optional, separated by ',' or ':';
 * center needs gn). DPC_E_INVALID naming the spec. */
DPC_API DPC_NODISCARD dpc_status dpc_features_parse(dpc_features_config *cfg, const char *spec,
                                                    dpc_error *err);
/* Canonical spec of cfg into buf (cap, NUL-terminated); returns the full length. */
DPC_API size_t dpc_features_format(const dpc_features_config *cfg, char *buf, size_t cap);

/* *out = the features of every example of in (labels, classes, logs and releases copied; shape
 * set to (C K, h, w) for an in->shape (C, H, W); x_norm_bound 0), followed by the per-example
 * GroupNorm when cfg->groups > 0 (never cached: it is cheap). in must have an image shape.
 * cache_dir: NULL = no cache; else the directory (created if missing, mode 0700) holding
 * "scatter-J<J>-L<L>-<input hash>.bin": a 64-bit hash of in's shape, x and y names the file, whose
 * header repeats it with the parameters and a hash of the stored features; a file that matches
 * is loaded (its content hash verified), anything else is recomputed and the file rewritten
 * (atomically: temporary file, rename). A cache that cannot be written is not an error.
 * *cache_hit (may be NULL) = 1 when the features came from the cache. threads >= 1. */
DPC_API DPC_NODISCARD dpc_status dpc_features_apply(dpc_dataset **out, const dpc_dataset *in,
                                                    const dpc_features_config *cfg,
                                                    const char *cache_dir, size_t threads,
                                                    int *cache_hit, dpc_error *err);

/* ==== Normalisation ======================================================================== */

/* Per-example GroupNorm in place (Wu & He 2018; no affine parameters, eps 1e-5, as the model's
 * gn<G>n layer): ds->shape (C, H, W) with groups dividing C; group g of example i holds
 * channels [g C / G, (g + 1) C / G) and is standardised by its own mean and population
 * variance. Data-independent. Afterwards ||x_i|| <= sqrt(d) for every row as stored, and
 * ds->x_norm_bound = sqrt(d). */
DPC_API DPC_NODISCARD dpc_status dpc_features_group_norm(dpc_dataset *ds, size_t groups,
                                                         dpc_error *err);

/* Private centering: the mean half of Tramer & Boneh's DataNorm (ICLR 2021), per coordinate.
 * Releases mu = (sum_i x_i + N(0, (z R)^2 I)) / n with R = train->x_norm_bound (required > 0:
 * a public bound on every row's norm, hence the L2 sensitivity of the sum under add/remove and
 * zero-out) and z = noise_multiplier: one Gaussian mechanism with noise multiplier z; n is
 * public (as for the trainer's sampling rate). The noise is stream
 * DPC_STREAM_ID(DPC_STREAM_STAT, 0) of rng, row 0, index = coordinate. Subtracts mu from every
 * row of train and of test (may be NULL; same d), records z in train->release_z (the trainer
 * composes it into its ledger), logs the step on both, and sets their x_norm_bound to 0 (no
 * bound tracked). mean (may be NULL): (d) receives mu. The sum runs over the examples in order. */
DPC_API DPC_NODISCARD dpc_status dpc_features_center_private(dpc_dataset *train,
                                                             dpc_dataset *test,
                                                             double noise_multiplier,
                                                             const dpc_rng *rng, double *mean,
                                                             dpc_error *err);

/* The member "normalization" of a run's report (dpcorr/io.h's writer) for features cfg trained
 * with ledger L: kind "private" with centering (the method, groups, the release's noise
 * multiplier L->pre_noise_multiplier[0] (NAN without one), its epsilon alone L->epsilon_pre and
 * how it is accounted), "data-independent" with GroupNorm only (method, groups), else "none". */
struct dpc_json_writer;
struct dpc_ledger;
DPC_API void dpc_features_normalization_report_json(struct dpc_json_writer *w,
                                                    const dpc_features_config *cfg,
                                                    const struct dpc_ledger *L);

#ifdef __cplusplus
}
#endif
#endif /* DPCORR_FEATURES_H */
