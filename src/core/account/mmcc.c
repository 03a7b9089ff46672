/* mmcc.c — amplification by Poisson sampling for any matrix mechanism with a nonnegative
 * strategy C, by conditional composition (Choquette-Choo, Ganesh, Steinke & Thakurta 2024,
 * "Privacy amplification for matrix mechanisms", ICLR: "MMCC"). doc/accounting.md section 7
 * has the derivation; in short:
 *
 * Dominating pair. With C >= 0 entrywise the run is dominated by the scalar pair
 * P = law(C theta + s Z) (theta_t i.i.d. Bernoulli(p): the example's participations; its
 * contribution 1 = clip in every participating step), Q = law(s Z), rows released in order
 * (Choquette-Choo et al. 2024/25, "Near exact privacy amplification for matrix mechanisms":
 * dominating pairs of DP-MF with nonnegative C).
 *
 * Row i given the earlier rows y_<i is, under P, a mixture of N(S_i, s^2) with
 * S_i = sum_t C_it theta_t, theta drawn from its posterior given y_<i. The Gibbs odds of
 * theta_t = 1 given y_<i and every other theta_u are (p / (1-p)) Lambda_t with
 *     log Lambda_t = (<y_<i - C theta_-t, c_t> - w_t^2/2) / s^2 <= l_t(y) := (<y_<i, c_t> - w_t^2/2)/s^2
 * (c_t = column t over rows < i, w_t = ||c_t||, C >= 0, theta >= 0): a bound uniform in theta_-t.
 * Under P, <y_<i, c_t> = theta_t w_t^2 + sum_{u != t} theta_u <c_u, c_t> + s w_t Z'; with
 * K_i ~ Binomial(active columns, p) participations, <c_u, c_t> <= w_t W_i (W_i = max_u w_u), so
 *     l_t <= eps_it := (w_t^2/2 + k_i w_t W_i)/s^2 + w_t kappa/s
 * except with probability <= Phi(-kappa) + Pr[K_i > k_i] (under Q the same bound holds with
 * probability >= 1 - Phi(-kappa)). Where all these hold, every Gibbs conditional is at most
 * pt_it = p e^eps / (p e^eps + 1 - p), so the posterior of theta is dominated by independent
 * Bernoulli(pt_it) (sequential coupling), hence S_i by S~_i = sum_t C_it theta~_t in first order,
 * and the row's pair (mixture, N(0, s^2)) by (E N(S~_i, s^2), N(0, s^2)) (monotone likelihood
 * ratio: threshold tests are optimal in both directions). Conditional composition (MMCC Thm 3.1)
 * composes the rows' dominating pairs; the failure probabilities add to delta.
 *
 * Computation per row: every term C_it >= g goes into a distribution on the grid g ~ s/64 (each
 * rounded up to a whole number of grid steps: first-order larger); sub-grid terms are packed
 * into groups of sum <= g, each one grid step present with probability 1 - prod(1 - pt); the top
 * tail of the distribution is pruned (mass added to delta; joint convexity). (Until issue 25,
 * terms under 10 g were replaced by a Chernoff upper quantile of their sum at a tiny failure
 * probability, which counts a few small terms as always present; since g grows with s, more
 * terms fell under the threshold as the noise grew and epsilon was not monotone in sigma:
 * BSR-2, n = 16, q 0.01 gave 0.073 at sigma 3 and 1.49 at 3.5. Rounded up, a term's shift in
 * units of s never grows with s, and its posterior probability pt falls, so epsilon falls:
 * tests/test_account_mmcc.c sweeps sigma.) Rows are sorted by their mean shift and split into
 * `groups` runs of consecutive ranks; each run is represented by the pointwise minimum of its
 * rows' CDFs (a distribution first-order above each of them), whose PLD (pld_mog.c) is
 * self-composed over the run; the runs are composed.
 *
 * Speed (issue 35): rows are stored by their bands (dpc__mmcc_mat: a banded Toeplitz C costs
 * n x bands, not n^2); the route's cost is estimated from the rows' terms before any
 * distribution is built and refused above DPC_WORK_LIMIT; the rows are built once and composed
 * on a coarse grid first and then on the grid epsilon needs (mmcc-grid). */
