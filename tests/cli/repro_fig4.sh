#!/bin/sh
# `dpcorr repro nu-fig4 --smoke`: the Figure-4 pipeline end to end on a tiny Fashion-MNIST subset
# (every mechanism, optimized strategies, calibration, training, table, CSV, JSON, PNG).
BIN=${1:-build/dpcorr}
. "$(dirname "$0")/common.inc"
if [ ! -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
    skip "Debian's dataset-fashion-mnist is not installed"; summary; exit $?
fi
expect_rc 0 "fig4 smoke" "$BIN" repro nu-fig4 --smoke --out "$TMP/f4"
for m in "DP-SGD \\(fixed order\\)" "DP-SGD \\(Poisson" "nu-DP-FTRL" "optimal CC" "tree \\(Honaker\\)" \
         "damped anti-PGD" "BLT" "banded Toeplitz" "dense ME" "nu-DP-FTRL \\(balls-in-bins" \
         "DP-SGD \\(balls-in-bins"; do
    out_has "$m" "row for $m"
done
for f in fig4_runs.csv fig4_summary.csv nu-fig4.json fig4.png; do
    if [ -s "$TMP/f4/$f" ]; then pass; else fail "missing $f"; fi
done
if head -c 8 "$TMP/f4/fig4.png" | od -An -c | grep -q "P   N   G"; then pass; else fail "fig4.png is not a PNG"; fi
for k in mean_accuracy chosen_lr nu_ge_dpsgd_fixed nu_ge_dpsgd_amplified nu_bib_ge_dpsgd_amplified nu_within_1pp_of_me train_seconds tune_seconds; do
    if grep -q "\"$k\"" "$TMP/f4/nu-fig4.json"; then pass; else fail "json key $k"; fi
done
# the tuning stage: 12 mechanisms x 1 epsilon x 2 rates on the holdout, and every final run uses
# the rate with the best holdout accuracy (ties: the smaller rate)
rows=$(wc -l < "$TMP/f4/fig4_tuning.csv")
if [ "$rows" -eq 25 ]; then pass; else fail "fig4_tuning.csv has $rows lines, want 25"; fi
bad=$(awk -F'"' 'FNR == 1 { next }
    FILENAME ~ /tuning/ { split($3, f, ","); m = $2;
        if (!(m in best) || f[4] + 0 > best[m]) { best[m] = f[4] + 0; lr[m] = f[3] } next }
    { split($3, f, ","); if (f[4] != lr[$2]) print $2 ": ran lr " f[4] ", holdout best " lr[$2] }' \
    "$TMP/f4/fig4_tuning.csv" "$TMP/f4/fig4_runs.csv")
if [ -z "$bad" ]; then pass; else fail "chosen learning rates: $bad"; fi
rows=$(wc -l < "$TMP/f4/fig4_runs.csv")
if [ "$rows" -eq 13 ]; then pass; else fail "fig4_runs.csv has $rows lines, want 13"; fi
if grep -q "nu-DP-FTRL (Poisson, amplified)" "$TMP/f4/fig4_runs.csv"; then pass; else fail "amplified nu-DP-FTRL row"; fi
if grep -q "nu-DP-FTRL (balls-in-bins, amplified)" "$TMP/f4/fig4_runs.csv"; then pass; else fail "balls-in-bins nu-DP-FTRL row"; fi
# balls-in-bins nu-DP-FTRL: accounted by the balls-in-bins route or the whole run, never worse
if grep -Eq "nu-DP-FTRL \(balls-in-bins, amplified\) at epsilon [0-9.]+: noise multiplier [0-9.e+-]+, accounted by (balls-in-bins|whole-run)" "$TMP/out"; then pass; else fail "balls-in-bins nu route in the log"; fi
summary
