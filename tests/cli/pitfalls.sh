#!/bin/sh
# The nine critical DP pitfalls of jax_privacy's "Common Pitfalls" page in `dpcorr train` (one
# process and `mpirun -np 2`) and `dpcorr account`: each refused or handled, as the table of
# doc/reliability.md ("The critical DP pitfalls") says. The exact arithmetic (bit for bit) is
# tests/test_pitfalls.c's, on the library trainer these commands run; here: what the command
# line lets a user do, and what its reports say.
BIN=${1:-build/dpcorr}
. "$(dirname "$0")/common.inc"
# key SECTION KEY FILE: the value of KEY on the report line of SECTION ("final", "privacy", ...)
key() { sed -n "/\"$1\": {/ s/.*\"$2\": \"*\([^\",}]*\).*/\1/p" "$3" | head -n 1; }
# top KEY FILE: a top-level string of the report
top() { sed -n "s/^  \"$1\": \"\([^\"]*\)\".*/\1/p" "$2" | head -n 1; }
# privacy FILE: the ledger line without its seed (the key is not data)
privacy() { grep '"privacy": {' "$1" | sed 's/"seed": [0-9a-z]*//'; }
# is A B name: A = B, both non-empty
is() { if [ -n "$1" ] && [ "$1" = "$2" ]; then pass; else fail "$3: '$1' vs '$2'"; fi; }
SYN="synthetic:logistic,n=300,d=4,test-n=40"
RUN="--model logistic --epochs 2 --lr 0.3 --noise-multiplier 1.2 --quiet --seed 1"

# ---- 1. division by batch size: by the expected B (public), no option to change it ----------
expect_rc 0 "poisson run" "$BIN" train --data $SYN $RUN --batch 30 --report "$TMP/p.json"
is "$(key privacy expected_batch "$TMP/p.json")" 30 "1: divisor = the expected batch"
is "$(key privacy q "$TMP/p.json")" 0.10000000000000001 "1: q = B / N"
for o in --normalize-by --divide-by --mean-over-batch; do
    expect_rc 2 "1: $o does not exist" "$BIN" train --data $SYN $RUN --batch 30 $o 7
done

# ---- 2. sensitivity alignment: one --clip for clipping and noise ----------------------------
for c in 0.5 2; do
    expect_rc 0 "nu clip $c" "$BIN" train --data $SYN $RUN --batch 30 --mech nu --nu 0.05 \
        --clip $c --report "$TMP/c$c.json"
    is "$(key config clip "$TMP/c$c.json")" "$c" "2: clip $c recorded"
done
s=$(key privacy sigma "$TMP/c2.json"); cn=$(key privacy column_norm "$TMP/c2.json")
ns=$(key privacy noise_std_per_unit_clip "$TMP/c2.json")
num_near "$ns" "$(awk -v a="$s" -v b="$cn" 'BEGIN { printf "%.17g", a * b }')" 1e-15 \
    "2: noise std per unit clip = z x column norm"
is "$(privacy "$TMP/c0.5.json")" "$(privacy "$TMP/c2.json")" "2: the ledger is per unit clip"
expect_rc 2 "2: --noise-clip does not exist" "$BIN" train --data $SYN $RUN --batch 30 --noise-clip 2

# ---- 3. accounting vs sampler: the ledger names the sampler that ran ------------------------
for smp in poisson fixed shuffle cyclic-poisson balls-in-bins; do
    expect_rc 0 "3: sampler $smp" "$BIN" train --data $SYN $RUN --batch 30 --sampler $smp \
        --report "$TMP/s.json"
    is "$(key privacy sampler "$TMP/s.json")" $smp "3: ledger sampler"
    is "$(key config sampler "$TMP/s.json")" $smp "3: config sampler"
done
expect_rc 2 "3: --groups without cyclic Poisson refused" "$BIN" train --data $SYN $RUN --batch 30 \
    --sampler poisson --groups 3
err_has "groups" "3: the refusal names --groups"

# ---- 4. public vs private metadata: the ledger does not depend on the data or the batches ----
mk() { # mk FILE SEED: 200 rows, 3 features, binary label
    awk -v s="$2" 'BEGIN { print "a,b,c,y"; srand(s); for (i = 0; i < 200; i++)
        printf "%.6f,%.6f,%.6f,%d\n", rand(), rand(), rand(), (rand() < 0.5) }' > "$1"
}
mk "$TMP/d1.csv" 1; mk "$TMP/d2.csv" 2
for d in d1 d2; do
    expect_rc 0 "4: $d" "$BIN" train --data "csv:$TMP/$d.csv,label=y,task=classification,classes=2" \
        $RUN --batch 20 --report "$TMP/$d.json"
