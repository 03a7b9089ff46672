#!/bin/sh
# `dpcorr demo --frontier --quick` (ScatterNet features, GroupNorm, private centering + linear,
# BSR at epsilon 3 on a Fashion-MNIST subset: frontier.json keys, the cache reused on a second
# run) and the --features
# / cnn model options of `dpcorr train`.
BIN=${1:-build/dpcorr}
. "$(dirname "$0")/common.inc"
if [ ! -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
    skip "Debian's dataset-fashion-mnist is not installed"; summary; exit $?
fi
export XDG_CACHE_HOME="$TMP/cache"
expect_rc 0 "demo --frontier --quick" "$BIN" demo --frontier --quick --epochs 1 --out "$TMP/f"
out_has "^test accuracy 0\.[0-9]+ at epsilon 3" "accuracy line"
err_has "of 6000 training images: computed" "features computed"
for f in frontier.json frontier_run.json frontier.png; do
    if [ -s "$TMP/f/$f" ]; then pass; else fail "missing $f"; fi
done
for k in '"test_accuracy": 0\.[0-9]' '"epsilon": [23]\.[09]' '"delta": 1' '"config": \{' \
         '"ledger": \{' '"features": "scatter:J=2,L=8,gn=27,center=20"' '"mech": "bsr"' \
         '"route": "amplified' '"normalization": \{"kind": "private"' '"noise_multiplier": 20' \
         '"pre_noise_multipliers": \[20\]' '"epsilon_pre": 0\.1'; do
    if grep -Eq "$k" "$TMP/f/frontier.json"; then pass; else fail "frontier.json lacks $k"; fi
done
if ls "$TMP/cache/dpcorr/"scatter-J2-L8-*.bin >/dev/null 2>&1; then pass; else fail "no cache file"; fi
expect_rc 0 "second run reads the cache" "$BIN" demo --frontier --quick --epochs 1 --out "$TMP/f2"
err_has "of 6000 training images: cached" "features cached"
if [ "$(sed -n 's/.*"test_accuracy": \([0-9.]*\).*/\1/p' "$TMP/f/frontier.json")" = \
     "$(sed -n 's/.*"test_accuracy": \([0-9.]*\).*/\1/p' "$TMP/f2/frontier.json")" ]; then pass
else fail "cached features changed the result"; fi
# train: a CNN on the images, a CNN on ScatterNet features (no cache), bad specs
expect_rc 0 "train cnn" "$BIN" train --data fashion-mnist:limit=600,test-limit=200 \
    --model cnn:conv4k5s2,tanh,maxpool2,fc16,tanh --epsilon 8 --batch 100 --threads 2 --quiet
out_has "final test accuracy 0\." "cnn trains"
expect_rc 0 "train scatter cnn" "$BIN" train --data fashion-mnist:limit=300,test-limit=100 \
    --features scatter --feature-cache none --model cnn:gn27n,conv8k3s2p1,tanh,fc16,tanh \
    --epsilon 8 --batch 100 --quiet
out_has "final test accuracy 0\." "scatter cnn trains"
# private centering: its release is reported and composed (epsilon stays at the target)
expect_rc 0 "train with private centering" "$BIN" train --data fashion-mnist:limit=300,test-limit=100 \
    --features scatter:gn=27,center=5 --feature-cache none --model softmax --epsilon 2 \
    --batch 50 --seed 3 --report "$TMP/c.json"
err_has "private statistic of the training set released before training: Gaussian, noise multiplier 5" \
    "banner names the release"
if grep -Eq '"pre_noise_multipliers": \[5\], "epsilon_pre": 0\.[0-9]+' "$TMP/c.json" &&
   grep -Eq '"epsilon": (2|1\.99[0-9]*)[,}]' "$TMP/c.json" &&
   grep -q 'centred by its private mean (Gaussian, noise multiplier 5' "$TMP/c.json"; then pass
else fail "report of the centred run"; fi
expect_rc 2 "center without gn" "$BIN" train --data fashion-mnist:limit=300 \
    --features scatter:center=5 --model softmax --epsilon 3
err_has "center needs gn" "says why"
expect_rc 2 "bad features" "$BIN" train --data fashion-mnist:limit=300 --features wavelets \
    --model cnn --epsilon 3
err_has -- "--features" "names --features"
expect_rc 2 "bad cnn layer" "$BIN" train --data fashion-mnist:limit=300 --model cnn:conv8 \
    --epsilon 3
err_has -- "--model" "names --model"
summary
