/* blt_opt.c — BLT strategy optimization (Dvijotham et al. 2024; McMahan et al. 2024).
 *
 * C has c_0 = 1, c_j = sum_i omega_i theta_i^(j-1). Unconstrained variables x = (u, v):
 *     theta_i = 1 / (1 + e^-u_i)          in (0, 1)      (1 - theta_i = 1 / (1 + e^u_i), exact)
 *     omega_i = e^v_i / (1 + sum_j e^v_j)  > 0, sum < 1
 * so c is positive and non-increasing (c_1 = sum omega < 1 = c_0): the min-sep sensitivity of the
 * pattern 0, b, 2b, ... is exact (Kalinin & Lampert 2024, Thm 2), and C^-1 is a BLT whose decays
 * are the zeros of 1 + sum_i omega_i / (z - theta_i): real, interlacing the theta_i, and > -1
 * because sum_i omega_i / (1 + theta_i) < 1 (the stable region of the BLT inversion theorem).
 *
 * Loss = sens^2 * err^2, minimised as log(sens^2) + log(err^2) (scale-free). err^2: blt_gram.c
 * (exact gradient); sens^2: closed form below with a 4-point central-difference gradient (it is
 * O(k nbuf^2), so the n-independence holds). */
#include "common/util.h"
#include "strategy/blt_internal.h"
#include "strategy/strategy_internal.h"

#include <math.h>
#include <string.h>

#define BLT_MAX DPC__STRAT_BLT_MAX

/* sum_{j<N} r^j with omr = 1 - r given accurately. */
static double geo(double omr, double N)
{
    if (N <= 0.0) return 0.0;
    if (omr == 0.0) return N;
    return -expm1(N * log1p(-omr)) / omr;
}

double dpc__blt_sens2(const double *theta, const double *omt, const double *omega, size_t nbuf,
                      size_t n, size_t keff, size_t b)
{
    /* sens^2 = sum_{p,q<K} T(|p-q| b, n - max(p,q) b),  T(D, L) = sum_{s<L} c_s c_{s+D}:
     *   T(0, L) = 1 + sum_ij w_i w_j S_ij(L-1),  T(D, L) = c_D + sum_ij w_i w_j t_j^D S_ij(L-1)
     * with S_ij(N) = sum_{s<N} (t_i t_j)^s. Pairs with lag d share suffix sums over the later
     * index m >= d of S_ij(n - m b - 1). */
    if (keff == 0) keff = 1;
    double total = (double)keff;
    for (size_t i = 0; i < nbuf; i++)
        for (size_t j = 0; j < nbuf; j++) {
            double omr = omt[i] + theta[i] * omt[j], wij = omega[i] * omega[j];
            double lt = log1p(-omt[j]), suf = 0.0;
            for (size_t m = keff; m-- > 0;) {
                suf += geo(omr, (double)n - (double)m * (double)b - 1.0);
                if (m == 0) total += wij * suf;
                else total += 2.0 * wij * exp((double)m * (double)b * lt) * suf;
            }
        }
    for (size_t dlag = 1; dlag < keff; dlag++) {
        double D = (double)dlag * (double)b, cD = 0.0;
        for (size_t j = 0; j < nbuf; j++) cD += omega[j] * exp((D - 1.0) * log1p(-omt[j]));
        total += 2.0 * (double)(keff - dlag) * cD;
    }
    return total;
}

typedef struct blt_ctx {
    const dpc_strategy_problem *pb;
    size_t nbuf, d, keff;
    double theta[BLT_MAX], omt[BLT_MAX], omega[BLT_MAX];
    double *F, *g, *h, *Fbar, *hbar; /* (d*d), (d), (d), (d*d), (d) */
    int failed;
    const dpc_progress *progress;    /* reports: done iterations of total */
    double done, total;
} blt_ctx;

