/* pld.c — privacy loss distributions of the (Poisson-subsampled) Gaussian mechanism on a grid,
 * their composition by FFT convolution (repeated squaring for self-composition), and the
 * (eps, delta) curve. Relation: add/remove (zero-out gives the same pair of distributions).
 *
 * A PLD of a pair (P, Q) is the law of the privacy loss L = log(dP/dQ)(X) for X ~ P, plus the
 * P-mass where Q = 0 (L = +inf). Then delta(eps) = H_{e^eps}(P || Q)
 *   = P(L = inf) + E_P[(1 - e^(eps - L))_+]                       (Koskela et al. 2020, eq. 5)
 * and the PLD of a composition is the convolution of the PLDs (Sommer et al. 2019, Thm. 1). */
#include "account/pld_internal.h"

#include "account/acc_math.h"
#include "common/util.h"
#include "field/field_def.h"

#include <stdlib.h>
#include <string.h>


/* The manual of dpc_pld_params, one row per field in struct order (dpcorr/account.h). The names
 * of the discretizations are dpc_pld_disc_name's. */
#define PP(m) DPC_FIELD_AT(dpc_pld_params, m)
static const char *const pp_disc_names[] = {"connect-dots", "round-up", "round-down"};
static const dpc_field pp_fields[] = {
    {.name = "interval", .label = "PLD interval", .type = DPC_FIELD_DOUBLE, PP(interval),
     .def = 1e-4, .lo = 0, .hi = INFINITY, .flags = DPC_FIELD_LO_OPEN | DPC_FIELD_HI_OPEN,
     .doc = "loss grid step h: finer is tighter and slower"},
    {.name = "tail", .label = "PLD tail", .type = DPC_FIELD_DOUBLE, PP(tail), .def = 1e-15,
     .lo = 0, .hi = 1e-3, .flags = DPC_FIELD_LO_OPEN,
     .doc = "mass truncated at each end per composition (pessimistic modes add it at +inf)"},
    {.name = "disc", .label = "PLD discretization", .type = DPC_FIELD_ENUM, PP(disc),
     .def = DPC_PLD_CONNECT_DOTS, DPC_FIELD_NAMES(pp_disc_names),
     .doc = "connect-dots (pessimistic, second order), round-up (pessimistic), round-down "
            "(optimistic)"},
};
#undef PP
static const dpc_field_table pp_table = DPC_FIELD_TABLE(dpc_pld_params, pp_fields);

const dpc_field_table *dpc_pld_params_fields(void) { return &pp_table; }

void dpc_pld_params_init(dpc_pld_params *p)
{
    if (!p) return;
    dpc_field_defaults(&pp_table, p);
}

void dpc__pmf_free(pmf *m)
{
    free(m->p);
    m->p = NULL;
    m->n = 0;
}

void dpc_pld_free(dpc_pld *pld)
{
    if (!pld) return;
    for (int d = 0; d < 2; d++) dpc__pmf_free(&pld->dir[d]);
    free(pld);
}

size_t dpc_pld_size(const dpc_pld *pld)
{
    if (!pld) return 0;
    return pld->dir[0].n + (pld->ndir == 2 ? pld->dir[1].n : 0);
}

double dpc_pld_infinity_mass(const dpc_pld *pld)
{
    if (!pld) return NAN;
    double a = pld->dir[0].inf, b = pld->ndir == 2 ? pld->dir[1].inf : a;
    return a > b ? a : b;
}

/* Drops zero entries at both ends (keeps at least one point). */
void dpc__pmf_trim(pmf *m)
{
    size_t lo = 0, hi = m->n;
    while (lo + 1 < hi && m->p[lo] == 0.0) lo++;
    while (hi > lo + 1 && m->p[hi - 1] == 0.0) hi--;
    if (lo > 0) memmove(m->p, m->p + lo, (hi - lo) * sizeof *m->p);
    m->k0 += (long long)lo;
    m->n = hi - lo;
}

/* ==== Discretization of the (subsampled) Gaussian ======================================== */

