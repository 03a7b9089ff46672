/* srgd_problem.c — the DP-SRGD note's synthetic problems (§6): P1 logistic and P2 least squares
 * with a known population risk (sparse or spherical random design, geometric spectrum), and the
 * P3 "identical examples" quadratics (ill-conditioned diagonal, Nesterov's worst case), with
 * x* = argmin over the ball B(0, R). */
#include "common/util.h"
#include "srgd/srgd_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define kind_names dpc__srgd_problem_kind_names

const char *dpc_srgd_problem_kind_name(dpc_srgd_problem_kind k)
{
    return (unsigned)k < 4 ? kind_names[k] : "unknown";
}

dpc_status dpc_srgd_problem_kind_parse(const char *s, dpc_srgd_problem_kind *out, dpc_error *err)
{
    static const char *const alias[] = {"logistic", "lsq", "quadratic", "nesterov"};
    for (int i = 0; i < 4; i++)
        if (s && (!strcmp(s, kind_names[i]) || !strcmp(s, alias[i]))) {
            *out = (dpc_srgd_problem_kind)i;
            return DPC_OK;
        }
    return dpc_error_set(err, DPC_E_INVALID,
                         "problem: unknown '%s' (p1|logistic, p2|lsq, p3|quadratic, nesterov)",
                         s ? s : "(null)");
}

void dpc_srgd_problem_config_init(dpc_srgd_problem_config *c)
{
    dpc_field_defaults(dpc_srgd_problem_config_fields(), c);
}

void dpc_srgd_problem_free(dpc_srgd_problem *pr)
{
    if (!pr) return;
    dpc_dataset_free(pr->data);
    free(pr->lambda);
    free(pr->evalA);
    free(pr);
}

static double softplus(double t) { return fmax(t, 0.0) + log1p(exp(-fabs(t))); }
static double sigmoid(double t)
{
    if (t >= 0) return 1.0 / (1.0 + exp(-t));
    double e = exp(t);
    return e / (1.0 + e);
}

static double vnorm(const double *v, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += v[i] * v[i];
    return sqrt(s);
}

/* ---- x* over the ball ----------------------------------------------------------------------- */

/* P2: x_k(nu) = lambda_k w0_k / (lambda_k + nu), |x(nu)| decreasing in nu; find |x| = R. */
static void xstar_lsq(dpc_srgd_problem *pr)
{
    size_t p = pr->p;
    double R = pr->cfg.R;
    if (vnorm(pr->w0, p) <= R) {
        memcpy(pr->xstar, pr->w0, p * sizeof(double));
        return;
    }
    double lo = 0, hi = 1;
    for (;;) { /* bracket */
        double s = 0;
        for (size_t k = 0; k < p; k++) {
            double v = pr->lambda[k] * pr->w0[k] / (pr->lambda[k] + hi);
            s += v * v;
        }
        if (sqrt(s) <= R || hi > 1e300) break;
        lo = hi;
        hi *= 2;
    }
    for (int it = 0; it < 200; it++) {
        double mid = 0.5 * (lo + hi), s = 0;
        for (size_t k = 0; k < p; k++) {
            double v = pr->lambda[k] * pr->w0[k] / (pr->lambda[k] + mid);
            s += v * v;
        }
        if (sqrt(s) > R) lo = mid;
        else hi = mid;
    }
    for (size_t k = 0; k < p; k++)
        pr->xstar[k] = pr->lambda[k] > 0 ? pr->lambda[k] * pr->w0[k] / (pr->lambda[k] + hi) : 0;
}

/* P1 sparse: KKT lambda_k (sigmoid(x_k) - sigmoid(w0_k)) + nu x_k = 0, x_k between 0 and w0_k. */
static double p1_coord(double lam, double w, double nu)
{
    if (lam == 0 || w == 0) return 0;
    double lo = fmin(0, w), hi = fmax(0, w), sw = sigmoid(w);
    for (int it = 0; it < 100; it++) {
        double mid = 0.5 * (lo + hi);
        if (lam * (sigmoid(mid) - sw) + nu * mid > 0) hi = mid;
        else lo = mid;
    }
    return 0.5 * (lo + hi);
}

