/* test_mech.c — mechanisms against dense brute force: streaming B Z vs the dense product,
 * buffer vs replay bit-identity, coordinate splitting, seek and checkpoint, B C = I, empirical
 * covariance vs B B^T, sensitivity vs brute-force enumeration, error vs dense A B, and the
 * published reference values of the nu-DP-FTRL note. */
#include "dpcorr/mech.h"
#include "harness.h"
#include "mech/mech_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct spec {
    const char *name;
    dpc_mech_kind kind;
    double nu, lambda, momentum, decay;
    size_t bands;
    int honaker, of_strategy;
    size_t nbuf;
    double theta[4], omega[4];
    size_t ncoeffs;
    double coeffs[8];
    int dense; /* 1: random dense B, 2: random dense C */
} spec;

static const spec specs[] = {
    {.name = "identity", .kind = DPC_MECH_IDENTITY},
    {.name = "nu=0.05", .kind = DPC_MECH_NU, .nu = 0.05},
    {.name = "nu=0", .kind = DPC_MECH_NU, .nu = 0.0},
    {.name = "antipgd", .kind = DPC_MECH_ANTIPGD, .nu = 0.0},
    {.name = "antipgd nu=0.1", .kind = DPC_MECH_ANTIPGD, .nu = 0.1},
    {.name = "lcgd 0.5", .kind = DPC_MECH_LCGD, .lambda = 0.5},
    {.name = "lcgd 1", .kind = DPC_MECH_LCGD, .lambda = 1.0},
    {.name = "bsr 4", .kind = DPC_MECH_BSR, .bands = 4, .decay = 1},
    {.name = "bsr 3 mom", .kind = DPC_MECH_BSR, .bands = 3, .momentum = 0.9, .decay = 0.99},
    {.name = "bisr 5", .kind = DPC_MECH_BISR, .bands = 5, .decay = 1},
    {.name = "bisr 4 mom", .kind = DPC_MECH_BISR, .bands = 4, .momentum = 0.9, .decay = 0.995},
    {.name = "blt 2", .kind = DPC_MECH_BLT, .nbuf = 2, .theta = {0.9, 0.5}, .omega = {0.3, 0.1}},
    {.name = "tree", .kind = DPC_MECH_TREE},
    {.name = "tree honaker", .kind = DPC_MECH_TREE, .honaker = 1},
    {.name = "toeplitz B", .kind = DPC_MECH_TOEPLITZ, .ncoeffs = 3, .coeffs = {1, -0.6, 0.1}},
    {.name = "toeplitz C", .kind = DPC_MECH_TOEPLITZ, .ncoeffs = 4, .coeffs = {1, 0.5, 0.25, 0.1},
     .of_strategy = 1},
    {.name = "dense B", .kind = DPC_MECH_DENSE, .dense = 1},
    {.name = "dense C", .kind = DPC_MECH_DENSE, .dense = 2, .of_strategy = 1},
};
#define NSPECS (sizeof specs / sizeof specs[0])

static double *dense_buf;

static dpc_mech *make(const spec *s, size_t n)
{
    dpc_mech_params p;
    dpc_mech_params_init(&p);
    p.kind = s->kind;
    p.steps = n;
    p.nu = s->nu;
    p.lambda = s->lambda;
    p.bands = s->bands;
    p.momentum = s->momentum;
    p.decay = s->decay ? s->decay : 1.0;
    p.honaker = s->honaker;
    p.nbuf = s->nbuf;
    p.theta = s->theta;
    p.omega = s->omega;
    p.ncoeffs = s->ncoeffs;
    p.coeffs = s->coeffs;
    p.coeffs_of_strategy = s->of_strategy;
    if (s->dense) {
        free(dense_buf);
        dense_buf = calloc(n * n, sizeof(double));
        unsigned x = 12345u + (unsigned)n;
        for (size_t t = 0; t < n; t++)
            for (size_t j = 0; j <= t; j++) {
                x = x * 1103515245u + 12345u;
                double u = ((x >> 8) & 0xFFFF) / 65536.0;
                dense_buf[t * n + j] = j == t ? 1.0 + u : (u - 0.5) * 0.4;
            }
        p.dense = dense_buf;
    }
    dpc_mech *m = NULL;
    dpc_error err = {0};
    dpc_status st = dpc_mech_new(&m, &p, &err);
    CHECK(st == DPC_OK, "%s n=%zu: %s", s->name, n, err.msg);
    return m;
}

static dpc_rng_stream test_stream(uint64_t seed)
{
    dpc_rng rng;
    dpc_rng_seed(&rng, seed);
    return dpc_rng_stream_derive(&rng, DPC_STREAM_ID(DPC_STREAM_NOISE, 0));
}

static double *run_gen(const dpc_mech *m, const dpc_rng_stream *s, size_t coord0, size_t d,
                       dpc_noise_form form, size_t steps)
{
    dpc_noise_config cfg = {coord0, d, form, 0, DPC_ISA_AUTO};
    dpc_noise *g = NULL;
    dpc_error err = {0};
    if (dpc_noise_new(&g, m, s, &cfg, &err) != DPC_OK) {
        CHECK(0, "noise_new: %s", err.msg);
        return NULL;
    }
    double *out = malloc(steps * d * sizeof *out);
    for (size_t t = 0; t < steps; t++) CHECK_OK(dpc_noise_next(g, out + t * d, &err), &err);
    dpc_noise_free(g);
    return out;
}

