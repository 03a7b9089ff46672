/* progress.h — the CLI's printer for dpc_progress (dpcorr/common.h): long library computations
 * (calibrations, MMCC accounting, strategy optimization) report "done of total" now and then;
 * the tool shows it on stderr once the computation has run for PROGRESS_DELAY seconds (quick
 * commands print nothing; $DPCORR_PROGRESS_DELAY overrides the delay): a line rewritten in place
 * on a terminal, else a line every 10 s.
 * Ctrl-C keeps its default action (the process stops at once). */
#ifndef DPCORR_TOOLS_PROGRESS_H
#define DPCORR_TOOLS_PROGRESS_H

#include "dpcorr/common.h"

#define PROGRESS_DELAY 2.0

typedef struct cli_progress {
    const char *what;   /* "dpcorr account sigma", shown first */
    const char *unit;   /* "evaluations", "iterations" */
    double t0, last;    /* start, last line (cli_now) */
    double delay;       /* PROGRESS_DELAY, or $DPCORR_PROGRESS_DELAY (tests) */
    int tty, printed, quiet;
    double base, prev;  /* a computation that starts over (its done below the last one: the
                           next stage, e.g. the epsilon after a calibration) counts on from
                           base, so the count shown only grows */
} cli_progress;

/* Starts the clock; returns the dpc_progress to hand to the library. quiet: never prints. */
dpc_progress cli_progress_start(cli_progress *p, const char *what, const char *unit, int quiet);
/* Ends the in-place line (if any) so that later output starts on a fresh line. */
void cli_progress_end(cli_progress *p);

#endif
