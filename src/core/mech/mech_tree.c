/* mech_tree.c — binary-tree aggregation (Dwork, Naor, Pitassi, Rothblum 2010; Chan, Shi, Song
 * 2011; as DP-FTRL: Kairouz et al. 2021) and the online Honaker (2015) efficient estimator.
 *
 * Node (h, i) covers steps [i 2^h, (i+1) 2^h); it is "complete" once step (i+1) 2^h - 1 has
 * run. Its noise is row r(h, i) = i 2^(h+1) + 2^h - 1 of Z (in-order numbering: unique for the
 * infinite tree, so the same node gets the same noise whatever n is).
 *
 * Estimate of a node: plain est = y_node. Honaker (online, subtree only):
 *     est(h, i) = v_h y(h, i) + (1 - v_h) (est(h-1, 2i) + est(h-1, 2i+1)),
 *     v_0 = 1, v_h = 2 v_{h-1} / (2 v_{h-1} + 1) = 2^h / (2^(h+1) - 1),
 * the inverse-variance combination of the node and its children's sum (the weight on the node is
 * exactly its resulting variance v_h). The prefix sum over [0, t] is the sum of the estimates of
 * the maximal complete nodes (the binary digits of t + 1); the per-step noise is its increment:
 *     out_t = est(top_t) - sum_{h=1..H} est(h-1, left child of the level-h node completed at t),
 * H = number of trailing zero bits of t + 1, top_t = the level-H node completed at t. */
#include "common/util.h"
#include "mech/mech_internal.h"

#include <stdlib.h>
#include <string.h>

uint64_t dpc__tree_node_row(unsigned h, uint64_t i)
{
    return (i << (h + 1)) + ((uint64_t)1 << h) - 1;
}

double dpc__tree_honaker_var(unsigned h)
{
    double p = (double)((uint64_t)1 << h);
    return p / (2.0 * p - 1.0);
}

unsigned dpc__tree_levels(size_t n)
{
    unsigned L = 0;
    while (n) {
        L++;
        n >>= 1;
    }
    return L; /* 1 + floor(log2 n) */
}

/* B[row] += scale * (coefficients of est(h, i)) over the noise rows. */
static void add_est(double *row, unsigned h, uint64_t i, double scale, int honaker)
{
    if (!honaker || h == 0) {
        row[dpc__tree_node_row(h, i)] += scale;
        return;
    }
    double v = dpc__tree_honaker_var(h);
    row[dpc__tree_node_row(h, i)] += scale * v;
    add_est(row, h - 1, 2 * i, scale * (1.0 - v), honaker);
    add_est(row, h - 1, 2 * i + 1, scale * (1.0 - v), honaker);
}

int dpc__tree_dense_noising(const dpc_mech *m, double *B)
{
    size_t n = m->n, mrows = 2 * n;
    int hon = m->p.honaker;
    memset(B, 0, n * mrows * sizeof *B);
    for (size_t t = 0; t < n; t++) {
        double *row = B + t * mrows;
        uint64_t t1 = (uint64_t)t + 1;
        unsigned H = 0;
        while (!((t1 >> H) & 1)) H++;
        add_est(row, H, (t1 >> H) - 1, 1.0, hon);
        for (unsigned h = 1; h <= H; h++) {
            uint64_t ih = (t1 >> h) - 1; /* the level-h node completed at t */
            add_est(row, h - 1, 2 * ih, -1.0, hon);
        }
    }
    return 1;
}

int dpc__tree_dense_strategy(const dpc_mech *m, double *C)
{
    size_t n = m->n;
    memset(C, 0, 2 * n * n * sizeof *C);
    for (unsigned h = 0; ((size_t)1 << h) <= n; h++) {
        size_t w = (size_t)1 << h;
        for (uint64_t i = 0; (i + 1) * w <= n; i++) {
            double *row = C + dpc__tree_node_row(h, i) * n;
            for (size_t t = i * w; t < (i + 1) * w; t++) row[t] = 1.0;
        }
    }
    return 1;
}
