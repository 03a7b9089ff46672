/* srgd_config.c — Accelerated-DP-SRGD configuration: defaults, the Regime A / B presets of the
 * paper (Eq. 19, Cor. 5.7; Lemma 5.9, Cor. 5.10, Thm. 5.12), the practical constant, the literal
 * constants and why they cannot run, the GDP calibration, and validation. */
#include "dpcorr/account.h"
#include "common/util.h"
#include "train/field_items.h"
#include "srgd/srgd_internal.h"

#include <math.h>
#include <string.h>

void dpc_srgd_config_init(dpc_srgd_config *c)
{
    dpc_field_defaults(dpc_srgd_config_fields(), c);
}

#define variant_names dpc__srgd_variant_names
#define noise_names dpc__srgd_noise_names

const char *dpc_srgd_variant_name(dpc_srgd_variant v)
{
    return (unsigned)v < 3 ? variant_names[v] : "unknown";
}

const char *dpc_srgd_noise_name(dpc_srgd_noise k)
{
    return (unsigned)k < 3 ? noise_names[k] : "unknown";
}

dpc_status dpc_srgd_variant_parse(const char *s, dpc_srgd_variant *out, dpc_error *err)
{
    for (int i = 0; i < 3; i++)
        if (s && !strcmp(s, variant_names[i])) {
            *out = (dpc_srgd_variant)i;
            return DPC_OK;
        }
    return dpc_error_param(err, DPC_E_INVALID, "variant", "unknown '%s' (accel, srg, accel-sgd)",
                         s ? s : "(null)");
}

dpc_status dpc_srgd_noise_parse(const char *s, dpc_srgd_noise *out, dpc_error *err)
{
    for (int i = 0; i < 3; i++)
        if (s && !strcmp(s, noise_names[i])) {
            *out = (dpc_srgd_noise)i;
            return DPC_OK;
        }
    return dpc_error_set(err, DPC_E_INVALID, "noise: unknown '%s' (tree, honaker, independent)",
                         s ? s : "(null)");
}

/* ceil(log2 T) for T >= 1 */
static unsigned ceil_log2(size_t T)
{
    unsigned k = 0;
    while (k < 64 && ((size_t)1 << k) < T) k++;
    return k;
}

double dpc_srgd_c_dp(double n, double delta)
{
    if (!(n >= 2) || !(delta > 0 && delta < 1)) return NAN;
    /* Eq. 19: c_DP = 4 sqrt(2) log^(3/2)(n) sqrt(ln(2n/delta)) ln(2.5/delta); log base 2 in the
     * first factor (the note's 3.95e4 at n = 1e6, delta = 1e-6 needs it; ln would give 2.3e4). */
    double l2 = log2(n);
    return 4.0 * sqrt(2.0) * l2 * sqrt(l2) * sqrt(log(2.0 * n / delta)) * log(2.5 / delta);
}

double dpc_srgd_literal_min_n(double delta)
{
    if (!(delta > 0 && delta < 1)) return NAN;
    /* n^(3/4) >= c_DP(n): iterate n <- c_DP(n)^(4/3); c_DP grows polylogarithmically, so the map
     * is a contraction in log n and converges from below. */
    double n = 16.0;
    for (int i = 0; i < 200; i++) {
        double next = pow(dpc_srgd_c_dp(n, delta), 4.0 / 3.0);
        if (fabs(next - n) <= 1e-12 * n) break;
        n = next;
    }
    return ceil(n);
}

