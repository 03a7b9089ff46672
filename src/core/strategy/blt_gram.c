/* blt_gram.c — the error of a BLT strategy in time O(d^3 log n): the workload noise A C^-1 of a
 * BLT is the impulse response of a linear state-space system, and its sums of squares are
 * quadratic forms of finite-horizon Gramians computed by doubling; plus the exact reverse-mode
 * gradient of those quadratic forms, and a naive O(n d^2) reference used by the tests.
 *
 * System (z = impulse): the noise recursion of C^-1 (x_t = z_t - omega^T s, s <- Theta s + 1 x_t),
 * followed by the workload filter (u_t = x_t + m u_{t-1}, y_t = u_t + a y_{t-1}). With the state
 * S = (s, u_{t-1}, y_{t-1}) (u omitted when m = 0):
 *     S_{t+1} = F S_t + g z_t,   y_t = h^T S_t + z_t,
 *     F = [[Theta - 1 omega^T, 0, 0], [-omega^T, m, 0], [-omega^T, m, a]],  g = 1,  h = (-omega, m, a).
 * So y_0 = 1 and y_t = h^T F^(t-1) g for t >= 1, and with P_j = F^j g g^T F^jT,
 *     sum_{t<n} y_t^2          = 1 + h^T G_N h,   G_N = sum_{j<N} P_j,          N = n - 1
 *     sum_{t<n} (n - t) y_t^2  = n + h^T H_N h,   H_N = sum_{j<N} (N - j) P_j = sum_{m=1}^N G_m.
 * Doubling: (P, G, H, len) of two consecutive blocks combine as
 *     F^(a+b) = F^a F^b,  G_{a+b} = G_a + F^a G_b F^aT,  H_{a+b} = H_a + b G_a + F^a H_b F^aT. */
#include "common/util.h"
#include "strategy/blt_internal.h"

#include <math.h>
#include <string.h>

size_t dpc__blt_state_dim(size_t nbuf, double momentum)
{
    return nbuf + 1 + (momentum != 0.0 ? 1 : 0);
}

void dpc__blt_system(double *F, double *g, double *h, const double *theta, const double *omega,
                     size_t nbuf, const dpc_workload *wl)
{
    size_t d = dpc__blt_state_dim(nbuf, wl->momentum);
    int has_u = wl->momentum != 0.0;
    memset(F, 0, d * d * sizeof *F);
    for (size_t r = 0; r < d; r++)
        for (size_t i = 0; i < nbuf; i++) F[r * d + i] = -omega[i];
    for (size_t i = 0; i < nbuf; i++) F[i * d + i] += theta[i];
    size_t iu = nbuf, iy = nbuf + (has_u ? 1 : 0);
    if (has_u) {
        F[iu * d + iu] = wl->momentum;
        F[iy * d + iu] = wl->momentum;
    }
    F[iy * d + iy] = wl->decay;
    for (size_t r = 0; r < d; r++) g[r] = 1.0;
    for (size_t i = 0; i < nbuf; i++) h[i] = -omega[i];
    if (has_u) h[iu] = wl->momentum;
    h[iy] = wl->decay;
}

/* ---- small dense matrix helpers (d x d, row-major) ----------------------------------------- */

/* C = op(A) op(B); ta/tb = 1 for the transpose. C must not alias A or B. */
static void mm(double *C, const double *A, int ta, const double *B, int tb, size_t d)
{
    for (size_t i = 0; i < d; i++)
        for (size_t j = 0; j < d; j++) {
            double acc = 0.0;
            for (size_t k = 0; k < d; k++)
                acc += (ta ? A[k * d + i] : A[i * d + k]) * (tb ? B[j * d + k] : B[k * d + j]);
            C[i * d + j] = acc;
        }
}

/* Y = P M P^T (M symmetric); tmp: d*d. */
static void congruence(double *Y, const double *P, const double *M, double *tmp, size_t d)
{
    mm(tmp, P, 0, M, 0, d);
    mm(Y, tmp, 0, P, 1, d);
}

/* Y += P^T Ybar P ; tmp: d*d. */
static void add_congruence_t(double *Y, const double *P, const double *Ybar, double *tmp,
                             double *tmp2, size_t d)
{
    mm(tmp, P, 1, Ybar, 0, d);
    mm(tmp2, tmp, 0, P, 0, d);
    for (size_t i = 0; i < d * d; i++) Y[i] += tmp2[i];
}