static void xstar_p1(dpc_srgd_problem *pr)
{
    size_t p = pr->p;
    double R = pr->cfg.R;
    if (vnorm(pr->w0, p) <= R) {
        memcpy(pr->xstar, pr->w0, p * sizeof(double));
        return;
    }
    double lo = 0, hi = 1;
    for (;;) {
        for (size_t k = 0; k < p; k++) pr->xstar[k] = p1_coord(pr->lambda[k], pr->w0[k], hi);
        if (vnorm(pr->xstar, p) <= R || hi > 1e300) break;
        lo = hi;
        hi *= 2;
    }
    for (int it = 0; it < 100; it++) {
        double mid = 0.5 * (lo + hi);
        for (size_t k = 0; k < p; k++) pr->xstar[k] = p1_coord(pr->lambda[k], pr->w0[k], mid);
        if (vnorm(pr->xstar, p) > R) lo = mid;
        else hi = mid;
    }
    for (size_t k = 0; k < p; k++) pr->xstar[k] = p1_coord(pr->lambda[k], pr->w0[k], hi);
}

/* ---- risk ------------------------------------------------------------------------------------ */

static double p1_sphere_risk(const dpc_srgd_problem *pr, const double *x, double *grad,
                             int excess)
{
    size_t p0 = pr->p0, N = pr->cfg.eval_n;
    double F = 0;
    if (grad) memset(grad, 0, pr->p * sizeof(double));
    for (size_t j = 0; j < N; j++) {
        const double *a = pr->evalA + j * p0;
        double u = 0, u0 = 0;
        for (size_t k = 0; k < p0; k++) {
            u += a[k] * x[k];
            u0 += a[k] * pr->w0[k];
        }
        double s0 = sigmoid(u0);
        /* E_y loss = softplus(u) - s0 u; minus its value at w0 is a KL divergence (>= 0) */
        F += excess ? softplus(u) - softplus(u0) - s0 * (u - u0) : softplus(u) - s0 * u;
        if (grad) {
            double g = sigmoid(u) - s0;
            for (size_t k = 0; k < p0; k++) grad[k] += g * a[k];
        }
    }
    if (grad)
        for (size_t k = 0; k < p0; k++) grad[k] /= (double)N;
    return F / (double)N;
}

static double nesterov_F(const dpc_srgd_problem *pr, const double *x, double *grad)
{
    size_t p = pr->p;
    double s = (x[0] - 1.0) * (x[0] - 1.0) + x[p - 1] * x[p - 1];
    for (size_t i = 0; i + 1 < p; i++) s += (x[i] - x[i + 1]) * (x[i] - x[i + 1]);
    if (grad) /* (1/4)(A x - e_1), A = tridiag(-1, 2, -1) */
        for (size_t i = 0; i < p; i++) {
            double v = 2 * x[i] - (i > 0 ? x[i - 1] : 0) - (i + 1 < p ? x[i + 1] : 0);
            grad[i] = 0.25 * (v - (i == 0 ? 1.0 : 0.0));
        }
    return s / 8.0;
}

static double risk_of(const dpc_srgd_problem *pr, const double *x, double *grad)
{
    size_t p = pr->p;
    const double *lam = pr->lambda, *w0 = pr->w0;
    double F = 0;
    switch (pr->cfg.kind) {
    case DPC_SRGD_P1_LOGISTIC:
        if (pr->cfg.design == DPC_SRGD_DESIGN_SPHERE) return p1_sphere_risk(pr, x, grad, 0);
        for (size_t k = 0; k < p; k++) {
            double sw = sigmoid(w0[k]);
            F += lam[k] * (softplus(x[k]) - sw * x[k]);
            if (grad) grad[k] = lam[k] * (sigmoid(x[k]) - sw);
        }
        return F;
    case DPC_SRGD_P2_LSQ:
    case DPC_SRGD_P3_QUADRATIC:
        for (size_t k = 0; k < p; k++) {
            double d = x[k] - w0[k];
            F += 0.5 * lam[k] * d * d;
            if (grad) grad[k] = lam[k] * d;
        }
        if (pr->cfg.kind == DPC_SRGD_P2_LSQ) F += pr->cfg.noise * pr->cfg.noise / 6.0;
        return F;
    case DPC_SRGD_P3_NESTEROV:
        return nesterov_F(pr, x, grad);
    }
    return NAN;
}

dpc_status dpc_srgd_problem_risk(void *ctx, const double *x, size_t P, double *F, double *grad,
                                 dpc_error *err)
{
    const dpc_srgd_problem *pr = ctx;
    if (!pr || !x || !F) return dpc_error_param(err, DPC_E_INVALID, "risk", "NULL argument");
    if (P != pr->p)
        return dpc_error_param(err, DPC_E_INVALID, "P", "%zu parameters, the problem has p = %zu", P,
                             pr->p);
    *F = risk_of(pr, x, grad);
    return DPC_OK;
}

