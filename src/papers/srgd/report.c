/* report.c — the report sections of a DP-SRGD run (dpcorr/papers/srgd.h): the resolved
 * configuration and schedule, the paper's privacy quantities and the rounds' telemetry, so that
 * every front end reports them the same way. */
#include "dpcorr/io.h"
#include "dpcorr/papers/srgd.h"

void dpc_srgd_config_report_json(struct dpc_json_writer *w, const dpc_srgd_config *c,
                                 const dpc_srgd_plan *p, dpc_srgd_regime regime, double cc,
                                 int literal, size_t n)
{
    dpc_json_str(w, "regime", regime == DPC_SRGD_REGIME_B ? "B" : "A");
    /* regime A's constant (c_DP or cc; regime B has none: cc, 0) */
    dpc_json_num(w, "c", dpc_srgd_preset_constant(c, DPC_SRGD_REGIME_A, cc, literal, n, c->delta,
                                                  NULL));
    dpc_json_bool(w, "literal", literal);
    dpc_json_str(w, "variant", dpc_srgd_variant_name(c->variant));
    dpc_json_str(w, "noise", dpc_srgd_noise_name(c->noise));
    dpc_json_num(w, "L", c->L);
    dpc_json_num(w, "M", c->M);
    dpc_json_num(w, "R", c->R);
    dpc_json_int(w, "steps", (long long)p->steps);
    dpc_json_int(w, "batch", (long long)p->batch);
    dpc_json_num(w, "beta", p->beta);
    dpc_json_num(w, "clip_delta", p->clip);
    dpc_json_num(w, "z_step", p->z_step);
    dpc_json_bool(w, "permute", c->permute);
}

void dpc_srgd_plan_report_json(struct dpc_json_writer *w, const dpc_srgd_plan *p)
{
    dpc_json_obj(w, "privacy_paper");
    dpc_json_bool(w, "private", p->private_run);
    dpc_json_num(w, "mu", p->mu);
    dpc_json_num(w, "mu_effective", p->mu_effective);
    dpc_json_num(w, "delta_achieved", p->delta_achieved);
    dpc_json_num(w, "sigma_S", p->sigma);
    dpc_json_num(w, "sensitivity_formula", p->sens_formula);
    dpc_json_num(w, "sensitivity_mechanism", p->sens_mechanism);
    dpc_json_end(w);
}

void dpc_srgd_steps_report_json(struct dpc_json_writer *w, const dpc_srgd_step_info *trace,
                                size_t T)
{
    dpc_json_arr(w, "steps");
    for (size_t t = 0; t < T; t++) {
        const dpc_srgd_step_info *i = &trace[t];
        dpc_json_obj(w, NULL);
        dpc_json_int(w, "t", (long long)i->step);
        dpc_json_num(w, "max_delta_norm", i->max_norm);
        dpc_json_num(w, "clip_fraction", i->clip_fraction);
        dpc_json_num(w, "noise_norm", i->noise_norm);
        dpc_json_num(w, "b_norm", i->b_norm);
        dpc_json_num(w, "grad_norm", i->grad_norm);
        dpc_json_num(w, "srg_error", i->srg_error);
        dpc_json_num(w, "batch_loss", i->loss);
        dpc_json_num(w, "risk", i->risk);
        dpc_json_end(w);
    }
    dpc_json_end(w);
}
