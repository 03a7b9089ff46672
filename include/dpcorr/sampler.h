/* dpcorr/sampler.h — batch selection, described to the accountant exactly as it runs.
 *
 * Every batch is a pure function of (rng key, step): a run can be resumed or replayed from any
 * step without sampler state. Randomness comes from stream DPC_STREAM_ID(DPC_STREAM_SAMPLER, 0).
 *
 * Kinds (N examples, expected batch size B, n steps):
 *   FIXED          one public random permutation, then fixed-order epochs of floor(N/B) batches
 *                  of exactly B examples, the same order every epoch (the "(k, b)-participation"
 *                  of multi-epoch matrix factorization: an example takes part at steps t0,
 *                  t0 + b, t0 + 2b, ... with b = steps per epoch). The N mod B examples left over
 *                  never take part.
 *   SHUFFLE        a fresh permutation every epoch, batches of exactly B. An example takes part
 *                  once per epoch at any position, so two participations can be 1 step apart.
 *   POISSON        every example independently with probability q = B/N at every step
 *                  (variable batch size; the sum is divided by the expected size B). As a
 *                  pattern: possibly every step (cyclic with period 1).
 *   CYCLIC_POISSON the examples are split by a public permutation into `groups` equal groups
 *                  (N mod groups left over never take part); step t uses group t mod groups,
 *                  each member with probability q = B groups / N (Choquette-Choo et al. 2023,
 *                  "amplified BandMF"): an example can only take part at steps g, g + groups, ...
 *   BALLS_IN_BINS  every example is put in one of b = floor(N/B) bins, exactly uniformly
 *                  (unbiased integer draw) and independently (a pure function of the key), and
 *                  takes part in every step t with t mod b = its bin: one uniformly random
 *                  step of each epoch, the same position every epoch (jax_privacy's
 *                  BallsInBinsSampling; Choquette-Choo et al.
 *                  2024, "Near exact privacy amplification for matrix mechanisms"). Variable
 *                  batch size (Binomial(N, 1/b)); the sum is divided by the expected size N/b.
 *
 * How the Poisson kinds draw (sampler scheme 2, DPC_SAMPLER_SCHEME): a step's batch costs
 * O(batch) words, not one word per example. Over a population of n (N, or the group of the
 * step) with expected size B:
 *   - B / n >= 1/16: member j is in when dpc_rng_below(t, j, n) < B, exactly Bernoulli(B / n)
 *     and independent (n words, at most 16 per expected member);
 *   - else the batch size K is drawn exactly from Binomial(n, B / n), by inversion of its CDF at a
 *     uniform U whose 64-bit words are (t, 0, 0), (t, 0, 1), ... (sampler_internal.h): the first
 *     word decides against a table of 128-bit cumulative masses unless it is within one of a
 *     boundary's high word (about 3 nk 2^-64 of the steps, nk ~ 28 sqrt(B) sizes), then the second
 *     word, and only where the 128-bit prefix is within a few units of a boundary (about 1e-35 of
 *     the steps) is U compared with the exact CDF in exact integer arithmetic at rising precision;
 *     the first word alone gives the same size as the 64-bit table used before. Then K distinct
 *     members exactly uniformly among the K-subsets, from the draws dpc_rng_below(t, 1, n),
 *     dpc_rng_below(t, 2, n), ... (repeats redrawn; radix-sorted). Given its size, a set of
 *     independent Bernoulli(q) draws is exactly a uniform K-subset, so the batch is exactly the
 *     independent Bernoulli(q) sample (given uniform words). (The 64-bit table before it, in double
 *     precision, was within total variation ~1e-15 sqrt(B) a step and drew the same sets but at a
 *     fraction below 1e-13 of the steps. Scheme 1, before: one 53-bit uniform per example and step,
 *     inclusion probability q rounded up to 2^-53.)
 * CYCLIC_POISSON's public groups are a Feistel permutation keyed once from the stream (8 rounds
 * of a 64-bit mixer; scheme 1 used FIXED's permutation).
 * Every word is a pure function of (key, step, index): the batches do not depend on the
 * thread or rank count, nor on the order in which steps are asked for. Balls-in-bins draws the
 * bin of every example once, at dpc_sampler_new (N words, a bucketed list of N indices in
 * memory: 4 bytes per example below 2^32 examples), and a step copies its bin. FIXED and SHUFFLE
 * keep their permutation's round function as tables (6 x 2^half 16-bit words per permutation,
 * drawn at dpc_sampler_new, at most 64 MB: the same words as drawn one at a time, so the same
 * batches), an index costing ~10 loads instead of ~10 generator blocks.
 *
 * What the accountant needs (dpc_sampler_describe): the participation pattern of one example
 * (for the mechanism's sensitivity) and whether Poisson amplification applies, with its rate and
 * number of opportunities. */
#ifndef DPCORR_SAMPLER_H
#define DPCORR_SAMPLER_H

#include "dpcorr/common.h"
#include "dpcorr/mech.h"
#include "dpcorr/rng.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which sets (key, step) draws for the Poisson kinds (above); checkpoints record it and a resume
 * under another scheme is refused. FIXED, SHUFFLE and BALLS_IN_BINS draw what they drew under
 * scheme 1. */
#define DPC_SAMPLER_SCHEME 2

typedef enum dpc_sampler_kind {
    DPC_SAMPLER_FIXED = 0,
    DPC_SAMPLER_SHUFFLE = 1,
    DPC_SAMPLER_POISSON = 2,
    DPC_SAMPLER_CYCLIC_POISSON = 3,
    DPC_SAMPLER_BALLS_IN_BINS = 4,
    DPC_SAMPLER_AUTO = 99 /* configurations only (dpc_train_config): the library chooses */
} dpc_sampler_kind;

