/* dpcorr/tune.h — the instruction-set level of each kernel family, by measurement.
 *
 * The widest level is not always the fastest (on some AMD Zen cores AVX-512 GEMMs run slower
 * than AVX2; on others it is the other way round), and since every level computes the same
 * bits the choice is free. dpc_tune_isa measures each level this CPU runs on a small instance
 * of each kernel family, on the calling thread (its CPU time: after untimed warm-up rounds of
 * every level, the median of 7 rounds with the levels interleaved, so that neither a cold
 * first timing nor another job on the core decides), in about 10-30 ms:
 *
 *   DPC_TUNE_GEMM   the model's matrix products (dpc_model_config.isa):
 *                   (16 x 256) x (256 x 128), ns per multiply-add
 *   DPC_TUNE_GAUSS  the bulk Gaussian fill (dpc_rng_gaussian_fill_isa), 32 Ki samples in the
 *                   cache, ns per sample
 *   DPC_TUNE_NOISE  a mechanism's noise step, Gaussian fill fused with the state update
 *                   (dpc_noise_config.isa, dpc_train_config.isa): BLT with 4 buffers over
 *                   32 Ki coordinates, ns per coordinate
 *
 * and picks per family the level with the least (median) time, except that a wider level is
 * kept unless a narrower one is more than 3% faster (measurement noise must not flip the
 * choice). It keeps
 * no state: front ends call it once per process at first use and set the objects' levels (the
 * CLI and the Python package do; they record the table in reports), and DPCORR_ISA there
 * still forces one level for all families. An object left at DPC_ISA_AUTO takes
 * dpc_isa_detect(). */
#ifndef DPCORR_TUNE_H
#define DPCORR_TUNE_H

#include "dpcorr/isa.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dpc_tune_family {
    DPC_TUNE_GEMM = 0,
    DPC_TUNE_GAUSS = 1,
    DPC_TUNE_NOISE = 2
} dpc_tune_family;
#define DPC_TUNE_NFAMILIES 3

typedef struct dpc_tune_levels {
    dpc_isa level[DPC_TUNE_NFAMILIES]; /* the chosen level per family */
    /* ns per unit (above) per family and level, the median of the rounds, indexed by dpc_isa (0
     * for AUTO and for levels this CPU lacks) */
    double ns[DPC_TUNE_NFAMILIES][4];
    double seconds; /* the measurement's own wall time */
} dpc_tune_levels;

/* Measures and chooses (above). DPC_E_NOMEM when its buffers (about 1.5 MB) cannot be had. */
DPC_API DPC_NODISCARD dpc_status dpc_tune_isa(dpc_tune_levels *out, dpc_error *err);

/* The level to use for one family when nothing forces one: widest-first among the measured,
 * the rule above, from a filled table (exposed for the tests of the rule). */
DPC_API dpc_isa dpc_tune_choose(const double ns[4], dpc_isa have);

/* "gemm", "gauss", "noise" ("unknown" otherwise). */
DPC_API const char *dpc_tune_family_name(dpc_tune_family f);

/* The "isa_levels" member of a report, one writer for every front end: forced_by_DPCORR_ISA,
 * the level in use per family (level[], as the front end resolved it), and when measured is
 * not NULL (a front end passes NULL when a level was forced or the measurement failed) the
 * measured ns per unit of each level this CPU has (the zeros, levels it lacks, are left out)
 * and the measurement's seconds. */
struct dpc_json_writer;
DPC_API void dpc_tune_report_json(struct dpc_json_writer *w, int forced,
                                  const dpc_isa level[DPC_TUNE_NFAMILIES],
                                  const dpc_tune_levels *measured);

#ifdef __cplusplus
}
#endif
#endif /* DPCORR_TUNE_H */
