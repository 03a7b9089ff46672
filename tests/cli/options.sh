#!/bin/sh
# options.sh — every subcommand's option table, end to end. For each command (mech, mech
# optimize, compare, account MODE, theory, repro TARGET, train, train --algo NAME, demo, audit,
# version):
#   - the options of --help are exactly those of --help-table (help and parser from one table);
#   - each option is accepted in a minimal valid invocation (--dry-run: the configuration is
#     resolved by the library and printed as "key = value" lines) and honoured: the library
#     parameter(s) it maps to print differently than without it (or appear when the command
#     needs the option's companions to run at all);
#   - an option that applies only to some configurations ("when") is refused, as not used, in a
#     configuration without its companions;
#   - the options of the other commands that a command does not list are refused as unknown
#     (each command tries a rotating window of them; together the windows cover every option);
#   - strict numbers: a leading space, a sign on an unsigned value, a value out of range and a
#     duplicate with another value are refused, naming the option.
BIN=${1:-build/dpcorr}
. "$(dirname "$0")/common.inc"
export XDG_CACHE_HOME="$TMP/cache"  # --features caches there
have_fmnist=0; [ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] && have_fmnist=1

# fixtures named by the tables' examples ({tmp})
printf '1\n-0.5\n0.25\n' > "$TMP/coeffs.txt"
"$BIN" train --data synthetic:logistic,n=600,d=4 --model logistic --epsilon 1 --batch 20 \
    --checkpoint "$TMP/ckpt" --quiet >/dev/null 2>&1 || fail "fixture: checkpoint"

cmds="mech|mech optimize|compare|advise|theory|version"
for m in epsilon delta sigma steps convert; do cmds="$cmds|account $m"; done
for t in $("$BIN" repro --help | sed -n 's/^  \([a-z][a-z0-9-]*\) .*/\1/p'); do cmds="$cmds|repro $t"; done
for a in $("$BIN" train --help | sed -n '/^algorithms/,$s/^  \([a-z-]*\) .*/\1/p'); do
    if [ "$a" = dp-ftrl ]; then cmds="$cmds|train"; else cmds="$cmds|train --algo $a"; fi
done
[ $have_fmnist = 1 ] && cmds="$cmds|demo|audit"  # audit: the features examples read Fashion-MNIST
[ $have_fmnist = 1 ] || skip "demo and audit options: Debian's dataset-fashion-mnist is not installed"
echo "$cmds" | grep -q "repro nu-fig1" && pass || fail "repro targets listed in repro --help"
echo "$cmds" | grep -q "train --algo dp-srgd" && pass || fail "algorithms listed in train --help"

# every option name of every command (for the unknown-option checks)
: > "$TMP/all"
IFS='|'
for c in $cmds; do
    IFS=' '
    # shellcheck disable=SC2086
    "$BIN" $c --help | sed -n 's/^  \(--[a-zA-Z][a-zA-Z0-9-]*\).*/\1/p' >> "$TMP/all"
    IFS='|'
done
IFS=' '
sort -u "$TMP/all" -o "$TMP/all"

