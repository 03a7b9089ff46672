#!/bin/sh
# End-to-end tests of `dpcorr audit`: the JSON keys, the bound below the claim for a private
# run and >= 2 for weak privacy, black-box canaries, the report, the plot, the study, the dry
# run, and bad values that must end with exit code 2 naming the option. (tests/cli/options.sh
# checks every option of the table; the runs here that are not about the accountant use RDP,
# which calibrates in milliseconds.)
BIN=${1:-build/dpcorr}
. "$(dirname "$0")/common.inc"
DATA="synthetic:logistic,n=800,d=600,margin=0.1,test-n=200"
COMMON="--data $DATA --model logistic --epochs 3 --batch 50 --lr 0.5 --quiet --seed 1"

expect_rc 0 "help" "$BIN" audit --help
for opt in --canaries --canary --guesses --guesses-bottom --confidence --json --quick --study \
           --data --model --mech --epsilon --noise-multiplier --sampler; do
    out_has "^ *$opt" "help line for $opt"
done

# a private run (DP-SGD, Poisson): every required key; the bound does not exceed the claim
expect_rc 0 "dp-sgd audit" "$BIN" audit $COMMON --epsilon 4 --canaries 300 --json
for k in epsilon delta epsilon_lower_bound confidence canaries guesses correct method ledger; do
    out_has "\"$k\":" "json key $k"
done
eps=$(json_num epsilon); lb=$(json_num epsilon_lower_bound)
if awk -v a="$lb" -v b="$eps" 'BEGIN { exit !(a != "" && a <= b) }'; then pass; else fail "bound $lb > claim $eps"; fi
num_near "$(json_num confidence)" 0.95 1e-12 "confidence 0.95"
num_near "$(json_num canaries)" 300 0 "300 canaries"

# the audit is a pure function of the seed: 1 and 2 threads give the same scores and bound
expect_rc 0 "2 threads" "$BIN" audit $COMMON --epsilon 4 --canaries 300 --json --threads 2 --accountant rdp
lb2=$(json_num epsilon_lower_bound); c2=$(json_num correct)
expect_rc 0 "1 thread" "$BIN" audit $COMMON --epsilon 4 --canaries 300 --json --threads 1 --accountant rdp
if [ "$lb2" = "$(json_num epsilon_lower_bound)" ] && [ "$c2" = "$(json_num correct)" ]; then pass; else fail "threads change the audit"; fi

# correlated noise over fixed-order epochs, with a report file and explicit guesses
expect_rc 0 "nu audit" "$BIN" audit $COMMON --mech nu --nu 0.05 --epsilon 2 --canaries 300 \
    --guesses 30 --guesses-bottom 30 --report "$TMP/nu.json"
out_has "lower bound +epsilon >= " "summary line"
if grep -q '"guesses": 60' "$TMP/nu.json"; then pass; else fail "report: 60 guesses"; fi
if grep -q '"mu_max": [0-9]' "$TMP/nu.json"; then pass; else fail "report: mu of public participation"; fi

# BLT without --theta/--omega: the library's default BLT for the run (as train and Python)
expect_rc 0 "default blt audit" "$BIN" audit $COMMON --mech blt --epsilon 2 --canaries 300 --json
out_has '"mechanism": "BLT \([0-9]+ buffers\)"' "default BLT in the ledger"
expect_rc 2 "blt with one list" "$BIN" audit $COMMON --mech blt --theta 0.9 --epsilon 2