#include "account/acc_internal.h"

#include "account/acc_math.h"
#include "common/util.h"

#include <stdlib.h>
#include <string.h>


typedef struct rowdist {
    double *w;  /* (K) probabilities of shifts (off + k) g */
    size_t K, off;
    double mean;
} rowdist;

/* Smallest k with Pr[Binomial(N, p) > k] <= d (exact tail summed in log space from the top).
 * The terms above ks = mean + 40 sd + 40 are not summed: their total is bounded by the Chernoff
 * bound Pr[K >= ks + 1] <= exp(-N KL((ks + 1)/N || p)), which starts the sum (an upper bound on
 * the tail, so k is never below the exact quantile). O(ks - k) per call instead of O(N): the
 * rows of n = 10^4 steps called it with N up to 10^4 each (10^8 logs). */
static size_t binom_quantile(size_t N, double p, double d)
{
    if (N == 0 || p <= 0.0) return 0;
    if (p >= 1.0) return N;
    double lq = log1p(-p), lr = log(p) - lq, Nd = (double)N;
    double ks = ceil(Nd * p + 40.0 * sqrt(Nd * p * (1.0 - p)) + 40.0);
    size_t k = N;
    double tail = -INFINITY; /* log Pr[K > k] */
    if (ks < Nd) {
        double a = (ks + 1.0) / Nd; /* Chernoff: KL(a || p) with a > p */
        double kl = a * log(a / p) + (a < 1.0 ? (1.0 - a) * log((1.0 - a) / (1.0 - p)) : 0.0);
        tail = -Nd * kl;
        k = (size_t)ks;
    }
    double kd = (double)k; /* log pmf(k) */
    double lp = lgamma(Nd + 1.0) - lgamma(kd + 1.0) - lgamma(Nd - kd + 1.0) + kd * lr + Nd * lq;
    double ld = log(d);
    while (k > 0) {
        double t2 = dpc__log_add(tail, lp); /* Pr[K > k-1] */
        if (t2 > ld) break;
        tail = t2;
        lp += log((double)k / (Nd - (double)k + 1.0)) - lr; /* pmf(k-1) */
        k--;
    }
    return k;
}

/* The shift distribution of one row: terms (cb, pb), each rounded up to whole grid steps. */
static dpc_status row_distribution(rowdist *rd, const double *cb, const double *pb, size_t nb,
                                   double g, double d_prune, double *slack)
{
    size_t cap = 1;
    for (size_t t = 0; t < nb; t++) cap += (size_t)ceil(cb[t] / g - 1e-12);
    double *w = dpc__calloc(cap, sizeof *w);
    if (!w) return DPC_E_NOMEM;
    w[0] = 1.0;
    size_t top = 1; /* entries [0, top) may be nonzero */
    for (size_t t = 0; t < nb; t++) {
        size_t sh = (size_t)ceil(cb[t] / g - 1e-12);
        double q = pb[t];
        for (size_t j = top; j-- > 0;) {
            w[j + sh] += q * w[j];
            w[j] *= 1.0 - q;
        }
        top += sh;
        /* prune the top: at most d_prune / nb per term */
        double cut = 0.0;
        while (top > 1 && cut + w[top - 1] <= d_prune / (double)nb) cut += w[--top];
        if (cut > 0.0) {
            *slack += cut;
            memset(w + top, 0, (cap - top) * sizeof *w);
        }
    }
    double tot = 0.0, mean = 0.0;
    for (size_t j = 0; j < top; j++) tot += w[j];
    for (size_t j = 0; j < top; j++) {
        w[j] /= tot; /* the kept part, renormalized (the pruned mass is in the slack) */
        mean += w[j] * (double)j;
    }
    rd->w = w;
    rd->K = top;
    rd->off = 0;
    rd->mean = mean * g;
    return DPC_OK;
}

