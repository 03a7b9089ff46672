/* run.c — one audited training run (dpc_audit_run): canaries, the real trainer with its canary
 * hook, the released trajectory, scores and the one-run bound. See dpcorr/audit.h. */
#include "audit/audit_internal.h"
#include "common/util.h"
#include "dpcorr/io.h"
#include "field/field_def.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const canary_names[] = {"gradient", "mislabel", "ood"};

const char *dpc_audit_canary_name(dpc_audit_canary c)
{
    return (unsigned)c < 3 ? canary_names[c] : "unknown";
}

dpc_status dpc_audit_canary_parse(const char *s, dpc_audit_canary *out, dpc_error *err)
{
    for (int k = 0; k < 3; k++)
        if (s && !strcmp(s, canary_names[k])) {
            *out = (dpc_audit_canary)k;
            return DPC_OK;
        }
    return dpc_error_param(err, DPC_E_INVALID, "canary",
                           "unknown '%s' (expected gradient, mislabel or ood)", s ? s : "(null)");
}

/* The manual of dpc_audit_config, one row per field in struct order (dpcorr/audit.h). */
#define AC(m) DPC_FIELD_AT(dpc_audit_config, m)
static const dpc_field ac_fields[] = {
    {.name = "canary", .type = DPC_FIELD_ENUM, AC(canary), .def = DPC_AUDIT_GRADIENT,
     DPC_FIELD_NAMES(canary_names),
     .doc = "gradient (white-box Dirac gradients), mislabel or ood (black-box examples)"},
    {.name = "canaries", .type = DPC_FIELD_SIZE, AC(canaries), .def = 1000, .lo = 1,
     .hi = 16777216, /* 2^24 */
     .doc = "m canaries; gradient: at most the model's parameters, mislabel: below the "
            "training examples"},
    {.name = "confidence", .type = DPC_FIELD_DOUBLE, AC(confidence), .def = 0.95, .lo = 0,
     .hi = 1, .flags = DPC_FIELD_LO_OPEN | DPC_FIELD_HI_OPEN,
     .doc = "confidence of the one-run lower bound on epsilon"},
    /* a guess size, when set, is at least 1 and at most the canaries' most (2^24) */
    {.name = "k_plus", .type = DPC_FIELD_SIZE, AC(k_plus), .lo = 1, .hi = 16777216,
     .flags = DPC_FIELD_UNSET_ZERO,
     .def_text = "the grid of dpc_audit_bound",
     .doc = "positive guesses, k_plus + k_minus <= canaries (0, 0: the bound's grid)"},
    {.name = "k_minus", .type = DPC_FIELD_SIZE, AC(k_minus), .lo = 1, .hi = 16777216,
     .flags = DPC_FIELD_UNSET_ZERO,
     .def_text = "the grid of dpc_audit_bound",
     .doc = "negative guesses (0, 0 with k_plus: the bound's grid)"},
    {.name = "activity_examples", .type = DPC_FIELD_SIZE, AC(activity_examples), .def = 256,
     .flags = DPC_FIELD_NO_RANGE,
     .doc = "gradient: real examples ranking the coordinates (0: ranked by the key alone)"},
    {.name = "calibration", .type = DPC_FIELD_BYTES, AC(calibration), .flags = DPC_FIELD_RUNTIME,
     .def_text = "none",
     .doc = "dpc_progress of the trainer's calibration (fn NULL: no reports)"},
};
#undef AC
static const dpc_field_table ac_table = DPC_FIELD_TABLE(dpc_audit_config, ac_fields);

const dpc_field_table *dpc_audit_config_fields(void) { return &ac_table; }

void dpc_audit_config_init(dpc_audit_config *c)
{
    dpc_field_defaults(&ac_table, c);
}

dpc_status dpc_audit_config_check(const dpc_audit_config *c, dpc_error *err)
{
    if (!c) return dpc_error_param(err, DPC_E_INVALID, "config", "NULL");
    dpc_status st = dpc_field_check(&ac_table, c, err); /* every row's range */
    if (st) return st;
    if (c->k_plus > c->canaries || c->k_minus > c->canaries - c->k_plus)
        return dpc_error_param(err, DPC_E_INVALID, "k_plus",
                               "k_plus + k_minus = %zu + %zu exceeds the %zu canaries", c->k_plus,
                               c->k_minus, c->canaries);
    return DPC_OK;
}

void dpc_audit_result_free(dpc_audit_result *r)
{
    if (!r) return;
    free(r->scores);
    free(r->in);
    r->scores = NULL;
    r->in = NULL;
}

