#!/bin/sh
# adversarial.sh — the adversarial families of issue 28 kept as a quick regression (seconds):
# dense strategy and coefficient files at the train entry (memory error, sized from the file),
# special files as outputs (FIFO, link to /dev/null: refused before any work, never replaced),
# endless and binary inputs (/dev/zero, /dev/urandom, an endless FIFO: a clear error at once),
# silent acceptance (bands above n recorded as run, limit=0, a trailing comma in a cnn spec) and, under mpirun,
# ranks given another --seed or --secure. Every command
# runs under `timeout 10`, so an unbounded read fails here instead of hanging.
BIN=${1:-build/dpcorr}
. "$(dirname "$0")/common.inc"
T="timeout 10"
S="--data synthetic:logistic,n=80,d=4,test-n=20 --model logistic --epsilon 1 --batch 20 --lr 0.1 --clip 1 --quiet --seed 1"

# --- dense strategies train; the matrix is sized from its file, another n is refused by name
expect_rc 0 "optimize a dense strategy" $T "$BIN" mech optimize --kind dense --steps 4 --out "$TMP/d.json"
expect_rc 0 "train a dense strategy file (n = 4 = run)" $T "$BIN" train $S --mech file:"$TMP/d.json"
out_has "dense" "the dense strategy ran"
expect_rc 2 "dense strategy file, run of 8 steps" $T "$BIN" train $S --epochs 2 --mech file:"$TMP/d.json"
err_has "mech.steps: the dense strategy has n = 4 steps, the run 8" "names both sizes"
printf '1\n0.5 1\n0.2 0.5 1\n0.1 0.2 0.5 1\n' > "$TMP/c4.txt"
printf '1\n0.5 1\n' > "$TMP/c2.txt"
expect_rc 0 "train --mech dense --coeffs (4 x 4, n = 4)" $T "$BIN" train $S --mech dense --coeffs "$TMP/c4.txt"
expect_rc 2 "train --mech dense --coeffs (2 x 2, n = 4)" $T "$BIN" train $S --mech dense --coeffs "$TMP/c2.txt"
err_has "mech.steps: the dense strategy has n = 2 steps, the run 4" "names the sizes"
printf '1 0.5\n0.2 0.5 1\n' > "$TMP/cbad.txt"
expect_rc 2 "dense coefficients above the diagonal" $T "$BIN" train $S --mech dense --coeffs "$TMP/cbad.txt"
err_has "^dpcorr train: --coeffs: " "names --coeffs"

# --- special files as outputs: refused before any work (exit 2, the option named), untouched
mkfifo "$TMP/fifo"
ln -s /dev/null "$TMP/null"
for opt in --checkpoint --report; do
    for f in fifo null; do
        expect_rc 2 "train $opt $f" $T "$BIN" train $S $opt "$TMP/$f"
        err_has "^dpcorr train: $opt: refusing to write .*not a regular file" "$opt $f: named"
    done
done
expect_rc 2 "mech optimize --out fifo" $T "$BIN" mech optimize --kind dense --steps 4 --out "$TMP/fifo"
err_has -- "--out: (cannot|refusing to) write .*not a regular file" "--out fifo: named"
if [ -p "$TMP/fifo" ] && [ -L "$TMP/null" ]; then pass; else fail "a special file was replaced"; fi

# --- endless and binary inputs: a clear error at once, never read until out of memory
for dev in /dev/zero /dev/urandom; do
    expect_rc 2 "mech --kind file:$dev" $T "$BIN" mech --kind file:$dev --steps 10
    err_has "NUL byte: not a strategy file" "file:$dev: binary refused"
    expect_rc 2 "mech --kind dense --coeffs $dev" $T "$BIN" mech --kind dense --coeffs $dev --steps 10
    expect_rc 2 "mech --kind toeplitz --coeffs $dev" $T "$BIN" mech --kind toeplitz --coeffs $dev --steps 10
    expect_rc 2 "train --data csv:$dev" $T "$BIN" train --data csv:$dev --model logistic --epsilon 1 --quiet
    expect_rc 2 "train --data libsvm:$dev" $T "$BIN" train --data libsvm:$dev --model logistic --epsilon 1 --quiet
    expect_rc 2 "train --mech dense --coeffs $dev" $T "$BIN" train $S --mech dense --coeffs $dev