static int cmp_mean(const void *a, const void *b)
{
    const rowdist *x = *(const rowdist *const *)a, *y = *(const rowdist *const *)b;
    return x->mean < y->mean ? -1 : x->mean > y->mean;
}

/* The pointwise minimum of the CDFs of rows[0..cnt), as probabilities on shifts (off + k) g. */
static dpc_status group_rep(rowdist *const *rows, size_t cnt, rowdist *rep)
{
    size_t lo = (size_t)-1, hi = 0;
    for (size_t r = 0; r < cnt; r++) {
        if (rows[r]->off < lo) lo = rows[r]->off;
        if (rows[r]->off + rows[r]->K > hi) hi = rows[r]->off + rows[r]->K;
    }
    size_t K = hi - lo;
    double *cdf = dpc__malloc_array(K, sizeof *cdf), *acc = dpc__calloc(K, sizeof *acc);
    if (!cdf || !acc) {
        free(cdf);
        free(acc);
        return DPC_E_NOMEM;
    }
    for (size_t j = 0; j < K; j++) cdf[j] = 1.0;
    for (size_t r = 0; r < cnt; r++) {
        double c = 0.0;
        for (size_t j = 0; j < K; j++) {
            size_t v = lo + j;
            if (v >= rows[r]->off && v < rows[r]->off + rows[r]->K) c += rows[r]->w[v - rows[r]->off];
            if (c < cdf[j]) cdf[j] = c;
        }
    }
    double prev = 0.0;
    for (size_t j = 0; j < K; j++) {
        double c = j + 1 == K ? 1.0 : cdf[j];
        acc[j] = c > prev ? c - prev : 0.0;
        if (c > prev) prev = c;
    }
    free(cdf);
    rep->w = acc;
    rep->K = K;
    rep->off = lo;
    return DPC_OK;
}

static void free_rows(rowdist *rd, size_t n)
{
    if (!rd) return;
    for (size_t i = 0; i < n; i++) free(rd[i].w);
    free(rd);
}

double dpc__mmcc_cmax(const dpc__mmcc_mat *M)
{
    double cmax = 0.0;
    for (size_t k = 0; k < M->rows * M->width; k++)
        if (M->v[k] > cmax) cmax = M->v[k];
    return cmax;
}

/* Per-row shift distributions (pass 2 of dpc__mmcc_epsilon). */
/* Upper estimate of the support (in grid steps) the pruned distribution of a row with terms
 * (cb, pb) keeps: Bernstein's tail bound at the pruning level, mean + sqrt(2 v L) + m L / 3 with
 * L = log(nb / d_prune) (m the largest step), at most the unpruned support. */
static double row_support(const double *cb, const double *pb, size_t nb, double g,
                          double d_prune)
{
    double mean = 0.0, var = 0.0, mx = 0.0, cap = 1.0;
    for (size_t t = 0; t < nb; t++) {
        double sh = ceil(cb[t] / g - 1e-12);
        mean += pb[t] * sh;
        var += pb[t] * (1.0 - pb[t]) * sh * sh;
        if (sh > mx) mx = sh;
        cap += sh;
    }
    double L = log((double)(nb ? nb : 1) / d_prune);
    double k = mean + sqrt(2.0 * var * L) + mx * L / 3.0 + 1.0;
    return k < cap ? k : cap;
}

/* Per-row shift distributions (rd), or with rd == NULL only each row's estimated support
 * (est[2 i]: mean shift, est[2 i + 1]: support in grid steps) and *work, the estimated
 * operations of the distributions (dpc__mmcc_epsilon's cost estimate). */
