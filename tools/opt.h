/* opt.h — the table-driven option parser of the dpcorr tool (not part of the library).
 *
 * Every subcommand describes its options in ONE table (an opt_cmd listing opt_spec entries):
 * name, metavar, value type, syntactic range, a one-line help with the default, the library
 * parameter(s) the option sets, the help section, when the option applies and an example. The
 * --help text, the parsing, the range checks, the refusals and the mapping of library errors
 * back to the flag the user typed all come from that table.
 *
 * Parsing (opt_parse) refuses, with exit code 2 and a message naming the option as typed:
 *   unknown options and positional junk; a missing value; a value that is not strictly a number
 *   of the option's type (no surrounding spaces, no sign on unsigned values, finite, exact
 *   integers) or is outside the option's range; an option given twice with different values;
 *   options listed in each other's `conflicts`.
 * Use tracking: the command reads the options its configuration uses through the accessors
 * (opt_dbl, opt_uint, ...), which mark them used; opt_finish, called once the configuration is
 * complete and before any work, refuses every option that was given but never read
 * ("--x: not used by this configuration (it applies with ...)"). A command therefore reads an
 * option only in the branch where it matters, and an option it ignores cannot pass silently.
 * Library errors: opt_fail_lib maps dpc_error.field (the library's parameter name, e.g.
 * "mech.nu") to the option of the table whose `param` list names it; when the user did not type
 * that option, the message says the value is a default or derived one instead of blaming a flag.
 *
 * Conventions: "--name value" or "--name=value"; results on stdout; messages on stderr as
 * "dpcorr <cmd>: <option>: <why>"; exit 0 ok, 1 runtime failure, 2 usage or configuration. */
#ifndef DPCORR_TOOLS_OPT_H
#define DPCORR_TOOLS_OPT_H

#include "dpcorr/common.h"
#include "dpcorr/field.h"

#include <stdint.h>
#include <stdio.h>

#define CLI_USAGE 2
#define CLI_RUNTIME 1

typedef enum opt_type {
    OPT_FLAG = 0, /* no value */
    OPT_STR,      /* a non-empty string (paths, data and model specs) */
    OPT_CHOICE,   /* one word of `choices` ("a|b|c") */
    OPT_DOUBLE,   /* a finite number in the range */
    OPT_UINT,     /* a non-negative integer in the range (digits, or an exact 1e5 form) */
    OPT_LIST,     /* comma-separated finite numbers, each in the range */
    OPT_FIELDS    /* not an option: the place of the options generated from the fields of
                     `fields` whose group is `group` (below) */
} opt_type;

/* opt_spec.flags */
#define OPT_LO_OPEN DPC_FIELD_LO_OPEN /* value > lo (default: >= lo): the library's flags */
#define OPT_HI_OPEN DPC_FIELD_HI_OPEN /* value < hi (default: <= hi) */
#define OPT_WORDS 4u    /* a number, or one of the words in `choices` ("theory", "inf") */
#define OPT_OUT_FILE 8u /* a file the run writes: checked writable before any work */
#define OPT_OUT_DIR 16u /* a directory the run writes into: created and checked before any work */
#define OPT_BIG 32u     /* OPT_UINT beyond 2^53 allowed (seeds): digits only */
/* Inputs, for cli_check_outputs (no output may be one of them): */
#define OPT_IN_FILE 64u      /* a file the run reads */
#define OPT_IN_DATA 128u     /* a data spec: the files it names (dpc_data_spec_files) */
#define OPT_IN_STRATEGY 256u /* a mechanism kind: file:PATH reads PATH */
#define OPT_CONTINUES 512u   /* an input and an output with this flag may be one file (--resume F
                                --checkpoint F: the run continues the checkpoint it resumed) */
#define OPT_OWN_DEFAULT 1024u /* a field of `fields` whose default is the command's, not the
                                table's ("required" by mech, derived from the run by train): its
                                help says it; the table gives the range, shown before the help's
                                closing parenthetical */

