#!/bin/sh
# End-to-end tests of `dpcorr train`: reports, 1 vs 2 threads, kill -9 and resume, and at least
# 15 malformed inputs that must end with exit code 2 and a message naming the fault.
BIN=${1:-build/dpcorr}
. "$(dirname "$0")/common.inc"
DATA="synthetic:logistic,n=3000,d=12,margin=0.1,test-n=500"
# seeded (--seed 1): the comparisons below need the same noise twice
COMMON="--data $DATA --model logistic --epochs 3 --batch 60 --lr 0.5 --clip 1 --delta 1e-5 --quiet --seed 1"

expect_rc 0 "help" "$BIN" train --help
for opt in --data --model --mech --epsilon --delta --epochs --batch --lr --momentum --clip --seed \
           --secure --threads --checkpoint --resume --report --plot --sampler --accountant; do
    out_has "^ *$opt" "help line for $opt"
done

# DP-SGD with a JSON report
expect_rc 0 "dp-sgd run" "$BIN" train $COMMON --epsilon 2 --accountant rdp --report "$TMP/a.json"
for k in epsilon delta sigma sensitivity seed_mode test_accuracy train_loss wall_time_s \
         examples_per_s params_hash epsilon_so_far route; do
    if grep -q "\"$k\":" "$TMP/a.json"; then pass; else fail "report key $k"; fi
done
if grep -q '"seed_mode": "seeded"' "$TMP/a.json"; then pass; else fail "seed mode recorded"; fi
eps=$(sed -n 's/.*"privacy": {[^}]*"epsilon": \([0-9.e+-]*\).*/\1/p' "$TMP/a.json")
num_near "$eps" 2 1e-6 "report epsilon = target"

# correlated noise (nu-DP-FTRL, fixed-order epochs): 1 vs 2 threads bit-identical
expect_rc 0 "nu 1 thread" "$BIN" train $COMMON --epsilon 2 --mech nu --nu 0.05 --momentum 0.9 --report "$TMP/n1.json"
expect_rc 0 "nu 2 threads" "$BIN" train $COMMON --epsilon 2 --mech nu --nu 0.05 --momentum 0.9 --threads 2 --report "$TMP/n2.json"
h1=$(sed -n 's/.*"params_hash": "\([0-9a-f]*\)".*/\1/p' "$TMP/n1.json")
h2=$(sed -n 's/.*"params_hash": "\([0-9a-f]*\)".*/\1/p' "$TMP/n2.json")
if [ -n "$h1" ] && [ "$h1" = "$h2" ]; then pass; else fail "1 vs 2 threads: $h1 vs $h2"; fi