# weak privacy: the white-box bound is >= 2
expect_rc 0 "weak privacy" "$BIN" audit $COMMON --noise-multiplier 0.2 --canaries 600 --json --accountant rdp
lb=$(json_num epsilon_lower_bound)
if awk -v a="$lb" 'BEGIN { exit !(a != "" && a >= 2) }'; then pass; else fail "weak privacy bound $lb < 2"; fi
if [ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
    expect_rc 0 "weak privacy, default configuration" "$BIN" audit --quick --noise-multiplier 0.2 --json --quiet --seed 1 --accountant rdp
    lb=$(json_num epsilon_lower_bound)
    if awk -v a="$lb" 'BEGIN { exit !(a != "" && a >= 2) }'; then pass; else fail "fmnist weak privacy bound $lb < 2"; fi
    out_has '"data": "fashion-mnist' "default data"
    out_has '"model": "softmax"' "default model"
    out_has '"mechanism": "DP-SGD' "default mechanism"
else
    skip "default-data audit: Debian's dataset-fashion-mnist is not installed"
fi

# black-box canaries
expect_rc 0 "mislabel audit" "$BIN" audit $COMMON --epsilon 4 --canary mislabel --canaries 100 --json --accountant rdp
out_has '"canary": "mislabel"' "mislabel canaries"
expect_rc 0 "ood audit" "$BIN" audit $COMMON --epsilon 4 --canary ood --canaries 100 --json --accountant rdp
out_has '"statistic": "black-box' "black-box statistic"

# plot and study (PNG only when gnuplot is installed)
expect_rc 0 "plot" "$BIN" audit $COMMON --epsilon 4 --canaries 200 --plot "$TMP/a.png" --accountant rdp
if command -v gnuplot >/dev/null 2>&1; then
    if [ -s "$TMP/a.png" ]; then pass; else fail "plot written"; fi
else
    skip "audit plot: gnuplot is not installed"
fi
expect_rc 0 "study" "$BIN" audit --data "synthetic:logistic,n=400,d=150,margin=0.1" --model logistic --seed 1 \
    --epochs 2 --batch 20 --canaries 100 --quiet --study "$TMP/study" --accountant rdp
if [ "$(wc -l < "$TMP/study/audit_study.csv")" -eq 16 ]; then pass; else fail "study: 15 rows"; fi
out_has "BSR 16 bands" "study table"
if [ "$(grep -c '"epsilon_lower_bound":' "$TMP/study/audit_study.json")" -eq 15 ] && grep -q '"cap":' "$TMP/study/audit_study.json"; then pass; else fail "study JSON: 15 runs and the cap"; fi
expect_rc 2 "study fixes the mechanism" "$BIN" audit $COMMON --mech nu --study "$TMP/study2"
err_has -- "--mech: cannot be combined with --study" "study and --mech"

# the dry run: the audited run as the library resolves it (training set with the canary slots)
expect_rc 0 "dry run" "$BIN" audit $COMMON --epsilon 2 --canaries 300 --mech nu --nu 0.05 --dry-run
out_has "^examples = 1100$" "dry run: 800 examples + 300 canary slots"
out_has "^canaries = 300$" "dry run: canaries"
out_has "^mech.kind = nu$" "dry run: mechanism"
out_has "^sampler = fixed$" "dry run: the sampler resolved for nu"
if [ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
    expect_rc 0 "dry run of the defaults" "$BIN" audit --dry-run --seed 1
    out_has "^data = fashion-mnist$" "default data"
    out_has "^model = softmax$" "default model"
    out_has "^epsilon = 8$" "default claim"
    out_has "^epochs = 5$" "default epochs"
    out_has "^lr = 1$" "default lr"
else
    skip "dry run of the defaults: Debian's dataset-fashion-mnist is not installed"
fi
expect_rc 0 "dry run of the study" "$BIN" audit $COMMON --canaries 300 --study "$TMP/study3" --dry-run
out_has "^study.run = BSR 16 bands.*sampler cyclic-poisson" "study configurations resolved"
expect_rc 2 "dry run refuses what the run refuses" "$BIN" audit $COMMON --canaries 5000 --dry-run
err_has -- "--canaries: 5000 gradient canaries need as many parameters" "dry run: too many canaries"

# the test-only privacy faults (DPC_TEST_BREAK_PRIVACY) exist only in tests/test_audit_broken
LIB=$(dirname "$BIN")/libdpcorr.a
if command -v nm >/dev/null 2>&1 && [ -f "$LIB" ]; then
    if nm "$LIB" "$BIN" 2>/dev/null | grep -q dpc__test_break_privacy; then fail "fault hook in a normal build"; else pass; fi
else
    skip "fault-hook symbol check: no nm or no $LIB"
fi

# bad values: exit 2 naming the option
expect_rc 2 "0 canaries" "$BIN" audit $COMMON --canaries 0
err_has -- "--canaries" "names --canaries"
expect_rc 2 "too many gradient canaries" "$BIN" audit $COMMON --canaries 5000 --epsilon 2
err_has -- "--canaries" "too many: names --canaries"
expect_rc 2 "bad canary kind" "$BIN" audit $COMMON --canary nope
err_has -- "--canary" "names --canary"
expect_rc 2 "bad confidence" "$BIN" audit $COMMON --confidence 1.5
err_has -- "--confidence" "names --confidence"
expect_rc 2 "guesses beyond the canaries" "$BIN" audit $COMMON --canaries 100 --guesses 90 --guesses-bottom 20
err_has -- "--guesses" "names --guesses"
for o in --checkpoint --checkpoint-every --resume --stop-after; do
    expect_rc 2 "$o refused" "$BIN" audit $COMMON $o 3
    err_has -- "$o: not available in an audit" "names $o"
done
expect_rc 0 "--algo dp-ftrl accepted" "$BIN" audit $COMMON --canaries 300 --algo dp-ftrl --dry-run
expect_rc 2 "other algorithms refused" "$BIN" audit $COMMON --algo dp-srgd
err_has -- "--algo: expected one of dp-ftrl" "names --algo"
expect_rc 2 "unknown option" "$BIN" audit --nope
err_has -- "--nope" "names the unknown option"
expect_rc 2 "epsilon and noise multiplier" "$BIN" audit $COMMON --epsilon 2 --noise-multiplier 1
err_has -- "--noise_multiplier|--noise-multiplier|epsilon" "names the conflict"
summary
