/* cli_legacy.h — the option iterator of the paper trainers (train --algo lcgd-projected,
 * dp-ambssgd, dp-ssgd, dp-srgd) until they move to the option tables of opt.h. */
#ifndef DPCORR_TOOLS_CLI_LEGACY_H
#define DPCORR_TOOLS_CLI_LEGACY_H

#include "cli.h"

typedef struct cli_iter {
    int argc;
    char **argv;
    int i;
    const char *cmd;
    const char *name;
    const char *value;
    char namebuf[64];
    const char *inline_value;
} cli_iter;

void cli_iter_init(cli_iter *it, const char *cmd, int argc, char **argv, int first);
int cli_next(cli_iter *it);
const char *cli_value(cli_iter *it);
int cli_is(const cli_iter *it, const char *name);
int cli_fail(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cli_double(const cli_iter *it, const char *s, double *out);
int cli_size(const cli_iter *it, const char *s, size_t *out);
int cli_u64(const cli_iter *it, const char *s, uint64_t *out);
int cli_double_list(const cli_iter *it, const char *s, double **out, size_t *n);
void cli_json_num(FILE *f, const char *key, double v, int comma);
void cli_json_str(FILE *f, const char *key, const char *v, int comma);
void cli_json_int(FILE *f, const char *key, long long v, int comma);
void cli_json_bool(FILE *f, const char *key, int v, int comma);

int train_linreg_ambssgd(int argc, char **argv);
int train_linreg_ssgd(int argc, char **argv);
int train_lcgd_projected(int argc, char **argv);
int train_srgd(int argc, char **argv);

#endif