static dpc_status mmcc_rows(const dpc__mmcc_mat *M, double p, double s, double delta,
                            rowdist *rd, double *est, double *work, double *slack,
                            dpc_error *err)
{
    size_t rows = M->rows, n = M->n, wd = M->width;
    double *colsq = dpc__calloc(n, sizeof *colsq);
    double *cb = dpc__malloc_array(n, sizeof *cb), *pb = dpc__malloc_array(n, sizeof *pb);
    dpc_status st = DPC_OK;
    if (!colsq || !cb || !pb) st = DPC__NOMEM(err, "the MMCC work arrays");
    /* pass 1: pairs (i, t) whose probability must be bounded, rows that have some */
    size_t npairs = 0, prows = 0;
    for (size_t i = 0; !st && i < rows; i++) {
        const double *Ci = M->v + i * wd;
        size_t c = 0, c0 = M->col0 ? M->col0[i] : 0;
        for (size_t j = 0; j < wd; j++) c += Ci[j] > 0.0 && colsq[c0 + j] > 0.0;
        npairs += c;
        prows += c > 0;
        for (size_t j = 0; j < wd; j++) colsq[c0 + j] += Ci[j] * Ci[j];
    }
    double cmax = dpc__mmcc_cmax(M);
    double g = cmax / ceil(64.0 * cmax / s); /* the largest entry sits exactly on the grid */
    double dz = npairs ? 0.05 * delta / (double)npairs : 1.0, db = prows ? 0.05 * delta / (double)prows : 1.0;
    double kappa = npairs ? dpc__ndtri_upper(log(dz)) : 0.0;
    if (npairs && rd) *slack += 0.05 * delta * 2.0;
    double d_prune = 0.005 * delta / (double)rows;
    if (!st) memset(colsq, 0, n * sizeof *colsq);
    size_t active = 0;
    double W = 0.0;
    for (size_t i = 0; !st && i < rows; i++) {
        const double *Ci = M->v + i * wd - (M->col0 ? M->col0[i] : 0); /* Ci[t]: column t */
        size_t ki = binom_quantile(active, p, db), nb = 0;
        size_t t0 = M->col0 ? M->col0[i] : 0, t1 = t0 + wd;
        double pack_c = 0.0, pack_absent = 1.0; /* the open pack of sub-grid terms */
        for (size_t t = t0; t < t1; t++) {
            if (!(Ci[t] > 0.0)) continue;
            double pt = p;
            if (colsq[t] > 0.0) { /* DP-REQ: mmcc-posterior (see the file comment) */
                double w = sqrt(colsq[t]);
                double e = (0.5 * w * w + (double)ki * w * W) / (s * s) + w * kappa / s;
                pt = 1.0 / (1.0 + (1.0 - p) / p * exp(-e));
            }
            if (Ci[t] >= g) {
                cb[nb] = Ci[t];
                pb[nb++] = pt;
                continue;
            }
            /* DP-REQ: mmcc-pack. Sub-grid terms are packed (in column order) into groups whose
             * coefficients sum to at most g: a pack's sum is <= g * 1[some member present], and
             * the packs are independent, so each pack is one grid step present with probability
             * 1 - prod(1 - pt) (tighter than a grid step per term; never always present). */
            if (pack_c + Ci[t] > g) {
                cb[nb] = g;
                pb[nb++] = 1.0 - pack_absent;
                pack_c = 0.0;
                pack_absent = 1.0;
            }
            pack_c += Ci[t];
            pack_absent *= 1.0 - pt;
        }
        if (pack_c > 0.0) {
            cb[nb] = g;
            pb[nb++] = 1.0 - pack_absent;
        }
        if (!rd) {
            double m = 0.0, K = row_support(cb, pb, nb, g, d_prune);
            for (size_t t = 0; t < nb; t++) m += pb[t] * ceil(cb[t] / g - 1e-12);
            est[2 * i] = m;
            est[2 * i + 1] = K;
            *work += 2.0 * (double)nb * K;
        } else if (row_distribution(&rd[i], cb, pb, nb, g, d_prune, slack)) {
            st = DPC__NOMEM(err, "an MMCC row distribution");
        }
        for (size_t t = t0; t < t1; t++) {
            if (Ci[t] != 0.0 && colsq[t] == 0.0) active++;
            colsq[t] += Ci[t] * Ci[t];
            if (colsq[t] > W * W) W = sqrt(colsq[t]);
        }
    }
    free(colsq);
    free(cb);
    free(pb);
    return st;
}