/* Streaming equals dense B Z; buffer == replay bit for bit; splits; seek; export/import. */
static void test_streaming(void)
{
    size_t ns[] = {1, 7, 64, 200}, ds[] = {1, 3, 17};
    dpc_rng_stream s = test_stream(1);
    for (size_t k = 0; k < NSPECS; k++)
        for (size_t a = 0; a < 4; a++)
            for (size_t b = 0; b < 3; b++) {
                size_t n = ns[a], d = ds[b];
                dpc_mech *m = make(&specs[k], n);
                if (!m) continue;
                size_t rows = dpc_mech_noise_rows(m);
                double *B = malloc(n * rows * sizeof *B), *Z = malloc(rows * d * sizeof *Z);
                dpc_error err = {0};
                CHECK_OK(dpc_mech_dense_noising(m, B, &err), &err);
                for (size_t r = 0; r < rows; r++) dpc_rng_gaussian_fill(&s, r, 0, Z + r * d, d);
                double *buf = run_gen(m, &s, 0, d, DPC_NOISE_BUFFER, n);
                double maxrel = 0;
                for (size_t t = 0; t < n; t++)
                    for (size_t j = 0; j < d; j++) {
                        double ref = 0, scale = 0;
                        for (size_t r = 0; r < rows; r++) {
                            ref += B[t * rows + r] * Z[r * d + j];
                            scale += fabs(B[t * rows + r] * Z[r * d + j]);
                        }
                        double e = fabs(buf[t * d + j] - ref) / (scale > 1 ? scale : 1);
                        if (e > maxrel) maxrel = e;
                    }
                CHECK(maxrel < 1e-12, "%s n=%zu d=%zu: streaming vs dense B Z rel err %g",
                      specs[k].name, n, d, maxrel);
                if (dpc_mech_form_available(m, DPC_NOISE_REPLAY)) {
                    double *rep = run_gen(m, &s, 0, d, DPC_NOISE_REPLAY, n);
                    CHECK(memcmp(rep, buf, n * d * sizeof *buf) == 0,
                          "%s n=%zu d=%zu: buffer and replay differ", specs[k].name, n, d);
                    free(rep);
                }
                if (d > 1) { /* two "threads" over [0, h) and [h, d) */
                    size_t h = d / 2;
                    double *lo = run_gen(m, &s, 0, h, DPC_NOISE_AUTO, n);
                    double *hi = run_gen(m, &s, h, d - h, DPC_NOISE_AUTO, n);
                    int same = 1;
                    for (size_t t = 0; t < n; t++)
                        for (size_t j = 0; j < d; j++)
                            same &= (j < h ? lo[t * h + j] : hi[t * (d - h) + j - h]) ==
                                    buf[t * d + j];
                    CHECK(same, "%s n=%zu d=%zu: split generation differs", specs[k].name, n, d);
                    free(lo);
                    free(hi);
                }
                if (n > 5) { /* seek and checkpoint at t0 */
                    size_t t0 = n / 2 + 1;
                    for (int f = 0; f < 2; f++) {
                        dpc_noise_form form = f ? DPC_NOISE_REPLAY : DPC_NOISE_BUFFER;
                        if (!dpc_mech_form_available(m, form)) continue;
                        dpc_noise_config cfg = {0, d, form, 0, DPC_ISA_AUTO};
                        dpc_noise *g = NULL, *h2 = NULL;
                        CHECK_OK(dpc_noise_new(&g, m, &s, &cfg, &err), &err);
                        CHECK_OK(dpc_noise_seek(g, t0, &err), &err);
                        double *o = malloc(d * sizeof *o);
                        int same = 1;
                        for (size_t t = t0; t < n; t++) {
                            CHECK_OK(dpc_noise_next(g, o, &err), &err);
                            same &= memcmp(o, buf + t * d, d * sizeof *o) == 0;
                        }
                        CHECK(same, "%s n=%zu: seek(%zu) %s differs", specs[k].name, n, t0,
                              dpc_noise_form_name(form));
                        /* export after t0 steps, import into a fresh generator */
                        CHECK_OK(dpc_noise_new(&h2, m, &s, &cfg, &err), &err);
                        CHECK_OK(dpc_noise_seek(g, 0, &err), &err);
                        for (size_t t = 0; t < t0; t++) CHECK_OK(dpc_noise_next(g, o, &err), &err);
                        size_t ssz = dpc_noise_state_size(g), step = 0;
                        double *st = malloc((ssz + 1) * sizeof *st);
                        CHECK_OK(dpc_noise_export(g, &step, st, &err), &err);
                        CHECK_OK(dpc_noise_import(h2, step, st, &err), &err);
                        same = 1;
                        for (size_t t = t0; t < n; t++) {
                            CHECK_OK(dpc_noise_next(h2, o, &err), &err);
                            same &= memcmp(o, buf + t * d, d * sizeof *o) == 0;
                        }
                        CHECK(same, "%s n=%zu: export/import %s differs", specs[k].name, n,
                              dpc_noise_form_name(form));
                        CHECK(dpc_noise_next(h2, o, &err) == DPC_E_RANGE, "next after n steps");
                        free(st);
                        free(o);
                        dpc_noise_free(g);
                        dpc_noise_free(h2);
                    }
                }
                free(buf);
                free(B);
                free(Z);
                dpc_mech_free(m);
            }
}

/* B C = I for every kind (validates series inversions, BLT recursion, tree decoder). */
static void test_inverse(void)
{
    size_t n = 64;
    for (size_t k = 0; k < NSPECS; k++) {
        dpc_mech *m = make(&specs[k], n);
        if (!m) continue;
        size_t rows = dpc_mech_noise_rows(m);
        double *B = malloc(n * rows * sizeof *B), *C = malloc(rows * n * sizeof *C);
        dpc_error err = {0};
        CHECK_OK(dpc_mech_dense_noising(m, B, &err), &err);
        CHECK_OK(dpc_mech_dense_strategy(m, C, &err), &err);
        double maxe = 0;
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < n; j++) {
                double acc = 0;
                for (size_t r = 0; r < rows; r++) acc += B[i * rows + r] * C[r * n + j];
                double e = fabs(acc - (i == j));
                if (e > maxe) maxe = e;
            }
        CHECK(maxe < 1e-9, "%s: ||B C - I||_max = %g", specs[k].name, maxe);
        free(B);
        free(C);
        dpc_mech_free(m);
    }
}

