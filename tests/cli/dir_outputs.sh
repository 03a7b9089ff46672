#!/bin/sh
# dir_outputs.sh — the files a command writes INTO an output directory (issue 37, item 3):
# `repro TARGET --out DIR`, `demo --out DIR`, `audit --study DIR`. Every file the command will
# write there is checked before any work against every input (the data it reads, --data,
# strategy files) and against the other outputs by file identity (a symbolic link in DIR to an
# input, two names of one file), refused with both option names; the files are written to a
# temporary and renamed (the old file survives a failed write, no temporary left); a stale
# TARGET.tmp.PID of a killed writer is removed by the next successful write.
BIN=${1:-build/dpcorr}
. "$(dirname "$0")/common.inc"
# unchanged FILE TEXT name: FILE still holds TEXT
unchanged() { if [ "$(cat "$1")" = "$2" ]; then pass; else fail "$3: $1 changed: $(head -c 100 "$1")"; fi; }
# a pid of no running process (a child that has exited)
sh -c 'exit 0' & dead=$!; wait $dead

# ---- repro: two names of one file in DIR (a hard link) -------------------------------------
mkdir -p "$TMP/r1"
echo old > "$TMP/r1/table4.csv"; ln "$TMP/r1/table4.csv" "$TMP/r1/table1.csv"
expect_rc 2 "repro: two outputs, one file" "$BIN" repro nu-tables --out "$TMP/r1"
err_has -- "--out .*table1\.csv.* is the same file as --out .*table4\.csv.*each output needs its own file|--out .*table4\.csv.* is the same file as --out .*table1\.csv.*each output needs its own file" \
    "repro: names both files and the option"
unchanged "$TMP/r1/table4.csv" old "repro: refused before any work"
expect_rc 2 "repro --dry-run: refused too" "$BIN" repro nu-tables --out "$TMP/r1" --dry-run

# ---- repro: a symbolic link in DIR to a file outside is written through, so it is checked
# like any output: a dangling one refused up front
mkdir -p "$TMP/r2"
ln -s "$TMP/nowhere/x.csv" "$TMP/r2/table1.csv"
expect_rc 2 "repro: dangling link in DIR" "$BIN" repro nu-tables --out "$TMP/r2"
err_has -- "--out: cannot write .*table1\.csv" "repro: the dangling link named"
if [ -z "$(ls "$TMP/r2" | grep -v '^table1.csv$')" ]; then pass; else fail "repro: wrote before the refusal: $(ls "$TMP/r2")"; fi

# ---- repro: written atomically; a failed write keeps the old files, no temporary left --------
mkdir -p "$TMP/r3"
for f in table1 table2_mechanisms table2_gamma_T table4; do echo old > "$TMP/r3/$f.csv"; done
sh -c 'ulimit -f 1; trap "" XFSZ; exec "$@"' sh "$BIN" repro nu-tables --out "$TMP/r3" >"$TMP/out" 2>"$TMP/err"; rc=$?
if [ $rc -eq 1 ]; then pass; else fail "repro under ulimit -f: exit $rc, want 1: $(head -c 300 "$TMP/err")"; fi
for f in table2_mechanisms table2_gamma_T; do
    if [ "$(wc -c < "$TMP/r3/$f.csv")" -gt 512 ] || [ "$(cat "$TMP/r3/$f.csv")" = old ]; then pass
    else fail "repro under ulimit -f: $f.csv truncated ($(wc -c < "$TMP/r3/$f.csv") bytes)"; fi
done
if ls "$TMP/r3"/*.tmp.* >/dev/null 2>&1; then fail "repro: temporaries left: $(ls "$TMP/r3"/*.tmp.*)"; else pass; fi

# ---- repro: a stale temporary of a killed writer is removed by the next successful write -----
mkdir -p "$TMP/r4"
: > "$TMP/r4/table1.csv.tmp.$dead"
: > "$TMP/r4/table1.csv.tmp.$$"  # a live process's (this shell's) is kept
expect_rc 0 "repro nu-tables" "$BIN" repro nu-tables --out "$TMP/r4"
if [ -e "$TMP/r4/table1.csv.tmp.$dead" ]; then fail "stale temporary of a dead writer left"; else pass; fi
if [ -e "$TMP/r4/table1.csv.tmp.$$" ]; then pass; else fail "a live process's temporary removed"; fi
# ... and beside a report (dpc_io_out_commit)
: > "$TMP/rep.json.tmp.$dead"
expect_rc 0 "report" "$BIN" train --data synthetic:logistic,n=200,d=3 --model logistic --epochs 1 \
    --batch 20 --noise-multiplier 1 --quiet --seed 1 --report "$TMP/rep.json"
if [ -e "$TMP/rep.json.tmp.$dead" ]; then fail "stale report temporary left"; else pass; fi

# ---- audit --study: a file of the study linked to the --data file ----------------------------
awk 'BEGIN { srand(3); print "a,b,y"; for (i = 0; i < 200; i++) { a = rand(); b = rand(); print a "," b "," (a + b > 1) } }' > "$TMP/d.csv"
cp "$TMP/d.csv" "$TMP/d.copy"
mkdir -p "$TMP/study"
ln -s "$TMP/d.csv" "$TMP/study/audit_study.csv"
expect_rc 2 "audit --study: its CSV is the data" "$BIN" audit \
    --data "csv:$TMP/d.csv,label=y,task=classification,classes=2" --model logistic --seed 1 \
    --epochs 1 --batch 10 --canary mislabel --canaries 20 --quiet --study "$TMP/study" --accountant rdp
err_has -- "--study .*audit_study\.csv.* is the same file as --data .*refusing to overwrite an input" \
    "audit --study: both options named"
if cmp -s "$TMP/d.csv" "$TMP/d.copy"; then pass; else fail "audit --study: the data file changed"; fi
# ... and against each other (--report and --plot cannot be combined with --study)
rm "$TMP/study/audit_study.csv"
echo old > "$TMP/study/audit_study.csv"; ln "$TMP/study/audit_study.csv" "$TMP/study/audit_study.json"
expect_rc 2 "audit --study: two files, one inode" "$BIN" audit --data synthetic:logistic,n=200,d=3 \
    --model logistic --seed 1 --epochs 1 --batch 10 --canary mislabel --canaries 20 --quiet --study "$TMP/study" \
    --accountant rdp
err_has -- "--study .*audit_study\.(csv|json).* is the same file as --study .*each output needs its own file" \
    "audit --study: its two files"
unchanged "$TMP/study/audit_study.csv" old "audit --study: refused before any work"

# ---- demo --out: two reports as one file, refused before the data is loaded ------------------
mkdir -p "$TMP/demo"
echo old > "$TMP/demo/bsr.json"; ln "$TMP/demo/bsr.json" "$TMP/demo/dpsgd.json"
expect_rc 2 "demo: two reports, one file" "$BIN" demo --quick --dry-run --out "$TMP/demo"
err_has -- "--out .*(dpsgd|bsr)\.json.* is the same file as --out .*(dpsgd|bsr)\.json" "demo: named"
expect_rc 2 "demo --frontier: its plot a directory" sh -c "mkdir -p '$TMP/demo2/frontier.png' && exec '$BIN' demo --frontier --quick --dry-run --out '$TMP/demo2'"
err_has -- "--out: cannot write .*frontier\.png" "demo --frontier: the file named"
unchanged "$TMP/demo/bsr.json" old "demo: refused before any work"
summary