/* The rows' shift distributions, sorted by mean: everything of the route that does not depend on
 * the loss grid (computed once, composed on one or two grids). */
typedef struct mmcc_rowset {
    rowdist *rd;
    rowdist **ord;
    size_t rows;
    double g, s, slack;
} mmcc_rowset;

static void rowset_free(mmcc_rowset *rs)
{
    free_rows(rs->rd, rs->rows);
    free(rs->ord);
    rs->rd = NULL;
    rs->ord = NULL;
}

static dpc_status rowset_make(mmcc_rowset *rs, const dpc__mmcc_mat *M, double p, double s,
                              double delta, dpc_error *err)
{
    size_t rows = M->rows;
    memset(rs, 0, sizeof *rs);
    rs->rd = dpc__calloc(rows, sizeof *rs->rd);
    rs->ord = dpc__malloc_array(rows, sizeof *rs->ord);
    rs->rows = rows;
    rs->s = s;
    if (!rs->rd || !rs->ord) {
        rowset_free(rs);
        return DPC__NOMEM(err, "the MMCC rows");
    }
    dpc_status st = mmcc_rows(M, p, s, delta, rs->rd, NULL, NULL, &rs->slack, err);
    double cmax = dpc__mmcc_cmax(M);
    rs->g = cmax / ceil(64.0 * cmax / s);
    for (size_t i = 0; i < rows; i++) rs->ord[i] = &rs->rd[i];
    qsort(rs->ord, rows, sizeof *rs->ord, cmp_mean);
    if (st) rowset_free(rs);
    return st;
}

/* The rows' groups composed on the loss grid `interval`. */
static dpc_status rowset_pld(const mmcc_rowset *rs, const dpc_account_opts *o, double interval,
                             size_t groups, dpc_pld **out, dpc_error *err)
{
    size_t rows = rs->rows;
    if (groups < 1) groups = 1;
    if (groups > rows) groups = rows;
    dpc_pld_params par = {interval, o->pld_tail, DPC_PLD_CONNECT_DOTS};
    dpc_pld *acc = NULL;
    dpc_status st = DPC_OK;
    for (size_t gi = 0; !st && gi < groups; gi++) {
        size_t a = rows * gi / groups, b = rows * (gi + 1) / groups;
        if ((st = dpc__progress(&o->progress, (double)gi, (double)groups, err))) break;
        rowdist rep;
        if (group_rep(rs->ord + a, b - a, &rep)) {
            st = DPC__NOMEM(err, "an MMCC group");
            break;
        }
        dpc_pld *one = NULL, *many = NULL, *sum = NULL;
        st = dpc__pld_new_mog(&one, rep.w, rep.K, rep.off, rs->g, rs->s, &par, rows, err);
        free(rep.w);
        if (!st) st = dpc_pld_self_compose(&many, one, b - a, err);
        dpc_pld_free(one);
        if (!st && acc) {
            st = dpc_pld_compose(&sum, acc, many, err);
            dpc_pld_free(many);
            many = sum;
        }
        dpc_pld_free(acc);
        acc = many;
    }
    if (st) {
        dpc_pld_free(acc);
        return st;
    }
    *out = acc;
    return DPC_OK;
}