/* The state of one audit, freed as a whole. */
typedef struct audit_run {
    dpc__canaries cn;
    dpc_trainer *tr;
    dpc_mech *mech;
    dpc_audit_scorer *scorer;
    double *params0; /* (P) the initial parameters (public) */
    double *theta;   /* GRADIENT: (n + 1, m) the canary coordinates along the trajectory */
    double *lr;      /* (n) */
    size_t *steps;   /* (n) opportunities of one canary */
} audit_run;

static void audit_run_free(audit_run *a)
{
    dpc_trainer_free(a->tr);
    dpc_mech_free(a->mech);
    dpc_audit_scorer_free(a->scorer);
    free(a->params0);
    free(a->theta);
    free(a->lr);
    free(a->steps);
    dpc__canaries_free(&a->cn);
}

/* GRADIENT: the coordinates, the scorer of the run's mechanism at its claimed noise, buffers. */
static dpc_status prepare_gradient(audit_run *a, const dpc_audit_config *ac,
                                   const dpc_model *model, const dpc_rng *rng, dpc_error *err)
{
    const dpc_train_config *rc = dpc_trainer_config(a->tr);
    const dpc_ledger *L = dpc_trainer_ledger(a->tr);
    size_t n = dpc_trainer_steps_total(a->tr), m = a->cn.m, cells;
    a->cn.clip = rc->clip;
    dpc_status st = dpc__canaries_coords(&a->cn, model, a->params0, ac->activity_examples, rng, err);
    if (!st) st = dpc_mech_new(&a->mech, &rc->mech, err);
    if (!st) st = dpc_audit_scorer_new(&a->scorer, a->mech, L->noise_std * rc->clip, rc->clip, err);
    if (st) return st;
    if (!dpc__mul_ok(n + 1, m, &cells) || cells > ((size_t)1 << 28))
        return dpc_error_param(err, DPC_E_RANGE, "canaries",
                               "%zu canaries x %zu steps exceed the trajectory buffer (2^28 values)",
                               m, n);
    a->theta = dpc__malloc_array(cells, sizeof(double));
    if (!a->theta) return DPC__NOMEM(err, "audit trajectory");
    return DPC_OK;
}

/* theta row t <- the canary coordinates of the current parameters. */
static void record(audit_run *a, size_t t)
{
    const double *p = dpc_trainer_params(a->tr);
    double *row = a->theta + t * a->cn.m;
    for (size_t i = 0; i < a->cn.m; i++) row[i] = p[a->cn.coord[i]];
}

typedef struct train_hook {
    audit_run *a;
    dpc_audit_progress_fn progress;
    void *ctx;
    size_t n;
} train_hook;

/* After update t: its learning rate, the canary coordinates, then the caller's progress. */
static int on_step(void *ctx, const void *vinfo, size_t t)
{
    const train_hook *h = ctx;
    const dpc_step_info *info = vinfo;
    h->a->lr[t - 1] = info->lr;
    if (h->a->theta) record(h->a, t);
    return h->progress && h->progress(h->ctx, info, h->n);
}

static dpc_status train(audit_run *a, dpc_audit_progress_fn progress, void *ctx, dpc_error *err)
{
    train_hook th = {a, progress, ctx, dpc_trainer_steps_total(a->tr)};
    if (a->theta) record(a, 0);
    dpc_step_info info;
    dpc_run r = dpc_trainer_run_ops(a->tr);
    dpc_run_hooks h = {.ctx = &th, .on_step = on_step};
    dpc_run_outcome o;
    dpc_status st = dpc_run_drive(&r, &info, NULL, &h, &o, err);
    if (o.end == DPC_RUN_CANCELLED)
        return dpc_error_set(err, DPC_E_STATE, "audit: cancelled at step %zu", o.steps_done);
    return st;
}

/* GRADIENT scores: the released sums at the canary coordinates, then each canary's LLR over
 * what the schedule makes public about it. */