typedef struct opt_spec {
    const char *name;      /* "--steps" */
    const char *metavar;   /* "N" (NULL for flags) */
    opt_type type;
    const char *help;      /* one line: meaning and default (for a field of `fields`: meaning
                              only; the table's default is appended) */
    const char *param;     /* library parameter(s) it sets, comma separated ("mech.nu,nu"); the
                              dry-run prints them; NULL for pure tool switches (--help) */
    const char *section;   /* help section */
    double lo, hi;         /* range of numeric values (lo = hi = 0: none); must be left 0 for a
                              field of `fields` (tests/check_layout.sh): the table's is used */
    unsigned flags;
    const char *choices;   /* OPT_CHOICE: "a|b|c"; OPT_WORDS: the words a number may be replaced by */
    const char *when;      /* the configurations that use it ("{kind} nu|antipgd"); NULL: all */
    const char *conflicts; /* options it cannot be combined with, space separated */
    const char *example;   /* a valid use with its companions, added to the command's minimal
                              invocation by the option tests ("{kind} nu --nu 0.05"; {tmp}: the
                              tests' fixture directory); "! ARGS": a complete invocation */
    /* The library's field table (dpcorr/field.h) of the field `param` names (its first name
     * found in the table, a leading "problem." or "prior." dropped when the table is the nested
     * struct's own): the option's type checks, range, default, help suffix and, for an ENUM,
     * its words (unless `choices` lists the CLI's own) are the table's, written once in the
     * library. NULL: the spec's own lo, hi and help. */
    const dpc_field_table *(*fields)(void);
    /* OPT_FIELDS: one option per field of `fields` whose dpc_field.group is `group` and that no
     * other entry of the command sets: named after the field ("--" + the name with '-' for '_',
     * or as `rename` says: "p=dim noise=label-noise"), param = `param` (a prefix, "problem.")
     * + the field's name, in `section`, its help the field's doc, its `when` the field's
     * (the ENUM field's option and words) else this entry's, its example derived (a value in
     * the range other than the default). opt_read_fields reads them. */
    const char *group, *rename;
} opt_spec;

typedef struct opt_cmd {
    const char *name;      /* for messages: "mech", "train --algo dp-srgd" */
    const char *usage;     /* usage line(s), without "usage: " */
    const char *about;     /* paragraph(s) after the usage */
    const opt_spec *const *opts; /* NULL-terminated */
    const char *kind_opt;  /* the mechanism option of this command ("--kind", "--mech"), for
                              {kind} in `when` and `example` */
    const char *minimal;   /* a minimal valid invocation (arguments after the command words),
                              for the option tests; NULL: the command has no dry run */
    const char *epilog;    /* text printed after the options (NULL: none) */
    const opt_spec *const *refused; /* options of a related command that this one refuses by
                              name with `refused_why` instead of "unknown option" (NULL-terminated;
                              NULL: none); listed after the options in --help and as "refused"
                              lines of --help-table */
    const char *refused_why; /* "not available in an audit (...)" */
} opt_cmd;

#define OPT_MAX 160
#define OPT_MAX_LIST 64

typedef struct opt_value {
    const char *raw; /* as typed */
    double num;      /* OPT_DOUBLE, OPT_UINT (also in u) */
    uint64_t u;
    int word;        /* OPT_CHOICE / OPT_WORDS: 1 + index of the word; 0 = a number */
    double list[OPT_MAX_LIST];
    size_t nlist;
} opt_value;

typedef struct opt_set {
    const opt_cmd *cmd;
    const opt_spec *const *opts;   /* cmd's table with its OPT_FIELDS entries expanded */
    size_t n;                      /* options in the table */
    opt_value val[OPT_MAX];
    unsigned char given[OPT_MAX];  /* typed on the command line */
    unsigned char used[OPT_MAX];   /* read by the command */
    const char *pos[4];            /* positional words (commands that take them) */
    size_t npos;
    int help;                      /* --help was given: opt_parse printed the help */
    int dry_run;                   /* --dry-run was given */
} opt_set;

/* Shared switches: every table lists OPT_HELP; commands with a dry run list OPT_DRY_RUN. */
extern const opt_spec OPT_HELP, OPT_DRY_RUN, OPT_JSON;

/* Parses argv[first..argc) against cmd. npos_max: positional words accepted (0 for most
 * commands). Returns 0 (s->help set when --help was given and the help printed: exit 0), or
 * CLI_USAGE after printing the refusal. */
int opt_parse(opt_set *s, const opt_cmd *cmd, int argc, char **argv, int first, size_t npos_max);

