#!/bin/sh
# End-to-end tests of `dpcorr theory` and `dpcorr repro nu-*` (--quick outputs; --smoke under
# sanitizers, where only the files, the PNGs and the JSON structure are checked).
# Tolerances on simulated quantities are statistical: the quick runs have batch-means standard
# errors <= 0.5% (mean estimation) and <= ~1% (fixed design), so 2%/6% are >= 4 standard errors;
# a slope over a grid spanning a factor >= 4 moves by < 0.03 under such errors.
BIN=${1:-build/dpcorr}
. "$(dirname "$0")/common.inc"
MODE=--quick
[ "${DPC_TEST_SCALE:-}" = asan ] && MODE=--smoke

# nested KEY FIELD : the number FIELD inside the JSON object "KEY": {...} of $TMP/out
nested() { sed -n "s/.*\"$1\": {\([^}]*\)}.*/\1/p" "$TMP/out" | sed -n "s/.*\"$2\": \([-0-9.eE+]*\).*/\1/p" | head -n 1; }
le() { if awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && a + 0 <= b + 0) }'; then pass; else fail "$3: $1 > $2"; fi; }
is_png() { # file name
    if [ -f "$1" ] && [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ]; then pass; else fail "$2: $1 is not a PNG"; fi
}
have_gnuplot=0; command -v gnuplot >/dev/null 2>&1 && have_gnuplot=1

# ---- dpcorr theory ----
expect_rc 0 "theory help" "$BIN" theory --help
for opt in --problem --d --alpha --eta --rho --sigma-sgd --mu --simulate --random --kind --json; do
    out_has "^ *$opt" "theory help line for $opt"
done
expect_rc 0 "theory default (Figure 2 point)" "$BIN" theory --json
num_near "$(json_num v0)" 0.0180781 2e-7 "V0 nu-FTRL at d=128 (note 5.3.2)"
num_near "$(json_num lti_opt)" 0.0165934 2e-7 "LTI optimum"
num_near "$(json_num v0_series)" "$(json_num v0)" 1e-12 "series = quadrature"
expect_rc 0 "theory sgd" "$BIN" theory --kind identity --json
num_near "$(json_num v0)" 1.280545 2e-6 "V0 SGD at d=128"
expect_rc 0 "theory mean" "$BIN" theory --problem mean --eta 0.1 --json
num_near "$(json_num v0)" 0.021078471 1e-9 "mean estimation optimum eta=0.1 (note 5.2)"
num_near "$(json_num ratio_R)" 0.400491 1e-6 "R(0.1)"
expect_rc 0 "theory sc" "$BIN" theory --problem sc --mu 0.1 --L 1 --eta 1 --json
out_has '"bound_F":' "sc bound"
expect_rc 0 "theory antipgd text" "$BIN" theory --kind antipgd --nu 0.1
out_has "damped anti-PGD" "antipgd description"
expect_rc 0 "theory simulate" "$BIN" theory --problem mean --eta 0.5 --simulate 20000 --json
out_has '"sim_mean":' "simulation reported"
out_has '"sim_seed": 1' "seed recorded"
expect_rc 2 "theory bad eta" "$BIN" theory --eta abc;          err_has -- "--eta" "names --eta"
expect_rc 2 "theory bad problem" "$BIN" theory --problem foo;  err_has -- "--problem" "names --problem"
expect_rc 2 "theory unknown" "$BIN" theory --frob 1;           err_has -- "--frob" "names it"
expect_rc 2 "theory bad nu" "$BIN" theory --kind nu --nu 2;    err_has -- "nu" "names nu"

# ---- dpcorr repro ----
expect_rc 0 "repro help" "$BIN" repro --help
for t in nu-fig1 nu-fig2 nu-fig3 nu-tables; do out_has "^ *$t" "help lists $t"; done
expect_rc 2 "repro unknown target" "$BIN" repro nu-fig9;        err_has "nu-fig9" "names the target"
expect_rc 2 "repro missing target" "$BIN" repro --quick;        err_has "TARGET" "asks for the target"
expect_rc 2 "repro unknown option" "$BIN" repro nu-fig1 --frob; err_has -- "--frob" "names it"
expect_rc 2 "repro option of no use" "$BIN" repro nu-tables --quick; err_has -- "--quick: unknown option" "exact tables take no --quick"
expect_rc 2 "repro quick and smoke" "$BIN" repro nu-fig1 --quick --smoke; err_has -- "cannot be combined" "one scale"

