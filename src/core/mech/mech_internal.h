/* mech_internal.h — the dpc_mech object and helpers shared by the files of src/mech (not public). */
#ifndef DPCORR_SRC_MECH_INTERNAL_H
#define DPCORR_SRC_MECH_INTERNAL_H

#include "dpcorr/mech.h"

/* How the streaming generator realises B Z for a kind. */
typedef enum mech_engine {
    ENGINE_FIR,   /* B has finite support b_len (<= n): out_t = sum_j b_j z_{t-j} */
    ENGINE_IIR,   /* C has finite support c_len: C x = z solved forward over outputs */
    ENGINE_BLT,   /* C is a BLT: k recurrences on past outputs */
    ENGINE_DENSE, /* explicit n x n B */
    ENGINE_TREE   /* dyadic nodes, plain or Honaker */
} mech_engine;

struct dpc_mech {
    dpc_mech_params p;   /* arrays point to the owned copies below */
    double *theta, *omega, *coeffs_in, *dense_in;
    mech_engine engine;
    size_t n;
    /* Toeplitz kinds: first n coefficients of B (noising) and C (strategy). */
    double *bcoef; /* (n) */
    double *ccoef; /* (n) */
    size_t b_len;  /* support of B: b_j = 0 for j >= b_len (b_len = n when not banded) */
    size_t c_len;  /* support of C */
    /* DENSE: (n, n) row-major lower-triangular B and C. */
    double *Bd, *Cd;
};

/* Series helpers (mech_series.c). Lengths are numbers of coefficients. */
/* out = 1 / a as power series, first n terms; a[0] != 0; a has la terms (zero beyond). */
int dpc__series_reciprocal(double *out, size_t n, const double *a, size_t la);
/* Coefficients of (1 - x)^(1/2) (sign = +1) or (1 - x)^(-1/2) (sign = -1), first n terms. */
void dpc__series_sqrt1mx(double *out, size_t n, int sign);
/* Coefficients of ((1 - a x)(1 - m x))^(s/2), s = +1 or -1, first n terms: the square root of
 * the momentum/decay workload (s = -1) or of its inverse (s = +1). Uses O(n) scratch. */
int dpc__series_workload_root(double *out, size_t n, double a, double m, int s);
/* y = W * x for the workload W = 1 / ((1 - a x)(1 - m x)): two first-order recursions. */
void dpc__workload_apply(double *y, const double *x, size_t n, double a, double m);

/* gamma_inf = sqrt(sum_t c_t^2) for C = 1/B(x), B = sum_l b_l x^l (L terms), by the periodic
 * trapezoidal rule on |B(e^iw)|^-2 (mech_sens.c): the FFT form (O(M log M) per grid of M >= 4L
 * points) and its direct O(M L) reference, which agree to rounding. INFINITY when B vanishes on
 * the unit circle. */
dpc_status dpc__limit_poly(const double *b, size_t L, double *g, dpc_error *err);
dpc_status dpc__limit_poly_naive(const double *b, size_t L, double *g, dpc_error *err);

/* Sensitivity over participations of a Toeplitz C with first column c >= 0 (mech_sens.c):
 * ||sum_{j<k} shift(c, t0 + j b)||^2 truncated to n. The reference (n k terms), the band-aware
 * form (bit-identical, n min(k, L/b + 1) terms) and the O(n) strided prefix-sum form (t0 = 0;
 * returns 0 when out of memory), which agrees to rounding. */
double dpc__shifted_sum_sq_naive(const double *c, size_t n, size_t k, size_t b, size_t t0);
double dpc__shifted_sum_sq(const double *c, size_t n, size_t k, size_t b, size_t t0);
int dpc__shifted_sum_sq_prefix(const double *c, size_t n, size_t k, size_t b, double *out);

/* Tree helpers (mech_tree.c). */
uint64_t dpc__tree_node_row(unsigned h, uint64_t i);  /* in-order row id of node (h, i) */
double dpc__tree_honaker_var(unsigned h);             /* variance of the level-h estimate */
unsigned dpc__tree_levels(size_t n);                   /* 1 + floor(log2 n) */
int dpc__tree_dense_noising(const dpc_mech *m, double *B); /* (n, 2n) */
int dpc__tree_dense_strategy(const dpc_mech *m, double *C); /* (2n, n) */

/* The field table of dpc_mech_params (dpc_mech_params_fields), for tables that nest it. */
extern const dpc_field_table dpc__mech_params_table;
/* The tables of dpc_participation and dpc_workload (dpc_participation_fields,
 * dpc_workload_fields), for tables that nest them. */
extern const dpc_field_table dpc__participation_table;
extern const dpc_field_table dpc__workload_table;

#endif
