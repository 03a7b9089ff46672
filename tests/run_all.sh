#!/bin/sh
# Runs every test binary given as argument, then every tests/cli/*.sh (and the Python suite when
# PYTHON_TESTS=1), and sums their
# "N passed, N failed" lines. A binary that crashes or prints no summary counts as one failure.
# Ends with the total line "N passed, N failed"; exits non-zero if anything failed.
BUILD=${BUILD:-build}
export BUILD
total_p=0; total_f=0
run_one() {
    name=$1; shift
    out=$("$@" 2>&1); rc=$?
    line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -n 1)
    if [ -z "$line" ]; then
        printf '%s\n' "$out" | tail -n 20
        echo "[$name] no summary line (exit $rc)"
        p=0; f=1
    else
        p=${line%% passed*}; f=${line#*, }; f=${f%% failed*}
        if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
        if [ "$f" -ne 0 ]; then printf '%s\n' "$out" | grep -v -E '^[0-9]+ passed' | tail -n 40; fi
        echo "[$name] $line"
    fi
    total_p=$((total_p + p)); total_f=$((total_f + f))
}
for t in "$@"; do run_one "$(basename "$t")" "$t"; done
run_one check_sources.sh sh tests/check_sources.sh
run_one check_layout.sh sh tests/check_layout.sh
for s in tests/cli/*.sh; do
    [ -f "$s" ] || continue
    run_one "$(basename "$s")" sh "$s" "$BUILD/dpcorr"
done
# The Python package's suite (python/tests/run.sh skips it, with a reason, when $PYTHON lacks
# numpy, torch or pytest); not under sanitizers (PYTHON_TESTS=0).
if [ "${PYTHON_TESTS:-0}" = 1 ]; then run_one pytest sh python/tests/run.sh; fi
echo "$total_p passed, $total_f failed"
[ "$total_f" -eq 0 ]