dpc_status dpc_srgd_problem_excess(const dpc_srgd_problem *pr, const double *x, double *excess,
                                   dpc_error *err)
{
    if (!pr || !x || !excess) return dpc_error_param(err, DPC_E_INVALID, "excess", "NULL argument");
    size_t p = pr->p;
    const double *lam = pr->lambda, *w0 = pr->w0, *xs = pr->xstar;
    double e = 0;
    switch (pr->cfg.kind) {
    case DPC_SRGD_P1_LOGISTIC:
        if (pr->cfg.design == DPC_SRGD_DESIGN_SPHERE) { /* x* = w0 (checked at creation) */
            e = p1_sphere_risk(pr, x, NULL, 1);
            break;
        }
        for (size_t k = 0; k < p; k++)
            e += lam[k] * (softplus(x[k]) - softplus(xs[k]) - sigmoid(w0[k]) * (x[k] - xs[k]));
        break;
    case DPC_SRGD_P2_LSQ:
    case DPC_SRGD_P3_QUADRATIC: /* 0.5 |x-w0|^2 - 0.5 |x*-w0|^2 = 0.5 (x-x*).(x+x*-2w0) */
        for (size_t k = 0; k < p; k++)
            e += 0.5 * lam[k] * (x[k] - xs[k]) * (x[k] + xs[k] - 2.0 * w0[k]);
        break;
    case DPC_SRGD_P3_NESTEROV:
        e = nesterov_F(pr, x, NULL) - pr->fstar;
        break;
    }
    *excess = e > 0 ? e : 0.0;
    return DPC_OK;
}

/* ---- construction -------------------------------------------------------------------------- */

static dpc_status check_cfg(const dpc_srgd_problem_config *c, dpc_error *err)
{
    /* every field within its range (the problem's L = R + w_norm + noise: each at most
     * DPC__SCALE_MAX so that L and its square stay finite, issue 28); then the cross-field
     * refusals */
    dpc_status st = dpc_field_check(dpc_srgd_problem_config_fields(), c, err);
    if (st) return st;
    if (c->kind == DPC_SRGD_P3_NESTEROV && c->p < 2)
        return dpc_error_param(err, DPC_E_INVALID, "p", "Nesterov's function needs p >= 2");
    if (c->relevant > c->p)
        return dpc_error_param(err, DPC_E_INVALID, "relevant", "%zu exceeds p = %zu", c->relevant,
                             c->p);
    if (c->kind == DPC_SRGD_P1_LOGISTIC && c->design == DPC_SRGD_DESIGN_SPHERE &&
        c->w_norm > c->R)
        return dpc_error_param(err, DPC_E_UNSUPPORTED, "w_norm",
                             "P1 with the sphere design needs |w0| <= R (x* = w0); "
                             "use the sparse design for x-dagger outside C");
    return DPC_OK;
}

/* lambda (geometric) and w0 of P1/P2/P3 QUADRATIC; Nesterov's x*. */
static void spectrum(dpc_srgd_problem *pr)
{
    const dpc_srgd_problem_config *c = &pr->cfg;
    size_t p0 = pr->p0;
    double r = p0 > 1 ? pow(10.0, -c->decades / (double)(p0 - 1)) : 1.0, sum = 0;
    for (size_t k = 0; k < p0; k++) sum += (pr->lambda[k] = pow(r, (double)k));
    for (size_t k = 0; k < p0; k++) {
        if (c->kind == DPC_SRGD_P3_QUADRATIC) break;            /* lambda_1 = 1 */
        if (c->design == DPC_SRGD_DESIGN_SPARSE) pr->lambda[k] /= sum; /* sum = 1 */
        else pr->lambda[k] /= (double)p0;                        /* lambda_1 = 1/p0 */
    }
    if (c->kind == DPC_SRGD_P3_NESTEROV) {
        for (size_t i = 0; i < pr->p; i++) pr->w0[i] = 1.0 - (double)(i + 1) / (double)(pr->p + 1);
        return;
    }
    for (size_t k = 0; k < p0; k++) pr->w0[k] = c->w_norm / sqrt((double)p0);
}