dpc_status dpc__mmcc_pld(const double *C, size_t rows, size_t n, double p, double s,
                         double delta, const dpc_account_opts *o, size_t groups, dpc_pld **out,
                         double *slack, dpc_error *err)
{
    *out = NULL;
    *slack = 0.0;
    mmcc_rowset rs;
    dpc__mmcc_mat M = {C, NULL, rows, n, n};
    dpc_status st = rowset_make(&rs, &M, p, s, delta, err);
    if (st) return st;
    *slack = rs.slack;
    st = rowset_pld(&rs, o, o->pld_interval, groups, out, err);
    rowset_free(&rs);
    return st;
}

/* epsilon of the composed rows on the grid h at delta - slack (DPC_E_RANGE: too wide a grid). */
static dpc_status rowset_eps(const mmcc_rowset *rs, const dpc_account_opts *o, double h,
                             size_t groups, double delta, double *eps, dpc_error *err)
{
    dpc_pld *pld = NULL;
    dpc_status st = rowset_pld(rs, o, h, groups, &pld, err);
    if (!st && !(delta - rs->slack > 0.0))
        st = dpc_error_param(err, DPC_E_NUMERIC, "delta", "the MMCC slack exceeds delta");
    if (!st) st = dpc_pld_epsilon(pld, delta - rs->slack, eps, err);
    dpc_pld_free(pld);
    return st;
}

typedef struct {
    double mean, K;
} row_est;

static int cmp_est(const void *a, const void *b)
{
    const row_est *x = a, *y = b;
    return x->mean < y->mean ? -1 : x->mean > y->mean;
}

/* Estimated operations of the groups' mixture PLDs on grid h (pld_mog.c: nx x-cells, each
 * with one exponential per component for the loss and two cell masses per component and
 * direction; nx = r (K + 2 zt s / g) with r = min(64, ceil(g vmax / (h s^2))); about 12 per
 * component and cell); the rows sorted by mean as rowset_pld groups them. */
static double pld_work(const row_est *e, size_t rows, size_t groups, double g, double s,
                       double h, double tail)
{
    if (groups < 1) groups = 1;
    if (groups > rows) groups = rows;
    double zt = dpc__ndtri_upper(log(tail * 1e-5 / (double)rows / 4.0)), w = 0.0;
    for (size_t gi = 0; gi < groups; gi++) {
        size_t a = rows * gi / groups, b = rows * (gi + 1) / groups;
        double K = 1.0;
        for (size_t r = a; r < b; r++)
            if (e[r].K > K) K = e[r].K;
        double rr = ceil(g * K * g / (h * s * s));
        rr = rr < 1.0 ? 1.0 : rr > 64.0 ? 64.0 : rr;
        w += 12.0 * rr * (K + 2.0 * zt * s / g) * K;
    }
    return w;
}

/* The route's cost before any distribution is built: the rows' estimated supports (one cheap
 * pass over C: the terms and their Bernstein bound) give the rows' work *wrows and the sorted
 * estimates (est, rows entries; caller frees) for pld_work. */
static dpc_status mmcc_estimate(const dpc__mmcc_mat *M, double p, double s, double delta,
                                row_est **est, double *wrows, dpc_error *err)
{
    double *raw = dpc__malloc_array(2 * M->rows, sizeof *raw), slack = 0.0;
    row_est *e = dpc__malloc_array(M->rows, sizeof *e);
    *est = NULL;
    *wrows = 0.0;
    if (!raw || !e) {
        free(raw);
        free(e);
        return DPC__NOMEM(err, "the MMCC cost estimate");
    }
    dpc_status st = mmcc_rows(M, p, s, delta, NULL, raw, wrows, &slack, err);
    for (size_t i = 0; !st && i < M->rows; i++) e[i] = (row_est){raw[2 * i], raw[2 * i + 1]};
    free(raw);
    if (st) {
        free(e);
        return st;
    }
    qsort(e, M->rows, sizeof *e, cmp_est);
    *est = e;
    return DPC_OK;
}

