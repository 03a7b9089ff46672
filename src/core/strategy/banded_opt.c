/* banded_opt.c — banded Toeplitz strategy optimization: C lower-triangular Toeplitz with
 * coefficients c_0 = 1, c_1 .. c_{bands-1} (zero beyond), for the mean or max error of any
 * workload, single or min-sep multi participation.
 *
 * Variables: k_eff = 1: c_j = x_j free (the column norm is the exact sensitivity whatever the
 * signs); k_eff > 1: c_j = c_{j-1} sigmoid(x_j), positive and non-increasing, so the min-sep
 * sensitivity of the pattern 0, b, 2b, ... is exact (Kalinin & Lampert 2024, Thm 2) and, by the
 * Enestrom-Kakeya theorem, C(z) has no zero inside the unit disk (C^-1 does not grow).
 *
 * Loss = sens^2 * E, E = sum_t w_t y_t^2, y = W beta, beta = C^-1 e_0, w_t = 1 (max: the last
 * row of A B) or (n - t)/n (mean). Exact adjoint gradient, O(n bands):
 *     ybar = 2 w y,  betabar = W^T ybar (the workload recursions run backwards),
 *     lambda = C^-T betabar (backward substitution),  dE/dc_j = -sum_t lambda_t beta_{t-j}. */
#include "common/util.h"
#include "mech/mech_internal.h"
#include "strategy/strategy_internal.h"

#include <math.h>
#include <string.h>

typedef struct band_ctx {
    const dpc_strategy_problem *pb;
    size_t n, L, keff; /* L = bands (<= n) */
    int monotone;
    double *c, *cbar, *beta, *y, *lam, *v; /* (L), (L), (n), (n), (n), (n) */
} band_ctx;

static double sigm(double x) { return 1.0 / (1.0 + exp(-x)); }

static void coeffs_from_x(band_ctx *b, const double *x)
{
    b->c[0] = 1.0;
    for (size_t j = 1; j < b->L; j++) b->c[j] = b->monotone ? b->c[j - 1] * sigm(x[j - 1]) : x[j - 1];
}

/* sens^2 and its gradient (cbar += d sens^2 / dc). */
static double sens2_grad(band_ctx *b, double *cbar)
{
    size_t n = b->n, L = b->L;
    const double *c = b->c;
    if (b->keff == 1) {
        double s = 0.0;
        for (size_t j = 0; j < L; j++) {
            s += c[j] * c[j];
            if (cbar) cbar[j] = 2.0 * c[j];
        }
        return s;
    }
    size_t sep = b->pb->min_sep;
    double *v = b->v;
    memset(v, 0, n * sizeof *v);
    for (size_t q = 0; q < b->keff; q++)
        for (size_t j = 0; j < L && q * sep + j < n; j++) v[q * sep + j] += c[j];
    double s = 0.0;
    for (size_t t = 0; t < n; t++) s += v[t] * v[t];
    if (cbar) {
        for (size_t j = 0; j < L; j++) {
            double acc = 0.0;
            for (size_t q = 0; q < b->keff && q * sep + j < n; q++) acc += v[q * sep + j];
            cbar[j] = 2.0 * acc;
        }
    }
    return s;
}

