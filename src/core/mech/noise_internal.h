/* noise_internal.h — the streaming noise generator object, shared by noise.c (construction,
 * seek, checkpoints) and the per-level step kernels (noise_step*.c). Not public. */
#ifndef DPCORR_SRC_MECH_NOISE_INTERNAL_H
#define DPCORR_SRC_MECH_NOISE_INTERNAL_H

#include "mech/mech_internal.h"

#define DPC__NOISE_TREE_LEVELS 64
#define DPC__NOISE_PIECE 16384 /* coordinates per piece: every engine's work on one piece is
                                 done before the next (its rows stay in cache) */

struct dpc_noise {
    const dpc_mech *m;
    dpc_rng_stream s;
    size_t coord0, d, t, n;
    dpc_noise_form form;
    mech_engine engine;
    dpc_isa isa;         /* resolved level of the RNG and the step kernels */
    size_t slots;        /* FIR: b_len; IIR: c_len - 1; BLT: k; DENSE: n; TREE: stack capacity */
    double *state;       /* (slots, d): slot-major for every engine (BLT: buffer q at q d) */
    double *scratch;     /* (nscratch, piece) */
    size_t nscratch;
    size_t piece;        /* min(d, DPC__NOISE_PIECE) */
    unsigned depth;      /* TREE buffer: stack depth */
    double hv[DPC__NOISE_TREE_LEVELS], hw[DPC__NOISE_TREE_LEVELS]; /* Honaker v_h and 1 - v_h */
};

/* One step (out (d) = (B Z)_t, state updated, g->t not advanced) by the kernels of a level.
 * The three are the same source (noise_step.inc) compiled for each level. */
void dpc__noise_step_sse2(dpc_noise *g, double *out);
void dpc__noise_step_avx2(dpc_noise *g, double *out);
void dpc__noise_step_avx512(dpc_noise *g, double *out);

/* TREE: rebuilds the buffer form's stack for "next step = g->t" (noise_step.c). */
void dpc__noise_tree_rebuild(dpc_noise *g);

#endif
