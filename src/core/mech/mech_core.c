/* mech_core.c — mechanism parameters, validation and construction: the coefficients of the
 * strategy C and the noising matrix B = C^-1 for every kind (see dpcorr/mech.h). */
#include "common/util.h"
#include "field/field_def.h"
#include "mech/mech_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DENSE_MAX 4096
#define BLT_MAX_BUFFERS 32

static const char *const kind_names[DPC_MECH_KIND_COUNT] = {
    "identity", "nu", "antipgd", "lcgd", "bsr", "bisr", "blt", "tree", "toeplitz", "dense"};

const char *dpc_mech_kind_name(dpc_mech_kind kind)
{
    return (unsigned)kind < DPC_MECH_KIND_COUNT ? kind_names[kind] : "unknown";
}

dpc_status dpc_mech_kind_parse(const char *name, dpc_mech_kind *out, dpc_error *err)
{
    for (int k = 0; k < DPC_MECH_KIND_COUNT; k++)
        if (name && strcmp(name, kind_names[k]) == 0) {
            *out = (dpc_mech_kind)k;
            return DPC_OK;
        }
    return dpc_error_param(err, DPC_E_INVALID, "name",
                           "unknown mechanism '%s' (expected identity, nu, antipgd, lcgd, bsr, "
                           "bisr, blt, tree, toeplitz or dense)",
                           name ? name : "(null)");
}

#define MP(m) DPC_FIELD_AT(dpc_mech_params, m)
#define ONE_OPEN (DPC_FIELD_HI_OPEN)
/* The parameters of every kind; a field applies only to the kinds its doc names, and
 * dpc_mech_params_check range-checks exactly those (DPC_FIELD_OWN_CHECK where nested). */
