/* test_dist.c — the data-parallel trainer over an in-process transport (dist_local.h: P ranks
 * as threads): parameters, losses, accuracy, telemetry and ledger bit-identical to one process
 * for P = 2, 3, 4 and 1-2 threads per rank for every noise engine; several rounds per step;
 * the bytes each step moves equal the formula of doc/distributed.md; checkpoints written with P
 * ranks resume with any other P; a failure on one rank (bad example, another data set, an
 * unwritable checkpoint, a lost peer) fails every rank with a message naming the rank; the
 * transport collectives; a training set held in shards (each rank its rows, the batch's rows
 * fetched from their owners) trains bit-identically to one process with the whole set, and its
 * checkpoints resume there. Needs no MPI. */
#include "dist_local.h"
#include "dpcorr/train.h"
#include "harness.h"
#include "train_fixture.h"
#include "train/train_internal.h" /* rank_job.round_chunks: force several rounds per step */

#include <stdint.h>
#include <unistd.h>


typedef struct mcfg {
    const char *name;
    dpc_mech_kind kind;
    dpc_sampler_kind sampler;
    double nu;
    size_t bands;
} mcfg;

static const double blt_theta[2] = {0.9, 0.5}, blt_omega[2] = {0.2, 0.1};

static const mcfg mechs[] = {
    {"dp-sgd poisson", DPC_MECH_IDENTITY, DPC_SAMPLER_POISSON, 0, 0},
    {"blt fixed", DPC_MECH_BLT, DPC_SAMPLER_FIXED, 0, 0},
    {"bsr cyclic-poisson", DPC_MECH_BSR, DPC_SAMPLER_CYCLIC_POISSON, 0, 3},
    {"nu fixed", DPC_MECH_NU, DPC_SAMPLER_FIXED, 0.05, 0},
    {"tree shuffle", DPC_MECH_TREE, DPC_SAMPLER_SHUFFLE, 0, 0},
};
#define NMECH (sizeof mechs / sizeof mechs[0])

static void base_config(dpc_train_config *c, const mcfg *m)
{
    dpc_train_config_init(c);
    c->mech.kind = m->kind;
    c->mech.nu = m->nu;
    c->mech.bands = m->bands;
    if (m->kind == DPC_MECH_BLT) {
        c->mech.nbuf = 2;
        c->mech.theta = blt_theta;
        c->mech.omega = blt_omega;
    }
    c->sampler = m->sampler;
    c->batch = 20;
    c->chunk = 4;
    c->epochs = 2;
    c->epsilon = 4.0;
    c->accountant = DPC_ACCOUNTANT_RDP; /* amplified routes: fast calibration */
    c->lr = 0.5;
    c->momentum = m->kind == DPC_MECH_IDENTITY ? 0.0 : 0.9;
}

/* One rank's (or the single process's) run. */
typedef struct rank_job {
    local_net *net;    /* NULL: one process */
    size_t rank;
    const dpc_model *m;
    const dpc_dataset *ds, *test;
    dpc_dataset *const *shards; /* non-NULL: rank r trains on shards[r] instead of ds */
    dpc_train_config cfg;
    size_t steps;      /* steps to take (SIZE_MAX: all) */
    const char *resume, *save;
    size_t round_chunks; /* 0: the trainer's choice; else forced (same on every rank) */
    size_t piece;        /* 0: the trainer's chain message size; else forced (doubles) */
    size_t die_at;     /* this rank stops answering before this step (SIZE_MAX: never) */
    /* results */
    dpc_status st;
    dpc_error err;
    uint64_t hash, tele; /* parameters; FNV of every step's (batch, loss, clip fraction) */
    double loss, acc, eps;
    dpc_dist_info info;  /* its arrays are copied below (the trainer is freed) */
    size_t bound[9], threads[8];
    size_t batches[64];  /* realized batch sizes of the first steps */
    size_t nsteps;
} rank_job;

static void fnv(uint64_t *h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        *h ^= b[i];
        *h *= 0x100000001b3ull;
    }
}

