#!/bin/sh
# advise.sh — `dpcorr advise`: the library's ranking of mechanisms for a run's shape
# (dpc_train_advise), printed as a table with the reason of each rank and the recommended
# `dpcorr train` options; --json; the delta rule and the refusals naming the options typed.
BIN=${1:-build/dpcorr}
. "$(dirname "$0")/common.inc"
A="$BIN advise --n-examples 2000 --batch 100 --epochs 2 --epsilon 2 --quick"

expect_rc 0 "help" "$BIN" advise --help
out_has "^ *--n-examples" "help lists --n-examples"
expect_rc 0 "listed by dpcorr --help" "$BIN" --help
out_has "^  advise " "advise in the command list"

expect_rc 0 "dry run" $A --dry-run
out_has "^delta = (1e-05|1.0000000000000001e-05)$" "delta derived from N = 2000"
out_has "^skip_slow = 1$" "--quick read"

expect_rc 0 "table" $A
out_has "mechanisms for N = 2000, batch 100, 2 epochs \(40 steps\), epsilon 2, delta 1e-05 \(the default for N\)" "header"
out_has "^1 +[A-Za-z]" "rank 1 printed"
n=$(grep -cE '^[1-9] ' "$TMP/out"); [ "$n" -eq 5 ] && pass || fail "5 ranked candidates, got $n"
out_has "DP-SGD \(identity\) +poisson .* 1\.000x" "DP-SGD is the reference (1.000x)"
out_has "^  1\. lowest error, [0-9.]+x less squared error than the next" "the first rank's reason"
out_has "^recommended: dpcorr train --mech [a-z]+" "the recommended options"
# the ranking is by error: the error column never decreases
awk '/^[1-9] / { e = $(NF - 2); if (n++ && e + 0 < last) bad = 1; last = e + 0 } END { exit bad }' "$TMP/out" \
    && pass || fail "ranked by increasing error"

expect_rc 0 "json" $A --json
out_has '"candidates": \[' "json candidates"
out_has '"train_options": "--mech identity"' "json: DP-SGD's train options"
out_has '"vs_sgd": 1,' "json: DP-SGD's ratio"

# momentum: the workload of SGD with momentum (BSR fitted to it)
expect_rc 0 "momentum" $A --momentum 0.9
out_has "BSR \(bands=[0-9]+, momentum=0.9" "BSR fitted to the optimizer's momentum"
out_has "workload SGD with momentum" "the workload named"

# refusals name the options as typed
expect_rc 2 "delta >= 1/N" $A --delta 0.01
err_has "[-]-delta: 0.01 >= 1/N = 0.0005" "names --delta"
err_has "set [-]-allow-large-delta to accept" "names --allow-large-delta"
expect_rc 0 "delta >= 1/N allowed" $A --delta 0.01 --allow-large-delta
expect_rc 2 "no N" "$BIN" advise --epsilon 1
err_has "[-]-n-examples: required" "N required"
expect_rc 2 "no epsilon" "$BIN" advise --n-examples 100
err_has "[-]-epsilon: required" "epsilon required"
expect_rc 2 "batch above N" "$BIN" advise --n-examples 100 --batch 200 --epsilon 1
err_has "[-]-batch: must be in \[1, N = 100\]" "names --batch"

summary
