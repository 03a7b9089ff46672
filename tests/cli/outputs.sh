#!/bin/sh
# outputs.sh — outputs never destroy inputs (issue 37, item 3 and item 4's --stop-after):
#   identity: an output that is an input (--data and the files of its spec, --coeffs, --mech
#     file:PATH, --resume) or another output is refused before any work, exit 2, naming both
#     options, whatever the spelling (a symlink, a hard link, dir/../name, a name not there yet);
#     --resume F --checkpoint F (continuing the checkpoint resumed) stays allowed;
#   safe writes: a report, a strategy file (mech optimize --out) and a trace that fail to write
#     (a file size limit: `ulimit -f`, with SIGXFSZ ignored or not) leave the previous file as it
#     was and no temporary behind; links are written through, never replaced (reports and
#     checkpoints); a dangling link, a name too long and a missing directory are refused up
#     front; the old file's permissions are kept;
#   UTF-8: a non-UTF-8 --label or CSV column name gives a report strict JSON parsers accept;
#   --stop-after: refused without --checkpoint (every --algo); with it, the checkpoint is
#     written at the stop (not only at the last checkpoint point) and said so, and the resumed
#     run equals the uninterrupted one.
BIN=${1:-build/dpcorr}
. "$(dirname "$0")/common.inc"
T="timeout 60"
# unchanged FILE COPY name: FILE still has the bytes of COPY
unchanged() { if cmp -s "$1" "$2"; then pass; else fail "$3: $1 was changed"; fi; }
# strict_json FILE name: python3's json module parses FILE as UTF-8 text
strict_json() {
    if python3 -c 'import json, sys; json.load(open(sys.argv[1], encoding="utf-8", errors="strict"))' "$1" 2>"$TMP/pyerr"
    then pass; else fail "$2: not strict JSON: $(tail -n 1 "$TMP/pyerr")"; fi
}
no_tmp() { if ls "$1".tmp.* >/dev/null 2>&1; then fail "$2: a temporary was left: $(ls "$1".tmp.*)"; else pass; fi; }

printf 'a,b,label\n1,2,0\n3,4,1\n1,1,0\n2,2,1\n5,5,1\n0,0,0\n4,1,1\n0,2,0\n' > "$TMP/t.csv"
cp "$TMP/t.csv" "$TMP/t.copy"
D="--data csv:$TMP/t.csv,label=label,task=classification,classes=2 --model logistic --epsilon 1 --batch 2 --quiet --seed 1"
S="--data synthetic:logistic,n=80,d=4,test-n=20 --model logistic --epsilon 1 --batch 20 --lr 0.1 --clip 1 --quiet --seed 1"

