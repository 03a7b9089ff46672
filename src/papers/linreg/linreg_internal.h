/* linreg_internal.h — shared by the files of src/linreg (not installed). */
#ifndef DPCORR_SRC_LINREG_INTERNAL_H
#define DPCORR_SRC_LINREG_INTERNAL_H

#include "dpcorr/papers/linreg.h"

/* <a, b> over n entries, summed left to right (one fixed order everywhere). */
static inline double dpc__lr_dot(const double *a, const double *b, size_t n)
{
    double s = 0.0;
    for (size_t j = 0; j < n; j++) s += a[j] * b[j];
    return s;
}

/* In-place Cholesky of the symmetric positive definite n x n matrix a (row-major, lower triangle
 * used and overwritten with L, a = L L^T). Returns 0, or 1 when a is not positive definite. */
int dpc__lr_cholesky(double *a, size_t n);
/* Solves L L^T x = b in place (b becomes x) with the factor from dpc__lr_cholesky. */
void dpc__lr_cholesky_solve(const double *l, size_t n, double *b);

#endif
