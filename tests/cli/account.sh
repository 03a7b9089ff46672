#!/bin/sh
# End-to-end tests of `dpcorr account`. $1 = path to the dpcorr binary.
BIN=${1:-build/dpcorr}
. "$(dirname "$0")/common.inc"

# --help lists the modes; each mode's --help documents its options
expect_rc 0 "help" "$BIN" account --help
for m in epsilon delta sigma steps convert; do out_has "^  $m " "help describes mode $m"; done
expect_rc 0 "epsilon help" "$BIN" account epsilon --help
for opt in --accountant --sigma --q --steps --delta --sampling --neighbor --sensitivity \
           --orders --refine --interval --disc --conversion --json --help \
           --mech --participations --min-sep --cyclic; do
    out_has "^ *$opt" "help line for $opt"
done
expect_rc 0 "steps help" "$BIN" account steps --help
out_has "^ *--max-steps" "help line for --max-steps"
expect_rc 0 "convert help" "$BIN" account convert --help
for opt in --rho --mu --accountant --conversion; do out_has "^ *$opt" "convert help line for $opt"; done

# published values
expect_rc 0 "pld eps" "$BIN" account epsilon --accountant pld --sigma 3 --q 0.1 --steps 512 --delta 1e-6 --json
for k in epsilon delta sigma steps accountant; do out_has "\"$k\":" "json key $k"; done
out_has '"accountant": "pld"' "accountant echoed"
num_near "$(json_num epsilon)" 3.77 0.005 "jax_privacy: eps 3.77 (PLD)"
num_near "$(json_num steps)" 512 0 "steps echoed"

expect_rc 0 "pld sigma" "$BIN" account sigma --accountant pld --interval 5e-4 --q 0.1 --steps 512 --delta 1e-6 --epsilon 1 --json
num_near "$(json_num sigma)" 9.66 0.005 "jax_privacy: sigma 9.66"
e=$(json_num epsilon)
num_near "$e" 1 5e-5 "calibrated sigma meets eps 1 (PLD: within 5e-5)"

expect_rc 0 "pld steps" "$BIN" account steps --accountant pld --interval 5e-4 --sigma 3 --q 0.1 --delta 1e-6 --epsilon 2 --json
num_near "$(json_num steps)" 155 0 "jax_privacy: 155 steps"

expect_rc 0 "rdp opacus" "$BIN" account epsilon --accountant rdp --orders 2,5,10,20,100 --sigma 1 --q 0.01 --steps 300 --delta 1e-5 --json
out_has '"order":' "json key order for rdp"
num_near "$(json_num epsilon)" 2.39 0.005 "Opacus: eps 2.39"
num_near "$(json_num order)" 5 0 "at order 5"

rho=$(awk 'BEGIN { s = 4.530877117; printf "%.17g", 1 / (2 * s * s) }')
expect_rc 0 "zcdp convert" "$BIN" account convert --rho "$rho" --delta 1e-6 --json
num_near "$(json_num epsilon)" 1 1e-8 "dp_accounting: sigma 4.530877117 is (1, 1e-6)"
expect_rc 0 "rdp refine" "$BIN" account epsilon --accountant rdp --sigma 4.530877117 --steps 1 --delta 1e-6 --refine --json
num_near "$(json_num epsilon)" 1 1e-8 "the same through RDP with a refined order"
expect_rc 0 "rdp refine delta" "$BIN" account delta --accountant rdp --sigma 4.530877117 --steps 1 --epsilon 1 --refine --json
num_near "$(json_num delta)" 0.000001 1e-14 "and delta(1) = 1e-6"

# round trips and conversions
expect_rc 0 "delta mode" "$BIN" account delta --accountant rdp --sigma 1.1 --q 0.02 --steps 1000 --epsilon 2 --json
d=$(json_num delta)
expect_rc 0 "eps at that delta" "$BIN" account epsilon --accountant rdp --sigma 1.1 --q 0.02 --steps 1000 --delta "$d" --json
num_near "$(json_num epsilon)" 2 1e-6 "delta(eps) then eps(delta)"
expect_rc 0 "gdp convert" "$BIN" account convert --accountant gdp --epsilon 1 --delta 1e-6 --json
num_near "$(json_num mu)" 0.23670438 1e-7 "GDP mu for (1, 1e-6)"
expect_rc 0 "gdp eps" "$BIN" account epsilon --accountant gdp --sigma 4.224678889 --steps 1 --delta 1e-6 --json
num_near "$(json_num epsilon)" 1 1e-6 "sigma = 1/mu is (1, 1e-6)"
expect_rc 0 "text output" "$BIN" account epsilon --accountant zcdp --sigma 2 --steps 10 --delta 1e-5
out_has "^epsilon +[0-9]" "text has epsilon"
out_has "^rho +1.25" "text has rho = 10/(2*4)"

