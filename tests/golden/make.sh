#!/usr/bin/env bash
# Write the golden --print outputs from the current binary (see cases.txt).
# Run from the repository root only when an output is meant to change.
set -euo pipefail
BIN=${ATTNVIZ_BIN:-build/attnviz}
while read -r name args; do
    case "$name" in ''|'#'*) continue ;; esac
    for fmt in text csv json; do
        ext=$fmt; [ "$fmt" = text ] && ext=txt
        eval "\"$BIN\" $args --print $fmt" > "tests/golden/$name.$ext" 2>/dev/null
    done
done < tests/golden/cases.txt