# ---- identity: outputs onto inputs, refused before any work, both options named -------------
# shellcheck disable=SC2086
{
for o in --report --checkpoint --plot; do
    expect_rc 2 "train $o = the --data file" $T "$BIN" train $D $o "$TMP/t.csv"
    err_has "^dpcorr train: $o $TMP/t.csv is the same file as --data csv:$TMP/t.csv,.*refusing to overwrite an input" "$o: both options named"
    unchanged "$TMP/t.csv" "$TMP/t.copy" "$o onto --data"
done
mkdir "$TMP/sub"
ln "$TMP/t.csv" "$TMP/hard.csv"
ln -s "$TMP/t.csv" "$TMP/soft.csv"
for spelling in "$TMP/sub/../t.csv" "$TMP/./t.csv" "$TMP/hard.csv" "$TMP/soft.csv"; do
    expect_rc 2 "report = data as $spelling" $T "$BIN" train $D --report "$spelling"
    err_has "is the same file as --data" "$spelling: named"
done
if [ -L "$TMP/soft.csv" ]; then pass; else fail "the link to the data was replaced"; fi
unchanged "$TMP/t.csv" "$TMP/t.copy" "spellings of --data"
# the data reached through a link, the report by its real name; the test set of the spec
expect_rc 2 "data through a link, report by name" $T "$BIN" train --data "csv:$TMP/soft.csv,label=label,test=$TMP/t.csv" --model logistic --epsilon 1 --batch 2 --quiet --seed 1 --report "$TMP/t.csv"
err_has "(its file $TMP/soft.csv)" "the spec's file named"
cp "$TMP/t.csv" "$TMP/test.csv"
expect_rc 2 "checkpoint = the spec's test= file" $T "$BIN" train --data "csv:$TMP/t.csv,label=label,task=classification,classes=2,test=$TMP/test.csv" --model logistic --epsilon 1 --batch 2 --quiet --seed 1 --checkpoint "$TMP/test.csv"
err_has "(its file $TMP/test.csv)" "test= named"
unchanged "$TMP/test.csv" "$TMP/t.copy" "test= file"

# --resume F --report F: the checkpoint being resumed would be replaced
expect_rc 0 "a checkpoint to resume" $T "$BIN" train $S --checkpoint "$TMP/ck"
cp "$TMP/ck" "$TMP/ck.copy"
expect_rc 2 "--resume ck --report ck" $T "$BIN" train $S --resume "$TMP/ck" --report "$TMP/ck"
err_has "--report $TMP/ck is the same file as --resume $TMP/ck: refusing to overwrite an input" "both named"
unchanged "$TMP/ck" "$TMP/ck.copy" "the resumed checkpoint"
# ... but continuing the checkpoint resumed is the normal pattern
expect_rc 0 "--resume ck --checkpoint ck" $T "$BIN" train $S --resume "$TMP/ck" --checkpoint "$TMP/ck"
# two outputs, one file (also when neither exists yet)
expect_rc 2 "--report x --checkpoint x" $T "$BIN" train $S --report "$TMP/x" --checkpoint "$TMP/x"
err_has "--report $TMP/x is the same file as --checkpoint $TMP/x: each output needs its own file" "both named"
if [ -e "$TMP/x" ]; then fail "x was written"; else pass; fi
expect_rc 2 "--report y --plot sub/../y (not there yet)" $T "$BIN" train $S --report "$TMP/y" --plot "$TMP/sub/../y"
err_has "--report $TMP/y is the same file as --plot $TMP/sub/../y" "named"
# --coeffs and --mech file:PATH are inputs too
printf '1\n0.5\n0.25\n0.125\n' > "$TMP/c.txt"; cp "$TMP/c.txt" "$TMP/c.copy"
expect_rc 2 "--report = --coeffs" $T "$BIN" train $S --mech toeplitz --coeffs "$TMP/c.txt" --report "$TMP/c.txt"
err_has "--report $TMP/c.txt is the same file as --coeffs $TMP/c.txt" "named"
unchanged "$TMP/c.txt" "$TMP/c.copy" "--coeffs"
expect_rc 0 "a strategy file" $T "$BIN" mech optimize --kind blt --steps 4 --out "$TMP/s.json"
cp "$TMP/s.json" "$TMP/s.copy"
expect_rc 2 "--checkpoint = --mech file:" $T "$BIN" train $S --mech "file:$TMP/s.json" --checkpoint "$TMP/s.json"
err_has "--checkpoint $TMP/s.json is the same file as --mech file:$TMP/s.json \(its file $TMP/s.json\)" "named"
unchanged "$TMP/s.json" "$TMP/s.copy" "the strategy file"
# every trainer and audit: their --data, --report, --checkpoint and --trace
printf 'x1,x2,y\n' > "$TMP/lr.csv"; i=0
while [ $i -lt 200 ]; do echo "$((i % 7)),$((i % 5)),$((i % 3))"; i=$((i + 1)); done >> "$TMP/lr.csv"
cp "$TMP/lr.csv" "$TMP/lr.copy"
expect_rc 2 "dp-ssgd --report = data" $T "$BIN" train --algo dp-ssgd --data "csv:$TMP/lr.csv,label=y" --epsilon 1 --quiet --seed 1 --report "$TMP/lr.csv"
err_has "is the same file as --data" "dp-ssgd named"
expect_rc 2 "dp-ambssgd --checkpoint = data" $T "$BIN" train --algo dp-ambssgd --data "csv:$TMP/lr.csv,label=y" --epsilon 1 --quiet --seed 1 --checkpoint "$TMP/lr.csv"
err_has "is the same file as --data" "dp-ambssgd named"
expect_rc 2 "lcgd-projected --report = data" $T "$BIN" train --algo lcgd-projected $D --report "$TMP/t.csv"
err_has "is the same file as --data" "lcgd-projected named"
expect_rc 2 "dp-srgd --trace = --report" $T "$BIN" train --algo dp-srgd --problem p2 --n 300 --dim 2 --epsilon 1 --quiet --seed 1 --report "$TMP/tr" --trace "$TMP/tr"
err_has "--report $TMP/tr is the same file as --trace $TMP/tr" "dp-srgd named"
expect_rc 2 "dp-srgd --trace = data" $T "$BIN" train --algo dp-srgd --data "csv:$TMP/t.csv,label=label,task=classification,classes=2" --row-radius 1 --epsilon 1 --quiet --seed 1 --trace "$TMP/t.csv"
err_has "--trace $TMP/t.csv is the same file as --data" "dp-srgd --trace named"
expect_rc 2 "audit --report = data" $T "$BIN" audit $D --report "$TMP/t.csv"
err_has "--report $TMP/t.csv is the same file as --data" "audit named"
unchanged "$TMP/t.csv" "$TMP/t.copy" "every trainer"
unchanged "$TMP/lr.csv" "$TMP/lr.copy" "every trainer (lr.csv)"
}

