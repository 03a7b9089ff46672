#!/bin/sh
# coverage.sh — line coverage of the loaders reached by the fuzz corpora: builds the library and
# each target with clang's source-based coverage (build-fuzz-cov/, no sanitizers), replays the
# committed seeds and the inputs the last `make fuzz` kept (build-fuzz/corpus/<target>) through
# fuzz/driver.c, and prints llvm-cov's line coverage of each loader's source files. Called by
# fuzz/run.sh (FUZZ_COVERAGE=0 skips it).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
OUT=build-fuzz-cov
COV="-fprofile-instr-generate -fcoverage-mapping"
LIBS="-lz -lpthread -lm -llbfgs -llapacke -lopenblas"
TARGETS=${FUZZ_TARGETS:-$(ls fuzz/fuzz_*.c | sed 's|fuzz/fuzz_\(.*\)\.c|\1|')}
make -s BUILD=$OUT CC=clang MPI=0 OPT="-O1 -g" SANITIZE="$COV" $OUT/libdpcorr.a || exit 1
mkdir -p $OUT/bin $OUT/prof
files_of() {
    case $1 in
    idx) echo src/core/data/idx.c src/core/data/reader.c ;;
    csv) echo src/core/data/csv.c src/core/data/reader.c ;;
    libsvm) echo src/core/data/libsvm.c src/core/data/reader.c ;;
    strategy) echo src/core/strategy/strategy_file.c src/core/io/json.c ;;
    checkpoint) echo src/core/train/checkpoint.c src/core/train/ck_items.c ;;
    train_mech) echo src/core/io/textnum.c src/core/train/train_config.c src/core/mech/mech_core.c ;;
    esac
}
for t in $TARGETS; do
    bin=$OUT/bin/fuzz_$t
    clang -std=c11 -D_DEFAULT_SOURCE -O1 -g $COV -Iinclude -Isrc/core fuzz/fuzz_$t.c fuzz/driver.c \
        $OUT/libdpcorr.a $LIBS -o "$bin" || exit 1
    rm -f $OUT/prof/$t.*
    inputs=$(ls -d fuzz/corpus/$t/* build-fuzz/corpus/$t/* 2>/dev/null)
    # shellcheck disable=SC2086
    LLVM_PROFILE_FILE=$OUT/prof/$t.profraw "$bin" $inputs > /dev/null 2>&1
    llvm-profdata merge -o $OUT/prof/$t.profdata $OUT/prof/$t.profraw || continue
    n=$(echo "$inputs" | wc -w)
    # shellcheck disable=SC2046
    llvm-cov report "$bin" -instr-profile=$OUT/prof/$t.profdata $(files_of "$t") 2>/dev/null |
        awk -v t="$t" -v n="$n" '$1 ~ /\.c$/ { printf "coverage %s (%s inputs): %s lines %s, regions %s, functions %s\n", t, n, $1, $10, $4, $7 }'
done