/* Pbar += 2 Ybar P M (Ybar, M symmetric). */
static void add_2ypm(double *Pbar, const double *Ybar, const double *P, const double *M,
                     double *tmp, double *tmp2, size_t d)
{
    mm(tmp, Ybar, 0, P, 0, d);
    mm(tmp2, tmp, 0, M, 0, d);
    for (size_t i = 0; i < d * d; i++) Pbar[i] += 2.0 * tmp2[i];
}

/* A block (P = F^len, G_len, H_len). */
typedef struct blk {
    double *P, *G, *H;
    double len;
} blk;

#define MAXLV 42

typedef struct gram_ws {
    size_t d;
    int want_h;
    int nlev;               /* levels of the power-of-two blocks T_0 .. T_{nlev-1} */
    int nacc;               /* accumulation steps */
    int acc_lev[MAXLV];     /* level combined at each accumulation step */
    blk T[MAXLV];           /* T_j: len 2^j */
    blk A[MAXLV + 1];       /* A_0 = empty, A_{i+1} = combine(A_i, T_{acc_lev[i]}) */
    double *tmp, *tmp2, *tmp3;
    double *mem;
} gram_ws;

static void combine(blk *out, const blk *b1, const blk *b2, int want_h, double *tmp, size_t d)
{
    mm(out->P, b1->P, 0, b2->P, 0, d);
    congruence(out->G, b1->P, b2->G, tmp, d);
    for (size_t i = 0; i < d * d; i++) out->G[i] += b1->G[i];
    if (want_h) {
        congruence(out->H, b1->P, b2->H, tmp, d);
        for (size_t i = 0; i < d * d; i++) out->H[i] += b1->H[i] + b2->len * b1->G[i];
    }
    out->len = b1->len + b2->len;
}

/* Backward of combine: adds the adjoints of b1 and b2 given those of the output. */
static void combine_back(blk *bar1, blk *bar2, const blk *bar, const blk *b1, const blk *b2,
                         int want_h, double *tmp, double *tmp2, size_t d)
{
    /* P = P1 P2 */
    mm(tmp2, bar->P, 0, b2->P, 1, d);
    for (size_t i = 0; i < d * d; i++) bar1->P[i] += tmp2[i];
    mm(tmp2, b1->P, 1, bar->P, 0, d);
    for (size_t i = 0; i < d * d; i++) bar2->P[i] += tmp2[i];
    /* G = G1 + P1 G2 P1^T */
    for (size_t i = 0; i < d * d; i++) bar1->G[i] += bar->G[i];
    add_congruence_t(bar2->G, b1->P, bar->G, tmp, tmp2, d);
    add_2ypm(bar1->P, bar->G, b1->P, b2->G, tmp, tmp2, d);
    if (want_h) { /* H = H1 + len2 G1 + P1 H2 P1^T */
        for (size_t i = 0; i < d * d; i++) {
            bar1->H[i] += bar->H[i];
            bar1->G[i] += b2->len * bar->H[i];
        }
        add_congruence_t(bar2->H, b1->P, bar->H, tmp, tmp2, d);
        add_2ypm(bar1->P, bar->H, b1->P, b2->H, tmp, tmp2, d);
    }
}

static int ws_init(gram_ws *w, size_t d, uint64_t N, int want_h)
{
    memset(w, 0, sizeof *w);
    w->d = d;
    w->want_h = want_h;
    int nlev = 0;
    while (nlev < MAXLV && (N >> nlev) != 0) nlev++;
    w->nlev = nlev;
    int nacc = 0;
    for (int j = 0; j < nlev; j++)
        if ((N >> j) & 1) w->acc_lev[nacc++] = j;
    w->nacc = nacc;
    /* forward blocks T (nlev) and A (nacc + 1), backward adjoints of each (same count) */
    size_t nblk = 2 * ((size_t)nlev + (size_t)nacc + 1), dd = d * d;
    w->mem = dpc__calloc(nblk * 3 * dd + 3 * dd, sizeof(double));
    if (!w->mem) return 0;
    double *p = w->mem;
    for (int j = 0; j < nlev; j++, p += 3 * dd) w->T[j] = (blk){p, p + dd, p + 2 * dd, 0};
    for (int i = 0; i <= nacc; i++, p += 3 * dd) w->A[i] = (blk){p, p + dd, p + 2 * dd, 0};
    w->tmp = p + (nblk / 2) * 3 * dd;
    w->tmp2 = w->tmp + dd;
    w->tmp3 = w->tmp2 + dd;
    return 1;
}