# ---- checks up front: names too long, dangling links, missing directories --------------------
# shellcheck disable=SC2086
{
long=$(printf '%0300d' 0)
for o in --report --checkpoint; do
    expect_rc 2 "$o: a 300-byte name" $T "$BIN" train $S --epochs 50 $o "$TMP/$long"
    err_has "^dpcorr train: $o: cannot write .*the file name is 300 bytes" "$o: the name's length named"
done
near=$(printf '%0245d' 0) # fits NAME_MAX (255) but leaves no room for the temporary
expect_rc 2 "--report: a 245-byte name" $T "$BIN" train $S --report "$TMP/$near"
err_has "less 16 for the temporary" "the temporary's room named"
ln -s "$TMP/nowhere/r.json" "$TMP/dangling"
for o in --report --checkpoint; do
    expect_rc 2 "$o: a dangling link" $T "$BIN" train $S --epochs 50 $o "$TMP/dangling"
    err_has "^dpcorr train: $o: cannot write $TMP/dangling \(a symbolic link to nothing" "$o: dangling named"
done
if [ -L "$TMP/dangling" ]; then pass; else fail "the dangling link was replaced"; fi
expect_rc 2 "--report: a missing directory" $T "$BIN" train $S --report "$TMP/missing/r.json"
err_has "--report: cannot write $TMP/missing/r.json \(directory $TMP/missing: No such file" "named"
expect_rc 2 "mech optimize --out: a dangling link" $T "$BIN" mech optimize --kind blt --steps 4 --out "$TMP/dangling"
err_has "--out: cannot write $TMP/dangling \(a symbolic link to nothing" "named"
}