/* E (see the header comment) and, if cbar != NULL, dE/dc into cbar. */
static double err_grad(band_ctx *b, double *cbar)
{
    size_t n = b->n, L = b->L;
    const double *c = b->c;
    double m = b->pb->workload.momentum, a = b->pb->workload.decay;
    int mean = b->pb->objective == DPC_OBJECTIVE_MEAN;
    double *beta = b->beta, *y = b->y, *lam = b->lam;
    for (size_t t = 0; t < n; t++) { /* C beta = e_0 */
        double acc = t == 0 ? 1.0 : 0.0;
        size_t jm = t < L - 1 ? t : L - 1;
        for (size_t j = 1; j <= jm; j++) acc -= c[j] * beta[t - j];
        beta[t] = acc;
    }
    double u = 0.0, yy = 0.0, E = 0.0, nn = (double)n;
    for (size_t t = 0; t < n; t++) {
        u = beta[t] + m * u;
        yy = u + a * yy;
        y[t] = yy;
        E += (mean ? (nn - (double)t) / nn : 1.0) * yy * yy;
    }
    if (!isfinite(E)) return INFINITY;
    if (!cbar) return E;
    /* betabar = W^T (2 w y), then lambda = C^-T betabar; both backwards in time */
    u = 0.0;
    yy = 0.0;
    for (size_t t = n; t-- > 0;) {
        double yb = 2.0 * (mean ? (nn - (double)t) / nn : 1.0) * y[t];
        u = yb + a * u;
        yy = u + m * yy;
        lam[t] = yy; /* betabar_t, overwritten by lambda_t below */
    }
    for (size_t t = n; t-- > 0;) {
        double acc = lam[t];
        for (size_t j = 1; j < L && t + j < n; j++) acc -= c[j] * lam[t + j];
        lam[t] = acc;
    }
    cbar[0] = 0.0;
    for (size_t j = 1; j < L; j++) {
        double acc = 0.0;
        for (size_t t = j; t < n; t++) acc += lam[t] * beta[t - j];
        cbar[j] = -acc;
    }
    return E;
}

static double band_objective(void *vc, const double *x, double *g, size_t nx)
{
    band_ctx *b = vc;
    coeffs_from_x(b, x);
    double E = err_grad(b, b->cbar);
    if (!isfinite(E) || E <= 0.0) return INFINITY;
    /* d log E / dc in cbar; then add d log sens^2 / dc using y as scratch */
    double *sg = b->y;
    double s2 = sens2_grad(b, sg);
    if (!(s2 > 0.0) || !isfinite(s2)) return INFINITY;
    for (size_t j = 0; j < b->L; j++) b->cbar[j] = b->cbar[j] / E + sg[j] / s2;
    /* chain rule to x */
    if (!b->monotone) {
        for (size_t j = 1; j < b->L; j++) g[j - 1] = b->cbar[j];
    } else {
        double suf = 0.0; /* sum_{j >= i} cbar_j c_j */
        for (size_t i = b->L; i-- > 1;) {
            suf += b->cbar[i] * b->c[i];
            g[i - 1] = suf * (1.0 - sigm(x[i - 1]));
        }
    }
    (void)nx;
    return 100.0 + log(E) + log(s2); /* constant: see blt_opt.c */
}

static dpc_status band_eval(band_ctx *b, dpc_strategy_loss *out)
{
    double E = err_grad(b, NULL), s2 = sens2_grad(b, NULL);
    double e2 = E; /* max: last row norm^2; mean: (1/n) sum (n - t) y_t^2 = RMSE^2 */
    out->sensitivity = sqrt(s2);
    out->error = sqrt(e2);
    out->loss = s2 * e2;
    out->exact = 1;
    return isfinite(out->loss) ? DPC_OK : DPC_E_NUMERIC;
}

