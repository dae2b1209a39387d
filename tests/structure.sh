#!/usr/bin/env bash
# The source's shape (issue 12): every file of src/ is named in
# src/README.md (the one-line-a-file map stays true), no source file is over
# 900 lines and no function over 120. Run from the repository root.
set -u
pass=0 failed=0
ok() { echo "ok   - $1"; pass=$((pass + 1)); }
bad() { echo "FAIL - $1"; failed=$((failed + 1)); }

missing=""
for f in $(cd src && find . -name '*.c' -o -name '*.inc' | sed 's|^\./||' | sort); do
    name=${f##*/}
    grep -q "\`$name\`\|$name" src/README.md || missing="$missing $f"
done
if [ -z "$missing" ]; then ok "src/README.md names every source file"; else bad "src/README.md does not name:$missing"; fi

long=$(find src -name '*.c' -exec wc -l {} + | awk '$2 != "total" && $1 > 900 {print $2 " (" $1 ")"}')
if [ -z "$long" ]; then ok "no source file over 900 lines"; else bad "files over 900 lines: $long"; fi

# a function: from a line "{" at column 0 back to its signature, to "}"
funcs=$(for f in $(find src -name '*.c'); do
    awk -v f="$f" '
        /^[A-Za-z].*\(/ && start == 0 { sig = NR; name = $0 }
        /^\{$/ { start = sig ? sig : NR }
        /^\}/ && start { if (NR - start + 1 > 120) print f ":" start ": " NR - start + 1 " lines: " substr(name, 1, 60); start = 0; sig = 0 }
        /^$/ && !start { sig = 0 }' "$f"
done)
if [ -z "$funcs" ]; then ok "no function over 120 lines"; else bad "functions over 120 lines: $funcs"; fi

echo "structure: $pass passed, $failed failed"
[ "$failed" = 0 ]
