#!/bin/sh
# bench_mpi.sh — data-parallel training under mpirun (doc/distributed.md): time per step and
# bytes moved per step (all ranks) for P = 1 and 2 ranks of one thread, and one process of two
# threads for comparison, on an MLP 784-256-2 (201,474 parameters) with BLT noise, batch 500.
# Every run's parameters must agree (the script says so). Skipped without mpirun or without an
# MPI-enabled dpcorr.
BIN=${1:-build/dpcorr}
if ! command -v mpirun >/dev/null 2>&1 || ! ldd "$BIN" 2>/dev/null | grep -q libmpi; then
    echo "bench_mpi: skipped (no mpirun, or $BIN built without MPI)"
    exit 0
fi
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
RUN="--data synthetic:logistic,n=20000,d=784,test-n=100 --model mlp:256:tanh --epochs 1 --batch 500
     --lr 0.5 --clip 1 --noise-multiplier 1 --mech blt --theta 0.999,0.99,0.9,0.5
     --omega 0.01,0.05,0.1,0.2 --quiet"
MPIRUN="mpirun --oversubscribe --allow-run-as-root"
field() { sed -n "s/.*\"$1\": \"*\([^\",}]*\).*/\1/p" "$2" | head -n 1; }
report() { # label file
    steps=$(field steps_done "$2"); t=$(field train_time_s "$2"); b=$(field bytes_per_step "$2")
    printf '%-26s %8.1f ms/step  %12.0f bytes/step  params %s\n' "$1" \
        "$(awk -v t="$t" -v s="$steps" 'BEGIN { print 1e3 * t / s }')" "$b" \
        "$(field params_hash "$2")"
}
echo "== data-parallel training, MLP 784-256-2 (201474 parameters), BLT, batch 500, 40 steps"
$BIN train $RUN --threads 1 --report "$TMP/p1.json" >/dev/null || exit 1
report "1 process, 1 thread" "$TMP/p1.json"
$BIN train $RUN --threads 2 --report "$TMP/t2.json" >/dev/null || exit 1
report "1 process, 2 threads" "$TMP/t2.json"
$MPIRUN -np 1 "$BIN" train $RUN --threads 1 --report "$TMP/m1.json" >/dev/null || exit 1
report "mpirun -np 1, 1 thread" "$TMP/m1.json"
$MPIRUN -np 2 "$BIN" train $RUN --threads 1 --report "$TMP/m2.json" >/dev/null || exit 1
report "mpirun -np 2, 1 thread" "$TMP/m2.json"
n=$(for f in p1 t2 m1 m2; do field params_hash "$TMP/$f.json"; done | sort -u | wc -l)
[ "$n" = 1 ] && echo "parameters identical in all four runs" || { echo "PARAMETERS DIFFER"; exit 1; }
