#!/bin/sh
# The error paths of `dpcorr repro kan` (tools/repro_kan.c, issue 36): bad arguments, an output
# directory that cannot be made and a CSV that cannot be written (a directory or /dev/full in its
# place: refused up front since issue 37) exit 2 naming the option; a write error or an open
# failing during the run ends it with exit 1 and a message naming the file. Under `make asan` (BUILD=build-asan) every run is also checked by
# LeakSanitizer: leak detection is forced on here, and a leak (exit 23, "LeakSanitizer" on
# stderr) fails the case, so each path must free its buffers, generators and files.
BIN=${1:-build/dpcorr}
. "$(dirname "$0")/common.inc"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1"
export ASAN_OPTIONS
no_leak() { if grep -q "LeakSanitizer" "$TMP/err"; then fail "$1: $(grep -m 3 -E 'LeakSanitizer|Direct leak' "$TMP/err")"; else pass; fi; }

# bad arguments (exit 2, the option named)
expect_rc 2 "unknown option" "$BIN" repro kan --frobnicate
err_has -- "--frobnicate" "unknown option named"; no_leak "unknown option"
expect_rc 2 "bad seed" "$BIN" repro kan --smoke --seed x --out "$TMP/s"
err_has -- "--seed" "bad seed named"; no_leak "bad seed"
expect_rc 2 "seed given twice" "$BIN" repro kan --smoke --seed 1 --seed 2 --out "$TMP/s"
err_has -- "--seed" "duplicate seed named"; no_leak "seed given twice"
# an output directory that cannot be made: a regular file on its path
: > "$TMP/file"
expect_rc 2 "unwritable --out" "$BIN" repro kan --smoke --out "$TMP/file/sub"
err_has -- "--out" "unwritable --out named"; no_leak "unwritable --out"

# each section's CSV blocked by a directory of the same name, or a link to /dev/full: refused
# before any work (issue 37: every file repro writes into --out is checked up front), exit 2,
# --out and the file named
for f in noise_stats.csv noise_cumvar.csv sensitivity.csv kappa_table.csv lambda_fixed_kappa.csv \
         lambda_calibrated.csv width_window.csv n_eps_trends.csv fmnist_kan_vs_mlp.csv; do
    mkdir -p "$TMP/b_$f/$f"
    expect_rc 2 "$f blocked" "$BIN" repro kan --smoke --out "$TMP/b_$f"
    err_has -- "--out: cannot write .*$f" "$f named"; no_leak "$f blocked"
done
mkdir -p "$TMP/full"
ln -s /dev/full "$TMP/full/sensitivity.csv"
expect_rc 2 "/dev/full" "$BIN" repro kan --smoke --out "$TMP/full"
err_has -- "--out: refusing to write .*sensitivity\.csv.*not a regular file" "/dev/full refused"; no_leak "/dev/full"
# the run's own error paths, which the up-front check cannot see: a write error (a file size
# limit, SIGXFSZ ignored: every CSV larger than 512 bytes fails at its commit) finishes the run,
# says so and exits 1; a second file that cannot be opened (no file descriptor left: the
# noise section holds two) ends the section at once, exit 1, the file named
sh -c 'ulimit -f 1; trap "" XFSZ; exec "$@"' sh "$BIN" repro kan --smoke --out "$TMP/fsz" >"$TMP/out" 2>"$TMP/err"; rc=$?
if [ $rc -eq 1 ]; then pass; else fail "write error: exit $rc, want 1: $(head -c 300 "$TMP/err")"; fi
err_has "write error" "write error reported"; no_leak "write error"
if ls "$TMP/fsz"/*.tmp.* >/dev/null 2>&1; then fail "write error: temporaries left"; else pass; fi
sh -c 'ulimit -n 4; exec "$@"' sh "$BIN" repro kan --smoke --out "$TMP/nofd" >"$TMP/out" 2>"$TMP/err"; rc=$?
if [ $rc -eq 1 ]; then pass; else fail "no file descriptor: exit $rc, want 1: $(head -c 300 "$TMP/err")"; fi
err_has "cannot write .*noise_cumvar\.csv" "no file descriptor: the file named"; no_leak "no file descriptor"
summary