# mechanisms: --sigma is the noise multiplier z (noise std per row of Z = z clip colnorm(C));
# the whole run is one Gaussian with multiplier run_sigma = z colnorm / sens: rho = 1/(2 run_sigma^2);
# amplified banded MF = DP-SGD with ceil(n/b) rounds and multiplier z
expect_rc 0 "mech zcdp" "$BIN" account epsilon --mech nu --nu 0.05 --steps 1000 --participations 4 --min-sep 250 --sigma 2 --delta 1e-6 --accountant zcdp --json
out_has '"mech": "nu"' "json names the mechanism"
e1=$(json_num epsilon)
rs=$(json_num run_sigma)
num_near "$(awk -v z=2 -v c="$(json_num column_norm)" -v s="$(json_num sensitivity)" 'BEGIN { printf "%.17g", z * c / s }')" "$rs" 1e-12 "run_sigma = z colnorm / sens"
num_near "$(json_num noise_std_per_unit_clip)" "$(awk -v c="$(json_num column_norm)" 'BEGIN { printf "%.17g", 2 * c }')" 1e-12 "noise std = z colnorm"
rho=$(awk -v r="$rs" 'BEGIN { printf "%.17g", 1 / (2 * r * r) }')
expect_rc 0 "rho of the run" "$BIN" account convert --rho "$rho" --delta 1e-6 --json
num_near "$e1" "$(json_num epsilon)" 1e-9 "mechanism run is rho = 1/(2 run_sigma^2)"
# without sampling the default is GDP (exact: one Gaussian with mu = 1/sigma), as in the trainer;
# the PLD accountant is an independent numerical route to the same number
expect_rc 0 "mech default gdp" "$BIN" account epsilon --mech nu --nu 0.05 --steps 1000 --participations 4 --min-sep 250 --sigma 2 --delta 1e-6 --json
out_has '"accountant": "gdp"' "default accountant for an unamplified mechanism is gdp"
e3=$(json_num epsilon)
mu=$(awk -v r="$rs" 'BEGIN { printf "%.17g", 1 / r }')
expect_rc 0 "mu of the run" "$BIN" account convert --accountant gdp --mu "$mu" --delta 1e-6 --json
num_near "$e3" "$(json_num epsilon)" 1e-9 "mechanism run is 1/run_sigma-GDP"
expect_rc 0 "mech pld" "$BIN" account epsilon --mech nu --nu 0.05 --steps 1000 --participations 4 --min-sep 250 --sigma 2 --delta 1e-6 --accountant pld --json
num_near "$e3" "$(json_num epsilon)" 1e-5 "PLD agrees with exact GDP"
expect_rc 0 "mech amplified" "$BIN" account epsilon --mech bsr --bands 4 --steps 64 --participations 16 --min-sep 4 --cyclic --q 0.05 --sigma 1.25 --delta 1e-6 --json
out_has '"amplified": true' "amplified"
num_near "$(json_num rounds)" 16 0 "16 rounds"
e2=$(json_num epsilon)
expect_rc 0 "dp-sgd equivalent" "$BIN" account epsilon --sigma 1.25 --q 0.05 --steps 16 --delta 1e-6 --json
num_near "$e2" "$(json_num epsilon)" 1e-12 "amplified BSR = DP-SGD (the same z, 16 steps)"
expect_rc 0 "mech sigma" "$BIN" account sigma --mech bsr --bands 4 --steps 64 --participations 16 --min-sep 4 --cyclic --q 0.05 --delta 1e-6 --epsilon 2 --json
num_near "$(json_num epsilon)" 2 1e-4 "calibrated mechanism meets eps 2 (PLD, the default: within 5e-5 relative)"
out_has '"accountant": "pld"' "account and train share the default accountant (pld)"

