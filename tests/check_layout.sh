#!/bin/sh
# check_layout.sh — the architecture's invariants (doc/architecture.md), checked on the sources:
#   1. the core never includes a paper module;
#   2. no include cycle between modules (src/core/<m>, src/papers/<p>);
#   3. every public function declared in include/dpcorr/<m>.h (papers/<p>.h) is defined in
#      src/core/<m>/ (src/papers/<p>/) — each header implemented in its own folder;
#   4. no function in src/ or tools/ longer than MAX_FN lines (default 120);
#   5. CLI option specs (tools/) are constant (no binding rewrites a spec at run time), the
#      paper options of table fields are bound or generated, and the fields of generated options
#      (cooldown_fraction, decades, ...) are not named in tools/;
#   6. a CLI option spec that sets a field of a library field table (.fields = ..., or a
#      *_FIELD macro) writes no range (.lo, .hi; unless "the CLI's range") and no default value
#      or "(default)" word mark in its help: they come from the table; and every option of
#      tools/cmd_train.c and tools/mech_opts.c whose first parameter is a numeric field of
#      dpc_train_config or dpc_mech_params ("mech.X") uses the table (FIELD_EXEMPT: the options
#      whose default is not a value of the field); likewise every option of advise, theory,
#      mech optimize, account and compare whose first parameter is a field of the struct it
#      configures (dpc_advise_query, dpc_nu_setup_params, dpc_strategy_problem and _options,
#      dpc_account_query and its dpc_account_opts, dpc_mech_compare_params).
# Prints "N passed, N failed" like the other tests.
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
MAX_FN=${MAX_FN:-120}
PASS=0; FAIL=0
pass() { PASS=$((PASS + 1)); }
fail() { FAIL=$((FAIL + 1)); echo "FAIL: $*" >&2; }