static const dpc_field mech_fields[] = {
    {.name = "kind", .label = "mechanism",
     .type = DPC_FIELD_ENUM, MP(kind), .def = DPC_MECH_IDENTITY,
     DPC_FIELD_NAMES(kind_names), .doc = "the mechanism (dpc_mech_kind); identity = DP-SGD"},
    {.name = "steps", .label = "steps",
     .type = DPC_FIELD_SIZE, MP(steps), .lo = 1, .hi = 1099511627776.0,
     .flags = DPC_FIELD_UNSET_ZERO, .def_text = "the run's steps",
     .doc = "n, the number of steps (rows of the workload), at most 2^40; must be set (a "
            "training run sets it to epochs x steps per epoch)"},
    {.name = "nu", .label = "nu",
     .type = DPC_FIELD_DOUBLE, MP(nu), .lo = 0, .hi = 1, .flags = ONE_OPEN,
     .doc = "nu: the damping of nu-DP-FTRL; antipgd: the damping of anti-PGD (0 = undamped)"},
    {.name = "lambda", .label = "lambda",
     .type = DPC_FIELD_DOUBLE, MP(lambda), .lo = 0, .hi = 1,
     .doc = "lcgd: lambda of the bidiagonal B (1, -lambda)"},
    {.name = "bands", .label = "bands",
     .type = DPC_FIELD_SIZE, MP(bands), .lo = 1, .hi = INFINITY,
     .flags = DPC_FIELD_UNSET_ZERO | DPC_FIELD_HI_OPEN,
     .def_text = "the run's default bands",
     .doc = "bsr, bisr: number of bands; 0 in a training run: dpc_mech_default_bands"},
    {.name = "momentum", .label = "workload momentum",
     .type = DPC_FIELD_DOUBLE, MP(momentum), .lo = 0, .hi = 1,
     .flags = ONE_OPEN, .doc = "bsr, bisr: workload momentum m (0 = plain prefix sums)"},
    {.name = "decay", .label = "workload decay",
     .type = DPC_FIELD_DOUBLE, MP(decay), .def = 1, .lo = 0, .hi = 1,
     .flags = DPC_FIELD_LO_OPEN, .doc = "bsr, bisr: workload decay factor a (1 = no weight decay)"},
    {.name = "honaker", .label = "Honaker estimator",
     .type = DPC_FIELD_BOOL, MP(honaker),
     .doc = "tree: 1 = the Honaker efficient estimator, 0 = plain prefix-sum noise"},
    {.name = "nbuf", .type = DPC_FIELD_SIZE, MP(nbuf), .lo = 1, .hi = BLT_MAX_BUFFERS,
     .flags = DPC_FIELD_UNSET_ZERO | DPC_FIELD_UNRECORDED, /* recorded with theta, omega */
     .def_text = "the run's default BLT",
     .doc = "blt: number of buffers of theta and omega; 0 in a training run: the default BLT"},
    {.name = "theta", .label = "BLT theta", /* lo, hi: the range of each entry */
     .type = DPC_FIELD_POINTER, MP(theta), .lo = 0, .hi = 1,
     .flags = DPC_FIELD_LO_OPEN | DPC_FIELD_HI_OPEN,
     .doc = "blt: (nbuf) buffer decays of C, each in (0, 1)"},
    {.name = "omega", .label = "BLT omega",
     .type = DPC_FIELD_POINTER, MP(omega),
     .doc = "blt: (nbuf) output scales of C, finite"},
    {.name = "ncoeffs", .type = DPC_FIELD_SIZE, MP(ncoeffs),
     .flags = DPC_FIELD_NO_RANGE | DPC_FIELD_UNRECORDED, /* recorded with coeffs */
     .doc = "toeplitz: number of coefficients given (>= 1); zero beyond them"},
    {.name = "coeffs", .label = "Toeplitz coefficients",
     .type = DPC_FIELD_POINTER, MP(coeffs),
     .doc = "toeplitz: (ncoeffs) first column, finite, coeffs[0] != 0"},
    {.name = "dense", .label = "dense matrix",
     .type = DPC_FIELD_POINTER, MP(dense),
     .doc = "dense: (steps x steps) row-major lower-triangular matrix, n <= 4096"},
    {.name = "coeffs_of_strategy", .label = "coefficients of C (not B)",
     .type = DPC_FIELD_BOOL, MP(coeffs_of_strategy),
     .doc = "toeplitz, dense: 0 = the values are B (noising), 1 = C (strategy)"},
};
#undef MP
#undef ONE_OPEN
const dpc_field_table dpc__mech_params_table = DPC_FIELD_TABLE(dpc_mech_params, mech_fields);

const dpc_field_table *dpc_mech_params_fields(void) { return &dpc__mech_params_table; }

void dpc_mech_params_init(dpc_mech_params *p)
{
    dpc_field_defaults(&dpc__mech_params_table, p);
}

/* The range check of one parameter the kind uses (the table's range). */
static dpc_status check_param(const dpc_mech_params *p, const char *name, dpc_error *err)
{
    const dpc_field *f = dpc_field_find(&dpc__mech_params_table, name, NULL);
    return dpc_field_check_value(f, "", dpc_field_get(f, p), err);
}

/* The range check of entry i of an array parameter (its row's lo, hi: theta's (0, 1)). */
static dpc_status check_entry(double v, const char *name, size_t i, dpc_error *err)
{
    const dpc_field *f = dpc_field_find(&dpc__mech_params_table, name, NULL);
    char range[96];
    if (dpc_field_check_value(f, "", v, NULL) == DPC_OK) return DPC_OK;
    dpc_field_format_range(f, range, sizeof range);
    return dpc_error_param(err, DPC_E_INVALID, name, "entry %zu must be %s, got %g", i, range, v);
}

/* The manual of dpc_participation, one row per field in struct order (dpcorr/mech.h); every
 * struct that holds a pattern nests it, and dpc_mech_sensitivity range-checks through it. */
