/* audit_cli.h — `dpcorr audit` (tools/cmd_audit.c) and its epsilon study (tools/audit_study.c):
 * the options, one audited run as the CLI performs it, its report. The library decides
 * (dpcorr/audit.h); these files parse and print. */
#ifndef DPCORR_TOOLS_AUDIT_CLI_H
#define DPCORR_TOOLS_AUDIT_CLI_H

#include "train_run.h"
#include "dpcorr/audit.h"

typedef struct audit_opts {
    train_opts t;        /* every option of `dpcorr train` (data, model, mechanism, sampler,
                            privacy, optimizer, execution, --report, --plot, --quiet) */
    dpc_audit_config ac; /* --canaries, --canary, --guesses, --guesses-bottom, --confidence */
    int json;            /* --json: the result as JSON on stdout */
    int quick;           /* --quick */
    const char *study;   /* --study DIR: the epsilon study instead of one audit */
} audit_opts;

/* One audit of the configuration in o (data and model already loaded). 0 or a CLI exit code. */
int audit_one(audit_opts *o, const dpc_dataset *train, const dpc_dataset *test,
              const dpc_model *model, dpc_audit_result *res);

/* The result as one JSON object (required keys first, then the details). */
void audit_json(FILE *f, const audit_opts *o, const dpc_audit_result *r, const char *indent);

/* `--study DIR`: lower bound vs claimed epsilon (1, 2, 4, 8, 16) for DP-SGD and two correlated
 * mechanisms; table on stdout, DIR/audit_study.{csv,json,png}. */
int audit_study(audit_opts *o, const dpc_dataset *train, const dpc_dataset *test,
                const dpc_model *model);

#endif