# plan.awk: from a --help-table, the invocations to try (fields separated by tabs):
#   ACCEPT name .args-with .args-base params
#   UNUSED name .args . .                      (the option without the companions it needs)
# (argument lists start with "." so that no field is empty: tabs are IFS white space)
cat > "$TMP/plan.awk" <<'AWK'
BEGIN { FS = "\t" }
function strip(args, ex,    n, t, m, out, i, skip) {   # args without the options named in ex
    n = split(args, t, " "); m = split(ex, e, " "); delete named
    for (i = 1; i <= m; i++) if (e[i] ~ /^--/) named[e[i]] = 1
    out = ""; skip = 0
    for (i = 1; i <= n; i++) {
        if (skip) { skip = 0; continue }
        if (t[i] in named) { if (type[t[i]] != "flag") skip = 1; continue }
        out = out (out == "" ? "" : " ") t[i]
    }
    return out
}
function without(ex, o,    m, i, out, skip) {          # ex without option o (and its value)
    m = split(ex, e, " "); out = ""; skip = 0
    for (i = 1; i <= m; i++) {
        if (skip) { skip = 0; continue }
        if (e[i] == o) { if (type[o] != "flag") skip = 1; continue }
        out = out (out == "" ? "" : " ") e[i]
    }
    return out
}
function only(ex, o,    m, i) {                        # option o and its value from ex
    m = split(ex, e, " ")
    for (i = 1; i <= m; i++) if (e[i] == o) return type[o] == "flag" ? o : o " " e[i + 1]
    return o
}
$1 == "cmd" { minimal = $3 }
$1 == "opt" { n++; name[n] = $2; type[$2] = $3; param[n] = $4; ex[n] = $5; when[n] = $6 }
END {
    if (minimal == "-") exit
    for (i = 1; i <= n; i++) {
        if (param[i] == "-" || ex[i] == "-") continue
        e0 = ex[i]; base0 = strip(minimal, e0)
        if (e0 ~ /^! /) { e0 = substr(e0, 3); base0 = "" }   # a complete invocation
        pre = without(e0, name[i])
        base = pre == "" && base0 == minimal ? minimal : base0 " " pre
        printf "ACCEPT\t%s\t.%s\t.%s\t%s\n", name[i], base0 " " e0, base, param[i]
        companions = 1                                   # are they all in the minimal one?
        m = split(pre, q, " ")
        for (j = 1; j <= m; j++) if (q[j] ~ /^--/ && index(" " minimal " ", " " q[j] " ") == 0) companions = 0
        if (when[i] != "-" && ex[i] !~ /^! / && !(pre != "" && companions))
            printf "UNUSED\t%s\t.%s\t.\t.\n", name[i], strip(minimal, name[i]) " " only(e0, name[i])
    }
}
AWK

# honoured KEYS WITH BASE: compares the "key = value" lines of the dry runs WITH and BASE whose
# key is one of the comma-separated KEYS: prints "diff", "same", or "absent" (none in WITH)
honoured() {
    awk -v keys="$1" 'BEGIN { n = split(keys, k, ","); for (i = 1; i <= n; i++) want[k[i]] = 1 }
        { key = $1; if (!(key in want) || $2 != "=") next; line = $0 }
        FILENAME == ARGV[1] { w = w line "\n"; next } { b = b line "\n" }
        END { print w == "" ? "absent" : (w != b ? "diff" : "same") }' "$2" "$3"
}