#define PT(m) DPC_FIELD_AT(dpc_participation, m)
static const char *const part_names[] = {"min-sep", "cyclic"};
static const dpc_field part_fields[] = {
    {.name = "kind", .type = DPC_FIELD_ENUM, PT(kind), .def = DPC_PART_MINSEP,
     DPC_FIELD_NAMES(part_names), .doc = "min-sep (at most k, b apart) or cyclic (period b)"},
    {.name = "k", .type = DPC_FIELD_SIZE, PT(k), .def = 1, .lo = 1, .hi = INFINITY,
     .flags = DPC_FIELD_HI_OPEN, .doc = "max participations of one example"},
    {.name = "b", .type = DPC_FIELD_SIZE, PT(b), .def = 1, .lo = 1, .hi = INFINITY,
     .flags = DPC_FIELD_HI_OPEN, .doc = "min-separation / period in steps"},
};
#undef PT
const dpc_field_table dpc__participation_table = DPC_FIELD_TABLE(dpc_participation, part_fields);

const dpc_field_table *dpc_participation_fields(void) { return &dpc__participation_table; }

void dpc_participation_init(dpc_participation *p)
{
    if (!p) return;
    dpc_field_defaults(&dpc__participation_table, p); /* single participation */
}

/* The manual of dpc_workload (dpcorr/mech.h): dpc_mech_error_of and the strategy problems
 * (dpc_strategy_problem.workload) range-check through it. */
#define WL(m) DPC_FIELD_AT(dpc_workload, m)
static const dpc_field wl_fields[] = {
    {.name = "momentum", .type = DPC_FIELD_DOUBLE, WL(momentum), .lo = 0, .hi = 1,
     .flags = DPC_FIELD_HI_OPEN, .doc = "workload momentum m (0 = prefix sums)"},
    {.name = "decay", .type = DPC_FIELD_DOUBLE, WL(decay), .def = 1, .lo = 0, .hi = 1,
     .flags = DPC_FIELD_LO_OPEN, .doc = "workload decay factor a (1 = no weight decay)"},
};
#undef WL
const dpc_field_table dpc__workload_table = DPC_FIELD_TABLE(dpc_workload, wl_fields);

const dpc_field_table *dpc_workload_fields(void) { return &dpc__workload_table; }

size_t dpc_mech_default_bands(size_t steps, size_t participations, size_t min_sep)
{
    size_t bands = participations > 1 ? (min_sep > 16 ? min_sep : 16) : 32;
    size_t bmax = steps ? (size_t)(2e8 / (double)steps) : 0;
    if (bmax < 16) bmax = 16;
    if (bands > bmax) bands = bmax;
    return bands < steps ? bands : steps;
}


