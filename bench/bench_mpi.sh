#!/bin/sh
# bench_mpi.sh — data-parallel training under mpirun (doc/distributed.md): time per step and
# bytes moved per step (all ranks) for P = 1 and 2 ranks of one thread, and one process of one
# and two threads for comparison, on an MLP 784-256-2 (201,474 parameters) with BLT noise, batch
# 500 (16 chunks of 32). Wall ms/step is the report's training time per step; CPU ms/step is the
# CPU time of all processes per step, from the difference of a 2-epoch and a 1-epoch run (40
# steps), so it excludes start-up and data generation and does not depend on how busy the
# machine is. Every run's parameters must agree (the script says so). Skipped without mpirun or
# without an MPI-enabled dpcorr.
BIN=${1:-build/dpcorr}
if ! command -v mpirun >/dev/null 2>&1 || ! ldd "$BIN" 2>/dev/null | grep -q libmpi; then
    echo "bench_mpi: skipped (no mpirun, or $BIN built without MPI)"
    exit 0
fi
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
RUN="--data synthetic:logistic,n=20000,d=784,test-n=100 --model mlp:256:tanh --batch 500
     --lr 0.5 --clip 1 --noise-multiplier 1 --mech blt --theta 0.999,0.99,0.9,0.5
     --omega 0.01,0.05,0.1,0.2 --quiet --seed 1"
# (--seed: the runs must draw the same noise for their parameters to be compared; without it
# each run is keyed by the OS, the default since secure mode, and no two runs agree)
MPIRUN="mpirun --oversubscribe --allow-run-as-root"
field() { sed -n "/\"$1\": {/ s/.*\"$2\": \"*\([^\",}]*\).*/\1/p" "$3" | head -n 1; }
cpu() { awk '{ print $1 + $2 }' "$1"; } # user + system seconds (GNU time -f "%U %S")
one() { # label threads launcher...: a 1-epoch and a 2-epoch run, one line of results
    label=$1; th=$2; shift 2
    /usr/bin/time -f "%U %S" -o "$TMP/c1" "$@" train $RUN --threads $th --epochs 1 \
        --report "$TMP/r1.json" >/dev/null 2>"$TMP/err" || { cat "$TMP/err"; exit 1; }
    /usr/bin/time -f "%U %S" -o "$TMP/c2" "$@" train $RUN --threads $th --epochs 2 \
        --report "$TMP/r2.json" >/dev/null 2>"$TMP/err" || { cat "$TMP/err"; exit 1; }
    steps=$(field final steps_done "$TMP/r2.json"); t=$(field final train_time_s "$TMP/r2.json")
    s1=$(field final steps_done "$TMP/r1.json")
    printf '%-26s %9.1f %9.1f %12.0f  %s\n' "$label" \
        "$(awk -v t="$t" -v s="$steps" 'BEGIN { print 1e3 * t / s }')" \
        "$(awk -v a="$(cpu "$TMP/c1")" -v b="$(cpu "$TMP/c2")" -v s="$((steps - s1))" \
            'BEGIN { print 1e3 * (b - a) / s }')" \
        "$(field distributed bytes_per_step "$TMP/r2.json")" "$(field final params_hash "$TMP/r2.json")"
    field final params_hash "$TMP/r2.json" >> "$TMP/hashes"
}
command -v /usr/bin/time >/dev/null || { echo "bench_mpi: skipped (no /usr/bin/time)"; exit 0; }
echo "== data-parallel training, MLP 784-256-2 (201474 parameters), BLT, batch 500"
echo "   load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs; seeded runs (their warning not shown)"
printf '%-26s %9s %9s %12s  %s\n' "" "wall ms" "CPU ms" "bytes" "params"
one "1 process, 1 thread" 1 "$BIN"
one "1 process, 2 threads" 2 "$BIN"
one "mpirun -np 1, 1 thread" 1 $MPIRUN -np 1 "$BIN"
one "mpirun -np 2, 1 thread" 1 $MPIRUN -np 2 "$BIN"
[ "$(sort -u "$TMP/hashes" | wc -l)" = 1 ] && echo "parameters identical in every run" ||
    { echo "PARAMETERS DIFFER"; exit 1; }