/* One P1/P2 example: features into a (p), label into *y. */
static void draw_example(const dpc_srgd_problem *pr, const dpc_rng_stream *st, uint64_t row,
                         const double *cum, double *a, double *y)
{
    const dpc_srgd_problem_config *c = &pr->cfg;
    size_t p0 = pr->p0;
    memset(a, 0, pr->p * sizeof(double));
    if (c->design == DPC_SRGD_DESIGN_SPARSE) { /* a = +-e_J, P(J = k) = lambda_k */
        double u = dpc_rng_uniform(st, row, 0);
        size_t lo = 0, hi = p0 - 1;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (cum[mid] > u) hi = mid;
            else lo = mid + 1;
        }
        a[lo] = dpc_rng_uniform(st, row, 1) < 0.5 ? -1.0 : 1.0;
    } else { /* a = diag(sqrt(p0 lambda)) g/|g| */
        double g2 = 0;
        for (size_t k = 0; k < p0; k++) {
            a[k] = dpc_rng_gaussian(st, row, 3 + k);
            g2 += a[k] * a[k];
        }
        double inv = g2 > 0 ? 1.0 / sqrt(g2) : 0.0;
        for (size_t k = 0; k < p0; k++) a[k] *= inv * sqrt((double)p0 * pr->lambda[k]);
    }
    double u0 = 0;
    for (size_t k = 0; k < p0; k++) u0 += a[k] * pr->w0[k];
    double v = dpc_rng_uniform(st, row, 2);
    if (c->kind == DPC_SRGD_P1_LOGISTIC) *y = v < sigmoid(u0) ? 1.0 : 0.0;
    else *y = u0 + c->noise * (2.0 * v - 1.0);
}

/* P3: the K base rows (a_j, y_j) of the "identical examples" design. */
static void p3_row(const dpc_srgd_problem *pr, size_t j, double *a, double *y)
{
    size_t p = pr->p;
    memset(a, 0, p * sizeof(double));
    if (pr->cfg.kind == DPC_SRGD_P3_QUADRATIC) { /* F = (1/K) sum 0.5 (a.x - y)^2, K = p */
        double s = sqrt((double)pr->K * pr->lambda[j]);
        a[j] = s;
        *y = s * pr->w0[j];
        return;
    }
    double s = sqrt((double)pr->K / 4.0); /* rows e_1 (target 1), e_i - e_{i+1}, e_p */
    if (j == 0) {
        a[0] = s;
        *y = s;
    } else if (j < p) {
        a[j - 1] = s;
        a[j] = -s;
        *y = 0;
    } else {
        a[p - 1] = s;
        *y = 0;
    }
}

