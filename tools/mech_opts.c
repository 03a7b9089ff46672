/* mech_opts.c — the mechanism options shared by `mech`, `account` and `train`, so that every
 * command describes a mechanism (and its participation pattern) in exactly the same way. */
#include "cli.h"
#include "dpcorr/io.h"

#include <stdlib.h>
#include <string.h>

void cli_mech_opts_init(cli_mech_opts *o)
{
    memset(o, 0, sizeof *o);
    dpc_mech_params_init(&o->p);
    o->part.kind = DPC_PART_MINSEP;
    o->part.k = 1;
    o->part.b = 1;
    o->form = DPC_NOISE_AUTO;
}

void cli_mech_opts_free(cli_mech_opts *o)
{
    free(o->theta);
    free(o->omega);
    free(o->coeffs);
    free(o->dense);
    o->theta = o->omega = o->coeffs = o->dense = NULL;
    dpc_strategy_free(o->strategy);
    o->strategy = NULL;
}

void cli_mech_help(FILE *f, const char *kind_opt)
{
    int mech_cmd = !strcmp(kind_opt, "--kind");
    fprintf(f,
            "mechanism options:\n"
            "  %s KIND          identity | nu | antipgd | lcgd | bsr | bisr | blt | tree |\n"
            "                        toeplitz | dense (default identity = DP-SGD) | file:PATH\n"
            "                        (a strategy file written by `dpcorr mech optimize`; --steps\n"
            "                        defaults to the file's n)\n",
            kind_opt);
    if (mech_cmd)
        fprintf(f, "  --steps N             number of steps n (required)\n");
    else
        fprintf(f, "  --steps N             number of steps n (train: set from epochs and batch)\n");
    fprintf(f,
            "  --nu V                nu: damping in [0,1) (nu-DP-FTRL; 0 = optimal CC / sqrt);\n"
            "                        antipgd: damping (0 = undamped)\n"
            "  --lambda V            lcgd: B = bidiagonal (1, -lambda), lambda in [0,1]\n"
            "  --bands B             bsr, bisr: number of bands\n");
    if (mech_cmd)
        fprintf(f,
                "  --momentum M          bsr, bisr: workload momentum in [0,1) (default 0)\n"
                "  --decay A             bsr, bisr: workload decay factor in (0,1] (default 1)\n");
    else
        fprintf(f,
                "  --mech-momentum M     bsr, bisr: workload momentum in [0,1) (train: default the\n"
                "                        optimizer's --momentum)\n"
                "  --mech-decay A        bsr, bisr: workload decay factor in (0,1] (train: default\n"
                "                        1 - lr * weight decay)\n");
    fprintf(f,
            "  --honaker             tree: Honaker efficient estimator (default plain tree)\n"
            "  --theta T1,T2,..      blt: buffer decays of C, each in (0,1)\n"
            "  --omega W1,W2,..      blt: output scales of C\n"
            "  --coeffs FILE         toeplitz: coefficients (first column); dense: n rows of the\n"
            "                        lower-triangular matrix ('#' comments allowed)\n"
            "  --of noising|strategy toeplitz, dense: the file holds B = C^-1 (default) or C\n"
            "  --participations K    participations per example (default 1)\n"
            "  --min-sep B           minimum separation between participations (default 1)\n"
            "  --cyclic              participations exactly every B steps (fixed-order epochs)\n"
            "                        instead of any pattern with min-separation B\n"
            "  --form auto|buffer|replay  noise generator form (default auto)\n");
}

int cli_mech_opt(cli_mech_opts *o, cli_iter *it, const char *kind_opt)
{
    const char *v;
    if (cli_is(it, kind_opt)) {
        if (!(v = cli_value(it))) return -1;
        dpc_error err = {0};
        if (!strncmp(v, "file:", 5)) {
            if (!v[5]) {
                cli_fail(it->cmd, "%s: file: needs a path (file:PATH)", kind_opt);
                return -1;
            }
            o->strategy_path = v + 5;
            o->have_kind = 1;
            return 1;
        }
        o->strategy_path = NULL;
        if (dpc_mech_kind_parse(v, &o->p.kind, &err) != DPC_OK) {
            cli_fail(it->cmd, "%s: %s", kind_opt, err.msg);
            return -1;
        }
        o->have_kind = 1;
        return 1;
    }
#define NUMOPT(name, field)                                                                        \
    if (cli_is(it, name)) {                                                                        \
        if (!(v = cli_value(it)) || cli_double(it, v, &(field))) return -1;                        \
        return 1;                                                                                  \
    }
#define SIZEOPT(name, field)                                                                       \
    if (cli_is(it, name)) {                                                                        \
        if (!(v = cli_value(it)) || cli_size(it, v, &(field))) return -1;                          \
        return 1;                                                                                  \
    }
    SIZEOPT("--steps", o->p.steps)
    NUMOPT("--nu", o->p.nu)
    NUMOPT("--lambda", o->p.lambda)
    SIZEOPT("--bands", o->p.bands)
    /* The workload of BSR/BISR: `mech` takes --momentum/--decay; commands with an optimizer
     * (`train`, `account`: kind option "--mech") reserve --momentum for the optimizer and take
     * --mech-momentum/--mech-decay (train defaults them to the optimizer's). */
    if (!strcmp(kind_opt, "--kind")) {
        NUMOPT("--momentum", o->p.momentum)
        NUMOPT("--decay", o->p.decay)
    }
    if (cli_is(it, "--mech-momentum")) {
        if (!(v = cli_value(it)) || cli_double(it, v, &o->p.momentum)) return -1;
        o->workload_set = 1;
        return 1;
    }
    if (cli_is(it, "--mech-decay")) {
        if (!(v = cli_value(it)) || cli_double(it, v, &o->p.decay)) return -1;
        o->workload_set = 1;
        return 1;
    }
    SIZEOPT("--participations", o->part.k)
    SIZEOPT("--min-sep", o->part.b)
#undef NUMOPT
#undef SIZEOPT
    if (cli_is(it, "--honaker")) {
        o->p.honaker = 1;
        return 1;
    }
    if (cli_is(it, "--cyclic")) {
        o->part.kind = DPC_PART_CYCLIC;
        return 1;
    }
    if (cli_is(it, "--theta") || cli_is(it, "--omega")) {
        int is_theta = cli_is(it, "--theta");
        double **dst = is_theta ? &o->theta : &o->omega;
        if (!(v = cli_value(it))) return -1;
        free(*dst);
        *dst = NULL;
        if (cli_double_list(it, v, dst, is_theta ? &o->ntheta : &o->nomega)) return -1;
        return 1;
    }
    if (cli_is(it, "--coeffs")) {
        if (!(v = cli_value(it))) return -1;
        o->coeffs_path = v;
        return 1;
    }
    if (cli_is(it, "--of")) {
        if (!(v = cli_value(it))) return -1;
        if (!strcmp(v, "noising") || !strcmp(v, "B")) o->p.coeffs_of_strategy = 0;
        else if (!strcmp(v, "strategy") || !strcmp(v, "C")) o->p.coeffs_of_strategy = 1;
        else {
            cli_fail(it->cmd, "--of: expected 'noising' or 'strategy', got '%s'", v);
            return -1;
        }
        return 1;
    }
    if (cli_is(it, "--form")) {
        if (!(v = cli_value(it))) return -1;
        if (!strcmp(v, "auto")) o->form = DPC_NOISE_AUTO;
        else if (!strcmp(v, "buffer")) o->form = DPC_NOISE_BUFFER;
        else if (!strcmp(v, "replay")) o->form = DPC_NOISE_REPLAY;
        else {
            cli_fail(it->cmd, "--form: expected auto, buffer or replay, got '%s'", v);
            return -1;
        }
        return 1;
    }
    return 0;
}