static void run_steps(rank_job *j, dpc_trainer *tr)
{
    dpc_step_info info;
    while (dpc_trainer_steps_done(tr) < dpc_trainer_steps_total(tr) && j->nsteps < j->steps) {
        if (j->net && dpc_trainer_steps_done(tr) == j->die_at) {
            local_net_kill(j->net, j->rank);
            j->st = dpc_error_set(&j->err, DPC_E_IO, "killed");
            return;
        }
        if ((j->st = dpc_trainer_step(tr, &info, &j->err))) return;
        if (j->nsteps < 64) j->batches[j->nsteps] = info.batch;
        j->nsteps++;
        fnv(&j->tele, &info.batch, sizeof info.batch);
        fnv(&j->tele, &info.loss, sizeof info.loss);
        fnv(&j->tele, &info.clip_fraction, sizeof info.clip_fraction);
    }
}

static void *rank_main(void *a)
{
    rank_job *j = a;
    dpc_rng rng;
    dpc_rng_seed(&rng, 7);
    j->tele = 0xcbf29ce484222325ull;
    if (j->net) j->cfg.transport = &j->net->tp[j->rank];
    if (j->shards) j->ds = j->shards[j->rank];
    dpc_trainer *tr = NULL;
    if ((j->st = dpc_trainer_new(&tr, j->m, j->ds, j->test, &j->cfg, &rng, &j->err))) return NULL;
    if (j->round_chunks) tr->C = j->round_chunks;
    if (j->piece) tr->dist.piece_len = j->piece;
    if (j->resume) j->st = dpc_trainer_resume(tr, j->resume, &j->err);
    if (!j->st) run_steps(j, tr);
    if (!j->st && j->save) j->st = dpc_trainer_save(tr, j->save, &j->err);
    if (!j->st && j->test)
        j->st = dpc_trainer_evaluate(tr, j->test, &j->loss, &j->acc, &j->err);
    if (!j->st) {
        j->hash = dpc_trainer_params_hash(tr);
        j->eps = dpc_trainer_ledger(tr)->epsilon;
        dpc_trainer_dist_info(tr, &j->info);
        for (size_t r = 0; r <= j->info.ranks && r < 9; r++) j->bound[r] = j->info.shard_begin[r];
        for (size_t r = 0; r < j->info.ranks && r < 8; r++) j->threads[r] = j->info.threads[r];
        j->info.shard_begin = j->info.threads = j->info.noise_state_bytes = NULL;
    }
    if (j->st && j->net) local_net_kill(j->net, j->rank); /* as a failing process exits */
    dpc_trainer_free(tr);
    return NULL;
}

/* Runs P ranks (P = 0: one process without transport) of the template job; jobs (P or 1). */
static rank_job *run_ranks(size_t P, const rank_job *tmpl)
{
    size_t n = P ? P : 1;
    rank_job *jobs = calloc(n, sizeof *jobs);
    local_net *net = P ? local_net_new(P) : NULL;
    for (size_t r = 0; r < n; r++) {
        jobs[r] = *tmpl;
        jobs[r].net = net;
        jobs[r].rank = r;
    }
    if (!P) rank_main(&jobs[0]);
    else local_run(P, rank_main, jobs, sizeof *jobs);
    if (net) {
        int failed = 0;
        for (size_t r = 0; r < n; r++) failed |= jobs[r].st != DPC_OK;
        CHECK(failed || local_net_pending(net) == 0, "P=%zu: %zu messages left unmatched", P,
              local_net_pending(net));
    }
    local_net_free(net);
    for (size_t r = 0; r < n; r++) jobs[r].net = NULL;
    return jobs;
}

static rank_job job_of(const dpc_model *m, const dpc_dataset *ds, const dpc_dataset *test,
                       const mcfg *mc)
{
    rank_job j;
    memset(&j, 0, sizeof j);
    j.m = m;
    j.ds = ds;
    j.test = test;
    base_config(&j.cfg, mc);
    j.steps = SIZE_MAX;
    j.die_at = SIZE_MAX;
    return j;
}