/* Empirical covariance of (B Z)_t over >= 1e5 coordinates vs B B^T within 4 standard errors. */
static void test_covariance(void)
{
    size_t n = 6, d = (size_t)(2e5 * tests_scale());
    if (d < 20000) d = 20000;
    dpc_rng_stream s = test_stream(77);
    for (size_t k = 0; k < NSPECS; k++) {
        dpc_mech *m = make(&specs[k], n);
        if (!m) continue;
        size_t rows = dpc_mech_noise_rows(m);
        double *B = malloc(n * rows * sizeof *B);
        dpc_error err = {0};
        CHECK_OK(dpc_mech_dense_noising(m, B, &err), &err);
        double *out = run_gen(m, &s, 0, d, DPC_NOISE_AUTO, n);
        int bad = 0;
        double worst = 0;
        for (size_t a = 0; a < n; a++)
            for (size_t b = 0; b <= a; b++) {
                double sab = 0, saa = 0, sbb = 0, emp = 0;
                for (size_t r = 0; r < rows; r++) {
                    sab += B[a * rows + r] * B[b * rows + r];
                    saa += B[a * rows + r] * B[a * rows + r];
                    sbb += B[b * rows + r] * B[b * rows + r];
                }
                for (size_t j = 0; j < d; j++) emp += out[a * d + j] * out[b * d + j];
                emp /= (double)d;
                double se = sqrt((saa * sbb + sab * sab) / (double)d);
                double z = fabs(emp - sab) / se;
                if (z > worst) worst = z;
                bad += z > 4.0;
            }
        CHECK(bad == 0, "%s: covariance off by %.2f standard errors", specs[k].name, worst);
        free(out);
        free(B);
        dpc_mech_free(m);
    }
}

/* Brute force: max over patterns (and signs) of s^T X_pi s; X = C^T C from the dense C. */
static double brute_sens_sq(const double *C, size_t rows, size_t n, size_t k, size_t b, int cyclic)
{
    double *X = calloc(n * n, sizeof *X);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            double acc = 0;
            for (size_t r = 0; r < rows; r++) acc += C[r * n + i] * C[r * n + j];
            X[i * n + j] = acc;
        }
    double best = 0;
    size_t idx[16];
    if (cyclic) {
        for (size_t t0 = 0; t0 < b && t0 < n; t0++) {
            size_t c = 0;
            for (size_t i = t0; i < n && c < k; i += b) idx[c++] = i;
            for (unsigned sg = 0; sg < (1u << c); sg++) {
                double v = 0;
                for (size_t p = 0; p < c; p++)
                    for (size_t q = 0; q < c; q++)
                        v += ((sg >> p & 1) ? -1 : 1) * ((sg >> q & 1) ? -1 : 1) *
                             X[idx[p] * n + idx[q]];
                if (v > best) best = v;
            }
        }
        free(X);
        return best;
    }
    /* all subsets of size 1..k with gaps >= b, iteratively */
    size_t depth = 0;
    idx[0] = 0;
    for (;;) {
        /* evaluate current pattern idx[0..depth] */
        size_t c = depth + 1;
        for (unsigned sg = 0; sg < (1u << (c - 1)); sg++) { /* first sign fixed */
            double v = 0;
            for (size_t p = 0; p < c; p++)
                for (size_t q = 0; q < c; q++)
                    v += ((sg << 1 >> p & 1) ? -1 : 1) * ((sg << 1 >> q & 1) ? -1 : 1) *
                         X[idx[p] * n + idx[q]];
            if (v > best) best = v;
        }
        /* advance: extend if possible, else increment, else backtrack */
        if (c < k && idx[depth] + b < n) {
            idx[depth + 1] = idx[depth] + b;
            depth++;
            continue;
        }
        for (;;) {
            idx[depth]++;
            if (idx[depth] < n) break;
            if (depth == 0) {
                free(X);
                return best;
            }
            depth--;
        }
    }
}