/* Help text of cmd (usage, about, options by section, epilog). */
void opt_help(FILE *f, const opt_cmd *cmd);
/* The table as tab-separated lines for the option tests ("dpcorr CMD --help-table"):
 *   cmd <TAB> minimal invocation
 *   opt <TAB> name <TAB> type <TAB> param <TAB> example <TAB> when   (one line per option)
 *   refused <TAB> name                                            (one line per refused option)
 *   io <TAB> name <TAB> out|in|data|strategy <TAB> 0|1 (OPT_CONTINUES)   (files it writes, reads)
 * ("-" for an empty column). */
void opt_help_table(FILE *f, const opt_cmd *cmd);

/* Accessors: 1 / the value when the option was given, else 0 / def; each marks it used. */
int opt_given(opt_set *s, const opt_spec *o);
double opt_dbl(opt_set *s, const opt_spec *o, double def);
uint64_t opt_u64(opt_set *s, const opt_spec *o, uint64_t def);
size_t opt_size(opt_set *s, const opt_spec *o, size_t def);
/* An option of a library table field (opt_spec.fields): the value given, else the one in the
 * struct at base (the table's struct, e.g. a dpc_train_config), written into its field (a
 * number, an ENUM's word by its index when the words are the table's, a BOOL flag); marks it
 * used. */
void opt_read_field(opt_set *s, const opt_spec *o, void *base);
/* Reads the options generated from table t (OPT_FIELDS entries) into obj, t's struct, in table
 * order, each only where its field applies (dpc_field_applies: "--cooldown-fraction" only with
 * "--schedule cooldown"); the others stay unused, so opt_finish refuses them when typed. */
void opt_read_fields(opt_set *s, const dpc_field_table *t, void *obj);
const char *opt_str(opt_set *s, const opt_spec *o, const char *def);
/* OPT_CHOICE: the index of the word; OPT_WORDS: 1 + index of the word, 0 for a number. */
int opt_word(opt_set *s, const opt_spec *o, int def);
/* OPT_LIST: the values (inside s) and their count; NULL when not given. */
const double *opt_list(opt_set *s, const opt_spec *o, size_t *n);
/* Without marking: was it typed? (for messages and cross-checks) */
int opt_typed(const opt_set *s, const opt_spec *o);
/* Marks an option as used without reading it (an option whose only effect is its presence in a
 * branch already taken). */
void opt_use(opt_set *s, const opt_spec *o);

/* Refuses every typed option the command did not read. Returns 0 or CLI_USAGE (printed). */
int opt_finish(opt_set *s);

/* Prints "dpcorr <cmd>: <message>" and returns CLI_USAGE. */
int opt_fail(const opt_set *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "dpcorr <cmd>: <o->name>: <message>"; returns CLI_USAGE. */
int opt_fail_at(const opt_set *s, const opt_spec *o, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A library error: err->field mapped to the option the user typed (see above). Returns the exit
 * code of err->status: CLI_USAGE for a configuration that cannot be served (INVALID, RANGE,
 * PRIVACY, UNSUPPORTED, FORMAT), CLI_RUNTIME otherwise. */
int opt_fail_lib(const opt_set *s, const dpc_error *err);
/* A library error from processing the value of option o alone (a data spec, a file): printed
 * as "<o->name>: <message>" (without the leading "field: " when a field is set). CLI_USAGE (an unreadable
 * file is a bad value of the option), CLI_RUNTIME for NOMEM and NUMERIC. */
int opt_fail_lib_at(const opt_set *s, const opt_spec *o, const dpc_error *err);
/* The exit code for a library status (see opt_fail_lib). */
int opt_status_rc(dpc_status st);

/* The dry run's output: one "key = value" line per resolved parameter (library names). */
void opt_dry_num(const char *key, double v);
void opt_dry_uint(const char *key, uint64_t v);
void opt_dry_str(const char *key, const char *v);
/* One field of a library table as its dry-run line ("prefix+name = value": numbers, counts, an
 * ENUM by its name, strings; pointers and nested structs left out); base is the struct the table
 * describes. opt_dry_fields: every field of t in table order, a nested struct's as
 * "prefix+name.field". */
void opt_dry_field(const dpc_field *f, const void *base, const char *prefix);
void opt_dry_fields(const dpc_field_table *t, const void *base, const char *prefix);
void opt_dry_list(const char *key, const double *v, size_t n);

#endif
