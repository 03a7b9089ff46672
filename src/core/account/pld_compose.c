/* pld_compose.c — composition of discretized PLDs: linear FFT convolution of two PLDs, and the
 * count-fold self-composition as one FFT power inside a Chernoff window (with the binary-powering
 * reference kept for parity tests). */
#include "account/pld_internal.h"

#include "account/acc_math.h"
#include "common/util.h"

#include <stdlib.h>
#include <string.h>

/* ==== Composition ============================================================================ */

/* DP-REQ: pld-compose: Sommer, Meiser & Mohammadi 2019, Thm. 1 (Koskela et al. 2020, Sec. 3):
 * the PLD of a composition is the convolution of the PLDs; infinite masses combine as
 * 1 - (1 - a)(1 - b).
 * DP-REQ: pld-truncate: at most `tail` mass is cut from each end: pessimistic modes move the
 * low end up to the first kept point and the high end to +inf (rounding losses up keeps
 * domination); the optimistic mode drops the low end and moves the high end down. */
static dpc_status pmf_convolve(pmf *c, const pmf *a, const pmf *b, double tail, int optimistic,
                               dpc__conv_ws *ws)
{
    size_t n = a->n + b->n - 1;
    if (n > PLD_MAX_POINTS) return DPC_E_RANGE;
    double *v = dpc__malloc_array(n, sizeof *v);
    if (!v) return DPC_E_NOMEM;
    dpc_status st = dpc__convolve_ws(ws, a->p, a->n, b->p, b->n, v);
    if (st) {
        free(v);
        return st;
    }
    for (size_t i = 0; i < n; i++)
        if (!(v[i] > 0.0)) v[i] = 0.0; /* FFT round-off */
    size_t lo = 0, hi = n;
    double below = 0.0, above = 0.0;
    while (lo + 1 < hi && below + v[lo] <= tail) below += v[lo++];
    while (hi > lo + 1 && above + v[hi - 1] <= tail) above += v[--hi];
    if (optimistic) v[hi - 1] += above;
    else v[lo] += below;
    memmove(v, v + lo, (hi - lo) * sizeof *v);
    c->p = v;
    c->n = hi - lo;
    c->k0 = a->k0 + b->k0 + (long long)lo;
    c->inf = a->inf + b->inf - a->inf * b->inf + (optimistic ? 0.0 : above);
    return DPC_OK;
}

dpc_status dpc__pmf_copy(pmf *dst, const pmf *src)
{
    *dst = *src;
    dst->p = dpc__malloc_array(src->n, sizeof *dst->p);
    if (!dst->p) return DPC_E_NOMEM;
    memcpy(dst->p, src->p, src->n * sizeof *dst->p);
    return DPC_OK;
}

static dpc_status conv_status(dpc_status st, dpc_error *err)
{
    if (st == DPC_E_RANGE)
        return dpc_error_param(err, st, "interval",
                               "the composed loss grid exceeds %zu points; use a larger interval",
                               PLD_MAX_POINTS);
    if (st == DPC_E_NOMEM) return DPC__NOMEM(err, "a composed PLD");
    return st;
}

dpc_status dpc_pld_compose(dpc_pld **out, const dpc_pld *a, const dpc_pld *b, dpc_error *err)
{
    if (!out) return dpc_error_param(err, DPC_E_INVALID, "out", "NULL");
    *out = NULL;
    if (!a || !b) return dpc_error_param(err, DPC_E_INVALID, a ? "b" : "a", "NULL");
    if (a->h != b->h || a->disc != b->disc)
        return dpc_error_param(err, DPC_E_INVALID, "b",
                               "operands differ in interval (%g vs %g) or discretization", a->h,
                               b->h);
    dpc_pld *c = calloc(1, sizeof *c);
    if (!c) return DPC__NOMEM(err, "a PLD");
    c->h = a->h;
    c->tail = a->tail > b->tail ? a->tail : b->tail;
    c->disc = a->disc;
    c->ndir = a->ndir > b->ndir ? a->ndir : b->ndir;
    for (int d = 0; d < c->ndir; d++) {
        const pmf *pa = &a->dir[a->ndir == 2 ? d : 0], *pb = &b->dir[b->ndir == 2 ? d : 0];
        dpc__conv_ws ws = {0, NULL, NULL, 0, NULL, NULL};
        dpc_status st = pmf_convolve(&c->dir[d], pa, pb, c->tail, c->disc == DPC_PLD_ROUND_DOWN,
                                     &ws);
        dpc__conv_ws_free(&ws);
        if (st) {
            dpc_pld_free(c);
            return conv_status(st, err);
        }
    }
    *out = c;
    return DPC_OK;
}