# ---- safe writes: the previous file survives a failed write ----------------------------------
# shellcheck disable=SC2086
{
expect_rc 0 "a first report" $T "$BIN" train $S --report "$TMP/r.json"
cp "$TMP/r.json" "$TMP/r.copy"
sz=$(wc -c < "$TMP/r.json")
if [ "$sz" -gt 2048 ]; then pass; else fail "the report ($sz bytes) must exceed the 1-block limit below"; fi
# file size limit, SIGXFSZ ignored: write() fails with EFBIG; exit 1, the old report kept
sh -c 'ulimit -f 1; trap "" XFSZ; exec "$@"' sh $T "$BIN" train $S --label new --report "$TMP/r.json" >"$TMP/out" 2>"$TMP/err"; rc=$?
if [ $rc -eq 1 ]; then pass; else fail "ulimit -f (EFBIG): exit $rc, want 1: $(head -c 300 "$TMP/err")"; fi
err_has "^dpcorr: --report: write error on $TMP/r.json .*the previous file, if any, is unchanged" "the write error named"
unchanged "$TMP/r.json" "$TMP/r.copy" "report after EFBIG"
no_tmp "$TMP/r.json" "report after EFBIG"
# ... not ignored: the process is killed by SIGXFSZ mid-write; the old report is still whole
sh -c 'ulimit -f 1; exec "$@"' sh $T "$BIN" train $S --label new --report "$TMP/r.json" >/dev/null 2>&1; rc=$?
if [ $rc -ne 0 ]; then pass; else fail "ulimit -f (SIGXFSZ): exit 0"; fi
unchanged "$TMP/r.json" "$TMP/r.copy" "report after SIGXFSZ"
rm -f "$TMP"/r.json.tmp.*
# a strategy file (mech optimize --out) and a trace, the same
expect_rc 0 "a dense strategy" $T "$BIN" mech optimize --kind dense --steps 40 --out "$TMP/big.json"
cp "$TMP/big.json" "$TMP/big.copy"
sh -c 'ulimit -f 1; trap "" XFSZ; exec "$@"' sh $T "$BIN" mech optimize --kind dense --steps 41 --out "$TMP/big.json" >/dev/null 2>"$TMP/err"; rc=$?
if [ $rc -eq 1 ]; then pass; else fail "optimize under ulimit -f: exit $rc, want 1: $(head -c 300 "$TMP/err")"; fi
unchanged "$TMP/big.json" "$TMP/big.copy" "strategy file after EFBIG"
no_tmp "$TMP/big.json" "strategy file after EFBIG"
SR="--algo dp-srgd --problem p2 --n 300 --dim 2 --epsilon 1 --quiet --seed 1"
expect_rc 0 "a first trace" $T "$BIN" train $SR --trace "$TMP/tr.csv"
cp "$TMP/tr.csv" "$TMP/tr.copy"
sh -c 'ulimit -f 1; trap "" XFSZ; exec "$@"' sh $T "$BIN" train $SR --trace "$TMP/tr.csv" >/dev/null 2>"$TMP/err"; rc=$?
if [ $rc -eq 1 ]; then pass; else fail "trace under ulimit -f: exit $rc, want 1: $(head -c 300 "$TMP/err")"; fi
unchanged "$TMP/tr.csv" "$TMP/tr.copy" "trace after EFBIG"
# links are written through: the link stays, its target gets the new report
mkdir "$TMP/real"
cp "$TMP/r.json" "$TMP/real/r.json"
ln -s "$TMP/real/r.json" "$TMP/rlink.json"
expect_rc 0 "report through a link" $T "$BIN" train $S --label through --report "$TMP/rlink.json"
if [ -L "$TMP/rlink.json" ] && grep -q '"label": "through"' "$TMP/real/r.json"; then pass; else fail "the report link was replaced or its target not written"; fi
no_tmp "$TMP/real/r.json" "report through a link"
# ... and so are checkpoints (they used to replace the link by a regular file)
cp "$TMP/ck.copy" "$TMP/real/ck"
ln -s "$TMP/real/ck" "$TMP/cklink"
expect_rc 0 "checkpoint through a link" $T "$BIN" train $S --checkpoint "$TMP/cklink"
if [ -L "$TMP/cklink" ] && ! cmp -s "$TMP/real/ck" "$TMP/ck.copy"; then pass; else fail "the checkpoint link was replaced or its target not written"; fi
expect_rc 0 "resume through the link" $T "$BIN" train $S --resume "$TMP/cklink" --checkpoint "$TMP/cklink"
if [ -L "$TMP/cklink" ]; then pass; else fail "the link was replaced on resume"; fi
# the old file's permissions are kept
chmod 640 "$TMP/r.json"
expect_rc 0 "rewrite a 640 report" $T "$BIN" train $S --report "$TMP/r.json"
if [ "$(stat -c %a "$TMP/r.json")" = 640 ]; then pass; else fail "report mode $(stat -c %a "$TMP/r.json"), want 640"; fi
}

