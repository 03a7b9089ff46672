/* report.c — the report sections of a projected DP-lambda-CGD run (dpcorr/papers/kan.h): the
 * run's configuration, noise and metrics and, for the paper's KAN, its theory constants and
 * bounds, so that every front end reports them the same way. */
#include "dpcorr/io.h"
#include "dpcorr/papers/kan.h"

void dpc_kan_lcgd_result_json(struct dpc_json_writer *w, const dpc_kan_lcgd_result *res)
{
    dpc_json_num(w, "avg_train_loss", res->avg_train_loss);
    dpc_json_num(w, "avg_train_err", res->avg_train_err);
    dpc_json_num(w, "avg_test_loss", res->avg_test_loss);
    dpc_json_num(w, "avg_test_err", res->avg_test_err);
    dpc_json_num(w, "last_train_loss", res->last_train_loss);
    dpc_json_num(w, "last_train_err", res->last_train_err);
    dpc_json_num(w, "last_test_loss", res->last_test_loss);
    dpc_json_num(w, "last_test_err", res->last_test_err);
    dpc_json_num(w, "init_train_loss", res->init_train_loss);
    dpc_json_num(w, "max_dist", res->max_dist);
    dpc_json_num(w, "last_dist", res->last_dist);
    dpc_json_int(w, "projections", (long long)res->projections);
    dpc_json_int(w, "clipped", (long long)res->clipped);
    dpc_json_int(w, "examples", (long long)res->examples);
    dpc_json_int(w, "evaluated", (long long)res->evaluated);
}

void dpc_kan2_theory_report_json(struct dpc_json_writer *w, const dpc_kan_margin *mg,
                                 const dpc_kan_consts *kc, const dpc_kan2_bounds *b)
{
    dpc_json_obj(w, "theory");
    dpc_json_num(w, "gamma_lo", mg->gamma_lo);
    dpc_json_num(w, "gamma_hi", mg->gamma_hi);
    dpc_json_num(w, "G_delta", kc->G_delta);
    dpc_json_num(w, "G_c", kc->G_c);
    dpc_json_num(w, "beta", kc->beta);
    dpc_json_num(w, "eta_max", kc->eta_max);
    dpc_json_bool(w, "init_event_ok", kc->event_ok);
    dpc_json_num(w, "A_corr_unit", b->A_corr);
    dpc_json_num(w, "A_van_unit", b->A_van);
    dpc_json_num(w, "A_non_unit", b->A_non);
    dpc_json_num(w, "width_m_lo", b->m_lo);
    dpc_json_num(w, "width_m_hi", b->m_hi);
    dpc_json_num(w, "width_m_edge", b->m_edge);
    dpc_json_end(w);
}

void dpc_kan_run_config_report_json(struct dpc_json_writer *w, const dpc_kan_run_config *c,
                                    size_t T, dpc_noise_form form)
{
    dpc_json_int(w, "iterates", (long long)T);
    dpc_json_int(w, "batch", (long long)c->batch);
    dpc_json_num(w, "eta", c->lr);
    dpc_json_num(w, "clip", c->clip);
    dpc_json_num(w, "lambda", c->privacy.lambda);
    dpc_json_num(w, "radius", c->radius);
    dpc_json_int(w, "eval_every", (long long)c->eval_every);
    dpc_json_str(w, "noise_form", dpc_noise_form_name(form));
}

void dpc_kan_run_noise_report_json(struct dpc_json_writer *w, double noise_std,
                                   const dpc_kan_lcgd_result *res, size_t T)
{
    dpc_json_obj(w, "noise");
    dpc_json_num(w, "noise_std_per_unit_clip", noise_std);
    dpc_json_num(w, "noise_scale_c_priv", res->noise_scale);
    dpc_json_int(w, "noisy_steps", (long long)(T - 1));
    dpc_json_end(w);
}