/* Every rank's result equals the single process's, bit for bit. */
static void same_as(const rank_job *one, const rank_job *jobs, size_t P, int tele,
                    const char *what)
{
    for (size_t r = 0; r < P; r++) {
        const rank_job *j = &jobs[r];
        CHECK(j->st == DPC_OK, "%s rank %zu: %s", what, r, j->err.msg);
        CHECK(j->hash == one->hash, "%s rank %zu: params %016llx vs one process %016llx", what,
              r, (unsigned long long)j->hash, (unsigned long long)one->hash);
        CHECK(!tele || j->tele == one->tele, "%s rank %zu: step telemetry differs", what, r);
        CHECK(memcmp(&j->loss, &one->loss, sizeof j->loss) == 0 &&
                  memcmp(&j->acc, &one->acc, sizeof j->acc) == 0,
              "%s rank %zu: evaluation %.17g/%.17g vs %.17g/%.17g", what, r, j->loss, j->acc,
              one->loss, one->acc);
        CHECK(memcmp(&j->eps, &one->eps, sizeof j->eps) == 0, "%s rank %zu: ledger epsilon", what,
              r);
    }
}

static void test_bit_identical(void)
{
    dpc_dataset *ds = logistic_data(200, 5, 1), *test = logistic_data(300, 5, 2);
    dpc_model *m = model_of("mlp:6", 5, 2); /* 50 parameters */
    for (size_t k = 0; k < NMECH; k++) {
        rank_job tmpl = job_of(m, ds, test, &mechs[k]);
        rank_job *one = run_ranks(0, &tmpl);
        CHECK(one->st == DPC_OK && one->nsteps > 0, "%s one process: %s", mechs[k].name,
              one->err.msg);
        for (size_t P = 1; P <= 4; P++)
            for (size_t T = 1; T <= 2; T++) {
                if (P == 1 && T == 2) continue;
                tmpl.cfg.threads = T;
                rank_job *jobs = run_ranks(P, &tmpl);
                same_as(one, jobs, P, 1, harness_fmt("%s P=%zu T=%zu", mechs[k].name, P, T));
                CHECK(jobs[0].info.ranks == P && jobs[P - 1].info.rank == P - 1 &&
                          jobs[0].bound[P] == 50 && jobs[0].threads[P - 1] == T,
                      "%s P=%zu: layout", mechs[k].name, P);
                free(jobs);
            }
        tmpl.cfg.threads = 1;
        free(one);
    }
    dpc_model_free(m);
    dpc_dataset_free(ds);
    dpc_dataset_free(test);
}

/* One round per step and one message per link are the trainer's choice for small batches and
 * models; forcing 1 and 2 chunks per rank per round exercises the chain's return from rank P-1
 * to rank 0 between rounds, and messages of 7 or 16 doubles its pipelining. */
static void test_rounds(void)
{
    dpc_dataset *ds = logistic_data(200, 5, 3);
    dpc_model *m = model_of("mlp:7", 5, 2);
    for (size_t k = 1; k <= 2; k++) {
        rank_job tmpl = job_of(m, ds, NULL, &mechs[k]);
        tmpl.cfg.batch = 37; /* 10 chunks of 4, the last one short */
        rank_job *one = run_ranks(0, &tmpl);
        for (size_t C = 1; C <= 2; C++)
            for (size_t P = 2; P <= 3; P++) {
                tmpl.round_chunks = C;
                tmpl.cfg.threads = C;
                tmpl.piece = P == 2 ? 7 : 16;
                rank_job *jobs = run_ranks(P, &tmpl);
                same_as(one, jobs, P, 1, harness_fmt("%s rounds of %zu x %zu", mechs[k].name, P, C));
                free(jobs);
            }
        free(one);
    }
    dpc_model_free(m);
    dpc_dataset_free(ds);
}

/* Bytes all ranks send in one step (doc/distributed.md): R rounds of the chunks, a agrees. */
static double step_bytes(size_t P, size_t d, const size_t *bound, size_t nchunks, size_t C)
{
    size_t R = (nchunks + P * C - 1) / (P * C);
    double agree = 24.0 * (double)(P - 1), D = 8.0 * (double)d;
    double chain = R ? D * (double)((P - 1) * R + R - 1) : 0.0;
    double scatter = R ? 8.0 * (double)(d - (bound[P] - bound[P - 1])) : 0.0;
    double gather = D * (double)(P - 1);
    size_t k0 = 0; /* chunks of rank 0 */
    for (size_t g0 = 0; g0 < nchunks; g0 += P * C) {
        size_t m = nchunks - g0 < P * C ? nchunks - g0 : P * C;
        k0 += m / P; /* floor(m (0 + 1) / P) - floor(0) */
    }
    double tele = 8.0 * (double)(P - 1) + 16.0 * (double)(nchunks - k0) + 24.0 * (double)(P - 1);
    return (double)(R + 1) * agree + chain + scatter + gather + tele;
}

