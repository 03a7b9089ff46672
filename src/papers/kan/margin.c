/* margin.c — the NTK margin gamma of Assumption 3.3 ([KAN]; note 004 §1.6): the distance from
 * the origin to the convex hull of v_i = y_i grad f_{W0}(x_i), by the Mitchell-Dem'yanov-
 * Malozemov (MDM) algorithm (1974) on the kernel <v_i, v_l> = y_i y_l <alpha_i, alpha_l>
 * <h_i, h_l>. MDM moves weight from the active point with the largest <z, v> to the point with
 * the smallest, with an exact line search; unlike Gilbert's algorithm it can remove weight, so
 * it converges quickly when the nearest point is a face of the hull. */
#include "common/util.h"
#include "kan/kan_internal.h"

#include <math.h>
#include <string.h>

#define FULL_KERNEL_MAX 2048 /* n up to which the n x n kernel is precomputed (32 MB) */

typedef struct margin_data {
    size_t n, m, nz;   /* examples, width, max nonzeros of h per example (4d) */
    double *A;         /* (n, m): alpha_i y_i (the label folded in) */
    size_t *hq;        /* (n, nz) sparse h indices */
    double *hv;        /* (n, nz) values */
    size_t *hn;        /* (n) counts */
    double *K;         /* (n, n) when precomputed, else NULL */
} margin_data;

/* Sparse dot of two increasing index lists. */
static double sparse_dot(const size_t *qa, const double *va, size_t na, const size_t *qb,
                         const double *vb, size_t nb)
{
    double acc = 0.0;
    size_t a = 0, b = 0;
    while (a < na && b < nb) {
        if (qa[a] == qb[b]) acc += va[a++] * vb[b++];
        else if (qa[a] < qb[b]) a++;
        else b++;
    }
    return acc;
}

static double kernel(const margin_data *D, size_t i, size_t l)
{
    const double *ai = D->A + i * D->m, *al = D->A + l * D->m;
    double aa = 0.0;
    for (size_t j = 0; j < D->m; j++) aa += ai[j] * al[j];
    double hh = sparse_dot(D->hq + i * D->nz, D->hv + i * D->nz, D->hn[i], D->hq + l * D->nz,
                           D->hv + l * D->nz, D->hn[l]);
    return aa * hh;
}

/* col (n) = K[:, i]. */
static void column(const margin_data *D, size_t i, double *col)
{
    if (D->K) {
        memcpy(col, D->K + i * D->n, D->n * sizeof *col);
        return;
    }
    for (size_t l = 0; l < D->n; l++) col[l] = kernel(D, l, i);
}