dpc_status dpc_strategy_optimize_banded(dpc_strategy **out, const dpc_strategy_problem *pb,
                                        const dpc_strategy_options *opt, dpc_error *err)
{
    *out = NULL;
    dpc_status st = dpc_strategy_problem_check(pb, err);
    if (st) return st;
    if (!opt || opt->bands == 0)
        return dpc_error_param(err, DPC_E_INVALID, "bands", "banded optimization needs bands >= 1");
    if ((st = dpc__strat_check_options(opt, err))) return st;
    band_ctx b;
    memset(&b, 0, sizeof b);
    b.pb = pb;
    b.n = pb->steps;
    b.L = opt->bands < b.n ? opt->bands : b.n;
    b.keff = dpc__strat_keff(pb);
    b.monotone = b.keff > 1;
    size_t n = b.n, L = b.L;
    /* one objective evaluation (about 4 n L + 2 k L) must stay well inside the work limit, so
     * that progress is reported and a cancellation honoured every second or so */
    if ((st = dpc__work_check(4.0 * (4.0 * (double)n * (double)L + 2.0 * (double)b.keff * (double)L),
                              "bands", "one evaluation of the banded objective (steps x bands, "
                              "times 4)", err)))
        return st;
    double *mem = dpc__malloc_array(2 * L + 4 * n + L, sizeof(double));
    if (!mem) return DPC__NOMEM(err, "banded optimizer workspace");
    b.c = mem;
    b.cbar = mem + L;
    b.beta = mem + 2 * L;
    b.y = b.beta + n;
    b.lam = b.y + n;
    b.v = b.lam + n;
    double *x = b.v + n; /* (L - 1), at least one slot */

    /* start: BSR for this workload (first L coefficients of W^(1/2)) */
    double r = 1.0;
    b.c[0] = 1.0;
    if (!dpc__series_workload_root(b.c, L, pb->workload.decay, pb->workload.momentum, -1)) {
        free(mem);
        return DPC__NOMEM(err, "banded optimizer start");
    }
    for (size_t j = 1; j < L; j++) {
        if (b.monotone) {
            r = b.c[j] / b.c[j - 1];
            if (!(r > 1e-12)) r = 1e-12;
            if (r > 1.0 - 1e-12) r = 1.0 - 1e-12;
            x[j - 1] = log(r / (1.0 - r));
        } else {
            x[j - 1] = b.c[j];
        }
    }
    strat_lbfgs_result res = {0, 0, 0, &opt->progress, 0.0, 0.0};
    if (L > 1) {
        size_t max_iter = opt->max_iterations ? opt->max_iterations : 1000;
        res.total = (double)max_iter;
        st = dpc__strat_minimize(band_objective, &b, x, L - 1, max_iter, 1e-13, &res, err);
        if (st) {
            free(mem);
            return st;
        }
    }
    coeffs_from_x(&b, x);
    dpc_strategy *s = dpc__strategy_alloc(DPC_MECH_TOEPLITZ, "banded", pb);
    if (!s || !(s->coeffs = dpc__malloc_array(L, sizeof(double)))) {
        dpc_strategy_free(s);
        free(mem);
        return DPC__NOMEM(err, "strategy");
    }
    memcpy(s->coeffs, b.c, L * sizeof(double));
    s->ncoeffs = L;
    s->of_strategy = 1;
    s->iterations = res.iterations;
    if (band_eval(&b, &s->achieved) != DPC_OK) {
        dpc_strategy_free(s);
        free(mem);
        return dpc_error_set(err, DPC_E_NUMERIC, "banded: the loss of the result is not finite");
    }
    free(mem);
    *out = s;
    return DPC_OK;
}

double dpc__banded_log_loss_grad(const dpc_strategy_problem *pb, const double *c, size_t L,
                                 double *grad)
{
    band_ctx b;
    memset(&b, 0, sizeof b);
    b.pb = pb;
    b.n = pb->steps;
    b.L = L < b.n ? L : b.n;
    b.keff = dpc__strat_keff(pb);
    double *mem = dpc__malloc_array(2 * b.L + 4 * b.n, sizeof(double));
    if (!mem) return NAN;
    b.c = mem;
    b.cbar = mem + b.L;
    b.beta = mem + 2 * b.L;
    b.y = b.beta + b.n;
    b.lam = b.y + b.n;
    b.v = b.lam + b.n;
    memcpy(b.c, c, b.L * sizeof *c);
    double E = err_grad(&b, b.cbar), f = NAN;
    double *sg = b.y;
    double s2 = sens2_grad(&b, sg);
    if (isfinite(E) && E > 0.0 && s2 > 0.0) {
        f = log(E) + log(s2);
        for (size_t j = 0; j < b.L; j++) grad[j] = b.cbar[j] / E + sg[j] / s2;
        grad[0] = 0.0; /* c_0 = 1 is fixed */
    }
    free(mem);
    return f;
}
