/* mech_error.c — error of a workload under a mechanism's noise: the rows of A B.
 * RMSE = ||A B||_F / sqrt(n) and max error = max_t ||(A B)_t||_2, per unit noise std.
 * Toeplitz: A B is Toeplitz with first column y = W * b, so row t has norm^2 sum_{u<=t} y_u^2:
 * O(n) time and memory (nu-DP-FTRL note 1.5: ||A B||_F^2 = sum_m (n - m) S_m^2).
 * Tree, prefix workload: the prefix noise at t is the sum of the estimates of the dyadic nodes
 * of t + 1 (independent subtrees), so row t has norm^2 = sum over the set bits h of t + 1 of
 * Var(est at level h): 1 (plain) or 2^h / (2^(h+1) - 1) (Honaker). O(1) memory. */
#include "common/util.h"
#include "mech/mech_internal.h"

#include <math.h>
#include <stdlib.h>

dpc_status dpc_mech_error_of(const dpc_mech *m, const dpc_workload *w, dpc_mech_error *out,
                             dpc_error *err)
{
    dpc_workload wl = w ? *w : DPC_WORKLOAD_PREFIX;
    for (size_t i = 0; i < dpc__workload_table.count; i++) { /* the table's ranges: "w.decay" */
        const dpc_field *f = &dpc__workload_table.fields[i];
        dpc_status st = dpc_field_check_value(f, "w.", dpc_field_get(f, &wl), err);
        if (st) return st;
    }
    size_t n = m->n;
    double total = 0.0, maxsq = 0.0;
    int prefix = wl.momentum == 0.0 && wl.decay == 1.0;
    if (dpc_mech_is_toeplitz(m)) {
        double *y = dpc__malloc_array(n, sizeof *y);
        if (!y) return DPC__NOMEM(err, "error workspace");
        dpc__workload_apply(y, m->bcoef, n, wl.decay, wl.momentum);
        double row = 0.0;
        for (size_t t = 0; t < n; t++) {
            row += y[t] * y[t];
            total += row;
        }
        maxsq = row;
        free(y);
    } else if (m->engine == ENGINE_TREE && prefix) {
        double var[64];
        for (unsigned h = 0; h < 64; h++) var[h] = m->p.honaker ? dpc__tree_honaker_var(h) : 1.0;
        for (size_t t = 0; t < n; t++) {
            uint64_t t1 = (uint64_t)t + 1;
            double row = 0.0;
            for (unsigned h = 0; t1 >> h; h++)
                if ((t1 >> h) & 1) row += var[h];
            total += row;
            if (row > maxsq) maxsq = row;
        }
    } else {
        if (n > 4096)
            return dpc_error_set(err, DPC_E_RANGE,
                                 "%s: error with this workload needs n <= 4096, got %zu",
                                 dpc_mech_kind_name(m->p.kind), n);
        size_t cols = dpc_mech_noise_rows(m);
        double *B = dpc__malloc_array(n * cols, sizeof *B);
        double *col = dpc__malloc_array(n, sizeof *col), *rowsq = dpc__calloc(n, sizeof *rowsq);
        if (!B || !col || !rowsq) {
            free(B);
            free(col);
            free(rowsq);
            return DPC__NOMEM(err, "error workspace");
        }
        dpc_status st = dpc_mech_dense_noising(m, B, err);
        if (st) {
            free(B);
            free(col);
            free(rowsq);
            return st;
        }
        for (size_t s = 0; s < cols; s++) {
            for (size_t t = 0; t < n; t++) col[t] = B[t * cols + s];
            dpc__workload_apply(col, col, n, wl.decay, wl.momentum);
            for (size_t t = 0; t < n; t++) rowsq[t] += col[t] * col[t];
        }
        for (size_t t = 0; t < n; t++) {
            total += rowsq[t];
            if (rowsq[t] > maxsq) maxsq = rowsq[t];
        }
        free(B);
        free(col);
        free(rowsq);
    }
    if (!isfinite(total) || !isfinite(maxsq))
        return dpc_error_set(err, DPC_E_NUMERIC, "%s: error overflows",
                             dpc_mech_kind_name(m->p.kind));
    out->rmse = sqrt(total / (double)n);
    out->max_error = sqrt(maxsq);
    return DPC_OK;
}
