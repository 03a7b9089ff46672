/* mech_opts.c — the mechanism options shared by `mech`, `account`, `theory` and `train`, so that
 * every command describes a mechanism (and its participation pattern) in exactly the same way.
 * The parameters of a kind are read only for that kind: the others stay unused and are refused
 * by opt_finish. */
#include "cli.h"
#include "dpcorr/io.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define KINDS "identity | nu | antipgd | lcgd | bsr | bisr | blt | tree | toeplitz | dense | " \
              "file:PATH (a strategy file written by `dpcorr mech optimize`)"

/* options setting a field of dpc_mech_params (as "mech.X" of the trainer's table, which nests
 * it): range and default from the library's table; the kind's words are the CLI's (file:PATH
 * too), its default the table's. OWN_DEFAULT: the default is the command's (required by mech
 * and account, derived from the run by train), the range the table's. */
#define MECH_FIELD .fields = dpc_train_config_fields
#define OWN_DEFAULT .flags = OPT_OWN_DEFAULT
const opt_spec MO_KIND = {
    .name = "--kind", .metavar = "KIND", .type = OPT_STR, .flags = OPT_IN_STRATEGY,
    MECH_FIELD, .section = "mechanism", .help = KINDS "; identity is DP-SGD",
    .param = "mech.kind,kind",
    .example = "--kind nu --nu 0.1"};
const opt_spec MO_MECH = {
    .name = "--mech", .metavar = "KIND", .type = OPT_STR, .flags = OPT_IN_STRATEGY,
    MECH_FIELD, .section = "mechanism", .help = KINDS "; identity is DP-SGD",
    .param = "mech.kind,mech", .example = "--mech nu"};
const opt_spec MO_STEPS = {
    .name = "--steps", .metavar = "N", .type = OPT_UINT, MECH_FIELD, OWN_DEFAULT,
    .section = "mechanism", .param = "mech.steps,steps",
    .help = "number of steps n (required; file:PATH: default the file's n)",
    .example = "--steps 77"};
const opt_spec MO_NU = {
    .name = "--nu", .metavar = "V", .type = OPT_DOUBLE, MECH_FIELD, .section = "mechanism",
    .param = "mech.nu,nu", .when = "{kind} nu|antipgd",
    .help = "nu: damping (nu-DP-FTRL; 0 = optimal CC / sqrt); antipgd: damping (0 = undamped)",
    .example = "{kind} nu --nu 0.05"};
const opt_spec MO_LAMBDA = {
    .name = "--lambda", .metavar = "V", .type = OPT_DOUBLE, MECH_FIELD,
    .section = "mechanism", .param = "mech.lambda,lambda", .when = "{kind} lcgd",
    .help = "B = bidiagonal (1, -lambda)",
    .example = "{kind} lcgd --lambda 0.5"};
const opt_spec MO_BANDS = {
    .name = "--bands", .metavar = "B", .type = OPT_UINT, MECH_FIELD, OWN_DEFAULT,
    .section = "mechanism", .param = "mech.bands,bands", .when = "{kind} bsr|bisr",
    .help = "number of bands (required; dpcorr train: chosen from the run when omitted, shown by "
            "--dry-run)", .example = "{kind} bsr --bands 3"};
const opt_spec MO_MOMENTUM = {
    .name = "--momentum", .metavar = "M", .type = OPT_DOUBLE, MECH_FIELD,
    .section = "mechanism", .param = "mech.momentum,momentum",
    .when = "{kind} bsr|bisr", .help = "workload momentum",
    .example = "{kind} bsr --bands 3 --momentum 0.5"};
const opt_spec MO_DECAY = {
    .name = "--decay", .metavar = "A", .type = OPT_DOUBLE, MECH_FIELD,
    .section = "mechanism", .param = "mech.decay,decay", .when = "{kind} bsr|bisr",
    .help = "workload decay factor",
    .example = "{kind} bsr --bands 3 --decay 0.9"};
const opt_spec MO_MECH_MOMENTUM = {
    .name = "--mech-momentum", .metavar = "M", .type = OPT_DOUBLE, MECH_FIELD, OWN_DEFAULT,
    .section = "mechanism", .param = "mech.momentum", .when = "{kind} bsr|bisr",
    .help = "workload momentum (train: default the optimizer's --momentum; else 0)",
    .example = "{kind} bsr --bands 3 --mech-momentum 0.5"};