dpc_status dpc_srgd_mu(double epsilon, double delta, dpc_calibration rule, double *mu,
                       dpc_error *err)
{
    if (!(epsilon > 0))
        return dpc_error_param(err, DPC_E_INVALID, "epsilon", "must be > 0 (INFINITY: non-private), "
                                                 "got %g", epsilon);
    if (isinf(epsilon)) {
        *mu = INFINITY;
        return DPC_OK;
    }
    if (epsilon > DPC__SCALE_MAX) /* mu ~ sqrt(2 epsilon): its square and the ledger overflow */
        return dpc_error_param(err, DPC_E_RANGE, "epsilon",
                               "%g overflows the GDP conversion (at most 1e150; INFINITY: "
                               "non-private)", epsilon);
    if (!(delta > 0 && delta < 1))
        return dpc_error_param(err, DPC_E_INVALID, "delta", "must be in (0, 1), got %g", delta);
    dpc_status st;
    if (rule == DPC_CALIBRATION_ACCOUNTANT) st = dpc_gdp_mu_for(epsilon, delta, mu, err);
    else if (rule == DPC_CALIBRATION_PAPER) st = dpc_account_srgd_mu_paper(epsilon, delta, mu, err);
    else return dpc_error_param(err, DPC_E_INVALID, "calibration", "unknown value %d", (int)rule);
    return st;
}

double dpc_srgd_lemma59_bound(double M, double L, double diam, double b_max)
{
    return 2.0 * (M * b_max + 2.0 * M * diam + L);
}

static dpc_status preset_common_check(const dpc_srgd_config *c, size_t n, size_t p,
                                      dpc_error *err)
{
    if (!(c->L > 0) || !isfinite(c->L))
        return dpc_error_param(err, DPC_E_INVALID, "L", "the Lipschitz constant must be > 0 and "
                                                 "finite, got %g", c->L);
    if (!(c->M > 0) || !isfinite(c->M))
        return dpc_error_param(err, DPC_E_INVALID, "M", "the smoothness must be > 0 and finite, "
                                                 "got %g", c->M);
    if (!(c->R > 0) || !isfinite(c->R))
        return dpc_error_param(err, DPC_E_INVALID, "R", "the presets need a finite radius > 0, "
                                                 "got %g", c->R);
    if (n == 0) return dpc_error_param(err, DPC_E_INVALID, "n", "must be >= 1");
    if (p == 0) return dpc_error_param(err, DPC_E_INVALID, "p", "must be >= 1");
    return DPC_OK;
}

dpc_status dpc__srgd_delta(const dpc_srgd_config *c, size_t n, double *delta, int *derived,
                           dpc_error *err)
{
    return dpc_account_resolve_delta(c->delta, n, c->allow_large_delta || isinf(c->epsilon),
                                     delta, derived, err);
}

double dpc_srgd_preset_constant(const dpc_srgd_config *c, dpc_srgd_regime regime, double cc,
                                int literal, size_t n, double delta, const char **label)
{
    const char *lb = "practical c =";
    double v = cc;
    if (regime == DPC_SRGD_REGIME_B) {
        lb = "paper constants, c_M =";
        v = c->M * c->R / c->L;
    } else if (literal) {
        lb = "literal c_DP =";
        v = dpc_srgd_c_dp((double)n, delta);
    }
    if (label) *label = lb;
    return v;
}

static size_t ceil_pos(double v)
{
    double r = ceil(v - 1e-9 * fmax(1.0, v)); /* n = T^4 gives T, not T + 1 */
    return r < 1 ? 1 : r > 1e18 ? (size_t)1e18 : (size_t)r;
}

