#!/bin/sh
# progress.sh — a calibration that runs longer than two seconds shows its progress on a terminal
# (README, doc/cli.md): `account sigma` over balls-in-bins with its Monte Carlo (about 4 s of CPU,
# no delay override: the documented two seconds) and `train`'s calibration, each run on a pseudo-terminal (script(1),
# else python3's pty module); a quick command and --quiet print none.
# Usage: sh tests/cli/progress.sh build/dpcorr
. "$(dirname "$0")/common.inc"
BIN=${1:-build/dpcorr}

# on_tty command...: runs it on a pseudo-terminal (stderr a tty); its output to $TMP/tty
on_tty() {
    if command -v script >/dev/null 2>&1; then
        script -qec "$*" /dev/null </dev/null >"$TMP/tty" 2>&1
    elif python3 -c 'import pty' 2>/dev/null; then
        python3 -c 'import os, pty, sys; sys.exit(os.waitstatus_to_exitcode(pty.spawn(sys.argv[1:])))' \
            "$@" </dev/null >"$TMP/tty" 2>&1
    else
        return 200
    fi
}
tty_has() { if grep -Eaq -- "$1" "$TMP/tty"; then pass; else fail "$2: lacks /$1/: $(tr '\r' '\n' <"$TMP/tty" | head -c 300)"; fi; }
tty_lacks() { if grep -Eaq -- "$1" "$TMP/tty"; then fail "$2: has /$1/"; else pass; fi; }

on_tty true
if [ $? -eq 200 ]; then
    skip "no pseudo-terminal (neither script nor python3 pty): progress on a terminal not checked"
    summary; exit
fi

# the issue's case, smaller: balls-in-bins calibration, seconds of work, the default delay (the
# deterministic bound alone now answers 30 bins in 0.6 s: the Monte Carlo keeps it busy)
on_tty env -u DPCORR_PROGRESS_DELAY "$BIN" account sigma --mech nu --nu 0.007 --steps 600 \
    --balls-in-bins 90 --epsilon 2 --delta 1e-5 --bib-monte-carlo
[ $? -eq 0 ] && pass || fail "balls-in-bins calibration on a terminal: exit $?"
tty_has "dpcorr account sigma: [0-9]+ of at most [0-9]+ stages, [0-9]+ s \(Ctrl-C stops\)" \
    "balls-in-bins calibration progress on a terminal"
tty_has "$(printf '\r')dpcorr account sigma" "the progress line is rewritten in place"
tty_has "^sigma +[0-9.]+" "the result follows"

# a quick command prints no progress
on_tty env -u DPCORR_PROGRESS_DELAY "$BIN" account epsilon --sigma 1 --steps 100 --q 0.01 --delta 1e-5
tty_lacks "Ctrl-C stops" "a quick command"

# train's calibration (balls-in-bins) reports too; --quiet silences it
TR="train --data synthetic:logistic,n=1200,d=4,test-n=100 --model logistic --mech nu --nu 0.01 --sampler balls-in-bins --batch 40 --epochs 2 --epsilon 2 --delta 1e-5 --seed 1"
on_tty env DPCORR_PROGRESS_DELAY=0 "$BIN" $TR
tty_has "dpcorr train: calibrating: [0-9]+ of at most [0-9]+ stages" "train calibration progress"
tty_has "final test accuracy" "the run follows"
on_tty env DPCORR_PROGRESS_DELAY=0 "$BIN" $TR --quiet
tty_lacks "calibrating" "train --quiet"

# audit's trainer calibrates the same way and reports too (issue 38: it was silent)
AU="audit --data synthetic:logistic,n=1200,d=4,test-n=100 --model logistic --mech nu --nu 0.01 --sampler balls-in-bins --batch 40 --epochs 2 --epsilon 2 --delta 1e-5 --seed 1 --canaries 4"
on_tty env DPCORR_PROGRESS_DELAY=0 "$BIN" $AU
tty_has "dpcorr audit: calibrating: [0-9]+ of at most [0-9]+ stages" "audit calibration progress"
tty_has "audit step 60/60" "the audit's steps follow"
on_tty env DPCORR_PROGRESS_DELAY=0 "$BIN" $AU --quiet
tty_lacks "calibrating" "audit --quiet"

summary