# module of a header path as included ("dpcorr/mech.h" -> core/mech, "dpcorr/papers/kan.h" ->
# papers/kan, "mech/mech_internal.h" -> core/mech or papers/...)
modof() {
    case "$1" in
    dpcorr/papers/*) b=${1#dpcorr/papers/}; b=${b%.h}; [ "$b" = theory ] || [ "$b" = sim ] || [ "$b" = nu_repro ] && b=nu; echo "papers/$b" ;;
    dpcorr/common.h) echo core/common ;;
    dpcorr/*) b=${1#dpcorr/}; echo "core/${b%.h}" ;;
    */*) d=${1%%/*}; if [ -d "src/core/$d" ]; then echo "core/$d"; elif [ -d "src/papers/$d" ]; then echo "papers/$d"; fi ;;
    esac
}

edges=$(mktemp); trap 'rm -f "$edges"' EXIT
for dir in src/core/* src/papers/*; do
    m=${dir#src/}
    for f in "$dir"/*.c "$dir"/*.h; do
        [ -f "$f" ] || continue
        sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f" | while read -r inc; do
            t=$(modof "$inc")
            [ -n "$t" ] && [ "$t" != "$m" ] && echo "$m $t"
        done
    done
done | sort -u > "$edges"
# public headers include other public headers: those are edges of their modules too
for h in include/dpcorr/*.h include/dpcorr/papers/*.h; do
    m=$(modof "${h#include/}")
    sed -n 's/^#include "\([^"]*\)".*/\1/p' "$h" | while read -r inc; do
        t=$(modof "$inc"); [ -n "$t" ] && [ "$t" != "$m" ] && echo "$m $t"
    done
done | sort -u >> "$edges"

# 1. core -> papers
bad=$(awk '$1 ~ /^core\// && $2 ~ /^papers\//' "$edges")
if [ -z "$bad" ]; then pass; else fail "the core depends on a paper module: $bad"; fi
# 2. cycles (tsort reports them)
cyc=$(sort -u "$edges" | tsort 2>&1 >/dev/null)
if [ -z "$cyc" ]; then pass; else fail "module cycle: $cyc"; fi

# 3. each header implemented in its own folder
for h in include/dpcorr/*.h include/dpcorr/papers/*.h; do
    m=$(modof "${h#include/}")
    dir="src/$m"
    [ -d "$dir" ] || { fail "$h: no folder $dir"; continue; }
    # the declared name: the identifier just before the first '(' after DPC_API (its definition may
    # return a type spelt with capitals: FILE *)
    for fn in $(sed 's:/\*.*\*/::' "$h" | tr '\n' ' ' | sed 's/DPC_API/\nDPC_API/g' | grep '^DPC_API' |
                sed 's/(.*//' | awk '{ n = $NF; sub(/^\*+/, "", n); print n }' | grep '^dpc_' | sort -u); do
        def="^([a-zA-Z].*[ *]$fn\(|[A-Z_]+\($fn,)"
        if grep -qE "$def" "$dir"/*.c 2>/dev/null; then pass
        elif grep -rqE "$def" src; then fail "$fn (declared in $h) is defined outside $dir"
        else fail "$fn (declared in $h) is not defined anywhere"; fi
    done
done

# 4. function length: a definition starts at a column-0 '{' and ends at a column-0 '}'
long=$(awk -v max="$MAX_FN" '
    FNR == 1 { start = 0 }
    /^\{/ { start = FNR; sig = prev }
    /^\}/ && start { n = FNR - start + 2; if (n > max) printf "%s:%d: %d lines: %s\n", FILENAME, start, n, sig; start = 0 }
    { if ($0 !~ /^[ \t{]/ && $0 != "") prev = $0 }' $(find src tools -name '*.c'))
if [ -z "$long" ]; then pass; else
    echo "$long" | while read -r l; do echo "FAIL: function over $MAX_FN lines: $l" >&2; done
    FAIL=$((FAIL + $(echo "$long" | wc -l)))
fi

# 5. option specs are constant: an option of a library field table reads its type, range,
# default and words from the table where it is used (opt_spec.fields), and the options of a
# table's groups are generated from its rows (OPT_FIELDS); no spec is rewritten at run time (a
# non-const `static opt_spec`). Each paper option whose param names a table field is bound, or
# generated (then its param is written nowhere in tools/)
lit=$(grep -n '^static opt_spec ' tools/*.c | grep -v '^tools/opt.c:')
if [ -z "$lit" ]; then pass; else fail "an option spec changed at run time: $lit"; fi
for pair in "train_srgd.c:problem.w_norm" "train_srgd.c:problem.decades" "train_srgd.c:z_step" \
            "train_kan.c:lambda" "train_kan.c:conf_delta" "train_linreg.c:prior.a" \
            "train_linreg.c:c1" "train_linreg.c:stream" "train_linreg.c:ssp.x_bound" \
            "cmd_train.c:cooldown_fraction" "cmd_train.c:lr"; do
    f=tools/${pair%%:*}; prm=${pair#*:}
    if awk -v p="$prm" '/^(static )?const opt_spec / { on = 1; blk = "" } on { blk = blk $0 }
            on && /\};/ { on = 0; if (index(blk, ".param = \"" p "\"") || index(blk, ".param = \"" p ","))
                                  bad = bad || blk !~ /\.fields = |[A-Z]+_FIELD[,}]/ }
            END { exit !bad }' "$f"; then
        fail "$f: the option of $prm is not bound to its field table"
    else pass; fi
done
# the issue-36 measure: a generated option's field is not named by the CLI at all (its option,
# range, default, help, condition and example come from its row)
named=$(grep -nE 'cooldown_fraction|cooldown_factor|"(problem\.)?decades"|\.decades\b' tools/*.c tools/*.h)
if [ -z "$named" ]; then pass; else fail "a generated option's field named in tools/: $named"; fi
# 6. option specs of table fields carry no copy of the table's range or default (no .lo/.hi, no
# "(default 0.5", no "in [0, 1)" in the help); one whose default is the command's (OPT_OWN_DEFAULT)
# says so in words
# their default is not the field's: "required" for mech/account and derived by train (bands,
# steps), or the optimizer's workload in train (--mech-momentum, --mech-decay)
FIELD_EXEMPT=" mech.bands mech.steps mech.momentum mech.decay "
tabfields() { # numeric fields of a table: the rows between "$2[] = {" and "};" of file $1
    awk -v t="$2" -v pre="$3" '
        $0 ~ t "\\[\\] = \\{" { on = 1; next }
        on && /^\};/ { on = 0 }
        on && match($0, /\{\.name = "[a-z_]+"/) { cur = substr($0, RSTART + 10, RLENGTH - 11) }
        on && cur != "" && /\.type = DPC_FIELD_/ {
            if ($0 ~ /\.type = DPC_FIELD_(DOUBLE|SIZE|U64)[,}]/) print pre cur
            cur = "" }' "$1"
}
nums=" $(tabfields src/core/train/train_config.c train_fields "" | tr '\n' ' ') $(tabfields src/core/mech/mech_core.c mech_fields mech. | tr '\n' ' ') "
case "$nums" in *" cooldown_fraction "*" mech.nu "*) pass ;; *) fail "check 5 read no table fields: $nums" ;; esac
bad=$(awk -v nums="$nums" -v exempt="$FIELD_EXEMPT" '
    /^(static )?const opt_spec [A-Z_0-9]+ = \{/ || /^(static )?const opt_spec [A-Z_0-9]+ =$/ {
        on = 1; blk = ""; name = $0; sub(/ =.*/, "", name); sub(/.* /, "", name); start = FNR }
    on { blk = blk " " $0 }
    on && /\};[ \t]*$/ {
        on = 0
        tab = blk ~ /\.fields = |[A-Z]+_FIELD[,}]/
        if (tab && ((blk ~ /\.lo = |\.hi = / && blk !~ /the CLI.s range/) || blk ~ /\(default:? *[-0-9.]|\(default\)/ ||
                    blk ~ /in [[(] *-?[0-9.]+ *, *-?[0-9.e+]+ *[])]/))
            printf "%s:%d: %s sets a table field but writes its range or default\n", FILENAME, start, name
        # a default in the CLI words (required, derived, none) is declared the command ones
        if (tab && blk ~ /\(default/ && blk !~ /OWN_DEFAULT/)
            printf "%s:%d: %s says a default of its own without OPT_OWN_DEFAULT\n", FILENAME, start, name
        p = ""
        if (match(blk, /\.param = "[^",]+/)) { p = substr(blk, RSTART + 10, RLENGTH - 10) }
        if (!tab && p != "" && index(nums, " " p " ") && !index(exempt, " " p " ") &&
            (FILENAME ~ /cmd_train\.c$|mech_opts\.c$/))
            printf "%s:%d: %s sets %s, a field of a library table, without reading the table\n", FILENAME, start, name, p
    }' tools/*.c)