dpc_status dpc_srgd_preset(dpc_srgd_config *c, dpc_srgd_regime regime, double cc, int literal,
                           size_t n, size_t p, dpc_error *err)
{
    dpc_status st = preset_common_check(c, n, p, err);
    if (st) return st;
    double mu, delta;
    if ((st = dpc__srgd_delta(c, n, &delta, NULL, err))) return st;
    if ((st = dpc_srgd_mu(c->epsilon, delta, c->calibration, &mu, err))) return st;
    int priv = isfinite(mu);
    double dn = (double)n, L = c->L, M = c->M, R = c->R;
    if (regime == DPC_SRGD_REGIME_B) {
        /* Lemma 5.9 / Cor. 5.10 / Thm. 5.12 with B = sqrt n */
        size_t B = (size_t)floor(sqrt(dn));
        if (B < 1) B = 1;
        while ((B + 1) * (B + 1) <= n) B++; /* exact integer square root */
        while (B * B > n) B--;
        double cM = dpc_srgd_preset_constant(c, regime, cc, literal, n, delta, NULL);
        c->batch = B;
        c->steps = n / B;
        c->beta = (16.0 * cM + 8.0) * L * dn * sqrt(dn) / (R * (double)B * (double)B);
        c->clip = (8.0 * cM + 4.0) * L;
        return DPC_OK;
    }
    if (regime != DPC_SRGD_REGIME_A)
        return dpc_error_param(err, DPC_E_INVALID, "regime", "unknown value %d", (int)regime);
    if (literal) {
        double cdp = dpc_srgd_preset_constant(c, regime, cc, literal, n, delta, NULL);
        if (!isfinite(cdp))
            return dpc_error_param(err, DPC_E_INVALID, "n", "the literal constants need n >= 2 and "
                                                     "delta in (0, 1)");
        double Tl = cdp * pow(dn, 0.25);
        if (Tl > dn)
            return dpc_error_set(
                err, DPC_E_UNSUPPORTED,
                "regime A literal: c_DP = %.4g (n = %zu, delta = %g) gives T = c_DP n^(1/4) = "
                "%.4g rounds > n = %zu examples, i.e. a batch B = n/T = %.3g < 1; the literal "
                "constants need n >= %.3g (n^(3/4) >= c_DP(n)); use the practical constant c",
                cdp, n, delta, Tl, n, dn / Tl, dpc_srgd_literal_min_n(delta));
        size_t T = ceil_pos(Tl);
        if (T > n) T = n;
        c->steps = T;
        c->batch = n / T;
        c->clip = cdp * L;
        double ratio = priv ? sqrt((double)p) / (c->epsilon * sqrt(dn)) : 0.0;
        c->beta = cdp * cdp * L * fmax(1.0, ratio) / R;
        return DPC_OK;
    }
    if (!(cc > 0) || !isfinite(cc))
        return dpc_error_param(err, DPC_E_INVALID, "c", "the practical constant must be > 0 and "
                                                 "finite, got %g", cc);
    size_t T = ceil_pos(cc * pow(dn, 0.25));
    if (T > n) T = n;
    c->steps = T;
    c->batch = n / T;
    c->clip = cc * L;
    double lev = 1.0 + (double)ceil_log2(T);
    double ratio = priv ? sqrt(lev * (double)p) / (mu * sqrt(dn)) : 0.0;
    c->beta = fmax(M, cc * cc * L / R * fmax(1.0, ratio));
    if (!isfinite(c->beta) || !isfinite(c->clip)) /* the constant, not the derived values, is at fault */
        return dpc_error_param(err, DPC_E_RANGE, "c", "the practical constant %g overflows the "
                               "preset (clip %g, beta %g)", cc, c->clip, c->beta);
    return DPC_OK;
}

double dpc_srgd_optimization_term(const dpc_srgd_plan *p, double R)
{
    if (!p || p->steps == 0) return NAN;
    return p->beta * R * R / ((double)p->steps * (double)p->steps);
}

const char *dpc_srgd_default_model(const dpc_dataset *ds)
{
    return ds && ds->n_classes == 2 ? "logistic" : "linear";
}

dpc_status dpc_srgd_data_constants(const dpc_model_config *mc, double x_norm_bound, double R,
                                   double y_bound, double *L, double *M, dpc_error *err)
{
    if (*L > 0 && *M > 0) return DPC_OK;
    double X = x_norm_bound;
    if (!(X > 0))
        return dpc_error_param(err, DPC_E_INVALID, "x_norm_bound",
                               "the data has no public row-norm bound");
    double Xb2 = X * X + (mc->bias ? 1.0 : 0.0);
    if (mc->kind == DPC_MODEL_LOGISTIC) {
        if (!(*L > 0)) *L = sqrt(Xb2); /* |(sigmoid(z) - y) (x, 1)| */
        if (!(*M > 0)) *M = Xb2 / 4.0;
    } else if (mc->kind == DPC_MODEL_LINEAR) {
        if (!(y_bound > 0))
            return dpc_error_param(err, DPC_E_INVALID, "y_bound",
                                   "linear regression needs a public bound on |y| for L");
        if (!(*L > 0)) *L = sqrt(Xb2) * (sqrt(Xb2) * R + y_bound);
        if (!(*M > 0)) *M = Xb2;
    } else {
        return dpc_error_param(err, DPC_E_UNSUPPORTED, "model",
                               "L and M are derived for logistic and linear models only");
    }
    /* derived from public bounds: an overflow is the bound's fault (1e150: squares stay finite) */
    if (!(*L <= 1e150) || !(*M <= 1e150))
        return dpc_error_param(err, DPC_E_RANGE, y_bound > X ? "y_bound" : "x_norm_bound",
                               "the derived constants L = %g, M = %g overflow (at most 1e150)",
                               *L, *M);
    return DPC_OK;
}