static dpc_status work_refusal(double work, dpc_error *err)
{
    return dpc_error_param(err, DPC_E_RANGE, "noise_multiplier",
                           "the MMCC route needs about %.2g operations at this noise, above the "
                           "work limit %.2g (DPC_WORK_LIMIT, about 10 s): too little noise for "
                           "it (its per-row mixtures grow with the strategy's row sums / noise)",
                           work, DPC_WORK_LIMIT);
}

/* DP-REQ: mmcc-grid: connect-the-dots is pessimistic on every grid, so the epsilon of each grid
 * is an upper bound and so is their minimum. adaptive: a first pass on the coarse grid
 * MMCC_COARSE (a hundred points per unit of loss) bounds epsilon; the final grid is
 * max(requested, 1e-5 epsilon), the resolution relative to epsilon that
 * dpc_account_opts_for_target gives a calibration (a loss range of hundreds on the 1e-4 grid
 * took 25 s for nu, n = 100, issue 35); the answer is the smaller of the two passes. The cost
 * is estimated first (mmcc_estimate, pld_work): a first pass above DPC_WORK_LIMIT is refused
 * before any work (DPC_E_RANGE, *work set), and a second pass that would not fit what is left
 * of the limit is skipped (the first pass's bound stands). */
#define MMCC_COARSE 1e-2
dpc_status dpc__mmcc_epsilon(const dpc__mmcc_mat *M, double p, double s, double delta,
                             const dpc_account_opts *o, size_t groups, int adaptive, double *eps,
                             double *slack, double *h_used, double *work, dpc_error *err)
{
    double h = o->pld_interval, h1 = adaptive && h < MMCC_COARSE ? MMCC_COARSE : h;
    double g = dpc__mmcc_cmax(M), wrows;
    g = g / ceil(64.0 * g / s);
    row_est *est;
    dpc_status st = mmcc_estimate(M, p, s, delta, &est, &wrows, err);
    if (st) return st;
    double w1 = wrows + pld_work(est, M->rows, groups, g, s, h1, o->pld_tail);
    *work = w1;
    if (w1 > DPC_WORK_LIMIT) {
        free(est);
        return work_refusal(w1, err);
    }
    mmcc_rowset rs;
    if ((st = rowset_make(&rs, M, p, s, delta, err))) {
        free(est);
        return st;
    }
    *slack = rs.slack;
    double e1 = INFINITY;
    if (h1 != h) {
        dpc_error e2;
        dpc_status s1 = rowset_eps(&rs, o, h1, groups, delta, &e1, &e2);
        if (s1 == DPC_E_CANCELLED || s1 == DPC_E_NOMEM || s1 == DPC_E_NUMERIC) {
            if (err) *err = e2;
            rowset_free(&rs);
            free(est);
            return s1;
        }
        if (s1) e1 = INFINITY; /* too wide even there: the requested grid decides */
        if (isfinite(e1) && 1e-5 * e1 > h) h = 1e-5 * e1;
        /* the second pass only where it is finer and fits what the first left of the limit */
        double w2 = pld_work(est, M->rows, groups, g, s, h, o->pld_tail);
        if (isfinite(e1) && (h >= h1 || w1 + w2 > DPC_WORK_LIMIT)) {
            h = h1;
        } else if (w1 + w2 > DPC_WORK_LIMIT) {
            rowset_free(&rs);
            free(est);
            *work = w1 + w2;
            return work_refusal(w1 + w2, err);
        } else {
            *work += w2;
        }
    }
    free(est);
    double e = INFINITY;
    if (h != h1 || h1 == o->pld_interval) {
        st = rowset_eps(&rs, o, h, groups, delta, &e, err);
        if (st == DPC_E_RANGE && isfinite(e1)) st = DPC_OK; /* the coarse answer stands */
    }
    rowset_free(&rs);
    if (st) return st;
    *eps = e1 < e ? e1 : e;
    if (h_used) *h_used = e1 < e ? h1 : h;
    return DPC_OK;
}
