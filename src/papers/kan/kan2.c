/* kan2.c — the paper's two-layer KAN ([KAN] Sec. 3, App. B; note 004 §1): construction,
 * initialization, forward pass, the rank-one per-example gradient with its exact norm, the
 * Hessian blocks, the clipped batch sum (fast sparse path and the naive materializing
 * reference) and evaluation.
 *
 *   pre_j = (1/sqrt d) sum_q W[j][q] h_q(x),  u_j = sigma(pre_j),
 *   f     = (1/sqrt m) sum_j sum_k c_jk b_k(u_j),
 *   alpha_j = sigma'(pre_j) <c_j, h'(u_j)> / sqrt(m d),   grad_W f = alpha h(x)^T. */
#include "common/util.h"
#include "dpcorr/field.h"
#include "kan/kan_internal.h"

#include <math.h>
#include <string.h>

/* ==== Object ============================================================================= */

static dpc_status check_config(const dpc_kan2_config *c, dpc_error *err)
{
    if (!c) return dpc_error_set(err, DPC_E_INVALID, "kan2 config: NULL");
    if (c->d == 0 || c->m == 0) /* 0 is "unset" in the table: here it must be set */
        return dpc_error_param(err, DPC_E_INVALID, c->d == 0 ? "d" : "m", "must be >= 1, got 0");
    dpc_status st = dpc_field_check(dpc_kan2_config_fields(), c, err); /* d, m, grid, act */
    if (st) return st;
    size_t dp, P;
    if (!dpc__mul_ok(c->d, c->grid + 3, &dp) || !dpc__mul_ok(dp, c->m, &P) ||
        P > ((size_t)1 << 40))
        return dpc_error_set(err, DPC_E_RANGE, "kan2 config: m*d*p overflows");
    return DPC_OK;
}

static dpc_status make(dpc_kan2 **out, const dpc_kan2_config *cfg, dpc_error *err)
{
    if (!out) return dpc_error_set(err, DPC_E_INVALID, "kan2: out is NULL");
    *out = NULL;
    dpc_status st = check_config(cfg, err);
    if (st) return st;
    dpc_kan2 *k = calloc(1, sizeof *k);
    if (!k) return DPC__NOMEM(err, "the KAN");
    k->cfg = *cfg;
    st = dpc_bspline_init(&k->basis, cfg->grid, -1.0, 1.0, err);
    if (st) {
        free(k);
        return st;
    }
    k->p = k->basis.p;
    k->dp = cfg->d * k->p;
    k->P = cfg->m * k->dp;
    k->inv_sqrt_d = 1.0 / sqrt((double)cfg->d);
    k->inv_sqrt_m = 1.0 / sqrt((double)cfg->m);
    k->inv_sqrt_md = 1.0 / sqrt((double)cfg->m * (double)cfg->d);
    k->c = dpc__malloc_array(cfg->m * k->p, sizeof *k->c);
    if (!k->c) {
        free(k);
        return DPC__NOMEM(err, "the KAN's second layer");
    }
    *out = k;
    return DPC_OK;
}

dpc_status dpc_kan2_new(dpc_kan2 **out, const dpc_kan2_config *cfg, const dpc_rng *rng,
                        uint64_t stream_index, dpc_error *err)
{
    if (!rng) return dpc_error_set(err, DPC_E_INVALID, "kan2: rng is NULL");
    if (stream_index > UINT32_MAX)
        return dpc_error_set(err, DPC_E_RANGE, "kan2: stream_index exceeds 2^32 - 1");
    dpc_status st = make(out, cfg, err);
    if (st) return st;
    dpc_kan2 *k = *out;
    dpc_rng_stream s = dpc_rng_stream_derive(rng, DPC_STREAM_ID(DPC_STREAM_INIT, stream_index));
    dpc_rng_gaussian_fill(&s, 1, 0, k->c, cfg->m * k->p);
    return DPC_OK;
}

dpc_status dpc_kan2_new_with_c(dpc_kan2 **out, const dpc_kan2_config *cfg, const double *c,
                               dpc_error *err)
{
    if (!c) return dpc_error_set(err, DPC_E_INVALID, "kan2: c is NULL");
    dpc_status st = make(out, cfg, err);
    if (st) return st;
    dpc_kan2 *k = *out;
    for (size_t i = 0; i < cfg->m * k->p; i++) {
        if (!isfinite(c[i])) {
            dpc_kan2_free(k);
            *out = NULL;
            return dpc_error_set(err, DPC_E_INVALID, "c[%zu] is not finite (%g)", i, c[i]);
        }
        k->c[i] = c[i];
    }
    return DPC_OK;
}