unused=0; marks=0; k=0; ncmds=$(echo "$cmds" | tr '|' '\n' | wc -l)
IFS='|'
for c in $cmds; do
    IFS=' '
    # shellcheck disable=SC2086
    set -- $c
    "$BIN" "$@" --help > "$TMP/help" 2>&1 && pass || fail "$c --help"
    "$BIN" "$@" --help-table > "$TMP/table" 2>&1 && pass || fail "$c --help-table"
    sed -n 's/^  \(--[a-zA-Z][a-zA-Z0-9-]*\).*/\1/p' "$TMP/help" | sort > "$TMP/h1"
    awk -F'\t' '$1 == "opt" { print $2 }' "$TMP/table" | sort > "$TMP/h2"
    if cmp -s "$TMP/h1" "$TMP/h2"; then pass; else fail "$c: --help and the table differ: $(diff "$TMP/h1" "$TMP/h2" | tr '\n' ' ')"; fi
    awk -f "$TMP/plan.awk" "$TMP/table" | sed "s|{tmp}|$TMP|g" > "$TMP/plan"
    minimal=$(awk -F'\t' '$1 == "cmd" { print $3 }' "$TMP/table" | sed "s|{tmp}|$TMP|g")
    # shellcheck disable=SC2086
    [ "$minimal" != - ] && { "$BIN" "$@" $minimal --dry-run > "$TMP/min.out" 2>/dev/null || fail "$c: the minimal invocation fails"; }
    # the word --help marks "(default)" (the generator's mark of an enum field's default, or the
    # spec's own) is the value the minimal dry run resolves when the option is not given
    [ "$minimal" != - ] && for ov in $(awk -F'\t' '$1 == "opt" && $3 == "choice" { printf "%s=%s ", $2, $4 }' "$TMP/table"); do
        o=${ov%%=*}; case " $minimal " in *" $o "*) continue ;; esac
        w=$(awk -v o="$o" 'on && /^           / { t = t $0; next } { on = 0 }
                index($0, "  " o " ") == 1 || $0 == "  " o { on = 1; t = $0 } END { print t }' "$TMP/help" |
            tr -s ' ' | sed -n 's/.*[ |]\([a-z0-9-]*\) (default)\([ |;,:)].*\)*$/\1/p' | head -1)
        [ -z "$w" ] && continue
        ok=0
        for pp in $(echo "${ov#*=}" | tr ',' ' '); do grep -q "^$pp = $w\$" "$TMP/min.out" && ok=1; done
        if [ $ok = 1 ]; then pass; marks=$((marks + 1))
        else fail "$c: $o: --help marks $w (default), the dry run: $(grep -E "^($(echo "${ov#*=}" | tr ',' '|')) = " "$TMP/min.out" | head -1)"; fi
    done
    while IFS="$(printf '\t')" read -r what o with base params; do
        IFS=' '
        with=${with#.}; base=${base#.}
        if [ "$what" = UNUSED ]; then
            # refused as not used, unless the minimal configuration is one that uses it
            case "$c $o" in
            "theory --d" | "theory --alpha" | "theory --simulate" | "theory --nu" | \
            "account "*" --sensitivity" | "account "*" --interval" | "account "*" --disc" | \
            "account convert --conversion" | "train --algo lcgd-projected --margin-iters" | \
            "train --algo lcgd-projected --conf-delta" | "train --algo dp-srgd --n" | \
            "train --algo dp-srgd --dim" | "train --algo dp-srgd --relevant" | \
            "train --algo dp-srgd --decades" | "train --algo dp-srgd --w-norm" | \
            "train --algo dp-srgd --c" | "train --algo dp-srgd --delta" | \
            "train --algo dp-srgd --allow-large-delta") want=0 ;;
            *) want=2 ;;
            esac
            # shellcheck disable=SC2086
            "$BIN" "$@" $with --dry-run > /dev/null 2> "$TMP/err"; rc=$?
            if [ $rc -eq 0 ] && [ $want -eq 0 ]; then pass
            elif [ $rc -eq 2 ] && [ $want -eq 2 ] && grep -q -- "$o: not used by this configuration" "$TMP/err"; then
                pass; unused=$((unused + 1))
            else fail "$c: $o without its companions: exit $rc (want $want), $(head -c 200 "$TMP/err")"; fi
            continue
        fi
        # shellcheck disable=SC2086
        "$BIN" "$@" $with --dry-run > "$TMP/with" 2> "$TMP/err"; rc=$?
        if [ $rc -eq 0 ]; then pass; else fail "$c: $with: exit $rc, $(head -c 300 "$TMP/err")"; continue; fi
        [ "$o" = --algo ] && continue    # the dispatch key: accepted, nothing to compare
        bf="$TMP/base"
        if [ "$base" = "$minimal" ]; then bf="$TMP/min.out"; okb=0
        else
            # shellcheck disable=SC2086
            "$BIN" "$@" $base --dry-run > "$bf" 2>/dev/null; okb=$?
        fi
        if [ $okb -eq 0 ]; then
            h=$(honoured "$params" "$TMP/with" "$bf")
            if [ "$h" = diff ]; then pass; else fail "$c: $o not honoured ($params $h)"; fi
        else
            : > "$TMP/base"
            h=$(honoured "$params" "$TMP/with" "$TMP/base")
            if [ "$h" != absent ]; then pass; else fail "$c: $o: $params not printed"; fi
        fi
    done < "$TMP/plan"
    # the options of the other commands are unknown here: each command tries a window of the
    # union (windows rotate over the commands so that together they cover every option once;
    # a process start costs ~15 ms)
    cut -f2 -d"$(printf '\t')" "$TMP/table" | sort > "$TMP/mine"
    for o in $(awk -F'\t' '$1 == "refused" { print $2 }' "$TMP/table"); do
        "$BIN" "$@" "$o" > /dev/null 2> "$TMP/err"; rc=$?
        if [ $rc -eq 2 ] && grep -q -- "$o: not available" "$TMP/err" && grep -q -- "$o" "$TMP/help"; then pass
        else fail "$c: refused $o: exit $rc, $(head -c 200 "$TMP/err")"; fi
    done
    k=$((k + 1)); nall=$(wc -l < "$TMP/all"); win=$((nall / ncmds + 2))
    awk -v a=$(((k - 1) * win)) -v w=$win -v n="$nall" '{ i = (NR - 1 - a + n) % n; if (i < w) print }' \
        "$TMP/all" > "$TMP/window"
    for o in $(comm -23 "$TMP/window" "$TMP/mine"); do
        "$BIN" "$@" "$o" > /dev/null 2> "$TMP/err"; rc=$?
        if [ $rc -eq 2 ] && grep -q -- "$o: unknown option" "$TMP/err"; then pass; else fail "$c: unlisted $o: exit $rc, $(head -c 200 "$TMP/err")"; fi
    done
    IFS='|'