static dpc_status gradient_scores(audit_run *a, double *scores, double *mu_max, dpc_error *err)
{
    const dpc_train_config *rc = dpc_trainer_config(a->tr);
    const dpc_ledger *L = dpc_trainer_ledger(a->tr);
    const dpc_sampler *smp = dpc_trainer_sampler(a->tr);
    dpc_sampler_desc sd;
    dpc_sampler_describe(smp, &sd);
    size_t n = dpc_trainer_steps_total(a->tr), m = a->cn.m;
    double *Y = dpc__malloc_array(n * m, sizeof *Y), *y = dpc__malloc_array(n, sizeof *y);
    dpc_status st = Y && y ? DPC_OK : DPC__NOMEM(err, "audit scores");
    if (!st)
        st = dpc_audit_unroll(a->theta, n, m, a->lr, rc->momentum, rc->weight_decay,
                              L->expected_batch, Y, err);
    *mu_max = NAN;
    for (size_t i = 0; !st && i < m; i++) {
        size_t cnt;
        int certain;
        st = dpc_sampler_opportunities(smp, a->cn.first + i, a->steps, &cnt, &certain, err);
        for (size_t t = 0; !st && t < n; t++) y[t] = Y[t * m + i];
        double q = certain ? 1.0 : sd.q;
        if (!st && sd.balls_in_bins)
            st = dpc_audit_score_cyclic(a->scorer, y, sd.part.b, &scores[i], err);
        else if (!st)
            st = dpc_audit_score(a->scorer, y, a->steps, cnt, q, &scores[i], err);
        if (!st && certain) {
            double mu;
            st = dpc_audit_scorer_mu(a->scorer, a->steps, cnt, &mu, err);
            if (!st && !(mu <= *mu_max)) *mu_max = mu;
        }
    }
    free(Y);
    free(y);
    return st;
}

static void describe(dpc_audit_result *out, const dpc_audit_config *ac,
                     const dpc_sampler_desc *sd)
{
    snprintf(out->method, sizeof out->method,
             "one-run audit (Steinke, Nasr & Jagielski 2023): top/bottom-k guesses, %s",
             ac->k_plus || ac->k_minus ? "one guess size" : "Bonferroni over the guess grid");
    if (ac->canary != DPC_AUDIT_GRADIENT)
        snprintf(out->statistic, sizeof out->statistic,
                 "black-box: loss(initial model) - loss(final model)");
    else if (sd->balls_in_bins)
        snprintf(out->statistic, sizeof out->statistic,
                 "white-box LLR of the whitened trajectory, mixture over the secret bins");
    else if (sd->poisson)
        snprintf(out->statistic, sizeof out->statistic,
                 "white-box LLR of the whitened trajectory, Poisson opportunities");
    else
        snprintf(out->statistic, sizeof out->statistic,
                 "white-box LLR of the whitened trajectory, public participation (C^T C x)");
}

static dpc_status audit(audit_run *a, const dpc_audit_config *ac, const dpc_model *model,
                        const dpc_dataset *test, const dpc_rng *rng,
                        dpc_audit_progress_fn progress, void *ctx, dpc_audit_result *out,
                        dpc_error *err)
{
    size_t P = dpc_model_num_params(model), n = dpc_trainer_steps_total(a->tr), m = a->cn.m;
    a->params0 = dpc__malloc_array(P, sizeof(double));
    a->lr = dpc__malloc_array(n, sizeof(double));
    a->steps = dpc__malloc_array(n, sizeof(size_t));
    out->scores = dpc__malloc_array(m, sizeof(double));
    out->in = dpc__malloc_array(m, 1);
    if (!a->params0 || !a->lr || !a->steps || !out->scores || !out->in)
        return DPC__NOMEM(err, "audit");
    memcpy(a->params0, dpc_trainer_params(a->tr), P * sizeof(double));
    memcpy(out->in, a->cn.in, m);
    dpc_status st = DPC_OK;
    if (ac->canary == DPC_AUDIT_GRADIENT) st = prepare_gradient(a, ac, model, rng, err);
    if (!st) st = train(a, progress, ctx, err);
    out->mu_max = NAN;
    if (!st && ac->canary == DPC_AUDIT_GRADIENT) st = gradient_scores(a, out->scores, &out->mu_max, err);
    else if (!st)
        st = dpc__canaries_loss_scores(&a->cn, model, a->params0, dpc_trainer_params(a->tr),
                                       out->scores, err);
    const dpc_ledger *L = dpc_trainer_ledger(a->tr);
    if (!st)
        st = dpc_audit_bound(out->scores, out->in, m, ac->k_plus, ac->k_minus, L->delta,
                             ac->confidence, &out->bound, err);
    out->test_loss = out->test_accuracy = NAN;
    if (!st && test) st = dpc_trainer_evaluate(a->tr, test, &out->test_loss, &out->test_accuracy, err);
    if (st) return st;
    out->ledger = *L;
    out->canary = ac->canary;
    out->canaries = m;
    out->examples = a->cn.data->n;
    for (size_t i = 0; i < m; i++) out->included += out->in[i];
    dpc_sampler_desc sd;
    dpc_sampler_describe(dpc_trainer_sampler(a->tr), &sd);
    describe(out, ac, &sd);
    return DPC_OK;
}