static void test_bytes(void)
{
    dpc_dataset *ds = logistic_data(200, 5, 4);
    dpc_model *m = model_of("mlp:6", 5, 2);
    for (size_t P = 2; P <= 4; P++)
        for (size_t C = 1; C <= 3; C += 2) {
            rank_job tmpl = job_of(m, ds, NULL, &mechs[0]); /* Poisson: batch sizes vary */
            tmpl.cfg.epochs = 1;
            tmpl.round_chunks = C;
            rank_job *jobs = run_ranks(P, &tmpl);
            double want = 0.0;
            for (size_t t = 0; t < jobs[0].nsteps && t < 64; t++)
                want += step_bytes(P, 50, jobs[0].bound,
                                   (jobs[0].batches[t] + 3) / 4, C);
            want /= (double)jobs[0].nsteps;
            CHECK(jobs[0].st == DPC_OK && jobs[0].nsteps <= 64, "bytes run: %s", jobs[0].err.msg);
            for (size_t r = 0; r < P; r++)
                CHECK(jobs[r].info.bytes_per_step == want,
                      "P=%zu C=%zu rank %zu: %.1f bytes per step measured, formula %.1f", P, C,
                      r, jobs[r].info.bytes_per_step, want);
            free(jobs);
        }
    dpc_model_free(m);
    dpc_dataset_free(ds);
}

/* Saved with P ranks at the middle, resumed with Q ranks (0 = one process): the final
 * parameters are those of the uninterrupted single process. */
static void test_resume_across(void)
{
    dpc_dataset *ds = logistic_data(200, 5, 5), *test = logistic_data(100, 5, 6);
    dpc_model *m = model_of("mlp:6", 5, 2);
    char path[] = "/tmp/dpcorr_dist_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    static const size_t pairs[][2] = {{3, 2}, {2, 0}, {0, 4}, {4, 3}};
    for (size_t k = 1; k <= 3; k++) { /* blt, bsr (exported state), nu (regenerated) */
        rank_job tmpl = job_of(m, ds, test, &mechs[k]);
        rank_job *one = run_ranks(0, &tmpl);
        for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
            rank_job a = tmpl, b = tmpl;
            a.steps = 7;
            a.save = path;
            a.test = NULL;
            b.resume = path;
            b.cfg.threads = 2;
            a.piece = b.piece = i % 2 ? 0 : 5; /* checkpoint streams in pieces of 5 doubles */
            free(run_ranks(pairs[i][0], &a));
            rank_job *jobs = run_ranks(pairs[i][1], &b);
            same_as(one, jobs, pairs[i][1] ? pairs[i][1] : 1, 0,
                    harness_fmt("%s saved by %zu ranks, resumed by %zu", mechs[k].name,
                                pairs[i][0], pairs[i][1]));
            free(jobs);
        }
        free(one);
    }
    unlink(path);
    dpc_model_free(m);
    dpc_dataset_free(ds);
    dpc_dataset_free(test);
}

static void all_fail(const rank_job *jobs, size_t P, dpc_status st, const char *pat,
                     const char *what);

/* Rank r's shard of ds for P ranks: rows [floor(n r / P), floor(n (r + 1) / P)), as
 * dpc_data_load_spec_shard cuts them (rows given: first, count). */
static dpc_dataset *shard_of(const dpc_dataset *ds, size_t first, size_t count)
{
    size_t *idx = calloc(count, sizeof *idx);
    for (size_t i = 0; i < count; i++) idx[i] = first + i;
    dpc_dataset *s = NULL;
    dpc_error err = {0};
    CHECK(dpc_dataset_select(&s, ds, idx, count, &err) == DPC_OK, "select: %s", err.msg);
    free(idx);
    s->shard_first = first;
    s->shard_total = ds->n;
    return s;
}