static void test_sensitivity(void)
{
    dpc_error err = {0};
    /* single participation vs max column norm of C, n <= 512 */
    size_t ns[] = {1, 2, 37, 256, 512};
    for (size_t k = 0; k < NSPECS; k++)
        for (size_t a = 0; a < 5; a++) {
            size_t n = ns[a];
            dpc_mech *m = make(&specs[k], n);
            if (!m) continue;
            size_t rows = dpc_mech_noise_rows(m);
            double *C = malloc(rows * n * sizeof *C);
            CHECK_OK(dpc_mech_dense_strategy(m, C, &err), &err);
            double best = 0;
            for (size_t j = 0; j < n; j++) {
                double acc = 0;
                for (size_t r = 0; r < rows; r++) acc += C[r * n + j] * C[r * n + j];
                if (acc > best) best = acc;
            }
            dpc_participation part = {DPC_PART_MINSEP, 1, 1};
            dpc_sensitivity sv;
            CHECK_OK(dpc_mech_sensitivity(m, &part, &sv, &err), &err);
            CHECK_NEAR_REL(sv.value, sqrt(best), 1e-12, "%s n=%zu single sensitivity",
                           specs[k].name, n);
            CHECK(sv.exact, "%s single participation is exact", specs[k].name);
            free(C);
            dpc_mech_free(m);
        }
    /* multiple participations vs enumeration, n <= 64 */
    struct { size_t n, k, b; } cases[] = {{16, 2, 1}, {16, 3, 4}, {33, 4, 8}, {64, 3, 16},
                                          {64, 4, 16}, {40, 5, 7}, {12, 12, 1}, {64, 2, 40}};
    for (size_t k = 0; k < NSPECS; k++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
            for (int cyc = 0; cyc < 2; cyc++) {
                size_t n = cases[c].n;
                dpc_mech *m = make(&specs[k], n);
                if (!m) continue;
                size_t rows = dpc_mech_noise_rows(m);
                double *C = malloc(rows * n * sizeof *C);
                CHECK_OK(dpc_mech_dense_strategy(m, C, &err), &err);
                double bf = brute_sens_sq(C, rows, n, cases[c].k, cases[c].b, cyc);
                dpc_participation part = {cyc ? DPC_PART_CYCLIC : DPC_PART_MINSEP, cases[c].k,
                                          cases[c].b};
                dpc_sensitivity sv;
                CHECK_OK(dpc_mech_sensitivity(m, &part, &sv, &err), &err);
                if (sv.exact)
                    CHECK_NEAR_REL(sv.value, sqrt(bf), 1e-10, "%s n=%zu k=%zu b=%zu %s (%s)",
                                   specs[k].name, n, cases[c].k, cases[c].b,
                                   cyc ? "cyclic" : "minsep", dpc_sens_method_name(sv.method));
                else
                    CHECK(sv.value >= sqrt(bf) * (1 - 1e-12),
                          "%s n=%zu k=%zu b=%zu: bound %g below brute force %g (%s)",
                          specs[k].name, n, cases[c].k, cases[c].b, sv.value, sqrt(bf),
                          dpc_sens_method_name(sv.method));
                free(C);
                dpc_mech_free(m);
            }
    /* the large-n paths: Toeplitz exact theorem vs enumeration agree at moderate n */
    spec nu = {.name = "nu", .kind = DPC_MECH_NU, .nu = 0.01};
    dpc_mech *m = make(&nu, 2000);
    dpc_participation part = {DPC_PART_MINSEP, 4, 500};
    dpc_sensitivity sv;
    CHECK_OK(dpc_mech_sensitivity(m, &part, &sv, &err), &err);
    CHECK(sv.exact && sv.method == DPC_SENS_EXACT_TOEPLITZ_MINSEP, "nu multi-participation exact");
    CHECK(sv.value > 1 && sv.value < 4 * 2, "nu k=4 sensitivity plausible: %g", sv.value);
    dpc_mech_free(m);
    spec tr = {.name = "tree", .kind = DPC_MECH_TREE};
    m = make(&tr, 100000);
    part.k = 1;
    CHECK_OK(dpc_mech_sensitivity(m, &part, &sv, &err), &err);
    CHECK_NEAR_REL(sv.value * sv.value, 17.0, 1e-15, "tree n=1e5 single: 1 + floor(log2 n)");
    part.k = 4;
    CHECK_OK(dpc_mech_sensitivity(m, &part, &sv, &err), &err);
    CHECK(!sv.exact && sv.method == DPC_SENS_BOUND_TREE_LEVELS && sv.value >= sqrt(4 * 17.0) &&
              sv.value <= 17.0 * 4,
          "tree n=1e5 k=4 level bound %g", sv.value);
    dpc_mech_free(m);
}

/* Error: O(n) formulas vs dense A B. */
static void test_error(void)
{
    dpc_error err = {0};
    dpc_workload wls[] = {{0.0, 1.0}, {0.9, 1.0}, {0.5, 0.98}};
    for (size_t k = 0; k < NSPECS; k++)
        for (size_t w = 0; w < 3; w++) {
            size_t n = 97;
            dpc_mech *m = make(&specs[k], n);
            if (!m) continue;
            size_t rows = dpc_mech_noise_rows(m);
            double *B = malloc(n * rows * sizeof *B);
            CHECK_OK(dpc_mech_dense_noising(m, B, &err), &err);
            /* workload matrix: A_{t,s} = a_{t-s}, a_q = sum_{u=0}^{q} decay^u momentum^(q-u) */
            double *aq = malloc(n * sizeof *aq);
            for (size_t q = 0; q < n; q++) {
                aq[q] = 0;
                for (size_t u = 0; u <= q; u++)
                    aq[q] += pow(wls[w].decay, (double)u) * pow(wls[w].momentum, (double)(q - u));
            }
            double tot = 0, mx = 0;
            for (size_t t = 0; t < n; t++) {
                double rowsq = 0;
                for (size_t r = 0; r < rows; r++) {
                    double acc = 0;
                    for (size_t s = 0; s <= t; s++) acc += aq[t - s] * B[s * rows + r];
                    rowsq += acc * acc;
                }
                tot += rowsq;
                if (rowsq > mx) mx = rowsq;
            }
            dpc_mech_error e;
            CHECK_OK(dpc_mech_error_of(m, &wls[w], &e, &err), &err);
            CHECK_NEAR_REL(e.rmse, sqrt(tot / n), 1e-9, "%s workload %zu rmse", specs[k].name, w);
            CHECK_NEAR_REL(e.max_error, sqrt(mx), 1e-9, "%s workload %zu max", specs[k].name, w);
            free(aq);
            free(B);
            dpc_mech_free(m);
        }
}

static double sens_sq(dpc_mech *m, size_t k, size_t b)
{
    dpc_participation part = {DPC_PART_MINSEP, k, b};
    dpc_sensitivity sv;
    dpc_error err = {0};
    CHECK_OK(dpc_mech_sensitivity(m, &part, &sv, &err), &err);
    return sv.value * sv.value;
}

static void test_known_values(void)
{
    dpc_error err = {0};
    /* gamma_inf^2 = (2/pi) K(1 - nu): note table (section 3.3) */
    double nus[] = {0.5, 0.1, 0.05, 0.01, 0.005, 0.001, 1e-4};
    double g2[] = {1.0731820, 1.4518427, 1.6488524, 2.1368783, 2.3535038, 2.8619856, 3.5938130};
    for (int i = 0; i < 7; i++) {
        spec s = {.name = "nu", .kind = DPC_MECH_NU, .nu = nus[i]};
        dpc_mech *m = make(&s, 10);
        double g;
        CHECK_OK(dpc_mech_limit_sensitivity(m, &g, &err), &err);
        CHECK_NEAR_ABS(g * g, g2[i], 2e-7, "gamma_inf^2 at nu = %g", nus[i]);
        dpc_mech_free(m);
    }
    /* series check of the closed form: partial sums approach it from below */
    {
        spec s = {.name = "nu", .kind = DPC_MECH_NU, .nu = 0.1};
        dpc_mech *m = make(&s, 2000);
        double g, part = sens_sq(m, 1, 1);
        CHECK_OK(dpc_mech_limit_sensitivity(m, &g, &err), &err);
        CHECK_NEAR_REL(part, g * g, 1e-12, "nu=0.1: sum c_t^2 over 2000 terms = gamma_inf^2");
        CHECK_NEAR_ABS(g * g, 1.4518, 1e-4, "acceptance: nu = 0.1 gives 1.4518");
        dpc_mech_free(m);
    }
    /* nu = 0: gamma_T^2 exact values (note 3.3) */
    size_t Ts[] = {1, 2, 10, 100, 1000, 2000, 2052, 10000};
    double gT[] = {1, 1.25, 1.791344, 2.531352, 3.2650, 3.485678, 3.493850, 3.998010};
    double tol[] = {1e-15, 1e-15, 1e-6, 1e-6, 1e-4, 1e-6, 1e-6, 1e-6};
    for (int i = 0; i < 8; i++) {
        spec s = {.name = "nu0", .kind = DPC_MECH_NU, .nu = 0};
        dpc_mech *m = make(&s, Ts[i]);
        CHECK_NEAR_ABS(sens_sq(m, 1, 1), gT[i], tol[i], "nu=0 gamma_T^2 at T = %zu", Ts[i]);
        dpc_mech_free(m);
    }
    /* nu = 0, n = 1e5: scaled max error within 2% of 1 + ln(n)/pi */
    {
        spec s = {.name = "nu0", .kind = DPC_MECH_NU, .nu = 0};
        size_t n = 100000;
        dpc_mech *m = make(&s, n);
        dpc_mech_error e;
        CHECK_OK(dpc_mech_error_of(m, NULL, &e, &err), &err);
        double scaled = sqrt(sens_sq(m, 1, 1)) * e.max_error, ref = 1 + log((double)n) / M_PI;
        CHECK(fabs(scaled / ref - 1) < 0.02, "nu=0 n=1e5 scaled max error %g vs %g", scaled, ref);
        dpc_mech_free(m);
    }
    /* L / T^2 = gamma_T^2 ||A B||_F^2 / T^2 at T = 2000 (note 3.4 table; DP-SGD 0.50025) */
    {
        double nus2[] = {0, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1};
        double LT[] = {0.005521, 0.005447, 0.005381, 0.005584, 0.007093, 0.013126, 0.028742,
                       0.073685};
        size_t T = 2000;
        for (int i = 0; i < 8; i++) {
            spec s = {.name = "nu", .kind = DPC_MECH_NU, .nu = nus2[i]};
            dpc_mech *m = make(&s, T);
            dpc_mech_error e;
            CHECK_OK(dpc_mech_error_of(m, NULL, &e, &err), &err);
            double L = sens_sq(m, 1, 1) * e.rmse * e.rmse * (double)T / ((double)T * T);
            CHECK_NEAR_ABS(L, LT[i], 1.5e-6, "L/T^2 at nu = %g", nus2[i]);
            dpc_mech_free(m);
        }
        spec s = {.name = "sgd", .kind = DPC_MECH_IDENTITY};
        dpc_mech *m = make(&s, T);
        dpc_mech_error e;
        CHECK_OK(dpc_mech_error_of(m, NULL, &e, &err), &err);
        CHECK_NEAR_REL(e.rmse * e.rmse / (double)T, 0.50025, 1e-12, "DP-SGD L/T^2");
        dpc_mech_free(m);
    }
    /* anti-PGD gamma_T^2 = T; damped gamma_inf^2 = 1/(nu(2-nu)); sums of beta and c */
    {
        spec s = {.name = "apgd", .kind = DPC_MECH_ANTIPGD, .nu = 0};
        dpc_mech *m = make(&s, 500);
        CHECK_NEAR_REL(sens_sq(m, 1, 1), 500.0, 1e-14, "anti-PGD gamma_T^2 = T");
        dpc_mech_free(m);
        spec s2 = {.name = "apgd", .kind = DPC_MECH_ANTIPGD, .nu = 0.1};
        m = make(&s2, 10);
        double g;
        CHECK_OK(dpc_mech_limit_sensitivity(m, &g, &err), &err);
        CHECK_NEAR_REL(g * g, 1.0 / (0.1 * 1.9), 1e-14, "damped anti-PGD gamma_inf^2");
        dpc_mech_free(m);
        spec s3 = {.name = "nu", .kind = DPC_MECH_NU, .nu = 0.05};
        size_t n = 4000;
        m = make(&s3, n);
        double *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c), sb = 0, sc = 0, l1 = 0;
        CHECK_OK(dpc_mech_noising_coeffs(m, b, n, &err), &err);
        CHECK_OK(dpc_mech_strategy_coeffs(m, c, n, &err), &err);
        for (size_t t = 0; t < n; t++) {
            sb += b[t];
            sc += c[t];
            l1 += fabs(b[t]);
        }
        CHECK_NEAR_REL(sb, sqrt(0.05), 1e-9, "sum beta = sqrt(nu)");
        CHECK_NEAR_REL(sc, 1 / sqrt(0.05), 1e-9, "sum c = 1/sqrt(nu)");
        CHECK(l1 <= 2.0, "||beta||_1 <= 2");
        CHECK_NEAR_ABS(b[1], -0.475, 1e-15, "beta_1 at nu=0.05");
        CHECK_NEAR_ABS(b[2], -0.1128125, 1e-15, "beta_2 at nu=0.05");
        CHECK_NEAR_ABS(b[5], -0.02115807, 1e-8, "beta_5 at nu=0.05");
        free(b);
        free(c);
        dpc_mech_free(m);
    }
    /* limit sensitivity: closed forms and quadrature vs long series */
    {
        const spec *chk[] = {&specs[9], &specs[10], &specs[11], &specs[14], &specs[5], &specs[7]};
        for (int i = 0; i < 6; i++) {
            size_t n = 200000;
            dpc_mech *m = make(chk[i], n);
            double g;
            CHECK_OK(dpc_mech_limit_sensitivity(m, &g, &err), &err);
            CHECK_NEAR_REL(g * g, sens_sq(m, 1, 1), 1e-9, "%s: gamma_inf vs sum of 2e5 terms",
                           chk[i]->name);
            dpc_mech_free(m);
        }
    }
    /* tree: single sensitivity^2 = 1 + floor(log2 n); plain error row t = popcount(t+1) */
    {
        spec s = {.name = "tree", .kind = DPC_MECH_TREE};
        dpc_mech *m = make(&s, 1024);
        CHECK_NEAR_REL(sens_sq(m, 1, 1), 11.0, 1e-15, "tree n=1024 sens^2 = 11");
        dpc_mech_error e;
        CHECK_OK(dpc_mech_error_of(m, NULL, &e, &err), &err);
        CHECK_NEAR_REL(e.max_error * e.max_error, 10.0, 1e-15, "tree max error^2 = max popcount");
        CHECK_NEAR_REL(e.rmse * e.rmse, (5120.0 + 1) / 1024.0, 1e-12, "tree mean popcount");
        dpc_mech_free(m);
        spec h = {.name = "tree", .kind = DPC_MECH_TREE, .honaker = 1};
        m = make(&h, 1024);
        dpc_mech_error eh;
        CHECK_OK(dpc_mech_error_of(m, NULL, &eh, &err), &err);
        CHECK(eh.rmse < e.rmse && eh.max_error < e.max_error, "Honaker beats the plain tree");
        dpc_mech_free(m);
    }
}