# interruption: stop after 40 steps with a checkpoint, resume: same parameters
BLT="--mech blt --theta 0.9,0.5 --omega 0.2,0.1"
expect_rc 0 "blt full" "$BIN" train $COMMON --epsilon 3 $BLT --report "$TMP/b_full.json"
expect_rc 0 "blt stopped" "$BIN" train $COMMON --epsilon 3 $BLT --checkpoint "$TMP/ck" --checkpoint-every 7 --stop-after 40
expect_rc 0 "blt resumed" "$BIN" train $COMMON --epsilon 3 $BLT --resume "$TMP/ck" --checkpoint "$TMP/ck" --report "$TMP/b_res.json"
hf=$(sed -n 's/.*"params_hash": "\([0-9a-f]*\)".*/\1/p' "$TMP/b_full.json")
hr=$(sed -n 's/.*"params_hash": "\([0-9a-f]*\)".*/\1/p' "$TMP/b_res.json")
if [ -n "$hf" ] && [ "$hf" = "$hr" ]; then pass; else fail "stop/resume: $hf vs $hr"; fi
# a killed process (SIGKILL mid-run) resumes bit-identically from its last checkpoint
BIG="--data synthetic:logistic,n=40000,d=50,test-n=100 --model mlp:32 --epochs 4 --batch 100 --lr 0.3 --clip 1 --epsilon 4 --mech bsr --bands 4 --quiet --seed 1"
expect_rc 0 "long full" "$BIN" train $BIG --report "$TMP/l_full.json"
"$BIN" train $BIG --checkpoint "$TMP/ck2" --checkpoint-every 5 >/dev/null 2>&1 &
pid=$!
i=0; while [ ! -f "$TMP/ck2" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
sleep 0.3; kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
expect_rc 0 "long resumed" "$BIN" train $BIG --resume "$TMP/ck2" --checkpoint "$TMP/ck2" --report "$TMP/l_res.json"
hf=$(sed -n 's/.*"params_hash": "\([0-9a-f]*\)".*/\1/p' "$TMP/l_full.json")
hr=$(sed -n 's/.*"params_hash": "\([0-9a-f]*\)".*/\1/p' "$TMP/l_res.json")
if [ -n "$hf" ] && [ "$hf" = "$hr" ]; then pass; else fail "kill -9/resume: $hf vs $hr"; fi

# resuming a finished run evaluates it (no null accuracy); the randomness of a checkpoint must
# be the one asked for (secure by default, --seed S for a seeded one, the same seed)
S="--data synthetic:logistic,n=600,d=4,test-n=100 --model logistic --epsilon 1 --batch 20 --quiet"
expect_rc 0 "short run" "$BIN" train $S --seed 1 --checkpoint "$TMP/ck3"
expect_rc 0 "resume a finished run" "$BIN" train $S --seed 1 --resume "$TMP/ck3" --report "$TMP/fin.json"
if grep -Eq '"final": {"test_accuracy": (0\.[0-9]|1[,.])' "$TMP/fin.json"; then pass; else fail "finished resume reports the accuracy"; fi
expect_rc 2 "secure resume of a seeded run" "$BIN" train $S --resume "$TMP/ck3" --secure
err_has -- "--secure: the checkpoint .* seeded mode \(seed 1\); resume it with --seed 1" "names the mismatch"
expect_rc 2 "default (secure) resume of a seeded run" "$BIN" train $S --resume "$TMP/ck3"
err_has -- "--resume: the checkpoint .* seeded mode \(seed 1\); resume it with --seed 1" "asks for --seed"
expect_rc 2 "resume with another seed" "$BIN" train $S --resume "$TMP/ck3" --seed 2
err_has -- "--seed: the checkpoint .* written with seed 1, got 2" "names both seeds"
expect_rc 0 "secure run" "$BIN" train $S --secure --checkpoint "$TMP/ck4"
expect_rc 2 "seeded resume of a secure run" "$BIN" train $S --resume "$TMP/ck4" --seed 1
err_has -- "--seed: the checkpoint .* secure mode \(OS key\); resume it without --seed" "asks to drop --seed"
expect_rc 0 "secure resume of a secure run" "$BIN" train $S --resume "$TMP/ck4" --secure
expect_rc 0 "default resume of a secure run" "$BIN" train $S --resume "$TMP/ck4"
# secure by default: the banner, the report and the ledger say so, two runs differ; --seed
# warns once on stderr and is recorded
expect_rc 0 "default run" "$BIN" train --data synthetic:logistic,n=600,d=4,test-n=100 --model logistic --epsilon 1 --batch 20 --report "$TMP/sec1.json"
err_has "\| secure mode \(OS key\)( \||$)" "default banner: secure mode"
if grep -q "warning: seeded" "$TMP/err"; then fail "default run warns of seeded mode"; else pass; fi
if grep -q '"rng_mode": "secure"' "$TMP/sec1.json" && grep -q '"seed": null' "$TMP/sec1.json" &&
   grep -q '"seed_mode": "secure"' "$TMP/sec1.json"; then pass; else fail "default report: secure mode"; fi
expect_rc 0 "default run again" "$BIN" train $S --report "$TMP/sec2.json"
expect_rc 0 "default run, third" "$BIN" train $S --report "$TMP/sec3.json"
h1=$(sed -n 's/.*"params_hash": "\([0-9a-f]*\)".*/\1/p' "$TMP/sec2.json")
h2=$(sed -n 's/.*"params_hash": "\([0-9a-f]*\)".*/\1/p' "$TMP/sec3.json")
if [ -n "$h1" ] && [ "$h1" != "$h2" ]; then pass; else fail "two default runs differ: $h1 vs $h2"; fi
expect_rc 0 "seeded run" "$BIN" train $S --seed 7 --report "$TMP/sd1.json"
err_has "^dpcorr train: warning: seeded mode \(seed 7\): .*not private against anyone who knows it" "--seed warns"
if [ "$(grep -c warning "$TMP/err")" -eq 1 ]; then pass; else fail "--seed warns once"; fi
if grep -q '"rng_mode": "seeded"' "$TMP/sd1.json" && grep -q '"seed": 7' "$TMP/sd1.json"; then pass; else fail "seeded report"; fi
expect_rc 0 "seeded run again" "$BIN" train $S --seed 7 --report "$TMP/sd2.json"
h1=$(sed -n 's/.*"params_hash": "\([0-9a-f]*\)".*/\1/p' "$TMP/sd1.json")
h2=$(sed -n 's/.*"params_hash": "\([0-9a-f]*\)".*/\1/p' "$TMP/sd2.json")
if [ -n "$h1" ] && [ "$h1" = "$h2" ]; then pass; else fail "two seeded runs agree: $h1 vs $h2"; fi
expect_rc 0 "explicit --secure" "$BIN" train $S --secure --dry-run
out_has "^rng_mode = secure$" "--secure: dry run"
# BSR without --bands: the library chooses (1 epoch of 60 steps: 32 bands; 3 epochs: an epoch)
B="--data synthetic:logistic,n=600,d=4,test-n=100 --model logistic --epsilon 1 --batch 10 --mech bsr"
expect_rc 0 "bsr without --bands" "$BIN" train $B --dry-run
out_has "^mech.bands = 32$" "bsr: default bands for one epoch"
expect_rc 0 "bsr without --bands, 3 epochs" "$BIN" train $B --epochs 3 --dry-run
out_has "^mech.bands = 60$" "bsr: default bands for 3 epochs"
expect_rc 2 "dpcorr mech still needs --bands" "$BIN" mech --kind bsr --steps 10
err_has "bands" "dpcorr mech: bands required"
expect_rc 0 "default dry run" "$BIN" train $S --dry-run
out_has "^rng_mode = secure \(default\)$" "default: dry run"
expect_rc 2 "--seed with --secure" "$BIN" train $S --seed 3 --secure
err_has "cannot be combined with --seed" "--seed with --secure refused"
# a resumed report keeps the epochs before the resume point (they travel in the checkpoint);
# resuming a finished run reports its accuracy
R="--data synthetic:logistic,n=600,d=4,test-n=100 --model logistic --epsilon 1 --batch 20 --epochs 4 --quiet --seed 3"
expect_rc 0 "stopped after 2.3 epochs" "$BIN" train $R --checkpoint "$TMP/ck5" --stop-after 70
expect_rc 0 "resumed to the end" "$BIN" train $R --resume "$TMP/ck5" --checkpoint "$TMP/ck5" --report "$TMP/res.json"
n=$(grep -c '"epsilon_so_far"' "$TMP/res.json")
if [ "$n" -eq 4 ] && grep -q '"epoch": 1, "step": 30' "$TMP/res.json"; then pass; else fail "resumed report has all 4 epochs (got $n)"; fi
expect_rc 0 "resumed a finished run" "$BIN" train $R --resume "$TMP/ck5" --report "$TMP/fin2.json"
if grep -q '"final": {"test_accuracy": [01]' "$TMP/fin2.json" && [ "$(grep -c '"epsilon_so_far"' "$TMP/fin2.json")" -eq 4 ]; then pass; else fail "finished resume: accuracy and epochs"; fi
# a refused resume names the option or input that changed
expect_rc 2 "resume with another --lr" "$BIN" train $R --lr 0.3 --resume "$TMP/ck5"
err_has -- "--lr: learning rate: the checkpoint .* has 0.1, this run has 0.3" "names --lr and both values"
expect_rc 2 "resume with another --batch" "$BIN" train $(printf '%s\n' "$R" | sed 's/--batch 20/--batch 30/') --resume "$TMP/ck5"
err_has -- "--batch: batch: the checkpoint .* has 20, this run has 30" "names --batch"
printf 'a,b,label\n' > "$TMP/dd.csv"; i=0; while [ $i -lt 200 ]; do echo "$((i % 7)),$((i % 5)),$((i % 2))" >> "$TMP/dd.csv"; i=$((i + 1)); done
D="--data csv:$TMP/dd.csv,label=label,task=classification,classes=2 --model logistic --epsilon 1 --batch 20 --epochs 3 --quiet --seed 3"
expect_rc 0 "csv run stopped" "$BIN" train $D --checkpoint "$TMP/ck6" --stop-after 15
sed 's/^3,3,1$/3,3,0/' "$TMP/dd.csv" > "$TMP/dd2.csv" && mv "$TMP/dd2.csv" "$TMP/dd.csv"
expect_rc 2 "resume on edited data" "$BIN" train $D --resume "$TMP/ck6"
err_has -- "--data: training data content changed since the checkpoint" "names the data content"
# bytes after the checksum; stale temporaries of dead processes are removed
cp "$TMP/ck5" "$TMP/ck7"; printf 'x' >> "$TMP/ck7"
expect_rc 2 "a byte appended" "$BIN" train $R --resume "$TMP/ck7"
err_has -- "--resume: .*checksum mismatch" "appended byte refused"
sh -c 'exit 0' & dead=$!; wait $dead
: > "$TMP/ck5.tmp.$dead"
expect_rc 0 "resume cleans stale temporaries" "$BIN" train $R --resume "$TMP/ck5"
if [ -e "$TMP/ck5.tmp.$dead" ]; then fail "stale temporary of a dead process left"; else pass; fi
# a failed write is a failure (stdout below); a device as --report is refused up front (issue 28)
expect_rc 2 "report to a device" "$BIN" train $R --report /dev/full
err_has -- "--report: refusing to write /dev/full" "report to a device refused"
"$BIN" mech --kind nu --nu 0.1 --steps 10 > /dev/full 2> "$TMP/err"; rc=$?
if [ $rc -eq 1 ] && grep -q "write error on standard output" "$TMP/err"; then pass; else fail "stdout write error: exit $rc"; fi
# a regression run reports its test loss, not an accuracy
expect_rc 0 "regression run" "$BIN" train --data synthetic:linreg,n=2000,d=3,test-n=200 --model linear --epsilon 2 --batch 50
out_has "final test loss [0-9.e+-]+ \(regression\)" "regression: test loss"
if grep -q "accuracy nan" "$TMP/out" "$TMP/err"; then fail "no 'accuracy nan'"; else pass; fi

# ---- malformed inputs: exit 2, message names the fault --------------------------------------
printf 'XYZWjunkjunkjunkjunk' > "$TMP/bad.idx"
printf '\000\000\010\001\000\000\000\002\001' > "$TMP/lab.idx"
printf '\000\000\010\003\000\000\000\002\000\000\000\002\000\000\000\002\001\002\003' > "$TMP/trunc.idx"
printf 'a,b,label\n1,2,0\n3,4\n' > "$TMP/ragged.csv"
printf 'a,b,label\n1,x,0\n3,4,1\n' > "$TMP/nonnum.csv"
printf 'a,b,label\n1,nan,0\n3,4,1\n' > "$TMP/nan.csv"
printf 'a,b,label\n1,2,0\n3,4,7\n' > "$TMP/range.csv"
: > "$TMP/empty.csv"
printf 'a,b,label\n1,2,0\n3,4,1\n5,6,0\n' > "$TMP/ok.csv"
printf 'a,b,c,label\n1,2,3,0\n' > "$TMP/wide.csv"
printf '1 1:0.5 x:2\n' > "$TMP/bad.svm"
M="--model softmax --epochs 1 --batch 2 --lr 0.1 --clip 1 --epsilon 1 --quiet"
bad() { # name pattern args...
    name=$1; pat=$2; shift 2
    expect_rc 2 "$name" "$BIN" train "$@"; err_has "$pat" "$name names the fault"
}
bad "wrong-magic IDX"      "magic"           --data "idx:$TMP/bad.idx,labels=$TMP/lab.idx" $M
bad "truncated IDX"        "truncated|short|end of" --data "idx:$TMP/trunc.idx,labels=$TMP/lab.idx" $M
bad "ragged CSV"           "ragged.csv:3"    --data "csv:$TMP/ragged.csv,task=classification,classes=2" $M
bad "non-numeric CSV"      "nonnum.csv:2"    --data "csv:$TMP/nonnum.csv,task=classification,classes=2" $M
bad "NaN in CSV"           "nan.csv:2"       --data "csv:$TMP/nan.csv,task=classification,classes=2" $M
bad "label out of range"   "range.csv:3"     --data "csv:$TMP/range.csv,task=classification,classes=2" $M
bad "empty file"           "empty"           --data "csv:$TMP/empty.csv,task=classification,classes=2" $M
bad "dimension mismatch"   "dimension|features" --data "csv:$TMP/ok.csv,task=classification,classes=2,test=$TMP/wide.csv" $M
bad "malformed LIBSVM"     "bad.svm:1"       --data "libsvm:$TMP/bad.svm" $M
OK="--data csv:$TMP/ok.csv,task=classification,classes=2 --model softmax --epochs 1 --lr 0.1 --clip 1 --quiet"
bad "epsilon <= 0"         "--epsilon"       $OK --batch 2 --epsilon 0
bad "negative epsilon"     "epsilon"         $OK --batch 2 --epsilon -1
bad "delta >= 1"           "delta"           $OK --batch 2 --epsilon 1 --delta 1
bad "batch > data"         "batch"           $OK --batch 10 --epsilon 1
bad "unknown mechanism"    "bogus"           $OK --batch 2 --epsilon 1 --mech bogus
bad "unknown model"        "model"           --data "csv:$TMP/ok.csv,task=classification,classes=2" --model rnn --epochs 1 --batch 2 --lr 0.1 --clip 1 --epsilon 1
bad "missing data file"    "nope.csv"        --data "csv:$TMP/nope.csv" $M
bad "unknown data kind"    "bogus"           --data "bogus:1" $M
bad "clip not a number"    "--clip"          $OK --batch 2 --epsilon 1 --clip abc
bad "zero threads"         "threads"         $OK --batch 2 --epsilon 1 --threads 0
bad "unknown option"       "--frobnicate"    $OK --batch 2 --epsilon 1 --frobnicate
bad "missing epsilon"      "--epsilon"       $OK --batch 2
bad "bad resume file"      "resume"          $OK --batch 2 --epsilon 1 --resume "$TMP/ok.csv"
# Poisson sampling with any mechanism (MMCC conditional composition, or the whole-run route when
# better), and balls-in-bins sampling (the balls-in-bins route when it beats the whole run: Monte
# Carlo for nu, with its samples, confidence and seed in the ledger)
expect_rc 0 "poisson + nu" "$BIN" train $COMMON --epsilon 2 --mech nu --nu 0.1 --sampler poisson --report "$TMP/pn.json"
if grep -Eq '"route": "(MMCC conditional composition|whole-run Gaussian)' "$TMP/pn.json"; then pass; else fail "poisson + nu route: $(grep -o '"route": "[^"]*' "$TMP/pn.json")"; fi
eps=$(sed -n 's/.*"privacy": {[^}]*"epsilon": \([0-9.e+-]*\).*/\1/p' "$TMP/pn.json")
awk -v e="$eps" 'BEGIN { exit !(e != "" && e <= 2) }' && pass || fail "poisson + nu epsilon $eps <= 2"
expect_rc 0 "balls-in-bins + blt" "$BIN" train $COMMON --epsilon 2 --mech nu --nu 0.1 --sampler balls-in-bins --report "$TMP/bb.json"
if grep -q '"sampler": "balls-in-bins"' "$TMP/bb.json"; then pass; else fail "balls-in-bins sampler recorded"; fi
if grep -Eq '"route": "(balls-in-bins: (sampling-free bound|Monte Carlo upper confidence bound)|whole-run Gaussian)' "$TMP/bb.json"; then pass; else fail "balls-in-bins route: $(grep -o '"route": "[^"]*' "$TMP/bb.json")"; fi
if ! grep -q '"route": "balls-in-bins' "$TMP/bb.json" || grep -q '"mc_samples": 131072, "mc_confidence": ' "$TMP/bb.json"; then pass; else fail "balls-in-bins Monte Carlo named in the ledger"; fi
# dense strategies train (issue 28): the file's n is the run's n; a run of another length is
# refused naming it (before: a placeholder n = 1 was read and then used as n x n)
expect_rc 0 "dense strategy file" "$BIN" mech optimize --kind dense --steps 4 --out "$TMP/d4.json"
expect_rc 0 "train a dense strategy file" "$BIN" train --data synthetic:linreg,n=80 --model linear --batch 20 --epsilon 3 --seed 1 --quiet --mech "file:$TMP/d4.json"
expect_rc 2 "dense file, another n" "$BIN" train --data synthetic:linreg,n=100 --model linear --batch 20 --epsilon 3 --seed 1 --mech "file:$TMP/d4.json"
err_has "dense strategy has n = 4 steps, the run 5" "dense file: the mismatch is named"
printf '1\n0.5 1\n0.25 0.5 1\n' > "$TMP/c3.txt"
expect_rc 0 "train dense --coeffs" "$BIN" train --data synthetic:linreg,n=60 --model linear --batch 20 --epsilon 3 --seed 1 --quiet --mech dense --coeffs "$TMP/c3.txt"
expect_rc 2 "dense --coeffs, another n" "$BIN" train --data synthetic:linreg,n=200 --model linear --batch 20 --epsilon 3 --seed 1 --mech dense --coeffs "$TMP/c3.txt"
err_has "dense strategy has n = 3 steps, the run 10" "dense --coeffs: the mismatch is named"
# output paths that exist and are not regular files are refused before any work (issue 28)
mkfifo "$TMP/fifo" && ln -s /dev/null "$TMP/devlink"
for o in "--checkpoint $TMP/devlink" "--checkpoint $TMP/fifo" "--report $TMP/fifo"; do
    # shellcheck disable=SC2086
    expect_rc 2 "non-regular output: $o" "$BIN" train --data synthetic:linreg,n=80 --model linear --batch 20 --epsilon 3 --seed 1 $o
    err_has "refusing to write .*not a regular file" "non-regular output: $o names it"
done
[ -p "$TMP/fifo" ] && [ -L "$TMP/devlink" ] && pass || fail "the FIFO and the link are left as they were"
# no silent acceptance (issue 28): limit=0, a stray comma in a CNN spec, an unusable feature cache
expect_rc 2 "limit=0 refused" "$BIN" train --data synthetic:linreg,n=100,limit=0 --model linear --epsilon 1 --batch 10
err_has "limit=0: must be >= 1" "limit=0: named"
expect_rc 2 "trailing comma in a cnn spec" "$BIN" train --data synthetic:logistic,n=200,d=16 --model cnn:conv2k3,tanh,flatten,fc4,:in=1x4x4 --epsilon 1 --batch 20 --dry-run
err_has -- "--model: .*stray comma" "trailing comma: named"
expect_rc 2 "unusable feature cache" "$BIN" train --data synthetic:logistic,n=200,d=784 --model softmax --features scatter:J=1,L=2 --feature-cache /proc/dpcorr-no-such-dir --epsilon 1 --batch 20
err_has -- "--feature-cache: cannot" "unusable feature cache: named"
# --mech blt without --theta/--omega: the library's default BLT, the same for train (n = 3 x 50,
# k = 3, b = 50 under fixed-order epochs) and `account sigma --mech blt` with those n, k, b
expect_rc 0 "default blt" "$BIN" train $COMMON --epsilon 2 --mech blt --report "$TMP/blt.json"
zt=$(sed -n 's/.*"noise_multiplier": \([-0-9.eE+]*\).*/\1/p' "$TMP/blt.json" | head -n 1)
expect_rc 0 "account default blt" "$BIN" account sigma --mech blt --steps 150 --participations 3 \
    --min-sep 50 --cyclic --epsilon 2 --delta 1e-5 --json
if [ -n "$zt" ] && [ "$zt" = "$(json_num sigma)" ]; then pass; else fail "default BLT: train z $zt, account $(json_num sigma)"; fi
summary