static void params_from_x(const double *x, size_t k, double *theta, double *omt, double *omega)
{
    double M = 0.0;
    for (size_t i = 0; i < k; i++) {
        theta[i] = 1.0 / (1.0 + exp(-x[i]));
        omt[i] = 1.0 / (1.0 + exp(x[i]));
        if (x[k + i] > M) M = x[k + i];
    }
    double den = exp(-M);
    for (size_t i = 0; i < k; i++) den += exp(x[k + i] - M);
    for (size_t i = 0; i < k; i++) omega[i] = exp(x[k + i] - M) / den;
}

static double log_sens2_x(blt_ctx *c, const double *x)
{
    double th[BLT_MAX], om[BLT_MAX], w[BLT_MAX];
    params_from_x(x, c->nbuf, th, om, w);
    return log(dpc__blt_sens2(th, om, w, c->nbuf, c->pb->steps, c->keff, c->pb->min_sep));
}

/* log err^2 and its gradient with respect to theta and omega (gth, gom). */
static double log_err2(blt_ctx *c, const double *theta, const double *omega, double *gth,
                       double *gom)
{
    const dpc_strategy_problem *pb = c->pb;
    size_t d = c->d, k = c->nbuf;
    int mean = pb->objective == DPC_OBJECTIVE_MEAN;
    dpc__blt_system(c->F, c->g, c->h, theta, omega, k, &pb->workload);
    double qg, qh;
    if (!dpc__blt_gram_quad(c->F, c->g, c->h, d, (uint64_t)(pb->steps - 1), mean, &qg, &qh,
                            gth ? c->Fbar : NULL, c->hbar, mean ? 0.0 : 1.0, mean ? 1.0 : 0.0)) {
        c->failed = 1;
        return NAN;
    }
    double nn = (double)pb->steps, s = mean ? nn + qh : 1.0 + qg; /* err^2 = s (/ n for mean) */
    if (gth) {
        for (size_t i = 0; i < k; i++) {
            double col = 0.0;
            for (size_t r = 0; r < d; r++) col += c->Fbar[r * d + i];
            gth[i] = c->Fbar[i * d + i] / s;
            gom[i] = (-col - c->hbar[i]) / s;
        }
    }
    return mean ? log(s / nn) : log(s);
}

/* Objective of the minimiser: 100 + log(loss). The constant keeps the value positive for
 * liblbfgs's relative-decrease test (which divides by f). */
static double blt_objective(void *vc, const double *x, double *g, size_t nx)
{
    blt_ctx *c = vc;
    size_t k = c->nbuf;
    (void)nx;
    params_from_x(x, k, c->theta, c->omt, c->omega);
    for (size_t i = 0; i < k; i++)
        if (!(c->theta[i] < 1.0 && c->theta[i] > 0.0 && c->omega[i] > 0.0)) return INFINITY;
    double gth[BLT_MAX], gom[BLT_MAX];
    double le = log_err2(c, c->theta, c->omega, gth, gom);
    double ls = log(dpc__blt_sens2(c->theta, c->omt, c->omega, k, c->pb->steps, c->keff,
                                   c->pb->min_sep));
    if (!isfinite(le) || !isfinite(ls)) return INFINITY;
    /* chain rule to (u, v) */
    double dot = 0.0;
    for (size_t i = 0; i < k; i++) dot += gom[i] * c->omega[i];
    for (size_t i = 0; i < k; i++) {
        g[i] = gth[i] * c->theta[i] * c->omt[i];
        g[k + i] = c->omega[i] * (gom[i] - dot);
    }
    /* sensitivity gradient: 4-point central differences (cheap closed form) */
    double xs[2 * BLT_MAX];
    memcpy(xs, x, 2 * k * sizeof *x);
    const double hs = 1e-3;
    for (size_t i = 0; i < 2 * k; i++) {
        double f[4], off[4] = {-2 * hs, -hs, hs, 2 * hs};
        for (int q = 0; q < 4; q++) {
            xs[i] = x[i] + off[q];
            f[q] = log_sens2_x(c, xs);
        }
        xs[i] = x[i];
        g[i] += (8.0 * (f[2] - f[1]) - (f[3] - f[0])) / (12.0 * hs);
    }
    return 100.0 + le + ls;
}

