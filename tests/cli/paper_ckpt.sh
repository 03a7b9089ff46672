#!/bin/sh
# End-to-end tests of checkpoints of the papers' trainers (`train --algo lcgd-projected`,
# dp-ambssgd, dp-ssgd, dp-srgd), which share the run frame's --checkpoint / --checkpoint-every /
# --resume / --stop-after with dp-ftrl: a run stopped after K steps and resumed, and a run killed
# (SIGKILL) mid-run and resumed, give the report of an uninterrupted run (params_hash, metrics,
# per-step telemetry; only the timings differ); a resume with a changed option is refused naming
# the flag, with another algorithm naming --algo, in the other randomness mode naming
# --seed/--secure; a corrupt, cut or appended-to checkpoint is refused; the file has mode 0600.
BIN=${1:-build/dpcorr}
. "$(dirname "$0")/common.inc"

# same A B name: the two reports agree except for their timings
same() {
    sed 's/"[a-z_]*time_s": [^,}]*//g' "$1" > "$TMP/s1"; sed 's/"[a-z_]*time_s": [^,}]*//g' "$2" > "$TMP/s2"
    h=$(sed -n 's/.*"params_hash": "\([0-9a-f]*\)".*/\1/p' "$TMP/s1")
    if [ -n "$h" ] && cmp -s "$TMP/s1" "$TMP/s2"; then pass; else fail "$3: the reports differ: $(cmp "$TMP/s1" "$TMP/s2")"; fi
}

# stop_resume NAME ARGS...: full run; stop after 5 steps (checkpoints every 2); resume; compare
stop_resume() {
    n=$1; shift
    expect_rc 0 "$n full" "$BIN" train "$@" --report "$TMP/$n.full.json"
    expect_rc 0 "$n stopped" "$BIN" train "$@" --checkpoint "$TMP/$n.ck" --checkpoint-every 2 --stop-after 5
    if [ -f "$TMP/$n.ck" ]; then pass; else fail "$n: no checkpoint"; fi
    if [ "$(stat -c %a "$TMP/$n.ck")" = 600 ]; then pass; else fail "$n: checkpoint mode $(stat -c %a "$TMP/$n.ck")"; fi
    expect_rc 0 "$n resumed" "$BIN" train "$@" --resume "$TMP/$n.ck" --checkpoint "$TMP/$n.ck" --report "$TMP/$n.res.json"
    same "$TMP/$n.full.json" "$TMP/$n.res.json" "$n stop/resume"
}