dpc_status dpc_srgd_problem_new(dpc_srgd_problem **out, const dpc_srgd_problem_config *cfg,
                                const dpc_rng *rng, uint64_t stream_index, dpc_error *err)
{
    if (!out || !cfg || !rng) return dpc_error_set(err, DPC_E_INVALID, "problem: NULL argument");
    *out = NULL;
    if (stream_index > UINT32_MAX)
        return dpc_error_param(err, DPC_E_INVALID, "stream_index", "must be <= 2^32 - 1");
    dpc_status st = check_cfg(cfg, err);
    if (st) return st;
    dpc_srgd_problem *pr = calloc(1, sizeof *pr);
    if (!pr) return DPC__NOMEM(err, "the problem");
    pr->cfg = *cfg;
    size_t p = cfg->p;
    int p3 = cfg->kind >= DPC_SRGD_P3_QUADRATIC;
    pr->p = p;
    pr->p0 = p3 || !cfg->relevant ? p : cfg->relevant;
    pr->K = cfg->kind == DPC_SRGD_P3_QUADRATIC ? p : p + 1;
    double *cum = NULL, *truth = NULL;
    pr->lambda = dpc__calloc(3 * p + 1, sizeof(double));
    cum = dpc__calloc(p, sizeof(double));
    truth = dpc__calloc(p, sizeof(double));
    if (!pr->lambda || !cum || !truth) {
        st = DPC__NOMEM(err, "the spectrum");
        goto fail;
    }
    pr->w0 = pr->lambda + p;
    pr->xstar = pr->lambda + 2 * p;
    spectrum(pr);
    if ((st = dpc_dataset_new(&pr->data, cfg->n, p, cfg->kind == DPC_SRGD_P1_LOGISTIC ? 2 : 0,
                              err)))
        goto fail;
    dpc_rng_stream rs = dpc_rng_stream_derive(rng, DPC_STREAM_ID(DPC_STREAM_DATA, stream_index));
    double acc = 0;
    for (size_t k = 0; k < pr->p0; k++) cum[k] = (acc += pr->lambda[k]);
    cum[pr->p0 - 1] = 2.0; /* u < 1 always lands */
    double xb = 0;
    for (size_t i = 0; i < cfg->n; i++) {
        double *a = pr->data->x + i * p;
        if (p3) p3_row(pr, i % pr->K, a, &pr->data->y[i]);
        else draw_example(pr, &rs, i, cum, a, &pr->data->y[i]);
        xb = fmax(xb, vnorm(a, p));
    }
    pr->data->x_norm_bound = p3 ? xb : 1.0;
    if (p3) {
        memcpy(pr->xstar, pr->w0, p * sizeof(double));
        if (vnorm(pr->xstar, p) > cfg->R) {
            st = dpc_error_param(err, DPC_E_UNSUPPORTED, "R",
                               "the P3 problems need |x*| = %.4g <= R = %g (Regime A)",
                               vnorm(pr->xstar, p), cfg->R);
            goto fail;
        }
        pr->M = 1.0;
        pr->L = cfg->R + vnorm(pr->xstar, p); /* |grad F| <= M |x - x*| on C */
        pr->fstar = cfg->kind == DPC_SRGD_P3_NESTEROV ? 1.0 / (8.0 * (double)(p + 1)) : 0.0;
    } else if (cfg->kind == DPC_SRGD_P1_LOGISTIC) {
        pr->L = 1.0;  /* |(sigmoid(z) - y) a| <= |a| <= 1 */
        pr->M = 0.25; /* sigmoid' <= 1/4, |a|^2 <= 1 */
        if (cfg->design == DPC_SRGD_DESIGN_SPHERE) {
            pr->evalA = dpc__malloc_array(cfg->eval_n, pr->p0 * sizeof(double));
            double *a = dpc__calloc(p, sizeof(double));
            if (!pr->evalA || !a) {
                free(a);
                st = DPC__NOMEM(err, "the evaluation sample");
                goto fail;
            }
            double yy;
            for (size_t j = 0; j < cfg->eval_n; j++) { /* rows far beyond any training row */
                draw_example(pr, &rs, (UINT64_C(1) << 40) + j, cum, a, &yy);
                memcpy(pr->evalA + j * pr->p0, a, pr->p0 * sizeof(double));
            }
            free(a);
            memcpy(pr->xstar, pr->w0, p * sizeof(double));
        } else {
            xstar_p1(pr);
        }
    } else {
        pr->L = cfg->R + cfg->w_norm + cfg->noise; /* |a (a.x - y)| <= R + |y|, |y| <= |w0| + s */
        pr->M = 1.0;
        xstar_lsq(pr);
    }
    if (!p3) pr->fstar = risk_of(pr, pr->xstar, NULL);
    memcpy(truth, pr->w0, p * sizeof(double));
    pr->data->truth = truth;
    truth = NULL;
    /* the source records the problem in its table's names, resolved (relevant = p0) */
    dpc_srgd_problem_config rec = *cfg;
    rec.p = p;
    rec.relevant = pr->p0;
    char vals[sizeof pr->data->source];
    dpc_field_format_values(dpc_srgd_problem_config_fields(), &rec, "problem", ",", vals,
                            sizeof vals);
    snprintf(pr->data->source, sizeof pr->data->source, "srgd:%s,%.200s,R=%g",
             kind_names[cfg->kind], vals, cfg->R);
    free(cum);
    *out = pr;
    return DPC_OK;
fail:
    free(cum);
    free(truth);
    dpc_srgd_problem_free(pr);
    return st;
}

const dpc_srgd_problem_config *dpc_srgd_problem_get_config(const dpc_srgd_problem *pr)
{
    return &pr->cfg;
}
const dpc_dataset *dpc_srgd_problem_data(const dpc_srgd_problem *pr) { return pr->data; }
const char *dpc_srgd_problem_model_spec(const dpc_srgd_problem *pr)
{
    return pr->cfg.kind == DPC_SRGD_P1_LOGISTIC ? "logistic:nobias" : "linear:nobias";
}
void dpc_srgd_problem_constants(const dpc_srgd_problem *pr, double *L, double *M, double *R)
{
    if (L) *L = pr->L;
    if (M) *M = pr->M;
    if (R) *R = pr->cfg.R;
}
const double *dpc_srgd_problem_xstar(const dpc_srgd_problem *pr) { return pr->xstar; }
const double *dpc_srgd_problem_lambda(const dpc_srgd_problem *pr) { return pr->lambda; }
double dpc_srgd_problem_fstar(const dpc_srgd_problem *pr) { return pr->fstar; }