/* Remove direction: P = (1-q) N(0, z^2) + q N(1, z^2), Q = N(0, z^2) and
 *   L(x) = log(1 - q + q e^t), t = (2x - 1)/(2 z^2),
 * increasing in x. The add direction swaps P and Q: its loss is -L(x) with x ~ N(0, z^2).
 * DP-REQ: pld-sgm: Koskela et al. 2021 (AISTATS), Sec. 6; Zhu, Dong & Wang 2022, Prop. B.4
 * (dominating pairs of the Poisson-subsampled Gaussian under add/remove). */
typedef struct gpair {
    double z, q;
} gpair;

static double loss_remove(const gpair *g, double x)
{
    double t = (2.0 * x - 1.0) / (2.0 * g->z * g->z);
    if (g->q == 1.0) return t;
    if (t > 30.0) return t + log(g->q) + log1p((1.0 - g->q) / g->q * exp(-t));
    return log1p(g->q * expm1(t));
}

/* Inverse of loss_remove: the x with L(x) = l; -INFINITY when l <= log(1 - q). */
static double x_remove(const gpair *g, double l)
{
    double t;
    if (g->q == 1.0) {
        t = l;
    } else if (l > 30.0) {
        t = l + log1p(-(1.0 - g->q) * exp(-l)) - log(g->q);
    } else {
        double u = expm1(l) + g->q;
        if (!(u > 0.0)) return -INFINITY;
        t = log(u) - log(g->q);
    }
    return g->z * g->z * t + 0.5;
}

static double mass_p0(const gpair *g, double a, double b)
{
    return dpc__norm_mass(a, b, 0.0, g->z);
}

static double mass_mix(const gpair *g, double a, double b)
{
    if (g->q == 1.0) return dpc__norm_mass(a, b, 1.0, g->z);
    return (1.0 - g->q) * dpc__norm_mass(a, b, 0.0, g->z) + g->q * dpc__norm_mass(a, b, 1.0, g->z);
}

/* x-interval of the loss interval (l1, l2] in direction `add` (l1 < l2). */
static void loss_to_x(const gpair *g, int add, double l1, double l2, double *a, double *b)
{
    if (!add) {
        *a = x_remove(g, l1);
        *b = x_remove(g, l2);
    } else { /* -L(x) in (l1, l2]  <=>  L(x) in [-l2, -l1)  <=>  x in [x(-l2), x(-l1)) */
        *a = x_remove(g, -l2);
        *b = x_remove(g, -l1);
    }
}

/* P- and Q-mass of the x-interval [a, b] in the given direction. */
static void pq_mass(const gpair *g, int add, double a, double b, double *pm, double *qm)
{
    if (!add) {
        *pm = mass_mix(g, a, b);
        *qm = mass_p0(g, a, b);
    } else {
        *pm = mass_p0(g, a, b);
        *qm = mass_mix(g, a, b);
    }
}

/* A bucket boundary: its x and, per mixture mean (0 and 1), the normal tail on the far side of
 * the mean (lower tail below it, upper tail at or above it). */
typedef struct bnd {
    double x, t[2];
} bnd;

static double far_tail(double x, double mean, double sd)
{
    double Z = (x - mean) / sd;
    return Z < 0.0 ? 0.5 * erfc(-Z * DPC__SQRT1_2) : 0.5 * erfc(Z * DPC__SQRT1_2);
}

/* Boundary at loss l in direction `add` (x as in loss_to_x). */
static void bnd_at(const gpair *g, int add, double l, bnd *b)
{
    b->x = add ? x_remove(g, -l) : x_remove(g, l);
    b->t[0] = far_tail(b->x, 0.0, g->z);
    b->t[1] = far_tail(b->x, 1.0, g->z);
}

/* Mass of [a.x, b.x] under N(mean, sd^2) from the cached tails: dpc__norm_mass's arithmetic. */
static double bnd_mass(const bnd *a, const bnd *b, int m, double mean)
{
    if (!(b->x > a->x)) return 0.0;
    double v;
    if (a->x - mean >= 0.0) v = a->t[m] - b->t[m];
    else if (b->x - mean <= 0.0) v = b->t[m] - a->t[m];
    else v = 1.0 - a->t[m] - b->t[m];
    return v > 0.0 ? v : 0.0;
}

