#!/bin/sh
# sweep.sh — no silent acceptance (issue 28): every numeric option of every command (mech, mech
# optimize, compare, theory, account MODE, train and each train --algo, audit, demo) is given
# values a run cannot honour or that probe its limits: 1e308 and -1 for numbers, 2^64 - 1 and -1
# for integers (SWEEP_FULL=1 adds -1e308, 0, 1e-308 and 1e15). Each value, put into the
# option's own example invocation (its --help-table row), must be either
#   - refused with exit 2 by a message that names the option (--lr: ...), or
#   - honoured: exit 0 with no inf or nan anywhere in the output (a value that ran to overflow
#     and was reported with exit 0 is the silent acceptance this test exists to catch).
# Anything else (exit 1, a crash, a refusal naming another option, a timeout) fails, except the
# cases listed in KNOWN below, each with its reason. Every command runs under `timeout 10`.
# Then the output identity family: every output of every command onto each of its other files.
BIN=${1:-build/dpcorr}
. "$(dirname "$0")/common.inc"
T="timeout 10"
export XDG_CACHE_HOME="$TMP/cache"
printf '1\n-0.5\n0.25\n' > "$TMP/coeffs.txt"
"$BIN" train --data synthetic:logistic,n=600,d=4 --model logistic --epsilon 1 --batch 20 \
    --checkpoint "$TMP/ckpt" --quiet >/dev/null 2>&1 || fail "fixture: checkpoint"

# Known cases, "command|option|value|reason": each still ends in exit 2 or 0 as described
# (all in the SWEEP_FULL values: exact infinities and answers that are not about the option).
KNOWN='
mech|--nu|0|nu = 0 is the prefix-sum mechanism: its limit sensitivity is infinite (exact)
theory|--nu|0|nu = 0: gamma_inf and the bounds are infinite (exact)
theory|--alpha|0|a flat spectrum: the Thm C.14/C.15 upper bounds are infinite (exact)
account steps|--nu|0|one step of this mechanism already exceeds the target: the answer names --epsilon
account steps|--lambda|0|one step of this mechanism already exceeds the target: the answer names --epsilon
account steps|--mech-momentum|0|one step of this mechanism already exceeds the target: the answer names --epsilon
train --algo lcgd-projected|--noise-multiplier|0|a non-private run: (inf, delta)-DP, calibration "none (non-private)"
'
known() { printf '%s\n' "$KNOWN" | grep -F -q -- "$1|$2|$3|"; }

NUMV="1e308 -1"
INTV="18446744073709551615 -1"
if [ "${SWEEP_FULL:-0}" = 1 ]; then NUMV="$NUMV -1e308 0 1e-308"; INTV="$INTV 0 1e15"; fi

cmds="mech|mech optimize|compare|theory"
for m in epsilon delta sigma steps convert; do cmds="$cmds|account $m"; done
for a in $("$BIN" train --help | sed -n '/^algorithms/,$s/^  \([a-z-]*\) .*/\1/p'); do
    if [ "$a" = dp-ftrl ]; then cmds="$cmds|train"; else cmds="$cmds|train --algo $a"; fi
done
cmds="$cmds|audit|demo"
echo "$cmds" | grep -q "train --algo dp-srgd" && pass || fail "algorithms listed in train --help"

tried=0
IFS='|'
for c in $cmds; do
    IFS=' '
    # shellcheck disable=SC2086
    set -- $c
    "$BIN" "$@" --help-table | sed "s|{tmp}|$TMP|g" > "$TMP/table" || { fail "$c --help-table"; IFS='|'; continue; }
    minimal=$(awk -F'\t' '$1 == "cmd" { print $3 }' "$TMP/table")
    awk -F'\t' '$1 == "opt" && ($3 == "number" || $3 == "integer") && $5 != "-" { print $2 "\t" $3 "\t" $5 }' \
        "$TMP/table" > "$TMP/opts"
    while IFS="$(printf '\t')" read -r o ty ex; do
        IFS=' '
        # the option's example, completed by the minimal invocation without the options it names
        if [ "${ex#! }" != "$ex" ]; then inv=${ex#! }
        else
            inv="$(echo "$minimal" | awk -v ex="$ex" '{
                n = split(ex, e, " "); for (i = 1; i <= n; i++) if (e[i] ~ /^--/) named[e[i]] = 1
                out = ""; skip = 0
                for (i = 1; i <= NF; i++) { if (skip) { skip = 0; continue }
                    if ($i in named) { skip = 1; continue } out = out " " $i }
                print out }') $ex"
        fi
        if [ "$ty" = number ]; then vals=$NUMV; else vals=$INTV; fi
        # every 64-bit value is a seed or a stream: only their refusals (the full runs at
        # 2^64 - 1 add nothing but time, e.g. the demo under ASan)
        case "$o" in --seed | --stream) vals=-1 ;; esac
        for v in $vals; do
            args=$(echo "$inv" | awk -v o="$o" -v v="$v" '{ for (i = 1; i < NF; i++) if ($i == o) $(i + 1) = v; print }')
            tried=$((tried + 1))
            # shellcheck disable=SC2086
            $T "$BIN" "$@" $args > "$TMP/out" 2> "$TMP/err"; rc=$?
            if [ $rc -eq 2 ] && grep -q -- "$o: " "$TMP/err"; then pass; continue; fi
            if [ $rc -eq 0 ] && ! grep -Eiq '(^|[^a-z_])(inf|nan)([^a-z_]|$)' "$TMP/out" "$TMP/err"; then pass; continue; fi
            if known "$c" "$o" "$v" && { [ $rc -eq 2 ] || [ $rc -eq 0 ]; }; then pass; continue; fi
            why="exit $rc"
            [ $rc -eq 2 ] && why="exit 2 without naming $o"
            [ $rc -eq 0 ] && why="exit 0 with inf or nan in the output"
            [ $rc -eq 124 ] && why="timed out (10 s)"
            fail "$c $o $v: $why: $c $args: $(tail -n 2 "$TMP/err" | head -c 300) $(grep -Ei -m 1 '(^|[^a-z_])(inf|nan)([^a-z_]|$)' "$TMP/out" | head -c 200)"
        done
        IFS='|'
    done < "$TMP/opts"
    IFS='|'