/* m^count by binary powering: O(log count) linear convolutions, each followed by truncation.
 * The reference for pmf_power (parity tests); slow and memory-hungry for long runs, because the
 * FFT round-off floor stops the mass-based truncation from shrinking the support. */
static dpc_status pmf_power_naive(pmf *res, const pmf *m, size_t count, double tail,
                                  int optimistic)
{
    pmf base, acc = {0, 0, NULL, 0.0, 0.0}, tmp;
    dpc_status st = dpc__pmf_copy(&base, m);
    if (st) return st;
    dpc__conv_ws ws = {0, NULL, NULL, 0, NULL, NULL};
    int have = 0;
    while (count) {
        if (count & 1) {
            if (!have) {
                st = dpc__pmf_copy(&acc, &base);
                have = 1;
            } else {
                st = pmf_convolve(&tmp, &acc, &base, tail, optimistic, &ws);
                if (!st) {
                    dpc__pmf_free(&acc);
                    acc = tmp;
                }
            }
            if (st) break;
        }
        count >>= 1;
        if (count) {
            st = pmf_convolve(&tmp, &base, &base, tail, optimistic, &ws);
            if (st) break;
            dpc__pmf_free(&base);
            base = tmp;
        }
    }
    dpc__pmf_free(&base);
    dpc__conv_ws_free(&ws);
    if (st) {
        dpc__pmf_free(&acc);
        return st;
    }
    *res = acc;
    return DPC_OK;
}

/* ==== Self-composition by one FFT power inside a Chernoff window ========================== */

/* log sum_j p_j exp(lam l_j), l_j = (k0 + j) h, for lam != 0, by Horner's rule from the end
 * the exponential decays towards (no exp per point, no overflow); four interleaved chains with
 * ratio r^4 keep the multiply-add pipeline full. */
static double pmf_log_mgf(const pmf *m, double h, double lam)
{
    size_t n = m->n;
    const double *p = m->p;
    double r = exp(-fabs(lam) * h), r2 = r * r, r4 = r2 * r2;
    double c[4] = {0.0, 0.0, 0.0, 0.0};
    size_t n4 = n - n % 4;
    if (lam > 0.0) { /* sum_j p_j r^(n-1-j): chain k holds j = k mod 4 up to n4 */
        for (size_t j = 0; j < n4; j += 4) {
            c[0] = c[0] * r4 + p[j];
            c[1] = c[1] * r4 + p[j + 1];
            c[2] = c[2] * r4 + p[j + 2];
            c[3] = c[3] * r4 + p[j + 3];
        }
        double acc = ((c[0] * r + c[1]) * r + c[2]) * r + c[3]; /* relative to j = n4 - 1 */
        for (size_t j = n4; j < n; j++) acc = acc * r + p[j];
        return log(acc) + lam * h * (double)(m->k0 + (long long)n - 1);
    }
    /* sum_j p_j r^j, from the top down */
    size_t top = n;
    for (; top >= 4 && top > n % 4; top -= 4) {
        c[0] = c[0] * r4 + p[top - 1];
        c[1] = c[1] * r4 + p[top - 2];
        c[2] = c[2] * r4 + p[top - 3];
        c[3] = c[3] * r4 + p[top - 4];
    }
    double acc = ((c[0] * r + c[1]) * r + c[2]) * r + c[3]; /* relative to j = top */
    for (size_t j = top; j-- > 0;) acc = acc * r + p[j];
    return log(acc) + lam * h * (double)m->k0;
}

typedef struct {
    const pmf *m;
    double h, T, logtail;
    int upper;
} chernoff_ctx;