dpc_status dpc_mech_params_check(const dpc_mech_params *p, dpc_error *err)
{
    if (!p) return dpc_error_param(err, DPC_E_INVALID, "params", "NULL");
    if ((unsigned)p->kind >= DPC_MECH_KIND_COUNT)
        return dpc_error_param(err, DPC_E_INVALID, "kind", "unknown mechanism kind %d", (int)p->kind);
    if (p->steps == 0) return dpc_error_param(err, DPC_E_INVALID, "steps", "must be >= 1");
    if (p->steps > ((size_t)1 << 40))
        return dpc_error_param(err, DPC_E_RANGE, "steps", "%zu is beyond the supported 2^40", p->steps);
    dpc_status st = DPC_OK;
    switch (p->kind) {
    case DPC_MECH_IDENTITY: break;
    case DPC_MECH_NU:
    case DPC_MECH_ANTIPGD: st = check_param(p, "nu", err); break;
    case DPC_MECH_LCGD: st = check_param(p, "lambda", err); break;
    case DPC_MECH_BSR:
    case DPC_MECH_BISR:
        if (p->bands == 0) return dpc_error_param(err, DPC_E_INVALID, "bands", "must be >= 1");
        st = check_param(p, "momentum", err);
        if (!st) st = check_param(p, "decay", err);
        break;
    case DPC_MECH_BLT:
        if (p->nbuf == 0 || p->nbuf > BLT_MAX_BUFFERS) /* the table's range, in its words */
            return dpc_error_param(err, DPC_E_INVALID, "nbuf", "need 1..%d buffers, got %zu",
                                   BLT_MAX_BUFFERS, p->nbuf);
        if (!p->theta || !p->omega)
            return dpc_error_param(err, DPC_E_INVALID, p->theta ? "omega" : "theta",
                                   "missing (BLT needs theta and omega)");
        for (size_t i = 0; i < p->nbuf; i++) {
            if (check_entry(p->theta[i], "theta", i, err)) return DPC_E_INVALID;
            if (!isfinite(p->omega[i]))
                return dpc_error_param(err, DPC_E_INVALID, "omega", "entry %zu is not finite", i);
        }
        break;
    case DPC_MECH_TREE: break;
    case DPC_MECH_TOEPLITZ:
        if (p->ncoeffs == 0 || !p->coeffs)
            return dpc_error_param(err, DPC_E_INVALID, "coeffs", "need at least one coefficient");
        for (size_t i = 0; i < p->ncoeffs; i++)
            if (!isfinite(p->coeffs[i]))
                return dpc_error_param(err, DPC_E_INVALID, "coeffs", "entry %zu is not finite", i);
        if (p->coeffs[0] == 0.0)
            return dpc_error_param(err, DPC_E_INVALID, "coeffs",
                                   "entry 0 must be non-zero (the matrix must be invertible)");
        break;
    case DPC_MECH_DENSE:
        if (p->steps > DENSE_MAX)
            return dpc_error_param(err, DPC_E_RANGE, "steps", "dense mechanisms support n <= %d, got %zu",
                                 DENSE_MAX, p->steps);
        if (!p->dense) return dpc_error_param(err, DPC_E_INVALID, "dense", "missing matrix");
        for (size_t t = 0; t < p->steps; t++) {
            const double *row = p->dense + t * p->steps;
            for (size_t j = 0; j < p->steps; j++) {
                if (!isfinite(row[j]))
                    return dpc_error_param(err, DPC_E_INVALID, "dense", "entry [%zu][%zu] is not finite", t, j);
                if (j > t && row[j] != 0.0)
                    return dpc_error_param(err, DPC_E_INVALID, "dense",
                                         "entry [%zu][%zu] above the diagonal must be 0", t, j);
            }
            if (row[t] == 0.0)
                return dpc_error_param(err, DPC_E_INVALID, "dense",
                                     "entry [%zu][%zu] on the diagonal is 0 (not invertible)", t, t);
        }
        break;
    default: break;
    }
    return st;
}

void dpc_mech_free(dpc_mech *m)
{
    if (!m) return;
    free(m->theta);
    free(m->omega);
    free(m->coeffs_in);
    free(m->dense_in);
    free(m->bcoef);
    free(m->ccoef);
    free(m->Bd);
    free(m->Cd);
    free(m);
}

static double *dup_array(const double *a, size_t n)
{
    double *r = dpc__malloc_array(n, sizeof *r);
    if (r) memcpy(r, a, n * sizeof *r);
    return r;
}

/* Inverts a lower-triangular n x n matrix by forward substitution, column by column:
 * L X = I. O(n^3 / 6). Returns 0 on a non-finite result. */
static int lower_inverse(double *X, const double *L, size_t n)
{
    memset(X, 0, n * n * sizeof *X);
    for (size_t j = 0; j < n; j++) {
        X[j * n + j] = 1.0 / L[j * n + j];
        for (size_t i = j + 1; i < n; i++) {
            double acc = 0.0;
            for (size_t k = j; k < i; k++) acc += L[i * n + k] * X[k * n + j];
            X[i * n + j] = -acc / L[i * n + i];
            if (!isfinite(X[i * n + j])) return 0;
        }
    }
    return 1;
}

/* The work of build_toeplitz (DPC_WORK_LIMIT): n per coefficient array, n x nbuf for BLT, the
 * reciprocal series n x L for BSR, BISR and Toeplitz (L bands or coefficients) and the workload
 * root L^2 with momentum. */
