#!/bin/sh
# adversarial.sh — the adversarial families of issue 28 kept as a quick regression (seconds):
# dense strategy and coefficient files at the train entry (memory error, sized from the file),
# special files as outputs (FIFO, link to /dev/null: refused before any work, never replaced),
# output identity (an output onto an input or another output: refused naming both),
# endless and binary inputs (/dev/zero, /dev/urandom, an endless FIFO: a clear error at once;
# a FIFO with no writer: refused within seconds, issue 37),
# silent acceptance (bands above n recorded as run, limit=0, a trailing comma in a cnn spec),
# edited noise state with the checksum recomputed (issue 37: BLT and BSR buffers, a rewound step,
# dp-srgd's noise slabs, dp-ambssgd's and dp-ssgd's last noise row: refused naming the state) and,
# under mpirun, ranks given another --seed or --secure, per-rank options. Every command
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
err_has "--out: (cannot|refusing to) write .*not a regular file" "--out fifo: named"
if [ -p "$TMP/fifo" ] && [ -L "$TMP/null" ]; then pass; else fail "a special file was replaced"; fi

# --- output identity (issue 37): an output onto an input or another output, however spelt (a
# hard link, a symlink, dir/../name), is refused before any work naming both; the input survives
printf 'a,b,y\n1,2,0\n3,4,1\n1,1,0\n2,2,1\n' > "$TMP/in.csv"; cp "$TMP/in.csv" "$TMP/in.copy"
ln "$TMP/in.csv" "$TMP/in.hard"; ln -s "$TMP/in.csv" "$TMP/in.soft"; mkdir "$TMP/d"
ID="--data csv:$TMP/in.csv,label=y,task=classification,classes=2 --model logistic --epsilon 1 --batch 2 --quiet --seed 1"
for out in "--report $TMP/in.hard" "--checkpoint $TMP/in.soft" "--plot $TMP/d/../in.csv"; do
    # shellcheck disable=SC2086
    expect_rc 2 "train $out (the --data file)" $T "$BIN" train $ID $out
    err_has "^dpcorr train: ${out%% *} .* is the same file as --data " "$out: both named"
done
if cmp -s "$TMP/in.csv" "$TMP/in.copy" && [ -L "$TMP/in.soft" ]; then pass; else fail "an input was changed"; fi
# shellcheck disable=SC2086
expect_rc 0 "a checkpoint" $T "$BIN" train $S --checkpoint "$TMP/ck"
# shellcheck disable=SC2086
expect_rc 2 "--resume ck --report ck" $T "$BIN" train $S --resume "$TMP/ck" --report "$TMP/ck"
err_has "--report $TMP/ck is the same file as --resume $TMP/ck" "both named"
# shellcheck disable=SC2086
expect_rc 0 "--resume ck --checkpoint ck (continuing it)" $T "$BIN" train $S --resume "$TMP/ck" --checkpoint "$TMP/ck"

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
err_has "--lr: lr x clip = 1e\\+308 overflows" "the overflowing step named"
expect_rc 0 "train --lr 1e3 (large but finite steps)" $T "$BIN" train $L --lr 1e3
touch "$TMP/afile"
expect_rc 2 "--feature-cache on a file" $T "$BIN" train $S --features scatter:J=1,L=2 --feature-cache "$TMP/afile"
err_has "--feature-cache: cannot write into .*not a directory" "the unusable cache named"

