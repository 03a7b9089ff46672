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
 * of the dataset is used. Normalise features per example (a GroupNorm layer, model.h), which is
 * also data-independent.
 *
 * Threading: a dpc_scatter is immutable and may be shared; dpc_scatter_apply needs its own
 * scratch per thread. dpc_features_apply runs `threads` threads over disjoint example ranges;
 * the result does not depend on the thread count (each example is computed alone).
 */
#ifndef DPCORR_FEATURES_H
#define DPCORR_FEATURES_H

#include "dpcorr/common.h"
#include "dpcorr/data.h"

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
    size_t J, L; /* scatter: scales and angles (default 2, 8) */
} dpc_features_config;

/* "none" | "scatter[:J=2,L=8]" (either key may be omitted). DPC_E_INVALID naming the spec. */
DPC_API DPC_NODISCARD dpc_status dpc_features_parse(dpc_features_config *cfg, const char *spec,
                                                    dpc_error *err);
/* Canonical spec of cfg into buf (cap, NUL-terminated); returns the full length. */
DPC_API size_t dpc_features_format(const dpc_features_config *cfg, char *buf, size_t cap);

/* *out = the features of every example of in (labels, classes and logs copied; shape set to
 * (C K, h, w) for an in->shape (C, H, W); x_norm_bound 0). in must have an image shape.
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

#ifdef __cplusplus
}
#endif
#endif /* DPCORR_FEATURES_H */