static dpc_status toeplitz_work(const dpc_mech_params *p, size_t n, dpc_error *err)
{
    double nd = (double)n;
    switch (p->kind) {
    case DPC_MECH_BSR:
    case DPC_MECH_BISR: {
        double L = (double)(p->bands < n ? p->bands : n);
        return dpc__work_check(nd * L + (p->momentum != 0.0 ? L * L : 0.0) + 8.0 * nd, "bands",
                               "the inverse of the banded series (steps x bands)", err);
    }
    case DPC_MECH_TOEPLITZ: {
        double L = (double)(p->ncoeffs < n ? p->ncoeffs : n);
        return dpc__work_check(nd * L + 8.0 * nd, "coeffs",
                               "the inverse series (steps x coefficients)", err);
    }
    case DPC_MECH_BLT:
        return dpc__work_check(nd * (8.0 + 4.0 * (double)p->nbuf), "steps",
                               "the BLT coefficients (steps x buffers)", err);
    default:
        return dpc__work_check(16.0 * nd, "steps", "the Toeplitz coefficients", err);
    }
}

/* BLT Toeplitz coefficients: c_0 = 1, c_j = sum_i omega_i theta_i^(j-1) (Dvijotham et al.
 * 2024); b = C^-1 via the output recursion x_t = z_t - sum_i omega_i s_i,
 * s_i <- theta_i s_i + x_t applied to an impulse (the recursion the streaming generator runs). */
static dpc_status blt_coefficients(const dpc_mech_params *p, size_t n, double *b, double *c,
                                   dpc_error *err)
{
    size_t k = p->nbuf;
    double pw[BLT_MAX_BUFFERS], s[BLT_MAX_BUFFERS];
    for (size_t i = 0; i < k; i++) {
        pw[i] = 1.0;
        s[i] = 0.0;
    }
    c[0] = 1.0;
    for (size_t t = 1; t < n; t++) {
        double acc = 0.0;
        for (size_t i = 0; i < k; i++) {
            acc += p->omega[i] * pw[i];
            pw[i] *= p->theta[i];
        }
        c[t] = acc;
    }
    for (size_t t = 0; t < n; t++) {
        double x = t == 0 ? 1.0 : 0.0;
        for (size_t i = 0; i < k; i++) x -= p->omega[i] * s[i];
        for (size_t i = 0; i < k; i++) s[i] = p->theta[i] * s[i] + x;
        b[t] = x;
        if (!isfinite(x))
            return dpc_error_set(err, DPC_E_NUMERIC,
                                 "blt: C^-1 overflows at step %zu (unstable inverse; check "
                                 "theta/omega)", t);
    }
    return DPC_OK;
}