/* For u = log(lam) (lam > 0): the loss level beyond which the finite part of m^T has at most
 * e^logtail mass by Markov's inequality on e^{+-lam S}: upper: mass{S >= v} <= e^{T K(lam) - lam v},
 * lower: mass{S <= v} <= e^{T K(-lam) + lam v}, K the log-MGF. Returns v (upper) or -v (lower),
 * so that the best bound is a minimum in both cases. */
static double chernoff_level(double u, void *vc)
{
    const chernoff_ctx *c = vc;
    double lam = exp(u);
    double K = pmf_log_mgf(c->m, c->h, c->upper ? lam : -lam);
    double v = (c->T * K - c->logtail) / lam;
    return isfinite(v) ? v : INFINITY;
}

/* Minimum of chernoff_level over log(lam) in [log 1e-6, log 1e4]: a 15-point scan, then 20
 * golden-section steps (every lam gives a valid bound; the search only tightens it). */
static double min_loglam(const chernoff_ctx *c)
{
    const double lo = log(1e-6), hi = log(1e4), g = 0.61803398874989484820;
    const int grid = 15;
    double step = (hi - lo) / (grid - 1), best = INFINITY, xb = lo;
    for (int i = 0; i < grid; i++) {
        double v = chernoff_level(lo + step * i, (void *)c);
        if (v < best) {
            best = v;
            xb = lo + step * i;
        }
    }
    double a = xb - step, b = xb + step, x1 = b - g * (b - a), x2 = a + g * (b - a);
    double f1 = chernoff_level(x1, (void *)c), f2 = chernoff_level(x2, (void *)c);
    for (int it = 0; it < 20; it++) {
        if (f1 < f2) {
            b = x2;
            x2 = x1;
            f2 = f1;
            x1 = b - g * (b - a);
            f1 = chernoff_level(x1, (void *)c);
        } else {
            a = x1;
            x1 = x2;
            f1 = f2;
            x2 = a + g * (b - a);
            f2 = chernoff_level(x2, (void *)c);
        }
    }
    if (f1 < best) best = f1;
    if (f2 < best) best = f2;
    return best;
}

/* DP-REQ: pld-window: a loss window [lo, hi] outside which the count-fold composition of the
 * finite part of m has at most `tail` mass on each side (Chernoff bounds, any lam > 0 valid). */
static void pmf_window(const pmf *m, double h, size_t count, double tail, double *lo,
                       double *hi)
{
    chernoff_ctx c = {m, h, (double)count, log(tail), 1};
    *hi = min_loglam(&c);
    c.upper = 0;
    *lo = -min_loglam(&c);
    /* the support bounds are always valid too */
    double smin = (double)m->k0 * h * (double)count;
    double smax = (double)(m->k0 + (long long)m->n - 1) * h * (double)count;
    if (!(*lo >= smin)) *lo = smin;
    if (!(*hi <= smax)) *hi = smax;
}

/* DP-REQ: pld-compose-power: the count-fold self-convolution as one FFT power (the same
 * composition theorem as pld-compose; dp_accounting composes the same way): within a window
 * [lo, hi] of N = 2^m grid points that holds all but `tail` of the mass on each side (Chernoff),
 * y = IDFT(DFT(p)^count) is the circular convolution: mass outside the window aliases into it.
 * Pessimistic modes add the upper-tail bound to the mass at +inf (the aliased copy of that mass
 * at a lower loss only adds to delta), and mass below lo aliases upward (pessimistic). The
 * optimistic mode keeps the aliasing (upper-tail mass moved down: optimistic; lower-tail mass,
 * at most `tail`, moved up). Round-off negatives are set to 0. */
/* The circular count-fold power of m's entries times e^(lam l) / M(lam) (lam = 0: m itself),
 * read out over the window of N points starting at grid index klo. *noise receives the largest
 * negative (round-off) value. x: (N) workspace, overwritten. */
