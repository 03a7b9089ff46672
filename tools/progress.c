/* progress.c — the CLI's progress printer; see progress.h. */
#include "progress.h"
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int on_progress(void *ctx, double done, double total)
{
    cli_progress *p = ctx;
    if (done < p->prev) p->base += p->prev;
    p->prev = done;
    done += p->base;
    total += p->base;
    double now = cli_now(), el = now - p->t0;
    if (p->quiet || el < p->delay || now - p->last < (p->tty ? 0.5 : 10.0)) return 0;
    p->last = now;
    if (total > done)
        fprintf(stderr, "%s%s: %.0f of at most %.0f %s, %.0f s (Ctrl-C stops)%s", p->tty ? "\r" : "",
                p->what, done, total, p->unit, el, p->tty ? "   " : "\n");
    else
        fprintf(stderr, "%s%s: %.0f %s, %.0f s (Ctrl-C stops)%s", p->tty ? "\r" : "", p->what,
                done, p->unit, el, p->tty ? "   " : "\n");
    fflush(stderr);
    p->printed = 1;
    return 0;
}

dpc_progress cli_progress_start(cli_progress *p, const char *what, const char *unit, int quiet)
{
    p->what = what;
    p->unit = unit;
    p->t0 = cli_now();
    p->last = 0.0;
    p->tty = isatty(2);
    p->printed = 0;
    p->quiet = quiet;
    p->base = p->prev = 0.0;
    const char *d = getenv("DPCORR_PROGRESS_DELAY"); /* tests: 0 shows the first report */
    p->delay = d && *d ? atof(d) : PROGRESS_DELAY;
    return (dpc_progress){on_progress, p};
}

void cli_progress_end(cli_progress *p)
{
    if (p->printed && p->tty) fputc('\n', stderr);
    p->printed = 0;
}
