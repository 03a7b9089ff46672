#!/bin/sh
# A skip is never a pass (issue 36): tests/run_all.sh on stand-in suites (CLI_TESTS) sums the
# skips apart from the passes, lists each with its reason before the totals, reads the old
# two-count summary too, and exits 0 on skips alone but non-zero on a failure; the totals line
# stays last and is "N passed, N failed, N skipped".
BIN=${1:-build/dpcorr}
. "$(dirname "$0")/common.inc"
inc="$(cd "$(dirname "$0")" && pwd)/common.inc"
S="$TMP/suites"
mkdir -p "$S"
printf '. "%s"\nskip "no data here"\nsummary\n' "$inc" > "$S/skipper.sh"
printf '. "%s"\npass; pass; summary\n' "$inc" > "$S/passer.sh"
printf '. "%s"\npass; fail "on purpose"; summary\n' "$inc" > "$S/failer.sh"
printf 'echo "3 passed, 0 failed"\n' > "$S/old.sh"
printf 'echo "0 passed, 0 failed, 2 skipped"\n' > "$S/mute.sh"
# a C test binary's output (tests/harness.h SKIP and TEST_SUMMARY)
printf '#!/bin/sh\necho "skip: tests/test_x.c:9: avx512 kernels: this CPU lacks the level"\necho "4 passed, 0 failed, 1 skipped"\n' > "$S/test_x"
chmod +x "$S/test_x"

expect_rc 0 "a skip alone exits 0" sh "$S/skipper.sh"
out_has "^skip: no data here$" "the skip says why"
out_has "^0 passed, 0 failed, 1 skipped$" "the skip is not a pass"

expect_rc 0 "skips alone: run_all exits 0" env CLI_TESTS="$S/skipper.sh $S/passer.sh $S/old.sh $S/mute.sh" \
    PYTHON_TESTS=0 sh tests/run_all.sh "$S/test_x"
out_has "^\[skipper.sh\] 0 passed, 0 failed, 1 skipped$" "the suite's line"
out_has "^\[old.sh\] 3 passed, 0 failed$" "the two-count summary still read"
out_has "^\[skipper.sh\] skipped: no data here$" "a script's skip listed with its reason"
out_has "^\[test_x\] skipped: tests/test_x.c:9: avx512 kernels" "a C test's skip listed with its reason"
out_has "^\[mute.sh\] skipped: 2 \(no reason printed\)$" "a skip without a reason still listed"
out_has "^\[pytest\] skipped: not run" "the Python suite not run is listed"
last=$(tail -n 1 "$TMP/out")
if printf '%s\n' "$last" | grep -Eq '^[0-9]+ passed, 0 failed, 5 skipped$'; then pass; else fail "totals line last: '$last'"; fi
# the passes are exactly the suites' passes: skips add none
p=$(sed -n 's/^\[[^]]*\] \([0-9]*\) passed.*/\1/p' "$TMP/out" | awk '{ s += $1 } END { print s + 0 }')
if [ "${last%% passed*}" = "$p" ]; then pass; else fail "total passes ${last%% passed*} vs the suites' $p"; fi
lists=$(grep -n "^skipped or absent:" "$TMP/out" | cut -d: -f1); n=$(wc -l < "$TMP/out")
if [ -n "$lists" ] && [ "$lists" -lt "$n" ]; then pass; else fail "the list comes before the totals"; fi

expect_rc 1 "a failure: run_all exits non-zero" env CLI_TESTS="$S/skipper.sh $S/failer.sh" PYTHON_TESTS=0 \
    sh tests/run_all.sh
if tail -n 1 "$TMP/out" | grep -Eq '^[0-9]+ passed, 1 failed, 2 skipped$'; then pass; else fail "failure totals: $(tail -n 1 "$TMP/out")"; fi
summary
