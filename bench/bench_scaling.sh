#!/bin/sh
# bench_scaling.sh — cost against the dataset size N (doc/performance.md, "Scaling with N"): one
# epoch of DP-SGD (shuffle sampler, batch B = 1000, noise multiplier 1, RDP accountant, one
# thread) on synthetic:linreg rows of d = 10 features, N = 1e4 .. 1e7, for a linear model and an
# MLP 10-32-1, in one process and in 2 ranks under mpirun (each rank generates and holds only
# its rows: doc/distributed.md, "Sharded data"). Per run: the training loop's wall time for the
# epoch (report final.train_time_s, without data generation), the sampling share of it
# (time_split_s.sample / train_time_s), the data rows rank 0 holds and its peak resident memory
# (getrusage maxrss, report memory.peak_rss_bytes; the ranks are symmetric). The parameters of
# the 1-rank and 2-rank runs of each (model, N) must agree (the script says so). Two ranks on
# a shared 2-core machine pay a fixed message latency per step (doc/distributed.md): beyond
# N = 1e5 they run the epoch's first BENCH_SCALING_STOP (200) steps, and the epoch time is
# scaled from them (marked *).
#
# Bounded: N = 1e7 runs for the linear model only (about 0.9 GB of data in one process, tens of
# seconds per run on a shared 2-core machine); the MLP stops at 1e6. BENCH_SCALING_MAX=1e6 (or
# lower) bounds N further; without mpirun (or an MPI-enabled dpcorr) only the 1-rank rows run.
BIN=${1:-build/dpcorr}
MAXN=${BENCH_SCALING_MAX:-1e7}
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
MPI=1
if ! command -v mpirun >/dev/null 2>&1 || ! ldd "$BIN" 2>/dev/null | grep -q libmpi; then
    MPI=0
    echo "bench_scaling: no mpirun or no MPI in $BIN: one process only"
fi
MPIRUN="mpirun --oversubscribe --allow-run-as-root"
field() { sed -n "/\"$1\": {/ s/.*\"$2\": \"*\([^\",}]*\).*/\1/p" "$3" | head -n 1; }
split() { sed -n "s/.*\"time_split_s\": {[^}]*\"$1\": \([0-9.e+-]*\).*/\1/p" "$2" | head -n 1; }
mem() { sed -n "s/.*\"memory\": {[^}]*\"$1\": \([0-9]*\).*/\1/p" "$2" | head -n 1; }
run() { # model N ranks stop (0: the whole epoch; else the first `stop` steps, scaled to one)
    out="$TMP/r.$1.$2.$3.$4.json"
    m=$1; n=$2; p=$3; k=$4; q=$5
    set -- train --data "synthetic:linreg,n=$n,d=10" --model "$m" --epochs 1 --batch 1000 \
        --mech identity --sampler shuffle --noise-multiplier 1 --accountant rdp --lr 0.05 \
        --clip 1 --seed 1 --quiet --threads 1 --report "$out"
    [ "$k" != 0 ] && set -- "$@" --checkpoint "$TMP/ck" --stop-after "$k"
    if [ "$p" = 1 ]; then "$BIN" "$@" >/dev/null 2>"$TMP/err" || { cat "$TMP/err"; exit 1; }
    else $MPIRUN -np "$p" "$BIN" "$@" >/dev/null 2>"$TMP/err" || { cat "$TMP/err"; exit 1; }; fi
    field final params_hash "$out" > "$TMP/h.$m.$n.$p.$k"
    [ "$q" = quiet ] && return
    t=$(field final train_time_s "$out"); s=$(split sample "$out")
    steps=$(field final steps_done "$out")
    printf '%-8s %9s %5s %10.3f%1s %7.1f%% %12s %10.1f  %s\n' "$m" "$n" "$p" \
        "$(awk -v t="$t" -v n="$n" -v s="$steps" 'BEGIN { print t * (n / 1000) / s }')" \
        "$([ "$k" != 0 ] && echo '*')" \
        "$(awk -v s="$s" -v t="$t" 'BEGIN { print 100 * s / t }')" "$(mem train_rows_held "$out")" \
        "$(awk -v b="$(mem peak_rss_bytes "$out")" 'BEGIN { print b / 1048576 }')" \
        "$(field final params_hash "$out")"
}
echo "== scaling with N: one epoch, batch 1000, d = 10 (time s, sampling share, rows held, peak RSS MiB per rank)"
printf '%-8s %9s %5s %10s %9s %12s %10s  %s\n' model N ranks epoch_s sample rows_held rss_MiB params
bad=0
STOP=${BENCH_SCALING_STOP:-200}
for model in linear mlp:32; do
    for n in 10000 100000 1000000 10000000; do
        awk -v n="$n" -v m="$MAXN" 'BEGIN { exit !(n <= m) }' || continue
        [ "$model" != linear ] && [ "$n" -gt 1000000 ] && continue
        run "$model" "$n" 1 0
        [ "$MPI" = 1 ] || continue
        # 2 ranks: a whole epoch up to 1e5 rows; beyond, the first STOP steps (each step's
        # messages cost the same at every N), compared with one process stopped there too
        k=0; [ "$n" -gt 100000 ] && k=$STOP
        run "$model" "$n" 2 "$k"
        [ "$k" != 0 ] && run "$model" "$n" 1 "$k" quiet
        cmp -s "$TMP/h.$model.$n.1.$k" "$TMP/h.$model.$n.2.$k" || bad=1
    done
done
echo "(* epoch time scaled from the first $STOP steps of the epoch)"
if [ "$bad" = 0 ]; then echo "parameters: 1 and 2 ranks agree for every (model, N)"
else echo "parameters DIFFER between 1 and 2 ranks"; exit 1; fi