static void test_invalid(void)
{
    dpc_error err = {0};
    dpc_mech *m = NULL;
    dpc_mech_params p;
    struct { dpc_mech_kind kind; double nu, lambda; size_t bands, steps; const char *what; } bad[] = {
        {DPC_MECH_NU, 1.0, 0, 0, 10, "nu"},         {DPC_MECH_NU, -0.1, 0, 0, 10, "nu"},
        {DPC_MECH_NU, NAN, 0, 0, 10, "nu"},         {DPC_MECH_LCGD, 0, 1.5, 0, 10, "lambda"},
        {DPC_MECH_BSR, 0, 0, 0, 10, "bands"},       {DPC_MECH_IDENTITY, 0, 0, 0, 0, "steps"},
        {DPC_MECH_BLT, 0, 0, 0, 10, "nbuf"},        {DPC_MECH_TOEPLITZ, 0, 0, 0, 10, "coeffs"},
        {DPC_MECH_DENSE, 0, 0, 0, 5000, "steps"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dpc_mech_params_init(&p);
        p.kind = bad[i].kind;
        p.nu = bad[i].nu;
        p.lambda = bad[i].lambda;
        p.bands = bad[i].bands;
        p.steps = bad[i].steps;
        err.msg[0] = 0;
        dpc_status st = dpc_mech_new(&m, &p, &err);
        CHECK(st != DPC_OK && m == NULL && strstr(err.msg, bad[i].what) &&
                  !strcmp(err.field, bad[i].what),
              "bad %s rejected naming '%s': %s", dpc_mech_kind_name(bad[i].kind), bad[i].what,
              err.msg);
    }
    double th[1] = {1.2}, om[1] = {0.5};
    dpc_mech_params_init(&p);
    p.kind = DPC_MECH_BLT;
    p.steps = 10;
    p.nbuf = 1;
    p.theta = th;
    p.omega = om;
    CHECK(dpc_mech_new(&m, &p, &err) == DPC_E_INVALID && !strcmp(err.field, "theta") && strstr(err.msg, "entry 0"),
          "theta out of range: %s", err.msg);
    { /* the entries' range is theta's row (the CLI's --theta reads it): (0, 1) */
        const dpc_field *ft = dpc_field_find(dpc_mech_params_fields(), "theta", NULL);
        char want[96];
        dpc_field_format_range(ft, want, sizeof want);
        CHECK(!strcmp(want, "in (0, 1)") && strstr(err.msg, want), "theta's row range '%s': %s",
              want, err.msg);
        double edge[3] = {0.0, 1.0, 0.999999};
        for (int i = 0; i < 3; i++) {
            th[0] = edge[i];
            dpc_status st = dpc_mech_new(&m, &p, &err);
            CHECK(i < 2 ? st == DPC_E_INVALID && !strcmp(err.field, "theta") : st == DPC_OK,
                  "theta %g: %s", edge[i], st ? err.msg : "accepted");
            dpc_mech_free(m);
            m = NULL;
        }
    }
    double co[2] = {0.0, 1.0};
    dpc_mech_params_init(&p);
    p.kind = DPC_MECH_TOEPLITZ;
    p.steps = 10;
    p.ncoeffs = 2;
    p.coeffs = co;
    CHECK(dpc_mech_new(&m, &p, &err) == DPC_E_INVALID && !strcmp(err.field, "coeffs") && strstr(err.msg, "entry 0"),
          "zero leading coefficient: %s", err.msg);
    double dn[4] = {1, 0.5, 0, 1};
    dpc_mech_params_init(&p);
    p.kind = DPC_MECH_DENSE;
    p.steps = 2;
    p.dense = dn;
    CHECK(dpc_mech_new(&m, &p, &err) == DPC_E_INVALID && strstr(err.msg, "above the diagonal"),
          "upper entry rejected: %s", err.msg);
    dpc_mech_kind k;
    CHECK(dpc_mech_kind_parse("bogus", &k, &err) == DPC_E_INVALID && strstr(err.msg, "bogus"),
          "unknown kind named");
    spec s = {.name = "bsr", .kind = DPC_MECH_BSR, .bands = 4};
    m = make(&s, 10);
    dpc_rng_stream st = test_stream(3);
    dpc_noise_config cfg = {0, 4, DPC_NOISE_REPLAY, 0, DPC_ISA_AUTO};
    dpc_noise *g = NULL;
    CHECK(dpc_noise_new(&g, m, &st, &cfg, &err) == DPC_E_UNSUPPORTED && g == NULL,
          "BSR has no replay form: %s", err.msg);
    dpc_participation part = {DPC_PART_MINSEP, 0, 1};
    dpc_sensitivity sv;
    CHECK(dpc_mech_sensitivity(m, &part, &sv, &err) == DPC_E_INVALID, "k = 0 rejected");
    dpc_workload w = {1.0, 1.0};
    dpc_mech_error e;
    CHECK(dpc_mech_error_of(m, &w, &e, &err) == DPC_E_INVALID && strstr(err.msg, "momentum"),
          "momentum 1 rejected");
    dpc_mech_free(m);
    dpc_mech_free(NULL);
    dpc_noise_free(NULL);
}

/* A min-separation beyond every step (up to SIZE_MAX) is one participation: the same sensitivity
 * as k = 1, never a division by zero or a wrapped ceil(n / b) (issue 19, SIGFPE in the tree). */
static void test_huge_separation(void)
{
    dpc_error err = {0};
    dpc_mech_kind kinds[] = {DPC_MECH_TREE, DPC_MECH_NU, DPC_MECH_IDENTITY, DPC_MECH_BSR};
    size_t bs[] = {51, (size_t)1 << 40, SIZE_MAX - 1, SIZE_MAX};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        dpc_mech_params p;
        dpc_mech_params_init(&p);
        p.kind = kinds[i];
        p.steps = 50;
        p.nu = 0.1;
        p.bands = 4;
        dpc_mech *m = NULL;
        CHECK_OK(dpc_mech_new(&m, &p, &err), &err);
        if (!m) continue;
        dpc_participation one = {DPC_PART_MINSEP, 1, 1};
        dpc_sensitivity s1, s;
        CHECK_OK(dpc_mech_sensitivity(m, &one, &s1, &err), &err);
        for (size_t j = 0; j < sizeof bs / sizeof bs[0]; j++)
            for (int cyc = 0; cyc < 2; cyc++) {
                dpc_participation part = {cyc ? DPC_PART_CYCLIC : DPC_PART_MINSEP, 7, bs[j]};
                CHECK_OK(dpc_mech_sensitivity(m, &part, &s, &err), &err);
                CHECK(s.k_effective == 1 && s.value == s1.value,
                      "%s b = %zu: k_eff %zu, sens %g vs single %g", dpc_mech_kind_name(kinds[i]),
                      bs[j], s.k_effective, s.value, s1.value);
            }
        dpc_mech_free(m);
    }
}

