#!/bin/sh
# End-to-end tests of `dpcorr mech` and `dpcorr compare`. $1 = path to the dpcorr binary.
BIN=${1:-build/dpcorr}
. "$(dirname "$0")/common.inc"

expect_rc 0 "help" "$BIN" mech --help
for opt in --kind --steps --nu --lambda --bands --momentum --decay --honaker --theta --omega \
           --coeffs --of --participations --min-sep --cyclic --json --workload-momentum --dry-run; do
    out_has "^ *$opt" "help line for $opt"
done

expect_rc 0 "nu json" "$BIN" mech --kind nu --nu 0.1 --steps 1000 --json
for k in kind steps sensitivity rmse max_error scaled_rmse scaled_max_error state_floats_per_coord anytime; do
    out_has "\"$k\":" "json key $k"
done
num_near "$(json_num gamma_inf)" 1.2049243 1e-6 "gamma_inf at nu=0.1 (sqrt 1.4518427)"
out_has '"anytime": true' "nu is anytime"

expect_rc 0 "nu=0 n=1000" "$BIN" mech --kind nu --nu 0 --steps 1000 --json
s=$(json_num sensitivity)
num_near "$(awk -v s="$s" 'BEGIN{print s*s}')" 3.2650 1e-4 "nu=0 n=1000 sensitivity^2"

expect_rc 0 "multi participation" "$BIN" mech --kind nu --nu 0.01 --steps 2000 --participations 4 --min-sep 500 --json
out_has '"sensitivity_exact": true' "exact Toeplitz min-sep"

expect_rc 0 "identity k=4" "$BIN" mech --kind identity --steps 100 --participations 4 --min-sep 10 --json
num_near "$(json_num sensitivity)" 2 1e-12 "identity k=4 sensitivity = 2"

expect_rc 0 "tree honaker text" "$BIN" mech --kind tree --honaker --steps 1024
out_has "sensitivity +3.31662" "tree sensitivity sqrt(11)"

printf '1\n-0.5\n# comment\n-0.125\n' > "$TMP/b.txt"
expect_rc 0 "toeplitz file" "$BIN" mech --kind toeplitz --coeffs "$TMP/b.txt" --steps 50 --json
printf '1 0\n0.5 1\n' > "$TMP/d.txt"
expect_rc 0 "dense file" "$BIN" mech --kind dense --coeffs "$TMP/d.txt" --of strategy --steps 2 --json
out_has '"anytime": false' "dense is not anytime"
expect_rc 0 "blt" "$BIN" mech --kind blt --theta 0.9,0.5 --omega 0.3,0.1 --steps 100 --json
num_near "$(json_num state_floats_per_coord)" 2 0 "blt state = buffers"

# bad values: exit 2 and a message naming the option
expect_rc 2 "nu out of range" "$BIN" mech --kind nu --nu 1.5 --steps 10;  err_has -- "--nu" "names --nu"
expect_rc 2 "nu not a number" "$BIN" mech --kind nu --nu abc --steps 10;  err_has -- "--nu: expected" "names --nu"
expect_rc 2 "missing steps" "$BIN" mech --kind nu;                        err_has -- "--steps" "names --steps"
expect_rc 2 "unknown kind" "$BIN" mech --kind bogus --steps 10;           err_has "bogus" "names the kind"
expect_rc 2 "unknown option" "$BIN" mech --frobnicate 3 --steps 10;       err_has -- "--frobnicate" "names it"
expect_rc 2 "theta/omega mismatch" "$BIN" mech --kind blt --theta 0.9,0.5 --omega 0.3 --steps 10; err_has -- "--omega" "names --omega"
expect_rc 2 "missing file" "$BIN" mech --kind toeplitz --coeffs "$TMP/none.txt" --steps 10; err_has "none.txt" "names the file"
printf '1\nabc\n' > "$TMP/bad.txt"
expect_rc 2 "bad file" "$BIN" mech --kind toeplitz --coeffs "$TMP/bad.txt" --steps 10; err_has "bad.txt:2" "names file:line"
expect_rc 2 "zero participations" "$BIN" mech --steps 10 --participations 0; err_has -- "--participations" "names it"
expect_rc 2 "negative steps" "$BIN" mech --steps -5;                      err_has -- "--steps" "names it"
expect_rc 2 "missing value" "$BIN" mech --steps;                          err_has -- "--steps: missing" "names it"

expect_rc 0 "compare" "$BIN" compare --steps 500
out_has "nu-DP-FTRL" "compare lists nu"
out_has "tree \\(Honaker\\)" "compare lists Honaker"
out_has "k = 4 participations" "compare has the multi-participation table"
# issue 36: BSR, BISR and BLT as the library makes them for the run's n, k and b (what train
# gets): the default bands max(b, 16), and the default BLT (the optimizer's max-error BLT for the
# same shape), not a grid of bands nor a BLT published for n = 1e5
expect_rc 0 "compare 600/5/120" "$BIN" compare --steps 600 --participations 5 --min-sep 120
sed -n '/k = 5 participations/,$p' "$TMP/out" > "$TMP/multi"
if grep -q "^BSR (bands=120) " "$TMP/multi" && grep -q "^BISR (bands=120) " "$TMP/multi"; then pass
else fail "compare: BSR/BISR at the default bands 120: $(grep -E '^BI?SR' "$TMP/multi")"; fi
blt=$(awk '$1 == "BLT" { print $7 }' "$TMP/multi")
expect_rc 0 "optimize the same BLT" "$BIN" mech optimize --kind blt --steps 600 --participations 5 \
    --min-sep 120 --objective max --out "$TMP/blt600.json"
expect_rc 0 "that BLT" "$BIN" mech --kind "file:$TMP/blt600.json" --steps 600 --participations 5 --min-sep 120
num_near "$blt" "$(sed -n 's/^scaled rmse *\([0-9.e+-]*\).*/\1/p' "$TMP/out")" 0.001 \
    "compare's BLT row is the default BLT for n = 600, k = 5, b = 120"
expect_rc 2 "compare bad" "$BIN" compare --steps x

# C has at most n bands: --bands above n runs, and is named, as the n bands that run (issue 28)
expect_rc 0 "bsr bands above n" "$BIN" mech --kind bsr --bands 1e12 --steps 16
out_has "BSR \(bands=16\)" "bsr bands above n: the bands that run are named"
summary