done
IFS=' '
if [ $unused -ge 20 ]; then pass; else fail "only $unused options were refused as not used without their companions"; fi
if [ $marks -ge 20 ]; then pass; else fail "only $marks default words marked in --help were checked"; fi

# strict numbers, duplicates, conflicts, positional junk (one command each; the parser is shared)
bad() { name=$1; pat=$2; shift 2; expect_rc 2 "$name" "$BIN" "$@"; err_has -- "$pat" "$name: message"; }
bad "leading space"         "--steps: expected a non-negative integer, got ' -5'" account epsilon --sigma 1 --delta 1e-5 --steps ' -5'
bad "trailing space"        "--sigma: expected a number, got '1 '"             account epsilon --sigma '1 ' --steps 5 --delta 1e-5
bad "sign on unsigned"      "--steps: expected a non-negative integer"        mech --steps +5
bad "beyond the range"      "--steps: must be in"                             mech --steps 2e12
bad "2^64 - 1"              "--min-sep: must be at most 2.53 = 9007199254740992" compare --steps 50 --min-sep 18446744073709551615
bad "not an integer"        "--steps: expected a non-negative integer"        mech --steps 2.5
bad "hex"                   "--sigma: expected a number, got '0x10'"          account epsilon --sigma 0x10 --steps 5 --delta 1e-5
bad "infinity"              "--sigma: expected a number, got 'inf'"           account epsilon --sigma inf --steps 5 --delta 1e-5
bad "duplicate"             "--nu: given twice with different values"         mech --kind nu --nu 0.1 --nu 0.2 --steps 10
expect_rc 0 "same value twice" "$BIN" mech --kind nu --nu 0.1 --nu=0.1 --steps 10 --dry-run
bad "conflict"              "--secure: cannot be combined with --seed"        train --data synthetic:logistic,n=600,d=4 --model logistic --epsilon 1 --seed 2 --secure
bad "epsilon and z"         "--noise-multiplier: cannot be combined with --epsilon" train --data synthetic:logistic,n=600,d=4 --model logistic --epsilon 1 --noise-multiplier 1
bad "positional junk"       "'extra': unexpected argument"                    compare extra
bad "flag with a value"     "--json: takes no value"                          mech --steps 5 --json=1
bad "missing value"         "--lr: missing value"                             train --lr
bad "version option"        "--bogus: unknown option"                         version --bogus
# library errors name the option typed, or say that no option set the value at fault
bad "typed option blamed"   "--epochs: "                                      train --data synthetic:logistic,n=600,d=4 --model logistic --epsilon 1 --epochs 1e8
bad "typed delta blamed"    "--delta: 0.999999 >= 1/N"                        train --data synthetic:logistic,n=600,d=4 --model logistic --epsilon 1 --delta 0.999999
# a default the validation would reject is never used: delta follows N (1e-6 for N = 1e5)
bad "default not blamed"    "batch was not given: a default or derived value; --batch sets it" train --data synthetic:logistic,n=100,d=2 --model logistic --epsilon 1
"$BIN" train --data synthetic:logistic,n=100000,d=2 --model logistic --epsilon 1 --dry-run > "$TMP/dd" 2>&1 && grep -Eq "^delta = (1e-06|9\.9999999999999995e-07)$" "$TMP/dd" && pass || fail "delta derived from N = 1e5: $(grep delta "$TMP/dd")"
bad "theory mu"             "--mu: must be in \\(0, 1e\\+150\\], got -1"        theory --problem sc --mu -1
bad "participations"        "--participations: unknown option"                train --data synthetic:logistic,n=600,d=4 --model logistic --epsilon 1 --participations 7
# output paths are checked before any work
bad "unwritable report"     "--report: cannot write /nonexistent-dir/r.json"  train --data synthetic:logistic,n=600,d=4 --model logistic --epsilon 1 --report /nonexistent-dir/r.json
bad "unwritable checkpoint" "--checkpoint: cannot write"                      train --data synthetic:logistic,n=600,d=4 --model logistic --epsilon 1 --checkpoint /nonexistent-dir/c
bad "report is a directory" "--report: cannot write $TMP \\(a directory"        train --data synthetic:logistic,n=600,d=4 --model logistic --epsilon 1 --report "$TMP"
summary