dpc_status dpc_strategy_blt_loss(const double *theta, const double *omega, size_t nbuf,
                                 const dpc_strategy_problem *pb, dpc_strategy_loss *out,
                                 dpc_error *err)
{
    dpc_status st = dpc_strategy_problem_check(pb, err);
    if (st) return st;
    if (nbuf == 0 || nbuf > BLT_MAX)
        return dpc_error_param(err, DPC_E_INVALID, "nbuf", "need 1..%d buffers, got %zu", BLT_MAX,
                               nbuf);
    double omt[BLT_MAX], wsum = 0.0;
    int monotone = 1;
    for (size_t i = 0; i < nbuf; i++) {
        if (!(theta[i] > 0.0 && theta[i] < 1.0))
            return dpc_error_param(err, DPC_E_INVALID, "theta",
                                   "entry %zu must be in (0, 1), got %g", i, theta[i]);
        if (!isfinite(omega[i]))
            return dpc_error_param(err, DPC_E_INVALID, "omega", "entry %zu is not finite", i);
        omt[i] = 1.0 - theta[i];
        if (omega[i] < 0.0) monotone = 0;
        wsum += omega[i];
    }
    if (wsum > 1.0) monotone = 0;
    blt_ctx c;
    memset(&c, 0, sizeof c);
    c.pb = pb;
    c.nbuf = nbuf;
    c.d = dpc__blt_state_dim(nbuf, pb->workload.momentum);
    c.keff = dpc__strat_keff(pb);
    size_t d = c.d;
    double *mem = dpc__calloc(2 * d * d + 3 * d, sizeof(double));
    if (!mem) return DPC__NOMEM(err, "BLT workspace");
    c.F = mem;
    c.Fbar = mem + d * d;
    c.g = mem + 2 * d * d;
    c.h = c.g + d;
    c.hbar = c.h + d;
    double le = log_err2(&c, theta, omega, NULL, NULL);
    free(mem);
    if (c.failed) return DPC__NOMEM(err, "BLT Gramian");
    double s2 = dpc__blt_sens2(theta, omt, omega, nbuf, pb->steps, c.keff, pb->min_sep);
    if (!isfinite(le) || !isfinite(s2))
        return dpc_error_set(err, DPC_E_NUMERIC, "blt: loss is not finite");
    out->sensitivity = sqrt(s2);
    out->error = sqrt(exp(le));
    out->loss = s2 * exp(le);
    out->exact = monotone || c.keff == 1;
    return DPC_OK;
}

/* ---- optimizer ----------------------------------------------------------------------------- */

typedef struct blt_run {
    double x[2 * BLT_MAX];
    double f;
    size_t iters;
} blt_run;

static dpc_status run_from(blt_ctx *c, size_t k, const double *x0, size_t max_iter, blt_run *r,
                           dpc_error *err)
{
    c->nbuf = k;
    c->d = dpc__blt_state_dim(k, c->pb->workload.momentum);
    memcpy(r->x, x0, 2 * k * sizeof *x0);
    strat_lbfgs_result res = {0, 0, 0, c->progress, c->done, c->total};
    dpc_status st = dpc__strat_minimize(blt_objective, c, r->x, 2 * k, max_iter, 1e-13, &res, err);
    c->done += (double)res.iterations;
    if (st) return st;
    if (c->failed) return DPC__NOMEM(err, "BLT Gramian");
    r->f = res.f;
    r->iters = res.iterations;
    return DPC_OK;
}

static double clampd(double x, double lo, double hi) { return x < lo ? lo : x > hi ? hi : x; }

/* Adds a buffer to x (k buffers) with log(1 - theta) = l and a small output scale. */
static void add_buffer(double *out, const double *x, size_t k, double l)
{
    double se = 1.0;
    for (size_t i = 0; i < k; i++) se += exp(x[k + i]);
    for (size_t i = 0; i < k; i++) {
        out[i] = x[i];
        out[k + 1 + i] = x[k + i];
    }
    double omt = exp(l);
    out[k] = log((1.0 - omt) / omt); /* logit(theta) */
    out[2 * k + 1] = log(0.02 * se);
}