typedef struct dpc_sampler_config {
    dpc_sampler_kind kind;
    size_t n_examples; /* N >= 1 */
    size_t batch;      /* B: batch size (exact for FIXED/SHUFFLE, expected for Poisson kinds) */
    size_t steps;      /* n: total steps of the run, >= 1 */
    size_t groups;     /* CYCLIC_POISSON: number of groups (= min-separation), >= 1 */
} dpc_sampler_config;

/* The field table of dpc_sampler_config (dpcorr/field.h): name, type, offset, range and one-line
 * doc of every field (the defaults are zero: zero-initialise and fill); dpc_sampler_new
 * range-checks through it. */
DPC_API const dpc_field_table *dpc_sampler_config_fields(void);

typedef struct dpc_sampler dpc_sampler; /* opaque, immutable after creation */

/* How one example can take part, for the accountant. */
typedef struct dpc_sampler_desc {
    dpc_participation part; /* pattern for the mechanism's sensitivity */
    int poisson;            /* 1: each opportunity is a Poisson(q) draw (amplification applies) */
    double q;               /* Poisson rate (1 for FIXED/SHUFFLE) */
    size_t opportunities;   /* Poisson kinds: steps at which one example may be drawn */
    size_t steps_per_epoch; /* floor(N/B): steps that process N examples (on average) */
    double expected_batch;  /* the divisor of the gradient sum */
    int balls_in_bins;      /* BALLS_IN_BINS: part is CYCLIC with period b = the bins, the
                               position uniformly random (and fixed) per example */
} dpc_sampler_desc;

DPC_API const char *dpc_sampler_kind_name(dpc_sampler_kind k); /* "fixed", "shuffle", ...,
                                                                   "balls-in-bins" */
DPC_API DPC_NODISCARD dpc_status dpc_sampler_kind_parse(const char *s, dpc_sampler_kind *out,
                                                        dpc_error *err);

/* Validates (batch <= N, groups <= N, ...) and prepares the draws: the batch-size table of a
 * Poisson kind (about 28 sqrt(B) entries of 16 bytes, exact integer arithmetic: 0.06 ms at
 * B = 10^3, 2 ms at 10^6 on a 2-core AMD EPYC Zen 5), the bins of balls-in-bins (O(N)).
 * DPC_E_INVALID naming the field on bad input, DPC_E_NOMEM. */
DPC_API DPC_NODISCARD dpc_status dpc_sampler_new(dpc_sampler **out, const dpc_sampler_config *cfg,
                                                 const dpc_rng *rng, dpc_error *err);
DPC_API void dpc_sampler_free(dpc_sampler *s);

/* The configuration s was built with (owned by s), and what it implies for accounting
 * (participation pattern, Poisson rate, expected batch: dpc_sampler_desc). */
DPC_API const dpc_sampler_config *dpc_sampler_get_config(const dpc_sampler *s);
DPC_API void dpc_sampler_describe(const dpc_sampler *s, dpc_sampler_desc *out);

/* The capacity dpc_sampler_batch needs in idx: at least the largest possible batch (the Poisson
 * kinds below rate 1/16 use twice their largest batch, the rest as scratch: the largest size of
 * their table, out to P(size) < 2^-140 P(B); a larger size, drawn with probability below 1e-40
 * a step, is refused by dpc_sampler_batch naming t; balls-in-bins its largest bin). */
DPC_API size_t dpc_sampler_max_batch(const dpc_sampler *s);

/* The example indices of step t (0 <= t < steps), in increasing order for the Poisson kinds and
 * balls-in-bins, in permutation order otherwise. Pure function of (key, t). Cost O(B) words
 * (O(B log B) time; for a Poisson kind at rate >= 1/16, O(n) = O(16 B)). idx: (max_batch). */
DPC_API DPC_NODISCARD dpc_status dpc_sampler_batch(const dpc_sampler *s, size_t t, size_t *idx,
                                                   size_t *count, dpc_error *err);

/* What the schedule makes public about one example (privacy auditing, dpcorr/audit.h): the steps
 * at which `example` can take part, increasing, into steps (capacity: the run's steps), their
 * number in *count, and *certain:
 *   FIXED, SHUFFLE   certain = 1: exactly the steps at which it is in the batch (the
 *                    permutations are not secret: the accountant takes the worst case over them);
 *   POISSON          certain = 0: every step, each a secret Poisson(q) draw;
 *   CYCLIC_POISSON   certain = 0: the steps of its group (the partition is public), each a
 *                    secret Poisson(q) draw;
 *   BALLS_IN_BINS    certain = 0: every step; it takes part at t0, t0 + b, t0 + 2b, ... for
 *                    one secret offset t0 (its bin), uniform in [0, b) — not independent draws
 *                    (dpc_audit_score_cyclic scores this).
 * An example that never takes part (left over by the permutation or the groups) has count 0.
 * Computed by inverting the permutations: O(epochs) for FIXED and SHUFFLE, O(steps / groups)
 * for CYCLIC_POISSON, O(steps) for POISSON and BALLS_IN_BINS (every step is listed); no
 * batch is drawn. */
DPC_API DPC_NODISCARD dpc_status dpc_sampler_opportunities(const dpc_sampler *s, size_t example,
                                                           size_t *steps, size_t *count,
                                                           int *certain, dpc_error *err);

#ifdef __cplusplus
}
#endif
#endif
