/* train_linreg_ckpt.c — checkpoints of `dpcorr train --algo dp-ambssgd|dp-ssgd`: the trainer's
 * state (dpc_linreg_save) and the log so far in the container of dpcorr/train.h. */
#include "train_linreg.h"

#include <stdlib.h>
#include <string.h>

int lr_ckpt_build(const lr_cli *c, const dpc_linreg *lr, const lr_out *u, dpc_ckpt **out)
{
    int rc = frame_ckpt_new(&c->fr, dpc_linreg_algo_name(u->P->algo), out);
    if (rc) return rc;
    dpc_ckpt_item_num(*out, "c1", "c1", c->o.c1);
    dpc_ckpt_item_num(*out, "dpstat_beta", "DP-STAT beta", c->o.dpstat_beta);
    dpc_ckpt_item_count(*out, "log_every", "steps per log record", u->every);
    double *lg = malloc((u->nlog * 8 + 1) * sizeof *lg);
    for (size_t i = 0; lg && i < u->nlog; i++) {
        const log_rec *r = &u->lg[i];
        double v[8] = {(double)r->t, r->gamma, r->zeta, r->noise_std, r->clip_fraction,
                       r->batch_loss, r->excess_risk, (double)r->counts};
        memcpy(lg + 8 * i, v, sizeof v);
    }
    dpc_error err = {0};
    if (!lg || dpc_linreg_save(lr, *out, &err) ||
        dpc_ckpt_put(*out, "cli.block", u->blk, 4, &err) ||
        dpc_ckpt_put(*out, "cli.log", lg, 8 * u->nlog, &err)) {
        fprintf(stderr, "dpcorr train: checkpoint: %s\n", lg ? err.msg : "out of memory");
        rc = CLI_RUNTIME;
    }
    free(lg);
    return rc;
}

/* --resume F: the saved run into lr and its log into u (a changed option is named). */
int lr_resume(const lr_cli *c, opt_set *s, dpc_linreg *lr, lr_out *u)
{
    dpc_ckpt *mine = NULL, *saved = NULL;
    int rc = lr_ckpt_build(c, lr, u, &mine);
    if (!rc) rc = frame_ckpt_read(&c->fr, s, dpc_linreg_algo_name(u->P->algo), mine, &saved);
    dpc_error err = {0};
    size_t n = 0;
    const double *lg = saved ? dpc_ckpt_section(saved, "cli.log", &n) : NULL;
    if (!rc && (dpc_linreg_restore(lr, saved, &err) ||
                dpc_ckpt_get(saved, "cli.block", u->blk, 4, &err)))
        rc = frame_ckpt_fail(s, &err);
    if (!rc && (n % 8 || n / 8 > u->cap))
        rc = opt_fail(s, "--resume: %s: a log of %zu values does not fit this run", c->fr.resume, n);
    for (size_t i = 0; !rc && i < n / 8; i++, lg += 8)
        u->lg[u->nlog++] = (log_rec){(size_t)lg[0], lg[1], lg[2], lg[3], lg[4], lg[5], lg[6],
                                     (size_t)lg[7]};
    if (!rc && !c->fr.quiet) fprintf(stderr, "resumed at step %zu\n", dpc_linreg_steps_done(lr));
    dpc_ckpt_free(mine);
    dpc_ckpt_free(saved);
    return rc;
}
