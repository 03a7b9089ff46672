#!/bin/sh
# End-to-end tests of `dpcorr train --algo dp-ambssgd|dp-ssgd` (papers/001) and
# `dpcorr repro ambssgd`: reports (per-step gamma_t, zeta_t, clip fraction, risk; ledger; public
# inputs; preconditions), reproducibility, CSV and LIBSVM data, baselines, and malformed options
# (exit 2, message naming the fault). Under ASan (DPC_TEST_SCALE=asan) the runs are smaller and
# the repro target runs --smoke (files and JSON structure only).
BIN=${1:-build/dpcorr}
. "$(dirname "$0")/common.inc"
ASAN=0; [ "${DPC_TEST_SCALE:-}" = asan ] && ASAN=1
N=200000; [ $ASAN = 1 ] && N=60000
SYN="synthetic:linreg,n=$N,d=5,alpha=0,noise=0.1,test-n=2000"

# jnum KEY FILE: the first numeric value of "KEY": in FILE
jnum() { sed -n "s/.*\"$1\": \([-0-9.eE+]*\).*/\1/p" "$2" | head -n 1; }
le() { if awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && a + 0 <= b + 0) }'; then pass; else fail "$3: $1 > $2"; fi; }
is_png() {
    if [ -f "$1" ] && [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ]; then pass; else fail "$2: $1 is not a PNG"; fi
}

# ---- help ----
expect_rc 0 "help" "$BIN" train --algo dp-ambssgd --help
for opt in --data --epsilon --delta --noise-multiplier --calibration --kappa --h-norm --rx --k2 --tail-a \
           --w-bound --sigma-bound --c1 --steps --stat-batch --lr --clip --domain --dpstat-k \
           --dpstat-rule --baselines --seed --secure --report --log-every; do
    out_has "^ *$opt" "help line for $opt"
done
expect_rc 0 "train help lists the algorithms" "$BIN" train --help
out_has "dp-ambssgd" "dp-ambssgd listed"; out_has "dp-ssgd" "dp-ssgd listed"
expect_rc 0 "dp-ssgd help" "$BIN" train --algo dp-ssgd --help
out_has "shuffling" "dp-ssgd help explains the accounting"

# ---- DP-AMBSSGD on synthetic data, with every baseline ----
expect_rc 0 "dp-ambssgd run" "$BIN" train --algo dp-ambssgd --data "$SYN" --epsilon 2 --baselines all \
    --seed 1 --report "$TMP/a.json" --quiet
out_has "^dp-ambssgd: excess risk" "summary line"
out_has "baseline dp-sgd-fixed" "fixed-clip baseline"; out_has "baseline ssp" "SSP baseline"
out_has "baseline ols" "OLS baseline"; out_has "baseline sgd" "non-private baseline"
for k in gamma zeta clip_fraction excess_risk noise_std dpstat_counts batch_loss epsilon delta rho \
         rho_grad rho_stat noise_multiplier noise_multiplier_stat epsilon_paper route seed_mode seed steps batch stat_batch eta domain_B \
         dpstat_k dpstat_margin_gamma h_norm kappa r_x k2 tail_a w_bound sigma_bound preconditions \
         batch_condition sample_complexity dpstat_margin wall_time_s cpu_time_s baselines; do
    if grep -q "\"$k\"" "$TMP/a.json"; then pass; else fail "report key $k"; fi
done
num_near "$(jnum epsilon "$TMP/a.json")" 2 1e-9 "report epsilon = target"
a=$(jnum noise_multiplier "$TMP/a.json"); rho=$(jnum rho "$TMP/a.json")
num_near "$rho" "$(awk -v a="$a" 'BEGIN { printf "%.17g", 1 / (a * a) }')" 1e-12 "rho = 1/z^2"
if grep -q '"calibration": "accountant"' "$TMP/a.json"; then pass; else fail "accountant calibration by default"; fi
if grep -q '"seed_mode": "seeded", "seed": 1' "$TMP/a.json"; then pass; else fail "seed recorded"; fi
if grep -q '"public_inputs": {"h_norm": 1, "kappa": 1,' "$TMP/a.json"; then pass; else fail "public inputs from the generator"; fi
T=$(jnum steps "$TMP/a.json"); ns=$(grep -c '"gamma":' "$TMP/a.json")
num_near "$ns" "$T" 0 "one report entry per step"
# every step: zeta_t = R_x (ln N)^a gamma_t and the noise std 2 z zeta_t / b
cs=$(jnum clip_scale "$TMP/a.json"); b=$(jnum batch "$TMP/a.json")
bad=$(sed -n 's/.*"gamma": \([-0-9.eE+]*\), "zeta": \([-0-9.eE+]*\), "noise_std": \([-0-9.eE+]*\),.*/\1 \2 \3/p' "$TMP/a.json" |
      awk -v cs="$cs" -v a="$a" -v b="$b" '{ z = cs * $1; s = 2 * a * $2 / b;
          if ((z - $2) ^ 2 > 1e-20 * z * z || (s - $3) ^ 2 > 1e-20 * s * s) n++ } END { print n + 0 }')
