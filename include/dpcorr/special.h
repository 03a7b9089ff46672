/* dpcorr/special.h — special functions shared by the core (gamma_inf of nu-DP-FTRL in mech) and
 * the paper modules (the nu-DP-FTRL stationary-error theory).
 *
 * Complete elliptic integrals, modulus convention (the nu-DP-FTRL paper's eq. 94), 0 <= k < 1
 * (K(1) = inf, E(1) = 1). K by the AGM: K = pi / (2 AGM(1, sqrt(1-k^2))); E and Pi by Carlson's
 * R_F, R_D, R_J (Carlson 1995; DLMF 19.25.1): Pi(n, k) = R_F(0, 1-k^2, 1) + (n/3)
 * R_J(0, 1-k^2, 1, 1-n), n < 1. NaN outside the domain. Relative accuracy ~1e-15. Pure functions. */
#ifndef DPCORR_SPECIAL_H
#define DPCORR_SPECIAL_H

#include "dpcorr/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Complete elliptic integrals K(k), E(k), Pi(n, k) of modulus k in [0, 1] (not the parameter
 * m = k^2); NaN outside the domain, K(1) = INFINITY. */
DPC_API double dpc_special_ellip_k(double k);
DPC_API double dpc_special_ellip_e(double k);
DPC_API double dpc_special_ellip_pi(double n, double k);
/* Carlson symmetric integrals (x, y, z >= 0, at most one zero; p != 0; R_J for p > 0 only). */
DPC_API double dpc_special_carlson_rf(double x, double y, double z);
DPC_API double dpc_special_carlson_rd(double x, double y, double z);
DPC_API double dpc_special_carlson_rj(double x, double y, double z, double p);

#ifdef __cplusplus
}
#endif
#endif /* DPCORR_SPECIAL_H */
