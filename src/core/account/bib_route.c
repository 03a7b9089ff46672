/* bib_route.c — the balls-in-bins route of a mechanism run (DP-REQ: bib-route; doc/accounting.md
 * section 7): an example takes part in one uniformly random step of each period b, the same
 * position every period (dpc_sampler BALLS_IN_BINS, jax_privacy's BallsInBinsSampling).
 *
 * With C >= 0 entrywise the run is dominated by P = (1/b) sum_j N(m_j, s^2 I) against
 * Q = N(0, s^2 I), m_j = C x_j, x_j the indicator of the steps t = j mod b, s = z * column norm
 * (Choquette-Choo, Ganesh, Haque, Steinke & Thakurta 2024). Two evaluations:
 *  - identity (DP-SGD): the m_j are orthogonal with |m_j|^2 = k_j <= k = ceil(n/b), and the pair
 *    reduces to b sufficient statistics: random allocation of one Gaussian with
 *    mu = sqrt(k)/z among b steps (a post-processing argument covers k_j < k: shrinking a
 *    coordinate's mean and adding noise maps the k pair onto the k_j one), bounded
 *    deterministically by bib_ra.c;
 *  - any other C >= 0: the b x b Gram matrix G = M^T M is all the pair depends on; two
 *    deterministic bounds, bib_sf.c (post-processing onto random allocation) and bib_rdp.c (the
 *    Renyi dynamic program), each direction the smaller of the two, give the route's epsilon
 *    (the larger direction); bib_mc.c certifies an upper
 *    confidence bound by importance-sampled Monte Carlo, reported beside it (the deterministic
 *    bound stays the route's answer even where the Monte Carlo is tighter: its guarantee does
 *    not hold only with high probability). */
#include "account/acc_internal.h"

#include "account/acc_math.h"
#include "common/util.h"

#include <stdlib.h>
#include <string.h>

#define BIB_MAX_STEPS 4096 /* the dense strategy is materialized */
#define BIB_MAX_BINS 256   /* Monte Carlo: O(b^2) per sample, 2^17 samples: 8.6e9 operations at
                            256 bins, within DPC_WORK_LIMIT (512 took 33 s per evaluation) */
#define BIB_MC_SAMPLES DPC__BIB_MC_SAMPLES
/* The Monte Carlo reported beside a deterministic bound (not asked for by bib_monte_carlo) runs
 * only within this work, about 1 s (2^17 samples x b^2: up to 87 bins); above it the side
 * report is omitted (mc_samples 0) instead of taking 4-10 s at 256 bins (issue 37) */
#define BIB_MC_SIDE_WORK 1e9
/* The Monte Carlo asked for (bib_monte_carlo): one evaluation's draws within 4e9 operations,
 * 174 bins (measured 0.3-0.4 ns per operation on the 2-core AMD EPYC Zen 5, KVM: 256 bins took
 * 2.3 s, 180 bins 1.3 s, beside the deterministic bound's 0.4-0.6 s); more bins are refused
 * before any work (issue 37: "the Monte Carlo route" ran 16 s and more) */
#define BIB_MC_WORK 4e9
#define BIB_MC_MAX_BINS 174
#define BIB_MC_BETA 1e-6

/* The Monte Carlo's work: N draws of O(b^2) each. */
static double mc_ops(size_t b)
{
    return (double)BIB_MC_SAMPLES * (double)b * (double)b;
}

