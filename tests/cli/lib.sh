# lib.sh — tiny assertion helpers for the CLI end-to-end tests (POSIX sh).
# Usage in a test: . "$(dirname "$0")/lib.sh"; ok "name" cmd...; ...; summary
PASS=0; FAIL=0
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
pass() { PASS=$((PASS + 1)); }
fail() { FAIL=$((FAIL + 1)); echo "FAIL: $*" >&2; }
# expect_rc CODE name cmd... : runs cmd, stdout -> $TMP/out, stderr -> $TMP/err
expect_rc() {
    want=$1; name=$2; shift 2
    "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?
    if [ "$rc" -eq "$want" ]; then pass; else fail "$name: exit $rc, want $want; stderr: $(head -c 300 "$TMP/err")"; fi
}
# out_has PATTERN name / err_has PATTERN name : grep -E on the last outputs
out_has() { if grep -Eq -- "$1" "$TMP/out"; then pass; else fail "$2: stdout lacks /$1/: $(head -c 300 "$TMP/out")"; fi; }
err_has() { if grep -Eq -- "$1" "$TMP/err"; then pass; else fail "$2: stderr lacks /$1/: $(head -c 300 "$TMP/err")"; fi; }
# json_num KEY : prints the numeric value of "KEY": in $TMP/out
json_num() { sed -n "s/.*\"$1\": \([-0-9.eE+]*\).*/\1/p" "$TMP/out" | head -n 1; }
# num_near A B TOL name : |A-B| <= TOL (awk)
num_near() { if awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= t) }'; then pass; else fail "$4: $1 vs $2 (tol $3)"; fi; }
summary() { echo "$PASS passed, $FAIL failed"; [ "$FAIL" -eq 0 ]; }