void dpc_kan2_free(dpc_kan2 *k)
{
    if (!k) return;
    free(k->c);
    free(k);
}

const dpc_kan2_config *dpc_kan2_get_config(const dpc_kan2 *k) { return k ? &k->cfg : NULL; }
const dpc_bspline *dpc_kan2_basis(const dpc_kan2 *k) { return k ? &k->basis : NULL; }
size_t dpc_kan2_num_params(const dpc_kan2 *k) { return k ? k->P : 0; }
const double *dpc_kan2_c(const dpc_kan2 *k) { return k ? k->c : NULL; }

dpc_status dpc_kan2_init(const dpc_kan2 *k, double *W, const dpc_rng *rng, uint64_t stream_index,
                         dpc_error *err)
{
    if (!k || !W || !rng) return dpc_error_param(err, DPC_E_INVALID, "kan2_init", "NULL argument");
    if (stream_index > UINT32_MAX)
        return dpc_error_param(err, DPC_E_RANGE, "kan2_init", "stream_index exceeds 2^32 - 1");
    dpc_rng_stream s = dpc_rng_stream_derive(rng, DPC_STREAM_ID(DPC_STREAM_INIT, stream_index));
    dpc_rng_gaussian_fill(&s, 0, 0, W, k->P);
    return DPC_OK;
}

/* ==== Shared per-example pieces ========================================================== */

double dpc__kan_norm(const double *v, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++) s += v[i] * v[i];
    return sqrt(s);
}

dpc_status dpc__kan2_check_W(const dpc_kan2 *k, const double *W, dpc_error *err)
{
    for (size_t q = 0; q < k->P; q++)
        if (!isfinite(W[q]))
            return dpc_error_set(err, DPC_E_INVALID,
                                 "W[%zu] (unit %zu, input %zu, basis %zu) is not finite (%g)", q,
                                 q / k->dp, (q % k->dp) / k->p, q % k->p, W[q]);
    return DPC_OK;
}

dpc_status dpc__kan2_check_x(const dpc_kan2 *k, const double *x, size_t row, dpc_error *err)
{
    for (size_t i = 0; i < k->cfg.d; i++)
        if (!isfinite(x[i]))
            return dpc_error_set(err, DPC_E_INVALID,
                                 "example %zu: feature x[%zu] is not finite (%g)", row, i, x[i]);
    return DPC_OK;
}

dpc_status dpc__kan2_check_y(double y, size_t row, dpc_error *err)
{
    if (y == 1.0 || y == -1.0) return DPC_OK;
    return dpc_error_set(err, DPC_E_INVALID, "example %zu: label y = %.17g is not -1 or +1", row,
                         y);
}

size_t dpc__kan2_sparse_h(const dpc_kan2 *k, const double *x, size_t *q, double *v)
{
    size_t nnz = 0;
    for (size_t i = 0; i < k->cfg.d; i++) {
        size_t k0;
        double b[4];
        size_t n = dpc_bspline_eval(&k->basis, x[i], &k0, b, NULL, NULL);
        for (size_t j = 0; j < n; j++) {
            q[nnz] = i * k->p + k0 + j;
            v[nnz] = b[j];
            nnz++;
        }
    }
    return nnz;
}

double dpc__kan2_head(const dpc_kan2 *k, const double *pre, double *alpha)
{
    double facc = 0.0;
    for (size_t j = 0; j < k->cfg.m; j++) {
        double u, s1;
        dpc_kan_act_eval(k->cfg.act, pre[j], &u, &s1, NULL);
        const double *cj = k->c + j * k->p;
        double b[4], b1[4];
        size_t k0, n = dpc_bspline_eval(&k->basis, u, &k0, b, b1, NULL);
        double acc = 0.0, acc1 = 0.0;
        for (size_t q = 0; q < n; q++) {
            acc += cj[k0 + q] * b[q];
            acc1 += cj[k0 + q] * b1[q];
        }
        facc += acc;
        if (alpha) alpha[j] = s1 * acc1 * k->inv_sqrt_md;
    }
    return facc * k->inv_sqrt_m;
}

/* Sparse forward of one example: pre (m) from the sparse features (q, v, nnz). */
static void pre_sparse(const dpc_kan2 *k, const double *W, const size_t *q, const double *v,
                       size_t nnz, double *pre)
{
    for (size_t j = 0; j < k->cfg.m; j++) {
        const double *wj = W + j * k->dp;
        double acc = 0.0;
        for (size_t t = 0; t < nnz; t++) acc += wj[q[t]] * v[t];
        pre[j] = acc * k->inv_sqrt_d;
    }
}