done
is "$(privacy "$TMP/d1.json")" "$(privacy "$TMP/d2.json")" "4: other data content, same ledger"
expect_rc 0 "4: other key" "$BIN" train --data "csv:$TMP/d1.csv,label=y,task=classification,classes=2" \
    --model logistic --epochs 2 --lr 0.3 --noise-multiplier 1.2 --quiet --seed 2 --batch 20 \
    --report "$TMP/d1s2.json"
is "$(privacy "$TMP/d1.json")" "$(privacy "$TMP/d1s2.json")" "4: other realised batches, same ledger"
n=$(grep -c '"batch' "$TMP/d1.json")
is "$n" 1 "4: no realised batch size in the report (only config.batch)"
is "$(key data n_train "$TMP/d1.json")" 200 "4: N (public) as passed"
is "$(key privacy q "$TMP/d1.json")" 0.10000000000000001 "4: q = B / N of that N"

# ---- 5. the neighbouring relation: stated, replace-one at twice the sensitivity --------------
is "$(key privacy neighbor "$TMP/p.json")" add-remove "5: Poisson: add/remove"
expect_rc 0 "5: fixed" "$BIN" train --data $SYN $RUN --batch 30 --sampler fixed --report "$TMP/f.json"
is "$(key privacy neighbor "$TMP/f.json")" zero-out "5: fixed-order epochs: zero-out"
expect_rc 0 "5: dp-ssgd" "$BIN" train --algo dp-ssgd --data synthetic:linreg,n=2000,d=4 \
    --noise-multiplier 2 --quiet --seed 1 --report "$TMP/ss.json"
is "$(key privacy neighbor "$TMP/ss.json")" replace-one "5: dp-ssgd: replace-one"
is "$(key privacy sensitivity "$TMP/ss.json")" 2 "5: dp-ssgd: replace-one sensitivity 2 clip"
A="account epsilon --steps 10 --delta 1e-5 --json"
expect_rc 0 "5: add/remove" "$BIN" $A --sigma 2
e1=$(json_num epsilon)
expect_rc 0 "5: replace-one at sensitivity 2" "$BIN" $A --sigma 4 --neighbor replace-one --sensitivity 2
is "$(json_num epsilon)" "$e1" "5: replace-one at 2C with twice the noise = add/remove"
out_has '"neighbor": "replace-one"' "5: the relation reported"
expect_rc 2 "5: replace-one with Poisson sampling refused" "$BIN" $A --sigma 2 --q 0.1 --neighbor replace-one
err_has "replace-one is not supported with Poisson" "5: says why"

# ---- 6. empty batches, non-finite values ------------------------------------------------------
expect_rc 0 "6: q = 0.01 (about 37% empty batches)" "$BIN" train --data synthetic:logistic,n=100,d=4,test-n=20 \
    --model logistic --batch 1 --noise-multiplier 1 --quiet --seed 1 --report "$TMP/e.json"
is "$(key final steps_done "$TMP/e.json")" 100 "6: every step, empty ones too, ran"
printf 'a,b,y\n' > "$TMP/r.csv"
i=0; while [ $i -lt 40 ]; do
    if [ $i = 7 ]; then echo "0.5,1,1e300"; else echo "0.$((i % 9)),1,0.5"; fi >> "$TMP/r.csv"; i=$((i + 1))
done
R="--model linear --sampler fixed --batch 40 --epochs 2 --noise-multiplier 1 --quiet --seed 1"
expect_rc 1 "6: an overflowing loss stops the run" "$BIN" train --data "csv:$TMP/r.csv,label=y,task=regression" $R \
    --report "$TMP/nf.json"
err_has "training record 7 \(batch position [0-9]+\): loss is not finite" "6: names the record at fault"
if [ ! -e "$TMP/nf.json" ]; then pass; else fail "6: no report of a refused run"; fi
sed 's/1e300/inf/' "$TMP/r.csv" > "$TMP/ri.csv"
expect_rc 2 "6: inf in the data refused" "$BIN" train --data "csv:$TMP/ri.csv,label=y,task=regression" $R
err_has "ri.csv:9" "6: names the file and line"

# ---- 7. gradient accumulation: no option; chunking changes nothing released -----------------
for o in --grad-accum --accumulate --virtual-steps --microbatch; do
    expect_rc 2 "7: $o does not exist" "$BIN" train --data $SYN $RUN --batch 30 $o 2
done
for k in 1 64; do
    expect_rc 0 "7: chunk $k" "$BIN" train --data $SYN $RUN --batch 30 --chunk $k --report "$TMP/k$k.json"
done
is "$(privacy "$TMP/k1.json")" "$(privacy "$TMP/k64.json")" "7: chunk 1 vs 64: the same ledger"
num_near "$(key final test_loss "$TMP/k1.json")" "$(key final test_loss "$TMP/k64.json")" 1e-12 \
    "7: chunk 1 vs 64: the same model up to rounding (one noise per step)"

