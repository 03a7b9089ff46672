/* repro_sim.c — what the nu-DP-FTRL repro targets share (dpcorr/papers/nu_repro.h): one
 * simulation point beside its exact V0, the log-log slope, the common parameters. */
#include "common/util.h"
#include "field/field_def.h"
#include "dpcorr/papers/nu_repro.h"

#include <math.h>
#include <string.h>

/* dpc_nu_repro_scale by value */
static const char *const repro_scale_names[] = {"full", "quick", "smoke"};

#define RP(m) DPC_FIELD_AT(dpc_nu_repro_params, m)
static const dpc_field nu_repro_fields[] = {
    {.name = "scale", .type = DPC_FIELD_ENUM, RP(scale), .def = DPC_NU_REPRO_QUICK,
     DPC_FIELD_NAMES(repro_scale_names),
     .doc = "scale: full (the reproduction's grids), quick (seconds) or smoke (sanitizer runs)"},
    {.name = "seed", .type = DPC_FIELD_U64, RP(seed), .def = 20240101, .flags = DPC_FIELD_NO_RANGE,
     .doc = "root seed of every simulation (each adds its salt)"},
};
#undef RP
static const dpc_field_table nu_repro_table = DPC_FIELD_TABLE(dpc_nu_repro_params, nu_repro_fields);

const dpc_field_table *dpc_nu_repro_params_fields(void) { return &nu_repro_table; }

void dpc_nu_repro_params_init(dpc_nu_repro_params *p)
{
    if (!p) return;
    dpc_field_defaults(&nu_repro_table, p);
}

double dpc_nu_loglog_slope(const double *x, const double *y, size_t n)
{
    return dpc__loglog_slope(x, y, n);
}

dpc_status dpc_nu_simulate(const dpc_nu_setup_params *sp, const dpc_theory_beta *b,
                           dpc_nu_sim_point *out, dpc_error *err)
{
    if (!sp || !b || !out)
        return dpc_error_param(err, DPC_E_INVALID, !sp ? "params" : !b ? "beta" : "out", "NULL");
    double t0 = dpc__now();
    dpc_nu_setup_params p = *sp;
    p.memory_budget = (size_t)1 << 30;
    dpc_nu_setup su;
    dpc_theory_lti l;
    dpc_status st = dpc_nu_setup_make(&su, &p, b, err);
    if (st) return st;
    st = dpc_theory_lti_error(&su.problem, b, DPC_THEORY_QUADRATURE, &l, err);
    dpc_sim_result r;
    if (!st && (st = dpc_sim_run(&su.sim, &r, err))) dpc_error_prefix(err, "simulation: ");
    if (!st) {
        out->mean = r.mean;
        out->se = r.stderr_;
        out->theory = l.v0;
        out->steps = r.steps;
        out->burn_in = r.burn_in;
        out->len = su.len;
        out->tail = dpc_theory_beta_tail(b, su.len);
        out->seconds = dpc__now() - t0;
        out->seed = su.sim.seed;
    }
    dpc_nu_setup_free(&su);
    return st;
}