int cli_mech_finish(cli_mech_opts *o, const char *cmd, const char *kind_opt)
{
    dpc_mech_params *p = &o->p;
    dpc_error err = {0};
    if (!o->have_kind && kind_opt && (o->theta || o->coeffs_path))
        return cli_fail(cmd, "%s: give the mechanism kind", kind_opt);
    if (o->strategy_path) { /* kind file:PATH: the strategy file supplies the parameters */
        if (o->theta || o->omega || o->coeffs_path)
            return cli_fail(cmd, "%s: file:%s cannot be combined with --theta/--omega/--coeffs",
                            kind_opt ? kind_opt : "--kind", o->strategy_path);
        dpc_strategy_free(o->strategy);
        o->strategy = NULL;
        if (dpc_strategy_load(&o->strategy, o->strategy_path, &err))
            return cli_fail(cmd, "%s: %s", kind_opt ? kind_opt : "--kind", err.msg);
        size_t steps = p->steps ? p->steps : o->strategy->problem.steps;
        if (o->strategy->kind == DPC_MECH_DENSE && steps != o->strategy->problem.steps)
            return cli_fail(cmd, "--steps: the dense strategy in %s has n = %zu, got %zu",
                            o->strategy_path, o->strategy->problem.steps, steps);
        int honaker = p->honaker;
        dpc_strategy_mech_params(o->strategy, p);
        p->steps = steps;
        p->honaker = honaker;
    }
    if (p->steps == 0) return cli_fail(cmd, "--steps: required (number of steps n >= 1)");
    if (o->strategy_path) {
        /* parameters come from the file */
    } else if (p->kind == DPC_MECH_BLT) {
        if (!o->theta || !o->omega)
            return cli_fail(cmd, "--theta/--omega: blt needs both lists");
        if (o->ntheta != o->nomega)
            return cli_fail(cmd, "--omega: %zu values but --theta has %zu", o->nomega, o->ntheta);
        p->nbuf = o->ntheta;
        p->theta = o->theta;
        p->omega = o->omega;
    } else if (o->theta || o->omega) {
        return cli_fail(cmd, "--theta/--omega: only for the blt kind");
    }
    if (o->strategy_path) {
        /* parameters come from the file */
    } else if (p->kind == DPC_MECH_TOEPLITZ || p->kind == DPC_MECH_DENSE) {
        if (!o->coeffs_path)
            return cli_fail(cmd, "--coeffs: %s needs a coefficient file",
                            dpc_mech_kind_name(p->kind));
        if (p->kind == DPC_MECH_TOEPLITZ) {
            size_t cnt;
            if (dpc_io_read_numbers(o->coeffs_path, 0, &o->coeffs, &cnt, &err))
                return cli_fail(cmd, "--coeffs: %s", err.msg);
            p->coeffs = o->coeffs;
            p->ncoeffs = cnt;
        } else {
            size_t n_out;
            if (dpc_io_read_lower_triangular(o->coeffs_path, p->steps, &o->dense, &n_out, &err))
                return cli_fail(cmd, "--coeffs: %s", err.msg);
            p->dense = o->dense;
        }
    } else if (o->coeffs_path) {
        return cli_fail(cmd, "--coeffs: only for the toeplitz and dense kinds");
    }
    if (dpc_mech_params_check(p, &err)) return cli_fail(cmd, "--%s", err.msg);
    if (o->part.k == 0) return cli_fail(cmd, "--participations: must be >= 1");
    if (o->part.b == 0) return cli_fail(cmd, "--min-sep: must be >= 1");
    return 0;
}