/* P- and Q-mass of [a.x, b.x] in the given direction (pq_mass from cached boundaries). */
static void bnd_pq(const gpair *g, int add, const bnd *a, const bnd *b, double *pm, double *qm)
{
    double m0 = bnd_mass(a, b, 0, 0.0), m1 = bnd_mass(a, b, 1, 1.0);
    double mix = g->q == 1.0 ? m1 : (1.0 - g->q) * m0 + g->q * m1;
    *pm = add ? m0 : mix;
    *qm = add ? mix : m0;
}

static dpc_status discretize(pmf *out, const gpair *g, int add, const dpc_pld_params *par,
                             double init_tail, dpc_error *err)
{
    double h = par->interval;
    /* x range holding all but init_tail of the P-mass (both mixture components). */
    double zt = dpc__ndtri_upper(log(init_tail / 4.0));
    double xlo = -g->z * zt, xhi = 1.0 + g->z * zt;
    /* unsampled: P = N(1, z^2) alone (one direction serves both); below 1 - z zt its mass is
     * rounded up to the first grid point like any lower tail */
    if (g->q == 1.0 && !add) xlo = 1.0 - g->z * zt;
    double llo, lhi;
    if (!add) {
        llo = loss_remove(g, xlo);
        lhi = loss_remove(g, xhi);
    } else {
        llo = -loss_remove(g, xhi);
        lhi = -loss_remove(g, xlo);
        if (g->q < 1.0 && lhi > -log1p(-g->q)) lhi = -log1p(-g->q);
    }
    double fi0 = floor(llo / h), fi1 = ceil(lhi / h);
    if (fi1 <= fi0) fi1 = fi0 + 1.0;
    if (!(fi1 - fi0 + 1.0 <= (double)PLD_MAX_POINTS) || fabs(fi0) > 9e15 || fabs(fi1) > 9e15) {
        /* the culprit: a finer interval than the default, else too little noise */
        if (h < 1e-4)
            return dpc_error_param(err, DPC_E_RANGE, "interval",
                                   "the loss grid would need %.3g points (losses %g..%g, "
                                   "interval %g; at most %zu); use a larger interval",
                                   fi1 - fi0 + 1.0, llo, lhi, h, PLD_MAX_POINTS);
        return dpc_error_param(err, DPC_E_RANGE, "noise_multiplier",
                               "%g is too small for the PLD accountant: one step's privacy "
                               "losses span %g..%g, %.3g grid points at interval %g (at most "
                               "%zu); use more noise, a larger interval or the RDP accountant",
                               g->z, llo, lhi, fi1 - fi0 + 1.0, h, PLD_MAX_POINTS);
    }
    long long i0 = (long long)fi0;
    size_t n = (size_t)(fi1 - fi0) + 1;
    out->k0 = i0;
    out->n = n;
    out->inf = 0.0;
    out->p = dpc__calloc(n, sizeof *out->p);
    if (!out->p) return DPC__NOMEM(err, "the privacy loss distribution");
    double *p = out->p;
    dpc_pld_disc disc = par->disc;

    /* Lower tail: losses <= eps_0. Every discretization may round them up to eps_0 (pessimistic);
     * the optimistic one drops them (a sub-probability only lowers delta). */
    double a, b, pm, qm;
    double l0 = (double)i0 * h;
    loss_to_x(g, add, -INFINITY, l0, &a, &b);
    if (!add) a = -INFINITY;
    else b = INFINITY;
    pq_mass(g, add, a, b, &pm, &qm);
    if (disc != DPC_PLD_ROUND_DOWN) p[0] += pm;

    /* Buckets (l_j, l_j+1], l_j = (i0 + j) h: each boundary's x and normal tails are computed
     * once and shared by its two buckets (the same arithmetic as dpc__norm_mass). */
    bnd cur, nxt;
    bnd_at(g, add, l0, &cur);
    for (size_t j = 0; j + 1 < n; j++) {
        double e1 = (double)(i0 + (long long)j) * h, e2 = (double)(i0 + (long long)j + 1) * h;
        bnd_at(g, add, e2, &nxt);
        if (!add) bnd_pq(g, add, &cur, &nxt, &pm, &qm);
        else bnd_pq(g, add, &nxt, &cur, &pm, &qm);
        cur = nxt;
        if (pm == 0.0) continue;
        if (disc == DPC_PLD_ROUND_UP) {
            /* DP-REQ: pld-round-up: Meiser & Mohammadi 2018; Koskela et al. 2020: rounding every
             * loss up to the grid gives a PLD that dominates (pessimistic). */
            p[j + 1] += pm;
        } else if (disc == DPC_PLD_ROUND_DOWN) {
            /* DP-REQ: pld-round-down: rounding every loss down (and dropping the lower tail) makes
             * E_P[(1 - e^(eps - L))_+] of any composition smaller: an optimistic estimate. */
            p[j] += pm;
        } else {
            /* DP-REQ: pld-ctd: Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022 (connect the
             * dots), Sec. 3: split the bucket's mass between its endpoints so that both its P-
             * and its Q-mass are preserved: Q-mass w = (P e^-e1 - Q)/(e^h - 1) goes to e2 and
             * Q - w to e1 (P-mass = e^loss * Q-mass at each point). The hockey-stick curve of the
             * result interpolates the true one linearly in e^eps between grid points, hence
             * dominates it (convexity), and domination survives composition. */
            /* P-mass at e2: (pm - qm e^e1) / (1 - e^-h), with qm e^e1 in log space (losses
             * of thousands) */
            double qe = qm > 0.0 ? exp(log(qm) + e1) : 0.0;
            double right = (pm - qe) / -expm1(-h);
            if (!(right > 0.0)) right = 0.0;
            if (right > pm) right = pm;
            p[j + 1] += right;
            p[j] += pm - right;
        }
    }

    /* Upper tail: losses > eps_{n-1}. */
    double ltop = (double)(i0 + (long long)n - 1) * h;
    loss_to_x(g, add, ltop, INFINITY, &a, &b);
    if (!add) b = INFINITY;
    else a = -INFINITY;
    pq_mass(g, add, a, b, &pm, &qm);
    if (disc == DPC_PLD_ROUND_DOWN) {
        p[n - 1] += pm;
    } else if (disc == DPC_PLD_ROUND_UP) {
        out->inf += pm;
    } else { /* connect the dots with the right endpoint at +inf */
        double at = qm > 0.0 ? exp(log(qm) + ltop) : 0.0;
        if (at > pm) at = pm;
        p[n - 1] += at;
        out->inf += pm - at;
    }
    dpc__pmf_trim(out);
    return DPC_OK;
}