# bad values: exit 2 and a message naming the option
expect_rc 2 "delta 1.5" "$BIN" account epsilon --sigma 1 --steps 10 --delta 1.5;   err_has -- "--delta" "names --delta"
expect_rc 2 "sigma negative" "$BIN" account epsilon --sigma -1 --steps 10 --delta 1e-5; err_has -- "--sigma" "names --sigma"
expect_rc 2 "sigma text" "$BIN" account epsilon --sigma abc --steps 10 --delta 1e-5; err_has -- "--sigma: expected" "names --sigma"
expect_rc 2 "q 2" "$BIN" account epsilon --sigma 1 --steps 10 --delta 1e-5 --q 2;   err_has -- "--q" "names --q"
expect_rc 2 "steps 0" "$BIN" account epsilon --sigma 1 --steps 0 --delta 1e-5;       err_has -- "--steps" "names --steps"
expect_rc 2 "epsilon negative" "$BIN" account delta --sigma 1 --steps 10 --epsilon -1; err_has -- "--epsilon" "names --epsilon"
expect_rc 2 "missing sigma" "$BIN" account epsilon --steps 10 --delta 1e-5;          err_has -- "--sigma: required" "names --sigma"
expect_rc 2 "missing value" "$BIN" account epsilon --sigma;                          err_has -- "--sigma: missing" "names --sigma"
expect_rc 2 "bad accountant" "$BIN" account epsilon --sigma 1 --steps 10 --delta 1e-5 --accountant foo; err_has -- "--accountant" "names --accountant"
expect_rc 2 "bad neighbor" "$BIN" account epsilon --sigma 1 --steps 10 --delta 1e-5 --neighbor x; err_has -- "--neighbor" "names --neighbor"
expect_rc 2 "bad orders" "$BIN" account epsilon --sigma 1 --steps 10 --delta 1e-5 --orders 0.5,2; err_has -- "--orders" "names --orders"
expect_rc 2 "bad interval" "$BIN" account epsilon --accountant pld --sigma 1 --steps 10 --delta 1e-5 --interval 0; err_has -- "--interval" "names --interval"
expect_rc 2 "bad disc" "$BIN" account epsilon --accountant pld --sigma 1 --steps 10 --delta 1e-5 --disc up; err_has -- "--disc" "names --disc"
expect_rc 2 "zcdp with q" "$BIN" account epsilon --accountant zcdp --sigma 1 --steps 10 --delta 1e-5 --q 0.1; err_has -- "--q" "names --q"
expect_rc 2 "replace-one poisson" "$BIN" account epsilon --sigma 1 --steps 10 --delta 1e-5 --q 0.1 --neighbor replace-one; err_has -- "--neighbor" "names --neighbor"
expect_rc 2 "impossible" "$BIN" account steps --accountant gdp --sigma 0.1 --epsilon 0.1 --delta 1e-6; err_has -- "--epsilon" "names --epsilon"
expect_rc 2 "mech option without mech" "$BIN" account epsilon --sigma 1 --steps 10 --delta 1e-5 --nu 0.1; err_has -- "--nu" "names --nu"
expect_rc 2 "bad mech value" "$BIN" account epsilon --mech nu --nu 2 --steps 10 --sigma 1 --delta 1e-5; err_has -- "--nu" "names --nu"
expect_rc 2 "unknown mech" "$BIN" account epsilon --mech bogus --steps 10 --sigma 1 --delta 1e-5; err_has "bogus" "names the kind"
expect_rc 2 "bad q with mech" "$BIN" account epsilon --mech nu --nu 0.1 --steps 10 --sigma 1 --delta 1e-5 --q 1.5; err_has -- "--q" "names --q"
# any strategy under sampling: the best valid route (a not-banded-enough strategy under cyclic
# Poisson: the whole-run Gaussian; Poisson at every step: MMCC when it beats the whole run)
expect_rc 0 "not banded: whole run" "$BIN" account epsilon --mech nu --nu 0.1 --steps 10 --sigma 1 --delta 1e-5 --q 0.1 --cyclic --min-sep 2 --json
out_has '"route": "whole-run"' "route whole-run"
expect_rc 0 "nu + poisson: mmcc" "$BIN" account epsilon --accountant pld --mech nu --nu 0.1 --steps 64 --sigma 7.3 --delta 1e-5 --q 0.02 --json
out_has '"route": "mmcc"' "route mmcc"
out_has '"participations": 64, "min_sep": 1' "Poisson at every step: the pattern of the run"
# Poisson at every step leaves the participation options nothing to say (--cyclic does)
expect_rc 2 "participations unused under poisson" "$BIN" account epsilon --mech nu --nu 0.1 --steps 64 --sigma 7.3 --delta 1e-5 --q 0.02 --participations 4
err_has -- "--participations: not used by this configuration" "names --participations"
expect_rc 2 "min-sep unused under poisson" "$BIN" account sigma --mech bsr --bands 4 --steps 64 --epsilon 2 --delta 1e-5 --q 0.02 --min-sep 4
err_has -- "--min-sep: not used" "names --min-sep"
expect_rc 0 "cyclic makes them used" "$BIN" account sigma --mech bsr --bands 4 --steps 64 --epsilon 2 --delta 1e-5 --q 0.1 --participations 16 --min-sep 4 --cyclic --json
out_has '"route": "bandmf"' "cyclic Poisson with bands: amplified banded MF"
# balls-in-bins: DP-SGD by the exact random-allocation route (below the whole run, below
# Poisson at q = 1/b over the epoch), nu by the Monte Carlo route with its samples and seed
expect_rc 0 "identity balls-in-bins" "$BIN" account epsilon --mech identity --steps 60 --sigma 1 --delta 1e-5 --balls-in-bins 60 --json
out_has '"route": "balls-in-bins"' "route balls-in-bins"
out_has '"bins": 60' "bins recorded"
e_bib=$(json_num epsilon); e_whole=$(json_num epsilon_whole-run)
if awk -v a="$e_bib" -v b="$e_whole" 'BEGIN { exit !(a > 0 && a < 0.25 * b) }'; then pass; else fail "balls-in-bins $e_bib vs whole run $e_whole"; fi
expect_rc 0 "poisson q = 1/b" "$BIN" account epsilon --accountant pld --sigma 1 --steps 60 --q 0.0166666666666667 --delta 1e-5 --json
e_poi=$(json_num epsilon)
if awk -v a="$e_bib" -v b="$e_poi" 'BEGIN { exit !(a <= b && a >= 0.75 * b) }'; then pass; else fail "balls-in-bins $e_bib vs poisson $e_poi"; fi
expect_rc 0 "nu balls-in-bins: monte carlo" "$BIN" account epsilon --mech nu --nu 0.05 --steps 120 --sigma 3 --delta 1e-5 --balls-in-bins 30 --bib-monte-carlo --json
out_has '"route": "balls-in-bins"' "nu: route balls-in-bins"
out_has '"mc_samples": 131072' "nu: samples named"
out_has '"mc_confidence": 0.99999899999999997' "nu: confidence named"
out_has '"mc_seed": ' "nu: seed named"
out_has '"guarantee": "high-probability, confidence 0.999999"' "nu: opted-in Monte Carlo: its guarantee named"
# default: the deterministic (sampling-free) bound; BSR-2 is amplified by it, the Monte Carlo beside
expect_rc 0 "bsr balls-in-bins: deterministic" "$BIN" account epsilon --mech bsr --bands 2 --steps 60 --sigma 2 --delta 1e-5 --balls-in-bins 15 --json
out_has '"route": "balls-in-bins"' "bsr: route balls-in-bins"
out_has '"guarantee": "deterministic"' "bsr: deterministic guarantee"
out_has '"epsilon_mc": ' "bsr: the Monte Carlo beside it"
expect_rc 0 "bsr balls-in-bins: text" "$BIN" account epsilon --mech bsr --bands 2 --steps 60 --sigma 2 --delta 1e-5 --balls-in-bins 15
out_has 'guarantee     deterministic' "bsr text: guarantee line"
expect_rc 0 "sigma with balls-in-bins" "$BIN" account sigma --mech identity --steps 120 --epsilon 2 --delta 1e-5 --balls-in-bins 30 --json
s_bib=$(json_num sigma); e_cal=$(json_num epsilon)
if awk -v e="$e_cal" 'BEGIN { exit !(e <= 2 && e > 1.99) }'; then pass; else fail "calibrated epsilon $e_cal"; fi
expect_rc 0 "sigma whole run" "$BIN" account sigma --mech identity --steps 120 --epsilon 2 --delta 1e-5 --participations 4 --min-sep 30 --cyclic --json
s_whole=$(json_num sigma)
if awk -v a="$s_bib" -v b="$s_whole" 'BEGIN { exit !(a < 0.8 * b) }'; then pass; else fail "balls-in-bins sigma $s_bib vs whole run $s_whole"; fi
expect_rc 2 "balls-in-bins with q" "$BIN" account epsilon --mech identity --steps 60 --sigma 1 --delta 1e-5 --balls-in-bins 60 --q 0.1
err_has -- "--balls-in-bins|--q" "names the conflict"
expect_rc 2 "balls-in-bins without mech" "$BIN" account epsilon --steps 60 --sigma 1 --delta 1e-5 --balls-in-bins 60
err_has -- "--balls-in-bins" "names --balls-in-bins"
expect_rc 2 "balls-in-bins participations" "$BIN" account epsilon --mech identity --steps 60 --sigma 1 --delta 1e-5 --balls-in-bins 60 --participations 2
err_has -- "--participations" "names --participations"
printf '1\n-0.3\n0.1\n' > "$TMP/neg.txt"
expect_rc 0 "negative entries: note" "$BIN" account epsilon --mech toeplitz --coeffs "$TMP/neg.txt" --of strategy --steps 30 --sigma 2 --delta 1e-5 --balls-in-bins 10 --json
out_has '"route": "whole-run"' "negative entries: whole run"
out_has '"note": "no MMCC or balls-in-bins amplification: C has negative entries' "negative entries: the note says why"
# issue 37 item 6 / issue 35 item 3: routes decide from their cost first. A PLD request at 10^12
# steps is answered by RDP (the PLD's grid floor predicted far above it; 10.6 s and 1.1e7 before),
# MMCC with too little noise for its work limit is refused at once, and a banded C is accounted
# by MMCC beyond 4096 steps.
expect_rc 0 "pld at 1e12 steps: rdp answers" timeout 20 "$BIN" account sigma --epsilon 1 --delta 1e-5 --q 0.01 --steps 1000000000000 --json
out_has '"rdp_order": ' "1e12 steps: rdp_order reported"
s12=$(json_num sigma)
if awk -v s="$s12" 'BEGIN { exit !(s > 3e4 && s < 5e4) }'; then pass; else fail "1e12 steps sigma $s12 (rdp: 4.05e4)"; fi
expect_rc 0 "mmcc beyond the work limit" timeout 20 "$BIN" account epsilon --mech blt --theta 0.98,0.7 --omega 0.25,0.35 --steps 1000 --q 0.01 --sigma 0.3 --delta 1e-10
out_has 'mmcc +stopped by the work limit before any work' "mmcc refused from its estimate"
expect_rc 0 "mmcc banded beyond 4096 steps" timeout 60 "$BIN" account epsilon --mech bsr --bands 64 --steps 5000 --q 0.01 --sigma 20 --delta 1e-10 --json
out_has '"route": "mmcc"|MMCC' "bsr-64 n 5000: mmcc route"