static dpc_status window_power(const pmf *m, double h, size_t count, double lam, double logM,
                               long long klo, size_t N, double *x, double *y, double *noise)
{
    memset(x, 0, N * sizeof *x);
    for (size_t j = 0; j < m->n; j++) {
        double v = m->p[j];
        if (lam > 0.0 && v > 0.0) v = exp(log(v) + lam * (double)(m->k0 + (long long)j) * h - logM);
        x[j & (N - 1)] += v; /* input p_j sits at sum offset j */
    }
    dpc_status st = dpc__selfconv_circular(x, N, (uint64_t)count, 1e-300);
    if (st) return st;
    long long s_lo = klo - (long long)count * m->k0; /* window start, sum units */
    size_t rot = (size_t)(((s_lo % (long long)N) + (long long)N) % (long long)N);
    double neg = 0.0;
    for (size_t w = 0; w < N; w++) {
        double v = x[(rot + w) & (N - 1)];
        if (v < -neg) neg = -v;
        y[w] = v;
    }
    *noise = neg;
    return DPC_OK;
}

typedef struct {
    const pmf *m;
    double h, T, level;
} tilt_ctx;

/* T K(lam) - lam level at u = log(lam): minimized by the Chernoff tilt for `level`. */
static double tilt_obj(double u, void *vc)
{
    const tilt_ctx *c = vc;
    double lam = exp(u);
    return c->T * pmf_log_mgf(c->m, c->h, lam) - lam * c->level;
}

/* DP-REQ: pld-compose-power: the count-fold self-convolution as one FFT power (the same
 * composition theorem as pld-compose; dp_accounting composes the same way): within a window
 * [lo, hi] of N = 2^m grid points that holds all but `tail` of the mass on each side (Chernoff),
 * y = IDFT(DFT(p)^count) is the circular convolution: mass outside the window aliases into it.
 * Pessimistic modes add the upper-tail bound to the mass at +inf (the aliased copy of that mass
 * at a lower loss only adds to delta), and mass below lo aliases upward (pessimistic). The
 * optimistic mode keeps the aliasing (upper-tail mass moved down: optimistic; lower-tail mass,
 * at most `tail`, moved up). Round-off negatives are set to 0.
 * DP-REQ: pld-tilt: the FFT resolves values only down to ~count * 1e-16 of the peak. With
 * tilt_level > 0 the power is also computed for the exponentially tilted distribution
 * p_j e^(lam l_j) / M(lam) (lam: the Chernoff tilt centring the composition at tilt_level), whose
 * count-fold power untilted by e^(count log M(lam) - lam l) is the same distribution (tilting
 * commutes with convolution) with round-off relative to the tail; each entry takes the
 * computation with the smaller round-off level there. */
static dpc_status pmf_power(pmf *res, const pmf *m, size_t count, double tail, int optimistic,
                            size_t max_points, double h, double *points, double tilt_level)
{
    if (count == 1) return dpc__pmf_copy(res, m);
    double lo, hi;
    pmf_window(m, h, count, tail, &lo, &hi);
    double klo = ceil(lo / h) - 1.0, khi = floor(hi / h) + 1.0;
    *points = khi - klo + 1.0;
    if (!(khi - klo + 1.0 <= (double)max_points) || fabs(klo) > 4e18 || fabs(khi) > 4e18)
        return DPC_E_RANGE;
    size_t need = (size_t)(khi - klo) + 1, N = 4;
    while (N < need) N <<= 1;
    if (N > max_points) return DPC_E_RANGE;
    double *x = dpc__malloc_array(N, sizeof *x), *y = dpc__malloc_array(N, sizeof *y);
    double *y1 = tilt_level > 0.0 ? dpc__malloc_array(N, sizeof *y1) : NULL;
    if (!x || !y || (tilt_level > 0.0 && !y1)) {
        free(x);
        free(y);
        free(y1);
        return DPC_E_NOMEM;
    }
    double n0 = 0.0, n1 = 0.0;
    dpc_status st = window_power(m, h, count, 0.0, 0.0, (long long)klo, N, x, y, &n0);
    if (!st && y1) {
        tilt_ctx tc = {m, h, (double)count, tilt_level};
        double f, u = dpc__minimize(tilt_obj, &tc, log(1e-4), log(50.0), 25, &f);
        double lam = exp(u), logM = pmf_log_mgf(m, h, lam);
        st = window_power(m, h, count, lam, logM, (long long)klo, N, x, y1, &n1);
        /* entry w: untilted y, round-off n0; tilted y1 e^(a_w), round-off n1 e^(a_w) */
        double TlM = (double)count * logM, ln0 = log(n0 > 0.0 ? n0 : 1e-320);
        double ln1 = log(n1 > 0.0 ? n1 : 1e-320);
        for (size_t w = 0; !st && w < N; w++) {
            double a = TlM - lam * (klo + (double)w) * h;
            if (ln1 + a < ln0) y[w] = y1[w] * exp(a);
        }
        n0 = n0 > 0.0 ? -1.0 : 0.0; /* refined: no further tilt needed */
    }
    free(x);
    free(y1);
    if (st) {
        free(y);
        return st;
    }
    for (size_t w = 0; w < N; w++)
        if (!(y[w] > 0.0)) y[w] = 0.0;
    res->p = y;
    res->n = N;
    res->k0 = (long long)klo;
    res->noise = n0;
    /* the infinite parts compose as 1 - (1 - inf)^count */
    res->inf = m->inf > 0.0 ? -expm1((double)count * log1p(-m->inf)) : 0.0;
    if (!optimistic) res->inf += tail;
    if (res->inf > 1.0) res->inf = 1.0;
    dpc__pmf_trim(res);
    return DPC_OK;
}

