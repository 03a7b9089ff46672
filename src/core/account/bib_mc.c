/* bib_mc.c — balls-in-bins amplification for any nonnegative strategy by importance-sampled
 * Monte Carlo of the dominating pair, with an upper confidence bound (doc/accounting.md,
 * section 7, route "balls-in-bins").
 *
 * Pair (DP-REQ: bib-mc). An example takes part at the steps t = J mod b, J uniform on the b
 * positions (the same every period); with C >= 0 the run is dominated by P = (1/b) sum_j
 * N(m_j, s^2 I), Q = N(0, s^2 I), m_j = C x_j (x_j the indicator of the steps = j mod b) —
 * the balls-in-bins dominating pair of Choquette-Choo, Ganesh, Haque, Steinke & Thakurta 2024
 * ("Near exact privacy amplification for matrix mechanisms"; jax_privacy's Monte Carlo
 * accountant samples it). The privacy loss depends on the output only through t = M^T y / s^2
 * (M = [m_j]): t ~ N(0, A) under Q and N(A e_J, A) under P, A = G / s^2, G = M^T M, and
 * L = log Lambda, Lambda = (1/b) sum_j exp(t_j - A_jj / 2). A b-dimensional problem.
 *
 * Estimators. remove: delta_R(eps) = E_P[(1 - e^(eps - L))+], sampled from the scaled mixture
 * R_theta = (1/b) sum_j N(theta A e_j, A), theta = 1 + lambda, weight w = Lambda / Lambda_theta
 * (Lambda_theta = (1/b) sum_j exp(theta t_j - theta^2 A_jj / 2)). By the power-mean inequality
 * Lambda <= e^((theta-1) a/2) Lambda_theta^(1/theta) (a = max_j A_jj), so w <= Lambda^-lambda
 * e^(lambda (1+lambda) a/2), and every term w (1 - e^(eps - L))+ lies in [0, B_R],
 *     B_R = exp(lambda ((1+lambda) a/2 - eps)) lambda^lambda / (1+lambda)^(1+lambda).
 * add: delta_A(eps) = E_Q[(1 - e^(eps + L))+], sampled from N(-theta_a A 1/b, A), weight
 * exp(theta_a mean_j t_j + theta_a^2 q/2) (q = 1'A1/b^2); where the payoff is positive,
 * Lambda < e^-eps and the AM-GM inequality give mean_j t_j <= abar/2 - eps (abar = mean_j
 * A_jj), so every term lies in [0, B_A], B_A = exp(theta_a (abar/2 - eps) + theta_a^2 q/2).
 *
 * Confidence. For N i.i.d. terms in [0, B] with mean m, Pr[mean_hat <= x] <= exp(-N kl(x/B,
 * m/B)) for x < m (Hoeffding 1963, Thm. 1: the Bernoulli is the worst case), so the upper
 * confidence bound UCB = B sup{u : N kl(mean_hat/B, u) <= log(1/beta)} fails with probability
 * <= beta. Each direction gets beta/2. For fixed samples the UCB decreases in eps (the terms
 * and B do), so the smallest eps whose UCB is <= delta is (eps, delta)-DP except with
 * probability beta (the search does not change the guarantee). The tilts (lambda, theta_a) come
 * from a separate pilot sample and are independent of the samples that certify.
 *
 * Seeds. The draws are the counter-based generator's (dpc/rng.h) under a key derived from the
 * configuration (G, s, b, delta, N, beta): the same run is always accounted the same way. */
#include "account/acc_internal.h"

#include "account/acc_math.h"
#include "common/util.h"
#include "dpcorr/rng.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BIB_STREAM 6 /* stream purpose of the accountant's draws (beyond dpc_rng's enum) */

/* The problem in units of the noise: A = G / s^2 and its pivoted Cholesky factor. */
typedef struct bib_prob {
    size_t b;
    double *A;    /* (b, b) */
    double *R;    /* (b, b) lower triangular, rows in pivot order: A = P^T R R^T P */
    double *RT;   /* (b, b) R transposed (the draws read R by columns) */
    size_t *piv;  /* (b) */
    size_t rank;
    double amax, abar, q;
    double *arow; /* (b) (A 1)_j / b: the add direction's shift direction */
} bib_prob;