static dpc_dataset **shards_of(const dpc_dataset *ds, size_t P)
{
    dpc_dataset **sh = calloc(P, sizeof *sh);
    for (size_t r = 0; r < P; r++) {
        size_t a = dpc_data_shard_row(ds->n, r, P), b = dpc_data_shard_row(ds->n, r + 1, P);
        sh[r] = shard_of(ds, a, b - a);
    }
    return sh;
}

static void shards_free(dpc_dataset **sh, size_t P)
{
    for (size_t r = 0; r < P; r++) dpc_dataset_free(sh[r]);
    free(sh);
}

/* Each rank holds only its rows: parameters, telemetry, evaluation and ledger bit-identical to
 * one process holding every row, for P = 2, 3 (1-2 threads, the trainer's rounds and one chunk
 * per rank per round), and a checkpoint of a sharded run resumes in one process with the whole
 * set (the content hash is the whole set's). */
static void test_sharded(void)
{
    dpc_dataset *ds = logistic_data(203, 5, 11), *test = logistic_data(100, 5, 12);
    dpc_model *m = model_of("mlp:6", 5, 2);
    char path[] = "/tmp/dpcorr_dist_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    for (size_t k = 0; k < NMECH; k++) {
        rank_job tmpl = job_of(m, ds, test, &mechs[k]);
        rank_job *one = run_ranks(0, &tmpl);
        CHECK(one->st == DPC_OK, "%s one process: %s", mechs[k].name, one->err.msg);
        for (size_t P = 2; P <= 3; P++) {
            dpc_dataset **sh = shards_of(ds, P);
            for (size_t v = 0; v < 3; v++) {
                rank_job t = tmpl;
                t.shards = sh;
                t.cfg.threads = v == 1 ? 2 : 1;
                t.round_chunks = v == 2 ? 1 : 0;
                rank_job *jobs = run_ranks(P, &t);
                same_as(one, jobs, P, 1,
                        harness_fmt("%s sharded P=%zu variant %zu", mechs[k].name, P, v));
                free(jobs);
            }
            if (k >= 1 && k <= 2) { /* saved by sharded ranks, resumed by one whole process */
                rank_job a = tmpl, b = tmpl;
                a.shards = sh;
                a.steps = 7;
                a.save = path;
                a.test = NULL;
                b.resume = path;
                free(run_ranks(P, &a));
                rank_job *jobs = run_ranks(0, &b);
                same_as(one, jobs, 1, 0,
                        harness_fmt("%s saved by %zu sharded ranks, resumed whole",
                                    mechs[k].name, P));
                free(jobs);
            }
            shards_free(sh, P);
        }
        free(one);
    }
    unlink(path);
    /* refusals: shards that do not tile the set, a shard next to a whole copy, a shard alone */
    rank_job tmpl = job_of(m, ds, NULL, &mechs[1]);
    dpc_dataset **sh = shards_of(ds, 2), *swapped[2] = {sh[1], sh[0]}, *mixed[2] = {ds, sh[1]};
    tmpl.shards = swapped;
    rank_job *jobs = run_ranks(2, &tmpl);
    all_fail(jobs, 2, DPC_E_STATE, "rank 0 holds rows", "shards in the wrong order");
    free(jobs);
    tmpl.shards = mixed;
    jobs = run_ranks(2, &tmpl);
    all_fail(jobs, 2, DPC_E_STATE, "rank 1 holds a shard where rank 0 does not", "mixed");
    free(jobs);
    tmpl.shards = NULL;
    tmpl.ds = sh[0];
    jobs = run_ranks(0, &tmpl);
    all_fail(jobs, 1, DPC_E_INVALID, "a shard of a training set trains only", "shard alone");
    CHECK(!strcmp(jobs[0].err.field, "train"), "shard alone: field '%s'", jobs[0].err.field);
    free(jobs);
    shards_free(sh, 2);
    dpc_model_free(m);
    dpc_dataset_free(ds);
    dpc_dataset_free(test);
}

