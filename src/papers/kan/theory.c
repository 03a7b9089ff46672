/* theory.c — the constants and bounds of [KAN] with unit constants: G_delta, beta, eta_max and
 * the initialization event (Lemmas B.5-B.7), the projection radius R* (Thm. 4.1), the width
 * window, and the risk bounds A_corr (Thm. 4.1), A_van (Thm. D.14), A_non (Thm. E.1). The paper
 * hides absolute constants and polylog factors; these evaluators set them to 1 so that trends
 * in lambda, noise_std, m, n can be compared with measurements (note 004 §5, oracle 17). */
#include "common/util.h"
#include "kan/kan_internal.h"

#include <math.h>
#include <string.h>

dpc_status dpc_kan2_consts(const dpc_kan2 *k, double delta, dpc_kan_consts *out, dpc_error *err)
{
    if (!k || !out) return dpc_error_param(err, DPC_E_INVALID, "kan2_consts", "NULL argument");
    if (!(delta > 0 && delta < 1))
        return dpc_error_param(err, DPC_E_INVALID, "delta", "must be in (0, 1), got %g", delta);
    dpc_kan_spline_consts bc;
    dpc_kan_spline_constants(&k->basis, &bc);
    double Bs, Bs1, Bs2;
    dpc_kan_act_constants(k->cfg.act, &Bs, &Bs1, &Bs2);
    double p = (double)k->p, m = (double)k->cfg.m;
    double lip = Bs1 * bc.B * bc.B1 * p;
    /* DP-REQ: kan-g-delta: [KAN] Lemma B.6 eq. 5 */
    out->G_delta = lip * (4.0 * sqrt(p) + 2.0 * sqrt(log(2.0 / delta) / m));
    double cn = dpc__kan_norm(k->c, k->cfg.m * k->p), rmax = 0.0;
    for (size_t j = 0; j < k->cfg.m; j++) {
        double r = dpc__kan_norm(k->c + j * k->p, k->p);
        if (r > rmax) rmax = r;
    }
    out->c_norm = cn;
    out->c_row_max = rmax;
    out->G_c = lip * cn / sqrt(m);
    /* Lemma B.6 Hessian bound + Lemma B.7: beta bounds sup_x |f grad|^2/4 + ||hess f|| */
    double hess = bc.B * bc.B * (Bs2 * bc.B1 + Bs1 * Bs1 * bc.B2) * pow(p, 1.5) *
                  (4.0 * sqrt(p) + 2.0 * sqrt(log(2.0 * m / delta))) / sqrt(m);
    out->beta = 0.25 * out->G_delta * out->G_delta + hess;
    out->eta_max = 1.0 / (12.0 * out->beta);
    /* Lemma B.5: the event E_delta */
    out->event_ok = cn <= 4.0 * sqrt(p * m) + 2.0 * sqrt(log(2.0 / delta)) &&
                    rmax <= 4.0 * sqrt(p) + 2.0 * sqrt(log(2.0 * m / delta));
    return DPC_OK;
}

dpc_status dpc_kan_radius(double C_R, size_t T, size_t n, double delta, double gamma, double *R,
                          dpc_error *err)
{
    if (!R) return dpc_error_param(err, DPC_E_INVALID, "kan_radius", "NULL output");
    if (!(C_R > 0) || !(C_R <= DPC__SCALE_MAX)) /* larger: the radius overflows to none */
        return dpc_error_param(err, DPC_E_INVALID, "C_R", "must be in (0, 1e150], got %g", C_R);
    if (T < 1 || n < 1) return dpc_error_set(err, DPC_E_INVALID, "T and n must be >= 1");
    if (!(delta > 0 && delta < 1))
        return dpc_error_param(err, DPC_E_INVALID, "delta", "must be in (0, 1), got %g", delta);
    if (!(gamma > 0) || !isfinite(gamma))
        return dpc_error_param(err, DPC_E_INVALID, "gamma", "must be > 0, got %g", gamma);
    *R = C_R * (log((double)T) + sqrt(log((double)n / delta))) / gamma;
    return DPC_OK;
}

/* The table's ranges (dpc_kan_rate_in_fields), where 0 "must be set" is refused; delta only
 * where the bound reads it. */
static dpc_status check_rates(const dpc_kan_rate_in *r, int need_delta, dpc_error *err)
{
    if (!r) return dpc_error_param(err, DPC_E_INVALID, "rates", "NULL input");
    const dpc_field_table *t = dpc_kan_rate_in_fields();
    for (size_t i = 0; i < t->count; i++) {
        const dpc_field *f = &t->fields[i];
        if (!need_delta && !strcmp(f->name, "delta")) continue;
        double v = dpc_field_get(f, r);
        if ((f->flags & DPC_FIELD_UNSET_ZERO) && v == 0)
            return dpc_error_param(err, DPC_E_INVALID, f->name, "must be set (%s), got 0",
                                   f->type == DPC_FIELD_SIZE ? ">= 1" : "> 0");
        dpc_status st = dpc_field_check_value(f, "", v, err);
        if (st) return st;
    }
    return DPC_OK;
}

