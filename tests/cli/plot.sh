#!/bin/sh
# plot.sh — `--plot` writes its PNG safely (tools/plot.c): a run without a test set plots (the
# test panel omitted); no side file is left unless DPCORR_PLOT_KEEP_DATA asks for the data and
# script (which then re-make the PNG); a failed write (a file size limit standing in for a full
# disk, gnuplot failing or writing half a PNG) exits non-zero and leaves the previous PNG as it
# was, with no temporary directory left; a symbolic link is written through, never replaced;
# without gnuplot the data and script are the output and the exit is non-zero.
# Usage: sh tests/cli/plot.sh build/dpcorr
. "$(dirname "$0")/common.inc"
BIN=${1:-build/dpcorr}
case $BIN in /*) ;; *) BIN=$(pwd)/$BIN ;; esac

is_png() { # file name: a whole PNG (signature first, IEND last)
    if [ "$(head -c 8 "$1" 2>/dev/null | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] &&
       [ "$(tail -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = "49454e44ae426082" ]; then pass
    else fail "$2: $1 is not a whole PNG"; fi
}
# no_litter DIR name: nothing but the PNGs (and what the test put there) in DIR
no_litter() {
    left=$(ls -A "$1" | grep -E '\.(dat|gp|gnuplot\.log)$|^\.dpcorr-plot' | tr '\n' ' ')
    if [ -z "$left" ]; then pass; else fail "$2: left $left"; fi
}
RUN="--model logistic --epochs 3 --batch 60 --lr 0.5 --clip 1 --epsilon 2 --delta 1e-5 --quiet --seed 1"
TESTED="--data synthetic:logistic,n=1200,d=6,test-n=200 $RUN"
UNTESTED="--data synthetic:logistic,n=1200,d=6,test-n=0 $RUN"

# gnuplot missing: the data and script are kept as the only output, the exit says no PNG
mkdir "$TMP/nognu" "$TMP/ng"
expect_rc 1 "no gnuplot" env PATH="$TMP/nognu" "$BIN" train $TESTED --plot "$TMP/ng/p.png"
err_has "gnuplot not found" "says gnuplot is missing"
[ -s "$TMP/ng/p.dat" ] && [ -s "$TMP/ng/p.gp" ] && [ ! -e "$TMP/ng/p.png" ] && pass ||
    fail "no gnuplot: data and script kept, no PNG"

# a fake gnuplot that fails, and one that exits 0 after half a PNG: the old PNG stays
mkdir "$TMP/fake1" "$TMP/fake2" "$TMP/fk"
printf '#!/bin/sh\necho "line 3: some error" >&2\nexit 1\n' >"$TMP/fake1/gnuplot"
printf '#!/bin/sh\nf=$(sed -n "s/^set output .\\(.*\\).$/\\1/p" "$1")\nprintf "\\211PNG\\r\\n\\032\\nhalf" >"$f"\n' \
    >"$TMP/fake2/gnuplot"
chmod +x "$TMP/fake1/gnuplot" "$TMP/fake2/gnuplot"
printf 'previous plot' >"$TMP/fk/p.png"
expect_rc 1 "gnuplot fails" env PATH="$TMP/fake1:$PATH" "$BIN" train $TESTED --plot "$TMP/fk/p.png"
err_has "gnuplot failed \(exit 1\): line 3: some error" "gives gnuplot's error"
[ "$(cat "$TMP/fk/p.png")" = "previous plot" ] && pass || fail "gnuplot fails: old PNG replaced"
expect_rc 1 "half a PNG" env PATH="$TMP/fake2:$PATH" "$BIN" train $TESTED --plot "$TMP/fk/p.png"
err_has "incomplete" "says the PNG is incomplete"
[ "$(cat "$TMP/fk/p.png")" = "previous plot" ] && pass || fail "half a PNG: old PNG replaced"
no_litter "$TMP/fk" "failed gnuplot"

if ! command -v gnuplot >/dev/null 2>&1; then
    echo "note: gnuplot missing: the PNG checks below did not run (not counted as passes)"
    summary; exit
fi

# a run without a test set: the PNG is made (the test panel omitted), nothing else is left
mkdir "$TMP/p"
expect_rc 0 "plot without a test set" "$BIN" train $UNTESTED --plot "$TMP/p/untested.png"
is_png "$TMP/p/untested.png" "without a test set"
expect_rc 0 "plot with a test set" "$BIN" train $TESTED --plot "$TMP/p/tested.png"
is_png "$TMP/p/tested.png" "with a test set"
no_litter "$TMP/p" "--plot"

# the side files on request: the script re-makes the PNG in its directory
mkdir "$TMP/k"
expect_rc 0 "keep data" env DPCORR_PLOT_KEEP_DATA=1 "$BIN" train $TESTED --plot "$TMP/k/kept.png"
[ -s "$TMP/k/kept.dat" ] && [ -s "$TMP/k/kept.gp" ] && pass || fail "DPCORR_PLOT_KEEP_DATA keeps kept.dat and kept.gp"
rm -f "$TMP/k/kept.png"
(cd "$TMP/k" && gnuplot kept.gp) 2>"$TMP/err" && pass || fail "the kept script runs: $(head -c 200 "$TMP/err")"
is_png "$TMP/k/kept.png" "the kept script's PNG"

# a file size limit (a full disk): every stage fails with a non-zero exit, the old PNG stays
cp "$TMP/p/tested.png" "$TMP/old.png"
mkdir "$TMP/f"
for blocks in 0 1 6 20; do # no data / data but no script / the PNG cut short (512 B blocks)
    cp "$TMP/old.png" "$TMP/f/p.png"
    # stderr through a pipe: a file would be cut by the limit too
    (trap '' XFSZ; ulimit -f $blocks; "$BIN" train $TESTED --plot "$TMP/f/p.png" 2>&1 >/dev/null
     echo "exit $?") | cat >"$TMP/err"
    grep -Eq "^exit [1-9]" "$TMP/err" && pass || fail "size limit $blocks blocks: exit not 1..9: $(tail -n 1 "$TMP/err")"
    err_has "left as it was" "size limit $blocks blocks: says the old PNG stays"
    cmp -s "$TMP/old.png" "$TMP/f/p.png" && pass || fail "size limit $blocks blocks: old PNG changed"
done
no_litter "$TMP/f" "size limits"

# symbolic links: written through (the link stays a link)
mkdir "$TMP/s" "$TMP/s/real"
printf 'previous plot' >"$TMP/s/real/a.png"
ln -s real/a.png "$TMP/s/link.png"
ln -s link.png "$TMP/s/link2.png"
ln -s real/new.png "$TMP/s/dangling.png"
expect_rc 0 "plot through a link chain" "$BIN" train $TESTED --plot "$TMP/s/link2.png"
[ -L "$TMP/s/link2.png" ] && [ -L "$TMP/s/link.png" ] && pass || fail "the links were replaced"
is_png "$TMP/s/real/a.png" "the file the links name"
# a dangling link is refused before any work, as for every output (doc/reliability.md, "Outputs")
expect_rc 2 "plot through a dangling link: refused up front" "$BIN" train $TESTED --plot "$TMP/s/dangling.png"
err_has "--plot: .*dangling" "the dangling --plot link named"
[ -L "$TMP/s/dangling.png" ] && [ ! -e "$TMP/s/real/new.png" ] && pass || fail "the dangling link was replaced or written"
no_litter "$TMP/s" "links"
no_litter "$TMP/s/real" "links' directory"

summary