/* Fills m->bcoef / m->ccoef (length n) and the supports for Toeplitz kinds. */
static dpc_status build_toeplitz(dpc_mech *m, dpc_error *err)
{
    const dpc_mech_params *p = &m->p;
    size_t n = m->n;
    dpc_status st = toeplitz_work(p, n, err);
    if (st) return st;
    m->bcoef = dpc__calloc(n, sizeof(double));
    m->ccoef = dpc__calloc(n, sizeof(double));
    if (!m->bcoef || !m->ccoef) return DPC__NOMEM(err, "Toeplitz coefficients");
    double *b = m->bcoef, *c = m->ccoef;
    m->engine = ENGINE_FIR;
    switch (p->kind) {
    case DPC_MECH_IDENTITY:
        b[0] = c[0] = 1.0;
        m->b_len = m->c_len = 1;
        break;
    case DPC_MECH_NU: {
        /* beta_t = (-1)^t binom(1/2, t) (1 - nu)^t; c_t = binom(2t, t)/4^t (1 - nu)^t
         * (nu-DP-FTRL paper eq. 7; note sections 3.1-3.2). */
        dpc__series_sqrt1mx(b, n, +1);
        dpc__series_sqrt1mx(c, n, -1);
        double q = 1.0 - p->nu, pw = 1.0;
        for (size_t t = 0; t < n; t++) {
            b[t] *= pw;
            c[t] *= pw;
            pw *= q;
        }
        m->b_len = m->c_len = n;
        break;
    }
    case DPC_MECH_ANTIPGD:
    case DPC_MECH_LCGD: {
        /* B bidiagonal (1, -lam); C_t = lam^t. anti-PGD: lam = 1 - nu (Orvieto et al. 2022);
         * lambda-CGD: lam = lambda (KAN paper, xi_t = kappa (Z_t - lambda Z_{t-1})). */
        double lam = p->kind == DPC_MECH_LCGD ? p->lambda : 1.0 - p->nu, pw = 1.0;
        b[0] = 1.0;
        if (n > 1) b[1] = -lam;
        for (size_t t = 0; t < n; t++) {
            c[t] = pw;
            pw *= lam;
        }
        m->b_len = n > 1 ? 2 : 1;
        m->c_len = lam == 0.0 ? 1 : n;
        break;
    }
    case DPC_MECH_BSR: {
        /* C = first `bands` coefficients of W^(1/2), W = 1/((1 - a x)(1 - m x)); B = C^-1. */
        size_t L = p->bands < n ? p->bands : n;
        if (!dpc__series_workload_root(c, L, p->decay, p->momentum, -1))
            return DPC__NOMEM(err, "BSR coefficients");
        if (!dpc__series_reciprocal(b, n, c, L))
            return dpc_error_set(err, DPC_E_NUMERIC, "bsr: the inverse of the banded strategy "
                                                     "overflows at n = %zu", n);
        m->c_len = L;
        m->b_len = n;
        m->engine = ENGINE_IIR;
        break;
    }
    case DPC_MECH_BISR: {
        /* B = first `bands` coefficients of W^(-1/2); C = B^-1. */
        size_t L = p->bands < n ? p->bands : n;
        if (!dpc__series_workload_root(b, L, p->decay, p->momentum, +1))
            return DPC__NOMEM(err, "BISR coefficients");
        if (!dpc__series_reciprocal(c, n, b, L))
            return dpc_error_set(err, DPC_E_NUMERIC, "bisr: the strategy C = B^-1 overflows at "
                                                     "n = %zu", n);
        m->b_len = L;
        m->c_len = n;
        break;
    }
    case DPC_MECH_BLT: {
        if ((st = blt_coefficients(p, n, b, c, err))) return st;
        m->b_len = m->c_len = n;
        m->engine = ENGINE_BLT;
        break;
    }
    case DPC_MECH_TOEPLITZ: {
        size_t L = p->ncoeffs < n ? p->ncoeffs : n;
        double *given = p->coeffs_of_strategy ? c : b, *other = p->coeffs_of_strategy ? b : c;
        memcpy(given, p->coeffs, L * sizeof *given);
        while (L > 1 && given[L - 1] == 0.0) L--;
        if (!dpc__series_reciprocal(other, n, given, L))
            return dpc_error_set(err, DPC_E_NUMERIC,
                                 "toeplitz: the inverse series overflows within n = %zu steps", n);
        if (p->coeffs_of_strategy) {
            m->c_len = L;
            m->b_len = n;
            m->engine = ENGINE_IIR;
        } else {
            m->b_len = L;
            m->c_len = n;
        }
        break;
    }
    default: break;
    }
    return DPC_OK;
}