# kill_resume NAME ARGS...: killed (SIGKILL) once its first checkpoint exists, then resumed
kill_resume() {
    n=$1; shift
    rm -f "$TMP/$n.kck"
    "$BIN" train "$@" --checkpoint "$TMP/$n.kck" --checkpoint-every 3 >/dev/null 2>&1 &
    pid=$!
    i=0; while [ ! -f "$TMP/$n.kck" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
    sleep 0.2; kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
    expect_rc 0 "$n resumed after kill -9" "$BIN" train "$@" --resume "$TMP/$n.kck" --report "$TMP/$n.kres.json"
    same "$TMP/$n.full.json" "$TMP/$n.kres.json" "$n kill -9/resume"
}

KAN="--algo lcgd-projected --data kan-synth:n=400,d=4,test-n=50 --model kan2:8 --iterates 200 --batch 30 --epsilon 2 --quiet --seed 3"
AMB="--algo dp-ambssgd --data synthetic:linreg,n=20000,d=3,alpha=0 --epsilon 1 --quiet --seed 4"
SSGD="--algo dp-ssgd --data synthetic:linreg,n=4000,d=2,alpha=0 --epsilon 0.5 --log-every 50 --quiet --seed 4"
SRGD="--algo dp-srgd --problem p2 --n 3000 --dim 4 --epsilon 1 --quiet --seed 5"
# shellcheck disable=SC2086
{
stop_resume kan $KAN; kill_resume kan $KAN
stop_resume amb $AMB; kill_resume amb $AMB
stop_resume ssgd $SSGD
stop_resume srgd $SRGD; kill_resume srgd $SRGD

# every trainer lists the checkpoint options
for a in lcgd-projected dp-ambssgd dp-ssgd dp-srgd; do
    expect_rc 0 "$a help" "$BIN" train --algo $a --help
    for o in --checkpoint --checkpoint-every --resume --stop-after; do out_has "^ *$o " "$a: help line for $o"; done
done

# refusals, naming what the user typed
expect_rc 2 "kan: changed lr" "$BIN" train $KAN --lr 0.3 --resume "$TMP/kan.ck"
err_has -- "--lr: step size: the checkpoint .* has 0.5, this run has 0.3" "names --lr"
# (the checkpoint's delta is the default derived for N = 20000, 1e-6)
expect_rc 2 "amb: changed delta" "$BIN" train $AMB --delta 1e-7 --resume "$TMP/amb.ck"
err_has -- "--delta: delta: the checkpoint .* has 1e-06, this run has 1e-07" "names --delta"
expect_rc 2 "srgd: changed clip" "$BIN" train $SRGD --clip-delta 2 --resume "$TMP/srgd.ck"
err_has -- "--clip-delta: clip" "names --clip-delta"
expect_rc 2 "srgd: changed data" "$BIN" train ${SRGD% --seed 5} --n 3001 --seed 5 --resume "$TMP/srgd.ck"
err_has -- "--n|--data|training" "names the data"
expect_rc 2 "another algorithm" "$BIN" train $SSGD --resume "$TMP/amb.ck"
err_has -- "--algo: the checkpoint .* is of a dp-ambssgd run, this run is dp-ssgd" "names --algo"
expect_rc 0 "a dp-ftrl checkpoint" "$BIN" train --data synthetic:logistic,n=600,d=4 --model logistic \
    --epsilon 1 --batch 20 --quiet --seed 3 --checkpoint "$TMP/ftrl.ck"
expect_rc 2 "dp-ftrl file into lcgd" "$BIN" train $KAN --resume "$TMP/ftrl.ck"
err_has -- "--algo: the checkpoint .* is of a dp-ftrl run, this run is lcgd-projected" "dp-ftrl named"
expect_rc 2 "an lcgd file into dp-ftrl" "$BIN" train --data synthetic:logistic,n=600,d=4 --model logistic \
    --epsilon 1 --batch 20 --quiet --seed 3 --resume "$TMP/kan.ck"
err_has -- "(--algo|algorithm): the checkpoint .* is of a lcgd-projected run, this run is dp-ftrl" "lcgd named"
expect_rc 2 "secure resume of a seeded run" "$BIN" train ${KAN% --seed 3} --resume "$TMP/kan.ck"
err_has -- "--resume: the checkpoint .* seeded mode \(seed 3\); resume it with --seed 3" "seeded named"
expect_rc 2 "another seed" "$BIN" train ${AMB% --seed 4} --seed 5 --resume "$TMP/amb.ck"
err_has -- "--seed: the checkpoint .* with seed 4, got 5" "seed named"
S="--algo dp-srgd --problem p2 --n 3000 --dim 4 --epsilon 1 --quiet"
expect_rc 0 "secure run" "$BIN" train $S --checkpoint "$TMP/sec.ck" --checkpoint-every 1 --stop-after 2
expect_rc 2 "seeded resume of a secure run" "$BIN" train $S --seed 5 --resume "$TMP/sec.ck"
err_has -- "--seed: the checkpoint .* secure mode" "secure named"
expect_rc 0 "secure resume" "$BIN" train $S --resume "$TMP/sec.ck"
# corrupt files
size=$(wc -c < "$TMP/amb.ck")
head -c $((size - 3)) "$TMP/amb.ck" > "$TMP/cut.ck"
expect_rc 2 "cut checkpoint" "$BIN" train $AMB --resume "$TMP/cut.ck"
err_has -- "--resume: .*(checksum|truncated)" "cut refused"
cp "$TMP/amb.ck" "$TMP/app.ck"; printf 'x' >> "$TMP/app.ck"
expect_rc 2 "appended checkpoint" "$BIN" train $AMB --resume "$TMP/app.ck"
err_has -- "--resume: .*checksum" "appended refused"
cp "$TMP/kan.ck" "$TMP/flip.ck"
printf '\377' | dd of="$TMP/flip.ck" bs=1 seek=400 conv=notrunc 2>/dev/null
expect_rc 2 "flipped byte" "$BIN" train $KAN --resume "$TMP/flip.ck"
err_has -- "--resume: .*checksum" "flipped byte refused"
expect_rc 2 "missing checkpoint" "$BIN" train $KAN --resume "$TMP/none.ck"
err_has -- "--resume: .*cannot open" "missing file named"
}
summary