expect_rc 2 "unknown option" "$BIN" account epsilon --frobnicate 1;                  err_has -- "--frobnicate" "names it"
expect_rc 2 "unknown mode" "$BIN" account bogus;                                     err_has "bogus" "names the mode"
expect_rc 2 "no mode" "$BIN" account --sigma 1;                                      err_has "mode" "asks for a mode"
expect_rc 2 "convert rdp" "$BIN" account convert --accountant rdp --rho 1 --delta 1e-5; err_has -- "--accountant" "names --accountant"
# the total and the budget: the library's rule (dpc_account_query_resolve), at the total's option
expect_rc 2 "convert rho alone" "$BIN" account convert --rho 1; err_has -- "--rho: give exactly one of delta and epsilon" "rho without a budget"
expect_rc 2 "convert mu with both" "$BIN" account convert --mu 1 --epsilon 1 --delta 1e-5; err_has -- "--mu: give exactly one" "mu with both"
expect_rc 2 "convert delta alone" "$BIN" account convert --delta 1e-5; err_has -- "--rho: give it, or both epsilon and delta" "no total, one of the budget"
expect_rc 2 "convert gdp epsilon alone" "$BIN" account convert --accountant gdp --epsilon 1; err_has -- "--mu: give it" "gdp: names --mu"
# the question's limits are the query table's (dpc_account_query_fields), refused by the parser
expect_rc 2 "steps beyond 2^40" "$BIN" account epsilon --sigma 1 --steps 1099511627777 --delta 1e-5; err_has -- "--steps: must be in \\[1, 1099511627776\\]" "names the table's range"
expect_rc 2 "max-steps 0" "$BIN" account steps --sigma 1 --epsilon 1 --delta 1e-5 --max-steps 0; err_has -- "--max-steps: must be in" "max-steps 0"
expect_rc 2 "mu 0" "$BIN" account convert --mu 0 --delta 1e-5; err_has -- "--mu: must be > 0" "mu > 0"
# a PLD grid step is at most 1 (dpc_account_opts_fields), and a calibration at the coarsest
# grid works (its coarse grids stay within the row)
expect_rc 2 "interval 2" "$BIN" account epsilon --accountant pld --sigma 1 --steps 10 --delta 1e-5 --interval 2; err_has -- "--interval: must be in \\(0, 1\\], got 2" "the table's range"
expect_rc 0 "sigma at interval 1" "$BIN" account sigma --accountant pld --interval 1 --q 0.1 --steps 100 --delta 1e-5 --epsilon 2
expect_rc 0 "steps at interval 0.5" "$BIN" account steps --accountant pld --interval 0.5 --sigma 3 --q 0.1 --delta 1e-5 --epsilon 2

summary