static int cmp_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* The strategy of run r with k buffers, buffers ordered by decreasing theta (a deterministic
 * presentation); NULL when out of memory. */
static dpc_strategy *strategy_of(const blt_run *r, size_t k, const dpc_strategy_problem *pb)
{
    dpc_strategy *s = dpc__strategy_alloc(DPC_MECH_BLT, "blt", pb);
    if (!s) return NULL;
    s->nbuf = k;
    s->theta = dpc__malloc_array(k, sizeof(double));
    s->omega = dpc__malloc_array(k, sizeof(double));
    if (!s->theta || !s->omega) {
        dpc_strategy_free(s);
        return NULL;
    }
    double th[BLT_MAX], om[BLT_MAX], w[BLT_MAX];
    params_from_x(r->x, k, th, om, w);
    for (size_t i = 0; i < k; i++) {
        size_t a = i;
        for (size_t j = i + 1; j < k; j++)
            if (th[j] > th[a]) a = j;
        double t0 = th[i], w0 = w[i];
        th[i] = th[a], w[i] = w[a];
        th[a] = t0, w[a] = w0;
        s->theta[i] = th[i];
        s->omega[i] = w[i];
    }
    return s;
}

dpc_status dpc_strategy_optimize_blt(dpc_strategy **out, const dpc_strategy_problem *pb,
                                     const dpc_strategy_options *opt, dpc_error *err)
{
    *out = NULL;
    dpc_status st = dpc_strategy_problem_check(pb, err);
    if (st) return st;
    dpc_strategy_options o;
    if (opt) o = *opt;
    else dpc_strategy_options_init(&o);
    if (pb->steps < 2)
        return dpc_error_param(err, DPC_E_INVALID, "steps", "BLT optimization needs n >= 2");
    size_t maxb = o.buffers ? o.buffers : (o.max_buffers ? o.max_buffers : 10);
    /* buffers at most BLT_MAX; min_improvement 0 (the default), else in (0, 1) (issue 37: -1
     * was accepted and silently meant the default); iterations an int */
    if ((st = dpc__strat_check_options(&o, err))) return st;
    if (dpc__strat_keff(pb) > 100000)
        return dpc_error_param(err, DPC_E_RANGE, "participations",
                               "%zu effective participations; the BLT sensitivity "
                               "costs O(k) per evaluation, at most 100000 supported",
                               dpc__strat_keff(pb));
    double min_impr = o.min_improvement > 0.0 ? o.min_improvement : 0.01;
    size_t max_iter = o.max_iterations ? o.max_iterations : 500;

    blt_ctx c;
    memset(&c, 0, sizeof c);
    c.pb = pb;
    c.keff = dpc__strat_keff(pb);
    /* progress: at most max_iter iterations for each of 3 + sum_{k<maxb} (k + 1) runs */
    c.progress = &o.progress;
    c.total = (double)max_iter * (3.0 + 0.5 * (double)(maxb - 1) * (double)(maxb + 2));
    size_t dmax = dpc__blt_state_dim(maxb, pb->workload.momentum);
    double *mem = dpc__calloc(2 * dmax * dmax + 3 * dmax, sizeof(double));
    if (!mem) return DPC__NOMEM(err, "BLT workspace");
    c.F = mem;
    c.Fbar = mem + dmax * dmax;
    c.g = mem + 2 * dmax * dmax;
    c.h = c.g + dmax;
    c.hbar = c.h + dmax;

    double nn = (double)pb->steps, lmin = log(0.5 / nn), lmax = log(0.9);
    blt_run best, cur, cand;
    size_t total_iters = 0, kbest = 0;
    /* one buffer: a few starting decays */
    const double starts[3] = {log(4.0 / nn), -0.5 * log(nn), log(0.1)};
    for (int s = 0; s < 3; s++) {
        double x0[2] = {0, log(0.25)};
        double l = clampd(starts[s], lmin, lmax);
        x0[0] = log((1.0 - exp(l)) / exp(l));
        if ((st = run_from(&c, 1, x0, max_iter, &cand, err))) goto fail;
        total_iters += cand.iters;
        if (s == 0 || cand.f < cur.f) cur = cand;
    }
    best = cur;
    kbest = 1;
    for (size_t k = 1; k < maxb; k++) {
        /* candidate decays for the new buffer: beyond both ends and in every gap (log 1-theta) */
        double ls[BLT_MAX], cands[BLT_MAX + 2];
        size_t nc = 0;
        for (size_t i = 0; i < k; i++) ls[i] = -log1p(exp(cur.x[i])); /* log(1 - theta) */
        qsort(ls, k, sizeof *ls, cmp_desc);                           /* large to small */
        cands[nc++] = clampd(ls[k - 1] - 1.5, lmin, lmax);
        cands[nc++] = clampd(ls[0] + 1.5, lmin, lmax);
        for (size_t i = 0; i + 1 < k; i++) cands[nc++] = 0.5 * (ls[i] + ls[i + 1]);
        blt_run next;
        int have = 0;
        for (size_t q = 0; q < nc; q++) {
            double x0[2 * BLT_MAX];
            add_buffer(x0, cur.x, k, cands[q]);
            if ((st = run_from(&c, k + 1, x0, max_iter, &cand, err))) goto fail;
            total_iters += cand.iters;
            if (!have || cand.f < next.f) {
                next = cand;
                have = 1;
            }
        }
        /* improvement in loss: exp(f_cur - f_next) - 1 */
        double gain = -expm1(next.f - cur.f);
        cur = next;
        if (o.buffers) {
            best = cur;
            kbest = k + 1;
            continue;
        }
        if (gain < min_impr) break;
        best = cur;
        kbest = k + 1;
    }

    dpc_strategy *s = strategy_of(&best, kbest, pb);
    if (!s) {
        st = DPC__NOMEM(err, "strategy");
        goto fail;
    }
    s->iterations = total_iters;
    free(mem);
    st = dpc_strategy_blt_loss(s->theta, s->omega, kbest, pb, &s->achieved, err);
    if (st) {
        dpc_strategy_free(s);
        return st;
    }
    *out = s;
    return DPC_OK;
fail:
    free(mem);
    return st;
}