# --- edited noise state with the checksum recomputed (the checksum is not a MAC): the noise
# state is a function of the key and the step, replayed on resume and compared bit for bit.
# ck_edit IN OUT WHERE K OP: WHERE = ftrl (the DP-FTRL file's noise state) or a section name of a
# papers' container; value K edited by OP (ulp, neg, zero, nan, x2, swap, step = the header's
# step rewound by one); FNV-1a 64 recomputed over the edit (perl-base: on every Debian system)
ck_edit() {
    perl -e '
        my ($in, $out, $where, $k, $op) = @ARGV;
        open(my $f, "<:raw", $in) or die; local $/; my $b = <$f>; close $f;
        my $off;
        if ($where eq "ftrl") {
            my $P = unpack("Q<", substr($b, 32, 8)); my $ni = unpack("L<", substr($b, 92, 4));
            $off = 96 + $ni * 220 + 16 * $P + 8;   # items of 220 bytes, params, momentum, L
        } else {
            my $i = index($b, pack("a32", $where)); die "no section $where" if $i < 0;
            $off = $i + 40;
        }
        my $p = $off + 8 * $k; my $v = unpack("d<", substr($b, $p, 8));
        if ($op eq "ulp") { substr($b, $p, 8) = pack("q<", unpack("q<", substr($b, $p, 8)) + 1) }
        elsif ($op eq "neg") { substr($b, $p, 8) = pack("d<", -$v) }
        elsif ($op eq "zero") { substr($b, $p, 8) = pack("d<", 0) }
        elsif ($op eq "nan") { substr($b, $p, 8) = pack("Q<", 0x7ff8000000000000) }
        elsif ($op eq "x2") { substr($b, $p, 8) = pack("d<", 2 * $v) }
        elsif ($op eq "swap") { my $w = substr($b, $p + 8, 8); substr($b, $p + 8, 8) = substr($b, $p, 8); substr($b, $p, 8) = $w }
        elsif ($op eq "step") { substr($b, 24, 8) = pack("Q<", unpack("Q<", substr($b, 24, 8)) - 1) }
        { use integer; my $h = -3750763034362895579;   # 0xcbf29ce484222325
          $h = ($h ^ $_) * 1099511628211 for unpack("C*", substr($b, 0, length($b) - 8));
          substr($b, -8) = pack("q<", $h); }
        open(my $g, ">:raw", $out) or die; print $g $b; close $g;' "$@"
}
for mech in blt bsr; do
    expect_rc 0 "$mech: checkpoint at step 5" $T "$BIN" train $S --epochs 3 --mech $mech --checkpoint "$TMP/n.ck" --checkpoint-every 1 --stop-after 5
    n=0
    for e in "0 ulp" "1 neg" "2 zero" "3 nan" "4 swap" "5 ulp" "6 ulp" "7 neg" "0 x2" "0 step"; do
        # shellcheck disable=SC2086
        ck_edit "$TMP/n.ck" "$TMP/e.ck" ftrl $e
        n=$((n + 1))
        expect_rc 2 "$mech: edited noise state ($e), checksum recomputed" $T "$BIN" train $S --epochs 3 --mech $mech --resume "$TMP/e.ck"
        err_has "^dpcorr train: --resume: .*e.ck: noise_state: coordinate [0-9]+, buffer [0-9]+ at step [0-9]+: the saved noise state has .* its replay from the key gives" "$mech: edit $n refused naming the noise state"
    done
    expect_rc 0 "$mech: the unedited checkpoint resumes" $T "$BIN" train $S --epochs 3 --mech $mech --resume "$TMP/n.ck"
done
SR="--algo dp-srgd --problem p2 --n 3000 --dim 4 --epsilon 1 --quiet --seed 5"
expect_rc 0 "dp-srgd: checkpoint" $T "$BIN" train $SR --checkpoint "$TMP/s.ck" --checkpoint-every 1 --stop-after 5
for e in "21 ulp" "25 zero" "29 neg"; do  # noise_cum, S_hat, xi of coordinate 1 (P = 4)
    # shellcheck disable=SC2086
    ck_edit "$TMP/s.ck" "$TMP/e.ck" srgd.state $e
    expect_rc 2 "dp-srgd: edited noise slab ($e)" $T "$BIN" train $SR --resume "$TMP/e.ck"
    err_has "^dpcorr train( --algo dp-srgd)?: --resume: noise_state: .*e.ck: srgd.state \((noise_cum|S_hat|xi)\) coordinate 1 .* replay of the noise from the key" "dp-srgd: the slab named"
done
expect_rc 0 "dp-srgd: the unedited checkpoint resumes" $T "$BIN" train $SR --resume "$TMP/s.ck"
for algo in dp-ambssgd dp-ssgd; do
    LR="--algo $algo --data synthetic:linreg,n=4000,d=3,alpha=0 --epsilon 1 --quiet --seed 4"
    expect_rc 0 "$algo: checkpoint" $T "$BIN" train $LR --checkpoint "$TMP/l.ck" --checkpoint-every 1 --stop-after 3
    for e in "1 ulp" "0 zero" "2 nan"; do
        # shellcheck disable=SC2086
        ck_edit "$TMP/l.ck" "$TMP/e.ck" linreg.noise $e
        expect_rc 2 "$algo: edited noise row ($e)" $T "$BIN" train $LR --resume "$TMP/e.ck"
        err_has "^dpcorr train( --algo $algo)?: --resume: (noise_state: )?.*e.ck: (linreg.noise is not the noise of step 2 regenerated from the key|non-finite)" "$algo: the row named"
    done
    expect_rc 0 "$algo: the unedited checkpoint resumes" $T "$BIN" train $LR --resume "$TMP/l.ck"