dpc_status dpc_kan_bound_corr(const dpc_kan_rate_in *r, double *A, dpc_error *err)
{
    dpc_status st = check_rates(r, 0, err);
    if (st) return st;
    if (!A) return dpc_error_param(err, DPC_E_INVALID, "bound", "NULL output");
    double g = r->gamma, e = r->eta, T = (double)r->T, B = (double)r->B, l = r->lambda;
    double md = (double)r->m * (double)r->d, k = r->noise_std;
    /* DP-REQ: kan-a-corr: [KAN] Thm. 4.1 (unit constants) */
    *A = 1.0 / (g * g * e * T) + 1.0 / (g * sqrt(B * T)) + e * (1.0 / B + 1.0 / T) +
         ((1.0 - l) * k / (B * sqrt(T))) * (1.0 / g + e * sqrt(md) / sqrt(B)) +
         ((1.0 - l) * (1.0 - l) + l * l * e) * e * k * k * md / (B * B);
    return DPC_OK;
}

dpc_status dpc_kan_bound_indep(const dpc_kan_rate_in *r, double *A, dpc_error *err)
{
    dpc_status st = check_rates(r, 1, err);
    if (st) return st;
    if (!A) return dpc_error_param(err, DPC_E_INVALID, "bound", "NULL output");
    double g = r->gamma, e = r->eta, T = (double)r->T, B = (double)r->B, k = r->noise_std;
    double md = (double)r->m * (double)r->d;
    double L = log(1.0 / r->delta), lT = log(T), ln = log((double)r->n / r->delta);
    /* DP-REQ: kan-a-van: [KAN] Thm. D.14 (unit constants) */
    *A = (lT * lT + ln) / (g * g * e * T) + L * (lT + sqrt(ln)) / (g * sqrt(B * T)) +
         L * (lT + sqrt(ln)) * k / (g * B * sqrt(T)) + e * L * (1.0 / B + L / T) +
         e * md * L * L * k * k / (B * B);
    return DPC_OK;
}

dpc_status dpc_kan_bound_nonpriv(const dpc_kan_rate_in *r, double *A, dpc_error *err)
{
    dpc_status st = check_rates(r, 0, err);
    if (st) return st;
    if (!A) return dpc_error_param(err, DPC_E_INVALID, "bound", "NULL output");
    double g = r->gamma, e = r->eta, T = (double)r->T, B = (double)r->B;
    /* DP-REQ: kan-a-non: [KAN] Thm. E.1 (unit constants) */
    *A = 1.0 / (g * g * e * T) + 1.0 / (g * sqrt(B * T)) + e / B;
    return DPC_OK;
}

dpc_status dpc_kan_width_window(const dpc_kan_rate_in *r, size_t p, double clip, double R,
                                dpc_kan_window *out, dpc_error *err)
{
    dpc_status st = check_rates(r, 0, err);
    if (st) return st;
    if (!out) return dpc_error_param(err, DPC_E_INVALID, "window", "NULL output");
    if (p < 1) return dpc_error_param(err, DPC_E_INVALID, "p", "must be >= 1");
    if (!(clip > 0)) return dpc_error_param(err, DPC_E_INVALID, "clip", "must be > 0, got %g", clip);
    if (!(R > 0)) return dpc_error_param(err, DPC_E_INVALID, "R", "must be > 0, got %g", R);
    double g = r->gamma, e = r->eta, T = (double)r->T, B = (double)r->B, l = r->lambda;
    double k = r->noise_std, d = (double)r->d;
    out->m_lo = 1.0 / (g * g * g * g);
    if (k == 0) {
        out->m_hi = out->m_edge = INFINITY;
        return DPC_OK;
    }
    double fac = T * ((1.0 - l) * (1.0 - l) + l * l * e);
    /* DP-REQ: kan-width-window: [KAN] Thm. 4.1 upper width limit (unit constants) */
    out->m_hi = B * B / (e * e * k * k * g * g * d) * (fac > 1.0 ? 1.0 / fac : 1.0);
    /* E||sum of the T-1 noise increments||^2 = eta^2 c^2 d p m (1 + (1-l)^2 (T-2)) (oracle 8) */
    double c = clip * k / B, walk = 1.0 + (1.0 - l) * (1.0 - l) * (T >= 2 ? T - 2.0 : 0.0);
    out->m_edge = R * R / (d * (double)p * e * e * c * c * walk);
    return DPC_OK;
}