done
IFS=' '
# the sweep itself ran: every command's options were tried
if [ $tried -ge 300 ]; then pass; else fail "only $tried option values tried"; fi

# ---- output identity (issue 37): every output of every command (its "io ... out" rows) put onto
# every other file of the command (each other output, each input with a path in its example:
# --resume, --coeffs) must be refused before any work with exit 2 naming both options; only an
# output and an input that both continue (--checkpoint F --resume F) may be one file.
# value_of OPT EXAMPLE: the word after OPT in EXAMPLE
value_of() { echo "$2" | awk -v o="$1" '{ for (i = 1; i < NF; i++) if ($i == o) { print $(i + 1); exit } }'; }
pairs=0
IFS='|'
for c in $cmds; do
    IFS=' '
    # shellcheck disable=SC2086
    set -- $c
    "$BIN" "$@" --help-table | sed "s|{tmp}|$TMP|g" > "$TMP/table"
    minimal=$(awk -F'\t' '$1 == "cmd" { print $3 }' "$TMP/table")
    awk -F'\t' '$1 == "io" { print $2 "\t" $3 "\t" $4 }' "$TMP/table" > "$TMP/io"
    while IFS="$(printf '\t')" read -r o role cont; do
        [ "$role" = out ] || continue
        exo=$(awk -F'\t' -v o="$o" '$1 == "opt" && $2 == o { print $5 }' "$TMP/table")
        while IFS="$(printf '\t')" read -r p prole pcont; do
            IFS=' '
            [ "$p" = "$o" ] && continue
            [ "$prole" = out ] || [ "$prole" = in ] || continue
            [ "$prole" = in ] && [ "$cont" = 1 ] && [ "$pcont" = 1 ] && continue # continues it
            exp=$(awk -F'\t' -v o="$p" '$1 == "opt" && $2 == o { print $5 }' "$TMP/table")
            path=$(value_of "$p" "$exp")
            [ -n "$path" ] || continue
            # the minimal invocation without the options the two examples name, then the examples
            inv="$(echo "$minimal" | awk -v ex="$exo $exp" '{
                n = split(ex, e, " "); for (i = 1; i <= n; i++) if (e[i] ~ /^--/) named[e[i]] = 1
                out = ""; skip = 0
                for (i = 1; i <= NF; i++) { if (skip) { skip = 0; continue }
                    if ($i in named) { skip = 1; continue } out = out " " $i }
                print out }') $exp $(echo "$exo" | awk -v o="$o" -v v="$path" '{ for (i = 1; i < NF; i++) if ($i == o) $(i + 1) = v; print }')"
            pairs=$((pairs + 1))
            # shellcheck disable=SC2086
            $T "$BIN" "$@" $inv > "$TMP/out" 2> "$TMP/err"; rc=$?
            if [ $rc -eq 2 ] && grep -Eq -- "($o|$p) $path is the same file as ($o|$p) $path" "$TMP/err"; then pass
            else fail "$c: $o onto $p ($path): exit $rc, want 2 naming both: $c $inv: $(tail -n 1 "$TMP/err" | head -c 300)"; fi
        done < "$TMP/io"
    done < "$TMP/io"
    IFS='|'
done
IFS=' '
# every trainer has at least --report against --checkpoint and --resume
if [ $pairs -ge 15 ]; then pass; else fail "only $pairs output identity pairs tried"; fi
summary