/* Bounded work (issue 19): the FFT quadrature of gamma_inf agrees with the direct reference on
 * odd lengths; computations beyond DPC_WORK_LIMIT are refused up front, naming the parameter. */
static void test_work_limits(void)
{
    dpc_error err = {0};
    size_t Ls[] = {1, 3, 17, 101, 1001};
    for (size_t i = 0; i < sizeof Ls / sizeof Ls[0]; i++) {
        size_t L = Ls[i];
        double *b = malloc(L * sizeof *b);
        b[0] = 1.0;
        for (size_t l = 1; l < L; l++) /* 1 - 0.6 x + a decaying, sign-changing tail */
            b[l] = l == 1 ? -0.6 : 0.2 * ((l % 3) ? 1.0 : -1.0) / ((double)l * (double)l);
        double gf = 0, gn = 0;
        CHECK_OK(dpc__limit_poly(b, L, &gf, &err), &err);
        CHECK_OK(dpc__limit_poly_naive(b, L, &gn, &err), &err);
        CHECK_NEAR_REL(gf, gn, 1e-12, "limit quadrature: FFT vs direct at L = %zu", L);
        free(b);
    }
    /* a zero on the unit circle (1 - x): divergence in both forms */
    double one_minus_x[2] = {1.0, -1.0}, g = 0;
    CHECK_OK(dpc__limit_poly(one_minus_x, 2, &g, &err), &err);
    CHECK(isinf(g), "1 - x: gamma_inf = inf (FFT), got %g", g);
    /* a 30000-term B (the coefficient file) now takes milliseconds */
    {
        size_t L = 30000;
        double *b = calloc(L, sizeof *b);
        b[0] = 1.0;
        b[1] = -0.5;
        for (size_t l = 2; l < L; l++) b[l] = 0.3 / ((double)l * (double)l);
        CHECK_OK(dpc__limit_poly(b, L, &g, &err), &err);
        CHECK(g > 1.0 && isfinite(g), "30000 coefficients: gamma_inf %g", g);
        free(b);
    }
    /* BSR with a million bands over 1e7 steps: refused before any allocation, naming bands */
    dpc_mech_params p;
    dpc_mech_params_init(&p);
    p.kind = DPC_MECH_BSR;
    p.steps = 10000000;
    p.bands = 1000000;
    dpc_mech *m = NULL;
    dpc_error e2 = {0};
    CHECK(dpc_mech_new(&m, &p, &e2) == DPC_E_RANGE && !strcmp(e2.field, "bands") &&
              strstr(e2.msg, "work limit"),
          "bsr 1e6 bands x 1e7 steps refused: %s", e2.msg);
    dpc_mech_free(m);
    /* sensitivity with n k beyond the limit: refused naming part.k */
    dpc_mech_params_init(&p);
    p.kind = DPC_MECH_NU;
    p.nu = 0.01;
    p.steps = 2000000;
    m = NULL;
    CHECK_OK(dpc_mech_new(&m, &p, &err), &err);
    if (m) {
        dpc_participation part = {DPC_PART_MINSEP, 4000, 1};
        dpc_sensitivity sv;
        /* n k = 8e9: answered by the O(n) prefix-sum form (issue 25: no participation
         * search is refused for a Toeplitz C >= 0), exact method, and above k = 40's value */
        CHECK_OK(dpc_mech_sensitivity(m, &part, &sv, &err), &err);
        double big = sv.value;
        CHECK(sv.exact && isfinite(big), "n = 2e6, k = 4000: exact, finite (%g)", big);
        part.k = 40;
        CHECK_OK(dpc_mech_sensitivity(m, &part, &sv, &err), &err);
        CHECK(big > sv.value, "k = 4000 (%g) above k = 40 (%g)", big, sv.value);
        dpc_mech_free(m);
    }
}