static uint64_t mix64(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ULL;
    return h ^ (h >> 29);
}

static uint64_t dbits(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

uint64_t dpc__bib_seed(const double *G, size_t b, double s, double delta, size_t N, double beta)
{
    uint64_t h = 0x6269622d6d63ULL; /* "bib-mc" */
    h = mix64(h, (uint64_t)b);
    for (size_t i = 0; i < b * b; i++) h = mix64(h, dbits(G[i]));
    h = mix64(h, dbits(s));
    h = mix64(h, dbits(delta));
    h = mix64(h, (uint64_t)N);
    return mix64(h, dbits(beta));
}

/* Pivoted outer-product Cholesky of A (b x b, PSD): columns whose remaining diagonal is below
 * 1e-13 of the largest are dropped (round-off level). Returns 0 on success. */
static int chol_pivoted(bib_prob *p)
{
    size_t b = p->b;
    double *W = dpc__malloc_array(b * b, sizeof *W);
    if (!W) return -1;
    memcpy(W, p->A, b * b * sizeof *W);
    memset(p->R, 0, b * b * sizeof *p->R);
    for (size_t i = 0; i < b; i++) p->piv[i] = i;
    double dmax = 0.0;
    for (size_t i = 0; i < b; i++)
        if (W[i * b + i] > dmax) dmax = W[i * b + i];
    size_t k = 0;
    for (; k < b; k++) {
        size_t best = k;
        for (size_t i = k; i < b; i++)
            if (W[p->piv[i] * b + p->piv[i]] > W[p->piv[best] * b + p->piv[best]]) best = i;
        size_t t = p->piv[k];
        p->piv[k] = p->piv[best];
        p->piv[best] = t;
        size_t pk = p->piv[k];
        double d = W[pk * b + pk];
        if (!(d > 1e-13 * dmax)) break;
        double r = sqrt(d);
        for (size_t i = k; i < b; i++) p->R[i * b + k] = W[p->piv[i] * b + pk] / r;
        for (size_t i = k + 1; i < b; i++)
            for (size_t j = k + 1; j <= i; j++) {
                size_t pi = p->piv[i], pj = p->piv[j];
                double v = W[pi * b + pj] - p->R[i * b + k] * p->R[j * b + k];
                W[pi * b + pj] = v;
                W[pj * b + pi] = v;
            }
    }
    p->rank = k;
    for (size_t i = 0; i < b; i++)
        for (size_t j = 0; j < b; j++) p->RT[j * b + i] = p->R[i * b + j];
    free(W);
    return 0;
}

static double logsumexp_affine(const double *t, const double *A, size_t b, double th)
{
    double mx = -INFINITY;
    for (size_t j = 0; j < b; j++) {
        double v = th * t[j] - 0.5 * th * th * A[j * b + j];
        if (v > mx) mx = v;
    }
    double s = 0.0;
    for (size_t j = 0; j < b; j++) s += exp(th * t[j] - 0.5 * th * th * A[j * b + j] - mx);
    return mx + log(s) - log((double)b);
}

/* acc = R z for R lower triangular (b x b, columns >= rank zero), from RT = R^T: acc[r] adds
 * R[r][c] z[c] for c = 0 .. min(r, rank - 1) in that order, starting from 0.0 (the order of
 * the row-by-row dot product, so the same bits), four columns per pass over acc. */
static void rz_columns(const double *RT, size_t b, size_t rank, const double *z, double *acc)
{
    for (size_t r = 0; r < b; r++) acc[r] = 0.0;
    size_t c = 0;
    for (; c + 4 <= rank; c += 4) {
        const double *c0 = RT + c * b, *c1 = c0 + b, *c2 = c1 + b, *c3 = c2 + b;
        double z0 = z[c], z1 = z[c + 1], z2 = z[c + 2], z3 = z[c + 3];
        acc[c] += c0[c] * z0; /* the triangle: row c + i has columns c .. c + i */
        acc[c + 1] += c0[c + 1] * z0;
        acc[c + 1] += c1[c + 1] * z1;
        acc[c + 2] += c0[c + 2] * z0;
        acc[c + 2] += c1[c + 2] * z1;
        acc[c + 2] += c2[c + 2] * z2;
        size_t r = c + 3;
#if defined(__GNUC__)
        /* four rows at a time in GCC's generic vectors: the same element-wise multiplies and
         * adds in the same order (no contraction: -ffp-contract=off), so the same bits */
        typedef double v4d __attribute__((vector_size(32)));
        v4d w0 = {z0, z0, z0, z0}, w1 = {z1, z1, z1, z1}, w2 = {z2, z2, z2, z2};
        v4d w3 = {z3, z3, z3, z3};
        for (; r + 4 <= b; r += 4) {
            v4d v, x0, x1, x2, x3;
            memcpy(&v, acc + r, sizeof v);
            memcpy(&x0, c0 + r, sizeof v);
            memcpy(&x1, c1 + r, sizeof v);
            memcpy(&x2, c2 + r, sizeof v);
            memcpy(&x3, c3 + r, sizeof v);
            v += x0 * w0;
            v += x1 * w1;
            v += x2 * w2;
            v += x3 * w3;
            memcpy(acc + r, &v, sizeof v);
        }
#endif
        for (; r < b; r++) {
            double v = acc[r];
            v += c0[r] * z0;
            v += c1[r] * z1;
            v += c2[r] * z2;
            v += c3[r] * z3;
            acc[r] = v;
        }
    }
    for (; c < rank; c++) {
        const double *col = RT + c * b;
        for (size_t r = c; r < b; r++) acc[r] += col[r] * z[c];
    }
}

/* One direction's samples: loss L[i] = log Lambda and log-weight lw[i], i < N, from stream
 * `stream` of the key. remove (theta >= 1): t = theta A e_J + noise; add (theta_a >= 0):
 * t = -theta_a A 1/b + noise. */
static void draw(const bib_prob *p, const dpc_rng_stream *rs, size_t N, int remove, double th,
                 double *L, double *lw, double *z, double *t)
{
    size_t b = p->b;
    double *acc = t + b; /* the caller's t holds 2 b */
    for (size_t i = 0; i < N; i++) {
        dpc_rng_gaussian_fill(rs, i, 0, z, p->rank);
        /* t = P^T R z by columns of R (RT: R transposed): each row's sum still adds the
         * columns c = 0, 1, ... in order, the same bits as row by row, but the b sums are
         * independent chains the CPU overlaps instead of one long chain each */
        rz_columns(p->RT, b, p->rank, z, acc);
        for (size_t r = 0; r < b; r++) t[p->piv[r]] = acc[r];
        if (remove) {
            size_t J = (size_t)dpc_rng_below(rs, i, b, b);
            for (size_t j = 0; j < b; j++) t[j] += th * p->A[j * b + J];
            L[i] = logsumexp_affine(t, p->A, b, 1.0);
            lw[i] = L[i] - logsumexp_affine(t, p->A, b, th);
        } else {
            double mt = 0.0;
            for (size_t j = 0; j < b; j++) {
                t[j] -= th * p->arow[j];
                mt += t[j];
            }
            L[i] = logsumexp_affine(t, p->A, b, 1.0);
            lw[i] = th * mt / (double)b + 0.5 * th * th * p->q;
        }
    }
}

/* Bernoulli KL divergence kl(x || u). */
static double kl_bern(double x, double u)
{
    double a = x > 0.0 ? x * log(x / u) : 0.0;
    double c = x < 1.0 ? (1.0 - x) * log((1.0 - x) / (1.0 - u)) : 0.0;
    return a + c;
}

/* UCB on the mean of N terms in [0, B] with empirical mean m, at failure probability e^-lb. */
static double ucb_kl(double m, double B, size_t N, double lb)
{
    if (!(B > 0.0)) return 0.0;
    double x = m / B;
    if (x >= 1.0) return B;
    if (x < 0.0) x = 0.0;
    double lo = x, hi = 1.0;
    for (int i = 0; i < 100; i++) {
        double mid = 0.5 * (lo + hi);
        if ((double)N * kl_bern(x, mid) <= lb) lo = mid;
        else hi = mid;
    }
    return B * hi;
}

/* Range bounds of the two estimators' terms at eps. */
static double bound_remove(const bib_prob *p, double lam, double eps)
{
    if (lam <= 0.0) return 1.0;
    double lb = lam * ((1.0 + lam) * 0.5 * p->amax - eps) + lam * log(lam) -
                (1.0 + lam) * log1p(lam);
    return lb > 0.0 ? INFINITY : exp(lb);
}

static double bound_add(const bib_prob *p, double tha, double eps)
{
    if (tha <= 0.0) return 1.0;
    double lb = tha * (0.5 * p->abar - eps) + 0.5 * tha * tha * p->q;
    return lb > 0.0 ? INFINITY : exp(lb);
}

typedef struct bib_dir {
    const bib_prob *p;
    const double *L, *lw;
    size_t N;
    int remove;
    double tilt, lb; /* lambda (remove) or theta_a (add); log(1/beta_dir) */
} bib_dir;

static double dir_ucb(const bib_dir *d, double eps)
{
    double s = 0.0;
    for (size_t i = 0; i < d->N; i++) {
        double g = d->remove ? -expm1(eps - d->L[i]) : -expm1(eps + d->L[i]);
        if (g > 0.0) s += exp(d->lw[i]) * g;
    }
    double B = d->remove ? bound_remove(d->p, d->tilt, eps) : bound_add(d->p, d->tilt, eps);
    if (!isfinite(B)) return 1.0;
    return ucb_kl(s / (double)d->N, B, d->N, d->lb);
}

/* Smallest eps in [0, emax] with UCB <= delta (bisection to 1e-5 relative); INFINITY if none. */
static double dir_eps(const bib_dir *d, double delta, double emax)
{
    if (dir_ucb(d, 0.0) <= delta) return 0.0;
    if (dir_ucb(d, emax) > delta) return INFINITY;
    double lo = 0.0, hi = emax;
    while (hi - lo > 1e-5 * hi) {
        double mid = 0.5 * (lo + hi);
        if (dir_ucb(d, mid) <= delta) hi = mid;
        else lo = mid;
    }
    return hi;
}

/* The tilts that minimize the range bounds at eps. */
static double best_lambda(const bib_prob *p, double eps)
{
    double best = 0.0, bb = 1.0;
    for (double lam = 0.05; lam <= 200.0; lam *= 1.1) {
        double B = bound_remove(p, lam, eps);
        if (B < bb) {
            bb = B;
            best = lam;
        }
    }
    return best;
}

static double best_theta_add(const bib_prob *p, double eps)
{
    double t = (eps - 0.5 * p->abar) / p->q;
    return t > 0.0 ? t : 0.0;
}

/* Both directions with N samples each from streams (2 base, 2 base + 1); eps = the larger. */
static dpc_status run_pass(const bib_prob *p, const dpc_rng *rng, uint64_t base, size_t N,
                           double lam, double tha, double delta, double beta, double emax,
                           double *eps)
{
    size_t b = p->b;
    double *L = dpc__malloc_array(N, sizeof *L), *lw = dpc__malloc_array(N, sizeof *lw);
    double *z = dpc__malloc_array(b, sizeof *z), *t = dpc__malloc_array(2 * b, sizeof *t);
    dpc_status st = DPC_OK;
    if (!L || !lw || !z || !t) st = DPC_E_NOMEM;
    double e[2] = {0.0, 0.0};
    for (int dir = 0; dir < 2 && !st; dir++) {
        dpc_rng_stream rs = dpc_rng_stream_derive(rng, DPC_STREAM_ID(BIB_STREAM, 2 * base + dir));
        draw(p, &rs, N, dir == 0, dir == 0 ? 1.0 + lam : tha, L, lw, z, t);
        bib_dir d = {p, L, lw, N, dir == 0, dir == 0 ? lam : tha, log(2.0 / beta)};
        e[dir] = dir_eps(&d, delta, emax);
    }
    *eps = e[0] > e[1] ? e[0] : e[1];
    free(L);
    free(lw);
    free(z);
    free(t);
    return st;
}

/* A = G / s^2 and its factor; 0 on success (p's arrays allocated). */
static int prob_init(bib_prob *p, const double *G, size_t b, double s)
{
    memset(p, 0, sizeof *p);
    p->b = b;
    p->A = dpc__malloc_array(b * b, sizeof(double));
    p->R = dpc__malloc_array(b * b, sizeof(double));
    p->RT = dpc__malloc_array(b * b, sizeof(double));
    p->piv = dpc__malloc_array(b, sizeof(size_t));
    p->arow = dpc__calloc(b, sizeof(double));
    if (!p->A || !p->R || !p->RT || !p->piv || !p->arow) return -1;
    double tot = 0.0;
    for (size_t i = 0; i < b * b; i++) {
        p->A[i] = G[i] / (s * s);
        tot += p->A[i];
        p->arow[i / b] += p->A[i] / (double)b;
    }
    for (size_t j = 0; j < b; j++) {
        if (p->A[j * b + j] > p->amax) p->amax = p->A[j * b + j];
        p->abar += p->A[j * b + j] / (double)b;
    }
    p->q = tot / ((double)b * (double)b);
    return chol_pivoted(p);
}

static void prob_free(bib_prob *p)
{
    free(p->A);
    free(p->R);
    free(p->RT);
    free(p->piv);
    free(p->arow);
}

dpc_status dpc__bib_mc_epsilon(const double *G, size_t b, double s, double delta, size_t N,
                               double beta, double eps_whole, double *eps, uint64_t *seed,
                               dpc_error *err)
{
    bib_prob p;
    dpc_status st = DPC_OK;
    if (prob_init(&p, G, b, s)) {
        st = DPC__NOMEM(err, "the balls-in-bins Monte Carlo problem");
        goto done;
    }
    *seed = dpc__bib_seed(G, b, s, delta, N, beta);
    dpc_rng rng;
    dpc_rng_seed(&rng, *seed);
    double emax = 2.0 * eps_whole + 1.0, ep;
    /* pilot (N/8 samples, not reported): where is the answer, hence which tilts */
    size_t Np = N / 8 > 1024 ? N / 8 : 1024;
    double g0 = 0.7 * eps_whole;
    if ((st = run_pass(&p, &rng, 0, Np, best_lambda(&p, g0), best_theta_add(&p, g0), delta,
                       beta, emax, &ep)))
        goto done;
    if (!isfinite(ep)) ep = eps_whole;
    st = run_pass(&p, &rng, 1, N, best_lambda(&p, ep), best_theta_add(&p, ep), delta, beta, emax,
                  eps);
done:
    if (st == DPC_E_NOMEM) st = DPC__NOMEM(err, "the balls-in-bins Monte Carlo samples");
    prob_free(&p);
    return st;
}

dpc_status dpc__bib_mc_delta(const double *G, size_t b, double s, double eps, size_t N,
                             uint64_t seed, double lambda, double theta_a, double beta,
                             double out[6])
{
    bib_prob p;
    double *L = dpc__malloc_array(N, sizeof *L), *lw = dpc__malloc_array(N, sizeof *lw);
    double *z = dpc__malloc_array(b, sizeof *z), *t = dpc__malloc_array(2 * b, sizeof *t);
    dpc_status st = DPC_OK;
    if (prob_init(&p, G, b, s) || !L || !lw || !z || !t) st = DPC_E_NOMEM;
    dpc_rng rng;
    dpc_rng_seed(&rng, seed);
    for (int dir = 0; dir < 2 && !st; dir++) {
        dpc_rng_stream rs = dpc_rng_stream_derive(&rng, DPC_STREAM_ID(BIB_STREAM, dir));
        double th = dir == 0 ? 1.0 + lambda : theta_a;
        draw(&p, &rs, N, dir == 0, th, L, lw, z, t);
        double s1 = 0.0, s2 = 0.0;
        for (size_t i = 0; i < N; i++) {
            double g = dir == 0 ? -expm1(eps - L[i]) : -expm1(eps + L[i]);
            double h = g > 0.0 ? exp(lw[i]) * g : 0.0;
            s1 += h;
            s2 += h * h;
        }
        double m = s1 / (double)N, var = s2 / (double)N - m * m;
        bib_dir d = {&p, L, lw, N, dir == 0, dir == 0 ? lambda : theta_a, log(1.0 / beta)};
        out[3 * dir] = m;
        out[3 * dir + 1] = sqrt(var > 0.0 ? var / (double)N : 0.0);
        out[3 * dir + 2] = dir_ucb(&d, eps);
    }
    prob_free(&p);
    free(L);
    free(lw);
    free(z);
    free(t);
    return st;
}
