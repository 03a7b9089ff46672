#!/bin/sh
# The C embedder's path (doc/embedding.md): the examples/ programs run and check themselves; an
# install to a temporary prefix writes the pkg-config file and lib/cmake/dpcorr/dpcorrConfig.cmake;
# the examples build against that prefix with pkg-config (shared, with an rpath) and the CMake
# project examples/CMakeLists.txt finds and links it. A missing tool is reported as a failure, never a pass.
BIN=${1:-build/dpcorr}
. "$(dirname "$0")/common.inc"
B=${BUILD:-build}
for e in private_sgd calibrate stream_noise; do
    expect_rc 0 "example $e" "$B/examples/$e"
done
out_has "bit for bit the same" "stream_noise: slices equal one generator"

if [ "${DPC_TEST_SCALE:-}" = asan ]; then
    # a sanitized library cannot be linked by a plain downstream build; the install path is
    # checked by the normal run (not counted here, neither pass nor fail)
    echo "embed.sh: install, pkg-config and CMake builds not run under sanitizers"
    summary
    exit $?
fi
PFX="$TMP/prefix"
expect_rc 0 "make install" make -s BUILD="$B" PREFIX="$PFX" install
for f in lib/pkgconfig/dpcorr.pc lib/cmake/dpcorr/dpcorrConfig.cmake include/dpcorr.h lib/libdpcorr.so; do
    if [ -e "$PFX/$f" ]; then pass; else fail "install: $f missing"; fi
done
if command -v pkg-config >/dev/null 2>&1; then
    flags=$(PKG_CONFIG_PATH="$PFX/lib/pkgconfig" pkg-config --cflags --libs dpcorr)
    expect_rc 0 "pkg-config build" ${CC:-cc} -std=c11 -O2 -o "$TMP/pc_calibrate" examples/calibrate.c \
        $flags -Wl,-rpath,"$PFX/lib"
    expect_rc 0 "pkg-config example runs from the prefix" "$TMP/pc_calibrate"
    out_has "accounted again: .*: same" "pkg-config example output"
else
    fail "pkg-config not installed"
fi
if command -v cmake >/dev/null 2>&1; then
    expect_rc 0 "cmake configure" cmake -S examples -B "$TMP/cm" -DCMAKE_PREFIX_PATH="$PFX"
    expect_rc 0 "cmake build" cmake --build "$TMP/cm"
    expect_rc 0 "cmake shared example" "$TMP/cm/calibrate"
    expect_rc 0 "cmake static example" "$TMP/cm/private_sgd_static"
    out_has "private_sgd: 60 steps" "cmake static example output"
else
    fail "cmake not installed"
fi
summary
