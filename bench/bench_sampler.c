/* bench_sampler.c — batch selection at the cost of the batch (sampler scheme 2, issue 35): one
 * epoch (N / B steps) of each kind at N = 1e5, B = 10 (the 1e5-step DP-SGD run of the issue)
 * and N = 1e7, B = 1000, seeded and secure: the sampler's construction (the batch-size table;
 * the bins of balls-in-bins) and the epoch's batches, CPU time of the process. Next to it, what
 * scheme 1's one word per example and step would cost for the same epoch (N words per step,
 * timed on one step's bulk draw and multiplied by the steps). Target: an epoch at N = 1e7,
 * B = 1000 in < 1 s. */
#include "bench_util.h"
#include "dpcorr/sampler.h"

#include <stdlib.h>

typedef struct bcase {
    dpc_sampler_kind kind;
    size_t N, B, groups;
} bcase;

/* Construction and one epoch of batches (CPU seconds); *examples: their total size. */
static int epoch(const bcase *c, const dpc_rng *rng, double *t_new, double *t_epoch,
                 size_t *examples)
{
    size_t steps = c->N / c->B;
    dpc_sampler_config cfg = {c->kind, c->N, c->B, steps, c->groups};
    dpc_sampler *s = NULL;
    dpc_error err = {0};
    double t = bench_cpu();
    if (dpc_sampler_new(&s, &cfg, rng, &err)) {
        printf("error: %s\n", err.msg);
        return 1;
    }
    *t_new = bench_cpu() - t;
    size_t *idx = malloc(dpc_sampler_max_batch(s) * sizeof *idx), cnt, total = 0;
    t = bench_cpu();
    for (size_t k = 0; k < steps && idx; k++) {
        if (dpc_sampler_batch(s, k, idx, &cnt, &err)) break;
        total += cnt;
    }
    *t_epoch = bench_cpu() - t;
    *examples = total;
    bench_sink = idx ? (double)idx[0] : 0;
    free(idx);
    dpc_sampler_free(s);
    return 0;
}

/* Scheme 1's cost of an epoch: N words per step (bulk fill, the best of 3), times N / B. */
static double scheme1_epoch(size_t N, size_t B, const dpc_rng *rng)
{
    dpc_rng_stream s = dpc_rng_stream_derive(rng, DPC_STREAM_ID(DPC_STREAM_SAMPLER, 0));
    uint64_t *w = malloc(N * sizeof *w);
    double best = 1e30;
    for (int r = 0; r < 3 && w; r++) {
        double t = bench_cpu();
        dpc_rng_word_fill(&s, (uint64_t)r, 0, 0, w, N);
        t = bench_cpu() - t;
        if (t < best) best = t;
    }
    bench_sink = w ? (double)w[N / 2] : 0;
    free(w);
    return best * (double)(N / B);
}

int main(void)
{
    bench_machine();
    printf("\n== sampling: one epoch (N / B steps), sampler scheme %d (CPU time)\n",
           DPC_SAMPLER_SCHEME);
    printf("%-15s %-7s %9s %6s %8s %12s %12s %10s %16s\n", "kind", "mode", "N", "B", "steps",
           "build ms", "epoch ms", "us/step", "scheme 1 (est.)");
    static const bcase cases[] = {
        {DPC_SAMPLER_POISSON, 100000, 10, 0},
        {DPC_SAMPLER_POISSON, 10000000, 1000, 0},
        {DPC_SAMPLER_CYCLIC_POISSON, 10000000, 1000, 4},
        {DPC_SAMPLER_BALLS_IN_BINS, 10000000, 1000, 0},
        {DPC_SAMPLER_SHUFFLE, 10000000, 1000, 0},
    };
    dpc_rng seeded, secure;
    dpc_rng_seed(&seeded, 1);
    memset(&secure, 0, sizeof secure); /* secure mode with a fixed test key (real keys: the OS) */
    secure.mode = DPC_RNG_SECURE;
    for (int i = 0; i < 8; i++) secure.skey[i] = 0x9e3779b9u * (uint32_t)(i + 1);
    double worst = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        for (int m = 0; m < 2; m++) {
            const dpc_rng *rng = m ? &secure : &seeded;
            double tn, te;
            size_t ex;
            if (epoch(&cases[c], rng, &tn, &te, &ex)) return 1;
            size_t steps = cases[c].N / cases[c].B;
            char old[32] = "-";
            if (cases[c].kind == DPC_SAMPLER_POISSON || cases[c].kind == DPC_SAMPLER_BALLS_IN_BINS)
                snprintf(old, sizeof old, "%.1f s", scheme1_epoch(cases[c].N, cases[c].B, rng));
            printf("%-15s %-7s %9zu %6zu %8zu %12.1f %12.1f %10.2f %16s\n",
                   dpc_sampler_kind_name(cases[c].kind), m ? "secure" : "seeded", cases[c].N,
                   cases[c].B, steps, tn * 1e3, te * 1e3, te * 1e6 / (double)steps, old);
            if (cases[c].N == 10000000 && cases[c].kind == DPC_SAMPLER_POISSON && te > worst)
                worst = te;
            (void)ex;
        }
    printf("target: one Poisson epoch at N = 1e7, B = 1000 in < 1 s: %.2f s (the slower mode) %s\n",
           worst, worst < 1.0 ? "holds" : "does NOT hold");
    printf("(balls-in-bins' build draws every example's bin once: O(N); scheme 1 drew them at "
           "every step)\n");
    printf("\nload average at the end: %.2f\n", bench_loadavg());
    return 0;
}