dpc_status dpc_strategy_default_blt(dpc_strategy **out, size_t steps, size_t participations,
                                    size_t min_sep, dpc_workload workload, dpc_error *err)
{
    if (!out) return dpc_error_param(err, DPC_E_INVALID, "out", "NULL");
    *out = NULL;
    dpc_strategy_problem pb;
    dpc_strategy_problem_init(&pb, steps);
    pb.participations = participations;
    pb.min_sep = min_sep;
    pb.workload = workload;
    dpc_strategy_options opt;
    dpc_strategy_options_init(&opt);
    return dpc_strategy_optimize_blt(out, &pb, &opt, err);
}

dpc_status dpc_mech_params_default_blt(dpc_mech_params *p, const dpc_participation *part,
                                       dpc_strategy **out, dpc_error *err)
{
    if (!out) return dpc_error_param(err, DPC_E_INVALID, "out", "NULL");
    *out = NULL;
    if (!p || !part) return dpc_error_param(err, DPC_E_INVALID, p ? "part" : "params", "NULL");
    if (p->kind != DPC_MECH_BLT || p->theta || p->omega || p->steps < 2) return DPC_OK;
    size_t steps = p->steps;
    dpc_status st = dpc_strategy_default_blt(out, steps, part->k, part->b, DPC_WORKLOAD_PREFIX, err);
    if (st) return st;
    dpc_strategy_mech_params(*out, p);
    p->steps = steps; /* the optimized problem's n is p's; kept as given */
    return DPC_OK;
}