/* The band-aware shifted sums equal the reference bit for bit; the prefix-sum form agrees to
 * rounding (relative 1e-13) on random c >= 0 (seeded), banded and full, every b and k. The
 * identity's k-participation sensitivity is sqrt(k) for any n (1e5 steps x 1e5
 * participations: answered, no work limit). */
static void test_shifted_sums(void)
{
    uint64_t s = 12345;
    for (int trial = 0; trial < 40; trial++) {
        size_t n = 50 + (size_t)(trial * 37 % 400), L = trial % 3 == 0 ? n - 1 : (size_t)trial % 9;
        double *c = calloc(n, sizeof *c);
        for (size_t t = 0; t <= L && t < n; t++) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            c[t] = (double)(s >> 11) * 0x1.0p-53 / (1.0 + (double)t);
        }
        size_t b = 1 + (size_t)trial % 5, k = 1 + (size_t)(trial * 13) % 60;
        double ref = dpc__shifted_sum_sq_naive(c, n, k, b, 0);
        double fast = dpc__shifted_sum_sq(c, n, k, b, 0), pre = NAN;
        CHECK(fast == ref, "trial %d: band-aware %.17g == reference %.17g", trial, fast, ref);
        CHECK(dpc__shifted_sum_sq_prefix(c, n, k, b, &pre) && fabs(pre - ref) <= 1e-13 * ref,
              "trial %d (n %zu, L %zu, b %zu, k %zu): prefix %.17g vs %.17g", trial, n, L, b, k,
              pre, ref);
        for (size_t t0 = 1; t0 < 4; t0++)
            CHECK(dpc__shifted_sum_sq(c, n, k, b, t0) == dpc__shifted_sum_sq_naive(c, n, k, b, t0),
                  "trial %d t0 %zu bit-identical", trial, t0);
        free(c);
    }
    dpc_mech_params p;
    dpc_mech_params_init(&p); /* identity */
    p.steps = 100000;
    dpc_mech *m = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_mech_new(&m, &p, &err), &err);
    if (m) {
        dpc_participation part = {DPC_PART_CYCLIC, 100000, 1};
        dpc_sensitivity sv;
        CHECK_OK(dpc_mech_sensitivity(m, &part, &sv, &err), &err);
        CHECK(sv.exact && fabs(sv.value - sqrt(100000.0)) <= 1e-12 * sqrt(100000.0),
              "identity, 1e5 participations: sqrt(k) (%.17g)", sv.value);
        dpc_mech_free(m);
    }
}

