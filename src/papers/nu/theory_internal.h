/* theory_internal.h — quadrature helpers shared by the files of src/theory (not public). */
#ifndef DPCORR_SRC_THEORY_INTERNAL_H
#define DPCORR_SRC_THEORY_INTERNAL_H

#include "dpcorr/papers/theory.h"

/* A set of nodes x_i in [0, pi] with weights w_i such that sum_i w_i f(x_i) approximates
 * (1/pi) int_0^pi f = (1/2pi) int_{-pi}^{pi} f for even f. */
typedef struct theory_quad {
    size_t n;
    double *x; /* (n) */
    double *w; /* (n) */
} theory_quad;

/* The largest tmax of dpc_theory_sc_bound: its multipliers are a fixed array of 32. */
#define DPC__THEORY_SC_TMAX 31

/* Gauss-Legendre nodes and weights on [-1, 1] (Newton on P_n; n <= 64).      x, w: (n) */
void dpc__gauss_legendre(size_t n, double *x, double *w);

/* Graded composite Gauss-Legendre on [0, pi]: breakpoints 0, s/64, s/32, ..., pi (octaves down
 * to the smallest pole distance s of the integrand), `order` nodes per piece, and each piece
 * subdivided so that a trigonometric factor of degree `degree` has at most ~2 periods per
 * piece. Returns 0 on allocation failure. */
int dpc__quad_graded(theory_quad *q, double s, size_t order, size_t degree);
/* The same, graded towards both 0 (scale s0) and pi (scale spi; >= 1 means no grading). */
int dpc__quad_graded2(theory_quad *q, double s0, double spi, size_t order, size_t degree);
void dpc__quad_free(theory_quad *q);

/* sin^2(w/2)-based forms, accurate near w = 0:
 *   |1 - b - e^{iw}|^2 = b^2 + 4 (1 - b) sin^2(w/2). */
static inline double dpc__pole2(double b, double s2) { return b * b + 4.0 * (1.0 - b) * s2; }

/* |B(2 pi k / M)|^2 for k = 0..M/2 (M a power of two) by folding beta modulo M and one FFT.
 * out: (M/2 + 1). Returns 0 on allocation failure. */
int dpc__spectrum_grid(const double *beta, size_t len, size_t M, double *out);

/* Pole distance used for grading with nu-family coefficients. */
double dpc__beta_scale(const dpc_theory_beta *b);

/* S_{bb[j]}(beta) for j < n by the time-domain series (theory_beta.c). */
dpc_status dpc__theory_s_many(const dpc_theory_beta *b, const double *bb, size_t n, double *S,
                              dpc_error *err);

/* Q_j = (1/2pi) int |B|^2 / |1 - bb[j] - e^{iw}|^2 for j < n by quadrature (graded
 * Gauss-Legendre, or the FFT trapezoid rule for long arrays) (theory_lti.c). */
dpc_status dpc__theory_q_many(const dpc_theory_beta *b, const double *bb, size_t n, double *Q,
                              dpc_error *err);

#endif