/* One validated example's sparse features and preactivations: *q (4d) and *v (4d + m) are
 * allocated here (the caller frees both, also on error), v[0..nnz) are the features and
 * pre = v + 4d holds the m preactivations. */
static dpc_status sparse_pre_one(const dpc_kan2 *k, const double *W, const double *x,
                                 size_t **q, double **v, size_t *nnz, dpc_error *err)
{
    *q = NULL;
    *v = NULL;
    dpc_status st = dpc__kan2_check_W(k, W, err);
    if (!st) st = dpc__kan2_check_x(k, x, 0, err);
    if (st) return st;
    size_t d = k->cfg.d, m = k->cfg.m;
    *q = dpc__malloc_array(4 * d, sizeof **q);
    *v = dpc__malloc_array(4 * d + m, sizeof **v);
    if (!*q || !*v) return DPC__NOMEM(err, "kan2 scratch");
    *nnz = dpc__kan2_sparse_h(k, x, *q, *v);
    pre_sparse(k, W, *q, *v, *nnz, *v + 4 * d);
    return DPC_OK;
}

/* ==== Public per-example functions ======================================================= */

dpc_status dpc_kan2_features(const dpc_kan2 *k, const double *x, double *h, dpc_error *err)
{
    if (!k || !x || !h) return dpc_error_param(err, DPC_E_INVALID, "kan2_features", "NULL argument");
    dpc_status st = dpc__kan2_check_x(k, x, 0, err);
    if (st) return st;
    for (size_t i = 0; i < k->cfg.d; i++)
        dpc_bspline_eval_all(&k->basis, x[i], h + i * k->p, NULL, NULL);
    return DPC_OK;
}

dpc_status dpc_kan2_forward(const dpc_kan2 *k, const double *W, const double *x, double *f,
                            double *alpha, double *hnorm, dpc_error *err)
{
    if (!k || !W || !x || !f) return dpc_error_param(err, DPC_E_INVALID, "kan2_forward", "NULL argument");
    size_t *q, nnz = 0;
    double *v;
    dpc_status st = sparse_pre_one(k, W, x, &q, &v, &nnz, err);
    if (st) {
        free(q);
        free(v);
        return st;
    }
    *f = dpc__kan2_head(k, v + 4 * k->cfg.d, alpha);
    if (hnorm) *hnorm = dpc__kan_norm(v, nnz);
    free(q);
    free(v);
    if (!isfinite(*f)) return dpc_error_set(err, DPC_E_NUMERIC, "f is not finite (%g)", *f);
    return DPC_OK;
}

dpc_status dpc_kan2_loss_grad(const dpc_kan2 *k, const double *W, const double *x, double y,
                              double *loss, double *grad, dpc_error *err)
{
    if (!k || !W || !x || !loss || !grad)
        return dpc_error_param(err, DPC_E_INVALID, "kan2_loss_grad", "NULL argument");
    dpc_status st = dpc__kan2_check_W(k, W, err);
    if (!st) st = dpc__kan2_check_x(k, x, 0, err);
    if (!st) st = dpc__kan2_check_y(y, 0, err);
    if (st) return st;
    size_t m = k->cfg.m, dp = k->dp;
    double *h = dpc__malloc_array(dp + 2 * m, sizeof *h);
    if (!h) return DPC__NOMEM(err, "kan2 scratch");
    double *pre = h + dp, *alpha = pre + m;
    /* dense features and dense dot products (exact zeros included) */
    for (size_t i = 0; i < k->cfg.d; i++)
        dpc_bspline_eval_all(&k->basis, x[i], h + i * k->p, NULL, NULL);
    for (size_t j = 0; j < m; j++) {
        double acc = 0.0;
        for (size_t q = 0; q < dp; q++) acc += W[j * dp + q] * h[q];
        pre[j] = acc * k->inv_sqrt_d;
    }
    double f = dpc__kan2_head(k, pre, alpha), l1;
    *loss = dpc_kan_logistic(y * f, &l1, NULL);
    double g = l1 * y;
    for (size_t j = 0; j < m; j++) {
        double a = g * alpha[j];
        for (size_t q = 0; q < dp; q++) grad[j * dp + q] = a * h[q];
    }
    free(h);
    if (!isfinite(*loss) || !isfinite(f))
        return dpc_error_set(err, DPC_E_NUMERIC, "loss is not finite (f = %g)", f);
    return DPC_OK;
}