dpc_status dpc_mech_new(dpc_mech **out, const dpc_mech_params *p, dpc_error *err)
{
    *out = NULL;
    dpc_status st = dpc_mech_params_check(p, err);
    if (st) return st;
    dpc_mech *m = calloc(1, sizeof *m);
    if (!m) return DPC__NOMEM(err, "mechanism");
    m->p = *p;
    m->n = p->steps;
    if (p->kind == DPC_MECH_BLT) {
        m->theta = dup_array(p->theta, p->nbuf);
        m->omega = dup_array(p->omega, p->nbuf);
        if (!m->theta || !m->omega) goto nomem;
        m->p.theta = m->theta;
        m->p.omega = m->omega;
    } else {
        m->p.theta = m->p.omega = NULL;
        m->p.nbuf = 0;
    }
    if (p->kind == DPC_MECH_TOEPLITZ) {
        m->coeffs_in = dup_array(p->coeffs, p->ncoeffs);
        if (!m->coeffs_in) goto nomem;
        m->p.coeffs = m->coeffs_in;
    } else {
        m->p.coeffs = NULL;
        m->p.ncoeffs = 0;
    }
    if (p->kind == DPC_MECH_DENSE) {
        size_t n = m->n;
        m->dense_in = dup_array(p->dense, n * n);
        m->Bd = dpc__malloc_array(n * n, sizeof(double));
        m->Cd = dpc__malloc_array(n * n, sizeof(double));
        if (!m->dense_in || !m->Bd || !m->Cd) goto nomem;
        m->p.dense = m->dense_in;
        double *given = p->coeffs_of_strategy ? m->Cd : m->Bd;
        double *other = p->coeffs_of_strategy ? m->Bd : m->Cd;
        memcpy(given, p->dense, n * n * sizeof(double));
        if (!lower_inverse(other, given, n)) {
            dpc_mech_free(m);
            return dpc_error_set(err, DPC_E_NUMERIC, "dense: the inverse matrix overflows");
        }
        m->engine = ENGINE_DENSE;
    } else {
        m->p.dense = NULL;
    }
    if (p->kind == DPC_MECH_TREE) {
        m->engine = ENGINE_TREE;
    } else if (p->kind != DPC_MECH_DENSE) {
        st = build_toeplitz(m, err);
        if (st) {
            dpc_mech_free(m);
            return st;
        }
    }
    *out = m;
    return DPC_OK;
nomem:
    dpc_mech_free(m);
    return DPC__NOMEM(err, "mechanism parameters");
}

const dpc_mech_params *dpc_mech_get_params(const dpc_mech *m) { return &m->p; }
size_t dpc_mech_steps(const dpc_mech *m) { return m->n; }
size_t dpc_mech_noise_rows(const dpc_mech *m)
{
    return m->engine == ENGINE_TREE ? 2 * m->n : m->n;
}
int dpc_mech_is_toeplitz(const dpc_mech *m)
{
    return m->engine != ENGINE_TREE && m->engine != ENGINE_DENSE;
}
int dpc_mech_is_anytime(const dpc_mech *m) { return m->engine != ENGINE_DENSE; }

int dpc_mech_describe(const dpc_mech *m, char *buf, size_t len)
{
    const dpc_mech_params *p = &m->p;
    switch (p->kind) {
    case DPC_MECH_IDENTITY: return snprintf(buf, len, "DP-SGD (identity)");
    case DPC_MECH_NU:
        return p->nu == 0.0 ? snprintf(buf, len, "optimal CC / sqrt (nu=0)")
                            : snprintf(buf, len, "nu-DP-FTRL (nu=%g)", p->nu);
    case DPC_MECH_ANTIPGD:
        return p->nu == 0.0 ? snprintf(buf, len, "anti-PGD")
                            : snprintf(buf, len, "damped anti-PGD (nu=%g)", p->nu);
    case DPC_MECH_LCGD: return snprintf(buf, len, "lambda-CGD (lambda=%g)", p->lambda);
    case DPC_MECH_BSR:
    case DPC_MECH_BISR: {
        /* C has at most n bands: name the bands that run (--bands 1e12 on 16 steps: 16) */
        size_t bands = p->bands < m->n ? p->bands : m->n;
        if (p->momentum != 0.0 || p->decay != 1.0)
            return snprintf(buf, len, "%s (bands=%zu, momentum=%g, decay=%g)",
                            p->kind == DPC_MECH_BSR ? "BSR" : "BISR", bands, p->momentum,
                            p->decay);
        return snprintf(buf, len, "%s (bands=%zu)", p->kind == DPC_MECH_BSR ? "BSR" : "BISR",
                        bands);
    }
    case DPC_MECH_BLT: return snprintf(buf, len, "BLT (%zu buffers)", p->nbuf);
    case DPC_MECH_TREE:
        return snprintf(buf, len, p->honaker ? "tree (Honaker)" : "tree (binary)");
    case DPC_MECH_TOEPLITZ:
        return snprintf(buf, len, "Toeplitz (%zu coefficients of %s)", p->ncoeffs,
                        p->coeffs_of_strategy ? "C" : "B");
    case DPC_MECH_DENSE:
        return snprintf(buf, len, "dense (%s given)", p->coeffs_of_strategy ? "C" : "B");
    default: return snprintf(buf, len, "unknown");
    }
}

