/* release.c — the release formula of a step (dpcorr/mech.h: dpc_noise_release), the one home
 * of "(clipped sum + noise_scale (B Z)_t) / B" for the trainer, the privatizer and
 * dpcorr.torch (through ctypes). A non-finite clipped sum is refused here, for every front end:
 * NaN or inf would pass through the noise unchanged, so one example's gradient would decide
 * the released coordinates. */
#include "dpcorr/mech.h"

#include <math.h>

static dpc_status check_args(const void *sum, const double *z, size_t n, double noise_scale,
                             double inv_b, const void *release, dpc_error *err)
{
    if (!(noise_scale >= 0) || !isfinite(noise_scale))
        return dpc_error_param(err, DPC_E_INVALID, "noise_scale",
                               "must be a finite number >= 0, got %g", noise_scale);
    if (!(inv_b > 0) || !isfinite(inv_b))
        return dpc_error_param(err, DPC_E_INVALID, "inv_b", "must be a finite number > 0, got %g",
                               inv_b);
    if (n && !sum) return dpc_error_param(err, DPC_E_INVALID, "clipped_sum", "is NULL");
    if (n && !z) return dpc_error_param(err, DPC_E_INVALID, "z", "is NULL");
    if (n && !release) return dpc_error_param(err, DPC_E_INVALID, "release", "is NULL");
    return DPC_OK;
}

/* Before anything is written (release may alias z: a refused step keeps its noise row). An
 * invalid argument (a ValueError in Python), as the engine and CorrelatedNoise refuse a
 * non-finite gradient. */
static dpc_status refuse_nonfinite(size_t j, size_t n, double v, dpc_error *err)
{
    return dpc_error_param(err, DPC_E_INVALID, "clipped_sum",
                           "coordinate %zu of %zu is %g (a NaN or inf gradient: non-finite data "
                           "or a diverging run); nothing was released",
                           j, n, v);
}

dpc_status dpc_noise_release(const double *clipped_sum, const double *z, size_t n,
                             double noise_scale, double inv_b, double *release, dpc_error *err)
{
    dpc_status st = check_args(clipped_sum, z, n, noise_scale, inv_b, release, err);
    if (st) return st;
    for (size_t p = 0; p < n; p++)
        if (!isfinite(clipped_sum[p])) return refuse_nonfinite(p, n, clipped_sum[p], err);
    for (size_t p = 0; p < n; p++) release[p] = (clipped_sum[p] + noise_scale * z[p]) * inv_b;
    return DPC_OK;
}

dpc_status dpc_noise_release_f32(const float *clipped_sum, const double *z, size_t n,
                                 double noise_scale, float inv_b, float *release, dpc_error *err)
{
    dpc_status st = check_args(clipped_sum, z, n, noise_scale, (double)inv_b, release, err);
    if (st) return st;
    for (size_t p = 0; p < n; p++)
        if (!isfinite(clipped_sum[p])) return refuse_nonfinite(p, n, clipped_sum[p], err);
    for (size_t p = 0; p < n; p++) {
        float w = (float)(noise_scale * z[p]);
        release[p] = (clipped_sum[p] + w) * inv_b;
    }
    return DPC_OK;
}