static dpc_status check_params(const dpc_pld_params *p, dpc_error *err)
{
    if (!p) return dpc_error_param(err, DPC_E_INVALID, "p", "NULL");
    return dpc_field_check(&pp_table, p, err); /* interval, tail, disc: single-field ranges */
}

dpc_status dpc__pld_new_gaussian_count(dpc_pld **out, double z, double q,
                                       const dpc_pld_params *par, size_t count, dpc_error *err)
{
    dpc_status st;
    if (!out) return dpc_error_param(err, DPC_E_INVALID, "out", "NULL");
    *out = NULL;
    if ((st = dpc__check_pos(z, "z", err))) return st;
    if (!isfinite(1.0 / (2.0 * z * z)))
        return dpc_error_param(err, DPC_E_RANGE, "z",
                               "%g is too small: the privacy loss is not finite (no privacy)", z);
    if ((st = dpc__check_half_open01(q, "q", err))) return st;
    if ((st = check_params(par, err))) return st;
    dpc_pld *pld = calloc(1, sizeof *pld);
    if (!pld) return DPC__NOMEM(err, "a PLD");
    pld->h = par->interval;
    pld->tail = par->tail;
    pld->disc = par->disc;
    gpair g = {z, q};
    /* the initial truncation, tail * 1e-5 per direction, is spread over the compositions */
    double init_tail = par->tail * 1e-5 / (double)(count > 0 ? count : 1);
    /* Without sampling the two directions are mirror images with the same loss law
     * (L ~ N(1/(2z^2), 1/z^2) either way), so one distribution serves both. */
    pld->ndir = q == 1.0 ? 1 : 2;
    for (int d = 0; d < pld->ndir; d++) {
        if ((st = discretize(&pld->dir[d], &g, d, par, init_tail, err))) {
            dpc_pld_free(pld);
            return st;
        }
    }
    *out = pld;
    return DPC_OK;
}

dpc_status dpc_pld_new_gaussian(dpc_pld **out, double z, double q, const dpc_pld_params *par,
                                dpc_error *err)
{
    return dpc__pld_new_gaussian_count(out, z, q, par, 1, err);
}