static dpc_status need_toeplitz(const dpc_mech *m, dpc_error *err)
{
    if (!dpc_mech_is_toeplitz(m))
        return dpc_error_set(err, DPC_E_UNSUPPORTED, "%s: not a Toeplitz mechanism",
                             dpc_mech_kind_name(m->p.kind));
    return DPC_OK;
}

/* Coefficients beyond n: closed forms where they exist, else recomputed series. */
static dpc_status coeffs_long(const dpc_mech *m, double *out, size_t len, int strategy,
                              dpc_error *err)
{
    dpc_mech_params q = m->p;
    q.steps = len;
    dpc_mech *big = NULL;
    dpc_status st = dpc_mech_new(&big, &q, err);
    if (st) return st;
    memcpy(out, strategy ? big->ccoef : big->bcoef, len * sizeof *out);
    dpc_mech_free(big);
    return DPC_OK;
}

dpc_status dpc_mech_strategy_coeffs(const dpc_mech *m, double *out, size_t len, dpc_error *err)
{
    dpc_status st = need_toeplitz(m, err);
    if (st) return st;
    if (len <= m->n) {
        memcpy(out, m->ccoef, len * sizeof *out);
        return DPC_OK;
    }
    return coeffs_long(m, out, len, 1, err);
}

dpc_status dpc_mech_noising_coeffs(const dpc_mech *m, double *out, size_t len, dpc_error *err)
{
    dpc_status st = need_toeplitz(m, err);
    if (st) return st;
    if (len <= m->n) {
        memcpy(out, m->bcoef, len * sizeof *out);
        return DPC_OK;
    }
    return coeffs_long(m, out, len, 0, err);
}

static dpc_status dense_limit(const dpc_mech *m, dpc_error *err)
{
    if (m->n > DENSE_MAX)
        return dpc_error_set(err, DPC_E_RANGE, "dense matrices need n <= %d, got %zu", DENSE_MAX,
                             m->n);
    return DPC_OK;
}

dpc_status dpc_mech_dense_noising(const dpc_mech *m, double *B, dpc_error *err)
{
    dpc_status st = dense_limit(m, err);
    if (st) return st;
    size_t n = m->n;
    if (m->engine == ENGINE_TREE) {
        if (!dpc__tree_dense_noising(m, B)) return DPC__NOMEM(err, "tree decoder");
        return DPC_OK;
    }
    if (m->engine == ENGINE_DENSE) {
        memcpy(B, m->Bd, n * n * sizeof *B);
        return DPC_OK;
    }
    for (size_t t = 0; t < n; t++)
        for (size_t s = 0; s < n; s++) B[t * n + s] = s <= t ? m->bcoef[t - s] : 0.0;
    return DPC_OK;
}

dpc_status dpc_mech_dense_strategy(const dpc_mech *m, double *C, dpc_error *err)
{
    dpc_status st = dense_limit(m, err);
    if (st) return st;
    size_t n = m->n;
    if (m->engine == ENGINE_TREE) {
        dpc__tree_dense_strategy(m, C);
        return DPC_OK;
    }
    if (m->engine == ENGINE_DENSE) {
        memcpy(C, m->Cd, n * n * sizeof *C);
        return DPC_OK;
    }
    for (size_t t = 0; t < n; t++)
        for (size_t s = 0; s < n; s++) C[t * n + s] = s <= t ? m->ccoef[t - s] : 0.0;
    return DPC_OK;
}