# ---- JSON strings are valid UTF-8 --------------------------------------------------------------
# shellcheck disable=SC2086
{
printf 'a\351,b\377\376,lab\351l\n1,2,0\n3,4,1\n1,1,0\n2,2,1\n5,5,1\n0,0,0\n' > "$TMP/l1.csv"
lab=$(printf 'lab\351l')
bad=$(printf 'x\351\303y\355\240\200z\360\237\230\200')
expect_rc 0 "Latin-1 label and column names" $T "$BIN" train --data "csv:$TMP/l1.csv,label=$lab,task=classification,classes=2" --model logistic --epsilon 1 --batch 2 --quiet --seed 1 --label "$bad" --report "$TMP/u.json"
strict_json "$TMP/u.json" "non-UTF-8 label"
if grep -q '"label": "x\\ufffd\\ufffdy\\ufffd\\ufffd\\ufffdz' "$TMP/u.json"; then pass; else fail "invalid bytes not replaced by U+FFFD: $(grep '"label"' "$TMP/u.json")"; fi
if grep -aq "$(printf 'z\360\237\230\200')" "$TMP/u.json"; then pass; else fail "valid UTF-8 (an emoji) not kept as is"; fi
expect_rc 0 "dp-srgd with a Latin-1 label" $T "$BIN" train --algo dp-srgd --problem p2 --n 300 --dim 2 --epsilon 1 --quiet --seed 1 --label "$bad" --report "$TMP/u2.json"
strict_json "$TMP/u2.json" "dp-srgd non-UTF-8 label"
}

# ---- --stop-after: refused without --checkpoint; the checkpoint written at the stop ----------
KAN="--algo lcgd-projected --data kan-synth:n=200,d=3,test-n=20 --model kan2:4 --iterates 40 --batch 20 --epsilon 2 --quiet --seed 3"
AMB="--algo dp-ambssgd --data synthetic:linreg,n=4000,d=2,alpha=0 --epsilon 1 --quiet --seed 4"
SSGD="--algo dp-ssgd --data synthetic:linreg,n=2000,d=2,alpha=0 --epsilon 0.5 --log-every 50 --quiet --seed 4"
SRGD="--algo dp-srgd --problem p2 --n 600 --dim 2 --epsilon 1 --quiet --seed 5"
# shellcheck disable=SC2086
for a in FTRL KAN AMB SSGD SRGD; do
    case $a in FTRL) args="$S --epochs 3" ;; KAN) args=$KAN ;; AMB) args=$AMB ;; SSGD) args=$SSGD ;; SRGD) args=$SRGD ;; esac
    expect_rc 2 "$a: --stop-after without --checkpoint" $T "$BIN" train $args --stop-after 3
    err_has "--stop-after: needs --checkpoint F" "$a: refused, naming --checkpoint"
    rm -f "$TMP/stop.ck"
    expect_rc 0 "$a: --stop-after 3 --checkpoint" $T "$BIN" train $args --stop-after 3 --checkpoint "$TMP/stop.ck"
    if [ -f "$TMP/stop.ck" ]; then pass; else fail "$a: no checkpoint at the stop"; fi
    err_has "stopped after 3 of [0-9]+ [a-z]+s \(--stop-after\); checkpoint written to $TMP/stop.ck" "$a: the stop and the checkpoint said"
    expect_rc 0 "$a: resumed from the stop" $T "$BIN" train $args --resume "$TMP/stop.ck" --report "$TMP/stop.json"
    expect_rc 0 "$a: uninterrupted" $T "$BIN" train $args --report "$TMP/full.json"
    h1=$(sed -n 's/.*"params_hash": "\([0-9a-f]*\)".*/\1/p' "$TMP/full.json")
    h2=$(sed -n 's/.*"params_hash": "\([0-9a-f]*\)".*/\1/p' "$TMP/stop.json")
    if [ -n "$h1" ] && [ "$h1" = "$h2" ]; then pass; else fail "$a: stop at 3 and resume: $h2 vs uninterrupted $h1"; fi
done
# dp-ftrl: a stop between checkpoint points resumes from the stop, and stdout does not say done
# shellcheck disable=SC2086
expect_rc 0 "stop at 5, checkpoints every 2" $T "$BIN" train $S --epochs 3 --checkpoint "$TMP/s5.ck" --checkpoint-every 2 --stop-after 5
out_has "^stopped at step 5 of 12 \(--stop-after; checkpoint $TMP/s5.ck\)" "stdout says stopped, not done"
# shellcheck disable=SC2086
expect_rc 0 "resumed from 5" $T "$BIN" train $S --epochs 3 --resume "$TMP/s5.ck" --report "$TMP/s5.json"
if grep -q '"resumed_from_step": 5' "$TMP/s5.json"; then pass; else fail "not resumed at step 5: $(grep resumed_from "$TMP/s5.json")"; fi
summary
