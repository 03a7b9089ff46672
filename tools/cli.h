/* cli.h — shared helpers of the dpcorr command-line tool (not part of the library).
 *
 * Conventions: options are "--name value" or "--name=value"; every subcommand has --help; a bad
 * value prints "dpcorr <cmd>: --name: <why>" on stderr and the command exits with code 2.
 * Runtime failures exit 1. Results go to stdout; progress and warnings to stderr. */
#ifndef DPCORR_TOOLS_CLI_H
#define DPCORR_TOOLS_CLI_H

#include "dpcorr.h"
#include "dpcorr/mech.h"

#include <stdio.h>

#define CLI_USAGE 2
#define CLI_RUNTIME 1

/* Option iterator over argv[first..argc). */
typedef struct cli_iter {
    int argc;
    char **argv;
    int i;
    const char *cmd;     /* "mech", "account", ... for messages */
    const char *name;    /* current option name without the value ("--steps") */
    const char *value;   /* its value, NULL for a flag (resolved by cli_value) */
    char namebuf[64];
    const char *inline_value;
} cli_iter;

void cli_iter_init(cli_iter *it, const char *cmd, int argc, char **argv, int first);
/* Advances to the next option; returns 0 at the end. Positional words are reported with
 * name = the word itself and value = NULL. */
int cli_next(cli_iter *it);
/* Fetches the value of the current option (from "=v" or the next argv word); on a missing value
 * prints an error and returns NULL. */
const char *cli_value(cli_iter *it);
int cli_is(const cli_iter *it, const char *name);

/* Prints "dpcorr <cmd>: <message>" to stderr and returns CLI_USAGE. */
int cli_fail(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Instruction-set level (dpcorr/isa.h) from the environment: DPCORR_ISA=sse2|avx2|avx512 forces
 * a level, unset (or auto) means the best this CPU runs. cli_isa_check prints a message naming
 * DPCORR_ISA and returns CLI_USAGE for an unknown name or a level this CPU lacks (dpcorr's main
 * calls it first); cli_isa returns the resolved level (after a successful check). */
int cli_isa_check(void);
dpc_isa cli_isa(void);
/* dpc_model_parse then dpc_model_new at the level cli_isa(); *cfg (may be NULL) receives the
 * parsed configuration. */
dpc_status cli_model_new(dpc_model **m, dpc_model_config *cfg, const char *spec, size_t n_in,
                         size_t n_classes, dpc_error *err);

/* Strict number parsing (whole string, finite). Return 0 on success, CLI_USAGE after printing
 * "dpcorr <cmd>: <opt>: expected ..., got '<s>'". */
int cli_double(const cli_iter *it, const char *s, double *out);
int cli_size(const cli_iter *it, const char *s, size_t *out);
int cli_u64(const cli_iter *it, const char *s, uint64_t *out);
/* Comma-separated list of finite doubles; *out is malloc'ed (caller frees). */
int cli_double_list(const cli_iter *it, const char *s, double **out, size_t *n);

/* ---- Mechanism options shared by `mech`, `account` and `train` -------------------------- */
typedef struct cli_mech_opts {
    dpc_mech_params p;
    int have_kind;
    dpc_participation part;
    dpc_noise_form form;
    double *theta, *omega, *coeffs, *dense; /* owned */
    size_t ntheta, nomega;
    int workload_set;  /* --mech-momentum/--mech-decay given */
    const char *coeffs_path;
    const char *strategy_path;   /* kind "file:PATH": a strategy file (dpcorr/strategy.h) */
    struct dpc_strategy *strategy; /* owned, loaded by cli_mech_finish */
} cli_mech_opts;

void cli_mech_opts_init(cli_mech_opts *o);
void cli_mech_opts_free(cli_mech_opts *o);
/* If the current option is a mechanism option (kind_opt names the kind option: "--kind" for
 * `mech`, "--mech" elsewhere), consumes it and returns 1 (or CLI_USAGE+1... see below).
 * Returns: 0 = not a mechanism option, 1 = consumed, -1 = bad value (message printed). */
int cli_mech_opt(cli_mech_opts *o, cli_iter *it, const char *kind_opt);
/* Loads --coeffs files, validates; on failure prints the message and returns CLI_USAGE. */
int cli_mech_finish(cli_mech_opts *o, const char *cmd, const char *kind_opt);
/* Help lines for the mechanism options. */
void cli_mech_help(FILE *f, const char *kind_opt);

/* JSON output helpers (numbers with %.17g; non-finite as null... infinities as strings). */
void cli_json_num(FILE *f, const char *key, double v, int comma);
void cli_json_str(FILE *f, const char *key, const char *v, int comma);
void cli_json_int(FILE *f, const char *key, long long v, int comma);
void cli_json_bool(FILE *f, const char *key, int v, int comma);

/* Subcommands. */
int cmd_mech(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_account(int argc, char **argv);
int cmd_theory(int argc, char **argv);
int cmd_repro(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_demo(int argc, char **argv);
/* `train --algo NAME` (tools/train_algos.c): the runner for NAME, NULL for the default trainer;
 * *bad = 1 (message printed) for an unknown name. */
int (*train_algo_lookup(int argc, char **argv, int *bad))(int, char **);
void train_algos_help(FILE *f);
/* `train --algo dp-ambssgd | dp-ssgd` (tools/train_linreg.c): papers/001. */
int train_linreg_ambssgd(int argc, char **argv);
int train_linreg_ssgd(int argc, char **argv);
/* `train --algo lcgd-projected` (tools/train_kan.c): the KAN paper's projected DP-lambda-CGD. */
int train_lcgd_projected(int argc, char **argv);
/* `train --algo dp-srgd` (tools/train_srgd.c). */
int train_srgd(int argc, char **argv);
/* `mech optimize` (tools/cmd_optimize.c); argv[0] is "optimize". */
int cmd_mech_optimize(int argc, char **argv);

#endif