const opt_spec MO_MECH_DECAY = {
    .name = "--mech-decay", .metavar = "A", .type = OPT_DOUBLE, MECH_FIELD, OWN_DEFAULT,
    .section = "mechanism", .param = "mech.decay", .when = "{kind} bsr|bisr",
    .help = "workload decay factor (train: default 1 - lr x weight decay; else 1)",
    .example = "{kind} bsr --bands 3 --mech-decay 0.9"};
const opt_spec MO_HONAKER = {
    .name = "--honaker", .type = OPT_FLAG, MECH_FIELD, OWN_DEFAULT, .section = "mechanism", .param = "mech.honaker,honaker",
    .when = "{kind} tree", .help = "Honaker efficient estimator (default the plain tree)",
    .example = "{kind} tree --honaker"};
const opt_spec MO_THETA = {
    .name = "--theta", .metavar = "T1,T2,..", .type = OPT_LIST, MECH_FIELD, OWN_DEFAULT,
    .section = "mechanism", .param = "mech.theta,theta,nbuf", .when = "{kind} blt",
    .help = "buffer decays of C (required; train, audit and account: both omitted, the "
            "run's default BLT)",
    .example = "{kind} blt --omega 0.2,0.1 --theta 0.8,0.4"};
/* omega's entries need only be finite (the library's check), as every number parsed is */
const opt_spec MO_OMEGA = {
    .name = "--omega", .metavar = "W1,W2,..", .type = OPT_LIST, MECH_FIELD, OWN_DEFAULT,
    .section = "mechanism", .param = "mech.omega,omega", .when = "{kind} blt",
    .help = "output scales of C, as many as --theta (required; train, audit and account: "
            "both omitted, the run's default BLT)",
    .example = "{kind} blt --theta 0.9,0.5 --omega 0.3,0.2"};
const opt_spec MO_COEFFS = {
    .name = "--coeffs", .metavar = "FILE", .type = OPT_STR, .flags = OPT_IN_FILE,
    .section = "mechanism",
    .param = "mech.coeffs,coeffs,mech.dense,dense", .when = "{kind} toeplitz|dense",
    .help = "toeplitz: coefficients (first column); dense: n rows of the lower-triangular matrix "
            "('#' comments allowed) (required)",
    .example = "{kind} toeplitz --coeffs {tmp}/coeffs.txt"};
const opt_spec MO_OF = {
    .name = "--of", .metavar = "noising|strategy", .type = OPT_CHOICE,
    .choices = "noising|strategy|B|C", .section = "mechanism",
    .param = "mech.coeffs_of_strategy", .when = "{kind} toeplitz|dense",
    .help = "the file holds B = C^-1 (noising, the default) or C (strategy)",
    .example = "{kind} toeplitz --coeffs {tmp}/coeffs.txt --of strategy"};
/* the participation pattern's fields (dpc_participation: "part.k" is its k); --cyclic, a flag
 * for one value of the ENUM part.kind, keeps its own words */
#define PART_FIELD .fields = dpc_participation_fields
const opt_spec MO_PARTICIPATIONS = {
    .name = "--participations", .metavar = "K", .type = OPT_UINT, PART_FIELD,
    .section = "participation", .param = "part.k,participations",
    .help = "participations per example",
    .example = "{kind} identity --participations 3"};
const opt_spec MO_MIN_SEP = {
    .name = "--min-sep", .metavar = "B", .type = OPT_UINT, PART_FIELD,
    .section = "participation", .param = "part.b,min_sep",
    .help = "minimum separation between participations",
    .example = "{kind} identity --participations 2 --min-sep 5"};
const opt_spec MO_CYCLIC = {
    .name = "--cyclic", .type = OPT_FLAG, .section = "participation", .param = "part.kind",
    .help = "participations exactly every B steps (fixed-order epochs) instead of any pattern "
            "with min-separation B",
    .example = "{kind} identity --participations 2 --min-sep 3 --cyclic"};