/* dpc_noise_config_init: every coordinate from 0, AUTO form and isa, default budget; a generator
 * built from it emits the rows of one built from the literal configuration. */
static void test_noise_config_init(void)
{
    dpc_noise_config a, lit = {0, 5, DPC_NOISE_AUTO, 0, DPC_ISA_AUTO};
    memset(&a, 0xff, sizeof a);
    dpc_noise_config_init(&a, 5);
    CHECK(a.coord0 == 0 && a.d == 5 && a.form == DPC_NOISE_AUTO && a.memory_budget == 0 &&
              a.isa == DPC_ISA_AUTO,
          "init values");
    dpc_mech_params p;
    dpc_mech_params_init(&p);
    p.kind = DPC_MECH_BSR;
    p.steps = 6;
    p.bands = 3;
    dpc_mech *m = NULL;
    dpc_error err = {0};
    CHECK_OK(dpc_mech_new(&m, &p, &err), &err);
    dpc_rng rng;
    dpc_rng_seed(&rng, 11);
    dpc_rng_stream st = dpc_rng_stream_derive(&rng, 1);
    dpc_noise *g1 = NULL, *g2 = NULL;
    CHECK_OK(dpc_noise_new(&g1, m, &st, &a, &err), &err);
    CHECK_OK(dpc_noise_new(&g2, m, &st, &lit, &err), &err);
    double r1[5], r2[5];
    for (size_t t = 0; g1 && g2 && t < 6; t++) {
        CHECK_OK(dpc_noise_next(g1, r1, &err), &err);
        CHECK_OK(dpc_noise_next(g2, r2, &err), &err);
        CHECK(!memcmp(r1, r2, sizeof r1), "step %zu: same rows", t);
    }
    dpc_noise_free(g1);
    dpc_noise_free(g2);
    dpc_mech_free(m);
}

int main(void)
{
    test_shifted_sums();
    test_noise_config_init();
    test_work_limits();
    test_huge_separation();
    test_streaming();
    test_inverse();
    test_covariance();
    test_sensitivity();
    test_error();
    test_known_values();
    test_invalid();
    free(dense_buf);
    return TEST_SUMMARY();
}