dpc_status dpc_kan2_hessian_beta(const dpc_kan2 *k, const double *W, const double *x,
                                 double *beta, dpc_error *err)
{
    if (!k || !W || !x || !beta)
        return dpc_error_param(err, DPC_E_INVALID, "kan2_hessian_beta", "NULL argument");
    size_t *q, nnz = 0, d = k->cfg.d, m = k->cfg.m;
    double *v;
    dpc_status st = sparse_pre_one(k, W, x, &q, &v, &nnz, err);
    if (st) {
        free(q);
        free(v);
        return st;
    }
    const double *pre = v + 4 * d;
    double scale = k->inv_sqrt_m / (double)d;
    for (size_t j = 0; j < m; j++) {
        double u, s1, s2, b[4], b1[4], b2[4];
        dpc_kan_act_eval(k->cfg.act, pre[j], &u, &s1, &s2);
        size_t k0, n = dpc_bspline_eval(&k->basis, u, &k0, b, b1, b2);
        double acc = 0.0;
        for (size_t t = 0; t < n; t++)
            acc += k->c[j * k->p + k0 + t] * (s2 * b1[t] + s1 * s1 * b2[t]);
        beta[j] = acc * scale;
    }
    free(q);
    free(v);
    return DPC_OK;
}

/* ==== Clipped batch sums ================================================================= */

static dpc_status check_batch(const dpc_kan2 *k, const double *W, const double *X,
                              const double *y, size_t n, const size_t *idx, size_t B,
                              double clip, const double *gsum, dpc_error *err)
{
    if (!k || (B > 0 && (!W || !X || !y || !gsum)))
        return dpc_error_set(err, DPC_E_INVALID, "kan2 clipped sum: NULL argument");
    if (!(clip >= 0.0)) return dpc_error_set(err, DPC_E_INVALID, "clip must be >= 0, got %g", clip);
    if (B > n) return dpc_error_set(err, DPC_E_INVALID, "batch %zu exceeds n = %zu", B, n);
    if (B == 0) return DPC_OK;
    dpc_status st = dpc__kan2_check_W(k, W, err);
    for (size_t b = 0; !st && b < B; b++) {
        size_t i = idx ? idx[b] : b;
        if (i >= n) return dpc_error_set(err, DPC_E_INVALID, "idx[%zu] = %zu is not below n = %zu", b, i, n);
        st = dpc__kan2_check_x(k, X + i * k->cfg.d, i, err);
        if (!st) st = dpc__kan2_check_y(y[i], i, err);
    }
    return st;
}

dpc_status dpc_kan2_clipped_sum(const dpc_kan2 *k, const double *W, const double *X,
                                const double *y, size_t n, const size_t *idx, size_t B,
                                double clip, double *gsum, double *losses, double *norms,
                                size_t *n_clipped, dpc_error *err)
{
    dpc_status st = check_batch(k, W, X, y, n, idx, B, clip, gsum, err);
    if (st || B == 0) {
        if (!st && n_clipped) *n_clipped = 0;
        return st;
    }
    size_t d = k->cfg.d, m = k->cfg.m, dp = k->dp;
    size_t *q = dpc__malloc_array(4 * d, sizeof *q);
    double *v = dpc__malloc_array(4 * d + 2 * m + 2 * B, sizeof *v);
    double *S = dpc__calloc(k->P, sizeof *S);
    if (!q || !v || !S) {
        st = DPC__NOMEM(err, "kan2 clipped-sum buffers");
        goto done;
    }
    double *pre = v + 4 * d, *alpha = pre + m, *bl = alpha + m, *bn = bl + B;
    size_t nclip = 0;
    for (size_t b = 0; b < B; b++) {
        size_t i = idx ? idx[b] : b;
        size_t nnz = dpc__kan2_sparse_h(k, X + i * d, q, v);
        pre_sparse(k, W, q, v, nnz, pre);
        double f = dpc__kan2_head(k, pre, alpha), l1;
        double loss = dpc_kan_logistic(y[i] * f, &l1, NULL);
        /* ghost norm: ||a h^T||_F = |l'| ||alpha|| ||h|| */
        double norm = fabs(l1) * dpc__kan_norm(alpha, m) * dpc__kan_norm(v, nnz);
        if (!isfinite(loss) || !isfinite(norm)) {
            st = dpc_error_set(err, DPC_E_NUMERIC,
                               "example %zu: loss or gradient norm is not finite (%g, %g)", i,
                               loss, norm);
            goto done;
        }
        double s;
        dpc_model_clip_factors(&norm, 1, clip, &s);
        if (norm > clip) nclip++;
        bl[b] = loss;
        bn[b] = norm;
        double g = l1 * y[i];
        for (size_t j = 0; j < m; j++) {
            double a = g * alpha[j];
            double *Sj = S + j * dp;
            for (size_t t = 0; t < nnz; t++) Sj[q[t]] += s * (a * v[t]);
        }
    }
    for (size_t p = 0; p < k->P; p++) gsum[p] = gsum[p] + S[p];
    if (losses) memcpy(losses, bl, B * sizeof *losses);
    if (norms) memcpy(norms, bn, B * sizeof *norms);
    if (n_clipped) *n_clipped = nclip;
done:
    free(q);
    free(v);
    free(S);
    return st;
}