const opt_spec MO_FORM = {
    .name = "--form", .metavar = "auto|buffer|replay", .type = OPT_CHOICE, MECH_FIELD,
    .section = "mechanism", .param = "noise_form", .help = "noise generator form",
    .example = "--form replay"};

void cli_mech_opts_init(cli_mech_opts *o)
{
    memset(o, 0, sizeof *o);
    dpc_mech_params_init(&o->p);
    dpc_participation_init(&o->part);
    o->form = DPC_NOISE_AUTO;
}

void cli_mech_opts_free(cli_mech_opts *o)
{
    free(o->coeffs);
    free(o->dense);
    o->coeffs = o->dense = NULL;
    dpc_strategy_free(o->strategy);
    o->strategy = NULL;
}

/* The parameters of the kind chosen (only those: the others stay unused). */
static void read_kind_params(cli_mech_opts *o, opt_set *s, const mech_read *r)
{
    dpc_mech_params *p = &o->p;
    switch (p->kind) {
    case DPC_MECH_NU:
    case DPC_MECH_ANTIPGD: p->nu = opt_dbl(s, &MO_NU, p->nu); break;
    case DPC_MECH_LCGD: p->lambda = opt_dbl(s, &MO_LAMBDA, p->lambda); break;
    case DPC_MECH_BSR:
    case DPC_MECH_BISR:
        p->bands = opt_size(s, &MO_BANDS, 0);
        o->workload_set = opt_given(s, r->momentum) | opt_given(s, r->decay);
        p->momentum = opt_dbl(s, r->momentum, p->momentum);
        p->decay = opt_dbl(s, r->decay, p->decay);
        break;
    case DPC_MECH_TREE: p->honaker = opt_given(s, &MO_HONAKER); break;
    case DPC_MECH_BLT:
        p->theta = opt_list(s, &MO_THETA, &p->nbuf);
        p->omega = opt_list(s, &MO_OMEGA, &o->nomega);
        break;
    case DPC_MECH_TOEPLITZ:
    case DPC_MECH_DENSE:
        o->coeffs_path = opt_str(s, &MO_COEFFS, NULL);
        p->coeffs_of_strategy = (opt_word(s, &MO_OF, 0) & 1) != 0;
        break;
    default: break;
    }
}

int cli_mech_read(cli_mech_opts *o, opt_set *s, const mech_read *r)
{
    const char *k = opt_str(s, r->kind, NULL);
    if (k) {
        o->have_kind = 1;
        if (!strncmp(k, "file:", 5)) {
            if (!k[5]) return opt_fail_at(s, r->kind, "file: needs a path (file:PATH)");
            o->strategy_path = k + 5;
        } else {
            dpc_error err = {0};
            if (dpc_mech_kind_parse(k, &o->p.kind, &err)) return opt_fail_lib_at(s, r->kind, &err);
        }
    }
    if (!o->strategy_path) read_kind_params(o, s, r);
    if (r->steps) o->p.steps = opt_size(s, r->steps, 0);
    if (r->participation) {
        o->part.k = opt_size(s, &MO_PARTICIPATIONS, o->part.k);
        o->part.b = opt_size(s, &MO_MIN_SEP, o->part.b);
        if (opt_given(s, &MO_CYCLIC)) o->part.kind = DPC_PART_CYCLIC;
    }
    if (r->form) o->form = (dpc_noise_form)opt_word(s, &MO_FORM, DPC_NOISE_AUTO);
    return 0;
}

/* kind file:PATH: the strategy file supplies the kind and its parameters. */
static int load_strategy(cli_mech_opts *o, opt_set *s, const mech_read *r)
{
    dpc_mech_params *p = &o->p;
    dpc_error err = {0};
    if (dpc_strategy_load(&o->strategy, o->strategy_path, &err))
        return opt_fail_lib_at(s, r->kind, &err);
    if (dpc_strategy_mech_params_at(o->strategy, p->steps, o->strategy_path, p, &err))
        return opt_fail_lib_at(s, r->steps ? r->steps : r->kind, &err);
    return 0;
}

