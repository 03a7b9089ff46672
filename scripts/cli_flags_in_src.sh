#!/bin/sh
# cli_flags_in_src.sh FILE... : prints "file:line: literal" for every C string literal (comments
# skipped) that contains a command-line flag ("--" followed by a letter). The library names its
# parameters (dpc_error.field), never the CLI's spelling of them.
awk '
function flush() { if (lit ~ /--[A-Za-z]/) printf "%s:%d: \"%s\"\n", FILENAME, litline, lit }
FNR == 1 { state = 0 }   # 0 code, 1 string, 2 char, 3 block comment
{
    line = $0; n = length(line); i = 1
    if (state == 1) lit = lit "\n"
    while (i <= n) {
        c = substr(line, i, 1); d = substr(line, i, 2)
        if (state == 0) {
            if (d == "/*") { state = 3; i += 2; continue }
            if (d == "//") break
            if (c == "\"") { state = 1; lit = ""; litline = FNR }
            else if (c == "\047") state = 2
        } else if (state == 1) {
            if (c == "\\") { lit = lit d; i += 2; continue }
            if (c == "\"") { flush(); state = 0 } else lit = lit c
        } else if (state == 2) {
            if (c == "\\") { i += 2; continue }
            if (c == "\047") state = 0
        } else if (d == "*/") { state = 0; i += 2; continue }
        i++
    }
}
' "$@"
