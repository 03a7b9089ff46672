/* pld_mog.c — the privacy loss distribution of a scalar mixture-of-Gaussians pair
 *     remove: P = sum_k w_k N(v_k, s^2),  Q = N(0, s^2);     add: P and Q swapped,
 * with shifts on a grid, v_k = (off + k) g >= 0 (the per-row mechanism of the conditional
 * composition bound for matrix mechanisms, mmcc.c; Choquette-Choo, Ganesh, Steinke & Thakurta
 * 2024, "Privacy amplification for matrix mechanisms", Sec. 4: mixture of Gaussians mechanisms).
 *
 * Discretization. The loss L(x) = log sum_k w_k exp((v_k x - v_k^2/2)/s^2) is increasing in x
 * (v_k >= 0). x runs over a grid of cells [x_j, x_j+1] aligned with the shift grid (spacing
 * gx = g / r), so every component's cell mass is a difference of one precomputed table of
 * normal tails (taken on the far side of the component's mean: small masses keep their
 * relative accuracy). Each cell's (P, Q) mass is split between the loss grid points at or below
 * its smallest and at or above its largest loss so that both masses are preserved (connect the
 * dots, Doroshenko et al. 2022: any bucket whose losses lie in [l_lo, l_hi] is dominated by that
 * two-point split), hence the result is pessimistic. The tails beyond the x range are rounded up
 * (lower tail) or split with +inf (upper tail). */
#include "account/pld_internal.h"

#include "account/acc_math.h"
#include "common/util.h"

#include <stdlib.h>
#include <string.h>

typedef struct mog {
    const double *w; /* (K) weights, sum 1 */
    size_t K, off, r;
    double g, s, gx;
    long long j0;    /* first x node index: x_j = (j0 + j) gx */
    size_t nx;       /* nodes */
    const double *T; /* far-side tails at d gx / s for d in [dmin, dmax] */
    long long dmin;
} mog;

static double tail_at(const mog *m, long long d) { return m->T[d - m->dmin]; }

/* Mass of the cell between nodes jj and jj+1 (absolute indices) under N(c gx, s^2). */
static double cell_mass(const mog *m, long long jj, long long c)
{
    long long d = jj - c;
    double v = d >= 0 ? tail_at(m, d) - tail_at(m, d + 1) : tail_at(m, d + 1) - tail_at(m, d);
    return v > 0.0 ? v : 0.0;
}

/* Mass of (-inf, x_jj] (below = 1) or [x_jj, inf) (below = 0) under N(c gx, s^2). */
static double half_mass(const mog *m, long long jj, long long c, int below)
{
    long long d = jj - c;
    double t = tail_at(m, d); /* the tail on the far side of the mean */
    if (below) return d < 0 ? t : 1.0 - t;
    return d >= 0 ? t : 1.0 - t;
}

static double loss_at(const mog *m, double x, const double *lw)
{
    double mx = -INFINITY;
    for (size_t k = 0; k < m->K; k++) {
        double v = (double)(m->off + k) * m->g, t = lw[k] + (v * x - 0.5 * v * v) / (m->s * m->s);
        if (t > mx) mx = t;
    }
    if (mx == -INFINITY) return -INFINITY;
    double acc = 0.0;
    for (size_t k = 0; k < m->K; k++) {
        double v = (double)(m->off + k) * m->g, t = lw[k] + (v * x - 0.5 * v * v) / (m->s * m->s);
        acc += exp(t - mx);
    }
    return mx + log(acc);
}

/* Adds mass (pm, qm) whose losses lie in [la, lb] to the pmf by connect-the-dots. */
static void ctd_add(pmf *out, double h, double la, double lb, double pm, double qm)
{
    if (!(pm > 0.0)) return;
    long long ia = (long long)floor(la / h), ib = (long long)ceil(lb / h);
    if (ib <= ia) ib = ia + 1;
    double l_lo = (double)ia * h, l_hi = (double)ib * h;
    /* Q-mass qh at l_hi and qm - qh at l_lo with qh e^l_hi + (qm - qh) e^l_lo = pm */
    double qe = qm > 0.0 ? exp(log(qm) + l_lo) : 0.0; /* in log space: large losses */
    double at_hi = (pm - qe) / -expm1(l_lo - l_hi);
    if (!(at_hi > 0.0)) at_hi = 0.0;
    if (at_hi > pm) at_hi = pm;
    out->p[ib - out->k0] += at_hi;
    out->p[ia - out->k0] += pm - at_hi;
}