dpc_status dpc__bib_prepare(const dpc_mech_run *run, const dpc_account_opts *o, double delta,
                            dpc__bib_ctx *c, dpc_error *err)
{
    memset(c, 0, sizeof *c);
    c->progress = o->progress;
    c->stages = &c->stages_done;
    c->ops = &c->ops_done;
    if (!run->balls_in_bins || run->part.kind != DPC_PART_CYCLIC || run->part.b < 1 ||
        (o->accountant != DPC_ACCOUNTANT_PLD && o->accountant != DPC_ACCOUNTANT_RDP) ||
        run->n_pre) /* pre-releases are composed by the whole-run and banded-MF routes only */
        return DPC_E_UNSUPPORTED;
    size_t n = dpc_mech_steps(run->mech), b = run->part.b;
    c->b = b;
    c->k = (n + b - 1) / b;
    if (run->part.k < c->k) c->k = run->part.k;
    c->delta = delta;
    c->allow_mc = o->bib_monte_carlo != 0;
    if (dpc_mech_get_params(run->mech)->kind == DPC_MECH_IDENTITY) {
        c->identity = 1;
        c->colmax = 1.0;
        return DPC_OK;
    }
    if (n > BIB_MAX_STEPS) {
        c->why = "more than 4096 steps";
        return DPC_E_UNSUPPORTED;
    }
    if (b > BIB_MAX_BINS) {
        c->why = "more than 256 bins";
        return DPC_E_UNSUPPORTED;
    }
    if (c->allow_mc && mc_ops(b) > BIB_MC_WORK) /* decided before any work (issue 37) */
        return dpc_error_param(err, DPC_E_RANGE, "bib_monte_carlo",
                               "the balls-in-bins Monte Carlo over %zu bins takes 2^17 draws x "
                               "b^2 = %.3g operations, above its limit %.3g (at most %d bins, "
                               "about 1.5 s); without it the deterministic bound is the route's "
                               "answer",
                               b, mc_ops(b), BIB_MC_WORK, BIB_MC_MAX_BINS);
    size_t rows;
    double *C = dpc__mech_nonneg_matrix(run->mech, &rows, &c->why);
    if (!C) return DPC_E_UNSUPPORTED; /* negative entries: see doc/accounting.md */
    dpc_sensitivity col;
    dpc_participation single = {DPC_PART_MINSEP, 1, 1};
    dpc_status st = dpc_mech_sensitivity(run->mech, &single, &col, err);
    double *M = dpc__calloc(rows * b, sizeof *M);
    c->G = dpc__calloc(b * b, sizeof *c->G);
    if (!st && (!M || !c->G)) st = DPC__NOMEM(err, "the balls-in-bins Gram matrix");
    for (size_t i = 0; !st && i < rows; i++) /* M = C X: m_j sums the columns t = j mod b */
        for (size_t t = 0; t < n; t++) M[i * b + t % b] += C[i * n + t];
    for (size_t i = 0; !st && i < b; i++) /* G = M^T M, fixed order */
        for (size_t j = 0; j <= i; j++) {
            double v = 0.0;
            for (size_t r = 0; r < rows; r++) v += M[r * b + i] * M[r * b + j];
            c->G[i * b + j] = c->G[j * b + i] = v;
        }
    free(C);
    free(M);
    if (!st) st = dpc__bib_sf_prepare(c->G, b, c->sf_a, c->sf_c, &c->sf_n, err);
    if (!st) st = dpc__bib_rdp_prepare(c->G, b, &c->rdp, err);
    if (st) {
        dpc__bib_free(c);
        return st;
    }
    c->colmax = col.value;
    return DPC_OK;
}

void dpc__bib_free(dpc__bib_ctx *c)
{
    free(c->G);
    dpc__bib_rdp_free(&c->rdp);
    c->G = NULL;
}

double dpc__bib_eval_ops(const dpc__bib_ctx *c, int with_mc)
{
    if (c->identity) return dpc__ra_epsilon_ops(c->b);
    /* every post-processing candidate in both directions (none skipped) plus the Renyi
     * program at every order level it may double to */
    double w = dpc__bib_rdp_ops_max(&c->rdp) + (double)c->sf_n * dpc__ra_epsilon_ops(c->b);
    return with_mc ? w + mc_ops(c->b) : w;
}

/* One stage of an evaluation done: reported (the total is a ceiling that grows, as the
 * calibrations' is), and a cancellation seen. */
static dpc_status bib_stage(const dpc__bib_ctx *c, dpc_error *err)
{
    double d = ++*c->stages;
    return dpc__progress(&c->progress, d, fmax(120.0, d + 1.0), err);
}