dpc_status dpc_kan2_margin(const dpc_kan2 *k, const double *W0, const double *X,
                           const double *y, size_t n, size_t max_iter, double tol,
                           dpc_kan_margin *out, dpc_error *err)
{
    if (!k || !W0 || !X || !y || !out)
        return dpc_error_param(err, DPC_E_INVALID, "kan2_margin", "NULL argument");
    if (n == 0) return dpc_error_param(err, DPC_E_INVALID, "kan2_margin", "n must be >= 1");
    if (!(tol > 0 && tol < 1))
        return dpc_error_param(err, DPC_E_INVALID, "tol", "must be in (0, 1), got %g", tol);
    dpc_status st = dpc__kan2_check_W(k, W0, err);
    for (size_t i = 0; !st && i < n; i++) {
        st = dpc__kan2_check_x(k, X + i * k->cfg.d, i, err);
        if (!st) st = dpc__kan2_check_y(y[i], i, err);
    }
    if (st) return st;
    /* each iteration forms kernel columns over the n examples, O(n (m + 4 d)): at most
     * DPC_WORK_LIMIT in all, so max_iter shrinks to fit (the bounds stay certified; converged
     * says whether the tolerance was met) */
    double per_iter = 2.0 * (double)n * ((double)k->cfg.m + 4.0 * (double)k->cfg.d);
    if ((double)max_iter * per_iter > DPC_WORK_LIMIT)
        max_iter = (size_t)(DPC_WORK_LIMIT / per_iter) > 0 ? (size_t)(DPC_WORK_LIMIT / per_iter) : 1;
    margin_data D = {n, k->cfg.m, 4 * k->cfg.d, NULL, NULL, NULL, NULL, NULL};
    D.A = dpc__malloc_array(n * D.m, sizeof *D.A);
    D.hq = dpc__malloc_array(n * D.nz, sizeof *D.hq);
    D.hv = dpc__malloc_array(n * D.nz, sizeof *D.hv);
    D.hn = dpc__malloc_array(n, sizeof *D.hn);
    double *pre = dpc__malloc_array(D.m, sizeof *pre);
    double *Kp = dpc__calloc(n, sizeof *Kp), *pi = dpc__calloc(n, sizeof *pi);
    double *ci = dpc__malloc_array(n, sizeof *ci), *cj = dpc__malloc_array(n, sizeof *cj);
    if (!D.A || !D.hq || !D.hv || !D.hn || !pre || !Kp || !pi || !ci || !cj) {
        st = DPC__NOMEM(err, "margin buffers");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        size_t *q = D.hq + i * D.nz;
        double *v = D.hv + i * D.nz, *a = D.A + i * D.m;
        D.hn[i] = dpc__kan2_sparse_h(k, X + i * k->cfg.d, q, v);
        for (size_t j = 0; j < D.m; j++) {
            double acc = 0.0;
            for (size_t t = 0; t < D.hn[i]; t++) acc += W0[j * k->dp + q[t]] * v[t];
            pre[j] = acc * k->inv_sqrt_d;
        }
        dpc__kan2_head(k, pre, a);
        for (size_t j = 0; j < D.m; j++) a[j] *= y[i];
    }
    if (n <= FULL_KERNEL_MAX) {
        D.K = dpc__malloc_array(n * n, sizeof *D.K);
        if (D.K)
            for (size_t i = 0; i < n; i++)
                for (size_t l = 0; l <= i; l++) D.K[i * n + l] = D.K[l * n + i] = kernel(&D, i, l);
    }
    /* start at the point nearest to the origin */
    size_t i0 = 0;
    double best = INFINITY;
    for (size_t i = 0; i < n; i++) {
        double kii = kernel(&D, i, i);
        if (kii < best) best = kii, i0 = i;
    }
    pi[i0] = 1.0;
    column(&D, i0, Kp);
    double zz = Kp[i0];
    size_t it = 0;
    int converged = 0;
    double lo = NAN, hi = NAN;
    for (;; it++) {
        size_t imin = 0, jmax = SIZE_MAX;
        for (size_t l = 0; l < n; l++) {
            if (Kp[l] < Kp[imin]) imin = l;
            if (pi[l] > 0 && (jmax == SIZE_MAX || Kp[l] > Kp[jmax])) jmax = l;
        }
        hi = sqrt(zz > 0 ? zz : 0);
        lo = hi > 0 ? Kp[imin] / hi : -INFINITY;
        if (hi <= 1e-300 || hi - lo <= tol * hi) {
            converged = 1;
            break;
        }
        if (it >= max_iter) break;
        double gap = Kp[jmax] - Kp[imin];
        if (!(gap > 0)) {
            converged = 1;
            break;
        }
        column(&D, imin, ci);
        column(&D, jmax, cj);
        double dd = ci[imin] + cj[jmax] - 2.0 * ci[jmax];
        if (!(dd > 0)) break;
        double t = gap / dd;
        if (t > pi[jmax]) t = pi[jmax];
        pi[imin] += t;
        pi[jmax] -= t;
        if (pi[jmax] < 1e-300) pi[jmax] = 0.0;
        for (size_t l = 0; l < n; l++) Kp[l] += t * (ci[l] - cj[l]);
        zz = 0.0; /* recomputed from pi and K pi: no drift */
        for (size_t l = 0; l < n; l++) zz += pi[l] * Kp[l];
    }
    out->gamma_lo = lo;
    out->gamma_hi = hi;
    out->iterations = it;
    out->converged = converged;
    out->support = 0;
    for (size_t l = 0; l < n; l++) out->support += pi[l] > 0;
done:
    free(D.A);
    free(D.hq);
    free(D.hv);
    free(D.hn);
    free(D.K);
    free(pre);
    free(Kp);
    free(pi);
    free(ci);
    free(cj);
    return st;
}