if [ -z "$bad" ]; then pass; else
    echo "$bad" | while read -r l; do echo "FAIL: $l" >&2; done
    FAIL=$((FAIL + $(echo "$bad" | wc -l)))
fi

# advise, theory, mech optimize, mech, audit, account, compare and the mechanism options: every
# option whose first parameter is a field of the struct the command fills reads its row; the
# exceptions are flags or words for one value of a field: theory's --random (the ENUM model),
# --cyclic (part.kind) and --of (mech.coeffs_of_strategy, the words noising|strategy|B|C)
rows() { # the value fields (numbers, BOOL, ENUM) of table $2 in file $1, each prefixed by $3
    awk -v t="$2" -v pre="$3" '
        $0 ~ t "\\[\\] = \\{" { on = 1; next }
        on && /^\};/ { on = 0 }
        on && match($0, /\{\.name = "[A-Za-z_0-9]+"/) { cur = substr($0, RSTART + 10); sub(/".*/, "", cur) }
        on && cur != "" && /\.type = DPC_FIELD_/ {
            if ($0 ~ /\.type = DPC_FIELD_(DOUBLE|SIZE|U64|INT|BOOL|ENUM)[,}]/) print pre cur
            cur = "" }' "$1"
}
for spec in "cmd_advise.c:src/core/train/advise.c:aq_fields:" \
            "cmd_theory.c:src/papers/nu/nu_fields.c:nu_fields:" \
            "cmd_optimize.c:src/core/strategy/strategy_core.c:sp_fields:problem." \
            "cmd_optimize.c:src/core/mech/mech_core.c:wl_fields:problem.workload." \
            "cmd_optimize.c:src/core/strategy/strategy_core.c:so_fields:options." \
            "cmd_mech.c:src/core/mech/mech_core.c:wl_fields:workload." \
            "mech_opts.c:src/core/mech/mech_core.c:mech_fields:mech." \
            "mech_opts.c:src/core/mech/mech_core.c:part_fields:part." \
            "cmd_audit.c:src/core/audit/run.c:ac_fields:" \
            "frame_ckpt.c:src/core/train/run_drive.c:rp_fields:" \
            "cmd_train.c:src/core/train/train_config.c:train_fields:" \
            "cmd_demo.c:src/core/train/train_config.c:train_fields:" \
            "cmd_account.c:src/core/account/query.c:query_fields:" \
            "cmd_account.c:src/core/account/event.c:ao_fields:" \
            "cmd_compare.c:src/core/strategy/mech_compare.c:cmp_fields:" \
            "cmd_compare.c:src/core/mech/mech_core.c:part_fields:part."; do
    f=${spec%%:*}; rest=${spec#*:}; src=${rest%%:*}; rest=${rest#*:}; arr=${rest%%:*}; pre=${rest#*:}
    names=" $(rows "$src" "$arr" "$pre" | tr '\n' ' ') "
    # (at least one row: compare's table has one value field, steps)
    [ "$(echo "$names" | wc -w)" -ge 1 ] || { fail "check 6 read no rows of $arr in $src"; continue; }
    bad=$(awk -v names="$names" -v exempt=" model part.kind mech.coeffs_of_strategy " '
        /^(static )?const opt_spec [A-Z_0-9]+ = \{/ { on = 1; blk = ""; name = $0; sub(/ =.*/, "", name); sub(/.* /, "", name) }
        on { blk = blk " " $0 }
        on && /\};[ \t]*$/ {
            on = 0; p = ""
            if (match(blk, /\.param = "[^",]+/)) p = substr(blk, RSTART + 10, RLENGTH - 10)
            if (p != "" && !index(exempt, " " p " ") && index(names, " " p " ") && blk !~ /\.fields = |[A-Z]+_FIELD[,}]/)
                printf "%s sets %s without reading its row\n", name, p }' "tools/$f")
    if [ -z "$bad" ]; then pass; else fail "tools/$f: $bad"; fi
done

echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