/* Mean and variance of the finite loss under P (the larger of the two directions' each), and
 * the mass at +inf: what the accountant's route choice predicts a composition from. */
void dpc__pld_moments(const dpc_pld *a, double *mean, double *var, double *inf)
{
    *mean = *var = *inf = 0.0;
    for (int d = 0; d < a->ndir; d++) {
        const pmf *m = &a->dir[d];
        double s0 = 0.0, s1 = 0.0, s2 = 0.0;
        for (size_t j = 0; j < m->n; j++) {
            double l = (double)(m->k0 + (long long)j) * a->h;
            s0 += m->p[j];
            s1 += m->p[j] * l;
            s2 += m->p[j] * l * l;
        }
        double mu = s0 > 0.0 ? s1 / s0 : 0.0, v = s0 > 0.0 ? s2 / s0 - mu * mu : 0.0;
        if (mu > *mean) *mean = mu;
        if (v > *var) *var = v;
        if (m->inf > *inf) *inf = m->inf;
    }
}

/* ==== (eps, delta) ============================================================================ */

/* DP-REQ: pld-delta: Koskela et al. 2020, eq. 5 / Sommer et al. 2019:
 * delta(eps) = P(L = inf) + sum_{l > eps} p_l (1 - e^(eps - l)). */
static double pmf_delta(const pmf *m, double h, double eps)
{
    double s = 0.0;
    for (size_t j = m->n; j-- > 0;) {
        double l = (double)(m->k0 + (long long)j) * h;
        if (!(l > eps)) break;
        s += m->p[j] * -expm1(eps - l);
    }
    double d = m->inf + s;
    return d < 1.0 ? d : 1.0;
}

/* Between consecutive grid losses l_{j-1} <= eps < l_j, delta(eps) = A - e^(eps - l_j) B_j with
 * A = inf + sum_{i >= j} p_i and B_j = sum_{i >= j} p_i e^(l_j - l_i) (kept relative to l_j, so
 * losses of thousands neither overflow nor underflow: B_j = p_j + e^-h B_{j+1}); scanning down
 * from the top finds the interval holding the crossing and solves it exactly. */
static double pmf_epsilon(const pmf *m, double h, double delta)
{
    if (m->inf > delta) return INFINITY;
    double A = m->inf, B = 0.0, eh = exp(-h);
    for (size_t j = m->n; j-- > 0;) {
        double l = (double)(m->k0 + (long long)j) * h;
        A += m->p[j];
        B = m->p[j] + eh * B;
        double lprev = j > 0 ? l - h : -INFINITY;
        if (j == 0 || A - eh * B > delta) {
            if (!(A > delta) || !(B > 0.0)) return lprev > 0.0 ? lprev : 0.0;
            double e = l + log((A - delta) / B);
            if (e > l) e = l;
            return e > 0.0 ? e : 0.0;
        }
    }
    return 0.0;
}

dpc_status dpc_pld_delta(const dpc_pld *pld, double eps, double *delta, dpc_error *err)
{
    dpc_status st;
    if (!pld) return dpc_error_param(err, DPC_E_INVALID, "pld", "NULL");
    if ((st = dpc__check_nonneg(eps, "eps", err))) return st;
    if (!delta) return dpc_error_param(err, DPC_E_INVALID, "delta", "output pointer is NULL");
    double d = 0.0;
    for (int k = 0; k < pld->ndir; k++) {
        double v = pmf_delta(&pld->dir[k], pld->h, eps);
        if (v > d) d = v;
    }
    *delta = d;
    return DPC_OK;
}

dpc_status dpc_pld_epsilon(const dpc_pld *pld, double delta, double *eps, dpc_error *err)
{
    dpc_status st;
    if (!pld) return dpc_error_param(err, DPC_E_INVALID, "pld", "NULL");
    if ((st = dpc__check_open01(delta, "delta", err))) return st;
    if (!eps) return dpc_error_param(err, DPC_E_INVALID, "eps", "output pointer is NULL");
    double e = 0.0;
    for (int k = 0; k < pld->ndir; k++) {
        double v = pmf_epsilon(&pld->dir[k], pld->h, delta);
        if (v > e) e = v;
    }
    *eps = e;
    return DPC_OK;
}
