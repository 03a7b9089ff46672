#!/bin/sh
# End-to-end tests of DPCORR_ISA: every level this CPU runs gives the same training run bit for
# bit (1 and 2 threads), the level is recorded in the report and the run header, and an unknown
# level is refused with exit code 2 and a message naming DPCORR_ISA; the same for a cnn run. And
# --precision float32: recorded, bit-identical on 1 and 2 threads and at every level, refused
# for kan and cnn and for a bad value; the dry run prints the level and the precision.
BIN=${1:-build/dpcorr}
. "$(dirname "$0")/common.inc"
DATA="synthetic:logistic,n=2000,d=30,margin=0.1,test-n=300"
COMMON="--data $DATA --model mlp:24:tanh --epochs 2 --batch 50 --lr 0.3 --clip 1 --epsilon 2 --seed 1"

expect_rc 0 "help names DPCORR_ISA" "$BIN" --help
out_has "DPCORR_ISA=sse2\|avx2\|avx512" "help line"
have=$(sed -n 's/.*here \([a-z0-9]*\);.*/\1/p' "$TMP/out")
ref=""
for lvl in sse2 avx2 avx512; do
    case "$lvl:$have" in avx2:sse2|avx512:sse2|avx512:avx2) skip "train at $lvl: this CPU runs up to $have"; continue ;; esac
    for T in 1 2; do
        expect_rc 0 "train at $lvl, $T threads" env DPCORR_ISA=$lvl "$BIN" train $COMMON \
            --mech bsr --bands 4 --momentum 0.9 --threads $T --report "$TMP/$lvl$T.json"
        err_has "isa $lvl" "run header names $lvl"
        if grep -q "\"isa\": \"$lvl\"" "$TMP/$lvl$T.json"; then pass; else fail "report isa $lvl"; fi
        h=$(sed -n 's/.*"params_hash": "\([0-9a-f]*\)".*/\1/p' "$TMP/$lvl$T.json")
        [ -z "$ref" ] && ref=$h
        if [ -n "$h" ] && [ "$h" = "$ref" ]; then pass; else fail "$lvl $T threads: $h vs $ref"; fi
    done
done
# a cnn (1 x 6 x 6 inputs) with BSR noise: the same parameters at every level and thread count
CNN="--data synthetic:logistic,n=400,d=36,test-n=100 --model cnn:conv3k3,tanh,maxpool2,gn3,fc4,relu"
CNN="$CNN --epochs 1 --batch 40 --lr 0.3 --clip 1 --epsilon 2 --mech bsr --bands 3 --chunk 7 --seed 1"
cref=""
for lvl in sse2 avx2 avx512; do
    case "$lvl:$have" in avx2:sse2|avx512:sse2|avx512:avx2) skip "cnn at $lvl: this CPU runs up to $have"; continue ;; esac
    for T in 1 2; do
        expect_rc 0 "cnn at $lvl, $T threads" env DPCORR_ISA=$lvl "$BIN" train $CNN --threads $T \
            --report "$TMP/c$lvl$T.json"
        h=$(sed -n 's/.*"params_hash": "\([0-9a-f]*\)".*/\1/p' "$TMP/c$lvl$T.json")
        [ -z "$cref" ] && cref=$h
        if [ -n "$h" ] && [ "$h" = "$cref" ]; then pass; else fail "cnn $lvl $T threads: $h vs $cref"; fi
    done
done
expect_rc 2 "cnn refuses float32" "$BIN" train $CNN --precision float32
err_has "precision: float32" "message names --precision"

# the default is the level measured fastest here per family (dpc_tune_isa), recorded with the
# measurements; DPCORR_ISA forces one level for every family and says so
expect_rc 0 "train at the default level" "$BIN" train $COMMON --report "$TMP/d.json"
J="$TMP/d.json"
if grep -q '"forced_by_DPCORR_ISA": false' "$J"; then pass; else fail "default not forced"; fi
for fam in gemm gauss noise; do
    lv=$(sed -n "s/.*\"$fam\": \"\([a-z0-9]*\)\".*/\1/p" "$J" | head -n 1)
    case "$lv:$have" in
        sse2:*|avx2:avx2|avx2:avx512|avx512:avx512) pass ;;
        *) fail "family $fam: level '$lv' with $have here" ;;
    esac
    eval "lv_$fam=$lv"
done
# every level this CPU runs was measured (a positive ns figure per family)
n=$(sed -n 's/.*"measured_ns_per_unit": \(.*\)}}.*/\1/p' "$J" | grep -o '"[a-z0-9]*": [0-9][0-9.e+-]*' | grep -c -v '": 0$')
want=$(case $have in sse2) echo 3 ;; avx2) echo 6 ;; *) echo 9 ;; esac)
if [ "$n" = "$want" ]; then pass; else fail "measured levels: $n figures, expected $want"; fi
if grep -q "\"isa\": \"$lv_gemm\"" "$J" && grep -q "\"isa_noise\": \"$lv_noise\"" "$J"; then pass
else fail "the run used the chosen levels (model $lv_gemm, noise $lv_noise)"; fi
expect_rc 0 "train with DPCORR_ISA=sse2" env DPCORR_ISA=sse2 "$BIN" train $COMMON --report "$TMP/s.json"
if grep -q '"forced_by_DPCORR_ISA": true' "$TMP/s.json" && grep -q '"isa_noise": "sse2"' "$TMP/s.json" &&
    ! grep -q measured_ns_per_unit "$TMP/s.json"; then pass; else fail "forced level recorded"; fi

expect_rc 2 "unknown level" env DPCORR_ISA=avx9 "$BIN" train $COMMON
err_has "DPCORR_ISA=avx9: unknown level 'avx9'" "message names the variable and the value"
expect_rc 2 "upper case refused" env DPCORR_ISA=AVX2 "$BIN" demo --quick
err_has "DPCORR_ISA=AVX2" "message names the value"
expect_rc 0 "auto accepted" env DPCORR_ISA=auto "$BIN" version

# --precision float32
f32=""
for lvl in sse2 $have; do
    for T in 1 2; do
        expect_rc 0 "float32 at $lvl, $T threads" env DPCORR_ISA=$lvl "$BIN" train $COMMON \
            --precision float32 --threads $T --report "$TMP/f$lvl$T.json"
        err_has "isa $lvl, float32" "run header names float32"
        if grep -q '"precision": "float32"' "$TMP/f$lvl$T.json"; then pass; else fail "report precision"; fi
        h=$(sed -n 's/.*"params_hash": "\([0-9a-f]*\)".*/\1/p' "$TMP/f$lvl$T.json")
        [ -z "$f32" ] && f32=$h
        if [ -n "$h" ] && [ "$h" = "$f32" ]; then pass; else fail "float32 $lvl $T: $h vs $f32"; fi
    done
done
if grep -q '"precision": "double"' "$TMP/d.json"; then pass; else fail "report precision double"; fi
d=$(sed -n 's/.*"params_hash": "\([0-9a-f]*\)".*/\1/p' "$TMP/d.json")
if [ "$d" != "$f32" ]; then pass; else fail "float32 and double runs differ"; fi
expect_rc 2 "bad precision" "$BIN" train $COMMON --precision half
err_has "precision" "message names precision"
expect_rc 2 "kan refuses float32" "$BIN" train --data "$DATA" --model kan:4 --epsilon 2 --precision float32
err_has "float32" "message names float32"
expect_rc 0 "dry run" env DPCORR_ISA=sse2 "$BIN" train $COMMON --precision float32 --dry-run
out_has "^isa = sse2$" "dry run prints the level"
out_has "^precision = float32$" "dry run prints the precision"
summary