num_near "$bad" 0 0 "zeta_t = clip_scale gamma_t and noise std = 2 z zeta_t / b at every step"
risk=$(sed -n 's/.*"final": {"excess_risk": \([-0-9.eE+]*\),.*/\1/p' "$TMP/a.json")
le "$risk" 0.001 "dp-ambssgd excess risk is small"
fixed=$(sed -n 's/.*"name": "dp-sgd-fixed", "excess_risk": \([-0-9.eE+]*\),.*/\1/p' "$TMP/a.json")
le "$risk" "$fixed" "adaptive beats the fixed clip at sigma = 0.1"

# reproducible bit for bit; another seed differs
expect_rc 0 "rerun" "$BIN" train --algo dp-ambssgd --data "$SYN" --epsilon 2 --seed 1 --report "$TMP/b.json" --quiet
w1=$(grep -o '"w": \[[^]]*\]' "$TMP/a.json"); w2=$(grep -o '"w": \[[^]]*\]' "$TMP/b.json")
if [ -n "$w1" ] && [ "$w1" = "$w2" ]; then pass; else fail "same seed: same model"; fi
expect_rc 0 "seed 2" "$BIN" train --algo dp-ambssgd --data "$SYN" --epsilon 2 --seed 2 --report "$TMP/c.json" --quiet
w3=$(grep -o '"w": \[[^]]*\]' "$TMP/c.json")
if [ "$w1" != "$w3" ]; then pass; else fail "another seed: another model"; fi
# secure by default: recorded, no seed, two runs differ; --seed warns
expect_rc 0 "default (secure)" "$BIN" train --algo dp-ambssgd --data "$SYN" --epsilon 2 --report "$TMP/s1.json" --quiet
if grep -q '"seed_mode": "secure"' "$TMP/s1.json" && grep -q '"seed": null' "$TMP/s1.json"; then pass; else fail "dp-ambssgd secure by default"; fi
expect_rc 0 "default again" "$BIN" train --algo dp-ambssgd --data "$SYN" --epsilon 2 --report "$TMP/s2.json" --quiet
w4=$(grep -o '"w": \[[^]]*\]' "$TMP/s1.json"); w5=$(grep -o '"w": \[[^]]*\]' "$TMP/s2.json")
if [ -n "$w4" ] && [ "$w4" != "$w5" ]; then pass; else fail "two secure runs differ"; fi
expect_rc 0 "seeded warns" "$BIN" train --algo dp-ssgd --data synthetic:linreg,n=5000,d=3,alpha=0 --epsilon 1 --seed 4 --quiet
err_has "^dpcorr train --algo dp-ssgd: warning: seeded mode \(seed 4\)" "dp-ssgd --seed warns"

# the printed DP-STAT rule and the paper's K (Delta underflows: warned)
expect_rc 0 "paper rule, paper K" "$BIN" train --algo dp-ambssgd --data "$SYN" --epsilon 2 \
    --dpstat-rule paper --dpstat-k paper --calibration paper --report "$TMP/p.json"
if grep -q '"dpstat_rule": "paper"' "$TMP/p.json" && grep -q '"calibration": "paper: Thm. 3.7 closed form"' "$TMP/p.json"; then pass; else fail "rules recorded"; fi
k=$(jnum dpstat_k "$TMP/p.json")
num_near "$k" "$(awk -v n=$N 'BEGIN { x = 200 * log(n) / log(2); k = int(x); if (k < x) k++; print k }')" 0 "paper K = ceil(200 log2 N)"
err_has "warning: precondition domain_resolution" "underflowing Delta is warned about"

# a small N breaks the theory's preconditions: warned, not refused
expect_rc 0 "small N" "$BIN" train --algo dp-ambssgd --data synthetic:linreg,n=20000,d=5,alpha=0 --epsilon 1
err_has "warning: precondition (dpstat_margin|batch_condition)" "precondition warning"
err_has "privacy is unaffected" "warning says privacy is unaffected"