int cli_mech_load(cli_mech_opts *o, opt_set *s, const mech_read *r)
{
    dpc_mech_params *p = &o->p;
    dpc_error err = {0};
    if (o->strategy_path) {
        int rc = load_strategy(o, s, r);
        if (rc) return rc;
    }
    if (!o->strategy_path && p->kind == DPC_MECH_DENSE && p->steps == 0 && o->coeffs_path) {
        /* the matrix's rows give n (a command whose run sets n: the library checks they agree) */
        if (dpc_io_read_lower_triangular(o->coeffs_path, 0, &o->dense, &p->steps, &err))
            return opt_fail_lib_at(s, &MO_COEFFS, &err);
        p->dense = o->dense;
    }
    if (p->steps == 0)
        return r->steps ? opt_fail_at(s, r->steps, "required (number of steps n >= 1)")
                        : opt_fail(s, "the number of steps n is not set");
    /* neither list under train/audit: the library optimizes the run's default BLT
     * (dpc_train_mech_check below accepts it) */
    int lib_blt = r->lib_bands && !r->default_blt && !p->theta && !p->omega;
    if (!o->strategy_path && p->kind == DPC_MECH_BLT && !lib_blt) {
        if (r->default_blt) { /* the library's default BLT when neither list is given */
            if (dpc_mech_params_default_blt(p, &o->part, &o->strategy, &err))
                return opt_fail_lib_at(s, r->kind, &err);
            if (o->strategy) return 0;
        }
        if (!p->theta || !p->omega) return opt_fail(s, "--theta/--omega: blt needs both lists");
        if (p->nbuf != o->nomega)
            return opt_fail_at(s, &MO_OMEGA, "%zu values but --theta has %zu", o->nomega, p->nbuf);
    }
    if (!o->strategy_path && (p->kind == DPC_MECH_TOEPLITZ || p->kind == DPC_MECH_DENSE)) {
        if (!o->coeffs_path)
            return opt_fail_at(s, &MO_COEFFS, "%s needs a coefficient file",
                               dpc_mech_kind_name(p->kind));
        if (p->kind == DPC_MECH_TOEPLITZ) {
            if (dpc_io_read_numbers(o->coeffs_path, 0, &o->coeffs, &p->ncoeffs, &err))
                return opt_fail_lib_at(s, &MO_COEFFS, &err);
            p->coeffs = o->coeffs;
        } else if (!o->dense) {
            size_t n_out;
            if (dpc_io_read_lower_triangular(o->coeffs_path, p->steps, &o->dense, &n_out, &err))
                return opt_fail_lib_at(s, &MO_COEFFS, &err);
            p->dense = o->dense;
        }
    }
    /* train/audit: bands 0 is the run's default (dpc_train_config_resolve) */
    if ((r->lib_bands ? dpc_train_mech_check(p, &err) : dpc_mech_params_check(p, &err)))
        return opt_fail_lib(s, &err);
    return 0;
}

void cli_mech_dry(const cli_mech_opts *o, int participation)
{
    const dpc_mech_params *p = &o->p;
    opt_dry_str("mech.kind", dpc_mech_kind_name(p->kind));
    if (o->strategy_path) opt_dry_str("mech.strategy", o->strategy_path);
    opt_dry_uint("mech.steps", p->steps);
    opt_dry_num("mech.nu", p->nu);
    opt_dry_num("mech.lambda", p->lambda);
    opt_dry_uint("mech.bands", p->bands);
    opt_dry_num("mech.momentum", p->momentum);
    opt_dry_num("mech.decay", p->decay);
    opt_dry_uint("mech.honaker", (uint64_t)p->honaker);
    opt_dry_list("mech.theta", p->theta, p->theta ? p->nbuf : 0);
    opt_dry_list("mech.omega", p->omega, p->omega ? p->nbuf : 0);
    opt_dry_str("mech.coeffs", o->coeffs_path);
    opt_dry_uint("mech.ncoeffs", p->ncoeffs);
    opt_dry_uint("mech.coeffs_of_strategy", (uint64_t)p->coeffs_of_strategy);
    if (participation) {
        opt_dry_uint("part.k", o->part.k);
        opt_dry_uint("part.b", o->part.b);
        opt_dry_str("part.kind", o->part.kind == DPC_PART_CYCLIC ? "cyclic" : "min-sep");
    }
}