done
expect_rc 2 "train --data csv:/dev/zero names the line" $T "$BIN" train --data csv:/dev/zero --model logistic --epsilon 1 --quiet
err_has "/dev/zero:1: NUL byte" "csv:/dev/zero: file and line named"
# an endless text line (no NUL, no newline) through a FIFO: the line limit
rm -f "$TMP/fifo"; mkfifo "$TMP/fifo"
( tr '\000' '1' < /dev/zero > "$TMP/fifo" 2>/dev/null & )
expect_rc 2 "endless line in a coefficient file" $T "$BIN" mech --kind toeplitz --coeffs "$TMP/fifo" --steps 10
err_has "line longer than" "the line limit named"
rm -f "$TMP/fifo"; mkfifo "$TMP/fifo"
( tr '\000' '1' < /dev/zero > "$TMP/fifo" 2>/dev/null & )
expect_rc 2 "endless line in a csv file" $T "$BIN" train --data csv:"$TMP/fifo" --model logistic --epsilon 1 --quiet
err_has "line longer than" "the line limit named"

# --- silent acceptance
# bands above n: the run uses at most n bands, and the ledger names the bands that ran
expect_rc 0 "train --bands 1e12" $T "$BIN" train $S --mech bsr --bands 1e12
if grep -q "bands=1000000000000" "$TMP/out" "$TMP/err"; then fail "the ledger names 1e12 bands"; else pass; fi
out_has "BSR \(bands=4\)" "the ledger names the 4 bands that ran"
expect_rc 0 "train --bands = n" $T "$BIN" train $S --mech bsr --bands 4
out_has "BSR \(bands=4\)" "the ledger names the bands that ran"
printf 'y,a,b\n1,0.5,0.25\n0,0.1,0.2\n1,0.3,0.1\n' > "$TMP/d.csv"
expect_rc 2 "data spec limit=0" $T "$BIN" train --data csv:"$TMP/d.csv",limit=0 --model logistic --epsilon 1 --quiet
err_has "limit=0: must be >= 1" "limit=0 named"
C="--data synthetic:logistic,n=80,d=16,test-n=20 --epsilon 1 --batch 20 --lr 0.1 --clip 1 --quiet --seed 1"
expect_rc 2 "cnn spec with a trailing comma" $T "$BIN" train $C --model cnn:conv2k3,relu,flatten,fc2,
err_has "an empty layer \(a stray comma\)" "the trailing comma named"
L="--data synthetic:logistic,n=80,d=4,test-n=20 --model logistic --epsilon 1 --batch 20 --clip 1 --quiet --seed 1"
expect_rc 2 "train --lr 1e308" $T "$BIN" train $L --lr 1e308
err_has -- "--lr: lr x clip = 1e\\+308 overflows" "the overflowing step named"
expect_rc 0 "train --lr 1e3 (large but finite steps)" $T "$BIN" train $L --lr 1e3
touch "$TMP/afile"
expect_rc 2 "--feature-cache on a file" $T "$BIN" train $S --features scatter:J=1,L=2 --feature-cache "$TMP/afile"
err_has -- "--feature-cache: cannot write into .*not a directory" "the unusable cache named"

# --- MPI: a rank given another --seed or --secure is refused by name (rank 0's generator is
# the run's); only where mpirun exists and dpcorr has MPI, each job bounded in time
if command -v mpirun >/dev/null 2>&1 && ldd "$BIN" 2>/dev/null | grep -q libmpi; then
    M="timeout 60 env ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 mpirun --oversubscribe --allow-run-as-root"
    A="train --data synthetic:logistic,n=200,d=4,test-n=20 --model logistic --epsilon 1 --batch 20 --lr 0.1 --clip 1 --quiet"
    expect_rc 2 "mpi: rank 1 with another --seed" $M -np 1 "$BIN" $A --seed 1 : -np 1 "$BIN" $A --seed 2
    err_has "rank 1 has seed 2, rank 0 seed 1" "mpi: the seeds named"
    expect_rc 2 "mpi: rank 1 with --secure" $M -np 1 "$BIN" $A --seed 1 : -np 1 "$BIN" $A --secure
    err_has "rank 1 runs in secure mode, rank 0 in seeded mode" "mpi: the modes named"
else
    skip "mpi checks: no mpirun, or $BIN built without MPI"
fi
summary