# ---- DP-SSGD ----
expect_rc 0 "dp-ssgd run" "$BIN" train --algo dp-ssgd --data synthetic:linreg,n=20000,d=5,alpha=0,noise=0.5 \
    --epsilon 0.5 --report "$TMP/s.json" --quiet
if grep -q '"route": "amplification by shuffling' "$TMP/s.json"; then pass; else fail "shuffling route"; fi
for k in eps0 delta0 shuffle_epsilon_range no_clipping_step; do
    if grep -q "\"$k\"" "$TMP/s.json"; then pass; else fail "dp-ssgd report key $k"; fi
done
le "$(jnum epsilon "$TMP/s.json")" 0.5 "dp-ssgd epsilon <= target"
ns=$(grep -c '"gamma":' "$TMP/s.json")
le "$ns" 1000 "dp-ssgd logs at most 1000 blocks"
expect_rc 0 "dp-ssgd alpha outside the theorem" "$BIN" train --algo dp-ssgd --data synthetic:linreg,n=5000,d=3,alpha=0 \
    --noise-multiplier 0.1 --report "$TMP/s2.json" --quiet
if grep -q '"epsilon": "inf"' "$TMP/s2.json"; then pass; else fail "no guarantee: epsilon inf"; fi

# ---- files: CSV and LIBSVM with real targets ----
awk 'BEGIN { s = 12345; print "a,b,c,target";
    for (i = 0; i < 30000; i++) { for (j = 0; j < 3; j++) { s = (s * 1103515245 + 12345) % 2147483648; x[j] = s / 2147483648 - 0.5 }
        printf "%.6f,%.6f,%.6f,%.6f\n", x[0], x[1], x[2], x[0] - 0.5 * x[1] + 0.25 * x[2] + 0.01 * (x[0] * x[1]) } }' > "$TMP/r.csv"
expect_rc 0 "csv run" "$BIN" train --algo dp-ambssgd --data "csv:$TMP/r.csv,label=target,holdout=0.1" \
    --epsilon 4 --kappa 1 --h-norm 0.084 --rx 0.5 --baselines ols --report "$TMP/csv.json" --quiet
out_has "test loss [0-9]" "csv: test loss reported"
if grep -q '"kappa": "option"' "$TMP/csv.json"; then pass; else fail "csv: public input source recorded"; fi
expect_rc 2 "csv without kappa" "$BIN" train --algo dp-ambssgd --data "csv:$TMP/r.csv,label=target" --epsilon 1
err_has -- "--h-norm|--kappa" "names the missing public input"
awk -F, 'NR > 1 { printf "%s 1:%s 2:%s 3:%s\n", $4, $1, $2, $3 }' "$TMP/r.csv" > "$TMP/r.svm"
expect_rc 0 "libsvm run (row-norm bound from clip)" "$BIN" train --algo dp-ambssgd --data "libsvm:$TMP/r.svm,d=3,clip=0.9" \
    --epsilon 4 --kappa 1.2 --quiet --report "$TMP/svm.json"
if grep -q '"r_x": "x_norm_bound"' "$TMP/svm.json"; then pass; else fail "libsvm: R_x from the clip radius"; fi
expect_rc 2 "classification data" "$BIN" train --algo dp-ambssgd --data synthetic:logistic,n=2000,d=3 --epsilon 1
err_has "real-valued" "classification refused"

# ---- malformed options ----
expect_rc 2 "no epsilon" "$BIN" train --algo dp-ambssgd --data "$SYN";                     err_has -- "--epsilon" "names --epsilon"
expect_rc 2 "no data" "$BIN" train --algo dp-ambssgd --epsilon 1;                           err_has -- "--data" "names --data"
expect_rc 2 "bad rule" "$BIN" train --algo dp-ambssgd --data "$SYN" --epsilon 1 --dpstat-rule foo;  err_has "dpstat-rule" "names the rule"
expect_rc 2 "bad calibration" "$BIN" train --algo dp-ambssgd --data "$SYN" --epsilon 1 --calibration x; err_has -- "--calibration" "names it"
expect_rc 2 "bad baseline" "$BIN" train --algo dp-ambssgd --data "$SYN" --epsilon 1 --baselines foo; err_has "foo" "names the baseline"
expect_rc 2 "kappa < 1" "$BIN" train --algo dp-ambssgd --data "$SYN" --epsilon 1 --kappa 0.5;       err_has "kappa" "names kappa"
expect_rc 2 "odd steps" "$BIN" train --algo dp-ambssgd --data "$SYN" --epsilon 1 --steps 7;         err_has "steps" "names steps"
expect_rc 2 "bad number" "$BIN" train --algo dp-ambssgd --data "$SYN" --epsilon abc;                err_has -- "--epsilon" "names --epsilon"
expect_rc 2 "unknown option" "$BIN" train --algo dp-ambssgd --data "$SYN" --epsilon 1 --frob 2;     err_has -- "--frob" "names it"
expect_rc 2 "zero K" "$BIN" train --algo dp-ambssgd --data "$SYN" --epsilon 1 --dpstat-k 0;         err_has "dpstat-k" "names dpstat-k"
expect_rc 2 "bad delta" "$BIN" train --algo dp-ambssgd --data "$SYN" --epsilon 1 --delta 2;         err_has "delta" "names delta"
expect_rc 2 "epsilon and alpha" "$BIN" train --algo dp-ambssgd --data "$SYN" --epsilon 1 --noise-multiplier 3; err_has "cannot be combined" "one privacy parameter"
expect_rc 2 "unknown algo" "$BIN" train --algo dp-foo --data "$SYN";                                err_has "dp-foo" "names the algorithm"