static void all_fail(const rank_job *jobs, size_t P, dpc_status st, const char *pat,
                     const char *what)
{
    for (size_t r = 0; r < P; r++)
        CHECK(jobs[r].st == st && strstr(jobs[r].err.msg, pat),
              "%s rank %zu: status %d, message '%s' (want %d, '%s')", what, r, (int)jobs[r].st,
              jobs[r].err.msg, (int)st, pat);
}

static void test_failures(void)
{
    dpc_dataset *ds = logistic_data(200, 5, 8), *other = logistic_data(200, 5, 9);
    dpc_model *m = model_of("mlp:6", 5, 2);
    /* a NaN example: the rank whose chunk holds it is named, every rank fails */
    dpc_dataset *bad = logistic_data(200, 5, 8);
    rank_job tmpl = job_of(m, bad, NULL, &mechs[1]);
    tmpl.cfg.sampler = DPC_SAMPLER_FIXED;
    bad->x[5 * 157 + 2] = NAN;
    rank_job *one = run_ranks(0, &tmpl);
    CHECK(one->st != DPC_OK && strstr(one->err.msg, "training record 157 "),
          "one process: the record at fault named: %s", one->err.msg);
    rank_job *jobs = run_ranks(3, &tmpl);
    const char *p = strstr(jobs[0].err.msg, "rank ");
    CHECK(p && strstr(jobs[0].err.msg, one->err.msg), "NaN example: '%s' names a rank and '%s'",
          jobs[0].err.msg, one->err.msg);
    for (size_t r = 1; r < 3; r++)
        CHECK(jobs[r].st == one->st && !strcmp(jobs[r].err.msg, jobs[0].err.msg),
              "rank %zu reports the same failure: %s", r, jobs[r].err.msg);
    free(one);
    free(jobs);
    /* one rank with another data set: refused at construction on every rank, naming it */
    rank_job a = job_of(m, ds, NULL, &mechs[0]);
    local_net *net = local_net_new(3);
    rank_job js[3];
    for (size_t r = 0; r < 3; r++) {
        js[r] = a;
        js[r].net = net;
        js[r].rank = r;
        js[r].ds = r == 2 ? other : ds;
    }
    local_run(3, rank_main, js, sizeof js[0]);
    all_fail(js, 3, DPC_E_STATE, "rank 2 runs another run", "other data");
    local_net_free(net);
    /* a budget that cannot be met: rank 0's accountant says so to every rank, unprefixed */
    rank_job b = job_of(m, ds, NULL, &mechs[3]);
    b.cfg.epsilon = 1e-9;
    b.cfg.delta = 1e-13;
    jobs = run_ranks(2, &b);
    all_fail(jobs, 2, DPC_E_PRIVACY, "epsilon: ", "privacy");
    CHECK(strncmp(jobs[1].err.msg, "rank", 4) != 0, "the run's error is not a rank's: %s",
          jobs[1].err.msg);
    free(jobs);
    /* an unwritable checkpoint: every rank fails with rank 0's message */
    a.steps = 3;
    a.save = "/nonexistent-dir/ck.bin";
    jobs = run_ranks(3, &a);
    all_fail(jobs, 3, DPC_E_IO, "/nonexistent-dir/ck.bin", "checkpoint");
    free(jobs);
    /* a rank that stops answering: the others fail naming it instead of waiting */
    a.save = NULL;
    a.steps = SIZE_MAX;
    net = local_net_new(3);
    for (size_t r = 0; r < 3; r++) {
        js[r] = a;
        js[r].net = net;
        js[r].rank = r;
        js[r].die_at = r == 1 ? 4 : SIZE_MAX;
    }
    local_run(3, rank_main, js, sizeof js[0]);
    CHECK(strstr(js[0].err.msg, "rank 1 is gone") || strstr(js[2].err.msg, "rank 1 is gone"),
          "lost peer named: '%s', '%s'", js[0].err.msg, js[2].err.msg);
    for (size_t r = 0; r < 3; r += 2)
        CHECK(js[r].st == DPC_E_IO && strstr(js[r].err.msg, "is gone"), "lost peer, rank %zu: %s",
              r, js[r].err.msg);
    local_net_free(net);
    dpc_model_free(m);
    dpc_dataset_free(ds);
    dpc_dataset_free(other);
    dpc_dataset_free(bad);
}

