#!/bin/sh
# Runs the Python package's pytest suite against $BUILD/libdpcorr.so with $PYTHON (default
# Debian's /usr/bin/python3) and prints "N passed, N failed, N skipped" (the line
# tests/run_all.sh sums), after one "skip: why" line per pytest skip. Arguments go to pytest
# (e.g. -k name). When $PYTHON lacks numpy, torch or pytest the whole suite is one skip that says
# which module is missing: never a pass (scripts/setup.sh installs python3-numpy python3-torch
# python3-pytest).
cd "$(dirname "$0")/../.." || exit 1
PYTHON=${PYTHON:-/usr/bin/python3}
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD="$(pwd)/$BUILD" ;; esac
missing=""
for m in numpy torch pytest; do
    "$PYTHON" -c "import $m" >/dev/null 2>&1 || missing="$missing $m"
done
if [ -n "$missing" ]; then
    echo "skip: $PYTHON lacks${missing} (scripts/setup.sh installs them)"
    echo "0 passed, 0 failed, 1 skipped"
    exit 0
fi
# -rsx: pytest's short summary lists each skip as "SKIPPED [n] file:line: reason" and each
# expected failure (a known open defect, strict) as "XFAIL test - reason": both counted as skips
out=$(DPCORR_LIB="$BUILD/libdpcorr.so" DPCORR_CLI="$BUILD/dpcorr" PYTHONPATH=python \
      "$PYTHON" -m pytest -q -rsx -p no:cacheprovider python/tests "$@" 2>&1); rc=$?
printf '%s\n' "$out" | grep -v '^SKIPPED \[\|^XFAIL ' | tail -n 60
# pytest's summary line, e.g. "3 failed, 410 passed, 2 skipped, 1 error in 9.1s"
last=$(printf '%s\n' "$out" | grep -E '[0-9]+ (passed|failed|skipped|errors?|deselected)' | tail -n 1)
count() { printf '%s\n' "$last" | sed -n "s/^\(.*[^0-9]\)\{0,1\}\([0-9][0-9]*\) $1.*/\2/p" | head -n 1; }
p=$(count passed); f=$(count failed); e=$(count error); s=$(count skipped); x=$(count xfailed)
p=${p:-0}; s=$(( ${s:-0} + ${x:-0} )); f=$(( ${f:-0} + ${e:-0} ))
if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
printf '%s\n' "$out" | sed -n 's/^SKIPPED \[[0-9]*\] /skip: /p; s/^XFAIL /skip: expected failure (known open defect): /p'
echo "$p passed, $f failed, $s skipped"
[ "$f" -eq 0 ]