dpc_status dpc__bib_epsilon_ex(const dpc__bib_ctx *c, double z, double eps_whole, int with_mc,
                               double *eps, dpc_account_mech_info *mc, dpc_error *err)
{
    mc->mc_samples = 0;
    mc->mc_confidence = NAN;
    mc->mc_seed = 0;
    mc->eps_bib_mc = NAN;
    mc->bib_mu = NAN;
    mc->bib_deterministic = 1;
    dpc_status st;
    if ((st = bib_stage(c, err))) return st;
    if (c->identity) {
        /* DP-REQ: bib-route: the k periods are k Gaussians of std z and unit sensitivity,
         * composed: one Gaussian of mu = sqrt(k) / z, randomly allocated among the b bins. */
        mc->bib_mu = sqrt((double)c->k) / z;
        *c->ops += dpc__ra_epsilon_ops(c->b);
        return dpc__ra_epsilon(c->b, mc->bib_mu, c->delta, eps, err);
    }
    double s = z * c->colmax, esf = INFINITY;
    if (c->sf_n) {
        /* two deterministic bounds, each direction on its own: the post-processing bound
         * (bib_sf.c) and the Renyi dynamic program (bib_rdp.c); every direction takes the
         * smaller, the route the larger direction. The Renyi bound first: a post-processing
         * candidate that provably lies above it in a direction is not computed there (the
         * minimum is the same; its random-allocation curves were 60-75% of the time) */
        double sr, sa, rr, ra, w1 = 0.0, w2 = 0.0;
        st = dpc__bib_rdp_epsilon2_ops(&c->rdp, s, c->delta, &rr, &ra, &w1, err);
        if (!st) st = bib_stage(c, err);
        if (!st)
            st = dpc__bib_sf_epsilon2_over(c->sf_a, c->sf_c, c->sf_n, c->b, s, c->delta, rr, ra,
                                           &sr, &sa, &w2, err);
        *c->ops += w1 + w2;
        if (st) return st;
        double er = sr < rr ? sr : rr, ea = sa < ra ? sa : ra;
        esf = er > ea ? er : ea;
    }
    *eps = esf;
    if (c->sf_n && (!with_mc || (!c->allow_mc && mc_ops(c->b) > BIB_MC_SIDE_WORK))) return DPC_OK;
    *c->ops += mc_ops(c->b);
    uint64_t seed;
    double emc;
    if ((st = bib_stage(c, err)) ||
        (st = dpc__bib_mc_epsilon(c->G, c->b, s, c->delta, BIB_MC_SAMPLES, BIB_MC_BETA,
                                  eps_whole, &emc, &seed, err)))
        return st;
    mc->mc_samples = BIB_MC_SAMPLES;
    mc->mc_confidence = 1.0 - BIB_MC_BETA;
    mc->mc_seed = seed;
    mc->eps_bib_mc = emc;
    if (!c->sf_n || (c->allow_mc && emc < esf)) { /* the high-probability bound is the route's */
        mc->bib_deterministic = 0;
        *eps = emc;
    }
    return DPC_OK;
}

dpc_status dpc__bib_epsilon_sf(const dpc__bib_ctx *c, double z, double *eps, dpc_error *err)
{
    double er, ea, w = 0.0;
    *eps = INFINITY;
    if (c->identity || !c->sf_n) return DPC_OK;
    dpc_status st = bib_stage(c, err);
    if (!st)
        st = dpc__bib_sf_epsilon2_over(c->sf_a, c->sf_c, c->sf_n, c->b, z * c->colmax, c->delta,
                                       INFINITY, INFINITY, &er, &ea, &w, err);
    *c->ops += w;
    if (!st) *eps = er > ea ? er : ea;
    return st;
}

dpc_status dpc__bib_epsilon(const dpc__bib_ctx *c, double z, double eps_whole, double *eps,
                            dpc_account_mech_info *mc, dpc_error *err)
{
    return dpc__bib_epsilon_ex(c, z, eps_whole, 1, eps, mc, err);
}