typedef struct coll_job {
    local_net *net;
    size_t rank;
    dpc_status st, got;
    dpc_error err;
    double buf[3];
} coll_job;

static void *coll_main(void *a)
{
    coll_job *j = a;
    const dpc_transport *tp = &j->net->tp[j->rank];
    if (j->rank == 2) dpc_error_param(&j->err, DPC_E_FORMAT, "data", "bad line 3");
    j->got = dpc_transport_agree(tp, j->rank == 2 ? DPC_E_FORMAT : DPC_OK, &j->err);
    if (j->rank == 1) {
        j->buf[0] = 1.5;
        j->buf[1] = -2.0;
        j->buf[2] = 1e300;
    }
    j->st = dpc_transport_bcast(tp, 1, j->buf, sizeof j->buf, &j->err);
    return NULL;
}

static void test_collectives(void)
{
    local_net *net = local_net_new(4);
    coll_job js[4];
    memset(js, 0, sizeof js);
    for (size_t r = 0; r < 4; r++) {
        js[r].net = net;
        js[r].rank = r;
    }
    local_run(4, coll_main, js, sizeof js[0]);
    for (size_t r = 0; r < 4; r++) {
        CHECK(js[r].got == DPC_E_FORMAT && !strcmp(js[r].err.msg, "rank 2: data: bad line 3") &&
                  !strcmp(js[r].err.field, "data"),
              "agree, rank %zu: %d '%s' field '%s'", r, (int)js[r].got, js[r].err.msg,
              js[r].err.field);
        CHECK(js[r].st == DPC_OK && js[r].buf[0] == 1.5 && js[r].buf[1] == -2.0 &&
                  js[r].buf[2] == 1e300,
              "bcast from rank 1 to rank %zu", r);
    }
    CHECK(local_net_pending(net) == 0, "collectives leave no message");
    local_net_free(net);
    /* one process: agree returns the status, bcast does nothing */
    dpc_error err = {0};
    CHECK(dpc_transport_agree(NULL, DPC_E_IO, &err) == DPC_E_IO, "agree without transport");
    dpc_transport bad = {3, 2, NULL, NULL};
    CHECK(dpc_transport_agree(&bad, DPC_OK, &err) == DPC_E_INVALID &&
              !strcmp(err.field, "transport"),
          "rank >= size refused: %s", err.msg);
}

/* Accounting runs once: rank 0 answers epsilon_at, the others refuse. */
typedef struct eps_job {
    local_net *net;
    size_t rank;
    const dpc_model *m;
    const dpc_dataset *ds;
    dpc_status st;
    double eps;
} eps_job;

static void *eps_main(void *a)
{
    eps_job *j = a;
    dpc_train_config c;
    base_config(&c, &mechs[3]);
    c.transport = &j->net->tp[j->rank];
    dpc_rng rng;
    dpc_rng_seed(&rng, 3);
    dpc_trainer *tr = NULL;
    dpc_error err = {0};
    j->st = dpc_trainer_new(&tr, j->m, j->ds, NULL, &c, &rng, &err);
    if (!j->st) j->st = dpc_trainer_epsilon_at(tr, 5, &j->eps, &err);
    dpc_trainer_free(tr);
    return NULL;
}

static void test_epsilon_at(void)
{
    dpc_dataset *ds = logistic_data(200, 5, 10);
    dpc_model *m = model_of("logistic", 5, 2);
    local_net *net = local_net_new(2);
    eps_job js[2] = {{net, 0, m, ds, DPC_OK, 0}, {net, 1, m, ds, DPC_OK, 0}};
    local_run(2, eps_main, js, sizeof js[0]);
    CHECK(js[0].st == DPC_OK && js[0].eps > 0, "rank 0 answers epsilon_at");
    CHECK(js[1].st == DPC_E_UNSUPPORTED, "rank 1 refuses epsilon_at");
    local_net_free(net);
    dpc_model_free(m);
    dpc_dataset_free(ds);
}

int main(void)
{
    test_collectives();
    test_bit_identical();
    test_rounds();
    test_bytes();
    test_resume_across();
    test_failures();
    test_sharded();
    test_epsilon_at();
    return TEST_SUMMARY();
}
