/* dpcorr/bspline.h — uniform cubic B-splines: the basis of the KAN model kind (dpcorr/model.h)
 * and of the KAN paper's two-layer network (dpcorr/papers/kan.h). Pure functions on a plain
 * value type.
 *
 * G intervals of width h = (hi - lo)/G on [lo, hi], extended by three knots on each side:
 * t_k = lo + (k - 3) h, k = 0..G+6. Basis b_k (k = 0..p-1, p = G + 3) is the cardinal cubic
 * B-spline on [t_k, t_{k+4}]; on [lo, hi] the p bases are a partition of unity, and at any x
 * at most 4 consecutive ones are nonzero. On the interval [t_j, t_{j+1}) with u = (x - t_j)/h:
 *     b_{j-3} = (1-u)^3/6,  b_{j-2} = (3u^3 - 6u^2 + 4)/6,  b_{j-1} = (-3u^3 + 3u^2 + 3u + 1)/6,
 *     b_j = u^3/6;   b' = (d/du)/h,  b'' = (d^2/du^2)/h^2.
 * Outside [t_0, t_{G+6}) every basis is 0. */
#ifndef DPCORR_BSPLINE_H
#define DPCORR_BSPLINE_H

#include "dpcorr/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dpc_bspline {
    size_t grid; /* G >= 1 */
    size_t p;    /* G + 3 bases */
    double lo, hi;
    double h;    /* (hi - lo) / G */
} dpc_bspline;

#define DPC_BSPLINE_MAX_GRID 4096

/* Fills *s. grid in 1..DPC_BSPLINE_MAX_GRID, lo < hi finite. */
DPC_API DPC_NODISCARD dpc_status dpc_bspline_init(dpc_bspline *s, size_t grid, double lo,
                                                     double hi, dpc_error *err);

/* The nonzero-capable bases at x: returns their number n (0..4) and *first, the index of the
 * first; v[j] = b_{first+j}(x), d1[j] = b'_{first+j}(x), d2[j] = b''_{first+j}(x) for j < n
 * (d1, d2 may be NULL). Bases with an index outside 0..p-1 are not reported; x must be
 * finite (NaN gives n = 0). */
DPC_API size_t dpc_bspline_eval(const dpc_bspline *s, double x, size_t *first, double v[4],
                                   double d1[4], double d2[4]);

/* All p values: v (p), d1 (p) or NULL, d2 (p) or NULL; zeros where inactive. */
DPC_API void dpc_bspline_eval_all(const dpc_bspline *s, double x, double *v, double *d1,
                                     double *d2);

/* Reference for b_k(x): the Cox-de Boor recursion on the knot vector (no closed form). */
DPC_API double dpc_bspline_eval_naive(const dpc_bspline *s, size_t k, double x);

#ifdef __cplusplus
}
#endif
#endif /* DPCORR_BSPLINE_H */