/* The argument checks shared by dpc_audit_run and dpc_audit_resolve. */
static dpc_status check_args(const dpc_audit_config *ac, const dpc_train_config *tc,
                             const dpc_model *model, const dpc_dataset *train, const dpc_rng *rng,
                             dpc_error *err)
{
    dpc_status st = dpc_audit_config_check(ac, err);
    if (st) return st;
    if (!tc || !model || !train || !rng)
        return dpc_error_param(err, DPC_E_INVALID, !tc ? "train_config" : !model ? "model"
                                                   : !train ? "train" : "rng", "NULL");
    if (tc->canaries)
        return dpc_error_param(err, DPC_E_INVALID, "canaries",
                               "the trainer's canary hook is the audit's to set (got one)");
    return dpc__canaries_fit_model(ac->canary, ac->canaries, model, err);
}

dpc_status dpc_audit_resolve(const dpc_audit_config *ac, const dpc_train_config *tc,
                             const dpc_model *model, const dpc_dataset *train, const dpc_rng *rng,
                             dpc_train_config *out, size_t *examples, dpc_error *err)
{
    if (!out || !examples) return dpc_error_param(err, DPC_E_INVALID, !out ? "out" : "examples", "NULL");
    dpc_status st = check_args(ac, tc, model, train, rng, err);
    if (st) return st;
    dpc__canaries cn;
    st = dpc__canaries_build(&cn, ac, train, rng, err);
    if (st) return st;
    st = dpc_train_config_resolve(tc, cn.data, out, err);
    *examples = cn.data->n;
    dpc__canaries_free(&cn);
    return st;
}

dpc_status dpc_audit_run(const dpc_audit_config *ac, const dpc_train_config *tc,
                         const dpc_model *model, const dpc_dataset *train,
                         const dpc_dataset *test, const dpc_rng *rng,
                         dpc_audit_progress_fn progress, void *ctx, dpc_audit_result *out,
                         dpc_error *err)
{
    if (!out) return dpc_error_param(err, DPC_E_INVALID, "out", "NULL");
    memset(out, 0, sizeof *out);
    dpc_status st = check_args(ac, tc, model, train, rng, err);
    if (st) return st;
    audit_run a;
    memset(&a, 0, sizeof a);
    st = dpc__canaries_build(&a.cn, ac, train, rng, err);
    if (st) return st;
    dpc_train_config cfg = *tc;
    dpc_train_canaries hook = {a.cn.first, a.cn.m, a.cn.in,
                               ac->canary == DPC_AUDIT_GRADIENT ? dpc__canary_add_gradient : NULL,
                               &a.cn};
    cfg.canaries = &hook;
    st = dpc_trainer_new_progress(&a.tr, model, a.cn.data, test, &cfg, rng, ac->calibration, err);
    if (!st) st = audit(&a, ac, model, test, rng, progress, ctx, out, err);
    audit_run_free(&a);
    if (st) dpc_audit_result_free(out);
    return st;
}

void dpc_audit_result_json(dpc_json_writer *w, const dpc_audit_result *r)
{
    const dpc_audit_bound_result *b = &r->bound;
    dpc_json_num(w, "epsilon", r->ledger.epsilon);
    dpc_json_num(w, "delta", r->ledger.delta);
    dpc_json_num(w, "epsilon_lower_bound", b->epsilon);
    dpc_json_num(w, "confidence", b->confidence);
    dpc_json_int(w, "canaries", (long long)r->canaries);
    dpc_json_int(w, "guesses", (long long)b->guesses);
    dpc_json_int(w, "correct", (long long)b->correct);
    dpc_json_str(w, "method", r->method);
    dpc_json_str(w, "canary", dpc_audit_canary_name(r->canary));
    dpc_json_str(w, "statistic", r->statistic);
    dpc_json_int(w, "included", (long long)r->included);
    dpc_json_int(w, "k_plus", (long long)b->k_plus);
    dpc_json_int(w, "k_minus", (long long)b->k_minus);
    dpc_json_int(w, "candidates", (long long)b->candidates);
    dpc_json_num(w, "significance", b->significance);
    dpc_json_num(w, "p_value", b->p_value);
    dpc_json_num(w, "mu_max", r->mu_max);
    dpc_json_int(w, "examples", (long long)r->examples);
    dpc_json_num(w, "test_accuracy", r->test_accuracy);
}