# ---- 8. cross-example operations: no batch norm; GroupNorm is per example -------------------
C="--data synthetic:logistic,n=100,d=36,test-n=10 --batch 10 --noise-multiplier 1 --quiet --seed 1"
expect_rc 2 "8: batch norm refused" "$BIN" train $C --model cnn:conv2k3,bn,flatten,fc2:in=1x6x6
err_has "layer 'bn' is not one of" "8: names the layer"
expect_rc 0 "8: group norm" "$BIN" train $C --model cnn:conv2k3,gn2,relu,flatten,fc2:in=1x6x6

# ---- 9. auxiliary outputs: the report says what is not differentially private -----------------
# every trainer of `train --algo` (dp-ftrl: p.json, dp-ssgd: ss.json, and the three below)
expect_rc 0 "9: dp-ambssgd" "$BIN" train --algo dp-ambssgd --data synthetic:linreg,n=2000,d=4 \
    --epsilon 2 --quiet --seed 1 --report "$TMP/am.json"
expect_rc 0 "9: lcgd-projected" "$BIN" train --algo lcgd-projected --data kan-synth:n=300,d=4,test-n=100 \
    --model kan2:8 --iterates 20 --batch 30 --noise-multiplier 5 --quiet --seed 1 --report "$TMP/kn.json"
expect_rc 0 "9: dp-srgd" "$BIN" train --algo dp-srgd --problem p2 --n 1024 --dim 4 --epsilon 1 \
    --quiet --seed 1 --report "$TMP/sr.json"
# (5 again: every algorithm's ledger states its relation)
is "$(key privacy neighbor "$TMP/am.json")" replace-one "5: dp-ambssgd: replace-one"
is "$(key privacy neighbor "$TMP/kn.json")" zero-out "5: lcgd-projected: zero-out"
is "$(key privacy neighbor "$TMP/sr.json")" zero-out "5: dp-srgd: zero-out"
for f in p ss am kn sr; do
    is "$(top dp_outputs "$TMP/$f.json")" "the parameters (params_hash) and the privacy ledger only" \
        "9: $f: what the guarantee covers"
    if top not_dp "$TMP/$f.json" | grep -q "^NOT differentially private"; then pass; else
        fail "9: $f: not_dp missing"; fi
    if [ -n "$(top telemetry "$TMP/$f.json")" ]; then pass; else fail "9: $f: telemetry named"; fi
done
if grep -q '"train_loss"' "$TMP/p.json"; then pass; else fail "9: the telemetry it marks is there"; fi

# ---- MPI: the same under mpirun -np 2 (bounded by timeout, as tests/cli/mpi.sh) --------------
if command -v mpirun >/dev/null 2>&1 && ldd "$BIN" 2>/dev/null | grep -q libmpi; then
    MPIRUN="timeout 90 env ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 mpirun --oversubscribe --allow-run-as-root"
    E="--data synthetic:logistic,n=100,d=4,test-n=20 --model logistic --batch 1 --noise-multiplier 1 --quiet --seed 1"
    expect_rc 0 "mpi: empty batches, 2 ranks" $MPIRUN -np 2 "$BIN" train $E --report "$TMP/m.json"
    is "$(key final params_hash "$TMP/m.json")" "$(key final params_hash "$TMP/e.json")" \
        "mpi 1, 6: 2 ranks = one process bit for bit (divisor, empty steps)"
    is "$(privacy "$TMP/m.json")" "$(privacy "$TMP/e.json")" "mpi 3, 4, 5: the same ledger"
    is "$(key final steps_done "$TMP/m.json")" 100 "mpi 6: every step ran"
    is "$(top dp_outputs "$TMP/m.json")" "the parameters (params_hash) and the privacy ledger only" \
        "mpi 9: what the guarantee covers"
    expect_rc 1 "mpi 6: an overflowing loss stops every rank" $MPIRUN -np 2 "$BIN" train \
        --data "csv:$TMP/r.csv,label=y,task=regression" $R
    err_has "training record 7 \(batch position [0-9]+\): loss is not finite" "mpi 6: names the record at fault"
    expect_rc 2 "mpi 6: inf in the data refused" $MPIRUN -np 2 "$BIN" train \
        --data "csv:$TMP/ri.csv,label=y,task=regression" $R
    expect_rc 2 "mpi 7: no accumulation option" $MPIRUN -np 2 "$BIN" train $E --grad-accum 2
    expect_rc 2 "mpi 8: batch norm refused" $MPIRUN -np 2 "$BIN" train $C \
        --model cnn:conv2k3,bn,flatten,fc2:in=1x6x6
    for smp in poisson fixed; do
        expect_rc 0 "mpi 3: $smp" $MPIRUN -np 2 "$BIN" train --data $SYN $RUN --batch 30 \
            --sampler $smp --report "$TMP/ms.json"
        is "$(key privacy sampler "$TMP/ms.json")" $smp "mpi 3: ledger sampler $smp"
    done
else
    echo "pitfalls.sh: MPI part skipped (no mpirun, or $BIN built without MPI)" >&2
fi
summary