dpc_status dpc_kan2_clipped_sum_naive(const dpc_kan2 *k, const double *W, const double *X,
                                      const double *y, size_t n, const size_t *idx, size_t B,
                                      double clip, double *gsum, double *losses, double *norms,
                                      size_t *n_clipped, dpc_error *err)
{
    dpc_status st = check_batch(k, W, X, y, n, idx, B, clip, gsum, err);
    if (st || B == 0) {
        if (!st && n_clipped) *n_clipped = 0;
        return st;
    }
    double *g = dpc__malloc_array(k->P, sizeof *g);
    double *S = dpc__calloc(k->P, sizeof *S);
    double *buf = dpc__malloc_array(2 * B, sizeof *buf);
    size_t nclip = 0;
    if (!g || !S || !buf) {
        st = DPC__NOMEM(err, "kan2 naive buffers");
        goto done;
    }
    for (size_t b = 0; b < B; b++) {
        size_t i = idx ? idx[b] : b;
        st = dpc_kan2_loss_grad(k, W, X + i * k->cfg.d, y[i], &buf[b], g, err);
        if (st) {
            dpc_error_prefix(err, "example %zu: ", i);
            goto done;
        }
        double n2 = 0.0;
        for (size_t p = 0; p < k->P; p++) n2 += g[p] * g[p];
        double norm = sqrt(n2), s;
        dpc_model_clip_factors(&norm, 1, clip, &s);
        if (norm > clip) nclip++;
        buf[B + b] = norm;
        for (size_t p = 0; p < k->P; p++) S[p] += s * g[p];
    }
    for (size_t p = 0; p < k->P; p++) gsum[p] = gsum[p] + S[p];
    if (losses) memcpy(losses, buf, B * sizeof *losses);
    if (norms) memcpy(norms, buf + B, B * sizeof *norms);
    if (n_clipped) *n_clipped = nclip;
done:
    free(g);
    free(S);
    free(buf);
    return st;
}

dpc_status dpc_kan2_evaluate(const dpc_kan2 *k, const double *W, const double *X, const double *y,
                             size_t n, double *mean_loss, double *err01, dpc_error *err)
{
    if (!k || !W || !X || !y || !mean_loss)
        return dpc_error_param(err, DPC_E_INVALID, "kan2_evaluate", "NULL argument");
    if (n == 0) return dpc_error_param(err, DPC_E_INVALID, "kan2_evaluate", "n must be >= 1");
    dpc_status st = dpc__kan2_check_W(k, W, err);
    for (size_t i = 0; !st && i < n; i++) {
        st = dpc__kan2_check_x(k, X + i * k->cfg.d, i, err);
        if (!st) st = dpc__kan2_check_y(y[i], i, err);
    }
    if (st) return st;
    size_t d = k->cfg.d, m = k->cfg.m;
    size_t *q = dpc__malloc_array(4 * d, sizeof *q);
    double *v = dpc__malloc_array(4 * d + m, sizeof *v);
    if (!q || !v) {
        free(q);
        free(v);
        return DPC__NOMEM(err, "kan2 scratch");
    }
    double *pre = v + 4 * d, total = 0.0;
    size_t wrong = 0;
    for (size_t i = 0; i < n && !st; i++) {
        size_t nnz = dpc__kan2_sparse_h(k, X + i * d, q, v);
        pre_sparse(k, W, q, v, nnz, pre);
        double f = dpc__kan2_head(k, pre, NULL);
        double loss = dpc_kan_logistic(y[i] * f, NULL, NULL);
        if (!isfinite(loss))
            st = dpc_error_set(err, DPC_E_NUMERIC, "example %zu: loss is not finite", i);
        total += loss;
        if (!(y[i] * f > 0)) wrong++;
    }
    free(q);
    free(v);
    if (st) return st;
    *mean_loss = total / (double)n;
    if (err01) *err01 = (double)wrong / (double)n;
    return DPC_OK;
}