/* One direction. add = 0: remove (P = mixture); add = 1: P = N(0), loss -L. */
static dpc_status mog_direction(pmf *out, const mog *m, const double *L, int add, double h,
                                dpc_error *err)
{
    size_t nx = m->nx;
    double lmin = INFINITY, lmax = -INFINITY;
    for (size_t j = 0; j < nx; j++) {
        double l = add ? -L[j] : L[j];
        if (l < lmin) lmin = l;
        if (l > lmax) lmax = l;
    }
    double k0 = floor(lmin / h) - 1.0, k1 = ceil(lmax / h) + 1.0;
    if (!(k1 - k0 + 1.0 <= (double)PLD_MAX_POINTS))
        return dpc_error_param(err, DPC_E_RANGE, "interval",
                               "the mixture's losses span %g..%g: too many points at interval %g",
                             lmin, lmax, h);
    out->k0 = (long long)k0;
    out->n = (size_t)(k1 - k0) + 1;
    out->inf = 0.0;
    out->p = dpc__calloc(out->n, sizeof *out->p);
    if (!out->p) return DPC__NOMEM(err, "a mixture PLD");
    for (size_t j = 0; j + 1 < nx; j++) {
        long long jj = m->j0 + (long long)j;
        double mix = 0.0;
        for (size_t k = 0; k < m->K; k++)
            if (m->w[k] > 0.0)
                mix += m->w[k] * cell_mass(m, jj, (long long)((m->off + k) * m->r));
        double q0 = cell_mass(m, jj, 0);
        if (!add) ctd_add(out, h, L[j], L[j + 1], mix, q0);
        else ctd_add(out, h, -L[j + 1], -L[j], q0, mix);
    }
    /* tails: x below x_0 and above x_{nx-1} */
    long long jlo = m->j0, jhi = m->j0 + (long long)nx - 1;
    double mlo = 0.0, mhi = 0.0;
    for (size_t k = 0; k < m->K; k++) {
        long long c = (long long)((m->off + k) * m->r);
        mlo += m->w[k] * half_mass(m, jlo, c, 1);
        mhi += m->w[k] * half_mass(m, jhi, c, 0);
    }
    double qlo = half_mass(m, jlo, 0, 1), qhi = half_mass(m, jhi, 0, 0);
    /* the end whose losses are lower: rounded up to the end node's loss */
    double plow = add ? qhi : mlo, lend = add ? -L[nx - 1] : L[0];
    out->p[(long long)ceil(lend / h) - out->k0] += plow;
    /* the end whose losses are higher: connect the dots between its node and +inf */
    double ptop = add ? qlo : mhi, qtop = add ? mlo : qhi, ltop = add ? -L[0] : L[nx - 1];
    long long it = (long long)floor(ltop / h); /* at or below every loss of that tail */
    double at = qtop > 0.0 ? exp(log(qtop) + (double)it * h) : 0.0;
    if (at > ptop) at = ptop;
    out->p[it - out->k0] += at;
    out->inf += ptop - at;
    dpc__pmf_trim(out);
    return DPC_OK;
}

dpc_status dpc__pld_new_mog(dpc_pld **out, const double *w, size_t K, size_t off, double g,
                            double s, const dpc_pld_params *par, size_t count, dpc_error *err)
{
    *out = NULL;
    if (K == 0 || !(g > 0.0) || !(s > 0.0))
        return dpc_error_param(err, DPC_E_INVALID, K == 0 ? "K" : !(g > 0.0) ? "g" : "s",
                               "the mixture needs K >= 1, g > 0, s > 0");
    double h = par->interval, vmax = (double)(off + K - 1) * g;
    double zt = dpc__ndtri_upper(log(par->tail * 1e-5 / (double)(count ? count : 1) / 4.0));
    /* cells short enough that a cell's loss changes by at most ~h (slope <= vmax / s^2) */
    double rr = vmax > 0.0 ? ceil(g * vmax / (h * s * s)) : 1.0;
    if (rr > 64.0) rr = 64.0; /* wider cells stay valid (connect the dots), only coarser */
    size_t r = (size_t)rr;
    double gx = g / (double)r;
    long long j0 = (long long)floor(-zt * s / gx), j1 = (long long)ceil((vmax + zt * s) / gx);
    size_t nx = (size_t)(j1 - j0) + 1;
    long long dmin = j0 - (long long)((off + K - 1) * r) - 1, dmax = j1 + 1;
    size_t nT = (size_t)(dmax - dmin) + 1;
    double *T = dpc__malloc_array(nT, sizeof *T), *L = dpc__malloc_array(nx, sizeof *L);
    double *lw = dpc__malloc_array(K, sizeof *lw);
    dpc_pld *pld = calloc(1, sizeof *pld);
    if (!T || !L || !lw || !pld) {
        free(T);
        free(L);
        free(lw);
        free(pld);
        return DPC__NOMEM(err, "a mixture PLD");
    }
    for (size_t i = 0; i < nT; i++) {
        double u = (double)(dmin + (long long)i) * gx / s;
        T[i] = 0.5 * erfc(fabs(u) * DPC__SQRT1_2);
    }
    for (size_t k = 0; k < K; k++) lw[k] = w[k] > 0.0 ? log(w[k]) : -INFINITY;
    mog m = {w, K, off, r, g, s, gx, j0, nx, T, dmin};
    for (size_t j = 0; j < nx; j++) L[j] = loss_at(&m, (double)(j0 + (long long)j) * gx, lw);
    pld->h = h;
    pld->tail = par->tail;
    pld->disc = DPC_PLD_CONNECT_DOTS;
    pld->ndir = 2;
    dpc_status st = mog_direction(&pld->dir[0], &m, L, 0, h, err);
    if (!st) st = mog_direction(&pld->dir[1], &m, L, 1, h, err);
    free(T);
    free(L);
    free(lw);
    if (st) {
        dpc_pld_free(pld);
        return st;
    }
    *out = pld;
    return DPC_OK;
}
