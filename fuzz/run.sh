#!/bin/sh
# run.sh — `make fuzz`: builds every fuzz target (fuzz/fuzz_*.c) with ASan + UBSan against the
# library built the same way (build-fuzz/), then runs each for FUZZ_SECONDS (default 60) from the
# committed seed corpus fuzz/corpus/<target> (new inputs go to build-fuzz/corpus/<target>, crashes
# to build-fuzz/crashes/<target>/). FUZZ_ENGINE=libfuzzer (default; clang -fsanitize=fuzzer) or
# afl (AFL++: afl-clang-fast and afl-fuzz). FUZZ_TARGETS limits the targets ("csv idx").
# Prints one line per target: executions and coverage (libFuzzer: edges "cov", features "ft";
# AFL++: execs_done and bitmap coverage), then the line coverage of each loader's sources over
# the corpora (fuzz/coverage.sh; FUZZ_COVERAGE=0 skips it), and exits non-zero if any target found
# a crash.
# Not part of `make check` or CI. Run under `nice` on a shared machine.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
SECS=${FUZZ_SECONDS:-60}
ENGINE=${FUZZ_ENGINE:-libfuzzer}
OUT=build-fuzz
# the inputs go through files: a memory file system when there is one
[ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm
TARGETS=${FUZZ_TARGETS:-$(ls fuzz/fuzz_*.c | sed 's|fuzz/fuzz_\(.*\)\.c|\1|')}
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
LIBS="-lz -lpthread -lm -llbfgs -llapacke -lopenblas"
if [ "$ENGINE" = afl ]; then FCC=afl-clang-fast; else FCC=clang; fi
# the library, instrumented for coverage (fuzzer-no-link) and sanitized
make -s BUILD=$OUT CC=$FCC MPI=0 OPT="-O1 -g -fno-omit-frame-pointer" \
    SANITIZE="$SAN $( [ "$ENGINE" = afl ] || echo -fsanitize=fuzzer-no-link )" $OUT/libdpcorr.a || exit 1
mkdir -p $OUT/bin $OUT/crashes $OUT/corpus
status=0
for t in $TARGETS; do
    bin=$OUT/bin/fuzz_$t
    if [ "$ENGINE" = afl ]; then
        $FCC -std=c11 -D_DEFAULT_SOURCE -O1 -g $SAN -Iinclude -Isrc/core fuzz/fuzz_$t.c fuzz/driver.c \
            $OUT/libdpcorr.a $LIBS -o "$bin" || exit 1
    else
        clang -std=c11 -D_DEFAULT_SOURCE -O1 -g $SAN -fsanitize=fuzzer -Iinclude -Isrc/core \
            fuzz/fuzz_$t.c $OUT/libdpcorr.a $LIBS -o "$bin" || exit 1
    fi
    mkdir -p $OUT/corpus/$t $OUT/crashes/$t
    log=$OUT/fuzz_$t.log
    if [ "$ENGINE" = afl ]; then
        rm -rf $OUT/afl_$t
        AFL_SKIP_CPUFREQ=1 AFL_NO_UI=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 \
            timeout $((SECS + 60)) afl-fuzz -V "$SECS" -i fuzz/corpus/$t -o $OUT/afl_$t -- "$bin" @@ > "$log" 2>&1
        st=$OUT/afl_$t/default/fuzzer_stats
        execs=$(sed -n 's/^execs_done *: *//p' "$st" 2>/dev/null)
        cov=$(sed -n 's/^bitmap_cvg *: *//p' "$st" 2>/dev/null)
        crashes=$(ls $OUT/afl_$t/default/crashes 2>/dev/null | grep -c id: )
        echo "fuzz_$t: $execs executions, bitmap coverage $cov, $crashes crashes ($SECS s, afl++)"
        [ "${crashes:-0}" -gt 0 ] && status=1
    else
        "$bin" -max_total_time="$SECS" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
            -artifact_prefix=$OUT/crashes/$t/ $OUT/corpus/$t fuzz/corpus/$t > "$log" 2>&1
        rc=$?
        execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
        last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
        cov=$(echo "$last" | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
        ft=$(echo "$last" | sed -n 's/.*ft: \([0-9]*\).*/\1/p')
        units=$(ls $OUT/corpus/$t | wc -l)
        echo "fuzz_$t: $execs executions, cov $cov edges, ft $ft features, corpus $units new inputs, exit $rc ($SECS s, libFuzzer)"
        [ $rc -ne 0 ] && { status=1; tail -n 30 "$log"; }
    fi
done
# line coverage of each loader's sources over the corpora (fuzz/coverage.sh)
[ "${FUZZ_COVERAGE:-1}" != 0 ] && sh fuzz/coverage.sh
exit $status
