#!/bin/sh
# End-to-end tests of `dpcorr mech optimize` and of strategy files used as --kind file:PATH.
# $1 = path to the dpcorr binary.
BIN=${1:-build/dpcorr}
. "$(dirname "$0")/common.inc"
# first_num KEY: the first numeric value of "KEY": in $TMP/out (json_num takes the last one)
first_num() { grep -o "\"$1\": [-0-9.eE+]*" "$TMP/out" | head -n 1 | sed 's/.*: //'; }

expect_rc 0 "help" "$BIN" mech optimize --help
for opt in --kind --steps --participations --min-sep --objective --bands --buffers --max-buffers \
           --momentum --decay --iterations --out --json; do
    out_has "^ *$opt" "help line for $opt"
done
expect_rc 0 "mech help mentions optimize" "$BIN" mech --help
out_has "mech optimize" "mech --help points to optimize"
out_has "file:PATH" "mech --help documents file:PATH"

# BLT, n = 10000, max error: ratio sqrt(loss)/(1+ln n/pi) <= 1.05; the file reproduces the loss
expect_rc 0 "blt optimize" "$BIN" mech optimize --kind blt --steps 10000 --out "$TMP/blt.json" --json
for k in loss sensitivity error buffers iterations seconds baselines; do out_has "\"$k\":" "json key $k"; done
loss=$(first_num loss)
num_near "$(awk -v l="$loss" 'BEGIN { r = sqrt(l) / (1 + log(10000) / 3.141592653589793); print (r <= 1.05) }')" 1 0 "BLT ratio <= 1.05 (loss $loss)"
out_has '"name": "optimal CC \(nu=0\)"' "compares with optimal CC"
out_has '"name": "nu-DP-FTRL \(best nu=' "compares with the best nu-DP-FTRL"
out_has '"name": "BSR' "compares with BSR"
out_has '"name": "DP-SGD' "compares with DP-SGD"
[ -s "$TMP/blt.json" ] && pass || fail "strategy file written"
expect_rc 0 "mech file:" "$BIN" mech --kind file:"$TMP/blt.json" --json
out_has '"kind": "blt"' "file loads as blt"
s=$(json_num sensitivity); e=$(json_num max_error)
num_near "$(awk -v s="$s" -v e="$e" 'BEGIN { printf "%.10g", s * s * e * e }')" "$loss" "$(awk -v l="$loss" 'BEGIN { print l * 1e-8 }')" "mech on the file reproduces the loss"
expect_rc 0 "mech file: other n" "$BIN" mech --kind file:"$TMP/blt.json" --steps 500
out_has "^steps +500" "anytime BLT at another n"

# banded Toeplitz, k = 4: loaded file with the same participation reproduces the mean loss
expect_rc 0 "banded optimize" "$BIN" mech optimize --kind banded --bands 16 --steps 1000 \
    --participations 4 --min-sep 250 --objective mean --out "$TMP/band.json" --json
loss=$(first_num loss)
out_has '"bands": 16' "16 bands"
expect_rc 0 "mech banded file" "$BIN" mech --kind file:"$TMP/band.json" --participations 4 --min-sep 250 --json
s=$(json_num sensitivity); e=$(json_num rmse)
num_near "$(awk -v s="$s" -v e="$e" 'BEGIN { printf "%.10g", s * s * e * e }')" "$loss" "$(awk -v l="$loss" 'BEGIN { print l * 1e-8 }')" "banded loss reproduced"
out_has '"sensitivity_exact": true' "exact min-sep sensitivity"

# dense ME, n = 64, text output; beats optimal CC
expect_rc 0 "dense optimize" "$BIN" mech optimize --kind dense --steps 64 --objective mean --out "$TMP/me.json"
out_has "^loss " "text output has the loss"
out_has "^time " "text output has the time"
out_has "optimal CC \(nu=0\) +[0-9.e+]+ +1\.[0-9]+" "ME beats optimal CC (ratio > 1)"
expect_rc 0 "mech dense file" "$BIN" mech --kind file:"$TMP/me.json" --json
out_has '"anytime": false' "dense is not anytime"
expect_rc 2 "dense file, other n" "$BIN" mech --kind file:"$TMP/me.json" --steps 10
err_has "n = 64" "names the file's n"

# momentum workload
expect_rc 0 "blt momentum" "$BIN" mech optimize --kind blt --steps 2000 --momentum 0.9 --buffers 2 --out "$TMP/m.json" --json
out_has '"momentum": 0.9' "momentum recorded"
out_has '"buffers": 2' "fixed buffers"

# errors: exit 2, message naming the option / file:line
expect_rc 2 "no kind" "$BIN" mech optimize --steps 10 --out "$TMP/x.json";           err_has -- "--kind" "names --kind"
expect_rc 2 "bad kind" "$BIN" mech optimize --kind tree --steps 10 --out "$TMP/x.json"; err_has "tree" "names the kind"
expect_rc 2 "no out" "$BIN" mech optimize --kind blt --steps 10;                      err_has -- "--out" "names --out"
expect_rc 2 "no steps" "$BIN" mech optimize --kind blt --out "$TMP/x.json";           err_has -- "--steps" "names --steps"
expect_rc 2 "banded without bands" "$BIN" mech optimize --kind banded --steps 10 --out "$TMP/x.json"; err_has -- "--bands" "names --bands"
expect_rc 2 "dense too big" "$BIN" mech optimize --kind dense --steps 5000 --out "$TMP/x.json"; err_has -- "--steps" "names --steps"
expect_rc 2 "bad objective" "$BIN" mech optimize --kind blt --steps 10 --objective median --out "$TMP/x.json"; err_has -- "--objective" "names --objective"
expect_rc 2 "bad momentum" "$BIN" mech optimize --kind blt --steps 10 --momentum 2 --out "$TMP/x.json"; err_has "momentum" "names momentum"
expect_rc 2 "unknown option" "$BIN" mech optimize --kind blt --steps 10 --frob 1 --out "$TMP/x.json"; err_has -- "--frob" "names it"
expect_rc 2 "unwritable out (refused before any work)" "$BIN" mech optimize --kind blt --steps 100 --out /nonexistent-dir/x.json; err_has -- "--out: cannot write /nonexistent-dir" "names the option and the path"
expect_rc 2 "missing file" "$BIN" mech --kind file:"$TMP/none.json";                 err_has "none.json" "names the file"
printf '{"format": "dpcorr-strategy", "version": 1,\n"kind": "blt", "steps": 10,\n"theta": [0.5], "omega": [0.1, "x"]}\n' > "$TMP/bad.json"
expect_rc 2 "malformed file" "$BIN" mech --kind file:"$TMP/bad.json";                err_has "bad.json:3" "names file:line"
err_has "omega" "names the field"
expect_rc 2 "file plus theta" "$BIN" mech --kind file:"$TMP/blt.json" --theta 0.5 --omega 0.1; err_has -- "--theta: not used by this configuration" "the file supplies the parameters"

summary