for t in nu-fig1 nu-fig2 nu-fig3 nu-tables; do
    m=$MODE; [ $t = nu-tables ] && m=   # exact tables: no --quick/--smoke/--seed
    expect_rc 0 "repro $t" "$BIN" repro $t $m --out "$TMP/$t" --json
    out_has "\"target\": \"$t\"" "$t json target"
    out_has '"reproduces": \[' "$t states what it reproduces"
    out_has '"not_reproduced": \[' "$t states what it cannot"
    [ $t = nu-tables ] || out_has '"seed": 20240101' "$t records the seed"
    [ -f "$TMP/$t/$t.json" ] && pass || fail "$t.json written"
    ls "$TMP/$t"/*.csv >/dev/null 2>&1 && pass || fail "$t CSV written"
    [ -f "$TMP/$t/$t.gp" ] && [ -f "$TMP/$t/$t.dat" ] && pass || fail "$t gnuplot script and data"
    if [ $have_gnuplot = 1 ]; then
        is_png "$TMP/$t/$t.png" "$t"
        out_has '"png_ok": true' "$t png ok"
        grep -q "set xlabel" "$TMP/$t/$t.gp" && grep -q "set ylabel" "$TMP/$t/$t.gp" && grep -q "title \"" "$TMP/$t/$t.gp" \
            && pass || fail "$t plot has axis labels and legend titles"
    else
        out_has '"png_ok": false' "$t says the PNG is missing"
    fi
    cp "$TMP/out" "$TMP/$t.out"
done

if [ "$MODE" = --quick ]; then
    cp "$TMP/nu-fig1.out" "$TMP/out"
    le "$(json_num max_rel_dev_sim_vs_theory)" 0.02 "fig1: mean estimation within 2% of the closed form"
    cp "$TMP/nu-fig2.out" "$TMP/out"
    s=$(nested sgd_vs_d sim_fixed);  num_near "$s" 1.00 0.05 "fig2: SGD slope vs d (fixed design)"
    s=$(nested sgd_vs_d sim_random); num_near "$s" 1.00 0.05 "fig2: SGD slope vs d (random design)"
    num_near "$(nested ftrl_vs_deff sim_fixed)" "$(nested ftrl_vs_deff lti)" 0.1 "fig2: FTRL slope vs d_eff within 0.1 of LTI"
    num_near "$(nested ftrl_vs_eta sim_fixed)" "$(nested ftrl_vs_eta lti)" 0.1 "fig2: FTRL slope vs eta within 0.1 of LTI"
    num_near "$(nested ftrl_vs_eta paper)" 2.03 1e-9 "fig2: paper slope printed beside"
    le "$(json_num max_rel_dev_fixed_design_vs_V0)" 0.06 "fig2: fixed design vs V0"
    n=$(nested random_design_within_sandwich points); i=$(nested random_design_within_sandwich inside)
    num_near "$i" "$n" 0 "fig2: random design between V0 and the sandwich at every point"
    cp "$TMP/nu-fig3.out" "$TMP/out"
    out_has '"ordering_sgd_gt_nu_gt_optimized": true' "fig3 ordering"
    out_has '"simulations_below_bound": true' "fig3 simulations below the bound"
fi
cp "$TMP/nu-tables.out" "$TMP/out"
out_has '"damped_antipgd_between_sgd_and_nu": true' "tables: damped anti-PGD between SGD and nu-FTRL"
out_has '"mechanism": "Optimal CC \(nu = 0\)", "nu": 0, "gamma_T2_1e5": [0-9.]+, "gamma_inf2": "inf", "F_inf": "inf"' "tables: Optimal CC diverges"
out_has '"mechanism": "anti-PGD", "nu": 0, "gamma_T2_1e5": 100000, "gamma_inf2": "inf"' "tables: anti-PGD gamma_T^2 = T"
num_near "$(nested divergent_gamma_T nu0_gamma_T2_T2e5)" "$(nested divergent_gamma_T nu0_log_fit)" 2e-4 "tables: nu=0 gamma_T^2 ~ (ln T + 3.3498)/pi"
num_near "$(nested table1 ftrl_exact)" 0.0180781 2e-7 "tables: Table 1 exact FTRL value"

summary
