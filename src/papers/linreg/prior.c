/* prior.c — the public prior knowledge of DP-(AMB)SSGD that a data set carries, and the note's
 * default SSP bounds (dpcorr/papers/linreg.h). */
#include "dpcorr/papers/linreg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

dpc_status dpc_linreg_prior_from_data(dpc_linreg_prior *p, const dpc_dataset *ds, unsigned keep,
                                      unsigned *filled, dpc_error *err)
{
    unsigned set = 0;
    if (filled) *filled = 0;
    if (!p || !ds) return dpc_error_param(err, DPC_E_INVALID, "prior", "NULL argument");
    if (ds->cov_diag && ds->truth) { /* synthetic: the generator's parameters are public */
        dpc_linreg_prior q = *p;
        dpc_status st = dpc_linreg_prior_from_spectrum(&q, ds->cov_diag, ds->d, err);
        if (st) return st;
        if (!(keep & DPC_LINREG_PRIOR_H_NORM)) p->h_norm = q.h_norm, set |= DPC_LINREG_PRIOR_H_NORM;
        if (!(keep & DPC_LINREG_PRIOR_KAPPA)) p->kappa = q.kappa, set |= DPC_LINREG_PRIOR_KAPPA;
        if (!(keep & DPC_LINREG_PRIOR_R_X)) p->r_x = q.r_x, set |= DPC_LINREG_PRIOR_R_X;
        if (!(keep & DPC_LINREG_PRIOR_W_BOUND)) {
            double wh = 0;
            for (size_t j = 0; j < ds->d; j++) wh += ds->cov_diag[j] * ds->truth[j] * ds->truth[j];
            p->w_bound = sqrt(wh);
            set |= DPC_LINREG_PRIOR_W_BOUND;
        }
        /* the generator's label noise, as its source records it (%.17g: exact) */
        const char *nz = strstr(ds->source, "noise=");
        if (!(keep & DPC_LINREG_PRIOR_SIGMA_BOUND) && nz) {
            p->sigma_bound = strtod(nz + 6, NULL);
            set |= DPC_LINREG_PRIOR_SIGMA_BOUND;
        }
    } else if (ds->x_norm_bound > 0) { /* ||x|| <= B: R_x <= B and ||H|| <= E||x||^2 <= B^2 */
        if (!(keep & DPC_LINREG_PRIOR_R_X)) p->r_x = ds->x_norm_bound, set |= DPC_LINREG_PRIOR_R_X;
        if (!(keep & DPC_LINREG_PRIOR_H_NORM))
            p->h_norm = ds->x_norm_bound * ds->x_norm_bound, set |= DPC_LINREG_PRIOR_H_NORM;
    }
    if (filled) *filled = set;
    return DPC_OK;
}

const char *dpc_linreg_prior_source(const dpc_dataset *ds, unsigned keep, unsigned filled,
                                    unsigned bit)
{
    if (keep & bit) return "option";
    if (!(filled & bit) || !ds) return "default";
    if (ds->cov_diag && ds->truth) return "synthetic generator";
    return bit == DPC_LINREG_PRIOR_H_NORM ? "x_norm_bound^2" : "x_norm_bound";
}

dpc_status dpc_linreg_prior_require(unsigned keep, unsigned filled, dpc_error *err)
{
    static const struct {
        unsigned bit;
        const char *field;
    } need[] = {{DPC_LINREG_PRIOR_H_NORM, "prior.h_norm"},
                {DPC_LINREG_PRIOR_KAPPA, "prior.kappa"},
                {DPC_LINREG_PRIOR_R_X, "prior.r_x"}};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
        if (!((keep | filled) & need[i].bit))
            return dpc_error_param(err, DPC_E_INVALID, need[i].field,
                                   "required for this data set (public prior knowledge of H; no "
                                   "generator spectrum or row-norm bound is known)");
    return DPC_OK;
}

void dpc_linreg_ssp_bounds(dpc_linreg_ssp_opts *o, const dpc_linreg_prior *p, size_t n)
{
    double L = log((double)n);
    if (o->x_bound == 0) o->x_bound = p->r_x * pow(L, p->a);
    if (o->y_bound == 0) o->y_bound = p->k2 * hypot(p->w_bound, p->sigma_bound) * pow(L, p->a);
}