# ---- repro ambssgd ----
MODE=--quick; [ $ASAN = 1 ] && MODE=--smoke
expect_rc 0 "repro help lists ambssgd" "$BIN" repro --help
out_has "^ *ambssgd" "ambssgd target listed"
expect_rc 0 "repro ambssgd $MODE" "$BIN" repro ambssgd $MODE --out "$TMP/rep" --json
for k in target slopes sigma_adaptive sigma_fixed epsilon ratio_fixed_over_adaptive checks reproduces \
         not_reproduced seed cpu_seconds study_wall_seconds sigma_sweep config png_ok; do
    out_has "\"$k\"" "repro JSON key $k"
done
out_has '"target": "ambssgd"' "target named"
out_has '"seed": 20240101' "seed recorded"
[ -f "$TMP/rep/ambssgd.json" ] && pass || fail "ambssgd.json written"
for f in ambssgd_sigma.csv ambssgd_epsilon.csv ambssgd_n_d.csv ambssgd_slopes.csv; do
    [ -s "$TMP/rep/$f" ] && pass || fail "$f written"
done
if command -v gnuplot >/dev/null 2>&1; then
    is_png "$TMP/rep/ambssgd.png" "sweep plot"; is_png "$TMP/rep/ambssgd_d_zeta.png" "d and zeta plot"
    out_has '"png_ok": true' "png ok"
else
    out_has '"png_ok": false' "says the PNG is missing"
fi
if [ "$MODE" = --quick ]; then
    # Quick study: N = 5e5, 4 seeds, eps in {1, 2, 4}. The per-seed DP excess has a relative sd of
    # about 0.5 (zeta_t moves on a power-of-two grid), so a 4-seed mean is within ~25%: over the
    # sigma range (10^3) that moves the slope by < 0.1, well inside +-0.3 (root seeds 20240101, 1,
    # 2, 3 gave 2.015, 1.986, 2.004, 1.981). Over eps in [1, 4] (ln 4 = 1.4) the same error moves
    # the slope by up to ~0.35: those seeds gave -2.30, -1.72, -1.87, -1.79 (mean -1.92, sd 0.26),
    # hence the band -1.9 +- 0.7 here; the full study (N = 1e6, 8 seeds, eps in [0.5, 4]) meets the
    # acceptance range [-2.2, -1.4] (-1.63).
    s=$(sed -n 's/.*"sigma_adaptive": \([-0-9.eE+]*\).*/\1/p' "$TMP/out")
    num_near "$s" 2 0.3 "quick: DP excess slope in sigma = 2 +- 0.3"
    s=$(sed -n 's/.*"sigma_fixed": \([-0-9.eE+]*\).*/\1/p' "$TMP/out")
    num_near "$s" 0 0.3 "quick: fixed clip flat in sigma"
    s=$(sed -n 's/.*"slopes": {[^}]*"epsilon": \([-0-9.eE+]*\).*/\1/p' "$TMP/out")
    num_near "$s" -1.9 0.7 "quick: slope in eps within [-2.6, -1.2]"
    r=$(jnum ratio_fixed_over_adaptive "$TMP/out")
    le 100 "$r" "quick: adaptive beats fixed by >= 100x at sigma = 0.001"
fi

# an epsilon the run cannot deliver is refused, never reported as "(inf, delta)-DP" (issue 28)
expect_rc 2 "ambssgd epsilon 1e308" "$BIN" train --algo dp-ambssgd --data synthetic:linreg,n=2000,d=4 --epsilon 1e308 --seed 1
err_has -- "--epsilon: .*(no finite epsilon|must be at most)" "ambssgd epsilon 1e308: named"
summary
