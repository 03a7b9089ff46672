/* audit_cli.h — `dpcorr audit` (tools/cmd_audit.c) and its epsilon study (tools/audit_study.c):
 * the options, one audited run as the CLI performs it, its JSON. The library decides
 * (dpcorr/audit.h); these files parse and print. The options of the audited run are those of
 * `dpcorr train` (TRAIN_RUN_OPTS, read by train_read_run). */
#ifndef DPCORR_TOOLS_AUDIT_CLI_H
#define DPCORR_TOOLS_AUDIT_CLI_H

#include "train_run.h"
#include "dpcorr/audit.h"

typedef struct audit_opts {
    train_opts t;        /* every run option of `dpcorr train` (data, model, features,
                            mechanism, sampler, privacy, optimizer, execution, the frame) */
    dpc_audit_config ac; /* --canaries, --canary, --guesses, --guesses-bottom, --confidence */
    int json;            /* --json: the result as JSON on stdout */
    int quick;           /* --quick */
    const char *study;   /* --study DIR: the epsilon study instead of one audit */
    char model_spec[DPC_MODEL_SPEC_LEN]; /* the model as built (train_prepare) */
} audit_opts;

/* One audit of the configuration in o (data and model prepared). s: for error mapping. 0 or a
 * CLI exit code (message printed); on success *res is the caller's to free. */
int audit_one(audit_opts *o, opt_set *s, const dpc_model *model, dpc_audit_result *res);

/* The members of one audit's JSON object: the keys of the issue first (epsilon, delta,
 * epsilon_lower_bound, confidence, canaries, guesses, correct, method), then the details and the
 * ledger. */
void audit_json_fields(dpc_json_writer *w, const audit_opts *o, const dpc_audit_result *r);

/* `--study DIR`: lower bound vs claimed epsilon (1, 2, 4, 8, 16) for DP-SGD and two correlated
 * mechanisms; table on stdout, DIR/audit_study.{csv,json,png} (DIR created by the caller). */
int audit_study(audit_opts *o, opt_set *s, const dpc_model *model);
/* --dry-run --study: the study's configurations as the library resolves them. */
int audit_study_dry(audit_opts *o, opt_set *s, const dpc_model *model);

#endif