static dpc_status self_compose(dpc_pld **out, const dpc_pld *a, size_t count, int naive,
                               double *points, double tilt_level, dpc_error *err)
{
    if (!out) return dpc_error_param(err, DPC_E_INVALID, "out", "NULL");
    *out = NULL;
    if (!a) return dpc_error_param(err, DPC_E_INVALID, "a", "NULL");
    if (count == 0) return dpc_error_param(err, DPC_E_INVALID, "count", "must be >= 1, got 0");
    dpc_pld *c = calloc(1, sizeof *c);
    if (!c) return DPC__NOMEM(err, "a PLD");
    c->h = a->h;
    c->tail = a->tail;
    c->disc = a->disc;
    c->ndir = a->ndir;
    int opt = c->disc == DPC_PLD_ROUND_DOWN;
    double need = 0.0;
    for (int d = 0; d < c->ndir; d++) {
        double pts = 0.0;
        dpc_status st = naive ? pmf_power_naive(&c->dir[d], &a->dir[d], count, c->tail, opt)
                              : pmf_power(&c->dir[d], &a->dir[d], count, c->tail, opt,
                                          PLD_MAX_POINTS, c->h, &pts, tilt_level);
        if (pts > need) need = pts;
        if (st == DPC_E_RANGE && !naive) {
            dpc_pld_free(c);
            if (points) *points = need;
            return dpc_error_param(err, st, "interval",
                                   "%zu compositions span %.4g loss units: %.3g points at "
                                   "interval %g exceed %zu; use interval >= %.3g",
                                 count, need * a->h, need, a->h, PLD_MAX_POINTS,
                                 need * a->h / (double)PLD_MAX_POINTS);
        }
        if (st) {
            dpc_pld_free(c);
            return conv_status(st, err);
        }
    }
    if (points) *points = need;
    *out = c;
    return DPC_OK;
}

dpc_status dpc_pld_self_compose(dpc_pld **out, const dpc_pld *a, size_t count, dpc_error *err)
{
    return self_compose(out, a, count, 0, NULL, 0.0, err);
}

dpc_status dpc__pld_self_compose_pts(dpc_pld **out, const dpc_pld *a, size_t count,
                                     double *points, double tilt_level, dpc_error *err)
{
    return self_compose(out, a, count, 0, points, tilt_level, err);
}

dpc_status dpc__pld_self_compose_naive(dpc_pld **out, const dpc_pld *a, size_t count,
                                       dpc_error *err)
{
    return self_compose(out, a, count, 1, NULL, 0.0, err);
}

size_t dpc__pld_max_points(void) { return PLD_MAX_POINTS; }

double dpc__pld_noise_above(const dpc_pld *a, double eps)
{
    double worst = 0.0;
    for (int d = 0; d < a->ndir; d++) {
        const pmf *m = &a->dir[d];
        if (m->noise < 0.0) continue; /* refined by tilting */
        double l0 = (double)m->k0 * a->h, above = (double)m->n - floor((eps - l0) / a->h);
        if (above > (double)m->n) above = (double)m->n;
        if (above > 0.0 && m->noise * above > worst) worst = m->noise * above;
    }
    return worst;
}

double dpc__pld_interval(const dpc_pld *a) { return a->h; }