int dpc__blt_gram_quad(const double *F, const double *g, const double *h, size_t d, uint64_t N,
                       int want_h, double *qg, double *qh, double *Fbar, double *hbar,
                       double cg, double ch)
{
    *qg = 0.0;
    if (qh) *qh = 0.0;
    if (Fbar) memset(Fbar, 0, d * d * sizeof *Fbar);
    if (hbar) memset(hbar, 0, d * sizeof *hbar);
    if (N == 0) return 1;
    gram_ws w;
    if (!ws_init(&w, d, N, want_h)) return 0;
    size_t dd = d * d;
    /* forward */
    memcpy(w.T[0].P, F, dd * sizeof *F);
    for (size_t i = 0; i < d; i++)
        for (size_t j = 0; j < d; j++) w.T[0].G[i * d + j] = w.T[0].H[i * d + j] = g[i] * g[j];
    w.T[0].len = 1.0;
    for (int j = 1; j < w.nlev; j++) combine(&w.T[j], &w.T[j - 1], &w.T[j - 1], want_h, w.tmp, d);
    for (size_t i = 0; i < d; i++) w.A[0].P[i * d + i] = 1.0; /* empty block: P = I, G = H = 0 */
    w.A[0].len = 0.0;
    for (int i = 0; i < w.nacc; i++) combine(&w.A[i + 1], &w.A[i], &w.T[w.acc_lev[i]], want_h, w.tmp, d);
    const blk *R = &w.A[w.nacc];
    double sg = 0.0, sh = 0.0;
    for (size_t i = 0; i < d; i++)
        for (size_t j = 0; j < d; j++) {
            sg += h[i] * R->G[i * d + j] * h[j];
            if (want_h) sh += h[i] * R->H[i * d + j] * h[j];
        }
    *qg = sg;
    if (qh) *qh = sh;
    if (!Fbar) {
        free(w.mem);
        return 1;
    }
    /* backward: adjoint blocks live after the forward ones in the same slab */
    double *p = w.mem + ((size_t)w.nlev + (size_t)w.nacc + 1) * 3 * dd;
    blk Tb[MAXLV], Ab[MAXLV + 1];
    for (int j = 0; j < w.nlev; j++, p += 3 * dd) Tb[j] = (blk){p, p + dd, p + 2 * dd, 0};
    for (int i = 0; i <= w.nacc; i++, p += 3 * dd) Ab[i] = (blk){p, p + dd, p + 2 * dd, 0};
    blk *Rb = &Ab[w.nacc];
    for (size_t i = 0; i < d; i++)
        for (size_t j = 0; j < d; j++) {
            Rb->G[i * d + j] = cg * h[i] * h[j];
            if (want_h) Rb->H[i * d + j] = ch * h[i] * h[j];
        }
    for (size_t i = 0; i < d; i++) {
        double a = 0.0;
        for (size_t j = 0; j < d; j++) {
            a += cg * (R->G[i * d + j] + R->G[j * d + i]) * h[j];
            if (want_h) a += ch * (R->H[i * d + j] + R->H[j * d + i]) * h[j];
        }
        hbar[i] = a;
    }
    for (int i = w.nacc - 1; i >= 0; i--)
        combine_back(&Ab[i], &Tb[w.acc_lev[i]], &Ab[i + 1], &w.A[i], &w.T[w.acc_lev[i]], want_h,
                     w.tmp, w.tmp2, d);
    for (int j = w.nlev - 1; j >= 1; j--) {
        combine_back(&Tb[j - 1], &Tb[j - 1], &Tb[j], &w.T[j - 1], &w.T[j - 1], want_h, w.tmp,
                     w.tmp2, d);
    }
    memcpy(Fbar, Tb[0].P, dd * sizeof *Fbar); /* g is constant: no adjoint needed */
    free(w.mem);
    return 1;
}

int dpc__blt_error_sums_naive(const double *theta, const double *omega, size_t nbuf,
                              const dpc_workload *wl, size_t n, double *sum_sq,
                              double *sum_weighted)
{
    /* Runs the recursions of the header comment step by step: O(n nbuf). */
    double s[64] = {0};
    if (nbuf > 64) return 0;
    double u = 0.0, y = 0.0, a = 0.0, b = 0.0;
    for (size_t t = 0; t < n; t++) {
        double x = t == 0 ? 1.0 : 0.0;
        for (size_t i = 0; i < nbuf; i++) x -= omega[i] * s[i];
        for (size_t i = 0; i < nbuf; i++) s[i] = theta[i] * s[i] + x;
        u = x + wl->momentum * u;
        y = u + wl->decay * y;
        a += y * y;
        b += (double)(n - t) * y * y;
    }
    *sum_sq = a;
    *sum_weighted = b;
    return 1;
}
