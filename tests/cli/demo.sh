#!/bin/sh
# `dpcorr demo --quick`: the README's main job end to end on a Fashion-MNIST subset (both runs,
# the table, the JSON reports and the plot).
BIN=${1:-build/dpcorr}
. "$(dirname "$0")/common.inc"
if [ ! -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
    skip "Debian's dataset-fashion-mnist is not installed"; summary; exit $?
fi
expect_rc 0 "demo --quick" "$BIN" demo --quick --epochs 1 --out "$TMP/d"
out_has "^DP-SGD +0\.[0-9]+ +3 " "DP-SGD row at epsilon 3"
out_has "^BSR \(amplified BandMF\) +0\.[0-9]+ +3 " "BSR row at epsilon 3"
for f in dpsgd.json bsr.json demo.png; do
    if [ -s "$TMP/d/$f" ]; then pass; else fail "missing $f"; fi
done
for k in '"epsilon": [23]\.[09]' '"seed_mode": "seeded"' '"route": "amplified by sampling' '"test_accuracy"'; do
    if grep -Eq "$k" "$TMP/d/bsr.json"; then pass; else fail "bsr.json lacks $k"; fi
done
expect_rc 2 "demo bad option" "$BIN" demo --epochs 0
err_has -- "--epochs" "names --epochs"
summary
