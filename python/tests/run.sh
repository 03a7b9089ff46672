#!/bin/sh
# Runs the Python package's pytest suite against $BUILD/libdpcorr.so with $PYTHON (default
# Debian's /usr/bin/python3) and prints "N passed, N failed" (the line tests/run_all.sh sums).
# When $PYTHON lacks numpy, torch or pytest it says which and reports 0 passed, 0 failed
# (scripts/setup.sh installs python3-numpy python3-torch python3-pytest).
cd "$(dirname "$0")/../.." || exit 1
PYTHON=${PYTHON:-/usr/bin/python3}
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD="$(pwd)/$BUILD" ;; esac
if ! "$PYTHON" -c "import numpy, torch, pytest" >/dev/null 2>&1; then
    echo "python suite skipped: $PYTHON cannot import numpy, torch and pytest (scripts/setup.sh installs them)"
    echo "0 passed, 0 failed"
    exit 0
fi
out=$(DPCORR_LIB="$BUILD/libdpcorr.so" DPCORR_CLI="$BUILD/dpcorr" PYTHONPATH=python \
      "$PYTHON" -m pytest -q -p no:cacheprovider python/tests 2>&1); rc=$?
printf '%s\n' "$out" | tail -n 60
last=$(printf '%s\n' "$out" | grep -E '(passed|failed|error)' | tail -n 1)
p=$(printf '%s\n' "$last" | sed -n 's/.* \([0-9][0-9]*\) passed.*/\1/p; s/^\([0-9][0-9]*\) passed.*/\1/p' | head -n 1)
f=$(printf '%s\n' "$last" | sed -n 's/.*[^0-9]\([0-9][0-9]*\) failed.*/\1/p; s/^\([0-9][0-9]*\) failed.*/\1/p' | head -n 1)
e=$(printf '%s\n' "$last" | sed -n 's/.*[^0-9]\([0-9][0-9]*\) error.*/\1/p; s/^\([0-9][0-9]*\) error.*/\1/p' | head -n 1)
p=${p:-0}; f=$(( ${f:-0} + ${e:-0} ))
if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
echo "$p passed, $f failed"
[ "$f" -eq 0 ]