done

# --- MPI: a rank given another --seed or --secure is refused by name (rank 0's generator is
# the run's); only where mpirun exists and dpcorr has MPI, each job bounded in time
if command -v mpirun >/dev/null 2>&1 && ldd "$BIN" 2>/dev/null | grep -q libmpi; then
    M="timeout 60 env ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 mpirun --oversubscribe --allow-run-as-root"
    A="train --data synthetic:logistic,n=200,d=4,test-n=20 --model logistic --epsilon 1 --batch 20 --lr 0.1 --clip 1 --quiet"
    expect_rc 2 "mpi: rank 1 with another --seed" $M -np 1 "$BIN" $A --seed 1 : -np 1 "$BIN" $A --seed 2
    err_has "--seed: rank 1 has '2', rank 0 '1'" "mpi: the seeds named"
    expect_rc 2 "mpi: rank 1 with --secure" $M -np 1 "$BIN" $A --seed 1 : -np 1 "$BIN" $A --secure
    err_has "--(seed|secure): rank 1 has" "mpi: the modes named"
    # an edited noise value in rank 1's shard (the last coordinate): rank 1's replay refuses it
    expect_rc 0 "mpi: checkpoint at step 5" $T "$BIN" train $S --epochs 3 --mech blt --checkpoint "$TMP/m.ck" --checkpoint-every 1 --stop-after 5
    L=$(perl -e 'open(my $f, "<:raw", $ARGV[0]) or die; local $/; my $b = <$f>; my $P = unpack("Q<", substr($b, 32, 8)); my $ni = unpack("L<", substr($b, 92, 4)); print unpack("Q<", substr($b, 96 + $ni * 220 + 16 * $P, 8))' "$TMP/m.ck")
    ck_edit "$TMP/m.ck" "$TMP/e.ck" ftrl $((L - 1)) neg
    expect_rc 2 "mpi: edited noise state in rank 1's shard" $M -np 2 "$BIN" train $S --epochs 3 --mech blt --resume "$TMP/e.ck"
    err_has "rank 1: .*e.ck: noise_state: coordinate [0-9]+, buffer 1 at step 5" "mpi: rank 1's refusal reaches rank 0"
    # per-rank options (issue 37): compared before any exchange, named with both values
    expect_rc 2 "mpi: --checkpoint on rank 1 only" $M -np 1 "$BIN" $A : -np 1 "$BIN" $A --checkpoint "$TMP/mck"
    err_has "--checkpoint: rank 1 has '.*mck', rank 0 \(not given\)" "mpi: --checkpoint named"
    expect_rc 2 "mpi: DPCORR_MPI_TIMEOUT=5s" env DPCORR_MPI_TIMEOUT=5s $M -np 2 "$BIN" $A
    err_has "DPCORR_MPI_TIMEOUT=5s: must be a number" "mpi: the timeout variable named"
else
    skip "mpi checks: no mpirun, or $BIN built without MPI"
fi

# --- FIFOs without a writer as inputs (issue 37: blocked forever in open(2)): refused naming
# the file within seconds
rm -f "$TMP/fifo"; mkfifo "$TMP/fifo"
expect_rc 2 "FIFO as --data" timeout 10 "$BIN" train --data "csv:$TMP/fifo" --model linear --epsilon 1
err_has -- "--data: .*fifo: is a FIFO" "FIFO as --data named"
expect_rc 2 "FIFO as --coeffs" timeout 10 "$BIN" mech --kind toeplitz --steps 10 --coeffs "$TMP/fifo"
err_has -- "--coeffs: .*fifo: is a FIFO" "FIFO as --coeffs named"
expect_rc 2 "FIFO as a strategy file" timeout 10 "$BIN" mech --kind "file:$TMP/fifo"
err_has -- "--kind: .*fifo: is a FIFO" "FIFO as a strategy file named"
expect_rc 2 "FIFO as --resume" timeout 10 "$BIN" train --data synthetic:logistic,n=200,d=4 --model logistic --epsilon 1 --resume "$TMP/fifo" --checkpoint "$TMP/ck"
err_has -- "--resume: .*fifo: is a FIFO \(named pipe\), not a regular file" "FIFO as --resume named"
summary
