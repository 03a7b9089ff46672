#!/bin/sh
# End-to-end tests of `mpirun -np P dpcorr train` (doc/distributed.md) on loopback: DP-SGD, BLT,
# BSR and nu-DP-FTRL with P = 2 and 3 ranks give the single process's parameters, accuracy and
# epsilon bit for bit; a checkpoint written by 3 ranks resumes with 2 (and one written by 2 with
# 1); a rank that cannot read its data, a killed rank and a stopped rank end the job with a
# message naming the rank, never a hang (every launch is bounded by `timeout`), and the last
# checkpoint stays valid; each rank holds only its rows of an .npy or synthetic training set
# (P = 1, 2, 3 bit-identical, and 2 ranks under a --max-data-bytes that refuses one process).
# Skipped (one skip, no pass) when mpirun is missing or dpcorr was built
# without MPI.
BIN=${1:-build/dpcorr}
. "$(dirname "$0")/common.inc"
if ! command -v mpirun >/dev/null 2>&1 || ! ldd "$BIN" 2>/dev/null | grep -q libmpi; then
    skip "no mpirun, or $BIN built without MPI"
    summary
    exit 0
fi
# Open MPI's own allocations (in plugins it unloads) would fail a sanitizer build's leak check;
# the protocol's own memory is checked without MPI by tests/test_dist.c.
MPIRUN="timeout 90 env ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 mpirun --oversubscribe --allow-run-as-root"
DATA="synthetic:logistic,n=2000,d=10,margin=0.1,test-n=300"
# seeded: the runs below are compared across process counts
COMMON="--data $DATA --model mlp:8 --epochs 2 --batch 50 --lr 0.5 --clip 1 --epsilon 2 --quiet --seed 1"
# key SECTION KEY FILE: the value of KEY on the report line of SECTION ("final", "privacy")
key() { sed -n "/\"$1\": {/ s/.*\"$2\": \"*\([^\",}]*\).*/\1/p" "$3" | head -n 1; }
same() { # what report-a report-b: final params_hash and test accuracy, privacy epsilon equal
    for k in final:params_hash final:test_accuracy final:test_loss privacy:epsilon; do
        a=$(key ${k%%:*} ${k#*:} "$2"); b=$(key ${k%%:*} ${k#*:} "$3")
        if [ -n "$a" ] && [ "$a" = "$b" ]; then pass; else fail "$1: $k $a vs $b"; fi
    done
}

# ---- bit-identical to one process -----------------------------------------------------------
for m in "sgd:--mech identity --accountant rdp" "blt:--mech blt --theta 0.9,0.5 --omega 0.2,0.1" \
         "bsr:--mech bsr --bands 4 --momentum 0.9" "nu:--mech nu --nu 0.05 --momentum 0.9"; do
    mk=${m%%:*}; opts=${m#*:}
    expect_rc 0 "$mk one process" "$BIN" train $COMMON $opts --report "$TMP/$mk.1.json"
    for P in 2 3; do
        T=1; [ "$P" = 3 ] && [ "$mk" = bsr ] && T=2
        expect_rc 0 "$mk P=$P" $MPIRUN -np $P "$BIN" train $COMMON $opts --threads $T \
            --report "$TMP/$mk.$P.json"
        same "$mk P=$P vs 1" "$TMP/$mk.1.json" "$TMP/$mk.$P.json"
        if grep -q "\"distributed\": {\"ranks\": $P, \"threads_per_rank\": $T, \"shard_sizes\": \[" \
            "$TMP/$mk.$P.json"; then pass; else fail "$mk P=$P: distributed report"; fi
    done
done
# the report's byte count is positive with ranks, 0 alone; each rank keeps its shard's state
b=$(sed -n 's/.*"bytes_per_step": \([0-9.e+]*\).*/\1/p' "$TMP/bsr.2.json")
if awk -v b="${b:-0}" 'BEGIN { exit !(b > 0) }'; then pass; else fail "bsr P=2 moves bytes: $b"; fi
if grep -q '"bytes_per_step": 0,' "$TMP/bsr.1.json"; then pass; else fail "one process moves 0 bytes"; fi
n1=$(sed -n 's/.*"noise_state_bytes_per_rank": \[\([0-9]*\)\].*/\1/p' "$TMP/bsr.1.json")
n2=$(sed -n 's/.*"noise_state_bytes_per_rank": \[\([0-9]*\), \([0-9]*\)\].*/\1 + \2/p' "$TMP/bsr.2.json")
if [ -n "$n1" ] && [ -n "$n2" ] && [ "$(($n2))" = "$n1" ] && [ "${n2%% *}" -lt "$n1" ]; then pass
else fail "noise state split over the ranks: $n1 vs $n2"; fi

# ---- sharded data (issue 35): each rank holds only its rows ----------------------------------
# an .npy pair written with the standard library only (no numpy needed): X 1500 x 8 '<f8', y
# '<i8' classes 0..2
python3 - "$TMP" <<'PY'
import random, struct, sys
def npy(path, descr, shape, fmt, vals):
    h = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    h += " " * (63 - (10 + len(h)) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode())
        f.write(struct.pack("<%d%s" % (len(vals), fmt), *vals))
r = random.Random(5)
X = [r.gauss(0, 1) for _ in range(1500 * 8)]
y = [int(X[8 * i] + X[8 * i + 1] > 0) + int(X[8 * i + 2] > 1) for i in range(1500)]
npy(sys.argv[1] + "/X.npy", "<f8", "(1500, 8)", "d", X)
npy(sys.argv[1] + "/y.npy", "<i8", "(1500,)", "q", y)
PY
NPY="npy:$TMP/X.npy,labels=$TMP/y.npy,classes=3,test=$TMP/X.npy,test-labels=$TMP/y.npy"
S="--data $NPY --model mlp:6 --epochs 2 --batch 50 --lr 0.5 --clip 1 --epsilon 2 --quiet --seed 1 --mech blt --theta 0.9,0.5 --omega 0.2,0.1"
held() { sed -n 's/.*"train_rows_held": \([0-9]*\).*/\1/p' "$1"; }
expect_rc 0 "npy one process" "$BIN" train $S --report "$TMP/npy.1.json"
for P in 1 2 3; do
    expect_rc 0 "npy P=$P" $MPIRUN -np $P "$BIN" train $S --report "$TMP/npy.m$P.json"
    same "npy sharded P=$P vs one process" "$TMP/npy.1.json" "$TMP/npy.m$P.json"
    want=$((1500 / P))
    if [ "$(held "$TMP/npy.m$P.json")" = "$want" ]; then pass
    else fail "npy P=$P: rank 0 holds $(held "$TMP/npy.m$P.json") rows, want $want"; fi
done
# the acceptance run: the 1500 rows take 108,000 bytes; a limit of 60,000 per process refuses
# one process, and 2 (or 3) ranks under the same limit train to the unlimited single process's
# parameters bit for bit
expect_rc 2 "npy over --max-data-bytes alone" "$BIN" train $S --max-data-bytes 60000
err_has "--max-data-bytes: the 1500 of 1500 training rows .* take 108000 bytes, more than the limit of 60000 per rank: run on at least 2 ranks" "the limit named with the ranks needed"
for P in 2 3; do
    expect_rc 0 "npy P=$P within --max-data-bytes" $MPIRUN -np $P "$BIN" train $S \
        --max-data-bytes 60000 --report "$TMP/npy.l$P.json"
    same "npy P=$P under the limit vs one unlimited process" "$TMP/npy.1.json" "$TMP/npy.l$P.json"
done
# synthetic sets are generated in shards too; a csv set is read whole by every rank (refused
# under a limit below the whole set's bytes, naming why)
expect_rc 0 "synthetic P=2 within --max-data-bytes" $MPIRUN -np 2 "$BIN" train $COMMON \
    --max-data-bytes 100000 --report "$TMP/syn.l2.json"
expect_rc 0 "synthetic one process" "$BIN" train $COMMON --report "$TMP/syn.1.json"
same "synthetic P=2 under the limit vs one process" "$TMP/syn.1.json" "$TMP/syn.l2.json"
if [ "$(held "$TMP/syn.l2.json")" = 1000 ]; then pass; else fail "synthetic P=2: rank 0 holds $(held "$TMP/syn.l2.json") rows"; fi
printf 'a,b,label\n1,2,0\n3,4,1\n5,6,0\n2,2,1\n' > "$TMP/small.csv"
expect_rc 2 "csv under a limit with 2 ranks" $MPIRUN -np 2 "$BIN" train \
    --data "csv:$TMP/small.csv,task=classification,classes=2" --model softmax --batch 2 \
    --epsilon 1 --delta 1e-3 --quiet --max-data-bytes 50
err_has "--max-data-bytes: this data format is read whole by every rank" "csv read whole: named"

# ---- other commands run once (rank 0) ---------------------------------------------------------
# secure by default under mpirun too: rank 0's OS key is every rank's (a consistent run)
expect_rc 0 "secure P=2" $MPIRUN -np 2 "$BIN" train --data "$DATA" --model mlp:8 --epochs 1 --batch 50 \
    --lr 0.5 --clip 1 --epsilon 2 --quiet --report "$TMP/sec.json"
if grep -q '"rng_mode": "secure"' "$TMP/sec.json"; then pass; else fail "mpirun: secure by default"; fi
expect_rc 0 "mech under mpirun" $MPIRUN -np 2 "$BIN" mech --kind nu --nu 0.01 --steps 100
if [ "$(grep -c . "$TMP/out")" = "$("$BIN" mech --kind nu --nu 0.01 --steps 100 | grep -c .)" ]
then pass; else fail "mech printed once"; fi

# ---- checkpoint with 3 ranks, resume with 2; with 2, resume alone -----------------------------
BLT="--mech blt --theta 0.9,0.5 --omega 0.2,0.1"
expect_rc 0 "blt P=3 stopped" $MPIRUN -np 3 "$BIN" train $COMMON $BLT --checkpoint "$TMP/ck" \
    --checkpoint-every 7 --stop-after 45
expect_rc 0 "blt P=2 resumed" $MPIRUN -np 2 "$BIN" train $COMMON $BLT --resume "$TMP/ck" \
    --report "$TMP/blt.r.json"
same "blt 3 -> 2 ranks" "$TMP/blt.1.json" "$TMP/blt.r.json"
if grep -q '"resumed_from_step": 45' "$TMP/blt.r.json"; then pass; else fail "resumed at 45 (the checkpoint written at the stop)"; fi
expect_rc 0 "bsr P=2 stopped" $MPIRUN -np 2 "$BIN" train $COMMON --mech bsr --bands 4 \
    --momentum 0.9 --checkpoint "$TMP/ck2" --checkpoint-every 10 --stop-after 30
expect_rc 0 "bsr alone resumed" "$BIN" train $COMMON --mech bsr --bands 4 --momentum 0.9 \
    --resume "$TMP/ck2" --report "$TMP/bsr.r.json"
same "bsr 2 ranks -> 1" "$TMP/bsr.1.json" "$TMP/bsr.r.json"

# ---- failures: named, never a hang -----------------------------------------------------------
printf 'a,b,label\n1,2,0\n3,4,1\n5,6,0\n2,2,1\n1,1,0\n4,4,1\n' > "$TMP/ok.csv"
C="--model softmax --epochs 1 --batch 2 --lr 0.1 --clip 1 --epsilon 1 --delta 1e-3 --quiet"
t0=$(date +%s)
$MPIRUN -np 1 "$BIN" train --data "csv:$TMP/ok.csv,task=classification,classes=2" $C : \
    -np 1 "$BIN" train --data "csv:$TMP/none.csv,task=classification,classes=2" $C \
    >"$TMP/out" 2>"$TMP/err"
rc=$? # the launcher returns the exit code of the first rank to end: 1 or 2, not 124 (timeout)
if [ $rc -eq 1 ] || [ $rc -eq 2 ]; then pass; else fail "bad data path on rank 1: exit $rc"; fi
err_has "rank 1 failed: .*none.csv: cannot open" "the failing rank and its cause"
BIG="--data synthetic:logistic,n=40000,d=50,test-n=100 --model mlp:32 --epochs 4 --batch 100 --lr 0.3 --clip 1 --epsilon 4 --mech bsr --bands 4 --quiet --seed 1"
expect_rc 0 "long run alone" "$BIN" train $BIG --report "$TMP/long.json"
# rank_pid R PATTERN: the pid of rank R of the running job whose command line has PATTERN (its
# environment names the rank)
rank_pid() {
    for p in $(pgrep -f "$2"); do
        if tr '\0' '\n' < /proc/$p/environ 2>/dev/null | grep -q "^OMPI_COMM_WORLD_RANK=$1\$"; then
            echo "$p"; return; fi
    done
}
interrupt() { # signal checkpoint: starts a 2-rank job, sends the signal to rank 1 mid-run
    # a short rank timeout for this job only (the resumed runs keep the default, so a loaded
    # machine's stall cannot fail them)
    ( DPCORR_MPI_TIMEOUT=3 $MPIRUN -np 2 "$BIN" train $BIG --checkpoint "$2" --checkpoint-every 5 \
        >"$TMP/out" 2>"$TMP/err"; echo $? > "$TMP/rc" ) &
    i=0; while [ ! -f "$2" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
    sleep 0.3
    pid=$(rank_pid 1 "$2")
    [ -n "$pid" ] && kill "-$1" "$pid"
    wait
}
interrupt KILL "$TMP/ck3"
if [ "$(cat "$TMP/rc")" -ne 0 ]; then pass; else fail "killed rank: the job failed"; fi
err_has "rank 1.*(signal 9|Killed)" "killed rank named"
expect_rc 0 "resumed after the kill" $MPIRUN -np 2 "$BIN" train $BIG --resume "$TMP/ck3" \
    --report "$TMP/long.r.json"
same "resume after a killed rank" "$TMP/long.json" "$TMP/long.r.json"
interrupt STOP "$TMP/ck4"
if [ "$(cat "$TMP/rc")" -ne 0 ]; then pass; else fail "stopped rank: the job failed"; fi
err_has "no message from rank 1 for [0-9]+ s" "stopped rank named"
if pgrep -f "$TMP/ck4" >/dev/null; then fail "processes left behind"; else pass; fi
expect_rc 0 "resumed after the stop" "$BIN" train $BIG --resume "$TMP/ck4" \
    --report "$TMP/long.r2.json"
same "resume after a stopped rank" "$TMP/long.json" "$TMP/long.r2.json"
t1=$(date +%s)
if [ $((t1 - t0)) -lt 80 ]; then pass; else fail "failure tests took $((t1 - t0)) s"; fi
# a rank given another --seed or --secure than rank 0 is refused by name (issue 28; rank 0's
# generator is the run's, so the other value would be silently ignored)
A="train --data synthetic:logistic,n=200,d=4,test-n=20 --model logistic --epsilon 1 --batch 20 --lr 0.1 --clip 1 --quiet"
# shellcheck disable=SC2086
expect_rc 2 "mpi: rank 1 with another --seed" $MPIRUN -np 1 "$BIN" $A --seed 1 : -np 1 "$BIN" $A --seed 2
err_has "--seed: rank 1 has '2', rank 0 '1'" "mpi: the seeds named (the options' comparison, issue 37)"
# shellcheck disable=SC2086
expect_rc 2 "mpi: rank 1 with --secure" $MPIRUN -np 1 "$BIN" $A --seed 1 : -np 1 "$BIN" $A --secure
err_has "--(seed|secure): rank 1 has (\(not given\)|''), rank 0 ('1'|\(not given\))" "mpi: the modes named"
# DPCORR_MPI_TIMEOUT is strictly a number of seconds (issue 37: these meant 600 s silently)
for v in abc -5 nan 5s 0; do
    expect_rc 2 "DPCORR_MPI_TIMEOUT=$v refused" env DPCORR_MPI_TIMEOUT=$v $MPIRUN -np 2 "$BIN" mech --kind nu --nu 0.01 --steps 10
    err_has "DPCORR_MPI_TIMEOUT=$v: must be a number of seconds" "DPCORR_MPI_TIMEOUT=$v: names the variable"
done
# per-rank options (issue 37): --checkpoint or --resume on one rank only hung the job for
# DPCORR_MPI_TIMEOUT; now every rank compares rank 0's options first, and the mismatch is named
# with its option and both values; a rank that fails alone before any exchange (an unused or
# unknown option) reaches rank 0 with its own message. Each must end in seconds.
A2="$A --seed 1"
expect_rc 0 "mpi: checkpoint for resume" "$BIN" $A2 --checkpoint "$TMP/ckr" --checkpoint-every 3 --stop-after 4
per_rank() { # NAME PATTERN RANK0-EXTRA -- RANK1-EXTRA
    name=$1; pat=$2; r0=$3; r1=$4
    t0=$(date +%s)
    # shellcheck disable=SC2086
    $MPIRUN -np 1 "$BIN" $A2 $r0 : -np 1 "$BIN" $A2 $r1 >"$TMP/out" 2>"$TMP/err"; rc=$?
    t1=$(date +%s)
    if [ $rc -eq 1 ] || [ $rc -eq 2 ]; then pass; else fail "$name: exit $rc"; fi
    if [ $((t1 - t0)) -lt 30 ]; then pass; else fail "$name: $((t1 - t0)) s (a hang)"; fi
    err_has "$pat" "$name: named"
}
per_rank "mpi: --checkpoint on rank 1 only" "--checkpoint: rank 1 has '.*ck1', rank 0 \(not given\)" "" "--checkpoint $TMP/ck1"
per_rank "mpi: --resume on rank 0 only" "--resume: rank 1 has \(not given\), rank 0 '.*ckr'" "--resume $TMP/ckr" ""
per_rank "mpi: another --epochs" "--epochs: rank 1 has '2', rank 0 \\(not given\\)" "" "--epochs 2"
per_rank "mpi: rank 1's own refusal" "rank 1 failed: .*--nu: not used by this configuration" "" "--nu 0.3"
per_rank "mpi: rank 1's unknown option" "rank 1 failed: .*--bogus: unknown option" "" "--bogus"
# a number written two ways is the same value
expect_rc 0 "mpi: 0.5 and 5e-1 agree" $MPIRUN -np 1 "$BIN" $A2 --momentum 0.5 : -np 1 "$BIN" $A2 --momentum 5e-1
# --threads may differ per rank
expect_rc 0 "mpi: --threads per rank" $MPIRUN -np 1 "$BIN" $A2 --threads 1 : -np 1 "$BIN" $A2 --threads 2
summary
