/* report.c — the report sections of a linear-regression run (dpcorr/papers/linreg.h): the plan
 * with its public inputs and their sources, the paper's privacy quantities and the theory's
 * preconditions, so that every front end reports them the same way. */
#include "dpcorr/io.h"
#include "dpcorr/papers/linreg.h"

void dpc_linreg_plan_report_json(struct dpc_json_writer *w, const dpc_linreg_plan *P,
                                 const dpc_linreg_opts *o, const char *const src[7])
{
    dpc_json_obj(w, "plan");
    dpc_json_int(w, "steps", (long long)P->steps);
    dpc_json_int(w, "batch", (long long)P->batch);
    dpc_json_int(w, "stat_batch", (long long)P->stat_batch);
    dpc_json_int(w, "tail_start", (long long)P->tail_start);
    dpc_json_int(w, "unused_records", (long long)P->unused);
    dpc_json_num(w, "eta", P->eta);
    dpc_json_num(w, "clip", P->clip);
    dpc_json_num(w, "clip_scale", P->clip_scale);
    dpc_json_num(w, "domain_B", P->domain);
    dpc_json_int(w, "dpstat_k", (long long)P->dpstat_k);
    dpc_json_num(w, "dpstat_delta", P->dpstat_delta);
    dpc_json_num(w, "dpstat_margin_gamma", P->dpstat_margin);
    dpc_json_str(w, "dpstat_rule", dpc_dpstat_rule_name(P->dpstat_rule));
    dpc_json_str(w, "calibration", dpc_calibration_name(o->calibration));
    dpc_json_end(w);
    /* the prior's fields in their order; the report's name of `a` says what it is */
    const dpc_field_table *t = dpc_linreg_prior_fields();
    const char *const name[7] = {"h_norm", "kappa", "r_x", "k2", "tail_a", "w_bound",
                                 "sigma_bound"};
    dpc_json_obj(w, "public_inputs");
    for (size_t k = 0; k < 7 && k < t->count; k++)
        dpc_json_num(w, name[k], dpc_field_get(&t->fields[k], &P->prior));
    dpc_json_obj(w, "source");
    for (size_t k = 0; k < 7; k++) dpc_json_str(w, name[k], src[k]);
    dpc_json_end(w);
    dpc_json_end(w);
}

void dpc_linreg_paper_report_json(struct dpc_json_writer *w, const dpc_linreg_plan *P,
                                  const dpc_linreg_opts *o)
{
    dpc_json_obj(w, "privacy_paper");
    dpc_json_num(w, "rho", P->rho);
    dpc_json_num(w, "rho_grad", P->rho_grad);
    dpc_json_num(w, "rho_stat", P->rho_stat);
    dpc_json_num(w, "noise_multiplier_stat", P->noise_multiplier_stat);
    dpc_json_num(w, "eps0", P->eps0);
    dpc_json_num(w, "delta0", P->delta0);
    dpc_json_int(w, "stream", (long long)o->stream);
    dpc_json_end(w);
    dpc_linreg_check ck[DPC_LINREG_MAX_CHECKS];
    size_t nc = dpc_linreg_checks(P, ck, DPC_LINREG_MAX_CHECKS);
    dpc_json_arr(w, "preconditions");
    for (size_t i = 0; i < nc; i++) {
        dpc_json_obj(w, NULL);
        dpc_json_str(w, "name", ck[i].name);
        dpc_json_bool(w, "ok", ck[i].ok);
        dpc_json_num(w, "value", ck[i].value);
        dpc_json_num(w, "required", ck[i].required);
        dpc_json_str(w, "source", ck[i].source);
        dpc_json_str(w, "meaning", ck[i].meaning);
        dpc_json_end(w);
    }
    dpc_json_end(w);
}
