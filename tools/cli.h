/* cli.h — shared pieces of the dpcorr command-line tool (not part of the library): the option
 * parser (opt.h), the JSON writer (dpcorr/io.h), the mechanism options every command shares, output
 * path checks and the subcommands.
 *
 * Conventions: options are "--name value" or "--name=value"; every subcommand has --help; a bad
 * value prints "dpcorr <cmd>: --name: <why>" on stderr and the command exits with code 2.
 * Runtime failures exit 1. Results go to stdout; progress and warnings to stderr. */
#ifndef DPCORR_TOOLS_CLI_H
#define DPCORR_TOOLS_CLI_H

#include "dpcorr.h"
#include "dpcorr/io.h"
#include "dpcorr/mech.h"
#include "dpcorr/io.h"
#include "opt.h"

#include <stdio.h>

/* Wall-clock seconds (monotonic). */
double cli_now(void);

/* Output paths, checked before any work. A file: its directory exists and is writable, and an
 * existing path is a writable regular file. A directory: created (mkdir -p) and writable.
 * Return 0, or print "<option>: cannot write PATH (why)" and return CLI_USAGE. */
int cli_check_out_file(const opt_set *s, const opt_spec *o, const char *path);
/* Every typed output of the command (OPT_OUT_FILE) checked (cli_check_out_file), then compared
 * by file identity (dpc_io_same_file) with every input (OPT_IN_FILE, the files of OPT_IN_DATA
 * specs, file:PATH of OPT_IN_STRATEGY kinds) and every other output: "dpcorr CMD: --report F is
 * the same file as --data SPEC (its file F): refusing to overwrite an input", CLI_USAGE. Only
 * an OPT_CONTINUES output and input may be one file (--resume F --checkpoint F). 0 otherwise. */
int cli_check_outputs(const opt_set *s);
/* The files a command writes into its output directory (option dir, value path): each of
 * path/NAME (names: NULL-terminated) checked like a typed output (dpc_io_check_output), then
 * compared by file identity with every input of the command (as cli_check_outputs; data_spec,
 * may be NULL: a data spec the command reads without an option, e.g. "fashion-mnist"), every
 * typed output and each other: "--out DIR (its file DIR/x.csv) is the same file as --data SPEC
 * (its file F): refusing to overwrite an input", CLI_USAGE. Run before any work. */
int cli_check_dir_outputs(const opt_set *s, const opt_spec *dir, const char *path,
                          const char *const *names, const char *data_spec);
/* Outputs written safely (dpcorr/io.h: a temporary renamed over the target, links written
 * through): the stream, or NULL after printing "dpcorr: WHAT: why". */
FILE *cli_out_open(dpc_io_out **h, const char *what, const char *path);
/* Commits it; 0, or CLI_RUNTIME after printing "dpcorr: WHAT: write error on P (why); ..." (the
 * previous file is unchanged). */
int cli_out_commit(dpc_io_out *h, const char *what);
int cli_make_out_dir(const opt_set *s, const opt_spec *o, const char *path);

/* ---- Instruction-set level (dpcorr/isa.h) --------------------------------------------------
 * From the environment: DPCORR_ISA=sse2|avx2|avx512 forces a level, unset (or auto) means the
 * best this CPU runs. cli_isa_check prints a message naming DPCORR_ISA and returns CLI_USAGE for
 * an unknown name or a level this CPU lacks (dpcorr's main calls it first). */
int cli_isa_check(void);
/* The level for one kernel family: DPCORR_ISA when set (all families), else the level that
 * dpc_tune_isa measured fastest here (once per process), else the detected one. */
dpc_isa cli_isa_for(dpc_tune_family family);
/* The measurement behind cli_isa_for (NULL when it failed), and whether DPCORR_ISA forced a
 * level; reports record both. */
const dpc_tune_levels *cli_isa_tuning(void);
int cli_isa_forced(void);
/* dpc_model_parse_shape (shape may be NULL) then dpc_model_new at the GEMM family's level; *cfg
 * (may be NULL) receives the parsed configuration. */
dpc_status cli_model_new(dpc_model **m, dpc_model_config *cfg, const char *spec, size_t n_in,
                         const size_t *shape, size_t n_classes, dpc_error *err);

/* ---- Mechanism options shared by `mech`, `account`, `theory` and `train` ------------------ */

extern const opt_spec MO_KIND, MO_MECH, MO_STEPS, MO_NU, MO_LAMBDA, MO_BANDS, MO_MOMENTUM,
    MO_DECAY, MO_MECH_MOMENTUM, MO_MECH_DECAY, MO_HONAKER, MO_THETA, MO_OMEGA, MO_COEFFS, MO_OF,
    MO_PARTICIPATIONS, MO_MIN_SEP, MO_CYCLIC, MO_FORM;

/* The table entries of a command's mechanism group. Tables list the MO_ specs of every kind;
 * cli_mech_read reads only those of the kind chosen. */
#define MECH_KIND_OPTS(kind, momentum, decay)                                                      \
    &kind, &MO_NU, &MO_LAMBDA, &MO_BANDS, &momentum, &decay, &MO_HONAKER, &MO_THETA, &MO_OMEGA,  \
        &MO_COEFFS, &MO_OF

typedef struct mech_read {
    const opt_spec *kind;            /* &MO_KIND or &MO_MECH */
    const opt_spec *steps;           /* &MO_STEPS, or NULL when the command sets p.steps */
    const opt_spec *momentum, *decay;/* the BSR/BISR workload options of the command */
    int participation;               /* reads --participations, --min-sep, --cyclic */
    int form;                        /* reads --form */
    int lib_bands;                   /* BSR/BISR without --bands, BLT without --theta/--omega:
                                        the library's default (dpc_train_config_resolve) */
    int default_blt;                 /* BLT without --theta/--omega: dpc_strategy_default_blt
                                        for n, k and b, prefix workload (account) */
} mech_read;

typedef struct cli_mech_opts {
    dpc_mech_params p;
    int have_kind;
    dpc_participation part;
    dpc_noise_form form;
    double *coeffs, *dense;        /* owned (files) */
    size_t nomega;
    int workload_set;              /* a workload option was given */
    const char *coeffs_path;
    const char *strategy_path;     /* kind "file:PATH" */
    struct dpc_strategy *strategy; /* owned, loaded by cli_mech_load */
} cli_mech_opts;

void cli_mech_opts_init(cli_mech_opts *o);
void cli_mech_opts_free(cli_mech_opts *o);
/* Reads the kind, then the parameters that kind uses (theta/omega point into s). */
int cli_mech_read(cli_mech_opts *o, opt_set *s, const mech_read *r);
/* Loads strategy and coefficient files and validates the parameters (library errors mapped to
 * the options). Returns 0 or the exit code (message printed). */
int cli_mech_load(cli_mech_opts *o, opt_set *s, const mech_read *r);
/* Dry-run lines of the mechanism (and participation). */
void cli_mech_dry(const cli_mech_opts *o, int participation);

/* ---- Subcommands ----------------------------------------------------------------------------- */
int cmd_mech(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_advise(int argc, char **argv);
int cmd_account(int argc, char **argv);
int cmd_theory(int argc, char **argv);
int cmd_repro(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_audit(int argc, char **argv);
int cmd_version(int argc, char **argv);
/* `mech optimize` (tools/cmd_optimize.c); argv[0] is "optimize". */
int cmd_mech_optimize(int argc, char **argv);

#endif
