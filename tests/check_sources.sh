#!/bin/sh
# check_sources.sh — source-level rules checked by `make check` (run from the repository root):
#   1. no string literal in src/ or include/ names a command-line flag ("--x"): the library names
#      its parameters (dpc_error.field) and front ends map them to their own spelling;
#   2. no function in tools/ is longer than 120 lines (scripts/fn_sizes.sh).
# Prints "N passed, N failed" last.
PASS=0; FAIL=0
flags=$(sh scripts/cli_flags_in_src.sh $(find src include -name '*.[ch]' | sort))
if [ -z "$flags" ]; then PASS=$((PASS + 1)); else FAIL=$((FAIL + 1)); echo "FAIL: CLI flags in library strings:"; echo "$flags"; fi
# the scanner itself finds a flag in a literal and ignores one in a comment
t=$(mktemp); trap 'rm -f "$t"' EXIT
printf '/* see --lr */\nconst char *a = "x"; // --y\nconst char *b = "use --lr";\n' > "$t"
if [ "$(sh scripts/cli_flags_in_src.sh "$t" | wc -l)" -eq 1 ]; then PASS=$((PASS + 1)); else FAIL=$((FAIL + 1)); echo "FAIL: cli_flags_in_src.sh self-test"; fi
long=$(sh scripts/fn_sizes.sh 120 tools/*.c)
if [ -z "$long" ]; then PASS=$((PASS + 1)); else FAIL=$((FAIL + 1)); echo "FAIL: functions over 120 lines in tools/:"; echo "$long"; fi
echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
