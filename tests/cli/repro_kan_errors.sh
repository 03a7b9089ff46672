#!/bin/sh
# The error paths of `dpcorr repro kan` (tools/repro_kan.c, issue 36): bad arguments and an
# output directory that cannot be made exit 2 naming the option; a CSV of each section that
# cannot be opened (a directory in its place) or written (/dev/full) ends the run with exit 1 and
# a message naming the file. Under `make asan` (BUILD=build-asan) every run is also checked by
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

# each section's first CSV (and the second file of sections that open two) blocked by a
# directory of the same name: the section stops at once, exit 1, the file named
for f in noise_stats.csv noise_cumvar.csv sensitivity.csv kappa_table.csv lambda_fixed_kappa.csv \
         lambda_calibrated.csv width_window.csv n_eps_trends.csv fmnist_kan_vs_mlp.csv; do
    if [ "$f" = fmnist_kan_vs_mlp.csv ] && [ ! -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
        skip "repro kan: $f error path: Debian's dataset-fashion-mnist is not installed"
        continue
    fi
    mkdir -p "$TMP/b_$f/$f"
    expect_rc 1 "$f blocked" "$BIN" repro kan --smoke --out "$TMP/b_$f"
    err_has "cannot write .*$f" "$f named"; no_leak "$f blocked"
done
# a write error (the disk full): the run finishes, says so and exits 1
mkdir -p "$TMP/full"
ln -s /dev/full "$TMP/full/sensitivity.csv"
expect_rc 1 "write error" "$BIN" repro kan --smoke --out "$TMP/full"
err_has "write error" "write error reported"; no_leak "write error"
summary