double dpc_srgd_mu_at_beta_ratio(size_t n, size_t p, double cc, double k)
{
    size_t T = ceil_pos(cc * pow((double)n, 0.25));
    if (T > n) T = n;
    double lev = 1.0 + (double)ceil_log2(T);
    return sqrt(lev * (double)p / (double)n) / k;
}

dpc_status dpc_srgd_config_check(const dpc_srgd_config *c, size_t n, dpc_error *err)
{
    if (!c) return dpc_error_set(err, DPC_E_INVALID, "config: NULL");
    /* the constants and the schedule must be set (0 = unset, dpc_srgd_preset fills the
     * schedule); then every field within its range */
    if (c->L == 0) return dpc_error_param(err, DPC_E_INVALID, "L", "must be > 0 and finite, got 0");
    if (c->M == 0) return dpc_error_param(err, DPC_E_INVALID, "M", "must be > 0 and finite, got 0");
    if (c->R == 0)
        return dpc_error_param(err, DPC_E_INVALID, "R", "must be > 0 (INFINITY: unconstrained), "
                                                 "got 0");
    if (c->steps == 0) return dpc_error_param(err, DPC_E_INVALID, "steps", "must be >= 1, got 0");
    if (c->batch == 0) return dpc_error_param(err, DPC_E_INVALID, "batch", "must be >= 1, got 0");
    if (c->beta == 0) return dpc_error_param(err, DPC_E_INVALID, "beta", "must be > 0, got 0");
    dpc_status st = dpc_field_check(dpc_srgd_config_fields(), c, err);
    if (st) return st;
    if (c->batch > n || c->steps > n / c->batch)
        return dpc_error_param(err, DPC_E_INVALID, "batch",
                             "B T = %zu x %zu exceeds the %zu examples (a single epoch uses "
                             "each example once)",
                             c->batch, c->steps, n);
    double mu, delta;
    if ((st = dpc__srgd_delta(c, n, &delta, NULL, err))) return st;
    if ((st = dpc_srgd_mu(c->epsilon, delta, c->calibration, &mu, err))) return st;
    if (!(c->clip > 0))
        return dpc_error_param(err, DPC_E_INVALID, "clip", "C_Delta must be > 0, got %g", c->clip);
    /* the paper's constants enter squared (step sizes, the noise scale, the risk): larger ones
     * overflow to inf or NaN (issue 28) */
    const struct { const char *name; double v; } scale[] = {
        {"L", c->L}, {"M", c->M}, {"R", c->R}, {"beta", c->beta}, {"clip", c->clip}};
    for (size_t i = 0; i < sizeof scale / sizeof scale[0]; i++)
        if (isfinite(scale[i].v) && scale[i].v > DPC__SCALE_MAX)
            return dpc_error_param(err, DPC_E_RANGE, scale[i].name,
                                   "%g overflows: must be at most 1e150", scale[i].v);
    if (isfinite(mu) && !isfinite(c->clip))
        return dpc_error_param(err, DPC_E_INVALID, "clip", "must be finite for a private run (the "
                                                 "sensitivity is C_Delta/B)");
    if (c->eval_every && !c->risk && !c->heldout)
        return dpc_error_param(err, DPC_E_INVALID, "eval_every", "needs a risk hook or a held-out "
                                                 "set");
    return DPC_OK;
}
