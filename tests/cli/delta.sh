#!/bin/sh
# delta.sh — the one delta rule of every trainer (dpc_account_resolve_delta), end to end: for
# train (DP-FTRL), dp-ambssgd, dp-ssgd, dp-srgd and lcgd-projected,
#   - a delta not given is derived from the number of training examples N (the largest power of
#     ten <= 1/(10 N), at most 1e-5), printed by --dry-run and recorded in the report;
#   - a given delta >= 1/N is refused (exit 2), naming the options as typed: --delta and the
#     override --allow-large-delta (never the library's field name allow_large_delta);
#   - --allow-large-delta accepts it.
BIN=${1:-build/dpcorr}
. "$(dirname "$0")/common.inc"

# dry_delta WANT name cmd...: exit 0 and "delta = WANT" (a power of ten in either printing)
dry_delta() {
    dd_want=$1; dd_name=$2; shift 2  # (expect_rc sets want and name)
    expect_rc 0 "$dd_name" "$@" --dry-run
    got=$(sed -n 's/^delta = //p' "$TMP/out" | head -n 1)
    if awk -v a="$got" -v b="$dd_want" 'BEGIN { exit !(a != "" && a / b > 0.999999 && a / b < 1.000001) }'
    then pass; else fail "$dd_name: delta = '$got', want $dd_want"; fi
}
# refused name cmd...: exit 2, the message names --delta and --allow-large-delta as typed
refused() {
    rf_name=$1; shift
    expect_rc 2 "$rf_name refused" "$@" --dry-run
    err_has "[-]-delta: [0-9.e+-]+ >= 1/N" "$rf_name: names --delta"
    err_has "set [-]-allow-large-delta to accept" "$rf_name: names --allow-large-delta"
    if grep -q "allow_large_delta" "$TMP/err"; then fail "$rf_name: the library's field name leaked"; else pass; fi
}

# train (DP-FTRL, the core trainer)
TR="$BIN train --data synthetic:logistic,n=1000,d=4 --model logistic --epsilon 1"
dry_delta 1e-5 "train N=1e3 default" $TR
dry_delta 1e-6 "train N=1e5 default" "$BIN" train --data synthetic:logistic,n=100000,d=2 --model logistic --epsilon 1
refused "train delta 1/N" $TR --delta 1e-3
dry_delta 1e-3 "train --allow-large-delta" $TR --delta 1e-3 --allow-large-delta

# dp-ambssgd: doc/linreg.md's first example, N = 1e6: 1e-7, not the former fixed 1e-5 (10/N)
AMB="$BIN train --algo dp-ambssgd --data synthetic:linreg,n=1000000,d=10,alpha=0,noise=0.01 --epsilon 1"
dry_delta 1e-7 "dp-ambssgd N=1e6 default" $AMB
refused "dp-ambssgd delta 1e-5 at N=1e6" $AMB --delta 1e-5
dry_delta 1e-5 "dp-ambssgd --allow-large-delta" $AMB --delta 1e-5 --allow-large-delta
dry_delta 1e-8 "dp-ambssgd explicit delta below 1/N" $AMB --delta 1e-8

# dp-ssgd
SS="$BIN train --algo dp-ssgd --data synthetic:linreg,n=20000,d=4,alpha=0,noise=0.1 --epsilon 1"
dry_delta 1e-6 "dp-ssgd N=2e4 default" $SS
refused "dp-ssgd delta 1e-4" $SS --delta 1e-4

# dp-srgd: N = 4096 (1e-5) and 1e5 (1e-6)
SR="$BIN train --algo dp-srgd --problem p2 --dim 8 --epsilon 1"
dry_delta 1e-5 "dp-srgd N=4096 default" $SR --n 4096
dry_delta 1e-6 "dp-srgd N=1e5 default" $SR --n 100000
refused "dp-srgd delta 1e-3" $SR --n 4096 --delta 1e-3
dry_delta 1e-3 "dp-srgd --allow-large-delta" $SR --n 4096 --delta 1e-3 --allow-large-delta
expect_rc 2 "dp-srgd --allow-large-delta with --nonprivate" "$BIN" train --algo dp-srgd --problem p2 --dim 8 \
    --n 4096 --nonprivate --allow-large-delta --dry-run
err_has "[-]-allow-large-delta: not used by this configuration" "not used without --epsilon"

# lcgd-projected: N = 300 (1e-5), 2e5 (1e-7)
KA="--algo lcgd-projected --model kan:3 --epsilon 1"
dry_delta 1e-5 "lcgd-projected N=300 default" "$BIN" train $KA --data synthetic:logistic,n=300,d=3
dry_delta 1e-7 "lcgd-projected N=2e5 default" "$BIN" train $KA --data synthetic:logistic,n=200000,d=3
refused "lcgd-projected delta 0.01" "$BIN" train $KA --data synthetic:logistic,n=300,d=3 --delta 0.01
dry_delta 0.01 "lcgd-projected --allow-large-delta" "$BIN" train $KA --data synthetic:logistic,n=300,d=3 --delta 0.01 --allow-large-delta

# the report records the derived delta (ledger: delta, delta_derived)
expect_rc 0 "dp-ssgd report" "$BIN" train --algo dp-ssgd --data synthetic:linreg,n=20000,d=4,alpha=0,noise=0.1 \
    --epsilon 1 --seed 1 --quiet --report "$TMP/r.json"
grep -q '"delta_derived": true' "$TMP/r.json" && grep -Eq '"delta": (1e-06|9.99999999999999[0-9]*e-07)' "$TMP/r.json" \
    && pass || fail "report: derived delta recorded: $(grep -o '"delta[a-z_]*": [^,]*' "$TMP/r.json" | head -3)"

summary
