#!/bin/sh
# fn_sizes.sh [LIMIT] FILE... : prints "lines file:line name" for every C function (the body
# between a "{" and a "}" in column 0) longer than LIMIT lines (default 0: all), longest first.
limit=0
case "${1:-}" in [0-9]*) limit=$1; shift ;; esac
awk -v limit="$limit" '
    /^[A-Za-z_].*\(/ && !/;[ \t]*$/ { sig = $0; sigline = FNR }
    /^\{/ { start = FNR; name = sig; sub(/\(.*/, "", name); n = split(name, w, /[ \t*]+/); name = w[n] }
    /^\}/ && start { len = FNR - start + 1; if (len > limit) printf "%d %s:%d %s\n", len, FILENAME, sigline, name; start = 0 }
' "$@" | sort -rn
