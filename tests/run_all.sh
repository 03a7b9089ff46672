#!/bin/sh
# Runs every test binary given as argument, then every tests/cli/*.sh (and the Python suite when
# PYTHON_TESTS=1), and sums their "N passed, N failed" lines (", N skipped" optional). A binary
# that crashes or prints no summary counts as one failure. A skip is never a pass: each suite's
# "skip: why" lines, and the suites not run, are listed before the total line
# "N passed, N failed, N skipped", which comes last; exits non-zero if anything failed (skips
# alone exit 0).
BUILD=${BUILD:-build}
export BUILD
total_p=0; total_f=0; total_s=0; skips=""
NL='
'
run_one() {
    name=$1; shift
    out=$("$@" 2>&1); rc=$?
    line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' | tail -n 1)
    sk=0
    if [ -z "$line" ]; then
        printf '%s\n' "$out" | tail -n 20
        echo "[$name] no summary line (exit $rc)"
        p=0; f=1
    else
        p=${line%% passed*}; f=${line#*, }; f=${f%% failed*}
        case $line in *skipped) sk=${line##*failed, }; sk=${sk%% skipped} ;; esac
        if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
        if [ "$f" -ne 0 ]; then printf '%s\n' "$out" | grep -v -E '^[0-9]+ passed' | tail -n 40; fi
        echo "[$name] $line"
    fi
    if [ "$sk" -ne 0 ]; then
        why=$(printf '%s\n' "$out" | sed -n 's/^skip: /['"$name"'] skipped: /p')
        [ -n "$why" ] || why="[$name] skipped: $sk (no reason printed)"
        skips="$skips$why$NL"
    fi
    total_p=$((total_p + p)); total_f=$((total_f + f)); total_s=$((total_s + sk))
}
# A suite this run leaves out is one skip, listed with its reason.
not_run() { total_s=$((total_s + 1)); skips="$skips[$1] skipped: $2$NL"; }
for t in "$@"; do run_one "$(basename "$t")" "$t"; done
run_one check_sources.sh sh tests/check_sources.sh
run_one check_layout.sh sh tests/check_layout.sh
# CLI_TESTS: the scripts to run (default every tests/cli/*.sh), e.g. to try one suite's lines
for s in ${CLI_TESTS:-tests/cli/*.sh}; do
    [ -f "$s" ] || continue
    run_one "$(basename "$s")" sh "$s" "$BUILD/dpcorr"
done
# The Python package's suite (python/tests/run.sh skips it, with a reason, when $PYTHON lacks
# numpy, torch or pytest); not under sanitizers (PYTHON_TESTS=0).
if [ "${PYTHON_TESTS:-0}" = 1 ]; then run_one pytest sh python/tests/run.sh
else not_run pytest "not run in this build (PYTHON_TESTS=${PYTHON_TESTS:-0}: sanitizers, or not asked)"; fi
[ -z "$skips" ] || printf 'skipped or absent:\n%s' "$skips"
echo "$total_p passed, $total_f failed, $total_s skipped"
[ "$total_f" -eq 0 ]
